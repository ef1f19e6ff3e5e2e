/*
 * pftrace_sweep.c — BENCHMARK TOOL: the compression level / chunk size sweep behind the
 * Perfetto writer's defaults (src/perfetto/perfetto.c CHUNK_BYTES and level 1; issue 10).
 *
 * Reads an uncompressed Perfetto trace (trace_bench's perfetto-plain output, plain.pftrace),
 * cuts its packet stream into chunks of at most CHUNK bytes at packet boundaries, as the
 * writer does, and compresses every chunk on its own with libdeflate (zlib format) at each
 * LEVEL, one thread. Prints per (level, chunk): compressed bytes per slice (with the outer
 * packet header of each chunk, as in the file), compression CPU time (the best of REPEAT
 * runs: the machine is shared), MB/s of raw input and ns per slice.
 * Usage: pftrace_sweep PLAIN.pftrace SLICES|count [LEVELS [CHUNKS_KIB [REPEAT]]]
 *   SLICES: the divisor, or `count` = the SLICE_BEGIN events of the file;
 *   LEVELS, CHUNKS_KIB: comma lists (default 1,2,3,4,6 and 64,128,256,512,1024).
 */
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Length of the Trace.packet record at p (key 0x0A, varint length, body), 0 if malformed. */
static size_t record_len(const uint8_t *p, size_t left)
{
	if (left < 2 || p[0] != 0x0a)
		return 0;
	uint64_t n = 0;
	size_t i = 1;
	for (unsigned shift = 0; i < left && shift < 64; shift += 7) {
		uint8_t c = p[i++];
		n |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return n <= left - i ? i + (size_t)n : 0;
	}
	return 0;
}

static uint64_t rd_varint(const uint8_t **p, const uint8_t *e)
{
	uint64_t v = 0;
	for (unsigned shift = 0; *p < e && shift < 64; shift += 7) {
		uint8_t c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* Skips one field of wire type wt at *p; 0 = ok. */
static int skip(const uint8_t **p, const uint8_t *e, unsigned wt)
{
	switch (wt) {
	case 0:
		rd_varint(p, e);
		return 0;
	case 1:
		*p += 8;
		return *p > e;
	case 2: {
		uint64_t n = rd_varint(p, e);
		if (n > (uint64_t)(e - *p))
			return 1;
		*p += n;
		return 0;
	}
	case 5:
		*p += 4;
		return *p > e;
	default:
		return 1;
	}
}

/* 1 if the packet body [p, e) holds a track_event of type SLICE_BEGIN. */
static int is_begin(const uint8_t *p, const uint8_t *e)
{
	while (p < e) {
		uint64_t key = rd_varint(&p, e);
		if (key == (11u << 3 | 2)) {
			uint64_t n = rd_varint(&p, e);
			const uint8_t *q = p, *qe = p + n;
			while (q < qe) {
				uint64_t k = rd_varint(&q, qe);
				if (k == (9u << 3))
					return rd_varint(&q, qe) == 1;
				if (skip(&q, qe, (unsigned)(k & 7)))
					return 0;
			}
			return 0;
		}
		if (skip(&p, e, (unsigned)(key & 7)))
			return 0;
	}
	return 0;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PLAIN.pftrace SLICES [LEVELS [CHUNKS_KIB [REPEAT]]]\n",
		        argv[0]);
		return 1;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *data = malloc((size_t)sz + 1);
	if (!data || fread(data, 1, (size_t)sz, f) != (size_t)sz) {
		fprintf(stderr, "%s: read failed\n", argv[1]);
		return 2;
	}
	fclose(f);
	double slices = atof(argv[2]);
	if (!strcmp(argv[2], "count")) {
		slices = 0;
		for (size_t pos = 0, n; pos < (size_t)sz; pos += n) {
			if (!(n = record_len(data + pos, (size_t)sz - pos))) {
				fprintf(stderr, "malformed record at 0x%zx\n", pos);
				return 2;
			}
			const uint8_t *b = data + pos + 1;
			uint64_t len = rd_varint(&b, data + pos + n);
			slices += is_begin(b, b + len);
		}
	}
	if (slices <= 0) {
		fprintf(stderr, "no slices\n");
		return 2;
	}
	const char *levels = argc > 3 ? argv[3] : "1,2,3,4,6";
	const char *chunks = argc > 4 ? argv[4] : "64,128,256,512,1024";
	int repeat = argc > 5 ? atoi(argv[5]) : 3;
	printf("raw %ld bytes, %.0f slices, %.2f raw B/slice\n", sz, slices, (double)sz / slices);
	printf("%5s %9s %10s %11s %9s %10s\n", "level", "chunk KiB", "B/slice", "cpu s", "MB/s",
	       "ns/slice");
	char lv_list[256];
	snprintf(lv_list, sizeof lv_list, "%s", levels);
	for (char *ls = strtok(lv_list, ","); ls; ls = strtok(NULL, ",")) {
		int level = atoi(ls);
		struct libdeflate_compressor *z = libdeflate_alloc_compressor(level);
		if (!z) {
			fprintf(stderr, "level %d: no compressor\n", level);
			continue;
		}
		const char *c = chunks;
		while (*c) {
			size_t kib = (size_t)strtoul(c, (char **)&c, 10);
			if (*c == ',')
				c++;
			size_t cap = kib * 1024, bound = libdeflate_zlib_compress_bound(z, cap) + 64;
			uint8_t *out = malloc(bound);
			double best = 1e30;
			unsigned long long total = 0;
			for (int r = 0; r < repeat; r++) {
				total = 0;
				double t0 = cpu_now();
				size_t pos = 0;
				while (pos < (size_t)sz) {
					/* Whole packets up to cap (a bigger packet goes alone). */
					size_t end = pos, n;
					while (end < (size_t)sz &&
					       (n = record_len(data + end, (size_t)sz - end)) &&
					       (end == pos || end + n - pos <= cap))
						end += n;
					if (end == pos) {
						fprintf(stderr, "malformed record at 0x%zx\n", pos);
						return 2;
					}
					size_t zn = libdeflate_zlib_compress(z, data + pos, end - pos,
					                                     out, bound);
					/* 0A len 92 03 zlen: the chunk's packet around it. */
					size_t inner = 2 + varint_size(zn) + zn;
					total += 1 + varint_size(inner) + inner;
					pos = end;
				}
				double t = cpu_now() - t0;
				if (t < best)
					best = t;
			}
			free(out);
			printf("%5d %9zu %10.2f %11.3f %9.0f %10.1f\n", level, kib,
			       (double)total / slices, best, (double)sz / best / 1e6,
			       best * 1e9 / slices);
			fflush(stdout);
		}
		libdeflate_free_compressor(z);
	}
	free(data);
	return 0;
}
