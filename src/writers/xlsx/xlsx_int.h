/*
 * xlsx_int.h — private to src/writers/xlsx: the writer context shared by the workbook driver
 * (xlsx.c) and the Operators sheet (xlsx_ops.c), and the cell helpers that sanitise strings,
 * guard non-finite numbers, remember the first libxlsxwriter error and track column widths.
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

/* One worksheet being written: rows must arrive in increasing order (constant_memory). */
struct xl_sheet {
	lxw_worksheet *ws;
	uint16_t *width; /* widest content per column, in characters */
	size_t wcap;
	uint16_t ncols;
};

struct xl {
	lxw_workbook *wb;
	const struct tp_profile *p;
	const struct tp_analysis *a;
	struct xl_formats f;
	lxw_error err; /* first libxlsxwriter error */
	int oom;
	char *scratch; /* sanitised copies of input strings */
	size_t scap;
	uint64_t prog_done, prog_total; /* rows written / planned, for the progress line */
};

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

/* Operators sheet (xlsx_ops.c). Returns 1 if the profile has captured operator slices. */
int xl_ops_present(const struct tp_profile *p);
/* Writes the Operators sheet into `ws` with the perf ratios of `ratios_path` (NULL = the
 * built-in table). TP_OK, TP_ENOMEM, or the ratio file's error with `d` set
 * ("FILE:LINE: message"); libxlsxwriter errors are kept in x->err. */
int xl_ops_write(struct xl *x, lxw_worksheet *ws, const char *ratios_path, struct tp_diag *d);

#endif /* TP_XLSX_INT_H */
