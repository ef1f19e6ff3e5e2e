/*
 * chrome_test.c — unit tests for the Chrome JSON writer: the fixture output parses with
 * libcjson and strings round-trip byte for byte; failures (unwritable path, out of memory)
 * return an error and leave no file behind; the file is the same bytes for every --jobs value
 * and batch size (events are formatted in batches on worker threads and written in order).
 * (Counts, flows and nesting are checked end to end by tests/trace/trace_outputs_test.py.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "fixtures/c/sink_fixture.h"
#include "testutil.h"
#include "writers/chrome/chrome.h"

/* The writer as tp_test_oom_sweep calls it. */
struct write_ctx {
	const struct tp_profile *p;
	const char *path;
	int jobs; /* 0: tp_chrome_write */
	size_t batch;
};

static int write_trace(void *ctx, struct tp_diag *d)
{
	struct write_ctx *w = ctx;
	if (!w->jobs)
		return tp_chrome_write(w->p, NULL, w->path, 0, d);
	struct tp_chrome_opts o = {0, w->jobs, w->batch, w->batch};
	return tp_chrome_write_ex(w->p, NULL, w->path, &o, d);
}

static void test_round_trip(void **state)
{
	const struct tp_profile *p = *state;
	struct tp_test_out out;
	tp_test_out_make(&out, "tp_chrome_test", "trace.json");
	const char *path = out.path;
	struct tp_diag d = {0};
	assert_int_equal(tp_chrome_write(p, NULL, path, 0, &d), TP_OK);
	char *text = tp_test_slurp(path, NULL);
	assert_non_null(text);
	cJSON *doc = cJSON_Parse(text);
	assert_non_null(doc);
	cJSON *ev = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
	assert_true(cJSON_IsArray(ev));
	int x = 0, found_op = 0, found_thread = 0;
	cJSON *e;
	cJSON_ArrayForEach(e, ev)
	{
		const char *ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
		cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		if (!strcmp(ph, "X")) {
			x++;
			if (!strcmp(name->valuestring, "MatMul\n<\x01>")) {
				found_op = 1;
				cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
				assert_string_equal(
				    cJSON_GetObjectItemCaseSensitive(args, "attr.path")
				        ->valuestring,
				    "C:\\tmp\\x</script>");
			}
		} else if (!strcmp(ph, "M") && !strcmp(name->valuestring, "thread_name")) {
			cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
			if (!strcmp(cJSON_GetObjectItemCaseSensitive(args, "name")->valuestring,
			            "main\tthread"))
				found_thread = 1;
		}
	}
	assert_int_equal(x, 14);
	assert_true(found_op);
	assert_true(found_thread);
	assert_null(strstr(text, "</script>")); /* escaped as \u003c/ */
	cJSON_Delete(doc);
	free(text);
	unlink(path);

	/* An unwritable destination: TP_EOUTPUT naming the path. */
	char *bad = tp_path_join(out.dir, "missing/trace.json");
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_chrome_write(p, NULL, bad, 0, &d), TP_EOUTPUT);
	assert_non_null(strstr(d.msg, "missing"));
	/* Out of memory at every allocation in turn: TP_ENOMEM, never a file. */
	struct write_ctx w = {p, path, 0, 0};
	tp_test_oom_sweep(write_trace, &w, path, 300);
	/* The same with formatting workers and small batches: an allocation failing on a worker
	 * thread is TP_ENOMEM too. */
	struct write_ctx wt = {p, path, 3, 2};
	tp_test_oom_sweep(write_trace, &wt, path, 600);
	tp_test_out_done(&out);
	tp_free(bad);
}

/* The same bytes for jobs 1..8 and batches of 1..5 and the default size, with default and
 * full arguments; batches of 1 event push the whole trace through the ring many times. */
static void test_same_bytes_any_jobs(void **state)
{
	const struct tp_profile *p = *state;
	struct tp_test_out out;
	tp_test_out_make(&out, "tp_chrome_test", "trace.json");
	const char *path = out.path;
	for (int full = 0; full < 2; full++) {
		struct tp_diag d = {0};
		assert_int_equal(tp_chrome_write(p, NULL, path, full, &d), TP_OK);
		size_t ref_len = 0;
		char *ref = tp_test_slurp(path, &ref_len);
		assert_non_null(ref);
		assert_true(ref_len > 1000);
		/* One event per line: a batch boundary must not lose or double a separator. */
		assert_non_null(strstr(ref, "{\"traceEvents\":[\n{\"ph\":\"M\""));
		assert_null(strstr(ref, ",,"));
		static const int jobs[] = {1, 2, 3, 8, 0};
		static const size_t batch[] = {1, 2, 3, 5, 0};
		for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++)
			for (size_t b = 0; b < sizeof batch / sizeof *batch; b++) {
				struct tp_chrome_opts o = {full, jobs[j], batch[b], batch[b]};
				memset(&d, 0, sizeof d);
				assert_int_equal(tp_chrome_write_ex(p, NULL, path, &o, &d), TP_OK);
				size_t len = 0;
				char *got = tp_test_slurp(path, &len);
				assert_non_null(got);
				if (len != ref_len || memcmp(got, ref, len) != 0)
					fail_msg(
					    "jobs %d batch %zu full %d: %zu bytes differ from the "
					    "single-threaded %zu",
					    jobs[j], batch[b], full, len, ref_len);
				free(got);
			}
		free(ref);
	}
	tp_test_out_done(&out);
}

#define TP_TEST_GROUP_SETUP fx_setup
#define TP_TEST_GROUP_TEARDOWN fx_teardown
#include "tp_test_main.h"
