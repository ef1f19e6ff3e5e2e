/*
 * gd_text.c — the generator's text: global.profile's node, layer, tensor and memory lines,
 * its closing lines, and the two-column net_stat.sim sample of core 0 (§7).
 */
#include "gd_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---------------------------------------------------------------------------------------- */
/* global.profile lines.                                                                      */
/* ---------------------------------------------------------------------------------------- */

void gd_line(struct gen *g, const char *s)
{
	gw_str(&g->prof, "[bmprofile] ");
	gw_str(&g->prof, s);
	gw_put(&g->prof, "\n", 1);
}

void gd_tiu_line(struct gen *g, struct core *c, uint64_t dep, unsigned bd_func)
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

void gd_gdma_line(struct gen *g, struct core *c, uint64_t dep, unsigned dir, unsigned func)
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
	gw_dec(w, g->a1684 && func == 1 ? 0 : func); /* BM1684: a matrix move is NORMAL (§3.3) */
	if (g->a1688) {
		gw_str(w, " core=");
		gw_dec(w, c->idx);
	}
	gw_put(w, "\n", 1);
}

void gd_layer_line(struct gen *g, int global, const char *type, uint64_t id)
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

void gd_tensor_line(struct gen *g, int64_t id, int is_in, unsigned n, unsigned ch, unsigned h,
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

unsigned gd_dsize(int dt)
{
	return dt == DT_FP32 ? 4 : dt == DT_FP16 ? 2 : 1;
}

/* DDR addresses: BM1688 marks DDR with address bit 39 (§6); R's coefficients live at
 * 0x90_0000_0000 and activations at 0xA0_0000_0000. BM1684X uses plain 4 GiB+ addresses. */
uint64_t gd_ddr_const(struct gen *g, uint64_t bytes)
{
	uint64_t base = g->a1688 ? 0x9000000000ull : 0x100000000ull;
	uint64_t a = base + (g->const_ddr % 0x40000000ull);
	g->const_ddr += (bytes + 4095) & ~(uint64_t)4095;
	return a;
}

uint64_t gd_ddr_act(struct gen *g, uint64_t bytes)
{
	uint64_t base = g->a1688 ? 0xA000000000ull : 0x140000000ull;
	uint64_t a = base + (g->act_ddr % 0x20000000ull);
	g->act_ddr += (bytes + 4095) & ~(uint64_t)4095;
	return a;
}

uint32_t gd_lmem_off(struct gen *g)
{
	return (uint32_t)(rnd(&g->rng) % 64) * 4096u;
}

uint64_t gd_next_layer_id(struct gen *g)
{
	g->layer_id += 1 + rnd(&g->rng) % 2;
	return g->layer_id;
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

void gd_write_tail_lines(struct gen *g, int64_t span_ps)
{
	struct gw *w = &g->prof;
	gd_line(g, "end to run subnet_id=0");
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
int gd_write_sim(struct gen *g, const char *dir, int64_t span_ps, struct tp_diag *d)
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
