/*
 * vf_rec.c — one command as the vendor's printers lay it out in tiuRegInfo / tdmaRegInfo /
 * cdmaRegInfo (sophgo-analysis.md §3; tpu-mlir bmprofile_perfAI for VF_PERFAI, the BM1690
 * printer for VF_CDM): the model's arguments (the decoded descriptor fields and the DMA PMU
 * figures, stored by the readers under the vendor's names and in its order) merged with the
 * fields the printers generate (engine, cycles, ids, placeholders) in the printer's order,
 * with the Python-dict rule that a key printed twice keeps its first place. Owns nothing.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/argkeys.h"
#include "writers/vendor/vendor_int.h"

enum vf_flavour vf_flavour_of(const struct tp_profile *p)
{
	switch (p->arch) {
	case TP_ARCH_BM1688:
	case TP_ARCH_CV184X:
		return VF_PERFAI;
	case TP_ARCH_BM1690:
	case TP_ARCH_SG2260E:
		return VF_CDM;
	case TP_ARCH_BM1684X:
	case TP_ARCH_BM1684:
		return VF_LEGACY;
	default:
		return VF_NONE;
	}
}

/* The DMA PMU figures the printers append after the descriptor (readers/sophgo sg_args.c). */
static const char *const dma_figures[] = {
    TP_KEY_STALL_CYCLE, TP_KEY_GMEM_XFER_BYTES,  TP_KEY_GMEM_BW,      TP_KEY_GMEM_DMA_SIZE,
    TP_KEY_GMEM_XACT,   TP_KEY_LMEM_XFER_BYTES,  TP_KEY_LMEM_BW,      TP_KEY_LMEM_DMA_SIZE,
    TP_KEY_LMEM_XACT,   TP_KEY_DMA_SIZE,         TP_KEY_DDR_BW,       TP_KEY_L2_BW,
    "gmem_bl_sum",      "gmem_avg_burst_length", "lmem_bl_sum",       "lmem_avg_burst_length",
    "lmem_msk_wr_cnt",  "gmem_msk_wr_cnt",       "lmem_n32Ba_sa_cnt", "gmem_n32Ba_sa_cnt",
};

/* TIU arguments that are not descriptor fields: the cost figures' texts and the data type. */
static const char *const tiu_cost[] = {TP_KEY_ALG_OPS,    TP_KEY_UARCH_OPS,  TP_KEY_ALG_CYCLE,
                                       TP_KEY_UARCH_RATE, TP_KEY_INIT_RATIO, TP_KEY_BANK_RATIO};

static int in_list(const char *k, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(k, list[i]) == 0)
			return 1;
	return 0;
}
#define IN(k, list) in_list(k, list, sizeof list / sizeof *list)

static const char *arg_key(const struct tp_profile *p, const struct tp_arg *a)
{
	return tp_str(p, a->key);
}

/* The text of argument `key` of slice s, or NULL. */
static const char *arg_find(const struct tp_profile *p, const struct tp_slice *s, const char *key,
                            char *buf, size_t n)
{
	size_t na = 0;
	const struct tp_arg *a = tp_args_get(p, s->args, &na);
	for (size_t i = 0; a && i < na; i++)
		if (strcmp(arg_key(p, &a[i]), key) == 0) {
			vf_arg_text(p, &a[i], buf, n);
			return buf;
		}
	return NULL;
}

static void set_arg_or(const struct tp_profile *p, const struct tp_slice *s, struct vf_dict *d,
                       const char *key, const char *dflt)
{
	char b[256];
	const char *v = arg_find(p, s, key, b, sizeof b);
	vf_set(d, key, v ? v : dflt);
}

static void set_cycles(struct vf_dict *d, const struct tp_track *t, const struct tp_slice *s,
                       const char *between)
{
	vf_set_u64(d, "Start Cycle", tp_slice_start_cycle(t, s));
	vf_set_u64(d, "End Cycle", tp_slice_end_cycle(t, s));
	vf_set_u64(d, "Cmd Id", s->cmd_id);
	if (between)
		vf_set(d, "Data Type", between);
	vf_set_u64(d, "Asic Cycle", s->cycles);
}

/* The record the BM1690 printer writes for a TIU PMU record without a descriptor. */
static void tiu_unknown(const struct vf_ctx *c, const struct tp_track *t, size_t i,
                        struct vf_dict *info, struct vf_dict *extra)
{
	const struct tp_slice *s = &t->slices[i];
	const struct tp_label *lb = tp_slice_label(t, s);
	vf_set(info, TP_KEY_FUNCTION_TYPE, tp_str(c->p, lb->type));
	vf_set(info, TP_KEY_FUNCTION_NAME, tp_str(c->p, lb->name));
	set_cycles(info, t, s, NULL);
	vf_set(info, "Engine Id", "0");
	vf_set(info, TP_KEY_ALG_OPS, "1");
	vf_set(info, TP_KEY_UARCH_OPS, "1");
	vf_set(info, TP_KEY_ALG_CYCLE, "0");
	vf_set(info, TP_KEY_UARCH_RATE, "0.0%");
	vf_set(info, TP_KEY_INIT_RATIO, "0.0%");
	vf_set(info, TP_KEY_BANK_RATIO, "0.0%");
	vf_set(info, "Sim Power(W)", "0");
	vf_set_u64(info, TP_KEY_GLOBAL_IDX, tp_global_idx(i));
	vf_set_i64(info, "Core Id", t->core);
	static const char *const raw[] = {
	    "type",        "engine",  "des_tsk_typ",       "des_tsk_eu_typ",
	    "extra_info",  "inst_id", "des_opt_res0_prec", "Msg Id",
	    "Sd\\Wt Count"};
	for (size_t k = 0; k < sizeof raw / sizeof *raw; k++)
		vf_set(extra, raw[k], strcmp(raw[k], "des_tsk_typ") == 0 ? "31" : "0");
}

void vf_tiu_record(const struct vf_ctx *c, const struct tp_track *t, size_t i, struct vf_dict *info,
                   struct vf_dict *extra, const char **ftype)
{
	const struct tp_profile *p = c->p;
	const struct tp_slice *s = &t->slices[i];
	const struct tp_label *lb = tp_slice_label(t, s);
	*ftype = tp_str(p, lb->type);
	if (c->fl == VF_CDM && !s->args && strcmp(*ftype, "unknown") == 0) {
		tiu_unknown(c, t, i, info, extra);
		return;
	}
	vf_set(info, TP_KEY_FUNCTION_NAME, tp_str(p, lb->name));
	vf_set(info, TP_KEY_FUNCTION_TYPE, *ftype);
	set_cycles(info, t, s, NULL);
	vf_set(info, "Engine Id", "0");
	set_arg_or(p, s, info, TP_KEY_ALG_OPS, "1");
	set_arg_or(p, s, info, TP_KEY_UARCH_OPS, "1");
	if (c->fl == VF_CDM) { /* the BM1690 printer's order */
		set_arg_or(p, s, info, TP_KEY_UARCH_RATE, "0.0%");
		set_arg_or(p, s, info, TP_KEY_ALG_CYCLE, "0");
	} else {
		set_arg_or(p, s, info, TP_KEY_ALG_CYCLE, "0");
		set_arg_or(p, s, info, TP_KEY_UARCH_RATE, "100.0%");
	}
	set_arg_or(p, s, info, TP_KEY_INIT_RATIO, "0.0%");
	set_arg_or(p, s, info, TP_KEY_BANK_RATIO, "0.0%");
	vf_set(info, "Sim Power(W)", "0");
	if (c->fl == VF_CDM)
		vf_set_u64(info, TP_KEY_GLOBAL_IDX, tp_global_idx(i));
	vf_set_i64(info, "Core Id", t->core);
	size_t na = 0;
	const struct tp_arg *a = tp_args_get(p, s->args, &na);
	for (size_t k = 0; a && k < na; k++) {
		const char *key = arg_key(p, &a[k]);
		if (IN(key, tiu_cost) || strcmp(key, TP_KEY_DATA_TYPE) == 0)
			continue;
		char b[256];
		vf_arg_text(p, &a[k], b, sizeof b);
		vf_set(extra, key, b);
	}
	if (!vf_get(extra, "Msg Id"))
		vf_set(extra, "Msg Id", "0");
	if (!vf_get(extra, "Sd\\Wt Count"))
		vf_set(extra, "Sd\\Wt Count", "0");
	if (c->fl != VF_CDM)
		vf_set_u64(extra, TP_KEY_GLOBAL_IDX, tp_global_idx(i));
}

static int engine_id(enum tp_track_kind k)
{
	return k == TP_TRACK_GDMA ? 1 : k == TP_TRACK_SDMA ? 3 : 4;
}

/* Engine Id, Direction and the two memories it joins. */
static void set_route(struct vf_dict *d, enum tp_track_kind k, const char *dir)
{
	vf_set_i64(d, "Engine Id", engine_id(k));
	vf_set(d, "Direction", dir);
	const char *arrow = strstr(dir, "->");
	char from[32] = "", to[32] = "";
	if (arrow) {
		snprintf(from, sizeof from, "%.*s", (int)(arrow - dir), dir);
		snprintf(to, sizeof to, "%s", arrow + 2);
	}
	vf_set(d, "from_addr", from);
	vf_set(d, "to_addr", to);
}

/* The placeholders every DMA record ends with (constant in the vendor's printers). */
static void set_placeholders(struct vf_dict *d)
{
	static const char shape[] = "(1, 128, 128 ,9)(FP32)(147456, 1152, 9, 1)";
	vf_set(d, "funcName", " ");
	vf_set(d, "layer_ID", "");
	vf_set(d, "index", " ");
	vf_set(d, "Msg Id", " ");
	vf_set(d, "Sd\\Wt Count", " ");
	vf_set(d, "mask_data_format", " ");
	vf_set(d, "index_shape", shape);
	vf_set(d, "src_shape", shape);
	vf_set(d, "dst_shape", shape);
}

/* The record the BM1690 printer writes for a DMA PMU record without a descriptor: its
 * mode-1 layout, with the figures the model keeps for such a record (docs/vendor-files.md). */
static void dma_unknown(const struct vf_ctx *c, const struct tp_track *t, size_t i,
                        struct vf_dict *d)
{
	const struct tp_slice *s = &t->slices[i];
	const struct tp_label *lb = tp_slice_label(t, s);
	char dir[32];
	snprintf(dir, sizeof dir, "%s", lb->dir ? tp_dir_name((enum tp_dir)lb->dir) : "-");
	set_route(d, (enum tp_track_kind)t->kind, dir);
	vf_set(d, "src_data_format", "0");
	vf_set(d, "cmd_type", "31");
	vf_set(d, "cmd_special_function", "0");
	vf_set(d, TP_KEY_FUNCTION_TYPE, tp_str(c->p, lb->type));
	vf_set(d, TP_KEY_FUNCTION_NAME, tp_str(c->p, lb->name));
	set_cycles(d, t, s, tp_dtype_name((enum tp_dtype)lb->dtype));
	uint64_t bytes = tp_slice_bytes(t, s);
	char bw[40];
	vf_pyfloat(bw, sizeof bw, s->cycles ? round((double)bytes / s->cycles * 1e4) / 1e4 : 0.0);
	vf_set_u64(d, TP_KEY_STALL_CYCLE, lb->stall);
	static const char *const size_keys[] = {TP_KEY_GMEM_XFER_BYTES, TP_KEY_GMEM_BW,
	                                        TP_KEY_GMEM_DMA_SIZE,   TP_KEY_LMEM_XFER_BYTES,
	                                        TP_KEY_LMEM_BW,         TP_KEY_LMEM_DMA_SIZE,
	                                        TP_KEY_DMA_SIZE,        TP_KEY_DDR_BW};
	for (size_t k = 0; k < sizeof size_keys / sizeof *size_keys; k++) {
		if (strstr(size_keys[k], "andwidth"))
			vf_set(d, size_keys[k], bw);
		else
			vf_set_u64(d, size_keys[k], bytes);
	}
	static const char *const zero_keys[] = {
	    TP_KEY_LMEM_XACT,  TP_KEY_GMEM_XACT,        "gmem_bl_sum",      "gmem_avg_burst_length",
	    "lmem_bl_sum",     "lmem_avg_burst_length", TP_KEY_L2_BW,       "lmem_msk_wr_cnt",
	    "gmem_msk_wr_cnt", "lmem_n32Ba_sa_cnt",     "gmem_n32Ba_sa_cnt"};
	for (size_t k = 0; k < sizeof zero_keys / sizeof *zero_keys; k++)
		vf_set(d, zero_keys[k], "0");
	set_placeholders(d);
	vf_set(d, "dst_start_addr", "0");
	vf_set(d, "src_start_addr", "0");
	vf_set_u64(d, TP_KEY_GLOBAL_IDX, tp_global_idx(i));
	vf_set_i64(d, "Core Id", t->core);
}

void vf_dma_record(const struct vf_ctx *c, const struct tp_track *t, size_t i, struct vf_dict *d)
{
	const struct tp_profile *p = c->p;
	const struct tp_slice *s = &t->slices[i];
	const struct tp_label *lb = tp_slice_label(t, s);
	if (c->fl == VF_CDM && !s->args && strcmp(tp_str(p, lb->type), "unknown") == 0) {
		dma_unknown(c, t, i, d);
		return;
	}
	size_t na = 0;
	const struct tp_arg *a = tp_args_get(p, s->args, &na);
	char b[256];
	/* The descriptor fields: every argument before the first PMU figure. */
	size_t k = 0;
	for (; a && k < na; k++) {
		const char *key = arg_key(p, &a[k]);
		if (IN(key, dma_figures))
			break;
		if (strcmp(key, TP_KEY_DATA_TYPE) == 0 || strcmp(key, "Direction") == 0)
			continue;
		vf_arg_text(p, &a[k], b, sizeof b);
		vf_set(d, key, b);
	}
	const char *dir = arg_find(p, s, "Direction", b, sizeof b);
	char dirb[32];
	snprintf(dirb, sizeof dirb, "%s", dir ? dir : tp_dir_name((enum tp_dir)lb->dir));
	set_route(d, (enum tp_track_kind)t->kind, dirb);
	vf_set(d, TP_KEY_FUNCTION_TYPE, tp_str(p, lb->type));
	vf_set(d, TP_KEY_FUNCTION_NAME, tp_str(p, lb->name));
	const char *dt = arg_find(p, s, TP_KEY_DATA_TYPE, b, sizeof b);
	char dtb[64];
	snprintf(dtb, sizeof dtb, "%s", dt ? dt : tp_dtype_name((enum tp_dtype)lb->dtype));
	set_cycles(d, t, s, dtb);
	for (; a && k < na; k++) {
		const char *key = arg_key(p, &a[k]);
		if (strcmp(key, TP_KEY_DATA_TYPE) == 0 || strcmp(key, "Direction") == 0)
			continue;
		vf_arg_text(p, &a[k], b, sizeof b);
		/* The BM1690 printer's bandwidth of a memory the direction does not name is the
		 * integer 0 (its "else 0" branch), the measured one a float; a DDR<->L2M move
		 * counts under DDR only (bm1690_defs.py get_dma_info). */
		int ddr = strstr(dirb, "DDR") != NULL, l2m = strstr(dirb, "L2M") != NULL;
		if (c->fl == VF_CDM && ((strcmp(key, TP_KEY_DDR_BW) == 0 && !ddr) ||
		                        (strcmp(key, TP_KEY_L2_BW) == 0 && (!l2m || ddr))))
			snprintf(b, sizeof b, "0");
		vf_set(d, key, b);
	}
	set_placeholders(d);
	if (c->fl == VF_CDM) {
		vf_set_u64(d, TP_KEY_GLOBAL_IDX, tp_global_idx(i));
		vf_set_i64(d, "Core Id", t->core);
	} else {
		vf_set_i64(d, "Core Id", t->core);
		vf_set_u64(d, TP_KEY_GLOBAL_IDX, tp_global_idx(i));
	}
}
