/*
 * chrome_test.c — unit tests for the Chrome JSON writer: the fixture output parses with
 * libcjson and strings round-trip byte for byte; failures (unwritable path, out of memory)
 * return an error and leave no file behind. (Counts, flows and nesting are checked end to end
 * by src/sink/trace_outputs_test.py.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "chrome/chrome.h"
#include "sink/sink_fixture.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	return b;
}

static void test_round_trip(void **state)
{
	(void)state;
	char dir[] = "/tmp/tp_chrome_test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = tp_path_join(dir, "trace.json");
	struct tp_profile *p = fx_profile();
	struct tp_diag d = {0};
	assert_int_equal(tp_chrome_write(p, NULL, path, 0, &d), TP_OK);
	char *text = slurp(path);
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
	char *bad = tp_path_join(dir, "missing/trace.json");
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_chrome_write(p, NULL, bad, 0, &d), TP_EOUTPUT);
	assert_non_null(strstr(d.msg, "missing"));
	/* Out of memory at every allocation in turn: an error, never a file. */
	int ok = 0;
	for (long n = 0; n < 300 && !ok; n++) {
		memset(&d, 0, sizeof d);
		tp_alloc_fail_after(n);
		int st = tp_chrome_write(p, NULL, path, 0, &d);
		tp_alloc_fail_after(-1);
		if (st == TP_OK)
			ok = 1;
		else
			assert_int_equal(access(path, F_OK), -1);
	}
	assert_true(ok);
	unlink(path);
	rmdir(dir);
	tp_free(bad);
	tp_free(path);
	tp_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trip)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
