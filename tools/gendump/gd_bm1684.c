/*
 * gd_bm1684.c — what the generator writes differently for BM1684 (arch=1): its fixed 128-byte
 * descriptors (TIU stored as 32 words in reverse order, GDMA as is; sophgo-bmprofile.md §6)
 * and the 16-bit id fields of its MCU records (§4.7); and the shapes of BM1684X's commands
 * (its DMA moves' sit at the same bits, its TIU commands' are found by name in the register
 * tables, regdef_bm1684x.c), which the vendor's BM1684X decoder divides by. The layer kernels build
 * every TIU command in the BM1688 header layout (gd_tiu_desc); the BM1684 descriptor is made from
 * that header's task and op type, with the shapes of the core's current activation.
 *
 * Field positions (bits of the logical, word-reversed TIU descriptor and of the GDMA one) are
 * tpu-mlir's BM1684 field tables (python/profile_helper/bm1684_defs.py, BDCommandParser and
 * GDMACommandParser), the layout the reader decodes (src/readers/sophgo/bmprofile/bmp_cmd.c).
 */
#include "gd_int.h"
#include "readers/sophgo/isa/sg_isa.h"

#include <string.h>

/* TIU (logical bit offsets). */
enum {
	T_CMD_EN = 0,
	T_CMD_END = 1,
	T_CMD_ID_EN = 2,
	T_CMD_ID_TPU = 3,   /* 16 */
	T_CMD_ID_GDMA = 19, /* 16: the GDMA command this one waits for */
	T_TSK_TYP = 37,     /* 4 */
	T_TSK_EU_TYP = 41,  /* 5 */
	T_TSK_OPD_NUM = 46, /* 2 */
	T_RES0_PREC = 67,   /* 3 each: result, opd0, opd1, opd2 */
	T_OPD0_PREC = 70,
	T_OPD1_PREC = 73,
	T_OPD2_PREC = 76,
	T_OPD0_UP_PAD = 110, /* 4 each: up, down, left, right */
	T_RES_OP_X_STR = 126,
	T_RES_OP_Y_STR = 130,
	T_RES0_N = 198, /* 16, then C 12, H 16, W 16 */
	T_OPD0_N = 258, /* 16, then C 12, H 16, W 16 */
	T_OPD1_N = 318, /* 12, then C 12, H 16, W 16 */
	T_RES0_ADDR = 576,
	T_OPD0_ADDR = 608,
	T_OPD1_ADDR = 640,
	T_OPD2_ADDR = 672,
};

/* GDMA. */
enum {
	G_CHAIN_END = 2,
	G_STRIDE_ENABLE = 5,
	G_DIRECTION = 6, /* 2: 0 S2L, 1 L2S, 2 S2S, 3 L2L */
	G_CMD_ID = 16,   /* 16 */
	G_SPECIAL_FUNC = 32,
	G_DST_FORMAT = 35,
	G_SYS_MEM_TYPE = 39, /* 0 neuron (tensor), 1 matrix */
	G_SRC_FORMAT = 40,
	G_ENG0_SYNC_ID = 48, /* 16: the TIU command this one waits for */
	G_SRC_NSTRIDE = 128, /* 32 each: src n, c, h, w, dst n, c, h, w */
	G_SRC_NSIZE = 384,   /* 16 each: src n, c, h, w, dst n, c, h, w */
	G_SRC_ADDR_L32 = 512,
	G_DST_ADDR_L32 = 544,
	G_SRC_ADDR_H8 = 576,
	G_DST_ADDR_H8 = 584,
};

/* BDFormat / GDMAFormat codes of FP32 (the BM1684 generator's data type). */
enum { TIU_FP32 = 2, GDMA_FP32 = 0 };

/* BM1684 task type and op of a BM1688-layout head: CONV -> CONV_NEURON, PorD ->
 * DEPTHWISE_OR_POOLING (max pooling: EU_MAX), MM/MM2 -> FC (EU_MAC), AR by op (mul_satu ->
 * EU_MUL, add_satu -> EU_ADD, cast -> EU_SUB: BM1684's casts are MD_SFU ops, which the
 * vendor's arithmetic decoder rejects; copy -> EU_COPY), and the final SYS end
 * (BM1684 has no sys command: the last command carries CMD_END) -> an EU_COPY. */
static void map_task(unsigned typ, unsigned eu, unsigned *t, unsigned *e)
{
	switch (typ) {
	case TSK_CONV:
		*t = 0;
		*e = 1;
		return;
	case TSK_PD:
		*t = 1;
		*e = eu == 1 ? 1 : 4;
		return;
	case TSK_MM:
		*t = 2;
		*e = 1;
		return;
	case TSK_AR:
		*t = 3;
		*e = eu == 20 ? 0 : eu == 15 ? 2 : eu == 14 ? 3 : 19;
		return;
	default:
		*t = 3;
		*e = 19;
		return;
	}
}

/* Writes the 32 logical words of l into b in reverse order (logical word j at word 31 - j). */
static void store_reversed(uint8_t *b, const uint8_t *l)
{
	for (unsigned j = 0; j < 32; j++)
		memcpy(b + 4 * (31 - j), l + 4 * j, 4);
}

void gd1684_tiu_desc(struct gen *g, struct core *c, uint8_t *b, const uint8_t *head, uint64_t dep)
{
	uint64_t h = tp_le64(head);
	unsigned typ, eu;
	map_task((unsigned)(h >> 41) & 15, (unsigned)(h >> 45) & 31, &typ, &eu);
	uint8_t l[128];
	memset(l, 0, sizeof l);
	setbits(l, T_CMD_EN, 1, 1);
	setbits(l, T_CMD_END, 1, g->ending ? 1 : 0);
	setbits(l, T_CMD_ID_EN, 1, 1);
	setbits(l, T_CMD_ID_TPU, 16, c->tiu_id & 0xFFFF);
	setbits(l, T_CMD_ID_GDMA, 16, dep & 0xFFFF);
	setbits(l, T_TSK_TYP, 4, typ);
	setbits(l, T_TSK_EU_TYP, 5, eu);
	setbits(l, T_TSK_OPD_NUM, 2, typ == 0 ? 3 : 2);
	setbits(l, T_RES0_PREC, 3, TIU_FP32);
	setbits(l, T_OPD0_PREC, 3, TIU_FP32);
	setbits(l, T_OPD1_PREC, 3, TIU_FP32);
	setbits(l, T_OPD2_PREC, 3, TIU_FP32);
	/* Shapes: the current activation (1 x ch x hw x hw); convolutions and pooling take a
	 * 3x3 kernel with padding 1 and stride 1, so the input has the same size. */
	unsigned ch = c->ch ? c->ch : 1, hw = c->hw ? c->hw : 1, k = typ <= 1 ? 3 : 1;
	if (ch > 4095)
		ch = 4095;
	setbits(l, T_RES0_N, 16, 1);
	setbits(l, T_RES0_N + 16, 12, ch);
	setbits(l, T_RES0_N + 28, 16, hw);
	setbits(l, T_RES0_N + 44, 16, hw);
	setbits(l, T_OPD0_N, 16, 1);
	setbits(l, T_OPD0_N + 16, 12, ch);
	setbits(l, T_OPD0_N + 28, 16, hw);
	setbits(l, T_OPD0_N + 44, 16, hw);
	setbits(l, T_OPD1_N, 12, typ == 0 ? ch : 1);
	setbits(l, T_OPD1_N + 12, 12, ch);
	setbits(l, T_OPD1_N + 24, 16, k);
	setbits(l, T_OPD1_N + 40, 16, k);
	if (k == 3)
		for (unsigned i = 0; i < 4; i++)
			setbits(l, T_OPD0_UP_PAD + 4 * i, 4, 1);
	setbits(l, T_RES_OP_X_STR, 4, 1);
	setbits(l, T_RES_OP_Y_STR, 4, 1);
	setbits(l, T_RES0_ADDR, 32, c->act_loff);
	setbits(l, T_OPD0_ADDR, 32, gd_lmem_off(g));
	setbits(l, T_OPD1_ADDR, 32, gd_lmem_off(g));
	setbits(l, T_OPD2_ADDR, 32, typ == 0 ? gd_lmem_off(g) : 0);
	store_reversed(b, l);
}

/* n, c, h, w of `bytes` of `esize`-byte data: 1 x 8 x h x w with w at most 4096. */
static void shape_of(uint64_t bytes, unsigned esize, uint32_t s[4])
{
	uint64_t e = bytes / esize / 8;
	if (!e)
		e = 1;
	uint64_t w = e < 4096 ? e : 4096, hh = (e + w - 1) / w;
	s[0] = 1;
	s[1] = 8;
	s[2] = (uint32_t)(hh > 65535 ? 65535 : hh);
	s[3] = (uint32_t)w;
}

/* Source and destination strides (n, c, h, w at bits 128.., 256..) and sizes (n, c, h, w at
 * 384.., 448..) of a move of `bytes`, contiguous: the same bits in BM1684's descriptor and in
 * BM1684X's tensor and matrix layouts (regdef_bm1684x.c D_STRIDES, D_SIZES). */
static void put_shapes(uint8_t *b, uint64_t bytes, unsigned esize)
{
	uint32_t s[4];
	shape_of(bytes, esize, s);
	uint32_t st[4] = {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
	for (unsigned i = 0; i < 4; i++) {
		setbits(b, G_SRC_NSTRIDE + 32 * i, 32, st[i]);
		setbits(b, G_SRC_NSTRIDE + 128 + 32 * i, 32, st[i]);
		setbits(b, G_SRC_NSIZE + 16 * i, 16, s[i]);
		setbits(b, G_SRC_NSIZE + 64 + 16 * i, 16, s[i]);
	}
}

void gd1684x_gdma_shapes(uint8_t *b, uint64_t bytes, unsigned esize)
{
	put_shapes(b, bytes, esize);
}

void gd1684_gdma_desc(struct gen *g, struct core *c, uint8_t *b, unsigned cmd_type, unsigned dir,
                      uint64_t dep, uint64_t src, uint64_t dst, uint64_t bytes)
{
	memset(b, 0, 128);
	setbits(b, G_CHAIN_END, 1, g->ending ? 1 : 0);
	setbits(b, G_STRIDE_ENABLE, 1, 1);
	setbits(b, G_DIRECTION, 2, dir & 3);
	setbits(b, G_CMD_ID, 16, c->gdma_id & 0xFFFF);
	setbits(b, G_SPECIAL_FUNC, 3, 0); /* NORMAL */
	setbits(b, G_DST_FORMAT, 3, GDMA_FP32);
	setbits(b, G_SYS_MEM_TYPE, 1, cmd_type == 1 ? 1 : 0);
	setbits(b, G_SRC_FORMAT, 3, GDMA_FP32);
	setbits(b, G_ENG0_SYNC_ID, 16, dep & 0xFFFF);
	put_shapes(b, bytes, 4);
	setbits(b, G_SRC_ADDR_L32, 32, src & 0xFFFFFFFFu);
	setbits(b, G_DST_ADDR_L32, 32, dst & 0xFFFFFFFFu);
	setbits(b, G_SRC_ADDR_H8, 8, (src >> 32) & 0xFF);
	setbits(b, G_DST_ADDR_H8, 8, (dst >> 32) & 0xFF);
}

/* A DYN_DATA record id in BM1684's encoding (§4.7): NODE_SET (type 1) engine in bits 48-51,
 * version 1 in 60-63; NODE_SET and NODE_WAIT gdma_id in bits 16-31, bd_id in 0-15. */
uint64_t gd1684_dyn_id(unsigned type, unsigned engine, uint64_t gdma_id, uint64_t bd_id)
{
	uint64_t id = (gdma_id & 0xFFFF) << 16 | (bd_id & 0xFFFF);
	if (type == 1)
		id |= 1ull << 60 | (uint64_t)(engine & 15) << 48;
	return id;
}

/* The value of shape field `name` ("res0_c", "opd1_h": an operand or result and one of n, c,
 * h, w) of a TIU command of task type typ, or -1 for any other field: 1 x ch x hw x hw, a
 * 3x3 kernel (opd1) for convolutions and pooling; and two operands. */
static int64_t shape_value(const char *name, unsigned typ, unsigned ch, unsigned hw)
{
	if (!strcmp(name, "tsk_opd_num")) /* the operands the shapes are for */
		return 2;
	if (strlen(name) != 6 || name[4] != '_' ||
	    (strncmp(name, "res0", 4) && strncmp(name, "opd0", 4) && strncmp(name, "opd1", 4) &&
	     strncmp(name, "opd2", 4)))
		return -1;
	int kernel = name[3] == '1' && name[0] == 'o' && typ <= 1;
	switch (name[5]) {
	case 'n':
		return 1;
	case 'c':
		return ch;
	case 'h':
	case 'w':
		return kernel ? 3 : hw;
	default:
		return -1;
	}
}

void gd1684x_tiu_shapes(struct gen *g, struct core *c, uint8_t *b, size_t n)
{
	struct sg_desc d;
	if (!g->dec || !sg_decode(g->dec, SG_ENG_TIU, b, n, &d))
		return;
	unsigned ch = c->ch ? c->ch : 1, hw = c->hw ? c->hw : 1;
	const struct sg_regclass *rc = d.cls->rc;
	for (uint16_t i = 0; i < rc->nfields; i++) {
		int64_t v = shape_value(rc->fields[i].name, d.op, ch, hw);
		unsigned w = rc->fields[i].width;
		if (v < 0 || w > 32 || d.cls->off[i] + w > 8 * n)
			continue;
		if (w < 32 && (uint64_t)v >= (UINT64_C(1) << w))
			v = (int64_t)((UINT64_C(1) << w) - 1);
		setbits(b, d.cls->off[i], w, (uint64_t)v);
	}
}
