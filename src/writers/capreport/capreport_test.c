/*
 * capreport_test.c — unit tests for the capture summaries: summary.json and summary.md of
 * a small capture built in code, compared with the reviewed goldens under
 * tests/golden/capreport_small/ (TP_UPDATE_GOLDEN=1 rewrites them; review the diff), the
 * JSON parsed back with cJSON and its statistics checked against values worked out by hand,
 * Markdown escaping, and the summary.md output entry (captures only).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h> /* after the three headers it needs */

#include "model/argkeys.h"
#include "testutil.h"
#include "writers/capreport/capreport.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Appends a slice of `type` named `name` spanning [start, start + dur] with argument set args
 * to track tr. */
static void push_slice(struct tp_profile *p, int tr, const char *type, const char *name,
                       int64_t start, int64_t dur, uint32_t args)
{
	struct tp_slice *s = tp_track_push(p, tr);
	s->start_ns = start;
	tp_slice_set_end(p, &p->tracks[tr], s, start + dur);
	tp_slice_set_type(p, &p->tracks[tr], s, tp_profile_str(p, type));
	tp_slice_set_name(p, &p->tracks[tr], s, tp_profile_str(p, name));
	s->args = args;
}

static void op(struct tp_profile *p, int tr, int64_t *t, const char *name, const char *type,
               int64_t step, int warm, int64_t dur, const char *outs, const char *oshapes,
               const char *odt, uint64_t bytes)
{
	tp_args_begin(p);
	tp_args_add_str(p, TP_CAP_KEY_OP_TYPE, type);
	tp_args_add_int(p, TP_CAP_KEY_STEP, step);
	tp_args_add_int(p, TP_CAP_KEY_WARMUP, warm);
	tp_args_add_str(p, TP_CAP_KEY_OUTPUTS, outs);
	tp_args_add_str(p, TP_CAP_KEY_OUTPUT_SHAPES, oshapes);
	tp_args_add_str(p, TP_CAP_KEY_OUTPUT_DTYPES, odt);
	tp_args_add_uint(p, TP_CAP_KEY_BYTES, bytes);
	push_slice(p, tr, TP_CAP_TYPE_OP, name, *t, dur, tp_args_end(p));
	*t += dur + 10;
}

static void activity(struct tp_profile *p, int tr, int64_t *t, const char *name, int64_t step,
                     const char *meta, int64_t dur)
{
	tp_args_begin(p);
	tp_args_add_int(p, TP_CAP_KEY_STEP, step);
	tp_args_add_str(p, TP_CAP_KEY_META, meta);
	push_slice(p, tr, TP_CAP_TYPE_ACTIVITY, name, *t, dur, tp_args_end(p));
	*t += dur + 10;
}

/* One slice of type `type` (a mark, range or async range of capfile.h) with optional
 * category, cut flag and async begin/end threads (end -1: not written). */
static void misc(struct tp_profile *p, int tr, const char *type, const char *name, const char *cat,
                 int64_t start, int64_t dur, int cut, int64_t btid, int64_t etid)
{
	tp_args_begin(p);
	if (cat)
		tp_args_add_str(p, TP_CAP_KEY_CATEGORY, cat);
	if (cut)
		tp_args_add_int(p, TP_CAP_KEY_CUT, 1);
	if (strcmp(type, TP_CAP_TYPE_ASYNC) == 0) {
		tp_args_add_int(p, TP_CAP_KEY_BEGIN_TID, btid);
		tp_args_add_int(p, TP_CAP_KEY_END_TID, etid);
	}
	push_slice(p, tr, type, name, start, dur, tp_args_end(p));
}

/* Steps 0 (warm-up) .. 4; step latencies (ns) of the counted steps 1..4 come out as
 * 1 000 000 + 10 * step_extra; see the table in the test below. */
static struct tp_profile *build_capture(void)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->arch = TP_ARCH_CPU;
	p->source = tp_profile_str(p, "tpuprof-capture");
	tp_profile_set_meta(p, "process", "bert_mini");
	int dev = tp_profile_add_device(p, "bert_mini (pid 42)", 42, 0);
	int tr = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, "main", 0);
	int64_t t = 0;
	activity(p, tr, &t, "data prep", -1, "tokenise 3 sentences", 5000);
	/* Counted step durations: 2 000 000, 1 000 000, 4 000 000, 3 000 000 ns; the warm-up
	 * step is 9 000 000 ns and must not show in any statistic. */
	static const int64_t step_dur[5] = {9000000, 2000000, 1000000, 4000000, 3000000};
	for (int step = 0; step < 5; step++) {
		int warm = step == 0;
		int64_t start = t;
		tp_args_begin(p);
		tp_args_add_int(p, TP_CAP_KEY_STEP, step);
		tp_args_add_int(p, TP_CAP_KEY_WARMUP, warm);
		tp_args_add_str(p, TP_CAP_KEY_GRAPH, "bert");
		uint32_t args = tp_args_end(p);
		size_t idx = p->tracks[tr].count;
		struct tp_slice *s = tp_track_push(p, tr);
		tp_slice_set_type(p, &p->tracks[tr], s, tp_profile_str(p, TP_CAP_TYPE_STEP));
		tp_slice_set_name(p, &p->tracks[tr], s, tp_profile_str(p, "bert"));
		s->args = args;
		t += 10;
		op(p, tr, &t, "l0/qkv", "MatMul", step, warm, warm ? 500000 : 100000 * step, "qkv",
		   "8x768", "fp32", 24576);
		op(p, tr, &t, "l0/softmax", "Softmax", step, warm, 20000, "probs", "4x8x8", "fp32",
		   1024);
		/* The same operator twice in one step: merged in op_stats (count 2). */
		op(p, tr, &t, "l0/qkv", "MatMul", step, warm, 1000, "qkv", "8x768", "fp32", 24576);
		op(p, tr, &t, "a|b<script>", "Add", step, warm, 3000, "x;y", "8x?;1x2", "fp32;int8",
		   0);
		p->tracks[tr].slices[idx].start_ns = start;
		tp_slice_set_end(p, &p->tracks[tr], &p->tracks[tr].slices[idx],
		                 start + step_dur[step]);
		t = start + step_dur[step] + 10;
		activity(p, tr, &t, "postprocess", step, "top-1 | <b>", 2000 + step);
	}
	/* Marks and ranges on a second thread and an async lane (values for test_marks_ranges):
	 * range "load" (io): 1, 3, 2 us measured + one cut short (50 us, not measured);
	 * async "request": 10 us begun on 1 and ended on 2 (cross-thread), 30 us on 1 alone,
	 * one cut short (end -1); marks "tick" x3 (no category), "ckpt" (io) x1. */
	int w = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, "worker", 0);
	const char *R = TP_CAP_TYPE_RANGE, *A = TP_CAP_TYPE_ASYNC, *M = TP_CAP_TYPE_MARK;
	misc(p, w, M, "tick", NULL, 100, 0, 0, 0, 0);
	misc(p, w, R, "load", "io", 1000, 1000, 0, 0, 0);
	misc(p, w, M, "tick", NULL, 2500, 0, 0, 0, 0);
	misc(p, w, R, "load", "io", 3000, 3000, 0, 0, 0);
	misc(p, w, M, "ckpt", "io", 6500, 0, 0, 0, 0);
	misc(p, w, R, "load", "io", 7000, 2000, 0, 0, 0);
	misc(p, w, M, "tick", NULL, 9500, 0, 0, 0, 0);
	misc(p, w, R, "load", "io", 10000, 50000, 1, 0, 0);
	int lane = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, "async ranges", 0);
	misc(p, lane, A, "request", NULL, 1000, 10000, 0, 1, 2);
	misc(p, lane, A, "request", NULL, 20000, 30000, 0, 1, 1);
	misc(p, lane, A, "request", NULL, 60000, 70000, 1, 1, -1);
	tp_profile_note(p, "a note with *stars*");
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

static void check_golden(const struct tp_buf *b, const char *name)
{
	char rel[256];
	snprintf(rel, sizeof rel, "tests/golden/capreport_small/%s", name);
	tp_test_golden(b->data, b->len, rel);
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static int near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

/* The number under key k of object o must be want (to 1e-9); the message names the key. */
static void expect_num(const cJSON *o, const char *k, double want)
{
	double got = num(o, k);
	if (!near(got, want))
		fail_msg("\"%s\" is %.9g, want %.9g", k, got, want);
}

/* A latency or throughput statistics object: its min, mean, median, p99 and max. */
static void expect_stats(const cJSON *o, double min, double mean, double median, double p99,
                         double max)
{
	expect_num(o, "min", min);
	expect_num(o, "mean", mean);
	expect_num(o, "median", median);
	expect_num(o, "p99", p99);
	expect_num(o, "max", max);
}

/* One range_stats entry: its kind, executions, cut-short and cross-thread counts and total. */
static void expect_range(const cJSON *e, const char *kind, double count, double cut_short,
                         double cross_thread, double total_ms)
{
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "kind")->valuestring, kind);
	expect_num(e, "count", count);
	expect_num(e, "cut_short", cut_short);
	expect_num(e, "cross_thread", cross_thread);
	expect_num(e, "total_ms", total_ms);
}

/* Writes p's summary.json (md 0) or summary.md (md 1) into b, which it initialises. */
static void render(const struct tp_profile *p, int md, struct tp_buf *b)
{
	tp_buf_init(b);
	int st = md ? tp_capreport_write_md(p, NULL, b) : tp_capreport_write_json(p, NULL, b);
	assert_int_equal(st, TP_OK);
}

/* build_capture's profile, written as summary.json (md 0) or summary.md (md 1) into b. */
static struct tp_profile *rendered_capture(int md, struct tp_buf *b)
{
	struct tp_profile *p = build_capture();
	render(p, md, b);
	return p;
}

/* The JSON in b, parsed (the caller deletes it); fails the test when it does not parse. */
static cJSON *parsed(const struct tp_buf *b)
{
	cJSON *root = cJSON_Parse(b->data);
	assert_non_null(root);
	return root;
}

static void test_json(void **state)
{
	(void)state;
	struct tp_buf b;
	struct tp_profile *p = rendered_capture(0, &b);
	check_golden(&b, "summary.json");
	cJSON *root = parsed(&b);
	const cJSON *ov = cJSON_GetObjectItemCaseSensitive(root, "overall_stats");
	expect_num(ov, "steps", 5);
	expect_num(ov, "warmup_steps", 1);
	expect_num(ov, "counted_steps", 4);
	/* Counted latencies 1, 2, 3, 4 ms: mean 2.5, median 2.5, p99 = rank ceil(3.96) = 4. */
	const cJSON *lat = cJSON_GetObjectItemCaseSensitive(ov, "latency_ms");
	expect_stats(lat, 1.0, 2.5, 2.5, 4.0, 4.0);
	expect_num(ov, "counted_steps_time_ms", 10.0);
	/* Throughput at batch 1: 1000, 500, 333.333, 250 samples/s. */
	const cJSON *thr = cJSON_GetObjectItemCaseSensitive(ov, "throughput_samples_per_s");
	expect_num(thr, "min", 250.0);
	expect_num(thr, "max", 1000.0);
	expect_num(thr, "median", 416.667);
	expect_num(thr, "mean", 520.833);
	/* app_stats: "none" and the steps, each activity with duration and meta. */
	const cJSON *app = cJSON_GetObjectItemCaseSensitive(root, "app_stats");
	const cJSON *none = cJSON_GetObjectItemCaseSensitive(app, "none");
	const cJSON *prep = cJSON_GetObjectItemCaseSensitive(none, "data prep");
	expect_num(prep, "duration_ms", 0.005);
	const cJSON *s3 = cJSON_GetObjectItemCaseSensitive(app, "3");
	const cJSON *post = cJSON_GetObjectItemCaseSensitive(s3, "postprocess");
	expect_num(post, "duration_ms", 0.002003);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(post, "meta")->valuestring,
	                    "top-1 | <b>");
	/* op_stats: graph -> step -> host -> device -> node. */
	const cJSON *node = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(
	            cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(
	                    cJSON_GetObjectItemCaseSensitive(root, "op_stats"), "bert"),
	                "2"),
	            "localhost"),
	        "CPU"),
	    "l0/qkv");
	assert_non_null(node);
	expect_num(node, "duration_ms", 0.201); /* 200 000 + 1 000 ns */
	expect_num(node, "count", 2);
	expect_num(node, "total_bytes", 49152);
	const cJSON *out0 =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "output"), "0");
	const cJSON *shape = cJSON_GetObjectItemCaseSensitive(out0, "shape");
	assert_int_equal(cJSON_GetArraySize(shape), 2);
	assert_true(near(cJSON_GetArrayItem(shape, 1)->valuedouble, 768));
	/* A shape that is not all integers is kept as text. */
	const cJSON *odd = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(
	            cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(
	                    cJSON_GetObjectItemCaseSensitive(
	                        cJSON_GetObjectItemCaseSensitive(root, "op_stats"), "bert"),
	                    "1"),
	                "localhost"),
	            "CPU"),
	        "a|b<script>"),
	    "output");
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(odd, "0"), "shape")
	        ->valuestring,
	    "8x?");
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(odd, "1"), "type")
	        ->valuestring,
	    "int8");
	/* op_type_stats: MatMul counted executions = 2 per step x 4 steps. */
	const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "op_type_stats");
	const cJSON *first = cJSON_GetArrayItem(types, 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(first, "op_type")->valuestring,
	                    "MatMul");
	expect_num(first, "executions", 8);
	/* 100+200+300+400 us + 4 x 1 us = 1.004 ms of the 10 ms counted step time. */
	expect_num(first, "total_ms", 1.004);
	expect_num(first, "share_of_step_time_pct", 10.04);
	assert_null(strstr(b.data, "</script")); /* JSON stays safe inside HTML */
	cJSON_Delete(root);
	tp_buf_free(&b);
	tp_profile_free(p);
}

static const cJSON *find_named(const cJSON *arr, const char *name)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, arr)
	{
		if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, name) == 0)
			return e;
	}
	return NULL;
}

/* Marks and (async) ranges reach summary.json: counts, cut-short and cross-thread counts, and
 * latency statistics over the measured executions only (worked out in build_capture). */
static void test_marks_ranges(void **state)
{
	(void)state;
	struct tp_buf b;
	struct tp_profile *p = rendered_capture(0, &b);
	cJSON *root = parsed(&b);
	const cJSON *ov = cJSON_GetObjectItemCaseSensitive(root, "overall_stats");
	expect_num(ov, "marks", 4);
	expect_num(ov, "ranges", 4);
	expect_num(ov, "async_ranges", 3);
	expect_num(ov, "ranges_cut_short", 2);
	expect_num(ov, "scopes_cut_short", 0); /* steps/activities/operators only */
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "range_stats");
	assert_int_equal(cJSON_GetArraySize(rs), 2);
	/* Most total time first: request (40 us) before load (6 us). */
	const cJSON *req = cJSON_GetArrayItem(rs, 0), *load = cJSON_GetArrayItem(rs, 1);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(req, "name")->valuestring, "request");
	expect_range(req, "async", 3, 1, 1, 0.04);
	/* The median is the mean of the middle two of {10, 30} us. */
	expect_stats(cJSON_GetObjectItemCaseSensitive(req, "latency_ms"), 0.01, 0.02, 0.02, 0.03,
	             0.03);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(load, "category")->valuestring, "io");
	/* The cut 50 us is not in the total. */
	expect_range(load, "range", 4, 1, 0, 0.006);
	expect_stats(cJSON_GetObjectItemCaseSensitive(load, "latency_ms"), 0.001, 0.002, 0.002,
	             0.003, 0.003);
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "mark_stats");
	assert_int_equal(cJSON_GetArraySize(ms), 2);
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ms, 0), "name")->valuestring,
	    "tick"); /* most frequent first */
	expect_num(find_named(ms, "tick"), "count", 3);
	expect_num(find_named(ms, "ckpt"), "count", 1);
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(find_named(ms, "ckpt"), "category")->valuestring,
	    "io");
	cJSON_Delete(root);
	/* summary.md: the two tables. */
	tp_buf_free(&b);
	render(p, 1, &b);
	assert_non_null(strstr(b.data, "| async | request | - | 3 | 1 | 1 | 0.040000 | 0.020000 | "
	                               "0.020000 | 0.030000 | 0.010000 | 0.030000 |"));
	assert_non_null(strstr(b.data, "| range | load | io | 4 | 1 | 0 | 0.006000 |"));
	assert_non_null(strstr(b.data, "| tick | - | 3 |"));
	assert_non_null(
	    strstr(b.data, "| Marks / ranges / async ranges | 4 / 4 / 3 (2 cut short) |"));
	tp_buf_free(&b);
	tp_profile_free(p);
}

static void test_md(void **state)
{
	(void)state;
	struct tp_buf b;
	struct tp_profile *p = rendered_capture(1, &b);
	check_golden(&b, "summary.md");
	assert_non_null(strstr(b.data, "| Latency (ms) | 1.000000 | 2.500000 | 2.500000 | "
	                               "4.000000 | 4.000000 |"));
	assert_non_null(strstr(b.data, "| a\\|b&lt;script&gt; | Add |"));
	assert_null(strstr(b.data, "<script>"));
	tp_buf_free(&b);
	tp_profile_free(p);
}

/* Drops are counted once (records_dropped already includes the tracks' drops), and a step
 * cut short by the end of the capture is flagged and left out of the latency statistics. */
static void test_drops_and_cut(void **state)
{
	(void)state;
	struct tp_profile *p = build_capture();
	p->tracks[0].dropped = 7;
	p->stats.records_dropped = 7;
	/* A 1-second step that was still open at the dump time: it must not become the max. */
	tp_args_begin(p);
	tp_args_add_int(p, TP_CAP_KEY_STEP, 5);
	tp_args_add_int(p, TP_CAP_KEY_WARMUP, 0);
	tp_args_add_int(p, TP_CAP_KEY_CUT, 1);
	uint32_t args = tp_args_end(p);
	struct tp_slice *s = tp_track_push(p, 0);
	tp_slice_set_type(p, &p->tracks[0], s, tp_profile_str(p, TP_CAP_TYPE_STEP));
	tp_slice_set_name(p, &p->tracks[0], s, tp_profile_str(p, "bert"));
	s->args = args;
	s->start_ns = 100000000;
	tp_slice_set_end(p, &p->tracks[0], s, 1100000000);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_buf b;
	render(p, 1, &b);
	assert_non_null(strstr(b.data, "| Events dropped | 7 |"));
	assert_non_null(
	    strstr(b.data, "| Scopes cut short by the end of the capture (excluded) | 1 |"));
	assert_non_null(strstr(b.data, "| Latency (ms) | 1.000000 | 2.500000 | 2.500000 | "
	                               "4.000000 | 4.000000 |"));
	tp_buf_free(&b);
	render(p, 0, &b);
	assert_non_null(strstr(b.data, "\"records_dropped\": 7,"));
	assert_non_null(strstr(b.data, "\"scopes_cut_short\": 1,\n"));
	tp_buf_free(&b);
	tp_profile_free(p);
}

static void check_md(const char *in, const char *want)
{
	struct tp_buf b;
	tp_buf_init(&b);
	tp_md_cell(&b, in);
	assert_string_equal(b.len ? b.data : "", want);
	tp_buf_free(&b);
}

static void test_md_escaping(void **state)
{
	(void)state;
	check_md("plain name", "plain name");
	check_md("a|b", "a\\|b");
	check_md("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;");
	check_md("two\nlines\r\tx", "two lines  x");
	check_md("*bold* _it_ `code` [l](u) #h ~s~ !i \\", "\\*bold\\* \\_it\\_ \\`code\\` "
	                                                   "\\[l\\](u) \\#h \\~s\\~ \\!i \\\\");
	check_md("a&b", "a&amp;b");
}

/* The CLI's "summary-md" output (its registry entry) as far as this module is concerned. */
static const struct tp_output capmd_output = {
    .name = "summary-md", .file = "summary.md", .render = tp_capmd_render};

static void test_output_entry(void **state)
{
	(void)state;
	char dir[] = "/tmp/capreport_test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char md[sizeof dir + 16];
	snprintf(md, sizeof md, "%s/summary.md", dir);
	struct tp_out_opts o = {0};
	o.out_dir = dir;
	struct tp_diag d = {0};
	struct stat sb;
	/* Not a capture: nothing written. */
	struct tp_profile *p = build_capture();
	p->arch = TP_ARCH_BM1688;
	assert_int_equal(tp_output_write(&capmd_output, p, NULL, &o, &d), TP_OK);
	assert_int_equal(stat(md, &sb), -1);
	p->arch = TP_ARCH_CPU;
	assert_int_equal(tp_output_write(&capmd_output, p, NULL, &o, &d), TP_OK);
	size_t n;
	char *got = tp_test_slurp(md, &n);
	assert_non_null(got);
	struct tp_buf b;
	tp_buf_init(&b);
	tp_capreport_write_md(p, NULL, &b);
	assert_int_equal(n, b.len);
	assert_memory_equal(got, b.data, n);
	free(got);
	tp_buf_free(&b);
	/* An unwritable directory fails with an output error. */
	o.out_dir = "/nonexistent-dir/x";
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_output_write(&capmd_output, p, NULL, &o, &d), TP_EOUTPUT);
	tp_profile_free(p);
	unlink(md);
	rmdir(dir);
}

/* A capture profile of process "app" (pid 7) with two empty thread tracks named t0 and t1,
 * their indices in tr. */
static struct tp_profile *app_profile(const char *t0, const char *t1, int tr[2])
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->arch = TP_ARCH_CPU;
	int dev = tp_profile_add_device(p, "app (pid 7)", 7, 0);
	tr[0] = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, t0, 0);
	tr[1] = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, t1, 0);
	return p;
}

/* summary.json of p, parsed (cJSON_Delete it). */
static cJSON *json_of(const struct tp_profile *p)
{
	struct tp_buf b;
	render(p, 0, &b);
	cJSON *root = parsed(&b);
	tp_buf_free(&b);
	return root;
}

/* op_stats' node `name` under `graph` ("" = the first graph) and step key `step`, or NULL. */
static const cJSON *op_node(const cJSON *root, const char *graph, const char *step,
                            const char *name)
{
	const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "op_stats");
	const cJSON *g =
	    graph[0] ? cJSON_GetObjectItemCaseSensitive(ops, graph) : (ops ? ops->child : NULL);
	const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(g, step),
	                                     "localhost"),
	    "CPU");
	return cJSON_GetObjectItemCaseSensitive(cpu, name);
}

/* An operator on a worker thread, outside any step slice on its own track, belongs to the
 * step named by its step argument: op_stats files it under that step's graph. */
static void test_worker_thread_op(void **state)
{
	(void)state;
	int tr[2];
	struct tp_profile *p = app_profile("main", "worker", tr);
	int main_tr = tr[0], worker = tr[1];
	for (int step = 0; step < 3; step++) {
		tp_args_begin(p);
		tp_args_add_int(p, TP_CAP_KEY_STEP, step);
		tp_args_add_int(p, TP_CAP_KEY_WARMUP, 0);
		tp_args_add_str(p, TP_CAP_KEY_GRAPH, "g");
		uint32_t args = tp_args_end(p);
		struct tp_slice *s = tp_track_push(p, main_tr);
		s->start_ns = step * 1000;
		tp_slice_set_end(p, &p->tracks[main_tr], s, step * 1000 + 900);
		tp_slice_set_type(p, &p->tracks[main_tr], s, tp_profile_str(p, TP_CAP_TYPE_STEP));
		tp_slice_set_name(p, &p->tracks[main_tr], s, tp_profile_str(p, "g"));
		s->args = args;
		int64_t t = step * 1000 + 100;
		op(p, worker, &t, "conv", "Conv", step, 0, 200 + step, "y", "1x2", "fp32", 8);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	cJSON *root = json_of(p);
	const cJSON *conv = op_node(root, "g", "2", "conv");
	assert_non_null(conv);
	expect_num(conv, "duration_ms", 0.000202);
	assert_null(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(root, "op_stats"), "(no graph)"));
	cJSON_Delete(root);
	tp_profile_free(p);
}

/* Executions of one operator name in one step merge into one op_stats node however they
 * are spread over threads: durations, bytes and the count add up, and the node is described
 * (outputs) by its earliest execution even when a later-read thread holds it. */
static void test_op_stats_merge(void **state)
{
	(void)state;
	int tr[2];
	struct tp_profile *p = app_profile("a", "b", tr);
	int a = tr[0], b2 = tr[1];
	int64_t t = 500;
	op(p, a, &t, "mm", "MatMul", 3, 0, 100, "late", "1x1", "fp32", 10);
	op(p, a, &t, "other", "Add", 3, 0, 7, "o", "1", "fp32", 0);
	op(p, a, &t, "mm", "MatMul", 4, 0, 5, "next step", "2x2", "fp32", 1);
	t = 100; /* thread b, read second, ran "mm" of step 3 first */
	op(p, b2, &t, "mm", "MatMul", 3, 0, 20, "early", "3x3", "fp16", 30);
	t = 800;
	op(p, b2, &t, "mm", "MatMul", 3, 0, 3, "later still", "4x4", "fp32", 2);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	cJSON *root = json_of(p);
	const cJSON *mm = op_node(root, "", "3", "mm");
	assert_non_null(mm);
	expect_num(mm, "duration_ms", 0.000123);
	expect_num(mm, "total_bytes", 42);
	expect_num(mm, "count", 3);
	char *txt = cJSON_PrintUnformatted(mm);
	assert_non_null(strstr(txt, "early"));
	assert_null(strstr(txt, "late"));
	cJSON_free(txt);
	assert_non_null(op_node(root, "", "3", "other"));
	const cJSON *mm4 = op_node(root, "", "4", "mm");
	assert_non_null(mm4);
	expect_num(mm4, "duration_ms", 0.000005);
	cJSON_Delete(root);
	tp_profile_free(p);
}

/* What tp_capreport_stream_json hands over, collected; `fail_at` > 0 makes that call fail. */
struct sink {
	struct tp_buf got;
	int calls, fail_at;
	size_t max_piece;
};

static int sink_put(void *ctx, const char *bytes, size_t n)
{
	struct sink *k = ctx;
	if (++k->calls == k->fail_at)
		return -1;
	tp_buf_put(&k->got, bytes, n);
	if (k->calls > 1 && n > k->max_piece) /* the first holds the head: overall_stats */
		k->max_piece = n;
	return 0;
}

/* Streaming gives exactly summary.json's bytes, in pieces of about the flush size (one
 * entry past it at most, after the first, which holds the document's head), and stops with
 * TP_EOUTPUT when the sink fails. */
static void test_json_stream(void **state)
{
	(void)state;
	struct tp_profile *p = build_capture();
	struct tp_buf whole, rest;
	tp_buf_init(&whole);
	tp_buf_init(&rest);
	assert_int_equal(tp_capreport_write_json(p, NULL, &whole), TP_OK);
	struct sink k = {.calls = 0};
	tp_buf_init(&k.got);
	assert_int_equal(tp_capreport_stream_json(p, NULL, &rest, 256, sink_put, &k), TP_OK);
	assert_true(k.calls > 3);
	assert_true(k.max_piece < 256 + 512); /* flushed between entries, none is that long */
	assert_true(rest.len < whole.len);
	tp_buf_put(&k.got, rest.data, rest.len);
	assert_int_equal(k.got.len, whole.len);
	assert_memory_equal(k.got.data, whole.data, whole.len);
	tp_buf_free(&k.got);
	tp_buf_free(&rest);

	struct sink bad = {.fail_at = 2};
	tp_buf_init(&bad.got);
	tp_buf_init(&rest);
	assert_int_equal(tp_capreport_stream_json(p, NULL, &rest, 256, sink_put, &bad), TP_EOUTPUT);
	assert_int_equal(bad.calls, 2); /* nothing more was handed over after the failure */
	tp_buf_free(&bad.got);
	tp_buf_free(&rest);
	tp_buf_free(&whole);
	tp_profile_free(p);
}

static void test_empty_capture(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	p->arch = TP_ARCH_CPU;
	tp_profile_finish(p);
	struct tp_buf b;
	render(p, 0, &b);
	cJSON *root = parsed(&b);
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(root, "overall_stats"), "latency_ms")));
	cJSON_Delete(root);
	tp_buf_free(&b);
	render(p, 1, &b);
	assert_non_null(strstr(b.data, "No operators were recorded."));
	tp_buf_free(&b);
	tp_profile_free(p);
}

/* One summary as tp_test_oom_sweep calls it: ctx is {profile, which (0 JSON, 1 Markdown)}. */
struct oom_run {
	const struct tp_profile *p;
	int which;
};

static int write_summary(void *ctx, struct tp_diag *d)
{
	const struct oom_run *w = ctx;
	struct tp_buf b;
	tp_buf_init(&b);
	int st = w->which ? tp_capreport_write_md(w->p, NULL, &b)
	                  : tp_capreport_write_json(w->p, NULL, &b);
	tp_buf_free(&b);
	return st ? tp_diag_set(d, st, "summary: %s", tp_strerror(st)) : TP_OK;
}

static void test_oom(void **state)
{
	(void)state;
	struct tp_profile *p = build_capture();
	for (int which = 0; which < 2; which++) {
		struct oom_run w = {p, which};
		assert_true(tp_test_oom_sweep(write_summary, &w, NULL, 400) > 0);
	}
	tp_profile_free(p);
}

#include "tp_test_main.h"
