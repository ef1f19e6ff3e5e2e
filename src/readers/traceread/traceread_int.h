/*
 * traceread_int.h — declarations shared by the Chrome-trace reader's own files (and its unit
 * test); not for other modules, whose interface is traceread.h.
 *
 * The reader's data path: source.c holds a window of the file's bytes (struct trace_src); read.c
 * walks the top level and hands each event object to json.c, which parses it into a
 * struct trace_ev of raw member values; event.c turns an event into model tracks, slices,
 * counters and flow points; link.c pairs flows and adds Kineto's launch links; read.c then
 * closes what is still open, re-bases time and writes the notes. One struct trace_rd holds the
 * state of one call.
 */
#ifndef TP_TRACEREAD_INT_H
#define TP_TRACEREAD_INT_H

#include "readers/traceread/traceread.h"

#include <stdio.h>
#include <string.h>

#define CHUNK (1u << 20)       /* read size of the streaming source */
#define MAX_VALUE (1ull << 30) /* one event (or skipped top-level value) at most 1 GiB */
#define MAX_ARGS 64            /* args kept per event; more are counted */
#define MAX_RAW_ARG 256        /* nested args values kept as (truncated) JSON text */
#define MAX_DEPTH 64           /* nesting accepted inside one event */

static inline int is_ws(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ---------------------------------------------------------------------------------------- */
/* u64 -> int32 open-addressing map (event.c)                                                */
/* ---------------------------------------------------------------------------------------- */

struct trace_map_ent {
	uint64_t key;
	uint32_t val1; /* the value + 1; 0: an empty slot */
};
struct trace_map {
	struct trace_map_ent *e; /* owned; kept at most half full */
	size_t n, cap;           /* cap is 0 or a power of two */
};

/* 1 and *val set when key is present, else 0. */
int trace_map_get(const struct trace_map *m, uint64_t key, int32_t *val);
/* Sets key to val (val >= 0). TP_OK or TP_ENOMEM. */
int trace_map_put(struct trace_map *m, uint64_t key, int32_t val);
void trace_map_free(struct trace_map *m);

/* ---------------------------------------------------------------------------------------- */
/* Byte source (source.c)                                                                    */
/* ---------------------------------------------------------------------------------------- */

struct trace_src {
	FILE *fp;             /* NULL: memory source */
	const uint8_t *buf;   /* valid bytes [0, len) */
	uint8_t *own;         /* the buffer when reading a file or inflating */
	size_t len, cap, pos; /* pos: first unconsumed byte */
	uint64_t base;        /* offset of buf[0] in the (inflated) input */
	int eof, ioerr;
	struct trace_gz *gz; /* the inflater of gzip input, else NULL */
	int zerr;            /* gzip input: an error of the compressed data (TP_*), else 0 */
	uint64_t zoff;       /* its offset in the compressed input */
	char zmsg[200];      /* and its message */
};

/* Sets up s over `size` bytes at `data` (not copied; gzip data is inflated as it is read).
 * TP_OK or TP_ENOMEM; trace_src_free releases s either way. */
int trace_src_init_mem(struct trace_src *s, const uint8_t *data, size_t size);
/* Sets up s over the stream fp (read from its current position; not closed). TP_OK or
 * TP_ENOMEM; trace_src_free releases s either way. */
int trace_src_init_file(struct trace_src *s, FILE *fp);
void trace_src_free(struct trace_src *s);
/* Reads what is left of a gzip input, discarding it, so that its end marker and checksum are
 * checked even when the JSON ended before them (s->zerr says how that went; the window, base
 * and pos are left as they were). No-op for plain input. */
void trace_src_drain(struct trace_src *s);

/* Makes more bytes available after buf[len) keeping buf[pos..len) (indices relative to pos
 * stay valid). Returns the number of new bytes, 0 at end of input, -1 out of memory / too big. */
long trace_src_more(struct trace_src *s);
/* The byte at pos + i, refilling as needed; -1 at end of input, -2 on out of memory. */
int trace_src_peek(struct trace_src *s, size_t i);
/* Skips whitespace (and commas too when `commas`). Returns the next byte or -1 / -2. */
int trace_src_skip_ws(struct trace_src *s, int commas);

enum { SCAN_OK = 0, SCAN_EOF = 1, SCAN_BAD = 2, SCAN_NOMEM = 3 };

/* Finds the extent of the value at pos: sets *n so it spans [pos, pos + n). Objects and arrays
 * by bracket counting (contents are checked later by the event parser), strings to the closing
 * quote, scalars to the next delimiter. Returns SCAN_*. */
int trace_src_scan_value(struct trace_src *s, size_t *n);

/* ---------------------------------------------------------------------------------------- */
/* JSON values of one event (json.c)                                                         */
/* ---------------------------------------------------------------------------------------- */

struct json_val {      /* one JSON value inside the current event */
	const char *p; /* strings: content without quotes; others: the raw text */
	size_t n;
	char kind; /* 's' string, 'n' number, 'l' literal, 'o' object, 'a' array, 0 none */
	int esc;   /* string holds escapes or non-ASCII bytes */
};

/* A parse position inside contiguous bytes [p, e) holding one event object. */
struct json_cur {
	const char *p, *e;
	const char *err; /* first error message */
	const char *err_at;
	int short_; /* the error is "ran out of bytes": more input may complete the value */
	int lazy;   /* skip nested objects / arrays by bracket counting (validated later) */
};

/* The members of an event the reader looks at (kind 0: absent). */
struct trace_ev {
	struct json_val ph, name, cat, pid, tid, ts, dur, id, args, bp;
};

typedef int (*json_member_fn)(void *ctx, const struct json_val *k, const struct json_val *v);

/* Skips whitespace. Most calls find none: one compare rules out every byte above ' '. */
static inline void json_ws(struct json_cur *j)
{
	while (j->p < j->e && (unsigned char)*j->p <= ' ' && is_ws((unsigned char)*j->p))
		j->p++;
}

static inline int json_key_is(const struct json_val *k, const char *s)
{
	size_t n = strlen(s);
	return k->n == n && memcmp(k->p, s, n) == 0;
}

/* Parses the value at j->p into *v (nested objects and arrays below depth 0 skipped by bracket
 * counting when j->lazy). Returns 0, or -1 with j->err set. */
int trace_json_value(struct json_cur *j, struct json_val *v, int depth);
/* Parses the event object at j->p ('{') into *e in one pass (j->lazy: nested values skipped)
 * and leaves j->p after its '}'. Returns 0, or -1 with j->err and j->short_ set. */
int trace_json_event(struct json_cur *j, struct trace_ev *e);
/* Calls cb for each member of the object value `obj` (already validated by the first pass).
 * Returns 0, -1 with j->err set, or cb's status. */
int trace_json_members(struct json_cur *j, const struct json_val *obj, json_member_fn cb,
                       void *ctx);
/* A number value (or a string holding one) as a double; -1 if it is neither. */
int trace_val_real(const struct json_val *v, double *out);
/* Appends code point cp as UTF-8. */

/* ---------------------------------------------------------------------------------------- */
/* Reader state                                                                              */
/* ---------------------------------------------------------------------------------------- */

struct open_ev { /* an open B (per track) or b (per async key) */
	int64_t ts;
	uint32_t name, cat, id;
	uint32_t args;
	int32_t track;
	uint32_t pid;
};

struct trace_rd {
	const char *path;
	struct tp_diag *d;
	struct tp_profile *p;
	struct trace_src s;
	struct tp_buf tmp; /* decoded strings */
	struct trace_map tracks, devices, async_tracks, counters, pname, tname;
	struct stack { /* per track: open B events */
		struct open_ev *v;
		size_t n, cap;
	} * stk;
	size_t nstk, capstk;
	struct open_ev *async_open;
	size_t nasync, capasync;
	int64_t min_ns, max_ns;
	int any_ts;
	uint64_t events, n_x, n_be, n_i, n_async, n_counter, n_meta, n_flow;
	uint64_t unmatched_e, unclosed_b, unmatched_async, unclosed_async, x_no_dur, neg_dur;
	uint64_t no_ph, no_ts, unknown_ph, bad_ts, utf8_fixed, args_dropped, meta_ignored;
	int truncated;
	uint64_t trunc_off;
	int64_t cur_ts;       /* ts of the C event being read (counter_member) */
	struct fpt {          /* a flow point: s / t (start) or t / f (end) */
		uint64_t key; /* cat id << 32 | id id */
		int32_t track;
		int64_t ts;
	} * fstart, *fend;
	size_t nfstart, capfstart, nfend, capfend;
	uint64_t flows_matched, flows_unmatched, flows_corr;
	struct { /* direct-mapped cache of recent pid/tid/name/cat ids */
		uint32_t id, n;
		uint64_t h;
		const char *s; /* the string of id (arena-owned, stable) */
	} icache[512];
	struct {               /* arg keys by position in the previous event's args */
		const char *s; /* the key's string (arena-owned) */
		uint32_t n, id;
	} kcache[16];
	uint32_t k_cat, k_optype, ty_op, ty_step, ty_instant, ty_async;
	uint32_t ty_work[TP_WORK_COUNT]; /* the class types, interned on first use */
	uint32_t cat_id[16];             /* direct-mapped cache: category id -> class */
	uint8_t cat_w[16], cat_set[16];
	int64_t rank, world_size; /* distributedInfo's, -1 when absent */
};

/* The input offset of q, a pointer into the source's window. */
static inline uint64_t off_of(const struct trace_rd *r, const char *q)
{
	return r->s.base + (uint64_t)((const uint8_t *)q - r->s.buf);
}

/* Decodes a JSON string body into r->tmp (NUL-terminated): escapes resolved, invalid UTF-8 and
 * lone surrogates replaced by U+FFFD (counted), U+0000 dropped (strings are C strings).
 * Returns 0, -1 for a malformed escape, -2 out of memory. (json.c) */
int trace_decode_str(struct trace_rd *r, const struct json_val *v);

/* Handles one event whose members are in `e`, parsed from [q, q + n). (event.c) */
int trace_event(struct trace_rd *r, const char *q, size_t n, const struct trace_ev *e);
/* The type of a complete event (X, B/E) named `name` in category `cat`: its class (enum
 * tp_work of model.h) by category and name. */
uint32_t trace_event_type(struct trace_rd *r, uint32_t name, uint32_t cat);
/* Appends a slice [ts, end] (end clamped to ts) named `name` of type `type` to track. */
int trace_add_slice(struct trace_rd *r, int track, int64_t ts, int64_t end, uint32_t name,
                    uint32_t type, uint32_t args);

/* Pairs the flow points into model flows (times shifted by -base). TP_OK or TP_ENOMEM.
 * (link.c) */
int trace_pair_flows(struct trace_rd *r, int64_t base);
/* Adds a launch flow from each Kineto runtime call to the device activity of the same
 * args.correlation that no s/f flow reaches. TP_OK or TP_ENOMEM. */
int trace_link_correlations(struct trace_rd *r);

#endif /* TP_TRACEREAD_INT_H */
