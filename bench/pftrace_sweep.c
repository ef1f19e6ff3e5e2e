/*
 * pftrace_sweep.c — BENCHMARK TOOL: the compression level / chunk size sweep behind the
 * Perfetto writer's defaults (the chunk size and compression level in src/writers/perfetto/).
 *
 * Reads an uncompressed Perfetto trace (trace_bench's perfetto-plain output, plain.pftrace),
 * cuts its packet stream into chunks of at most CHUNK bytes at packet boundaries, as the
 * writer does, and compresses every chunk on its own (zlib format) at each LEVEL, one thread.
 * Prints per (codec, level, chunk): compressed bytes per slice (with the outer packet header of
 * each chunk, as in the file), compression CPU time (the best of REPEAT runs: the machine is
 * shared), MB/s of raw input, ns per slice, and "unstable": how many times a timed run gave a
 * chunk another compressed size than the first run did (0 for a deterministic codec).
 * Codecs: libdeflate (the writer's, levels 1-12) and, when the build found Debian's
 * libisal-dev, Intel's ISA-L igzip (levels 0-3), the fastest deflate encoder Debian ships, as
 * the "faster codec" baseline: trace_processor reads only zlib-format `compressed_packets`,
 * so any codec must still write deflate. igzip is not the writer's codec: it takes about half
 * libdeflate level 1's CPU but misses 16 B/slice on the compact trace, and on this project's
 * 2-vCPU VMs (Debian's 2.30) its output for the same chunk sometimes differs between
 * compressor instances, threads and runs (in a few runs in a hundred; always valid deflate;
 * the cause was not found), which would break the writer's promise of the same bytes for
 * every --jobs (docs/trace-outputs.md). Every
 * chunk a codec writes is inflated again by libdeflate and compared, untimed, before the
 * timed runs: a row is only printed for a codec whose output round-trips.
 * Usage: pftrace_sweep PLAIN.pftrace SLICES|count [LEVELS [CHUNKS_KIB [REPEAT]]]
 *   SLICES: the divisor, or `count` = the SLICE_BEGIN events of the file;
 *   LEVELS: comma list, N = libdeflate level N, iN = igzip level N (default 1,2,3,i1,i3);
 *   CHUNKS_KIB: comma list (default 64,128,256,512,1024).
 */
#include <libdeflate.h>
#ifdef TP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif
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

/* One compressor of the sweep: libdeflate at a level, or igzip at a level. */
struct codec {
	const char *name;
	int level;
	struct libdeflate_compressor *z;
	struct libdeflate_decompressor *check; /* the round-trip check */
	int isal;
#ifdef TP_HAVE_ISAL
	struct isal_zstream *s; /* ~100 KiB: on the heap */
	uint8_t *lvl_buf;       /* the level's work memory */
	uint32_t lvl_size;
#endif
};

/* Opens the codec a LEVELS entry names ("3" or "i3"); 0 = ok, else prints why not. */
static int codec_open(struct codec *c, const char *spec)
{
	memset(c, 0, sizeof *c);
	c->isal = spec[0] == 'i';
	c->level = atoi(spec + c->isal);
	c->name = c->isal ? "igzip" : "libdeflate";
	if (!c->isal) {
		if (!(c->check = libdeflate_alloc_decompressor()) ||
		    !(c->z = libdeflate_alloc_compressor(c->level))) {
			fprintf(stderr, "libdeflate level %d: no compressor\n", c->level);
			return 1;
		}
		return 0;
	}
#ifdef TP_HAVE_ISAL
	static const uint32_t sizes[ISAL_DEF_MAX_LEVEL + 1] = {
	    ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
	    ISAL_DEF_LVL3_DEFAULT};
	if (c->level < 0 || c->level > ISAL_DEF_MAX_LEVEL) {
		fprintf(stderr, "igzip level %d: levels are 0-%d\n", c->level, ISAL_DEF_MAX_LEVEL);
		return 1;
	}
	c->lvl_size = sizes[c->level];
	if (!(c->check = libdeflate_alloc_decompressor()) || !(c->s = calloc(1, sizeof *c->s)) ||
	    (c->lvl_size && !(c->lvl_buf = malloc(c->lvl_size)))) {
		fprintf(stderr, "igzip level %d: out of memory\n", c->level);
		return 1;
	}
	return 0;
#else
	printf("igzip level %d: SKIPPED: built without ISA-L (Debian package libisal-dev)\n",
	       c->level);
	return 1;
#endif
}

/* Compresses [in, in+n) into out (cap bytes) as one zlib stream; its size, 0 on failure. */
static size_t codec_run(struct codec *c, const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	if (!c->isal)
		return libdeflate_zlib_compress(c->z, in, n, out, cap);
#ifdef TP_HAVE_ISAL
	struct isal_zstream *s = c->s;
	isal_deflate_stateless_init(s);
	s->level = (uint32_t)c->level;
	s->level_buf = c->lvl_buf;
	s->level_buf_size = c->lvl_size;
	s->gzip_flag = IGZIP_ZLIB;
	s->next_in = (uint8_t *)(uintptr_t)in;
	s->avail_in = (uint32_t)n;
	s->next_out = out;
	s->avail_out = (uint32_t)cap;
	s->end_of_stream = 1;
	s->flush = NO_FLUSH;
	return isal_deflate_stateless(s) == COMP_OK && !s->avail_in ? s->total_out : 0;
#else
	(void)in, (void)n, (void)out, (void)cap;
	return 0;
#endif
}

static void codec_close(struct codec *c)
{
	if (c->z)
		libdeflate_free_compressor(c->z);
	if (c->check)
		libdeflate_free_decompressor(c->check);
#ifdef TP_HAVE_ISAL
	free(c->s);
	free(c->lvl_buf);
#endif
}

/* One codec at one chunk size over the whole trace: the buffers and the per-chunk sizes of
 * the check pass. */
struct sweep {
	const uint8_t *data;
	size_t sz, cap, most, bound;
	uint8_t *out, *back;
	size_t *sizes, nchunks, unstable;
};

/* One pass of cd over the trace in chunks of whole packets up to w->cap (a bigger packet goes
 * alone); *total gets the trace's compressed size. The check pass (check != 0) round-trips
 * every chunk and records its size; a timed pass counts the chunks whose size differs. Returns
 * 0, or 2 after a message. */
static int sweep_pass(struct sweep *w, struct codec *cd, int check, unsigned long long *total)
{
	size_t pos = 0, ci = 0;
	*total = 0;
	while (pos < w->sz) {
		size_t end = pos, n;
		while (end < w->sz && (n = record_len(w->data + end, w->sz - end)) &&
		       (end == pos || end + n - pos <= w->cap))
			end += n;
		if (end == pos) {
			fprintf(stderr, "malformed record at 0x%zx\n", pos);
			return 2;
		}
		size_t zn = codec_run(cd, w->data + pos, end - pos, w->out, w->bound);
		if (!zn) {
			fprintf(stderr, "%s: compression failed\n", cd->name);
			return 2;
		}
		if (check) {
			size_t got = 0;
			if (libdeflate_zlib_decompress(cd->check, w->out, zn, w->back, w->most,
			                               &got) != LIBDEFLATE_SUCCESS ||
			    got != end - pos || memcmp(w->back, w->data + pos, got)) {
				fprintf(stderr, "%s: chunk at 0x%zx does not round-trip\n",
				        cd->name, pos);
				return 2;
			}
		}
		if (ci < w->nchunks) {
			if (check)
				w->sizes[ci] = zn;
			else
				w->unstable += w->sizes[ci] != zn;
			ci++;
		}
		/* 0A len 92 03 zlen: the chunk's packet around it. */
		size_t inner = 2 + varint_size(zn) + zn;
		*total += 1 + varint_size(inner) + inner;
		pos = end;
	}
	return 0;
}

/* Codec `ls` at chunks of `kib` KiB: the untimed check pass, then `repeat` timed passes, each
 * on a fresh compressor (its own memory: the igzip differences showed between instances); one
 * line of results. Returns 0, or 2 after a message. */
static int sweep_chunk(struct codec *cd, const char *ls, const uint8_t *data, size_t sz,
                       size_t biggest, size_t kib, int repeat, double slices)
{
	struct sweep w = {.data = data, .sz = sz, .cap = kib * 1024};
	w.most = w.cap > biggest ? w.cap : biggest;
	/* Stored blocks at worst (5 bytes per 64 KiB) plus either codec's headers. */
	w.bound = w.most + w.most / 8 + 4096;
	w.out = malloc(w.bound);
	w.back = malloc(w.most + 1);
	/* Each chunk's compressed size in the check pass: a timed pass that gets another size for
	 * the same chunk counts it as unstable (a codec whose bytes are not a function of its
	 * input). */
	w.nchunks = sz / (w.cap > 1 ? w.cap / 2 : 1) + 2;
	w.sizes = calloc(w.nchunks, sizeof *w.sizes);
	if (!w.out || !w.back || !w.sizes) {
		fprintf(stderr, "out of memory\n");
		return 2;
	}
	double best = 1e30;
	unsigned long long total = 0;
	/* r = -1: the untimed round-trip check of every chunk. */
	for (int r = -1; r < repeat; r++) {
		codec_close(cd);
		if (codec_open(cd, ls) != 0)
			return 2;
		double t0 = cpu_now();
		int st = sweep_pass(&w, cd, r < 0, &total);
		if (st)
			return st;
		double t = cpu_now() - t0;
		if (r >= 0 && t < best)
			best = t;
	}
	free(w.out);
	free(w.back);
	free(w.sizes);
	printf("%-10s %5d %9zu %10.2f %11.3f %9.0f %10.1f %8zu\n", cd->name, cd->level, kib,
	       (double)total / slices, best, (double)sz / best / 1e6, best * 1e9 / slices,
	       w.unstable);
	fflush(stdout);
	return 0;
}

/* The number of slices in the plain trace (its SLICE_BEGIN events), or -1 after a message. */
static double count_slices(const uint8_t *data, size_t sz)
{
	double slices = 0;
	for (size_t pos = 0, n; pos < sz; pos += n) {
		if (!(n = record_len(data + pos, sz - pos))) {
			fprintf(stderr, "malformed record at 0x%zx\n", pos);
			return -1;
		}
		const uint8_t *b = data + pos + 1;
		uint64_t len = rd_varint(&b, data + pos + n);
		slices += is_begin(b, b + len);
	}
	return slices;
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
	if (!strcmp(argv[2], "count") && (slices = count_slices(data, (size_t)sz)) < 0)
		return 2;
	if (slices <= 0) {
		fprintf(stderr, "no slices\n");
		return 2;
	}
	/* The biggest packet: a chunk holds at least one whole packet, so buffers fit it. */
	size_t biggest = 0;
	for (size_t pos = 0, n; pos < (size_t)sz; pos += n) {
		if (!(n = record_len(data + pos, (size_t)sz - pos))) {
			fprintf(stderr, "malformed record at 0x%zx\n", pos);
			return 2;
		}
		if (n > biggest)
			biggest = n;
	}
	const char *levels = argc > 3 ? argv[3] : "1,2,3,i1,i3";
	const char *chunks = argc > 4 ? argv[4] : "64,128,256,512,1024";
	int repeat = argc > 5 ? atoi(argv[5]) : 3;
	printf("raw %ld bytes, %.0f slices, %.2f raw B/slice\n", sz, slices, (double)sz / slices);
	printf("%-10s %5s %9s %10s %11s %9s %10s %8s\n", "codec", "level", "chunk KiB", "B/slice",
	       "cpu s", "MB/s", "ns/slice", "unstable");
	char lv_list[256];
	snprintf(lv_list, sizeof lv_list, "%s", levels);
	for (char *ls = strtok(lv_list, ","); ls; ls = strtok(NULL, ",")) {
		struct codec cd;
		if (codec_open(&cd, ls) != 0)
			continue;
		const char *c = chunks;
		while (*c) {
			size_t kib = (size_t)strtoul(c, (char **)&c, 10);
			if (*c == ',')
				c++;
			int st =
			    sweep_chunk(&cd, ls, data, (size_t)sz, biggest, kib, repeat, slices);
			if (st)
				return st;
		}
		codec_close(&cd);
	}
	free(data);
	return 0;
}
