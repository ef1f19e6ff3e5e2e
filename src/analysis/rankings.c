/*
 * rankings.c — command types, layers and (captures) operator types ranked by time: the rank
 * map that groups slices by (core, track kind, name) in O(n), the bounded heap that keeps the
 * top layers of a dump with millions, and the three rankings of struct tp_analysis. Owns the
 * arrays top_cmds, top_layers and op_types, freed by tp_analysis_free.
 */
#include "analysis/analysis_int.h"

#include <stdlib.h>
#include <string.h>

static int rank_cmp(const void *x, const void *y)
{
	const struct tp_rank *a = x, *b = y;
	/* Largest total first. */
	int64_t ka[] = {b->total_ns, a->core, a->type, a->name, a->index};
	int64_t kb[] = {a->total_ns, b->core, b->type, b->name, b->index};
	return tp_cmp_keys(ka, kb, 5);
}

/* Keeps the `cap` best ranks (rank_cmp order) in h[0..*n): a max-heap on rank_cmp, so the root
 * is the worst kept entry and a better candidate replaces it. */
static void sift_down(struct tp_rank *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && rank_cmp(&h[l], &h[m]) > 0)
			m = l;
		if (r < n && rank_cmp(&h[r], &h[m]) > 0)
			m = r;
		if (m == i)
			return;
		struct tp_rank t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_offer(struct tp_rank *h, size_t *n, size_t cap, const struct tp_rank *r)
{
	if (*n < cap) {
		size_t i = (*n)++;
		h[i] = *r;
		while (i > 0 && rank_cmp(&h[(i - 1) / 2], &h[i]) < 0) {
			struct tp_rank t = h[i];
			h[i] = h[(i - 1) / 2];
			h[(i - 1) / 2] = t;
			i = (i - 1) / 2;
		}
		return;
	}
	if (cap == 0 || rank_cmp(r, &h[0]) >= 0)
		return;
	h[0] = *r;
	sift_down(h, *n, 0);
}

static uint64_t rkey(int32_t core, uint32_t type, uint32_t name)
{
	return ((uint64_t)(uint32_t)core * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)type << 40) ^ name;
}

static size_t rkey_at(const void *ctx, size_t i)
{
	const struct tp_rank *r = &((const struct tp_rank *)ctx)[i];
	return (size_t)rkey(r->core, r->type, r->name);
}

struct tp_rank *tp_analysis_rank_get(struct tp_rank_map *m, int32_t core, uint32_t type,
                                     uint32_t name)
{
	if (tp_ixmap_reserve(&m->ix, m->n, rkey_at, m->v))
		return NULL;
	size_t h;
	for (h = tp_ixmap_start(&m->ix, (size_t)rkey(core, type, name)); m->ix.slot[h];
	     h = tp_ixmap_next(&m->ix, h)) {
		struct tp_rank *r = &m->v[m->ix.slot[h] - 1];
		if (r->core == core && r->type == type && r->name == name)
			return r;
	}
	struct tp_rank *nv = tp_grow(m->v, sizeof *nv, m->n + 1, &m->cap);
	if (!nv)
		return NULL;
	m->v = nv;
	struct tp_rank *r = &m->v[m->n];
	memset(r, 0, sizeof *r);
	r->core = core;
	r->type = type;
	r->name = name;
	r->index = -1;
	r->min_ns = INT64_MAX;
	m->ix.slot[h] = (uint32_t)++m->n;
	return r;
}

/* Frees what a rank map holds. */
void tp_analysis_rank_map_free(struct tp_rank_map *m)
{
	tp_free(m->v);
	tp_ixmap_free(&m->ix);
}

/* Hands the ranks of m over as (*v, *n), sorted by rank_cmp with shares of `total`. */
static void rank_map_take(struct tp_rank_map *m, double total, struct tp_rank **v, size_t *n)
{
	for (size_t i = 0; i < m->n; i++)
		m->v[i].share = tp_analysis_ratio((double)m->v[i].total_ns, total);
	if (m->n) /* qsort(NULL, 0) is undefined behaviour */
		qsort(m->v, m->n, sizeof *m->v, rank_cmp);
	*v = m->v;
	*n = m->n;
	m->v = NULL;
	tp_analysis_rank_map_free(m);
}

int tp_analysis_rank_join(struct tp_rank_map *dst, const struct tp_rank_map *src)
{
	for (size_t j = 0; j < src->n; j++) {
		const struct tp_rank *x = &src->v[j];
		struct tp_rank *r = tp_analysis_rank_get(dst, x->core, x->type, x->name);
		if (!r)
			return TP_ENOMEM;
		r->count += x->count;
		r->total_ns += x->total_ns;
		if (x->min_ns < r->min_ns)
			r->min_ns = x->min_ns;
		if (x->max_ns > r->max_ns)
			r->max_ns = x->max_ns;
	}
	return TP_OK;
}

int tp_analysis_rank_cmds(struct tp_analysis *a, const struct tp_core_work *work)
{
	struct tp_rank_map cmds = {0};
	for (size_t i = 0; i < a->num_cores; i++)
		if (tp_analysis_rank_join(&cmds, &work[i].cmds) != TP_OK) {
			tp_analysis_rank_map_free(&cmds);
			return TP_ENOMEM;
		}
	/* Shares relative to total time. */
	rank_map_take(&cmds, (double)a->total_time_ns, &a->top_cmds, &a->num_top_cmds);
	return TP_OK;
}

/* Layers by span (begin..end of their matched commands): the top TP_ANALYSIS_TOP_LAYERS,
 * selected with a bounded heap so a dump with millions of layers is not sorted whole. The
 * layers are ranked in parts of RL_PART (fixed by the data) on the threads, each part keeping
 * its own best, sorted; the parts' lists are then merged on the calling thread. rank_cmp is a
 * total order (layer index last), so the result is the one heap over every layer gives. */
#define RL_PART 65536u

struct rl_run {
	const struct tp_profile *p;
	double total;
	size_t cap;        /* best kept per part and in all */
	struct tp_rank *h; /* part j's best at h + j * cap, sorted */
	size_t *n;         /* per part: how many */
};

static void rl_part(void *v, size_t j)
{
	struct rl_run *a = v;
	size_t lo = j * RL_PART, hi = lo + RL_PART;
	if (hi > a->p->num_layers)
		hi = a->p->num_layers;
	struct tp_rank *h = a->h + j * a->cap;
	size_t n = 0;
	for (size_t i = lo; i < hi; i++) {
		struct tp_layer ly;
		const struct tp_layer *l = tp_profile_timed_layer(a->p, i, &ly);
		if (!l)
			continue;
		struct tp_rank r = {0};
		r.name = l->name;
		r.type = l->type;
		r.index = (int32_t)i;
		r.core = l->core;
		r.count = (uint64_t)(l->tiu_last >= l->tiu_first && l->tiu_last
		                         ? l->tiu_last - l->tiu_first + 1
		                         : 0) +
		          (uint64_t)(l->gdma_last >= l->gdma_first && l->gdma_last
		                         ? l->gdma_last - l->gdma_first + 1
		                         : 0);
		r.total_ns = r.min_ns = r.max_ns = l->end_ns - l->begin_ns;
		r.share = tp_analysis_ratio((double)r.total_ns, a->total);
		heap_offer(h, &n, a->cap, &r);
	}
	if (n > 1)
		qsort(h, n, sizeof *h, rank_cmp);
	a->n[j] = n;
}

int tp_analysis_rank_layers(const struct tp_profile *p, struct tp_analysis *a, unsigned jobs)
{
	if (!p->num_layers)
		return TP_OK;
	size_t cap =
	    p->num_layers < TP_ANALYSIS_TOP_LAYERS ? p->num_layers : TP_ANALYSIS_TOP_LAYERS;
	size_t nparts = (p->num_layers + RL_PART - 1) / RL_PART;
	struct rl_run run = {.p = p, .total = (double)a->total_time_ns, .cap = cap};
	run.h = tp_malloc(nparts * cap * sizeof *run.h);
	run.n = tp_calloc(nparts, sizeof *run.n);
	size_t *at = tp_calloc(nparts, sizeof *at);
	a->top_layers = tp_calloc(cap, sizeof *a->top_layers);
	if (!run.h || !run.n || !at || !a->top_layers) {
		tp_free(run.h);
		tp_free(run.n);
		tp_free(at);
		return TP_ENOMEM;
	}
	tp_par_run(jobs ? jobs : 1, nparts, rl_part, &run);
	/* The best head of the parts' sorted lists, cap times. */
	while (a->num_top_layers < cap) {
		const struct tp_rank *best = NULL;
		size_t bj = 0;
		for (size_t j = 0; j < nparts; j++)
			if (at[j] < run.n[j] &&
			    (!best || rank_cmp(&run.h[j * cap + at[j]], best) < 0)) {
				best = &run.h[j * cap + at[j]];
				bj = j;
			}
		if (!best)
			break;
		a->top_layers[a->num_top_layers++] = *best;
		at[bj]++;
	}
	tp_free(run.h);
	tp_free(run.n);
	tp_free(at);
	return TP_OK;
}

/* Captures: operator slices grouped by op_type (falling back to the slice name), shares
 * relative to the profile's span. */
int tp_analysis_op_types(const struct tp_profile *p, struct tp_analysis *a)
{
	uint32_t op_key, op_type_str;
	int have_key =
	    tp_strtab_find(&p->strs, TP_CAP_KEY_OP_TYPE, strlen(TP_CAP_KEY_OP_TYPE), &op_key);
	if (!tp_strtab_find(&p->strs, TP_CAP_TYPE_OP, strlen(TP_CAP_TYPE_OP), &op_type_str))
		return TP_OK;
	struct tp_rank_map ops = {0};
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		for (size_t k = 0; k < t->count; k++) {
			const struct tp_slice *s = &t->slices[k];
			if (tp_slice_type(t, s) != op_type_str)
				continue;
			const struct tp_arg *ot =
			    have_key ? tp_args_find(p, s->args, op_key) : NULL;
			uint32_t ty = ot && ot->type == TP_ARG_STR ? ot->v.s : tp_slice_name(t, s);
			struct tp_rank *r = tp_analysis_rank_get(&ops, -1, 0, ty);
			if (!r) {
				tp_analysis_rank_map_free(&ops);
				return TP_ENOMEM;
			}
			tp_analysis_rank_add(r, tp_slice_end(t, s) - s->start_ns);
		}
	}
	int64_t span = p->span_end_ns - p->span_begin_ns;
	rank_map_take(&ops, (double)span, &a->op_types, &a->num_op_types);
	return TP_OK;
}
