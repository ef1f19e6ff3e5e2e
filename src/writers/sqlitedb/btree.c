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
#define PT_LEAF 0x0a   /* index b-tree leaf page */
#define PT_INNER 0x02  /* index b-tree interior page */
#define PT_TLEAF 0x0d  /* table b-tree leaf page */
#define PT_TINNER 0x05 /* table b-tree interior page */

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

/* SQLite's varint of any 64-bit value (a rowid): 7 bits a byte, big-endian, the ninth byte
 * holding 8 bits. */
static size_t varint64_put(uint8_t *p, uint64_t v)
{
	if (v >> 56) {
		p[8] = (uint8_t)v;
		v >>= 8;
		for (int i = 7; i >= 0; i--, v >>= 7)
			p[i] = (uint8_t)(0x80 | (v & 0x7f));
		return 9;
	}
	uint8_t b[9];
	size_t n = 0;
	do {
		b[n++] = (uint8_t)(0x80 | (v & 0x7f));
		v >>= 7;
	} while (v);
	b[0] &= 0x7f;
	for (size_t i = 0; i < n; i++)
		p[i] = b[n - 1 - i];
	return n;
}

static size_t varint64_get(const uint8_t *p, uint64_t *v)
{
	uint64_t x = 0;
	for (size_t i = 0; i < 8; i++) {
		x = x << 7 | (p[i] & 0x7f);
		if (!(p[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	*v = x << 8 | p[8];
	return 9;
}

/* The length in bytes of a cell at p: its payload size varint and the payload. */
static size_t cell_len(const uint8_t *p)
{
	uint64_t v;
	size_t n = varint64_get(p, &v);
	return n + (size_t)v;
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

/* The cell of vals[0..n) after a prefix of plen bytes (a table leaf's rowid varint) that
 * goes between the payload's size and the record; 0 when the payload or the cell is longer
 * than this writer's pages keep without overflow. */
static size_t cell_put(uint8_t *out, const uint8_t *prefix, size_t plen, const struct sqb_val *vals,
                       int n)
{
	uint32_t types[SQB_MAX_COLS];
	size_t lens[SQB_MAX_COLS], hdr = 0, body = 0;
	if (n > SQB_MAX_COLS)
		return 0;
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
	if (payload > SQB_MAX_LOCAL ||
	    varint_len((uint32_t)payload) + plen + payload > SQB_MAX_CELL)
		return 0;
	uint8_t *p = out + varint_put(out, (uint32_t)payload);
	if (plen) /* a table's cell has no prefix (prefix may be NULL) */
		memcpy(p, prefix, plen);
	p += plen;
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

size_t sqb_cell(uint8_t *out, const struct sqb_val *vals, int n)
{
	return cell_put(out, NULL, 0, vals, n);
}

size_t sqb_table_cell(uint8_t *out, int64_t rowid, const struct sqb_val *vals, int n)
{
	uint8_t key[9];
	return cell_put(out, key, varint64_put(key, (uint64_t)rowid), vals, n);
}

size_t sqb_cell_len(const uint8_t *cell)
{
	return cell_len(cell);
}

/* ---- comparing records ------------------------------------------------------------------ */

/* One column of a record: its serial type and body. */
struct col {
	uint64_t type;
	const uint8_t *b;
};

static int64_t get_int(const struct col *c)
{
	static const uint8_t len[] = {0, 1, 2, 3, 4, 6, 8};
	if (c->type == 8 || c->type == 9)
		return (int64_t)c->type - 8;
	size_t n = len[c->type];
	uint64_t u = c->b[0] & 0x80 ? ~(uint64_t)0 : 0;
	for (size_t i = 0; i < n; i++)
		u = u << 8 | c->b[i];
	return (int64_t)u;
}

static double get_real(const struct col *c)
{
	uint64_t u = 0;
	for (int i = 0; i < 8; i++)
		u = u << 8 | c->b[i];
	double d;
	memcpy(&d, &u, 8);
	return d;
}

/* sqlite3IntFloatCompare: an integer against a double, exactly. */
static int int_real_cmp(int64_t i, double r)
{
	if (r < -9223372036854775808.0)
		return 1;
	if (r >= 9223372036854775808.0)
		return -1;
	int64_t y = (int64_t)r;
	if (i != y)
		return i < y ? -1 : 1;
	double s = (double)i;
	return s < r ? -1 : s > r;
}

/* Two columns in SQLite's order (BINARY collation): NULL, then numbers by value, then text
 * by bytes (a prefix first). */
static int col_cmp(const struct col *x, const struct col *y)
{
	int cx = x->type == 0   ? 0
	         : x->type < 12 ? 1
	                        : 2,
	    cy = y->type == 0   ? 0
	         : y->type < 12 ? 1
	                        : 2;
	if (cx != cy || !cx)
		return cx < cy ? -1 : cx > cy;
	if (cx == 2) {
		size_t nx = (size_t)(x->type - 13) / 2, ny = (size_t)(y->type - 13) / 2;
		int c = memcmp(x->b, y->b, nx < ny ? nx : ny);
		return c ? (c < 0 ? -1 : 1) : nx < ny ? -1 : nx > ny;
	}
	if (x->type == 7 && y->type == 7) {
		double a = get_real(x), b = get_real(y);
		return a < b ? -1 : a > b;
	}
	if (x->type == 7)
		return -int_real_cmp(get_int(y), get_real(x));
	if (y->type == 7)
		return int_real_cmp(get_int(x), get_real(y));
	int64_t a = get_int(x), b = get_int(y);
	return a < b ? -1 : a > b;
}

/* Where the record of a cell starts, past the payload's size. */
static const uint8_t *cell_record(const uint8_t *cell)
{
	uint64_t v;
	return cell + varint64_get(cell, &v);
}

static size_t body_len(uint64_t t)
{
	static const uint8_t len[] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};
	return t < 10 ? len[t] : (size_t)(t - 12) / 2;
}

int sqb_cell_cmp(const uint8_t *a, const uint8_t *b)
{
	const uint8_t *ra = cell_record(a), *rb = cell_record(b);
	uint64_t ha, hb;
	size_t ia = varint64_get(ra, &ha), ib = varint64_get(rb, &hb);
	struct col x = {0, ra + ha}, y = {0, rb + hb};
	while (ia < ha && ib < hb) {
		ia += varint64_get(ra + ia, &x.type);
		ib += varint64_get(rb + ib, &y.type);
		int c = col_cmp(&x, &y);
		if (c)
			return c;
		x.b += body_len(x.type);
		y.b += body_len(y.type);
	}
	return ia < ha ? 1 : ib < hb ? -1 : 0;
}

/* ---- leaves ---------------------------------------------------------------------------- */

void sqb_pack_init(struct sqb_pack *k)
{
	memset(k, 0, sizeof *k);
	tp_buf_init(&k->seps);
	k->cstart = SQB_PAGE;
}

void sqb_pack_table(struct sqb_pack *k)
{
	k->table = 1;
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
	int table = k->table;
	tp_free(k->pages);
	tp_free(k->sep_off);
	tp_buf_free(&k->seps);
	sqb_pack_init(k);
	k->table = table;
}

void sqb_pack_drop(struct sqb_pack *k, size_t n)
{
	if (!n || n > k->npages)
		return;
	size_t keep = k->npages - n;
	if (keep)
		memmove(k->pages, k->pages + n * SQB_PAGE, keep * SQB_PAGE);
	k->npages = keep;
	/* The buffer grew while the pages were held: it goes back to what is left, so a
	 * packer that streams its pages keeps only a few. */
	if (k->cap > 2 * keep + 64) {
		uint8_t *small = tp_malloc((keep ? keep : 1) * SQB_PAGE);
		if (small) {
			if (keep)
				memcpy(small, k->pages, keep * SQB_PAGE);
			tp_free(k->pages);
			k->pages = small;
			k->cap = keep ? keep : 1;
		}
	}
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

/* The length of a table interior cell at p: the child's page number and the rowid. */
static size_t tinner_len(const uint8_t *p)
{
	uint64_t v;
	return 4 + varint64_get(p + 4, &v);
}

/* Takes the last placed cell off page pg (of an index b-tree, or a table b-tree's interior
 * page with `table`) into out (SQB_MAX_CELL + 4 bytes); returns its length. The freed bytes
 * are zeroed: a page's bytes depend only on its cells. */
static size_t page_pop(uint8_t *pg, int hdr, int table, int *n, int *cstart, uint8_t *out)
{
	size_t len = table              ? tinner_len(pg + *cstart)
	             : hdr == INNER_HDR ? cell_len(pg + *cstart + 4) + 4
	                                : cell_len(pg + *cstart);
	memcpy(out, pg + *cstart, len);
	memset(pg + *cstart, 0, len);
	*cstart += (int)len;
	(*n)--;
	memset(pg + hdr + 2 * *n, 0, 2);
	return len;
}

static void leaf_header(uint8_t *pg, int table, int n, int cstart)
{
	pg[0] = table ? PT_TLEAF : PT_LEAF;
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
	leaf_header(k->cur, k->table, k->ncur, k->cstart);
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
	size_t len = page_pop(pg, LEAF_HDR, 0, &n, &cstart, out);
	leaf_header(pg, 0, n, cstart);
	return len;
}

/* A table b-tree's leaf closes with the separator above it: its last rowid. */
static int close_table_leaf(struct sqb_pack *k)
{
	uint8_t key[9];
	if (close_cur(k))
		return -1;
	return push_sep(k, key, varint64_put(key, (uint64_t)k->last_rowid));
}

/* Table b-tree: cells never move up, so a leaf closes when the next cell does not fit. */
static int table_add(struct sqb_pack *k, const uint8_t *cell, size_t len)
{
	if (!page_fits(LEAF_HDR, k->ncur, k->cstart, len) && close_table_leaf(k))
		return k->oom = -1;
	page_put(k->cur, LEAF_HDR, &k->ncur, &k->cstart, cell, len);
	uint64_t rowid;
	varint64_get(cell_record(cell), &rowid);
	k->last_rowid = (int64_t)rowid;
	return 0;
}

int sqb_pack_add(struct sqb_pack *k, const uint8_t *cell, size_t len)
{
	if (k->table)
		return table_add(k, cell, len);
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
	if (k->table) { /* a part ends on its last leaf, with the separator after it but the last */
		if (k->ncur && (last ? close_cur(k) : close_table_leaf(k)))
			return k->oom = -1;
		return 0;
	}
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
		size_t el = page_pop(k->cur, LEAF_HDR, 0, &k->ncur, &k->cstart, e);
		if (close_cur(k) || push_sep(k, e, el))
			return k->oom = -1;
		return 0;
	}
	if (k->ncur == 1 && k->npages && k->nseps) {
		/* One cell after the last separator: that separator comes back down as a leaf of
		 * its own and the last closed leaf's last cell goes up in its place; the single
		 * cell ends the part. */
		size_t el = page_pop(k->cur, LEAF_HDR, 0, &k->ncur, &k->cstart, e);
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

static int level_close(struct level *lv, int table, uint32_t right)
{
	if (lv->n + 1 > lv->cap) {
		uint8_t *n = tp_grow(lv->pages, SQB_PAGE, lv->n + 1, &lv->cap);
		if (!n)
			return -1;
		lv->pages = n;
	}
	uint8_t *pg = lv->pages + lv->n * SQB_PAGE;
	memcpy(pg, lv->cur, SQB_PAGE);
	pg[0] = table ? PT_TINNER : PT_INNER;
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
                       int table, struct level *lv, struct tp_buf *up, size_t *up_off, size_t *nup)
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
				size_t ll = page_pop(lv->cur, INNER_HDR, table, &lv->ncur,
				                     &lv->cstart, last);
				up_off[(*nup)++] = up->len;
				tp_buf_put(up, last + 4, ll - 4);
				uint32_t r = (uint32_t)last[0] << 24 | (uint32_t)last[1] << 16 |
				             (uint32_t)last[2] << 8 | last[3];
				if (level_close(lv, table, r))
					return -1;
				page_put(lv->cur, INNER_HDR, &lv->ncur, &lv->cstart, cell, sl + 4);
				continue;
			}
			up_off[(*nup)++] = up->len;
			tp_buf_put(up, seps + off[i], sl);
			if (level_close(lv, table, right))
				return -1;
			continue;
		}
		page_put(lv->cur, INNER_HDR, &lv->ncur, &lv->cstart, cell, sl + 4);
	}
	if (level_close(lv, table, child[n - 1]))
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
		if ((st = level_build(child, n, seps, sep_off, o->table, &lv, &up[w], offs[w],
		                      &nup)))
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
