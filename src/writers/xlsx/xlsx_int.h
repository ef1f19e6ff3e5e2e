/*
 * xlsx_int.h — private to src/writers/xlsx: the writer context, the sheet plan and the helpers
 * shared by the workbook's files: xlsx.c (driver, formats), cell.c (cells and conditional
 * formats), plan.c (which sheets, their names and row caps), args.c (argument columns),
 * engine.c (engine, event and longest-command sheets), layers.c, summary.c (Engine Summary),
 * ops.c (Operators) and accel.c (Accelerator).
 */
#ifndef TP_XLSX_INT_H
#define TP_XLSX_INT_H

#include "writers/xlsx/xlsx.h"

#include <xlsxwriter.h>

struct xl_formats {
	lxw_format *title, *hdr, *note, *bold, *text, *link;
	lxw_format *cyc;          /* integers: cycles, counts, bytes */
	lxw_format *us;           /* µs, 3 decimals */
	lxw_format *us_tag;       /* µs, 3 decimals shown with "(us)" (Overall cycle cells) */
	lxw_format *ms;           /* ms, 3 decimals */
	lxw_format *gbps;         /* GB/s, 2 decimals */
	lxw_format *pct;          /* 0.00% */
	lxw_format *pct1;         /* 0.0% (uArch Rate, as the reference prints it) */
	lxw_format *real;         /* general real numbers */
	lxw_format *input;        /* editable what-if cells */
	lxw_format *red, *yellow; /* conditional-format highlights */
	lxw_format *cap;          /* the "showing the first N of M" note of a capped sheet */
};

struct xl_stream; /* stream.c */

/* One worksheet being written: rows must arrive in increasing order (constant_memory). */
struct xl_sheet {
	lxw_worksheet *ws;
	uint16_t *width; /* widest content per column, in characters */
	size_t wcap;
	uint16_t ncols;
	struct xl_stream *xs; /* set: cells go to a deferred part's XML (stream.c), not to ws */
};

struct xl;
/* Writes data rows [first, last) of a deferred sheet into s (stream.c). Runs on any thread
 * with its own x (formats and inputs shared, read-only). */
typedef void (*xl_emit_fn)(struct xl *x, struct xl_sheet *s, const void *ctx, size_t first,
                           size_t last);

/* A sheet whose data rows are written by stream.c: the rows above them went through
 * libxlsxwriter, these are spliced into its part of the zip (zip.c). */
struct xl_defer {
	struct xl_sheet s; /* the widths so far; the data rows' are merged in */
	unsigned sheet_no; /* N of its part xl/worksheets/sheetN.xml (s.ws is gone by then) */
	uint32_t row0;     /* sheet row of data row 0 */
	size_t count;      /* data rows */
	xl_emit_fn emit;
	void *ctx;
	void (*free_ctx)(void *ctx);
	size_t chunk0, nchunks; /* its parts in x->chunks */
	uint16_t cmin, cmax;    /* columns the data rows use (cmin > cmax: none) */
};

/* One part of a deferred sheet: its rows' XML as a raw deflate piece. */
struct xl_chunk {
	size_t defer;        /* index in x->defer */
	size_t first, count; /* data rows */
	struct tp_buf z;     /* compressed, ends on a byte boundary (Z_SYNC_FLUSH) */
	uint32_t crc;        /* of the uncompressed XML */
	uint64_t raw;        /* uncompressed bytes */
	uint16_t *width;     /* widths seen in this part */
	uint16_t ncols;
	uint16_t cmin, cmax;
	int oom;
};

struct xl {
	lxw_workbook *wb;
	const struct tp_profile *p;
	const struct tp_analysis *a;
	const struct plan *plan; /* the sheet plan (read by deferred rows) */
	unsigned jobs;           /* threads for the work spread over parts (at least 1) */
	struct xl_formats f;
	lxw_error err; /* first libxlsxwriter error */
	int oom;
	char *scratch; /* sanitised copies of input strings */
	size_t scap;
	struct tp_buf other;            /* an "Other Args" cell being built (xl_write_args) */
	uint64_t prog_done, prog_total; /* rows written / planned, for the progress line */
	struct xl_defer *defer;         /* sheets whose data rows stream.c writes */
	size_t ndefer, defer_cap;
	struct xl_chunk *chunks;
	size_t nchunks;
};

static inline double xl_ns_to_us(int64_t ns)
{
	return (double)ns / 1000.0;
}

/* Column widths: remembers that column `col` shows `chars` characters. */
void xl_width(struct xl *x, struct xl_sheet *s, uint16_t col, size_t chars);
/* Cells. Strings from input files are sanitised (invalid UTF-8 and XML-illegal control
 * characters become '?', long strings are cut to Excel's 32767 characters); non-finite
 * numbers are written as text. */
void xl_num(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col, double v,
            lxw_format *fmt);
void xl_str(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col, const char *v,
            lxw_format *fmt);
/* A formula with its value as computed by tpuprof, so viewers that do not recalculate still
 * show the right number. */
void xl_formula(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col, const char *formula,
                double cached, lxw_format *fmt);
/* Sets the fitted column widths and releases the width table. */
void xl_sheet_done(struct xl *x, struct xl_sheet *s);
/* Column letters for A1 references ("A", "Z", "AA", ...); buf >= 4 bytes. */
void xl_col_name(uint16_t col, char *buf);
/* Records a libxlsxwriter status (keeps the first error). */
void xl_check(struct xl *x, lxw_error e);

/* A header row: names[0..n) in the header format from column 0. */
void xl_header_row(struct xl *x, struct xl_sheet *s, uint32_t row, const char *const *names,
                   size_t n);
/* Conditional formats on rows [r0, r1] of column `col`: a cell-value rule (`criteria`, one of
 * LXW_CONDITIONAL_CRITERIA_*, against `value`), a rule for cells containing `text`, and a
 * formula rule (`formula` written for row r0; Excel shifts it). */
void xl_cond_cell(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                  uint8_t criteria, double value, lxw_format *fmt);
void xl_cond_text(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                  const char *text, lxw_format *fmt);
void xl_cond_formula(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                     const char *formula, lxw_format *fmt);
/* Peak DDR and L2 bandwidth per core for the highlight rules, GB/s; 0 = unknown (no rule). */
double xl_ddr_max_bw(const struct tp_profile *p);
double xl_l2_max_bw(const struct tp_profile *p);
/* The analysis's figures for engine track `t` (all zero for a track without them). */
const struct tp_engine_stats *xl_stats_of(const struct tp_analysis *a, const struct tp_track *t);

/* ---- Deferred data rows (stream.c) and the zip splice (zip.c) ---- */

/* Cells of a stream-mode sheet (s->xs set); cell.c's xl_num / xl_str / xl_formula call them. */
void xl_stream_num(struct xl_stream *xs, uint32_t row, uint16_t col, double v, lxw_format *fmt);
void xl_stream_str(struct xl_stream *xs, uint32_t row, uint16_t col, const char *v,
                   lxw_format *fmt);
void xl_stream_formula(struct xl_stream *xs, uint32_t row, uint16_t col, const char *formula,
                       double cached, lxw_format *fmt);
/* Hands the data rows [row0, row0 + count) of sheet s over to stream.c: emit(ctx) writes them
 * later, in parts, on --jobs threads; the deferred sheet takes s's width table and ctx
 * (free_ctx frees it; both are freed on failure too). The caller writes every row above row0 before
 * and sets the sheet's other properties as usual, but does not call xl_sheet_done. TP_OK or
 * TP_ENOMEM. */
int xl_defer_rows(struct xl *x, struct xl_sheet *s, uint32_t row0, size_t count, xl_emit_fn emit,
                  void *ctx, void (*free_ctx)(void *ctx));
/* Writes every deferred sheet's parts on up to x->jobs threads, then sets the sheets' column
 * widths. TP_OK or TP_ENOMEM. */
int xl_defer_run(struct xl *x);
void xl_defer_free(struct xl *x);
/* Compresses src as one raw deflate piece into out (appended) with its CRC-32: a piece that
 * ends on a byte boundary without ending the stream, or the stream's end when `last`. */
int xl_deflate_piece(const unsigned char *src, size_t len, int last, struct tp_buf *out,
                     uint32_t *crc);
/* Copies the zip libxlsxwriter wrote at `skel` to `out` (through a temporary renamed into
 * place), each deferred sheet's part with its data rows spliced in before </sheetData> and its
 * dimension widened to them. TP_OK, or an error with `d` set naming `out`. */
int xl_zip_splice(struct xl *x, const char *skel, const char *out, struct tp_diag *d);

/* ---- Sheet plan (plan.c) ---- */

enum part_kind {
	PK_SUMMARY,
	PK_LAYERS,
	PK_OPS,
	PK_ACCEL,
	PK_LTAB,   /* "Layer Table" (ltab.c) */
	PK_WHATIF, /* "What If" */
	PK_LONGEST,
	PK_ENGINE,
	PK_EVENTS,
	PK_FOLD
};
#define XL_LONGEST 100   /* rows per engine and core on the "Longest commands" sheet */
#define LAYER_DATA_ROW 3 /* 0-based row of the first layer on a layer sheet */

struct part {
	enum part_kind kind;
	int track;            /* PK_ENGINE / PK_EVENTS */
	size_t index, nparts; /* 0-based part, number of parts of this track */
	size_t first, count;  /* slice range */
	size_t shown;         /* records of the track on its sheets (< t->count when capped) */
	char name[128];
	lxw_worksheet *ws;
};

struct plan {
	struct part *v;
	size_t n, cap;
	uint32_t max_rows;  /* effective rows per sheet */
	uint64_t row_cap;   /* records shown per track (never 0) */
	size_t auto_sheets; /* row_cap is the default shared by this many sheets; 0 = given */
	size_t capped;      /* tracks cut by row_cap */
	size_t *layer_idx;  /* kept layers (indices into the layer table) when capped, else NULL */
	size_t nlayer_idx;
	int layers_capped;
	/* Tracks past the sheet budget (TP_XLSX_MAX_SHEETS), in plan order: their records go on
	 * one "Other tracks" sheet (PK_FOLD, whose count is the rows it shows). */
	int *fold;
	size_t nfold, fold_cap;
	uint64_t fold_records; /* records of the folded tracks within the row cap */
	int ltab;              /* set by the caller: the analysis has a layer table (its sheets) */
};

/* Plans every sheet of the workbook of `p` into `pl` (pl->max_rows and pl->row_cap set by the
 * caller). TP_OK or TP_ENOMEM; pl->v, pl->layer_idx and pl->fold are the caller's to free. */
int xl_make_plan(struct plan *pl, const struct tp_profile *p, const struct tp_xlsx_opts *xo);
/* 1 when some engine track is not on device 0 (sheet names then carry "D<device>"). */
int xl_multi_device(const struct tp_profile *p);
/* "TIU", "GDMA", ... as the engine sheets are named. */
const char *xl_engine_sheet_prefix(uint8_t kind);
/* " (the default: ... shared by n per-record sheets ...)" when the cap is the shared default
 * below the per-sheet maximum (nsheets from tp_xlsx_cap_for), else "". */
void xl_default_cap_why(char *out, size_t size, size_t nsheets, uint64_t row_cap);

/* ---- Argument columns (args.c) ---- */

/* Union of the argument keys used on a slice range, in first-seen order, minus keys that
 * already have a fixed column, each with its column; indexed by key (strtab id). */
struct argcols {
	struct xl_argcol {
		uint32_t key;
		uint16_t col;
	} * v; /* column order */
	size_t n, cap;
	struct tp_ixmap map; /* over v */
	int other;           /* some keys did not fit: "Other Args" column */
};

/* Adds to `ac` the argument keys of slices [first, first + count) of `t` that are neither
 * among `fixed` nor in `ac` already, numbering their columns from col0 + ac->n. TP_OK or
 * TP_ENOMEM. */
int xl_collect_args(const struct tp_profile *p, const struct tp_track *t, size_t first,
                    size_t count, const char *const *fixed, size_t nfixed, uint16_t col0,
                    struct argcols *ac);
void xl_argcols_free(struct argcols *ac);
/* One argument value in its cell (addresses and masks as hex text). */
void xl_write_arg(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col,
                  const struct tp_profile *p, const struct tp_arg *g);
/* The slice's arguments into their columns; keys without a column go to "Other Args"
 * (other_col) as "key=value; ..." text built in x->other. */
void xl_write_args(struct xl *x, struct xl_sheet *s, uint32_t row, const struct tp_profile *p,
                   const struct tp_slice *sl, const struct argcols *ac, uint16_t other_col);
/* The first member of what a per-record sheet's deferred rows read (engine.c, fold.c): its
 * argument columns and records. xl_argrows_free frees them and the whole block (one
 * allocation). */
struct xl_argrows {
	struct argcols ac;
	uint16_t other_col;       /* the "Other Args" column */
	const struct tp_track *t; /* the sheet's track and first record, when it has one */
	size_t first;
};
/* A zeroed block of `size` bytes (a struct starting with struct xl_argrows) for the records
 * of track t from `first` on, or NULL. */
void *xl_argrows_new(size_t size, const struct tp_track *t, size_t first);
void xl_argrows_free(void *rows);
/* The header row: the fixed columns names[0..nc), the argument columns, "Other Args" when
 * some keys did not get a column. */
void xl_args_header(struct xl *x, struct xl_sheet *s, uint32_t hr, const char *const *names,
                    size_t nc, const struct argcols *ac, uint16_t other_col);

/* ---- Sheets ---- */

/* Engine sheet part `pt` (engine.c). TP_OK or TP_ENOMEM; libxlsxwriter errors in x->err. */
int xl_write_engine_sheet(struct xl *x, const struct part *pt, const struct plan *pl);
/* Host thread, host lane, firmware or layer-track sheet part `pt` (engine.c). */
int xl_write_events_sheet(struct xl *x, const struct part *pt);
/* Record i of t as Global Idx, Start / End Time(us), Duration(us), Depth, Category and Name
 * in columns c0..c0 + 6 (engine.c; the event and "Other tracks" sheets). */
void xl_event_cells(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t c0,
                    const struct tp_track *t, size_t i);
/* The "Other tracks" sheet of the folded tracks (fold.c). */
int xl_write_fold_sheet(struct xl *x, const struct part *pt, const struct plan *pl);
/* The "Longest commands" sheet (engine.c). */
void xl_write_longest(struct xl *x, lxw_worksheet *ws, const struct plan *pl);
/* Layer by Layer Info part `pt` (layers.c). */
void xl_write_layers(struct xl *x, const struct part *pt, const struct plan *pl);
/* The Engine Summary (summary.c). */
void xl_write_summary(struct xl *x, lxw_worksheet *ws, const struct plan *pl);

/* Operators sheet (ops.c). Returns 1 if the profile has captured operator slices. */
int xl_ops_present(const struct tp_profile *p);
/* Writes the Operators sheet into `ws` with the perf ratios of `ratios_path` (NULL = the
 * built-in table). TP_OK, TP_ENOMEM, or the ratio file's error with `d` set
 * ("FILE:LINE: message"); libxlsxwriter errors are kept in x->err. */
int xl_ops_write(struct xl *x, lxw_worksheet *ws, const char *ratios_path, struct tp_diag *d);

/* ---- Accelerator sheet (accel.c) ---- */

/* Whether the workbook gets an Accelerator sheet: host tracks with device work on them, or a
 * dump's engines with host tracks beside them (the profiles the accelerator analysis covers). */
int xl_accel_present(const struct tp_profile *p);
/* Writes it from x->a->accel (a note when that is NULL). */
void xl_accel_write(struct xl *x, lxw_worksheet *ws);
/* The layer table's sheets (ltab.c): x->a->ltab must be set. */
void xl_write_ltab(struct xl *x, lxw_worksheet *ws);
void xl_write_whatif(struct xl *x, lxw_worksheet *ws);

#endif /* TP_XLSX_INT_H */
