/*
 * html_capture.c — what result.html holds only for a capture (libtpuprof thread tracks and no
 * device engine: html_cap_new decides): each counter series as a lane of its own right under
 * its thread's lane (a step chart: one block per sample, lasting until the next one), and the
 * "capture" section the page's capture script (web/cap_*.js) reads — the threads' ids, the
 * operator types and operators (from the operator table, the statistics summary.json has) and
 * one row per step with its operators and activities. Chrome traces (host tracks) and device
 * dumps never take these paths, so their pages are not touched.
 *
 * Owns the struct html_cap it makes (with a page-lane index per track and, when the analysis
 * has none, its own operator table) until html_cap_free.
 */
#include "writers/html/html_int.h"

#include "analysis/optable.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Rows the page gets at most (the rest are counted in "stepsOmitted" / "opsOmitted"). */
#define CAP_STEPS_MAX 100000
#define CAP_OPS_MAX 10000

struct html_cap {
	int32_t *page_lane; /* per profile track: index of its lane in the page's "lanes", -1 */
	size_t next_lane;   /* lanes written so far */
	uint8_t *emitted;   /* per counter series: 1 once written as a lane */
	struct tp_op_table own;
	const struct tp_op_table *ops;
	uint32_t ty_step, ty_op, ty_act; /* slice type ids (0: none in the profile) */
	uint32_t k_step, k_warm;         /* argument key ids */
};

int html_cap_new(const struct tp_profile *p, const struct tp_analysis *a, const struct lane *lanes,
                 size_t nl, struct html_cap **out)
{
	*out = NULL;
	int threads = 0;
	for (size_t i = 0; i < nl; i++) {
		if (lanes[i].core >= 0)
			return TP_OK; /* a device dump (with or without a host side) */
		threads |= lanes[i].kind == TP_TRACK_THREAD;
	}
	if (!threads)
		return TP_OK;
	struct html_cap *cap = tp_calloc(1, sizeof *cap);
	if (!cap)
		return TP_ENOMEM;
	cap->page_lane = tp_malloc((p->num_tracks ? p->num_tracks : 1) * sizeof *cap->page_lane);
	cap->emitted = tp_calloc(p->num_counters ? p->num_counters : 1, 1);
	if (!cap->page_lane || !cap->emitted || tp_op_table_for(p, a, &cap->own, &cap->ops)) {
		html_cap_free(cap);
		return TP_ENOMEM;
	}
	for (size_t i = 0; i < p->num_tracks; i++)
		cap->page_lane[i] = -1;
	cap->ty_step = tp_profile_find_str(p, TP_CAP_TYPE_STEP);
	cap->ty_op = tp_profile_find_str(p, TP_CAP_TYPE_OP);
	cap->ty_act = tp_profile_find_str(p, TP_CAP_TYPE_ACTIVITY);
	cap->k_step = tp_profile_find_str(p, TP_CAP_KEY_STEP);
	cap->k_warm = tp_profile_find_str(p, TP_CAP_KEY_WARMUP);
	*out = cap;
	return TP_OK;
}

void html_cap_free(struct html_cap *cap)
{
	if (!cap)
		return;
	tp_op_table_free(&cap->own);
	tp_free(cap->page_lane);
	tp_free(cap->emitted);
	tp_free(cap);
}

/* ---- Counter lanes ---------------------------------------------------------------------- */

struct cget {
	const struct tp_counter *k;
	int64_t t0, span_end;
	double lo, hi;
	int col; /* 0 ts (gap from the previous block's end), 1 dur, 2 height 0..1000 */
};

/* Sample i lasts until the next one; the last until the end of the profile. */
static int64_t sample_end(const struct cget *g, size_t i)
{
	const struct tp_counter_sample *s = g->k->samples;
	if (i + 1 < g->k->count)
		return s[i + 1].ts_ns;
	return g->span_end > s[i].ts_ns ? g->span_end : s[i].ts_ns;
}

static int64_t counter_col(void *u, size_t i)
{
	struct cget *g = u;
	const struct tp_counter_sample *s = &g->k->samples[i];
	switch (g->col) {
	case 0:
		return s->ts_ns - (i ? sample_end(g, i - 1) : g->t0);
	case 1:
		return sample_end(g, i) - s->ts_ns;
	default:
		if (!isfinite(s->value) || !(g->hi > g->lo))
			return 0;
		return (int64_t)lround((s->value - g->lo) / (g->hi - g->lo) * 1000.0);
	}
}

/* Counter series k as one lane object (a leading comma first), its values in "vals". */
static void emit_counter(struct ctx *c, size_t k)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	const struct tp_counter *ct = &p->counters[k];
	c->cap->emitted[k] = 1;
	if (!ct->count)
		return;
	struct cget g = {ct, c->t0, p->span_end_ns, 0, 0, 0};
	for (size_t i = 0; i < ct->count; i++) {
		double v = ct->samples[i].value;
		if (isfinite(v) && v < g.lo)
			g.lo = v;
		if (isfinite(v) && v > g.hi)
			g.hi = v;
	}
	int32_t thread =
	    ct->track >= 0 && (size_t)ct->track < p->num_tracks ? c->cap->page_lane[ct->track] : -1;
	tp_buf_puts(b, ",{\"kind\":\"Counter\",\"label\":");
	html_put_str(b, tp_str(p, ct->name));
	tp_buf_printf(b, ",\"dev\":%d,\"core\":-1,\"mhz\":0,\"n\":%zu", (int)ct->device, ct->count);
	tp_buf_printf(b, ",\"durRes\":0,\"hd\":0,\"rows\":1,\"thread\":%d,\"nm\":", (int)thread);
	tp_buf_i64(b, html_smap(&c->sm, ct->name));
	tp_buf_puts(b, ",\"unit\":");
	html_put_str(b, tp_str(p, ct->unit));
	static const char *const keys[] = {"ts", "dur", "h"};
	for (int col = 0; col < 3; col++) {
		g.col = col;
		html_put_col(&c->o, keys[col], ct->count, counter_col, &g);
	}
	tp_buf_puts(b, ",\"vals\":[");
	for (size_t i = 0; i < ct->count; i++) {
		char num[64];
		if (i)
			tp_buf_putc(b, ',');
		if (isfinite(ct->samples[i].value)) {
			tp_sink_fmt_real(num, sizeof num, ct->samples[i].value);
			tp_buf_puts(b, num);
		} else {
			tp_buf_puts(b, "null");
		}
		html_flush(&c->o, 0);
	}
	tp_buf_puts(b, "]}");
	c->cap->next_lane++;
	html_flush(&c->o, 0);
}

void html_cap_lane_written(struct ctx *c, const struct lane *l)
{
	struct html_cap *cap = c->cap;
	const struct tp_profile *p = c->p;
	if (l->track >= 0)
		cap->page_lane[l->track] = (int32_t)cap->next_lane;
	cap->next_lane++;
	for (size_t k = 0; l->track >= 0 && k < p->num_counters && !c->o.err; k++)
		if (p->counters[k].track == l->track)
			emit_counter(c, k);
}

void html_cap_lanes_end(struct ctx *c)
{
	for (size_t k = 0; k < c->p->num_counters && !c->o.err; k++)
		if (!c->cap->emitted[k])
			emit_counter(c, k);
}

/* ---- Operator types and operators -------------------------------------------------------- */

struct optype {
	uint32_t type; /* strtab id */
	const char *text;
	uint64_t runs, warm;
	int64_t total_ns, min_ns, max_ns;
};

static int cmp_optype(const void *x, const void *y)
{
	const struct optype *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->text, b->text);
}

/* "opTypes": the operator table's rows summed per op_type (as summary.json op_type_stats:
 * counted executions, total, min, max; plus the warm-up executions left out), by total
 * descending then type. */
static void emit_optypes(struct ctx *c, const struct tp_op_table *ops)
{
	struct tp_buf *b = &c->o.b;
	size_t n = ops->count;
	const struct tp_op_row **rows = tp_op_rows_by(ops, TP_OP_BY_TYPE);
	struct optype *t = tp_calloc(n ? n : 1, sizeof *t);
	if (!rows || !t) {
		tp_free(rows);
		tp_free(t);
		c->o.err = TP_ENOMEM;
		return;
	}
	size_t nt = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tp_op_row *r = rows[i];
		if (!nt || t[nt - 1].type != r->op_type)
			t[nt++] =
			    (struct optype){r->op_type, tp_str(c->p, r->op_type), 0, 0, 0, 0, 0};
		struct optype *o = &t[nt - 1];
		o->warm += r->runs_warmup;
		if (!r->runs)
			continue;
		if (!o->runs || r->min_ns < o->min_ns)
			o->min_ns = r->min_ns;
		if (!o->runs || r->max_ns > o->max_ns)
			o->max_ns = r->max_ns;
		o->runs += r->runs;
		o->total_ns += r->total_ns;
	}
	qsort(t, nt, sizeof *t, cmp_optype);
	tp_buf_puts(b, ",\"opTypes\":[");
	for (size_t i = 0; i < nt; i++) {
		tp_buf_printf(b, "%s[%u,", i ? "," : "", html_smap(&c->sm, t[i].type));
		html_put_u64(b, t[i].runs);
		tp_buf_putc(b, ',');
		html_put_u64(b, t[i].warm);
		tp_buf_printf(b, ",%lld,%lld,%lld]", (long long)t[i].total_ns,
		              (long long)t[i].min_ns, (long long)t[i].max_ns);
	}
	tp_buf_putc(b, ']');
	tp_free(t);
	tp_free(rows);
}

/* "ops": one row per operator (name, type, counted and warm-up executions, total, mean, median,
 * p99, min, max, bytes, flops, the page argset of its describing execution), the CAP_OPS_MAX
 * longest in total when there are more; "opsOmitted" counts the rest. */
static void emit_ops(struct ctx *c, const struct tp_op_table *ops)
{
	struct tp_buf *b = &c->o.b;
	size_t n = ops->count;
	const struct tp_op_row **rows = tp_op_rows_by(ops, TP_OP_BY_TOTAL);
	if (!rows) {
		c->o.err = TP_ENOMEM;
		return;
	}
	size_t shown = n < CAP_OPS_MAX ? n : CAP_OPS_MAX;
	tp_buf_puts(b, ",\"ops\":[");
	for (size_t i = 0; i < shown; i++) {
		const struct tp_op_row *r = rows[i];
		uint32_t ar = c->argmap && r->args < c->p->num_argsets ? c->argmap[r->args] : 0;
		tp_buf_printf(b, "%s[%u,%u,", i ? "," : "", html_smap(&c->sm, r->name),
		              html_smap(&c->sm, r->op_type));
		html_put_u64(b, r->runs);
		tp_buf_putc(b, ',');
		html_put_u64(b, r->runs_warmup);
		tp_buf_printf(b, ",%lld,", (long long)r->total_ns);
		html_put_real(b, r->mean_ns);
		tp_buf_printf(b, ",%lld,%lld,%lld,%lld,", (long long)r->median_ns,
		              (long long)r->p99_ns, (long long)r->min_ns, (long long)r->max_ns);
		html_put_u64(b, r->bytes);
		tp_buf_putc(b, ',');
		html_put_u64(b, r->flops);
		tp_buf_printf(b, ",%u]", ar);
		html_flush(&c->o, 0);
	}
	tp_buf_printf(b, "],\"opsOmitted\":%zu", n - shown);
	tp_free(rows);
}

/* ---- Steps ------------------------------------------------------------------------------- */

struct cstep {
	int64_t step, start, dur, op_ns, act_ns;
	uint64_t ops, acts;
	uint32_t graph;
	int32_t track;
	int warm;
};

static int cmp_cstep(const void *x, const void *y)
{
	const struct cstep *a = x, *b = y;
	int64_t ka[] = {a->step, a->start, a->track}, kb[] = {b->step, b->start, b->track};
	return tp_cmp_keys(ka, kb, 3);
}

static int64_t arg_int(const struct tp_profile *p, uint32_t args, uint32_t key, int64_t dflt)
{
	const struct tp_arg *a = key ? tp_args_find(p, args, key) : NULL;
	return a && a->type != TP_ARG_STR ? tp_arg_as_i64(a) : dflt;
}

struct steps {
	struct cstep *v;
	size_t n, cap;
};

static int collect_steps(const struct ctx *c, struct steps *st)
{
	const struct tp_profile *p = c->p;
	const struct html_cap *cap = c->cap;
	for (size_t t = 0; cap->ty_step && t < p->num_tracks; t++) {
		const struct tp_track *tr = &p->tracks[t];
		for (size_t i = 0; tr->kind == TP_TRACK_THREAD && i < tr->count; i++) {
			const struct tp_slice *s = &tr->slices[i];
			if (tp_slice_type(tr, s) != cap->ty_step)
				continue;
			struct cstep *g = tp_grow(st->v, sizeof *st->v, st->n + 1, &st->cap);
			if (!g)
				return TP_ENOMEM;
			st->v = g;
			st->v[st->n++] = (struct cstep){arg_int(p, s->args, cap->k_step, -1),
			                                s->start_ns,
			                                tp_slice_end(tr, s) - s->start_ns,
			                                0,
			                                0,
			                                0,
			                                0,
			                                tp_slice_name(tr, s),
			                                (int32_t)t,
			                                arg_int(p, s->args, cap->k_warm, 0) != 0};
		}
	}
	if (st->n)
		qsort(st->v, st->n, sizeof *st->v, cmp_cstep);
	return TP_OK;
}

/* The step row an operator or activity of step index `step` starting at `at` on track `t`
 * belongs to: the one of that index holding it on its track, else any holding it, else the
 * first of that index; NULL when no step has the index. */
static struct cstep *step_of(struct steps *st, int64_t step, int64_t at, int32_t t)
{
	/* The first row of index `step` or above: the first above step - 1. */
	size_t lo = step == INT64_MIN ? 0
	                              : tp_upper_bound_i64(st->v, st->n, sizeof *st->v,
	                                                   offsetof(struct cstep, step), step - 1);
	if (lo == st->n || st->v[lo].step != step)
		return NULL;
	struct cstep *any = NULL;
	for (size_t i = lo; i < st->n && st->v[i].step == step; i++) {
		struct cstep *x = &st->v[i];
		if (at >= x->start && at < x->start + x->dur) {
			if (x->track == t)
				return x;
			if (!any)
				any = x;
		}
	}
	return any ? any : &st->v[lo];
}

/* Adds the operators and activities of every thread to their steps: only the outermost ones
 * (an operator inside another operator is part of its time). */
static void attribute(const struct ctx *c, struct steps *st)
{
	const struct tp_profile *p = c->p;
	const struct html_cap *cap = c->cap;
	for (size_t t = 0; t < p->num_tracks; t++) {
		const struct tp_track *tr = &p->tracks[t];
		int64_t op_end = INT64_MIN, act_end = INT64_MIN;
		for (size_t i = 0; tr->kind == TP_TRACK_THREAD && i < tr->count; i++) {
			const struct tp_slice *s = &tr->slices[i];
			uint32_t ty = tp_slice_type(tr, s);
			int op = cap->ty_op && ty == cap->ty_op,
			    act = cap->ty_act && ty == cap->ty_act;
			if (!op && !act)
				continue;
			int64_t *end = op ? &op_end : &act_end;
			if (s->start_ns < *end)
				continue; /* nested in the previous one of its kind */
			*end = tp_slice_end(tr, s);
			int64_t step = arg_int(p, s->args, cap->k_step, -1);
			struct cstep *x =
			    step >= 0 ? step_of(st, step, s->start_ns, (int32_t)t) : NULL;
			if (!x)
				continue;
			if (op) {
				x->ops++;
				x->op_ns += *end - s->start_ns;
			} else {
				x->acts++;
				x->act_ns += *end - s->start_ns;
			}
		}
	}
}

/* "steps": [graph, step, warm-up, start, latency, operators, operator ns, activities,
 * activity ns, lane] per step slice, by step index then start; "stepsOmitted". */
static void emit_steps(struct ctx *c)
{
	struct tp_buf *b = &c->o.b;
	struct steps st = {0};
	if (collect_steps(c, &st) != TP_OK) {
		c->o.err = TP_ENOMEM;
		tp_free(st.v);
		return;
	}
	attribute(c, &st);
	size_t shown = st.n < CAP_STEPS_MAX ? st.n : CAP_STEPS_MAX;
	tp_buf_puts(b, ",\"steps\":[");
	for (size_t i = 0; i < shown; i++) {
		const struct cstep *x = &st.v[i];
		tp_buf_printf(b, "%s[%u,%lld,%d,%lld,%lld,", i ? "," : "",
		              html_smap(&c->sm, x->graph), (long long)x->step, x->warm,
		              (long long)(x->start - c->t0), (long long)x->dur);
		html_put_u64(b, x->ops);
		tp_buf_printf(b, ",%lld,", (long long)x->op_ns);
		html_put_u64(b, x->acts);
		tp_buf_printf(b, ",%lld,%d]", (long long)x->act_ns,
		              (int)c->cap->page_lane[x->track]);
		html_flush(&c->o, 0);
	}
	tp_buf_printf(b, "],\"stepsOmitted\":%zu", st.n - shown);
	tp_free(st.v);
}

void html_cap_emit(struct ctx *c)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	const struct tp_op_table *ops = c->cap->ops;
	tp_buf_puts(b, ",\"capture\":{\"threads\":[");
	int first = 1;
	for (size_t t = 0; t < p->num_tracks; t++) {
		if (p->tracks[t].kind != TP_TRACK_THREAD || c->cap->page_lane[t] < 0)
			continue;
		tp_buf_printf(b, "%s[%d,%lld]", first ? "" : ",", (int)c->cap->page_lane[t],
		              (long long)p->tracks[t].tid);
		first = 0;
	}
	tp_buf_printf(b, "],\"opsWarmupCounted\":%d", ops->counted_warmup);
	emit_optypes(c, ops);
	emit_ops(c, ops);
	emit_steps(c);
	tp_buf_putc(b, '}');
	html_flush(&c->o, 0);
}
