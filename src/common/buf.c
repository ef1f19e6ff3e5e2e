/*
 * buf.c — a growable byte buffer and the locale-independent formatting helpers every text
 * writer shares: JSON string escaping (safe inside an HTML <script>), fixed-point doubles
 * without exponents, and nanoseconds printed as exact microseconds.
 */
#include "common/common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void tp_buf_init(struct tp_buf *b)
{
	memset(b, 0, sizeof *b);
}

void tp_buf_free(struct tp_buf *b)
{
	tp_free(b->data);
	memset(b, 0, sizeof *b);
}

static int reserve(struct tp_buf *b, size_t n)
{
	/* Fast path: writers append millions of short pieces into a buffer that rarely grows. */
	if (!b->oom && b->cap > b->len && n < b->cap - b->len)
		return 0;
	if (b->oom)
		return -1;
	if (n > SIZE_MAX - b->len - 1) {
		b->oom = 1;
		return -1;
	}
	char *p = tp_grow(b->data, 1, b->len + n + 1, &b->cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->data = p;
	return 0;
}

void tp_buf_put(struct tp_buf *b, const void *p, size_t n)
{
	if (reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void tp_buf_puts(struct tp_buf *b, const char *s)
{
	tp_buf_put(b, s, strlen(s));
}

void tp_buf_putc(struct tp_buf *b, char c)
{
	if (reserve(b, 1))
		return;
	b->data[b->len++] = c;
	b->data[b->len] = 0;
}

void tp_buf_printf(struct tp_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char tmp[256];
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		tp_buf_put(b, tmp, (size_t)n);
		return;
	}
	if (reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Bit c set for the bytes that JSON (or an HTML <script> around it) needs escaped or checked:
 * control characters, '"', '\\', DEL, '<' (escaped only before '/' or '!') and every byte >=
 * 0x80 (decoded: invalid UTF-8 becomes \ufffd, U+2028/U+2029 are escaped for old JavaScript).
 * NUL ends the string. */
static const uint64_t json_special_bits[4] = {
    UINT64_C(0xFFFFFFFF) | UINT64_C(1) << '"' | UINT64_C(1) << '<', /* 0x00-0x3f */
    UINT64_C(1) << ('\\' - 64) | UINT64_C(1) << (0x7F - 64),        /* 0x40-0x7f */
    UINT64_MAX,                                                     /* 0x80-0xbf */
    UINT64_MAX,                                                     /* 0xc0-0xff */
};

static inline int json_special(unsigned char c)
{
	return (int)(json_special_bits[c >> 6] >> (c & 63)) & 1;
}

/* The letter after the backslash of the characters JSON escapes with two bytes; the other
 * special bytes below 0x80 take \u00XX. */
static const char short_escape[128] = {
    ['"'] = '"', ['\\'] = '\\', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};

void tp_buf_json_str(struct tp_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0;
	for (size_t i = 0;; i++) {
		unsigned char c = p[i];
		if (!json_special(c) || (c == '<' && p[i + 1] != '/' && p[i + 1] != '!')) {
			run++;
			continue;
		}
		if (c >= 0x80) {
			/* The sequence ends at the NUL at the latest: the decoder stops at any byte
			 * that is not a continuation byte, and NUL is not one. */
			int32_t cp;
			size_t k = tp_utf8_decode(p + i, 4, &cp);
			if (cp >= 0 && cp != 0x2028 && cp != 0x2029) {
				run += k;
				i += k - 1;
				continue;
			}
			tp_buf_put(b, p + i - run, run);
			run = 0;
			tp_buf_puts(b, cp < 0 ? "\\ufffd" : cp == 0x2028 ? "\\u2028" : "\\u2029");
			i += k - 1;
			continue;
		}
		tp_buf_put(b, p + i - run, run);
		run = 0;
		if (c == 0)
			break;
		if (short_escape[c]) {
			char e[2] = {'\\', short_escape[c]};
			tp_buf_put(b, e, 2);
		} else {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			tp_buf_put(b, u, 6);
		}
	}
}

int tp_f64_to_i64(double v, int64_t *out)
{
	/* -2^63 is exact as a double; 2^63 is the first double above INT64_MAX. NaN fails both. */
	if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
		return -1;
	*out = (int64_t)v;
	return 0;
}

int64_t tp_f64_to_i64_clamp(double v, int64_t lo, int64_t hi)
{
	if (!(v >= (double)lo)) /* also NaN */
		return lo;
	if (v >= (double)hi)
		return hi;
	int64_t r;
	if (tp_f64_to_i64(v, &r) != 0)
		return hi;
	return r < lo ? lo : r > hi ? hi : r;
}

const char tp_digits2[201] = "00010203040506070809101112131415161718192021222324252627282930"
                             "31323334353637383940414243444546474849505152535455565758596061"
                             "62636465666768697071727374757677787980818283848586878889909192"
                             "93949596979899";

void tp_buf_u64(struct tp_buf *b, uint64_t v)
{
	char tmp[TP_FMT_INT_MAX];
	tp_buf_put(b, tmp, tp_fmt_u64(tmp, v));
}

void tp_buf_i64(struct tp_buf *b, int64_t v)
{
	char tmp[TP_FMT_INT_MAX];
	tp_buf_put(b, tmp, tp_fmt_i64(tmp, v));
}

void tp_buf_fixed(struct tp_buf *b, double v, int decimals)
{
	if (!isfinite(v)) {
		tp_buf_puts(b, "0");
		return;
	}
	char tmp[512];
	int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
	if (n < 0 || (size_t)n >= sizeof tmp) {
		tp_buf_puts(b, "0");
		return;
	}
	/* "-0.000" -> "0.000": a negative zero is noise, not information. */
	if (tmp[0] == '-') {
		int allzero = 1;
		for (int i = 1; i < n; i++)
			if (tmp[i] != '0' && tmp[i] != '.')
				allzero = 0;
		if (allzero) {
			tp_buf_put(b, tmp + 1, (size_t)n - 1);
			return;
		}
	}
	/* snprintf honours LC_NUMERIC; the project never calls setlocale, but be explicit. */
	for (int i = 0; i < n; i++)
		if (tmp[i] == ',')
			tmp[i] = '.';
	tp_buf_put(b, tmp, (size_t)n);
}

void tp_buf_ns_as_us(struct tp_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	if (ns < 0)
		tp_buf_putc(b, '-');
	tp_buf_u64(b, a / 1000);
	unsigned f = (unsigned)(a % 1000);
	char frac[4] = {'.', (char)('0' + f / 100), (char)('0' + f / 10 % 10),
	                (char)('0' + f % 10)};
	tp_buf_put(b, frac, 4);
}

void tp_buf_utf8(struct tp_buf *b, uint32_t cp)
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

int tp_parse_hex4(const char *p, uint32_t *v)
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

int tp_parse_u64(const char *s, size_t n, uint64_t *out)
{
	if (n == 0)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned dgt = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - dgt) / 10)
			return -1;
		v = v * 10 + dgt;
	}
	*out = v;
	return 0;
}

int tp_parse_i64(const char *s, size_t n, int64_t *out)
{
	int neg = n > 0 && s[0] == '-';
	uint64_t u;
	if (n > 0 && (s[0] == '-' || s[0] == '+')) {
		s++;
		n--;
	}
	if (tp_parse_u64(s, n, &u))
		return -1;
	return tp_i64_from_magnitude(neg, u, out);
}

int tp_i64_from_magnitude(int neg, uint64_t u, int64_t *out)
{
	if (u > (uint64_t)INT64_MAX + (neg ? 1 : 0))
		return -1;
	*out = !neg ? (int64_t)u : u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
	return 0;
}
