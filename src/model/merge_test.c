/*
 * merge_test.c — unit tests of tp_profile_merge_capture: a libtpuprof capture laid next to a
 * device profile by the rules of sophgo-cdm.md §10 (the tail rule, the first runtime call, no
 * anchor at all), with every thread, label, argument, counter and note carried over.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "model/merge.h"
#include "testutil.h"

/* A device: one TIU track with commands at 0..100 and 500..600 ns, a counter at 50 ns. */
static struct tp_profile *device(int with_tail)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	assert_int_equal(tp_profile_add_device(p, "BM1690", 0, 1), 0);
	int tr = tp_profile_add_track(p, 0, 0, TP_TRACK_TIU, "TIU", 1000);
	tp_test_push_slice(p, tr, "conv", "conv.normal", 0, 100, 0);
	tp_test_push_slice(p, tr, "conv", "conv.normal", 500, 600, 0);
	int c = tp_profile_add_counter(p, 0, -1, "ddr", "GB/s");
	assert_int_equal(tp_counter_push(p, c, 50, 1.5), TP_OK);
	if (with_tail) {
		/* The last PMU event ends 1000 ns (cycle 600 at 1 GHz) after device time 0, and
		 * 200 ns before the host saw disable_profile finish. */
		tp_profile_set_meta(p, TP_META_TAIL_OFFSET_NS, "200");
		tp_profile_set_meta(p, TP_META_PMU_TAIL_CYCLE, "600");
		p->tiu_freq_mhz = 1000;
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

/* A capture: thread "main" (tid 7) with a step 1000..9000 holding an operator with tensor
 * arguments, runtime calls enable_profile 2000..2500 and (optionally) disable_profile
 * 8000..8100, a counter on the thread, a note; thread "worker" with one activity. */
static struct tp_profile *capture(int runtime_calls)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->arch = TP_ARCH_CPU;
	assert_int_equal(tp_profile_add_device(p, "python3 (pid 7)", 7, 0), 0);
	int m = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, "main", 0);
	int w = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, "worker", 0);
	p->tracks[m].tid = 7;
	p->tracks[m].dropped = 3;
	tp_test_push_slice(p, m, TP_CAP_TYPE_STEP, "train", 1000, 9000, 0);
	tp_args_begin(p);
	tp_args_add_str(p, TP_CAP_KEY_OP_TYPE, "MatMul");
	tp_args_add_str(p, TP_CAP_KEY_INPUT_SHAPES, "4x256;256x256");
	tp_args_add_uint(p, TP_CAP_KEY_BYTES, 266240);
	tp_test_push_slice(p, m, TP_CAP_TYPE_OP, "fc1", 3000, 4000, tp_args_end(p));
	if (runtime_calls) {
		tp_test_push_slice(p, m, TP_CAP_TYPE_RUNTIME, "enable_profile", 2000, 2500, 0);
		tp_test_push_slice(p, m, TP_CAP_TYPE_RUNTIME, "disable_profile", 8000, 8100, 0);
	}
	tp_test_push_slice(p, w, TP_CAP_TYPE_ACTIVITY, "decode", 0, 700, 0);
	int c = tp_profile_add_counter(p, 0, m, "queue_depth", "");
	assert_int_equal(tp_counter_push(p, c, 5000, 2.5), TP_OK);
	tp_profile_note(p, "3 events dropped");
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

static const struct tp_track *track_named(const struct tp_profile *p, const char *name)
{
	for (size_t i = 0; i < p->num_tracks; i++)
		if (strcmp(tp_str(p, p->tracks[i].name), name) == 0)
			return &p->tracks[i];
	fail_msg("no track %s", name);
	return NULL;
}

static const struct tp_slice *slice_named(const struct tp_profile *p, const struct tp_track *t,
                                          const char *name)
{
	for (size_t i = 0; i < t->count; i++)
		if (strcmp(tp_str(p, tp_slice_name(t, &t->slices[i])), name) == 0)
			return &t->slices[i];
	fail_msg("no slice %s", name);
	return NULL;
}

static int has_note(const struct tp_profile *p, const char *part)
{
	for (size_t i = 0; i < p->num_notes; i++)
		if (strstr(tp_str(p, p->notes[i].text), part))
			return 1;
	return 0;
}

/* The device (with or without the tail meta) after merging `cap` (freed), its alignment
 * checked. */
static struct tp_profile *merged(int with_tail, struct tp_profile *cap, const char *alignment)
{
	struct tp_profile *dev = device(with_tail);
	struct tp_diag d = {0};
	assert_int_equal(tp_profile_merge_capture(dev, cap, "cap", &d), TP_OK);
	assert_string_equal(tp_profile_get_meta(dev, "host_trace.alignment"), alignment);
	tp_profile_free(cap);
	return dev;
}

/* No tail meta: device time 0 = the end of the first runtime call (2500 ns); the capture
 * starts first, so host times stay and the device moves by 2500. */
static void test_first_runtime_call(void **state)
{
	(void)state;
	struct tp_profile *dev = merged(0, capture(1), "first tpudnn event");
	assert_string_equal(tp_profile_get_meta(dev, "host_trace.device_offset_ns"), "2500");
	const struct tp_track *tiu = track_named(dev, "TIU");
	assert_int_equal(tiu->slices[0].start_ns, 2500);
	assert_int_equal(tp_slice_end(tiu, &tiu->slices[1]), 3100);
	assert_int_equal(dev->counters[0].samples[0].ts_ns, 2550);
	/* Threads as they were: kind, tid, drops, labels, arguments, nesting. */
	const struct tp_track *m = track_named(dev, "main");
	assert_int_equal(m->kind, TP_TRACK_THREAD);
	assert_int_equal(m->device, 0);
	assert_int_equal(m->core, -1);
	assert_int_equal(m->tid, 7);
	assert_int_equal(m->dropped, 3);
	assert_int_equal(m->count, 4);
	const struct tp_slice *op = slice_named(dev, m, "fc1");
	assert_int_equal(op->start_ns, 3000);
	assert_int_equal(tp_slice_end(m, op), 4000);
	assert_string_equal(tp_str(dev, tp_slice_type(m, op)), TP_CAP_TYPE_OP);
	assert_int_equal(tp_slice_depth(m, op), 1);
	const struct tp_arg *a =
	    tp_args_find(dev, op->args, tp_profile_find_str(dev, "input_shapes"));
	assert_non_null(a);
	assert_string_equal(tp_str(dev, a->v.s), "4x256;256x256");
	a = tp_args_find(dev, op->args, tp_profile_find_str(dev, "bytes"));
	assert_non_null(a);
	assert_int_equal(a->v.u, 266240);
	assert_int_equal(track_named(dev, "worker")->count, 1);
	/* The thread's counter follows it; the capture's note is repeated. */
	assert_int_equal(dev->num_counters, 2);
	const struct tp_counter *c = &dev->counters[1];
	assert_string_equal(tp_str(dev, c->name), "queue_depth");
	assert_ptr_equal(&dev->tracks[c->track], m);
	assert_int_equal(c->samples[0].ts_ns, 5000);
	assert_true(c->samples[0].value == 2.5);
	assert_true(has_note(dev, "host capture cap: 3 events dropped"));
	assert_true(has_note(dev, "host capture cap merged: 5 host events on 2 threads"));
	assert_int_equal(dev->span_begin_ns, 0);
	assert_int_equal(dev->span_end_ns, 9000);
	tp_profile_free(dev);
}

/* Tail meta: the last PMU event (cycle 600 = 600 ns) ends tail_offset_ns (200) before
 * disable_profile ends (8100): device time 0 = 8100 - 200 - 600 = 7300. */
static void test_tail_rule(void **state)
{
	(void)state;
	struct tp_profile *dev = merged(1, capture(1), "tail");
	assert_string_equal(tp_profile_get_meta(dev, "host_trace.device_offset_ns"), "7300");
	const struct tp_track *tiu = track_named(dev, "TIU");
	assert_int_equal(tp_slice_end(tiu, &tiu->slices[1]), 7900);
	tp_profile_free(dev);
}

/* No runtime call and no tpudnn category: not aligned, said so; the device at the capture's
 * start. A range of category "tpudnn" counts as a tpudnn event. */
static void test_no_anchor_and_category(void **state)
{
	(void)state;
	struct tp_profile *dev = merged(0, capture(0), "none");
	assert_true(has_note(dev, "has no runtime call and no tpudnn event"));
	assert_int_equal(track_named(dev, "TIU")->slices[0].start_ns, 0);
	tp_profile_free(dev);

	struct tp_profile *cap = capture(0);
	tp_args_begin(cap);
	tp_args_add_str(cap, "category", "tpudnn");
	tp_test_push_slice(cap, 1, "range", "tpudnnConv2d", 6000, 6400, tp_args_end(cap));
	assert_int_equal(tp_profile_finish(cap), TP_OK);
	dev = merged(0, cap, "first tpudnn event");
	assert_string_equal(tp_profile_get_meta(dev, "host_trace.device_offset_ns"), "6400");
	tp_profile_free(dev);
}

#include "tp_test_main.h"
