/*
 * capreport.c — summary.json and summary.md of tpuprof captures: the helpers both renderers
 * share (milliseconds, the per-type aggregates, the slowest operators, ';'-joined lists).
 * The report is gathered by collect.c and rendered by json.c and md.c; the layout is in
 * docs/capture-reports.md. Owns only per-call scratch arrays.
 */
#include "writers/capreport/capreport_int.h"

#include <stdlib.h>
#include <string.h>

void tp_capreport_ms(struct tp_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	tp_buf_printf(b, "%s%llu.%06llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000),
	              (unsigned long long)(a % 1000000));
}

void tp_capreport_type_figures(struct tp_buf *b, const struct typeagg *t, const char *const sep[4])
{
	tp_capreport_ms(b, t->total_ns);
	tp_buf_puts(b, sep[0]);
	tp_buf_fixed(b, t->mean_ms, 6);
	tp_buf_puts(b, sep[1]);
	tp_capreport_ms(b, t->min_ns);
	tp_buf_puts(b, sep[2]);
	tp_capreport_ms(b, t->max_ns);
	tp_buf_puts(b, sep[3]);
	tp_buf_fixed(b, t->step_share_pct, 2);
}

static int cmp_typeagg(const void *x, const void *y)
{
	const struct typeagg *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->type, b->type);
}

struct typeagg *tp_capreport_type_aggs(const struct report *r, size_t *n)
{
	*n = 0;
	struct typeagg *v = tp_calloc(r->ops->count ? r->ops->count : 1, sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < r->ops->count; i++) {
		const struct tp_op_row *o = &r->ops->rows[i];
		const char *ty = tp_str(r->p, o->op_type);
		size_t k = 0;
		while (k < *n && strcmp(v[k].type, ty) != 0)
			k++;
		if (k == *n) {
			v[k].type = ty;
			(*n)++;
		}
		if (!o->runs)
			continue;
		if (!v[k].runs || o->min_ns < v[k].min_ns)
			v[k].min_ns = o->min_ns;
		if (!v[k].runs || o->max_ns > v[k].max_ns)
			v[k].max_ns = o->max_ns;
		v[k].runs += o->runs;
		v[k].total_ns += o->total_ns;
	}
	for (size_t k = 0; k < *n; k++) {
		v[k].mean_ms = v[k].runs ? (double)v[k].total_ns / (double)v[k].runs / 1e6 : 0;
		v[k].step_share_pct = r->counted_steps_ns ? 100.0 * (double)v[k].total_ns /
		                                                (double)r->counted_steps_ns
		                                          : 0;
	}
	qsort(v, *n, sizeof *v, cmp_typeagg);
	return v;
}

const struct tp_op_row **tp_capreport_slowest(const struct report *r, size_t *n)
{
	*n = r->ops->count < TP_CAPREPORT_TOP_OPS ? r->ops->count : TP_CAPREPORT_TOP_OPS;
	return tp_op_rows_by(r->ops, TP_OP_BY_MEAN);
}

size_t tp_capreport_count_parts(const char *s)
{
	if (!*s)
		return 0;
	size_t n = 1;
	for (; *s; s++)
		n += *s == ';';
	return n;
}

void tp_capreport_part(const char *s, size_t idx, const char **b, size_t *len)
{
	for (size_t i = 0; i < idx && s; i++) {
		s = strchr(s, ';');
		if (s)
			s++;
	}
	if (!s) {
		*b = "";
		*len = 0;
		return;
	}
	const char *e = strchr(s, ';');
	*b = s;
	*len = e ? (size_t)(e - s) : strlen(s);
}
