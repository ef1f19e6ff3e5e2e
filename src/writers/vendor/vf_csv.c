/*
 * vf_csv.c — PerfAI_output.csv as the vendor's PerfAI.doc writes it (sophgo-analysis.md §5,
 * reference-outputs.md §3.4): every command of every core and engine, one row each, sorted by
 * (Start Cycle, End Cycle, Cmd Id, Engine Id); the columns of its detail sheets in their
 * order; the values as in the register-info files, plus the
 * columns PerfAI.doc derives (Layer Id/Name, Avg Cycle Last 200, the DMA ratios). Owns
 * nothing past a call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/argkeys.h"
#include "writers/opscsv/opscsv.h"
#include "writers/vendor/vendor_int.h"

/* The detail columns of PerfAI.doc in its order: its TIU and DMA sheets' columns as the
 * vendor's output on the shared dumps has them (reference/<dump>/PerfAI_output.csv), every
 * one present whether a row has a value or not; BM1688 and BM1690 have the same list, CV184X
 * four TIU columns more (cv184x_only). A descriptor field outside the list is not a column. */
static const char *const columns[] = {
    "Engine Id",
    "Core Id",
    TP_KEY_GLOBAL_IDX,
    "Cmd Id",
    "Layer Id",
    "Layer Name",
    "Function Type",
    "Function Name",
    "Alg Cycle",
    "Asic Cycle",
    "Start Cycle",
    "End Cycle",
    "Avg Cycle Last 200",
    "Alg Ops",
    "uArch Ops",
    "uArch Rate",
    "Bank Conflict Ratio",
    "Initial Cycle Ratio",
    "Data Type",
    "Sim Power(W)",
    "des_cmd_id_dep",
    "des_res0_n",
    "des_res0_c",
    "des_res0_h",
    "des_res0_w",
    "des_res0_n_str",
    "des_res0_c_str",
    "des_res0_h_str",
    "des_res0_w_str",
    "des_opd0_n",
    "des_opd0_c",
    "des_opd0_h",
    "des_opd0_w",
    "des_opd0_n_str",
    "des_opd0_c_str",
    "des_opd0_h_str",
    "des_opd0_w_str",
    "des_opd1_n",
    "des_opd1_c",
    "des_opd1_h",
    "des_opd1_w",
    "des_opd1_n_str",
    "des_opd1_c_str",
    "des_opd1_h_str",
    "des_opd1_w_str",
    "des_opd2_n_str",
    "des_res0_addr",
    "des_res1_addr",
    "des_opd0_addr",
    "des_opd1_addr",
    "des_opd2_addr",
    "des_opd3_addr",
    "des_tsk_typ",
    "des_tsk_eu_typ",
    "des_cmd_short",
    "des_opt_res0_prec",
    "des_opt_opd0_prec",
    "des_opt_opd1_prec",
    "des_opt_opd2_prec",
    "des_short_opd0_str",
    "des_opt_opd0_const",
    "des_opt_opd1_const",
    "des_opt_opd2_const",
    "des_opt_opd3_const",
    "des_opt_opd4_const",
    "des_opt_opd5_const",
    "des_opt_res_add",
    "des_opt_res0_sign",
    "des_opt_opd0_sign",
    "des_opt_opd1_sign",
    "des_opt_opd2_sign",
    "des_opd0_rt_pad",
    "des_opd1_x_ins0",
    "des_opd0_up_pad",
    "des_opd0_lf_pad",
    "des_opt_left_tran",
    "des_pad_mode",
    "des_opd0_y_ins0",
    "des_opd1_y_ins0",
    "des_short_res0_str",
    "des_short_opd1_str",
    "des_sym_range",
    "des_opt_rq",
    "des_op_code",
    "des_opt_kernel_rotate",
    "des_res_op_x_str",
    "des_res_op_y_str",
    "des_opd0_x_ins0",
    "des_tsk_opd_num",
    "des_opd0_dn_pad",
    "des_intr_en",
    "des_opt_relu",
    "des_pwr_step",
    "Msg Id",
    "Sd\\Wt Count",
    "DMA data size(B)",
    "Stall Cycle",
    "DDR Bandwidth(GB/s)",
    "L2M Bandwidth(GB/s)",
    "Direction",
    "AvgBurstLength",
    "Non32ByteRatio",
    "MaskWriteRatio",
    "cmd_id_dep",
    "cmd_special_function",
    "src_start_addr",
    "dst_start_addr",
    "src_nsize",
    "src_csize",
    "src_hsize",
    "src_wsize",
    "dst_nsize",
    "dst_csize",
    "dst_hsize",
    "dst_wsize",
    "src_nstride",
    "src_cstride",
    "src_hstride",
    "src_wstride",
    "dst_nstride",
    "dst_cstride",
    "dst_hstride",
    "dst_wstride",
    "nchw_copy",
    "stride_enable",
    "src_data_format",
    "cmd_type",
    "index_csize",
    "index_hsize",
    "index_cstride",
    "index_hstride",
    "mask_start_addr_h8",
    "mask_start_addr_l32",
    "mask_data_format",
    "localmem_mask_h32",
    "localmem_mask_l32",
    "fill_constant_en",
    "constant_value",
    "index",
    "cmd_short",
    "intr_en",
};
enum { NCOLS = sizeof columns / sizeof *columns };
static const char *const cv184x_only[] = {"des_opd0_n", "des_opd1_n", "des_opd1_c",
                                          "des_opt_left_tran"};

/* Whether column k is in the chip's list. */
static int has_column(const struct tp_profile *p, size_t k)
{
	if (p->arch == TP_ARCH_CV184X)
		return 1;
	for (size_t i = 0; i < sizeof cv184x_only / sizeof *cv184x_only; i++)
		if (strcmp(columns[k], cv184x_only[i]) == 0)
			return 0;
	return 1;
}

/* One row: a command of a track. */
struct row {
	uint64_t start, end;
	uint32_t cmd_id;
	uint8_t engine; /* the vendor's Engine Id */
	uint32_t track;
	size_t idx;   /* in its track */
	size_t order; /* its place in the concatenation (the sort's last key: stable) */
};

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	if (a->cmd_id != b->cmd_id)
		return a->cmd_id < b->cmd_id ? -1 : 1;
	if (a->engine != b->engine)
		return a->engine < b->engine ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static int engine_id(enum tp_track_kind k)
{
	return k == TP_TRACK_TIU ? 0 : k == TP_TRACK_GDMA ? 1 : k == TP_TRACK_SDMA ? 3 : 4;
}

/* The rows of device 0's TIU, GDMA and SDMA tracks, core by core, sorted. NULL on out of
 * memory (*n = 0 and no rows is not an error: *n tells). */
static struct row *collect(const struct tp_profile *p, size_t *n, int *oom)
{
	size_t total = 0;
	*oom = 0;
	for (size_t i = 0; i < p->num_tracks; i++)
		if (p->tracks[i].device == 0 && p->tracks[i].kind <= TP_TRACK_SDMA)
			total += p->tracks[i].count;
	*n = total;
	if (!total)
		return NULL;
	struct row *r = tp_malloc(total * sizeof *r);
	if (!r) {
		*oom = 1;
		return NULL;
	}
	size_t k = 0;
	for (int32_t core = 0; core < p->devices[0].num_cores; core++)
		for (int kind = TP_TRACK_TIU; kind <= TP_TRACK_SDMA; kind++) {
			int ti = tp_profile_find_track(p, 0, core, (enum tp_track_kind)kind);
			if (ti < 0)
				continue;
			const struct tp_track *t = &p->tracks[ti];
			for (size_t i = 0; i < t->count && k < total; i++, k++) {
				const struct tp_slice *s = &t->slices[i];
				r[k] = (struct row){
				    .start = tp_slice_start_cycle(t, s),
				    .end = tp_slice_end_cycle(t, s),
				    .cmd_id = s->cmd_id,
				    .engine = (uint8_t)engine_id((enum tp_track_kind)kind),
				    .track = (uint32_t)ti,
				    .idx = i,
				    .order = k};
			}
		}
	*n = k;
	qsort(r, k, sizeof *r, row_cmp); /* total order: deterministic */
	return r;
}

/* PerfAI.doc's "Avg Cycle Last 200" of TIU command i of track t: End / Cmd Id for the first
 * 199 commands, else (End[i] - Start[i-199]) / 200, rounded half to even (Python's round). */
static void avg_last_200(const struct tp_track *t, size_t i, char *out, size_t n)
{
	const struct tp_slice *s = &t->slices[i];
	double v = i < 199 ? (s->cmd_id ? (double)tp_slice_end_cycle(t, s) / s->cmd_id : 0)
	                   : ((double)tp_slice_end_cycle(t, s) -
	                      (double)tp_slice_start_cycle(t, &t->slices[i - 199])) /
	                         200.0;
	snprintf(out, n, "%.0f", nearbyint(v));
}

/* value / count as Python divides (a float), or the integer 0 for no count. */
static void ratio(const struct vf_dict *d, const char *num, const char *den, char *out, size_t n)
{
	const char *a = vf_get(d, num), *b = vf_get(d, den);
	double x = a ? strtod(a, NULL) : 0, y = b ? strtod(b, NULL) : 0;
	if (y == 0)
		snprintf(out, n, "0");
	else
		vf_pyfloat(out, n, x / y);
}

/* Fills `d` with the CSV's values of row r. */
static void row_values(const struct vf_ctx *c, const struct row *r, int layers, struct vf_dict *d,
                       struct vf_dict *extra)
{
	const struct tp_profile *p = c->p;
	const struct tp_track *t = &p->tracks[r->track];
	const struct tp_slice *s = &t->slices[r->idx];
	char b[64];
	vf_dict_clear(d);
	vf_dict_clear(extra);
	vf_set_i64(d, "Engine Id", r->engine);
	vf_set_i64(d, "Core Id", t->core);
	vf_set_u64(d, TP_KEY_GLOBAL_IDX, tp_global_idx(r->idx));
	vf_set_u64(d, "Cmd Id", s->cmd_id);
	struct tp_layer ly;
	const struct tp_layer *l =
	    layers && s->layer >= 0 ? tp_profile_layer(p, (size_t)s->layer, &ly) : NULL;
	if (l) { /* PerfAI.doc numbers the layers by their place in tensor_location.json */
		vf_set_i64(d, "Layer Id", (int64_t)s->layer + 1);
		vf_set(d, "Layer Name", tp_str(p, l->type));
	} else {
		vf_set(d, "Layer Id", "-");
		vf_set(d, "Layer Name", "-");
	}
	if (t->kind == TP_TRACK_TIU) {
		const char *ftype;
		vf_tiu_record(c, t, r->idx, d, extra, &ftype);
		for (size_t k = 0; k < extra->n; k++)
			vf_set(d, extra->key[k], vf_val(extra, k));
		avg_last_200(t, r->idx, b, sizeof b);
		vf_set(d, "Avg Cycle Last 200", b);
		size_t na = 0;
		const struct tp_arg *a = tp_args_get(p, s->args, &na);
		const char *dt = "INT8 -> INT8"; /* the vendor's for a record without descriptor */
		char dtb[64];
		for (size_t k = 0; a && k < na; k++)
			if (strcmp(tp_str(p, a[k].key), TP_KEY_DATA_TYPE) == 0) {
				vf_arg_text(p, &a[k], dtb, sizeof dtb);
				dt = dtb;
			}
		vf_set(d, TP_KEY_DATA_TYPE, dt);
		return;
	}
	vf_dma_record(c, t, r->idx, d);
	/* PerfAI.doc: sys commands have no data type or direction; bandwidths are floats. */
	if (tp_slice_kind(t, s) != TP_CMD_NORMAL) {
		vf_set(d, TP_KEY_DATA_TYPE, "None");
		vf_set(d, "Direction", "-");
	}
	static const char *const bw[] = {TP_KEY_DDR_BW, TP_KEY_L2_BW};
	for (size_t k = 0; k < 2; k++) {
		const char *v = vf_get(d, bw[k]);
		vf_pyfloat(b, sizeof b, v ? strtod(v, NULL) : 0.0);
		vf_set(d, bw[k], b);
	}
	ratio(d, "gmem_bl_sum", TP_KEY_GMEM_XACT, b, sizeof b);
	vf_set(d, "AvgBurstLength", b);
	ratio(d, "gmem_n32Ba_sa_cnt", TP_KEY_GMEM_XACT, b, sizeof b);
	vf_set(d, "Non32ByteRatio", b);
	ratio(d, "gmem_msk_wr_cnt", TP_KEY_GMEM_XACT, b, sizeof b);
	vf_set(d, "MaskWriteRatio", b);
}

static void put_row(struct tp_buf *out, const struct vf_dict *d, const unsigned char *present)
{
	int first = 1;
	for (size_t k = 0; k < NCOLS; k++) {
		if (!present[k])
			continue;
		if (!first)
			tp_buf_putc(out, ',');
		first = 0;
		const char *v = vf_get(d, columns[k]);
		if (v)
			tp_csv_cell(out, v,
			            strcmp(columns[k], "Layer Name") == 0 && strcmp(v, "-") != 0);
	}
	tp_buf_putc(out, '\n');
}

int vf_write_perfai_csv(const struct vf_ctx *c, const char *dir, size_t *nfiles, struct tp_diag *d)
{
	const struct tp_profile *p = c->p;
	size_t n;
	int oom;
	struct row *rows = p->num_devices ? collect(p, &n, &oom) : NULL;
	if (!p->num_devices || (!rows && !oom))
		return TP_OK;
	struct vf_dict *x = tp_malloc(2 * sizeof *x);
	if (!rows || !x) {
		tp_free(rows);
		tp_free(x);
		return tp_diag_set(d, TP_ENOMEM, "PerfAI_output.csv: out of memory");
	}
	vf_dict_init(&x[0]);
	vf_dict_init(&x[1]);
	/* Layer columns only with the compiler's layer files (tensor_location.json and
	 * final.mlir), as PerfAI.doc has them. */
	int layers = tp_profile_get_meta(p, "mlir_chip") != NULL;
	unsigned char present[NCOLS];
	for (size_t k = 0; k < NCOLS; k++)
		present[k] = (unsigned char)has_column(p, k);
	struct tp_buf out;
	tp_buf_init(&out);
	int first = 1;
	for (size_t k = 0; k < NCOLS; k++)
		if (present[k]) {
			if (!first)
				tp_buf_putc(&out, ',');
			first = 0;
			tp_buf_puts(&out, columns[k]);
		}
	tp_buf_putc(&out, '\n');
	for (size_t i = 0; i < n && !out.oom; i++) {
		row_values(c, &rows[i], layers, &x[0], &x[1]);
		if (x[0].val.oom)
			out.oom = 1;
		put_row(&out, &x[0], present);
	}
	int rc = tp_write_buf_file(dir, "PerfAI_output.csv", &out, d);
	if (rc == TP_OK && nfiles)
		(*nfiles)++;
	tp_buf_free(&out);
	vf_dict_free(&x[0]);
	vf_dict_free(&x[1]);
	tp_free(x);
	tp_free(rows);
	return rc;
}
