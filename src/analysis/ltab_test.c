/*
 * ltab_test.c — the layer table (ltab.h) on a small hand-built BM1684X profile: a local conv
 * layer split by the compiler into a 5x1 pool and a 1x5 conv command (its kernel, strides and
 * padding are the largest of each), and a global Pad layer (a DDR->DDR copy and a constant
 * fill), whose bytes and cycles are those of layer 35 of the real blazeface dump, so its
 * theoretical time and store bandwidth must be the vendor's figures to the last digit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "analysis/ltab.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A command of `cycles` cycles from `start` on track tr, in layer `layer`, with the
 * descriptor fields geo (8 values in tp_ltab_row.geo order) when geo is not NULL. */
static struct tp_slice *cmd(struct tp_profile *p, int tr, uint64_t start, uint32_t cycles,
                            int32_t layer, const char *type, enum tp_dir dir, uint32_t bytes,
                            const uint32_t *geo)
{
	static const char *const keys[8] = {
	    TP_KEY_TIU_KH,     TP_KEY_TIU_KW,       TP_KEY_TIU_STRIDE_H, TP_KEY_TIU_STRIDE_W,
	    TP_KEY_TIU_PAD_UP, TP_KEY_TIU_PAD_DOWN, TP_KEY_TIU_PAD_LEFT, TP_KEY_TIU_PAD_RIGHT};
	struct tp_track *t = &p->tracks[tr];
	struct tp_slice *s = tp_track_push(p, tr);
	tp_slice_set_start_cycle(p, t, s, start);
	s->cycles = cycles;
	s->start_ns = (int64_t)start;
	tp_slice_set_end(p, t, s, (int64_t)(start + cycles));
	s->layer = layer;
	tp_slice_set_type(p, t, s, tp_profile_str(p, type));
	tp_slice_set_dir(p, t, s, (uint8_t)dir);
	tp_slice_set_bytes(p, t, s, bytes);
	if (geo) {
		tp_args_begin(p);
		for (int k = 0; k < 8; k++)
			tp_args_add_uint(p, keys[k], geo[k]);
		s->args = tp_args_end(p);
	}
	return s;
}

static void tensor(struct tp_profile *p, int32_t layer, int64_t id, int is_in, int is_const,
                   enum tp_dtype dt, int64_t n, int64_t c, int64_t h, int64_t w)
{
	struct tp_tensor t = {.id = id,
	                      .layer = layer,
	                      .is_in = (uint8_t)is_in,
	                      .is_const = (uint8_t)is_const,
	                      .dtype = (uint8_t)dt,
	                      .ndim = 4,
	                      .shape = {n, c, h, w},
	                      .nslice = 1,
	                      .hslice = (uint32_t)h};
	assert_true(tp_profile_add_tensor(p, &t) >= 0);
}

static void layer(struct tp_profile *p, int32_t id, const char *type, int local,
                  uint32_t first_tensor, uint32_t num_tensors)
{
	struct tp_layer l = {.id = id,
	                     .type = tp_profile_str(p, type),
	                     .subnet = 0,
	                     .group = -1,
	                     .is_local = (uint8_t)local,
	                     .first_tensor = first_tensor,
	                     .num_tensors = num_tensors,
	                     .begin_ns = 1,
	                     .end_ns = 0};
	assert_true(tp_profile_add_layer(p, &l) >= 0);
}

static struct tp_profile *build(void)
{
	struct tp_profile *p = tp_profile_new();
	p->arch = TP_ARCH_BM1684X;
	p->tiu_freq_mhz = p->gdma_freq_mhz = 1000;
	int dev = tp_profile_add_device(p, "dev", 0, 1);
	int tiu = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, "TIU", 1000);
	int gdma = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, "GDMA", 1000);
	/* Layer 0: Conv2D 26, [1x3x128x128] FP16 in, a constant weight, [1x24x64x64] out. */
	layer(p, 26, "Conv2D", 1, 0, 3);
	tensor(p, 0, 23, 1, 0, TP_DT_FP16, 1, 3, 128, 128);
	tensor(p, 0, 21, 1, 1, TP_DT_FP16, 1, 24, 1, 160);
	tensor(p, 0, 26, 0, 0, TP_DT_FP16, 1, 24, 64, 64);
	/* The pool takes the H kernel and stride (and pads up/down), the conv the W ones. */
	static const uint32_t pool[8] = {5, 1, 2, 1, 1, 2, 0, 0},
	                      conv[8] = {1, 5, 1, 2, 0, 0, 1, 2};
	cmd(p, tiu, 100, 1280, 0, "sPorD", TP_DIR_NONE, 0, pool);
	cmd(p, tiu, 1400, 5120, 0, "sCONV", TP_DIR_NONE, 0, conv);
	/* Layer 26's Alg / uArch Ops in the vendor's layer.csv, all on the conv command. */
	struct tp_cost k = {.alg_ops = 16195624, .uarch_ops = 175904768, .valid = 1};
	assert_int_equal(tp_track_set_cost(p, tiu, 1, &k), TP_OK);
	cmd(p, tiu, 6600, 256, 0, "sAR", TP_DIR_NONE, 0, NULL);
	/* Layer 1: Pad 35 (global), a 196 608-byte DDR copy and a 32 768-byte constant fill. */
	layer(p, 35, "Pad", 0, 3, 2);
	tensor(p, 1, 32, 1, 0, TP_DT_FP16, 1, 24, 64, 64);
	tensor(p, 1, 35, 0, 0, TP_DT_FP16, 1, 28, 64, 64);
	cmd(p, gdma, 7000, 7088, 1, "DMA_tensor", TP_DIR_DDR_TO_DDR, 196608, NULL);
	cmd(p, gdma, 14092, 847, 1, "DMA_tensor", TP_DIR_LMEM_TO_DDR, 32768, NULL);
	/* A load of 112 bytes whose AXI ports read 64 + 64 (layer 44's weight load): S2L counts
	 * what the ports read. */
	struct tp_slice *ld =
	    cmd(p, gdma, 100, 182, 0, "DMA_tensor", TP_DIR_DDR_TO_LMEM, 112, NULL);
	tp_args_begin(p);
	tp_args_add_uint(p, TP_KEY_GDMA_D0_AR, 64);
	tp_args_add_uint(p, TP_KEY_GDMA_D1_AR, 64);
	ld->args = tp_args_end(p);
	/* Layer 2: no command, no row. */
	layer(p, 294, "Reshape", 0, 5, 0);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

/* Analyses p and builds its table into *a and *t. */
static void tables(struct tp_profile *p, struct tp_analysis *a, struct tp_ltab *t)
{
	assert_int_equal(tp_analyze(p, a), TP_OK);
	assert_int_equal(tp_ltab_build(p, a, t), TP_OK);
}

static void release(struct tp_profile *p, struct tp_analysis *a, struct tp_ltab *t)
{
	tp_ltab_free(t);
	tp_analysis_free(a);
	tp_profile_free(p);
}

/* The group fixture: build()'s profile with its analysis and table, which test_rows and
 * test_whatif read (neither changes them). */
struct built {
	struct tp_profile *p;
	struct tp_analysis a;
	struct tp_ltab t;
};

static int built_setup(void **state)
{
	struct built *b = calloc(1, sizeof *b);
	assert_non_null(b);
	b->p = build();
	tables(b->p, &b->a, &b->t);
	*state = b;
	return 0;
}

static int built_teardown(void **state)
{
	struct built *b = *state;
	release(b->p, &b->a, &b->t);
	free(b);
	return 0;
}

static void test_rows(void **state)
{
	const struct tp_ltab *t = &((const struct built *)*state)->t;
	assert_int_equal(t->num_rows, 2);
	const struct tp_ltab_row *c = &t->rows[0], *d = &t->rows[1];
	assert_int_equal(c->id, 26); /* the longer TIU time first */
	assert_int_equal(c->func, TP_LTF_CONV);
	static const uint32_t geo[8] = {5, 5, 2, 2, 1, 2, 1, 2};
	assert_memory_equal(c->geo, geo, sizeof geo);
	assert_int_equal(c->in[1], 3);
	assert_int_equal(c->out[3], 64);
	assert_int_equal(c->in_bytes, 3 * 128 * 128 * 2);
	assert_int_equal(c->s.weight_bytes, 24 * 160 * 2);
	assert_int_equal(c->s.s2l_bytes, 128);
	assert_int_equal(c->load_cycles, 182);
	assert_int_equal(c->s.tiu.cycles, 1280 + 5120 + 256);
	assert_true(c->s.peak_tops == 16.0); /* conv, 16-bit */
	assert_true(c->s.tiu.us == (1280 + 5120 + 256) * 0.001);
	assert_int_equal(c->s.alg_ops, 16195624);
	assert_true(c->s.tiu.theo_us == 0.98850244140625); /* the vendor's figure */
	assert_int_equal(d->id, 35);
	assert_int_equal(d->func, TP_LTF_OTHERS);
	assert_int_equal(d->s.s2s_bytes, 196608);
	assert_int_equal(d->s.l2s_bytes, 32768);
	assert_int_equal(d->s.gdma.cycles, 7088 + 847);
	/* The vendor's layer.csv row of layer 35, to the last digit. */
	assert_true(d->s.gdma.theo_us == 7.233062347808441);
	/* ddrRate: the theoretical over the measured GDMA time; 0 for an engine with no time. */
	assert_true(tp_ltab_theo_rate(&d->s.gdma) == 7.233062347808441 / ((7088 + 847) * 0.001));
	assert_true(tp_ltab_theo_rate(&d->s.tiu) == 0);
	assert_true(d->store_gibps == 36.030198494687134);
	assert_true(d->s.peak_tops == 2.0);
	/* Span 7000 .. 14939 cycles; no TIU: Concurrency 1. */
	assert_true(fabs(d->total_us - 7.939) < 1e-12);
	assert_true(d->concurrency == 1);
	assert_true(fabs(d->parallelism - 7.935 / 7.939) < 1e-12);
	/* Functions: Conv, then Others last; Overall sums. */
	assert_int_equal(t->num_funcs, 2);
	assert_int_equal(t->funcs[0].func, TP_LTF_CONV);
	assert_int_equal(t->funcs[1].func, TP_LTF_OTHERS);
	assert_int_equal(t->overall.gdma.cycles, 7935 + 182);
	assert_true(t->funcs[1].s.gdma.ratio == 7935.0 / (7935 + 182));
	assert_true(t->overall.tiu.ratio == 1);
	assert_true(t->overall.peak_tops == 16.0);
}

static void test_whatif(void **state)
{
	const struct tp_ltab *t = &((const struct built *)*state)->t;
	assert_int_equal(t->num_whatif, 2 + 2 * 2);
	assert_int_equal(t->whatif[0].kind, TP_LTC_ORIGIN);
	assert_true(t->whatif[0].total_us == t->total_us);
	/* Overlapped fully: the longer engine, GDMA's 8.117 µs against TIU's 6.656. */
	assert_int_equal(t->whatif[1].kind, TP_LTC_OVERLAP);
	assert_true(fabs(t->whatif[1].total_us - 8.117) < 1e-12);
	/* Conv at the model's peak (16 TOPS): its Alg Ops take 1.012 µs, but GDMA still takes
	 * 8.117 µs, so the total does not move. */
	assert_int_equal(t->whatif[2].kind, TP_LTC_MODEL_PEAK);
	assert_int_equal(t->whatif[2].func, TP_LTF_CONV);
	assert_true(t->whatif[2].tiu_after_us == 16195624 / (16.0 * 1e12) * 1e6);
	for (size_t i = 2; i < t->num_whatif; i++) {
		assert_true(fabs(t->whatif[i].total_us - 8.117) < 1e-12);
		assert_true(t->whatif[i].reduced_us == 0);
	}
}

static void test_no_layers(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_analysis a;
	struct tp_ltab t;
	tables(p, &a, &t);
	assert_int_equal(t.num_rows, 0);
	assert_int_equal(t.num_whatif, 0);
	release(p, &a, &t);
}

#define TP_TEST_GROUP_SETUP built_setup
#define TP_TEST_GROUP_TEARDOWN built_teardown
#include "tp_test_main.h"
