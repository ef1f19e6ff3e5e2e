/*
 * parts_test.c — a track's slices set in parts on several threads (model/parts.h): the track
 * one pass sets, and out-of-memory paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "model/parts.h"
#include "testutil.h"

/* A track of PART_N slices for test_parts_*: each starts with one of a few labels (stall and
 * bytes, as a reader's records do) and a time. */
#define PART_N 3000

static struct tp_profile *parts_input(int *track)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	int dev = tp_profile_add_device(p, "d", 0, 1);
	*track = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, "TIU", 1000);
	assert_true(*track >= 0);
	for (size_t i = 0; i < PART_N; i++) {
		struct tp_slice *s = tp_track_push(p, *track);
		assert_non_null(s);
		struct tp_track *t = &p->tracks[*track];
		s->start_ns = (int64_t)i * 1000;
		assert_int_equal(tp_slice_set_end(p, t, s, s->start_ns + 10), TP_OK);
		assert_int_equal(tp_slice_set_stall(p, t, s, (uint32_t)(i % 5)), TP_OK);
	}
	return p;
}

/* What the parts set for slice i of the track (as a function of i alone): generation 0 a
 * start cycle (past 2^32 now and then: a new label) and an end (a long duration now and then);
 * generation 1 a label out of a few hundred (kind and data type from i) and a cost entry out of
 * more than 256 (the id array must widen), some too big to pack. */
static void part_gen0(struct tp_part *pt, struct tp_slice *s, size_t i)
{
	uint64_t cyc = (uint64_t)i * 7 + (i % 97 == 5 ? (uint64_t)(i % 3 + 1) << 32 : 0);
	assert_int_equal(tp_part_set_start_cycle(pt, s, cyc), TP_OK);
	int64_t dur = i % 89 == 3 ? (int64_t)3 << 31 : (int64_t)(i % 50);
	assert_int_equal(tp_part_set_end(pt, s, s->start_ns + dur), TP_OK);
}

static void part_gen1(struct tp_part *pt, struct tp_slice *s, size_t i)
{
	struct tp_label l = *tp_part_label_at(pt, s->label);
	l.name = (uint32_t)((i * 2654435761u) % 301);
	l.kind = (uint8_t)(i % 3);
	l.dtype = (uint8_t)(i / 1000);
	assert_int_equal(tp_part_set_label(pt, s, &l), TP_OK);
	if (i % 11 == 0)
		assert_int_equal(tp_part_set_name(pt, s, 7), TP_OK);
	if (i % 4 == 1)
		return; /* no cost entry */
	struct tp_cost c = {
	    .alg_ops = (i * 40503u) % 997, .alg_cycle = (uint32_t)(i % 13), .valid = 1};
	if (i % 301 == 17)
		c.alg_ops = (uint64_t)1 << 50; /* does not pack */
	assert_int_equal(tp_part_set_cost(pt, i, &c), TP_OK);
}

struct parts_run {
	struct tp_part *v;
};

static void parts_job(void *arg, size_t q)
{
	struct parts_run *r = arg;
	struct tp_part *pt = &r->v[q];
	struct tp_slice *s = pt->p->tracks[pt->track].slices;
	for (size_t i = pt->first; i < pt->first + pt->n; i++)
		part_gen0(pt, &s[i], i);
	tp_part_next_gen(pt);
	for (size_t i = pt->first; i < pt->first + pt->n; i++)
		part_gen1(pt, &s[i], i);
}

static void parts_commit(void *arg, size_t q)
{
	struct parts_run *r = arg;
	tp_part_commit(&r->v[q]);
}

/* The track of parts_input set in parts of `size` slices on three threads (one direct part
 * when size is 0). */
static struct tp_profile *parts_set(size_t size)
{
	int track;
	struct tp_profile *p = parts_input(&track);
	size_t n = size ? (PART_N + size - 1) / size : 1;
	struct tp_part *v = calloc(n, sizeof *v);
	assert_non_null(v);
	for (size_t q = 0; q < n; q++) {
		size_t first = size ? q * size : 0;
		size_t m = size ? (PART_N - first < size ? PART_N - first : size) : PART_N;
		tp_part_open(&v[q], p, track, first, m, size == 0);
	}
	struct parts_run r = {v};
	tp_par_run(3, n, parts_job, &r);
	assert_int_equal(tp_parts_merge(v, n), TP_OK);
	tp_par_run(3, n, parts_commit, &r);
	free(v);
	return p;
}

/* A track set in parts on several threads is the track one pass sets: the same slices,
 * labels (ids in the same order, those of generation 0 first), long durations, cost entries
 * and id widths, whatever the parts' size. */
static void test_parts_match_one_pass(void **state)
{
	(void)state;
	struct tp_profile *a = parts_set(0);
	const struct tp_track *x = &a->tracks[0];
	assert_true(x->num_long_dur > 10);
	assert_true(x->cost_width == 2);
	assert_true(x->num_cost_big > 5);
	assert_true(x->num_labels > 300);
	static const size_t sizes[] = {1, 7, 100, 1024, PART_N};
	for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
		struct tp_profile *b = parts_set(sizes[k]);
		/* (names are not string ids here: compared as ids) */
		tp_test_same_track(a, x, b, &b->tracks[0], 0);
		tp_profile_free(b);
	}
	tp_profile_free(a);
}

/* Out of memory while a part interns or while the parts merge: an error (and the profile's
 * oom flag), never a crash or a leak (the sanitizer build checks both). */
static void test_parts_oom(void **state)
{
	(void)state;
	int failed = 0;
	for (long n = 0;; n++) {
		int track;
		struct tp_profile *p = parts_input(&track);
		struct tp_part v[3];
		for (size_t q = 0; q < 3; q++)
			tp_part_open(&v[q], p, track, q * 100, 100, 0);
		tp_alloc_fail_after(n);
		int oom = 0;
		struct tp_slice *s = p->tracks[track].slices;
		for (size_t q = 0; q < 3; q++) {
			for (size_t i = v[q].first; i < v[q].first + v[q].n; i++) {
				uint64_t cyc = (uint64_t)i << 31;
				oom |= tp_part_set_start_cycle(&v[q], &s[i], cyc) != TP_OK;
				oom |= tp_part_set_end(&v[q], &s[i],
				                       s[i].start_ns + ((int64_t)1 << 32)) != TP_OK;
			}
			tp_part_next_gen(&v[q]);
			for (size_t i = v[q].first; i < v[q].first + v[q].n; i++) {
				struct tp_cost c = {.alg_ops = i, .valid = 1};
				oom |= tp_part_set_cost(&v[q], i, &c) != TP_OK;
			}
		}
		int rc = tp_parts_merge(v, 3);
		long made = tp_alloc_fail_after(-1);
		if (rc == TP_OK) {
			/* No allocation failed (a failure is never swallowed): each one has failed
			 * once in the runs before. */
			assert_false(oom);
			assert_true(made <= n);
			for (size_t q = 0; q < 3; q++)
				tp_part_commit(&v[q]);
			assert_int_equal(p->tracks[track].num_long_dur, 300);
			tp_profile_free(p);
			break;
		}
		failed++;
		assert_true(p->oom);
		for (size_t q = 0; q < 3; q++)
			tp_part_free(&v[q]);
		tp_profile_free(p);
	}
	assert_true(failed > 5);
}

#include "tp_test_main.h"
