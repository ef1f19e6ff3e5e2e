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
 *   - the slices are written in parts of a fixed number of slices of one track (parts.c),
 *     each self-contained: every lane (sequence) a part uses starts over there (CLEARED, its
 *     defaults and clock again), so a part's event names, categories, annotation names and
 *     string values are interned by the part alone, on any thread, and the part's packets
 *     are cut into chunks and compressed there too;
 *   - END events are only {sequence id, type, timestamp}; they are written before any BEGIN
 *     at the same timestamp (perfetto.md §3.3), and every track's events are in time order;
 *   - event packets carry no sequence_flags (event_head), which saves bytes on every slice;
 *     flow ids stay in the current fixed64 fields (parts.c, put_flow);
 *   - in an event packet the sequence id comes first, then the track_event (flow ids right
 *     after its type), and the timestamp delta last (protobuf field order is free): the bytes
 *     that change from packet to packet then sit together, which the compressor rewards
 *     (parts.c: put_slice_packet, put_event);
 *   - packets are batched into zlib-format `compressed_packets` chunks of at most 256 KiB,
 *     compressed with libdeflate (same format as zlib's deflate, several times faster): a
 *     part's on the thread that encodes it, the rest (descriptors, counters) by the pool of
 *     zpool.c; chunks are written in order, so the bytes do not depend on the number of
 *     threads.
 *
 * Owns: the output file (through tp_afile), the chunk and scratch buffers, the workers
 * (started and stopped through zpool.c) and per-track state (open-slice stacks, O(depth)).
 * Nothing grows with the number of slices written or of distinct strings.
 */
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writers/perfetto/perfetto.h"
#include "writers/perfetto/perfetto_int.h"

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

void tp_pw_seq_head(struct tp_pb *b, uint32_t seq, int first, int64_t at)
{
	tp_pb_uint(b, F_PKT_SEQ_ID, seq);
	tp_pb_uint(b, F_PKT_SEQ_FLAGS, SEQ_CLEARED | SEQ_NEEDS_STATE);
	if (first)
		tp_pb_uint(b, F_PKT_FIRST_ON_SEQ, 1);
	size_t df = tp_pb_open(b, F_PKT_DEFAULTS);
	tp_pb_uint(b, F_DEF_TS_CLOCK_ID, TP_PB_CLOCK_INCR);
	size_t te = tp_pb_open(b, F_DEF_TRACK_EVENT);
	tp_pb_uint(b, F_TED_TRACK_UUID, seq);
	tp_pb_close(b, te);
	tp_pb_close(b, df);
	size_t cs = tp_pb_open(b, F_PKT_CLOCK_SNAPSHOT);
	size_t c1 = tp_pb_open(b, F_CS_CLOCKS);
	tp_pb_uint(b, F_CLK_ID, TP_PB_CLOCK_INCR);
	tp_pb_uint(b, F_CLK_TS, (uint64_t)at);
	tp_pb_uint(b, F_CLK_INCREMENTAL, 1);
	tp_pb_close(b, c1);
	size_t c2 = tp_pb_open(b, F_CS_CLOCKS);
	tp_pb_uint(b, F_CLK_ID, TP_PB_CLOCK_BOOTTIME);
	tp_pb_uint(b, F_CLK_TS, (uint64_t)at);
	tp_pb_close(b, c2);
	tp_pb_close(b, cs);
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
	tp_pw_seq_head(b, s->seq, 1, 0);
	return put_packet(w);
}

/* ---------------------------------------------------------------------------------------- */
/* A part's lanes, in part order (the parts' emit, on the driving thread): the same walk over
 * the lanes as encoding the slices one by one, without writing them. It checks the slices'
 * order, closes the lanes of the previous track (their END packets go first in the part), and
 * copies the lanes' state at the part's start for the encoding on a worker (parts.c).       */
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
		l->started = 0;
	}
	return TP_OK;
}

/* The slice's checks and END times, as the encoding makes them. */
static int decide_slice(struct pw *w, const struct prec *r)
{
	struct tstate *t = &w->ts[r->track];
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
	if (tp_pw_ends_room(&t->ends, &t->cap, t->depth + 1))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	t->ends[t->depth++] = r->ts + r->dur;
	w->slices++;
	return TP_OK;
}

int tp_pw_decide(struct pw *w, struct ppart *pp)
{
	pp->head.b.len = 0;
	pp->head.n = 0;
	if (pp->oom)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	const struct pwalk *wk = pp->wk;
	if (!wk)
		return TP_OK;
	for (size_t k = 0; k < wk->nrec; k++) {
		const struct prec *r = &wk->rec[k];
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
		int st = decide_slice(w, r);
		if (st)
			return st;
	}
	return TP_OK;
}

static int pw_counter(void *ctx, const struct tp_sink_track *tr, int64_t ts_ns, double value)
{
	struct pw *w = ctx;
	int st = tp_pw_parts_done(w);
	if (!st)
		st = flush_group(w);
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
	int st = tp_pw_parts_done(w);
	if (!st)
		st = flush_group(w);
	if (!st)
		st = tp_perfetto_flush_chunk(w);
	if (!st)
		st = tp_perfetto_zcollect(w);
	return st;
}

/* ---------------------------------------------------------------------------------------- */

int tp_perfetto_write_parts(const struct tp_profile *p, const struct tp_analysis *a,
                            const char *path, const struct tp_perfetto_opts *o, size_t part_slices,
                            struct tp_diag *d)
{
	struct pw *w = tp_calloc(1, sizeof *w);
	if (!w)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
	w->path = path;
	w->d = d;
	w->compress = !(o && o->uncompressed);
	w->level = o && o->level > 0 && o->level <= 12 ? o->level : 1;
	w->full_args = o && o->full_args;
	int st = TP_OK;
	if (w->compress && !(w->z = libdeflate_alloc_compressor(w->level))) {
		st = tp_diag_set(d, TP_ENOMEM, "%s: out of memory (compressor)", path);
		goto out;
	}
	if ((st = tp_afile_open(&w->f, path, d)))
		goto out;
	tp_perfetto_zstart(w, o ? o->threads : 0);
	struct tp_sink sink = {w, pw_begin, pw_track, NULL, pw_counter, NULL, pw_end, w->full_args};
	struct tp_sink_parts parts = {
	    o ? o->threads : 0, part_slices,       tp_pw_slots, tp_pw_part_slice,
	    tp_pw_emit,         tp_pw_encode_slot, tp_pw_emit2, 1};
	st = tp_sink_drive_parts(p, a, &sink, &parts, d);
	if (!st)
		st = tp_afile_commit(&w->f, d);
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
	tp_free(w);
	return st;
}

int tp_perfetto_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                      const struct tp_perfetto_opts *o, struct tp_diag *d)
{
	return tp_perfetto_write_parts(p, a, path, o, PW_PART_SLICES, d);
}

int tp_perfetto_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                             const char *path, const struct tp_out_opts *o, struct tp_diag *d)
{
	struct tp_perfetto_opts po = {0, 0, o && o->trace_args_full, o ? o->jobs : 0};
	return tp_perfetto_write(p, a, path, &po, d);
}
