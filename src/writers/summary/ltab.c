/*
 * ltab.c — the layer table's sections of the summary (src/analysis/ltab.h): in summary.txt the
 * longest layers by TIU time, the per-Function table and the what-if rows; in summary.json all
 * of them (layers up to TP_ANALYSIS_TOP_LAYERS, longest first) under "layer_table".
 */
#include <stdio.h>

#include "writers/summary/summary_int.h"

#define TEXT_LAYERS 10

static void pct(char *dst, size_t n, double v)
{
	snprintf(dst, n, "%.2f%%", v * 100);
}

/* "n/a" without the cost model's figures. */
static void ops_text(const struct tp_ltab_sums *s, int cost, char *ops, char *rate, size_t n)
{
	if (!cost || !s->uarch_ops) {
		snprintf(ops, n, "%s", cost ? "0" : "n/a");
		snprintf(rate, n, "n/a");
		return;
	}
	snprintf(ops, n, "%llu", (unsigned long long)s->alg_ops);
	pct(rate, n, (double)s->alg_ops / (double)s->uarch_ops);
}

/* PeakTops and the TIU time at the peak as text: "-" on chips without the vendor's peak table
 * (there is no such figure), "n/a" for the time without the cost model's Alg Ops (the figure
 * exists but the dump does not give it). */
static void peak_text(const struct tp_ltab_sums *s, int cost, char *peak, char *theo, size_t n)
{
	if (s->peak_tops <= 0) {
		snprintf(peak, n, "-");
		snprintf(theo, n, "-");
		return;
	}
	snprintf(peak, n, "%.1f", s->peak_tops);
	snprintf(theo, n, cost ? "%.3f" : "n/a", s->tiu.theo_us);
}

static void layers_text(const struct tp_profile *p, const struct tp_ltab *t, int cost,
                        struct tp_buf *b)
{
	tp_buf_printf(b,
	              "\nLayer table (%zu layers with commands; the %d longest by TIU time; all in "
	              "summary.json)\n",
	              t->num_rows, t->num_rows < TEXT_LAYERS ? (int)t->num_rows : TEXT_LAYERS);
	tp_buf_printf(
	    b, "%8s | %-12s | %-6s | %-8s | %-11s | %10s | %10s | %7s | %12s | %9s | %8s | %5s\n",
	    "LayerId", "Type", "Scope", "Function", "DataType", "GDMA(us)", "TIU(us)", "TIU%",
	    "AlgOps", "uArchRate", "PeakTops", "Bound");
	char dt[64], ops[32], rate[32], r3[32], pk[32], th[32];
	for (size_t i = 0; i < t->num_rows && i < TEXT_LAYERS; i++) {
		const struct tp_ltab_row *r = &t->rows[i];
		tp_ltab_dtypes(&r->s, ",", dt, sizeof dt);
		peak_text(&r->s, cost, pk, th, sizeof pk);
		ops_text(&r->s, cost, ops, rate, sizeof ops);
		pct(r3, sizeof r3, r->s.tiu.ratio);
		tp_buf_printf(
		    b,
		    "%8d | %-12s | %-6s | %-8s | %-11s | %10.3f | %10.3f | %7s | %12s | %9s | "
		    "%8s | %5s\n",
		    r->id, tp_str(p, r->type), r->is_global ? "global" : "local",
		    tp_ltab_func_name(r->func), dt, r->s.gdma.us, r->s.tiu.us, r3, ops, rate, pk,
		    tp_ltab_bound_name((enum tp_ltab_bound)r->bound));
	}
}

static void funcs_text(const struct tp_ltab *t, int cost, struct tp_buf *b)
{
	tp_buf_puts(b, "\nLayer functions (the vendor's summary.csv rows)\n");
	tp_buf_printf(b, "%-9s | %10s | %7s | %8s | %10s | %7s | %12s | %9s | %8s | %13s\n",
	              "Function", "GDMA(us)", "GDMA%", "DdrRate", "TIU(us)", "TIU%", "AlgOps",
	              "uArchRate", "PeakTops", "TIUTheory(us)");
	char g[32], ddr[32], tr[32], ops[32], rate[32], pk[32], th[32];
	for (size_t k = 0; k <= t->num_funcs; k++) {
		const struct tp_ltab_sums *s = k < t->num_funcs ? &t->funcs[k].s : &t->overall;
		peak_text(s, cost, pk, th, sizeof pk);
		pct(g, sizeof g, s->gdma.ratio);
		if (s->gdma.us > 0)
			pct(ddr, sizeof ddr, tp_ltab_theo_rate(&s->gdma));
		else
			snprintf(ddr, sizeof ddr, "-");
		pct(tr, sizeof tr, s->tiu.ratio);
		ops_text(s, cost, ops, rate, sizeof ops);
		tp_buf_printf(
		    b, "%-9s | %10.3f | %7s | %8s | %10.3f | %7s | %12s | %9s | %8s | %13s\n",
		    k < t->num_funcs ? tp_ltab_func_name(t->funcs[k].func) : "Overall", s->gdma.us,
		    g, ddr, s->tiu.us, tr, ops, rate, pk, th);
	}
}

static void whatif_label(const struct tp_ltab_whatif *w, char *dst, size_t n)
{
	switch (w->kind) {
	case TP_LTC_ORIGIN:
		snprintf(dst, n, "as measured");
		break;
	case TP_LTC_OVERLAP:
		snprintf(dst, n, "TIU and GDMA overlapped 100%%");
		break;
	default:
		snprintf(dst, n, "%s TIU %.2f -> %.2f us (%s peak)", tp_ltab_func_name(w->func),
		         w->tiu_before_us, w->tiu_after_us,
		         w->kind == TP_LTC_MODEL_PEAK ? "model" : "own");
	}
}

static void whatif_text(const struct tp_ltab *t, int cost, struct tp_buf *b)
{
	tp_buf_puts(b,
	            "\nWhat if (the vendor's mac_util.csv; each peak series is cumulative from the "
	            "100% overlap row)\n");
	tp_buf_printf(b, "%-44s | %12s | %12s | %11s | %9s\n", "Case", "Total(us)", "Saved(us)",
	              "Concurrency", "MacUtil");
	char lab[96], c[32], m[32];
	for (size_t i = 0; i < t->num_whatif; i++) {
		const struct tp_ltab_whatif *w = &t->whatif[i];
		if (!cost && w->kind >= TP_LTC_MODEL_PEAK) {
			tp_buf_puts(b,
			            "(each Function at the peak: n/a, no TIU cost model for this "
			            "dump)\n");
			break;
		}
		whatif_label(w, lab, sizeof lab);
		pct(c, sizeof c, w->concurrency);
		if (t->flops > 0)
			pct(m, sizeof m, w->mac_util);
		else
			snprintf(m, sizeof m, "n/a");
		tp_buf_printf(b, "%-44s | %12.3f | %12.3f | %11s | %9s\n", lab, w->total_us,
		              w->reduced_us, c, m);
	}
}

void tp_summary_ltab_text(const struct tp_profile *p, const struct tp_ltab *t, struct tp_buf *b)
{
	int cost = t->overall.uarch_ops > 0;
	layers_text(p, t, cost, b);
	funcs_text(t, cost, b);
	/* The what-if rows need a peak: only the chips with the vendor's peak table have one. */
	if (t->overall.peak_tops > 0)
		whatif_text(t, cost, b);
}

/* An engine's fields, named <eng>_cycles, _us, _time_pct and _theory_us. */
static void eng_json(struct tp_buf *b, int *f, const char *eng, const struct tp_ltab_eng *e)
{
	char k[32];
	snprintf(k, sizeof k, "%s_cycles", eng);
	jint(b, f, k, e->cycles);
	snprintf(k, sizeof k, "%s_us", eng);
	jnum(b, f, k, e->us, 3);
	snprintf(k, sizeof k, "%s_time_pct", eng);
	jnum(b, f, k, e->ratio * 100, 3);
	snprintf(k, sizeof k, "%s_theory_us", eng);
	jnum(b, f, k, e->theo_us, 6);
}

/* The fields every row kind shares. */
static void sums_json(struct tp_buf *b, int *f, const struct tp_ltab_sums *s)
{
	jint(b, f, "weight_bytes", s->weight_bytes);
	jint(b, f, "s2l_bytes", s->s2l_bytes);
	jint(b, f, "l2s_bytes", s->l2s_bytes);
	jint(b, f, "s2s_bytes", s->s2s_bytes);
	eng_json(b, f, "gdma", &s->gdma);
	jnum(b, f, "ddr_rate_pct", tp_ltab_theo_rate(&s->gdma) * 100, 3);
	jint(b, f, "alg_ops", s->alg_ops);
	jint(b, f, "uarch_ops", s->uarch_ops);
	jnum(b, f, "uarch_rate_pct",
	     s->uarch_ops ? (double)s->alg_ops / (double)s->uarch_ops * 100 : 0, 3);
	eng_json(b, f, "tiu", &s->tiu);
	jnum(b, f, "peak_tops", s->peak_tops, 3);
	jkey(b, f, "data_types");
	tp_buf_putc(b, '[');
	for (unsigned i = 0; i < s->num_dt; i++)
		tp_buf_printf(b, "%s\"%s\"", i ? "," : "", tp_dtype_name((enum tp_dtype)s->dt[i]));
	tp_buf_putc(b, ']');
}

static void ints_json(struct tp_buf *b, int *f, const char *k, const int64_t *v, int n)
{
	jkey(b, f, k);
	tp_buf_putc(b, '[');
	for (int i = 0; i < n; i++)
		tp_buf_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
	tp_buf_putc(b, ']');
}

static void row_json(const struct tp_profile *p, const struct tp_ltab_row *r, struct tp_buf *b)
{
	int f = 1;
	int64_t g[8];
	for (int k = 0; k < 8; k++)
		g[k] = r->geo[k];
	tp_buf_putc(b, '{');
	jint(b, &f, "layer_id", (uint64_t)(int64_t)r->id);
	jstr(b, &f, "type", tp_str(p, r->type));
	jstr(b, &f, "scope", r->is_global ? "global" : "local");
	jstr(b, &f, "function", tp_ltab_func_name(r->func));
	ints_json(b, &f, "in_nchw", r->in, 4);
	ints_json(b, &f, "out_nchw", r->out, 4);
	ints_json(b, &f, "kernel_hw", g, 2);
	ints_json(b, &f, "stride_hw", g + 2, 2);
	ints_json(b, &f, "pad_udlr", g + 4, 4);
	jint(b, &f, "input_bytes", r->in_bytes);
	jint(b, &f, "output_bytes", r->out_bytes);
	sums_json(b, &f, &r->s);
	jnum(b, &f, "load_gib_per_s", r->load_gibps, 3);
	jnum(b, &f, "store_gib_per_s", r->store_gibps, 3);
	if (r->is_global) {
		jnum(b, &f, "total_us", r->total_us, 3);
		jnum(b, &f, "actual_tops", r->actual_tops, 6);
		jnum(b, &f, "parallelism_pct", r->parallelism * 100, 3);
		jnum(b, &f, "concurrency_pct", r->concurrency * 100, 3);
	}
	jstr(b, &f, "bound", tp_ltab_bound_name((enum tp_ltab_bound)r->bound));
	tp_buf_putc(b, '}');
}

static void whatif_json(const struct tp_ltab *t, struct tp_buf *b)
{
	static const char *const kinds[] = {"origin", "overlap_100pct", "model_peak", "own_peak"};
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < t->num_whatif; i++) {
		const struct tp_ltab_whatif *w = &t->whatif[i];
		int f = 1;
		tp_buf_puts(b, i ? ",{" : "{");
		jstr(b, &f, "case", kinds[w->kind]);
		if (w->kind >= TP_LTC_MODEL_PEAK) {
			jstr(b, &f, "function", tp_ltab_func_name(w->func));
			jnum(b, &f, "tiu_before_us", w->tiu_before_us, 6);
			jnum(b, &f, "tiu_after_us", w->tiu_after_us, 6);
		}
		jnum(b, &f, "total_us", w->total_us, 6);
		jnum(b, &f, "saved_us", w->reduced_us, 6);
		jnum(b, &f, "concurrency_pct", w->concurrency * 100, 3);
		jnum(b, &f, "mac_util_pct", w->mac_util * 100, 3);
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
}

void tp_summary_ltab_json(const struct tp_profile *p, const struct tp_ltab *t, struct tp_buf *b)
{
	int f = 1;
	tp_buf_putc(b, '{');
	jint(b, &f, "layers_total", t->num_rows);
	jkey(b, &f, "layers");
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < t->num_rows && i < TP_ANALYSIS_TOP_LAYERS; i++) {
		if (i)
			tp_buf_putc(b, ',');
		row_json(p, &t->rows[i], b);
	}
	tp_buf_putc(b, ']');
	jkey(b, &f, "functions");
	tp_buf_putc(b, '[');
	for (size_t k = 0; k < t->num_funcs; k++) {
		int g = 1;
		tp_buf_puts(b, k ? ",{" : "{");
		jstr(b, &g, "function", tp_ltab_func_name(t->funcs[k].func));
		sums_json(b, &g, &t->funcs[k].s);
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
	jkey(b, &f, "overall");
	int g = 1;
	tp_buf_putc(b, '{');
	sums_json(b, &g, &t->overall);
	jnum(b, &g, "total_us", t->total_us, 3);
	jnum(b, &g, "parallelism_pct", t->parallelism * 100, 3);
	jnum(b, &g, "concurrency_pct", t->concurrency * 100, 3);
	jnum(b, &g, "fps", t->fps, 3);
	tp_buf_putc(b, '}');
	if (t->overall.peak_tops > 0) {
		jkey(b, &f, "what_if");
		whatif_json(t, b);
	}
	tp_buf_putc(b, '}');
}
