/*
 * json.c — summary.json of tpuprof captures: the Cambricon profiler's app_stats / op_stats
 * tree (neural-engine-cambricon.md §B.3) plus our own tables (§B.4), written in one pass and
 * handed to the caller's sink in pieces of bounded size (tp_capreport_stream_json). Layout:
 * docs/capture-reports.md. Owns only per-call scratch arrays.
 */
#include "writers/capreport/capreport_int.h"

#include <string.h>

static void json_strn(struct tp_buf *b, const char *s, size_t n)
{
	char tmp[256];
	char *heap = NULL, *use = tmp;
	if (n >= sizeof tmp) {
		if (!(heap = tp_malloc(n + 1))) {
			b->oom = 1;
			return;
		}
		use = heap;
	}
	memcpy(use, s, n);
	use[n] = 0;
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, use);
	tp_buf_putc(b, '"');
	tp_free(heap);
}

static void json_key(struct tp_buf *b, const char *k)
{
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, k);
	tp_buf_puts(b, "\": ");
}

/* "output": {"0": {"name": .., "shape": [..], "type": ..}, ...} from the ';' lists. */
static void json_outputs(struct tp_buf *b, const struct tp_profile *p, uint32_t args)
{
	const char *names = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUTS);
	const char *shapes = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUT_SHAPES);
	const char *types = tp_op_arg_str(p, args, TP_CAP_KEY_OUTPUT_DTYPES);
	size_t n = tp_capreport_count_parts(names), m;
	if ((m = tp_capreport_count_parts(shapes)) > n)
		n = m;
	if ((m = tp_capreport_count_parts(types)) > n)
		n = m;
	tp_buf_puts(b, "{");
	for (size_t i = 0; i < n; i++) {
		const char *s;
		size_t len;
		tp_buf_printf(b, "%s\"%zu\": {\"name\": ", i ? ", " : "", i);
		tp_capreport_part(names, i, &s, &len);
		json_strn(b, s, len);
		tp_buf_puts(b, ", \"shape\": ");
		tp_capreport_part(shapes, i, &s, &len);
		/* Dims as integers when every one parses; otherwise the text as recorded. */
		int ok = 1;
		for (size_t k = 0, st = 0; k <= len && ok && len; k++)
			if (k == len || s[k] == 'x') {
				int64_t v;
				ok = tp_parse_i64(s + st, k - st, &v) == 0;
				st = k + 1;
			}
		if (ok) {
			tp_buf_putc(b, '[');
			for (size_t k = 0, st = 0; k <= len && len; k++)
				if (k == len || s[k] == 'x') {
					int64_t v = 0;
					tp_parse_i64(s + st, k - st, &v);
					tp_buf_printf(b, "%s%lld", st ? ", " : "", (long long)v);
					st = k + 1;
				}
			tp_buf_putc(b, ']');
		} else {
			json_strn(b, s, len);
		}
		tp_buf_puts(b, ", \"type\": ");
		tp_capreport_part(types, i, &s, &len);
		json_strn(b, s, len);
		tp_buf_putc(b, '}');
	}
	tp_buf_puts(b, "}");
}

static void json_stats(struct tp_buf *b, const struct stats *s, int have, int decimals)
{
	if (!have) {
		tp_buf_puts(b, "null");
		return;
	}
	const double v[5] = {s->min, s->mean, s->median, s->p99, s->max};
	static const char *const k[5] = {"min", "mean", "median", "p99", "max"};
	tp_buf_putc(b, '{');
	for (int i = 0; i < 5; i++) {
		tp_buf_printf(b, "%s\"%s\": ", i ? ", " : "", k[i]);
		tp_buf_fixed(b, v[i], decimals);
	}
	tp_buf_putc(b, '}');
}

static void step_key(struct tp_buf *b, int has_step, int64_t step)
{
	if (has_step)
		tp_buf_printf(b, "\"%lld\": ", (long long)step);
	else
		tp_buf_puts(b, "\"none\": ");
}

/* The two fields every app_stats and op_stats leaf has: "duration_ms", "count". */
static void dur_count(struct tp_buf *b, int64_t dur_ns, uint64_t count)
{
	tp_buf_puts(b, "\"duration_ms\": ");
	tp_capreport_ms(b, dur_ns);
	tp_buf_printf(b, ", \"count\": %llu", (unsigned long long)count);
}

/* ---- summary.json -------------------------------------------------------------------------- */

/* The flush point of tp_capreport_stream_json: hands b's bytes to the sink once there are
 * at least `at` of them and empties b. Once the sink has failed (`failed`), b keeps the rest
 * and nothing more is handed over. */
struct jflush {
	size_t at;
	tp_capreport_flush_fn fn;
	void *ctx;
	int failed;
};

static void jflush(struct jflush *f, struct tp_buf *b)
{
	if (!f->fn || f->failed || b->oom || b->len < f->at)
		return;
	if (f->fn(f->ctx, b->data, b->len) != 0) {
		f->failed = 1;
		return;
	}
	b->len = 0;
}

int tp_capreport_write_json(const struct tp_profile *p, const struct tp_analysis *a,
                            struct tp_buf *b)
{
	return tp_capreport_stream_json(p, a, b, 0, NULL, NULL);
}
/* summary.json: the header, source and meta. */
static void json_head(struct tp_buf *b, const struct tp_profile *p)
{
	tp_buf_puts(b, "{\n  \"format\": \"tpuprof-capture-summary\",\n  \"version\": 1,\n");
	tp_buf_puts(b, "  \"source\": ");
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, tp_str(p, p->source));
	tp_buf_puts(b, "\",\n  \"meta\": {");
	for (size_t i = 0; i < p->num_meta; i++) {
		tp_buf_puts(b, i ? ", " : "");
		json_key(b, tp_str(p, p->meta[i].key));
		tp_buf_putc(b, '"');
		tp_buf_json_str(b, tp_str(p, p->meta[i].value));
		tp_buf_putc(b, '"');
	}
	tp_buf_puts(b, "},\n");
}

/* summary.json: overall_stats. */
static void json_overall(struct tp_buf *b, const struct report *r)
{
	const struct tp_profile *p = r->p;
	tp_buf_printf(b,
	              "  \"overall_stats\": {\n    \"batch_size\": %llu,\n"
	              "    \"batch_size_source\": \"%s\",\n",
	              (unsigned long long)r->batch, r->batch_from_meta ? "meta" : "assumed");
	size_t nwarm = 0;
	for (size_t i = 0; i < r->nsteps; i++)
		nwarm += (size_t)r->steps[i].warmup;
	tp_buf_printf(b,
	              "    \"steps\": %zu,\n    \"warmup_steps\": %zu,\n"
	              "    \"counted_steps\": %zu,\n    \"warmup_counted\": %s,\n",
	              r->nsteps, nwarm, r->counted_steps,
	              r->steps_warmup_counted ? "true" : "false");
	tp_buf_puts(b, "    \"capture_span_ms\": ");
	tp_capreport_ms(b, p->span_end_ns - p->span_begin_ns);
	tp_buf_puts(b, ",\n    \"counted_steps_time_ms\": ");
	tp_capreport_ms(b, r->counted_steps_ns);
	tp_buf_puts(b, ",\n    \"latency_ms\": ");
	json_stats(b, &r->lat_ms, r->have_lat, 6);
	tp_buf_puts(b, ",\n    \"throughput_samples_per_s\": ");
	json_stats(b, &r->thr, r->have_lat, 3);
	tp_buf_printf(b,
	              ",\n    \"records_read\": %llu,\n"
	              "    \"events_dropped\": %llu,\n    \"records_dropped\": %llu,\n"
	              "    \"scopes_cut_short\": %llu,\n"
	              "    \"marks\": %llu,\n    \"ranges\": %llu,\n    \"async_ranges\": %llu,\n"
	              "    \"ranges_cut_short\": %llu\n  },\n",
	              (unsigned long long)p->stats.records_read,
	              (unsigned long long)r->events_dropped,
	              (unsigned long long)p->stats.records_dropped, (unsigned long long)r->cut,
	              (unsigned long long)r->n_marks, (unsigned long long)r->n_ranges,
	              (unsigned long long)r->n_async, (unsigned long long)r->ranges_cut);
}

/* summary.json: steps. */
static void json_steps(struct tp_buf *b, struct jflush *fl, const struct report *r)
{
	tp_buf_puts(b, "  \"steps\": [");
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct cstep *s = &r->steps[i];
		tp_buf_printf(b, "%s\n    {\"graph\": \"", i ? "," : "");
		tp_buf_json_str(b, s->graph);
		tp_buf_printf(b, "\", \"step\": %lld, \"warmup\": %s, \"latency_ms\": ",
		              (long long)s->step, s->warmup ? "true" : "false");
		tp_capreport_ms(b, s->dur_ns);
		tp_buf_putc(b, '}');
		jflush(fl, b);
	}
	tp_buf_puts(b, r->nsteps ? "\n  ],\n" : "],\n");
}

/* summary.json: app_stats: step -> activity -> {duration_ms, count, meta}. */
static void json_app_stats(struct tp_buf *b, struct jflush *fl, const struct report *r)
{
	tp_buf_puts(b, "  \"app_stats\": {");
	for (size_t i = 0; i < r->nacts;) {
		size_t j = i;
		tp_buf_puts(b, i ? ",\n    " : "\n    ");
		step_key(b, r->acts[i].has_step, r->acts[i].step);
		tp_buf_putc(b, '{');
		for (; j < r->nacts && r->acts[j].has_step == r->acts[i].has_step &&
		       r->acts[j].step == r->acts[i].step;
		     j++) {
			const struct cact *ac = &r->acts[j];
			tp_buf_puts(b, j > i ? ", " : "");
			json_key(b, ac->name);
			tp_buf_putc(b, '{');
			dur_count(b, ac->dur_ns, ac->count);
			tp_buf_puts(b, ", \"meta\": \"");
			tp_buf_json_str(b, ac->meta);
			tp_buf_puts(b, "\"}");
		}
		tp_buf_putc(b, '}');
		i = j;
		jflush(fl, b);
	}
	tp_buf_puts(b, r->nacts ? "\n  },\n" : "},\n");
}

/* summary.json: op_stats: graph -> step -> host -> device -> node. */
static void json_op_stats(struct tp_buf *b, struct jflush *fl, const struct report *r)
{
	const struct tp_profile *p = r->p;
	tp_buf_puts(b, "  \"op_stats\": {");
	for (size_t i = 0; i < r->nnodes;) {
		const char *graph = r->nodes[i].graph;
		tp_buf_puts(b, i ? ",\n    " : "\n    ");
		json_key(b, graph[0] ? graph : "(no graph)");
		tp_buf_putc(b, '{');
		size_t g0 = i;
		while (i < r->nnodes && strcmp(r->nodes[i].graph, graph) == 0) {
			size_t j = i;
			tp_buf_puts(b, i > g0 ? ",\n      " : "\n      ");
			step_key(b, r->nodes[i].has_step, r->nodes[i].step);
			tp_buf_puts(b, "{\"localhost\": {\"CPU\": {");
			for (; j < r->nnodes &&
			       tp_capreport_cmp_node_head(&r->nodes[j], &r->nodes[i]) == 0;
			     j++) {
				const struct cnode *nd = &r->nodes[j];
				tp_buf_puts(b, j > i ? ",\n        " : "\n        ");
				json_key(b, nd->name);
				tp_buf_puts(b, "{\"op_type\": \"");
				tp_buf_json_str(b, nd->type);
				tp_buf_puts(b, "\", ");
				dur_count(b, nd->dur_ns, nd->count);
				tp_buf_puts(b, ", \"output\": ");
				json_outputs(b, p, nd->args);
				tp_buf_printf(b, ", \"total_bytes\": %llu}",
				              (unsigned long long)nd->bytes);
				jflush(fl, b);
			}
			tp_buf_puts(b, "}}}");
			i = j;
		}
		tp_buf_puts(b, "\n    }");
	}
	tp_buf_puts(b, r->nnodes ? "\n  },\n" : "},\n");
}

/* summary.json: op_type_stats. */
static void json_op_types(struct tp_buf *b, struct jflush *fl, const struct typeagg *ta, size_t nta)
{
	static const char *const keys[4] = {", \"mean_ms\": ", ", \"min_ms\": ", ", \"max_ms\": ",
	                                    ", \"share_of_step_time_pct\": "};
	tp_buf_puts(b, "  \"op_type_stats\": [");
	for (size_t i = 0; i < nta; i++) {
		tp_buf_printf(b, "%s\n    {\"op_type\": \"", i ? "," : "");
		tp_buf_json_str(b, ta[i].type);
		tp_buf_printf(
		    b, "\", \"executions\": %llu, \"total_ms\": ", (unsigned long long)ta[i].runs);
		tp_capreport_type_figures(b, &ta[i], keys);
		tp_buf_putc(b, '}');
		jflush(fl, b);
	}
	tp_buf_puts(b, nta ? "\n  ],\n" : "],\n");
}

/* summary.json: operators (the ops.csv rows). */
static void json_operators(struct tp_buf *b, struct jflush *fl, const struct report *r)
{
	const struct tp_profile *p = r->p;
	tp_buf_printf(b, "  \"operators_warmup_counted\": %s,\n  \"operators\": [",
	              r->ops->counted_warmup ? "true" : "false");
	for (size_t i = 0; i < r->ops->count; i++) {
		const struct tp_op_row *o = &r->ops->rows[i];
		tp_buf_printf(b, "%s\n    {\"name\": \"", i ? "," : "");
		tp_buf_json_str(b, tp_str(p, o->name));
		tp_buf_puts(b, "\", \"op_type\": \"");
		tp_buf_json_str(b, tp_str(p, o->op_type));
		tp_buf_printf(b, "\", \"executions\": %llu, \"warmup_executions\": %llu",
		              (unsigned long long)o->runs, (unsigned long long)o->runs_warmup);
		tp_buf_puts(b, ", \"mean_ms\": ");
		tp_buf_fixed(b, o->mean_ns / 1e6, 6);
		const int64_t v[4] = {o->min_ns, o->median_ns, o->p99_ns, o->max_ns};
		static const char *const k[4] = {"min_ms", "median_ms", "p99_ms", "max_ms"};
		for (int q = 0; q < 4; q++) {
			tp_buf_printf(b, ", \"%s\": ", k[q]);
			tp_capreport_ms(b, v[q]);
		}
		tp_buf_printf(b, ", \"bytes\": %llu, \"flops\": %llu, \"sparse_eligible\": %s}",
		              (unsigned long long)o->bytes, (unsigned long long)o->flops,
		              o->sparse_eligible ? "true" : "false");
		jflush(fl, b);
	}
	tp_buf_puts(b, r->ops->count ? "\n  ],\n" : "],\n");
}

/* summary.json: range_stats: ranges and async ranges per (kind, name, category). */
static void json_ranges(struct tp_buf *b, struct jflush *fl, const struct report *r)
{
	tp_buf_puts(b, "  \"range_stats\": [");
	for (size_t i = 0; i < r->nranges; i++) {
		const struct crange *g = &r->ranges[i];
		tp_buf_printf(b, "%s\n    {\"kind\": \"%s\", \"name\": \"", i ? "," : "", g->kind);
		tp_buf_json_str(b, g->name);
		tp_buf_puts(b, "\", \"category\": \"");
		tp_buf_json_str(b, g->category);
		tp_buf_printf(b,
		              "\", \"count\": %llu, \"cut_short\": %llu, \"cross_thread\": %llu, "
		              "\"total_ms\": ",
		              (unsigned long long)g->count, (unsigned long long)g->cut,
		              (unsigned long long)g->cross);
		tp_capreport_ms(b, g->total_ns);
		tp_buf_puts(b, ", \"latency_ms\": ");
		json_stats(b, &g->lat, g->have, 6);
		tp_buf_putc(b, '}');
		jflush(fl, b);
	}
	tp_buf_puts(b, r->nranges ? "\n  ],\n" : "],\n");
}

/* summary.json: mark_stats: instant marks per (name, category). */
static void json_marks(struct tp_buf *b, struct jflush *fl, const struct report *r)
{
	tp_buf_puts(b, "  \"mark_stats\": [");
	for (size_t i = 0; i < r->nmarks; i++) {
		tp_buf_puts(b, i ? ",\n    {\"name\": \"" : "\n    {\"name\": \"");
		tp_buf_json_str(b, r->marks[i].name);
		tp_buf_puts(b, "\", \"category\": \"");
		tp_buf_json_str(b, r->marks[i].category);
		tp_buf_printf(b, "\", \"count\": %llu}", (unsigned long long)r->marks[i].count);
		jflush(fl, b);
	}
	tp_buf_puts(b, r->nmarks ? "\n  ],\n" : "],\n");
}

/* summary.json: notes. */
static void json_notes(struct tp_buf *b, const struct tp_profile *p)
{
	tp_buf_puts(b, "  \"notes\": [");
	for (size_t i = 0; i < p->num_notes; i++) {
		tp_buf_puts(b, i ? ", \"" : "\"");
		tp_buf_json_str(b, tp_str(p, p->notes[i].text));
		tp_buf_putc(b, '"');
	}
	tp_buf_puts(b, "]\n");
}

int tp_capreport_stream_json(const struct tp_profile *p, const struct tp_analysis *a,
                             struct tp_buf *b, size_t flush_at, tp_capreport_flush_fn flush,
                             void *ctx)
{
	struct jflush fl = {flush_at, flush, ctx, 0};
	struct report r;
	struct typeagg *ta = NULL;
	size_t nta = 0;
	int st = tp_capreport_collect(p, a, &r, 1);
	if (st || !(ta = tp_capreport_type_aggs(&r, &nta))) {
		tp_capreport_report_free(&r);
		b->oom = 1;
		return TP_ENOMEM;
	}
	json_head(b, p);
	json_overall(b, &r);
	json_steps(b, &fl, &r);
	json_app_stats(b, &fl, &r);
	json_op_stats(b, &fl, &r);
	json_op_types(b, &fl, ta, nta);
	json_operators(b, &fl, &r);
	json_ranges(b, &fl, &r);
	json_marks(b, &fl, &r);
	if (a && a->accel) {
		tp_buf_puts(b, "  ");
		tp_capreport_accel_json(p, a->accel, b);
		tp_buf_puts(b, ",\n");
	}
	json_notes(b, p);
	tp_buf_puts(b, "}\n");
	tp_free(ta);
	tp_capreport_report_free(&r);
	return fl.failed ? TP_EOUTPUT : b->oom ? TP_ENOMEM : TP_OK;
}
