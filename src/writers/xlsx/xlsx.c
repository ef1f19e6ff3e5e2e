/*
 * xlsx.c — writes PerfDoc/PerfAI_output.xlsx: plans the sheets (plan.c: Engine Summary, layers,
 * Operators, one sheet per engine and core split at the row limit, one per host/firmware
 * track), creates the cell formats and document properties, then streams every sheet row by
 * row with libxlsxwriter in constant_memory mode (the sheet writers are listed in xlsx_int.h).
 * Layouts follow sophgo-analysis.md §5.2–§5.4 (column order, highlights, tab colours) with
 * the units fixed: cycles stay in each engine's clock, times are µs on the common axis, and
 * Parallelism/Concurrency convert every engine to time before adding (the reference PerfDoc
 * figures that add TIU ns to GDMA cycles are kept in their own, labelled columns).
 *
 * Per-record sheets show the first row_cap records of each track (--xlsx_rows, default
 * TP_XLSX_DEFAULT_ROWS) and say so; a cut engine track also gets its longest commands on the
 * "Longest commands" sheet; every total comes from the analysis of all records.
 *
 * Owns nothing beyond one call: the workbook, sheet plan and scratch buffers are freed before
 * tp_xlsx_write returns. No process state: the row cap comes in tp_out_opts.xlsx_rows.
 */
#include "common/progress.h"
#include "common/timings.h"
#include "writers/xlsx/xlsx_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fixed creation time (1980-01-01T00:00:00Z, the earliest ZIP date, which libxlsxwriter
 * also stamps on the archive members) so the same input gives the same bytes; 0 would make
 * libxlsxwriter use the wall clock. */
#define XL_CREATED ((time_t)315532800)

/* ---------------------------------------------------------------------------------------- */
/* Driver                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static lxw_format *fmt_num(lxw_workbook *wb, const char *numfmt)
{
	lxw_format *f = workbook_add_format(wb);
	if (f && numfmt)
		format_set_num_format(f, numfmt);
	return f;
}

static void make_formats(struct xl *x)
{
	lxw_workbook *wb = x->wb;
	x->f.title = workbook_add_format(wb);
	format_set_bold(x->f.title);
	format_set_font_size(x->f.title, 14);
	x->f.hdr = workbook_add_format(wb);
	format_set_bold(x->f.hdr);
	format_set_bg_color(x->f.hdr, 0xDDEBF7);
	format_set_bottom(x->f.hdr, LXW_BORDER_THIN);
	x->f.note = workbook_add_format(wb);
	format_set_italic(x->f.note);
	x->f.bold = workbook_add_format(wb);
	format_set_bold(x->f.bold);
	x->f.text = workbook_add_format(wb);
	x->f.link = workbook_get_default_url_format(wb);
	x->f.cyc = fmt_num(wb, "0");
	x->f.us = fmt_num(wb, "0.000");
	x->f.us_tag = fmt_num(wb, "0.000\"(us)\"");
	x->f.ms = fmt_num(wb, "0.000");
	x->f.gbps = fmt_num(wb, "0.00");
	x->f.pct = fmt_num(wb, "0.00%");
	x->f.pct1 = fmt_num(wb, "0.0%");
	x->f.real = fmt_num(wb, "0.######");
	x->f.input = fmt_num(wb, "0.000");
	format_set_bg_color(x->f.input, 0xFFF2CC);
	format_set_border(x->f.input, LXW_BORDER_THIN);
	x->f.cap = workbook_add_format(wb);
	format_set_bold(x->f.cap);
	format_set_font_color(x->f.cap, 0x9C0006);
	x->f.red = workbook_add_format(wb);
	format_set_bg_color(x->f.red, 0xFFC7CE);
	format_set_font_color(x->f.red, 0x9C0006);
	x->f.yellow = workbook_add_format(wb);
	format_set_bg_color(x->f.yellow, 0xFFEB9C);
	format_set_font_color(x->f.yellow, 0x9C5700);
}

/* Numbers every cell format in a fixed order before any cell is written: the large sheets'
 * rows are written on other threads (stream.c), which read the numbers but must not assign
 * them (libxlsxwriter would number a format at its first use, in whatever order the threads
 * ran). The conditional-format highlights (red, yellow) get their numbers as rules, on this
 * thread. */
static void number_formats(struct xl *x)
{
	lxw_format *all[] = {x->f.title, x->f.hdr,  x->f.note,   x->f.bold, x->f.text, x->f.link,
	                     x->f.cyc,   x->f.us,   x->f.us_tag, x->f.ms,   x->f.gbps, x->f.pct,
	                     x->f.pct1,  x->f.real, x->f.input,  x->f.cap};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		if (all[i])
			lxw_format_get_xf_index(all[i]);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return tp_strdup(".");
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	char *d = tp_malloc(n + 1);
	if (d) {
		memcpy(d, path, n);
		d[n] = '\0';
	}
	return d;
}

/* Document properties, without a wall-clock creation time. */
static void doc_properties(struct xl *x)
{
	const struct tp_profile *p = x->p;
	char title[256], subject[128], comments[256], net[256], full[300];
	/* net_name comes from the input: one line of valid XML text, cut on a character
	 * boundary to Excel's 255-byte limit on document and custom properties. */
	tp_text_copy(net, sizeof net, tp_str(p, p->net_name),
	             TP_TEXT_XML | TP_TEXT_CTRL | TP_TEXT_LINE);
	snprintf(full, sizeof full, "tpuprof PerfAI_output%s%s", *net ? ": " : "", net);
	tp_text_copy(title, sizeof title, full, TP_TEXT_XML | TP_TEXT_CTRL | TP_TEXT_LINE);
	snprintf(subject, sizeof subject, "%s profile", tp_arch_name(p->arch));
	snprintf(comments, sizeof comments, "Written by tpuprof %s from %s input", TP_VERSION,
	         *tp_str(p, p->source) ? tp_str(p, p->source) : "unknown");
	lxw_doc_properties props;
	memset(&props, 0, sizeof props);
	props.title = title;
	props.subject = subject;
	props.author = "tpuprof";
	props.category = "Profile";
	props.keywords = (char *)tp_arch_name(p->arch);
	props.comments = comments;
	props.created = XL_CREATED;
	xl_check(x, workbook_set_properties(x->wb, &props));
	xl_check(x, workbook_set_custom_property_string(x->wb, "arch", tp_arch_name(p->arch)));
	if (*net)
		xl_check(x, workbook_set_custom_property_string(x->wb, "net_name", net));
}

/* Writes every planned sheet in plan order, reporting progress. TP_OK, TP_ENOMEM or an
 * Operators sheet error (with `d` set); stops at the first libxlsxwriter error (x->err). */
static int write_sheets(struct xl *x, struct plan *pl, const struct tp_xlsx_opts *o,
                        struct tp_diag *d)
{
	int st = TP_OK;
	for (size_t i = 0; i < pl->n; i++)
		x->prog_total += pl->v[i].count;
	for (size_t i = 0; i < pl->n && st == TP_OK; i++) {
		struct part *pt = &pl->v[i];
		size_t ndefer = x->ndefer;
		tp_progress_report(x->prog_done, x->prog_total);
		switch (pt->kind) {
		case PK_SUMMARY:
			xl_write_summary(x, pt->ws, pl);
			break;
		case PK_LAYERS:
			xl_write_layers(x, pt, pl);
			break;
		case PK_OPS:
			st = xl_ops_write(x, pt->ws, o->sparse_ratios_path, d);
			break;
		case PK_ACCEL:
			xl_accel_write(x, pt->ws);
			break;
		case PK_LTAB:
			xl_write_ltab(x, pt->ws);
			break;
		case PK_WHATIF:
			xl_write_whatif(x, pt->ws);
			break;
		case PK_LONGEST:
			xl_write_longest(x, pt->ws, pl);
			break;
		case PK_ENGINE:
			st = xl_write_engine_sheet(x, pt, pl);
			break;
		case PK_EVENTS:
			st = xl_write_events_sheet(x, pt);
			break;
		case PK_FOLD:
			st = xl_write_fold_sheet(x, pt, pl);
			break;
		}
		/* The large sheets' rows count as stream.c writes them. */
		if (x->ndefer == ndefer)
			x->prog_done += pt->count;
		if (x->oom)
			st = TP_ENOMEM;
		if (x->err != LXW_NO_ERROR)
			break;
	}
	return st;
}

/* libxlsxwriter writes its zip (every part, the deferred sheets without their data rows) to
 * the workbook's temporary file and frees the workbook. */
static int close_workbook(struct xl *x, const char *path, struct tp_diag *d)
{
	errno = 0;
	tp_tm_begin("close");
	lxw_error ce = workbook_close(x->wb);
	tp_tm_end();
	int e = errno; /* the zip's failed write, for LXW_ERROR_ZIP_FILE_OPERATION */
	tp_progress_report(x->prog_total, x->prog_total);
	x->wb = NULL;
	if (ce == LXW_NO_ERROR)
		return TP_OK;
	/* A failed write reads as every output's does (tp_afile_fail). */
	if (ce == LXW_ERROR_ZIP_FILE_OPERATION && e)
		return tp_diag_set(d, TP_EOUTPUT, "%s: write failed: %s", path, strerror(e));
	return tp_diag_set(d, TP_EOUTPUT, "%s: libxlsxwriter: %s", path, lxw_strerror(ce));
}

int tp_xlsx_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                  const struct tp_xlsx_opts *xo, struct tp_diag *d)
{
	struct tp_xlsx_opts defaults = {0};
	if (!xo)
		xo = &defaults;
	struct tp_xlsx_opts o = *xo;
	if (o.max_rows && (o.max_rows < 16 || o.max_rows > TP_XLSX_EXCEL_MAX_ROWS))
		o.max_rows = 0;
	struct xl x = {.p = p, .a = a, .jobs = o.jobs ? o.jobs : 1};
	struct plan pl = {0};
	char *tmp = NULL, *tdir = NULL;
	int st = TP_OK;

	pl.max_rows = o.max_rows ? o.max_rows : TP_XLSX_EXCEL_MAX_ROWS;
	pl.row_cap = tp_xlsx_cap_for(p, o.max_cores, o.row_cap, &pl.auto_sheets);
	pl.ltab = a && a->ltab;
	tp_tm_begin("plan");
	st = xl_make_plan(&pl, p, &o);
	tp_tm_end();
	if (st != TP_OK)
		goto out;
	errno = 0;
	tmp = tp_temp_path_for(path);
	if (!tmp) {
		/* mkstemp sets errno (missing directory, permissions); the allocator does not. */
		int e = errno;
		if (e && e != ENOMEM)
			st = tp_diag_set(d, TP_EOUTPUT, "%s: cannot create a temporary file: %s",
			                 path, strerror(e));
		else
			st = TP_ENOMEM;
		goto out;
	}
	tdir = o.tmpdir ? tp_strdup(o.tmpdir) : dir_of(path);
	if (!tdir) {
		st = TP_ENOMEM;
		goto out;
	}
	lxw_workbook_options wo = {
	    .constant_memory = LXW_TRUE, .tmpdir = tdir, .use_zip64 = LXW_TRUE};
	x.wb = workbook_new_opt(tmp, &wo);
	if (!x.wb) {
		st = tp_diag_set(d, TP_EOUTPUT, "%s: cannot create the workbook", path);
		goto out;
	}
	make_formats(&x);
	number_formats(&x);
	x.plan = &pl;

	doc_properties(&x);

	for (size_t i = 0; i < pl.n; i++) {
		pl.v[i].ws = workbook_add_worksheet(x.wb, pl.v[i].name);
		if (!pl.v[i].ws) {
			st = tp_diag_set(d, TP_EOUTPUT, "%s: cannot add worksheet '%s'", path,
			                 pl.v[i].name);
			goto out;
		}
	}
	tp_tm_begin("sheets");
	st = write_sheets(&x, &pl, &o, d);
	tp_tm_end();
	if (st == TP_OK && x.err == LXW_NO_ERROR) {
		tp_tm_begin("rows");
		st = xl_defer_run(&x);
		tp_tm_end();
	}
	if (st != TP_OK)
		goto out;
	if (x.err != LXW_NO_ERROR) {
		st = tp_diag_set(d, TP_EOUTPUT, "%s: libxlsxwriter: %s", path, lxw_strerror(x.err));
		goto out;
	}
	if ((st = close_workbook(&x, path, d)) != TP_OK)
		goto out;
	if (x.ndefer) {
		/* tmp holds the workbook without the deferred rows: the output is a copy of it
		 * with them spliced in, and tmp is removed below. */
		tp_tm_begin("splice");
		st = xl_zip_splice(&x, tmp, path, d);
		tp_tm_end();
		remove(tmp);
		tp_temp_forget(tmp);
		tp_free(tmp);
		tmp = NULL;
	} else {
		st = tp_rename_into_place(tmp, path, d);
	}
out:
	if (x.wb) {
		/* workbook_close is the only way to free a workbook; it writes the (abandoned)
		 * temporary file, which is removed below. */
		workbook_close(x.wb);
	}
	if (st != TP_OK && tmp) {
		remove(tmp);
		tp_temp_forget(tmp);
	}
	if (st == TP_ENOMEM && d && d->status == TP_OK)
		tp_diag_set(d, TP_ENOMEM, "%s: out of memory while writing the workbook", path);
	tp_free(tmp);
	tp_free(tdir);
	tp_free(x.scratch);
	tp_buf_free(&x.other);
	xl_defer_free(&x);
	tp_free(pl.v);
	tp_free(pl.layer_idx);
	tp_free(pl.fold);
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* tp_output                                                                                 */
/* ---------------------------------------------------------------------------------------- */

int tp_xlsx_output_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                         const struct tp_out_opts *o, struct tp_diag *d)
{
	struct tp_xlsx_opts xo = {0};
	xo.max_cores = o ? o->max_cores : 0;
	xo.sparse_ratios_path = o ? o->sparse_ratios_path : NULL;
	xo.row_cap = o ? o->xlsx_rows : 0; /* 0: tp_xlsx_write takes tp_xlsx_cap_for's */
	xo.jobs = o && o->jobs > 0 ? (unsigned)o->jobs : 1;
	char *dir = tp_path_join(o && o->out_dir ? o->out_dir : ".", "PerfDoc");
	int st;
	int existed = dir && tp_is_dir(dir);
	if (!dir) {
		st = tp_diag_set(d, TP_ENOMEM, "out of memory");
	} else if ((st = tp_mkdirs(dir, d)) == TP_OK) {
		if (!existed)
			tp_temp_track_dir(dir); /* an interrupted run leaves no empty PerfDoc/ */
		/* Nothing here touches stderr: libxlsxwriter prints "[WARNING]" lines only for
		 * calls it rejects (over-long strings or URLs, a chart without series, duplicate
		 * sheet names, ...), and the writer checks all of those before calling it, so -q
		 * stays quiet without redirecting the process's stderr (which would also hide the
		 * other outputs' threads and a sanitizer report). */
		st = tp_xlsx_write(p, a, path, &xo, d);
		/* A failed write leaves no empty PerfDoc/ behind (rmdir removes only an empty
		 * directory, and only one this run created). */
		if (st != TP_OK && !existed)
			rmdir(dir);
		if (!existed)
			tp_temp_forget(dir);
	}
	tp_free(dir);
	return st;
}
