/*
 * parts.c — the Perfetto writer's slices in parts (tp_sink_drive_parts), so that walking,
 * encoding and compressing them use every thread, the trace the same bytes for any number:
 *   1. a part's walk records its slices (tp_pw_part_slice, any thread) and encodes each one's
 *      track event and interned data, which depend on the part alone (its own interning, of
 *      strings by address, which tp_sink_drive keeps valid and the same for the whole drive);
 *   2. in part order, on the driving thread, the part's lanes are decided (tp_pw_decide,
 *      perfetto.c): the previous track's closing ENDs and the lanes' state at its start;
 *   3. the part's packets are put together and compressed (tp_pw_encode_slot, any thread). A
 *      part is self-contained: each lane it uses starts its sequence over at the lane's first
 *      packet in the part (put_lane_head: SEQ_INCREMENTAL_STATE_CLEARED, the defaults and the
 *      incremental clock at the lane's last time), so its interning depends on the part alone;
 *      its packets are cut into chunks from the part's start;
 *   4. in part order, the part's compressed chunks are written (tp_pw_emit2).
 * The parts are fixed by the profile (tp_sink_parts), never by the thread count.
 *
 * Owns the part slots (struct ppart) and the pools of what a part needs only for a while, so
 * that what exists grows with the parts open at once (at most threads + 2: tp_sink_parts.lean),
 * not with the 2 x threads slots: a part's walk (struct pwalk: records and encoded events, from
 * its first slice until its packets are made), its interning (struct pint: intern table and
 * memos, until its walk is over), an encoder (struct penc: packets and compressor, while it is
 * encoded; it holds about one chunk of packets: chunks are compressed as they fill) and the
 * buffers of the chunks written (kept as spares for the next parts). A slot itself holds the
 * part's lanes, its head packets and its compressed chunks until they are queued.
 */
#include <libdeflate.h>
#include <stdio.h>
#include <string.h>

#include "writers/perfetto/perfetto_int.h"

static uint8_t *vput(uint8_t *o, uint64_t v)
{
	return o + tp_pb_varint_to(o, v);
}

/* An entry of pool `list` (a struct starting with its link), or a new zeroed one of `size`
 * bytes; NULL when out of memory. */
static void *pool_take(struct pw *w, void **list, size_t size)
{
	pthread_mutex_lock(&w->wsync.mu);
	void *x = *list;
	if (x)
		memcpy(list, x, sizeof *list);
	pthread_mutex_unlock(&w->wsync.mu);
	return x ? x : tp_calloc(1, size);
}

static void pool_give(struct pw *w, void **list, void *x)
{
	pthread_mutex_lock(&w->wsync.mu);
	memcpy(x, list, sizeof *list);
	*list = x;
	pthread_mutex_unlock(&w->wsync.mu);
}

/* Frees every entry of pool `list` with free_one (when no thread uses the pools any more). */
static void pool_drain(void **list, void (*free_one)(void *))
{
	while (*list) {
		void *x = *list;
		memcpy(list, x, sizeof *list);
		free_one(x);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* The part slots, the lanes decided (the driving thread)                                   */
/* ---------------------------------------------------------------------------------------- */

/* The part slots, and the write queue: what the driving thread wrote before (the descriptors)
 * is written out first, and the parts follow from the stream's position. */
int tp_pw_slots(void *ctx, size_t n)
{
	struct pw *w = ctx;
	w->parts = tp_calloc(n, sizeof *w->parts);
	if (!w->parts)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	w->nparts = n;
	if (!(w->wq = tp_calloc(2 * n + 2, sizeof *w->wq)))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	w->nwq = 2 * n + 2;
	if (!(w->spare = tp_calloc(n + w->nwq, sizeof *w->spare)))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	int st = tp_perfetto_flush_chunk(w);
	if (!st)
		st = tp_perfetto_zcollect(w);
	if (st)
		return st;
	off_t at;
	if (fflush(w->f.fp) != 0 || (at = ftello(w->f.fp)) < 0)
		return tp_afile_fail(&w->f, w->d);
	if (tp_wsync_init(&w->wsync))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	w->poff = (uint64_t)at;
	w->at_offsets = 1;
	return TP_OK;
}

/* The walk is over: its interning goes back to the pool. */
int tp_pw_emit(void *ctx, size_t slot)
{
	struct pw *w = ctx;
	struct ppart *pp = &w->parts[slot];
	if (pp->it)
		pool_give(w, &w->ints, pp->it);
	pp->it = NULL;
	return tp_pw_decide(w, pp);
}

/* ---------------------------------------------------------------------------------------- */
/* Packets into a part's buffer                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Records a packet's body length; -1 when out of memory. */
static int body_add(struct pbytes *o, size_t body)
{
	if (o->n == o->cap) {
		uint32_t *g = tp_grow(o->body, sizeof *g, o->n + 1, &o->cap);
		if (!g)
			return -1;
		o->body = g;
	}
	o->body[o->n++] = (uint32_t)body;
	return 0;
}

size_t tp_pw_end_body(const struct tstate *t, uint64_t delta)
{
	/* sequence id, track_event { type } (4), timestamp: < 128, one length byte. */
	return 4 + t->seqn + 1 + tp_pb_varint_size(delta);
}

void tp_pw_end_bytes(uint8_t *q, const struct tstate *t, uint64_t delta)
{
	*q++ = (uint8_t)(F_TRACE_PACKET << 3 | TP_PB_LEN);
	*q++ = (uint8_t)tp_pw_end_body(t, delta);
	memcpy(q, t->seqv, sizeof t->seqv); /* seqn bytes of it count */
	q += t->seqn;
	*q++ = F_PKT_TRACK_EVENT << 3 | TP_PB_LEN;
	*q++ = 2;
	*q++ = F_TE_TYPE << 3 | TP_PB_VARINT;
	*q++ = TE_SLICE_END;
	*q++ = F_PKT_TIMESTAMP << 3 | TP_PB_VARINT;
	tp_pb_varint_to(q, delta);
}

int tp_pw_put_end(struct pbytes *o, const struct tstate *t, int64_t last, int64_t ts)
{
	uint64_t delta = (uint64_t)(ts - last);
	size_t n = tp_pw_end_body(t, delta);
	if (tp_pb_reserve(&o->b, n + 2 + sizeof t->seqv) || body_add(o, n))
		return -1;
	tp_pw_end_bytes(o->b.p + o->b.len, t, delta);
	o->b.len += n + 2;
	return 0;
}

/* A slice's packet: the sequence id, its middle (the track event, the interned data when any:
 * record_event), the timestamp (tsb). Field order inside a message carries no meaning in
 * protobuf; it is chosen for the compressor, which matches each packet against the previous
 * ones of its track: the sequence id first, next to the packet's length, and the timestamp
 * delta last, next to the following packet's varying length, keep the bytes that change from
 * packet to packet together, so fewer matches break (docs/perf-notes/trace-writers.md has the
 * measurements). */
static int put_slice_packet(struct pbytes *o, const struct tstate *t, const uint8_t *mid, size_t m,
                            const uint8_t *tsb, size_t tsn)
{
	size_t body = t->seqn + m + tsn;
	if (tp_pb_reserve(&o->b, 11 + body) || body_add(o, body))
		return -1;
	uint8_t *q = o->b.p + o->b.len;
	*q++ = (uint8_t)(F_TRACE_PACKET << 3 | TP_PB_LEN);
	q += tp_pb_varint_to(q, body);
	memcpy(q, t->seqv, t->seqn);
	q += t->seqn;
	memcpy(q, mid, m);
	q += m;
	memcpy(q, tsb, tsn);
	q += tsn;
	o->b.len = (size_t)(q - o->b.p);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* A part's interning (any thread): its own table, iids from 1 per kind                      */
/* ---------------------------------------------------------------------------------------- */

static size_t pent_hash(const char *s, uint32_t kind, size_t cap)
{
	uint64_t h = ((uint64_t)(uintptr_t)s ^ (uint64_t)kind << 60) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & (cap - 1);
}

static int pent_used(const void *e)
{
	return ((const struct pent *)e)->s != NULL;
}

static size_t pent_rehash(const void *e, size_t cap)
{
	const struct pent *x = e;
	return pent_hash(x->s, x->kind, cap);
}

/* The entry of s as kind, added (iid 0, no lanes) when absent; NULL when out of memory. */
static struct pent *pent_get(struct pint *pp, const char *s, uint32_t kind)
{
	if (pp->nh * 2 >= pp->cap_h) {
		struct pent *g =
		    tp_oa_grow(pp->h, &pp->cap_h, 256, sizeof *g, pent_used, pent_rehash);
		if (!g)
			return NULL;
		pp->h = g;
	}
	size_t h = pent_hash(s, kind, pp->cap_h);
	while (pp->h[h].s) {
		if (pp->h[h].s == s && pp->h[h].kind == kind)
			return &pp->h[h];
		h = (h + 1) & (pp->cap_h - 1);
	}
	struct pent *e = &pp->h[h];
	e->s = s;
	e->kind = kind;
	e->iid = 0;
	e->mask = 0;
	pp->nh++;
	return e;
}

/* Empties the part's intern table and memos for its walk. */
static void intern_reset(struct pint *pp)
{
	tp_oa_clear(pp->h, pp->nh ? pp->cap_h : 0, sizeof *pp->h); /* a clean table stays */
	pp->nh = 0;
	memset(pp->next_iid, 0, sizeof pp->next_iid);
	pp->nmemo = 0;
}

/* Zeroed memos for lane l and those before it (lanes past 63 have none); -1 when out of
 * memory. */
static int memo_room(struct pint *pp, size_t l)
{
	if (l >= 64 || l < pp->nmemo)
		return 0;
	size_t n = (l + 1) * MEMO_SLOTS;
	if (n > pp->cap_memo) {
		struct memo *g = tp_grow(pp->memo, sizeof *g, n, &pp->cap_memo);
		if (!g)
			return -1;
		pp->memo = g;
	}
	memset(pp->memo + pp->nmemo * MEMO_SLOTS, 0,
	       (n - pp->nmemo * MEMO_SLOTS) * sizeof *pp->memo);
	pp->nmemo = l + 1;
	return 0;
}

/* The decision for a use of s as kind on lane l of the part: iid << 1 | whether the packet
 * defines it (the lane has not had it defined in the part; lanes past 63 have no mask bit:
 * every use defines); 0 for a string value's first use in the part (written inline: unique
 * strings, shapes and layer names, are cheaper inline than defined and referenced). Sets
 * pp->in.oom when out of memory. */
static uint64_t intern_miss(struct pint *pp, uint32_t kind, size_t l, struct memo *mo,
                            const char *s)
{
	struct pent *e = pent_get(pp, s, kind);
	if (!e) {
		pp->in.oom = 1;
		return 0;
	}
	if (!e->iid) {
		if (kind == IK_STR && !e->mask) {
			e->mask = UINT64_MAX; /* seen once; no lane has it defined (iid 0) */
			return 0;
		}
		if (kind == IK_STR)
			e->mask = 0;
		e->iid = ++pp->next_iid[kind];
	}
	int define = 1;
	if (l < 64) {
		uint64_t bit = (uint64_t)1 << l;
		define = !(e->mask & bit);
		e->mask |= bit;
	}
	if (mo) {
		mo->s[1] = mo->s[0];
		mo->iid[1] = mo->iid[0];
		mo->s[0] = s;
		mo->iid[0] = e->iid;
	}
	return (uint64_t)e->iid << 1 | (uint64_t)define;
}

/* intern_miss through the lane's two-entry memo at `slot` (SIZE_MAX: none); hits are inlined:
 * on the latest (most calls) and on the other (which then becomes the latest: keys and values
 * alternating at one argument position). */
static inline uint64_t intern(struct pint *pp, uint32_t kind, size_t l, size_t slot, const char *s)
{
	struct memo *mo = l < 64 && slot < MEMO_SLOTS ? &pp->memo[l * MEMO_SLOTS + slot] : NULL;
	if (mo && mo->s[0] == s)
		return mo->iid[0] << 1;
	if (mo && mo->s[1] == s) {
		const char *ts = mo->s[0];
		uint64_t ti = mo->iid[0];
		mo->s[0] = s;
		mo->iid[0] = mo->iid[1];
		mo->s[1] = ts;
		mo->iid[1] = ti;
		return mo->iid[0] << 1;
	}
	return intern_miss(pp, kind, l, mo, s);
}

/* ---------------------------------------------------------------------------------------- */
/* A slice's track event (the walk, any thread)                                             */
/* ---------------------------------------------------------------------------------------- */

/* The event's encoding: the part, the lane of the slice being encoded. */
struct enc {
	struct pint *pp;
	size_t lane;
};

static const unsigned intern_field[4] = {F_ID_CATEGORIES, F_ID_EVENT_NAMES, F_ID_ANNOTATION_NAMES,
                                         F_ID_STRING_VALUES};

/* The iid of s as kind (0: the string inline) at memo slot `slot`, appending its interned entry
 * when the packet defines it. */
static uint64_t use_iid(struct enc *e, uint32_t kind, size_t slot, const char *s)
{
	uint64_t x = intern(e->pp, kind, e->lane, slot, s);
	if (x & 1) {
		struct tp_pb *in = &e->pp->in;
		size_t mk = tp_pb_open(in, intern_field[kind]);
		tp_pb_uint(in, F_IE_IID, x >> 1);
		tp_pb_str(in, F_IE_NAME, s);
		tp_pb_close(in, mk);
	}
	return x >> 1;
}

/* Encodes one DebugAnnotation at o (room for 26 bytes checked by the caller), straight into
 * the event: its body (name iid, value: at most 2 + 10 + 2 + 10 bytes) always fits one length
 * byte, patched at the end, so there is no scratch copy (a memcpy per annotation is a large
 * share of the encoder's work). */
static uint8_t *put_annotation(struct enc *e, const struct tp_sink_arg *a, size_t pos, uint8_t *o)
{
	struct pint *pp = e->pp;
	uint64_t kiid = use_iid(e, IK_KEY, pos < CACHE_SLOTS ? 2 + pos : SIZE_MAX, a->key);
	uint8_t *body = o + 2, *q = body;
	*q++ = F_DA_NAME_IID << 3 | TP_PB_VARINT;
	q = vput(q, kiid);
	uint64_t v;
	switch (a->type) {
	case TP_ARG_INT:
		*q++ = F_DA_INT << 3 | TP_PB_VARINT;
		q = vput(q, (uint64_t)a->i);
		break;
	case TP_ARG_UINT:
		/* int_value keeps the SQL value_type 'int' for every integer that fits. */
		*q++ = (uint8_t)((a->u <= (uint64_t)INT64_MAX ? F_DA_INT : F_DA_UINT) << 3);
		q = vput(q, a->u);
		break;
	case TP_ARG_REAL:
		*q++ = F_DA_DOUBLE << 3 | TP_PB_I64;
		memcpy(&v, &a->d, sizeof v);
		for (int i = 0; i < 8; i++)
			*q++ = (uint8_t)(v >> (8 * i));
		break;
	default: {
		const char *str = a->s ? a->s : "";
		uint64_t iid =
		    use_iid(e, IK_STR, pos < CACHE_SLOTS ? 2 + CACHE_SLOTS + pos : SIZE_MAX, str);
		if (iid) {
			*q++ =
			    (uint8_t)(F_DA_STRING_IID << 3 | TP_PB_VARINT | 0x80); /* key 88 01 */
			*q++ = 0x01;
			q = vput(q, iid);
			break;
		}
		/* First use: the string inline. Make room for it and, as the caller did, for
		 * every annotation that may follow (the flows come before the annotations). */
		size_t n = strlen(str), off = (size_t)(o - pp->ev.p);
		if (tp_pb_reserve(&pp->ev, off + 64 + n + 26 * TP_SINK_MAX_ARGS + 12)) {
			pp->in.oom = 1; /* reported by the caller */
			return o;
		}
		o = pp->ev.p + off;
		size_t head = 1 + tp_pb_varint_size(kiid);
		*o++ = F_TE_DEBUG << 3 | TP_PB_LEN;
		o = vput(o, (uint64_t)head + 1 + tp_pb_varint_size(n) + n);
		*o++ = F_DA_NAME_IID << 3 | TP_PB_VARINT;
		o = vput(o, kiid);
		*o++ = F_DA_STRING << 3 | TP_PB_LEN;
		o = vput(o, n);
		memcpy(o, str, n);
		return o + n;
	}
	}
	o[0] = F_TE_DEBUG << 3 | TP_PB_LEN;
	o[1] = (uint8_t)(q - body); /* < 128 */
	return q;
}

/* A flow id in TrackEvent's fixed64 field 47 (flow_ids) or 48 (terminating_flow_ids): 2 key
 * bytes + 8 value bytes. The varint fields 36/42 (flow_ids_old / terminating_flow_ids_old) would
 * take 3-4 raw bytes and make the compact trace a little smaller, but the schema marks them
 * "DEPRECATED. Only kept for backwards compatibility. Use |flow_ids|" (perfetto_trace.proto,
 * TrackEvent) and perfetto.md §2 lists only 47/48: a file written today should not depend on a
 * reader keeping a compatibility path, and other consumers of the schema read only the current
 * fields. */
static uint8_t *put_flow(uint8_t *o, unsigned field, uint64_t v)
{
	o = vput(o, (uint64_t)field << 3 | TP_PB_I64);
	for (int i = 0; i < 8; i++)
		*o++ = (uint8_t)(v >> (8 * i));
	return o;
}

/* The track event of slice r into pp->ev (its interned entries into pp->in); -1 when out of
 * memory. */
static int put_event(struct enc *e, const struct tp_sink_slice *r)
{
	struct pint *pp = e->pp;
	pp->in.len = 0;
	pp->ev.len = 0; /* the event is written through a raw pointer; len is set at the end */
	/* Room for everything but strings written inline, which put_annotation reserves. */
	size_t room = 32 + 26 * r->num_args + 12 * (r->num_flows_out + 1);
	if (tp_pb_reserve(&pp->ev, room))
		return -1;
	uint8_t *o = pp->ev.p;
	*o++ = F_TE_TYPE << 3 | TP_PB_VARINT;
	*o++ = TE_SLICE_BEGIN;
	/* Flows right after the type, then category and name, then the annotations: the
	 * annotations end with the values that change every command (Cmd Id, dependency), which
	 * then sit next to the packet's timestamp trailer, which compresses best. */
	for (size_t i = 0; i < r->num_flows_out; i++)
		o = put_flow(o, F_TE_FLOW_IDS, r->flows_out[i]);
	if (r->flow_in)
		o = put_flow(o, F_TE_TERM_FLOW_IDS, r->flow_in);
	*o++ = F_TE_CATEGORY_IIDS << 3 | TP_PB_VARINT;
	o = vput(o, use_iid(e, IK_CAT, 0, r->category ? r->category : ""));
	*o++ = F_TE_NAME_IID << 3 | TP_PB_VARINT;
	o = vput(o, use_iid(e, IK_NAME, 1, r->name ? r->name : ""));
	for (size_t i = 0; i < r->num_args; i++)
		o = put_annotation(e, &r->args[i], i, o);
	pp->ev.len = (size_t)(o - pp->ev.p);
	return pp->in.oom ? -1 : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Recording a part's slices, their events encoded (any thread)                             */
/* ---------------------------------------------------------------------------------------- */

/* The part's walk and interning, taken at its first slice; -1 when out of memory. */
static int walk_begin(struct pw *w, struct ppart *pp)
{
	if (!(pp->wk = pool_take(w, &w->walks, sizeof *pp->wk)) ||
	    !(pp->it = pool_take(w, &w->ints, sizeof *pp->it)))
		return -1;
	pp->wk->nrec = 0;
	pp->wk->evb.len = 0;
	intern_reset(pp->it);
	return 0;
}

static void walk_free(void *x)
{
	struct pwalk *wk = x;
	tp_free(wk->rec);
	tp_pb_free(&wk->evb);
	tp_free(wk);
}

static void int_free(void *x)
{
	struct pint *it = x;
	TP_FREE_ALL(it->h, it->memo);
	tp_pb_free(&it->ev);
	tp_pb_free(&it->in);
	tp_free(it);
}

/* Slice s's track event and interned data (on lane l of its track), framed as the fields of
 * its packet, appended to the part's evb; -1 when out of memory. */
static int record_event(struct pint *pp, struct tp_pb *evb, struct prec *r, size_t l,
                        const struct tp_sink_slice *s)
{
	struct enc e = {pp, l};
	if (memo_room(pp, l) || put_event(&e, s))
		return -1;
	size_t m = 1 + tp_pb_varint_size(pp->ev.len) + pp->ev.len;
	if (pp->in.len)
		m += 1 + tp_pb_varint_size(pp->in.len) + pp->in.len;
	if (tp_pb_reserve(evb, m))
		return -1;
	uint8_t *q = evb->p + evb->len;
	*q++ = (uint8_t)(F_PKT_TRACK_EVENT << 3 | TP_PB_LEN);
	q += tp_pb_varint_to(q, pp->ev.len);
	memcpy(q, pp->ev.p, pp->ev.len);
	q += pp->ev.len;
	if (pp->in.len) {
		*q++ = (uint8_t)(F_PKT_INTERNED << 3 | TP_PB_LEN);
		q += tp_pb_varint_to(q, pp->in.len);
		memcpy(q, pp->in.p, pp->in.len);
	}
	evb->len += m;
	r->mid = (uint32_t)m;
	return 0;
}

/* Records the slice and encodes its event (the first of a part starts the part's interning
 * over). A slice on an undeclared track is recorded without one: tp_pw_decide reports it, in
 * order, as it reports running out of memory here. */
int tp_pw_part_slice(void *ctx, size_t slot, const struct tp_sink_slice *s)
{
	struct pw *w = ctx;
	struct ppart *pp = &w->parts[slot];
	if (pp->oom)
		return TP_OK;
	if (!pp->wk && walk_begin(w, pp)) {
		pp->oom = 1;
		return TP_OK;
	}
	struct pwalk *wk = pp->wk;
	struct prec *r = tp_push(&wk->rec, sizeof *r, &wk->nrec, &wk->cap_rec);
	if (!r) {
		pp->oom = 1;
		return TP_OK;
	}
	size_t t = s->track->index;
	r->ts = s->ts_ns;
	r->dur = s->dur_ns;
	r->name = s->name;
	r->track = (uint32_t)t;
	r->mid = 0;
	/* group and seq are set before the parts and only read meanwhile. */
	if (t < w->nts && w->ts[t].seq && record_event(pp->it, &wk->evb, r, t - w->ts[t].group, s))
		pp->oom = 1;
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* A part's packets (any thread)                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Starts the sequence of lane ln (track state t) over, as the lane's first packet in the part:
 * flags CLEARED | NEEDS_INCREMENTAL_STATE (the reader drops the interned entries and defaults
 * the sequence had), the defaults again (clock 64, the track) and a ClockSnapshot putting the
 * incremental clock 64 at the lane's last time (the next delta continues from there). */
static int put_lane_head(struct penc *x, const struct tstate *t, struct plane *ln)
{
	struct tp_pb *b = &x->pkt;
	b->len = 0;
	tp_pw_seq_head(b, t->seq, 0, ln->last);
	struct pbytes *o = &x->out;
	if (b->oom || tp_pb_reserve(&o->b, 11 + b->len) || body_add(o, b->len))
		return -1;
	uint8_t *q = o->b.p + o->b.len;
	*q++ = (uint8_t)(F_TRACE_PACKET << 3 | TP_PB_LEN);
	q = vput(q, b->len);
	memcpy(q, b->p, b->len);
	o->b.len = (size_t)(q + b->len - o->b.p);
	ln->started = 1;
	return 0;
}

/* Slice r's packets (its middle at mid): its lane's head at the lane's first packet in the
 * part, the ENDs its start closes on its lane, then its own. */
static int encode_slice(struct pw *w, struct ppart *pp, struct penc *x, const struct prec *r,
                        const uint8_t *mid)
{
	const struct tstate *t = &w->ts[r->track];
	struct plane *ln = &pp->lane[r->track - pp->group];
	if (!ln->started && put_lane_head(x, t, ln))
		return -1;
	while (ln->depth && ln->ends[ln->depth - 1] <= r->ts) {
		int64_t end = ln->ends[--ln->depth];
		if (tp_pw_put_end(&x->out, t, ln->last, end))
			return -1;
		ln->last = end;
	}
	uint8_t tsb[11];
	tsb[0] = F_PKT_TIMESTAMP << 3 | TP_PB_VARINT;
	size_t tsn = 1 + tp_pb_varint_to(tsb + 1, (uint64_t)(r->ts - ln->last));
	ln->last = r->ts;
	if (put_slice_packet(&x->out, t, mid, r->mid, tsb, tsn))
		return -1;
	if (tp_pw_ends_room(&ln->ends, &ln->cap, ln->depth + 1))
		return -1;
	ln->ends[ln->depth++] = r->ts + r->dur;
	return 0;
}

/* Compresses packets p[0 .. n) of the part as one chunk, appended framed to pp->zb: compressed
 * past the longest framing, then moved next to its own; -1 when out of memory or when the
 * compression fails. */
static int compress_chunk(struct ppart *pp, struct penc *x, const uint8_t *p, size_t n)
{
	size_t bound = libdeflate_zlib_compress_bound(x->z, n);
	if (tp_pb_reserve(&pp->zb, 24 + bound))
		return -1;
	uint8_t *at = pp->zb.p + pp->zb.len, hdr[24];
	size_t zn = libdeflate_zlib_compress(x->z, p, n, at + 24, bound);
	if (!zn)
		return -1;
	size_t hn = tp_pw_zhead(hdr, zn);
	memmove(at + hn, at + 24, zn);
	memcpy(at, hdr, hn);
	pp->zb.len += hn + zn;
	return 0;
}

/* Cuts the packets made so far into chunks from the part's start, a chunk compressed before a
 * packet that would not fit (chunk + 11 + body > CHUNK_BYTES, as put_packet, perfetto.c) and
 * taken out of x->out, so it holds about one chunk; `last`: the rest too. x->cn / x->clen are
 * the packets and bytes of the chunk being gathered. */
static int cut_chunks(struct ppart *pp, struct penc *x, int last)
{
	struct pbytes *o = &x->out;
	size_t i = x->cn, len = x->clen;
	while (i < o->n) {
		size_t body = o->body[i];
		if (len && len + 11 + body > CHUNK_BYTES) {
			if (compress_chunk(pp, x, o->b.p, len))
				return -1;
			memmove(o->b.p, o->b.p + len, o->b.len - len);
			o->b.len -= len;
			memmove(o->body, o->body + i, (o->n - i) * sizeof *o->body);
			o->n -= i;
			i = len = 0;
			continue;
		}
		len += 1 + tp_pb_varint_size(body) + body;
		i++;
	}
	x->cn = i;
	x->clen = len;
	return last && len ? compress_chunk(pp, x, o->b.p, len) : 0;
}

/* The part's packets into x: the previous track's closing ENDs (head), then its slices'; then
 * its chunks (or, uncompressed, the packets themselves) into pp->zb. */
static int encode_with(struct pw *w, struct ppart *pp, struct penc *x)
{
	x->out.b.len = 0;
	x->out.n = 0;
	x->cn = x->clen = 0;
	if (!pp->zb.p) {
		pthread_mutex_lock(&w->wsync.mu);
		if (w->nspare)
			pp->zb = w->spare[--w->nspare];
		pthread_mutex_unlock(&w->wsync.mu);
	}
	pp->zb.len = 0;
	if (w->compress && !x->z && !(x->z = libdeflate_alloc_compressor(w->level)))
		return -1;
	if (pp->head.n) {
		struct pbytes *o = &x->out, *h = &pp->head;
		if (tp_pb_reserve(&o->b, h->b.len))
			return -1;
		for (size_t i = 0; i < h->n; i++)
			if (body_add(o, h->body[i]))
				return -1;
		memcpy(o->b.p, h->b.p, h->b.len);
		o->b.len = h->b.len;
	}
	const struct pwalk *wk = pp->wk;
	const uint8_t *mid = wk ? wk->evb.p : NULL;
	for (size_t k = 0; wk && k < wk->nrec; k++) {
		if (encode_slice(w, pp, x, &wk->rec[k], mid) ||
		    (w->compress && cut_chunks(pp, x, 0)))
			return -1;
		mid += wk->rec[k].mid;
	}
	if (w->compress)
		return cut_chunks(pp, x, 1);
	struct tp_pb t = pp->zb;
	pp->zb = x->out.b;
	x->out.b = t;
	return 0;
}

static void enc_free(void *p)
{
	struct penc *x = p;
	if (x->z)
		libdeflate_free_compressor(x->z);
	tp_pb_free(&x->out.b);
	tp_free(x->out.body);
	tp_pb_free(&x->pkt);
	tp_free(x);
}

/* Encodes part pp with an encoder from the pool; its walk goes back to the pool either way. */
static int encode_part(struct pw *w, struct ppart *pp)
{
	struct penc *x = pool_take(w, &w->encs, sizeof *x);
	int st = x ? encode_with(w, pp, x) : -1;
	if (x)
		pool_give(w, &w->encs, x);
	if (pp->wk)
		pool_give(w, &w->walks, pp->wk);
	pp->wk = NULL;
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* The parts' writes at their place (any thread)                                            */
/* ---------------------------------------------------------------------------------------- */

/* Writes every part queued when it is called, oldest first (wsync.mu not held). */
static void write_queued(struct pw *w)
{
	pthread_mutex_lock(&w->wsync.mu);
	for (;;) {
		struct wq_ent *e =
		    pw_ring_first(w->wq, sizeof *w->wq, w->nwq, w->wq_head, w->wq_tail,
		                  offsetof(struct wq_ent, state), WQ_QUEUED);
		if (!e)
			break;
		e->state = WQ_BUSY;
		pthread_mutex_unlock(&w->wsync.mu);
		int err = tp_sink_pwrite(fileno(w->f.fp), e->b.p, e->b.len, e->off);
		pthread_mutex_lock(&w->wsync.mu);
		if (err && !w->werr)
			w->werr = err;
		e->state = WQ_FREE;
		e->b.len = 0;
		w->spare[w->nspare++] = e->b;
		memset(&e->b, 0, sizeof e->b);
		while (w->wq_head < w->wq_tail && w->wq[w->wq_head % w->nwq].state == WQ_FREE)
			w->wq_head++;
		pthread_cond_broadcast(&w->wsync.cv_done);
	}
	pthread_mutex_unlock(&w->wsync.mu);
}

/* Writes the queue's parts and waits for those other threads write, until at most `keep`
 * entries are in use; returns the first failed write's errno (0: none). */
static int write_wait(struct pw *w, uint64_t keep)
{
	write_queued(w);
	pthread_mutex_lock(&w->wsync.mu);
	while (w->wq_tail - w->wq_head > keep)
		pthread_cond_wait(&w->wsync.cv_done, &w->wsync.mu);
	int err = w->werr;
	pthread_mutex_unlock(&w->wsync.mu);
	return err;
}

static int write_failed(struct pw *w, int err)
{
	if (!w->f.err)
		w->f.err = err;
	return tp_afile_fail(&w->f, w->d);
}

/* Encodes the part (failures are reported in order, by tp_pw_emit2), after writing the parts
 * that wait in the queue: writing them takes the file's writes off the driving thread. */
int tp_pw_encode_slot(void *ctx, size_t slot)
{
	struct pw *w = ctx;
	struct ppart *pp = &w->parts[slot];
	write_queued(w);
	pp->err = encode_part(w, pp) ? TP_ENOMEM : TP_OK;
	return TP_OK;
}

int tp_pw_parts_done(struct pw *w)
{
	if (!w->at_offsets)
		return TP_OK;
	w->at_offsets = 0;
	int err = write_wait(w, 0);
	tp_wsync_destroy(&w->wsync);
	if (err)
		return write_failed(w, err);
	if (fseeko(w->f.fp, (off_t)w->poff, SEEK_SET) != 0)
		return tp_afile_fail(&w->f, w->d);
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* A part's chunks into the file (the driving thread, parts in order)                       */
/* ---------------------------------------------------------------------------------------- */

int tp_pw_emit2(void *ctx, size_t slot)
{
	struct pw *w = ctx;
	struct ppart *pp = &w->parts[slot];
	if (pp->err)
		return tp_diag_set(w->d, pp->err, "%s: out of memory encoding the trace", w->path);
	/* Room in the queue (it is full only when no part has been encoded for a while). */
	int err = write_wait(w, w->nwq - 1);
	if (err)
		return write_failed(w, err);
	struct tp_pb *b = &pp->zb;
	if (!b->len)
		return TP_OK;
	pthread_mutex_lock(&w->wsync.mu);
	struct wq_ent *e = &w->wq[w->wq_tail++ % w->nwq];
	e->b = *b; /* FREE: no buffer (write_queued kept it as a spare) */
	memset(b, 0, sizeof *b);
	e->off = w->poff;
	e->state = WQ_QUEUED;
	w->poff += e->b.len;
	pthread_mutex_unlock(&w->wsync.mu);
	return TP_OK;
}

void tp_pw_parts_free(struct pw *w)
{
	for (size_t i = 0; i < w->nparts; i++) {
		struct ppart *pp = &w->parts[i];
		if (pp->wk)
			walk_free(pp->wk);
		if (pp->it)
			int_free(pp->it);
		tp_pb_free(&pp->zb);
		for (size_t l = 0; l < pp->cap_lanes; l++)
			tp_free(pp->lane[l].ends);
		tp_free(pp->lane);
		tp_pb_free(&pp->head.b);
		tp_free(pp->head.body);
	}
	pool_drain(&w->walks, walk_free);
	pool_drain(&w->ints, int_free);
	pool_drain(&w->encs, enc_free);
	tp_free(w->parts);
	w->parts = NULL;
	w->nparts = 0;
	for (size_t i = 0; i < w->nwq; i++)
		tp_pb_free(&w->wq[i].b);
	for (size_t i = 0; i < w->nspare; i++)
		tp_pb_free(&w->spare[i]);
	tp_free(w->spare);
	w->spare = NULL;
	w->nspare = 0;
	tp_free(w->wq);
	w->wq = NULL;
	w->nwq = 0;
	if (w->at_offsets) {
		tp_wsync_destroy(&w->wsync);
		w->at_offsets = 0;
	}
}
