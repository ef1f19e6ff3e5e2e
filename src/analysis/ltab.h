/*
 * ltab.h — the layer table and the what-if table of a profile with layer information: per
 * layer (shapes, bytes per DDR direction, GDMA and TIU cycles and times, theoretical times,
 * cost-model ops, peak and actual TOPS, parallelism), per Function (Conv, Eltwise, Pool, ...,
 * Others, Overall) and "what if" rows (TIU and DMA overlapped fully; each Function at the peak
 * TOPS). Definitions: sophgo-bmprofile.md §10.3 and reference-outputs.md §4.5 (the vendor's
 * `tpu_profile.py --format layer`); docs/vendor-files.md lists where tpuprof departs from
 * the vendor's figures.
 *
 * Ownership: struct tp_ltab is filled by tp_ltab_build and freed by tp_ltab_free; it points
 * into (and must not outlive) the profile it was computed from.
 */
#ifndef TP_LTAB_H
#define TP_LTAB_H

#include "analysis/analysis.h"

/* The vendor's Function classes of layer types (its summary rows), Others last. */
enum tp_ltab_func {
	TP_LTF_ACTIVE = 0,
	TP_LTF_ATTENTION,
	TP_LTF_CONV,
	TP_LTF_CAST,
	TP_LTF_ELTWISE,
	TP_LTF_FC,
	TP_LTF_MULSHIFT,
	TP_LTF_LAYERNORM,
	TP_LTF_LUT,
	TP_LTF_MATMUL,
	TP_LTF_POOL,
	TP_LTF_REDUCE,
	TP_LTF_SOFTMAX,
	TP_LTF_OTHERS,
	TP_LTF_COUNT
};
const char *tp_ltab_func_name(enum tp_ltab_func f); /* "Conv", "Others", ... */

#define TP_LTAB_MAX_DT 4 /* data types kept per layer (in order of appearance) */

/* One engine's figures in a row: its cycles in the engine's clock, their time in µs (cycles ×
 * period, the vendor's), their share of all the engine's cycles (0..1) and the time the work
 * would take at the engine's theoretical rate. */
struct tp_ltab_eng {
	uint64_t cycles;
	double us, ratio, theo_us;
};

/* Sums every row kind shares: a layer, a Function, the Overall row. */
struct tp_ltab_sums {
	uint64_t weight_bytes;
	uint64_t s2l_bytes, l2s_bytes, s2s_bytes; /* DDR->LMEM, LMEM->DDR, DDR->DDR */
	struct tp_ltab_eng gdma; /* theo_us: the bytes at the theoretical DDR bandwidth */
	uint64_t alg_ops, uarch_ops;
	struct tp_ltab_eng tiu;             /* theo_us: alg_ops at PeakTops */
	double peak_tops;                   /* 0: unknown (no peak table for the chip) */
	uint8_t dt[TP_LTAB_MAX_DT], num_dt; /* enum tp_dtype, in order of appearance */
};

/* e's theoretical time over its measured time (for GDMA the vendor's ddrRate); 0 when e has no
 * measured time. */
double tp_ltab_theo_rate(const struct tp_ltab_eng *e);

/* The data types of s joined by `sep` ("FP32,FP16") into out (n bytes, always terminated). */
void tp_ltab_dtypes(const struct tp_ltab_sums *s, const char *sep, char *out, size_t n);

/* Which engine a layer waits on: the one with the longer time. */
enum tp_ltab_bound { TP_LTB_NONE = 0, TP_LTB_TIU, TP_LTB_GDMA };
const char *tp_ltab_bound_name(enum tp_ltab_bound b); /* "-", "TIU", "GDMA" */

/* A tensor of a layer row: the profile's tensor (first definition of its id) and whether the
 * layer reads it. */
struct tp_ltab_tensor {
	uint32_t tensor; /* index into profile->tensors */
	uint8_t is_in;
};

/* One layer (a layer with at least one command). */
struct tp_ltab_row {
	int32_t layer; /* profile layer index */
	int32_t id;
	uint32_t type; /* strtab id of the layer type */
	uint8_t is_global;
	uint8_t bound; /* enum tp_ltab_bound */
	enum tp_ltab_func func;
	int64_t in[4], out[4]; /* NCHW of the first input / output tensor (0 when none) */
	/* kernel h/w, strides h/w and padding up/down/left/right: the largest over the layer's
	 * conv and pool commands' descriptors (0 when it has none, or the dump keeps no
	 * descriptor fields) */
	uint32_t geo[8];
	/* its tensors: tp_ltab.tens[tens_first .. + tens_count), inputs first, each the first
	 * definition of its tensor id in the profile (the vendor's tensor table) */
	size_t tens_first, tens_count;
	uint64_t in_bytes, out_bytes;
	uint64_t load_cycles, store_cycles; /* cycles of the DDR->LMEM / LMEM->DDR commands */
	double load_gibps, store_gibps;
	struct tp_ltab_sums s;
	uint64_t sim_cycles; /* net_stat.sim TIU cycles of this layer (0 none) */
	/* global layers: span of its commands in µs, ActualTops, Parallelism, Concurrency */
	double total_us, actual_tops, parallelism, concurrency;
};

/* One Function row. */
struct tp_ltab_func_row {
	enum tp_ltab_func func;
	uint32_t types[8]; /* strtab ids of its layer types, in order of appearance */
	size_t num_types;
	struct tp_ltab_sums s;
};

/* One what-if row: the time the model would take if ... */
enum tp_ltab_case {
	TP_LTC_ORIGIN = 0, /* as measured */
	TP_LTC_OVERLAP,    /* TIU and GDMA overlapped 100 % */
	TP_LTC_MODEL_PEAK, /* a Function's TIU time at the model's PeakTops (cumulative) */
	TP_LTC_LAYER_PEAK, /* a Function's TIU time at its own PeakTops (cumulative) */
};
struct tp_ltab_whatif {
	enum tp_ltab_case kind;
	enum tp_ltab_func func; /* MODEL_PEAK / LAYER_PEAK rows */
	double tiu_before_us;   /* the Function's TIU time */
	double tiu_after_us;    /* ... at the peak */
	double reduced_us;      /* time saved against the previous row of its series */
	double total_us;        /* total time of the model in this case */
	double concurrency;     /* 0..1 */
	double mac_util;        /* flops / (model peak × total), 0..1; 0 when unknown */
};

struct tp_ltab {
	const struct tp_profile *profile;
	struct tp_ltab_row *rows; /* owned; sorted by TIU time, longest first, then layer order */
	size_t num_rows;
	struct tp_ltab_tensor *tens; /* owned; see tp_ltab_row.tens_first */
	size_t num_tens, cap_tens;
	struct tp_ltab_func_row funcs[TP_LTF_COUNT]; /* by total Alg Ops, Others last */
	size_t num_funcs;
	struct tp_ltab_sums overall;
	uint64_t sim_cycles;             /* Σ rows' sim_cycles */
	double total_us;                 /* the model's total time (analysis total_time) */
	double parallelism, concurrency; /* the Overall row's (the vendor's definitions) */
	double fps;                      /* 1e6 / Overall TIU µs; 0 when none */
	double flops;                    /* net_stat.sim's flops; 0 when absent */
	struct tp_ltab_whatif *whatif;   /* owned */
	size_t num_whatif;
};

/* Builds the tables of profile p with its analysis a (tp_analyze). Layers without commands
 * are left out; a profile without layers gives an empty table (num_rows 0). TP_OK or
 * TP_ENOMEM (*t then empty). */
int tp_ltab_build(const struct tp_profile *p, const struct tp_analysis *a, struct tp_ltab *t);
/* The same on up to `jobs` threads (the layers in parts; the table does not depend on jobs). */
int tp_ltab_build_jobs(const struct tp_profile *p, const struct tp_analysis *a, struct tp_ltab *t,
                       unsigned jobs);
void tp_ltab_free(struct tp_ltab *t);

#endif /* TP_LTAB_H */
