/*
 * html_cols.c — the output side of result.html's data: the buffered output file, JSON values
 * (integers beyond 2^53 as strings, reals, strings), the binary integer columns (base64 of
 * zigzag varints, plain / delta / runs, whichever is shortest) and the page's string table.
 *
 * Owns nothing beyond one call: the buffer and string table belong to the caller's struct ctx.
 * html_smap also records (a find of html_par.c) or only reads (a part written on a thread).
 */
#include "writers/html/html_int.h"

#include <math.h>
#include <string.h>

#define FLUSH_AT (1u << 20)

void html_flush(struct out *o, int force)
{
	if (o->b.oom)
		o->err = TP_ENOMEM;
	if (o->err || !o->f || (!force && o->b.len < FLUSH_AT))
		return; /* a part's buffer (no file) holds the whole part */
	if (o->b.len && tp_afile_write(o->f, o->b.data, o->b.len) != 0)
		o->err = TP_EOUTPUT;
	o->b.len = 0;
}

/* Integers beyond 2^53 would lose digits in JavaScript, so they travel as strings. */
void html_put_u64(struct tp_buf *b, uint64_t v)
{
	if (v > ((uint64_t)1 << 53)) {
		tp_buf_putc(b, '"');
		tp_buf_u64(b, v);
		tp_buf_putc(b, '"');
		return;
	}
	tp_buf_u64(b, v);
}

/* A real in fixed notation with up to 6 decimals, trailing zeros trimmed; null if not finite. */
void html_put_real(struct tp_buf *b, double v)
{
	if (!isfinite(v)) {
		tp_buf_puts(b, "null");
		return;
	}
	size_t at = b->len;
	tp_buf_fixed(b, v, 6);
	if (b->oom)
		return;
	while (b->len > at + 1 && b->data[b->len - 1] == '0')
		b->len--;
	if (b->data[b->len - 1] == '.')
		b->len--;
}

void html_put_str(struct tp_buf *b, const char *s)
{
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, s ? s : "");
	tp_buf_putc(b, '"');
}

/* ------------------------------------------------------------------------------------------ */
/* Binary integer columns.                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* An integer column travels as one JSON string: a mode letter, then base64 (RFC 4648, padded)
 * of zigzag LEB128 varints. Mode 'r': the values; 'd': each value's difference from the
 * previous one (the first from 0); 'l' / 'm': runs, pairs (value, run length), of the values
 * ('l') or of the differences ('m'). Upper case ('R', 'D', 'L', 'M'): some value is beyond
 * int32 (up to 2^51; the page decodes into a Float64Array instead of an Int32Array). The
 * writer picks the shortest of the four. Base64 characters never need escaping in JSON or in
 * a <script> element. Values beyond +-2^51 are clamped (no profile quantity reaches them). */
static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static size_t varint_len(uint64_t z)
{
	/* 7 bits a byte: 1 + (bit length - 1) / 7 (z = 0 takes one byte). */
	return z ? (size_t)(70 - __builtin_clzll(z)) / 7 : 1;
}

static int64_t col_clamp(int64_t v)
{
	return v > COL_LIM ? COL_LIM : v < -COL_LIM ? -COL_LIM : v;
}

/* The base64 of a byte stream, staged: bytes gather in `in` and go out 3 at a time as 4
 * characters, B64_STAGE bytes (a multiple of 3) per tp_buf_put, so the characters are those
 * of one encoding of the whole stream. */
#define B64_STAGE 768
struct b64w {
	struct out *o;
	size_t n;
	unsigned char in[B64_STAGE];
};

static const char b64_abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Encodes the staged whole triplets (all of them when n is a multiple of 3) and keeps the
 * rest (0..2 bytes) staged. */
static void b64_flush(struct b64w *w)
{
	char q[B64_STAGE / 3 * 4];
	size_t whole = w->n / 3 * 3, k = 0;
	for (size_t i = 0; i < whole; i += 3) {
		uint32_t a = (uint32_t)w->in[i] << 16 | (uint32_t)w->in[i + 1] << 8 | w->in[i + 2];
		q[k++] = b64_abc[a >> 18 & 63];
		q[k++] = b64_abc[a >> 12 & 63];
		q[k++] = b64_abc[a >> 6 & 63];
		q[k++] = b64_abc[a & 63];
	}
	if (k)
		tp_buf_put(&w->o->b, q, k);
	memmove(w->in, w->in + whole, w->n - whole);
	w->n -= whole;
}

static void b64_end(struct b64w *w)
{
	b64_flush(w);
	if (!w->n)
		return;
	uint32_t a = (uint32_t)w->in[0] << 16 | (w->n == 2 ? (uint32_t)w->in[1] << 8 : 0u);
	char q[4] = {b64_abc[a >> 18 & 63], b64_abc[a >> 12 & 63],
	             w->n == 2 ? b64_abc[a >> 6 & 63] : '=', '='};
	tp_buf_put(&w->o->b, q, 4);
	w->n = 0;
}

static inline void b64_varint(struct b64w *w, int64_t v)
{
	if (w->n > B64_STAGE - 10) /* a varint takes at most 10 bytes */
		b64_flush(w);
	uint64_t z = zigzag(v);
	while (z >= 0x80) {
		w->in[w->n++] = (unsigned char)((z & 0x7f) | 0x80);
		z >>= 7;
	}
	w->in[w->n++] = (unsigned char)z;
}

/* Writes ,"KEY":"<mode><base64>" for values get(u, 0..n-1): the body of html_put_col and
 * html_put_col_vals (inlined into each, so the array reader's get is a load). */
static inline __attribute__((always_inline)) void put_col_with(struct out *o, const char *key,
                                                               size_t n, col_get_fn get, void *u)
{
	size_t len[4] = {0, 0, 0, 0}; /* plain, delta, runs of values, runs of differences */
	int wide = 0;
	int64_t prev = 0, rv[2] = {0, 0};
	size_t run[2] = {0, 0};
	for (size_t i = 0; i < n; i++) {
		int64_t v = col_clamp(get(u, i));
		if (v > INT32_MAX || v < INT32_MIN)
			wide = 1;
		int64_t x[2] = {v, v - prev};
		prev = v;
		for (int k = 0; k < 2; k++) {
			len[k] += varint_len(zigzag(x[k]));
			if (run[k] && x[k] == rv[k]) {
				run[k]++;
				continue;
			}
			if (run[k])
				len[2 + k] += varint_len(zigzag(rv[k])) + varint_len(run[k]);
			rv[k] = x[k];
			run[k] = 1;
		}
	}
	for (int k = 0; k < 2; k++)
		if (run[k])
			len[2 + k] += varint_len(zigzag(rv[k])) + varint_len(run[k]);
	int mode = 0;
	for (int k = 1; k < 4; k++)
		if (len[k] < len[mode])
			mode = k;
	tp_buf_printf(&o->b, ",\"%s\":\"%c", key, (wide ? "RDLM" : "rdlm")[mode]);
	struct b64w w;
	w.o = o;
	w.n = 0;
	int d = mode & 1;
	prev = 0;
	int64_t cur = 0;
	size_t cnt = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t v = col_clamp(get(u, i));
		int64_t x = d ? v - prev : v;
		prev = v;
		if (mode < 2) {
			b64_varint(&w, x);
		} else if (cnt && x == cur) {
			cnt++;
		} else {
			if (cnt) {
				b64_varint(&w, cur);
				b64_varint(&w, (int64_t)cnt);
			}
			cur = x;
			cnt = 1;
		}
		if ((i & 4095) == 4095)
			html_flush(o, 0);
	}
	if (cnt) {
		b64_varint(&w, cur);
		b64_varint(&w, (int64_t)cnt);
	}
	b64_end(&w);
	tp_buf_putc(&o->b, '"');
	html_flush(o, 0);
}

void html_put_col(struct out *o, const char *key, size_t n, col_get_fn get, void *u)
{
	put_col_with(o, key, n, get, u);
}

static inline int64_t vals_col(void *u, size_t i)
{
	return ((const int32_t *)u)[i];
}

/* html_put_col of the values v[0..n-1]. */
int html_fill_col(int32_t *v, size_t n, col_get_fn get, void *u)
{
	for (size_t i = 0; i < n; i++) {
		int64_t x = get(u, i);
		if (x != (int32_t)x)
			return 0;
		v[i] = (int32_t)x;
	}
	return 1;
}

void html_put_col_vals(struct out *o, const char *key, size_t n, const int32_t *v)
{
	put_col_with(o, key, n, vals_col, (void *)(uintptr_t)v);
}

/* ------------------------------------------------------------------------------------------ */
/* String table: only the profile strings the page uses, numbered in first-use order.          */
/* ------------------------------------------------------------------------------------------ */

uint32_t html_smap(struct strmap *m, uint32_t id)
{
	if (id >= m->nprof)
		id = 0;
	if (m->idx[id])
		return m->idx[id] - 1;
	if (m->rec) {
		struct strrec *r = m->rec;
		uint64_t bit = (uint64_t)1 << (id % 64);
		if (r->seen[id / 64] & bit)
			return 0;
		uint32_t *g = tp_grow(r->ids, sizeof *r->ids, r->n + 1, &r->cap);
		if (!g) {
			r->oom = 1;
			return 0;
		}
		r->ids = g;
		r->ids[r->n++] = id;
		r->seen[id / 64] |= bit;
		return 0;
	}
	if (m->frozen) {
		__atomic_store_n(m->miss, 1, __ATOMIC_RELAXED);
		return 0;
	}
	m->inv[m->n] = id;
	m->idx[id] = (uint32_t)++m->n;
	return (uint32_t)(m->n - 1);
}
