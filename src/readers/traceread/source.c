/*
 * source.c — the Chrome-trace reader's byte source: a window of the input (a FILE read in
 * 1 MiB chunks, or a memory block) that the top-level walk and the event parser read from,
 * refilled and grown (only for a single value larger than it) as they need. Owns nothing: the
 * window's buffer belongs to the caller of trace_src_more (tp_traceread_read).
 */
#include "readers/traceread/traceread_int.h"

/* Makes more bytes available after buf[len) keeping buf[pos..len) (indices relative to pos
 * stay valid). Returns the number of new bytes, 0 at end of input, -1 out of memory / too big. */
long trace_src_more(struct trace_src *s)
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

/* The byte at pos + i, refilling as needed; -1 at end of input, -2 on out of memory. */
int trace_src_peek(struct trace_src *s, size_t i)
{
	while (s->pos + i >= s->len) {
		long m = trace_src_more(s);
		if (m == 0)
			return -1;
		if (m < 0)
			return -2;
	}
	return s->buf[s->pos + i];
}

/* Skips whitespace (and commas too when `commas`). Returns the next byte or -1 / -2. */
int trace_src_skip_ws(struct trace_src *s, int commas)
{
	for (;;) {
		int c = trace_src_peek(s, 0);
		if (c < 0)
			return c;
		if (is_ws(c) || (commas && c == ','))
			s->pos++;
		else
			return c;
	}
}

/* Finds the extent of the value at pos: sets *n so it spans [pos, pos + n). Objects and arrays
 * by bracket counting (contents are checked later by the event parser), strings to the closing
 * quote, scalars to the next delimiter. */
int trace_src_scan_value(struct trace_src *s, size_t *n)
{
	size_t i = 0;
	int depth = 0, in_str = 0, esc = 0;
	int c = trace_src_peek(s, 0);
	if (c < 0)
		return c == -1 ? SCAN_EOF : SCAN_NOMEM;
	if (c != '{' && c != '[' && c != '"') {
		for (;;) {
			c = trace_src_peek(s, i);
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
			long m = trace_src_more(s);
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
