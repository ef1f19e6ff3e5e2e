/*
 * xlsx.h — the spreadsheet report, PerfDoc/PerfAI_output.xlsx: an Engine Summary, one sheet
 * per engine and core with a command per row (the sheets the web page's "Global Idx"
 * refers to), a layer sheet when the profile has layers, one sheet per host thread for
 * captures, and for captures an Operators sheet with sparse what-if columns written as live
 * Excel formulas over an editable ratio table (sophgo-analysis.md §5, neural-engine-cambricon.md
 * §A.2).
 *
 * The workbook is written with libxlsxwriter in constant_memory mode, so rows stream to disk
 * and a dump with tens of millions of commands never needs the workbook in RAM. Per-record
 * sheets are capped (TP_XLSX_DEFAULT_ROWS per engine and core, --xlsx_rows), never silently. A
 * sheet that would pass Excel's 1 048 576-row limit continues on "TIU_0 (2)", "TIU_0 (3)", ...; the
 * Engine Summary lists every sheet with the Global Idx range it holds.
 *
 * Ownership: nothing is retained between calls; the writer only reads the profile and the
 * analysis. Thread-safety: one call per output path at a time.
 */
#ifndef TP_XLSX_H
#define TP_XLSX_H

#include "writers/sink/sink.h"

/* The workbook's place inside OUT_DIR, as the reference tools name it. */
#define TP_XLSX_FILE "PerfDoc/PerfAI_output.xlsx"

/* Excel's hard limit of rows per worksheet. */
#define TP_XLSX_EXCEL_MAX_ROWS 1048576u

/* Rows above the command table on every engine sheet (summary labels, values, note, header);
 * the first command is on row TP_XLSX_DATA_ROW (0-based). */
#define TP_XLSX_HEADER_ROW 3u
#define TP_XLSX_DATA_ROW 4u

/* Row cap of the per-record sheets (engine commands, firmware/host/thread slices): a track
 * with more records shows its first TP_XLSX_DEFAULT_ROWS in time, says so in the sheet's
 * first rows and in the Engine Summary, and every total stays computed over all of them.
 * The measured reasoning for the default is in docs/xlsx.md ("Row cap"). */
#define TP_XLSX_DEFAULT_ROWS 50000u
#define TP_XLSX_ROWS_ALL UINT64_MAX /* --xlsx_rows all: no cap */
/* Without --xlsx_rows the per-record sheets share TP_XLSX_ROW_BUDGET rows: each shows at most
 * TP_XLSX_DEFAULT_ROWS and at least TP_XLSX_MIN_DEFAULT_ROWS, so the workbook (libxlsxwriter:
 * ~33 us of CPU per row) costs about the same for 2 cores or 8 (docs/xlsx.md, "Row cap"). */
#define TP_XLSX_ROW_BUDGET 400000u
#define TP_XLSX_MIN_DEFAULT_ROWS 10000u

/* Worksheets in a workbook at most, the "Other tracks" sheet included. libxlsxwriter's
 * constant_memory mode keeps one temporary file open (and 128 KiB of memory) per worksheet
 * until the workbook is closed, so the count must be bounded for the writer to run under a
 * low open-file limit: tracks past the budget (in sheet order: engines first, then host and
 * thread tracks) share one "Other tracks" sheet instead of getting their own. */
#define TP_XLSX_MAX_SHEETS 120u

struct tp_xlsx_opts {
	uint32_t max_rows;  /* rows per sheet including the header block; 0 = Excel's limit
	                       (values below 16 or above it also mean Excel's limit) */
	uint64_t row_cap;   /* records shown per track (first in time); 0 = the default
	                       (tp_xlsx_cap_for), TP_XLSX_ROWS_ALL = every record */
	size_t max_cores;   /* only cores < max_cores get detail sheets; 0 = all */
	const char *tmpdir; /* directory for libxlsxwriter's temporary files; NULL = the
	                       output file's directory */
	const char *sparse_ratios_path; /* --sparse-ratios file for the Operators sheet; NULL =
	                           the built-in table (docs/sparse-ratios.md) */
	unsigned jobs; /* threads for the large sheets' rows and their compression; 0 = 1. The
	                  file is the same bytes for every value. */
};

/* Writes the workbook to `path` (via a temporary name in the same directory, renamed into
 * place only when complete; the directory must exist). `a` must have been computed from `p`.
 * `xo` may be NULL (defaults). Returns TP_OK, TP_ENOMEM, or TP_EOUTPUT with `d` naming the
 * path and the libxlsxwriter error; on failure no file is left at `path` and any previous
 * file there is untouched. */
int tp_xlsx_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                  const struct tp_xlsx_opts *xo, struct tp_diag *d);

/* Number of worksheets the engine track `t` needs with `max_rows` rows per sheet (0 =
 * Excel's limit): ceil(count / (max_rows - TP_XLSX_DATA_ROW)), at least 1. */
size_t tp_xlsx_parts(size_t count, uint32_t max_rows);

/* Makes `name` a valid, unique Excel sheet name in place: characters []:*?/\ become '_',
 * leading/trailing apostrophes are dropped, an empty name becomes "Sheet", and the name is cut
 * to 31 characters (never inside a UTF-8 sequence). `buf` must hold at least 128 bytes. */
void tp_xlsx_sheet_name(char *buf, size_t size, const char *name);

/* The CLI's --xlsx_rows N|all: parses `v` ("all" or a count >= 1) into *cap. Returns 0, or
 * -1 when `v` is neither. */
int tp_xlsx_parse_rows(const char *v, uint64_t *cap);

/* The cap the workbook of `p` uses: `cap` when given (--xlsx_rows), else TP_XLSX_ROW_BUDGET
 * divided by p's per-record sheets (tracks with records, plus one per core of the layer
 * sheet), within [TP_XLSX_MIN_DEFAULT_ROWS, TP_XLSX_DEFAULT_ROWS]. *nsheets (may be NULL)
 * gets that count, 0 when `cap` was given. `max_cores` as in tp_out_opts. */
uint64_t tp_xlsx_cap_for(const struct tp_profile *p, size_t max_cores, uint64_t cap,
                         size_t *nsheets);

/* Notes that start with this prefix are the CLI's cap note (tp_xlsx_note_cap); the Engine
 * Summary writes its own, more detailed text instead of repeating them. */
#define TP_XLSX_NOTE_PREFIX "PerfDoc/PerfAI_output.xlsx: "

/* When some per-record sheet of `p` would pass `cap` (0 = the default, as tp_xlsx_output_write
 * reads tp_out_opts.xlsx_rows), adds one
 * profile note (TP_XLSX_NOTE_PREFIX ...) naming the cap, the largest track and how to lift
 * it, and when tracks fold onto the "Other tracks" sheet (TP_XLSX_MAX_SHEETS) one more, so
 * summary.txt/json/md say the workbook is cut. `max_cores` as in tp_out_opts. Call
 * it after the tracks are final and before the outputs are written. TP_OK or TP_ENOMEM. */
int tp_xlsx_note_cap(struct tp_profile *p, size_t max_cores, uint64_t cap);

/* The `write` of the CLI's output "xlsx" (TP_XLSX_FILE): creates OUT_DIR/PerfDoc and
 * honours o->max_cores, o->xlsx_rows and o->sparse_ratios_path. */
int tp_xlsx_output_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                         const struct tp_out_opts *o, struct tp_diag *d);

#endif /* TP_XLSX_H */
