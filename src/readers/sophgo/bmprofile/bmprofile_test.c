/*
 * bmprofile_test.c — unit tests of the bmprofile reader's pieces: the hex fixture loader, the
 * timeline rules of §9.2 one by one, the iter records and the command decoders of every arch,
 * and the global.profile, net_stat.sim, final.mlir and tensor_location.json parsers. Whole
 * dumps are read in bmp_read_test.c (synthetic) and bmp_real_test.c (../shared).
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
#include "readers/sophgo/sg_testutil.h"
#include "readers/sophgo/sophgo.h"
#include "testutil.h"

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
	size_t n;
	uint8_t *b = sgt_load_hex("cmd_bm1684.hex", &n);
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
	size_t n;
	uint8_t *b = sgt_load_hex("cmd_bm1684x_tiu.hex", &n);
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
	b = sgt_load_hex("cmd_bm1684x_gdma.hex", &n);
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

/* A global.profile of arch 4 with one global layer (a tensor, TIU nodes written both ways, one
 * GDMA node), an "end parallel." line, the core list and one memory record. */
static const char global_txt[] =
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

static void test_global_parse(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	struct bmp_global g;
	memset(&g, 0, sizeof g);
	g.keep_ids = 1;
	struct tp_diag d = {0};
	assert_int_equal(bmp_global_parse(global_txt, sizeof global_txt - 1, "g", p, &g, &d),
	                 TP_OK);
	assert_int_equal(g.arch, TP_ARCH_BM1688);
	assert_int_equal(g.tpu_freq, 0);
	assert_string_equal(tp_str(p, p->net_name), "my net");
	assert_int_equal(p->num_layers, 1);
	assert_string_equal(tp_str(p, sgt_layer_at(p, 0)->type), "MatMul");
	assert_string_equal(tp_str(p, sgt_layer_at(p, 0)->name), "fc 1");
	assert_int_equal(sgt_layer_at(p, 0)->subnet, 3);
	assert_int_equal(sgt_layer_at(p, 0)->is_local, 0);
	assert_int_equal(sgt_layer_at(p, 0)->core, 1);
	assert_int_equal(p->num_tensors, 1);
	assert_int_equal(p->tensors[0].id, -2);
	assert_int_equal(p->tensors[0].ndim, 2);
	assert_int_equal(p->tensors[0].shape[1], 3);
	assert_int_equal(p->tensors[0].dtype, TP_DT_INT32);
	/* BM1688 TIU node written as "gdma cmd_id ... bd_func=": a TIU node of core 1. */
	assert_int_equal(g.nodes[1][BMP_ENG_TIU].n, 1);
	assert_int_equal(sgt_node_layer(&g.nodes[1][BMP_ENG_TIU], 0), 0);
	assert_int_equal(g.nodes[1][BMP_ENG_TIU].gdma_id[0], 163840);
	assert_int_equal(g.nodes[1][BMP_ENG_GDMA].n, 1);
	/* "bd cmd_id" (BM1684X) is TIU, core 0. After "end parallel." it still belongs to the
	 * global layer on the legacy arches (keep_ids: the vendor's join). */
	assert_int_equal(g.nodes[0][BMP_ENG_TIU].n, 1);
	assert_int_equal(sgt_node_layer(&g.nodes[0][BMP_ENG_TIU], 0), 0);
	assert_int_equal(g.nodes[0][BMP_ENG_TIU].bd_id[0], 2);
	assert_int_equal(g.n_cores, 2);
	assert_int_equal(p->num_mems, 1);
	assert_string_equal(tp_str(p, p->mems[0].desc), "dyn profile");
	assert_string_equal(tp_profile_get_meta(p, "core_list"), "0,1,");
	bmp_global_free(&g);
	tp_profile_free(p);
	/* Without node ids (BM1688 and later) "end parallel." ends the global layer too. */
	p = tp_profile_new();
	memset(&g, 0, sizeof g);
	assert_int_equal(bmp_global_parse(global_txt, sizeof global_txt - 1, "g", p, &g, &d),
	                 TP_OK);
	assert_int_equal(sgt_node_layer(&g.nodes[0][BMP_ENG_TIU], 0), -1);
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

/* A net_stat.sim of two BD items and one GDMA item with its summary lines. */
static const char netstat_txt[] =
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

static void test_netstat_parse(void **state)
{
	(void)state;
	struct bmp_netstat ns;
	struct tp_diag d = {0};
	assert_int_equal(bmp_netstat_parse(netstat_txt, sizeof netstat_txt - 1, "n", &ns, &d),
	                 TP_OK);
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

/* The items kept per engine in file order, with their ids and cycles; a GDMA_CONSTANT fill
 * (no dr: key) is filed under BD, as the vendor's legacy reader files it. */
static void test_netstat_items(void **state)
{
	(void)state;
	static const char txt[] =
	    "ENGINE_BD     ENGINE_GDMA\n"
	    "              Load_20|GDMA_TENSOR|s:0|b:0|g:1|e:3638|t:3639|dr:0|sz:196608|bw:50.32\n"
	    "Cast_23|AR|s:3639|b:1|g:1|e:4662|t:1024  "
	    "Pad_35|GDMA_CONSTANT|s:1|b:18|g:10|e:2|t:564\n";
	struct bmp_netstat ns;
	struct bmp_sim_items it = {0};
	assert_int_equal(bmp_netstat_parse_items(txt, sizeof txt - 1, "n", &ns, NULL, &it), TP_OK);
	assert_int_equal(it.n[1], 1);
	assert_int_equal(it.v[1][0].g, 1);
	assert_int_equal(it.v[1][0].t, 3639);
	assert_int_equal(it.n[0], 2);
	assert_int_equal(it.v[0][0].b, 1);
	assert_int_equal(it.v[0][0].t, 1024);
	assert_int_equal(it.v[0][1].b, 18);
	assert_int_equal(it.v[0][1].g, 10);
	assert_int_equal(it.v[1][0].layer, 20); /* the id the name ends in */
	assert_int_equal(it.v[0][0].layer, 23);
	assert_int_equal(it.v[0][1].layer, 35);
	assert_int_equal(ns.bd_items, 2);
	bmp_sim_items_free(&it);
	/* names that end in no "_<digits>" name no layer */
	static const char odd[] = "|SYS|s:0|b:1|g:0|e:1|t:1  Conv2D|AR|s:1|b:2|g:0|e:2|t:1  "
	                          "x_12a|AR|s:2|b:3|g:0|e:3|t:1  _7|AR|s:3|b:4|g:0|e:4|t:1\n";
	assert_int_equal(bmp_netstat_parse_items(odd, sizeof odd - 1, "n", &ns, NULL, &it), TP_OK);
	assert_int_equal(it.n[0], 4);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(it.v[0][i].layer, -1);
	assert_int_equal(it.v[0][3].layer, 7);
	bmp_sim_items_free(&it);
}

/* A harmless variant of net_stat.sim (a side file), `what` it varies, of the text whose
 * figures are total 100, flops 5, S2L 7, L2S 8 and runtime 1.5 ms: it parses with no skipped
 * line and those figures. */
static void expect_netstat_variant(const char *what, const char *text)
{
	struct bmp_netstat ns;
	assert_int_equal(bmp_netstat_parse(text, strlen(text), "n", &ns, NULL), TP_OK);
	if (ns.bad_lines || !ns.have_total || ns.total_cycle != 100 || ns.flops != 5 ||
	    ns.dr_bytes[0] != 7 || ns.dr_bytes[1] != 8 || strcmp(ns.runtime_ms, "1.5") != 0)
		fail_msg("%s: bad %lu, total %llu, flops %llu, S2L %llu, L2S %llu, runtime %s",
		         what, ns.bad_lines, (unsigned long long)ns.total_cycle,
		         (unsigned long long)ns.flops, (unsigned long long)ns.dr_bytes[0],
		         (unsigned long long)ns.dr_bytes[1], ns.runtime_ms);
}

/* Harmless variants of net_stat.sim, one per kind. */
static void test_netstat_variants(void **state)
{
	(void)state;
	expect_netstat_variant(
	    "spaces around ':' (the real case that rejected a whole dump)",
	    "API_END total_cycle : 100|b:1|g:1\nTCYC : 224969\nflops : 5, runtime : 1.5ms\n"
	    "GDMA SUMMARY : |dr[0] S2L : 7|dr[1] L2S:8\n");
	expect_netstat_variant("CRLF line ends",
	                       "API_END total_cycle:100|b:1|g:1\r\nTCYC : 224969. (bdc_cycle:1, "
	                       "gdma_cycle:2)\r\nflops: 5, runtime: 1.5ms\r\nGDMA SUMMARY : |dr[0] "
	                       "S2L:7|dr[1] L2S:8\r\n");
	expect_netstat_variant("trailing blanks and indentation",
	                       "  API_END total_cycle:100|b:1|g:1   \nTCYC : "
	                       "224969.\t\n  flops: 5, runtime: 1.5ms  \n"
	                       "GDMA SUMMARY : |dr[0] S2L:7|dr[1] L2S:8 \n");
	expect_netstat_variant("reordered lines",
	                       "flops: 5, runtime: 1.5ms\nGDMA SUMMARY : |dr[0] S2L:7|dr[1] L2S:8\n"
	                       "TCYC : 224969.\nAPI_END total_cycle:100|b:1|g:1\n");
	expect_netstat_variant(
	    "unknown item keys and extra columns",
	    "ENGINE_BD ENGINE_GDMA EXTRA\nConv_1|CONV|s:1|b:1|g:0|e:3|t:3|pw:9 "
	    "Load_2|T|s:0|b:0|g:1|e:2|t:2|dr:0|sz:4|bw:1.0|zz:1 Extra_3|X|s:0|b:0|g:0|e:0|t:0\n"
	    "API_END total_cycle:100|b:1|g:1|new:3\nTCYC : 224969.\nflops: 5, runtime: 1.5ms, "
	    "Other: 3\nGDMA SUMMARY : |dr[0] S2L:7|dr[1] L2S:8|dr[4] X2Y:9\nNEW LINE : 42\n");
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
		    sgt_layer_at(p, 0)->id != 15 ||
		    strcmp(tp_str(p, sgt_layer_at(p, 0)->type), "Load") != 0 ||
		    p->num_tensors != 1 || p->tensors[0].loffset != 64 ||
		    p->tensors[0].shape[3] != 5 || g->nodes[0][BMP_ENG_GDMA].n != 1 ||
		    g->n_cores != 1)
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

/* tensor_location.json variants (tests/fixtures/bmprofile/tensor_location_variants.json,
 * CRLF line ends): unknown keys, any key order, blanks, a bad entry among good ones (skipped
 * and counted), numbers beyond int64 (treated as absent). */
/* sg_mlir_group_of: of the 64 groups opened last before a line, the first whose range holds
 * it; groups further back are not looked at. */
static void test_mlir_group_window(void **state)
{
	(void)state;
	struct sg_mlir_group g[70] = {0};
	for (uint32_t i = 0; i < 70; i++)
		g[i].line = 2 * i + 1;
	g[0].first = 2, g[0].last = 10000;
	g[10].first = 22, g[10].last = 500;
	g[11].first = 24, g[11].last = 500;
	struct sg_mlir m = {.groups = g, .ngroups = 70};
	assert_int_equal(sg_mlir_group_of(&m, 30), 0);   /* 0, 10 and 11 hold it: the first */
	assert_int_equal(sg_mlir_group_of(&m, 200), 10); /* group 0 is 70 groups back */
	assert_int_equal(sg_mlir_group_of(&m, 600), -1);
	assert_int_equal(sg_mlir_group_of(&m, 1), -1); /* no group opened before line 1 */
}

static void test_json_variants(void **state)
{
	(void)state;
	size_t n;
	uint8_t *js = tp_test_must_slurp(
	    tp_test_source_path("tests/fixtures/bmprofile/tensor_location_variants.json"), &n);
	assert_non_null(memchr(js, '\r', n)); /* the file has kept its CRLF line ends */
	int tt, gt;
	struct tp_profile *p = tp_test_tiu_gdma("t", 1, 1000, &tt, &gt);
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
	assert_int_equal(sg_layers_parse_json(p, js, n, "t.json", &L), TP_OK);
	assert_non_null(L.json);
	int ti[1] = {tt}, gi[1] = {gt};
	assert_int_equal(sg_layers_apply(p, &L, "t.json", ti, gi, 1, 1, 0), TP_OK);
	assert_int_equal(p->num_layers, 2); /* the [2] pair, the number 17 and 1e400 are skipped */
	const struct tp_layer *c = sgt_layer_at(p, 0);
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
	const struct tp_layer *a = sgt_layer_at(p, 1);
	assert_int_equal(a->id, -1);        /* 1e300 is no line */
	assert_int_equal(a->gdma_first, 0); /* dma 1 -> 1: no DMA command */
	assert_int_equal(a->tiu_first, 3);
	/* core_id -5e300 is no number: treated as absent, i.e. core 0 */
	assert_int_equal(sgt_by_cmd(&p->tracks[tt], 3)->layer, 1);
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
	free(js);
}

int main(void)
{
	sgt_setup("bmprofile", "bmprofile_test_tmp");
	const struct CMUnitTest tests[] = {
#include "tp_test_cases.h"
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
