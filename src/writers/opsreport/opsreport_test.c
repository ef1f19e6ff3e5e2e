/*
 * opsreport_test.c — unit tests for the operator table (grouping, warm-up exclusion, min /
 * mean / max / median / p99), the sparse ratio file parser and lookup, CSV escaping, and
 * the ops.csv writer against the reviewed golden tests/golden/opscsv_small/ops.csv.
 * Set TP_UPDATE_GOLDEN=1 to rewrite the golden (then review the diff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h> /* after the three headers it needs */

#include "testutil.h"
#include "writers/opsreport/opsreport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a tiny capture built in code -------------------------------------------------------- */

struct op_spec {
	const char *name, *type, *post;
	const char *in, *in_shapes, *in_dtypes, *out, *out_shapes, *out_dtypes;
	const char *weight;
	double sparsity; /* < 0: no argument */
	int64_t dur[4];  /* per step; 0 = not executed in that step */
};

/* Step 0 is warm-up. Names exercise the CSV escaping: a leading '=', quotes, a comma, a
 * newline, a leading '+' and '@', a post op starting with '-'. */
/* clang-format off */
static const struct op_spec small_ops[] = {
	{"embed", "Gather", "", "ids;table", "1x8;1000x64", "int32;fp32", "x0", "1x8x64", "fp32",
	 "", -1, {9000, 1000, 2000, 3000}},
	{"layer0/q_proj", "MatMul", "", "x0;wq", "8x256;256x256", "fp32;fp32", "q", "8x256",
	 "fp32", "256x256", 0.125, {50000, 10000, 10000, 13000}},
	{"=HYPERLINK(\"http://x\")", "Softmax", "", "q", "8x256", "fp32", "p", "8x256", "fp32",
	 "", -1, {500, 500, 500, 500}},
	{"ffn \"up\",1\nx", "MatMul", "gelu", "p;w1", "8x256;1024x256", "fp32;fp32", "h", "8x1024",
	 "fp32", "1024x256", 0.75, {20000, 20001, 20002, 20003}},
	{"layer0/out", "MatMul", "", "h;wo", "8x1024;256x1000", "fp32;fp32", "y", "8x1000", "fp32",
	 "256x1000", 0.0, {4000, 4000, 4000, 4000}},
	{"+attr", "Add", "-relu", "@in;b", "8x1000;8x1000", "fp32;fp32", "z", "8x1000", "fp32",
	 "", -1, {100, 200, 300, 400}},
	{"odd_fc", "MatMul", "", "z;w6", "8x6;6x4", "fp32;fp32", "o", "8x4", "fp32", "6x4", 0.0,
	 {700, 700, 700, 700}},
	{"warm_only", "Init", "", "", "", "", "cache", "1", "fp32", "", -1, {300, 0, 0, 0}},
};
/* clang-format on */
#define NSMALL (sizeof small_ops / sizeof small_ops[0])

enum warm_mode {
	WARM_ON_OP,   /* ops carry TP_CAP_KEY_WARMUP */
	WARM_BY_STEP, /* ops carry TP_CAP_KEY_STEP only; steps carry the flag */
	WARM_NESTED,  /* ops carry nothing; the enclosing step decides */
};

static struct tp_profile *build_small(enum warm_mode mode, int nsteps, int first_warm)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	int dev = tp_profile_add_device(p, "bert (pid 1)", 1, 0);
	int tr = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, "main", 0);
	int64_t t = 1000;
	for (int step = 0; step < nsteps; step++) {
		int warm = step < first_warm;
		struct tp_slice *s = tp_track_push(p, tr);
		s->start_ns = t;
		tp_slice_set_type(p, &p->tracks[tr], s, tp_profile_str(p, TP_CAP_TYPE_STEP));
		tp_slice_set_name(p, &p->tracks[tr], s, tp_profile_str(p, "bert"));
		tp_args_begin(p);
		tp_args_add_int(p, TP_CAP_KEY_STEP, step);
		tp_args_add_int(p, TP_CAP_KEY_WARMUP, warm);
		s->args = tp_args_end(p);
		size_t step_idx = p->tracks[tr].count - 1;
		t += 10;
		for (size_t i = 0; i < NSMALL; i++) {
			const struct op_spec *o = &small_ops[i];
			int64_t d = o->dur[step < 4 ? step : 3];
			if (!d)
				continue;
			tp_args_begin(p);
			tp_args_add_str(p, TP_CAP_KEY_OP_TYPE, o->type);
			tp_args_add_str(p, TP_CAP_KEY_POST_OP, o->post);
			if (mode != WARM_NESTED)
				tp_args_add_int(p, TP_CAP_KEY_STEP, step);
			if (mode == WARM_ON_OP)
				tp_args_add_int(p, TP_CAP_KEY_WARMUP, warm);
			tp_args_add_str(p, TP_CAP_KEY_INPUTS, o->in);
			tp_args_add_str(p, TP_CAP_KEY_INPUT_SHAPES, o->in_shapes);
			tp_args_add_str(p, TP_CAP_KEY_INPUT_DTYPES, o->in_dtypes);
			tp_args_add_str(p, TP_CAP_KEY_OUTPUTS, o->out);
			tp_args_add_str(p, TP_CAP_KEY_OUTPUT_SHAPES, o->out_shapes);
			tp_args_add_str(p, TP_CAP_KEY_OUTPUT_DTYPES, o->out_dtypes);
			tp_args_add_str(p, TP_CAP_KEY_WEIGHT_SHAPE, o->weight);
			if (o->sparsity >= 0)
				tp_args_add_real(p, TP_CAP_KEY_WEIGHT_SPARSITY, o->sparsity);
			tp_args_add_uint(p, TP_CAP_KEY_BYTES, 1024 * (i + 1));
			tp_args_add_uint(p, TP_CAP_KEY_FLOPS, 1000 * (i + 1));
			uint32_t args = tp_args_end(p);
			struct tp_slice *op = tp_track_push(p, tr);
			op->start_ns = t;
			tp_slice_set_end(p, &p->tracks[tr], op, t + d);
			tp_slice_set_type(p, &p->tracks[tr], op, tp_profile_str(p, TP_CAP_TYPE_OP));
			tp_slice_set_name(p, &p->tracks[tr], op, tp_profile_str(p, o->name));
			op->args = args;
			t += d + 5;
		}
		tp_slice_set_end(p, &p->tracks[tr], &p->tracks[tr].slices[step_idx], t);
		t += 100;
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

static const struct tp_op_row *row_named(const struct tp_profile *p, const struct tp_op_table *t,
                                         const char *name)
{
	for (size_t i = 0; i < t->count; i++)
		if (strcmp(tp_str(p, t->rows[i].name), name) == 0)
			return &t->rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

/* ---- operator table ---------------------------------------------------------------------- */

static void check_small_table(enum warm_mode mode)
{
	struct tp_profile *p = build_small(mode, 4, 1);
	struct tp_op_table t;
	assert_int_equal(tp_op_table_build(p, &t), TP_OK);
	assert_int_equal(t.count, NSMALL);
	assert_int_equal(t.executions, 4 * NSMALL - 3);
	assert_int_equal(t.warmup_executions, NSMALL);
	assert_false(t.counted_warmup);
	/* Row order is first execution order. */
	for (size_t i = 0; i < NSMALL; i++)
		assert_string_equal(tp_str(p, t.rows[i].name), small_ops[i].name);
	const struct tp_op_row *q = row_named(p, &t, "layer0/q_proj");
	assert_int_equal(q->runs, 3);
	assert_int_equal(q->runs_warmup, 1);
	assert_int_equal(q->min_ns, 10000); /* the 50 000 ns warm-up run is excluded */
	assert_int_equal(q->max_ns, 13000);
	assert_int_equal(q->median_ns, 10000);
	assert_int_equal(q->p99_ns, 13000);
	assert_true(q->mean_ns == 11000.0);
	assert_int_equal(q->total_ns, 33000);
	assert_true(q->sparse_eligible);
	assert_int_equal(q->bytes, 2048);
	assert_int_equal(q->flops, 2000);
	const struct tp_op_row *w = row_named(p, &t, "warm_only");
	assert_int_equal(w->runs, 0);
	assert_int_equal(w->runs_warmup, 1);
	assert_int_equal(w->min_ns, 0);
	assert_false(row_named(p, &t, "odd_fc")->sparse_eligible); /* 6 % 4 != 0 */
	assert_false(row_named(p, &t, "embed")->sparse_eligible);  /* no weight */
	/* The describing execution is the first counted one, not the warm-up one. */
	const struct tp_arg *st = tp_op_arg(p, q->args, TP_CAP_KEY_STEP);
	if (mode != WARM_NESTED) {
		assert_non_null(st);
		assert_int_equal(st->v.i, 1);
	}
	const struct tp_track *dt = NULL;
	for (size_t i = 0; i < p->num_tracks; i++)
		if (q->desc >= p->tracks[i].slices &&
		    q->desc < p->tracks[i].slices + p->tracks[i].count)
			dt = &p->tracks[i];
	assert_non_null(dt);
	assert_int_equal(tp_slice_dur(dt, q->desc), 10000);
	tp_op_table_free(&t);
	tp_op_table_free(&t); /* idempotent */
	tp_profile_free(p);
}

static void test_table_warm_on_op(void **state)
{
	(void)state;
	check_small_table(WARM_ON_OP);
}

static void test_table_warm_by_step(void **state)
{
	(void)state;
	check_small_table(WARM_BY_STEP);
}

static void test_table_warm_nested(void **state)
{
	(void)state;
	check_small_table(WARM_NESTED);
}

static void test_table_all_warmup_counts_all(void **state)
{
	(void)state;
	struct tp_profile *p = build_small(WARM_ON_OP, 2, 2);
	struct tp_op_table t;
	assert_int_equal(tp_op_table_build(p, &t), TP_OK);
	assert_true(t.counted_warmup);
	const struct tp_op_row *q = row_named(p, &t, "layer0/q_proj");
	assert_int_equal(q->runs, 2);
	assert_int_equal(q->max_ns, 50000);
	assert_true(q->mean_ns == 30000.0);
	tp_op_table_free(&t);
	tp_profile_free(p);
}

static void test_table_no_ops(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	int dev = tp_profile_add_device(p, "d", 0, 1);
	int tr = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, "TIU", 900);
	struct tp_slice *s = tp_track_push(p, tr);
	tp_slice_set_end(p, &p->tracks[tr], s, 5);
	tp_slice_set_type(p, &p->tracks[tr], s, tp_profile_str(p, "sCONV"));
	tp_profile_finish(p);
	struct tp_op_table t;
	assert_int_equal(tp_op_table_build(p, &t), TP_OK);
	assert_int_equal(t.count, 0);
	assert_null(t.rows);
	tp_profile_free(p);
}

/* One operator spread over five threads, so its executions reach the table as one run per
 * track: the statistics cover all of them, the row starts at the earliest execution (a
 * warm-up one here), and it is described by the earliest counted execution, the lower track
 * winning a tie at the same start. */
static void test_table_many_threads(void **state)
{
	(void)state;
	struct ex {
		int track;
		int64_t start, dur;
		int warm;
		const char *name;
	};
	static const struct ex v[] = {
	    {0, 300, 10, 0, "mm"}, {0, 900, 50, 0, "mm"}, {1, 200, 20, 0, "mm"},
	    {1, 700, 5, 0, "mm"},  {2, 100, 7, 1, "mm"},  {2, 150, 4, 0, "add"},
	    {3, 200, 30, 0, "mm"}, {4, 250, 1, 0, "mm"},  {4, 260, 2, 0, "mm"},
	    {4, 1000, 3, 0, "mm"},
	};
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	int dev = tp_profile_add_device(p, "app (pid 1)", 1, 0);
	int tr[5];
	for (int k = 0; k < 5; k++) {
		char name[16];
		snprintf(name, sizeof name, "t%d", k);
		tr[k] = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, name, 0);
	}
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		tp_args_begin(p);
		tp_args_add_str(p, TP_CAP_KEY_OP_TYPE, strcmp(v[i].name, "mm") ? "Add" : "MatMul");
		tp_args_add_int(p, TP_CAP_KEY_WARMUP, v[i].warm);
		tp_args_add_uint(p, TP_CAP_KEY_BYTES, 100 * (uint64_t)v[i].track + i);
		uint32_t args = tp_args_end(p);
		struct tp_track *t = &p->tracks[tr[v[i].track]];
		struct tp_slice *s = tp_track_push(p, tr[v[i].track]);
		s->start_ns = v[i].start;
		tp_slice_set_end(p, t, s, v[i].start + v[i].dur);
		tp_slice_set_type(p, t, s, tp_profile_str(p, TP_CAP_TYPE_OP));
		tp_slice_set_name(p, t, s, tp_profile_str(p, v[i].name));
		s->args = args;
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_op_table t;
	assert_int_equal(tp_op_table_build(p, &t), TP_OK);
	assert_int_equal(t.count, 2);
	assert_string_equal(tp_str(p, t.rows[0].name), "mm"); /* first start 100, add 150 */
	assert_string_equal(tp_str(p, t.rows[1].name), "add");
	const struct tp_op_row *mm = &t.rows[0];
	assert_int_equal(mm->first_start_ns, 100);
	assert_int_equal(mm->runs, 8);
	assert_int_equal(mm->runs_warmup, 1);
	assert_int_equal(mm->total_ns, 121);
	assert_int_equal(mm->min_ns, 1);
	assert_int_equal(mm->max_ns, 50);
	assert_int_equal(mm->median_ns, 7); /* (5 + 10) / 2 */
	assert_int_equal(mm->p99_ns, 50);
	assert_int_equal(mm->desc->start_ns, 200); /* track 1's, not track 3's at the same start */
	assert_int_equal(mm->bytes, 102);
	assert_int_equal(t.rows[1].runs, 1);
	assert_int_equal(t.rows[1].bytes, 205);
	assert_int_equal(t.executions, 10);
	tp_op_table_free(&t);
	tp_profile_free(p);
}

static void test_percentiles(void **state)
{
	(void)state;
	int64_t v[100];
	for (int i = 0; i < 100; i++)
		v[i] = i + 1;
	assert_int_equal(tp_percentile_ns(v, 100, 99), 99);
	assert_int_equal(tp_percentile_ns(v, 100, 100), 100);
	assert_int_equal(tp_percentile_ns(v, 100, 50), 50);
	assert_int_equal(tp_percentile_ns(v, 10, 99), 10); /* ceil(9.9) = 10 */
	assert_int_equal(tp_percentile_ns(v, 101 - 1, 1), 1);
	assert_int_equal(tp_percentile_ns(v, 1, 99), 1);
	assert_int_equal(tp_percentile_ns(v, 0, 99), 0);
	/* 200 values: rank ceil(198) = 198. */
	int64_t w[200];
	for (int i = 0; i < 200; i++)
		w[i] = 10 * i;
	assert_int_equal(tp_percentile_ns(w, 200, 99), 1970);
	assert_int_equal(tp_median_ns(v, 100), 50); /* (50 + 51) / 2 rounded toward zero */
	assert_int_equal(tp_median_ns(v, 99), 50);
	assert_int_equal(tp_median_ns(v, 0), 0);
	int64_t big[2] = {INT64_MAX - 1, INT64_MAX};
	assert_int_equal(tp_median_ns(big, 2), INT64_MAX - 1);
}

static void test_sparse_eligible(void **state)
{
	(void)state;
	assert_true(tp_op_sparse_eligible("MatMul", "256x256"));
	assert_true(tp_op_sparse_eligible("innerproduct", "1024x256"));
	assert_true(tp_op_sparse_eligible("Linear", "4x3"));
	assert_false(tp_op_sparse_eligible("MatMul", "6x4"));
	assert_false(tp_op_sparse_eligible("MatMul", "256x256x3"));
	assert_false(tp_op_sparse_eligible("MatMul", "256"));
	assert_false(tp_op_sparse_eligible("MatMul", "0x256"));
	assert_false(tp_op_sparse_eligible("MatMul", "-4x256"));
	assert_false(tp_op_sparse_eligible("MatMul", ""));
	assert_false(tp_op_sparse_eligible("Conv", "256x256"));
}

/* ---- sparse ratios ----------------------------------------------------------------------- */

static int parse_str(struct tp_sparse_ratios *r, const char *text, struct tp_diag *d)
{
	memset(d, 0, sizeof *d);
	return tp_sparse_ratios_parse(r, text, strlen(text), "ratios.txt", d);
}

static void test_ratios_defaults(void **state)
{
	(void)state;
	struct tp_sparse_ratios r;
	assert_int_equal(tp_sparse_ratios_defaults(&r), TP_OK);
	assert_int_equal(r.aim_pct, 90);
	const struct tp_sparse_ratio_row *row = tp_sparse_ratios_lookup(&r, "256x1024");
	assert_string_equal(row->shape, "256x1024");
	assert_true(tp_sparse_ratio_at(row, 90) == 4.5);
	assert_true(tp_sparse_ratio_at(row, 80) == 3.0);
	assert_true(tp_sparse_ratio_at(row, 70) == 2.5);
	assert_true(tp_sparse_ratio_at(row, 60) == 1.0);
	row = tp_sparse_ratios_lookup(&r, "1024x256");
	assert_true(tp_sparse_ratio_at(row, 90) == 5.0);
	row = tp_sparse_ratios_lookup(&r, "64x64");
	assert_string_equal(row->shape, "*");
	assert_true(tp_sparse_ratio_at(row, 90) == 4.0);
	assert_int_equal(row->line, 0);
	tp_sparse_ratios_free(&r);
}

static void test_ratios_parse_ok(void **state)
{
	(void)state;
	struct tp_sparse_ratios r;
	struct tp_diag d;
	const char *text = "# measured on box 7\n"
	                   "\n"
	                   "aim 80%   # target\n"
	                   "256x256  3.5 2.25 1.5 1\n"
	                   "0256x0064,6,5,4,1.125\r\n"
	                   "*        2   1.5  1.25 0.5\n";
	assert_int_equal(parse_str(&r, text, &d), TP_OK);
	assert_int_equal(r.aim_pct, 80);
	assert_int_equal(r.count, 2);
	assert_true(r.from_file);
	const struct tp_sparse_ratio_row *row = tp_sparse_ratios_lookup(&r, "256x256");
	assert_int_equal(row->line, 4);
	assert_true(tp_sparse_ratio_at(row, r.aim_pct) == 2.25);
	row = tp_sparse_ratios_lookup(&r, "256x64"); /* stored canonical */
	assert_int_equal(row->line, 5);
	assert_true(row->ratio[3] == 1.125);
	/* A file replaces the built-in shapes: 1024x256 falls back to the file's '*' row. */
	row = tp_sparse_ratios_lookup(&r, "1024x256");
	assert_string_equal(row->shape, "*");
	assert_int_equal(row->line, 6);
	assert_true(tp_sparse_ratio_at(row, 80) == 1.5);
	tp_sparse_ratios_free(&r);

	/* Without '*' and aim lines: the built-in fallback and aim 90 %. */
	assert_int_equal(parse_str(&r, "64x64 9 8 7 6", &d), TP_OK);
	assert_int_equal(r.aim_pct, 90);
	row = tp_sparse_ratios_lookup(&r, "1x1");
	assert_int_equal(row->line, 0);
	assert_true(row->ratio[0] == 4.0);
	tp_sparse_ratios_free(&r);
}

static void test_ratios_parse_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} cases[] = {
	    {"256x256 4 2.5 2\n", "ratios.txt:1: expected 5 fields (weight shape and ratios for "
	                          "90%, 80%, 70% and others), found 4"},
	    {"# c\n256x256 4 2.5 2 1 9 9 9\n",
	     "ratios.txt:2: expected 5 fields (weight shape and ratios for 90%, 80%, 70% and "
	     "others), found more than 6"},
	    {"\n\n256xx256 4 2.5 2 1\n", "ratios.txt:3: bad weight shape '256xx256': expected "
	                                 "positive dims joined by 'x', e.g. 256x1024"},
	    {"0x256 4 2.5 2 1\n", "ratios.txt:1: bad weight shape '0x256': expected positive dims "
	                          "joined by 'x', e.g. 256x1024"},
	    {"256x256 4 2,5 2 1\n", "ratios.txt:1: expected 5 fields (weight shape and ratios for "
	                            "90%, 80%, 70% and others), found 6"},
	    {"256x256 4 1e3 2 1\n", "ratios.txt:1: bad 80% ratio '1e3': expected a decimal number "
	                            "greater than 0 and at most 1000, e.g. 2.5"},
	    {"256x256 4 2.5 2 0\n", "ratios.txt:1: bad others ratio '0': expected a decimal number "
	                            "greater than 0 and at most 1000, e.g. 2.5"},
	    {"256x256 -4 2.5 2 1\n", "ratios.txt:1: bad 90% ratio '-4': expected a decimal number "
	                             "greater than 0 and at most 1000, e.g. 2.5"},
	    {"256x256 4 2.5 2 1\n256x256 5 2.5 2 1\n",
	     "ratios.txt:2: weight shape 256x256 already given on line 1"},
	    {"* 1 1 1 1\n* 2 2 2 2\n", "ratios.txt:2: fallback row '*' already given on line 1"},
	    {"aim 90\naim 80\n", "ratios.txt:2: aim already given on line 1"},
	    {"aim 100\n", "ratios.txt:1: expected 'aim PERCENT' with a whole percent from 1 to 99"},
	    {"aim\n", "ratios.txt:1: expected 'aim PERCENT' with a whole percent from 1 to 99"},
	    {"aim 85.5%\n",
	     "ratios.txt:1: expected 'aim PERCENT' with a whole percent from 1 to 99"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tp_sparse_ratios r;
		struct tp_diag d;
		assert_int_equal(parse_str(&r, cases[i].text, &d), TP_EFORMAT);
		assert_string_equal(d.msg, cases[i].msg);
		assert_null(r.rows); /* nothing left to free */
	}
	/* A NUL byte inside the text. */
	struct tp_sparse_ratios r;
	struct tp_diag d = {0};
	assert_int_equal(tp_sparse_ratios_parse(&r, "aim 90\n2\0x", 10, "f", &d), TP_EFORMAT);
	assert_string_equal(d.msg, "f:2: NUL byte in a text file");
	/* Missing file. */
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_sparse_ratios_load(&r, "/nonexistent/ratios.txt", &d), TP_ENOTFOUND);
	assert_non_null(strstr(d.msg, "/nonexistent/ratios.txt"));
}

/* ---- CSV --------------------------------------------------------------------------------- */

static void check_cell(const char *in, int from_input, const char *want)
{
	struct tp_buf b;
	tp_buf_init(&b);
	tp_csv_cell(&b, in, from_input);
	assert_string_equal(b.len ? b.data : "", want);
	tp_buf_free(&b);
}

static void test_csv_escaping(void **state)
{
	(void)state;
	check_cell("plain", 1, "plain");
	check_cell("", 1, "");
	check_cell("a,b", 1, "\"a,b\"");
	check_cell("say \"hi\"", 1, "\"say \"\"hi\"\"\"");
	check_cell("two\nlines", 1, "\"two\nlines\"");
	check_cell("cr\rhere", 1, "\"cr\rhere\"");
	check_cell("=1+1", 1, "'=1+1");
	/* Text safety: ESC, BEL, DEL and C1 controls never reach the file; a formula after a
	 * control byte is still guarded. */
	check_cell("a\x1b[31mb\x07\x7f\xc2\x9b", 1,
	           "a\xEF\xBF\xBD[31mb\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	check_cell("=cmd|' /C calc'!A0", 1, "'=cmd|' /C calc'!A0");
	check_cell("\x01,=x", 1, "\"\xEF\xBF\xBD,=x\"");
	check_cell("+cmd", 1, "'+cmd");
	check_cell("-1x256", 1, "'-1x256");
	check_cell("@SUM(A1)", 1, "'@SUM(A1)");
	check_cell("\tx", 1, "'\tx");
	check_cell("=HYPERLINK(\"a,b\")", 1, "\"'=HYPERLINK(\"\"a,b\"\")\"");
	check_cell("a=b", 1, "a=b");   /* only a leading sign is dangerous */
	check_cell("-0.5", 0, "-0.5"); /* the writer's own numbers are not guarded */
	check_cell("'quoted'", 1, "'quoted'");
}

/* ---- the writer -------------------------------------------------------------------------- */

static void render_small(struct tp_buf *b, const struct tp_sparse_ratios *r)
{
	struct tp_profile *p = build_small(WARM_BY_STEP, 4, 1);
	struct tp_op_table t;
	assert_int_equal(tp_op_table_build(p, &t), TP_OK);
	tp_buf_init(b);
	assert_int_equal(tp_opscsv_render(p, &t, r, b), TP_OK);
	tp_op_table_free(&t);
	tp_profile_free(p);
}

static void test_golden_small(void **state)
{
	(void)state;
	const char *src = getenv("TP_SOURCE_DIR");
	assert_non_null(src);
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/golden/opscsv_small/ops.csv", src);
	struct tp_sparse_ratios r;
	assert_int_equal(tp_sparse_ratios_defaults(&r), TP_OK);
	struct tp_buf b;
	render_small(&b, &r);
	tp_sparse_ratios_free(&r);
	if (getenv("TP_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		fwrite(b.data, 1, b.len, f);
		fclose(f);
		printf("UPDATED golden %s: review the diff\n", path);
	}
	size_t n;
	char *want = tp_test_slurp(path, &n);
	assert_non_null(want);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.data, want, n);
	free(want);
	tp_buf_free(&b);
}

static void test_render_with_ratio_file(void **state)
{
	(void)state;
	struct tp_sparse_ratios r;
	struct tp_diag d;
	assert_int_equal(parse_str(&r, "aim 70\n256x256 8 6 5 1\n* 3 2 1.6 1.1\n", &d), TP_OK);
	struct tp_buf b;
	render_small(&b, &r);
	tp_sparse_ratios_free(&r);
	/* Ratio table: 256x256 from line 2, the other eligible shapes from the '*' row. */
	assert_non_null(
	    strstr(b.data, "\n256x256,8.000000,6.000000,5.000000,1.000000,file line 2\n"));
	assert_non_null(
	    strstr(b.data, "\n256x1000,3.000000,2.000000,1.600000,1.100000,file line 3 (*)\n"));
	/* q_proj: mean 0.011 ms at aim 70 % -> ratio 5 -> 0.0022 ms. */
	assert_non_null(strstr(b.data, ",256x256,12.50%,true,0.011000,70%,5.000000,0.002200,"));
	/* out (256x1000, fallback): 0.004 / 1.6 = 0.0025 ms. */
	assert_non_null(strstr(b.data, ",256x1000,0.00%,true,0.004000,70%,1.600000,0.002500,"));
	tp_buf_free(&b);
}

static void write_profile_to(const struct tp_profile *p, const char *dir, const char *ratios,
                             struct tp_diag *d, int want)
{
	struct tp_out_opts o = {0};
	o.out_dir = dir;
	o.sparse_ratios_path = ratios;
	memset(d, 0, sizeof *d);
	assert_int_equal(tp_output_opscsv.write(p, NULL, &o, d), want);
}

static void test_output_entry(void **state)
{
	(void)state;
	char dir[] = "/tmp/opsreport_test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char csv[sizeof dir + 16], rat[sizeof dir + 16];
	snprintf(csv, sizeof csv, "%s/ops.csv", dir);
	snprintf(rat, sizeof rat, "%s/r.txt", dir);
	struct tp_diag d;
	struct stat sb;
	assert_string_equal(tp_output_opscsv.file, "ops.csv");
	assert_true(tp_output_opscsv.default_on);

	/* No operators: success and no file. */
	struct tp_profile *empty = tp_profile_new();
	tp_profile_finish(empty);
	write_profile_to(empty, dir, NULL, &d, TP_OK);
	assert_int_equal(stat(csv, &sb), -1);

	/* A bad ratio file is an error even without operators, with FILE:LINE. */
	FILE *f = fopen(rat, "w");
	fputs("aim 90\n256x256 4 2.5 x 1\n", f);
	fclose(f);
	write_profile_to(empty, dir, rat, &d, TP_EFORMAT);
	char want[256];
	snprintf(want, sizeof want,
	         "%s:2: bad 70%% ratio 'x': expected a decimal number greater "
	         "than 0 and at most 1000, e.g. 2.5",
	         rat);
	assert_string_equal(d.msg, want);
	tp_profile_free(empty);

	/* With operators: the file equals the rendered text. */
	struct tp_profile *p = build_small(WARM_BY_STEP, 4, 1);
	write_profile_to(p, dir, rat, &d, TP_EFORMAT);
	assert_int_equal(stat(csv, &sb), -1); /* nothing half-written */
	write_profile_to(p, dir, NULL, &d, TP_OK);
	struct tp_sparse_ratios r;
	tp_sparse_ratios_defaults(&r);
	struct tp_buf b;
	render_small(&b, &r);
	tp_sparse_ratios_free(&r);
	size_t n;
	char *got = tp_test_slurp(csv, &n);
	assert_non_null(got);
	assert_int_equal(n, b.len);
	assert_memory_equal(got, b.data, n);
	free(got);
	tp_buf_free(&b);
	tp_profile_free(p);
	unlink(csv);
	unlink(rat);
	rmdir(dir);
}

static void test_oom_paths(void **state)
{
	(void)state;
	struct tp_profile *p = build_small(WARM_BY_STEP, 4, 1);
	int ok = 0;
	for (long n = 0; n < 200 && !ok; n++) {
		struct tp_op_table t;
		struct tp_sparse_ratios r;
		struct tp_buf b;
		tp_buf_init(&b);
		tp_alloc_fail_after(n);
		int st = tp_sparse_ratios_defaults(&r);
		if (st == TP_OK) {
			st = tp_op_table_build(p, &t);
			if (st == TP_OK) {
				st = tp_opscsv_render(p, &t, &r, &b);
				tp_op_table_free(&t);
			}
			tp_sparse_ratios_free(&r);
		}
		tp_alloc_fail_after(-1);
		assert_true(st == TP_OK || st == TP_ENOMEM);
		ok = st == TP_OK;
		tp_buf_free(&b);
	}
	assert_true(ok);
	tp_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_warm_on_op),
	    cmocka_unit_test(test_table_warm_by_step),
	    cmocka_unit_test(test_table_warm_nested),
	    cmocka_unit_test(test_table_all_warmup_counts_all),
	    cmocka_unit_test(test_table_no_ops),
	    cmocka_unit_test(test_table_many_threads),
	    cmocka_unit_test(test_percentiles),
	    cmocka_unit_test(test_sparse_eligible),
	    cmocka_unit_test(test_ratios_defaults),
	    cmocka_unit_test(test_ratios_parse_ok),
	    cmocka_unit_test(test_ratios_parse_errors),
	    cmocka_unit_test(test_csv_escaping),
	    cmocka_unit_test(test_golden_small),
	    cmocka_unit_test(test_render_with_ratio_file),
	    cmocka_unit_test(test_output_entry),
	    cmocka_unit_test(test_oom_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
