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

struct hset {
	uint64_t *k;
	size_t *v; /* value + 1; 0 = empty slot */
	size_t cap, n;
};

static size_t hs_hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* Returns the slot of k (inserting with value v if absent and `insert`), or NULL when absent
 * (or out of memory, reported through *oom). */
static size_t *hs_find(struct hset *h, uint64_t k, int insert, size_t v, int *oom)
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
	if (h->cap)
		memset(h->v, 0, h->cap * sizeof *h->v);
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

__attribute__((format(printf, 2, 3))) static int bad(struct ck *c, const char *fmt, ...)
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

static int nomem(struct ck *c)
{
	return tp_diag_set(c->d, TP_ENOMEM, "%s: out of memory checking the trace", c->path);
}

static struct seq *get_seq(struct ck *c, uint32_t id, int *is_new)
{
	*is_new = 0;
	size_t *v = hs_find(&c->seq_ix, id, 0, 0, &c->oom);
	if (v)
		return &c->seqs[*v - 1];
	struct seq *n = tp_grow(c->seqs, sizeof *c->seqs, c->nseqs + 1, &c->cap_seqs);
	if (!n) {
		c->oom = 1;
		return NULL;
	}
	c->seqs = n;
	if (!hs_find(&c->seq_ix, id, 1, c->nseqs, &c->oom))
		return NULL;
	struct seq *s = &c->seqs[c->nseqs++];
	memset(s, 0, sizeof *s);
	s->id = id;
	*is_new = 1;
	c->r->sequences++;
	return s;
}

static struct track *find_track(struct ck *c, uint64_t uuid)
{
	size_t *v = hs_find(&c->track_ix, uuid, 0, 0, &c->oom);
	return v ? &c->tracks[*v - 1] : NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Field iteration                                                                           */
/* ---------------------------------------------------------------------------------------- */

struct fld {
	unsigned num, wt;
	uint64_t v;       /* varint / fixed value */
	const uint8_t *p; /* LEN payload */
	size_t n;
};

/* 1 = a field was read, 0 = end of message, -1 = malformed. */
static int next_field(const uint8_t **p, const uint8_t *end, struct fld *f)
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
	while ((r = next_field(&p, e, &f)) == 1)
		;
	return r == 0;
}

#define EXPECT_WT(c, f, w, what)                                                                   \
	do {                                                                                       \
		if ((f).wt != (w))                                                                 \
			return bad((c), "%s has wire type %u, expected %u", (what), (f).wt, (w));  \
	} while (0)

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
	while ((r = next_field(&p, e, &f)) == 1) {
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
		return bad(c, "malformed interned entry");
	if (!has_iid || iid == 0)
		return bad(c, "interned entry without a non-zero iid");
	size_t off = 0;
	if (c->fn) {
		uint32_t len = (uint32_t)str_n;
		off = c->pool.len;
		tp_buf_put(&c->pool, &len, sizeof len);
		tp_buf_put(&c->pool, str ? (const void *)str : "", str_n);
		if (c->pool.oom)
			return nomem(c);
	}
	if (!hs_find(&s->interned[kind], iid, 1, off, &c->oom))
		return nomem(c);
	c->r->interned++;
	return TP_OK;
}

static int interned_data(struct ck *c, struct seq *s, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r, st;
	while ((r = next_field(&p, e, &f)) == 1) {
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
	return r < 0 ? bad(c, "malformed interned_data") : TP_OK;
}

/* Checks that iid is interned on s; with a visitor, *str / *n get its string. */
static int need_iid_str(struct ck *c, struct seq *s, int kind, uint64_t iid, const char *what,
                        const char **str, size_t *n)
{
	if (iid == 0)
		return bad(c, "%s iid is 0 (unset)", what);
	size_t *v = s ? hs_find(&s->interned[kind], iid, 0, 0, &c->oom) : NULL;
	if (!v)
		return bad(c, "%s iid %llu used before it is interned on sequence %u", what,
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
	while ((r = next_field(&p, e, &f)) == 1) {
		if (f.num == F_DEF_TS_CLOCK_ID) {
			EXPECT_WT(c, f, TP_PB_VARINT, "default timestamp_clock_id");
			s->def_clock = (uint32_t)f.v;
		} else if (f.num == F_DEF_TRACK_EVENT) {
			EXPECT_WT(c, f, TP_PB_LEN, "track_event_defaults");
			const uint8_t *q = f.p, *qe = f.p + f.n;
			struct fld g;
			int r2;
			while ((r2 = next_field(&q, qe, &g)) == 1)
				if (g.num == F_TED_TRACK_UUID && g.wt == TP_PB_VARINT) {
					s->def_track = g.v;
					s->has_def_track = 1;
				}
			if (r2 < 0)
				return bad(c, "malformed track_event_defaults");
		}
	}
	return r < 0 ? bad(c, "malformed trace_packet_defaults") : TP_OK;
}

static int clock_snapshot(struct ck *c, struct seq *s, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r;
	uint64_t boot = 0;
	int have_boot = 0, have_user = 0;
	uint32_t uid = 0;
	uint64_t uval = 0;
	int uincr = 0;
	while ((r = next_field(&p, e, &f)) == 1) {
		if (f.num != F_CS_CLOCKS)
			continue;
		EXPECT_WT(c, f, TP_PB_LEN, "ClockSnapshot.clocks");
		const uint8_t *q = f.p, *qe = f.p + f.n;
		struct fld g;
		int r2;
		uint32_t id = 0;
		uint64_t ts = 0;
		int incr = 0;
		while ((r2 = next_field(&q, qe, &g)) == 1) {
			if (g.wt != TP_PB_VARINT)
				continue;
			if (g.num == F_CLK_ID)
				id = (uint32_t)g.v;
			else if (g.num == F_CLK_TS)
				ts = g.v;
			else if (g.num == F_CLK_INCREMENTAL)
				incr = g.v != 0;
		}
		if (r2 < 0)
			return bad(c, "malformed ClockSnapshot.Clock");
		if (id >= 64 && id < 128) {
			uid = id;
			uval = ts;
			uincr = incr;
			have_user = 1;
		} else if (id == TP_PB_CLOCK_BOOTTIME || !have_boot) {
			boot = ts;
			have_boot = 1;
		}
	}
	if (r < 0)
		return bad(c, "malformed clock_snapshot");
	if (have_user) {
		if (!s)
			return bad(c, "sequence-scoped clock %u in a packet without sequence id",
			           uid);
		if (!have_boot)
			return bad(c, "clock snapshot relates clock %u to no global clock", uid);
		s->clk_id = uid;
		s->clk_incremental = uincr;
		s->clk_value = uval;
		s->clk_boot = boot;
		s->clk_last = uval;
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
	while ((r = next_field(&p, e, &f)) == 1) {
		switch (f.num) {
		case F_TD_UUID:
			EXPECT_WT(c, f, TP_PB_VARINT, "TrackDescriptor.uuid");
			uuid = f.v;
			has_uuid = 1;
			break;
		case F_TD_PARENT:
			EXPECT_WT(c, f, TP_PB_VARINT, "TrackDescriptor.parent_uuid");
			parent = f.v;
			has_parent = 1;
			break;
		case F_TD_PROCESS:
		case F_TD_THREAD: {
			EXPECT_WT(c, f, TP_PB_LEN, "process/thread descriptor");
			const uint8_t *q = f.p, *qe = f.p + f.n;
			struct fld g;
			int r2, has_pid = 0, has_tid = 0;
			int64_t pid = 0, tid = 0;
			while ((r2 = next_field(&q, qe, &g)) == 1) {
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
				return bad(c, "malformed process/thread descriptor");
			if (!has_pid || pid == 0)
				return bad(c, "track %llu: %s descriptor with pid %s",
				           (unsigned long long)uuid,
				           f.num == F_TD_PROCESS ? "process" : "thread",
				           has_pid ? "0" : "missing");
			if (f.num == F_TD_THREAD && (!has_tid || tid == 0))
				return bad(c, "track %llu: thread descriptor with tid %s",
				           (unsigned long long)uuid, has_tid ? "0" : "missing");
			kind = f.num == F_TD_PROCESS ? TK_PROCESS : TK_THREAD;
			break;
		}
		case F_TD_COUNTER:
			EXPECT_WT(c, f, TP_PB_LEN, "CounterDescriptor");
			if (!well_formed(f.p, f.n))
				return bad(c, "malformed CounterDescriptor");
			kind = TK_COUNTER;
			break;
		default:
			break;
		}
	}
	if (r < 0)
		return bad(c, "malformed TrackDescriptor");
	if (!has_uuid)
		return bad(c, "TrackDescriptor without uuid");
	if (find_track(c, uuid))
		return bad(c, "track uuid %llu declared twice", (unsigned long long)uuid);
	if (has_parent && !find_track(c, parent))
		return bad(c, "track %llu: parent_uuid %llu is not declared before it",
		           (unsigned long long)uuid, (unsigned long long)parent);
	struct track *nt = tp_grow(c->tracks, sizeof *c->tracks, c->ntracks + 1, &c->cap_tracks);
	if (!nt)
		return nomem(c);
	c->tracks = nt;
	if (!hs_find(&c->track_ix, uuid, 1, c->ntracks, &c->oom))
		return nomem(c);
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

static int annotation(struct ck *c, struct seq *s, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r, st, named = 0;
	struct tp_perfetto_arg a = {0};
	while ((r = next_field(&p, e, &f)) == 1) {
		if (f.num == F_DA_NAME_IID) {
			EXPECT_WT(c, f, TP_PB_VARINT, "DebugAnnotation.name_iid");
			if ((st = need_iid_str(c, s, IK_KEY, f.v, "debug annotation name", &a.key,
			                       &a.key_len)))
				return st;
			named = 1;
		} else if (f.num == F_DA_NAME) {
			EXPECT_WT(c, f, TP_PB_LEN, "DebugAnnotation.name");
			a.key = (const char *)f.p;
			a.key_len = f.n;
			named = 1;
		} else if (f.num == F_DA_STRING_IID) {
			EXPECT_WT(c, f, TP_PB_VARINT, "DebugAnnotation.string_value_iid");
			if ((st = need_iid_str(c, s, IK_STR, f.v, "debug annotation string value",
			                       &a.s, &a.n)))
				return st;
			a.type = 's';
		} else if (f.num == F_DA_STRING) {
			EXPECT_WT(c, f, TP_PB_LEN, "DebugAnnotation.string_value");
			a.s = (const char *)f.p;
			a.n = f.n;
			a.type = 's';
		} else if (f.num == F_DA_DOUBLE) {
			EXPECT_WT(c, f, TP_PB_I64, "DebugAnnotation.double_value");
			a.type = 'd';
			a.v = f.v;
		} else if (f.num == F_DA_INT || f.num == F_DA_UINT || f.num == F_DA_BOOL ||
		           f.num == 7 /* pointer_value */) {
			EXPECT_WT(c, f, TP_PB_VARINT, "DebugAnnotation integer value");
			a.type = f.num == F_DA_INT    ? 'i'
			         : f.num == F_DA_UINT ? 'u'
			         : f.num == F_DA_BOOL ? 'b'
			                              : 'p';
			a.v = f.v;
		}
	}
	if (r < 0)
		return bad(c, "malformed DebugAnnotation");
	if (!named)
		return bad(c, "debug annotation without a name");
	c->r->annotations++;
	if (c->fn) {
		struct tp_perfetto_arg *na =
		    tp_grow(c->args, sizeof *c->args, c->nargs + 1, &c->cap_args);
		if (!na)
			return nomem(c);
		c->args = na;
		c->args[c->nargs++] = a;
	}
	return TP_OK;
}

static int flow_id(struct ck *c, struct hset *h, uint64_t id)
{
	if (!hs_find(h, id, 1, 0, &c->oom))
		return nomem(c);
	if (c->fn) {
		int k = h == &c->flows_ended;
		uint64_t *nf = tp_grow(c->flows[k], sizeof *nf, c->nflows[k] + 1, &c->cap_flows[k]);
		if (!nf)
			return nomem(c);
		c->flows[k] = nf;
		c->flows[k][c->nflows[k]++] = id;
	}
	return TP_OK;
}

static int track_event(struct ck *c, struct seq *s, int has_ts, int64_t ts, const uint8_t *p,
                       size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r, st;
	uint64_t type = 0, uuid = 0;
	int has_uuid = 0, has_value = 0;
	unsigned flow_forms = 0; /* bit (field - 36): which flow fields the event carries */
	struct tp_perfetto_event ev = {0};
	c->nargs = c->nflows[0] = c->nflows[1] = 0;
	while ((r = next_field(&p, e, &f)) == 1) {
		if (f.num == F_TE_FLOW_IDS_OLD || f.num == F_TE_TERM_FLOW_IDS_OLD ||
		    f.num == F_TE_FLOW_IDS || f.num == F_TE_TERM_FLOW_IDS)
			flow_forms |= 1u << (f.num - F_TE_FLOW_IDS_OLD);
		switch (f.num) {
		case F_TE_TYPE:
			EXPECT_WT(c, f, TP_PB_VARINT, "TrackEvent.type");
			type = f.v;
			break;
		case F_TE_TRACK_UUID:
			EXPECT_WT(c, f, TP_PB_VARINT, "TrackEvent.track_uuid");
			uuid = f.v;
			has_uuid = 1;
			break;
		case F_TE_NAME_IID:
			EXPECT_WT(c, f, TP_PB_VARINT, "TrackEvent.name_iid");
			if ((st = need_iid_str(c, s, IK_NAME, f.v, "event name", &ev.name,
			                       &ev.name_len)))
				return st;
			break;
		case F_TE_NAME:
			EXPECT_WT(c, f, TP_PB_LEN, "TrackEvent.name");
			ev.name = (const char *)f.p;
			ev.name_len = f.n;
			break;
		case F_TE_CATEGORY_IIDS:
			EXPECT_WT(c, f, TP_PB_VARINT,
			          "TrackEvent.category_iids (must not be packed)");
			/* The visitor sees the first category (tpuprof writes one). */
			if ((st =
			         need_iid_str(c, s, IK_CAT, f.v, "event category",
			                      ev.category ? NULL : &ev.category, &ev.category_len)))
				return st;
			break;
		case F_TE_DEBUG:
			EXPECT_WT(c, f, TP_PB_LEN, "TrackEvent.debug_annotations");
			if ((st = annotation(c, s, f.p, f.n)))
				return st;
			break;
		case F_TE_FLOW_IDS_OLD:
		case F_TE_TERM_FLOW_IDS_OLD:
			/* The varint twins of 47/48 (what tpuprof writes, perfetto.c put_flow). */
			EXPECT_WT(c, f, TP_PB_VARINT,
			          "flow id in field 36/42 (varint, not packed)");
			if ((st = flow_id(c,
			                  f.num == F_TE_FLOW_IDS_OLD ? &c->flows_started
			                                             : &c->flows_ended,
			                  f.v)))
				return st;
			c->r->flows += f.num == F_TE_TERM_FLOW_IDS_OLD;
			break;
		case F_TE_FLOW_IDS:
		case F_TE_TERM_FLOW_IDS:
			EXPECT_WT(c, f, TP_PB_I64, "flow id (fixed64, not packed)");
			if ((st = flow_id(
			         c, f.num == F_TE_FLOW_IDS ? &c->flows_started : &c->flows_ended,
			         f.v)))
				return st;
			c->r->flows += f.num == F_TE_TERM_FLOW_IDS;
			break;
		case F_TE_COUNTER_VALUE:
		case F_TE_DOUBLE_COUNTER:
			has_value = 1;
			if (f.num == F_TE_DOUBLE_COUNTER && f.wt == TP_PB_I64) {
				ev.has_double = 1;
				memcpy(&ev.counter_value, &f.v, sizeof ev.counter_value);
			} else {
				ev.int_counter_value = (int64_t)f.v;
			}
			break;
		default:
			break;
		}
	}
	if (r < 0)
		return bad(c, "malformed TrackEvent");
	/* trace_processor reads the varint form only when the fixed64 one is absent. */
	if ((flow_forms & 1u << (F_TE_FLOW_IDS - F_TE_FLOW_IDS_OLD) && flow_forms & 1u << 0) ||
	    (flow_forms & 1u << (F_TE_TERM_FLOW_IDS - F_TE_FLOW_IDS_OLD) &&
	     flow_forms & 1u << (F_TE_TERM_FLOW_IDS_OLD - F_TE_FLOW_IDS_OLD)))
		return bad(c,
		           "event carries flow ids in both the fixed64 and the varint field (the "
		           "varint ones are ignored on import)");
	if (!has_ts)
		return bad(c, "track event without timestamp");
	if (!has_uuid && s && s->has_def_track) {
		uuid = s->def_track;
		has_uuid = 1;
	}
	if (!has_uuid)
		return bad(c, "track event without track_uuid (would land on the global track)");
	struct track *t = find_track(c, uuid);
	if (!t)
		return bad(c,
		           "track event on track uuid %llu, which no earlier descriptor declares",
		           (unsigned long long)uuid);
	if (ts < t->last_ts)
		return bad(c, "track %llu: event at %lld ns before the previous one at %lld ns",
		           (unsigned long long)uuid, (long long)ts, (long long)t->last_ts);
	t->last_ts = ts;
	if (!c->have_ts || ts < c->r->first_ts)
		c->r->first_ts = ts;
	if (!c->have_ts || ts > c->r->last_ts)
		c->r->last_ts = ts;
	c->have_ts = 1;
	switch (type) {
	case TE_SLICE_BEGIN:
	case TE_INSTANT:
		if (t->kind == TK_COUNTER)
			return bad(c, "slice event on counter track %llu",
			           (unsigned long long)uuid);
		if (type == TE_INSTANT) {
			c->r->instants++;
			break;
		}
		if (t->depth == t->cap) {
			size_t cap = t->cap;
			int64_t *o = tp_grow(t->open, sizeof *o, t->depth + 1, &cap);
			if (!o)
				return nomem(c);
			t->open = o;
			t->cap = cap;
		}
		t->open[t->depth++] = ts;
		if ((int)t->depth > c->r->max_depth)
			c->r->max_depth = (int)t->depth;
		c->r->slices++;
		break;
	case TE_SLICE_END:
		if (t->kind == TK_COUNTER)
			return bad(c, "slice event on counter track %llu",
			           (unsigned long long)uuid);
		if (!t->depth)
			return bad(c, "track %llu: SLICE_END with no open slice",
			           (unsigned long long)uuid);
		t->depth--;
		break;
	case TE_COUNTER:
		if (t->kind != TK_COUNTER)
			return bad(c, "counter event on non-counter track %llu",
			           (unsigned long long)uuid);
		if (!has_value)
			return bad(c, "counter event without a value");
		c->r->counters++;
		break;
	default:
		return bad(c, "track event of type %llu", (unsigned long long)type);
	}
	if (c->fn) {
		ev.type = (int)type;
		ev.track_uuid = uuid;
		ev.ts = ts;
		ev.num_args = c->nargs;
		ev.args = c->args;
		ev.num_flows = c->nflows[0];
		ev.flows = c->flows[0];
		ev.num_term_flows = c->nflows[1];
		ev.term_flows = c->flows[1];
		return c->fn(c->ctx, &ev);
	}
	return TP_OK;
}

static int packet(struct ck *c, const uint8_t *p, size_t n, int depth);

static int compressed(struct ck *c, const uint8_t *p, size_t n)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit(&z) != Z_OK)
		return nomem(c);
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
				return nomem(c);
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
				return bad(
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
		return bad(c, "compressed_packets is not a complete zlib stream");
	c->r->chunks++;
	const uint8_t *q = c->zbuf, *e = c->zbuf + len;
	int st;
	while (q < e) {
		c->inner_off = (uint64_t)(q - c->zbuf);
		struct fld f;
		if (next_field(&q, e, &f) != 1 || f.num != F_TRACE_PACKET || f.wt != TP_PB_LEN)
			return bad(c, "compressed chunk holds something other than packets");
		if ((st = packet(c, f.p, f.n, 1)))
			return st;
	}
	c->inner_off = UINT64_MAX;
	return TP_OK;
}

static int packet(struct ck *c, const uint8_t *p, size_t n, int depth)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r;
	int has_ts = 0, has_seq = 0, has_clock = 0, cleared = 0;
	uint64_t ts = 0, flags = 0;
	uint32_t seq_id = 0, clock = 0;
	const uint8_t *ev = NULL, *in = NULL, *td = NULL, *df = NULL, *cs = NULL, *zp = NULL;
	size_t evn = 0, inn = 0, tdn = 0, dfn = 0, csn = 0, zn = 0;
	while ((r = next_field(&p, e, &f)) == 1) {
		switch (f.num) {
		case F_PKT_TIMESTAMP:
			EXPECT_WT(c, f, TP_PB_VARINT, "TracePacket.timestamp");
			ts = f.v;
			has_ts = 1;
			break;
		case F_PKT_SEQ_ID:
			EXPECT_WT(c, f, TP_PB_VARINT, "trusted_packet_sequence_id");
			seq_id = (uint32_t)f.v;
			has_seq = seq_id != 0;
			break;
		case F_PKT_SEQ_FLAGS:
			EXPECT_WT(c, f, TP_PB_VARINT, "sequence_flags");
			flags = f.v;
			break;
		case F_PKT_INCR_CLEARED:
			EXPECT_WT(c, f, TP_PB_VARINT, "incremental_state_cleared");
			cleared |= f.v != 0;
			break;
		case F_PKT_PREV_DROPPED:
			if (f.wt == TP_PB_VARINT && f.v)
				return bad(c, "previous_packet_dropped set by a file writer");
			break;
		case F_PKT_TS_CLOCK_ID:
			EXPECT_WT(c, f, TP_PB_VARINT, "timestamp_clock_id");
			clock = (uint32_t)f.v;
			has_clock = 1;
			break;
#define TAKE(fieldno, ptr, len, what)                                                              \
	case fieldno:                                                                              \
		EXPECT_WT(c, f, TP_PB_LEN, what);                                                  \
		ptr = f.p;                                                                         \
		len = f.n;                                                                         \
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
		return bad(c, "malformed TracePacket");
	c->r->packets++;
	if (zp) {
		if (depth)
			return bad(c, "compressed_packets nested inside a compressed chunk");
		return compressed(c, zp, zn);
	}
	cleared |= (flags & SEQ_CLEARED) != 0;
	struct seq *s = NULL;
	int st;
	if (has_seq) {
		int is_new;
		if (!(s = get_seq(c, seq_id, &is_new)))
			return nomem(c);
		if (is_new && !cleared)
			return bad(c,
			           "first packet of sequence %u does not clear incremental state",
			           seq_id);
		if (cleared) {
			s->cleared = 1;
			for (int k = 0; k < IK_COUNT; k++)
				hs_clear(&s->interned[k]);
			s->has_def_track = 0;
			s->def_clock = 0;
			s->clk_id = 0;
		}
	} else {
		if (flags & SEQ_NEEDS_STATE)
			return bad(
			    c, "SEQ_NEEDS_INCREMENTAL_STATE without trusted_packet_sequence_id");
		if (ev)
			return bad(
			    c,
			    "track event without trusted_packet_sequence_id (dropped on import)");
		if (in)
			return bad(c, "interned_data without trusted_packet_sequence_id");
		if (df)
			return bad(c, "trace_packet_defaults without trusted_packet_sequence_id");
	}
	if (s && (flags & SEQ_NEEDS_STATE) && !s->cleared)
		return bad(c, "sequence %u needs incremental state that was never cleared", seq_id);
	if (df && (st = defaults(c, s, df, dfn)))
		return st;
	if (in && (st = interned_data(c, s, in, inn)))
		return st;
	if (cs)
		return clock_snapshot(c, s, cs, csn);
	if (td && (st = track_descriptor(c, td, tdn)))
		return st;
	if (!ev)
		return TP_OK;
	/* Resolve the timestamp. */
	int64_t when = (int64_t)ts;
	if (has_ts) {
		uint32_t clk = has_clock ? clock : s ? s->def_clock : 0;
		if (clk >= 64 && clk < 128) {
			if (!s || s->clk_id != clk)
				return bad(c,
				           "timestamp on clock %u, which no snapshot of sequence "
				           "%u defines",
				           clk, seq_id);
			uint64_t v = s->clk_incremental ? s->clk_last + ts : ts;
			s->clk_last = v;
			when = (int64_t)(s->clk_boot + (v - s->clk_value));
		} else if (clk != 0 && clk != TP_PB_CLOCK_BOOTTIME) {
			return bad(c, "timestamp on clock %u, which this checker does not resolve",
			           clk);
		}
		if (when < 0)
			return bad(c, "negative timestamp");
	}
	return track_event(c, s, has_ts, when, ev, evn);
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
	struct ck c;
	memset(&c, 0, sizeof c);
	c.path = path;
	c.d = d;
	c.r = r;
	c.inner_off = UINT64_MAX;
	c.file_size = file.size;
	c.fn = fn;
	c.ctx = ctx;
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
		int fr = next_field(&p, e, &f);
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
			st = nomem(&c);
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
			    !hs_find(&c.flows_started, c.flows_ended.k[i], 0, 0, &c.oom))
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
