/*
 * analysis_int.h — what the analysis files share (analysis.c the driver, engines.c,
 * overlap.c, ftype.c, hotspots.c, rankings.c; not lmem.c, which stands alone): the per-slice
 * helpers, the rank map, the per-core work item, and the stages the driver runs in order.
 * Only for these files and analysis_test.c.
 */
#ifndef TP_ANALYSIS_INT_H
#define TP_ANALYSIS_INT_H

#include "analysis/analysis.h"

static inline double tp_analysis_ratio(double num, double den)
{
	return den > 0 ? num / den : 0.0;
}

/* Engine kinds that carry hardware commands (TIU, GDMA, SDMA, CDMA). */
static inline int tp_analysis_is_engine(uint8_t kind)
{
	return kind < TP_ENGINES;
}

/* Adds slice s of track t (its cost in *k when the track has costs, else k is NULL) to the
 * engine statistics e. */
static inline void tp_analysis_accumulate(const struct tp_track *t, const struct tp_slice *s,
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

/* ---- engines.c ----------------------------------------------------------------------------- */

/* The string ids of the burst arguments (gmem_bl_sum, gmem_xact_cnt) and whether the profile
 * has them; tp_analysis_burst_keys returns 0 when it has neither, and no record then needs its
 * arguments read. */
struct tp_burst_keys {
	uint32_t bl_sum, xact;
	int has_bl_sum, has_xact;
};
int tp_analysis_burst_keys(const struct tp_profile *p, struct tp_burst_keys *k);
/* Adds DMA record s of track t to e's burst sums when ddr_bytes counts it. */
void tp_analysis_burst_add(const struct tp_profile *p, const struct tp_burst_keys *k,
                           const struct tp_track *t, const struct tp_slice *s,
                           struct tp_engine_stats *e);

/* Slices per part of an engine track in the analysis' passes (analysis.c, hotspots.c) and per
 * window of a core's overlap (overlap.c): enough that a part's tables cost little beside its
 * pass, few enough that a core of a few tracks keeps every thread busy. Any size gives the
 * same figures. */
#define TP_ANALYSIS_PART 65536

/* ---- rankings.c ---------------------------------------------------------------------------- */

/* One rank per (core, track kind, name) (per operator type for captures). A small
 * open-addressing map keyed by the triple keeps grouping O(n) over tens of millions of
 * commands. */
struct tp_rank_map {
	struct tp_rank *v;
	size_t n, cap;
	struct tp_ixmap ix;
};

struct tp_rank *tp_analysis_rank_get(struct tp_rank_map *m, int32_t core, uint32_t type,
                                     uint32_t name);

/* Adds every rank of src to dst, in src's order (counts and times summed, extremes kept).
 * TP_OK / TP_ENOMEM. */
int tp_analysis_rank_join(struct tp_rank_map *dst, const struct tp_rank_map *src);
void tp_analysis_rank_map_free(struct tp_rank_map *m);

static inline void tp_analysis_rank_add(struct tp_rank *r, int64_t dur)
{
	r->count++;
	r->total_ns += dur;
	if (dur < r->min_ns)
		r->min_ns = dur;
	if (dur > r->max_ns)
		r->max_ns = dur;
}

/* ---- ftype.c ------------------------------------------------------------------------------- */

/* Adds a command of Function Type `type` (Asic Cycle asic, cost entry *k or NULL) to the
 * Function Type table of c; *cap is the table's capacity, *last its last hit. TP_OK /
 * TP_ENOMEM. */
int tp_analysis_ftype_add(struct tp_core_stats *c, size_t *cap, size_t *last, uint32_t type,
                          uint64_t asic, const struct tp_cost *k);
/* Adds row f of another table (a part of the same core's commands) to c's table as
 * tp_analysis_ftype_add would have added its commands. TP_OK / TP_ENOMEM. */
int tp_analysis_ftype_join(struct tp_core_stats *c, size_t *cap, size_t *last,
                           const struct tp_ftype_stats *f);
/* Sorts a Function Type table by name. */
void tp_analysis_sort_ftypes(const struct tp_profile *p, struct tp_core_stats *c);

/* ---- hotspots.c ---------------------------------------------------------------------------- */

/* The two command hot lists (a core's while core_work runs, then the analysis'). */
struct tp_hot_lists {
	struct tp_cost_hot low[TP_ANALYSIS_HOT], high[TP_ANALYSIS_HOT];
	size_t nlow, nhigh;
};

/* Offers TIU command i of track ti (cost k, ratios filled: tp_track_get_cost) to the cost hot
 * lists of `a`. */
void tp_analysis_cost_hot(struct tp_hot_lists *a, const struct tp_track *t, size_t ti, size_t i,
                          const struct tp_cost *k);

/* Keeps in dst the entries of dst and src that one list offered both parts' commands, in
 * (track, slice) order, would keep (src's commands come after dst's). */
void tp_analysis_hot_join(struct tp_hot_lists *dst, const struct tp_hot_lists *src);

/* ---- overlap.c ----------------------------------------------------------------------------- */

/* Measured concurrency of one core: TIU busy time that overlaps DMA busy time (union_ns,
 * overlap_ns, concurrency), from copies of the intervals sorted (any start order). TP_OK /
 * TP_ENOMEM. */
int tp_analysis_core_overlap(const struct tp_profile *p, struct tp_core_stats *c);
/* The same in windows of time, on threads: tp_overlap_plan, tp_overlap_scan of every window
 * (any thread), tp_overlap_carry (0: a track is out of start order or the core has too many
 * tracks, tp_analysis_core_overlap must do it), tp_overlap_sweep of every window (any
 * thread), tp_overlap_finish,
 * tp_overlap_free. The figures are tp_analysis_core_overlap's. */
struct tp_overlap;
int tp_overlap_plan(const struct tp_profile *p, const struct tp_core_stats *c,
                    struct tp_overlap **out);
size_t tp_overlap_windows(const struct tp_overlap *o);
void tp_overlap_scan(struct tp_overlap *o, size_t w);
int tp_overlap_carry(struct tp_overlap *o);
void tp_overlap_sweep(struct tp_overlap *o, size_t w);
void tp_overlap_finish(const struct tp_overlap *o, struct tp_core_stats *c);
void tp_overlap_free(struct tp_overlap *o);

/* ---- engines.c ----------------------------------------------------------------------------- */

/* Adds the sums of src (tp_analysis_accumulate, tp_analysis_burst_add over other records of
 * the same engine) to dst. */
void tp_analysis_sums_add(struct tp_engine_stats *dst, const struct tp_engine_stats *src);
/* Working, busy and idle time, utilisation and bandwidths of e from its sums, at clock mhz
 * over a total time of total_ns. */
void tp_analysis_finish_engine(struct tp_engine_stats *e, double mhz, int64_t total_ns);

/* ---- The driver's stages (analysis.c runs them in this order) ------------------------------ */

/* What one core's passes over its engine tracks yield beside its tp_core_stats (its parts
 * merged in order): its command ranks (merged into the analysis in core order afterwards;
 * rank_cmp is a total order and the sums are exact, so the ranking is the same whatever thread
 * ran which part), its cost hot lists, the earliest first start and the latest end of its
 * tracks. */
struct tp_core_work {
	struct tp_core_stats *c;
	struct tp_rank_map cmds;
	struct tp_hot_lists hot; /* the core's cost hot spots (commands) */
	int64_t lo, hi;
};

/* engines.c: every core's ratios against the total time and the Overall row of the engine
 * statistics (a->overall, a->overall_*_max_*). */
void tp_analysis_engine_ratios(const struct tp_profile *p, struct tp_analysis *a);
/* ftype.c: the Overall Function Type table, merged from the cores', and the total row of
 * every table (after tp_analysis_engine_ratios: the Overall one needs its engine sums). TP_OK /
 * TP_ENOMEM. */
int tp_analysis_ftype_overall(const struct tp_profile *p, struct tp_analysis *a);
/* hotspots.c: the cost hot spots, commands (merged from the cores' lists in `work`) and layers
 * (in parts of each TIU track on up to `jobs` threads, the same list for every count). TP_OK /
 * TP_ENOMEM. */
int tp_analysis_hot_spots(const struct tp_profile *p, struct tp_analysis *a,
                          const struct tp_core_work *work, unsigned jobs);
/* rankings.c: command types (merged from the cores' maps in `work`), layers and, for
 * captures, operator types, each by time (the layers on up to `jobs` threads, the same
 * ranking for every count). TP_OK / TP_ENOMEM. */
int tp_analysis_rank_cmds(struct tp_analysis *a, const struct tp_core_work *work);
int tp_analysis_rank_layers(const struct tp_profile *p, struct tp_analysis *a, unsigned jobs);
int tp_analysis_op_types(const struct tp_profile *p, struct tp_analysis *a);

#endif /* TP_ANALYSIS_INT_H */
