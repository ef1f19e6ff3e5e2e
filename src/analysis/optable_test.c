/*
 * optable_test.c — unit tests for the operator table (grouping, warm-up exclusion by the
 * operator's flag, its step's or the enclosing step's, min / mean / max / median / p99, the
 * describing execution, operators spread over threads), its statistics helpers and the row
 * orders of tp_op_rows_by.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h> /* after the three headers it needs */

#include "analysis/optable.h"
#include "fixtures/c/ops_fixture.h"
#include "testutil.h"

#include <stdio.h>
#include <string.h>

static const struct tp_op_row *row_named(const struct tp_profile *p, const struct tp_op_table *t,
                                         const char *name)
{
	for (size_t i = 0; i < t->count; i++)
		if (strcmp(tp_str(p, t->rows[i].name), name) == 0)
			return &t->rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

/* An operator row's counted and warm-up runs and its min, max, median and p99 (ns). */
static void expect_timing(const struct tp_op_row *r, uint64_t runs, uint64_t warmup, int64_t min,
                          int64_t max, int64_t median, int64_t p99)
{
	assert_int_equal(r->runs, runs);
	assert_int_equal(r->runs_warmup, warmup);
	assert_int_equal(r->min_ns, min);
	assert_int_equal(r->max_ns, max);
	assert_int_equal(r->median_ns, median);
	assert_int_equal(r->p99_ns, p99);
}

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
	/* The 50 000 ns warm-up run is excluded from the figures. */
	expect_timing(q, 3, 1, 10000, 13000, 10000, 13000);
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

/* The small table under each way of marking warm-up; the mode is the test's initial state. */
static enum warm_mode warm_modes[] = {WARM_ON_OP, WARM_BY_STEP, WARM_NESTED};

static void test_table_warm(void **state)
{
	check_small_table(*(const enum warm_mode *)*state);
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
	int tr;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_TIU, "TIU", 900, &tr);
	tp_test_push_slice(p, tr, "sCONV", NULL, 0, 5, 0); /* a command, no operator */
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
	/* Median (5 + 10) / 2. */
	expect_timing(mm, 8, 1, 1, 50, 7, 50);
	assert_int_equal(mm->total_ns, 121);
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

/* A build as tp_test_oom_sweep calls it (ctx: the profile); a success has every row. */
/* tp_op_rows_by: each order over rows with ties in every key, the tied rows in table order;
 * an empty table still gets an array. */
static void test_rows_by(void **state)
{
	(void)state;
	struct tp_op_row rows[] = {
	    {.op_type = 7, .total_ns = 100, .mean_ns = 10},
	    {.op_type = 3, .total_ns = 300, .mean_ns = 10},
	    {.op_type = 7, .total_ns = 300, .mean_ns = 50},
	    {.op_type = 3, .total_ns = 100, .mean_ns = 50},
	    {.op_type = 5, .total_ns = 200, .mean_ns = 20},
	};
	struct tp_op_table t = {.rows = rows, .count = 5};
	static const struct {
		enum tp_op_order by;
		size_t want[5];
	} cases[] = {
	    {TP_OP_BY_TYPE, {1, 3, 4, 0, 2}},
	    {TP_OP_BY_TOTAL, {1, 2, 4, 0, 3}},
	    {TP_OP_BY_MEAN, {2, 3, 4, 0, 1}},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		const struct tp_op_row **v = tp_op_rows_by(&t, cases[k].by);
		assert_non_null(v);
		for (size_t i = 0; i < 5; i++)
			assert_ptr_equal(v[i], &rows[cases[k].want[i]]);
		tp_free(v);
	}
	struct tp_op_table none = {0};
	const struct tp_op_row **v = tp_op_rows_by(&none, TP_OP_BY_MEAN);
	assert_non_null(v);
	tp_free(v);
}

static int build_table(void *ctx, struct tp_diag *d)
{
	const struct tp_profile *p = ctx;
	struct tp_op_table t;
	int st = tp_op_table_build(p, &t);
	if (st)
		return tp_diag_set(d, st, "operator table: %s", tp_strerror(st));
	assert_int_equal(t.count, NSMALL);
	tp_op_table_free(&t);
	return TP_OK;
}

/* Every allocation failure of a build is TP_ENOMEM, never a crash or a leak (the ASan build
 * checks the leaks), and the sweep reaches a build that succeeds. */
static void test_table_oom(void **state)
{
	(void)state;
	sweep_small(build_table);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    {"test_table_warm_on_op", test_table_warm, NULL, NULL, &warm_modes[0]},
	    {"test_table_warm_by_step", test_table_warm, NULL, NULL, &warm_modes[1]},
	    {"test_table_warm_nested", test_table_warm, NULL, NULL, &warm_modes[2]},
	    cmocka_unit_test(test_table_all_warmup_counts_all),
	    cmocka_unit_test(test_table_no_ops),
	    cmocka_unit_test(test_table_many_threads),
	    cmocka_unit_test(test_percentiles),
	    cmocka_unit_test(test_sparse_eligible),
	    cmocka_unit_test(test_rows_by),
	    cmocka_unit_test(test_table_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
