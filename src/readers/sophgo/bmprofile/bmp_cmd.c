/*
 * bmp_cmd.c — decoders for the command buffers saved as cmd_<base>_<core>_<engine>.dat
 * (sophgo-bmprofile.md §6): enough of every descriptor to name the command and know its
 * class (sys/send/wait), DMA direction, data type, dependency id and, for SYS send/wait, the
 * message id. Owns the name tables (the spellings the reference converter prints).
 *
 * BM1688 / CV186X: variable-length little-endian bit streams, decoded in sequence; command k
 * (1-based) has cmd_id k = PMU inst_id + 1.
 *   TIU header (u64 @0): bit 0 cmd_short, 17–40 cmd_id_dep, 41–44 tsk_typ, 45–49 tsk_eu_typ
 *   (SYS_TR_ACC: eu in 45–47). Sizes: SYS 15 / SYS_TR_ACC 12 / LAR 7: 16 bytes; every other
 *   long descriptor 128; short: CONV, PorD, AR 64; MM 48 (eu 1) / MM2 32 (eu 4–6); RQDQ, CW/BC,
 *   SFU, LIN 32; SG/SGL, CMP, VC 48. Result precision (opt_res0_prec): long @72, sCONV @65,
 *   sPorD @66, sMM @67, sMM2 @52, sAR @64, sCW&sBC @50.
 *   SYS imm @64 (Msg Id = imm & 0x7F, Sd/Wt Count = (imm >> 16) & 7 for send/wait).
 *   GDMA header (u64 @0): bit 3 cmd_short, 32–35 cmd_type, 36–38 special function,
 *   40–42 src_data_format; cmd_id_dep 64–87. Sys (type 6) is 16 bytes, every other type 96.
 *   Addresses: src_l32 @512, src_h8 @544, dst_l32 @576, dst_h8 @608 in every 96-byte layout;
 *   bit 7 of an h8 byte (address bit 39) set = DDR, clear = LMEM.
 * BM1688 commands are decoded by the table decoder (desc.c, regdef_bm1688.c) when the reader
 * has one; the hand-written BM1688 path stays as its cross-check (desc_test.c).
 *   The stream ends at a sys command followed only by zero bytes (the reference stops when that
 *   tail is under 129 bytes; we also stop on longer all-zero tails, which it would decode as
 *   garbage convolutions).
 * CV184X (and every chip with register tables) is decoded only by the table decoder; the
 *   hand-written CV184X block this file had is retired. What differs from BM1688 lives in the
 *   tables (regdef_cv184x.c: 64-bit TIU SYS, 5-bit DMA cmd_type, h13 address halves) and in
 *   bmp_cmd_decode_dec below (DDR when bit 31 of an l32 address word is set).
 * BM1684: fixed 128-byte descriptors. TIU descriptors are stored as 32 words in reverse order;
 *   after reversing: 3–18 cmd_id, 19–34 dependency (GDMA id), 37–40 tsk_typ, 41–45 eu,
 *   67–69 result precision. GDMA (not reversed): 6–7 direction, 16–31 cmd_id, 32–34 special
 *   function, 40–42 src format, 48–63 dependency (TIU id).
 * BM1684X (best effort): TIU header bit 0 short, 1–20 cmd_id, 21–40 dependency, 41–44 tsk_typ,
 *   45–49 eu; GDMA 9–28 cmd_id, 32–35 cmd_type, 36–38 special function. Descriptor sizes are
 *   taken from the BM1688 table and the stream is re-aligned to 128 bytes after each sys
 *   command; the cmd_id stored in each descriptor is checked against its position, and
 *   decoding stops where they disagree.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <stdio.h>
#include <string.h>

/* Bits [lo, lo+w) of a little-endian stream, w <= 57, via one unaligned 64-bit load. The
 * caller guarantees p holds byte (lo+w-1)/8 and 8 bytes from lo/8 unless near the end, where
 * the slow path is taken. */
static uint64_t bits(const uint8_t *p, size_t size, unsigned lo, unsigned w)
{
	size_t byte = lo >> 3;
	if (byte + 8 <= size)
		return (tp_le64(p + byte) >> (lo & 7)) & ((UINT64_C(1) << w) - 1);
	return tp_bits(p, lo, w);
}

/* ---------------------------------------------------------------------------------------- */
/* Name tables (facts from the reference decoder's op tables; see the report for choices).   */
/* ---------------------------------------------------------------------------------------- */

static const char *const conv_eu[32] = {[0] = "conv.normal"};
static const char *const pord_eu[32] = {
    [0] = "pord.depthwise",      [1] = "pord.avgpooling",    [3] = "pord.minpooling",
    [4] = "pord.maxpooling",     [5] = "pord.roi_depthwise", [6] = "pord.roi_avgpooling",
    [7] = "pord.roi_maxpooling", [8] = "pord.roi_minpooling"};
static const char *const mm_eu[32] = {
    [1] = "mm.normal", [4] = "mm2.nn", [5] = "mm2.nt", [6] = "mm2.tt"};
static const char *const ar_eu[32] = {[0] = "arith.mul",
                                      [1] = "arith.not",
                                      [2] = "arith.add",
                                      [3] = "arith.sub",
                                      [4] = "arith.max",
                                      [5] = "arith.min",
                                      [6] = "arith.logic_shift",
                                      [7] = "arith.and",
                                      [8] = "arith.or",
                                      [9] = "arith.xor",
                                      [10] = "arith.select_great",
                                      [11] = "arith.select_equal",
                                      [12] = "arith.div",
                                      [13] = "arith.select_less",
                                      [14] = "arith.cast",
                                      [15] = "arith.add_satu",
                                      [16] = "arith.sub_satu",
                                      [18] = "arith.mac",
                                      [19] = "arith.copy",
                                      [20] = "arith.mul_satu",
                                      [21] = "arith.arith_shift",
                                      [22] = "arith.rotate_shift",
                                      [26] = "arith.abs",
                                      [27] = "arith.fsub_abs",
                                      [29] = "arith.get_first_one",
                                      [30] = "arith.get_first_zero"};
static const char *const rqdq_eu[32] = {
    [0] = "quant.rq0", [1] = "quant.rq1", [3] = "quant.dq0", [4] = "quant.dq1"};
static const char *const tsbc_eu[32] = {
    [0] = "tsbc.cw_ts", [1] = "tsbc.wc_ts", [2] = "tsbc.l_copy",
    [3] = "tsbc.l_bc",  [4] = "tsbc.s_bc",  [5] = "tsbc.s_distribute"};
static const char *const sg_eu[32] = {
    [0] = "sg.pl_gather_d1coor",    [1] = "sg.pl_gather_d2coor",   [2] = "sg.pl_gather_rec",
    [3] = "sg.pl_scatter_d1coor",   [4] = "sg.pl_scatter_d2coor",  [5] = "sg.pe_s_gather_d1coor",
    [6] = "sg.pe_s_scatter_d1coor", [8] = "sg.pe_s_mask_select",   [9] = "sg.pe_s_nonzero",
    [13] = "sg.pe_s_gather_hzd",    [14] = "sg.pe_s_scatter_hzd",  [15] = "sg.pe_s_mask_selhzd",
    [16] = "sg.pe_s_nonzero_hzd",   [17] = "sgl.pe_s_gather_line", [18] = "sgl.pe_s_scatter_line"};
static const char *const sfu_eu[32] = {
    [12] = "sfu.taylor_4x", [13] = "sfu.taylor", [15] = "sfu.normalize", [17] = "sfu.rsqrt"};
static const char *const lin_eu[32] = {
    [1] = "lin.mac", [20] = "lin.square_sum", [21] = "lin.square_diff"};
static const char *const tracc_eu[32] = {[0] = "system_tr_wr.wr_imm"};
static const char *const cmp_eu[32] = {[22] = "cmp.gt_and_sel_gt",
                                       [23] = "cmp.sel_gt",
                                       [24] = "cmp.sel_eq",
                                       [25] = "cmp.lt_and_sel_lt",
                                       [26] = "cmp.sel_lt"};
static const char *const vc_eu[32] = {
    [0] = "vc.mul",        [2] = "vc.add",        [3] = "vc.sub",       [4] = "vc.max",
    [5] = "vc.min",        [7] = "vc.and",        [8] = "vc.or",        [9] = "vc.xor",
    [10] = "vc.select_gt", [11] = "vc.select_eq", [12] = "vc.div",      [13] = "vc.select_lt",
    [15] = "vc.add_satu",  [16] = "vc.sub_satu",  [20] = "vc.mul_satu", [23] = "vc.mulDHR"};
static const char *const sys_eu[32] = {
    [1] = "system.spb",          [2] = "system.swr",
    [3] = "system.swr_from_lmm", [4] = "system.swr_collect_from_lmm",
    [8] = "system.send_msg",     [9] = "system.wait_msg",
    [30] = "system.nop",         [31] = "system.end"};

struct tiu_group {
	const char *long_type, *short_type, *prefix;
	const char *const *eu;
};
/* Indexed by tsk_typ. MM and SG are split further by eu below. */
static const struct tiu_group tiu_groups[16] = {
    [0] = {"CONV", "sCONV", "conv", conv_eu},
    [1] = {"PorD", "sPorD", "pord", pord_eu},
    [2] = {"MM", "sMM", "mm", mm_eu},
    [3] = {"AR", "sAR", "arith", ar_eu},
    [4] = {"RQ&DQ", "sRQ&sDQ", "quant", rqdq_eu},
    [5] = {"CW&BC", "sCW&sBC", "tsbc", tsbc_eu},
    [6] = {"SG", "sSG", "sg", sg_eu},
    [7] = {"LAR", "LAR", "lar", NULL},
    [9] = {"SFU", "sSFU", "sfu", sfu_eu},
    [10] = {"LIN", "sLIN", "lin", lin_eu},
    [12] = {"SYS_TR_ACC", "SYS_TR_ACC", "system_tr_wr", tracc_eu},
    [13] = {"CMP", "sCMP", "cmp", cmp_eu},
    [14] = {"VC", "sVC", "vc", vc_eu},
    [15] = {"SYS", "SYS", "system", sys_eu},
};

static void tiu_names(struct bmp_cmd *c)
{
	const struct tiu_group *g = &tiu_groups[c->op & 15];
	unsigned eu = c->sub & 31;
	if (!g->long_type) {
		snprintf(c->type_buf, sizeof c->type_buf, "tiu_type_%u", c->op);
		snprintf(c->name_buf, sizeof c->name_buf, "tiu_type_%u.eu%u", c->op, eu);
		c->type = c->type_buf;
		c->name = c->name_buf;
		return;
	}
	c->type = c->is_short ? g->short_type : g->long_type;
	const char *prefix = g->prefix;
	if (c->op == 2 && eu >= 4 && eu <= 6) {
		c->type = c->is_short ? "sMM2" : "MM2";
		prefix = "mm2";
	} else if (c->op == 6 && (eu == 17 || eu == 18)) {
		c->type = c->is_short ? "sSGL" : "SGL";
		prefix = "sgl";
	}
	c->name = g->eu ? g->eu[eu] : NULL;
	if (!c->name) {
		snprintf(c->name_buf, sizeof c->name_buf, "%s.eu%u", prefix, eu);
		c->name = c->name_buf;
	}
}

static const char *const dma_types[16] = {"DMA_tensor",  "DMA_matrix",       "DMA_masked_select",
                                          "DMA_general", "DMA_cw_transpose", "DMA_nonzero",
                                          "DMA_sys",     "DMA_gather",       "DMA_scatter",
                                          "DMA_reverse", "DMA_compress",     "DMA_decompress"};
/* Function names by (cmd_type, special function) as the reference prints them; tensor and
 * matrix with function 0 are named by direction instead (tensorLd/St/Mv). */
static const char *const dma_funcs[12][8] = {
    [0] = {NULL, "NC trans", "collect", "broadcast", "distribute", "lmem 4 bank copy",
           "lmem 4 bank broadcast"},
    [1] = {NULL, "matrix transpose"},
    [2] = {"DMA_masked_select", "ncw mode"},
    [3] = {"DMA_general", "broadcast"},
    [4] = {"cw transpose"},
    [5] = {"DMA_nonzero"},
    [6] = {"dma.sys.chain_end", "sys_nop", "sys_tr_wr", "sys_send", "sys_wait"},
    [7] = {"DMA_gather"},
    [8] = {"DMA_scatter"},
    [9] = {"w reverse", "h reverse", "c reverse", "n reverse"},
    [10] = {"non-random-access", "random-access"},
    [11] = {"non-random-access", "random-access"},
};

/* A DMA sys command (cmd_type 6): kind by sp (4 wait, 3 send), no direction or data type. */
static void dma_sys(struct bmp_cmd *c)
{
	c->kind = c->sub == 4 ? TP_CMD_SYS_WAIT : c->sub == 3 ? TP_CMD_SYS_SEND : TP_CMD_SYS;
	c->dir = TP_DIR_NONE;
	c->dtype = TP_DT_NONE;
}

/* The name of a tensor or matrix move with sp 0 by its direction (tensorLd/St/Mv); NULL for
 * any other direction. */
static const char *move_name(enum tp_dir dir)
{
	switch (dir) {
	case TP_DIR_DDR_TO_LMEM:
	case TP_DIR_DDR_TO_DDR:
		return "tensorLd";
	case TP_DIR_LMEM_TO_DDR:
		return "tensorSt";
	case TP_DIR_LMEM_TO_LMEM:
		return "tensorMv";
	default:
		return NULL;
	}
}

static void dma_names(struct bmp_cmd *c)
{
	unsigned t = c->op & 15, sp = c->sub & 7;
	if (t < 12) {
		c->type = dma_types[t];
		c->name = dma_funcs[t][sp];
		if (!c->name && (t == 0 || t == 1) && sp == 0) {
			const char *mv = move_name(c->dir);
			c->name = mv ? mv : "tensor";
		}
		if (!c->name) {
			snprintf(c->name_buf, sizeof c->name_buf, "%s.sp%u", dma_types[t], sp);
			c->name = c->name_buf;
		}
		return;
	}
	snprintf(c->type_buf, sizeof c->type_buf, "DMA_%u", t);
	snprintf(c->name_buf, sizeof c->name_buf, "DMA_%u.sp%u", t, sp);
	c->type = c->type_buf;
	c->name = c->name_buf;
}

/* BM1688 TIU / DMA precision code -> tp_dtype (DATATYPE: 0 INT8, 1 FP16, 2 FP32, 3 INT16,
 * 4 INT32, 5 BF16, 6 INT4). */
static uint8_t a2_dtype(unsigned f)
{
	static const uint8_t m[8] = {TP_DT_INT8,  TP_DT_FP16, TP_DT_FP32, TP_DT_INT16,
	                             TP_DT_INT32, TP_DT_BF16, TP_DT_INT4, TP_DT_NONE};
	return m[f & 7];
}

static uint8_t dir_from_tags(unsigned src_h8, unsigned dst_h8)
{
	int sd = (src_h8 >> 7) & 1, dd = (dst_h8 >> 7) & 1;
	if (sd && dd)
		return TP_DIR_DDR_TO_DDR;
	if (sd)
		return TP_DIR_DDR_TO_LMEM;
	if (dd)
		return TP_DIR_LMEM_TO_DDR;
	return TP_DIR_LMEM_TO_LMEM;
}

/* ---------------------------------------------------------------------------------------- */
/* Sizes.                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static size_t tiu_size_a2(uint64_t h)
{
	unsigned sh = (unsigned)(h & 1), typ = (unsigned)(h >> 41) & 15,
	         eu = (unsigned)(h >> 45) & 31;
	switch (typ) {
	case 7:
	case 12:
	case 15:
		return 16;
	case 0:
	case 1:
	case 3:
		return sh ? 64 : 128;
	case 2:
		if (!sh)
			return 128;
		return eu >= 4 && eu <= 6 ? 32 : 48;
	case 4:
	case 5:
	case 9:
	case 10:
		return sh ? 32 : 128;
	case 6:
	case 13:
	case 14:
		return sh ? 48 : 128;
	default:
		return 0;
	}
}

static size_t dma_size_a2(uint64_t h)
{
	unsigned t = (unsigned)(h >> 32) & 15;
	if (t == 6)
		return 16;
	return t <= 11 ? 96 : 0;
}

size_t bmp_cmd_size(enum tp_arch arch, int engine, const uint8_t *p, size_t left)
{
	size_t n = 0;
	switch (arch) {
	case TP_ARCH_BM1684:
		n = 128;
		break;
	case TP_ARCH_BM1688:
	case TP_ARCH_BM1684X:
		if (left < 8)
			return 0;
		n = engine == BMP_ENG_TIU ? tiu_size_a2(tp_le64(p)) : dma_size_a2(tp_le64(p));
		break;
	default:
		return 0;
	}
	return n <= left ? n : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Decoding.                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Name-cache key: engine, cmd_short, op and sub-operation, direction (the name of a tensor
 * move depends on it). TIU: 4-bit tsk_typ, 5-bit eu; DMA: up to 5-bit cmd_type (CV184X,
 * BM1690), 3-bit special function. */
static void key_of(struct bmp_cmd *c)
{
	unsigned k = (unsigned)c->engine << 14 | (unsigned)(c->is_short & 1) << 13;
	if (c->engine == BMP_ENG_TIU)
		k |= (unsigned)(c->op & 15) << 9 | (unsigned)(c->sub & 31) << 4;
	else
		k |= (unsigned)(c->op & 31) << 7 | (unsigned)(c->sub & 7) << 4;
	c->key = (uint16_t)(k | (unsigned)(c->dir & 15));
}

static void tiu_kind(struct bmp_cmd *c)
{
	if (c->op == 15)
		c->kind = c->sub == 9   ? TP_CMD_SYS_WAIT
		          : c->sub == 8 ? TP_CMD_SYS_SEND
		                        : TP_CMD_SYS;
	else if (c->op == 12)
		c->kind = TP_CMD_SYS;
	else
		c->kind = TP_CMD_NORMAL;
}

static void decode_tiu_a2(enum tp_arch arch, const uint8_t *p, size_t size, struct bmp_cmd *c)
{
	uint64_t h = tp_le64(p);
	c->op = (uint8_t)((h >> 41) & 15);
	if (c->op == 12) {
		c->sub = (uint8_t)((h >> 45) & 7);
		c->is_short = 0;
	} else {
		c->sub = (uint8_t)((h >> 45) & 31);
		c->is_short = (c->op == 7 || c->op == 15) ? 0 : (uint8_t)(h & 1);
	}
	if (arch == TP_ARCH_BM1684X) {
		c->self_id = (uint32_t)((h >> 1) & 0xFFFFF);
		c->dep = (uint32_t)((h >> 21) & 0xFFFFF);
	} else if (c->op != 12 && c->op != 7) {
		c->dep = (uint32_t)((h >> 17) & 0xFFFFFF);
	}
	tiu_kind(c);
	if (c->op == 15 && size >= 16) {
		uint64_t imm = tp_le64(p + 8);
		if (c->sub == 8 || c->sub == 9) {
			c->has_msg = 1;
			c->msg_id = (uint32_t)(imm & 0x7F);
			c->msg_cnt = (uint32_t)((imm >> 16) & 7);
		}
	} else if (c->op != 12 && c->op != 7) {
		/* opt_res0_prec: one place in every long layout, per op in the short ones (those
		 * not listed here are not known and get no data type). */
		unsigned at = 0;
		if (!c->is_short)
			at = 72;
		else if (c->op == 0)
			at = 65; /* sCONV */
		else if (c->op == 1)
			at = 66; /* sPorD */
		else if (c->op == 2)
			at = (c->sub >= 4 && c->sub <= 6) ? 52 : 67; /* sMM2 / sMM */
		else if (c->op == 3)
			at = 64; /* sAR */
		else if (c->op == 5)
			at = 50; /* sCW&sBC */
		if (at && arch == TP_ARCH_BM1688)
			c->dtype = a2_dtype((unsigned)bits(p, size, at, 3));
	}
	tiu_names(c);
}

/* BM1684X memory by address (tpu-mlir's BM1684X memory map): local memory 0x0800_0000 to
 * 0x0900_0000, L2 SRAM 0x1000_0000 to 0x1020_0000, DDR from 2^32; -1 for anything else. */
static int bm1684x_space(uint64_t a)
{
	if (a >= 0x08000000u && a < 0x09000000u)
		return 0;
	if (a >= (UINT64_C(1) << 32))
		return 1;
	if (a >= 0x10000000u && a < 0x10200000u)
		return 2;
	return -1;
}

/* The direction of a BM1684X move from its addresses. A constant fill (fill_constant_en: the
 * source is a value, not an address) counts as a move from LMEM: into DDR it is a store, as
 * the vendor's summary counts it (l2sBytes holds its "const->ddr" rows). */
static uint8_t bm1684x_dir(uint64_t src, uint64_t dst, unsigned fill)
{
	static const uint8_t m[3][3] = {
	    /* src LMEM */ {TP_DIR_LMEM_TO_LMEM, TP_DIR_LMEM_TO_DDR, TP_DIR_LMEM_TO_L2},
	    /* src DDR */ {TP_DIR_DDR_TO_LMEM, TP_DIR_DDR_TO_DDR, TP_DIR_DDR_TO_L2},
	    /* src L2 */ {TP_DIR_L2_TO_LMEM, TP_DIR_L2_TO_DDR, TP_DIR_L2_TO_L2},
	};
	int s = fill ? 0 : bm1684x_space(src), d = bm1684x_space(dst);
	return s < 0 || d < 0 ? TP_DIR_NONE : m[s][d];
}

static void decode_dma_a2(enum tp_arch arch, const uint8_t *p, size_t size, struct bmp_cmd *c)
{
	uint64_t h = tp_le64(p);
	c->op = (uint8_t)((h >> 32) & 15);
	c->sub = (uint8_t)((h >> 36) & 7);
	c->is_short = (uint8_t)((h >> 3) & 1);
	if (arch == TP_ARCH_BM1684X)
		c->self_id = (uint32_t)((h >> 9) & 0xFFFFF);
	/* cmd_id_dep: 24 bits at bit 64 on BM1688, 20 on BM1684X in every layout (regdef_bm1684x.c
	 * D_DEP). */
	if (size >= 16 && arch == TP_ARCH_BM1688)
		c->dep = (uint32_t)(tp_le64(p + 8) & 0xFFFFFF);
	else if (size >= 16 && arch == TP_ARCH_BM1684X)
		c->dep = (uint32_t)(tp_le64(p + 8) & 0xFFFFF);
	if (c->op == 6) {
		dma_sys(c);
	} else {
		c->kind = TP_CMD_NORMAL;
		c->dtype = a2_dtype((unsigned)(h >> 40) & 7);
		if (size >= 96 && arch == TP_ARCH_BM1684X && !c->is_short) {
			/* src/dst start address l32 at bytes 64/72, h8 at 68/76 in every long
			 * layout (regdef_bm1684x.c D_ADDR; DMA_matrix names the same words h32/l8);
			 * fill_constant_en is bit 39. */
			c->src_addr = (uint64_t)p[68] << 32 | tp_le32(p + 64);
			c->dst_addr = (uint64_t)p[76] << 32 | tp_le32(p + 72);
			c->dir = bm1684x_dir(c->src_addr, c->dst_addr, (unsigned)(h >> 39) & 1);
		} else if (size >= 96 && arch == TP_ARCH_BM1688) {
			/* byte offsets of src_l32 / dst_l32: the same in every 96-byte layout,
			 * gather/scatter included (target_1688/regdef.py) */
			unsigned so = 64, dof = 72;
			unsigned sh8 = p[so + 4], dh8 = p[dof + 4];
			c->src_addr = (uint64_t)sh8 << 32 | tp_le32(p + so);
			c->dst_addr = (uint64_t)dh8 << 32 | tp_le32(p + dof);
			c->dir = dir_from_tags(sh8, dh8);
		}
	}
	dma_names(c);
	/* BM1684X's profiler (bmprofile_analyze) names the plain moves by class, whatever the
	 * direction: dma.tensor, dma.matrix (instruction.csv "Inst Function"). */
	if (arch == TP_ARCH_BM1684X && c->kind == TP_CMD_NORMAL && c->op <= 1 && c->sub == 0)
		c->name = c->op ? "dma.matrix" : "dma.tensor";
}

static const char *const bm1684_bd_funcs[16] = {"CONV_NEURON",
                                                "DEPTHWISE_OR_POOLING",
                                                "FC",
                                                "TENSOR_ARITHMETIC",
                                                "FC2",
                                                "CONV_CORRELATION",
                                                "TABLE_LOOKUP",
                                                "MD_SUM",
                                                "MD_SCALAR",
                                                "MD_SFU",
                                                "MD_LINEAR",
                                                "LOCALMEM_ARANGE",
                                                "DECOMPRESS",
                                                "MD_CMP",
                                                "VECTOR_CORRELATION"};
static const char *const bm1684_gdma_funcs[8] = {"NORMAL",   "TRANS",    "LRN_SHIFT", "FORMAT",
                                                 "CONSTANT", "CW_TRANS", "WINOGRAD",  "FILTER"};

/* Where a BM1684 command header keeps the fields both engines have: the bit offsets of the
 * 16-bit command id and dependency, of the opcode (op_bits wide) and of the 3-bit data
 * format, and the data type each format value stands for. */
struct bm1684_hdr {
	unsigned self_id, dep, op, op_bits, dtype; /* in this order in the two tables below */
	uint8_t fmt[8];
};
static const struct bm1684_hdr bm1684_tiu_hdr = {
    3, 19, 37, 4, 67, {TP_DT_INT8, TP_DT_FP16, TP_DT_FP32, TP_DT_INT16, TP_DT_INT32}};
static const struct bm1684_hdr bm1684_gdma_hdr = {
    16, 48, 32, 3, 40, {TP_DT_FP32, TP_DT_INT16, TP_DT_UINT8, TP_DT_INT8, TP_DT_FP16}};

static void bm1684_header(const uint8_t *h, const struct bm1684_hdr *f, struct bmp_cmd *c)
{
	c->self_id = (uint32_t)tp_bits(h, f->self_id, 16);
	c->dep = (uint32_t)tp_bits(h, f->dep, 16);
	c->op = (uint8_t)tp_bits(h, f->op, f->op_bits);
	c->dtype = f->fmt[tp_bits(h, f->dtype, 3)];
}

static void decode_bm1684(int engine, const uint8_t *p, struct bmp_cmd *c)
{
	c->kind = TP_CMD_NORMAL;
	if (engine == BMP_ENG_TIU) {
		/* Undo the word reversal for the first 16 logical bytes: logical word j is file
		 * word 31 - j. */
		uint8_t h[16];
		for (int j = 0; j < 4; j++)
			memcpy(h + 4 * j, p + 4 * (31 - j), 4);
		bm1684_header(h, &bm1684_tiu_hdr, c);
		c->sub = (uint8_t)tp_bits(h, 41, 5);
		const char *f = bm1684_bd_funcs[c->op & 15];
		if (!f) {
			snprintf(c->name_buf, sizeof c->name_buf, "BD_%u", c->op);
			f = c->name_buf;
		}
		c->name = c->type = f;
	} else {
		unsigned dirf = (unsigned)tp_bits(p, 6, 2);
		bm1684_header(p, &bm1684_gdma_hdr, c);
		static const uint8_t dirs[4] = {TP_DIR_DDR_TO_LMEM, TP_DIR_LMEM_TO_DDR,
		                                TP_DIR_DDR_TO_DDR, TP_DIR_LMEM_TO_LMEM};
		c->dir = dirs[dirf];
		c->src_addr = (uint64_t)tp_bits(p, 576, 8) << 32 | tp_bits(p, 512, 32);
		c->dst_addr = (uint64_t)tp_bits(p, 584, 8) << 32 | tp_bits(p, 544, 32);
		const char *f = bm1684_gdma_funcs[c->op & 7];
		if (!f)
			f = "FILTER_RES_COUNTER";
		c->name = f;
		c->type = "GDMA";
	}
}

void bmp_cmd_decode(enum tp_arch arch, int engine, const uint8_t *p, size_t size, struct bmp_cmd *c)
{
	memset(c, 0, offsetof(struct bmp_cmd, name_buf));
	c->engine = (uint8_t)engine;
	c->raw = p;
	c->raw_n = size;
	if (arch == TP_ARCH_BM1684)
		decode_bm1684(engine, p, c);
	else if (engine == BMP_ENG_TIU)
		decode_tiu_a2(arch, p, size, c);
	else
		decode_dma_a2(arch, p, size, c);
	key_of(c);
}

/* Table-driven decoding (desc.c + regdef_<chip>.c): the same outputs as the hand-written
 * decoders above, every field from the chip's register tables. Names: the TIU Function Type
 * is the class's OP_NAME and the Function Name the op index's; GDMA names keep the printer's
 * direction-dependent spelling (dma_names). */
/* Memory space of one DMA side (costmodel §5 step 2): BM1688 bit 7 of the high address
 * part (1 DDR), CV184X bit 31 of the low part (1 DDR), BM1690 the tag h13 >> 8 (0..29 DDR,
 * 30 L2M, 31 LMEM). 0 LMEM, 1 DDR, 2 L2M. */
static int mem_space(enum tp_arch arch, uint64_t l32, uint64_t h)
{
	switch (arch) {
	case TP_ARCH_CV184X:
		return (int)((l32 >> 31) & 1);
	case TP_ARCH_BM1690: {
		unsigned tag = (unsigned)(h >> 8) & 31;
		return tag == 31 ? 0 : tag == 30 ? 2 : 1;
	}
	default:
		return (int)((h >> 7) & 1);
	}
}

static uint8_t dma_dir(enum tp_arch arch, uint64_t sl, uint64_t sh, uint64_t dl, uint64_t dh)
{
	static const uint8_t m[3][3] = {
	    /* src LMEM */ {TP_DIR_LMEM_TO_LMEM, TP_DIR_LMEM_TO_DDR, TP_DIR_LMEM_TO_L2},
	    /* src DDR */ {TP_DIR_DDR_TO_LMEM, TP_DIR_DDR_TO_DDR, TP_DIR_DDR_TO_L2},
	    /* src L2M */ {TP_DIR_L2_TO_LMEM, TP_DIR_L2_TO_DDR, TP_DIR_L2_TO_L2},
	};
	return m[mem_space(arch, sl, sh)][mem_space(arch, dl, dh)];
}

/* DMA names from the chip's op index (costmodel §5 step 3): Function Type = the name of
 * (cmd_type, sp 0), Function Name = the name of (cmd_type, sp); tensor and matrix moves with
 * sp 0 are named by direction (tensorLd/St/Mv). */
static void dma_table_names(const struct sg_decoder *dec, const struct sg_desc *d,
                            struct bmp_cmd *c)
{
	int k = 0;
	const char *type = dec->dma_sub[k][d->op & 31][0];
	c->type = type ? type : d->cls->rc->op_name;
	c->name = d->sub_name;
	if (d->op <= 1 && d->sub == 0 && c->kind == TP_CMD_NORMAL) {
		const char *mv = move_name(c->dir);
		if (mv)
			c->name = mv;
	}
	if (!c->name) {
		snprintf(c->name_buf, sizeof c->name_buf, "%s.sp%u", c->type, d->sub);
		c->name = c->name_buf;
	}
}

int bmp_cmd_decode_dec(const struct sg_decoder *dec, int engine, const uint8_t *p, size_t left,
                       struct bmp_cmd *c)
{
	memset(c, 0, offsetof(struct bmp_cmd, name_buf));
	c->engine = (uint8_t)engine;
	struct sg_desc *d = &c->desc;
	if (!sg_decode(dec, engine == BMP_ENG_TIU ? SG_ENG_TIU : SG_ENG_DMA, p, left, d))
		return 0;
	c->have_desc = 1;
	c->raw = p;
	c->op = d->op;
	c->sub = d->sub;
	c->is_short = (uint8_t)(sg_has(d, SG_F_CMD_SHORT) ? sg_get(d, p, SG_F_CMD_SHORT) : 0);
	c->dep = (uint32_t)sg_get(d, p, SG_F_CMD_ID_DEP);
	/* CV184X sets bit 20 above the partner's 20-bit id (BM1690 does too, cdm reader): the
	 * slice keeps the id, the argument the whole register. */
	if (dec->isa->arch == TP_ARCH_CV184X)
		c->dep &= 0xFFFFFu;
	if (engine == BMP_ENG_TIU) {
		tiu_kind(c);
		if (c->op == 15 && (c->sub == 8 || c->sub == 9)) {
			uint64_t imm = sg_get(d, p, SG_F_IMM);
			c->has_msg = 1;
			c->msg_id = (uint32_t)(imm & 0x7F);
			c->msg_cnt = (uint32_t)((imm >> 16) & 7);
		}
		if (sg_has(d, SG_F_OPT_RES0_PREC))
			c->dtype = a2_dtype((unsigned)sg_get(d, p, SG_F_OPT_RES0_PREC));
		c->type = d->cls->rc->op_name;
		c->name = d->sub_name;
		if (!c->name) {
			tiu_names(c);
			c->type = d->cls->rc->op_name;
		}
	} else {
		enum tp_arch arch = dec->isa->arch;
		if (c->op == 6) {
			dma_sys(c);
		} else {
			c->kind = TP_CMD_NORMAL;
			c->dtype = a2_dtype((unsigned)sg_get(d, p, SG_F_SRC_FMT));
			uint64_t sl = sg_get(d, p, SG_F_SRC_L32), dl = sg_get(d, p, SG_F_DST_L32);
			uint64_t sh = sg_get(d, p, SG_F_SRC_H8), dh = sg_get(d, p, SG_F_DST_H8);
			c->src_addr = sh << 32 | sl;
			c->dst_addr = dh << 32 | dl;
			c->dir = dma_dir(arch, sl, sh, dl, dh);
		}
		dma_table_names(dec, d, c);
	}
	key_of(c);
	return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Command buffers.                                                                          */
/* ---------------------------------------------------------------------------------------- */

static int is_sys(enum tp_arch arch, int engine, const uint8_t *p)
{
	uint64_t h = tp_le64(p);
	if (arch == TP_ARCH_BM1684)
		return 0;
	if (engine == BMP_ENG_TIU)
		return ((h >> 41) & 15) == 15;
	if (arch == TP_ARCH_CV184X) /* CV184X: 5-bit cmd_type */
		return ((h >> 32) & 31) == 6;
	return ((h >> 32) & 15) == 6;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Steps from the decodable command at `off` (n bytes) to the next one; returns the next
 * offset, or SIZE_MAX when the stream ends. */
static size_t step(const struct bmp_cmdbuf *cb, size_t off, size_t n, const struct sg_desc *d)
{
	size_t next = off + n;
	if (cb->arch == TP_ARCH_BM1684)
		return next + 128 <= cb->len ? next : SIZE_MAX;
	if (d && sg_is_end(cb->engine == BMP_ENG_TIU ? SG_ENG_TIU : SG_ENG_DMA, d, cb->data + off,
	                   cb->data + next, cb->len - next))
		return SIZE_MAX;
	if (is_sys(cb->arch, cb->engine, cb->data + off)) {
		if (cb->arch == TP_ARCH_BM1684X)
			next = (next + 127) & ~(size_t)127;
		if (next >= cb->len || all_zero(cb->data + next, cb->len - next))
			return SIZE_MAX;
	}
	return next < cb->len ? next : SIZE_MAX;
}

static int init(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine, const struct sg_decoder *dec,
                const uint8_t *data, size_t len, int mapped);

int bmp_cmdbuf_init(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine, const uint8_t *data,
                    size_t len)
{
	return init(cb, arch, engine, NULL, data, len, 0);
}

int bmp_cmdbuf_init_mapped(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine,
                           const uint8_t *data, size_t len)
{
	return init(cb, arch, engine, NULL, data, len, 1);
}

int bmp_cmdbuf_init_dec(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine,
                        const struct sg_decoder *dec, const uint8_t *data, size_t len, int mapped)
{
	return init(cb, arch, engine, dec, data, len, mapped);
}

/* Size of the command at off (0 = unknown / does not fit); with a table decoder its head in
 * *d. */
static size_t size_at(const struct bmp_cmdbuf *cb, size_t off, struct sg_desc *d)
{
	if (cb->dec) {
		int eng = cb->engine == BMP_ENG_TIU ? SG_ENG_TIU : SG_ENG_DMA;
		return sg_decode(cb->dec, eng, cb->data + off, cb->len - off, d) ? d->bytes : 0;
	}
	return bmp_cmd_size(cb->arch, cb->engine, cb->data + off, cb->len - off);
}

static int init(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine, const struct sg_decoder *dec,
                const uint8_t *data, size_t len, int mapped)
{
	memset(cb, 0, sizeof *cb);
	cb->dec = dec;
	cb->data = data;
	cb->len = len;
	cb->arch = arch;
	cb->engine = engine;
	cb->mapped = mapped;
	cb->limit = UINT32_MAX;
	cb->done = len == 0 || all_zero(data, len);
	return TP_OK;
}

/* The stream stops at off: an unknown or truncated descriptor, or a BM1684X id mismatch. */
static void stop_at(struct bmp_cmdbuf *cb, size_t off)
{
	cb->stopped = 1;
	cb->stop_off = off;
	cb->done = 1;
}

/* Takes the command at the frontier (cb->scan_off, n > 0 bytes, head *d with a table
 * decoder) into the index as command count + 1 and moves the frontier past it. 1 if taken; 0
 * if the stream stopped there (BM1684X id mismatch) or the index could not grow (cb->oom). */
static int take(struct bmp_cmdbuf *cb, size_t n, const struct sg_desc *d)
{
	size_t off = cb->scan_off;
	uint32_t id = cb->count + 1;
	if (cb->arch == TP_ARCH_BM1684X) {
		/* The descriptor carries its own id; a mismatch means we lost the stream. */
		struct bmp_cmd c;
		bmp_cmd_decode(cb->arch, cb->engine, cb->data + off, n, &c);
		if ((c.self_id & 0xFFFFF) != (id & 0xFFFFF)) {
			stop_at(cb, off);
			return 0;
		}
	}
	if ((id - 1) % 1024 == 0) {
		size_t *ni = tp_grow(cb->index, sizeof *ni, cb->nindex + 1, &cb->cap_index);
		if (!ni) {
			cb->oom = 1;
			cb->done = 1;
			return 0;
		}
		cb->index = ni;
		cb->index[cb->nindex++] = off;
	}
	cb->count = id;
	if (cb->mapped && (id & 0xFFFF) == 0)
		tp_map_drop(cb->data, 0, off); /* indexing need not keep what it read */
	size_t next = step(cb, off, n, cb->dec ? d : NULL);
	if (next == SIZE_MAX || id == UINT32_MAX)
		cb->done = 1;
	else
		cb->scan_off = next;
	return 1;
}

/* Indexes commands until there are `upto` (or the stream ends). */
static void extend(struct bmp_cmdbuf *cb, uint32_t upto)
{
	while (!cb->done && cb->count < upto && cb->count < cb->limit) {
		struct sg_desc d;
		size_t n = size_at(cb, cb->scan_off, &d);
		if (!n) {
			stop_at(cb, cb->scan_off);
			break;
		}
		take(cb, n, &d);
	}
}

int bmp_cmdbuf_finish(struct bmp_cmdbuf *cb)
{
	extend(cb, UINT32_MAX);
	return cb->oom ? TP_ENOMEM : TP_OK;
}

void bmp_cmdbuf_limit(struct bmp_cmdbuf *cb, uint32_t limit)
{
	cb->limit = limit;
}

/* Decodes the command at off into *out (1), or 0 if it does not decode; its size in *n. */
static int decode_at(const struct bmp_cmdbuf *cb, size_t off, struct bmp_cmd *out, size_t *n)
{
	if (cb->dec) {
		int ok =
		    bmp_cmd_decode_dec(cb->dec, cb->engine, cb->data + off, cb->len - off, out);
		*n = ok ? out->desc.bytes : 0;
		return ok;
	}
	*n = bmp_cmd_size(cb->arch, cb->engine, cb->data + off, cb->len - off);
	if (!*n)
		return 0;
	bmp_cmd_decode(cb->arch, cb->engine, cb->data + off, *n, out);
	return 1;
}

int bmp_cmdbuf_get(struct bmp_cmdbuf *cb, uint32_t cmd_id, struct bmp_cmd *out)
{
	if (cmd_id == 0 || cmd_id > cb->limit)
		return 0;
	if (cmd_id > cb->count) {
		/* Past the indexed part: index up to the command before it, then decode it at the
		 * frontier once, for the caller and for the index (in PMU order, every lookup). */
		if (cb->count < cmd_id - 1) /* (a jump: not the sequential lookup's case) */
			extend(cb, cmd_id - 1);
		if (cb->done || cb->count != cmd_id - 1)
			return 0;
		size_t off = cb->scan_off, n;
		if (!decode_at(cb, off, out, &n)) {
			stop_at(cb, off);
			return 0;
		}
		if (!take(cb, n, &out->desc))
			return 0;
		cb->cur = (struct bmp_cmdcur){.id = cmd_id, .off = off, .n = n};
		return 1;
	}
	return bmp_cmdbuf_at(cb, &cb->cur, cmd_id, out);
}

int bmp_cmdbuf_at(const struct bmp_cmdbuf *cb, struct bmp_cmdcur *cur, uint32_t cmd_id,
                  struct bmp_cmd *out)
{
	if (cmd_id == 0 || cmd_id > cb->limit || cmd_id > cb->count)
		return 0;
	if (!cur->id || cmd_id < cur->id || cmd_id - cur->id >= 1024) {
		size_t i = (cmd_id - 1) / 1024;
		cur->id = (uint32_t)(i * 1024 + 1);
		cur->off = cb->index[i];
		cur->n = 0;
	}
	while (cur->id < cmd_id) {
		struct sg_desc d;
		size_t n = cur->n ? cur->n : size_at(cb, cur->off, &d);
		cur->n = 0;
		size_t next = cur->off + n;
		if (cb->arch == TP_ARCH_BM1684X &&
		    is_sys(cb->arch, cb->engine, cb->data + cur->off))
			next = (next + 127) & ~(size_t)127;
		cur->off = next;
		cur->id++;
	}
	size_t n;
	int ok = decode_at(cb, cur->off, out, &n);
	cur->n = n; /* the next lookup steps without decoding */
	return ok;
}

void bmp_cmdbuf_free(struct bmp_cmdbuf *cb)
{
	tp_free(cb->index);
	cb->index = NULL;
	cb->nindex = 0;
}
