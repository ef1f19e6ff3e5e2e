/*
 * cdm_hdr.c — the BM1690/SG2260(E) descriptor decoding of the cdm reader: the reader decodes
 * BLOCK_DES_* streams with the table decoder (cdm_desc_decode_dec at the end: desc.c +
 * regdef_bm1690.c); the small HEADER decoder here stays for DYN_EXTRA entries and as the
 * tables' cross-check. It knows only what the
 * reader needs: each descriptor's length (to walk a BLOCK_DES_* / DYN_EXTRA stream), its op
 * class and sub-op (names, sys kinds), the GDMA data format and the address-space tags that
 * give the Direction, and cmd_id_dep. Everything goes through cdm_desc_decode(), the one
 * function to switch over to desc.c; the name tables (cdm_cmd_names) are shared with the
 * condensed DYN_DATA records of mode 1, which carry the same (op, sub) codes.
 *
 * Facts, transcribed as data (no vendor code): header bits and descriptor lengths from
 * specs/sophgo-cdm.md §6.1 and sophgo-costmodel.md §1.2/§1.4 (tpu-mlir
 * python/debugger/target_1690/regdef.py `length` of each class and decoder.py TiuHead/DmaHead,
 * jonathansong/tpu-mlir @8f9f82e1); op names from costmodel §1.4 (target_1688/opdef.py plus
 * the BM1690 deltas listed there) and sophgo-analysis.md §2.3 (bm1690_defs.py DMA/CDMA names);
 * address tags from cdm §6.1 / costmodel §5 item 2 (bm1690_defs.py::mem_type).
 */
#include "readers/sophgo/cdm/cdm_int.h"

#include <stdio.h>
#include <string.h>

/* ---- TIU ------------------------------------------------------------------------------- */

/* Descriptor length in bits of each TIU class (tsk_typ), long and short form (0 = the form
 * does not exist). sophgo-costmodel.md §1.2, BM1690 column; cdm §6.1. MM (eu 1) and MM2
 * (eu 4..7) share tsk_typ 2 and differ in their short length. */
static const struct {
	const char *type; /* OP_NAME of the long form; the short form is "s" + type */
	uint16_t long_bits, short_bits;
} tiu_class[16] = {
    [0] = {"CONV", 1024, 512}, [1] = {"PorD", 1024, 512},  [2] = {"MM", 1024, 384},
    [3] = {"AR", 1024, 512},   [4] = {"RQ&DQ", 1024, 256}, [5] = {"CW&BC", 1024, 256},
    [6] = {"SG", 1024, 384},   [7] = {"LAR", 128, 128},    [8] = {"RAND", 1024, 0},
    [9] = {"SFU", 1024, 256},  [10] = {"LIN", 1024, 288},  [12] = {"SYS_TR_ACC", 128, 128},
    [13] = {"CMP", 1024, 384}, [14] = {"VC", 1024, 384},   [15] = {"SYS", 128, 128},
};

struct code_name {
	uint8_t op, sub;
	const char *name;
};

/* (tsk_typ, tsk_eu_typ) -> Function Name (costmodel §1.4, with the BM1690 additions). */
static const struct code_name tiu_names[] = {
    {0, 0, "conv.normal"},
    {0, 1, "conv.bw"},
    {0, 2, "conv.tf32"},
    {0, 4, "conv.bw.tf32"},
    {1, 0, "pord.depthwise"},
    {1, 1, "pord.avgpooling"},
    {1, 3, "pord.minpooling"},
    {1, 4, "pord.maxpooling"},
    {1, 5, "pord.roi_depthwise"},
    {1, 6, "pord.roi_avgpooling"},
    {1, 7, "pord.roi_maxpooling"},
    {1, 8, "pord.roi_minpooling"},
    {2, 1, "mm.normal"},
    {2, 4, "mm2.nn"},
    {2, 5, "mm2.nt"},
    {2, 6, "mm2.tt"},
    {2, 7, "mm2.tf32"},
    {3, 0, "arith.mul"},
    {3, 1, "arith.not"},
    {3, 2, "arith.add"},
    {3, 3, "arith.sub"},
    {3, 4, "arith.max"},
    {3, 5, "arith.min"},
    {3, 6, "arith.logic_shift"},
    {3, 7, "arith.and"},
    {3, 8, "arith.or"},
    {3, 9, "arith.xor"},
    {3, 10, "arith.select_great"},
    {3, 11, "arith.select_equal"},
    {3, 12, "arith.div"},
    {3, 13, "arith.select_less"},
    {3, 14, "arith.cast"},
    {3, 15, "arith.add_satu"},
    {3, 16, "arith.sub_satu"},
    {3, 18, "arith.mac"},
    {3, 19, "arith.copy"},
    {3, 20, "arith.mul_satu"},
    {3, 21, "arith.arith_shift"},
    {3, 22, "arith.rotate_shift"},
    {3, 23, "arith.mulDHR"},
    {3, 26, "arith.abs"},
    {3, 27, "arith.fsub_abs"},
    {3, 28, "arith.copy_mb"},
    {4, 0, "quant.rq0"},
    {4, 1, "quant.rq1"},
    {4, 3, "quant.dq0"},
    {4, 4, "quant.dq1"},
    {5, 0, "tsbc.cw_ts"},
    {5, 1, "tsbc.wc_ts"},
    {5, 2, "tsbc.l_copy"},
    {5, 3, "tsbc.l_bc"},
    {5, 4, "tsbc.s_bc"},
    {5, 5, "tsbc.s_distribute"},
    {6, 17, "sgl.pe_s_gather_line"},
    {6, 18, "sgl.pe_s_scatter_line"},
    {9, 12, "sfu.taylor_4x"},
    {9, 13, "sfu.taylor"},
    {9, 15, "sfu.normalize"},
    {9, 17, "sfu.rsqrt"},
    {10, 1, "lin.mac"},
    {10, 20, "lin.square_sum"},
    {10, 21, "lin.square_diff"},
    {12, 0, "system_tr_wr.wr_imm"},
    {13, 22, "cmp.gt_and_sel_gt"},
    {13, 23, "cmp.sel_gt"},
    {13, 24, "cmp.sel_eq"},
    {13, 25, "cmp.lt_and_sel_lt"},
    {13, 26, "cmp.sel_lt"},
    {13, 27, "cmp.srch_bin"},
    {14, 0, "vc.mul"},
    {14, 2, "vc.add"},
    {14, 3, "vc.sub"},
    {14, 4, "vc.max"},
    {14, 5, "vc.min"},
    {14, 7, "vc.and"},
    {14, 8, "vc.or"},
    {14, 9, "vc.xor"},
    {14, 10, "vc.select_gt"},
    {14, 11, "vc.select_eq"},
    {14, 12, "vc.div"},
    {14, 13, "vc.select_lt"},
    {14, 15, "vc.add_satu"},
    {14, 16, "vc.sub_satu"},
    {14, 20, "vc.mul_satu"},
    {14, 23, "vc.mulDHR"},
    {15, 1, "system.spb"},
    {15, 2, "system.swr"},
    {15, 3, "system.swr_from_lmm"},
    {15, 4, "system.swr_collect_from_lmm"},
    {15, 8, "system.send_msg"},
    {15, 9, "system.wait_msg"},
    {15, 30, "system.nop"},
    {15, 31, "system.end"},
};

/* Prefix of the fallback name "<prefix>.<eu>" for sub-ops the table does not list. */
static const char *const tiu_prefix[16] = {
    "conv", "pord", "mm",  "arith", "quant",        "tsbc", "sg", "lar",
    "rand", "sfu",  "lin", "tiu11", "system_tr_wr", "cmp",  "vc", "system"};

/* ---- GDMA / SDMA ----------------------------------------------------------------------- */

/* cmd_type -> Function Type (sophgo-analysis.md §2.3; costmodel §1.4 BM1690 additions). */
static const char *const dma_types[17] = {
    "DMA_tensor",         "DMA_matrix",           "DMA_masked_select", "DMA_general",
    "DMA_cw_transpose",   "DMA_nonzero",          "DMA_sys",           "DMA_gather",
    "DMA_scatter",        "DMA_reverse",          "DMA_compress",      "DMA_decompress",
    "DMA_lossy_compress", "DMA_lossy_decompress", "DMA_randmask",      "DMA_randmask",
    "DMA_transfer"};
/* DMA sys special functions (cmd_type 6): 0 chain_end prints as the type name, as tpu-mlir's
 * tdmaRegInfo does. */
static const char *const dma_sys_names[5] = {"DMA_sys", "nop", "sys_tr_wr", "sys_send", "sys_wait"};

/* ---- CDMA ------------------------------------------------------------------------------ */

static const char *const cdma_types[10] = {"cdma.send",
                                           "cdma.read",
                                           "cdma.write",
                                           "cdma.general",
                                           "cdma.receive",
                                           "cdma.lossy_compress",
                                           "cdma.lossy_decompress",
                                           "cdma.sys",
                                           "cdma.tcp_send",
                                           "cdma.tcp_receive"};
static const char *const cdma_sys_names[7] = {
    "cdma.sys.end",     "cdma.sys.nop",     "cdma.sys.sys_tr_wr", "cdma.sys.tx_send",
    "cdma.sys.tx_wait", "cdma.sys.rx_send", "cdma.sys.rx_wait"};
/* CDMA descriptor lengths in bits by cmd_type (cdm §6.1). */
static const uint16_t cdma_bits[10] = {256, 512, 512, 256, 256, 256, 256, 128, 128, 128};

/* Memory-space tag = address bits 40..44 (the top 5 of the 13-bit high part): below 30 DDR,
 * 30 L2M, 31 LMEM. */
enum { MEM_DDR = 0, MEM_L2 = 1, MEM_LMEM = 2 };
static int mem_of_tag(unsigned tag)
{
	return tag < 30 ? MEM_DDR : tag == 30 ? MEM_L2 : MEM_LMEM;
}

static uint8_t dir_of(int src, int dst)
{
	static const uint8_t t[3][3] = {
	    [MEM_DDR] = {TP_DIR_DDR_TO_DDR, TP_DIR_DDR_TO_L2, TP_DIR_DDR_TO_LMEM},
	    [MEM_L2] = {TP_DIR_L2_TO_DDR, TP_DIR_L2_TO_L2, TP_DIR_L2_TO_LMEM},
	    [MEM_LMEM] = {TP_DIR_LMEM_TO_DDR, TP_DIR_LMEM_TO_L2, TP_DIR_LMEM_TO_LMEM},
	};
	return t[src][dst];
}

uint8_t cdm_dtype(unsigned code)
{
	/* DATATYPE enum of bm1690_defs.py (cdm §5): 0 INT8, 1 FP16, 2 FP32, 3 INT16, 4 INT32,
	 * 5 BFP16, 6 INT4, 7 FP8; 8 FP20 and 9 TF32 have no model type. */
	static const uint8_t t[8] = {TP_DT_INT8,  TP_DT_FP16, TP_DT_FP32, TP_DT_INT16,
	                             TP_DT_INT32, TP_DT_BF16, TP_DT_INT4, TP_DT_FP8};
	return code < 8 ? t[code] : TP_DT_NONE;
}

uint8_t cdm_kind(int engine, unsigned op, unsigned sub)
{
	if (engine == CDM_TIU) {
		if (op != 15 && op != 12)
			return TP_CMD_NORMAL;
		if (op == 15 && sub == 8)
			return TP_CMD_SYS_SEND;
		if (op == 15 && sub == 9)
			return TP_CMD_SYS_WAIT;
		return TP_CMD_SYS;
	}
	if (engine == CDM_CDMA) {
		if (op != 7)
			return TP_CMD_NORMAL;
		return sub == 3 || sub == 5   ? TP_CMD_SYS_SEND
		       : sub == 4 || sub == 6 ? TP_CMD_SYS_WAIT
		                              : TP_CMD_SYS;
	}
	if (op != 6)
		return TP_CMD_NORMAL;
	return sub == 3 ? TP_CMD_SYS_SEND : sub == 4 ? TP_CMD_SYS_WAIT : TP_CMD_SYS;
}

size_t cdm_desc_decode(int engine, const uint8_t *p, size_t left, struct cdm_cmd *c)
{
	memset(c, 0, sizeof *c);
	c->engine = (uint8_t)engine;
	if (left < 16)
		return 0;
	size_t bytes = 0;
	if (engine == CDM_TIU) {
		unsigned is_short = (unsigned)tp_bits(p, 0, 1);
		unsigned op = (unsigned)tp_bits(p, 41, 4);
		/* SYS_TR_ACC's eu field is 3 bits wide (costmodel §1.4). */
		unsigned sub = (unsigned)tp_bits(p, 45, op == 12 ? 3 : 5);
		unsigned bits = is_short ? tiu_class[op].short_bits : tiu_class[op].long_bits;
		if (op == 2 && is_short && sub >= 4)
			bits = 256; /* sMM2 */
		if (!tiu_class[op].type || bits == 0)
			return 0;
		bytes = bits / 8;
		if (bytes > left)
			return 0;
		c->op = (uint8_t)op;
		c->sub = (uint8_t)sub;
		c->is_short = (uint8_t)is_short;
		c->dep = (uint32_t)tp_bits(p, 17, 20); /* cmd_id_dep bits 17..39; bit 20 of the
		                                          field is set on every command seen */
	} else if (engine == CDM_CDMA) {
		unsigned op = (unsigned)tp_bits(p, 4, 4), sub = (unsigned)tp_bits(p, 8, 3);
		if (op >= sizeof cdma_bits / sizeof *cdma_bits)
			return 0;
		bytes = cdma_bits[op] / 8u;
		if (bytes > left)
			return 0;
		c->op = (uint8_t)op;
		c->sub = (uint8_t)sub;
		if (op != 7)
			c->dir = TP_DIR_DDR_TO_DDR; /* CDMA moves DDR to DDR across chips */
	} else {
		unsigned is_short = (unsigned)tp_bits(p, 3, 1);
		unsigned op = (unsigned)tp_bits(p, 32, 5), sub = (unsigned)tp_bits(p, 37, 3);
		/* BM1690 has one short DMA form, sDMA_sys (128 bits); every other class is 768. */
		if (op == 6)
			bytes = 16;
		else if (!is_short && op < sizeof dma_types / sizeof *dma_types)
			bytes = 96;
		else
			return 0;
		if (bytes > left)
			return 0;
		c->op = (uint8_t)op;
		c->sub = (uint8_t)sub;
		c->is_short = (uint8_t)is_short;
		if (bytes == 96) {
			c->dtype = cdm_dtype((unsigned)tp_bits(p, 41, 4));
			c->dep = (uint32_t)tp_bits(p, 64, 20);
			unsigned src = (unsigned)tp_bits(p, 544, 13) >> 8;
			unsigned dst = (unsigned)tp_bits(p, 608, 13) >> 8;
			c->dir = dir_of(mem_of_tag(src), mem_of_tag(dst));
		}
	}
	c->kind = cdm_kind(engine, c->op, c->sub);
	c->known = 1;
	return bytes;
}

int cdm_desc_is_sys(int engine, const struct cdm_cmd *c)
{
	return c->known && c->op == (engine == CDM_TIU ? 15 : engine == CDM_CDMA ? 7 : 6);
}

void cdm_cmd_names(const struct cdm_cmd *c, const char **type, const char **name, char *buf,
                   size_t bufsz)
{
	*type = *name = "unknown";
	if (!c->known)
		return;
	if (c->engine == CDM_TIU) {
		const char *t = tiu_class[c->op & 15].type;
		char *tb = buf, *nb = buf + bufsz / 2;
		size_t half = bufsz / 2;
		if (!t) {
			snprintf(tb, half, "tiu_type_%u", c->op);
			t = tb;
		} else {
			if (c->op == 2 && c->sub >= 4)
				t = "MM2";
			if (c->op == 6 && c->sub >= 17)
				t = "SGL";
			/* The class of a short descriptor is "s" + the long name; LAR, RAND and the
			 * SYS classes have one form (mode-1 records carry no short bit: long
			 * names). */
			if (c->is_short && c->op != 7 && c->op != 8 && c->op != 12 && c->op != 15) {
				snprintf(tb, half, "s%s", t);
				t = tb;
			}
		}
		*type = t;
		for (size_t i = 0; i < sizeof tiu_names / sizeof *tiu_names; i++)
			if (tiu_names[i].op == c->op && tiu_names[i].sub == c->sub) {
				*name = tiu_names[i].name;
				return;
			}
		snprintf(nb, half, "%s.%u", tiu_prefix[c->op & 15], c->sub);
		*name = nb;
		return;
	}
	if (c->engine == CDM_CDMA) {
		if (c->op < sizeof cdma_types / sizeof *cdma_types) {
			*type = cdma_types[c->op];
			*name =
			    c->op == 7 && c->sub < 7 ? cdma_sys_names[c->sub] : cdma_types[c->op];
		} else {
			snprintf(buf, bufsz, "cdma.type_%u", c->op);
			*type = *name = buf;
		}
		return;
	}
	if (c->op >= sizeof dma_types / sizeof *dma_types) {
		snprintf(buf, bufsz, "DMA_type_%u", c->op);
		*type = *name = buf;
		return;
	}
	*type = dma_types[c->op];
	*name = dma_types[c->op];
	if (c->op == 6) {
		*name = c->sub < 5 ? dma_sys_names[c->sub] : "DMA_sys";
	} else if (c->op <= 1 && c->sub == 0) {
		/* tensor/matrix with special function 0 are named by where the data goes
		 * (bm1688_defs.py::getDmaFunctionName, costmodel §5 item 3); L2M moves keep the
		 * plain "tensor". */
		switch (c->dir) {
		case TP_DIR_DDR_TO_LMEM:
		case TP_DIR_DDR_TO_DDR:
			*name = "tensorLd";
			break;
		case TP_DIR_LMEM_TO_DDR:
			*name = "tensorSt";
			break;
		case TP_DIR_LMEM_TO_LMEM:
			*name = "tensorMv";
			break;
		default:
			*name = "tensor";
			break;
		}
	}
}

/* ---- table decoder ------------------------------------------------------------------------ */

size_t cdm_desc_decode_dec(const struct sg_decoder *dec, int engine, const uint8_t *p, size_t left,
                           struct cdm_cmd *c)
{
	memset(c, 0, sizeof *c);
	c->engine = (uint8_t)engine;
	int eng = engine == CDM_TIU ? SG_ENG_TIU : engine == CDM_CDMA ? SG_ENG_CDMA : SG_ENG_DMA;
	struct sg_desc d;
	if (!sg_decode(dec, eng, p, left, &d))
		return 0;
	c->op = d.op;
	c->sub = d.sub;
	c->is_short = (uint8_t)(sg_has(&d, SG_F_CMD_SHORT) ? sg_get(&d, p, SG_F_CMD_SHORT) : 0);
	/* cmd_id_dep: the partner's id is its low 20 bits (bit 20 is set on every command seen;
	 * the full register value stays in the des_cmd_id_dep / cmd_id_dep argument). */
	c->dep = (uint32_t)sg_get(&d, p, SG_F_CMD_ID_DEP) & 0xFFFFFu;
	c->cls = d.cls;
	c->raw = p;
	if (engine == CDM_TIU) {
		if (sg_has(&d, SG_F_OPT_RES0_PREC))
			c->dtype = cdm_dtype((unsigned)sg_get(&d, p, SG_F_OPT_RES0_PREC));
	} else if (engine == CDM_CDMA) {
		if (c->op != 7)
			c->dir = TP_DIR_DDR_TO_DDR; /* CDMA moves DDR to DDR across chips */
	} else if (c->op != 6) {
		c->dtype = cdm_dtype((unsigned)sg_get(&d, p, SG_F_SRC_FMT));
		unsigned src = (unsigned)(sg_get(&d, p, SG_F_SRC_H8) >> 8) & 31;
		unsigned dst = (unsigned)(sg_get(&d, p, SG_F_DST_H8) >> 8) & 31;
		c->dir = dir_of(mem_of_tag(src), mem_of_tag(dst));
	}
	c->kind = cdm_kind(engine, c->op, c->sub);
	c->known = 1;
	return d.bytes;
}
