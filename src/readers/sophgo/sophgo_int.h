/*
 * sophgo_int.h — the Sophgo module's internal pieces, shared by its own files, its unit
 * tests and its fuzz targets: the iter<N>.profile block walk and PMU/MCU record decoders
 * (bmp_iter.c), the command-descriptor decoders for cmd_*.dat (bmp_cmd.c), the global.profile
 * parser (bmp_global.c), the net_stat.sim parser (bmp_netstat.c) and the pure timeline steps of
 * §9.2 (bmp_timeline.c); for cdm_profile_data the global.profile parser and block walk (cdm_file.c)
 * and the BM1690 descriptor-header decoder (cdm_hdr.c); what both readers' per-core workers
 * keep aside (sg_aside.c). Every entry point works on a memory buffer, so tests and fuzzers
 * need no files.
 *
 * Nothing here owns global state. Structures that allocate say who frees them.
 */
#ifndef TP_SOPHGO_INT_H
#define TP_SOPHGO_INT_H

#include "readers/sophgo/sophgo.h"

#define BMP_MAX_CORES 64

/* ---------------------------------------------------------------------------------------- */
/* The chip table (chip.c): one row per chip, shared by every Sophgo reader.                 */
/* ---------------------------------------------------------------------------------------- */

struct sg_chip {
	struct tp_chip c;           /* what analysis and writers may see (tp_profile.chip = &c) */
	int bmp_arch;               /* global.profile "arch=" value of bmprofile_data, -1 none */
	long cdm_arch[2];           /* cdm_profile_data "arch=" values (old, new writers), 0 none */
	unsigned tiu_pmu_bytes;     /* TIU PMU record size */
	unsigned gdma_pmu_bytes;    /* GDMA (and SDMA) PMU record size */
	unsigned cdma_pmu_bytes;    /* CDMA PMU record size, 0 = no CDMA */
	unsigned dma_cmd_type_bits; /* DMA descriptor cmd_type width: 4 or 5 */
	unsigned tiu_sys_bits;      /* TIU SYS descriptor length in bits (CV184X: 64) */
	unsigned cdma_ports;        /* CDMA ports per device */
	uint32_t id_wrap;           /* command-id wrap value (SG2260E 0x3FFFF), 0 none */
	/* bmprofile_data reader (sophgo-bmprofile.md §4.5, §4.6, §8.1, §9, §11): */
	uint8_t bmp_timeline;     /* enum sg_timeline: how iter<N>.profile becomes a timeline */
	uint8_t tiu_pmu_id_first; /* TIU PMU record starts with inst_id (CV184X: id, conflict,
	                             start, end) instead of start, end, id */
	uint8_t tiu_id_bits;      /* TIU PMU inst_id width (16 on 32-byte records, 20 CV184X) */
	uint8_t gdma_id_bits;     /* GDMA PMU inst_id width (16 BM1684, 20 otherwise) */
	uint32_t pmu_fill;        /* start/end word of a never-written PMU record: 0 or ~0 */
};

/* Timeline reconstruction rule of a chip's bmprofile_data (sophgo-bmprofile.md §9). */
enum sg_timeline {
	SG_TL_NONE = 0,   /* bmprofile_data not read for this chip */
	SG_TL_LEGACY = 1, /* §9.1 (BM1684, BM1684X): dyn start offset, TIU re-anchoring */
	SG_TL_PERFAI = 2, /* §9.2 (BM1688/CV186X, CV184X): trimming, wait_msg alignment */
};
/* Lookups; NULL when the table has no such chip. Thread-safe (static data). */
const struct sg_chip *sg_chip_by_arch(enum tp_arch a);
const struct sg_chip *sg_chip_by_bmp_arch(int raw);
const struct sg_chip *sg_chip_by_cdm_arch(long raw);
size_t sg_chips(const struct sg_chip **out);

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
/* Python's format(num/den, ".1%") into buf (>= 16 bytes): "9.3%". den == 0 gives "0.0%". */
void sg_pct1(char *buf, size_t n, double num, double den);
/* Vendor precision-code names (PerfAI data_type_dict): 0 INT8 ... 9 TF32; "None" otherwise. */
const char *sg_prec_name(unsigned code);

/* iter<N>.profile block types (§4.2). */
enum bmp_block_type {
	BMP_BLK_SUMMARY = 1,
	BMP_BLK_COMPILER_LOG = 2,
	BMP_BLK_MONITOR_BD = 3,
	BMP_BLK_MONITOR_GDMA = 4,
	BMP_BLK_DYN_DATA = 5,
	BMP_BLK_DYN_EXTRA = 6,
	BMP_BLK_FIRMWARE_LOG = 7,
	BMP_BLK_COMMAND = 8,
};

#define BMP_SUMMARY_SIZE 36
#define BMP_TIU_REC_SIZE 32
#define BMP_DYN_REC_SIZE 32
#define BMP_COMMAND_HDR_SIZE 36

/* Where a block's payload sits in its file. */
struct bmp_span {
	uint64_t off; /* absolute file offset of the payload */
	size_t len;
};

struct bmp_summary {
	int32_t iteration, subnet_id, subnet_type;
	uint64_t begin_usec, end_usec, extra;
};

struct bmp_command {
	uint64_t gdma_base, gdma_offset, bd_base, bd_offset;
	uint32_t group_num;
	uint64_t gdma_count, bd_count; /* sums over the groups */
};

/* Result of walking one iter file. Blocks of each per-core type are kept in file order; the
 * k-th one belongs to the k-th core of core_list (§4.4: core identity is positional). */
struct bmp_iter {
	int have_summary;
	struct bmp_summary summary;
	struct bmp_command cmd[BMP_MAX_CORES];
	struct bmp_span bd[BMP_MAX_CORES], gdma[BMP_MAX_CORES], dyn[BMP_MAX_CORES],
	    extra[BMP_MAX_CORES];
	unsigned n_cmd, n_bd, n_gdma, n_dyn, n_extra;
	uint64_t blocks_read, blocks_skipped;
	uint64_t extra_items, extra_strings; /* DYN_EXTRA items seen (all, STRING) */
};

/* PMU record sizes of an arch from the chip table (gdma: 256 BM1688, 192 BM1684/BM1684X,
 * 64 CV184X; tiu: 32, or 16 on CV184X); 0 when the bmprofile reader has no layout for it. */
size_t bmp_gdma_rec_size(enum tp_arch arch);
size_t bmp_tiu_rec_size(enum tp_arch arch);

/* Walks the block stream data[0..len) of the file named `path` (for messages). Validates every
 * header before the size it declares, payload sizes against their record sizes and counts
 * against the bytes left; unknown block types are skipped and counted. Returns TP_OK or an
 * error (TP_ETRUNC, TP_EFORMAT) with `path@0xOFFSET: message` in d. */
int bmp_walk(const uint8_t *data, size_t len, enum tp_arch arch, const char *path,
             struct bmp_iter *it, struct tp_diag *d);

/* One TIU PMU record (§4.5). */
struct bmp_tiu_rec {
	uint32_t start, end;
	uint32_t inst_id; /* 16 bits (32-byte records) or 20 bits (CV184X) */
};
/* 32-byte layout (BM1684, BM1684X, BM1688): start, end, u64 {inst_id:16, load:48}, ... */
static inline void bmp_tiu_decode(const uint8_t *p, struct bmp_tiu_rec *r)
{
	r->start = tp_le32(p);
	r->end = tp_le32(p + 4);
	r->inst_id = (uint32_t)p[8] | (uint32_t)p[9] << 8;
}
/* 16-byte id-first layout (CV184X, MARS3): {inst_id:20, reserved:12}, {thread_id:1,
 * bank_conflict:31}, start, end. */
static inline void bmp_tiu_decode_id_first(const uint8_t *p, struct bmp_tiu_rec *r)
{
	r->inst_id = tp_le32(p) & 0xFFFFFu;
	r->start = tp_le32(p + 8);
	r->end = tp_le32(p + 12);
}

/* One GDMA PMU record (§4.6). */
struct bmp_gdma_rec {
	uint32_t start, end;
	uint32_t inst_id;      /* 20 bits (BM1688, BM1684X) or 16 bits (BM1684) */
	uint64_t gmem, lmem;   /* BM1688: DDR-side (d0/d1 aw+ar) and LMEM-side (fmem aw+ar) bytes */
	uint64_t bytes;        /* DMA data size: BM1688 max(gmem, lmem) (§10.1); legacy
	                          d0_wr + d1_wr + gif_wr (§10.3), 0 if a counter is 0xFFFFFFFF */
	uint32_t stall;        /* BM1688 fmem_wr_stall + fmem_rd_stall; CV184X gif_wr_rd_stall;
	                          0 on legacy arches */
	uint32_t gxact, lxact; /* CV184X transaction counts (costmodel §5 item 7): AXI d0
	                          wr+rd valid (DDR side), GIF wr+rd valid (LMEM side); else 0 */
};
void bmp_gdma_decode(enum tp_arch arch, const uint8_t *p, struct bmp_gdma_rec *r);

/* One MCU (DYN_DATA) record (§4.7). */
struct bmp_dyn_rec {
	uint32_t profile_id, type;
	uint64_t id, begin, end;
};
static inline void bmp_dyn_decode(const uint8_t *p, struct bmp_dyn_rec *r)
{
	r->profile_id = tp_le32(p);
	r->type = tp_le32(p + 4);
	r->id = tp_le64(p + 8);
	r->begin = tp_le64(p + 16);
	r->end = tp_le64(p + 24);
}

/* ---------------------------------------------------------------------------------------- */
/* Command descriptors (cmd_*.dat, §6).                                                      */
/* ---------------------------------------------------------------------------------------- */

enum { BMP_ENG_TIU = 0, BMP_ENG_GDMA = 1 };

/* What the reader needs from one decoded descriptor. */
struct bmp_cmd {
	uint8_t engine; /* BMP_ENG_* */
	uint8_t kind;   /* enum tp_cmd_kind */
	uint8_t dir;    /* enum tp_dir (DMA) */
	uint8_t dtype;  /* enum tp_dtype */
	uint8_t is_short;
	uint8_t op;       /* TIU tsk_typ / DMA cmd_type (BM1684: func) */
	uint8_t sub;      /* TIU tsk_eu_typ / DMA special function */
	uint8_t has_msg;  /* SYS send/wait: msg_id and msg_cnt valid */
	uint16_t key;     /* compact (engine, short, op, sub, dir) for name caching */
	uint32_t dep;     /* cmd_id_dep (the partner engine's id this command waits for) */
	uint32_t self_id; /* id stored in the descriptor (BM1684/BM1684X), 0 if none */
	uint32_t msg_id, msg_cnt;
	uint64_t src_addr, dst_addr;
	const char *name; /* function name ("conv.normal", "tensorLd", ...) */
	const char *type; /* function type ("sCONV", "DMA_tensor", ...) */
	/* Set when a table decoder (sg_decoder) decoded the command: its class and the raw
	 * descriptor bytes (valid while the command buffer's data is), for field access. */
	int have_desc;
	struct sg_desc desc;
	const uint8_t *raw;
	char name_buf[40], type_buf[24]; /* storage for names of unlisted codes */
};

/* Size in bytes of the descriptor at p (left bytes available), or 0 if the header is not one
 * the decoder knows or the descriptor does not fit. */
size_t bmp_cmd_size(enum tp_arch arch, int engine, const uint8_t *p, size_t left);
/* Decodes the descriptor at p (size bytes, as returned by bmp_cmd_size). */
void bmp_cmd_decode(enum tp_arch arch, int engine, const uint8_t *p, size_t size,
                    struct bmp_cmd *c);

/* A command buffer with random access by cmd_id. Indexed lazily: a lookup past the indexed
 * part indexes up to it and decodes the command at the frontier once, for the caller and the
 * index, so lookups in PMU order read each descriptor once. The index keeps the offset of
 * every 1024th command, so a backward jump costs at most 1024 header reads. Memory: 8 bytes
 * per 1024 commands. */
struct bmp_cmdbuf {
	const struct sg_decoder *dec; /* table decoder, NULL = the hand-written one (not owned) */
	const uint8_t *data;
	size_t len;
	enum tp_arch arch;
	int engine;
	uint32_t count; /* descriptors indexed so far (all of them after finish) */
	uint32_t limit; /* lookups past this id find nothing (bmp_cmdbuf_limit) */
	size_t *index;  /* offset of command 1 + 1024*i (owned) */
	size_t nindex, cap_index;
	size_t scan_off; /* offset of command count + 1 while !done */
	int done;        /* the index reached the stream's end, a stop or out of memory */
	int mapped;      /* data is a read-only file mapping: indexed pages may be dropped */
	int oom;         /* the index could not grow */
	uint32_t cur_id; /* cmd_id at cur_off (1-based), 0 = none */
	size_t cur_off;
	size_t cur_n;    /* size of the command at cur_off when already decoded, else 0 */
	int stopped;     /* 1 if decoding stopped at an unknown header */
	size_t stop_off; /* where */
};
/* Prepares data[0..len) for lookups; reads nothing past the first nonzero byte. TP_OK. The
 * data must outlive cb. */
int bmp_cmdbuf_init(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine, const uint8_t *data,
                    size_t len);
/* Same, for data inside a read-only file mapping: pages behind the index's frontier are
 * released as it moves (they fault back in from the file when looked up). Never use on heap
 * memory. */
int bmp_cmdbuf_init_mapped(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine,
                           const uint8_t *data, size_t len);
/* Same as the two above (mapped selects which), decoding with the table decoder `dec` (which
 * must outlive cb): sizes, class, every field; stream end per §1.4. */
int bmp_cmdbuf_init_dec(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine,
                        const struct sg_decoder *dec, const uint8_t *data, size_t len, int mapped);
/* Decodes the descriptor at p with a table decoder: 1 and *c filled (names, kind, dtype,
 * direction, dependency, message id, addresses, have_desc/desc/raw), or 0 if no class
 * matches or it does not fit in `left`. */
int bmp_cmd_decode_dec(const struct sg_decoder *dec, int engine, const uint8_t *p, size_t left,
                       struct bmp_cmd *c);
/* Decodes command `cmd_id` (1-based). Returns 1, or 0 if the stream has no such command (or
 * past the limit, or the index could not grow: see bmp_cmdbuf_finish). */
int bmp_cmdbuf_get(struct bmp_cmdbuf *cb, uint32_t cmd_id, struct bmp_cmd *out);
/* Indexes the rest of the stream: afterwards count, stopped and stop_off describe all of it.
 * TP_OK, or TP_ENOMEM if the index could not grow (now or in an earlier lookup). */
int bmp_cmdbuf_finish(struct bmp_cmdbuf *cb);
/* Lookups of ids above `limit` find nothing (BM1684's fixed slots: trailing padding past the
 * COMMAND block's count is not commands). Indexing and count are unaffected. */
void bmp_cmdbuf_limit(struct bmp_cmdbuf *cb, uint32_t limit);
void bmp_cmdbuf_free(struct bmp_cmdbuf *cb);

/* ---------------------------------------------------------------------------------------- */
/* global.profile (§3).                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Node lines of one (core, engine) in file order: the layer each belongs to and, for the
 * legacy matching (§8.2), its bd/gdma ids. There is one node line per command (millions), and
 * a node's layer is the latest layer line's, so it only grows while a subnet runs: the layers
 * are kept as one byte per node, ld[i] = layer(i) - layer(i - 1) (layer(-1) = -1) when that
 * is 0..254, else 255 with the layer in `esc` (sorted by node), plus the layer of every
 * BMP_NODE_MARK-th node in `mark`. Read them with bmp_nodes_layer. */
#define BMP_NODE_MARK 64
struct bmp_node_esc {
	uint32_t node;
	int32_t layer;
};
struct bmp_nodes {
	uint8_t *ld;
	int32_t *mark;
	struct bmp_node_esc *esc;
	size_t cap_ld, nmark, cap_mark, nesc, cap_esc;
	int32_t last;              /* layer of node n - 1 */
	uint32_t *bd_id, *gdma_id; /* NULL unless keep_ids */
	uint8_t *dir;  /* enum tp_dir from gdma_dir= (GDMA nodes), NULL unless keep_ids */
	size_t n, cap; /* nodes; capacity of the keep_ids arrays */
};

/* Where bmp_nodes_layer last stopped, so reading nodes in order costs one step each. Zero it
 * before the first call (and for another struct bmp_nodes). */
struct bmp_node_cursor {
	size_t pos; /* 1 + the node whose layer is v; 0 = none */
	int32_t v;
	size_t esc; /* first esc entry past that node */
};
/* The layer of node i (< nd->n), -1 for none. */
int32_t bmp_nodes_layer(const struct bmp_nodes *nd, size_t i, struct bmp_node_cursor *cur);

struct bmp_global {
	int have_arch;
	int arch_raw;
	unsigned long arch_line; /* line of the arch= line, for messages */
	enum tp_arch arch;
	int have_freq;
	int64_t tpu_freq;
	int have_core_list;
	int cores[BMP_MAX_CORES];
	unsigned n_cores;
	int keep_ids;        /* input: store node ids (legacy arches) */
	int no_layers;       /* input: do not create layers/tensors (tensor_location.json wins) */
	int no_tensors;      /* input: skip tensor lines (huge dumps) */
	int no_nodes;        /* input: do not store node lines (layers not wanted) */
	int drop_pages;      /* input: the text is a file mapping whose pages may be released
	                        (madvise) once parsed; never set for heap buffers */
	int jobs;            /* input: threads that tokenize chunks of the text (0 or 1 = the
	                        calling thread only); the result is the same for every value */
	struct tp_file *src; /* input: the file the text is, for per-chunk progress; NULL none */
	struct bmp_nodes nodes[BMP_MAX_CORES][2]; /* [core][BMP_ENG_*] */
	unsigned long lines;
};

/* Parses global.profile text[0..len) into `p` (net_name, meta, layers, tensors, mems) and `g`
 * (arch, clocks, core list, node lines). `g` must be zeroed by the caller except its input
 * fields. With g->jobs > 1 the text is tokenized in 4 MB chunks by that many threads (jobs - 1
 * workers and the calling thread) and applied in file order by the calling thread: the
 * profile, g and the error (the first one in file order) are the same as with one thread.
 * Errors name `path:LINE`. Free g with bmp_global_free. */
int bmp_global_parse(const char *text, size_t len, const char *path, struct tp_profile *p,
                     struct bmp_global *g, struct tp_diag *d);
void bmp_global_free(struct bmp_global *g);
/* Maps the runtime's arch number (§2) to a tp_arch; TP_ARCH_UNKNOWN if not handled. */
enum tp_arch bmp_arch_from_raw(int raw);

/* ---------------------------------------------------------------------------------------- */
/* net_stat.sim (§7).                                                                         */
/* ---------------------------------------------------------------------------------------- */

struct bmp_netstat {
	int have_total;
	uint64_t total_cycle, bdc_cycle, gdma_cycle, flops;
	uint64_t bd_items, gdma_items;
	uint64_t dr_bytes[4];                    /* GDMA SUMMARY S2L, L2S, S2S, L2L */
	char runtime_ms[32];                     /* as printed */
	unsigned long bad_lines, first_bad_line; /* lines skipped, and the first one */
	char bad_what[96];                       /* what was wrong with the first one */
};
/* Parses net_stat.sim text[0..len). Tolerant (a side file): never fails; lines that do not
 * parse are skipped and counted in ns (path and d are unused, kept for the callers). */
int bmp_netstat_parse(const char *text, size_t len, const char *path, struct bmp_netstat *ns,
                      struct tp_diag *d);

/* ---------------------------------------------------------------------------------------- */
/* final.mlir (final_mlir.c; sophgo-cdm.md §9): loc names per line, layer groups, module.    */
/* ---------------------------------------------------------------------------------------- */

struct sg_mlir_op {
	uint32_t line; /* 1-based line of the op (tensor_location.json "file-line") */
	uint32_t name; /* offset of its resolved loc name in strs ("" if none) */
};
struct sg_mlir_group {
	uint32_t line;        /* 1-based line of the Group op */
	uint32_t yield;       /* first later Yield line, 0 = none */
	uint32_t first, last; /* member lines [first, last] (strictly between), 0,0 = none */
};
struct sg_mlir {
	struct sg_mlir_op *ops;
	size_t nops; /* in line order */
	struct sg_mlir_group *groups;
	size_t ngroups; /* in line order */
	char *strs;
	size_t nstrs, cap_strs; /* NUL-terminated names */
	int have_module, have_flops, have_cores;
	char module[128], chip[32], mode[32]; /* module @<name>, module.chip, module.mode */
	int64_t flops, cores;
	unsigned long lines;
	unsigned long bad_lines, first_bad_line; /* loc()/alias lines that did not parse */
};
/* Parses text[0..len) into m (zeroed first). Never fails on content: malformed lines are
 * skipped and counted. TP_OK or TP_ENOMEM (m left empty). Free with sg_mlir_free. */
int sg_mlir_parse(const char *text, size_t len, struct sg_mlir *m);
/* The loc name of the op on `line`, or NULL when that line has no op with a loc. */
const char *sg_mlir_name(const struct sg_mlir *m, uint32_t line);
/* Index of the group whose member range holds `line`, or -1. */
int sg_mlir_group_of(const struct sg_mlir *m, uint32_t line);
void sg_mlir_free(struct sg_mlir *m);

/* ---------------------------------------------------------------------------------------- */
/* Layer information from tensor_location.json + final.mlir (sg_layers.c), any Sophgo chip.  */
/* ---------------------------------------------------------------------------------------- */

struct sg_layers {
	void *json;          /* cJSON array of entries, NULL when absent or unusable */
	struct sg_mlir mlir; /* valid when have_mlir */
	int have_mlir;
};
/* Reads the side files (either path may be NULL = absent). A file that cannot be read or
 * parsed is skipped with one profile note naming `path:LINE`; L->json stays NULL then, and
 * the caller may fall back to other layer sources. Sets the mlir_* metadata. Returns TP_OK or
 * TP_ENOMEM only. Free with sg_layers_free. */
int sg_layers_load(struct tp_profile *p, const char *json_path, const char *mlir_path,
                   struct sg_layers *L);
/* The JSON half of sg_layers_load on a buffer (for tests and fuzzers): parses
 * tensor_location.json text data[0..size) into L->json, or leaves it NULL with a note. */
int sg_layers_parse_json(struct tp_profile *p, const uint8_t *data, size_t size, const char *path,
                         struct sg_layers *L);
/* Adds one layer per JSON entry (and its tensors when `tensors`), and joins them to the
 * slices of tiu_track[k] / gdma_track[k] (k < ncores; -1 = no track) by cmd id on core k,
 * setting slice.layer and the layers' begin/end. Slices whose type is the string id
 * `skip_type` (0 = none) join no layer: the cdm reader passes its "unknown" records (the
 * init handshake and runtime copies outside the command stream, which reuse the stream's
 * Cmd Ids). Call after the slices are final. TP_OK or TP_ENOMEM. */
int sg_layers_apply(struct tp_profile *p, const struct sg_layers *L, const char *json_path,
                    const int *tiu_track, const int *gdma_track, unsigned ncores, int tensors,
                    uint32_t skip_type);
/* Layers [first, num_layers) with an empty name and id = a final.mlir line get the loc name
 * of that line, and a group from its Group/Yield ranges if they have none. */
void sg_layers_name_from_mlir(struct tp_profile *p, const struct sg_layers *L, size_t first);
void sg_layers_free(struct sg_layers *L);

/* ---------------------------------------------------------------------------------------- */
/* Timeline steps (§9.2), pure functions so each rule is tested on its own.                  */
/* ---------------------------------------------------------------------------------------- */

/* GDMA trimming by inst_id==0 positions: n records, nz zeros at positions z_first, z_second,
 * z_last. Sets the kept range [*lo, *hi). */
void bmp_trim_range(size_t n, size_t nz, size_t z_first, size_t z_second, size_t z_last, size_t *lo,
                    size_t *hi);
/* inst_id unwrapping: `width` id bits; a drop from above 2^width-536 to below 1000 adds
 * 2^width (for 16 bits: the reference's "> 65000 then < 1000" rule). */
struct bmp_unwrap {
	uint32_t last;
	uint64_t delta;
	unsigned width;
	uint64_t wraps;
};
static inline uint64_t bmp_unwrap_next(struct bmp_unwrap *u, uint32_t id)
{
	uint32_t top = (uint32_t)((1u << u->width) - 536u);
	if (u->last > top && id < 1000) {
		u->delta += (uint64_t)1 << u->width;
		u->wraps++;
	}
	u->last = id;
	return u->delta + id;
}
/* int(ns * MHz / 1000) with Python's truncation toward zero. */
static inline int64_t bmp_ns_to_cycles(int64_t ns, double mhz)
{
	return (int64_t)((double)ns * mhz / 1000.0);
}

/* ---------------------------------------------------------------------------------------- */
/* cdm_profile_data (specs/sophgo-cdm.md): global.profile key=value header, the TLV block    */
/* files cdmlib*.profile / cdma*_N.profile (cdm_file.c) and the BM1690 descriptor-header    */
/* decoder (cdm_hdr.c). The reader (cdm_reader.c) turns them into the model.                */
/* ---------------------------------------------------------------------------------------- */

/* Engines of a cdm dump, in the model's track-kind order. */
enum cdm_eng { CDM_TIU = 0, CDM_GDMA = 1, CDM_SDMA = 2, CDM_CDMA = 3, CDM_NENG = 4 };

enum cdm_block_type {
	CDM_BLK_MONITOR_BD = 3,
	CDM_BLK_MONITOR_GDMA = 4,
	CDM_BLK_DYN_DATA = 5,
	CDM_BLK_DYN_EXTRA = 6,
	CDM_BLK_MONITOR_SDMA = 11,
	CDM_BLK_MONITOR_CDMA = 12,
	CDM_BLK_DES_BDC = 13,
	CDM_BLK_DES_GDMA = 14,
	CDM_BLK_DES_SDMA = 15,
	CDM_BLK_DES_CDMA = 16,
	CDM_BLK_DES_KV = 17,
};

#define CDM_TIU_REC_SIZE 16
#define CDM_DMA_REC_SIZE 64
#define CDM_CDMA_REC_SIZE 128
#define CDM_DYN_REC_SIZE 8
#define CDM_MAX_CORES 64
#define CDM_MAX_PORTS 16

/* A command's identity, from a descriptor header (BLOCK_DES_*, DYN_EXTRA) or a condensed
 * DYN_DATA record. */
struct cdm_cmd {
	uint32_t id;      /* section key: 1..N along a descriptor stream; DYN_DATA inst_id */
	uint32_t dep;     /* cmd_id_dep (descriptors only), 0 none */
	uint8_t engine;   /* enum cdm_eng */
	uint8_t kind;     /* enum tp_cmd_kind */
	uint8_t dir;      /* enum tp_dir */
	uint8_t dtype;    /* enum tp_dtype */
	uint8_t op, sub;  /* TIU tsk_typ / tsk_eu_typ; DMA cmd_type / special function */
	uint8_t is_short; /* short descriptor form (names "sCONV") */
	uint8_t known;    /* 1 = op/sub valid */
	uint8_t port;     /* CDMA port (DYN_DATA) */
	/* Set when the table decoder decoded a BLOCK_DES_* descriptor: its class and its bytes
	 * inside the caller's file buffer (valid while that buffer is), for field access and the
	 * cost model. NULL otherwise (DYN_DATA records, DYN_EXTRA entries, header decoder). */
	const struct sg_dclass *cls;
	const uint8_t *raw;
};
struct cdm_cmds {
	struct cdm_cmd *v; /* owned (tp_free) */
	size_t n, cap;
};

/* The descriptor header decoder (cdm_hdr.c): the one function to switch to desc.c. Decodes
 * the descriptor at p (left bytes available) of engine `engine` (enum cdm_eng) into *c and
 * returns its length in bytes, or 0 if the header is not a class the table knows or the
 * descriptor does not fit. Thread-safe. */
size_t cdm_desc_decode(int engine, const uint8_t *p, size_t left, struct cdm_cmd *c);
/* The same through the table decoder `dec` (regdef_bm1690.c; TIU, GDMA/SDMA = the GDMA
 * encoding, CDMA): length from the matched class, op/sub/short/dep/dtype/direction from its
 * fields (directions by the address tags h13 >> 8: 0..29 DDR, 30 L2M, 31 LMEM; costmodel §5
 * item 2), and c->cls/c->raw set (raw = p). 0 when no class matches or it does not fit. */
size_t cdm_desc_decode_dec(const struct sg_decoder *dec, int engine, const uint8_t *p, size_t left,
                           struct cdm_cmd *c);
/* 1 if c is the engine's sys class (TIU tsk_typ 15, DMA cmd_type 6, CDMA cmd_type 7). */
int cdm_desc_is_sys(int engine, const struct cdm_cmd *c);
/* enum tp_cmd_kind of (op, sub) on an engine; the model's dtype of a DATATYPE code. */
uint8_t cdm_kind(int engine, unsigned op, unsigned sub);
uint8_t cdm_dtype(unsigned code);
/* Function Type and Function Name of a command ("sCONV"/"conv.normal", "DMA_tensor"/
 * "tensorLd"; "unknown" when !known). Names of unlisted codes are formatted into buf (bufsz
 * >= 64), so the results are valid until buf is reused. */
void cdm_cmd_names(const struct cdm_cmd *c, const char **type, const char **name, char *buf,
                   size_t bufsz);

/* global.profile of a cdm dump (§3). */
struct cdm_global {
	int bmodel; /* a line holding "bmodel": the model-runtime path (§7.2) */
	int have_arch;
	long long arch_raw;
	unsigned long arch_line;
	int have_freq;
	long long tpu_freq;
	int have_max;
	uint64_t max_record_num;
	int have_tail;
	long long tail_offset_ns;
	/* core{c}_{tiu,gdma,sdma}_record and cdma_port{p}_record: value + 1, 0 = absent */
	uint64_t rec[CDM_MAX_CORES][3];
	uint64_t cdma_rec[CDM_MAX_PORTS];
	unsigned long lines, unknown_keys;
};
/* Parses text[0..len) (tolerant of spaces around '=', CRLF, blank lines, unknown keys and a
 * "[bmprofile] " prefix). g is filled from zero. Errors (TP_EFORMAT, `path:LINE: message`):
 * a known key with a non-integer value, a *_record value of 1 or >= max_record_num, no arch
 * line. Thread-safe. */
int cdm_global_parse(const char *text, size_t len, const char *path, struct cdm_global *g,
                     struct tp_diag *d);

/* Where one PMU block's payload sits (whole records only). */
struct cdm_span {
	uint8_t engine; /* enum cdm_eng */
	uint64_t off;   /* absolute file offset of the first record */
	size_t count;   /* whole records */
};

/* What the block walk of one cdmlib / cdma file found. */
struct cdm_walk {
	struct cdm_span *pmu; /* PMU blocks in file order (owned) */
	size_t npmu, cap_pmu;
	struct cdm_cmds des[CDM_NENG]; /* BLOCK_DES_* streams decoded, ids 1..N per engine */
	struct cdm_cmds dyn[CDM_NENG]; /* DYN_DATA NODE_SET commands (init record skipped) */
	int have_des, have_dyn, have_extra;
	int dyn_v2; /* DYN_DATA matched layout v2 only: refused, not used */
	uint64_t blocks_read, blocks_skipped, des_kv_blocks;
	uint64_t partial_bytes;          /* bytes of trailing partial records left out */
	uint64_t dyn_records, dyn_other; /* DYN_DATA records, non-command records among them */
	uint64_t extra_entries, extra_used;
	uint64_t des_stop_off[CDM_NENG]; /* !=0: decoding stopped at this file offset */
	uint64_t des_trailing[CDM_NENG]; /* non-zero bytes after a stream's end command */
};
/* Walks the block stream data[0..len) of file `path` (for messages) for chip `chip`: checks
 * every block header before the length it declares (TP_ETRUNC `path@0xOFF: ...` when a block
 * runs past the end), records PMU blocks, decodes BLOCK_DES_* streams, DYN_DATA (layout v1;
 * v2 is detected and refused) and DYN_EXTRA (joined to the DYN_DATA commands). Unknown block
 * types are skipped and counted. w is filled from zero; free with cdm_walk_free. */
int cdm_walk(const uint8_t *data, size_t len, const char *path, const struct sg_chip *chip,
             struct cdm_walk *w, struct tp_diag *d);
/* cdm_walk decoding the BLOCK_DES_* streams with the table decoder `dec` (NULL = the header
 * decoder): their commands then carry cls/raw pointing into data[]. */
int cdm_walk_dec(const uint8_t *data, size_t len, const char *path, const struct sg_chip *chip,
                 const struct sg_decoder *dec, struct cdm_walk *w, struct tp_diag *d);
void cdm_walk_free(struct cdm_walk *w);

/* One decoded PMU record. */
struct cdm_pmu {
	uint32_t start, end, id;
	uint32_t bytes;        /* GDMA/SDMA gif_mem_w_cntr + axi_d0_w_cntr; CDMA m0_data_aw_cntr */
	uint32_t stall;        /* GDMA/SDMA gif_wr_rd_stall_cntr */
	uint32_t gxact, lxact; /* GDMA/SDMA axi_d0_wr+rd valid, gif_wr+rd valid (costmodel §5
	                          items 7-8); 0 on TIU/CDMA */
	uint8_t thread;
};
/* Decodes record `i` of span s inside data (the caller's file buffer). */
void cdm_pmu_decode(const uint8_t *data, const struct cdm_span *s, size_t i, struct cdm_pmu *r);
/* §8.2 step 9 (cdm_reader.c): drops the profiler-inserted sys commands (kind other than
 * TP_CMD_NORMAL) at the head and tail of track t; the per-slice costs follow their slices.
 * Returns how many it dropped. Touches only t. */
size_t cdm_omit_sys(struct tp_track *t);

/* ---------------------------------------------------------------------------------------- */
/* What a reader's per-core worker keeps aside (sg_aside.c).                                  */
/* ---------------------------------------------------------------------------------------- */

/* The profile notes and read statistics of one core read on a worker thread, kept in order
 * until the calling thread adds them to the profile in core order (sg_aside_apply), so the
 * profile is the same for every thread count. Zero-initialised = empty. */
struct sg_aside {
	struct tp_read_stats stats;
	char **notes; /* owned, in the order they were made */
	size_t nnotes, cap;
	int oom; /* a note was lost to out of memory */
};
/* Formats a note (as tp_profile_note: at most 1023 bytes) into `a`, or straight into p when
 * a is NULL. */
void sg_vnote(struct tp_profile *p, struct sg_aside *a, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* Adds a's notes (in order) and statistics to p and empties a. TP_OK, or TP_ENOMEM when a
 * note had been lost. Calling thread only. */
int sg_aside_apply(struct tp_profile *p, struct sg_aside *a);
void sg_aside_free(struct sg_aside *a);

#endif /* TP_SOPHGO_INT_H */
