/*
 * analysis_test.c — checks the summary formulas on a small hand-built two-core profile whose
 * expected values are worked out in the comments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "analysis/analysis.h"

#include <math.h>

static void add(struct tp_profile *p, int tr, uint64_t start, uint32_t cycles, double mhz,
                enum tp_cmd_kind kind, enum tp_dir dir, uint32_t bytes, const char *name)
{
	struct tp_slice *s = tp_track_push(p, tr);
	s->start_cycle = start;
	s->cycles = cycles;
	s->start_ns = tp_cycles_to_ns(start, mhz);
	s->end_ns = tp_cycles_to_ns(start + cycles - 1, mhz);
	s->kind = (uint8_t)kind;
	s->dir = (uint8_t)dir;
	s->bytes = bytes;
	s->name = tp_profile_str(p, name);
}

static void test_two_cores(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	int dev = tp_profile_add_device(p, "dev", 0, 2);
	/* Core 0 at 1000 MHz (1 cycle = 1 ns) so the arithmetic is easy to follow. */
	int t0 = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, NULL, 1000);
	int g0 = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, NULL, 1000);
	int t1 = tp_profile_add_track(p, dev, 1, TP_TRACK_TIU, NULL, 1000);
	add(p, t0, 0, 400, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "conv.normal");      /* 0..399 */
	add(p, t0, 400, 100, 1000, TP_CMD_SYS_WAIT, TP_DIR_NONE, 0, "system.wait_msg");
	add(p, t0, 500, 300, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "conv.normal");    /* ..799 */
	add(p, t0, 800, 1, 1000, TP_CMD_SYS, TP_DIR_NONE, 0, "sys.tr_acc");
	add(p, g0, 100, 200, 1000, TP_CMD_NORMAL, TP_DIR_DDR_TO_LMEM, 4000, "tensorLd"); /* 20 B/cyc */
	add(p, g0, 300, 50, 1000, TP_CMD_SYS_WAIT, TP_DIR_NONE, 0, "sys_wait");
	add(p, g0, 600, 200, 1000, TP_CMD_NORMAL, TP_DIR_LMEM_TO_DDR, 2000, "tensorSt");
	add(p, g0, 850, 150, 1000, TP_CMD_NORMAL, TP_DIR_LMEM_TO_LMEM, 999, "tensorMv"); /* ends 999 */
	add(p, t1, 0, 100, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "mm.normal");
	assert_int_equal(tp_profile_finish(p), TP_OK);

	struct tp_analysis a;
	assert_int_equal(tp_analyze(p, &a), TP_OK);
	/* total = max end 999 - min start 0 */
	assert_int_equal(a.total_time_ns, 999);
	assert_int_equal(a.num_cores, 2);
	const struct tp_core_stats *c0 = tp_analysis_core(&a, dev, 0);
	assert_non_null(c0);
	/* TIU working excludes wait only: 400 + 300 + 1 */
	assert_int_equal(c0->eng[TP_TRACK_TIU].working_cycle, 701);
	/* busy excludes every sys record: 700 */
	assert_int_equal(c0->eng[TP_TRACK_TIU].busy_cycle, 700);
	/* GDMA working = total 600 - wait 50 */
	assert_int_equal(c0->eng[TP_TRACK_GDMA].working_cycle, 550);
	/* DDR: 6000 bytes over 400 cycles (LMEM->LMEM excluded) = 15 GB/s at 1 GHz */
	assert_int_equal(c0->eng[TP_TRACK_GDMA].ddr_bytes, 6000);
	assert_true(fabs(c0->eng[TP_TRACK_GDMA].ddr_avg_gbps - 15.0) < 1e-9);
	assert_true(fabs(c0->eng[TP_TRACK_GDMA].ddr_read_gbps - 20.0) < 1e-9);
	assert_true(fabs(c0->eng[TP_TRACK_GDMA].ddr_write_gbps - 10.0) < 1e-9);
	/* parallelism = (701 + 550) / 999 */
	assert_true(fabs(c0->parallelism - 1251.0 / 999.0) < 1e-12);
	assert_true(fabs(c0->tiu_working_ratio - 701.0 / 999.0) < 1e-12);
	/* concurrency = (701 + 550 - 999) / 550 */
	assert_true(fabs(c0->concurrency - 252.0 / 550.0) < 1e-12);
	/* Overall: Σ numerators / (total × cores) = (1251 + 100) / 1998 */
	assert_true(fabs(a.overall.parallelism - 1351.0 / 1998.0) < 1e-12);
	assert_int_equal(a.overall_tiu_max_cycle, 701);
	/* Top command: conv.normal on core 0 (2 records, 399 + 299 ns). */
	assert_true(a.num_top_cmds >= 5);
	assert_string_equal(tp_str(p, a.top_cmds[0].name), "conv.normal");
	assert_int_equal(a.top_cmds[0].count, 2);
	assert_int_equal(a.top_cmds[0].total_ns, 399 + 299);
	assert_int_equal(a.engine_records[TP_TRACK_GDMA], 4);
	tp_analysis_free(&a);
	tp_profile_free(p);
}

static void test_empty_and_oom(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_analysis a;
	assert_int_equal(tp_analyze(p, &a), TP_OK);
	assert_int_equal(a.total_time_ns, 0);
	assert_int_equal(a.num_cores, 0);
	tp_analysis_free(&a);
	int dev = tp_profile_add_device(p, "dev", 0, 1);
	int t0 = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, NULL, 900);
	add(p, t0, 0, 10, 900, TP_CMD_NORMAL, TP_DIR_NONE, 0, "x");
	tp_profile_finish(p);
	tp_alloc_fail_after(0);
	assert_int_equal(tp_analyze(p, &a), TP_ENOMEM);
	tp_alloc_fail_after(-1);
	tp_profile_free(p);
}

static void test_gbps(void **state)
{
	(void)state;
	/* R core 0 GDMA cmd 2: 101 376 B over 3377 cycles at 750 MHz = 22.5147 GB/s. */
	struct tp_slice s = {.cycles = 3377, .bytes = 101376};
	assert_true(fabs(tp_slice_gbps(&s, 750) - 22.5147) < 5e-4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_cores),
		cmocka_unit_test(test_empty_and_oom),
		cmocka_unit_test(test_gbps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
