/*
 * timings_test.c — unit tests for the per-phase report (timings.c): hooks do nothing while it
 * is off, phases nest and a phase opened again under the same parent adds to its record, CPU
 * time inside a parallel section (tp_par_run's own share included, unless it has one job for two
 * threads) is not serial while the rest of the driving thread's is, pool threads raise the thread
 * count, and the JSON report holds every phase under its path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "common/timings.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic uint64_t sink; /* keeps the spins from being optimised away */

/* Burns some CPU time on the calling thread. */
static void spin(unsigned rounds)
{
	uint64_t x = rounds;
	for (unsigned i = 0; i < rounds * 1000000u; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	atomic_fetch_add(&sink, x);
}

static void spin_item(void *arg, size_t k)
{
	(void)arg;
	(void)k;
	spin(20);
}

/* The value of `key` in the report's phase record named `name` (-1 when absent). */
static double field(const char *json, const char *name, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof pat, "{\"name\": \"%s\",", name);
	const char *p = strstr(json, pat);
	if (!p)
		return -1;
	const char *end = strchr(p, '}');
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *f = strstr(p, pat);
	if (!f || f > end)
		return -1;
	return strtod(f + strlen(pat), NULL);
}

static void test_report(void **state)
{
	(void)state;
	/* Off: the hooks change nothing and writing is a no-op. */
	tp_tm_begin("ignored");
	tp_tm_par_begin();
	tp_tm_par_end();
	tp_tm_end();
	assert_int_equal(tp_tm_write("/nonexistent/dir/x.json", 1, "in", NULL), TP_OK);

	tp_tm_enable();
	tp_tm_begin("read");
	for (int i = 0; i < 2; i++) {
		tp_tm_begin("iter");
		spin(20); /* serial */
		tp_tm_end();
	}
	tp_tm_begin("par");
	tp_par_run(2, 4, spin_item, NULL); /* parallel, the calling thread's share too */
	tp_tm_end();
	tp_tm_begin("one");
	tp_par_run(2, 1, spin_item, NULL); /* one job cannot be spread: serial */
	tp_tm_end();
	tp_tm_begin("j1");
	tp_par_run(1, 1, spin_item, NULL); /* one thread: the work a larger --jobs would split */
	tp_tm_end();
	tp_tm_end();

	char path[] = "/tmp/timings_test.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct tp_diag d = {0};
	assert_int_equal(tp_tm_write(path, 2, "in\"put", &d), TP_OK);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char json[8192];
	size_t n = fread(json, 1, sizeof json - 1, f);
	json[n] = 0;
	fclose(f);
	unlink(path);

	assert_non_null(strstr(json, "\"jobs\": 2, \"input\": \"in\\\"put\""));
	assert_true(field(json, "read/iter", "runs") == 2);
	assert_true(field(json, "read/iter", "depth") == 2);
	assert_true(field(json, "read", "runs") == 1);
	double iter_cpu = field(json, "read/iter", "cpu_s");
	double iter_ser = field(json, "read/iter", "serial_cpu_s");
	assert_true(iter_cpu > 0);
	assert_true(iter_ser > 0.8 * iter_cpu); /* all on the driving thread */
	double par_cpu = field(json, "read/par", "cpu_s");
	double par_ser = field(json, "read/par", "serial_cpu_s");
	assert_true(par_cpu > 0);
	assert_true(par_ser < 0.2 * par_cpu);
	assert_true(field(json, "read/par", "threads") == 2);
	double one_cpu = field(json, "read/one", "cpu_s");
	assert_true(one_cpu > 0);
	assert_true(field(json, "read/one", "serial_cpu_s") > 0.8 * one_cpu);
	double j1_cpu = field(json, "read/j1", "cpu_s");
	assert_true(j1_cpu > 0);
	assert_true(field(json, "read/j1", "serial_cpu_s") < 0.2 * j1_cpu);
	assert_true(field(json, "read/iter", "threads") == 1);
	assert_true(field(json, "read", "wall_s") >= field(json, "read/par", "wall_s"));
	assert_true(field(json, "total", "rss_peak_bytes") >=
	            field(json, "total", "rss_start_bytes"));
}

#include "tp_test_main.h"
