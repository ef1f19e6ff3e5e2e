/*
 * zip.c — the workbook's final copy: the zip libxlsxwriter wrote (every part, the deferred
 * sheets with only their rows above the data) is copied entry by entry into the output, the
 * untouched entries byte for byte, each deferred sheet's entry rebuilt around its data rows
 * (stream.c's compressed parts). A rebuilt entry is the deflate pieces of the part before
 * </sheetData>, the data parts in order and the rest: one raw deflate stream, since every
 * piece but the last ends on a byte boundary without ending the stream. Its CRC-32 is combined
 * from the pieces' (crc32_combine), so nothing is compressed or checksummed twice.
 *
 * Only what libxlsxwriter's minizip writes is accepted (no data descriptors, no
 * encryption); zip64 fields are read where present and written where a size or offset needs
 * them.
 *
 * Owns nothing beyond one call.
 */
#define _GNU_SOURCE /* memmem */
#include "writers/xlsx/xlsx_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define LOCAL_FIXED 30u
#define CENTRAL_FIXED 46u
#define U32_MAX_FIELD 0xFFFFFFFFu

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)v);
	wr16(p + 2, (uint16_t)(v >> 16));
}

static void wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)v);
	wr32(p + 4, (uint32_t)(v >> 32));
}

/* One entry of the source's central directory. */
struct zent {
	const uint8_t *cen; /* its central record */
	size_t cen_len;     /* fixed part + name + extra + comment */
	uint64_t csize, usize, loff;
	uint32_t crc;
	/* In the output: */
	uint64_t new_off, new_csize, new_usize;
	uint32_t new_crc;
};

struct zsplice {
	struct xl *x;
	const uint8_t *src;
	size_t size;
	const char *skel, *out_path;
	struct tp_diag *d;
	struct tp_afile out;
	uint64_t off; /* bytes written to out */
	struct zent *e;
	size_t n;
};

static int bad(struct zsplice *z, uint64_t at, const char *what)
{
	return tp_diag_at(z->d, TP_EOUTPUT, z->out_path, at, "libxlsxwriter's archive (%s): %s",
	                  z->skel, what);
}

static int put(struct zsplice *z, const void *p, size_t n)
{
	if (n && tp_afile_write(&z->out, p, n) != 0)
		return tp_afile_fail(&z->out, z->d);
	z->off += n;
	return TP_OK;
}

/* The zip64 extra field (id 1) of a record's extra bytes, or NULL. */
static const uint8_t *zip64_extra(const uint8_t *ex, size_t len, size_t *flen)
{
	for (size_t i = 0; i + 4 <= len;) {
		uint16_t id = rd16(ex + i), sz = rd16(ex + i + 2);
		if (i + 4 + sz > len)
			return NULL;
		if (id == 1) {
			*flen = sz;
			return ex + i + 4;
		}
		i += 4 + (size_t)sz;
	}
	return NULL;
}

/* Reads the central directory into z->e. */
static int read_central(struct zsplice *z)
{
	const uint8_t *s = z->src;
	size_t size = z->size;
	if (size < 22)
		return bad(z, 0, "too short");
	size_t eocd = size - 22;
	while (rd32(s + eocd) != SIG_END) {
		if (eocd == 0 || size - eocd > 22 + 65535)
			return bad(z, size, "no end of central directory");
		eocd--;
	}
	uint64_t count = rd16(s + eocd + 10), cd_size = rd32(s + eocd + 12),
	         cd_off = rd32(s + eocd + 16);
	if (eocd >= 20 && rd32(s + eocd - 20) == SIG_LOC64) {
		uint64_t e64 = rd64(s + eocd - 20 + 8);
		if (e64 > size - 56 || rd32(s + e64) != SIG_END64)
			return bad(z, eocd - 20, "bad zip64 locator");
		count = rd64(s + e64 + 32);
		cd_size = rd64(s + e64 + 40);
		cd_off = rd64(s + e64 + 48);
	}
	if (cd_off > size || cd_size > size - cd_off || count > cd_size / CENTRAL_FIXED)
		return bad(z, eocd, "central directory out of range");
	z->e = tp_calloc(count ? count : 1, sizeof *z->e);
	if (!z->e)
		return TP_ENOMEM;
	size_t at = (size_t)cd_off, end = (size_t)(cd_off + cd_size);
	for (z->n = 0; z->n < count; z->n++) {
		if (end - at < CENTRAL_FIXED || rd32(s + at) != SIG_CENTRAL)
			return bad(z, at, "bad central directory record");
		const uint8_t *c = s + at;
		size_t nl = rd16(c + 28), el = rd16(c + 30), cl = rd16(c + 32);
		if (end - at - CENTRAL_FIXED < nl + el + cl)
			return bad(z, at, "central directory record out of range");
		struct zent *e = &z->e[z->n];
		e->cen = c;
		e->cen_len = CENTRAL_FIXED + nl + el + cl;
		e->crc = rd32(c + 16);
		e->csize = rd32(c + 20);
		e->usize = rd32(c + 24);
		e->loff = rd32(c + 42);
		size_t fl = 0;
		const uint8_t *f = zip64_extra(c + CENTRAL_FIXED + nl, el, &fl);
		size_t k = 0;
		if (e->usize == U32_MAX_FIELD && f && fl >= k + 8)
			e->usize = rd64(f + k), k += 8;
		if (e->csize == U32_MAX_FIELD && f && fl >= k + 8)
			e->csize = rd64(f + k), k += 8;
		if (e->loff == U32_MAX_FIELD && f && fl >= k + 8)
			e->loff = rd64(f + k);
		if (rd16(c + 8) & 9) /* encrypted (bit 0) or with a data descriptor (bit 3) */
			return bad(z, at, "unsupported entry flags");
		if (e->loff > size - LOCAL_FIXED || rd32(s + e->loff) != SIG_LOCAL)
			return bad(z, at, "bad local header offset");
		at += e->cen_len;
	}
	return TP_OK;
}

/* Bytes of entry e's local header (fixed part, name, extra). */
static size_t local_len(const struct zsplice *z, const struct zent *e)
{
	const uint8_t *l = z->src + e->loff;
	return LOCAL_FIXED + rd16(l + 26) + (size_t)rd16(l + 28);
}

static int copy_entry(struct zsplice *z, struct zent *e)
{
	size_t ll = local_len(z, e);
	if (ll > z->size - e->loff || e->csize > z->size - e->loff - ll)
		return bad(z, e->loff, "entry out of range");
	e->new_off = z->off;
	e->new_csize = e->csize;
	e->new_usize = e->usize;
	e->new_crc = e->crc;
	return put(z, z->src + e->loff, ll + (size_t)e->csize);
}

/* Entry e's uncompressed bytes into out. */
static int inflate_entry(struct zsplice *z, const struct zent *e, struct tp_buf *out)
{
	size_t ll = local_len(z, e);
	uint16_t method = rd16(e->cen + 10);
	if (ll > z->size - e->loff || e->csize > z->size - e->loff - ll || method != 8 ||
	    e->usize > ((size_t)1 << 31))
		return bad(z, e->loff, "unexpected sheet entry");
	out->len = 0;
	size_t need = (size_t)e->usize + 1;
	char *d = tp_realloc(out->data, need);
	if (!d)
		return TP_ENOMEM;
	out->data = d;
	out->cap = need;
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, -15) != Z_OK)
		return TP_ENOMEM;
	zs.next_in = (Bytef *)(z->src + e->loff + ll);
	zs.avail_in = (uInt)e->csize;
	zs.next_out = (Bytef *)out->data;
	zs.avail_out = (uInt)need;
	int zr = inflate(&zs, Z_FINISH);
	out->len = zs.total_out;
	inflateEnd(&zs);
	if (zr != Z_STREAM_END || out->len != e->usize)
		return bad(z, e->loff, "sheet entry does not inflate");
	return TP_OK;
}

/* Parses "A1" (letters, then digits) at s; 0-based column and row. */
static const char *parse_ref(const char *s, uint32_t *col, uint32_t *row)
{
	uint32_t c = 0, r = 0;
	const char *p = s;
	while (*p >= 'A' && *p <= 'Z')
		c = c * 26 + (uint32_t)(*p++ - 'A' + 1);
	while (*p >= '0' && *p <= '9')
		r = r * 10 + (uint32_t)(*p++ - '0');
	if (p == s || !c || !r)
		return NULL;
	*col = c - 1;
	*row = r - 1;
	return p;
}

/* Appends to b the sheet's XML up to its data rows: `xml` up to </sheetData> (or <sheetData/>,
 * opened), with <dimension ref> widened to the deferred rows. *rest gets the offset of what
 * follows the data rows. */
static int sheet_head(const struct xl_defer *dd, const char *xml, size_t len, struct tp_buf *b,
                      size_t *rest, const char **tail)
{
	const char *end = memmem(xml, len, "</sheetData>", 12);
	const char *empty = end ? NULL : memmem(xml, len, "<sheetData/>", 12);
	if (!end && !empty)
		return -1;
	size_t cut = (size_t)((end ? end : empty) - xml);
	*rest = end ? cut : cut + 12;
	*tail = end ? "" : "</sheetData>";
	const char *dim = memmem(xml, cut, "<dimension ref=\"", 16);
	if (!dim) {
		tp_buf_put(b, xml, cut);
	} else {
		const char *v = dim + 16;
		uint32_t c0, r0, c1, r1;
		const char *p = parse_ref(v, &c0, &r0);
		if (!p)
			return -1;
		c1 = c0, r1 = r0;
		if (*p == ':' && !(p = parse_ref(p + 1, &c1, &r1)))
			return -1;
		if (*p != '"')
			return -1;
		if (dd->count && dd->cmin <= dd->cmax) {
			uint32_t last = dd->row0 + (uint32_t)dd->count - 1;
			c0 = dd->cmin < c0 ? dd->cmin : c0;
			c1 = dd->cmax > c1 ? dd->cmax : c1;
			r0 = dd->row0 < r0 ? dd->row0 : r0;
			r1 = last > r1 ? last : r1;
		}
		char a[8], z[8];
		xl_col_name((uint16_t)c0, a);
		xl_col_name((uint16_t)c1, z);
		tp_buf_put(b, xml, (size_t)(v - xml));
		if (c0 == c1 && r0 == r1)
			tp_buf_printf(b, "%s%" PRIu32, a, r0 + 1);
		else
			tp_buf_printf(b, "%s%" PRIu32 ":%s%" PRIu32, a, r0 + 1, z, r1 + 1);
		tp_buf_put(b, p, cut - (size_t)(p - xml));
	}
	if (empty)
		tp_buf_puts(b, "<sheetData>");
	return b->oom ? -2 : 0;
}

/* Rebuilds entry e around deferred sheet dd's data parts. */
static int splice_entry(struct zsplice *z, struct zent *e, const struct xl_defer *dd)
{
	struct tp_buf xml, head, zh, zt;
	tp_buf_init(&xml);
	tp_buf_init(&head);
	tp_buf_init(&zh);
	tp_buf_init(&zt);
	size_t rest = 0;
	const char *tail = "";
	uint32_t ch = 0, ct = 0;
	int st = inflate_entry(z, e, &xml);
	if (st == TP_OK) {
		int r = sheet_head(dd, xml.data, xml.len, &head, &rest, &tail);
		if (r == -2)
			st = TP_ENOMEM;
		else if (r)
			st = bad(z, e->loff, "sheet without sheetData");
	}
	if (st == TP_OK) {
		/* What follows the data rows: "</sheetData>" and the rest of the sheet. */
		struct tp_buf t;
		tp_buf_init(&t);
		tp_buf_puts(&t, tail);
		tp_buf_put(&t, xml.data + rest, xml.len - rest);
		if (t.oom || head.oom ||
		    xl_deflate_piece((const unsigned char *)head.data, head.len, 0, &zh, &ch) !=
		        TP_OK ||
		    xl_deflate_piece((const unsigned char *)t.data, t.len, 1, &zt, &ct) != TP_OK)
			st = TP_ENOMEM;
		e->new_usize = head.len + t.len;
		e->new_crc = ch;
		e->new_csize = zh.len + zt.len;
		for (size_t k = dd->chunk0; k < dd->chunk0 + dd->nchunks; k++) {
			const struct xl_chunk *c = &z->x->chunks[k];
			e->new_crc = (uint32_t)crc32_combine(e->new_crc, c->crc, (z_off_t)c->raw);
			e->new_usize += c->raw;
			e->new_csize += c->z.len;
		}
		e->new_crc = (uint32_t)crc32_combine(e->new_crc, ct, (z_off_t)t.len);
		tp_buf_free(&t);
	}
	if (st == TP_OK) {
		size_t ll = local_len(z, e);
		uint8_t *lh = tp_malloc(ll);
		if (!lh) {
			st = TP_ENOMEM;
		} else {
			memcpy(lh, z->src + e->loff, ll);
			int big = e->new_csize >= U32_MAX_FIELD || e->new_usize >= U32_MAX_FIELD;
			wr32(lh + 14, e->new_crc);
			wr32(lh + 18, big ? U32_MAX_FIELD : (uint32_t)e->new_csize);
			wr32(lh + 22, big ? U32_MAX_FIELD : (uint32_t)e->new_usize);
			size_t fl = 0;
			uint8_t *f = (uint8_t *)zip64_extra(lh + LOCAL_FIXED + rd16(lh + 26),
			                                    rd16(lh + 28), &fl);
			if (f && fl >= 16) {
				wr64(f, big ? e->new_usize : 0);
				wr64(f + 8, big ? e->new_csize : 0);
			} else if (big) {
				st = bad(z, e->loff, "a sheet over 4 GiB without a zip64 field");
			}
			e->new_off = z->off;
			if (st == TP_OK)
				st = put(z, lh, ll);
			tp_free(lh);
		}
	}
	if (st == TP_OK)
		st = put(z, zh.data, zh.len);
	for (size_t k = dd->chunk0; st == TP_OK && k < dd->chunk0 + dd->nchunks; k++)
		st = put(z, z->x->chunks[k].z.data, z->x->chunks[k].z.len);
	if (st == TP_OK)
		st = put(z, zt.data, zt.len);
	tp_buf_free(&xml);
	tp_buf_free(&head);
	tp_buf_free(&zh);
	tp_buf_free(&zt);
	return st;
}

/* Writes e's central record with its new offset and sizes (a zip64 field where needed). */
static int put_central(struct zsplice *z, const struct zent *e)
{
	const uint8_t *c = e->cen;
	size_t nl = rd16(c + 28), el = rd16(c + 30), cl = rd16(c + 32);
	uint8_t fix[CENTRAL_FIXED], z64[4 + 24];
	memcpy(fix, c, CENTRAL_FIXED);
	size_t zl = 4;
	if (e->new_usize >= U32_MAX_FIELD)
		wr64(z64 + zl, e->new_usize), zl += 8;
	if (e->new_csize >= U32_MAX_FIELD)
		wr64(z64 + zl, e->new_csize), zl += 8;
	if (e->new_off >= U32_MAX_FIELD)
		wr64(z64 + zl, e->new_off), zl += 8;
	wr32(fix + 16, e->new_crc);
	wr32(fix + 20, e->new_csize >= U32_MAX_FIELD ? U32_MAX_FIELD : (uint32_t)e->new_csize);
	wr32(fix + 24, e->new_usize >= U32_MAX_FIELD ? U32_MAX_FIELD : (uint32_t)e->new_usize);
	wr32(fix + 42, e->new_off >= U32_MAX_FIELD ? U32_MAX_FIELD : (uint32_t)e->new_off);
	/* The source's extra fields but its zip64 one, then ours when needed. */
	const uint8_t *ex = c + CENTRAL_FIXED + nl;
	uint8_t keep[65536];
	size_t kl = 0;
	for (size_t i = 0; i + 4 <= el;) {
		size_t sz = rd16(ex + i + 2);
		if (i + 4 + sz > el)
			break;
		if (rd16(ex + i) != 1) {
			memcpy(keep + kl, ex + i, 4 + sz);
			kl += 4 + sz;
		}
		i += 4 + sz;
	}
	if (zl > 4) {
		wr16(z64, 1);
		wr16(z64 + 2, (uint16_t)(zl - 4));
		if (kl + zl > 65535)
			return bad(z, 0, "central extra field too long");
		memcpy(keep + kl, z64, zl);
		kl += zl;
		if (rd16(fix + 6) < 45)
			wr16(fix + 6, 45);
	}
	wr16(fix + 30, (uint16_t)kl);
	int st = put(z, fix, CENTRAL_FIXED);
	if (st == TP_OK)
		st = put(z, c + CENTRAL_FIXED, nl);
	if (st == TP_OK)
		st = put(z, keep, kl);
	if (st == TP_OK)
		st = put(z, c + CENTRAL_FIXED + nl + el, cl);
	return st;
}

static int put_end(struct zsplice *z, uint64_t cd_off, uint64_t cd_size)
{
	uint8_t b[56 + 20 + 22];
	size_t n = 0;
	int big = z->n >= 0xFFFF || cd_off >= U32_MAX_FIELD || cd_size >= U32_MAX_FIELD;
	if (big) {
		uint64_t e64 = z->off;
		memset(b, 0, 76);
		wr32(b, SIG_END64);
		wr64(b + 4, 44);
		wr16(b + 12, 45);
		wr16(b + 14, 45);
		wr64(b + 24, z->n);
		wr64(b + 32, z->n);
		wr64(b + 40, cd_size);
		wr64(b + 48, cd_off);
		wr32(b + 56, SIG_LOC64);
		wr64(b + 56 + 8, e64);
		wr32(b + 56 + 16, 1);
		n = 76;
	}
	memset(b + n, 0, 22);
	wr32(b + n, SIG_END);
	wr16(b + n + 8, big ? 0xFFFF : (uint16_t)z->n);
	wr16(b + n + 10, big ? 0xFFFF : (uint16_t)z->n);
	wr32(b + n + 12, big ? U32_MAX_FIELD : (uint32_t)cd_size);
	wr32(b + n + 16, big ? U32_MAX_FIELD : (uint32_t)cd_off);
	return put(z, b, n + 22);
}

/* The deferred sheet whose part is entry e, or NULL. */
static const struct xl_defer *defer_of(const struct xl *x, const struct zent *e)
{
	size_t nl = rd16(e->cen + 28);
	const char *name = (const char *)e->cen + CENTRAL_FIXED;
	static const char pre[] = "xl/worksheets/sheet";
	if (nl <= sizeof pre - 1 + 4 || memcmp(name, pre, sizeof pre - 1) != 0)
		return NULL;
	unsigned num = 0;
	size_t i = sizeof pre - 1;
	while (i < nl && name[i] >= '0' && name[i] <= '9' && num < 100000)
		num = num * 10 + (unsigned)(name[i++] - '0');
	if (nl - i != 4 || memcmp(name + i, ".xml", 4) != 0)
		return NULL;
	for (size_t k = 0; k < x->ndefer; k++)
		if (x->defer[k].sheet_no == num)
			return &x->defer[k];
	return NULL;
}

int xl_zip_splice(struct xl *x, const char *skel, const char *out, struct tp_diag *d)
{
	struct tp_file f;
	int st = tp_file_load(&f, skel, d);
	if (st != TP_OK)
		return st;
	struct zsplice z = {
	    .x = x, .src = f.data, .size = f.size, .skel = skel, .out_path = out, .d = d};
	st = read_central(&z);
	if (st == TP_OK)
		st = tp_afile_open(&z.out, out, d);
	else
		z.out.fp = NULL;
	int opened = st == TP_OK;
	for (size_t i = 0; st == TP_OK && i < z.n; i++) {
		const struct xl_defer *dd = defer_of(x, &z.e[i]);
		st = dd ? splice_entry(&z, &z.e[i], dd) : copy_entry(&z, &z.e[i]);
	}
	uint64_t cd_off = z.off;
	for (size_t i = 0; st == TP_OK && i < z.n; i++)
		st = put_central(&z, &z.e[i]);
	if (st == TP_OK)
		st = put_end(&z, cd_off, z.off - cd_off);
	if (st == TP_OK)
		st = tp_afile_commit(&z.out, d);
	else if (opened)
		tp_afile_abort(&z.out);
	tp_free(z.e);
	tp_file_release(&f);
	return st;
}
