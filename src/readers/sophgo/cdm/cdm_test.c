/*
 * cdm_test.c — unit tests of the cdm_profile_data reader (cdm_file.c, cdm_hdr.c,
 * cdm_reader.c): the global.profile parser's tolerance and its errors, the BM1690 descriptor
 * header decoder, the block walk over the commented fixture tests/fixtures/cdm/
 * cdmlib_small.hex, a tiny directory read end to end, out-of-memory at every allocation, and
 * how many core files are read at once (sg_wave).
 * The real dump and generated 8-core dumps are tested end to end in tests/cli/test_cdm.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hexfile.h"
#include "readers/sophgo/cdm/cdm_int.h"
#include "readers/sophgo/sg_testutil.h"
#include "readers/sophgo/sophgo.h"

static char fixture[2048], tmpdir[2048];

static void setup_paths(void)
{
	const char *src = getenv("TP_SOURCE_DIR");
	const char *bin = getenv("TP_BINARY_DIR");
	snprintf(fixture, sizeof fixture, "%s/tests/fixtures/cdm/cdmlib_small.hex",
	         src ? src : "../..");
	snprintf(tmpdir, sizeof tmpdir, "%s/cdm_test_tmp", bin ? bin : "/tmp");
	mkdir(tmpdir, 0777);
}

static int parse(const char *text, struct cdm_global *g, struct tp_diag *d)
{
	memset(d, 0, sizeof *d);
	return cdm_global_parse(text, strlen(text), "global.profile", g, d);
}

static void test_global_tolerant(void **state)
{
	(void)state;
	struct cdm_global g;
	struct tp_diag d;
	assert_int_equal(parse("bmodel\r\n  arch = 8800 \r\n\r\n[bmprofile] tpu_freq=1000\r\n"
	                       "new_key=whatever\nline without equals\ncore3_gdma_record = 17\n"
	                       "cdma_port2_record=0\ntail_offset_ns=-5\n",
	                       &g, &d),
	                 TP_OK);
	assert_true(g.bmodel);
	assert_int_equal(g.arch_raw, 8800);
	assert_int_equal(g.arch_line, 2);
	assert_int_equal(g.tpu_freq, 1000);
	assert_int_equal(g.rec[3][1], 18); /* value + 1 */
	assert_int_equal(g.cdma_rec[2], 1);
	assert_int_equal(g.tail_offset_ns, -5);
	assert_int_equal(g.unknown_keys, 1);
	assert_int_equal(parse("\xef\xbb\xbf"
	                       "arch=6\n",
	                       &g, &d),
	                 TP_OK);
	assert_int_equal(g.arch_raw, 6);
}

static void test_global_errors(void **state)
{
	(void)state;
	struct cdm_global g;
	struct tp_diag d;
	assert_int_equal(parse("tpu_freq=1000\n", &g, &d), TP_EFORMAT);
	assert_string_equal(d.msg, "global.profile: no arch= line");
	assert_int_equal(parse("arch=5\ntpu_freq=fast\n", &g, &d), TP_EFORMAT);
	assert_string_equal(d.msg, "global.profile:2: tpu_freq: 'fast' is not an integer");
	assert_int_equal(parse("arch=5\ncore0_tiu_record=1\n", &g, &d), TP_EFORMAT);
	assert_non_null(
	    strstr(d.msg, "global.profile:2: core0_tiu_record=1: profile raw data is invalid"));
	assert_int_equal(parse("arch=5\ncore1_sdma_record=64\nmax_record_num=64\n", &g, &d),
	                 TP_EFORMAT);
	assert_string_equal(d.msg, "global.profile:2: 64 records exceed max_record_num=64: the PMU "
	                           "buffer overflowed");
	assert_int_equal(parse("arch=5\ncore1_sdma_record=63\nmax_record_num=64\n", &g, &d), TP_OK);
}

/* Decodes b with the header decoder and the table decoder (regdef_bm1690.c) and checks they
 * agree on size, class codes, kind, direction, DMA data type and dependency; the table path
 * also points at the class and the bytes. Returns the size. */
static size_t both(const struct sg_decoder *dec, int engine, const uint8_t *b, size_t n)
{
	struct cdm_cmd h, t;
	size_t nh = cdm_desc_decode(engine, b, n, &h);
	size_t nt = cdm_desc_decode_dec(dec, engine, b, n, &t);
	assert_int_equal(nh, nt);
	if (!nt) {
		assert_null(t.cls);
		return 0;
	}
	assert_int_equal(h.op, t.op);
	assert_int_equal(h.sub, t.sub);
	assert_int_equal(h.kind, t.kind);
	assert_int_equal(h.dir, t.dir);
	assert_int_equal(h.dep, t.dep);
	if (engine != CDM_TIU)
		assert_int_equal(h.dtype, t.dtype);
	assert_non_null(t.cls);
	assert_ptr_equal(t.raw, b);
	assert_int_equal(t.cls->bytes, nt);
	return nt;
}

static void test_desc_table_matches_headers(void **state)
{
	(void)state;
	struct sg_decoder *dec = NULL;
	assert_int_equal(sg_decoder_new(&sg_isa_bm1690, 5, &dec), TP_OK);
	uint8_t b[128];
	/* TIU: short AR add (512 bits), long CONV with a dependency, SYS wait_msg, sMM2.nt. */
	memset(b, 0, sizeof b);
	b[0] = 1;
	b[5] = (uint8_t)(3 << 1 | 2 << 5);
	assert_int_equal(both(dec, CDM_TIU, b, sizeof b), 64);
	assert_int_equal(both(dec, CDM_TIU, b, 40), 0); /* does not fit */
	memset(b, 0, sizeof b);
	b[2] = 5 << 1; /* cmd_id_dep (bit 17) = 5 */
	b[4] = 0x20;   /* bit 37 = cmd_id_dep bit 20: kept in the register, not in the id */
	assert_int_equal(both(dec, CDM_TIU, b, sizeof b), 128);
	memset(b, 0, sizeof b);
	b[5] = (uint8_t)(15 << 1 | (9 & 7) << 5);
	b[6] = (uint8_t)(9 >> 3);
	assert_int_equal(both(dec, CDM_TIU, b, sizeof b), 16);
	memset(b, 0, sizeof b);
	b[0] = 1;
	b[5] = (uint8_t)(2 << 1 | (5 & 7) << 5);
	assert_int_equal(both(dec, CDM_TIU, b, sizeof b), 32);
	/* GDMA tensor L2M -> LMEM and DDR -> LMEM, FP16; SDMA sys_wait; CDMA read. */
	memset(b, 0, sizeof b);
	b[5] = 1 << 1;
	b[69] = 30;
	b[77] = 31;
	assert_int_equal(both(dec, CDM_GDMA, b, sizeof b), 96);
	b[69] = 2;
	assert_int_equal(both(dec, CDM_GDMA, b, sizeof b), 96);
	memset(b, 0, sizeof b);
	b[0] = 1 << 3; /* cmd_short */
	b[4] = (uint8_t)(6 | 4 << 5);
	assert_int_equal(both(dec, CDM_SDMA, b, sizeof b), 16);
	memset(b, 0, sizeof b);
	b[0] = 1 << 4;
	assert_int_equal(both(dec, CDM_CDMA, b, sizeof b), 64);
	sg_decoder_free(dec);
}

static void test_desc_headers(void **state)
{
	(void)state;
	uint8_t b[128];
	struct cdm_cmd c;
	const char *type, *name;
	char buf[96];
	/* TIU short AR arith.add: cmd_short 1, tsk_typ 3 @41, eu 2 @45 -> 512 bits. */
	memset(b, 0, sizeof b);
	b[0] = 1;
	b[5] = (uint8_t)(3 << 1 | 2 << 5);
	assert_int_equal(cdm_desc_decode(CDM_TIU, b, sizeof b, &c), 64);
	cdm_cmd_names(&c, &type, &name, buf, sizeof buf);
	assert_string_equal(type, "sAR");
	assert_string_equal(name, "arith.add");
	assert_int_equal(c.kind, TP_CMD_NORMAL);
	/* Does not fit: 64 bytes needed. */
	assert_int_equal(cdm_desc_decode(CDM_TIU, b, 40, &c), 0);
	/* SYS wait_msg (15/9), 128 bits, a wait. */
	memset(b, 0, sizeof b);
	b[5] = (uint8_t)(15 << 1 | (9 & 7) << 5);
	b[6] = (uint8_t)(9 >> 3);
	assert_int_equal(cdm_desc_decode(CDM_TIU, b, sizeof b, &c), 16);
	assert_int_equal(c.kind, TP_CMD_SYS_WAIT);
	cdm_cmd_names(&c, &type, &name, buf, sizeof buf);
	assert_string_equal(name, "system.wait_msg");
	/* tsk_typ 11 is no BM1690 class: unknown. */
	memset(b, 0, sizeof b);
	b[5] = (uint8_t)(11 << 1);
	assert_int_equal(cdm_desc_decode(CDM_TIU, b, sizeof b, &c), 0);
	/* GDMA tensor, src tag 30 (L2M) at bits 552.., dst tag 31 (LMEM) at 616..: 768 bits. */
	memset(b, 0, sizeof b);
	b[5] = 1 << 1; /* src_data_format FP16 at bit 41 */
	b[69] = 30;    /* bits 552..559 = src_start_addr_h13 >> 8 */
	b[77] = 31;    /* bits 616..623 = dst_start_addr_h13 >> 8 */
	assert_int_equal(cdm_desc_decode(CDM_GDMA, b, sizeof b, &c), 96);
	assert_int_equal(c.dir, TP_DIR_L2_TO_LMEM);
	assert_int_equal(c.dtype, TP_DT_FP16);
	cdm_cmd_names(&c, &type, &name, buf, sizeof buf);
	assert_string_equal(type, "DMA_tensor");
	assert_string_equal(name, "tensor");
	b[69] = 2; /* DDR */
	cdm_desc_decode(CDM_GDMA, b, sizeof b, &c);
	cdm_cmd_names(&c, &type, &name, buf, sizeof buf);
	assert_string_equal(name, "tensorLd");
	/* sDMA_sys sys_wait: cmd_type 6 @32, sp 4 @37 -> 128 bits, a wait. */
	memset(b, 0, sizeof b);
	b[4] = (uint8_t)(6 | 4 << 5);
	assert_int_equal(cdm_desc_decode(CDM_SDMA, b, sizeof b, &c), 16);
	assert_int_equal(c.kind, TP_CMD_SYS_WAIT);
	/* CDMA read: cmd_type 1 @4 -> 512 bits. */
	memset(b, 0, sizeof b);
	b[0] = 1 << 4;
	assert_int_equal(cdm_desc_decode(CDM_CDMA, b, sizeof b, &c), 64);
	cdm_cmd_names(&c, &type, &name, buf, sizeof buf);
	assert_string_equal(name, "cdma.read");
}

static void test_walk_fixture(void **state)
{
	(void)state;
	uint8_t *b;
	size_t n;
	assert_int_equal(tp_test_hex_load(fixture, &b, &n), 0);
	struct cdm_walk w;
	struct tp_diag d = {0};
	assert_int_equal(cdm_walk(b, n, "f", sg_chip_by_arch(TP_ARCH_BM1690), &w, &d), TP_OK);
	assert_int_equal(w.blocks_read, 5);
	assert_int_equal(w.blocks_skipped, 1);
	assert_int_equal(w.npmu, 2);
	assert_int_equal(w.pmu[0].engine, CDM_TIU);
	assert_int_equal(w.pmu[0].count, 4);
	assert_int_equal(w.pmu[1].count, 3);
	struct cdm_pmu r;
	cdm_pmu_decode(b, &w.pmu[1], 2, &r);
	assert_int_equal(r.start, 3800);
	assert_int_equal(r.bytes, 4096);
	assert_int_equal(r.stall, 2);
	assert_int_equal(w.dyn_records, 8);
	assert_int_equal(w.dyn[CDM_TIU].n, 4);
	assert_int_equal(w.dyn[CDM_GDMA].n, 3);
	assert_int_equal(w.extra_used, 1);
	assert_int_equal(w.dyn[CDM_TIU].v[0].kind, TP_CMD_SYS_WAIT);
	assert_int_equal(w.dyn[CDM_GDMA].v[2].dir, TP_DIR_DDR_TO_LMEM);
	assert_int_equal(w.dyn[CDM_GDMA].v[2].dtype, TP_DT_FP16);
	cdm_walk_free(&w);
	/* Every prefix either walks or fails with a located message. */
	for (size_t k = 0; k < n; k++) {
		memset(&d, 0, sizeof d);
		int rc = cdm_walk(b, k, "f", sg_chip_by_arch(TP_ARCH_BM1690), &w, &d);
		if (rc == TP_OK)
			cdm_walk_free(&w);
		else
			assert_true(strncmp(d.msg, "f@0x", 4) == 0);
	}
	free(b);
}

static const char *make_dir(const char *name)
{
	static char dir[4096];
	snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
	mkdir(dir, 0777);
	char p[4200];
	snprintf(p, sizeof p, "%s/global.profile", dir);
	static const char g[] = "arch=8800\ntpu_freq=1000\ntail_offset_ns=777\n";
	assert_int_equal(tp_test_write_file(p, g, sizeof g - 1), 0);
	uint8_t *b;
	size_t n;
	assert_int_equal(tp_test_hex_load(fixture, &b, &n), 0);
	snprintf(p, sizeof p, "%s/cdmlib0_0.profile", dir);
	assert_int_equal(tp_test_write_file(p, b, n), 0);
	free(b);
	return dir;
}

static void test_read_small(void **state)
{
	(void)state;
	const char *dir = make_dir("small");
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	assert_int_equal(tp_cdm_read(dir, NULL, &p, &d), TP_OK);
	assert_string_equal(tp_profile_get_meta(p, "arch"), "BM1690");
	assert_string_equal(tp_profile_get_meta(p, "tail_offset_ns"), "777");
	assert_string_equal(tp_profile_get_meta(p, "cdm_mode"), "2 (DYN_EXTRA)");
	int t = tp_profile_find_track(p, 0, 0, TP_TRACK_TIU);
	int g = tp_profile_find_track(p, 0, 0, TP_TRACK_GDMA);
	assert_true(t >= 0 && g >= 0);
	const struct tp_track *tt = &p->tracks[t], *gt = &p->tracks[g];
	assert_int_equal(tt->count, 2);
	assert_int_equal(gt->count, 1);
	/* Zero = the earliest kept start (GDMA 3800); TIU 4000..4100 -> 200..300. */
	assert_int_equal(gt->slices[0].start_ns, 0);
	assert_int_equal(gt->slices[0].cycles, 191);
	assert_int_equal(tp_slice_bytes(gt, &gt->slices[0]), 4096);
	assert_string_equal(tp_str(p, tp_slice_name(gt, &gt->slices[0])), "tensorLd");
	assert_int_equal(tp_slice_dir(gt, &gt->slices[0]), TP_DIR_DDR_TO_LMEM);
	assert_int_equal(tt->slices[0].start_ns, 200);
	assert_int_equal(tp_slice_end(tt, &tt->slices[0]), 300);
	assert_int_equal(tt->slices[0].cmd_id, 1);
	assert_string_equal(tp_str(p, tp_slice_name(tt, &tt->slices[0])), "conv.normal");
	assert_string_equal(tp_str(p, tp_slice_name(tt, &tt->slices[1])), "arith.add");
	assert_int_equal(tt->slices[1].cmd_id, 2);
	/* pmu_tail_cycle: last end (TIU 4300) - zero (3800). */
	assert_string_equal(tp_profile_get_meta(p, "pmu_tail_cycle"), "500");
	assert_int_equal(p->stats.records_dropped, 4);
	tp_profile_free(p);
}

static int read_dir(const char *dir, struct tp_profile **p, struct tp_diag *d)
{
	return tp_cdm_read(dir, NULL, p, d);
}

static void test_read_small_oom(void **state)
{
	(void)state;
	sgt_oom_sweep(read_dir, make_dir("oom"), 5000, 1);
}

/* Step 9 drops the sys commands at both ends of a track after the commands were matched, so
 * the TIU costs (one id per slice) must move with their slices. */
static void test_omit_sys_keeps_costs(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	int t = tp_profile_add_track(p, 0, 0, TP_TRACK_TIU, "TIU", 1000);
	assert_true(t >= 0);
	static const uint8_t kinds[6] = {TP_CMD_SYS_SEND, TP_CMD_SYS,    TP_CMD_NORMAL,
	                                 TP_CMD_SYS_WAIT, TP_CMD_NORMAL, TP_CMD_SYS};
	for (int i = 0; i < 6; i++) {
		struct tp_slice *s = tp_track_push(p, t);
		assert_non_null(s);
		s->start_ns = 10 * i;
		s->cmd_id = (uint32_t)i;
		assert_int_equal(tp_slice_set_kind(p, &p->tracks[t], s, kinds[i]), TP_OK);
	}
	for (int i = 0; i < 6; i++) {
		struct tp_cost c = {.alg_ops = 100u + (uint64_t)i, .uarch_ops = 7, .valid = 1};
		assert_int_equal(tp_track_set_cost(p, t, (size_t)i, &c), TP_OK);
	}
	struct tp_track *tr = &p->tracks[t];
	assert_int_equal(cdm_omit_sys(tr), 3); /* two at the head, one at the tail */
	assert_int_equal(tr->count, 3);
	for (size_t k = 0; k < 3; k++) {
		struct tp_cost c;
		assert_int_equal(tp_track_get_cost(tr, k, &c), 1); /* valid */
		assert_int_equal(tr->slices[k].cmd_id, k + 2);
		assert_int_equal(c.alg_ops, 100 + k + 2);
	}
	assert_int_equal(cdm_omit_sys(tr), 0); /* nothing left to drop */
	tp_profile_free(p);
}

/* ---- read_cores: the same profile for every thread count -------------------------------- */

/* The ThreadSanitizer build (TP_TEST_TSAN=1) runs ~20x slower: smaller dumps there. */
static int tsan(void)
{
	const char *e = getenv("TP_TEST_TSAN");
	return e && *e == '1';
}

/* Writes a generated cdm dump (tools/gendump) into tmpdir/name; returns its path. */
static const char *gen_dir(const char *name, const char *args)
{
	static char dir[4096];
	char cmd[8192];
	const char *bin = getenv("TP_BINARY_DIR");
	snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
	snprintf(cmd, sizeof cmd,
	         "rm -rf '%s' && '%s/tpuprof-gendump' --format cdm --arch BM1690 "
	         "--quiet %s '%s'",
	         dir, bin ? bin : ".", args, dir);
	assert_int_equal(system(cmd), 0);
	return dir;
}

static struct tp_profile *read_parts(const char *dir, int detail, int jobs, size_t part,
                                     struct tp_diag *d, int *rc)
{
	struct tp_bmprofile_opts o = {.detail = detail, .jobs = jobs, .part = part};
	struct tp_profile *p = NULL;
	memset(d, 0, sizeof *d);
	*rc = tp_cdm_read(dir, &o, &p, d);
	return p;
}

static struct tp_profile *read_jobs(const char *dir, int detail, int jobs, struct tp_diag *d,
                                    int *rc)
{
	return read_parts(dir, detail, jobs, 0, d, rc);
}

/* Everything read_cores decides: tracks, every slice with its label's strings, cost, the
 * notes in order, the statistics; with `strings`, the string table's size and the labels'
 * ids too (argument sets add their keys, and names take other ways to their labels). */
static void same_profile(const struct tp_profile *a, const struct tp_profile *b, int strings)
{
	assert_int_equal(a->num_tracks, b->num_tracks);
	for (size_t i = 0; i < a->num_tracks; i++) {
		const struct tp_track *x = &a->tracks[i], *y = &b->tracks[i];
		assert_string_equal(tp_str(a, x->name), tp_str(b, y->name));
		assert_int_equal(x->core, y->core);
		assert_int_equal(x->count, y->count);
		if (strings)
			assert_int_equal(x->num_labels, y->num_labels);
		for (size_t k = 0; k < x->count; k++) {
			const struct tp_slice *s = &x->slices[k], *u = &y->slices[k];
			assert_int_equal(s->start_ns, u->start_ns);
			assert_int_equal(tp_slice_end(x, s), tp_slice_end(y, u));
			assert_int_equal(s->cmd_id, u->cmd_id);
			assert_int_equal(s->dep_id, u->dep_id);
			assert_int_equal(s->cycles, u->cycles);
			const struct tp_label *l = tp_slice_label(x, s), *m = tp_slice_label(y, u);
			assert_string_equal(tp_str(a, l->name), tp_str(b, m->name));
			assert_string_equal(tp_str(a, l->type), tp_str(b, m->type));
			assert_int_equal(l->kind, m->kind);
			assert_int_equal(l->dir, m->dir);
			assert_int_equal(l->bytes, m->bytes);
			assert_int_equal(l->stall, m->stall);
			assert_int_equal(l->depth, m->depth);
			if (strings)
				assert_int_equal(s->label, u->label);
			struct tp_cost c1, c2;
			tp_track_get_cost(x, k, &c1);
			tp_track_get_cost(y, k, &c2);
			assert_memory_equal(&c1, &c2, sizeof c1);
		}
	}
	assert_int_equal(a->num_notes, b->num_notes);
	for (size_t i = 0; i < a->num_notes; i++)
		assert_string_equal(tp_str(a, a->notes[i].text), tp_str(b, b->notes[i].text));
	assert_memory_equal(&a->stats, &b->stats, sizeof a->stats);
	if (strings)
		assert_int_equal(a->strs.count, b->strs.count);
}

static void test_read_jobs_same(void **state)
{
	(void)state;
	int n = tsan() ? 1500 : 6000;
	char args[3][128];
	snprintf(args[0], sizeof args[0], "--cores 5 --cmds %d --mode 1 --cdma-ports 2 --seed 7",
	         n);
	snprintf(args[1], sizeof args[1], "--cores 3 --cmds %d --mode bmodel --seed 8", n);
	snprintf(args[2], sizeof args[2], "--cores 4 --cmds %d --mode 2 --seed 9", n);
	static const int jobs[] = {2, 3, 8};
	for (int g = 0; g < 3; g++) {
		const char *dir = gen_dir("jobs", args[g]);
		/* OFF: names through core_names / core_relabel; AUTO: argument sets, the records of
		 * each core read on the calling thread, names set directly. Both give the same
		 * slices. */
		struct tp_profile *off = NULL;
		for (int det = 0; det < 2; det++) {
			int detail = det ? TP_BMPROFILE_DETAIL_AUTO : TP_BMPROFILE_DETAIL_OFF, rc;
			struct tp_diag d;
			struct tp_profile *one = read_jobs(dir, detail, 1, &d, &rc);
			assert_int_equal(rc, TP_OK);
			assert_true(one->num_tracks >= 6);
			for (size_t j = 0; j < (tsan() ? 1 : sizeof jobs / sizeof *jobs); j++) {
				struct tp_profile *many = read_jobs(dir, detail, jobs[j], &d, &rc);
				assert_int_equal(rc, TP_OK);
				same_profile(one, many, 1);
				tp_profile_free(many);
			}
			if (!det) {
				off = one;
				continue;
			}
			same_profile(off, one, 0);
			tp_profile_free(off);
			tp_profile_free(one);
		}
	}
}

/* Makes the PMU records of core file `core` of dump dir more like the hardware's than the
 * generator's: 16-bit ids, `shift` added (the reader's unwrap, step 1, gives ids that grow
 * again; 65530: the first wrap 6 records in), GDMA records on both threads with stalls their
 * bytes do not decide (the generator's do), and GDMA init records that count bytes. */
static void make_real(const char *dir, unsigned core, uint32_t shift)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/cdmlib0_%u.profile", dir, core);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size_t n = (size_t)ftell(f);
	uint8_t *b = malloc(n);
	assert_non_null(b);
	rewind(f);
	assert_int_equal(fread(b, 1, n, f), n);
	struct cdm_walk w;
	struct tp_diag d = {0};
	assert_int_equal(cdm_walk(b, n, path, sg_chip_by_arch(TP_ARCH_BM1690), &w, &d), TP_OK);
	size_t wrapped = 0, gdma = 0;
	for (size_t k = 0; k < w.npmu; k++)
		for (size_t i = 0; w.pmu[k].engine != CDM_CDMA && i < w.pmu[k].count; i++) {
			uint8_t *p = b + w.pmu[k].off + i * cdm_pmu_rec_size(w.pmu[k].engine);
			uint32_t id = (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 |
			              (uint32_t)p[11] << 24;
			id += shift;
			wrapped += id > 0xFFFFu;
			p[8] = (uint8_t)id;
			p[9] = (uint8_t)(id >> 8);
			p[10] = p[11] = 0;
			if (w.pmu[k].engine != CDM_GDMA)
				continue;
			p[12] = (uint8_t)(p[12] | (gdma & 1)); /* the thread */
			p[16] = (uint8_t)(gdma % 5);           /* a stall the bytes do not decide */
			if (gdma++ < 2)
				p[21] = (uint8_t)(16 + gdma); /* bytes */
		}
	assert_true(wrapped > 0);
	cdm_walk_free(&w);
	rewind(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	free(b);
}

/* An engine read in parts (cdm_eparts.c) gives what core_engine's one pass gives, labels and
 * their ids included: parts of 1 to 4096 records (one whole pass: SIZE_MAX) on 1, 3 and 8
 * threads, with the commands of DYN_DATA, the bmodel's descriptors (TIU costs) and DYN_EXTRA,
 * without commands (PMU only: all unmatched), and across the counters' wraps: the cycle
 * counter (--wrap) and 16-bit ids (make_real; core 1 keeps the generator's records). In the
 * small dumps the ids first wrap 6 records in, on a boundary of the parts of one record. */
static void test_read_parts_same(void **state)
{
	(void)state;
	int big = 150000; /* GDMA and TIU ids past 2^16 */
	char args[4][128];
	snprintf(args[0], sizeof args[0], "--cores 2 --cmds %d --mode 1 --wrap --seed 11", big);
	snprintf(args[1], sizeof args[1], "--cores 2 --cmds 3000 --mode bmodel --seed 12");
	snprintf(args[2], sizeof args[2], "--cores 2 --cmds 3000 --mode 2 --wrap --seed 13");
	snprintf(args[3], sizeof args[3], "--cores 2 --cmds 3000 --mode 0 --seed 14");
	static const size_t parts[] = {1, 7, 1000, 4096};
	static const int jobs[] = {1, 3, 8};
	for (int g = 0; g < 4; g++) {
		const char *dir = gen_dir("parts", args[g]);
		make_real(dir, 0, g ? 65530u : 0);
		int rc;
		struct tp_diag d;
		struct tp_profile *one =
		    read_parts(dir, TP_BMPROFILE_DETAIL_OFF, 1, SIZE_MAX, &d, &rc);
		assert_int_equal(rc, TP_OK);
		int wraps = 0;
		for (size_t i = 0; i < one->num_notes; i++)
			wraps += strstr(tp_str(one, one->notes[i].text), "wrapped") != NULL;
		assert_int_equal(wraps, g == 0 || g == 2 ? 2 : 1); /* ids, and cycles (--wrap) */
		/* (the large dump in parts of 1000 and more: each part allocates its own memos) */
		for (size_t q = g == 0 ? 2 : 0; q < sizeof parts / sizeof *parts; q++)
			for (size_t j = tsan(); j < (tsan() ? 2 : sizeof jobs / sizeof *jobs);
			     j++) {
				struct tp_profile *many = read_parts(dir, TP_BMPROFILE_DETAIL_OFF,
				                                     jobs[j], parts[q], &d, &rc);
				assert_int_equal(rc, TP_OK);
				same_profile(one, many, 1);
				tp_profile_free(many);
			}
		tp_profile_free(one);
	}
}

static void same_cmds(const struct cdm_cmds *a, const struct cdm_cmds *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct cdm_cmd *x = &a->v[i], *y = &b->v[i];
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->dep, y->dep);
		assert_int_equal(x->engine, y->engine);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->dir, y->dir);
		assert_int_equal(x->dtype, y->dtype);
		assert_int_equal(x->op, y->op);
		assert_int_equal(x->sub, y->sub);
		assert_int_equal(x->is_short, y->is_short);
		assert_int_equal(x->known, y->known);
		assert_int_equal(x->port, y->port);
		assert_ptr_equal(x->cls, y->cls);
		assert_ptr_equal(x->raw, y->raw);
	}
}

/* Walks b[0..n) in one pass and in parts of each size on 1 and 3 threads: the same result
 * (rc, message, spans, commands, counters) every time. */
static void walk_parts_agree(const uint8_t *b, size_t n)
{
	const struct sg_chip *chip = sg_chip_by_arch(TP_ARCH_BM1690);
	static const size_t parts[] = {1, 3, 7, 1000};
	struct cdm_walk one, many;
	struct tp_diag d1 = {0}, d2;
	int rc = cdm_walk_jobs(b, n, "f", chip, NULL, 1, 0, &one, &d1);
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
		for (unsigned t = 1; t <= 3; t += 2) {
			memset(&d2, 0, sizeof d2);
			assert_int_equal(
			    cdm_walk_jobs(b, n, "f", chip, NULL, t, parts[k], &many, &d2), rc);
			assert_string_equal(d1.msg, d2.msg);
			if (rc != TP_OK)
				continue;
			assert_int_equal(one.npmu, many.npmu);
			for (size_t i = 0; i < one.npmu; i++) {
				assert_int_equal(one.pmu[i].engine, many.pmu[i].engine);
				assert_int_equal(one.pmu[i].off, many.pmu[i].off);
				assert_int_equal(one.pmu[i].count, many.pmu[i].count);
			}
			for (int e = 0; e < CDM_NENG; e++) {
				same_cmds(&one.des[e], &many.des[e]);
				same_cmds(&one.dyn[e], &many.dyn[e]);
			}
			assert_int_equal(one.dyn_v2, many.dyn_v2);
			assert_int_equal(one.have_dyn, many.have_dyn);
			assert_int_equal(one.partial_bytes, many.partial_bytes);
			assert_int_equal(one.dyn_records, many.dyn_records);
			assert_int_equal(one.dyn_other, many.dyn_other);
			assert_int_equal(one.extra_used, many.extra_used);
			cdm_walk_free(&many);
		}
	if (rc == TP_OK)
		cdm_walk_free(&one);
}

/* The offset of the header of b's first DYN_DATA block (its length in *len), or SIZE_MAX. */
static size_t dyn_block(const uint8_t *b, size_t n, uint32_t *len)
{
	for (size_t off = 0; off + 8 <= n;) {
		uint32_t type, l;
		memcpy(&type, b + off, 4);
		memcpy(&l, b + off + 4, 4);
		if (l > n - off - 8)
			return SIZE_MAX;
		if (type == 5) {
			*len = l;
			return off;
		}
		off += 8 + (size_t)l;
	}
	return SIZE_MAX;
}

/* b[0..n) with its first DYN_DATA block split into two blocks at record k (*m bytes, caller
 * frees), or NULL when it has none that long. */
static uint8_t *split_dyn(const uint8_t *b, size_t n, size_t k, size_t *m)
{
	uint32_t len;
	size_t off = dyn_block(b, n, &len);
	if (off == SIZE_MAX || (size_t)len < 8 * k)
		return NULL;
	uint8_t *c = malloc(n + 8);
	assert_non_null(c);
	uint32_t a = (uint32_t)(8 * k), r = len - a;
	memcpy(c, b, off + 4);
	memcpy(c + off + 4, &a, 4);
	memcpy(c + off + 8, b + off + 8, a);
	memcpy(c + off + 8 + a, b + off, 4);
	memcpy(c + off + 12 + a, &r, 4);
	memcpy(c + off + 16 + a, b + off + 8 + a, n - off - 8 - a);
	*m = n + 8;
	return c;
}

/* A DYN_DATA stream is one stream whatever its blocks: c (b split by split_dyn) has b's
 * commands and counts. */
static void split_same(const uint8_t *b, size_t n, const uint8_t *c, size_t m)
{
	const struct sg_chip *chip = sg_chip_by_arch(TP_ARCH_BM1690);
	struct cdm_walk x, y;
	struct tp_diag d = {0};
	assert_int_equal(cdm_walk(b, n, "f", chip, &x, &d), TP_OK);
	assert_int_equal(cdm_walk_jobs(c, m, "f", chip, NULL, 3, 2, &y, &d), TP_OK);
	for (int e = 0; e < CDM_NENG; e++)
		assert_int_equal(x.dyn[e].n, y.dyn[e].n);
	for (int e = 0; e < CDM_NENG; e++)
		for (size_t i = 0; i < x.dyn[e].n; i++) {
			assert_int_equal(x.dyn[e].v[i].id, y.dyn[e].v[i].id);
			assert_int_equal(x.dyn[e].v[i].op, y.dyn[e].v[i].op);
			assert_int_equal(x.dyn[e].v[i].dtype, y.dyn[e].v[i].dtype);
		}
	assert_int_equal(x.dyn_records, y.dyn_records);
	assert_int_equal(x.dyn_other, y.dyn_other);
	assert_int_equal(x.extra_used, y.extra_used);
	cdm_walk_free(&x);
	cdm_walk_free(&y);
}

/* The fixture's PMU records zeroed one at a time and two at a time: each span ends at its
 * first all-zero record, whichever part it falls in. */
static void walk_zero_records(uint8_t *b, size_t n)
{
	struct cdm_walk w;
	struct tp_diag d = {0};
	assert_int_equal(cdm_walk(b, n, "f", sg_chip_by_arch(TP_ARCH_BM1690), &w, &d), TP_OK);
	size_t np = w.npmu;
	struct cdm_span sp[8];
	assert_true(np <= 8);
	memcpy(sp, w.pmu, np * sizeof *sp);
	cdm_walk_free(&w);
	uint8_t keep[2][128];
	for (size_t k = 0; k < np; k++) {
		size_t rs = cdm_pmu_rec_size(sp[k].engine);
		for (size_t i = 0; i < sp[k].count; i++)
			for (size_t j = i; j < sp[k].count; j++) {
				uint8_t *x = b + sp[k].off + i * rs, *y = b + sp[k].off + j * rs;
				memcpy(keep[0], x, rs);
				memcpy(keep[1], y, rs);
				memset(x, 0, rs);
				memset(y, 0, rs);
				walk_parts_agree(b, n);
				memcpy(y, keep[1], rs);
				memcpy(x, keep[0], rs);
			}
	}
}

/* The walk in parts (cdm_walk_jobs) against one pass: the fixture, the fixture with each byte
 * changed (layouts refused or taken as v2, errors) or PMU records zeroed, DYN_DATA streams of
 * two blocks, and the core files of generated dumps in the three command modes (DYN_DATA,
 * DYN_EXTRA, descriptor streams). */
static void test_walk_parts(void **state)
{
	(void)state;
	uint8_t *b;
	size_t n;
	assert_int_equal(tp_test_hex_load(fixture, &b, &n), 0);
	walk_parts_agree(b, n);
	for (size_t k = 0; k < n; k++) {
		uint8_t keep = b[k];
		for (int v = 0; v < 2; v++) {
			b[k] = v ? 0xFF : 0;
			walk_parts_agree(b, n);
		}
		b[k] = keep;
	}
	walk_zero_records(b, n);
	for (size_t k = 1; k < 9; k++) {
		size_t m;
		uint8_t *c = split_dyn(b, n, k, &m);
		assert_non_null(c);
		walk_parts_agree(c, m);
		split_same(b, n, c, m);
		free(c);
	}
	/* Each block's first record is not checked for layout v1 (the stream's first is the
	 * init record): a bad type there does not stop the walk. */
	uint32_t len;
	size_t off = dyn_block(b, n, &len);
	assert_true(off != SIZE_MAX && len >= 16);
	struct cdm_walk w;
	struct tp_diag d = {0};
	b[off + 8] = 0xFF;
	assert_int_equal(
	    cdm_walk_jobs(b, n, "f", sg_chip_by_arch(TP_ARCH_BM1690), NULL, 3, 1, &w, &d), TP_OK);
	assert_int_equal(w.dyn[CDM_TIU].n, 4);
	cdm_walk_free(&w);
	b[off + 16] = 0xFF; /* the second record is checked */
	assert_int_equal(
	    cdm_walk_jobs(b, n, "f", sg_chip_by_arch(TP_ARCH_BM1690), NULL, 3, 1, &w, &d),
	    TP_EFORMAT);
	assert_non_null(strstr(d.msg, "DYN_DATA record 1 has type 255"));
	free(b);
	static const char *const args[] = {"--cores 2 --cmds 3000 --mode 1 --seed 4",
	                                   "--cores 2 --cmds 3000 --mode 2 --seed 5",
	                                   "--cores 2 --cmds 3000 --mode bmodel --seed 6"};
	for (size_t g = 0; g < sizeof args / sizeof *args; g++) {
		const char *dir = gen_dir("walk_parts", args[g]);
		char path[4200];
		snprintf(path, sizeof path, "%s/cdmlib0_1.profile", dir);
		struct tp_file f;
		memset(&d, 0, sizeof d);
		assert_int_equal(tp_file_load(&f, path, &d), TP_OK);
		walk_parts_agree(f.data, f.size);
		size_t m;
		uint8_t *c = split_dyn(f.data, f.size, 1001, &m);
		assert_true(c || g == 2); /* the descriptor streams' dump has no DYN_DATA */
		if (c) {
			walk_parts_agree(c, m);
			split_same(f.data, f.size, c, m);
		}
		free(c);
		tp_file_release(&f);
	}
}

/* sg_wave: the first core always, the next ones while --jobs and the spare memory allow. */
static void test_wave_bound(void **state)
{
	(void)state;
	const uint64_t mb = (uint64_t)1 << 20;
	const uint64_t est[] = {500 * mb, 60 * mb, 60 * mb, 10 * mb, 200 * mb, 0};
	assert_int_equal(sg_wave(est, 0, 6, 16), 3); /* 60 + 60 fit, + 10 does not */
	assert_int_equal(sg_wave(est, 0, 6, 2), 2);
	assert_int_equal(sg_wave(est, 0, 6, 1), 1);
	assert_int_equal(sg_wave(est, 1, 6, 16), 3); /* 60 + 10 fit, + 200 does not */
	assert_int_equal(sg_wave(est, 3, 6, 16), 1); /* 200 alone is over */
	assert_int_equal(sg_wave(est, 4, 6, 16), 2); /* the last core, 0 bytes */
	assert_int_equal(sg_wave(est, 5, 6, 16), 1);
	const uint64_t half = SG_WAVE_SPARE / 2, two[] = {0, half, half, 1};
	assert_int_equal(sg_wave(two, 0, 4, 16), 3); /* exactly the spare fits */
}

/* Two damaged core files: the first in core order is reported, whatever the thread count. */
static void test_read_jobs_first_error(void **state)
{
	(void)state;
	const char *dir = gen_dir("jobs_err", "--cores 4 --cmds 2000 --mode 1 --seed 3");
	char p1[4200], p3[4200];
	snprintf(p1, sizeof p1, "%s/cdmlib0_1.profile", dir);
	snprintf(p3, sizeof p3, "%s/cdmlib0_3.profile", dir);
	struct stat st;
	assert_int_equal(stat(p3, &st), 0);
	assert_int_equal(truncate(p3, st.st_size - 7), 0);
	static const int jobs[] = {1, 2, 4};
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) { /* core 1 as well: it comes first */
			assert_int_equal(stat(p1, &st), 0);
			assert_int_equal(truncate(p1, st.st_size - 5), 0);
		}
		for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++) {
			int rc;
			struct tp_diag d;
			struct tp_profile *p =
			    read_jobs(dir, TP_BMPROFILE_DETAIL_OFF, jobs[j], &d, &rc);
			assert_int_equal(rc, TP_ETRUNC);
			assert_null(p);
			assert_non_null(
			    strstr(d.msg, pass ? "cdmlib0_1.profile@0x" : "cdmlib0_3.profile@0x"));
		}
	}
}

int main(void)
{
	setup_paths();
	const struct CMUnitTest tests[] = {
#include "tp_test_cases.h"
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
