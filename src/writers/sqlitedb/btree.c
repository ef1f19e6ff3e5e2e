/*
 * btree.c — SQLite index b-tree pages written directly (sqlite.org/fileformat2.html): the
 * records of a WITHOUT ROWID table or an index, their cells packed into full leaf pages with
 * the separator entries between the leaves, and the interior levels over them.
 *
 * The records are the bytes SQLite's own INSERT would store (serial types as
 * sqlite3VdbeSerialType chooses them, file format 4: 0 and 1 as types 8 and 9; a REAL
 * column's integral values as integers), so the table reads back exactly as if SQLite had
 * inserted the rows; only the pages' fill differs (every page here is full). Pages are
 * 4096 bytes without reserved space; records never exceed SQB_MAX_LOCAL (the caller keeps
 * longer ones out), so no cell has overflow pages.
 *
 * Owns: the pages and separators of a struct sqb_pack; sqb_interior owns its level buffers
 * for the call.
 */
#include <math.h>
#include <string.h>

#include "writers/sqlitedb/sqlitedb_int.h"

#define LEAF_HDR 8
#define INNER_HDR 12
#define PT_LEAF 0x0a  /* index b-tree leaf page */
#define PT_INNER 0x02 /* index b-tree interior page */

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* SQLite's varint for the values records use here (below 2^28: at most 4 bytes). */
static size_t varint_put(uint8_t *p, uint32_t v)
{
	if (v < 0x80) {
		p[0] = (uint8_t)v;
		return 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(0x80 | v >> 7);
		p[1] = (uint8_t)(v & 0x7f);
		return 2;
	}
	if (v < 0x200000) {
		p[0] = (uint8_t)(0x80 | v >> 14);
		p[1] = (uint8_t)(0x80 | (v >> 7 & 0x7f));
		p[2] = (uint8_t)(v & 0x7f);
		return 3;
	}
	p[0] = (uint8_t)(0x80 | (v >> 21 & 0x7f));
	p[1] = (uint8_t)(0x80 | (v >> 14 & 0x7f));
	p[2] = (uint8_t)(0x80 | (v >> 7 & 0x7f));
	p[3] = (uint8_t)(v & 0x7f);
	return 4;
}

static size_t varint_len(uint32_t v)
{
	return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : 4;
}

/* The length in bytes of a cell at p: its payload size varint and the payload. */
static size_t cell_len(const uint8_t *p)
{
	uint32_t v = 0;
	size_t n = 0;
	while (n < 4) {
		uint8_t c = p[n++];
		v = v << 7 | (c & 0x7f);
		if (!(c & 0x80))
			break;
	}
	return n + v;
}

struct sqb_val sqb_real(double d)
{
	struct sqb_val v = {.type = SQB_NULL};
	if (isnan(d))
		return v;
	/* sqlite3VdbeIntegerAffinity: a round trip through int64 that changes nothing, and
	 * neither end of the range. */
	if (d > -9223372036854775808.0 && d < 9223372036854775808.0) {
		int64_t ix = (int64_t)d;
		if ((double)ix == d && ix > INT64_MIN && ix < INT64_MAX) {
			v.type = SQB_INT;
			v.i = ix;
			return v;
		}
	}
	v.type = SQB_REAL;
	v.d = d;
	return v;
}

/* Serial type and body size of an integer (sqlite3VdbeSerialType). */
static uint32_t int_type(int64_t i, size_t *len)
{
	uint64_t u = i < 0 ? ~(uint64_t)i : (uint64_t)i;
	if (u <= 127) {
		if (i == 0 || i == 1) {
			*len = 0;
			return 8 + (uint32_t)i;
		}
		*len = 1;
		return 1;
	}
	if (u <= 32767) {
		*len = 2;
		return 2;
	}
	if (u <= 8388607) {
		*len = 3;
		return 3;
	}
	if (u <= 2147483647) {
		*len = 4;
		return 4;
	}
	if (u <= 0x7fffffffffffull) {
		*len = 6;
		return 5;
	}
	*len = 8;
	return 6;
}

/* Big-endian, the low n bytes of v. */
static void put_be(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t k = n; k-- > 0; v >>= 8)
		p[k] = (uint8_t)v;
}

size_t sqb_cell(uint8_t *out, const struct sqb_val *vals, int n)
{
	uint32_t types[16];
	size_t lens[16], hdr = 0, body = 0;
	for (int c = 0; c < n; c++) {
		const struct sqb_val *v = &vals[c];
		switch (v->type) {
		case SQB_INT:
			types[c] = int_type(v->i, &lens[c]);
			break;
		case SQB_REAL:
			types[c] = 7;
			lens[c] = 8;
			break;
		case SQB_TEXT:
			if (v->n > SQB_MAX_LOCAL)
				return 0;
			types[c] = 13 + 2 * v->n;
			lens[c] = v->n;
			break;
		default:
			types[c] = 0;
			lens[c] = 0;
			break;
		}
		hdr += varint_len(types[c]);
		body += lens[c];
	}
	hdr += 1; /* the header's own size: one byte while it is below 127 (n <= 16 columns) */
	size_t payload = hdr + body;
	if (payload > SQB_MAX_LOCAL)
		return 0;
	uint8_t *p = out + varint_put(out, (uint32_t)payload);
	uint8_t *b = p + hdr;
	*p++ = (uint8_t)hdr;
	for (int c = 0; c < n; c++) {
		const struct sqb_val *v = &vals[c];
		p += varint_put(p, types[c]);
		if (v->type == SQB_INT) {
			put_be(b, (uint64_t)v->i, lens[c]);
		} else if (v->type == SQB_REAL) {
			uint64_t u;
			memcpy(&u, &v->d, 8);
			put_be(b, u, 8);
		} else if (v->type == SQB_TEXT && v->n) {
			memcpy(b, v->s, v->n);
		}
		b += lens[c];
	}
	return (size_t)(b - out);
}

/* ---- leaves ---------------------------------------------------------------------------- */

void sqb_pack_init(struct sqb_pack *k)
{
	memset(k, 0, sizeof *k);
	tp_buf_init(&k->seps);
	k->cstart = SQB_PAGE;
}

void sqb_pack_reset(struct sqb_pack *k)
{
	k->npages = k->nseps = k->npend = 0;
	k->seps.len = 0;
	k->oom = k->seps.oom = 0;
	memset(k->cur, 0, SQB_PAGE);
	k->ncur = 0;
	k->cstart = SQB_PAGE;
}

void sqb_pack_free(struct sqb_pack *k)
{
	tp_free(k->pages);
	tp_free(k->sep_off);
	tp_buf_free(&k->seps);
	sqb_pack_init(k);
}

/* Places a cell after the cells of page pg (header hdr bytes, n cells, content from *cstart);
 * the caller checked that it fits. */
static void page_put(uint8_t *pg, int hdr, int *n, int *cstart, const uint8_t *cell, size_t len)
{
	*cstart -= (int)len;
	memcpy(pg + *cstart, cell, len);
	put16(pg + hdr + 2 * *n, (unsigned)*cstart);
	(*n)++;
}

static int page_fits(int hdr, int n, int cstart, size_t len)
{
	return hdr + 2 * (n + 1) + (int)len <= cstart;
}

/* Takes the last placed cell off page pg into out (SQB_MAX_CELL + 4 bytes); returns its
 * length. The freed bytes are zeroed: a page's bytes depend only on its cells. */
static size_t page_pop(uint8_t *pg, int hdr, int *n, int *cstart, uint8_t *out)
{
	size_t len =
	    cell_len(pg + *cstart + (hdr == INNER_HDR ? 4 : 0)) + (hdr == INNER_HDR ? 4 : 0);
	memcpy(out, pg + *cstart, len);
	memset(pg + *cstart, 0, len);
	*cstart += (int)len;
	(*n)--;
	memset(pg + hdr + 2 * *n, 0, 2);
	return len;
}

static void leaf_header(uint8_t *pg, int n, int cstart)
{
	pg[0] = PT_LEAF;
	put16(pg + 1, 0);
	put16(pg + 3, (unsigned)n);
	put16(pg + 5, (unsigned)cstart);
	pg[7] = 0;
}

static int push_sep(struct sqb_pack *k, const uint8_t *cell, size_t len)
{
	if (k->nseps + 2 > k->cap_seps) {
		size_t *n = tp_grow(k->sep_off, sizeof *n, k->nseps + 2, &k->cap_seps);
		if (!n)
			return -1;
		k->sep_off = n;
	}
	k->sep_off[k->nseps] = k->seps.len;
	tp_buf_put(&k->seps, cell, len);
	if (k->seps.oom)
		return -1;
	k->nseps++;
	k->sep_off[k->nseps] = k->seps.len;
	return 0;
}

/* Takes the last separator back into out; returns its length. */
static size_t pop_sep(struct sqb_pack *k, uint8_t *out)
{
	k->nseps--;
	size_t len = k->seps.len - k->sep_off[k->nseps];
	memcpy(out, k->seps.data + k->sep_off[k->nseps], len);
	k->seps.len = k->sep_off[k->nseps];
	return len;
}

/* The open leaf becomes the next page. */
static int close_cur(struct sqb_pack *k)
{
	if (k->npages + 1 > k->cap) {
		uint8_t *n = tp_grow(k->pages, SQB_PAGE, k->npages + 1, &k->cap);
		if (!n)
			return -1;
		k->pages = n;
	}
	leaf_header(k->cur, k->ncur, k->cstart);
	memcpy(k->pages + k->npages * SQB_PAGE, k->cur, SQB_PAGE);
	k->npages++;
	memset(k->cur, 0, SQB_PAGE);
	k->ncur = 0;
	k->cstart = SQB_PAGE;
	return 0;
}

/* Takes the last cell off the last closed leaf (it keeps at least two: a leaf closes only
 * when a cell of at most SQB_MAX_CELL bytes no longer fits). */
static size_t steal_last(struct sqb_pack *k, uint8_t *out)
{
	uint8_t *pg = k->pages + (k->npages - 1) * SQB_PAGE;
	int n = (int)get16(pg + 3), cstart = (int)get16(pg + 5);
	size_t len = page_pop(pg, LEAF_HDR, &n, &cstart, out);
	leaf_header(pg, n, cstart);
	return len;
}

int sqb_pack_add(struct sqb_pack *k, const uint8_t *cell, size_t len)
{
	if (k->npend) { /* the pending cell separates the last leaf from this one's */
		if (push_sep(k, k->pend, k->npend))
			return k->oom = -1;
		k->npend = 0;
	}
	if (page_fits(LEAF_HDR, k->ncur, k->cstart, len)) {
		page_put(k->cur, LEAF_HDR, &k->ncur, &k->cstart, cell, len);
		return 0;
	}
	if (close_cur(k))
		return k->oom = -1;
	memcpy(k->pend, cell, len);
	k->npend = len;
	return 0;
}

/* The part would end on the pending separator with no leaf after it: the last closed leaf's
 * last cell goes up instead and the pending cell becomes a leaf of its own. */
static int end_on_pending(struct sqb_pack *k)
{
	uint8_t d[SQB_MAX_CELL + 4];
	size_t dl = steal_last(k, d);
	if (push_sep(k, d, dl))
		return -1;
	page_put(k->cur, LEAF_HDR, &k->ncur, &k->cstart, k->pend, k->npend);
	k->npend = 0;
	return close_cur(k);
}

int sqb_pack_end(struct sqb_pack *k, int last)
{
	uint8_t e[SQB_MAX_CELL + 4];
	if (k->oom)
		return -1;
	if (last) {
		if (k->npend)
			return k->oom = end_on_pending(k);
		if (k->ncur && close_cur(k))
			return k->oom = -1;
		return 0;
	}
	if (k->npend) { /* ends on the pending cell */
		int st = push_sep(k, k->pend, k->npend);
		k->npend = 0;
		return k->oom = st;
	}
	if (k->ncur >= 2) {
		size_t el = page_pop(k->cur, LEAF_HDR, &k->ncur, &k->cstart, e);
		if (close_cur(k) || push_sep(k, e, el))
			return k->oom = -1;
		return 0;
	}
	if (k->ncur == 1 && k->npages && k->nseps) {
		/* One cell after the last separator: that separator comes back down as a leaf of
		 * its own and the last closed leaf's last cell goes up in its place; the single
		 * cell ends the part. */
		size_t el = page_pop(k->cur, LEAF_HDR, &k->ncur, &k->cstart, e);
		k->npend = pop_sep(k, k->pend);
		if (end_on_pending(k) || push_sep(k, e, el))
			return k->oom = -1;
		return 0;
	}
	return k->oom = -1; /* fewer than two cells: the caller's contract */
}

/* ---- interior levels ------------------------------------------------------------------- */

struct level {
	uint8_t *pages;
	size_t n, cap;
	uint8_t cur[SQB_PAGE];
	int ncur, cstart;
};

static int level_close(struct level *lv, uint32_t right)
{
	if (lv->n + 1 > lv->cap) {
		uint8_t *n = tp_grow(lv->pages, SQB_PAGE, lv->n + 1, &lv->cap);
		if (!n)
			return -1;
		lv->pages = n;
	}
	uint8_t *pg = lv->pages + lv->n * SQB_PAGE;
	memcpy(pg, lv->cur, SQB_PAGE);
	pg[0] = PT_INNER;
	put16(pg + 1, 0);
	put16(pg + 3, (unsigned)lv->ncur);
	put16(pg + 5, (unsigned)lv->cstart);
	pg[7] = 0;
	put32(pg + 8, right);
	lv->n++;
	memset(lv->cur, 0, SQB_PAGE);
	lv->ncur = 0;
	lv->cstart = SQB_PAGE;
	return 0;
}

/* One level over child[0..n) and their n - 1 separators: its pages in lv, the separators
 * between them appended to up (offsets in up_off, which has room for one per child). */
static int level_build(const uint32_t *child, size_t n, const uint8_t *seps, const size_t *off,
                       struct level *lv, struct tp_buf *up, size_t *up_off, size_t *nup)
{
	uint8_t cell[SQB_MAX_CELL + 4];
	memset(lv->cur, 0, SQB_PAGE);
	lv->ncur = 0;
	lv->cstart = SQB_PAGE;
	lv->n = 0;
	*nup = 0;
	up->len = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		size_t sl = off[i + 1] - off[i];
		put32(cell, child[i]);
		memcpy(cell + 4, seps + off[i], sl);
		uint32_t right = child[i];
		if (!page_fits(INNER_HDR, lv->ncur, lv->cstart, sl + 4)) {
			/* This separator goes up and child[i] ends the page; unless it is the
			 * level's last, which would leave the next page without a cell: then the
			 * page's last cell goes up instead and this one starts the next page. */
			if (i + 2 == n) {
				uint8_t last[SQB_MAX_CELL + 4];
				size_t ll =
				    page_pop(lv->cur, INNER_HDR, &lv->ncur, &lv->cstart, last);
				up_off[(*nup)++] = up->len;
				tp_buf_put(up, last + 4, ll - 4);
				uint32_t r = (uint32_t)last[0] << 24 | (uint32_t)last[1] << 16 |
				             (uint32_t)last[2] << 8 | last[3];
				if (level_close(lv, r))
					return -1;
				page_put(lv->cur, INNER_HDR, &lv->ncur, &lv->cstart, cell, sl + 4);
				continue;
			}
			up_off[(*nup)++] = up->len;
			tp_buf_put(up, seps + off[i], sl);
			if (level_close(lv, right))
				return -1;
			continue;
		}
		page_put(lv->cur, INNER_HDR, &lv->ncur, &lv->cstart, cell, sl + 4);
	}
	if (level_close(lv, child[n - 1]))
		return -1;
	up_off[*nup] = up->len;
	return up->oom ? -1 : 0;
}

int sqb_interior(const uint32_t *child, size_t n, const uint8_t *seps, const size_t *sep_off,
                 uint32_t root, struct sqb_out *o)
{
	struct level lv;
	memset(&lv, 0, sizeof lv);
	struct tp_buf up[2];
	tp_buf_init(&up[0]);
	tp_buf_init(&up[1]);
	size_t *offs[2] = {tp_calloc(n + 1, sizeof(size_t)), tp_calloc(n + 1, sizeof(size_t))};
	uint32_t *kids[2] = {tp_calloc(n, sizeof(uint32_t)), tp_calloc(n, sizeof(uint32_t))};
	int st = 0, w = 0;
	if (!offs[0] || !offs[1] || !kids[0] || !kids[1])
		st = -1;
	while (!st) {
		size_t nup = 0;
		if ((st = level_build(child, n, seps, sep_off, &lv, &up[w], offs[w], &nup)))
			break;
		if (lv.n == 1) { /* the top */
			st = o->write(o->ctx, root, lv.pages);
			break;
		}
		for (size_t p = 0; p < lv.n && !st; p++) {
			kids[w][p] = o->next++;
			st = o->write(o->ctx, kids[w][p], lv.pages + p * SQB_PAGE);
		}
		child = kids[w];
		n = lv.n;
		seps = (const uint8_t *)up[w].data;
		sep_off = offs[w];
		w ^= 1;
	}
	tp_free(lv.pages);
	tp_buf_free(&up[0]);
	tp_buf_free(&up[1]);
	for (int i = 0; i < 2; i++) {
		tp_free(offs[i]);
		tp_free(kids[i]);
	}
	return st;
}
