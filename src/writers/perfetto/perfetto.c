/*
 * perfetto.c — the Perfetto trace writer: a tp_sink that encodes track descriptors, slices,
 * counters and flows as TracePackets (shared/specs/perfetto.md) and hands them to the output
 * end (zpool.c), which compresses and writes them.
 *
 * Size matters (tens of millions of slices), so per slice we write only what is not implied:
 *   - one packet sequence per timeline track; its first packet clears incremental state and
 *     sets TracePacketDefaults { timestamp_clock_id 64, track_event_defaults.track_uuid }
 *     plus a ClockSnapshot making clock 64 an incremental clock (value 0 = trace time 0), so
 *     events omit track_uuid and carry the time since the previous event of the sequence;
 *   - event names, categories, annotation names and string values are interned per
 *     sequence (iids are global, each defined once per sequence since its clear);
 *   - END events are only {sequence id, type, timestamp}; they are written before any BEGIN
 *     at the same timestamp (perfetto.md §3.3), and every track's events are in time order;
 *   - event packets carry no sequence_flags (event_head), which saves bytes on every slice;
 *     flow ids stay in the current fixed64 fields (parts.c, put_flow);
 *   - in an event packet the sequence id comes first, then the track_event (flow ids right
 *     after its type), and the timestamp delta last (protobuf field order is free): the bytes
 *     that change from packet to packet then sit together, which the compressor rewards
 *     (parts.c: put_slice_packet, put_event);
 *   - packets are batched into zlib-format `compressed_packets` chunks of 256 KiB,
 *     compressed with libdeflate (same format as zlib's deflate, several times faster) by
 *     the pool of zpool.c; chunks are written in order, so the bytes do not depend on the
 *     number of workers.
 *
 * Owns: the output file (through tp_afile), the chunk and scratch buffers, the workers
 * (started and stopped through zpool.c), per-track state (open-slice stacks,
 * O(depth)) and the intern maps (at most IMAP_MAX_SLOTS entries each). Nothing grows with the
 * number of slices written or of distinct strings.
 */
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writers/perfetto/perfetto.h"
#include "writers/perfetto/perfetto_int.h"

/* ---------------------------------------------------------------------------------------- */
/* Intern maps keyed by string address.                                                      */
/* ---------------------------------------------------------------------------------------- */

static size_t ihash(const char *s, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & (cap - 1);
}

static struct ient *imap_find(const struct imap *m, const char *s)
{
	if (!m->cap)
		return NULL;
	size_t h = ihash(s, m->cap);
	while (m->e[h].s) {
		if (m->e[h].s == s)
			return &m->e[h];
		h = (h + 1) & (m->cap - 1);
	}
	return NULL;
}

/* Slot of a string in a lazy map's table of recently seen strings. Hashed from the first
 * bytes of the content, not from the address: which strings collide decides which are
 * written inline, and addresses change from run to run (ASLR) while the file must be the
 * same bytes every time (and with any --jobs). */
static size_t seen_slot(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < 24 && s[i]; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return (size_t)(h >> 20) & (SEEN_SLOTS - 1);
}

static int ient_used(const void *e)
{
	return ((const struct ient *)e)->s != NULL;
}

static size_t ient_hash(const void *e, size_t cap)
{
	return ihash(((const struct ient *)e)->s, cap);
}

static struct ient *imap_get(struct imap *m, const char *s)
{
	if (m->n * 2 >= m->cap && m->cap >= IMAP_MAX_SLOTS) {
		/* Full: forget every entry rather than grow with the number of distinct strings
		 * (a million layer names). A string used again gets a new iid and is defined
		 * again on each sequence; old iids stay valid where they were defined (iids are
		 * never reused), so the tracks' memos may keep returning them. */
		memset(m->e, 0, m->cap * sizeof *m->e);
		m->n = 0;
		m->restarted = 1;
	}
	if (m->n * 2 >= m->cap) {
		struct ient *ne = tp_oa_grow(m->e, &m->cap, 256, sizeof *ne, ient_used, ient_hash);
		if (!ne)
			return NULL;
		m->e = ne;
	}
	size_t h = ihash(s, m->cap);
	while (m->e[h].s) {
		if (m->e[h].s == s)
			return &m->e[h];
		h = (h + 1) & (m->cap - 1);
	}
	m->e[h].s = s;
	m->e[h].iid = ++m->next_iid;
	m->e[h].group = SIZE_MAX;
	m->e[h].mask = 0;
	m->n++;
	return &m->e[h];
}

/* Whether a use of entry e on the sequence of track state t defines it there (the sequence has
 * not seen it yet), noting that it has now. Lanes past 63 have no mask bit: every use defines. */
static int defines(struct ient *e, const struct tstate *t)
{
	if (t->lane >= 64)
		return 1;
	if (e->group != t->group) {
		e->group = t->group;
		e->mask = 0;
	}
	uint64_t bit = (uint64_t)1 << t->lane;
	int known = (e->mask & bit) != 0;
	e->mask |= bit;
	return !known;
}

/* Returns the iid of s for the sequence of track state t, with *define set when that sequence
 * has not seen it (the packet then carries its interned entry). 0 on oom (w->in.oom set) or,
 * for a lazy map, on a string's first use (write it inline). */
static uint64_t intern(struct pw *w, struct imap *m, const struct tstate *t, const char *s,
                       int *define)
{
	struct ient *e = m->lazy ? imap_find(m, s) : NULL;
	if (!e && m->lazy) {
		/* Lazy map: a string is interned on its second use; the first is written inline.
		 * Unique strings (layer names, shapes) are cheaper inline than as an interned
		 * entry plus a reference, and only a fixed-size table of recently seen addresses
		 * remembers them, so a million unique strings cost no memory. (A string seen again
		 * after its slot was reused is just written inline once more.) */
		size_t slot = seen_slot(s);
		if (m->seen[slot] != s) {
			m->seen[slot] = s;
			return 0;
		}
	}
	if (!e)
		e = imap_get(m, s);
	if (!e) {
		w->in.oom = 1;
		return 0;
	}
	*define = defines(e, t);
	return e->iid;
}

/* intern() through a two-entry memo of the track: the miss of both entries (out of line). */
static uint64_t intern_miss(struct pw *w, struct imap *m, struct tstate *t, struct memo *mo,
                            const char *s, int *define)
{
	uint64_t iid = intern(w, m, t, s, define);
	if (mo && iid && t->lane < 64) {
		mo->s[1] = mo->s[0];
		mo->iid[1] = mo->iid[0];
		mo->s[0] = s;
		mo->iid[0] = iid;
	}
	return iid;
}

/* intern() through a two-entry memo of the track; hits are inlined: on the latest (most
 * calls) and on the other (which then becomes the latest; a third of the calls on g200k:
 * keys and values alternating at one argument position). */
static inline uint64_t intern_memo(struct pw *w, struct imap *m, struct tstate *t, struct memo *mo,
                                   const char *s, int *define)
{
	*define = 0;
	if (mo && mo->s[0] == s)
		return mo->iid[0];
	if (mo && mo->s[1] == s) {
		const char *ts = mo->s[0];
		uint64_t ti = mo->iid[0];
		mo->s[0] = s;
		mo->iid[0] = mo->iid[1];
		mo->s[1] = ts;
		mo->iid[1] = ti;
		return mo->iid[0];
	}
	return intern_miss(w, m, t, mo, s, define);
}

static void imap_free(struct imap *m)
{
	tp_free(m->seen);
	tp_free(m->e);
	memset(m, 0, sizeof *m);
}

/* Appends one Trace.packet record whose body is w->pkt (an event's sequence id, then for a
 * counter its track_event; a descriptor packet's whole body), then an event's timestamp
 * (w->tsb), last for the compressor (put_slice_packet, parts.c, says why). */
static int put_packet(struct pw *w)
{
	if (w->pkt.oom)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	size_t body = w->pkt.len + w->tsn;
	size_t need = 11 + body;
	if (w->chunk.len && w->chunk.len + need > CHUNK_BYTES) {
		int st = tp_perfetto_flush_chunk(w);
		if (st)
			return st;
	}
	if (tp_pb_reserve(&w->chunk, need))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	uint8_t *o = w->chunk.p + w->chunk.len;
	*o++ = (uint8_t)(F_TRACE_PACKET << 3 | TP_PB_LEN);
	o += tp_pb_varint_to(o, body);
	memcpy(o, w->pkt.p, w->pkt.len);
	o += w->pkt.len;
	memcpy(o, w->tsb, w->tsn);
	o += w->tsn;
	w->chunk.len = (size_t)(o - w->chunk.p);
	w->pkt.len = 0;
	w->tsn = 0;
	return TP_OK;
}

/* Starts an event packet on track state t at time ts: its sequence id in w->pkt (the packet's
 * first field) and its timestamp delta in w->tsb (the last, next to the following packet's
 * varying head).
 *
 * No sequence_flags: SEQ_NEEDS_INCREMENTAL_STATE (2) only asks the reader to SKIP the packet
 * while the sequence's incremental state is invalid (perfetto_trace.proto, enum
 * TracePacket.SequenceFlags: "The trace reader should skip this packet if incremental state is
 * not valid on this sequence"); trace_processor's ProtoTraceReader::ParsePacket tests the flag
 * only for that skip and resolves interned data and packet defaults from the sequence's state
 * either way. A file writer's sequences never lose packets (no previous_packet_dropped), and
 * each one's first packet carries CLEARED, so that state is always valid and the flag changed
 * nothing but cost 2 raw bytes per packet (4 per slice). tpuprof check still requires the
 * CLEARED first packet and every iid / default / clock defined before its use. */
static int event_head(struct pw *w, struct tstate *t, int64_t ts)
{
	if (ts < t->last)
		return tp_diag_set(
		    w->d, TP_ERANGE,
		    "%s: event at %lld ns before the previous one (%lld ns) on its track", w->path,
		    (long long)ts, (long long)t->last);
	w->pkt.len = 0;
	if (tp_pb_reserve(&w->pkt, 32))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	uint8_t *o = w->pkt.p;
	memcpy(o, t->seqv, sizeof t->seqv); /* seqn bytes of it count */
	o += t->seqn;
	w->pkt.len = (size_t)(o - w->pkt.p);
	w->tsb[0] = F_PKT_TIMESTAMP << 3 | TP_PB_VARINT;
	w->tsn = (uint8_t)(1 + tp_pb_varint_to(w->tsb + 1, (uint64_t)(ts - t->last)));
	t->last = ts;
	return TP_OK;
}

/* A SLICE_END packet, written straight into the chunk (tp_pw_end_bytes). */
static int emit_end(struct pw *w, struct tstate *t, int64_t ts)
{
	if (ts < t->last)
		return event_head(w, t, ts); /* reports the error */
	uint64_t delta = (uint64_t)(ts - t->last);
	size_t n = tp_pw_end_body(t, delta);
	if (w->chunk.len && w->chunk.len + 11 + n > CHUNK_BYTES) { /* as put_packet */
		int st = tp_perfetto_flush_chunk(w);
		if (st)
			return st;
	}
	if (tp_pb_reserve(&w->chunk, n + 2 + sizeof t->seqv)) /* + the seqv copy's slack */
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	tp_pw_end_bytes(w->chunk.p + w->chunk.len, t, delta);
	w->chunk.len += n + 2;
	t->last = ts;
	return TP_OK;
}

/* Closes the open slices of t that end at or before `upto`. */
static int pop_ends(struct pw *w, struct tstate *t, int64_t upto)
{
	while (t->depth && t->ends[t->depth - 1] <= upto) {
		int st = emit_end(w, t, t->ends[--t->depth]);
		if (st)
			return st;
	}
	return TP_OK;
}

/* Closes everything still open on the lanes of the current model track. */
static int flush_group(struct pw *w)
{
	if (!w->have_group)
		return TP_OK;
	for (size_t i = w->cur_group; i < w->nts && w->ts[i].group == w->cur_group; i++) {
		int st = pop_ends(w, &w->ts[i], INT64_MAX);
		if (st)
			return st;
	}
	w->have_group = 0;
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Sink callbacks                                                                            */
/* ---------------------------------------------------------------------------------------- */

static int pw_begin(void *ctx, const struct tp_profile *p, const struct tp_analysis *a)
{
	(void)ctx;
	(void)p;
	(void)a;
	return TP_OK;
}

static int pw_track(void *ctx, const struct tp_sink_track *t)
{
	struct pw *w = ctx;
	struct tstate *n = tp_grow(w->ts, sizeof *w->ts, t->index + 1, &w->cap_ts);
	if (!n)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	w->ts = n;
	while (w->nts <= t->index)
		memset(&w->ts[w->nts++], 0, sizeof *w->ts);
	struct tstate *s = &w->ts[t->index];
	s->group = t->index - (size_t)(t->lane > 0 ? t->lane : 0);
	s->lane = t->lane;
	int timeline = !t->is_process && !t->is_container;

	/* TrackDescriptor */
	struct tp_pb *b = &w->pkt;
	b->len = 0;
	size_t td = tp_pb_open(b, F_PKT_TRACK_DESCRIPTOR);
	tp_pb_uint(b, F_TD_UUID, t->uuid);
	if (t->is_process) {
		size_t pd = tp_pb_open(b, F_TD_PROCESS);
		tp_pb_int(b, F_PD_PID, t->pid);
		tp_pb_str(b, F_PD_NAME, t->name ? t->name : "");
		tp_pb_close(b, pd);
	} else if (t->nested && !t->is_counter) {
		/* Captured threads: real thread tracks, grouped under the process by pid. */
		size_t thd = tp_pb_open(b, F_TD_THREAD);
		tp_pb_int(b, F_THD_PID, t->pid);
		tp_pb_int(b, F_THD_TID, t->tid);
		tp_pb_str(b, F_THD_NAME, t->name ? t->name : "");
		tp_pb_close(b, thd);
	} else {
		tp_pb_str(b, F_TD_NAME, t->name ? t->name : "");
		if (t->parent_uuid)
			tp_pb_uint(b, F_TD_PARENT, t->parent_uuid);
		if (t->is_counter) {
			size_t cd = tp_pb_open(b, F_TD_COUNTER);
			if (t->unit && *t->unit)
				tp_pb_str(b, F_CD_UNIT_NAME, t->unit);
			tp_pb_close(b, cd);
		}
		if (t->is_container)
			tp_pb_uint(b, F_TD_CHILD_ORDERING,
			           3); /* "Core N": EXPLICIT sibling ranks */
		tp_pb_int(b, F_TD_SIBLING_RANK, t->sort_index);
	}
	tp_pb_close(b, td);
	int st = put_packet(w);
	if (st || t->is_process)
		return st;

	/* Every track that can carry events gets its own sequence; containers get none. */
	if (!timeline)
		return TP_OK;
	if (t->uuid > UINT32_MAX)
		return tp_diag_set(w->d, TP_ERANGE, "%s: too many tracks", w->path);
	s->seq = (uint32_t)t->uuid;
	s->seqv[0] = F_PKT_SEQ_ID << 3 | TP_PB_VARINT;
	s->seqn = (uint8_t)(1 + tp_pb_varint_to(s->seqv + 1, s->seq));
	b->len = 0;
	tp_pb_uint(b, F_PKT_SEQ_ID, s->seq);
	tp_pb_uint(b, F_PKT_SEQ_FLAGS, SEQ_CLEARED | SEQ_NEEDS_STATE);
	tp_pb_uint(b, F_PKT_FIRST_ON_SEQ, 1);
	size_t df = tp_pb_open(b, F_PKT_DEFAULTS);
	tp_pb_uint(b, F_DEF_TS_CLOCK_ID, TP_PB_CLOCK_INCR);
	size_t te = tp_pb_open(b, F_DEF_TRACK_EVENT);
	tp_pb_uint(b, F_TED_TRACK_UUID, t->uuid);
	tp_pb_close(b, te);
	tp_pb_close(b, df);
	size_t cs = tp_pb_open(b, F_PKT_CLOCK_SNAPSHOT);
	size_t c1 = tp_pb_open(b, F_CS_CLOCKS);
	tp_pb_uint(b, F_CLK_ID, TP_PB_CLOCK_INCR);
	tp_pb_uint(b, F_CLK_TS, 0);
	tp_pb_uint(b, F_CLK_INCREMENTAL, 1);
	tp_pb_close(b, c1);
	size_t c2 = tp_pb_open(b, F_CS_CLOCKS);
	tp_pb_uint(b, F_CLK_ID, TP_PB_CLOCK_BOOTTIME);
	tp_pb_uint(b, F_CLK_TS, 0);
	tp_pb_close(b, c2);
	tp_pb_close(b, cs);
	return put_packet(w);
}

/* ---------------------------------------------------------------------------------------- */
/* A part's interning, in part order (the parts' emit, on the driving thread): the same walk
 * over the encoder's state as encoding the slices one by one, without writing them. It
 * decides every iid (and whether the packet defines it) in the order the encoding asks for
 * them (the annotation names apart, per distinct name, when decide_keys applies), closes the
 * lanes of the previous track (their END packets go first in the part), and copies the lanes'
 * state at the part's start for the encoding on a worker (parts.c).                          */
/* ---------------------------------------------------------------------------------------- */

static int order_error(struct pw *w, int64_t ts, int64_t last)
{
	return tp_diag_set(w->d, TP_ERANGE,
	                   "%s: event at %lld ns before the previous one (%lld ns) on its track",
	                   w->path, (long long)ts, (long long)last);
}

/* flush_group into the part's first packets. */
static int decide_flush(struct pw *w, struct ppart *pp)
{
	if (!w->have_group)
		return TP_OK;
	for (size_t i = w->cur_group; i < w->nts && w->ts[i].group == w->cur_group; i++) {
		struct tstate *t = &w->ts[i];
		while (t->depth) {
			int64_t e = t->ends[--t->depth];
			if (e < t->last)
				return order_error(w, e, t->last);
			if (tp_pw_put_end(&pp->head, t, t->last, e))
				return tp_diag_set(w->d, TP_ENOMEM,
				                   "%s: out of memory encoding the trace", w->path);
			t->last = e;
		}
	}
	w->have_group = 0;
	return TP_OK;
}

/* The lanes of the part's track as they are at its start (their open slices, last time). */
static int snap_lanes(struct pw *w, struct ppart *pp)
{
	size_t n = 0;
	while (pp->group + n < w->nts && w->ts[pp->group + n].group == pp->group)
		n++;
	if (n > pp->cap_lanes) {
		size_t cap = pp->cap_lanes;
		struct plane *g = tp_grow(pp->lane, sizeof *g, n, &cap);
		if (!g)
			return TP_ENOMEM;
		memset(g + pp->cap_lanes, 0, (cap - pp->cap_lanes) * sizeof *g);
		pp->lane = g;
		pp->cap_lanes = cap;
	}
	pp->nlanes = n;
	for (size_t i = 0; i < n; i++) {
		const struct tstate *t = &w->ts[pp->group + i];
		struct plane *l = &pp->lane[i];
		if (tp_pw_ends_room(&l->ends, &l->cap, t->depth))
			return TP_ENOMEM;
		if (t->depth)
			memcpy(l->ends, t->ends, t->depth * sizeof *t->ends);
		l->depth = t->depth;
		l->last = t->last;
	}
	return TP_OK;
}

/* One decision: the iid (0: the string inline) and whether the packet defines it. */
static inline void decide(struct pw *w, struct ppart *pp, struct imap *m, struct tstate *t,
                          struct memo *mo, const char *s)
{
	int define;
	uint64_t iid = intern_memo(w, m, t, mo, s, &define);
	pp->dec[pp->ndec++] = iid << 1 | (uint64_t)define;
}

/* The slice's checks, END times, timestamp and interning, as pw_slice made them. */
static int decide_slice(struct pw *w, struct ppart *pp, const struct prec *pr, const struct pval *v)
{
	const struct tp_sink_rec *r = &pr->r;
	struct tstate *t = &w->ts[pr->track];
	if (r->ts < 0 || r->dur < 0)
		return tp_diag_set(w->d, TP_ERANGE, "%s: slice \"%s\" has a negative time", w->path,
		                   r->name);
	while (t->depth && t->ends[t->depth - 1] <= r->ts) {
		int64_t e = t->ends[--t->depth];
		if (e < t->last)
			return order_error(w, e, t->last);
		t->last = e;
	}
	if (r->ts < t->last)
		return order_error(w, r->ts, t->last);
	t->last = r->ts;
	size_t need = pp->ndec + 2 + 2 * (size_t)r->nargs;
	if (need > pp->cap_dec) {
		uint64_t *g = tp_grow(pp->dec, sizeof *g, need, &pp->cap_dec);
		if (!g)
			return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
		pp->dec = g;
	}
	decide(w, pp, &w->cats, t, &t->cat, r->cat ? r->cat : "");
	decide(w, pp, &w->names, t, &t->name, r->name ? r->name : "");
	if (pp->k.fast) { /* the names are decided apart: only the values, in order */
		for (size_t j = 0; j < pr->nvals; j++)
			decide(w, pp, &w->vals, t,
			       v[j].pos < CACHE_SLOTS ? &t->vals[v[j].pos] : NULL, v[j].s);
	} else {
		for (size_t i = 0, j = 0; i < r->nargs; i++) {
			const struct tp_sink_parg *a = &pp->arg[r->arg0 + i];
			decide(w, pp, &w->keys, t, i < CACHE_SLOTS ? &t->keys[i] : NULL, a->key);
			if (j < pr->nvals && v[j].pos == i) {
				decide(w, pp, &w->vals, t, i < CACHE_SLOTS ? &t->vals[i] : NULL,
				       v[j].s);
				j++;
			}
		}
	}
	if (w->in.oom)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	if (tp_pw_ends_room(&t->ends, &t->cap, t->depth + 1))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	t->ends[t->depth++] = r->ts + r->dur;
	w->slices++;
	return TP_OK;
}

/* The annotation names of part pp decided per distinct name (pp->k.fast; the worker found
 * them, tp_pw_keys_note) rather than per use. Exact while the map has never started over and
 * cannot during the part: an iid is then one per string, given at the string's first use in
 * the trace (in first-use order here too), and a use defines it where the string is new to
 * its lane (the pair's first use in the part, when the lane's mask bit is not set yet); the
 * memos change no decision then, and are left as the uses would leave them (the last two
 * distinct names per position), for a later part decided per use. */
static int decide_keys(struct pw *w, struct ppart *pp)
{
	struct pkeys *k = &pp->k;
	struct imap *m = &w->keys;
	size_t need = k->nks + k->nkp;
	if (need > k->cap_kiid) {
		uint64_t *g = tp_grow(k->kiid, sizeof *g, need, &k->cap_kiid);
		if (!g)
			return TP_ENOMEM;
		k->kiid = g;
	}
	for (size_t u = 0; u < k->nks; u++) {
		struct ient *e = imap_get(m, k->ks[u]);
		if (!e)
			return TP_ENOMEM;
		k->kiid[u] = e->iid;
	}
	for (size_t q = 0; q < k->nkp; q++) {
		const struct kpair *kp = &k->kp[q];
		const struct tstate *t = &w->ts[kp->track];
		int def = t->lane >= 64 || defines(imap_find(m, k->ks[kp->u]), t);
		k->kiid[k->nks + q] = k->kiid[kp->u] << 1 | (uint64_t)def;
	}
	for (size_t l = 0; l < k->nlru; l++)
		for (size_t i = 0; i < CACHE_SLOTS; i++) {
			const uint32_t *v = k->lru[l].u[i];
			struct memo *mo = &w->ts[k->group + l].keys[i];
			if (!v[0])
				continue;
			if (v[1]) {
				mo->s[1] = k->ks[v[1] - 1];
				mo->iid[1] = k->kiid[v[1] - 1];
			} else if (mo->s[0] != k->ks[v[0] - 1]) {
				mo->s[1] = mo->s[0];
				mo->iid[1] = mo->iid[0];
			}
			mo->s[0] = k->ks[v[0] - 1];
			mo->iid[0] = k->kiid[v[0] - 1];
		}
	return TP_OK;
}

/* Prefetches the slots of string values v[0 .. n) in the value map: the map is large and its
 * probes miss the cache, so they are started a few slices ahead (no effect on the bytes). */
static void prefetch_vals(const struct pw *w, const struct pval *v, size_t n)
{
	const struct imap *m = &w->vals;
	if (!m->cap)
		return;
	for (size_t j = 0; j < n; j++)
		__builtin_prefetch(&m->e[ihash(v[j].s, m->cap)]);
}

int tp_pw_decide(struct pw *w, struct ppart *pp)
{
	pp->ndec = 0;
	pp->head.b.len = 0;
	pp->head.n = 0;
	if (pp->oom)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	if (!pp->nrec)
		return TP_OK;
	pp->k.fast =
	    !w->keys_per_use && !w->keys.restarted && w->keys.n + pp->k.nks < IMAP_MAX_SLOTS / 2;
	w->keys_distinct += (size_t)pp->k.fast;
	size_t v0 = 0, pf = 0; /* the values of slice k and of slice k + 4 (prefetched) */
	for (size_t k = 0; k < 4 && k < pp->nrec; k++)
		pf += pp->rec[k].nvals;
	for (size_t k = 0; k < pp->nrec; k++) {
		const struct prec *r = &pp->rec[k];
		if (r->track >= w->nts || !w->ts[r->track].seq)
			return tp_diag_set(w->d, TP_EUSAGE, "%s: slice on an undeclared track",
			                   w->path);
		size_t g = w->ts[r->track].group;
		if (k == 0) {
			if (!w->have_group || w->cur_group != g) {
				int st = decide_flush(w, pp);
				if (st)
					return st;
				w->cur_group = g;
				w->have_group = 1;
			}
			pp->group = g;
			if (snap_lanes(w, pp))
				return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
		} else if (g != pp->group) {
			return tp_diag_set(w->d, TP_EUSAGE, "%s: a part spans two tracks", w->path);
		}
		if (k + 4 < pp->nrec) {
			prefetch_vals(w, pp->val + pf, pp->rec[k + 4].nvals);
			pf += pp->rec[k + 4].nvals;
		}
		int st = decide_slice(w, pp, r, pp->val + v0);
		if (st)
			return st;
		v0 += r->nvals;
	}
	if (pp->k.fast && decide_keys(w, pp))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	return TP_OK;
}

static int pw_counter(void *ctx, const struct tp_sink_track *tr, int64_t ts_ns, double value)
{
	struct pw *w = ctx;
	int st = flush_group(w);
	if (st)
		return st;
	if (tr->index >= w->nts || !w->ts[tr->index].seq)
		return tp_diag_set(w->d, TP_EUSAGE, "%s: counter on an undeclared track", w->path);
	struct tstate *t = &w->ts[tr->index];
	if (ts_ns < 0)
		return tp_diag_set(w->d, TP_ERANGE, "%s: counter sample at negative time", w->path);
	if ((st = event_head(w, t, ts_ns)))
		return st;
	size_t mk = tp_pb_open(&w->pkt, F_PKT_TRACK_EVENT);
	tp_pb_uint(&w->pkt, F_TE_TYPE, TE_COUNTER);
	tp_pb_double(&w->pkt, F_TE_DOUBLE_COUNTER, value);
	tp_pb_close(&w->pkt, mk);
	return put_packet(w);
}

static int pw_end(void *ctx, int status)
{
	struct pw *w = ctx;
	if (status)
		return status;
	int st = flush_group(w);
	if (!st)
		st = tp_perfetto_flush_chunk(w);
	if (!st)
		st = tp_perfetto_zcollect(w);
	return st;
}

/* ---------------------------------------------------------------------------------------- */

int tp_perfetto_write_knobs(const struct tp_profile *p, const struct tp_analysis *a,
                            const char *path, const struct tp_perfetto_opts *o,
                            struct tp_pw_knobs *k, struct tp_diag *d)
{
	size_t part_slices = k->part_slices;
	struct pw *w = tp_calloc(1, sizeof *w);
	if (!w)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
	w->path = path;
	w->d = d;
	w->compress = !(o && o->uncompressed);
	w->level = o && o->level > 0 && o->level <= 12 ? o->level : 1;
	w->full_args = o && o->full_args;
	w->vals.lazy = 1;
	w->keys_per_use = k->keys_per_use;
	int st = TP_OK;
	if (!(w->vals.seen = tp_calloc(SEEN_SLOTS, sizeof *w->vals.seen))) {
		st = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	if (w->compress && !(w->z = libdeflate_alloc_compressor(w->level))) {
		st = tp_diag_set(d, TP_ENOMEM, "%s: out of memory (compressor)", path);
		goto out;
	}
	if ((st = tp_afile_open(&w->f, path, d)))
		goto out;
	tp_perfetto_zstart(w, o ? o->threads : 0);
	struct tp_sink sink = {w, pw_begin, pw_track, NULL, pw_counter, NULL, pw_end, w->full_args};
	struct tp_sink_parts parts = {o ? o->threads : 0, part_slices, tp_pw_slots,
	                              tp_pw_part_slice,   tp_pw_emit,  tp_pw_encode_slot,
	                              tp_pw_emit2};
	st = tp_sink_drive_parts(p, a, &sink, &parts, d);
	if (!st)
		st = tp_afile_commit(&w->f, d);
	k->keys_distinct = w->keys_distinct;
out:
	tp_perfetto_zstop(w);
	tp_afile_abort(&w->f);
	if (w->z)
		libdeflate_free_compressor(w->z);
	for (size_t i = 0; i < w->nts; i++)
		tp_free(w->ts[i].ends);
	tp_free(w->ts);
	tp_pw_parts_free(w);
	tp_pb_free(&w->chunk);
	tp_pb_free(&w->zout);
	tp_pb_free(&w->pkt);
	tp_pb_free(&w->in);
	imap_free(&w->names);
	imap_free(&w->cats);
	imap_free(&w->keys);
	imap_free(&w->vals);
	tp_free(w);
	return st;
}

int tp_perfetto_write_parts(const struct tp_profile *p, const struct tp_analysis *a,
                            const char *path, const struct tp_perfetto_opts *o, size_t part_slices,
                            struct tp_diag *d)
{
	struct tp_pw_knobs k = {part_slices, 0, 0};
	return tp_perfetto_write_knobs(p, a, path, o, &k, d);
}

int tp_perfetto_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                      const struct tp_perfetto_opts *o, struct tp_diag *d)
{
	return tp_perfetto_write_parts(p, a, path, o, 0, d);
}

int tp_perfetto_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                             const char *path, const struct tp_out_opts *o, struct tp_diag *d)
{
	struct tp_perfetto_opts po = {0, 0, o && o->trace_args_full, o ? o->jobs : 0};
	return tp_perfetto_write(p, a, path, &po, d);
}
