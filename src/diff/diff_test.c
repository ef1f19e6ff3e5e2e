/*
 * diff_test.c — unit tests of the profile comparison: rows matched by name and by
 * (core, type, position), appeared / vanished rows, ranking by impact, shares of the total
 * change, the noise-aware totals over steps (median, spread, "within noise"), and the escaping
 * of input strings in diff.txt (terminal), diff.json and diff.html.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "diff/diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct op {
	const char *name, *type;
	int64_t dur_ns;
};

/* A capture-like profile: `nsteps` steps of the given durations, each holding the ops. */
static struct tp_profile *make(const int64_t *steps, size_t nsteps, const struct op *ops,
                               size_t nops)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->arch = TP_ARCH_CPU;
	p->source = tp_profile_str(p, "test");
	int dev = tp_profile_add_device(p, "proc", 1, 0);
	int tr = tp_profile_add_track(p, dev, -1, TP_TRACK_HOST, "main", 0);
	int64_t t = 0;
	for (size_t s = 0; s < nsteps; s++) {
		struct tp_slice *x = tp_track_push(p, tr);
		x->start_ns = t;
		tp_slice_set_end(p, &p->tracks[tr], x, t + steps[s]);
		tp_slice_set_name(p, &p->tracks[tr], x, tp_profile_str(p, "step"));
		tp_slice_set_type(p, &p->tracks[tr], x, tp_profile_str(p, TP_CAP_TYPE_STEP));
		int64_t o = t;
		for (size_t k = 0; k < nops; k++) {
			tp_args_begin(p);
			tp_args_add_str(p, TP_CAP_KEY_OP_TYPE, ops[k].type);
			uint32_t args = tp_args_end(p);
			x = tp_track_push(p, tr);
			x->start_ns = o;
			tp_slice_set_end(p, &p->tracks[tr], x, o + ops[k].dur_ns);
			tp_slice_set_name(p, &p->tracks[tr], x, tp_profile_str(p, ops[k].name));
			tp_slice_set_type(p, &p->tracks[tr], x, tp_profile_str(p, TP_CAP_TYPE_OP));
			x->args = args;
			o += ops[k].dur_ns;
		}
		t += steps[s];
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

static const struct tp_diff_row *row(const struct tp_diff *d, enum tp_diff_kind k, const char *key)
{
	for (size_t i = 0; i < d->nrows[k]; i++)
		if (strcmp(d->rows[k][i].key, key) == 0)
			return &d->rows[k][i];
	fail_msg("no row %s", key);
	return NULL;
}

static void run_diff(struct tp_profile *a, struct tp_profile *b, struct tp_diff *d)
{
	struct tp_analysis aa, ba;
	assert_int_equal(tp_analyze(a, &aa), TP_OK);
	assert_int_equal(tp_analyze(b, &ba), TP_OK);
	assert_int_equal(tp_diff_compute(a, &aa, "runA", b, &ba, "runB", d), TP_OK);
	tp_analysis_free(&aa);
	tp_analysis_free(&ba);
}

static void test_ops_and_noise(void **state)
{
	(void)state;
	static const int64_t sa[] = {100000, 104000, 98000, 101000, 99000};
	static const int64_t sb[] = {101000, 103000, 99000, 100000, 102000};
	static const struct op oa[] = {
	    {"conv1", "Conv", 50000}, {"relu1", "Relu", 5000}, {"fc", "MatMul", 20000}};
	static const struct op ob[] = {
	    {"conv1", "Conv", 60000}, {"gelu1", "Gelu", 7000}, {"fc", "MatMul", 19000}};
	struct tp_profile *a = make(sa, 5, oa, 3), *b = make(sb, 5, ob, 3);
	struct tp_diff d;
	run_diff(a, b, &d);
	tp_profile_free(a); /* the diff must not point into the profiles */
	tp_profile_free(b);
	assert_true(d.noise_aware);
	assert_int_equal(d.a.total_ns, 100000); /* median */
	assert_int_equal(d.b.total_ns, 101000);
	assert_int_equal(d.a.spread_ns, 3000); /* (104 - 98) / 2 µs */
	assert_int_equal(d.total_delta_ns, 1000);
	assert_true(d.within_noise);
	/* Ops by name, per-step medians, ranked by |delta|: conv1 +10, gelu1 +7 (new), relu1 -5
	 * (gone), fc -1. */
	assert_int_equal(d.nrows[TP_DIFF_OP], 4);
	const struct tp_diff_row *r = d.rows[TP_DIFF_OP];
	assert_string_equal(r[0].key, "conv1");
	assert_int_equal(r[0].delta_ns, 10000);
	assert_string_equal(r[1].key, "gelu1");
	assert_int_equal(r[1].status, TP_DIFF_APPEARED);
	assert_string_equal(r[2].key, "relu1");
	assert_int_equal(r[2].status, TP_DIFF_VANISHED);
	assert_int_equal(r[2].delta_ns, -5000);
	assert_string_equal(r[3].key, "fc");
	assert_true(r[0].pct > 19.99 && r[0].pct < 20.01);
	assert_true(r[0].share > 9.99 && r[0].share < 10.01); /* 10 µs of a 1 µs total change */
	assert_int_equal(row(&d, TP_DIFF_OP_TYPE, "Conv")->a_count, 5);
	assert_int_equal(row(&d, TP_DIFF_OP_TYPE, "MatMul")->delta_ns, -1000);
	tp_diff_free(&d);
}

/* Steps with per-step op durations: conv[s] and fc[s] ns in step s; a warm-up step first
 * (warm-up flag set, conv 1 ms) that no median may see. */
static struct tp_profile *make_var(const int64_t *conv, const int64_t *fc, size_t nsteps)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->source = tp_profile_str(p, "test");
	int dev = tp_profile_add_device(p, "proc", 1, 0);
	int tr = tp_profile_add_track(p, dev, -1, TP_TRACK_HOST, "main", 0);
	int64_t t = 0;
	for (size_t s = 0; s <= nsteps; s++) {
		int warm = s == 0;
		int64_t c = warm ? 1000000 : conv[s - 1], f = warm ? 1000 : fc[s - 1];
		tp_args_begin(p);
		tp_args_add_int(p, TP_CAP_KEY_WARMUP, warm);
		uint32_t wa = tp_args_end(p);
		struct tp_slice *x = tp_track_push(p, tr);
		x->start_ns = t;
		tp_slice_set_end(p, &p->tracks[tr], x, t + c + f + 100);
		tp_slice_set_name(p, &p->tracks[tr], x, tp_profile_str(p, "step"));
		tp_slice_set_type(p, &p->tracks[tr], x, tp_profile_str(p, TP_CAP_TYPE_STEP));
		x->args = wa;
		const char *names[2] = {"conv", "fc"};
		int64_t durs[2] = {c, f}, o = t;
		for (int k = 0; k < 2; k++) {
			x = tp_track_push(p, tr);
			x->start_ns = o;
			tp_slice_set_end(p, &p->tracks[tr], x, o + durs[k]);
			tp_slice_set_name(p, &p->tracks[tr], x, tp_profile_str(p, names[k]));
			tp_slice_set_type(p, &p->tracks[tr], x, tp_profile_str(p, TP_CAP_TYPE_OP));
			o += durs[k];
		}
		t += c + f + 100;
	}
	/* An op outside every step (set-up after the last one): in no per-step sum. */
	struct tp_slice *x = tp_track_push(p, tr);
	x->start_ns = t + 10;
	tp_slice_set_end(p, &p->tracks[tr], x, t + 500000);
	tp_slice_set_name(p, &p->tracks[tr], x, tp_profile_str(p, "conv"));
	tp_slice_set_type(p, &p->tracks[tr], x, tp_profile_str(p, TP_CAP_TYPE_OP));
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

static void test_row_noise(void **state)
{
	(void)state;
	static const int64_t ca[] = {50000, 52000, 48000, 51000, 49000};
	static const int64_t cb[] = {51000, 53000, 49000, 50000, 52000};
	static const int64_t fa[] = {20000, 20000, 20000, 20000, 20000};
	static const int64_t fb[] = {25000, 26000, 24000, 25000, 25000};
	struct tp_profile *a = make_var(ca, fa, 5), *b = make_var(cb, fb, 5);
	struct tp_diff d;
	run_diff(a, b, &d);
	tp_profile_free(a);
	tp_profile_free(b);
	assert_true(d.noise_aware);
	assert_int_equal(d.a.steps, 5); /* the warm-up step is not one */
	/* fc: medians 20 -> 25 µs, spreads 0 and 1 µs: beyond noise, ranked first. */
	const struct tp_diff_row *r = row(&d, TP_DIFF_OP, "fc");
	assert_ptr_equal(r, &d.rows[TP_DIFF_OP][0]);
	assert_int_equal(r->a_ns, 20000);
	assert_int_equal(r->b_ns, 25000);
	assert_int_equal(r->a_spread_ns, 0);
	assert_int_equal(r->b_spread_ns, 1000);
	assert_int_equal(r->within_noise, 0);
	/* conv: medians 50 -> 51 µs (the warm-up's 1 ms and the 490 µs outside the steps are in no
	 * median), spreads 2 µs each: within noise. */
	r = row(&d, TP_DIFF_OP, "conv");
	assert_int_equal(r->a_ns, 50000);
	assert_int_equal(r->b_ns, 51000);
	assert_int_equal(r->a_spread_ns, 2000);
	assert_int_equal(r->b_spread_ns, 2000);
	assert_int_equal(r->within_noise, 1);
	assert_int_equal(r->a_count, 7); /* counts stay whole-run counts */
	struct tp_buf t, j;
	tp_buf_init(&t);
	tp_buf_init(&j);
	tp_diff_text(&d, 0, &t);
	tp_diff_json(&d, &j);
	assert_non_null(strstr(t.data, "per-step medians"));
	assert_non_null(strstr(t.data, "conv  ~"));
	assert_null(strstr(t.data, "fc  ~"));
	assert_non_null(strstr(j.data, "\"key\":\"conv\""));
	assert_non_null(
	    strstr(j.data, "\"a_spread_us\":2.000,\"b_spread_us\":2.000,\"within_noise\":true"));
	tp_buf_free(&t);
	tp_buf_free(&j);
	tp_diff_free(&d);
}

static void test_layers_and_escaping(void **state)
{
	(void)state;
	struct tp_profile *ps[2];
	for (int s = 0; s < 2; s++) {
		struct tp_profile *p = tp_profile_new();
		p->source = tp_profile_str(p, "test");
		int dev = tp_profile_add_device(p, "dev", 0, 1);
		int tr = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, "TIU", 1000);
		/* Named layers: "a\x1b[31m" (renamed in B: falls back to type + position), "b";
		 * unnamed Conv layers matched by position. */
		const char *names[2][4] = {{"a\x1b[31m", "b</script>", "", ""},
		                           {"renamed", "b</script>", "", ""}};
		const char *types[4] = {"Add", "Mul", "Conv", "Conv"};
		int64_t durs[2][4] = {{10, 20, 30, 40}, {15, 20, 90, 40}};
		int64_t t = 0;
		for (int i = 0; i < 4; i++) {
			struct tp_layer l = {
			    .id = 10 + i, .device = 0, .core = 0, .subnet = -1, .group = -1};
			l.type = tp_profile_str(p, types[i]);
			l.name = tp_profile_str(p, names[s][i]);
			l.begin_ns = t;
			l.end_ns = t + durs[s][i] * 1000;
			t = l.end_ns;
			int li = tp_profile_add_layer(p, &l);
			struct tp_slice *x = tp_track_push(p, tr);
			x->start_ns = l.begin_ns;
			tp_slice_set_end(p, &p->tracks[tr], x, l.end_ns);
			x->cycles = (uint32_t)(l.end_ns - l.begin_ns);
			tp_slice_set_name(p, &p->tracks[tr], x, tp_profile_str(p, "conv.normal"));
			x->layer = li;
		}
		assert_int_equal(tp_profile_finish(p), TP_OK);
		ps[s] = p;
	}
	struct tp_diff d;
	run_diff(ps[0], ps[1], &d);
	assert_false(d.noise_aware);
	assert_int_equal(d.nrows[TP_DIFF_LAYER], 4); /* the renamed layer matched by position */
	const struct tp_diff_row *r = d.rows[TP_DIFF_LAYER];
	assert_string_equal(r[0].key, "core 0.0 Conv #0");
	assert_int_equal(r[0].delta_ns, 60000);
	assert_string_equal(r[1].key, "a\x1b[31m");
	assert_int_equal(r[1].delta_ns, 5000);
	assert_int_equal(r[1].status, TP_DIFF_BOTH);
	assert_int_equal(row(&d, TP_DIFF_CMD, "TIU conv.normal")->delta_ns, 65000);
	assert_int_equal(d.nengines, 1);

	struct tp_buf b;
	tp_buf_init(&b);
	tp_diff_text(&d, 0, &b);
	assert_non_null(strstr(b.data, "a\\x1b[31m"));
	assert_null(strchr(b.data, '\x1b'));
	tp_buf_free(&b);
	tp_buf_init(&b);
	tp_diff_json(&d, &b);
	assert_non_null(strstr(b.data, "\"key\":\"a\\u001b[31m\""));
	tp_buf_free(&b);
	tp_buf_init(&b);
	tp_diff_html(&d, &b);
	assert_null(strstr(b.data, "b</script>"));
	assert_non_null(strstr(b.data, "b\\u003c/script>"));
	tp_buf_free(&b);
	tp_diff_free(&d);
	tp_profile_free(ps[0]);
	tp_profile_free(ps[1]);
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *q = hay; (q = strstr(q, needle)) != NULL; q++)
		n++;
	return n;
}

/* diff.html embeds the first TP_DIFF_PAGE_ROWS rows of a section and says how many exist;
 * diff.json keeps every row. */
static void test_page_row_cap(void **state)
{
	(void)state;
	enum { NOPS = TP_DIFF_PAGE_ROWS + 200 };
	static char names[NOPS][16];
	static struct op oa[NOPS], ob[NOPS];
	for (int i = 0; i < NOPS; i++) {
		snprintf(names[i], sizeof names[i], "op%d", i);
		oa[i] = (struct op){names[i], "Conv", 1000};
		ob[i] = (struct op){names[i], "Conv", 1000 + i};
	}
	static const int64_t steps[] = {2000000};
	struct tp_profile *a = make(steps, 1, oa, NOPS), *b = make(steps, 1, ob, NOPS);
	struct tp_diff d;
	run_diff(a, b, &d);
	assert_int_equal(d.nrows[TP_DIFF_OP], NOPS);
	assert_string_equal(d.rows[TP_DIFF_OP][0].key, "op1199"); /* the biggest change first */
	struct tp_buf js, html;
	tp_buf_init(&js);
	tp_buf_init(&html);
	tp_diff_json(&d, &js);
	tp_diff_html(&d, &html);
	assert_false(js.oom || html.oom);
	/* rows: NOPS ops + 1 op type (+ the step's command type rows, the same in both) */
	size_t other = d.nrows[TP_DIFF_LAYER] + d.nrows[TP_DIFF_OP_TYPE] + d.nrows[TP_DIFF_CMD];
	assert_int_equal(count_of(js.data, "{\"key\":"), NOPS + other);
	assert_int_equal(count_of(html.data, "{\"key\":"), TP_DIFF_PAGE_ROWS + other);
	char want[64];
	snprintf(want, sizeof want, "\"ops\":%d", NOPS);
	assert_non_null(strstr(html.data, want));
	assert_non_null(strstr(html.data, "\"key\":\"op1199\"")); /* rank 1 is in the page */
	assert_null(strstr(html.data, "\"key\":\"op0\""));        /* the smallest change is not */
	assert_non_null(strstr(js.data, "\"key\":\"op0\""));
	tp_buf_free(&js);
	tp_buf_free(&html);
	tp_diff_free(&d);
	tp_profile_free(a);
	tp_profile_free(b);
}

/* ---- Two jobs ------------------------------------------------------------------------------ */

static void job_add(struct tp_job *j, const char *dev, int64_t call, int64_t ns, int ok)
{
	struct tp_job_entry *e = tp_job_add(j);
	assert_non_null(e);
	e->device = tp_job_str(j, dev);
	e->name = tp_job_str(j, dev);
	e->call = call;
	e->total_ns = ns;
	e->ok = ok;
}

static void test_jobdiff(void **state)
{
	(void)state;
	struct tp_job a, b;
	tp_job_init(&a, "a");
	tp_job_init(&b, "b");
	job_add(&a, "dev10", 0, 1000, 1);
	job_add(&a, "dev2", 0, 1000, 1);
	job_add(&a, "dev2", 1, 500, 1);  /* vanished */
	job_add(&a, "dev3", 0, 700, 0);  /* failed in A */
	job_add(&b, "dev2", 0, 1300, 1); /* +300 */
	job_add(&b, "dev10", 0, 900, 1); /* -100 */
	job_add(&b, "dev3", 0, 800, 1);
	job_add(&b, "dev\x1b[31m", 0, 50, 1); /* appeared; a hostile name */
	tp_job_finish(&a);
	tp_job_finish(&b);
	struct tp_jobdiff d;
	assert_int_equal(tp_jobdiff_compute(&a, "A", &b, "B", &d), TP_OK);
	assert_int_equal(d.n, 5);
	assert_int_equal(d.both, 2);
	assert_int_equal(d.appeared, 1);
	assert_int_equal(d.vanished, 1);
	assert_int_equal(d.failed, 1);
	/* Ranked by |delta|: dev3 (+800, A failed), vanished dev2/1 (-500), dev2/0 (+300). */
	assert_string_equal(d.rows[0].device, "dev3");
	assert_int_equal(d.rows[1].status, TP_DIFF_VANISHED);
	assert_int_equal(d.rows[1].delta_ns, -500);
	assert_int_equal(d.rows[2].delta_ns, 300);
	assert_true(d.rows[2].pct > 29.99 && d.rows[2].pct < 30.01);
	/* The totals count only the calls converted on both sides. */
	assert_int_equal(d.a_total_ns, 2000);
	assert_int_equal(d.b_total_ns, 2200);
	struct tp_buf t;
	tp_buf_init(&t);
	tp_jobdiff_text(&d, 0, &t);
	tp_buf_putc(&t, 0);
	assert_null(strchr(t.data, 0x1b));
	assert_non_null(strstr(t.data, "failed in A"));
	t.len = 0;
	tp_jobdiff_html(&d, &t);
	tp_buf_putc(&t, 0);
	assert_non_null(strstr(t.data, "\\u001b"));
	tp_buf_free(&t);
	tp_jobdiff_free(&d);
	tp_job_free(&a);
	tp_job_free(&b);
}

#include "tp_test_main.h"
