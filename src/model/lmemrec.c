/*
 * lmemrec.c — a command's LOCAL memory records (model/lmemrec.h): the rules from descriptor
 * fields to rectangles on one lane, shared by the analysis (from argument sets) and the readers
 * (straight from the descriptors, when they drop the decoded fields), and the compact per-track
 * store of the records a reader keeps: a u32 per slice naming a run of packed u64 records.
 */
#include "model/lmemrec.h"

#include <string.h>

const char *const tp_lmem_key_names[TP_LK_COUNT] = {
    "src_start_addr",     "dst_start_addr",    "src_nsize",         "src_csize",
    "src_hsize",          "src_wsize",         "dst_nsize",         "dst_csize",
    "dst_hsize",          "dst_wsize",         "src_data_format",   "lmem_xfer_bytes",
    "des_res0_addr",      "des_res0_n",        "des_res0_c",        "des_res0_h",
    "des_res0_w",         "des_opt_res0_prec", "des_opd0_addr",     "des_opd0_n",
    "des_opd0_c",         "des_opd0_h",        "des_opd0_w",        "des_opt_opd0_prec",
    "des_opt_opd0_const", "des_opd1_addr",     "des_opd1_n",        "des_opd1_c",
    "des_opd1_h",         "des_opd1_w",        "des_opt_opd1_prec", "des_opt_opd1_const",
};

/* DATATYPE of src_data_format / prec codes (sophgo-costmodel.md §2): bytes per element,
 * 0 = unknown. 0 INT8, 1 FP16, 2 FP32, 3 INT16, 4 INT32, 5 BF16, 6 INT4 (1 byte), 7 FP8. */
static unsigned prec_bytes(uint64_t code)
{
	static const unsigned b[] = {1, 2, 4, 2, 4, 2, 1, 1};
	return code < sizeof b / sizeof *b ? b[code] : 0;
}

/* n × ceil(c / lanes) × h × w × esize, saturating; 0 if any factor is missing. */
static uint64_t per_lane(uint64_t n, uint64_t c, uint64_t h, uint64_t w, unsigned esize,
                         unsigned lanes)
{
	if (!n || !c || !h || !w || !esize || !lanes)
		return 0;
	uint64_t f[] = {n, (c + lanes - 1) / lanes, h, w, esize}, r = 1;
	for (size_t i = 0; i < 5; i++) {
		if (r > UINT64_MAX / f[i])
			return UINT64_MAX;
		r *= f[i];
	}
	return r;
}

/* Appends the record at `addr` of `bytes` per lane unless it has no bytes. */
static void rec_put(struct tp_lmem_cmd_rec *r, unsigned *n, uint64_t addr, uint64_t bytes,
                    uint32_t lane, int write)
{
	if (!bytes)
		return;
	r[(*n)++] = (struct tp_lmem_cmd_rec){
	    .lane_offset = (uint32_t)(addr % lane),
	    .bytes = bytes > lane ? lane : (uint32_t)bytes,
	    .write = (uint8_t)write,
	};
}

/* TIU: result written, operands read; addresses past LMEM are not local. */
static unsigned tiu_recs(const struct tp_lmem_vals *v, uint32_t lane, unsigned lanes, uint64_t lmem,
                         struct tp_lmem_cmd_rec *r)
{
	unsigned n = 0;
	uint64_t rn = v->v[TP_LK_RES_N];
	unsigned rb = prec_bytes(v->v[TP_LK_RES_PREC]);
	if (v->have[TP_LK_RES_ADDR] && v->v[TP_LK_RES_ADDR] < lmem)
		rec_put(r, &n, v->v[TP_LK_RES_ADDR],
		        per_lane(rn, v->v[TP_LK_RES_C], v->v[TP_LK_RES_H], v->v[TP_LK_RES_W], rb,
		                 lanes),
		        lane, 1);
	for (int o = 0; o < 2; o++) {
		int b = o ? TP_LK_O1_ADDR : TP_LK_O0_ADDR;
		if (!v->have[b] || !v->have[b + 2] || v->v[b + 6] || v->v[b] >= lmem)
			continue; /* absent, no channel count, or a constant */
		unsigned eb = v->have[b + 5] ? prec_bytes(v->v[b + 5]) : rb;
		rec_put(r, &n, v->v[b],
		        per_lane(v->have[b + 1] ? v->v[b + 1] : rn, v->v[b + 2], v->v[b + 3],
		                 v->v[b + 4], eb, lanes),
		        lane, 0);
	}
	return n;
}

/* DMA: the LMEM side of the transfer, its address and shape. */
static unsigned dma_recs(const struct tp_label *l, const struct tp_lmem_vals *v, uint32_t lane,
                         unsigned lanes, uint64_t lmem, struct tp_lmem_cmd_rec *r)
{
	unsigned n = 0;
	enum tp_dir d = (enum tp_dir)l->dir;
	int to = d == TP_DIR_DDR_TO_LMEM || d == TP_DIR_L2_TO_LMEM || d == TP_DIR_LMEM_TO_LMEM;
	int from = d == TP_DIR_LMEM_TO_DDR || d == TP_DIR_LMEM_TO_L2 || d == TP_DIR_LMEM_TO_LMEM;
	unsigned eb = v->have[TP_LK_FMT] ? prec_bytes(v->v[TP_LK_FMT])
	                                 : tp_dtype_size((enum tp_dtype)l->dtype);
	for (int side = 0; side < 2; side++) {
		if (!(side ? to : from))
			continue;
		int a = side ? TP_LK_DST_ADDR : TP_LK_SRC_ADDR,
		    sh = side ? TP_LK_DST_N : TP_LK_SRC_N;
		if (!v->have[a])
			continue;
		uint64_t bytes =
		    per_lane(v->v[sh], v->v[sh + 1], v->v[sh + 2], v->v[sh + 3], eb, lanes);
		/* nchw_copy leaves one side's sizes 0: the other side's shape. */
		int o = side ? TP_LK_SRC_N : TP_LK_DST_N;
		if (!bytes)
			bytes = per_lane(v->v[o], v->v[o + 1], v->v[o + 2], v->v[o + 3], eb, lanes);
		if (!bytes) {
			uint64_t all =
			    v->have[TP_LK_LMEM_BYTES] ? v->v[TP_LK_LMEM_BYTES] : l->bytes;
			bytes = (all + lanes - 1) / lanes;
		}
		rec_put(r, &n, v->v[a] % lmem, bytes, lane, side);
	}
	return n;
}

unsigned tp_lmem_label_recs(const struct tp_chip *chip, enum tp_track_kind kind,
                            const struct tp_label *l, const struct tp_lmem_vals *v,
                            struct tp_lmem_cmd_rec *r)
{
	if (!chip || !chip->lane_bytes || !chip->npu_num)
		return 0;
	uint32_t lane = chip->lane_bytes, lanes = chip->npu_num;
	uint64_t lmem = chip->lmem_bytes ? chip->lmem_bytes : (uint64_t)lane * lanes;
	return kind == TP_TRACK_TIU ? tiu_recs(v, lane, lanes, lmem, r)
	                            : dma_recs(l, v, lane, lanes, lmem, r);
}

unsigned tp_lmem_cmd_recs(const struct tp_chip *chip, const struct tp_track *t,
                          const struct tp_slice *s, const struct tp_lmem_vals *v,
                          struct tp_lmem_cmd_rec *r)
{
	return tp_lmem_label_recs(chip, (enum tp_track_kind)t->kind, tp_slice_label(t, s), v, r);
}

/* ---------------------------------------------------------------------------------------- */
/* The compact store.                                                                       */
/* ---------------------------------------------------------------------------------------- */
#define IX_BITS 30
#define IX_MASK ((UINT32_C(1) << IX_BITS) - 1)

/* Gives t an entry (0) for each slice it has room for. TP_OK / TP_ENOMEM. */
static int lmem_grow(struct tp_track *t)
{
	size_t n = t->cap > t->count ? t->cap : t->count;
	if (n <= t->lmem_cap)
		return TP_OK;
	uint32_t *v = tp_realloc(t->lmem, n * sizeof *v);
	if (!v)
		return TP_ENOMEM;
	memset(v + t->lmem_cap, 0, (n - t->lmem_cap) * sizeof *v);
	t->lmem = v;
	t->lmem_cap = n;
	return TP_OK;
}

int tp_model_lmem_fit(struct tp_track *t)
{
	return t->lmem ? lmem_grow(t) : TP_OK;
}

int tp_track_set_lmem(struct tp_profile *p, int track, size_t index,
                      const struct tp_lmem_cmd_rec *r, unsigned n)
{
	struct tp_track *t = &p->tracks[track];
	if (index >= t->count || n > TP_LMEM_CMD_RECS)
		return TP_ERANGE;
	if (!n)
		return TP_OK;
	uint64_t *g = NULL;
	if (t->num_lmem_recs + n < IX_MASK && (t->lmem_cap > index || lmem_grow(t) == TP_OK))
		g = tp_grow(t->lmem_recs, sizeof *g, t->num_lmem_recs + n, &t->cap_lmem_recs);
	if (!g) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	t->lmem_recs = g;
	t->lmem[index] = (uint32_t)(t->num_lmem_recs + 1) | (uint32_t)n << IX_BITS;
	for (unsigned k = 0; k < n; k++)
		t->lmem_recs[t->num_lmem_recs++] = (uint64_t)r[k].lane_offset |
		                                   (uint64_t)(r[k].bytes & 0x7FFFFFFFu) << 32 |
		                                   (uint64_t)(r[k].write != 0) << 63;
	return TP_OK;
}

unsigned tp_track_get_lmem(const struct tp_track *t, size_t i, struct tp_lmem_cmd_rec *r)
{
	uint32_t e = t->lmem && i < t->lmem_cap ? t->lmem[i] : 0;
	if (!e)
		return 0;
	unsigned n = e >> IX_BITS;
	const uint64_t *q = &t->lmem_recs[(e & IX_MASK) - 1];
	for (unsigned k = 0; k < n; k++)
		r[k] = (struct tp_lmem_cmd_rec){.lane_offset = (uint32_t)q[k],
		                                .bytes = (uint32_t)(q[k] >> 32 & 0x7FFFFFFFu),
		                                .write = (uint8_t)(q[k] >> 63)};
	return n;
}

void tp_track_move_lmem(struct tp_track *t, size_t to, size_t from)
{
	if (!t->lmem || from >= t->lmem_cap || to == from)
		return;
	t->lmem[to] = t->lmem[from];
	t->lmem[from] = 0;
}
