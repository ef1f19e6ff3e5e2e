/*
 * capfile.c — reads libtpuprof capture dumps into the profile model (contract in capfile.h).
 * It owns nothing beyond one call: the file mapping and the per-thread scratch arrays are
 * released before returning; the profile goes to the caller.
 *
 * Format (docs/capture-format.md has the full OFFSET / SIZE / FIELD tables; the numbers are
 * in src/capture/capfmt.h, shared with the writer):
 *   OFFSET SIZE FIELD
 *   0      8    magic "TPUPCAP\0"
 *   8      4    version (this reader accepts 1)
 *   12     4    header size (>= 128; bytes past 128 are skipped)
 *   16     4    endianness mark 0x01020304 as written (little-endian only)
 *   20     4    record size (32)
 *   24..127     pid, device, session, mode, clock, record limit, calibration, comm, flushes
 *   128    ...  blocks: u32 type, u32 flags, u64 length, payload
 * Accepted: HWINFO, SUMMARY, THREAD (+ its RECORDS), END. Unknown block types are skipped by
 * length and counted; unknown record kinds are skipped and counted (a note says so).
 * Rejected (TP_EFORMAT / TP_EUNSUPPORTED): bad magic, other versions, big-endian dumps,
 * other record sizes, unknown clocks, string tables that do not match their counts, RECORDS
 * without a THREAD, string ids out of range.
 * Truncation (no END block, or a block longer than the bytes left) is not an error: what is
 * there is read, and the SUMMARY block written before the thread data says how many records
 * are missing ("dump truncated: N records lost").
 */
#include "readers/capfile/capfile.h"

#include "capture/capfmt.h"

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The argument keys and slice types the reader writes, each interned on its first use
 * (struct rd's `key` and `type` memos): every slice needs a handful, and interning a key
 * from its text (UTF-8 check, hash, compare) cost more than the rest of the slice. */
enum {
	K_STEP,
	K_WARMUP,
	K_META,
	K_GRAPH,
	K_OP_TYPE,
	K_POST_OP,
	K_INPUTS,
	K_INPUT_SHAPES,
	K_INPUT_DTYPES,
	K_OUTPUTS,
	K_OUTPUT_SHAPES,
	K_OUTPUT_DTYPES,
	K_WEIGHT_SHAPE,
	K_WEIGHT_SPARSITY,
	K_BYTES,
	K_FLOPS,
	K_CUT,
	K_CATEGORY,
	K_COLOR,
	K_SRC_FILE,
	K_SRC_LINE,
	K_SRC_FUNC,
	NKEYS
};
static const char *const key_text[NKEYS] = {
    TP_CAP_KEY_STEP,         TP_CAP_KEY_WARMUP,          TP_CAP_KEY_META,
    TP_CAP_KEY_GRAPH,        TP_CAP_KEY_OP_TYPE,         TP_CAP_KEY_POST_OP,
    TP_CAP_KEY_INPUTS,       TP_CAP_KEY_INPUT_SHAPES,    TP_CAP_KEY_INPUT_DTYPES,
    TP_CAP_KEY_OUTPUTS,      TP_CAP_KEY_OUTPUT_SHAPES,   TP_CAP_KEY_OUTPUT_DTYPES,
    TP_CAP_KEY_WEIGHT_SHAPE, TP_CAP_KEY_WEIGHT_SPARSITY, TP_CAP_KEY_BYTES,
    TP_CAP_KEY_FLOPS,        TP_CAPFILE_KEY_CUT,         TP_CAPFILE_KEY_CATEGORY,
    TP_CAPFILE_KEY_COLOR,    TP_CAPFILE_KEY_SRC_FILE,    TP_CAPFILE_KEY_SRC_LINE,
    TP_CAPFILE_KEY_SRC_FUNC,
};
enum { T_ACTIVITY, T_STEP, T_OP, T_RANGE, T_MARK, T_RUNTIME, NTYPES };
static const char *const type_text[NTYPES] = {
    TP_CAP_TYPE_ACTIVITY,  TP_CAP_TYPE_STEP,     TP_CAP_TYPE_OP,
    TP_CAPFILE_TYPE_RANGE, TP_CAPFILE_TYPE_MARK, TP_CAP_TYPE_RUNTIME,
};

/* One thread of the dump as found in pass 1. */
struct thr {
	uint64_t off; /* file offset of the THREAD block (messages) */
	int64_t tid;
	uint64_t declared; /* records the THREAD block announces */
	uint64_t dropped;
	uint32_t nstr, sbytes, str_dropped, hw_kind;
	char name[TP_CAPFMT_COMM_SIZE + 1];
	const uint8_t *strs;
	uint64_t strs_off;
	int have_recs;
	const uint8_t *recs; /* whole records present */
	uint64_t nrec;
	uint64_t recs_off;
	uint64_t first; /* tick of its first timed record (track order) */
};

static int thr_cmp(const void *a, const void *b)
{
	const struct thr *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

struct rd {
	const char *path;
	struct tp_diag *d;
	struct tp_profile *p;
	int mode, clock;
	uint64_t tick0, ns0, tick1, ns1;
	int64_t base; /* absolute ns of the earliest event */
	struct thr *thr;
	size_t nthr, cap_thr;
	uint32_t hw_kind, hw_n;
	char hw_names[TP_CAPFMT_MAX_HW][TP_CAPFMT_HW_NAME_SIZE + 1];
	int have_summary, complete;
	uint64_t sum_records, sum_dropped, sum_str_dropped;
	uint64_t bytes_missing;
	uint64_t unknown_records, unmatched_ends, unclosed, orphan_details;
	struct async_ev *async;
	size_t nasync, cap_async;
	const uint8_t *bytes; /* the dump's bytes */
	int drop;             /* they are a file mapping: give pages back once read (drop_read) */
	uint32_t key[NKEYS], type[NTYPES]; /* string ids, 0 until first used */
	uint32_t hw_key[TP_CAPFMT_MAX_HW]; /* "hw.<counter>" ids, 0 until first used */
};

/* One async begin or end (tpuprof_async_*), collected over all threads, paired afterwards. */
struct async_ev {
	uint64_t id, ts;
	uint32_t name, category; /* profile string ids */
	uint32_t color;
	int begin;
	int64_t tid;
	int has_src;
	uint32_t src_file, src_func; /* profile string ids */
	int64_t src_line;
	uint64_t seq; /* order of collection (stable sort) */
};

/* Interns `len` bytes of dump text; returns the string id. Text from a dump enters the model
 * as valid UTF-8 of at most TP_CAPFMT_MAX_STR bytes: each invalid byte and each NUL becomes
 * U+FFFD and the text is cut on a character boundary (the capture library does the same when
 * recording; this protects against other writers and damage). */
static uint32_t clean_str(struct tp_profile *p, const char *s, size_t len)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t i = 0;
	while (i < len && i < TP_CAPFMT_MAX_STR) {
		int32_t cp;
		size_t k = tp_utf8_decode(u + i, len - i, &cp);
		if (cp <= 0 || i + k > TP_CAPFMT_MAX_STR) /* NUL or invalid */
			break;
		i += k;
	}
	if (i == len)
		return tp_profile_strn(p, s, len);
	char out[TP_CAPFMT_MAX_STR + 1];
	size_t o = 0;
	for (i = 0; i < len;) {
		int32_t cp;
		size_t k = tp_utf8_decode(u + i, len - i, &cp);
		if (cp <= 0) /* NUL or invalid: replaced */
			k = 0;
		const char *piece = k ? s + i : "\xEF\xBF\xBD";
		size_t plen = k ? k : 3;
		if (o + plen > TP_CAPFMT_MAX_STR)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
		i += k ? k : 1;
	}
	return tp_profile_strn(p, out, o);
}

static const char *clean_cstr(struct tp_profile *p, const char *s)
{
	return tp_str(p, clean_str(p, s, strlen(s)));
}

/* Absolute nanoseconds of a tick, saturated to the int64 range. */
static int64_t tick_ns(const struct rd *r, uint64_t tick)
{
	if (r->clock == TP_CAPFMT_CLOCK_MONOTONIC)
		return (int64_t)(tick & 0x7fffffffffffffffull);
	long double v = (long double)r->ns0 + ((long double)tick - (long double)r->tick0) *
	                                          ((long double)r->ns1 - (long double)r->ns0) /
	                                          ((long double)r->tick1 - (long double)r->tick0);
	if (v > 9.0e18L)
		return INT64_C(9000000000000000000);
	if (v < -9.0e18L)
		return -INT64_C(9000000000000000000);
	return (int64_t)v;
}

static int64_t rel_ns(const struct rd *r, uint64_t tick)
{
	/* Wrapping subtraction: wild input must not overflow a signed type. */
	return (int64_t)((uint64_t)tick_ns(r, tick) - (uint64_t)r->base);
}

/* ---------------------------------------------------------------------------------------- */
/* Pass 1: header and blocks                                                                */
/* ---------------------------------------------------------------------------------------- */

static int read_header(struct rd *r, struct tp_cursor *c, size_t size)
{
	if (size < TP_CAPFMT_MAGIC_SIZE ||
	    memcmp(c->base, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE) != 0)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, 0,
		                  "not a tpuprof capture (bad magic)");
	if (size < TP_CAPFMT_HEADER_SIZE)
		return tp_diag_at(r->d, TP_ETRUNC, r->path, size,
		                  "header truncated: %zu of %d bytes present", size,
		                  TP_CAPFMT_HEADER_SIZE);
	tp_cur_skip(c, TP_CAPFMT_MAGIC_SIZE);
	uint32_t version = tp_cur_u32(c);
	uint32_t hsize = tp_cur_u32(c);
	uint32_t endian = tp_cur_u32(c);
	uint32_t recsize = tp_cur_u32(c);
	if (version != TP_CAPFMT_VERSION)
		return tp_diag_at(r->d, TP_EUNSUPPORTED, r->path, TP_CAPFMT_OFF_VERSION,
		                  "capture format version %u (this tpuprof reads %d)", version,
		                  TP_CAPFMT_VERSION);
	if (hsize < TP_CAPFMT_HEADER_SIZE || hsize > size)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, TP_CAPFMT_OFF_HEADER_SIZE,
		                  "header size %u is outside [%d, %zu]", hsize,
		                  TP_CAPFMT_HEADER_SIZE, size);
	if (endian != TP_CAPFMT_ENDIAN_MARK)
		return tp_diag_at(r->d, TP_EUNSUPPORTED, r->path, TP_CAPFMT_OFF_ENDIAN,
		                  endian == 0x04030201u ? "big-endian dumps are not supported"
		                                        : "bad endianness mark 0x%08x",
		                  endian);
	if (recsize != TP_CAPFMT_RECORD_SIZE)
		return tp_diag_at(r->d, TP_EUNSUPPORTED, r->path, TP_CAPFMT_OFF_RECORD_SIZE,
		                  "record size %u (this tpuprof reads %d)", recsize,
		                  TP_CAPFMT_RECORD_SIZE);
	uint32_t pid = tp_cur_u32(c);
	uint32_t device = tp_cur_u32(c);
	uint32_t session = tp_cur_u32(c);
	uint32_t mode = tp_cur_u32(c);
	uint32_t clock = tp_cur_u32(c);
	uint32_t limit = tp_cur_u32(c);
	r->tick0 = tp_cur_u64(c);
	r->ns0 = tp_cur_u64(c);
	r->tick1 = tp_cur_u64(c);
	r->ns1 = tp_cur_u64(c);
	char comm[TP_CAPFMT_COMM_SIZE + 1];
	const uint8_t *cm = tp_cur_bytes(c, TP_CAPFMT_COMM_SIZE);
	memcpy(comm, cm, TP_CAPFMT_COMM_SIZE);
	comm[TP_CAPFMT_COMM_SIZE] = 0;
	uint32_t flushes = tp_cur_u32(c);
	if (mode > 2)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, TP_CAPFMT_OFF_MODE,
		                  "capture mode %u is not 0, 1 or 2", mode);
	if (clock != TP_CAPFMT_CLOCK_MONOTONIC && clock != TP_CAPFMT_CLOCK_TSC)
		return tp_diag_at(r->d, TP_EUNSUPPORTED, r->path, TP_CAPFMT_OFF_CLOCK,
		                  "unknown clock kind %u", clock);
	r->mode = (int)mode;
	r->clock = (int)clock;
	tp_cur_init(c, c->base, size, 0);
	tp_cur_skip(c, hsize);

	struct tp_profile *p = r->p;
	char buf[96];
	if (comm[0])
		snprintf(buf, sizeof buf, "%s (pid %u)", clean_cstr(p, comm), pid);
	else
		snprintf(buf, sizeof buf, "process %u", pid);
	if (tp_profile_add_device(p, buf, (int32_t)pid, 0) < 0)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	static const char *const modes[] = {"0 (timing)", "1 (condensed)", "2 (detailed)"};
	tp_profile_set_meta(p, "capture_mode", modes[mode]);
	snprintf(buf, sizeof buf, "%u", device);
	tp_profile_set_meta(p, "capture_device", buf);
	snprintf(buf, sizeof buf, "%u", session);
	tp_profile_set_meta(p, "capture_session", buf);
	tp_profile_set_meta(p, "capture_clock", clock == TP_CAPFMT_CLOCK_TSC ? "tsc" : "monotonic");
	snprintf(buf, sizeof buf, "%u", limit);
	tp_profile_set_meta(p, "capture_record_limit", buf);
	if (comm[0])
		tp_profile_set_meta(p, "process", clean_cstr(p, comm));
	(void)flushes;
	return TP_OK;
}

static int block_hwinfo(struct rd *r, struct tp_cursor *b, uint64_t off)
{
	uint32_t kind = tp_cur_u32(b), n = tp_cur_u32(b);
	if (b->bad || kind > TP_CAPFMT_HW_SOFTWARE || n > TP_CAPFMT_MAX_HW ||
	    (uint64_t)n * TP_CAPFMT_HW_NAME_SIZE > tp_cur_left(b))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off,
		                  "bad HWINFO block (kind %u, %u names)", kind, n);
	r->hw_kind = kind;
	r->hw_n = n;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *s = tp_cur_bytes(b, TP_CAPFMT_HW_NAME_SIZE);
		memcpy(r->hw_names[i], s, TP_CAPFMT_HW_NAME_SIZE);
		r->hw_names[i][TP_CAPFMT_HW_NAME_SIZE] = 0;
	}
	return TP_OK;
}

/* META: run metadata from tpuprof_meta, stored as profile metadata (later entries for the
 * same key win, as in the writer). */
static int block_meta(struct rd *r, struct tp_cursor *b, uint64_t off)
{
	enum { ENTRY = TP_CAPFMT_META_KEY + TP_CAPFMT_META_VALUE };
	uint32_t n = tp_cur_u32(b);
	tp_cur_u32(b);
	if (b->bad || n > TP_CAPFMT_META_MAX || (uint64_t)n * ENTRY > tp_cur_left(b))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off, "bad META block (%u entries)", n);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = tp_cur_bytes(b, ENTRY);
		char key[TP_CAPFMT_META_KEY + 1], val[TP_CAPFMT_META_VALUE + 1];
		memcpy(key, e, TP_CAPFMT_META_KEY);
		key[TP_CAPFMT_META_KEY] = 0;
		memcpy(val, e + TP_CAPFMT_META_KEY, TP_CAPFMT_META_VALUE);
		val[TP_CAPFMT_META_VALUE] = 0;
		if (!key[0])
			return tp_diag_at(r->d, TP_EFORMAT, r->path,
			                  off + 16 + 8 + (uint64_t)i * ENTRY,
			                  "META entry %u has an empty key", i);
		if (tp_profile_set_meta(r->p, clean_cstr(r->p, key), clean_cstr(r->p, val)) !=
		    TP_OK)
			return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	}
	return TP_OK;
}

static int block_summary(struct rd *r, struct tp_cursor *b, uint64_t off)
{
	if (tp_cur_left(b) < 32)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off,
		                  "SUMMARY block shorter than 32 bytes");
	tp_cur_u32(b);
	tp_cur_u32(b);
	r->sum_records = tp_cur_u64(b);
	r->sum_dropped = tp_cur_u64(b);
	r->sum_str_dropped = tp_cur_u64(b);
	r->have_summary = 1;
	return TP_OK;
}

static int block_thread(struct rd *r, struct tp_cursor *b, uint64_t off)
{
	if (tp_cur_left(b) < 56)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off,
		                  "THREAD block shorter than 56 bytes");
	struct thr t;
	memset(&t, 0, sizeof t);
	t.off = off;
	t.tid = (int64_t)tp_cur_u64(b);
	t.declared = tp_cur_u64(b);
	t.dropped = tp_cur_u64(b);
	t.nstr = tp_cur_u32(b);
	t.sbytes = tp_cur_u32(b);
	t.str_dropped = tp_cur_u32(b);
	t.hw_kind = tp_cur_u32(b);
	memcpy(t.name, tp_cur_bytes(b, TP_CAPFMT_COMM_SIZE), TP_CAPFMT_COMM_SIZE);
	t.name[TP_CAPFMT_COMM_SIZE] = 0;
	if (t.sbytes != tp_cur_left(b))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off + TP_CAPFMT_BLOCK_HEADER_SIZE + 28,
		                  "thread %lld: string table of %u bytes but %zu bytes follow",
		                  (long long)t.tid, t.sbytes, tp_cur_left(b));
	if (t.nstr > t.sbytes)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off + TP_CAPFMT_BLOCK_HEADER_SIZE + 24,
		                  "thread %lld: %u strings cannot fit in %u bytes",
		                  (long long)t.tid, t.nstr, t.sbytes);
	t.strs_off = tp_cur_offset(b);
	t.strs = tp_cur_bytes(b, t.sbytes);
	if (t.sbytes == 0)
		t.strs = NULL;
	struct thr *nt = tp_grow(r->thr, sizeof *r->thr, r->nthr + 1, &r->cap_thr);
	if (nt == NULL)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	r->thr = nt;
	r->thr[r->nthr++] = t;
	return TP_OK;
}

/* `avail` bytes of the block are present out of `len` declared (truncated when less). */
static int block_records(struct rd *r, struct tp_cursor *b, uint64_t off, uint64_t len,
                         uint64_t avail)
{
	struct thr *t = r->nthr ? &r->thr[r->nthr - 1] : NULL;
	if (t == NULL || t->have_recs)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off,
		                  "RECORDS block without its THREAD block");
	if (len % TP_CAPFMT_RECORD_SIZE != 0 || len / TP_CAPFMT_RECORD_SIZE != t->declared)
		return tp_diag_at(
		    r->d, TP_EFORMAT, r->path, off + 8,
		    "RECORDS block of %llu bytes does not hold the %llu records of thread %lld",
		    (unsigned long long)len, (unsigned long long)t->declared, (long long)t->tid);
	t->have_recs = 1;
	t->nrec = avail / TP_CAPFMT_RECORD_SIZE;
	t->recs_off = tp_cur_offset(b);
	t->recs = t->nrec ? tp_cur_bytes(b, (size_t)(t->nrec * TP_CAPFMT_RECORD_SIZE)) : NULL;
	return TP_OK;
}

static int read_blocks(struct rd *r, struct tp_cursor *c)
{
	while (tp_cur_left(c) > 0) {
		uint64_t off = tp_cur_offset(c);
		if (tp_cur_left(c) < TP_CAPFMT_BLOCK_HEADER_SIZE) {
			r->bytes_missing += TP_CAPFMT_BLOCK_HEADER_SIZE - tp_cur_left(c);
			return TP_OK; /* truncated inside a block header */
		}
		uint32_t type = tp_cur_u32(c);
		tp_cur_u32(c); /* flags: none defined */
		uint64_t len = tp_cur_u64(c);
		size_t left = tp_cur_left(c);
		struct tp_cursor b;
		if (len > left) {
			r->bytes_missing += len - left;
			/* Only a cut RECORDS block still yields data: its whole records. */
			if (type == TP_CAPFMT_BLK_RECORDS) {
				tp_cur_sub(c, left, &b);
				return block_records(r, &b, off, len, left);
			}
			return TP_OK;
		}
		tp_cur_sub(c, (size_t)len, &b);
		int rc = TP_OK;
		r->p->stats.blocks_read++;
		switch (type) {
		case TP_CAPFMT_BLK_HWINFO:
			rc = block_hwinfo(r, &b, off);
			break;
		case TP_CAPFMT_BLK_SUMMARY:
			rc = block_summary(r, &b, off);
			break;
		case TP_CAPFMT_BLK_META:
			rc = block_meta(r, &b, off);
			break;
		case TP_CAPFMT_BLK_THREAD:
			rc = block_thread(r, &b, off);
			break;
		case TP_CAPFMT_BLK_RECORDS:
			rc = block_records(r, &b, off, len, len);
			break;
		case TP_CAPFMT_BLK_END:
			r->complete = 1;
			return TP_OK;
		default:
			r->p->stats.blocks_read--;
			r->p->stats.blocks_skipped++;
			break;
		}
		if (rc != TP_OK)
			return rc;
	}
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Pass 2: records -> slices                                                                */
/* ---------------------------------------------------------------------------------------- */

struct rec {
	uint64_t ts;
	uint8_t kind, flags;
	uint16_t aux;
	uint32_t name;
	uint64_t a, b;
	uint64_t off;
};

/* Record i of t (i < t->nrec: block_records checked that the bytes are there). */
static void get_rec(const struct thr *t, uint64_t i, struct rec *x)
{
	const uint8_t *b = t->recs + i * TP_CAPFMT_RECORD_SIZE;
	x->off = t->recs_off + i * TP_CAPFMT_RECORD_SIZE;
	x->ts = tp_le64(b);
	x->kind = b[8];
	x->flags = b[9];
	x->aux = (uint16_t)(b[10] | b[11] << 8);
	x->name = tp_le32(b + 12);
	x->a = tp_le64(b + 16);
	x->b = tp_le64(b + 24);
}

/* Every DROP_EVERY records a pass gives back the pages it has read (tp_map_drop), so a
 * large capture is not kept resident whole: records are only ever read forwards. */
#define DROP_EVERY 32768

/* Gives back the pages of thread t's records before record `upto` (when r->drop). */
static void drop_read(const struct rd *r, const struct thr *t, uint64_t upto)
{
	if (r->drop && t->nrec)
		tp_map_drop(r->bytes, (size_t)t->recs_off,
		            (size_t)(t->recs_off + upto * TP_CAPFMT_RECORD_SIZE));
}

static int timed(uint8_t kind)
{
	return kind >= TP_CAPFMT_REC_ACT_BEGIN && kind <= TP_CAPFMT_REC_RANGE_END;
}

struct open_scope {
	uint8_t kind, flags;
	uint32_t name;
	uint64_t a, b;
	uint64_t ts;
	uint64_t off;                /* file offset of the begin record */
	int has_src;                 /* a SRCLOC record followed the begin */
	uint32_t src_file, src_func; /* thread string ids */
	int64_t src_line;
};

struct detail {
	struct tp_buf in_names, in_shapes, in_dtypes, out_names, out_shapes, out_dtypes, wshape;
	int have_in, have_out, have_w, have_cost, have_sparse; /* detail_reset clears from here */
	uint64_t bytes, flops;
	double sparse;
	uint32_t attr_key[64],
	    attr_val[64]; /* thread string id of the name, profile id of the value */
	int nattr;
	uint64_t hw[TP_CAPFMT_MAX_HW];
	int have_hw[TP_CAPFMT_MAX_HW];
};

struct tctx {
	struct rd *r;
	const struct thr *t;
	uint32_t *ids;      /* thread string id -> profile string id */
	uint32_t *attr_ids; /* thread string id -> id of "attr.<it>", 0 until first used */
	struct detail dt;   /* the operator being closed (buffers reused from op to op) */
	int track;
	struct open_scope *stack;
	size_t depth, cap;
	struct {
		uint32_t name;
		int counter;
	} * ctr;
	size_t nctr, cap_ctr;
};

static int str_id(struct tctx *x, uint32_t id, uint64_t off, uint32_t *out)
{
	if (id > x->t->nstr)
		return tp_diag_at(x->r->d, TP_EFORMAT, x->r->path, off,
		                  "string id %u out of range (thread %lld has %u strings)", id,
		                  (long long)x->t->tid, x->t->nstr);
	*out = x->ids[id];
	return TP_OK;
}

/* The profile string id of thread string `id` (a record field of 32 or 64 bits). */
static int str_sid(struct tctx *x, uint64_t id, uint64_t off, uint32_t *sid)
{
	*sid = 0;
	if (id > UINT32_MAX)
		return tp_diag_at(x->r->d, TP_EFORMAT, x->r->path, off,
		                  "string id %llu out of range", (unsigned long long)id);
	return str_id(x, (uint32_t)id, off, sid);
}

static int str_of(struct tctx *x, uint64_t id, uint64_t off, const char **s)
{
	uint32_t pid;
	int rc = str_sid(x, id, off, &pid);
	*s = rc == TP_OK ? tp_str(x->r->p, pid) : "";
	return rc;
}

static int type_of(uint8_t begin_kind)
{
	switch (begin_kind) {
	case TP_CAPFMT_REC_ACT_BEGIN:
		return T_ACTIVITY;
	case TP_CAPFMT_REC_STEP_BEGIN:
		return T_STEP;
	case TP_CAPFMT_REC_OP_BEGIN:
		return T_OP;
	case TP_CAPFMT_REC_RANGE_BEGIN:
		return T_RANGE;
	case TP_CAPFMT_REC_MARK:
		return T_MARK;
	default:
		return T_RUNTIME;
	}
}

static uint32_t type_id(struct rd *r, int t)
{
	if (!r->type[t])
		r->type[t] = tp_profile_str(r->p, type_text[t]);
	return r->type[t];
}

/* The id of key K_* `k`. The arg_* helpers below add one argument to the open set; each
 * interns its key before its value, the order tp_args_add_str used (string ids follow first
 * use, so the outputs do not change). A failed append sets the profile's sticky oom flag,
 * which tp_profile_finish reports. */
static uint32_t key_id(struct rd *r, int k)
{
	if (!r->key[k])
		r->key[k] = tp_profile_str(r->p, key_text[k]);
	return r->key[k];
}

static void arg_put(struct rd *r, struct tp_arg *a)
{
	(void)tp_args_add(r->p, a);
}

static void arg_int(struct rd *r, int k, int64_t v)
{
	struct tp_arg a = {.key = key_id(r, k), .type = TP_ARG_INT, .v.i = v};
	arg_put(r, &a);
}

static void arg_uint_key(struct rd *r, uint32_t key, uint64_t v)
{
	struct tp_arg a = {.key = key, .type = TP_ARG_UINT, .v.u = v};
	arg_put(r, &a);
}

static void arg_real(struct rd *r, int k, double v)
{
	struct tp_arg a = {.key = key_id(r, k), .type = TP_ARG_REAL, .v.d = v};
	arg_put(r, &a);
}

/* A string argument whose value is already a profile string (a thread string's id). */
static void arg_sid(struct rd *r, int k, uint32_t sid)
{
	struct tp_arg a = {.key = key_id(r, k), .type = TP_ARG_STR, .v.s = sid};
	arg_put(r, &a);
}

/* A string argument made of n bytes of text (interned here, after the key). */
static void arg_text(struct rd *r, int k, const char *s, size_t n)
{
	struct tp_arg a = {.key = key_id(r, k), .type = TP_ARG_STR};
	a.v.s = tp_profile_strn(r->p, s, n);
	arg_put(r, &a);
}

static void join(struct tp_buf *b, const char *s)
{
	if (b->len)
		tp_buf_putc(b, ';');
	tp_buf_puts(b, s);
}

static void detail_init(struct detail *dt)
{
	memset(dt, 0, sizeof *dt);
	tp_buf_init(&dt->in_names);
	tp_buf_init(&dt->in_shapes);
	tp_buf_init(&dt->in_dtypes);
	tp_buf_init(&dt->out_names);
	tp_buf_init(&dt->out_shapes);
	tp_buf_init(&dt->out_dtypes);
	tp_buf_init(&dt->wshape);
}

/* Empties dt for the next operator, keeping its buffers' memory. */
static void detail_reset(struct detail *dt)
{
	struct tp_buf *b[] = {&dt->in_names,   &dt->in_shapes,  &dt->in_dtypes, &dt->out_names,
	                      &dt->out_shapes, &dt->out_dtypes, &dt->wshape};
	for (size_t k = 0; k < sizeof b / sizeof *b; k++)
		b[k]->len = 0; /* oom stays: it is sticky, and reported */
	size_t from = offsetof(struct detail, have_in);
	memset((char *)dt + from, 0, sizeof *dt - from);
}

static void detail_free(struct detail *dt)
{
	tp_buf_free(&dt->in_names);
	tp_buf_free(&dt->in_shapes);
	tp_buf_free(&dt->in_dtypes);
	tp_buf_free(&dt->out_names);
	tp_buf_free(&dt->out_shapes);
	tp_buf_free(&dt->out_dtypes);
	tp_buf_free(&dt->wshape);
}

/* Reads the detail records following an OP_END at index *i (advancing it). */
static int read_detail(struct tctx *x, uint64_t *i, struct detail *dt)
{
	const struct thr *t = x->t;
	struct rec q;
	while (*i + 1 < t->nrec) {
		get_rec(t, *i + 1, &q);
		if (q.kind < TP_CAPFMT_REC_TENSOR)
			break;
		(*i)++;
		const char *s1 = "", *s2 = "";
		int rc;
		switch (q.kind) {
		case TP_CAPFMT_REC_TENSOR: {
			int role = q.aux >> 8;
			if (q.b > TP_CAPFMT_MAX_DIMS || role > TP_CAPFMT_ROLE_WEIGHT)
				return tp_diag_at(x->r->d, TP_EFORMAT, x->r->path, q.off,
				                  "tensor record with role %d and %llu dims", role,
				                  (unsigned long long)q.b);
			if ((rc = str_of(x, q.name, q.off + 12, &s1)) != TP_OK ||
			    (rc = str_of(x, q.a, q.off + 16, &s2)) != TP_OK)
				return rc;
			/* Shape: dims records follow, two dims each; "1x128x256" (at most
			 * TP_CAPFMT_MAX_DIMS numbers of at most 20 characters, and the x's). */
			char shape[TP_CAPFMT_MAX_DIMS * 21 + 1];
			size_t sl = 0;
			uint64_t want = q.b, got = 0;
			while (got < want && *i + 1 < t->nrec) {
				struct rec dm;
				get_rec(t, *i + 1, &dm);
				if (dm.kind != TP_CAPFMT_REC_DIMS)
					break;
				(*i)++;
				uint64_t v[2] = {dm.a, dm.b};
				for (int k = 0; k < 2 && k < dm.aux && got < want; k++, got++) {
					if (got)
						shape[sl++] = 'x';
					sl += tp_fmt_i64(shape + sl, (int64_t)v[k]);
				}
			}
			shape[sl] = 0;
			if (role == TP_CAPFMT_ROLE_INPUT) {
				join(&dt->in_names, s1);
				join(&dt->in_shapes, shape);
				join(&dt->in_dtypes, s2);
				dt->have_in++;
			} else if (role == TP_CAPFMT_ROLE_OUTPUT) {
				join(&dt->out_names, s1);
				join(&dt->out_shapes, shape);
				join(&dt->out_dtypes, s2);
				dt->have_out++;
			} else {
				dt->wshape.len = 0;
				tp_buf_puts(&dt->wshape, shape);
				dt->have_w = 1;
			}
			break;
		}
		case TP_CAPFMT_REC_ATTR: {
			uint32_t
			    name_sid; /* checks the id; the key is made once per name (attr_key) */
			int at = dt->nattr < 64 ? dt->nattr : 63;
			if ((rc = str_id(x, q.name, q.off + 12, &name_sid)) != TP_OK)
				return rc;
			dt->attr_key[at] = q.name;
			if (q.a > UINT32_MAX)
				return tp_diag_at(x->r->d, TP_EFORMAT, x->r->path, q.off + 16,
				                  "attribute value id out of range");
			if ((rc = str_id(x, (uint32_t)q.a, q.off + 16, &dt->attr_val[at])) != TP_OK)
				return rc;
			if (dt->nattr < 64)
				dt->nattr++;
			break;
		}
		case TP_CAPFMT_REC_COST: /* 0 = unknown: not reported */
			dt->bytes = q.a;
			dt->flops = q.b;
			dt->have_cost = q.a || q.b;
			break;
		case TP_CAPFMT_REC_SPARSITY:
			memcpy(&dt->sparse, &q.a, sizeof dt->sparse);
			dt->have_sparse = dt->sparse == dt->sparse; /* not NaN */
			break;
		case TP_CAPFMT_REC_HW:
			if (q.aux < TP_CAPFMT_MAX_HW) {
				dt->hw[q.aux] = q.a;
				dt->have_hw[q.aux] = 1;
			}
			break;
		case TP_CAPFMT_REC_DIMS:
			x->r->orphan_details++;
			break;
		default:
			x->r->unknown_records++;
			break;
		}
	}
	return TP_OK;
}

/* The key "attr.<name>" of thread string `name` (a checked id), made on its first use. */
static uint32_t attr_key(struct tctx *x, uint32_t name)
{
	struct tp_profile *p = x->r->p;
	if (!x->attr_ids[name]) {
		struct tp_buf k;
		tp_buf_init(&k);
		tp_buf_puts(&k, TP_CAP_KEY_ATTR_PREFIX);
		tp_buf_puts(&k, tp_str(p, x->ids[name]));
		if (!k.oom)
			x->attr_ids[name] = tp_profile_strn(p, k.data, k.len);
		else
			p->oom = 1;
		tp_buf_free(&k);
	}
	return x->attr_ids[name];
}

/* The key "hw.<counter name>" of hardware counter k (< TP_CAPFMT_MAX_HW). */
static uint32_t hw_key(struct rd *r, uint32_t k)
{
	if (!r->hw_key[k]) {
		char key[64];
		if (k >= r->hw_n)
			snprintf(key, sizeof key, "%scounter%u", TP_CAP_KEY_HW_PREFIX, k);
		else
			snprintf(key, sizeof key, "%s%s", TP_CAP_KEY_HW_PREFIX,
			         r->hw_names[k][0] ? r->hw_names[k] : "counter");
		r->hw_key[k] = tp_profile_str(r->p, key);
	}
	return r->hw_key[k];
}

static void add_step_args(struct rd *r, const struct open_scope *o)
{
	int in_step = (o->flags & TP_CAPFMT_F_STEP) != 0;
	arg_int(r, K_STEP, in_step ? (int64_t)o->a : -1);
	arg_int(r, K_WARMUP, (o->flags & TP_CAPFMT_F_WARMUP) ? 1 : 0);
}

/* Category and colour of a mark / range (b = category id | colour << 32). */
static int add_style(struct tctx *x, uint64_t b, uint64_t off)
{
	struct rd *r = x->r;
	uint32_t cat;
	int rc = str_sid(x, b & 0xffffffffu, off, &cat);
	if (rc != TP_OK)
		return rc;
	if (tp_str(r->p, cat)[0])
		arg_sid(r, K_CATEGORY, cat);
	uint32_t color = (uint32_t)(b >> 32);
	if (color & 0x01000000u) {
		char c[8];
		snprintf(c, sizeof c, "#%06x", color & 0xffffffu);
		arg_text(r, K_COLOR, c, strlen(c));
	}
	return TP_OK;
}

static int add_src(struct tctx *x, const struct open_scope *o)
{
	if (!o->has_src)
		return TP_OK;
	struct rd *r = x->r;
	uint32_t f, fn;
	int rc;
	if ((rc = str_sid(x, o->src_file, o->off + 44, &f)) != TP_OK ||
	    (rc = str_sid(x, o->src_func, o->off + 56, &fn)) != TP_OK)
		return rc;
	if (tp_str(r->p, f)[0])
		arg_sid(r, K_SRC_FILE, f);
	arg_int(r, K_SRC_LINE, o->src_line);
	if (tp_str(r->p, fn)[0])
		arg_sid(r, K_SRC_FUNC, fn);
	return TP_OK;
}

/* A SRCLOC continuation right after record *i, consumed into `o`. */
static void take_src(const struct thr *t, uint64_t *i, struct open_scope *o)
{
	if (*i + 1 >= t->nrec)
		return;
	struct rec q;
	get_rec(t, *i + 1, &q);
	if (q.kind != TP_CAPFMT_REC_SRCLOC)
		return;
	(*i)++;
	o->has_src = 1;
	o->src_file = q.name;
	o->src_func = q.b > UINT32_MAX ? UINT32_MAX : (uint32_t)q.b;
	o->src_line = (int64_t)q.a;
}

/* Adds a joined list (names, shapes or dtypes of the tensors) as a string argument. */
static void arg_list(struct rd *r, int k, const struct tp_buf *b)
{
	if (b->oom)
		r->p->oom = 1; /* tp_profile_finish reports it */
	else
		arg_text(r, k, b->len ? b->data : "", b->len);
}

/* Closes the innermost scope as a slice ending at `end_tick`; `i` points at its end record
 * (or is NULL for scopes still open at the end of the dump). */
static int close_scope(struct tctx *x, const struct open_scope *o, uint64_t end_tick,
                       const struct rec *end, uint64_t *i)
{
	struct rd *r = x->r;
	struct tp_profile *p = r->p;
	struct detail *dt = &x->dt;
	detail_reset(dt);
	int rc = TP_OK;
	if (end && o->kind == TP_CAPFMT_REC_OP_BEGIN)
		rc = read_detail(x, i, dt);
	if (rc != TP_OK)
		return rc;
	int type = type_of(o->kind);
	uint32_t name;
	if ((rc = str_sid(x, o->name, o->off + 12, &name)) != TP_OK)
		return rc;
	uint32_t args = tp_args_begin(p);
	(void)args;
	switch (o->kind) {
	case TP_CAPFMT_REC_ACT_BEGIN: {
		arg_int(r, K_STEP, (int64_t)o->a);
		uint32_t meta;
		if ((rc = str_sid(x, o->b, o->off + 24, &meta)) != TP_OK)
			return rc;
		if (!tp_str(p, meta)[0] && end &&
		    (rc = str_sid(x, end->b, end->off + 24, &meta)) != TP_OK)
			return rc;
		if (tp_str(p, meta)[0])
			arg_sid(r, K_META, meta);
		break;
	}
	case TP_CAPFMT_REC_STEP_BEGIN:
		if (r->mode >= 1)
			arg_sid(r, K_GRAPH, name);
		arg_int(r, K_STEP, (int64_t)o->a);
		arg_int(r, K_WARMUP, (o->flags & TP_CAPFMT_F_WARMUP) ? 1 : 0);
		break;
	case TP_CAPFMT_REC_OP_BEGIN: {
		if (r->mode >= 1) {
			uint32_t ot, po;
			if ((rc = str_sid(x, o->b & 0xffffffffu, o->off + 24, &ot)) != TP_OK ||
			    (rc = str_sid(x, o->b >> 32, o->off + 28, &po)) != TP_OK)
				return rc;
			arg_sid(r, K_OP_TYPE, ot);
			arg_sid(r, K_POST_OP, po);
		}
		add_step_args(r, o);
		if (dt->have_in) {
			arg_list(r, K_INPUTS, &dt->in_names);
			arg_list(r, K_INPUT_SHAPES, &dt->in_shapes);
			arg_list(r, K_INPUT_DTYPES, &dt->in_dtypes);
		}
		if (dt->have_out) {
			arg_list(r, K_OUTPUTS, &dt->out_names);
			arg_list(r, K_OUTPUT_SHAPES, &dt->out_shapes);
			arg_list(r, K_OUTPUT_DTYPES, &dt->out_dtypes);
		}
		if (dt->have_w)
			arg_list(r, K_WEIGHT_SHAPE, &dt->wshape);
		if (dt->have_sparse)
			arg_real(r, K_WEIGHT_SPARSITY, dt->sparse);
		if (dt->have_cost && dt->bytes)
			arg_uint_key(r, key_id(r, K_BYTES), dt->bytes);
		if (dt->have_cost && dt->flops)
			arg_uint_key(r, key_id(r, K_FLOPS), dt->flops);
		for (int k = 0; k < dt->nattr; k++) {
			struct tp_arg a = {.key = attr_key(x, dt->attr_key[k]),
			                   .type = TP_ARG_STR,
			                   .v.s = dt->attr_val[k]};
			arg_put(r, &a);
		}
		for (uint32_t k = 0; k < TP_CAPFMT_MAX_HW; k++)
			if (dt->have_hw[k])
				arg_uint_key(r, hw_key(r, k), dt->hw[k]);
		break;
	}
	case TP_CAPFMT_REC_RANGE_BEGIN:
	case TP_CAPFMT_REC_MARK:
		add_step_args(r, o);
		if ((rc = add_style(x, o->b, o->off + 24)) != TP_OK ||
		    (rc = add_src(x, o)) != TP_OK)
			return rc;
		break;
	default: /* runtime call */
		add_step_args(r, o);
		break;
	}
	if (end == NULL && o->kind != TP_CAPFMT_REC_MARK)
		arg_int(r, K_CUT, 1);
	struct tp_slice *s = tp_track_push(p, x->track);
	if (s == NULL)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	s->start_ns = rel_ns(r, o->ts);
	tp_slice_set_end(p, &p->tracks[x->track], s, rel_ns(r, end_tick));
	if (tp_slice_end(&p->tracks[x->track], s) < s->start_ns)
		tp_slice_set_end(p, &p->tracks[x->track], s, s->start_ns);
	struct tp_label lb = {.name = tp_str(p, name)[0] ? name : type_id(r, type)};
	lb.type = type_id(r, type);
	tp_slice_set_label(p, &p->tracks[x->track], s, &lb);
	s->args = tp_args_end(p);
	return TP_OK;
}

static int counter_sample(struct tctx *x, const struct rec *q)
{
	struct rd *r = x->r;
	uint32_t name = 0;
	int rc = str_id(x, q->name, q->off + 12, &name);
	if (rc != TP_OK)
		return rc;
	int idx = -1;
	for (size_t k = 0; k < x->nctr; k++)
		if (x->ctr[k].name == name)
			idx = x->ctr[k].counter;
	if (idx < 0) {
		idx = tp_profile_add_counter(r->p, 0, x->track,
		                             name ? tp_str(r->p, name) : "counter", "");
		void *n = tp_grow(x->ctr, sizeof *x->ctr, x->nctr + 1, &x->cap_ctr);
		if (idx < 0 || n == NULL)
			return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
		x->ctr = n;
		x->ctr[x->nctr].name = name;
		x->ctr[x->nctr].counter = idx;
		x->nctr++;
	}
	double v;
	memcpy(&v, &q->a, sizeof v);
	if (tp_counter_push(r->p, idx, rel_ns(r, q->ts), v) != TP_OK)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	return TP_OK;
}

static int collect_async(struct tctx *x, const struct open_scope *o)
{
	struct rd *r = x->r;
	struct async_ev *g = tp_grow(r->async, sizeof *g, r->nasync + 1, &r->cap_async);
	if (g == NULL)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	r->async = g;
	struct async_ev *e = &r->async[r->nasync];
	memset(e, 0, sizeof *e);
	int rc;
	if ((rc = str_id(x, o->name, o->off + 12, &e->name)) != TP_OK)
		return rc;
	e->begin = o->kind == TP_CAPFMT_REC_ASYNC_BEGIN;
	if (e->begin) {
		if (o->b & 0xffffffffu) {
			if ((rc = str_id(x, (uint32_t)(o->b & 0xffffffffu), o->off + 24,
			                 &e->category)) != TP_OK)
				return rc;
		}
		e->color = (uint32_t)(o->b >> 32);
		if (o->has_src) {
			e->has_src = 1;
			e->src_line = o->src_line;
			if ((rc = str_id(x, o->src_file, o->off + 44, &e->src_file)) != TP_OK ||
			    (rc = str_id(x, o->src_func, o->off + 56, &e->src_func)) != TP_OK)
				return rc;
		}
	}
	e->id = o->a;
	e->ts = o->ts;
	e->tid = x->t->tid;
	e->seq = r->nasync;
	r->nasync++;
	return TP_OK;
}

static int async_cmp(const void *a, const void *b)
{
	const struct async_ev *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->begin != y->begin)
		return x->begin ? -1 : 1; /* a begin and an end at one tick: begin first */
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

struct async_pair {
	const struct async_ev *b, *e; /* e NULL: cut short */
	int64_t start, end;
};

static int pair_start_cmp(const void *a, const void *b)
{
	const struct async_pair *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->b->seq < y->b->seq ? -1 : (x->b->seq > y->b->seq);
}

/* Pairs async begins and ends by (id, name) in time order and lays the ranges out on as few
 * "async ranges" tracks as keep them from overlapping. */
static int pair_async(struct rd *r, uint64_t end_tick)
{
	if (r->nasync == 0)
		return TP_OK;
	struct tp_profile *p = r->p;
	qsort(r->async, r->nasync, sizeof *r->async, async_cmp);
	struct async_pair *pairs = tp_calloc(r->nasync, sizeof *pairs);
	int64_t *lane_end = tp_calloc(r->nasync, sizeof *lane_end);
	int *lane_track = tp_calloc(r->nasync, sizeof *lane_track);
	size_t np = 0, nlanes = 0;
	int rc = TP_OK;
	if (!pairs || !lane_end || !lane_track) {
		rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
		goto out;
	}
	for (size_t i = 0; i < r->nasync; i++) {
		const struct async_ev *e = &r->async[i];
		if (!e->begin) {
			r->unmatched_ends++;
			continue;
		}
		const struct async_ev *n = i + 1 < r->nasync ? &r->async[i + 1] : NULL;
		struct async_pair *q = &pairs[np++];
		q->b = e;
		q->start = rel_ns(r, e->ts);
		if (n && !n->begin && n->id == e->id && n->name == e->name) {
			q->e = n;
			q->end = rel_ns(r, n->ts);
			i++;
		} else {
			r->unclosed++;
			q->end = rel_ns(r, end_tick > e->ts ? end_tick : e->ts);
		}
		if (q->end < q->start)
			q->end = q->start;
	}
	qsort(pairs, np, sizeof *pairs, pair_start_cmp);
	for (size_t k = 0; k < np; k++) {
		struct async_pair *q = &pairs[k];
		size_t lane = 0;
		while (lane < nlanes && lane_end[lane] > q->start)
			lane++;
		if (lane == nlanes) {
			char name[48];
			if (lane == 0)
				snprintf(name, sizeof name, "async ranges");
			else
				snprintf(name, sizeof name, "async ranges (%zu)", lane + 1);
			lane_track[lane] = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, name, 0);
			if (lane_track[lane] < 0) {
				rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
				goto out;
			}
			p->tracks[lane_track[lane]].tid = -1;
			nlanes++;
		}
		lane_end[lane] = q->end;
		tp_args_begin(p);
		tp_args_add_uint(p, TP_CAPFILE_KEY_ASYNC_ID, q->b->id);
		tp_args_add_int(p, TP_CAPFILE_KEY_BEGIN_TID, q->b->tid);
		tp_args_add_int(p, TP_CAPFILE_KEY_END_TID, q->e ? q->e->tid : -1);
		if (q->b->category && tp_str(p, q->b->category)[0])
			tp_args_add_str(p, TP_CAPFILE_KEY_CATEGORY, tp_str(p, q->b->category));
		if (q->b->color & 0x01000000u) {
			char c[8];
			snprintf(c, sizeof c, "#%06x", q->b->color & 0xffffffu);
			tp_args_add_str(p, TP_CAPFILE_KEY_COLOR, c);
		}
		if (q->b->has_src) {
			if (tp_str(p, q->b->src_file)[0])
				tp_args_add_str(p, TP_CAPFILE_KEY_SRC_FILE,
				                tp_str(p, q->b->src_file));
			tp_args_add_int(p, TP_CAPFILE_KEY_SRC_LINE, q->b->src_line);
			if (tp_str(p, q->b->src_func)[0])
				tp_args_add_str(p, TP_CAPFILE_KEY_SRC_FUNC,
				                tp_str(p, q->b->src_func));
		}
		if (q->e == NULL)
			tp_args_add_int(p, TP_CAPFILE_KEY_CUT, 1);
		struct tp_slice *s = tp_track_push(p, lane_track[lane]);
		if (s == NULL) {
			rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
			goto out;
		}
		s->start_ns = q->start;
		tp_slice_set_end(p, &p->tracks[lane_track[lane]], s, q->end);
		const char *nm = tp_str(p, q->b->name);
		struct tp_label lb = {.name =
		                          tp_profile_str(p, nm[0] ? nm : TP_CAPFILE_TYPE_ASYNC)};
		lb.type = tp_profile_str(p, TP_CAPFILE_TYPE_ASYNC);
		tp_slice_set_label(p, &p->tracks[lane_track[lane]], s, &lb);
		s->args = tp_args_end(p);
	}
out:
	tp_free(pairs);
	tp_free(lane_end);
	tp_free(lane_track);
	return rc;
}

static int read_thread(struct rd *r, const struct thr *t)
{
	struct tp_profile *p = r->p;
	struct tctx x;
	memset(&x, 0, sizeof x);
	x.r = r;
	x.t = t;
	int rc = TP_OK;
	/* Intern the thread's strings: exactly nstr NUL-terminated strings fill sbytes. */
	detail_init(&x.dt);
	x.ids = tp_calloc((size_t)t->nstr + 1, sizeof *x.ids);
	x.attr_ids = tp_calloc((size_t)t->nstr + 1, sizeof *x.attr_ids);
	if (x.ids == NULL || x.attr_ids == NULL) {
		rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
		goto out;
	}
	{
		uint32_t pos = 0;
		for (uint32_t k = 1; k <= t->nstr; k++) {
			const uint8_t *z = memchr(t->strs + pos, 0, t->sbytes - pos);
			if (z == NULL) {
				rc = tp_diag_at(r->d, TP_EFORMAT, r->path, t->strs_off + pos,
				                "thread %lld: string %u is not NUL-terminated",
				                (long long)t->tid, k);
				goto out;
			}
			size_t len = (size_t)(z - (t->strs + pos));
			x.ids[k] = clean_str(p, (const char *)t->strs + pos, len);
			pos += (uint32_t)len + 1;
		}
		if (pos != t->sbytes) {
			rc = tp_diag_at(r->d, TP_EFORMAT, r->path, t->strs_off + pos,
			                "thread %lld: %u bytes after its %u strings",
			                (long long)t->tid, t->sbytes - pos, t->nstr);
			goto out;
		}
		if (r->drop) /* interned: the profile holds copies */
			tp_map_drop(r->bytes, (size_t)t->strs_off,
			            (size_t)(t->strs_off + t->sbytes));
	}
	{
		char name[64];
		if (t->name[0])
			snprintf(name, sizeof name, "%s", clean_cstr(p, t->name));
		else
			snprintf(name, sizeof name, "thread %lld", (long long)t->tid);
		x.track = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, name, 0);
		if (x.track < 0) {
			rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
			goto out;
		}
		p->tracks[x.track].tid = t->tid;
		p->tracks[x.track].dropped = t->dropped;
	}
	p->stats.records_read += t->nrec;
	p->stats.records_dropped += t->dropped;
	uint64_t last = 0;
	for (uint64_t i = 0; i < t->nrec; i++) {
		struct rec q;
		if (!(i % DROP_EVERY))
			drop_read(r, t, i);
		get_rec(t, i, &q);
		if (timed(q.kind))
			last = q.ts;
		switch (q.kind) {
		case TP_CAPFMT_REC_ACT_BEGIN:
		case TP_CAPFMT_REC_STEP_BEGIN:
		case TP_CAPFMT_REC_OP_BEGIN:
		case TP_CAPFMT_REC_RT_BEGIN:
		case TP_CAPFMT_REC_RANGE_BEGIN: {
			void *n = tp_grow(x.stack, sizeof *x.stack, x.depth + 1, &x.cap);
			if (n == NULL) {
				rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
				goto out;
			}
			x.stack = n;
			struct open_scope o = {q.kind, q.flags, q.name, q.a, q.b, q.ts,
			                       q.off,  0,       0,      0,   0};
			if (q.kind == TP_CAPFMT_REC_RANGE_BEGIN)
				take_src(t, &i, &o);
			x.stack[x.depth++] = o;
			break;
		}
		case TP_CAPFMT_REC_MARK: {
			struct open_scope o = {q.kind, q.flags, q.name, q.a, q.b, q.ts,
			                       q.off,  0,       0,      0,   0};
			take_src(t, &i, &o);
			if ((rc = close_scope(&x, &o, q.ts, NULL, NULL)) != TP_OK)
				goto out;
			break;
		}
		case TP_CAPFMT_REC_ASYNC_BEGIN:
		case TP_CAPFMT_REC_ASYNC_END: {
			struct open_scope o = {q.kind, q.flags, q.name, q.a, q.b, q.ts,
			                       q.off,  0,       0,      0,   0};
			if (q.kind == TP_CAPFMT_REC_ASYNC_BEGIN)
				take_src(t, &i, &o);
			if ((rc = collect_async(&x, &o)) != TP_OK)
				goto out;
			break;
		}
		case TP_CAPFMT_REC_ACT_END:
		case TP_CAPFMT_REC_STEP_END:
		case TP_CAPFMT_REC_OP_END:
		case TP_CAPFMT_REC_RT_END:
		case TP_CAPFMT_REC_RANGE_END:
			if (x.depth == 0 || x.stack[x.depth - 1].kind != q.kind - 1) {
				r->unmatched_ends++;
				break;
			}
			x.depth--;
			if ((rc = close_scope(&x, &x.stack[x.depth], q.ts, &q, &i)) != TP_OK)
				goto out;
			break;
		case TP_CAPFMT_REC_COUNTER:
			if ((rc = counter_sample(&x, &q)) != TP_OK)
				goto out;
			break;
		case TP_CAPFMT_REC_TENSOR:
		case TP_CAPFMT_REC_DIMS:
		case TP_CAPFMT_REC_ATTR:
		case TP_CAPFMT_REC_COST:
		case TP_CAPFMT_REC_SPARSITY:
		case TP_CAPFMT_REC_HW:
		case TP_CAPFMT_REC_SRCLOC:
			r->orphan_details++;
			break;
		default:
			r->unknown_records++;
			break;
		}
	}
	/* Scopes still open when the dump was written end at the dump time (or at the
	 * thread's last event when the dump time is unknown). */
	uint64_t end_tick = r->tick1 > last ? r->tick1 : last;
	if (r->clock == TP_CAPFMT_CLOCK_MONOTONIC && r->ns1 > last)
		end_tick = r->ns1;
	while (x.depth > 0) {
		x.depth--;
		r->unclosed++;
		if ((rc = close_scope(&x, &x.stack[x.depth], end_tick, NULL, NULL)) != TP_OK)
			goto out;
	}
	drop_read(r, t, t->nrec);
out:
	tp_free(x.ctr);
	tp_free(x.stack);
	tp_free(x.ids);
	tp_free(x.attr_ids);
	detail_free(&x.dt);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */

/* What a rebuild from live files found (notes for the profile). */
struct live_info {
	uint32_t threads, disk_full, no_calib, blank;
	uint64_t records;
};

static int parse_impl(const uint8_t *data, size_t size, const char *display,
                      const struct live_info *li, int mapped, struct tp_profile **out,
                      struct tp_diag *d);

int tp_capfile_parse(const uint8_t *data, size_t size, const char *display, struct tp_profile **out,
                     struct tp_diag *d)
{
	return parse_impl(data, size, display, NULL, 0, out, d);
}

/* `mapped`: data is a read-only file mapping whose pages may be given back once read. */
static int parse_impl(const uint8_t *data, size_t size, const char *display,
                      const struct live_info *li, int mapped, struct tp_profile **out,
                      struct tp_diag *d)
{
	*out = NULL;
	struct rd r;
	memset(&r, 0, sizeof r);
	r.path = display;
	r.d = d;
	r.bytes = data;
	r.drop = mapped;
	r.p = tp_profile_new();
	if (r.p == NULL)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", display);
	struct tp_profile *p = r.p;
	p->arch = TP_ARCH_CPU;
	p->source = tp_profile_str(p, "tpuprof-capture");
	p->stats.files_read = 1;
	struct tp_cursor c;
	tp_cur_init(&c, data, size, 0);
	int rc = read_header(&r, &c, size);
	if (rc == TP_OK)
		rc = read_blocks(&r, &c);
	if (rc != TP_OK)
		goto out;
	p->stats.bytes_missing = r.bytes_missing;
	{
		static const char *const hw[] = {"none", "hardware", "software"};
		tp_profile_set_meta(p, "hw_counters", hw[r.hw_kind]);
	}

	/* Calibration: needed as soon as there is one timed record. */
	int any = 0;
	int64_t lo = 0;
	for (size_t k = 0; k < r.nthr; k++) {
		for (uint64_t i = 0; i < r.thr[k].nrec; i++) {
			struct rec q;
			if (!(i % DROP_EVERY))
				drop_read(&r, &r.thr[k], i);
			get_rec(&r.thr[k], i, &q);
			if (!timed(q.kind))
				continue;
			if (!any && r.clock == TP_CAPFMT_CLOCK_TSC &&
			    (r.tick1 <= r.tick0 || r.ns1 <= r.ns0)) {
				rc = tp_diag_at(
				    d, TP_EFORMAT, display, TP_CAPFMT_OFF_TICK0,
				    "clock calibration (%llu, %llu) .. (%llu, %llu) is not "
				    "increasing",
				    (unsigned long long)r.tick0, (unsigned long long)r.ns0,
				    (unsigned long long)r.tick1, (unsigned long long)r.ns1);
				goto out;
			}
			int64_t ns = tick_ns(&r, q.ts);
			if (!any || ns < lo)
				lo = ns;
			any = 1;
		}
		drop_read(&r, &r.thr[k], r.thr[k].nrec);
	}
	r.base = lo;
	/* Tracks in the order threads first recorded (ties: tid), not the writer's order. */
	for (size_t k = 0; k < r.nthr; k++) {
		r.thr[k].first = UINT64_MAX;
		for (uint64_t i = 0; i < r.thr[k].nrec; i++) {
			struct rec q;
			get_rec(&r.thr[k], i, &q);
			if (timed(q.kind)) {
				r.thr[k].first = q.ts;
				break;
			}
		}
	}
	if (r.nthr > 1)
		qsort(r.thr, r.nthr, sizeof *r.thr, thr_cmp);
	for (size_t k = 0; k < r.nthr; k++)
		if ((rc = read_thread(&r, &r.thr[k])) != TP_OK)
			goto out;
	{
		uint64_t end_tick = r.clock == TP_CAPFMT_CLOCK_MONOTONIC ? r.ns1 : r.tick1;
		if ((rc = pair_async(&r, end_tick)) != TP_OK)
			goto out;
	}

	uint64_t read_total = 0, thr_dropped = 0;
	for (size_t k = 0; k < r.nthr; k++) {
		read_total += r.thr[k].nrec;
		thr_dropped += r.thr[k].dropped;
	}
	/* Drops of threads whose blocks were cut off (and events lost before any buffer existed)
	 * are in the SUMMARY only: count them too, so records_dropped matches the notes. */
	if (r.have_summary && r.sum_dropped > thr_dropped)
		p->stats.records_dropped += r.sum_dropped - thr_dropped;
	if (!r.complete) {
		if (r.have_summary && r.sum_records >= read_total)
			tp_profile_note(p, "dump truncated: %llu records lost",
			                (unsigned long long)(r.sum_records - read_total));
		else if (r.tick1 == 0)
			tp_profile_note(
			    p, "dump truncated: the process ended before tpuprof wrote any "
			       "records (number of records lost unknown)");
		else
			tp_profile_note(p, "dump truncated: an unknown number of records lost");
		if (r.have_summary && r.sum_records >= read_total)
			p->stats.records_dropped += r.sum_records - read_total;
	}
	if (r.have_summary && r.sum_dropped)
		tp_profile_note(p,
		                "capture dropped %llu records: a thread's buffer was full "
		                "(raise TPUPROF_RECORD_SIZE or tpuprof_enable's max_records)",
		                (unsigned long long)r.sum_dropped);
	if (r.have_summary && r.sum_str_dropped)
		tp_profile_note(p,
		                "capture could not keep %llu strings (string storage full); "
		                "their names are empty",
		                (unsigned long long)r.sum_str_dropped);
	if (r.unclosed)
		tp_profile_note(p,
		                "%llu scopes were still open when the dump was written: they end "
		                "at the dump time, are marked " TP_CAPFILE_KEY_CUT
		                "=1 and are left "
		                "out of latency and operator statistics",
		                (unsigned long long)r.unclosed);
	if (r.unmatched_ends)
		tp_profile_note(p, "%llu end records without a matching begin were ignored",
		                (unsigned long long)r.unmatched_ends);
	if (r.unknown_records || r.orphan_details)
		tp_profile_note(p,
		                "%llu records of unknown kinds and %llu detail records without "
		                "an operator were skipped",
		                (unsigned long long)r.unknown_records,
		                (unsigned long long)r.orphan_details);
	if (p->stats.blocks_skipped)
		tp_profile_note(p, "%llu blocks of unknown types were skipped",
		                (unsigned long long)p->stats.blocks_skipped);
	if (li) {
		tp_profile_note(
		    p,
		    "process died before the capture was finalised: %llu records of "
		    "%u threads recovered from the live files (session.tpc, thread-*.tpc)",
		    (unsigned long long)li->records, li->threads);
		if (li->disk_full)
			tp_profile_note(p,
			                "%u threads could not grow their live file (disk full): "
			                "their later records were dropped and are counted",
			                li->disk_full);
		if (li->blank)
			tp_profile_note(
			    p,
			    "%u live thread files were empty (their threads were starting "
			    "when the process died) and were skipped",
			    li->blank);
		if (li->no_calib)
			tp_profile_note(p,
			                "the process died before the clock was calibrated: times "
			                "assume 1 tick = 1 ns");
		tp_profile_set_meta(p, "capture_recovered", "1");
	}
	rc = tp_profile_finish(p);
	if (rc != TP_OK)
		tp_diag_set(d, rc, "%s: out of memory", display);
out:
	tp_free(r.thr);
	tp_free(r.async);
	if (rc != TP_OK) {
		tp_profile_free(p);
		return rc;
	}
	*out = p;
	return TP_OK;
}

/* The dump file of `dir` (a directory or the file itself), allocated. */
static char *dump_path(const char *dir)
{
	return tp_is_dir(dir) ? tp_path_join(dir, TP_CAPFILE_NAME) : tp_strdup(dir);
}

static int has_magic(const char *path)
{
	int ok = 0;
	/* tp_open_regular: a FIFO or device named capture.tpp must not block the probe. */
	int fd = tp_open_regular(path, NULL);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (fd >= 0 && !f)
		close(fd);
	if (f) {
		char m[TP_CAPFMT_MAGIC_SIZE];
		ok = fread(m, 1, sizeof m, f) == sizeof m &&
		     memcmp(m, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE) == 0;
		fclose(f);
	}
	return ok;
}

int tp_capfile_probe(const char *dir)
{
	char *path = dump_path(dir);
	if (path == NULL)
		return 0;
	int ok = has_magic(path);
	tp_free(path);
	if (!ok && tp_is_dir(dir)) {
		char *ses = tp_path_join(dir, TP_CAPFMT_SES_FILE);
		ok = ses && has_magic(ses);
		tp_free(ses);
	}
	return ok;
}

/* ---- rebuilding a dump from the live files of a process that died ---- */

static void b32(struct tp_buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	tp_buf_put(b, x, 4);
}
static void b64(struct tp_buf *b, uint64_t v)
{
	b32(b, (uint32_t)v);
	b32(b, (uint32_t)(v >> 32));
}
static void bblock(struct tp_buf *b, uint32_t type, uint64_t len)
{
	b32(b, type);
	b32(b, 0);
	b64(b, len);
}

static int name_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t lx = strlen(x), ly = strlen(y); /* thread-2 before thread-10 */
	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

/* One live thread file, checked: its published records and strings lie inside the file. */
struct live_thr {
	const uint8_t *data;
	size_t size;
	const char *path;
	uint64_t n, dropped, str_off;
	uint32_t scount, sbytes, sdropped, hw_kind, flags;
};

static int live_thread(const uint8_t *m, size_t size, const char *path, struct live_thr *lt,
                       struct tp_diag *d)
{
	lt->data = m;
	lt->size = size;
	lt->path = path;
	if (size < TP_CAPFMT_CHUNK_HEADER || memcmp(m, TP_CAPFMT_CHUNK_MAGIC, 8) != 0)
		return tp_diag_at(d, TP_EFORMAT, path, 0, "not a tpuprof live thread file");
	uint64_t cap = tp_le64(m + TP_CAPFMT_CK_OFF_REC_CAP);
	lt->str_off = tp_le64(m + TP_CAPFMT_CK_OFF_STR_OFF);
	lt->n = tp_le64(m + TP_CAPFMT_CK_OFF_PUB);
	uint64_t sp = tp_le64(m + TP_CAPFMT_CK_OFF_STR_PUB);
	lt->scount = (uint32_t)(sp >> 32);
	lt->sbytes = (uint32_t)sp;
	lt->dropped = tp_le64(m + TP_CAPFMT_CK_OFF_DROPPED);
	lt->sdropped = tp_le32(m + TP_CAPFMT_CK_OFF_STR_DROPPED);
	lt->hw_kind = tp_le32(m + TP_CAPFMT_CK_OFF_HW_KIND);
	lt->flags = tp_le32(m + TP_CAPFMT_CK_OFF_FLAGS);
	if (lt->n > cap || cap > (UINT64_MAX - TP_CAPFMT_CHUNK_HEADER) / TP_CAPFMT_RECORD_SIZE ||
	    TP_CAPFMT_CHUNK_HEADER + lt->n * TP_CAPFMT_RECORD_SIZE > size)
		return tp_diag_at(d, TP_EFORMAT, path, TP_CAPFMT_CK_OFF_PUB,
		                  "%llu published records do not fit in the file (%zu bytes)",
		                  (unsigned long long)lt->n, size);
	if (lt->str_off < TP_CAPFMT_CHUNK_HEADER + cap * TP_CAPFMT_RECORD_SIZE ||
	    lt->str_off > size || lt->sbytes > size - lt->str_off)
		return tp_diag_at(d, TP_EFORMAT, path, TP_CAPFMT_CK_OFF_STR_PUB,
		                  "string table (%u bytes at 0x%llx) lies outside the file",
		                  lt->sbytes, (unsigned long long)lt->str_off);
	return TP_OK;
}

/* Builds, in `img`, the dump the process would have written from its live files held in
 * memory: `m` (`msize` bytes) is session.tpc, `th` the thread files in K order. A thread file
 * whose header was never written (the process died while the thread was starting) holds
 * nothing and is skipped (counted in li->blank); any other malformed file is an error. */
static int rebuild_mem(const uint8_t *m, size_t msize, const char *ses_path,
                       const struct tp_capfile_live *th, size_t nth, struct tp_buf *img,
                       struct live_info *li, struct tp_diag *d)
{
	memset(li, 0, sizeof *li);
	if (msize < TP_CAPFMT_SES_SIZE)
		return tp_diag_at(d, TP_ETRUNC, ses_path, msize,
		                  "session file of %zu bytes (expected %d)", msize,
		                  TP_CAPFMT_SES_SIZE);
	struct live_thr *lt = tp_calloc(nth ? nth : 1, sizeof *lt);
	if (lt == NULL)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", ses_path);
	int rc = TP_OK;
	size_t nlt = 0;
	uint64_t total = 0, dropped = 0, sdropped = 0;
	for (size_t k = 0; k < nth; k++) {
		struct live_thr *cur = &lt[nlt];
		if ((rc = live_thread(th[k].data, th[k].size, th[k].path, cur, d)) != TP_OK) {
			int blank =
			    rc == TP_EFORMAT && (th[k].size < TP_CAPFMT_CHUNK_HEADER ||
			                         memcmp(th[k].data, "\0\0\0\0\0\0\0\0", 8) == 0);
			memset(cur, 0, sizeof *cur);
			if (!blank)
				goto out;
			memset(d, 0, sizeof *d);
			rc = TP_OK;
			li->blank++;
			continue;
		}
		if (total + cur->n < total) {
			rc = tp_diag_at(d, TP_EFORMAT, cur->path, TP_CAPFMT_CK_OFF_PUB,
			                "record counts overflow");
			goto out;
		}
		total += cur->n;
		dropped += cur->dropped;
		sdropped += cur->sdropped;
		if (cur->flags & TP_CAPFMT_CKF_DISK_FULL)
			li->disk_full++;
		nlt++;
	}
	dropped += tp_le64(m + TP_CAPFMT_SES_OFF_LOST);
	/* Header: the session's, with the latest calibration point it holds. */
	uint8_t h[TP_CAPFMT_HEADER_SIZE];
	memcpy(h, m, sizeof h);
	memset(h + TP_CAPFMT_OFF_FLAGS, 0, 4);
	if (tp_le32(h + TP_CAPFMT_OFF_CLOCK) == TP_CAPFMT_CLOCK_TSC &&
	    (tp_le64(h + TP_CAPFMT_OFF_TICK1) <= tp_le64(h + TP_CAPFMT_OFF_TICK0) ||
	     tp_le64(h + TP_CAPFMT_OFF_NS1) <= tp_le64(h + TP_CAPFMT_OFF_NS0))) {
		uint64_t t0 = tp_le64(h + TP_CAPFMT_OFF_TICK0), n0 = tp_le64(h + TP_CAPFMT_OFF_NS0);
		for (int i = 0; i < 8; i++) {
			h[TP_CAPFMT_OFF_TICK1 + i] = (uint8_t)((t0 + 1000000000u) >> (8 * i));
			h[TP_CAPFMT_OFF_NS1 + i] = (uint8_t)((n0 + 1000000000u) >> (8 * i));
		}
		li->no_calib = 1;
	}
	tp_buf_put(img, h, sizeof h);
	uint32_t hwk = tp_le32(m + TP_CAPFMT_SES_OFF_HW),
	         hwn = tp_le32(m + TP_CAPFMT_SES_OFF_HW + 4);
	if (hwn > TP_CAPFMT_MAX_HW)
		hwn = 0;
	bblock(img, TP_CAPFMT_BLK_HWINFO, 8 + (uint64_t)hwn * TP_CAPFMT_HW_NAME_SIZE);
	b32(img, hwk);
	b32(img, hwn);
	tp_buf_put(img, m + TP_CAPFMT_SES_OFF_HW + 8, (size_t)hwn * TP_CAPFMT_HW_NAME_SIZE);
	bblock(img, TP_CAPFMT_BLK_SUMMARY, 32);
	b32(img, (uint32_t)nlt);
	b32(img, 0);
	b64(img, total);
	b64(img, dropped);
	b64(img, sdropped);
	uint32_t nmeta = tp_le32(m + TP_CAPFMT_SES_OFF_META);
	enum { ENTRY = TP_CAPFMT_META_KEY + TP_CAPFMT_META_VALUE };
	if (nmeta > TP_CAPFMT_META_MAX)
		nmeta = 0;
	bblock(img, TP_CAPFMT_BLK_META, 8 + (uint64_t)nmeta * ENTRY);
	b32(img, nmeta);
	b32(img, 0);
	tp_buf_put(img, m + TP_CAPFMT_SES_OFF_META + 8, (size_t)nmeta * ENTRY);
	for (size_t k = 0; k < nlt; k++) {
		const struct live_thr *t = &lt[k];
		const uint8_t *c = t->data;
		bblock(img, TP_CAPFMT_BLK_THREAD, 56 + (uint64_t)t->sbytes);
		b64(img, tp_le64(c + TP_CAPFMT_CK_OFF_TID));
		b64(img, t->n);
		b64(img, t->dropped);
		b32(img, t->scount);
		b32(img, t->sbytes);
		b32(img, t->sdropped);
		b32(img, t->hw_kind);
		tp_buf_put(img, c + TP_CAPFMT_CK_OFF_NAME, TP_CAPFMT_COMM_SIZE);
		tp_buf_put(img, c + t->str_off, t->sbytes);
		bblock(img, TP_CAPFMT_BLK_RECORDS, t->n * TP_CAPFMT_RECORD_SIZE);
		tp_buf_put(img, c + TP_CAPFMT_CHUNK_HEADER, (size_t)(t->n * TP_CAPFMT_RECORD_SIZE));
	}
	bblock(img, TP_CAPFMT_BLK_END, 16);
	b64(img, total);
	b64(img, dropped);
	li->threads = (uint32_t)nlt;
	li->records = total;
	if (img->oom)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", ses_path);
out:
	tp_free(lt);
	return rc;
}

/* Loads session.tpc and the thread-K.tpc files of `dir` (in K order) and rebuilds. */
static int rebuild_live(const char *dir, struct tp_buf *img, struct live_info *li,
                        struct tp_diag *d)
{
	memset(li, 0, sizeof *li);
	char *sp = tp_path_join(dir, TP_CAPFMT_SES_FILE);
	if (sp == NULL)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	struct tp_file sf;
	int rc = tp_file_load(&sf, sp, d);
	if (rc != TP_OK) {
		tp_free(sp);
		return rc;
	}
	char **names = NULL;
	size_t nn = 0, cap_n = 0, nloaded = 0;
	struct tp_file *files = NULL;
	struct tp_capfile_live *th = NULL;
	{
		DIR *dd = opendir(dir);
		if (dd == NULL) {
			rc = tp_diag_set(d, TP_EIO, "%s: cannot list the directory", dir);
			goto out;
		}
		struct dirent *e;
		while ((e = readdir(dd)) != NULL) {
			size_t l = strlen(e->d_name);
			if (strncmp(e->d_name, "thread-", 7) != 0 || l < 11 ||
			    strcmp(e->d_name + l - 4, ".tpc") != 0)
				continue;
			char **g = tp_grow(names, sizeof *names, nn + 1, &cap_n);
			char *c = g ? tp_strdup(e->d_name) : NULL;
			if (c == NULL) {
				if (g)
					names = g;
				closedir(dd);
				rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
				goto out;
			}
			names = g;
			names[nn++] = c;
		}
		closedir(dd);
	}
	if (nn > 1)
		qsort(names, nn, sizeof *names, name_cmp);
	files = tp_calloc(nn ? nn : 1, sizeof *files);
	th = tp_calloc(nn ? nn : 1, sizeof *th);
	if (files == NULL || th == NULL) {
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	for (size_t k = 0; k < nn; k++) {
		char *path = tp_path_join(dir, names[k]);
		if (path == NULL) {
			rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
			goto out;
		}
		tp_free(names[k]);
		names[k] = path; /* freed with the names */
		if ((rc = tp_file_load(&files[k], path, d)) != TP_OK)
			goto out;
		nloaded = k + 1;
		th[k].path = path;
		th[k].data = files[k].data;
		th[k].size = files[k].size;
	}
	rc = rebuild_mem(sf.data, sf.size, sp, th, nn, img, li, d);
	if (rc == TP_OK && img->oom)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
out:
	for (size_t k = 0; k < nloaded; k++)
		tp_file_release(&files[k]);
	tp_free(files);
	tp_free(th);
	for (size_t k = 0; k < nn; k++)
		tp_free(names[k]);
	tp_free(names);
	tp_file_release(&sf);
	tp_free(sp);
	return rc;
}

int tp_capfile_rebuild_parse(const uint8_t *ses, size_t ses_size, const char *display,
                             const struct tp_capfile_live *threads, size_t n,
                             struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	struct tp_buf img;
	struct live_info li;
	tp_buf_init(&img);
	int rc = rebuild_mem(ses, ses_size, display, threads, n, &img, &li, d);
	if (rc == TP_OK && img.oom)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", display);
	if (rc == TP_OK)
		rc = parse_impl((const uint8_t *)img.data, img.len, display, &li, 0, out, d);
	tp_buf_free(&img);
	return rc;
}

/* 1 if the file at `path` is a dump marked final (the session ended normally). */
static int is_final(const char *path)
{
	uint8_t h[TP_CAPFMT_HEADER_SIZE];
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return 0;
	int ok = fread(h, 1, sizeof h, f) == sizeof h &&
	         memcmp(h, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE) == 0 &&
	         (tp_le32(h + TP_CAPFMT_OFF_FLAGS) & TP_CAPFMT_HF_FINAL);
	fclose(f);
	return ok;
}

int tp_capfile_read(const char *dir, struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	char *path = dump_path(dir);
	if (path == NULL)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	int rc;
	char *ses = tp_is_dir(dir) ? tp_path_join(dir, TP_CAPFMT_SES_FILE) : NULL;
	if (ses && access(ses, F_OK) == 0 && !is_final(path)) {
		/* The process died (or still runs): its live files hold everything recorded. */
		struct tp_buf img;
		struct live_info li;
		tp_buf_init(&img);
		rc = rebuild_live(dir, &img, &li, d);
		if (rc == TP_OK)
			rc = parse_impl((const uint8_t *)img.data, img.len, ses, &li, 0, out, d);
		tp_buf_free(&img);
	} else {
		struct tp_file f;
		rc = tp_file_load(&f, path, d);
		if (rc == TP_OK) {
			rc = parse_impl(f.data, f.size, path, NULL, f.mapped, out, d);
			tp_file_release(&f);
		}
	}
	tp_free(ses);
	tp_free(path);
	return rc;
}
