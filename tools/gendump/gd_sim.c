/*
 * gd_sim.c — the simulated network: layer kernels (conv, pool, add, matmul, load, store) that
 * issue TIU and GDMA commands, segments of layers between cross-core syncs, and the plan that
 * fixes every count (and so every block offset of iter0.profile) before the first command.
 */
#include "gd_int.h"

#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Layers.                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static const unsigned chans[] = {32, 64, 128, 256, 512};

static void act_tensor(struct gen *g, struct core *c, int is_in)
{
	gd_tensor_line(g, c->act_id, is_in, 1, c->ch, c->hw, c->hw, g->dtype, 0, 0, c->act_loff, 1,
	               c->hw);
}

static void new_act(struct gen *g, struct core *c, uint64_t id, int is_in)
{
	c->act_id = (int64_t)id;
	c->act_loff = gd_lmem_off(g);
	act_tensor(g, c, is_in);
}

static void layer_load(struct gen *g, struct core *c, int first, uint64_t *left)
{
	uint64_t id = gd_next_layer_id(g);
	gd_layer_line(g, 0, "Load", id);
	unsigned ch = first ? 3 : chans[rnd(&g->rng) % 5];
	unsigned h = first ? 224 : 1, wd = first ? 224 : (unsigned)rrange(&g->rng, 1, 4000);
	int is_const = !first;
	uint64_t bytes = (uint64_t)ch * h * wd * gd_dsize(g->dtype);
	uint64_t ga = is_const ? gd_ddr_const(g, bytes) : gd_ddr_act(g, bytes);
	uint32_t lo = gd_lmem_off(g);
	gd_tensor_line(g, first ? -1 : (int64_t)(id > 4 ? id - 4 : 1), 1, 1, ch, h, wd, g->dtype,
	               is_const, ga, 0, 0, 0);
	gd_tensor_line(g, (int64_t)id, 0, 1, ch, h, wd, g->dtype, is_const, 0, lo, 1, h);
	uint64_t dep = c->tiu_at_block;
	/* Big tensors are loaded in 1-3 slices (nslice/hslice), one GDMA command each. */
	uint64_t slices = first || *left < 2 ? 1 : rrange(&g->rng, 1, *left < 3 ? 2 : 3);
	for (uint64_t i = 0; i < slices; i++) {
		gd_gdma_line(g, c, dep, 0, 0);
		gd_gdma_xfer(g, c, 0, 0, dep, ga + i * (bytes / slices), lo, bytes / slices + 32);
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
	uint64_t id = gd_next_layer_id(g);
	gd_layer_line(g, 0, "Store", id);
	act_tensor(g, c, 1);
	gd_tensor_line(g, (int64_t)id, 0, 1, c->ch, c->hw, c->hw, g->dtype, 0, 0, c->act_loff, 1,
	               c->hw);
	uint64_t bytes = (uint64_t)c->ch * c->hw * c->hw * gd_dsize(g->dtype);
	uint64_t ga = gd_ddr_act(g, bytes);
	uint64_t dep = c->tiu_id;
	uint64_t slices = *left < 2 ? 1 : rrange(&g->rng, 1, 2);
	for (uint64_t i = 0; i < slices; i++) {
		gd_gdma_line(g, c, dep, 1, 0);
		gd_gdma_xfer(g, c, 0, 1, dep, ga + i * (bytes / slices), c->act_loff,
		             bytes / slices + 32);
		(*left)--;
	}
}

static uint64_t tiu_dur(struct gen *g, uint64_t lo, uint64_t hi)
{
	return gd_cap_cycles(g, rskew(&g->rng, lo, hi), g->tiu_limit);
}

/* Emits up to *left TIU commands of a compute layer. */
static void layer_conv(struct gen *g, struct core *c, uint64_t *left)
{
	uint64_t id = gd_next_layer_id(g);
	gd_layer_line(g, 0, "Conv2D", id);
	act_tensor(g, c, 1);
	unsigned och = chans[rnd(&g->rng) % 5];
	gd_tensor_line(g, c->last_load_id > 0 ? c->last_load_id : 12, 1, 1, 32, 1,
	               (unsigned)rrange(&g->rng, 64, 4000), g->dtype, 1, 0, gd_lmem_off(g), 1, 1);
	c->ch = och;
	if (c->hw > 7 && rnd(&g->rng) % 4 == 0)
		c->hw /= 2;
	new_act(g, c, id, 0);
	/* A layer group slices big convolutions along H: 1-4 (SYS_TR_ACC + CONV) pairs. */
	uint64_t slices = rrange(&g->rng, 1, 4);
	for (uint64_t i = 0; i<slices && * left> 0; i++) {
		uint8_t b[128];
		if (g->a1688 && *left >= 2) {
			size_t n = gd_tiu_desc(b, TSK_TR_ACC, 0, 0, TR_ACC_DEP,
			                       (rnd(&g->rng) % 8) * 0x4000, 0);
			gd_tiu_line(g, c, TR_ACC_DEP, 12);
			gd_tiu_cmd(g, c, b, n, 0, 5, 0, 0, "BD_SYS_TRWR");
			(*left)--;
		}
		/* (BM1684X: short only, as its compiler writes them; the vendor's BM1684X
		 * decoder has no operand layout for the long CONV) */
		int shortf = rnd(&g->rng) % 8 != 0 || !(g->a1688 || g->a1684);
		size_t n =
		    gd_tiu_desc(b, TSK_CONV, 0, shortf, c->gdma_id, 0, g->dtype == DT_FP16 ? 1 : 0);
		gd_tiu_line(g, c, c->gdma_id, 0);
		gd_tiu_cmd(g, c, b, n, c->gdma_id, tiu_dur(g, 2000, 320000) / slices + 1, 0, 0,
		           "CONV");
		(*left)--;
	}
}

static void layer_pool(struct gen *g, struct core *c, uint64_t *left)
{
	uint64_t id = gd_next_layer_id(g);
	gd_layer_line(g, 0, "Pool2D", id);
	act_tensor(g, c, 1);
	if (c->hw > 1)
		c->hw /= 2;
	new_act(g, c, id, 0);
	uint8_t b[128];
	size_t n = gd_tiu_desc(b, TSK_PD, 4, 1, c->gdma_id, 0, 0);
	gd_tiu_line(g, c, c->gdma_id, 1);
	gd_tiu_cmd(g, c, b, n, c->gdma_id, tiu_dur(g, 300, 20000), 0, 0, "PD");
	(*left)--;
}

static void layer_add(struct gen *g, struct core *c, uint64_t *left)
{
	uint64_t id = gd_next_layer_id(g);
	gd_layer_line(g, 0, "Add", id);
	act_tensor(g, c, 1);
	act_tensor(g, c, 1);
	new_act(g, c, id, 0);
	uint64_t k = rrange(&g->rng, 1, 4);
	static const unsigned eus[] = {20, 15, 14, 19};
	for (uint64_t i = 0; i<k && * left> 0; i++) {
		uint8_t b[128];
		size_t n = gd_tiu_desc(b, TSK_AR, eus[rnd(&g->rng) % 4], 1, c->gdma_id, 0, 0);
		gd_tiu_line(g, c, c->gdma_id, 3);
		gd_tiu_cmd(g, c, b, n, c->gdma_id, tiu_dur(g, 20, 5000), 0, 0, "AR");
		(*left)--;
	}
}

static void mm_cmds(struct gen *g, struct core *c, uint64_t *left, uint64_t k)
{
	for (uint64_t i = 0; i<k && * left> 0; i++) {
		uint8_t b[128];
		unsigned eu = rnd(&g->rng) % 3 == 0 ? 1 : (unsigned)rrange(&g->rng, 4, 6);
		size_t n = gd_tiu_desc(b, TSK_MM, eu, 1, c->gdma_id, 0, 0);
		gd_tiu_line(g, c, c->gdma_id, 2);
		gd_tiu_cmd(g, c, b, n, c->gdma_id, tiu_dur(g, 1000, 100000), 0, 0,
		           eu == 1 ? "MM" : "MM2");
		(*left)--;
	}
}

static void par_open(struct gen *g, struct core *c)
{
	gd_line(g, "start parallel.");
	c->in_par = 1;
	c->par_left = (unsigned)rrange(&g->rng, 1, 3);
	c->tiu_at_block = c->tiu_id;
}

static void par_close(struct gen *g, struct core *c)
{
	if (c->in_par)
		gd_line(g, "end parallel.");
	c->in_par = 0;
}

static void layer_matmul(struct gen *g, struct core *c, uint64_t *tleft, uint64_t *gleft)
{
	if (*gleft > 0 && rnd(&g->rng) % 4 == 0) {
		/* A global (DDR to DDR) MatMul, as R's final FC layer: matrix loads and MM2 in
		 * their own parallel blocks, outside any layer group. */
		par_close(g, c);
		uint64_t id = gd_next_layer_id(g);
		unsigned k = (unsigned)rrange(&g->rng, 256, 2048),
		         nout = (unsigned)rrange(&g->rng, 10, 1000);
		gd_layer_line(g, 1, "MatMul", id);
		gd_tensor_line(g, c->act_id, 1, 1, k, 1, 1, g->dtype, 0, gd_ddr_act(g, k), 0, 0, 0);
		uint64_t wbytes = (uint64_t)k * nout;
		uint64_t wa = gd_ddr_const(g, wbytes);
		gd_tensor_line(g, (int64_t)id - 2, 1, k, nout, 1, 1, g->dtype, 1, wa, 0, 0, 0);
		gd_tensor_line(g, (int64_t)id, 0, 1, nout, 1, 1, g->dtype, 0, gd_ddr_act(g, nout),
		               0, 0, 0);
		par_open(g, c);
		uint64_t m = rrange(&g->rng, 1, 3);
		for (uint64_t i = 0; i<m && * gleft> 0; i++) {
			uint64_t dep = c->tiu_id;
			gd_gdma_line(g, c, dep, 0, 1);
			gd_gdma_xfer(g, c, 1, 0, dep, wa + i * (wbytes / m), gd_lmem_off(g),
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
	uint64_t id = gd_next_layer_id(g);
	gd_layer_line(g, 0, "MatMul", id);
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
void gd_run_segment(struct gen *g, struct core *c, uint64_t tb, uint64_t gb, int first_seg)
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
				gd_line(g, "start parallel.");
				gd_line(g, "end parallel.");
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
void gd_sync_point(struct gen *g, uint64_t s)
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
		size_t n = gd_tiu_desc(b, TSK_SYS, SYS_SEND, 0, c->gdma_id, imm, 0);
		gd_tiu_cmd(g, c, b, n, c->gdma_id, 5, 0, 0, "SYS");
		c->sync_gdma_dep = c->tiu_id;
		gd_gdma_sys(g, c, GSYS_SEND, c->tiu_id, msg, 0);
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
		gd_tiu_line(g, c, tdep, 15);
		gd_gdma_line(g, c, gdep, 0, 6);
		gd_tiu_line(g, c, tdep + 1, 15);
		gd_gdma_line(g, c, gdep + 1, 0, 6);
		gd_tiu_line(g, c, tdep + 2, 3);
		/* The first wait_msg starts at the same real time on every core: it is the anchor
		 * the converter aligns cores on (§9.2 step 5). */
		int64_t nb = s == 0 ? release - 5556 : 0;
		size_t n = gd_tiu_desc(b, TSK_SYS, SYS_WAIT, 0, c->gdma_id, imm, 0);
		gd_tiu_cmd(g, c, b, n, c->gdma_id, 5, nb, release, "SYS");
		gd_gdma_sys(g, c, GSYS_WAIT, c->tiu_id, msg, release);
		n = gd_tiu_desc(b, TSK_AR, 19, 1, c->gdma_id, 0, 0);
		gd_tiu_cmd(g, c, b, n, c->gdma_id, 24, 0, 0, "AR");
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Planning.                                                                                  */
/* ---------------------------------------------------------------------------------------- */

void gd_plan(struct gen *g)
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
		/* BM1688 core 0: two stale records (§9.2); BM1684, BM1684X: the firmware's (and
		 * on BM1684 the final store's) */
		c->gdma_recs = c->lay_gdma + (g->a1688 ? (i == 0 ? 2 : 0) : g->a1684 ? 2 : 1);
		if (g->a1688)
			c->dyn_recs = i == 0 ? 6 : 5;
		else
			c->dyn_recs = 4;
		c->extra_len = i == 0 ? 12 + 256 : 0;
		c->bd_base = addr;
		addr = align_up(addr + nt * 128 + 128, 4096);
		c->gdma_base = addr;
		addr = align_up(addr + (N - nt) * (g->a1684 ? 128 : 96) + 128, 4096);
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
