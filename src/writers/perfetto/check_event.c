/*
 * check_event.c — the Perfetto checker's TrackEvent rules (check.c drives the packets):
 * an event needs a timestamp and a declared track, is in time order on its track, slices
 * nest (END closes the innermost open slice), counters sit on counter tracks, interned names
 * and annotations resolve on the event's sequence, and flow ids sit in one field form. With a
 * visitor the event is handed over decoded (tp_perfetto_check_visit).
 *
 * Owns nothing: the state is the checker's (struct ck, perfetto_int.h).
 */
#include <string.h>

#include "writers/perfetto/perfetto.h"
#include "writers/perfetto/perfetto_int.h"

static int annotation(struct ck *c, struct seq *s, const uint8_t *p, size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r, st, named = 0;
	struct tp_perfetto_arg a = {0};
	while ((r = tp_ck_next_field(&p, e, &f)) == 1) {
		if (f.num == F_DA_NAME_IID) {
			EXPECT_WT(c, f, TP_PB_VARINT, "DebugAnnotation.name_iid");
			if ((st = tp_ck_need_iid_str(c, s, IK_KEY, f.v, "debug annotation name",
			                             &a.key, &a.key_len)))
				return st;
			named = 1;
		} else if (f.num == F_DA_NAME) {
			EXPECT_WT(c, f, TP_PB_LEN, "DebugAnnotation.name");
			a.key = (const char *)f.p;
			a.key_len = f.n;
			named = 1;
		} else if (f.num == F_DA_STRING_IID) {
			EXPECT_WT(c, f, TP_PB_VARINT, "DebugAnnotation.string_value_iid");
			if ((st = tp_ck_need_iid_str(c, s, IK_STR, f.v,
			                             "debug annotation string value", &a.s, &a.n)))
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
		return tp_ck_bad(c, "malformed DebugAnnotation");
	if (!named)
		return tp_ck_bad(c, "debug annotation without a name");
	c->r->annotations++;
	if (c->fn) {
		struct tp_perfetto_arg *na =
		    tp_grow(c->args, sizeof *c->args, c->nargs + 1, &c->cap_args);
		if (!na)
			return tp_ck_nomem(c);
		c->args = na;
		c->args[c->nargs++] = a;
	}
	return TP_OK;
}

static int flow_id(struct ck *c, struct hset *h, uint64_t id)
{
	if (!tp_ck_hs_find(h, id, 1, 0, &c->oom))
		return tp_ck_nomem(c);
	if (c->fn) {
		int k = h == &c->flows_ended;
		uint64_t *nf = tp_grow(c->flows[k], sizeof *nf, c->nflows[k] + 1, &c->cap_flows[k]);
		if (!nf)
			return tp_ck_nomem(c);
		c->flows[k] = nf;
		c->flows[k][c->nflows[k]++] = id;
	}
	return TP_OK;
}

/* What a TrackEvent's fields say (event_fields). */
struct event_fields {
	uint64_t type, uuid;
	int has_uuid, has_value;
	unsigned flow_forms; /* bit (field - 36): which flow fields the event carries */
	struct tp_perfetto_event ev;
};

/* One field of a TrackEvent into x (interned strings resolved, annotations and flow ids
 * collected). */
static int event_field(struct ck *c, struct seq *s, const struct fld *fp, struct event_fields *x)
{
	struct fld f = *fp;
	int st;
	struct tp_perfetto_event *ev = &x->ev;
	switch (f.num) {
	case F_TE_TYPE:
		EXPECT_WT(c, f, TP_PB_VARINT, "TrackEvent.type");
		x->type = f.v;
		break;
	case F_TE_TRACK_UUID:
		TAKE_VARINT(c, f, "TrackEvent.track_uuid", x->uuid, x->has_uuid);
		break;
	case F_TE_NAME_IID:
		EXPECT_WT(c, f, TP_PB_VARINT, "TrackEvent.name_iid");
		if ((st = tp_ck_need_iid_str(c, s, IK_NAME, f.v, "event name", &ev->name,
		                             &ev->name_len)))
			return st;
		break;
	case F_TE_NAME:
		EXPECT_WT(c, f, TP_PB_LEN, "TrackEvent.name");
		ev->name = (const char *)f.p;
		ev->name_len = f.n;
		break;
	case F_TE_CATEGORY_IIDS:
		EXPECT_WT(c, f, TP_PB_VARINT, "TrackEvent.category_iids (must not be packed)");
		/* The visitor sees the first category (tpuprof writes one). */
		if ((st = tp_ck_need_iid_str(c, s, IK_CAT, f.v, "event category",
		                             ev->category ? NULL : &ev->category,
		                             &ev->category_len)))
			return st;
		break;
	case F_TE_DEBUG:
		EXPECT_WT(c, f, TP_PB_LEN, "TrackEvent.debug_annotations");
		return annotation(c, s, f.p, f.n);
	case F_TE_FLOW_IDS_OLD:
	case F_TE_TERM_FLOW_IDS_OLD:
		/* The varint twins of 47/48 (what tpuprof writes, perfetto.c put_flow). */
		EXPECT_WT(c, f, TP_PB_VARINT, "flow id in field 36/42 (varint, not packed)");
		if ((st = flow_id(
		         c, f.num == F_TE_FLOW_IDS_OLD ? &c->flows_started : &c->flows_ended, f.v)))
			return st;
		c->r->flows += f.num == F_TE_TERM_FLOW_IDS_OLD;
		break;
	case F_TE_FLOW_IDS:
	case F_TE_TERM_FLOW_IDS:
		EXPECT_WT(c, f, TP_PB_I64, "flow id (fixed64, not packed)");
		if ((st = flow_id(c, f.num == F_TE_FLOW_IDS ? &c->flows_started : &c->flows_ended,
		                  f.v)))
			return st;
		c->r->flows += f.num == F_TE_TERM_FLOW_IDS;
		break;
	case F_TE_COUNTER_VALUE:
	case F_TE_DOUBLE_COUNTER:
		x->has_value = 1;
		if (f.num == F_TE_DOUBLE_COUNTER && f.wt == TP_PB_I64) {
			ev->has_double = 1;
			memcpy(&ev->counter_value, &f.v, sizeof ev->counter_value);
		} else {
			ev->int_counter_value = (int64_t)f.v;
		}
		break;
	default:
		break;
	}
	return TP_OK;
}

/* The event's effect on its track t: slices open and close, instants and counters count. */
static int event_on_track(struct ck *c, struct track *t, const struct event_fields *x, int64_t ts)
{
	unsigned long long uuid = (unsigned long long)x->uuid;
	switch (x->type) {
	case TE_SLICE_BEGIN:
	case TE_INSTANT:
		if (t->kind == TK_COUNTER)
			return tp_ck_bad(c, "slice event on counter track %llu", uuid);
		if (x->type == TE_INSTANT) {
			c->r->instants++;
			break;
		}
		if (t->depth == t->cap) {
			size_t cap = t->cap;
			int64_t *o = tp_grow(t->open, sizeof *o, t->depth + 1, &cap);
			if (!o)
				return tp_ck_nomem(c);
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
			return tp_ck_bad(c, "slice event on counter track %llu", uuid);
		if (!t->depth)
			return tp_ck_bad(c, "track %llu: SLICE_END with no open slice", uuid);
		t->depth--;
		break;
	case TE_COUNTER:
		if (t->kind != TK_COUNTER)
			return tp_ck_bad(c, "counter event on non-counter track %llu", uuid);
		if (!x->has_value)
			return tp_ck_bad(c, "counter event without a value");
		c->r->counters++;
		break;
	default:
		return tp_ck_bad(c, "track event of type %llu", (unsigned long long)x->type);
	}
	return TP_OK;
}

/* The event's track (its own uuid or the sequence default's), checked to exist and to see
 * its events in time order; the report's time range grows to ts. */
static int event_track(struct ck *c, struct seq *s, struct event_fields *x, int64_t ts,
                       struct track **out)
{
	if (!x->has_uuid && s && s->has_def_track) {
		x->uuid = s->def_track;
		x->has_uuid = 1;
	}
	if (!x->has_uuid)
		return tp_ck_bad(c,
		                 "track event without track_uuid (would land on the global track)");
	struct track *t = tp_ck_find_track(c, x->uuid);
	if (!t)
		return tp_ck_bad(
		    c, "track event on track uuid %llu, which no earlier descriptor declares",
		    (unsigned long long)x->uuid);
	if (ts < t->last_ts)
		return tp_ck_bad(c,
		                 "track %llu: event at %lld ns before the previous one at %lld ns",
		                 (unsigned long long)x->uuid, (long long)ts, (long long)t->last_ts);
	t->last_ts = ts;
	if (!c->have_ts || ts < c->r->first_ts)
		c->r->first_ts = ts;
	if (!c->have_ts || ts > c->r->last_ts)
		c->r->last_ts = ts;
	c->have_ts = 1;
	*out = t;
	return TP_OK;
}

int tp_ck_track_event(struct ck *c, struct seq *s, int has_ts, int64_t ts, const uint8_t *p,
                      size_t n)
{
	const uint8_t *e = p + n;
	struct fld f;
	int r, st;
	struct event_fields x = {0};
	c->nargs = c->nflows[0] = c->nflows[1] = 0;
	while ((r = tp_ck_next_field(&p, e, &f)) == 1) {
		if (f.num == F_TE_FLOW_IDS_OLD || f.num == F_TE_TERM_FLOW_IDS_OLD ||
		    f.num == F_TE_FLOW_IDS || f.num == F_TE_TERM_FLOW_IDS)
			x.flow_forms |= 1u << (f.num - F_TE_FLOW_IDS_OLD);
		if ((st = event_field(c, s, &f, &x)))
			return st;
	}
	if (r < 0)
		return tp_ck_bad(c, "malformed TrackEvent");
	/* trace_processor reads the varint form only when the fixed64 one is absent. */
	unsigned ff = x.flow_forms;
	if ((ff & 1u << (F_TE_FLOW_IDS - F_TE_FLOW_IDS_OLD) && ff & 1u << 0) ||
	    (ff & 1u << (F_TE_TERM_FLOW_IDS - F_TE_FLOW_IDS_OLD) &&
	     ff & 1u << (F_TE_TERM_FLOW_IDS_OLD - F_TE_FLOW_IDS_OLD)))
		return tp_ck_bad(
		    c, "event carries flow ids in both the fixed64 and the varint field (the "
		       "varint ones are ignored on import)");
	if (!has_ts)
		return tp_ck_bad(c, "track event without timestamp");
	struct track *t = NULL;
	if ((st = event_track(c, s, &x, ts, &t)) || (st = event_on_track(c, t, &x, ts)))
		return st;
	if (c->fn) {
		struct tp_perfetto_event *ev = &x.ev;
		ev->type = (int)x.type;
		ev->track_uuid = x.uuid;
		ev->ts = ts;
		ev->num_args = c->nargs;
		ev->args = c->args;
		ev->num_flows = c->nflows[0];
		ev->flows = c->flows[0];
		ev->num_term_flows = c->nflows[1];
		ev->term_flows = c->flows[1];
		return c->fn(c->ctx, ev);
	}
	return TP_OK;
}
