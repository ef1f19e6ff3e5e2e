/*
 * xlsx.c — writes PerfDoc/PerfAI_output.xlsx: plans the sheets (Engine Summary, layers,
 * Operators, one sheet per engine and core split at the row limit, one per host/firmware
 * track), then streams every sheet row by row with libxlsxwriter in constant_memory mode.
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
#include "writers/xlsx/xlsx_int.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fixed creation time (1980-01-01T00:00:00Z, the earliest ZIP date, which libxlsxwriter
 * also stamps on the archive members) so the same input gives the same bytes; 0 would make
 * libxlsxwriter use the wall clock. */
#define XL_CREATED ((time_t)315532800)

#define XL_MAX_ARG_COLS 200 /* argument columns per sheet; the rest go to "Other Args" */
#define XL_MAX_WIDTH 60
#define XL_STR_MAX 32767 /* Excel's limit on characters in a cell */

/* ---------------------------------------------------------------------------------------- */
/* Cell helpers                                                                             */
/* ---------------------------------------------------------------------------------------- */

void xl_check(struct xl *x, lxw_error e)
{
	if (e != LXW_NO_ERROR && x->err == LXW_NO_ERROR)
		x->err = e;
}

void xl_width(struct xl *x, struct xl_sheet *s, uint16_t col, size_t chars)
{
	if (col >= s->wcap) {
		size_t cap = s->wcap;
		uint16_t *w = tp_grow(s->width, sizeof *w, (size_t)col + 1, &cap);
		if (!w) {
			x->oom = 1;
			return;
		}
		memset(w + s->wcap, 0, (cap - s->wcap) * sizeof *w);
		s->width = w;
		s->wcap = cap;
	}
	if (col >= s->ncols)
		s->ncols = (uint16_t)(col + 1);
	if (chars > XL_MAX_WIDTH)
		chars = XL_MAX_WIDTH;
	if (chars > s->width[col])
		s->width[col] = (uint16_t)chars;
}

/* Characters a number takes in its display format (close enough for column fitting). */
static size_t num_chars(double v, lxw_format *fmt, const struct xl *x)
{
	double a = fabs(v);
	size_t n = 1;
	while (a >= 10 && n < 20) {
		a /= 10;
		n++;
	}
	if (v < 0)
		n++;
	if (fmt == x->f.us || fmt == x->f.ms || fmt == x->f.input)
		n += 4;
	else if (fmt == x->f.gbps)
		n += 3;
	else if (fmt == x->f.pct || fmt == x->f.pct1)
		n += 5;
	else if (fmt == x->f.real)
		n += 5;
	return n;
}

void xl_num(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col, double v, lxw_format *fmt)
{
	if (!isfinite(v)) {
		/* Excel has no NaN or infinity; a bare "nan" in the XML makes it repair the file.
		 */
		xl_str(x, s, row, col, isnan(v) ? "NaN" : v > 0 ? "Inf" : "-Inf", NULL);
		return;
	}
	xl_check(x, worksheet_write_number(s->ws, row, col, v, fmt));
	xl_width(x, s, col, num_chars(v, fmt, x));
}

/* Returns `v` itself when common's text-safety layer would keep it unchanged for XML and it
 * is short enough, else a cleaned copy in x->scratch (invalid UTF-8 and XML-illegal controls
 * become U+FFFD, U+FFFE/U+FFFF are dropped, cut to XL_STR_MAX characters). Counts characters
 * into *chars. */
static const char *clean(struct xl *x, const char *v, size_t *chars)
{
	size_t len = strlen(v);
	if (len <= XL_STR_MAX && tp_text_is_safe(v, len, TP_TEXT_XML)) {
		size_t n = 0;
		for (size_t i = 0; i < len; i++)
			n += ((unsigned char)v[i] & 0xC0) != 0x80;
		*chars = n;
		return v;
	}
	struct tp_buf t;
	tp_buf_init(&t);
	size_t n = tp_text_put(&t, v, len, TP_TEXT_XML, 0, XL_STR_MAX);
	if (t.oom || x->scap < t.len + 1) {
		char *nb = t.oom ? NULL : tp_realloc(x->scratch, t.len + 1);
		if (!nb) {
			tp_buf_free(&t);
			x->oom = 1;
			*chars = 0;
			return "";
		}
		x->scratch = nb;
		x->scap = t.len + 1;
	}
	if (t.len)
		memcpy(x->scratch, t.data, t.len);
	x->scratch[t.len] = '\0';
	tp_buf_free(&t);
	*chars = n;
	return x->scratch;
}

void xl_str(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col, const char *v,
            lxw_format *fmt)
{
	size_t chars;
	if (!v)
		v = "";
	v = clean(x, v, &chars);
	xl_check(x, worksheet_write_string(s->ws, row, col, v, fmt));
	xl_width(x, s, col, chars);
}

void xl_formula(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col, const char *formula,
                double cached, lxw_format *fmt)
{
	if (!isfinite(cached))
		cached = 0;
	xl_check(x, worksheet_write_formula_num(s->ws, row, col, formula, fmt, cached));
	xl_width(x, s, col, num_chars(cached, fmt, x));
}

void xl_sheet_done(struct xl *x, struct xl_sheet *s)
{
	for (uint16_t c = 0; c < s->ncols; c++) {
		double w = s->width[c] ? s->width[c] + 2.0 : 8.43;
		xl_check(x, worksheet_set_column(s->ws, c, c, w, NULL));
	}
	tp_free(s->width);
	s->width = NULL;
	s->wcap = 0;
	s->ncols = 0;
}

void xl_col_name(uint16_t col, char *buf)
{
	char tmp[4];
	int n = 0;
	unsigned c = (unsigned)col + 1;
	while (c && n < 3) {
		tmp[n++] = (char)('A' + (c - 1) % 26);
		c = (c - 1) / 26;
	}
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
}

/* ---------------------------------------------------------------------------------------- */
/* Sheet plan                                                                               */
/* ---------------------------------------------------------------------------------------- */

size_t tp_xlsx_parts(size_t count, uint32_t max_rows)
{
	size_t cap = (max_rows ? max_rows : TP_XLSX_EXCEL_MAX_ROWS) - TP_XLSX_DATA_ROW;
	return count <= cap ? 1 : (count + cap - 1) / cap;
}

void tp_xlsx_sheet_name(char *buf, size_t size, const char *name)
{
	size_t o = 0, chars = 0;
	if (size == 0)
		return;
	for (const char *q = name; *q && o + 4 < size && chars < 31;) {
		unsigned char c = (unsigned char)*q;
		/* Strict UTF-8 (common's decoder; it stops at the NUL), no control characters, no
		 * XML non-characters: anything else becomes '_'. */
		int32_t cp;
		size_t n = tp_utf8_decode((const unsigned char *)q, 4, &cp);
		int bad = cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF;
		if (bad) {
			buf[o++] = '_';
			q += n;
		} else if (n == 1 && strchr("[]:*?/\\", c)) {
			buf[o++] = '_';
			q++;
		} else {
			memcpy(buf + o, q, n);
			o += n;
			q += n;
		}
		chars++;
	}
	buf[o] = '\0';
	while (o && buf[o - 1] == '\'')
		buf[--o] = '\0';
	size_t lead = 0;
	while (buf[lead] == '\'')
		lead++;
	if (lead)
		memmove(buf, buf + lead, o - lead + 1);
	if (!buf[0])
		snprintf(buf, size, "Sheet");
}

enum part_kind { PK_SUMMARY, PK_LAYERS, PK_OPS, PK_LONGEST, PK_ENGINE, PK_EVENTS };
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
};

/* Records of a track shown on its sheets: the first `cap` in time. */
static size_t shown_of(size_t count, uint64_t cap)
{
	return (uint64_t)count > cap ? (size_t)cap : count;
}

static struct part *plan_add(struct plan *pl, enum part_kind k)
{
	struct part *v = tp_grow(pl->v, sizeof *v, pl->n + 1, &pl->cap);
	if (!v)
		return NULL;
	pl->v = v;
	memset(&v[pl->n], 0, sizeof v[pl->n]);
	v[pl->n].kind = k;
	v[pl->n].track = -1;
	return &v[pl->n++];
}

/* Gives parts unique names (Excel compares sheet names case-insensitively). */
static void unique_name(struct plan *pl, struct part *me)
{
	char base[128];
	snprintf(base, sizeof base, "%s", me->name);
	for (unsigned n = 2;; n++) {
		int clash = 0;
		for (size_t i = 0; i < pl->n; i++)
			if (&pl->v[i] != me && pl->v[i].name[0] &&
			    !strcasecmp(pl->v[i].name, me->name))
				clash = 1;
		if (!clash || n > 9999)
			return;
		char suffix[16];
		snprintf(suffix, sizeof suffix, " ~%u", n);
		/* Keep within 31 characters: cut the base (ASCII-safe cut; names are sanitised). */
		size_t keep = strlen(base);
		while (keep && keep + strlen(suffix) > 31)
			keep--;
		while (keep && ((unsigned char)base[keep] & 0xC0) == 0x80)
			keep--;
		snprintf(me->name, sizeof me->name, "%.*s%s", (int)keep, base, suffix);
	}
}

/* Engine tracks in (device, core, kind, track index) order; the key is copied so qsort needs
 * no context. */
struct track_key {
	int32_t device, core;
	uint8_t kind;
	int index;
};

static int engine_order(const void *a, const void *b)
{
	const struct track_key *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int multi_device(const struct tp_profile *p)
{
	for (size_t i = 0; i < p->num_tracks; i++)
		if (p->tracks[i].kind < TP_ENGINES && p->tracks[i].device != 0)
			return 1;
	return 0;
}

static const char *engine_sheet_prefix(uint8_t kind)
{
	switch (kind) {
	case TP_TRACK_TIU:
		return "TIU";
	case TP_TRACK_GDMA:
		return "GDMA";
	case TP_TRACK_SDMA:
		return "SDMA";
	case TP_TRACK_CDMA:
		return "CDMA";
	case TP_TRACK_MCU:
		return "MCU";
	case TP_TRACK_LAYER:
		return "Layer";
	default:
		return "Track";
	}
}

static void track_base_name(const struct tp_profile *p, int ti, int md, char *buf, size_t size)
{
	const struct tp_track *t = &p->tracks[ti];
	char raw[160];
	if (t->kind < TP_ENGINES || t->kind == TP_TRACK_MCU || t->kind == TP_TRACK_LAYER) {
		if (md)
			snprintf(raw, sizeof raw, "D%d %s_%d", (int)t->device,
			         engine_sheet_prefix(t->kind), (int)t->core);
		else
			snprintf(raw, sizeof raw, "%s_%d", engine_sheet_prefix(t->kind),
			         (int)t->core);
	} else if (t->kind == TP_TRACK_THREAD) {
		snprintf(raw, sizeof raw, "T%" PRId64 " %s", t->tid, tp_str(p, t->name));
	} else {
		snprintf(raw, sizeof raw, "Host %s", tp_str(p, t->name));
	}
	tp_xlsx_sheet_name(buf, size, raw);
}

static int add_track_parts(struct plan *pl, const struct tp_profile *p, int ti, int md,
                           uint32_t max_rows, enum part_kind kind)
{
	const struct tp_track *t = &p->tracks[ti];
	size_t shown = shown_of(t->count, pl->row_cap);
	pl->capped += shown < t->count;
	size_t parts = tp_xlsx_parts(shown, max_rows);
	size_t cap = (max_rows ? max_rows : TP_XLSX_EXCEL_MAX_ROWS) - TP_XLSX_DATA_ROW;
	char base[128];
	track_base_name(p, ti, md, base, sizeof base);
	for (size_t k = 0; k < parts; k++) {
		struct part *pt = plan_add(pl, kind);
		if (!pt)
			return TP_ENOMEM;
		pt->track = ti;
		pt->index = k;
		pt->nparts = parts;
		pt->first = k * cap;
		pt->count = shown - pt->first < cap ? shown - pt->first : cap;
		pt->shown = shown;
		if (k == 0) {
			snprintf(pt->name, sizeof pt->name, "%s", base);
		} else {
			/* "TIU_0 (2)": cut the base so the suffix fits in 31 characters. */
			char suffix[24];
			snprintf(suffix, sizeof suffix, " (%zu)", k + 1);
			size_t keep = strlen(base);
			while (keep && keep + strlen(suffix) > 31)
				keep--;
			while (keep && ((unsigned char)base[keep] & 0xC0) == 0x80)
				keep--;
			snprintf(pt->name, sizeof pt->name, "%.*s%s", (int)keep, base, suffix);
		}
		unique_name(pl, pt);
	}
	return TP_OK;
}

/* Which tracks get sheets: 1 = engine and firmware tracks (ordered by device, core, kind),
 * 2 = host threads, host lanes and layer tracks (track order), 0 = none. */
static int sheet_track(const struct tp_track *t, size_t max_cores)
{
	if (t->count == 0)
		return 0;
	if (t->kind < TP_ENGINES || t->kind == TP_TRACK_MCU)
		return max_cores && t->core >= 0 && (size_t)t->core >= max_cores ? 0 : 1;
	if (t->kind == TP_TRACK_THREAD || t->kind == TP_TRACK_HOST || t->kind == TP_TRACK_LAYER)
		return 2;
	return 0;
}

/* " (the default: ... shared by n per-record sheets ...)" when the cap is the shared default
 * below the per-sheet maximum (nsheets from tp_xlsx_cap_for), else "". */
static void default_cap_why(char *out, size_t size, size_t nsheets, uint64_t row_cap)
{
	out[0] = 0;
	if (nsheets && row_cap < TP_XLSX_DEFAULT_ROWS)
		snprintf(out, size,
		         " (the default: %u rows shared by %zu per-record sheets, %u to %u each)",
		         TP_XLSX_ROW_BUDGET, nsheets, TP_XLSX_MIN_DEFAULT_ROWS,
		         TP_XLSX_DEFAULT_ROWS);
}

/* Keeps the first pl->row_cap layers of each (device, core) in the profile's order. Leaves
 * pl->layer_idx NULL when no core has more. */
static int layer_rows(struct plan *pl, const struct tp_profile *p)
{
	struct {
		int32_t device, core;
		uint64_t n;
	} seen[64];
	size_t nseen = 0, kept = 0;
	size_t *idx = NULL;
	for (int pass = 0; pass < 2; pass++) {
		nseen = 0;
		kept = 0;
		for (size_t i = 0; i < p->num_layers; i++) {
			struct tp_layer lv;
			const struct tp_layer *l = tp_profile_layer(p, i, &lv);
			size_t k = 0;
			while (k < nseen &&
			       (seen[k].device != l->device || seen[k].core != l->core))
				k++;
			if (k == nseen && nseen < sizeof seen / sizeof *seen) {
				seen[nseen].device = l->device;
				seen[nseen].core = l->core;
				seen[nseen++].n = 0;
			}
			/* Past 64 distinct cores the rest share the last slot's count. */
			if (k >= nseen)
				k = nseen - 1;
			if (seen[k].n++ >= pl->row_cap)
				continue;
			if (idx)
				idx[kept] = i;
			kept++;
		}
		if (kept == p->num_layers)
			return TP_OK; /* nothing cut */
		if (!idx && !(idx = tp_calloc(kept ? kept : 1, sizeof *idx)))
			return TP_ENOMEM;
	}
	pl->layer_idx = idx;
	pl->nlayer_idx = kept;
	pl->layers_capped = 1;
	return TP_OK;
}

static int make_plan(struct plan *pl, const struct tp_profile *p, const struct tp_xlsx_opts *xo)
{
	struct part *pt = plan_add(pl, PK_SUMMARY);
	if (!pt)
		return TP_ENOMEM;
	snprintf(pt->name, sizeof pt->name, "Engine Summary");
	if (p->num_layers) {
		/* The row cap applies per core (the first row_cap layers of each core in the
		 * profile's order); pl->layer_idx lists the kept layers, NULL = all of them. */
		int st = layer_rows(pl, p);
		if (st != TP_OK)
			return st;
		size_t shown = pl->layer_idx ? pl->nlayer_idx : p->num_layers;
		/* Split past Excel's row limit like the engine sheets ("Layer by Layer Info (2)"):
		 * the data starts at row LAYER_DATA_ROW. */
		uint32_t rows = xo->max_rows ? xo->max_rows : TP_XLSX_EXCEL_MAX_ROWS;
		size_t cap = rows - LAYER_DATA_ROW;
		size_t parts = (shown + cap - 1) / cap;
		for (size_t k = 0; k < parts; k++) {
			if (!(pt = plan_add(pl, PK_LAYERS)))
				return TP_ENOMEM;
			pt->index = k;
			pt->nparts = parts;
			pt->first = k * cap;
			pt->count = shown - pt->first < cap ? shown - pt->first : cap;
			pt->shown = shown;
			if (k == 0)
				snprintf(pt->name, sizeof pt->name, "Layer by Layer Info");
			else
				snprintf(pt->name, sizeof pt->name, "Layer by Layer Info (%zu)",
				         k + 1);
		}
	}
	if (xl_ops_present(p)) {
		if (!(pt = plan_add(pl, PK_OPS)))
			return TP_ENOMEM;
		snprintf(pt->name, sizeof pt->name, "Operators");
	}
	struct track_key *order = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *order);
	if (!order)
		return TP_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (sheet_track(t, xo->max_cores) == 1) {
			order[n].device = t->device;
			order[n].core = t->core;
			order[n].kind = t->kind;
			order[n].index = (int)i;
			n++;
		}
	}
	qsort(order, n, sizeof *order, engine_order);
	/* A cut engine sheet gets the longest commands of its whole track on one extra sheet,
	 * placed before the engine sheets. */
	int any_cut = 0;
	for (size_t i = 0; i < n; i++)
		any_cut |= order[i].kind < TP_ENGINES &&
		           (uint64_t)p->tracks[order[i].index].count > pl->row_cap;
	if (any_cut) {
		if (!(pt = plan_add(pl, PK_LONGEST))) {
			tp_free(order);
			return TP_ENOMEM;
		}
		snprintf(pt->name, sizeof pt->name, "Longest commands");
	}
	int md = multi_device(p), st = TP_OK;
	for (size_t i = 0; i < n && st == TP_OK; i++)
		st = add_track_parts(pl, p, order[i].index, md, xo->max_rows,
		                     order[i].kind < TP_ENGINES ? PK_ENGINE : PK_EVENTS);
	/* Host threads, host lanes and layer tracks keep track order. */
	for (size_t i = 0; i < p->num_tracks && st == TP_OK; i++) {
		if (sheet_track(&p->tracks[i], xo->max_cores) == 2)
			st = add_track_parts(pl, p, (int)i, md, xo->max_rows, PK_EVENTS);
	}
	tp_free(order);
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Shared bits                                                                               */
/* ---------------------------------------------------------------------------------------- */

static double ns_to_us(int64_t ns)
{
	return (double)ns / 1000.0;
}

static void header_row(struct xl *x, struct xl_sheet *s, uint32_t row, const char *const *names,
                       size_t n)
{
	for (size_t i = 0; i < n; i++)
		xl_str(x, s, row, (uint16_t)i, names[i], x->f.hdr);
}

/* Applies conditional format `cf` (fmt filled in here) to rows [r0, r1] of one column. */
static void cond_apply(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                       lxw_conditional_format cf, lxw_format *fmt)
{
	cf.format = fmt;
	xl_check(x, worksheet_conditional_format_range(ws, r0, col, r1, col, &cf));
}

/* A cell-value rule: `criteria` (LXW_CONDITIONAL_CRITERIA_*) against `value`. */
static void cond_cell(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                      uint8_t criteria, double value, lxw_format *fmt)
{
	cond_apply(x, ws, r0, r1, col,
	           (lxw_conditional_format){
	               .type = LXW_CONDITIONAL_TYPE_CELL, .criteria = criteria, .value = value},
	           fmt);
}

/* A rule for cells containing `text`. */
static void cond_text(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                      const char *text, lxw_format *fmt)
{
	cond_apply(x, ws, r0, r1, col,
	           (lxw_conditional_format){.type = LXW_CONDITIONAL_TYPE_TEXT,
	                                    .criteria = LXW_CONDITIONAL_CRITERIA_TEXT_CONTAINING,
	                                    .value_string = (char *)text},
	           fmt);
}

/* A formula rule; `formula` is written for the first cell (row r0) and Excel shifts it. */
static void cond_formula(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                         const char *formula, lxw_format *fmt)
{
	cond_apply(x, ws, r0, r1, col,
	           (lxw_conditional_format){.type = LXW_CONDITIONAL_TYPE_FORMULA,
	                                    .value_string = (char *)formula},
	           fmt);
}

/* Peak bandwidths for the highlight rules: the chip table's "DDR Max BW(GB/s/Core)" and "L2
 * Max BW" (reference-outputs.md §3.1: BM1688 32 / 0; sophgo-analysis.md §3: sg2260 68.264 /
 * 128), unless the reader recorded them as metadata. 0 = unknown (no rule). */
static double meta_real(const struct tp_profile *p, const char *key, double dflt)
{
	const char *v = tp_profile_get_meta(p, key);
	if (!v)
		return dflt;
	char *end;
	double d = strtod(v, &end);
	return end != v && isfinite(d) && d >= 0 ? d : dflt;
}

static double ddr_max_bw(const struct tp_profile *p)
{
	double d = p->chip ? p->chip->ddr_max_gbps : 0.0;
	return meta_real(p, "DDR Max BW(GB/s/Core)", d);
}

static double l2_max_bw(const struct tp_profile *p)
{
	double d = p->chip ? p->chip->l2_max_gbps : 0.0;
	return meta_real(p, "L2 Max BW(GB/s)", d);
}

static const struct tp_engine_stats *stats_of(const struct tp_analysis *a, const struct tp_track *t)
{
	static const struct tp_engine_stats none;
	const struct tp_core_stats *c = tp_analysis_core(a, t->device, t->core);
	return c && t->kind < TP_ENGINES ? &c->eng[t->kind] : &none;
}

/* ---------------------------------------------------------------------------------------- */
/* Argument columns                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* Union of the argument keys used on a slice range, in first-seen order, minus keys that
 * already have a fixed column. A small open-addressing map from strtab id to column. */
struct argcols {
	uint32_t *keys; /* column order */
	size_t n, cap;
	uint32_t *slots; /* key id + 1 -> hashed; parallel col index */
	uint16_t *slot_col;
	size_t nslots;
	int other; /* some keys did not fit: "Other Args" column */
};

static uint16_t argcols_find(const struct argcols *ac, uint32_t key)
{
	if (!ac->nslots)
		return UINT16_MAX;
	size_t h = (key * 2654435761u) & (ac->nslots - 1);
	while (ac->slots[h]) {
		if (ac->slots[h] == key + 1)
			return ac->slot_col[h];
		h = (h + 1) & (ac->nslots - 1);
	}
	return UINT16_MAX;
}

static int argcols_add(struct argcols *ac, uint32_t key, uint16_t col)
{
	if ((ac->n + 1) * 2 > ac->nslots) {
		size_t ns = ac->nslots ? ac->nslots * 2 : 64;
		uint32_t *slots = tp_calloc(ns, sizeof *slots);
		uint16_t *cols = tp_calloc(ns, sizeof *cols);
		if (!slots || !cols) {
			tp_free(slots);
			tp_free(cols);
			return TP_ENOMEM;
		}
		for (size_t i = 0; i < ac->nslots; i++) {
			if (!ac->slots[i])
				continue;
			size_t h = ((ac->slots[i] - 1) * 2654435761u) & (ns - 1);
			while (slots[h])
				h = (h + 1) & (ns - 1);
			slots[h] = ac->slots[i];
			cols[h] = ac->slot_col[i];
		}
		tp_free(ac->slots);
		tp_free(ac->slot_col);
		ac->slots = slots;
		ac->slot_col = cols;
		ac->nslots = ns;
	}
	uint32_t *k = tp_grow(ac->keys, sizeof *k, ac->n + 1, &ac->cap);
	if (!k)
		return TP_ENOMEM;
	ac->keys = k;
	ac->keys[ac->n++] = key;
	size_t h = (key * 2654435761u) & (ac->nslots - 1);
	while (ac->slots[h])
		h = (h + 1) & (ac->nslots - 1);
	ac->slots[h] = key + 1;
	ac->slot_col[h] = col;
	return TP_OK;
}

static void argcols_free(struct argcols *ac)
{
	tp_free(ac->keys);
	tp_free(ac->slots);
	tp_free(ac->slot_col);
	memset(ac, 0, sizeof *ac);
}

/* Fixed columns whose names an argument must not repeat. */
static int is_fixed(const char *key, const char *const *fixed, size_t nfixed)
{
	for (size_t i = 0; i < nfixed; i++)
		if (!strcmp(key, fixed[i]))
			return 1;
	return 0;
}

static int collect_args(const struct tp_profile *p, const struct tp_track *t, size_t first,
                        size_t count, const char *const *fixed, size_t nfixed, uint16_t col0,
                        struct argcols *ac)
{
	/* Keys met and rejected (fixed names) are remembered with column UINT16_MAX - 1 so they
	 * are looked up once. */
	struct argcols seen = {0};
	int st = TP_OK;
	for (size_t i = first; i < first + count && st == TP_OK; i++) {
		size_t n;
		const struct tp_arg *args = tp_args_get(p, t->slices[i].args, &n);
		for (size_t k = 0; k < n && st == TP_OK; k++) {
			uint32_t key = args[k].key;
			if (argcols_find(&seen, key) != UINT16_MAX)
				continue;
			st = argcols_add(&seen, key, 0);
			if (st != TP_OK)
				break;
			if (is_fixed(tp_str(p, key), fixed, nfixed))
				continue;
			if (ac->n >= XL_MAX_ARG_COLS) {
				ac->other = 1;
				continue;
			}
			st = argcols_add(ac, key, (uint16_t)(col0 + ac->n));
		}
	}
	argcols_free(&seen);
	return st;
}

static int key_is_address(const char *k)
{
	return strstr(k, "addr") != NULL || strstr(k, "mask") != NULL;
}

static void write_arg(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col,
                      const struct tp_profile *p, const struct tp_arg *g)
{
	char buf[32];
	switch (g->type) {
	case TP_ARG_INT:
		if (g->v.i > -(INT64_C(1) << 53) && g->v.i < (INT64_C(1) << 53))
			xl_num(x, s, row, col, (double)g->v.i, x->f.cyc);
		else {
			snprintf(buf, sizeof buf, "%" PRId64, g->v.i);
			xl_str(x, s, row, col, buf, NULL);
		}
		break;
	case TP_ARG_UINT:
		/* Reference PerfDoc renders address and mask fields as hex strings (§5.2). */
		if (key_is_address(tp_str(p, g->key))) {
			snprintf(buf, sizeof buf, "0x%" PRIx64, g->v.u);
			xl_str(x, s, row, col, buf, NULL);
		} else if (g->v.u < (UINT64_C(1) << 53)) {
			xl_num(x, s, row, col, (double)g->v.u, x->f.cyc);
		} else {
			snprintf(buf, sizeof buf, "%" PRIu64, g->v.u);
			xl_str(x, s, row, col, buf, NULL);
		}
		break;
	case TP_ARG_REAL:
		xl_num(x, s, row, col, g->v.d, x->f.real);
		break;
	default:
		xl_str(x, s, row, col, tp_str(p, g->v.s), NULL);
		break;
	}
}

/* Writes the slice's arguments into their columns; keys without a column go to "Other Args"
 * as "key=value; ..." text. */
static void write_args(struct xl *x, struct xl_sheet *s, uint32_t row, const struct tp_profile *p,
                       const struct tp_slice *sl, const struct argcols *ac, uint16_t other_col,
                       struct tp_buf *ob)
{
	size_t n;
	const struct tp_arg *args = tp_args_get(p, sl->args, &n);
	if (ac->other)
		ob->len = 0;
	for (size_t k = 0; k < n; k++) {
		uint16_t col = argcols_find(ac, args[k].key);
		if (col != UINT16_MAX) {
			write_arg(x, s, row, col, p, &args[k]);
			continue;
		}
		if (!ac->other)
			continue;
		const struct tp_arg *g = &args[k];
		if (ob->len)
			tp_buf_puts(ob, "; ");
		tp_buf_puts(ob, tp_str(p, g->key));
		tp_buf_putc(ob, '=');
		if (g->type == TP_ARG_INT)
			tp_buf_printf(ob, "%" PRId64, g->v.i);
		else if (g->type == TP_ARG_UINT)
			tp_buf_printf(ob, "%" PRIu64, g->v.u);
		else if (g->type == TP_ARG_REAL)
			tp_buf_fixed(ob, g->v.d, 6);
		else
			tp_buf_puts(ob, tp_str(p, g->v.s));
	}
	if (ac->other && ob->len) {
		tp_buf_putc(ob, '\0');
		if (!ob->oom)
			xl_str(x, s, row, other_col, ob->data, NULL);
		ob->len = 0;
	}
}

/* Looks up an argument by key text; NULL if absent. */
static const struct tp_arg *arg_by_key(const struct tp_profile *p, const struct tp_slice *sl,
                                       uint32_t key)
{
	size_t n;
	const struct tp_arg *args = tp_args_get(p, sl->args, &n);
	for (size_t k = 0; k < n; k++)
		if (args[k].key == key)
			return &args[k];
	return NULL;
}

static double arg_num(const struct tp_profile *p, const struct tp_arg *g, int *ok)
{
	*ok = 1;
	switch (g->type) {
	case TP_ARG_INT:
		return (double)g->v.i;
	case TP_ARG_UINT:
		return (double)g->v.u;
	case TP_ARG_REAL:
		return g->v.d;
	default: {
		const char *s = tp_str(p, g->v.s);
		char *end;
		double d = strtod(s, &end);
		*ok = end != s;
		return d;
	}
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Engine sheets (TIU_c, GDMA_c, SDMA_c, CDMA_c)                                             */
/* ---------------------------------------------------------------------------------------- */

enum ecol {
	E_ENGINE_ID,
	E_CORE_ID,
	E_GIDX,
	E_CMD_ID,
	E_LAYER_ID,
	E_LAYER_NAME,
	E_FTYPE,
	E_FNAME,
	E_DMA_SIZE,
	E_ASIC,
	E_START_CYC,
	E_END_CYC,
	E_START_US,
	E_END_US,
	E_DUR_US,
	E_AVG200,
	E_ALG_CYCLE,
	E_ALG_OPS,
	E_UARCH_OPS,
	E_UARCH,
	E_BANK,
	E_INIT,
	E_STALL,
	E_DDR_BW,
	E_L2_BW,
	E_DIR,
	E_DTYPE,
	E_DEP,
	E_NCOLS
};

static const char *const ecol_name[E_NCOLS] = {
    "Engine Id",
    "Core Id",
    "Global Idx",
    "Cmd Id",
    "Layer Id",
    "Layer Name",
    "Function Type",
    "Function Name",
    "DMA data size(B)",
    "Asic Cycle",
    "Start Cycle",
    "End Cycle",
    "Start Time(us)",
    "End Time(us)",
    "Duration(us)",
    "Avg Cycle Last 200",
    "Alg Cycle",
    "Alg Ops",
    "uArch Ops",
    "uArch Rate",
    "Bank Conflict Ratio",
    "Initial Cycle Ratio",
    "Stall Cycle",
    "DDR Bandwidth(GB/s)",
    "L2M Bandwidth(GB/s)",
    "Direction",
    "Data Type",
    "cmd_id_dep",
};

/* Column order per engine (sophgo-analysis.md §5.2 TIU, §5.3 DMA; µs columns are ours). */
static const enum ecol tiu_cols[] = {
    E_ENGINE_ID, E_CORE_ID,   E_GIDX,      E_CMD_ID,  E_LAYER_ID, E_LAYER_NAME, E_FTYPE,  E_FNAME,
    E_ALG_CYCLE, E_ASIC,      E_START_CYC, E_END_CYC, E_START_US, E_END_US,     E_DUR_US, E_AVG200,
    E_ALG_OPS,   E_UARCH_OPS, E_UARCH,     E_BANK,    E_INIT,     E_DTYPE,      E_DEP,
};
static const enum ecol dma_cols[] = {
    E_ENGINE_ID, E_CORE_ID,  E_GIDX,      E_CMD_ID,  E_LAYER_ID, E_LAYER_NAME, E_FTYPE,
    E_FNAME,     E_DMA_SIZE, E_START_CYC, E_END_CYC, E_ASIC,     E_START_US,   E_END_US,
    E_DUR_US,    E_STALL,    E_DDR_BW,    E_L2_BW,   E_DIR,      E_DTYPE,      E_DEP,
};

static int engine_id(uint8_t kind)
{
	/* Reference Engine Id: 0 TIU, 1 GDMA, 3 SDMA, 4 CDMA (sophgo-analysis.md §2.1). */
	return kind == TP_TRACK_TIU ? 0 : kind == TP_TRACK_GDMA ? 1 : kind == TP_TRACK_SDMA ? 3 : 4;
}

static void engine_summary_block(struct xl *x, struct xl_sheet *s, const struct tp_track *t,
                                 const struct part *pt, const struct plan *pl)
{
	const struct tp_engine_stats *e = stats_of(x->a, t);
	char note[512];
	if (t->kind == TP_TRACK_TIU) {
		static const char *const h[] = {"totalTiuCycle", "busyCycle",   "waitMsgTotalCycle",
		                                "sysCycle",      "records",     "busyTime(us)",
		                                "idleTime(us)",  "utilisation", "algTotalOps",
		                                "totalUArchOps", "uArchURate",  "totalAlgCycle"};
		header_row(x, s, 0, h, sizeof h / sizeof *h);
		xl_num(x, s, 1, 0, (double)e->working_cycle, x->f.cyc);
		xl_num(x, s, 1, 1, (double)e->busy_cycle, x->f.cyc);
		xl_num(x, s, 1, 2, (double)e->wait_cycle, x->f.cyc);
		xl_num(x, s, 1, 3, (double)e->sys_cycle, x->f.cyc);
		xl_num(x, s, 1, 4, (double)e->records, x->f.cyc);
		xl_num(x, s, 1, 5, ns_to_us(e->busy_ns), x->f.us);
		xl_num(x, s, 1, 6, ns_to_us(e->idle_ns), x->f.us);
		xl_num(x, s, 1, 7, e->utilization, x->f.pct);
		double rate;
		if (tp_uarch_rate(e, &rate)) {
			xl_num(x, s, 1, 8, (double)e->alg_ops, x->f.cyc);
			xl_num(x, s, 1, 9, (double)e->uarch_ops, x->f.cyc);
			xl_num(x, s, 1, 10, rate, x->f.pct);
			xl_num(x, s, 1, 11, (double)e->alg_cycle, x->f.cyc);
		} else {
			/* No descriptors in the dump: nothing to model, nothing invented. */
			for (uint16_t c = 8; c <= 11; c++)
				xl_str(x, s, 1, c, "n/a", NULL);
		}
	} else {
		static const char *const h[] = {"totalDmaCycle",
		                                "busyCycle",
		                                "totalStallCycle",
		                                "stallCycleRatio",
		                                "totalDdrDataSize(B)",
		                                "totalL2DataSize(B)",
		                                "ddrAvgBandwidth(GB/s)",
		                                "l2AvgBandwidth(GB/s)",
		                                "ddrReadBandwidth(GB/s)",
		                                "ddrWriteBandwidth(GB/s)",
		                                "waitMsgTotalCycle",
		                                "records",
		                                "busyTime(us)",
		                                "idleTime(us)",
		                                "utilisation"};
		header_row(x, s, 0, h, sizeof h / sizeof *h);
		xl_num(x, s, 1, 0, (double)e->working_cycle, x->f.cyc);
		xl_num(x, s, 1, 1, (double)e->busy_cycle, x->f.cyc);
		xl_num(x, s, 1, 2, (double)e->stall_cycle, x->f.cyc);
		xl_num(x, s, 1, 3,
		       e->working_cycle ? (double)e->stall_cycle / (double)e->working_cycle : 0,
		       x->f.pct);
		xl_num(x, s, 1, 4, (double)e->ddr_bytes, x->f.cyc);
		xl_num(x, s, 1, 5, (double)e->l2_bytes, x->f.cyc);
		xl_num(x, s, 1, 6, e->ddr_avg_gbps, x->f.gbps);
		xl_num(x, s, 1, 7, e->l2_avg_gbps, x->f.gbps);
		xl_num(x, s, 1, 8, e->ddr_read_gbps, x->f.gbps);
		xl_num(x, s, 1, 9, e->ddr_write_gbps, x->f.gbps);
		xl_num(x, s, 1, 10, (double)e->wait_cycle, x->f.cyc);
		xl_num(x, s, 1, 11, (double)e->records, x->f.cyc);
		xl_num(x, s, 1, 12, ns_to_us(e->busy_ns), x->f.us);
		xl_num(x, s, 1, 13, ns_to_us(e->idle_ns), x->f.us);
		xl_num(x, s, 1, 14, e->utilization, x->f.pct);
	}
	int n = 0;
	if (pt->shown < t->count)
		n = snprintf(
		    note, sizeof note,
		    "Showing the first %zu of %zu commands of core %d (row cap %zu, see the "
		    "Engine Summary); rerun with --xlsx_rows all for every row. ",
		    pt->shown, t->count, (int)t->core, pt->shown);
	int m0 = snprintf(note + n, sizeof note - (size_t)n,
	                  "Core %d %s at %.0f MHz: cycles in this engine's clock, times in us on "
	                  "the common time axis. Totals above cover %sthe whole core. ",
	                  (int)t->core, engine_sheet_prefix(t->kind), t->freq_mhz,
	                  pt->shown < t->count ? "every command of " : "");
	if (m0 > 0)
		n += m0;
	if (pt->nparts > 1 && n > 0 && (size_t)n < sizeof note) {
		const char *next = pt->index + 1 < pt->nparts ? (pt + 1)->name : NULL;
		const char *prev = pt->index ? (pt - 1)->name : NULL;
		int m = snprintf(note + n, sizeof note - (size_t)n,
		                 "Part %zu of %zu: Global Idx %zu-%zu of %zu (%u rows per sheet)",
		                 pt->index + 1, pt->nparts, pt->first, pt->first + pt->count - 1,
		                 pt->shown, (unsigned)pl->max_rows);
		if (m > 0 && (size_t)(n + m) < sizeof note) {
			n += m;
			if (prev)
				n += snprintf(note + n, sizeof note - (size_t)n,
				              "; continued from '%s'", prev);
			if (next && n > 0 && (size_t)n < sizeof note)
				n += snprintf(note + n, sizeof note - (size_t)n,
				              "; continues on '%s'", next);
			if (n > 0 && (size_t)n < sizeof note)
				snprintf(note + n, sizeof note - (size_t)n, ".");
		}
	}
	xl_str(x, s, 2, 0, note, pt->shown < t->count ? x->f.cap : x->f.note);
	/* The note is long: do not let it widen column A. */
	if (s->wcap)
		s->width[0] = 0;
	for (uint16_t c = 0; c < s->ncols; c++)
		if (s->width[c] > 16)
			s->width[c] = 16;
}

static int write_engine_sheet(struct xl *x, const struct part *pt, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	const struct tp_track *t = &p->tracks[pt->track];
	int tiu = t->kind == TP_TRACK_TIU;
	const enum ecol *cols = tiu ? tiu_cols : dma_cols;
	size_t ncols =
	    tiu ? sizeof tiu_cols / sizeof *tiu_cols : sizeof dma_cols / sizeof *dma_cols;
	struct xl_sheet s = {.ws = pt->ws};
	struct argcols ac = {0};
	struct tp_buf ob;
	tp_buf_init(&ob);
	int have_layers = p->num_layers > 0;
	const char *names[E_NCOLS];
	enum ecol map[E_NCOLS];
	size_t nc = 0;
	int16_t pos[E_NCOLS];
	for (size_t i = 0; i < E_NCOLS; i++)
		pos[i] = -1;
	for (size_t i = 0; i < ncols; i++) {
		if (!have_layers && (cols[i] == E_LAYER_ID || cols[i] == E_LAYER_NAME))
			continue;
		map[nc] = cols[i];
		names[nc] = cols[i] == E_DEP && tiu ? "des_cmd_id_dep" : ecol_name[cols[i]];
		pos[cols[i]] = (int16_t)nc;
		nc++;
	}
	/* Keys that duplicate a fixed column (readers may store them as arguments too). */
	const char *fixed[E_NCOLS + 8];
	size_t nfixed = 0;
	for (size_t i = 0; i < nc; i++)
		fixed[nfixed++] = names[i];
	fixed[nfixed++] = "des_cmd_id_dep";
	fixed[nfixed++] = "cmd_id_dep";
	fixed[nfixed++] = "uArch Rate";
	fixed[nfixed++] = "Data Type";
	int st = collect_args(p, t, pt->first, pt->count, fixed, nfixed, (uint16_t)nc, &ac);
	if (st != TP_OK)
		goto out;
	uint16_t other_col = (uint16_t)(nc + ac.n);

	engine_summary_block(x, &s, t, pt, pl);
	uint32_t hr = TP_XLSX_HEADER_ROW;
	header_row(x, &s, hr, names, nc);
	for (size_t i = 0; i < ac.n; i++)
		xl_str(x, &s, hr, (uint16_t)(nc + i), tp_str(p, ac.keys[i]), x->f.hdr);
	if (ac.other)
		xl_str(x, &s, hr, other_col, "Other Args", x->f.hdr);

	/* Argument keys the fixed columns read (0 = absent). */
	uint32_t k_uarch = tp_profile_find_str(p, "uArch Rate"),
	         k_alg = tp_profile_find_str(p, "Alg Ops"),
	         k_uops = tp_profile_find_str(p, "uArch Ops"),
	         k_acyc = tp_profile_find_str(p, "Alg Cycle"),
	         k_bank = tp_profile_find_str(p, "Bank Conflict Ratio"),
	         k_init = tp_profile_find_str(p, "Initial Cycle Ratio"),
	         k_dtype = tp_profile_find_str(p, "Data Type"),
	         k_dep = tp_profile_find_str(p, tiu ? "des_cmd_id_dep" : "cmd_id_dep");
	double freq = t->freq_mhz;

	for (size_t i = pt->first; i < pt->first + pt->count; i++) {
		const struct tp_slice *sl = &t->slices[i];
		uint32_t row = TP_XLSX_DATA_ROW + (uint32_t)(i - pt->first);
		if ((i & 2047) == 0)
			tp_progress_report(x->prog_done + (i - pt->first), x->prog_total);
		int sys = tp_slice_kind(t, sl) != TP_CMD_NORMAL;
		struct tp_cmd_cost cc;
		int costed = tiu && tp_slice_cost(t, i, &cc);
		const struct tp_arg *g;
		struct tp_layer lv;
		int ok;
		for (size_t c = 0; c < nc; c++) {
			uint16_t col = (uint16_t)c;
			switch (map[c]) {
			case E_ENGINE_ID:
				xl_num(x, &s, row, col, engine_id(t->kind), x->f.cyc);
				break;
			case E_CORE_ID:
				xl_num(x, &s, row, col, t->core, x->f.cyc);
				break;
			case E_GIDX:
				xl_num(x, &s, row, col, (double)i, x->f.cyc);
				break;
			case E_CMD_ID:
				xl_num(x, &s, row, col, sl->cmd_id, x->f.cyc);
				break;
			case E_LAYER_ID:
				if (sl->layer >= 0 && (size_t)sl->layer < p->num_layers)
					xl_num(x, &s, row, col,
					       tp_profile_layer(p, (size_t)sl->layer, &lv)->id,
					       x->f.cyc);
				else
					xl_str(x, &s, row, col, "-", NULL);
				break;
			case E_LAYER_NAME:
				xl_str(
				    x, &s, row, col,
				    sl->layer >= 0 && (size_t)sl->layer < p->num_layers
				        ? tp_str(p,
				                 tp_profile_layer(p, (size_t)sl->layer, &lv)->name)
				        : "-",
				    NULL);
				break;
			case E_FTYPE:
				xl_str(x, &s, row, col, tp_str(p, tp_slice_type(t, sl)), NULL);
				break;
			case E_FNAME:
				xl_str(x, &s, row, col, tp_str(p, tp_slice_name(t, sl)), NULL);
				break;
			case E_DMA_SIZE:
				xl_num(x, &s, row, col, tp_slice_bytes(t, sl), x->f.cyc);
				break;
			case E_ASIC:
				xl_num(x, &s, row, col, sl->cycles, x->f.cyc);
				break;
			case E_START_CYC:
				xl_num(x, &s, row, col, (double)tp_slice_start_cycle(t, sl),
				       x->f.cyc);
				break;
			case E_END_CYC:
				xl_num(x, &s, row, col, (double)tp_slice_end_cycle(t, sl),
				       x->f.cyc);
				break;
			case E_START_US:
				xl_num(x, &s, row, col, ns_to_us(sl->start_ns), x->f.us);
				break;
			case E_END_US:
				xl_num(x, &s, row, col, ns_to_us(tp_slice_end(t, sl)), x->f.us);
				break;
			case E_DUR_US:
				xl_num(x, &s, row, col,
				       ns_to_us(tp_slice_end(t, sl) - sl->start_ns), x->f.us);
				break;
			case E_AVG200: {
				/* §5.2: End/CmdId for the first 199 records — the vendor divides by
				 * Cmd Id, which starts at 2 on a core whose leading send_msg was
				 * dropped — else (End[i] - Start[i-199]) / 200. */
				double v;
				double id = sl->cmd_id ? (double)sl->cmd_id : (double)(i + 1);
				if (i < 199)
					v = (double)tp_slice_end_cycle(t, sl) / id;
				else
					v = ((double)tp_slice_end_cycle(t, sl) -
					     (double)tp_slice_start_cycle(t, &t->slices[i - 199])) /
					    200.0;
				xl_num(x, &s, row, col, v, x->f.gbps);
				break;
			}
			case E_ALG_CYCLE:
			case E_ALG_OPS:
			case E_UARCH_OPS: {
				/* The cost model's figure, else the reader's argument, else n/a. */
				uint32_t key = map[c] == E_ALG_CYCLE ? k_acyc
				               : map[c] == E_ALG_OPS ? k_alg
				                                     : k_uops;
				double v = map[c] == E_ALG_CYCLE ? (double)cc.alg_cycle
				           : map[c] == E_ALG_OPS ? (double)cc.alg_ops
				                                 : (double)cc.uarch_ops;
				ok = costed;
				if (!ok && key && (g = arg_by_key(p, sl, key)))
					v = arg_num(p, g, &ok);
				if (ok)
					xl_num(x, &s, row, col, v, x->f.cyc);
				else
					xl_str(x, &s, row, col, "n/a", NULL);
				break;
			}
			case E_UARCH:
			case E_BANK:
			case E_INIT: {
				/* Ratios: the cost model's (sophgo-costmodel.md §3), else the
				 * reader's argument ("74.9%" or a percentage number), else Alg /
				 * uArch Ops arguments; never the old 100.0 % placeholder. */
				uint32_t key = map[c] == E_UARCH  ? k_uarch
				               : map[c] == E_BANK ? k_bank
				                                  : k_init;
				double v = map[c] == E_UARCH  ? cc.uarch_rate
				           : map[c] == E_BANK ? cc.bank_ratio
				                              : cc.init_ratio;
				ok = costed;
				if (!ok && key && (g = arg_by_key(p, sl, key)))
					v = arg_num(p, g, &ok) / 100.0;
				if (!ok && map[c] == E_UARCH && k_alg && k_uops) {
					const struct tp_arg *ga = arg_by_key(p, sl, k_alg);
					const struct tp_arg *gu = arg_by_key(p, sl, k_uops);
					int o1 = 0, o2 = 0;
					if (ga && gu) {
						double av = arg_num(p, ga, &o1),
						       uv = arg_num(p, gu, &o2);
						if (o1 && o2) {
							v = uv > 0 ? av / uv : 0;
							ok = 1;
						}
					}
				}
				if (ok)
					xl_num(x, &s, row, col, v, x->f.pct1);
				else
					xl_str(x, &s, row, col, "n/a", NULL);
				break;
			}
			case E_STALL:
				xl_num(x, &s, row, col, tp_slice_stall(t, sl), x->f.cyc);
				break;
			case E_DDR_BW:
				if (!sys && tp_dir_touches_ddr((enum tp_dir)tp_slice_dir(t, sl)))
					xl_num(x, &s, row, col, tp_slice_gbps(t, sl, freq),
					       x->f.gbps);
				else if (!sys)
					xl_num(x, &s, row, col, 0, x->f.gbps);
				break;
			case E_L2_BW:
				if (!sys && tp_dir_touches_l2((enum tp_dir)tp_slice_dir(t, sl)))
					xl_num(x, &s, row, col, tp_slice_gbps(t, sl, freq),
					       x->f.gbps);
				else if (!sys)
					xl_num(x, &s, row, col, 0, x->f.gbps);
				break;
			case E_DIR:
				xl_str(x, &s, row, col,
				       sys ? "-" : tp_dir_name((enum tp_dir)tp_slice_dir(t, sl)),
				       NULL);
				break;
			case E_DTYPE:
				/* The decoder's "A -> B" (TIU operand -> result) when it gave one.
				 */
				if (k_dtype && (g = arg_by_key(p, sl, k_dtype)) &&
				    g->type == TP_ARG_STR)
					xl_str(x, &s, row, col, tp_str(p, g->v.s), NULL);
				else
					xl_str(x, &s, row, col,
					       tp_slice_dtype(t, sl) == TP_DT_NONE
					           ? "None"
					           : tp_dtype_name(
					                 (enum tp_dtype)tp_slice_dtype(t, sl)),
					       NULL);
				break;
			case E_DEP:
				/* The register when the decoder has it; else the reader's
				 * dependency; blank for a command without one (not a made-up 0). */
				if (k_dep && (g = arg_by_key(p, sl, k_dep)))
					write_arg(x, &s, row, col, p, g);
				else if (sl->dep_id)
					xl_num(x, &s, row, col, sl->dep_id, x->f.cyc);
				break;
			default:
				break;
			}
		}
		write_args(x, &s, row, p, sl, &ac, other_col, &ob);
		if (x->err != LXW_NO_ERROR || x->oom)
			break;
	}

	uint16_t last_col = (uint16_t)(other_col - (ac.other ? 0 : 1));
	uint32_t r0 = TP_XLSX_DATA_ROW, r1 = TP_XLSX_DATA_ROW + (uint32_t)pt->count - 1;
	worksheet_freeze_panes(s.ws, TP_XLSX_DATA_ROW, 0);
	xl_check(x, worksheet_autofilter(s.ws, hr, 0, pt->count ? r1 : hr, last_col));
	worksheet_set_tab_color(s.ws, t->kind == TP_TRACK_TIU    ? 0x008000
	                              : t->kind == TP_TRACK_GDMA ? 0xFFA500
	                              : t->kind == TP_TRACK_SDMA ? 0xD0CECE
	                                                         : 0xC0504D);
	if (pt->count) {
		/* Highlights of sophgo-analysis.md §5.2 / §5.3. */
		char f[160], c1[4], c2[4];
		if (pos[E_UARCH] >= 0) {
			cond_cell(x, s.ws, r0, r1, (uint16_t)pos[E_UARCH],
			          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.5, x->f.red);
			cond_cell(x, s.ws, r0, r1, (uint16_t)pos[E_UARCH],
			          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.75, x->f.yellow);
		}
		/* Initial Cycle Ratio > 1 % and Bank Conflict Ratio > 0 yellow (§5.2); numbers
		 * only, since Excel ranks the text "n/a" above every number. */
		static const struct {
			enum ecol col;
			double above;
		} ratio_rules[] = {{E_INIT, 0.01}, {E_BANK, 0}};
		for (size_t k = 0; k < 2; k++) {
			int pc = pos[ratio_rules[k].col];
			if (pc < 0)
				continue;
			xl_col_name((uint16_t)pc, c1);
			snprintf(f, sizeof f, "=AND(ISNUMBER(%s%u),%s%u>%g)", c1, r0 + 1, c1,
			         r0 + 1, ratio_rules[k].above);
			cond_formula(x, s.ws, r0, r1, (uint16_t)pc, f, x->f.yellow);
		}
		if (pos[E_AVG200] >= 0)
			cond_cell(x, s.ws, r0, r1, (uint16_t)pos[E_AVG200],
			          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 200, x->f.red);
		if (pos[E_DTYPE] >= 0)
			cond_text(x, s.ws, r0, r1, (uint16_t)pos[E_DTYPE], "FP32", x->f.red);
		if (pos[E_STALL] >= 0)
			cond_cell(x, s.ws, r0, r1, (uint16_t)pos[E_STALL],
			          LXW_CONDITIONAL_CRITERIA_GREATER_THAN, 0, x->f.red);
		double maxbw[2] = {ddr_max_bw(p), l2_max_bw(p)};
		int bwcol[2] = {pos[E_DDR_BW], pos[E_L2_BW]};
		for (int b = 0; b < 2; b++) {
			if (bwcol[b] < 0 || maxbw[b] <= 0)
				continue;
			xl_col_name((uint16_t)bwcol[b], c1);
			snprintf(f, sizeof f, "=AND(ISNUMBER(%s%u),%s%u>0,%s%u<%.4f)", c1, r0 + 1,
			         c1, r0 + 1, c1, r0 + 1, 0.5 * maxbw[b]);
			cond_formula(x, s.ws, r0, r1, (uint16_t)bwcol[b], f, x->f.red);
			snprintf(f, sizeof f, "=AND(ISNUMBER(%s%u),%s%u>0,%s%u<%.4f)", c1, r0 + 1,
			         c1, r0 + 1, c1, r0 + 1, 0.75 * maxbw[b]);
			cond_formula(x, s.ws, r0, r1, (uint16_t)bwcol[b], f, x->f.yellow);
			if (pos[E_ASIC] >= 0) {
				/* "Too little data moved": low bandwidth on a short command. */
				xl_col_name((uint16_t)pos[E_ASIC], c2);
				snprintf(f, sizeof f,
				         "=AND(ISNUMBER($%s%u),$%s%u>0,$%s%u<%.4f,%s%u<1000)", c1,
				         r0 + 1, c1, r0 + 1, c1, r0 + 1, 0.75 * maxbw[b], c2,
				         r0 + 1);
				cond_formula(x, s.ws, r0, r1, (uint16_t)pos[E_ASIC], f, x->f.red);
			}
		}
	}
	xl_sheet_done(x, &s);
out:
	tp_buf_free(&ob);
	argcols_free(&ac);
	if (st == TP_OK && (x->oom || ob.oom))
		st = TP_ENOMEM;
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Event sheets (host threads, host lanes, firmware, layer tracks)                           */
/* ---------------------------------------------------------------------------------------- */

static int write_events_sheet(struct xl *x, const struct part *pt)
{
	const struct tp_profile *p = x->p;
	const struct tp_track *t = &p->tracks[pt->track];
	struct xl_sheet s = {.ws = pt->ws};
	struct argcols ac = {0};
	struct tp_buf ob;
	tp_buf_init(&ob);
	int cyc = 0;
	for (size_t i = pt->first; i < pt->first + pt->count && !cyc; i++)
		cyc = t->slices[i].cycles != 0 || t->slices[i].cmd_id != 0;
	const char *names[12];
	size_t nc = 0;
	names[nc++] = "Global Idx";
	names[nc++] = "Start Time(us)";
	names[nc++] = "End Time(us)";
	names[nc++] = "Duration(us)";
	names[nc++] = "Depth";
	names[nc++] = "Category";
	names[nc++] = "Name";
	if (cyc) {
		names[nc++] = "Cmd Id";
		names[nc++] = "Start Cycle";
		names[nc++] = "Asic Cycle";
	}
	int st = collect_args(p, t, pt->first, pt->count, names, nc, (uint16_t)nc, &ac);
	if (st != TP_OK)
		goto out;
	uint16_t other_col = (uint16_t)(nc + ac.n);
	char note[400];
	const char *kind = tp_track_kind_name((enum tp_track_kind)t->kind);
	int n = snprintf(note, sizeof note, "%s track '%s'", kind, tp_str(p, t->name));
	if (t->kind == TP_TRACK_THREAD && n > 0 && (size_t)n < sizeof note)
		n += snprintf(note + n, sizeof note - (size_t)n, " (tid %" PRId64 ")", t->tid);
	if (t->dropped && n > 0 && (size_t)n < sizeof note)
		n += snprintf(note + n, sizeof note - (size_t)n,
		              "; the source lost %" PRIu64 " events", t->dropped);
	if (pt->nparts > 1 && n > 0 && (size_t)n < sizeof note)
		n += snprintf(note + n, sizeof note - (size_t)n,
		              "; part %zu of %zu (Global Idx %zu-%zu)", pt->index + 1, pt->nparts,
		              pt->first, pt->first + pt->count - 1);
	if (pt->shown < t->count && n > 0 && (size_t)n < sizeof note)
		snprintf(note + n, sizeof note - (size_t)n,
		         "; showing the first %zu of %zu records (row cap %zu); rerun with "
		         "--xlsx_rows all for every row",
		         pt->shown, t->count, pt->shown);
	xl_str(x, &s, 0, 0, note, pt->shown < t->count ? x->f.cap : x->f.bold);
	xl_num(x, &s, 1, 0, (double)t->count, x->f.cyc);
	xl_str(x, &s, 1, 1, "records", NULL);
	if (s.wcap)
		s.width[0] = 10;
	uint32_t hr = TP_XLSX_HEADER_ROW;
	header_row(x, &s, hr, names, nc);
	for (size_t i = 0; i < ac.n; i++)
		xl_str(x, &s, hr, (uint16_t)(nc + i), tp_str(p, ac.keys[i]), x->f.hdr);
	if (ac.other)
		xl_str(x, &s, hr, other_col, "Other Args", x->f.hdr);
	for (size_t i = pt->first; i < pt->first + pt->count; i++) {
		const struct tp_slice *sl = &t->slices[i];
		uint32_t row = TP_XLSX_DATA_ROW + (uint32_t)(i - pt->first);
		xl_num(x, &s, row, 0, (double)i, x->f.cyc);
		xl_num(x, &s, row, 1, ns_to_us(sl->start_ns), x->f.us);
		xl_num(x, &s, row, 2, ns_to_us(tp_slice_end(t, sl)), x->f.us);
		xl_num(x, &s, row, 3, ns_to_us(tp_slice_end(t, sl) - sl->start_ns), x->f.us);
		xl_num(x, &s, row, 4, tp_slice_depth(t, sl), x->f.cyc);
		xl_str(x, &s, row, 5, tp_str(p, tp_slice_type(t, sl)), NULL);
		xl_str(x, &s, row, 6, tp_str(p, tp_slice_name(t, sl)), NULL);
		if (cyc) {
			xl_num(x, &s, row, 7, sl->cmd_id, x->f.cyc);
			xl_num(x, &s, row, 8, (double)tp_slice_start_cycle(t, sl), x->f.cyc);
			xl_num(x, &s, row, 9, sl->cycles, x->f.cyc);
		}
		write_args(x, &s, row, p, sl, &ac, other_col, &ob);
		if (x->err != LXW_NO_ERROR || x->oom)
			break;
	}
	uint16_t last_col = (uint16_t)(other_col - (ac.other ? 0 : 1));
	worksheet_freeze_panes(s.ws, TP_XLSX_DATA_ROW, 0);
	xl_check(x, worksheet_autofilter(s.ws, hr, 0, hr + (uint32_t)pt->count, last_col));
	xl_sheet_done(x, &s);
out:
	tp_buf_free(&ob);
	argcols_free(&ac);
	if (st == TP_OK && (x->oom || ob.oom))
		st = TP_ENOMEM;
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Longest commands (only when an engine sheet is cut)                                       */
/* ---------------------------------------------------------------------------------------- */

/* Orders by duration, longest first, then by Global Idx. */
static int longer(const struct tp_track *t, size_t a, size_t b)
{
	int64_t da = tp_slice_end(t, &t->slices[a]) - t->slices[a].start_ns;
	int64_t db = tp_slice_end(t, &t->slices[b]) - t->slices[b].start_ns;
	return da != db ? da > db : a < b;
}

/* The `k` longest commands of `t` into out[0..*n), longest first: a min-heap (root = the
 * least long kept) over one pass, then sorted. */
static void longest_of(const struct tp_track *t, size_t k, size_t *out, size_t *n)
{
	size_t h = 0;
	for (size_t i = 0; i < t->count; i++) {
		if (h < k) {
			size_t c = h++;
			out[c] = i;
			while (c && longer(t, out[(c - 1) / 2], out[c])) {
				size_t par = (c - 1) / 2, tmp = out[par];
				out[par] = out[c];
				out[c] = tmp;
				c = par;
			}
		} else if (h && longer(t, i, out[0])) {
			out[0] = i;
			for (size_t c = 0;;) {
				size_t l = 2 * c + 1, r = l + 1, m = c;
				if (l < h && longer(t, out[m], out[l]))
					m = l;
				if (r < h && longer(t, out[m], out[r]))
					m = r;
				if (m == c)
					break;
				size_t tmp = out[m];
				out[m] = out[c];
				out[c] = tmp;
				c = m;
			}
		}
	}
	/* Insertion sort of at most XL_LONGEST entries, longest first. */
	for (size_t i = 1; i < h; i++)
		for (size_t j = i; j && longer(t, out[j], out[j - 1]); j--) {
			size_t tmp = out[j];
			out[j] = out[j - 1];
			out[j - 1] = tmp;
		}
	*n = h;
}

static void write_longest(struct xl *x, lxw_worksheet *ws, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	struct xl_sheet s = {.ws = ws};
	char buf[400];
	int layers = p->num_layers > 0;
	xl_str(x, &s, 0, 0, "Longest commands of each engine and core", x->f.bold);
	snprintf(buf, sizeof buf,
	         "The %d longest commands (by duration) of every engine and core whose sheet is "
	         "cut at %" PRIu64 " rows (--xlsx_rows), chosen among ALL its commands; "
	         "'On Sheet' names the sheet that lists the command, '-' when it is past the cut "
	         "(rerun with --xlsx_rows all to see it there).",
	         XL_LONGEST, pl->row_cap);
	xl_str(x, &s, 1, 0, buf, x->f.cap);
	if (s.wcap)
		s.width[0] = 0;
	const char *h[16];
	size_t nh = 0;
	h[nh++] = "Rank";
	h[nh++] = "Engine";
	h[nh++] = "Core Id";
	h[nh++] = "Global Idx";
	h[nh++] = "Cmd Id";
	h[nh++] = "Function Type";
	h[nh++] = "Function Name";
	if (layers)
		h[nh++] = "Layer Name";
	h[nh++] = "Start Time(us)";
	h[nh++] = "Duration(us)";
	h[nh++] = "Asic Cycle";
	h[nh++] = "Share of Engine Busy";
	h[nh++] = "On Sheet";
	uint32_t hr = TP_XLSX_HEADER_ROW, row = TP_XLSX_DATA_ROW;
	header_row(x, &s, hr, h, nh);
	size_t top[XL_LONGEST], n;
	for (size_t i = 0; i < pl->n; i++) {
		const struct part *pt = &pl->v[i];
		if (pt->kind != PK_ENGINE || pt->index != 0)
			continue;
		const struct tp_track *t = &p->tracks[pt->track];
		if (pt->shown >= t->count)
			continue;
		const struct tp_engine_stats *e = stats_of(x->a, t);
		longest_of(t, XL_LONGEST, top, &n);
		for (size_t r = 0; r < n; r++, row++) {
			size_t gi = top[r];
			const struct tp_slice *sl = &t->slices[gi];
			struct tp_layer lv;
			uint16_t c = 0;
			xl_num(x, &s, row, c++, (double)(r + 1), x->f.cyc);
			xl_str(x, &s, row, c++, engine_sheet_prefix(t->kind), NULL);
			xl_num(x, &s, row, c++, t->core, x->f.cyc);
			xl_num(x, &s, row, c++, (double)gi, x->f.cyc);
			xl_num(x, &s, row, c++, sl->cmd_id, x->f.cyc);
			xl_str(x, &s, row, c++, tp_str(p, tp_slice_type(t, sl)), NULL);
			xl_str(x, &s, row, c++, tp_str(p, tp_slice_name(t, sl)), NULL);
			if (layers)
				xl_str(
				    x, &s, row, c++,
				    sl->layer >= 0 && (size_t)sl->layer < p->num_layers
				        ? tp_str(p,
				                 tp_profile_layer(p, (size_t)sl->layer, &lv)->name)
				        : "-",
				    NULL);
			xl_num(x, &s, row, c++, ns_to_us(sl->start_ns), x->f.us);
			xl_num(x, &s, row, c++, ns_to_us(tp_slice_end(t, sl) - sl->start_ns),
			       x->f.us);
			xl_num(x, &s, row, c++, sl->cycles, x->f.cyc);
			xl_num(x, &s, row, c++,
			       e->busy_ns > 0 ? (double)(tp_slice_end(t, sl) - sl->start_ns) /
			                            (double)e->busy_ns
			                      : 0,
			       x->f.pct);
			const char *on = "-";
			for (size_t k = i; k < i + pt->nparts && k < pl->n; k++)
				if (gi >= pl->v[k].first && gi < pl->v[k].first + pl->v[k].count)
					on = pl->v[k].name;
			xl_str(x, &s, row, c++, on, NULL);
		}
		if (x->err != LXW_NO_ERROR || x->oom)
			break;
	}
	worksheet_freeze_panes(ws, TP_XLSX_DATA_ROW, 0);
	xl_check(x, worksheet_autofilter(ws, hr, 0, row > TP_XLSX_DATA_ROW ? row - 1 : hr,
	                                 (uint16_t)(nh - 1)));
	xl_sheet_done(x, &s);
}

/* ---------------------------------------------------------------------------------------- */
/* Layer by Layer Info                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* Writes layers [pt->first, pt->first + pt->count) onto pt's sheet. */
static void write_layers(struct xl *x, const struct part *pt, const struct plan *pl)
{
	lxw_worksheet *ws = pt->ws;
	const struct tp_profile *p = x->p;
	struct xl_sheet s = {.ws = ws};
	static const char *const h[] = {
	    "Layer Id",       "Device",       "Core Id",      "Layer Type",         "Layer Name",
	    "Subnet",         "Group",        "Local",        "TIU Cmd Ids",        "GDMA Cmd Ids",
	    "Begin Time(us)", "End Time(us)", "Duration(us)", "Share of Total Time"};
	xl_str(x, &s, 0, 0,
	       "Layers with the span of their matched commands (begin = first "
	       "command start, end = last command end).",
	       x->f.bold);
	if (pl->layers_capped) {
		char cap[300];
		snprintf(cap, sizeof cap,
		         "Showing the first %" PRIu64 " layers of each core (%zu of %zu layers; "
		         "row cap %" PRIu64 "); rerun with --xlsx_rows all for every row.",
		         pl->row_cap, pl->nlayer_idx, p->num_layers, pl->row_cap);
		xl_str(x, &s, 1, 0, cap, x->f.cap);
	}
	if (s.wcap)
		s.width[0] = 10;
	header_row(x, &s, 2, h, sizeof h / sizeof *h);
	char buf[64];
	double total = (double)x->a->total_time_ns;
	uint32_t row = LAYER_DATA_ROW;
	for (size_t i = pt->first; i < pt->first + pt->count; i++, row++) {
		struct tp_layer lv;
		const struct tp_layer *l =
		    tp_profile_layer(p, pl->layer_idx ? pl->layer_idx[i] : i, &lv);
		xl_num(x, &s, row, 0, l->id, x->f.cyc);
		xl_num(x, &s, row, 1, l->device, x->f.cyc);
		xl_num(x, &s, row, 2, l->core, x->f.cyc);
		xl_str(x, &s, row, 3, tp_str(p, l->type), NULL);
		xl_str(x, &s, row, 4, tp_str(p, l->name), NULL);
		xl_num(x, &s, row, 5, l->subnet, x->f.cyc);
		xl_num(x, &s, row, 6, l->group, x->f.cyc);
		xl_str(x, &s, row, 7, l->is_local ? "local" : "global", NULL);
		if (l->tiu_last) {
			snprintf(buf, sizeof buf, "%u-%u", l->tiu_first, l->tiu_last);
			xl_str(x, &s, row, 8, buf, NULL);
		}
		if (l->gdma_last) {
			snprintf(buf, sizeof buf, "%u-%u", l->gdma_first, l->gdma_last);
			xl_str(x, &s, row, 9, buf, NULL);
		}
		if (l->begin_ns <= l->end_ns) {
			xl_num(x, &s, row, 10, ns_to_us(l->begin_ns), x->f.us);
			xl_num(x, &s, row, 11, ns_to_us(l->end_ns), x->f.us);
			xl_num(x, &s, row, 12, ns_to_us(l->end_ns - l->begin_ns), x->f.us);
			xl_num(x, &s, row, 13,
			       total > 0 ? (double)(l->end_ns - l->begin_ns) / total : 0, x->f.pct);
		}
		if (x->err != LXW_NO_ERROR)
			break;
	}
	worksheet_freeze_panes(ws, 3, 0);
	xl_check(x, worksheet_autofilter(ws, 2, 0, row > 3 ? row - 1 : 2,
	                                 (uint16_t)(sizeof h / sizeof *h - 1)));
	xl_sheet_done(x, &s);
}

/* ---------------------------------------------------------------------------------------- */
/* Engine Summary                                                                            */
/* ---------------------------------------------------------------------------------------- */

enum sval { SV_PCT, SV_US, SV_CYC, SV_GBPS, SV_BYTES, SV_US_TAG };

struct scol {
	char name[48];
	int eng;  /* engine index or -1 */
	int what; /* field selector */
	enum sval fmt;
};

enum swhat {
	W_TIU_RATIO,
	W_PAR,
	W_CONC,
	W_COMPUTE,
	W_TOTAL_US,
	W_DDR_TOTAL,
	W_CYC,
	W_BUSY_US,
	W_IDLE_US,
	W_UTIL,
	W_UARCH,
	W_ALG_CYCLE,
	W_ALG_OPS,
	W_UARCH_OPS,
	W_MEAN_PAR,
	W_DDR_BYTES,
	W_L2_BYTES,
	W_DDR_BW,
	W_L2_BW,
	W_DDR_RD,
	W_DDR_WR,
	W_STALL,
	W_PD_PAR,
	W_PD_CONC
};

static double ddr_total_gbps(const struct tp_core_stats *c, int64_t total_ns)
{
	uint64_t b = 0;
	for (int e = TP_TRACK_GDMA; e < TP_ENGINES; e++)
		b += c->eng[e].ddr_bytes;
	return total_ns > 0 ? (double)b / (double)total_ns : 0;
}

/* The Overall row's cycle cells: the busiest core's working cycles of engine e, shown as its
 * time in µs with a "(us)" tag, as PerfDoc's Engine Summary (sophgo-analysis.md §5.4). */
static double max_core_us(const struct tp_analysis *a, int e)
{
	int64_t mx = 0;
	for (size_t i = 0; i < a->num_cores; i++)
		if (a->cores[i].eng[e].working_ns > mx)
			mx = a->cores[i].eng[e].working_ns;
	return ns_to_us(mx);
}

/* A cell value; returns 0 for "n/a", and sets *f to a cell-specific format (or NULL). */
static int scol_value(const struct scol *c, const struct tp_core_stats *cs,
                      const struct tp_analysis *a, int overall, double *v, enum sval *f)
{
	const struct tp_engine_stats *e = c->eng >= 0 ? &cs->eng[c->eng] : NULL;
	double rate;
	*f = c->fmt;
	switch ((enum swhat)c->what) {
	case W_TIU_RATIO:
		/* PerfDoc Overall: the busiest core's TIU time / total time. */
		*v = overall ? cs->tiu_working_ratio_max : cs->tiu_working_ratio;
		return 1;
	case W_MEAN_PAR:
		*v = overall ? cs->mean_parallelism : cs->parallelism;
		return 1;
	case W_PAR:
		*v = cs->parallelism;
		return 1;
	case W_CONC:
		*v = cs->concurrency;
		return 1;
	case W_COMPUTE:
		*v = cs->compute_share;
		return 1;
	case W_TOTAL_US:
		*v = ns_to_us(a->total_time_ns);
		return 1;
	case W_DDR_TOTAL:
		/* §4.4 "total DDR BW": every DMA engine's DDR bytes over the total time (the
		 * Overall row adds all cores: the chip's aggregate). */
		*v = ddr_total_gbps(cs, a->total_time_ns);
		return 1;
	case W_CYC:
		if (overall) {
			*v = max_core_us(a, c->eng);
			*f = SV_US_TAG;
			return 1;
		}
		*v = (double)e->working_cycle;
		return 1;
	case W_BUSY_US:
		*v = ns_to_us(e->busy_ns);
		return 1;
	case W_IDLE_US:
		*v = ns_to_us(e->idle_ns);
		return 1;
	case W_UTIL:
		*v = e->utilization;
		return 1;
	case W_UARCH:
		if (!tp_uarch_rate(e, &rate))
			return 0;
		*v = rate;
		return 1;
	case W_ALG_CYCLE:
	case W_ALG_OPS:
	case W_UARCH_OPS:
		if (!tp_uarch_rate(e, &rate))
			return 0;
		*v = (double)(c->what == W_ALG_CYCLE ? e->alg_cycle
		              : c->what == W_ALG_OPS ? e->alg_ops
		                                     : e->uarch_ops);
		return 1;
	case W_DDR_BYTES:
		*v = (double)e->ddr_bytes;
		return 1;
	case W_L2_BYTES:
		*v = (double)e->l2_bytes;
		return 1;
	case W_DDR_BW:
		*v = e->ddr_avg_gbps;
		return 1;
	case W_L2_BW:
		*v = e->l2_avg_gbps;
		return 1;
	case W_DDR_RD:
		*v = e->ddr_read_gbps;
		return 1;
	case W_DDR_WR:
		*v = e->ddr_write_gbps;
		return 1;
	case W_STALL:
		*v = (double)e->stall_cycle;
		return 1;
	case W_PD_PAR:
		if (overall)
			return 0;
		*v = cs->perfdoc_parallelism;
		return 1;
	case W_PD_CONC:
		if (overall)
			return 0;
		*v = cs->perfdoc_concurrency;
		return 1;
	}
	return 0;
}

static size_t summary_columns(const struct tp_analysis *a, struct scol *cols, size_t max)
{
	size_t n = 0;
#define ADD(nm, e, w, f)                                                                           \
	do {                                                                                       \
		if (n < max) {                                                                     \
			snprintf(cols[n].name, sizeof cols[n].name, "%s", nm);                     \
			cols[n].eng = e;                                                           \
			cols[n].what = w;                                                          \
			cols[n].fmt = f;                                                           \
			n++;                                                                       \
		}                                                                                  \
	} while (0)
	ADD("TiuWorkingRatio", -1, W_TIU_RATIO, SV_PCT);
	ADD("Parallelism", -1, W_PAR, SV_PCT);
	ADD("MeanCoreParallelism", -1, W_MEAN_PAR, SV_PCT);
	ADD("Concurrency", -1, W_CONC, SV_PCT);
	ADD("ComputeShare", -1, W_COMPUTE, SV_PCT);
	ADD("totalTime(us)", -1, W_TOTAL_US, SV_US);
	ADD("ddrTotalBandwidth(GB/s)", -1, W_DDR_TOTAL, SV_GBPS);
	static const char *const pre[TP_ENGINES] = {"Tiu", "Gdma", "Sdma", "Cdma"};
	static const char *const low[TP_ENGINES] = {"tiu", "gdma", "sdma", "cdma"};
	char b[48];
	for (int e = 0; e < TP_ENGINES; e++) {
		if (!a->overall.eng[e].present)
			continue;
		snprintf(b, sizeof b, "total%sCycle", pre[e]);
		ADD(b, e, W_CYC, SV_CYC);
		snprintf(b, sizeof b, "%sBusy(us)", low[e]);
		ADD(b, e, W_BUSY_US, SV_US);
		snprintf(b, sizeof b, "%sIdle(us)", low[e]);
		ADD(b, e, W_IDLE_US, SV_US);
		snprintf(b, sizeof b, "%sUtilisation", low[e]);
		ADD(b, e, W_UTIL, SV_PCT);
		if (e == TP_TRACK_TIU) {
			ADD("totalAlgCycle", e, W_ALG_CYCLE, SV_CYC);
			ADD("totalAlgOps", e, W_ALG_OPS, SV_CYC);
			ADD("totalUArchOps", e, W_UARCH_OPS, SV_CYC);
			ADD("uArchURate", e, W_UARCH, SV_PCT);
			continue;
		}
		snprintf(b, sizeof b, "%sDdrDataSize(B)", low[e]);
		ADD(b, e, W_DDR_BYTES, SV_BYTES);
		snprintf(b, sizeof b, "%sL2DataSize(B)", low[e]);
		ADD(b, e, W_L2_BYTES, SV_BYTES);
		snprintf(b, sizeof b, "%sDdrAvgBandwidth(GB/s)", low[e]);
		ADD(b, e, W_DDR_BW, SV_GBPS);
		snprintf(b, sizeof b, "%sL2AvgBandwidth(GB/s)", low[e]);
		ADD(b, e, W_L2_BW, SV_GBPS);
		snprintf(b, sizeof b, "%sDdrReadBandwidth(GB/s)", low[e]);
		ADD(b, e, W_DDR_RD, SV_GBPS);
		snprintf(b, sizeof b, "%sDdrWriteBandwidth(GB/s)", low[e]);
		ADD(b, e, W_DDR_WR, SV_GBPS);
		snprintf(b, sizeof b, "%sStallCycle", low[e]);
		ADD(b, e, W_STALL, SV_CYC);
	}
	ADD("PerfDocParallelism", -1, W_PD_PAR, SV_PCT);
	ADD("PerfDocConcurrency", -1, W_PD_CONC, SV_PCT);
#undef ADD
	return n;
}

static lxw_format *sval_fmt(struct xl *x, enum sval f)
{
	switch (f) {
	case SV_PCT:
		return x->f.pct;
	case SV_US:
		return x->f.us;
	case SV_GBPS:
		return x->f.gbps;
	case SV_US_TAG:
		return x->f.us_tag;
	default:
		return x->f.cyc;
	}
}

/* The per-Function-Type TIU table of one core (PerfDoc TIU_c, sophgo-costmodel.md §4):
 * ratios against the core's totals; Asic Cycle includes wait_msg, its ratio's denominator
 * (totalTiuCycle) does not. Returns the next free row. */
static uint32_t ftype_table(struct xl *x, struct xl_sheet *s, uint32_t row,
                            const struct tp_core_stats *c, const char *title)
{
	const struct tp_profile *p = x->p;
	const struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU];
	double rate;
	int cost = tp_uarch_rate(tiu, &rate);
	xl_str(x, s, row++, 0, title, x->f.bold);
	static const char *const h[] = {"Function Type", "Instr Num",       "Alg Ops",
	                                "Alg Ops Ratio", "Alg Cycle",       "Alg Cycle Ratio",
	                                "uArch Ops",     "uArch URate",     "uArch Ops Ratio",
	                                "Asic Cycle",    "Asic Cycle Ratio"};
	header_row(x, s, row++, h, sizeof h / sizeof *h);
	for (size_t i = 0; i <= c->num_ftypes; i++, row++) {
		int total = i == c->num_ftypes;
		struct tp_ftype_stats f = {0};
		if (total) {
			for (size_t k = 0; k < c->num_ftypes; k++) {
				f.instr += c->ftypes[k].instr;
				f.asic_cycle += c->ftypes[k].asic_cycle;
			}
			f.alg_ops = tiu->alg_ops;
			f.uarch_ops = tiu->uarch_ops;
			f.alg_cycle = tiu->alg_cycle;
		} else
			f = c->ftypes[i];
		xl_str(x, s, row, 0, total ? "Overall" : tp_str(p, f.type),
		       total ? x->f.bold : NULL);
		xl_num(x, s, row, 1, (double)f.instr, x->f.cyc);
		if (cost) {
			xl_num(x, s, row, 2, (double)f.alg_ops, x->f.cyc);
			xl_num(x, s, row, 3,
			       tiu->alg_ops ? (double)f.alg_ops / (double)tiu->alg_ops : 0,
			       x->f.pct);
			xl_num(x, s, row, 4, (double)f.alg_cycle, x->f.cyc);
			xl_num(x, s, row, 5,
			       tiu->alg_cycle ? (double)f.alg_cycle / (double)tiu->alg_cycle : 0,
			       x->f.pct);
			xl_num(x, s, row, 6, (double)f.uarch_ops, x->f.cyc);
			xl_num(x, s, row, 7,
			       f.uarch_ops ? (double)f.alg_ops / (double)f.uarch_ops : 0, x->f.pct);
			xl_num(x, s, row, 8,
			       tiu->uarch_ops ? (double)f.uarch_ops / (double)tiu->uarch_ops : 0,
			       x->f.pct);
		} else {
			for (uint16_t k = 2; k <= 8; k++)
				xl_str(x, s, row, k, "n/a", NULL);
		}
		xl_num(x, s, row, 9, (double)f.asic_cycle, x->f.cyc);
		xl_num(x, s, row, 10,
		       tiu->working_cycle ? (double)f.asic_cycle / (double)tiu->working_cycle : 0,
		       x->f.pct);
	}
	return row + 1;
}

static void write_summary(struct xl *x, lxw_worksheet *ws, const struct plan *pl)
{
	const struct tp_profile *p = x->p;
	const struct tp_analysis *a = x->a;
	struct xl_sheet s = {.ws = ws};
	char buf[768];
	const char *net = tp_str(p, p->net_name);
	snprintf(buf, sizeof buf, "tpuprof Engine Summary%s%s (%s)", *net ? ": " : "", net,
	         tp_arch_name(p->arch));
	xl_str(x, &s, 0, 0, buf, x->f.title);
	snprintf(buf, sizeof buf,
	         "Source: %s. TIU clock %.0f MHz, GDMA clock %.0f MHz. Total time %.3f us.",
	         *tp_str(p, p->source) ? tp_str(p, p->source) : "unknown", p->tiu_freq_mhz,
	         p->gdma_freq_mhz, ns_to_us(a->total_time_ns));
	xl_str(x, &s, 1, 0, buf, NULL);
	if (s.wcap)
		s.width[0] = 0;

	struct scol cols[96];
	size_t nc = summary_columns(a, cols, sizeof cols / sizeof *cols);
	int md = multi_device(p);
	const uint32_t hr = 3;
	xl_str(x, &s, hr, 0, "CoreId", x->f.hdr);
	for (size_t c = 0; c < nc; c++)
		xl_str(x, &s, hr, (uint16_t)(c + 1), cols[c].name, x->f.hdr);
	uint32_t row = hr + 1;
	for (size_t i = 0; i <= a->num_cores && a->num_cores; i++, row++) {
		int overall = i == a->num_cores;
		const struct tp_core_stats *cs = overall ? &a->overall : &a->cores[i];
		if (overall)
			xl_str(x, &s, row, 0, "Overall", x->f.bold);
		else if (md) {
			snprintf(buf, sizeof buf, "D%d C%d", (int)cs->device, (int)cs->core);
			xl_str(x, &s, row, 0, buf, NULL);
		} else
			xl_num(x, &s, row, 0, cs->core, x->f.cyc);
		for (size_t c = 0; c < nc; c++) {
			double v;
			enum sval f;
			if (scol_value(&cols[c], cs, a, overall, &v, &f))
				xl_num(x, &s, row, (uint16_t)(c + 1), v, sval_fmt(x, f));
			else
				xl_str(x, &s, row, (uint16_t)(c + 1), "n/a", NULL);
		}
	}
	uint32_t first_core_row = hr + 1, last_core_row = hr + (uint32_t)a->num_cores;
	if (!a->num_cores) {
		xl_str(x, &s, row++, 0,
		       "No accelerator engine records in this profile; see the "
		       "Operators and thread sheets.",
		       x->f.note);
	}
	/* Highlights of §5.4 on the per-core rows. */
	if (a->num_cores) {
		for (size_t c = 0; c < nc; c++) {
			uint16_t col = (uint16_t)(c + 1);
			if (cols[c].what == W_TIU_RATIO) {
				cond_cell(x, ws, first_core_row, last_core_row, col,
				          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.15, x->f.red);
				cond_cell(x, ws, first_core_row, last_core_row, col,
				          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.30, x->f.yellow);
			} else if (cols[c].what == W_PAR) {
				int pair = p->arch == TP_ARCH_BM1688 || p->arch == TP_ARCH_BM1690;
				cond_cell(x, ws, first_core_row, last_core_row, col,
				          LXW_CONDITIONAL_CRITERIA_LESS_THAN, pair ? 2.05 : 1.05,
				          pair ? x->f.yellow : x->f.red);
			} else if (cols[c].what == W_UARCH) {
				cond_cell(x, ws, first_core_row, last_core_row, col,
				          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.5, x->f.red);
				cond_cell(x, ws, first_core_row, last_core_row, col,
				          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.75, x->f.yellow);
			} else if (cols[c].what == W_DDR_BW && ddr_max_bw(p) > 0) {
				cond_cell(x, ws, first_core_row, last_core_row, col,
				          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.5 * ddr_max_bw(p),
				          x->f.red);
				cond_cell(x, ws, first_core_row, last_core_row, col,
				          LXW_CONDITIONAL_CRITERIA_LESS_THAN, 0.75 * ddr_max_bw(p),
				          x->f.yellow);
			}
		}
	}

	/* Notes. */
	row++;
	xl_str(x, &s, row++, 0, "Notes", x->f.bold);
	snprintf(
	    buf, sizeof buf,
	    "Units: times are us on the common time axis; cycle columns are in each engine's own "
	    "clock (TIU %.0f MHz, GDMA %.0f MHz). Parallelism = (TIU + GDMA + SDMA working time) "
	    "/ total time, all in time. Concurrency is measured: the time TIU and a DMA engine "
	    "are both busy / the shorter busy time (0-100 %%); the vendor's (TIU + GDMA - total) / "
	    "min(TIU, GDMA) only bounds it from below and goes negative on idle cores.",
	    p->tiu_freq_mhz, p->gdma_freq_mhz);
	xl_str(x, &s, row++, 0, buf, x->f.note);
	xl_str(
	    x, &s, row++, 0,
	    "The reference PerfAI_output.xlsx adds TIU nanoseconds to raw GDMA cycles, which is "
	    "right only at 1 GHz; its figures are kept in PerfDocParallelism / PerfDocConcurrency "
	    "for comparison.",
	    x->f.note);
	if (a->num_cores) {
		snprintf(buf, sizeof buf,
		         "Overall row as the vendor's: cycle columns are the busiest core's "
		         "working time "
		         "(shown in us), TiuWorkingRatio is that TIU time / total time, "
		         "Parallelism = (max "
		         "TIU + max GDMA + max SDMA) / total time, Concurrency the best core's; "
		         "MeanCoreParallelism and the utilisation columns are over total time x "
		         "%zu cores; "
		         "busy, idle and byte columns are sums over cores. Busiest core: TIU %.3f "
		         "us (%" PRIu64 " cycles), GDMA %.3f us (%" PRIu64 " cycles).",
		         a->num_cores, ns_to_us(a->overall_tiu_max_ns), a->overall_tiu_max_cycle,
		         ns_to_us(a->overall_gdma_max_ns), a->overall_gdma_max_cycle);
		xl_str(x, &s, row++, 0, buf, x->f.note);
		double rate;
		if (a->overall.eng[TP_TRACK_TIU].present &&
		    !tp_uarch_rate(&a->overall.eng[TP_TRACK_TIU], &rate))
			xl_str(
			    x, &s, row++, 0,
			    "uArchURate, totalAlgCycle, totalAlgOps, totalUArchOps n/a: this dump "
			    "carries no TIU descriptors to model, so the TIU sheets say n/a "
			    "rather than invent a figure.",
			    x->f.note);
	}
	int spilled = 0;
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].nparts > 1)
			spilled = 1;
	if (spilled) {
		snprintf(
		    buf, sizeof buf,
		    "Some engine sheets pass the row limit (%u rows per sheet) and continue on "
		    "'<sheet> (2)', '<sheet> (3)', ...; the Sheets table below gives each part's "
		    "Global Idx range.",
		    (unsigned)pl->max_rows);
		xl_str(x, &s, row++, 0, buf, x->f.note);
	}
	if (pl->capped || pl->layers_capped) {
		/* Never a silent cut: which sheets hold fewer rows than their track, and how to
		 * get every row; the figures on this sheet cover every record. */
		size_t largest = 0;
		for (size_t i = 0; i < pl->n; i++)
			if (pl->v[i].kind == PK_ENGINE || pl->v[i].kind == PK_EVENTS) {
				size_t c = p->tracks[pl->v[i].track].count;
				largest = c > largest ? c : largest;
			}
		char why[160];
		default_cap_why(why, sizeof why, pl->auto_sheets, pl->row_cap);
		snprintf(
		    buf, sizeof buf,
		    "Row cap: %zu per-record sheet(s)%s show only the first %" PRIu64
		    " records of their track or core in time%s (the largest track has %zu; the "
		    "Sheets table below gives Rows and Track Records per sheet). Rerun with "
		    "--xlsx_rows all for every row, or --xlsx_rows N. Every figure on this "
		    "sheet, the per-Function-Type tables, each layer's span and the totals on "
		    "top of each engine sheet cover all records.",
		    pl->capped, pl->layers_capped ? " and the layer sheet" : "", pl->row_cap, why,
		    largest);
		xl_str(x, &s, row++, 0, buf, x->f.cap);
		for (size_t i = 0; i < pl->n; i++)
			if (pl->v[i].kind == PK_LONGEST) {
				snprintf(
				    buf, sizeof buf,
				    "The 'Longest commands' sheet lists the %d longest commands of "
				    "each cut engine sheet, chosen among all its commands.",
				    XL_LONGEST);
				xl_str(x, &s, row++, 0, buf, x->f.cap);
			}
	}
	for (size_t i = 0; i < p->num_notes; i++) {
		const char *nt = tp_str(p, p->notes[i].text);
		if (strncmp(nt, TP_XLSX_NOTE_PREFIX, strlen(TP_XLSX_NOTE_PREFIX)) != 0)
			xl_str(x, &s, row++, 0, nt, x->f.note);
	}
	if (p->num_meta) {
		row++;
		xl_str(x, &s, row, 0, "Key", x->f.hdr);
		xl_str(x, &s, row++, 1, "Value", x->f.hdr);
		for (size_t i = 0; i < p->num_meta; i++, row++) {
			xl_str(x, &s, row, 0, tp_str(p, p->meta[i].key), NULL);
			xl_str(x, &s, row, 1, tp_str(p, p->meta[i].value), NULL);
		}
	}

	/* Per-Function-Type TIU tables, one per core. */
	row++;
	for (size_t i = 0; i < a->num_cores; i++) {
		if (!a->cores[i].eng[TP_TRACK_TIU].present)
			continue;
		snprintf(buf, sizeof buf, "TIU function types, core %d", (int)a->cores[i].core);
		row = ftype_table(x, &s, row, &a->cores[i], buf);
	}

	/* Sheets table with links. */
	static const char *const sh[] = {
	    "Sheet", "Engine",           "Device",          "Core Id",      "Part",
	    "Rows",  "First Global Idx", "Last Global Idx", "Track Records"};
	header_row(x, &s, row++, sh, sizeof sh / sizeof *sh);
	for (size_t i = 0; i < pl->n; i++) {
		const struct part *pt = &pl->v[i];
		if (pt->kind != PK_ENGINE && pt->kind != PK_EVENTS)
			continue;
		const struct tp_track *t = &p->tracks[pt->track];
		/* Inside a quoted sheet reference an apostrophe is doubled. */
		char url[300], quoted[260];
		size_t q = 0;
		for (const char *c = pt->name; *c && q + 2 < sizeof quoted; c++) {
			if (*c == '\'')
				quoted[q++] = '\'';
			quoted[q++] = *c;
		}
		quoted[q] = '\0';
		snprintf(url, sizeof url, "internal:'%s'!A1", quoted);
		xl_check(x, worksheet_write_url_opt(ws, row, 0, url, x->f.link, pt->name, NULL));
		xl_width(x, &s, 0, strlen(pt->name));
		xl_str(x, &s, row, 1, tp_track_kind_name((enum tp_track_kind)t->kind), NULL);
		xl_num(x, &s, row, 2, t->device, x->f.cyc);
		xl_num(x, &s, row, 3, t->core, x->f.cyc);
		xl_num(x, &s, row, 4, (double)(pt->index + 1), x->f.cyc);
		xl_num(x, &s, row, 5, (double)pt->count, x->f.cyc);
		xl_num(x, &s, row, 6, (double)pt->first, x->f.cyc);
		xl_num(x, &s, row, 7, (double)(pt->first + pt->count - 1), x->f.cyc);
		xl_num(x, &s, row, 8, (double)t->count, x->f.cyc);
		row++;
	}

	/* Bar chart: per-core utilisation of each engine. A chart needs at least one series
	 * (libxlsxwriter refuses it otherwise, failing the whole workbook): a dump without a
	 * timeline (no iter*.profile) has no utilisation column, so no chart. */
	size_t nseries = 0;
	for (size_t c = 0; c < nc; c++)
		nseries += cols[c].what == W_UTIL;
	if (a->num_cores && nseries) {
		lxw_chart *ch = workbook_add_chart(x->wb, LXW_CHART_COLUMN);
		if (ch) {
			char cat[160], val[160], nm[160], cn[4], sn[4];
			xl_col_name(0, cn);
			snprintf(cat, sizeof cat, "='Engine Summary'!$%s$%u:$%s$%u", cn,
			         first_core_row + 1, cn, last_core_row + 1);
			for (size_t c = 0; c < nc; c++) {
				if (cols[c].what != W_UTIL)
					continue;
				xl_col_name((uint16_t)(c + 1), sn);
				snprintf(val, sizeof val, "='Engine Summary'!$%s$%u:$%s$%u", sn,
				         first_core_row + 1, sn, last_core_row + 1);
				snprintf(nm, sizeof nm, "='Engine Summary'!$%s$%u", sn, hr + 1);
				lxw_chart_series *se = chart_add_series(ch, cat, val);
				if (se)
					chart_series_set_name(se, nm);
			}
			chart_title_set_name(ch, "Engine utilisation per core");
			chart_axis_set_name(ch->x_axis, "Core");
			chart_axis_set_name(ch->y_axis, "Busy / total time");
			chart_axis_set_num_format(ch->y_axis, "0%");
			chart_axis_set_min(ch->y_axis, 0);
			chart_axis_set_max(ch->y_axis, 1);
			lxw_chart_options co;
			memset(&co, 0, sizeof co);
			co.x_scale = 1.5;
			co.y_scale = 1.2;
			xl_check(x, worksheet_insert_chart_opt(ws, row + 1, 0, ch, &co));
		}
	}
	worksheet_freeze_panes(ws, hr + 1, 1);
	worksheet_set_tab_color(ws, 0xFFC7CE);
	for (uint16_t c = 1; c < s.ncols && c < s.wcap; c++)
		if (s.width[c] < 10)
			s.width[c] = 10;
	xl_sheet_done(x, &s);
}

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

int tp_xlsx_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                  const struct tp_xlsx_opts *xo, struct tp_diag *d)
{
	struct tp_xlsx_opts defaults = {0};
	if (!xo)
		xo = &defaults;
	struct tp_xlsx_opts o = *xo;
	if (o.max_rows && (o.max_rows < 16 || o.max_rows > TP_XLSX_EXCEL_MAX_ROWS))
		o.max_rows = 0;
	struct xl x = {.p = p, .a = a};
	struct plan pl = {0};
	char *tmp = NULL, *tdir = NULL;
	int st = TP_OK;
	lxw_error ce = LXW_NO_ERROR;

	pl.max_rows = o.max_rows ? o.max_rows : TP_XLSX_EXCEL_MAX_ROWS;
	pl.row_cap = tp_xlsx_cap_for(p, o.max_cores, o.row_cap, &pl.auto_sheets);
	if ((st = make_plan(&pl, p, &o)) != TP_OK)
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

	/* Document properties, without a wall-clock creation time. */
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
	xl_check(&x, workbook_set_properties(x.wb, &props));
	xl_check(&x, workbook_set_custom_property_string(x.wb, "arch", tp_arch_name(p->arch)));
	if (*net)
		xl_check(&x, workbook_set_custom_property_string(x.wb, "net_name", net));

	for (size_t i = 0; i < pl.n; i++) {
		pl.v[i].ws = workbook_add_worksheet(x.wb, pl.v[i].name);
		if (!pl.v[i].ws) {
			st = tp_diag_set(d, TP_EOUTPUT, "%s: cannot add worksheet '%s'", path,
			                 pl.v[i].name);
			goto out;
		}
	}
	for (size_t i = 0; i < pl.n; i++)
		x.prog_total += pl.v[i].count;
	/* workbook_close deflates every sheet into the zip: about half the time of a large
	 * workbook (measured, issue 10), so it counts as many units as the rows. */
	x.prog_total *= 2;
	for (size_t i = 0; i < pl.n && st == TP_OK; i++) {
		struct part *pt = &pl.v[i];
		tp_progress_report(x.prog_done, x.prog_total);
		switch (pt->kind) {
		case PK_SUMMARY:
			write_summary(&x, pt->ws, &pl);
			break;
		case PK_LAYERS:
			write_layers(&x, pt, &pl);
			break;
		case PK_OPS:
			st = xl_ops_write(&x, pt->ws, o.sparse_ratios_path, d);
			break;
		case PK_LONGEST:
			write_longest(&x, pt->ws, &pl);
			break;
		case PK_ENGINE:
			st = write_engine_sheet(&x, pt, &pl);
			break;
		case PK_EVENTS:
			st = write_events_sheet(&x, pt);
			break;
		}
		x.prog_done += pt->count;
		if (x.oom)
			st = TP_ENOMEM;
		if (x.err != LXW_NO_ERROR)
			break;
	}
	if (st != TP_OK)
		goto out;
	if (x.err != LXW_NO_ERROR) {
		st = tp_diag_set(d, TP_EOUTPUT, "%s: libxlsxwriter: %s", path, lxw_strerror(x.err));
		goto out;
	}
	ce = workbook_close(x.wb);
	tp_progress_report(x.prog_total, x.prog_total);
	x.wb = NULL;
	if (ce != LXW_NO_ERROR) {
		st = tp_diag_set(d, TP_EOUTPUT, "%s: libxlsxwriter: %s", path, lxw_strerror(ce));
		goto out;
	}
	st = tp_rename_into_place(tmp, path, d);
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
	tp_free(pl.v);
	tp_free(pl.layer_idx);
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* tp_output                                                                                 */
/* ---------------------------------------------------------------------------------------- */

int tp_xlsx_parse_rows(const char *v, uint64_t *cap)
{
	uint64_t n;
	if (!v)
		return -1;
	if (!strcmp(v, "all")) {
		*cap = TP_XLSX_ROWS_ALL;
		return 0;
	}
	if (tp_parse_u64(v, strlen(v), &n) != 0 || n == 0)
		return -1;
	*cap = n;
	return 0;
}

uint64_t tp_xlsx_cap_for(const struct tp_profile *p, size_t max_cores, uint64_t cap,
                         size_t *nsheets)
{
	if (nsheets)
		*nsheets = 0;
	if (cap)
		return cap;
	/* Per-record sheets: every track with records; the layer sheet holds the cap per core,
	 * counted once per core that has an engine track (where its layers run). */
	size_t n = 0, cores = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		int k = sheet_track(t, max_cores);
		n += k != 0;
		if (k == 1 && t->kind == TP_TRACK_TIU)
			cores++;
	}
	if (p->num_layers)
		n += cores ? cores : 1;
	if (nsheets)
		*nsheets = n;
	uint64_t per = n ? TP_XLSX_ROW_BUDGET / n : TP_XLSX_DEFAULT_ROWS;
	return per > TP_XLSX_DEFAULT_ROWS       ? TP_XLSX_DEFAULT_ROWS
	       : per < TP_XLSX_MIN_DEFAULT_ROWS ? TP_XLSX_MIN_DEFAULT_ROWS
	                                        : per;
}

int tp_xlsx_note_cap(struct tp_profile *p, size_t max_cores, uint64_t cap)
{
	size_t nsheets;
	const uint64_t row_cap = tp_xlsx_cap_for(p, max_cores, cap, &nsheets);
	char why[160];
	default_cap_why(why, sizeof why, nsheets, row_cap);
	size_t capped = 0, largest = 0;
	int big = -1;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (!sheet_track(t, max_cores) || (uint64_t)t->count <= row_cap)
			continue;
		capped++;
		if (t->count > largest) {
			largest = t->count;
			big = (int)i;
		}
	}
	struct plan lp = {.row_cap = row_cap};
	if (layer_rows(&lp, p) != TP_OK)
		return TP_ENOMEM;
	tp_free(lp.layer_idx);
	if (!capped && !lp.layers_capped)
		return TP_OK;
	if (!capped)
		return tp_profile_note(p,
		                       TP_XLSX_NOTE_PREFIX
		                       "the layer sheet shows only the first %" PRIu64
		                       " layers of each core%s; every total and every "
		                       "other output covers all of them; rerun with "
		                       "--xlsx_rows all for every row",
		                       row_cap, why);
	char name[128];
	track_base_name(p, big, multi_device(p), name, sizeof name);
	return tp_profile_note(
	    p,
	    TP_XLSX_NOTE_PREFIX "%zu per-command sheet(s)%s show only the first %" PRIu64
	                        " commands of their engine and core%s (largest: %s, %zu); every "
	                        "total and every other output covers all commands; rerun with "
	                        "--xlsx_rows all for every row",
	    capped, lp.layers_capped ? " and the layer sheet" : "", row_cap, why, name, largest);
}

static int output_write(const struct tp_profile *p, const struct tp_analysis *a,
                        const struct tp_out_opts *o, struct tp_diag *d)
{
	struct tp_xlsx_opts xo = {0};
	xo.max_cores = o ? o->max_cores : 0;
	xo.sparse_ratios_path = o ? o->sparse_ratios_path : NULL;
	xo.row_cap = o ? o->xlsx_rows : 0; /* 0: tp_xlsx_write takes tp_xlsx_cap_for's */
	const char *env = getenv(TP_XLSX_MAX_ROWS_ENV);
	if (env && *env) {
		uint64_t v;
		if (tp_parse_u64(env, strlen(env), &v) == 0 && v >= 16 &&
		    v <= TP_XLSX_EXCEL_MAX_ROWS)
			xo.max_rows = (uint32_t)v;
	}
	const char *out = o && o->out_dir ? o->out_dir : ".";
	char *dir = tp_path_join(out, "PerfDoc");
	char *path = tp_path_join(out, TP_XLSX_FILE);
	int st;
	int existed = dir && tp_is_dir(dir);
	if (!dir || !path) {
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
	tp_free(path);
	return st;
}

const struct tp_output tp_output_xlsx = {
    .name = "xlsx",
    .file = TP_XLSX_FILE,
    .enable_flag = NULL,
    .disable_flag = "--disable_doc",
    .default_on = 1,
    .doc = "spreadsheet: Engine Summary, one sheet per engine and core (a command a row, "
           "by Global Idx; up to 50000 rows each unless --xlsx_rows), layers, operators "
           "with live sparse what-if formulas",
    .write = output_write,
};
