/*
 * cdm_int.h — the cdm_profile_data reader's internal pieces, shared by its own files, its unit
 * test and its fuzz target: the global.profile key=value parser and the TLV block walk of
 * cdmlib*.profile / cdma*_N.profile (cdm_file.c), the BM1690 descriptor-header decoder
 * (cdm_hdr.c), the sys-command omission cdm_test checks on its own (cdm_match.c), and the
 * reader's state and steps shared by its files.
 *
 * Nothing here owns global state. Structures that allocate say who frees them.
 */
#ifndef TP_CDM_INT_H
#define TP_CDM_INT_H

#include "model/parts.h"
#include "readers/sophgo/isa/sg_isa.h"
#include "readers/sophgo/sg_int.h"

/* ---------------------------------------------------------------------------------------- */
/* cdm_profile_data (specs/sophgo-cdm.md): global.profile key=value header, the TLV block    */
/* files cdmlib*.profile / cdma*_N.profile (cdm_file.c) and the BM1690 descriptor-header    */
/* decoder (cdm_hdr.c). The reader (cdm_reader.c) turns them into the model.                */
/* ---------------------------------------------------------------------------------------- */

/* Engines of a cdm dump, in the model's track-kind order. */
enum cdm_eng { CDM_TIU = 0, CDM_GDMA = 1, CDM_SDMA = 2, CDM_CDMA = 3, CDM_NENG = 4 };

#define CDM_TIU_REC_SIZE 16
#define CDM_DMA_REC_SIZE 64
#define CDM_CDMA_REC_SIZE 128
#define CDM_DYN_REC_SIZE 8
/* The size of engine e's PMU records (MONITOR_SDMA uses the GDMA layout). */
static inline size_t cdm_pmu_rec_size(int e)
{
	return e == CDM_TIU    ? CDM_TIU_REC_SIZE
	       : e == CDM_CDMA ? CDM_CDMA_REC_SIZE
	                       : CDM_DMA_REC_SIZE;
}
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
 * decoder: their commands then carry cls/raw pointing into data[]), with the PMU blocks' ends
 * found and the DYN_DATA commands decoded in parts of at most `part` records (0:
 * CDM_WALK_PART) on up to `threads` threads: the same walk, the same first error. */
int cdm_walk_jobs(const uint8_t *data, size_t len, const char *path, const struct sg_chip *chip,
                  const struct sg_decoder *dec, unsigned threads, size_t part, struct cdm_walk *w,
                  struct tp_diag *d);
/* Records per part: a part's bookkeeping is noise against its records, and a core file of
 * a million records (generated dumps, large models) gives each of sixteen threads a part. The
 * bmprofile reader's parts (TP_BMPROFILE_PART) are the same size for the same reasons. */
#define CDM_WALK_PART ((size_t)65536)
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
/* Decodes the PMU record of engine `engine` at p. Inline: the readers' per-record loops. */
static inline void cdm_pmu_at(const uint8_t *p, int engine, struct cdm_pmu *r)
{
	r->start = tp_le32(p);
	r->end = tp_le32(p + 4);
	r->bytes = r->stall = r->gxact = r->lxact = 0;
	if (engine == CDM_CDMA) {
		uint32_t w = tp_le32(p + 8);
		r->id = w & 0xFFFFFFu;
		r->thread = (uint8_t)((w >> 24) & 1u);
		r->bytes = tp_le32(p + 16);
		return;
	}
	r->id = tp_le32(p + 8);
	r->thread = (uint8_t)(p[12] & 1u);
	if (engine != CDM_TIU) {
		r->stall = tp_le32(p + 16);
		/* Bytes written on whichever side is the destination (§4.3); saturate, never wrap.
		 */
		uint64_t b = (uint64_t)tp_le32(p + 20) + tp_le32(p + 40);
		r->bytes = b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
		r->gxact = tp_le32(p + 48) + tp_le32(p + 52);
		r->lxact = tp_le32(p + 56) + tp_le32(p + 60);
	}
}
/* Decodes record `i` of span s inside data (the caller's file buffer). */
static inline void cdm_pmu_decode(const uint8_t *data, const struct cdm_span *s, size_t i,
                                  struct cdm_pmu *r)
{
	cdm_pmu_at(data + s->off + i * cdm_pmu_rec_size(s->engine), s->engine, r);
}
/* §8.2 step 9 (cdm_match.c): drops the profiler-inserted sys commands (kind other than
 * TP_CMD_NORMAL) at the head and tail of track t; the per-slice costs follow their slices.
 * Returns how many it dropped. Touches only t. */
size_t cdm_omit_sys(struct tp_track *t);

/* ---------------------------------------------------------------------------------------- */
/* The reader (cdm_reader.c: directory, notes, layers, read_all; cdm_cores.c, cdm_norm.c,    */
/* cdm_match.c, cdm_vendor.c). One struct cdm_rd per tp_cdm_read call.                       */
/* ---------------------------------------------------------------------------------------- */

#define CDM_NAME_CACHE_BITS 18

struct cdm_core_info {
	int track[3]; /* TIU, GDMA, SDMA track or -1 */
	int have_anchor;
	int64_t anchor;      /* raw end of TIU PMU record #1 (§8.2 step 4) */
	int64_t init_end[3]; /* raw end of each engine's record #1, for the vendor note */
	int have_init[3];
	uint64_t unmatched[3], unmatched_bytes[3];
	/* The vendor's timeline of this core (vendor_timeline), raw cycles: */
	int have_v;       /* 1 when the core has an anchor and records */
	int64_t v_sh[3];  /* shift of each engine onto the TIU anchor */
	int64_t v_span;   /* first start to the end of the last record listed */
	int64_t v_latest; /* first start to the latest end (the workbook's) */
	int64_t hw_span;  /* the same core as recorded */
	uint64_t dep_n, dep_bad_rec, dep_bad_shift; /* dep_check evidence */
};

struct cdm_port_info {
	int track;            /* -1 none */
	int owner;            /* core index */
	struct cdm_cmds cmds; /* CDMA commands of this port from the owner's DYN_DATA */
	uint64_t unmatched;
};

struct cdm_rd {
	const char *dir;
	struct tp_profile *p;
	/* Where argument sets and their strings are interned: p, or while a core with argument
	 * sets is read on a worker its scratch profile (struct cdm_core_read.ap). */
	struct tp_profile *ap;
	struct tp_diag *d;
	const struct sg_chip *chip;
	double tiu_mhz, dma_mhz;
	int device;
	struct cdm_global g;
	char **cores; /* cdmlib file names in core order (owned) */
	size_t ncores;
	char **cdma; /* cdma file names (owned) */
	unsigned *cdma_port;
	size_t ncdma;
	struct cdm_core_info *ci;
	struct cdm_port_info port[CDM_MAX_PORTS];
	int cdma_owner;         /* core whose DYN_DATA holds CDMA commands, -1 none */
	uint32_t (*cache)[2];   /* (name, type) string ids by command key */
	int mode;               /* 0 PMU only, 1 DYN_DATA, 2 DYN_EXTRA, 3 bmodel descriptors */
	struct sg_decoder *dec; /* owned: BM1690 register tables (regdef_bm1690.c) */
	int detail_opt;         /* enum tp_bmprofile_detail from the options */
	int detail;             /* argument sets for the commands of the core being read */
	/* Interned argument keys of each class's fields ([table engine][class][field], 0 = a
	 * name the class repeats), built the first time a class is seen. Owned. */
	uint32_t **keys[SG_ENG_COUNT];
	/* pmu_of's last hit: walk, engine, PMU span and the engine's records before it. */
	const struct cdm_walk *pmu_w;
	int pmu_eng;
	size_t pmu_k, pmu_base;
	uint64_t id_wraps, ts_wraps, reordered, sys_omitted, des_unknown;
	unsigned jobs; /* threads for the core files (read_cores); 1 = the caller only */
	size_t part;   /* records per part of a core file's walk and of an engine's read (opts) */
	struct cdm_core_read *job; /* the core being read: notes and statistics go there (rnote,
	                            * CDM_RSTATS) until read_cores applies them in core order */
};

/* One core file in read_cores: its file and walk, the core's own settings, and what reading
 * it produces that the calling thread applies afterwards in core order (notes, statistics,
 * wrap counters, the first error, the names it needs), so the profile is the same for every
 * thread count. */
struct cdm_core_read {
	size_t core;
	struct tp_file f;
	char *path;
	struct cdm_walk w;
	int loaded, walked;
	size_t have[CDM_NENG]; /* PMU records per engine */
	int cmode;  /* this core's command source: 3 descriptors, 2 DYN_EXTRA, 1 DYN_DATA, 0 none */
	int mode;   /* r->mode once this core is read (the highest source so far) */
	int detail; /* argument sets for this core's commands (built in the scratch profile ap) */
	int keyed;  /* no detail: names are left as name-cache keys in the labels, each key's
	             * first command kept in first[] (set_names), and core_names interns them */
	int rc;
	struct tp_diag d;
	struct sg_aside aside; /* its notes and statistics (oom: also first[] could not grow) */
	uint64_t id_wraps, ts_wraps, reordered;
	uint8_t *seen;         /* keyed: bitmap of the name-cache keys met (owned) */
	struct cdm_cmd *first; /* keyed: each key's first command, in order of first use (owned) */
	size_t nfirst, cap_first;
	/* With detail, read on a worker: its argument sets and the strings they and its names
	 * use go to the scratch profile ap (not owned), its names through cache (ap's ids, by
	 * key; keys met in order in used[]), its labels hold the keys as keyed ones do; the
	 * calling thread maps ap's strings (map), fills the name cache and reserves the sets'
	 * room (set0, arg0) in core order, and core_relabel moves them in. */
	struct tp_profile *ap;
	uint32_t (*cache)[2]; /* owned */
	uint32_t *used;       /* owned */
	size_t nused, cap_used;
	uint32_t **keys[SG_ENG_COUNT]; /* owned: the worker's argument keys (ap's ids) */
	uint32_t *map;                 /* owned */
	uint32_t set0;
	size_t arg0;
};

/* One engine of a keyed core file read in parts on several threads (cdm_eparts.c): TIU or
 * GDMA, when core_engine would match its commands one to one or have none to match (SDMA
 * reorders first; the section matching needs the whole track). The calls, in order:
 * cdm_eparts_plan (calling thread), cdm_epart_count for each part (any thread),
 * cdm_eparts_carry, cdm_epart_fill for each part (any thread, each on its copy of the
 * reader), cdm_eparts_end (calling thread), cdm_epart_commit for each part (any thread),
 * cdm_eparts_free. The track is then what core_engine would have left. */
struct cdm_epart {
	size_t a, b;                 /* the engine's records [a, b) */
	size_t k0, i0;               /* where the record before a (a, for a = 0) is: span, index */
	uint64_t id_wraps, ts_wraps; /* unwraps between the part's records and the one before */
	uint32_t id_delta;           /* what the parts before add to ids, */
	int64_t ts_off;              /* and to times */
	struct cdm_core_read x;      /* its names (set_names: seen, first), notes, statistics */
	uint64_t unmatched, unmatched_bytes;
	int rc;
};
struct cdm_eparts {
	int e, t;
	size_t n, np; /* records; parts (0: the engine is read whole, by core_engine) */
	struct cdm_epart *v;
	struct tp_part *pt;         /* part q's slices: its records less the two init records */
	const struct cdm_cmd *cmds; /* the commands of records 2, 3, ...; NULL: none */
	const uint8_t *data;
	const struct cdm_walk *w;
	int64_t end1; /* record 1's end, unwrapped: the init handshake's */
	int merged;   /* cdm_eparts_end merged the parts' tables: they may be committed */
};
/* Plans engine e of core cr (core_setup made its track) in parts of about `part` records
 * when it is to be read so, reserving its slices; ep->np 0 when not. TP_OK / TP_ENOMEM. */
int cdm_eparts_plan(struct cdm_rd *r, struct cdm_core_read *cr, int e, size_t part,
                    struct cdm_eparts *ep);
/* Part q's unwraps, counted. */
void cdm_epart_count(struct cdm_eparts *ep, size_t q);
/* What each part's records add to ids and times: the wraps of the parts before it. */
void cdm_eparts_carry(struct cdm_eparts *ep);
/* Fills part q's slices and gives them their commands, on r (a copy of the reader with the
 * core's mode; r->job is set to the part's record). TP_OK / TP_ENOMEM. */
int cdm_epart_fill(struct cdm_rd *r, struct cdm_eparts *ep, size_t q);
/* The parts' tables into the track; into x (the engine's record, engine_open's) the first
 * commands of the names, the wrap counters, statistics and notes; the core's init handshake
 * and unmatched counters. TP_OK / TP_ENOMEM (in r->d). */
int cdm_eparts_end(struct cdm_rd *r, const struct cdm_core_read *cr, struct cdm_eparts *ep,
                   struct cdm_core_read *x);
void cdm_epart_commit(struct cdm_eparts *ep, size_t q);
void cdm_eparts_free(struct cdm_eparts *ep);
/* Sets slice s's label fields from its PMU record m, as fill_track does. */
void cdm_fill_label(struct tp_part *pt, struct tp_slice *s, const struct cdm_pmu *m);
/* The statistics a reader adds to: the core's while it is read, else the profile's. */
#define CDM_RSTATS(r) ((r)->job ? &(r)->job->aside.stats : &(r)->p->stats)

/* "dir: out of memory" in r->d; returns TP_ENOMEM. */
int cdm_nomem(struct cdm_rd *r);
/* tp_profile_note, or kept in the core being read. */
void cdm_note(struct cdm_rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Maps dir/name into f (counted in the read statistics) and its path into *path (caller
 * frees). */
int cdm_load(struct cdm_rd *r, const char *name, struct tp_file *f, char **path);
/* The name-cache key of command c (NULL = none): every field its names depend on. */
uint32_t cdm_name_key(const struct cdm_cmd *c);
/* The interned (name, type) of key `key`, those of c on the key's first use. Interns strings:
 * calling thread only. */
const uint32_t *cdm_cached_names(struct cdm_rd *r, uint32_t key, const struct cdm_cmd *c);
/* Frees argument-key caches (struct cdm_rd.keys) and empties them. */
void cdm_keys_free(const struct cdm_rd *r, uint32_t **keys[SG_ENG_COUNT]);
/* The slots of an engine part's label memos (struct sg_label_memo): a part is at most
 * TP_BMPROFILE_PART records. */
#define CDM_MEMO_BITS 10
/* Gives slice `index` of part pt's track its command c (NULL = none): names, kind, direction,
 * data type, dependency; with a table-decoded descriptor the TIU cost and, with detail, the
 * argument set. `data`/`w` are the core file and its walk (NULL for CDMA ports), for the
 * PMU counters. memo: NULL, or a part's memo of its keyed command labels (CDM_MEMO_BITS). */
void cdm_apply_cmd(struct cdm_rd *r, struct tp_part *pt, size_t index, const struct cdm_cmd *c,
                   const uint8_t *data, const struct cdm_walk *w, struct sg_label_memo *memo);
/* §8.3: gives every slice of track t its command from cmds (or the "unknown" fallback). */
int cdm_match(struct cdm_rd *r, int t, const struct cdm_cmds *cmds, uint64_t *unmatched,
              uint64_t *unmatched_bytes, const uint8_t *data, const struct cdm_walk *w);
/* Step 1: ids that fall from above 65000 to below 1000 wrapped their 16-bit counter. */
void cdm_unwrap_ids(struct cdm_rd *r, struct tp_track *t);
static inline int cdm_id_wrapped(uint32_t last, uint32_t id)
{
	return last > 65000 && id < 1000;
}
#define CDM_WRAP ((int64_t)1 << 32)
/* Step 2's rule for TIU/GDMA/SDMA: a start more than 2^31 cycles before the previous end
 * (unwrapped: a record whose end is below its start ended 2^32 cycles later). */
static inline int cdm_ts_wrapped(int64_t prev_end, int64_t start)
{
	return prev_end - start > CDM_WRAP / 2;
}
/* The same rule over a command list (DYN_DATA ids are the firmware's 16-bit ids). */
void cdm_unwrap_cmd_ids(struct cdm_cmds *l);
/* Step 2. TIU/GDMA/SDMA: a start more than 2^31 cycles before the previous end is a counter
 * wrap; CDMA: only when start and end both went back. */
void cdm_unwrap_times(struct cdm_rd *r, struct tp_track *t, int cdma);
/* Step 3: the two threads of SDMA/CDMA retire out of order; put a record back before its
 * predecessor when its id is smaller and the predecessor ran on thread 1, or when the
 * predecessor's id is exactly one larger. */
void cdm_reorder(struct cdm_rd *r, struct tp_track *t);
/* Drops the first n slices of t (the init records, step 4), counted as dropped. */
void cdm_drop_front(struct cdm_rd *r, struct tp_track *t, size_t n);
/* What engine e of core `core` (its track made) read n PMU records of (r->job: that core's or
 * engine's record): the note when global.profile counts others, and the init handshake (step
 * 4) from record 1's unwrapped end (end1 NULL: fewer than two records). */
void cdm_engine_head(struct cdm_rd *r, size_t core, int e, size_t n, const int64_t *end1);
/* The commands engine e of a core file matches its records to (§8.3): with command source
 * cmode 3 the bmodel's descriptor stream, else the DYN_DATA stream from *skip on (its own first
 * two commands are the init sync); NULL: none. */
static inline struct cdm_cmds *cdm_engine_cmds(struct cdm_walk *w, int cmode, int e, size_t *skip)
{
	*skip = 0;
	if (cmode == 3)
		return &w->des[e];
	if (!w->have_dyn || w->dyn_v2)
		return NULL;
	*skip = w->dyn[e].n < 2 ? w->dyn[e].n : 2;
	return &w->dyn[e];
}
/* Reads the core files, up to r->jobs at a time (one thread each; fewer when their estimated
 * memory exceeds sg_wave's bound), each on a worker with its argument sets in a scratch
 * profile; whatever is shared (strings, argument sets, notes, statistics, the track list, CDMA
 * command lists) changes only on the calling thread, in core order, so the profile is the
 * same for every r->jobs (cdm_cores.c says how). */
int cdm_read_cores(struct cdm_rd *r);
/* Reads CDMA port file k onto its port's track on the owning core and matches it to the
 * port's commands. Calling thread. */
int cdm_read_cdma(struct cdm_rd *r, size_t k);
/* Sets profile meta key k to the integer v. TP_OK or TP_ENOMEM (through cdm_nomem). */
int cdm_set_meta_i64(struct cdm_rd *r, const char *k, long long v);
/* The vendor's timeline of core c (tpu-mlir PerfAI / tpu_profile.py, sophgo-cdm.md §8.2 step
 * 4, the April-2025 variant): each DMA stream shifted so that its second init record ends at
 * the TIU anchor. Records its span the two ways the vendor's outputs take it and the
 * dependency evidence for the note; runs on raw cycles before the sys commands are omitted.
 * lo, hi: each track's first start and last end (by track index). */
void cdm_vendor_timeline(struct cdm_rd *r, size_t c, const int64_t *lo, const int64_t *hi);
/* Steps 6-9 plus the notes about them. */
int cdm_align_all(struct cdm_rd *r);
/* The figures tpu_profile.py prints for each core (its summary, not its workbook), computed
 * from its timeline and its direction labels, with one note per figure that differs from
 * tpuprof's own and why. Runs after finalize. */
int cdm_vendor_rows(struct cdm_rd *r);

#endif /* TP_CDM_INT_H */
