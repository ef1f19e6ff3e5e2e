/*
 * sg_isa.h — the Sophgo instruction sets: the register tables transcribed from tpu-mlir
 * (regdef_<chip>.c), the table-driven descriptor decoder built from them (desc.c) and the TIU
 * cost model (cost.c). Used by both readers, their unit tests and fuzz targets. The tables are
 * static data; a decoder is owned by whoever built it (sg_decoder_free) and immutable after.
 */
#ifndef TP_SG_ISA_H
#define TP_SG_ISA_H

#include "readers/sophgo/sg_chip.h"

/* ---------------------------------------------------------------------------------------- */
/* Register tables (regdef_<chip>.c): descriptor layouts transcribed from tpu-mlir's          */
/* python/debugger/target_<chip>/regdef.py (one class per register layout) and the op tables */
/* of target_<chip>/opdef.py. A descriptor is a little-endian bit stream; fields are packed  */
/* LSB-first in table order, field k starting at the sum of the widths before it; the widths */
/* of a class add up to its length (specs/sophgo-costmodel.md §1.3).                          */
/* ---------------------------------------------------------------------------------------- */

struct sg_field {
	const char *name; /* regdef name without the "des_" prefix: "cmd_short", "res0_n" */
	uint16_t width;   /* bits, 1..64 */
};

struct sg_regclass {
	const char *op_name; /* regdef OP_NAME: "sCONV", "CONV", "DMA_tensor", "sDMA_sys" */
	uint16_t length;     /* descriptor length in bits (regdef `length`) */
	const struct sg_field *fields;
	uint16_t nfields;
};

/* Names of the sub-operations of one class: TIU tsk_eu_typ / DMA cmd_special_function. */
struct sg_subname {
	uint8_t code;
	const char *name; /* Function Name: "conv.normal", "arith.add", "dma.tensor" */
};

/* One entry of the op index: the header key that selects a class. */
struct sg_opclass {
	const char *op_name; /* the sg_regclass it selects */
	int8_t is_short;     /* cmd_short value, -1 = either (1688 SYS_TR_ACC) */
	uint8_t op;          /* TIU tsk_typ / DMA cmd_type */
	const struct sg_subname *subs;
	uint16_t nsubs;
};

/* A chip's instruction-set tables. */
struct sg_isa {
	enum tp_arch arch;
	const char *source; /* "tpu-mlir python/debugger/target_1688 @<commit>" */
	const struct sg_regclass *tiu;
	uint16_t ntiu;
	const struct sg_opclass *tiu_ops;
	uint16_t ntiu_ops;
	const struct sg_regclass *dma;
	uint16_t ndma; /* GDMA; SDMA uses the same encoding */
	const struct sg_opclass *dma_ops;
	uint16_t ndma_ops;
	const struct sg_regclass *cdma;
	uint16_t ncdma; /* BM1690 only */
	const struct sg_opclass *cdma_ops;
	uint16_t ncdma_ops;
};

/* The chips' tables (regdef_<chip>.c; static data, thread-safe). */
extern const struct sg_isa sg_isa_bm1684x;
extern const struct sg_isa sg_isa_cv184x;
extern const struct sg_isa sg_isa_bm1690;
/* BM1688/CV186X (regdef_bm1688.c). sg_isa_for_arch has BM1688, CV184X, BM1690 (= SG2260)
 * and BM1684X; SG2260E has no table of its own (NULL). */
extern const struct sg_isa sg_isa_bm1688;
/* The table set of an arch, NULL if none is linked in. Thread-safe (static data). */
const struct sg_isa *sg_isa_for_arch(enum tp_arch a);

/* ---------------------------------------------------------------------------------------- */
/* Table-driven descriptor decoder (desc.c), specs/sophgo-costmodel.md §1.3/§1.4.            */
/* A decoder is built once per reader from an sg_isa (sg_decoder_new): per class it resolves */
/* every field's bit offset and the offsets of the well-known fields (enum sg_fid) the       */
/* reader and the cost model use, and it builds header-key lookup tables. After that,        */
/* decoding a command is a table lookup plus shifts: no allocation and no string work. A     */
/* decoder is immutable once built, so threads may share it.                                 */
/* ---------------------------------------------------------------------------------------- */

enum sg_engine { SG_ENG_TIU = 0, SG_ENG_DMA = 1, SG_ENG_CDMA = 2, SG_ENG_COUNT };

/* Well-known fields. A class without the field reads 0 and sg_has() says 0. DMA addresses are
 * named by what they hold: SRC_L32 is BM1688's `src_start_addr_h32` in the matrix layout
 * (the vendor renames it to _l32 when printing; §5 step 1), SRC_H8 its `_l8`. */
enum sg_fid {
	SG_F_CMD_SHORT,
	SG_F_CMD_ID_DEP,
	SG_F_TSK_TYP,
	SG_F_TSK_EU_TYP,
	SG_F_TSK_OPD_NUM,
	SG_F_OPT_RES0_PREC,
	SG_F_OPT_OPD0_PREC,
	SG_F_OPT_OPD1_PREC,
	SG_F_OPT_OPD2_PREC,
	SG_F_OPT_OPD0_SIGN,
	SG_F_OPT_OPD2_SIGN,
	SG_F_OPT_OPD2_CONST,
	SG_F_OPT_LEFT_TRAN,
	SG_F_RES0_N,
	SG_F_RES0_C,
	SG_F_RES0_H,
	SG_F_RES0_W,
	SG_F_OPD0_N,
	SG_F_OPD0_C,
	SG_F_OPD0_H,
	SG_F_OPD0_W,
	SG_F_OPD1_N,
	SG_F_OPD1_C,
	SG_F_OPD1_H,
	SG_F_OPD1_W,
	SG_F_RES0_ADDR,
	SG_F_OPD0_ADDR,
	SG_F_IMM,
	SG_F_RSVD1,
	SG_F_CMD_TYPE,
	SG_F_SPECIAL,
	SG_F_SRC_FMT,
	SG_F_RESERVED0,
	SG_F_SRC_L32,
	SG_F_SRC_H8,
	SG_F_DST_L32,
	SG_F_DST_H8,
	SG_F_COUNT
};

/* One class, resolved. off[i] is the bit offset of rc->fields[i]. */
struct sg_dclass {
	const struct sg_regclass *rc;
	const struct sg_opclass *op; /* the op-index entry that selects it (first one) */
	const uint16_t *off;
	/* Dict view of the fields, as the vendor's printers build it (name -> value): for field i
	 * the index whose value shows at i's position (the last field of that name), or
	 * UINT16_MAX when i repeats an earlier name. */
	const uint16_t *dict_src;
	uint16_t bytes;            /* rc->length / 8, rounded up */
	uint16_t kofs[SG_F_COUNT]; /* bit offset of each well-known field */
	uint8_t kw[SG_F_COUNT];    /* its width; 0 = the class has no such field */
};

#define SG_TIU_KEYS 1024 /* cmd_short(1) tsk_typ(4) tsk_eu_typ(5) */
#define SG_TIU3_KEYS 128 /* tsk_typ(4) tsk_eu_typ(3): SYS_TR_ACC-style heads */
#define SG_DMA_KEYS 512  /* cmd_short(1) cmd_type(up to 5) special function(3) */

struct sg_decoder {
	const struct sg_isa *isa;
	unsigned dma_type_bits; /* 4 (BM1688, BM1684X) or 5 (CV184X, BM1690) */
	struct sg_dclass *cls[SG_ENG_COUNT];
	uint16_t ncls[SG_ENG_COUNT];
	int16_t tiu_key[SG_TIU_KEYS]; /* class index or -1 */
	int16_t tiu_key3[SG_TIU3_KEYS];
	int16_t dma_key[2][SG_DMA_KEYS]; /* [0] DMA, [1] CDMA */
	const char *tiu_sub[16][32];     /* Function Name by (tsk_typ, tsk_eu_typ), NULL unknown */
	const char *dma_sub[2][32][8];
	uint16_t *pool; /* owned: every class's off[] */
};

/* A decoded command head: which class, its sub-operation, its size. */
struct sg_desc {
	const struct sg_dclass *cls;
	const char *sub_name;      /* op-index Function Name, NULL if the code is not listed */
	uint8_t is_short, op, sub; /* cmd_short, tsk_typ / cmd_type, eu / special function */
	uint16_t bytes;
};

/* Builds a decoder for `isa`; dma_type_bits from the chip table (4 or 5). Returns TP_OK,
 * TP_ENOMEM, or TP_EFORMAT if a table is inconsistent (a class's widths add up to less than its
 * length, a field wider than 64 bits, an op-index entry naming no class). Free with
 * sg_decoder_free. */
int sg_decoder_new(const struct sg_isa *isa, unsigned dma_type_bits, struct sg_decoder **out);

/* The argument keys of one decoded class's fields, interned in `p`, one per regdef field:
 * TIU (`tiu` != 0) `des_` + the regdef name, DMA/CDMA the plain name, with BM1688's DMA printer
 * renames when `bm1688_renames` (*_start_addr_h32 -> *_l32, *_l8 -> *_h8). A field the
 * vendor's dict drops (a name the class repeats, after its first position) gets key 0.
 * Returns a tp_calloc'd array (the caller frees it), or NULL when out of memory. */
uint32_t *sg_class_keys(struct tp_profile *p, const struct sg_dclass *dc, int tiu,
                        int bm1688_renames);
void sg_decoder_free(struct sg_decoder *d);

/* Reads the head of the descriptor at p (left bytes available) for `engine` and selects its
 * class from the header key (§1.4; a TIU head whose key is unknown is retried as a
 * SYS_TR_ACC-style head with a 3-bit eu, then with the other cmd_short value). Returns 1 and
 * fills *out, or 0 if no class matches or the descriptor does not fit in `left`. */
int sg_decode(const struct sg_decoder *d, int engine, const uint8_t *p, size_t left,
              struct sg_desc *out);

/* Bits [off, off+width) of a little-endian descriptor of `bytes` bytes (width 1..64; a field
 * may cross a 64-bit word). Bits past `bytes` read as 0. */
uint64_t sg_bits(const uint8_t *p, size_t bytes, unsigned off, unsigned width);

/* sg_bits with the common case inline (the readers and the cost model read millions of
 * fields): a field of at most 56 bits whose 8 bytes from its first byte lie inside the
 * descriptor is one unaligned load; anything else takes sg_bits. Same result as sg_bits. */
static inline uint64_t sg_bits_inl(const uint8_t *p, size_t bytes, unsigned off, unsigned width)
{
	size_t byte = off >> 3;
	if (width - 1u < 56u && byte + 8 <= bytes)
		return (tp_le64(p + byte) >> (off & 7)) & ((UINT64_C(1) << width) - 1);
	return sg_bits(p, bytes, off, width);
}

/* Value of field i of the command's class / of a well-known field (0 if absent). */
static inline uint64_t sg_field(const struct sg_desc *c, const uint8_t *p, unsigned i)
{
	return sg_bits_inl(p, c->bytes, c->cls->off[i], c->cls->rc->fields[i].width);
}
static inline int sg_has(const struct sg_desc *c, enum sg_fid f)
{
	return c->cls->kw[f] != 0;
}
static inline uint64_t sg_get(const struct sg_desc *c, const uint8_t *p, enum sg_fid f)
{
	return c->cls->kw[f] ? sg_bits_inl(p, c->bytes, c->cls->kofs[f], c->cls->kw[f]) : 0;
}

/* 1 if the command at p ends its stream (§1.4): a TIU SYS (tsk_typ 15) followed by fewer than
 * 129 bytes that are all zero, or SYS end (eu 31) with rsvd1 == 1; a DMA sys chain_end (sp 0)
 * with reserved0 == 1. `rest`/`nrest` are the bytes after the command. */
int sg_is_end(int engine, const struct sg_desc *c, const uint8_t *p, const uint8_t *rest,
              size_t nrest);

/* ---------------------------------------------------------------------------------------- */
/* TIU cost model (cost.c), specs/sophgo-costmodel.md §3.                                    */
/* ---------------------------------------------------------------------------------------- */

/* Fills *out (alg_ops, uarch_ops, alg_cycle, init_cycle, bank_cycle, valid) for the TIU
 * command c at p on `chip`. valid = 0 (everything else 0) where the model does not cover the
 * command (unknown class, chip without a model). Pure; thread-safe. */
void sg_tiu_cost(const struct sg_chip *chip, const struct sg_desc *c, const uint8_t *p,
                 struct tp_cost *out);
/* BM1684X (cost_bm1684x.c): Alg Ops and uArch Ops of the TIU command c at p (alg_cycle,
 * init_cycle, bank_cycle 0: the chip's model has none); valid = 0 where it does not cover the
 * command. Pure; thread-safe. */
void sg_tiu_cost_bm1684x(const struct tp_chip *k, const struct sg_desc *c, const uint8_t *p,
                         struct tp_cost *out);
/* BM1684X's legacy printer's operand types of the TIU command c at p ("f16", "si32", "i32"):
 * operand 0's into opd0, the result's into res (n bytes each, >= 8); both "" for a layout
 * without precision registers (SYS). */
void sg_bm1684x_dtypes(const struct sg_desc *c, const uint8_t *p, char *opd0, char *res, size_t n);
/* Python's format(num/den, ".1%") into buf (>= 16 bytes): "9.3%". den == 0 gives "0.0%". */
void sg_pct1(char *buf, size_t n, double num, double den);
/* Vendor precision-code names (PerfAI data_type_dict): 0 INT8 ... 9 TF32; "None" otherwise. */
const char *sg_prec_name(unsigned code);

#endif /* TP_SG_ISA_H */
