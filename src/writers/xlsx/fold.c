/*
 * fold.c — the "Other tracks" sheet: the records of the tracks past the workbook's sheet
 * budget (TP_XLSX_MAX_SHEETS), one row per record with its track, each track's first records
 * up to the row cap, as many as one sheet holds. It keeps the workbook's open files and
 * memory fixed however many tracks a trace has (one per pid, or one per async category).
 *
 * Owns nothing beyond one call.
 */
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
	xl_str(x, s, row, 0, tp_str(p, t->name), NULL);
	xl_str(x, s, row, 1, tp_track_kind_name((enum tp_track_kind)t->kind), NULL);
	xl_num(x, s, row, 2, t->device, x->f.cyc);
	xl_num(x, s, row, 3, t->core, x->f.cyc);
	if (t->kind == TP_TRACK_THREAD)
		xl_num(x, s, row, 4, (double)t->tid, x->f.cyc);
	xl_event_cells(x, s, row, 5, t, i);
}

/* What the "Other tracks" rows read, kept for stream.c's parts: each folded track's first
 * row (start[k]) and rows shown (start[k + 1] - start[k]). */
struct fold_rows {
	struct xl_argrows b;
	size_t n;        /* folded tracks with rows */
	int64_t start[]; /* n + 1 entries */
};

static void fold_rows_emit(struct xl *x, struct xl_sheet *s, const void *ctx, size_t a, size_t b)
{
	const struct fold_rows *fr = ctx;
	const struct plan *pl = x->plan;
	/* The folded track holding data row a: the last k with start[k] <= a. */
	size_t k = tp_upper_bound_i64(fr->start, fr->n, sizeof *fr->start, 0, (int64_t)a) - 1;
	for (size_t j = a; k < fr->n && j < b && !x->oom; k++) {
		const struct tp_track *t = &x->p->tracks[pl->fold[k]];
		for (; j < (size_t)fr->start[k + 1] && j < b; j++) {
			uint32_t row = TP_XLSX_DATA_ROW + (uint32_t)j;
			size_t i = j - (size_t)fr->start[k];
			fold_row(x, s, row, t, i);
			xl_write_args(x, s, row, x->p, &t->slices[i], &fr->b.ac, fr->b.other_col);
		}
	}
}

int xl_write_fold_sheet(struct xl *x, const struct part *pt, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	struct xl_sheet s = {.ws = pt->ws};
	struct fold_rows *fr =
	    xl_argrows_new(sizeof *fr + (pl->nfold + 1) * sizeof *fr->start, NULL, 0);
	if (!fr)
		return TP_ENOMEM;
	int st = fold_args(x, pt, pl, &fr->b.ac);
	if (st != TP_OK) {
		xl_argrows_free(fr);
		return st;
	}
	size_t left = pt->count;
	for (size_t k = 0; k < pl->nfold && left; k++) {
		size_t n = fold_shown(&p->tracks[pl->fold[k]], pl, left);
		fr->start[fr->n + 1] = fr->start[fr->n] + (int64_t)n;
		fr->n++;
		left -= n;
	}
	size_t rows = (size_t)fr->start[fr->n];
	fr->b.other_col = (uint16_t)(FOLD_NCOLS + fr->b.ac.n);
	uint16_t last_col = (uint16_t)(fr->b.other_col - (fr->b.ac.other ? 0 : 1));
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
	uint32_t hr = TP_XLSX_HEADER_ROW;
	xl_args_header(x, &s, hr, fold_cols, FOLD_NCOLS, &fr->b.ac, fr->b.other_col);
	st = xl_defer_rows(x, &s, TP_XLSX_DATA_ROW, rows, fold_rows_emit, fr, xl_argrows_free);
	if (st != TP_OK)
		return st;
	worksheet_freeze_panes(pt->ws, TP_XLSX_DATA_ROW, 0);
	xl_check(x,
	         worksheet_autofilter(pt->ws, hr, 0,
	                              rows ? TP_XLSX_DATA_ROW + (uint32_t)rows - 1 : hr, last_col));
	return x->oom ? TP_ENOMEM : TP_OK;
}
