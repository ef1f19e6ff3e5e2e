/*
 * check.c — tp_perfetto_check: a structural validator for Perfetto protobuf traces, applying
 * the import rules of trace_processor that matter to a file writer (shared/specs/perfetto.md
 * §3 and §6) so that tests and users can check a .pftrace without trace_processor.
 *
 * Accepted: Trace records (field 1) holding TracePackets; packets may be plain or batched in
 * zlib `compressed_packets` chunks. Timestamps resolve through the packet's or the sequence
 * default's clock: none (raw ns), or a sequence-scoped clock 64..127 defined by a
 * ClockSnapshot on that sequence (incremental or absolute). Other fields are skipped by wire
 * type, as a protobuf reader does.
 *
 * tp_perfetto_check_visit also hands every event, decoded (interned strings resolved, times
 * absolute), to a visitor: what the round-trip test (pftrace_roundtrip) compares with the
 * model, so the checker is also the reference decoder of what the writer encodes.
 *
 * Owns: per-sequence state (intern sets), per-track state (open-slice stacks) and flow id
 * sets, all freed before returning; with a visitor also a pool of the interned strings and
 * the current event's argument and flow arrays. Memory is O(tracks + interned strings +
 * flows), plus the input mapping and one decompressed chunk.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "writers/perfetto/perfetto.h"
#include "writers/perfetto/perfetto_int.h"

/* ---------------------------------------------------------------------------------------- */
/* Small hash set / map of uint64 keys.                                                      */
/* ---------------------------------------------------------------------------------------- */

static size_t hs_hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* Returns the slot of k (inserting with value v if absent and `insert`), or NULL when absent
 * (or out of memory, reported through *oom). */
size_t *tp_ck_hs_find(struct hset *h, uint64_t k, int insert, size_t v, int *oom)
{
	if (insert && (h->n + 1) * 2 > h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 64;
		uint64_t *nk = tp_calloc(ncap, sizeof *nk);
		size_t *nv = tp_calloc(ncap, sizeof *nv);
		if (!nk || !nv) {
			tp_free(nk);
			tp_free(nv);
			*oom = 1;
			return NULL;
		}
		for (size_t i = 0; i < h->cap; i++) {
			if (!h->v[i])
				continue;
			size_t s = hs_hash(h->k[i], ncap);
			while (nv[s])
				s = (s + 1) & (ncap - 1);
			nk[s] = h->k[i];
			nv[s] = h->v[i];
		}
		tp_free(h->k);
		tp_free(h->v);
		h->k = nk;
		h->v = nv;
		h->cap = ncap;
	}
	if (!h->cap)
		return NULL;
	size_t s = hs_hash(k, h->cap);
	while (h->v[s]) {
		if (h->k[s] == k)
			return &h->v[s];
		s = (s + 1) & (h->cap - 1);
	}
	if (!insert)
		return NULL;
	h->k[s] = k;
	h->v[s] = v + 1;
	h->n++;
	return &h->v[s];
}

static void hs_clear(struct hset *h)
{
	tp_oa_clear(h->v, h->cap, sizeof *h->v);
	h->n = 0;
}

static void hs_free(struct hset *h)
{
	tp_free(h->k);
	tp_free(h->v);
	memset(h, 0, sizeof *h);
}

/* ---------------------------------------------------------------------------------------- */
/* State                                                                                     */
/* ---------------------------------------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) int tp_ck_bad(struct ck *c, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (c->inner_off != UINT64_MAX)
		return tp_diag_at(c->d, TP_EFORMAT, c->path, c->off,
		                  "packet at +0x%llx in the compressed chunk: %s",
		                  (unsigned long long)c->inner_off, msg);
	return tp_diag_at(c->d, TP_EFORMAT, c->path, c->off, "%s", msg);
}

int tp_ck_nomem(struct ck *c)
{
	return tp_diag_set(c->d, TP_ENOMEM, "%s: out of memory checking the trace", c->path);
}

static struct seq *get_seq(struct ck *c, uint32_t id, int *is_new)
{
	*is_new = 0;
	size_t *v = tp_ck_hs_find(&c->seq_ix, id, 0, 0, &c->oom);
	if (v)
		return &c->seqs[*v - 1];
	struct seq *n = tp_grow(c->seqs, sizeof *c->seqs, c->nseqs + 1, &c->cap_seqs);
	if (!n) {
		c->oom = 1;
		return NULL;
	}
	c->seqs = n;
	if (!tp_ck_hs_find(&c->seq_ix, id, 1, c->nseqs, &c->oom))
		return NULL;
	struct seq *s = &c->seqs[c->nseqs++];
	memset(s, 0, sizeof *s);
	s->id = id;
	*is_new = 1;
	c->r->sequences++;
	return s;
}

struct track *tp_ck_find_track(struct ck *c, uint64_t uuid)
{
	size_t *v = tp_ck_hs_find(&c->track_ix, uuid, 0, 0, &c->oom);
	return v ? &c->tracks[*v - 1] : NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Field iteration                                                                           */
/* ---------------------------------------------------------------------------------------- */

int tp_ck_next_field(const uint8_t **p, const uint8_t *end, struct fld *f)
{
	if (*p == end)
		return 0;
	uint64_t key;
	if (tp_pb_read_varint(p, end, &key))
		return -1;
	f->num = (unsigned)(key >> 3);
	f->wt = (unsigned)(key & 7);
	if (f->num == 0 || key >> 32)
		return -1;
	switch (f->wt) {
	case TP_PB_VARINT:
		return tp_pb_read_varint(p, end, &f->v) ? -1 : 1;
	case TP_PB_I64:
		if (end - *p < 8)
			return -1;
		f->v = tp_le64(*p);
		*p += 8;
		return 1;
	case TP_PB_LEN:
		if (tp_pb_read_varint(p, end, &f->v) || f->v > (uint64_t)(end - *p))
			return -1;
		f->p = *p;
		f->n = (size_t)f->v;
		*p += f->n;
		return 1;
	case 5:
		if (end - *p < 4)
			return -1;
		f->v = tp_le32(*p);
		*p += 4;
		return 1;
	default:
		return -1; /* groups are not used by this schema subset */
	}
}

/* Checks that a LEN payload is itself a well-formed message (recursively not needed: we only
 * descend into the messages we understand). */
static int well_formed(const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r;
	while ((r = tp_ck_next_field(&p, e, &f)) == 1)
		;
	return r == 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Messages                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static int interned_entry(struct ck *c, struct seq *s, int kind, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r, has_iid = 0;
	uint64_t iid = 0;
	const uint8_t *str = NULL;
	size_t str_n = 0;
	while ((r = tp_ck_next_field(&p, e, &f)) == 1) {
		if (f.num == F_IE_IID) {
			EXPECT_WT(c, f, TP_PB_VARINT, "interned iid");
			iid = f.v;
			has_iid = 1;
		} else if (f.num == F_IE_NAME && f.wt == TP_PB_LEN) {
			str = f.p;
			str_n = f.n;
		}
	}
	if (r < 0)
		return tp_ck_bad(c, "malformed interned entry");
	if (!has_iid || iid == 0)
		return tp_ck_bad(c, "interned entry without a non-zero iid");
	size_t off = 0;
	if (c->fn) {
		uint32_t len = (uint32_t)str_n;
		off = c->pool.len;
		tp_buf_put(&c->pool, &len, sizeof len);
		tp_buf_put(&c->pool, str ? (const void *)str : "", str_n);
		if (c->pool.oom)
			return tp_ck_nomem(c);
	}
	if (!tp_ck_hs_find(&s->interned[kind], iid, 1, off, &c->oom))
		return tp_ck_nomem(c);
	c->r->interned++;
	return TP_OK;
}

static int interned_data(struct ck *c, struct seq *s, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r, st;
	while ((r = tp_ck_next_field(&p, e, &f)) == 1) {
		int kind = f.num == F_ID_CATEGORIES         ? IK_CAT
		           : f.num == F_ID_EVENT_NAMES      ? IK_NAME
		           : f.num == F_ID_ANNOTATION_NAMES ? IK_KEY
		           : f.num == F_ID_STRING_VALUES    ? IK_STR
		                                            : -1;
		if (kind < 0)
			continue;
		EXPECT_WT(c, f, TP_PB_LEN, "interned entry");
		if ((st = interned_entry(c, s, kind, f.p, f.n)))
			return st;
	}
	return r < 0 ? tp_ck_bad(c, "malformed interned_data") : TP_OK;
}

/* Checks that iid is interned on s; with a visitor, *str / *n get its string. */
int tp_ck_need_iid_str(struct ck *c, struct seq *s, int kind, uint64_t iid, const char *what,
                       const char **str, size_t *n)
{
	if (iid == 0)
		return tp_ck_bad(c, "%s iid is 0 (unset)", what);
	size_t *v = s ? tp_ck_hs_find(&s->interned[kind], iid, 0, 0, &c->oom) : NULL;
	if (!v)
		return tp_ck_bad(c, "%s iid %llu used before it is interned on sequence %u", what,
		                 (unsigned long long)iid, s ? s->id : 0);
	if (c->fn && str) {
		uint32_t len;
		memcpy(&len, c->pool.data + (*v - 1), sizeof len);
		*str = c->pool.data + (*v - 1) + sizeof len;
		*n = len;
	}
	return TP_OK;
}

static int defaults(struct ck *c, struct seq *s, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r;
	s->has_def_track = 0;
	s->def_clock = 0;
	while ((r = tp_ck_next_field(&p, e, &f)) == 1) {
		if (f.num == F_DEF_TS_CLOCK_ID) {
			EXPECT_WT(c, f, TP_PB_VARINT, "default timestamp_clock_id");
			s->def_clock = (uint32_t)f.v;
		} else if (f.num == F_DEF_TRACK_EVENT) {
			EXPECT_WT(c, f, TP_PB_LEN, "track_event_defaults");
			const uint8_t *q = f.p, *qe = f.p + f.n;
			struct fld g;
			int r2;
			while ((r2 = tp_ck_next_field(&q, qe, &g)) == 1)
				if (g.num == F_TED_TRACK_UUID && g.wt == TP_PB_VARINT) {
					s->def_track = g.v;
					s->has_def_track = 1;
				}
			if (r2 < 0)
				return tp_ck_bad(c, "malformed track_event_defaults");
		}
	}
	return r < 0 ? tp_ck_bad(c, "malformed trace_packet_defaults") : TP_OK;
}

/* One ClockSnapshot.Clock: its id, value and whether it is incremental. */
struct clock {
	uint32_t id;
	uint64_t ts;
	int incr;
};

static int read_clock(struct ck *c, const uint8_t *q, size_t n, struct clock *k)
{
	const uint8_t *qe = q + n;
	struct fld g;
	int r;
	*k = (struct clock){0};
	while ((r = tp_ck_next_field(&q, qe, &g)) == 1) {
		if (g.wt != TP_PB_VARINT)
			continue;
		if (g.num == F_CLK_ID)
			k->id = (uint32_t)g.v;
		else if (g.num == F_CLK_TS)
			k->ts = g.v;
		else if (g.num == F_CLK_INCREMENTAL)
			k->incr = g.v != 0;
	}
	return r < 0 ? tp_ck_bad(c, "malformed ClockSnapshot.Clock") : TP_OK;
}

static int clock_snapshot(struct ck *c, struct seq *s, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r, st;
	uint64_t boot = 0;
	int have_boot = 0, have_user = 0;
	struct clock user = {0};
	while ((r = tp_ck_next_field(&p, e, &f)) == 1) {
		if (f.num != F_CS_CLOCKS)
			continue;
		EXPECT_WT(c, f, TP_PB_LEN, "ClockSnapshot.clocks");
		struct clock k;
		if ((st = read_clock(c, f.p, f.n, &k)))
			return st;
		if (k.id >= 64 && k.id < 128) {
			user = k;
			have_user = 1;
		} else if (k.id == TP_PB_CLOCK_BOOTTIME || !have_boot) {
			boot = k.ts;
			have_boot = 1;
		}
	}
	if (r < 0)
		return tp_ck_bad(c, "malformed clock_snapshot");
	if (have_user) {
		if (!s)
			return tp_ck_bad(
			    c, "sequence-scoped clock %u in a packet without sequence id", user.id);
		if (!have_boot)
			return tp_ck_bad(c, "clock snapshot relates clock %u to no global clock",
			                 user.id);
		s->clk_id = user.id;
		s->clk_incremental = user.incr;
		s->clk_value = user.ts;
		s->clk_boot = boot;
		s->clk_last = user.ts;
	}
	return TP_OK;
}

static int track_descriptor(struct ck *c, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r;
	int has_uuid = 0, has_parent = 0, kind = TK_PLAIN;
	uint64_t uuid = 0, parent = 0;
	while ((r = tp_ck_next_field(&p, e, &f)) == 1) {
		switch (f.num) {
		case F_TD_UUID:
			TAKE_VARINT(c, f, "TrackDescriptor.uuid", uuid, has_uuid);
			break;
		case F_TD_PARENT:
			TAKE_VARINT(c, f, "TrackDescriptor.parent_uuid", parent, has_parent);
			break;
		case F_TD_PROCESS:
		case F_TD_THREAD: {
			EXPECT_WT(c, f, TP_PB_LEN, "process/thread descriptor");
			const uint8_t *q = f.p, *qe = f.p + f.n;
			struct fld g;
			int r2, has_pid = 0, has_tid = 0;
			int64_t pid = 0, tid = 0;
			while ((r2 = tp_ck_next_field(&q, qe, &g)) == 1) {
				if (g.num == 1 && g.wt == TP_PB_VARINT) {
					pid = (int64_t)g.v;
					has_pid = 1;
				} else if (g.num == 2 && g.wt == TP_PB_VARINT &&
				           f.num == F_TD_THREAD) {
					tid = (int64_t)g.v;
					has_tid = 1;
				}
			}
			if (r2 < 0)
				return tp_ck_bad(c, "malformed process/thread descriptor");
			if (!has_pid || pid == 0)
				return tp_ck_bad(c, "track %llu: %s descriptor with pid %s",
				                 (unsigned long long)uuid,
				                 f.num == F_TD_PROCESS ? "process" : "thread",
				                 has_pid ? "0" : "missing");
			if (f.num == F_TD_THREAD && (!has_tid || tid == 0))
				return tp_ck_bad(c, "track %llu: thread descriptor with tid %s",
				                 (unsigned long long)uuid,
				                 has_tid ? "0" : "missing");
			kind = f.num == F_TD_PROCESS ? TK_PROCESS : TK_THREAD;
			break;
		}
		case F_TD_COUNTER:
			EXPECT_WT(c, f, TP_PB_LEN, "CounterDescriptor");
			if (!well_formed(f.p, f.n))
				return tp_ck_bad(c, "malformed CounterDescriptor");
			kind = TK_COUNTER;
			break;
		default:
			break;
		}
	}
	if (r < 0)
		return tp_ck_bad(c, "malformed TrackDescriptor");
	if (!has_uuid)
		return tp_ck_bad(c, "TrackDescriptor without uuid");
	if (tp_ck_find_track(c, uuid))
		return tp_ck_bad(c, "track uuid %llu declared twice", (unsigned long long)uuid);
	if (has_parent && !tp_ck_find_track(c, parent))
		return tp_ck_bad(c, "track %llu: parent_uuid %llu is not declared before it",
		                 (unsigned long long)uuid, (unsigned long long)parent);
	struct track *nt = tp_grow(c->tracks, sizeof *c->tracks, c->ntracks + 1, &c->cap_tracks);
	if (!nt)
		return tp_ck_nomem(c);
	c->tracks = nt;
	if (!tp_ck_hs_find(&c->track_ix, uuid, 1, c->ntracks, &c->oom))
		return tp_ck_nomem(c);
	struct track *t = &c->tracks[c->ntracks++];
	memset(t, 0, sizeof *t);
	t->uuid = uuid;
	t->kind = kind;
	t->last_ts = INT64_MIN;
	c->r->tracks++;
	c->r->processes += kind == TK_PROCESS;
	c->r->threads += kind == TK_THREAD;
	c->r->counter_tracks += kind == TK_COUNTER;
	return TP_OK;
}

static int packet(struct ck *c, const uint8_t *p, size_t n, int depth);

static int compressed(struct ck *c, const uint8_t *p, size_t n)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit(&z) != Z_OK)
		return tp_ck_nomem(c);
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	size_t len = 0;
	int zr;
	do {
		if (c->zcap - len < 65536) {
			size_t cap = c->zcap;
			uint8_t *nb = tp_grow(c->zbuf, 1, len + 65536, &cap);
			if (!nb) {
				inflateEnd(&z);
				return tp_ck_nomem(c);
			}
			c->zbuf = nb;
			c->zcap = cap;
		}
		z.next_out = c->zbuf + len;
		z.avail_out = (uInt)(c->zcap - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = c->zcap - z.avail_out;
		/* Decompression-bomb guard (perfetto.h): a chunk and the whole file may inflate
		 * only so far, checked as the bytes appear, not after. */
		if (zr == Z_OK || zr == Z_STREAM_END) {
			uint64_t total = c->inflated_total + len;
			if (len > TP_PERFETTO_CHECK_MAX_CHUNK ||
			    total > TP_PERFETTO_CHECK_MAX_TOTAL(c->file_size)) {
				inflateEnd(&z);
				return tp_ck_bad(
				    c,
				    "compressed_packets inflates beyond the checker's limit (%u "
				    "MiB "
				    "per chunk, %llu MiB for this %llu-byte file): refusing a "
				    "decompression bomb",
				    (unsigned)(TP_PERFETTO_CHECK_MAX_CHUNK >> 20),
				    (unsigned long long)(TP_PERFETTO_CHECK_MAX_TOTAL(
				                             c->file_size) >>
				                         20),
				    (unsigned long long)c->file_size);
			}
		}
	} while (zr == Z_OK);
	inflateEnd(&z);
	c->inflated_total += len;
	if (zr != Z_STREAM_END)
		return tp_ck_bad(c, "compressed_packets is not a complete zlib stream");
	c->r->chunks++;
	const uint8_t *q = c->zbuf, *e = c->zbuf + len;
	int st;
	while (q < e) {
		c->inner_off = (uint64_t)(q - c->zbuf);
		struct fld f;
		if (tp_ck_next_field(&q, e, &f) != 1 || f.num != F_TRACE_PACKET ||
		    f.wt != TP_PB_LEN)
			return tp_ck_bad(c, "compressed chunk holds something other than packets");
		if ((st = packet(c, f.p, f.n, 1)))
			return st;
	}
	c->inner_off = UINT64_MAX;
	return TP_OK;
}

/* What a TracePacket's fields say (packet_fields): its scalars and the payloads it carries. */
struct pkt {
	int has_ts, has_seq, has_clock, cleared;
	uint64_t ts, flags;
	uint32_t seq_id, clock;
	const uint8_t *ev, *in, *td, *df, *cs, *zp;
	size_t evn, inn, tdn, dfn, csn, zn;
};

static int packet_fields(struct ck *c, const uint8_t *p, size_t n, struct pkt *k)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r;
	while ((r = tp_ck_next_field(&p, e, &f)) == 1) {
		switch (f.num) {
		case F_PKT_TIMESTAMP:
			TAKE_VARINT(c, f, "TracePacket.timestamp", k->ts, k->has_ts);
			break;
		case F_PKT_SEQ_ID:
			EXPECT_WT(c, f, TP_PB_VARINT, "trusted_packet_sequence_id");
			k->seq_id = (uint32_t)f.v;
			k->has_seq = k->seq_id != 0;
			break;
		case F_PKT_SEQ_FLAGS:
			EXPECT_WT(c, f, TP_PB_VARINT, "sequence_flags");
			k->flags = f.v;
			break;
		case F_PKT_INCR_CLEARED:
			EXPECT_WT(c, f, TP_PB_VARINT, "incremental_state_cleared");
			k->cleared |= f.v != 0;
			break;
		case F_PKT_PREV_DROPPED:
			if (f.wt == TP_PB_VARINT && f.v)
				return tp_ck_bad(c, "previous_packet_dropped set by a file writer");
			break;
		case F_PKT_TS_CLOCK_ID:
			EXPECT_WT(c, f, TP_PB_VARINT, "timestamp_clock_id");
			k->clock = (uint32_t)f.v;
			k->has_clock = 1;
			break;
#define TAKE(fieldno, ptr, len, what)                                                              \
	case fieldno:                                                                              \
		EXPECT_WT(c, f, TP_PB_LEN, what);                                                  \
		k->ptr = f.p;                                                                      \
		k->len = f.n;                                                                      \
		break;
			TAKE(F_PKT_TRACK_EVENT, ev, evn, "track_event")
			TAKE(F_PKT_INTERNED, in, inn, "interned_data")
			TAKE(F_PKT_TRACK_DESCRIPTOR, td, tdn, "track_descriptor")
			TAKE(F_PKT_DEFAULTS, df, dfn, "trace_packet_defaults")
			TAKE(F_PKT_CLOCK_SNAPSHOT, cs, csn, "clock_snapshot")
			TAKE(F_PKT_COMPRESSED, zp, zn, "compressed_packets")
#undef TAKE
		default:
			break;
		}
	}
	if (r < 0)
		return tp_ck_bad(c, "malformed TracePacket");
	return TP_OK;
}

/* The packet's sequence (*out, NULL when it has none): a new sequence must clear its
 * incremental state first, a clear resets it, and what needs a sequence must have one. */
static int packet_sequence(struct ck *c, const struct pkt *k, struct seq **out)
{
	struct seq *s = NULL;
	int cleared = k->cleared | ((k->flags & SEQ_CLEARED) != 0);
	if (k->has_seq) {
		int is_new;
		if (!(s = get_seq(c, k->seq_id, &is_new)))
			return tp_ck_nomem(c);
		if (is_new && !cleared)
			return tp_ck_bad(
			    c, "first packet of sequence %u does not clear incremental state",
			    k->seq_id);
		if (cleared) {
			s->cleared = 1;
			for (int i = 0; i < IK_COUNT; i++)
				hs_clear(&s->interned[i]);
			s->has_def_track = 0;
			s->def_clock = 0;
			s->clk_id = 0;
		}
	} else {
		if (k->flags & SEQ_NEEDS_STATE)
			return tp_ck_bad(
			    c, "SEQ_NEEDS_INCREMENTAL_STATE without trusted_packet_sequence_id");
		if (k->ev)
			return tp_ck_bad(
			    c,
			    "track event without trusted_packet_sequence_id (dropped on import)");
		if (k->in)
			return tp_ck_bad(c, "interned_data without trusted_packet_sequence_id");
		if (k->df)
			return tp_ck_bad(
			    c, "trace_packet_defaults without trusted_packet_sequence_id");
	}
	if (s && (k->flags & SEQ_NEEDS_STATE) && !s->cleared)
		return tp_ck_bad(c, "sequence %u needs incremental state that was never cleared",
		                 k->seq_id);
	*out = s;
	return TP_OK;
}

/* The packet's timestamp in trace time (*when): raw, or through the sequence's clock. */
static int packet_time(struct ck *c, struct seq *s, const struct pkt *k, int64_t *when)
{
	*when = (int64_t)k->ts;
	if (!k->has_ts)
		return TP_OK;
	uint32_t clk = k->has_clock ? k->clock : s ? s->def_clock : 0;
	if (clk >= 64 && clk < 128) {
		if (!s || s->clk_id != clk)
			return tp_ck_bad(c,
			                 "timestamp on clock %u, which no snapshot of sequence %u "
			                 "defines",
			                 clk, k->seq_id);
		uint64_t v = s->clk_incremental ? s->clk_last + k->ts : k->ts;
		s->clk_last = v;
		*when = (int64_t)(s->clk_boot + (v - s->clk_value));
	} else if (clk != 0 && clk != TP_PB_CLOCK_BOOTTIME) {
		return tp_ck_bad(c, "timestamp on clock %u, which this checker does not resolve",
		                 clk);
	}
	if (*when < 0)
		return tp_ck_bad(c, "negative timestamp");
	return TP_OK;
}

static int packet(struct ck *c, const uint8_t *p, size_t n, int depth)
{
	struct pkt k = {0};
	int st = packet_fields(c, p, n, &k);
	if (st)
		return st;
	c->r->packets++;
	if (k.zp) {
		if (depth)
			return tp_ck_bad(c, "compressed_packets nested inside a compressed chunk");
		return compressed(c, k.zp, k.zn);
	}
	struct seq *s = NULL;
	if ((st = packet_sequence(c, &k, &s)))
		return st;
	if (k.df && (st = defaults(c, s, k.df, k.dfn)))
		return st;
	if (k.in && (st = interned_data(c, s, k.in, k.inn)))
		return st;
	if (k.cs)
		return clock_snapshot(c, s, k.cs, k.csn);
	if (k.td && (st = track_descriptor(c, k.td, k.tdn)))
		return st;
	if (!k.ev)
		return TP_OK;
	int64_t when;
	if ((st = packet_time(c, s, &k, &when)))
		return st;
	return tp_ck_track_event(c, s, k.has_ts, when, k.ev, k.evn);
}

int tp_perfetto_check(const char *path, struct tp_perfetto_check_report *r, struct tp_diag *d)
{
	return tp_perfetto_check_visit(path, r, NULL, NULL, d);
}

int tp_perfetto_check_visit(const char *path, struct tp_perfetto_check_report *r,
                            tp_perfetto_visit_fn fn, void *ctx, struct tp_diag *d)
{
	struct tp_perfetto_check_report dummy;
	if (!r)
		r = &dummy;
	memset(r, 0, sizeof *r);
	struct tp_file file;
	int st = tp_file_load(&file, path, d);
	if (st)
		return st;
	struct ck c = {.path = path,
	               .d = d,
	               .r = r,
	               .inner_off = UINT64_MAX,
	               .file_size = file.size,
	               .fn = fn,
	               .ctx = ctx};
	tp_buf_init(&c.pool);
	if (file.size == 0) {
		tp_file_release(&file);
		return tp_diag_at(d, TP_ETRUNC, path, 0,
		                  "empty file: a trace holds at least one packet");
	}
	const uint8_t *p = file.data, *e = file.data + file.size;
	while (p < e && !st) {
		c.off = (uint64_t)(p - file.data);
		struct fld f;
		int fr = tp_ck_next_field(&p, e, &f);
		if (fr != 1)
			st = tp_diag_at(d, TP_ETRUNC, path, c.off,
			                "truncated or malformed Trace record");
		else if (f.num != F_TRACE_PACKET || f.wt != TP_PB_LEN)
			st = tp_diag_at(d, TP_EFORMAT, path, c.off,
			                "record field %u wire type %u is not Trace.packet", f.num,
			                f.wt);
		else
			st = packet(&c, f.p, f.n, 0);
		if (!st && c.oom)
			st = tp_ck_nomem(&c);
	}
	if (!st) {
		c.off = file.size;
		for (size_t i = 0; i < c.ntracks && !st; i++)
			if (c.tracks[i].depth)
				st = tp_diag_at(
				    d, TP_EFORMAT, path, c.off, "track %llu: %zu slices never end",
				    (unsigned long long)c.tracks[i].uuid, c.tracks[i].depth);
		for (size_t i = 0; i < c.flows_ended.cap && !st; i++)
			if (c.flows_ended.v[i] &&
			    !tp_ck_hs_find(&c.flows_started, c.flows_ended.k[i], 0, 0, &c.oom))
				st = tp_diag_at(d, TP_EFORMAT, path, c.off,
				                "flow %llu terminates but never starts",
				                (unsigned long long)c.flows_ended.k[i]);
	}
	for (size_t i = 0; i < c.nseqs; i++)
		for (int k = 0; k < IK_COUNT; k++)
			hs_free(&c.seqs[i].interned[k]);
	tp_free(c.seqs);
	hs_free(&c.seq_ix);
	for (size_t i = 0; i < c.ntracks; i++)
		tp_free(c.tracks[i].open);
	tp_free(c.tracks);
	hs_free(&c.track_ix);
	hs_free(&c.flows_started);
	hs_free(&c.flows_ended);
	tp_free(c.zbuf);
	tp_buf_free(&c.pool);
	tp_free(c.args);
	tp_free(c.flows[0]);
	tp_free(c.flows[1]);
	tp_file_release(&file);
	return st;
}
