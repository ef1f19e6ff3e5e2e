/*
 * traceread.c — streaming Chrome-trace JSON reader (contract and model mapping in
 * traceread.h; user documentation in docs/input-chrome-trace.md).
 *
 * Structure: a byte source (a FILE read in 1 MiB chunks, or a memory block) holds a window of
 * the file. The top level (an array, or an object whose "traceEvents" member is the array) is
 * walked value by value; members other than traceEvents are skipped by `scan_value` (bracket
 * counting with string awareness). Each event object is parsed in one pass straight from the
 * window by a small recursive-descent parser (`parse_object`) that keeps the members it knows
 * and skips nested values by bracket counting; when the parse runs out of bytes, the window is
 * refilled — grown only for an event larger than it — and the event parsed again. The args of
 * an event are parsed strictly in a second, short pass when they are stored. Nothing of the
 * file is retained beyond the current event: strings go into the profile's string table
 * (through a small cache of recent ids), B/E and b/e matching keeps only the open events, flow
 * points are kept until the end to pair them.
 *
 * Owns, for one call: the read buffer, the scratch string buffer, the hash maps from
 * (pid, tid) / (pid, cat) / (pid, series) to model indices, the open-event stacks and the flow
 * points; all are released before returning. The profile goes to the caller.
 */
#include "readers/traceread/traceread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHUNK (1u << 20)       /* read size of the streaming source */
#define MAX_VALUE (1ull << 30) /* one event (or skipped top-level value) at most 1 GiB */
#define MAX_ARGS 64            /* args kept per event; more are counted */
#define MAX_RAW_ARG 256        /* nested args values kept as (truncated) JSON text */
#define MAX_DEPTH 64           /* nesting accepted inside one event */

/* ---------------------------------------------------------------------------------------- */
/* u64 -> int32 open-addressing map                                                          */
/* ---------------------------------------------------------------------------------------- */

struct map {
	uint64_t *keys;
	int32_t *vals;
	size_t n, cap; /* cap is 0 or a power of two */
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static int map_get(const struct map *m, uint64_t key, int32_t *val)
{
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1;
	for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
		if (m->vals[i] < 0)
			return 0;
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 1;
		}
	}
}

static int map_put(struct map *m, uint64_t key, int32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		uint64_t *nk = tp_malloc(ncap * sizeof *nk);
		int32_t *nv = tp_malloc(ncap * sizeof *nv);
		if (!nk || !nv) {
			tp_free(nk);
			tp_free(nv);
			return TP_ENOMEM;
		}
		for (size_t i = 0; i < ncap; i++)
			nv[i] = -1;
		for (size_t i = 0; i < m->cap; i++) {
			if (m->vals[i] < 0)
				continue;
			size_t j = mix(m->keys[i]) & (ncap - 1);
			while (nv[j] >= 0)
				j = (j + 1) & (ncap - 1);
			nk[j] = m->keys[i];
			nv[j] = m->vals[i];
		}
		tp_free(m->keys);
		tp_free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = ncap;
	}
	size_t mask = m->cap - 1, i = mix(key) & mask;
	while (m->vals[i] >= 0 && m->keys[i] != key)
		i = (i + 1) & mask;
	if (m->vals[i] < 0)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return TP_OK;
}

static void map_free(struct map *m)
{
	tp_free(m->keys);
	tp_free(m->vals);
	memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------------------------------- */
/* Byte source                                                                               */
/* ---------------------------------------------------------------------------------------- */

struct src {
	FILE *fp;             /* NULL: memory source */
	const uint8_t *buf;   /* valid bytes [0, len) */
	uint8_t *own;         /* the buffer when reading a file */
	size_t len, cap, pos; /* pos: first unconsumed byte */
	uint64_t base;        /* file offset of buf[0] */
	int eof, ioerr;
};

/* Makes more bytes available after buf[len) keeping buf[pos..len) (indices relative to pos
 * stay valid). Returns the number of new bytes, 0 at end of input, -1 out of memory / too big. */
static long more(struct src *s)
{
	if (!s->fp || s->eof)
		return 0;
	if (s->pos) {
		memmove(s->own, s->own + s->pos, s->len - s->pos);
		s->base += s->pos;
		s->len -= s->pos;
		s->pos = 0;
	}
	if (s->len == s->cap) {
		if (s->cap >= MAX_VALUE)
			return -1;
		uint8_t *nb = tp_realloc(s->own, s->cap * 2);
		if (!nb)
			return -1;
		s->own = nb;
		s->cap *= 2;
	}
	s->buf = s->own;
	size_t want = s->cap - s->len;
	if (want > CHUNK && s->len >= CHUNK)
		want = CHUNK;
	size_t got = fread(s->own + s->len, 1, want, s->fp);
	if (got == 0) {
		s->eof = 1;
		s->ioerr = ferror(s->fp) != 0;
		return 0;
	}
	s->len += got;
	return (long)got;
}

/* ---------------------------------------------------------------------------------------- */
/* Reader state                                                                              */
/* ---------------------------------------------------------------------------------------- */

struct open_ev { /* an open B (per track) or b (per async key) */
	int64_t ts;
	uint32_t name, cat, id;
	uint32_t args;
	int32_t track;
	uint32_t pid;
};

struct jv {            /* one JSON value inside the current event */
	const char *p; /* strings: content without quotes; others: the raw text */
	size_t n;
	char kind; /* 's' string, 'n' number, 'l' literal, 'o' object, 'a' array, 0 none */
	int esc;   /* string holds escapes or non-ASCII bytes */
};

struct rd {
	const char *path;
	struct tp_diag *d;
	struct tp_profile *p;
	struct src s;
	struct tp_buf tmp; /* decoded strings */
	struct map tracks, devices, async_tracks, counters, pname, tname;
	struct stack { /* per track: open B events */
		struct open_ev *v;
		size_t n, cap;
	} * stk;
	size_t nstk, capstk;
	struct open_ev *async_open;
	size_t nasync, capasync;
	int64_t min_ns, max_ns;
	int any_ts;
	uint64_t events, n_x, n_be, n_i, n_async, n_counter, n_meta, n_flow;
	uint64_t unmatched_e, unclosed_b, unmatched_async, unclosed_async, x_no_dur, neg_dur;
	uint64_t no_ph, no_ts, unknown_ph, bad_ts, utf8_fixed, args_dropped, meta_ignored;
	int truncated;
	uint64_t trunc_off;
	int64_t cur_ts;       /* ts of the C event being read (counter_member) */
	struct fpt {          /* a flow point: s / t (start) or t / f (end) */
		uint64_t key; /* cat id << 32 | id id */
		int32_t track;
		int64_t ts;
	} * fstart, *fend;
	size_t nfstart, capfstart, nfend, capfend;
	uint64_t flows_matched, flows_unmatched, flows_corr;
	struct { /* direct-mapped cache of recent pid/tid/name/cat ids */
		uint32_t id, n;
		uint64_t h;
		const char *s; /* the string of id (arena-owned, stable) */
	} icache[512];
	struct {               /* arg keys by position in the previous event's args */
		const char *s; /* the key's string (arena-owned) */
		uint32_t n, id;
	} kcache[16];
	uint32_t k_cat, k_optype, ty_op, ty_step, ty_instant, ty_async;
};

static uint64_t off_of(const struct rd *r, const char *q)
{
	return r->s.base + (uint64_t)((const uint8_t *)q - r->s.buf);
}

/* ---------------------------------------------------------------------------------------- */
/* Top-level scanning                                                                        */
/* ---------------------------------------------------------------------------------------- */

static int is_ws(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The byte at pos + i, refilling as needed; -1 at end of input, -2 on out of memory. */
static int peek(struct src *s, size_t i)
{
	while (s->pos + i >= s->len) {
		long m = more(s);
		if (m == 0)
			return -1;
		if (m < 0)
			return -2;
	}
	return s->buf[s->pos + i];
}

/* Skips whitespace (and commas too when `commas`). Returns the next byte or -1 / -2. */
static int skip_ws(struct src *s, int commas)
{
	for (;;) {
		int c = peek(s, 0);
		if (c < 0)
			return c;
		if (is_ws(c) || (commas && c == ','))
			s->pos++;
		else
			return c;
	}
}

enum { SCAN_OK = 0, SCAN_EOF = 1, SCAN_BAD = 2, SCAN_NOMEM = 3 };

/* Finds the extent of the value at pos: sets *n so it spans [pos, pos + n). Objects and arrays
 * by bracket counting (contents are checked later by the event parser), strings to the closing
 * quote, scalars to the next delimiter. */
static int scan_value(struct src *s, size_t *n)
{
	size_t i = 0;
	int depth = 0, in_str = 0, esc = 0;
	int c = peek(s, 0);
	if (c < 0)
		return c == -1 ? SCAN_EOF : SCAN_NOMEM;
	if (c != '{' && c != '[' && c != '"') {
		for (;;) {
			c = peek(s, i);
			if (c == -2)
				return SCAN_NOMEM;
			if (c < 0 || is_ws(c) || c == ',' || c == ']' || c == '}')
				break;
			i++;
		}
		*n = i;
		return i ? SCAN_OK : SCAN_BAD;
	}
	for (;;) {
		if (s->pos + i >= s->len) {
			long m = more(s);
			if (m == 0)
				return SCAN_EOF;
			if (m < 0)
				return SCAN_NOMEM;
		}
		/* Fast inner loop over the bytes already buffered. */
		const uint8_t *b = s->buf + s->pos;
		size_t end = s->len - s->pos;
		for (; i < end; i++) {
			uint8_t ch = b[i];
			if (in_str) {
				if (esc)
					esc = 0;
				else if (ch == '\\')
					esc = 1;
				else if (ch == '"') {
					in_str = 0;
					if (depth == 0) {
						*n = i + 1;
						return SCAN_OK;
					}
				}
				continue;
			}
			if (ch == '"')
				in_str = 1;
			else if (ch == '{' || ch == '[')
				depth++;
			else if (ch == '}' || ch == ']') {
				if (--depth == 0) {
					*n = i + 1;
					return SCAN_OK;
				}
			}
		}
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Strings                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void put_utf8(struct tp_buf *b, uint32_t cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	tp_buf_put(b, u, n);
}

/* Length of a valid UTF-8 sequence at p (n bytes left), 0 if invalid. */
static size_t utf8_len(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];
	if (c < 0x80)
		return 1;
	size_t len;
	uint32_t cp;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		cp = c & 0x1Fu;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		cp = c & 0x0Fu;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		cp = c & 0x07u;
	} else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3Fu);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return len;
}

static int hex4(const char *p, uint32_t *v)
{
	uint32_t x = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*v = x;
	return 0;
}

/* Decodes a JSON string body into r->tmp (NUL-terminated): escapes resolved, invalid UTF-8 and
 * lone surrogates replaced by U+FFFD (counted), U+0000 dropped (strings are C strings).
 * Returns 0, or -1 for a malformed escape. */
static int decode_str(struct rd *r, const struct jv *v)
{
	struct tp_buf *b = &r->tmp;
	b->len = 0;
	const uint8_t *p = (const uint8_t *)v->p, *e = p + v->n;
	while (p < e) {
		if (*p == '\\') {
			if (e - p < 2)
				return -1;
			char c = (char)p[1];
			p += 2;
			switch (c) {
			case '"':
				tp_buf_putc(b, '"');
				break;
			case '\\':
				tp_buf_putc(b, '\\');
				break;
			case '/':
				tp_buf_putc(b, '/');
				break;
			case 'b':
				tp_buf_putc(b, '\b');
				break;
			case 'f':
				tp_buf_putc(b, '\f');
				break;
			case 'n':
				tp_buf_putc(b, '\n');
				break;
			case 'r':
				tp_buf_putc(b, '\r');
				break;
			case 't':
				tp_buf_putc(b, '\t');
				break;
			case 'u': {
				uint32_t cp, lo;
				if (e - p < 4 || hex4((const char *)p, &cp))
					return -1;
				p += 4;
				if (cp >= 0xD800 && cp <= 0xDBFF && e - p >= 6 && p[0] == '\\' &&
				    p[1] == 'u' && !hex4((const char *)p + 2, &lo) &&
				    lo >= 0xDC00 && lo <= 0xDFFF) {
					p += 6;
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				} else if (cp >= 0xD800 && cp <= 0xDFFF) {
					cp = 0xFFFD;
					r->utf8_fixed++;
				}
				if (cp)
					put_utf8(b, cp);
				break;
			}
			default:
				return -1;
			}
			continue;
		}
		size_t l = utf8_len(p, (size_t)(e - p));
		if (!l) {
			put_utf8(b, 0xFFFD);
			r->utf8_fixed++;
			p++;
			continue;
		}
		if (*p)
			tp_buf_put(b, p, l);
		p += l;
	}
	tp_buf_putc(b, 0);
	b->len--;
	return b->oom ? -2 : 0;
}

/* Interns raw bytes through a small cache: pid, tid, name and cat repeat from event to event,
 * so most lookups end in one memcmp instead of a hash-table probe. */
static uint32_t intern_raw(struct rd *r, const char *p, size_t n)
{
	/* Hash eight bytes at a time (names of GPU kernels run to hundreds of bytes). */
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	size_t slot = (size_t)h & 511;
	if (r->icache[slot].h == h && r->icache[slot].n == n && r->icache[slot].id &&
	    memcmp(r->icache[slot].s, p, n) == 0)
		return r->icache[slot].id;
	uint32_t id = tp_profile_strn(r->p, p, n);
	if (n < UINT32_MAX) {
		r->icache[slot].h = h;
		r->icache[slot].n = (uint32_t)n;
		r->icache[slot].id = id;
		r->icache[slot].s = tp_str(r->p, id);
	}
	return id;
}

/* Interns a value as a string: strings decoded, anything else as its raw text. 0 = "" also
 * on error (callers check r->p->oom / the decode status separately). */
static int intern_val(struct rd *r, const struct jv *v, uint32_t *id)
{
	if (v->kind == 's' && v->esc) {
		int st = decode_str(r, v);
		if (st)
			return st;
		*id = tp_profile_strn(r->p, r->tmp.data, r->tmp.len);
		return 0;
	}
	*id = v->kind ? intern_raw(r, v->p, v->n) : 0;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Numbers                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* The common case without any of the general path's work: plain digits, at most 18 of them,
 * then optionally '.' and one to three fraction digits (whole ns, no rounding). Returns 0 and
 * sets *ns, or -1 to fall back to the general path (which gives the same value wherever both
 * apply). */
static int us_to_ns_plain(const char *s, size_t n, int64_t *ns)
{
	size_t i = 0;
	uint64_t ip = 0;
	while (i < n && (unsigned)(s[i] - '0') < 10u) {
		ip = ip * 10 + (uint64_t)(s[i] - '0');
		if (++i > 18)
			return -1;
	}
	if (i == 0)
		return -1;
	uint64_t frac = 0;
	if (i < n) {
		if (s[i] != '.')
			return -1;
		size_t f0 = ++i;
		while (i < n && (unsigned)(s[i] - '0') < 10u && i - f0 < 3)
			frac = frac * 10 + (uint64_t)(s[i++] - '0');
		if (i != n || i == f0)
			return -1;
		for (size_t k = i - f0; k < 3; k++)
			frac *= 10;
	}
	if (ip > ((uint64_t)INT64_MAX - 999) / 1000)
		return -1;
	*ns = (int64_t)(ip * 1000 + frac);
	return 0;
}

int tp_traceread_us_to_ns(const char *s, size_t n, int64_t *ns)
{
	if (us_to_ns_plain(s, n, ns) == 0)
		return 0;
	size_t i = 0;
	int neg = 0;
	while (i < n && is_ws((unsigned char)s[i]))
		i++;
	while (n > i && is_ws((unsigned char)s[n - 1]))
		n--;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	uint64_t mant = 0;
	int sig = 0;    /* significant digits held in mant */
	long exp10 = 3; /* µs -> ns */
	int digits = 0, dot = 0;
	for (; i < n; i++) {
		char c = s[i];
		if (c == '.' && !dot) {
			dot = 1;
			continue;
		}
		if (c < '0' || c > '9')
			break;
		digits++;
		if (sig < 19) {
			if (mant || c != '0')
				sig++;
			mant = mant * 10 + (uint64_t)(c - '0');
			if (dot)
				exp10--;
		} else if (!dot) {
			exp10++; /* integer digits past 19 significant ones scale the value */
		}
	}
	if (!digits)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		int eneg = 0;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		long e = 0;
		int ed = 0;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, ed++)
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
		if (!ed)
			return -1;
		exp10 += eneg ? -e : e;
	}
	if (i != n)
		return -1;
	if (mant == 0) {
		*ns = 0;
		return 0;
	}
	if (exp10 >= 0) {
		for (long k = 0; k < exp10; k++) {
			if (mant > UINT64_MAX / 10)
				return -1;
			mant *= 10;
		}
	} else if (exp10 < -19) {
		mant = 0;
	} else {
		uint64_t div = 1;
		for (long k = 0; k < -exp10; k++)
			div *= 10;
		uint64_t q = mant / div, rem = mant % div;
		/* Digits past the nanosecond: round half away from zero (on the magnitude). */
		if (rem >= div - rem)
			q++;
		mant = q;
	}
	if (neg) {
		if (mant > (uint64_t)INT64_MAX + 1)
			return -1;
		*ns = mant == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mant;
	} else {
		if (mant > (uint64_t)INT64_MAX)
			return -1;
		*ns = (int64_t)mant;
	}
	return 0;
}

/* A number value (or a string holding one) as a double; 0 if it is neither. */
static int val_real(const struct jv *v, double *out)
{
	if (v->kind != 'n' && v->kind != 's')
		return -1;
	char tmp[64];
	if (v->n == 0 || v->n >= sizeof tmp)
		return -1;
	memcpy(tmp, v->p, v->n);
	tmp[v->n] = 0;
	char *end;
	double x = strtod(tmp, &end);
	if (end == tmp || *end)
		return -1;
	*out = x;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Event parser (contiguous bytes of one event object)                                       */
/* ---------------------------------------------------------------------------------------- */

struct jp {
	const char *p, *e;
	const char *err; /* first error message */
	const char *err_at;
	int short_; /* the error is "ran out of bytes": more input may complete the value */
	int lazy;   /* skip nested objects / arrays by bracket counting (validated later) */
};

/* Characters that may continue a JSON number (digits, sign, point, exponent). */
static const unsigned char num_char[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1,
};

/* Skips whitespace. Most calls find none: one compare rules out every byte above ' '. */
static inline void jp_ws(struct jp *j)
{
	while (j->p < j->e && (unsigned char)*j->p <= ' ' && is_ws((unsigned char)*j->p))
		j->p++;
}

static int jp_fail(struct jp *j, const char *msg)
{
	if (!j->err) {
		j->err = msg;
		j->err_at = j->p < j->e ? j->p : j->e;
		j->short_ = j->p >= j->e;
	}
	return -1;
}

static int jp_string(struct jp *j, struct jv *v)
{
	/* at '"' */
	const char *q = ++j->p;
	int esc = 0;
	/* Fast path: plain ASCII up to the closing quote, eight bytes per step: a word is skipped
	 * when none of its bytes is '"', '\\' or >= 0x80 (the zero-byte test of
	 * w ^ 0x22.. and w ^ 0x5c..; its lowest flagged byte is exact, which is the one used). */
	unsigned char hi = 0;
	while (j->e - q >= 8) {
		uint64_t w;
		memcpy(&w, q, 8);
		const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
		uint64_t a = w ^ (ones * '"'), b = w ^ (ones * '\\');
		uint64_t m = ((a - ones) & ~a) | ((b - ones) & ~b) | w;
		m &= highs;
		if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			q += (unsigned)__builtin_ctzll(m) / 8;
#endif
			break;
		}
		q += 8;
	}
	while (q < j->e && *q != '"' && *q != '\\')
		hi |= (unsigned char)*q++;
	esc = hi >= 0x80;
	while (q < j->e && *q != '"') {
		if (*q == '\\') {
			esc = 1;
			q++;
		} else if ((unsigned char)*q >= 0x80)
			esc = 1;
		q++;
	}
	if (q >= j->e) {
		j->p = j->e;
		return jp_fail(j, "unterminated string");
	}
	v->kind = 's';
	v->p = j->p;
	v->n = (size_t)(q - j->p);
	v->esc = esc;
	j->p = q + 1;
	return 0;
}

static int jp_value(struct jp *j, struct jv *v, int depth);

/* The extent of the object / array at j->p by bracket counting with string awareness (the
 * first pass over an event; its args are parsed strictly by the second). */
static const unsigned char skip_class[256] = {
    ['"'] = 1, ['{'] = 2, ['['] = 2, ['}'] = 3, [']'] = 3,
};

static int jp_skip(struct jp *j, struct jv *v)
{
	const char *q = j->p;
	int depth = 0;
	while (q < j->e) {
		unsigned cls = skip_class[(unsigned char)*q++];
		if (!cls)
			continue;
		if (cls == 1) {
			/* To the closing quote, eight bytes per step while no '"' or '\\' is near.
			 */
			while (j->e - q >= 8) {
				uint64_t w;
				memcpy(&w, q, 8);
				const uint64_t ones = 0x0101010101010101ull;
				uint64_t a = w ^ (ones * '"'), b = w ^ (ones * '\\');
				if ((((a - ones) & ~a) | ((b - ones) & ~b)) & (ones << 7))
					break;
				q += 8;
			}
			while (q < j->e && *q != '"')
				q += *q == '\\' ? 2 : 1;
			if (q >= j->e)
				break;
			q++;
		} else if (cls == 2) {
			depth++;
		} else if (--depth == 0) {
			v->kind = j->p[0] == '{' ? 'o' : 'a';
			v->p = j->p;
			v->n = (size_t)(q - j->p);
			v->esc = 0;
			j->p = q;
			return 0;
		}
	}
	j->p = j->e;
	return jp_fail(j, "unterminated object or array");
}

static int jp_container(struct jp *j, struct jv *v, int depth)
{
	char close = *j->p == '{' ? '}' : ']';
	int obj = close == '}';
	const char *start = j->p++;
	if (depth > MAX_DEPTH)
		return jp_fail(j, "nesting too deep");
	jp_ws(j);
	if (j->p < j->e && *j->p == close) {
		j->p++;
	} else {
		for (;;) {
			struct jv k, x;
			jp_ws(j);
			if (obj) {
				if (j->p >= j->e || *j->p != '"')
					return jp_fail(j, "expected a member name");
				if (jp_string(j, &k))
					return -1;
				jp_ws(j);
				if (j->p >= j->e || *j->p != ':')
					return jp_fail(j, "expected ':' after a member name");
				j->p++;
			}
			if (jp_value(j, &x, depth + 1))
				return -1;
			jp_ws(j);
			if (j->p < j->e && *j->p == ',') {
				j->p++;
				jp_ws(j);
				/* A trailing comma before the close is tolerated. */
				if (j->p < j->e && *j->p == close) {
					j->p++;
					break;
				}
				continue;
			}
			if (j->p < j->e && *j->p == close) {
				j->p++;
				break;
			}
			return jp_fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		}
	}
	v->kind = obj ? 'o' : 'a';
	v->p = start;
	v->n = (size_t)(j->p - start);
	v->esc = 0;
	return 0;
}

static int jp_value(struct jp *j, struct jv *v, int depth)
{
	jp_ws(j);
	if (j->p >= j->e)
		return jp_fail(j, "expected a value");
	char c = *j->p;
	if (c == '"')
		return jp_string(j, v);
	if ((c == '{' || c == '[') && j->lazy && depth > 0)
		return jp_skip(j, v);
	if (c == '{' || c == '[')
		return jp_container(j, v, depth);
	const char *q = j->p;
	if (c == '-' || (c >= '0' && c <= '9')) {
		while (q < j->e && num_char[(unsigned char)*q])
			q++;
		if (q == j->e) {
			/* A number may continue past the bytes at hand. */
			j->p = q;
			return jp_fail(j, "number cut short");
		}
		v->kind = 'n';
	} else {
		static const char *const lits[] = {"true", "false", "null", "NaN", "Infinity"};
		static const unsigned char lit_len[] = {4, 5, 4, 3, 8};
		size_t k = c == 't'   ? 0
		           : c == 'f' ? 1
		           : c == 'n' ? 2
		           : c == 'N' ? 3
		           : c == 'I' ? 4
		                      : 5;
		if (k < 5) {
			size_t l = lit_len[k], have = (size_t)(j->e - q);
			if (have < l && memcmp(q, lits[k], have) == 0) {
				j->p = j->e; /* a literal cut short */
				return jp_fail(j, "literal cut short");
			}
			if (have < l || memcmp(q, lits[k], l) != 0)
				k = 5;
			else
				q += l;
		}
		if (k == 5)
			return jp_fail(j, "unexpected character");
		v->kind = 'l';
	}
	v->p = j->p;
	v->n = (size_t)(q - j->p);
	v->esc = 0;
	j->p = q;
	return 0;
}

struct ev {
	struct jv ph, name, cat, pid, tid, ts, dur, id, args, bp;
};

/* Parses the object at j->p ('{'), calling cb for each member, and leaves j->p after its '}'.
 * Commas are required between members; one before the '}' is tolerated. Returns 0, -1 on a
 * syntax error (j->err, j->short_), or cb's non-zero status. */
static int parse_object(struct jp *j, int (*cb)(void *ctx, const struct jv *k, const struct jv *v),
                        void *ctx)
{
	j->p++; /* '{' */
	for (;;) {
		jp_ws(j);
		if (j->p >= j->e)
			return jp_fail(j, "expected a member name or '}'");
		if (*j->p == '}') {
			j->p++;
			return 0;
		}
		struct jv k, v;
		if (*j->p != '"')
			return jp_fail(j, "expected a member name");
		if (jp_string(j, &k))
			return -1;
		jp_ws(j);
		if (j->p >= j->e || *j->p != ':')
			return jp_fail(j, "expected ':' after a member name");
		j->p++;
		if (jp_value(j, &v, 1))
			return -1;
		int st = cb(ctx, &k, &v);
		if (st)
			return st;
		jp_ws(j);
		if (j->p >= j->e)
			return jp_fail(j, "expected ',' or '}'");
		if (*j->p == ',')
			j->p++;
		else if (*j->p != '}')
			return jp_fail(j, "expected ',' or '}'");
	}
}

static int key_is(const struct jv *k, const char *s)
{
	size_t n = strlen(s);
	return k->n == n && memcmp(k->p, s, n) == 0;
}

/* Iterates the members of the object value `obj`; calls back with (key, value). */
/* Calls cb for each member of the object value `obj` (already validated by the first pass).
 * Returns 0, -1 with j->err set, or cb's status. */
static int parse_members(struct jp *j, const struct jv *obj,
                         int (*cb)(void *ctx, const struct jv *k, const struct jv *v), void *ctx)
{
	struct jp sub = {obj->p, obj->p + obj->n, NULL, NULL, 0, 0};
	int st = parse_object(&sub, cb, ctx);
	if (st == -1) {
		j->err = sub.err;
		j->err_at = sub.err_at;
	}
	return st;
}

static int ev_member(void *ctx, const struct jv *k, const struct jv *v)
{
	struct ev *e = ctx;
	const char *p = k->p;
	/* Dispatch on length and first byte: this runs for every member of every event. */
	switch (k->n) {
	case 2:
		if (p[0] == 'p' && p[1] == 'h')
			e->ph = *v;
		else if (p[0] == 't' && p[1] == 's')
			e->ts = *v;
		else if (p[0] == 'i' && p[1] == 'd')
			e->id = *v;
		else if (p[0] == 'b' && p[1] == 'p')
			e->bp = *v;
		break;
	case 3:
		if (memcmp(p, "pid", 3) == 0)
			e->pid = *v;
		else if (memcmp(p, "tid", 3) == 0)
			e->tid = *v;
		else if (memcmp(p, "cat", 3) == 0)
			e->cat = *v;
		else if (memcmp(p, "dur", 3) == 0)
			e->dur = *v;
		break;
	case 4:
		if (memcmp(p, "name", 4) == 0)
			e->name = *v;
		else if (memcmp(p, "args", 4) == 0)
			e->args = *v;
		break;
	default:
		break;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Model building                                                                            */
/* ---------------------------------------------------------------------------------------- */

struct args_ctx {
	struct rd *r;
	size_t n;
	int st;
};

/* A JSON integer of at most 18 digits ("-12", "7") without the general path's work; -1
 * (use the general path) for anything else. */
static int int_plain(const char *p, size_t n, int64_t *out)
{
	size_t i = n && p[0] == '-';
	if (i == n || n - i > 18)
		return -1;
	uint64_t v = 0;
	for (size_t k = i; k < n; k++) {
		unsigned d = (unsigned)(p[k] - '0');
		if (d > 9)
			return -1;
		v = v * 10 + d;
	}
	*out = i ? -(int64_t)v : (int64_t)v;
	return 0;
}

static int arg_member(void *ctx, const struct jv *k, const struct jv *v)
{
	struct args_ctx *a = ctx;
	struct rd *r = a->r;
	if (a->n >= MAX_ARGS) {
		r->args_dropped++;
		return 0;
	}
	uint32_t key = 0;
	/* Events of one kind repeat their arg keys in the same order: compare with the key the
	 * previous event had at this position before hashing. */
	size_t pos = a->n;
	if (pos < 16 && !k->esc && r->kcache[pos].s && r->kcache[pos].n == k->n &&
	    memcmp(r->kcache[pos].s, k->p, k->n) == 0)
		key = r->kcache[pos].id;
	else {
		if (intern_val(r, k, &key) || !key)
			return r->p->oom ? 1 : 0;
		if (pos < 16 && !k->esc && k->n < UINT32_MAX) {
			r->kcache[pos].s = tp_str(r->p, key);
			r->kcache[pos].n = (uint32_t)k->n;
			r->kcache[pos].id = key;
		}
	}
	struct tp_arg arg = {.key = key};
	if (v->kind == 's') {
		uint32_t id = 0;
		int st = intern_val(r, v, &id);
		if (st == -2)
			return 1;
		if (st)
			return 0; /* a bad escape in one value: the value is left out */
		arg.type = TP_ARG_STR;
		arg.v.s = id;
	} else if (v->kind == 'n' && int_plain(v->p, v->n, &arg.v.i) == 0) {
		arg.type = TP_ARG_INT;
	} else if (v->kind == 'n') {
		int integral = !memchr(v->p, '.', v->n) && !memchr(v->p, 'e', v->n) &&
		               !memchr(v->p, 'E', v->n);
		if (integral && tp_parse_i64(v->p, v->n, &arg.v.i) == 0)
			arg.type = TP_ARG_INT;
		else if (integral && tp_parse_u64(v->p, v->n, &arg.v.u) == 0)
			arg.type = TP_ARG_UINT;
		else if (val_real(v, &arg.v.d) == 0)
			arg.type = TP_ARG_REAL;
		else
			return 0;
	} else if (v->kind == 'l') {
		if (v->p[0] != 't' && v->p[0] != 'f')
			return 0;
		arg.type = TP_ARG_INT;
		arg.v.i = v->p[0] == 't';
	} else {
		/* Nested objects / arrays: their JSON text, shortened, as a string (bytes that are
		 * not UTF-8 replaced, NULs dropped). */
		size_t n = v->n < MAX_RAW_ARG ? v->n : MAX_RAW_ARG;
		struct tp_buf *b = &r->tmp;
		size_t ascii = 0;
		while (ascii < n && (unsigned char)v->p[ascii] - 1u < 0x7fu)
			ascii++;
		if (ascii == v->n) {
			/* Short and plain ASCII (the usual case): interned as it stands. */
			arg.type = TP_ARG_STR;
			arg.v.s = intern_raw(r, v->p, v->n);
			a->n++;
			return tp_args_add(r->p, &arg) == TP_OK && !r->p->oom ? 0 : 1;
		}
		b->len = 0;
		for (size_t q = 0; q < n;) {
			size_t run = 0;
			while (q + run < n && (unsigned char)v->p[q + run] - 1u < 0x7fu)
				run++;
			if (run) {
				tp_buf_put(b, v->p + q, run);
				q += run;
				continue;
			}
			size_t l = utf8_len((const uint8_t *)v->p + q, n - q);
			if (!l) {
				if (v->p[q])
					put_utf8(b, 0xFFFD);
				q++;
				continue;
			}
			tp_buf_put(b, v->p + q, l);
			q += l;
		}
		if (v->n > MAX_RAW_ARG)
			tp_buf_puts(b, "...");
		if (b->oom)
			return 1;
		arg.type = TP_ARG_STR;
		arg.v.s = intern_raw(r, b->data ? b->data : "", b->len);
	}
	a->n++;
	return tp_args_add(r->p, &arg) == TP_OK && !r->p->oom ? 0 : 1; /* 1: out of memory */
}

/* The first occurrence of "\"op_name\"" in p[0..n), or NULL. Searched by its '_' (rare in
 * args, unlike the quote it starts with). */
static const char *find_op_name(const char *p, size_t n)
{
	static const char needle[] = "\"op_name\"";
	const char *e = p + n, *q = p + 3;
	while (q < e) {
		q = memchr(q, '_', (size_t)(e - q));
		if (!q)
			return NULL;
		if ((size_t)(e - (q - 3)) >= 9 && memcmp(q - 3, needle, 9) == 0)
			return q - 3;
		q++;
	}
	return NULL;
}

/* Builds the argument set of an event: "cat", "op_type", then the event's args. */
static int make_args(struct rd *r, struct jp *j, const struct ev *e, uint32_t name, uint32_t cat,
                     int with_optype, uint32_t *out)
{
	tp_args_begin(r->p);
	if (cat) {
		struct tp_arg a = {.key = r->k_cat, .type = TP_ARG_STR, .v.s = cat};
		tp_args_add(r->p, &a);
	}
	if (with_optype) {
		/* ONNX Runtime names node events after the node and gives the type as op_name. */
		uint32_t ty = name;
		if (e->args.kind == 'o') {
			const char *end = e->args.p + e->args.n;
			const char *hit = find_op_name(e->args.p, e->args.n);
			if (hit) {
				hit += 9;
				struct jp sub = {hit, end, NULL, NULL, 0, 0};
				jp_ws(&sub);
				if (sub.p < sub.e && *sub.p == ':') {
					sub.p++;
					struct jv v;
					if (!jp_value(&sub, &v, 1) && v.kind == 's')
						intern_val(r, &v, &ty);
				}
			}
		}
		struct tp_arg a = {.key = r->k_optype, .type = TP_ARG_STR, .v.s = ty};
		tp_args_add(r->p, &a);
	}
	if (e->args.kind == 'o') {
		struct args_ctx a = {r, 0, 0};
		int st = parse_members(j, &e->args, arg_member, &a);
		if (st > 0)
			return TP_ENOMEM;
		if (st)
			return TP_EFORMAT;
	}
	*out = tp_args_end(r->p);
	return r->p->oom ? TP_ENOMEM : TP_OK;
}

static int get_device(struct rd *r, uint32_t pid)
{
	int32_t v;
	if (map_get(&r->devices, pid, &v))
		return v;
	char name[96];
	const char *ps = tp_str(r->p, pid);
	snprintf(name, sizeof name, "pid %.80s", ps);
	int64_t num = 0;
	int32_t id = (int32_t)r->p->num_devices;
	if (tp_parse_i64(ps, strlen(ps), &num) == 0 && num >= INT32_MIN && num <= INT32_MAX)
		id = (int32_t)num;
	int dev = tp_profile_add_device(r->p, name, id, 0);
	if (dev < 0 || map_put(&r->devices, pid, dev))
		return -1;
	return dev;
}

static int get_track(struct rd *r, uint32_t pid, uint32_t tid)
{
	int32_t v;
	uint64_t key = (uint64_t)pid << 32 | tid;
	if (map_get(&r->tracks, key, &v))
		return v;
	int dev = get_device(r, pid);
	if (dev < 0)
		return -1;
	char name[96];
	const char *ts = tp_str(r->p, tid);
	snprintf(name, sizeof name, "tid %.80s", ts);
	int tr = tp_profile_add_track(r->p, dev, -1, TP_TRACK_HOST, name, 0);
	if (tr < 0 || map_put(&r->tracks, key, tr))
		return -1;
	int64_t num;
	if (tp_parse_i64(ts, strlen(ts), &num) == 0)
		r->p->tracks[tr].tid = num;
	return tr;
}

static int get_async_track(struct rd *r, uint32_t pid, uint32_t cat)
{
	int32_t v;
	uint64_t key = (uint64_t)pid << 32 | cat;
	if (map_get(&r->async_tracks, key, &v))
		return v;
	int dev = get_device(r, pid);
	if (dev < 0)
		return -1;
	char name[128];
	snprintf(name, sizeof name, "async %.100s", tp_str(r->p, cat));
	int tr = tp_profile_add_track(r->p, dev, -1, TP_TRACK_HOST, name, 0);
	if (tr < 0 || map_put(&r->async_tracks, key, tr))
		return -1;
	return tr;
}

static int add_slice(struct rd *r, int track, int64_t ts, int64_t end, uint32_t name, uint32_t type,
                     uint32_t args)
{
	struct tp_slice *s = tp_track_push(r->p, track);
	if (!s)
		return TP_ENOMEM;
	s->start_ns = ts;
	tp_slice_set_end(r->p, &r->p->tracks[track], s, end < ts ? ts : end);
	tp_slice_set_label(r->p, &r->p->tracks[track], s,
	                   &(struct tp_label){.name = name, .type = type});
	s->args = args;
	return TP_OK;
}

static void see_ts(struct rd *r, int64_t ts)
{
	if (!r->any_ts || ts < r->min_ns)
		r->min_ns = ts;
	if (!r->any_ts || ts > r->max_ns)
		r->max_ns = ts;
	r->any_ts = 1;
}

static int push_open(struct rd *r, int track, const struct open_ev *o)
{
	size_t t = (size_t)track;
	if (t >= r->nstk) {
		struct stack *n = tp_grow(r->stk, sizeof *n, t + 1, &r->capstk);
		if (!n)
			return TP_ENOMEM;
		r->stk = n;
		memset(n + r->nstk, 0, (t + 1 - r->nstk) * sizeof *n);
		r->nstk = t + 1;
	}
	struct stack *k = &r->stk[t];
	struct open_ev *v = tp_grow(k->v, sizeof *v, k->n + 1, &k->cap);
	if (!v)
		return TP_ENOMEM;
	k->v = v;
	v[k->n++] = *o;
	return TP_OK;
}

/* Handles one event object at [q, q + n). */
static int name_member(void *ctx, const struct jv *k, const struct jv *v)
{
	if (key_is(k, "name"))
		*(struct jv *)ctx = *v;
	return 0;
}

struct counter_ctx {
	struct rd *r;
	uint32_t pid, name;
	int dev;
};

/* One member of a C event's args: a sample of the series "<name>" or "<name> <key>". */
static int counter_member(void *ctx, const struct jv *k, const struct jv *v)
{
	struct counter_ctx *c = ctx;
	struct rd *r = c->r;
	double x;
	uint32_t kid = 0;
	if (val_real(v, &x) || intern_val(r, k, &kid))
		return 0;
	char sname[256];
	const char *nm = tp_str(r->p, c->name), *ks = tp_str(r->p, kid);
	if (strcmp(nm, ks) == 0 || !ks[0])
		snprintf(sname, sizeof sname, "%s", nm);
	else
		snprintf(sname, sizeof sname, "%s %s", nm, ks);
	uint32_t sid = tp_profile_str(r->p, sname);
	int32_t ci;
	uint64_t key = (uint64_t)c->pid << 32 | sid;
	if (!map_get(&r->counters, key, &ci)) {
		ci = tp_profile_add_counter(r->p, c->dev, -1, sname, "");
		if (ci < 0 || map_put(&r->counters, key, ci))
			return 1;
	}
	return tp_counter_push(r->p, ci, r->cur_ts, x) ? 1 : 0;
}

/* PyTorch's profiler marks each iteration with a "ProfilerStep#N" annotation: those become
 * steps (TP_CAP_TYPE_STEP), so the step reports and `tpuprof diff`'s noise estimate see them. */
static uint32_t op_or_step(const struct rd *r, uint32_t name)
{
	const char *s = tp_str(r->p, name);
	return strncmp(s, "ProfilerStep#", 13) == 0 ? r->ty_step : r->ty_op;
}

/* ---------------------------------------------------------------------------------------- */
/* Launch links by correlation id (Kineto)                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Kineto gives a runtime call that launches device work (cat "cuda_runtime", "cuda_driver",
 * "privateuse1_runtime", ...) and the device activity it launched (cat "kernel",
 * "gpu_memcpy", "gpu_memset", "mtia_ccp_events") the same args.correlation, and usually
 * writes an "ac2g" s/f flow pair with that id as well. Traces without those flow events (older
 * writers, filtered files) still carry the ids: each device activity whose correlation names a
 * runtime call, and whose start no s/f flow already reaches, gets a flow from that call. */
struct corr_pt {
	uint64_t corr;
	int32_t track;
	int64_t ts;
};

static int corr_cmp(const void *x, const void *y)
{
	const struct corr_pt *a = x, *b = y;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->track < b->track ? -1 : a->track > b->track;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/* 1 source (runtime / driver call), 2 target (device activity), 0 neither. */
static int corr_role(const char *cat)
{
	if (ends_with(cat, "_runtime") || ends_with(cat, "_driver"))
		return 1;
	if (strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 ||
	    strcmp(cat, "gpu_memset") == 0 || strcmp(cat, "mtia_ccp_events") == 0)
		return 2;
	return 0;
}

static int arg_id(const struct tp_profile *p, const struct tp_arg *a, uint64_t *out)
{
	if (!a)
		return 0;
	if (a->type == TP_ARG_INT && a->v.i >= 0)
		*out = (uint64_t)a->v.i;
	else if (a->type == TP_ARG_UINT)
		*out = a->v.u;
	else if (a->type == TP_ARG_STR) {
		const char *s = tp_str(p, a->v.s);
		if (tp_parse_u64(s, strlen(s), out) != 0)
			return 0;
	} else
		return 0;
	return 1;
}

static int link_correlations(struct rd *r)
{
	struct tp_profile *p = r->p;
	uint32_t k_corr = tp_profile_find_str(p, "correlation");
	if (!k_corr || !r->k_cat)
		return TP_OK;
	struct corr_pt *src = NULL, *dst = NULL, *have = NULL;
	size_t ns = 0, cs = 0, nd = 0, cd = 0, nh = 0, ch = 0;
	int st = TP_OK;
	/* The cat ids' roles, cached by id (few distinct categories). */
	uint32_t role_id[16] = {0};
	int role_v[16] = {0};
	for (size_t t = 0; t < p->num_tracks && st == TP_OK; t++) {
		const struct tp_track *tr = &p->tracks[t];
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *sl = &tr->slices[k];
			if (!sl->args)
				continue;
			const struct tp_arg *ca = tp_args_find(p, sl->args, r->k_cat);
			if (!ca || ca->type != TP_ARG_STR)
				continue;
			unsigned h = ca->v.s & 15;
			if (role_id[h] != ca->v.s) {
				role_id[h] = ca->v.s;
				role_v[h] = corr_role(tp_str(p, ca->v.s));
			}
			int role = role_v[h];
			uint64_t corr;
			if (!role || !arg_id(p, tp_args_find(p, sl->args, k_corr), &corr))
				continue;
			struct corr_pt pt = {corr, (int32_t)t, sl->start_ns};
			struct corr_pt **v = role == 1 ? &src : &dst;
			size_t *n = role == 1 ? &ns : &nd, *c = role == 1 ? &cs : &cd;
			struct corr_pt *g = tp_grow(*v, sizeof *g, *n + 1, c);
			if (!g) {
				st = TP_ENOMEM;
				break;
			}
			*v = g;
			g[(*n)++] = pt;
		}
	}
	if (st == TP_OK && ns && nd) {
		/* Flow ends already drawn by s/f pairs, as (track, ts) with corr = 0. */
		for (size_t i = 0; i < p->num_flows; i++) {
			struct corr_pt *g = tp_grow(have, sizeof *g, nh + 1, &ch);
			if (!g) {
				st = TP_ENOMEM;
				break;
			}
			have = g;
			have[nh++] = (struct corr_pt){0, p->flows[i].to_track, p->flows[i].to_ns};
		}
		qsort(src, ns, sizeof *src, corr_cmp);
		if (nh)
			qsort(have, nh, sizeof *have, corr_cmp);
		for (size_t i = 0; i < nd && st == TP_OK; i++) {
			struct corr_pt key = {0, dst[i].track, dst[i].ts};
			if (nh && bsearch(&key, have, nh, sizeof *have, corr_cmp))
				continue;
			/* The first runtime call with this correlation. */
			size_t lo = 0, hi = ns;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (src[mid].corr < dst[i].corr)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == ns || src[lo].corr != dst[i].corr || src[lo].ts > dst[i].ts)
				continue;
			struct tp_flow fl = {src[lo].track, dst[i].track, src[lo].ts, dst[i].ts};
			if (tp_profile_add_flow(p, &fl))
				st = TP_ENOMEM;
			else
				r->flows_corr++;
		}
	}
	tp_free(src);
	tp_free(dst);
	tp_free(have);
	return st;
}

/* Handles one event whose members are in `e`, parsed from [q, q + n). */
static int do_event(struct rd *r, const char *q, size_t n, const struct ev *ev)
{
	struct jp j = {q, q + n, NULL, NULL, 0, 0};
	struct ev e = *ev;
	r->events++;
	if (e.ph.kind != 's' || e.ph.n != 1) {
		r->no_ph++;
		return TP_OK;
	}
	char ph = e.ph.p[0];
	uint32_t pid = 0, tid = 0, name = 0, cat = 0;
	if (intern_val(r, &e.pid, &pid) || intern_val(r, &e.tid, &tid) ||
	    intern_val(r, &e.name, &name) || intern_val(r, &e.cat, &cat))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, q),
		                  "bad string escape in trace event");
	if (r->p->oom)
		return TP_ENOMEM;

	if (ph == 'M') {
		r->n_meta++;
		const char *nm = tp_str(r->p, name);
		int is_p = strcmp(nm, "process_name") == 0, is_t = strcmp(nm, "thread_name") == 0;
		if (!is_p && !is_t) {
			r->meta_ignored++;
			return TP_OK;
		}
		/* args.name */
		struct jv an = {0};
		if (e.args.kind == 'o')
			if (parse_members(&j, &e.args, name_member, &an) == -1)
				return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, j.err_at),
				                  "bad JSON in trace event: %s", j.err);
		uint32_t val = 0;
		if (an.kind != 's' || intern_val(r, &an, &val) || !val) {
			r->meta_ignored++;
			return TP_OK;
		}
		if (is_p)
			return map_put(&r->pname, pid, (int32_t)val);
		return map_put(&r->tname, (uint64_t)pid << 32 | tid, (int32_t)val);
	}

	int64_t ts = 0;
	int have_ts = 0;
	if (e.ts.kind == 'n' || e.ts.kind == 's') {
		if (tp_traceread_us_to_ns(e.ts.p, e.ts.n, &ts) == 0)
			have_ts = 1;
		else
			r->bad_ts++;
	}
	switch (ph) {
	case 'X': {
		if (!have_ts) {
			r->no_ts++;
			return TP_OK;
		}
		int64_t dur = 0;
		if (e.dur.kind == 'n' || e.dur.kind == 's') {
			if (tp_traceread_us_to_ns(e.dur.p, e.dur.n, &dur) != 0)
				r->x_no_dur++, dur = 0;
		} else
			r->x_no_dur++;
		if (dur < 0) {
			r->neg_dur++;
			dur = 0;
		}
		int64_t end_ns;
		if (__builtin_add_overflow(ts, dur, &end_ns))
			dur = INT64_MAX - ts; /* ts > 0 here: only a positive sum can overflow */
		int tr = get_track(r, pid, tid);
		uint32_t args;
		if (tr < 0)
			return TP_ENOMEM;
		int st = make_args(r, &j, &e, name, cat, 1, &args);
		if (st == TP_EFORMAT)
			return tp_diag_at(r->d, st, r->path, off_of(r, j.err_at),
			                  "bad JSON in trace event: %s", j.err);
		if (st)
			return st;
		see_ts(r, ts);
		see_ts(r, ts + dur);
		r->n_x++;
		return add_slice(r, tr, ts, ts + dur, name, op_or_step(r, name), args);
	}
	case 'B': {
		if (!have_ts) {
			r->no_ts++;
			return TP_OK;
		}
		int tr = get_track(r, pid, tid);
		if (tr < 0)
			return TP_ENOMEM;
		struct open_ev o = {ts, name, cat, 0, 0, tr, pid};
		int st = make_args(r, &j, &e, name, cat, 1, &o.args);
		if (st == TP_EFORMAT)
			return tp_diag_at(r->d, st, r->path, off_of(r, j.err_at),
			                  "bad JSON in trace event: %s", j.err);
		if (st)
			return st;
		see_ts(r, ts);
		return push_open(r, tr, &o);
	}
	case 'E': {
		if (!have_ts) {
			r->no_ts++;
			return TP_OK;
		}
		int tr = get_track(r, pid, tid);
		if (tr < 0)
			return TP_ENOMEM;
		see_ts(r, ts);
		size_t t = (size_t)tr;
		if (t >= r->nstk || r->stk[t].n == 0) {
			r->unmatched_e++;
			return TP_OK;
		}
		struct open_ev *o = &r->stk[t].v[--r->stk[t].n];
		r->n_be++;
		return add_slice(r, tr, o->ts, ts, o->name, op_or_step(r, o->name), o->args);
	}
	case 'i':
	case 'I':
	case 'n': {
		if (!have_ts) {
			r->no_ts++;
			return TP_OK;
		}
		int tr = ph == 'n' ? get_async_track(r, pid, cat) : get_track(r, pid, tid);
		if (tr < 0)
			return TP_ENOMEM;
		uint32_t args;
		int st = make_args(r, &j, &e, name, cat, 0, &args);
		if (st == TP_EFORMAT)
			return tp_diag_at(r->d, st, r->path, off_of(r, j.err_at),
			                  "bad JSON in trace event: %s", j.err);
		if (st)
			return st;
		see_ts(r, ts);
		r->n_i++;
		return add_slice(r, tr, ts, ts, name, r->ty_instant, args);
	}
	case 'b':
	case 'e': {
		if (!have_ts) {
			r->no_ts++;
			return TP_OK;
		}
		uint32_t id = 0;
		if (intern_val(r, &e.id, &id))
			return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, q),
			                  "bad string escape in event id");
		see_ts(r, ts);
		if (ph == 'b') {
			int tr = get_async_track(r, pid, cat);
			if (tr < 0)
				return TP_ENOMEM;
			struct open_ev o = {ts, name, cat, id, 0, tr, pid};
			int st = make_args(r, &j, &e, name, cat, 0, &o.args);
			if (st == TP_EFORMAT)
				return tp_diag_at(r->d, st, r->path, off_of(r, j.err_at),
				                  "bad JSON in trace event: %s", j.err);
			if (st)
				return st;
			struct open_ev *a =
			    tp_grow(r->async_open, sizeof *a, r->nasync + 1, &r->capasync);
			if (!a)
				return TP_ENOMEM;
			r->async_open = a;
			a[r->nasync++] = o;
			return TP_OK;
		}
		/* e: the latest open b with the same pid, cat and id (and name when given). */
		for (size_t k = r->nasync; k-- > 0;) {
			struct open_ev *o = &r->async_open[k];
			if (o->pid != pid || o->cat != cat || o->id != id ||
			    (name && o->name != name))
				continue;
			struct open_ev x = *o;
			memmove(o, o + 1, (r->nasync - k - 1) * sizeof *o);
			r->nasync--;
			r->n_async++;
			return add_slice(r, x.track, x.ts, ts, x.name, r->ty_async, x.args);
		}
		r->unmatched_async++;
		return TP_OK;
	}
	case 'C': {
		if (!have_ts) {
			r->no_ts++;
			return TP_OK;
		}
		if (e.args.kind != 'o')
			return TP_OK;
		int dev = get_device(r, pid);
		if (dev < 0)
			return TP_ENOMEM;
		see_ts(r, ts);
		r->n_counter++;
		struct counter_ctx cc = {r, pid, name, dev};
		r->cur_ts = ts;
		int cst = parse_members(&j, &e.args, counter_member, &cc);
		if (cst > 0)
			return TP_ENOMEM;
		if (cst == -1)
			return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, j.err_at),
			                  "bad JSON in trace event: %s", j.err);
		return r->p->oom ? TP_ENOMEM : TP_OK;
	}
	case 's':
	case 't':
	case 'f': {
		r->n_flow++;
		if (!have_ts) {
			r->no_ts++;
			return TP_OK;
		}
		uint32_t id = 0;
		if (intern_val(r, &e.id, &id))
			return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, q),
			                  "bad string escape in event id");
		int tr = get_track(r, pid, tid);
		if (tr < 0)
			return TP_ENOMEM;
		see_ts(r, ts);
		struct fpt pt = {(uint64_t)cat << 32 | id, tr, ts};
		/* A step (t) ends one segment and starts the next. */
		if (ph != 's') {
			struct fpt *v = tp_grow(r->fend, sizeof *v, r->nfend + 1, &r->capfend);
			if (!v)
				return TP_ENOMEM;
			r->fend = v;
			v[r->nfend++] = pt;
		}
		if (ph != 'f') {
			struct fpt *v =
			    tp_grow(r->fstart, sizeof *v, r->nfstart + 1, &r->capfstart);
			if (!v)
				return TP_ENOMEM;
			r->fstart = v;
			v[r->nfstart++] = pt;
		}
		return TP_OK;
	}
	default:
		r->unknown_ph++;
		return TP_OK;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Top level                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static int scan_err(struct rd *r, int sc, const char *what)
{
	if (sc == SCAN_NOMEM)
		return tp_diag_at(r->d, TP_ENOMEM, r->path, r->s.base + r->s.pos,
		                  "out of memory (or a single %s larger than 1 GiB)", what);
	return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos, "malformed %s", what);
}

/* Reads the event array whose '[' is at pos. Each event is parsed in one pass straight from
 * the buffer; when the parse runs out of bytes, the buffer is refilled (grown only for an
 * event larger than it) and the event parsed again. */
static int read_events(struct rd *r)
{
	r->s.pos++; /* '[' */
	for (;;) {
		int c = skip_ws(&r->s, 1);
		if (c == -2)
			return scan_err(r, SCAN_NOMEM, "event");
		if (c == -1) {
			r->truncated = 1;
			r->trunc_off = r->s.base + r->s.pos;
			return TP_OK;
		}
		if (c == ']') {
			r->s.pos++;
			return TP_OK;
		}
		if (c != '{')
			return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
			                  "expected a trace event object, found '%c'",
			                  c >= 0x20 && c < 0x7f ? c : '?');
		for (;;) {
			const char *q = (const char *)r->s.buf + r->s.pos;
			struct jp j = {q, (const char *)r->s.buf + r->s.len, NULL, NULL, 0, 1};
			struct ev e;
			memset(&e, 0, sizeof e);
			if (parse_object(&j, ev_member, &e) == 0) {
				size_t n = (size_t)(j.p - q);
				int st = do_event(r, q, n, &e);
				if (st)
					return st;
				r->s.pos += n;
				break;
			}
			if (!j.short_)
				return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, j.err_at),
				                  "bad JSON in trace event: %s", j.err);
			long m = more(&r->s);
			if (m < 0)
				return scan_err(r, SCAN_NOMEM, "event");
			if (m == 0) {
				r->truncated = 1;
				r->trunc_off = r->s.base + r->s.pos;
				return TP_OK;
			}
		}
	}
}

static int read_top(struct rd *r)
{
	/* UTF-8 byte order mark. */
	if (peek(&r->s, 0) == 0xEF && peek(&r->s, 1) == 0xBB && peek(&r->s, 2) == 0xBF)
		r->s.pos += 3;
	int c = skip_ws(&r->s, 0);
	if (c == -2)
		return scan_err(r, SCAN_NOMEM, "value");
	if (c == '[')
		return read_events(r);
	if (c != '{')
		return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
		                  "not a Chrome trace: expected '[' or '{'");
	r->s.pos++;
	int found = 0;
	for (;;) {
		c = skip_ws(&r->s, 1);
		if (c == -2)
			return scan_err(r, SCAN_NOMEM, "value");
		if (c == -1) {
			if (found) {
				/* Cut after the events: nothing lost. */
				return TP_OK;
			}
			break;
		}
		if (c == '}')
			break;
		if (c != '"')
			return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
			                  "expected a member name in the trace object");
		size_t n;
		int sc = scan_value(&r->s, &n);
		if (sc == SCAN_EOF)
			break;
		if (sc)
			return scan_err(r, sc, "member name");
		int is_events = n == 13 && memcmp(r->s.buf + r->s.pos, "\"traceEvents\"", 13) == 0;
		r->s.pos += n;
		c = skip_ws(&r->s, 0);
		if (c != ':') {
			if (c == -1)
				break;
			return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
			                  "expected ':' after a member name");
		}
		r->s.pos++;
		c = skip_ws(&r->s, 0);
		if (c == -1)
			break;
		if (is_events && !found) {
			if (c != '[')
				return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
				                  "\"traceEvents\" is not an array");
			found = 1;
			int st = read_events(r);
			if (st || r->truncated)
				return st;
			continue;
		}
		sc = scan_value(&r->s, &n);
		if (sc == SCAN_EOF)
			break;
		if (sc)
			return scan_err(r, sc, "value");
		r->s.pos += n;
	}
	if (!found)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
		                  "not a Chrome trace: the object has no \"traceEvents\" array");
	return TP_OK;
}

/* Closes what is still open, names devices/tracks, re-bases time and writes the notes. */
/* Orders flow starts by (key, ts, file order): the starts of one id in time order. */
static int fpt_cmp(const void *x, const void *y)
{
	const struct fpt *a = *(const struct fpt *const *)x, *b = *(const struct fpt *const *)y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Pairs every flow end with its start (see finish) and adds the flows, re-based by base.
 * TP_OK or TP_ENOMEM. */
static int pair_flows(struct rd *r, int64_t base)
{
	struct tp_profile *p = r->p;
	const struct fpt **st = tp_malloc((r->nfstart + 1) * sizeof *st);
	if (!st)
		return TP_ENOMEM;
	for (size_t i = 0; i < r->nfstart; i++)
		st[i] = &r->fstart[i];
	qsort(st, r->nfstart, sizeof *st, fpt_cmp);
	for (size_t i = 0; i < r->nfend; i++) {
		const struct fpt *e = &r->fend[i];
		/* The last start with e's key and a ts not after e's: an upper bound. */
		size_t lo = 0, hi = r->nfstart;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (st[mid]->key < e->key ||
			    (st[mid]->key == e->key && st[mid]->ts <= e->ts))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || st[lo - 1]->key != e->key) {
			r->flows_unmatched++;
			continue;
		}
		struct tp_flow fl = {st[lo - 1]->track, e->track, st[lo - 1]->ts - base,
		                     e->ts - base};
		if (tp_profile_add_flow(p, &fl)) {
			tp_free(st);
			return TP_ENOMEM;
		}
		r->flows_matched++;
	}
	tp_free(st);
	return TP_OK;
}

static int finish(struct rd *r)
{
	struct tp_profile *p = r->p;
	for (size_t t = 0; t < r->nstk; t++)
		for (size_t k = r->stk[t].n; k-- > 0;) {
			struct open_ev *o = &r->stk[t].v[k];
			r->unclosed_b++;
			if (add_slice(r, o->track, o->ts, r->max_ns, o->name, r->ty_op, o->args))
				return TP_ENOMEM;
		}
	for (size_t k = 0; k < r->nasync; k++) {
		struct open_ev *o = &r->async_open[k];
		r->unclosed_async++;
		if (add_slice(r, o->track, o->ts, r->max_ns, o->name, r->ty_async, o->args))
			return TP_ENOMEM;
	}
	if (tp_profile_slice_count(p) == 0 && p->num_counters == 0 && r->truncated)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, r->trunc_off,
		                  "trace truncated before its first complete event");
	if (tp_profile_slice_count(p) == 0 && p->num_counters == 0)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
		                  "no trace events (%llu read, none with a usable phase and time)",
		                  (unsigned long long)r->events);
	/* Names from M events. */
	for (size_t i = 0; i < r->devices.cap; i++) {
		int32_t nm;
		if (r->devices.vals[i] >= 0 && map_get(&r->pname, r->devices.keys[i], &nm))
			p->devices[r->devices.vals[i]].name = (uint32_t)nm;
	}
	for (size_t i = 0; i < r->tracks.cap; i++) {
		int32_t nm;
		if (r->tracks.vals[i] >= 0 && map_get(&r->tname, r->tracks.keys[i], &nm))
			p->tracks[r->tracks.vals[i]].name = (uint32_t)nm;
	}
	/* Re-base: the earliest event at 0. The whole span must fit in int64 ns. */
	int64_t base = r->min_ns, span;
	if (__builtin_sub_overflow(r->max_ns, r->min_ns, &span))
		return tp_diag_at(r->d, TP_ERANGE, r->path, r->s.base + r->s.pos,
		                  "timestamps span more than 2^63 ns (%lld .. %lld ns)",
		                  (long long)r->min_ns, (long long)r->max_ns);
	for (size_t t = 0; t < p->num_tracks; t++)
		for (size_t k = 0; k < p->tracks[t].count; k++) {
			p->tracks[t].slices[k].start_ns -= base; /* the end moves with the start */
		}
	for (size_t c = 0; c < p->num_counters; c++)
		for (size_t k = 0; k < p->counters[c].count; k++)
			p->counters[c].samples[k].ts_ns -= base;
	/* Flows: each end (f, t) pairs with the latest start (s, t) of the same cat and id that
	 * is not later than it (the later one in the file on a tie); in file order a start may
	 * come after its end, and an id may be used again once its flow has ended. */
	if (pair_flows(r, base))
		return TP_ENOMEM;
	if (link_correlations(r))
		return TP_ENOMEM;
	char num[32];
	snprintf(num, sizeof num, "%lld", (long long)base);
	tp_profile_set_meta(p, TP_TRACEREAD_META_BASE_NS, num);
	snprintf(num, sizeof num, "%llu", (unsigned long long)r->events);
	tp_profile_set_meta(p, "chrome_trace.events", num);

	p->stats.files_read = 1;
	p->stats.records_read = r->events;
	p->stats.records_dropped =
	    r->no_ph + r->no_ts + r->unknown_ph + r->unmatched_e + r->unmatched_async;
	if (r->truncated)
		tp_profile_note(p,
		                "trace truncated at byte %llu (the writing tool was probably "
		                "killed): events up to there were read",
		                (unsigned long long)r->trunc_off);
	if (r->unmatched_e)
		tp_profile_note(p, "%llu 'E' events without a matching 'B' ignored",
		                (unsigned long long)r->unmatched_e);
	if (r->unclosed_b)
		tp_profile_note(p, "%llu 'B' events never closed: ended at the last timestamp",
		                (unsigned long long)r->unclosed_b);
	if (r->unmatched_async)
		tp_profile_note(p, "%llu async 'e' events without a matching 'b' ignored",
		                (unsigned long long)r->unmatched_async);
	if (r->unclosed_async)
		tp_profile_note(p,
		                "%llu async 'b' events never closed: ended at the last timestamp",
		                (unsigned long long)r->unclosed_async);
	if (r->x_no_dur)
		tp_profile_note(p, "%llu 'X' events without a usable dur read as 0 long",
		                (unsigned long long)r->x_no_dur);
	if (r->neg_dur)
		tp_profile_note(p, "%llu events with a negative dur read as 0 long",
		                (unsigned long long)r->neg_dur);
	if (r->no_ph || r->no_ts || r->bad_ts)
		tp_profile_note(p,
		                "%llu events without a phase and %llu without a usable ts skipped",
		                (unsigned long long)r->no_ph, (unsigned long long)r->no_ts);
	if (r->unknown_ph)
		tp_profile_note(p, "%llu events of unsupported phases skipped",
		                (unsigned long long)r->unknown_ph);
	if (r->n_flow)
		tp_profile_note(p,
		                "%llu flow events (s/t/f) read: %llu flows paired by id, %llu ends "
		                "without a start",
		                (unsigned long long)r->n_flow, (unsigned long long)r->flows_matched,
		                (unsigned long long)r->flows_unmatched);
	if (r->flows_corr)
		tp_profile_note(p,
		                "%llu launch flows from args.correlation (runtime call -> device "
		                "activity without an s/f flow)",
		                (unsigned long long)r->flows_corr);
	if (r->utf8_fixed)
		tp_profile_note(p, "%llu invalid UTF-8 sequences replaced by U+FFFD",
		                (unsigned long long)r->utf8_fixed);
	if (r->args_dropped)
		tp_profile_note(p, "%llu event args past %d per event dropped",
		                (unsigned long long)r->args_dropped, MAX_ARGS);
	return p->oom ? TP_ENOMEM : TP_OK;
}

static int run(struct rd *r, struct tp_profile **out)
{
	int st = TP_OK;
	*out = NULL;
	r->p = tp_profile_new();
	if (!r->p)
		return tp_diag_set(r->d, TP_ENOMEM, "out of memory");
	r->p->arch = TP_ARCH_CPU;
	r->p->source = tp_profile_str(r->p, "chrome-trace");
	r->ty_op = tp_profile_str(r->p, TP_CAP_TYPE_OP);
	r->k_cat = tp_profile_str(r->p, "cat");
	r->k_optype = tp_profile_str(r->p, TP_CAP_KEY_OP_TYPE);
	r->ty_instant = tp_profile_str(r->p, "instant");
	r->ty_step = tp_profile_str(r->p, TP_CAP_TYPE_STEP);
	r->ty_async = tp_profile_str(r->p, "async");
	tp_buf_init(&r->tmp);
	st = read_top(r);
	if (!st && r->s.ioerr)
		st = tp_diag_at(r->d, TP_EIO, r->path, r->s.base + r->s.len, "read error");
	if (!st)
		st = finish(r);
	if (!st)
		st = tp_profile_finish(r->p);
	if (st == TP_ENOMEM && r->d && !r->d->msg[0])
		tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	tp_buf_free(&r->tmp);
	map_free(&r->tracks);
	map_free(&r->devices);
	map_free(&r->async_tracks);
	map_free(&r->counters);
	map_free(&r->pname);
	map_free(&r->tname);
	for (size_t t = 0; t < r->nstk; t++)
		tp_free(r->stk[t].v);
	tp_free(r->stk);
	tp_free(r->async_open);
	tp_free(r->fstart);
	tp_free(r->fend);
	if (st) {
		tp_profile_free(r->p);
		return st;
	}
	*out = r->p;
	return TP_OK;
}

int tp_traceread_parse(const uint8_t *data, size_t size, const char *display,
                       struct tp_profile **out, struct tp_diag *d)
{
	struct rd r;
	memset(&r, 0, sizeof r);
	r.path = display;
	r.d = d;
	r.s.buf = data;
	r.s.len = size;
	r.s.eof = 1;
	return run(&r, out);
}

int tp_traceread_read(const char *path, struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return tp_diag_set(d, errno == ENOENT ? TP_ENOTFOUND : TP_EIO, "%s: %s", path,
		                   strerror(errno));
	struct rd r;
	memset(&r, 0, sizeof r);
	r.path = path;
	r.d = d;
	r.s.fp = fp;
	r.s.cap = CHUNK;
	r.s.own = tp_malloc(CHUNK);
	if (!r.s.own) {
		fclose(fp);
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	}
	r.s.buf = r.s.own;
	int st = run(&r, out);
	tp_free(r.s.own);
	fclose(fp);
	return st;
}

static int probe_text(char *buf, size_t n);

int tp_traceread_probe(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return 0;
	enum { PROBE = 65536 };
	char *buf = tp_malloc(PROBE);
	if (!buf) {
		fclose(fp);
		return 0;
	}
	size_t n = fread(buf, 1, PROBE - 1, fp);
	fclose(fp);
	int yes = probe_text(buf, n);
	tp_free(buf);
	return yes;
}

static int probe_text(char *buf, size_t n)
{
	buf[n] = 0;
	size_t i = 0;
	if (n >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB &&
	    (unsigned char)buf[2] == 0xBF)
		i = 3;
	while (i < n && is_ws((unsigned char)buf[i]))
		i++;
	if (i >= n)
		return 0;
	if (buf[i] == '[')
		return 1;
	if (buf[i] != '{')
		return 0;
	for (size_t k = i; k + 13 <= n; k++)
		if (buf[k] == '"' && memcmp(buf + k, "\"traceEvents\"", 13) == 0)
			return 1;
	return 0;
}
