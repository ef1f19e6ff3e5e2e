/*
 * desc_test.c — unit tests of the table-driven descriptor decoder (desc.c), the BM1688
 * register tables (regdef_bm1688.c) and the TIU cost model (cost.c), on hand-written
 * descriptors: every class's widths add up to its length, class selection from the header
 * key (short/long, SYS_TR_ACC's 3-bit eu, unknown keys), fields at the bit offsets the spec
 * gives (§1.3), fields crossing a 64-bit word, the end-of-stream rules (§1.4), the dict view
 * of repeated names, names identical to the hand-written decoder's, and the cost formulas on
 * the spec's worked examples (§3.1, §3.2, §3.4, §3.6).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>
#include <string.h>

#include "readers/sophgo/bmprofile/bmp_int.h"

/* Sets bits [off, off+w) of a little-endian buffer to v (w <= 64). */
static void put(uint8_t *b, unsigned off, unsigned w, uint64_t v)
{
	for (unsigned i = 0; i < w; i++) {
		unsigned bit = off + i;
		if ((v >> i) & 1)
			b[bit / 8] |= (uint8_t)(1u << (bit % 8));
		else
			b[bit / 8] &= (uint8_t) ~(1u << (bit % 8));
	}
}

/* The spec's worked reference commands, field by field: which command, the register's name
 * in the BM1688 layout (regdef_bm1688.c), its bit offset and width, and the value. */
enum ref_cmd { REF_SCONV, REF_SMM };

static const struct field {
	enum ref_cmd cmd;
	const char *name;
	unsigned off, w;
	uint64_t v;
} ref_fields[] = {
    /* §1.3 / §3.1, ref cmd 2: sCONV (tsk_typ 0, conv.normal) int8 (opt_res0_prec and
     * opt_opd0_prec 0) 1x64x112x112, ic 3, 7x7. */
    {REF_SCONV, "cmd_short", 0, 1, 1},
    {REF_SCONV, "cmd_id_dep", 17, 24, 2},
    {REF_SCONV, "tsk_typ", 41, 4, 0},
    {REF_SCONV, "tsk_eu_typ", 45, 5, 0},
    {REF_SCONV, "opt_res0_prec", 65, 3, 0},
    {REF_SCONV, "opt_opd0_prec", 68, 3, 0},
    {REF_SCONV, "res0_n", 160, 16, 1},
    {REF_SCONV, "res0_c", 176, 16, 64},
    {REF_SCONV, "res0_h", 192, 16, 112},
    {REF_SCONV, "res0_w", 208, 16, 112},
    {REF_SCONV, "opd0_c", 224, 16, 3},
    {REF_SCONV, "opd0_h", 240, 16, 224},
    {REF_SCONV, "opd0_w", 256, 16, 224},
    {REF_SCONV, "opd1_h", 272, 16, 7},
    {REF_SCONV, "opd1_w", 288, 16, 7},
    /* §3.2, ref cmd 192: sMM (tsk_typ 2, mm.normal), int8 x int8 -> int32 (opt_res0_prec 4,
     * opt_opd0_prec 0), m 1, k 64, N 1024. */
    {REF_SMM, "cmd_short", 0, 1, 1},
    {REF_SMM, "tsk_typ", 41, 4, 2},
    {REF_SMM, "tsk_eu_typ", 45, 5, 1},
    {REF_SMM, "opt_res0_prec", 67, 3, 4},
    {REF_SMM, "opt_opd0_prec", 70, 3, 0},
    {REF_SMM, "res0_c", 112, 16, 4},
    {REF_SMM, "res0_w", 128, 16, 256},
    {REF_SMM, "opd0_n", 144, 16, 1},
    {REF_SMM, "opd0_c", 160, 16, 2},
    {REF_SMM, "opd0_w", 176, 16, 32},
};

/* Sets the fields of reference command cmd in b. */
static void put_fields(uint8_t *b, enum ref_cmd cmd)
{
	for (size_t i = 0; i < sizeof ref_fields / sizeof ref_fields[0]; i++)
		if (ref_fields[i].cmd == cmd)
			put(b, ref_fields[i].off, ref_fields[i].w, ref_fields[i].v);
}

/* Every field of reference command cmd is where the decoded class rc lays out the register
 * of that name (offsets are the sums of the widths before it). */
static void check_fields(const struct sg_regclass *rc, enum ref_cmd cmd)
{
	for (size_t i = 0; i < sizeof ref_fields / sizeof ref_fields[0]; i++) {
		const struct field *f = &ref_fields[i];
		if (f->cmd != cmd)
			continue;
		unsigned off = 0;
		uint16_t k = 0;
		while (k < rc->nfields && strcmp(rc->fields[k].name, f->name) != 0)
			off += rc->fields[k++].width;
		if (k == rc->nfields || off != f->off || rc->fields[k].width != f->w)
			fail_msg("%s %s: bits %u+%u in the test, not in the register layout",
			         rc->op_name, f->name, f->off, f->w);
	}
}

/* Builds reference command cmd in b[0..n) (the rest zero) and decodes it: one TIU
 * descriptor of class op whose layout holds the command's fields where the table puts them. */
static void decode_ref(const struct sg_decoder *d, enum ref_cmd cmd, uint8_t *b, size_t n,
                       const char *op, struct sg_desc *c)
{
	memset(b, 0, n);
	put_fields(b, cmd);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, n, c), 1);
	assert_string_equal(c->cls->rc->op_name, op);
	check_fields(c->cls->rc, cmd);
}

/* One BM1688 decoder for the whole group (decoding does not change it), handed to every test
 * as its cmocka state. */
static int dec_setup(void **state)
{
	struct sg_decoder *d = NULL;
	if (sg_decoder_new(&sg_isa_bm1688, 4, &d) != TP_OK || !d)
		return -1;
	*state = d;
	return 0;
}

static int dec_teardown(void **state)
{
	sg_decoder_free(*state);
	return 0;
}

static const struct sg_chip *chip1688(void)
{
	const struct sg_chip *c = sg_chip_by_arch(TP_ARCH_BM1688);
	assert_non_null(c);
	return c;
}

static void test_tables_consistent(void **state)
{
	(void)state;
	const struct sg_isa *isa = &sg_isa_bm1688;
	const struct sg_regclass *sets[2] = {isa->tiu, isa->dma};
	uint16_t n[2] = {isa->ntiu, isa->ndma};
	assert_int_equal(isa->ntiu, 29);
	assert_int_equal(isa->ndma, 12);
	for (int e = 0; e < 2; e++)
		for (uint16_t i = 0; i < n[e]; i++) {
			unsigned sum = 0;
			for (uint16_t f = 0; f < sets[e][i].nfields; f++) {
				assert_true(sets[e][i].fields[f].width >= 1 &&
				            sets[e][i].fields[f].width <= 64);
				sum += sets[e][i].fields[f].width;
			}
			if (sum != sets[e][i].length)
				fail_msg("%s: widths add up to %u, length %u", sets[e][i].op_name,
				         sum, sets[e][i].length);
		}
	assert_ptr_equal(sg_isa_for_arch(TP_ARCH_BM1688), &sg_isa_bm1688);
	assert_ptr_equal(sg_isa_for_arch(TP_ARCH_CV184X), &sg_isa_cv184x);
	assert_ptr_equal(sg_isa_for_arch(TP_ARCH_BM1690), &sg_isa_bm1690);
	assert_ptr_equal(sg_isa_for_arch(TP_ARCH_BM1684X), &sg_isa_bm1684x);
	assert_null(sg_isa_for_arch(TP_ARCH_BM1684));
	/* Every linked table builds a decoder (CV184X's gather/scatter list more bits than
	 * their length, as the vendor's regdef does: accepted, the command stays 96 bytes). */
	static const enum tp_arch arches[] = {TP_ARCH_BM1688, TP_ARCH_CV184X, TP_ARCH_BM1690,
	                                      TP_ARCH_BM1684X};
	for (size_t i = 0; i < sizeof arches / sizeof *arches; i++) {
		struct sg_decoder *dd = NULL;
		const struct sg_chip *ch = sg_chip_by_arch(arches[i]);
		assert_non_null(ch);
		unsigned bits = ch->dma_cmd_type_bits ? ch->dma_cmd_type_bits : 4;
		assert_int_equal(sg_decoder_new(sg_isa_for_arch(arches[i]), bits, &dd), TP_OK);
		sg_decoder_free(dd);
	}
}

/* A class whose widths do not add up is refused. */
static void test_bad_table(void **state)
{
	(void)state;
	static const struct sg_field f[] = {{"a", 3}, {"b", 4}};
	static const struct sg_regclass rc[] = {{"X", 8, f, 2}};
	static const struct sg_opclass ops[] = {{"X", 0, 0, NULL, 0}};
	struct sg_isa isa = {
	    .arch = TP_ARCH_BM1688, .tiu = rc, .ntiu = 1, .tiu_ops = ops, .ntiu_ops = 1};
	struct sg_decoder *d = NULL;
	assert_int_equal(sg_decoder_new(&isa, 4, &d), TP_EFORMAT);
	assert_null(d);
	static const struct sg_opclass bad_ops[] = {{"Y", 0, 0, NULL, 0}};
	static const struct sg_field g[] = {{"a", 3}, {"b", 5}};
	static const struct sg_regclass rc2[] = {{"X", 8, g, 2}};
	isa.tiu = rc2;
	isa.tiu_ops = bad_ops;
	assert_int_equal(sg_decoder_new(&isa, 4, &d), TP_EFORMAT);
	assert_int_equal(sg_decoder_new(&sg_isa_bm1688, 3, &d), TP_EFORMAT);
}

static void test_bits(void **state)
{
	(void)state;
	uint8_t b[24] = {0};
	put(b, 60, 8, 0xA5); /* crosses the first 64-bit word */
	assert_int_equal(sg_bits(b, sizeof b, 60, 8), 0xA5);
	put(b, 96, 64, UINT64_C(0x0123456789ABCDEF)); /* a 64-bit field crossing a word */
	assert_true(sg_bits(b, sizeof b, 96, 64) == UINT64_C(0x0123456789ABCDEF));
	assert_true(sg_bits(b, sizeof b, 128, 32) == UINT64_C(0x01234567));
	/* Bits past the descriptor read as 0, even when the word is partly inside. */
	assert_int_equal(sg_bits(b, 20, 152, 16), 0x01);
	assert_int_equal(sg_bits(b, 20, 160, 8), 0);
	assert_int_equal(sg_bits(b, sizeof b, 0, 64), (uint64_t)0xA5 << 60);
}

/* Spec §1.3 worked example and §3.1 check: ref cmd 2, sCONV int8 1x64x112x112, ic 3, 7x7. */
static void test_sconv(void **state)
{
	struct sg_decoder *d = *state;
	uint8_t b[64];
	struct sg_desc c;
	decode_ref(d, REF_SCONV, b, sizeof b, "sCONV", &c);
	assert_string_equal(c.sub_name, "conv.normal");
	assert_int_equal(c.bytes, 64);
	assert_int_equal(sg_get(&c, b, SG_F_CMD_ID_DEP), 2);
	assert_int_equal(sg_get(&c, b, SG_F_RES0_C), 64);
	assert_int_equal(sg_get(&c, b, SG_F_OPD0_W), 224);
	assert_int_equal(sg_get(&c, b, SG_F_OPD1_H), 7);
	assert_int_equal(c.cls->kofs[SG_F_OPT_RES0_PREC], 65);
	assert_false(sg_has(&c, SG_F_OPD0_N)); /* sCONV has no opd0_n register */
	assert_int_equal(sg_get(&c, b, SG_F_OPD0_N), 0);
	/* Does not fit: 63 bytes. */
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, 63, &c), 0);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, sizeof b, &c), 1);
	struct tp_cost k;
	sg_tiu_cost(chip1688(), &c, b, &k);
	assert_int_equal(k.valid, 1);
	assert_true(k.alg_ops == UINT64_C(235225088));
	assert_true(k.uarch_ops == UINT64_C(2516828160));
	assert_int_equal(k.alg_cycle, 28714);
	assert_int_equal(k.init_cycle, 23);
	assert_int_equal(k.bank_cycle, 0);
	char buf[16];
	sg_pct1(buf, sizeof buf, (double)k.alg_ops, (double)k.uarch_ops);
	assert_string_equal(buf, "9.3%");
	sg_pct1(buf, sizeof buf, 23, 312031 + 1e-4);
	assert_string_equal(buf, "0.0%");
	/* The same bits as a long descriptor select CONV (128 bytes). */
	uint8_t l[128] = {0};
	put(l, 41, 4, 0);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, l, sizeof l, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "CONV");
	assert_int_equal(c.bytes, 128);
}

/* §3.2 check, ref cmd 192: sMM, int8 x int8 -> int32, m 1, k 64, N 1024. */
static void test_smm(void **state)
{
	struct sg_decoder *d = *state;
	uint8_t b[48];
	struct sg_desc c;
	decode_ref(d, REF_SMM, b, sizeof b, "sMM", &c);
	assert_int_equal(c.bytes, 48);
	struct tp_cost k;
	sg_tiu_cost(chip1688(), &c, b, &k);
	assert_true(k.alg_ops == 131072 && k.uarch_ops == 1048576);
	assert_int_equal(k.alg_cycle, 128);
	assert_int_equal(k.init_cycle, 32);
	char buf[16];
	sg_pct1(buf, sizeof buf, (double)k.alg_ops, (double)k.uarch_ops);
	assert_string_equal(buf, "12.5%");
	/* eu 4: sMM2, 32 bytes. */
	put(b, 45, 5, 4);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, sizeof b, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "sMM2");
	assert_string_equal(c.sub_name, "mm2.nn");
	assert_int_equal(c.bytes, 32);
	/* An unlisted eu of a known op keeps the op's first class and has no name. */
	put(b, 45, 5, 9);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, sizeof b, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "sMM");
	assert_null(c.sub_name);
	sg_tiu_cost(chip1688(), &c, b, &k);
	assert_int_equal(k.valid, 0);
}

/* §3.4 (cmd 17, add_satu INT16) and §3.6 (cmd 256, rq1 INT32 -> INT8, bank conflict). */
static void test_sar_srq(void **state)
{
	struct sg_decoder *d = *state;
	const struct sg_chip *ch = chip1688();
	uint8_t b[64] = {0};
	put(b, 0, 1, 1);
	put(b, 41, 4, 3);
	put(b, 45, 5, 15);
	struct sg_desc c;
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, sizeof b, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "sAR");
	assert_string_equal(c.sub_name, "arith.add_satu");
	put(b, c.cls->kofs[SG_F_OPT_OPD0_PREC], 3, 3);
	put(b, c.cls->kofs[SG_F_RES0_N], 16, 1);
	put(b, c.cls->kofs[SG_F_RES0_C], 16, 256);
	put(b, c.cls->kofs[SG_F_RES0_H], 16, 28);
	put(b, c.cls->kofs[SG_F_RES0_W], 16, 56);
	struct tp_cost k;
	sg_tiu_cost(ch, &c, b, &k);
	assert_true(k.alg_ops == 401408 && k.uarch_ops == 401408);
	assert_int_equal(k.alg_cycle, 1568);
	assert_int_equal(k.init_cycle, 11);

	uint8_t q[32] = {0};
	put(q, 0, 1, 1);
	put(q, 41, 4, 4);
	put(q, 45, 5, 1);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, q, sizeof q, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "sRQ&sDQ");
	assert_int_equal(c.bytes, 32);
	put(q, c.cls->kofs[SG_F_OPT_OPD0_PREC], 3, 4);
	put(q, c.cls->kofs[SG_F_RES0_N], 16, 1);
	put(q, c.cls->kofs[SG_F_RES0_C], 16, 4);
	put(q, c.cls->kofs[SG_F_RES0_H], 16, 1);
	put(q, c.cls->kofs[SG_F_RES0_W], 16, 256);
	put(q, c.cls->kofs[SG_F_RES0_ADDR], 26, 65536);
	put(q, c.cls->kofs[SG_F_OPD0_ADDR], 27, 65536);
	sg_tiu_cost(ch, &c, q, &k);
	assert_true(k.alg_ops == 3072 && k.uarch_ops == 24576);
	assert_int_equal(k.alg_cycle, 8);
	assert_int_equal(k.bank_cycle, 1);
	put(q, c.cls->kofs[SG_F_OPD0_ADDR], 27, 131072); /* res0_addr * 2 == opd0_addr */
	sg_tiu_cost(ch, &c, q, &k);
	assert_int_equal(k.bank_cycle, 2);
	/* No model for chips without one. */
	sg_tiu_cost(sg_chip_by_arch(TP_ARCH_BM1684X), &c, q, &k);
	assert_int_equal(k.valid, 0);
}

/* SYS_TR_ACC has a 3-bit eu: bits 48.. belong to reg_idx1, which must not change the key. */
static void test_sys_heads_and_end(void **state)
{
	struct sg_decoder *d = *state;
	uint8_t b[16 + 200] = {0};
	put(b, 41, 4, 12);
	put(b, 48, 8, 6); /* reg_idx1 */
	struct sg_desc c;
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, 16, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "SYS_TR_ACC");
	assert_string_equal(c.sub_name, "system_tr_wr.wr_imm");
	assert_int_equal(c.bytes, 16);
	assert_false(sg_has(&c, SG_F_CMD_ID_DEP));
	struct tp_cost k;
	sg_tiu_cost(chip1688(), &c, b, &k);
	assert_true(k.valid && k.alg_ops == 1 && k.uarch_ops == 1 && k.alg_cycle == 0);
	assert_false(sg_is_end(SG_ENG_TIU, &c, b, b + 16, 128));

	/* SYS send_msg: Msg Id / count in imm (bits 64..127). */
	memset(b, 0, sizeof b);
	put(b, 41, 4, 15);
	put(b, 45, 5, 8);
	put(b, 64, 64, 262174);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, 16, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "SYS");
	assert_string_equal(c.sub_name, "system.send_msg");
	assert_int_equal(sg_get(&c, b, SG_F_IMM) & 0x7F, 30);
	assert_int_equal((sg_get(&c, b, SG_F_IMM) >> 16) & 7, 4);
	/* End: a SYS followed by fewer than 129 zero bytes; not with 129, nor with data. */
	assert_true(sg_is_end(SG_ENG_TIU, &c, b, b + 16, 128));
	assert_false(sg_is_end(SG_ENG_TIU, &c, b, b + 16, 129));
	b[40] = 1;
	assert_false(sg_is_end(SG_ENG_TIU, &c, b, b + 16, 128));
	/* SYS end with rsvd1 == 1 ends whatever follows. */
	put(b, 45, 5, 31);
	put(b, 1, 16, 1);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, 16, &c), 1);
	assert_string_equal(c.sub_name, "system.end");
	assert_true(sg_is_end(SG_ENG_TIU, &c, b, b + 16, 128));
	/* Unknown task types: nothing matches. */
	memset(b, 0, sizeof b);
	put(b, 41, 4, 11);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, 16, &c), 0);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, 7, &c), 0);
}

static void test_dma(void **state)
{
	struct sg_decoder *d = *state;
	uint8_t b[96] = {0};
	/* Ref GDMA cmd 3: tensorLd 1x32x1x160 from DDR (h8 144) to LMEM 0. */
	put(b, 1, 1, 1);
	put(b, 2, 1, 1);
	put(b, 32, 4, 0);
	put(b, 64, 24, 2); /* cmd_id_dep */
	struct sg_desc c;
	assert_int_equal(sg_decode(d, SG_ENG_DMA, b, sizeof b, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "DMA_tensor");
	assert_int_equal(c.bytes, 96);
	assert_int_equal(c.cls->kofs[SG_F_SRC_L32], 512);
	assert_int_equal(c.cls->kofs[SG_F_SRC_H8], 544);
	assert_int_equal(c.cls->kofs[SG_F_DST_L32], 576);
	assert_int_equal(sg_get(&c, b, SG_F_CMD_ID_DEP), 2);
	/* Repeated names: "reserved" shows once, at its first position, with the last value. */
	const struct sg_dclass *dc = c.cls;
	uint16_t first = UINT16_MAX, last = 0, shown = 0;
	for (uint16_t i = 0; i < dc->rc->nfields; i++)
		if (strcmp(dc->rc->fields[i].name, "reserved") == 0) {
			if (first == UINT16_MAX)
				first = i;
			last = i;
			if (dc->dict_src[i] != UINT16_MAX)
				shown++;
		}
	assert_int_equal(shown, 1);
	assert_int_equal(dc->dict_src[first], last);
	/* Matrix: its address fields are spelled *_h32 / *_l8 in the table, same offsets. */
	put(b, 32, 4, 1);
	assert_int_equal(sg_decode(d, SG_ENG_DMA, b, sizeof b, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "DMA_matrix");
	assert_int_equal(c.cls->kofs[SG_F_SRC_L32], 512);
	assert_int_equal(c.cls->kofs[SG_F_DST_H8], 608);
	/* Gather: other fields before, the addresses at the same offsets. */
	put(b, 32, 4, 7);
	assert_int_equal(sg_decode(d, SG_ENG_DMA, b, sizeof b, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "DMA_gather");
	assert_int_equal(c.cls->kofs[SG_F_SRC_L32], 512);
	/* sys (short): 16 bytes; chain_end with reserved0 == 1 ends the stream. */
	memset(b, 0, sizeof b);
	put(b, 3, 1, 1);
	put(b, 32, 4, 6);
	assert_int_equal(sg_decode(d, SG_ENG_DMA, b, 16, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "sDMA_sys");
	assert_string_equal(c.sub_name, "chain end"); /* bm1688_defs.py::getDmaFunctionName */
	assert_int_equal(c.bytes, 16);
	assert_false(sg_is_end(SG_ENG_DMA, &c, b, b + 16, 80));
	put(b, 4, 1, 1);
	assert_true(sg_is_end(SG_ENG_DMA, &c, b, b + 16, 80));
	put(b, 36, 3, 4);
	assert_int_equal(sg_decode(d, SG_ENG_DMA, b, 16, &c), 1);
	assert_string_equal(c.sub_name, "sys_wait");
	assert_false(sg_is_end(SG_ENG_DMA, &c, b, b + 16, 80));
	/* cmd_type 12..15 do not exist on BM1688. */
	put(b, 32, 4, 13);
	assert_int_equal(sg_decode(d, SG_ENG_DMA, b, 16, &c), 0);
}

/* Builds a short TIU descriptor of (tsk_typ, eu) and returns its decoded head. */
static void short_tiu(struct sg_decoder *d, uint8_t *b, size_t n, unsigned typ, unsigned eu,
                      struct sg_desc *c)
{
	memset(b, 0, n);
	put(b, 0, 1, 1);
	put(b, 41, 4, typ);
	put(b, 45, 5, eu);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, n, c), 1);
}

static void set(uint8_t *b, const struct sg_desc *c, enum sg_fid f, uint64_t v)
{
	assert_true(c->cls->kw[f] > 0);
	put(b, c->cls->kofs[f], c->cls->kw[f], v);
}

/* Result 0's shape n x ch x h x w. */
static void set_res(uint8_t *b, const struct sg_desc *c, uint64_t n, uint64_t ch, uint64_t h,
                    uint64_t w)
{
	set(b, c, SG_F_RES0_N, n);
	set(b, c, SG_F_RES0_C, ch);
	set(b, c, SG_F_RES0_H, h);
	set(b, c, SG_F_RES0_W, w);
}

/* The cost of the command in b: valid, with these figures. */
static void expect_cost(const struct sg_chip *ch, const struct sg_desc *c, const uint8_t *b,
                        uint64_t alg, uint64_t uarch, uint32_t cycle, uint32_t init)
{
	struct tp_cost k;
	sg_tiu_cost(ch, c, b, &k);
	assert_true(k.valid);
	assert_int_equal(k.alg_ops, alg);
	assert_int_equal(k.uarch_ops, uarch);
	assert_int_equal(k.alg_cycle, cycle);
	assert_int_equal(k.init_cycle, init);
}

/* Classes absent from the reference dump, figures worked out by hand from §3.3/§3.7/§3.11
 * and the result shapes/types of target_1688/opparam.py. */
static void test_cost_unverified_classes(void **state)
{
	struct sg_decoder *d = *state;
	const struct sg_chip *ch = chip1688();
	uint8_t b[64];
	struct sg_desc c;
	struct tp_cost k;
	/* sCW&sBC s_bc, INT8, res 2x40x3x10 -> result (1,40,1,10): alg 400, uArch
	 * ALIGN(40,32) * ALIGN(10,16) = 1024, throughput (16/1)*32 = 512 -> 1 cycle, init 3. */
	short_tiu(d, b, sizeof b, 5, 4, &c);
	assert_string_equal(c.cls->rc->op_name, "sCW&sBC");
	set_res(b, &c, 2, 40, 3, 10);
	expect_cost(ch, &c, b, 400, 1024, 1, 3);
	/* sCMP sel_gt (23), opd0 INT8, opd2 FP32, res 1x64x2x8: alg 2048, uArch
	 * 64*ALIGN(16,16)*2 = 2048, result type FP32 -> (16/4)*32*2 = 256 -> 8 cycles, init 9. */
	short_tiu(d, b, sizeof b, 13, 23, &c);
	assert_string_equal(c.cls->rc->op_name, "sCMP");
	set(b, &c, SG_F_OPT_OPD2_PREC, 2);
	set_res(b, &c, 1, 64, 2, 8);
	expect_cost(ch, &c, b, 2048, 2048, 8, 9);
	/* sMM2 nn, opd0 INT8, res INT32: m 40, k 10, n 20: alg 16000; uArch k->12, m->64,
	 * n->ALIGN(20, CUBE(INT32)=1) = 20: 30720; cycle DIV_UP(16000, 32*4*32*2) = 2; init 81. */
	short_tiu(d, b, sizeof b, 2, 4, &c);
	assert_string_equal(c.cls->rc->op_name, "sMM2");
	set(b, &c, SG_F_OPT_RES0_PREC, 4);
	set(b, &c, SG_F_RES0_C, 40);
	set(b, &c, SG_F_OPD1_W, 10);
	set(b, &c, SG_F_OPD1_C, 20);
	expect_cost(ch, &c, b, 16000, 30720, 2, 81);
	/* tt: (m, k, n) <- (k, m, k) = (10, 40, 10): alg 8000; uArch 40*32*10*2 = 25600. */
	put(b, 45, 5, 6);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, sizeof b, &c), 1);
	sg_tiu_cost(ch, &c, b, &k);
	assert_true(k.alg_ops == 8000 && k.uarch_ops == 25600);
	assert_int_equal(k.init_cycle, 37);
	/* LAR is not modelled. */
	memset(b, 0, sizeof b);
	put(b, 41, 4, 7);
	assert_int_equal(sg_decode(d, SG_ENG_TIU, b, 16, &c), 1);
	assert_string_equal(c.cls->rc->op_name, "LAR");
	sg_tiu_cost(ch, &c, b, &k);
	assert_int_equal(k.valid, 0);
}

/* Decodes b[0..len) with the hand-written decoder (a) and the table decoder (t): both take
 * it, with the same length. */
static void decode_both(const struct sg_decoder *d, int eng, const uint8_t *b, size_t len,
                        struct bmp_cmd *a, struct bmp_cmd *t)
{
	size_t n = bmp_cmd_size(TP_ARCH_BM1688, eng, b, len);
	assert_true(n > 0);
	bmp_cmd_decode(TP_ARCH_BM1688, eng, b, n, a);
	assert_int_equal(bmp_cmd_decode_dec(d, eng, b, len, t), 1);
	assert_int_equal(t->desc.bytes, n);
}

/* TIU sub-operation s of class o, short or long as the class is: the table decoder names it as
 * the hand-written one does. */
static void tiu_names_match(const struct sg_decoder *d, const struct sg_opclass *o, uint16_t s)
{
	uint8_t b[128] = {0};
	put(b, 0, 1, o->is_short > 0);
	put(b, 41, 4, o->op);
	put(b, 45, o->op == 12 ? 3 : 5, o->subs[s].code);
	struct bmp_cmd a, t;
	decode_both(d, BMP_ENG_TIU, b, sizeof b, &a, &t);
	assert_string_equal(a.name, t.name);
	assert_string_equal(a.type, t.type);
	assert_int_equal(a.kind, t.kind);
	assert_int_equal(a.dep, t.dep);
}

/* DMA sub-operation s of class o with its source in DDR. Names follow the vendor's printer
 * (the op index), not the hand-written decoder: Function Type = the name of sp 0,
 * tensor/matrix sp 0 by direction. */
static void dma_names_match(const struct sg_decoder *d, const struct sg_opclass *o, uint16_t s)
{
	uint8_t b[96] = {0};
	put(b, 3, 1, o->is_short > 0);
	put(b, 32, 4, o->op);
	put(b, 36, 3, o->subs[s].code);
	put(b, 544, 8, 0x90); /* source in DDR */
	struct bmp_cmd a, t;
	decode_both(d, BMP_ENG_GDMA, b, sizeof b, &a, &t);
	assert_string_equal(t.type, o->subs[0].name);
	if (o->op <= 1 && o->subs[s].code == 0)
		assert_string_equal(t.name, "tensorLd");
	else
		assert_string_equal(t.name, o->subs[s].name);
	/* (De)compress have no src (dst) address register: the hand-written decoder read the
	 * tensor layout's offsets there, the tables read nothing. */
	if (o->op != 10 && o->op != 11)
		assert_int_equal(a.dir, t.dir);
	assert_int_equal(a.dtype, t.dtype);
}

/* Runs check on every sub-operation of the n classes ops; returns how many it checked. */
static unsigned each_sub(const struct sg_decoder *d, const struct sg_opclass *ops, uint16_t n,
                         void (*check)(const struct sg_decoder *d, const struct sg_opclass *o,
                                       uint16_t s))
{
	unsigned checked = 0;
	for (uint16_t i = 0; i < n; i++)
		for (uint16_t s = 0; s < ops[i].nsubs; s++, checked++)
			check(d, &ops[i], s);
	return checked;
}

/* The table decoder names every listed code exactly as the hand-written decoder does. */
static void test_names_match_legacy(void **state)
{
	const struct sg_decoder *d = *state;
	const struct sg_isa *isa = &sg_isa_bm1688;
	unsigned checked = each_sub(d, isa->tiu_ops, isa->ntiu_ops, tiu_names_match) +
	                   each_sub(d, isa->dma_ops, isa->ndma_ops, dma_names_match);
	assert_true(checked > 130);
}

#define TP_TEST_GROUP_SETUP dec_setup
#define TP_TEST_GROUP_TEARDOWN dec_teardown
#include "tp_test_main.h"
