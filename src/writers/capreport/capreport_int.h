/*
 * capreport_int.h — what the capture reports' files share (collect.c gathers the report,
 * capreport.c has the helpers both renderers use, json.c renders summary.json, md.c
 * summary.md); only for them and capreport_test.c.
 */
#ifndef TP_CAPREPORT_INT_H
#define TP_CAPREPORT_INT_H

#include "writers/capreport/capreport.h"

#include "analysis/optable.h"

/* ---- collected data (collect.c) ---------------------------------------------------------- */

struct cstep {
	const char *graph;
	int64_t step;
	int warmup;
	int64_t start_ns, dur_ns;
};

struct cact {
	int64_t step;
	int has_step;
	const char *name, *meta;
	int64_t start_ns, dur_ns;
	uint64_t count;
};

/* One operator name inside one step (op_stats leaf); merged over repeated executions. */
struct cnode {
	const char *graph, *name, *type;
	int64_t step;
	int has_step;
	uint32_t args;
	int64_t start_ns, dur_ns;
	uint64_t count, bytes;
};

struct stats {
	double min, mean, median, p99, max;
};

/* One range (tpuprof_range_*) or async range (tpuprof_async_*) execution, or after merging,
 * one (kind, name, category) group with its statistics over the measured (not cut) ones. */
struct crange {
	const char *kind, *name, *category; /* kind: TP_CAP_TYPE_RANGE or _ASYNC */
	int64_t dur_ns;
	uint64_t count, cut, cross; /* executions, cut short by the capture's end, cross-thread */
	int64_t total_ns;           /* over the measured ones */
	int have;                   /* any measured: lat is valid */
	struct stats lat;           /* ms */
};

/* Instant marks grouped by (name, category). */
struct cmark {
	const char *name, *category;
	uint64_t count;
};

struct report {
	const struct tp_profile *p;
	struct cstep *steps;
	size_t nsteps, cap_steps;
	struct cact *acts;
	size_t nacts, cap_acts;
	struct cnode *nodes;
	size_t nnodes, cap_nodes;
	const struct tp_op_table *ops; /* the analysis' (tp_op_table_for), or own_ops */
	struct tp_op_table own_ops;
	size_t counted_steps;
	int steps_warmup_counted; /* every step was warm-up, so all were counted */
	int64_t counted_steps_ns;
	int have_lat;
	struct stats lat_ms, thr;
	uint64_t batch;
	int batch_from_meta;
	uint64_t events_dropped;
	uint64_t cut;          /* scopes cut short by the end of the capture, left out */
	struct crange *ranges; /* grouped, most total time first */
	size_t nranges, cap_ranges;
	struct cmark *marks; /* grouped, most frequent first */
	size_t nmarks, cap_marks;
	uint64_t n_ranges, n_async, n_marks, ranges_cut;
};

/* Gathers the report; `nodes`: also the op_stats leaves (only summary.json prints them).
 * `a` may be NULL (the operator table is then built here). TP_OK / TP_ENOMEM; free the report
 * with tp_capreport_report_free either way. */
int tp_capreport_collect(const struct tp_profile *p, const struct tp_analysis *a, struct report *r,
                         int nodes);
void tp_capreport_report_free(struct report *r);
/* Orders op_stats leaves by (graph, step); 0 when two leaves share both. */
int tp_capreport_cmp_node_head(const struct cnode *a, const struct cnode *b);

/* ---- helpers shared by both renderers (capreport.c) -------------------------------------- */

/* Appends ns as milliseconds with 6 decimals ("-0.000001"). */
void tp_capreport_ms(struct tp_buf *b, int64_t ns);

/* Per-type aggregate over the operator table's counted executions. */
struct typeagg {
	const char *type;
	uint64_t runs;
	int64_t total_ns, min_ns, max_ns;
	double mean_ms;        /* total / runs, 0 without runs */
	double step_share_pct; /* total / the counted steps' time, in %; 0 without steps */
};
/* The figures of one type from its total on, each after its separator: total, sep[0], mean,
 * sep[1], min, sep[2], max, sep[3], share of step time (summary.json's keys or summary.md's
 * cell borders). */
void tp_capreport_type_figures(struct tp_buf *b, const struct typeagg *t, const char *const sep[4]);
/* The per-type aggregates of r's operator table, most total time first, in *n entries;
 * NULL on out of memory. The caller frees the array. */
struct typeagg *tp_capreport_type_aggs(const struct report *r, size_t *n);
/* r's operator rows by mean latency, slowest first, ties in table order (the whole table; *n
 * the number to show: at most TP_CAPREPORT_TOP_OPS); NULL on out of memory. The caller frees
 * the array. */
const struct tp_op_row **tp_capreport_slowest(const struct report *r, size_t *n);
/* Number of parts of a ';'-joined list (an empty string has none). */
size_t tp_capreport_count_parts(const char *s);
/* Part `idx` of a ';'-joined list as (*b, *len); empty if there are fewer parts. */
void tp_capreport_part(const char *s, size_t idx, const char **b, size_t *len);

#endif /* TP_CAPREPORT_INT_H */
