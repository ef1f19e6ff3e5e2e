/*
 * stream.c — the data rows of the large sheets (engine, event, layer sheets), written off
 * libxlsxwriter on --jobs threads. libxlsxwriter writes a workbook on one thread and deflates
 * every part after it, so a sheet writer hands its data rows over here instead
 * (xl_defer_rows): they are cut into parts of XL_CHUNK_ROWS rows, fixed by the data and not by
 * the thread count, and each part's cells become sheet XML and an independent raw deflate
 * piece on whichever thread takes it (xl_defer_run). zip.c splices the pieces, in order, into
 * the sheet libxlsxwriter wrote with only the rows above them, so the workbook is the same
 * bytes for every --jobs.
 *
 * The cell XML is what libxlsxwriter writes in constant_memory mode: inline strings, numbers
 * by "%.16G", style numbers from the formats' xf indexes (numbered up front, xlsx.c), cells of
 * a row in column order with the last write to a cell winning.
 *
 * Owns the deferred sheets and their compressed parts (x->defer) until xl_defer_free.
 */
#include "common/progress.h"
#include "common/timings.h"
#include "writers/xlsx/xlsx_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define XL_CHUNK_ROWS 1024u
#define XL_ZLEVEL 2 /* zlib's level for the parts */
/* A part's XML goes to deflate in slices of about this many bytes (whole rows), so a thread
 * holds one slice and a deflate state, not the part's XML. */
#define XL_SLICE (64u << 10)

/* ---------------------------------------------------------------------------------------- */
/* Deflate pieces                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* One raw deflate piece being encoded from slices of its input. zlib's output depends on the
 * bytes and the flushes only, not on how the bytes are cut into deflate() calls, so a piece
 * fed in slices is the bytes of the same piece fed whole. */
struct penc {
	z_stream z;
	int init;
	struct tp_buf *out;
	uint32_t crc; /* of the bytes fed */
	uint64_t raw; /* bytes fed */
};

/* Starts a piece into out, reusing e's deflate state when it has one. */
static int penc_begin(struct penc *e, struct tp_buf *out)
{
	if (!e->init) {
		memset(&e->z, 0, sizeof e->z);
		if (deflateInit2(&e->z, XL_ZLEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return TP_ENOMEM;
		e->init = 1;
	} else if (deflateReset(&e->z) != Z_OK) {
		return TP_ENOMEM;
	}
	e->out = out;
	e->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	e->raw = 0;
	return TP_OK;
}

/* Feeds src[0..len) to the piece. flush: Z_NO_FLUSH (more follows), Z_SYNC_FLUSH (the piece
 * ends on a byte boundary without ending the stream, so that pieces concatenate) or Z_FINISH
 * (the stream ends). */
static int penc_feed(struct penc *e, const unsigned char *src, size_t len, int flush)
{
	unsigned char buf[1 << 16];
	size_t pos = 0;
	int zr = Z_OK;
	do {
		uInt take = len - pos > (1u << 30) ? (1u << 30) : (uInt)(len - pos);
		if (take)
			e->crc = (uint32_t)crc32(e->crc, src + pos, take);
		e->z.next_in = (Bytef *)(src + pos);
		e->z.avail_in = take;
		pos += take;
		int f = pos < len ? Z_NO_FLUSH : flush;
		do {
			e->z.next_out = buf;
			e->z.avail_out = sizeof buf;
			zr = deflate(&e->z, f);
			tp_buf_put(e->out, buf, sizeof buf - e->z.avail_out);
		} while (zr != Z_STREAM_ERROR && e->z.avail_out == 0);
	} while (zr != Z_STREAM_ERROR && pos < len);
	e->raw += len;
	return zr == Z_STREAM_ERROR || e->out->oom ? TP_ENOMEM : TP_OK;
}

static void penc_free(struct penc *e)
{
	if (e->init)
		deflateEnd(&e->z);
	e->init = 0;
}

/* Compresses src into out as one raw deflate piece that ends on a byte boundary without
 * ending the stream (Z_SYNC_FLUSH), so that pieces concatenate; `last` ends the stream. zlib at
 * XL_ZLEVEL: docs/xlsx.md weighs the levels and the encoders. */
int xl_deflate_piece(const unsigned char *src, size_t len, int last, struct tp_buf *out,
                     uint32_t *crc)
{
	struct penc e = {0};
	int st = penc_begin(&e, out);
	if (st == TP_OK)
		st = penc_feed(&e, src, len, last ? Z_FINISH : Z_SYNC_FLUSH);
	*crc = e.crc;
	penc_free(&e);
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Cells                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* One cell of the row being built: its XML at [off, off + len) of xs->cells. */
struct xs_cell {
	uint16_t col;
	uint32_t off, len;
};

struct xl_stream {
	struct tp_buf xml;   /* finished rows */
	struct tp_buf cells; /* the current row's cells */
	struct xs_cell *c;
	size_t n, cap;
	uint32_t row; /* current row; UINT32_MAX: none */
	uint32_t rows;
	uint16_t cmin, cmax; /* columns with cells (cmin > cmax: none) */
	int oom;
	struct penc *enc; /* set: finished rows go to this piece in slices of XL_SLICE */
};

/* Ready for the next part; keeps the buffers. */
static void xs_reset(struct xl_stream *xs)
{
	xs->xml.len = 0;
	xs->cells.len = 0;
	xs->n = 0;
	xs->row = UINT32_MAX;
	xs->rows = 0;
	xs->cmin = UINT16_MAX;
	xs->cmax = 0;
	xs->oom = 0;
}

static void xs_init(struct xl_stream *xs)
{
	memset(xs, 0, sizeof *xs);
	tp_buf_init(&xs->xml);
	tp_buf_init(&xs->cells);
	xs_reset(xs);
}

/* The finished rows to the piece (flush: penc_feed's). */
static void xs_drain(struct xl_stream *xs, int flush)
{
	if (xs->xml.oom ||
	    penc_feed(xs->enc, (const unsigned char *)xs->xml.data, xs->xml.len, flush) != TP_OK)
		xs->oom = 1;
	xs->xml.len = 0;
}

static void xs_free(struct xl_stream *xs)
{
	tp_buf_free(&xs->xml);
	tp_buf_free(&xs->cells);
	tp_free(xs->c);
}

/* "A1"-style reference of (row, col) into buf (>= 16 bytes); returns its length. */
static size_t cell_ref(char *buf, uint32_t row, uint16_t col)
{
	xl_col_name(col, buf);
	size_t n = strlen(buf);
	char d[12];
	size_t k = 0;
	uint32_t r = row + 1;
	do {
		d[k++] = (char)('0' + r % 10);
		r /= 10;
	} while (r);
	while (k)
		buf[n++] = d[--k];
	buf[n] = '\0';
	return n;
}

/* Stable insertion sort by column; rows arrive almost always in column order already. Of two
 * writes to one cell the later is kept, as libxlsxwriter keeps it. */
static void xs_order(struct xl_stream *xs)
{
	for (size_t i = 1; i < xs->n; i++) {
		struct xs_cell t = xs->c[i];
		size_t k = i;
		while (k > 0 && xs->c[k - 1].col > t.col) {
			xs->c[k] = xs->c[k - 1];
			k--;
		}
		xs->c[k] = t;
	}
	size_t w = 0;
	for (size_t i = 0; i < xs->n; i++) {
		if (w && xs->c[w - 1].col == xs->c[i].col)
			w--;
		xs->c[w++] = xs->c[i];
	}
	xs->n = w;
}

static void xs_end_row(struct xl_stream *xs)
{
	if (xs->row == UINT32_MAX)
		return;
	xs_order(xs);
	tp_buf_puts(&xs->xml, "<row r=\"");
	tp_buf_u64(&xs->xml, (uint64_t)xs->row + 1);
	tp_buf_puts(&xs->xml, "\">");
	for (size_t i = 0; i < xs->n; i++)
		tp_buf_put(&xs->xml, xs->cells.data + xs->c[i].off, xs->c[i].len);
	tp_buf_puts(&xs->xml, "</row>");
	xs->rows++;
	xs->n = 0;
	xs->cells.len = 0;
	xs->row = UINT32_MAX;
	if (xs->enc && xs->xml.len >= XL_SLICE)
		xs_drain(xs, Z_NO_FLUSH);
}

/* Starts the cell (row, col) in xs->cells: "<c r="A1"[ s="N"]"; the caller finishes it. */
static int xs_begin_cell(struct xl_stream *xs, uint32_t row, uint16_t col, lxw_format *fmt)
{
	if (row != xs->row) {
		xs_end_row(xs);
		xs->row = row;
	}
	struct xs_cell *c = tp_grow(xs->c, sizeof *c, xs->n + 1, &xs->cap);
	if (!c) {
		xs->oom = 1;
		return 0;
	}
	xs->c = c;
	c[xs->n] = (struct xs_cell){.col = col, .off = (uint32_t)xs->cells.len};
	char ref[16];
	size_t n = cell_ref(ref, row, col);
	tp_buf_puts(&xs->cells, "<c r=\"");
	tp_buf_put(&xs->cells, ref, n);
	int32_t xf = fmt ? fmt->xf_index : 0;
	if (xf > 0) {
		tp_buf_puts(&xs->cells, "\" s=\"");
		tp_buf_i64(&xs->cells, xf);
	}
	tp_buf_putc(&xs->cells, '"');
	if (col < xs->cmin)
		xs->cmin = col;
	if (col > xs->cmax)
		xs->cmax = col;
	return 1;
}

static void xs_end_cell(struct xl_stream *xs)
{
	struct xs_cell *c = &xs->c[xs->n++];
	c->len = (uint32_t)(xs->cells.len - c->off);
	if (xs->cells.oom)
		xs->oom = 1;
}

/* A double as libxlsxwriter prints it ("%.16G"); integers below 2^53 without printf. */
static void put_number(struct tp_buf *b, double v)
{
	if (v == floor(v) && fabs(v) < 1e15 && !(v == 0 && signbit(v))) {
		tp_buf_i64(b, (int64_t)v);
		return;
	}
	tp_buf_printf(b, "%.16G", v);
}

/* Element text with XML's three markup characters escaped (strings are already valid text:
 * cell.c cleans them). */
static void put_escaped(struct tp_buf *b, const char *s, size_t len)
{
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		const char *e = s[i] == '&'   ? "&amp;"
		                : s[i] == '<' ? "&lt;"
		                : s[i] == '>' ? "&gt;"
		                              : NULL;
		if (!e)
			continue;
		tp_buf_put(b, s + run, i - run);
		tp_buf_puts(b, e);
		run = i + 1;
	}
	tp_buf_put(b, s + run, len - run);
}

void xl_stream_num(struct xl_stream *xs, uint32_t row, uint16_t col, double v, lxw_format *fmt)
{
	if (!xs_begin_cell(xs, row, col, fmt))
		return;
	tp_buf_puts(&xs->cells, "><v>");
	put_number(&xs->cells, v);
	tp_buf_puts(&xs->cells, "</v></c>");
	xs_end_cell(xs);
}

void xl_stream_str(struct xl_stream *xs, uint32_t row, uint16_t col, const char *v, lxw_format *fmt)
{
	size_t len = strlen(v);
	if (!len) {
		/* libxlsxwriter: an empty string is a blank cell with a format, else nothing. */
		if (fmt && xs_begin_cell(xs, row, col, fmt)) {
			tp_buf_puts(&xs->cells, "/>");
			xs_end_cell(xs);
		}
		return;
	}
	if (!xs_begin_cell(xs, row, col, fmt))
		return;
	int keep = isspace((unsigned char)v[0]) || isspace((unsigned char)v[len - 1]);
	tp_buf_puts(&xs->cells, keep ? " t=\"inlineStr\"><is><t xml:space=\"preserve\">"
	                             : " t=\"inlineStr\"><is><t>");
	put_escaped(&xs->cells, v, len);
	tp_buf_puts(&xs->cells, "</t></is></c>");
	xs_end_cell(xs);
}

void xl_stream_formula(struct xl_stream *xs, uint32_t row, uint16_t col, const char *formula,
                       double cached, lxw_format *fmt)
{
	if (!xs_begin_cell(xs, row, col, fmt))
		return;
	if (formula[0] == '=')
		formula++;
	tp_buf_puts(&xs->cells, "><f>");
	put_escaped(&xs->cells, formula, strlen(formula));
	tp_buf_puts(&xs->cells, "</f><v>");
	put_number(&xs->cells, cached);
	tp_buf_puts(&xs->cells, "</v></c>");
	xs_end_cell(xs);
}

/* ---------------------------------------------------------------------------------------- */
/* Deferred sheets                                                                           */
/* ---------------------------------------------------------------------------------------- */

int xl_defer_rows(struct xl *x, struct xl_sheet *s, uint32_t row0, size_t count, xl_emit_fn emit,
                  void *ctx, void (*free_ctx)(void *))
{
	struct xl_defer *d = tp_grow(x->defer, sizeof *d, x->ndefer + 1, &x->defer_cap);
	if (!d) {
		if (free_ctx)
			free_ctx(ctx);
		tp_free(s->width);
		s->width = NULL;
		s->wcap = 0;
		s->ncols = 0;
		x->oom = 1;
		return TP_ENOMEM;
	}
	x->defer = d;
	/* libxlsxwriter names a worksheet's part after its place among the sheets. */
	d[x->ndefer++] = (struct xl_defer){.s = *s,
	                                   .sheet_no = (unsigned)s->ws->index + 1,
	                                   .row0 = row0,
	                                   .count = count,
	                                   .emit = emit,
	                                   .ctx = ctx,
	                                   .free_ctx = free_ctx};
	/* The width table now belongs to the deferred sheet. */
	s->width = NULL;
	s->wcap = 0;
	s->ncols = 0;
	return TP_OK;
}

/* What a thread keeps from one part to the next: the row being built, the current slice of
 * XML, the deflate state and the sheet writers' scratch. A part takes a free one, so the
 * memory in flight is one of these per thread, whatever the size of the parts. */
struct worker {
	atomic_flag busy;
	struct xl lx;
	struct xl_stream xs;
	struct penc enc;
};

struct run {
	struct xl *x;
	atomic_uint_fast64_t done; /* rows written, for the progress line */
	struct worker *w;          /* one per thread (nw) */
	size_t nw;
};

static void worker_init(struct worker *w, const struct xl *x)
{
	memset(w, 0, sizeof *w);
	atomic_flag_clear(&w->busy);
	w->lx = (struct xl){.p = x->p, .a = x->a, .plan = x->plan, .f = x->f};
	tp_buf_init(&w->lx.other);
	xs_init(&w->xs);
	w->xs.enc = &w->enc;
}

static void worker_free(struct worker *w)
{
	xs_free(&w->xs);
	penc_free(&w->enc);
	tp_free(w->lx.scratch);
	tp_buf_free(&w->lx.other);
}

/* Part k's rows as XML, deflated slice by slice into its piece. */
static void chunk_encode(struct worker *w, const struct xl *x, struct xl_chunk *c)
{
	const struct xl_defer *d = &x->defer[c->defer];
	struct xl_stream *xs = &w->xs;
	xs_reset(xs);
	w->lx.oom = 0;
	struct xl_sheet s = {.xs = xs};
	tp_buf_init(&c->z);
	if (penc_begin(&w->enc, &c->z) != TP_OK) {
		c->oom = 1;
		return;
	}
	d->emit(&w->lx, &s, d->ctx, c->first, c->first + c->count);
	xs_end_row(xs);
	/* A part without cells has no piece. */
	if (w->enc.raw || xs->xml.len)
		xs_drain(xs, Z_SYNC_FLUSH);
	c->oom = w->lx.oom || w->lx.other.oom || xs->oom || xs->xml.oom;
	c->raw = w->enc.raw;
	c->crc = w->enc.crc;
	c->cmin = xs->cmin;
	c->cmax = xs->cmax;
	c->width = s.width;
	c->ncols = s.ncols;
}

static void run_chunk(void *arg, size_t k)
{
	struct run *r = arg;
	struct xl *x = r->x;
	struct xl_chunk *c = &x->chunks[k];
	/* tp_par_run runs at most nw calls at once (nw: the fewer of the threads and the chunks),
	 * so a worker is free at every moment; the scan goes round until it takes one. */
	struct worker *w = NULL;
	for (size_t i = 0; !w; i = (i + 1) % r->nw)
		if (!atomic_flag_test_and_set(&r->w[i].busy))
			w = &r->w[i];
	chunk_encode(w, x, c);
	atomic_flag_clear(&w->busy);
	uint64_t done = x->prog_done + atomic_fetch_add(&r->done, c->count) + c->count;
	tp_progress_report(done < x->prog_total ? done : x->prog_total, x->prog_total);
}

/* Cuts every deferred sheet into parts of XL_CHUNK_ROWS rows (x->chunks, in sheet order). */
static int plan_chunks(struct xl *x)
{
	size_t n = 0;
	for (size_t i = 0; i < x->ndefer; i++)
		n += (x->defer[i].count + XL_CHUNK_ROWS - 1) / XL_CHUNK_ROWS;
	x->chunks = n ? tp_calloc(n, sizeof *x->chunks) : NULL;
	if (n && !x->chunks)
		return TP_ENOMEM;
	x->nchunks = n;
	size_t k = 0;
	for (size_t i = 0; i < x->ndefer; i++) {
		struct xl_defer *d = &x->defer[i];
		d->chunk0 = k;
		for (size_t a = 0; a < d->count; a += XL_CHUNK_ROWS, k++)
			x->chunks[k] = (struct xl_chunk){
			    .defer = i,
			    .first = a,
			    .count = d->count - a < XL_CHUNK_ROWS ? d->count - a : XL_CHUNK_ROWS};
		d->nchunks = k - d->chunk0;
	}
	return TP_OK;
}

int xl_defer_run(struct xl *x)
{
	if (!x->ndefer)
		return TP_OK;
	if (plan_chunks(x) != TP_OK)
		return TP_ENOMEM;
	unsigned jobs = x->jobs;
	struct run r = {.x = x, .nw = jobs < x->nchunks ? jobs : x->nchunks};
	atomic_init(&r.done, 0);
	r.w = tp_calloc(r.nw ? r.nw : 1, sizeof *r.w);
	if (!r.w)
		return TP_ENOMEM;
	for (size_t i = 0; i < r.nw; i++)
		worker_init(&r.w[i], x);
	tp_par_run(jobs, x->nchunks, run_chunk, &r);
	for (size_t i = 0; i < r.nw; i++)
		worker_free(&r.w[i]);
	tp_free(r.w);
	int st = TP_OK;
	for (size_t i = 0; i < x->ndefer; i++) {
		struct xl_defer *d = &x->defer[i];
		d->cmin = UINT16_MAX;
		for (size_t k = d->chunk0; k < d->chunk0 + d->nchunks; k++) {
			struct xl_chunk *c = &x->chunks[k];
			if (c->oom)
				st = TP_ENOMEM;
			for (uint16_t col = 0; col < c->ncols; col++)
				xl_width(x, &d->s, col, c->width[col]);
			if (c->cmin <= c->cmax) {
				d->cmin = c->cmin < d->cmin ? c->cmin : d->cmin;
				d->cmax = c->cmax > d->cmax ? c->cmax : d->cmax;
			}
			tp_free(c->width);
			c->width = NULL;
		}
		xl_sheet_done(x, &d->s);
	}
	x->prog_done += atomic_load(&r.done);
	return st != TP_OK || x->oom ? TP_ENOMEM : TP_OK;
}

void xl_defer_free(struct xl *x)
{
	for (size_t k = 0; k < x->nchunks; k++) {
		tp_buf_free(&x->chunks[k].z);
		tp_free(x->chunks[k].width);
	}
	for (size_t i = 0; i < x->ndefer; i++) {
		struct xl_defer *d = &x->defer[i];
		if (d->free_ctx)
			d->free_ctx(d->ctx);
		tp_free(d->s.width);
	}
	tp_free(x->chunks);
	tp_free(x->defer);
	x->chunks = NULL;
	x->defer = NULL;
	x->nchunks = x->ndefer = x->defer_cap = 0;
}
