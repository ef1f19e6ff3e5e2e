/*
 * gendump.c — writes synthetic Sophgo bmprofile_data directories (BM1688 and BM1684X
 * layouts) of any size from a seed, for tests and benchmarks of the bmprofile reader.
 *
 * Formats follow shared/specs/sophgo-bmprofile.md (§ numbers below refer to it); the choices
 * that the spec leaves open follow what the real BM1688 dump (spec source "R") shows:
 *   - global.profile: header, is_mlir=1 compiler log with one subnet, parallel blocks,
 *     local/global layer lines, tensor lines and one node line per command except the last
 *     of each buffer (§3.1: the final chain_end / system.end has no line), core_list, mtype
 *     lines. BM1688 TIU lines are spelled `gdma cmd_id bd_id=0 gdma_id=<dep> bd_func=..
 *     core=..`; BM1684X uses `bd cmd_id bd_id=<own> gdma_id=<dep> bd_func=..`.
 *   - iter0.profile: SUMMARY, COMMAND per core, then per core MONITOR_BD, MONITOR_GDMA,
 *     DYN_DATA and (if non-empty) DYN_EXTRA (§4.2 write order). PMU records exist for every
 *     TIU command and every non-sys GDMA command (R: GDMA send/wait/chain_end have none).
 *     BM1688 core 0 carries R's quirks: a stale inst_id-0 GDMA record first and an inst_id-0
 *     record last (§9.2 trimming); every core >0 starts with system.send_msg; each core's
 *     first system.wait_msg starts at the same real time (the §9.2 alignment anchor).
 *   - cmd_<base>_<core>_<engine>.dat: variable-length descriptors per §6 ending with a sys
 *     end / chain_end and zero padding to a multiple of 128 bytes (R's file lengths).
 *     BM1684X uses the same size table; its descriptors also carry their own cmd_id (TIU
 *     bits 1-20 with the dependency in 21-40, GDMA bits 9-28) — an assumption shared with
 *     src/readers/sophgo/bmprofile/bmp_cmd.c, not a fact from the spec, which has no BM1684X field
 * table.
 *   - net_stat.sim: a small two-column sample of core 0 in the §7 layout.
 *
 * Streaming: every output region has a small buffered writer that pwrite()s at its own file
 * offset. All counts (and so all block offsets in iter0.profile) are fixed before the first
 * command is generated, so nothing is held in memory and nothing is rewritten.
 *
 * Time model: one global timeline in picoseconds. Each core has an epoch (the global time at
 * which its PMU counters read 0); TIU counters run at 900 MHz, GDMA at 750 MHz, the MCU timer
 * at 50 MHz (20 ns/tick), as in R (§4.9, §8.1). A command starts when its engine is free and
 * its cross-engine dependency (cmd_id_dep) has ended. Without --wrap every command's length
 * is capped so that no 32-bit counter can pass 2^32 before the dump ends.
 */
#include "gendump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { ARCH_BM1684X = 3, ARCH_BM1688 = 4 };
enum { BLK_SUMMARY = 1, BLK_BD = 3, BLK_GDMA = 4, BLK_DYN = 5, BLK_EXTRA = 6, BLK_COMMAND = 8 };
enum { DT_FP32 = 0, DT_FP16 = 1, DT_INT8 = 2, DT_UINT8 = 3 };

#define RING 1024u          /* end times kept per engine for dependency look-ups */
#define SIM_MAX 64u         /* net_stat.sim items per engine */
#define WBUF (1u << 20)     /* bytes buffered per output region */
#define TR_ACC_DEP 0x28000u /* dependency field of SYS_TR_ACC in R (§3.1: gdma_id=163840) */

/* ---------------------------------------------------------------------------------------- */
/* Random numbers: splitmix64, so the bytes depend on nothing but the seed.                  */
/* ---------------------------------------------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static uint64_t rrange(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return hi <= lo ? lo : lo + rnd(s) % (hi - lo + 1);
}

/* Skewed towards lo (roughly log-uniform), integer-only so results do not depend on libm. */
static uint64_t rskew(uint64_t *s, uint64_t lo, uint64_t hi)
{
	unsigned shift = (unsigned)(rnd(s) % 7);
	return rrange(s, lo, lo + ((hi - lo) >> shift));
}

/* ---------------------------------------------------------------------------------------- */
/* Buffered writer for one region of one file (pwrite at a running offset).                  */
/* ---------------------------------------------------------------------------------------- */

struct gw {
	int fd;
	uint64_t off; /* file offset of buf[0] */
	uint8_t *buf;
	size_t len, cap;
	int err; /* errno of the first failed write */
	uint64_t total;
};

static int gw_init(struct gw *w, int fd, uint64_t off, size_t cap)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
	w->off = off;
	w->cap = cap;
	w->buf = tp_malloc(cap);
	return w->buf ? TP_OK : TP_ENOMEM;
}

static void gw_raw(struct gw *w, const uint8_t *p, size_t n)
{
	while (n > 0 && !w->err) {
		ssize_t k = pwrite(w->fd, p, n, (off_t)w->off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			w->err = errno;
			return;
		}
		p += k;
		n -= (size_t)k;
		w->off += (uint64_t)k;
	}
}

static void gw_flush(struct gw *w)
{
	gw_raw(w, w->buf, w->len);
	w->len = 0;
}

static void gw_free(struct gw *w)
{
	tp_free(w->buf);
	w->buf = NULL;
}

static void gw_put(struct gw *w, const void *p, size_t n)
{
	w->total += n;
	if (n > w->cap - w->len) {
		gw_flush(w);
		if (n > w->cap) {
			gw_raw(w, p, n);
			return;
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void gw_zero(struct gw *w, size_t n)
{
	static const uint8_t z[256];
	while (n > 0) {
		size_t k = n < sizeof z ? n : sizeof z;
		gw_put(w, z, k);
		n -= k;
	}
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static void gw_u32(struct gw *w, uint32_t v)
{
	uint8_t b[4];
	put_le32(b, v);
	gw_put(w, b, 4);
}

static void gw_u64(struct gw *w, uint64_t v)
{
	uint8_t b[8];
	put_le64(b, v);
	gw_put(w, b, 8);
}

static void gw_str(struct gw *w, const char *s)
{
	gw_put(w, s, strlen(s));
}

static void gw_dec(struct gw *w, uint64_t v)
{
	char b[24];
	size_t i = sizeof b;
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	gw_put(w, b + i, sizeof b - i);
}

static void gw_sdec(struct gw *w, int64_t v)
{
	if (v < 0) {
		gw_put(w, "-", 1);
		gw_dec(w, (uint64_t)0 - (uint64_t)v);
	} else {
		gw_dec(w, (uint64_t)v);
	}
}

/* Sets bits [lo, lo+width) of a little-endian bit stream with one 64-bit read-modify-write.
 * The caller guarantees width + lo % 8 <= 64 and 8 bytes from byte lo / 8 (every descriptor
 * is built in a 128-byte buffer and no field starts past bit 640). */
static void setbits(uint8_t *p, unsigned lo, unsigned width, uint64_t v)
{
	uint8_t *q = p + (lo >> 3);
	unsigned sh = lo & 7;
	uint64_t mask = (width >= 64 ? ~0ull : (1ull << width) - 1) << sh;
	uint64_t w = tp_le64(q);
	put_le64(q, (w & ~mask) | ((v << sh) & mask));
}

/* ---------------------------------------------------------------------------------------- */
/* Output files: written as <name>.tmp-gendump and renamed at the end.                       */
/* ---------------------------------------------------------------------------------------- */

struct gfile {
	char *path, *tmp;
	int fd;
};

static int gf_open(struct gfile *f, const char *dir, const char *name, struct tp_diag *d)
{
	f->fd = -1;
	f->tmp = NULL;
	f->path = tp_path_join(dir, name);
	if (!f->path)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	size_t n = strlen(f->path) + 16;
	f->tmp = tp_malloc(n);
	if (!f->tmp)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	snprintf(f->tmp, n, "%s.tmp-gendump", f->path);
	f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f->fd < 0)
		return tp_diag_set(d, TP_EOUTPUT, "%s: cannot create: %s", f->tmp, strerror(errno));
	return TP_OK;
}

static int gf_commit(struct gfile *f, struct tp_diag *d)
{
	int rc = TP_OK;
	if (f->fd >= 0 && close(f->fd) != 0)
		rc = tp_diag_set(d, TP_EOUTPUT, "%s: close failed: %s", f->tmp, strerror(errno));
	f->fd = -1;
	if (rc == TP_OK && rename(f->tmp, f->path) != 0)
		rc = tp_diag_set(d, TP_EOUTPUT, "%s: cannot rename into place: %s", f->path,
		                 strerror(errno));
	return rc;
}

static void gf_abort(struct gfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp)
		unlink(f->tmp);
	f->fd = -1;
}

static void gf_free(struct gfile *f)
{
	tp_free(f->path);
	tp_free(f->tmp);
	f->path = f->tmp = NULL;
}

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
	int64_t tiu_free, gdma_free;
	int64_t tiu_end[RING], gdma_end[RING];
	int64_t first_start, last_end;
	int64_t first_gdma_end;
	int stale_pending, have_first_gdma;
	uint8_t first_gdma_desc[96];
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

static const char *const kind_names[GD_NKIND] = {"conv", "pool", "add", "matmul", "load", "store"};

static const char *const hostile_names[] = {
    "</script><img src=x onerror=alert(1)>",
    "quote\"d 'single' \"double\"",
    "back\\slash\\n\\u0000\\",
    "<b>&amp;&lt;</b> & <!-- x -->",
    "unicode \xe5\xb1\x82-\xc3\xb1-\xf0\x9f\x98\x80-\xe2\x80\xae-rtl",
    "'); DROP TABLE layers;--",
    "tab\tand,comma;semi ${x} {{y}} `z`",
};
static const char *const hostile_types[] = {"Conv2D</script>", "\"Add\"", "Mat\\Mul", "Pool<&>"};

void gd_opts_default(struct gd_opts *o)
{
	static const unsigned mix[GD_NKIND] = {30, 8, 12, 10, 28, 12};
	memset(o, 0, sizeof *o);
	o->arch = ARCH_BM1688;
	o->cores = 2;
	o->cmds = 10000;
	o->seed = 1;
	memcpy(o->mix, mix, sizeof mix);
}

int gd_parse_mix(struct gd_opts *o, const char *spec, struct tp_diag *d)
{
	unsigned mix[GD_NKIND] = {0};
	const char *p = spec;
	while (*p) {
		const char *eq = strchr(p, '=');
		if (!eq)
			return tp_diag_set(d, TP_EUSAGE, "--layers: expected kind=weight in '%s'",
			                   p);
		size_t klen = (size_t)(eq - p);
		int k = -1;
		for (int i = 0; i < GD_NKIND; i++)
			if (strlen(kind_names[i]) == klen && memcmp(kind_names[i], p, klen) == 0)
				k = i;
		if (k < 0)
			return tp_diag_set(
			    d, TP_EUSAGE,
			    "--layers: unknown kind '%.*s' (conv pool add matmul load store)",
			    (int)klen, p);
		const char *v = eq + 1;
		size_t vlen = strcspn(v, ",");
		uint64_t w;
		if (tp_parse_u64(v, vlen, &w) != 0 || w > 1000000)
			return tp_diag_set(d, TP_EUSAGE, "--layers: bad weight '%.*s'", (int)vlen,
			                   v);
		mix[k] = (unsigned)w;
		p = v + vlen;
		if (*p == ',')
			p++;
	}
	unsigned sum = 0;
	for (int i = 0; i < GD_NKIND; i++)
		sum += mix[i];
	if (sum == 0)
		return tp_diag_set(d, TP_EUSAGE, "--layers: all weights are 0");
	memcpy(o->mix, mix, sizeof mix);
	return TP_OK;
}

static uint64_t nsync_for(const struct gd_opts *o)
{
	if (o->arch != ARCH_BM1688 || o->cores < 2)
		return 0;
	uint64_t extra = o->cmds / 100000;
	return 2 + (extra > 30 ? 30 : extra);
}

int gd_check(const struct gd_opts *o, uint64_t *min_cmds, struct tp_diag *d)
{
	if (o->arch != ARCH_BM1688 && o->arch != ARCH_BM1684X)
		return tp_diag_set(d, TP_EUSAGE, "unsupported arch %d (BM1688=4, BM1684X=3)",
		                   o->arch);
	if (o->arch == ARCH_BM1688 && (o->cores < 1 || o->cores > 2))
		return tp_diag_set(d, TP_EUSAGE, "--cores must be 1 or 2 for BM1688");
	if (o->arch == ARCH_BM1684X && o->cores != 1)
		return tp_diag_set(d, TP_EUSAGE, "--cores must be 1 for BM1684X");
	uint64_t ns = nsync_for(o);
	/* Sys commands: TIU send+wait+AR per sync and the final end; GDMA send+wait per sync and
	 * the final chain_end. At least one layer command per engine on top. */
	uint64_t min = (3 * ns + 1 + 1) + (2 * ns + 1 + 1);
	if (min < 8)
		min = 8;
	if (min_cmds)
		*min_cmds = min;
	if (o->cmds < min)
		return tp_diag_set(d, TP_EUSAGE, "--cmds %llu is too small (minimum %llu)",
		                   (unsigned long long)o->cmds, (unsigned long long)min);
	if (o->cmds > (1ull << 40))
		return tp_diag_set(d, TP_EUSAGE, "--cmds is too large");
	unsigned sum = 0;
	for (int i = 0; i < GD_NKIND; i++)
		sum += o->mix[i];
	if (sum == 0)
		return tp_diag_set(d, TP_EUSAGE, "layer mix is all zero");
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Clock conversions (per core, relative to its epoch).                                      */
/* ---------------------------------------------------------------------------------------- */

static uint64_t ps_to_tiu(const struct core *c, int64_t t) /* ceil */
{
	uint64_t r = (uint64_t)(t - c->epoch);
	return (r * 9 + 9999) / 10000;
}
static int64_t tiu_to_ps(const struct core *c, uint64_t cyc)
{
	return c->epoch + (int64_t)((cyc * 10000 + 8) / 9);
}
static uint64_t ps_to_gdma(const struct core *c, int64_t t)
{
	uint64_t r = (uint64_t)(t - c->epoch);
	return (r * 3 + 3999) / 4000;
}
static int64_t gdma_to_ps(const struct core *c, uint64_t cyc)
{
	return c->epoch + (int64_t)((cyc * 4000 + 2) / 3);
}
static uint64_t ps_to_tick(const struct gen *g, const struct core *c, int64_t t)
{
	(void)g;
	return (uint64_t)(t - c->epoch) / 20000;
}

/* A PMU counter value of 0 ends the BM1688 record list and 0xFFFFFFFF the BM1684X one
 * (§4.5), so a real record never holds either; step over them. */
static uint64_t skip_marks(uint64_t cyc)
{
	while ((uint32_t)cyc == 0 || (uint32_t)cyc == 0xFFFFFFFFu)
		cyc++;
	return cyc;
}

static uint64_t cap_cycles(struct gen *g, uint64_t cyc, uint64_t limit)
{
	if (limit && cyc > limit)
		cyc = limit / 2 + rnd(&g->rng) % (limit - limit / 2 + 1);
	return cyc ? cyc : 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Descriptors (§6).                                                                          */
/* ---------------------------------------------------------------------------------------- */

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

/* Builds a TIU descriptor in b (128 bytes, zeroed here) and returns its length. */
static size_t tiu_desc(uint8_t *b, unsigned typ, unsigned eu, int shortf, uint64_t dep,
                       uint64_t imm, unsigned prec)
{
	memset(b, 0, 128);
	if (typ == TSK_TR_ACC) {
		/* The constant header R shows for every SYS_TR_ACC (tsk_typ 12, eu 0, dependency
		 * field 0x28000); the second word is an immediate (an LMEM address in R). */
		put_le64(b, 0x7f06180500000000ull);
		put_le64(b + 8, imm);
		return 16;
	}
	if (typ == TSK_SYS) {
		setbits(b, 17, 24, dep);
		setbits(b, 41, 4, typ);
		setbits(b, 45, 5, eu);
		put_le64(b + 8, imm);
		return 16;
	}
	setbits(b, 0, 1, shortf ? 1 : 0);
	setbits(b, 17, 24, dep);
	setbits(b, 41, 4, typ);
	setbits(b, 45, 5, eu);
	if (!shortf)
		return 128;
	if (typ == TSK_CONV) {
		/* opt_res0_prec / opt_opd0_prec of the short CONV layout (§6). */
		setbits(b, 65, 3, prec);
		setbits(b, 68, 3, prec);
	}
	switch (typ) {
	case TSK_CONV:
	case TSK_PD:
	case TSK_AR:
		return 64;
	case TSK_MM:
		return eu == 1 ? 48 : 32;
	default:
		return 32;
	}
}

/* GDMA descriptor: 96-byte tensor/matrix command or 16-byte sys command (§6). */
static size_t gdma_desc(uint8_t *b, unsigned cmd_type, unsigned sp, uint64_t dep, uint64_t src,
                        uint64_t dst, unsigned fmt, unsigned msg)
{
	memset(b, 0, 96);
	if (cmd_type == 6) {
		setbits(b, 3, 1, 1); /* cmd_short */
		setbits(b, 32, 4, 6);
		setbits(b, 36, 3, sp);
		setbits(b, 64, 24, dep);
		if (sp == GSYS_SEND || sp == GSYS_WAIT) {
			b[12] = (uint8_t)msg;
			b[13] = (uint8_t)(msg >> 8);
		}
		return 16;
	}
	setbits(b, 1, 1, 1); /* stride_enable */
	setbits(b, 2, 1, 1); /* nchw_copy */
	setbits(b, 32, 4, cmd_type);
	setbits(b, 36, 3, sp);
	setbits(b, 40, 3, fmt);
	setbits(b, 64, 24, dep);
	setbits(b, 512, 32, src & 0xFFFFFFFFu);
	setbits(b, 544, 8, (src >> 32) & 0xFF);
	setbits(b, 576, 32, dst & 0xFFFFFFFFu);
	setbits(b, 608, 8, (dst >> 32) & 0xFF);
	return 96;
}

/* ---------------------------------------------------------------------------------------- */
/* Commands: descriptor + PMU record + timing.                                                */
/* ---------------------------------------------------------------------------------------- */

static void sim_tiu(struct gen *g, struct core *c, const char *op, uint64_t s, uint64_t e,
                    uint64_t dep)
{
	if (c->idx != 0 || g->ntsim >= SIM_MAX || g->o->no_sim)
		return;
	struct sim_item *it = &g->tsim[g->ntsim++];
	it->ltype = g->cur_ltype;
	it->layer_id = g->cur_layer;
	it->op = op;
	it->s = s;
	it->e = e;
	it->bd = c->tiu_id;
	it->gd = dep;
	it->bytes = 0;
	it->dir = 0;
}

/* Issues one TIU command. `not_before` (0 = none) delays the start; `end_at` (0 = none)
 * makes the command end exactly then (wait_msg). Returns the start time. */
static int64_t tiu_cmd(struct gen *g, struct core *c, uint8_t *desc, size_t dlen, uint64_t dep,
                       uint64_t dur, int64_t not_before, int64_t end_at, const char *op)
{
	c->tiu_id++;
	int64_t t = c->tiu_free;
	if (dep && dep <= c->gdma_id && c->gdma_id - dep < RING && c->gdma_end[dep % RING] > t)
		t = c->gdma_end[dep % RING];
	if (not_before > t)
		t = not_before;
	uint64_t sc = ps_to_tiu(c, t);
	if (!end_at)
		sc += rnd(&g->rng) % 3; /* R: consecutive TIU records are mostly back to back */
	sc = skip_marks(sc);
	uint64_t ec;
	if (end_at) {
		ec = ps_to_tiu(c, end_at);
		if (ec < sc + 4)
			ec = sc + 4;
	} else {
		ec = sc + dur - 1;
	}
	ec = skip_marks(ec);
	uint64_t cyc = ec - sc + 1;
	int64_t start = tiu_to_ps(c, sc);
	c->tiu_free = tiu_to_ps(c, ec + 1);
	c->tiu_end[c->tiu_id % RING] = c->tiu_free;
	if (c->first_start == 0 || start < c->first_start)
		c->first_start = start;
	if (c->tiu_free > c->last_end)
		c->last_end = c->tiu_free;
	c->tiu_cycles_sum += cyc;

	if (!g->a1688) {
		/* BM1684X descriptors carry their own id: bits 1-20 cmd_id, 21-40 the GDMA
		 * dependency (the layout the project's reader assumes; not in the spec). */
		setbits(desc, 1, 20, c->tiu_id & 0xFFFFF);
		setbits(desc, 21, 20, dep & 0xFFFFF);
	}
	gw_put(&c->cmd_t, desc, dlen);
	uint8_t r[32];
	uint32_t inst = (uint32_t)((c->tiu_id - 1) & 0xFFFF);
	put_le32(r, (uint32_t)sc);
	put_le32(r + 4, (uint32_t)ec);
	if (g->a1688) {
		/* R: computation_load = num_read = num_read_stall = num_write = end-start+1 and the
		 * last word repeats inst_id (§4.5). */
		uint32_t v = (uint32_t)cyc;
		put_le64(r + 8, inst | (uint64_t)(cyc & 0xFFFFFFFFFFFFull) << 16);
		put_le32(r + 16, v);
		put_le32(r + 20, v);
		put_le32(r + 24, v);
		put_le32(r + 28, inst);
	} else {
		put_le64(r + 8, inst | ((cyc * 64) & 0xFFFFFFFFFFFFull) << 16);
		put_le32(r + 16, (uint32_t)(cyc / 2));
		put_le32(r + 20, (uint32_t)(cyc / 16));
		put_le32(r + 24, (uint32_t)(cyc / 4));
		put_le32(r + 28, 0);
	}
	gw_put(&c->rec_t, r, 32);
	c->tiu_done++;
	sim_tiu(g, c, op, sc - ps_to_tiu(c, g->t_start), ec - ps_to_tiu(c, g->t_start), dep);
	return start;
}

/* Writes one GDMA PMU record in the arch's layout. dir: 0 S2L, 1 L2S. */
static void gdma_record(struct gen *g, struct core *c, uint64_t sc, uint64_t ec, uint32_t inst,
                        unsigned dir, uint64_t bytes)
{
	uint8_t r[256];
	memset(r, 0, sizeof r);
	uint32_t b = (uint32_t)bytes, h0 = b / 2, h1 = b - b / 2;
	put_le32(r, (uint32_t)sc);
	put_le32(r + 4, (uint32_t)ec);
	put_le32(r + 8, inst & 0xFFFFFu);
	uint32_t s1 = (uint32_t)skip_marks(sc + 4),
	         e1 = (uint32_t)skip_marks(ec > sc + 40 ? ec - 30 : ec);
	if (g->a1688) {
		if (dir == 0) {
			put_le32(r + 0x14, h0); /* axi_d0_ar_bytes */
			put_le32(r + 0x20, h1); /* axi_d1_ar_bytes */
			put_le32(r + 0x24, b);  /* gif_fmem_aw_bytes */
			put_le32(r + 0x28, b);  /* gif_fmem_wr_bytes */
			put_le32(r + 0x50, b / 32);
			put_le32(r + 0x88, e1); /* d0 ar end / st */
			put_le32(r + 0x8C, s1);
			put_le32(r + 0xA8, e1); /* d1 ar end / st */
			put_le32(r + 0xAC, s1);
			put_le32(r + 0xD0, e1); /* fmem wr end / st */
			put_le32(r + 0xD4, s1);
		} else {
			put_le32(r + 0x0C, h0); /* axi_d0_aw_bytes */
			put_le32(r + 0x10, h0); /* axi_d0_wr_bytes */
			put_le32(r + 0x18, h1);
			put_le32(r + 0x1C, h1);
			put_le32(r + 0x2C, b); /* gif_fmem_ar_bytes */
			put_le32(r + 0x40, h0 / 16);
			put_le32(r + 0x48, h1 / 16);
			put_le32(r + 0x54, b / 32);
			put_le32(r + 0x60, (uint32_t)(rnd(&g->rng) % (h0 / 32 + 1)));
			put_le32(r + 0x68, (uint32_t)(rnd(&g->rng) % (h1 / 32 + 1)));
			put_le32(r + 0x80, e1); /* d0 aw end / st */
			put_le32(r + 0x84, s1);
			put_le32(r + 0x90, e1); /* d0 wr end / st */
			put_le32(r + 0x94, s1);
			put_le32(r + 0xA0, e1);
			put_le32(r + 0xA4, s1);
			put_le32(r + 0xB0, e1);
			put_le32(r + 0xB4, s1);
			put_le32(r + 0xC8, e1); /* fmem ar end / st */
			put_le32(r + 0xCC, s1);
		}
	} else {
		/* BM1684X 192-byte layout: only bytes 0-47 are used by any converter (§4.6). */
		if (dir == 0) {
			put_le32(r + 20, h0); /* d0_ar */
			put_le32(r + 32, h1); /* d1_ar */
			put_le32(r + 36, b);  /* gif_aw */
			put_le32(r + 40, b);  /* gif_wr */
		} else {
			put_le32(r + 12, h0); /* d0_aw */
			put_le32(r + 16, h0); /* d0_wr */
			put_le32(r + 24, h1); /* d1_aw */
			put_le32(r + 28, h1); /* d1_wr */
			put_le32(r + 44, b);  /* gif_ar */
		}
		put_le32(r + 48, (uint32_t)(ec - sc + 1) / 2);
	}
	gw_put(&c->rec_g, r, g->gdma_rec_size);
	c->grec_done++;
}

static void sim_gdma(struct gen *g, struct core *c, uint64_t s, uint64_t e, uint64_t dep,
                     unsigned dir, uint64_t bytes)
{
	if (c->idx != 0 || g->o->no_sim)
		return;
	g->sim_bytes[dir & 3] += bytes;
	if (g->ngsim >= SIM_MAX)
		return;
	struct sim_item *it = &g->gsim[g->ngsim++];
	it->ltype = g->cur_ltype;
	it->layer_id = g->cur_layer;
	it->op = "GDMA_TENSOR";
	it->s = s;
	it->e = e;
	it->bd = dep;
	it->gd = c->gdma_id;
	it->bytes = bytes;
	it->dir = dir;
}

/* Issues one non-sys GDMA transfer of `bytes` (dir 0 DDR->LMEM, 1 LMEM->DDR). */
static void gdma_xfer(struct gen *g, struct core *c, unsigned cmd_type, unsigned dir, uint64_t dep,
                      uint64_t ddr, uint32_t lmem, uint64_t bytes)
{
	c->gdma_id++;
	/* Bytes per GDMA cycle 20..40 (R: 150 528 B in 5 808 cycles); a fixed setup cost. */
	uint64_t bpc = rrange(&g->rng, 20, 40);
	uint64_t cyc = 30 + bytes / bpc;
	if (g->gdma_limit && cyc > g->gdma_limit) {
		cyc = cap_cycles(g, cyc, g->gdma_limit);
		bytes = (cyc > 30 ? cyc - 30 : 1) * bpc;
	}
	bytes = (bytes + 31) & ~(uint64_t)31;
	if (bytes > 0xFFFFFFF0u)
		bytes = 0xFFFFFFE0u;
	int64_t t = c->gdma_free;
	if (dep && dep <= c->tiu_id && c->tiu_id - dep < RING && c->tiu_end[dep % RING] > t)
		t = c->tiu_end[dep % RING];
	uint64_t sc = skip_marks(ps_to_gdma(c, t) + rrange(&g->rng, 4, 40));
	uint64_t ec = skip_marks(sc + cyc - 1);
	c->gdma_free = gdma_to_ps(c, ec + 1);
	c->gdma_end[c->gdma_id % RING] = c->gdma_free;
	if (c->first_start == 0 || gdma_to_ps(c, sc) < c->first_start)
		c->first_start = gdma_to_ps(c, sc);
	if (c->gdma_free > c->last_end)
		c->last_end = c->gdma_free;

	uint8_t b[96];
	uint64_t src = dir == 0 ? ddr : lmem, dst = dir == 0 ? lmem : ddr;
	unsigned fmt = g->dtype == DT_FP32 ? 2 : g->dtype == DT_FP16 ? 1 : 0;
	size_t n = gdma_desc(b, cmd_type, 0, dep, src, dst, fmt, 0);
	if (!g->a1688)
		setbits(b, 9, 20, c->gdma_id & 0xFFFFF); /* BM1684X: own cmd_id in bits 9-28 */
	gw_put(&c->cmd_g, b, n);
	if (!c->have_first_gdma) {
		memcpy(c->first_gdma_desc, b, sizeof b);
		c->have_first_gdma = 1;
		c->first_gdma_end = c->gdma_free;
	}
	if (c->stale_pending) {
		/* R core 0: the GDMA monitor's first record is a stale inst_id-0 record from an
		 * earlier run, ending before the real first transfer starts (§4.9, §9.2). */
		uint64_t ss = skip_marks(sc > 20000 ? sc - 12000 : 1);
		gdma_record(g, c, ss, skip_marks(ss + 7955), 0, 0, 150528);
		c->stale_pending = 0;
	}
	gdma_record(g, c, sc, ec, (uint32_t)(c->gdma_id - 1), dir, bytes);
	c->gdma_done++;
	sim_gdma(g, c, sc - ps_to_gdma(c, g->t_start), ec - ps_to_gdma(c, g->t_start), dep, dir,
	         bytes);
}

/* A GDMA sys command (no PMU record, as in R). `release` (0 = none): the engine is held
 * until then (wait_msg). */
static void gdma_sys(struct gen *g, struct core *c, unsigned sp, uint64_t dep, unsigned msg,
                     int64_t release)
{
	c->gdma_id++;
	int64_t t = c->gdma_free;
	if (dep && dep <= c->tiu_id && c->tiu_id - dep < RING && c->tiu_end[dep % RING] > t)
		t = c->tiu_end[dep % RING];
	if (release > t)
		t = release;
	c->gdma_free = gdma_to_ps(c, ps_to_gdma(c, t) + 5);
	c->gdma_end[c->gdma_id % RING] = c->gdma_free;
	uint8_t b[96];
	size_t n = gdma_desc(b, 6, sp, dep, 0, 0, 0, msg);
	if (!g->a1688)
		setbits(b, 9, 20, c->gdma_id & 0xFFFFF);
	gw_put(&c->cmd_g, b, n);
	c->gdma_done++;
}

/* ---------------------------------------------------------------------------------------- */
/* global.profile lines.                                                                      */
/* ---------------------------------------------------------------------------------------- */

static void line(struct gen *g, const char *s)
{
	gw_str(&g->prof, "[bmprofile] ");
	gw_str(&g->prof, s);
	gw_put(&g->prof, "\n", 1);
}

static void tiu_line(struct gen *g, struct core *c, uint64_t dep, unsigned bd_func)
{
	struct gw *w = &g->prof;
	if (g->a1688) {
		gw_str(w, "[bmprofile] gdma cmd_id bd_id=0 gdma_id=");
		gw_dec(w, dep);
		gw_str(w, " bd_func=");
		gw_dec(w, bd_func);
		gw_str(w, " core=");
		gw_dec(w, c->idx);
	} else {
		gw_str(w, "[bmprofile] bd cmd_id bd_id=");
		gw_dec(w, c->tiu_id + 1); /* lines are written just before the command is issued */
		gw_str(w, " gdma_id=");
		gw_dec(w, dep);
		gw_str(w, " bd_func=");
		gw_dec(w, bd_func);
	}
	gw_put(w, "\n", 1);
}

static void gdma_line(struct gen *g, struct core *c, uint64_t dep, unsigned dir, unsigned func)
{
	struct gw *w = &g->prof;
	gw_str(w, "[bmprofile] gdma cmd_id bd_id=");
	gw_dec(w, dep);
	gw_str(w, " gdma_id=");
	/* R (BM1688) always writes gdma_id=0 on GDMA lines; BM1684X writes the command's id. */
	gw_dec(w, g->a1688 ? 0 : c->gdma_id + 1);
	gw_str(w, " gdma_dir=");
	gw_dec(w, dir);
	gw_str(w, " gdma_func=");
	gw_dec(w, func);
	if (g->a1688) {
		gw_str(w, " core=");
		gw_dec(w, c->idx);
	}
	gw_put(w, "\n", 1);
}

static void layer_line(struct gen *g, int global, const char *type, uint64_t id)
{
	struct gw *w = &g->prof;
	if (global)
		gw_str(w, "\n[bmprofile] global_layer: layer_id=");
	else
		gw_str(w, "[bmprofile] local_layer: layer_id=");
	gw_dec(w, id);
	gw_str(w, " layer_type=");
	const char *t = type;
	if (g->o->hostile && id % 11 == 5)
		t = hostile_types[(id / 11) % (sizeof hostile_types / sizeof *hostile_types)];
	gw_str(w, t);
	gw_str(w, " layer_name=");
	if (g->o->hostile && id % 3 == 0) {
		gw_str(w, hostile_names[(id / 3) % (sizeof hostile_names / sizeof *hostile_names)]);
	} else {
		gw_str(w, type);
		gw_put(w, "_", 1);
		gw_dec(w, id);
	}
	gw_put(w, "\n", 1);
	g->cur_ltype = type;
	g->cur_layer = id;
}

static void tensor_line(struct gen *g, int64_t id, int is_in, unsigned n, unsigned ch, unsigned h,
                        unsigned wd, int dtype, int is_const, uint64_t gaddr, uint32_t loff,
                        unsigned nslice, unsigned hslice)
{
	struct gw *w = &g->prof;
	gw_str(w, "[bmprofile] tensor_id=");
	gw_sdec(w, id);
	gw_str(w, is_in ? " is_in=1 shape=[" : " is_in=0 shape=[");
	gw_dec(w, n);
	gw_put(w, "x", 1);
	gw_dec(w, ch);
	gw_put(w, "x", 1);
	gw_dec(w, h);
	gw_put(w, "x", 1);
	gw_dec(w, wd);
	gw_str(w, "] dtype=");
	gw_dec(w, (uint64_t)dtype);
	gw_str(w, is_const ? " is_const=1 gaddr=" : " is_const=0 gaddr=");
	gw_dec(w, gaddr);
	gw_str(w, " gsize=0 loffset=");
	gw_dec(w, loff);
	gw_str(w, " nslice=");
	gw_dec(w, nslice);
	gw_str(w, " hslice=");
	gw_dec(w, hslice);
	gw_str(w, " l2addr=0\n");
}

static unsigned dsize(int dt)
{
	return dt == DT_FP32 ? 4 : dt == DT_FP16 ? 2 : 1;
}

/* DDR addresses: BM1688 marks DDR with address bit 39 (§6); R's coefficients live at
 * 0x90_0000_0000 and activations at 0xA0_0000_0000. BM1684X uses plain 4 GiB+ addresses. */
static uint64_t ddr_const(struct gen *g, uint64_t bytes)
{
	uint64_t base = g->a1688 ? 0x9000000000ull : 0x100000000ull;
	uint64_t a = base + (g->const_ddr % 0x40000000ull);
	g->const_ddr += (bytes + 4095) & ~(uint64_t)4095;
	return a;
}

static uint64_t ddr_act(struct gen *g, uint64_t bytes)
{
	uint64_t base = g->a1688 ? 0xA000000000ull : 0x140000000ull;
	uint64_t a = base + (g->act_ddr % 0x20000000ull);
	g->act_ddr += (bytes + 4095) & ~(uint64_t)4095;
	return a;
}

static uint32_t lmem_off(struct gen *g)
{
	return (uint32_t)(rnd(&g->rng) % 64) * 4096u;
}

static uint64_t next_layer_id(struct gen *g)
{
	g->layer_id += 1 + rnd(&g->rng) % 2;
	return g->layer_id;
}

/* ---------------------------------------------------------------------------------------- */
/* Layers.                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static const unsigned chans[] = {32, 64, 128, 256, 512};

static void act_tensor(struct gen *g, struct core *c, int is_in)
{
	tensor_line(g, c->act_id, is_in, 1, c->ch, c->hw, c->hw, g->dtype, 0, 0, c->act_loff, 1,
	            c->hw);
}

static void new_act(struct gen *g, struct core *c, uint64_t id, int is_in)
{
	c->act_id = (int64_t)id;
	c->act_loff = lmem_off(g);
	act_tensor(g, c, is_in);
}

static void layer_load(struct gen *g, struct core *c, int first, uint64_t *left)
{
	uint64_t id = next_layer_id(g);
	layer_line(g, 0, "Load", id);
	unsigned ch = first ? 3 : chans[rnd(&g->rng) % 5];
	unsigned h = first ? 224 : 1, wd = first ? 224 : (unsigned)rrange(&g->rng, 1, 4000);
	int is_const = !first;
	uint64_t bytes = (uint64_t)ch * h * wd * dsize(g->dtype);
	uint64_t ga = is_const ? ddr_const(g, bytes) : ddr_act(g, bytes);
	uint32_t lo = lmem_off(g);
	tensor_line(g, first ? -1 : (int64_t)(id > 4 ? id - 4 : 1), 1, 1, ch, h, wd, g->dtype,
	            is_const, ga, 0, 0, 0);
	tensor_line(g, (int64_t)id, 0, 1, ch, h, wd, g->dtype, is_const, 0, lo, 1, h);
	uint64_t dep = c->tiu_at_block;
	/* Big tensors are loaded in 1-3 slices (nslice/hslice), one GDMA command each. */
	uint64_t slices = first || *left < 2 ? 1 : rrange(&g->rng, 1, *left < 3 ? 2 : 3);
	for (uint64_t i = 0; i < slices; i++) {
		gdma_line(g, c, dep, 0, 0);
		gdma_xfer(g, c, 0, 0, dep, ga + i * (bytes / slices), lo, bytes / slices + 32);
		(*left)--;
	}
	if (is_const)
		c->last_load_id = (int64_t)id;
	if (first) {
		c->ch = ch;
		c->hw = h;
		c->act_id = (int64_t)id;
		c->act_loff = lo;
	}
}

static void layer_store(struct gen *g, struct core *c, uint64_t *left)
{
	uint64_t id = next_layer_id(g);
	layer_line(g, 0, "Store", id);
	act_tensor(g, c, 1);
	tensor_line(g, (int64_t)id, 0, 1, c->ch, c->hw, c->hw, g->dtype, 0, 0, c->act_loff, 1,
	            c->hw);
	uint64_t bytes = (uint64_t)c->ch * c->hw * c->hw * dsize(g->dtype);
	uint64_t ga = ddr_act(g, bytes);
	uint64_t dep = c->tiu_id;
	uint64_t slices = *left < 2 ? 1 : rrange(&g->rng, 1, 2);
	for (uint64_t i = 0; i < slices; i++) {
		gdma_line(g, c, dep, 1, 0);
		gdma_xfer(g, c, 0, 1, dep, ga + i * (bytes / slices), c->act_loff,
		          bytes / slices + 32);
		(*left)--;
	}
}

static uint64_t tiu_dur(struct gen *g, uint64_t lo, uint64_t hi)
{
	return cap_cycles(g, rskew(&g->rng, lo, hi), g->tiu_limit);
}

/* Emits up to *left TIU commands of a compute layer. */
static void layer_conv(struct gen *g, struct core *c, uint64_t *left)
{
	uint64_t id = next_layer_id(g);
	layer_line(g, 0, "Conv2D", id);
	act_tensor(g, c, 1);
	unsigned och = chans[rnd(&g->rng) % 5];
	tensor_line(g, c->last_load_id > 0 ? c->last_load_id : 12, 1, 1, 32, 1,
	            (unsigned)rrange(&g->rng, 64, 4000), g->dtype, 1, 0, lmem_off(g), 1, 1);
	c->ch = och;
	if (c->hw > 7 && rnd(&g->rng) % 4 == 0)
		c->hw /= 2;
	new_act(g, c, id, 0);
	/* A layer group slices big convolutions along H: 1-4 (SYS_TR_ACC + CONV) pairs. */
	uint64_t slices = rrange(&g->rng, 1, 4);
	for (uint64_t i = 0; i<slices && * left> 0; i++) {
		uint8_t b[128];
		if (g->a1688 && *left >= 2) {
			size_t n = tiu_desc(b, TSK_TR_ACC, 0, 0, TR_ACC_DEP,
			                    (rnd(&g->rng) % 8) * 0x4000, 0);
			tiu_line(g, c, TR_ACC_DEP, 12);
			tiu_cmd(g, c, b, n, 0, 5, 0, 0, "BD_SYS_TRWR");
			(*left)--;
		}
		int shortf = rnd(&g->rng) % 8 != 0;
		size_t n =
		    tiu_desc(b, TSK_CONV, 0, shortf, c->gdma_id, 0, g->dtype == DT_FP16 ? 1 : 0);
		tiu_line(g, c, c->gdma_id, 0);
		tiu_cmd(g, c, b, n, c->gdma_id, tiu_dur(g, 2000, 320000) / slices + 1, 0, 0,
		        "CONV");
		(*left)--;
	}
}

static void layer_pool(struct gen *g, struct core *c, uint64_t *left)
{
	uint64_t id = next_layer_id(g);
	layer_line(g, 0, "Pool2D", id);
	act_tensor(g, c, 1);
	if (c->hw > 1)
		c->hw /= 2;
	new_act(g, c, id, 0);
	uint8_t b[128];
	size_t n = tiu_desc(b, TSK_PD, 4, 1, c->gdma_id, 0, 0);
	tiu_line(g, c, c->gdma_id, 1);
	tiu_cmd(g, c, b, n, c->gdma_id, tiu_dur(g, 300, 20000), 0, 0, "PD");
	(*left)--;
}

static void layer_add(struct gen *g, struct core *c, uint64_t *left)
{
	uint64_t id = next_layer_id(g);
	layer_line(g, 0, "Add", id);
	act_tensor(g, c, 1);
	act_tensor(g, c, 1);
	new_act(g, c, id, 0);
	uint64_t k = rrange(&g->rng, 1, 4);
	static const unsigned eus[] = {20, 15, 14, 19};
	for (uint64_t i = 0; i<k && * left> 0; i++) {
		uint8_t b[128];
		size_t n = tiu_desc(b, TSK_AR, eus[rnd(&g->rng) % 4], 1, c->gdma_id, 0, 0);
		tiu_line(g, c, c->gdma_id, 3);
		tiu_cmd(g, c, b, n, c->gdma_id, tiu_dur(g, 20, 5000), 0, 0, "AR");
		(*left)--;
	}
}

static void mm_cmds(struct gen *g, struct core *c, uint64_t *left, uint64_t k)
{
	for (uint64_t i = 0; i<k && * left> 0; i++) {
		uint8_t b[128];
		unsigned eu = rnd(&g->rng) % 3 == 0 ? 1 : (unsigned)rrange(&g->rng, 4, 6);
		size_t n = tiu_desc(b, TSK_MM, eu, 1, c->gdma_id, 0, 0);
		tiu_line(g, c, c->gdma_id, 2);
		tiu_cmd(g, c, b, n, c->gdma_id, tiu_dur(g, 1000, 100000), 0, 0,
		        eu == 1 ? "MM" : "MM2");
		(*left)--;
	}
}

static void par_open(struct gen *g, struct core *c)
{
	line(g, "start parallel.");
	c->in_par = 1;
	c->par_left = (unsigned)rrange(&g->rng, 1, 3);
	c->tiu_at_block = c->tiu_id;
}

static void par_close(struct gen *g, struct core *c)
{
	if (c->in_par)
		line(g, "end parallel.");
	c->in_par = 0;
}

static void layer_matmul(struct gen *g, struct core *c, uint64_t *tleft, uint64_t *gleft)
{
	if (*gleft > 0 && rnd(&g->rng) % 4 == 0) {
		/* A global (DDR to DDR) MatMul, as R's final FC layer: matrix loads and MM2 in
		 * their own parallel blocks, outside any layer group. */
		par_close(g, c);
		uint64_t id = next_layer_id(g);
		unsigned k = (unsigned)rrange(&g->rng, 256, 2048),
		         nout = (unsigned)rrange(&g->rng, 10, 1000);
		layer_line(g, 1, "MatMul", id);
		tensor_line(g, c->act_id, 1, 1, k, 1, 1, g->dtype, 0, ddr_act(g, k), 0, 0, 0);
		uint64_t wbytes = (uint64_t)k * nout;
		uint64_t wa = ddr_const(g, wbytes);
		tensor_line(g, (int64_t)id - 2, 1, k, nout, 1, 1, g->dtype, 1, wa, 0, 0, 0);
		tensor_line(g, (int64_t)id, 0, 1, nout, 1, 1, g->dtype, 0, ddr_act(g, nout), 0, 0,
		            0);
		par_open(g, c);
		uint64_t m = rrange(&g->rng, 1, 3);
		for (uint64_t i = 0; i<m && * gleft> 0; i++) {
			uint64_t dep = c->tiu_id;
			gdma_line(g, c, dep, 0, 1);
			gdma_xfer(g, c, 1, 0, dep, wa + i * (wbytes / m), lmem_off(g),
			          wbytes / m + 32);
			(*gleft)--;
		}
		mm_cmds(g, c, tleft, 1);
		par_close(g, c);
		c->ch = nout;
		c->hw = 1;
		c->act_id = (int64_t)id;
		return;
	}
	uint64_t id = next_layer_id(g);
	layer_line(g, 0, "MatMul", id);
	act_tensor(g, c, 1);
	new_act(g, c, id, 0);
	mm_cmds(g, c, tleft, rrange(&g->rng, 1, 2));
}

/* Picks the engine that is behind its share, then a kind of that engine by the mix. */
static int pick_kind(struct gen *g, uint64_t tl, uint64_t gl, uint64_t tt, uint64_t gt)
{
	int tiu_side;
	if (tl == 0)
		tiu_side = 0;
	else if (gl == 0)
		tiu_side = 1;
	else /* compare the fractions left, tl/tt vs gl/gt, in integers (counts < 2^40) */
		tiu_side = (tl << 20) / tt >= (gl << 20) / gt;
	const unsigned *m = g->o->mix;
	unsigned lo = tiu_side ? GD_CONV : GD_LOAD, hi = tiu_side ? GD_MATMUL : GD_STORE;
	unsigned sum = 0;
	for (unsigned k = lo; k <= hi; k++)
		sum += m[k];
	if (sum == 0)
		return tiu_side ? GD_CONV : GD_LOAD;
	uint64_t r = rnd(&g->rng) % sum;
	for (unsigned k = lo; k <= hi; k++) {
		if (r < m[k])
			return (int)k;
		r -= m[k];
	}
	return (int)hi;
}

/* Emits layers on core c until its segment budgets are used up. */
static void run_segment(struct gen *g, struct core *c, uint64_t tb, uint64_t gb, int first_seg)
{
	uint64_t tl = tb, gl = gb;
	if (first_seg && gl > 0) {
		/* Like R: the net starts by loading its input image. */
		par_open(g, c);
		layer_load(g, c, 1, &gl);
		c->par_left--;
		if (c->par_left == 0)
			par_close(g, c);
	}
	while (tl > 0 || gl > 0) {
		if (!c->in_par) {
			if (rnd(&g->rng) % 6 == 0) {
				line(g, "start parallel.");
				line(g, "end parallel.");
			}
			par_open(g, c);
		}
		int k = pick_kind(g, tl, gl, tb ? tb : 1, gb ? gb : 1);
		switch (k) {
		case GD_CONV:
			layer_conv(g, c, &tl);
			break;
		case GD_POOL:
			layer_pool(g, c, &tl);
			break;
		case GD_ADD:
			layer_add(g, c, &tl);
			break;
		case GD_MATMUL:
			layer_matmul(g, c, &tl, &gl);
			break;
		case GD_LOAD:
			layer_load(g, c, 0, &gl);
			break;
		default:
			layer_store(g, c, &gl);
			break;
		}
		if (c->in_par && --c->par_left == 0)
			par_close(g, c);
	}
	par_close(g, c);
}

/* One synchronisation point across all cores: TIU and GDMA send_msg, then wait_msg until
 * every core has arrived, then an AR (R issues one after every wait). */
static void sync_point(struct gen *g, uint64_t s)
{
	int64_t release = 0;
	/* R: message ids alternate 0x1e/0x1f, the count byte is 4 with two cores; the TIU
	 * immediate holds the id in bits 0-6 and the count in bits 16-18 (§10.1). */
	unsigned msg = (unsigned)(0x1e + (s & 1)) | (2u * g->ncores) << 8;
	uint64_t imm = (uint64_t)(msg & 0xFFu) | (uint64_t)(msg >> 8) << 16;
	uint8_t b[128];
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		c->sync_tiu_dep = c->gdma_id;
		size_t n = tiu_desc(b, TSK_SYS, SYS_SEND, 0, c->gdma_id, imm, 0);
		tiu_cmd(g, c, b, n, c->gdma_id, 5, 0, 0, "SYS");
		c->sync_gdma_dep = c->tiu_id;
		gdma_sys(g, c, GSYS_SEND, c->tiu_id, msg, 0);
		c->arrival = c->tiu_free > c->gdma_free ? c->tiu_free : c->gdma_free;
		if (c->arrival > release)
			release = c->arrival;
	}
	release += 200000; /* 200 ns message latency */
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		/* Lines for this core: send, send, wait, wait, AR (R's order). Only BM1688 has
		 * syncs, and its lines carry dependencies, not own ids. */
		uint64_t tdep = c->sync_tiu_dep, gdep = c->sync_gdma_dep;
		tiu_line(g, c, tdep, 15);
		gdma_line(g, c, gdep, 0, 6);
		tiu_line(g, c, tdep + 1, 15);
		gdma_line(g, c, gdep + 1, 0, 6);
		tiu_line(g, c, tdep + 2, 3);
		/* The first wait_msg starts at the same real time on every core: it is the anchor
		 * the converter aligns cores on (§9.2 step 5). */
		int64_t nb = s == 0 ? release - 5556 : 0;
		size_t n = tiu_desc(b, TSK_SYS, SYS_WAIT, 0, c->gdma_id, imm, 0);
		tiu_cmd(g, c, b, n, c->gdma_id, 5, nb, release, "SYS");
		gdma_sys(g, c, GSYS_WAIT, c->tiu_id, msg, release);
		n = tiu_desc(b, TSK_AR, 19, 1, c->gdma_id, 0, 0);
		tiu_cmd(g, c, b, n, c->gdma_id, 24, 0, 0, "AR");
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Planning.                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static void plan(struct gen *g)
{
	const struct gd_opts *o = g->o;
	uint64_t N = o->cmds;
	uint64_t ns = g->nsync;
	uint64_t ft = 3 * ns + 1, fg = 2 * ns + 1;
	/* R: 257 TIU / 158 GDMA commands on core 0, i.e. 62 % TIU. */
	uint64_t nt = N * 62 / 100;
	if (nt < ft + 1)
		nt = ft + 1;
	if (N - nt < fg + 1)
		nt = N - fg - 1;
	uint64_t addr = 0x125ADA000ull + (o->seed % 64) * 0x100000ull;
	uint64_t off = 44 + (uint64_t)g->ncores * 52;
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		c->idx = i;
		c->n_tiu = nt;
		c->n_gdma = N - nt;
		c->lay_tiu = nt - ft;
		c->lay_gdma = N - nt - fg;
		c->tiu_recs = c->n_tiu;
		c->gdma_recs = c->lay_gdma + (g->a1688 && i == 0 ? 2 : 0);
		if (g->a1688)
			c->dyn_recs = i == 0 ? 6 : 5;
		else
			c->dyn_recs = 4;
		c->extra_len = i == 0 ? 12 + 256 : 0;
		c->bd_base = addr;
		addr = align_up(addr + nt * 128 + 128, 4096);
		c->gdma_base = addr;
		addr = align_up(addr + (N - nt) * 96 + 128, 4096);
		c->off_bd = off;
		off += 8 + c->tiu_recs * 32;
		c->off_gdma = off;
		off += 8 + c->gdma_recs * g->gdma_rec_size;
		c->off_dyn = off;
		off += 8 + c->dyn_recs * 32;
		c->off_extra = off;
		if (c->extra_len)
			off += 8 + c->extra_len;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Closing blocks: DYN_DATA, DYN_EXTRA, SUMMARY, COMMAND.                                      */
/* ---------------------------------------------------------------------------------------- */

static void dyn_rec(struct gw *w, uint32_t pid, uint32_t type, uint64_t id, uint64_t b, uint64_t e)
{
	gw_u32(w, pid);
	gw_u32(w, type);
	gw_u64(w, id);
	gw_u64(w, b);
	gw_u64(w, e);
}

/* `base` = the MCU timer at this core's epoch. */
static void write_dyn(struct gen *g, struct core *c, uint64_t base, struct gw *w)
{
	gw_u32(w, BLK_DYN);
	gw_u32(w, (uint32_t)(c->dyn_recs * 32));
	uint64_t t0 = base + ps_to_tick(g, c, c->first_start);
	uint64_t t1 = base + ps_to_tick(g, c, c->last_end);
	uint64_t tg =
	    base + ps_to_tick(g, c, c->first_gdma_end ? c->first_gdma_end : c->first_start);
	/* NODE_WAIT for the whole subnet: gdma id in bits 20-39, bd id in bits 0-19 (§4.7). */
	uint64_t all = (c->n_gdma & 0xFFFFF) << 20 | (c->n_tiu & 0xFFFFF);
	uint32_t pid = 0;
	/* Record 0: timer base and ns per tick (§4.7). */
	dyn_rec(w, pid++, 0xFFFFFFFFu, 0, base, 20);
	if (g->a1688) {
		if (c->idx == 0) {
			/* NODE_SET: engine GDMA (bit 40), gdma_id 1, version 1; a point event. */
			uint64_t set = 1ull << 60 | 1ull << 40 | 1ull << 20;
			dyn_rec(w, pid++, 1, set, t0 > 8 ? t0 - 8 : t0, ~0ull);
			dyn_rec(w, pid++, 2, 1ull << 20, t0 > 4 ? t0 - 4 : t0, tg);
			dyn_rec(w, pid++, 5, 0, tg + 1, tg + 7);
			dyn_rec(w, pid++, 2, all, tg + 8, t1);
			dyn_rec(w, pid++, 5, 0, t1 + 2, t1 + 8);
		} else {
			dyn_rec(w, pid++, 2, 0, t0 > 4 ? t0 - 4 : t0, t0);
			dyn_rec(w, pid++, 5, 0, t0 + 1, t0 + 7);
			dyn_rec(w, pid++, 2, all, t0 + 8, t1);
			dyn_rec(w, pid++, 5, 0, t1 + 2, t1 + 8);
		}
	} else {
		uint64_t set = 1ull << 60 | 1ull << 40 | 1ull << 20;
		dyn_rec(w, pid++, 1, set, t0 > 8 ? t0 - 8 : t0, t0 > 8 ? t0 - 2 : t0);
		dyn_rec(w, pid++, 2, 1ull << 20, t0 > 4 ? t0 - 4 : t0, tg);
		dyn_rec(w, pid++, 2, all, tg + 1, t1);
	}
	if (c->extra_len) {
		/* DYN_EXTRA: the NODE_SET's pushed descriptor as a 256-byte BINARY item (§4.8). */
		gw_u32(w, BLK_EXTRA);
		gw_u32(w, (uint32_t)c->extra_len);
		gw_u32(w, 1);
		gw_u32(w, 1);
		gw_u32(w, 256);
		gw_put(w, c->first_gdma_desc, 96);
		gw_zero(w, 160);
	}
}

static void write_head(struct gen *g, struct gw *w, int64_t span_ps)
{
	gw_u32(w, BLK_SUMMARY);
	gw_u32(w, 36);
	gw_u32(w, 0); /* iteration */
	gw_u32(w, 0); /* subnet_id */
	gw_u32(w, 0); /* TPU */
	uint64_t span_us = (uint64_t)span_ps / 1000000;
	gw_u64(w, g->host_base);
	gw_u64(w, g->host_base + span_us + 870000); /* R: ~870 ms of host wall incl. sync */
	gw_u64(w, 0);                               /* static */
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		gw_u32(w, BLK_COMMAND);
		gw_u32(w, 44);
		gw_u64(w, c->gdma_base);
		gw_u64(w, 0);
		gw_u64(w, c->bd_base);
		gw_u64(w, 0);
		gw_u32(w, 1);
		gw_u32(w, (uint32_t)c->n_gdma);
		gw_u32(w, (uint32_t)c->n_tiu);
	}
}

static void mem_line(struct gen *g, uint64_t addr, uint64_t size, uint64_t alloc, uint64_t fr,
                     const char *desc)
{
	struct gw *w = &g->prof;
	gw_str(w, "[bmprofile] mtype=1 addr=");
	gw_dec(w, addr);
	gw_str(w, " size=");
	gw_dec(w, size);
	gw_str(w, " alloc=");
	gw_dec(w, alloc);
	gw_str(w, " free=");
	gw_dec(w, fr);
	gw_str(w, " desc=");
	gw_str(w, desc);
	gw_put(w, "\n", 1);
}

static void write_tail_lines(struct gen *g, int64_t span_ps)
{
	struct gw *w = &g->prof;
	line(g, "end to run subnet_id=0");
	gw_str(w, "[bmprofile] core_list=");
	for (unsigned i = 0; i < g->ncores; i++) {
		gw_dec(w, i);
		gw_put(w, ",", 1);
	}
	gw_put(w, "\n", 1);
	uint64_t h = g->host_base - 100000,
	         fr = g->host_base + (uint64_t)span_ps / 1000000 + 1590000;
	mem_line(g, 0x125800000ull, 2158592, h, fr, "neuron_mem0");
	mem_line(g, 0x123F00000ull, 25997312, h + 38, 0, "coeff");
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		mem_line(g, c->bd_base, c->cmd_t.total, h + 236 + i * 9000, fr + 13 + i * 30,
		         "bd_cmd_mem");
		mem_line(g, c->gdma_base, c->cmd_g.total, h + 5863 + i * 9000, fr + 25 + i * 30,
		         "gdma_cmd_mem");
	}
	uint64_t taddr =
	    align_up(g->core[g->ncores - 1].gdma_base + g->core[g->ncores - 1].cmd_g.total, 4096);
	mem_line(g, taddr, 1000, h + 12618, 0, "tensor");
	mem_line(g, taddr + 4096, 150528, h + 12682, 0, "tensor");
	uint64_t a = align_up(taddr + 4096 + 150528, 4096);
	for (unsigned i = 0; i < g->ncores; i++) {
		mem_line(g, a, 16777216, h + 16668 + i * 43000, fr - 94912 + i * 93000,
		         "dyn_profile");
		a += 16777216;
		mem_line(g, a, 33554432, h + 21327 + i * 43000, fr - 102438 + i * 19000,
		         "bdc_perf_monitor");
		a += 33554432;
		mem_line(g, a, 268435456, h + 57353 + i * 43000, fr - 94935 + i * 84000,
		         "gdma_perf_monitor");
		a += 268435456;
	}
}

/* net_stat.sim: the first SIM_MAX items of each engine of core 0 in the §7 layout. */
static int write_sim(struct gen *g, const char *dir, int64_t span_ps, struct tp_diag *d)
{
	struct gfile f;
	struct gw w;
	int rc = gf_open(&f, dir, "net_stat.sim", d);
	if (rc == TP_OK)
		rc = gw_init(&w, f.fd, 0, 65536);
	if (rc != TP_OK) {
		gf_abort(&f);
		gf_free(&f);
		return rc == TP_ENOMEM ? tp_diag_set(d, rc, "out of memory") : rc;
	}
	gw_str(&w, "--------------------------------------\n"
	           "s: start time, b: bd_id, g: gdma_id, e: end time, t: cmd cost time, dr: "
	           "direction, sz: memsize, bw: bandwidth\n"
	           "--------------------------------------\n");
	char col[256];
	snprintf(col, sizeof col, "%-93s%-93s", "ENGINE_BD", "ENGINE_GDMA");
	gw_str(&w, col);
	gw_put(&w, "\n", 1);
	unsigned ti = 0, gi = 0;
	while (ti < g->ntsim || gi < g->ngsim) {
		char item[160];
		int take_t = gi >= g->ngsim || (ti < g->ntsim && g->tsim[ti].s <= g->gsim[gi].s);
		if (take_t) {
			const struct sim_item *it = &g->tsim[ti++];
			snprintf(item, sizeof item, "%s_%llu|%s|s:%llu|b:%llu|g:%llu|e:%llu|t:%llu",
			         it->ltype ? it->ltype : "Sys", (unsigned long long)it->layer_id,
			         it->op, (unsigned long long)it->s, (unsigned long long)it->bd,
			         (unsigned long long)it->gd, (unsigned long long)it->e,
			         (unsigned long long)(it->e - it->s + 1));
			snprintf(col, sizeof col, "%-93s%-93s", item, "");
		} else {
			const struct sim_item *it = &g->gsim[gi++];
			uint64_t t = it->e - it->s + 1;
			/* bandwidth in GB/s at the 750 MHz GDMA clock, two decimals, integer maths
			 */
			uint64_t bw100 = t ? it->bytes * 75 / t : 0;
			snprintf(item, sizeof item,
			         "%s_%llu|%s|s:%llu|b:%llu|g:%llu|e:%llu|t:%llu|dr:%u|sz:%llu|bw:%"
			         "llu.%02llu",
			         it->ltype ? it->ltype : "Sys", (unsigned long long)it->layer_id,
			         it->op, (unsigned long long)it->s, (unsigned long long)it->bd,
			         (unsigned long long)it->gd, (unsigned long long)it->e,
			         (unsigned long long)t, it->dir, (unsigned long long)it->bytes,
			         (unsigned long long)(bw100 / 100),
			         (unsigned long long)(bw100 % 100));
			snprintf(col, sizeof col, "%-93s%-93s", "", item);
		}
		gw_str(&w, col);
		gw_put(&w, "\n", 1);
	}
	struct core *c = &g->core[0];
	uint64_t total = (uint64_t)span_ps * 9 / 10000;
	char tail[512];
	snprintf(tail, sizeof tail,
	         "--------------------------------------\n"
	         "API_END total_cycle:%llu|b:%llu|g:%llu\n"
	         "TCYC : %llu. (bdc_cycle:%llu, gdma_cycle:%llu)\n"
	         "GDMA SUMMARY : |dr[0] S2L:%llu|dr[1] L2S:%llu|dr[2] S2S:0|dr[3] L2L:0\n"
	         "DDR BW USAGE : 50.00000000%%\n"
	         "#######################################\n\n\n"
	         "flops: %llu, runtime: %llu.%06llums, ComputationAbility: 1.000000T\n",
	         (unsigned long long)total, (unsigned long long)(c->n_tiu - 1),
	         (unsigned long long)(c->n_gdma - 1), (unsigned long long)total,
	         (unsigned long long)c->tiu_cycles_sum, (unsigned long long)(total / 2),
	         (unsigned long long)g->sim_bytes[0], (unsigned long long)g->sim_bytes[1],
	         (unsigned long long)(c->tiu_cycles_sum * 512),
	         (unsigned long long)((uint64_t)span_ps / 1000000000),
	         (unsigned long long)((uint64_t)span_ps / 1000 % 1000000));
	gw_str(&w, tail);
	gw_flush(&w);
	int err = w.err;
	gw_free(&w);
	if (err) {
		gf_abort(&f);
		gf_free(&f);
		return tp_diag_set(d, TP_EOUTPUT, "net_stat.sim: write failed: %s", strerror(err));
	}
	rc = gf_commit(&f, d);
	gf_free(&f);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Driver.                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static int first_err(struct gen *g, const char **path)
{
	if (g->prof.err) {
		*path = g->fp.tmp;
		return g->prof.err;
	}
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		if (c->cmd_t.err) {
			*path = c->ft.tmp;
			return c->cmd_t.err;
		}
		if (c->cmd_g.err) {
			*path = c->fg.tmp;
			return c->cmd_g.err;
		}
		if (c->rec_t.err || c->rec_g.err) {
			*path = g->fi.tmp;
			return c->rec_t.err ? c->rec_t.err : c->rec_g.err;
		}
	}
	return 0;
}

int gd_generate(const struct gd_opts *o, const char *outdir, struct gd_result *res,
                struct tp_diag *d)
{
	int rc = gd_check(o, NULL, d);
	if (rc != TP_OK)
		return rc;
	rc = tp_mkdirs(outdir, d);
	if (rc != TP_OK)
		return rc;
	struct gen *g = tp_calloc(1, sizeof *g);
	if (!g)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	g->o = o;
	g->d = d;
	g->rng = o->seed ^ 0x7470757072F0F11Eull;
	g->a1688 = o->arch == ARCH_BM1688;
	g->ncores = o->cores;
	g->nsync = nsync_for(o);
	g->gdma_rec_size = g->a1688 ? 256 : 192;
	g->dtype = g->a1688 ? DT_INT8 : DT_FP16;
	g->layer_id = 14;
	g->host_base = 1705374960000000ull + (o->seed % 1000000) * 1000;
	for (unsigned i = 0; i < 2; i++) {
		g->core[i].ft.fd = g->core[i].fg.fd = -1;
	}
	g->fp.fd = g->fi.fd = -1;
	plan(g);
	for (unsigned i = 0; i < g->ncores; i++) {
		/* Block lengths and COMMAND counts are u32 fields. */
		const struct core *c = &g->core[i];
		if (c->gdma_recs * g->gdma_rec_size > 0xFFFFFFFFull ||
		    c->tiu_recs * 32 > 0xFFFFFFFFull) {
			rc = tp_diag_set(
			    d, TP_EUSAGE,
			    "--cmds %llu is too large: a MONITOR block would exceed the 4 GiB "
			    "that its u32 length can describe",
			    (unsigned long long)o->cmds);
			tp_free(g);
			return rc;
		}
	}

	/* Open files and writers. */
	rc = gf_open(&g->fp, outdir, "global.profile", d);
	if (rc == TP_OK)
		rc = gf_open(&g->fi, outdir, "iter0.profile", d);
	for (unsigned i = 0; rc == TP_OK && i < g->ncores; i++) {
		struct core *c = &g->core[i];
		char name[64];
		snprintf(name, sizeof name, "cmd_%llx_%u_0.dat", (unsigned long long)c->bd_base, i);
		rc = gf_open(&c->ft, outdir, name, d);
		if (rc == TP_OK) {
			snprintf(name, sizeof name, "cmd_%llx_%u_1.dat",
			         (unsigned long long)c->gdma_base, i);
			rc = gf_open(&c->fg, outdir, name, d);
		}
	}
	if (rc == TP_OK)
		rc = gw_init(&g->prof, g->fp.fd, 0, WBUF);
	for (unsigned i = 0; rc == TP_OK && i < g->ncores; i++) {
		struct core *c = &g->core[i];
		rc = gw_init(&c->cmd_t, c->ft.fd, 0, WBUF);
		if (rc == TP_OK)
			rc = gw_init(&c->cmd_g, c->fg.fd, 0, WBUF);
		if (rc == TP_OK)
			rc = gw_init(&c->rec_t, g->fi.fd, c->off_bd, WBUF);
		if (rc == TP_OK)
			rc = gw_init(&c->rec_g, g->fi.fd, c->off_gdma, WBUF);
	}
	if (rc == TP_ENOMEM)
		tp_diag_set(d, rc, "out of memory");
	if (rc != TP_OK)
		goto out;

	/* Clocks. Core 0's TIU counter starts near R's 452 M cycles (~0.5 s of uptime), or just
	 * below 2^32 with --wrap; later cores' counters start near R's 84 480. */
	uint64_t start_cyc = o->wrap ? 0xFFFFFFFFull - 20000 - rnd(&g->rng) % 1000
	                             : 452000000ull + rnd(&g->rng) % 1000000;
	struct core *c0 = &g->core[0];
	c0->epoch = 0;
	g->t_start = tiu_to_ps(c0, start_cyc);
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		if (i > 0)
			c->epoch = g->t_start - (int64_t)rrange(&g->rng, 80000000, 100000000);
		c->tiu_free = c->gdma_free =
		    g->t_start + (int64_t)(i * rrange(&g->rng, 1000000, 2000000));
		c->stale_pending = g->a1688 && i == 0;
		c->ch = 3;
		c->hw = 224;
		c->act_id = -1;
		c->last_load_id = -1;
		gw_u32(&c->rec_t, BLK_BD);
		gw_u32(&c->rec_t, (uint32_t)(c->tiu_recs * 32));
		gw_u32(&c->rec_g, BLK_GDMA);
		gw_u32(&c->rec_g, (uint32_t)(c->gdma_recs * g->gdma_rec_size));
	}
	if (!o->wrap) {
		/* Worst case every command of every core runs back to back; keep that below the
		 * first 32-bit wrap of the fastest counter (TIU, 900 MHz) with a 1 M-cycle margin.
		 */
		uint64_t budget_cyc = 0xFFFFFFFFull - start_cyc - 1000000;
		int64_t budget_ps = (int64_t)(budget_cyc * 10000 / 9) - (int64_t)g->nsync * 400000;
		g->cap_ps = budget_ps / (int64_t)(g->ncores * o->cmds);
		g->tiu_limit = (uint64_t)g->cap_ps * 9 / 10000;
		g->gdma_limit = (uint64_t)g->cap_ps * 3 / 4000;
		g->tiu_limit = g->tiu_limit > 8 ? g->tiu_limit - 3 : 5;
		g->gdma_limit = g->gdma_limit > 80 ? g->gdma_limit - 40 : 40;
	}

	/* global.profile header and compiler log. */
	{
		struct gw *w = &g->prof;
		gw_str(w, "[bmprofile] arch=");
		gw_dec(w, (uint64_t)o->arch);
		gw_str(w, "\n[bmprofile] net_name=");
		const char *net =
		    o->net ? o->net
		    : o->hostile
		        ? "net</script><img src=x onerror=alert(1)> \"q\" \\b &amp; \xc3\xbc"
		        : "gen_net";
		gw_str(w, net);
		gw_str(w,
		       g->a1688 ? "\n[bmprofile] tpu_freq=0\n" : "\n[bmprofile] tpu_freq=1000\n");
		gw_str(w, "[bmprofile] is_mlir=1\n...Start Profile Log...\n");
		line(g, "start to run subnet_id=0");
		line(g, "start parallel.");
		line(g, "end parallel.");
	}

	/* Layers, segment by segment; syncs between segments on multi-core BM1688. */
	uint64_t nseg = g->nsync + 1;
	uint64_t tleft[2], gleft[2];
	for (unsigned i = 0; i < g->ncores; i++) {
		tleft[i] = g->core[i].lay_tiu;
		gleft[i] = g->core[i].lay_gdma;
	}
	for (uint64_t s = 0; s < nseg; s++) {
		for (unsigned i = 0; i < g->ncores; i++) {
			struct core *c = &g->core[i];
			/* Cores > 0 start with the sync (R: core 1's first command is send_msg), so
			 * their layers are spread over the segments after the first sync. */
			uint64_t tb = 0, gb = 0;
			if (i == 0 || s > 0) {
				tb = tleft[i] / (nseg - s);
				gb = gleft[i] / (nseg - s);
			}
			tleft[i] -= tb;
			gleft[i] -= gb;
			run_segment(g, c, tb, gb, i == 0 && s == 0);
		}
		if (s + 1 < nseg)
			sync_point(g, s);
	}
	/* Final commands: TIU system.end and GDMA chain_end (no node lines, §3.1). */
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		uint8_t b[128];
		size_t n = tiu_desc(b, TSK_SYS, SYS_END, 0, 0, 0, 0);
		tiu_cmd(g, c, b, n, 0, 5, 0, 0, "SYS");
		gdma_sys(g, c, GSYS_CHAIN_END, 0, 0, 0);
		if (g->a1688 && i == 0) {
			/* R core 0: a trailing inst_id-0 record after the last real transfer. */
			uint64_t sc = skip_marks(ps_to_gdma(c, c->gdma_free) + 1200);
			gdma_record(g, c, sc, skip_marks(sc + 221), 0, 1, 1024);
		}
		/* Zero padding to a multiple of 128 bytes, as R's files. */
		gw_zero(&c->cmd_t, (size_t)(align_up(c->cmd_t.total, 128) - c->cmd_t.total));
		gw_zero(&c->cmd_g, (size_t)(align_up(c->cmd_g.total, 128) - c->cmd_g.total));
	}

	int64_t first = g->core[0].first_start, last = 0;
	for (unsigned i = 0; i < g->ncores; i++) {
		if (g->core[i].first_start < first)
			first = g->core[i].first_start;
		if (g->core[i].last_end > last)
			last = g->core[i].last_end;
	}
	int64_t span_ps = last - first;
	write_tail_lines(g, span_ps);

	/* Consistency of the plan (an internal error if violated). */
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		if (c->tiu_done != c->n_tiu || c->gdma_done != c->n_gdma ||
		    c->grec_done != c->gdma_recs || c->tiu_id != c->n_tiu ||
		    c->gdma_id != c->n_gdma) {
			rc = tp_diag_set(
			    d, TP_ERANGE,
			    "internal: core %u generated %llu/%llu TIU, %llu/%llu GDMA, %llu/%llu "
			    "GDMA records",
			    i, (unsigned long long)c->tiu_done, (unsigned long long)c->n_tiu,
			    (unsigned long long)c->gdma_done, (unsigned long long)c->n_gdma,
			    (unsigned long long)c->grec_done, (unsigned long long)c->gdma_recs);
			goto out;
		}
	}

	/* Closing blocks of iter0.profile: DYN per core, then SUMMARY + COMMAND at offset 0. */
	{
		uint64_t tick_base = 21366377914446ull + (o->seed % 100000) * 1000;
		for (unsigned i = 0; i < g->ncores && rc == TP_OK; i++) {
			struct core *c = &g->core[i];
			struct gw w;
			rc = gw_init(&w, g->fi.fd, c->off_dyn, 4096);
			if (rc != TP_OK) {
				tp_diag_set(d, rc, "out of memory");
				goto out;
			}
			write_dyn(g, c, tick_base + (uint64_t)(c->epoch - g->core[0].epoch) / 20000,
			          &w);
			gw_flush(&w);
			if (w.err)
				c->rec_t.err = w.err;
			gw_free(&w);
		}
		struct gw w;
		rc = gw_init(&w, g->fi.fd, 0, 4096);
		if (rc != TP_OK) {
			tp_diag_set(d, rc, "out of memory");
			goto out;
		}
		write_head(g, &w, span_ps);
		gw_flush(&w);
		if (w.err)
			g->core[0].rec_t.err = w.err;
		gw_free(&w);
	}

	gw_flush(&g->prof);
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		gw_flush(&c->cmd_t);
		gw_flush(&c->cmd_g);
		gw_flush(&c->rec_t);
		gw_flush(&c->rec_g);
	}
	const char *epath = NULL;
	int err = first_err(g, &epath);
	if (err) {
		rc = tp_diag_set(d, TP_EOUTPUT, "%s: write failed: %s", epath, strerror(err));
		goto out;
	}
	if (!o->no_sim) {
		rc = write_sim(g, outdir, span_ps, d);
		if (rc != TP_OK)
			goto out;
	}
	rc = gf_commit(&g->fp, d);
	if (rc == TP_OK)
		rc = gf_commit(&g->fi, d);
	for (unsigned i = 0; rc == TP_OK && i < g->ncores; i++) {
		rc = gf_commit(&g->core[i].ft, d);
		if (rc == TP_OK)
			rc = gf_commit(&g->core[i].fg, d);
	}
	if (rc == TP_OK && res) {
		memset(res, 0, sizeof *res);
		uint64_t iter_size =
		    g->core[g->ncores - 1].off_extra +
		    (g->core[g->ncores - 1].extra_len ? 8 + g->core[g->ncores - 1].extra_len : 0);
		res->bytes_total = g->prof.total + iter_size;
		for (unsigned i = 0; i < g->ncores; i++) {
			struct core *c = &g->core[i];
			res->tiu_cmds[i] = c->n_tiu;
			res->gdma_cmds[i] = c->n_gdma;
			res->tiu_recs[i] = c->tiu_recs;
			res->gdma_recs[i] = c->gdma_recs;
			res->dyn_recs[i] = c->dyn_recs;
			res->tiu_bytes[i] = c->cmd_t.total;
			res->gdma_bytes[i] = c->cmd_g.total;
			res->bd_base[i] = c->bd_base;
			res->gdma_base[i] = c->gdma_base;
			res->bytes_total += c->cmd_t.total + c->cmd_g.total;
		}
		res->span_ns = (uint64_t)span_ps / 1000;
	}
out:
	if (rc != TP_OK) {
		gf_abort(&g->fp);
		gf_abort(&g->fi);
		for (unsigned i = 0; i < g->ncores; i++) {
			gf_abort(&g->core[i].ft);
			gf_abort(&g->core[i].fg);
		}
	}
	gw_free(&g->prof);
	gf_free(&g->fp);
	gf_free(&g->fi);
	for (unsigned i = 0; i < 2; i++) {
		struct core *c = &g->core[i];
		gw_free(&c->cmd_t);
		gw_free(&c->cmd_g);
		gw_free(&c->rec_t);
		gw_free(&c->rec_g);
		gf_free(&c->ft);
		gf_free(&c->fg);
	}
	tp_free(g);
	return rc;
}
