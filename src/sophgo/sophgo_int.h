/*
 * sophgo_int.h — the Sophgo module's internal pieces, shared by its own files, its unit
 * tests and its fuzz targets: the iter<N>.profile block walk and PMU/MCU record decoders
 * (bmp_iter.c), the command-descriptor decoders for cmd_*.dat (bmp_cmd.c), the global.profile parser
 * (bmp_global.c), the net_stat.sim parser (bmp_netstat.c) and the pure timeline steps of §9.2
 * (bmp_timeline.c); for cdm_profile_data the global.profile parser and block walk (cdm_file.c)
 * and the BM1690 descriptor-header decoder (cdm_hdr.c). Every entry point works on a memory
 * buffer, so tests and fuzzers need no files.
 *
 * Nothing here owns global state. Structures that allocate say who frees them.
 */
#ifndef TP_SOPHGO_INT_H
#define TP_SOPHGO_INT_H

#include "sophgo/sophgo.h"

#define BMP_MAX_CORES 64

/* ---------------------------------------------------------------------------------------- */
/* The chip table (chip.c): one row per chip, shared by every Sophgo reader.                 */
/* ---------------------------------------------------------------------------------------- */

struct sg_chip {
	struct tp_chip c;         /* what analysis and writers may see (tp_profile.chip = &c) */
	int bmp_arch;             /* global.profile "arch=" value of bmprofile_data, -1 none */
	long cdm_arch[2];         /* cdm_profile_data "arch=" values (old, new writers), 0 none */
	unsigned tiu_pmu_bytes;   /* TIU PMU record size */
	unsigned gdma_pmu_bytes;  /* GDMA (and SDMA) PMU record size */
	unsigned cdma_pmu_bytes;  /* CDMA PMU record size, 0 = no CDMA */
	unsigned dma_cmd_type_bits; /* DMA descriptor cmd_type width: 4 or 5 */
	unsigned tiu_sys_bits;    /* TIU SYS descriptor length in bits (CV184X: 64) */
	unsigned cdma_ports;      /* CDMA ports per device */
	uint32_t id_wrap;         /* command-id wrap value (SG2260E 0x3FFFF), 0 none */
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
	const char *name;  /* regdef name without the "des_" prefix: "cmd_short", "res0_n" */
	uint16_t width;    /* bits, 1..64 */
};

struct sg_regclass {
	const char *op_name;          /* regdef OP_NAME: "sCONV", "CONV", "DMA_tensor", "sDMA_sys" */
	uint16_t length;              /* descriptor length in bits (regdef `length`) */
	const struct sg_field *fields;
	uint16_t nfields;
};

/* Names of the sub-operations of one class: TIU tsk_eu_typ / DMA cmd_special_function. */
struct sg_subname {
	uint8_t code;
	const char *name;             /* Function Name: "conv.normal", "arith.add", "dma.tensor" */
};

/* One entry of the op index: the header key that selects a class. */
struct sg_opclass {
	const char *op_name;          /* the sg_regclass it selects */
	int8_t is_short;              /* cmd_short value, -1 = either (1688 SYS_TR_ACC) */
	uint8_t op;                   /* TIU tsk_typ / DMA cmd_type */
	const struct sg_subname *subs;
	uint16_t nsubs;
};

/* A chip's instruction-set tables. */
struct sg_isa {
	enum tp_arch arch;
	const char *source;           /* "tpu-mlir python/debugger/target_1688 @<commit>" */
	const struct sg_regclass *tiu; uint16_t ntiu;
	const struct sg_opclass *tiu_ops; uint16_t ntiu_ops;
	const struct sg_regclass *dma; uint16_t ndma;   /* GDMA; SDMA uses the same encoding */
	const struct sg_opclass *dma_ops; uint16_t ndma_ops;
	const struct sg_regclass *cdma; uint16_t ncdma; /* BM1690 only */
	const struct sg_opclass *cdma_ops; uint16_t ncdma_ops;
};

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

/* GDMA PMU record size for an arch: 256 (BM1688), 192 (BM1684, BM1684X), 0 otherwise. */
size_t bmp_gdma_rec_size(enum tp_arch arch);

/* Walks the block stream data[0..len) of the file named `path` (for messages). Validates every
 * header before the size it declares, payload sizes against their record sizes and counts
 * against the bytes left; unknown block types are skipped and counted. Returns TP_OK or an
 * error (TP_ETRUNC, TP_EFORMAT) with `path@0xOFFSET: message` in d. */
int bmp_walk(const uint8_t *data, size_t len, enum tp_arch arch, const char *path,
             struct bmp_iter *it, struct tp_diag *d);

/* One TIU PMU record (§4.5, 32 bytes; all three arches). */
struct bmp_tiu_rec {
	uint32_t start, end;
	uint32_t inst_id; /* 16 bits */
};
static inline void bmp_tiu_decode(const uint8_t *p, struct bmp_tiu_rec *r)
{
	r->start = tp_le32(p);
	r->end = tp_le32(p + 4);
	r->inst_id = (uint32_t)p[8] | (uint32_t)p[9] << 8;
}

/* One GDMA PMU record (§4.6). */
struct bmp_gdma_rec {
	uint32_t start, end;
	uint32_t inst_id;   /* 20 bits (BM1688, BM1684X) or 16 bits (BM1684) */
	uint64_t gmem, lmem; /* BM1688: DDR-side (d0/d1 aw+ar) and LMEM-side (fmem aw+ar) bytes */
	uint64_t bytes;     /* DMA data size: BM1688 max(gmem, lmem) (§10.1); legacy
	                       d0_wr + d1_wr + gif_wr (§10.3), 0 if a counter is 0xFFFFFFFF */
	uint32_t stall;     /* BM1688 fmem_wr_stall + fmem_rd_stall; 0 on legacy arches */
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
	uint8_t engine;      /* BMP_ENG_* */
	uint8_t kind;        /* enum tp_cmd_kind */
	uint8_t dir;         /* enum tp_dir (DMA) */
	uint8_t dtype;       /* enum tp_dtype */
	uint8_t is_short;
	uint8_t op;          /* TIU tsk_typ / DMA cmd_type (BM1684: func) */
	uint8_t sub;         /* TIU tsk_eu_typ / DMA special function */
	uint8_t has_msg;     /* SYS send/wait: msg_id and msg_cnt valid */
	uint16_t key;        /* compact (engine, short, op, sub, dir) for name caching */
	uint32_t dep;        /* cmd_id_dep (the partner engine's id this command waits for) */
	uint32_t self_id;    /* id stored in the descriptor (BM1684/BM1684X), 0 if none */
	uint32_t msg_id, msg_cnt;
	uint64_t src_addr, dst_addr;
	const char *name;    /* function name ("conv.normal", "tensorLd", ...) */
	const char *type;    /* function type ("sCONV", "DMA_tensor", ...) */
	char name_buf[40], type_buf[24]; /* storage for names of unlisted codes */
};

/* Size in bytes of the descriptor at p (left bytes available), or 0 if the header is not one
 * the decoder knows or the descriptor does not fit. */
size_t bmp_cmd_size(enum tp_arch arch, int engine, const uint8_t *p, size_t left);
/* Decodes the descriptor at p (size bytes, as returned by bmp_cmd_size). */
void bmp_cmd_decode(enum tp_arch arch, int engine, const uint8_t *p, size_t size, struct bmp_cmd *c);

/* A command buffer with random access by cmd_id: a first pass counts the descriptors and keeps
 * the offset of every 1024th, so lookups in PMU order are sequential and a jump costs at most
 * 1024 header reads. Memory: 8 bytes per 1024 commands. */
struct bmp_cmdbuf {
	const uint8_t *data;
	size_t len;
	enum tp_arch arch;
	int engine;
	uint32_t count;        /* descriptors decoded */
	size_t *index;         /* offset of command 1 + 1024*i (owned) */
	size_t nindex;
	uint32_t cur_id;       /* cmd_id at cur_off (1-based), 0 = none */
	size_t cur_off;
	int stopped;           /* 1 if decoding stopped at an unknown header */
	size_t stop_off;       /* where */
};
/* Indexes data[0..len). TP_OK or TP_ENOMEM. The data must outlive cb. */
int bmp_cmdbuf_init(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine, const uint8_t *data,
                    size_t len);
/* Same, for data inside a read-only file mapping: pages already indexed are released as the
 * pass goes (they fault back in from the file when looked up). Never use on heap memory. */
int bmp_cmdbuf_init_mapped(struct bmp_cmdbuf *cb, enum tp_arch arch, int engine,
                           const uint8_t *data, size_t len);
/* Decodes command `cmd_id` (1-based). Returns 1, or 0 if out of range. */
int bmp_cmdbuf_get(struct bmp_cmdbuf *cb, uint32_t cmd_id, struct bmp_cmd *out);
void bmp_cmdbuf_free(struct bmp_cmdbuf *cb);

/* ---------------------------------------------------------------------------------------- */
/* global.profile (§3).                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Node lines of one (core, engine) in file order: the layer each belongs to and, for the
 * legacy matching (§8.2), its bd/gdma ids. */
struct bmp_nodes {
	int32_t *layer;
	uint32_t *bd_id, *gdma_id; /* NULL unless keep_ids */
	uint8_t *dir;              /* enum tp_dir from gdma_dir= (GDMA nodes), NULL unless keep_ids */
	size_t n, cap;
};

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
	int keep_ids;      /* input: store node ids (legacy arches) */
	int no_layers;     /* input: do not create layers/tensors (tensor_location.json wins) */
	int no_tensors;    /* input: skip tensor lines (huge dumps) */
	int no_nodes;      /* input: do not store node lines (layers not wanted) */
	int drop_pages;    /* input: the text is a file mapping whose pages may be released
	                      (madvise) once parsed; never set for heap buffers */
	struct bmp_nodes nodes[BMP_MAX_CORES][2]; /* [core][BMP_ENG_*] */
	unsigned long lines;
};

/* Parses global.profile text[0..len) into `p` (net_name, meta, layers, tensors, mems) and `g`
 * (arch, clocks, core list, node lines). `g` must be zeroed by the caller except keep_ids and
 * no_layers. Errors name `path:LINE`. Free g with bmp_global_free. */
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
	uint64_t dr_bytes[4]; /* GDMA SUMMARY S2L, L2S, S2S, L2L */
	char runtime_ms[32];  /* as printed */
};
int bmp_netstat_parse(const char *text, size_t len, const char *path, struct bmp_netstat *ns,
                      struct tp_diag *d);

/* ---------------------------------------------------------------------------------------- */
/* Timeline steps (§9.2), pure functions so each rule is tested on its own.                  */
/* ---------------------------------------------------------------------------------------- */

/* GDMA trimming by inst_id==0 positions: n records, nz zeros at positions z_first, z_second,
 * z_last. Sets the kept range [*lo, *hi). */
void bmp_trim_range(size_t n, size_t nz, size_t z_first, size_t z_second, size_t z_last,
                    size_t *lo, size_t *hi);
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
	int bmodel;              /* a line holding "bmodel": the model-runtime path (§7.2) */
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
	struct cdm_span *pmu;          /* PMU blocks in file order (owned) */
	size_t npmu, cap_pmu;
	struct cdm_cmds des[CDM_NENG]; /* BLOCK_DES_* streams decoded, ids 1..N per engine */
	struct cdm_cmds dyn[CDM_NENG]; /* DYN_DATA NODE_SET commands (init record skipped) */
	int have_des, have_dyn, have_extra;
	int dyn_v2;                    /* DYN_DATA matched layout v2 only: refused, not used */
	uint64_t blocks_read, blocks_skipped, des_kv_blocks;
	uint64_t partial_bytes;        /* bytes of trailing partial records left out */
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
void cdm_walk_free(struct cdm_walk *w);

/* One decoded PMU record. */
struct cdm_pmu {
	uint32_t start, end, id;
	uint32_t bytes;  /* GDMA/SDMA gif_mem_w_cntr + axi_d0_w_cntr; CDMA m0_data_aw_cntr */
	uint32_t stall;  /* GDMA/SDMA gif_wr_rd_stall_cntr */
	uint8_t thread;
};
/* Decodes record `i` of span s inside data (the caller's file buffer). */
void cdm_pmu_decode(const uint8_t *data, const struct cdm_span *s, size_t i, struct cdm_pmu *r);

#endif /* TP_SOPHGO_INT_H */
