/*
 * bmprofile_test.c — unit tests of the bmprofile reader: the hex fixture loader, the timeline
 * rules of §9.2 one by one, the command decoders of every arch, the global.profile and
 * net_stat.sim parsers, a tiny synthetic BM1688 dump read end to end, every bad-input error
 * (status, exact message, no profile), out-of-memory at every allocation, and the real
 * BM1688 resnet50 dump against the reference converter's numbers (PROVENANCE.txt).
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

#include "hexfile.h"
#include "readers/sophgo/bmprofile/bmp_int.h"
#include "readers/sophgo/sophgo.h"
#include "testutil.h"

/* The layer of node i, read without a cursor. */
static int32_t node_layer(const struct bmp_nodes *nd, size_t i)
{
	struct bmp_node_cursor cur = {0, 0, 0};
	return bmp_nodes_layer(nd, i, &cur);
}

/* Layer i of p, decoded into one of a few rotating buffers (tests hold a handful at once). */
static const struct tp_layer *layer_at(const struct tp_profile *p, size_t i)
{
	static struct tp_layer buf[8];
	static unsigned next;
	return tp_profile_layer(p, i, &buf[next++ % 8]);
}

/* ---------------------------------------------------------------------------------------- */
/* Helpers.                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static char fixdir[2048], tmpdir[2048];

static void setup_paths(void)
{
	const char *src = getenv("TP_SOURCE_DIR");
	const char *bin = getenv("TP_BINARY_DIR");
	snprintf(fixdir, sizeof fixdir, "%s/tests/fixtures/bmprofile", src ? src : "../..");
	snprintf(tmpdir, sizeof tmpdir, "%s/bmprofile_test_tmp", bin ? bin : "/tmp");
	mkdir(tmpdir, 0777);
}

static void rmtree(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		unlink(path);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char p[4096];
		snprintf(p, sizeof p, "%s/%s", path, de->d_name);
		rmtree(p);
	}
	closedir(d);
	rmdir(path);
}

/* Materialises fixture `name` into a fresh temp dir and returns its path (static buffer). */
static const char *make_fixture(const char *name, const char *as)
{
	static char out[4096];
	char src[4096];
	snprintf(src, sizeof src, "%s/%s", fixdir, name);
	snprintf(out, sizeof out, "%s/%s", tmpdir, as);
	rmtree(out);
	assert_int_equal(tp_test_fixture_dir(src, out), 0);
	return out;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)sz + 1);
	assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*n = (size_t)sz;
	return b;
}

static void put_u32(const char *path, size_t off, uint32_t v)
{
	size_t n;
	uint8_t *b = slurp(path, &n);
	assert_true(off + 4 <= n);
	for (int i = 0; i < 4; i++)
		b[off + (size_t)i] = (uint8_t)(v >> (8 * i));
	assert_int_equal(tp_test_write_file(path, b, n), 0);
	free(b);
}

static const struct tp_track *track(const struct tp_profile *p, int core, enum tp_track_kind k)
{
	int t = tp_profile_find_track(p, 0, core, k);
	assert_true(t >= 0);
	return &p->tracks[t];
}

static const struct tp_slice *by_cmd(const struct tp_track *t, uint32_t cmd_id)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->slices[i].cmd_id == cmd_id)
			return &t->slices[i];
	fail_msg("no slice with cmd_id %u", cmd_id);
	return NULL;
}

static int64_t arg_int(const struct tp_profile *p, uint32_t set, const char *key, int *found)
{
	size_t n;
	const struct tp_arg *a = tp_args_get(p, set, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tp_str(p, a[i].key), key)) {
			*found = 1;
			return a[i].type == TP_ARG_INT ? a[i].v.i : (int64_t)a[i].v.u;
		}
	*found = 0;
	return 0;
}

static const char *arg_str(const struct tp_profile *p, uint32_t set, const char *key)
{
	size_t n;
	const struct tp_arg *a = tp_args_get(p, set, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tp_str(p, a[i].key), key) && a[i].type == TP_ARG_STR)
			return tp_str(p, a[i].v.s);
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Hex loader.                                                                              */
/* ---------------------------------------------------------------------------------------- */

static void test_hex_parse(void **state)
{
	(void)state;
	static const char txt[] = "# comment 00 11\n0102 u16:0x0304 00*3 # trailing\nu32:5 ff\n";
	uint8_t *b;
	size_t n;
	assert_int_equal(tp_test_hex_parse(txt, sizeof txt - 1, "t", &b, &n), 0);
	static const uint8_t want[] = {1, 2, 4, 3, 0, 0, 0, 5, 0, 0, 0, 0xff};
	assert_int_equal(n, sizeof want);
	assert_memory_equal(b, want, n);
	free(b);
	assert_int_equal(tp_test_hex_parse("0g", 2, "t", &b, &n), -1);
	assert_int_equal(tp_test_hex_parse("012", 3, "t", &b, &n), -1);
}

/* ---------------------------------------------------------------------------------------- */
/* §9.2 rules one by one.                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void test_trim_rules(void **state)
{
	(void)state;
	size_t lo, hi;
	bmp_trim_range(10, 0, 0, 0, 0, &lo, &hi); /* no zero: keep all */
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 10);
	bmp_trim_range(10, 1, 5, 0, 5, &lo, &hi); /* one zero anywhere: drop the first record */
	assert_int_equal(lo, 1);
	assert_int_equal(hi, 10);
	bmp_trim_range(10, 2, 2, 7, 7, &lo, &hi); /* two zeros: strictly between them */
	assert_int_equal(lo, 3);
	assert_int_equal(hi, 7);
	bmp_trim_range(147, 3, 0, 1, 146, &lo, &hi); /* the real dump: zeros 0, 1, 146 */
	assert_int_equal(lo, 1);
	assert_int_equal(hi, 146);
	bmp_trim_range(20, 4, 3, 5, 17, &lo, &hi); /* 3+: second zero .. last zero */
	assert_int_equal(lo, 5);
	assert_int_equal(hi, 17);
	bmp_trim_range(3, 2, 1, 2, 2, &lo, &hi); /* adjacent zeros: nothing between */
	assert_int_equal(lo, hi);
}

static void test_unwrap(void **state)
{
	(void)state;
	struct bmp_unwrap u = {.width = 16};
	assert_int_equal(bmp_unwrap_next(&u, 65534), 65534);
	assert_int_equal(bmp_unwrap_next(&u, 65535), 65535);
	assert_int_equal(bmp_unwrap_next(&u, 0), 65536);
	assert_int_equal(bmp_unwrap_next(&u, 1), 65537);
	assert_int_equal(u.wraps, 1);
	/* A drop from below 65000 is not a wrap (the reference's "> 65000" rule). */
	struct bmp_unwrap v = {.width = 16};
	bmp_unwrap_next(&v, 64999);
	assert_int_equal(bmp_unwrap_next(&v, 3), 3);
	struct bmp_unwrap w = {.width = 20};
	bmp_unwrap_next(&w, 0xFFFFF);
	assert_int_equal(bmp_unwrap_next(&w, 0), 0x100000);
}

static void test_ns_cycles(void **state)
{
	(void)state;
	/* ns = int(cycles / MHz * 1000): the worked record of §4.9. */
	assert_int_equal(tp_cycles_to_ns(452437360, 900), 502708177);
	assert_int_equal(bmp_ns_to_cycles(1334, 900), 1200); /* int(1200.6) */
	assert_int_equal(bmp_ns_to_cycles(-5, 900), -4);     /* truncation toward zero */
	assert_int_equal(bmp_ns_to_cycles(999, 750), 749);   /* int(749.25) */
}

/* ---------------------------------------------------------------------------------------- */
/* Record decoders.                                                                         */
/* ---------------------------------------------------------------------------------------- */

static void test_records_1688(void **state)
{
	(void)state;
	/* The first TIU record of the real dump (§4.9, iter0.profile @0x9c). */
	static const char tiu_hex[] = "70a5 f71a 74a5 f71a 0000 0500 0000 0000 0500 0000 0500 0000 "
	                              "0500 0000 0000 0000";
	uint8_t *b;
	size_t n;
	assert_int_equal(tp_test_hex_parse(tiu_hex, sizeof tiu_hex - 1, "tiu", &b, &n), 0);
	assert_int_equal(n, 32);
	struct bmp_tiu_rec t;
	bmp_tiu_decode(b, &t);
	assert_int_equal(t.start, 452437360);
	assert_int_equal(t.end, 452437364);
	assert_int_equal(t.inst_id, 0);
	free(b);
	/* GDMA core 0 record 1 of §4.9: the image load. */
	static const char g_hex[] = "650a 7916 1521 7916 0000 0000 0000 0000 0000 0000 0026 0100 "
	                            "0000 0000 0000 0000 0026 0100 004c 0200 004c 0200 0000 0000 "
	                            "00*32 6012 0000 00*172";
	assert_int_equal(tp_test_hex_parse(g_hex, sizeof g_hex - 1, "gdma", &b, &n), 0);
	assert_int_equal(n, 256);
	struct bmp_gdma_rec g;
	bmp_gdma_decode(TP_ARCH_BM1688, b, &g);
	assert_int_equal(g.start, 377031269);
	assert_int_equal(g.end, 377037077);
	assert_int_equal(g.inst_id, 0);
	assert_int_equal(g.gmem, 150528); /* d0_ar + d1_ar = 2 x 75264 */
	assert_int_equal(g.lmem, 150528); /* fmem_aw */
	assert_int_equal(g.bytes, 150528);
	free(b);
}

static void test_records_legacy(void **state)
{
	(void)state;
	uint8_t r[192] = {0};
	/* start 10, end 20, inst_id 0x12345 (BM1684X keeps 20 bits, BM1684 16), d0_wr 100,
	 * d1_wr 20, gif_wr 3. */
	r[0] = 10;
	r[4] = 20;
	r[8] = 0x45;
	r[9] = 0x23;
	r[10] = 0x01;
	r[16] = 100;
	r[28] = 20;
	r[40] = 3;
	struct bmp_gdma_rec g;
	bmp_gdma_decode(TP_ARCH_BM1684X, r, &g);
	assert_int_equal(g.inst_id, 0x12345);
	assert_int_equal(g.bytes, 123);
	bmp_gdma_decode(TP_ARCH_BM1684, r, &g);
	assert_int_equal(g.inst_id, 0x2345);
	assert_int_equal(g.bytes, 123);
	memset(r + 28, 0xff, 4); /* an all-ones counter carries no byte count (§10.3) */
	bmp_gdma_decode(TP_ARCH_BM1684, r, &g);
	assert_int_equal(g.bytes, 0);
	assert_int_equal(bmp_gdma_rec_size(TP_ARCH_BM1684X), 192);
	assert_int_equal(bmp_gdma_rec_size(TP_ARCH_BM1688), 256);
}

/* ---------------------------------------------------------------------------------------- */
/* Command decoders.                                                                        */
/* ---------------------------------------------------------------------------------------- */

static void test_cmd_1688(void **state)
{
	(void)state;
	/* First 16 bytes of the real core-0 TIU buffer: SYS_TR_ACC. */
	static const uint8_t tracc[16] = {0, 0, 0, 0, 0x05, 0x18, 0x06, 0x7f, 0x00, 0x80, 0x01};
	struct bmp_cmd c;
	assert_int_equal(bmp_cmd_size(TP_ARCH_BM1688, BMP_ENG_TIU, tracc, 16), 16);
	bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_TIU, tracc, 16, &c);
	assert_string_equal(c.name, "system_tr_wr.wr_imm");
	assert_string_equal(c.type, "SYS_TR_ACC");
	assert_int_equal(c.kind, TP_CMD_SYS);

	/* Hand-built descriptors: header fields at the §6 bit positions. */
	uint8_t d[128];
	memset(d, 0, sizeof d);
	uint64_t h = 1 | (UINT64_C(2) << 41) | (UINT64_C(4) << 45) | (UINT64_C(77) << 17);
	for (int i = 0; i < 8; i++)
		d[i] = (uint8_t)(h >> (8 * i)); /* short MM eu 4 = mm2.nn, 32 bytes, dep 77 */
	assert_int_equal(bmp_cmd_size(TP_ARCH_BM1688, BMP_ENG_TIU, d, 128), 32);
	bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_TIU, d, 32, &c);
	assert_string_equal(c.name, "mm2.nn");
	assert_string_equal(c.type, "sMM2");
	assert_int_equal(c.dep, 77);
	h = (UINT64_C(2) << 41) | (UINT64_C(1) << 45); /* long MM eu 1 */
	for (int i = 0; i < 8; i++)
		d[i] = (uint8_t)(h >> (8 * i));
	d[9] = 2 << 0; /* res0_prec @72 = 2 (FP32) */
	assert_int_equal(bmp_cmd_size(TP_ARCH_BM1688, BMP_ENG_TIU, d, 128), 128);
	bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_TIU, d, 128, &c);
	assert_string_equal(c.name, "mm.normal");
	assert_string_equal(c.type, "MM");
	assert_int_equal(c.dtype, TP_DT_FP32);
	h = 1 | (UINT64_C(3) << 41) | (UINT64_C(31) << 45); /* sAR with an unlisted eu */
	for (int i = 0; i < 8; i++)
		d[i] = (uint8_t)(h >> (8 * i));
	d[8] = 5; /* sAR opt_res0_prec @64 = 5 (BF16) */
	bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_TIU, d, 64, &c);
	assert_string_equal(c.name, "arith.eu31");
	assert_string_equal(c.type, "sAR");
	assert_int_equal(c.dtype, TP_DT_BF16);
	assert_int_equal(bmp_cmd_size(TP_ARCH_BM1688, BMP_ENG_TIU, d, 63), 0); /* does not fit */
	h = UINT64_C(8) << 41; /* tsk_typ 8: unknown size */
	for (int i = 0; i < 8; i++)
		d[i] = (uint8_t)(h >> (8 * i));
	assert_int_equal(bmp_cmd_size(TP_ARCH_BM1688, BMP_ENG_TIU, d, 128), 0);
	/* SYS send_msg: msg id = imm & 0x7F, count = (imm >> 16) & 7. */
	memset(d, 0, sizeof d);
	h = (UINT64_C(15) << 41) | (UINT64_C(8) << 45);
	for (int i = 0; i < 8; i++)
		d[i] = (uint8_t)(h >> (8 * i));
	d[8] = 0x85; /* imm: msg 5 (bit 7 is not part of it) */
	d[10] = 0x02;
	bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_TIU, d, 16, &c);
	assert_string_equal(c.name, "system.send_msg");
	assert_int_equal(c.kind, TP_CMD_SYS_SEND);
	assert_int_equal(c.msg_id, 5);
	assert_int_equal(c.msg_cnt, 2);

	/* GDMA: the first descriptor of the real core-0 GDMA buffer is a DDR->LMEM tensor load:
	 * src_h8 (byte 68) = 0xa0 has bit 7 set, dst_h8 (byte 76) = 0. */
	memset(d, 0, sizeof d);
	d[0] = 6;
	d[68] = 0xa0;
	assert_int_equal(bmp_cmd_size(TP_ARCH_BM1688, BMP_ENG_GDMA, d, 128), 96);
	bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_GDMA, d, 96, &c);
	assert_string_equal(c.name, "tensorLd");
	assert_string_equal(c.type, "DMA_tensor");
	assert_int_equal(c.dir, TP_DIR_DDR_TO_LMEM);
	assert_int_equal(c.dtype, TP_DT_INT8);
	d[68] = 0;
	d[76] = 0x80;
	d[5] = 2 << 0; /* src_data_format @40 = 2 (FP32) */
	bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_GDMA, d, 96, &c);
	assert_string_equal(c.name, "tensorSt");
	assert_int_equal(c.dir, TP_DIR_LMEM_TO_DDR);
	assert_int_equal(c.dtype, TP_DT_FP32);
	d[76] = 0;
	d[4] = 1 | (1 << 4); /* matrix, special function 1 */
	bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_GDMA, d, 96, &c);
	assert_string_equal(c.name, "matrix transpose");
	assert_string_equal(c.type, "DMA_matrix");
	static const char *const sys_names[5] = {"dma.sys.chain_end", "sys_nop", "sys_tr_wr",
	                                         "sys_send", "sys_wait"};
	static const uint8_t sys_kinds[5] = {TP_CMD_SYS, TP_CMD_SYS, TP_CMD_SYS, TP_CMD_SYS_SEND,
	                                     TP_CMD_SYS_WAIT};
	for (unsigned sp = 0; sp < 5; sp++) {
		memset(d, 0, sizeof d);
		d[0] = 8;
		d[4] = (uint8_t)(6 | sp << 4);
		assert_int_equal(bmp_cmd_size(TP_ARCH_BM1688, BMP_ENG_GDMA, d, 16), 16);
		bmp_cmd_decode(TP_ARCH_BM1688, BMP_ENG_GDMA, d, 16, &c);
		assert_string_equal(c.name, sys_names[sp]);
		assert_string_equal(c.type, "DMA_sys");
		assert_int_equal(c.kind, sys_kinds[sp]);
		assert_int_equal(c.dir, TP_DIR_NONE);
	}
}

static void test_cmdbuf_end_rule(void **state)
{
	(void)state;
	/* conv (short, 64) + sys end (16) + 48 zero bytes: 2 commands; the zero tail is not
	 * decoded as convolutions. A nonzero byte after the sys command keeps decoding. */
	uint8_t b[128] = {0};
	b[0] = 1;
	uint64_t h = (UINT64_C(15) << 41) | (UINT64_C(31) << 45);
	for (int i = 0; i < 8; i++)
		b[64 + i] = (uint8_t)(h >> (8 * i));
	struct bmp_cmdbuf cb;
	assert_int_equal(bmp_cmdbuf_init(&cb, TP_ARCH_BM1688, BMP_ENG_TIU, b, sizeof b), TP_OK);
	assert_int_equal(bmp_cmdbuf_finish(&cb), TP_OK);
	assert_int_equal(cb.count, 2);
	assert_false(cb.stopped);
	struct bmp_cmd c;
	assert_int_equal(bmp_cmdbuf_get(&cb, 2, &c), 1);
	assert_string_equal(c.name, "system.end");
	assert_int_equal(bmp_cmdbuf_get(&cb, 1, &c), 1); /* backwards jump */
	assert_string_equal(c.name, "conv.normal");
	assert_int_equal(bmp_cmdbuf_get(&cb, 3, &c), 0);
	bmp_cmdbuf_free(&cb);
	b[80] = 1; /* a short conv after the end command: 3 commands, the last one truncated */
	assert_int_equal(bmp_cmdbuf_init(&cb, TP_ARCH_BM1688, BMP_ENG_TIU, b, sizeof b), TP_OK);
	assert_int_equal(bmp_cmdbuf_get(&cb, 3, &c), 0); /* a lookup finds the stop first */
	assert_true(cb.stopped); /* 48 bytes cannot hold a 64-byte short conv */
	assert_int_equal(bmp_cmdbuf_finish(&cb), TP_OK);
	assert_int_equal(cb.count, 2);
	assert_int_equal(cb.stop_off, 80);
	bmp_cmdbuf_free(&cb);
}

/* Lazy indexing: lookups in any order (forward with skips, backward across 1024-command
 * blocks, far jumps, past the end) find the same commands as after a full index pass. 5000
 * BM1688 TIU commands, short convs (64 bytes) and sys sends (16) in a pseudo-random mix, each
 * with its position in cmd_id_dep. */
static void test_cmdbuf_lazy(void **state)
{
	(void)state;
	enum { N = 5000 };
	uint8_t *b = calloc(N, 64);
	assert_non_null(b);
	size_t len = 0;
	uint32_t x = 12345;
	for (uint32_t i = 1; i <= N; i++) {
		x = x * 1103515245u + 12345u;
		/* the last one a conv: the stream ends at len */
		int sys = i < N && (x >> 16) % 3 == 0;
		uint64_t h = (uint64_t)i << 17 | (sys ? UINT64_C(15) << 41 | UINT64_C(8) << 45 : 1);
		for (int k = 0; k < 8; k++)
			b[len + (size_t)k] = (uint8_t)(h >> (8 * k));
		len += sys ? 16 : 64;
	}
	struct bmp_cmdbuf all, lazy;
	struct bmp_cmd c;
	assert_int_equal(bmp_cmdbuf_init(&all, TP_ARCH_BM1688, BMP_ENG_TIU, b, len), TP_OK);
	assert_int_equal(bmp_cmdbuf_finish(&all), TP_OK);
	assert_int_equal(all.count, N);
	assert_false(all.stopped);
	assert_int_equal(bmp_cmdbuf_init(&lazy, TP_ARCH_BM1688, BMP_ENG_TIU, b, len), TP_OK);
	assert_int_equal(lazy.count, 0); /* nothing indexed before the first lookup */
	const uint32_t order[] = {1,    2,    3,    7,    1500, 1499, 1025, 1024, 1,    1026, 2049,
	                          4000, 4001, 3000, 4999, 5000, 5001, 2,    6000, 4096, 4097};
	for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
		uint32_t id = order[k];
		int want = id <= N;
		assert_int_equal(bmp_cmdbuf_get(&lazy, id, &c), want);
		if (want) {
			assert_int_equal(c.dep, id);
			assert_int_equal(bmp_cmdbuf_get(&all, id, &c), 1);
			assert_int_equal(c.dep, id);
		}
		if (id == 7)
			assert_int_equal(lazy.count, 7); /* indexed as far as the lookups went */
	}
	assert_int_equal(bmp_cmdbuf_finish(&lazy), TP_OK);
	assert_int_equal(lazy.count, N);
	assert_int_equal(lazy.nindex, all.nindex);
	assert_memory_equal(lazy.index, all.index, all.nindex * sizeof *all.index);
	for (uint32_t i = 1; i <= N; i++) /* every command, in order, after the jumps */
		if (!bmp_cmdbuf_get(&lazy, i, &c) || c.dep != i)
			fail_msg("command %u: dep %u", i, c.dep);
	bmp_cmdbuf_limit(&lazy, 100);
	assert_int_equal(bmp_cmdbuf_get(&lazy, 100, &c), 1);
	assert_int_equal(bmp_cmdbuf_get(&lazy, 101, &c), 0);
	bmp_cmdbuf_free(&lazy);
	bmp_cmdbuf_free(&all);
	free(b);
}

static void test_cmd_1684(void **state)
{
	(void)state;
	char path[8448];
	snprintf(path, sizeof path, "%s/cmd_bm1684.hex", fixdir);
	uint8_t *b;
	size_t n;
	assert_int_equal(tp_test_hex_load(path, &b, &n), 0);
	assert_int_equal(n, 256);
	struct bmp_cmd c;
	assert_int_equal(bmp_cmd_size(TP_ARCH_BM1684, BMP_ENG_TIU, b, n), 128);
	bmp_cmd_decode(TP_ARCH_BM1684, BMP_ENG_TIU, b, 128, &c);
	assert_int_equal(c.self_id, 5);
	assert_int_equal(c.dep, 2);
	assert_int_equal(c.op, 3);
	assert_int_equal(c.sub, 2);
	assert_string_equal(c.name, "TENSOR_ARITHMETIC");
	assert_int_equal(c.dtype, TP_DT_FP32);
	bmp_cmd_decode(TP_ARCH_BM1684, BMP_ENG_GDMA, b + 128, 128, &c);
	assert_int_equal(c.self_id, 7);
	assert_int_equal(c.dep, 4);
	assert_int_equal(c.dir, TP_DIR_LMEM_TO_DDR);
	assert_int_equal(c.dtype, TP_DT_INT8);
	assert_string_equal(c.name, "NORMAL");
	assert_int_equal(c.src_addr, UINT64_C(0x100002000));
	assert_int_equal(c.dst_addr, 0x1000);
	free(b);
}

static void test_cmd_1684x(void **state)
{
	(void)state;
	char path[8448];
	snprintf(path, sizeof path, "%s/cmd_bm1684x_tiu.hex", fixdir);
	uint8_t *b;
	size_t n;
	assert_int_equal(tp_test_hex_load(path, &b, &n), 0);
	struct bmp_cmdbuf cb;
	assert_int_equal(bmp_cmdbuf_init(&cb, TP_ARCH_BM1684X, BMP_ENG_TIU, b, n), TP_OK);
	assert_int_equal(bmp_cmdbuf_finish(&cb), TP_OK);
	assert_int_equal(cb.count, 2);
	struct bmp_cmd c;
	assert_int_equal(bmp_cmdbuf_get(&cb, 1, &c), 1);
	assert_string_equal(c.name, "arith.add");
	assert_string_equal(c.type, "sAR");
	assert_int_equal(c.self_id, 1);
	assert_int_equal(bmp_cmdbuf_get(&cb, 2, &c), 1);
	assert_string_equal(c.name, "system.end");
	assert_int_equal(c.dep, 1);
	bmp_cmdbuf_free(&cb);
	free(b);
	snprintf(path, sizeof path, "%s/cmd_bm1684x_gdma.hex", fixdir);
	assert_int_equal(tp_test_hex_load(path, &b, &n), 0);
	assert_int_equal(bmp_cmdbuf_init(&cb, TP_ARCH_BM1684X, BMP_ENG_GDMA, b, n), TP_OK);
	assert_int_equal(bmp_cmdbuf_get(&cb, 3, &c), 0); /* lazily: the id check stops it too */
	assert_true(cb.stopped);
	assert_int_equal(bmp_cmdbuf_finish(&cb), TP_OK);
	assert_int_equal(cb.count, 2); /* the third descriptor's id (9) breaks the sequence */
	assert_true(cb.stopped);
	assert_int_equal(cb.stop_off, 128);
	assert_int_equal(bmp_cmdbuf_get(&cb, 2, &c), 1);
	assert_string_equal(c.name, "dma.sys.chain_end");
	bmp_cmdbuf_free(&cb);
	free(b);
}

/* ---------------------------------------------------------------------------------------- */
/* Text parsers.                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Fuzzer finding: a node line cut right after its prefix, at the very end of the buffer (no
 * newline), made the fast node path read past the line. The buffer is heap-allocated with no
 * slack so ASan catches any over-read. */
static void test_global_cut_node_line(void **state)
{
	(void)state;
	static const char *const tails[] = {
	    "[bmprofile] bd cmd_id", "[bmprofile] gdma cmd_id",
	    "[bmprofile] gdma cmd_id bd_id=", "[bmprofile] bd cmd_id "};
	for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
		char text[256];
		int n = snprintf(text, sizeof text,
		                 "[bmprofile] arch=3\n[bmprofile] local_layer: layer_id=1 "
		                 "layer_type=Load layer_name=\n%s",
		                 tails[i]);
		char *buf = tp_malloc((size_t)n);
		memcpy(buf, text, (size_t)n);
		struct tp_profile *p = tp_profile_new();
		struct bmp_global *g = tp_calloc(1, sizeof *g);
		struct tp_diag d = {0};
		int rc = bmp_global_parse(buf, (size_t)n, "global.profile", p, g, &d);
		/* Either ignored or reported with its line; never a crash. */
		assert_true(rc == TP_OK || strstr(d.msg, "global.profile:3: ") == d.msg);
		bmp_global_free(g);
		tp_free(g);
		tp_profile_free(p);
		tp_free(buf);
	}
}

/* Node layers are delta-coded (struct bmp_nodes): a generated global.profile with runs of
 * layers without nodes (deltas past 254), subnet ends (nodes of no layer, then a jump back up)
 * and thousands of nodes reads back node by node as the plain sequence, in order, backwards
 * and at random, across the marks. */
static void test_global_node_layers(void **state)
{
	(void)state;
	enum { STEPS = 6000 };
	size_t cap = 64 * 1024 * 1024, len = 0;
	char *txt = malloc(cap);
	int32_t *want = malloc(STEPS * 8 * sizeof *want);
	assert_non_null(txt);
	assert_non_null(want);
	size_t nn = 0;
	int32_t layers = 0, cur = -1;
	uint64_t rng = 99;
	for (int k = 0; k < STEPS; k++) {
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		unsigned r = (unsigned)(rng >> 33);
		int nlay = r % 50 == 0 ? 300 : r % 7 == 0 ? 2 : 1; /* layers in a row */
		for (int j = 0; j < nlay; j++) {
			len += (size_t)snprintf(
			    txt + len, cap - len,
			    "[bmprofile] local_layer: layer_id=%d layer_type=Conv2D "
			    "layer_name=l%d\n",
			    layers, layers);
			cur = layers++;
		}
		if (r % 23 == 0) {
			len += (size_t)snprintf(txt + len, cap - len,
			                        "[bmprofile] end to run subnet_id=0\n");
			cur = -1;
		}
		for (unsigned j = 0; j < r % 8; j++) {
			len += (size_t)snprintf(
			    txt + len, cap - len,
			    "[bmprofile] gdma cmd_id bd_id=0 gdma_id=%zu bd_func=0 "
			    "core=0\n",
			    nn);
			want[nn++] = cur;
		}
	}
	struct tp_profile *p = tp_profile_new();
	struct bmp_global g;
	memset(&g, 0, sizeof g);
	struct tp_diag d = {0};
	assert_int_equal(bmp_global_parse(txt, len, "g", p, &g, &d), TP_OK);
	const struct bmp_nodes *nd = &g.nodes[0][BMP_ENG_TIU];
	assert_int_equal(nd->n, nn);
	assert_true(nn > 10 * BMP_NODE_MARK);
	assert_true(nd->nesc > 10); /* both kinds of escape were exercised */
	struct bmp_node_cursor cur_fwd = {0, 0, 0}, cur_rnd = {0, 0, 0};
	for (size_t i = 0; i < nn; i++)
		assert_int_equal(bmp_nodes_layer(nd, i, &cur_fwd), want[i]);
	for (size_t i = nn; i-- > 0;) {
		struct bmp_node_cursor c = {0, 0, 0};
		assert_int_equal(bmp_nodes_layer(nd, i, i % 3 ? &cur_fwd : &c), want[i]);
	}
	for (int k = 0; k < 20000; k++) {
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		size_t i = (size_t)(rng >> 33) % nn;
		assert_int_equal(bmp_nodes_layer(nd, i, &cur_rnd), want[i]);
		if (i + 1 < nn) /* and the step right after it */
			assert_int_equal(bmp_nodes_layer(nd, i + 1, &cur_rnd), want[i + 1]);
	}
	bmp_global_free(&g);
	tp_profile_free(p);
	free(want);
	free(txt);
}

static void test_global_parse(void **state)
{
	(void)state;
	static const char txt[] =
	    "[bmprofile] arch=4\n"
	    "[bmprofile] net_name=my net\n"
	    "[bmprofile] tpu_freq=0\n"
	    "...Start Profile Log...\n"
	    "[bmprofile] start to run subnet_id=3\n"
	    "[bmprofile] global_layer: layer_id=7 layer_type=MatMul layer_name=fc 1\n"
	    "[bmprofile] tensor_id=-2 is_in=1 shape=[2x3] dtype=6 is_const=1 gaddr=5 gsize=6 "
	    "loffset=0 nslice=0 hslice=0\n"
	    "[bmprofile] gdma cmd_id bd_id=0 gdma_id=163840 bd_func=12 core=1\n"
	    "[bmprofile] gdma cmd_id bd_id=1 gdma_id=0 gdma_dir=0 gdma_func=0 core=1\n"
	    "[bmprofile] end parallel.\n"
	    "[bmprofile] bd cmd_id bd_id=2 gdma_id=1 bd_func=3\n"
	    "[bmprofile] core_list=0,1,\n"
	    "[bmprofile] mtype=1 addr=10 size=20 alloc=30 free=0 desc=dyn profile\n";
	struct tp_profile *p = tp_profile_new();
	struct bmp_global g;
	memset(&g, 0, sizeof g);
	g.keep_ids = 1;
	struct tp_diag d = {0};
	assert_int_equal(bmp_global_parse(txt, sizeof txt - 1, "g", p, &g, &d), TP_OK);
	assert_int_equal(g.arch, TP_ARCH_BM1688);
	assert_int_equal(g.tpu_freq, 0);
	assert_string_equal(tp_str(p, p->net_name), "my net");
	assert_int_equal(p->num_layers, 1);
	assert_string_equal(tp_str(p, layer_at(p, 0)->type), "MatMul");
	assert_string_equal(tp_str(p, layer_at(p, 0)->name), "fc 1");
	assert_int_equal(layer_at(p, 0)->subnet, 3);
	assert_int_equal(layer_at(p, 0)->is_local, 0);
	assert_int_equal(layer_at(p, 0)->core, 1);
	assert_int_equal(p->num_tensors, 1);
	assert_int_equal(p->tensors[0].id, -2);
	assert_int_equal(p->tensors[0].ndim, 2);
	assert_int_equal(p->tensors[0].shape[1], 3);
	assert_int_equal(p->tensors[0].dtype, TP_DT_INT32);
	/* BM1688 TIU node written as "gdma cmd_id ... bd_func=": a TIU node of core 1. */
	assert_int_equal(g.nodes[1][BMP_ENG_TIU].n, 1);
	assert_int_equal(node_layer(&g.nodes[1][BMP_ENG_TIU], 0), 0);
	assert_int_equal(g.nodes[1][BMP_ENG_TIU].gdma_id[0], 163840);
	assert_int_equal(g.nodes[1][BMP_ENG_GDMA].n, 1);
	/* After "end parallel." nodes belong to no layer; "bd cmd_id" (BM1684X) is TIU, core 0. */
	assert_int_equal(g.nodes[0][BMP_ENG_TIU].n, 1);
	assert_int_equal(node_layer(&g.nodes[0][BMP_ENG_TIU], 0), -1);
	assert_int_equal(g.nodes[0][BMP_ENG_TIU].bd_id[0], 2);
	assert_int_equal(g.n_cores, 2);
	assert_int_equal(p->num_mems, 1);
	assert_string_equal(tp_str(p, p->mems[0].desc), "dyn profile");
	assert_string_equal(tp_profile_get_meta(p, "core_list"), "0,1,");
	bmp_global_free(&g);
	tp_profile_free(p);

	static const char bad[] = "[bmprofile] arch=4\n\n[bmprofile] tensor_id=x1 is_in=1\n";
	p = tp_profile_new();
	memset(&g, 0, sizeof g);
	assert_int_equal(bmp_global_parse(bad, sizeof bad - 1, "dir/global.profile", p, &g, &d),
	                 TP_EFORMAT);
	assert_string_equal(d.msg, "dir/global.profile:3: bad tensor_id value \"x1\"");
	bmp_global_free(&g);
	tp_profile_free(p);
}

static void test_netstat_parse(void **state)
{
	(void)state;
	static const char txt[] =
	    "-----\n"
	    "s: start time, b: bd_id, g: gdma_id, e: end time\n"
	    "ENGINE_BD     ENGINE_GDMA\n"
	    "              Load_16|GDMA_TENSOR|s:0|b:0|g:1|e:5840|t:5841|dr:0|sz:150528|bw:24.00\n"
	    "Conv2D_18|CONV|s:9774|b:2|g:2|e:317101|t:307328\n"
	    "|BD_SEND_MSG|s:363306|b:8|g:6|e:363305|t:0\n"
	    "API_END total_cycle:1872297|b:256|g:157\n"
	    "TCYC : 1872297. (bdc_cycle:1297280, gdma_cycle:1206884)\n"
	    "GDMA SUMMARY : |dr[0] S2L:28536736|dr[1] L2S:2210792|dr[2] S2S:0|dr[3] L2L:0\n"
	    "flops: 7743042536, runtime: 2.080330ms, ComputationAbility: 3.722026T\n";
	struct bmp_netstat ns;
	struct tp_diag d = {0};
	assert_int_equal(bmp_netstat_parse(txt, sizeof txt - 1, "n", &ns, &d), TP_OK);
	assert_int_equal(ns.total_cycle, 1872297);
	assert_int_equal(ns.bdc_cycle, 1297280);
	assert_int_equal(ns.gdma_cycle, 1206884);
	assert_int_equal(ns.flops, UINT64_C(7743042536));
	assert_int_equal(ns.bd_items, 2);
	assert_int_equal(ns.gdma_items, 1);
	assert_int_equal(ns.dr_bytes[1], 2210792);
	assert_string_equal(ns.runtime_ms, "2.080330");
	/* A malformed item is skipped and counted, never an error (net_stat.sim is a side file). */
	static const char bad[] =
	    "ENGINE_BD\nConv|CONV|s:1|b:x|g:2|e:3|t:3\nA|CONV|s:1|b:1|g:2|e:3|t:3\n"
	    "API_END total_cycle:7|b:1|g:1\n";
	assert_int_equal(bmp_netstat_parse(bad, sizeof bad - 1, "d/net_stat.sim", &ns, &d), TP_OK);
	assert_int_equal(ns.bad_lines, 1);
	assert_int_equal(ns.first_bad_line, 2);
	assert_string_equal(ns.bad_what, "malformed item \"Conv|CONV|s:1|b:x|g:2|e:3|t:3\"");
	assert_int_equal(ns.bd_items, 1);
	assert_int_equal(ns.total_cycle, 7);
}

/* Harmless variants of net_stat.sim, one per kind (a side file): each parses with no
 * skipped line and the same figures as the canonical text. */
static void test_netstat_variants(void **state)
{
	(void)state;
	static const struct {
		const char *what, *text;
	} v[] = {
	    {"spaces around ':' (the real case that rejected a whole dump)",
	     "API_END total_cycle : 100|b:1|g:1\nTCYC : 224969\nflops : 5, runtime : 1.5ms\n"
	     "GDMA SUMMARY : |dr[0] S2L : 7|dr[1] L2S:8\n"},
	    {"CRLF line ends", "API_END total_cycle:100|b:1|g:1\r\nTCYC : 224969. (bdc_cycle:1, "
	                       "gdma_cycle:2)\r\nflops: 5, runtime: 1.5ms\r\nGDMA SUMMARY : |dr[0] "
	                       "S2L:7|dr[1] L2S:8\r\n"},
	    {"trailing blanks and indentation", "  API_END total_cycle:100|b:1|g:1   \nTCYC : "
	                                        "224969.\t\n  flops: 5, runtime: 1.5ms  \n"
	                                        "GDMA SUMMARY : |dr[0] S2L:7|dr[1] L2S:8 \n"},
	    {"reordered lines",
	     "flops: 5, runtime: 1.5ms\nGDMA SUMMARY : |dr[0] S2L:7|dr[1] L2S:8\n"
	     "TCYC : 224969.\nAPI_END total_cycle:100|b:1|g:1\n"},
	    {"unknown item keys and extra columns",
	     "ENGINE_BD ENGINE_GDMA EXTRA\nConv_1|CONV|s:1|b:1|g:0|e:3|t:3|pw:9 "
	     "Load_2|T|s:0|b:0|g:1|e:2|t:2|dr:0|sz:4|bw:1.0|zz:1 Extra_3|X|s:0|b:0|g:0|e:0|t:0\n"
	     "API_END total_cycle:100|b:1|g:1|new:3\nTCYC : 224969.\nflops: 5, runtime: 1.5ms, "
	     "Other: 3\nGDMA SUMMARY : |dr[0] S2L:7|dr[1] L2S:8|dr[4] X2Y:9\nNEW LINE : 42\n"},
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		struct bmp_netstat ns;
		assert_int_equal(bmp_netstat_parse(v[i].text, strlen(v[i].text), "n", &ns, NULL),
		                 TP_OK);
		if (ns.bad_lines || !ns.have_total || ns.total_cycle != 100 || ns.flops != 5 ||
		    ns.dr_bytes[0] != 7 || ns.dr_bytes[1] != 8 || strcmp(ns.runtime_ms, "1.5") != 0)
			fail_msg("variant %zu (%s): bad %lu, total %llu, flops %llu, S2L %llu, L2S "
			         "%llu, "
			         "runtime %s",
			         i, v[i].what, ns.bad_lines, (unsigned long long)ns.total_cycle,
			         (unsigned long long)ns.flops, (unsigned long long)ns.dr_bytes[0],
			         (unsigned long long)ns.dr_bytes[1], ns.runtime_ms);
	}
	/* TCYC alone gives the total when there is no API_END line. */
	struct bmp_netstat ns;
	static const char t[] = "TCYC : 224969\n";
	assert_int_equal(bmp_netstat_parse(t, sizeof t - 1, "n", &ns, NULL), TP_OK);
	assert_int_equal(ns.total_cycle, 224969);
	assert_int_equal(ns.bad_lines, 0);
}

/* Harmless variants of global.profile (it stays strict about real damage):
 * CRLF, trailing blanks, blanks around '=', unknown keys and lines, reordered header lines.
 * Each parses to the same header, layer, tensor and node as the canonical text. */
static void test_global_variants(void **state)
{
	(void)state;
	static const char *const v[] = {
	    /* canonical */
	    "[bmprofile] arch=8\n[bmprofile] net_name=net a\n[bmprofile] tpu_freq=1000\n"
	    "[bmprofile] local_layer: layer_id=15 layer_type=Load layer_name=\n"
	    "[bmprofile] tensor_id=15 is_in=0 shape=[1x3x4x5] dtype=0 is_const=0 gaddr=0 gsize=0 "
	    "loffset=64 nslice=1 hslice=4 l2addr=0\n"
	    "[bmprofile] gdma cmd_id bd_id=0 gdma_id=0 gdma_dir=0 gdma_func=0 core=0\n"
	    "[bmprofile] core_list=0,\n",
	    /* CRLF */
	    "[bmprofile] arch=8\r\n[bmprofile] net_name=net a\r\n[bmprofile] tpu_freq=1000\r\n"
	    "[bmprofile] local_layer: layer_id=15 layer_type=Load layer_name=\r\n"
	    "[bmprofile] tensor_id=15 is_in=0 shape=[1x3x4x5] dtype=0 is_const=0 gaddr=0 gsize=0 "
	    "loffset=64 nslice=1 hslice=4 l2addr=0\r\n"
	    "[bmprofile] gdma cmd_id bd_id=0 gdma_id=0 gdma_dir=0 gdma_func=0 core=0\r\n"
	    "[bmprofile] core_list=0,\r\n",
	    /* trailing blanks */
	    "[bmprofile] arch=8  \n[bmprofile] net_name=net a \t\n[bmprofile] tpu_freq=1000 \n"
	    "[bmprofile] local_layer: layer_id=15 layer_type=Load layer_name=  \n"
	    "[bmprofile] tensor_id=15 is_in=0 shape=[1x3x4x5] dtype=0 is_const=0 gaddr=0 gsize=0 "
	    "loffset=64 nslice=1 hslice=4 l2addr=0 \n"
	    "[bmprofile] gdma cmd_id bd_id=0 gdma_id=0 gdma_dir=0 gdma_func=0 core=0   \n"
	    "[bmprofile] core_list=0, \n",
	    /* blanks around '=' */
	    "[bmprofile] arch = 8\n[bmprofile] net_name = net a\n[bmprofile] tpu_freq =1000\n"
	    "[bmprofile] local_layer: layer_id = 15 layer_type= Load layer_name=\n"
	    "[bmprofile] tensor_id=15 is_in=0 shape=[1x3x4x5] dtype = 0 is_const=0 gaddr=0 gsize=0 "
	    "loffset= 64 nslice=1 hslice=4 l2addr=0\n"
	    "[bmprofile] gdma cmd_id bd_id = 0 gdma_id=0 gdma_dir=0 gdma_func=0 core = 0\n"
	    "[bmprofile] core_list = 0,\n",
	    /* unknown keys and lines, reordered header */
	    "[bmprofile] tpu_freq=1000\n[bmprofile] new_header=1\n[bmprofile] net_name=net a\n"
	    "[bmprofile] arch=8\nsome other tool's line\n"
	    "[bmprofile] local_layer: layer_id=15 layer_type=Load layer_name= \n"
	    "[bmprofile] tensor_id=15 is_in=0 shape=[1x3x4x5] dtype=0 is_const=0 gaddr=0 gsize=0 "
	    "loffset=64 nslice=1 hslice=4 l2addr=0 new_key=7\n"
	    "[bmprofile] gdma cmd_id bd_id=0 gdma_id=0 gdma_dir=0 gdma_func=0 core=0 extra=1\n"
	    "[bmprofile] core_list=0,\n",
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		struct tp_profile *p = tp_profile_new();
		struct bmp_global *g = calloc(1, sizeof *g);
		assert_non_null(g);
		struct tp_diag d = {0};
		int rc = bmp_global_parse(v[i], strlen(v[i]), "g", p, g, &d);
		if (rc)
			fail_msg("variant %zu: %s", i, d.msg);
		if (!g->have_arch || g->arch != TP_ARCH_CV184X || g->tpu_freq != 1000 ||
		    strcmp(tp_str(p, p->net_name), "net a") != 0 || p->num_layers != 1 ||
		    layer_at(p, 0)->id != 15 ||
		    strcmp(tp_str(p, layer_at(p, 0)->type), "Load") != 0 || p->num_tensors != 1 ||
		    p->tensors[0].loffset != 64 || p->tensors[0].shape[3] != 5 ||
		    g->nodes[0][BMP_ENG_GDMA].n != 1 || g->n_cores != 1)
			fail_msg("variant %zu differs: arch %d freq %lld net \"%s\" layers %zu "
			         "tensors %zu",
			         i, (int)g->arch, (long long)g->tpu_freq, tp_str(p, p->net_name),
			         p->num_layers, p->num_tensors);
		bmp_global_free(g);
		free(g);
		tp_profile_free(p);
	}
}

/* final.mlir: loc names through aliases and fused locs, Group/Yield member ranges, module
 * attributes, and the harmless variants (CRLF, trailing blanks, indentation, aliases before
 * use); a broken loc line is skipped and counted, never fatal. */
static void test_mlir_parse(void **state)
{
	(void)state;
	static const char base[] =
	    "#loc = loc(unknown)\n" /* 1 */
	    "module @net attributes {module.FLOPs = 42 : i64, module.chip = \"cv184x\", "
	    "module.mode = \"F16\", module.cores = 1 : i64} {\n"         /* 2 */
	    "  %0 = \"top.Weight\"() : () -> tensor<1xf32> loc(#loc1)\n" /* 3 */
	    "  %1 = \"tpu.Group\"(%0) ({\n"                              /* 4 */
	    "    %2 = \"tpu.Load\"(%0) {a = 1} : (tensor<1xf32>) -> tensor<1xf32> loc(#loc2)\n" /* 5
	                                                                                         */
	    "    %3 = \"tpu.Conv2D\"(%2) : (tensor<1xf32>) -> tensor<1xf32> loc(\"direct\")\n"  /* 6
	                                                                                         */
	    "    \"tpu.Yield\"(%3) : (tensor<1xf32>) -> () loc(#loc)\n"                  /* 7 */
	    "  }) : (tensor<1xf32>) -> tensor<1xf32> loc(#loc3)\n"                       /* 8 */
	    "  %4 = \"tpu.Add\"(%1, %1) : (tensor<1xf32>) -> tensor<1xf32> loc(#loc9)\n" /* 9 */
	    "#loc1 = loc(\"w\")\n"
	    "#loc2 = loc(\"load_0\")\n"
	    "#loc3 = loc(fused[#loc1, #loc2])\n"
	    "#loc9 = loc(\"quote\\\"d\")\n";
	char crlf[4096], blanks[4096];
	size_t k = 0, b = 0;
	for (const char *c = base; *c; c++) {
		if (*c == '\n') {
			crlf[k++] = '\r';
			blanks[b++] = ' ';
			blanks[b++] = '\t';
		}
		crlf[k++] = *c;
		blanks[b++] = *c;
	}
	const char *variants[3] = {base, crlf, blanks};
	size_t lens[3] = {sizeof base - 1, k, b};
	for (int i = 0; i < 3; i++) {
		struct sg_mlir m;
		assert_int_equal(sg_mlir_parse(variants[i], lens[i], &m), TP_OK);
		assert_int_equal(m.bad_lines, 0);
		assert_string_equal(m.module, "net");
		assert_int_equal(m.flops, 42);
		assert_string_equal(m.chip, "cv184x");
		assert_string_equal(m.mode, "F16");
		assert_string_equal(sg_mlir_name(&m, 3), "w");
		assert_string_equal(sg_mlir_name(&m, 5), "load_0");
		assert_string_equal(sg_mlir_name(&m, 6), "direct");
		assert_string_equal(sg_mlir_name(&m, 7), "");
		assert_string_equal(sg_mlir_name(&m, 8), "w, load_0");
		assert_string_equal(sg_mlir_name(&m, 9), "quote\"d");
		assert_null(sg_mlir_name(&m, 4));
		assert_int_equal(m.ngroups, 1);
		assert_int_equal(m.groups[0].line, 4);
		assert_int_equal(m.groups[0].first, 5);
		assert_int_equal(m.groups[0].last, 6);
		assert_int_equal(sg_mlir_group_of(&m, 5), 0);
		assert_int_equal(sg_mlir_group_of(&m, 6), 0);
		assert_int_equal(sg_mlir_group_of(&m, 9), -1);
		sg_mlir_free(&m);
	}
	/* Broken lines: an unterminated loc( and an alias cycle (ends, no name). */
	static const char broken[] =
	    "%0 = \"tpu.A\"() loc(\"open\n%1 = \"tpu.B\"() loc(#loc4)\n"
	    "#loc4 = loc(#loc5)\n#loc5 = loc(fused[#loc4])\n#loc6 = loc(\n";
	struct sg_mlir m;
	assert_int_equal(sg_mlir_parse(broken, sizeof broken - 1, &m), TP_OK);
	assert_int_equal(m.bad_lines, 2);
	assert_int_equal(m.first_bad_line, 1);
	assert_null(sg_mlir_name(&m, 1));
	assert_string_equal(sg_mlir_name(&m, 2), "");
	sg_mlir_free(&m);
}

/* tensor_location.json variants: unknown keys, any key order, CRLF and blanks, a bad entry
 * among good ones (skipped and counted), numbers beyond int64 (treated as absent). */
static void test_json_variants(void **state)
{
	(void)state;
	static const char js[] =
	    "[\r\n {\"new_key\": {\"x\": [1]}, \"tiu_dma_id(after)\": [2, 1], \"opcode\": "
	    "\"tpu.Conv2D\","
	    " \"tiu_dma_id(before)\": [0, 0], \"file-line\": 7, \"core_id\": 0, \"is_local\": "
	    "false,"
	    " \"operands\": [{\"name\": \"in\", \"memory_type\": \"<1x8x4x4xbf16>\", \"address\": "
	    "4096,"
	    " \"type\": \"tensor<1x8x4x4xbf16, 4096 : i64>\", \"slice\": \"[0:1, 0:8, 0:1, 0:4, "
	    "0:4]\"},"
	    " {}], \"results\": [{\"name\": \"out\", \"shape\": [1, 8, 4, 4], \"memory_type\": "
	    "\"<1x8x2x4xsi8>\", \"address\": 64, \"slice\": \"[0:1, 0:8, 0:1, 0:2, 0:4]\", "
	    "\"type\": "
	    "\"tensor<1x8x4x4xsi8>\"}]} ,\r\n"
	    " {\"file-line\": 9, \"tiu_dma_id(before)\": [2], \"tiu_dma_id(after)\": [3, 1]},\r\n"
	    " 17,\r\n"
	    " {\"file-line\": 1e300, \"core_id\": -5e300, \"opcode\": \"tpu.Add\", "
	    "\"tiu_dma_id(before)\": [2, 1], \"tiu_dma_id(after)\": [3, 1],"
	    " \"results\": [{\"name\": \"add\", \"memory_type\": \"<2xf32>\"}],"
	    " \"operands\": [{\"name\": \"out\"}]},\r\n"
	    " {\"file-line\": 11, \"tiu_dma_id(before)\": [0, 0], "
	    "\"tiu_dma_id(after)\": [1, 1e400]}\r\n]\r\n";
	struct tp_profile *p = tp_profile_new();
	int dev = tp_profile_add_device(p, "t", 0, 1);
	int tt = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, NULL, 1000);
	int gt = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, NULL, 1000);
	for (uint32_t i = 1; i <= 3; i++) {
		struct tp_slice *s = tp_track_push(p, tt);
		s->cmd_id = i;
		s->start_ns = i * 100;
		tp_slice_set_end(p, &p->tracks[tt], s, i * 100 + 50);
		s->layer = -1;
	}
	struct tp_slice *s = tp_track_push(p, gt);
	s->cmd_id = 1;
	s->start_ns = 10;
	tp_slice_set_end(p, &p->tracks[gt], s, 20);
	s->layer = -1;
	struct sg_layers L = {0};
	assert_int_equal(sg_layers_parse_json(p, (const uint8_t *)js, sizeof js - 1, "t.json", &L),
	                 TP_OK);
	assert_non_null(L.json);
	int ti[1] = {tt}, gi[1] = {gt};
	assert_int_equal(sg_layers_apply(p, &L, "t.json", ti, gi, 1, 1, 0), TP_OK);
	assert_int_equal(p->num_layers, 2); /* the [2] pair, the number 17 and 1e400 are skipped */
	const struct tp_layer *c = layer_at(p, 0);
	assert_int_equal(c->id, 7);
	assert_string_equal(tp_str(p, c->type), "Conv2D");
	assert_string_equal(tp_str(p, c->name), "out");
	assert_int_equal(c->tiu_first, 1);
	assert_int_equal(c->tiu_last, 2);
	assert_int_equal(c->gdma_first, 1);
	assert_int_equal(c->begin_ns, 10);
	assert_int_equal(c->end_ns, 250);
	assert_int_equal(c->num_tensors, 2); /* {} is no tensor */
	const struct tp_tensor *in = &p->tensors[c->first_tensor];
	assert_int_equal(in->is_in, 1);
	assert_int_equal(in->gaddr, 4096);
	assert_int_equal(in->dtype, TP_DT_BF16);
	assert_int_equal(in->ndim, 4);
	const struct tp_tensor *out = &p->tensors[c->first_tensor + 1];
	assert_int_equal(out->loffset, 64);
	assert_int_equal(out->gaddr, 0);
	assert_int_equal(out->dtype, TP_DT_INT8);
	assert_int_equal(out->nslice, 1);
	assert_int_equal(out->hslice, 2);
	assert_int_equal(out->id, 7);
	const struct tp_layer *a = layer_at(p, 1);
	assert_int_equal(a->id, -1);        /* 1e300 is no line */
	assert_int_equal(a->gdma_first, 0); /* dma 1 -> 1: no DMA command */
	assert_int_equal(a->tiu_first, 3);
	/* core_id -5e300 is no number: treated as absent, i.e. core 0 */
	assert_int_equal(by_cmd(&p->tracks[tt], 3)->layer, 1);
	assert_int_equal(p->tensors[a->first_tensor].id, 7); /* operand "out" made by line 7 */
	int noted = 0;
	for (size_t i = 0; i < p->num_notes; i++)
		noted |=
		    strstr(tp_str(p, p->notes[i].text),
		           "t.json: 3 entries without a tiu_dma_id(before)/(after) pair skipped "
		           "(first: entry 2)") != NULL;
	assert_true(noted);
	sg_layers_free(&L);
	tp_profile_free(p);
}

/* ---------------------------------------------------------------------------------------- */
/* The synthetic BM1688 dump, end to end.                                                   */
/* ---------------------------------------------------------------------------------------- */

static void test_a2_small(void **state)
{
	(void)state;
	const char *dir = make_fixture("a2_small", "a2_small");
	assert_int_equal(tp_bmprofile_probe(dir), 1);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_bmprofile_read(dir, NULL, &p, &d);
	if (rc)
		fail_msg("read failed: %s", d.msg);
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

	/* Timeline (§9.2), by hand:
	 *   raw ns: TIU0 conv 900000/0.9=1000000 .. 1000998, wait 1001111 .. 1001121;
	 *           GDMA0 after trimming (zeros at 0, 1, 3 -> keep 1..2): load 998666 .. 999665,
	 *           chain_end 1000000 .. 1000012; TIU1 send dropped, wait 2111111 .. 2111121.
	 *   anchors: core 0 wait 1001111, core 1 wait 2111111 -> core 1 shifted by -1110000.
	 *   zero = min(1000000, 998666, 1001111) = 998666.
	 *   conv: 1334 ns -> int(1334*0.9) = 1200 cycles, 2332 ns -> 2098; Asic 899. */
	const struct tp_track *t0 = track(p, 0, TP_TRACK_TIU);
	assert_int_equal(t0->count, 3);
	const struct tp_slice *s = by_cmd(t0, 1);
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
	s = by_cmd(t0, 2);
	assert_int_equal(tp_slice_start_cycle(t0, s), 2200); /* 2445 ns */
	assert_int_equal(s->cycles, 10);
	assert_int_equal(tp_slice_kind(t0, s), TP_CMD_SYS_WAIT);
	assert_int_equal(s->layer, -1);
	int found;
	assert_int_equal(arg_int(p, s->args, "Msg Id", &found), 3);
	assert_true(found);
	s = by_cmd(t0, 3);
	assert_string_equal(tp_str(p, tp_slice_name(t0, s)), "system.end");
	assert_int_equal(s->layer, -1); /* the final end command has no node line */

	const struct tp_track *g0 = track(p, 0, TP_TRACK_GDMA);
	assert_int_equal(g0->count, 2);
	s = by_cmd(g0, 1);
	assert_int_equal(tp_slice_start_cycle(g0, s), 0);
	assert_int_equal(s->cycles, 750); /* 999 ns -> int(749.25) */
	assert_int_equal(tp_slice_bytes(g0, s), 48);
	assert_int_equal(tp_slice_stall(g0, s), 7);
	assert_string_equal(tp_str(p, tp_slice_name(g0, s)), "tensorLd");
	assert_int_equal(tp_slice_dir(g0, s), TP_DIR_DDR_TO_LMEM);
	assert_int_equal(s->layer, 0);
	assert_int_equal(arg_int(p, s->args, "src_start_addr", &found), INT64_C(0x8000001000));
	s = by_cmd(g0, 2);
	assert_string_equal(tp_str(p, tp_slice_name(g0, s)), "chain end"); /* the vendor's name */
	assert_string_equal(tp_str(p, tp_slice_type(g0, s)), "chain end");
	assert_int_equal(tp_slice_kind(g0, s), TP_CMD_SYS);
	assert_int_equal(tp_slice_start_cycle(g0, s), 1000); /* 1334 ns */

	const struct tp_track *t1 = track(p, 1, TP_TRACK_TIU);
	assert_int_equal(t1->count, 2); /* leading send_msg dropped */
	s = by_cmd(t1, 2);
	assert_int_equal(tp_slice_start_cycle(t1, s), 2200); /* aligned onto core 0's wait */
	assert_int_equal(tp_slice_kind(t1, s), TP_CMD_SYS_WAIT);

	/* Layers: Load (index 0) owns GDMA cmd 1, Conv2D (index 1) TIU cmd 1. */
	assert_int_equal(p->num_layers, 2);
	assert_int_equal(layer_at(p, 0)->is_data_move, 1);
	assert_int_equal(layer_at(p, 0)->gdma_first, 1);
	assert_int_equal(layer_at(p, 0)->gdma_last, 1);
	assert_int_equal(layer_at(p, 1)->tiu_first, 1);
	assert_int_equal(layer_at(p, 1)->begin_ns, 1333);
	assert_int_equal(layer_at(p, 1)->end_ns, 2331);
	assert_int_equal(layer_at(p, 1)->num_tensors, 2);
	assert_string_equal(tp_str(p, layer_at(p, 0)->name), "in put");

	/* MCU: NODE_SET at base + 49950 ticks x 20 ns = 999000 ns -> 334 ns after the zero. */
	const struct tp_track *m0 = track(p, 0, TP_TRACK_MCU);
	assert_int_equal(m0->count, 2);
	assert_int_equal(m0->slices[0].start_ns, 334);
	assert_int_equal(tp_slice_end(m0, &m0->slices[0]), 334);
	assert_string_equal(tp_str(p, tp_slice_name(m0, &m0->slices[0])), "set_GDMA");
	assert_string_equal(arg_str(p, m0->slices[0].args, "extra"), "hello");
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
	assert_int_equal(tp_bmprofile_read(dir, &o, &p, &d), TP_OK);
	assert_true(p->tiu_freq_mhz == 1000);
	assert_true(track(p, 0, TP_TRACK_TIU)->freq_mhz == 1000);
	s = by_cmd(track(p, 0, TP_TRACK_TIU), 1);
	assert_int_equal(s->args, 0);
	assert_int_equal(s->cycles, 900); /* at 1 GHz ns = cycles: raw 900000..900899 */
	tp_profile_free(p);
}

/* The legacy path (§9.1) on a tiny BM1684X dump. */
static void test_x_small(void **state)
{
	(void)state;
	const char *dir = make_fixture("x_small", "x_small");
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_bmprofile_read(dir, NULL, &p, &d);
	if (rc)
		fail_msg("read failed: %s", d.msg);
	assert_int_equal(p->arch, TP_ARCH_BM1684X);
	assert_true(p->tiu_freq_mhz == 1000 && p->gdma_freq_mhz == 1000); /* tpu_freq=1000 */
	/* start_offset: first NODE_SET 50 ticks x 20 ns = 1 us after DYN record 1 -> 1000 cycles.
	 * TIU: raw - 1000 + 1000; GDMA: raw - 500 + 1000. Re-anchoring: GDMA cmd 1 ends at 1299,
	 * the TIU node that waits for it (bd_id 0 + 1, gdma_id 1) is TIU cmd 1 at 1000: +299. */
	const struct tp_track *t0 = track(p, 0, TP_TRACK_TIU), *g0 = track(p, 0, TP_TRACK_GDMA);
	assert_int_equal(t0->count, 2); /* the 0xFF-filled record ends the valid data */
	const struct tp_slice *s = by_cmd(t0, 1);
	assert_int_equal(tp_slice_start_cycle(t0, s), 1299);
	assert_int_equal(s->cycles, 100);
	assert_int_equal(s->start_ns, 1299);
	assert_int_equal(tp_slice_end(t0, s), 1398);
	assert_string_equal(tp_str(p, tp_slice_name(t0, s)), "arith.add");
	assert_string_equal(tp_str(p, tp_slice_type(t0, s)), "sAR");
	assert_int_equal(s->layer, 1);
	assert_int_equal(tp_slice_start_cycle(t0, by_cmd(t0, 2)), 1499);
	s = by_cmd(g0, 1);
	assert_int_equal(tp_slice_start_cycle(g0, s), 1000);
	assert_int_equal(s->cycles, 300);
	assert_int_equal(tp_slice_bytes(g0, s), 123);              /* d0_wr + d1_wr + gif_wr */
	assert_int_equal(tp_slice_dir(g0, s), TP_DIR_DDR_TO_LMEM); /* from the node's gdma_dir=0 */
	assert_int_equal(s->layer, 0);
	assert_string_equal(tp_str(p, tp_slice_name(g0, by_cmd(g0, 2))), "dma.sys.chain_end");
	const struct tp_track *m0 = track(p, 0, TP_TRACK_MCU);
	assert_int_equal(m0->count, 2);
	assert_int_equal(m0->slices[0].start_ns, 0);    /* FUNC at the legacy time base */
	assert_int_equal(m0->slices[1].start_ns, 1000); /* NODE_SET */
	assert_string_equal(tp_str(p, tp_slice_name(m0, &m0->slices[1])), "set_GDMA");
	assert_int_equal(p->stats.records_dropped, 1);
	assert_int_equal(p->stats.files_read, 4);
	tp_profile_free(p);

	/* No GDMA block at all (its type patched to an unknown one): an empty GDMA track and an
	 * unanchored TIU (fuzzer regression: empty tracks have no slice array). */
	char path[8448];
	snprintf(path, sizeof path, "%s/iter0.profile", dir);
	put_u32(path, 200, 77);
	assert_int_equal(tp_bmprofile_read(dir, NULL, &p, &d), TP_OK);
	assert_int_equal(track(p, 0, TP_TRACK_GDMA)->count, 0);
	assert_int_equal(p->stats.blocks_skipped, 1);
	assert_int_equal(
	    tp_slice_start_cycle(track(p, 0, TP_TRACK_TIU), by_cmd(track(p, 0, TP_TRACK_TIU), 1)),
	    1000);
	tp_profile_free(p);
}

/* tensor_location.json replaces the node-line layers (§8.3); skip_layers drops layers. */
static void test_a2_layers_json(void **state)
{
	(void)state;
	const char *dir = make_fixture("a2_small", "a2_json");
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
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_bmprofile_read(dir, NULL, &p, &d);
	if (rc)
		fail_msg("read failed: %s", d.msg);
	assert_int_equal(p->num_layers, 2); /* the global.profile layers are not used */
	assert_int_equal(p->num_tensors,
	                 1); /* the Load's result (operands and results become tensors) */
	assert_int_equal(p->tensors[0].layer, 0);
	assert_int_equal(p->tensors[0].is_in, 0);
	assert_int_equal(p->tensors[0].id, 10);
	assert_string_equal(tp_str(p, layer_at(p, 0)->type), "Load");
	assert_string_equal(tp_str(p, layer_at(p, 0)->name), "in_ld");
	assert_int_equal(layer_at(p, 0)->id, 10);
	assert_int_equal(layer_at(p, 1)->tiu_first, 1);
	assert_int_equal(layer_at(p, 1)->tiu_last, 2);
	const struct tp_track *t0 = track(p, 0, TP_TRACK_TIU);
	assert_int_equal(by_cmd(t0, 1)->layer, 1);
	assert_int_equal(by_cmd(t0, 2)->layer, 1); /* the wait is inside the conv's range */
	assert_int_equal(by_cmd(t0, 3)->layer, -1);
	assert_int_equal(by_cmd(track(p, 0, TP_TRACK_GDMA), 1)->layer, 0);
	assert_int_equal(layer_at(p, 1)->begin_ns, 1333);
	assert_int_equal(layer_at(p, 1)->end_ns, 2454); /* end of the wait (2209 cycles) */
	tp_profile_free(p);

	/* A tensor_location.json that is not usable is a side-file problem: the conversion goes
	 * on with the global.profile layers and one note naming path:LINE. The malformed variants
	 * check that the error excerpt is printed while the mapping is alive and never reads past
	 * the unterminated buffer. */
	char note[9000];
	unlink(path);
	assert_int_equal(tp_bmprofile_read(dir, NULL, &p, &d), TP_OK);
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
	assert_int_equal(by_cmd(track(p, 0, TP_TRACK_TIU), 1)->layer, -1);
	tp_profile_free(p);
}

/* Out of memory at every allocation: a clean error, nothing leaked (ASan checks). */
static void oom_sweep(const char *dir)
{
	/* tp_profile_new (called first by the reader) leaks when its string table's own
	 * initialisation fails half way (model/common code, reported to its owner): start after
	 * its allocations. */
	tp_alloc_fail_after(-1);
	struct tp_profile *q = tp_profile_new();
	long first = tp_alloc_fail_after(-1);
	tp_profile_free(q);
	int ok = 0;
	for (long n = first; n < 20000 && !ok; n++) {
		struct tp_profile *p = NULL;
		struct tp_diag d = {0};
		tp_alloc_fail_after(n);
		int rc = tp_bmprofile_read(dir, NULL, &p, &d);
		tp_alloc_fail_after(-1);
		if (rc == TP_OK) {
			ok = 1;
			tp_profile_free(p);
		} else {
			assert_int_equal(rc, TP_ENOMEM);
			assert_null(p);
		}
	}
	assert_true(ok);
}

/* A command buffer whose second descriptor is not one the decoder knows: the read succeeds,
 * the command is unnamed, and two notes say where decoding stopped and that fewer commands
 * were decoded than the COMMAND block lists (emitted after the lookups, which index lazily). */
static void test_a2_cmd_stop(void **state)
{
	(void)state;
	const char *dir = make_fixture("a2_small", "a2_cmd_stop");
	char path[8448], note1[9000], note2[9000];
	snprintf(path, sizeof path, "%s/cmd_20000_0_1.dat", dir);
	put_u32(path, 0x60 + 4, 0x0F); /* cmd 2 (sys chain_end): cmd_type 6 -> 15, unknown */
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
	const struct tp_track *t = track(p, 0, TP_TRACK_GDMA);
	const struct tp_slice *s1 = by_cmd(t, 1), *s2 = by_cmd(t, 2);
	assert_non_null(s1);
	assert_string_equal(tp_str(p, tp_slice_label(t, s1)->name), "tensorLd");
	assert_non_null(s2);
	/* the names a command without descriptor gets */
	assert_string_equal(tp_str(p, tp_slice_label(t, s2)->name), "cmd_type_-1_0");
	assert_string_equal(tp_str(p, tp_slice_label(t, s2)->type), "cmd_type_-1");
	tp_profile_free(p);
}

/* The two ways the BM1688 reader names its commands agree: with argument sets (fill_cmd,
 * one slice at a time) and without them (the per-core path: fill_core with its label memo,
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
			const struct tp_track *ta = track(pa, core, (enum tp_track_kind)k);
			const struct tp_track *tb = track(pb, core, (enum tp_track_kind)k);
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
	fill_paths_agree(make_fixture("a2_small", "a2_fill_paths"));
	/* an unknown descriptor: the unnamed commands' names too */
	const char *dir = make_fixture("a2_small", "a2_fill_paths_stop");
	char path[8448];
	snprintf(path, sizeof path, "%s/cmd_20000_0_1.dat", dir);
	put_u32(path, 0x60 + 4, 0x0F);
	fill_paths_agree(dir);
	const char *shared = getenv("TP_SHARED_DIR");
	char real[4096];
	snprintf(real, sizeof real, "%s/testdata/sophgo/bm1688_resnet50",
	         shared ? shared : "../shared");
	struct stat st;
	if (stat(real, &st) != 0) {
		printf("SKIPPED: fill paths on the real BM1688 dump: not found at %s\n", real);
		return;
	}
	fill_paths_agree(real);
}

static void test_a2_small_oom(void **state)
{
	(void)state;
	oom_sweep(make_fixture("a2_small", "a2_oom"));
	/* And with the side files: tensor_location.json (layers, tensors) and final.mlir. */
	const char *dir = make_fixture("a2_small", "a2_oom_side");
	char path[8448];
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
	snprintf(path, sizeof path, "%s/tensor_location.json", dir);
	assert_int_equal(tp_test_write_file(path, js, sizeof js - 1), 0);
	snprintf(path, sizeof path, "%s/final.mlir", dir);
	assert_int_equal(tp_test_write_file(path, mlir, sizeof mlir - 1), 0);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	assert_int_equal(tp_bmprofile_read(dir, NULL, &p, &d), TP_OK);
	assert_int_equal(p->num_layers, 2);
	assert_string_equal(tp_str(p, layer_at(p, 0)->name), "load_x");
	assert_string_equal(tp_str(p, layer_at(p, 1)->name), "load_x, conv");
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

static void test_bad_inputs(void **state)
{
	(void)state;
	char want[8448], path[8448];
	const char *dir;

	/* iter0.profile layout (see the fixture comments): the unknown block 77 at 0x585, the
	 * core-1 TIU block at 0x591 (96 bytes), file size 1529. */
	dir = make_fixture("a2_small", "bad_trunc");
	snprintf(path, sizeof path, "%s/iter0.profile", dir);
	assert_int_equal(truncate(path, 1519), 0);
	snprintf(want, sizeof want,
	         "%s/iter0.profile@0x591: TIU block length 96 exceeds the 86 bytes left", dir);
	expect_error(dir, TP_ETRUNC, want);

	dir = make_fixture("a2_small", "bad_hdr");
	snprintf(path, sizeof path, "%s/iter0.profile", dir);
	assert_int_equal(truncate(path, 1425 + 5), 0);
	snprintf(want, sizeof want,
	         "%s/iter0.profile@0x591: truncated block header: 8 bytes needed, 5 left", dir);
	expect_error(dir, TP_ETRUNC, want);

	dir = make_fixture("a2_small", "bad_len");
	snprintf(path, sizeof path, "%s/iter0.profile", dir);
	put_u32(path, 0x585 + 4, 4096);
	snprintf(want, sizeof want,
	         "%s/iter0.profile@0x585: block type 77 length 4096 exceeds the 108 bytes left",
	         dir);
	expect_error(dir, TP_ETRUNC, want);

	dir = make_fixture("a2_small", "bad_count");
	snprintf(path, sizeof path, "%s/iter0.profile", dir);
	put_u32(path, 44 + 8 + 32, 5); /* COMMAND group_num 5, but only one group follows */
	snprintf(want, sizeof want,
	         "%s/iter0.profile@0x54: COMMAND group_num 5 does not fit the 8 bytes that follow",
	         dir);
	expect_error(dir, TP_EFORMAT, want);

	dir = make_fixture("a2_small", "bad_garbled");
	snprintf(path, sizeof path, "%s/iter0.profile", dir);
	put_u32(path, 0xfc + 4, 1000); /* GDMA block length not a whole number of records */
	snprintf(want, sizeof want,
	         "%s/iter0.profile@0xfc: GDMA block length 1000 is not a multiple of the 256-byte "
	         "record",
	         dir);
	expect_error(dir, TP_EFORMAT, want);

	dir = make_fixture("a2_small", "bad_empty_iter");
	snprintf(path, sizeof path, "%s/iter0.profile", dir);
	assert_int_equal(truncate(path, 0), 0);
	snprintf(want, sizeof want, "%s/iter0.profile@0x0: empty file (no SUMMARY block)", dir);
	expect_error(dir, TP_EFORMAT, want);

	dir = make_fixture("a2_small", "bad_nocmd");
	snprintf(path, sizeof path, "%s/cmd_20000_0_1.dat", dir);
	assert_int_equal(unlink(path), 0);
	snprintf(
	    want, sizeof want,
	    "%s/iter0.profile: COMMAND block 0 names cmd_20000_0_1.dat, which is missing from %s",
	    dir, dir);
	expect_error(dir, TP_ENOTFOUND, want);

	dir = make_fixture("a2_small", "bad_arch");
	snprintf(path, sizeof path, "%s/global.profile", dir);
	static const char g9[] = "[bmprofile] net_name=x\n[bmprofile] arch=9\n";
	assert_int_equal(tp_test_write_file(path, g9, sizeof g9 - 1), 0);
	snprintf(want, sizeof want, "%s/global.profile:2: unknown arch 9", dir);
	expect_error(dir, TP_EUNSUPPORTED, want);
	assert_int_equal(tp_test_write_file(path, "[bmprofile] arch=5\n", 19), 0);
	snprintf(want, sizeof want, "%s/global.profile:1: arch 5 (BM1690) is not supported", dir);
	expect_error(dir, TP_EUNSUPPORTED, want);

	char empty[4096];
	snprintf(empty, sizeof empty, "%s/bad_emptydir", tmpdir);
	rmtree(empty);
	assert_int_equal(mkdir(empty, 0777), 0);
	assert_int_equal(tp_bmprofile_probe(empty), 0);
	snprintf(want, sizeof want,
	         "%s: no global.profile or iter*.profile: not a bmprofile_data directory", empty);
	expect_error(empty, TP_ENOTFOUND, want);

	snprintf(path, sizeof path, "%s/a2_small/global.profile", tmpdir);
	make_fixture("a2_small", "a2_small");
	assert_int_equal(tp_bmprofile_probe(path), 0);
	snprintf(want, sizeof want, "%s: not a directory (expected a bmprofile_data directory)",
	         path);
	expect_error(path, TP_EIO, want);

	snprintf(path, sizeof path, "%s/does_not_exist", tmpdir);
	snprintf(want, sizeof want, "%s: No such file or directory", path);
	expect_error(path, TP_ENOTFOUND, want);
}

/* ---------------------------------------------------------------------------------------- */
/* The real BM1688 dump.                                                                    */
/* ---------------------------------------------------------------------------------------- */

static void test_real_bm1688(void **state)
{
	(void)state;
	const char *shared = getenv("TP_SHARED_DIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/testdata/sophgo/bm1688_resnet50",
	         shared ? shared : "../shared");
	struct stat st;
	if (stat(dir, &st) != 0) {
		printf("SKIPPED: real BM1688 dump not found at %s\n", dir);
		skip();
	}
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_bmprofile_read(dir, NULL, &p, &d);
	if (rc)
		fail_msg("read failed: %s", d.msg);
	/* Records written by the reference converter (PROVENANCE.txt). */
	const struct tp_track *t0 = track(p, 0, TP_TRACK_TIU), *t1 = track(p, 1, TP_TRACK_TIU);
	const struct tp_track *g0 = track(p, 0, TP_TRACK_GDMA), *g1 = track(p, 1, TP_TRACK_GDMA);
	assert_int_equal(t0->count, 257);
	assert_int_equal(t1->count, 47);
	assert_int_equal(g0->count, 145);
	assert_int_equal(g1->count, 21);
	/* First conv: raw 452448533 .. 452760563 = 312031 cycles, unchanged by the round trip. */
	const struct tp_slice *s = by_cmd(t0, 2);
	assert_string_equal(tp_str(p, tp_slice_name(t0, s)), "conv.normal");
	assert_string_equal(tp_str(p, tp_slice_type(t0, s)), "sCONV");
	assert_int_equal(s->cycles, 312031);
	/* GDMA core 0 cmd 2: 101376 bytes in 3377 cycles (= 22.5147 GB/s at 750 MHz). */
	s = by_cmd(g0, 2);
	assert_int_equal(tp_slice_bytes(g0, s), 101376);
	assert_int_equal(s->cycles, 3377);
	assert_string_equal(tp_str(p, tp_slice_name(g0, s)), "tensorLd");
	/* Total span, with the GDMA "end" taken as the last record's end (§10.2 quirk). */
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	const struct tp_track *all[4] = {t0, t1, g0, g1};
	for (int k = 0; k < 4; k++) {
		const struct tp_track *t = all[k];
		for (size_t i = 0; i < t->count; i++) {
			if (t->slices[i].start_ns < lo)
				lo = t->slices[i].start_ns;
			if (t->kind == TP_TRACK_TIU && tp_slice_end(t, &t->slices[i]) > hi)
				hi = tp_slice_end(t, &t->slices[i]);
		}
		if (t->kind == TP_TRACK_GDMA && t->count) {
			/* tracks are sorted by start; the last record in PMU order has the top cmd
			 * id */
			const struct tp_slice *last = &t->slices[0];
			for (size_t i = 0; i < t->count; i++)
				if (t->slices[i].cmd_id > last->cmd_id)
					last = &t->slices[i];
			if (tp_slice_end(t, last) > hi)
				hi = tp_slice_end(t, last);
		}
	}
	assert_int_equal(lo, 0);
	assert_int_equal(hi - lo, 2176268);
	/* Per-core sums of the PerfWeb summary (§10.2). */
	uint64_t tiu[2] = {0}, gdma[2] = {0}, gwait[2] = {0}, ddr[2] = {0};
	for (int c = 0; c < 2; c++) {
		const struct tp_track *t = c ? t1 : t0, *g = c ? g1 : g0;
		for (size_t i = 0; i < t->count; i++)
			if (tp_slice_kind(t, &t->slices[i]) != TP_CMD_SYS_WAIT)
				tiu[c] += t->slices[i].cycles;
		for (size_t i = 0; i < g->count; i++) {
			gdma[c] += g->slices[i].cycles;
			if (tp_slice_kind(g, &g->slices[i]) == TP_CMD_SYS_WAIT)
				gwait[c] += g->slices[i].cycles;
			if (tp_slice_kind(g, &g->slices[i]) == TP_CMD_NORMAL &&
			    tp_dir_touches_ddr((enum tp_dir)tp_slice_dir(g, &g->slices[i])))
				ddr[c] += tp_slice_bytes(g, &g->slices[i]);
		}
	}
	assert_int_equal(tiu[0], 1304643);
	assert_int_equal(tiu[1], 91343);
	assert_int_equal(gdma[0] - gwait[0], 1077718);
	assert_int_equal(gdma[1] - gwait[1], 155776);
	assert_int_equal(ddr[0], 31417504);
	assert_int_equal(ddr[1], 2927680);
	/* Layers from the node lines: 184 local + 1 global; the first Load owns GDMA cmd 1. */
	assert_int_equal(p->num_layers, 185);
	assert_int_equal(by_cmd(g0, 1)->layer, 0);
	assert_string_equal(tp_str(p, layer_at(p, 0)->type), "Load");
	assert_int_equal(by_cmd(t0, 257)->layer, -1); /* system.end */
	assert_string_equal(tp_str(p, tp_slice_name(t0, by_cmd(t0, 257))), "system.end");
	assert_int_equal(p->num_mems, 14);
	assert_string_equal(tp_profile_get_meta(p, "sim_total_cycle"), "1872297");
	assert_string_equal(tp_profile_get_meta(p, "sim_flops"), "7743042536");
	assert_int_equal(p->stats.records_dropped, 3);
	tp_profile_free(p);
}

/* ---------------------------------------------------------------------------------------- */
/* The real CV184X blazeface dump, command by command against the vendor's RegInfo files.   */
/* ---------------------------------------------------------------------------------------- */

/* Path of ../shared/testdata/sophgo/<rel>, or NULL (after printing SKIPPED) when absent. */
static int shared_path(char *out, size_t n, const char *rel)
{
	const char *shared = getenv("TP_SHARED_DIR");
	snprintf(out, n, "%s/testdata/sophgo/%s", shared && *shared ? shared : "../shared", rel);
	struct stat st;
	if (stat(out, &st) != 0) {
		printf("SKIPPED: %s not found (real-dump test not run)\n", out);
		return 0;
	}
	return 1;
}

/* One record of tiuRegInfo_<core>.txt / tdmaRegInfo_<core>.txt. */
struct ref_rec {
	char name[48], dir[24];
	long long start, end, cmd_id;
};

/* Value of "\t<key>: <value>" inside [b, e), copied to out; 1 if found. */
static int ref_field(const char *b, const char *e, const char *key, char *out, size_t n)
{
	size_t kn = strlen(key);
	for (const char *q = b; q && q < e; q = memchr(q, '\n', (size_t)(e - q))) {
		if (*q == '\n')
			q++;
		if (q + kn + 3 < e && q[0] == '\t' && !memcmp(q + 1, key, kn) && q[1 + kn] == ':' &&
		    q[2 + kn] == ' ') {
			const char *v = q + kn + 3, *ve = memchr(v, '\n', (size_t)(e - v));
			size_t m = (size_t)((ve ? ve : e) - v);
			if (m >= n)
				m = n - 1;
			memcpy(out, v, m);
			out[m] = 0;
			return 1;
		}
	}
	return 0;
}

/* Parses every `marker` record of a RegInfo file; returns the count, records in *out. */
static size_t ref_records(const char *path, const char *marker, struct ref_rec **out)
{
	size_t len = 0;
	char *txt = tp_test_slurp(path, &len);
	assert_non_null(txt);
	size_t n = 0, cap = 0;
	*out = NULL;
	size_t ml = strlen(marker);
	for (char *b = strstr(txt, marker); b;) {
		char *e = strstr(b + ml, marker);
		char *end = e ? e : txt + len;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			*out = realloc(*out, cap * sizeof **out);
			assert_non_null(*out);
		}
		struct ref_rec *r = &(*out)[n++];
		char v[64];
		memset(r, 0, sizeof *r);
		assert_true(ref_field(b, end, "Function Name", r->name, sizeof r->name));
		ref_field(b, end, "Direction", r->dir, sizeof r->dir);
		assert_true(ref_field(b, end, "Start Cycle", v, sizeof v));
		r->start = atoll(v);
		assert_true(ref_field(b, end, "End Cycle", v, sizeof v));
		r->end = atoll(v);
		assert_true(ref_field(b, end, "Cmd Id", v, sizeof v));
		r->cmd_id = atoll(v);
		b = e;
	}
	free(txt);
	return n;
}

static const char *dir_text(enum tp_dir d)
{
	switch (d) {
	case TP_DIR_DDR_TO_LMEM:
		return "DDR->LMEM";
	case TP_DIR_LMEM_TO_DDR:
		return "LMEM->DDR";
	case TP_DIR_DDR_TO_DDR:
		return "DDR->DDR";
	case TP_DIR_LMEM_TO_LMEM:
		return "LMEM->LMEM";
	default:
		return "-";
	}
}

/* Every record of one engine against the reference: same count, and per Cmd Id the same
 * Start/End Cycle, Function Name and (GDMA) Direction. */
static void check_against_ref(const struct tp_profile *p, const struct tp_track *t,
                              const char *path, const char *marker, int dma)
{
	struct ref_rec *ref = NULL;
	size_t n = ref_records(path, marker, &ref);
	assert_int_equal(n, t->count);
	size_t checked = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tp_slice *s = by_cmd(t, (uint32_t)ref[i].cmd_id);
		if (!s)
			fail_msg("%s: Cmd Id %lld has no slice", path, ref[i].cmd_id);
		if ((long long)tp_slice_start_cycle(t, s) != ref[i].start ||
		    (long long)tp_slice_end_cycle(t, s) != ref[i].end)
			fail_msg("%s: Cmd Id %lld: cycles %llu..%llu, reference %lld..%lld", path,
			         ref[i].cmd_id, (unsigned long long)tp_slice_start_cycle(t, s),
			         (unsigned long long)tp_slice_end_cycle(t, s), ref[i].start,
			         ref[i].end);
		if (strcmp(tp_str(p, tp_slice_name(t, s)), ref[i].name) != 0)
			fail_msg("%s: Cmd Id %lld: name %s, reference %s", path, ref[i].cmd_id,
			         tp_str(p, tp_slice_name(t, s)), ref[i].name);
		/* The reference prints LMEM->LMEM for sys commands (their addresses are zeroed);
		 * tpuprof says they have no direction. */
		if (dma && tp_slice_kind(t, s) == TP_CMD_NORMAL &&
		    strcmp(dir_text(tp_slice_dir(t, s)), ref[i].dir) != 0)
			fail_msg("%s: Cmd Id %lld: direction %s, reference %s", path, ref[i].cmd_id,
			         dir_text(tp_slice_dir(t, s)), ref[i].dir);
		checked++;
	}
	assert_int_equal(checked, n);
	free(ref);
}

static void test_real_cv184x(void **state)
{
	(void)state;
	char dir[4096], ref[4096], path[4200];
	if (!shared_path(dir, sizeof dir, "cv184x_blazeface") ||
	    !shared_path(ref, sizeof ref, "reference/cv184x_blazeface")) {
		skip();
		return;
	}
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	if (tp_bmprofile_read(dir, NULL, &p, &d))
		fail_msg("read failed: %s", d.msg);
	assert_int_equal(p->arch, TP_ARCH_CV184X);
	assert_true(p->tiu_freq_mhz == 750 && p->gdma_freq_mhz == 650);
	const struct tp_track *t0 = track(p, 0, TP_TRACK_TIU), *g0 = track(p, 0, TP_TRACK_GDMA);
	assert_int_equal(t0->count, 116);
	assert_int_equal(g0->count, 225);
	snprintf(path, sizeof path, "%s/tiuRegInfo_0.txt", ref);
	check_against_ref(p, t0, path, "__TIU_REG_INFO__", 0);
	snprintf(path, sizeof path, "%s/tdmaRegInfo_0.txt", ref);
	check_against_ref(p, g0, path, "__TDMA_REG_INFO__", 1);
	/* PROVENANCE.txt: totalTiuCycle 591160, totalGdmaCycle 724000, DDR avg 4.39 GB/s. */
	uint64_t tiu = 0, gdma = 0, ddr = 0, ddr_cyc = 0;
	for (size_t i = 0; i < t0->count; i++)
		if (tp_slice_kind(t0, &t0->slices[i]) != TP_CMD_SYS_WAIT)
			tiu += t0->slices[i].cycles;
	for (size_t i = 0; i < g0->count; i++) {
		const struct tp_slice *s = &g0->slices[i];
		if (tp_slice_kind(g0, s) != TP_CMD_SYS_WAIT)
			gdma += s->cycles;
		if (tp_slice_kind(g0, s) == TP_CMD_NORMAL &&
		    tp_dir_touches_ddr((enum tp_dir)tp_slice_dir(g0, s))) {
			ddr += tp_slice_bytes(g0, s);
			ddr_cyc += s->cycles;
		}
	}
	assert_int_equal(tiu, 591160);
	assert_int_equal(gdma, 724000);
	assert_int_equal((int)((double)ddr * 650.0 / 1000.0 / (double)ddr_cyc * 100 + 0.5), 439);
	/* GDMA Cmd 1 (tdmaRegInfo): tensorLd of 70656 bytes, stall 0, FP32. */
	const struct tp_slice *s = by_cmd(g0, 1);
	assert_int_equal(tp_slice_bytes(g0, s), 70656);
	assert_int_equal(tp_slice_dtype(g0, s), TP_DT_FP32);
	assert_int_equal(tp_slice_dir(g0, s), TP_DIR_DDR_TO_LMEM);
	tp_profile_free(p);
}

/* One row of a time_data list in the vendor's profile_data.js: a Python list literal on one
 * line; fields split on ", " (no field of these rows contains ", "). */
struct js_row {
	int cat;
	double begin, end;
	char f[24][48];
	int nf;
};

static int js_rows(const char *path, struct js_row **out)
{
	size_t len = 0;
	char *txt = tp_test_slurp(path, &len);
	assert_non_null(txt);
	int n = 0, cap = 0;
	*out = NULL;
	for (char *l = txt; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		char *row = strstr(l, "time_data0 = [[");
		row = row                                                          ? row + 14
		      : (l[0] == '[' && l[1] >= '0' && l[1] <= '3' && l[2] == ',') ? l
		                                                                   : NULL;
		if (row) {
			if (n == cap) {
				cap = cap ? cap * 2 : 512;
				*out = realloc(*out, (size_t)cap * sizeof **out);
				assert_non_null(*out);
			}
			struct js_row *r = &(*out)[n++];
			memset(r, 0, sizeof *r);
			char *q = row + 1;
			while (r->nf < 24) {
				char *e = strstr(q, ", ");
				char *stop = e ? e : strrchr(q, ']');
				size_t m = stop ? (size_t)(stop - q) : strlen(q);
				if (m && (q[0] == '\'' || q[0] == '"') && m >= 2) {
					q++;
					m -= 2;
				}
				if (m >= sizeof r->f[0])
					m = sizeof r->f[0] - 1;
				memcpy(r->f[r->nf], q, m);
				r->f[r->nf++][m] = 0;
				if (!e)
					break;
				q = e + 2;
			}
			r->cat = atoi(r->f[0]);
			r->begin = atof(r->f[1]);
			r->end = atof(r->f[2]);
		}
		l = nl ? nl + 1 : NULL;
	}
	free(txt);
	return n;
}

/* Layers of the real CV184X dump from tensor_location.json + final.mlir against the vendor's
 * profile_data.js: per command the vendor's layer_id (file-line) and layer type; the layer
 * rows' ids, types and spans; the group rows' spans. */
static void test_real_cv184x_layers(void **state)
{
	(void)state;
	char dir[4096], ref[4096], path[4200];
	if (!shared_path(dir, sizeof dir, "cv184x_blazeface") ||
	    !shared_path(ref, sizeof ref, "reference/cv184x_blazeface")) {
		skip();
		return;
	}
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	if (tp_bmprofile_read(dir, NULL, &p, &d))
		fail_msg("read failed: %s", d.msg);
	assert_int_equal(p->num_layers, 215); /* one per tensor_location.json entry */
	const struct tp_track *tr[2] = {track(p, 0, TP_TRACK_TIU), track(p, 0, TP_TRACK_GDMA)};
	snprintf(path, sizeof path, "%s/profile_data.js", ref);
	struct js_row *rows = NULL;
	int n = js_rows(path, &rows);
	int cmds = 0, layer_rows = 0, group_rows = 0;
	for (int i = 0; i < n; i++) {
		const struct js_row *r = &rows[i];
		if (r->cat <= 1) {
			const struct tp_slice *s = by_cmd(tr[r->cat], (uint32_t)atoi(r->f[7]));
			assert_non_null(s);
			if (!strcmp(r->f[9],
			            "-")) { /* the vendor's "no layer" (system.end, chain end) */
				assert_int_equal(s->layer, -1);
				cmds++;
				continue;
			}
			if (s->layer < 0)
				fail_msg("%s cmd %s: no layer, vendor %s", r->cat ? "GDMA" : "TIU",
				         r->f[7], r->f[9]);
			const struct tp_layer *ly = layer_at(p, (size_t)(s->layer));
			if (ly->id != atoi(r->f[9]) || strcmp(tp_str(p, ly->type), r->f[10]) != 0)
				fail_msg("%s cmd %s: layer %d %s, vendor %s %s",
				         r->cat ? "GDMA" : "TIU", r->f[7], ly->id,
				         tp_str(p, ly->type), r->f[9], r->f[10]);
			cmds++;
		} else if (r->cat == 2) {
			/* The vendor merges a layer's commands into display rows (PerfAI_web
			 * js_prep.py merge_layer_data); each row lies inside the span of our layers
			 * with that id and type, and a global layer's row is exactly its span. */
			int64_t lo = INT64_MAX, hi = INT64_MIN;
			int global = 0, found = 0;
			for (size_t L = 0; L < p->num_layers; L++) {
				const struct tp_layer *ly = layer_at(p, (size_t)L);
				if (ly->id != atoi(r->f[9]) || ly->begin_ns > ly->end_ns)
					continue;
				assert_string_equal(tp_str(p, ly->type), r->f[10]);
				found = 1;
				global |= !ly->is_local;
				lo = ly->begin_ns < lo ? ly->begin_ns : lo;
				hi = ly->end_ns > hi ? ly->end_ns : hi;
			}
			assert_true(found);
			if ((int64_t)r->begin < lo || (int64_t)r->end > hi)
				fail_msg("layer row %s %s %.0f..%.0f outside %lld..%lld", r->f[9],
				         r->f[10], r->begin, r->end, (long long)lo, (long long)hi);
			if (global && ((int64_t)r->begin != lo || (int64_t)r->end != hi))
				fail_msg("global layer %s: %.0f..%.0f, ours %lld..%lld", r->f[9],
				         r->begin, r->end, (long long)lo, (long long)hi);
			layer_rows++;
		} else {
			/* "Group<k>  L<line - 1>": the span of the group's member layers. */
			const char *at = strstr(r->f[5], " L");
			assert_non_null(at);
			int gline = atoi(at + 2) + 1;
			int64_t lo = INT64_MAX, hi = INT64_MIN;
			snprintf(path, sizeof path, "%s/final.mlir", dir);
			size_t mlen = 0;
			char *mt = tp_test_slurp(path, &mlen);
			struct sg_mlir m;
			assert_int_equal(sg_mlir_parse(mt, mlen, &m), TP_OK);
			int g = -1;
			for (size_t k = 0; k < m.ngroups; k++)
				if (m.groups[k].line == (uint32_t)gline)
					g = (int)k;
			assert_true(g >= 0);
			for (size_t L = 0; L < p->num_layers; L++) {
				const struct tp_layer *ly = layer_at(p, (size_t)L);
				if (ly->group != g || ly->begin_ns > ly->end_ns)
					continue;
				lo = ly->begin_ns < lo ? ly->begin_ns : lo;
				hi = ly->end_ns > hi ? ly->end_ns : hi;
			}
			if ((int64_t)r->begin != lo || (int64_t)r->end != hi)
				fail_msg("group row %s: %.0f..%.0f, ours %lld..%lld", r->f[5],
				         r->begin, r->end, (long long)lo, (long long)hi);
			sg_mlir_free(&m);
			free(mt);
			group_rows++;
		}
	}
	free(rows);
	assert_int_equal(cmds, 341);
	assert_int_equal(layer_rows, 209);
	assert_int_equal(group_rows, 13);
	/* Names are the MLIR loc names; tensors carry shape, dtype and location. */
	const struct tp_slice *conv = by_cmd(tr[0], 2);
	const struct tp_layer *ly = layer_at(p, (size_t)(conv->layer));
	assert_int_equal(ly->id, 19);
	assert_string_equal(tp_str(p, ly->name), "80_Relu");
	assert_int_equal(ly->group, 0);
	assert_true(ly->num_tensors >= 2);
	const struct tp_tensor *out = &p->tensors[ly->first_tensor + ly->num_tensors - 1];
	assert_int_equal(out->is_in, 0);
	assert_int_equal(out->dtype, TP_DT_BF16);
	assert_int_equal(out->ndim, 4);
	assert_int_equal(out->shape[1], 24);
	const struct tp_slice *ld = by_cmd(tr[1], 1);
	const struct tp_layer *lly = layer_at(p, (size_t)(ld->layer));
	assert_string_equal(tp_str(p, lly->type), "Load");
	const struct tp_tensor *in = &p->tensors[lly->first_tensor];
	assert_int_equal(in->is_in, 1);
	assert_int_equal(in->gaddr, 2201171394560ull);
	assert_int_equal(in->dtype, TP_DT_FP32);
	tp_profile_free(p);
}

int main(void)
{
	setup_paths();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hex_parse),
	    cmocka_unit_test(test_trim_rules),
	    cmocka_unit_test(test_unwrap),
	    cmocka_unit_test(test_ns_cycles),
	    cmocka_unit_test(test_records_1688),
	    cmocka_unit_test(test_records_legacy),
	    cmocka_unit_test(test_global_node_layers),
	    cmocka_unit_test(test_cmd_1688),
	    cmocka_unit_test(test_cmdbuf_end_rule),
	    cmocka_unit_test(test_cmdbuf_lazy),
	    cmocka_unit_test(test_a2_cmd_stop),
	    cmocka_unit_test(test_fill_paths_agree),
	    cmocka_unit_test(test_cmd_1684),
	    cmocka_unit_test(test_cmd_1684x),
	    cmocka_unit_test(test_global_parse),
	    cmocka_unit_test(test_global_cut_node_line),
	    cmocka_unit_test(test_netstat_parse),
	    cmocka_unit_test(test_netstat_variants),
	    cmocka_unit_test(test_global_variants),
	    cmocka_unit_test(test_mlir_parse),
	    cmocka_unit_test(test_json_variants),
	    cmocka_unit_test(test_a2_small),
	    cmocka_unit_test(test_a2_layers_json),
	    cmocka_unit_test(test_x_small),
	    cmocka_unit_test(test_a2_small_oom),
	    cmocka_unit_test(test_bad_inputs),
	    cmocka_unit_test(test_real_bm1688),
	    cmocka_unit_test(test_real_cv184x),
	    cmocka_unit_test(test_real_cv184x_layers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
