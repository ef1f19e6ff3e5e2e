/*
 * capfile_test.c — end-to-end tests of libtpuprof and its reader: each test runs the
 * tpuprof_probe program (tests/tools/capture_probe.c, linked with the static libtpuprof)
 * with a chosen environment in a fresh TPUPROF_DIR, then reads the dump it left with
 * tp_capfile_read and checks what came back. Also: the bad-input and truncation behaviour of
 * the reader on dumps cut at every length, and its error messages for malformed headers.
 * Running the probe and finding its dumps: capfile_test_run.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "capture/capfmt.h"
#include "hexfile.h"
#include "readers/capfile/capfile.h"
#include "readers/capfile/capfile_test.h"
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct tp_arg *arg(const struct tp_profile *p, const struct tp_slice *s,
                                const char *key)
{
	size_t n = 0;
	const struct tp_arg *a = tp_args_get(p, s->args, &n);
	for (size_t i = 0; a && i < n; i++)
		if (strcmp(tp_str(p, a[i].key), key) == 0)
			return &a[i];
	return NULL;
}

static const char *arg_str(const struct tp_profile *p, const struct tp_slice *s, const char *key)
{
	const struct tp_arg *a = arg(p, s, key);
	return a && a->type == TP_ARG_STR ? tp_str(p, a->v.s) : NULL;
}

static int has_note(const struct tp_profile *p, const char *prefix)
{
	for (size_t i = 0; i < p->num_notes; i++)
		if (strncmp(tp_str(p, p->notes[i].text), prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

static size_t count_type(const struct tp_profile *p, const struct tp_track *t, const char *type)
{
	size_t n = 0;
	for (size_t i = 0; i < t->count; i++)
		n += strcmp(tp_str(p, tp_slice_type(t, &t->slices[i])), type) == 0;
	return n;
}

/* ---------------------------------------------------------------------------------------- */

static void test_mode2_details(void **state)
{
	(void)state;
	struct run r;
	run_probe(&r, NULL, "basic", "2");
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_string_equal(read_text(r.out), "done\n");
	struct tp_profile *p = read_only_dump(&r);
	assert_int_equal(p->arch, TP_ARCH_CPU);
	assert_int_equal(p->num_devices, 1);
	assert_int_equal(p->devices[0].id, (int32_t)r.pid);
	assert_int_equal(p->num_tracks, 1);
	const struct tp_track *t = &p->tracks[0];
	assert_int_equal(t->kind, TP_TRACK_THREAD);
	assert_int_equal(t->tid, (int64_t)r.pid); /* the main thread */
	/* 3 iterations x (activity, runtime, step, 2 ops) */
	assert_int_equal(t->count, 15);
	assert_int_equal(count_type(p, t, TP_CAP_TYPE_OP), 6);
	assert_int_equal(count_type(p, t, TP_CAP_TYPE_STEP), 3);
	int seen_mm = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		assert_true(tp_slice_end(t, s) >= s->start_ns);
		if (strcmp(tp_str(p, tp_slice_type(t, s)), TP_CAP_TYPE_STEP) == 0) {
			assert_string_equal(tp_str(p, tp_slice_name(t, s)), "bert");
			assert_string_equal(arg_str(p, s, TP_CAP_KEY_GRAPH), "bert");
			int64_t step = arg(p, s, TP_CAP_KEY_STEP)->v.i;
			assert_int_equal(arg(p, s, TP_CAP_KEY_WARMUP)->v.i, step == 0);
		}
		if (strcmp(tp_str(p, tp_slice_name(t, s)), "encoder.0.qkv") == 0) {
			seen_mm++;
			assert_int_equal(tp_slice_depth(t, s), 1);
			assert_string_equal(arg_str(p, s, TP_CAP_KEY_OP_TYPE), "MatMul");
			assert_string_equal(arg_str(p, s, TP_CAP_KEY_POST_OP), "gelu");
			assert_string_equal(arg_str(p, s, TP_CAP_KEY_INPUT_SHAPES), "1x128x256");
			assert_string_equal(arg_str(p, s, TP_CAP_KEY_INPUT_DTYPES), "fp32");
			assert_string_equal(arg_str(p, s, TP_CAP_KEY_OUTPUTS), "y");
			assert_string_equal(arg_str(p, s, TP_CAP_KEY_WEIGHT_SHAPE), "256x256");
			assert_string_equal(arg_str(p, s, "attr.transpose_b"), "1");
			assert_int_equal(arg(p, s, TP_CAP_KEY_FLOPS)->v.u, 2ull * 128 * 256 * 256);
			assert_true(arg(p, s, TP_CAP_KEY_WEIGHT_SPARSITY)->v.d == 0.25);
			int64_t step = arg(p, s, TP_CAP_KEY_STEP)->v.i;
			assert_true(step >= 0 && step <= 2);
			assert_int_equal(arg(p, s, TP_CAP_KEY_WARMUP)->v.i, step == 0);
		}
		if (strcmp(tp_str(p, tp_slice_type(t, s)), TP_CAP_TYPE_ACTIVITY) == 0) {
			char want[32];
			snprintf(want, sizeof want, "batch %lld",
			         (long long)arg(p, s, TP_CAP_KEY_STEP)->v.i);
			assert_string_equal(arg_str(p, s, TP_CAP_KEY_META), want);
		}
	}
	assert_int_equal(seen_mm, 3);
	assert_int_equal(p->num_counters, 1);
	assert_string_equal(tp_str(p, p->counters[0].name), "queue_depth");
	assert_int_equal(p->counters[0].count, 3);
	assert_true(p->counters[0].samples[2].value == 2.5);
	assert_int_equal(p->stats.records_dropped, 0);
	assert_int_equal(p->num_notes, 0);
	/* tpuprof_meta: the later value of a key wins; rejected calls left no trace. */
	assert_string_equal(tp_profile_get_meta(p, "batch_size"), "8");
	assert_string_equal(tp_profile_get_meta(p, "model"), "probe \"net\"");
	assert_null(tp_profile_get_meta(p, "a_key_that_is_far_too_long_for_the_table"));
	tp_profile_free(p);
}

static void test_hwcounters(void **state)
{
	(void)state;
	struct run r;
	run_probe_with(&r, "TPUPROF_HWCOUNTERS=1", "basic", "2");
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	struct tp_profile *p = read_only_dump(&r);
	const char *kind = tp_profile_get_meta(p, "hw_counters");
	assert_non_null(kind);
	if (strcmp(kind, "none") == 0) {
		printf("SKIPPED: test_hwcounters: perf_event_open is not permitted here "
		       "(hw_counters=none was recorded, as it should be)\n");
		tp_profile_free(p);
		return;
	}
	int hw = strcmp(kind, "hardware") == 0;
	assert_true(hw || strcmp(kind, "software") == 0);
	const char *first = hw ? "hw.cycles" : "hw.task_clock_ns";
	const char *second = hw ? "hw.instructions" : "hw.page_faults";
	const struct tp_track *t = &p->tracks[0];
	size_t ops = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (strcmp(tp_str(p, tp_slice_type(t, s)), TP_CAP_TYPE_OP) != 0)
			continue;
		ops++;
		const struct tp_arg *a = arg(p, s, first);
		assert_non_null(a);
		assert_non_null(arg(p, s, second));
		/* the matmul loop runs for microseconds: the first counter cannot be 0 */
		if (strcmp(tp_str(p, tp_slice_name(t, s)), "encoder.0.qkv") == 0)
			assert_true(a->v.u > 0);
	}
	assert_int_equal(ops, 6);
	printf("hw counters: %s\n", kind);
	tp_profile_free(p);
}

static void test_mode0_mode1(void **state)
{
	(void)state;
	struct run r;
	struct tp_profile *p = probe_dump(&r, NULL, "basic", "0");
	const struct tp_track *t = &p->tracks[0];
	assert_int_equal(t->count, 15);
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		/* Mode 0: times only — names fall back to the slice type, no op_type. */
		assert_string_equal(tp_str(p, tp_slice_name(t, s)), tp_str(p, tp_slice_type(t, s)));
		assert_null(arg(p, s, TP_CAP_KEY_OP_TYPE));
		assert_null(arg(p, s, TP_CAP_KEY_META));
	}
	assert_int_equal(p->num_counters, 0);
	tp_profile_free(p);

	p = probe_dump(&r, NULL, "basic", "1");
	t = &p->tracks[0];
	assert_int_equal(t->count, 15);
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (strcmp(tp_str(p, tp_slice_type(t, s)), TP_CAP_TYPE_OP) != 0)
			continue;
		assert_non_null(arg_str(p, s, TP_CAP_KEY_OP_TYPE));
		assert_null(arg(p, s, TP_CAP_KEY_INPUT_SHAPES)); /* mode 2 only */
	}
	assert_int_equal(p->num_counters, 1); /* counters need names: modes 1 and 2 */
	tp_profile_free(p);
}

static void test_overflow_drops(void **state)
{
	(void)state;
	struct run r;
	static const char *const env[] = {NULL};
	struct tp_profile *p = probe_dump(&r, env, "overflow", NULL);
	const struct tp_track *t = &p->tracks[0];
	/* 100 records: the step (2) and 49 op pairs fit; 951 pairs = 1902 records drop. */
	assert_int_equal(t->count, 50);
	assert_int_equal(count_type(p, t, TP_CAP_TYPE_STEP), 1);
	assert_int_equal(t->dropped, 1902);
	assert_int_equal(p->stats.records_dropped, 1902);
	assert_int_equal(p->stats.records_read, 100);
	assert_true(has_note(p, "capture dropped 1902 records"));
	assert_false(has_note(p, "dump truncated"));
	/* nothing corrupted: every op sits inside the step and carries its index */
	const struct tp_slice *step = &t->slices[0];
	assert_string_equal(tp_str(p, tp_slice_type(t, step)), TP_CAP_TYPE_STEP);
	for (size_t i = 1; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		assert_string_equal(tp_str(p, tp_slice_name(t, s)), "encoder.0.softmax");
		assert_true(s->start_ns >= step->start_ns &&
		            tp_slice_end(t, s) <= tp_slice_end(t, step));
		assert_int_equal(arg(p, s, TP_CAP_KEY_STEP)->v.i, 0);
	}
	tp_profile_free(p);
}

static void test_banana(void **state)
{
	(void)state;
	struct run r;
	run_probe_with(&r, "TPUPROF=banana", "auto", NULL);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_string_equal(read_text(r.out), "done\n");
	const char *err = read_text(r.err);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "TPUPROF=banana"));
	char dirs[2][512];
	assert_int_equal(dump_dirs(&r, dirs, 2), 0); /* off: no dump */

	/* TPUPROF=off is off, silently; TPUPROF=0 is mode 0, as TPUPROF_MODE_TIMING in the API
	 * (the numbers mean the same in both); TPUPROF=1 is mode 1. */
	run_probe_with(&r, "TPUPROF=off", "auto", NULL);
	assert_string_equal(read_text(r.err), "");
	assert_int_equal(dump_dirs(&r, dirs, 2), 0);
	run_probe_with(&r, "TPUPROF=0", "auto", NULL);
	assert_string_equal(read_text(r.err), "");
	assert_int_equal(dump_dirs(&r, dirs, 2), 1);
	struct tp_profile *p0 = read_only_dump(&r);
	assert_string_equal(tp_profile_get_meta(p0, "capture_mode"), "0 (timing)");
	tp_profile_free(p0);
	run_probe_with(&r, "TPUPROF=1", "auto", NULL);
	assert_int_equal(dump_dirs(&r, dirs, 2), 1);
}

static void test_unwritable_dir(void **state)
{
	(void)state;
	struct run r;
	probe_dir(&r);
	/* A path below a regular file cannot be created, even by root. */
	char file[300], var[400];
	snprintf(file, sizeof file, "%s/plainfile", r.dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(var, sizeof var, "TPUPROF_DIR=%s/sub", file);
	const char *env[] = {var, "TPUPROF=1", NULL};
	probe_start(&r, env, "basic", "1");
	probe_wait(&r);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	const char *out = read_text(r.out);
	/* the program kept running to its end */
	assert_non_null(strstr(out, "done\n"));
	const char *err = read_text(r.err);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "cannot create TPUPROF_DIR"));
}

static void test_sigterm(void **state)
{
	(void)state;
	struct run r;
	probe_dir(&r);
	static const char *const env[] = {"TPUPROF=1", NULL};
	probe_start(&r, env, "sigterm", NULL);
	wait_ready(&r);
	kill(r.pid, SIGTERM);
	probe_wait(&r);
	/* the default action still happens after the dump is written */
	assert_true(WIFSIGNALED(r.status));
	assert_int_equal(WTERMSIG(r.status), SIGTERM);
	struct tp_profile *p = read_only_dump(&r);
	assert_false(has_note(p, "dump truncated"));
	const struct tp_track *t = &p->tracks[0];
	assert_true(count_type(p, t, TP_CAP_TYPE_STEP) >= 50);
	tp_profile_free(p);

	/* The application's own handler is still called (and here ends the program). */
	probe_dir(&r);
	probe_start(&r, NULL, "sigterm_app", NULL);
	wait_ready(&r);
	kill(r.pid, SIGTERM);
	probe_wait(&r);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_non_null(strstr(read_text(r.out), "handler called\ndone\n"));
	p = read_only_dump(&r);
	assert_false(has_note(p, "dump truncated"));
	assert_true(count_type(p, &p->tracks[0], TP_CAP_TYPE_STEP) >= 50);
	tp_profile_free(p);
}

static void test_fork_and_sessions(void **state)
{
	(void)state;
	struct run r;
	run_probe(&r, NULL, "fork", NULL);
	char dirs[4][512];
	assert_int_equal(dump_dirs(&r, dirs, 4), 2);
	int child = 0;
	assert_int_equal(sscanf(read_text(r.out), "child %d", &child), 1);
	for (int k = 0; k < 2; k++) {
		struct tp_profile *p = NULL;
		struct tp_diag d = {0};
		assert_int_equal(tp_capfile_read(dirs[k], &p, &d), TP_OK);
		int is_child = p->devices[0].id == child;
		assert_true(is_child || p->devices[0].id == (int32_t)r.pid);
		const struct tp_track *t = &p->tracks[0];
		/* the child never re-writes the parent's records, and vice versa */
		assert_int_equal(t->count, is_child ? 1 : 2);
		for (size_t i = 0; i < t->count; i++)
			assert_string_equal(tp_str(p, tp_slice_name(t, &t->slices[i])),
			                    is_child ? "child_op" : "parent_op");
		tp_profile_free(p);
	}

	run_probe(&r, NULL, "sessions", NULL);
	assert_int_equal(dump_dirs(&r, dirs, 4), 2);
	char want[128];
	snprintf(want, sizeof want, "/tpuprof_data_dev3-0.%d", (int)r.pid);
	assert_non_null(strstr(dirs[0], want));
	snprintf(want, sizeof want, "/tpuprof_data_dev3-1.%d", (int)r.pid);
	assert_non_null(strstr(dirs[1], want));
}

static void test_threads(void **state)
{
	(void)state;
	struct run r;
	run_probe(&r, NULL, "threads", "8");
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	struct tp_profile *p = read_only_dump(&r);
	assert_int_equal(p->num_tracks, 8);
	for (size_t k = 0; k < 8; k++) {
		assert_int_equal(p->tracks[k].count, 20001);
		assert_int_equal(p->tracks[k].dropped, 0);
		for (size_t j = 0; j < k; j++)
			assert_true(p->tracks[j].tid != p->tracks[k].tid);
	}
	assert_int_equal(p->stats.records_read, 8 * 40002);
	tp_profile_free(p);
}

/* ---- reader robustness on bytes ---- */

/* How many records the whole dump b[0..n) holds (it must parse). */
static uint64_t records_in(const uint8_t *b, size_t n)
{
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	assert_int_equal(tp_capfile_parse(b, n, "x", &p, &d), TP_OK);
	uint64_t total = p->stats.records_read;
	tp_profile_free(p);
	return total;
}

static void test_truncated(void **state)
{
	(void)state;
	size_t n;
	uint8_t *full = probe_capture(NULL, "basic", "2", &n);
	uint64_t total = records_in(full, n);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int noted = 0;
	for (size_t cut = 0; cut < n; cut++) {
		/* a fresh heap copy, so ASan sees any read past the cut */
		uint8_t *b = malloc(cut ? cut : 1);
		memcpy(b, full, cut);
		memset(&d, 0, sizeof d);
		int rc = tp_capfile_parse(b, cut, "cut.tpp", &p, &d);
		if (cut < TP_CAPFMT_HEADER_SIZE) {
			assert_int_not_equal(rc, TP_OK);
			assert_non_null(strstr(d.msg, "cut.tpp@0x"));
		} else {
			assert_int_equal(rc, TP_OK);
			/* says how much is missing, and that plus what was read is everything */
			int found = 0;
			for (size_t i = 0; i < p->num_notes; i++) {
				unsigned long long lost;
				if (sscanf(tp_str(p, p->notes[i].text),
				           "dump truncated: %llu records lost", &lost) == 1) {
					assert_int_equal(lost + p->stats.records_read, total);
					found = 1;
				}
			}
			assert_true(found || has_note(p, "dump truncated"));
			noted += found;
			tp_profile_free(p);
		}
		free(b);
	}
	assert_true(noted > 0);

	/* A dump whose process died before any flush (header only). */
	memset(&d, 0, sizeof d);
	uint8_t hdr[TP_CAPFMT_HEADER_SIZE];
	memcpy(hdr, full, sizeof hdr);
	memset(hdr + TP_CAPFMT_OFF_TICK1, 0, 16);
	assert_int_equal(tp_capfile_parse(hdr, sizeof hdr, "h.tpp", &p, &d), TP_OK);
	assert_true(has_note(p, "dump truncated: the process ended before"));
	tp_profile_free(p);
	free(full);
}

/* A dump with drops cut at every offset: records_dropped is always the dropped count the
 * notes give plus the records the truncation lost (it used to miss the drops of a thread
 * whose block was cut off). */
static void test_truncated_drops(void **state)
{
	(void)state;
	static const char *const env[] = {NULL};
	size_t n;
	uint8_t *full = probe_capture(env, "overflow", NULL, &n);
	for (size_t cut = TP_CAPFMT_HEADER_SIZE; cut <= n; cut++) {
		struct tp_profile *p = NULL;
		struct tp_diag d = {0};
		assert_int_equal(tp_capfile_parse(full, cut, "cut.tpp", &p, &d), TP_OK);
		unsigned long long dropped = 0, lost = 0;
		for (size_t i = 0; i < p->num_notes; i++) {
			const char *t = tp_str(p, p->notes[i].text);
			sscanf(t, "capture dropped %llu records", &dropped);
			sscanf(t, "dump truncated: %llu records lost", &lost);
		}
		if (dropped)
			assert_int_equal(p->stats.records_dropped, dropped + lost);
		tp_profile_free(p);
	}
	free(full);
}

/* A process that dies (abort) leaves its live files; the reader rebuilds the dump from them
 * with a "process died" note, and a damaged live file is an error with path@offset. */
static void test_recovery(void **state)
{
	(void)state;
	struct run r;
	struct tp_profile *p = probe_dump(&r, NULL, "die", "abort");
	char dirs[2][512], path[600];
	assert_int_equal(dump_dirs(&r, dirs, 2), 1);
	struct tp_diag d = {0};
	int rc;
	assert_true(has_note(p, "process died before the capture was finalised: 6000 records"));
	assert_int_equal(p->stats.records_read, 6000);
	/* the dynamic names (one reused buffer) came out by value: call_0 .. call_7 */
	int seen[8] = {0};
	for (size_t i = 0; i < p->tracks[0].count; i++) {
		const char *nm = tp_str(p, tp_slice_name(&p->tracks[0], &p->tracks[0].slices[i]));
		int k;
		if (sscanf(nm, "call_%d", &k) == 1 && k >= 0 && k < 8)
			seen[k] = 1;
	}
	for (int k = 0; k < 8; k++)
		assert_true(seen[k]);
	tp_profile_free(p);
	/* The same files held in memory (the fuzzer's entry point) give the same dump; a
	 * session file cut short is an error with path@offset. */
	size_t nses = 0, nthr = 0;
	snprintf(path, sizeof path, "%s/session.tpc", dirs[0]);
	uint8_t *ses = load_file(path, &nses);
	snprintf(path, sizeof path, "%s/thread-0.tpc", dirs[0]);
	uint8_t *thr = load_file(path, &nthr);
	struct tp_capfile_live live = {"thread-0.tpc", thr, nthr};
	memset(&d, 0, sizeof d);
	rc = tp_capfile_rebuild_parse(ses, nses, "session.tpc", &live, 1, &p, &d);
	if (rc != TP_OK)
		fail_msg("%s", d.msg);
	assert_int_equal(p->stats.records_read, 6000);
	assert_true(has_note(p, "process died before the capture was finalised: 6000 records"));
	tp_profile_free(p);
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_capfile_rebuild_parse(ses, 100, "session.tpc", &live, 1, &p, &d),
	                 TP_ETRUNC);
	assert_null(p);
	assert_non_null(strstr(d.msg, "session.tpc@0x64"));
	free(ses);
	free(thr);
	/* Files of threads that were starting when the process died (never filled): skipped,
	 * with a note; the rest still converts. */
	snprintf(path, sizeof path, "%s/thread-9.tpc", dirs[0]);
	FILE *e = fopen(path, "wb");
	assert_non_null(e);
	fclose(e);
	snprintf(path, sizeof path, "%s/thread-10.tpc", dirs[0]);
	e = fopen(path, "wb");
	assert_non_null(e);
	static const uint8_t zeros[TP_CAPFMT_CHUNK_HEADER];
	fwrite(zeros, 1, sizeof zeros, e);
	fclose(e);
	memset(&d, 0, sizeof d);
	rc = tp_capfile_read(dirs[0], &p, &d);
	if (rc != TP_OK)
		fail_msg("%s", d.msg);
	assert_int_equal(p->stats.records_read, 6000);
	assert_true(has_note(p, "2 live thread files were empty"));
	tp_profile_free(p);
	/* Claim more published records than the file holds. */
	snprintf(path, sizeof path, "%s/thread-0.tpc", dirs[0]);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, TP_CAPFMT_CK_OFF_PUB, SEEK_SET);
	uint64_t big = 1ull << 40;
	fwrite(&big, 8, 1, f);
	fclose(f);
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_capfile_read(dirs[0], &p, &d), TP_EFORMAT);
	assert_non_null(strstr(d.msg, "thread-0.tpc@0x40"));
}

static const struct tp_slice *find_slice(const struct tp_profile *p, const char *name,
                                         const struct tp_track **tr)
{
	for (size_t k = 0; k < p->num_tracks; k++)
		for (size_t i = 0; i < p->tracks[k].count; i++)
			if (strcmp(tp_str(p, tp_slice_name(&p->tracks[k], &p->tracks[k].slices[i])),
			           name) == 0) {
				if (tr)
					*tr = &p->tracks[k];
				return &p->tracks[k].slices[i];
			}
	return NULL;
}

static int64_t arg_int(const struct tp_profile *p, const struct tp_slice *s, const char *key)
{
	const struct tp_arg *a = arg(p, s, key);
	assert_non_null(a);
	return a->type == TP_ARG_UINT ? (int64_t)a->v.u : a->v.i;
}

/* Dump text that is not valid UTF-8 (another writer, damage) enters the model cleaned: the
 * invalid byte becomes U+FFFD. */
static void test_reader_utf8(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = probe_capture(NULL, "basic", "1", &n);
	uint8_t *hit = NULL;
	for (size_t i = 0; i + 9 < n && !hit; i++)
		if (memcmp(b + i, "data_prep", 10) == 0)
			hit = b + i;
	assert_non_null(hit);
	hit[4] = 0xff; /* "data\xffprep" */
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	assert_int_equal(tp_capfile_parse(b, n, "x.tpp", &p, &d), TP_OK);
	assert_non_null(find_slice(p, "data\xef\xbf\xbdprep", NULL));
	assert_null(find_slice(p, "data_prep", NULL));
	tp_profile_free(p);
	free(b);
}

/* TPUPROF_CRASHSAFE=0: private buffers reused across sessions; the dumps are the same. */
static void test_not_crashsafe(void **state)
{
	(void)state;
	struct run r;
	run_probe_with(&r, "TPUPROF_CRASHSAFE=0", "sessions", NULL);
	char dirs[3][512];
	assert_int_equal(dump_dirs(&r, dirs, 3), 2);
	for (int k = 0; k < 2; k++) {
		struct tp_profile *p = NULL;
		struct tp_diag d = {0};
		assert_int_equal(tp_capfile_read(dirs[k], &p, &d), TP_OK);
		assert_int_equal(p->tracks[0].count, 1);
		assert_int_equal(p->num_notes, 0);
		tp_profile_free(p);
	}
	run_probe_with(&r, "TPUPROF_CRASHSAFE=0", "basic", "2");
	struct tp_profile *p = read_only_dump(&r);
	assert_int_equal(p->tracks[0].count, 15);
	tp_profile_free(p);
}

/* Marks, ranges, async ranges across threads, thread names, attribute structs of an older
 * size, a zero-initialised op detail (nothing reported as measured), the version. */
static void test_api(void **state)
{
	(void)state;
	struct run r;
	run_probe(&r, NULL, "api", NULL);
	assert_non_null(strstr(read_text(r.out), "version "
	                                         "0.2.0"));
	struct tp_profile *p = read_only_dump(&r);
	const struct tp_track *tr = NULL;
	const struct tp_slice *m = find_slice(p, "start", &tr);
	assert_non_null(m);
	assert_string_equal(tp_str(p, tr->name), "main-\xc3\xa9-a-very-"); /* 15 bytes */
	assert_string_equal(tp_str(p, tp_slice_type(tr, m)), TP_CAP_TYPE_MARK);
	assert_int_equal(tp_slice_end(tr, m), m->start_ns);
	assert_string_equal(arg_str(p, m, TP_CAP_KEY_CATEGORY), "io");
	assert_string_equal(arg_str(p, m, TP_CAP_KEY_COLOR), "#ff0000");
	assert_string_equal(arg_str(p, m, TP_CAP_KEY_SRC_FILE), "probe.c");
	assert_int_equal(arg_int(p, m, TP_CAP_KEY_SRC_LINE), 123);
	assert_string_equal(arg_str(p, m, TP_CAP_KEY_SRC_FUNC), "api");
	const struct tp_slice *sm = find_slice(p, "small", NULL);
	assert_non_null(sm);
	assert_string_equal(arg_str(p, sm, TP_CAP_KEY_COLOR), "#0000ff");
	assert_null(arg(p, sm, TP_CAP_KEY_CATEGORY));
	const struct tp_slice *rg = find_slice(p, "load", &tr);
	assert_non_null(rg);
	assert_string_equal(tp_str(p, tp_slice_type(tr, rg)), TP_CAP_TYPE_RANGE);
	assert_true(tp_slice_end(tr, rg) > rg->start_ns);
	assert_null(arg(p, rg, TP_CAP_KEY_CUT));
	/* async: 42 begun on main, ended on "ender"; 43 overlaps it (second lane); 7 cut */
	int seen42 = 0, seen43 = 0, seen7 = 0;
	size_t lanes = 0;
	for (size_t k = 0; k < p->num_tracks; k++) {
		if (strncmp(tp_str(p, p->tracks[k].name), "async ranges", 12) != 0)
			continue;
		lanes++;
		for (size_t i = 0; i < p->tracks[k].count; i++) {
			const struct tp_slice *s = &p->tracks[k].slices[i];
			assert_string_equal(tp_str(p, tp_slice_type(&p->tracks[k], s)),
			                    TP_CAP_TYPE_ASYNC);
			int64_t id = arg_int(p, s, TP_CAP_KEY_ASYNC_ID);
			if (id == 42) {
				seen42 = 1;
				assert_int_not_equal(arg_int(p, s, TP_CAP_KEY_BEGIN_TID),
				                     arg_int(p, s, TP_CAP_KEY_END_TID));
				assert_string_equal(arg_str(p, s, TP_CAP_KEY_CATEGORY), "io");
			} else if (id == 43) {
				seen43 = 1;
			} else if (id == 7) {
				seen7 = 1;
				assert_int_equal(arg_int(p, s, TP_CAP_KEY_CUT), 1);
				assert_int_equal(arg_int(p, s, TP_CAP_KEY_END_TID), -1);
			}
		}
	}
	assert_true(seen42 && seen43 && seen7);
	assert_int_equal(lanes, 2);
	const struct tp_slice *op = find_slice(p, "encoder.0.softmax", NULL);
	assert_non_null(op);
	assert_null(arg(p, op, TP_CAP_KEY_BYTES));
	assert_null(arg(p, op, TP_CAP_KEY_FLOPS));
	assert_null(arg(p, op, TP_CAP_KEY_WEIGHT_SPARSITY));
	tp_profile_free(p);
}

/* The op detail structs grow without breaking the ABI: an older caller's smaller struct is
 * read only as far as its size (the 0xff bytes after it would read as bytes/flops), a newer
 * caller's larger elements are stepped through by their sizes, and tensor fields a short
 * element size does not cover are left out. */
static void test_detail_abi(void **state)
{
	(void)state;
	struct run r;
	run_probe(&r, NULL, "detail_abi", NULL);
	assert_string_equal(read_text(r.out), "done\n");
	struct tp_profile *p = read_only_dump(&r);
	const struct tp_slice *o = find_slice(p, "old_caller", NULL);
	assert_non_null(o);
	assert_string_equal(arg_str(p, o, TP_CAP_KEY_INPUTS), "a");
	assert_string_equal(arg_str(p, o, TP_CAP_KEY_INPUT_SHAPES), "2x3");
	assert_string_equal(arg_str(p, o, TP_CAP_KEY_INPUT_DTYPES), "int8");
	assert_null(arg(p, o, TP_CAP_KEY_BYTES));
	assert_null(arg(p, o, TP_CAP_KEY_FLOPS));
	assert_null(arg(p, o, TP_CAP_KEY_WEIGHT_SPARSITY));
	const struct tp_slice *n = find_slice(p, "new_caller", NULL);
	assert_non_null(n);
	assert_string_equal(arg_str(p, n, TP_CAP_KEY_INPUTS), "p;q");
	assert_string_equal(arg_str(p, n, TP_CAP_KEY_INPUT_SHAPES), "2x3;4x5");
	assert_string_equal(arg_str(p, n, TP_CAP_KEY_INPUT_DTYPES), "fp16;bf16");
	assert_string_equal(arg_str(p, n, "attr.k1"), "v1");
	assert_string_equal(arg_str(p, n, "attr.k2"), "v2");
	assert_int_equal(arg(p, n, TP_CAP_KEY_BYTES)->v.u, 1234);
	const struct tp_slice *sh = find_slice(p, "short_tensors", NULL);
	assert_non_null(sh);
	assert_string_equal(arg_str(p, sh, TP_CAP_KEY_INPUTS), "a");
	assert_string_equal(arg_str(p, sh, TP_CAP_KEY_INPUT_DTYPES), "int8");
	const struct tp_arg *shp = arg(p, sh, TP_CAP_KEY_INPUT_SHAPES);
	assert_true(shp == NULL || strcmp(tp_str(p, shp->v.s), "") == 0 ||
	            strcmp(tp_str(p, shp->v.s), "scalar") == 0);
	tp_profile_free(p);
}

/* The hand-written fixture: every value below is computed by hand from its comments. */
static void test_fixture(void **state)
{
	(void)state;
	uint8_t *b = NULL;
	size_t n = 0;
	assert_int_equal(
	    tp_test_hex_load(tp_test_source_path("tests/fixtures/capfile/mini.tpp.hex"), &b, &n),
	    0);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_capfile_parse(b, n, "mini.tpp", &p, &d);
	if (rc != TP_OK)
		fail_msg("%s", d.msg);
	assert_string_equal(tp_str(p, p->devices[0].name), "mini (pid 777)");
	assert_string_equal(tp_profile_get_meta(p, "capture_device"), "1");
	assert_string_equal(tp_profile_get_meta(p, "capture_mode"), "2 (detailed)");
	assert_int_equal(p->num_tracks, 1);
	const struct tp_track *t = &p->tracks[0];
	assert_string_equal(tp_str(p, t->name), "worker");
	assert_int_equal(t->tid, 4242);
	assert_int_equal(t->dropped, 3);
	assert_int_equal(p->stats.records_dropped, 3);
	assert_int_equal(p->stats.records_read, 10);
	assert_true(has_note(p, "capture dropped 3 records"));
	assert_int_equal(t->count, 2);
	const struct tp_slice *step = &t->slices[0], *op = &t->slices[1];
	assert_int_equal(step->start_ns, 0); /* earliest event (tick 2000) */
	assert_int_equal(tp_slice_end(t, step), 4000);
	assert_string_equal(tp_str(p, tp_slice_type(t, step)), TP_CAP_TYPE_STEP);
	assert_string_equal(arg_str(p, step, TP_CAP_KEY_GRAPH), "bert");
	assert_int_equal(arg(p, step, TP_CAP_KEY_STEP)->v.i, 5);
	assert_int_equal(arg(p, step, TP_CAP_KEY_WARMUP)->v.i, 1);
	assert_int_equal(op->start_ns, 500);
	assert_int_equal(tp_slice_end(t, op), 2500);
	assert_int_equal(tp_slice_depth(t, op), 1);
	assert_string_equal(tp_str(p, tp_slice_name(t, op)), "encoder.0.qkv");
	assert_string_equal(arg_str(p, op, TP_CAP_KEY_OP_TYPE), "MatMul");
	assert_string_equal(arg_str(p, op, TP_CAP_KEY_POST_OP), "gelu");
	assert_int_equal(arg(p, op, TP_CAP_KEY_STEP)->v.i, 5);
	assert_int_equal(arg(p, op, TP_CAP_KEY_WARMUP)->v.i, 1);
	assert_string_equal(arg_str(p, op, TP_CAP_KEY_INPUTS), "x");
	assert_string_equal(arg_str(p, op, TP_CAP_KEY_INPUT_SHAPES), "1x128x256");
	assert_string_equal(arg_str(p, op, TP_CAP_KEY_INPUT_DTYPES), "fp32");
	assert_null(arg(p, op, TP_CAP_KEY_OUTPUTS));
	assert_string_equal(arg_str(p, op, "attr.alpha"), "0.5");
	assert_int_equal(arg(p, op, TP_CAP_KEY_BYTES)->v.u, 1000);
	assert_int_equal(arg(p, op, TP_CAP_KEY_FLOPS)->v.u, 2000);
	assert_int_equal(p->num_counters, 1);
	assert_int_equal(p->counters[0].count, 1);
	assert_int_equal(p->counters[0].samples[0].ts_ns, 3000);
	assert_true(p->counters[0].samples[0].value == 2.5);
	tp_profile_free(p);

	/* Shapes are formatted in full for any int64 dimension: the first DIMS record (1, 128)
	 * becomes (INT64_MIN, -1). */
	{
		size_t at = 0;
		for (size_t o = n - 16 - 16 - 10 * 32; o + 32 <= n - 32; o += 32)
			if (b[o + 8] == TP_CAPFMT_REC_DIMS) {
				at = o;
				break;
			}
		assert_true(at != 0);
		uint8_t keep[16];
		memcpy(keep, b + at + 16, 16);
		memset(b + at + 16, 0, 16);
		b[at + 23] = 0x80;            /* a = INT64_MIN */
		memset(b + at + 24, 0xff, 8); /* b = -1 */
		memset(&d, 0, sizeof d);
		assert_int_equal(tp_capfile_parse(b, n, "dims.tpp", &p, &d), TP_OK);
		assert_string_equal(arg_str(p, &p->tracks[0].slices[1], TP_CAP_KEY_INPUT_SHAPES),
		                    "-9223372036854775808x-1x256");
		tp_profile_free(p);
		memcpy(b + at + 16, keep, 16);
	}

	/* Cut inside the RECORDS block after 7 whole records and 5 bytes of the 8th. */
	size_t recs = n - 16 - 16 - 10 * 32; /* END block and RECORDS payload from the end */
	size_t cut = recs + 7 * 32 + 5;
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_capfile_parse(b, cut, "cut.tpp", &p, &d), TP_OK);
	assert_true(has_note(p, "dump truncated: 3 records lost"));
	assert_int_equal(p->stats.records_read, 7);
	assert_int_equal(p->stats.records_dropped, 3 + 3);
	/* the step never ended in the file: it ends at the dump time (tick 9000) */
	assert_int_equal(tp_slice_end(&p->tracks[0], &p->tracks[0].slices[0]), 7000);
	assert_true(has_note(p, "1 scopes were still open"));
	tp_profile_free(p);
	free(b);
}

static void test_bad_input(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = probe_capture(NULL, "basic", "1", &n);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};

	b[0] ^= 0xff;
	assert_int_equal(tp_capfile_parse(b, n, "m.tpp", &p, &d), TP_EFORMAT);
	assert_null(p);
	assert_string_equal(d.msg, "m.tpp@0x0: not a tpuprof capture (bad magic)");
	b[0] ^= 0xff;

	memset(&d, 0, sizeof d);
	b[TP_CAPFMT_OFF_VERSION] = 2;
	assert_int_equal(tp_capfile_parse(b, n, "v.tpp", &p, &d), TP_EUNSUPPORTED);
	assert_string_equal(d.msg, "v.tpp@0x8: capture format version 2 (this tpuprof reads 1)");
	b[TP_CAPFMT_OFF_VERSION] = 1;

	/* The first record's name id is out of range: find the RECORDS block. */
	size_t off = TP_CAPFMT_HEADER_SIZE;
	while (off + 16 <= n && tp_le32(b + off) != TP_CAPFMT_BLK_RECORDS)
		off += 16 + (size_t)tp_le64(b + off + 8);
	assert_true(off + 16 + 32 <= n);
	size_t rec = off + 16;
	b[rec + 12] = 0xee;
	b[rec + 13] = 0xee;
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_capfile_parse(b, n, "s.tpp", &p, &d), TP_EFORMAT);
	char want[64];
	snprintf(want, sizeof want, "s.tpp@0x%zx: string id %u out of range", rec + 12, 0xeeeeu);
	assert_true(strncmp(d.msg, want, strlen(want)) == 0);
	free(b);

	/* missing dump */
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_capfile_read("/nonexistent-dir/x", &p, &d), TP_ENOTFOUND);
	assert_false(tp_capfile_probe("/nonexistent-dir"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#include "tp_test_cases.h"
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	if (failed == 0)
		probe_cleanup();
	return failed;
}
