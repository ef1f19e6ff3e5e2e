/*
 * traceread_test.c — unit tests of the Chrome-trace reader: the three real traces under
 * ../shared/testdata/traces (counts per phase, names, exact timestamps), number parsing to exact
 * nanoseconds, the tolerated quirks (trailing commas, truncation at every length, unmatched
 * ends, invalid UTF-8, 64-bit ids, string numbers), the rejected inputs and their
 * `path@0xOFFSET` messages, the streaming file path against the in-memory one (with an event
 * larger than the read chunk), and the out-of-memory sweep.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "model/merge.h"
#include "readers/traceread/traceread.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const char *shared_dir(void)
{
	const char *s = getenv("TP_SHARED_DIR");
	return s ? s : "../shared";
}

/* Reads a real trace by path; when it is absent, prints SKIPPED and skips the running test
 * (cmocka's skip() does not return). */
static struct tp_profile *real(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/testdata/traces/%s", shared_dir(), name);
	if (access(path, R_OK) != 0) {
		printf("SKIPPED: %s is absent\n", path);
		skip();
	}
	assert_true(tp_traceread_probe(path));
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_traceread_read(path, &p, &d);
	if (rc)
		fail_msg("%s", d.msg);
	assert_non_null(p);
	return p;
}

static struct tp_profile *parse(const char *text, int want, const char *want_msg)
{
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_traceread_parse((const uint8_t *)text, strlen(text), "t.json", &p, &d);
	if (rc != want)
		fail_msg("status %d (want %d): %s", rc, want, d.msg);
	if (want_msg)
		assert_string_equal(d.msg, want_msg);
	return p;
}

static size_t count_type(const struct tp_profile *p, const char *type)
{
	uint32_t ty = tp_profile_find_str(p, type);
	size_t n = 0;
	for (size_t t = 0; t < p->num_tracks; t++)
		for (size_t k = 0; k < p->tracks[t].count; k++)
			n += ty && tp_slice_type(&p->tracks[t], &p->tracks[t].slices[k]) == ty;
	return n;
}

/* The first slice named `name` (of type `type` unless NULL), in track order. */
static const struct tp_slice *find_typed(const struct tp_profile *p, const char *name,
                                         const char *type, const struct tp_track **tr)
{
	uint32_t id = tp_profile_find_str(p, name);
	uint32_t ty = type ? tp_profile_find_str(p, type) : 0;
	for (size_t t = 0; t < p->num_tracks && id; t++)
		for (size_t k = 0; k < p->tracks[t].count; k++)
			if (tp_slice_name(&p->tracks[t], &p->tracks[t].slices[k]) == id &&
			    (!type ||
			     tp_slice_type(&p->tracks[t], &p->tracks[t].slices[k]) == ty)) {
				if (tr)
					*tr = &p->tracks[t];
				return &p->tracks[t].slices[k];
			}
	fail_msg("no slice named %s", name);
	return NULL;
}

static const struct tp_slice *find_slice(const struct tp_profile *p, const char *name,
                                         const struct tp_track **tr)
{
	return find_typed(p, name, NULL, tr);
}

static int64_t base_ns(const struct tp_profile *p)
{
	const char *b = tp_profile_get_meta(p, TP_META_TRACE_BASE_NS);
	assert_non_null(b);
	return strtoll(b, NULL, 10);
}

static int has_note(const struct tp_profile *p, const char *sub)
{
	for (size_t i = 0; i < p->num_notes; i++)
		if (strstr(tp_str(p, p->notes[i].text), sub))
			return 1;
	return 0;
}

static const char *arg_str(const struct tp_profile *p, const struct tp_slice *s, const char *key)
{
	const struct tp_arg *a = tp_args_find(p, s->args, tp_profile_find_str(p, key));
	if (!a || a->type != TP_ARG_STR)
		return NULL;
	return tp_str(p, a->v.s);
}

static void test_kineto(void **state)
{
	(void)state;
	struct tp_profile *p = real("pytorch_kineto_alexnet_cuda.json");
	/* README: 1 408 events: 868 X, 345 f + 155 s flows, 38 M, 2 i. */
	assert_string_equal(tp_profile_get_meta(p, "chrome_trace.events"), "1408");
	/* The 868 X events by class: 359 cpu_op, 361 cuda_runtime, 8 user_annotation, 79
	 * kernel, 16 gpu_memcpy, 3 gpu_memset, 41 cuda_sync and the envelope. */
	assert_int_equal(count_type(p, TP_CAP_TYPE_OP), 359);
	assert_int_equal(count_type(p, TP_CAP_TYPE_RUNTIME), 361);
	assert_int_equal(count_type(p, TP_TRACE_TYPE_ANNOTATION), 8);
	assert_int_equal(count_type(p, TP_TRACE_TYPE_KERNEL), 79);
	assert_int_equal(count_type(p, TP_TRACE_TYPE_MEMCPY), 16);
	assert_int_equal(count_type(p, TP_TRACE_TYPE_MEMSET), 3);
	assert_int_equal(count_type(p, TP_TRACE_TYPE_SYNC), 41);
	assert_int_equal(count_type(p, TP_TRACE_TYPE_PROFILER), 1);
	assert_string_equal(tp_profile_get_meta(p, TP_META_RANK), "0");
	assert_null(tp_profile_get_meta(p, TP_META_WORLD_SIZE));
	assert_int_equal(count_type(p, "instant"), 2);
	/* 155 s and 345 f (bp "e"); 139 of the f share a cat and id with an earlier s. */
	assert_true(has_note(p, "500 flow events (s/t/f) read: 139 flows paired by id, 206 ends"));
	assert_int_equal(p->num_flows, 139);
	/* Earliest event: the global instant at 1695835542481129 µs. */
	assert_int_equal(base_ns(p), INT64_C(1695835542481129000));
	const struct tp_track *tr = NULL;
	const struct tp_slice *s = find_slice(p, "[param|cuda]", &tr);
	assert_int_equal(s->start_ns + base_ns(p), INT64_C(1695835542514261000));
	assert_int_equal(tp_slice_dur(tr, s), INT64_C(43425283000)); /* a long_dur entry */
	assert_true(s->dur & TP_SLICE_LONG_DUR);
	assert_string_equal(arg_str(p, s, "cat"), "user_annotation");
	/* Named by the M events: process python3.10. */
	assert_string_equal(tp_str(p, p->devices[tr->device].name), "python3.10");
	/* String pids ("Traces") are devices of their own. */
	int found = 0;
	for (size_t i = 0; i < p->num_devices; i++)
		found |= strcmp(tp_str(p, p->devices[i].name), "pid Traces") == 0;
	assert_true(found);
	tp_profile_free(p);
}

/* Launch links by args.correlation: a runtime call -> its kernel / memcpy, when no s/f flow
 * already reaches the device activity; correlation ids as numbers or strings; a device
 * activity whose id names no runtime call, or a runtime call that starts after it, gets none. */
static void test_correlation(void **state)
{
	(void)state;
	struct tp_profile *p =
	    parse("{\"traceEvents\":["
	          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
	          "\"ts\":0,\"dur\":50,"
	          "\"args\":{\"External id\":7}},"
	          "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
	          "\"tid\":1,"
	          "\"ts\":10,\"dur\":5,\"args\":{\"correlation\":100,\"External id\":7}},"
	          "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,"
	          "\"tid\":1,"
	          "\"ts\":20,\"dur\":5,\"args\":{\"correlation\":\"101\"}},"
	          "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
	          "\"tid\":1,"
	          "\"ts\":30,\"dur\":5,\"args\":{\"correlation\":102}},"
	          "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
	          "\"tid\":1,"
	          "\"ts\":40,\"dur\":5,\"args\":{\"correlation\":103}},"
	          "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":"
	          "60,\"dur\":10,"
	          "\"args\":{\"correlation\":100,\"External id\":7}},"
	          "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy "
	          "HtoD\",\"pid\":0,\"tid\":8,\"ts\":70,"
	          "\"dur\":10,\"args\":{\"correlation\":101}},"
	          "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"relu\",\"pid\":0,\"tid\":7,\"ts\":"
	          "80,\"dur\":10,"
	          "\"args\":{\"correlation\":102}},"
	          "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":102,\"pid\":1,\"tid\":1,"
	          "\"ts\":30},"
	          "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":102,\"pid\":0,\"tid\":7,"
	          "\"ts\":80,\"bp\":\"e\"},"
	          "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"early\",\"pid\":0,\"tid\":7,\"ts\":"
	          "35,\"dur\":1,"
	          "\"args\":{\"correlation\":103}},"
	          "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"pid\":0,\"tid\":7,\"ts\":"
	          "95,\"dur\":1,"
	          "\"args\":{\"correlation\":999}}]}",
	          TP_OK, NULL);
	/* 1 s/f flow (102) + 2 by correlation (100, 101); 102 not doubled; 103 starts after its
	 * kernel; 999 names no runtime call. */
	assert_int_equal(p->num_flows, 3);
	assert_true(has_note(p, "2 launch flows from args.correlation"));
	int host = -1, k7 = -1, k8 = -1;
	for (size_t t = 0; t < p->num_tracks; t++) {
		const char *n = tp_str(p, p->tracks[t].name);
		if (p->tracks[t].count == 5)
			host = (int)t;
		else if (strstr(n, "7"))
			k7 = (int)t;
		else if (strstr(n, "8"))
			k8 = (int)t;
	}
	assert_true(host >= 0 && k7 >= 0 && k8 >= 0);
	int seen100 = 0, seen101 = 0;
	for (size_t i = 0; i < p->num_flows; i++) {
		const struct tp_flow *f = &p->flows[i];
		assert_int_equal(f->from_track, host);
		if (f->to_track == k7 && f->from_ns == 10000 && f->to_ns == 60000)
			seen100++;
		if (f->to_track == k8 && f->from_ns == 20000 && f->to_ns == 70000)
			seen101++;
	}
	assert_int_equal(seen100, 1);
	assert_int_equal(seen101, 1);
	tp_profile_free(p);
}

static void test_onnxruntime(void **state)
{
	(void)state;
	struct tp_profile *p = real("onnxruntime_resnet_profile.json");
	assert_int_equal(count_type(p, TP_CAP_TYPE_OP), 235);
	assert_int_equal(p->num_devices, 1);
	assert_int_equal(base_ns(p), 4000);
	const struct tp_track *st = NULL, *rt = NULL;
	const struct tp_slice *s = find_slice(p, "gpu_0/data_0_QuantizeLinear_kernel_time", &st);
	assert_int_equal(s->start_ns, 902583000 - 4000);
	assert_int_equal(tp_slice_dur(st, s), 4068000);
	assert_string_equal(arg_str(p, s, TP_CAP_KEY_OP_TYPE), "QuantizeLinear");
	assert_string_equal(arg_str(p, s, "provider"), "CPUExecutionProvider");
	/* Parents written after their children still nest: model_run is depth 0 and encloses. */
	const struct tp_slice *run = find_slice(p, "model_run", &rt);
	assert_int_equal(tp_slice_depth(rt, run), 0);
	assert_int_equal(tp_slice_depth(st, s), 2);
	tp_profile_free(p);
}

static void test_mxnet(void **state)
{
	(void)state;
	struct tp_profile *p = real("mxnet_mnist_cnn_profile.json");
	/* 235 B/E pairs, 734 b/e pairs, 1774 counter samples over 4 series names. */
	assert_int_equal(count_type(p, TP_CAP_TYPE_OP), 235);
	assert_int_equal(count_type(p, "async"), 734);
	size_t samples = 0;
	for (size_t c = 0; c < p->num_counters; c++)
		samples += p->counters[c].count;
	assert_int_equal(samples, 1774);
	assert_int_equal(base_ns(p), INT64_C(1559670489317037000));
	const struct tp_track *tr = NULL;
	const struct tp_slice *s = find_typed(p, "_image_to_tensor", TP_CAP_TYPE_OP, &tr);
	assert_int_equal(s->start_ns + base_ns(p), INT64_C(1559670489317148000));
	/* The b/e pair with id 10352009933853062329 (> INT64_MAX) on pid 3060606181218273969. */
	s = find_typed(p, "_backward_mean", "async", &tr);
	assert_int_equal(s->start_ns + base_ns(p), INT64_C(1559670489349517000));
	assert_int_equal(tp_slice_dur(tr, s), 868000);
	assert_string_equal(tp_str(p, p->devices[tr->device].name), "operator");
	assert_string_equal(tp_str(p, tr->name), "async operator");
	assert_false(has_note(p, "without a matching"));
	assert_false(has_note(p, "never closed"));
	tp_profile_free(p);
}

static void test_us_to_ns(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int rc;
		int64_t ns;
	} c[] = {
	    {"1559670489324232", 0, INT64_C(1559670489324232000)},
	    {"12.3456", 0, 12346}, /* 12345.6 ns rounds up */
	    {"0.0005", 0, 1},
	    {"0.0004", 0, 0},
	    {"-1.5", 0, -1500},
	    {"1.23457e+06", 0, INT64_C(1234570000)},
	    {"2E-3", 0, 2},
	    {" 7 ", 0, 7000},
	    {"1695835542514261.123456", 0, INT64_C(1695835542514261123)},
	    {"9223372036854775.807", 0, INT64_MAX},
	    {"9223372036854775.808", -1, 0},
	    {"1e30", -1, 0},
	    {"abc", -1, 0},
	    {"1e", -1, 0},
	    {"", -1, 0},
	    {"1.2.3", -1, 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		int64_t ns = 0;
		int rc = tp_traceread_us_to_ns(c[i].s, strlen(c[i].s), &ns);
		if (rc != c[i].rc || (rc == 0 && ns != c[i].ns))
			fail_msg("'%s': rc %d ns %lld", c[i].s, rc, (long long)ns);
	}
}

static void test_quirks(void **state)
{
	(void)state;
	/* Numbers as strings, string pid, trailing commas, fractional µs, missing dur. */
	struct tp_profile *p = parse(
	    "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"1.5\",\"dur\":2.0015,\"pid\":\"p\",\"tid\":1,"
	    "\"args\":{\"n\":18446744073709551615,\"r\":0.5,\"b\":true,\"o\":{\"x\":[1,2]},}},\n"
	    "{\"ph\":\"X\",\"name\":\"nodur\",\"ts\":10,\"pid\":\"p\",\"tid\":\"1\"},\n"
	    "{\"ph\":\"E\",\"ts\":11,\"pid\":\"p\",\"tid\":1},\n"
	    "{\"ph\":\"B\",\"name\":\"open\",\"ts\":12,\"pid\":\"p\",\"tid\":1},\n"
	    "{\"ph\":\"i\",\"name\":\"bad\xff\\u00e9\\ud800x\",\"ts\":13,\"pid\":\"p\",\"tid\":1},"
	    "\n"
	    "{\"ph\":\"Z\",\"ts\":13},{\"name\":\"noph\"},\n"
	    "]",
	    TP_OK, NULL);
	assert_int_equal(p->num_tracks, 1); /* tid 1 and "1" are one thread */
	const struct tp_track *at = NULL, *ndt = NULL, *opt = NULL;
	const struct tp_slice *a = find_slice(p, "a", &at);
	assert_int_equal(a->start_ns, 0);
	assert_int_equal(tp_slice_end(at, a), 2002); /* 2001.5 ns rounds half up */
	assert_int_equal(base_ns(p), 1500);
	const struct tp_arg *n = tp_args_find(p, a->args, tp_profile_find_str(p, "n"));
	assert_non_null(n);
	assert_int_equal(n->type, TP_ARG_UINT);
	assert_true(n->v.u == UINT64_MAX);
	assert_string_equal(arg_str(p, a, "o"), "{\"x\":[1,2]}");
	const struct tp_slice *nd = find_slice(p, "nodur", &ndt);
	assert_int_equal(tp_slice_end(ndt, nd), nd->start_ns);
	const struct tp_slice *op = find_slice(p, "open", &opt);
	assert_int_equal(tp_slice_end(opt, op), 13000 - 1500); /* closed at the last timestamp */
	find_slice(p, "bad\xEF\xBF\xBD\xC3\xA9\xEF\xBF\xBDx", NULL);
	assert_true(has_note(p, "1 'E' events without a matching 'B'"));
	assert_true(has_note(p, "1 'B' events never closed"));
	assert_true(has_note(p, "1 'X' events without a usable dur"));
	assert_true(has_note(p, "2 invalid UTF-8"));
	assert_true(has_note(p, "1 events of unsupported phases"));
	assert_true(has_note(p, "1 events without a phase"));
	tp_profile_free(p);

	/* Async pairs with ids past INT64_MAX and nesting by id; counters with string values. */
	p = parse(
	    "{\"traceEvents\":[\n"
	    "{\"ph\":\"b\",\"cat\":\"c\",\"name\":\"x\",\"id\":18446744073709551615,\"ts\":1,"
	    "\"pid\":1},\n"
	    "{\"ph\":\"b\",\"cat\":\"c\",\"name\":\"x\",\"id\":18446744073709551614,\"ts\":2,"
	    "\"pid\":1},\n"
	    "{\"ph\":\"e\",\"cat\":\"c\",\"name\":\"x\",\"id\":18446744073709551615,\"ts\":5,"
	    "\"pid\":1},\n"
	    "{\"ph\":\"e\",\"cat\":\"c\",\"name\":\"x\",\"id\":18446744073709551614,\"ts\":3,"
	    "\"pid\":1},\n"
	    "{\"ph\":\"C\",\"name\":\"mem\",\"ts\":4,\"pid\":1,\"args\":{\"used\":\"12.5\","
	    "\"free\":3}},\n"
	    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"gpu<0>\"}}\n"
	    "],\"displayTimeUnit\":\"ns\"}",
	    TP_OK, NULL);
	assert_int_equal(count_type(p, "async"), 2);
	assert_int_equal(p->num_counters, 2);
	assert_string_equal(tp_str(p, p->counters[0].name), "mem used");
	assert_true(p->counters[0].samples[0].value == 12.5);
	assert_string_equal(tp_str(p, p->devices[0].name), "gpu<0>");
	uint32_t async = tp_profile_find_str(p, "async");
	const struct tp_track *t = &p->tracks[0];
	assert_int_equal(t->count, 2);
	assert_true(tp_slice_type(t, &t->slices[0]) == async &&
	            tp_slice_end(t, &t->slices[0]) == 4000);
	assert_true(t->slices[1].start_ns == 1000 && tp_slice_end(t, &t->slices[1]) == 2000);
	tp_profile_free(p);
}

static void test_rejects(void **state)
{
	(void)state;
	parse("{\"foo\":[1,2]}", TP_EFORMAT,
	      "t.json@0xc: not a Chrome trace: the object has no \"traceEvents\" array");
	parse("  [1,2]", TP_EFORMAT, "t.json@0x3: expected a trace event object, found '1'");
	parse("[{\"ph\":X}]", TP_EFORMAT,
	      "t.json@0x7: bad JSON in trace event: unexpected character");
	parse("[{\"ph\":\"X\",\"ts\":1,\"args\":{\"a\" 1}}]", TP_EFORMAT,
	      "t.json@0x1e: bad JSON in trace event: expected ':' after a member name");
	parse("hello", TP_EFORMAT, "t.json@0x0: not a Chrome trace: expected '[' or '{'");
	parse("{\"traceEvents\":{}}", TP_EFORMAT, "t.json@0xf: \"traceEvents\" is not an array");
	parse("[]", TP_EFORMAT,
	      "t.json@0x2: no trace events (0 read, none with a usable phase and time)");
	parse("[{\"ph\":\"i\",\"ts\":-9000000000000000},{\"ph\":\"i\",\"ts\":9000000000000000}]",
	      TP_ERANGE,
	      "t.json@0x44: timestamps span more than 2^63 ns (-9000000000000000000 .. "
	      "9000000000000000000 ns)");
	parse("[{\"ph\":\"X\",\"name\":\"\\q\",\"ts\":1}]", TP_EFORMAT,
	      "t.json@0x1: bad string escape in trace event");
}

/* Cut a small trace at every length: TP_OK with a truncation note or TP_EFORMAT, never
 * anything else (and no leak or overread under ASan). */
static void test_truncation(void **state)
{
	(void)state;
	const char *full = "{\"otherData\":{\"v\":\"1\"},\"traceEvents\":[{\"ph\":\"B\",\"name\":"
	                   "\"a\",\"ts\":1,\"pid\":1,\"tid\":2},"
	                   "{\"ph\":\"X\",\"name\":\"b\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":2,"
	                   "\"args\":{\"k\":\"v\"}},"
	                   "{\"ph\":\"E\",\"ts\":5,\"pid\":1,\"tid\":2}]}";
	size_t n = strlen(full), ok = 0;
	for (size_t cut = 0; cut <= n; cut++) {
		struct tp_profile *p = NULL;
		struct tp_diag d = {0};
		int rc = tp_traceread_parse((const uint8_t *)full, cut, "cut.json", &p, &d);
		if (rc == TP_OK) {
			ok++;
			if (cut < n - 2)
				assert_true(has_note(p, "trace truncated at byte"));
			tp_profile_free(p);
		} else {
			assert_int_equal(rc, TP_EFORMAT);
			assert_null(p);
			assert_true(strncmp(d.msg, "cut.json@0x", 11) == 0);
		}
	}
	/* Every cut after the first complete event reads it. */
	assert_true(ok >= n - strlen("{\"otherData\":{\"v\":\"1\"},\"traceEvents\":[{\"ph\":\"B\","
	                             "\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":2}"));
}

/* The streaming file reader gives what the in-memory parser gives, across chunk refills and
 * with one event larger than the read chunk (the buffer grows for it). */
static void test_stream(void **state)
{
	(void)state;
	char path[] = "/tmp/traceread_testXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "{\"traceEvents\":[");
	for (int i = 0; i < 40000; i++)
		fprintf(f,
		        "{\"ph\":\"X\",\"name\":\"op%d\",\"cat\":\"k\",\"ts\":%d.%03d,\"dur\":1,"
		        "\"pid\":7,\"tid\":%d},\n",
		        i % 17, i, i % 1000, i % 3);
	fprintf(f, "{\"ph\":\"X\",\"name\":\"big\",\"ts\":1,\"dur\":1,\"pid\":7,\"tid\":0,\"args\":"
	           "{\"s\":\"");
	for (int i = 0; i < 1500000; i++)
		fputc('a' + i % 26, f);
	fprintf(f, "\"}}]}");
	fclose(f);
	struct tp_profile *p = NULL, *q = NULL;
	struct tp_diag d = {0};
	if (tp_traceread_read(path, &p, &d))
		fail_msg("%s", d.msg);
	size_t n = 0;
	char *text = tp_test_slurp(path, &n);
	assert_non_null(text);
	if (tp_traceread_parse((const uint8_t *)text, n, path, &q, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(tp_profile_slice_count(p), 40001);
	assert_int_equal(tp_profile_slice_count(q), 40001);
	assert_int_equal(p->num_tracks, q->num_tracks);
	for (size_t t = 0; t < p->num_tracks; t++) {
		assert_int_equal(p->tracks[t].count, q->tracks[t].count);
		for (size_t k = 0; k < p->tracks[t].count; k++) {
			assert_int_equal(p->tracks[t].slices[k].start_ns,
			                 q->tracks[t].slices[k].start_ns);
			assert_string_equal(
			    tp_str(p, tp_slice_name(&p->tracks[t], &p->tracks[t].slices[k])),
			    tp_str(q, tp_slice_name(&q->tracks[t], &q->tracks[t].slices[k])));
		}
	}
	/* The first "op16" in track order is on tid 0: event 33 at 33.033 µs (base 0). */
	const struct tp_slice *s = find_slice(p, "op16", NULL);
	assert_int_equal(s->start_ns, 33033);
	free(text);
	tp_profile_free(p);
	tp_profile_free(q);
	unlink(path);
}

static const char *oom_text =
    "{\"traceEvents\":[{\"ph\":\"B\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":2,\"args\":{\"x\":1}"
    "},"
    "{\"ph\":\"X\",\"name\":\"b\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":2,\"args\":{\"op_name\":"
    "\"Conv\"}},"
    "{\"ph\":\"b\",\"cat\":\"c\",\"id\":1,\"ts\":2,\"pid\":1},{\"ph\":\"e\",\"cat\":\"c\",\"id\":1,"
    "\"ts\":3,\"pid\":1},"
    "{\"ph\":\"C\",\"name\":\"c\",\"ts\":3,\"pid\":1,\"args\":{\"v\":1}},"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"main\"}},"
    "{\"ph\":\"E\",\"ts\":5,\"pid\":1,\"tid\":2}]}";

/* ---- gzip input ---- */

/* text[0..n) as one gzip member (malloc'd, *out bytes). */
static uint8_t *gzip_of(const void *text, size_t n, size_t *out)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
	                 Z_OK);
	size_t cap = deflateBound(&z, (uLong)n);
	uint8_t *b = malloc(cap);
	z.next_in = (Bytef *)(uintptr_t)text;
	z.avail_in = (uInt)n;
	z.next_out = b;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out = cap - z.avail_out;
	deflateEnd(&z);
	return b;
}

static struct tp_profile *parse_n(const void *data, size_t n, const char *name, int want,
                                  struct tp_diag *d)
{
	struct tp_profile *p = NULL;
	memset(d, 0, sizeof *d);
	int rc = tp_traceread_parse(data, n, name, &p, d);
	if (rc != want)
		fail_msg("%s: status %d (want %d): %s", name, rc, want, d->msg);
	if (rc != TP_OK)
		assert_null(p);
	return p;
}

/* gzip input reads as its text does (same slices, times and names); two members read as
 * their concatenation; an error in the JSON names the text's offset "(gunzipped)". */
static void test_gzip(void **state)
{
	(void)state;
	const char *text = oom_text;
	size_t n = strlen(text), gn;
	uint8_t *g = gzip_of(text, n, &gn);
	struct tp_diag d;
	struct tp_profile *p = parse_n(text, n, "t.json", TP_OK, &d);
	struct tp_profile *q = parse_n(g, gn, "t.json.gz", TP_OK, &d);
	assert_int_equal(tp_profile_slice_count(q), tp_profile_slice_count(p));
	assert_int_equal(q->num_tracks, p->num_tracks);
	assert_int_equal(q->num_counters, p->num_counters);
	assert_int_equal(base_ns(q), base_ns(p));
	assert_string_equal(tp_str(q, q->tracks[0].name), "main");
	tp_profile_free(q);
	/* The text cut in two, each half its own member. */
	size_t g1n, g2n;
	uint8_t *g1 = gzip_of(text, n / 2, &g1n), *g2 = gzip_of(text + n / 2, n - n / 2, &g2n);
	uint8_t *two = malloc(g1n + g2n);
	memcpy(two, g1, g1n);
	memcpy(two + g1n, g2, g2n);
	q = parse_n(two, g1n + g2n, "two.json.gz", TP_OK, &d);
	assert_int_equal(tp_profile_slice_count(q), tp_profile_slice_count(p));
	tp_profile_free(q);
	tp_profile_free(p);
	/* Bytes after the last member that are not another member are an error. */
	uint8_t *junk = malloc(gn + 4);
	memcpy(junk, g, gn);
	memcpy(junk + gn, "junk", 4);
	parse_n(junk, gn + 4, "junk.json.gz", TP_EFORMAT, &d);
	assert_non_null(strstr(d.msg, "junk.json.gz@0x"));
	assert_non_null(strstr(d.msg, "not another gzip member"));
	/* Bad JSON inside good gzip: the offset is the text's. */
	const char *bad =
	    "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"a\"},{\"ph\"]";
	size_t bn;
	uint8_t *gb = gzip_of(bad, strlen(bad), &bn);
	parse_n(gb, bn, "b.json.gz", TP_EFORMAT, &d);
	assert_string_equal(d.msg, "b.json.gz (gunzipped)@0x3b: bad JSON in trace event: "
	                           "expected ':' after a member name");
	free(gb);
	free(junk);
	free(two);
	free(g1);
	free(g2);
	free(g);
}

/* A gzip stream cut at any length is an error at an offset in the file, never a trace read
 * as far as it went; a changed byte is an error too (the deflate data or the CRC says so). */
static void test_gzip_damaged(void **state)
{
	(void)state;
	size_t n = strlen(oom_text), gn;
	uint8_t *g = gzip_of(oom_text, n, &gn);
	struct tp_diag d;
	for (size_t cut = 2; cut < gn; cut++) {
		uint8_t *b =
		    malloc(cut); /* a heap copy of its own: ASan sees a read past the cut */
		memcpy(b, g, cut);
		parse_n(b, cut, "cut.json.gz", TP_EFORMAT, &d);
		if (!strstr(d.msg, "cut.json.gz@0x") || !strstr(d.msg, "gzip data cut short"))
			fail_msg("cut at %zu: %s", cut, d.msg);
		free(b);
	}
	/* Past the 10-byte header; only the unused bits of the last deflate byte may change
	 * and still read as the same trace. */
	int corrupt = 0;
	for (size_t at = 10; at < gn; at++) {
		g[at] ^= 0x20;
		struct tp_profile *p = NULL;
		memset(&d, 0, sizeof d);
		int rc = tp_traceread_parse(g, gn, "flip.json.gz", &p, &d);
		if (rc == TP_OK)
			assert_int_equal(tp_profile_slice_count(p), 3); /* B/E, X, b/e */
		else
			assert_int_equal(rc, TP_EFORMAT);
		corrupt += strstr(d.msg, "gzip data corrupt") != NULL;
		tp_profile_free(p);
		g[at] ^= 0x20;
	}
	assert_true(corrupt > (int)(gn - 10) / 2);
	free(g);
}

/* Members of 1 MiB of white space each, 1 KiB compressed: the reader stops at the bound on the
 * inflated size (64 MiB + 256 times the compressed bytes), at an offset in the file. */
static void test_gzip_bomb(void **state)
{
	(void)state;
	size_t mib = 1 << 20, one, open_n;
	char *spaces = malloc(mib);
	memset(spaces, ' ', mib);
	uint8_t *m = gzip_of(spaces, mib, &one), *o = gzip_of("[", 1, &open_n);
	assert_true(one < 4096);
	size_t count = 200, n = open_n + count * one;
	uint8_t *b = malloc(n);
	memcpy(b, o, open_n);
	for (size_t i = 0; i < count; i++)
		memcpy(b + open_n + i * one, m, one);
	struct tp_diag d;
	parse_n(b, n, "bomb.json.gz", TP_EFORMAT, &d);
	assert_non_null(strstr(d.msg, "bomb.json.gz@0x"));
	assert_non_null(strstr(d.msg, "refusing a decompression bomb"));
	/* Below the bound: 20 such members (20 MiB) read, and hold no event. */
	parse_n(b, open_n + 20 * one, "ok.json.gz", TP_EFORMAT, &d);
	assert_non_null(strstr(d.msg, "trace truncated before its first complete event"));
	free(b);
	free(m);
	free(o);
	free(spaces);
}

/* The real H200 traces, gzip'd as their profilers wrote them: the file reader inflates them
 * and reads what their text holds; the probe looks through the gzip. */
static void test_gzip_real(void **state)
{
	(void)state;
	static const char *const names[] = {"ort_resnet18_cpu_profile.json.gz",
	                                    "torch_bert_base_fp16_infer.pt.trace.json.gz",
	                                    "torch_resnet50_bf16cl_bs64.pt.trace.json.gz",
	                                    "torch_resnet50_fp32_bs64.pt.trace.json.gz"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/testdata/traces/h200/%s", shared_dir(), names[i]);
		if (access(path, R_OK) != 0) {
			printf("SKIPPED: %s is absent\n", path);
			continue;
		}
		assert_true(tp_traceread_probe(path));
		struct tp_profile *p = NULL, *q = NULL;
		struct tp_diag d = {0};
		if (tp_traceread_read(path, &p, &d))
			fail_msg("%s", d.msg);
		/* The text, inflated here with zlib's own gz reader. */
		gzFile gf = gzopen(path, "rb");
		assert_non_null(gf);
		size_t n = 0, cap = 1 << 20;
		char *text = malloc(cap);
		int got;
		while ((got = gzread(gf, text + n, (unsigned)(cap - n))) > 0)
			if ((n += (size_t)got) == cap)
				text = realloc(text, cap *= 2);
		gzclose(gf);
		q = parse_n(text, n, names[i], TP_OK, &d);
		assert_true(tp_profile_slice_count(p) > 200);
		assert_int_equal(tp_profile_slice_count(p), tp_profile_slice_count(q));
		assert_int_equal(p->num_tracks, q->num_tracks);
		assert_int_equal(p->num_flows, q->num_flows);
		assert_int_equal(base_ns(p), base_ns(q));
		free(text);
		tp_profile_free(p);
		tp_profile_free(q);
	}
}

/* What the probe says of files that are not traces. */
static void test_sniff(void **state)
{
	(void)state;
	char path[] = "/tmp/traceread_sniffXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	char why[200];
	size_t gn;
	uint8_t *g = gzip_of("PK\003\004", 4, &gn);
	struct {
		const void *data;
		size_t n;
		int yes;
		const char *why;
	} c[] = {
	    {"", 0, 0, "it is empty"},
	    {"\x7f"
	     "ELF",
	     4, 0, "it starts with byte 0x7f, not '[' or '{'"},
	    {"{\"a\":1}", 7, 0, "it is a JSON object without \"traceEvents\" in its first 64 KiB"},
	    {g, gn, 0, "it is gzip data, and the text it holds starts with 'P', not '[' or '{'"},
	    {"\x1f\x8b\x07\x00garbage", 11, 0, "it is gzip data that does not inflate: "},
	    {" [", 2, 1, NULL},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(pwrite(fd, c[i].data, c[i].n, 0), (ssize_t)c[i].n);
		why[0] = 0;
		assert_int_equal(tp_traceread_sniff(path, why, sizeof why), c[i].yes);
		if (c[i].why && strncmp(why, c[i].why, strlen(c[i].why)) != 0)
			fail_msg("case %zu: \"%s\", want \"%s\"", i, why, c[i].why);
	}
	close(fd);
	unlink(path);
	free(g);
}

struct oom_input {
	const uint8_t *data;
	size_t n;
};

static int oom_run(void *ctx, struct tp_diag *d)
{
	const struct oom_input *in = ctx;
	struct tp_profile *p = NULL;
	int rc = tp_traceread_parse(in->data, in->n, "oom.json", &p, d);
	if (rc == TP_OK) {
		assert_string_equal(tp_str(p, p->tracks[0].name), "main");
		tp_profile_free(p);
	} else
		assert_null(p);
	return rc;
}

static void test_oom(void **state)
{
	(void)state;
	struct oom_input plain = {(const uint8_t *)oom_text, strlen(oom_text)}, gz;
	tp_test_oom_sweep(oom_run, &plain, NULL, 2000);
	/* The same through the inflater (zlib allocates through tp_malloc too). */
	uint8_t *g = gzip_of(oom_text, strlen(oom_text), &gz.n);
	gz.data = g;
	tp_test_oom_sweep(oom_run, &gz, NULL, 2000);
	free(g);
}

/* --trace_file alignment, tail path (sophgo-cdm.md §10 step 2) on a device profile built
 * here with the cdm reader's meta keys: the last PMU event must end tail_offset_ns before the
 * host saw disable_profile end. */
static void test_merge_tail(void **state)
{
	(void)state;
	struct tp_profile *dev = tp_profile_new();
	dev->tiu_freq_mhz = 1000;
	int dv = tp_profile_add_device(dev, "BM1690 device 0", 0, 1);
	int tiu = tp_profile_add_track(dev, dv, 0, TP_TRACK_TIU, "TIU", 1000);
	struct tp_slice *x = tp_track_push(dev, tiu);
	x->start_ns = 0;
	tp_slice_set_end(dev, &dev->tracks[tiu], x, 5000);
	x = tp_track_push(dev, tiu);
	x->start_ns = 5000;
	tp_slice_set_end(dev, &dev->tracks[tiu], x, 9000);
	tp_profile_set_meta(dev, TP_META_TAIL_OFFSET_NS, "2000");
	tp_profile_set_meta(dev, TP_META_PMU_TAIL_CYCLE, "9000");
	assert_int_equal(tp_profile_finish(dev), TP_OK);
	struct tp_profile *host =
	    parse("{\"traceEvents\":[\n"
	          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"ts\":50,\"dur\":5,"
	          "\"pid\":1,\"tid\":1},\n"
	          "{\"ph\":\"X\",\"cat\":\"tpudnn\",\"name\":\"launch\",\"ts\":95,\"dur\":2,"
	          "\"pid\":1,\"tid\":1},\n"
	          "{\"ph\":\"X\",\"cat\":\"tpudnn\",\"name\":\"disable_profile\",\"ts\":100,"
	          "\"dur\":10,\"pid\":1,\"tid\":1},\n"
	          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"PyTorch Profiler "
	          "(0)\",\"ts\":50,\"dur\":70,\"pid\":1,\"tid\":1}]}",
	          TP_OK, NULL);
	struct tp_diag d = {0};
	assert_int_equal(tp_profile_merge_host(dev, host, "host.json", &d), TP_OK);
	tp_profile_free(host);
	/* Host time 0 = 50 µs; disable_profile ends at 60 µs on the merged axis, so the last PMU
	 * event ends at 58 µs and device time 0 is at 58 - 9 = 49 µs. */
	assert_string_equal(tp_profile_get_meta(dev, "host_trace.alignment"), "tail");
	assert_string_equal(tp_profile_get_meta(dev, "host_trace.device_offset_ns"), "49000");
	const struct tp_track *t = &dev->tracks[tiu];
	assert_int_equal(t->slices[0].start_ns, 49000);
	assert_int_equal(tp_slice_end(t, &t->slices[1]), 58000);
	const struct tp_track *tr = NULL;
	const struct tp_slice *s = find_slice(dev, "aten::add", &tr);
	assert_int_equal(s->start_ns, 0);
	assert_string_equal(tp_str(dev, tr->name), "cpu op");
	assert_int_equal(tr->kind, TP_TRACK_HOST);
	s = find_slice(dev, "launch", &tr);
	assert_int_equal(s->start_ns, 45000);
	assert_string_equal(tp_str(dev, tr->name), "tpudnn op");
	assert_int_equal(tp_profile_find_str(dev, "disable_profile"), 0); /* dropped */
	assert_int_equal(tp_profile_find_str(dev, "PyTorch Profiler (0)"), 0);
	assert_true(has_note(dev, "aligned by disable_profile's end minus tail_offset_ns"));
	tp_profile_free(dev);
}

#include "tp_test_main.h"
