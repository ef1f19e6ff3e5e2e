/*
 * model.h — the format-agnostic profile model. Readers fill it, analysis derives numbers from
 * it, writers turn it into files. Nothing here knows which file format the data came from.
 *
 * Shape: a profile holds devices (Perfetto "processes"); each device has tracks (Perfetto
 * "threads"/tracks): one per (core, engine) for accelerator dumps, one per OS thread for
 * tpuprof captures. A track holds slices in a compact 40-byte record (tens of millions of
 * commands must fit in RAM), sorted by start time once the reader calls tp_profile_finish;
 * what repeats across slices (names, command class, depth, stall, DMA size, the high half of
 * the start cycle) is a per-track label table, and the rare durations of 2^31 ns or more a
 * per-track side table.
 * Side tables hold layers (a compact 40-byte record each, read and written through
 * tp_profile_layer / tp_profile_set_layer), subnets, tensors, memory allocations, counters,
 * free-form metadata and per-slice argument sets.
 *
 * Ownership: everything hangs off one struct tp_profile. Strings live in its string table's
 * blocks and small objects in its arena; the growable arrays (tracks' slices, tables) are heap
 * blocks owned by the profile and released by tp_profile_free. Not thread-safe: one thread builds a
 * profile, then any number of threads may read it.
 */
#ifndef TP_MODEL_H
#define TP_MODEL_H

#include <string.h>

#include "common/common.h"
#include "model/argkeys.h"

/* Architectures known to the readers. */
enum tp_arch {
	TP_ARCH_UNKNOWN = 0,
	TP_ARCH_BM1684,
	TP_ARCH_BM1684X,
	TP_ARCH_BM1688, /* also A2 / CV186X */
	TP_ARCH_BM1690, /* SG2260 */
	TP_ARCH_CPU,    /* tpuprof captures of host code */
	TP_ARCH_CV184X,
	TP_ARCH_SG2260E, /* 4-core BM1690 variant ("AKSV") */
	TP_ARCH_COUNT
};
const char *tp_arch_name(enum tp_arch a);         /* "BM1688", "unknown", ... */
enum tp_arch tp_arch_from_name(const char *name); /* case-insensitive; A2/CV186X -> BM1688 */

/*
 * What the analysis and the writers may know about the accelerator a profile came from: its
 * constants, independent of the file format. Readers point tp_profile.chip at a static table
 * row (the Sophgo rows live in src/readers/sophgo/chip.c, each constant citing its source); NULL
 * when nothing is known (captures, foreign traces). Zero means "unknown" for every field.
 */
struct tp_chip {
	const char *name; /* "BM1688", as the vendor spells it in __CHIP_ARCH_ARGS__ */
	enum tp_arch arch;
	unsigned cores;             /* TPU cores per device */
	double tiu_mhz, dma_mhz;    /* default clocks */
	unsigned npu_num;           /* lanes */
	unsigned eu_base;           /* int8 execution units per lane */
	unsigned cube_base;         /* int8 cube IC parallelism */
	unsigned ohow_align;        /* CubeOutputHeightWidthAlignNum */
	unsigned exec_units;        /* ExecutionUnitNumber (total) */
	unsigned vector_ohow_align; /* "Vector OHOW Align(8bits)" */
	uint64_t lmem_bytes;        /* local memory, all lanes */
	uint32_t lane_bytes;        /* local memory of one lane */
	unsigned banks;             /* banks per lane */
	double ddr_max_gbps;        /* per-core DDR peak bandwidth; 0 unknown */
	double l2_max_gbps;         /* L2 SRAM peak; 0 none */
	double ddr_mhz;             /* DDR frequency */
	unsigned bus_max_burst, l2_max_burst, bus_bandwidth;
};

/* What a track carries. Engine kinds keep the reference tools' vocabulary. */
enum tp_track_kind {
	TP_TRACK_TIU = 0, /* a.k.a. BD: the tensor compute engine */
	TP_TRACK_GDMA,
	TP_TRACK_SDMA,
	TP_TRACK_CDMA,
	TP_TRACK_MCU,    /* firmware / DYN_DATA records */
	TP_TRACK_LAYER,  /* layers as slices (filled by the reader or by tp_profile_layer_track) */
	TP_TRACK_THREAD, /* a host thread of a capture: activities, steps, operators nested */
	TP_TRACK_HOST,   /* host API lanes imported from other traces */
	TP_TRACK_KIND_COUNT
};
const char *tp_track_kind_name(enum tp_track_kind k); /* "TIU", "GDMA", ..., "Layer", "Thread" */
static inline int tp_track_kind_is_dma(enum tp_track_kind k)
{
	return k == TP_TRACK_GDMA || k == TP_TRACK_SDMA || k == TP_TRACK_CDMA;
}
/* A host lane: a capture's thread or an imported trace's host API lane. */
static inline int tp_track_kind_is_host(enum tp_track_kind k)
{
	return k == TP_TRACK_THREAD || k == TP_TRACK_HOST;
}

/* Command classes the analysis must tell apart (reference formulas exclude sys commands). */
enum tp_cmd_kind {
	TP_CMD_NORMAL = 0, /* compute or data movement */
	TP_CMD_SYS,        /* other sys commands: nop, end, tr_wr, sys_tr_acc, chain_end */
	TP_CMD_SYS_SEND,   /* send_msg */
	TP_CMD_SYS_WAIT,   /* wait_msg (TIU tsk_typ 15 eu 9; DMA sys sp_func 4) */
};

/* DMA direction between memories. */
enum tp_dir {
	TP_DIR_NONE = 0,
	TP_DIR_DDR_TO_LMEM,  /* S2L, "DDR->LMEM" */
	TP_DIR_LMEM_TO_DDR,  /* L2S */
	TP_DIR_DDR_TO_DDR,   /* S2S */
	TP_DIR_LMEM_TO_LMEM, /* L2L */
	TP_DIR_DDR_TO_L2,
	TP_DIR_L2_TO_DDR,
	TP_DIR_L2_TO_LMEM,
	TP_DIR_LMEM_TO_L2,
	TP_DIR_L2_TO_L2,
	TP_DIR_COUNT
};
const char *tp_dir_name(enum tp_dir d); /* "DDR->LMEM", ...; "-" for NONE */
int tp_dir_reads_ddr(enum tp_dir d);    /* source is DDR */
int tp_dir_writes_ddr(enum tp_dir d);   /* destination is DDR */
static inline int tp_dir_touches_ddr(enum tp_dir d)
{
	return tp_dir_reads_ddr(d) || tp_dir_writes_ddr(d);
}
int tp_dir_touches_l2(enum tp_dir d);

/* Element data types (global.profile DataType order, §3.3 of the bmprofile spec). */
enum tp_dtype {
	TP_DT_NONE = 0,
	TP_DT_FP32,
	TP_DT_FP16,
	TP_DT_INT8,
	TP_DT_UINT8,
	TP_DT_INT16,
	TP_DT_UINT16,
	TP_DT_INT32,
	TP_DT_UINT32,
	TP_DT_BF16,
	TP_DT_FP8,
	TP_DT_INT4,
	TP_DT_FP64,
	TP_DT_INT64,
	TP_DT_BOOL,
	TP_DT_COUNT
};
const char *tp_dtype_name(enum tp_dtype t); /* "FP32", "INT8", ...; "" for NONE */
unsigned tp_dtype_size(enum tp_dtype t);    /* bytes per element, 0 for NONE */

/*
 * What a slice is, apart from its times and ids: names, command class, nesting depth, stall
 * cycles and DMA size, plus the high half of its start cycle (a storage split, see
 * tp_slice_start_cycle). A track stores each distinct combination once (a net has a few
 * hundred to a few thousand over millions of commands: stall is 0 on TIU and on most DMA
 * commands, DMA sizes repeat, TIU commands have none, and cycle_hi changes once every 2^32
 * cycles, seconds of run time) and its slices hold the combination's id; read them with
 * tp_slice_name & co. and set them with tp_slice_set_label / tp_slice_set_name & co.
 */
struct tp_label {
	uint32_t name;     /* strtab id: function name (conv.normal, tensorLd, op name, ...) */
	uint32_t type;     /* strtab id: function type / category (sCONV, DMA_tensor, ...) */
	uint8_t kind;      /* enum tp_cmd_kind */
	uint8_t dir;       /* enum tp_dir */
	uint8_t dtype;     /* enum tp_dtype (DMA source format / TIU result precision) */
	uint8_t depth;     /* nesting depth on its track (captures); 0 for commands */
	uint32_t stall;    /* stall cycles */
	uint32_t bytes;    /* DMA data size in bytes (max of DDR and LMEM side); 0 = none
	                      (read with tp_slice_bytes) */
	uint32_t cycle_hi; /* start_cycle >> 32 of its slices (read with tp_slice_start_cycle) */
};
typedef struct tp_label tp_label;
_Static_assert(sizeof(struct tp_label) == 24, "tp_label must stay 24 bytes (no padding: it is "
                                              "compared and hashed as bytes)");

/* One command / event / operator on a track. Exactly 40 bytes. */
struct tp_slice {
	int64_t start_ns; /* on the profile's common time axis (0 = earliest event) */
	/* the low half of the start in aligned engine cycles (0-based; 0 when the source has
	 * none); the high half is in its label. Read with tp_slice_start_cycle, write with
	 * tp_slice_set_start_cycle */
	uint32_t start_cycle_lo;
	uint32_t cycles; /* "Asic Cycle" = end - start + 1 in engine cycles; 0 if none */
	/* end_ns - start_ns when below TP_SLICE_LONG_DUR; else TP_SLICE_LONG_DUR | the index of
	 * the duration in its track's long_dur. Read with tp_slice_end / tp_slice_dur, write with
	 * tp_slice_set_end (after start_ns: the end is kept relative to the start, so moving
	 * start_ns moves the end with it) */
	uint32_t dur;
	uint32_t label;  /* index into its track's labels (struct tp_label); 0 = all zero */
	uint32_t cmd_id; /* hardware command id (1-based, PMU inst_id + 1); 0 = none */
	uint32_t dep_id; /* cmd id on the partner engine this command waits for; 0 = none */
	int32_t layer;   /* index into the profile's layer table (tp_profile_layer), -1 = none */
	uint32_t args;   /* argument set id (tp_profile_args), 0 = none */
};
typedef struct tp_slice tp_slice;
_Static_assert(sizeof(struct tp_slice) == 40, "tp_slice must stay 40 bytes");
#define TP_SLICE_LONG_DUR 0x80000000u

/*
 * Per-command figures of a TIU cost model (for Sophgo: the vendor's, sophgo-costmodel.md §3),
 * kept beside a track's slices: cost[i] belongs to slices[i] (tp_profile_finish keeps them in
 * step when it sorts). A track without descriptors has cost == NULL; a command the model does
 * not cover has valid == 0.
 *
 * The three ratios are numbers, never the vendor's "74.9%" text: they are derived from the
 * figures and the slice's Asic Cycle (struct tp_slice.cycles) in the vendor's definitions
 * (sophgo-costmodel.md §3, get_tiu_info), so they are not stored. tp_track_get_cost fills
 * them; tp_track_set_cost ignores them; tp_cost_ratios fills them for a record a reader holds.
 * A writer that prints the vendor's column formats ratio × 100 with one decimal and '%'
 * (argument keys TP_KEY_UARCH_RATE & co. in model/argkeys.h).
 */
struct tp_cost {
	uint64_t alg_ops;    /* "Alg Ops": operations the algorithm needs */
	uint64_t uarch_ops;  /* "uArch Ops": operations the hardware spends (alignment padding) */
	uint32_t alg_cycle;  /* "Alg Cycle": ideal cycles at full throughput; BM1684X: the
	                        compiler simulator's cycles (net_stat.sim), on GDMA commands
	                        too, whether valid or not */
	uint32_t init_cycle; /* fixed start-up cycles of the op class */
	uint32_t bank_cycle; /* bank-conflict cycles */
	uint8_t valid;       /* 1 = modelled */
	uint8_t pad[3];
	double uarch_rate; /* "uArch Rate": alg_ops / uarch_ops, 0 when uarch_ops is 0 */
	double init_ratio; /* "Initial Cycle Ratio": init_cycle / (Asic Cycle + 1e-4) */
	double bank_ratio; /* "Bank Conflict Ratio": bank_cycle / (Asic Cycle + 1e-4) */
};
_Static_assert(sizeof(struct tp_cost) == 56, "tp_cost must stay 56 bytes");

/* Fills the ratios of c (uarch_rate, init_ratio, bank_ratio) from its figures for a command of
 * `asic_cycle` Asic Cycles. */
void tp_cost_ratios(struct tp_cost *c, uint64_t asic_cycle);

/* How a track stores its cost entries: a u32 per slice indexing a dictionary of the distinct
 * entries (a net repeats a few dozen shapes over millions of commands), each packed in 16
 * bytes (the figures of a tp_cost; its ratios are derived on reading). Bits: w[0] = alg_ops (40) |
 * uarch_ops low 24 << 40; w[1] = uarch_ops high 16 | alg_cycle << 16 | init_cycle (8) << 48 |
 * bank_cycle (6) << 56 | valid
 * << 62 | 1 << 63 when the entry did not fit: then w[0] indexes the track's cost_big. Read
 * and write them only with tp_track_get_cost / tp_track_set_cost. */
struct tp_cost_pk {
	uint64_t w[2];
};
_Static_assert(sizeof(struct tp_cost_pk) == 16, "tp_cost_pk must stay 16 bytes");

struct tp_track {
	uint32_t name; /* strtab id: "TIU", "GDMA", thread name, ... */
	uint8_t kind;  /* enum tp_track_kind */
	/* How the vendor of this track's chip prints a command's End Cycle (tp_slice_end_cycle):
	 * 0 its last cycle, start + cycles - 1, with Asic Cycle = End - Start + 1 (PerfAI
	 * chips); 1 the first cycle after it, start + cycles, with the cycles = End - Start
	 * (BM1684X / BM1684 instruction.csv). */
	uint8_t end_cycle_exclusive;
	int32_t device; /* index into profile->devices */
	int32_t core;   /* core index inside the device, -1 for host tracks */
	int64_t tid;    /* OS thread id for THREAD tracks (captures), else 0 */
	/* strtab id of the thread id as the input wrote it when `tid` is not that number (a
	 * Chrome trace's text tid such as "worker", or one outside int64), else 0 */
	uint32_t tid_text;
	double freq_mhz;         /* engine clock for cycle<->time conversion; 0 if unknown */
	struct tp_slice *slices; /* owned; sorted by (start_ns, -end_ns) after tp_profile_finish */
	size_t count, cap;
	uint64_t dropped; /* events the source lost on this track (captures, PMU overflow) */
	/* owned; NULL (no cost model) or one entry per slice of cost_width bytes (1, 2 or 4: the
	 * narrowest that holds every id so far; a net has a few dozen distinct entries): 0 =
	 * none, else 1 + its index in cost_dict (see struct tp_cost_pk; read with
	 * tp_track_get_cost) */
	void *cost;
	size_t cost_cap;
	uint8_t cost_width;
	struct tp_cost_pk *cost_dict; /* owned; the distinct entries */
	uint32_t num_cost_dict, cap_cost_dict;
	uint32_t *cost_slots; /* owned; hash of cost_dict (index + 1), freed by finish */
	uint32_t num_cost_slots;
	struct tp_cost *cost_big; /* owned; the entries that do not fit 16 bytes */
	size_t num_cost_big, cap_cost_big;
	/* owned; the distinct labels of the slices (struct tp_slice.label indexes it); [0] is the
	 * all-zero label, present from tp_profile_add_track on (or the first tp_track_label) */
	struct tp_label *labels;
	uint32_t num_labels, cap_labels;
	uint32_t *label_slots; /* owned; hash of labels (index + 1) */
	uint32_t num_label_slots;
	uint32_t label_last; /* the last label interned (a cache for runs of equal labels) */
	/* owned; durations (end - start, modulo 2^64) of the slices whose dur has
	 * TP_SLICE_LONG_DUR set: those of 2^31 ns (2.1 s) and more, or negative */
	uint64_t *long_dur;
	uint32_t num_long_dur, cap_long_dur;
	/* owned; NULL, or one entry per slice (lmem_cap of them, kept in step by
	 * tp_profile_finish): the LOCAL memory records a reader kept for the command in compact
	 * form when it dropped the decoded descriptor fields they come from (model/lmemrec.h):
	 * 0 = none, else (index of the first in lmem_recs + 1) | count << 30 */
	uint32_t *lmem;
	size_t lmem_cap;
	uint64_t *lmem_recs; /* owned; packed: lane offset | bytes per lane << 32 | write << 63 */
	size_t num_lmem_recs, cap_lmem_recs;
};
typedef struct tp_track tp_track;

/* The label of slice s of track t (s must be one of t's slices, or a slice whose label was
 * interned in t). Inline: these are read in every per-slice loop. */
static inline const struct tp_label *tp_slice_label(const struct tp_track *t,
                                                    const struct tp_slice *s)
{
	return &t->labels[s->label];
}
static inline uint32_t tp_slice_name(const struct tp_track *t, const struct tp_slice *s)
{
	return t->labels[s->label].name;
}
static inline uint32_t tp_slice_type(const struct tp_track *t, const struct tp_slice *s)
{
	return t->labels[s->label].type;
}
static inline enum tp_cmd_kind tp_slice_kind(const struct tp_track *t, const struct tp_slice *s)
{
	return (enum tp_cmd_kind)t->labels[s->label].kind;
}
static inline enum tp_dir tp_slice_dir(const struct tp_track *t, const struct tp_slice *s)
{
	return (enum tp_dir)t->labels[s->label].dir;
}
static inline enum tp_dtype tp_slice_dtype(const struct tp_track *t, const struct tp_slice *s)
{
	return (enum tp_dtype)t->labels[s->label].dtype;
}
static inline unsigned tp_slice_depth(const struct tp_track *t, const struct tp_slice *s)
{
	return t->labels[s->label].depth;
}
static inline uint32_t tp_slice_stall(const struct tp_track *t, const struct tp_slice *s)
{
	return t->labels[s->label].stall;
}
static inline uint32_t tp_slice_bytes(const struct tp_track *t, const struct tp_slice *s)
{
	return t->labels[s->label].bytes;
}
/* The start of slice s of track t in aligned engine cycles: the label's high half and the
 * slice's low half (set both with tp_slice_set_start_cycle). */
static inline uint64_t tp_slice_start_cycle(const struct tp_track *t, const struct tp_slice *s)
{
	return (uint64_t)t->labels[s->label].cycle_hi << 32 | s->start_cycle_lo;
}
/* The End Cycle of slice s as its chip's vendor prints it: the last engine cycle (start +
 * cycles - 1; the start when cycles is 0), or start + cycles on a track with
 * end_cycle_exclusive. Every output's "End Cycle" comes from here. */
static inline uint64_t tp_slice_end_cycle(const struct tp_track *t, const struct tp_slice *s)
{
	uint64_t c = tp_slice_start_cycle(t, s);
	if (t->end_cycle_exclusive)
		return c + s->cycles;
	return s->cycles ? c + s->cycles - 1 : c;
}

/* The Global Idx of the slice at index i of its track: its place on the track counted from 1,
 * as the vendor numbers commands in tiuRegInfo_N.txt, tdmaRegInfo_N.txt and
 * PerfAI_output.csv. Every output that shows a "Global Idx" (TP_KEY_GLOBAL_IDX) takes it from
 * here or from tp_slice_global_idx, so that the outputs cannot disagree on the base. */
static inline uint64_t tp_global_idx(size_t i)
{
	return (uint64_t)i + 1;
}
/* The Global Idx of slice s of track t (s must be one of t's slices). */
static inline uint64_t tp_slice_global_idx(const struct tp_track *t, const struct tp_slice *s)
{
	return tp_global_idx((size_t)(s - t->slices));
}

/* The end of slice s of track t (s must be one of t's slices): start_ns plus its duration.
 * tp_slice_dur is end - start. Inline: read in every per-slice loop. */
static inline int64_t tp_slice_dur(const struct tp_track *t, const struct tp_slice *s)
{
	return s->dur & TP_SLICE_LONG_DUR ? (int64_t)t->long_dur[s->dur & ~TP_SLICE_LONG_DUR]
	                                  : (int64_t)s->dur;
}
static inline int64_t tp_slice_end(const struct tp_track *t, const struct tp_slice *s)
{
	/* Modulo 2^64: exact whenever the end fits an int64, as it did when it was set. */
	return (int64_t)((uint64_t)s->start_ns + (uint64_t)tp_slice_dur(t, s));
}

/* Interns label l in track t and stores its index in *id. For readers (through
 * tp_slice_set_label) and for writers that build slices of their own tracks. TP_OK /
 * TP_ENOMEM (*id = 0). Touches only t: calls for different tracks may run in parallel. */
int tp_track_label(struct tp_track *t, const struct tp_label *l, uint32_t *id);

struct tp_device {
	uint32_t name; /* strtab id, e.g. "BM1688 device 0" or "resnet50 (pid 1234)" */
	int32_t id;    /* device id / process id as recorded */
	int32_t num_cores;
	/* strtab id of the id as the input wrote it when `id` is not that number (a Chrome
	 * trace's text pid such as "Python", or one outside int32), else 0 */
	uint32_t id_text;
};
typedef struct tp_device tp_device;

/*
 * A network layer (compiler log or tensor_location.json) or a captured operator type row, as
 * readers and writers see it: a value copied in and out of the profile's layer table with
 * tp_profile_add_layer / tp_profile_layer / tp_profile_set_layer (the table stores a compact
 * 40-byte record per layer, see struct tp_layer_table). Two "don't care" values read back
 * normalised: an untimed layer (begin > end) reads as begin 0, end -1, and first_tensor is 0
 * when num_tensors is 0.
 */
struct tp_layer {
	int32_t id;    /* layer_id as recorded (line in final.mlir), -1 if none */
	uint32_t type; /* strtab id: Conv2D, Load, Store, ... */
	uint32_t name; /* strtab id: layer name (may be "") */
	int32_t device, core;
	int32_t subnet;                     /* subnet id, -1 if none */
	int32_t group;                      /* layer-group / parallel block index, -1 if none */
	uint8_t is_local;                   /* 1 local (layer group) op, 0 global */
	uint8_t is_data_move;               /* Load/Store-like: drawn half height */
	uint32_t tiu_first, tiu_last;       /* member TIU cmd ids [first,last], 0,0 = none */
	uint32_t gdma_first, gdma_last;     /* member GDMA cmd ids, 0,0 = none */
	uint32_t first_tensor, num_tensors; /* range in profile->tensors */
	int64_t begin_ns, end_ns;           /* from matched commands; begin > end = no timing */
};
typedef struct tp_layer tp_layer;

/*
 * The layer table's storage (private to layers.c; read and write layers only through the
 * functions below). Dumps carry about one layer per 2.6 commands, so at 10 M commands per
 * core the table holds millions of layers: each is a 40-byte record in fixed chunks of
 * TP_LAYER_CHUNK records (no reallocation copy while a reader appends, slack under one chunk),
 * with narrow fields for the common ranges (core and device in a few bits, cmd id ranges as
 * first + 16-bit span, subnet and group as 16 bits, begin in 48 bits and the duration in 32).
 * A layer whose values do not fit is kept whole in `wide`, and a layer with tensors has its
 * tensor range in `tens`; both side tables are sorted by layer index. A chunk is 5.2 MB, so
 * that the allocator's huge-page hint (common/alloc.c) covers most of it and the records'
 * first touch takes few page faults; a chunk's untouched part is never backed, so a small
 * profile does not pay for it.
 */
#define TP_LAYER_CHUNK 131072
struct tp_layer_rec;
struct tp_layer_wide;
struct tp_layer_tens;
struct tp_layer_table {
	struct tp_layer_rec **chunks; /* owned; each TP_LAYER_CHUNK records */
	size_t num_chunks, cap_chunks;
	struct tp_layer_wide *wide; /* owned; layers that do not fit the record */
	size_t num_wide, cap_wide;
	struct tp_layer_tens *tens; /* owned; tensor ranges of layers with tensors */
	size_t num_tens, cap_tens;
};

#define TP_MAX_DIMS 8
struct tp_tensor {
	int64_t id;    /* tensor_id; negative for block arguments */
	int32_t layer; /* index into the profile's layer table (tp_profile_layer) */
	uint8_t is_in, is_const, dtype, ndim;
	int64_t shape[TP_MAX_DIMS];
	uint64_t gaddr, gsize; /* DDR address and size (0 if local) */
	uint64_t loffset;      /* local-memory offset */
	uint32_t nslice, hslice;
	uint64_t l2addr;
};
typedef struct tp_tensor tp_tensor;

struct tp_subnet {
	int32_t id, iteration;
	int32_t type; /* 0 TPU, 1 CPU, 2 MERGE, 3 SWITCH */
	int32_t is_dynamic;
	uint64_t begin_usec, end_usec; /* host wall clock as recorded */
};
typedef struct tp_subnet tp_subnet;

/* One device-memory allocation (global.profile mtype lines). */
struct tp_mem {
	int32_t mtype; /* 0 CPU, 1 GLOBAL (DDR), 2 LOCAL, 3 ARM */
	uint64_t addr, size;
	uint64_t alloc_usec, free_usec; /* free 0 = never freed */
	uint32_t desc;                  /* strtab id */
};
typedef struct tp_mem tp_mem;

/* A counter series (captures' tpuprof_counter, hardware counters). */
struct tp_counter_sample {
	int64_t ts_ns;
	double value;
};
struct tp_counter {
	uint32_t name; /* strtab id */
	uint32_t unit; /* strtab id, "" if none */
	int32_t device;
	int32_t track; /* owning thread track or -1 for a device-level counter */
	struct tp_counter_sample *samples; /* owned, sorted by ts after finish */
	size_t count, cap;
};
typedef struct tp_counter tp_counter;

/* Argument values attached to slices (tensor details, descriptor fields, ...). */
enum tp_arg_type { TP_ARG_INT = 0, TP_ARG_UINT, TP_ARG_REAL, TP_ARG_STR };
struct tp_arg {
	uint32_t key; /* strtab id; writers print it verbatim ("Function Name", "in0.shape") */
	uint8_t type; /* enum tp_arg_type */
	union {
		int64_t i;
		uint64_t u;
		double d;
		uint32_t s; /* strtab id */
	} v;
};
typedef struct tp_arg tp_arg;
struct tp_argset {
	uint32_t first, count; /* range in profile->args */
};

/* Free-form metadata, printed in reports in insertion order ("arch", "net_name", ...). */
struct tp_meta {
	uint32_t key, value; /* strtab ids */
};

/* Notes for the user (quirks, reference bugs worked around, data lost). Printed in reports. */
struct tp_note {
	uint32_t text; /* strtab id */
};

/* An explicit flow arrow between two tracks (imported traces' s/f flow events): from the
 * slice of track `from_track` that encloses from_ns to the slice of `to_track` that encloses
 * to_ns (the latest-starting one; the writers resolve it). Flows whose ends find no slice, or
 * whose target does not start after the source, are not drawn. */
struct tp_flow {
	int32_t from_track, to_track;
	int64_t from_ns, to_ns;
};

/*
 * What a vendor tool reports for one core, computed by the reader the vendor's way where
 * tpuprof's own definitions differ (another timeline, other command labels), so the writers
 * can print it under the vendor's names beside tpuprof's own figures. Nothing derives from it:
 * the analysis never reads it. Ratios are 0..1; cycle totals in the engine's clock.
 */
struct tp_vendor_row {
	int32_t device, core;
	int64_t total_time_ns;                      /* the vendor's "totalTime" */
	double parallelism;                         /* "Parallelism" */
	double tiu_working_ratio;                   /* "TiuWorkingRatio" */
	uint64_t tiu_cycle, gdma_cycle, sdma_cycle; /* "totalTiuCycle", "totalGdmaCycle", ... */
	double gdma_ddr_gbps, gdma_l2_gbps, sdma_ddr_gbps; /* "GdmaDdrAvgBW", ... */
	uint64_t records[TP_TRACK_CDMA + 1]; /* record counts: TIU, GDMA, SDMA, CDMA */
	/* 1 when total_time_ns cannot be the core's span: not above zero, or shorter than what
	 * TIU or GDMA alone worked on the core. parallelism and tiu_working_ratio over it mean
	 * nothing (they exceed 100 % per engine): the writers show them as not available. */
	int short_span;
};
struct tp_vendor {
	uint32_t tool;              /* strtab id of the tool's name; 0 = no rows */
	struct tp_vendor_row *rows; /* owned; one per core, in core order */
	size_t num_rows, cap_rows;
};

/* Reader statistics surfaced in summary.json. */
struct tp_read_stats {
	uint64_t files_read;
	uint64_t blocks_read;
	uint64_t blocks_skipped;  /* unknown block types skipped by length */
	uint64_t records_read;    /* PMU / capture records decoded */
	uint64_t records_dropped; /* records trimmed or lost (counted, never silent) */
	uint64_t bytes_missing;   /* truncated inputs: bytes the file promised but lacked */
};

struct tp_layer_sim {
	int64_t layer_id;
	uint64_t cycles;
};

struct tp_profile {
	struct tp_arena arena;
	struct tp_strtab strs;

	enum tp_arch arch;
	const struct tp_chip *chip; /* static chip constants, NULL if unknown */
	uint32_t net_name;          /* strtab id */
	double tiu_freq_mhz;        /* clocks used for cycle<->ns (after CLI overrides) */
	double gdma_freq_mhz;
	uint32_t source; /* strtab id: reader name, e.g. "sophgo-bmprofile" */

	struct tp_device *devices;
	size_t num_devices, cap_devices;
	struct tp_track *tracks;
	size_t num_tracks, cap_tracks;
	struct tp_layer_table layer_tab;
	size_t num_layers; /* tp_profile_layer(p, i, &tmp) */
	struct tp_tensor *tensors;
	size_t num_tensors, cap_tensors;
	struct tp_subnet *subnets;
	size_t num_subnets, cap_subnets;
	struct tp_mem *mems;
	size_t num_mems, cap_mems;
	struct tp_counter *counters;
	size_t num_counters, cap_counters;
	struct tp_arg *args;
	size_t num_args, cap_args;
	struct tp_argset *argsets;
	size_t num_argsets, cap_argsets; /* [0] unused: id 0 = none */
	struct tp_meta *meta;
	size_t num_meta, cap_meta;
	struct tp_note *notes;
	size_t num_notes, cap_notes;
	struct tp_flow *flows;
	size_t num_flows, cap_flows;

	/* The compiler simulator's TIU cycles per layer id (net_stat.sim, BM1684X/BM1684: the
	 * items its pairing with the commands reached), sorted by layer id, one entry each */
	struct tp_layer_sim *layer_sim;
	size_t num_layer_sim;
	struct tp_vendor vendor; /* the vendor tool's figures (see struct tp_vendor_row) */
	struct tp_read_stats stats;
	_Atomic int oom;   /* sticky: an insertion ran out of memory (on any thread) */
	uint64_t strs_cut; /* distinct strings cut at TP_PROFILE_MAX_STR (tp_profile_str) */
	size_t
	    strs_cut_note; /* 1 + the index of the note saying so (tp_profile_finish), 0 = none */
	int64_t span_begin_ns, span_end_ns; /* set by tp_profile_finish over all slices */
	/* set by tp_profile_finish over the slices of the accelerator's tracks (every kind but
	 * THREAD and HOST): the device's own time scale, which a merged host trace does not
	 * stretch; both 0 when there are none */
	int64_t device_begin_ns, device_end_ns;
};
typedef struct tp_profile tp_profile;

/* Creates an empty profile. Returns NULL on out of memory. Caller owns; free with
 * tp_profile_free. */
struct tp_profile *tp_profile_new(void);
void tp_profile_free(struct tp_profile *p);

/* Strings longer than this many bytes are cut where they enter the model (tp_profile_str*):
 * the longest real names are templated kernel names of a few KiB, and a name of hundreds of
 * MB would otherwise be written whole, several times, by every output. A cut string keeps its
 * longest prefix that ends on a character boundary and fits with TP_PROFILE_CUT_MARK, which
 * it ends in; at most TP_PROFILE_MAX_STR bytes in all. */
#define TP_PROFILE_MAX_STR 65536
#define TP_PROFILE_CUT_MARK "\xe2\x80\xa6" /* U+2026 HORIZONTAL ELLIPSIS */

/* Interns a string; returns its id, or 0 (the empty string) on out of memory, which also
 * sets p's sticky oom flag checked by tp_profile_finish. Invalid UTF-8 is replaced with U+FFFD
 * here (common.h's text-safety rules), so every model string is valid UTF-8; control
 * characters are kept and escaped by each writer. A string longer than TP_PROFILE_MAX_STR
 * bytes (after that repair) is cut there and counted in p->strs_cut; tp_profile_finish notes
 * the count. */
uint32_t tp_profile_str(struct tp_profile *p, const char *s);
uint32_t tp_profile_strn(struct tp_profile *p, const char *s, size_t n);
/* Adds a string that is almost surely unique (a layer name) without de-duplicating it. */
uint32_t tp_profile_strn_unique(struct tp_profile *p, const char *s, size_t n);
/* Whether s[0..n) goes into the model as it is (valid UTF-8, at most TP_PROFILE_MAX_STR
 * bytes): pure, for a reader's worker threads. */
int tp_profile_str_ok(const char *s, size_t n);
/* tp_profile_strn_unique of a string tp_profile_str_ok accepted (on another thread, say). */
uint32_t tp_profile_strn_unique_ok(struct tp_profile *p, const char *s, size_t n);
static inline const char *tp_str(const struct tp_profile *p, uint32_t id)
{
	return tp_strtab_get(&p->strs, id);
}

/* A walk over the slices of a profile's host tracks (tp_track_kind_is_host), track by track,
 * each track's slices in order:
 *     struct tp_host_walk w = {0};
 *     for (const struct tp_slice *s; (s = tp_host_walk_next(p, &w));) ... w.tr is s's track */
struct tp_host_walk {
	size_t t, k;
	const struct tp_track *tr;
};
static inline const struct tp_slice *tp_host_walk_next(const struct tp_profile *p,
                                                       struct tp_host_walk *w)
{
	for (; w->t < p->num_tracks; w->t++, w->k = 0) {
		const struct tp_track *tr = &p->tracks[w->t];
		if (tp_track_kind_is_host((enum tp_track_kind)tr->kind) && w->k < tr->count) {
			w->tr = tr;
			return &tr->slices[w->k++];
		}
	}
	return NULL;
}

/* Adds a device; returns its index or -1 on out of memory. */
int tp_profile_add_device(struct tp_profile *p, const char *name, int32_t id, int32_t num_cores);
/* Adds a track; returns its index or -1. */
int tp_profile_add_track(struct tp_profile *p, int32_t device, int32_t core,
                         enum tp_track_kind kind, const char *name, double freq_mhz);
/* Finds the track of (device, core, kind) or returns -1. */
int tp_profile_find_track(const struct tp_profile *p, int32_t device, int32_t core,
                          enum tp_track_kind kind);
/* Reserves room for n more slices on a track (readers that know counts call this so the
 * array is allocated once). TP_OK / TP_ENOMEM. */
int tp_track_reserve(struct tp_profile *p, int track, size_t n);
/* Gives back the room reserved past the track's last slice (for a reader that reserved by an
 * estimate). Never fails: if the allocator refuses, the array stays as it is. */
void tp_track_fit(struct tp_profile *p, int track);
/* Appends a new slice (tp_slice_init's: all zero but its layer, -1) and returns it, or NULL on
 * out of memory; valid until the next append to the same track. */
struct tp_slice *tp_track_push(struct tp_profile *p, int track);
static inline void tp_slice_init(struct tp_slice *s)
{
	memset(s, 0, sizeof *s);
	s->layer = -1;
}

/* Sets the end of slice s of track t to end_ns, relative to its current start_ns (set that
 * first). Durations of 2^31 ns and more (or negative ones, which readers may hold while they
 * unwrap counters) go to the track's long_dur table; nothing is ever truncated. TP_OK;
 * TP_ENOMEM (sets p's sticky oom flag; s keeps its old end). Touches only t (and p->oom):
 * calls for different tracks may run in parallel. */
int tp_slice_set_long_dur(struct tp_profile *p, struct tp_track *t, struct tp_slice *s,
                          uint64_t dur);
static inline int tp_slice_set_end(struct tp_profile *p, struct tp_track *t, struct tp_slice *s,
                                   int64_t end_ns)
{
	uint64_t d = (uint64_t)end_ns - (uint64_t)s->start_ns;
	if (d < TP_SLICE_LONG_DUR) {
		s->dur = (uint32_t)d;
		return TP_OK;
	}
	return tp_slice_set_long_dur(p, t, s, d); /* the rare case, out of line */
}

/* Sets the label of slice s of track t (interning it in t). TP_OK; TP_ENOMEM on out of memory
 * (sets p's sticky oom flag; s keeps its label). Touches only t (and p->oom on failure): calls
 * for different tracks may run in parallel. The tp_slice_set_<field> forms change one field of
 * the slice's label. */
static inline int tp_slice_set_label(struct tp_profile *p, struct tp_track *t, struct tp_slice *s,
                                     const struct tp_label *l)
{
	uint32_t id;
	if (memcmp(&t->labels[s->label], l, sizeof *l) == 0)
		return TP_OK; /* unchanged (24 bytes without padding: see tp_label) */
	if (tp_track_label(t, l, &id) != TP_OK) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	s->label = id;
	return TP_OK;
}
#define TP_SLICE_SETTER(field, T)                                                                  \
	static inline int tp_slice_set_##field(struct tp_profile *p, struct tp_track *t,           \
	                                       struct tp_slice *s, T v)                            \
	{                                                                                          \
		if (t->labels[s->label].field == v)                                                \
			return TP_OK; /* unchanged: no copy, no compare */                         \
		struct tp_label l = t->labels[s->label];                                           \
		l.field = v;                                                                       \
		return tp_slice_set_label(p, t, s, &l);                                            \
	}
TP_SLICE_SETTER(name, uint32_t)
TP_SLICE_SETTER(type, uint32_t)
TP_SLICE_SETTER(kind, uint8_t)
TP_SLICE_SETTER(dir, uint8_t)
TP_SLICE_SETTER(dtype, uint8_t)
TP_SLICE_SETTER(depth, uint8_t)
TP_SLICE_SETTER(stall, uint32_t)
TP_SLICE_SETTER(bytes, uint32_t)
TP_SLICE_SETTER(cycle_hi, uint32_t)
#undef TP_SLICE_SETTER
/* Sets the start cycle of slice s of track t: the low half in s, the high half in its label
 * (interned in t: a new label only when the high half changes). TP_OK / TP_ENOMEM as
 * tp_slice_set_label. */
static inline int tp_slice_set_start_cycle(struct tp_profile *p, struct tp_track *t,
                                           struct tp_slice *s, uint64_t cycle)
{
	s->start_cycle_lo = (uint32_t)cycle;
	return tp_slice_set_cycle_hi(p, t, s, (uint32_t)(cycle >> 32));
}

/* Sets the cost entry of slice `index` of a track (index < count), creating the track's cost
 * array (zeroed: valid 0) on first use. TP_OK; TP_ERANGE past the end; TP_ENOMEM on out of
 * memory (sets the sticky oom flag). Calls for different tracks may run in parallel. */
int tp_track_set_cost(struct tp_profile *p, int track, size_t index, const struct tp_cost *c);
/* Reads the cost entry of slice i into *out, ratios included (tp_cost_ratios with the slice's
 * Asic Cycle; all zero when the track has none or i is past the end), and returns
 * out->valid. */
int tp_track_get_cost(const struct tp_track *t, size_t i, struct tp_cost *out);

/* Appends a layer (copied); returns its index or -1 on out of memory (sets the sticky oom
 * flag). */
int tp_profile_add_layer(struct tp_profile *p, const struct tp_layer *l);
/* Storage for layers [0, n) before they are added, so that tp_profile_add_layer allocates
 * nothing below n; what no layer is written to stays address space. TP_OK, or TP_ENOMEM
 * (not an error of p's: the room is an optimisation). */
int tp_profile_layer_room(struct tp_profile *p, size_t n);
/* Storage chunk k of the layer table: the records of layers [k * TP_LAYER_CHUNK,
 * (k + 1) * TP_LAYER_CHUNK), *rec_bytes bytes each, in layer order; NULL when the table has
 * no chunk k yet. For a reader that has another thread fault that memory in before the
 * layers are written (tp_profile_layer_room made the chunk): the address stays valid until
 * p is freed; the call itself reads the table, so only the adding thread makes it. */
void *tp_profile_layer_chunk(const struct tp_profile *p, size_t k, size_t *rec_bytes);
/* Layers added at once and written later, on any thread (a reader's workers pack them):
 * tp_profile_add_layers makes layers [first, first + n) (the indexes n tp_profile_add_layer
 * calls would give; each reads as a zeroed layer until written) and tp_layer_span_put then
 * writes the k-th of them, which must fit a record without side entries (tp_layer_fits).
 * Nothing may read those layers before they are written (the caller's to ensure); writes to
 * distinct layers may run at once, beside the adding thread's further additions. */
struct tp_layer_span {
	size_t first, n0;            /* n0: how many of the layers are in rec[0] */
	struct tp_layer_rec *rec[2]; /* where layer first (and first + n0) is stored */
};
/* Whether l is stored as a record alone: no tensors, values in the record's ranges. Pure. */
int tp_layer_fits(const struct tp_layer *l);
/* TP_OK, or TP_ENOMEM (sets the sticky oom flag; nothing added). n < TP_LAYER_CHUNK. */
int tp_profile_add_layers(struct tp_profile *p, size_t n, struct tp_layer_span *s);
void tp_layer_span_put(const struct tp_layer_span *s, size_t k, const struct tp_layer *l);
/* Copies layer i (< num_layers) into *out and returns out; an index past the end gives a
 * zeroed layer with id -1 and no timing. Read-only: any number of threads may call it at once
 * on a finished profile. */
const struct tp_layer *tp_profile_layer(const struct tp_profile *p, size_t i, struct tp_layer *out);
/* tp_profile_layer for the loops that skip untimed layers: NULL when layer i has no timing
 * (begin > end) or is past the end. */
const struct tp_layer *tp_profile_timed_layer(const struct tp_profile *p, size_t i,
                                              struct tp_layer *out);
/* Writers that read the same layer several times in a row (a slice's start, end and label,
 * then the next slice of the same layer) keep a tp_layer_memo: tp_layer_memo_get returns
 * layer i from its last two decodes or decodes it (tp_profile_layer). Zero-initialise it; one
 * per thread; valid while the profile is not changed. */
struct tp_layer_memo {
	size_t i[2];
	struct tp_layer l[2];
	unsigned valid, next;
};
const struct tp_layer *tp_layer_memo_get(const struct tp_profile *p, struct tp_layer_memo *m,
                                         size_t i);
/* The span of layer i: sets *begin and *end (0 and -1 when untimed or past the end) and
 * returns 1 when the layer is timed (begin <= end). Cheaper than tp_profile_layer, for sorts. */
int tp_profile_layer_span(const struct tp_profile *p, size_t i, int64_t *begin, int64_t *end);
/* The id of layer i (tp_layer.id; -1 past the end). Cheaper than tp_profile_layer, for writers
 * that need only the id of each command's layer. */
int32_t tp_profile_layer_id(const struct tp_profile *p, size_t i);
/* Where layer i runs: sets *device and *core (0 and 0 past the end, as tp_profile_layer) and
 * returns 1 when the layer is timed (begin <= end). Cheaper than tp_profile_layer, for writers
 * that pick one core's layers out of the whole table. */
int tp_profile_layer_place(const struct tp_profile *p, size_t i, int32_t *device, int32_t *core);
/* Replaces layer i (< num_layers) with *l. TP_OK; TP_ERANGE past the end; TP_ENOMEM (sets the
 * sticky oom flag) when a side-table entry cannot be allocated. */
int tp_profile_set_layer(struct tp_profile *p, size_t i, const struct tp_layer *l);
/* Joins a command to layer i (< num_layers): widens the layer's span to cover [begin, end] (an
 * untimed layer takes it as is) and, when cmd_id != 0, its TIU (tiu = 1) or GDMA (tiu = 0)
 * cmd-id range to include cmd_id (a range 0,0 becomes cmd_id,cmd_id). Same result as
 * tp_profile_layer + edit + tp_profile_set_layer, without the round trip, for readers that
 * join millions of commands. TP_OK; TP_ERANGE past the end; TP_ENOMEM (sticky). */
int tp_profile_layer_touch(struct tp_profile *p, size_t i, int64_t begin, int64_t end, int tiu,
                           uint32_t cmd_id);
/* tp_profile_layer_touch(layer, start, end, tiu[k], with_cmd ? cmd_id : 0) for each slice with
 * a layer in the table (0 <= s->layer < num_layers) of tracks tr[0..ntr), in that order and
 * slice order: the same table as that one pass, on up to `jobs` threads (layer_touch.c).
 * TP_OK; TP_ENOMEM (sticky). */
int tp_profile_layers_touch_jobs(struct tp_profile *p, const int *tr, const uint8_t *tiu,
                                 size_t ntr, int with_cmd, unsigned jobs);
int tp_profile_add_tensor(struct tp_profile *p, const struct tp_tensor *t);
/* Makes room for n more tensors, so that adding them does not grow the array step by step
 * (each step copies it). TP_OK, or TP_ENOMEM with p unchanged (not an error of p's: the room
 * is an optimisation). */
int tp_profile_tensor_room(struct tp_profile *p, size_t n);
int tp_profile_add_subnet(struct tp_profile *p, const struct tp_subnet *s);
int tp_profile_add_mem(struct tp_profile *p, const struct tp_mem *m);
/* Adds a counter series; returns its index or -1. */
int tp_profile_add_counter(struct tp_profile *p, int32_t device, int32_t track, const char *name,
                           const char *unit);
int tp_counter_push(struct tp_profile *p, int counter, int64_t ts_ns, double value);
/* Sets or replaces metadata key -> value. TP_OK / TP_ENOMEM. */
int tp_profile_set_meta(struct tp_profile *p, const char *key, const char *value);
const char *tp_profile_get_meta(const struct tp_profile *p, const char *key); /* NULL if absent */
/* Adds an explicit flow (see struct tp_flow). TP_OK / TP_ENOMEM. */
int tp_profile_add_flow(struct tp_profile *p, const struct tp_flow *f);
/* Adds a user-facing note (printf-style). */
int tp_profile_note(struct tp_profile *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends a zeroed vendor row for (device, core) and names the tool (the same for every row
 * of a profile); returns it or NULL on out of memory (sets the sticky oom flag). The pointer is
 * valid until the next call. tp_profile_drop_cores drops the rows of dropped cores. */
struct tp_vendor_row *tp_profile_vendor_row(struct tp_profile *p, const char *tool, int32_t device,
                                            int32_t core);

/* The id of a string the profile already holds, or 0 if it has never seen it (id 0 is "",
 * which no key or name uses, so 0 reads as "absent"). Does not add anything. */
uint32_t tp_profile_find_str(const struct tp_profile *p, const char *s);
/* The interned ids of the capture conventions' slice types and argument keys (TP_CAP_* in
 * argkeys.h) for the readers of a capture's slices; 0 for each the profile does not hold. */
struct tp_cap_keys {
	uint32_t ty_step, ty_act, ty_op;
	uint32_t k_step, k_warm, k_graph, k_meta, k_type, k_bytes, k_flops, k_wshape, k_cut;
};
void tp_cap_keys_of(const struct tp_profile *p, struct tp_cap_keys *k);

/* The class of a slice of an imported trace by its type (TP_CAP_TYPE_OP, _RUNTIME, _STEP and
 * the TP_TRACE_TYPE_* of argkeys.h): the device classes last, busy ones first among them. A
 * host track whose slices include device work (tp_work_on_device) is a device lane: a GPU
 * stream, a TPU queue (src/analysis/accel.h). */
enum tp_work {
	TP_WORK_NONE = 0, /* any other type: instants, async ranges, activities, commands */
	TP_WORK_OP,
	TP_WORK_RUNTIME,
	TP_WORK_STEP,
	TP_WORK_ANNOTATION,
	TP_WORK_PROFILER,
	TP_WORK_KERNEL,
	TP_WORK_MEMCPY,
	TP_WORK_MEMSET,
	TP_WORK_COLLECTIVE,
	TP_WORK_DEVICE_ANNOTATION,
	TP_WORK_SYNC,
	TP_WORK_COUNT
};
/* The type string of class w ("" for TP_WORK_NONE). */
const char *tp_work_type(enum tp_work w);
/* Work that happens on a device queue (kernels, copies, fills, collectives, its annotations
 * and waits). */
static inline int tp_work_on_device(enum tp_work w)
{
	return w >= TP_WORK_KERNEL && w < TP_WORK_COUNT;
}
/* Device work that keeps the device busy (kernels, copies, fills, collectives). */
static inline int tp_work_busy(enum tp_work w)
{
	return w >= TP_WORK_KERNEL && w <= TP_WORK_COLLECTIVE;
}
/* The string ids of the class types in one profile (0: never interned), for tp_work_of. */
struct tp_work_ids {
	uint32_t id[TP_WORK_COUNT];
};
void tp_work_ids(const struct tp_profile *p, struct tp_work_ids *w);
/* The class of a slice of type `type` (tp_slice_type). */
static inline enum tp_work tp_work_of(const struct tp_work_ids *w, uint32_t type)
{
	for (int i = 1; type && i < TP_WORK_COUNT; i++)
		if (w->id[i] == type)
			return (enum tp_work)i;
	return TP_WORK_NONE;
}

/* Argument sets: begin, add args, end -> id for tp_slice.args. */
uint32_t tp_args_begin(struct tp_profile *p);
int tp_args_add_int(struct tp_profile *p, const char *key, int64_t v);
int tp_args_add_uint(struct tp_profile *p, const char *key, uint64_t v);
int tp_args_add_real(struct tp_profile *p, const char *key, double v);
int tp_args_add_str(struct tp_profile *p, const char *key, const char *v);
/* Adds an argument whose key (and string value) are ids this profile already interned; for
 * readers that add the same keys to millions of sets and cache their ids. TP_OK /
 * TP_ENOMEM. */
int tp_args_add(struct tp_profile *p, const struct tp_arg *a);
/* Closes the set started by tp_args_begin; returns its id (>0) or 0 if empty / oom. */
uint32_t tp_args_end(struct tp_profile *p);
/* Argument sets built in a scratch profile on another thread and moved into p in the order
 * one thread would have built them there: tp_profile_str_map interns src's strings (ids 1..)
 * in p in id order (the order of their first use in src, so p's new ids are those one thread
 * would have given) and returns src id -> p id (caller frees; NULL and p->oom when out of
 * memory); tp_args_reserve appends room for src's sets and arguments to p's and gives their
 * first set id (the set src numbers i becomes *set0 + i - 1) and argument index; nothing may
 * read that room before tp_args_copy_in fills it. tp_args_copy_in touches only its room, so
 * copies into different rooms may run in parallel. */
uint32_t *tp_profile_str_map(struct tp_profile *p, const struct tp_profile *src);
/* Empties a scratch profile's strings and argument sets (it holds nothing else), keeping the
 * room its arrays have for the next use. TP_OK / TP_ENOMEM. */
int tp_args_clear(struct tp_profile *p);
/* Makes room for nargs more arguments and nsets more sets in p's arrays (their counts are
 * unchanged), so that the reservations and sets that follow do not move them: a reader that
 * knows about how much is coming saves the copies of growing step by step. TP_OK /
 * TP_ENOMEM. */
int tp_args_room(struct tp_profile *p, size_t nargs, size_t nsets);
int tp_args_reserve(struct tp_profile *p, const struct tp_profile *src, uint32_t *set0,
                    size_t *arg0);
void tp_args_copy_in(struct tp_profile *p, uint32_t set0, size_t arg0, const struct tp_profile *src,
                     const uint32_t *map);
/* The args of a set id: *n gets the count; NULL if id is 0 or invalid. */
const struct tp_arg *tp_args_get(const struct tp_profile *p, uint32_t id, size_t *n);
/* The argument whose key has string id `key` in set `args`; NULL if absent or key is 0. */
const struct tp_arg *tp_args_find(const struct tp_profile *p, uint32_t args, uint32_t key);
/* An argument's value as an integer: INT as is, UINT saturated at INT64_MAX, REAL truncated
 * toward zero and saturated; 0 for a NaN and for a string. */
int64_t tp_arg_as_i64(const struct tp_arg *a);
/* An argument's value as a double into *out. A string reads as the number it starts with
 * (strtod: "74.9%" reads 74.9), for arguments that came from a text source; returns 0 when it
 * does not start with one (*out is then 0), else 1. */
int tp_arg_as_double(const struct tp_profile *p, const struct tp_arg *a, double *out);

/* Sorts every track's slices by (start_ns asc, end_ns desc, cmd_id asc) and counters by
 * time (stable), computes nesting depth on THREAD/HOST tracks, sets the span, and keeps one
 * note saying how many strings were cut at TP_PROFILE_MAX_STR (added, or updated when called
 * again). Returns TP_OK or TP_ENOMEM if any earlier insertion ran out of memory. */
int tp_profile_finish(struct tp_profile *p);
/* tp_profile_finish with the per-track work (sort, labels, span) spread over up to `jobs`
 * threads (0 or 1: the calling thread only; profiles with THREAD/HOST tracks always use
 * one). The profile is the same for every `jobs`. */
int tp_profile_finish_jobs(struct tp_profile *p, unsigned jobs);

/* Removes every accelerator track (and its slices, cost and counters) of cores >= `keep`
 * (host tracks, core -1, stay), clamps each device's num_cores to `keep`, remaps the counters'
 * track indexes and redoes tp_profile_finish so the span covers what is left. Layers stay.
 * For the CLI's --num_core. Returns the number of tracks removed, or TP_ENOMEM. */
int tp_profile_drop_cores(struct tp_profile *p, int32_t keep);

/* Total slices over all tracks. */
size_t tp_profile_slice_count(const struct tp_profile *p);

/* Cycles to ns the way the vendor's alignment does: int(cycles / MHz * 1000) in double
 * precision (truncation; the BM1688 reader's sophgo-bmprofile.md §9.2 steps depend on it to
 * reproduce the vendor's cycles). mhz <= 0 (or NaN) returns 0; beyond int64 saturates at
 * INT64_MAX. Not for displayed times: see below. */
int64_t tp_cycles_to_ns(uint64_t cycles, double mhz);
/* Cycles to ns exactly: floor(cycles × 1000 / MHz) in integer arithmetic when the clock is a
 * whole number of kHz (every real clock), so 1850301 cycles at 900 MHz are 2055890 ns as on
 * the vendor's timeline (which rounds to 0.01 ns), not the 2055889 of truncated float
 * division. For command times and durations. mhz <= 0 returns 0. */
int64_t tp_cycles_to_ns_exact(uint64_t cycles, double mhz);
/* And back the vendor's way, int(ns * MHz / 1000) in double precision (its alignment's
 * cycles depend on that truncation); 0 for ns <= 0 or mhz <= 0; saturates at UINT64_MAX. */
uint64_t tp_ns_to_cycles(int64_t ns, double mhz);

#endif /* TP_MODEL_H */
