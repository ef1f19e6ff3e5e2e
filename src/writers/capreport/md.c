/*
 * md.c — summary.md of tpuprof captures (output "summary-md"): the overall statistics,
 * activities, operator types, slowest operators, ranges, marks and notes as Markdown tables,
 * every string from the capture escaped for a table cell. Layout: docs/capture-reports.md.
 * Owns only per-call scratch arrays.
 */
#include "writers/capreport/capreport_int.h"

#include <string.h>

void tp_md_cell(struct tp_buf *b, const char *s)
{
	for (const char *q = s; *q; q++) {
		char c = *q;
		switch (c) {
		case '&':
		case '<':
		case '>':
			tp_buf_puts(
			    b, tp_html_ref(c)); /* quotes stay: Markdown shows them as they are */
			break;
		case '\n':
		case '\r':
		case '\t':
			tp_buf_putc(b, ' ');
			break;
		case '|':
		case '\\':
		case '`':
		case '*':
		case '_':
		case '[':
		case ']':
		case '#':
		case '~':
		case '!':
			tp_buf_putc(b, '\\');
			tp_buf_putc(b, c);
			break;
		default:
			tp_buf_putc(b, c);
		}
	}
}

static void md_outputs(struct tp_buf *b, const struct tp_profile *p, uint32_t args)
{
	const char *shapes = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUT_SHAPES);
	const char *types = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUT_DTYPES);
	size_t n = tp_capreport_count_parts(shapes), m = tp_capreport_count_parts(types);
	if (m > n)
		n = m;
	struct tp_buf t;
	tp_buf_init(&t);
	for (size_t i = 0; i < n; i++) {
		const char *s;
		size_t len;
		tp_buf_printf(&t, "%s%zu:", i ? ", " : "", i);
		tp_capreport_part(types, i, &s, &len);
		tp_buf_put(&t, s, len);
		tp_buf_putc(&t, '[');
		tp_capreport_part(shapes, i, &s, &len);
		tp_buf_put(&t, s, len);
		tp_buf_putc(&t, ']');
	}
	if (t.oom)
		b->oom = 1;
	else if (t.len)
		tp_md_cell(b, t.data);
	tp_buf_free(&t);
}

/* summary.md: the title, processes and the Overall table. */
static void md_overall(struct tp_buf *b, const struct report *r)
{
	const struct tp_profile *p = r->p;
	tp_buf_puts(b, "# tpuprof capture summary\n\n");
	for (size_t i = 0; i < p->num_devices; i++) {
		tp_buf_puts(b, i ? ", " : "Processes: ");
		tp_md_cell(b, tp_str(p, p->devices[i].name));
	}
	if (p->num_devices)
		tp_buf_puts(b, "\n\n");
	tp_buf_puts(b,
	            "Times are in milliseconds (ms). Statistics count the non-warm-up steps and "
	            "operator executions only.\n\n## Overall\n\n| Metric | Value |\n|---|---|\n");
	size_t nwarm = 0;
	for (size_t i = 0; i < r->nsteps; i++)
		nwarm += (size_t)r->steps[i].warmup;
	tp_buf_printf(b, "| Steps | %zu (%zu warm-up%s) |\n", r->nsteps, nwarm,
	              r->steps_warmup_counted ? ", counted because every step is warm-up"
	                                      : " excluded");
	if (r->batch_from_meta)
		tp_buf_printf(b, "| Batch size | %llu |\n", (unsigned long long)r->batch);
	else
		tp_buf_puts(b, "| Batch size | 1 (assumed: the capture does not record it) |\n");
	tp_buf_puts(b, "| Capture span (ms) | ");
	tp_capreport_ms(b, p->span_end_ns - p->span_begin_ns);
	tp_buf_puts(b, " |\n| Counted steps time (ms) | ");
	tp_capreport_ms(b, r->counted_steps_ns);
	/* records_dropped already includes every track's drops: count them once. */
	tp_buf_printf(b, " |\n| Events dropped | %llu |\n",
	              (unsigned long long)p->stats.records_dropped);
	if (r->cut)
		tp_buf_printf(b,
		              "| Scopes cut short by the end of the capture (excluded) | %llu |\n",
		              (unsigned long long)r->cut);
	if (r->n_marks || r->n_ranges || r->n_async)
		tp_buf_printf(
		    b, "| Marks / ranges / async ranges | %llu / %llu / %llu (%llu cut short) |\n",
		    (unsigned long long)r->n_marks, (unsigned long long)r->n_ranges,
		    (unsigned long long)r->n_async, (unsigned long long)r->ranges_cut);
	tp_buf_putc(b, '\n');
}

/* summary.md: the latency and throughput statistics over the counted steps. */
static void md_latency(struct tp_buf *b, const struct report *r)
{
	if (r->have_lat) {
		tp_buf_puts(b, "| Statistic | Min | Mean | Median | P99 | Max |\n"
		               "|---|---:|---:|---:|---:|---:|\n| Latency (ms) |");
		const double lv[5] = {r->lat_ms.min, r->lat_ms.mean, r->lat_ms.median,
		                      r->lat_ms.p99, r->lat_ms.max};
		for (int i = 0; i < 5; i++) {
			tp_buf_putc(b, ' ');
			tp_buf_fixed(b, lv[i], 6);
			tp_buf_puts(b, " |");
		}
		tp_buf_puts(b, "\n| Throughput (samples/s) |");
		const double tv[5] = {r->thr.min, r->thr.mean, r->thr.median, r->thr.p99,
		                      r->thr.max};
		for (int i = 0; i < 5; i++) {
			tp_buf_putc(b, ' ');
			tp_buf_fixed(b, tv[i], 3);
			tp_buf_puts(b, " |");
		}
		tp_buf_puts(b, "\n\n");
	} else {
		tp_buf_puts(b, "No steps were recorded, so there are no latency statistics.\n\n");
	}
}

/* summary.md: activities per step, cut at TP_CAPREPORT_MD_ACTIVITY_ROWS rows. */
static void md_activities(struct tp_buf *b, const struct report *r)
{
	tp_buf_puts(b, "## Activities\n\n");
	if (!r->nacts) {
		tp_buf_puts(b, "No activities were recorded.\n\n");
	} else {
		tp_buf_puts(b, "| Step | Activity | Duration (ms) | Count | Meta |\n"
		               "|---|---|---:|---:|---|\n");
		size_t shown = r->nacts < TP_CAPREPORT_MD_ACTIVITY_ROWS
		                   ? r->nacts
		                   : TP_CAPREPORT_MD_ACTIVITY_ROWS;
		for (size_t i = 0; i < shown; i++) {
			const struct cact *ac = &r->acts[i];
			if (ac->has_step)
				tp_buf_printf(b, "| %lld | ", (long long)ac->step);
			else
				tp_buf_puts(b, "| - | ");
			tp_md_cell(b, ac->name);
			tp_buf_puts(b, " | ");
			tp_capreport_ms(b, ac->dur_ns);
			tp_buf_printf(b, " | %llu | ", (unsigned long long)ac->count);
			tp_md_cell(b, ac->meta);
			tp_buf_puts(b, " |\n");
		}
		if (shown < r->nacts)
			tp_buf_printf(b, "\n%zu more rows are in summary.json (app_stats).\n",
			              r->nacts - shown);
		tp_buf_putc(b, '\n');
	}
}

/* summary.md: the slowest operators (the first nslow of slow). */
static void md_slowest(struct tp_buf *b, const struct report *r, const struct tp_op_row **slow,
                       size_t nslow)
{
	const struct tp_profile *p = r->p;
	tp_buf_printf(b,
	              "## Slowest operators\n\nThe %zu operators with the highest mean "
	              "latency (all %zu are in ops.csv).\n\n",
	              nslow, r->ops->count);
	tp_buf_puts(b, "| Operator | Type | Mean (ms) | Min (ms) | Max (ms) | P99 (ms) | "
	               "Executions | Bytes | FLOPs | Outputs |\n"
	               "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < nslow; i++) {
		const struct tp_op_row *o = slow[i];
		tp_buf_puts(b, "| ");
		tp_md_cell(b, tp_str(p, o->name));
		tp_buf_puts(b, " | ");
		tp_md_cell(b, tp_str(p, o->op_type));
		tp_buf_puts(b, " | ");
		tp_buf_fixed(b, o->mean_ns / 1e6, 6);
		const int64_t v[3] = {o->min_ns, o->max_ns, o->p99_ns};
		for (int q = 0; q < 3; q++) {
			tp_buf_puts(b, " | ");
			tp_capreport_ms(b, v[q]);
		}
		tp_buf_printf(b, " | %llu | %llu | %llu | ", (unsigned long long)o->runs,
		              (unsigned long long)o->bytes, (unsigned long long)o->flops);
		md_outputs(b, p, o->args);
		tp_buf_puts(b, " |\n");
	}
	tp_buf_putc(b, '\n');
}

/* summary.md: operator types and, when there are operators, the slowest ones. */
static void md_operators(struct tp_buf *b, const struct report *r, const struct typeagg *ta,
                         size_t nta, const struct tp_op_row **slow, size_t nslow)
{
	tp_buf_puts(b, "## Operator types\n\n");
	if (!nta) {
		tp_buf_puts(b, "No operators were recorded.\n\n");
	} else {
		tp_buf_puts(b,
		            "| Type | Executions | Total (ms) | Mean (ms) | Min (ms) | Max (ms) | "
		            "% of step time |\n|---|---:|---:|---:|---:|---:|---:|\n");
		static const char *const cells[4] = {" | ", " | ", " | ", " | "};
		for (size_t i = 0; i < nta; i++) {
			tp_buf_puts(b, "| ");
			tp_md_cell(b, ta[i].type[0] ? ta[i].type : "(none)");
			tp_buf_printf(b, " | %llu | ", (unsigned long long)ta[i].runs);
			tp_capreport_type_figures(b, &ta[i], cells);
			tp_buf_puts(b, " |\n");
		}
		tp_buf_putc(b, '\n');
		md_slowest(b, r, slow, nslow);
	}
}

/* summary.md: ranges and async ranges per (kind, name, category). */
static void md_ranges(struct tp_buf *b, const struct report *r)
{
	if (r->nranges) {
		tp_buf_printf(
		    b,
		    "## Ranges\n\n%llu ranges and %llu async ranges; statistics over the "
		    "measured ones (%llu cut short by the end of the capture are counted, "
		    "not measured).\n\n",
		    (unsigned long long)r->n_ranges, (unsigned long long)r->n_async,
		    (unsigned long long)r->ranges_cut);
		tp_buf_puts(
		    b, "| Kind | Name | Category | Count | Cut short | Cross-thread | "
		       "Total (ms) | Mean (ms) | Median (ms) | P99 (ms) | Min (ms) | Max (ms) |\n"
		       "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (size_t i = 0; i < r->nranges; i++) {
			const struct crange *g = &r->ranges[i];
			tp_buf_printf(b, "| %s | ", g->kind);
			tp_md_cell(b, g->name);
			tp_buf_puts(b, " | ");
			tp_md_cell(b, g->category[0] ? g->category : "-");
			tp_buf_printf(b, " | %llu | %llu | %llu | ", (unsigned long long)g->count,
			              (unsigned long long)g->cut, (unsigned long long)g->cross);
			tp_capreport_ms(b, g->total_ns);
			const double v[5] = {g->lat.mean, g->lat.median, g->lat.p99, g->lat.min,
			                     g->lat.max};
			for (int q = 0; q < 5; q++) {
				tp_buf_puts(b, " | ");
				if (g->have)
					tp_buf_fixed(b, v[q], 6);
				else
					tp_buf_puts(b, "-");
			}
			tp_buf_puts(b, " |\n");
		}
		tp_buf_putc(b, '\n');
	}
}

/* summary.md: instant marks per (name, category). */
static void md_marks(struct tp_buf *b, const struct report *r)
{
	if (r->nmarks) {
		tp_buf_printf(b,
		              "## Marks\n\n%llu instant marks.\n\n| Name | Category | Count |\n"
		              "|---|---|---:|\n",
		              (unsigned long long)r->n_marks);
		for (size_t i = 0; i < r->nmarks; i++) {
			tp_buf_puts(b, "| ");
			tp_md_cell(b, r->marks[i].name);
			tp_buf_puts(b, " | ");
			tp_md_cell(b, r->marks[i].category[0] ? r->marks[i].category : "-");
			tp_buf_printf(b, " | %llu |\n", (unsigned long long)r->marks[i].count);
		}
		tp_buf_putc(b, '\n');
	}
}

/* summary.md: the capture's notes. */
static void md_notes(struct tp_buf *b, const struct tp_profile *p)
{
	if (p->num_notes) {
		tp_buf_puts(b, "## Notes\n\n");
		for (size_t i = 0; i < p->num_notes; i++) {
			tp_buf_puts(b, "- ");
			tp_md_cell(b, tp_str(p, p->notes[i].text));
			tp_buf_putc(b, '\n');
		}
		tp_buf_putc(b, '\n');
	}
}

int tp_capreport_write_md(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	struct report r;
	struct typeagg *ta = NULL;
	const struct tp_op_row **slow = NULL;
	size_t nta = 0, nslow = 0;
	int st = tp_capreport_collect(p, a, &r, 0);
	if (st || !(ta = tp_capreport_type_aggs(&r, &nta)) ||
	    !(slow = tp_capreport_slowest(&r, &nslow))) {
		tp_free(ta);
		tp_capreport_report_free(&r);
		b->oom = 1;
		return TP_ENOMEM;
	}
	md_overall(b, &r);
	tp_capreport_accel_md(p, a ? a->accel : NULL, b);
	md_latency(b, &r);
	md_activities(b, &r);
	md_operators(b, &r, ta, nta, slow, nslow);
	md_ranges(b, &r);
	md_marks(b, &r);
	md_notes(b, p);
	tp_free(slow);
	tp_free(ta);
	tp_capreport_report_free(&r);
	return b->oom ? TP_ENOMEM : TP_OK;
}

int tp_capmd_render(const struct tp_profile *p, const struct tp_analysis *a,
                    const struct tp_out_opts *o, struct tp_buf *b, struct tp_diag *d)
{
	(void)o;
	if (p->arch != TP_ARCH_CPU)
		return TP_OK;
	int st = tp_capreport_write_md(p, a, b);
	if (st)
		return tp_diag_set(d, st, "summary.md: %s", tp_strerror(st));
	/* No control byte from an operator name reaches the Markdown (text-safety layer). */
	tp_buf_clean(b, 0, TP_TEXT_TERM);
	return TP_OK;
}
