/*
 * source.c — the Chrome-trace reader's byte source: a window of the input (a FILE read in
 * 1 MiB chunks, or a memory block) that the top-level walk and the event parser read from,
 * refilled and grown (only for a single value larger than it) as they need. Input that starts
 * with the gzip magic (1f 8b) is inflated as it is read (zlib, one or more gzip members), into
 * the same window: the file is never inflated whole. Owns the window's buffer and the
 * inflater, released by trace_src_free.
 *
 * Decompression bombs: the JSON inflated so far may be at most GZ_SLACK + GZ_RATIO times the
 * compressed bytes consumed so far; past that the read stops with an error at the compressed
 * offset, so a small file can never make the reader work through gigabytes. The ratio is far
 * above what trace JSON reaches (Kineto and ONNX Runtime traces compress 15-18 fold at gzip -9,
 * MXNet's 42 fold) and far below what a bomb needs (DEFLATE reaches 1 032 fold).
 */
#include "readers/traceread/traceread_int.h"

#include <stdarg.h>
#include <zlib.h>

#define GZ_SLACK (64ull << 20) /* inflated bytes allowed before the ratio applies */
#define GZ_RATIO 256           /* inflated / compressed bytes, at most */

struct trace_gz {
	z_stream z;
	FILE *fp;           /* compressed input, or NULL: memory input */
	uint8_t *in;        /* the file's read buffer (CHUNK bytes) */
	const uint8_t *mem; /* memory input: what is left of it after next_in */
	size_t mem_left;
	uint64_t in_read; /* compressed bytes handed to zlib so far */
	uint64_t out;     /* bytes inflated so far */
	int in_eof;       /* no compressed input beyond next_in[0, avail_in) */
	int member_end;   /* the last member ended: more input must start another */
	int after_member; /* inflating what follows the end of a member */
};

/* zlib allocates through tp_malloc, so the out-of-memory tests reach it too. */
static voidpf gz_alloc(voidpf opaque, uInt items, uInt size)
{
	(void)opaque;
	return tp_malloc((size_t)items * size);
}

static void gz_free(voidpf opaque, voidpf p)
{
	(void)opaque;
	tp_free(p);
}

/* Sets the source's error (reported by the reader at the compressed offset `off`) and
 * returns 0: the window then sees the end of the input. */
static size_t gz_fail(struct trace_src *s, int status, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t gz_fail(struct trace_src *s, int status, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->zmsg, sizeof s->zmsg, fmt, ap);
	va_end(ap);
	s->zerr = status;
	s->zoff = off;
	return 0;
}

/* Compressed bytes zlib has consumed: the offset of the next one in the input. */
static uint64_t gz_consumed(const struct trace_gz *g)
{
	return g->in_read - g->z.avail_in;
}

/* More compressed input when zlib has used all it was given. */
static void gz_refill(struct trace_src *s, struct trace_gz *g)
{
	if (g->z.avail_in || g->in_eof)
		return;
	size_t got = 0;
	if (g->fp) {
		got = fread(g->in, 1, CHUNK, g->fp);
		g->z.next_in = g->in;
		s->ioerr = got == 0 && ferror(g->fp) != 0;
	} else {
		got = g->mem_left < UINT32_MAX ? g->mem_left : UINT32_MAX;
		g->z.next_in = (Bytef *)(uintptr_t)g->mem;
		g->mem += got;
		g->mem_left -= got;
	}
	g->in_eof = got == 0;
	g->z.avail_in = (uInt)got;
	g->in_read += got;
}

/* Inflates up to `want` bytes (at most CHUNK, so the bomb check below runs often) into dst.
 * Returns the bytes made; 0 at the end of the last member, on a read error (s->ioerr), or on
 * an error of the data (s->zerr set: corrupt or cut short, a bomb, out of memory). */
static size_t gz_read(struct trace_src *s, uint8_t *dst, size_t want)
{
	struct trace_gz *g = s->gz;
	if (want > CHUNK)
		want = CHUNK;
	g->z.next_out = dst;
	g->z.avail_out = (uInt)want;
	while (g->z.avail_out == want) {
		gz_refill(s, g);
		if (s->ioerr)
			return 0;
		if (g->member_end) {
			if (!g->z.avail_in && g->in_eof)
				return 0;    /* all members read */
			inflateReset(&g->z); /* another member follows, or trailing bytes */
			g->member_end = 0;
			g->after_member = 1;
		}
		if (!g->z.avail_in && g->in_eof)
			return gz_fail(
			    s, TP_EFORMAT, gz_consumed(g),
			    "gzip data cut short: the stream ends without its end marker "
			    "(the file is truncated)");
		int zr = inflate(&g->z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			g->member_end = 1;
		else if (zr == Z_MEM_ERROR)
			return gz_fail(s, TP_ENOMEM, gz_consumed(g),
			               "out of memory inflating gzip data");
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			return gz_fail(s, TP_EFORMAT, gz_consumed(g), "%s: %s",
			               g->after_member
			                   ? "bytes after the end of the gzip data are not "
			                     "another gzip member"
			                   : "gzip data corrupt",
			               g->z.msg ? g->z.msg : "inflate failed");
	}
	size_t got = want - g->z.avail_out;
	g->out += got;
	if (g->out > GZ_SLACK + (uint64_t)GZ_RATIO * gz_consumed(g))
		return gz_fail(s, TP_EFORMAT, gz_consumed(g),
		               "gzip data inflates to %llu bytes from %llu: more than %d times its "
		               "size, refusing a decompression bomb",
		               (unsigned long long)g->out, (unsigned long long)gz_consumed(g),
		               GZ_RATIO);
	return got;
}

/* Starts inflating: `first` (n bytes) opens the gzip stream; with fp, it is the first chunk
 * read from fp (copied), else the whole memory input. TP_OK or TP_ENOMEM. */
static int gz_start(struct trace_src *s, FILE *fp, const uint8_t *first, size_t n)
{
	struct trace_gz *g = tp_calloc(1, sizeof *g);
	uint8_t *in = fp ? tp_malloc(CHUNK) : NULL;
	if (!g || (fp && !in))
		goto fail;
	g->z.zalloc = gz_alloc;
	g->z.zfree = gz_free;
	if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK)
		goto fail;
	g->fp = fp;
	g->in = in;
	if (fp) {
		memcpy(in, first, n);
		g->z.next_in = in;
		g->z.avail_in = (uInt)n;
		g->in_read = n;
	} else {
		g->mem = first;
		g->mem_left = n;
	}
	s->gz = g;
	return TP_OK;
fail:
	tp_free(in);
	tp_free(g);
	return TP_ENOMEM;
}

static int is_gzip(const uint8_t *p, size_t n)
{
	return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

int trace_src_init_mem(struct trace_src *s, const uint8_t *data, size_t size)
{
	memset(s, 0, sizeof *s);
	if (!is_gzip(data, size)) {
		s->buf = data;
		s->len = size;
		s->eof = 1;
		return TP_OK;
	}
	s->cap = CHUNK;
	s->own = tp_malloc(CHUNK);
	if (!s->own)
		return TP_ENOMEM;
	s->buf = s->own;
	return gz_start(s, NULL, data, size);
}

int trace_src_init_file(struct trace_src *s, FILE *fp)
{
	memset(s, 0, sizeof *s);
	s->fp = fp;
	s->cap = CHUNK;
	s->own = tp_malloc(CHUNK);
	if (!s->own)
		return TP_ENOMEM;
	s->buf = s->own;
	/* The first chunk says whether the input is gzip; plain input keeps it as its first
	 * window, gzip input hands it to the inflater. */
	size_t got = fread(s->own, 1, CHUNK, fp);
	if (got == 0) {
		s->eof = 1;
		s->ioerr = ferror(fp) != 0;
		return TP_OK;
	}
	if (!is_gzip(s->own, got)) {
		s->len = got;
		return TP_OK;
	}
	return gz_start(s, fp, s->own, got);
}

void trace_src_free(struct trace_src *s)
{
	if (s->gz) {
		inflateEnd(&s->gz->z);
		tp_free(s->gz->in);
		tp_free(s->gz);
	}
	tp_free(s->own);
	s->gz = NULL;
	s->own = NULL;
}

void trace_src_drain(struct trace_src *s)
{
	uint8_t scratch[16384];
	if (!s->gz || s->eof)
		return;
	while (gz_read(s, scratch, sizeof scratch) > 0)
		;
}

/* Makes more bytes available after buf[len) keeping buf[pos..len) (indices relative to pos
 * stay valid). Returns the number of new bytes, 0 at end of input, -1 out of memory / too big. */
long trace_src_more(struct trace_src *s)
{
	if ((!s->fp && !s->gz) || s->eof)
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
	size_t got =
	    s->gz ? gz_read(s, s->own + s->len, want) : fread(s->own + s->len, 1, want, s->fp);
	if (got == 0) {
		s->eof = 1;
		if (!s->gz)
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
