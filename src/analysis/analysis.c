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
 * statistics, command ranks, TIU/DMA overlap, Function Type table) run one core per thread
 * on the read-only profile (core_work); everything that combines cores runs afterwards on the
 * calling thread in core order, so the result does not depend on the thread count; only the
 * worst-layers pass may run beside the rankings (hotspots.c), on fields of its own.
 */
#include "analysis/analysis_int.h"
#include "analysis/ltab.h"

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

/* Core w->c's engine statistics (accumulate, in track order), command ranks, cost hot
 * spots, measured overlap and Function Type table, in one pass over each engine track's
 * slices. Reads the profile only and writes only w and *w->c, so different cores may run on
 * different threads. */
static void core_work(const struct tp_profile *p, struct tp_core_work *w)
{
	struct tp_core_stats *c = w->c;
	w->lo = INT64_MAX;
	w->hi = INT64_MIN;
	size_t fcap = 0, flast = 0; /* the Function Type table's capacity and last hit */
	struct tp_burst_keys bk;
	int burst = tp_analysis_burst_keys(p, &bk);
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (!tp_analysis_is_engine(t->kind) || t->device != c->device || t->core != c->core)
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
			tp_analysis_accumulate(t, s, costs ? &kv : NULL, e);
			if (burst && !tiu)
				tp_analysis_burst_add(p, &bk, t, s, e);
			int64_t end = tp_slice_end(t, s);
			if (end > w->hi)
				w->hi = end;
			uint32_t name = tp_slice_name(t, s);
			if (last == SIZE_MAX || name != last_name) {
				struct tp_rank *r =
				    tp_analysis_rank_get(&w->cmds, t->core, t->name, name);
				if (!r) {
					w->st = TP_ENOMEM;
					return;
				}
				last = (size_t)(r - w->cmds.v);
				last_name = name;
			}
			tp_analysis_rank_add(&w->cmds.v[last], end - s->start_ns);
			if (!tiu)
				continue;
			/* The per-Function-Type TIU table and the cost hot spots. */
			w->st = tp_analysis_ftype_add(c, &fcap, &flast, tp_slice_type(t, s),
			                              s->cycles, costs ? &kv : NULL);
			if (w->st != TP_OK)
				return;
			if (costs)
				tp_analysis_cost_hot(&w->hot, t, i, k, &kv);
		}
	}
	if ((w->st = tp_analysis_core_overlap(p, c)) != TP_OK)
		return;
	tp_analysis_sort_ftypes(p, c);
}

/* tp_par_run's call: core_work on one core's work item. */
struct core_pool {
	const struct tp_profile *p;
	struct tp_core_work *w;
};

static void core_pool_one(void *v, size_t k)
{
	struct core_pool *cp = v;
	/* On a copy: the work items sit side by side, and the per-slice updates (latest end,
	 * rank table, hot lists) of one core shared cache lines with the next core's item,
	 * which another thread was reading. */
	struct tp_core_work w = cp->w[k];
	core_work(cp->p, &w);
	cp->w[k] = w;
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

/* The per-core passes over the slices (statistics, ranks, overlap, Function Types), one core
 * per thread; *work gets the work items (the caller frees them, also on failure). TP_OK /
 * TP_ENOMEM. */
static int per_core_passes(const struct tp_profile *p, struct tp_analysis *a, unsigned jobs,
                           struct tp_core_work **work)
{
	*work = NULL;
	if (!a->num_cores)
		return TP_OK;
	struct tp_core_work *w = tp_calloc(a->num_cores, sizeof *w);
	if (!w)
		return TP_ENOMEM;
	*work = w;
	for (size_t i = 0; i < a->num_cores; i++)
		w[i].c = &a->cores[i];
	struct core_pool cp = {.p = p, .w = w};
	tp_par_run(jobs ? jobs : 1, a->num_cores, core_pool_one, &cp);
	for (size_t i = 0; i < a->num_cores; i++)
		if (w[i].st != TP_OK)
			return w[i].st;
	return TP_OK;
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
	if (st == TP_OK)
		st = per_core_passes(p, a, jobs, &work);
	if (st == TP_OK) {
		total_time(a, work);
		finish_engines(p, a);
		tp_analysis_engine_ratios(p, a);
		st = tp_analysis_ftype_overall(p, a);
	}
	if (st == TP_OK)
		st = tp_analysis_hot_spots(p, a, work, jobs);
	if (st == TP_OK)
		st = tp_analysis_rank_cmds(a, work);
	if (st == TP_OK)
		st = tp_analysis_rank_layers(p, a, jobs);
	if (st == TP_OK)
		st = tp_analysis_op_types(p, a);
	if (st == TP_OK)
		st = tp_accel_analyze(p, &a->accel);
	if (st == TP_OK)
		st = layer_table(p, a, jobs);
	for (size_t i = 0; work && i < a->num_cores; i++) {
		tp_free(work[i].cmds.v);
		tp_ixmap_free(&work[i].cmds.ix);
	}
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
