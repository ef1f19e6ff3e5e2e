/*
 * engine.c — the per-record sheets: one per engine and core (TIU_c, GDMA_c, SDMA_c, CDMA_c; a
 * command a row in the reference column order of sophgo-analysis.md §5.2 / §5.3, with the
 * engine's totals on top and the reference highlights), one per host thread, host lane,
 * firmware or layer track, and the "Longest commands" sheet of the engines whose sheets are cut.
 *
 * Owns nothing beyond one call.
 */
#include "common/progress.h"
#include "model/argkeys.h"
#include "writers/xlsx/xlsx_int.h"

#include <inttypes.h>
#include <string.h>

enum ecol {
	E_ENGINE_ID,
	E_CORE_ID,
	E_GIDX,
	E_CMD_ID,
	E_LAYER_ID,
	E_LAYER_NAME,
	E_FTYPE,
	E_FNAME,
	E_DMA_SIZE,
	E_ASIC,
	E_START_CYC,
	E_END_CYC,
	E_START_US,
	E_END_US,
	E_DUR_US,
	E_AVG200,
	E_ALG_CYCLE,
	E_ALG_OPS,
	E_UARCH_OPS,
	E_UARCH,
	E_BANK,
	E_INIT,
	E_STALL,
	E_DDR_BW,
	E_L2_BW,
	E_DIR,
	E_DTYPE,
	E_DEP,
	E_NCOLS
};

static const char *const ecol_name[E_NCOLS] = {
    "Engine Id",       "Core Id",         "Global Idx",         "Cmd Id",
    "Layer Id",        "Layer Name",      TP_KEY_FUNCTION_TYPE, TP_KEY_FUNCTION_NAME,
    TP_KEY_DMA_SIZE,   "Asic Cycle",      "Start Cycle",        "End Cycle",
    "Start Time(us)",  "End Time(us)",    "Duration(us)",       "Avg Cycle Last 200",
    TP_KEY_ALG_CYCLE,  TP_KEY_ALG_OPS,    TP_KEY_UARCH_OPS,     TP_KEY_UARCH_RATE,
    TP_KEY_BANK_RATIO, TP_KEY_INIT_RATIO, TP_KEY_STALL_CYCLE,   TP_KEY_DDR_BW,
    TP_KEY_L2_BW,      "Direction",       TP_KEY_DATA_TYPE,     TP_KEY_DMA_DEP,
};

/* Column order per engine (sophgo-analysis.md §5.2 TIU, §5.3 DMA; µs columns are ours). */
static const enum ecol tiu_cols[] = {
    E_ENGINE_ID, E_CORE_ID,   E_GIDX,      E_CMD_ID,  E_LAYER_ID, E_LAYER_NAME, E_FTYPE,  E_FNAME,
    E_ALG_CYCLE, E_ASIC,      E_START_CYC, E_END_CYC, E_START_US, E_END_US,     E_DUR_US, E_AVG200,
    E_ALG_OPS,   E_UARCH_OPS, E_UARCH,     E_BANK,    E_INIT,     E_DTYPE,      E_DEP,
};
static const enum ecol dma_cols[] = {
    E_ENGINE_ID, E_CORE_ID,  E_GIDX,      E_CMD_ID,  E_LAYER_ID, E_LAYER_NAME, E_FTYPE,
    E_FNAME,     E_DMA_SIZE, E_START_CYC, E_END_CYC, E_ASIC,     E_START_US,   E_END_US,
    E_DUR_US,    E_STALL,    E_DDR_BW,    E_L2_BW,   E_DIR,      E_DTYPE,      E_DEP,
};

static int engine_id(uint8_t kind)
{
	/* Reference Engine Id: 0 TIU, 1 GDMA, 3 SDMA, 4 CDMA (sophgo-analysis.md §2.1). */
	return kind == TP_TRACK_TIU ? 0 : kind == TP_TRACK_GDMA ? 1 : kind == TP_TRACK_SDMA ? 3 : 4;
}

/* The TIU totals above the command table: row 0 names, row 1 values. */
static void tiu_totals(struct xl *x, struct xl_sheet *s, const struct tp_engine_stats *e)
{
	static const char *const h[] = {"totalTiuCycle", "busyCycle",   "waitMsgTotalCycle",
	                                "sysCycle",      "records",     "busyTime(us)",
	                                "idleTime(us)",  "utilisation", "algTotalOps",
	                                "totalUArchOps", "uArchURate",  "totalAlgCycle"};
	xl_header_row(x, s, 0, h, sizeof h / sizeof *h);
	xl_num(x, s, 1, 0, (double)e->working_cycle, x->f.cyc);
	xl_num(x, s, 1, 1, (double)e->busy_cycle, x->f.cyc);
	xl_num(x, s, 1, 2, (double)e->wait_cycle, x->f.cyc);
	xl_num(x, s, 1, 3, (double)e->sys_cycle, x->f.cyc);
	xl_num(x, s, 1, 4, (double)e->records, x->f.cyc);
	xl_num(x, s, 1, 5, xl_ns_to_us(e->busy_ns), x->f.us);
	xl_num(x, s, 1, 6, xl_ns_to_us(e->idle_ns), x->f.us);
	xl_num(x, s, 1, 7, e->utilization, x->f.pct);
	double rate;
	if (tp_uarch_rate(e, &rate)) {
		xl_num(x, s, 1, 8, (double)e->alg_ops, x->f.cyc);
		xl_num(x, s, 1, 9, (double)e->uarch_ops, x->f.cyc);
		xl_num(x, s, 1, 10, rate, x->f.pct);
		xl_num(x, s, 1, 11, (double)e->alg_cycle, x->f.cyc);
	} else {
		/* No descriptors in the dump: nothing to model, nothing invented. */
		for (uint16_t c = 8; c <= 11; c++)
			xl_str(x, s, 1, c, "n/a", NULL);
	}
}

/* The DMA engine totals above the command table: row 0 names, row 1 values. */
static void dma_totals(struct xl *x, struct xl_sheet *s, const struct tp_engine_stats *e)
{
	static const char *const h[] = {"totalDmaCycle",
	                                "busyCycle",
	                                "totalStallCycle",
	                                "stallCycleRatio",
	                                "totalDdrDataSize(B)",
	                                "totalL2DataSize(B)",
	                                "ddrAvgBandwidth(GB/s)",
	                                "l2AvgBandwidth(GB/s)",
	                                "ddrReadBandwidth(GB/s)",
	                                "ddrWriteBandwidth(GB/s)",
	                                "waitMsgTotalCycle",
	                                "records",
	                                "busyTime(us)",
	                                "idleTime(us)",
	                                "utilisation",
	                                "avgDdrBurstLength"};
	xl_header_row(x, s, 0, h, sizeof h / sizeof *h);
	xl_num(x, s, 1, 0, (double)e->working_cycle, x->f.cyc);
	xl_num(x, s, 1, 1, (double)e->busy_cycle, x->f.cyc);
	xl_num(x, s, 1, 2, (double)e->stall_cycle, x->f.cyc);
	xl_num(x, s, 1, 3, e->working_cycle ? (double)e->stall_cycle / (double)e->working_cycle : 0,
	       x->f.pct);
	xl_num(x, s, 1, 4, (double)e->ddr_bytes, x->f.cyc);
	xl_num(x, s, 1, 5, (double)e->l2_bytes, x->f.cyc);
	xl_num(x, s, 1, 6, e->ddr_avg_gbps, x->f.gbps);
	xl_num(x, s, 1, 7, e->l2_avg_gbps, x->f.gbps);
	xl_num(x, s, 1, 8, e->ddr_read_gbps, x->f.gbps);
	xl_num(x, s, 1, 9, e->ddr_write_gbps, x->f.gbps);
	xl_num(x, s, 1, 10, (double)e->wait_cycle, x->f.cyc);
	xl_num(x, s, 1, 11, (double)e->records, x->f.cyc);
	xl_num(x, s, 1, 12, xl_ns_to_us(e->busy_ns), x->f.us);
	xl_num(x, s, 1, 13, xl_ns_to_us(e->idle_ns), x->f.us);
	xl_num(x, s, 1, 14, e->utilization, x->f.pct);
	xl_num(x, s, 1, 15, e->ddr_avg_burst, x->f.gbps);
}

/* The note on row 2 of an engine sheet: the cut, the clock and units, and the part's place
 * among the track's parts. */
static void engine_note(char *note, size_t size, const struct tp_track *t, const struct part *pt,
                        const struct plan *pl)
{
	int n = 0;
	if (pt->shown < t->count)
		n = snprintf(
		    note, size,
		    "Showing the first %zu of %zu commands of core %d (row cap %zu, see the "
		    "Engine Summary); rerun with --xlsx_rows all for every row. ",
		    pt->shown, t->count, (int)t->core, pt->shown);
	int m0 = snprintf(note + n, size - (size_t)n,
	                  "Core %d %s at %.0f MHz: cycles in this engine's clock, times in us on "
	                  "the common time axis. Totals above cover %sthe whole core. ",
	                  (int)t->core, xl_engine_sheet_prefix(t->kind), t->freq_mhz,
	                  pt->shown < t->count ? "every command of " : "");
	if (m0 > 0)
		n += m0;
	if (pt->nparts > 1 && n > 0 && (size_t)n < size) {
		const char *next = pt->index + 1 < pt->nparts ? (pt + 1)->name : NULL;
		const char *prev = pt->index ? (pt - 1)->name : NULL;
		int m = snprintf(note + n, size - (size_t)n,
		                 "Part %zu of %zu: Global Idx %zu-%zu of %zu (%u rows per sheet)",
		                 pt->index + 1, pt->nparts, (size_t)tp_global_idx(pt->first),
		                 (size_t)tp_global_idx(pt->first + pt->count - 1), pt->shown,
		                 (unsigned)pl->max_rows);
		if (m > 0 && (size_t)(n + m) < size) {
			n += m;
			if (prev)
				n += snprintf(note + n, size - (size_t)n, "; continued from '%s'",
				              prev);
			if (next && n > 0 && (size_t)n < size)
				n += snprintf(note + n, size - (size_t)n, "; continues on '%s'",
				              next);
			if (n > 0 && (size_t)n < size)
				snprintf(note + n, size - (size_t)n, ".");
		}
	}
}

static void engine_summary_block(struct xl *x, struct xl_sheet *s, const struct tp_track *t,
                                 const struct part *pt, const struct plan *pl)
{
	const struct tp_engine_stats *e = xl_stats_of(x->a, t);
	char note[512];
	if (t->kind == TP_TRACK_TIU)
		tiu_totals(x, s, e);
	else
		dma_totals(x, s, e);
	engine_note(note, sizeof note, t, pt, pl);
	xl_str(x, s, 2, 0, note, pt->shown < t->count ? x->f.cap : x->f.note);
	/* The note is long: do not let it widen column A. */
	if (s->wcap)
		s->width[0] = 0;
	for (uint16_t c = 0; c < s->ncols; c++)
		if (s->width[c] > 16)
			s->width[c] = 16;
}

/* The columns of one engine sheet: the engine's column order, without the layer columns
 * when the profile has no layers. */
struct ecols {
	const char *names[E_NCOLS];
	enum ecol map[E_NCOLS]; /* sheet column -> ecol */
	int16_t pos[E_NCOLS];   /* ecol -> sheet column, -1 when absent */
	size_t n;
};

static void engine_columns(const struct tp_profile *p, int tiu, struct ecols *ec)
{
	const enum ecol *cols = tiu ? tiu_cols : dma_cols;
	size_t ncols =
	    tiu ? sizeof tiu_cols / sizeof *tiu_cols : sizeof dma_cols / sizeof *dma_cols;
	int have_layers = p->num_layers > 0;
	ec->n = 0;
	for (size_t i = 0; i < E_NCOLS; i++)
		ec->pos[i] = -1;
	for (size_t i = 0; i < ncols; i++) {
		if (!have_layers && (cols[i] == E_LAYER_ID || cols[i] == E_LAYER_NAME))
			continue;
		ec->map[ec->n] = cols[i];
		ec->names[ec->n] = cols[i] == E_DEP && tiu ? TP_KEY_TIU_DEP : ecol_name[cols[i]];
		ec->pos[cols[i]] = (int16_t)ec->n;
		ec->n++;
	}
}

/* Argument keys the fixed columns read (0 = absent). */
struct ekeys {
	uint32_t uarch, alg, uops, acyc, bank, init, dtype, dep;
};

/* One command being written: what its cells read. */
struct erow {
	struct xl *x;
	struct xl_sheet *s;
	const struct tp_profile *p;
	const struct tp_track *t;
	const struct ekeys *k;
	const struct tp_slice *sl;
	size_t i;     /* index on the track (Global Idx - 1) */
	uint32_t row; /* sheet row */
	int sys;      /* a system command (no direction, no bandwidth) */
	int costed;   /* cc holds the cost model's figures */
	struct tp_cost cc;
};

/* §5.2: End/CmdId for the first 199 records — the vendor divides by Cmd Id, which starts at 2
 * on a core whose leading send_msg was dropped — else (End[i] - Start[i-199]) / 200. */
static double avg_last_200(const struct tp_track *t, const struct tp_slice *sl, size_t i)
{
	double id = sl->cmd_id ? (double)sl->cmd_id : (double)(i + 1);
	if (i < 199)
		return (double)tp_slice_end_cycle(t, sl) / id;
	return ((double)tp_slice_end_cycle(t, sl) -
	        (double)tp_slice_start_cycle(t, &t->slices[i - 199])) /
	       200.0;
}

/* uArch Rate from the command's Alg Ops / uArch Ops arguments; 0 when it has not both. */
static int uarch_from_ops(const struct erow *r, double *v)
{
	if (!r->k->alg || !r->k->uops)
		return 0;
	const struct tp_arg *ga = tp_args_find(r->p, r->sl->args, r->k->alg);
	const struct tp_arg *gu = tp_args_find(r->p, r->sl->args, r->k->uops);
	double av, uv;
	if (!ga || !gu || !tp_arg_as_double(r->p, ga, &av) || !tp_arg_as_double(r->p, gu, &uv))
		return 0;
	*v = uv > 0 ? av / uv : 0;
	return 1;
}

/* The cost columns (Alg Cycle, Alg Ops, uArch Ops) and ratios (uArch Rate, Bank Conflict
 * Ratio, Initial Cycle Ratio, sophgo-costmodel.md §3): the cost model's figure, else the
 * reader's argument (a ratio as "74.9%" or a percentage number), else for uArch Rate the Alg /
 * uArch Ops arguments, else n/a. */
static void cost_cell(const struct erow *r, uint16_t col, enum ecol e)
{
	struct xl *x = r->x;
	const struct ekeys *k = r->k;
	uint32_t key;
	double v;
	int ratio = 1;
	switch (e) {
	case E_ALG_CYCLE:
		key = k->acyc, v = (double)r->cc.alg_cycle, ratio = 0;
		break;
	case E_ALG_OPS:
		key = k->alg, v = (double)r->cc.alg_ops, ratio = 0;
		break;
	case E_UARCH_OPS:
		key = k->uops, v = (double)r->cc.uarch_ops, ratio = 0;
		break;
	case E_UARCH:
		key = k->uarch, v = r->cc.uarch_rate;
		break;
	case E_BANK:
		key = k->bank, v = r->cc.bank_ratio;
		break;
	default:
		key = k->init, v = r->cc.init_ratio;
		break;
	}
	int ok = r->costed;
	const struct tp_arg *g;
	if (!ok && key && (g = tp_args_find(r->p, r->sl->args, key))) {
		ok = tp_arg_as_double(r->p, g, &v);
		if (ratio)
			v /= 100.0;
	}
	if (!ok && e == E_UARCH)
		ok = uarch_from_ops(r, &v);
	if (ok)
		xl_num(x, r->s, r->row, col, v, ratio ? x->f.pct1 : x->f.cyc);
	else
		xl_str(x, r->s, r->row, col, "n/a", NULL);
}

/* DDR or L2M bandwidth: the command's GB/s when its direction touches that memory, 0 when it
 * does not, blank for a system command. */
static void bw_cell(const struct erow *r, uint16_t col, int touches)
{
	if (r->sys)
		return;
	xl_num(r->x, r->s, r->row, col, touches ? tp_slice_gbps(r->t, r->sl, r->t->freq_mhz) : 0,
	       r->x->f.gbps);
}

/* Layer Id or Layer Name of the command's layer, "-" when it has none. */
static void layer_cell(const struct erow *r, uint16_t col, int name)
{
	const struct tp_profile *p = r->p;
	const struct tp_slice *sl = r->sl;
	struct tp_layer lv;
	if (sl->layer < 0 || (size_t)sl->layer >= p->num_layers)
		xl_str(r->x, r->s, r->row, col, "-", NULL);
	else if (name)
		xl_str(r->x, r->s, r->row, col,
		       tp_str(p, tp_profile_layer(p, (size_t)sl->layer, &lv)->name), NULL);
	else
		xl_num(r->x, r->s, r->row, col, tp_profile_layer(p, (size_t)sl->layer, &lv)->id,
		       r->x->f.cyc);
}

/* Data Type: the decoder's "A -> B" (TIU operand -> result) when it gave one, else the
 * slice's type. */
static void dtype_cell(const struct erow *r, uint16_t col)
{
	const struct tp_arg *g;
	const struct tp_track *t = r->t;
	if (r->k->dtype && (g = tp_args_find(r->p, r->sl->args, r->k->dtype)) &&
	    g->type == TP_ARG_STR)
		xl_str(r->x, r->s, r->row, col, tp_str(r->p, g->v.s), NULL);
	else
		xl_str(r->x, r->s, r->row, col,
		       tp_slice_dtype(t, r->sl) == TP_DT_NONE
		           ? "None"
		           : tp_dtype_name((enum tp_dtype)tp_slice_dtype(t, r->sl)),
		       NULL);
}

static void engine_cell(const struct erow *r, uint16_t col, enum ecol e)
{
	struct xl *x = r->x;
	struct xl_sheet *s = r->s;
	const struct tp_profile *p = r->p;
	const struct tp_track *t = r->t;
	const struct tp_slice *sl = r->sl;
	const struct tp_arg *g;
	uint32_t row = r->row;
	switch (e) {
	case E_ENGINE_ID:
		xl_num(x, s, row, col, engine_id(t->kind), x->f.cyc);
		break;
	case E_CORE_ID:
		xl_num(x, s, row, col, t->core, x->f.cyc);
		break;
	case E_GIDX:
		xl_num(x, s, row, col, (double)tp_global_idx(r->i), x->f.cyc);
		break;
	case E_CMD_ID:
		xl_num(x, s, row, col, sl->cmd_id, x->f.cyc);
		break;
	case E_LAYER_ID:
	case E_LAYER_NAME:
		layer_cell(r, col, e == E_LAYER_NAME);
		break;
	case E_FTYPE:
		xl_str(x, s, row, col, tp_str(p, tp_slice_type(t, sl)), NULL);
		break;
	case E_FNAME:
		xl_str(x, s, row, col, tp_str(p, tp_slice_name(t, sl)), NULL);
		break;
	case E_DMA_SIZE:
		xl_num(x, s, row, col, tp_slice_bytes(t, sl), x->f.cyc);
		break;
	case E_ASIC:
		xl_num(x, s, row, col, sl->cycles, x->f.cyc);
		break;
	case E_START_CYC:
		xl_num(x, s, row, col, (double)tp_slice_start_cycle(t, sl), x->f.cyc);
		break;
	case E_END_CYC:
		xl_num(x, s, row, col, (double)tp_slice_end_cycle(t, sl), x->f.cyc);
		break;
	case E_START_US:
		xl_num(x, s, row, col, xl_ns_to_us(sl->start_ns), x->f.us);
		break;
	case E_END_US:
		xl_num(x, s, row, col, xl_ns_to_us(tp_slice_end(t, sl)), x->f.us);
		break;
	case E_DUR_US:
		xl_num(x, s, row, col, xl_ns_to_us(tp_slice_end(t, sl) - sl->start_ns), x->f.us);
		break;
	case E_AVG200:
		xl_num(x, s, row, col, avg_last_200(t, sl, r->i), x->f.gbps);
		break;
	case E_ALG_CYCLE:
	case E_ALG_OPS:
	case E_UARCH_OPS:
	case E_UARCH:
	case E_BANK:
	case E_INIT:
		cost_cell(r, col, e);
		break;
	case E_STALL:
		xl_num(x, s, row, col, tp_slice_stall(t, sl), x->f.cyc);
		break;
	case E_DDR_BW:
		bw_cell(r, col, tp_dir_touches_ddr((enum tp_dir)tp_slice_dir(t, sl)));
		break;
	case E_L2_BW:
		bw_cell(r, col, tp_dir_touches_l2((enum tp_dir)tp_slice_dir(t, sl)));
		break;
	case E_DIR:
		xl_str(x, s, row, col, r->sys ? "-" : tp_dir_name((enum tp_dir)tp_slice_dir(t, sl)),
		       NULL);
		break;
	case E_DTYPE:
		dtype_cell(r, col);
		break;
	case E_DEP:
		/* The register when the decoder has it; else the reader's dependency; blank for a
		 * command without one (not a made-up 0). */
		if (r->k->dep && (g = tp_args_find(p, sl->args, r->k->dep)))
			xl_write_arg(x, s, row, col, p, g);
		else if (sl->dep_id)
			xl_num(x, s, row, col, sl->dep_id, x->f.cyc);
		break;
	default:
		break;
	}
}

/* Red below half and yellow below three quarters of the chip's peak bandwidth on the
 * bandwidth column `bwcol` (a command that moved data), and a red Asic Cycle when such a
 * command is also shorter than 1000 cycles ("too little data moved"). */
static void bw_highlights(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, int bwcol,
                          int asic_col, double maxbw)
{
	char f[160], c1[4], c2[4];
	xl_col_name((uint16_t)bwcol, c1);
	snprintf(f, sizeof f, "=AND(ISNUMBER(%s%u),%s%u>0,%s%u<%.4f)", c1, r0 + 1, c1, r0 + 1, c1,
	         r0 + 1, 0.5 * maxbw);
	xl_cond_formula(x, ws, r0, r1, (uint16_t)bwcol, f, x->f.red);
	snprintf(f, sizeof f, "=AND(ISNUMBER(%s%u),%s%u>0,%s%u<%.4f)", c1, r0 + 1, c1, r0 + 1, c1,
	         r0 + 1, 0.75 * maxbw);
	xl_cond_formula(x, ws, r0, r1, (uint16_t)bwcol, f, x->f.yellow);
	if (asic_col >= 0) {
		xl_col_name((uint16_t)asic_col, c2);
		snprintf(f, sizeof f, "=AND(ISNUMBER($%s%u),$%s%u>0,$%s%u<%.4f,%s%u<1000)", c1,
		         r0 + 1, c1, r0 + 1, c1, r0 + 1, 0.75 * maxbw, c2, r0 + 1);
		xl_cond_formula(x, ws, r0, r1, (uint16_t)asic_col, f, x->f.red);
	}
}

/* The highlights of sophgo-analysis.md §5.2 / §5.3 on data rows [r0, r1]. */
static void engine_highlights(struct xl *x, lxw_worksheet *ws, const int16_t *pos, uint32_t r0,
                              uint32_t r1)
{
	char f[160], c1[4];
	if (pos[E_UARCH] >= 0) {
		xl_cond_cell(x, ws, r0, r1, (uint16_t)pos[E_UARCH],
		             LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.5, x->f.red);
		xl_cond_cell(x, ws, r0, r1, (uint16_t)pos[E_UARCH],
		             LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.75, x->f.yellow);
	}
	/* Initial Cycle Ratio > 1 % and Bank Conflict Ratio > 0 yellow (§5.2); numbers only,
	 * since Excel ranks the text "n/a" above every number. */
	static const struct {
		enum ecol col;
		double above;
	} ratio_rules[] = {{E_INIT, 0.01}, {E_BANK, 0}};
	for (size_t k = 0; k < 2; k++) {
		int pc = pos[ratio_rules[k].col];
		if (pc < 0)
			continue;
		xl_col_name((uint16_t)pc, c1);
		snprintf(f, sizeof f, "=AND(ISNUMBER(%s%u),%s%u>%g)", c1, r0 + 1, c1, r0 + 1,
		         ratio_rules[k].above);
		xl_cond_formula(x, ws, r0, r1, (uint16_t)pc, f, x->f.yellow);
	}
	if (pos[E_AVG200] >= 0)
		xl_cond_cell(x, ws, r0, r1, (uint16_t)pos[E_AVG200],
		             LXW_CONDITIONAL_CRITERIA_LESS_THAN, 200, x->f.red);
	if (pos[E_DTYPE] >= 0)
		xl_cond_text(x, ws, r0, r1, (uint16_t)pos[E_DTYPE], "FP32", x->f.red);
	if (pos[E_STALL] >= 0)
		xl_cond_cell(x, ws, r0, r1, (uint16_t)pos[E_STALL],
		             LXW_CONDITIONAL_CRITERIA_GREATER_THAN, 0, x->f.red);
	double maxbw[2] = {xl_ddr_max_bw(x->p), xl_l2_max_bw(x->p)};
	int bwcol[2] = {pos[E_DDR_BW], pos[E_L2_BW]};
	for (int b = 0; b < 2; b++)
		if (bwcol[b] >= 0 && maxbw[b] > 0)
			bw_highlights(x, ws, r0, r1, bwcol[b], pos[E_ASIC], maxbw[b]);
}

/* What an engine sheet's data rows read, kept for stream.c's parts. */
struct eng_rows {
	struct xl_argrows b;
	int tiu;
	struct ecols ec;
	struct ekeys k;
};

/* Data rows [a, b) of an engine sheet part. */
static void eng_rows_emit(struct xl *x, struct xl_sheet *s, const void *ctx, size_t a, size_t b)
{
	const struct eng_rows *er = ctx;
	const struct tp_track *t = er->b.t;
	struct erow r = {.x = x, .s = s, .p = x->p, .t = t, .k = &er->k};
	for (size_t j = a; j < b && !x->oom; j++) {
		size_t i = er->b.first + j;
		r.sl = &t->slices[i];
		r.i = i;
		r.row = TP_XLSX_DATA_ROW + (uint32_t)j;
		r.sys = tp_slice_kind(t, r.sl) != TP_CMD_NORMAL;
		r.costed = er->tiu && tp_track_get_cost(t, i, &r.cc);
		for (size_t c = 0; c < er->ec.n; c++)
			engine_cell(&r, (uint16_t)c, er->ec.map[c]);
		xl_write_args(x, s, r.row, x->p, r.sl, &er->b.ac, er->b.other_col);
	}
}

int xl_write_engine_sheet(struct xl *x, const struct part *pt, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	const struct tp_track *t = &p->tracks[pt->track];
	int tiu = t->kind == TP_TRACK_TIU;
	struct xl_sheet s = {.ws = pt->ws};
	struct eng_rows *er = xl_argrows_new(sizeof *er, t, pt->first);
	if (!er)
		return TP_ENOMEM;
	er->tiu = tiu;
	engine_columns(p, tiu, &er->ec);
	/* Keys that duplicate a fixed column (readers may store them as arguments too). */
	const char *fixed[E_NCOLS + 8];
	size_t nfixed = 0;
	for (size_t i = 0; i < er->ec.n; i++)
		fixed[nfixed++] = er->ec.names[i];
	fixed[nfixed++] = TP_KEY_TIU_DEP;
	fixed[nfixed++] = TP_KEY_DMA_DEP;
	fixed[nfixed++] = TP_KEY_UARCH_RATE;
	fixed[nfixed++] = TP_KEY_DATA_TYPE;
	int st = xl_collect_args(p, t, pt->first, pt->count, fixed, nfixed, (uint16_t)er->ec.n,
	                         &er->b.ac);
	if (st != TP_OK) {
		xl_argrows_free(er);
		return st;
	}
	er->b.other_col = (uint16_t)(er->ec.n + er->b.ac.n);
	uint16_t last_col = (uint16_t)(er->b.other_col - (er->b.ac.other ? 0 : 1));
	int16_t pos[E_NCOLS];
	memcpy(pos, er->ec.pos, sizeof pos);

	engine_summary_block(x, &s, t, pt, pl);
	uint32_t hr = TP_XLSX_HEADER_ROW;
	xl_args_header(x, &s, hr, er->ec.names, er->ec.n, &er->b.ac, er->b.other_col);
	er->k = (struct ekeys){
	    .uarch = tp_profile_find_str(p, TP_KEY_UARCH_RATE),
	    .alg = tp_profile_find_str(p, TP_KEY_ALG_OPS),
	    .uops = tp_profile_find_str(p, TP_KEY_UARCH_OPS),
	    .acyc = tp_profile_find_str(p, TP_KEY_ALG_CYCLE),
	    .bank = tp_profile_find_str(p, TP_KEY_BANK_RATIO),
	    .init = tp_profile_find_str(p, TP_KEY_INIT_RATIO),
	    .dtype = tp_profile_find_str(p, TP_KEY_DATA_TYPE),
	    .dep = tp_profile_find_str(p, tiu ? TP_KEY_TIU_DEP : TP_KEY_DMA_DEP),
	};
	st = xl_defer_rows(x, &s, TP_XLSX_DATA_ROW, pt->count, eng_rows_emit, er, xl_argrows_free);
	if (st != TP_OK)
		return st;

	uint32_t r0 = TP_XLSX_DATA_ROW, r1 = TP_XLSX_DATA_ROW + (uint32_t)pt->count - 1;
	worksheet_freeze_panes(pt->ws, TP_XLSX_DATA_ROW, 0);
	xl_check(x, worksheet_autofilter(pt->ws, hr, 0, pt->count ? r1 : hr, last_col));
	worksheet_set_tab_color(pt->ws, t->kind == TP_TRACK_TIU    ? 0x008000
	                                : t->kind == TP_TRACK_GDMA ? 0xFFA500
	                                : t->kind == TP_TRACK_SDMA ? 0xD0CECE
	                                                           : 0xC0504D);
	if (pt->count)
		engine_highlights(x, pt->ws, pos, r0, r1);
	return x->oom ? TP_ENOMEM : TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Event sheets (host threads, host lanes, firmware, layer tracks)                           */
/* ---------------------------------------------------------------------------------------- */

void xl_event_cells(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t c0,
                    const struct tp_track *t, size_t i)
{
	const struct tp_slice *sl = &t->slices[i];
	xl_num(x, s, row, c0, (double)tp_global_idx(i), x->f.cyc);
	xl_num(x, s, row, (uint16_t)(c0 + 1), xl_ns_to_us(sl->start_ns), x->f.us);
	xl_num(x, s, row, (uint16_t)(c0 + 2), xl_ns_to_us(tp_slice_end(t, sl)), x->f.us);
	xl_num(x, s, row, (uint16_t)(c0 + 3), xl_ns_to_us(tp_slice_end(t, sl) - sl->start_ns),
	       x->f.us);
	xl_num(x, s, row, (uint16_t)(c0 + 4), tp_slice_depth(t, sl), x->f.cyc);
	xl_str(x, s, row, (uint16_t)(c0 + 5), tp_str(x->p, tp_slice_type(t, sl)), NULL);
	xl_str(x, s, row, (uint16_t)(c0 + 6), tp_str(x->p, tp_slice_name(t, sl)), NULL);
}

/* What an event sheet's data rows read, kept for stream.c's parts. */
struct ev_rows {
	struct xl_argrows b;
	int cyc; /* the Cmd Id / cycle columns */
};

static void ev_rows_emit(struct xl *x, struct xl_sheet *s, const void *ctx, size_t a, size_t b)
{
	const struct ev_rows *er = ctx;
	const struct tp_profile *p = x->p;
	const struct tp_track *t = er->b.t;
	for (size_t j = a; j < b && !x->oom; j++) {
		size_t i = er->b.first + j;
		const struct tp_slice *sl = &t->slices[i];
		uint32_t row = TP_XLSX_DATA_ROW + (uint32_t)j;
		xl_event_cells(x, s, row, 0, t, i);
		if (er->cyc) {
			xl_num(x, s, row, 7, sl->cmd_id, x->f.cyc);
			xl_num(x, s, row, 8, (double)tp_slice_start_cycle(t, sl), x->f.cyc);
			xl_num(x, s, row, 9, sl->cycles, x->f.cyc);
		}
		xl_write_args(x, s, row, p, sl, &er->b.ac, er->b.other_col);
	}
}

/* The note on row 0 of an event sheet. */
static void events_note(char *note, size_t size, const struct tp_profile *p,
                        const struct tp_track *t, const struct part *pt)
{
	const char *kind = tp_track_kind_name((enum tp_track_kind)t->kind);
	int n = snprintf(note, size, "%s track '%s'", kind, tp_str(p, t->name));
	if (t->kind == TP_TRACK_THREAD && n > 0 && (size_t)n < size)
		n += snprintf(note + n, size - (size_t)n, " (tid %" PRId64 ")", t->tid);
	if (t->dropped && n > 0 && (size_t)n < size)
		n += snprintf(note + n, size - (size_t)n, "; the source lost %" PRIu64 " events",
		              t->dropped);
	if (pt->nparts > 1 && n > 0 && (size_t)n < size)
		n += snprintf(note + n, size - (size_t)n, "; part %zu of %zu (Global Idx %zu-%zu)",
		              pt->index + 1, pt->nparts, (size_t)tp_global_idx(pt->first),
		              (size_t)tp_global_idx(pt->first + pt->count - 1));
	if (pt->shown < t->count && n > 0 && (size_t)n < size)
		snprintf(note + n, size - (size_t)n,
		         "; showing the first %zu of %zu records (row cap %zu); rerun with "
		         "--xlsx_rows all for every row",
		         pt->shown, t->count, pt->shown);
}

int xl_write_events_sheet(struct xl *x, const struct part *pt)
{
	const struct tp_profile *p = x->p;
	const struct tp_track *t = &p->tracks[pt->track];
	struct xl_sheet s = {.ws = pt->ws};
	struct ev_rows *er = xl_argrows_new(sizeof *er, t, pt->first);
	if (!er)
		return TP_ENOMEM;
	for (size_t i = pt->first; i < pt->first + pt->count && !er->cyc; i++)
		er->cyc = t->slices[i].cycles != 0 || t->slices[i].cmd_id != 0;
	/* The last three columns only when some record has cycles or a command id. */
	static const char *const names[] = {
	    "Global Idx", "Start Time(us)", "End Time(us)", "Duration(us)", "Depth",
	    "Category",   "Name",           "Cmd Id",       "Start Cycle",  "Asic Cycle"};
	size_t nc = er->cyc ? 10 : 7;
	int st = xl_collect_args(p, t, pt->first, pt->count, names, nc, (uint16_t)nc, &er->b.ac);
	if (st != TP_OK) {
		xl_argrows_free(er);
		return st;
	}
	er->b.other_col = (uint16_t)(nc + er->b.ac.n);
	uint16_t last_col = (uint16_t)(er->b.other_col - (er->b.ac.other ? 0 : 1));
	char note[400];
	events_note(note, sizeof note, p, t, pt);
	xl_str(x, &s, 0, 0, note, pt->shown < t->count ? x->f.cap : x->f.bold);
	xl_num(x, &s, 1, 0, (double)t->count, x->f.cyc);
	xl_str(x, &s, 1, 1, "records", NULL);
	if (s.wcap)
		s.width[0] = 10;
	uint32_t hr = TP_XLSX_HEADER_ROW;
	xl_args_header(x, &s, hr, names, nc, &er->b.ac, er->b.other_col);
	st = xl_defer_rows(x, &s, TP_XLSX_DATA_ROW, pt->count, ev_rows_emit, er, xl_argrows_free);
	if (st != TP_OK)
		return st;
	worksheet_freeze_panes(pt->ws, TP_XLSX_DATA_ROW, 0);
	xl_check(x, worksheet_autofilter(pt->ws, hr, 0, hr + (uint32_t)pt->count, last_col));
	return x->oom ? TP_ENOMEM : TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Longest commands (only when an engine sheet is cut)                                       */
/* ---------------------------------------------------------------------------------------- */

/* Orders by duration, longest first, then by Global Idx. */
static int longer(const struct tp_track *t, size_t a, size_t b)
{
	int64_t da = tp_slice_end(t, &t->slices[a]) - t->slices[a].start_ns;
	int64_t db = tp_slice_end(t, &t->slices[b]) - t->slices[b].start_ns;
	return da != db ? da > db : a < b;
}

/* A track's commands are searched for the longest in up to XL_LONGEST_SPANS spans of at least
 * XL_LONGEST_MIN_SPAN commands (fixed by the data), on --jobs threads. Few spans: each one
 * fills its own list of XL_LONGEST, which costs about as much as scanning thousands. */
#define XL_LONGEST_SPANS 8u
#define XL_LONGEST_MIN_SPAN 128u

static size_t longest_span_len(size_t count)
{
	size_t len = (count + XL_LONGEST_SPANS - 1) / XL_LONGEST_SPANS;
	return len < XL_LONGEST_MIN_SPAN ? XL_LONGEST_MIN_SPAN : len;
}

/* Keeps command i in out[0..*h) (at most k, longest first) when it is longer than the last one
 * kept: the common case is one comparison; when full, the last one kept drops out (at worst,
 * durations growing along the track, each command moves k entries). */
static void keep_if_longer(const struct tp_track *t, size_t k, size_t i, size_t *out, size_t *h)
{
	if (*h == k && !longer(t, i, out[k - 1]))
		return;
	size_t j = *h < k ? (*h)++ : k - 1;
	for (; j && longer(t, i, out[j - 1]); j--)
		out[j] = out[j - 1];
	out[j] = i;
}

/* Whether plan part pt's track is listed on the Longest commands sheet: its first engine
 * sheet, cut. */
static int longest_wanted(const struct tp_profile *p, const struct part *pt)
{
	return pt->kind == PK_ENGINE && pt->index == 0 && pt->shown < p->tracks[pt->track].count;
}

/* A span of one track's commands and its XL_LONGEST longest. */
struct lspan {
	size_t part; /* plan part */
	size_t lo, hi;
	size_t top[XL_LONGEST], n;
};

struct lsearch {
	const struct tp_profile *p;
	const struct plan *pl;
	struct lspan *v;
};

static void longest_span(void *arg, size_t k)
{
	struct lsearch *ls = arg;
	/* On a copy, stored once: the spans sit side by side, and the next one's list changes
	 * on another thread. */
	struct lspan span = ls->v[k], *sp = &span;
	const struct tp_track *t = &ls->p->tracks[ls->pl->v[sp->part].track];
	sp->n = 0;
	for (size_t i = sp->lo; i < sp->hi; i++)
		keep_if_longer(t, XL_LONGEST, i, sp->top, &sp->n);
	ls->v[k] = span;
}

/* The XL_LONGEST longest commands of every listed track into top[i * XL_LONGEST ..] and
 * ntop[i] (i: its plan part), longest first. The spans are searched on --jobs threads and their
 * results merged in span order: the order `longer` is total, so these are the commands, in the
 * order, of one pass over the track. */
static int longest_all(struct xl *x, const struct plan *pl, size_t *top, size_t *ntop)
{
	const struct tp_profile *p = x->p;
	size_t n = 0;
	for (size_t i = 0; i < pl->n; i++)
		if (longest_wanted(p, &pl->v[i])) {
			size_t count = p->tracks[pl->v[i].track].count,
			       len = longest_span_len(count);
			n += (count + len - 1) / len;
		}
	struct lsearch ls = {.p = p, .pl = pl, .v = tp_calloc(n ? n : 1, sizeof *ls.v)};
	if (!ls.v)
		return TP_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < pl->n; i++) {
		if (!longest_wanted(p, &pl->v[i]))
			continue;
		size_t count = p->tracks[pl->v[i].track].count, len = longest_span_len(count);
		for (size_t lo = 0; lo < count; lo += len, k++)
			ls.v[k] = (struct lspan){
			    .part = i, .lo = lo, .hi = count - lo < len ? count : lo + len};
	}
	tp_par_run(x->jobs, n, longest_span, &ls);
	for (size_t j = 0; j < n; j++) {
		const struct lspan *sp = &ls.v[j];
		const struct tp_track *t = &p->tracks[pl->v[sp->part].track];
		for (size_t r = 0; r < sp->n; r++)
			keep_if_longer(t, XL_LONGEST, sp->top[r], &top[sp->part * XL_LONGEST],
			               &ntop[sp->part]);
	}
	tp_free(ls.v);
	return TP_OK;
}

void xl_write_longest(struct xl *x, lxw_worksheet *ws, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	struct xl_sheet s = {.ws = ws};
	char buf[400];
	int layers = p->num_layers > 0;
	xl_str(x, &s, 0, 0, "Longest commands of each engine and core", x->f.bold);
	snprintf(buf, sizeof buf,
	         "The %d longest commands (by duration) of every engine and core whose sheet is "
	         "cut at %" PRIu64 " rows (--xlsx_rows), chosen among ALL its commands; "
	         "'On Sheet' names the sheet that lists the command, '-' when it is past the cut "
	         "(rerun with --xlsx_rows all to see it there).",
	         XL_LONGEST, pl->row_cap);
	xl_str(x, &s, 1, 0, buf, x->f.cap);
	if (s.wcap)
		s.width[0] = 0;
	static const char *const all[] = {"Rank",          "Engine",     "Core Id",
	                                  "Global Idx",    "Cmd Id",     "Function Type",
	                                  "Function Name", "Layer Name", "Start Time(us)",
	                                  "Duration(us)",  "Asic Cycle", "Share of Engine Busy",
	                                  "On Sheet"};
	const char *h[sizeof all / sizeof *all];
	size_t nh = 0;
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		if (layers || strcmp(all[i], "Layer Name") != 0)
			h[nh++] = all[i];
	uint32_t hr = TP_XLSX_HEADER_ROW, row = TP_XLSX_DATA_ROW;
	xl_header_row(x, &s, hr, h, nh);
	size_t *top = tp_calloc(pl->n ? pl->n * XL_LONGEST : 1, sizeof *top);
	size_t *ntop = tp_calloc(pl->n ? pl->n : 1, sizeof *ntop);
	if (!top || !ntop || longest_all(x, pl, top, ntop) != TP_OK) {
		tp_free(top);
		tp_free(ntop);
		x->oom = 1;
		xl_sheet_done(x, &s); /* frees the column widths the header rows grew */
		return;
	}
	for (size_t i = 0; i < pl->n; i++) {
		const struct part *pt = &pl->v[i];
		if (!longest_wanted(p, pt))
			continue;
		const struct tp_track *t = &p->tracks[pt->track];
		const struct tp_engine_stats *e = xl_stats_of(x->a, t);
		for (size_t r = 0; r < ntop[i]; r++, row++) {
			size_t gi = top[i * XL_LONGEST + r];
			const struct tp_slice *sl = &t->slices[gi];
			struct tp_layer lv;
			uint16_t c = 0;
			xl_num(x, &s, row, c++, (double)(r + 1), x->f.cyc);
			xl_str(x, &s, row, c++, xl_engine_sheet_prefix(t->kind), NULL);
			xl_num(x, &s, row, c++, t->core, x->f.cyc);
			xl_num(x, &s, row, c++, (double)tp_global_idx(gi), x->f.cyc);
			xl_num(x, &s, row, c++, sl->cmd_id, x->f.cyc);
			xl_str(x, &s, row, c++, tp_str(p, tp_slice_type(t, sl)), NULL);
			xl_str(x, &s, row, c++, tp_str(p, tp_slice_name(t, sl)), NULL);
			if (layers)
				xl_str(
				    x, &s, row, c++,
				    sl->layer >= 0 && (size_t)sl->layer < p->num_layers
				        ? tp_str(p,
				                 tp_profile_layer(p, (size_t)sl->layer, &lv)->name)
				        : "-",
				    NULL);
			xl_num(x, &s, row, c++, xl_ns_to_us(sl->start_ns), x->f.us);
			xl_num(x, &s, row, c++, xl_ns_to_us(tp_slice_end(t, sl) - sl->start_ns),
			       x->f.us);
			xl_num(x, &s, row, c++, sl->cycles, x->f.cyc);
			xl_num(x, &s, row, c++,
			       e->busy_ns > 0 ? (double)(tp_slice_end(t, sl) - sl->start_ns) /
			                            (double)e->busy_ns
			                      : 0,
			       x->f.pct);
			const char *on = "-";
			for (size_t k = i; k < i + pt->nparts && k < pl->n; k++)
				if (gi >= pl->v[k].first && gi < pl->v[k].first + pl->v[k].count)
					on = pl->v[k].name;
			xl_str(x, &s, row, c++, on, NULL);
		}
		if (x->err != LXW_NO_ERROR || x->oom)
			break;
	}
	tp_free(top);
	tp_free(ntop);
	worksheet_freeze_panes(ws, TP_XLSX_DATA_ROW, 0);
	xl_check(x, worksheet_autofilter(ws, hr, 0, row > TP_XLSX_DATA_ROW ? row - 1 : hr,
	                                 (uint16_t)(nh - 1)));
	xl_sheet_done(x, &s);
}
