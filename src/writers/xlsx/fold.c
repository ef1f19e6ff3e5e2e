/*
 * fold.c — the "Other tracks" sheet: the records of the tracks past the workbook's sheet
 * budget (TP_XLSX_MAX_SHEETS), one row per record with its track, each track's first records
 * up to the row cap, as many as one sheet holds. It keeps the workbook's open files and
 * memory fixed however many tracks a trace has (one per pid, or one per async category).
 *
 * Owns nothing beyond one call.
 */
#include "common/progress.h"
#include "writers/xlsx/xlsx_int.h"

#include <inttypes.h>
#include <string.h>

static const char *const fold_cols[] = {
    "Track",          "Kind",         "Device",       "Core Id", "Tid",      "Global Idx",
    "Start Time(us)", "End Time(us)", "Duration(us)", "Depth",   "Category", "Name"};
#define FOLD_NCOLS (sizeof fold_cols / sizeof *fold_cols)

/* Records of folded track `t` the sheet shows, given `left` rows still free. */
static size_t fold_shown(const struct tp_track *t, const struct plan *pl, size_t left)
{
	size_t n = (uint64_t)t->count > pl->row_cap ? (size_t)pl->row_cap : t->count;
	return n < left ? n : left;
}

/* The argument columns of the records shown. */
static int fold_args(struct xl *x, const struct part *pt, const struct plan *pl, struct argcols *ac)
{
	size_t left = pt->count;
	int st = TP_OK;
	for (size_t k = 0; k < pl->nfold && left && st == TP_OK; k++) {
		const struct tp_track *t = &x->p->tracks[pl->fold[k]];
		size_t n = fold_shown(t, pl, left);
		st = xl_collect_args(x->p, t, 0, n, fold_cols, FOLD_NCOLS, FOLD_NCOLS, ac);
		left -= n;
	}
	return st;
}

static void fold_row(struct xl *x, struct xl_sheet *s, uint32_t row, const struct tp_track *t,
                     size_t i)
{
	const struct tp_profile *p = x->p;
	const struct tp_slice *sl = &t->slices[i];
	xl_str(x, s, row, 0, tp_str(p, t->name), NULL);
	xl_str(x, s, row, 1, tp_track_kind_name((enum tp_track_kind)t->kind), NULL);
	xl_num(x, s, row, 2, t->device, x->f.cyc);
	xl_num(x, s, row, 3, t->core, x->f.cyc);
	if (t->kind == TP_TRACK_THREAD)
		xl_num(x, s, row, 4, (double)t->tid, x->f.cyc);
	xl_num(x, s, row, 5, (double)tp_global_idx(i), x->f.cyc);
	xl_num(x, s, row, 6, xl_ns_to_us(sl->start_ns), x->f.us);
	xl_num(x, s, row, 7, xl_ns_to_us(tp_slice_end(t, sl)), x->f.us);
	xl_num(x, s, row, 8, xl_ns_to_us(tp_slice_end(t, sl) - sl->start_ns), x->f.us);
	xl_num(x, s, row, 9, tp_slice_depth(t, sl), x->f.cyc);
	xl_str(x, s, row, 10, tp_str(p, tp_slice_type(t, sl)), NULL);
	xl_str(x, s, row, 11, tp_str(p, tp_slice_name(t, sl)), NULL);
}

int xl_write_fold_sheet(struct xl *x, const struct part *pt, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	struct xl_sheet s = {.ws = pt->ws};
	struct argcols ac = {0};
	struct tp_buf ob;
	tp_buf_init(&ob);
	int st = fold_args(x, pt, pl, &ac);
	if (st != TP_OK)
		goto out;
	uint16_t other_col = (uint16_t)(FOLD_NCOLS + ac.n);
	char note[400];
	snprintf(note, sizeof note,
	         "%zu tracks without a sheet of their own (a workbook holds at most %u sheets): "
	         "the first records of each, up to the row cap (%" PRIu64 "), in track order.",
	         pl->nfold, TP_XLSX_MAX_SHEETS, pl->row_cap);
	xl_str(x, &s, 0, 0, note, x->f.bold);
	if ((uint64_t)pt->count < pl->fold_records) {
		snprintf(note, sizeof note,
		         "Showing %zu of their %" PRIu64 " records: one sheet holds %u rows; every "
		         "total and every other output covers all of them.",
		         pt->count, pl->fold_records, (unsigned)(pl->max_rows - TP_XLSX_DATA_ROW));
		xl_str(x, &s, 1, 0, note, x->f.cap);
	}
	if (s.wcap)
		s.width[0] = 0;
	uint32_t hr = TP_XLSX_HEADER_ROW, row = TP_XLSX_DATA_ROW;
	xl_args_header(x, &s, hr, fold_cols, FOLD_NCOLS, &ac, other_col);
	size_t left = pt->count;
	for (size_t k = 0; k < pl->nfold && left; k++) {
		const struct tp_track *t = &p->tracks[pl->fold[k]];
		size_t n = fold_shown(t, pl, left);
		for (size_t i = 0; i < n; i++, row++) {
			if ((row & 2047) == 0)
				tp_progress_report(x->prog_done + (row - TP_XLSX_DATA_ROW),
				                   x->prog_total);
			fold_row(x, &s, row, t, i);
			xl_write_args(x, &s, row, p, &t->slices[i], &ac, other_col, &ob);
		}
		left -= n;
		if (x->err != LXW_NO_ERROR || x->oom)
			break;
	}
	uint16_t last_col = (uint16_t)(other_col - (ac.other ? 0 : 1));
	worksheet_freeze_panes(s.ws, TP_XLSX_DATA_ROW, 0);
	xl_check(
	    x, worksheet_autofilter(s.ws, hr, 0, row > TP_XLSX_DATA_ROW ? row - 1 : hr, last_col));
	xl_sheet_done(x, &s);
out:
	return xl_sheet_end(x, &ac, &ob, st);
}
