/*
 * gd_desc.c — what the generator writes per command: the clock conversions of each core, the
 * TIU and GDMA descriptors of the cmd_*.dat files (§6), the commands with their PMU records
 * and net_stat.sim items, and iter0.profile's DYN_DATA and SUMMARY/COMMAND blocks.
 */
#include "gd_int.h"

#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Clock conversions (per core, relative to its epoch).                                      */
/* ---------------------------------------------------------------------------------------- */

/* Picoseconds to cycles of a mhz clock (ceil) and back (ceil). */
static uint64_t ps_to_cyc(uint64_t ps, uint64_t mhz)
{
	return (ps * mhz + 999999) / 1000000;
}
static uint64_t cyc_to_ps(uint64_t cyc, uint64_t mhz)
{
	return (cyc * 1000000 + mhz - 1) / mhz;
}

static uint64_t ps_to_tiu(const struct core *c, int64_t t) /* ceil */
{
	return ps_to_cyc((uint64_t)(t - c->epoch), c->tiu_mhz);
}
int64_t gd_tiu_to_ps(const struct core *c, uint64_t cyc)
{
	return c->epoch + (int64_t)cyc_to_ps(cyc, c->tiu_mhz);
}
uint64_t gd_ps_to_gdma(const struct core *c, int64_t t)
{
	return ps_to_cyc((uint64_t)(t - c->epoch), c->gdma_mhz);
}
static int64_t gdma_to_ps(const struct core *c, uint64_t cyc)
{
	return c->epoch + (int64_t)cyc_to_ps(cyc, c->gdma_mhz);
}
static uint64_t ps_to_tick(const struct gen *g, const struct core *c, int64_t t)
{
	(void)g;
	return (uint64_t)(t - c->epoch) / 20000;
}

/* A PMU counter value of 0 ends the BM1688 record list and 0xFFFFFFFF the BM1684X one
 * (§4.5), so a real record never holds either; step over them. */
uint64_t gd_skip_marks(uint64_t cyc)
{
	while ((uint32_t)cyc == 0 || (uint32_t)cyc == 0xFFFFFFFFu)
		cyc++;
	return cyc;
}

uint64_t gd_cap_cycles(struct gen *g, uint64_t cyc, uint64_t limit)
{
	if (limit && cyc > limit)
		cyc = limit / 2 + rnd(&g->rng) % (limit - limit / 2 + 1);
	return cyc ? cyc : 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Descriptors (§6).                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* Builds a TIU descriptor in b (128 bytes, zeroed here) and returns its length. */
size_t gd_tiu_desc(uint8_t *b, unsigned typ, unsigned eu, int shortf, uint64_t dep, uint64_t imm,
                   unsigned prec)
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
int64_t gd_tiu_cmd(struct gen *g, struct core *c, uint8_t *desc, size_t dlen, uint64_t dep,
                   uint64_t dur, int64_t not_before, int64_t end_at, const char *op)
{
	c->tiu_id++;
	int64_t t = c->tiu_free;
	if (dep && dep <= c->gdma_id && c->gdma_id - dep < RING && c->gdma_end[dep % RING] > t)
		t = c->gdma_end[dep % RING];
	if (not_before > t)
		t = not_before;
	uint64_t sc = ps_to_tiu(c, t);
	/* BM1684, BM1684X: the reader re-anchors TIU on command 1 (§9.1), on BM1684 only to a
	 * whole TIU cycle (550 vs 575 MHz): command 1 starts at once, every other 2-3 cycles
	 * late, so the re-anchored timeline still keeps every dependency. */
	if (!end_at && !g->a1688)
		sc += c->tiu_id == 1 ? 0 : 2 + rnd(&g->rng) % 2;
	else if (!end_at)
		sc += rnd(&g->rng) % 3; /* R: consecutive TIU records are mostly back to back */
	sc = gd_skip_marks(sc);
	uint64_t ec;
	if (end_at) {
		ec = ps_to_tiu(c, end_at);
		if (ec < sc + 4)
			ec = sc + 4;
	} else {
		ec = sc + dur - 1;
	}
	ec = gd_skip_marks(ec);
	uint64_t cyc = ec - sc + 1;
	int64_t start = gd_tiu_to_ps(c, sc);
	c->tiu_free = gd_tiu_to_ps(c, ec + 1);
	c->tiu_end[c->tiu_id % RING] = c->tiu_free;
	if (c->first_start == 0 || start < c->first_start)
		c->first_start = start;
	if (c->tiu_free > c->last_end)
		c->last_end = c->tiu_free;
	c->tiu_cycles_sum += cyc;

	if (g->a1684) {
		uint8_t b[128];
		gd1684_tiu_desc(g, c, b, desc, dep);
		gw_put(&c->cmd_t, b, 128);
	} else {
		if (!g->a1688) {
			/* BM1684X descriptors carry their own id: bits 1-20 cmd_id, 21-40 the
			 * GDMA dependency (the layout the project's reader assumes; not in the
			 * spec). */
			setbits(desc, 1, 20, c->tiu_id & 0xFFFFF);
			setbits(desc, 21, 20, dep & 0xFFFFF);
			gd1684x_tiu_shapes(g, c, desc, dlen);
		}
		gw_put(&c->cmd_t, desc, dlen);
	}
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
void gd_gdma_record(struct gen *g, struct core *c, uint64_t sc, uint64_t ec, uint32_t inst,
                    unsigned dir, uint64_t bytes)
{
	uint8_t r[256];
	memset(r, 0, sizeof r);
	uint32_t b = (uint32_t)bytes, h0 = b / 2, h1 = b - b / 2;
	put_le32(r, (uint32_t)sc);
	put_le32(r + 4, (uint32_t)ec);
	put_le32(r + 8, inst & (g->a1684 ? 0xFFFFu : 0xFFFFFu)); /* BM1684: u16 id, u16 reserved */
	uint32_t s1 = (uint32_t)gd_skip_marks(sc + 4),
	         e1 = (uint32_t)gd_skip_marks(ec > sc + 40 ? ec - 30 : ec);
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
void gd_gdma_xfer(struct gen *g, struct core *c, unsigned cmd_type, unsigned dir, uint64_t dep,
                  uint64_t ddr, uint32_t lmem, uint64_t bytes)
{
	c->gdma_id++;
	/* Bytes per GDMA cycle 20..40 (R: 150 528 B in 5 808 cycles); a fixed setup cost. */
	uint64_t bpc = rrange(&g->rng, 20, 40);
	uint64_t cyc = 30 + bytes / bpc;
	if (g->gdma_limit && cyc > g->gdma_limit) {
		cyc = gd_cap_cycles(g, cyc, g->gdma_limit);
		bytes = (cyc > 30 ? cyc - 30 : 1) * bpc;
	}
	bytes = (bytes + 31) & ~(uint64_t)31;
	if (bytes > 0xFFFFFFF0u)
		bytes = 0xFFFFFFE0u;
	int64_t t = c->gdma_free;
	if (dep && dep <= c->tiu_id && c->tiu_id - dep < RING && c->tiu_end[dep % RING] > t)
		t = c->tiu_end[dep % RING];
	uint64_t sc = gd_skip_marks(gd_ps_to_gdma(c, t) + rrange(&g->rng, 4, 40));
	uint64_t ec = gd_skip_marks(sc + cyc - 1);
	c->gdma_free = gdma_to_ps(c, ec + 1);
	c->gdma_end[c->gdma_id % RING] = c->gdma_free;
	if (c->first_start == 0 || gdma_to_ps(c, sc) < c->first_start)
		c->first_start = gdma_to_ps(c, sc);
	if (c->gdma_free > c->last_end)
		c->last_end = c->gdma_free;

	uint8_t b[128];
	uint64_t src = dir == 0 ? ddr : lmem, dst = dir == 0 ? lmem : ddr;
	unsigned fmt = g->dtype == DT_FP32 ? 2 : g->dtype == DT_FP16 ? 1 : 0;
	size_t n;
	if (g->a1684) {
		gd1684_gdma_desc(g, c, b, cmd_type, dir, dep, src, dst, bytes);
		n = 128;
	} else {
		n = gdma_desc(b, cmd_type, 0, dep, src, dst, fmt, 0);
		if (!g->a1688) { /* BM1684X: own cmd_id in bits 9-28, non-zero shapes */
			setbits(b, 9, 20, c->gdma_id & 0xFFFFF);
			gd1684x_gdma_shapes(b, bytes, gd_dsize(g->dtype));
		}
	}
	gw_put(&c->cmd_g, b, n);
	if (!c->have_first_gdma) {
		memcpy(c->first_gdma_desc, b, sizeof c->first_gdma_desc);
		c->have_first_gdma = 1;
		c->first_gdma_end = c->gdma_free;
	}
	if (c->fw_pending) {
		/* BM1684/BM1684X, as the real BM1684X dump: before the net's stream the firmware
		 * runs a GDMA command of its own (announced by the first NODE_SET, its descriptor
		 * in DYN_EXTRA), inst_id 0; the net's records then start again from inst_id 0
		 * (§8.2: the reader sets it aside as the vendor does). */
		uint64_t fs = gd_skip_marks(sc > 4000 ? sc - 3000 : 1);
		uint64_t fe = gd_skip_marks(fs + 300);
		gd_gdma_record(g, c, fs, fe, 0, 0, 256);
		c->fw_start = gdma_to_ps(c, fs);
		c->fw_end = gdma_to_ps(c, fe + 1);
		c->fw_pending = 0;
	}
	if (c->stale_pending) {
		/* R core 0: the GDMA monitor's first record is a stale inst_id-0 record from an
		 * earlier run, ending before the real first transfer starts (§4.9, §9.2). */
		uint64_t ss = gd_skip_marks(sc > 20000 ? sc - 12000 : 1);
		gd_gdma_record(g, c, ss, gd_skip_marks(ss + 7955), 0, 0, 150528);
		c->stale_pending = 0;
	}
	gd_gdma_record(g, c, sc, ec, (uint32_t)(c->gdma_id - 1), dir, bytes);
	c->gdma_done++;
	sim_gdma(g, c, sc - gd_ps_to_gdma(c, g->t_start), ec - gd_ps_to_gdma(c, g->t_start), dep,
	         dir, bytes);
}

/* A GDMA sys command (no PMU record, as in R). `release` (0 = none): the engine is held
 * until then (wait_msg). */
void gd_gdma_sys(struct gen *g, struct core *c, unsigned sp, uint64_t dep, unsigned msg,
                 int64_t release)
{
	c->gdma_id++;
	int64_t t = c->gdma_free;
	if (dep && dep <= c->tiu_id && c->tiu_id - dep < RING && c->tiu_end[dep % RING] > t)
		t = c->tiu_end[dep % RING];
	if (release > t)
		t = release;
	c->gdma_free = gdma_to_ps(c, gd_ps_to_gdma(c, t) + 5);
	c->gdma_end[c->gdma_id % RING] = c->gdma_free;
	uint8_t b[96];
	size_t n = gdma_desc(b, 6, sp, dep, 0, 0, 0, msg);
	if (!g->a1688)
		setbits(b, 9, 20, c->gdma_id & 0xFFFFF);
	gw_put(&c->cmd_g, b, n);
	c->gdma_done++;
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
void gd_write_dyn(struct gen *g, struct core *c, uint64_t base, struct gw *w)
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
		/* NODE_SET of GDMA command 1, its wait, the wait for the whole subnet (§4.7 ids:
		 * BM1684's 16-bit layout or BM1684X's 20-bit one). */
		int a = g->a1684;
		uint64_t set = a ? gd1684_dyn_id(1, 1, 1, 0) : 1ull << 60 | 1ull << 40 | 1ull << 20;
		uint64_t w1 = a ? gd1684_dyn_id(2, 0, 1, 0) : 1ull << 20;
		if (a)
			all = gd1684_dyn_id(2, 0, c->n_gdma, c->n_tiu);
		/* the NODE_SET spans the firmware's own command */
		uint64_t fs = base + ps_to_tick(g, c, c->fw_start),
		         fe = base + ps_to_tick(g, c, c->fw_end) + 1;
		if (!c->fw_start) { /* (no GDMA command at all) */
			fs = t0 > 8 ? t0 - 8 : t0;
			fe = t0 > 8 ? t0 - 2 : t0;
		}
		dyn_rec(w, pid++, 1, set, fs, fe);
		dyn_rec(w, pid++, 2, w1, t0 > 4 ? t0 - 4 : t0, tg);
		dyn_rec(w, pid++, 2, all, tg + 1, t1);
	}
	if (c->extra_len) {
		/* DYN_EXTRA: the NODE_SET's pushed descriptor as a 256-byte BINARY item (§4.8). */
		gw_u32(w, BLK_EXTRA);
		gw_u32(w, (uint32_t)c->extra_len);
		gw_u32(w, 1);
		gw_u32(w, 1);
		gw_u32(w, 256);
		size_t dn = g->a1684 ? 128 : 96;
		gw_put(w, c->first_gdma_desc, dn);
		gw_zero(w, 256 - dn);
	}
}

void gd_write_head(struct gen *g, struct gw *w, int64_t span_ps)
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
