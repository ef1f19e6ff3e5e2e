/*
 * bmp_read_test.c — the bmprofile reader end to end on small synthetic dumps (the a2_small,
 * x_small and bm1684_small fixtures): tracks, layers, arguments, the argument-set and per-core fill
 * paths, out-of-memory at every allocation, and every bad-input error (status, exact message, no
 * profile).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/deps_check.h"
#include "hexfile.h"
#include "readers/sophgo/bmprofile/bmp_int.h"
#include "readers/sophgo/sg_testutil.h"
#include "readers/sophgo/sophgo.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------- */
/* The synthetic BM1688 dump, end to end.                                                   */
/* ---------------------------------------------------------------------------------------- */

static void test_a2_small(void **state)
{
	(void)state;
	const char *dir = sgt_make_fixture("a2_small", "a2_small");
	assert_int_equal(tp_bmprofile_probe(dir), 1);
	struct tp_profile *p = sgt_read(dir);
	assert_int_equal(p->arch, TP_ARCH_BM1688);
	assert_true(p->tiu_freq_mhz == 900 && p->gdma_freq_mhz == 750);
	assert_string_equal(tp_str(p, p->devices[0].name), "BM1688 tiny_net");
	assert_int_equal(p->devices[0].num_cores, 2);
	assert_string_equal(tp_profile_get_meta(p, "arch"), "BM1688");
	assert_string_equal(tp_profile_get_meta(p, "tpu_freq"), "0");
	assert_true(p->num_notes >= 1); /* tpu_freq=0 -> arch default clocks, said in a note */
	assert_non_null(strstr(tp_str(p, p->notes[0].text), "tpu_freq=0"));
	assert_int_equal(p->num_subnets, 1);
	assert_int_equal(p->subnets[0].begin_usec, UINT64_C(1700000000000000));

	/* Timeline (§9.2): the cores are aligned on their wait commands, the time axis starts at
	 * the earliest command of any core (GDMA0's load, after trimming), and cycles are the
	 * times at the TIU clock, truncated as the vendor truncates them. */
	const struct tp_track *t0 = sgt_track(p, 0, TP_TRACK_TIU);
	assert_int_equal(t0->count, 3);
	const struct tp_slice *s = sgt_by_cmd(t0, 1);
	assert_int_equal(tp_slice_start_cycle(t0, s), 1200);
	assert_int_equal(s->cycles, 899);
	assert_int_equal(s->start_ns, 1333);         /* int(1200 / 0.9) */
	assert_int_equal(tp_slice_end(t0, s), 2331); /* int(2098 / 0.9) */
	assert_string_equal(tp_str(p, tp_slice_name(t0, s)), "conv.normal");
	assert_string_equal(tp_str(p, tp_slice_type(t0, s)), "sCONV");
	assert_int_equal(tp_slice_dtype(t0, s), TP_DT_INT8);
	assert_int_equal(s->dep_id, 1);
	assert_int_equal(tp_slice_kind(t0, s), TP_CMD_NORMAL);
	assert_int_equal(s->layer, 1); /* Conv2D: the 1st TIU node line of core 0 */
	s = sgt_by_cmd(t0, 2);
	assert_int_equal(tp_slice_start_cycle(t0, s), 2200); /* 2445 ns */
	assert_int_equal(s->cycles, 10);
	assert_int_equal(tp_slice_kind(t0, s), TP_CMD_SYS_WAIT);
	assert_int_equal(s->layer, -1);
	int found;
	assert_int_equal(sgt_arg_int(p, s->args, "Msg Id", &found), 3);
	assert_true(found);
	s = sgt_by_cmd(t0, 3);
	assert_string_equal(tp_str(p, tp_slice_name(t0, s)), "system.end");
	assert_int_equal(s->layer, -1); /* the final end command has no node line */

	const struct tp_track *g0 = sgt_track(p, 0, TP_TRACK_GDMA);
	assert_int_equal(g0->count, 2);
	s = sgt_by_cmd(g0, 1);
	assert_int_equal(tp_slice_start_cycle(g0, s), 0);
	assert_int_equal(s->cycles, 750); /* 999 ns -> int(749.25) */
	assert_int_equal(tp_slice_bytes(g0, s), 48);
	assert_int_equal(tp_slice_stall(g0, s), 7);
	assert_string_equal(tp_str(p, tp_slice_name(g0, s)), "tensorLd");
	assert_int_equal(tp_slice_dir(g0, s), TP_DIR_DDR_TO_LMEM);
	assert_int_equal(s->layer, 0);
	assert_int_equal(sgt_arg_int(p, s->args, "src_start_addr", &found), INT64_C(0x8000001000));
	s = sgt_by_cmd(g0, 2);
	assert_string_equal(tp_str(p, tp_slice_name(g0, s)), "chain end"); /* the vendor's name */
	assert_string_equal(tp_str(p, tp_slice_type(g0, s)), "chain end");
	assert_int_equal(tp_slice_kind(g0, s), TP_CMD_SYS);
	assert_int_equal(tp_slice_start_cycle(g0, s), 1000); /* 1334 ns */

	const struct tp_track *t1 = sgt_track(p, 1, TP_TRACK_TIU);
	assert_int_equal(t1->count, 2); /* leading send_msg dropped */
	s = sgt_by_cmd(t1, 2);
	assert_int_equal(tp_slice_start_cycle(t1, s), 2200); /* aligned onto core 0's wait */
	assert_int_equal(tp_slice_kind(t1, s), TP_CMD_SYS_WAIT);

	/* Layers: Load (index 0) owns GDMA cmd 1, Conv2D (index 1) TIU cmd 1. */
	assert_int_equal(p->num_layers, 2);
	assert_int_equal(sgt_layer_at(p, 0)->is_data_move, 1);
	assert_int_equal(sgt_layer_at(p, 0)->gdma_first, 1);
	assert_int_equal(sgt_layer_at(p, 0)->gdma_last, 1);
	assert_int_equal(sgt_layer_at(p, 1)->tiu_first, 1);
	assert_int_equal(sgt_layer_at(p, 1)->begin_ns, 1333);
	assert_int_equal(sgt_layer_at(p, 1)->end_ns, 2331);
	assert_int_equal(sgt_layer_at(p, 1)->num_tensors, 2);
	assert_string_equal(tp_str(p, sgt_layer_at(p, 0)->name), "in put");

	/* MCU records count 20 ns ticks from the dump's base time. */
	const struct tp_track *m0 = sgt_track(p, 0, TP_TRACK_MCU);
	assert_int_equal(m0->count, 2);
	assert_int_equal(m0->slices[0].start_ns, 334);
	assert_int_equal(tp_slice_end(m0, &m0->slices[0]), 334);
	assert_string_equal(tp_str(p, tp_slice_name(m0, &m0->slices[0])), "set_GDMA");
	assert_string_equal(sgt_arg_str(p, m0->slices[0].args, "extra"), "hello");
	assert_int_equal(m0->slices[1].start_ns, 1334);
	assert_int_equal(tp_slice_end(m0, &m0->slices[1]), 3334);

	assert_int_equal(p->stats.files_read, 5);
	assert_int_equal(p->stats.blocks_read, 8);
	assert_int_equal(p->stats.blocks_skipped, 1);
	assert_int_equal(p->stats.records_read, 13);
	assert_int_equal(p->stats.records_dropped, 3); /* 2 trimmed GDMA + 1 send_msg */
	tp_profile_free(p);

	/* Clock overrides replace the arch constants; detail off means no args. */
	struct tp_bmprofile_opts o = {
	    .tiu_freq_mhz = 1000, .gdma_freq_mhz = 1000, .detail = TP_BMPROFILE_DETAIL_OFF};
	struct tp_diag d = {0};
	assert_int_equal(tp_bmprofile_read(dir, &o, &p, &d), TP_OK);
	assert_true(p->tiu_freq_mhz == 1000);
	assert_true(sgt_track(p, 0, TP_TRACK_TIU)->freq_mhz == 1000);
	s = sgt_by_cmd(sgt_track(p, 0, TP_TRACK_TIU), 1);
	assert_int_equal(s->args, 0);
	assert_int_equal(s->cycles, 900); /* at 1 GHz ns = cycles: raw 900000..900899 */
	tp_profile_free(p);
}

/* The legacy path (§9.1) on a tiny BM1684X dump. */
static void test_x_small(void **state)
{
	(void)state;
	const char *dir = sgt_make_fixture("x_small", "x_small");
	struct tp_profile *p = sgt_read(dir);
	assert_int_equal(p->arch, TP_ARCH_BM1684X);
	assert_true(p->tiu_freq_mhz == 1000 && p->gdma_freq_mhz == 1000); /* tpu_freq=1000 */
	/* start_offset: first NODE_SET 50 ticks x 20 ns = 1 us after DYN record 1 -> 1000 cycles.
	 * TIU: raw - 1000 + 1000; GDMA: raw - 500 + 1000. Re-anchoring: GDMA cmd 1 ends at 1299,
	 * the TIU node that waits for it (bd_id 0 + 1, gdma_id 1) is TIU cmd 1 at 1000: +299. */
	const struct tp_track *t0 = sgt_track(p, 0, TP_TRACK_TIU),
	                      *g0 = sgt_track(p, 0, TP_TRACK_GDMA);
	assert_int_equal(t0->count, 2); /* the 0xFF-filled record ends the valid data */
	const struct tp_slice *s = sgt_by_cmd(t0, 1);
	assert_int_equal(tp_slice_start_cycle(t0, s), 1299);
	assert_int_equal(s->cycles, 99); /* the vendor's legacy count: end - start */
	assert_int_equal(s->start_ns, 1299);
	assert_int_equal(tp_slice_end(t0, s), 1398);
	assert_string_equal(tp_str(p, tp_slice_name(t0, s)), "arith.add");
	assert_string_equal(tp_str(p, tp_slice_type(t0, s)), "sAR");
	assert_int_equal(s->layer, 1);
	assert_int_equal(tp_slice_start_cycle(t0, sgt_by_cmd(t0, 2)), 1499);
	s = sgt_by_cmd(g0, 1);
	assert_int_equal(tp_slice_start_cycle(g0, s), 1000);
	assert_int_equal(s->cycles, 299);
	assert_int_equal(tp_slice_bytes(g0, s), 123);              /* d0_wr + d1_wr + gif_wr */
	assert_int_equal(tp_slice_dir(g0, s), TP_DIR_DDR_TO_LMEM); /* from the node's gdma_dir=0 */
	assert_int_equal(s->layer, 0);
	assert_string_equal(tp_str(p, tp_slice_name(g0, sgt_by_cmd(g0, 2))), "dma.sys.chain_end");
	const struct tp_track *m0 = sgt_track(p, 0, TP_TRACK_MCU);
	assert_int_equal(m0->count, 2);
	assert_int_equal(m0->slices[0].start_ns, 0);    /* FUNC at the legacy time base */
	assert_int_equal(m0->slices[1].start_ns, 1000); /* NODE_SET */
	assert_string_equal(tp_str(p, tp_slice_name(m0, &m0->slices[1])), "set_GDMA");
	assert_int_equal(p->stats.records_dropped, 1);
	assert_int_equal(p->stats.files_read, 4);
	tp_profile_free(p);

	/* No GDMA block at all (its type patched to an unknown one): an empty GDMA track and an
	 * unanchored TIU (fuzzer regression: empty tracks have no slice array). */
	sgt_put_u32(sgt_in(dir, "iter0.profile"), 200, 77);
	p = sgt_read(dir);
	assert_int_equal(sgt_track(p, 0, TP_TRACK_GDMA)->count, 0);
	assert_int_equal(p->stats.blocks_skipped, 1);
	assert_int_equal(tp_slice_start_cycle(sgt_track(p, 0, TP_TRACK_TIU),
	                                      sgt_by_cmd(sgt_track(p, 0, TP_TRACK_TIU), 1)),
	                 1000);
	tp_profile_free(p);
}

/* The legacy path on a tiny generated BM1684 dump (bm1684_small: 6 TIU, 4 GDMA commands):
 * 128-byte descriptors with the TIU word reversal, 16-bit ids, its own clocks. */
static void test_bm1684_small(void **state)
{
	(void)state;
	const char *dir = sgt_make_fixture("bm1684_small", "bm1684_small");
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	if (tp_bmprofile_read(dir, NULL, &p, &d))
		fail_msg("read failed: %s", d.msg);
	assert_int_equal(p->arch, TP_ARCH_BM1684);
	assert_true(p->tiu_freq_mhz == 550 && p->gdma_freq_mhz == 575);
	const struct tp_track *t0 = sgt_track(p, 0, TP_TRACK_TIU),
	                      *g0 = sgt_track(p, 0, TP_TRACK_GDMA);
	assert_int_equal(t0->count, 6);
	assert_int_equal(g0->count, 4);
	static const char *const tiu[6] = {"DEPTHWISE_OR_POOLING", "CONV_NEURON",
	                                   "CONV_NEURON",          "TENSOR_ARITHMETIC",
	                                   "TENSOR_ARITHMETIC",    "TENSOR_ARITHMETIC"};
	static const uint32_t tdep[6] = {1, 1, 1, 2, 2, 3}, gdep[4] = {0, 3, 5, 6};
	for (uint32_t i = 0; i < 6; i++) {
		const struct tp_slice *s = sgt_by_cmd(t0, i + 1);
		assert_string_equal(tp_str(p, tp_slice_name(t0, s)), tiu[i]);
		assert_int_equal(s->dep_id, tdep[i]);
		assert_true(s->layer >= 0);
	}
	for (uint32_t i = 0; i < 4; i++) {
		const struct tp_slice *s = sgt_by_cmd(g0, i + 1);
		assert_string_equal(tp_str(p, tp_slice_name(g0, s)), "NORMAL");
		assert_int_equal(tp_slice_dir(g0, s),
		                 i < 2 ? TP_DIR_DDR_TO_LMEM : TP_DIR_LMEM_TO_DDR);
		assert_int_equal(s->dep_id, gdep[i]);
		assert_true(s->layer >= 0);
	}
	assert_string_equal(tp_str(p, sgt_layer_at(p, (size_t)sgt_by_cmd(t0, 6)->layer)->name),
	                    "Copy_25");
	/* Re-anchoring (§9.1): TIU cmd 1 waits for GDMA cmd 1 (bd_id 0 + 1, gdma_id 1) and
	 * starts at its end in TIU cycles, rounded up: 550 / 575 MHz. */
	const struct tp_slice *g1 = sgt_by_cmd(g0, 1);
	uint64_t gend = tp_slice_start_cycle(g0, g1) + g1->cycles;
	assert_int_equal(tp_slice_start_cycle(t0, sgt_by_cmd(t0, 1)), (gend * 550 + 574) / 575);
	struct tp_deps_report dr;
	assert_int_equal(tp_deps_check(p, &dr), TP_OK);
	assert_int_equal(dr.checked, 9);
	assert_int_equal(dr.violated, 0);
	for (size_t i = 0; i < p->num_notes; i++) /* the zero slots are no commands */
		assert_null(strstr(tp_str(p, p->notes[i].text), "decoded"));
	tp_profile_free(p);
}

/* tensor_location.json replaces the node-line layers (§8.3); skip_layers drops layers. */
static void test_a2_layers_json(void **state)
{
	(void)state;
	const char *dir = sgt_make_fixture("a2_small", "a2_json");
	char path[8448];
	snprintf(path, sizeof path, "%s/tensor_location.json", dir);
	static const char js[] =
	    "[{\"file-line\": 10, \"subnet_id\": 0, \"core_id\": 0, \"opcode\": \"tpu.Load\", "
	    "\"is_local\": true, \"tiu_dma_id(before)\": [0, 0], \"tiu_dma_id(after)\": [0, 1], "
	    "\"operands\": [], \"results\": [{\"name\": \"in_ld\"}]},\n"
	    " {\"file-line\": 12, \"subnet_id\": 0, \"core_id\": 0, \"opcode\": \"tpu.Conv2D\", "
	    "\"is_local\": true, \"tiu_dma_id(before)\": [0, 1], \"tiu_dma_id(after)\": [2, 1], "
	    "\"operands\": [], \"results\": []}]";
	assert_int_equal(tp_test_write_file(path, js, sizeof js - 1), 0);
	struct tp_profile *p = sgt_read(dir);
	assert_int_equal(p->num_layers, 2); /* the global.profile layers are not used */
	assert_int_equal(p->num_tensors,
	                 1); /* the Load's result (operands and results become tensors) */
	assert_int_equal(p->tensors[0].layer, 0);
	assert_int_equal(p->tensors[0].is_in, 0);
	assert_int_equal(p->tensors[0].id, 10);
	assert_string_equal(tp_str(p, sgt_layer_at(p, 0)->type), "Load");
	assert_string_equal(tp_str(p, sgt_layer_at(p, 0)->name), "in_ld");
	assert_int_equal(sgt_layer_at(p, 0)->id, 10);
	assert_int_equal(sgt_layer_at(p, 1)->tiu_first, 1);
	assert_int_equal(sgt_layer_at(p, 1)->tiu_last, 2);
	const struct tp_track *t0 = sgt_track(p, 0, TP_TRACK_TIU);
	assert_int_equal(sgt_by_cmd(t0, 1)->layer, 1);
	assert_int_equal(sgt_by_cmd(t0, 2)->layer, 1); /* the wait is inside the conv's range */
	assert_int_equal(sgt_by_cmd(t0, 3)->layer, -1);
	assert_int_equal(sgt_by_cmd(sgt_track(p, 0, TP_TRACK_GDMA), 1)->layer, 0);
	assert_int_equal(sgt_layer_at(p, 1)->begin_ns, 1333);
	assert_int_equal(sgt_layer_at(p, 1)->end_ns, 2454); /* end of the wait (2209 cycles) */
	tp_profile_free(p);

	/* A tensor_location.json that is not usable is a side-file problem: the conversion goes
	 * on with the global.profile layers and one note naming path:LINE. The malformed variants
	 * check that the error excerpt is printed while the mapping is alive and never reads past
	 * the unterminated buffer. */
	char note[9000];
	unlink(path);
	p = sgt_read(dir);
	struct tp_diag d = {0};
	int rc;
	size_t global_layers = p->num_layers;
	assert_true(global_layers > 0);
	tp_profile_free(p);
	static const char *const bad_json[] = {"{\"x\": 1}", "[1,2",
	                                       "{\"garbage\":", "\n\n[{\"a\"::}]"};
	static const char *const bad_note[] = {":1: not a JSON array of layer entries",
	                                       ":1: not valid JSON", ":1: not valid JSON",
	                                       ":3: not valid JSON (near \":}]\")"};
	for (size_t k = 0; k < 5; k++) {
		if (k < 4) {
			assert_int_equal(tp_test_write_file(path, bad_json[k], strlen(bad_json[k])),
			                 0);
		} else { /* 100 000 nested '[' (cJSON's nesting limit, not the stack) */
			size_t n = 100000;
			char *deep = malloc(n);
			assert_non_null(deep);
			memset(deep, '[', n);
			assert_int_equal(tp_test_write_file(path, deep, n), 0);
			free(deep);
		}
		p = NULL;
		rc = tp_bmprofile_read(dir, NULL, &p, &d);
		if (rc)
			fail_msg("variant %zu: %s", k, d.msg);
		assert_int_equal(p->num_layers, global_layers);
		snprintf(note, sizeof note, "%s%s", path,
		         k < 4 ? bad_note[k] : ":1: not valid JSON");
		int found = 0;
		for (size_t i = 0; i < p->num_notes; i++)
			found |= strncmp(tp_str(p, p->notes[i].text), note, strlen(note)) == 0;
		if (!found)
			fail_msg("variant %zu: no note starting with %s", k, note);
		tp_profile_free(p);
	}

	/* A net_stat.sim of another version converts too, with one note for what was skipped. */
	snprintf(path, sizeof path, "%s/net_stat.sim", dir);
	static const char ns_bad[] = "TCYC : 5\r\nConv|CONV|s:q|b:1|g:1|e:1|t:1\nx|Y|s:1|b:1\n";
	assert_int_equal(tp_test_write_file(path, ns_bad, sizeof ns_bad - 1), 0);
	assert_int_equal(tp_bmprofile_read(dir, NULL, &p, &d), TP_OK);
	assert_string_equal(tp_profile_get_meta(p, "sim_total_cycle"), "5");
	snprintf(note, sizeof note,
	         "%s:2: malformed item \"Conv|CONV|s:q|b:1|g:1|e:1|t:1\"; 2 line(s) "
	         "of this side file skipped",
	         path);
	int seen = 0;
	for (size_t i = 0; i < p->num_notes; i++)
		seen |= !strcmp(tp_str(p, p->notes[i].text), note);
	if (!seen)
		fail_msg("no note %s", note);
	tp_profile_free(p);
	unlink(path);

	struct tp_bmprofile_opts o = {.skip_layers = 1};
	assert_int_equal(tp_bmprofile_read(dir, &o, &p, &d), TP_OK);
	assert_int_equal(p->num_layers, 0);
	assert_int_equal(sgt_by_cmd(sgt_track(p, 0, TP_TRACK_TIU), 1)->layer, -1);
	tp_profile_free(p);
}

static int read_dir(const char *dir, struct tp_profile **p, struct tp_diag *d)
{
	return tp_bmprofile_read(dir, NULL, p, d);
}

/* Out of memory at every allocation: a clean error, nothing leaked (ASan checks). */
static void oom_sweep(const char *dir)
{
	sgt_oom_sweep(read_dir, dir, 20000, 0);
}

/* Without argument sets: the per-core path, its name and cost parts included. */
static int read_dir_plain(const char *dir, struct tp_profile **p, struct tp_diag *d)
{
	struct tp_bmprofile_opts o = {.detail = TP_BMPROFILE_DETAIL_OFF};
	return tp_bmprofile_read(dir, &o, p, d);
}

/* On worker threads, each engine read (and without argument sets filled) in parts of two
 * records. */
static int read_dir_parts(const char *dir, struct tp_profile **p, struct tp_diag *d)
{
	struct tp_bmprofile_opts o = {.detail = TP_BMPROFILE_DETAIL_OFF, .jobs = 8, .part = 2};
	return tp_bmprofile_read(dir, &o, p, d);
}
static int read_dir_parts_detail(const char *dir, struct tp_profile **p, struct tp_diag *d)
{
	struct tp_bmprofile_opts o = {.detail = TP_BMPROFILE_DETAIL_ON, .jobs = 8, .part = 2};
	return tp_bmprofile_read(dir, &o, p, d);
}

/* A command buffer whose second descriptor is not one the decoder knows: the read succeeds,
 * the command is unnamed, and two notes say where decoding stopped and that fewer commands
 * were decoded than the COMMAND block lists (emitted after the lookups, which index lazily). */
static void test_a2_cmd_stop(void **state)
{
	(void)state;
	const char *dir = sgt_make_fixture("a2_small", "a2_cmd_stop");
	char path[8448], note1[9000], note2[9000];
	snprintf(path, sizeof path, "%s/cmd_20000_0_1.dat", dir);
	sgt_put_u32(path, 0x60 + 4, 0x0F); /* cmd 2 (sys chain_end): cmd_type 6 -> 15, unknown */
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_bmprofile_read(dir, NULL, &p, &d);
	if (rc)
		fail_msg("%s", d.msg);
	snprintf(note1, sizeof note1,
	         "%s@0x60: command decoding stopped at an unknown descriptor "
	         "after 1 commands; later commands are unnamed",
	         path);
	snprintf(note2, sizeof note2, "%s: decoded 1 commands, the COMMAND block says 2", path);
	int seen1 = 0, seen2 = 0;
	for (size_t i = 0; i < p->num_notes; i++) {
		seen1 |= !strcmp(tp_str(p, p->notes[i].text), note1);
		seen2 |= !strcmp(tp_str(p, p->notes[i].text), note2);
	}
	if (!seen1 || !seen2)
		fail_msg("missing note(s):%s%s%s%s", seen1 ? "" : "\n", seen1 ? "" : note1,
		         seen2 ? "" : "\n", seen2 ? "" : note2);
	const struct tp_track *t = sgt_track(p, 0, TP_TRACK_GDMA);
	const struct tp_slice *s1 = sgt_by_cmd(t, 1), *s2 = sgt_by_cmd(t, 2);
	assert_non_null(s1);
	assert_string_equal(tp_str(p, tp_slice_label(t, s1)->name), "tensorLd");
	assert_non_null(s2);
	/* the names a command without descriptor gets */
	assert_string_equal(tp_str(p, tp_slice_label(t, s2)->name), "cmd_type_-1_0");
	assert_string_equal(tp_str(p, tp_slice_label(t, s2)->type), "cmd_type_-1");
	tp_profile_free(p);
}

/* The two ways the BM1688 reader names its commands agree: with argument sets (fill_cmd,
 * one slice at a time) and without them (the per-core path: bmp_fill_part with its label memo,
 * names interned per core afterwards; --jobs 1 runs it on the calling thread). Every engine
 * slice has the same time, label (name, type, kind, direction, data type, stall, bytes),
 * dependency and cost either way. */
static void fill_paths_agree(const char *dir)
{
	struct tp_profile *pa = NULL, *pb = NULL;
	struct tp_diag d = {0};
	struct tp_bmprofile_opts on = {.detail = TP_BMPROFILE_DETAIL_ON, .jobs = 1};
	struct tp_bmprofile_opts off = {.detail = TP_BMPROFILE_DETAIL_OFF, .jobs = 1};
	if (tp_bmprofile_read(dir, &on, &pa, &d) || tp_bmprofile_read(dir, &off, &pb, &d))
		fail_msg("%s: %s", dir, d.msg);
	size_t checked = 0;
	for (int core = 0; core < 2; core++) {
		for (int k = TP_TRACK_TIU; k <= TP_TRACK_GDMA; k++) {
			const struct tp_track *ta = sgt_track(pa, core, (enum tp_track_kind)k);
			const struct tp_track *tb = sgt_track(pb, core, (enum tp_track_kind)k);
			if (!ta || !tb) {
				assert_true(!ta && !tb);
				continue;
			}
			assert_int_equal(ta->count, tb->count);
			for (size_t i = 0; i < ta->count; i++, checked++) {
				const struct tp_slice *a = &ta->slices[i], *b = &tb->slices[i];
				const struct tp_label *la = tp_slice_label(ta, a),
				                      *lb = tp_slice_label(tb, b);
				struct tp_cost ca, cb;
				tp_track_get_cost(ta, i, &ca);
				tp_track_get_cost(tb, i, &cb);
				if (a->start_ns != b->start_ns || a->cmd_id != b->cmd_id ||
				    a->dep_id != b->dep_id ||
				    tp_slice_end(ta, a) != tp_slice_end(tb, b) ||
				    strcmp(tp_str(pa, la->name), tp_str(pb, lb->name)) ||
				    strcmp(tp_str(pa, la->type), tp_str(pb, lb->type)) ||
				    la->kind != lb->kind || la->dir != lb->dir ||
				    la->dtype != lb->dtype || la->stall != lb->stall ||
				    la->bytes != lb->bytes || memcmp(&ca, &cb, sizeof ca))
					fail_msg("%s: core %d track kind %d slice %zu (cmd %u): "
					         "%s/%s vs %s/%s",
					         dir, core, k, i, a->cmd_id, tp_str(pa, la->name),
					         tp_str(pa, la->type), tp_str(pb, lb->name),
					         tp_str(pb, lb->type));
			}
		}
	}
	assert_true(checked > 0);
	tp_profile_free(pa);
	tp_profile_free(pb);
}

static void test_fill_paths_agree(void **state)
{
	(void)state;
	fill_paths_agree(sgt_make_fixture("a2_small", "a2_fill_paths"));
	/* an unknown descriptor: the unnamed commands' names too */
	const char *dir = sgt_make_fixture("a2_small", "a2_fill_paths_stop");
	sgt_put_u32(sgt_in(dir, "cmd_20000_0_1.dat"), 0x60 + 4, 0x0F);
	fill_paths_agree(dir);
	char real[4096];
	if (!sgt_shared_path(real, sizeof real, "bm1688_resnet50"))
		return;
	fill_paths_agree(real);
}

/* pa and pb are the same profile: every track (tp_test_same_track), the notes, the reader's
 * statistics and the argument sets. */
static void same_profile(const struct tp_profile *pa, const struct tp_profile *pb)
{
	assert_int_equal(pa->num_tracks, pb->num_tracks);
	size_t slices = 0;
	for (size_t i = 0; i < pa->num_tracks; i++) {
		tp_test_same_track(pa, &pa->tracks[i], pb, &pb->tracks[i], 1);
		slices += pa->tracks[i].count;
	}
	assert_true(slices > 0);
	assert_int_equal(pa->num_notes, pb->num_notes);
	for (size_t i = 0; i < pa->num_notes; i++)
		assert_string_equal(tp_str(pa, pa->notes[i].text), tp_str(pb, pb->notes[i].text));
	assert_memory_equal(&pa->stats, &pb->stats, sizeof pa->stats);
	assert_int_equal(pa->num_argsets, pb->num_argsets);
	if (pa->num_argsets > 1)
		assert_memory_equal(pa->argsets + 1, pb->argsets + 1,
		                    (pa->num_argsets - 1) * sizeof *pa->argsets);
	assert_int_equal(pa->num_args, pb->num_args);
	for (size_t i = 0; i < pa->num_args; i++) {
		assert_int_equal(pa->args[i].key, pb->args[i].key);
		assert_int_equal(pa->args[i].type, pb->args[i].type);
		assert_int_equal(pa->args[i].v.u, pb->args[i].v.u);
	}
}

/* With more threads than engines, each engine's PMU records and (without argument sets) its
 * fill run in parts (`part` records each): the profile is the one a single thread reads, id
 * for id, with argument sets (detail, the GDMA counters kept per record) and without. */
static void parts_agree(const char *dir)
{
	static const int details[] = {TP_BMPROFILE_DETAIL_OFF, TP_BMPROFILE_DETAIL_ON};
	static const size_t sizes[] = {1, 3, 50, 0};
	struct tp_diag d = {0};
	for (size_t k = 0; k < sizeof details / sizeof *details; k++) {
		struct tp_profile *pa = NULL;
		struct tp_bmprofile_opts one = {.detail = details[k], .jobs = 1};
		if (tp_bmprofile_read(dir, &one, &pa, &d))
			fail_msg("%s: %s", dir, d.msg);
		/* Parts need more threads than engines (two per core): 8 covers up to 3 cores. */
		size_t engines = 0;
		for (size_t t = 0; t < pa->num_tracks; t++)
			engines += pa->tracks[t].kind == TP_TRACK_TIU ||
			           pa->tracks[t].kind == TP_TRACK_GDMA;
		assert_true(engines < 8);
		for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
			struct tp_profile *pb = NULL;
			struct tp_bmprofile_opts parts = {
			    .detail = details[k], .jobs = 8, .part = sizes[z]};
			if (tp_bmprofile_read(dir, &parts, &pb, &d))
				fail_msg("%s: %s", dir, d.msg);
			same_profile(pa, pb);
			tp_profile_free(pb);
		}
		tp_profile_free(pa);
	}
}

/* dir's iter0.profile read (*data, *n bytes, freed by the caller) and its blocks walked into
 * *it (freed by the caller). */
static const char *walk_iter0(const char *dir, uint8_t **data, size_t *n, struct bmp_iter **it)
{
	const char *path = sgt_in(dir, "iter0.profile");
	*data = tp_test_must_slurp(path, n);
	*it = calloc(1, sizeof **it); /* (large: blocks of every core) */
	assert_non_null(*it);
	struct tp_diag d = {0};
	assert_int_equal(bmp_walk(*data, *n, TP_ARCH_BM1688, path, *it, &d), TP_OK);
	return path;
}

/* BM1688's 32-byte TIU record keeps its 16-bit inst_id at byte 8 (bmp_tiu_decode). */
#define TIU_REC 32
#define TIU_REC_ID 8

/* Core 1's three TIU inst_ids in dir set to 65400, 5 and 6: the 16-bit counter wraps between
 * the first and second record, so a part that starts after the wrap must add the wrap's ids. */
static void tiu_ids_wrap(const char *dir)
{
	uint8_t *data;
	size_t n;
	struct bmp_iter *it;
	const char *path = walk_iter0(dir, &data, &n, &it);
	assert_true(it->n_bd > 1);
	assert_int_equal(it->bd[1].len, 3 * TIU_REC);
	static const uint16_t ids[3] = {65400, 5, 6};
	for (size_t i = 0; i < 3; i++) {
		data[it->bd[1].off + i * TIU_REC + TIU_REC_ID] = (uint8_t)(ids[i] & 0xFF);
		data[it->bd[1].off + i * TIU_REC + TIU_REC_ID + 1] = (uint8_t)(ids[i] >> 8);
	}
	free(it);
	assert_int_equal(tp_test_write_file(path, data, n), 0);
	free(data);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	struct tp_bmprofile_opts one = {.detail = TP_BMPROFILE_DETAIL_OFF, .jobs = 1};
	assert_int_equal(tp_bmprofile_read(dir, &one, &p, &d), TP_OK);
	const struct tp_track *t = sgt_track(p, 1, TP_TRACK_TIU);
	assert_non_null(t);
	assert_int_equal(t->count, 3);
	/* cmd_id is the unwrapped inst_id + 1; the last two come after one wrap of 2^16 */
	assert_non_null(sgt_by_cmd(t, 65400 + 1));
	assert_non_null(sgt_by_cmd(t, 65536 + 5 + 1));
	assert_non_null(sgt_by_cmd(t, 65536 + 6 + 1));
	tp_profile_free(p);
}

/* Core 0's GDMA block of dir emptied (its length 0, its records removed from the file). */
static void gdma_block_empty(const char *dir)
{
	uint8_t *data;
	size_t n;
	struct bmp_iter *it;
	const char *path = walk_iter0(dir, &data, &n, &it);
	assert_true(it->n_gdma > 0 && it->gdma[0].len > 0);
	size_t off = (size_t)it->gdma[0].off, len = it->gdma[0].len;
	memset(data + off - 4, 0, 4); /* the header's length */
	memmove(data + off, data + off + len, n - off - len);
	assert_int_equal(tp_test_write_file(path, data, n - len), 0);
	free(it);
	free(data);
}

/* An empty GDMA block: no records on its track (which has no slice array then), the other
 * engines read, with one thread or with the blocks in parts. */
static void test_empty_block(void **state)
{
	(void)state;
	const char *dir = sgt_make_fixture("a2_small", "a2_empty_gdma");
	gdma_block_empty(dir);
	static const int jobs[] = {1, 8};
	for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++) {
		struct tp_profile *p = NULL;
		struct tp_diag d = {0};
		struct tp_bmprofile_opts o = {
		    .detail = TP_BMPROFILE_DETAIL_OFF, .jobs = jobs[j], .part = 1};
		if (tp_bmprofile_read(dir, &o, &p, &d))
			fail_msg("%s: %s", dir, d.msg);
		const struct tp_track *g = sgt_track(p, 0, TP_TRACK_GDMA);
		assert_true(!g || g->count == 0);
		const struct tp_track *t = sgt_track(p, 0, TP_TRACK_TIU);
		assert_non_null(t);
		assert_true(t->count > 0);
		tp_profile_free(p);
	}
}

static void test_fill_parts_agree(void **state)
{
	(void)state;
	const char *wrap = sgt_make_fixture("a2_small", "a2_parts_wrap");
	tiu_ids_wrap(wrap);
	parts_agree(wrap);
	parts_agree(sgt_make_fixture("a2_small", "a2_fill_parts"));
	/* an unknown descriptor: the commands after it are found in no part */
	const char *dir = sgt_make_fixture("a2_small", "a2_fill_parts_stop");
	sgt_put_u32(sgt_in(dir, "cmd_20000_0_1.dat"), 0x60 + 4, 0x0F);
	parts_agree(dir);
	char real[4096];
	if (sgt_shared_path(real, sizeof real, "bm1688_resnet50"))
		parts_agree(real);
	if (sgt_shared_path(real, sizeof real, "cv184x_blazeface"))
		parts_agree(real);
}

static void test_a2_small_oom(void **state)
{
	(void)state;
	oom_sweep(sgt_make_fixture("a2_small", "a2_oom"));
	sgt_oom_sweep(read_dir_plain, sgt_make_fixture("a2_small", "a2_oom_plain"), 20000, 0);
	sgt_oom_sweep(read_dir_parts, sgt_make_fixture("a2_small", "a2_oom_parts"), 20000, 0);
	sgt_oom_sweep(read_dir_parts_detail, sgt_make_fixture("a2_small", "a2_oom_parts_detail"),
	              20000, 0);
	/* And with the side files: tensor_location.json (layers, tensors) and final.mlir. */
	const char *dir = sgt_make_fixture("a2_small", "a2_oom_side");
	static const char js[] =
	    "[{\"file-line\": 2, \"subnet_id\": 0, \"core_id\": 0, \"opcode\": \"tpu.Load\", "
	    "\"is_local\": true, \"tiu_dma_id(before)\": [0, 0], \"tiu_dma_id(after)\": [0, 1], "
	    "\"operands\": [{\"name\": \"x\", \"memory_type\": \"<1x2xf32>\", \"shape\": [1, 2]}], "
	    "\"results\": [{\"name\": \"ld\", \"memory_type\": \"<1x2xf32>\"}]},\n"
	    " {\"file-line\": 3, \"core_id\": 0, \"opcode\": \"tpu.Conv2D\", "
	    "\"tiu_dma_id(before)\": [0, 1], \"tiu_dma_id(after)\": [2, 1], "
	    "\"operands\": [{\"name\": \"ld\"}], \"results\": [{\"name\": \"c\"}]}]";
	static const char mlir[] = "module @m attributes {module.FLOPs = 9 : i64} {\n"
	                           "  %0 = \"tpu.Load\"(%a) : () -> () loc(#loc1)\n"
	                           "  %1 = \"tpu.Conv2D\"(%0) : () -> () loc(#loc2)\n"
	                           "#loc1 = loc(\"load_x\")\n#loc2 = loc(fused[#loc1, #loc3])\n"
	                           "#loc3 = loc(\"conv\")\n";
	assert_int_equal(tp_test_write_file(sgt_in(dir, "tensor_location.json"), js, sizeof js - 1),
	                 0);
	assert_int_equal(tp_test_write_file(sgt_in(dir, "final.mlir"), mlir, sizeof mlir - 1), 0);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	assert_int_equal(tp_bmprofile_read(dir, NULL, &p, &d), TP_OK);
	assert_int_equal(p->num_layers, 2);
	assert_string_equal(tp_str(p, sgt_layer_at(p, 0)->name), "load_x");
	assert_string_equal(tp_str(p, sgt_layer_at(p, 1)->name), "load_x, conv");
	assert_int_equal(p->num_tensors, 4);
	assert_int_equal(p->tensors[2].id, 2); /* the conv's operand "ld" comes from line 2 */
	tp_profile_free(p);
	oom_sweep(dir);
}

/* ---------------------------------------------------------------------------------------- */
/* Bad input: each one a status, an exact message and no profile.                           */
/* ---------------------------------------------------------------------------------------- */

static void expect_error(const char *dir, int status, const char *msg)
{
	struct tp_profile *p = (struct tp_profile *)1;
	struct tp_diag d = {0};
	int rc = tp_bmprofile_read(dir, NULL, &p, &d);
	assert_null(p);
	if (rc != status || strcmp(d.msg, msg) != 0)
		fail_msg("got %s \"%s\"\nwant %s \"%s\"", tp_status_name(rc), d.msg,
		         tp_status_name(status), msg);
}

/* A damaged copy of a2_small's iter0.profile (fixture directory `as`): cut to `size` bytes,
 * or (size -1) with the u32 at `off` set to `val`; the error the reader must give, its message
 * after the file's path. iter0.profile layout (see the fixture comments): the unknown block 77
 * at 0x585, the core-1 TIU block at 0x591 (96 bytes), file size 1529. */
struct damage {
	const char *as;
	off_t size;
	size_t off;
	uint32_t val;
	int status;
	const char *msg;
};

static const struct damage damaged[] = {
    {"bad_trunc", 1519, 0, 0, TP_ETRUNC, "@0x591: TIU block length 96 exceeds the 86 bytes left"},
    {"bad_hdr", 1425 + 5, 0, 0, TP_ETRUNC,
     "@0x591: truncated block header: 8 bytes needed, 5 left"},
    {"bad_len", -1, 0x585 + 4, 4096, TP_ETRUNC,
     "@0x585: block type 77 length 4096 exceeds the 108 bytes left"},
    /* COMMAND group_num 5, but only one group follows. */
    {"bad_count", -1, 44 + 8 + 32, 5, TP_EFORMAT,
     "@0x54: COMMAND group_num 5 does not fit the 8 bytes that follow"},
    /* GDMA block length not a whole number of records. */
    {"bad_garbled", -1, 0xfc + 4, 1000, TP_EFORMAT,
     "@0xfc: GDMA block length 1000 is not a multiple of the 256-byte record"},
    {"bad_empty_iter", 0, 0, 0, TP_EFORMAT, "@0x0: empty file (no SUMMARY block)"},
};

static void test_bad_inputs(void **state)
{
	(void)state;
	char want[8448], path[8448];
	const char *dir;

	for (size_t i = 0; i < sizeof damaged / sizeof damaged[0]; i++) {
		const struct damage *c = &damaged[i];
		dir = sgt_make_fixture("a2_small", c->as);
		const char *iter = sgt_in(dir, "iter0.profile");
		if (c->size >= 0)
			assert_int_equal(truncate(iter, c->size), 0);
		else
			sgt_put_u32(iter, c->off, c->val);
		snprintf(want, sizeof want, "%s%s", iter, c->msg);
		expect_error(dir, c->status, want);
	}

	dir = sgt_make_fixture("a2_small", "bad_nocmd");
	snprintf(path, sizeof path, "%s/cmd_20000_0_1.dat", dir);
	assert_int_equal(unlink(path), 0);
	snprintf(
	    want, sizeof want,
	    "%s/iter0.profile: COMMAND block 0 names cmd_20000_0_1.dat, which is missing from %s",
	    dir, dir);
	expect_error(dir, TP_ENOTFOUND, want);

	dir = sgt_make_fixture("a2_small", "bad_arch");
	snprintf(path, sizeof path, "%s/global.profile", dir);
	static const char g9[] = "[bmprofile] net_name=x\n[bmprofile] arch=9\n";
	assert_int_equal(tp_test_write_file(path, g9, sizeof g9 - 1), 0);
	snprintf(want, sizeof want, "%s/global.profile:2: unknown arch 9", dir);
	expect_error(dir, TP_EUNSUPPORTED, want);
	assert_int_equal(tp_test_write_file(path, "[bmprofile] arch=5\n", 19), 0);
	snprintf(want, sizeof want, "%s/global.profile:1: arch 5 (BM1690) is not supported", dir);
	expect_error(dir, TP_EUNSUPPORTED, want);

	char empty[4096];
	snprintf(empty, sizeof empty, "%s/bad_emptydir", sgt_tmpdir);
	sgt_rmtree(empty);
	assert_int_equal(mkdir(empty, 0777), 0);
	assert_int_equal(tp_bmprofile_probe(empty), 0);
	snprintf(want, sizeof want,
	         "%s: no global.profile or iter*.profile: not a bmprofile_data directory", empty);
	expect_error(empty, TP_ENOTFOUND, want);

	snprintf(path, sizeof path, "%s/a2_small/global.profile", sgt_tmpdir);
	sgt_make_fixture("a2_small", "a2_small");
	assert_int_equal(tp_bmprofile_probe(path), 0);
	snprintf(want, sizeof want, "%s: not a directory (expected a bmprofile_data directory)",
	         path);
	expect_error(path, TP_EIO, want);

	snprintf(path, sizeof path, "%s/does_not_exist", sgt_tmpdir);
	snprintf(want, sizeof want, "%s: No such file or directory", path);
	expect_error(path, TP_ENOTFOUND, want);
}

/* Appends to track tr the four commands of c, each {cmd_id, start, end, dep_id}. */
static void push_cmds(struct tp_profile *p, int tr, const int64_t c[4][4])
{
	for (int i = 0; i < 4; i++) {
		struct tp_slice *s = tp_track_push(p, tr);
		assert_non_null(s);
		s->cmd_id = (uint32_t)c[i][0];
		s->start_ns = c[i][1];
		assert_int_equal(tp_slice_set_end(p, &p->tracks[tr], s, c[i][2]), TP_OK);
		s->dep_id = (uint32_t)c[i][3];
	}
}

/* Fixture `fix` (as `as`) with `file` cut to `len` bytes: `status` and the message
 * "<dir>/<file>@<at>". */
static void expect_cut(const char *fix, const char *as, const char *file, off_t len, int status,
                       const char *at)
{
	char want[8448], path[8448];
	const char *dir = sgt_make_fixture(fix, as);
	snprintf(path, sizeof path, "%s/%s", dir, file);
	assert_int_equal(truncate(path, len), 0);
	snprintf(want, sizeof want, "%s/%s@%s", dir, file, at);
	expect_error(dir, status, want);
}

/* Report r counts `checked` and `violated` commands, and its first violation is core 0's
 * TIU 2 [90, 95) waiting on GDMA 1, which ends at 100. */
static void expect_tiu2_first(const struct tp_deps_report *r, uint64_t checked, uint64_t violated)
{
	assert_int_equal(r->checked, checked);
	assert_int_equal(r->violated, violated);
	assert_int_equal(r->device, 0);
	assert_int_equal(r->core, 0);
	assert_int_equal(r->kind, TP_TRACK_TIU);
	assert_int_equal(r->cmd_id, 2);
	assert_int_equal(r->dep_id, 1);
	assert_int_equal(r->start_ns, 90);
	assert_int_equal(r->dep_end, 100);
}

/* Legacy command files too short for the COMMAND block's count: cut, so exit 2 (located). */
static void test_bad_legacy_cmds(void **state)
{
	(void)state;
	/* 5 of the 6 128-byte TIU commands */
	expect_cut("bm1684_small", "bad_1684_cmd", "cmd_125cda000_0_0.dat", 700, TP_ETRUNC,
	           "0x2bc: the file ends after 5 of the 6 128-byte commands COMMAND block 0 names");
	/* cmd 2 (16 bytes at 64) cut */
	expect_cut("x_small", "bad_1684x_cmd", "cmd_5000_0.dat", 70, TP_ETRUNC,
	           "0x40: the file ends after 1 of the 2 commands the COMMAND block names");
}

/* tp_deps_check: TIU waits on GDMA and GDMA on TIU by cmd_id, start against the partner's
 * end; an id that occurs twice is not checked; the first violation in track order. */
static void test_deps_check(void **state)
{
	(void)state;
	int t, g;
	struct tp_profile *p = tp_test_tiu_gdma("d", 0, 1000, &t, &g);
	/* GDMA 1 [0, 100), GDMA 2 [100, 200) twice (ambiguous), GDMA 3 [200, 300) waits TIU 1. */
	static const int64_t gd[4][4] = {
	    {1, 0, 100, 0}, {2, 100, 200, 0}, {2, 150, 250, 0}, {3, 200, 300, 1}};
	push_cmds(p, g, gd);
	/* TIU 1 [100, 150) waits GDMA 1: fine; TIU 2 [90, 95) waits GDMA 1: starts 10 early;
	 * TIU 3 waits GDMA 2: ambiguous; TIU 4 waits GDMA 9: absent. */
	static const int64_t td[4][4] = {
	    {1, 100, 150, 1}, {2, 90, 95, 1}, {3, 0, 1, 2}, {4, 0, 1, 9}};
	push_cmds(p, t, td);
	struct tp_deps_report r;
	assert_int_equal(tp_deps_check(p, &r), TP_OK);
	expect_tiu2_first(&r, 3, 1); /* checked: TIU 1, TIU 2, GDMA 3 */
	/* GDMA 3 starting before TIU 1 ends: a second violation, the first stays TIU 2. */
	p->tracks[g].slices[3].start_ns = 120;
	assert_int_equal(tp_deps_check(p, &r), TP_OK);
	assert_int_equal(r.violated, 2);
	assert_int_equal(r.cmd_id, 2);
	/* A second core whose GDMA 7 [0, 10) waits on its TIU 7 [5, 20): with the cores on
	 * several threads, the same counts and still core 0's TIU 2 first. */
	int t1 = tp_profile_add_track(p, 0, 1, TP_TRACK_TIU, NULL, 1000);
	int g1 = tp_profile_add_track(p, 0, 1, TP_TRACK_GDMA, NULL, 1000);
	struct tp_slice *s = tp_track_push(p, t1);
	s->cmd_id = 7;
	s->start_ns = 5;
	tp_slice_set_end(p, &p->tracks[t1], s, 20);
	s = tp_track_push(p, g1);
	s->cmd_id = 7;
	s->dep_id = 7;
	tp_slice_set_end(p, &p->tracks[g1], s, 10);
	/* Each track in parts of 1, 2, 3 slices or one: the same report; then again with core 0's
	 * GDMA records out of id order (its index is sorted, across parts too). */
	static const size_t parts[] = {1, 2, 3, 0};
	for (int reversed = 0; reversed < 2; reversed++) {
		for (unsigned jobs = 1; jobs <= 3; jobs += 2) {
			for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
				memset(&r, 0xA5, sizeof r);
				assert_int_equal(tp_deps_check_parts(p, jobs, parts[k], &r), TP_OK);
				expect_tiu2_first(&r, 4, 3);
			}
		}
		struct tp_slice *v = p->tracks[g].slices, tmp;
		for (size_t i = 0, j = p->tracks[g].count - 1; i < j; i++, j--) {
			tmp = v[i];
			v[i] = v[j];
			v[j] = tmp;
		}
	}
	tp_profile_free(p);
}

int main(void)
{
	sgt_setup("bmprofile", "bmp_read_test_tmp");
	const struct CMUnitTest tests[] = {
#include "tp_test_cases.h"
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
