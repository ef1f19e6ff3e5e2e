/*
 * model_layers_test.c — unit tests for the model's compact layer table (layers.c): exact round
 * trips through the 40-byte records across chunks, layers kept whole in the wide table and
 * back, normalised values, the two-entry memo, tp_profile_layer_touch against a copy,
 * tp_profile_layers_touch_jobs against one pass, and out-of-memory handling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "model/model.h"
#include "model/model_int.h"
#include "testutil.h"

/* A layer with every field set to a value the compact record holds. */
static struct tp_layer plain_layer(uint32_t i)
{
	struct tp_layer l;
	memset(&l, 0, sizeof l);
	l.id = (int32_t)i * 3 - 7;
	l.type = 1 + i % 5;
	l.name = 100 + i;
	l.device = (int32_t)(i % 32);
	l.core = (int32_t)(i % 64) - 1;
	l.subnet = (int32_t)(i % 65536) - 1;
	l.group = 65534 - (int32_t)(i % 65536);
	l.is_local = (uint8_t)(i & 1);
	l.is_data_move = (uint8_t)(i >> 1 & 1);
	if (i % 3) {
		l.tiu_first = 1 + i;
		l.tiu_last = l.tiu_first + (i % 7 == 0 ? 65535 : i % 11);
	}
	if (i % 4) {
		l.gdma_first = 2 * i + 1;
		l.gdma_last = l.gdma_first + i % 5;
	}
	if (i % 5) {
		l.begin_ns = i % 13 == 0 ? ((int64_t)1 << 48) - 1 : (int64_t)i * 1000;
		l.end_ns = l.begin_ns + (i % 17 == 0 ? (int64_t)UINT32_MAX : (int64_t)i);
	} else {
		l.begin_ns = 0;
		l.end_ns = -1;
	}
	if (i % 6 == 0) {
		l.first_tensor = i;
		l.num_tensors = 1 + i % 3;
	}
	return l;
}

static void assert_layer_is(const struct tp_profile *p, size_t i, const struct tp_layer *want)
{
	struct tp_layer got;
	assert_ptr_equal(tp_profile_layer(p, i, &got), &got);
	assert_memory_equal(&got, want, sizeof got);
	int64_t b, e;
	assert_int_equal(tp_profile_layer_span(p, i, &b, &e), want->begin_ns <= want->end_ns);
	assert_int_equal(b, want->begin_ns);
	assert_int_equal(e, want->end_ns);
	int32_t dev = -7, core = -7;
	assert_int_equal(tp_profile_layer_place(p, i, &dev, &core), want->begin_ns <= want->end_ns);
	assert_int_equal(dev, want->device);
	assert_int_equal(core, want->core);
	assert_int_equal(tp_profile_layer_id(p, i), want->id);
	assert_ptr_equal(tp_profile_timed_layer(p, i, &got),
	                 want->begin_ns <= want->end_ns ? &got : NULL);
}

/* The layer memo hands back the layer asked for, whichever of its two slots holds it, and
 * decodes again once a third layer has pushed it out. */
static void test_layer_memo(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	for (int i = 0; i < 3; i++) {
		struct tp_layer l = {.id = 100 + i,
		                     .subnet = -1,
		                     .group = -1,
		                     .begin_ns = 10 * i,
		                     .end_ns = 10 * i + 5};
		assert_int_equal(tp_profile_add_layer(p, &l), i);
	}
	struct tp_layer_memo m = {0};
	static const size_t order[] = {0, 1, 0, 2, 1, 0, 0, 2, 7};
	for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
		const struct tp_layer *l = tp_layer_memo_get(p, &m, order[k]);
		if (order[k] < 3) {
			assert_int_equal(l->id, 100 + (int)order[k]);
			assert_int_equal(l->end_ns, 10 * (int64_t)order[k] + 5);
		} else {
			assert_int_equal(l->id, -1); /* past the end, as tp_profile_layer */
		}
	}
	int32_t dev = 5, core = 5;
	assert_int_equal(tp_profile_layer_id(p, 3), -1); /* past the end, as tp_profile_layer */
	assert_int_equal(tp_profile_layer_place(p, 3, &dev, &core), 0); /* past the end */
	assert_int_equal(dev, 0);
	assert_int_equal(core, 0);
	tp_profile_free(p);
}

/* Each value just outside the record's range is kept whole, and reads back exactly; setting
 * values that fit again empties the wide table. p holds plain_layer(i) at every index up to
 * 1 300 at least, `tens` of them with tensors. */
static void check_wide_layers(struct tp_profile *p, size_t tens)
{
	struct tp_layer odd[] = {plain_layer(1),  plain_layer(2),  plain_layer(4),
	                         plain_layer(8),  plain_layer(10), plain_layer(11),
	                         plain_layer(12), plain_layer(14), plain_layer(16),
	                         plain_layer(19), plain_layer(21), plain_layer(22)};
	odd[0].core = 63;
	odd[1].core = INT32_MAX; /* tensor_location.json's "no core" */
	odd[2].device = 32;
	odd[3].subnet = 65535;
	odd[4].group = -2;
	odd[5].is_local = 2;
	odd[6].begin_ns = -5; /* timed, before the axis */
	odd[7].end_ns = odd[7].begin_ns + (int64_t)UINT32_MAX + 1;
	odd[8].begin_ns = (int64_t)1 << 48;
	odd[8].end_ns = odd[8].begin_ns;
	odd[9].tiu_first = 0; /* a last without a first */
	odd[10].gdma_last = odd[10].gdma_first - 1;
	odd[11].tiu_last = odd[11].tiu_first + 65536;
	size_t nodd = sizeof odd / sizeof *odd;
	for (size_t k = 0; k < nodd; k++) {
		/* Set in descending index order so the side tables insert before their end. */
		size_t at = 100 * (nodd - k);
		assert_int_equal(tp_profile_set_layer(p, at, &odd[k]), TP_OK);
	}
	assert_int_equal(p->layer_tab.num_wide, nodd);
	for (size_t k = 0; k < nodd; k++)
		assert_layer_is(p, 100 * (nodd - k), &odd[k]);
	/* Neighbours are untouched. */
	for (size_t k = 0; k < nodd; k++) {
		struct tp_layer l = plain_layer((uint32_t)(100 * (nodd - k) + 1));
		assert_layer_is(p, 100 * (nodd - k) + 1, &l);
	}
	/* Back to values that fit: the wide entries go away. */
	for (size_t k = 0; k < nodd; k++) {
		struct tp_layer l = plain_layer((uint32_t)(100 * (nodd - k)));
		assert_int_equal(tp_profile_set_layer(p, 100 * (nodd - k), &l), TP_OK);
		assert_layer_is(p, 100 * (nodd - k), &l);
	}
	assert_int_equal(p->layer_tab.num_wide, 0);
	assert_int_equal(p->layer_tab.num_tens, tens);
}

static void test_layer_table(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	/* Three chunks' worth of layers whose values fit the record: exact round trip, 40 bytes
	 * each, nothing in the wide table. */
	const uint32_t n = 2 * TP_LAYER_CHUNK + 123;
	for (uint32_t i = 0; i < n; i++) {
		struct tp_layer l = plain_layer(i);
		assert_int_equal(tp_profile_add_layer(p, &l), (int)i);
	}
	assert_int_equal(p->num_layers, n);
	for (uint32_t i = 0; i < n; i++) {
		struct tp_layer l = plain_layer(i);
		assert_layer_is(p, i, &l);
	}
	assert_int_equal(p->layer_tab.num_wide, 0);
	size_t tens = 0;
	for (uint32_t i = 0; i < n; i++)
		tens += i % 6 == 0;
	assert_int_equal(p->layer_tab.num_tens, tens);
	assert_true(tp_profile_layer_bytes(p) <= 3 * TP_LAYER_CHUNK * 40 + 16 * tens + 4096);

	check_wide_layers(p, tens);

	/* Normalised "don't care" values: an untimed layer reads as (0, -1) and first_tensor is
	 * 0 without tensors. */
	struct tp_layer u = plain_layer(5);
	u.begin_ns = 9;
	u.end_ns = 3;
	u.first_tensor = 77;
	u.num_tensors = 0;
	assert_int_equal(tp_profile_set_layer(p, 5, &u), TP_OK);
	u.begin_ns = 0;
	u.end_ns = -1;
	u.first_tensor = 0;
	assert_layer_is(p, 5, &u);

	/* Past the end: a zeroed untimed layer, and set refuses. */
	struct tp_layer none;
	memset(&none, 0, sizeof none);
	none.id = -1;
	none.end_ns = -1;
	assert_layer_is(p, n, &none);
	assert_int_equal(tp_profile_set_layer(p, n, &u), TP_ERANGE);

	assert_int_equal(tp_profile_finish(p), TP_OK);
	tp_profile_free(p);
}

/* Out of memory while a layer needs its first side entry (or a new chunk) is sticky, and
 * leaves the layer as it was. */
static void test_layer_table_oom(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	struct tp_layer l7 = plain_layer(7), wide = plain_layer(1);
	wide.core = 63; /* past the record's core bits */
	assert_int_equal(tp_profile_add_layer(p, &l7), 0);
	tp_alloc_fail_after(0);
	int st = tp_profile_set_layer(p, 0, &wide);
	tp_alloc_fail_after(-1);
	assert_int_equal(st, TP_ENOMEM);
	assert_layer_is(p, 0, &l7);
	tp_test_finish_oom(p);

	p = tp_profile_new();
	struct tp_layer l0 = plain_layer(0);
	tp_alloc_fail_after(0);
	int ix = tp_profile_add_layer(p, &l0);
	tp_alloc_fail_after(-1);
	assert_int_equal(ix, -1);
	assert_int_equal(p->num_layers, 0);
	tp_test_finish_oom(p);
}

/* tp_profile_layer_touch against the edit written out here on a copy, from layers of every
 * kind (untimed, timed, without and with cmd ranges, kept whole), with touches that keep them
 * in the record and ones that push the span, duration or cmd-id range out of it. */
static void test_layer_touch(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	enum { N = 40 };
	struct tp_layer want[N];
	for (uint32_t i = 0; i < N; i++) {
		want[i] = plain_layer(i);
		if (i == 39)
			want[i].core = 100; /* kept whole from the start */
		assert_int_equal(tp_profile_add_layer(p, &want[i]), (int)i);
	}
	uint64_t rng = 12345;
	for (int k = 0; k < 20000; k++) {
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		uint32_t i = (uint32_t)(rng >> 33) % N;
		int tiu = (int)(rng >> 20 & 1);
		uint32_t cmd = (rng >> 21 & 3) == 0 ? 0 : (uint32_t)(rng >> 40 & 0x1FFFF) + 1;
		int64_t b = (int64_t)(rng >> 24 & 0xFFFFF) * ((rng >> 60) == 0 ? 100000 : 1);
		int64_t e = b + (int64_t)(rng >> 44 & 0xFFF);
		assert_int_equal(tp_profile_layer_touch(p, i, b, e, tiu, cmd), TP_OK);
		struct tp_layer *l = &want[i];
		/* The expected layer: the command range and the span widened to the touch. */
		uint32_t *range[2] = {tiu ? &l->tiu_first : &l->gdma_first,
		                      tiu ? &l->tiu_last : &l->gdma_last};
		if (cmd) {
			*range[0] = *range[0] && *range[0] < cmd ? *range[0] : cmd;
			*range[1] = *range[1] > cmd ? *range[1] : cmd;
		}
		int timed = l->begin_ns <= l->end_ns;
		l->begin_ns = timed && l->begin_ns < b ? l->begin_ns : b;
		l->end_ns = timed && l->end_ns > e ? l->end_ns : e;
		assert_layer_is(p, i, l);
	}
	/* The random cmd ids (up to 2^17) and spans (up to 2^20 * 10^5 ns) pushed layers out of the
	 * record and into the wide table. */
	assert_true(p->layer_tab.num_wide > 1);
	assert_int_equal(tp_profile_layer_touch(p, N, 0, 1, 1, 1), TP_ERANGE);
	tp_profile_free(p);
}

/* A profile of N layers and three engine tracks whose slices name them in about their order
 * (with jumps back, slices without a layer, begins after ends, and cmd ids and spans that push
 * layers into the wide table); the same for the same seed. */
static struct tp_profile *touch_fixture(uint32_t n, int tr[3])
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	for (uint32_t i = 0; i < n; i++) {
		struct tp_layer l = plain_layer(i);
		l.begin_ns = 0;
		l.end_ns = -1;
		assert_int_equal(tp_profile_add_layer(p, &l), (int)i);
	}
	uint64_t rng = 777;
	for (int k = 0; k < 3; k++) {
		tr[k] = tp_profile_add_track(p, 0, k / 2, k % 2 ? TP_TRACK_GDMA : TP_TRACK_TIU, "x",
		                             1000.0);
		assert_true(tr[k] >= 0);
		uint32_t L = 0;
		int64_t t = 0;
		for (uint32_t c = 1; c <= 30000; c++) {
			rng = rng * 6364136223846793005u + 1442695040888963407u;
			struct tp_slice *sl = tp_track_push(p, tr[k]);
			assert_non_null(sl);
			if ((rng >> 60) == 0)
				L = (uint32_t)(rng >> 30) % n; /* a jump */
			else if ((rng >> 58 & 3) == 0 && L + 1 < n)
				L++;
			t += (int64_t)(rng >> 40 & 0xFF);
			sl->start_ns = (rng >> 50 & 63) == 0 ? t * 100000 : t;
			sl->cmd_id = (rng >> 48 & 31) == 0 ? c + 70000 : c;
			sl->layer = (rng >> 52 & 15) == 0 ? -1 : (int32_t)L;
			struct tp_track *tk = &p->tracks[tr[k]];
			assert_int_equal(
			    tp_slice_set_end(p, tk, sl,
			                     sl->start_ns + (int64_t)(rng >> 32 & 0x3FF)),
			    TP_OK);
		}
	}
	return p;
}

/* tp_profile_layers_touch_jobs gives the table one pass of tp_profile_layer_touch gives, over
 * several parts of layers and for every thread count. */
static void test_layers_touch_jobs(void **state)
{
	(void)state;
	enum { N = 9000 };
	int tr[3];
	static const uint8_t tiu[3] = {1, 0, 1};
	struct tp_profile *want = touch_fixture(N, tr);
	for (int k = 0; k < 3; k++) {
		const struct tp_track *t = &want->tracks[tr[k]];
		for (size_t i = 0; i < t->count; i++) {
			const struct tp_slice *s = &t->slices[i];
			if (s->layer >= 0)
				assert_int_equal(
				    tp_profile_layer_touch(want, (size_t)s->layer, s->start_ns,
				                           tp_slice_end(t, s), tiu[k], s->cmd_id),
				    TP_OK);
		}
	}
	assert_true(want->layer_tab.num_wide > 10);
	static const unsigned jobs[] = {1, 2, 3, 8};
	for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++) {
		int tr2[3];
		struct tp_profile *p = touch_fixture(N, tr2);
		assert_int_equal(tp_profile_layers_touch_jobs(p, tr2, tiu, 3, 1, jobs[j]), TP_OK);
		assert_int_equal(p->layer_tab.num_wide, want->layer_tab.num_wide);
		for (size_t i = 0; i < N; i++) {
			struct tp_layer l;
			tp_profile_layer(want, i, &l);
			assert_layer_is(p, i, &l);
		}
		tp_profile_free(p);
	}
	tp_profile_free(want);
}

/* tp_profile_layer_room makes the storage chunks up front and tp_profile_layer_chunk hands out
 * the records' addresses: layers added afterwards are stored there (in layer order, at the
 * record size given), read back the same as without the room, and the table allocates no
 * chunk below the room. */
static void test_layer_room(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	size_t rec = 0;
	assert_null(tp_profile_layer_chunk(p, 0, &rec));
	assert_int_equal(tp_profile_layer_room(p, TP_LAYER_CHUNK + 1), TP_OK);
	char *c0 = tp_profile_layer_chunk(p, 0, &rec), *c1 = tp_profile_layer_chunk(p, 1, &rec);
	assert_non_null(c0);
	assert_non_null(c1);
	assert_null(tp_profile_layer_chunk(p, 2, &rec));
	assert_int_equal(rec, 40);
	assert_int_equal(p->num_layers, 0);
	const uint32_t n = TP_LAYER_CHUNK + 7;
	for (uint32_t i = 0; i < n; i++) {
		struct tp_layer l = plain_layer(i);
		assert_int_equal(tp_profile_add_layer(p, &l), (int)i);
	}
	/* No chunk was added, and the records are where the chunks said. */
	assert_null(tp_profile_layer_chunk(p, 2, &rec));
	assert_ptr_equal(tp_profile_layer_chunk(p, 1, &rec), c1);
	int32_t id;
	memcpy(&id, c1 + 6 * rec + 12, sizeof id);
	assert_int_equal(id, plain_layer(TP_LAYER_CHUNK + 6).id);
	for (uint32_t i = 0; i < n; i++) {
		struct tp_layer l = plain_layer(i);
		assert_layer_is(p, i, &l);
	}
	/* A room below what the table has changes nothing. */
	assert_int_equal(tp_profile_layer_room(p, 5), TP_OK);
	assert_null(tp_profile_layer_chunk(p, 2, &rec));
	tp_profile_free(p);
}

/* Layers added at once and written later: the indexes tp_profile_add_layer would give, across
 * a storage chunk's end, each reading back as written, and a zeroed layer before its write;
 * tp_layer_fits refuses what a record alone cannot hold. */
static void test_layers_span(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	struct tp_layer l = {.id = 1, .core = -1, .subnet = -1, .group = -1, .end_ns = -1};
	for (size_t i = 0; i < TP_LAYER_CHUNK - 2; i++)
		assert_int_equal(tp_profile_add_layer(p, &l), (int)i);
	struct tp_layer_span s;
	assert_int_equal(tp_profile_add_layers(p, 5, &s), TP_OK);
	assert_int_equal(s.first, TP_LAYER_CHUNK - 2);
	assert_int_equal(s.n0, 2);
	assert_int_equal(p->num_layers, TP_LAYER_CHUNK + 3);
	assert_int_equal(tp_profile_add_layer(p, &l), TP_LAYER_CHUNK + 3);
	struct tp_layer out;
	assert_int_equal(tp_profile_layer(p, TP_LAYER_CHUNK, &out)->id, 0);
	for (size_t k = 0; k < 5; k++) {
		struct tp_layer w = {.id = 100 + (int32_t)k,
		                     .type = 7,
		                     .name = 9 + (uint32_t)k,
		                     .core = (int32_t)k,
		                     .subnet = 3,
		                     .group = -1,
		                     .is_local = k & 1,
		                     .is_data_move = 1,
		                     .end_ns = -1};
		assert_true(tp_layer_fits(&w));
		tp_layer_span_put(&s, k, &w);
	}
	for (size_t k = 0; k < 5; k++) {
		tp_profile_layer(p, s.first + k, &out);
		assert_int_equal(out.id, 100 + (int)k);
		assert_int_equal(out.name, 9 + k);
		assert_int_equal(out.core, (int)k);
		assert_int_equal(out.subnet, 3);
		assert_int_equal(out.is_local, k & 1);
		assert_int_equal(out.is_data_move, 1);
		assert_true(out.begin_ns > out.end_ns);
	}
	assert_int_equal(tp_profile_layer(p, TP_LAYER_CHUNK + 3, &out)->id, 1);
	l.num_tensors = 1;
	assert_false(tp_layer_fits(&l));
	l.num_tensors = 0;
	l.core = 63;
	assert_false(tp_layer_fits(&l));
	assert_int_equal(tp_profile_add_layers(p, TP_LAYER_CHUNK, &s), TP_ENOMEM);
	assert_int_equal(p->num_layers, TP_LAYER_CHUNK + 4);
	tp_profile_free(p);
}

#include "tp_test_main.h"
