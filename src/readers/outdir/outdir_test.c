/*
 * outdir_test.c — unit tests of the output-folder reader: a profile written to profile.db by
 * the SQLite writer comes back with every engine command's fields.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "readers/outdir/outdir.h"
#include "writers/sqlitedb/sqlitedb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Distinct labels that slices of t refer to, label 0 (the empty label every track has)
 * included. */
static size_t labels_used(const struct tp_track *t)
{
	uint8_t *seen = calloc(t->num_labels ? t->num_labels : 1, 1);
	assert_non_null(seen);
	size_t n = 1;
	seen[0] = 1;
	for (size_t i = 0; i < t->count; i++) {
		assert_true(t->slices[i].label < t->num_labels);
		if (!seen[t->slices[i].label]) {
			seen[t->slices[i].label] = 1;
			n++;
		}
	}
	free(seen);
	return n;
}

/* An output folder read back : every engine command's fields (name, function type,
 * direction, bytes, stall, start cycle past 2^32, cycles) come back from profile.db's
 * annotations, and the track's label table holds exactly the labels its slices use. (The
 * reader used to set a label field by field, interning every intermediate combination;
 * tp_profile_finish compacts those away, so this test sees the result, not that waste.) */
static void test_read_output_labels(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->arch = TP_ARCH_BM1688;
	p->source = tp_profile_str(p, "test");
	int dev = tp_profile_add_device(p, "tpu", 0, 1);
	int tr = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, "GDMA", 750);
	assert_true(dev >= 0 && tr >= 0);
	const uint32_t ld = tp_profile_str(p, "tensorLd"), st = tp_profile_str(p, "tensorSt"),
	               ty = tp_profile_str(p, "DMA_tensor");
	enum { N = 600 };
	for (int i = 0; i < N; i++) {
		struct tp_slice *x = tp_track_push(p, tr);
		assert_non_null(x);
		struct tp_track *t = &p->tracks[tr];
		x->start_ns = (int64_t)i * 1000;
		x->cmd_id = (uint32_t)i + 1;
		x->cycles = 375; /* 500 ns at 750 MHz: the sink writes Start Cycle with it */
		assert_int_equal(tp_slice_set_end(p, t, x, x->start_ns + 500), TP_OK);
		struct tp_label l;
		memset(&l, 0, sizeof l);
		l.name = i % 2 ? st : ld;
		l.type = ty;
		l.dir = (uint8_t)(i % 2 ? TP_DIR_LMEM_TO_DDR : TP_DIR_DDR_TO_LMEM);
		l.bytes = 4096 + (uint32_t)(i % 3) * 4096 * (uint32_t)(i % 2 + 1); /* 3 per name */
		l.stall = (uint32_t)i * 7; /* a new value on every command */
		assert_int_equal(tp_slice_set_label(p, t, x, &l), TP_OK);
		assert_int_equal(tp_slice_set_start_cycle(
		                     p, t, x, ((uint64_t)(i >= N / 2) << 32) + (uint64_t)i * 750),
		                 TP_OK);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_analysis a;
	assert_int_equal(tp_analyze(p, &a), TP_OK);
	char dir[] = "/tmp/tp_outdir_test.XXXXXX", db[64];
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof db, "%s/profile.db", dir);
	struct tp_diag d = {0};
	struct tp_sqlitedb_stats stats;
	assert_int_equal(tp_sqlitedb_write_ex(p, &a, db, 1, &stats, &d), TP_OK);
	struct tp_profile *q = NULL;
	int rc = tp_outdir_read(dir, &q, &d);
	unlink(db);
	rmdir(dir);
	assert_int_equal(rc, TP_OK);
	int qt = tp_profile_find_track(q, 0, 0, TP_TRACK_GDMA);
	assert_true(qt >= 0);
	const struct tp_track *t = &q->tracks[qt], *o = &p->tracks[tr];
	assert_int_equal(t->count, N);
	for (int i = 0; i < N; i++) {
		const struct tp_label *x = &t->labels[t->slices[i].label];
		const struct tp_label *y = &o->labels[o->slices[i].label];
		assert_string_equal(tp_str(q, x->name), tp_str(p, y->name));
		assert_string_equal(tp_str(q, x->type), "DMA_tensor");
		assert_int_equal(x->dir, y->dir);
		assert_int_equal(x->bytes, y->bytes);
		assert_int_equal(x->stall, y->stall);
		assert_int_equal(t->slices[i].cycles, 375);
		assert_int_equal(tp_slice_start_cycle(t, &t->slices[i]),
		                 tp_slice_start_cycle(o, &o->slices[i]));
	}
	/* Every label of the table is used: the N distinct stalls (+ label 0), nothing more. */
	assert_int_equal(labels_used(t), N + 1);
	assert_int_equal(t->num_labels, labels_used(t));
	tp_analysis_free(&a);
	tp_profile_free(p);
	tp_profile_free(q);
}

#include "tp_test_main.h"
