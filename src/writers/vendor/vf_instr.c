/*
 * vf_instr.c — instruction.csv of the vendor's legacy profiler (tpu_profile.py --format layer,
 * bmprofile_analyze; reference-outputs.md §4.5) for BM1684X and BM1684: one row per TIU and
 * GDMA command of the net's stream (the records the firmware ran outside it have no layer
 * and no row), in the order of global.profile's node lines, with the figures the reader and
 * the cost model keep per command. Owns nothing past a call.
 *
 * What each column holds (checked cell by cell against reference/bm1684x_blazeface):
 *   EngineId 0 TIU / 2 GDMA; Inst Function the Function Name; DMA data size(B) the GDMA's
 *   written bytes (0 on TIU); Direction lower case, "const->ddr" for a constant fill, "-" on
 *   TIU; Opd0/Res Dtype the printer's type names; Layer ID the layer's recorded id; Alg cycle
 *   the compiler simulator's cycles (net_stat.sim, 0 when its item was not matched);
 *   1684x Cycle end − start; Start/EndCycle; Inst ID "<engine>-<PMU inst_id>"; Dep ID the
 *   partner engine's id the descriptor waits for; Alg Ops, uArch Ops and uArch Rate (three
 *   decimals) on TIU; the des_* columns: a TIU descriptor's registers of those names, a GDMA
 *   descriptor's destination (res0) and source (opd0) shapes, strides, addresses and format
 *   under the same columns; "-" where a row has no such value; pmu_info the PMU record's
 *   counters as the reader keeps them (BM1684X, with the decoded fields).
 * Row order: layer by layer in global.profile's order, each layer's TIU commands, then its
 * GDMA commands (a global layer's parallel blocks interleave them in the file; the vendor
 * lists them per engine); commands without a layer last.
 * Cells: strings quoted, numbers bare, every cell followed by a comma (the vendor's writer
 * ends each line with one).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/argkeys.h"
#include "writers/vendor/vendor_int.h"

/* The des_* columns in the printer's order; for each, the GDMA register shown under it. */
static const struct {
	const char *col, *dma;
} des_cols[] = {
    {"des_res0_n", "dst_nsize"},
    {"des_res0_c", "dst_csize"},
    {"des_res0_h", "dst_hsize"},
    {"des_res0_w", "dst_wsize"},
    {"des_opd0_n", "src_nsize"},
    {"des_opd0_c", "src_csize"},
    {"des_opd0_h", "src_hsize"},
    {"des_opd0_w", "src_wsize"},
    {"des_opd1_n", NULL},
    {"des_opd1_c", NULL},
    {"des_opd1_h", NULL},
    {"des_opd1_w", NULL},
    {"des_res0_n_str", "dst_nstride"},
    {"des_res0_c_str", "dst_cstride"},
    {"des_opd0_n_str", "src_nstride"},
    {"des_opd0_c_str", "src_cstride"},
    {"des_opd1_n_str", NULL},
    {"des_opd1_c_str", NULL},
    {"des_opd2_n_str", NULL},
    {"des_opd2_c_str", NULL},
    {"des_res0_addr", "dst_start_addr"},
    {"des_opd0_addr", "src_start_addr"},
    {"des_opd1_addr", NULL},
    {"des_opd2_addr", NULL},
    {"des_res0_h_str", "dst_hstride"},
    {"des_res0_w_str", "dst_wstride"},
    {"des_opd0_h_str", "src_hstride"},
    {"des_opd0_w_str", "src_wstride"},
    {"des_opd1_h_str", NULL},
    {"des_opd1_w_str", NULL},
    {"des_opd2_h_str", NULL},
    {"des_opd2_w_str", NULL},
    {"des_res1_addr", NULL},
    {"des_opd3_addr", NULL},
    {"des_res_op_x_str", NULL},
    {"des_res_op_y_str", NULL},
    {"des_opd0_prec", "src_data_format"},
    {"des_res0_prec", NULL},
};
enum { NDES = sizeof des_cols / sizeof *des_cols };

static const char *const head_cols[] = {
    "EngineId", "Inst Function", "DMA data size(B)", "Direction",  "Opd0 Dtype", "Res Dtype",
    "Layer ID", "Alg cycle",     "1684x Cycle",      "StartCycle", "EndCycle",   "Inst ID",
    "Dep ID",   "pmu_info",      "Alg Ops",          "uArch Ops",  "uArch Rate"};

static void cell_str(struct tp_buf *o, const char *s)
{
	tp_buf_putc(o, '"');
	for (; *s; s++) {
		if (*s == '"')
			tp_buf_putc(o, '"');
		tp_buf_putc(o, *s);
	}
	tp_buf_puts(o, "\",");
}

static void cell_u64(struct tp_buf *o, uint64_t v)
{
	char b[24];
	snprintf(b, sizeof b, "%llu,", (unsigned long long)v);
	tp_buf_puts(o, b);
}

/* The text of a slice's argument `key` (vf_arg_text), or NULL when it has none. */
static const char *arg_text(const struct tp_profile *p, const struct tp_slice *s, const char *key,
                            char *buf, size_t n)
{
	size_t na = 0;
	const struct tp_arg *a = tp_args_get(p, s->args, &na);
	for (size_t k = 0; a && k < na; k++)
		if (strcmp(tp_str(p, a[k].key), key) == 0) {
			vf_arg_text(p, &a[k], buf, n);
			return buf;
		}
	return NULL;
}

/* A cell from an argument: a number bare, anything else quoted, "-" when absent. */
static void cell_arg(struct tp_buf *o, const struct tp_profile *p, const struct tp_slice *s,
                     const char *key)
{
	char b[64];
	const char *v = key ? arg_text(p, s, key, b, sizeof b) : NULL;
	if (!v) {
		cell_str(o, "-");
		return;
	}
	size_t i = 0;
	while (v[i] >= '0' && v[i] <= '9')
		i++;
	if (i && !v[i]) {
		tp_buf_puts(o, v);
		tp_buf_putc(o, ',');
	} else {
		cell_str(o, v);
	}
}

static void layer_cell(struct tp_buf *o, const struct tp_profile *p, const struct tp_slice *s)
{
	struct tp_layer ly;
	const struct tp_layer *l =
	    s->layer >= 0 ? tp_profile_layer(p, (size_t)s->layer, &ly) : NULL;
	if (l && l->id >= 0)
		cell_u64(o, (uint64_t)l->id);
	else
		cell_str(o, "-");
}

/* Lower-case direction; a constant fill reads from no memory ("const"). */
static void dir_cell(struct tp_buf *o, const struct tp_profile *p, const struct tp_track *t,
                     const struct tp_slice *s)
{
	char b[32], f[8];
	const char *fill = arg_text(p, s, "fill_constant_en", f, sizeof f);
	const char *name = tp_dir_name((enum tp_dir)tp_slice_label(t, s)->dir);
	if (fill && strcmp(fill, "1") == 0 && strchr(name, '>'))
		snprintf(b, sizeof b, "const%s", strchr(name, '>') - 1);
	else
		snprintf(b, sizeof b, "%s", name);
	for (char *c = b; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	cell_str(o, b);
}

/* One counter of pmu_info as "name:value". */
struct pmu_kv {
	char t[80];
};

static int kv_cmp(const void *x, const void *y)
{
	return strcmp(((const struct pmu_kv *)x)->t, ((const struct pmu_kv *)y)->t);
}

#define PMU_PREFIX "pmu." /* the reader's key prefix of the PMU counters */

/* pmu_info: the PMU record's counters "name:value", comma-separated and sorted as text (as the
 * vendor's are: "reserved1:0" before "reserved:0"), the times inst_start_time / inst_end_time
 * on the timeline (raw_* as recorded); "-" when the reader kept none. */
static void pmu_cell(struct tp_buf *o, const struct tp_profile *p, const struct tp_slice *s,
                     uint64_t start, uint64_t end)
{
	struct pmu_kv kv[64];
	size_t n = 0, na = 0;
	const struct tp_arg *a = tp_args_get(p, s->args, &na);
	const size_t pl = sizeof PMU_PREFIX - 1;
	for (size_t k = 0; a && k < na && n + 2 < sizeof kv / sizeof *kv; k++) {
		const char *key = tp_str(p, a[k].key);
		if (strncmp(key, PMU_PREFIX, pl) == 0 && a[k].type == TP_ARG_UINT)
			snprintf(kv[n++].t, sizeof kv->t, "%s:%llu", key + pl,
			         (unsigned long long)a[k].v.u);
	}
	if (!n) {
		cell_str(o, "-");
		return;
	}
	snprintf(kv[n++].t, sizeof kv->t, "inst_start_time:%llu", (unsigned long long)start);
	snprintf(kv[n++].t, sizeof kv->t, "inst_end_time:%llu", (unsigned long long)end);
	qsort(kv, n, sizeof *kv, kv_cmp);
	tp_buf_putc(o, '"');
	for (size_t k = 0; k < n; k++) {
		if (k)
			tp_buf_putc(o, ',');
		tp_buf_puts(o, kv[k].t);
	}
	tp_buf_puts(o, "\",");
}

static void put_row(struct tp_buf *o, const struct tp_profile *p, const struct tp_track *t,
                    size_t i)
{
	const struct tp_slice *s = &t->slices[i];
	int tiu = t->kind == TP_TRACK_TIU;
	char b[64];
	cell_u64(o, tiu ? 0 : 2);
	cell_str(o, tp_str(p, tp_slice_label(t, s)->name));
	cell_u64(o, tiu ? 0 : tp_slice_bytes(t, s));
	if (tiu)
		cell_str(o, "-");
	else
		dir_cell(o, p, t, s);
	cell_arg(o, p, s, "Opd0 Dtype");
	cell_arg(o, p, s, "Res Dtype");
	layer_cell(o, p, s);
	struct tp_cost k;
	int valid = tp_track_get_cost(t, i, &k);
	if (t->cost) /* the simulator's cycles, valid or not (BM1684X) */
		cell_u64(o, k.alg_cycle);
	else
		cell_arg(o, p, s, "Alg Cycle");
	uint64_t st = tp_slice_start_cycle(t, s);
	cell_u64(o, s->cycles);
	cell_u64(o, st);
	cell_u64(o, st + s->cycles);
	snprintf(b, sizeof b, "%s-%u", tiu ? "TIU" : "GDMA", s->cmd_id ? s->cmd_id - 1 : 0);
	cell_str(o, b);
	snprintf(b, sizeof b, "%s-%u", tiu ? "GDMA" : "TIU", s->dep_id);
	cell_str(o, b);
	pmu_cell(o, p, s, st, st + s->cycles);
	if (tiu && valid) {
		cell_u64(o, k.alg_ops);
		cell_u64(o, k.uarch_ops);
		cell_arg(o, p, s, TP_KEY_UARCH_RATE);
	} else {
		for (int j = 0; j < 3; j++)
			cell_str(o, "-");
	}
	for (size_t j = 0; j < NDES; j++)
		cell_arg(o, p, s, tiu ? des_cols[j].col : des_cols[j].dma);
	tp_buf_putc(o, '\n');
}

/* The core-0 track of `kind` on device 0, or NULL. */
static const struct tp_track *track_of(const struct tp_profile *p, enum tp_track_kind kind)
{
	int ti = p->num_devices ? tp_profile_find_track(p, 0, 0, kind) : -1;
	return ti < 0 ? NULL : &p->tracks[ti];
}

/* One row: a command, with what orders it. */
struct irow {
	uint64_t layer; /* layer index, UINT64_MAX for none (last) */
	uint8_t gdma;
	const struct tp_track *t;
	size_t idx;
};

static int irow_cmp(const void *x, const void *y)
{
	const struct irow *a = x, *b = y;
	if (a->layer != b->layer)
		return a->layer < b->layer ? -1 : 1;
	if (a->gdma != b->gdma)
		return a->gdma < b->gdma ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The rows of core 0's TIU and GDMA tracks in the vendor's order; NULL when out of memory. */
static struct irow *collect(const struct tp_track *tt, const struct tp_track *gt, size_t *n)
{
	size_t nt = tt ? tt->count : 0, ng = gt ? gt->count : 0;
	*n = nt + ng;
	struct irow *r = tp_malloc((*n ? *n : 1) * sizeof *r);
	if (!r)
		return NULL;
	for (size_t i = 0; i < *n; i++) {
		const struct tp_track *t = i < nt ? tt : gt;
		size_t k = i < nt ? i : i - nt;
		int32_t l = t->slices[k].layer;
		r[i] = (struct irow){.layer = l >= 0 ? (uint64_t)l : UINT64_MAX,
		                     .gdma = (uint8_t)(i >= nt),
		                     .t = t,
		                     .idx = k};
	}
	qsort(r, *n, sizeof *r, irow_cmp);
	return r;
}

int vf_write_instruction_csv(const struct vf_ctx *c, const char *dir, size_t *nfiles,
                             struct tp_diag *d)
{
	const struct tp_profile *p = c->p;
	const struct tp_track *tt = track_of(p, TP_TRACK_TIU), *gt = track_of(p, TP_TRACK_GDMA);
	if (!tt && !gt)
		return TP_OK;
	size_t n;
	struct irow *rows = collect(tt, gt, &n);
	if (!rows)
		return tp_diag_set(d, TP_ENOMEM, "instruction.csv: out of memory");
	struct tp_buf out;
	tp_buf_init(&out);
	for (size_t j = 0; j < sizeof head_cols / sizeof *head_cols; j++)
		cell_str(&out, head_cols[j]);
	for (size_t j = 0; j < NDES; j++)
		cell_str(&out, des_cols[j].col);
	tp_buf_putc(&out, '\n');
	for (size_t i = 0; i < n && !out.oom; i++)
		put_row(&out, p, rows[i].t, rows[i].idx);
	tp_free(rows);
	int rc = tp_write_buf_file(dir, "instruction.csv", &out, d);
	if (rc == TP_OK && nfiles)
		(*nfiles)++;
	tp_buf_free(&out);
	return rc;
}
