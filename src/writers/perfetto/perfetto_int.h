/*
 * perfetto_int.h — private to src/writers/perfetto: the state the module's files share. The
 * writer's (struct pw: perfetto.c interns and writes descriptors and counters, parts.c records
 * and encodes the slices in parts, zpool.c compresses and writes) and the checker's
 * (struct ck: check.c reads packets and sequences, check_event.c checks track events). The
 * wire format itself is in pb.h.
 */
#ifndef TP_PERFETTO_INT_H
#define TP_PERFETTO_INT_H

#include <libdeflate.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wsync.h"
#include "writers/perfetto/pb.h"
#include "writers/perfetto/perfetto.h"
#include "writers/sink/sink.h"

/* ---------------------------------------------------------------------------------------- */
/* The writer's state (perfetto.c, zpool.c)                                                 */
/* ---------------------------------------------------------------------------------------- */

#define CHUNK_BYTES (256 * 1024)
/* Slices per part: each part starts its lanes' sequences over (interning, chunks), so fewer,
 * larger parts than the sink's default make a smaller trace (about 2.5 points on the cdm
 * dump, docs/perf-notes/cores-traces.md), for a part's memory per slot twice the default's. */
#define PW_PART_SLICES 2048
#define CACHE_SLOTS 32
/* A part's memo slots per lane: category, name, then CACHE_SLOTS annotation names and as many
 * string values (by argument position). */
#define MEMO_SLOTS (2 + 2 * CACHE_SLOTS)

/* A two-entry memo of the strings last used at one place of a lane (keys and values repeat
 * slice after slice, or alternate between two: tensorLd / tensorSt), so most interning needs no
 * hash lookup. An entry is only stored once the string is defined on the lane's sequence in
 * the part; [0] is the more recent. */
struct memo {
	const char *s[2];
	uint64_t iid[2];
};

struct tstate {
	uint32_t seq;    /* 0 = no events on this track */
	uint8_t seqv[8]; /* every event packet's first field: the sequence id (key, varint) */
	uint8_t seqn;    /* its length */
	int64_t last;    /* last timestamp written on the sequence's incremental clock */
	int64_t *ends;   /* open slices, innermost last */
	size_t depth, cap;
	size_t group; /* index of lane 0 of this track's model track */
	int32_t lane;
};

#define MAX_ZWORKERS 8
#define SLOTS_PER_WORKER 4
#define ZSLOTS (SLOTS_PER_WORKER * MAX_ZWORKERS)

/* One chunk handed to the compression workers: FREE -> QUEUED (main) -> BUSY (a worker owns
 * in/out) -> DONE (main writes it, in chunk order) -> FREE. */
enum { ZS_FREE, ZS_QUEUED, ZS_BUSY, ZS_DONE };
struct zslot {
	struct tp_pb in, out;
	size_t zn;
	int state;
};

/* The first entry, oldest first, of the positions [head, tail) of a ring of n entries of
 * `size` bytes whose int at `state_off` is `want`; NULL when none (the queues of the
 * compression workers and of the parts' writes). */
static inline void *pw_ring_first(void *ring, size_t size, size_t n, uint64_t head, uint64_t tail,
                                  size_t state_off, int want)
{
	for (uint64_t i = head; i < tail; i++) {
		char *e = (char *)ring + (i % n) * size;
		if (*(const int *)(const void *)(e + state_off) == want)
			return e;
	}
	return NULL;
}

/* Compression workers: chunks are queued in order into a ring of slots, compressed by any
 * worker, and written by the main thread strictly in queue order, so the file is the same
 * bytes for any number of workers (each chunk is compressed on its own, at one level). */
struct zpool {
	int nthreads; /* workers running */
	pthread_t th[MAX_ZWORKERS];
	struct libdeflate_compressor *z[MAX_ZWORKERS];
	struct tp_wsync sync;
	struct zslot slot[ZSLOTS];
	size_t nslots;       /* ring size in use: SLOTS_PER_WORKER per worker asked for */
	uint64_t head, tail; /* next chunk to write, next chunk to queue (head <= tail) */
	int quit;
	struct pw *w;
};

/* A part of the slices (tp_sink_parts, parts.c): its slices as its walk recorded them, each
 * with its track event and interned data already encoded (they depend on the part alone), the
 * state of its track's lanes at its start (tp_pw_decide, in order), and its compressed chunks.
 * A slice's record keeps what the order-dependent rest needs: its times (the lane's deltas and
 * ENDs), its name (for a diagnostic) and its track (its lane). */
struct prec {
	int64_t ts, dur;
	const char *name;
	uint32_t track; /* sink track (its lane) */
	uint32_t mid;   /* bytes of its packet's middle in the part's evb: the track event and the
	                 * interned data, framed as packet fields */
};

/* Makes room for `need` entries in an array of open slices' ends (*ends, *cap); -1 when out
 * of memory. */
static inline int tp_pw_ends_room(int64_t **ends, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap;
	int64_t *g = tp_grow(*ends, sizeof *g, need, &c);
	if (!g)
		return -1;
	*ends = g;
	*cap = c;
	return 0;
}

/* A lane of the part's track: its open slices' ends, its last timestamp, and whether the
 * part has started its sequence over yet (put_lane_head). */
struct plane {
	int64_t last;
	int64_t *ends;
	size_t depth, cap;
	int started;
};

/* Packets and each one's body length (the chunk cut needs them, cut_chunks). */
struct pbytes {
	struct tp_pb b;
	uint32_t *body;
	size_t n, cap;
};

/* An entry of a part's intern table: a string of one kind (IK_CAT .. IK_STR) by address, its
 * iid in the part (0: a string value used once, written inline) and the lanes (bit l for lane
 * l < 64 of the part's track) whose sequence has it defined. */
struct pent {
	const char *s;
	uint32_t kind, iid;
	uint64_t mask;
};

/* A part's walk: its slices' records and encoded events. Taken from a pool (struct pw's
 * walks) at the part's first slice and given back once its packets are made, so there are as
 * many as parts are between the two at once, not one per part slot. Pooled structs start with
 * their link in the pool. */
struct pwalk {
	void *next;
	struct prec *rec;
	size_t nrec, cap_rec;
	struct tp_pb evb; /* the slices' packet middles, in order (struct prec's mid) */
};

/* The interning that encodes a part's events while it is walked: its own table (iids from 1
 * per kind), its lanes' memos and the event's scratch. Taken from a pool (struct pw's ints) at
 * the part's first slice and given back once the walk is over (tp_pw_emit). */
struct pint {
	void *next;
	struct pent *h; /* the part's intern table */
	size_t nh, cap_h;
	uint32_t next_iid[4]; /* per kind, the last iid given in the part */
	struct memo *memo;    /* MEMO_SLOTS per lane (< 64), zeroed for lanes [0, nmemo) */
	size_t nmemo, cap_memo;
	struct tp_pb ev, in; /* a slice's track event, its interned data */
};

struct ppart {
	struct pwalk *wk; /* its walk (NULL: no slice yet, or given back) */
	struct pint *it;  /* its interning while it is walked (NULL: none) */
	int oom;          /* recording ran out of memory */
	size_t group;     /* the part's track: sink tracks group .. group + nlanes - 1 */
	struct plane *lane;
	size_t nlanes, cap_lanes;
	struct pbytes head;
	struct tp_pb zb; /* the part's compressed chunks, framed (its packets, uncompressed) */
	int err;         /* the encoding's status, reported in order (tp_pw_emit2) */
};

/* What encoding a part's packets needs only while it runs (tp_pw_encode_slot): the packets,
 * a packet's scratch and the compressor. Kept in a pool (struct pw's encs), so
 * there are as many as parts were encoded at once, not one per part slot. */
struct penc {
	void *next;
	struct pbytes out; /* compressing: the packets not yet in a chunk */
	size_t cn, clen;   /* the chunk being gathered from out's start: packets, bytes */
	struct tp_pb pkt;
	struct libdeflate_compressor *z;
};

/* A part's chunks waiting to be written at their place (struct pw's write queue): FREE ->
 * QUEUED (tp_pw_emit2, in order: its offset given) -> BUSY (a thread writes it) -> FREE. */
enum { WQ_FREE, WQ_QUEUED, WQ_BUSY };
struct wq_ent {
	struct tp_pb b;
	uint64_t off;
	int state;
};

struct pw {
	struct tp_afile f;
	const char *path;
	struct tp_diag *d;
	int compress;
	int level;
	int full_args;
	struct libdeflate_compressor *z;
	struct zpool zp;
	struct tp_pb chunk; /* packets not yet written / compressed */
	struct tp_pb zout;
	struct tp_pb pkt; /* one packet being built: an event's sequence id (then, for a counter,
	                   * its track_event), or a descriptor packet's whole body */
	uint8_t tsb[11];  /* an event's timestamp field, written last (event_head) */
	uint8_t tsn;      /* its length, 0 = none */
	struct tstate *ts;
	size_t nts, cap_ts;
	size_t cur_group; /* model track whose lanes may have open slices */
	int have_group;
	uint64_t slices;
	struct ppart *parts; /* the part slots */
	size_t nparts;
	/* The pools (lists of struct penc, pwalk, pint not in use; under wsync.mu while
	 * at_offsets). */
	void *encs, *walks, *ints;
	/* Chunk buffers written out, kept for the parts encoded next (as many as parts are
	 * between their encoding and their write at once); room for nparts + nwq. */
	struct tp_pb *spare;
	size_t nspare;
	/* The parts' write queue: entries [wq_head, wq_tail) (index % nwq) hold parts given their
	 * place (poff: the next part's) and not written yet; any thread that encodes a part
	 * writes them first (pwrite), the driving thread the last ones (tp_pw_parts_done). Under
	 * wsync.mu while at_offsets. */
	struct tp_wsync wsync;
	struct wq_ent *wq;
	size_t nwq;
	uint64_t wq_head, wq_tail, poff;
	int at_offsets; /* the parts are being written at their offsets (the stream waits) */
	int werr;       /* errno of the first failed write of a part */
};

/* tp_perfetto_write with parts of part_slices slices (0: TP_SINK_PART_SLICES). A part is
 * self-contained (each lane it uses starts its sequence over), so the bytes depend on the part
 * size, never on the thread count (tests use small parts). */
int tp_perfetto_write_parts(const struct tp_profile *p, const struct tp_analysis *a,
                            const char *path, const struct tp_perfetto_opts *o, size_t part_slices,
                            struct tp_diag *d);

/* The parts' callbacks (struct tp_sink_parts; ctx is the struct pw): slots, a slice recorded
 * (any thread), the part's lanes in order (tp_pw_decide, perfetto.c), its packets interned,
 * encoded and compressed (any thread), and its chunks written in order. */
int tp_pw_slots(void *ctx, size_t n);
int tp_pw_part_slice(void *ctx, size_t slot, const struct tp_sink_slice *s);
int tp_pw_emit(void *ctx, size_t slot);
int tp_pw_encode_slot(void *ctx, size_t slot);
int tp_pw_emit2(void *ctx, size_t slot);

/* Decides part pp's lanes (the driving thread, parts in order): the previous track's closing
 * END packets and the lanes' state at the part's start; TP_OK or an error with w->d set. */
int tp_pw_decide(struct pw *w, struct ppart *pp);

/* A SLICE_END packet of track state t, delta after the sequence's last timestamp (the most
 * frequent packet: every slice has one): { sequence id, track_event { type SLICE_END },
 * timestamp delta }. Its body length (< 128), and its bytes at q (body + 2, plus slack for an
 * 8-byte copy of the sequence id). */
size_t tp_pw_end_body(const struct tstate *t, uint64_t delta);
void tp_pw_end_bytes(uint8_t *q, const struct tstate *t, uint64_t delta);

/* The body of a packet that starts sequence seq (the track of that uuid) over: flags CLEARED |
 * NEEDS_INCREMENTAL_STATE, first_packet_on_sequence when `first`, the defaults (clock 64, the
 * track) and a ClockSnapshot putting clock 64 (incremental) and boot time at `at` ns. */
void tp_pw_seq_head(struct tp_pb *b, uint32_t seq, int first, int64_t at);

/* Appends the SLICE_END packet at ts of track state t whose last timestamp is `last`; -1 when
 * out of memory. */
int tp_pw_put_end(struct pbytes *o, const struct tstate *t, int64_t last, int64_t ts);

/* After the parts, before the driving thread writes again: writes what the queue holds and
 * moves the stream to the parts' end. TP_OK, or an error with w->d set. */
int tp_pw_parts_done(struct pw *w);

/* Frees the part slots. */
void tp_pw_parts_free(struct pw *w);

/* Writes the packets of w->chunk: compressed (handed to the workers, or inline without them)
 * or as they are. TP_OK, or an error with w->d set. */
int tp_perfetto_flush_chunk(struct pw *w);

/* The framing of a compressed chunk of zn bytes, Trace.packet { compressed_packets }, into
 * hdr (24 bytes); returns its length. */
size_t tp_pw_zhead(uint8_t *hdr, size_t zn);

/* Compresses or waits for every queued chunk and writes them all, in order. */
int tp_perfetto_zcollect(struct pw *w);

/* Starts the compression workers when they can help (compressing, more than one CPU):
 * `threads` is how many threads the writer may use in all, the calling (encoding) thread
 * included; 0 = tp_jobs_default(). At most MAX_ZWORKERS. Any failure just leaves fewer
 * workers (none: compression inline); the output bytes are the same either way. */
void tp_perfetto_zstart(struct pw *w, int threads);

/* Stops the workers (after what is queued) and frees the chunk slots. */
void tp_perfetto_zstop(struct pw *w);

/* ---------------------------------------------------------------------------------------- */
/* The checker's state (check.c, check_event.c)                                             */
/* ---------------------------------------------------------------------------------------- */

/* A small hash map of uint64 keys to indices (check.c). */
struct hset {
	uint64_t *k;
	size_t *v; /* value + 1; 0 = empty slot */
	size_t cap, n;
};

/* Returns the slot of k (inserting with value v if absent and `insert`), or NULL when absent
 * (or out of memory, reported through *oom). */
size_t *tp_ck_hs_find(struct hset *h, uint64_t k, int insert, size_t v, int *oom);

enum { IK_CAT, IK_NAME, IK_KEY, IK_STR, IK_COUNT };

struct seq {
	uint32_t id;
	int cleared;
	uint32_t def_clock;
	uint64_t def_track;
	int has_def_track;
	struct hset interned[IK_COUNT];
	/* One sequence-scoped clock is enough for the writers we check. */
	uint32_t clk_id;
	int clk_incremental;
	uint64_t clk_value, clk_boot; /* snapshot pair */
	uint64_t clk_last;            /* last value on an incremental clock */
};

enum { TK_PLAIN, TK_PROCESS, TK_THREAD, TK_COUNTER };

struct track {
	uint64_t uuid;
	int kind;
	int64_t last_ts;
	int64_t *open; /* begin timestamps */
	size_t depth, cap;
};

struct ck {
	const char *path;
	struct tp_diag *d;
	struct tp_perfetto_check_report *r;
	struct seq *seqs;
	size_t nseqs, cap_seqs;
	struct hset seq_ix;
	struct track *tracks;
	size_t ntracks, cap_tracks;
	struct hset track_ix;
	struct hset flows_started, flows_ended;
	uint64_t off;       /* file offset of the current top-level record */
	uint64_t inner_off; /* offset inside the decompressed chunk, or UINT64_MAX */
	int oom;
	int have_ts;
	uint8_t *zbuf;
	size_t zcap;
	uint64_t file_size;      /* input bytes, for the decompression limit */
	uint64_t inflated_total; /* bytes inflated from every compressed chunk so far */
	/* Visitor (tp_perfetto_check_visit): interned strings, stored as a 4-byte length and
	 * the bytes at the offset an intern set maps the iid to; the event being decoded. */
	tp_perfetto_visit_fn fn;
	void *ctx;
	struct tp_buf pool;
	struct tp_perfetto_arg *args;
	size_t nargs, cap_args;
	uint64_t *flows[2];
	size_t nflows[2], cap_flows[2];
};

/* A format error at the current packet; returns TP_EFORMAT. */
__attribute__((format(printf, 2, 3))) int tp_ck_bad(struct ck *c, const char *fmt, ...);
/* Out of memory; returns TP_ENOMEM. */
int tp_ck_nomem(struct ck *c);
/* The track a descriptor declared with uuid, or NULL. */
struct track *tp_ck_find_track(struct ck *c, uint64_t uuid);

/* One protobuf field as read by tp_ck_next_field. */
struct fld {
	unsigned num, wt;
	uint64_t v;       /* varint / fixed value */
	const uint8_t *p; /* LEN payload */
	size_t n;
};

/* 1 = a field was read, 0 = end of message, -1 = malformed. */

/* Reads the field at *p (before end): 1 = a field was read, 0 = end of message, -1 =
 * malformed. */
int tp_ck_next_field(const uint8_t **p, const uint8_t *end, struct fld *f);

/* Checks that iid is interned on s as kind (IK_*); with a visitor, *str / *n get its string. */
int tp_ck_need_iid_str(struct ck *c, struct seq *s, int kind, uint64_t iid, const char *what,
                       const char **str, size_t *n);

/* Returns from the calling function when field f does not have wire type w. */
#define EXPECT_WT(c, f, w, what)                                                                   \
	do {                                                                                       \
		if ((f).wt != (w))                                                                 \
			return tp_ck_bad((c), "%s has wire type %u, expected %u", (what), (f).wt,  \
			                 (w));                                                     \
	} while (0)

/* Stores varint field f in dst (a uint64_t) and sets its presence flag has; returns from the
 * calling function, as EXPECT_WT, when f is not a varint. */
#define TAKE_VARINT(c, f, what, dst, has)                                                          \
	do {                                                                                       \
		EXPECT_WT(c, f, TP_PB_VARINT, what);                                               \
		(dst) = (f).v;                                                                     \
		(has) = 1;                                                                         \
	} while (0)

/* Checks track event p[0..n) of sequence s (NULL when it has none) at resolved time ts (when
 * has_ts) and hands it to the visitor. */
int tp_ck_track_event(struct ck *c, struct seq *s, int has_ts, int64_t ts, const uint8_t *p,
                      size_t n);

#endif /* TP_PERFETTO_INT_H */
