/*
 * optable.h — per-operator statistics of tpuprof captures (optable.c).
 *
 * A capture (src/readers/capfile) fills the model with slices whose type is TP_CAP_TYPE_OP and
 * whose argument set follows the TP_CAP_KEY_* conventions of model/argkeys.h. The operator
 * table groups those executions into one row per operator (name, op_type) with latency statistics
 * over the non-warm-up executions; ops.csv (src/writers/opscsv), the capture summaries
 * (src/writers/capreport) and the workbook's operator sheet share one build of it.
 *
 * Ownership: a tp_op_table points into the profile it was built from (must not outlive it);
 * its rows array is owned by the table. Nothing here keeps global state; every function is
 * safe to call from several threads on distinct objects.
 */
#ifndef TP_OPTABLE_H
#define TP_OPTABLE_H

#include "analysis/analysis.h"

/* One operator: every execution of slices with the same (name, op_type). */
struct tp_op_row {
	uint32_t name;               /* strtab id of the operator name */
	uint32_t op_type;            /* strtab id of TP_CAP_KEY_OP_TYPE ("" if absent) */
	uint32_t args;               /* argset of the describing execution (first counted one) */
	const struct tp_slice *desc; /* that execution */
	int64_t first_start_ns;      /* earliest start over all executions (row order) */
	uint64_t runs;               /* executions counted in the statistics below */
	uint64_t runs_warmup;        /* warm-up executions (excluded unless the table says so) */
	int64_t total_ns;            /* sum over counted executions */
	int64_t min_ns, max_ns;      /* 0 when runs == 0 */
	int64_t median_ns;           /* tp_median_ns of the counted executions */
	int64_t p99_ns;              /* nearest-rank 99th percentile (tp_percentile_ns) */
	double mean_ns;              /* total_ns / runs, 0 when runs == 0 */
	uint64_t bytes;              /* TP_CAP_KEY_BYTES of the describing execution, 0 if absent */
	uint64_t flops;              /* TP_CAP_KEY_FLOPS of the describing execution, 0 if absent */
	int sparse_eligible;         /* see tp_op_sparse_eligible */
};

struct tp_op_table {
	struct tp_op_row *rows; /* owned; ordered by first_start_ns, then name, then op_type */
	size_t count;
	uint64_t executions;        /* operator slices seen */
	uint64_t warmup_executions; /* of which inside warm-up steps */
	int counted_warmup;         /* 1 when every execution was warm-up, so all were counted */
	uint64_t cut_executions;    /* executions cut short by the end of the capture (flagged
	                               TP_CAP_KEY_CUT): left out of the rows */
};

/* Builds the operator table of a finished profile: every slice of type TP_CAP_TYPE_OP on a
 * THREAD or HOST track. An execution is warm-up if its TP_CAP_KEY_WARMUP argument is
 * nonzero; without that argument, the warm-up flag of the step named by its TP_CAP_KEY_STEP
 * argument, or else of the step slice enclosing it on its track, applies. Statistics count
 * the non-warm-up executions only; when there are none at all, every execution is counted
 * and `counted_warmup` is set. `t` is overwritten. Returns TP_OK or TP_ENOMEM (nothing to
 * free then). */
int tp_op_table_build(const struct tp_profile *p, struct tp_op_table *t);
/* Releases the rows; safe on a zeroed or already freed table. */
void tp_op_table_free(struct tp_op_table *t);
/* The operator table a writer should use: the one attached to `a` (a->ops) when there is
 * one, else a fresh build into `own` (zeroed first; the caller frees it with
 * tp_op_table_free either way). TP_OK or TP_ENOMEM. */
int tp_op_table_for(const struct tp_profile *p, const struct tp_analysis *a,
                    struct tp_op_table *own, const struct tp_op_table **out);

/* The orders of tp_op_rows_by; ties always keep the table's order (first execution, name,
 * op_type). */
enum tp_op_order {
	TP_OP_BY_TYPE,  /* op_type's string id, ascending: a type's rows next to each other */
	TP_OP_BY_TOTAL, /* total_ns, longest first */
	TP_OP_BY_MEAN,  /* mean_ns, slowest first */
};
/* The rows of t ordered by `by`: a new array of t->count pointers into t->rows (freed with
 * tp_free; at least one slot, so never NULL for an empty table), or NULL on ENOMEM. */
const struct tp_op_row **tp_op_rows_by(const struct tp_op_table *t, enum tp_op_order by);

/* The argument `key` of argset `args`, or NULL if absent (key compared as a string). */
const struct tp_arg *tp_op_arg(const struct tp_profile *p, uint32_t args, const char *key);
/* The string value of argument `key`, or "" if absent or not a string. Never NULL. */
const char *tp_op_arg_str(const struct tp_profile *p, uint32_t args, const char *key);

/* 1 if an operator qualifies for the sparse what-if columns: its op_type is a dense
 * matrix product (MatMul, InnerProduct, Gemm, Linear, FullyConnected or Dense, any case)
 * and its weight shape is 2-D with positive dims and dim0 % 4 == 0 (the 4x1 block rule of
 * the reference, §A.2). `weight_shape` is "AxB" or "". */
int tp_op_sparse_eligible(const char *op_type, const char *weight_shape);

/* Nearest-rank percentile of a sorted ascending array: the value at rank ceil(pct/100 * n)
 * (1-based). pct in (0, 100]; n == 0 returns 0. p99 of 1..100 is 99, of 1..10 is 10. */
int64_t tp_percentile_ns(const int64_t *sorted, size_t n, unsigned pct);
/* Sorts v[0..n) ascending, for tp_percentile_ns and tp_median_ns. */
void tp_sort_ns(int64_t *v, size_t n);
/* Median of a sorted ascending array (mean of the two middle values for even n, rounded
 * toward zero); 0 when n == 0. */
int64_t tp_median_ns(const int64_t *sorted, size_t n);

#endif /* TP_OPTABLE_H */
