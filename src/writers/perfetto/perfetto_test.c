/*
 * perfetto_test.c — unit tests for the protobuf wire encoder, the Perfetto writer (plain and
 * compressed, on the sink_fixture.h profile) and tp_perfetto_check (accepts our files, rejects
 * hand-made broken ones with a located message), plus out-of-memory runs of the writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "fixtures/c/sink_fixture.h"
#include "testutil.h"
#include "writers/perfetto/pb.h"
#include "writers/perfetto/perfetto.h"
#include "writers/perfetto/perfetto_int.h"

static char tmpdir[256];

/* The group fixture: the test directory, and the sink_fixture.h profile as every test's
 * *state (read-only: a test that changes a profile builds its own). */
static int setup(void **state)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/tp_perfetto_test.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	*state = fx_profile();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	tp_profile_free(*state);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *tmp(const char *name)
{
	return tp_path_join(tmpdir, name);
}

static void expect_bytes(const struct tp_pb *b, const uint8_t *want, size_t n)
{
	assert_int_equal(b->len, n);
	assert_memory_equal(b->p, want, n);
}

static void test_varint(void **state)
{
	(void)state;
	struct {
		uint64_t v;
		uint8_t bytes[10];
		size_t n;
	} cases[] = {
	    {0, {0x00}, 1},
	    {1, {0x01}, 1},
	    {127, {0x7f}, 1},
	    {128, {0x80, 0x01}, 2},
	    {300, {0xac, 0x02}, 2},
	    {1000, {0xe8, 0x07}, 2},
	    {16383, {0xff, 0x7f}, 2},
	    {16384, {0x80, 0x80, 0x01}, 3},
	    {UINT64_MAX, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tp_pb b = {0};
		tp_pb_varint(&b, cases[i].v);
		expect_bytes(&b, cases[i].bytes, cases[i].n);
		assert_int_equal(tp_pb_varint_size(cases[i].v), cases[i].n);
		const uint8_t *p = b.p;
		uint64_t back = 0;
		assert_int_equal(tp_pb_read_varint(&p, b.p + b.len, &back), 0);
		assert_true(back == cases[i].v);
		/* A varint cut short must not decode. */
		p = b.p;
		assert_int_equal(tp_pb_read_varint(&p, b.p + b.len - 1, &back),
		                 b.len > 1 ? -1 : -1);
		tp_pb_free(&b);
	}
	/* int64 fields are not zigzag: -1 is ten bytes. */
	struct tp_pb b = {0};
	tp_pb_int(&b, 4, -1);
	assert_int_equal(b.len, 11);
	assert_int_equal(b.p[0], 0x20);
	tp_pb_free(&b);
	/* Keys of fields >= 16 take two bytes: flow_ids (47, fixed64) is F9 02. */
	tp_pb_fixed64(&b, F_TE_FLOW_IDS, 42);
	const uint8_t flow[] = {0xf9, 0x02, 0x2a, 0, 0, 0, 0, 0, 0, 0};
	expect_bytes(&b, flow, sizeof flow);
	tp_pb_free(&b);
	/* 87.5 as a double is 00 00 00 00 00 E0 55 40 (perfetto.md §5.2). */
	tp_pb_double(&b, F_DA_DOUBLE, 87.5);
	const uint8_t dbl[] = {0x29, 0, 0, 0, 0, 0, 0xe0, 0x55, 0x40};
	expect_bytes(&b, dbl, sizeof dbl);
	tp_pb_free(&b);
}

static void test_nested_lengths(void **state)
{
	(void)state;
	/* perfetto.md §5.1: track_descriptor { uuid 3 name "TIU" parent_uuid 1 } = 14 bytes. */
	struct tp_pb b = {0};
	size_t pk = tp_pb_open(&b, F_TRACE_PACKET);
	size_t td = tp_pb_open(&b, F_PKT_TRACK_DESCRIPTOR);
	tp_pb_uint(&b, F_TD_UUID, 3);
	tp_pb_str(&b, F_TD_NAME, "TIU");
	tp_pb_uint(&b, F_TD_PARENT, 1);
	tp_pb_close(&b, td);
	tp_pb_close(&b, pk);
	const uint8_t want[] = {0x0a, 0x0c, 0xe2, 0x03, 0x09, 0x08, 0x03,
	                        0x12, 0x03, 0x54, 0x49, 0x55, 0x28, 0x01};
	expect_bytes(&b, want, sizeof want);
	tp_pb_free(&b);
	/* Bodies of 125..129 bytes: one- and two-byte lengths, body intact after the move. */
	for (size_t n = 125; n <= 129; n++) {
		char s[200];
		memset(s, 'a', sizeof s);
		s[n - 2] = 0; /* string field: key + 1-byte length + n-2 bytes = n bytes of body */
		tp_pb_uint(&b, 1, 7);
		size_t mk = tp_pb_open(&b, 2);
		tp_pb_str(&b, 3, s);
		tp_pb_close(&b, mk);
		size_t hdr = 2 + 1 + (n < 128 ? 1 : 2);
		assert_int_equal(b.len, hdr + n);
		const uint8_t *p = b.p + 3;
		uint64_t len;
		assert_int_equal(tp_pb_read_varint(&p, b.p + b.len, &len), 0);
		assert_int_equal(len, n);
		assert_int_equal(p[0], 3 << 3 | 2);
		assert_int_equal(p[1], n - 2);
		assert_int_equal(p[n - 1], 'a');
		b.len = 0;
	}
	tp_pb_free(&b);
}

/* Reads the head of the Trace.packet at *q (< e) that must hold compressed_packets: moves *q to
 * the deflated bytes and returns their length. */
static uint64_t compressed_head(const uint8_t **q, const uint8_t *e)
{
	uint64_t len = 0, key = 0, zlen = 0;
	assert_int_equal(*(*q)++, 0x0a);
	assert_int_equal(tp_pb_read_varint(q, e, &len), 0);
	assert_int_equal(tp_pb_read_varint(q, e, &key), 0);
	assert_int_equal(key, F_PKT_COMPRESSED << 3 | TP_PB_LEN);
	assert_int_equal(tp_pb_read_varint(q, e, &zlen), 0);
	return zlen;
}

static void check_fixture_report(const struct tp_perfetto_check_report *r)
{
	/* 4 TIU + 3 GDMA on core 0, 1 TIU on core 1, 2 layers, 4 captured slices. */
	assert_int_equal(r->slices, 14);
	/* Tracks: 2 processes; core 0: box, TIU, GDMA x2 lanes, Layer, DDR BW, TIU util; core 1:
	 * box, TIU, TIU util; the thread; the "queue" counter. */
	assert_int_equal(r->processes, 2);
	assert_int_equal(r->threads, 1);
	assert_int_equal(r->counter_tracks, 4);
	assert_int_equal(r->tracks, 14);
	assert_int_equal(r->flows, 2); /* one flow id (1), reused */
	assert_int_equal(r->max_depth, 3);
	assert_int_equal(r->first_ts, 0);
	assert_true(r->counters >= 3);
}

/* Inflates the compressed trace b[0 .. n) chunk after chunk into out (cap bytes); returns the
 * bytes inflated. Every chunk is under 512 KiB (256 KiB of packets, compressed). */
static size_t inflate_chunks(const uint8_t *b, size_t n, uint8_t *out, size_t cap)
{
	const uint8_t *q = b, *e = b + n;
	size_t at = 0;
	while (q < e) {
		uint64_t zlen = compressed_head(&q, e);
		assert_true(zlen <= (uint64_t)(e - q) && zlen < 512 * 1024);
		uLongf k = (uLongf)(cap - at);
		assert_int_equal(uncompress(out + at, &k, q, (uLong)zlen), Z_OK);
		at += k;
		q += zlen;
	}
	return at;
}

static void test_fixture_plain_and_compressed(void **state)
{
	const struct tp_profile *p = *state;
	struct tp_diag d = {0};
	char *plain = tmp("plain.pftrace"), *comp = tmp("comp.pftrace");
	struct tp_perfetto_opts o = {1, 0, 0, 0};
	assert_int_equal(tp_perfetto_write(p, NULL, plain, &o, &d), TP_OK);
	assert_int_equal(tp_perfetto_write(p, NULL, comp, NULL, &d), TP_OK);
	struct tp_perfetto_check_report r1, r2;
	assert_int_equal(tp_perfetto_check(plain, &r1, &d), TP_OK);
	assert_int_equal(tp_perfetto_check(comp, &r2, &d), TP_OK);
	check_fixture_report(&r1);
	check_fixture_report(&r2);
	assert_int_equal(r1.chunks, 0);
	/* The descriptors' chunk, then each part's own (one per track here). */
	assert_true(r2.chunks > 1);
	assert_int_equal(r1.packets + r2.chunks, r2.packets); /* + the chunks' outer packets */
	assert_int_equal(r1.last_ts, 1100);

	/* The compressed file is the plain file deflated: inflating its chunks in order gives
	 * back the plain bytes exactly. */
	size_t np, nc;
	uint8_t *bp = tp_test_must_slurp(plain, &np), *bc = tp_test_must_slurp(comp, &nc);
	uint8_t *out = malloc(np + 64);
	assert_int_equal(inflate_chunks(bc, nc, out, np + 64), np);
	assert_memory_equal(out, bp, np);
	/* Same input, same bytes. */
	assert_int_equal(tp_perfetto_write(p, NULL, plain, &o, &d), TP_OK);
	size_t np2;
	uint8_t *bp2 = tp_test_must_slurp(plain, &np2);
	assert_int_equal(np2, np);
	assert_memory_equal(bp2, bp, np);
	free(bp2);
	free(out);
	free(bp);
	free(bc);
	tp_free(plain);
	tp_free(comp);
}

/* Reads the fields of one message into keys[] (field << 3 | wire type) and their value
 * spans; returns how many, or -1 on a parse error. */
static int pb_fields(const uint8_t *p, const uint8_t *e, uint64_t *keys, const uint8_t **vb,
                     const uint8_t **ve, int max)
{
	int n = 0;
	while (p < e && n < max) {
		uint64_t key = 0, v = 0;
		if (tp_pb_read_varint(&p, e, &key))
			return -1;
		const uint8_t *b = p;
		switch (key & 7) {
		case TP_PB_VARINT:
			if (tp_pb_read_varint(&p, e, &v))
				return -1;
			break;
		case TP_PB_I64:
			p += 8;
			break;
		case TP_PB_LEN:
			if (tp_pb_read_varint(&p, e, &v) || v > (uint64_t)(e - p))
				return -1;
			b = p;
			p += v;
			break;
		default:
			return -1;
		}
		keys[n] = key;
		vb[n] = b;
		ve[n++] = p;
	}
	return p == e ? n : -1;
}

/* The field order of event packets, chosen for the compressor (put_packet_parts, pw_slice):
 * the sequence id first, the timestamp last, and in a SLICE_BEGIN the flow ids right after
 * the type, before category, name and annotations. Protobuf readers do not care; a change that
 * moves them costs compressed bytes silently, so it is pinned here. */
static void test_event_field_order(void **state)
{
	const struct tp_profile *p = *state;
	struct tp_diag d = {0};
	char *plain = tmp("order.pftrace");
	struct tp_perfetto_opts o = {1, 0, 0, 0};
	assert_int_equal(tp_perfetto_write(p, NULL, plain, &o, &d), TP_OK);
	size_t np;
	uint8_t *bp = tp_test_must_slurp(plain, &np);
	uint64_t k[64], ek[64];
	const uint8_t *vb[64], *ve[64], *evb[64], *eve[64];
	int n;
	int begins = 0, ends = 0, flowed = 0;
	const uint8_t *q = bp;
	while (q < bp + np) { /* each Trace.packet */
		uint64_t key = 0, len = 0;
		assert_int_equal(tp_pb_read_varint(&q, bp + np, &key), 0);
		assert_int_equal(key, F_TRACE_PACKET << 3 | TP_PB_LEN);
		assert_int_equal(tp_pb_read_varint(&q, bp + np, &len), 0);
		n = pb_fields(q, q + len, k, vb, ve, 64);
		assert_true(n > 0);
		q += len;
		int te = -1;
		for (int i = 0; i < n; i++)
			if (k[i] == (F_PKT_TRACK_EVENT << 3 | TP_PB_LEN))
				te = i;
		if (te < 0 || k[0] != (F_PKT_SEQ_ID << 3 | TP_PB_VARINT) || n < 3)
			continue; /* descriptors and each sequence's first packet */
		assert_int_equal(k[n - 1], F_PKT_TIMESTAMP << 3 | TP_PB_VARINT);
		assert_int_equal(te, 1);
		int m = pb_fields(vb[te], ve[te], ek, evb, eve, 64);
		assert_true(m > 0);
		assert_int_equal(ek[0], F_TE_TYPE << 3 | TP_PB_VARINT);
		if (*evb[0] == TE_SLICE_END) {
			ends++;
			assert_int_equal(m, 1);
			continue;
		}
		if (*evb[0] != TE_SLICE_BEGIN)
			continue;
		begins++;
		int j = 1;
		while (j < m &&
		       ((ek[j] >> 3) == F_TE_FLOW_IDS || (ek[j] >> 3) == F_TE_TERM_FLOW_IDS))
			j++;
		flowed += j > 1;
		assert_true(j < m);
		assert_int_equal(ek[j], F_TE_CATEGORY_IIDS << 3 | TP_PB_VARINT);
		for (int i = j; i < m; i++) /* no flow id after the names */
			assert_true((ek[i] >> 3) != F_TE_FLOW_IDS &&
			            (ek[i] >> 3) != F_TE_TERM_FLOW_IDS);
	}
	assert_int_equal(begins, 14);
	assert_int_equal(ends, 14);
	assert_true(flowed >= 2); /* the fixture's flow: its start and its end */
	free(bp);
	tp_free(plain);
}

/* The profile of the one-track tests: device "d" with one engine track of `kind` at 1 GHz, so
 * that cycles and nanoseconds agree; *tr gets its index. */
static struct tp_profile *one_track_profile(enum tp_track_kind kind, const char *name, int *tr)
{
	return tp_test_one_track("d", kind, name, 1000, tr);
}

/* A profile big enough for many chunks: inline and threaded compression give the same
 * bytes, the checker accepts them, and inflating every chunk gives the plain file. */
static void test_many_chunks(void **state)
{
	(void)state;
	int tr;
	struct tp_profile *p = one_track_profile(TP_TRACK_GDMA, "GDMA", &tr);
	for (int i = 0; i < 60000; i++) {
		struct tp_slice *s = fx_cmd(p, tr, i % 3 ? "tensorLd" : "tensorSt", "DMA_tensor",
		                            i * 100, i * 100 + 40 + i % 50, (uint32_t)i + 1);
		tp_slice_set_bytes(p, &p->tracks[tr], s, 256u << (i % 5));
		tp_slice_set_dir(p, &p->tracks[tr], s, TP_DIR_DDR_TO_LMEM);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	char *a = tmp("inline.pftrace"), *b = tmp("thread.pftrace"), *c = tmp("plain.pftrace");
	struct tp_diag d = {0};
	struct tp_perfetto_opts one = {0, 0, 0, 1}, two = {0, 0, 0, 2}, plain = {1, 0, 0, 1};
	assert_int_equal(tp_perfetto_write(p, NULL, a, &one, &d), TP_OK);
	assert_int_equal(tp_perfetto_write(p, NULL, b, &two, &d), TP_OK);
	assert_int_equal(tp_perfetto_write(p, NULL, c, &plain, &d), TP_OK);
	size_t na, nb, nc;
	uint8_t *ba = tp_test_must_slurp(a, &na), *bb = tp_test_must_slurp(b, &nb),
	        *bc = tp_test_must_slurp(c, &nc);
	assert_int_equal(na, nb);
	assert_memory_equal(ba, bb, na);
	/* More compression workers than chunks in flight and uneven counts: same bytes. */
	for (int th = 3; th <= 9; th += 3) {
		struct tp_perfetto_opts many = {0, 0, 0, th};
		size_t nm;
		assert_int_equal(tp_perfetto_write(p, NULL, b, &many, &d), TP_OK);
		uint8_t *bm = tp_test_must_slurp(b, &nm);
		assert_int_equal(na, nm);
		assert_memory_equal(ba, bm, na);
		free(bm);
	}
	struct tp_perfetto_check_report r;
	assert_int_equal(tp_perfetto_check(b, &r, &d), TP_OK);
	assert_int_equal(r.slices, 60000);
	assert_true(r.chunks > 5);
	/* Inflate chunk after chunk: the concatenation is the plain file. */
	uint8_t *out = malloc(nc + 1024);
	assert_int_equal(inflate_chunks(ba, na, out, nc + 1024), nc);
	assert_memory_equal(out, bc, nc);
	free(out);
	free(ba);
	free(bb);
	free(bc);
	tp_free(a);
	tp_free(b);
	tp_free(c);
	tp_profile_free(p);
}

/* Finishes p, writes it to `name` in the temp dir with options o and checks the file into *r;
 * returns the path (tp_free). Fails the test when a step does not return TP_OK. */
static char *finish_write_check(struct tp_profile *p, const char *name, struct tp_perfetto_opts o,
                                struct tp_perfetto_check_report *r)
{
	assert_int_equal(tp_profile_finish(p), TP_OK);
	char *path = tmp(name);
	struct tp_diag d = {0};
	assert_int_equal(tp_perfetto_write(p, NULL, path, &o, &d), TP_OK);
	assert_int_equal(tp_perfetto_check(path, r, &d), TP_OK);
	return path;
}

/* A TIU track of n commands named op0, op0, op1, op1, ... (each name twice: interned), every
 * 10 ns, lasting 5 ns (overlap: 5, 15 or 25 ns, so some overlap the next ones: lanes). */
static struct tp_profile *names_profile(int n, int overlap)
{
	int tr;
	struct tp_profile *p = one_track_profile(TP_TRACK_TIU, "TIU", &tr);
	char name[32];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "op%d", i / 2);
		fx_cmd(p, tr, name, i % 7 ? "sCONV" : "sAR", i * 10,
		       i * 10 + 5 + (overlap ? (i % 3) * 10 : 0), (uint32_t)i + 1);
	}
	return p;
}

/* Many distinct interned strings (each name twice, 75 000 of them): every part interns its
 * own; the trace checks (every iid used is defined on its sequence) and has every slice. */
static void test_intern_map_reset(void **state)
{
	(void)state;
	const int n = 150000;
	struct tp_profile *p = names_profile(n, 0);
	struct tp_perfetto_check_report r;
	/* The check's report is all this test reads: the file's path is not needed. */
	tp_free(finish_write_check(p, "reset.pftrace", (struct tp_perfetto_opts){0, 0, 0, 2}, &r));
	assert_int_equal(r.slices, (uint64_t)n);
	assert_true(r.interned > (uint64_t)n / 2); /* every name defined at least once */
	tp_profile_free(p);
}

/* Long, unique strings are written inline on first use: the event buffer must grow for
 * them (ASan builds catch an overflow) and the result must still check. */
static void test_long_strings(void **state)
{
	(void)state;
	int th;
	struct tp_profile *p = tp_test_thread("app", 77, "t", &th);
	p->tracks[th].tid = 78;
	static char big[20000];
	for (int i = 0; i < 3; i++) {
		struct tp_slice *s = tp_track_push(p, th);
		s->start_ns = i * 10;
		tp_slice_set_end(p, &p->tracks[th], s, i * 10 + 5);
		tp_slice_set_name(p, &p->tracks[th], s, tp_profile_str(p, "op"));
		tp_args_begin(p);
		for (int k = 0; k < 20; k++) {
			size_t n = 1000 * (size_t)(k + 1) - 1;
			memset(big, 'a' + k, n);
			big[n] = 0;
			big[0] = (char)('0' + i); /* unique per slice */
			char key[16];
			snprintf(key, sizeof key, "k%d", k);
			tp_args_add_str(p, key, big);
		}
		s->args = tp_args_end(p);
	}
	struct tp_perfetto_check_report r;
	char *path =
	    finish_write_check(p, "long.pftrace", (struct tp_perfetto_opts){1, 0, 0, 0}, &r);
	assert_int_equal(r.slices, 3);
	assert_int_equal(r.annotations, 60);
	size_t n;
	uint8_t *b = tp_test_must_slurp(path, &n);
	assert_true(n > 3 * 210000); /* 3 x sum of 1000k-1 over k=1..20, all inline */
	free(b);
	tp_free(path);
	tp_profile_free(p);
}

/* --- broken files for the checker ------------------------------------------------------ */

static void put_packet(FILE *f, struct tp_pb *b)
{
	uint8_t hdr[11];
	hdr[0] = 0x0a;
	size_t h = 1 + tp_pb_varint_to(hdr + 1, b->len);
	fwrite(hdr, 1, h, f);
	fwrite(b->p, 1, b->len, f);
	b->len = 0;
}

static void descriptor(struct tp_pb *b, uint64_t uuid, uint64_t parent, int pid)
{
	size_t td = tp_pb_open(b, F_PKT_TRACK_DESCRIPTOR);
	tp_pb_uint(b, F_TD_UUID, uuid);
	if (pid >= 0) {
		size_t pd = tp_pb_open(b, F_TD_PROCESS);
		tp_pb_int(b, F_PD_PID, pid);
		tp_pb_close(b, pd);
	} else {
		tp_pb_str(b, F_TD_NAME, "t");
		tp_pb_uint(b, F_TD_PARENT, parent);
	}
	tp_pb_close(b, td);
}

/* An event with an inline (non-interned) name; flags, flow encodings selectable. */
static void event(struct tp_pb *b, uint64_t ts, uint32_t seq, int flags, int type, uint64_t track,
                  int varint_flow)
{
	tp_pb_uint(b, F_PKT_TIMESTAMP, ts);
	tp_pb_uint(b, F_PKT_SEQ_ID, seq);
	if (flags >= 0)
		tp_pb_uint(b, F_PKT_SEQ_FLAGS, (uint64_t)flags);
	size_t te = tp_pb_open(b, F_PKT_TRACK_EVENT);
	tp_pb_uint(b, F_TE_TYPE, (uint64_t)type);
	tp_pb_uint(b, F_TE_TRACK_UUID, track);
	if (type == TE_SLICE_BEGIN)
		tp_pb_str(b, F_TE_NAME, "x");
	if (varint_flow == 1)
		tp_pb_uint(b, F_TE_FLOW_IDS, 7);
	if (varint_flow == 2) { /* both forms of one list: trace_processor drops the varint one */
		tp_pb_fixed64(b, F_TE_FLOW_IDS, 7);
		tp_pb_uint(b, F_TE_FLOW_IDS_OLD, 8);
	}
	tp_pb_close(b, te);
}

enum {
	BAD_NONE,
	BAD_UNDECLARED,
	BAD_NOT_CLEARED,
	BAD_PID0,
	BAD_END_ONLY,
	BAD_VARINT_FLOW,
	BAD_BOTH_FLOWS,
	BAD_UNCLOSED,
	BAD_PARENT,
	BAD_IID,
	BAD_TIME_BACK
};

static int write_case(const char *path, int which)
{
	FILE *f = fopen(path, "wb");
	struct tp_pb b = {0};
	descriptor(&b, 1, 0, which == BAD_PID0 ? 0 : 100);
	put_packet(f, &b);
	descriptor(&b, 2, which == BAD_PARENT ? 9 : 1, -1);
	put_packet(f, &b);
	uint64_t track = which == BAD_UNDECLARED ? 5 : 2;
	int first_flags = which == BAD_NOT_CLEARED ? 2 : 3;
	if (which == BAD_END_ONLY) {
		event(&b, 10, 1, first_flags, TE_SLICE_END, track, 0);
		put_packet(f, &b);
	} else if (which == BAD_IID) {
		tp_pb_uint(&b, F_PKT_TIMESTAMP, 10);
		tp_pb_uint(&b, F_PKT_SEQ_ID, 1);
		tp_pb_uint(&b, F_PKT_SEQ_FLAGS, 3);
		size_t te = tp_pb_open(&b, F_PKT_TRACK_EVENT);
		tp_pb_uint(&b, F_TE_TYPE, TE_INSTANT);
		tp_pb_uint(&b, F_TE_TRACK_UUID, 2);
		tp_pb_uint(&b, F_TE_NAME_IID, 4); /* never interned */
		tp_pb_close(&b, te);
		put_packet(f, &b);
	} else {
		event(&b, 10, 1, first_flags, TE_SLICE_BEGIN, track,
		      which == BAD_VARINT_FLOW  ? 1
		      : which == BAD_BOTH_FLOWS ? 2
		                                : 0);
		put_packet(f, &b);
		if (which != BAD_UNCLOSED) {
			event(&b, which == BAD_TIME_BACK ? 5 : 20, 1, 2, TE_SLICE_END, track, 0);
			put_packet(f, &b);
		}
	}
	tp_pb_free(&b);
	fclose(f);
	return 0;
}

static void test_checker_rejects(void **state)
{
	char *path = tmp("case.pftrace");
	struct tp_diag d = {0};
	struct tp_perfetto_check_report r;
	write_case(path, BAD_NONE);
	assert_int_equal(tp_perfetto_check(path, &r, &d), TP_OK);
	assert_int_equal(r.slices, 1);
	struct {
		int which;
		const char *says;
	} cases[] = {
	    {BAD_UNDECLARED, "which no earlier descriptor declares"},
	    {BAD_NOT_CLEARED, "does not clear incremental state"},
	    {BAD_PID0, "pid 0"},
	    {BAD_END_ONLY, "SLICE_END with no open slice"},
	    {BAD_VARINT_FLOW, "flow id (fixed64"},
	    {BAD_BOTH_FLOWS, "both the fixed64 and the varint field"},
	    {BAD_UNCLOSED, "never end"},
	    {BAD_PARENT, "parent_uuid 9 is not declared"},
	    {BAD_IID, "event name iid 4 used before it is interned"},
	    {BAD_TIME_BACK, "before the previous one"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		write_case(path, cases[i].which);
		memset(&d, 0, sizeof d);
		assert_int_equal(tp_perfetto_check(path, &r, &d), TP_EFORMAT);
		if (!strstr(d.msg, cases[i].says) || !strstr(d.msg, "case.pftrace@0x"))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, d.msg, cases[i].says);
	}
	/* A truncated real trace fails with the offset of the cut record. */
	struct tp_perfetto_opts o = {1, 0, 0, 0};
	assert_int_equal(tp_perfetto_write(*state, NULL, path, &o, &d), TP_OK);
	size_t n;
	uint8_t *bytes = tp_test_must_slurp(path, &n);
	FILE *f = fopen(path, "wb");
	fwrite(bytes, 1, n - 3, f);
	fclose(f);
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_perfetto_check(path, &r, &d), TP_ETRUNC);
	assert_non_null(strstr(d.msg, "truncated"));
	free(bytes);
	tp_free(path);
}

/* Text safety and the checker's limits: a string that bypassed the model's UTF-8 repair (put
 * in the string table directly) still goes out as valid UTF-8; an empty file is an error; a
 * chunk that inflates past TP_PERFETTO_CHECK_MAX_CHUNK is refused, located. */
static void test_text_and_limits(void **state)
{
	(void)state;
	struct tp_profile *p = fx_profile();
	uint32_t bad;
	assert_int_equal(tp_strtab_intern(&p->strs, "bad\xff\xed\xa0\x80name", 11, &bad), TP_OK);
	for (size_t t = 0; t < p->num_tracks; t++)
		if (p->tracks[t].count)
			tp_slice_set_name(p, &p->tracks[t], &p->tracks[t].slices[0], bad);
	char *path = tmp("text.pftrace");
	struct tp_diag d = {0};
	struct tp_perfetto_opts o = {1, 0, 0, 0};
	assert_int_equal(tp_perfetto_write(p, NULL, path, &o, &d), TP_OK);
	size_t n;
	uint8_t *bytes = tp_test_must_slurp(path, &n);
	const char want[] = "bad\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDname";
	int found = 0;
	for (size_t i = 0; i + sizeof want - 1 <= n && !found; i++)
		found = memcmp(bytes + i, want, sizeof want - 1) == 0;
	assert_true(found);
	free(bytes);
	struct tp_perfetto_check_report r;
	assert_int_equal(tp_perfetto_check(path, &r, &d), TP_OK);

	FILE *f = fopen(path, "wb");
	fclose(f);
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_perfetto_check(path, &r, &d), TP_ETRUNC);
	assert_non_null(strstr(d.msg, "text.pftrace@0x0: empty file"));

	/* 64 MiB of zeros deflate to ~64 KiB: Trace.packet { compressed_packets = that }. */
	size_t raw = (size_t)64 << 20;
	uint8_t *zeros = calloc(1, raw);
	uLongf zn = compressBound((uLong)raw);
	uint8_t *z = malloc(zn + 32);
	assert_int_equal(compress2(z + 16, &zn, zeros, (uLong)raw, 9), Z_OK);
	uint8_t hdr[16];
	uint8_t lenb[10];
	size_t nl = tp_pb_varint_to(lenb, zn);
	size_t h = 0, inner = 2 + nl + zn; /* field 50's key is a 2-byte varint */
	hdr[h++] = 0x0a;
	h += tp_pb_varint_to(hdr + h, inner);
	hdr[h++] = (uint8_t)(F_PKT_COMPRESSED << 3 | TP_PB_LEN) | 0x80;
	hdr[h++] = (uint8_t)((F_PKT_COMPRESSED << 3 | TP_PB_LEN) >> 7);
	memcpy(hdr + h, lenb, nl);
	h += nl;
	f = fopen(path, "wb");
	fwrite(hdr, 1, h, f);
	fwrite(z + 16, 1, zn, f);
	fclose(f);
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_perfetto_check(path, &r, &d), TP_EFORMAT);
	assert_non_null(strstr(d.msg, "text.pftrace@0x0"));
	assert_non_null(strstr(d.msg, "refusing a decompression bomb"));
	free(zeros);
	free(z);
	tp_free(path);
	tp_profile_free(p);
}

/* The writer as tp_test_oom_sweep_file calls it. */
static int write_trace(const struct tp_profile *p, const char *path, struct tp_diag *d)
{
	return tp_perfetto_write(p, NULL, path, NULL, d);
}

static void test_write_oom(void **state)
{
	const struct tp_profile *p = *state;
	char *path = tmp("oom.pftrace");
	/* Every allocation failing in turn: TP_ENOMEM and no half-written output, until the
	 * run that succeeds writes a valid trace. */
	assert_true(tp_test_oom_sweep_file(write_trace, p, path, 400) > 0);
	assert_int_equal(tp_perfetto_check(path, NULL, NULL), TP_OK);
	tp_free(path);
}

/* What the visitor decodes from the fixture's compressed trace, checked against values
 * stated in sink_fixture.h (not recomputed from the model): the second GDMA tensorLd
 * (ts 50 ns, 350 ns long, on a second lane) with its DDR bandwidth 23.339 GB/s as a double;
 * the two flows of id 1 as the varint fields (one start and one end each); the captured op
 * "MatMul\n<\x01>" with its string arg "C:\tmp\x</script>" and int arg delta -3. */
struct visit_seen {
	int begins, ends, ld50, flows_out, flows_in, matmul, counters;
};

static int arg_is(const struct tp_perfetto_arg *a, const char *key)
{
	return a->key_len == strlen(key) && !memcmp(a->key, key, a->key_len);
}

static int visit_fixture(void *ctx, const struct tp_perfetto_event *e)
{
	struct visit_seen *v = ctx;
	v->begins += e->type == TE_SLICE_BEGIN;
	v->ends += e->type == TE_SLICE_END;
	v->counters += e->type == TE_COUNTER;
	if (e->type != TE_SLICE_BEGIN)
		return TP_OK;
	for (size_t i = 0; i < e->num_flows; i++)
		v->flows_out += e->flows[i] == 1;
	for (size_t i = 0; i < e->num_term_flows; i++)
		v->flows_in += e->term_flows[i] == 1;
	if (e->name_len == 8 && !memcmp(e->name, "tensorLd", 8) && e->ts == 50) {
		for (size_t i = 0; i < e->num_args; i++)
			if (arg_is(&e->args[i], "DDR Bandwidth(GB/s)")) {
				double d;
				memcpy(&d, &e->args[i].v, sizeof d);
				assert_int_equal(e->args[i].type, 'd');
				assert_true(d == 23.339);
				v->ld50++;
			}
	}
	if (e->name_len == 10 && !memcmp(e->name, "MatMul\n<\x01>", 10)) {
		for (size_t i = 0; i < e->num_args; i++) {
			const struct tp_perfetto_arg *a = &e->args[i];
			if (arg_is(a, "attr.path")) {
				assert_int_equal(a->type, 's');
				assert_int_equal(a->n, strlen("C:\\tmp\\x</script>"));
				assert_memory_equal(a->s, "C:\\tmp\\x</script>", a->n);
				v->matmul++;
			}
			if (arg_is(a, "delta")) {
				assert_int_equal(a->type, 'i');
				assert_int_equal((int64_t)a->v, -3);
				v->matmul++;
			}
		}
	}
	return TP_OK;
}

static void test_visitor_decodes_fixture(void **state)
{
	const struct tp_profile *p = *state;
	char *path = tmp("visit.pftrace");
	struct tp_diag d = {0};
	assert_int_equal(tp_perfetto_write(p, NULL, path, NULL, &d), TP_OK);
	struct visit_seen v = {0};
	struct tp_perfetto_check_report r;
	assert_int_equal(tp_perfetto_check_visit(path, &r, visit_fixture, &v, &d), TP_OK);
	assert_int_equal(v.begins, 14);
	assert_int_equal(v.ends, 14);
	assert_int_equal(v.counters, (int)r.counters);
	assert_int_equal(v.ld50, 1);
	assert_int_equal(v.flows_out, 2);
	assert_int_equal(v.flows_in, 2);
	assert_int_equal(v.matmul, 2);
	tp_free(path);
}

/* The slices are encoded in parts on the writer's threads (parts.c), each part
 * self-contained: the file is the same bytes for any thread count, and for every part size it
 * checks, with every slice. p (of `slices` slices) is written with parts of each size in
 * `sizes` (n of them) on 1 .. `threads` threads, plain and compressed. */
static void same_bytes_any_parts(const struct tp_profile *p, const size_t *sizes, size_t n,
                                 int threads, uint64_t slices)
{
	char *ref = tmp("parts-ref.pftrace"), *got = tmp("parts.pftrace");
	for (int plain = 1; plain >= 0; plain--)
		for (size_t k = 0; k < n; k++) {
			struct tp_diag d = {0};
			struct tp_perfetto_opts o = {plain, 0, 0, 1};
			assert_int_equal(tp_perfetto_write_parts(p, NULL, ref, &o, sizes[k], &d),
			                 TP_OK);
			struct tp_perfetto_check_report r;
			assert_int_equal(tp_perfetto_check(ref, &r, &d), TP_OK);
			assert_int_equal(r.slices, slices);
			size_t nr;
			uint8_t *br = tp_test_must_slurp(ref, &nr);
			for (int th = 2; th <= threads; th++) {
				o.threads = th;
				assert_int_equal(
				    tp_perfetto_write_parts(p, NULL, got, &o, sizes[k], &d), TP_OK);
				size_t ng;
				uint8_t *bg = tp_test_must_slurp(got, &ng);
				if (ng != nr || memcmp(bg, br, nr) != 0)
					fail_msg(
					    "parts of %zu on %d threads (plain %d): other bytes",
					    sizes[k], th, plain);
				free(bg);
			}
			free(br);
		}
	tp_free(ref);
	tp_free(got);
}

static void test_same_bytes_any_parts(void **state)
{
	/* The fixture: lanes, nesting, layers, flows, strings written inline. */
	static const size_t small[] = {1, 2, 3, 5, 0};
	same_bytes_any_parts(*state, small, 5, 3, 14);
	/* Parts of many chunks, lanes. */
	struct tp_profile *p = names_profile(150000, 1);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	static const size_t big[] = {7, 1000, 100000};
	same_bytes_any_parts(p, big, 3, 3, 150000);
	tp_profile_free(p);
}

/* Per sequence of the plain trace b[0 .. n): how many packets clear its incremental state and
 * how many define the event name `name` (InternedData.event_names), for sequence ids < 64. */
struct seq_count {
	int clears[64], defs[64];
};

static void count_clears(const uint8_t *b, size_t n, const char *name, struct seq_count *c)
{
	uint64_t keys[64], ik[64], ek[8];
	const uint8_t *vb[64], *ve[64], *ib[64], *ie[64], *eb[8], *ee[8];
	memset(c, 0, sizeof *c);
	const uint8_t *p = b, *e = b + n;
	while (p < e) { /* one top-level packet at a time */
		uint64_t key = 0, len = 0;
		assert_int_equal(tp_pb_read_varint(&p, e, &key), 0);
		assert_int_equal(key, (uint64_t)(F_TRACE_PACKET << 3 | TP_PB_LEN));
		assert_int_equal(tp_pb_read_varint(&p, e, &len), 0);
		int nf = pb_fields(p, p + len, keys, vb, ve, 64);
		assert_true(nf >= 0);
		uint64_t seq = 0, flags = 0;
		int defs = 0;
		for (int i = 0; i < nf; i++) {
			const uint8_t *q = vb[i];
			if (keys[i] == (F_PKT_SEQ_ID << 3 | TP_PB_VARINT))
				assert_int_equal(tp_pb_read_varint(&q, ve[i], &seq), 0);
			if (keys[i] == (F_PKT_SEQ_FLAGS << 3 | TP_PB_VARINT))
				assert_int_equal(tp_pb_read_varint(&q, ve[i], &flags), 0);
			if (keys[i] != (F_PKT_INTERNED << 3 | TP_PB_LEN))
				continue;
			int ni = pb_fields(vb[i], ve[i], ik, ib, ie, 64);
			assert_true(ni >= 0);
			for (int j = 0; j < ni; j++) {
				if (ik[j] != (F_ID_EVENT_NAMES << 3 | TP_PB_LEN))
					continue;
				int ne = pb_fields(ib[j], ie[j], ek, eb, ee, 8);
				for (int m = 0; m < ne; m++)
					defs += ek[m] == (F_IE_NAME << 3 | TP_PB_LEN) &&
					        (size_t)(ee[m] - eb[m]) == strlen(name) &&
					        !memcmp(eb[m], name, strlen(name));
			}
		}
		if (seq < 64) {
			c->clears[seq] += (flags & SEQ_CLEARED) != 0;
			c->defs[seq] += defs;
		}
		p += len;
	}
}

struct visit_op {
	int begins, bad;
};

/* Every slice of test_part_boundary_resets: "op" at 10 ns apart from 0, its argument k = "v". */
static int visit_op(void *ctx, const struct tp_perfetto_event *e)
{
	struct visit_op *v = ctx;
	if (e->type != TE_SLICE_BEGIN)
		return TP_OK;
	int ok = e->ts == (int64_t)v->begins * 10 && e->name_len == 2 && !memcmp(e->name, "op", 2);
	int has_k = 0;
	for (size_t i = 0; i < e->num_args; i++)
		if (arg_is(&e->args[i], "k"))
			has_k =
			    e->args[i].type == 's' && e->args[i].n == 1 && e->args[i].s[0] == 'v';
	v->bad += !ok || !has_k;
	v->begins++;
	return TP_OK;
}

/* A part starts the sequences of the lanes it uses over: on a one-lane track of 10 slices in
 * parts of 3, its sequence is cleared by its first packet and again at each of the 4 parts,
 * and the one event name is defined again in each part (a part that did not re-intern would
 * use an iid the clear dropped: the checker fails). The incremental clock goes on from the
 * lane's last time (every slice decodes at its own time), and the string value is written
 * inline or interned in each part (its first and second use there) and always decodes. */
static void test_part_boundary_resets(void **state)
{
	(void)state;
	int tr;
	struct tp_profile *p = one_track_profile(TP_TRACK_TIU, "TIU", &tr);
	for (int i = 0; i < 10; i++) {
		struct tp_slice *s =
		    fx_cmd(p, tr, "op", "sCONV", i * 10, i * 10 + 5, (uint32_t)i + 1);
		tp_args_begin(p);
		tp_args_add_str(p, "k", "v");
		s->args = tp_args_end(p);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	char *path = tmp("boundary.pftrace");
	struct tp_diag d = {0};
	struct tp_perfetto_opts o = {1, 0, 0, 1};
	assert_int_equal(tp_perfetto_write_parts(p, NULL, path, &o, 3, &d), TP_OK);
	struct tp_perfetto_check_report r;
	struct visit_op v = {0, 0};
	assert_int_equal(tp_perfetto_check_visit(path, &r, visit_op, &v, &d), TP_OK);
	assert_int_equal(v.begins, 10);
	assert_int_equal(v.bad, 0);
	size_t n;
	uint8_t *b = tp_test_must_slurp(path, &n);
	struct seq_count c;
	count_clears(b, n, "op", &c);
	int seqs = 0;
	for (int s = 0; s < 64; s++)
		if (c.defs[s]) {
			seqs++;
			assert_int_equal(c.clears[s], 1 + 4);
			assert_int_equal(c.defs[s], 4);
		}
	assert_int_equal(seqs, 1);
	/* In one part: one clear after the first, one definition. */
	assert_int_equal(tp_perfetto_write_parts(p, NULL, path, &o, 100, &d), TP_OK);
	free(b);
	b = tp_test_must_slurp(path, &n);
	count_clears(b, n, "op", &c);
	for (int s = 0; s < 64; s++)
		if (c.defs[s]) {
			assert_int_equal(c.clears[s], 2);
			assert_int_equal(c.defs[s], 1);
		}
	free(b);
	tp_free(path);
	tp_profile_free(p);
}

#define TP_TEST_GROUP_SETUP setup
#define TP_TEST_GROUP_TEARDOWN teardown
#include "tp_test_main.h"
