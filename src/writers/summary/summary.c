/*
 * summary.c — writes summary.txt (and the console copy) from model + analysis, and the
 * summary outputs: summary.txt, and summary.json (rendered by json.c, or for captures by
 * src/writers/capreport).
 *
 * The first table reproduces the reference SummaryExporter layout (columns, widths, the
 * Overall row; sophgo-analysis.md §4.2–§4.3) with the PerfWeb definitions that the reference
 * numbers in PROVENANCE.txt come from. The sections after it add what the reference README
 * promises but never computed (§4.4): per-engine busy / idle / utilisation, DDR read and write
 * bandwidth, compute vs data movement — plus the TIU cost model's per-Function-Type table
 * (sophgo-costmodel.md §4), rankings, and notes on the worst commands and layers and on
 * reference quirks.
 */
#include "writers/capreport/capreport.h"
#include "writers/summary/summary_int.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* A text table's column: its header and width. */
struct col {
	const char *name;
	int width;
};

/* The width of a table of columns c[0..n): the columns and the " | " between them. */
static size_t table_width(const struct col *c, size_t n)
{
	size_t width = 0;
	for (size_t i = 0; i < n; i++)
		width += (size_t)c[i].width + (i + 1 < n ? 3 : 0);
	return width;
}

/* The reference table's columns. */
static const struct col cols[] = {
    {"CoreId", 7},
    {"Parallelism(%)", 14},
    {"totalTime(us)", 14},
    {"TiuWorkingRatio", 15},
    {"totalTiuCycle", 14},
    {"uArchURate", 10},
    {"totalGdmaCycle", 16},
    {"GdmaDdrAvgBW(GB/s)", 18},
    {"GdmaL2AvgBW(GB/s)", 18},
    {"GdmaAvgDdrBurstLength", 21},
    {"totalSdmaCycle", 16},
    {"SdmaDdrAvgBW(GB/s)", 18},
    {"SdmaAvgDdrBurstLength", 21},
};
#define NSDMA_COLS 3 /* the last columns, left out of the console's table without SDMA */
#define NCOLS (sizeof cols / sizeof *cols)

static void cell(struct tp_buf *b, size_t col, size_t ncols, const char *text)
{
	int w = cols[col].width, n = (int)strlen(text);
	for (int i = n; i < w; i++)
		tp_buf_putc(b, ' ');
	tp_buf_puts(b, text);
	tp_buf_puts(b, col + 1 < ncols ? " | " : "\n");
}

/* Moves a scratch buffer's text into dst (truncated to n) and frees the buffer. */
static void take(struct tp_buf *t, char *dst, size_t n)
{
	snprintf(dst, n, "%s", t->data && !t->oom ? t->data : "?");
	tp_buf_free(t);
}

static void fmt_fixed(char *dst, size_t n, double v, int dec)
{
	struct tp_buf t;
	tp_buf_init(&t);
	tp_buf_fixed(&t, v, dec);
	take(&t, dst, n);
}

static void fmt_pct(char *dst, size_t n, double v)
{
	struct tp_buf t;
	tp_buf_init(&t);
	tp_buf_fixed(&t, v * 100.0, 2);
	tp_buf_putc(&t, '%');
	take(&t, dst, n);
}

static void fmt_us(char *dst, size_t n, int64_t ns, const char *suffix)
{
	struct tp_buf t;
	tp_buf_init(&t);
	tp_buf_ns_as_us(&t, ns);
	tp_buf_puts(&t, suffix);
	take(&t, dst, n);
}

/* A cycle column: integer cycles on core rows, the maximum over cores as "N.NNN(us)" on the
 * Overall row (the reference's convention): max_cycle at mhz rounded to the ns (96730 cycles
 * at 900 MHz are 107.478 us, not the 107.477 of the truncated ns the timeline uses); max_ns
 * when the clock is unknown. */
static void fmt_cycles(char *dst, size_t n, int overall, int64_t max_ns, uint64_t max_cycle,
                       double mhz, uint64_t cycles)
{
	if (overall)
		fmt_us(dst, n,
		       mhz > 0 ? (int64_t)llround((double)max_cycle * 1000.0 / mhz) : max_ns,
		       "(us)");
	else
		snprintf(dst, n, "%llu", (unsigned long long)cycles);
}

static void rule(struct tp_buf *b, char c, size_t width)
{
	for (size_t i = 0; i < width; i++)
		tp_buf_putc(b, c);
	tp_buf_putc(b, '\n');
}

static int has_uarch(const struct tp_engine_stats *tiu)
{
	double r;
	return tp_uarch_rate(tiu, &r);
}

/* uArchURate the vendor's way (2 decimals, "0.00%" for a zero denominator); "n/a" when the
 * dump has no descriptors. */
static void uarch(char *dst, size_t n, const struct tp_engine_stats *tiu)
{
	double r;
	if (tp_uarch_rate(tiu, &r))
		fmt_pct(dst, n, r);
	else
		snprintf(dst, n, "n/a");
}

static int has_sdma(const struct tp_analysis *a)
{
	return a->overall.eng[TP_TRACK_SDMA].present;
}

static void reference_table(const struct tp_profile *p, const struct tp_analysis *a, int console,
                            struct tp_buf *b)
{
	size_t ncols = console && !has_sdma(a) ? NCOLS - NSDMA_COLS : NCOLS;
	size_t width = table_width(cols, ncols);
	rule(b, '=', width);
	tp_buf_puts(b, "Summary\n");
	rule(b, '=', width);
	for (size_t i = 0; i < ncols; i++)
		cell(b, i, ncols, cols[i].name);
	rule(b, '-', width);
	char v[64];
	for (size_t i = 0; i <= a->num_cores; i++) {
		int overall = i == a->num_cores;
		if (overall)
			rule(b, '-', width);
		const struct tp_core_stats *c = overall ? &a->overall : &a->cores[i];
		const struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU],
		                             *gdma = &c->eng[TP_TRACK_GDMA],
		                             *sdma = &c->eng[TP_TRACK_SDMA];
		if (overall)
			snprintf(v, sizeof v, "Overall");
		else if (a->cores[i].device > 0)
			snprintf(v, sizeof v, "%d.%d", a->cores[i].device, a->cores[i].core);
		else
			snprintf(v, sizeof v, "%d", a->cores[i].core);
		cell(b, 0, ncols, v);
		fmt_pct(v, sizeof v, c->parallelism);
		cell(b, 1, ncols, v);
		fmt_us(v, sizeof v, a->total_time_ns, "");
		cell(b, 2, ncols, v);
		fmt_pct(v, sizeof v, c->tiu_working_ratio);
		cell(b, 3, ncols, v);
		fmt_cycles(v, sizeof v, overall, a->overall_tiu_max_ns, a->overall_tiu_max_cycle,
		           p->tiu_freq_mhz, tiu->working_cycle);
		cell(b, 4, ncols, v);
		uarch(v, sizeof v, tiu);
		cell(b, 5, ncols, v);
		fmt_cycles(v, sizeof v, overall, a->overall_gdma_max_ns, a->overall_gdma_max_cycle,
		           p->gdma_freq_mhz, gdma->working_cycle);
		cell(b, 6, ncols, v);
		fmt_fixed(v, sizeof v, gdma->ddr_avg_gbps, 2);
		cell(b, 7, ncols, v);
		fmt_fixed(v, sizeof v, gdma->l2_avg_gbps, 2);
		cell(b, 8, ncols, v);
		fmt_fixed(v, sizeof v, gdma->ddr_avg_burst, 2);
		cell(b, 9, ncols, v);
		if (ncols == NCOLS) {
			fmt_cycles(v, sizeof v, overall, a->overall_sdma_max_ns,
			           a->overall_sdma_max_cycle, p->gdma_freq_mhz,
			           sdma->working_cycle);
			cell(b, 10, ncols, v);
			fmt_fixed(v, sizeof v, sdma->ddr_avg_gbps, 2);
			cell(b, 11, ncols, v);
			fmt_fixed(v, sizeof v, sdma->ddr_avg_burst, 2);
			cell(b, 12, ncols, v);
		}
	}
	rule(b, '=', width);
}

/* tpuprof's figures and the vendor tool's (profile->vendor, computed by the reader the
 * vendor's way) side by side, one pair of rows per core, under the reference column names; the
 * notes say per figure how they differ. Omitted when the reader gave no vendor figures. */
static const struct col vcols[] = {
    {"Figures of", 24},
    {"CoreId", 6},
    {"Parallelism(%)", 14},
    {"totalTime(us)", 13},
    {"TiuWorkingRatio", 15},
    {"totalTiuCycle", 13},
    {"totalGdmaCycle", 14},
    {"GdmaDdrAvgBW(GB/s)", 18},
    {"GdmaL2AvgBW(GB/s)", 17},
    {"totalSdmaCycle", 14},
    {"SdmaDdrAvgBW(GB/s)", 18},
    {"TIU", 6},
    {"GDMA", 6},
    {"SDMA", 6},
    {"CDMA", 6},
};
#define NVCOLS (sizeof vcols / sizeof *vcols)

static void vcell(struct tp_buf *b, size_t col, const char *text)
{
	if (col == 0) {
		tp_buf_printf(b, "%-*s | ", vcols[0].width, text);
		return;
	}
	tp_buf_printf(b, "%*s%s", vcols[col].width, text, col + 1 < NVCOLS ? " | " : "\n");
}

static void vendor_table(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	if (!p->vendor.num_rows)
		return;
	char label[64], v[64];
	size_t width = table_width(vcols, NVCOLS);
	tp_buf_printf(b,
	              "\nVendor comparison: tpuprof's figures (hardware timeline, above) and "
	              "%s's (its own timeline and labels; see Notes)\n",
	              tp_str(p, p->vendor.tool));
	for (size_t i = 0; i < NVCOLS; i++)
		vcell(b, i, vcols[i].name);
	rule(b, '-', width);
	for (size_t r = 0; r < p->vendor.num_rows; r++) {
		const struct tp_vendor_row *x = &p->vendor.rows[r];
		const struct tp_core_stats *c = tp_analysis_core(a, x->device, x->core);
		for (int who = 0; who < 2; who++) {
			if (!who && !c)
				continue;
			int64_t tt = who ? x->total_time_ns : a->total_time_ns;
			double par = who ? x->parallelism : c->parallelism;
			double twr = who ? x->tiu_working_ratio : c->tiu_working_ratio;
			uint64_t cyc[3], rec[4];
			double bw[3];
			for (int e = 0; e < 4; e++) {
				const struct tp_engine_stats *es = c ? &c->eng[e] : NULL;
				rec[e] = who ? x->records[e] : es->records;
				if (e == 3)
					break;
				cyc[e] = who ? (e == 0   ? x->tiu_cycle
				                : e == 1 ? x->gdma_cycle
				                         : x->sdma_cycle)
				             : es->working_cycle;
			}
			bw[0] = who ? x->gdma_ddr_gbps : c->eng[TP_TRACK_GDMA].ddr_avg_gbps;
			bw[1] = who ? x->gdma_l2_gbps : c->eng[TP_TRACK_GDMA].l2_avg_gbps;
			bw[2] = who ? x->sdma_ddr_gbps : c->eng[TP_TRACK_SDMA].ddr_avg_gbps;
			if (who)
				snprintf(label, sizeof label, "vendor (%.14s)",
				         tp_str(p, p->vendor.tool));
			else
				snprintf(label, sizeof label, "tpuprof (hardware)");
			vcell(b, 0, label);
			if (x->device > 0)
				snprintf(v, sizeof v, "%d.%d", x->device, x->core);
			else
				snprintf(v, sizeof v, "%d", x->core);
			vcell(b, 1, v);
			/* A vendor totalTime shorter than an engine's work gives no ratio (notes).
			 */
			int na = who && x->short_span;
			fmt_pct(v, sizeof v, par);
			vcell(b, 2, na ? "n/a" : v);
			fmt_us(v, sizeof v, tt, "");
			vcell(b, 3, v);
			fmt_pct(v, sizeof v, twr);
			vcell(b, 4, na ? "n/a" : v);
			snprintf(v, sizeof v, "%llu", (unsigned long long)cyc[0]);
			vcell(b, 5, v);
			snprintf(v, sizeof v, "%llu", (unsigned long long)cyc[1]);
			vcell(b, 6, v);
			fmt_fixed(v, sizeof v, bw[0], 2);
			vcell(b, 7, v);
			fmt_fixed(v, sizeof v, bw[1], 2);
			vcell(b, 8, v);
			snprintf(v, sizeof v, "%llu", (unsigned long long)cyc[2]);
			vcell(b, 9, v);
			fmt_fixed(v, sizeof v, bw[2], 2);
			vcell(b, 10, v);
			for (int e = 0; e < 4; e++) {
				snprintf(v, sizeof v, "%llu", (unsigned long long)rec[e]);
				vcell(b, 11 + (size_t)e, v);
			}
		}
	}
	rule(b, '-', width);
}

static void engine_table(const struct tp_analysis *a, struct tp_buf *b)
{
	tp_buf_puts(b, "\nEngines (busy = non-sys commands; idle = total time - busy)\n");
	tp_buf_printf(b, "%7s | %6s | %8s | %12s | %12s | %7s | %11s | %11s\n", "CoreId", "Engine",
	              "Records", "Busy(us)", "Idle(us)", "Util(%)", "DdrRd(GB/s)", "DdrWr(GB/s)");
	char busy[32], idle[32], util[32], rd[32], wr[32];
	for (size_t i = 0; i < a->num_cores; i++) {
		const struct tp_core_stats *c = &a->cores[i];
		for (int e = 0; e < TP_ENGINES; e++) {
			const struct tp_engine_stats *x = &c->eng[e];
			if (!x->present)
				continue;
			int dma = tp_track_kind_is_dma((enum tp_track_kind)e);
			fmt_us(busy, sizeof busy, x->busy_ns, "");
			fmt_us(idle, sizeof idle, x->idle_ns, "");
			fmt_fixed(util, sizeof util, x->utilization * 100, 2);
			fmt_fixed(rd, sizeof rd, x->ddr_read_gbps, 2);
			fmt_fixed(wr, sizeof wr, x->ddr_write_gbps, 2);
			tp_buf_printf(b, "%7d | %6s | %8llu | %12s | %12s | %7s | %11s | %11s\n",
			              c->core, tp_track_kind_name((enum tp_track_kind)e),
			              (unsigned long long)x->records, busy, idle, util,
			              dma ? rd : "-", dma ? wr : "-");
		}
	}
}

/* DMA byte totals per core, with the compute : data-movement share. */
static void dma_bytes(const struct tp_analysis *a, struct tp_buf *b)
{
	tp_buf_puts(b, "\nData movement per core\n");
	tp_buf_printf(b, "%7s | %6s | %14s | %14s | %14s | %12s | %22s\n", "CoreId", "Engine",
	              "DdrRead(B)", "DdrWrite(B)", "L2(B)", "Stall(cyc)", "Compute:DataMove(busy)");
	for (size_t i = 0; i < a->num_cores; i++) {
		const struct tp_core_stats *c = &a->cores[i];
		for (int e = TP_TRACK_GDMA; e < TP_ENGINES; e++) {
			const struct tp_engine_stats *x = &c->eng[e];
			if (!x->present)
				continue;
			char share[32];
			fmt_fixed(share, sizeof share, c->compute_share * 100, 2);
			strcat(share, "% TIU");
			tp_buf_printf(b, "%7d | %6s | %14llu | %14llu | %14llu | %12llu | %22s\n",
			              c->core, tp_track_kind_name((enum tp_track_kind)e),
			              (unsigned long long)x->ddr_read_bytes,
			              (unsigned long long)x->ddr_write_bytes,
			              (unsigned long long)x->l2_bytes,
			              (unsigned long long)x->stall_cycle, share);
		}
	}
}

/* The per-Function-Type TIU table (PerfDoc TIU_c sheet, sophgo-costmodel.md §4): one block per
 * core and one for Overall. Ratios are against the block's totals; the Asic Cycle column
 * includes wait_msg but its ratio's denominator (totalTiuCycle) does not, as the vendor's. */
static void ftype_block(const struct tp_profile *p, const struct tp_core_stats *c,
                        const char *title, struct tp_buf *b)
{
	const struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU];
	int cost = has_uarch(tiu);
	tp_buf_printf(b, "\nTIU function types, %s%s\n", title,
	              cost ? "" : " (no descriptors in this dump: op and cycle-model columns n/a)");
	tp_buf_printf(b, "%-16s | %9s | %14s | %8s | %12s | %8s | %14s | %10s | %8s | %12s | %8s\n",
	              "Function Type", "Instr Num", "Alg Ops", "AlgOps%", "Alg Cycle", "AlgCyc%",
	              "uArch Ops", "uArchURate", "uArch%", "Asic Cycle", "Asic%");
	char v[6][32], ops[3][32];
	for (size_t i = 0; i <= c->num_ftypes; i++) {
		int total = i == c->num_ftypes;
		const struct tp_ftype_stats f = total ? c->ftype_total : c->ftypes[i];
		if (cost) {
			fmt_pct(v[0], 32,
			        tiu->alg_ops ? (double)f.alg_ops / (double)tiu->alg_ops : 0);
			fmt_pct(v[1], 32,
			        tiu->alg_cycle ? (double)f.alg_cycle / (double)tiu->alg_cycle : 0);
			fmt_pct(v[2], 32,
			        f.uarch_ops ? (double)f.alg_ops / (double)f.uarch_ops : 0);
			fmt_pct(v[3], 32,
			        tiu->uarch_ops ? (double)f.uarch_ops / (double)tiu->uarch_ops : 0);
			snprintf(ops[0], 32, "%llu", (unsigned long long)f.alg_ops);
			snprintf(ops[1], 32, "%llu", (unsigned long long)f.alg_cycle);
			snprintf(ops[2], 32, "%llu", (unsigned long long)f.uarch_ops);
		} else {
			for (int k = 0; k < 4; k++)
				snprintf(v[k], 32, "n/a");
			for (int k = 0; k < 3; k++)
				snprintf(ops[k], 32, "n/a");
		}
		fmt_pct(v[4], 32,
		        tiu->working_cycle ? (double)f.asic_cycle / (double)tiu->working_cycle : 0);
		tp_buf_printf(
		    b,
		    "%-16s | %9llu | %14s | %8s | %12s | %8s | %14s | %10s | %8s | %12llu | "
		    "%8s\n",
		    total ? "Overall" : tp_str(p, f.type), (unsigned long long)f.instr, ops[0],
		    v[0], ops[1], v[1], ops[2], v[2], v[3], (unsigned long long)f.asic_cycle, v[4]);
	}
}

static void ftype_tables(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	char title[48];
	for (size_t i = 0; i < a->num_cores; i++) {
		if (!a->cores[i].eng[TP_TRACK_TIU].present)
			continue;
		snprintf(title, sizeof title, "core %d", a->cores[i].core);
		ftype_block(p, &a->cores[i], title, b);
	}
	if (a->num_cores > 1 && a->overall.eng[TP_TRACK_TIU].present)
		ftype_block(p, &a->overall, "all cores", b);
}

/* A ranking row's time (us) and share cells. */
struct rank_cells {
	char time[32], share[32];
};

static struct rank_cells rank_cells(const struct tp_rank *r)
{
	struct rank_cells c;
	fmt_us(c.time, sizeof c.time, r->total_ns, "");
	fmt_pct(c.share, sizeof c.share, r->share);
	return c;
}

static void rankings(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	if (a->num_top_layers) {
		tp_buf_printf(b, "\nTop layers by time\n%7s | %8s | %-16s | %12s | %7s | %s\n",
		              "CoreId", "LayerId", "Type", "Time(us)", "Share", "Name");
		for (size_t i = 0; i < a->num_top_layers && i < 10; i++) {
			const struct tp_rank *r = &a->top_layers[i];
			struct tp_layer lv;
			const struct tp_layer *l = tp_profile_layer(p, (size_t)r->index, &lv);
			struct rank_cells c = rank_cells(r);
			tp_buf_printf(b, "%7d | %8d | %-16s | %12s | %7s | %s\n", l->core, l->id,
			              tp_str(p, l->type), c.time, c.share, tp_str(p, l->name));
		}
	}
	if (a->num_top_cmds) {
		tp_buf_printf(b,
		              "\nTop command types by time\n%7s | %6s | %-24s | %8s | %12s | %7s\n",
		              "CoreId", "Engine", "Name", "Count", "Time(us)", "Share");
		for (size_t i = 0; i < a->num_top_cmds && i < 12; i++) {
			const struct tp_rank *r = &a->top_cmds[i];
			struct rank_cells c = rank_cells(r);
			tp_buf_printf(b, "%7d | %6s | %-24s | %8llu | %12s | %7s\n", r->core,
			              tp_str(p, r->type), tp_str(p, r->name),
			              (unsigned long long)r->count, c.time, c.share);
		}
	}
}

/* "core 0 TIU cmd 2 conv.normal (layer 5 Conv2D conv1)" for a hot command or layer. */
static void hot_name(const struct tp_profile *p, const struct tp_cost_hot *h, char *buf, size_t n)
{
	struct tp_layer lv;
	const struct tp_layer *l = h->layer >= 0 && (size_t)h->layer < p->num_layers
	                               ? tp_profile_layer(p, (size_t)h->layer, &lv)
	                               : NULL;
	char ly[200] = "";
	if (l)
		snprintf(ly, sizeof ly, "%slayer %d %s %s%s", h->track >= 0 ? " (" : "", l->id,
		         tp_str(p, l->type), tp_str(p, l->name), h->track >= 0 ? ")" : "");
	if (h->track < 0) {
		snprintf(buf, n, "core %d %s", h->core, ly);
		return;
	}
	const struct tp_slice *s = &p->tracks[h->track].slices[h->slice];
	snprintf(buf, n, "core %d TIU cmd %u %s%s", h->core, s->cmd_id,
	         tp_str(p, tp_slice_name(&p->tracks[h->track], s)), ly);
}

static void hot_notes(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	char nm[320], r[32], x[32];
	const struct tp_engine_stats *tiu = &a->overall.eng[TP_TRACK_TIU];
	if (a->num_low_uarch) {
		tp_buf_puts(b, "- Low uArch rate (Alg Ops / uArch Ops: work lost to the hardware's "
		               "alignment padding), worst commands by cycles lost:");
		for (size_t i = 0; i < a->num_low_uarch && i < 5; i++) {
			const struct tp_cost_hot *h = &a->low_uarch[i];
			hot_name(p, h, nm, sizeof nm);
			fmt_pct(r, sizeof r, (double)h->alg_ops / (double)h->uarch_ops);
			fmt_pct(x, sizeof x,
			        tiu->working_cycle
			            ? (double)h->asic_cycle / (double)tiu->working_cycle
			            : 0);
			tp_buf_printf(b, "%s %s at %s (%s of TIU cycles)", i ? ";" : "", nm, r, x);
		}
		tp_buf_puts(b, ".\n");
	}
	if (a->num_low_uarch_layers) {
		tp_buf_puts(b, "- Low uArch rate, worst layers:");
		for (size_t i = 0; i < a->num_low_uarch_layers && i < 5; i++) {
			const struct tp_cost_hot *h = &a->low_uarch_layers[i];
			hot_name(p, h, nm, sizeof nm);
			fmt_pct(r, sizeof r, (double)h->alg_ops / (double)h->uarch_ops);
			tp_buf_printf(b, "%s %s at %s (%.0f cycles lost)", i ? ";" : "", nm, r,
			              h->lost_cycles);
		}
		tp_buf_puts(b, ".\n");
	}
	if (a->num_high_init) {
		tp_buf_puts(
		    b, "- High initial-cycle ratio (fixed start-up cycles / Asic Cycle above the "
		       "vendor's 1 % mark; short commands of a costly class), worst by cycles:");
		for (size_t i = 0; i < a->num_high_init && i < 5; i++) {
			const struct tp_cost_hot *h = &a->high_init[i];
			hot_name(p, h, nm, sizeof nm);
			fmt_pct(r, sizeof r,
			        (double)h->init_cycle / ((double)h->asic_cycle + 1e-4));
			tp_buf_printf(b, "%s %s at %s (%llu cycles)", i ? ";" : "", nm, r,
			              (unsigned long long)h->init_cycle);
		}
		tp_buf_puts(b, ".\n");
	}
	if (tiu->cost_missing)
		tp_buf_printf(
		    b,
		    "- %llu TIU commands have no cost model and are left out of the uArch "
		    "sums.\n",
		    (unsigned long long)tiu->cost_missing);
}

static void note_lines(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	for (size_t i = 0; i < p->num_notes; i++)
		tp_buf_printf(b, "- %s\n", tp_str(p, p->notes[i].text));
	if (a->num_cores && a->overall.eng[TP_TRACK_TIU].present &&
	    !has_uarch(&a->overall.eng[TP_TRACK_TIU]))
		tp_buf_puts(b, "- uArchURate is n/a: this dump carries no TIU descriptors to model "
		               "(e.g. cdm mode 0/1, or a missing cmd_*.dat), so no figure is shown "
		               "rather than an invented one.\n");
	hot_notes(p, a, b);
	if (a->num_cores > 1) {
		char x[32], y[32];
		fmt_pct(x, sizeof x, a->overall.parallelism);
		fmt_pct(y, sizeof y, a->overall.mean_parallelism);
		tp_buf_printf(
		    b,
		    "- Overall Parallelism %s is the vendor's: (max TIU + max GDMA + max "
		    "SDMA working time over cores) / total time. tpuprof's mean over cores, "
		    "sum / (total time x %zu cores), is %s (MeanCoreParallelism).\n",
		    x, a->num_cores, y);
	}
	if (a->num_cores)
		tp_buf_puts(
		    b, "- Concurrency (summary.json concurrency_pct) is measured: the time TIU "
		       "and a DMA engine of the core are both busy / the shorter of their busy "
		       "times (0-100 %). The vendor's (TIU + GDMA - total) / min(TIU, GDMA) "
		       "only bounds it from below and goes negative on idle cores; it is "
		       "kept, clamped at 0, as concurrency_lower_bound_pct.\n");
	for (size_t i = 0; i < a->num_cores; i++) {
		const struct tp_core_stats *c = &a->cores[i];
		/* Only when the clocks differ does PerfDoc's unit mix change the figure. */
		if (!c->eng[TP_TRACK_GDMA].present || p->tiu_freq_mhz == p->gdma_freq_mhz)
			continue;
		char x[32], y[32], z[32];
		fmt_pct(x, sizeof x, c->perfdoc_parallelism);
		fmt_pct(y, sizeof y, c->perfdoc_concurrency);
		fmt_pct(z, sizeof z, c->parallelism);
		tp_buf_printf(b,
		              "- core %d: PerfDoc (PerfAI_output.xlsx) reports Parallelism %s and "
		              "Concurrency %s because it adds TIU nanoseconds to raw GDMA cycles; "
		              "tpuprof uses nanoseconds for both (%s).\n",
		              c->core, x, y, z);
	}
	if (p->stats.records_dropped)
		tp_buf_printf(
		    b, "- %llu records were dropped or trimmed while reading (see summary.json).\n",
		    (unsigned long long)p->stats.records_dropped);
	if (p->stats.blocks_skipped)
		tp_buf_printf(b, "- %llu blocks of unknown type were skipped.\n",
		              (unsigned long long)p->stats.blocks_skipped);
}

/* The notes section; omitted when there is nothing to say. */
static void notes(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	struct tp_buf n;
	tp_buf_init(&n);
	note_lines(p, a, &n);
	if (n.len) {
		tp_buf_puts(b, "\nNotes\n");
		tp_buf_put(b, n.data, n.len);
	}
	if (n.oom)
		b->oom = 1;
	tp_buf_free(&n);
}

static void capture_text(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	char t[32], mn[32], mx[32];
	tp_buf_puts(b,
	            "==========================================================================\n");
	tp_buf_puts(b, "Summary (capture)\n");
	tp_buf_puts(b,
	            "==========================================================================\n");
	fmt_us(t, sizeof t, p->span_end_ns - p->span_begin_ns, "");
	tp_buf_printf(b, "span(us): %s   threads: %zu   slices: %zu\n", t, p->num_tracks,
	              tp_profile_slice_count(p));
	tp_buf_printf(b, "%-24s | %8s | %12s | %12s | %12s | %7s\n", "OpType", "Count", "Total(us)",
	              "Min(us)", "Max(us)", "Share");
	for (size_t i = 0; i < a->num_op_types; i++) {
		const struct tp_rank *r = &a->op_types[i];
		struct rank_cells c = rank_cells(r);
		fmt_us(mn, sizeof mn, r->min_ns, "");
		fmt_us(mx, sizeof mx, r->max_ns, "");
		tp_buf_printf(b, "%-24s | %8llu | %12s | %12s | %12s | %7s\n", tp_str(p, r->name),
		              (unsigned long long)r->count, c.time, mn, mx, c.share);
	}
}

static void summary_body(const struct tp_profile *p, const struct tp_analysis *a, int console,
                         struct tp_buf *out)
{
	if (a->num_cores == 0) {
		capture_text(p, a, out);
		tp_capreport_accel_text(p, a->accel, out);
		notes(p, a, out);
		return;
	}
	reference_table(p, a, console, out);
	if (console)
		return;
	vendor_table(p, a, out);
	ftype_tables(p, a, out);
	engine_table(a, out);
	dma_bytes(a, out);
	rankings(p, a, out);
	if (a->ltab)
		tp_summary_ltab_text(p, a->ltab, out);
	tp_capreport_accel_text(p, a->accel, out);
	notes(p, a, out);
}

void tp_summary_text(const struct tp_profile *p, const struct tp_analysis *a, int console,
                     struct tp_buf *out)
{
	size_t from = out->len;
	summary_body(p, a, console, out);
	/* Names from the input may hold ESC and other control bytes: none reaches a terminal or
	 * the text file (common's text-safety layer, TP_TEXT_TERM). */
	tp_buf_clean(out, from, TP_TEXT_TERM);
}

int tp_summary_txt_render(const struct tp_profile *p, const struct tp_analysis *a,
                          const struct tp_out_opts *o, struct tp_buf *b, struct tp_diag *d)
{
	(void)o;
	(void)d;
	tp_summary_text(p, a, 0, b);
	return TP_OK;
}

/* The summary.json file being streamed, and the errno of its first failed write (the
 * document goes on being formatted after it, which may change errno). */
struct jfile {
	struct tp_afile f;
	int err;
};

static int jfile_put(void *ctx, const char *bytes, size_t n)
{
	struct jfile *j = ctx;
	if (tp_afile_write(&j->f, bytes, n) == 0)
		return 0;
	j->err = errno;
	return -1;
}

/* A capture's summary.json grows with steps x operators (op_stats): it is streamed to the
 * file in pieces of 1 MiB (tp_capreport_stream_json) instead of being held whole. */
static int write_capture_json(const struct tp_profile *p, const struct tp_analysis *a,
                              const char *path, struct tp_diag *d)
{
	struct jfile j = {.err = 0};
	int st = tp_afile_open(&j.f, path, d);
	if (st != TP_OK)
		return st;
	struct tp_buf b;
	tp_buf_init(&b);
	st = tp_capreport_stream_json(p, a, &b, TP_WRITE_PIECE, jfile_put, &j);
	if (st == TP_OK && jfile_put(&j, b.data, b.len) != 0)
		st = TP_EOUTPUT;
	if (st == TP_EOUTPUT) {
		tp_afile_abort(&j.f);
		st = tp_diag_set(d, TP_EOUTPUT, "%s: write failed: %s", path, strerror(j.err));
	} else if (st != TP_OK) {
		tp_afile_abort(&j.f);
		st = tp_diag_set(d, st, "summary.json: %s", tp_strerror(st));
	} else {
		st = tp_afile_commit(&j.f, d);
	}
	tp_buf_free(&b);
	return st;
}

int tp_summary_json_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                          const struct tp_out_opts *o, struct tp_diag *d)
{
	(void)o;
	/* Captures get the app_stats / op_stats document of the capture reports. */
	if (p->arch == TP_ARCH_CPU && a->num_cores == 0)
		return write_capture_json(p, a, path, d);
	struct tp_buf b;
	tp_buf_init(&b);
	tp_summary_json(p, a, &b);
	int st = tp_write_buf_path(path, &b, d);
	tp_buf_free(&b);
	return st;
}
