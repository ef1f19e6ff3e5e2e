/*
 * capture_probe.c — a small program that drives libtpuprof through one scenario per run, for
 * the capture tests (capfile_test.c spawns it with different environments and checks the
 * dumps it leaves) and the TSan test. It links the static libtpuprof only, like a user
 * program would.
 *
 * Usage: tpuprof_probe SCENARIO [ARG]
 *   basic MODE     one session in MODE: activities, warm-up + normal steps, ops with details,
 *                  runtime calls, counters
 *   auto           records without calling tpuprof_enable (TPUPROF=1|2 decides)
 *   overflow       enable(100, 1): one step holding 1000 ops (drops expected)
 *   sigterm        records in a loop, prints "ready" and waits to be killed
 *   sigterm_app    same, with the application's own SIGTERM handler that ends the loop
 *   fork           records, forks a child that records, both end normally
 *   threads N      N threads x 20000 op pairs at once
 *   sessions       device 3, two sessions
 * Fault scenarios (tests/capture/fault_suite.py drives them):
 *   die HOW N      mode 1: N steps of dynamically named ops, prints "recorded R" (records
 *                  written), then dies: abort, segv, hup, quit, kill, _exit, or exit (normal)
 *   loop FLUSH     records until killed; prints "ready" once 2000 steps are recorded, and
 *                  flushes every 500 steps when FLUSH is 1
 *   sigint_disable records 400 000 ops, then a second thread sends SIGINT while the main
 *                  thread is inside tpuprof_disable (the default action kills the process)
 *   fill           records until the dump directory's disk is full, then disables
 *   names N        N distinct names made in one reused buffer (call_0, call_1, ...)
 *   nest N         N nested steps left open, then 1000 nested steps closed in order
 *   thread_exit    4 threads exit with open scopes; the main thread disables
 *   forkexec       records, then a child that execs /bin/true and a child that _exits
 *   eintr          the host's SIGINT handler has no SA_RESTART: a blocked read() must
 *                  return EINTR when SIGINT arrives during capture; prints "eintr ok"
 *   api            mode 2: thread name, marks, ranges with category/colour/source location,
 *                  async ranges across threads (one cut short), a zero-initialised op detail;
 *                  prints the library version
 *   detail_abi     mode 2: op details as an older caller (a smaller struct, no bytes/flops, with
 *                  0xff bytes after it), a newer one (larger struct and tensor/attr elements)
 *                  and one whose tensors stop before `shape` (see test_detail_abi)
 *   hwfds N        mode 2 with TPUPROF_HWCOUNTERS=1: N short-lived threads each record one
 *                  op; prints "fds B A" (open descriptors before and after)
 *   toggle T S MS R  T threads record without pause while the main thread runs S sessions of
 *                  MS ms (R records per thread), then every session's dump is checked
 *                  against what each thread attempted (capture_toggle.c)
 * Prints "done" on stdout when the scenario ran to its end.
 */
#include "capture_probe.h"

#include "tpuprof/tpuprof.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const struct tpuprof_op op_matmul = {"MatMul", "encoder.0.qkv", "gelu"};
static const struct tpuprof_op op_softmax = {"Softmax", "encoder.0.softmax", NULL};
static const struct tpuprof_op op_child = {"Add", "child_op", NULL};
static const struct tpuprof_op op_parent = {"Add", "parent_op", NULL};

/* One operator with no detail: its begin and its end. */
static void op_pair(const struct tpuprof_op *op)
{
	tpuprof_op_begin(op);
	tpuprof_op_end(op, NULL);
}

static void one_matmul(int64_t m)
{
	int64_t in0[3] = {1, m, 256}, w[2] = {256, 256}, out0[3] = {1, m, 256};
	struct tpuprof_tensor ins[1] = {{"x", "fp32", in0, 3}};
	struct tpuprof_tensor outs[1] = {{"y", "fp32", out0, 3}};
	struct tpuprof_attr attrs[2] = {{"transpose_b", "1"}, {"alpha", "1.0"}};
	struct tpuprof_op_detail d = {sizeof d,
	                              sizeof ins[0],
	                              sizeof attrs[0],
	                              ins,
	                              1,
	                              outs,
	                              1,
	                              w,
	                              2,
	                              0.25,
	                              attrs,
	                              2,
	                              (uint64_t)(m * 256 * 4 * 2 + 256 * 256 * 4),
	                              (uint64_t)(2 * m * 256 * 256)};
	tpuprof_op_begin(&op_matmul);
	volatile double acc = 0;
	for (int i = 0; i < 1000; i++)
		acc += i * 0.5;
	tpuprof_op_end(&op_matmul, &d);
}

static void workload(int steps)
{
	char meta[32];
	for (int s = 0; s < steps; s++) {
		snprintf(meta, sizeof meta, "batch %d", s);
		tpuprof_activity_begin("data_prep", s, meta);
		tpuprof_runtime_begin("memcpy_h2d");
		tpuprof_runtime_end("memcpy_h2d");
		tpuprof_activity_end("data_prep", s, NULL);
		tpuprof_step_begin("bert", s, s == 0);
		one_matmul(128);
		op_pair(&op_softmax);
		tpuprof_counter("queue_depth", (double)s + 0.5);
		tpuprof_step_end("bert", s);
	}
}

static volatile sig_atomic_t g_stop;
static void app_handler(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void *thread_main(void *arg)
{
	(void)arg;
	tpuprof_step_begin("g", 7, 0);
	for (int i = 0; i < 20000; i++) {
		op_pair(&op_matmul);
	}
	tpuprof_step_end("g", 7);
	return NULL;
}

static const struct tpuprof_op op_dyn_tmpl = {"Dyn", NULL, NULL};

/* One step holding one op whose name is built in a reused buffer (kept by value). */
static void dyn_step(long i)
{
	char name[32];
	snprintf(name, sizeof name, "call_%ld", i % 8);
	struct tpuprof_op op = op_dyn_tmpl;
	op.name = name;
	tpuprof_step_begin("loop", i, i < 2);
	tpuprof_runtime_begin(name);
	tpuprof_runtime_end(name);
	op_pair(&op);
	tpuprof_step_end("loop", i);
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void *hw_thread(void *arg)
{
	(void)arg;
	op_pair(&op_softmax);
	return NULL;
}

static void *open_scopes_thread(void *arg)
{
	(void)arg;
	tpuprof_activity_begin("left_open", 1, NULL);
	op_pair(&op_softmax);
	tpuprof_op_begin(&op_matmul);
	return NULL; /* exits with two scopes open */
}

static void *sigint_later(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 2000000};
	nanosleep(&ts, NULL);
	kill(getpid(), SIGINT);
	return NULL;
}

static void eintr_handler(int sig)
{
	(void)sig;
}

static int g_read_done;

/* SIGINT every 20 ms until the main thread's read() has returned, so one of them lands while
 * it is blocked (a single early signal could arrive before the read starts). */
static void *sigint_until_read(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100 && !__atomic_load_n(&g_read_done, __ATOMIC_ACQUIRE); i++) {
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
		if (!__atomic_load_n(&g_read_done, __ATOMIC_ACQUIRE))
			kill(getpid(), SIGINT);
	}
	return NULL;
}

static void *write_later(void *arg)
{
	int fd = *(int *)arg;
	/* Ends a restarted read after the signals have had their chance (or at once if it
	 * already returned). */
	for (int i = 0; i < 300 && !__atomic_load_n(&g_read_done, __ATOMIC_ACQUIRE); i++) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	ssize_t w = write(fd, "x", 1);
	(void)w;
	return NULL;
}

static void *async_ender(void *arg)
{
	(void)arg;
	tpuprof_thread_name("ender");
	tpuprof_async_end("request", 42);
	return NULL;
}

/* The command line, for the scenarios' arguments (argv[1] is the scenario's name). */
static int g_argc;
static char **g_argv;

/* Argument i as a number, or `def` when it is absent. */
static long arg_long(int i, long def)
{
	return g_argc > i ? atol(g_argv[i]) : def;
}

static int sc_basic(void)
{
	int mode = (int)arg_long(2, 1);
	/* Run metadata: a replaced key, and two rejected calls that must change nothing. */
	if (tpuprof_meta("batch_size", "4") != TPUPROF_OK ||
	    tpuprof_meta("batch_size", "8") != TPUPROF_OK ||
	    tpuprof_meta("model", "probe \"net\"") != TPUPROF_OK ||
	    tpuprof_meta("", "x") != TPUPROF_EINVAL ||
	    tpuprof_meta("a_key_that_is_far_too_long_for_the_table", "x") != TPUPROF_EINVAL)
		printf("meta failed\n");
	int rc = tpuprof_enable(0, mode);
	if (rc != TPUPROF_OK)
		printf("enable failed: %d\n", rc);
	workload(3);
	rc = tpuprof_disable();
	if (rc != TPUPROF_OK)
		printf("disable failed: %d\n", rc);
	return 0;
}

static int sc_auto(void)
{
	workload(2);
	return 0;
}

static int sc_overflow(void)
{
	tpuprof_enable(100, TPUPROF_MODE_CONDENSED);
	tpuprof_step_begin("g", 0, 0);
	for (int i = 0; i < 1000; i++) {
		op_pair(&op_softmax);
	}
	tpuprof_step_end("g", 0);
	tpuprof_disable();
	return 0;
}

static int sc_sigterm(void)
{
	int app = strcmp(g_argv[1], "sigterm_app") == 0;
	if (app)
		signal(SIGTERM, app_handler);
	if (tpuprof_mode() < 0)
		tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	for (long i = 0; !g_stop; i++) {
		tpuprof_step_begin("loop", i, 0);
		tpuprof_op_begin(&op_softmax);
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
		tpuprof_op_end(&op_softmax, NULL);
		tpuprof_step_end("loop", i);
		if (i == 50) {
			printf("ready\n");
			fflush(stdout);
		}
	}
	if (app) {
		printf("handler called\n");
		tpuprof_disable();
	}
	return 0;
}

static int sc_fork(void)
{
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	op_pair(&op_parent);
	pid_t pid = fork();
	if (pid == 0) {
		op_pair(&op_child);
		exit(0); /* the child's own session is written at exit */
	}
	int st;
	waitpid(pid, &st, 0);
	op_pair(&op_parent);
	tpuprof_disable();
	printf("child %d\n", (int)pid);
	return 0;
}

static int sc_threads(void)
{
	int n = (int)arg_long(2, 8);
	if (n < 1 || n > 64)
		n = 8;
	pthread_t th[64];
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, thread_main, NULL);
	/* Flush while the threads record: the snapshot must stay consistent. */
	tpuprof_flush();
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	tpuprof_disable();
	return 0;
}

static int sc_sessions(void)
{
	tpuprof_set_device(3);
	for (int k = 0; k < 2; k++) {
		tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
		op_pair(&op_softmax);
		tpuprof_disable();
	}
	return 0;
}

static int sc_die(void)
{
	const char *how = g_argc > 2 ? g_argv[2] : "abort";
	long n = arg_long(3, 1000);
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	for (long i = 0; i < n; i++)
		dyn_step(i);
	printf("recorded %ld\n", n * 6);
	fflush(stdout);
	if (strcmp(how, "abort") == 0)
		abort();
	if (strcmp(how, "segv") == 0)
		raise(SIGSEGV);
	if (strcmp(how, "hup") == 0)
		raise(SIGHUP);
	if (strcmp(how, "quit") == 0)
		raise(SIGQUIT);
	if (strcmp(how, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(how, "_exit") == 0)
		_exit(0);
	return 0; /* exit: the destructor writes the final dump */
}

static int sc_loop(void)
{
	int fl = arg_long(2, 0) == 1;
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	for (long i = 0;; i++) {
		dyn_step(i);
		if (fl && i % 500 == 499)
			tpuprof_flush();
		if (i == 2000) {
			printf("ready\n");
			fflush(stdout);
		}
	}
	return 0; /* not reached: the test kills the process */
}

static int sc_sigint_disable(void)
{
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	for (long i = 0; i < 200000; i++) {
		op_pair(&op_softmax);
	}
	printf("recorded %d\n", 400000);
	fflush(stdout);
	pthread_t th;
	pthread_create(&th, NULL, sigint_later, NULL);
	tpuprof_disable();
	pthread_join(th, NULL);
	return 0; /* the SIGINT may have arrived after disable: then the process lives */
}

static int sc_fill(void)
{
	tpuprof_enable(1u << 22, TPUPROF_MODE_CONDENSED);
	long i = 0;
	for (; i < 200000; i++)
		dyn_step(i);
	printf("attempted %ld\n", i * 6);
	int rc = tpuprof_disable();
	printf("disable %d\n", rc);
	return 0;
}

static int sc_names(void)
{
	long n = arg_long(2, 10000);
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	char buf[64];
	for (long i = 0; i < n; i++) {
		snprintf(buf, sizeof buf, "call_%ld", i);
		struct tpuprof_op op = {"Dyn", buf, NULL};
		op_pair(&op);
		tpuprof_runtime_begin(buf);
		tpuprof_runtime_end(buf);
	}
	/* Invalid UTF-8 and an over-long name (cut on a character boundary). */
	static const struct tpuprof_op bad = {"Bad\xff", "caf\xc3\xa9\xc3", NULL};
	op_pair(&bad);
	static char longname[3000];
	for (int k = 0; k + 2 < (int)sizeof longname; k += 2)
		memcpy(longname + k, "\xc3\xa9", 2);
	struct tpuprof_op lop = {"Long", longname, NULL};
	op_pair(&lop);
	tpuprof_disable();
	return 0;
}

static int sc_nest(void)
{
	long n = arg_long(2, 100000);
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	for (long i = 0; i < n; i++) {
		tpuprof_step_begin("open", i, 0);
		op_pair(&op_softmax);
	}
	tpuprof_disable();
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	for (long i = 0; i < 1000; i++)
		tpuprof_step_begin("nested", i, 0);
	op_pair(&op_softmax);
	for (long i = 999; i >= 0; i--)
		tpuprof_step_end("nested", i);
	tpuprof_disable();
	return 0;
}

static int sc_thread_exit(void)
{
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, open_scopes_thread, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	tpuprof_disable();
	return 0;
}

static int sc_forkexec(void)
{
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	dyn_step(0);
	pid_t a = fork();
	if (a == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	pid_t b = fork();
	if (b == 0)
		_exit(0);
	int st;
	waitpid(a, &st, 0);
	waitpid(b, &st, 0);
	dyn_step(1);
	tpuprof_disable();
	return 0;
}

static int sc_eintr(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = eintr_handler; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
	int fds[2];
	if (pipe(fds) != 0)
		return 1;
	pthread_t th, w;
	pthread_create(&th, NULL, sigint_until_read, NULL);
	/* If the read were restarted, this byte would end it after 2 s. */
	pthread_create(&w, NULL, write_later, &fds[1]);
	char c;
	ssize_t r = read(fds[0], &c, 1);
	int err = errno;
	__atomic_store_n(&g_read_done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	pthread_join(w, NULL);
	struct sigaction now;
	sigaction(SIGINT, NULL, &now);
	printf(r < 0 && err == EINTR ? "eintr ok\n" : "read was restarted\n");
	printf((now.sa_flags & SA_RESTART) ? "restart flag added\n" : "flags kept\n");
	tpuprof_disable();
	return 0;
}

static int sc_api(void)
{
	tpuprof_thread_name("main-\xc3\xa9-a-very-long-name"); /* 15 bytes kept: "main-é-a-very-" */
	tpuprof_enable(0, TPUPROF_MODE_DETAILED);
	struct tpuprof_event_attr at = TPUPROF_EVENT_ATTR_INIT;
	at.category = "io";
	at.color = TPUPROF_RGB(255, 0, 0);
	at.file = "probe.c";
	at.line = 123;
	at.function = "api";
	tpuprof_mark("start", &at);
	tpuprof_range_begin("load", &at);
	tpuprof_async_begin("request", 42, &at);
	tpuprof_async_begin("request", 43, NULL);
	/* An older caller's smaller struct: only `size` and `color` are read. */
	struct tpuprof_event_attr small = {offsetof(struct tpuprof_event_attr, category),
	                                   TPUPROF_RGB(0, 0, 255),
	                                   (const char *)1,
	                                   NULL,
	                                   0,
	                                   NULL};
	tpuprof_mark("small", &small);
	tpuprof_range_end("load");
	pthread_t th;
	pthread_create(&th, NULL, async_ender, NULL);
	pthread_join(th, NULL);
	tpuprof_async_end("request", 43);
	tpuprof_async_begin("never_ends", 7, NULL);
	struct tpuprof_op_detail zero;
	memset(&zero, 0, sizeof zero);
	tpuprof_op_begin(&op_softmax);
	tpuprof_op_end(&op_softmax, &zero);
	tpuprof_disable();
	printf("version %s\n", tpuprof_version());
	return 0;
}

static int sc_detail_abi(void)
{
	static const struct tpuprof_op op_old = {"Old", "old_caller", NULL};
	static const struct tpuprof_op op_new = {"New", "new_caller", NULL};
	static const struct tpuprof_op op_short = {"Short", "short_tensors", NULL};
	tpuprof_enable(0, TPUPROF_MODE_DETAILED);
	int64_t s1[2] = {2, 3}, s2[2] = {4, 5};
	/* An older header's struct: the same fields up to num_attrs, no bytes/flops. */
	struct old_detail {
		uint32_t size;
		uint16_t tensor_size, attr_size;
		const struct tpuprof_tensor *inputs;
		int num_inputs;
		const struct tpuprof_tensor *outputs;
		int num_outputs;
		const int64_t *weight_shape;
		int weight_ndim;
		double weight_sparsity;
		const struct tpuprof_attr *attrs;
		int num_attrs;
	};
	struct tpuprof_tensor in1[1] = {{"a", "int8", s1, 2}};
	unsigned char *buf = malloc(sizeof(struct tpuprof_op_detail) + 64);
	memset(buf, 0xff, sizeof(struct tpuprof_op_detail) + 64); /* what follows it */
	struct old_detail od = {sizeof od,
	                        sizeof in1[0],
	                        sizeof(struct tpuprof_attr),
	                        in1,
	                        1,
	                        NULL,
	                        0,
	                        NULL,
	                        0,
	                        -1,
	                        NULL,
	                        0};
	memcpy(buf, &od, sizeof od);
	tpuprof_op_begin(&op_old);
	tpuprof_op_end(&op_old, (const struct tpuprof_op_detail *)(void *)buf);
	free(buf);
	/* A newer header's structs: every element and the detail carry extra fields. */
	struct new_tensor {
		struct tpuprof_tensor t;
		int64_t future_strides[4];
	} nin[2] = {{{"p", "fp16", s1, 2}, {-1, -1, -1, -1}},
	            {{"q", "bf16", s2, 2}, {-1, -1, -1, -1}}};
	struct new_attr {
		struct tpuprof_attr a;
		const char *future_unit;
	} nat[2] = {{{"k1", "v1"}, "junk"}, {{"k2", "v2"}, "junk"}};
	struct new_detail {
		struct tpuprof_op_detail d;
		uint64_t future_cycles;
	} nd;
	memset(&nd, 0, sizeof nd);
	nd.d.size = sizeof nd;
	nd.d.tensor_size = sizeof nin[0];
	nd.d.attr_size = sizeof nat[0];
	nd.d.inputs = &nin[0].t;
	nd.d.num_inputs = 2;
	nd.d.weight_sparsity = -1;
	nd.d.attrs = &nat[0].a;
	nd.d.num_attrs = 2;
	nd.d.bytes = 1234;
	nd.future_cycles = 99;
	tpuprof_op_begin(&op_new);
	tpuprof_op_end(&op_new, &nd.d);
	/* Tensors from a header whose tpuprof_tensor ended before `shape`. */
	struct tpuprof_op_detail sd = TPUPROF_OP_DETAIL_INIT;
	sd.tensor_size = (uint16_t)offsetof(struct tpuprof_tensor, shape);
	sd.inputs = in1;
	sd.num_inputs = 1;
	tpuprof_op_begin(&op_short);
	tpuprof_op_end(&op_short, &sd);
	tpuprof_disable();
	return 0;
}

static int sc_hwfds(void)
{
	int n = (int)arg_long(2, 50);
	tpuprof_enable(0, TPUPROF_MODE_DETAILED);
	hw_thread(NULL); /* the main thread's counters stay open while it lives */
	int before = count_fds();
	for (int i = 0; i < n; i++) {
		pthread_t th;
		pthread_create(&th, NULL, hw_thread, NULL);
		pthread_join(th, NULL);
	}
	int after = count_fds();
	tpuprof_disable();
	printf("fds %d %d\n", before, after);
	return 0;
}

static int sc_toggle(void)
{
	return probe_toggle(g_argc, g_argv);
}

/* The scenarios by name. Each returns 0 when it ran to its end (main then prints "done"),
 * or the process's exit status. */
static const struct {
	const char *name;
	int (*run)(void);
} scenarios[] = {
    {"basic", sc_basic},
    {"auto", sc_auto},
    {"overflow", sc_overflow},
    {"sigterm", sc_sigterm},
    {"sigterm_app", sc_sigterm},
    {"fork", sc_fork},
    {"threads", sc_threads},
    {"sessions", sc_sessions},
    {"die", sc_die},
    {"loop", sc_loop},
    {"sigint_disable", sc_sigint_disable},
    {"fill", sc_fill},
    {"names", sc_names},
    {"nest", sc_nest},
    {"thread_exit", sc_thread_exit},
    {"forkexec", sc_forkexec},
    {"eintr", sc_eintr},
    {"api", sc_api},
    {"detail_abi", sc_detail_abi},
    {"hwfds", sc_hwfds},
    {"toggle", sc_toggle},
};

int main(int argc, char **argv)
{
	const char *sc = argc > 1 ? argv[1] : "";
	for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
		if (strcmp(sc, scenarios[i].name) != 0)
			continue;
		g_argc = argc;
		g_argv = argv;
		int rc = scenarios[i].run();
		if (rc != 0)
			return rc;
		printf("done\n");
		return 0;
	}
	fprintf(stderr, "usage: tpuprof_probe SCENARIO [ARG]\n");
	return 1;
}
