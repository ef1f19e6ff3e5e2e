/*
 * lmem.c — the LOCAL memory view from the commands themselves, as the vendor's page builds it
 * (sophgo-analysis.md §6 "LOCAL MEM USAGE(ONE LANE)", reference-outputs.md §3.2
 * lmem_op_record): every DMA command with a local-memory side and every TIU operand / result
 * becomes a rectangle [start, end] × [lane offset, lane offset + bytes per lane] on one lane.
 *
 *   lane offset   = local address mod the lane size (chip->lane_bytes)
 *   bytes / lane  = n × ceil(c / lanes) × h × w × element size of the LMEM-side shape
 *                   (DMA: dst_* sizes when writing LMEM, src_* when reading it — the other
 *                   side's when those are 0, as with nchw_copy — element size from
 *                   src_data_format; TIU: des_res0_n/c/h/w with des_opt_res0_prec, the
 *                   operands des_opd0_c/h/w (n from res0) and des_opd1_* when it has a c,
 *                   skipping operands flagged des_opt_opdN_const)
 *   DMA fallback  = the command's LMEM bytes spread over the lanes when it has no shape
 *
 * Fields are read from the slice's argument set under the vendor's names (the descriptor
 * decoders write them); a command without them contributes nothing. Unlike the vendor, the
 * offset is the address itself modulo the lane, not relative to the lowest address seen.
 *
 * Owns the record array it returns (tp_free). A page cannot hold three records for each of
 * millions of commands: when the commands give more than `max` records, only those of one
 * command in `every` (every = ceil(records / max), counted over the commands that give any, in
 * track order) are kept, so the whole run and every core stay covered; the rest are counted.
 */
#include "analysis/analysis.h"

#include <string.h>

/* DATATYPE of src_data_format / prec codes (sophgo-costmodel.md §2): bytes per element,
 * 0 = unknown. 0 INT8, 1 FP16, 2 FP32, 3 INT16, 4 INT32, 5 BF16, 6 INT4 (1 byte), 7 FP8. */
static unsigned prec_bytes(uint64_t code)
{
	static const unsigned b[] = {1, 2, 4, 2, 4, 2, 1, 1};
	return code < sizeof b / sizeof *b ? b[code] : 0;
}

enum {
	K_SRC_ADDR,
	K_DST_ADDR,
	K_SRC_N,
	K_SRC_C,
	K_SRC_H,
	K_SRC_W,
	K_DST_N,
	K_DST_C,
	K_DST_H,
	K_DST_W,
	K_FMT,
	K_LMEM_BYTES,
	K_RES_ADDR,
	K_RES_N,
	K_RES_C,
	K_RES_H,
	K_RES_W,
	K_RES_PREC,
	K_O0_ADDR,
	K_O0_N,
	K_O0_C,
	K_O0_H,
	K_O0_W,
	K_O0_PREC,
	K_O0_CONST,
	K_O1_ADDR,
	K_O1_N,
	K_O1_C,
	K_O1_H,
	K_O1_W,
	K_O1_PREC,
	K_O1_CONST,
	K_COUNT
};
struct keys {
	uint32_t k[K_COUNT];
};
static const char *const key_names[K_COUNT] = {
    "src_start_addr",     "dst_start_addr",    "src_nsize",         "src_csize",
    "src_hsize",          "src_wsize",         "dst_nsize",         "dst_csize",
    "dst_hsize",          "dst_wsize",         "src_data_format",   "lmem_xfer_bytes",
    "des_res0_addr",      "des_res0_n",        "des_res0_c",        "des_res0_h",
    "des_res0_w",         "des_opt_res0_prec", "des_opd0_addr",     "des_opd0_n",
    "des_opd0_c",         "des_opd0_h",        "des_opd0_w",        "des_opt_opd0_prec",
    "des_opt_opd0_const", "des_opd1_addr",     "des_opd1_n",        "des_opd1_c",
    "des_opd1_h",         "des_opd1_w",        "des_opt_opd1_prec", "des_opt_opd1_const",
};

/* The argument values of one slice, by key index; have[] says which exist. */
struct vals {
	uint64_t v[K_COUNT];
	uint8_t have[K_COUNT];
};

static void read_vals(const struct tp_profile *p, const struct keys *k, uint32_t args,
                      struct vals *o)
{
	memset(o, 0, sizeof *o);
	size_t n;
	const struct tp_arg *a = tp_args_get(p, args, &n);
	for (size_t i = 0; a && i < n; i++) {
		if (a[i].type != TP_ARG_INT && a[i].type != TP_ARG_UINT)
			continue;
		for (int j = 0; j < K_COUNT; j++)
			if (k->k[j] && a[i].key == k->k[j]) {
				o->v[j] = a[i].type == TP_ARG_INT && a[i].v.i < 0 ? 0 : a[i].v.u;
				o->have[j] = 1;
			}
	}
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

/* One record of a command before it is placed: where in the lane, how much, which way. */
struct cmd_rec {
	uint64_t addr, bytes;
	int write;
};

/* Appends a record unless it is empty (no bytes, no lane). */
static void rec_put(struct cmd_rec *r, unsigned *n, uint64_t addr, uint64_t bytes, uint32_t lane,
                    int write)
{
	if (bytes && lane)
		r[(*n)++] = (struct cmd_rec){addr, bytes, write};
}

/* The records of TIU command v: result written, operands read; addresses past LMEM are not
 * local. */
static unsigned tiu_recs(const struct vals *v, uint32_t lane, unsigned lanes, uint64_t lmem,
                         struct cmd_rec *r)
{
	unsigned n = 0;
	uint64_t rn = v->v[K_RES_N];
	unsigned rb = prec_bytes(v->v[K_RES_PREC]);
	if (v->have[K_RES_ADDR] && v->v[K_RES_ADDR] < lmem)
		rec_put(r, &n, v->v[K_RES_ADDR],
		        per_lane(rn, v->v[K_RES_C], v->v[K_RES_H], v->v[K_RES_W], rb, lanes), lane,
		        1);
	for (int o = 0; o < 2; o++) {
		int b = o ? K_O1_ADDR : K_O0_ADDR;
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

/* The records of DMA command s: the LMEM side of the transfer, its address and shape. */
static unsigned dma_recs(const struct tp_track *t, const struct tp_slice *s, const struct vals *v,
                         uint32_t lane, unsigned lanes, uint64_t lmem, struct cmd_rec *r)
{
	unsigned n = 0;
	enum tp_dir d = (enum tp_dir)tp_slice_dir(t, s);
	int to = d == TP_DIR_DDR_TO_LMEM || d == TP_DIR_L2_TO_LMEM || d == TP_DIR_LMEM_TO_LMEM;
	int from = d == TP_DIR_LMEM_TO_DDR || d == TP_DIR_LMEM_TO_L2 || d == TP_DIR_LMEM_TO_LMEM;
	unsigned eb = v->have[K_FMT] ? prec_bytes(v->v[K_FMT])
	                             : tp_dtype_size((enum tp_dtype)tp_slice_dtype(t, s));
	for (int side = 0; side < 2; side++) {
		if (!(side ? to : from))
			continue;
		int a = side ? K_DST_ADDR : K_SRC_ADDR, sh = side ? K_DST_N : K_SRC_N;
		if (!v->have[a])
			continue;
		uint64_t bytes =
		    per_lane(v->v[sh], v->v[sh + 1], v->v[sh + 2], v->v[sh + 3], eb, lanes);
		/* nchw_copy leaves one side's sizes 0: the other side's shape. */
		int o = side ? K_SRC_N : K_DST_N;
		if (!bytes)
			bytes = per_lane(v->v[o], v->v[o + 1], v->v[o + 2], v->v[o + 3], eb, lanes);
		if (!bytes) {
			uint64_t all =
			    v->have[K_LMEM_BYTES] ? v->v[K_LMEM_BYTES] : tp_slice_bytes(t, s);
			bytes = (all + lanes - 1) / lanes;
		}
		rec_put(r, &n, v->v[a] % lmem, bytes, lane, side);
	}
	return n;
}

/* One pass over the commands: the records of every `every`-th command that has any (counted
 * over all tracks in order), at most `max` of them; the rest are counted in out->dropped. */
static int collect(const struct tp_profile *p, const struct keys *k, size_t max_cores, size_t max,
                   size_t every, struct tp_lmem_recs *out)
{
	const struct tp_chip *chip = p->chip;
	uint32_t lane = chip->lane_bytes, lanes = chip->npu_num;
	uint64_t lmem = chip->lmem_bytes ? chip->lmem_bytes : (uint64_t)lane * lanes;
	size_t cap = 0, nth = 0;
	struct vals v;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *t = &p->tracks[ti];
		if (t->kind >= TP_ENGINES ||
		    (max_cores && t->core >= 0 && (size_t)t->core >= max_cores))
			continue;
		for (size_t i = 0; i < t->count; i++) {
			const struct tp_slice *s = &t->slices[i];
			if (tp_slice_kind(t, s) != TP_CMD_NORMAL || !s->args)
				continue;
			read_vals(p, k, s->args, &v);
			struct cmd_rec r[3];
			unsigned n = t->kind == TP_TRACK_TIU
			                 ? tiu_recs(&v, lane, lanes, lmem, r)
			                 : dma_recs(t, s, &v, lane, lanes, lmem, r);
			if (!n)
				continue;
			if (nth++ % every) {
				out->dropped += n;
				continue;
			}
			for (unsigned j = 0; j < n; j++) {
				if (out->n >= max) {
					out->dropped++;
					continue;
				}
				struct tp_lmem_rec *g =
				    tp_grow(out->v, sizeof *g, out->n + 1, &cap);
				if (!g) {
					tp_free(out->v);
					memset(out, 0, sizeof *out);
					return TP_ENOMEM;
				}
				out->v = g;
				g[out->n++] = (struct tp_lmem_rec){
				    .begin_ns = s->start_ns,
				    .end_ns = tp_slice_end(t, s),
				    .lane_offset = (uint32_t)(r[j].addr % lane),
				    .bytes = r[j].bytes > lane ? lane : (uint32_t)r[j].bytes,
				    .write = (uint8_t)r[j].write,
				    .track = (int32_t)ti,
				    .slice = i,
				};
			}
		}
	}
	return TP_OK;
}

int tp_lmem_from_commands(const struct tp_profile *p, size_t max_cores, size_t max,
                          struct tp_lmem_recs *out)
{
	memset(out, 0, sizeof *out);
	out->every = 1;
	const struct tp_chip *chip = p->chip;
	if (!chip || !chip->lane_bytes || !chip->npu_num)
		return TP_OK;
	struct keys k;
	memset(&k, 0, sizeof k);
	int any = 0;
	for (int j = 0; j < K_COUNT; j++)
		any |= (k.k[j] = tp_profile_find_str(p, key_names[j])) != 0;
	if (!any)
		return TP_OK;
	int st = collect(p, &k, max_cores, max, 1, out);
	if (st != TP_OK || !out->dropped || !max)
		return st;
	/* More records than fit: one command in `every` over the whole run instead of the
	 * first commands only, so every core and the end of the run keep their records. */
	size_t total = out->n + out->dropped, every = total / max + (total % max != 0);
	tp_free(out->v);
	memset(out, 0, sizeof *out);
	out->every = every;
	return collect(p, &k, max_cores, max, every, out);
}
