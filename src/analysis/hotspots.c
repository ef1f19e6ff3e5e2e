/*
 * hotspots.c — the TIU cost model's hot spots (summary notes "low uArch rate" / "high
 * initial-cycle ratio"): the commands that lose the most cycles to padding or start-up, kept
 * per core during the driver's per-core passes and merged afterwards, and the layers that
 * lose the most by their summed cost figures (a job per TIU track).
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

/* layer_hot's per-track pass: one job per TIU track with cost figures. */
struct lhot_par {
	const struct tp_profile *p;
	const size_t *track;                         /* the tracks' indices */
	struct tp_cost_hot (*list)[TP_ANALYSIS_HOT]; /* per track */
	size_t *nlist;
	_Atomic uint8_t *seen; /* a bit per layer, set by any track */
	_Atomic int again;     /* a layer came back (in its track or another) */
};

/* Track job k: its runs of one layer summed and offered to its own list as they end, each
 * run's layer marked in the shared bitmap; a layer already marked (by this track or any
 * other, whichever came first) sets `again`, so the outcome does not depend on the order the
 * tracks run in. */
static void lhot_track(void *v, size_t k)
{
	struct lhot_par *a = v;
	const struct tp_profile *p = a->p;
	const struct tp_track *t = &p->tracks[a->track[k]];
	int32_t cur = -1;
	struct lacc acc = {0};
	for (size_t i = 0; i <= t->count && !atomic_load_explicit(&a->again, memory_order_relaxed);
	     i++) {
		struct tp_cost c = {0};
		int32_t l = -1;
		if (i < t->count) {
			tp_track_get_cost(t, i, &c);
			l = cost_layer(p, t, &t->slices[i], &c);
			if (l < 0 || l == cur) {
				if (l >= 0) {
					acc.alg_ops += c.alg_ops;
					acc.uarch_ops += c.uarch_ops;
					acc.asic_cycle += t->slices[i].cycles;
					acc.init_cycle += c.init_cycle;
				}
				continue;
			}
		}
		if (cur >= 0)
			layer_offer(a->list[k], &a->nlist[k], p, (size_t)cur, &acc);
		if (i == t->count)
			break;
		uint8_t bit = (uint8_t)(1u << (l & 7));
		if (atomic_fetch_or_explicit(&a->seen[l >> 3], bit, memory_order_relaxed) & bit) {
			atomic_store_explicit(&a->again, 1, memory_order_relaxed);
			break;
		}
		cur = l;
		acc = (struct lacc){c.alg_ops, c.uarch_ops, t->slices[i].cycles, c.init_cycle};
	}
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
			lsum[l].alg_ops += k.alg_ops;
			lsum[l].uarch_ops += k.uarch_ops;
			lsum[l].asic_cycle += t->slices[i].cycles;
			lsum[l].init_cycle += k.init_cycle;
		}
	}
	for (size_t i = 0; i < p->num_layers; i++)
		layer_offer(a->low_uarch_layers, &a->num_low_uarch_layers, p, i, &lsum[i]);
	tp_free(lsum);
	return TP_OK;
}

/* The worst layers by their summed cost figures. Usually a layer's TIU commands are one run
 * of consecutive slices on one track, so each track (a job of its own, on up to `jobs`
 * threads) sums its runs and offers them to its own list as they end, with a bit per layer
 * to notice a layer that comes back; the tracks' lists are then offered to one (the order
 * is total, so it holds what one list offered every run would). When a layer comes back
 * (interleaved layer groups) the sums are taken in an array with an entry per layer
 * instead. TP_OK / TP_ENOMEM. */
static int layer_hot(struct tp_analysis *a, const struct tp_profile *p, unsigned jobs)
{
	if (!p->num_layers)
		return TP_OK;
	size_t nt = 0;
	for (size_t ti = 0; ti < p->num_tracks; ti++)
		nt += p->tracks[ti].kind == TP_TRACK_TIU && p->tracks[ti].cost;
	struct lhot_par lp = {.p = p};
	size_t *track = tp_malloc((nt ? nt : 1) * sizeof *track);
	lp.list = tp_malloc((nt ? nt : 1) * sizeof *lp.list);
	lp.nlist = tp_calloc(nt ? nt : 1, sizeof *lp.nlist);
	lp.seen = tp_calloc((p->num_layers + 7) / 8, 1);
	int st = track && lp.list && lp.nlist && lp.seen ? TP_OK : TP_ENOMEM;
	if (st == TP_OK) {
		nt = 0;
		for (size_t ti = 0; ti < p->num_tracks; ti++)
			if (p->tracks[ti].kind == TP_TRACK_TIU && p->tracks[ti].cost)
				track[nt++] = ti;
		lp.track = track;
		atomic_init(&lp.again, 0);
		tp_par_run(jobs ? jobs : 1, nt, lhot_track, &lp);
		if (atomic_load(&lp.again))
			st = layer_hot_sums(a, p);
		for (size_t k = 0; !atomic_load(&lp.again) && k < nt; k++)
			for (size_t i = 0; i < lp.nlist[k]; i++)
				hot_keep(a->low_uarch_layers, &a->num_low_uarch_layers,
				         &lp.list[k][i]);
	}
	TP_FREE_ALL(track, lp.list, lp.nlist, (void *)lp.seen);
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
