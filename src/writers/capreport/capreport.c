/*
 * capreport.c — summary.json and summary.md of tpuprof captures. Collects the step,
 * activity and operator slices of a capture (TP_CAP_TYPE_* conventions of model.h), derives
 * overall latency / throughput statistics over the non-warm-up steps, and renders the
 * Cambricon-style app_stats / op_stats tree (§B.3) plus our own tables (§B.4). Layout:
 * docs/capture-reports.md. Owns only per-call scratch arrays.
 */
#include "writers/capreport/capreport.h"

#include "readers/capfile/capfile.h"

#include "analysis/optable.h"

#include <stdlib.h>
#include <string.h>

/* ---- collected data ---------------------------------------------------------------------- */

struct cstep {
	const char *graph;
	int64_t step;
	int warmup;
	int64_t start_ns, dur_ns;
};

struct cact {
	int64_t step;
	int has_step;
	const char *name, *meta;
	int64_t start_ns, dur_ns;
	uint64_t count;
};

/* One operator name inside one step (op_stats leaf); merged over repeated executions. */
struct cnode {
	const char *graph, *name, *type;
	int64_t step;
	int has_step;
	uint32_t args;
	int64_t start_ns, dur_ns;
	uint64_t count, bytes;
};

struct stats {
	double min, mean, median, p99, max;
};

/* One range (tpuprof_range_*) or async range (tpuprof_async_*) execution, or after merging,
 * one (kind, name, category) group with its statistics over the measured (not cut) ones. */
struct crange {
	const char *kind, *name, *category; /* kind: TP_CAPFILE_TYPE_RANGE or _ASYNC */
	int64_t dur_ns;
	uint64_t count, cut, cross; /* executions, cut short by the capture's end, cross-thread */
	int64_t total_ns;           /* over the measured ones */
	int have;                   /* any measured: lat is valid */
	struct stats lat;           /* ms */
};

/* Instant marks grouped by (name, category). */
struct cmark {
	const char *name, *category;
	uint64_t count;
};

struct report {
	const struct tp_profile *p;
	struct cstep *steps;
	size_t nsteps, cap_steps;
	struct cact *acts;
	size_t nacts, cap_acts;
	struct cnode *nodes;
	size_t nnodes, cap_nodes;
	const struct tp_op_table *ops; /* the analysis' (tp_op_table_for), or own_ops */
	struct tp_op_table own_ops;
	size_t counted_steps;
	int steps_warmup_counted; /* every step was warm-up, so all were counted */
	int64_t counted_steps_ns;
	int have_lat;
	struct stats lat_ms, thr;
	uint64_t batch;
	int batch_from_meta;
	uint64_t events_dropped;
	uint64_t cut;          /* scopes cut short by the end of the capture, left out */
	struct crange *ranges; /* grouped, most total time first */
	size_t nranges, cap_ranges;
	struct cmark *marks; /* grouped, most frequent first */
	size_t nmarks, cap_marks;
	uint64_t n_ranges, n_async, n_marks, ranges_cut;
};

static const char *as_str(const struct tp_profile *p, const struct tp_arg *a)
{
	return a && a->type == TP_ARG_STR ? tp_str(p, a->v.s) : "";
}

static int cmp_step_idx(const void *x, const void *y)
{
	const struct cstep *a = x, *b = y;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return strcmp(a->graph, b->graph);
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
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
	if (a->has_step != b->has_step)
		return a->has_step - b->has_step;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_act_merge(const void *x, const void *y)
{
	const struct cact *a = x, *b = y;
	if (a->has_step != b->has_step)
		return a->has_step - b->has_step;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static int cmp_node_head(const struct cnode *a, const struct cnode *b)
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
	int c = cmp_node_head(a, b);
	if (c)
		return c;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void report_free(struct report *r)
{
	tp_free(r->steps);
	tp_free(r->acts);
	tp_free(r->nodes);
	tp_free(r->ranges);
	tp_free(r->marks);
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

/* Marks, ranges and async ranges (the TP_CAPFILE_TYPE_* slices of capfile.h) of every thread
 * track, async lanes included: counts, cut-short and cross-thread counts, and per (kind, name,
 * category) latency statistics over the measured executions (a range cut short by the end of
 * the capture has no measured end: counted, never in a statistic). */
static int collect_marks_ranges(const struct tp_profile *p, struct report *r)
{
	uint32_t ty_mark = tp_profile_find_str(p, TP_CAPFILE_TYPE_MARK);
	uint32_t ty_range = tp_profile_find_str(p, TP_CAPFILE_TYPE_RANGE);
	uint32_t ty_async = tp_profile_find_str(p, TP_CAPFILE_TYPE_ASYNC);
	uint32_t k_cut = tp_profile_find_str(p, TP_CAPFILE_KEY_CUT);
	uint32_t k_cat = tp_profile_find_str(p, TP_CAPFILE_KEY_CATEGORY);
	uint32_t k_btid = tp_profile_find_str(p, TP_CAPFILE_KEY_BEGIN_TID);
	uint32_t k_etid = tp_profile_find_str(p, TP_CAPFILE_KEY_END_TID);
	if (!ty_mark && !ty_range && !ty_async)
		return TP_OK;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *tr = &p->tracks[ti];
		if (tr->kind != TP_TRACK_THREAD && tr->kind != TP_TRACK_HOST)
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
				    tp_grow(r->marks, sizeof *g, r->nmarks + 1, &r->cap_marks);
				if (!g)
					return TP_ENOMEM;
				r->marks = g;
				r->marks[r->nmarks++] =
				    (struct cmark){tp_str(p, tp_slice_name(tr, s)), cat, 1};
				r->n_marks++;
				continue;
			}
			struct crange *g =
			    tp_grow(r->ranges, sizeof *g, r->nranges + 1, &r->cap_ranges);
			if (!g)
				return TP_ENOMEM;
			r->ranges = g;
			struct crange *c = &r->ranges[r->nranges++];
			memset(c, 0, sizeof *c);
			c->kind = is_async ? TP_CAPFILE_TYPE_ASYNC : TP_CAPFILE_TYPE_RANGE;
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
	if (r->nmarks) {
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
	if (r->nranges) {
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
	}
	return TP_OK;
}

/* The op_stats leaves are merged while they are collected, in a tp_ixmap keyed on (graph,
 * name, step). graph and name are interned profile strings (one address per text; empty
 * texts are given one address, node_str), so addresses compare as the texts do. Merging on
 * the way keeps one entry per (graph, step, name) instead of one per execution: sorting every
 * execution by strcmp was 1.1 G of the 2.6 G instructions of a 32 MiB Chrome trace's
 * summaries, and held two copies of 80 bytes per execution. */
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
	struct cnode *g = tp_grow(r->nodes, sizeof *g, r->nnodes + 1, &r->cap_nodes);
	if (!g)
		return TP_ENOMEM;
	r->nodes = g;
	r->nodes[r->nnodes] = *nd;
	m->slot[k] = (uint32_t)++r->nnodes;
	return TP_OK;
}

/* Gathers the report; `nodes`: also the op_stats leaves (only summary.json prints them).
 * `a` may be NULL (the operator table is then built here). */
static int collect(const struct tp_profile *p, const struct tp_analysis *a, struct report *r,
                   int nodes)
{
	memset(r, 0, sizeof *r);
	r->p = p;
	uint32_t ty_step = tp_profile_find_str(p, TP_CAP_TYPE_STEP),
	         ty_act = tp_profile_find_str(p, TP_CAP_TYPE_ACTIVITY);
	uint32_t ty_op = tp_profile_find_str(p, TP_CAP_TYPE_OP);
	uint32_t k_step = tp_profile_find_str(p, TP_CAP_KEY_STEP),
	         k_warm = tp_profile_find_str(p, TP_CAP_KEY_WARMUP);
	uint32_t k_graph = tp_profile_find_str(p, TP_CAP_KEY_GRAPH),
	         k_meta = tp_profile_find_str(p, TP_CAP_KEY_META);
	uint32_t k_type = tp_profile_find_str(p, TP_CAP_KEY_OP_TYPE),
	         k_bytes = tp_profile_find_str(p, TP_CAP_KEY_BYTES);
	uint32_t k_cut = tp_profile_find_str(p, TP_CAPFILE_KEY_CUT);

	/* Pass 1: steps (so operators outside their step's thread can find its graph). */
	int64_t ordinal = 0;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *tr = &p->tracks[ti];
		if (tr->kind != TP_TRACK_THREAD && tr->kind != TP_TRACK_HOST)
			continue;
		r->events_dropped += tr->dropped;
		for (size_t k = 0; k < tr->count && ty_step; k++) {
			const struct tp_slice *s = &tr->slices[k];
			if (tp_slice_type(tr, s) != ty_step)
				continue;
			if (k_cut && tp_args_find(p, s->args, k_cut)) {
				r->cut++; /* its end is the dump time, not a measured end */
				continue;
			}
			struct cstep *g =
			    tp_grow(r->steps, sizeof *g, r->nsteps + 1, &r->cap_steps);
			if (!g)
				return TP_ENOMEM;
			r->steps = g;
			const struct tp_arg *sa = tp_args_find(p, s->args, k_step);
			const struct tp_arg *w = tp_args_find(p, s->args, k_warm);
			const struct tp_arg *ga = tp_args_find(p, s->args, k_graph);
			struct cstep *st = &r->steps[r->nsteps++];
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

	/* Pass 2: activities and operators with the step they belong to. */
	struct tp_ixmap nm = {NULL, 0};
	int st = TP_OK;
	for (size_t ti = 0; ti < p->num_tracks && !st; ti++) {
		const struct tp_track *tr = &p->tracks[ti];
		if (tr->kind != TP_TRACK_THREAD && tr->kind != TP_TRACK_HOST)
			continue;
		const struct tp_slice *cur = NULL;
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *s = &tr->slices[k];
			if (ty_step && tp_slice_type(tr, s) == ty_step) {
				cur = s;
				continue;
			}
			int is_act = ty_act && tp_slice_type(tr, s) == ty_act,
			    is_op = ty_op && tp_slice_type(tr, s) == ty_op;
			if (!is_act && !is_op)
				continue;
			if (k_cut && tp_args_find(p, s->args, k_cut)) {
				r->cut++;
				continue;
			}
			const struct tp_arg *sa = tp_args_find(p, s->args, k_step);
			int inside = cur && s->start_ns >= cur->start_ns &&
			             tp_slice_end(tr, s) <= tp_slice_end(tr, cur);
			int has_step = 0;
			int64_t step = 0;
			const char *graph = "";
			if (sa && tp_arg_as_i64(sa) >= 0) {
				has_step = 1;
				step = tp_arg_as_i64(sa);
			} else if (inside && !sa) {
				const struct tp_arg *ca = tp_args_find(p, cur->args, k_step);
				if (ca) {
					has_step = 1;
					step = tp_arg_as_i64(ca);
				}
			}
			if (is_act) {
				struct cact *g =
				    tp_grow(r->acts, sizeof *g, r->nacts + 1, &r->cap_acts);
				if (!g) {
					st = TP_ENOMEM;
					break;
				}
				r->acts = g;
				struct cact *ac = &r->acts[r->nacts++];
				ac->has_step = has_step;
				ac->step = step;
				ac->name = tp_str(p, tp_slice_name(tr, s));
				ac->meta = as_str(p, tp_args_find(p, s->args, k_meta));
				ac->start_ns = s->start_ns;
				ac->dur_ns = tp_slice_end(tr, s) - s->start_ns;
				ac->count = 1;
				continue;
			}
			if (!nodes)
				continue;
			if (inside) {
				const struct tp_arg *cg = tp_args_find(p, cur->args, k_graph);
				graph = cg ? as_str(p, cg) : tp_str(p, tp_slice_name(tr, cur));
			} else if (has_step && r->nsteps) {
				struct cstep key = {"", step, 0, INT64_MIN, 0};
				/* First step with this index: lower bound by (step, start). */
				size_t lo = 0, hi = r->nsteps;
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;
					if (cmp_step_idx(&r->steps[mid], &key) < 0)
						lo = mid + 1;
					else
						hi = mid;
				}
				if (lo < r->nsteps && r->steps[lo].step == step)
					graph = r->steps[lo].graph;
			}
			struct cnode nd;
			nd.graph = node_str(graph);
			nd.name = node_str(tp_str(p, tp_slice_name(tr, s)));
			nd.type = as_str(p, tp_args_find(p, s->args, k_type));
			nd.step = step;
			nd.has_step = has_step;
			nd.args = s->args;
			nd.start_ns = s->start_ns;
			nd.dur_ns = tp_slice_end(tr, s) - s->start_ns;
			nd.count = 1;
			const struct tp_arg *b = tp_args_find(p, s->args, k_bytes);
			nd.bytes = b && tp_arg_as_i64(b) > 0 ? (uint64_t)tp_arg_as_i64(b) : 0;
			if ((st = node_add(r, &nm, &nd)))
				break;
		}
	}
	tp_ixmap_free(&nm);
	if (st)
		return st;

	/* Merge repeated activities of one step and repeated operator names of one step. */
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

	st = tp_op_table_for(p, a, &r->own_ops, &r->ops);
	if (st)
		return st;
	st = collect_marks_ranges(p, r);
	if (st)
		return st;

	/* Overall statistics over the counted steps. */
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
			qsort(lat, n, sizeof *lat, cmp_i64);
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

/* ---- helpers shared by both renderers ------------------------------------------------------ */

static void ms_ns(struct tp_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	tp_buf_printf(b, "%s%llu.%06llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000),
	              (unsigned long long)(a % 1000000));
}

/* Per-type aggregate over the operator table's counted executions. */
struct typeagg {
	const char *type;
	uint64_t runs;
	int64_t total_ns, min_ns, max_ns;
};

static int cmp_typeagg(const void *x, const void *y)
{
	const struct typeagg *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->type, b->type);
}

static struct typeagg *type_aggs(const struct report *r, size_t *n)
{
	*n = 0;
	struct typeagg *v = tp_calloc(r->ops->count ? r->ops->count : 1, sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < r->ops->count; i++) {
		const struct tp_op_row *o = &r->ops->rows[i];
		const char *ty = tp_str(r->p, o->op_type);
		size_t k = 0;
		while (k < *n && strcmp(v[k].type, ty) != 0)
			k++;
		if (k == *n) {
			v[k].type = ty;
			(*n)++;
		}
		if (!o->runs)
			continue;
		if (!v[k].runs || o->min_ns < v[k].min_ns)
			v[k].min_ns = o->min_ns;
		if (!v[k].runs || o->max_ns > v[k].max_ns)
			v[k].max_ns = o->max_ns;
		v[k].runs += o->runs;
		v[k].total_ns += o->total_ns;
	}
	qsort(v, *n, sizeof *v, cmp_typeagg);
	return v;
}

/* Operator rows by mean latency, slowest first; ties by name then type. */
static int cmp_slow(const void *x, const void *y)
{
	const struct tp_op_row *a = *(const struct tp_op_row *const *)x;
	const struct tp_op_row *b = *(const struct tp_op_row *const *)y;
	if (a->mean_ns != b->mean_ns)
		return a->mean_ns > b->mean_ns ? -1 : 1;
	/* Rows are already in a deterministic order (first execution, name, type), and their
	 * addresses follow it, so the address is a stable tie-break. */
	return (a > b) - (a < b);
}

static const struct tp_op_row **slowest(const struct report *r, size_t *n)
{
	const struct tp_op_row **v = tp_malloc((r->ops->count ? r->ops->count : 1) * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < r->ops->count; i++)
		v[i] = &r->ops->rows[i];
	qsort(v, r->ops->count, sizeof *v, cmp_slow);
	*n = r->ops->count < TP_CAPREPORT_TOP_OPS ? r->ops->count : TP_CAPREPORT_TOP_OPS;
	return v;
}

/* Number of parts of a ';'-joined list (an empty string has none). */
static size_t count_parts(const char *s)
{
	if (!*s)
		return 0;
	size_t n = 1;
	for (; *s; s++)
		n += *s == ';';
	return n;
}

/* Part `idx` of a ';'-joined list as (*b, *len); empty if there are fewer parts. */
static void part(const char *s, size_t idx, const char **b, size_t *len)
{
	for (size_t i = 0; i < idx && s; i++) {
		s = strchr(s, ';');
		if (s)
			s++;
	}
	if (!s) {
		*b = "";
		*len = 0;
		return;
	}
	const char *e = strchr(s, ';');
	*b = s;
	*len = e ? (size_t)(e - s) : strlen(s);
}

static void json_strn(struct tp_buf *b, const char *s, size_t n)
{
	char tmp[256];
	char *heap = NULL, *use = tmp;
	if (n >= sizeof tmp) {
		if (!(heap = tp_malloc(n + 1))) {
			b->oom = 1;
			return;
		}
		use = heap;
	}
	memcpy(use, s, n);
	use[n] = 0;
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, use);
	tp_buf_putc(b, '"');
	tp_free(heap);
}

static void json_key(struct tp_buf *b, const char *k)
{
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, k);
	tp_buf_puts(b, "\": ");
}

/* "output": {"0": {"name": .., "shape": [..], "type": ..}, ...} from the ';' lists. */
static void json_outputs(struct tp_buf *b, const struct tp_profile *p, uint32_t args)
{
	const char *names = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUTS);
	const char *shapes = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUT_SHAPES);
	const char *types = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUT_DTYPES);
	size_t n = count_parts(names), m;
	if ((m = count_parts(shapes)) > n)
		n = m;
	if ((m = count_parts(types)) > n)
		n = m;
	tp_buf_puts(b, "{");
	for (size_t i = 0; i < n; i++) {
		const char *s;
		size_t len;
		tp_buf_printf(b, "%s\"%zu\": {\"name\": ", i ? ", " : "", i);
		part(names, i, &s, &len);
		json_strn(b, s, len);
		tp_buf_puts(b, ", \"shape\": ");
		part(shapes, i, &s, &len);
		/* Dims as integers when every one parses; otherwise the text as recorded. */
		int ok = 1;
		for (size_t k = 0, st = 0; k <= len && ok && len; k++)
			if (k == len || s[k] == 'x') {
				int64_t v;
				ok = tp_parse_i64(s + st, k - st, &v) == 0;
				st = k + 1;
			}
		if (ok) {
			tp_buf_putc(b, '[');
			for (size_t k = 0, st = 0; k <= len && len; k++)
				if (k == len || s[k] == 'x') {
					int64_t v = 0;
					tp_parse_i64(s + st, k - st, &v);
					tp_buf_printf(b, "%s%lld", st ? ", " : "", (long long)v);
					st = k + 1;
				}
			tp_buf_putc(b, ']');
		} else {
			json_strn(b, s, len);
		}
		tp_buf_puts(b, ", \"type\": ");
		part(types, i, &s, &len);
		json_strn(b, s, len);
		tp_buf_putc(b, '}');
	}
	tp_buf_puts(b, "}");
}

static void json_stats(struct tp_buf *b, const struct stats *s, int have, int decimals)
{
	if (!have) {
		tp_buf_puts(b, "null");
		return;
	}
	const double v[5] = {s->min, s->mean, s->median, s->p99, s->max};
	static const char *const k[5] = {"min", "mean", "median", "p99", "max"};
	tp_buf_putc(b, '{');
	for (int i = 0; i < 5; i++) {
		tp_buf_printf(b, "%s\"%s\": ", i ? ", " : "", k[i]);
		tp_buf_fixed(b, v[i], decimals);
	}
	tp_buf_putc(b, '}');
}

static void step_key(struct tp_buf *b, int has_step, int64_t step)
{
	if (has_step)
		tp_buf_printf(b, "\"%lld\": ", (long long)step);
	else
		tp_buf_puts(b, "\"none\": ");
}

/* ---- summary.json -------------------------------------------------------------------------- */

/* The flush point of tp_capreport_stream_json: hands b's bytes to the sink once there are
 * at least `at` of them and empties b. Once the sink has failed (`failed`), b keeps the rest
 * and nothing more is handed over. */
struct jflush {
	size_t at;
	tp_capreport_flush_fn fn;
	void *ctx;
	int failed;
};

static void jflush(struct jflush *f, struct tp_buf *b)
{
	if (!f->fn || f->failed || b->oom || b->len < f->at)
		return;
	if (f->fn(f->ctx, b->data, b->len) != 0) {
		f->failed = 1;
		return;
	}
	b->len = 0;
}

int tp_capreport_write_json(const struct tp_profile *p, const struct tp_analysis *a,
                            struct tp_buf *b)
{
	return tp_capreport_stream_json(p, a, b, 0, NULL, NULL);
}

int tp_capreport_stream_json(const struct tp_profile *p, const struct tp_analysis *a,
                             struct tp_buf *b, size_t flush_at, tp_capreport_flush_fn flush,
                             void *ctx)
{
	struct jflush fl = {flush_at, flush, ctx, 0};
	struct report r;
	struct typeagg *ta = NULL;
	size_t nta = 0;
	int st = collect(p, a, &r, 1);
	if (st || !(ta = type_aggs(&r, &nta))) {
		report_free(&r);
		b->oom = 1;
		return TP_ENOMEM;
	}
	tp_buf_puts(b, "{\n  \"format\": \"tpuprof-capture-summary\",\n  \"version\": 1,\n");
	tp_buf_puts(b, "  \"source\": ");
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, tp_str(p, p->source));
	tp_buf_puts(b, "\",\n  \"meta\": {");
	for (size_t i = 0; i < p->num_meta; i++) {
		tp_buf_puts(b, i ? ", " : "");
		json_key(b, tp_str(p, p->meta[i].key));
		tp_buf_putc(b, '"');
		tp_buf_json_str(b, tp_str(p, p->meta[i].value));
		tp_buf_putc(b, '"');
	}
	tp_buf_puts(b, "},\n");

	/* overall_stats */
	tp_buf_printf(b,
	              "  \"overall_stats\": {\n    \"batch_size\": %llu,\n"
	              "    \"batch_size_source\": \"%s\",\n",
	              (unsigned long long)r.batch, r.batch_from_meta ? "meta" : "assumed");
	size_t nwarm = 0;
	for (size_t i = 0; i < r.nsteps; i++)
		nwarm += (size_t)r.steps[i].warmup;
	tp_buf_printf(b,
	              "    \"steps\": %zu,\n    \"warmup_steps\": %zu,\n"
	              "    \"counted_steps\": %zu,\n    \"warmup_counted\": %s,\n",
	              r.nsteps, nwarm, r.counted_steps, r.steps_warmup_counted ? "true" : "false");
	tp_buf_puts(b, "    \"capture_span_ms\": ");
	ms_ns(b, p->span_end_ns - p->span_begin_ns);
	tp_buf_puts(b, ",\n    \"counted_steps_time_ms\": ");
	ms_ns(b, r.counted_steps_ns);
	tp_buf_puts(b, ",\n    \"latency_ms\": ");
	json_stats(b, &r.lat_ms, r.have_lat, 6);
	tp_buf_puts(b, ",\n    \"throughput_samples_per_s\": ");
	json_stats(b, &r.thr, r.have_lat, 3);
	tp_buf_printf(b,
	              ",\n    \"records_read\": %llu,\n"
	              "    \"events_dropped\": %llu,\n    \"records_dropped\": %llu,\n"
	              "    \"scopes_cut_short\": %llu,\n"
	              "    \"marks\": %llu,\n    \"ranges\": %llu,\n    \"async_ranges\": %llu,\n"
	              "    \"ranges_cut_short\": %llu\n  },\n",
	              (unsigned long long)p->stats.records_read,
	              (unsigned long long)r.events_dropped,
	              (unsigned long long)p->stats.records_dropped, (unsigned long long)r.cut,
	              (unsigned long long)r.n_marks, (unsigned long long)r.n_ranges,
	              (unsigned long long)r.n_async, (unsigned long long)r.ranges_cut);

	/* steps */
	tp_buf_puts(b, "  \"steps\": [");
	for (size_t i = 0; i < r.nsteps; i++) {
		const struct cstep *s = &r.steps[i];
		tp_buf_printf(b, "%s\n    {\"graph\": \"", i ? "," : "");
		tp_buf_json_str(b, s->graph);
		tp_buf_printf(b, "\", \"step\": %lld, \"warmup\": %s, \"latency_ms\": ",
		              (long long)s->step, s->warmup ? "true" : "false");
		ms_ns(b, s->dur_ns);
		tp_buf_putc(b, '}');
		jflush(&fl, b);
	}
	tp_buf_puts(b, r.nsteps ? "\n  ],\n" : "],\n");

	/* app_stats: step -> activity -> {duration_ms, count, meta} */
	tp_buf_puts(b, "  \"app_stats\": {");
	for (size_t i = 0; i < r.nacts;) {
		size_t j = i;
		tp_buf_puts(b, i ? ",\n    " : "\n    ");
		step_key(b, r.acts[i].has_step, r.acts[i].step);
		tp_buf_putc(b, '{');
		for (; j < r.nacts && r.acts[j].has_step == r.acts[i].has_step &&
		       r.acts[j].step == r.acts[i].step;
		     j++) {
			const struct cact *ac = &r.acts[j];
			tp_buf_puts(b, j > i ? ", " : "");
			json_key(b, ac->name);
			tp_buf_puts(b, "{\"duration_ms\": ");
			ms_ns(b, ac->dur_ns);
			tp_buf_printf(b, ", \"count\": %llu, \"meta\": \"",
			              (unsigned long long)ac->count);
			tp_buf_json_str(b, ac->meta);
			tp_buf_puts(b, "\"}");
		}
		tp_buf_putc(b, '}');
		i = j;
		jflush(&fl, b);
	}
	tp_buf_puts(b, r.nacts ? "\n  },\n" : "},\n");

	/* op_stats: graph -> step -> host -> device -> node */
	tp_buf_puts(b, "  \"op_stats\": {");
	for (size_t i = 0; i < r.nnodes;) {
		const char *graph = r.nodes[i].graph;
		tp_buf_puts(b, i ? ",\n    " : "\n    ");
		json_key(b, graph[0] ? graph : "(no graph)");
		tp_buf_putc(b, '{');
		size_t g0 = i;
		while (i < r.nnodes && strcmp(r.nodes[i].graph, graph) == 0) {
			size_t j = i;
			tp_buf_puts(b, i > g0 ? ",\n      " : "\n      ");
			step_key(b, r.nodes[i].has_step, r.nodes[i].step);
			tp_buf_puts(b, "{\"localhost\": {\"CPU\": {");
			for (; j < r.nnodes && cmp_node_head(&r.nodes[j], &r.nodes[i]) == 0; j++) {
				const struct cnode *nd = &r.nodes[j];
				tp_buf_puts(b, j > i ? ",\n        " : "\n        ");
				json_key(b, nd->name);
				tp_buf_puts(b, "{\"op_type\": \"");
				tp_buf_json_str(b, nd->type);
				tp_buf_puts(b, "\", \"duration_ms\": ");
				ms_ns(b, nd->dur_ns);
				tp_buf_printf(b, ", \"count\": %llu, \"output\": ",
				              (unsigned long long)nd->count);
				json_outputs(b, p, nd->args);
				tp_buf_printf(b, ", \"total_bytes\": %llu}",
				              (unsigned long long)nd->bytes);
				jflush(&fl, b);
			}
			tp_buf_puts(b, "}}}");
			i = j;
		}
		tp_buf_puts(b, "\n    }");
	}
	tp_buf_puts(b, r.nnodes ? "\n  },\n" : "},\n");

	/* op_type_stats */
	tp_buf_puts(b, "  \"op_type_stats\": [");
	for (size_t i = 0; i < nta; i++) {
		tp_buf_printf(b, "%s\n    {\"op_type\": \"", i ? "," : "");
		tp_buf_json_str(b, ta[i].type);
		tp_buf_printf(
		    b, "\", \"executions\": %llu, \"total_ms\": ", (unsigned long long)ta[i].runs);
		ms_ns(b, ta[i].total_ns);
		tp_buf_puts(b, ", \"mean_ms\": ");
		tp_buf_fixed(b, ta[i].runs ? (double)ta[i].total_ns / (double)ta[i].runs / 1e6 : 0,
		             6);
		tp_buf_puts(b, ", \"min_ms\": ");
		ms_ns(b, ta[i].min_ns);
		tp_buf_puts(b, ", \"max_ms\": ");
		ms_ns(b, ta[i].max_ns);
		tp_buf_puts(b, ", \"share_of_step_time_pct\": ");
		tp_buf_fixed(b,
		             r.counted_steps_ns
		                 ? 100.0 * (double)ta[i].total_ns / (double)r.counted_steps_ns
		                 : 0,
		             2);
		tp_buf_putc(b, '}');
		jflush(&fl, b);
	}
	tp_buf_puts(b, nta ? "\n  ],\n" : "],\n");

	/* operators (the ops.csv rows) */
	tp_buf_printf(b, "  \"operators_warmup_counted\": %s,\n  \"operators\": [",
	              r.ops->counted_warmup ? "true" : "false");
	for (size_t i = 0; i < r.ops->count; i++) {
		const struct tp_op_row *o = &r.ops->rows[i];
		tp_buf_printf(b, "%s\n    {\"name\": \"", i ? "," : "");
		tp_buf_json_str(b, tp_str(p, o->name));
		tp_buf_puts(b, "\", \"op_type\": \"");
		tp_buf_json_str(b, tp_str(p, o->op_type));
		tp_buf_printf(b, "\", \"executions\": %llu, \"warmup_executions\": %llu",
		              (unsigned long long)o->runs, (unsigned long long)o->runs_warmup);
		tp_buf_puts(b, ", \"mean_ms\": ");
		tp_buf_fixed(b, o->mean_ns / 1e6, 6);
		const int64_t v[4] = {o->min_ns, o->median_ns, o->p99_ns, o->max_ns};
		static const char *const k[4] = {"min_ms", "median_ms", "p99_ms", "max_ms"};
		for (int q = 0; q < 4; q++) {
			tp_buf_printf(b, ", \"%s\": ", k[q]);
			ms_ns(b, v[q]);
		}
		tp_buf_printf(b, ", \"bytes\": %llu, \"flops\": %llu, \"sparse_eligible\": %s}",
		              (unsigned long long)o->bytes, (unsigned long long)o->flops,
		              o->sparse_eligible ? "true" : "false");
		jflush(&fl, b);
	}
	tp_buf_puts(b, r.ops->count ? "\n  ],\n" : "],\n");

	/* range_stats: ranges and async ranges per (kind, name, category) */
	tp_buf_puts(b, "  \"range_stats\": [");
	for (size_t i = 0; i < r.nranges; i++) {
		const struct crange *g = &r.ranges[i];
		tp_buf_printf(b, "%s\n    {\"kind\": \"%s\", \"name\": \"", i ? "," : "", g->kind);
		tp_buf_json_str(b, g->name);
		tp_buf_puts(b, "\", \"category\": \"");
		tp_buf_json_str(b, g->category);
		tp_buf_printf(b,
		              "\", \"count\": %llu, \"cut_short\": %llu, \"cross_thread\": %llu, "
		              "\"total_ms\": ",
		              (unsigned long long)g->count, (unsigned long long)g->cut,
		              (unsigned long long)g->cross);
		ms_ns(b, g->total_ns);
		tp_buf_puts(b, ", \"latency_ms\": ");
		json_stats(b, &g->lat, g->have, 6);
		tp_buf_putc(b, '}');
		jflush(&fl, b);
	}
	tp_buf_puts(b, r.nranges ? "\n  ],\n" : "],\n");

	/* mark_stats: instant marks per (name, category) */
	tp_buf_puts(b, "  \"mark_stats\": [");
	for (size_t i = 0; i < r.nmarks; i++) {
		tp_buf_puts(b, i ? ",\n    {\"name\": \"" : "\n    {\"name\": \"");
		tp_buf_json_str(b, r.marks[i].name);
		tp_buf_puts(b, "\", \"category\": \"");
		tp_buf_json_str(b, r.marks[i].category);
		tp_buf_printf(b, "\", \"count\": %llu}", (unsigned long long)r.marks[i].count);
		jflush(&fl, b);
	}
	tp_buf_puts(b, r.nmarks ? "\n  ],\n" : "],\n");

	tp_buf_puts(b, "  \"notes\": [");
	for (size_t i = 0; i < p->num_notes; i++) {
		tp_buf_puts(b, i ? ", \"" : "\"");
		tp_buf_json_str(b, tp_str(p, p->notes[i].text));
		tp_buf_putc(b, '"');
	}
	tp_buf_puts(b, "]\n}\n");
	tp_free(ta);
	report_free(&r);
	return fl.failed ? TP_EOUTPUT : b->oom ? TP_ENOMEM : TP_OK;
}

/* ---- summary.md ---------------------------------------------------------------------------- */

void tp_md_cell(struct tp_buf *b, const char *s)
{
	for (const char *q = s; *q; q++) {
		char c = *q;
		switch (c) {
		case '&':
			tp_buf_puts(b, "&amp;");
			break;
		case '<':
			tp_buf_puts(b, "&lt;");
			break;
		case '>':
			tp_buf_puts(b, "&gt;");
			break;
		case '\n':
		case '\r':
		case '\t':
			tp_buf_putc(b, ' ');
			break;
		case '|':
		case '\\':
		case '`':
		case '*':
		case '_':
		case '[':
		case ']':
		case '#':
		case '~':
		case '!':
			tp_buf_putc(b, '\\');
			tp_buf_putc(b, c);
			break;
		default:
			tp_buf_putc(b, c);
		}
	}
}

static void md_outputs(struct tp_buf *b, const struct tp_profile *p, uint32_t args)
{
	const char *shapes = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUT_SHAPES);
	const char *types = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUT_DTYPES);
	size_t n = count_parts(shapes), m = count_parts(types);
	if (m > n)
		n = m;
	struct tp_buf t;
	tp_buf_init(&t);
	for (size_t i = 0; i < n; i++) {
		const char *s;
		size_t len;
		tp_buf_printf(&t, "%s%zu:", i ? ", " : "", i);
		part(types, i, &s, &len);
		tp_buf_put(&t, s, len);
		tp_buf_putc(&t, '[');
		part(shapes, i, &s, &len);
		tp_buf_put(&t, s, len);
		tp_buf_putc(&t, ']');
	}
	if (t.oom)
		b->oom = 1;
	else if (t.len)
		tp_md_cell(b, t.data);
	tp_buf_free(&t);
}

int tp_capreport_write_md(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	struct report r;
	struct typeagg *ta = NULL;
	const struct tp_op_row **slow = NULL;
	size_t nta = 0, nslow = 0;
	int st = collect(p, a, &r, 0);
	if (st || !(ta = type_aggs(&r, &nta)) || !(slow = slowest(&r, &nslow))) {
		tp_free(ta);
		report_free(&r);
		b->oom = 1;
		return TP_ENOMEM;
	}
	tp_buf_puts(b, "# tpuprof capture summary\n\n");
	for (size_t i = 0; i < p->num_devices; i++) {
		tp_buf_puts(b, i ? ", " : "Processes: ");
		tp_md_cell(b, tp_str(p, p->devices[i].name));
	}
	if (p->num_devices)
		tp_buf_puts(b, "\n\n");
	tp_buf_puts(b,
	            "Times are in milliseconds (ms). Statistics count the non-warm-up steps and "
	            "operator executions only.\n\n## Overall\n\n| Metric | Value |\n|---|---|\n");
	size_t nwarm = 0;
	for (size_t i = 0; i < r.nsteps; i++)
		nwarm += (size_t)r.steps[i].warmup;
	tp_buf_printf(b, "| Steps | %zu (%zu warm-up%s) |\n", r.nsteps, nwarm,
	              r.steps_warmup_counted ? ", counted because every step is warm-up"
	                                     : " excluded");
	if (r.batch_from_meta)
		tp_buf_printf(b, "| Batch size | %llu |\n", (unsigned long long)r.batch);
	else
		tp_buf_puts(b, "| Batch size | 1 (assumed: the capture does not record it) |\n");
	tp_buf_puts(b, "| Capture span (ms) | ");
	ms_ns(b, p->span_end_ns - p->span_begin_ns);
	tp_buf_puts(b, " |\n| Counted steps time (ms) | ");
	ms_ns(b, r.counted_steps_ns);
	/* records_dropped already includes every track's drops: count them once. */
	tp_buf_printf(b, " |\n| Events dropped | %llu |\n",
	              (unsigned long long)p->stats.records_dropped);
	if (r.cut)
		tp_buf_printf(b,
		              "| Scopes cut short by the end of the capture (excluded) | %llu |\n",
		              (unsigned long long)r.cut);
	if (r.n_marks || r.n_ranges || r.n_async)
		tp_buf_printf(
		    b, "| Marks / ranges / async ranges | %llu / %llu / %llu (%llu cut short) |\n",
		    (unsigned long long)r.n_marks, (unsigned long long)r.n_ranges,
		    (unsigned long long)r.n_async, (unsigned long long)r.ranges_cut);
	tp_buf_putc(b, '\n');
	if (r.have_lat) {
		tp_buf_puts(b, "| Statistic | Min | Mean | Median | P99 | Max |\n"
		               "|---|---:|---:|---:|---:|---:|\n| Latency (ms) |");
		const double lv[5] = {r.lat_ms.min, r.lat_ms.mean, r.lat_ms.median, r.lat_ms.p99,
		                      r.lat_ms.max};
		for (int i = 0; i < 5; i++) {
			tp_buf_putc(b, ' ');
			tp_buf_fixed(b, lv[i], 6);
			tp_buf_puts(b, " |");
		}
		tp_buf_puts(b, "\n| Throughput (samples/s) |");
		const double tv[5] = {r.thr.min, r.thr.mean, r.thr.median, r.thr.p99, r.thr.max};
		for (int i = 0; i < 5; i++) {
			tp_buf_putc(b, ' ');
			tp_buf_fixed(b, tv[i], 3);
			tp_buf_puts(b, " |");
		}
		tp_buf_puts(b, "\n\n");
	} else {
		tp_buf_puts(b, "No steps were recorded, so there are no latency statistics.\n\n");
	}

	tp_buf_puts(b, "## Activities\n\n");
	if (!r.nacts) {
		tp_buf_puts(b, "No activities were recorded.\n\n");
	} else {
		tp_buf_puts(b, "| Step | Activity | Duration (ms) | Count | Meta |\n"
		               "|---|---|---:|---:|---|\n");
		size_t shown = r.nacts < TP_CAPREPORT_MD_ACTIVITY_ROWS
		                   ? r.nacts
		                   : TP_CAPREPORT_MD_ACTIVITY_ROWS;
		for (size_t i = 0; i < shown; i++) {
			const struct cact *ac = &r.acts[i];
			if (ac->has_step)
				tp_buf_printf(b, "| %lld | ", (long long)ac->step);
			else
				tp_buf_puts(b, "| - | ");
			tp_md_cell(b, ac->name);
			tp_buf_puts(b, " | ");
			ms_ns(b, ac->dur_ns);
			tp_buf_printf(b, " | %llu | ", (unsigned long long)ac->count);
			tp_md_cell(b, ac->meta);
			tp_buf_puts(b, " |\n");
		}
		if (shown < r.nacts)
			tp_buf_printf(b, "\n%zu more rows are in summary.json (app_stats).\n",
			              r.nacts - shown);
		tp_buf_putc(b, '\n');
	}

	tp_buf_puts(b, "## Operator types\n\n");
	if (!nta) {
		tp_buf_puts(b, "No operators were recorded.\n\n");
	} else {
		tp_buf_puts(b,
		            "| Type | Executions | Total (ms) | Mean (ms) | Min (ms) | Max (ms) | "
		            "% of step time |\n|---|---:|---:|---:|---:|---:|---:|\n");
		for (size_t i = 0; i < nta; i++) {
			tp_buf_puts(b, "| ");
			tp_md_cell(b, ta[i].type[0] ? ta[i].type : "(none)");
			tp_buf_printf(b, " | %llu | ", (unsigned long long)ta[i].runs);
			ms_ns(b, ta[i].total_ns);
			tp_buf_puts(b, " | ");
			tp_buf_fixed(
			    b, ta[i].runs ? (double)ta[i].total_ns / (double)ta[i].runs / 1e6 : 0,
			    6);
			tp_buf_puts(b, " | ");
			ms_ns(b, ta[i].min_ns);
			tp_buf_puts(b, " | ");
			ms_ns(b, ta[i].max_ns);
			tp_buf_puts(b, " | ");
			tp_buf_fixed(b,
			             r.counted_steps_ns ? 100.0 * (double)ta[i].total_ns /
			                                      (double)r.counted_steps_ns
			                                : 0,
			             2);
			tp_buf_puts(b, " |\n");
		}
		tp_buf_putc(b, '\n');

		tp_buf_printf(b,
		              "## Slowest operators\n\nThe %zu operators with the highest mean "
		              "latency (all %zu are in ops.csv).\n\n",
		              nslow, r.ops->count);
		tp_buf_puts(b, "| Operator | Type | Mean (ms) | Min (ms) | Max (ms) | P99 (ms) | "
		               "Executions | Bytes | FLOPs | Outputs |\n"
		               "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
		for (size_t i = 0; i < nslow; i++) {
			const struct tp_op_row *o = slow[i];
			tp_buf_puts(b, "| ");
			tp_md_cell(b, tp_str(p, o->name));
			tp_buf_puts(b, " | ");
			tp_md_cell(b, tp_str(p, o->op_type));
			tp_buf_puts(b, " | ");
			tp_buf_fixed(b, o->mean_ns / 1e6, 6);
			const int64_t v[3] = {o->min_ns, o->max_ns, o->p99_ns};
			for (int q = 0; q < 3; q++) {
				tp_buf_puts(b, " | ");
				ms_ns(b, v[q]);
			}
			tp_buf_printf(b, " | %llu | %llu | %llu | ", (unsigned long long)o->runs,
			              (unsigned long long)o->bytes, (unsigned long long)o->flops);
			md_outputs(b, p, o->args);
			tp_buf_puts(b, " |\n");
		}
		tp_buf_putc(b, '\n');
	}
	if (r.nranges) {
		tp_buf_printf(
		    b,
		    "## Ranges\n\n%llu ranges and %llu async ranges; statistics over the "
		    "measured ones (%llu cut short by the end of the capture are counted, "
		    "not measured).\n\n",
		    (unsigned long long)r.n_ranges, (unsigned long long)r.n_async,
		    (unsigned long long)r.ranges_cut);
		tp_buf_puts(
		    b, "| Kind | Name | Category | Count | Cut short | Cross-thread | "
		       "Total (ms) | Mean (ms) | Median (ms) | P99 (ms) | Min (ms) | Max (ms) |\n"
		       "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (size_t i = 0; i < r.nranges; i++) {
			const struct crange *g = &r.ranges[i];
			tp_buf_printf(b, "| %s | ", g->kind);
			tp_md_cell(b, g->name);
			tp_buf_puts(b, " | ");
			tp_md_cell(b, g->category[0] ? g->category : "-");
			tp_buf_printf(b, " | %llu | %llu | %llu | ", (unsigned long long)g->count,
			              (unsigned long long)g->cut, (unsigned long long)g->cross);
			ms_ns(b, g->total_ns);
			const double v[5] = {g->lat.mean, g->lat.median, g->lat.p99, g->lat.min,
			                     g->lat.max};
			for (int q = 0; q < 5; q++) {
				tp_buf_puts(b, " | ");
				if (g->have)
					tp_buf_fixed(b, v[q], 6);
				else
					tp_buf_puts(b, "-");
			}
			tp_buf_puts(b, " |\n");
		}
		tp_buf_putc(b, '\n');
	}
	if (r.nmarks) {
		tp_buf_printf(b,
		              "## Marks\n\n%llu instant marks.\n\n| Name | Category | Count |\n"
		              "|---|---|---:|\n",
		              (unsigned long long)r.n_marks);
		for (size_t i = 0; i < r.nmarks; i++) {
			tp_buf_puts(b, "| ");
			tp_md_cell(b, r.marks[i].name);
			tp_buf_puts(b, " | ");
			tp_md_cell(b, r.marks[i].category[0] ? r.marks[i].category : "-");
			tp_buf_printf(b, " | %llu |\n", (unsigned long long)r.marks[i].count);
		}
		tp_buf_putc(b, '\n');
	}
	if (p->num_notes) {
		tp_buf_puts(b, "## Notes\n\n");
		for (size_t i = 0; i < p->num_notes; i++) {
			tp_buf_puts(b, "- ");
			tp_md_cell(b, tp_str(p, p->notes[i].text));
			tp_buf_putc(b, '\n');
		}
		tp_buf_putc(b, '\n');
	}
	tp_free(slow);
	tp_free(ta);
	report_free(&r);
	return b->oom ? TP_ENOMEM : TP_OK;
}

static int write_capmd(const struct tp_profile *p, const struct tp_analysis *a,
                       const struct tp_out_opts *o, struct tp_diag *d)
{
	if (p->arch != TP_ARCH_CPU)
		return TP_OK;
	struct tp_buf b;
	tp_buf_init(&b);
	int st = tp_capreport_write_md(p, a, &b);
	/* No control byte from an operator name reaches the Markdown (text-safety layer). */
	if (!st)
		tp_buf_clean(&b, 0, TP_TEXT_TERM);
	if (st)
		tp_diag_set(d, st, "summary.md: %s", tp_strerror(st));
	else
		st = tp_write_buf_file(o->out_dir, "summary.md", &b, d);
	tp_buf_free(&b);
	return st;
}

const struct tp_output tp_output_capmd = {
    .name = "summary-md",
    .file = "summary.md",
    .enable_flag = NULL,
    .disable_flag = "--disable_summary",
    .default_on = 1,
    .doc = "capture summary as Markdown: latency/throughput, activities, operator types, "
           "slowest operators (captures only)",
    .write = write_capmd,
};
