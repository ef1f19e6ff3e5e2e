/*
 * pb.h — private to src/writers/perfetto: the hand-written protobuf wire encoder and the
 * field numbers of the Perfetto schema subset we write and check (shared/specs/perfetto.md §2;
 * every number checked against shared/perfetto/perfetto_trace.proto).
 *
 * struct tp_pb is a growable byte buffer owned by its user (tp_pb_free). Encoding never fails
 * half-way: an allocation failure sets the sticky `oom` flag and later writes are no-ops.
 */
#ifndef TP_PERFETTO_PB_H
#define TP_PERFETTO_PB_H

#include <string.h>

#include "common/common.h"

/* Wire types. */
enum { TP_PB_VARINT = 0, TP_PB_I64 = 1, TP_PB_LEN = 2 };

/* Field numbers. */
enum {
	F_TRACE_PACKET = 1,
	/* TracePacket */
	F_PKT_TIMESTAMP = 8,
	F_PKT_SEQ_ID = 10,
	F_PKT_TRACK_EVENT = 11,
	F_PKT_INTERNED = 12,
	F_PKT_SEQ_FLAGS = 13,
	F_PKT_CLOCK_SNAPSHOT = 6,
	F_PKT_INCR_CLEARED = 41,
	F_PKT_PREV_DROPPED = 42,
	F_PKT_COMPRESSED = 50,
	F_PKT_TS_CLOCK_ID = 58,
	F_PKT_DEFAULTS = 59,
	F_PKT_TRACK_DESCRIPTOR = 60,
	F_PKT_FIRST_ON_SEQ = 87,
	/* TracePacketDefaults */
	F_DEF_TS_CLOCK_ID = 58,
	F_DEF_TRACK_EVENT = 11,
	F_TED_TRACK_UUID = 11,
	/* ClockSnapshot / Clock */
	F_CS_CLOCKS = 1,
	F_CLK_ID = 1,
	F_CLK_TS = 2,
	F_CLK_INCREMENTAL = 3,
	/* TrackDescriptor */
	F_TD_UUID = 1,
	F_TD_NAME = 2,
	F_TD_PROCESS = 3,
	F_TD_THREAD = 4,
	F_TD_PARENT = 5,
	F_TD_COUNTER = 8,
	F_TD_CHILD_ORDERING = 11,
	F_TD_SIBLING_RANK = 12,
	F_PD_PID = 1,
	F_PD_NAME = 6,
	F_THD_PID = 1,
	F_THD_TID = 2,
	F_THD_NAME = 5,
	F_CD_UNIT_NAME = 6,
	/* TrackEvent */
	F_TE_CATEGORY_IIDS = 3,
	F_TE_DEBUG = 4,
	F_TE_TYPE = 9,
	F_TE_NAME_IID = 10,
	F_TE_TRACK_UUID = 11,
	F_TE_NAME = 23,
	F_TE_COUNTER_VALUE = 30,
	F_TE_DOUBLE_COUNTER = 44,
	F_TE_FLOW_IDS_OLD = 36, /* varint twins of 47/48, read the same way (perfetto.c) */
	F_TE_TERM_FLOW_IDS_OLD = 42,
	F_TE_FLOW_IDS = 47,
	F_TE_TERM_FLOW_IDS = 48,
	/* DebugAnnotation */
	F_DA_NAME_IID = 1,
	F_DA_BOOL = 2,
	F_DA_UINT = 3,
	F_DA_INT = 4,
	F_DA_DOUBLE = 5,
	F_DA_STRING = 6,
	F_DA_NAME = 10,
	F_DA_STRING_IID = 17,
	/* InternedData */
	F_ID_CATEGORIES = 1,
	F_ID_EVENT_NAMES = 2,
	F_ID_ANNOTATION_NAMES = 3,
	F_ID_STRING_VALUES = 29,
	F_IE_IID = 1,
	F_IE_NAME = 2,
};

/* TrackEvent.Type, sequence flags, clocks. */
enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3, TE_COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };
#define TP_PB_CLOCK_INCR 64 /* sequence-scoped user clock, incremental */
#define TP_PB_CLOCK_BOOTTIME 6

struct tp_pb {
	uint8_t *p;
	size_t len, cap;
	int oom;
};

/* Makes room for n more bytes; returns 0 or -1 (oom set). */
static inline int tp_pb_reserve(struct tp_pb *b, size_t n)
{
	if (b->oom)
		return -1;
	if (n <= b->cap - b->len)
		return 0;
	size_t cap = b->cap;
	uint8_t *np = tp_grow(b->p, 1, b->len + n, &cap);
	if (!np) {
		b->oom = 1;
		return -1;
	}
	b->p = np;
	b->cap = cap;
	return 0;
}

static inline void tp_pb_free(struct tp_pb *b)
{
	tp_free(b->p);
	memset(b, 0, sizeof *b);
}

/* Encodes v as a base-128 varint into out (>= 10 bytes); returns the byte count. */
static inline size_t tp_pb_varint_to(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

static inline size_t tp_pb_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline void tp_pb_varint(struct tp_pb *b, uint64_t v)
{
	if (tp_pb_reserve(b, 10))
		return;
	b->len += tp_pb_varint_to(b->p + b->len, v);
}

static inline void tp_pb_tag(struct tp_pb *b, unsigned field, unsigned wire)
{
	tp_pb_varint(b, (uint64_t)field << 3 | wire);
}

static inline void tp_pb_uint(struct tp_pb *b, unsigned field, uint64_t v)
{
	tp_pb_tag(b, field, TP_PB_VARINT);
	tp_pb_varint(b, v);
}

/* int32/int64 fields are plain two's complement varints (not zigzag): negatives take 10. */
static inline void tp_pb_int(struct tp_pb *b, unsigned field, int64_t v)
{
	tp_pb_uint(b, field, (uint64_t)v);
}

static inline void tp_pb_fixed64(struct tp_pb *b, unsigned field, uint64_t v)
{
	tp_pb_tag(b, field, TP_PB_I64);
	if (tp_pb_reserve(b, 8))
		return;
	for (int i = 0; i < 8; i++)
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

static inline void tp_pb_double(struct tp_pb *b, unsigned field, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof v);
	tp_pb_fixed64(b, field, v);
}

static inline void tp_pb_bytes(struct tp_pb *b, unsigned field, const void *p, size_t n)
{
	tp_pb_tag(b, field, TP_PB_LEN);
	tp_pb_varint(b, n);
	if (tp_pb_reserve(b, n))
		return;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* A proto `string` field must be valid UTF-8 (trace_processor rejects or mangles others):
 * strings are repaired through common's text-safety layer (U+FFFD) on the rare slow path. */
static inline void tp_pb_str(struct tp_pb *b, unsigned field, const char *s)
{
	size_t n = strlen(s);
	if (tp_text_is_safe(s, n, TP_TEXT_UTF8)) {
		tp_pb_bytes(b, field, s, n);
		return;
	}
	struct tp_buf t;
	tp_buf_init(&t);
	tp_text_put(&t, s, n, TP_TEXT_UTF8, 0, 0);
	tp_pb_bytes(b, field, t.data ? t.data : "", t.oom ? 0 : t.len);
	tp_buf_free(&t);
}

/* Nested message: tp_pb_open writes the tag and reserves one length byte; tp_pb_close patches
 * the length, moving the body when it needs a longer varint. Returns the mark to close. */
static inline size_t tp_pb_open(struct tp_pb *b, unsigned field)
{
	tp_pb_tag(b, field, TP_PB_LEN);
	if (tp_pb_reserve(b, 1))
		return 0;
	b->p[b->len++] = 0;
	return b->len;
}

static inline void tp_pb_close(struct tp_pb *b, size_t mark)
{
	if (b->oom)
		return;
	size_t n = b->len - mark;
	if (n < 0x80) {
		b->p[mark - 1] = (uint8_t)n;
		return;
	}
	size_t extra = tp_pb_varint_size(n) - 1;
	if (tp_pb_reserve(b, extra))
		return;
	memmove(b->p + mark + extra, b->p + mark, n);
	tp_pb_varint_to(b->p + mark - 1, n);
	b->len += extra;
}

/* Decoding side (the checker and the tests): reads a varint from [*p, end). Returns 0, or -1
 * when the varint is truncated or longer than 10 bytes. */
static inline int tp_pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (*p >= end)
			return -1;
		uint8_t c = *(*p)++;
		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

#endif /* TP_PERFETTO_PB_H */
