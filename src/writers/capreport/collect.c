/*
 * collect.c — gathers what the capture reports show from a finished capture: its steps (with
 * the overall latency and throughput statistics over the non-warm-up ones), activities and
 * operator executions by step, marks, ranges and async ranges (the TP_CAP_TYPE_* conventions
 * of model/argkeys.h), and the operator table. Owns the report's arrays, freed by
 * tp_capreport_report_free.
 */
#include "writers/capreport/capreport_int.h"

#include "model/argkeys.h"

#include <stdlib.h>
#include <string.h>

static const char *as_str(const struct tp_profile *p, const struct tp_arg *a)
{
	return a && a->type == TP_ARG_STR ? tp_str(p, a->v.s) : "";
}

static int cmp_step_idx(const void *x, const void *y)
{
	const struct cstep *a = x, *b = y;
	int64_t ka[] = {a->step, a->start_ns}, kb[] = {b->step, b->start_ns};
	int c = tp_cmp_keys(ka, kb, 2);
	return c ? c : strcmp(a->graph, b->graph);
}

struct step_key {
	const struct cstep *v; /* sorted by cmp_step_idx */
	struct cstep key;
};

static int step_not_before(const void *ctx, size_t i)
{
	const struct step_key *k = ctx;
	return cmp_step_idx(&k->v[i], &k->key) >= 0;
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Activities: "no step" first, then by step, then by first start, then name. */
static int cmp_act(const void *x, const void *y)
{
	const struct cact *a = x, *b = y;
	int64_t ka[] = {a->has_step, a->step, a->start_ns},
	        kb[] = {b->has_step, b->step, b->start_ns};
	int c = tp_cmp_keys(ka, kb, 3);
	return c ? c : strcmp(a->name, b->name);
}

/* The same with the name before the start: an activity's runs of one step side by side. */
static int cmp_act_merge(const void *x, const void *y)
{
	const struct cact *a = x, *b = y;
	int64_t ka[] = {a->has_step, a->step}, kb[] = {b->has_step, b->step};
	int c = tp_cmp_keys(ka, kb, 2);
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : tp_cmp_keys(&a->start_ns, &b->start_ns, 1);
}

int tp_capreport_cmp_node_head(const struct cnode *a, const struct cnode *b)
{
	int c = strcmp(a->graph, b->graph);
	if (c)
		return c;
	if (a->has_step != b->has_step)
		return a->has_step - b->has_step;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return 0;
}

static int cmp_node_out(const void *x, const void *y)
{
	const struct cnode *a = x, *b = y;
	int c = tp_capreport_cmp_node_head(a, b);
	if (c)
		return c;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

void tp_capreport_report_free(struct report *r)
{
	TP_FREE_ALL(r->steps, r->acts, r->nodes, r->ranges, r->marks);
	tp_op_table_free(&r->own_ops);
	memset(r, 0, sizeof *r);
}

/* Percentile / median over a sorted double array (nearest rank, as tp_percentile_ns). */
static double pct_dbl(const double *v, size_t n, unsigned pct)
{
	size_t rank = (n * pct + 99) / 100;
	return n ? v[(rank ? rank : 1) - 1] : 0;
}

static double median_dbl(const double *v, size_t n)
{
	if (!n)
		return 0;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_range_group(const void *x, const void *y)
{
	const struct crange *a = x, *b = y;
	int c = strcmp(a->kind, b->kind);
	if (!c)
		c = strcmp(a->name, b->name);
	if (!c)
		c = strcmp(a->category, b->category);
	if (!c)
		c = a->cut != b->cut ? (a->cut < b->cut ? -1 : 1) : 0; /* measured ones first */
	if (!c)
		c = a->dur_ns < b->dur_ns ? -1 : a->dur_ns > b->dur_ns;
	return c;
}

static int cmp_range_out(const void *x, const void *y)
{
	const struct crange *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	int c = strcmp(a->kind, b->kind);
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->category, b->category);
}

static int cmp_mark(const void *x, const void *y)
{
	const struct cmark *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->category, b->category);
}

static int cmp_mark_out(const void *x, const void *y)
{
	const struct cmark *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return cmp_mark(a, b);
}

/* Groups the marks by (name, category), most frequent first. */
static void group_marks(struct report *r)
{
	if (!r->nmarks)
		return;
	qsort(r->marks, r->nmarks, sizeof *r->marks, cmp_mark);
	size_t o = 0;
	for (size_t i = 0; i < r->nmarks; i++) {
		if (o && cmp_mark(&r->marks[o - 1], &r->marks[i]) == 0)
			r->marks[o - 1].count++;
		else
			r->marks[o++] = r->marks[i];
	}
	r->nmarks = o;
	qsort(r->marks, r->nmarks, sizeof *r->marks, cmp_mark_out);
}

/* Groups the ranges by (kind, name, category) with their statistics over the measured
 * executions, most total time first. TP_OK / TP_ENOMEM. */
static int group_ranges(struct report *r)
{
	if (!r->nranges)
		return TP_OK;
	/* Sorted by group, measured executions first and by duration: each group's
	 * measured durations are a sorted run at its head. */
	qsort(r->ranges, r->nranges, sizeof *r->ranges, cmp_range_group);
	int64_t *lat = tp_malloc(r->nranges * sizeof *lat);
	if (!lat)
		return TP_ENOMEM;
	size_t o = 0;
	for (size_t i = 0; i < r->nranges;) {
		struct crange g = r->ranges[i];
		size_t n = 0, j = i;
		g.count = g.cut = g.cross = 0;
		g.total_ns = 0;
		for (; j < r->nranges && strcmp(r->ranges[j].kind, g.kind) == 0 &&
		       strcmp(r->ranges[j].name, g.name) == 0 &&
		       strcmp(r->ranges[j].category, g.category) == 0;
		     j++) {
			const struct crange *c = &r->ranges[j];
			g.count++;
			g.cut += c->cut;
			g.cross += c->cross;
			if (!c->cut) {
				lat[n++] = c->dur_ns;
				g.total_ns += c->dur_ns;
			}
		}
		g.have = n > 0;
		if (n) {
			g.lat.min = (double)lat[0] / 1e6;
			g.lat.max = (double)lat[n - 1] / 1e6;
			g.lat.median = (double)tp_median_ns(lat, n) / 1e6;
			g.lat.p99 = (double)tp_percentile_ns(lat, n, 99) / 1e6;
			g.lat.mean = (double)g.total_ns / (double)n / 1e6;
		}
		r->ranges[o++] = g;
		i = j;
	}
	tp_free(lat);
	r->nranges = o;
	qsort(r->ranges, r->nranges, sizeof *r->ranges, cmp_range_out);
	return TP_OK;
}

/* Marks, ranges and async ranges (the TP_CAP_TYPE_* slices of model/argkeys.h) of every thread
 * track, async lanes included: counts, cut-short and cross-thread counts, and per (kind, name,
 * category) latency statistics over the measured executions (a range cut short by the end of
 * the capture has no measured end: counted, never in a statistic). */
static int collect_marks_ranges(const struct tp_profile *p, struct report *r)
{
	uint32_t ty_mark = tp_profile_find_str(p, TP_CAP_TYPE_MARK);
	uint32_t ty_range = tp_profile_find_str(p, TP_CAP_TYPE_RANGE);
	uint32_t ty_async = tp_profile_find_str(p, TP_CAP_TYPE_ASYNC);
	uint32_t k_cut = tp_profile_find_str(p, TP_CAP_KEY_CUT);
	uint32_t k_cat = tp_profile_find_str(p, TP_CAP_KEY_CATEGORY);
	uint32_t k_btid = tp_profile_find_str(p, TP_CAP_KEY_BEGIN_TID);
	uint32_t k_etid = tp_profile_find_str(p, TP_CAP_KEY_END_TID);
	if (!ty_mark && !ty_range && !ty_async)
		return TP_OK;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *tr = &p->tracks[ti];
		if (!tp_track_kind_is_host((enum tp_track_kind)tr->kind))
			continue;
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *s = &tr->slices[k];
			int is_mark = ty_mark && tp_slice_type(tr, s) == ty_mark;
			int is_range = ty_range && tp_slice_type(tr, s) == ty_range;
			int is_async = ty_async && tp_slice_type(tr, s) == ty_async;
			if (!is_mark && !is_range && !is_async)
				continue;
			const struct tp_arg *ca = k_cat ? tp_args_find(p, s->args, k_cat) : NULL;
			const char *cat = ca ? as_str(p, ca) : "";
			if (is_mark) {
				struct cmark *g =
				    tp_push(&r->marks, sizeof *g, &r->nmarks, &r->cap_marks);
				if (!g)
					return TP_ENOMEM;
				*g = (struct cmark){tp_str(p, tp_slice_name(tr, s)), cat, 1};
				r->n_marks++;
				continue;
			}
			struct crange *c =
			    tp_push(&r->ranges, sizeof *c, &r->nranges, &r->cap_ranges);
			if (!c)
				return TP_ENOMEM;
			memset(c, 0, sizeof *c);
			c->kind = is_async ? TP_CAP_TYPE_ASYNC : TP_CAP_TYPE_RANGE;
			c->name = tp_str(p, tp_slice_name(tr, s));
			c->category = cat;
			c->dur_ns = tp_slice_end(tr, s) - s->start_ns;
			c->count = 1;
			const struct tp_arg *cu = k_cut ? tp_args_find(p, s->args, k_cut) : NULL;
			c->cut = cu && tp_arg_as_i64(cu) != 0;
			if (is_async && !c->cut) {
				const struct tp_arg *bt =
				    k_btid ? tp_args_find(p, s->args, k_btid) : NULL;
				const struct tp_arg *et =
				    k_etid ? tp_args_find(p, s->args, k_etid) : NULL;
				c->cross = bt && et && tp_arg_as_i64(et) >= 0 &&
				           tp_arg_as_i64(bt) != tp_arg_as_i64(et);
			}
			*(is_async ? &r->n_async : &r->n_ranges) += 1;
			r->ranges_cut += c->cut;
		}
	}
	group_marks(r);
	return group_ranges(r);
}

/* The op_stats leaves are merged while they are collected, in a tp_ixmap keyed on (graph,
 * name, step). graph and name are interned profile strings (one address per text; empty
 * texts are given one address, node_str), so addresses compare as the texts do. Merging on
 * the way keeps one entry per (graph, step, name) instead of one per execution: no sort of
 * every execution by strcmp, and no copies of them (docs/perf-notes/analysis.md). */
static const char *node_str(const char *s)
{
	return s[0] ? s : "";
}

static size_t node_hash(const struct cnode *n)
{
	uint64_t h = (uint64_t)(uintptr_t)n->graph * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)(uintptr_t)n->name * 0xC2B2AE3D27D4EB4Full;
	h ^= ((uint64_t)n->step << 1 | (uint64_t)n->has_step) * 0x165667B19E3779F9ull;
	return (size_t)(h ^ h >> 29);
}

static size_t node_hash_at(const void *ctx, size_t i)
{
	return node_hash(&((const struct report *)ctx)->nodes[i]);
}

static int node_same(const struct cnode *a, const struct cnode *b)
{
	return a->graph == b->graph && a->name == b->name && a->has_step == b->has_step &&
	       a->step == b->step;
}

/* Adds one execution: merged into its (graph, step, name) entry, whose representative (type,
 * args, first start) is the earliest execution (ties: the first collected); or appended as a
 * new entry. */
static int node_add(struct report *r, struct tp_ixmap *m, const struct cnode *nd)
{
	if (tp_ixmap_reserve(m, r->nnodes, node_hash_at, r))
		return TP_ENOMEM;
	size_t k;
	for (k = tp_ixmap_start(m, node_hash(nd)); m->slot[k]; k = tp_ixmap_next(m, k)) {
		struct cnode *e = &r->nodes[m->slot[k] - 1];
		if (!node_same(e, nd))
			continue;
		if (nd->start_ns < e->start_ns) {
			e->type = nd->type;
			e->args = nd->args;
			e->start_ns = nd->start_ns;
		}
		e->dur_ns += nd->dur_ns;
		e->bytes += nd->bytes;
		e->count++;
		return TP_OK;
	}
	struct cnode *g = tp_push(&r->nodes, sizeof *g, &r->nnodes, &r->cap_nodes);
	if (!g)
		return TP_ENOMEM;
	*g = *nd;
	m->slot[k] = (uint32_t)r->nnodes;
	return TP_OK;
}

/* Pass 1: steps (so operators outside their step's thread can find its graph), sorted by
 * (step, start). */
static int collect_steps(const struct tp_profile *p, const struct tp_cap_keys *k, struct report *r)
{
	int64_t ordinal = 0;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *tr = &p->tracks[ti];
		if (!tp_track_kind_is_host((enum tp_track_kind)tr->kind))
			continue;
		r->events_dropped += tr->dropped;
		for (size_t i = 0; i < tr->count && k->ty_step; i++) {
			const struct tp_slice *s = &tr->slices[i];
			if (tp_slice_type(tr, s) != k->ty_step)
				continue;
			if (k->k_cut && tp_args_find(p, s->args, k->k_cut)) {
				r->cut++; /* its end is the dump time, not a measured end */
				continue;
			}
			struct cstep *st =
			    tp_push(&r->steps, sizeof *st, &r->nsteps, &r->cap_steps);
			if (!st)
				return TP_ENOMEM;
			const struct tp_arg *sa = tp_args_find(p, s->args, k->k_step);
			const struct tp_arg *w = tp_args_find(p, s->args, k->k_warm);
			const struct tp_arg *ga = tp_args_find(p, s->args, k->k_graph);
			st->step = sa ? tp_arg_as_i64(sa) : ordinal;
			ordinal++;
			st->warmup = w && tp_arg_as_i64(w) != 0;
			st->graph = ga ? as_str(p, ga) : tp_str(p, tp_slice_name(tr, s));
			st->start_ns = s->start_ns;
			st->dur_ns = tp_slice_end(tr, s) - s->start_ns;
		}
	}
	if (r->nsteps)
		qsort(r->steps, r->nsteps, sizeof *r->steps, cmp_step_idx);
	return TP_OK;
}

/* The step a slice s of track tr belongs to (*has_step 0: none): its own step argument when
 * not negative, else (without one) that of cur, the step slice enclosing it on its track. */
static void step_of(const struct tp_profile *p, const struct tp_cap_keys *k,
                    const struct tp_slice *s, const struct tp_slice *cur, int inside, int *has_step,
                    int64_t *step)
{
	const struct tp_arg *sa = tp_args_find(p, s->args, k->k_step);
	*has_step = 0;
	*step = 0;
	if (sa && tp_arg_as_i64(sa) >= 0) {
		*has_step = 1;
		*step = tp_arg_as_i64(sa);
	} else if (inside && !sa) {
		const struct tp_arg *ca = tp_args_find(p, cur->args, k->k_step);
		if (ca) {
			*has_step = 1;
			*step = tp_arg_as_i64(ca);
		}
	}
}

/* Appends activity s of track tr (in step `step` when has_step). TP_OK / TP_ENOMEM. */
static int add_act(struct report *r, const struct tp_cap_keys *k, const struct tp_track *tr,
                   const struct tp_slice *s, int has_step, int64_t step)
{
	const struct tp_profile *p = r->p;
	struct cact *ac = tp_push(&r->acts, sizeof *ac, &r->nacts, &r->cap_acts);
	if (!ac)
		return TP_ENOMEM;
	ac->has_step = has_step;
	ac->step = step;
	ac->name = tp_str(p, tp_slice_name(tr, s));
	ac->meta = as_str(p, tp_args_find(p, s->args, k->k_meta));
	ac->start_ns = s->start_ns;
	ac->dur_ns = tp_slice_end(tr, s) - s->start_ns;
	ac->count = 1;
	return TP_OK;
}

/* The graph of an operator: that of the step slice cur enclosing it on its track (inside),
 * else that of the first step with its index, else "". */
static const char *graph_of(const struct report *r, const struct tp_cap_keys *k,
                            const struct tp_track *tr, const struct tp_slice *cur, int inside,
                            int has_step, int64_t step)
{
	const struct tp_profile *p = r->p;
	const char *graph = "";
	if (inside) {
		const struct tp_arg *cg = tp_args_find(p, cur->args, k->k_graph);
		graph = cg ? as_str(p, cg) : tp_str(p, tp_slice_name(tr, cur));
	} else if (has_step && r->nsteps) {
		/* First step with this index: lower bound by (step, start). */
		struct step_key key = {r->steps, {"", step, 0, INT64_MIN, 0}};
		size_t lo = tp_upper_bound(r->nsteps, step_not_before, &key);
		if (lo < r->nsteps && r->steps[lo].step == step)
			graph = r->steps[lo].graph;
	}
	return graph;
}

/* Adds operator execution s of track tr to the op_stats leaves (merged in map m). TP_OK /
 * TP_ENOMEM. */
static int add_op(struct report *r, struct tp_ixmap *m, const struct tp_cap_keys *k,
                  const struct tp_track *tr, const struct tp_slice *s, const char *graph,
                  int has_step, int64_t step)
{
	const struct tp_profile *p = r->p;
	struct cnode nd;
	nd.graph = node_str(graph);
	nd.name = node_str(tp_str(p, tp_slice_name(tr, s)));
	nd.type = as_str(p, tp_args_find(p, s->args, k->k_type));
	nd.step = step;
	nd.has_step = has_step;
	nd.args = s->args;
	nd.start_ns = s->start_ns;
	nd.dur_ns = tp_slice_end(tr, s) - s->start_ns;
	nd.count = 1;
	const struct tp_arg *b = tp_args_find(p, s->args, k->k_bytes);
	nd.bytes = b && tp_arg_as_i64(b) > 0 ? (uint64_t)tp_arg_as_i64(b) : 0;
	return node_add(r, m, &nd);
}

/* Pass 2: activities and (with `nodes`) operators with the step they belong to. TP_OK /
 * TP_ENOMEM. */
static int collect_acts_ops(const struct tp_profile *p, const struct tp_cap_keys *k,
                            struct report *r, int nodes)
{
	struct tp_ixmap nm = {NULL, 0};
	int st = TP_OK;
	for (size_t ti = 0; ti < p->num_tracks && !st; ti++) {
		const struct tp_track *tr = &p->tracks[ti];
		if (!tp_track_kind_is_host((enum tp_track_kind)tr->kind))
			continue;
		const struct tp_slice *cur = NULL;
		for (size_t i = 0; i < tr->count && !st; i++) {
			const struct tp_slice *s = &tr->slices[i];
			if (k->ty_step && tp_slice_type(tr, s) == k->ty_step) {
				cur = s;
				continue;
			}
			int is_act = k->ty_act && tp_slice_type(tr, s) == k->ty_act,
			    is_op = k->ty_op && tp_slice_type(tr, s) == k->ty_op;
			if (!is_act && !is_op)
				continue;
			if (k->k_cut && tp_args_find(p, s->args, k->k_cut)) {
				r->cut++;
				continue;
			}
			int inside = cur && s->start_ns >= cur->start_ns &&
			             tp_slice_end(tr, s) <= tp_slice_end(tr, cur);
			int has_step;
			int64_t step;
			step_of(p, k, s, cur, inside, &has_step, &step);
			if (is_act)
				st = add_act(r, k, tr, s, has_step, step);
			else if (nodes)
				st = add_op(r, &nm, k, tr, s,
				            graph_of(r, k, tr, cur, inside, has_step, step),
				            has_step, step);
		}
	}
	tp_ixmap_free(&nm);
	return st;
}

/* Merges repeated activities of one step, then orders them and the op_stats leaves for
 * output. */
static void merge_acts(struct report *r)
{
	if (r->nacts) {
		qsort(r->acts, r->nacts, sizeof *r->acts, cmp_act_merge);
		size_t o = 0;
		for (size_t i = 0; i < r->nacts; i++) {
			if (o && r->acts[o - 1].has_step == r->acts[i].has_step &&
			    r->acts[o - 1].step == r->acts[i].step &&
			    strcmp(r->acts[o - 1].name, r->acts[i].name) == 0) {
				r->acts[o - 1].dur_ns += r->acts[i].dur_ns;
				r->acts[o - 1].count++;
				continue;
			}
			r->acts[o++] = r->acts[i];
		}
		r->nacts = o;
		qsort(r->acts, r->nacts, sizeof *r->acts, cmp_act);
	}
	if (r->nnodes)
		qsort(r->nodes, r->nnodes, sizeof *r->nodes, cmp_node_out);
}

/* Overall statistics over the counted steps: batch size, latency and throughput. TP_OK /
 * TP_ENOMEM. */
static int step_stats(const struct tp_profile *p, struct report *r)
{
	const char *bm = tp_profile_get_meta(p, "batch_size");
	uint64_t bv;
	r->batch = 1;
	if (bm && tp_parse_u64(bm, strlen(bm), &bv) == 0 && bv > 0) {
		r->batch = bv;
		r->batch_from_meta = 1;
	}
	size_t nwarm = 0;
	for (size_t i = 0; i < r->nsteps; i++)
		nwarm += (size_t)r->steps[i].warmup;
	r->steps_warmup_counted = r->nsteps && nwarm == r->nsteps;
	if (r->nsteps) {
		int64_t *lat = tp_malloc(r->nsteps * sizeof *lat);
		double *thr = tp_malloc(r->nsteps * sizeof *thr);
		if (!lat || !thr) {
			tp_free(lat);
			tp_free(thr);
			return TP_ENOMEM;
		}
		size_t n = 0, nt = 0;
		for (size_t i = 0; i < r->nsteps; i++) {
			if (r->steps[i].warmup && !r->steps_warmup_counted)
				continue;
			lat[n++] = r->steps[i].dur_ns;
			r->counted_steps_ns += r->steps[i].dur_ns;
			if (r->steps[i].dur_ns > 0)
				thr[nt++] = (double)r->batch * 1e9 / (double)r->steps[i].dur_ns;
		}
		r->counted_steps = n;
		if (n) {
			tp_sort_ns(lat, n);
			r->have_lat = 1;
			r->lat_ms.min = (double)lat[0] / 1e6;
			r->lat_ms.max = (double)lat[n - 1] / 1e6;
			r->lat_ms.median = (double)tp_median_ns(lat, n) / 1e6;
			r->lat_ms.p99 = (double)tp_percentile_ns(lat, n, 99) / 1e6;
			r->lat_ms.mean = (double)r->counted_steps_ns / (double)n / 1e6;
		}
		if (nt) {
			qsort(thr, nt, sizeof *thr, cmp_dbl);
			double sum = 0;
			for (size_t i = 0; i < nt; i++)
				sum += thr[i];
			r->thr.min = thr[0];
			r->thr.max = thr[nt - 1];
			r->thr.median = median_dbl(thr, nt);
			r->thr.p99 = pct_dbl(thr, nt, 99);
			r->thr.mean = sum / (double)nt;
		}
		tp_free(lat);
		tp_free(thr);
	}
	return TP_OK;
}

int tp_capreport_collect(const struct tp_profile *p, const struct tp_analysis *a, struct report *r,
                         int nodes)
{
	memset(r, 0, sizeof *r);
	r->p = p;
	struct tp_cap_keys k;
	tp_cap_keys_of(p, &k);
	int st = collect_steps(p, &k, r);
	if (st == TP_OK)
		st = collect_acts_ops(p, &k, r, nodes);
	if (st == TP_OK) {
		merge_acts(r);
		st = tp_op_table_for(p, a, &r->own_ops, &r->ops);
	}
	if (st == TP_OK)
		st = collect_marks_ranges(p, r);
	if (st == TP_OK)
		st = step_stats(p, r);
	return st;
}
