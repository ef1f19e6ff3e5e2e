/*
 * gendump.c — writes synthetic Sophgo bmprofile_data directories (BM1688, BM1684X and BM1684
 * layouts) of any size from a seed, for tests and benchmarks of the bmprofile reader.
 *
 * Formats follow shared/specs/sophgo-bmprofile.md (§ numbers below refer to it); the choices
 * that the spec leaves open follow what the real BM1688 dump (spec source "R") and the real
 * BM1684X dump show:
 *   - global.profile: header, is_mlir=1 compiler log with one subnet, parallel blocks,
 *     local/global layer lines, tensor lines and one node line per command except, on BM1688,
 *     the last of each buffer (§3.1: the final chain_end / system.end has no line; BM1684X
 *     writes them after "insert bd end" / "insert gdma end"), core_list, mtype lines. BM1688
 *     TIU lines are spelled `gdma cmd_id bd_id=0 gdma_id=<dep> bd_func=.. core=..`; BM1684X
 *     and BM1684 use `bd cmd_id bd_id=<own> gdma_id=<dep> bd_func=..`.
 *   - iter0.profile: SUMMARY, COMMAND per core, then per core MONITOR_BD, MONITOR_GDMA,
 *     DYN_DATA and (if non-empty) DYN_EXTRA (§4.2 write order). PMU records exist for every
 *     TIU command and every non-sys GDMA command (R: GDMA send/wait/chain_end have none).
 *     BM1688 core 0 carries R's quirks: a stale inst_id-0 GDMA record first and an inst_id-0
 *     record last (§9.2 trimming); every core >0 starts with system.send_msg; each core's
 *     first system.wait_msg starts at the same real time (the §9.2 alignment anchor).
 *     BM1684X and BM1684 start with the firmware's own GDMA record (the first NODE_SET's).
 *   - cmd_<base>_<core>_<engine>.dat: variable-length descriptors per §6 ending with a sys
 *     end / chain_end and zero padding to a multiple of 128 bytes (R's file lengths).
 *     BM1684X uses the same size table; its descriptors also carry their own cmd_id (TIU
 *     bits 1-20 with the dependency in 21-40, GDMA bits 9-28), as regdef_bm1684x.c lays them
 *     out. BM1684: fixed 128-byte descriptors (gd_bm1684.c).
 *   - net_stat.sim: a small two-column sample of core 0 in the §7 layout.
 *
 * Streaming: every output region has a small buffered writer that pwrite()s at its own file
 * offset. All counts (and so all block offsets in iter0.profile) are fixed before the first
 * command is generated, so nothing is held in memory and nothing is rewritten.
 *
 * Time model: one global timeline in picoseconds. Each core has an epoch (the global time at
 * which its PMU counters read 0); TIU counters run at 900 MHz, GDMA at 750 MHz (BM1688, as in
 * R; BM1684X both at its tpu_freq, 1000 MHz; BM1684 550 / 575 MHz), the MCU timer at 50 MHz
 * (20 ns/tick) (§4.9, §8.1). A command starts when its engine is free and its cross-engine
 * dependency (cmd_id_dep) has ended. Without --wrap every command's length is capped so that
 * no 32-bit counter can pass 2^32 before the dump ends.
 */
#include "gd_int.h"
#include "readers/sophgo/isa/sg_isa.h"

#include <string.h>

static const char *const kind_names[GD_NKIND] = {"conv", "pool", "add", "matmul", "load", "store"};

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
	if (o->arch != ARCH_BM1688 && o->arch != ARCH_BM1684X && o->arch != ARCH_BM1684)
		return tp_diag_set(d, TP_EUSAGE,
		                   "unsupported arch %d (BM1688=4, BM1684X=3, BM1684=1)", o->arch);
	if (o->arch == ARCH_BM1688 && (o->cores < 1 || o->cores > 2))
		return tp_diag_set(d, TP_EUSAGE, "--cores must be 1 or 2 for BM1688");
	if (o->arch != ARCH_BM1688 && o->cores != 1)
		return tp_diag_set(d, TP_EUSAGE, "--cores must be 1 for %s",
		                   o->arch == ARCH_BM1684 ? "BM1684" : "BM1684X");
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

/* Sets up g for options o: the plan, the files under temporary names and their writers. TP_OK,
 * or an error with g->d set (files already opened are left for release()). */
static int setup(struct gen *g, const struct gd_opts *o, const char *outdir)
{
	struct tp_diag *d = g->d;
	g->o = o;
	g->rng = o->seed ^ 0x7470757072F0F11Eull;
	g->a1688 = o->arch == ARCH_BM1688;
	g->a1684 = o->arch == ARCH_BM1684;
	g->ncores = o->cores;
	g->nsync = nsync_for(o);
	g->gdma_rec_size = g->a1688 ? 256 : 192;
	g->dtype = g->a1688 ? DT_INT8 : g->a1684 ? DT_FP32 : DT_FP16;
	g->layer_id = 14;
	g->host_base = 1705374960000000ull + (o->seed % 1000000) * 1000;
	for (unsigned i = 0; i < 2; i++) {
		g->core[i].ft.fd = g->core[i].fg.fd = -1;
	}
	g->fp.fd = g->fi.fd = -1;
	if (o->arch == ARCH_BM1684X &&
	    sg_decoder_new(&sg_isa_bm1684x, sg_chip_by_arch(TP_ARCH_BM1684X)->dma_cmd_type_bits,
	                   &g->dec) != TP_OK)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	gd_plan(g);
	for (unsigned i = 0; i < g->ncores; i++) {
		/* Block lengths and COMMAND counts are u32 fields. */
		const struct core *c = &g->core[i];
		if (c->gdma_recs * g->gdma_rec_size > 0xFFFFFFFFull ||
		    c->tiu_recs * 32 > 0xFFFFFFFFull) {
			return tp_diag_set(
			    d, TP_EUSAGE,
			    "--cmds %llu is too large: a MONITOR block would exceed the 4 GiB "
			    "that its u32 length can describe",
			    (unsigned long long)o->cmds);
		}
	}

	/* Open files and writers. */
	int rc = gf_open(&g->fp, outdir, "global.profile", d);
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
	return rc;
}

/* The cores' clocks and the cap on one command's length, and the MONITOR block headers. */
static void start_clocks(struct gen *g)
{
	const struct gd_opts *o = g->o;
	/* Clocks. Core 0's TIU counter starts near R's 452 M cycles (~0.5 s of uptime), or just
	 * below 2^32 with --wrap; later cores' counters start near R's 84 480. */
	uint64_t start_cyc = o->wrap ? 0xFFFFFFFFull - 20000 - rnd(&g->rng) % 1000
	                             : 452000000ull + rnd(&g->rng) % 1000000;
	for (unsigned i = 0; i < g->ncores; i++) {
		/* BM1684: fixed 550 / 575 MHz whatever tpu_freq says (§8.1) */
		g->core[i].tiu_mhz = g->a1688 ? 900 : g->a1684 ? 550 : 1000;
		g->core[i].gdma_mhz = g->a1688 ? 750 : g->a1684 ? 575 : 1000;
	}
	struct core *c0 = &g->core[0];
	c0->epoch = 0;
	g->t_start = gd_tiu_to_ps(c0, start_cyc);
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		if (i > 0)
			c->epoch = g->t_start - (int64_t)rrange(&g->rng, 80000000, 100000000);
		c->tiu_free = c->gdma_free =
		    g->t_start + (int64_t)(i * rrange(&g->rng, 1000000, 2000000));
		c->stale_pending = g->a1688 && i == 0;
		c->fw_pending = !g->a1688;
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
		 * first 32-bit wrap of the fastest counter (TIU) with a 1 M-cycle margin. */
		uint64_t budget_cyc = 0xFFFFFFFFull - start_cyc - 1000000, mt = c0->tiu_mhz;
		int64_t budget_ps =
		    (int64_t)(budget_cyc * 1000000 / mt) - (int64_t)g->nsync * 400000;
		g->cap_ps = budget_ps / (int64_t)(g->ncores * o->cmds);
		g->tiu_limit = (uint64_t)g->cap_ps * mt / 1000000;
		g->gdma_limit = (uint64_t)g->cap_ps * c0->gdma_mhz / 1000000;
		g->tiu_limit = g->tiu_limit > 8 ? g->tiu_limit - 3 : 5;
		g->gdma_limit = g->gdma_limit > 80 ? g->gdma_limit - 40 : 40;
	}
}

/* global.profile header and compiler log. */
static void write_profile_head(struct gen *g)
{
	const struct gd_opts *o = g->o;
	struct gw *w = &g->prof;
	gw_str(w, "[bmprofile] arch=");
	gw_dec(w, (uint64_t)o->arch);
	gw_str(w, "\n[bmprofile] net_name=");
	const char *net = o->net       ? o->net
	                  : o->hostile ? "net</script><img src=x onerror=alert(1)> \"q\" \\b "
	                                 "&amp; \xc3\xbc"
	                               : "gen_net";
	gw_str(w, net);
	gw_str(w, g->a1688   ? "\n[bmprofile] tpu_freq=0\n"
	          : g->a1684 ? "\n[bmprofile] tpu_freq=550\n"
	                     : "\n[bmprofile] tpu_freq=1000\n");
	gw_str(w, "[bmprofile] is_mlir=1\n...Start Profile Log...\n");
	gd_line(g, "start to run subnet_id=0");
	gd_line(g, "start parallel.");
	gd_line(g, "end parallel.");
}

/* BM1684X's lines for an engine's final sys command ("bd" or "gdma", command `id`): the
 * runtime's "insert ... end" note, then the node line, depending on nothing. */
static void end_line(struct gen *g, struct core *c, const char *eng, uint64_t id)
{
	char s[96];
	snprintf(s, sizeof s, "insert %s end (cmd_id %s_id=%llu)", eng, eng,
	         (unsigned long long)id);
	gd_line(g, s);
	if (eng[0] == 'b')
		gd_tiu_line(g, c, 0, TSK_SYS);
	else
		gd_gdma_line(g, c, 0, 0, 6);
}

/* Tensor lines of a local layer that reads the current activation and writes layer id's. */
static void io_lines(struct gen *g, struct core *c, uint64_t id)
{
	gd_tensor_line(g, c->act_id, 1, 1, c->ch, c->hw, c->hw, g->dtype, 0, 0, c->act_loff, 1,
	               c->hw);
	gd_tensor_line(g, (int64_t)id, 0, 1, c->ch, c->hw, c->hw, g->dtype, 0, 0, c->act_loff, 1,
	               c->hw);
	c->act_id = (int64_t)id;
}

/* BM1684 has no sys commands: the last command of each engine is an ordinary one carrying
 * the end bit (TIU CMD_END, GDMA CHAIN_END) with its node line and PMU record, here a copy of
 * the result and its store, two layers of a last parallel block. Its buffers have room for
 * more commands than the net has: zero slots up to a 4 KiB multiple. */
static void final_1684(struct gen *g, struct core *c)
{
	uint8_t b[128];
	g->ending = 1;
	gd_line(g, "start parallel.");
	uint64_t id = gd_next_layer_id(g), dep = c->gdma_id;
	gd_layer_line(g, 0, "Copy", id);
	io_lines(g, c, id);
	size_t n = gd_tiu_desc(b, TSK_AR, 19, 1, dep, 0, 0);
	gd_tiu_line(g, c, dep, 3);
	gd_tiu_cmd(g, c, b, n, dep, 24, 0, 0, "AR");
	id = gd_next_layer_id(g);
	gd_layer_line(g, 0, "Store", id);
	io_lines(g, c, id);
	uint64_t bytes = (uint64_t)c->ch * c->hw * c->hw * gd_dsize(g->dtype);
	gd_gdma_line(g, c, c->tiu_id, 1, 0);
	gd_gdma_xfer(g, c, 0, 1, c->tiu_id, gd_ddr_act(g, bytes), c->act_loff, bytes);
	gd_line(g, "end parallel.");
	g->ending = 0;
	gw_zero(&c->cmd_t, (size_t)(align_up(c->cmd_t.total, 4096) - c->cmd_t.total));
	gw_zero(&c->cmd_g, (size_t)(align_up(c->cmd_g.total, 4096) - c->cmd_g.total));
}

/* Every core's commands: layers segment by segment with syncs between segments on multi-core
 * BM1688, then the final commands. Returns the span from the first start to the last end. */
static int64_t run_cores(struct gen *g)
{
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
			gd_run_segment(g, c, tb, gb, i == 0 && s == 0);
		}
		if (s + 1 < nseg)
			gd_sync_point(g, s);
	}
	/* Final commands: TIU system.end and GDMA chain_end (no node lines, §3.1). */
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		if (g->a1684) {
			final_1684(g, c);
			continue;
		}
		uint8_t b[128];
		size_t n = gd_tiu_desc(b, TSK_SYS, SYS_END, 0, 0, 0, 0);
		if (!g->a1688) /* BM1684X writes their lines too, as the real dump shows */
			end_line(g, c, "bd", c->tiu_id + 1);
		gd_tiu_cmd(g, c, b, n, 0, 5, 0, 0, "SYS");
		if (!g->a1688)
			end_line(g, c, "gdma", c->gdma_id + 1);
		gd_gdma_sys(g, c, GSYS_CHAIN_END, 0, 0, 0);
		if (g->a1688 && i == 0) {
			/* R core 0: a trailing inst_id-0 record after the last real transfer. */
			uint64_t sc = gd_skip_marks(gd_ps_to_gdma(c, c->gdma_free) + 1200);
			gd_gdma_record(g, c, sc, gd_skip_marks(sc + 221), 0, 1, 1024);
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
	return last - first;
}

/* Consistency of the plan (an internal error if violated). */
static int check_plan(struct gen *g)
{
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		if (c->tiu_done != c->n_tiu || c->gdma_done != c->n_gdma ||
		    c->grec_done != c->gdma_recs || c->tiu_id != c->n_tiu ||
		    c->gdma_id != c->n_gdma) {
			return tp_diag_set(
			    g->d, TP_ERANGE,
			    "internal: core %u generated %llu/%llu TIU, %llu/%llu GDMA, %llu/%llu "
			    "GDMA records",
			    i, (unsigned long long)c->tiu_done, (unsigned long long)c->n_tiu,
			    (unsigned long long)c->gdma_done, (unsigned long long)c->n_gdma,
			    (unsigned long long)c->grec_done, (unsigned long long)c->gdma_recs);
		}
	}
	return TP_OK;
}

/* Closing blocks of iter0.profile: DYN per core, then SUMMARY + COMMAND at offset 0. */
static int write_iter_tail(struct gen *g, int64_t span_ps)
{
	uint64_t tick_base = 21366377914446ull + (g->o->seed % 100000) * 1000;
	for (unsigned i = 0; i < g->ncores; i++) {
		struct core *c = &g->core[i];
		struct gw w;
		int rc = gw_init(&w, g->fi.fd, c->off_dyn, 4096);
		if (rc != TP_OK)
			return tp_diag_set(g->d, rc, "out of memory");
		gd_write_dyn(g, c, tick_base + (uint64_t)(c->epoch - g->core[0].epoch) / 20000, &w);
		gw_flush(&w);
		if (w.err)
			c->rec_t.err = w.err;
		gw_free(&w);
	}
	struct gw w;
	int rc = gw_init(&w, g->fi.fd, 0, 4096);
	if (rc != TP_OK)
		return tp_diag_set(g->d, rc, "out of memory");
	gd_write_head(g, &w, span_ps);
	gw_flush(&w);
	if (w.err)
		g->core[0].rec_t.err = w.err;
	gw_free(&w);
	return TP_OK;
}

/* Flushes every writer, writes net_stat.sim and renames the files into place. */
static int finish(struct gen *g, const char *outdir, int64_t span_ps)
{
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
	if (err)
		return tp_diag_set(g->d, TP_EOUTPUT, "%s: write failed: %s", epath, strerror(err));
	int rc = TP_OK;
	if (!g->o->no_sim && (rc = gd_write_sim(g, outdir, span_ps, g->d)) != TP_OK)
		return rc;
	rc = gf_commit(&g->fp, g->d);
	if (rc == TP_OK)
		rc = gf_commit(&g->fi, g->d);
	for (unsigned i = 0; rc == TP_OK && i < g->ncores; i++) {
		rc = gf_commit(&g->core[i].ft, g->d);
		if (rc == TP_OK)
			rc = gf_commit(&g->core[i].fg, g->d);
	}
	return rc;
}

static void fill_result(const struct gen *g, int64_t span_ps, struct gd_result *res)
{
	memset(res, 0, sizeof *res);
	const struct core *cl = &g->core[g->ncores - 1];
	uint64_t iter_size = cl->off_extra + (cl->extra_len ? 8 + cl->extra_len : 0);
	res->bytes_total = g->prof.total + iter_size;
	for (unsigned i = 0; i < g->ncores; i++) {
		const struct core *c = &g->core[i];
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

/* Frees g; after a failure (rc) first removes every temporary file. */
static void release(struct gen *g, int rc)
{
	if (rc != TP_OK) {
		gf_abort(&g->fp);
		gf_abort(&g->fi);
		for (unsigned i = 0; i < g->ncores; i++) {
			gf_abort(&g->core[i].ft);
			gf_abort(&g->core[i].fg);
		}
	}
	sg_decoder_free(g->dec);
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
	g->d = d;
	if ((rc = setup(g, o, outdir)) != TP_OK)
		goto out;
	start_clocks(g);
	write_profile_head(g);
	int64_t span_ps = run_cores(g);
	gd_write_tail_lines(g, span_ps);
	if ((rc = check_plan(g)) != TP_OK || (rc = write_iter_tail(g, span_ps)) != TP_OK ||
	    (rc = finish(g, outdir, span_ps)) != TP_OK)
		goto out;
	if (res)
		fill_result(g, span_ps, res);
out:
	release(g, rc);
	return rc;
}
