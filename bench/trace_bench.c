/*
 * trace_bench.c — BENCHMARK TOOL: times each trace writer on one profile held in memory,
 * printing bytes per slice, slices per second (by wall and by CPU time) and the CPU time of
 * the calling thread (the encoder; the rest of the process CPU is the compression thread).
 * It measures writers only: the profile is either synthetic (N commands, deterministic LCG;
 * TIU/GDMA/SDMA on 4 cores, dependencies) or a bmprofile dump read before the clock starts.
 * Usage: trace_bench N|DUMP_DIR OUT_DIR WRITER...
 * WRITER: perfetto (compact args; compression on its own thread), perfetto-1t (compression
 * inline), perfetto-full (every reference arg), perfetto-plain (uncompressed), perfetto-full-plain
 * (every reference arg, uncompressed: full-plain.pftrace, for pftrace_sweep), json, sqlite,
 * drive (the sink driver with no writer: plan, lanes, flows, arguments), deflate (the
 * baseline: libdeflate level 1 alone over the uncompressed trace's bytes in the writer's
 * 256 KiB chunks, one thread; needs perfetto-plain earlier on the line; later rows print
 * their ratio to it). Slices are the delivered ones (synthesised Layer slices included,
 * counted by an untimed driver pass); JSON rows count events (slices, flow ends, counters).
 * Env: TP_BENCH_LEVEL (compression level), TP_BENCH_THREADS (perfetto threads),
 * TP_BENCH_DETAIL=none|full (reader detail of a dump), TP_BENCH_REPEAT=N (each writer runs N
 * times, at most 15, back to back; the row shows the run with the least wall time and adds
 * the median wall: on a shared machine the best run is the one least disturbed).
 */
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "readers/sophgo/sophgo.h"
#include "writers/chrome/chrome.h"
#include "writers/perfetto/perfetto.h"
#include "writers/sqlitedb/sqlitedb.h"

/* What the driver delivers: slices, and the Chrome JSON events they make. */
struct counts {
	uint64_t slices, events;
};

static int null_slice(void *ctx, const struct tp_sink_slice *s)
{
	struct counts *c = ctx;
	c->slices++;
	c->events += 1 + s->num_flows_out + (s->flow_in != 0);
	return TP_OK;
}

static int null_counter(void *ctx, const struct tp_sink_track *t, int64_t ts_ns, double v)
{
	(void)t;
	(void)ts_ns;
	(void)v;
	((struct counts *)ctx)->events++;
	return TP_OK;
}

static double maxrss_mib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

/* libdeflate at `level` over the file's bytes in 256 KiB pieces, as the writer cuts them;
 * returns the compressed size. */
static long long deflate_pass(const char *path, int level)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 256 * 1024;
	unsigned char *in = malloc(cap), *out = malloc(cap + cap / 8 + 1024);
	struct libdeflate_compressor *z = libdeflate_alloc_compressor(level);
	long long total = 0;
	size_t n;
	while (in && out && z && (n = fread(in, 1, cap, f)) > 0)
		total += (long long)libdeflate_zlib_compress(z, in, n, out, cap + cap / 8 + 1024);
	if (z)
		libdeflate_free_compressor(z);
	free(in);
	free(out);
	fclose(f);
	return total;
}

#define MAX_REPEAT 15

static uint64_t lcg = 12345;
static uint32_t rnd(uint32_t n)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(lcg >> 33) % n;
}

static double now(clockid_t clk)
{
	struct timespec t;
	clock_gettime(clk, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What one timed run took: wall, process CPU and calling-thread CPU seconds; status is the
 * exit code when the run failed. */
struct timing {
	double wall, cpu, mcpu;
	int status;
};

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One timed run of writer `w` into `dir`: its timing in *t and the output's size in *size
 * (the compressed bytes for deflate). Returns 0, else prints why and sets t->status. */
static int run_writer(struct tp_profile *p, const char *w, const char *dir, int level, char **plain,
                      struct timing *t, long long *size)
{
	struct tp_diag d = {0};
	int perfetto = !strncmp(w, "perfetto", 8), full_plain = !strcmp(w, "perfetto-full-plain");
	int uncompressed = full_plain || !strcmp(w, "perfetto-plain");
	const char *out = full_plain                                   ? "full-plain.pftrace"
	                  : uncompressed                               ? "plain.pftrace"
	                  : perfetto                                   ? "perfetto.pftrace"
	                  : !strcmp(w, "json")                         ? "trace.json"
	                  : strcmp(w, "drive") && strcmp(w, "deflate") ? "profile.db"
	                                                               : NULL;
	char *path = out ? tp_path_join(dir, out) : NULL;
	/* The file this run writes goes first, untimed: replacing the previous run's would
	 * charge its deletion (tens of ms for a large file: its page cache freed) to this run. */
	if (path)
		unlink(path);
	double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID),
	       m0 = now(CLOCK_THREAD_CPUTIME_ID);
	int st;
	long long zbytes = -1;
	if (perfetto) {
		const char *th = getenv("TP_BENCH_THREADS"); /* 1 = no compression thread */
		struct tp_perfetto_opts o = {uncompressed, level,
		                             !strcmp(w, "perfetto-full") || full_plain,
		                             th ? atoi(th) : 0};
		if (!strcmp(w, "perfetto-1t"))
			o.threads = 1;
		st = tp_perfetto_write(p, NULL, path, &o, &d);
		if (uncompressed && !full_plain && !st) {
			tp_free(*plain);
			*plain = tp_strdup(path);
		}
	} else if (!strcmp(w, "drive")) {
		struct counts count = {0};
		struct tp_sink sink = {&count, NULL, NULL, null_slice, NULL, NULL, NULL, 0};
		st = tp_sink_drive(p, NULL, &sink, &d);
	} else if (!strcmp(w, "deflate")) {
		if (!*plain) {
			fprintf(stderr, "deflate: needs perfetto-plain earlier on the line\n");
			t->status = 1;
			return -1;
		}
		zbytes = deflate_pass(*plain, level ? level : 1);
		st = zbytes < 0 ? TP_EOUTPUT : TP_OK;
	} else if (!strcmp(w, "json")) {
		st = tp_chrome_write(p, NULL, path, 0, &d);
	} else {
		st = tp_sqlitedb_write(p, NULL, path, 0, &d);
	}
	t->wall = now(CLOCK_MONOTONIC) - t0;
	t->cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	t->mcpu = now(CLOCK_THREAD_CPUTIME_ID) - m0;
	t->status = 0;
	struct stat sb = {0};
	if (st || (path && stat(path, &sb))) {
		fprintf(stderr, "%s: %s\n", w, d.msg);
		tp_free(path);
		t->status = 3;
		return -1;
	}
	*size = zbytes >= 0 ? zbytes : (long long)sb.st_size;
	tp_free(path);
	return 0;
}

/* A generated BM1688-like profile of n commands over 4 cores (TIU, GDMA, SDMA each). */
static struct tp_profile *generate(size_t n)
{
	struct tp_profile *p = tp_profile_new();
	p->tiu_freq_mhz = p->gdma_freq_mhz = 1000;
	static const char *tiu_names[] = {"conv.normal", "mm.normal", "mm2.nn",
	                                  "arith.add",   "arith.mul", "pord.maxpooling",
	                                  "sfu.taylor",  "rqdq.rq"};
	static const char *dma_names[] = {"tensorLd", "tensorSt", "tensorMv", "dma.matrix"};
	int dev = tp_profile_add_device(p, "BM1688 device 0", 0, 4);
	const int cores = 4;
	int tr[4][3];
	for (int c = 0; c < cores; c++) {
		tr[c][0] = tp_profile_add_track(p, dev, c, TP_TRACK_TIU, "TIU", 1000);
		tr[c][1] = tp_profile_add_track(p, dev, c, TP_TRACK_GDMA, "GDMA", 1000);
		tr[c][2] = tp_profile_add_track(p, dev, c, TP_TRACK_SDMA, "SDMA", 1000);
		for (int k = 0; k < 3; k++)
			tp_track_reserve(p, tr[c][k], n / 12 + 1);
	}
	int64_t t[4][3] = {{0}};
	uint32_t id[4][3] = {{0}};
	for (size_t i = 0; i < n; i++) {
		int c = (int)(i % (size_t)cores), k = (int)((i / (size_t)cores) % 3);
		struct tp_slice *s = tp_track_push(p, tr[c][k]);
		int64_t gap = rnd(40), dur = 20 + rnd(400);
		s->start_ns = t[c][k] + gap;
		tp_slice_set_end(p, &p->tracks[tr[c][k]], s, s->start_ns + dur);
		t[c][k] = tp_slice_end(&p->tracks[tr[c][k]], s);
		tp_slice_set_start_cycle(p, &p->tracks[tr[c][k]], s, (uint64_t)s->start_ns);
		s->cycles = (uint32_t)dur + 1;
		s->cmd_id = ++id[c][k];
		if (k == 0) {
			tp_slice_set_name(p, &p->tracks[tr[c][k]], s,
			                  tp_profile_str(p, tiu_names[rnd(8)]));
			tp_slice_set_type(p, &p->tracks[tr[c][k]], s, tp_profile_str(p, "sCONV"));
			tp_slice_set_dtype(p, &p->tracks[tr[c][k]], s, TP_DT_INT8);
			if (rnd(4) == 0 && id[c][1])
				s->dep_id = id[c][1];
		} else {
			tp_slice_set_name(p, &p->tracks[tr[c][k]], s,
			                  tp_profile_str(p, dma_names[rnd(4)]));
			tp_slice_set_type(p, &p->tracks[tr[c][k]], s,
			                  tp_profile_str(p, "DMA_tensor"));
			tp_slice_set_bytes(p, &p->tracks[tr[c][k]], s, 512u << rnd(8));
			tp_slice_set_dir(p, &p->tracks[tr[c][k]], s,
			                 rnd(2) ? TP_DIR_DDR_TO_LMEM : TP_DIR_LMEM_TO_DDR);
			tp_slice_set_dtype(p, &p->tracks[tr[c][k]], s, TP_DT_FP16);
			tp_slice_set_stall(p, &p->tracks[tr[c][k]], s, rnd(3) ? 0 : rnd(100));
		}
		s->layer = -1;
	}
	if (tp_profile_finish(p)) {
		fprintf(stderr, "finish failed\n");
		tp_profile_free(p);
		return NULL;
	}
	return p;
}

/* Reads the dump directory dir (TP_BENCH_DETAIL=none|full chooses the argument sets). */
static struct tp_profile *read_dump(const char *dir)
{
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	struct tp_bmprofile_opts bo = {0};
	const char *det = getenv("TP_BENCH_DETAIL"); /* none|full, default auto */
	if (det)
		bo.detail = !strcmp(det, "none")   ? TP_BMPROFILE_DETAIL_OFF
		            : !strcmp(det, "full") ? TP_BMPROFILE_DETAIL_ON
		                                   : TP_BMPROFILE_DETAIL_AUTO;
	if (tp_bmprofile_read(dir, &bo, &p, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return NULL;
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s N OUT_DIR [perfetto|perfetto-plain|json|sqlite]...\n",
		        argv[0]);
		return 1;
	}
	const char *lv = getenv("TP_BENCH_LEVEL"); /* compression level experiments */
	int level = lv ? atoi(lv) : 0;
	const char *rv = getenv("TP_BENCH_REPEAT"); /* runs per writer: best and median */
	int repeat = rv ? atoi(rv) : 1;
	if (repeat < 1 || repeat > MAX_REPEAT)
		repeat = repeat < 1 ? 1 : MAX_REPEAT;
	struct stat dsb;
	struct tp_profile *p;
	if (stat(argv[1], &dsb) == 0 && S_ISDIR(dsb.st_mode)) {
		if (!(p = read_dump(argv[1])))
			return 2;
	} else if (!(p = generate((size_t)strtoull(argv[1], NULL, 10)))) {
		return 3;
	}
	mkdir(argv[2], 0777);
	/* Count what the writers get (slices including synthesised Layer slices, JSON events)
	 * with one untimed pass of the driver. */
	struct counts cnt = {0};
	double model_rss = maxrss_mib();
	{
		struct tp_diag d = {0};
		struct tp_sink sink = {&cnt, NULL, NULL, null_slice, null_counter, NULL, NULL, 0};
		if (tp_sink_drive(p, NULL, &sink, &d)) {
			fprintf(stderr, "drive: %s\n", d.msg);
			return 3;
		}
	}
	size_t slices = (size_t)cnt.slices;
	double base_wall = 0, base_cpu = 0;
	printf("profile: %zu model slices, %zu delivered slices, %llu JSON events; peak RSS "
	       "after reading %.0f MiB, after the driver %.0f MiB\n",
	       tp_profile_slice_count(p), slices, (unsigned long long)cnt.events, model_rss,
	       maxrss_mib());
	char *plain = NULL;
	for (int a = 3; a < argc; a++) {
		const char *w = argv[a];
		double rss0 = maxrss_mib();
		struct timing best = {0};
		double walls[MAX_REPEAT];
		long long size = 0;
		for (int r = 0; r < repeat; r++) {
			struct timing one;
			if (run_writer(p, w, argv[2], level, &plain, &one, &size))
				return one.status;
			walls[r] = one.wall;
			if (!r || one.wall < best.wall)
				best = one;
		}
		qsort(walls, (size_t)repeat, sizeof *walls, dbl_cmp);
		/* CPU time too: wall time is meaningless on a loaded machine. Peak RSS: what the
		 * process peak grew by during this writer (0 = stayed under an earlier peak: the
		 * driver's own plan is in the "after the driver" figure above). */
		int json = !strcmp(w, "json");
		double nev = (double)(json ? cnt.events : slices);
		printf("%-14s slices %zu  bytes %lld  B/slice %.2f  wall %.3f s  %.2f M %s/s"
		       "  cpu %.3f s (%.2f M/s)  main-thread cpu %.3f s  peak RSS +%.0f MiB",
		       w, slices, size, (double)size / (double)slices, best.wall,
		       nev / best.wall / 1e6, json ? "events" : "slices", best.cpu,
		       nev / best.cpu / 1e6, best.mcpu, maxrss_mib() - rss0);
		if (repeat > 1)
			printf("  best of %d, median wall %.3f s (%.2f M/s)", repeat,
			       walls[repeat / 2], nev / walls[repeat / 2] / 1e6);
		if (!strcmp(w, "deflate")) {
			base_wall = best.wall;
			base_cpu = best.cpu;
		} else if (base_wall > 0) {
			printf("  x deflate: wall %.2f cpu %.2f", best.wall / base_wall,
			       best.cpu / base_cpu);
		}
		printf("\n");
		fflush(stdout);
	}
	tp_free(plain);
	tp_profile_free(p);
	return 0;
}
