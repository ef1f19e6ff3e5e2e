/*
 * gendump_cdm.c — writes synthetic cdm_profile_data directories (BM1690/SG2260 8 cores,
 * SG2260E 4 cores; shared/specs/sophgo-cdm.md) of any size from a seed, for the cdm reader's
 * round-trip tests and its benchmark: global.profile, cdmlib0_{core}.profile and, with CDMA
 * ports, cdma0_{port}.profile.
 *
 * Every per-command attribute (class, sub-op, direction, data type, bytes, length) is a pure
 * function of (seed, core, engine, index), so the blocks of a file can be written one after
 * the other — each engine's PMU block, then the descriptor or command blocks — with nothing
 * held in memory: block lengths are computed by a first pass over the same functions.
 *
 * What a dump holds, per core (cdm §8.2):
 *   - TIU, GDMA, SDMA PMU blocks; each engine's first two records are the init handshake
 *     (GDMA/SDMA sys_send, TIU wait_msg); core c's counter starts at its own random epoch,
 *     and TIU record #1 of every core ends at the same real time (the alignment anchor), as
 *     do the first command after it, so an aligned reader puts every core's first command at
 *     the same time.
 *   - mode 0: PMU only. mode 1: DYN_DATA (layout v1: an init record, then NODE_SETs: the 2
 *     init commands and the commands of each engine). mode 2: mode 1 plus a DYN_EXTRA entry
 *     (the descriptor) per DYN_DATA record. bmodel: "bmodel" line, BLOCK_DES_BDC/GDMA/SDMA
 *     descriptor streams ending with the sys end command, and 2 trailing PMU records per
 *     engine outside the stream (the runtime's tail sync), all engines' after the core's
 *     last command, like the real BM1690 dump.
 *   - CDMA ports (modes 0-2): port files with 2 init records + commands; the CDMA commands
 *     ride in the last core's DYN_DATA (port in extra_info >> 7) and that core's first SDMA
 *     record after its init pair is the vSDMA send the ports align to (the reader drops it).
 * Sizes: TIU 45 %, GDMA 50 %, SDMA the rest of --cmds per core (at least one each).
 */
#include "gendump.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { E_TIU = 0, E_GDMA = 1, E_SDMA = 2, E_CDMA = 3 };

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static uint64_t h(const struct gd_cdm_opts *o, unsigned core, unsigned eng, uint64_t k,
                  unsigned salt)
{
	return mix(o->seed * 0x100000001B3ull ^ mix(((uint64_t)core << 48) ^ ((uint64_t)eng << 40) ^
	                                            ((uint64_t)salt << 56) ^ k));
}

/* One generated command. */
struct gcmd {
	unsigned op, sub, dir, dtype;
	uint32_t bytes;    /* DMA */
	uint32_t dur;      /* cycles - 1 */
	unsigned desc_len; /* descriptor bytes */
	int lmem_dst;      /* DMA destination is local memory */
};

/* TIU classes used (tsk_typ, eu, short length in bytes): conv.normal, pord.depthwise,
 * mm2.nn, arith.add, arith.max, arith.cast, sfu.taylor. */
static const unsigned tiu_ops[7][3] = {{0, 0, 64}, {1, 0, 64},  {2, 4, 32}, {3, 2, 64},
                                       {3, 4, 64}, {3, 14, 64}, {9, 13, 32}};
/* DMA directions: mode 1 codes 0 DDR->LMEM, 1 LMEM->DDR, 2 DDR->DDR, 3 LMEM->LMEM; the
 * descriptor forms add 4 DDR->L2M and 5 L2M->LMEM. Tags: DDR 2, L2M 30, LMEM 31. */
static const unsigned dir_src[6] = {2, 31, 2, 31, 2, 30}, dir_dst[6] = {31, 2, 2, 31, 30, 31};

static void gen(const struct gd_cdm_opts *o, unsigned core, unsigned eng, uint64_t k,
                struct gcmd *c)
{
	uint64_t r = h(o, core, eng, k, 1);
	memset(c, 0, sizeof *c);
	if (eng == E_TIU) {
		const unsigned *t = tiu_ops[r % 7];
		c->op = t[0];
		c->sub = t[1];
		c->desc_len = t[2];
		c->dtype = (unsigned)(r >> 8) % 3; /* INT8, FP16, FP32 */
		c->dur = 4 + (uint32_t)((r >> 16) % 3000);
		return;
	}
	if (eng == E_CDMA) {
		c->op = 0; /* cdma.send */
		c->bytes = 1024u << ((r >> 8) % 8);
		c->dur = 20 + c->bytes / 32;
		c->desc_len = 32;
		return;
	}
	c->op = (r >> 4) % 4 == 3 ? 1 : 0; /* DMA_tensor, some DMA_matrix */
	unsigned ndir = o->mode == GD_CDM_MODE1 ? 4 : 6;
	c->dir = (unsigned)(r >> 8) % ndir;
	c->dtype = (unsigned)(r >> 12) % 3;
	c->bytes = 64u << ((r >> 16) % 12);
	c->dur = 10 + c->bytes / 64;
	c->desc_len = 96;
	c->lmem_dst = dir_dst[c->dir] == 31;
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void setbits(uint8_t *p, unsigned lo, unsigned width, uint64_t v)
{
	for (unsigned i = 0; i < width; i++)
		if (v >> i & 1u)
			p[(lo + i) / 8] |= (uint8_t)(1u << ((lo + i) % 8));
}

/* Descriptor of a command (desc_len bytes into b, zeroed first); sys = 1 for the init/end
 * commands (TIU 15/sub, DMA 6/sub). */
static unsigned desc(unsigned eng, const struct gcmd *c, int sys, unsigned sys_sub, uint8_t *b)
{
	unsigned n = sys ? 16 : c->desc_len;
	memset(b, 0, n);
	if (eng == E_TIU) {
		setbits(b, 0, 1, 1); /* cmd_short */
		setbits(b, 41, 4, sys ? 15 : c->op);
		setbits(b, 45, 5, sys ? sys_sub : c->sub);
	} else if (eng == E_CDMA) {
		setbits(b, 4, 4, sys ? 7 : c->op);
		setbits(b, 8, 3, sys ? sys_sub : c->sub);
	} else {
		setbits(b, 3, 1, sys);
		setbits(b, 32, 5, sys ? 6 : c->op);
		setbits(b, 37, 3, sys ? sys_sub : 0);
		if (!sys) {
			setbits(b, 41, 4, c->dtype);
			setbits(b, 544, 13, (uint64_t)dir_src[c->dir] << 8);
			setbits(b, 608, 13, (uint64_t)dir_dst[c->dir] << 8);
		}
	}
	return n;
}

struct out {
	struct tp_afile f;
	uint64_t bytes;
	int err;
};

static void put(struct out *w, const void *p, size_t n)
{
	if (!w->err && fwrite(p, 1, n, w->f.fp) != n)
		w->err = 1;
	w->bytes += n;
}

/* Opens dir/PREFIX<i>.profile as a fresh output; name[OUT_NAME] gets its file name. */
#define OUT_NAME 64
static int out_open(struct out *w, char *name, const char *dir, const char *prefix, unsigned i,
                    struct tp_diag *d)
{
	snprintf(name, OUT_NAME, "%s%u.profile", prefix, i);
	char *path = tp_path_join(dir, name);
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	*w = (struct out){0};
	int rc = tp_afile_open(&w->f, path, d);
	tp_free(path);
	return rc;
}

/* Closes an output opened by out_open into place, counting its bytes into res. */
static int out_commit(struct out *w, const char *dir, const char *name, struct gd_cdm_result *res,
                      struct tp_diag *d)
{
	if (w->err || fflush(w->f.fp) != 0) {
		tp_afile_abort(&w->f);
		return tp_diag_set(d, TP_EOUTPUT, "%s/%s: write failed", dir, name);
	}
	res->bytes_total += w->bytes;
	return tp_afile_commit(&w->f, d);
}

static void put32(struct out *w, uint32_t v)
{
	uint8_t b[4];
	le32(b, v);
	put(w, b, 4);
}

static void block_hdr(struct out *w, uint32_t type, uint64_t len)
{
	put32(w, type);
	put32(w, (uint32_t)len);
}

/* Counts of one core. */
struct counts {
	uint64_t n[3]; /* TIU, GDMA, SDMA commands (after the init pair) */
	int owner;     /* this core carries the CDMA commands */
};

static void core_counts(const struct gd_cdm_opts *o, unsigned core, struct counts *c)
{
	uint64_t t = o->cmds * 45 / 100, g = o->cmds / 2;
	c->n[E_TIU] = t ? t : 1;
	c->n[E_GDMA] = g ? g : 1;
	c->n[E_SDMA] = o->cmds > t + g + 1 ? o->cmds - t - g : 1;
	c->owner = o->cdma_ports && core == o->cores - 1;
}

static uint64_t cdma_cmds(const struct gd_cdm_opts *o, unsigned port)
{
	return 1 + (o->cmds / 20 + port) % 64;
}

/* Real-time layout: every core's anchor (end of TIU init record #1) is at real cycle
 * ANCHOR; core c's counters read epoch_c at real 0. */
#define ANCHOR 5000u

static uint32_t epoch(const struct gd_cdm_opts *o, unsigned core)
{
	if (o->wrap)
		return 0xFFFFFFFFu - 200000u - (uint32_t)(h(o, core, 9, 0, 2) % 1000);
	return (uint32_t)(h(o, core, 9, 0, 2) % 1000000);
}

/* Writes one PMU record. */
static void pmu(struct out *w, unsigned eng, uint32_t s, uint32_t e, uint32_t id,
                const struct gcmd *c)
{
	uint8_t b[128];
	unsigned n = eng == E_TIU ? 16 : eng == E_CDMA ? 128 : 64;
	memset(b, 0, n);
	le32(b, s);
	le32(b + 4, e);
	le32(b + 8, id);
	if (c && eng == E_CDMA) {
		le32(b + 16, c->bytes);
	} else if (c && eng != E_TIU) {
		le32(b + (c->lmem_dst ? 40 : 20), c->bytes);
		le32(b + 16, (uint32_t)(c->bytes / 4096)); /* stall */
	}
	put(w, b, n);
}

/* Real time after command k of an engine (its end plus the gap before the next); commands
 * start at ANCHOR + 100 on every engine and run back to back with gaps. */
static uint64_t cmd_next(const struct gd_cdm_opts *o, unsigned core, unsigned eng, uint64_t k,
                         uint64_t at, const struct gcmd *c)
{
	return at + c->dur + 1 + h(o, core, eng, k, 3) % 40;
}

/* Real time after the last of an engine's n commands. */
static uint64_t cmds_end(const struct gd_cdm_opts *o, unsigned core, unsigned eng, uint64_t n)
{
	uint64_t at = ANCHOR + 100;
	for (uint64_t k = 0; k < n; k++) {
		struct gcmd c;
		gen(o, core, eng, k, &c);
		at = cmd_next(o, core, eng, k, at, &c);
	}
	return at;
}

/* PMU block of one engine of a core. Real times: init handshake ends at ANCHOR, commands
 * start at ANCHOR + 100 (every engine) and run back to back with gaps. tail: the 2 records
 * of the runtime's tail sync start at real time tail (0 = none). */
static void pmu_block(struct out *w, const struct gd_cdm_opts *o, unsigned core, unsigned eng,
                      uint64_t n, uint64_t tail, uint64_t *span_end)
{
	uint64_t total = 2 + n + (tail ? 2 : 0);
	block_hdr(w, eng == E_TIU ? 3 : eng == E_GDMA ? 4 : 11, total * (eng == E_TIU ? 16u : 64u));
	uint32_t ep = epoch(o, core);
	/* Init pair: DMA sends, [A-300, A-265]; TIU waits end at A-400 and A. */
	static const uint32_t dma_init[2][2] = {{600, 589}, {300, 265}},
	                      tiu_init[2][2] = {{406, 400}, {35, 0}};
	for (unsigned i = 0; i < 2; i++) {
		const uint32_t *t = eng == E_TIU ? tiu_init[i] : dma_init[i];
		pmu(w, eng, ep + ANCHOR - t[0], ep + ANCHOR - t[1], i, NULL);
	}
	uint64_t at = ANCHOR + 100;
	for (uint64_t k = 0; k < n; k++) {
		struct gcmd c;
		gen(o, core, eng, k, &c);
		pmu(w, eng, (uint32_t)(ep + at), (uint32_t)(ep + at + c.dur), (uint32_t)k, &c);
		at = cmd_next(o, core, eng, k, at, &c);
	}
	if (tail) {
		at = tail;
		for (unsigned i = 0; i < 2; i++) {
			pmu(w, eng, (uint32_t)(ep + at), (uint32_t)(ep + at + 11), i, NULL);
			at += 300;
		}
	}
	if (at > *span_end)
		*span_end = at;
}

static uint64_t des_len(const struct gd_cdm_opts *o, unsigned core, unsigned eng, uint64_t n)
{
	uint64_t len = 16; /* the end command */
	for (uint64_t k = 0; k < n; k++) {
		struct gcmd c;
		gen(o, core, eng, k, &c);
		len += c.desc_len;
	}
	return len + 32; /* zero padding after the end, as the real streams have */
}

static void des_block(struct out *w, const struct gd_cdm_opts *o, unsigned core, unsigned eng,
                      uint64_t n)
{
	/* The PMU has n + 1 records per engine in the stream: the commands and the end command
	 * (TIU system.end 15/31, DMA chain_end 6/0) — written by pmu_block as command n. */
	block_hdr(w, 13 + eng, des_len(o, core, eng, n - 1));
	uint8_t b[128];
	for (uint64_t k = 0; k + 1 < n; k++) {
		struct gcmd c;
		gen(o, core, eng, k, &c);
		put(w, b, desc(eng, &c, 0, 0, b));
	}
	put(w, b, desc(eng, NULL, 1, eng == E_TIU ? 31 : 0, b));
	memset(b, 0, 32);
	put(w, b, 32);
}

/* DYN_DATA word 0 of a NODE_SET (layout v1). */
static uint32_t dyn_w0(const struct gd_cdm_opts *o, unsigned eng, unsigned op, unsigned sub,
                       unsigned extra)
{
	/* Engine codes: AKS TIU 0, GDMA 1, SDMA 3, CDMA 4; AKSV TIU 0, GDMA 1, SDMA 2, CDMA 3. */
	static const unsigned aks[4] = {0, 1, 3, 4}, aksv[4] = {0, 1, 2, 3};
	unsigned code = o->sg2260e ? aksv[eng] : aks[eng];
	return 1u | code << 8 | op << 11 | sub << 16 | extra << 21;
}

struct dyn_rec {
	unsigned eng;
	uint64_t k; /* command index, or init index when init */
	int init;
	unsigned port;
};

/* Visits the DYN_DATA records after the init record in write order. */
typedef void (*dyn_fn)(void *ctx, const struct dyn_rec *r);
static void dyn_walk(const struct gd_cdm_opts *o, const struct counts *cn, dyn_fn fn, void *ctx)
{
	for (unsigned e = 0; e < 3; e++)
		for (unsigned i = 0; i < 2; i++)
			fn(ctx, &(struct dyn_rec){.eng = e, .k = i, .init = 1});
	for (unsigned e = 0; e < 3; e++)
		for (uint64_t k = 0; k < cn->n[e]; k++)
			fn(ctx, &(struct dyn_rec){.eng = e, .k = k});
	if (cn->owner)
		for (unsigned p = 0; p < o->cdma_ports; p++) {
			for (unsigned i = 0; i < 2; i++)
				fn(ctx,
				   &(struct dyn_rec){.eng = E_CDMA, .k = i, .init = 1, .port = p});
			for (uint64_t k = 0; k < cdma_cmds(o, p); k++)
				fn(ctx, &(struct dyn_rec){.eng = E_CDMA, .k = k, .port = p});
		}
}

struct dyn_ctx {
	const struct gd_cdm_opts *o;
	unsigned core;
	struct out *w;
	uint64_t count, extra_len;
	int pass; /* 0 count, 1 DYN_DATA, 2 DYN_EXTRA */
};

static void dyn_one(void *vctx, const struct dyn_rec *r)
{
	struct dyn_ctx *x = vctx;
	struct gcmd c;
	unsigned op, sub, extra = 0;
	uint64_t key = r->eng == E_CDMA ? (uint64_t)r->port << 32 | r->k : r->k;
	gen(x->o, x->core, r->eng, key, &c);
	if (r->init) {
		op = r->eng == E_TIU ? 15 : r->eng == E_CDMA ? 7 : 6;
		sub = r->eng == E_TIU ? 9 : 3;
	} else {
		op = c.op;
		sub = c.sub;
		extra = r->eng == E_TIU ? c.dtype : c.dtype | c.dir << 4;
	}
	if (r->eng == E_CDMA)
		extra = r->port << 7;
	uint32_t id = r->eng == E_CDMA ? (uint32_t)(r->k + 1 + (r->init ? 0 : 2))
	                               : (uint32_t)(r->init ? r->k : r->k);
	uint8_t b[128];
	unsigned dl = desc(r->eng, &c, r->init, sub, b);
	x->count++;
	x->extra_len += 12 + dl;
	if (x->pass == 1) {
		put32(x->w, dyn_w0(x->o, r->eng, op, sub, extra));
		put32(x->w, id);
	} else if (x->pass == 2) {
		put32(x->w, (uint32_t)x->count);
		put32(x->w, 1);
		put32(x->w, dl);
		put(x->w, b, dl);
	}
}

static int write_core(const struct gd_cdm_opts *o, const char *dir, unsigned core,
                      struct gd_cdm_result *res, struct tp_diag *d)
{
	char name[OUT_NAME];
	struct out w;
	int rc = out_open(&w, name, dir, "cdmlib0_", core, d);
	if (rc)
		return rc;
	struct counts cn;
	core_counts(o, core, &cn);
	int bmodel = o->mode == GD_CDM_BMODEL;
	uint64_t span = 0, tail = 0;
	/* bmodel: the stream's end command is the last PMU record of the stream section. The
	 * runtime's tail sync follows on every engine once all of them are done, as in the real
	 * BM1690 dump (its three engines' tail records lie within 1.2 us of each other), so
	 * each engine list ends at the core's end, however early its own commands finish. */
	for (unsigned e = 0; bmodel && e < 3; e++) {
		uint64_t end = cmds_end(o, core, e, cn.n[e]);
		tail = end > tail ? end : tail;
	}
	for (unsigned e = 0; e < 3; e++)
		pmu_block(&w, o, core, e, cn.n[e], tail, &span);
	if (bmodel)
		for (unsigned e = 0; e < 3; e++)
			des_block(&w, o, core, e, cn.n[e]);
	if (o->mode == GD_CDM_MODE1 || o->mode == GD_CDM_MODE2) {
		struct dyn_ctx x = {.o = o, .core = core, .w = &w};
		dyn_walk(o, &cn, dyn_one, &x);
		uint64_t nrec = x.count + 1, elen = x.extra_len;
		block_hdr(&w, 5, nrec * 8);
		put32(&w, 0); /* init record */
		put32(&w, 0);
		x.pass = 1;
		x.count = 0;
		dyn_walk(o, &cn, dyn_one, &x);
		if (o->mode == GD_CDM_MODE2) {
			block_hdr(&w, 6, elen);
			x.pass = 2;
			x.count = 0;
			dyn_walk(o, &cn, dyn_one, &x);
		}
	}
	for (unsigned e = 0; e < 3; e++)
		res->cmds[core][e] = cn.n[e];
	if (span > res->span_cycles)
		res->span_cycles = span;
	return out_commit(&w, dir, name, res, d);
}

static int write_port(const struct gd_cdm_opts *o, const char *dir, unsigned port,
                      struct gd_cdm_result *res, struct tp_diag *d)
{
	char name[OUT_NAME];
	struct out w;
	int rc = out_open(&w, name, dir, "cdma0_", port, d);
	if (rc)
		return rc;
	unsigned owner = o->cores - 1;
	uint64_t n = cdma_cmds(o, port);
	block_hdr(&w, 12, (2 + n) * 128);
	/* The port has its own counter; its first record (tx wait) ends when the owner's vSDMA
	 * send (SDMA command 0, at real ANCHOR + 100) ends, as the reader's alignment assumes. */
	struct gcmd s0;
	gen(o, owner, E_SDMA, 0, &s0);
	uint32_t pe = (uint32_t)(h(o, 100 + port, 9, 0, 2) % 1000000);
	uint64_t t0_end = ANCHOR + 100 + s0.dur;
	pmu(&w, E_CDMA, (uint32_t)(pe + t0_end - 50), (uint32_t)(pe + t0_end), 1, NULL);
	pmu(&w, E_CDMA, (uint32_t)(pe + t0_end + 10), (uint32_t)(pe + t0_end + 30), 2, NULL);
	uint64_t at = t0_end + 200;
	for (uint64_t k = 0; k < n; k++) {
		struct gcmd c;
		gen(o, owner, E_CDMA, (uint64_t)port << 32 | k, &c);
		pmu(&w, E_CDMA, (uint32_t)(pe + at), (uint32_t)(pe + at + c.dur), (uint32_t)(k + 3),
		    &c);
		at += c.dur + 5;
	}
	res->cdma_cmds[port] = n;
	return out_commit(&w, dir, name, res, d);
}

int gd_generate_cdm(const struct gd_cdm_opts *o, const char *outdir, struct gd_cdm_result *res,
                    struct tp_diag *d)
{
	struct gd_cdm_result local;
	if (!res)
		res = &local;
	memset(res, 0, sizeof *res);
	unsigned max = o->sg2260e ? 4 : 8;
	if (o->cores < 1 || o->cores > max)
		return tp_diag_set(d, TP_EUSAGE, "--cores must be 1..%u for %s", max,
		                   o->sg2260e ? "SG2260E" : "BM1690");
	if (o->cdma_ports > (o->sg2260e ? 10u : 11u))
		return tp_diag_set(d, TP_EUSAGE, "--cdma-ports must be 0..%u",
		                   o->sg2260e ? 10 : 11);
	if (o->cdma_ports && o->mode == GD_CDM_BMODEL)
		return tp_diag_set(d, TP_EUSAGE,
		                   "CDMA ports exist on the tpuDNN path (modes 0-2) only");
	if (o->cdma_ports && o->mode == GD_CDM_MODE0)
		return tp_diag_set(d, TP_EUSAGE, "CDMA ports need command records (mode 1 or 2)");
	if (o->cmds > (uint64_t)1 << 32)
		return tp_diag_set(d, TP_EUSAGE, "--cmds must be at most 2^32");
	if (tp_mkdirs(outdir, d) != TP_OK)
		return TP_EOUTPUT;
	char *gp = tp_path_join(outdir, "global.profile");
	if (!gp)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	struct tp_afile gf;
	int rc = tp_afile_open(&gf, gp, d);
	tp_free(gp);
	if (rc)
		return rc;
	if (o->mode == GD_CDM_BMODEL)
		fputs("bmodel\n", gf.fp);
	fprintf(gf.fp, "arch=%s\ntpu_freq=1000\n", o->sg2260e ? "140814" : "8800");
	if (o->mode != GD_CDM_BMODEL) {
		uint64_t maxrec = 2 * o->cmds + 1024;
		fprintf(gf.fp, "max_record_num=%llu\n", (unsigned long long)maxrec);
		for (unsigned c = 0; c < o->cores; c++) {
			struct counts cn;
			core_counts(o, c, &cn);
			fprintf(gf.fp,
			        "core%u_tiu_record=%llu\ncore%u_gdma_record=%llu\n"
			        "core%u_sdma_record=%llu\n",
			        c, (unsigned long long)cn.n[0] + 2, c,
			        (unsigned long long)cn.n[1] + 2, c,
			        (unsigned long long)cn.n[2] + 2);
		}
		for (unsigned p = 0; p < o->cdma_ports; p++)
			fprintf(gf.fp, "cdma_port%u_record=%llu\n", p,
			        (unsigned long long)cdma_cmds(o, p) + 2);
		fprintf(gf.fp, "tail_offset_ns=%llu\n",
		        (unsigned long long)(o->seed % 100000 + 5000));
	}
	if (ferror(gf.fp)) {
		tp_afile_abort(&gf);
		return tp_diag_set(d, TP_EOUTPUT, "%s/global.profile: write failed", outdir);
	}
	if ((rc = tp_afile_commit(&gf, d)) != TP_OK)
		return rc;
	for (unsigned c = 0; c < o->cores; c++)
		if ((rc = write_core(o, outdir, c, res, d)) != TP_OK)
			return rc;
	for (unsigned p = 0; p < o->cdma_ports; p++)
		if ((rc = write_port(o, outdir, p, res, d)) != TP_OK)
			return rc;
	return TP_OK;
}
