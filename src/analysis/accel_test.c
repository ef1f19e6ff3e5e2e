/*
 * accel_test.c — unit tests of the accelerator analysis (accel.h) on profiles built in code:
 * a step with nested host operators, two launches joined by correlation id and one by a flow,
 * work of two kinds on two lanes; the figures worked out by hand; a profile without device
 * lanes (none); a dump's engines with and without a host track beside them; and every
 * allocation failing in turn (TP_ENOMEM, nothing returned, nothing leaked).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "analysis/accel.h"
#include "testutil.h"

/* A slice [t0, t1] of class w named `name` on track tr, with a correlation id when corr > 0. */
static void put(struct tp_profile *p, int tr, int64_t t0, int64_t t1, enum tp_work w,
                const char *name, int64_t corr)
{
	struct tp_slice *s = tp_track_push(p, tr);
	assert_non_null(s);
	s->start_ns = t0;
	tp_slice_set_end(p, &p->tracks[tr], s, t1);
	struct tp_label l = {.name = tp_profile_str(p, name),
	                     .type = tp_profile_str(p, tp_work_type(w))};
	tp_slice_set_label(p, &p->tracks[tr], s, &l);
	if (corr > 0) {
		tp_args_begin(p);
		tp_args_add_int(p, TP_KEY_CORRELATION, corr);
		s->args = tp_args_end(p);
	}
}

/* Host thread: step [0, 1000] holding op [100, 600] holding launch 1 [110, 120]; launch 2
 * [700, 710]; a bare op-like launch [800, 805] (no runtime call) flows to the third kernel.
 * Lane 7: kernel [150, 450] (corr 1), memcpy [720, 800] (corr 2), kernel [810, 900] (flow).
 * The profiler's envelope [0, 2000] on a track of its own. */
static struct tp_profile *sample(void)
{
	struct tp_profile *p = tp_profile_new();
	int host = tp_profile_add_device(p, "host", 1, 0),
	    gpu = tp_profile_add_device(p, "gpu", 0, 0);
	int th = tp_profile_add_track(p, host, -1, TP_TRACK_HOST, "main", 0);
	int env = tp_profile_add_track(p, host, -1, TP_TRACK_HOST, "spans", 0);
	int lane = tp_profile_add_track(p, gpu, -1, TP_TRACK_HOST, "stream 7", 0);
	put(p, th, 0, 1000, TP_WORK_STEP, "ProfilerStep#1", 0);
	put(p, th, 100, 600, TP_WORK_OP, "aten::mm", 0);
	put(p, th, 110, 120, TP_WORK_RUNTIME, "cudaLaunchKernel", 1);
	put(p, th, 700, 710, TP_WORK_RUNTIME, "cudaMemcpyAsync", 2);
	put(p, th, 800, 805, TP_WORK_OP, "launcher", 0);
	put(p, env, 0, 2000, TP_WORK_PROFILER, "PyTorch Profiler (0)", 0);
	put(p, lane, 150, 450, TP_WORK_KERNEL, "gemm", 1);
	put(p, lane, 720, 800, TP_WORK_MEMCPY, "Memcpy HtoD", 2);
	put(p, lane, 810, 900, TP_WORK_KERNEL, "relu", 0);
	put(p, lane, 100, 900, TP_WORK_DEVICE_ANNOTATION, "ProfilerStep#1", 0);
	struct tp_flow f = {th, lane, 802, 810};
	assert_int_equal(tp_profile_add_flow(p, &f), TP_OK);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

/* The group fixture: the sample profile, finished, that test_figures and test_oom read
 * (tp_accel_analyze does not change it). */
static int sample_setup(void **state)
{
	*state = sample();
	return 0;
}

static int sample_teardown(void **state)
{
	tp_profile_free(*state);
	return 0;
}

static void test_figures(void **state)
{
	const struct tp_profile *p = *state;
	struct tp_accel *a = NULL;
	assert_int_equal(tp_accel_analyze(p, &a), TP_OK);
	assert_non_null(a);
	assert_int_equal(a->lanes, 1);
	assert_int_equal(a->host_threads, 1); /* the envelope's track holds nothing counted */
	assert_int_equal(a->nsteps, 1);       /* the GPU projection is no step */
	const struct tp_accel_step *s = &a->steps[0];
	/* Work 300 + 80 + 90 = 470, busy the same (no overlap), idle 530; three launches of
	 * 10 + 10 + 5; delays 40, 20, 10: median 20, max 40. Self time: step 1000 - 500 - 10 - 5
	 * = 485, aten::mm 500 - 10 = 490, the calls 10, 10, launcher 5: 1000 in all, the envelope
	 * left out. */
	const struct {
		const char *what;
		int64_t got, want;
	} figures[] = {
	    {"device", s->w.device_ns, 470},
	    {"busy", s->w.busy_ns, 470},
	    {"idle", s->idle_ns, 530},
	    {"compute", s->w.ns[TP_ACC_COMPUTE], 390},
	    {"memcpy", s->w.ns[TP_ACC_MEMCPY], 80},
	    {"launches", (int64_t)s->launches, 3},
	    {"launch time", s->launch_ns, 25},
	    {"median delay", s->delay_median_ns, 20},
	    {"max delay", s->delay_max_ns, 40},
	    {"linked launches", (int64_t)a->linked, 3},
	    {"host self time", a->host_self_ns, 1000},
	};
	for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
		if (figures[i].got != figures[i].want)
			fail_msg("%s: %lld, want %lld", figures[i].what, (long long)figures[i].got,
			         (long long)figures[i].want);
	assert_int_equal(a->nhost, 5);
	assert_int_equal(a->host[0].kind, TP_WORK_OP);
	assert_int_equal(a->host[0].total_ns, 490);
	assert_int_equal(a->host[1].kind, TP_WORK_STEP);
	assert_int_equal(a->host[1].total_ns, 485);
	/* 53 % idle: host-bound. */
	assert_int_equal(a->bound, TP_BOUND_HOST);
	assert_non_null(strstr(a->verdict, "idle 53 % of each step"));
	tp_accel_free(a);
}

static void test_none_and_engines(void **state)
{
	(void)state;
	int th;
	struct tp_profile *p = tp_test_thread("cpu", 1, "main", &th);
	put(p, th, 0, 100, TP_WORK_OP, "op", 0);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_accel *a = (struct tp_accel *)1;
	assert_int_equal(tp_accel_analyze(p, &a), TP_OK);
	assert_null(a); /* host code only */
	tp_profile_free(p);
	/* A dump: TIU and GDMA commands; no accelerator figures alone, figures once a host
	 * track stands beside them (a merged host trace). */
	int tiu, dma;
	p = tp_test_tiu_gdma("BM1688", 1, 900, &tiu, &dma);
	put(p, tiu, 0, 100, TP_WORK_NONE, "conv", 0);
	put(p, dma, 50, 150, TP_WORK_NONE, "load", 0);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	assert_int_equal(tp_accel_analyze(p, &a), TP_OK);
	assert_null(a);
	int host = tp_profile_add_track(p, 0, -1, TP_TRACK_HOST, "cpu op", 0);
	put(p, host, 0, 10, TP_WORK_OP, "aten::conv2d", 0);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	assert_int_equal(tp_accel_analyze(p, &a), TP_OK);
	assert_non_null(a);
	assert_int_equal(a->lanes, 2);
	assert_int_equal(a->total.ns[TP_ACC_COMPUTE], 100);
	assert_int_equal(a->total.ns[TP_ACC_MEMCPY], 100);
	assert_int_equal(a->total.busy_ns, 150);
	assert_int_equal(a->nsteps, 0);
	tp_accel_free(a);
	tp_profile_free(p);
}

static void test_oom(void **state)
{
	const struct tp_profile *p = *state;
	long n;
	for (n = 0; n < 10000; n++) {
		struct tp_accel *a = (struct tp_accel *)1;
		tp_alloc_fail_after(n);
		int st = tp_accel_analyze(p, &a);
		tp_alloc_fail_after(-1);
		if (st == TP_OK) {
			assert_non_null(a);
			tp_accel_free(a);
			break;
		}
		assert_int_equal(st, TP_ENOMEM);
		assert_null(a);
	}
	assert_true(n > 5 && n < 10000);
}

#define TP_TEST_GROUP_SETUP sample_setup
#define TP_TEST_GROUP_TEARDOWN sample_teardown
#include "tp_test_main.h"
