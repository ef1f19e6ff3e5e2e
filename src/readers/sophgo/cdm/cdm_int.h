/*
 * cdm_int.h — the cdm_profile_data reader's internal pieces, shared by its own files, its unit
 * test and its fuzz target: the global.profile key=value parser and the TLV block walk of
 * cdmlib*.profile / cdma*_N.profile (cdm_file.c), the BM1690 descriptor-header decoder
 * (cdm_hdr.c) and the reader's step that cdm_test checks on its own (cdm_reader.c).
 *
 * Nothing here owns global state. Structures that allocate say who frees them.
 */
#ifndef TP_CDM_INT_H
#define TP_CDM_INT_H

#include "readers/sophgo/isa/sg_isa.h"
#include "readers/sophgo/sg_int.h"

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

#endif /* TP_CDM_INT_H */
