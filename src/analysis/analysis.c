/*
 * analysis.c — the driver of the analysis: derives the per-core engine statistics, the summary
 * ratios and the rankings from a finished profile, stage by stage (engines.c, overlap.c,
 * ftype.c, hotspots.c, rankings.c), plus the small per-command helpers. Definitions follow the
 * reference tools where users compare numbers (sophgo-bmprofile.md §10.2, PerfWeb), and
 * sophgo-analysis.md §4.4 for the metrics the reference promises but never computed (busy / idle /
 * utilisation, DDR read and write).
 *
 * The TIU cost model's aggregates (uArchURate, totalAlgCycle, the per-Function-Type table and
 * the worst commands/layers) come from track->cost as sophgo-costmodel.md §4 defines them;
 * a dump without descriptors has no cost array and its figures stay "n/a".
 *
 * Owns the arrays inside struct tp_analysis (cores, their Function Type tables, rankings);
 * freed by tp_analysis_free.
 *
 * Threads (tp_analyze_jobs): the passes over the slices that belong to one core (engine
 * statistics, command ranks, Function Type table, cost hot spots) run in parts of each engine
 * track, beside each core's TIU/DMA overlap, on the read-only profile (part_work); each core's
 * parts are merged in track and slice order, and everything that combines cores runs
 * afterwards on the calling thread in core order, so the result does not depend on the thread
 * count.
 */
#include "analysis/analysis_int.h"
#include "analysis/ltab.h"
#include "common/timings.h"

#include <string.h>

double tp_slice_gbps(const struct tp_track *t, const struct tp_slice *s, double freq_mhz)
{
	/* bytes / (cycles / MHz * 1000 ns) without truncation, as the reference's per-command
	 * figure (bytes / Asic Cycle × MHz / 1000). */
	double ns = s->cycles && freq_mhz > 0 ? (double)s->cycles * 1000.0 / freq_mhz
	                                      : (double)tp_slice_dur(t, s);
	return ns > 0 ? (double)tp_slice_bytes(t, s) / ns : 0.0;
}

int tp_uarch_rate(const struct tp_engine_stats *tiu, double *rate)
{
	if (!tiu->has_cost || !tiu->cost_commands) {
		*rate = 0;
		return 0;
	}
	*rate = tp_analysis_ratio((double)tiu->alg_ops, (double)tiu->uarch_ops);
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

/* ---- Per-core work (any thread) ---------------------------------------------------------- */

/* One part of the per-core passes: slices [lo, hi) of engine track `track`, which belongs to
 * core `core` (index in a->cores). Its sums, Function Types (first-seen order), command ranks
 * and hot lists are merged into the core's in track and slice order, so every figure is the
 * one pass's, whatever the thread count. */
struct core_part {
	size_t core, track, lo, hi;
	struct tp_engine_stats e;
	struct tp_core_stats ft; /* ftypes and num_ftypes only */
	size_t fcap;
	struct tp_rank_map cmds;
	struct tp_hot_lists hot;
	int64_t hi_end;
	int st;
};

/* Part q's pass over its slices: engine sums, latest end, command ranks, and for TIU the
 * Function Types and cost hot spots. Reads the profile only and writes only *q. */
static void part_work(const struct tp_profile *p, const struct tp_burst_keys *bk, int burst,
                      struct core_part *q)
{
	const struct tp_track *t = &p->tracks[q->track];
	int tiu = t->kind == TP_TRACK_TIU, costs = tiu && t->cost;
	size_t flast = 0;
	/* Consecutive commands often share a name: the last one's rank is reused. */
	size_t last = SIZE_MAX;
	uint32_t last_name = 0;
	q->hi_end = INT64_MIN;
	for (size_t k = q->lo; k < q->hi; k++) {
		const struct tp_slice *s = &t->slices[k];
		struct tp_cost kv;
		if (costs)
			tp_track_get_cost(t, k, &kv);
		tp_analysis_accumulate(t, s, costs ? &kv : NULL, &q->e);
		if (burst && !tiu)
			tp_analysis_burst_add(p, bk, t, s, &q->e);
		int64_t end = tp_slice_end(t, s);
		if (end > q->hi_end)
			q->hi_end = end;
		uint32_t name = tp_slice_name(t, s);
		if (last == SIZE_MAX || name != last_name) {
			struct tp_rank *r = tp_analysis_rank_get(&q->cmds, t->core, t->name, name);
			if (!r) {
				q->st = TP_ENOMEM;
				return;
			}
			last = (size_t)(r - q->cmds.v);
			last_name = name;
		}
		tp_analysis_rank_add(&q->cmds.v[last], end - s->start_ns);
		if (!tiu)
			continue;
		/* The per-Function-Type TIU table and the cost hot spots. */
		q->st = tp_analysis_ftype_add(&q->ft, &q->fcap, &flast, tp_slice_type(t, s),
		                              s->cycles, costs ? &kv : NULL);
		if (q->st != TP_OK)
			return;
		if (costs)
			tp_analysis_cost_hot(&q->hot, t, q->track, k, &kv);
	}
}

/* tp_par_run's calls. The first run: each core's overlap windows scanned (bounds, latest
 * ends, start order), then the parts; the second: each core's windows swept, or its whole
 * overlap where a track is out of start order. */
struct core_pool {
	const struct tp_profile *p;
	struct tp_core_stats *cores;
	struct tp_overlap **ov;
	int *ok, *overlap_st;
	size_t *wbase; /* [core]: its first job; [ncores]: the jobs of all cores */
	size_t ncores;
	struct core_part *parts;
	struct tp_burst_keys bk;
	int burst;
};

/* The core of job k (a window or a core's whole overlap) and its window in *w. */
static size_t pool_core(const struct core_pool *cp, size_t k, size_t *w)
{
	size_t i = 0;
	while (k >= cp->wbase[i + 1])
		i++;
	*w = k - cp->wbase[i];
	return i;
}

static void core_pool_scan(void *v, size_t k)
{
	struct core_pool *cp = v;
	if (k < cp->wbase[cp->ncores]) {
		size_t w, i = pool_core(cp, k, &w);
		tp_overlap_scan(cp->ov[i], w);
		return;
	}
	/* On a copy: the parts sit side by side, so a part's per-slice updates (latest end,
	 * status) would share cache lines with the next part, which another thread reads. */
	size_t n = k - cp->wbase[cp->ncores];
	struct core_part q = cp->parts[n];
	part_work(cp->p, &cp->bk, cp->burst, &q);
	cp->parts[n] = q;
}

static void core_pool_sweep(void *v, size_t k)
{
	struct core_pool *cp = v;
	size_t w, i = pool_core(cp, k, &w);
	if (cp->ok[i])
		tp_overlap_sweep(cp->ov[i], w);
	else
		cp->overlap_st[i] = tp_analysis_core_overlap(cp->p, &cp->cores[i]);
}

/* Each core's overlap plan; cp->wbase from their windows. TP_OK / TP_ENOMEM. */
static int plan_overlaps(const struct tp_profile *p, struct core_pool *cp)
{
	cp->wbase[0] = 0;
	for (size_t i = 0; i < cp->ncores; i++) {
		int st = tp_overlap_plan(p, &cp->cores[i], &cp->ov[i]);
		if (st != TP_OK)
			return st;
		cp->wbase[i + 1] = cp->wbase[i] + tp_overlap_windows(cp->ov[i]);
	}
	return TP_OK;
}

/* The second run's jobs: a core in start order keeps its windows, another is one job. */
static void sweep_jobs(struct core_pool *cp)
{
	size_t n = 0;
	for (size_t i = 0; i < cp->ncores; i++) {
		size_t nw = cp->wbase[i + 1] - n;
		n = cp->wbase[i + 1];
		cp->ok[i] = tp_overlap_carry(cp->ov[i]);
		cp->wbase[i + 1] = cp->wbase[i] + (cp->ok[i] ? nw : 1);
	}
}

/* The parts of every core's engine tracks, in core, track and slice order; *n their count.
 * NULL (with *n = 0 too) when there is none or out of memory (*st). */
static struct core_part *plan_parts(const struct tp_profile *p, const struct tp_analysis *a,
                                    size_t *n, int *st)
{
	size_t np = 0;
	for (size_t i = 0; i < p->num_tracks; i++)
		if (tp_analysis_is_engine(p->tracks[i].kind) && p->tracks[i].count)
			np += tp_split_count(p->tracks[i].count, TP_ANALYSIS_PART);
	*n = 0;
	*st = TP_OK;
	if (!np)
		return NULL;
	struct core_part *q = tp_calloc(np, sizeof *q);
	if (!q) {
		*st = TP_ENOMEM;
		return NULL;
	}
	for (size_t c = 0; c < a->num_cores; c++)
		for (size_t i = 0; i < p->num_tracks; i++) {
			const struct tp_track *t = &p->tracks[i];
			if (!tp_analysis_is_engine(t->kind) || t->device != a->cores[c].device ||
			    t->core != a->cores[c].core)
				continue;
			size_t tn = t->count ? tp_split_count(t->count, TP_ANALYSIS_PART) : 0;
			for (size_t k = 0; k < tn; k++) {
				struct core_part *x = &q[(*n)++];
				x->core = c;
				x->track = i;
				tp_split_at(t->count, tn, k, &x->lo, &x->hi);
			}
		}
	return q;
}

/* Core w->c's figures from its tracks and their parts q[0..n) (those of this core, in order):
 * what one pass over each track's slices in order gives. */
static int merge_core(const struct tp_profile *p, struct tp_core_work *w, struct core_part *q,
                      size_t n)
{
	struct tp_core_stats *c = w->c;
	w->lo = INT64_MAX;
	w->hi = INT64_MIN;
	size_t fcap = 0, flast = 0, k = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (!tp_analysis_is_engine(t->kind) || t->device != c->device || t->core != c->core)
			continue;
		if (t->count && t->slices[0].start_ns < w->lo)
			w->lo = t->slices[0].start_ns;
		struct tp_engine_stats *e = &c->eng[t->kind];
		e->present = t->count > 0;
		e->records += t->count;
		if (t->kind == TP_TRACK_TIU && t->cost)
			e->has_cost = 1;
		for (; k < n && q[k].track == i; k++) {
			if (q[k].st != TP_OK)
				return q[k].st;
			tp_analysis_sums_add(e, &q[k].e);
			if (q[k].hi_end > w->hi)
				w->hi = q[k].hi_end;
			for (size_t j = 0; j < q[k].ft.num_ftypes; j++)
				if (tp_analysis_ftype_join(c, &fcap, &flast, &q[k].ft.ftypes[j]) !=
				    TP_OK)
					return TP_ENOMEM;
			if (tp_analysis_rank_join(&w->cmds, &q[k].cmds) != TP_OK)
				return TP_ENOMEM;
			tp_analysis_hot_join(&w->hot, &q[k].hot);
		}
	}
	tp_analysis_sort_ftypes(p, c);
	return TP_OK;
}

/* Cores: one entry per (device, core) that owns an engine track, in track order; and the
 * record counts per track kind. TP_OK / TP_ENOMEM. */
static int cores_of(const struct tp_profile *p, struct tp_analysis *a)
{
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		a->engine_records[t->kind] += t->count;
		if (!tp_analysis_is_engine(t->kind) || find_core(a, t->device, t->core) >= 0)
			continue;
		size_t cap = a->num_cores;
		struct tp_core_stats *c = tp_grow(a->cores, sizeof *c, a->num_cores + 1, &cap);
		if (!c)
			return TP_ENOMEM;
		a->cores = c;
		memset(&c[a->num_cores], 0, sizeof *c);
		c[a->num_cores].device = t->device;
		c[a->num_cores].core = t->core;
		a->num_cores++;
	}
	return TP_OK;
}

/* The per-core passes over the slices (statistics, ranks, Function Types, hot spots) in parts
 * of each engine track, beside each core's overlap, on up to `jobs` threads; then each core's
 * parts merged in order. *work gets the work items (the caller frees them, also on failure).
 * TP_OK / TP_ENOMEM. */
static int per_core_passes(const struct tp_profile *p, struct tp_analysis *a, unsigned jobs,
                           struct tp_core_work **work)
{
	*work = NULL;
	if (!a->num_cores)
		return TP_OK;
	size_t nc = a->num_cores, np = 0;
	struct tp_core_work *w = tp_calloc(nc, sizeof *w);
	struct core_pool cp = {.p = p, .cores = a->cores, .ncores = nc};
	cp.ov = tp_calloc(nc, sizeof *cp.ov);
	cp.ok = tp_calloc(nc, sizeof *cp.ok);
	cp.overlap_st = tp_calloc(nc, sizeof *cp.overlap_st);
	cp.wbase = tp_calloc(nc + 1, sizeof *cp.wbase);
	int st = w && cp.ov && cp.ok && cp.overlap_st && cp.wbase ? TP_OK : TP_ENOMEM;
	if (st == TP_OK)
		st = plan_overlaps(p, &cp);
	struct core_part *q = st == TP_OK ? plan_parts(p, a, &np, &st) : NULL;
	*work = w;
	if (st == TP_OK) {
		for (size_t i = 0; i < nc; i++)
			w[i].c = &a->cores[i];
		cp.parts = q;
		cp.burst = tp_analysis_burst_keys(p, &cp.bk);
		tp_par_run(jobs ? jobs : 1, cp.wbase[nc] + np, core_pool_scan, &cp);
		sweep_jobs(&cp);
		tp_par_run(jobs ? jobs : 1, cp.wbase[nc], core_pool_sweep, &cp);
		for (size_t i = 0, k = 0; i < nc && st == TP_OK; i++) {
			size_t k0 = k;
			while (k < np && q[k].core == i)
				k++;
			if (cp.ok[i])
				tp_overlap_finish(cp.ov[i], &a->cores[i]);
			st = cp.overlap_st[i] != TP_OK ? cp.overlap_st[i]
			                               : merge_core(p, &w[i], q + k0, k - k0);
		}
	}
	for (size_t k = 0; k < np; k++) {
		tp_free(q[k].ft.ftypes);
		tp_analysis_rank_map_free(&q[k].cmds);
	}
	for (size_t i = 0; cp.ov && i < nc; i++)
		tp_overlap_free(cp.ov[i]);
	TP_FREE_ALL(q, cp.ov, cp.ok, cp.overlap_st, cp.wbase);
	return st;
}

/* Total time: max end - min start over every engine record (PerfWeb). The reference takes the
 * GDMA "end" as the last record's end rather than the maximum; records are in start order, and
 * for PMU streams the last record also ends last, so both agree unless a DMA overtakes a later
 * one — then we keep the true maximum. */
static void total_time(struct tp_analysis *a, const struct tp_core_work *work)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < a->num_cores; i++) {
		if (work[i].lo < lo)
			lo = work[i].lo;
		if (work[i].hi > hi)
			hi = work[i].hi;
	}
	a->total_time_ns = lo <= hi ? hi - lo : 0;
}

/* Each engine's working, busy and idle time, utilisation and bandwidths, at its track's clock
 * over the total time. */
static void finish_engines(const struct tp_profile *p, struct tp_analysis *a)
{
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (tp_analysis_is_engine(t->kind))
			tp_analysis_finish_engine(
			    &a->cores[find_core(a, t->device, t->core)].eng[t->kind], t->freq_mhz,
			    a->total_time_ns);
	}
}

int tp_analyze(const struct tp_profile *p, struct tp_analysis *a)
{
	return tp_analyze_jobs(p, a, 1);
}

/* The layer table (ltab.h), last: it reads the total time and the Overall ratios. */
static int layer_table(const struct tp_profile *p, struct tp_analysis *a, unsigned jobs)
{
	if (!p->num_layers || p->num_layers > TP_ANALYSIS_LTAB_MAX || !a->num_cores)
		return TP_OK;
	struct tp_ltab *t = tp_malloc(sizeof *t);
	if (!t || tp_ltab_build_jobs(p, a, t, jobs) != TP_OK) {
		tp_free(t);
		return TP_ENOMEM;
	}
	if (!t->num_rows) {
		tp_ltab_free(t);
		tp_free(t);
		return TP_OK;
	}
	a->ltab = t;
	return TP_OK;
}

int tp_analyze_jobs(const struct tp_profile *p, struct tp_analysis *a, unsigned jobs)
{
	memset(a, 0, sizeof *a);
	a->profile = p;
	struct tp_core_work *work = NULL;
	int st = cores_of(p, a);
	tp_tm_begin("cores");
	if (st == TP_OK)
		st = per_core_passes(p, a, jobs, &work);
	if (st == TP_OK) {
		total_time(a, work);
		finish_engines(p, a);
		tp_analysis_engine_ratios(p, a);
		st = tp_analysis_ftype_overall(p, a);
	}
	tp_tm_end();
	tp_tm_begin("hot");
	if (st == TP_OK)
		st = tp_analysis_hot_spots(p, a, work, jobs);
	tp_tm_end();
	tp_tm_begin("ranks");
	if (st == TP_OK)
		st = tp_analysis_rank_cmds(a, work);
	if (st == TP_OK)
		st = tp_analysis_rank_layers(p, a, jobs);
	if (st == TP_OK)
		st = tp_analysis_op_types(p, a);
	tp_tm_end();
	tp_tm_begin("accel");
	if (st == TP_OK)
		st = tp_accel_analyze(p, &a->accel);
	tp_tm_end();
	tp_tm_begin("layers");
	if (st == TP_OK)
		st = layer_table(p, a, jobs);
	tp_tm_end();
	for (size_t i = 0; work && i < a->num_cores; i++)
		tp_analysis_rank_map_free(&work[i].cmds);
	tp_free(work);
	if (st != TP_OK)
		tp_analysis_free(a);
	return st;
}

void tp_analysis_free(struct tp_analysis *a)
{
	for (size_t i = 0; a->cores && i < a->num_cores; i++)
		tp_free(a->cores[i].ftypes);
	TP_FREE_ALL(a->overall.ftypes, a->cores, a->top_layers, a->top_cmds, a->op_types);
	tp_accel_free(a->accel);
	if (a->ltab)
		tp_ltab_free(a->ltab);
	tp_free(a->ltab);
	memset(a, 0, sizeof *a);
}
