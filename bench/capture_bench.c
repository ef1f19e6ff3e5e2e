/*
 * capture_bench.c — measures libtpuprof's cost per operator begin/end pair: capture off, and
 * on in modes 0, 1, 2 (and 2 with tensor details), single- and multi-threaded. Every row is
 * timed against the same loop without instrumentation in the same run, and the difference is
 * reported, so the numbers are the library's overhead, not the loop's. Chunks of the loop are
 * timed separately so a busy machine (preemption) shows in the median, not in the minimum.
 * The last column is the recording threads' own CPU time per pair over the whole loop (user +
 * kernel: page faults and the mapping of new extents included, preemption excluded), minus
 * the same for the uninstrumented loop: the cost crash-safe recording puts on the thread.
 *
 * Usage: capture_bench [CHUNKS [THREADS]]   (defaults 200 chunks of 5000 iterations, and the
 * CPU count clamped to 2..8 threads)
 * Dumps go to $TPUPROF_DIR (a temporary directory is used, and removed, when it is unset).
 */
#include "tpuprof/tpuprof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct tpuprof_op bench_op = {"MatMul", "bench.matmul", NULL};
static long g_chunk = 5000; /* iterations per timed chunk */
static int g_chunks = 200;  /* chunks per thread per measurement */
static volatile unsigned long g_sink;

static double thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

enum variant { PLAIN, OPS, OPS_MACRO, OPS_DETAIL, CLOCK };

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define READ_TSC() __rdtsc()
#else
#define READ_TSC() 0
#endif

/* The measured loop: a little work per iteration, optionally wrapped in an op scope. Each
 * chunk of g_chunk iterations is timed on its own (ns per iteration into out[]). */
static void loop(enum variant v, double *out, double *cpu)
{
	double c0 = thread_cpu_ns();
	int64_t shape[2] = {128, 256};
	struct tpuprof_tensor t[1] = {{"x", "fp32", shape, 2}};
	struct tpuprof_op_detail d = TPUPROF_OP_DETAIL_INIT;
	d.inputs = t;
	d.num_inputs = 1;
	d.outputs = t;
	d.num_outputs = 1;
	d.bytes = 4096;
	d.flops = 8192;
	unsigned long acc = 0;
	for (int c = 0; c < g_chunks; c++) {
		double t0 = now_ns();
		for (long i = 0; i < g_chunk; i++) {
			if (v == CLOCK)
				acc += (unsigned long)READ_TSC();
			else if (v == OPS_MACRO)
				TPUPROF_OP_BEGIN(&bench_op);
			else if (v != PLAIN)
				tpuprof_op_begin(&bench_op);
			acc += (unsigned long)i * 2654435761u;
			__asm__ volatile("" : "+r"(acc));
			if (v == CLOCK)
				acc += (unsigned long)READ_TSC();
			else if (v == OPS_MACRO)
				TPUPROF_OP_END(&bench_op, NULL);
			else if (v != PLAIN)
				tpuprof_op_end(&bench_op, v == OPS_DETAIL ? &d : NULL);
		}
		out[c] = (now_ns() - t0) / (double)g_chunk;
	}
	*cpu = (thread_cpu_ns() - c0) / ((double)g_chunk * g_chunks);
	g_sink += acc;
}

struct job {
	enum variant v;
	double *out;
	double cpu;
};

static void *thread_main(void *arg)
{
	struct job *j = arg;
	loop(j->v, j->out, &j->cpu);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void remove_dumps(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'/tpuprof_data_dev*", getenv("TPUPROF_DIR"));
	if (system(cmd) != 0)
		fprintf(stderr, "capture_bench: could not remove old dumps\n");
}

/* Min and median ns per iteration over all chunks of all threads; `threads` threads run the
 * loop at once. With mode >= 0 the measurement is one session whose buffer holds every
 * record (nothing is dropped). The minimum is the steady-state cost (no preemption, no
 * first-touch page fault inside the chunk); the median includes both. */
static void measure(enum variant v, int threads, int mode, double *min, double *med, double *cpu)
{
	size_t n = (size_t)threads * (size_t)g_chunks;
	double *all = calloc(n, sizeof *all);
	if (all == NULL)
		exit(1);
	/* Room for every record: 2 per pair, 7 with the detail (2 tensors + their dims + cost). */
	long per_pair = v == OPS_DETAIL ? 7 : 2;
	if (mode >= 0 &&
	    tpuprof_enable((uint32_t)(per_pair * g_chunk * g_chunks + 64), mode) != TPUPROF_OK) {
		printf("enable failed\n");
		exit(1);
	}
	*cpu = 0;
	if (threads <= 1) {
		loop(v, all, cpu);
	} else {
		pthread_t th[64];
		struct job jobs[64];
		for (int i = 0; i < threads; i++) {
			jobs[i].v = v;
			jobs[i].out = all + (size_t)i * (size_t)g_chunks;
			pthread_create(&th[i], NULL, thread_main, &jobs[i]);
		}
		for (int i = 0; i < threads; i++) {
			pthread_join(th[i], NULL);
			*cpu += jobs[i].cpu / threads;
		}
	}
	if (mode >= 0) {
		tpuprof_disable();
		remove_dumps();
	}
	qsort(all, n, sizeof *all, cmp_double);
	*min = all[0];
	*med = all[n / 2];
	free(all);
}

static void row(const char *label, int mode, enum variant v, int threads)
{
	double bmin, bmed, wmin, wmed, bcpu, wcpu;
	measure(PLAIN, threads, -1, &bmin, &bmed, &bcpu);
	measure(v, threads, mode, &wmin, &wmed, &wcpu);
	printf("%-27s %3d %8.2f %8.2f %10.2f %10.2f %10.2f %10.2f\n", label, threads, bmin, wmin,
	       wmin - bmin, (wmin - bmin) / 2, (wmed - bmed) / 2, wcpu - bcpu);
}

int main(int argc, char **argv)
{
	if (getenv("TPUPROF_DIR") == NULL) {
		/* The library reads its switches when it loads: re-run with a temporary dir. */
		char dir[] = "/tmp/tpuprof_bench.XXXXXX";
		if (mkdtemp(dir) == NULL)
			return 1;
		setenv("TPUPROF_DIR", dir, 1);
		setenv("TPUPROF_BENCH_TMP", dir, 1);
		execv("/proc/self/exe", argv);
		return 1;
	}
	if (argc > 1)
		g_chunks = atoi(argv[1]);
	if (g_chunks < 10 || g_chunks > 100000)
		g_chunks = 200;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = argc > 2 ? atoi(argv[2]) : (int)(ncpu < 2 ? 2 : ncpu > 8 ? 8 : ncpu);
	if (threads < 2 || threads > 64)
		threads = 4;
	printf("libtpuprof cost per op begin/end pair: %d chunks x %ld iterations per thread,\n"
	       "each chunk timed alone; 'base' = the same loop without instrumentation;\n"
	       "min = fastest chunk (steady state), median includes preemption and page faults;\n"
	       "thread cpu = the recording threads' own CPU time (user + kernel, not preemption)\n"
	       "per pair over the whole loop, extent switches included\n",
	       g_chunks, g_chunk);
	printf("%-27s %3s %8s %8s %10s %10s %10s %10s\n", "case", "thr", "base", "with", "ns/pair",
	       "ns/event", "ns/event", "ns/pair");
	printf("%-27s %3s %8s %8s %10s %10s %10s %10s\n", "", "", "min ns", "min ns", "min", "min",
	       "median", "thread cpu");
	/* Warm-up (not printed): the first session of a thread touches its buffer's pages. */
	double w1, w2, w3;
	measure(OPS_DETAIL, 1, 2, &w1, &w2, &w3);
	measure(OPS_DETAIL, threads, 2, &w1, &w2, &w3);
	for (int pass = 0; pass < 2; pass++) {
		int t = pass ? threads : 1;
		row("off (function call)", -1, OPS, t);
		row("off (TPUPROF_OP_* macros)", -1, OPS_MACRO, t);
		row("mode 0 (timing)", 0, OPS, t);
		row("mode 1 (condensed)", 1, OPS, t);
		row("mode 2 (detailed)", 2, OPS, t);
		row("mode 2 + 2 tensors/op", 2, OPS_DETAIL, t);
		if (!pass)
			row("reference: 2 x rdtsc alone", -1, CLOCK, t);
	}
	const char *tmp = getenv("TPUPROF_BENCH_TMP");
	if (tmp) {
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "capture_bench: could not remove %s\n", tmp);
	}
	return 0;
}
