/*
 * fuzz_capfile_live.c — libFuzzer target for the converter's recovery of a dead process's
 * capture (src/readers/capfile: tp_capfile_rebuild_parse, the path tp_capfile_read takes when a
 * dump directory still holds session.tpc and per-thread thread-K.tpc files). The input is split
 * into those files (parts: u16 little-endian length L, then L bytes, cut to what is left; a
 * missing part is empty):
 *   byte 0            bits 0-2: number of thread files (% 5); bit 3: sizes are raw (no padding)
 *   session.tpc       one part, zero-padded to TP_CAPFMT_SES_SIZE unless raw
 *   each thread-K.tpc two parts: its header, zero-padded to TP_CAPFMT_CHUNK_HEADER unless
 *                     raw, then what follows the header (records, strings)
 * (the padding keeps inputs far below the smoke run's 16 KiB limit: the fixed-size headers
 * are mostly zeros).
 * The rebuild must return a status (never crash, leak or read out of bounds): on success a
 * profile whose slices are well-formed, on failure a message and no profile.
 *
 * Seeds: with TP_FUZZ_SEED_DIR set (scripts/fuzz.sh sets it to the corpus directory),
 * LLVMFuzzerInitialize writes live captures built here from the format constants
 * (src/capture/capfmt.h, docs/capture-format.md): one thread with steps, an operator with a
 * tensor and its cost, a mark, a range and an async range; and two threads where an async
 * range ends on the other thread and an operator is left open (cut short). Each seed is
 * checked to convert before fuzzing starts (a third seed holds the first one's files at
 * their real sizes, unpadded), so a format change cannot leave the target
 * fuzzing only the rejection paths.
 */
#include "capture/capfmt.h"
#include "fuzz_check.h"
#include "readers/capfile/capfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_THREADS 4

static size_t take(const uint8_t *data, size_t size, size_t *pos, const uint8_t **part)
{
	size_t len = 0;
	if (*pos + 2 <= size) {
		len = (size_t)data[*pos] | (size_t)data[*pos + 1] << 8;
		*pos += 2;
	} else {
		*pos = size;
	}
	if (len > size - *pos)
		len = size - *pos;
	*part = data + *pos;
	*pos += len;
	return len;
}

/* The files of one input, each in its own allocation of exactly its size (so reading past a
 * file's end is caught). */
struct files {
	uint8_t *ses;
	size_t ses_size, n;
	uint8_t *t[MAX_THREADS];
	struct tp_capfile_live th[MAX_THREADS];
};

static void split(const uint8_t *data, size_t size, struct files *f)
{
	static const char *const names[MAX_THREADS] = {"thread-0.tpc", "thread-1.tpc",
	                                               "thread-2.tpc", "thread-3.tpc"};
	memset(f, 0, sizeof *f);
	int raw = size && (data[0] & 8);
	f->n = size ? (data[0] & 7u) % (MAX_THREADS + 1) : 0;
	size_t pos = 1;
	const uint8_t *part;
	size_t len = take(data, size, &pos, &part);
	f->ses_size = !raw && len < TP_CAPFMT_SES_SIZE ? TP_CAPFMT_SES_SIZE : len;
	f->ses = calloc(f->ses_size ? f->ses_size : 1, 1);
	if (f->ses == NULL)
		abort();
	if (len)
		memcpy(f->ses, part, len);
	for (size_t k = 0; k < f->n; k++) {
		const uint8_t *body;
		size_t hl = take(data, size, &pos, &part), hsize = hl;
		size_t bl = take(data, size, &pos, &body);
		if (!raw && hsize < TP_CAPFMT_CHUNK_HEADER)
			hsize = TP_CAPFMT_CHUNK_HEADER;
		f->t[k] = calloc(hsize + bl ? hsize + bl : 1, 1);
		if (f->t[k] == NULL)
			abort();
		if (hl)
			memcpy(f->t[k], part, hl);
		if (bl)
			memcpy(f->t[k] + hsize, body, bl);
		f->th[k].path = names[k];
		f->th[k].data = f->t[k];
		f->th[k].size = hsize + bl;
	}
}

static void files_free(struct files *f)
{
	for (size_t k = 0; k < f->n; k++)
		free(f->t[k]);
	free(f->ses);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct files f;
	split(data, size, &f);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_capfile_rebuild_parse(f.ses, f.ses_size, "session.tpc", f.th, f.n, &p, &d);
	fuzz_check_read(rc, p, &d, 0);
	files_free(&f);
	return 0;
}

/* ---- seeds ---------------------------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* session.tpc: the dump header (monotonic clock: ticks are ns), one metadata entry. */
static void make_session(uint8_t *m)
{
	memset(m, 0, TP_CAPFMT_SES_SIZE);
	memcpy(m, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE);
	put32(m + TP_CAPFMT_OFF_VERSION, TP_CAPFMT_VERSION);
	put32(m + TP_CAPFMT_OFF_HEADER_SIZE, TP_CAPFMT_HEADER_SIZE);
	put32(m + TP_CAPFMT_OFF_ENDIAN, TP_CAPFMT_ENDIAN_MARK);
	put32(m + TP_CAPFMT_OFF_RECORD_SIZE, TP_CAPFMT_RECORD_SIZE);
	put32(m + TP_CAPFMT_OFF_PID, 4242);
	put32(m + TP_CAPFMT_OFF_MODE, 2);
	put32(m + TP_CAPFMT_OFF_CLOCK, TP_CAPFMT_CLOCK_MONOTONIC);
	put32(m + TP_CAPFMT_OFF_MAX_RECORDS, 64);
	put64(m + TP_CAPFMT_OFF_TICK1, 1000000000u);
	put64(m + TP_CAPFMT_OFF_NS1, 1000000000u);
	memcpy(m + TP_CAPFMT_OFF_COMM, "fuzzhost", 8);
	put32(m + TP_CAPFMT_SES_OFF_META, 1);
	memcpy(m + TP_CAPFMT_SES_OFF_META + 8, "batch_size", 10);
	memcpy(m + TP_CAPFMT_SES_OFF_META + 8 + TP_CAPFMT_META_KEY, "8", 1);
}

struct rec {
	uint64_t ts;
	uint8_t kind, flags;
	uint16_t aux;
	uint32_t name;
	uint64_t a, b;
};

/* thread-K.tpc holding `nr` records and the NUL-terminated strings `strs` (ids 1..ns),
 * sized to exactly what it holds (capacity = published count). Returns its size. */
static size_t make_thread(uint8_t *f, int64_t tid, const char *tname, const struct rec *r,
                          size_t nr, const char *const *strs, size_t ns)
{
	size_t str_off = TP_CAPFMT_CHUNK_HEADER + nr * TP_CAPFMT_RECORD_SIZE, sb = 0;
	memset(f, 0, TP_CAPFMT_CHUNK_HEADER);
	memcpy(f, TP_CAPFMT_CHUNK_MAGIC, 8);
	put32(f + TP_CAPFMT_CK_OFF_VERSION, 1);
	put32(f + TP_CAPFMT_CK_OFF_VERSION + 4, TP_CAPFMT_CHUNK_HEADER);
	put64(f + TP_CAPFMT_CK_OFF_REC_CAP, nr);
	put64(f + TP_CAPFMT_CK_OFF_STR_OFF, str_off);
	put64(f + TP_CAPFMT_CK_OFF_TID, (uint64_t)tid);
	memcpy(f + TP_CAPFMT_CK_OFF_NAME, tname, strlen(tname));
	put64(f + TP_CAPFMT_CK_OFF_PUB, nr);
	for (size_t i = 0; i < nr; i++) {
		uint8_t *q = f + TP_CAPFMT_CHUNK_HEADER + i * TP_CAPFMT_RECORD_SIZE;
		put64(q, r[i].ts);
		q[8] = r[i].kind;
		q[9] = r[i].flags;
		q[10] = (uint8_t)r[i].aux;
		q[11] = (uint8_t)(r[i].aux >> 8);
		put32(q + 12, r[i].name);
		put64(q + 16, r[i].a);
		put64(q + 24, r[i].b);
	}
	for (size_t i = 0; i < ns; i++) {
		size_t l = strlen(strs[i]) + 1;
		memcpy(f + str_off + sb, strs[i], l);
		sb += l;
	}
	put64(f + TP_CAPFMT_CK_OFF_STR_CAP, sb);
	put64(f + TP_CAPFMT_CK_OFF_STR_PUB, (uint64_t)ns << 32 | sb);
	return str_off + sb;
}

static size_t put_part(uint8_t *out, const uint8_t *p, size_t n)
{
	out[0] = (uint8_t)n;
	out[1] = (uint8_t)(n >> 8);
	memcpy(out + 2, p, n);
	return n + 2;
}

/* The used prefix of a zero-padded region (what a seed needs to carry of it). */
static size_t used(const uint8_t *p, size_t n)
{
	while (n && p[n - 1] == 0)
		n--;
	return n;
}

/* A thread file as its two parts: the used part of its header, then the rest. */
static size_t put_thread(uint8_t *out, const uint8_t *t, size_t n)
{
	size_t k = put_part(out, t, used(t, TP_CAPFMT_CHUNK_HEADER));
	return k + put_part(out + k, t + TP_CAPFMT_CHUNK_HEADER, n - TP_CAPFMT_CHUNK_HEADER);
}

static void write_seed(const char *dir, const char *name, const uint8_t *buf, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "fuzz_capfile_live: cannot write seed %s\n", path);
		abort();
	}
}

/* The seed must convert, and recover what it holds: `want` thread tracks at least. */
static void check_seed(const uint8_t *buf, size_t n, size_t want_tracks)
{
	struct files f;
	split(buf, n, &f);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	if (tp_capfile_rebuild_parse(f.ses, f.ses_size, "seed", f.th, f.n, &p, &d) != TP_OK ||
	    p->num_tracks < want_tracks) {
		fprintf(stderr, "fuzz_capfile_live: a seed does not convert: %s\n", d.msg);
		abort();
	}
	tp_profile_free(p);
	files_free(&f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_seed_dir(argc, argv);
	if (!dir)
		return 0;
	enum { F = TP_CAPFMT_F_STEP };
	static const char *const s1[] = {"bert", "enc.qkv", "MatMul", "x", "fp32",
	                                 "tick", "load",    "req",    "io"};
	/* ids: 1 bert, 2 enc.qkv, 3 MatMul, 4 x, 5 fp32, 6 tick, 7 load, 8 req, 9 io */
	const struct rec r1[] = {
	    {1000, TP_CAPFMT_REC_STEP_BEGIN, 0, 0, 1, 0, 0},
	    {1100, TP_CAPFMT_REC_OP_BEGIN, F, 0, 2, 0, 3},
	    {1900, TP_CAPFMT_REC_OP_END, 0, 0, 2, 0, 0},
	    {0, TP_CAPFMT_REC_TENSOR, 0, TP_CAPFMT_ROLE_INPUT << 8, 4, 5, 2},
	    {0, TP_CAPFMT_REC_DIMS, 0, 2, 0, 8, 768},
	    {0, TP_CAPFMT_REC_COST, 0, 0, 0, 4096, 8192},
	    {2000, TP_CAPFMT_REC_MARK, F, 0, 6, 0, 9},
	    {2100, TP_CAPFMT_REC_RANGE_BEGIN, F, 0, 7, 0, 9 | (uint64_t)0x01ff0000u << 32},
	    {2200, TP_CAPFMT_REC_ASYNC_BEGIN, 0, 0, 8, 42, 0},
	    {2500, TP_CAPFMT_REC_RANGE_END, 0, 0, 7, 0, 0},
	    {2600, TP_CAPFMT_REC_ASYNC_END, 0, 0, 8, 42, 0},
	    {3000, TP_CAPFMT_REC_STEP_END, 0, 0, 1, 0, 0},
	};
	static const char *const s2[] = {"req", "enc.open", "Add"};
	const struct rec r2[] = {
	    {2300, TP_CAPFMT_REC_ASYNC_BEGIN, 0, 0, 1, 7, 0},
	    {2400, TP_CAPFMT_REC_ASYNC_END, 0, 0, 1, 42, 0}, /* 42 began on the other thread */
	    {2450, TP_CAPFMT_REC_OP_BEGIN, 0, 0, 2, (uint64_t)-1, 3}, /* never ended: cut */
	};
	static uint8_t ses[TP_CAPFMT_SES_SIZE], t1[8192], t2[8192];
	static uint8_t seed[3 * 8192 + TP_CAPFMT_SES_SIZE];
	make_session(ses);
	size_t n1 =
	    make_thread(t1, 4242, "main", r1, sizeof r1 / sizeof *r1, s1, sizeof s1 / sizeof *s1);
	size_t n2 =
	    make_thread(t2, 4243, "worker", r2, sizeof r2 / sizeof *r2, s2, sizeof s2 / sizeof *s2);
	size_t n = 0, su = used(ses, sizeof ses);
	seed[n++] = 1;
	n += put_part(seed + n, ses, su);
	n += put_thread(seed + n, t1, n1);
	check_seed(seed, n, 1);
	write_seed(dir, "gen_live_one_thread", seed, n);
	n = 0;
	seed[n++] = 2;
	n += put_part(seed + n, ses, su);
	n += put_thread(seed + n, t1, n1);
	n += put_thread(seed + n, t2, n2);
	check_seed(seed, n, 2);
	write_seed(dir, "gen_live_two_threads", seed, n);
	/* The same first thread at its real sizes (raw: no padding). */
	n = 0;
	seed[n++] = 8 | 1;
	n += put_part(seed + n, ses, sizeof ses);
	n += put_part(seed + n, t1, TP_CAPFMT_CHUNK_HEADER);
	n += put_part(seed + n, t1 + TP_CAPFMT_CHUNK_HEADER, n1 - TP_CAPFMT_CHUNK_HEADER);
	check_seed(seed, n, 1);
	write_seed(dir, "gen_live_raw", seed, n);
	return 0;
}
