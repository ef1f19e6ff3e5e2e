/*
 * text.c — the text-safety layer every writer goes through: a strict UTF-8 decoder (RFC 3629 /
 * Unicode 15 §3.9 Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF, lead
 * bytes C0, C1 and F5..FF never valid) and one cleaner that makes any byte string safe for a
 * destination: invalid sequences become U+FFFD (one per maximal subpart, as Unicode §3.9
 * "U+FFFD Substitution of Maximal Subparts" recommends and Python's decode('utf-8', 'replace')
 * does), control characters are replaced for terminals and one-line cells, the XML 1.0
 * non-characters U+FFFE/U+FFFF are dropped for xlsx, and lengths are cut on character
 * boundaries. Owns no state.
 */
#include "common/common.h"

#include <string.h>

size_t tp_utf8_decode(const unsigned char *s, size_t n, int32_t *cp)
{
	unsigned char c = s[0];
	*cp = -1;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	/* Table 3-7: the lead byte fixes the length and the range of the second byte, 80..BF but
	 * for the four lead bytes of `narrow`. C0, C1, F5..FF and a lone continuation byte start
	 * nothing. */
	static const struct {
		unsigned char lead, lo, hi;
	} narrow[] = {
	    {0xE0, 0xA0, 0xBF}, /* overlong below U+0800 */
	    {0xED, 0x80, 0x9F}, /* surrogates U+D800..U+DFFF */
	    {0xF0, 0x90, 0xBF}, /* overlong below U+10000 */
	    {0xF4, 0x80, 0x8F}, /* above U+10FFFF */
	};
	if (c < 0xC2 || c > 0xF4)
		return 1;
	size_t len = c <= 0xDF ? 2 : c <= 0xEF ? 3 : 4;
	int32_t v = c & (0x7F >> len);
	unsigned char lo = 0x80, hi = 0xBF;
	for (size_t k = 0; k < sizeof narrow / sizeof narrow[0]; k++) {
		if (narrow[k].lead == c) {
			lo = narrow[k].lo;
			hi = narrow[k].hi;
		}
	}
	size_t i = 1;
	for (; i < len; i++) {
		if (i >= n)
			return i; /* cut short: the maximal subpart is what we saw */
		unsigned char b = s[i];
		if (b < lo || b > hi)
			return i;
		lo = 0x80;
		hi = 0xBF;
		v = (v << 6) | (b & 0x3F);
	}
	*cp = v;
	return len;
}

/* 1 when code point `cp` must be replaced or dropped under `flags`; *drop says drop. */
static int needs_fix(int32_t cp, unsigned flags, int *drop)
{
	*drop = 0;
	if (cp < 0)
		return 1;
	if (flags & TP_TEXT_CTRL) {
		int line = cp == '\t' || cp == '\n' || (cp == '\r' && !(flags & TP_TEXT_NOCR));
		if ((cp < 0x20 && (!line || (flags & TP_TEXT_LINE))) || (cp >= 0x7F && cp <= 0x9F))
			return 1;
	}
	if (flags & TP_TEXT_XML) {
		if (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r')
			return 1;
		if (cp == 0xFFFE || cp == 0xFFFF) {
			*drop = 1;
			return 1;
		}
	}
	return 0;
}

/* 1 if all 8 bytes of w are printable ASCII (0x20..0x7E): no high bit, none below 0x20 (the
 * subtraction borrows into bit 7 only where a byte is below 0x20, or from a lower such byte),
 * none equal to 0x7F. */
static inline int word_printable(uint64_t w)
{
	const uint64_t ones = UINT64_C(0x0101010101010101), high = UINT64_C(0x8080808080808080);
	uint64_t lt20 = (w - 0x20 * ones) & ~w & high;
	uint64_t x7f = w ^ (0x7F * ones);
	uint64_t eq7f = (x7f - ones) & ~x7f & high;
	return ((w & high) | lt20 | eq7f) == 0;
}

int tp_text_is_safe(const char *s, size_t n, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		/* Runs of printable ASCII (names, keys) a word at a time; any other byte takes the
		 * decoder below, so the result is the byte-wise one. */
		uint64_t w;
		if (n - i >= 8 && (memcpy(&w, p + i, 8), word_printable(w))) {
			i += 8;
			continue;
		}
		if (p[i] >= 0x20 && p[i] < 0x7F) {
			i++;
			continue;
		}
		int32_t cp;
		int drop;
		size_t k = tp_utf8_decode(p + i, n - i, &cp);
		if (needs_fix(cp, flags, &drop))
			return 0;
		i += k;
	}
	return 1;
}

size_t tp_text_put(struct tp_buf *b, const char *s, size_t n, unsigned flags, size_t max_bytes,
                   size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, out = 0, chars = 0;
	if (!max_bytes)
		max_bytes = SIZE_MAX;
	if (!max_chars)
		max_chars = SIZE_MAX;
	while (i < n && chars < max_chars) {
		/* Runs of printable ASCII go in one piece. */
		size_t j = i;
		while (j < n && p[j] >= 0x20 && p[j] < 0x7F && j - i < max_bytes - out &&
		       chars + (j - i) < max_chars)
			j++;
		if (j > i) {
			tp_buf_put(b, p + i, j - i);
			out += j - i;
			chars += j - i;
			i = j;
			continue;
		}
		if (out >= max_bytes)
			break;
		int32_t cp;
		int drop;
		size_t k = tp_utf8_decode(p + i, n - i, &cp);
		const void *piece = p + i;
		size_t plen = k;
		if (needs_fix(cp, flags, &drop)) {
			if (drop) {
				i += k;
				continue;
			}
			piece = TP_UTF8_REPLACEMENT;
			plen = 3;
		}
		if (plen > max_bytes - out)
			break; /* never cut a character in half */
		tp_buf_put(b, piece, plen);
		out += plen;
		chars++;
		i += k;
	}
	return chars;
}

char *tp_text_copy(char *dst, size_t cap, const char *s, unsigned flags)
{
	if (!cap)
		return dst;
	struct tp_buf b;
	tp_buf_init(&b);
	tp_text_put(&b, s ? s : "", s ? strlen(s) : 0, flags, cap - 1, 0);
	size_t n = b.oom || !b.data ? 0 : b.len;
	if (n)
		memcpy(dst, b.data, n);
	dst[n] = 0;
	tp_buf_free(&b);
	return dst;
}

void tp_text_fputs(FILE *f, const char *s, unsigned flags)
{
	size_t n = strlen(s);
	if (tp_text_is_safe(s, n, flags)) {
		fputs(s, f);
		return;
	}
	struct tp_buf b;
	tp_buf_init(&b);
	tp_text_put(&b, s, n, flags, 0, 0);
	if (b.data && !b.oom)
		fputs(b.data, f);
	tp_buf_free(&b);
}

const char *tp_html_ref(char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	default:
		return NULL;
	}
}

int tp_buf_clean(struct tp_buf *b, size_t from, unsigned flags)
{
	if (b->oom || !b->data || from >= b->len ||
	    tp_text_is_safe(b->data + from, b->len - from, flags))
		return 0;
	struct tp_buf t;
	tp_buf_init(&t);
	tp_text_put(&t, b->data + from, b->len - from, flags, 0, 0);
	if (t.oom) {
		tp_buf_free(&t);
		b->oom = 1;
		return 0;
	}
	b->len = from;
	tp_buf_put(b, t.data, t.len);
	tp_buf_free(&t);
	return 1;
}
