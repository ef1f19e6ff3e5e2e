/*
 * ops.c — the Operators sheet of the workbook for tpuprof captures. It mirrors ops.csv
 * (src/writers/opscsv, docs/ops-csv.md): the same operator table (tp_op_table_build: one row per
 * (name, op_type), mean latency over non-warm-up executions), the same perf-ratio table
 * (built-in or --sparse-ratios) and the same eligibility rule — but the sparse what-if of the
 * Neural Engine CSV (neural-engine-cambricon.md §A.2) is written as live Excel formulas: the
 * user edits a ratio cell or an operator's aim sparsity and the aim latencies and totals
 * move. Every formula also carries the value tpuprof computed, so viewers that do not
 * recalculate show the same numbers as ops.csv.
 *
 * Owns nothing beyond one call.
 */
#include "writers/xlsx/xlsx_int.h"

#include "writers/opscsv/opscsv.h"

#include <stdlib.h>
#include <string.h>

int xl_ops_present(const struct tp_profile *p)
{
	uint32_t op;
	if (!tp_strtab_find(&p->strs, TP_CAP_TYPE_OP, strlen(TP_CAP_TYPE_OP), &op))
		return 0;
	for (size_t i = 0; i < p->num_tracks; i++)
		for (size_t k = 0; k < p->tracks[i].count; k++)
			if (tp_slice_type(&p->tracks[i], &p->tracks[i].slices[k]) == op)
				return 1;
	return 0;
}

/* Numeric shape order (std::map over the dims, as ops.csv and the reference sort). */
static int shape_cmp(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;
	while (*a && *b) {
		uint64_t va = 0, vb = 0;
		size_t na = strcspn(a, "x"), nb = strcspn(b, "x");
		if (tp_parse_u64(a, na, &va))
			va = 0;
		if (tp_parse_u64(b, nb, &vb))
			vb = 0;
		if (va != vb)
			return va < vb ? -1 : 1;
		a += na + (a[na] == 'x');
		b += nb + (b[nb] == 'x');
		if (!*a || !*b)
			break;
	}
	if (!*a != !*b)
		return !*a ? -1 : 1;
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static double ms(double ns)
{
	return ns / 1e6;
}

/* The distinct weight shapes of the sparse-eligible operators of `t`, in shape order, into
 * shapes[0..*n) (shapes holds t->count entries). */
static void weight_shapes(const struct tp_profile *p, const struct tp_op_table *t,
                          const char **shapes, size_t *n)
{
	size_t nshapes = tp_opscsv_weight_shapes(p, t, shapes);
	if (nshapes) /* shapes is NULL for an empty table: qsort(NULL, 0) is undefined */
		qsort(shapes, nshapes, sizeof *shapes, shape_cmp);
	*n = nshapes;
}

/* Rows 0-1 (title, note) and the ratio table from row RATIO_ROW0 on: one editable row per
 * weight shape. Returns the operator table's header row. */
#define RATIO_ROW0 3u
static uint32_t ratio_table(struct xl *x, struct xl_sheet *s, const struct tp_sparse_ratios *rt,
                            const char *ratios_path, const char **shapes, size_t nshapes)
{
	xl_str(x, s, 0, 0, "Operators: the ops.csv table with a live sparse what-if", x->f.title);
	char note[400];
	snprintf(
	    note, sizeof note,
	    "Edit the yellow cells: a weight shape's perf ratio (how many times faster the 4x1 "
	    "sparse kernel is at 90/80/70%% zero weights; 'others' for any other aim) or an "
	    "operator's aim sparse ratio; aim latencies and totals recalculate. Ratios: %s. "
	    "Latency = mean over non-warm-up executions.",
	    ratios_path ? ratios_path : "built-in examples (docs/sparse-ratios.md)");
	xl_str(x, s, 1, 0, note, x->f.note);
	if (s->wcap)
		s->width[0] = 0;
	static const char *const rh[] = {
	    "weight shape", "90% 4x1 perf ratio", "80% 4x1 perf ratio", "70% 4x1 perf ratio",
	    "others",       "ratio source"};
	xl_header_row(x, s, 2, rh, 6);
	for (size_t j = 0; j < nshapes; j++) {
		uint32_t row = RATIO_ROW0 + (uint32_t)j;
		const struct tp_sparse_ratio_row *rr = tp_sparse_ratios_lookup(rt, shapes[j]);
		xl_str(x, s, row, 0, shapes[j], NULL);
		for (uint16_t c = 0; c < 4; c++)
			xl_num(x, s, row, (uint16_t)(c + 1), rr->ratio[c], x->f.input);
		char src[64];
		if (rr->line)
			snprintf(src, sizeof src, "file line %lu%s", rr->line,
			         rr->shape[0] == '*' ? " (*)" : "");
		else
			snprintf(src, sizeof src, "built-in%s", rr->shape[0] == '*' ? " (*)" : "");
		xl_str(x, s, row, 5, src, NULL);
	}
	if (!nshapes)
		xl_str(x, s, RATIO_ROW0, 0, "(no sparse-eligible operator)", x->f.note);
	return RATIO_ROW0 + (uint32_t)(nshapes ? nshapes : 1) + 1;
}

/* Columns of the operator table are those of ops.csv (A..T), so M is the mean latency, N the
 * aim, O the ratio, P the aim latency, as in the Neural Engine CSV. */
enum { C_SUP = 11, C_M = 12, C_N = 13, C_O = 14, C_P = 15 };
static const char *const op_hdr[] = {"operator type",
                                     "post op",
                                     "operator name",
                                     "input tensor name",
                                     "input shape",
                                     "input dtype",
                                     "output tensor name",
                                     "output shape",
                                     "output dtype",
                                     "weight shape",
                                     "weight sparse ratio",
                                     "sparse support",
                                     "operator latency mean(ms)",
                                     "aim to weight sparse ratio",
                                     "sparse kernel pref ratio",
                                     "aim to sparse latency(ms)",
                                     "operator latency min(ms)",
                                     "operator latency max(ms)",
                                     "operator latency p99(ms)",
                                     "executions"};

/* Latency sums over the operators, ms: all and sparse-eligible, mean (M) and aim (P). */
struct op_sums {
	double m, p, me, pe;
};

/* The aim columns N, O, P of a sparse-eligible operator less than half sparse, as live
 * formulas over its ratio row; returns P's value. */
static double aim_cells(struct xl *x, struct xl_sheet *s, uint32_t row, const char *w, double m,
                        const struct tp_sparse_ratios *rt, const char **shapes, size_t nshapes)
{
	unsigned er = row + 1; /* Excel's 1-based row */
	char f[512];
	const struct tp_sparse_ratio_row *rr = tp_sparse_ratios_lookup(rt, w);
	double ratio = tp_sparse_ratio_at(rr, rt->aim_pct);
	unsigned q = 0;
	for (size_t j = 0; j < nshapes; j++)
		if (!strcmp(shapes[j], w))
			q = RATIO_ROW0 + (unsigned)j + 1;
	xl_num(x, s, row, C_N, rt->aim_pct / 100.0, x->f.input);
	snprintf(f, sizeof f, "=IF(N%u=0.9,$B$%u,IF(N%u=0.8,$C$%u,IF(N%u=0.7,$D$%u,$E$%u)))", er, q,
	         er, q, er, q, q);
	xl_formula(x, s, row, C_O, f, ratio, x->f.real);
	double pv = ratio > 0 ? m / ratio : m;
	snprintf(f, sizeof f, "=IF(O%u>0,M%u/O%u,M%u)", er, er, er, er);
	xl_formula(x, s, row, C_P, f, pv, x->f.ms);
	return pv;
}

/* One operator row; adds its latencies to *sum. */
static void operator_row(struct xl *x, struct xl_sheet *s, uint32_t row, const struct tp_op_row *o,
                         const struct tp_sparse_ratios *rt, const char **shapes, size_t nshapes,
                         struct op_sums *sum)
{
	const struct tp_profile *p = x->p;
	uint32_t a = o->args;
	xl_str(x, s, row, 0, tp_str(p, o->op_type), NULL);
	xl_str(x, s, row, 1, tp_op_arg_str(p, a, TP_CAP_KEY_POST_OP), NULL);
	xl_str(x, s, row, 2, tp_str(p, o->name), NULL);
	xl_str(x, s, row, 3, tp_op_arg_str(p, a, TP_CAP_KEY_INPUTS), NULL);
	xl_str(x, s, row, 4, tp_op_arg_str(p, a, TP_CAP_KEY_INPUT_SHAPES), NULL);
	xl_str(x, s, row, 5, tp_op_arg_str(p, a, TP_CAP_KEY_INPUT_DTYPES), NULL);
	xl_str(x, s, row, 6, tp_op_arg_str(p, a, TP_CAP_KEY_OUTPUTS), NULL);
	xl_str(x, s, row, 7, tp_op_arg_str(p, a, TP_CAP_KEY_OUTPUT_SHAPES), NULL);
	xl_str(x, s, row, 8, tp_op_arg_str(p, a, TP_CAP_KEY_OUTPUT_DTYPES), NULL);
	const char *w = tp_op_arg_str(p, a, TP_CAP_KEY_WEIGHT_SHAPE);
	xl_str(x, s, row, 9, w, NULL);
	const struct tp_arg *sp = tp_op_arg(p, a, TP_CAP_KEY_WEIGHT_SPARSITY);
	double sparsity = 0;
	if (sp && sp->type == TP_ARG_REAL && w[0]) {
		sparsity = sp->v.d;
		xl_num(x, s, row, 10, sparsity, x->f.pct);
	}
	/* A real boolean, so SUMIF(...,TRUE,...) matches it in Excel and LibreOffice. */
	if (o->sparse_eligible)
		xl_check(x, worksheet_write_boolean(s->ws, row, C_SUP, 1, NULL));
	int have = o->runs > 0;
	double m = have ? ms(o->mean_ns) : 0, pv = m;
	if (have)
		xl_num(x, s, row, C_M, m, x->f.ms);
	if (o->sparse_eligible && sparsity < 0.5) {
		/* An operator already at least half sparse keeps P = M (ops.csv, §A.2). */
		pv = aim_cells(x, s, row, w, m, rt, shapes, nshapes);
	} else {
		char f[32];
		snprintf(f, sizeof f, "=M%u", row + 1);
		xl_formula(x, s, row, C_P, f, pv, x->f.ms);
	}
	if (have) {
		xl_num(x, s, row, 16, ms((double)o->min_ns), x->f.ms);
		xl_num(x, s, row, 17, ms((double)o->max_ns), x->f.ms);
		xl_num(x, s, row, 18, ms((double)o->p99_ns), x->f.ms);
		sum->m += m;
		sum->p += pv;
		if (o->sparse_eligible) {
			sum->me += m;
			sum->pe += pv;
		}
	}
	xl_num(x, s, row, 19, (double)o->runs, x->f.cyc);
}

/* A label in column `lcol` and a formula with its computed value in column `vcol`. */
static void total_cell(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t lcol,
                       const char *label, uint16_t vcol, const char *f, double v, lxw_format *fmt)
{
	xl_str(x, s, row, lcol, label, x->f.bold);
	xl_formula(x, s, row, vcol, f, v, fmt);
}

/* Totals as in ops.csv from row tr: labels in L and O, values in M and P, "sparse improve" in
 * Q/R, over the operator rows r0..rl (0-based). */
static void op_totals(struct xl *x, struct xl_sheet *s, uint32_t r0, uint32_t rl, uint32_t tr,
                      const struct op_sums *sum)
{
	const unsigned e0 = r0 + 1, e1 = rl + 1, et = tr + 1;
	char f[512];
	snprintf(f, sizeof f, "=SUM(M%u:M%u)", e0, e1);
	total_cell(x, s, tr, 11, "total latency(ms)", C_M, f, sum->m, x->f.ms);
	snprintf(f, sizeof f, "=SUM(P%u:P%u)", e0, e1);
	total_cell(x, s, tr, 14, "total aim to sparse latency(ms)", C_P, f, sum->p, x->f.ms);
	snprintf(f, sizeof f, "=IF(P%u>0,M%u/P%u,0)", et, et, et);
	total_cell(x, s, tr, 16, "sparse improve", 17, f, sum->p > 0 ? sum->m / sum->p : 0,
	           x->f.real);
	snprintf(f, sizeof f, "=SUMIF(L%u:L%u,TRUE,M%u:M%u)", e0, e1, e0, e1);
	total_cell(x, s, tr + 1, 11, "sparse support latency(ms)", C_M, f, sum->me, x->f.ms);
	snprintf(f, sizeof f, "=SUMIF(L%u:L%u,TRUE,P%u:P%u)", e0, e1, e0, e1);
	total_cell(x, s, tr + 1, 14, "aim to sparse support latency(ms)", C_P, f, sum->pe, x->f.ms);
	snprintf(f, sizeof f, "=IF(M%u>0,M%u/M%u,0)", et, et + 1, et);
	total_cell(x, s, tr + 2, 11, "sparse support latency ratio", C_M, f,
	           sum->m > 0 ? sum->me / sum->m : 0, x->f.real);
	snprintf(f, sizeof f, "=IF(P%u>0,P%u/P%u,0)", et, et + 1, et);
	total_cell(x, s, tr + 2, 14, "aim to sparse support latency ratio", C_P, f,
	           sum->p > 0 ? sum->pe / sum->p : 0, x->f.real);
}

int xl_ops_write(struct xl *x, lxw_worksheet *ws, const char *ratios_path, struct tp_diag *d)
{
	const struct tp_profile *p = x->p;
	struct xl_sheet s = {.ws = ws};
	struct tp_op_table own;
	const struct tp_op_table *t = &own;
	struct tp_sparse_ratios rt;
	const char **shapes = NULL;
	size_t nshapes = 0;
	int st;
	memset(&own, 0, sizeof own);
	st = ratios_path ? tp_sparse_ratios_load(&rt, ratios_path, d)
	                 : tp_sparse_ratios_defaults(&rt);
	if (st != TP_OK)
		return st;
	if ((st = tp_op_table_for(p, x->a, &own, &t)) != TP_OK)
		goto out;
	if (t->count && !(shapes = tp_calloc(t->count, sizeof *shapes))) {
		st = TP_ENOMEM;
		goto out;
	}
	weight_shapes(p, t, shapes, &nshapes);

	/* Layout (0-based rows): 0 title, 1 note, 2 ratio header, 3.. ratio rows, blank,
	 * operator header, operators, blank, totals. */
	const uint32_t hr = ratio_table(x, &s, &rt, ratios_path, shapes, nshapes);
	xl_header_row(x, &s, hr, op_hdr, sizeof op_hdr / sizeof *op_hdr);
	const uint32_t r0 = hr + 1;
	struct op_sums sum = {0};
	for (size_t i = 0; i < t->count; i++) {
		operator_row(x, &s, r0 + (uint32_t)i, &t->rows[i], &rt, shapes, nshapes, &sum);
		if (x->err != LXW_NO_ERROR || x->oom)
			break;
	}
	const uint32_t rl = r0 + (uint32_t)(t->count ? t->count : 1) - 1, tr = rl + 2;
	/* constant_memory: the filter must be set before rows below its range are written. */
	xl_check(
	    x, worksheet_autofilter(ws, hr, 0, rl, (uint16_t)(sizeof op_hdr / sizeof *op_hdr - 1)));
	op_totals(x, &s, r0, rl, tr, &sum);

	worksheet_freeze_panes(ws, r0, 0);
	worksheet_set_tab_color(ws, 0x4472C4);
	xl_sheet_done(x, &s);
out:
	tp_free(shapes);
	tp_op_table_free(&own);
	tp_sparse_ratios_free(&rt);
	if (st == TP_OK && x->oom)
		st = TP_ENOMEM;
	return st;
}
