/*
 * fuzz_traceread_gz.c — libFuzzer target for the Chrome-trace reader's gzip input
 * (src/readers/traceread/source.c). The input is taken as trace text and gzip'd here, so the
 * fuzzer reaches the JSON behind a valid gzip stream: tp_traceread_parse of the gzip must give
 * what it gives for the text (the same status; on success the same slice and track counts),
 * the stream cut short at an input-chosen length must be an error with a message, and the
 * stream with one input-chosen byte changed must give a status (a message with any error).
 * Raw inputs that start with the gzip magic themselves are covered by fuzz_traceread.
 */
#include "fuzz_check.h"
#include "readers/traceread/traceread.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data as one gzip member (malloc'd, *n bytes), or NULL. */
static uint8_t *gzip_of(const uint8_t *data, size_t size, size_t *n)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	size_t cap = deflateBound(&z, (uLong)size);
	uint8_t *b = malloc(cap);
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = (uInt)size;
	z.next_out = b;
	z.avail_out = (uInt)cap;
	if (!b || deflate(&z, Z_FINISH) != Z_STREAM_END) {
		free(b);
		b = NULL;
	}
	*n = cap - z.avail_out;
	deflateEnd(&z);
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;
	uint8_t *g = gzip_of(data, size, &n);
	if (!g)
		return 0;
	struct tp_profile *p = NULL, *q = NULL;
	struct tp_diag d = {0}, e = {0};
	int rc = tp_traceread_parse(data, size, "fuzz.json", &p, &d);
	int rz = tp_traceread_parse(g, n, "fuzz.json.gz", &q, &e);
	/* Text that itself starts with the gzip magic reads differently plain. */
	int magic = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
	if (!magic && rc != rz)
		abort();
	if (!magic && rc == TP_OK &&
	    (tp_profile_slice_count(p) != tp_profile_slice_count(q) ||
	     p->num_tracks != q->num_tracks))
		abort();
	fuzz_check_read(rc, p, &d, 0);
	fuzz_check_read(rz, q, &e, 0);

	/* Cut and changed at places the input's first bytes choose. */
	size_t at = size >= 4 ? ((size_t)data[0] << 8 | data[1]) % n : n / 2;
	if (at >= 2) {
		uint8_t *cut = malloc(at); /* its own heap block: ASan sees a read past the cut */
		memcpy(cut, g, at);
		memset(&e, 0, sizeof e);
		q = NULL;
		rz = tp_traceread_parse(cut, at, "cut.json.gz", &q, &e);
		if (rz == TP_OK)
			abort(); /* a gzip stream without its end is never a trace */
		fuzz_check_read(rz, q, &e, 0);
		free(cut);
	}
	if (size >= 4) {
		size_t flip = ((size_t)data[2] << 8 | data[3]) % n;
		g[flip] ^= (uint8_t)(data[size - 1] | 1);
		memset(&e, 0, sizeof e);
		q = NULL;
		rz = tp_traceread_parse(g, n, "flip.json.gz", &q, &e);
		fuzz_check_read(rz, q, &e, 0);
	}
	free(g);
	return 0;
}
