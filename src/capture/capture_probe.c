/*
 * capture_probe.c — a small program that drives libtpuprof through one scenario per run, for
 * the capture tests (capture_test.c spawns it with different environments and checks the
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
 * Prints "done" on stdout when the scenario ran to its end.
 */
#include "tpuprof/tpuprof.h"

#include <pthread.h>
#include <signal.h>
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

static void one_matmul(int64_t m)
{
	int64_t in0[3] = {1, m, 256}, w[2] = {256, 256}, out0[3] = {1, m, 256};
	struct tpuprof_tensor ins[1] = {{"x", "fp32", in0, 3}};
	struct tpuprof_tensor outs[1] = {{"y", "fp32", out0, 3}};
	struct tpuprof_attr attrs[2] = {{"transpose_b", "1"}, {"alpha", "1.0"}};
	struct tpuprof_op_detail d = {ins, 1, outs, 1, w, 2, 0.25, attrs, 2,
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
		tpuprof_op_begin(&op_softmax);
		tpuprof_op_end(&op_softmax, NULL);
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
		tpuprof_op_begin(&op_matmul);
		tpuprof_op_end(&op_matmul, NULL);
	}
	tpuprof_step_end("g", 7);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *sc = argc > 1 ? argv[1] : "";
	if (strcmp(sc, "basic") == 0) {
		int mode = argc > 2 ? atoi(argv[2]) : 1;
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
	} else if (strcmp(sc, "auto") == 0) {
		workload(2);
	} else if (strcmp(sc, "overflow") == 0) {
		tpuprof_enable(100, TPUPROF_MODE_CONDENSED);
		tpuprof_step_begin("g", 0, 0);
		for (int i = 0; i < 1000; i++) {
			tpuprof_op_begin(&op_softmax);
			tpuprof_op_end(&op_softmax, NULL);
		}
		tpuprof_step_end("g", 0);
		tpuprof_disable();
	} else if (strcmp(sc, "sigterm") == 0 || strcmp(sc, "sigterm_app") == 0) {
		int app = strcmp(sc, "sigterm_app") == 0;
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
	} else if (strcmp(sc, "fork") == 0) {
		tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
		tpuprof_op_begin(&op_parent);
		tpuprof_op_end(&op_parent, NULL);
		pid_t pid = fork();
		if (pid == 0) {
			tpuprof_op_begin(&op_child);
			tpuprof_op_end(&op_child, NULL);
			exit(0); /* the child's own session is written at exit */
		}
		int st;
		waitpid(pid, &st, 0);
		tpuprof_op_begin(&op_parent);
		tpuprof_op_end(&op_parent, NULL);
		tpuprof_disable();
		printf("child %d\n", (int)pid);
	} else if (strcmp(sc, "threads") == 0) {
		int n = argc > 2 ? atoi(argv[2]) : 8;
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
	} else if (strcmp(sc, "sessions") == 0) {
		tpuprof_set_device(3);
		for (int k = 0; k < 2; k++) {
			tpuprof_enable(0, TPUPROF_MODE_CONDENSED);
			tpuprof_op_begin(&op_softmax);
			tpuprof_op_end(&op_softmax, NULL);
			tpuprof_disable();
		}
	} else {
		fprintf(stderr, "usage: tpuprof_probe SCENARIO [ARG]\n");
		return 1;
	}
	printf("done\n");
	return 0;
}
