/*
 * analysis_test.c — checks the summary formulas on a small hand-built two-core profile whose
 * expected values are worked out in the comments, and the TIU cost aggregates against the
 * vendor's own per-command figures (../shared reference tiuRegInfo_*.txt) and its summary
 * numbers (PROVENANCE.txt); the layer ranking, made in parts on threads, against one sort.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "analysis/analysis.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(struct tp_profile *p, int tr, uint64_t start, uint32_t cycles, double mhz,
                enum tp_cmd_kind kind, enum tp_dir dir, uint32_t bytes, const char *name)
{
	struct tp_slice *s = tp_track_push(p, tr);
	tp_slice_set_start_cycle(p, &p->tracks[tr], s, start);
	s->cycles = cycles;
	s->start_ns = tp_cycles_to_ns(start, mhz);
	tp_slice_set_end(p, &p->tracks[tr], s, tp_cycles_to_ns(start + cycles - 1, mhz));
	tp_slice_set_kind(p, &p->tracks[tr], s, (uint8_t)kind);
	tp_slice_set_dir(p, &p->tracks[tr], s, (uint8_t)dir);
	tp_slice_set_bytes(p, &p->tracks[tr], s, bytes);
	tp_slice_set_name(p, &p->tracks[tr], s, tp_profile_str(p, name));
}

/* Finishes p and analyses it into *a; both must succeed. */
static void finish_and_analyze(struct tp_profile *p, struct tp_analysis *a)
{
	assert_int_equal(tp_profile_finish(p), TP_OK);
	assert_int_equal(tp_analyze(p, a), TP_OK);
}

static void test_two_cores(void **state)
{
	(void)state;
	/* Core 0 at 1000 MHz (1 cycle = 1 ns) so the arithmetic is easy to follow. */
	int t0, g0;
	struct tp_profile *p = tp_test_tiu_gdma("dev", 2, 1000, &t0, &g0);
	const int dev = 0;
	int t1 = tp_profile_add_track(p, dev, 1, TP_TRACK_TIU, NULL, 1000);
	add(p, t0, 0, 400, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "conv.normal"); /* 0..399 */
	add(p, t0, 400, 100, 1000, TP_CMD_SYS_WAIT, TP_DIR_NONE, 0, "system.wait_msg");
	add(p, t0, 500, 300, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "conv.normal"); /* ..799 */
	add(p, t0, 800, 1, 1000, TP_CMD_SYS, TP_DIR_NONE, 0, "sys.tr_acc");
	add(p, g0, 100, 200, 1000, TP_CMD_NORMAL, TP_DIR_DDR_TO_LMEM, 4000,
	    "tensorLd"); /* 20 B/cyc */
	add(p, g0, 300, 50, 1000, TP_CMD_SYS_WAIT, TP_DIR_NONE, 0, "sys_wait");
	add(p, g0, 600, 200, 1000, TP_CMD_NORMAL, TP_DIR_LMEM_TO_DDR, 2000, "tensorSt");
	add(p, g0, 850, 150, 1000, TP_CMD_NORMAL, TP_DIR_LMEM_TO_LMEM, 999,
	    "tensorMv"); /* ends 999 */
	add(p, t1, 0, 100, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "mm.normal");
	struct tp_analysis a;
	finish_and_analyze(p, &a);
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
	/* The vendor's concurrency estimate (701 + 550 - 999) / 550, a lower bound of overlap */
	assert_true(fabs(c0->concurrency_bound - 252.0 / 550.0) < 1e-12);
	/* Measured: TIU busy [0,399] ∪ [500,799] (698 ns), DMA [100,299] ∪ [600,799] ∪ [850,999]
	 * (547 ns); both busy [100,299] + [600,799] = 398 ns; / min(698, 547). */
	assert_int_equal(c0->overlap_ns, 398);
	assert_true(fabs(c0->concurrency - 398.0 / 547.0) < 1e-12);
	/* Core 1 has TIU only: no overlap, and the bound is 0 rather than negative. */
	const struct tp_core_stats *c1 = tp_analysis_core(&a, dev, 1);
	assert_true(c1->concurrency == 0 && c1->concurrency_bound == 0);
	/* Overall Parallelism (PerfWeb): (max TIU 701 + max GDMA 550 + max SDMA 0) / 999;
	 * tpuprof's mean over cores: Σ numerators / (total × cores) = (1251 + 100) / 1998 */
	assert_true(fabs(a.overall.parallelism - 1251.0 / 999.0) < 1e-12);
	assert_true(fabs(a.overall.mean_parallelism - 1351.0 / 1998.0) < 1e-12);
	/* TiuWorkingRatio Overall: PerfWeb Σ / (total × cores); PerfDoc max / total */
	assert_true(fabs(a.overall.tiu_working_ratio - 801.0 / 1998.0) < 1e-12);
	assert_true(fabs(a.overall.tiu_working_ratio_max - 701.0 / 999.0) < 1e-12);
	/* No cost data: uArch rate is n/a, never 100 %. */
	double r;
	assert_int_equal(tp_uarch_rate(&c0->eng[TP_TRACK_TIU], &r), 0);
	assert_int_equal(tp_uarch_rate(&a.overall.eng[TP_TRACK_TIU], &r), 0);
	/* Function Type table: core 0 TIU has types "" only (the helper sets none) with 4 cmds */
	assert_int_equal(c0->num_ftypes, 1);
	assert_int_equal(c0->ftypes[0].instr, 4);
	assert_int_equal(c0->ftypes[0].asic_cycle, 801);
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
	struct tp_analysis a;
	finish_and_analyze(p, &a);
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
	struct tp_slice s = {.cycles = 3377};
	struct tp_label lb = {.bytes = 101376};
	struct tp_track t = {.labels = &lb, .num_labels = 1};
	assert_true(fabs(tp_slice_gbps(&t, &s, 750) - 22.5147) < 5e-4);
	/* Without cycles: bytes over the duration, 101 376 B in 4000 ns. */
	s.cycles = 0;
	s.dur = 4000;
	assert_true(fabs(tp_slice_gbps(&t, &s, 750) - 25.344) < 1e-9);
}

/* The worst layers by summed cost: the same list (lost cycles, then layer index, for ties)
 * whether each layer's commands are one run of slices or interleaved with other layers', and
 * whether it is made on the calling thread or (jobs 2) on a thread of its own. */
static void layer_hot_case(int interleave, unsigned jobs)
{
	int t0;
	struct tp_profile *p = tp_test_one_track("dev", TP_TRACK_TIU, NULL, 1000, &t0);
	enum { NL = 14 };
	for (int i = 0; i < NL; i++) {
		struct tp_layer l = {
		    .id = i, .core = 0, .subnet = -1, .group = -1, .begin_ns = 1, .end_ns = 0};
		assert_int_equal(tp_profile_add_layer(p, &l), i);
	}
	/* Layer i: two commands of 100 cycles, alg (i % 5 + 1) * 10 of 100 uArch ops each, so
	 * lost = 200 * (1 - alg / 100): 180 for layers 0, 5, 10; 160 for 1, 6, 11; ... */
	uint64_t at = 0;
	for (int k = 0; k < 2 * NL; k++) {
		int layer = interleave ? NL - 1 - k % NL : k / 2;
		add(p, t0, at, 100, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "conv.normal");
		at += 100;
		p->tracks[t0].slices[k].layer = layer;
		struct tp_cost c = {
		    .alg_ops = (uint64_t)(layer % 5 + 1) * 10, .uarch_ops = 100, .valid = 1};
		assert_int_equal(tp_track_set_cost(p, t0, (size_t)k, &c), TP_OK);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_analysis a;
	assert_int_equal(tp_analyze_jobs(p, &a, jobs), TP_OK);
	static const int want[10] = {0, 5, 10, 1, 6, 11, 2, 7, 12, 3};
	assert_int_equal(a.num_low_uarch_layers, 10);
	for (int i = 0; i < 10; i++) {
		const struct tp_cost_hot *h = &a.low_uarch_layers[i];
		assert_int_equal(h->layer, want[i]);
		assert_int_equal(h->track, -1);
		assert_int_equal(h->asic_cycle, 200);
		assert_int_equal(h->uarch_ops, 200);
		assert_int_equal(h->alg_ops, (uint64_t)(want[i] % 5 + 1) * 20);
		assert_true(fabs(h->lost_cycles - (200.0 - 2.0 * (want[i] % 5 + 1) * 10)) < 1e-9);
	}
	tp_analysis_free(&a);
	tp_profile_free(p);
}

static void test_layer_hot(void **state)
{
	(void)state;
	layer_hot_case(0, 1);
	layer_hot_case(1, 1);
	layer_hot_case(0, 2);
	layer_hot_case(1, 2);
}

/* TIU/DMA overlap: the same union and overlap whether the tracks are in start order (streamed)
 * or not (a profile analysed before tp_profile_finish: copied and sorted), over two DMA
 * tracks on one core. TIU busy [0,99] [150,249] [240,299] (union 99 + 149 = 248), DMA busy
 * [50,119] [280,399] (and a SYS slice that does not count): overlap 49 + 19 = 68. */
static void test_overlap_orders(void **state)
{
	(void)state;
	for (int fin = 0; fin < 2; fin++) {
		int t0, g0;
		struct tp_profile *p = tp_test_tiu_gdma("dev", 1, 1000, &t0, &g0);
		int s0 = tp_profile_add_track(p, 0, 0, TP_TRACK_SDMA, NULL, 1000);
		add(p, t0, 240, 60, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "c");
		add(p, t0, 0, 100, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "c");
		add(p, t0, 150, 100, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "c");
		add(p, g0, 280, 120, 1000, TP_CMD_NORMAL, TP_DIR_DDR_TO_LMEM, 10, "ld");
		add(p, s0, 0, 400, 1000, TP_CMD_SYS, TP_DIR_NONE, 0, "sys");
		add(p, s0, 50, 70, 1000, TP_CMD_NORMAL, TP_DIR_DDR_TO_LMEM, 10, "ld");
		if (fin)
			assert_int_equal(tp_profile_finish(p), TP_OK);
		struct tp_analysis a;
		assert_int_equal(tp_analyze(p, &a), TP_OK);
		const struct tp_core_stats *c = tp_analysis_core(&a, 0, 0);
		assert_non_null(c);
		assert_int_equal(c->eng[TP_TRACK_TIU].union_ns, 248);
		assert_int_equal(c->overlap_ns, 68);
		/* DMA union 69 + 119 = 188 is the smaller one. */
		assert_true(fabs(c->concurrency - 68.0 / 188.0) < 1e-12);
		tp_analysis_free(&a);
		tp_profile_free(p);
	}
}

/* One row of a Function Type table: instructions, Asic Cycle, Alg Ops and uArch Ops. */
static void expect_ftype(const struct tp_ftype_stats *ft, uint64_t instr, uint64_t asic_cycle,
                         uint64_t alg_ops, uint64_t uarch_ops)
{
	assert_int_equal(ft->instr, instr);
	assert_int_equal(ft->asic_cycle, asic_cycle);
	assert_int_equal(ft->alg_ops, alg_ops);
	assert_int_equal(ft->uarch_ops, uarch_ops);
}

/* A TIU track with cost entries: uArch rate, Alg Cycle and the Function Type table. */
static void test_cost(void **state)
{
	(void)state;
	int tiu[2];
	struct tp_profile *p = tp_test_cores("dev", 2, TP_TRACK_TIU, 1000, tiu);
	const int dev = 0, t0 = tiu[0], t1 = tiu[1];
	static const struct {
		const char *name, *type;
		uint32_t cycles;
		enum tp_cmd_kind kind;
		uint64_t alg, uarch;
		uint32_t alg_cycle, init;
		uint8_t valid;
	} cmds[] = {
	    {"conv.normal", "sCONV", 1000, TP_CMD_NORMAL, 300, 1000, 100, 50, 1}, /* 30 % */
	    {"arith.add", "sAR", 200, TP_CMD_NORMAL, 100, 100, 20, 1, 1},         /* 100 % */
	    {"system.wait_msg", "SYS", 500, TP_CMD_SYS_WAIT, 1, 1, 0, 0, 1},
	    {"conv.normal", "sCONV", 400, TP_CMD_NORMAL, 50, 100, 10, 2, 1}, /* 50 % */
	    {"mystery", "sX", 10, TP_CMD_NORMAL, 0, 0, 0, 0, 0},             /* not modelled */
	};
	uint64_t at = 0;
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		add(p, t0, at, cmds[i].cycles, 1000, cmds[i].kind, TP_DIR_NONE, 0, cmds[i].name);
		at += cmds[i].cycles;
		tp_slice_set_type(p, &p->tracks[t0], &p->tracks[t0].slices[i],
		                  tp_profile_str(p, cmds[i].type));
		struct tp_cost c = {.alg_ops = cmds[i].alg,
		                    .uarch_ops = cmds[i].uarch,
		                    .alg_cycle = cmds[i].alg_cycle,
		                    .init_cycle = cmds[i].init,
		                    .valid = cmds[i].valid};
		assert_int_equal(tp_track_set_cost(p, t0, i, &c), TP_OK);
	}
	add(p, t1, 0, 100, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "mm.normal"); /* no cost array */
	struct tp_analysis a;
	finish_and_analyze(p, &a);
	const struct tp_engine_stats *e = &tp_analysis_core(&a, dev, 0)->eng[TP_TRACK_TIU];
	assert_int_equal(e->alg_ops, 451);
	assert_int_equal(e->uarch_ops, 1201);
	assert_int_equal(e->alg_cycle, 130);
	assert_int_equal(e->cost_commands, 4);
	assert_int_equal(e->cost_missing, 1);
	double r;
	assert_int_equal(tp_uarch_rate(e, &r), 1);
	assert_true(fabs(r - 451.0 / 1201.0) < 1e-12);
	char buf[32];
	tp_fmt_pct(buf, sizeof buf, r, 2);
	assert_string_equal(buf, "37.55%");
	/* Core 1 has no descriptors: n/a; Overall sums the cores that have them. */
	assert_int_equal(tp_uarch_rate(&tp_analysis_core(&a, dev, 1)->eng[TP_TRACK_TIU], &r), 0);
	assert_int_equal(tp_uarch_rate(&a.overall.eng[TP_TRACK_TIU], &r), 1);
	assert_true(fabs(r - 451.0 / 1201.0) < 1e-12);
	/* Function types sorted by name: SYS, sAR, sCONV, sX; wait_msg's cycles included. */
	const struct tp_core_stats *c0 = tp_analysis_core(&a, dev, 0);
	assert_int_equal(c0->num_ftypes, 4);
	assert_string_equal(tp_str(p, c0->ftypes[0].type), "SYS");
	assert_int_equal(c0->ftypes[0].asic_cycle, 500);
	assert_string_equal(tp_str(p, c0->ftypes[2].type), "sCONV");
	expect_ftype(&c0->ftypes[2], 2, 1400, 350, 1100);
	/* Overall table merges core 1's type. */
	assert_int_equal(a.overall.num_ftypes, 5);
	/* Total rows: instr and Asic Cycle over the rows, ops and Alg Cycle of the engine. */
	const struct tp_ftype_stats *ft = &c0->ftype_total;
	assert_int_equal(ft->type, 0);
	expect_ftype(ft, 5, 2110, 451, 1201);
	assert_int_equal(ft->alg_cycle, 130);
	/* Overall: core 1's command counts, its ops do not (it has no descriptors). */
	expect_ftype(&a.overall.ftype_total, 6, 2210, 451, 1201);
	/* Hot spots: conv #0 loses 1000 × 0.7 = 700 cycles, conv #3 400 × 0.5 = 200. */
	assert_int_equal(a.num_low_uarch, 2);
	assert_int_equal(a.low_uarch[0].slice, 0);
	assert_true(fabs(a.low_uarch[0].lost_cycles - 700) < 1e-9);
	assert_int_equal(a.low_uarch[1].slice, 3);
	/* Initial-cycle ratio > 1 %: conv #0 (5 %); arith 0.5 % and conv #3 0.5 % are not. */
	assert_int_equal(a.num_high_init, 1);
	assert_int_equal(a.high_init[0].slice, 0);
	struct tp_cost cc;
	assert_int_equal(tp_track_get_cost(&p->tracks[t0], 0, &cc), 1);
	assert_true(fabs(cc.uarch_rate - 0.3) < 1e-12);
	assert_true(fabs(cc.init_ratio - 50.0 / 1000.0001) < 1e-12);
	assert_int_equal(tp_track_get_cost(&p->tracks[t0], 4, &cc), 0);
	assert_int_equal(tp_track_get_cost(&p->tracks[t1], 0, &cc), 0);
	tp_analysis_free(&a);
	tp_profile_free(p);
}

/* ---- The vendor's per-command cost figures, summed the way tpuprof sums them ---------- */

/* Reads tiuRegInfo_<core>.txt (sophgo-analysis.md §3) into a TIU track with tp_cost from the
 * vendor's Alg Ops / uArch Ops / Alg Cycle. Returns the number of records, -1 if absent. */
static int load_tiu_reginfo(struct tp_profile *p, int dev, int core, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int tr = tp_profile_add_track(p, dev, core, TP_TRACK_TIU, NULL, 1000);
	char line[512], type[64] = "";
	int n = 0;
	/* The record's figures, by their key in the file. */
	enum { R_START, R_ASIC, R_ALG, R_UARCH, R_CYC, R_TSK, R_EU, R_N };
	static const char *const rkey[R_N] = {"Start Cycle",   "Asic Cycle", "Alg Ops",
	                                      "uArch Ops",     "Alg Cycle",  "des_tsk_typ",
	                                      "des_tsk_eu_typ"};
	uint64_t r[R_N] = {0};
	int open = 0;
	for (;;) {
		int eof = !fgets(line, sizeof line, f);
		if (eof || !strncmp(line, "__TIU_REG_INFO__", 16)) {
			if (open) {
				struct tp_slice *s = tp_track_push(p, tr);
				tp_slice_set_start_cycle(p, &p->tracks[tr], s, r[R_START]);
				s->cycles = (uint32_t)r[R_ASIC];
				s->start_ns = (int64_t)r[R_START];
				tp_slice_set_end(p, &p->tracks[tr], s,
				                 (int64_t)(r[R_START] + r[R_ASIC] - 1));
				tp_slice_set_kind(p, &p->tracks[tr], s,
				                  r[R_TSK] == 15 && r[R_EU] == 9 ? TP_CMD_SYS_WAIT
				                  : r[R_TSK] == 15 || r[R_TSK] == 12
				                      ? TP_CMD_SYS
				                      : TP_CMD_NORMAL);
				tp_slice_set_type(p, &p->tracks[tr], s, tp_profile_str(p, type));
				struct tp_cost c = {.alg_ops = r[R_ALG],
				                    .uarch_ops = r[R_UARCH],
				                    .alg_cycle = (uint32_t)r[R_CYC],
				                    .valid = 1};
				assert_int_equal(tp_track_set_cost(p, tr, (size_t)n, &c), TP_OK);
				n++;
			}
			if (eof)
				break;
			open = 1;
			memset(&r, 0, sizeof r);
			continue;
		}
		char *colon = strstr(line, ": ");
		if (line[0] != '\t' || !colon)
			continue;
		*colon = '\0';
		const char *k = line + 1, *v = colon + 2;
		uint64_t u = strtoull(v, NULL, 10);
		if (!strcmp(k, "Function Type"))
			snprintf(type, sizeof type, "%.*s", (int)strcspn(v, "\n"), v);
		for (int i = 0; i < R_N; i++)
			if (!strcmp(k, rkey[i]))
				r[i] = u;
	}
	fclose(f);
	return n;
}

static void check_reference(const char *dump, int cores, const char *const *rates,
                            const char *overall, uint64_t alg_cycle, uint64_t alg_ops,
                            uint64_t uarch_ops)
{
	const char *shared = getenv("TP_SHARED_DIR");
	char path[1024];
	struct tp_profile *p = tp_profile_new();
	int dev = tp_profile_add_device(p, "dev", 0, cores);
	for (int c = 0; c < cores; c++) {
		snprintf(path, sizeof path, "%s/testdata/sophgo/reference/%s/tiuRegInfo_%d.txt",
		         shared ? shared : "../shared", dump, c);
		if (load_tiu_reginfo(p, dev, c, path) < 0) {
			printf("SKIPPED: vendor reference %s not found\n", path);
			tp_profile_free(p);
			return;
		}
	}
	struct tp_analysis a;
	finish_and_analyze(p, &a);
	char buf[32];
	double r;
	for (int c = 0; c < cores; c++) {
		assert_int_equal(tp_uarch_rate(&a.cores[c].eng[TP_TRACK_TIU], &r), 1);
		tp_fmt_pct(buf, sizeof buf, r, 2);
		assert_string_equal(buf, rates[c]);
	}
	assert_int_equal(tp_uarch_rate(&a.overall.eng[TP_TRACK_TIU], &r), 1);
	tp_fmt_pct(buf, sizeof buf, r, 2);
	assert_string_equal(buf, overall);
	if (alg_cycle) {
		assert_int_equal(a.cores[0].eng[TP_TRACK_TIU].alg_cycle, alg_cycle);
		assert_int_equal(a.cores[0].eng[TP_TRACK_TIU].alg_ops, alg_ops);
		assert_int_equal(a.cores[0].eng[TP_TRACK_TIU].uarch_ops, uarch_ops);
	}
	/* The Function Type table adds up to the core totals; its Asic Cycle minus wait_msg is
	 * totalTiuCycle. */
	for (int c = 0; c < cores; c++) {
		const struct tp_core_stats *cs = &a.cores[c];
		uint64_t ops = 0, asic = 0, n = 0;
		for (size_t i = 0; i < cs->num_ftypes; i++) {
			ops += cs->ftypes[i].alg_ops;
			asic += cs->ftypes[i].asic_cycle;
			n += cs->ftypes[i].instr;
		}
		assert_int_equal(ops, cs->eng[TP_TRACK_TIU].alg_ops);
		assert_int_equal(n, cs->eng[TP_TRACK_TIU].records);
		assert_int_equal(asic - cs->eng[TP_TRACK_TIU].wait_cycle,
		                 cs->eng[TP_TRACK_TIU].working_cycle);
	}
	tp_analysis_free(&a);
	tp_profile_free(p);
}

/* PROVENANCE.txt: BM1688 74.87 % / 100.00 %, Overall 76.28 %; CV184X 69.27 % with
 * totalAlgCycle 182787, totalAlgOps 61947009, totalUArchOps 89427201; BM1690 19.66 % with
 * 11808 / 175461253 / 892557317. */
/* tp_analyze_jobs spreads the per-core passes over threads: every number must be the one a
 * single thread gets, and the per-core command ranks merged into the global ranking must keep
 * their sums, minima and maxima. Three cores (one with two GDMA tracks of the same name, so
 * its ranks are shared by two tracks) and names repeated across cores and tracks. */
static void test_jobs_same(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	int dev = tp_profile_add_device(p, "dev", 0, 3);
	static const char *const names[] = {"conv.normal", "mm.normal", "tensorLd", "sys.nop"};
	uint64_t seed = 7;
	int tracks[3][3];
	for (int c = 0; c < 3; c++) {
		tracks[c][0] = tp_profile_add_track(p, dev, c, TP_TRACK_TIU, NULL, 1000);
		tracks[c][1] = tp_profile_add_track(p, dev, c, TP_TRACK_GDMA, NULL, 750);
		tracks[c][2] =
		    c == 1 ? tp_profile_add_track(p, dev, c, TP_TRACK_GDMA, NULL, 750) : -1;
	}
	for (int c = 0; c < 3; c++)
		for (int k = 0; k < 3; k++) {
			if (tracks[c][k] < 0)
				continue;
			uint64_t at = (uint64_t)c * 37;
			for (int i = 0; i < 500; i++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				uint32_t cyc = (uint32_t)(seed >> 40) % 300 + 1;
				int nm = (int)((seed >> 20) % 4);
				add(p, tracks[c][k], at, cyc, k ? 750 : 1000,
				    nm == 3 ? TP_CMD_SYS : TP_CMD_NORMAL,
				    k ? TP_DIR_DDR_TO_LMEM : TP_DIR_NONE, k ? cyc * 16 : 0,
				    names[nm]);
				at += cyc / 2 + 1;
			}
		}
	/* Hand-checked rank: core 2's two known slices of a new name on its TIU track. */
	add(p, tracks[2][0], 1000000, 100, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "solo");
	add(p, tracks[2][0], 1000200, 300, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "solo");
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_analysis a1, a4;
	assert_int_equal(tp_analyze_jobs(p, &a1, 1), TP_OK);
	assert_int_equal(tp_analyze_jobs(p, &a4, 4), TP_OK);
	assert_int_equal(a1.num_cores, 3);
	assert_int_equal(a4.num_cores, 3);
	assert_int_equal(a1.total_time_ns, a4.total_time_ns);
	for (size_t i = 0; i < 3; i++) {
		const struct tp_core_stats *x = &a1.cores[i], *y = &a4.cores[i];
		assert_memory_equal(x->eng, y->eng, sizeof x->eng);
		assert_int_equal(x->overlap_ns, y->overlap_ns);
		assert_true(x->concurrency == y->concurrency);
		assert_true(x->parallelism == y->parallelism);
		assert_int_equal(x->num_ftypes, y->num_ftypes);
		assert_memory_equal(x->ftypes, y->ftypes, x->num_ftypes * sizeof *x->ftypes);
		assert_memory_equal(&x->ftype_total, &y->ftype_total, sizeof x->ftype_total);
	}
	/* Core 1's two GDMA tracks count into one engine entry. */
	assert_int_equal(a1.cores[1].eng[TP_TRACK_GDMA].records, 1000);
	assert_memory_equal(&a1.overall.eng, &a4.overall.eng, sizeof a1.overall.eng);
	assert_int_equal(a1.num_top_cmds, a4.num_top_cmds);
	assert_memory_equal(a1.top_cmds, a4.top_cmds, a1.num_top_cmds * sizeof *a1.top_cmds);
	uint32_t solo = tp_profile_str(p, "solo");
	int found = 0;
	for (size_t i = 0; i < a4.num_top_cmds; i++) {
		const struct tp_rank *r = &a4.top_cmds[i];
		if (r->name != solo)
			continue;
		found++;
		assert_int_equal(r->core, 2);
		assert_int_equal(r->count, 2);
		assert_int_equal(r->total_ns, 99 + 299); /* end - start: cycles - 1 at 1 GHz */
		assert_int_equal(r->min_ns, 99);
		assert_int_equal(r->max_ns, 299);
	}
	assert_int_equal(found, 1);
	/* Each of the 3 x 4 names of a core's TIU track, plus core 2's "solo", plus the DMA
	 * tracks' (core, GDMA, name): one rank per (core, track name, slice name). */
	assert_int_equal(a1.num_top_cmds, 3 * 4 + 1 + 3 * 4);
	tp_analysis_free(&a1);
	tp_analysis_free(&a4);
	tp_profile_free(p);
}

/* The cost hot lists are kept per core (tp_analyze_jobs) and merged: they must hold what one
 * list offered every TIU command in track order holds, ties included (equal lost cycles keep
 * the earlier track and slice). Tracks are created interleaved across cores (TIU 0, TIU 1,
 * TIU 2, then the DMA tracks), so a core's commands are not one run of the track order. */
static void test_hot_merge(void **state)
{
	(void)state;
	int tiu[3];
	struct tp_profile *p = tp_test_cores("dev", 3, TP_TRACK_TIU, 1000, tiu);
	for (int c = 0; c < 3; c++)
		tp_profile_add_track(p, 0, c, TP_TRACK_GDMA, NULL, 1000);
	uint64_t seed = 3;
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < 40; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t cyc = 100 * (uint32_t)((seed >> 33) % 3 + 1); /* many equal keys */
			add(p, tiu[c], (uint64_t)i * 400, cyc, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0,
			    "conv.normal");
			struct tp_cost k = {.alg_ops = 1,
			                    .uarch_ops = 2,
			                    .alg_cycle = 1,
			                    .init_cycle = cyc / 50 * (uint32_t)((seed >> 40) % 2),
			                    .valid = 1};
			assert_int_equal(tp_track_set_cost(p, tiu[c], (size_t)i, &k), TP_OK);
		}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	/* The oracle: every command's keys in track order, stable-sorted worst first. */
	struct ent {
		double lost;
		int32_t track;
		size_t slice;
	} lo[120], hi[120];
	size_t nlo = 0, nhi = 0;
	for (int c = 0; c < 3; c++) {
		const struct tp_track *t = &p->tracks[tiu[c]];
		for (size_t i = 0; i < t->count; i++) {
			struct tp_cost k;
			tp_track_get_cost(t, i, &k);
			double cyc = (double)t->slices[i].cycles;
			lo[nlo++] = (struct ent){cyc * 0.5, tiu[c], i};
			if ((double)k.init_cycle / (cyc + 1e-4) > 0.01)
				hi[nhi++] = (struct ent){(double)k.init_cycle, tiu[c], i};
		}
	}
	for (int l = 0; l < 2; l++) { /* insertion sort: stable */
		struct ent *v = l ? hi : lo;
		size_t n = l ? nhi : nlo;
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && v[j - 1].lost < v[j].lost; j--) {
				struct ent x = v[j];
				v[j] = v[j - 1];
				v[j - 1] = x;
			}
	}
	assert_true(nhi > TP_ANALYSIS_HOT);
	static const unsigned jobs[] = {1, 4};
	for (size_t j = 0; j < 2; j++) {
		struct tp_analysis a;
		assert_int_equal(tp_analyze_jobs(p, &a, jobs[j]), TP_OK);
		assert_int_equal(a.num_low_uarch, TP_ANALYSIS_HOT);
		assert_int_equal(a.num_high_init, TP_ANALYSIS_HOT);
		for (size_t i = 0; i < TP_ANALYSIS_HOT; i++) {
			assert_int_equal(a.low_uarch[i].track, lo[i].track);
			assert_int_equal(a.low_uarch[i].slice, lo[i].slice);
			assert_true(a.low_uarch[i].lost_cycles == lo[i].lost);
			assert_int_equal(a.high_init[i].track, hi[i].track);
			assert_int_equal(a.high_init[i].slice, hi[i].slice);
			assert_true(a.high_init[i].lost_cycles == hi[i].lost);
		}
		tp_analysis_free(&a);
	}
	tp_profile_free(p);
}

static void test_reference_uarch(void **state)
{
	(void)state;
	static const char *const r1688[] = {"74.87%", "100.00%"};
	check_reference("bm1688_resnet50", 2, r1688, "76.28%", 0, 0, 0);
	static const char *const r184x[] = {"69.27%"};
	check_reference("cv184x_blazeface", 1, r184x, "69.27%", 182787, 61947009, 89427201);
	static const char *const r1690[] = {"19.66%"};
	check_reference("bm1690_blazeface_cdm", 1, r1690, "19.66%", 11808, 175461253, 892557317);
}

/* LOCAL memory from the commands: lane offset = address mod lane, bytes per lane from the
 * LMEM-side shape (lmem.c). */
static const struct tp_chip lmem_chip = {
    .name = "test", .npu_num = 32, .lane_bytes = 131072, .lmem_bytes = 4u << 20, .banks = 16};

/* One LOCAL-memory record: written or read, its lane offset and its bytes per lane. */
static void expect_rec(const struct tp_lmem_rec *v, int write, uint64_t lane_offset, uint64_t bytes)
{
	assert_int_equal(v->write, write);
	assert_int_equal(v->lane_offset, lane_offset);
	assert_int_equal(v->bytes, bytes);
}

/* The LOCAL-memory records of p's commands under a cap of `max`: one command in `every` kept,
 * n records kept and `dropped` counted. The caller checks the records and frees r->v. */
static void expect_capped(const struct tp_profile *p, size_t max, size_t every, size_t n,
                          size_t dropped, struct tp_lmem_recs *r)
{
	assert_int_equal(tp_lmem_from_commands(p, 0, max, r), TP_OK);
	assert_int_equal(r->every, every);
	assert_int_equal(r->n, n);
	assert_int_equal(r->dropped, dropped);
}

/* Adds a TIU operand's (res0, opd0, opd1) LMEM address and c, h, w under the descriptor's
 * names des_NAME_addr, _c, _h, _w to the argument set being built. */
static void add_operand(struct tp_profile *p, const char *name, uint64_t addr, uint64_t c,
                        uint64_t h, uint64_t w)
{
	static const char *const field[] = {"addr", "c", "h", "w"};
	const uint64_t v[] = {addr, c, h, w};
	char key[32];
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		snprintf(key, sizeof key, "des_%s_%s", name, field[i]);
		tp_args_add_uint(p, key, v[i]);
	}
}

/* A finished profile with LOCAL-memory traffic in the commands' descriptor arguments (the
 * vendor's field names): four GDMA commands (a load, a store without shape, an nchw_copy load
 * shaped by its src sizes, a sys command) and two TIU commands (one with a result and two
 * operands, one whose result is past LMEM), on the chip constants of lmem_chip. */
static struct tp_profile *lmem_profile(void)
{
	struct tp_profile *p = tp_profile_new();
	p->chip = &lmem_chip;
	int dev = tp_profile_add_device(p, "dev", 0, 1);
	int g = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, NULL, 1000);
	int t = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, NULL, 1000);
	/* GDMA 0: DDR->LMEM into lane 3 offset 8192, 1x64x28x28 INT8: 2 channels per lane. */
	add(p, g, 0, 100, 1000, TP_CMD_NORMAL, TP_DIR_DDR_TO_LMEM, 50176, "tensorLd");
	tp_args_begin(p);
	tp_args_add_uint(p, "src_start_addr", 0x9000000000ull);
	tp_test_add_dma_shape(p, "dst", 131072 * 3 + 8192, 1, 64, 28, 28);
	tp_args_add_uint(p, "src_data_format", 0);
	p->tracks[g].slices[0].args = tp_args_end(p);
	/* GDMA 1: LMEM->DDR with no shape: its 3200 bytes over 32 lanes (the DDR side's sizes
	 * are 0, as the vendor's dumps have them with nchw_copy). */
	add(p, g, 200, 100, 1000, TP_CMD_NORMAL, TP_DIR_LMEM_TO_DDR, 3200, "tensorSt");
	tp_args_begin(p);
	tp_args_add_uint(p, "src_start_addr", 16384);
	tp_args_add_uint(p, "dst_start_addr", 0x9000001000ull);
	tp_args_add_uint(p, "dst_csize", 0);
	p->tracks[g].slices[1].args = tp_args_end(p);
	/* GDMA 2: DDR->LMEM whose LMEM (dst) sizes are 0 and src sizes give the shape (the real
	 * dump's nchw_copy loads): 1x3x224x224 INT8 -> 1 channel per lane, 50176 bytes. */
	add(p, g, 300, 50, 1000, TP_CMD_NORMAL, TP_DIR_DDR_TO_LMEM, 150528, "tensorLd");
	tp_args_begin(p);
	tp_test_add_dma_shape(p, "src", 0xa000000000ull, 1, 3, 224, 224);
	tp_args_add_uint(p, "dst_start_addr", 0);
	tp_args_add_uint(p, "dst_nsize", 0);
	tp_args_add_uint(p, "dst_csize", 0);
	tp_args_add_uint(p, "src_data_format", 0);
	p->tracks[g].slices[2].args = tp_args_end(p);
	/* GDMA 3: a sys command moves nothing. */
	add(p, g, 400, 10, 1000, TP_CMD_SYS_WAIT, TP_DIR_NONE, 0, "sys_wait");
	tp_args_begin(p);
	tp_args_add_uint(p, "src_start_addr", 0);
	p->tracks[g].slices[3].args = tp_args_end(p);
	/* TIU: FP16 result 1x64x14x14 at 40960, operand 0 1x64x28x28 at 0, operand 1 a constant,
	 * and a second command whose result address is past LMEM. */
	add(p, t, 100, 300, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "conv.normal");
	tp_args_begin(p);
	add_operand(p, "res0", 40960, 64, 14, 14);
	tp_args_add_uint(p, "des_res0_n", 1);
	tp_args_add_uint(p, "des_opt_res0_prec", 1);
	add_operand(p, "opd0", 0, 64, 28, 28);
	tp_args_add_uint(p, "des_opt_opd0_prec", 1);
	add_operand(p, "opd1", 65536, 64, 1, 1);
	tp_args_add_uint(p, "des_opt_opd1_const", 1);
	p->tracks[t].slices[0].args = tp_args_end(p);
	add(p, t, 500, 10, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "arith.add");
	tp_args_begin(p);
	add_operand(p, "res0", 5u << 20, 1, 1, 1);
	tp_args_add_uint(p, "des_res0_n", 1);
	p->tracks[t].slices[1].args = tp_args_end(p);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

static void test_lmem_from_commands(void **state)
{
	(void)state;
	struct tp_profile *p = lmem_profile();
	int t = tp_profile_find_track(p, 0, 0, TP_TRACK_TIU);
	assert_true(t >= 0);
	struct tp_lmem_recs r;
	expect_capped(p, SIZE_MAX, 1, 5, 0, &r);
	/* The nchw_copy load: its shape from the src sizes. */
	expect_rec(&r.v[2], 1, 0, 50176);
	memmove(&r.v[2], &r.v[3], 2 * sizeof *r.v); /* the TIU records follow, as below */
	/* GDMA load: write, offset 8192, 1 × 2 × 28 × 28 × 1 */
	expect_rec(&r.v[0], 1, 8192, 1568);
	/* GDMA store: read, offset 16384, 3200 / 32 */
	expect_rec(&r.v[1], 0, 16384, 100);
	/* TIU result: write 1 × 2 × 14 × 14 × 2 at 40960; operand 0: read 1 × 2 × 28 × 28 × 2 */
	expect_rec(&r.v[2], 1, 40960, 784);
	expect_rec(&r.v[3], 0, 0, 3136);
	assert_int_equal(r.v[3].begin_ns, p->tracks[t].slices[0].start_ns);
	tp_free(r.v);
	/* Past the cap: one command in ceil(5 / 3) = 2 of the four that give records (the
	 * 1st and 3rd: both loads), the rest counted. */
	expect_capped(p, 3, 2, 2, 3, &r);
	expect_rec(&r.v[0], 1, 8192, 1568);
	expect_rec(&r.v[1], 1, 0, 50176);
	tp_free(r.v);
	/* One in ceil(5 / 2) = 3: the first load and the TIU command, whose second record is
	 * past the cap and counted. */
	expect_capped(p, 2, 3, 2, 3, &r);
	expect_rec(&r.v[0], 1, 8192, 1568);
	expect_rec(&r.v[1], 1, 40960, 784);
	tp_free(r.v);
	/* Without chip constants there is no lane to map onto. */
	p->chip = NULL;
	assert_int_equal(tp_lmem_from_commands(p, 0, SIZE_MAX, &r), TP_OK);
	assert_int_equal(r.n, 0);
	p->chip = &lmem_chip;
	tp_alloc_fail_after(0);
	assert_int_equal(tp_lmem_from_commands(p, 0, SIZE_MAX, &r), TP_ENOMEM);
	tp_alloc_fail_after(-1);
	assert_int_equal(r.n, 0);
	tp_profile_free(p);
}

/* A DMA record (add) with its gmem_bl_sum and gmem_xact_cnt arguments. */
static void add_burst(struct tp_profile *p, int tr, uint64_t start, enum tp_cmd_kind kind,
                      enum tp_dir dir, uint64_t bl_sum, uint64_t xact)
{
	add(p, tr, start, 100, 1000, kind, dir, 512, "tensorLd");
	tp_args_begin(p);
	tp_args_add_uint(p, TP_KEY_GMEM_XACT, xact);
	tp_args_add_uint(p, "gmem_bl_sum", bl_sum);
	p->tracks[tr].slices[p->tracks[tr].count - 1].args = tp_args_end(p);
}

/* avgDdrBurstLength: Σ gmem_bl_sum / Σ gmem_xact_cnt over the DDR records of each engine and
 * core, and over the cores for Overall (sophgo-costmodel.md §5). */
static void test_ddr_burst_length(void **state)
{
	(void)state;
	int gdma[2];
	struct tp_profile *p = tp_test_cores("dev", 2, TP_TRACK_GDMA, 1000, gdma);
	const int dev = 0, g0 = gdma[0], g1 = gdma[1];
	int s0 = tp_profile_add_track(p, dev, 0, TP_TRACK_SDMA, NULL, 1000);
	add_burst(p, g0, 0, TP_CMD_NORMAL, TP_DIR_DDR_TO_LMEM, 64, 16);
	add_burst(p, g0, 100, TP_CMD_NORMAL, TP_DIR_LMEM_TO_DDR, 24, 8);
	add_burst(p, g0, 200, TP_CMD_NORMAL, TP_DIR_LMEM_TO_LMEM, 100, 10); /* no DDR side */
	add_burst(p, g0, 300, TP_CMD_SYS, TP_DIR_DDR_TO_LMEM, 100, 10);     /* sys: no data */
	add_burst(p, s0, 0, TP_CMD_NORMAL, TP_DIR_LMEM_TO_LMEM, 7, 7);
	add_burst(p, g1, 0, TP_CMD_NORMAL, TP_DIR_DDR_TO_DDR, 10, 10);
	struct tp_analysis a;
	finish_and_analyze(p, &a);
	const struct tp_engine_stats *e = &tp_analysis_core(&a, dev, 0)->eng[TP_TRACK_GDMA];
	assert_int_equal(e->ddr_burst_sum, 88);
	assert_int_equal(e->ddr_xact, 24);
	assert_true(fabs(e->ddr_avg_burst - 88.0 / 24.0) < 1e-12);
	/* No DDR record: no transactions, 0 (the vendor's figure then). */
	e = &tp_analysis_core(&a, dev, 0)->eng[TP_TRACK_SDMA];
	assert_int_equal(e->ddr_xact, 0);
	assert_true(e->ddr_avg_burst == 0.0);
	e = &tp_analysis_core(&a, dev, 1)->eng[TP_TRACK_GDMA];
	assert_true(fabs(e->ddr_avg_burst - 1.0) < 1e-12);
	assert_true(fabs(a.overall.eng[TP_TRACK_GDMA].ddr_avg_burst - 98.0 / 34.0) < 1e-12);
	tp_analysis_free(&a);
	tp_profile_free(p);
}

/* The expected order of the layer ranking: longest span first, then core, type, name, index. */
static int want_cmp(const void *x, const void *y)
{
	const struct tp_rank *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	int64_t ka[] = {a->core, a->type, a->name, a->index};
	int64_t kb[] = {b->core, b->type, b->name, b->index};
	for (int i = 0; i < 4; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

/* The top layers, ranked in parts on threads, are the first TP_ANALYSIS_TOP_LAYERS of all the
 * timed layers sorted whole (many ties on the span; untimed layers left out), for every
 * thread count. */
static void test_top_layers_parts(void **state)
{
	(void)state;
	enum { NL = 150000 };
	int t0, g0;
	struct tp_profile *p = tp_test_tiu_gdma("dev", 1, 1000, &t0, &g0);
	add(p, t0, 0, 1000, 1000, TP_CMD_NORMAL, TP_DIR_NONE, 0, "conv.normal");
	struct tp_rank *all = calloc(NL, sizeof *all);
	assert_non_null(all);
	size_t nall = 0;
	uint64_t rng = 99;
	for (int i = 0; i < NL; i++) {
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		struct tp_layer l = {.id = i,
		                     .core = (int32_t)(rng >> 60) % 3,
		                     .group = -1,
		                     .subnet = -1,
		                     .type = 1 + (uint32_t)(rng >> 50 & 3),
		                     .name = 10 + (uint32_t)(rng >> 40 & 7)};
		l.begin_ns = (int64_t)(rng >> 20 & 0xFFFF);
		l.end_ns = (rng >> 36 & 15) == 0 ? l.begin_ns - 1
		                                 : l.begin_ns + (int64_t)(rng >> 33 & 255);
		assert_int_equal(tp_profile_add_layer(p, &l), i);
		if (l.begin_ns <= l.end_ns)
			all[nall++] = (struct tp_rank){.name = l.name,
			                               .type = l.type,
			                               .index = i,
			                               .core = l.core,
			                               .total_ns = l.end_ns - l.begin_ns};
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	qsort(all, nall, sizeof *all, want_cmp);
	static const unsigned jobs[] = {1, 2, 3};
	for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++) {
		struct tp_analysis a;
		assert_int_equal(tp_analyze_jobs(p, &a, jobs[j]), TP_OK);
		assert_int_equal(a.num_top_layers, TP_ANALYSIS_TOP_LAYERS);
		for (size_t i = 0; i < a.num_top_layers; i++) {
			assert_int_equal(a.top_layers[i].index, all[i].index);
			assert_int_equal(a.top_layers[i].total_ns, all[i].total_ns);
		}
		tp_analysis_free(&a);
	}
	free(all);
	tp_profile_free(p);
}

#include "tp_test_main.h"
