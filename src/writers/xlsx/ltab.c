/*
 * ltab.c — the "Layer Table" and "What If" sheets: the layer table of src/analysis/ltab.h
 * (one row per layer with commands, longest TIU time first, the vendor's layer.csv columns as
 * numbers), then the per-Function rows with Overall and the what-if rows (the vendor's
 * summary.csv and mac_util.csv).
 *
 * Owns nothing beyond one call.
 */
#include "analysis/ltab.h"
#include "writers/xlsx/xlsx_int.h"

#include <stdio.h>

/* An engine's cycles, time, share and theoretical time from column c. Returns the next
 * column. */
static uint16_t eng_cells(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t c,
                          const struct tp_ltab_eng *e)
{
	xl_num(x, s, row, c++, (double)e->cycles, x->f.cyc);
	xl_num(x, s, row, c++, e->us, x->f.us);
	xl_num(x, s, row, c++, e->ratio, x->f.pct);
	xl_num(x, s, row, c++, e->theo_us, x->f.us);
	return c;
}

/* The byte, GDMA and TIU columns a layer and a Function share (SUMS_COLS), from column c; a
 * rate without a denominator leaves its cell empty. Returns the next column. */
static uint16_t sums_cells(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t c,
                           const struct tp_ltab_sums *v)
{
	const uint64_t bytes[] = {v->weight_bytes, v->s2l_bytes, v->l2s_bytes, v->s2s_bytes};
	for (size_t k = 0; k < sizeof bytes / sizeof bytes[0]; k++, c++)
		xl_num(x, s, row, c, (double)bytes[k], x->f.cyc);
	c = eng_cells(x, s, row, c, &v->gdma);
	if (v->gdma.us > 0)
		xl_num(x, s, row, c, tp_ltab_theo_rate(&v->gdma), x->f.pct);
	c++;
	xl_num(x, s, row, c++, (double)v->alg_ops, x->f.cyc);
	xl_num(x, s, row, c++, (double)v->uarch_ops, x->f.cyc);
	c = eng_cells(x, s, row, c, &v->tiu);
	if (v->uarch_ops)
		xl_num(x, s, row, c, (double)v->alg_ops / (double)v->uarch_ops, x->f.pct);
	c++;
	xl_num(x, s, row, c++, v->peak_tops, x->f.real);
	char dt[64];
	tp_ltab_dtypes(v, ",", dt, sizeof dt);
	xl_str(x, s, row, c++, dt, NULL);
	return c;
}

#define SUMS_COLS                                                                                  \
	"weightBytes", "s2lBytes", "l2sBytes", "s2sBytes", "gdmaCycles", "gdmaTime(us)",           \
	    "gdmaTimeRatio", "gdmaPTheoTime(us)", "ddrRate", "AlgOps", "uArchOps", "tiuCycles",    \
	    "tiuTime(us)", "tiuTimeRatio", "tiuPTheoTime(us)", "uArchRate", "PeakTops", "DataType"

/* Layer Table rows [a, b) (stream.c's parts; data row 0 is sheet row 3). */
static void ltab_rows_emit(struct xl *x, struct xl_sheet *s, const void *ctx, size_t a, size_t b)
{
	(void)ctx;
	const struct tp_ltab *t = x->a->ltab;
	const struct tp_profile *p = x->p;
	for (size_t i = a; i < b; i++) {
		const struct tp_ltab_row *r = &t->rows[i];
		uint32_t row = 3 + (uint32_t)i;
		uint16_t c = 0;
		xl_num(x, s, row, c++, r->id, x->f.cyc);
		xl_str(x, s, row, c++, r->is_global ? "global" : "local", NULL);
		xl_str(x, s, row, c++, tp_str(p, r->type), NULL);
		for (int k = 0; k < 4; k++)
			xl_num(x, s, row, c++, (double)r->in[k], x->f.cyc);
		for (int k = 0; k < 4; k++)
			xl_num(x, s, row, c++, (double)r->out[k], x->f.cyc);
		for (int k = 0; k < 8; k++)
			xl_num(x, s, row, c++, r->geo[k], x->f.cyc);
		xl_num(x, s, row, c++, (double)r->in_bytes, x->f.cyc);
		xl_num(x, s, row, c++, (double)r->out_bytes, x->f.cyc);
		c = sums_cells(x, s, row, c, &r->s);
		xl_num(x, s, row, c++, r->load_gibps, x->f.gbps);
		xl_num(x, s, row, c++, r->store_gibps, x->f.gbps);
		if (r->is_global) {
			xl_num(x, s, row, c, r->total_us, x->f.us);
			xl_num(x, s, row, (uint16_t)(c + 1), r->actual_tops, x->f.real);
			xl_num(x, s, row, (uint16_t)(c + 2), r->parallelism, x->f.pct);
			xl_num(x, s, row, (uint16_t)(c + 3), r->concurrency, x->f.pct);
		}
		c = (uint16_t)(c + 4);
		xl_str(x, s, row, c, tp_ltab_bound_name((enum tp_ltab_bound)r->bound), NULL);
	}
}

void xl_write_ltab(struct xl *x, lxw_worksheet *ws)
{
	const struct tp_ltab *t = x->a->ltab;
	struct xl_sheet s = {.ws = ws};
	static const char *const h[] = {"LayerID",
	                                "Type",
	                                "Function",
	                                "in",
	                                "ic",
	                                "ih",
	                                "iw",
	                                "on",
	                                "oc",
	                                "oh",
	                                "ow",
	                                "kh",
	                                "kw",
	                                "KStrideH",
	                                "KStrideW",
	                                "PadUp",
	                                "PadDown",
	                                "PadLeft",
	                                "PadRight",
	                                "inputBytes",
	                                "outputBytes",
	                                SUMS_COLS,
	                                "LoadAvgBandwidth(GiB/s)",
	                                "StoreAvgBandwidth(GiB/s)",
	                                "totalTime(us)",
	                                "ActualTops",
	                                "Parallelism",
	                                "Concurrency",
	                                "Bound"};
	xl_str(x, &s, 0, 0,
	       "Layers by TIU time (the vendor's layer.csv): shapes of the first input and output, "
	       "kernel / strides / padding of the conv and pool commands, bytes per DDR direction, "
	       "GDMA and TIU time with their theoretical times; span, ActualTops, Parallelism and "
	       "Concurrency for global layers.",
	       x->f.bold);
	xl_header_row(x, &s, 2, h, sizeof h / sizeof *h);
	if (xl_defer_rows(x, &s, 3, t->num_rows, ltab_rows_emit, NULL, NULL) != TP_OK)
		return;
	uint32_t row = 3 + (uint32_t)t->num_rows;
	worksheet_freeze_panes(ws, 3, 1);
	xl_check(x, worksheet_autofilter(ws, 2, 0, row > 3 ? row - 1 : 2,
	                                 (uint16_t)(sizeof h / sizeof *h - 1)));
}

static void whatif_rows(struct xl *x, struct xl_sheet *s, const struct tp_ltab *t, uint32_t row)
{
	static const char *const h[] = {"Case",      "TIU before(us)", "TIU after(us)", "Saved(us)",
	                                "Total(us)", "Concurrency",    "macUtil"};
	xl_str(x, s, row++, 0,
	       "What if: TIU and GDMA overlapped fully (the longer engine is the total), then each "
	       "Function's TIU time at the model's / its own PeakTops, cumulatively (the vendor's "
	       "mac_util.csv; macUtil = net_stat.sim flops at the model's peak / total).",
	       x->f.bold);
	xl_header_row(x, s, row++, h, sizeof h / sizeof *h);
	int cost = t->overall.uarch_ops > 0;
	char lab[96];
	for (size_t i = 0; i < t->num_whatif; i++, row++) {
		const struct tp_ltab_whatif *w = &t->whatif[i];
		if (w->kind == TP_LTC_ORIGIN)
			snprintf(lab, sizeof lab, "origin");
		else if (w->kind == TP_LTC_OVERLAP)
			snprintf(lab, sizeof lab, "100%% Concurrency");
		else
			snprintf(lab, sizeof lab, "%s at %s PeakTops", tp_ltab_func_name(w->func),
			         w->kind == TP_LTC_MODEL_PEAK ? "Model" : "Layer");
		xl_str(x, s, row, 0, lab, NULL);
		if (w->kind >= TP_LTC_MODEL_PEAK) {
			if (!cost) {
				xl_str(x, s, row, 1, "n/a (no TIU cost model)", NULL);
				continue;
			}
			xl_num(x, s, row, 1, w->tiu_before_us, x->f.us);
			xl_num(x, s, row, 2, w->tiu_after_us, x->f.us);
		}
		xl_num(x, s, row, 3, w->reduced_us, x->f.us);
		xl_num(x, s, row, 4, w->total_us, x->f.us);
		xl_num(x, s, row, 5, w->concurrency, x->f.pct);
		if (t->flops > 0)
			xl_num(x, s, row, 6, w->mac_util, x->f.pct);
	}
}

void xl_write_whatif(struct xl *x, lxw_worksheet *ws)
{
	const struct tp_ltab *t = x->a->ltab;
	const struct tp_profile *p = x->p;
	struct xl_sheet s = {.ws = ws};
	static const char *const h[] = {"Function", SUMS_COLS, "LayerTypes"};
	xl_str(x, &s, 0, 0, "Layer Functions (the vendor's summary.csv).", x->f.bold);
	xl_header_row(x, &s, 1, h, sizeof h / sizeof *h);
	uint32_t row = 2;
	for (size_t k = 0; k <= t->num_funcs; k++, row++) {
		const struct tp_ltab_func_row *f = k < t->num_funcs ? &t->funcs[k] : NULL;
		xl_str(x, &s, row, 0, f ? tp_ltab_func_name(f->func) : "Overall", NULL);
		uint16_t c = sums_cells(x, &s, row, 1, f ? &f->s : &t->overall);
		char types[512] = "";
		size_t n = 0;
		for (size_t i = 0; f && i < f->num_types && n < sizeof types; i++)
			n += (size_t)snprintf(types + n, sizeof types - n, "%s%s", i ? "," : "",
			                      tp_str(p, f->types[i]));
		xl_str(x, &s, row, c, types, NULL);
	}
	row++;
	xl_str(x, &s, row, 0, "Overall total time(us)", NULL);
	xl_num(x, &s, row, 1, t->total_us, x->f.us);
	xl_str(x, &s, ++row, 0, "Parallelism", NULL);
	xl_num(x, &s, row, 1, t->parallelism, x->f.pct);
	xl_str(x, &s, ++row, 0, "Concurrency", NULL);
	xl_num(x, &s, row, 1, t->concurrency, x->f.pct);
	xl_str(x, &s, ++row, 0, "FPS (1e6 / TIU time)", NULL);
	xl_num(x, &s, row, 1, t->fps, x->f.real);
	if (t->overall.peak_tops > 0)
		whatif_rows(x, &s, t, row + 2);
	xl_sheet_done(x, &s);
}
