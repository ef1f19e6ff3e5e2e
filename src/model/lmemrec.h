/*
 * lmemrec.h — a command's LOCAL memory records: the rules that turn its descriptor fields into
 * rectangles on one lane (the vendor's "LOCAL MEM USAGE(ONE LANE)", sophgo-analysis.md §6), and
 * the compact per-track form a reader keeps them in when it drops the decoded fields (struct
 * tp_track.lmem). The analysis (src/analysis/lmem.c) reads either: the stored records, or the
 * fields of the command's argument set through the same rules, so both give the same records.
 *
 *   lane offset   = local address mod the lane size (chip->lane_bytes)
 *   bytes / lane  = n × ceil(c / lanes) × h × w × element size of the LMEM-side shape
 *                   (DMA: dst_* sizes when writing LMEM, src_* when reading it — the other
 *                   side's when those are 0, as with nchw_copy — element size from
 *                   src_data_format; TIU: des_res0_n/c/h/w with des_opt_res0_prec, the
 *                   operands des_opd0_c/h/w (n from res0) and des_opd1_* when it has a c,
 *                   skipping operands flagged des_opt_opdN_const)
 *   DMA fallback  = the command's LMEM bytes spread over the lanes when it has no shape
 */
#ifndef TP_MODEL_LMEMREC_H
#define TP_MODEL_LMEMREC_H

#include "model/model.h"

/* The fields the rules read, by index; tp_lmem_key_names gives their argument keys (the
 * vendor's names, as the descriptor decoders write them). */
enum tp_lmem_key {
	TP_LK_SRC_ADDR,
	TP_LK_DST_ADDR,
	TP_LK_SRC_N,
	TP_LK_SRC_C,
	TP_LK_SRC_H,
	TP_LK_SRC_W,
	TP_LK_DST_N,
	TP_LK_DST_C,
	TP_LK_DST_H,
	TP_LK_DST_W,
	TP_LK_FMT,
	TP_LK_LMEM_BYTES,
	TP_LK_RES_ADDR,
	TP_LK_RES_N,
	TP_LK_RES_C,
	TP_LK_RES_H,
	TP_LK_RES_W,
	TP_LK_RES_PREC,
	TP_LK_O0_ADDR,
	TP_LK_O0_N,
	TP_LK_O0_C,
	TP_LK_O0_H,
	TP_LK_O0_W,
	TP_LK_O0_PREC,
	TP_LK_O0_CONST,
	TP_LK_O1_ADDR,
	TP_LK_O1_N,
	TP_LK_O1_C,
	TP_LK_O1_H,
	TP_LK_O1_W,
	TP_LK_O1_PREC,
	TP_LK_O1_CONST,
	TP_LK_COUNT
};
extern const char *const tp_lmem_key_names[TP_LK_COUNT];

/* One command's field values by key index; have[] says which it has. */
struct tp_lmem_vals {
	uint64_t v[TP_LK_COUNT];
	uint8_t have[TP_LK_COUNT];
};

/* One record of a command, placed on the lane. */
struct tp_lmem_cmd_rec {
	uint32_t lane_offset; /* local address mod the lane size */
	uint32_t bytes;       /* bytes per lane (capped at the lane size, at most 2^31 - 1) */
	uint8_t write;        /* 1 data into LMEM (DMA load, TIU result), 0 out of it */
};
#define TP_LMEM_CMD_RECS 3 /* the most records one command gives */

/* The records of command s of track t (a TIU or DMA track, its label set: kind, direction,
 * data type, bytes) from its field values v, on the lanes of `chip`: TIU result and operands,
 * DMA LMEM sides. Writes at most TP_LMEM_CMD_RECS into r and returns how many (0 without
 * chip lane constants). Pure; thread-safe. */
unsigned tp_lmem_cmd_recs(const struct tp_chip *chip, const struct tp_track *t,
                          const struct tp_slice *s, const struct tp_lmem_vals *v,
                          struct tp_lmem_cmd_rec *r);
/* The same for a command of a track of `kind` whose label is (or is to be) l. */
unsigned tp_lmem_label_recs(const struct tp_chip *chip, enum tp_track_kind kind,
                            const struct tp_label *l, const struct tp_lmem_vals *v,
                            struct tp_lmem_cmd_rec *r);

/* Keeps the n records r (n <= TP_LMEM_CMD_RECS) of slice `index` of a track (index < count)
 * in the track's compact form, creating it on first use (4 bytes per slice, 8 per record);
 * n = 0 stores nothing. A slice's records are set once. TP_OK; TP_ERANGE past the end;
 * TP_ENOMEM (sets the sticky oom flag). Calls for different tracks may run in parallel. */
int tp_track_set_lmem(struct tp_profile *p, int track, size_t index,
                      const struct tp_lmem_cmd_rec *r, unsigned n);
/* The records kept for slice i of t into r (room for TP_LMEM_CMD_RECS); returns how many, 0
 * when none were kept. */
unsigned tp_track_get_lmem(const struct tp_track *t, size_t i, struct tp_lmem_cmd_rec *r);
/* Moves slice `from`'s kept records to slice `to` of the same track (to <= from; a reader
 * compacting its slices), leaving `from` none. */
void tp_track_move_lmem(struct tp_track *t, size_t to, size_t from);

#endif
