/*
 * analysis.h — numbers derived from a profile model: per-core engine statistics in the
 * reference tools' definitions (PerfWeb summary, sophgo-analysis.md §4 and
 * sophgo-bmprofile.md §10.2), the §4.4 busy/idle/utilisation and DDR read/write metrics,
 * rankings of layers and command types by time, and per-operator statistics for captures.
 *
 * Ownership: struct tp_analysis is filled by tp_analyze and freed by tp_analysis_free; it
 * points into (and must not outlive) the profile it was computed from.
 */
#ifndef TP_ANALYSIS_H
#define TP_ANALYSIS_H

#include "analysis/accel.h"
#include "model/model.h"

/* Per (device, core, engine) statistics. Cycle sums are in that engine's clock. */
struct tp_engine_stats {
	int present;            /* the engine has at least one record on this core */
	uint64_t records;       /* slices on the track */
	uint64_t total_cycle;   /* Σ Asic Cycle of every record */
	uint64_t sys_cycle;     /* Σ over sys records (any TP_CMD_SYS*) */
	uint64_t wait_cycle;    /* Σ over wait_msg records */
	uint64_t working_cycle; /* reference "totalXCycle": TIU excludes wait_msg only;
	                           DMA = total - wait (sophgo-bmprofile.md §10.2) */
	uint64_t busy_cycle;    /* §4.4: Σ Asic Cycle of non-sys records */
	int64_t busy_ns;        /* ns(busy_cycle) */
	int64_t working_ns;     /* ns(working_cycle) */
	int64_t idle_ns;        /* span - busy */
	double utilization;     /* busy_ns / total_time_ns (0..1) */
	/* DMA only */
	uint64_t ddr_bytes, ddr_cycle; /* non-sys records touching DDR with bytes > 0 */
	uint64_t l2_bytes, l2_cycle;   /* else-if touching L2 */
	uint64_t ddr_read_bytes, ddr_write_bytes;
	uint64_t ddr_read_cycle, ddr_write_cycle;
	double ddr_avg_gbps; /* ddr_bytes / ns(ddr_cycle) */
	double l2_avg_gbps;
	double ddr_read_gbps, ddr_write_gbps;
	uint64_t stall_cycle;
	/* DDR burst length (PerfAI's avgDdrBurstLength, PerfWeb's GdmaAvgDdrBurstLength): the
	 * gmem_bl_sum and gmem_xact_cnt arguments summed over the records ddr_bytes counts, and
	 * their ratio (0 without transactions; sophgo-costmodel.md §5 items 9-10). */
	uint64_t ddr_burst_sum, ddr_xact;
	double ddr_avg_burst;
	/* TIU only: the cost model (track->cost; sophgo-costmodel.md §4). has_cost = 0 when the
	 * dump has no descriptors: every figure below is then "n/a", never 0 or 100 %. */
	int has_cost;
	uint64_t alg_ops, uarch_ops;     /* Σ "Alg Ops" / "uArch Ops" over modelled commands */
	uint64_t alg_cycle;              /* Σ "Alg Cycle" ("totalAlgCycle") */
	uint64_t init_cycle, bank_cycle; /* Σ initial / bank-conflict cycles */
	uint64_t cost_commands;          /* commands the model covers (valid) */
	uint64_t cost_missing;           /* commands of a costed track the model does not cover */
	/* Time TIU and DMA (GDMA/SDMA/CDMA) of the same core are both busy, from the union of
	 * their command intervals (TIU stats only; see tp_core_stats.concurrency). */
	int64_t union_ns; /* length of the union of this engine's busy intervals */
};

/* One row of the per-Function-Type TIU table (PerfDoc TIU_c sheet; sophgo-costmodel.md §4):
 * Asic Cycle includes wait_msg, the Asic Cycle Ratio's denominator (tiu working) does not. */
struct tp_ftype_stats {
	uint32_t type;  /* strtab id of the Function Type (sCONV, SYS, ...) */
	uint64_t instr; /* Instr Num: commands of this type */
	uint64_t alg_ops, uarch_ops, alg_cycle; /* Σ over the modelled ones */
	uint64_t asic_cycle;                    /* Σ Asic Cycle, wait_msg included */
};

/* A command or layer flagged by the cost model (summary notes "low uArch rate" / "high
 * initial-cycle ratio"). */
struct tp_cost_hot {
	int32_t track; /* profile track index; -1 for a layer entry */
	int32_t layer; /* profile layer index or -1 */
	size_t slice;  /* slice index on the track (commands) */
	int32_t core;
	uint64_t alg_ops, uarch_ops, asic_cycle, init_cycle;
	double lost_cycles; /* ranking key: asic × (1 - rate), or init cycles */
};
#define TP_ANALYSIS_HOT 10 /* entries kept per hot list */

/* How many layers the ranking keeps (reports show far fewer). */
#define TP_ANALYSIS_TOP_LAYERS 1000

#define TP_ENGINES 4 /* TIU, GDMA, SDMA, CDMA: indexes are enum tp_track_kind values */

struct tp_core_stats {
	int32_t device, core;
	struct tp_engine_stats eng[TP_ENGINES];
	double tiu_working_ratio; /* ns(tiu working) / total_time; Overall: Σ / (total × cores)
	                             (PerfWeb); tiu_working_ratio_max = ns(max tiu) / total
	                             (PerfDoc Engine Summary) */
	double tiu_working_ratio_max;
	double parallelism;       /* (tiu + gdma_working + sdma_working) ns / total_time; Overall:
	                             (max tiu + max gdma + max sdma) / total (the vendor's) */
	double mean_parallelism;  /* Overall only: Σ core numerators / (total × cores), tpuprof's
	                             per-core average ("MeanCoreParallelism") */
	double concurrency;       /* measured overlap: time TIU and some DMA engine of the core
	                             are both busy / min(TIU busy union, DMA busy union); 0..1,
	                             0 if either is idle. Overall: the maximum over cores. */
	int64_t overlap_ns;       /* that overlap time */
	double concurrency_bound; /* the vendor's (tiu + gdma - total) / min(tiu, gdma), the
	                             overlap the totals force at least; clamped at 0 */
	struct tp_ftype_stats *ftypes;
	size_t num_ftypes; /* TIU table, sorted by Function Type name; owned by the analysis */
	/* The TIU table's total row ("Overall"; type 0): instr and asic_cycle summed over the
	 * rows, alg_ops / uarch_ops / alg_cycle those of the TIU engine (eng[TP_TRACK_TIU]). */
	struct tp_ftype_stats ftype_total;
	double compute_share; /* tiu busy / (tiu busy + dma busy) */
	/* The reference PerfDoc figures that mix TIU ns with raw GDMA cycles (kept for users who
	 * compare with PerfAI_output.xlsx; see the note in the report). */
	double perfdoc_parallelism, perfdoc_concurrency;
};

/* Ranked entries (layers, command names, operator types). */
struct tp_rank {
	uint32_t name; /* strtab id */
	uint32_t type; /* strtab id (layer type / engine name) */
	int32_t index; /* layer index or -1 */
	int32_t core;
	uint64_t count;
	int64_t total_ns;
	int64_t min_ns, max_ns;
	double share; /* total_ns / total_time (per core where applicable) */
};

struct tp_analysis {
	const struct tp_profile *profile;
	int64_t total_time_ns; /* max end - min start over every engine record */
	size_t num_cores;
	struct tp_core_stats *cores;  /* num_cores entries, device-major, core order */
	struct tp_core_stats overall; /* Overall row (parallelism etc. over cores) */
	int64_t overall_tiu_max_ns, overall_gdma_max_ns, overall_sdma_max_ns;
	uint64_t overall_tiu_max_cycle, overall_gdma_max_cycle, overall_sdma_max_cycle;
	struct tp_rank *top_layers;
	size_t num_top_layers; /* by time, descending; at most TP_ANALYSIS_TOP_LAYERS */
	struct tp_rank *top_cmds;
	size_t num_top_cmds; /* by (engine, name), descending */
	struct tp_rank *op_types;
	size_t num_op_types;                          /* captures: per operator type */
	uint64_t engine_records[TP_TRACK_KIND_COUNT]; /* record counts per track kind */
	/* Cost-model hot spots, worst first (empty without cost data). */
	struct tp_cost_hot low_uarch[TP_ANALYSIS_HOT];
	size_t num_low_uarch; /* commands by cycles lost to padding */
	struct tp_cost_hot low_uarch_layers[TP_ANALYSIS_HOT];
	size_t num_low_uarch_layers;
	struct tp_cost_hot high_init[TP_ANALYSIS_HOT];
	size_t num_high_init; /* commands with initial-cycle ratio > 1 %, by initial cycles */
	/* Captures: the operator table (optable.h: tp_op_table_build), attached by the caller
	 * once per run (the converter does) so that ops.csv, the capture summaries and the
	 * workbook share one build; not owned here. NULL: each of them builds its own. */
	const struct tp_op_table *ops;
	/* The accelerator analysis (accel.h): device lanes against host threads, per step; NULL
	 * when the profile has no device lanes (a dump alone, a capture, a CPU-only trace).
	 * Owned. */
	struct tp_accel *accel;
	/* The layer table, per-Function summary and what-if table (ltab.h); NULL when no layer
	 * has a TIU or GDMA command, or the profile has more than TP_ANALYSIS_LTAB_MAX layers
	 * (the vendor-files writer then builds its own). Owned. */
	struct tp_ltab *ltab;
};
typedef struct tp_analysis tp_analysis;
#define TP_ANALYSIS_LTAB_MAX 200000

/* Computes every statistic. TP_OK or TP_ENOMEM. `a` is overwritten. Same as
 * tp_analyze_jobs(p, a, 1). */
int tp_analyze(const struct tp_profile *p, struct tp_analysis *a);
/* tp_analyze with the passes over the slices (engine statistics, command ranks, TIU/DMA
 * overlap, Function Type tables, hot spots) spread over up to `jobs` threads (0 or 1: the calling
 * thread only). The result is the same for every `jobs`. The profile is only read, so it must
 * not change meanwhile. */
int tp_analyze_jobs(const struct tp_profile *p, struct tp_analysis *a, unsigned jobs);
void tp_analysis_free(struct tp_analysis *a);

/* uArch rate of TIU stats: Σ alg / Σ uarch in 0..1 into *rate; returns 0 ("n/a") when the
 * dump has no cost data. A zero denominator with cost data gives 0 (the vendor's "0.00%"). */
int tp_uarch_rate(const struct tp_engine_stats *tiu, double *rate);

/* Formats a ratio the vendor's way: v·100 with `dec` decimals and '%' ("74.87%"), into buf. */
void tp_fmt_pct(char *buf, size_t n, double v, int dec);

/* LOCAL memory use derived from the commands (lmem.c): one record per DMA LMEM side and per
 * TIU operand / result, on one lane. */
struct tp_lmem_rec {
	int64_t begin_ns, end_ns; /* the command's time span */
	uint32_t lane_offset;     /* local address mod the lane size */
	uint32_t bytes;           /* bytes per lane (capped at the lane size) */
	uint8_t write;            /* 1 data into LMEM (DMA load, TIU result), 0 out of it */
	int32_t track;            /* profile track of the command */
	size_t slice;             /* its index on the track */
};
struct tp_lmem_recs {
	struct tp_lmem_rec *v; /* owned; tp_free */
	size_t n;
	size_t dropped; /* records not kept (see `every`), counted only */
	size_t every;   /* 1: every command's records; k > 1: those of one command in k */
};
/* Builds the records from the commands' descriptor arguments (vendor field names) for cores
 * below max_cores (0 = all). When they are more than `max`, keeps the records of one command
 * in `every` = ceil(records / max) (counted over the commands that give records, in track
 * order, so the sample spans the whole run and every core), at most `max`, and counts the rest.
 * Empty when the profile has no chip constants or no such arguments. TP_OK / TP_ENOMEM (out
 * is then empty). */
int tp_lmem_from_commands(const struct tp_profile *p, size_t max_cores, size_t max,
                          struct tp_lmem_recs *out);
/* tp_lmem_from_commands on up to `jobs` threads (tp_par_run over parts of a fixed number of
 * commands of one track): the same records for any `jobs`. */
int tp_lmem_from_commands_jobs(const struct tp_profile *p, size_t max_cores, size_t max,
                               unsigned jobs, struct tp_lmem_recs *out);

/* Finds the stats of (device, core); NULL if absent. */
const struct tp_core_stats *tp_analysis_core(const struct tp_analysis *a, int32_t device,
                                             int32_t core);

/* Per-command derived bandwidth in GB/s: bytes / ns(cycles at the track clock); 0 if no
 * cycles. (Reference PerfAI rounds to 4 decimals.) */
double tp_slice_gbps(const struct tp_track *t, const struct tp_slice *s, double freq_mhz);

#endif /* TP_ANALYSIS_H */
