/*
 * opscsv.h — the `ops.csv` report of tpuprof captures (output "ops").
 *
 * Renders the operator table (analysis/optable.h) in the section layout of the Intel Neural
 * Engine profiler (neural-engine-cambricon.md §A.2) with plain numbers instead of row-number
 * formulas (docs/ops-csv.md), and escapes every string for CSV (RFC 4180 quoting plus a guard
 * against spreadsheet formula injection). Also holds the weight-shape x target-sparsity
 * perf-ratio table that drives the sparse "what-if" columns, from built-in defaults or a user
 * file (docs/sparse-ratios.md).
 *
 * Ownership: a tp_sparse_ratios owns its rows array. Nothing here keeps global state; every
 * function is safe to call from several threads on distinct objects.
 */
#ifndef TP_OPSCSV_H
#define TP_OPSCSV_H

#include "analysis/optable.h"
#include "writers/sink/sink.h"

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

/* The distinct weight shapes of the sparse-eligible operators of `t`, in first-seen order,
 * into shapes (room for t->count); returns how many. */
size_t tp_opscsv_weight_shapes(const struct tp_profile *p, const struct tp_op_table *t,
                               const char **shapes);

/* Renders ops.csv for table `t` of profile `p` with ratios `r` into `out` (appended).
 * Layout: docs/ops-csv.md. Returns TP_OK or TP_ENOMEM (out->oom). */
int tp_opscsv_render(const struct tp_profile *p, const struct tp_op_table *t,
                     const struct tp_sparse_ratios *r, struct tp_buf *out);

/* The `render` of the CLI's output "ops" (ops.csv). Renders only when the profile has
 * operator slices; otherwise leaves `b` empty (no file) and returns TP_OK. Reads
 * o->sparse_ratios_path (NULL = built-in ratios); a bad ratio file fails with
 * "FILE:LINE: message". */
int tp_opscsv_output_render(const struct tp_profile *p, const struct tp_analysis *a,
                            const struct tp_out_opts *o, struct tp_buf *b, struct tp_diag *d);

#endif /* TP_OPSCSV_H */
