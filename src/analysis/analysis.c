/*
 * analysis.c — derives the per-core engine statistics, the summary ratios and the rankings
 * from a finished profile. Definitions follow the reference tools where users compare numbers
 * (sophgo-bmprofile.md §10.2, PerfWeb), and sophgo-analysis.md §4.4 for the metrics the
 * reference promises but never computed (busy / idle / utilisation, DDR read and write).
 *
 * The TIU cost model's aggregates (uArchURate, totalAlgCycle, the per-Function-Type table and
 * the worst commands/layers) come from track->cost as sophgo-costmodel.md §4 defines them;
 * a dump without descriptors has no cost array and its figures stay "n/a".
 *
 * Owns the arrays inside struct tp_analysis (cores, their Function Type tables, rankings);
 * freed by tp_analysis_free.
 *
 * Threads (tp_analyze_jobs): the passes over the slices that belong to one core (engine
 * statistics, command ranks, TIU/DMA overlap, Function Type table) run one core per thread
 * on the read-only profile (core_work); everything that combines cores runs afterwards on the
 * calling thread in core order, so the result does not depend on the thread count.
 */
#include "analysis/analysis.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

double tp_slice_gbps(const struct tp_track *t, const struct tp_slice *s, double freq_mhz)
{
	/* bytes / (cycles / MHz * 1000 ns) without truncation, as the reference's per-command
	 * figure (bytes / Asic Cycle × MHz / 1000). */
	double ns = s->cycles && freq_mhz > 0 ? (double)s->cycles * 1000.0 / freq_mhz
	                                      : (double)tp_slice_dur(t, s);
	return ns > 0 ? (double)tp_slice_bytes(t, s) / ns : 0.0;
}

static double ratio(double num, double den)
{
	return den > 0 ? num / den : 0.0;
}

int tp_uarch_rate(const struct tp_engine_stats *tiu, double *rate)
{
	if (!tiu->has_cost || !tiu->cost_commands) {
		*rate = 0;
		return 0;
	}
	*rate = ratio((double)tiu->alg_ops, (double)tiu->uarch_ops);
	return 1;
}

int tp_slice_cost(const struct tp_track *t, size_t i, struct tp_cmd_cost *out)
{
	memset(out, 0, sizeof *out);
	struct tp_cost k;
	if (!tp_track_get_cost(t, i, &k))
		return 0;
	const struct tp_cost *c = &k;
	double asic = (double)t->slices[i].cycles + 1e-4;
	out->alg_ops = c->alg_ops;
	out->uarch_ops = c->uarch_ops;
	out->alg_cycle = c->alg_cycle;
	out->uarch_rate = c->uarch_ops ? (double)c->alg_ops / (double)c->uarch_ops : 0;
	out->init_ratio = (double)c->init_cycle / asic;
	out->bank_ratio = (double)c->bank_cycle / asic;
	return 1;
}

void tp_fmt_pct(char *buf, size_t n, double v, int dec)
{
	struct tp_buf t;
	tp_buf_init(&t);
	tp_buf_fixed(&t, v * 100.0, dec);
	tp_buf_putc(&t, '%');
	snprintf(buf, n, "%s", t.data && !t.oom ? t.data : "?");
	tp_buf_free(&t);
}

/* Engine kinds that carry hardware commands (TIU, GDMA, SDMA, CDMA). */
static int is_engine(uint8_t kind)
{
	return kind < TP_ENGINES;
}

static int find_core(struct tp_analysis *a, int32_t device, int32_t core)
{
	for (size_t i = 0; i < a->num_cores; i++)
		if (a->cores[i].device == device && a->cores[i].core == core)
			return (int)i;
	return -1;
}

const struct tp_core_stats *tp_analysis_core(const struct tp_analysis *a, int32_t device,
                                             int32_t core)
{
	for (size_t i = 0; i < a->num_cores; i++)
		if (a->cores[i].device == device && a->cores[i].core == core)
			return &a->cores[i];
	return NULL;
}

/* Adds slice s of track t (its cost in *k when the track has costs, else k is NULL) to the
 * engine statistics e. */
static inline void accumulate(const struct tp_track *t, const struct tp_slice *s,
                              const struct tp_cost *k, struct tp_engine_stats *e)
{
	uint64_t c = s->cycles;
	e->total_cycle += c;
	if (tp_slice_kind(t, s) != TP_CMD_NORMAL)
		e->sys_cycle += c;
	if (tp_slice_kind(t, s) == TP_CMD_SYS_WAIT)
		e->wait_cycle += c;
	if (tp_slice_kind(t, s) == TP_CMD_NORMAL)
		e->busy_cycle += c;
	e->stall_cycle += tp_slice_stall(t, s);
	if (k) {
		if (!k->valid) {
			e->cost_missing++;
		} else {
			e->cost_commands++;
			e->alg_ops += k->alg_ops;
			e->uarch_ops += k->uarch_ops;
			e->alg_cycle += k->alg_cycle;
			e->init_cycle += k->init_cycle;
			e->bank_cycle += k->bank_cycle;
		}
	}
	if (t->kind == TP_TRACK_TIU || tp_slice_kind(t, s) != TP_CMD_NORMAL ||
	    tp_slice_bytes(t, s) == 0)
		return;
	enum tp_dir d = (enum tp_dir)tp_slice_dir(t, s);
	if (tp_dir_touches_ddr(d)) {
		e->ddr_bytes += tp_slice_bytes(t, s);
		e->ddr_cycle += c;
	} else if (tp_dir_touches_l2(d)) {
		e->l2_bytes += tp_slice_bytes(t, s);
		e->l2_cycle += c;
	}
	if (tp_dir_reads_ddr(d)) {
		e->ddr_read_bytes += tp_slice_bytes(t, s);
		e->ddr_read_cycle += c;
	}
	if (tp_dir_writes_ddr(d)) {
		e->ddr_write_bytes += tp_slice_bytes(t, s);
		e->ddr_write_cycle += c;
	}
}

static void finish_engine(struct tp_engine_stats *e, double mhz, int64_t total_ns)
{
	/* PerfWeb: TIU excludes only wait_msg; DMA working = total - sys wait. Both are the same
	 * expression with our kinds. */
	e->working_cycle = e->total_cycle - e->wait_cycle;
	e->working_ns = tp_cycles_to_ns(e->working_cycle, mhz);
	e->busy_ns = tp_cycles_to_ns(e->busy_cycle, mhz);
	e->idle_ns = total_ns > e->busy_ns ? total_ns - e->busy_ns : 0;
	e->utilization = ratio((double)e->busy_ns, (double)total_ns);
	e->ddr_avg_gbps = ratio((double)e->ddr_bytes, (double)tp_cycles_to_ns(e->ddr_cycle, mhz));
	e->l2_avg_gbps = ratio((double)e->l2_bytes, (double)tp_cycles_to_ns(e->l2_cycle, mhz));
	e->ddr_read_gbps =
	    ratio((double)e->ddr_read_bytes, (double)tp_cycles_to_ns(e->ddr_read_cycle, mhz));
	e->ddr_write_gbps =
	    ratio((double)e->ddr_write_bytes, (double)tp_cycles_to_ns(e->ddr_write_cycle, mhz));
}

static int rank_cmp(const void *x, const void *y)
{
	const struct tp_rank *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->core != b->core)
		return a->core < b->core ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
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

/* Groups slices by (core, track kind, name) into `out`. A small open-addressing map keyed by
 * the triple keeps this O(n) over tens of millions of commands. */
struct rank_map {
	struct tp_rank *v;
	size_t n, cap;
	struct tp_ixmap ix;
};

static uint64_t rkey(int32_t core, uint32_t type, uint32_t name)
{
	return ((uint64_t)(uint32_t)core * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)type << 40) ^ name;
}

static size_t rkey_at(const void *ctx, size_t i)
{
	const struct tp_rank *r = &((const struct tp_rank *)ctx)[i];
	return (size_t)rkey(r->core, r->type, r->name);
}

static struct tp_rank *rank_get(struct rank_map *m, int32_t core, uint32_t type, uint32_t name)
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

static void rank_add(struct tp_rank *r, int64_t dur)
{
	r->count++;
	r->total_ns += dur;
	if (dur < r->min_ns)
		r->min_ns = dur;
	if (dur > r->max_ns)
		r->max_ns = dur;
}

/* ---- TIU cost-model tables ------------------------------------------------------------ */

/* Adds slice i of TIU track t to a Function Type table (linear search with a last-hit cache:
 * a dump has a few dozen types). */
static int ftype_add(struct tp_core_stats *c, size_t *cap, size_t *last, uint32_t type,
                     uint64_t asic, const struct tp_cost *k)
{
	size_t j = *last;
	if (j >= c->num_ftypes || c->ftypes[j].type != type) {
		for (j = 0; j < c->num_ftypes && c->ftypes[j].type != type; j++)
			;
		if (j == c->num_ftypes) {
			struct tp_ftype_stats *v = tp_grow(c->ftypes, sizeof *v, j + 1, cap);
			if (!v)
				return TP_ENOMEM;
			c->ftypes = v;
			memset(&v[j], 0, sizeof *v);
			v[j].type = type;
			c->num_ftypes++;
		}
		*last = j;
	}
	struct tp_ftype_stats *f = &c->ftypes[j];
	f->instr++;
	f->asic_cycle += asic;
	if (k && k->valid) {
		f->alg_ops += k->alg_ops;
		f->uarch_ops += k->uarch_ops;
		f->alg_cycle += k->alg_cycle;
	}
	return TP_OK;
}

/* Sorts a Function Type table by name (insertion sort: a few dozen rows, and qsort would need
 * the profile in a global). */
static void sort_ftypes(const struct tp_profile *p, struct tp_core_stats *c)
{
	for (size_t i = 1; i < c->num_ftypes; i++) {
		struct tp_ftype_stats x = c->ftypes[i];
		size_t j = i;
		while (j > 0 && strcmp(tp_str(p, c->ftypes[j - 1].type), tp_str(p, x.type)) > 0) {
			c->ftypes[j] = c->ftypes[j - 1];
			j--;
		}
		c->ftypes[j] = x;
	}
}

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

/* Per-layer sums of the cost figures. */
struct lacc {
	uint64_t alg_ops, uarch_ops, asic_cycle, init_cycle;
};

/* Offers layer i with sums x to the worst-layers list. The list is ordered by lost cycles, then
 * by layer index, so the result does not depend on the order layers are offered in. */
static void layer_offer(struct tp_analysis *a, const struct tp_profile *p, size_t i,
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
	struct tp_cost_hot *v = a->low_uarch_layers;
	size_t *n = &a->num_low_uarch_layers;
#define LAYER_BEFORE(x, y)                                                                         \
	((x)->lost_cycles > (y)->lost_cycles ||                                                    \
	 ((x)->lost_cycles == (y)->lost_cycles && (x)->layer < (y)->layer))
	size_t k = *n < TP_ANALYSIS_HOT ? (*n)++ : TP_ANALYSIS_HOT;
	if (k == TP_ANALYSIS_HOT) {
		if (!LAYER_BEFORE(&h, &v[TP_ANALYSIS_HOT - 1]))
			return;
		k = TP_ANALYSIS_HOT - 1;
	}
	while (k > 0 && LAYER_BEFORE(&h, &v[k - 1])) {
		v[k] = v[k - 1];
		k--;
	}
#undef LAYER_BEFORE
	v[k] = h;
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

/* The worst layers by their summed cost figures. Usually a layer's TIU commands are one run
 * of consecutive slices on one track, so runs are summed and offered as they end, with a bit
 * per layer to notice a layer that comes back; then (interleaved layer groups) the sums are
 * taken in an array with an entry per layer instead. TP_OK / TP_ENOMEM. */
static int layer_hot(struct tp_analysis *a, const struct tp_profile *p)
{
	if (!p->num_layers)
		return TP_OK;
	uint8_t *seen = tp_calloc((p->num_layers + 7) / 8, 1);
	if (!seen)
		return TP_ENOMEM;
	int again = 0;
	for (size_t ti = 0; ti < p->num_tracks && !again; ti++) {
		const struct tp_track *t = &p->tracks[ti];
		if (t->kind != TP_TRACK_TIU || !t->cost)
			continue;
		int32_t cur = -1;
		struct lacc acc = {0};
		for (size_t i = 0; i <= t->count; i++) {
			struct tp_cost k = {0};
			int32_t l = -1;
			if (i < t->count) {
				tp_track_get_cost(t, i, &k);
				l = cost_layer(p, t, &t->slices[i], &k);
				if (l < 0 || l == cur) {
					if (l >= 0) {
						acc.alg_ops += k.alg_ops;
						acc.uarch_ops += k.uarch_ops;
						acc.asic_cycle += t->slices[i].cycles;
						acc.init_cycle += k.init_cycle;
					}
					continue;
				}
			}
			if (cur >= 0)
				layer_offer(a, p, (size_t)cur, &acc);
			if (i == t->count)
				break;
			if (seen[l >> 3] & (1u << (l & 7))) {
				again = 1;
				break;
			}
			seen[l >> 3] |= (uint8_t)(1u << (l & 7));
			cur = l;
			acc = (struct lacc){k.alg_ops, k.uarch_ops, t->slices[i].cycles,
			                    k.init_cycle};
		}
	}
	tp_free(seen);
	if (!again)
		return TP_OK;
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
		layer_offer(a, p, i, &lsum[i]);
	tp_free(lsum);
	return TP_OK;
}

/* The two command hot lists (a core's while core_work runs, then the analysis'). */
struct hot_lists {
	struct tp_cost_hot low[TP_ANALYSIS_HOT], high[TP_ANALYSIS_HOT];
	size_t nlow, nhigh;
};

/* layer_hot on its own thread (tp_analyze_jobs). */
struct layer_hot_job {
	struct tp_analysis *a;
	const struct tp_profile *p;
	int st;
};

static void *layer_hot_main(void *v)
{
	struct layer_hot_job *j = v;
	j->st = layer_hot(j->a, j->p);
	return NULL;
}

/* Offers TIU command i of track ti (cost k) to the cost hot lists of `a`. */
static void cost_hot(struct hot_lists *a, const struct tp_track *t, size_t ti, size_t i,
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
		h.lost_cycles =
		    (double)s->cycles * (1.0 - (double)k->alg_ops / (double)k->uarch_ops);
		hot_offer(a->low, &a->nlow, &h);
	}
	/* The vendor highlights an Initial Cycle Ratio above 1 % (sophgo-analysis.md §5.2). */
	if ((double)k->init_cycle / ((double)s->cycles + 1e-4) > 0.01) {
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

/* ---- Overlap of TIU and DMA work --------------------------------------------------------- */

struct ival {
	int64_t b, e;
};

static int ival_cmp(const void *x, const void *y)
{
	const struct ival *a = x, *b = y;
	return (a->b > b->b) - (a->b < b->b);
}

/* Appends the busy (non-sys) commands of a track as intervals [start, end]. */
static int ival_add(struct ival **v, size_t *n, size_t *cap, const struct tp_track *t)
{
	/* Room for the whole track at once: no growth slack or copies on large dumps. */
	if (t->count && *n + t->count > *cap) {
		struct ival *nv = tp_realloc(*v, (*n + t->count) * sizeof *nv);
		if (!nv)
			return TP_ENOMEM;
		*v = nv;
		*cap = *n + t->count;
	}
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (tp_slice_kind(t, s) != TP_CMD_NORMAL)
			continue;
		struct ival *nv = tp_grow(*v, sizeof *nv, *n + 1, cap);
		if (!nv)
			return TP_ENOMEM;
		*v = nv;
		nv[(*n)++] = (struct ival){s->start_ns, tp_slice_end(t, s)};
	}
	return TP_OK;
}

/* Sorts v[0..n) by start, the concatenation of `nruns` runs starting at runs[0] = 0, runs[1],
 * ... Each run is one track's slices, usually already in start order (tp_profile_finish):
 * then the runs are merged (a stable merge, the order qsort's merge sort gives too) instead
 * of sorted. Returns TP_OK or TP_ENOMEM. */
static int ival_sort(struct ival *v, size_t n, const size_t *runs, size_t nruns)
{
	for (size_t r = 0; r < nruns; r++) {
		size_t b = runs[r], e = r + 1 < nruns ? runs[r + 1] : n;
		for (size_t k = b + 1; k < e; k++)
			if (v[k - 1].b > v[k].b) {
				qsort(v, n, sizeof *v, ival_cmp);
				return TP_OK;
			}
	}
	if (nruns < 2)
		return TP_OK;
	struct ival *tmp = tp_malloc(n * sizeof *tmp);
	if (!tmp)
		return TP_ENOMEM;
	for (size_t r = 1; r < nruns; r++) {
		size_t mid = runs[r], e = r + 1 < nruns ? runs[r + 1] : n;
		size_t i = 0, j = mid, o = 0;
		while (i < mid && j < e)
			tmp[o++] = v[j].b < v[i].b ? v[j++] : v[i++];
		while (i < mid)
			tmp[o++] = v[i++];
		while (j < e)
			tmp[o++] = v[j++];
		memcpy(v, tmp, e * sizeof *v);
	}
	tp_free(tmp);
	return TP_OK;
}

/* Merges sorted intervals in place; returns the new count and the union length. */
static size_t ival_union(struct ival *v, size_t n, int64_t *len)
{
	*len = 0;
	if (!n)
		return 0;
	size_t m = 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i].b <= v[m].e) {
			if (v[i].e > v[m].e)
				v[m].e = v[i].e;
		} else
			v[++m] = v[i];
	}
	for (size_t i = 0; i <= m; i++)
		*len += v[i].e - v[i].b;
	return m + 1;
}

static int64_t ival_overlap(const struct ival *x, size_t nx, const struct ival *y, size_t ny)
{
	int64_t o = 0;
	size_t i = 0, j = 0;
	while (i < nx && j < ny) {
		int64_t b = x[i].b > y[j].b ? x[i].b : y[j].b;
		int64_t e = x[i].e < y[j].e ? x[i].e : y[j].e;
		if (e > b)
			o += e - b;
		if (x[i].e < y[j].e)
			i++;
		else
			j++;
	}
	return o;
}

/* Busy intervals of a set of tracks merged into their union, streamed in start order without
 * a copy: each track is sorted by start (tp_profile_finish), so the next interval is the
 * smallest next busy slice among the tracks, and touching or overlapping ones are merged as
 * ival_union does. */
struct ustream {
	const struct tp_track **t;
	size_t *pos;
	size_t nt;
};

/* The next busy slice start among the tracks (its track in *k), 0 if none. */
static int ustream_peek(struct ustream *u, size_t *k)
{
	int found = 0;
	for (size_t j = 0; j < u->nt; j++) {
		const struct tp_track *t = u->t[j];
		while (u->pos[j] < t->count &&
		       tp_slice_kind(t, &t->slices[u->pos[j]]) != TP_CMD_NORMAL)
			u->pos[j]++;
		if (u->pos[j] < t->count && (!found || t->slices[u->pos[j]].start_ns <
		                                           u->t[*k]->slices[u->pos[*k]].start_ns)) {
			*k = j;
			found = 1;
		}
	}
	return found;
}

static int ustream_next(struct ustream *u, struct ival *out)
{
	size_t k = 0;
	if (!ustream_peek(u, &k))
		return 0;
	const struct tp_slice *s = &u->t[k]->slices[u->pos[k]++];
	*out = (struct ival){s->start_ns, tp_slice_end(u->t[k], s)};
	while (ustream_peek(u, &k)) {
		s = &u->t[k]->slices[u->pos[k]];
		if (s->start_ns > out->e)
			break;
		if (tp_slice_end(u->t[k], s) > out->e)
			out->e = tp_slice_end(u->t[k], s);
		u->pos[k]++;
	}
	return 1;
}

/* Measured concurrency of one core from the streamed unions; 0 if a track is out of start
 * order (a profile tp_profile_finish did not see), then core_overlap copies and sorts. */
static int core_overlap_stream(const struct tp_profile *p, struct tp_core_stats *c, int *done)
{
	*done = 0;
	const struct tp_track **t = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *t);
	size_t *pos = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *pos);
	if (!t || !pos) {
		tp_free(t);
		tp_free(pos);
		return TP_ENOMEM;
	}
	/* TIU tracks first, then the DMA ones: the two streams share the arrays. */
	size_t ntiu = 0, n = 0;
	int ok = 1;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < p->num_tracks; i++) {
			const struct tp_track *x = &p->tracks[i];
			if (x->device != c->device || x->core != c->core || !is_engine(x->kind) ||
			    (x->kind == TP_TRACK_TIU) != (pass == 0))
				continue;
			for (size_t k = 1; k < x->count && ok; k++)
				if (x->slices[k - 1].start_ns > x->slices[k].start_ns)
					ok = 0;
			t[n++] = x;
			ntiu += pass == 0;
		}
	if (ok) {
		struct ustream tu = {t, pos, ntiu}, du = {t + ntiu, pos + ntiu, n - ntiu};
		int64_t tl = 0, dl = 0, o = 0;
		struct ival x, y;
		int hx = ustream_next(&tu, &x), hy = ustream_next(&du, &y);
		if (hx)
			tl += x.e - x.b;
		if (hy)
			dl += y.e - y.b;
		while (hx && hy) {
			int64_t b = x.b > y.b ? x.b : y.b, e = x.e < y.e ? x.e : y.e;
			if (e > b)
				o += e - b;
			if (x.e < y.e) {
				if ((hx = ustream_next(&tu, &x)))
					tl += x.e - x.b;
			} else if ((hy = ustream_next(&du, &y))) {
				dl += y.e - y.b;
			}
		}
		while (hx && (hx = ustream_next(&tu, &x)))
			tl += x.e - x.b;
		while (hy && (hy = ustream_next(&du, &y)))
			dl += y.e - y.b;
		c->eng[TP_TRACK_TIU].union_ns = tl;
		c->overlap_ns = o;
		int64_t mn = tl < dl ? tl : dl;
		c->concurrency = mn > 0 ? (double)c->overlap_ns / (double)mn : 0;
		*done = 1;
	}
	tp_free(t);
	tp_free(pos);
	return TP_OK;
}

/* Measured concurrency of one core: TIU busy time that overlaps DMA busy time. */
static int core_overlap(const struct tp_profile *p, struct tp_core_stats *c)
{
	int done, st = core_overlap_stream(p, c, &done);
	if (st != TP_OK || done)
		return st;
	struct ival *tv = NULL, *dv = NULL;
	size_t tn = 0, tc = 0, dn = 0, dc = 0;
	size_t truns[8] = {0}, druns[8] = {0}, ntr = 0, ndr = 0; /* where each track's run starts */
	for (size_t i = 0; i < p->num_tracks && st == TP_OK; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (t->device != c->device || t->core != c->core || !is_engine(t->kind))
			continue;
		if (t->kind == TP_TRACK_TIU) {
			if (ntr < 8)
				truns[ntr] = tn;
			ntr++;
			st = ival_add(&tv, &tn, &tc, t);
		} else {
			if (ndr < 8)
				druns[ndr] = dn;
			ndr++;
			st = ival_add(&dv, &dn, &dc, t);
		}
	}
	/* More than 8 tracks of a kind on one core (not a layout any reader makes): sorted whole.
	 */
	if (st == TP_OK && tn && ntr > 8)
		qsort(tv, tn, sizeof *tv, ival_cmp);
	else if (st == TP_OK)
		st = ival_sort(tv, tn, truns, ntr);
	if (st == TP_OK && dn && ndr > 8)
		qsort(dv, dn, sizeof *dv, ival_cmp);
	else if (st == TP_OK)
		st = ival_sort(dv, dn, druns, ndr);
	if (st == TP_OK) {
		int64_t tl, dl;
		tn = ival_union(tv, tn, &tl);
		dn = ival_union(dv, dn, &dl);
		c->eng[TP_TRACK_TIU].union_ns = tl;
		c->overlap_ns = ival_overlap(tv, tn, dv, dn);
		int64_t mn = tl < dl ? tl : dl;
		c->concurrency = mn > 0 ? (double)c->overlap_ns / (double)mn : 0;
	}
	tp_free(tv);
	tp_free(dv);
	return st;
}

/* ---- Per-core work (any thread) ---------------------------------------------------------- */

/* What one core's pass over its engine tracks yields beside its tp_core_stats: its command
 * ranks (merged into the analysis in core order afterwards; rank_cmp is a total order and the
 * sums are exact, so the ranking is the same whatever thread ran which core), the earliest
 * first start and the latest end of its tracks, and a status. */
struct core_work {
	struct tp_core_stats *c;
	struct rank_map cmds;
	struct hot_lists hot; /* the core's cost hot spots (commands) */
	int64_t lo, hi;
	int st;
};

/* Core w->c's engine statistics (accumulate, in track order), command ranks, cost hot
 * spots, measured overlap and Function Type table, in one pass over each engine track's
 * slices. Reads the profile only and writes only w and *w->c, so different cores may run on
 * different threads. */
static void core_work(const struct tp_profile *p, struct core_work *w)
{
	struct tp_core_stats *c = w->c;
	w->lo = INT64_MAX;
	w->hi = INT64_MIN;
	size_t fcap = 0, flast = 0; /* the Function Type table's capacity and last hit */
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (!is_engine(t->kind) || t->device != c->device || t->core != c->core)
			continue;
		if (t->count && t->slices[0].start_ns < w->lo)
			w->lo = t->slices[0].start_ns;
		struct tp_engine_stats *e = &c->eng[t->kind];
		e->present = t->count > 0;
		e->records += t->count;
		int tiu = t->kind == TP_TRACK_TIU, costs = tiu && t->cost;
		if (costs)
			e->has_cost = 1;
		/* Consecutive commands often share a name: the last one's rank is reused. */
		size_t last = SIZE_MAX;
		uint32_t last_name = 0;
		for (size_t k = 0; k < t->count; k++) {
			const struct tp_slice *s = &t->slices[k];
			struct tp_cost kv;
			if (costs)
				tp_track_get_cost(t, k, &kv);
			accumulate(t, s, costs ? &kv : NULL, e);
			int64_t end = tp_slice_end(t, s);
			if (end > w->hi)
				w->hi = end;
			uint32_t name = tp_slice_name(t, s);
			if (last == SIZE_MAX || name != last_name) {
				struct tp_rank *r = rank_get(&w->cmds, t->core, t->name, name);
				if (!r) {
					w->st = TP_ENOMEM;
					return;
				}
				last = (size_t)(r - w->cmds.v);
				last_name = name;
			}
			rank_add(&w->cmds.v[last], end - s->start_ns);
			if (!tiu)
				continue;
			/* The per-Function-Type TIU table and the cost hot spots. */
			w->st = ftype_add(c, &fcap, &flast, tp_slice_type(t, s), s->cycles,
			                  costs ? &kv : NULL);
			if (w->st != TP_OK)
				return;
			if (costs)
				cost_hot(&w->hot, t, i, k, &kv);
		}
	}
	if ((w->st = core_overlap(p, c)) != TP_OK)
		return;
	sort_ftypes(p, c);
}

/* tp_par_run's call: core_work on one core's work item. */
struct core_pool {
	const struct tp_profile *p;
	struct core_work *w;
};

static void core_pool_one(void *v, size_t k)
{
	struct core_pool *cp = v;
	/* On a copy: the work items sit side by side, and the per-slice updates (latest end,
	 * rank table, hot lists) of one core shared cache lines with the next core's item,
	 * which another thread was reading. */
	struct core_work w = cp->w[k];
	core_work(cp->p, &w);
	cp->w[k] = w;
}

int tp_analyze(const struct tp_profile *p, struct tp_analysis *a)
{
	return tp_analyze_jobs(p, a, 1);
}

int tp_analyze_jobs(const struct tp_profile *p, struct tp_analysis *a, unsigned jobs)
{
	memset(a, 0, sizeof *a);
	a->profile = p;
	int st = TP_OK;
	struct rank_map cmds = {0}, ops = {0};
	struct core_work *work = NULL;
	struct layer_hot_job lh = {0};
	pthread_t lh_thread;
	int lh_started = 0;

	/* Cores: one entry per (device, core) that owns an engine track, in track order. */
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		a->engine_records[t->kind] += t->count;
		if (!is_engine(t->kind) || find_core(a, t->device, t->core) >= 0)
			continue;
		size_t cap = a->num_cores;
		struct tp_core_stats *c = tp_grow(a->cores, sizeof *c, a->num_cores + 1, &cap);
		if (!c) {
			st = TP_ENOMEM;
			goto out;
		}
		a->cores = c;
		memset(&c[a->num_cores], 0, sizeof *c);
		c[a->num_cores].device = t->device;
		c[a->num_cores].core = t->core;
		a->num_cores++;
	}

	/* The per-core passes over the slices (statistics, ranks, overlap, Function Types), one
	 * core per thread. */
	if (a->num_cores) {
		work = tp_calloc(a->num_cores, sizeof *work);
		if (!work) {
			st = TP_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < a->num_cores; i++)
			work[i].c = &a->cores[i];
		struct core_pool cp = {.p = p, .w = work};
		tp_par_run(jobs ? jobs : 1, a->num_cores, core_pool_one, &cp);
		for (size_t i = 0; i < a->num_cores; i++)
			if ((st = work[i].st) != TP_OK)
				goto out;
	}

	/* Total time: max end - min start over every engine record (PerfWeb). The reference takes
	 * the GDMA "end" as the last record's end rather than the maximum; records are in start
	 * order, and for PMU streams the last record also ends last, so both agree unless a DMA
	 * overtakes a later one — then we keep the true maximum. */
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < a->num_cores; i++) {
		if (work[i].lo < lo)
			lo = work[i].lo;
		if (work[i].hi > hi)
			hi = work[i].hi;
	}
	a->total_time_ns = lo <= hi ? hi - lo : 0;

	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (is_engine(t->kind))
			finish_engine(&a->cores[find_core(a, t->device, t->core)].eng[t->kind],
			              t->freq_mhz, a->total_time_ns);
	}
	for (size_t i = 0; i < a->num_cores; i++)
		for (size_t j = 0; j < work[i].cmds.n; j++) {
			const struct tp_rank *x = &work[i].cmds.v[j];
			struct tp_rank *r = rank_get(&cmds, x->core, x->type, x->name);
			if (!r) {
				st = TP_ENOMEM;
				goto out;
			}
			r->count += x->count;
			r->total_ns += x->total_ns;
			if (x->min_ns < r->min_ns)
				r->min_ns = x->min_ns;
			if (x->max_ns > r->max_ns)
				r->max_ns = x->max_ns;
		}

	double total = (double)a->total_time_ns;
	double sum_num = 0, sum_tiu = 0;
	for (size_t i = 0; i < a->num_cores; i++) {
		struct tp_core_stats *c = &a->cores[i];
		struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU], *gdma = &c->eng[TP_TRACK_GDMA],
		                       *sdma = &c->eng[TP_TRACK_SDMA],
		                       *cdma = &c->eng[TP_TRACK_CDMA];
		double tiu_ns = (double)tiu->working_ns, gdma_ns = (double)gdma->working_ns;
		double num = tiu_ns + gdma_ns + (double)sdma->working_ns;
		c->tiu_working_ratio = ratio(tiu_ns, total);
		c->parallelism = ratio(num, total);
		c->tiu_working_ratio_max = c->tiu_working_ratio;
		double mn = tiu_ns < gdma_ns ? tiu_ns : gdma_ns;
		double bound = tiu_ns > 0 && gdma_ns > 0 ? (tiu_ns + gdma_ns - total) / mn : 0;
		c->concurrency_bound = bound > 0 ? bound : 0;
		double dma_busy = (double)(gdma->busy_ns + sdma->busy_ns + cdma->busy_ns);
		c->compute_share = ratio((double)tiu->busy_ns, (double)tiu->busy_ns + dma_busy);
		/* PerfDoc adds TIU ns to raw GDMA cycles (sophgo-analysis.md §5.4). */
		double mixed = tiu_ns + (double)gdma->working_cycle + (double)sdma->working_cycle;
		c->perfdoc_parallelism = ratio(mixed, total);
		double gm = (double)gdma->working_cycle, mn2 = tiu_ns < gm ? tiu_ns : gm;
		c->perfdoc_concurrency = tiu_ns > 0 && gm > 0 ? (tiu_ns + gm - total) / mn2 : 0;
		sum_num += num;
		sum_tiu += tiu_ns;
		if ((int64_t)tiu->working_ns > a->overall_tiu_max_ns) {
			a->overall_tiu_max_ns = tiu->working_ns;
			a->overall_tiu_max_cycle = tiu->working_cycle;
		}
		if ((int64_t)gdma->working_ns > a->overall_gdma_max_ns) {
			a->overall_gdma_max_ns = gdma->working_ns;
			a->overall_gdma_max_cycle = gdma->working_cycle;
		}
		if ((int64_t)sdma->working_ns > a->overall_sdma_max_ns) {
			a->overall_sdma_max_ns = sdma->working_ns;
			a->overall_sdma_max_cycle = sdma->working_cycle;
		}
		for (int e = 0; e < TP_ENGINES; e++) {
			struct tp_engine_stats *o = &a->overall.eng[e], *x = &c->eng[e];
			o->present |= x->present;
			o->records += x->records;
			o->total_cycle += x->total_cycle;
			o->sys_cycle += x->sys_cycle;
			o->wait_cycle += x->wait_cycle;
			o->working_cycle += x->working_cycle;
			o->busy_cycle += x->busy_cycle;
			o->busy_ns += x->busy_ns;
			o->working_ns += x->working_ns;
			o->idle_ns += x->idle_ns;
			o->ddr_bytes += x->ddr_bytes;
			o->ddr_cycle += x->ddr_cycle;
			o->l2_bytes += x->l2_bytes;
			o->l2_cycle += x->l2_cycle;
			o->ddr_read_bytes += x->ddr_read_bytes;
			o->ddr_write_bytes += x->ddr_write_bytes;
			o->ddr_read_cycle += x->ddr_read_cycle;
			o->ddr_write_cycle += x->ddr_write_cycle;
			o->stall_cycle += x->stall_cycle;
			o->has_cost |= x->has_cost;
			o->alg_ops += x->alg_ops;
			o->uarch_ops += x->uarch_ops;
			o->alg_cycle += x->alg_cycle;
			o->init_cycle += x->init_cycle;
			o->bank_cycle += x->bank_cycle;
			o->cost_commands += x->cost_commands;
			o->cost_missing += x->cost_missing;
		}
		if (c->concurrency > a->overall.concurrency)
			a->overall.concurrency = c->concurrency;
		if (c->overlap_ns > a->overall.overlap_ns)
			a->overall.overlap_ns = c->overlap_ns;
	}
	if (a->num_cores) {
		double n = (double)a->num_cores;
		a->overall.device = -1;
		a->overall.core = -1;
		/* PerfWeb's Overall Parallelism: the busiest core's engines together, (max TIU +
		 * max GDMA + max SDMA working time) / total time (sophgo-analysis.md §6); tpuprof's
		 * per-core mean is kept under its own name. */
		a->overall.parallelism =
		    ratio((double)(a->overall_tiu_max_ns + a->overall_gdma_max_ns +
		                   a->overall_sdma_max_ns),
		          total);
		a->overall.mean_parallelism = ratio(sum_num, total * n);
		a->overall.tiu_working_ratio = ratio(sum_tiu, total * n);
		a->overall.tiu_working_ratio_max = ratio((double)a->overall_tiu_max_ns, total);
		for (int e = 0; e < TP_ENGINES; e++) {
			struct tp_engine_stats *o = &a->overall.eng[e];
			/* Overall bandwidth: Σ bytes / ns(Σ cycles) at the engine's clock (all
			 * cores of one device share a clock). */
			double mhz = 0;
			for (size_t i = 0; i < p->num_tracks; i++)
				if (p->tracks[i].kind == e) {
					mhz = p->tracks[i].freq_mhz;
					break;
				}
			o->ddr_avg_gbps =
			    ratio((double)o->ddr_bytes, (double)tp_cycles_to_ns(o->ddr_cycle, mhz));
			o->l2_avg_gbps =
			    ratio((double)o->l2_bytes, (double)tp_cycles_to_ns(o->l2_cycle, mhz));
			o->ddr_read_gbps = ratio((double)o->ddr_read_bytes,
			                         (double)tp_cycles_to_ns(o->ddr_read_cycle, mhz));
			o->ddr_write_gbps = ratio((double)o->ddr_write_bytes,
			                          (double)tp_cycles_to_ns(o->ddr_write_cycle, mhz));
			o->utilization = ratio((double)o->busy_ns, total * n);
		}
		double dma_busy = (double)(a->overall.eng[TP_TRACK_GDMA].busy_ns +
		                           a->overall.eng[TP_TRACK_SDMA].busy_ns +
		                           a->overall.eng[TP_TRACK_CDMA].busy_ns);
		double tb = (double)a->overall.eng[TP_TRACK_TIU].busy_ns;
		a->overall.compute_share = ratio(tb, tb + dma_busy);
		double tmax = (double)a->overall_tiu_max_ns, gmax = (double)a->overall_gdma_max_ns;
		double mn = tmax < gmax ? tmax : gmax;
		double bound = tmax > 0 && gmax > 0 ? (tmax + gmax - total) / mn : 0;
		a->overall.concurrency_bound = bound > 0 ? bound : 0;
	}

	/* The Overall Function Type table, merged from the cores' (core_work). */
	{
		size_t cap = 0, last = 0;
		for (size_t ci = 0; ci < a->num_cores; ci++)
			for (size_t j = 0; j < a->cores[ci].num_ftypes; j++) {
				const struct tp_ftype_stats *f = &a->cores[ci].ftypes[j];
				/* Adds a row for the type (counting one command), then the rest. */
				st = ftype_add(&a->overall, &cap, &last, f->type, 0, NULL);
				if (st != TP_OK)
					goto out;
				struct tp_ftype_stats *o = &a->overall.ftypes[last];
				o->instr += f->instr - 1;
				o->asic_cycle += f->asic_cycle;
				o->alg_ops += f->alg_ops;
				o->uarch_ops += f->uarch_ops;
				o->alg_cycle += f->alg_cycle;
			}
		sort_ftypes(p, &a->overall);
	}

	/* Cost hot spots: commands, and layers by their summed ops. */
	if (a->overall.eng[TP_TRACK_TIU].has_cost) {
		struct tp_cost_hot *all = tp_malloc(a->num_cores * TP_ANALYSIS_HOT * sizeof *all);
		if (!all) {
			st = TP_ENOMEM;
			goto out;
		}
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
		/* The worst layers on a thread of their own while the rankings below are made
		 * (they write different fields of a). */
		lh.a = a;
		lh.p = p;
		if (jobs > 1 && pthread_create(&lh_thread, NULL, layer_hot_main, &lh) == 0)
			lh_started = 1;
		else if ((st = layer_hot(a, p)) != TP_OK)
			goto out;
	}

	/* Command rankings, shares relative to total time. */
	for (size_t i = 0; i < cmds.n; i++)
		cmds.v[i].share = ratio((double)cmds.v[i].total_ns, total);
	if (cmds.n) /* qsort(NULL, 0) is undefined behaviour */
		qsort(cmds.v, cmds.n, sizeof *cmds.v, rank_cmp);
	a->top_cmds = cmds.v;
	a->num_top_cmds = cmds.n;
	cmds.v = NULL;

	/* Layers by span (begin..end of their matched commands): the top TP_ANALYSIS_TOP_LAYERS,
	 * selected with a bounded heap so a dump with millions of layers is not sorted whole. */
	if (p->num_layers) {
		size_t cap =
		    p->num_layers < TP_ANALYSIS_TOP_LAYERS ? p->num_layers : TP_ANALYSIS_TOP_LAYERS;
		a->top_layers = tp_calloc(cap, sizeof *a->top_layers);
		if (!a->top_layers) {
			st = TP_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < p->num_layers; i++) {
			struct tp_layer ly;
			const struct tp_layer *l = tp_profile_layer(p, i, &ly);
			if (l->begin_ns > l->end_ns)
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
			r.share = ratio((double)r.total_ns, total);
			heap_offer(a->top_layers, &a->num_top_layers, cap, &r);
		}
		if (a->num_top_layers)
			qsort(a->top_layers, a->num_top_layers, sizeof *a->top_layers, rank_cmp);
	}

	/* Captures: operator slices grouped by op_type (falling back to the slice name). */
	uint32_t op_key, op_type_str;
	int have_key =
	    tp_strtab_find(&p->strs, TP_CAP_KEY_OP_TYPE, strlen(TP_CAP_KEY_OP_TYPE), &op_key);
	if (tp_strtab_find(&p->strs, TP_CAP_TYPE_OP, strlen(TP_CAP_TYPE_OP), &op_type_str)) {
		for (size_t i = 0; i < p->num_tracks; i++) {
			const struct tp_track *t = &p->tracks[i];
			for (size_t k = 0; k < t->count; k++) {
				const struct tp_slice *s = &t->slices[k];
				if (tp_slice_type(t, s) != op_type_str)
					continue;
				const struct tp_arg *ot =
				    have_key ? tp_args_find(p, s->args, op_key) : NULL;
				uint32_t ty =
				    ot && ot->type == TP_ARG_STR ? ot->v.s : tp_slice_name(t, s);
				struct tp_rank *r = rank_get(&ops, -1, 0, ty);
				if (!r) {
					st = TP_ENOMEM;
					goto out;
				}
				rank_add(r, tp_slice_end(t, s) - s->start_ns);
			}
		}
		int64_t span = p->span_end_ns - p->span_begin_ns;
		for (size_t i = 0; i < ops.n; i++)
			ops.v[i].share = ratio((double)ops.v[i].total_ns, (double)span);
		if (ops.n)
			qsort(ops.v, ops.n, sizeof *ops.v, rank_cmp);
		a->op_types = ops.v;
		a->num_op_types = ops.n;
		ops.v = NULL;
	}
out:
	if (lh_started) {
		pthread_join(lh_thread, NULL);
		if (st == TP_OK)
			st = lh.st;
	}
	for (size_t i = 0; work && i < a->num_cores; i++) {
		tp_free(work[i].cmds.v);
		tp_ixmap_free(&work[i].cmds.ix);
	}
	tp_free(work);
	tp_free(cmds.v);
	tp_ixmap_free(&cmds.ix);
	tp_free(ops.v);
	tp_ixmap_free(&ops.ix);
	if (st != TP_OK)
		tp_analysis_free(a);
	return st;
}

void tp_analysis_free(struct tp_analysis *a)
{
	for (size_t i = 0; a->cores && i < a->num_cores; i++)
		tp_free(a->cores[i].ftypes);
	tp_free(a->overall.ftypes);
	tp_free(a->cores);
	tp_free(a->top_layers);
	tp_free(a->top_cmds);
	tp_free(a->op_types);
	memset(a, 0, sizeof *a);
}
