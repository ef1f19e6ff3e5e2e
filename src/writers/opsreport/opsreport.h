/*
 * opsreport.h — per-operator statistics of tpuprof captures and the `ops.csv` report.
 *
 * A capture (src/readers/capfile) fills the model with slices whose type is TP_CAP_TYPE_OP and
 * whose argument set follows the TP_CAP_KEY_* conventions of model.h. This module:
 *   - groups those executions into one row per operator (name, op_type) with latency
 *     statistics over the non-warm-up executions (tp_op_table), shared with src/writers/capreport;
 *   - holds the weight-shape x target-sparsity perf-ratio table that drives the sparse
 *     "what-if" columns, from built-in defaults or a user file (docs/sparse-ratios.md);
 *   - renders `ops.csv` in the section layout of the Intel Neural Engine profiler
 *     (neural-engine-cambricon.md §A.2) with plain numbers instead of row-number formulas
 *     (docs/ops-csv.md), and escapes every string for CSV (RFC 4180 quoting plus a guard
 *     against spreadsheet formula injection).
 *
 * Ownership: a tp_op_table points into the profile it was built from (must not outlive it);
 * its rows array is owned by the table. A tp_sparse_ratios owns its rows array. Nothing here
 * keeps global state; every function is safe to call from several threads on distinct
 * objects.
 */
#ifndef TP_OPSREPORT_H
#define TP_OPSREPORT_H

#include "writers/sink/sink.h"

/* ---------------------------------------------------------------------------------------- */
/* Operator table.                                                                          */
/* ---------------------------------------------------------------------------------------- */

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
	                               TP_CAPFILE_KEY_CUT): left out of the rows */
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
/* Median of a sorted ascending array (mean of the two middle values for even n, rounded
 * toward zero); 0 when n == 0. */
int64_t tp_median_ns(const int64_t *sorted, size_t n);

/* ---------------------------------------------------------------------------------------- */
/* Sparse perf-ratio table (docs/sparse-ratios.md).                                          */
/* ---------------------------------------------------------------------------------------- */

#define TP_SPARSE_SHAPE_MAX 64

/* Perf ratios of one weight shape: how many times faster the sparse 4x1 kernel is than the
 * dense one at 90 %, 80 % and 70 % zero blocks, and at any other target ("others"). */
struct tp_sparse_ratio_row {
	char shape[TP_SPARSE_SHAPE_MAX]; /* "256x256", or "*" for the fallback row */
	double ratio[4];                 /* [0] 90 %, [1] 80 %, [2] 70 %, [3] others */
	unsigned long line;              /* line in the user file; 0 = built-in */
};

struct tp_sparse_ratios {
	struct tp_sparse_ratio_row *rows; /* owned; exact shapes, in file order */
	size_t count, cap;
	struct tp_sparse_ratio_row fallback; /* "*" row: shapes not listed */
	int aim_pct;                         /* target sparsity in percent (column N) */
	int from_file;                       /* 1 when loaded from a user file */
};

/* Fills `r` with the documented built-in table (docs/sparse-ratios.md) and aim 90 %.
 * Returns TP_OK or TP_ENOMEM. Free with tp_sparse_ratios_free. */
int tp_sparse_ratios_defaults(struct tp_sparse_ratios *r);
/* Parses a ratio file held in memory (text[0..len), need not be NUL-terminated). `path` is
 * the name used in messages. On error returns TP_EFORMAT (or TP_ENOMEM) with
 * "path:LINE: message" in `d`, and `r` holds nothing that needs freeing. */
int tp_sparse_ratios_parse(struct tp_sparse_ratios *r, const char *text, size_t len,
                           const char *path, struct tp_diag *d);
/* Loads and parses a ratio file. Errors: TP_ENOTFOUND / TP_EIO / TP_EFORMAT with `d` set. */
int tp_sparse_ratios_load(struct tp_sparse_ratios *r, const char *path, struct tp_diag *d);
void tp_sparse_ratios_free(struct tp_sparse_ratios *r);
/* The row for a weight shape ("256x256"): the exact row if listed, else the fallback row.
 * Never NULL. */
const struct tp_sparse_ratio_row *tp_sparse_ratios_lookup(const struct tp_sparse_ratios *r,
                                                          const char *shape);
/* The ratio of a row for a target sparsity: the 90/80/70 column or "others". */
double tp_sparse_ratio_at(const struct tp_sparse_ratio_row *row, int aim_pct);

/* ---------------------------------------------------------------------------------------- */
/* CSV.                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Appends one CSV cell. When `from_input` is set and s starts with '=', '+', '-', '@', TAB
 * or CR, a leading apostrophe is added so spreadsheets show the text instead of evaluating
 * it. Then, if the cell contains ',', '"', CR or LF, it is enclosed in double quotes with
 * every '"' doubled (RFC 4180). Numbers the writer formats itself pass from_input = 0. */
void tp_csv_cell(struct tp_buf *b, const char *s, int from_input);

/* Renders ops.csv for table `t` of profile `p` with ratios `r` into `out` (appended).
 * Layout: docs/ops-csv.md. Returns TP_OK or TP_ENOMEM (out->oom). */
int tp_opscsv_render(const struct tp_profile *p, const struct tp_op_table *t,
                     const struct tp_sparse_ratios *r, struct tp_buf *out);

/* Output "ops" -> OUT_DIR/ops.csv, default on. Writes only when the profile has operator
 * slices; otherwise writes nothing and returns TP_OK. Reads o->sparse_ratios_path (NULL =
 * built-in ratios); a bad ratio file fails with "FILE:LINE: message". */
extern const struct tp_output tp_output_opscsv;

#endif /* TP_OPSREPORT_H */
