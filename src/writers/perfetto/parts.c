/*
 * parts.c — the Perfetto writer's slices in parts (tp_sink_drive_parts), so that walking and
 * encoding them use every thread while the trace stays the same bytes:
 *   1. a part's walk records its slices (tp_pw_part_slice, any thread): strings by address,
 *      which tp_sink_drive keeps valid and the same for the whole drive, with the part's
 *      annotation names as distinct names and pairs (tp_pw_keys_note) and its string values
 *      as a compact list (note_vals);
 *   2. in part order, on the driving thread, the part's interning is decided (tp_pw_decide,
 *      perfetto.c): intern maps, per-track memos and lanes advance exactly as if the slices
 *      were encoded one by one, the annotation names once per distinct name where that is
 *      exact; this is the only serial step;
 *   3. the part's packets are encoded from those decisions (tp_pw_encode_slot, any thread),
 *      from the lanes' state copied at the part's start, into the part's own buffer;
 *   4. in part order, the packets are cut into chunks by the same rule as one at a time
 *      (tp_pw_emit2): a chunk is flushed before a packet that would not fit.
 *
 * Owns the part slots (struct ppart): each holds one part's records, decisions and packets,
 * about a part's share of the trace uncompressed; at most 2 x threads slots exist.
 */
#include <string.h>

#include "writers/perfetto/perfetto_int.h"

static uint8_t *vput(uint8_t *o, uint64_t v)
{
	return o + tp_pb_varint_to(o, v);
}

/* ---------------------------------------------------------------------------------------- */
/* Recording a part's slices (any thread)                                                   */
/* ---------------------------------------------------------------------------------------- */

int tp_pw_slots(void *ctx, size_t n)
{
	struct pw *w = ctx;
	w->parts = tp_calloc(n, sizeof *w->parts);
	if (!w->parts)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	w->nparts = n;
	return TP_OK;
}

/* Room for one more record with nargs arguments and nflows flows; -1 when out of memory. */
static int rec_room(struct ppart *pp, size_t nargs, size_t nflows)
{
	if (pp->nrec == pp->cap_rec) {
		struct prec *g = tp_grow(pp->rec, sizeof *g, pp->nrec + 1, &pp->cap_rec);
		if (!g)
			return -1;
		pp->rec = g;
	}
	if (pp->narg + nargs > pp->cap_arg) {
		struct tp_sink_parg *g =
		    tp_grow(pp->arg, sizeof *g, pp->narg + nargs, &pp->cap_arg);
		if (!g)
			return -1;
		pp->arg = g;
	}
	if (pp->nflow + nflows > pp->cap_flow) {
		uint64_t *g = tp_grow(pp->flow, sizeof *g, pp->nflow + nflows, &pp->cap_flow);
		if (!g)
			return -1;
		pp->flow = g;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* A part's annotation names, distinct (any thread, while the part is recorded)             */
/* ---------------------------------------------------------------------------------------- */

static size_t kent_hash(const char *s, uint32_t track1, size_t cap)
{
	uint64_t h = ((uint64_t)(uintptr_t)s ^ (uint64_t)track1 << 48) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & (cap - 1);
}

static int kent_used(const void *e)
{
	return ((const struct kent *)e)->s != NULL;
}

static size_t kent_rehash(const void *e, size_t cap)
{
	const struct kent *k = e;
	return kent_hash(k->s, k->track1, cap);
}

/* The index stored under (s, track1), adding `idx` when absent (*added set); SIZE_MAX when out
 * of memory. */
static size_t kent_get(struct pkeys *k, const char *s, uint32_t track1, size_t idx, int *added)
{
	if (k->n * 2 >= k->cap) {
		struct kent *g = tp_oa_grow(k->h, &k->cap, 256, sizeof *g, kent_used, kent_rehash);
		if (!g)
			return SIZE_MAX;
		k->h = g;
	}
	size_t h = kent_hash(s, track1, k->cap);
	while (k->h[h].s) {
		if (k->h[h].s == s && k->h[h].track1 == track1) {
			*added = 0;
			return k->h[h].idx;
		}
		h = (h + 1) & (k->cap - 1);
	}
	k->h[h].s = s;
	k->h[h].track1 = track1;
	k->h[h].idx = (uint32_t)idx;
	k->n++;
	*added = 1;
	return idx;
}

/* Empties k for a new part. */
static void keys_reset(struct pkeys *k)
{
	if (k->n)
		memset(k->h, 0, k->cap * sizeof *k->h);
	k->n = k->nks = k->nkp = k->nkuse = k->nlru = 0;
}

/* The pair of name s on track `track` (its index, noting the string and the pair when new);
 * *first set when this is the pair's first use. -1 when out of memory. */
static long key_pair(struct pkeys *k, const char *s, uint32_t track, int *first)
{
	int added;
	size_t u = kent_get(k, s, 0, k->nks, &added);
	if (u == SIZE_MAX)
		return -1;
	if (added) {
		const char **g = tp_grow(k->ks, sizeof *g, k->nks + 1, &k->cap_ks);
		if (!g)
			return -1;
		k->ks = g;
		k->ks[k->nks++] = s;
	}
	size_t q = kent_get(k, s, track + 1, k->nkp, first);
	if (q == SIZE_MAX)
		return -1;
	if (*first) {
		struct kpair *g = tp_grow(k->kp, sizeof *g, k->nkp + 1, &k->cap_kp);
		if (!g)
			return -1;
		k->kp = g;
		k->kp[k->nkp].u = (uint32_t)u;
		k->kp[k->nkp++].track = track;
	}
	return (long)q;
}

int tp_pw_keys_note(struct ppart *pp, const struct tp_sink_slice *s)
{
	struct pkeys *k = &pp->k;
	const struct tp_sink_rec *r = &pp->rec[pp->nrec - 1].r;
	uint32_t track = (uint32_t)s->track->index;
	int32_t lane = s->track->lane > 0 ? s->track->lane : 0;
	if (pp->nrec == 1)
		k->group = track - (size_t)lane;
	struct klru *lru = NULL;
	if (lane < 64) {
		size_t l = track - k->group;
		if (l >= k->nlru) {
			struct klru *g = tp_grow(k->lru, sizeof *g, l + 1, &k->cap_lru);
			if (!g)
				return -1;
			memset(g + k->nlru, 0, (l + 1 - k->nlru) * sizeof *g);
			k->lru = g;
			k->nlru = l + 1;
		}
		lru = &k->lru[l];
	}
	if (k->nkuse + r->nargs > k->cap_kuse) {
		uint32_t *g = tp_grow(k->kuse, sizeof *g, k->nkuse + r->nargs, &k->cap_kuse);
		if (!g)
			return -1;
		k->kuse = g;
	}
	for (size_t i = 0; i < r->nargs; i++) {
		int first;
		long q = key_pair(k, pp->arg[r->arg0 + i].key, track, &first);
		if (q < 0)
			return -1;
		k->kuse[k->nkuse++] = (uint32_t)q << 1 | (uint32_t)(first || !lru);
		if (lru && i < CACHE_SLOTS) {
			uint32_t v = k->kp[q].u + 1, *m = lru->u[i];
			if (m[0] != v) {
				m[1] = m[0];
				m[0] = v;
			}
		}
	}
	return 0;
}

void tp_pw_keys_free(struct pkeys *k)
{
	void *blocks[] = {k->h, k->ks, k->kp, k->kuse, k->lru, k->kiid};
	for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++)
		tp_free(blocks[i]);
	memset(k, 0, sizeof *k);
}

/* ---------------------------------------------------------------------------------------- */
/* Recording a part's slices (any thread), continued                                        */
/* ---------------------------------------------------------------------------------------- */

/* The string values of record r (the last one) into pp->val; -1 when out of memory. */
static int note_vals(struct ppart *pp, struct prec *r)
{
	if (pp->nval + r->r.nargs > pp->cap_val) {
		struct pval *g = tp_grow(pp->val, sizeof *g, pp->nval + r->r.nargs, &pp->cap_val);
		if (!g)
			return -1;
		pp->val = g;
	}
	size_t n0 = pp->nval;
	for (uint32_t i = 0; i < r->r.nargs; i++) {
		const struct tp_sink_parg *a = &pp->arg[r->r.arg0 + i];
		if (a->type != TP_ARG_INT && a->type != TP_ARG_UINT && a->type != TP_ARG_REAL) {
			pp->val[pp->nval].s = a->v.s ? a->v.s : "";
			pp->val[pp->nval++].pos = i;
		}
	}
	r->nvals = (uint32_t)(pp->nval - n0);
	return 0;
}

/* Out of memory is reported in order, when the part's interning is decided. */
int tp_pw_part_slice(void *ctx, size_t slot, const struct tp_sink_slice *s)
{
	struct pw *w = ctx;
	struct ppart *pp = &w->parts[slot];
	if (!pp->nrec) {
		keys_reset(&pp->k);
		pp->nval = 0;
	}
	if (pp->oom || rec_room(pp, s->num_args, s->num_flows_out)) {
		pp->oom = 1;
		return TP_OK;
	}
	struct prec *r = &pp->rec[pp->nrec++];
	r->track = (uint32_t)s->track->index;
	tp_sink_record(&r->r, pp->arg, &pp->narg, pp->flow, &pp->nflow, s);
	if (tp_pw_keys_note(pp, s) || note_vals(pp, r))
		pp->oom = 1;
	return TP_OK;
}

int tp_pw_emit(void *ctx, size_t slot)
{
	struct pw *w = ctx;
	return tp_pw_decide(w, &w->parts[slot]);
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

/* A slice's packet: the sequence id (pkt), the track event, the interned data when any, the
 * timestamp (tsb). Field order inside a message carries no meaning in protobuf; it is chosen
 * for the compressor, which matches each packet against the previous ones of its track: the
 * sequence id first, next to the packet's length, and the timestamp delta last, next to the
 * following packet's varying length, keep the bytes that change from packet to packet
 * together, so fewer matches break (docs/perf-notes/trace-writers.md has the measurements). */
static int put_slice_packet(struct ppart *pp, const uint8_t *tsb, size_t tsn)
{
	size_t body = pp->pkt.len + tsn + 1 + tp_pb_varint_size(pp->ev.len) + pp->ev.len;
	if (pp->in.len)
		body += 1 + tp_pb_varint_size(pp->in.len) + pp->in.len;
	struct pbytes *o = &pp->out;
	if (tp_pb_reserve(&o->b, 11 + body) || body_add(o, body))
		return -1;
	uint8_t *q = o->b.p + o->b.len;
	*q++ = (uint8_t)(F_TRACE_PACKET << 3 | TP_PB_LEN);
	q += tp_pb_varint_to(q, body);
	memcpy(q, pp->pkt.p, pp->pkt.len);
	q += pp->pkt.len;
	*q++ = (uint8_t)(F_PKT_TRACK_EVENT << 3 | TP_PB_LEN);
	q += tp_pb_varint_to(q, pp->ev.len);
	memcpy(q, pp->ev.p, pp->ev.len);
	q += pp->ev.len;
	if (pp->in.len) {
		*q++ = (uint8_t)(F_PKT_INTERNED << 3 | TP_PB_LEN);
		q += tp_pb_varint_to(q, pp->in.len);
		memcpy(q, pp->in.p, pp->in.len);
		q += pp->in.len;
	}
	memcpy(q, tsb, tsn);
	q += tsn;
	o->b.len = (size_t)(q - o->b.p);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Encoding a part from its decisions (any thread)                                          */
/* ---------------------------------------------------------------------------------------- */

/* The encoding's walk: the part, its next decision. */
struct enc {
	struct ppart *pp;
	size_t dec, key; /* the next per-use decision, the next annotation name's use */
};

/* Decision x (iid << 1 | defines) as an iid (0: the string inline), appending its interned
 * entry (field `field` of InternedData) when the packet defines it. */
static uint64_t use_iid(struct enc *e, unsigned field, const char *s, uint64_t x)
{
	if (x & 1) {
		struct tp_pb *in = &e->pp->in;
		size_t mk = tp_pb_open(in, field);
		tp_pb_uint(in, F_IE_IID, x >> 1);
		tp_pb_str(in, F_IE_NAME, s);
		tp_pb_close(in, mk);
	}
	return x >> 1;
}

/* The next decided iid of the per-use decisions. */
static uint64_t next_iid(struct enc *e, unsigned field, const char *s)
{
	return use_iid(e, field, s, e->pp->dec[e->dec++]);
}

/* The next annotation name's iid: from its pair's decision when they were decided per
 * distinct name (defining only at the use that may), else the next per-use decision. */
static uint64_t next_key(struct enc *e, const char *s)
{
	const struct pkeys *k = &e->pp->k;
	uint32_t j = k->kuse[e->key++];
	if (!k->fast)
		return next_iid(e, F_ID_ANNOTATION_NAMES, s);
	uint64_t x = k->kiid[k->nks + (j >> 1)];
	return use_iid(e, F_ID_ANNOTATION_NAMES, s, j & 1 ? x : x & ~(uint64_t)1);
}

/* Encodes one DebugAnnotation at o (room for 26 bytes checked by the caller), straight into
 * the event: its body (name iid, value: at most 2 + 10 + 2 + 10 bytes) always fits one length
 * byte, patched at the end, so there is no scratch copy (a memcpy per annotation is a large
 * share of the encoder's work). */
static uint8_t *put_annotation(struct enc *e, const struct tp_sink_parg *a, uint8_t *o)
{
	struct ppart *pp = e->pp;
	uint64_t kiid = next_key(e, a->key);
	uint8_t *body = o + 2, *q = body;
	*q++ = F_DA_NAME_IID << 3 | TP_PB_VARINT;
	q = vput(q, kiid);
	uint64_t v;
	switch (a->type) {
	case TP_ARG_INT:
		*q++ = F_DA_INT << 3 | TP_PB_VARINT;
		q = vput(q, (uint64_t)a->v.i);
		break;
	case TP_ARG_UINT:
		/* int_value keeps the SQL value_type 'int' for every integer that fits. */
		*q++ = (uint8_t)((a->v.u <= (uint64_t)INT64_MAX ? F_DA_INT : F_DA_UINT) << 3);
		q = vput(q, a->v.u);
		break;
	case TP_ARG_REAL:
		*q++ = F_DA_DOUBLE << 3 | TP_PB_I64;
		memcpy(&v, &a->v.d, sizeof v);
		for (int i = 0; i < 8; i++)
			*q++ = (uint8_t)(v >> (8 * i));
		break;
	default: {
		const char *str = a->v.s ? a->v.s : "";
		uint64_t iid = next_iid(e, F_ID_STRING_VALUES, str);
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
static int put_event(struct enc *e, const struct tp_sink_rec *r)
{
	struct ppart *pp = e->pp;
	pp->in.len = 0;
	pp->ev.len = 0; /* the event is written through a raw pointer; len is set at the end */
	/* Room for everything but strings written inline, which put_annotation reserves. */
	size_t room = 32 + 26 * (size_t)r->nargs + 12 * ((size_t)r->nflows + 1);
	if (tp_pb_reserve(&pp->ev, room))
		return -1;
	uint8_t *o = pp->ev.p;
	*o++ = F_TE_TYPE << 3 | TP_PB_VARINT;
	*o++ = TE_SLICE_BEGIN;
	/* Flows right after the type, then category and name, then the annotations: the
	 * annotations end with the values that change every command (Cmd Id, dependency), which
	 * then sit next to the packet's timestamp trailer, which compresses best. */
	for (size_t i = 0; i < r->nflows; i++)
		o = put_flow(o, F_TE_FLOW_IDS, pp->flow[r->flow0 + i]);
	if (r->flow_in)
		o = put_flow(o, F_TE_TERM_FLOW_IDS, r->flow_in);
	*o++ = F_TE_CATEGORY_IIDS << 3 | TP_PB_VARINT;
	o = vput(o, next_iid(e, F_ID_CATEGORIES, r->cat ? r->cat : ""));
	*o++ = F_TE_NAME_IID << 3 | TP_PB_VARINT;
	o = vput(o, next_iid(e, F_ID_EVENT_NAMES, r->name ? r->name : ""));
	for (size_t i = 0; i < r->nargs; i++)
		o = put_annotation(e, &pp->arg[r->arg0 + i], o);
	pp->ev.len = (size_t)(o - pp->ev.p);
	return pp->in.oom ? -1 : 0;
}

/* Slice r's packets: the ENDs its start closes on its lane, then its own. */
static int encode_slice(struct pw *w, struct enc *e, const struct prec *pr)
{
	struct ppart *pp = e->pp;
	const struct tp_sink_rec *r = &pr->r;
	const struct tstate *t = &w->ts[pr->track];
	struct plane *ln = &pp->lane[pr->track - pp->group];
	while (ln->depth && ln->ends[ln->depth - 1] <= r->ts) {
		int64_t end = ln->ends[--ln->depth];
		if (tp_pw_put_end(&pp->out, t, ln->last, end))
			return -1;
		ln->last = end;
	}
	/* event_head: the sequence id first, the timestamp delta last. */
	pp->pkt.len = 0;
	if (tp_pb_reserve(&pp->pkt, 32))
		return -1;
	memcpy(pp->pkt.p, t->seqv, sizeof t->seqv); /* seqn bytes of it count */
	pp->pkt.len = t->seqn;
	uint8_t tsb[11];
	tsb[0] = F_PKT_TIMESTAMP << 3 | TP_PB_VARINT;
	size_t tsn = 1 + tp_pb_varint_to(tsb + 1, (uint64_t)(r->ts - ln->last));
	ln->last = r->ts;
	if (put_event(e, r) || put_slice_packet(pp, tsb, tsn))
		return -1;
	if (tp_pw_ends_room(&ln->ends, &ln->cap, ln->depth + 1))
		return -1;
	ln->ends[ln->depth++] = r->ts + r->dur;
	return 0;
}

int tp_pw_encode_slot(void *ctx, size_t slot)
{
	struct pw *w = ctx;
	struct ppart *pp = &w->parts[slot];
	struct enc e = {pp, 0, 0};
	pp->out.b.len = 0;
	pp->out.n = 0;
	for (size_t k = 0; k < pp->nrec; k++)
		if (encode_slice(w, &e, &pp->rec[k]))
			return TP_ENOMEM;
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* A part's packets into the chunks (the driving thread, parts in order)                    */
/* ---------------------------------------------------------------------------------------- */

/* Appends packets o to the chunk, flushing it before a packet that would not fit, as
 * put_packet_parts does for one: runs of packets that fit are copied at once. */
static int append_packets(struct pw *w, const struct pbytes *o)
{
	const uint8_t *src = o->b.p;
	size_t run = 0; /* bytes of the run not yet copied, starting at src */
	for (size_t i = 0; i < o->n; i++) {
		size_t body = o->body[i], total = 1 + tp_pb_varint_size(body) + body;
		size_t len = w->chunk.len + run;
		if (len && len + 11 + body > CHUNK_BYTES) {
			if (run) {
				if (tp_pb_reserve(&w->chunk, run))
					return tp_diag_set(w->d, TP_ENOMEM,
					                   "%s: out of memory encoding the trace",
					                   w->path);
				memcpy(w->chunk.p + w->chunk.len, src, run);
				w->chunk.len += run;
				src += run;
				run = 0;
			}
			int st = tp_perfetto_flush_chunk(w);
			if (st)
				return st;
		}
		run += total;
	}
	if (run) {
		if (tp_pb_reserve(&w->chunk, run))
			return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
			                   w->path);
		memcpy(w->chunk.p + w->chunk.len, src, run);
		w->chunk.len += run;
	}
	return TP_OK;
}

int tp_pw_emit2(void *ctx, size_t slot)
{
	struct pw *w = ctx;
	struct ppart *pp = &w->parts[slot];
	int st = append_packets(w, &pp->head);
	if (!st)
		st = append_packets(w, &pp->out);
	pp->nrec = pp->narg = pp->nflow = 0;
	return st;
}

void tp_pw_parts_free(struct pw *w)
{
	for (size_t i = 0; i < w->nparts; i++) {
		struct ppart *pp = &w->parts[i];
		TP_FREE_ALL(pp->rec, pp->arg, pp->val, pp->flow, pp->dec);
		tp_pw_keys_free(&pp->k);
		for (size_t l = 0; l < pp->cap_lanes; l++)
			tp_free(pp->lane[l].ends);
		tp_free(pp->lane);
		tp_pb_free(&pp->head.b);
		tp_free(pp->head.body);
		tp_pb_free(&pp->out.b);
		tp_free(pp->out.body);
		tp_pb_free(&pp->pkt);
		tp_pb_free(&pp->ev);
		tp_pb_free(&pp->in);
	}
	tp_free(w->parts);
	w->parts = NULL;
	w->nparts = 0;
}
