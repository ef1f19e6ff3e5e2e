/*
 * summary.c — the Engine Summary sheet: one row per core and an Overall row as the vendor's
 * PerfDoc computes it (sophgo-analysis.md §5.4), the notes on units and cuts, the profile's
 * notes and metadata, the per-Function-Type TIU table of each core, the table of every sheet
 * with links, and the utilisation chart.
 *
 * Owns nothing beyond one call.
 */
#include "writers/xlsx/xlsx_int.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

enum sval { SV_PCT, SV_US, SV_CYC, SV_GBPS, SV_BYTES, SV_US_TAG };

struct scol {
	char name[48];
	int eng;  /* engine index or -1 */
	int what; /* field selector */
	enum sval fmt;
};

enum swhat {
	W_TIU_RATIO,
	W_PAR,
	W_CONC,
	W_COMPUTE,
	W_TOTAL_US,
	W_DDR_TOTAL,
	W_CYC,
	W_BUSY_US,
	W_IDLE_US,
	W_UTIL,
	W_UARCH,
	W_ALG_CYCLE,
	W_ALG_OPS,
	W_UARCH_OPS,
	W_MEAN_PAR,
	W_DDR_BYTES,
	W_L2_BYTES,
	W_DDR_BW,
	W_L2_BW,
	W_BURST,
	W_DDR_RD,
	W_DDR_WR,
	W_STALL,
	W_PD_PAR,
	W_PD_CONC
};

static double ddr_total_gbps(const struct tp_core_stats *c, int64_t total_ns)
{
	uint64_t b = 0;
	for (int e = TP_TRACK_GDMA; e < TP_ENGINES; e++)
		b += c->eng[e].ddr_bytes;
	return total_ns > 0 ? (double)b / (double)total_ns : 0;
}

/* The Overall row's cycle cells: the busiest core's working cycles (alg = 0) or Alg Cycles
 * (alg = 1) of engine e, shown as time in µs with a "(us)" tag, as PerfDoc's Engine Summary
 * (sophgo-analysis.md §5.4): cycles at the engine's clock rounded to the ns (96730 cycles at
 * 900 MHz are 107.478 us, not the truncated 107.477). */
static double max_core_us(const struct tp_profile *p, const struct tp_analysis *a, int e, int alg)
{
	uint64_t mx = 0;
	int64_t mx_ns = 0;
	for (size_t i = 0; i < a->num_cores; i++) {
		const struct tp_engine_stats *s = &a->cores[i].eng[e];
		uint64_t c = alg ? s->alg_cycle : s->working_cycle;
		if (c > mx)
			mx = c;
		if (s->working_ns > mx_ns)
			mx_ns = s->working_ns;
	}
	double mhz = e == TP_TRACK_TIU ? p->tiu_freq_mhz : p->gdma_freq_mhz;
	if (!(mhz > 0))
		return alg ? (double)mx : xl_ns_to_us(mx_ns);
	return xl_ns_to_us((int64_t)llround((double)mx * 1000.0 / mhz));
}

/* A cell value; returns 0 for "n/a", and sets *f to a cell-specific format (or NULL). */
static int scol_value(const struct scol *c, const struct tp_core_stats *cs,
                      const struct tp_profile *p, const struct tp_analysis *a, int overall,
                      double *v, enum sval *f)
{
	const struct tp_engine_stats *e = c->eng >= 0 ? &cs->eng[c->eng] : NULL;
	double rate;
	*f = c->fmt;
	switch ((enum swhat)c->what) {
	case W_TIU_RATIO:
		/* PerfDoc Overall: the busiest core's TIU time / total time. */
		*v = overall ? cs->tiu_working_ratio_max : cs->tiu_working_ratio;
		return 1;
	case W_MEAN_PAR:
		*v = overall ? cs->mean_parallelism : cs->parallelism;
		return 1;
	case W_PAR:
		*v = cs->parallelism;
		return 1;
	case W_CONC:
		*v = cs->concurrency;
		return 1;
	case W_COMPUTE:
		*v = cs->compute_share;
		return 1;
	case W_TOTAL_US:
		*v = xl_ns_to_us(a->total_time_ns);
		return 1;
	case W_DDR_TOTAL:
		/* §4.4 "total DDR BW": every DMA engine's DDR bytes over the total time (the
		 * Overall row adds all cores: the chip's aggregate). */
		*v = ddr_total_gbps(cs, a->total_time_ns);
		return 1;
	case W_CYC:
		if (overall) {
			*v = max_core_us(p, a, c->eng, 0);
			*f = SV_US_TAG;
			return 1;
		}
		*v = (double)e->working_cycle;
		return 1;
	case W_BUSY_US:
		*v = xl_ns_to_us(e->busy_ns);
		return 1;
	case W_IDLE_US:
		*v = xl_ns_to_us(e->idle_ns);
		return 1;
	case W_UTIL:
		*v = e->utilization;
		return 1;
	case W_UARCH:
		if (!tp_uarch_rate(e, &rate))
			return 0;
		*v = rate;
		return 1;
	case W_ALG_CYCLE:
	case W_ALG_OPS:
	case W_UARCH_OPS:
		if (!tp_uarch_rate(e, &rate))
			return 0;
		if (overall && c->what == W_ALG_CYCLE) { /* in µs like the row's other cycles */
			*v = max_core_us(p, a, c->eng, 1);
			*f = SV_US_TAG;
			return 1;
		}
		*v = (double)(c->what == W_ALG_CYCLE ? e->alg_cycle
		              : c->what == W_ALG_OPS ? e->alg_ops
		                                     : e->uarch_ops);
		return 1;
	case W_DDR_BYTES:
		*v = (double)e->ddr_bytes;
		return 1;
	case W_L2_BYTES:
		*v = (double)e->l2_bytes;
		return 1;
	case W_DDR_BW:
		*v = e->ddr_avg_gbps;
		return 1;
	case W_L2_BW:
		*v = e->l2_avg_gbps;
		return 1;
	case W_BURST:
		*v = e->ddr_avg_burst;
		return 1;
	case W_DDR_RD:
		*v = e->ddr_read_gbps;
		return 1;
	case W_DDR_WR:
		*v = e->ddr_write_gbps;
		return 1;
	case W_STALL:
		*v = (double)e->stall_cycle;
		return 1;
	case W_PD_PAR:
		if (overall)
			return 0;
		*v = cs->perfdoc_parallelism;
		return 1;
	case W_PD_CONC:
		if (overall)
			return 0;
		*v = cs->perfdoc_concurrency;
		return 1;
	}
	return 0;
}

/* Adds a column named `name` (when there is room). */
static void add_col(struct scol *cols, size_t *n, size_t max, const char *name, int eng, int what,
                    enum sval fmt)
{
	if (*n >= max)
		return;
	snprintf(cols[*n].name, sizeof cols[*n].name, "%s", name);
	cols[*n].eng = eng;
	cols[*n].what = what;
	cols[*n].fmt = fmt;
	(*n)++;
}

/* A column of every present engine: its name is `name` with the engine's prefix. */
struct ecol_def {
	const char *name; /* printf format with one %s */
	int cap;          /* prefix "Tiu" (1) or "tiu" (0) */
	int what;
	enum sval fmt;
};

static const struct ecol_def every_engine[] = {
    {"total%sCycle", 1, W_CYC, SV_CYC},
    {"%sBusy(us)", 0, W_BUSY_US, SV_US},
    {"%sIdle(us)", 0, W_IDLE_US, SV_US},
    {"%sUtilisation", 0, W_UTIL, SV_PCT},
};
static const struct ecol_def tiu_only[] = {
    {"totalAlgCycle", 0, W_ALG_CYCLE, SV_CYC},
    {"totalAlgOps", 0, W_ALG_OPS, SV_CYC},
    {"totalUArchOps", 0, W_UARCH_OPS, SV_CYC},
    {"uArchURate", 0, W_UARCH, SV_PCT},
};
static const struct ecol_def dma_only[] = {
    {"%sDdrDataSize(B)", 0, W_DDR_BYTES, SV_BYTES},
    {"%sL2DataSize(B)", 0, W_L2_BYTES, SV_BYTES},
    {"%sDdrAvgBandwidth(GB/s)", 0, W_DDR_BW, SV_GBPS},
    {"%sL2AvgBandwidth(GB/s)", 0, W_L2_BW, SV_GBPS},
    {"%sAvgDdrBurstLength", 0, W_BURST, SV_GBPS},
    {"%sDdrReadBandwidth(GB/s)", 0, W_DDR_RD, SV_GBPS},
    {"%sDdrWriteBandwidth(GB/s)", 0, W_DDR_WR, SV_GBPS},
    {"%sStallCycle", 0, W_STALL, SV_CYC},
};

static void add_engine_cols(struct scol *cols, size_t *n, size_t max, int e,
                            const struct ecol_def *defs, size_t ndefs)
{
	static const char *const pre[TP_ENGINES] = {"Tiu", "Gdma", "Sdma", "Cdma"};
	static const char *const low[TP_ENGINES] = {"tiu", "gdma", "sdma", "cdma"};
	char b[48];
	for (size_t i = 0; i < ndefs; i++) {
		snprintf(b, sizeof b, defs[i].name, defs[i].cap ? pre[e] : low[e]);
		add_col(cols, n, max, b, e, defs[i].what, defs[i].fmt);
	}
}

static size_t summary_columns(const struct tp_analysis *a, struct scol *cols, size_t max)
{
	size_t n = 0;
	add_col(cols, &n, max, "TiuWorkingRatio", -1, W_TIU_RATIO, SV_PCT);
	add_col(cols, &n, max, "Parallelism", -1, W_PAR, SV_PCT);
	add_col(cols, &n, max, "MeanCoreParallelism", -1, W_MEAN_PAR, SV_PCT);
	add_col(cols, &n, max, "Concurrency", -1, W_CONC, SV_PCT);
	add_col(cols, &n, max, "ComputeShare", -1, W_COMPUTE, SV_PCT);
	add_col(cols, &n, max, "totalTime(us)", -1, W_TOTAL_US, SV_US);
	add_col(cols, &n, max, "ddrTotalBandwidth(GB/s)", -1, W_DDR_TOTAL, SV_GBPS);
	for (int e = 0; e < TP_ENGINES; e++) {
		if (!a->overall.eng[e].present)
			continue;
		add_engine_cols(cols, &n, max, e, every_engine,
		                sizeof every_engine / sizeof *every_engine);
		if (e == TP_TRACK_TIU)
			add_engine_cols(cols, &n, max, e, tiu_only,
			                sizeof tiu_only / sizeof *tiu_only);
		else
			add_engine_cols(cols, &n, max, e, dma_only,
			                sizeof dma_only / sizeof *dma_only);
	}
	add_col(cols, &n, max, "PerfDocParallelism", -1, W_PD_PAR, SV_PCT);
	add_col(cols, &n, max, "PerfDocConcurrency", -1, W_PD_CONC, SV_PCT);
	return n;
}

static lxw_format *sval_fmt(struct xl *x, enum sval f)
{
	switch (f) {
	case SV_PCT:
		return x->f.pct;
	case SV_US:
		return x->f.us;
	case SV_GBPS:
		return x->f.gbps;
	case SV_US_TAG:
		return x->f.us_tag;
	default:
		return x->f.cyc;
	}
}

/* The per-Function-Type TIU table of one core (PerfDoc TIU_c, sophgo-costmodel.md §4):
 * ratios against the core's totals; Asic Cycle includes wait_msg, its ratio's denominator
 * (totalTiuCycle) does not. Returns the next free row. */
static uint32_t ftype_table(struct xl *x, struct xl_sheet *s, uint32_t row,
                            const struct tp_core_stats *c, const char *title)
{
	const struct tp_profile *p = x->p;
	const struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU];
	double rate;
	int cost = tp_uarch_rate(tiu, &rate);
	xl_str(x, s, row++, 0, title, x->f.bold);
	static const char *const h[] = {"Function Type", "Instr Num",       "Alg Ops",
	                                "Alg Ops Ratio", "Alg Cycle",       "Alg Cycle Ratio",
	                                "uArch Ops",     "uArch URate",     "uArch Ops Ratio",
	                                "Asic Cycle",    "Asic Cycle Ratio"};
	xl_header_row(x, s, row++, h, sizeof h / sizeof *h);
	for (size_t i = 0; i <= c->num_ftypes; i++, row++) {
		int total = i == c->num_ftypes;
		const struct tp_ftype_stats f = total ? c->ftype_total : c->ftypes[i];
		xl_str(x, s, row, 0, total ? "Overall" : tp_str(p, f.type),
		       total ? x->f.bold : NULL);
		xl_num(x, s, row, 1, (double)f.instr, x->f.cyc);
		if (cost) {
			xl_num(x, s, row, 2, (double)f.alg_ops, x->f.cyc);
			xl_num(x, s, row, 3,
			       tiu->alg_ops ? (double)f.alg_ops / (double)tiu->alg_ops : 0,
			       x->f.pct);
			xl_num(x, s, row, 4, (double)f.alg_cycle, x->f.cyc);
			xl_num(x, s, row, 5,
			       tiu->alg_cycle ? (double)f.alg_cycle / (double)tiu->alg_cycle : 0,
			       x->f.pct);
			xl_num(x, s, row, 6, (double)f.uarch_ops, x->f.cyc);
			xl_num(x, s, row, 7,
			       f.uarch_ops ? (double)f.alg_ops / (double)f.uarch_ops : 0, x->f.pct);
			xl_num(x, s, row, 8,
			       tiu->uarch_ops ? (double)f.uarch_ops / (double)tiu->uarch_ops : 0,
			       x->f.pct);
		} else {
			for (uint16_t k = 2; k <= 8; k++)
				xl_str(x, s, row, k, "n/a", NULL);
		}
		xl_num(x, s, row, 9, (double)f.asic_cycle, x->f.cyc);
		xl_num(x, s, row, 10,
		       tiu->working_cycle ? (double)f.asic_cycle / (double)tiu->working_cycle : 0,
		       x->f.pct);
	}
	return row + 1;
}

/* One row per core ("D<device> C<core>" on a multi-device profile) and the Overall row from
 * row hr + 1 on; returns the next free row. */
static uint32_t core_rows(struct xl *x, struct xl_sheet *s, uint32_t hr, const struct scol *cols,
                          size_t nc)
{
	const struct tp_analysis *a = x->a;
	int md = xl_multi_device(x->p);
	char buf[64];
	xl_str(x, s, hr, 0, "CoreId", x->f.hdr);
	for (size_t c = 0; c < nc; c++)
		xl_str(x, s, hr, (uint16_t)(c + 1), cols[c].name, x->f.hdr);
	uint32_t row = hr + 1;
	for (size_t i = 0; i <= a->num_cores && a->num_cores; i++, row++) {
		int overall = i == a->num_cores;
		const struct tp_core_stats *cs = overall ? &a->overall : &a->cores[i];
		if (overall)
			xl_str(x, s, row, 0, "Overall", x->f.bold);
		else if (md) {
			snprintf(buf, sizeof buf, "D%d C%d", (int)cs->device, (int)cs->core);
			xl_str(x, s, row, 0, buf, NULL);
		} else
			xl_num(x, s, row, 0, cs->core, x->f.cyc);
		for (size_t c = 0; c < nc; c++) {
			double v;
			enum sval f;
			if (scol_value(&cols[c], cs, x->p, a, overall, &v, &f))
				xl_num(x, s, row, (uint16_t)(c + 1), v, sval_fmt(x, f));
			else
				xl_str(x, s, row, (uint16_t)(c + 1), "n/a", NULL);
		}
	}
	return row;
}

/* Red below `red` and yellow below `yellow` on rows [r0, r1] of column `col`. */
static void below(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                  double red, double yellow)
{
	xl_cond_cell(x, ws, r0, r1, col, LXW_CONDITIONAL_CRITERIA_LESS_THAN, red, x->f.red);
	xl_cond_cell(x, ws, r0, r1, col, LXW_CONDITIONAL_CRITERIA_LESS_THAN, yellow, x->f.yellow);
}

/* The highlights of §5.4 on the per-core rows [r0, r1]. */
static void summary_highlights(struct xl *x, lxw_worksheet *ws, const struct scol *cols, size_t nc,
                               uint32_t r0, uint32_t r1)
{
	const struct tp_profile *p = x->p;
	for (size_t c = 0; c < nc; c++) {
		uint16_t col = (uint16_t)(c + 1);
		if (cols[c].what == W_TIU_RATIO) {
			below(x, ws, r0, r1, col, 0.15, 0.30);
		} else if (cols[c].what == W_PAR) {
			int pair = p->arch == TP_ARCH_BM1688 || p->arch == TP_ARCH_BM1690;
			xl_cond_cell(x, ws, r0, r1, col, LXW_CONDITIONAL_CRITERIA_LESS_THAN,
			             pair ? 2.05 : 1.05, pair ? x->f.yellow : x->f.red);
		} else if (cols[c].what == W_UARCH) {
			below(x, ws, r0, r1, col, 0.5, 0.75);
		} else if (cols[c].what == W_DDR_BW && xl_ddr_max_bw(p) > 0) {
			below(x, ws, r0, r1, col, 0.5 * xl_ddr_max_bw(p), 0.75 * xl_ddr_max_bw(p));
		}
	}
}

/* The notes on units and on the Overall row; returns the next free row. */
static uint32_t unit_notes(struct xl *x, struct xl_sheet *s, uint32_t row)
{
	const struct tp_profile *p = x->p;
	const struct tp_analysis *a = x->a;
	char buf[768];
	xl_str(x, s, row++, 0, "Notes", x->f.bold);
	snprintf(
	    buf, sizeof buf,
	    "Units: times are us on the common time axis; cycle columns are in each engine's own "
	    "clock (TIU %.0f MHz, GDMA %.0f MHz). Parallelism = (TIU + GDMA + SDMA working time) "
	    "/ total time, all in time. Concurrency is measured: the time TIU and a DMA engine "
	    "are both busy / the shorter busy time (0-100 %%); the vendor's (TIU + GDMA - total) / "
	    "min(TIU, GDMA) only bounds it from below and goes negative on idle cores.",
	    p->tiu_freq_mhz, p->gdma_freq_mhz);
	xl_str(x, s, row++, 0, buf, x->f.note);
	xl_str(
	    x, s, row++, 0,
	    "The reference PerfAI_output.xlsx adds TIU nanoseconds to raw GDMA cycles, which is "
	    "right only at 1 GHz; its figures are kept in PerfDocParallelism / PerfDocConcurrency "
	    "for comparison.",
	    x->f.note);
	if (!a->num_cores)
		return row;
	snprintf(buf, sizeof buf,
	         "Overall row as the vendor's: cycle columns are the busiest core's "
	         "working time "
	         "(shown in us), TiuWorkingRatio is that TIU time / total time, "
	         "Parallelism = (max "
	         "TIU + max GDMA + max SDMA) / total time, Concurrency the best core's; "
	         "MeanCoreParallelism and the utilisation columns are over total time x "
	         "%zu cores; "
	         "busy, idle and byte columns are sums over cores. Busiest core: TIU %.3f "
	         "us (%" PRIu64 " cycles), GDMA %.3f us (%" PRIu64 " cycles).",
	         a->num_cores, xl_ns_to_us(a->overall_tiu_max_ns), a->overall_tiu_max_cycle,
	         xl_ns_to_us(a->overall_gdma_max_ns), a->overall_gdma_max_cycle);
	xl_str(x, s, row++, 0, buf, x->f.note);
	double rate;
	if (a->overall.eng[TP_TRACK_TIU].present &&
	    !tp_uarch_rate(&a->overall.eng[TP_TRACK_TIU], &rate))
		xl_str(x, s, row++, 0,
		       "uArchURate, totalAlgCycle, totalAlgOps, totalUArchOps n/a: this dump "
		       "carries no TIU descriptors to model, so the TIU sheets say n/a "
		       "rather than invent a figure.",
		       x->f.note);
	return row;
}

/* The notes on split and capped sheets; returns the next free row. */
static uint32_t cut_notes(struct xl *x, struct xl_sheet *s, uint32_t row, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	char buf[768];
	int spilled = 0;
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].nparts > 1)
			spilled = 1;
	if (spilled) {
		snprintf(
		    buf, sizeof buf,
		    "Some engine sheets pass the row limit (%u rows per sheet) and continue on "
		    "'<sheet> (2)', '<sheet> (3)', ...; the Sheets table below gives each part's "
		    "Global Idx range.",
		    (unsigned)pl->max_rows);
		xl_str(x, s, row++, 0, buf, x->f.note);
	}
	if (pl->nfold) {
		snprintf(
		    buf, sizeof buf,
		    "%zu tracks have no sheet of their own: a workbook holds at most %u sheets "
		    "(tracks in the order of the Sheets table below, engines first); their "
		    "records are on the 'Other tracks' sheet, one row per record with its track.",
		    pl->nfold, TP_XLSX_MAX_SHEETS);
		xl_str(x, s, row++, 0, buf, x->f.cap);
	}
	if (!pl->capped && !pl->layers_capped)
		return row;
	/* Never a silent cut: which sheets hold fewer rows than their track, and how to get
	 * every row; the figures on this sheet cover every record. */
	size_t largest = 0;
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].kind == PK_ENGINE || pl->v[i].kind == PK_EVENTS) {
			size_t c = p->tracks[pl->v[i].track].count;
			largest = c > largest ? c : largest;
		}
	char why[160];
	xl_default_cap_why(why, sizeof why, pl->auto_sheets, pl->row_cap);
	snprintf(buf, sizeof buf,
	         "Row cap: %zu per-record sheet(s)%s show only the first %" PRIu64
	         " records of their track or core in time%s (the largest track has %zu; the "
	         "Sheets table below gives Rows and Track Records per sheet). Rerun with "
	         "--xlsx_rows all for every row, or --xlsx_rows N. Every figure on this "
	         "sheet, the per-Function-Type tables, each layer's span and the totals on "
	         "top of each engine sheet cover all records.",
	         pl->capped, pl->layers_capped ? " and the layer sheet" : "", pl->row_cap, why,
	         largest);
	xl_str(x, s, row++, 0, buf, x->f.cap);
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].kind == PK_LONGEST) {
			snprintf(buf, sizeof buf,
			         "The 'Longest commands' sheet lists the %d longest commands of "
			         "each cut engine sheet, chosen among all its commands.",
			         XL_LONGEST);
			xl_str(x, s, row++, 0, buf, x->f.cap);
		}
	return row;
}

/* The profile's own notes (without the CLI's cap note, which cut_notes details) and its
 * metadata as a Key / Value table; returns the next free row. */
static uint32_t profile_notes(struct xl *x, struct xl_sheet *s, uint32_t row)
{
	const struct tp_profile *p = x->p;
	for (size_t i = 0; i < p->num_notes; i++) {
		const char *nt = tp_str(p, p->notes[i].text);
		if (strncmp(nt, TP_XLSX_NOTE_PREFIX, strlen(TP_XLSX_NOTE_PREFIX)) != 0)
			xl_str(x, s, row++, 0, nt, x->f.note);
	}
	if (p->num_meta) {
		row++;
		xl_str(x, s, row, 0, "Key", x->f.hdr);
		xl_str(x, s, row++, 1, "Value", x->f.hdr);
		for (size_t i = 0; i < p->num_meta; i++, row++) {
			xl_str(x, s, row, 0, tp_str(p, p->meta[i].key), NULL);
			xl_str(x, s, row, 1, tp_str(p, p->meta[i].value), NULL);
		}
	}
	return row;
}

/* The Sheets table: every per-record sheet with a link, its track and its Global Idx range;
 * returns the next free row. */
static uint32_t sheets_table(struct xl *x, struct xl_sheet *s, uint32_t row, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	static const char *const sh[] = {
	    "Sheet", "Engine",           "Device",          "Core Id",      "Part",
	    "Rows",  "First Global Idx", "Last Global Idx", "Track Records"};
	xl_header_row(x, s, row++, sh, sizeof sh / sizeof *sh);
	for (size_t i = 0; i < pl->n; i++) {
		const struct part *pt = &pl->v[i];
		if (pt->kind != PK_ENGINE && pt->kind != PK_EVENTS)
			continue;
		const struct tp_track *t = &p->tracks[pt->track];
		/* Inside a quoted sheet reference an apostrophe is doubled. */
		char url[300], quoted[260];
		size_t q = 0;
		for (const char *c = pt->name; *c && q + 2 < sizeof quoted; c++) {
			if (*c == '\'')
				quoted[q++] = '\'';
			quoted[q++] = *c;
		}
		quoted[q] = '\0';
		snprintf(url, sizeof url, "internal:'%s'!A1", quoted);
		xl_check(x, worksheet_write_url_opt(s->ws, row, 0, url, x->f.link, pt->name, NULL));
		xl_width(x, s, 0, strlen(pt->name));
		xl_str(x, s, row, 1, tp_track_kind_name((enum tp_track_kind)t->kind), NULL);
		xl_num(x, s, row, 2, t->device, x->f.cyc);
		xl_num(x, s, row, 3, t->core, x->f.cyc);
		xl_num(x, s, row, 4, (double)(pt->index + 1), x->f.cyc);
		xl_num(x, s, row, 5, (double)pt->count, x->f.cyc);
		xl_num(x, s, row, 6, (double)tp_global_idx(pt->first), x->f.cyc);
		xl_num(x, s, row, 7, (double)tp_global_idx(pt->first + pt->count - 1), x->f.cyc);
		xl_num(x, s, row, 8, (double)t->count, x->f.cyc);
		row++;
	}
	return row;
}

/* Bar chart below `row`: per-core utilisation of each engine (the W_UTIL columns of core rows
 * [r0, r1], header row hr). A chart needs at least one series (libxlsxwriter refuses it
 * otherwise, failing the whole workbook): a dump without a timeline (no iter*.profile) has no
 * utilisation column, so no chart. */
static void utilisation_chart(struct xl *x, lxw_worksheet *ws, const struct scol *cols, size_t nc,
                              uint32_t hr, uint32_t r0, uint32_t r1, uint32_t row)
{
	size_t nseries = 0;
	for (size_t c = 0; c < nc; c++)
		nseries += cols[c].what == W_UTIL;
	if (!x->a->num_cores || !nseries)
		return;
	lxw_chart *ch = workbook_add_chart(x->wb, LXW_CHART_COLUMN);
	if (!ch)
		return;
	char cat[160], val[160], nm[160], cn[4], sn[4];
	xl_col_name(0, cn);
	snprintf(cat, sizeof cat, "='Engine Summary'!$%s$%u:$%s$%u", cn, r0 + 1, cn, r1 + 1);
	for (size_t c = 0; c < nc; c++) {
		if (cols[c].what != W_UTIL)
			continue;
		xl_col_name((uint16_t)(c + 1), sn);
		snprintf(val, sizeof val, "='Engine Summary'!$%s$%u:$%s$%u", sn, r0 + 1, sn,
		         r1 + 1);
		snprintf(nm, sizeof nm, "='Engine Summary'!$%s$%u", sn, hr + 1);
		lxw_chart_series *se = chart_add_series(ch, cat, val);
		if (se)
			chart_series_set_name(se, nm);
	}
	chart_title_set_name(ch, "Engine utilisation per core");
	chart_axis_set_name(ch->x_axis, "Core");
	chart_axis_set_name(ch->y_axis, "Busy / total time");
	chart_axis_set_num_format(ch->y_axis, "0%");
	chart_axis_set_min(ch->y_axis, 0);
	chart_axis_set_max(ch->y_axis, 1);
	lxw_chart_options co;
	memset(&co, 0, sizeof co);
	co.x_scale = 1.5;
	co.y_scale = 1.2;
	xl_check(x, worksheet_insert_chart_opt(ws, row + 1, 0, ch, &co));
}

void xl_write_summary(struct xl *x, lxw_worksheet *ws, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	const struct tp_analysis *a = x->a;
	struct xl_sheet s = {.ws = ws};
	char buf[768];
	const char *net = tp_str(p, p->net_name);
	snprintf(buf, sizeof buf, "tpuprof Engine Summary%s%s (%s)", *net ? ": " : "", net,
	         tp_arch_name(p->arch));
	xl_str(x, &s, 0, 0, buf, x->f.title);
	snprintf(buf, sizeof buf,
	         "Source: %s. TIU clock %.0f MHz, GDMA clock %.0f MHz. Total time %.3f us.",
	         *tp_str(p, p->source) ? tp_str(p, p->source) : "unknown", p->tiu_freq_mhz,
	         p->gdma_freq_mhz, xl_ns_to_us(a->total_time_ns));
	xl_str(x, &s, 1, 0, buf, NULL);
	if (s.wcap)
		s.width[0] = 0;

	struct scol cols[96];
	size_t nc = summary_columns(a, cols, sizeof cols / sizeof *cols);
	const uint32_t hr = 3;
	uint32_t row = core_rows(x, &s, hr, cols, nc);
	uint32_t first_core_row = hr + 1, last_core_row = hr + (uint32_t)a->num_cores;
	if (!a->num_cores)
		xl_str(x, &s, row++, 0,
		       "No accelerator engine records in this profile; see the "
		       "Operators and thread sheets.",
		       x->f.note);
	else
		summary_highlights(x, ws, cols, nc, first_core_row, last_core_row);
	row = unit_notes(x, &s, row + 1);
	row = cut_notes(x, &s, row, pl);
	row = profile_notes(x, &s, row);

	/* Per-Function-Type TIU tables, one per core. */
	row++;
	for (size_t i = 0; i < a->num_cores; i++) {
		if (!a->cores[i].eng[TP_TRACK_TIU].present)
			continue;
		snprintf(buf, sizeof buf, "TIU function types, core %d", (int)a->cores[i].core);
		row = ftype_table(x, &s, row, &a->cores[i], buf);
	}
	row = sheets_table(x, &s, row, pl);
	utilisation_chart(x, ws, cols, nc, hr, first_core_row, last_core_row, row);
	worksheet_freeze_panes(ws, hr + 1, 1);
	worksheet_set_tab_color(ws, 0xFFC7CE);
	for (uint16_t c = 1; c < s.ncols && c < s.wcap; c++)
		if (s.width[c] < 10)
			s.width[c] = 10;
	xl_sheet_done(x, &s);
}
