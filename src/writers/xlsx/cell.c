/*
 * cell.c — the workbook's cell layer: every cell goes through xl_num / xl_str / xl_formula,
 * which sanitise input strings for XML, write non-finite numbers as text, keep the first
 * libxlsxwriter error and track column widths; plus the small helpers every sheet writer
 * shares (header rows, conditional-format rules, the chip's peak bandwidths).
 *
 * Owns the context's scratch buffer (x->scratch) and each sheet's width table until
 * xl_sheet_done.
 */
#include "writers/xlsx/xlsx_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XL_MAX_WIDTH 60
#define XL_STR_MAX 32767 /* Excel's limit on characters in a cell */

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
	if (s->xs)
		xl_stream_num(s->xs, row, col, v, fmt);
	else
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
	if (s->xs)
		xl_stream_str(s->xs, row, col, v, fmt);
	else
		xl_check(x, worksheet_write_string(s->ws, row, col, v, fmt));
	xl_width(x, s, col, chars);
}

void xl_formula(struct xl *x, struct xl_sheet *s, uint32_t row, uint16_t col, const char *formula,
                double cached, lxw_format *fmt)
{
	if (!isfinite(cached))
		cached = 0;
	if (s->xs)
		xl_stream_formula(s->xs, row, col, formula, cached, fmt);
	else
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
/* Shared bits                                                                               */
/* ---------------------------------------------------------------------------------------- */

void xl_header_row(struct xl *x, struct xl_sheet *s, uint32_t row, const char *const *names,
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
void xl_cond_cell(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                  uint8_t criteria, double value, lxw_format *fmt)
{
	cond_apply(x, ws, r0, r1, col,
	           (lxw_conditional_format){
	               .type = LXW_CONDITIONAL_TYPE_CELL, .criteria = criteria, .value = value},
	           fmt);
}

/* A rule of `type` whose operand is the string `str`. */
static void cond_str(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                     uint8_t type, uint8_t criteria, const char *str, lxw_format *fmt)
{
	cond_apply(x, ws, r0, r1, col,
	           (lxw_conditional_format){
	               .type = type, .criteria = criteria, .value_string = (char *)str},
	           fmt);
}

/* A rule for cells containing `text`. */
void xl_cond_text(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                  const char *text, lxw_format *fmt)
{
	cond_str(x, ws, r0, r1, col, LXW_CONDITIONAL_TYPE_TEXT,
	         LXW_CONDITIONAL_CRITERIA_TEXT_CONTAINING, text, fmt);
}

/* A formula rule; `formula` is written for the first cell (row r0) and Excel shifts it. */
void xl_cond_formula(struct xl *x, lxw_worksheet *ws, uint32_t r0, uint32_t r1, uint16_t col,
                     const char *formula, lxw_format *fmt)
{
	cond_str(x, ws, r0, r1, col, LXW_CONDITIONAL_TYPE_FORMULA, 0, formula, fmt);
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

double xl_ddr_max_bw(const struct tp_profile *p)
{
	double d = p->chip ? p->chip->ddr_max_gbps : 0.0;
	return meta_real(p, "DDR Max BW(GB/s/Core)", d);
}

double xl_l2_max_bw(const struct tp_profile *p)
{
	double d = p->chip ? p->chip->l2_max_gbps : 0.0;
	return meta_real(p, "L2 Max BW(GB/s)", d);
}

const struct tp_engine_stats *xl_stats_of(const struct tp_analysis *a, const struct tp_track *t)
{
	static const struct tp_engine_stats none;
	const struct tp_core_stats *c = tp_analysis_core(a, t->device, t->core);
	return c && t->kind < TP_ENGINES ? &c->eng[t->kind] : &none;
}
