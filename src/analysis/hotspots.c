/*
 * hotspots.c — the TIU cost model's hot spots (summary notes "low uArch rate" / "high
 * initial-cycle ratio"): the commands that lose the most cycles to padding or start-up, kept
 * per core during the driver's per-core passes and merged afterwards, and the layers that
 * lose the most by their summed cost figures (in parts of each TIU track).
 */
#include "analysis/analysis_int.h"
#include "common/timings.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Keeps the n worst entries (largest lost_cycles) of a fixed list, worst first. */
static void hot_offer(struct tp_cost_hot *v, size_t *n, const struct tp_cost_hot *h)
{
	if (!(h->lost_cycles > 0))
		return;
	size_t i = *n < TP_ANALYSIS_HOT ? (*n)++ : TP_ANALYSIS_HOT;
	if (i == TP_ANALYSIS_HOT) {
		if (!(h->lost_cycles > v[TP_ANALYSIS_HOT - 1].lost_cycles))
			return;
		i = TP_ANALYSIS_HOT - 1;
	}
	while (i > 0 && v[i - 1].lost_cycles < h->lost_cycles) {
		v[i] = v[i - 1];
		i--;
	}
	v[i] = *h;
}

/* Keeps h in the worst-layers list v[0..*n) (lost cycles, then layer index). */
static void hot_keep(struct tp_cost_hot *v, size_t *n, const struct tp_cost_hot *h)
{
#define LAYER_BEFORE(x, y)                                                                         \
	((x)->lost_cycles > (y)->lost_cycles ||                                                    \
	 ((x)->lost_cycles == (y)->lost_cycles && (x)->layer < (y)->layer))
	size_t k = *n < TP_ANALYSIS_HOT ? (*n)++ : TP_ANALYSIS_HOT;
	if (k == TP_ANALYSIS_HOT) {
		if (!LAYER_BEFORE(h, &v[TP_ANALYSIS_HOT - 1]))
			return;
		k = TP_ANALYSIS_HOT - 1;
	}
	while (k > 0 && LAYER_BEFORE(h, &v[k - 1])) {
		v[k] = v[k - 1];
		k--;
	}
#undef LAYER_BEFORE
	v[k] = *h;
}

/* Per-layer sums of the cost figures. */
struct lacc {
	uint64_t alg_ops, uarch_ops, asic_cycle, init_cycle;
};

static void lacc_add(struct lacc *x, const struct lacc *y)
{
	x->alg_ops += y->alg_ops;
	x->uarch_ops += y->uarch_ops;
	x->asic_cycle += y->asic_cycle;
	x->init_cycle += y->init_cycle;
}

/* Adds a command of `cycles` Asic cycles and cost c to x. */
static void lacc_cmd(struct lacc *x, const struct tp_cost *c, uint64_t cycles)
{
	lacc_add(x, &(struct lacc){c->alg_ops, c->uarch_ops, cycles, c->init_cycle});
}

/* Offers layer i with sums x to the worst-layers list v[0..*n). The list is ordered by lost
 * cycles, then by layer index, so the result does not depend on the order layers are offered
 * in. */
static void layer_offer(struct tp_cost_hot *v, size_t *n, const struct tp_profile *p, size_t i,
                        const struct lacc *x)
{
	if (x->uarch_ops <= x->alg_ops)
		return;
	struct tp_cost_hot h;
	memset(&h, 0, sizeof h);
	h.alg_ops = x->alg_ops;
	h.uarch_ops = x->uarch_ops;
	h.asic_cycle = x->asic_cycle;
	h.init_cycle = x->init_cycle;
	h.track = -1;
	h.layer = (int32_t)i;
	struct tp_layer ly;
	h.core = tp_profile_layer(p, i, &ly)->core;
	h.lost_cycles = (double)h.asic_cycle * (1.0 - (double)h.alg_ops / (double)h.uarch_ops);
	if (!(h.lost_cycles > 0))
		return;
	hot_keep(v, n, &h);
}

/* The layer a TIU cost entry counts for (valid, normal command, known layer), else -1. */
static int32_t cost_layer(const struct tp_profile *p, const struct tp_track *t,
                          const struct tp_slice *s, const struct tp_cost *k)
{
	return k->valid && tp_slice_kind(t, s) == TP_CMD_NORMAL && s->layer >= 0 &&
	               (size_t)s->layer < p->num_layers
	           ? s->layer
	           : -1;
}

/* A run of one layer's commands on a track: consecutive slices of that layer, past those
 * that count for no layer. */
struct lrun {
	int32_t layer;
	struct lacc acc;
};

/* One part of a TIU track: slices [lo, hi). The runs that begin and end inside it are its
 * own (marked and offered to its list); its first and last run may go on in the parts next
 * to it, so they are handed to the merge (nruns: 0, 1 or 2 for two and more). */
struct lhot_part {
	size_t track, lo, hi;
	struct tp_cost_hot list[TP_ANALYSIS_HOT];
	size_t nlist;
	struct lrun first, last;
	int nruns;
};

struct lhot_par {
	const struct tp_profile *p;
	struct lhot_part *part;
	_Atomic uint8_t *seen; /* a bit per layer, set by whichever run of it came first */
	_Atomic int again;     /* a layer has two runs */
};

/* Marks run r's layer: 0 when an earlier run had marked it already (and sets `again`). */
static int lhot_mark(struct lhot_par *a, const struct lrun *r)
{
	uint8_t bit = (uint8_t)(1u << (r->layer & 7));
	if (atomic_fetch_or_explicit(&a->seen[r->layer >> 3], bit, memory_order_relaxed) & bit) {
		atomic_store_explicit(&a->again, 1, memory_order_relaxed);
		return 0;
	}
	return 1;
}

/* Part job k: its runs, the inner ones marked and offered as they end. Whether a layer has two
 * runs does not depend on the order the parts run in, nor does the list (a total order). */
static void lhot_part(void *v, size_t k)
{
	struct lhot_par *a = v;
	struct lhot_part *q = &a->part[k];
	const struct tp_profile *p = a->p;
	const struct tp_track *t = &p->tracks[q->track];
	struct lrun cur = {.layer = -1};
	for (size_t i = q->lo; i <= q->hi && !atomic_load_explicit(&a->again, memory_order_relaxed);
	     i++) {
		struct tp_cost c = {0};
		int32_t l = -1;
		if (i < q->hi) {
			tp_track_get_cost(t, i, &c);
			l = cost_layer(p, t, &t->slices[i], &c);
			if (l < 0 || l == cur.layer) {
				if (l >= 0)
					lacc_cmd(&cur.acc, &c, t->slices[i].cycles);
				continue;
			}
		}
		if (cur.layer >= 0) {
			if (i == q->hi && q->nruns)
				q->last = cur, q->nruns = 2;
			else if (!q->nruns)
				q->first = cur, q->nruns = 1;
			else if (lhot_mark(a, &cur))
				layer_offer(q->list, &q->nlist, p, (size_t)cur.layer, &cur.acc);
		}
		cur = (struct lrun){.layer = l};
		if (l >= 0)
			lacc_cmd(&cur.acc, &c, t->slices[i].cycles);
	}
}

/* Ends run r of the merge: marked, and offered to the list v[0..*n). */
static void lhot_close(struct lhot_par *a, const struct lrun *r, struct tp_cost_hot *v, size_t *n)
{
	if (r->layer >= 0 && lhot_mark(a, r))
		layer_offer(v, n, a->p, (size_t)r->layer, &r->acc);
}

/* The parts' first and last runs, in track and part order: a run that goes on in the next
 * part (same layer, only slices of no layer between) is joined to it; each run is then
 * marked and offered once, as in one pass over the track. */
static void lhot_edges(struct lhot_par *a, size_t np, struct tp_cost_hot *v, size_t *n)
{
	struct lrun open = {.layer = -1};
	for (size_t k = 0; k < np && !atomic_load_explicit(&a->again, memory_order_relaxed); k++) {
		const struct lhot_part *q = &a->part[k];
		if (k && q->track != a->part[k - 1].track) {
			lhot_close(a, &open, v, n);
			open.layer = -1;
		}
		if (!q->nruns)
			continue;
		if (open.layer == q->first.layer) {
			lacc_add(&open.acc, &q->first.acc);
		} else {
			lhot_close(a, &open, v, n);
			open = q->first;
		}
		if (q->nruns == 2) {
			lhot_close(a, &open, v, n);
			open = q->last;
		}
	}
	lhot_close(a, &open, v, n);
}

/* The per-layer sums in an array with an entry per layer (interleaved layer groups). */
static int layer_hot_sums(struct tp_analysis *a, const struct tp_profile *p)
{
	a->num_low_uarch_layers = 0;
	struct lacc *lsum = tp_calloc(p->num_layers, sizeof *lsum);
	if (!lsum)
		return TP_ENOMEM;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *t = &p->tracks[ti];
		if (t->kind != TP_TRACK_TIU || !t->cost)
			continue;
		for (size_t i = 0; i < t->count; i++) {
			struct tp_cost k;
			tp_track_get_cost(t, i, &k);
			int32_t l = cost_layer(p, t, &t->slices[i], &k);
			if (l < 0)
				continue;
			lacc_cmd(&lsum[l], &k, t->slices[i].cycles);
		}
	}
	for (size_t i = 0; i < p->num_layers; i++)
		layer_offer(a->low_uarch_layers, &a->num_low_uarch_layers, p, i, &lsum[i]);
	tp_free(lsum);
	return TP_OK;
}

/* The worst layers by their summed cost figures. Usually a layer's TIU commands are one run
 * of consecutive slices on one track, so the TIU tracks, in parts on up to `jobs` threads,
 * sum their runs and offer them to lists as they end, with a bit per layer to notice a layer
 * that comes back; the lists are then offered to one (the order is total, so it holds what
 * one list offered every run would). When a layer comes back (interleaved layer groups) the
 * sums are taken in an array with an entry per layer instead. TP_OK / TP_ENOMEM. */
static int layer_hot(struct tp_analysis *a, const struct tp_profile *p, unsigned jobs)
{
	if (!p->num_layers)
		return TP_OK;
	size_t np = 0;
	for (size_t ti = 0; ti < p->num_tracks; ti++)
		if (p->tracks[ti].kind == TP_TRACK_TIU && p->tracks[ti].cost && p->tracks[ti].count)
			np += tp_split_count(p->tracks[ti].count, TP_ANALYSIS_PART);
	struct lhot_par lp = {.p = p};
	lp.part = tp_calloc(np ? np : 1, sizeof *lp.part);
	lp.seen = tp_calloc((p->num_layers + 7) / 8, 1);
	int st = lp.part && lp.seen ? TP_OK : TP_ENOMEM;
	if (st == TP_OK) {
		np = 0;
		for (size_t ti = 0; ti < p->num_tracks; ti++) {
			const struct tp_track *t = &p->tracks[ti];
			if (t->kind != TP_TRACK_TIU || !t->cost)
				continue;
			size_t tn = t->count ? tp_split_count(t->count, TP_ANALYSIS_PART) : 0;
			for (size_t k = 0; k < tn; k++, np++) {
				lp.part[np].track = ti;
				tp_split_at(t->count, tn, k, &lp.part[np].lo, &lp.part[np].hi);
			}
		}
		atomic_init(&lp.again, 0);
		tp_par_run(jobs ? jobs : 1, np, lhot_part, &lp);
		struct tp_cost_hot edges[TP_ANALYSIS_HOT];
		size_t nedges = 0;
		lhot_edges(&lp, np, edges, &nedges);
		if (atomic_load(&lp.again))
			st = layer_hot_sums(a, p);
		for (size_t k = 0; !atomic_load(&lp.again) && k <= np; k++) {
			const struct tp_cost_hot *v = k < np ? lp.part[k].list : edges;
			size_t n = k < np ? lp.part[k].nlist : nedges;
			for (size_t i = 0; i < n; i++)
				hot_keep(a->low_uarch_layers, &a->num_low_uarch_layers, &v[i]);
		}
	}
	TP_FREE_ALL(lp.part, (void *)lp.seen);
	return st;
}

void tp_analysis_cost_hot(struct tp_hot_lists *a, const struct tp_track *t, size_t ti, size_t i,
                          const struct tp_cost *k)
{
	const struct tp_slice *s = &t->slices[i];
	if (!k->valid || tp_slice_kind(t, s) != TP_CMD_NORMAL)
		return;
	struct tp_cost_hot h = {.track = (int32_t)ti,
	                        .layer = s->layer,
	                        .slice = i,
	                        .core = t->core,
	                        .alg_ops = k->alg_ops,
	                        .uarch_ops = k->uarch_ops,
	                        .asic_cycle = s->cycles,
	                        .init_cycle = k->init_cycle};
	if (k->uarch_ops > k->alg_ops) {
		h.lost_cycles = (double)s->cycles * (1.0 - k->uarch_rate);
		hot_offer(a->low, &a->nlow, &h);
	}
	/* The vendor highlights an Initial Cycle Ratio above 1 % (sophgo-analysis.md §5.2). */
	if (k->init_ratio > 0.01) {
		h.lost_cycles = (double)k->init_cycle;
		hot_offer(a->high, &a->nhigh, &h);
	}
}

/* hot_offer keeps, of the entries offered, the first TP_ANALYSIS_HOT of a stable sort by
 * lost cycles (worst first); the cores' lists are offered in (track, slice) order, so this
 * order — lost cycles, then track, then slice — picks the same entries from their union. */
static int hot_cmp(const void *x, const void *y)
{
	const struct tp_cost_hot *a = x, *b = y;
	if (a->lost_cycles != b->lost_cycles)
		return a->lost_cycles > b->lost_cycles ? -1 : 1;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->slice > b->slice) - (a->slice < b->slice);
}

/* dst[0..*n) = the worst TP_ANALYSIS_HOT of all[0..nall) (the cores' hot lists together;
 * sorted in place): what one hot list offered every command in track order would hold. */
static void hot_merge(struct tp_cost_hot *dst, size_t *n, struct tp_cost_hot *all, size_t nall)
{
	if (nall)
		qsort(all, nall, sizeof *all, hot_cmp);
	*n = nall < TP_ANALYSIS_HOT ? nall : TP_ANALYSIS_HOT;
	if (*n)
		memcpy(dst, all, *n * sizeof *dst);
}

void tp_analysis_hot_join(struct tp_hot_lists *dst, const struct tp_hot_lists *src)
{
	struct tp_cost_hot all[2 * TP_ANALYSIS_HOT];
	memcpy(all, dst->low, dst->nlow * sizeof *all);
	memcpy(all + dst->nlow, src->low, src->nlow * sizeof *all);
	hot_merge(dst->low, &dst->nlow, all, dst->nlow + src->nlow);
	memcpy(all, dst->high, dst->nhigh * sizeof *all);
	memcpy(all + dst->nhigh, src->high, src->nhigh * sizeof *all);
	hot_merge(dst->high, &dst->nhigh, all, dst->nhigh + src->nhigh);
}

int tp_analysis_hot_spots(const struct tp_profile *p, struct tp_analysis *a,
                          const struct tp_core_work *work, unsigned jobs)
{
	if (!a->overall.eng[TP_TRACK_TIU].has_cost)
		return TP_OK;
	struct tp_cost_hot *all = tp_malloc(a->num_cores * TP_ANALYSIS_HOT * sizeof *all);
	if (!all)
		return TP_ENOMEM;
	size_t nall = 0;
	for (size_t i = 0; i < a->num_cores; i++)
		for (size_t j = 0; j < work[i].hot.nlow; j++)
			all[nall++] = work[i].hot.low[j];
	hot_merge(a->low_uarch, &a->num_low_uarch, all, nall);
	nall = 0;
	for (size_t i = 0; i < a->num_cores; i++)
		for (size_t j = 0; j < work[i].hot.nhigh; j++)
			all[nall++] = work[i].hot.high[j];
	hot_merge(a->high_init, &a->num_high_init, all, nall);
	tp_free(all);
	return layer_hot(a, p, jobs);
}
