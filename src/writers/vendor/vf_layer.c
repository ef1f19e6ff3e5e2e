/*
 * vf_layer.c — the legacy chips' (BM1684X, BM1684) layer files of `tpu_profile.py --format
 * layer`: layer.csv (one row per layer), summary.csv (one row per Function and Overall) and
 * mac_util.csv (the what-if rows), from the layer table of src/analysis/ltab.h, in the
 * vendor's columns and number formats (Python's repr for reals, "12.345%" ratios, the csv
 * module's minimal quoting, "\n" line ends). docs/vendor-files.md lists the differences.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ltab.h"
#include "writers/vendor/vendor_int.h"

/* One csv cell: quoted when it holds a comma, quote or line end (the csv module's
 * QUOTE_MINIMAL), with a leading comma unless it is the first of its line. */
static void cell(struct tp_buf *b, int first, const char *s)
{
	if (!first)
		tp_buf_putc(b, ',');
	if (!strpbrk(s, ",\"\r\n")) {
		tp_buf_puts(b, s);
		return;
	}
	tp_buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			tp_buf_putc(b, '"');
		tp_buf_putc(b, *s);
	}
	tp_buf_putc(b, '"');
}

static void cell_u(struct tp_buf *b, uint64_t v)
{
	char t[24];
	snprintf(t, sizeof t, "%llu", (unsigned long long)v);
	cell(b, 0, t);
}

static void cell_i(struct tp_buf *b, int64_t v)
{
	char t[24];
	snprintf(t, sizeof t, "%lld", (long long)v);
	cell(b, 0, t);
}

static void cell_f(struct tp_buf *b, double v)
{
	char t[40];
	vf_pyfloat(t, sizeof t, v);
	cell(b, 0, t);
}

/* A ratio as format(v, ".3%"). */
static void cell_pct(struct tp_buf *b, double v)
{
	char t[48];
	snprintf(t, sizeof t, "%.3f%%", v * 100);
	cell(b, 0, t);
}

/* Python's round(v, nd) printed with repr. */
static void cell_round(struct tp_buf *b, double v, int nd)
{
	char t[48];
	snprintf(t, sizeof t, "%.*f", nd, v);
	cell_f(b, strtod(t, NULL));
}

/* The data types as the vendor prints a Python set ("{'FP16'}", "{'FP32', 'FP16'}"), or
 * joined by commas ("FP32,FP16"). */
static void types_text(const struct tp_ltab_sums *s, int as_set, char *out, size_t n)
{
	size_t k = 0;
	out[0] = 0;
	if (as_set)
		k += (size_t)snprintf(out + k, n - k, "{");
	for (unsigned i = 0; i < s->num_dt && k < n; i++)
		k += (size_t)snprintf(out + k, n - k, as_set ? "%s'%s'" : "%s%s",
		                      i ? (as_set ? ", " : ",") : "", tp_dtype_name(s->dt[i]));
	if (as_set && k < n)
		snprintf(out + k, n - k, "}");
}

/* "ins=[tensor_id=60 [1x28x64x64] FP16  nslice=1 hslice=64,...],outs=[...]". */
static void other_info(const struct tp_ltab *t, const struct tp_ltab_row *r, struct tp_buf *b)
{
	const struct tp_profile *p = t->profile;
	for (int pass = 1; pass >= 0; pass--) {
		tp_buf_puts(b, pass ? "ins=[" : ",outs=[");
		int first = 1;
		for (size_t k = r->tens_first; k < r->tens_first + r->tens_count; k++) {
			if (t->tens[k].is_in != pass)
				continue;
			const struct tp_tensor *x = &p->tensors[t->tens[k].tensor];
			tp_buf_printf(b, "%stensor_id=%lld [", first ? "" : ",", (long long)x->id);
			for (unsigned d = 0; d < x->ndim && d < TP_MAX_DIMS; d++)
				tp_buf_printf(b, "%s%lld", d ? "x" : "", (long long)x->shape[d]);
			tp_buf_printf(b, "] %s %s ", tp_dtype_name((enum tp_dtype)x->dtype),
			              x->is_const ? "CONST" : "");
			if (x->nslice)
				tp_buf_printf(b, "nslice=%u hslice=%u", x->nslice, x->hslice);
			first = 0;
		}
		tp_buf_putc(b, ']');
	}
}

static const char *const layer_cols =
    "LayerID,Type,TPU/CPU,DataType,Function,in,ic,ih,iw,on,oc,oh,ow,kh,kw,KStrideH,KStrideW,"
    "Padding,Other info,inputBytes,outputBytes,weightBytes,s2lBytes,l2sBytes,s2sBytes,"
    "gdmaCycles,gdmaTime(us),gdmaTimeRatio,gdmaPTheoTime(us),ddrRate,LoadAvgBandwidth(GiB/s),"
    "StoreAvgBandwidth(GiB/s),AlgOps,uArchOps,uArchCModelCycles,uArchCModelCycleRatio,"
    "tiuCycles,tiuTime(us),tiuTimeRatio,tiuPTheoTime(us),uArchRate,totalTime(us),PeakTops,"
    "ActualTops,Parallelism,Concurrency\n";

/* An engine's columns in a layer and a Function row: cycles, time, ratio, theoretical time. */
static void eng_cells(struct tp_buf *b, const struct tp_ltab_eng *e, int overall)
{
	cell_u(b, e->cycles);
	cell_f(b, e->us);
	if (overall) /* the Overall row's ratios are the text "100%" */
		cell(b, 0, "100%");
	else
		cell_pct(b, e->ratio);
	cell_f(b, e->theo_us);
}

/* The GDMA columns a layer and a Function row share: gdmaCycles .. ddrRate. */
static void gdma_cells(struct tp_buf *b, const struct tp_ltab_sums *s, int overall)
{
	eng_cells(b, &s->gdma, overall);
	if (s->gdma.us > 0)
		cell_pct(b, tp_ltab_theo_rate(&s->gdma));
	else
		cell(b, 0, "--");
}

static void uarch_rate_cell(struct tp_buf *b, const struct tp_ltab_sums *s)
{
	if (s->uarch_ops)
		cell_pct(b, (double)s->alg_ops / (double)s->uarch_ops);
	else
		cell(b, 0, "--");
}

static void layer_row(const struct tp_ltab *t, const struct tp_ltab_row *r, struct tp_buf *b,
                      struct tp_buf *tmp)
{
	const struct tp_profile *p = t->profile;
	char dt[96];
	snprintf(dt, sizeof dt, "%d", r->id);
	cell(b, 1, dt);
	cell(b, 0, r->is_global ? "global" : "local");
	cell(b, 0, "TPU");
	types_text(&r->s, 1, dt, sizeof dt);
	cell(b, 0, dt);
	cell(b, 0, tp_str(p, r->type));
	for (int k = 0; k < 4; k++)
		cell_i(b, r->in[k]);
	for (int k = 0; k < 4; k++)
		cell_i(b, r->out[k]);
	for (int k = 0; k < 4; k++)
		cell_u(b, r->geo[k]);
	snprintf(dt, sizeof dt, "[%u, %u, %u, %u]", r->geo[4], r->geo[5], r->geo[6], r->geo[7]);
	cell(b, 0, dt);
	tmp->len = 0;
	other_info(t, r, tmp);
	tp_buf_putc(tmp, 0);
	cell(b, 0, tmp->data ? tmp->data : "");
	cell_u(b, r->in_bytes);
	cell_u(b, r->out_bytes);
	cell_u(b, r->s.weight_bytes);
	cell_u(b, r->s.s2l_bytes);
	cell_u(b, r->s.l2s_bytes);
	cell_u(b, r->s.s2s_bytes);
	gdma_cells(b, &r->s, 0);
	cell_f(b, r->load_gibps);
	cell_f(b, r->store_gibps);
	cell_u(b, r->s.alg_ops);
	cell_u(b, r->s.uarch_ops);
	cell_u(b, r->sim_cycles);
	cell_pct(b, t->sim_cycles ? (double)r->sim_cycles / (double)t->sim_cycles : 0);
	eng_cells(b, &r->s.tiu, 0);
	uarch_rate_cell(b, &r->s);
	if (r->is_global)
		cell_f(b, r->total_us);
	else
		cell(b, 0, "");
	cell_f(b, r->s.peak_tops);
	if (!r->is_global) {
		tp_buf_puts(b, ",,,\n");
		return;
	}
	cell_f(b, r->actual_tops);
	cell_pct(b, r->parallelism);
	if (r->s.tiu.cycles && r->s.gdma.cycles)
		cell_pct(b, r->concurrency);
	else
		cell(b, 0, "100%");
	tp_buf_putc(b, '\n');
}

static const char *const summary_cols =
    "Function,weightBytes,s2lBytes,l2sBytes,s2sBytes,gdmaCycles,gdmaTime(us),gdmaTimeRatio,"
    "gdmaPTheoTime(us),ddrRate,AlgOps,AlgOpsRatio,uArchOps,uArchOpsRatio,tiuCycles,tiuTime(us),"
    "tiuTimeRatio,tiuPTheoTime(us),uArchRate,PeakTops,DataTypes,LayerTypes,totalTime(us),"
    "Parallelism,Concurrency,1684x FPS or Token/s\n";

/* A Function row (f != NULL) or the Overall row. */
static void summary_row(const struct tp_ltab *t, const struct tp_ltab_func_row *f, struct tp_buf *b)
{
	const struct tp_ltab_sums *s = f ? &f->s : &t->overall, *all = &t->overall;
	cell(b, 1, f ? tp_ltab_func_name(f->func) : "Overall");
	cell_u(b, s->weight_bytes);
	cell_u(b, s->s2l_bytes);
	cell_u(b, s->l2s_bytes);
	cell_u(b, s->s2s_bytes);
	gdma_cells(b, s, !f);
	cell_u(b, s->alg_ops);
	if (f)
		cell_pct(b, all->alg_ops ? (double)s->alg_ops / (double)all->alg_ops : 0);
	else
		cell(b, 0, "100%");
	cell_u(b, s->uarch_ops);
	if (f)
		cell_pct(b, all->uarch_ops ? (double)s->uarch_ops / (double)all->uarch_ops : 0);
	else
		cell(b, 0, "100%");
	eng_cells(b, &s->tiu, !f);
	uarch_rate_cell(b, s);
	cell_f(b, s->peak_tops);
	char txt[512];
	if (f) {
		types_text(s, 0, txt, sizeof txt);
		cell(b, 0, txt);
		size_t k = 0;
		txt[0] = 0;
		for (size_t i = 0; i < f->num_types && k < sizeof txt; i++)
			k += (size_t)snprintf(txt + k, sizeof txt - k, "%s%s", i ? "," : "",
			                      tp_str(t->profile, f->types[i]));
		cell(b, 0, txt);
		/* The vendor's placeholders: the Function rows have no span of their own. */
		tp_buf_puts(b, ",,0,0,0.0\n");
		return;
	}
	tp_buf_puts(b, ",,");
	cell_f(b, t->total_us);
	cell_pct(b, t->parallelism);
	cell_pct(b, t->concurrency);
	cell_f(b, t->fps);
	tp_buf_putc(b, '\n');
}

/* The what-if rows' remarks, as the vendor writes them. */
static const char *const remark_origin = "排除CPU耗时及输入输出在runtime空间和用户空间的搬运耗时";
static const char *const remark_overlap = "TIU和GDMA的并行度100%";

static void whatif_row(const struct tp_ltab *t, const struct tp_ltab_whatif *w, struct tp_buf *b)
{
	char txt[160];
	switch (w->kind) {
	case TP_LTC_ORIGIN:
		cell(b, 1, "origin");
		break;
	case TP_LTC_OVERLAP:
		cell(b, 1, "100% Concurrency");
		break;
	default:
		snprintf(txt, sizeof txt, "%s tiuTime: %.2f us -> %.2f us",
		         tp_ltab_func_name(w->func), w->tiu_before_us, w->tiu_after_us);
		cell(b, 1, txt);
	}
	cell_f(b, w->reduced_us);
	cell_f(b, w->total_us);
	if (w->kind == TP_LTC_ORIGIN)
		cell_pct(b, w->concurrency);
	else
		cell_f(b, w->concurrency * 100);
	cell_round(b, w->mac_util * 100, w->kind <= TP_LTC_OVERLAP ? 3 : 2);
	switch (w->kind) {
	case TP_LTC_ORIGIN:
		cell(b, 0, remark_origin);
		break;
	case TP_LTC_OVERLAP:
		cell(b, 0, remark_overlap);
		break;
	default:
		snprintf(txt, sizeof txt, "%s的耗时用%sPeakTops得到的理论耗时替换",
		         tp_ltab_func_name(w->func),
		         w->kind == TP_LTC_MODEL_PEAK ? "Model" : "Layer");
		cell(b, 0, txt);
	}
	tp_buf_putc(b, '\n');
	(void)t;
}

static int put_file(const char *dir, const char *name, struct tp_buf *b, size_t *nfiles,
                    struct tp_diag *d)
{
	if (b->oom)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", name);
	int rc = tp_write_buf_file(dir, name, b, d);
	if (rc == TP_OK && nfiles)
		(*nfiles)++;
	return rc;
}

int vf_write_layer_files(const struct vf_ctx *c, const struct tp_analysis *a, const char *dir,
                         size_t *nfiles, struct tp_diag *d)
{
	if (c->fl != VF_LEGACY || !a)
		return TP_OK;
	/* The analysis' table, or one of our own for a net over its layer limit. */
	struct tp_ltab own = {0};
	const struct tp_ltab *tl = a->ltab;
	if (!tl && c->p->num_layers > TP_ANALYSIS_LTAB_MAX) {
		if (tp_ltab_build(c->p, a, &own) != TP_OK)
			return tp_diag_set(d, TP_ENOMEM, "layer.csv: out of memory");
		tl = &own;
	}
	int rc = TP_OK;
	if (!tl || !tl->num_rows)
		goto out; /* the vendor: "No layer infos" */
	const struct tp_ltab t = *tl;
	struct tp_buf b, tmp;
	tp_buf_init(&b);
	tp_buf_init(&tmp);
	tp_buf_puts(&b, summary_cols);
	for (size_t k = 0; k < t.num_funcs; k++)
		summary_row(&t, &t.funcs[k], &b);
	summary_row(&t, NULL, &b);
	rc = put_file(dir, "summary.csv", &b, nfiles, d);
	b.len = 0;
	tp_buf_puts(&b, layer_cols);
	for (size_t i = 0; i < t.num_rows && rc == TP_OK; i++)
		layer_row(&t, &t.rows[i], &b, &tmp);
	if (rc == TP_OK)
		rc = put_file(dir, "layer.csv", &b, nfiles, d);
	b.len = 0;
	tp_buf_puts(&b,
	            "Case,ReducedTime(us),CurrentTotalTime(us),Concurrency(%),macUtil(%),Remark\n");
	for (size_t i = 0; i < t.num_whatif; i++)
		whatif_row(&t, &t.whatif[i], &b);
	if (rc == TP_OK)
		rc = put_file(dir, "mac_util.csv", &b, nfiles, d);
	tp_buf_free(&b);
	tp_buf_free(&tmp);
out:
	tp_ltab_free(&own);
	return rc;
}
