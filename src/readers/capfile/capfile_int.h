/*
 * capfile_int.h — declarations shared by the capture reader's own files (and its unit test);
 * not for other modules, whose interface is capfile.h.
 *
 * The reader's passes: blocks.c reads the header and the blocks (pass 1: each THREAD block and
 * its RECORDS as a struct cap_thr), capfile.c calibrates the clock and orders the threads,
 * thread.c turns each thread's records into a track of slices and counters (pass 2), async.c
 * pairs the async ranges of all threads, and capfile.c writes the notes. live.c rebuilds the
 * dump of a process that died from its live files and parses that. One struct cap_rd holds
 * the state of one call.
 */
#ifndef TP_CAPFILE_INT_H
#define TP_CAPFILE_INT_H

#include "readers/capfile/capfile.h"

#include "capture/capfmt.h"

#include <string.h>

/* The argument keys and slice types the reader writes, each interned on its first use
 * (struct cap_rd's `key` and `type` memos): every slice needs a handful, and interning a key
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
enum { T_ACTIVITY, T_STEP, T_OP, T_RANGE, T_MARK, T_RUNTIME, NTYPES };

/* One thread of the dump as found in pass 1. */
struct cap_thr {
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

struct cap_rd {
	const char *path;
	struct tp_diag *d;
	struct tp_profile *p;
	int mode, clock;
	uint64_t tick0, ns0, tick1, ns1;
	int64_t base; /* absolute ns of the earliest event */
	struct cap_thr *thr;
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

/* What a rebuild from live files found (notes for the profile). */
struct live_info {
	uint32_t threads, disk_full, no_calib, blank;
	uint64_t records;
};

struct rec {
	uint64_t ts;
	uint8_t kind, flags;
	uint16_t aux;
	uint32_t name;
	uint64_t a, b;
	uint64_t off;
};

/* Record i of t (i < t->nrec: block_records checked that the bytes are there). */
static inline void get_rec(const struct cap_thr *t, uint64_t i, struct rec *x)
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
static inline void drop_read(const struct cap_rd *r, const struct cap_thr *t, uint64_t upto)
{
	if (r->drop && t->nrec)
		tp_map_drop(r->bytes, (size_t)t->recs_off,
		            (size_t)(t->recs_off + upto * TP_CAPFMT_RECORD_SIZE));
}

static inline int timed(uint8_t kind)
{
	return kind >= TP_CAPFMT_REC_ACT_BEGIN && kind <= TP_CAPFMT_REC_RANGE_END;
}

/* Absolute nanoseconds of a tick, saturated to the int64 range. */
static inline int64_t tick_ns(const struct cap_rd *r, uint64_t tick)
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

static inline int64_t rel_ns(const struct cap_rd *r, uint64_t tick)
{
	/* Wrapping subtraction: wild input must not overflow a signed type. */
	return (int64_t)((uint64_t)tick_ns(r, tick) - (uint64_t)r->base);
}

/* Interns `len` bytes of dump text as valid UTF-8 of at most TP_CAPFMT_MAX_STR bytes; returns
 * the string id. (capfile.c) */
uint32_t cap_clean_str(struct tp_profile *p, const char *s, size_t len);
/* The same for a C string; returns the interned copy. */
const char *cap_clean_cstr(struct tp_profile *p, const char *s);
/* Parses a dump image; `li` (may be NULL) holds what a rebuild from live files found,
 * `mapped` says data is a read-only file mapping whose pages may be given back once read.
 * Contract of tp_capfile_parse otherwise. */
int cap_parse(const uint8_t *data, size_t size, const char *display, const struct live_info *li,
              int mapped, struct tp_profile **out, struct tp_diag *d);

/* Pass 1 (blocks.c): the header at c (the profile's device and meta), then the blocks. TP_OK
 * or an error with r->d filled. */
int cap_read_header(struct cap_rd *r, struct tp_cursor *c, size_t size);
int cap_read_blocks(struct cap_rd *r, struct tp_cursor *c);

/* Pass 2 (thread.c): thread t's records into a new track. */
int cap_read_thread(struct cap_rd *r, const struct cap_thr *t);
/* Pairs the async begins and ends collected from all threads into slices (async.c); ranges
 * still open end at end_tick. */
int cap_pair_async(struct cap_rd *r, uint64_t end_tick);

/* Loads session.tpc and the thread-K.tpc files of `dir` and rebuilds the dump image into img
 * (live.c). */
int cap_rebuild_live(const char *dir, struct tp_buf *img, struct live_info *li, struct tp_diag *d);

#endif /* TP_CAPFILE_INT_H */
