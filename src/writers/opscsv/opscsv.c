/*
 * opscsv.c — the `ops.csv` writer: the perf-ratio table, the operator table and the totals
 * rows in the section layout of the Intel Neural Engine profiler CSV (§A.2 of
 * neural-engine-cambricon.md), but with plain computed numbers instead of formulas that
 * refer to row numbers, the mean latency over non-warm-up executions (plus min, max, p99 and
 * the execution count as extra columns), and every string escaped for CSV. The layout is
 * documented column by column in docs/ops-csv.md. Owns nothing beyond one call.
 */
#include "writers/opscsv/opscsv.h"

#include <stdlib.h>
#include <string.h>

void tp_csv_cell(struct tp_buf *b, const char *s, int from_input)
{
	/* Control bytes other than \t \n \r (which quoting keeps) become U+FFFD: common's
	 * text-safety layer, on the rare slow path. */
	if (!tp_text_is_safe(s, strlen(s), TP_TEXT_CTRL)) {
		struct tp_buf t;
		tp_buf_init(&t);
		tp_text_put(&t, s, strlen(s), TP_TEXT_CTRL, 0, 0);
		if (t.oom)
			b->oom = 1;
		else
			tp_csv_cell(b, t.data ? t.data : "", from_input);
		tp_buf_free(&t);
		return;
	}
	/* Spreadsheets evaluate a cell starting with one of these as a formula (OWASP "CSV
	 * injection"); an apostrophe makes them show it as text and is itself not displayed. */
	int guard = from_input && s[0] && strchr("=+-@\t\r", s[0]) != NULL;
	int quote = strpbrk(s, ",\"\r\n") != NULL;
	if (quote)
		tp_buf_putc(b, '"');
	if (guard)
		tp_buf_putc(b, '\'');
	if (!quote) {
		tp_buf_puts(b, s);
		return;
	}
	for (const char *q = s; *q; q++) {
		if (*q == '"')
			tp_buf_putc(b, '"');
		tp_buf_putc(b, *q);
	}
	tp_buf_putc(b, '"');
}

/* ns as milliseconds with 6 decimals, exact (integer arithmetic). */
static void ns_as_ms(struct tp_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	tp_buf_printf(b, "%s%llu.%06llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000),
	              (unsigned long long)(a % 1000000));
}

/* Parsed "AxBxC" for ordering the ratio table like the reference (numeric, element by
 * element, shorter first on a common prefix: std::map over the shape vector). */
struct shape_key {
	const char *text;
	uint64_t dims[TP_MAX_DIMS];
	int ndim;
};

static void parse_dims(struct shape_key *k)
{
	k->ndim = 0;
	const char *s = k->text;
	while (*s && k->ndim < TP_MAX_DIMS) {
		const char *e = strchr(s, 'x');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		uint64_t v = 0;
		if (tp_parse_u64(s, n, &v))
			v = 0;
		k->dims[k->ndim++] = v;
		if (!e)
			break;
		s = e + 1;
	}
}

static int cmp_shape(const void *x, const void *y)
{
	const struct shape_key *a = x, *b = y;
	for (int i = 0; i < a->ndim && i < b->ndim; i++)
		if (a->dims[i] != b->dims[i])
			return a->dims[i] < b->dims[i] ? -1 : 1;
	if (a->ndim != b->ndim)
		return a->ndim < b->ndim ? -1 : 1;
	return strcmp(a->text, b->text);
}

static void ratio_cell(struct tp_buf *b, double v)
{
	tp_buf_putc(b, ',');
	tp_buf_fixed(b, v, 6);
}

static void put_str(struct tp_buf *b, const char *s)
{
	tp_buf_putc(b, ',');
	tp_csv_cell(b, s, 1);
}

size_t tp_opscsv_weight_shapes(const struct tp_profile *p, const struct tp_op_table *t,
                               const char **shapes)
{
	size_t n = 0;
	for (size_t i = 0; i < t->count; i++) {
		if (!t->rows[i].sparse_eligible)
			continue;
		const char *ws = tp_op_arg_str(p, t->rows[i].args, TP_CAP_KEY_WEIGHT_SHAPE);
		size_t k = 0;
		while (k < n && strcmp(shapes[k], ws) != 0)
			k++;
		if (k == n)
			shapes[n++] = ws;
	}
	return n;
}

/* Section 1: the distinct weight shapes of sparse-eligible operators, in numeric order, with
 * the ratios that apply to them. TP_OK / TP_ENOMEM. */
static int ratio_section(const struct tp_profile *p, const struct tp_op_table *t,
                         const struct tp_sparse_ratios *r, struct tp_buf *out)
{
	struct shape_key *shapes = NULL;
	const char **text = NULL;
	if (t->count && (!(shapes = tp_calloc(t->count, sizeof *shapes)) ||
	                 !(text = tp_calloc(t->count, sizeof *text)))) {
		tp_free(shapes);
		return TP_ENOMEM;
	}
	size_t nshapes = tp_opscsv_weight_shapes(p, t, text);
	for (size_t k = 0; k < nshapes; k++) {
		shapes[k].text = text[k];
		parse_dims(&shapes[k]);
	}
	tp_free(text);
	qsort(shapes, nshapes, sizeof *shapes, cmp_shape);
	tp_buf_puts(out, "weight shape,90% 4x1 perf ratio,80% 4x1 perf ratio,"
	                 "70% 4x1 perf ratio,others,ratio source\n");
	for (size_t k = 0; k < nshapes; k++) {
		const struct tp_sparse_ratio_row *row = tp_sparse_ratios_lookup(r, shapes[k].text);
		tp_csv_cell(out, shapes[k].text, 1);
		for (int c = 0; c < 4; c++)
			ratio_cell(out, row->ratio[c]);
		int star = row->shape[0] == '*';
		if (row->line)
			tp_buf_printf(out, ",file line %lu%s\n", row->line, star ? " (*)" : "");
		else
			tp_buf_printf(out, ",built-in%s\n", star ? " (*)" : "");
	}
	tp_free(shapes);
	return TP_OK;
}

/* Latency sums over the rows of section 2, in ns: every operator (m: measured, p: with the
 * what-if) and the sparse-eligible ones (me, pe). */
struct sums {
	double m, p, me, pe;
};

/* One row of section 2: operator o with its what-if columns, added to *sum. */
static void op_row(const struct tp_profile *p, const struct tp_op_row *o,
                   const struct tp_sparse_ratios *r, struct sums *sum, struct tp_buf *out)
{
	uint32_t a = o->args;
	tp_csv_cell(out, tp_str(p, o->op_type), 1);
	put_str(out, tp_op_arg_str(p, a, TP_CAP_KEY_POST_OP));
	put_str(out, tp_str(p, o->name));
	put_str(out, tp_op_arg_str(p, a, TP_CAP_KEY_INPUTS));
	put_str(out, tp_op_arg_str(p, a, TP_CAP_KEY_INPUT_SHAPES));
	put_str(out, tp_op_arg_str(p, a, TP_CAP_KEY_INPUT_DTYPES));
	put_str(out, tp_op_arg_str(p, a, TP_CAP_KEY_OUTPUTS));
	put_str(out, tp_op_arg_str(p, a, TP_CAP_KEY_OUTPUT_SHAPES));
	put_str(out, tp_op_arg_str(p, a, TP_CAP_KEY_OUTPUT_DTYPES));
	const char *ws = tp_op_arg_str(p, a, TP_CAP_KEY_WEIGHT_SHAPE);
	put_str(out, ws);
	/* K: percent of zero weights, as the capture measured it. */
	const struct tp_arg *sp = tp_op_arg(p, a, TP_CAP_KEY_WEIGHT_SPARSITY);
	double sparsity = 0;
	tp_buf_putc(out, ',');
	if (sp && sp->type == TP_ARG_REAL && ws[0]) {
		sparsity = sp->v.d;
		tp_buf_fixed(out, sparsity * 100.0, 2);
		tp_buf_putc(out, '%');
	}
	tp_buf_puts(out, o->sparse_eligible ? ",true" : ",");
	/* M and the what-if columns N, O, P. An operator already at least half sparse
	 * gains nothing from the what-if (reference rule, §A.2), so it keeps P = M. */
	int have = o->runs > 0;
	double m = o->mean_ns, pv = m;
	tp_buf_putc(out, ',');
	if (have)
		tp_buf_fixed(out, m / 1e6, 6);
	if (o->sparse_eligible && sparsity < 0.5) {
		double ratio = tp_sparse_ratio_at(tp_sparse_ratios_lookup(r, ws), r->aim_pct);
		pv = m / ratio;
		tp_buf_printf(out, ",%d%%", r->aim_pct);
		ratio_cell(out, ratio);
	} else {
		tp_buf_puts(out, ",,");
	}
	tp_buf_putc(out, ',');
	if (have) {
		tp_buf_fixed(out, pv / 1e6, 6);
		tp_buf_putc(out, ',');
		ns_as_ms(out, o->min_ns);
		tp_buf_putc(out, ',');
		ns_as_ms(out, o->max_ns);
		tp_buf_putc(out, ',');
		ns_as_ms(out, o->p99_ns);
		sum->m += m;
		sum->p += pv;
		if (o->sparse_eligible) {
			sum->me += m;
			sum->pe += pv;
		}
	} else {
		tp_buf_puts(out, ",,,");
	}
	tp_buf_printf(out, ",%llu\n", (unsigned long long)o->runs);
}

/* Section 3: totals, labels in L and O, values in M and P (and R), as in §A.2. */
static void totals_section(const struct sums *sum, struct tp_buf *out)
{
	static const char pad[] = ",,,,,,,,,,,"; /* A..K empty */
	tp_buf_printf(out, "%stotal latency(ms),", pad);
	tp_buf_fixed(out, sum->m / 1e6, 6);
	tp_buf_puts(out, ",,total aim to sparse latency(ms),");
	tp_buf_fixed(out, sum->p / 1e6, 6);
	tp_buf_puts(out, ",sparse improve,");
	tp_buf_fixed(out, sum->p > 0 ? sum->m / sum->p : 0, 3);
	tp_buf_printf(out, "\n%ssparse support latency(ms),", pad);
	tp_buf_fixed(out, sum->me / 1e6, 6);
	tp_buf_puts(out, ",,aim to sparse support latency(ms),");
	tp_buf_fixed(out, sum->pe / 1e6, 6);
	tp_buf_printf(out, "\n%ssparse support latency ratio,", pad);
	tp_buf_fixed(out, sum->m > 0 ? sum->me / sum->m : 0, 3);
	tp_buf_puts(out, ",,aim to sparse support latency ratio,");
	tp_buf_fixed(out, sum->p > 0 ? sum->pe / sum->p : 0, 3);
	tp_buf_putc(out, '\n');
}

/* Section 4: what the table does not contain. Always present for a capture, so a table built
 * from a lossy capture never looks complete. */
static void losses_section(const struct tp_profile *p, const struct tp_op_table *t,
                           struct tp_buf *out)
{
	tp_buf_printf(out, "\nrecords dropped,%llu\n",
	              (unsigned long long)p->stats.records_dropped);
	tp_buf_printf(out, "executions cut short (excluded),%llu\n",
	              (unsigned long long)t->cut_executions);
	for (size_t i = 0; i < p->num_notes; i++) {
		tp_buf_puts(out, "note,");
		tp_csv_cell(out, tp_str(p, p->notes[i].text), 1);
		tp_buf_putc(out, '\n');
	}
}

int tp_opscsv_render(const struct tp_profile *p, const struct tp_op_table *t,
                     const struct tp_sparse_ratios *r, struct tp_buf *out)
{
	if (ratio_section(p, t, r, out) != TP_OK)
		return TP_ENOMEM;
	/* Section 2: the operator table. */
	tp_buf_puts(out, "operator type,post op,operator name,input tensor name,input shape,"
	                 "input dtype,output tensor name,output shape,output dtype,weight shape,"
	                 "weight sparse ratio,sparse support,operator latency mean(ms),"
	                 "aim to weight sparse ratio,sparse kernel pref ratio,"
	                 "aim to sparse latency(ms),operator latency min(ms),"
	                 "operator latency max(ms),operator latency p99(ms),executions\n");
	struct sums sum = {0, 0, 0, 0};
	for (size_t i = 0; i < t->count; i++)
		op_row(p, &t->rows[i], r, &sum, out);
	totals_section(&sum, out);
	losses_section(p, t, out);
	return out->oom ? TP_ENOMEM : TP_OK;
}

int tp_opscsv_output_render(const struct tp_profile *p, const struct tp_analysis *a,
                            const struct tp_out_opts *o, struct tp_buf *b, struct tp_diag *d)
{
	struct tp_sparse_ratios r;
	struct tp_op_table own;
	const struct tp_op_table *t = &own;
	int st;
	memset(&own, 0, sizeof own);
	/* The ratio file is checked even when there is nothing to report: a typo in a user
	 * option should not pass silently. */
	st = o->sparse_ratios_path ? tp_sparse_ratios_load(&r, o->sparse_ratios_path, d)
	                           : tp_sparse_ratios_defaults(&r);
	if (st) {
		if (st == TP_ENOMEM)
			tp_diag_set(d, st, "ops.csv: %s", tp_strerror(st));
		return st;
	}
	if ((st = tp_op_table_for(p, a, &own, &t))) {
		tp_diag_set(d, st, "ops.csv: %s", tp_strerror(st));
		goto out;
	}
	if (t->count == 0) /* not a capture with operators: nothing to write */
		goto out;
	if ((st = tp_opscsv_render(p, t, &r, b)))
		tp_diag_set(d, st, "ops.csv: %s", tp_strerror(st));
out:
	tp_op_table_free(&own);
	tp_sparse_ratios_free(&r);
	return st;
}
