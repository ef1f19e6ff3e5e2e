/*
 * gd_int.h — private to tools/gendump's bmprofile generator (gendump.c, gd_io.c, gd_desc.c,
 * gd_text.c, gd_sim.c): the format constants, the random numbers, the buffered writers, the
 * generator state (struct gen with its struct core per core) and the functions one file calls
 * in another. The format and the time model are described atop gendump.c.
 */
#ifndef TP_GD_INT_H
#define TP_GD_INT_H

#include "gendump.h"

struct sg_decoder;

enum { ARCH_BM1684 = 1, ARCH_BM1684X = 3, ARCH_BM1688 = 4 };
enum { BLK_SUMMARY = 1, BLK_BD = 3, BLK_GDMA = 4, BLK_DYN = 5, BLK_EXTRA = 6, BLK_COMMAND = 8 };
enum { DT_FP32 = 0, DT_FP16 = 1, DT_INT8 = 2, DT_UINT8 = 3 };

#define RING 1024u          /* end times kept per engine for dependency look-ups */
#define SIM_MAX 64u         /* net_stat.sim items per engine */
#define WBUF (1u << 20)     /* bytes buffered per output region */
#define TR_ACC_DEP 0x28000u /* dependency field of SYS_TR_ACC in R (§3.1: gdma_id=163840) */

/* ---------------------------------------------------------------------------------------- */
/* Random numbers: splitmix64, so the bytes depend on nothing but the seed.                  */
/* ---------------------------------------------------------------------------------------- */

static inline uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline uint64_t rrange(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return hi <= lo ? lo : lo + rnd(s) % (hi - lo + 1);
}

/* Skewed towards lo (roughly log-uniform), integer-only so results do not depend on libm. */
static inline uint64_t rskew(uint64_t *s, uint64_t lo, uint64_t hi)
{
	unsigned shift = (unsigned)(rnd(s) % 7);
	return rrange(s, lo, lo + ((hi - lo) >> shift));
}

/* ---------------------------------------------------------------------------------------- */
/* Buffered writers and files (gd_io.c).                                                     */
/* ---------------------------------------------------------------------------------------- */

struct gw {
	int fd;
	uint64_t off; /* file offset of buf[0] */
	uint8_t *buf;
	size_t len, cap;
	int err; /* errno of the first failed write */
	uint64_t total;
};

struct gfile {
	char *path, *tmp;
	int fd;
};

/* ---------------------------------------------------------------------------------------- */
/* Generator state.                                                                          */
/* ---------------------------------------------------------------------------------------- */

struct sim_item {
	const char *ltype; /* layer type (static string) */
	uint64_t layer_id;
	const char *op;
	uint64_t s, e, bd, gd, bytes;
	unsigned dir;
};

struct core {
	unsigned idx;
	/* plan (fixed before generation) */
	uint64_t n_tiu, n_gdma;       /* COMMAND counts */
	uint64_t lay_tiu, lay_gdma;   /* of which layer (non-sys) commands */
	uint64_t tiu_recs, gdma_recs; /* PMU records planned */
	uint64_t dyn_recs, extra_len; /* DYN_DATA records, DYN_EXTRA payload bytes */
	uint64_t bd_base, gdma_base;
	uint64_t off_bd, off_gdma, off_dyn, off_extra; /* block offsets in iter0.profile */
	/* running state */
	uint64_t tiu_id, gdma_id; /* last issued 1-based command ids */
	uint64_t tiu_done, gdma_done, grec_done;
	int64_t epoch; /* global ps at which this core's counters read 0 */
	/* counter clocks in MHz: BM1688 TIU 900, GDMA 750 (§8.1); BM1684X both at its tpu_freq,
	 * 1000, as its global.profile says (a reader converts its cycles with those) */
	uint64_t tiu_mhz, gdma_mhz;
	int64_t tiu_free, gdma_free;
	int64_t tiu_end[RING], gdma_end[RING];
	int64_t first_start, last_end;
	int64_t first_gdma_end;
	int stale_pending, have_first_gdma;
	int fw_pending;           /* legacy: the firmware's GDMA record is still to be written */
	int64_t fw_start, fw_end; /* its run, for the NODE_SET that announces it */
	uint8_t first_gdma_desc[128];
	uint64_t tiu_at_block; /* TIU id when the current parallel block opened */
	int in_par;
	unsigned par_left;
	/* activation tensor state */
	unsigned ch, hw;
	int64_t act_id;
	uint32_t act_loff;
	int64_t last_load_id;
	/* sync bookkeeping */
	uint64_t sync_tiu_dep, sync_gdma_dep;
	int64_t arrival;
	uint64_t tiu_cycles_sum;
	struct gfile ft, fg;
	struct gw cmd_t, cmd_g, rec_t, rec_g;
};

struct gen {
	const struct gd_opts *o;
	struct tp_diag *d;
	uint64_t rng;
	int a1688;
	int a1684;  /* BM1684: 128-byte descriptors, 16-bit ids (gd_bm1684.c) */
	int ending; /* the final command of each engine is being issued (BM1684's end bits) */
	struct sg_decoder *dec; /* BM1684X: its register tables, to place TIU shapes */
	unsigned ncores;
	uint64_t nsync;
	int64_t cap_ps;                 /* max (gap + length) of one command, 0 = no cap */
	uint64_t tiu_limit, gdma_limit; /* the cap in cycles, 0 = none */
	uint32_t gdma_rec_size;
	int dtype;
	uint64_t layer_id;
	uint64_t const_ddr, act_ddr;
	uint64_t name_seq;
	struct gfile fp, fi;
	struct gw prof;
	struct core core[2];
	struct sim_item tsim[SIM_MAX], gsim[SIM_MAX];
	unsigned ntsim, ngsim;
	uint64_t sim_bytes[4];
	uint64_t host_base;
	int64_t t_start;
	const char *cur_ltype;
	uint64_t cur_layer;
};

/* Descriptor fields (§6). */
enum {
	TSK_CONV = 0,
	TSK_PD = 1,
	TSK_MM = 2,
	TSK_AR = 3,
	TSK_RQDQ = 4,
	TSK_TR_ACC = 12,
	TSK_SYS = 15
};
enum { SYS_SEND = 8, SYS_WAIT = 9, SYS_END = 31 };
enum { GSYS_CHAIN_END = 0, GSYS_SEND = 3, GSYS_WAIT = 4 };

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* Sets bits [lo, lo+width) of a little-endian bit stream with one 64-bit read-modify-write.
 * The caller guarantees width + lo % 8 <= 64 and 8 bytes from byte lo / 8 (every descriptor
 * is built in a 128-byte buffer and no field starts past bit 640). */
static inline void setbits(uint8_t *p, unsigned lo, unsigned width, uint64_t v)
{
	uint8_t *q = p + (lo >> 3);
	unsigned sh = lo & 7;
	uint64_t mask = (width >= 64 ? ~0ull : (1ull << width) - 1) << sh;
	uint64_t w = tp_le64(q);
	put_le64(q, (w & ~mask) | ((v << sh) & mask));
}

static inline uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* ---- gd_io.c: buffered region writers and files under temporary names ---- */

void gf_abort(struct gfile *f);
int gf_commit(struct gfile *f, struct tp_diag *d);
void gf_free(struct gfile *f);
int gf_open(struct gfile *f, const char *dir, const char *name, struct tp_diag *d);
void gw_dec(struct gw *w, uint64_t v);
void gw_flush(struct gw *w);
void gw_free(struct gw *w);
int gw_init(struct gw *w, int fd, uint64_t off, size_t cap);
void gw_put(struct gw *w, const void *p, size_t n);
void gw_sdec(struct gw *w, int64_t v);
void gw_str(struct gw *w, const char *s);
void gw_u32(struct gw *w, uint32_t v);
void gw_u64(struct gw *w, uint64_t v);
void gw_zero(struct gw *w, size_t n);

/* ---- gd_desc.c: clocks, descriptors, commands and their PMU records, iter0.profile blocks ---- */

uint64_t gd_cap_cycles(struct gen *g, uint64_t cyc, uint64_t limit);
void gd_gdma_record(struct gen *g, struct core *c, uint64_t sc, uint64_t ec, uint32_t inst,
                    unsigned dir, uint64_t bytes);
void gd_gdma_sys(struct gen *g, struct core *c, unsigned sp, uint64_t dep, unsigned msg,
                 int64_t release);
void gd_gdma_xfer(struct gen *g, struct core *c, unsigned cmd_type, unsigned dir, uint64_t dep,
                  uint64_t ddr, uint32_t lmem, uint64_t bytes);
uint64_t gd_ps_to_gdma(const struct core *c, int64_t t);
uint64_t gd_skip_marks(uint64_t cyc);
int64_t gd_tiu_cmd(struct gen *g, struct core *c, uint8_t *desc, size_t dlen, uint64_t dep,
                   uint64_t dur, int64_t not_before, int64_t end_at, const char *op);
size_t gd_tiu_desc(uint8_t *b, unsigned typ, unsigned eu, int shortf, uint64_t dep, uint64_t imm,
                   unsigned prec);
int64_t gd_tiu_to_ps(const struct core *c, uint64_t cyc);
void gd_write_dyn(struct gen *g, struct core *c, uint64_t base, struct gw *w);
void gd_write_head(struct gen *g, struct gw *w, int64_t span_ps);

/* ---- gd_text.c: global.profile lines and net_stat.sim ---- */

uint64_t gd_ddr_act(struct gen *g, uint64_t bytes);
uint64_t gd_ddr_const(struct gen *g, uint64_t bytes);
unsigned gd_dsize(int dt);
void gd_gdma_line(struct gen *g, struct core *c, uint64_t dep, unsigned dir, unsigned func);
void gd_layer_line(struct gen *g, int global, const char *type, uint64_t id);
void gd_line(struct gen *g, const char *s);
uint32_t gd_lmem_off(struct gen *g);
uint64_t gd_next_layer_id(struct gen *g);
void gd_tensor_line(struct gen *g, int64_t id, int is_in, unsigned n, unsigned ch, unsigned h,
                    unsigned wd, int dtype, int is_const, uint64_t gaddr, uint32_t loff,
                    unsigned nslice, unsigned hslice);
void gd_tiu_line(struct gen *g, struct core *c, uint64_t dep, unsigned bd_func);
int gd_write_sim(struct gen *g, const char *dir, int64_t span_ps, struct tp_diag *d);
void gd_write_tail_lines(struct gen *g, int64_t span_ps);

/* ---- gd_bm1684.c: BM1684's descriptors ---- */

void gd1684_gdma_desc(struct gen *g, struct core *c, uint8_t *b, unsigned cmd_type, unsigned dir,
                      uint64_t dep, uint64_t src, uint64_t dst, uint64_t bytes);
void gd1684_tiu_desc(struct gen *g, struct core *c, uint8_t *b, const uint8_t *head, uint64_t dep);
uint64_t gd1684_dyn_id(unsigned type, unsigned engine, uint64_t gdma_id, uint64_t bd_id);
void gd1684x_gdma_shapes(uint8_t *b, uint64_t bytes, unsigned esize);
void gd1684x_tiu_shapes(struct gen *g, struct core *c, uint8_t *b, size_t n);

/* ---- gd_sim.c: layer kernels, segments and syncs, the plan ---- */

void gd_plan(struct gen *g);
void gd_run_segment(struct gen *g, struct core *c, uint64_t tb, uint64_t gb, int first_seg);
void gd_sync_point(struct gen *g, uint64_t s);

#endif /* TP_GD_INT_H */
