/*
 * sg_int.h — what both Sophgo readers share besides the chip table and the instruction sets:
 * the block types of their binary files, the final.mlir parser (final_mlir.c), the layer join from
 * tensor_location.json + final.mlir (sg_layers.c) and what a per-core worker keeps aside for the
 * calling thread and how many cores are in flight (sg_aside.c). Used by the readers, their unit
 * tests and fuzz targets. Structures that allocate say who frees them; nothing here owns global
 * state.
 */
#ifndef TP_SG_INT_H
#define TP_SG_INT_H

#include "readers/sophgo/sg_chip.h"

#include <stdarg.h>
#include <string.h>

/* Block types of the binary block streams both readers walk (bmprofile iter<N>.profile,
 * sophgo-bmprofile.md §4.2; cdm cdmlib*.profile and cdma*_N.profile, sophgo-cdm.md §4.1): the
 * runtimes write one numbering, tpu-mlir's BlockType. */
enum sg_block_type {
	SG_BLK_SUMMARY = 1,
	SG_BLK_COMPILER_LOG = 2,
	SG_BLK_MONITOR_BD = 3,
	SG_BLK_MONITOR_GDMA = 4,
	SG_BLK_DYN_DATA = 5,
	SG_BLK_DYN_EXTRA = 6,
	SG_BLK_FIRMWARE_LOG = 7,
	SG_BLK_COMMAND = 8,
	SG_BLK_BMLIB = 9,
	SG_BLK_BMLIB_EXTRA = 10,
	SG_BLK_MONITOR_SDMA = 11,
	SG_BLK_MONITOR_CDMA = 12,
	SG_BLK_DES_BDC = 13,
	SG_BLK_DES_GDMA = 14,
	SG_BLK_DES_SDMA = 15,
	SG_BLK_DES_CDMA = 16,
	SG_BLK_DES_KV = 17,
};

/* ---------------------------------------------------------------------------------------- */
/* Text side files.                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* The next line of text[0..len) from *pos: 1 with [*s, *s + *n) holding it without its '\n'
 * and trailing '\r', spaces and tabs, *pos moved past it; 0 when *pos reached len. */
static inline int sg_lines_next(const char *text, size_t len, size_t *pos, const char **s,
                                size_t *n)
{
	if (*pos >= len)
		return 0;
	const char *nl = memchr(text + *pos, '\n', len - *pos);
	size_t e = nl ? (size_t)(nl - text) : len;
	*s = text + *pos;
	*n = e - *pos;
	*pos = e + 1;
	while (*n && ((*s)[*n - 1] == '\r' || (*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
	return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* final.mlir (final_mlir.c; sophgo-cdm.md §9): loc names per line, layer groups, module.    */
/* ---------------------------------------------------------------------------------------- */

struct sg_mlir_op {
	uint32_t line; /* 1-based line of the op (tensor_location.json "file-line") */
	uint32_t name; /* offset of its resolved loc name in strs ("" if none) */
};
struct sg_mlir_group {
	uint32_t line;        /* 1-based line of the Group op */
	uint32_t yield;       /* first later Yield line, 0 = none */
	uint32_t first, last; /* member lines [first, last] (strictly between), 0,0 = none */
};
struct sg_mlir {
	struct sg_mlir_op *ops;
	size_t nops; /* in line order */
	struct sg_mlir_group *groups;
	size_t ngroups; /* in line order */
	char *strs;
	size_t nstrs, cap_strs; /* NUL-terminated names */
	int have_module, have_flops, have_cores;
	char module[128], chip[32], mode[32]; /* module @<name>, module.chip, module.mode */
	int64_t flops, cores;
	unsigned long lines;
	unsigned long bad_lines, first_bad_line; /* loc()/alias lines that did not parse */
};
/* Parses text[0..len) into m (zeroed first). Never fails on content: malformed lines are
 * skipped and counted. TP_OK or TP_ENOMEM (m left empty). Free with sg_mlir_free. */
int sg_mlir_parse(const char *text, size_t len, struct sg_mlir *m);
/* The loc name of the op on `line`, or NULL when that line has no op with a loc. */
const char *sg_mlir_name(const struct sg_mlir *m, uint32_t line);
/* Index of the group whose member range holds `line`, or -1. */
int sg_mlir_group_of(const struct sg_mlir *m, uint32_t line);
void sg_mlir_free(struct sg_mlir *m);

/* ---------------------------------------------------------------------------------------- */
/* Layer information from tensor_location.json + final.mlir (sg_layers.c), any Sophgo chip.  */
/* ---------------------------------------------------------------------------------------- */

struct sg_layers {
	void *json;          /* cJSON array of entries, NULL when absent or unusable */
	struct sg_mlir mlir; /* valid when have_mlir */
	int have_mlir;
};
/* Reads the side files (either path may be NULL = absent). A file that cannot be read or
 * parsed is skipped with one profile note naming `path:LINE`; L->json stays NULL then, and
 * the caller may fall back to other layer sources. Sets the mlir_* metadata. Returns TP_OK or
 * TP_ENOMEM only. Free with sg_layers_free. */
int sg_layers_load(struct tp_profile *p, const char *json_path, const char *mlir_path,
                   struct sg_layers *L);
/* The JSON half of sg_layers_load on a buffer (for tests and fuzzers): parses
 * tensor_location.json text data[0..size) into L->json, or leaves it NULL with a note. */
int sg_layers_parse_json(struct tp_profile *p, const uint8_t *data, size_t size, const char *path,
                         struct sg_layers *L);
/* Adds one layer per JSON entry (and its tensors when `tensors`), and joins them to the
 * slices of tiu_track[k] / gdma_track[k] (k < ncores; -1 = no track) by cmd id on core k,
 * setting slice.layer and the layers' begin/end. Slices whose type is the string id
 * `skip_type` (0 = none) join no layer: the cdm reader passes its "unknown" records (the
 * init handshake and runtime copies outside the command stream, which reuse the stream's
 * Cmd Ids). Call after the slices are final. TP_OK or TP_ENOMEM. */
int sg_layers_apply(struct tp_profile *p, const struct sg_layers *L, const char *json_path,
                    const int *tiu_track, const int *gdma_track, unsigned ncores, int tensors,
                    uint32_t skip_type);
/* Layers [first, num_layers) with an empty name and id = a final.mlir line get the loc name
 * of that line, and a group from its Group/Yield ranges if they have none. */
void sg_layers_name_from_mlir(struct tp_profile *p, const struct sg_layers *L, size_t first);
void sg_layers_free(struct sg_layers *L);

/* ---------------------------------------------------------------------------------------- */
/* Argument sets in the vendor's spelling (sg_args.c).                                        */
/* ---------------------------------------------------------------------------------------- */

/* The DMA PMU figures of one command (costmodel §5 steps 6-9): bytes and transactions on the
 * DDR (gmem) and local-memory (lmem) sides, bandwidths in GB/s. */
struct sg_dma_figs {
	uint64_t stall, gmem, lmem, gxact, lxact, size;
	double gbw, lbw, ddr_bw, l2m_bw;
};
/* Which vendor printer's key order (and types): PerfAI (bmprofile_data; its L2M bandwidth is
 * an integer 0 among the zero counters) or BM1690's (cdm_profile_data; l2m_bw as given). */
enum sg_dma_printer { SG_DMA_PERFAI, SG_DMA_BM1690 };
/* Adds the figures, then the burst, mask and alignment counters the PMU does not have (as 0),
 * to the argument set being built in p (between tp_args_begin and tp_args_end). */
void sg_add_dma_args(struct tp_profile *p, const struct sg_dma_figs *f, enum sg_dma_printer pr);

/* ---------------------------------------------------------------------------------------- */
/* What a reader's per-core worker keeps aside (sg_aside.c).                                  */
/* ---------------------------------------------------------------------------------------- */

/* The profile notes and read statistics of one core read on a worker thread, kept in order
 * until the calling thread adds them to the profile in core order (sg_aside_apply), so the
 * profile is the same for every thread count. Zero-initialised = empty. */
struct sg_aside {
	struct tp_read_stats stats;
	char **notes; /* owned, in the order they were made */
	size_t nnotes, cap;
	int oom; /* a note was lost to out of memory */
};
/* Formats a note (as tp_profile_note: at most 1023 bytes) into `a`, or straight into p when
 * a is NULL. */
void sg_vnote(struct tp_profile *p, struct sg_aside *a, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* Appends from's notes (in order) and adds its statistics to `to`; empties from. */
void sg_aside_move(struct sg_aside *to, struct sg_aside *from);
/* Adds a's notes (in order) and statistics to p and empties a. TP_OK, or TP_ENOMEM when a
 * note had been lost. Calling thread only. */
int sg_aside_apply(struct tp_profile *p, struct sg_aside *a);
void sg_aside_free(struct sg_aside *a);

/* How many cores a reader works on at once from core k0 (of n, k0 < n): at most `jobs`,
 * always k0, and each next one while the estimated working memory (est[k], bytes: its file,
 * walk, scratch argument sets) of the cores after k0 stays within SG_WAVE_SPARE. So a thread
 * more adds at most that much memory, whatever --jobs; which cores go together never changes
 * the profile (each is read apart and added in core order). */
#define SG_WAVE_SPARE ((uint64_t)128 << 20)
size_t sg_wave(const uint64_t *est, size_t k0, size_t n, unsigned jobs);

/* sg_deps.c: runs tp_deps_check_jobs (up to `jobs` threads) on p's finished timeline and notes a
 * violation (count, the first one). TP_OK / TP_ENOMEM. */
int sg_deps_note(struct tp_profile *p, unsigned jobs);
/* The two steps both readers end with. Before the reader frees its scratch, sg_read_deps: when
 * rc is TP_OK, sg_deps_note, then the profile's sticky out-of-memory flag checked; returns rc,
 * or TP_ENOMEM recorded in d as "DIR: out of memory". After, sg_read_done: when rc is still
 * TP_OK, sorts and indexes p (tp_profile_finish_jobs) and hands it over in *out; otherwise, or
 * when that runs out of memory (recorded in d), frees p. Returns the status. */
int sg_read_deps(struct tp_profile *p, int rc, unsigned jobs, struct tp_diag *d, const char *dir);
int sg_read_done(struct tp_profile *p, int rc, unsigned jobs, struct tp_diag *d, const char *dir,
                 struct tp_profile **out);

/* A memo of the labels slices get (bmp_names.c, cdm_eparts.c, cdm_match.c): the label a slice
 * gets is a function of the label id it has and of a few values the caller packs into `tup`
 * (a command's name key, kind, direction, dtype, ...), and a track has few distinct ones, so
 * most slices take the id an earlier one got instead of building a label and probing the
 * track's label hash. The ids are those the label setter gives, so the profile is the same.
 * 2^bits slots, one per hash. A slot stores the id it maps from plus one, so that a zeroed
 * slot is empty. */
struct sg_label_memo {
	uint32_t from, to;
	uint64_t tup;
};
static inline struct sg_label_memo *sg_label_memo_at(struct sg_label_memo *m, unsigned bits,
                                                     uint32_t from, uint64_t tup)
{
	uint64_t h = ((uint64_t)from ^ tup * 0x9E3779B97F4A7C15ull) * 0xC2B2AE3D27D4EB4Full;
	return &m[h >> (64 - bits)];
}
static inline int sg_label_memo_hit(const struct sg_label_memo *e, uint32_t from, uint64_t tup)
{
	return e->from == from + 1 && e->tup == tup;
}
static inline void sg_label_memo_put(struct sg_label_memo *e, uint32_t from, uint64_t tup,
                                     uint32_t to)
{
	*e = (struct sg_label_memo){.from = from + 1, .to = to, .tup = tup};
}

#endif /* TP_SG_INT_H */
