/*
 * temp_test.c — the table of temporaries an interrupted run removes (common/file.c): several
 * threads tracking and forgetting their own paths at once never forget another thread's
 * path, and a fatal signal then removes exactly the paths still tracked (checked in a forked
 * child). Labelled tsan: under ThreadSanitizer (which halts on its first report, tp_test's
 * TSAN environment) a race on the table ends the child with the sanitizer's status instead of
 * the signal, and so fails the test.
 */
#include "common/common.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

enum { THREADS = 6, ROUNDS = 20000 };

struct churn {
	char dir[64];
	int id;
};

/* Each thread tracks and forgets a path of its own ROUNDS times, so slots are freed and
 * claimed while the other threads compare theirs; the main thread's "keep" paths stay
 * tracked throughout. */
static void *churn(void *arg)
{
	const struct churn *c = arg;
	char path[128];
	snprintf(path, sizeof path, "%s/churn%d", c->dir, c->id);
	for (int r = 0; r < ROUNDS; r++) {
		tp_temp_track_file(path);
		tp_temp_forget(path);
	}
	return NULL;
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void test_threads_then_signal(void **state)
{
	(void)state;
	char dir[] = "/tmp/tp_temp_test_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char keep[THREADS][128], gone[128];
	for (int i = 0; i < THREADS; i++) {
		snprintf(keep[i], sizeof keep[i], "%s/keep%d", dir, i);
		touch(keep[i]);
	}
	snprintf(gone, sizeof gone, "%s/forgotten", dir);
	touch(gone);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		tp_temp_cleanup_on_signals();
		for (int i = 0; i < THREADS; i++)
			tp_temp_track_file(keep[i]);
		tp_temp_track_file(gone);
		struct churn cs[THREADS];
		pthread_t th[THREADS];
		for (int i = 0; i < THREADS; i++) {
			snprintf(cs[i].dir, sizeof cs[i].dir, "%s", dir);
			cs[i].id = i;
			if (pthread_create(&th[i], NULL, churn, &cs[i]) != 0)
				_exit(3);
		}
		tp_temp_forget(gone);
		for (int i = 0; i < THREADS; i++)
			pthread_join(th[i], NULL);
		raise(SIGTERM);
		_exit(4); /* not reached: the handler dies of the signal */
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	/* Every path still tracked is removed; the forgotten one stays. */
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(access(keep[i], F_OK), -1);
	assert_int_equal(access(gone, F_OK), 0);
	unlink(gone);
	assert_int_equal(rmdir(dir), 0);
}

#include "tp_test_main.h"
