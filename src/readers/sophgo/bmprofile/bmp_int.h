/*
 * bmp_int.h — the bmprofile_data reader's internal pieces, shared by its own files, its unit
 * tests and its fuzz targets: the iter<N>.profile block walk and PMU/MCU record decoders
 * (bmp_iter.c), the command-descriptor decoders for cmd_*.dat (bmp_cmd.c), the global.profile
 * parser (bmp_global.c, bmp_gline.c), the net_stat.sim parser (bmp_netstat.c) and the pure timeline
 * steps of §9.2 (bmp_timeline.c). Every parser works on a memory buffer, so tests and fuzzers need
 * no files.
 *
 * Nothing here owns global state. Structures that allocate say who frees them.
 */
#ifndef TP_BMP_INT_H
#define TP_BMP_INT_H

#include "model/parts.h"
#include "readers/sophgo/isa/sg_isa.h"
#include "readers/sophgo/sg_int.h"

#include <stdatomic.h>

#define BMP_MAX_CORES 64

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
	size_t raw_n; /* the hand-written decoders' descriptor size (raw set, have_desc 0) */
	char name_buf[40], type_buf[24]; /* storage for names of unlisted codes */
};

/* Size in bytes of the descriptor at p (left bytes available), or 0 if the header is not one
 * the decoder knows or the descriptor does not fit. */
size_t bmp_cmd_size(enum tp_arch arch, int engine, const uint8_t *p, size_t left);
/* Decodes the descriptor at p (size bytes, as returned by bmp_cmd_size). */
void bmp_cmd_decode(enum tp_arch arch, int engine, const uint8_t *p, size_t size,
                    struct bmp_cmd *c);

/* A place in a command buffer's indexed part: command `id` (1-based; 0 = none) at offset `off`,
 * whose size is `n` when already decoded (else 0). Lookups near it step from there. */
struct bmp_cmdcur {
	uint32_t id;
	size_t off, n;
};

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
	size_t scan_off;       /* offset of command count + 1 while !done */
	int done;              /* the index reached the stream's end, a stop or out of memory */
	int mapped;            /* data is a read-only file mapping: indexed pages may be dropped */
	int oom;               /* the index could not grow */
	struct bmp_cmdcur cur; /* where the last lookup was */
	int stopped;           /* 1 if decoding stopped at an unknown header */
	size_t stop_off;       /* where */
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
/* bmp_cmdbuf_get for a command of the indexed part (cmd_id <= cb->count; 0 otherwise), from
 * and moving the caller's cursor *cur instead of cb's: threads that each have a cursor may look
 * up concurrently once cb is indexed to the end (bmp_cmdbuf_finish). */
int bmp_cmdbuf_at(const struct bmp_cmdbuf *cb, struct bmp_cmdcur *cur, uint32_t cmd_id,
                  struct bmp_cmd *out);
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

/* Grows nd's arrays to hold `need` nodes, nmark marks (bmp_nodes_room's slow path). */
int bmp_nodes_grow(struct bmp_nodes *nd, int keep_ids, size_t need, size_t nmark);
/* Room in nd for `add` more nodes: ld, mark and, with keep_ids, the id arrays (nd->cap). TP_OK
 * or TP_ENOMEM. Inline: push_node calls it once per node line. */
static inline int bmp_nodes_room(struct bmp_nodes *nd, int keep_ids, size_t add)
{
	size_t need = nd->n + add;
	size_t nmark = need ? (need - 1) / BMP_NODE_MARK + 1 : 0;
	if (need <= nd->cap_ld && nmark <= nd->cap_mark && (!keep_ids || need <= nd->cap))
		return TP_OK;
	return bmp_nodes_grow(nd, keep_ids, need, nmark);
}
/* Whether a node on layer cur right after one on layer prev keeps cur - prev in its ld byte. */
static inline int bmp_ld_fits(int32_t prev, int32_t cur)
{
	return cur >= prev && (int64_t)cur - prev < 255;
}
/* Stores node i's layer cur, the node before it being on prev: the delta byte, or 255 and an
 * escape. TP_OK or TP_ENOMEM (nothing stored). */
static inline int bmp_node_ld(struct bmp_nodes *nd, size_t i, int32_t prev, int32_t cur)
{
	if (bmp_ld_fits(prev, cur)) {
		nd->ld[i] = (uint8_t)(cur - prev);
		return TP_OK;
	}
	struct bmp_node_esc *x = tp_grow(nd->esc, sizeof *x, nd->nesc + 1, &nd->cap_esc);
	if (!x)
		return TP_ENOMEM;
	nd->esc = x;
	x[nd->nesc++] = (struct bmp_node_esc){(uint32_t)i, cur};
	nd->ld[i] = 255;
	return TP_OK;
}

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

/* The global.profile parser's pieces: bmp_global.c cuts the text into chunks, scans them and
 * builds layers and nodes; bmp_gline.c parses the lines the scan hands over whole. */
#define BMP_MAX_KV 24

/* One line's body, split into key=value pairs on first lookup. */
struct bmp_line {
	const char *s; /* body (after "[bmprofile]" and blanks) */
	size_t n;
	unsigned long no;
	int parsed;         /* key=value pairs below are valid */
	unsigned nkv, hint; /* pairs; where the next lookup starts (keys come in order) */
	struct {
		const char *k, *v;
		size_t kn, vn;
	} kv[BMP_MAX_KV];
};

/* The parse state, owned by bmp_global_parse for one call. */
struct bmp_gctx {
	const char *path;
	struct tp_profile *p;
	struct bmp_global *g;
	struct tp_diag *d;
	int32_t cur_layer;
	int32_t cur_subnet;
	/* The last layer line's layer (index pend_layer, -1 = none), kept here while its node and
	 * tensor lines fill in its core and tensor range, and appended to the table once, when the
	 * next layer comes or the parse ends (bmp_gflush_layer). cur_layer, when >= 0, is it. */
	int32_t pend_layer;
	struct tp_layer pend;
	uint32_t type_id[8]; /* recently seen layer types */
	const char *type_str[8];
	size_t type_len[8];
	unsigned type_next;
};

/* bmp_gline.c. The body starts with p (a p ending in '=' also matches with blanks around the
 * '='). */
int bmp_line_starts(const struct bmp_line *l, const char *p);
/* Finds `key=` and returns its value (the rest of the line with `rest`); 1 if found. */
int bmp_line_kv(struct bmp_line *l, const char *key, int rest, const char **v, size_t *vn);
/* Reads `key=` as a number: TP_OK, or an error `path:LINE` naming the key. */
int bmp_line_i64(struct bmp_gctx *c, struct bmp_line *l, const char *key, int64_t *out);
int bmp_line_u64(struct bmp_gctx *c, struct bmp_line *l, const char *key, uint64_t *out);
/* A tensor line's fields (t->layer unset): TP_OK, or an error `path:LINE` in c->d. Reads
 * only c->path and c->d, so the scan may run it with a diagnostic of its own. */
int bmp_gline_tensor_parse(struct bmp_gctx *c, struct bmp_line *l, struct tp_tensor *t);
/* Adds a parsed tensor to the current layer (applying thread). */
int bmp_gline_tensor_add(struct bmp_gctx *c, struct tp_tensor *t);
/* Applies one line the scan did not take in a fast form. */
int bmp_gline_apply(struct bmp_gctx *c, struct bmp_line *l);
/* bmp_global.c: node and layer lines (bd_prefix: the "bd cmd_id" form), and the out-of-memory
 * error. */
int bmp_gline_node(struct bmp_gctx *c, struct bmp_line *l, int bd_prefix);
int bmp_gline_layer(struct bmp_gctx *c, struct bmp_line *l, int is_local);
int bmp_gctx_oom(struct bmp_gctx *c);
/* bmp_global.c: an "end parallel." line. */
void bmp_end_parallel(struct bmp_gctx *c);
/* bmp_global.c: appends the pending layer to the table (see struct bmp_gctx): it gets the
 * index it was given. */
int bmp_gflush_layer(struct bmp_gctx *c);

/* A chunk of global.profile's text, tokenized into events (bmp_global.c; the driver, the
 * worker pool and the ring of chunk slots are bmp_gpool.c's). */
#define GCHUNK ((size_t)4 << 20)
/* Room for element n of one of a chunk's arrays (*arrp, *cap elements): 1, or 0 with *oom
 * set. */
static inline int bmp_room(int *oom, void *arrp, size_t elem, size_t n, size_t *cap)
{
	void **arr = arrp;
	if (n < *cap)
		return 1;
	void *v = tp_grow(*arr, elem, n + 1, cap);
	if (!v) {
		*oom = 1;
		return 0;
	}
	*arr = v;
	return 1;
}
enum { EV_LINE, EV_NODE, EV_LAYER, EV_ENDPAR, EV_TENSOR };

struct gev {
	uint8_t kind;
	uint8_t eng, dir, core; /* EV_NODE; EV_LAYER: eng = is_local, dir = 1 when the name
	                           goes into the model as it is (tp_profile_str_ok) */
	uint32_t lno;           /* line index inside the chunk (0-based) */
	uint64_t a, b;          /* EV_NODE bd_id, gdma_id; EV_LAYER id, name offset;
	                           EV_LINE body offset, body length; EV_TENSOR a: index in
	                           the chunk's tensors */
	uint64_t off;           /* EV_LAYER type offset */
	uint32_t n, n2;         /* EV_LAYER type length, name length */
};

/* A chunk's node lines per node stream, built on the scanning thread when the chunk holds
 * only fast node, layer, tensor and "end parallel." lines (bmp_gstream.c), so that the
 * applying thread appends each stream's nodes in one step and the other lines one by one, in
 * order. A node's layer is known there only relative to the chunk (GSYM_*: a layer line of the
 * chunk, or the state carried in from the chunks before, resolved by gsym_layer). */
enum {
	GSYM_NONE = -1,     /* no layer */
	GSYM_CARRY = -2,    /* the current layer at the chunk's start */
	GSYM_CARRY_EP = -3, /* the same after an "end parallel." line */
	GSYM_LAST = -4,     /* (gspec.prev) the stream's last node before the chunk */
};
/* A node whose delta byte needs the chunk's place in the file: the stream's first node of
 * the chunk, one next to a carried or no layer, or an escape (see struct bmp_nodes). */
struct gspec {
	uint32_t i;        /* node index in the chunk's stream */
	int32_t sym, prev; /* its layer and the previous node's, GSYM_* or the chunk's layer */
};
struct gstream {
	uint8_t core, eng;
	size_t n;          /* nodes */
	int32_t *sym;      /* each node's layer (GSYM_* or the chunk's layer index) */
	uint8_t *ld;       /* layer delta from the previous node (what gspec lists: filled later) */
	uint32_t *bd, *gd; /* keep_ids: bd_id, gdma_id, direction */
	uint8_t *dir;
	size_t cap_sym, cap_ld, cap_bd, cap_gd, cap_dir;
	struct gspec *spec;
	size_t nspec, cap_spec;
};
#define GTYPES 32
struct gfast {
	int on;             /* the chunk qualifies; the rest is meaningful */
	int32_t core_carry; /* core of the first node on GSYM_CARRY (-1 none), ... */
	int32_t core_ep;    /* ... and on GSYM_CARRY_EP: they fill in a carried layer's core */
	uint32_t *lev;      /* the events other than node lines, in order */
	int32_t *lcore;     /* each layer line's core (its first node's), -1 none */
	size_t nev, nl, cap_lev, cap_lcore; /* lev entries, layer lines */
	size_t llast;                       /* the last layer line's place in lev */
	struct gstream *st;
	size_t nst, cap_st;
	int8_t map[BMP_MAX_CORES][2]; /* (core, engine) -> index in st, -1 none */
	int oom;
	/* The layer names, for the string table's batch (tp_strtab_reserve_unique): `names` is
	 * set when every layer line's name goes into the model as it is and the chunk has at
	 * most GTYPES layer types. nb holds the non-empty names back to back, nlen their
	 * lengths; ltype is each layer line's type, an index in toff/tlen (offsets in the
	 * text). */
	int names;
	char *nb;
	uint32_t *nlen;
	uint8_t *ltype;
	size_t nnb, nname, cap_nb, cap_nlen, cap_ltype;
	uint64_t toff[GTYPES];
	uint32_t tlen[GTYPES];
	unsigned ntypes;
	/* The places the applying thread reserved for the names (`fill` set): the next thread
	 * that scans into the slot, or the parse's end, copies them there (bmp_gchunk_fill). */
	int fill;
	struct tp_strtab_run *run;
	size_t nrun, cap_run;
	/* With `recs` the fill also writes the records of the chunk's layers but its last
	 * (tp_layer_span_put; the last one stays pending): their names are ids from name0 on,
	 * their types tid/dm by ltype, their subnet `subnet`. */
	int recs;
	struct tp_layer_span span;
	uint32_t name0, tid[GTYPES];
	uint8_t dm[GTYPES];
	int32_t subnet;
};

/* What a GSYM_* or chunk layer index stands for, given the chunk's first layer index, the
 * current layer at its start and that after an "end parallel." line. */
static inline int32_t gsym_layer(int32_t s, int64_t base, int32_t carry, int32_t carry_ep)
{
	if (s >= 0)
		return (int32_t)(base + s);
	return s == GSYM_CARRY ? carry : s == GSYM_CARRY_EP ? carry_ep : -1;
}
struct gchunk;
/* Builds ch->fast from the chunk's events (the scanning thread); fast.on stays 0 for a chunk
 * with any other line, which the applying thread then takes event by event. */
void bmp_gfast_build(const char *text, const struct bmp_global *g, struct gchunk *ch);
/* Appends a built chunk's node streams to g's nodes: TP_OK or TP_ENOMEM. */
int bmp_gfast_nodes(struct bmp_global *g, const struct gfast *f, int64_t base, int32_t carry,
                    int32_t carry_ep);
void bmp_gfast_free(struct gfast *f);
/* Copies the names (and packs the records) of the chunk applied in slot ch last to the places
 * reserved for them, if it has not been done yet (any thread that owns the slot, before the
 * slot's events are replaced). */
void bmp_gchunk_fill(struct gchunk *ch);

struct gchunk {
	size_t beg, end; /* [beg, end) of the text */
	unsigned long lines;
	struct gev *ev;
	size_t nev, cap;
	struct tp_tensor *tens; /* the tensor lines' fields, read by the scan */
	size_t ntens, cap_tens;
	size_t nlayers; /* EV_LAYER events */
	int oom;
	struct gfast fast;
};
/* Scans chunk k of text[0..len) into slot ch (any thread). */
void bmp_gchunk_scan(const char *text, size_t len, const struct bmp_global *g, struct gchunk *ch,
                     size_t k);
/* Applies chunk ch's events in order; its first line is line `first_no` of the file. */
int bmp_gchunk_apply(struct bmp_gctx *c, const char *text, struct gchunk *ch,
                     unsigned long first_no);

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
/* One item of net_stat.sim: its b: and g: ids, its t: cycles, and whether the legacy reader
 * counts it as GDMA (it has a dr: key; GDMA_CONSTANT fills have none and count as BD). */
struct bmp_sim_item {
	uint32_t b, g, t;
	uint8_t gdma;
	int64_t layer; /* the id its name ends in ("Conv2D_26": 26), -1 when none */
};
/* The items in file order, per engine ([0] BD, [1] GDMA). Owned; bmp_sim_items_free. */
struct bmp_sim_items {
	struct bmp_sim_item *v[2];
	size_t n[2], cap[2];
};
void bmp_sim_items_free(struct bmp_sim_items *it);
/* bmp_netstat_parse that also keeps every well-formed item in *items (NULL: none kept).
 * TP_OK, or TP_ENOMEM (items then holds what was kept). */
int bmp_netstat_parse_items(const char *text, size_t len, const char *path, struct bmp_netstat *ns,
                            struct tp_diag *d, struct bmp_sim_items *items);

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
/* The reader (bmp_reader.c: directory, clocks, layers, read_all; bmp_args.c, bmp_pmu.c,     */
/* bmp_pmublk.c, bmp_perfai.c, bmp_names.c, bmp_legacy.c). One struct bmp_rd per call.       */
/* ---------------------------------------------------------------------------------------- */

#define BMP_NAME_CACHE 32768

struct bmp_name_slot {
	uint32_t name, type;
	uint8_t set;
};

/* A slice's label as bmp_fill_cmd would set it, kept for later when its names are a scratch
 * profile's strings (struct bmp_rd.lab). */
enum { BMP_LAB_KEEP, BMP_LAB_NAMES, BMP_LAB_ALL };
struct bmp_lab {
	uint32_t name, type;
	uint8_t kind, dir, dtype;
	uint8_t what; /* BMP_LAB_*: leave the label, set name and type, or these five fields */
};

struct bmp_rd {
	const char *dir;
	struct tp_profile *p;
	/* Where argument sets and the strings they and the names use are interned: p, or on a
	 * per-core worker a scratch profile moved into p afterwards in core order (the tracks are
	 * always p's). */
	struct tp_profile *ap;
	/* NULL, or per engine one entry per slice of the core being filled (by its position in
	 * the iteration): labels are then kept there, not set (their names are ap's ids). */
	struct bmp_lab *lab[2];
	struct tp_diag *d;
	enum tp_arch arch;
	const struct sg_chip *chip; /* the arch's row of the chip table (never NULL once set) */
	int perfai;                 /* chip->bmp_timeline == SG_TL_PERFAI */
	double tiu_mhz, gdma_mhz;
	int detail;
	int device;
	struct bmp_global g;
	int tiu_track[BMP_MAX_CORES], gdma_track[BMP_MAX_CORES], mcu_track[BMP_MAX_CORES];
	/* Legacy arches: per core and engine (BMP_ENG_*), the track of the records the firmware
	 * ran outside the net's command stream (an MCU-kind track: shown, never counted as the
	 * engine's); -1 until one is found. */
	int outside_track[BMP_MAX_CORES][2];
	unsigned ncores;
	struct bmp_name_slot *cache;
	int json;                /* tensor_location.json present, parsed and wanted */
	struct sg_layers layers; /* tensor_location.json + final.mlir (side files) */
	struct sg_decoder *dec;  /* owned: table decoder for arches with register tables */
	/* Owned: BM1684X's register tables, read beside the hand-written decoder (which walks the
	 * stream and names the commands) for the descriptor fields and the cost model only. */
	struct sg_decoder *fdec;
	/* Legacy arches: the simulator's cycles (net_stat.sim "t:") of core 0's global.profile
	 * nodes per engine (BMP_ENG_*), by node index, matched as the vendor matches them (see
	 * read_netstat); 0 = no item matched. NULL without net_stat.sim. Owned. */
	uint32_t *sim_cyc[2];
	size_t nsim[2];
	/* Legacy arches, while a core's slices are filled: its PMU records per engine (in the
	 * iter file's mapping) and how many, slice k of the iteration being record k. */
	const uint8_t *pmu_rec[2];
	size_t pmu_nrec[2];
	/* GDMA PMU counters per slice of the current iteration (detail only, arches with a table
	 * decoder), aligned with the core's GDMA slices from its first new one: DDR side, LMEM
	 * side bytes and (CV184X, which counts them; NULL on BM1688) transactions, DDR side in
	 * the low 32 bits, LMEM side in the high 32. */
	uint64_t *gd_gmem[BMP_MAX_CORES], *gd_lmem[BMP_MAX_CORES], *gd_xact[BMP_MAX_CORES];
	size_t gd_cap[BMP_MAX_CORES];
	int fields; /* keep the decoded descriptor fields as args */
	/* Interned argument keys of each class's fields ([engine][class][field], 0 = a name the
	 * class repeats), built the first time a class is seen. Owned. */
	uint32_t **keys[2];
	/* Without the fields (detail on, fields off): per engine and class, the field index of
	 * each LOCAL memory key (model/lmemrec.h; UINT16_MAX = the class has none), built the
	 * first time a class is seen, for the records kept in the track's compact form. Owned. */
	uint16_t **lmem_fields[2];
	uint64_t first_begin_usec;
	int have_first_begin;
	int jobs;    /* threads for the per-core work (opts.jobs) */
	size_t part; /* records per part of an engine read or filled on several threads (opts) */
	/* Set on a per-core copy of the reader run by a worker thread (core_job): its notes and
	 * statistics are kept there and added to the profile in core order afterwards, so the
	 * profile (notes are interned strings) is the same as with one thread. */
	struct bmp_core_job *job;
	/* Bytes of the iter file being read that were counted for the progress line (per PMU
	 * chunk, from any thread); read_all tells the file so its release counts the rest. */
	_Atomic uint64_t *iter_done;
};

struct bmp_core_job {
	struct tp_diag d;
	int rc;
	struct sg_aside aside; /* its notes and statistics */
	/* The core's GDMA counter arrays as the worker left them (struct bmp_rd.gd_*). */
	uint64_t *gd_gmem, *gd_lmem, *gd_xact;
	size_t gd_cap;
};

/* The statistics a reader (or a per-core copy of it) adds to. */
#define BMP_RSTATS(r) ((r)->job ? &(r)->job->aside.stats : &(r)->p->stats)

/* Argument keys, in the reference's spelling where it has one (tdmaRegInfo / tiuRegInfo). */
enum {
	BMP_K_SRC,
	BMP_K_DST,
	BMP_K_DEP,
	BMP_K_MSG,
	BMP_K_CNT,
	BMP_K_GDMA_ID,
	BMP_K_BD_ID,
	BMP_K_RAW_ID,
	BMP_K_PID,
	BMP_K_EXTRA,
	BMP_K_NKEYS
};
extern const char *const bmp_key_names[BMP_K_NKEYS];

/* The track of core k's engine e (BMP_ENG_*). */
static inline int bmp_eng_track(const struct bmp_rd *r, unsigned k, int e)
{
	return e == BMP_ENG_TIU ? r->tiu_track[k] : r->gdma_track[k];
}
/* A core's slices on its TIU and GDMA tracks (PerfAI path). */
struct core_range {
	size_t first[2], n[2]; /* by engine (BMP_ENG_*) */
};
/* bmp_costset.c: the cost figures of cores 0..nc-1's TIU commands that carry no argument set,
 * as sets shared by every command with the same cost entry. TP_OK or TP_ENOMEM. */
int bmp_share_cost_args(struct bmp_rd *r, const struct core_range *cr, unsigned nc);
/* What a tp_par_run over parts of a reader's slices gets: the reader and the parts. */
struct bmp_part_job {
	struct bmp_rd *r;
	void *part;
};
/* The head of each part of a core's slices scanned on the threads (struct bmp_parts). */
struct bmp_part {
	unsigned k;      /* the core */
	int e;           /* its engine (BMP_ENG_*) */
	size_t first, n; /* slices [first, first + n) of the engine's track (bmp_eng_track) */
	int oom;         /* set by the scan when memory runs out */
};
/* A core's slices cut into parts that the threads scan (bmp_names.c), for work done in slice
 * order that threads can only prepare part by part (names, cost sets). */
struct bmp_parts {
	size_t size, elem; /* in: slices per part at most; bytes per part (its struct bmp_part
	                      first) */
	int neng;          /* in: engines cut, from TIU (1: TIU only, 2: then GDMA) */
	void (*scan)(void *job, size_t q);  /* in: part q's scan; job: a struct bmp_part_job */
	void (*release)(void *part);        /* in: frees what a part holds */
	void *v;                            /* out: the parts, core by core, engine, slice order */
	size_t n, core0[BMP_MAX_CORES + 1]; /* out: their number; core k's first part */
};
/* Cuts cores 0..nc-1's slices (cr) into ps's parts and scans them on r->jobs threads. TP_OK,
 * or TP_ENOMEM with nothing left to free. */
int bmp_parts_scan(struct bmp_rd *r, const struct core_range *cr, unsigned nc,
                   struct bmp_parts *ps);
/* Frees ps's parts and what they hold. */
void bmp_parts_free(struct bmp_parts *ps);

struct bmp_core_cmds;
/* bmp_names.c: without argument sets, part pt of core k's engine e (cc its command files):
 * each slice's kind, direction, dtype, dependency and TIU cost from its descriptor, and in its
 * name the name-cache key (or a mark for a command without one). Touches only the part's
 * slices and (through a cursor of its own unless the part is direct) the command buffer. */
void bmp_fill_part(struct bmp_rd *r, struct bmp_core_cmds *cc, struct tp_part *pt, int e);
/* Once every part is filled: the slices whose names intern found in parts on the threads
 * (bmp_parts_free frees ps); core k's names then interned in slice order by
 * bmp_names_discover, called core by core on one thread (none[]: the names of a command
 * without descriptor, once *have_none); then bmp_names_apply sets core k's names (any thread,
 * one core each). */
int bmp_names_scan(struct bmp_rd *r, const struct core_range *cr, unsigned nc,
                   struct bmp_parts *ps);
void bmp_names_discover(struct bmp_rd *r, struct bmp_core_cmds *cc, unsigned k,
                        const struct bmp_parts *ps, uint32_t none[2], int *have_none);
void bmp_names_apply(struct bmp_rd *r, unsigned k, const struct core_range *cr,
                     const uint32_t none[2]);

/* The command files of one core (bmp_args.c). */
struct bmp_core_cmds {
	struct tp_file f[2];
	struct bmp_cmdbuf cb[2];
	int have[2];
	char *path[2];      /* the file's path, for close_cmds' notes (owned) */
	size_t offset[2];   /* the COMMAND block's offset into it */
	uint64_t expect[2]; /* the COMMAND block's command count */
};

/* tp_profile_note, or kept in the per-core job. */
void bmp_note(struct bmp_rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Counts `bytes` of the current iter file as read (progress line), from any thread. */
void bmp_iter_progress(struct bmp_rd *r, uint64_t bytes);
/* "dir: out of memory" in r->d; returns TP_ENOMEM. */
int bmp_nomem(struct bmp_rd *r);
/* 1 if dir/name is a regular file, 0 if not, -1 out of memory. */
int bmp_exists(struct bmp_rd *r, const char *name);
/* Maps dir/name into f (counted in the read statistics); its path in *pathp when not NULL
 * (caller frees). */
int bmp_load(struct bmp_rd *r, const char *name, struct tp_file *f, char **pathp);
/* Adds the TIU and GDMA tracks of cores up to `core`. TP_EFORMAT past BMP_MAX_CORES. */
int bmp_ensure_tracks(struct bmp_rd *r, unsigned core);

/* bmp_args.c */
/* Frees the caches bmp_fill_cmd builds in r (argument keys, LOCAL memory fields). */
void bmp_fill_caches_free(struct bmp_rd *r);
void bmp_cmds_free(struct bmp_core_cmds *cc);
int bmp_cmds_open(struct bmp_rd *r, const char *iter_path, const struct bmp_command *cm,
                  unsigned core, struct bmp_core_cmds *cc);
int bmp_cmds_close(struct bmp_rd *r, struct bmp_core_cmds *cc);
void bmp_fill_cmd(struct bmp_rd *r, struct bmp_core_cmds *cc, int engine, int t, size_t index,
                  unsigned core, size_t rel);

/* bmp_pmu.c: BM1684X's PMU record at rec (32-byte TIU, 192-byte GDMA) as arguments of the
 * slice being built, each counter under BMP_PMU_PREFIX + tpu-mlir's name (the times as
 * raw_inst_start_time / raw_inst_end_time): what the legacy printer's pmu_info lists. */
#define BMP_PMU_PREFIX "pmu."
void bmp_legacy_pmu_args(struct tp_profile *p, int engine, const uint8_t *rec);
/* bmp_pmublk.c: one engine's PMU block of a core (TIU or GDMA records) onto its track. Read
 * in one go (bmp_read_tiu, bmp_read_gdma), or in parts on several threads: bmp_pmu_plan, then
 * bmp_pmu_part for each part (any thread), bmp_pmu_settle, bmp_pmu_commit for each part (any
 * thread) and bmp_pmu_finish; the track is then the one bmp_read_* makes. */
struct bmp_pmu_part {
	size_t a, b;           /* records [a, b) */
	size_t vend;           /* its first invalid record, or b */
	uint64_t wraps;        /* inst_id wraps among its records */
	size_t nz, z0, z1, zl; /* GDMA: its zero ids: how many, the first, second and last */
	size_t counted;        /* bytes counted for the progress line */
	uint64_t delta;        /* the ids of the wraps before it (bmp_pmu_settle) */
};
struct bmp_pmu_blk {
	const struct tp_file *f;
	const struct bmp_span *sp;
	int e; /* BMP_ENG_* */
	unsigned core;
	int t;               /* its track */
	size_t n;            /* records in the block (valid or not) */
	size_t first;        /* the track's first slice of the block */
	size_t d;            /* records dropped at its front (TIU: a leading system.send_msg) */
	size_t nv;           /* valid records (bmp_pmu_settle) */
	size_t nparts, live; /* parts, and those up to the first invalid record */
	uint64_t wraps;      /* inst_id wraps in the live parts (bmp_pmu_settle) */
	uint64_t *gd[3];     /* GDMA with counters kept: the core's arrays (gmem, lmem, xact) */
	struct bmp_pmu_part *part;
	struct tp_part *pt; /* part q's slices: records [a, b) less the dropped front */
};
/* The size of engine e's PMU records (BMP_ENG_*) on r's chip. */
static inline size_t bmp_pmu_rec_bytes(const struct bmp_rd *r, int e)
{
	return e == BMP_ENG_TIU ? r->chip->tiu_pmu_bytes : r->chip->gdma_pmu_bytes;
}
/* A block of one part is read directly: that part sets the track as it goes. */
static inline int bmp_pmu_direct(const struct bmp_pmu_blk *b)
{
	return b->nparts == 1;
}
int bmp_read_tiu(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                 struct bmp_core_cmds *cc, unsigned core, size_t *first);
int bmp_read_gdma(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                  unsigned core, size_t *first);
/* Plans core `core`'s engine e block sp in parts of about `part` records (one direct part when
 * part is SIZE_MAX or the block is not larger): TIU's leading record checked against the
 * command buffers cc, the track's room reserved. TP_OK / TP_ENOMEM (reported). */
int bmp_pmu_plan(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                 struct bmp_core_cmds *cc, unsigned core, int e, size_t part,
                 struct bmp_pmu_blk *b);
/* Part q's records onto their slices. Touches only the part's slices, its own tables and
 * (GDMA) the counters of its records. TP_OK / TP_ENOMEM (a direct part growing the track). */
int bmp_pmu_part(struct bmp_rd *r, struct bmp_pmu_blk *b, size_t q);
/* Where the valid records end; the parts' labels and long durations merged into the track.
 * TP_OK / TP_ENOMEM (reported). */
int bmp_pmu_settle(struct bmp_rd *r, struct bmp_pmu_blk *b);
/* Part q's slices rewritten to the track's ids and its inst_ids unwrapped across parts. */
void bmp_pmu_commit(struct bmp_pmu_blk *b, size_t q);
/* The block's statistics, GDMA trimming (§9.2 step 2), counter unwrap and notes; the index of
 * its first slice in *first. Frees the plan. */
void bmp_pmu_finish(struct bmp_rd *r, struct bmp_pmu_blk *b, size_t *first);
void bmp_pmu_free(struct bmp_pmu_blk *b);
/* A planned block read on this thread, every step in turn (frees the plan). */
int bmp_pmu_run(struct bmp_rd *r, struct bmp_pmu_blk *b, size_t *first);
/* bmp_pmu.c */
int bmp_read_dyn(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                 const struct bmp_span *extra, unsigned core, int legacy_base, int64_t shift_ns);

/* bmp_perfai.c, bmp_legacy.c: one iteration's timeline. */
void bmp_set_cycles(struct tp_part *pt, struct tp_slice *s, int64_t cs, int64_t ce, double mhz,
                    int64_t offset_ns);
int bmp_iter_perfai(struct bmp_rd *r, const char *ipath, const struct tp_file *f,
                    const struct bmp_iter *it);
int bmp_iter_legacy(struct bmp_rd *r, const char *ipath, const struct tp_file *f,
                    const struct bmp_iter *it);

#endif /* TP_BMP_INT_H */
