/*
 * make_fixture.c — builds profiles in code and writes their result.html, for the browser tests
 * and the benchmark (no reader needed):
 *   html_fixture small   OUT.html   2 cores (TIU, GDMA, SDMA, MCU lanes), layers, tensors, mems
 *   html_fixture hostile OUT.html   the same with script-like net / layer / command names
 *   html_fixture big N   OUT.html   N generated commands over 2 cores (TIU + GDMA), layers
 * Prints one line with the lane layout the page must show ("lanes: ...") so tests compare the
 * page against what was built, not against a number written into the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers/sophgo/sophgo.h"
#include "writers/html/html.h"

#define HOSTILE "</script><img src=x onerror=alert(1)>"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct gen {
	struct tp_profile *p;
	int tiu[2], gdma[2];
	int64_t t[2][2]; /* next free time per core, engine */
};

static void add_layer_span(struct tp_profile *p, int li, int64_t b, int64_t e)
{
	struct tp_layer lv, *l = &lv;
	tp_profile_layer(p, (size_t)li, l);
	if (l->begin_ns > l->end_ns) {
		l->begin_ns = b;
		l->end_ns = e;
	}
	if (b < l->begin_ns)
		l->begin_ns = b;
	if (e > l->end_ns)
		l->end_ns = e;
	tp_profile_set_layer(p, (size_t)li, l);
}

static int add_tensor(struct tp_profile *p, int li, int64_t id, int is_in, int64_t c, int64_t h,
                      uint64_t gaddr, uint64_t loffset)
{
	struct tp_tensor t;
	memset(&t, 0, sizeof t);
	t.id = id;
	t.layer = li;
	t.is_in = (uint8_t)is_in;
	t.dtype = TP_DT_INT8;
	t.ndim = 4;
	t.shape[0] = 1;
	t.shape[1] = c;
	t.shape[2] = h;
	t.shape[3] = h;
	t.gaddr = gaddr;
	t.loffset = loffset;
	t.nslice = gaddr ? 0 : 1;
	t.hslice = gaddr ? 0 : (uint32_t)h;
	int ti = tp_profile_add_tensor(p, &t);
	struct tp_layer l;
	tp_profile_layer(p, (size_t)li, &l);
	if (ti >= 0 && l.num_tensors == 0)
		l.first_tensor = (uint32_t)ti;
	if (ti >= 0) {
		l.num_tensors++;
		tp_profile_set_layer(p, (size_t)li, &l);
	}
	return ti;
}

/* One layer with its commands: `ncmd` TIU commands (compute layers) or GDMA (Load/Store). */
static void gen_layer(struct gen *g, int core, int idx, const char *type, const char *name,
                      int data_move, int ncmd, int with_args)
{
	struct tp_profile *p = g->p;
	struct tp_layer l;
	memset(&l, 0, sizeof l);
	l.id = idx;
	l.type = tp_profile_str(p, type);
	l.name = tp_profile_str(p, name);
	l.device = 0;
	l.core = core;
	l.subnet = 0;
	l.group = idx / 4;
	l.is_local = 1;
	l.is_data_move = (uint8_t)data_move;
	l.begin_ns = 1;
	l.end_ns = 0;
	int li = tp_profile_add_layer(p, &l);
	if (li < 0)
		return;
	if (data_move) {
		int st = !strcmp(type, "Store");
		add_tensor(p, li, idx * 10 + 1, 1, 64, 28,
		           st ? 0 : 0x9000000000ull + (uint64_t)idx * 0x20000,
		           st ? (uint64_t)(idx % 8) * 8192 : 0);
		add_tensor(p, li, idx * 10 + 2, 0, 64, 28,
		           st ? 0xA000000000ull + (uint64_t)idx * 0x10000 : 0,
		           st ? 0 : (uint64_t)(idx % 8) * 8192);
	} else {
		add_tensor(p, li, idx * 10 + 1, 1, 64, 28, 0, (uint64_t)(idx % 8) * 8192);
		add_tensor(p, li, idx * 10 + 2, 0, 64, 28, 0,
		           (uint64_t)((idx + 4) % 8) * 8192 + 4096);
	}
	int eng = data_move ? 1 : 0;
	int track = data_move ? g->gdma[core] : g->tiu[core];
	double mhz = data_move ? 750 : 900;
	for (int i = 0; i < ncmd; i++) {
		struct tp_slice *s = tp_track_push(p, track);
		if (!s)
			return;
		uint32_t cyc = 200 + rnd(data_move ? 3000 : 6000);
		int64_t gap = (int64_t)rnd(400);
		s->start_ns = g->t[core][eng] + gap;
		s->cycles = cyc;
		tp_slice_set_end(p, &p->tracks[track], s, s->start_ns + tp_cycles_to_ns(cyc, mhz));
		tp_slice_set_start_cycle(p, &p->tracks[track], s,
		                         tp_ns_to_cycles(s->start_ns, mhz));
		g->t[core][eng] = tp_slice_end(&p->tracks[track], s);
		s->cmd_id = (uint32_t)p->tracks[track].count;
		s->layer = li;
		if (data_move) {
			tp_slice_set_name(
			    p, &p->tracks[track], s,
			    tp_profile_str(p, strcmp(type, "Store") ? "tensorLd" : "tensorSt"));
			tp_slice_set_type(p, &p->tracks[track], s, tp_profile_str(p, "DMA_tensor"));
			tp_slice_set_bytes(p, &p->tracks[track], s, 4096 + rnd(120000));
			tp_slice_set_dir(p, &p->tracks[track], s,
			                 strcmp(type, "Store") ? TP_DIR_DDR_TO_LMEM
			                                       : TP_DIR_LMEM_TO_DDR);
			tp_slice_set_dtype(p, &p->tracks[track], s, TP_DT_INT8);
			tp_slice_set_stall(p, &p->tracks[track], s, rnd(4) ? 0 : rnd(50));
			if (with_args && core == 0) {
				/* Descriptor fields of the LMEM side (the vendor's names): the
				 * page's LOCAL chart draws these commands over the compiler's
				 * tensors. */
				int load = tp_slice_dir(&p->tracks[track], s) == TP_DIR_DDR_TO_LMEM;
				tp_args_begin(p);
				tp_args_add_uint(p, load ? "dst_start_addr" : "src_start_addr",
				                 (uint64_t)(idx % 8) * 8192 + (uint64_t)i * 512);
				tp_args_add_uint(p, load ? "dst_nsize" : "src_nsize", 1);
				tp_args_add_uint(p, load ? "dst_csize" : "src_csize", 64);
				tp_args_add_uint(p, load ? "dst_hsize" : "src_hsize", 16);
				tp_args_add_uint(p, load ? "dst_wsize" : "src_wsize", 16);
				tp_args_add_uint(p, "src_data_format", 0);
				s->args = tp_args_end(p);
			}
		} else {
			static const char *const fn[] = {"conv.normal", "arith.add",
			                                 "pord.maxpooling", "mm2.nn"};
			tp_slice_set_name(p, &p->tracks[track], s, tp_profile_str(p, fn[rnd(4)]));
			tp_slice_set_type(p, &p->tracks[track], s, tp_profile_str(p, "sCONV"));
			tp_slice_set_dtype(p, &p->tracks[track], s, TP_DT_INT8);
			s->dep_id = rnd(3) ? 0 : (uint32_t)rnd(100) + 1;
			if (with_args) {
				char rate[16];
				unsigned whole = 30 + rnd(70), tenth = rnd(10);
				snprintf(rate, sizeof rate, "%u.%u%%", whole, tenth);
				if (core == 0) {
					/* Core 0 has descriptors: the cost model's Alg / uArch Ops
					 * give the same rate as the argument (bar height). */
					struct tp_cost c = {.alg_ops = whole * 10 + tenth,
					                    .uarch_ops = 1000,
					                    .alg_cycle = cyc / 2,
					                    .valid = 1};
					if (tp_track_set_cost(p, track, p->tracks[track].count - 1,
					                      &c) != TP_OK)
						return;
				}
				tp_args_begin(p);
				tp_args_add_str(p, "uArch Rate", rate);
				tp_args_add_uint(p, "des_cmd_id_dep", s->dep_id);
				tp_args_add_str(p, "Kernel Function", name[0] ? name : type);
				s->args = tp_args_end(p);
			}
		}
		add_layer_span(p, li, s->start_ns, tp_slice_end(&p->tracks[track], s));
	}
}

static void sys_cmd(struct gen *g, int core, int eng, const char *name, int kind, uint32_t cyc)
{
	struct tp_profile *p = g->p;
	int track = eng ? g->gdma[core] : g->tiu[core];
	struct tp_slice *s = tp_track_push(p, track);
	if (!s)
		return;
	double mhz = eng ? 750 : 900;
	s->start_ns = g->t[core][eng];
	s->cycles = cyc;
	tp_slice_set_end(p, &p->tracks[track], s, s->start_ns + tp_cycles_to_ns(cyc, mhz));
	g->t[core][eng] = tp_slice_end(&p->tracks[track], s);
	s->cmd_id = (uint32_t)p->tracks[track].count;
	tp_slice_set_name(p, &p->tracks[track], s, tp_profile_str(p, name));
	tp_slice_set_type(p, &p->tracks[track], s, tp_profile_str(p, eng ? "DMA_sys" : "SYS"));
	tp_slice_set_kind(p, &p->tracks[track], s, (uint8_t)kind);
}

static void build(struct tp_profile *p, int hostile, long big)
{
	struct gen g;
	memset(&g, 0, sizeof g);
	g.p = p;
	p->arch = TP_ARCH_BM1688;
	p->chip = tp_chip_by_arch(TP_ARCH_BM1688);
	p->net_name = tp_profile_str(p, hostile ? HOSTILE : big ? "generated_1m" : "fixture_net");
	p->source = tp_profile_str(p, "html_fixture");
	p->tiu_freq_mhz = 900;
	p->gdma_freq_mhz = 750;
	tp_profile_set_meta(p, "arch", "BM1688");
	tp_profile_set_meta(p, "net_name", hostile ? HOSTILE : "fixture_net");
	tp_profile_add_device(p, "BM1688 device 0", 0, 2);
	for (int c = 0; c < 2; c++) {
		g.tiu[c] = tp_profile_add_track(p, 0, c, TP_TRACK_TIU, "TIU", 900);
		g.gdma[c] = tp_profile_add_track(p, 0, c, TP_TRACK_GDMA, "GDMA", 750);
	}
	if (big) {
		/* N commands: per core half; layers of ~40 commands alternating Load / Conv /
		 * Store. */
		long per_core = big / 2;
		for (int c = 0; c < 2; c++) {
			long made = 0;
			int idx = 0;
			while (made < per_core) {
				int k = idx % 3;
				int n = (int)(per_core - made < 40 ? per_core - made : 40);
				const char *type = k == 0 ? "Load" : k == 1 ? "Conv2D" : "Store";
				gen_layer(&g, c, idx, type, "", k != 1, n, 0);
				/* keep both engines roughly in step so the lanes interleave */
				int64_t m = g.t[c][0] > g.t[c][1] ? g.t[c][0] : g.t[c][1];
				g.t[c][0] = g.t[c][1] = m - (int64_t)rnd(2000);
				made += n;
				idx++;
			}
		}
		return;
	}
	const char *lname = hostile ? HOSTILE : "layer1/conv";
	int sdma = tp_profile_add_track(p, 0, 0, TP_TRACK_SDMA, "SDMA", 750);
	int mcu = tp_profile_add_track(p, 0, 0, TP_TRACK_MCU, "MCU", 0);
	for (int c = 0; c < 2; c++) {
		int nl = c == 0 ? 12 : 4;
		for (int i = 0; i < nl; i++) {
			int k = i % 3;
			gen_layer(&g, c, c * 100 + i,
			          k == 0   ? "Load"
			          : k == 1 ? "Conv2D"
			                   : "Store",
			          k == 1 ? lname : "", k != 1, c == 0 ? 12 : 5, 1);
		}
		sys_cmd(&g, c, 0, hostile ? HOSTILE : "system.send_msg", TP_CMD_SYS_SEND, 10);
		sys_cmd(&g, c, 1, "dma.sys.wait", TP_CMD_SYS_WAIT, 300);
	}
	for (int i = 0; i < 6; i++) {
		struct tp_slice *s = tp_track_push(p, sdma);
		s->start_ns = 2000 + i * 9000;
		tp_slice_set_end(p, &p->tracks[sdma], s, s->start_ns + 3000);
		s->cycles = 2250;
		s->cmd_id = (uint32_t)i + 1;
		tp_slice_set_bytes(p, &p->tracks[sdma], s, 65536);
		tp_slice_set_dir(p, &p->tracks[sdma], s, TP_DIR_DDR_TO_DDR);
		tp_slice_set_name(p, &p->tracks[sdma], s, tp_profile_str(p, "dma.general"));
		tp_slice_set_type(p, &p->tracks[sdma], s, tp_profile_str(p, "DMA_general"));
		s = tp_track_push(p, mcu);
		s->start_ns = 1000 + i * 9000;
		tp_slice_set_end(p, &p->tracks[mcu], s, s->start_ns + 500);
		tp_slice_set_name(p, &p->tracks[mcu], s, tp_profile_str(p, "set_GDMA"));
		tp_slice_set_type(p, &p->tracks[mcu], s, tp_profile_str(p, "NODE_SET"));
	}
	struct tp_mem m = {1, 0x125ADA000ull, 25997312, 10, 0, tp_profile_str(p, "coeff")};
	tp_profile_add_mem(p, &m);
	m.addr = 0x125000000ull;
	m.size = 2158592;
	m.desc = tp_profile_str(p, "neuron_mem0");
	tp_profile_add_mem(p, &m);
	m.addr = 0x126000000ull;
	m.size = 150528;
	m.desc = tp_profile_str(p, hostile ? HOSTILE : "tensor");
	tp_profile_add_mem(p, &m);
	tp_profile_note(p, "%s", hostile ? HOSTILE : "fixture profile built in code");
}

int main(int argc, char **argv)
{
	if (argc < 3 || (!strcmp(argv[1], "big") && argc < 4)) {
		fprintf(stderr, "usage: html_fixture small|hostile OUT.html | big N OUT.html\n");
		return 1;
	}
	int hostile = !strcmp(argv[1], "hostile");
	long big = !strcmp(argv[1], "big") ? strtol(argv[2], NULL, 10) : 0;
	const char *out = argv[argc - 1];
	struct tp_profile *p = tp_profile_new();
	struct tp_analysis a;
	struct tp_diag d = {0};
	if (!p)
		return 1;
	build(p, hostile, big);
	int rc = tp_profile_finish(p);
	if (!rc)
		rc = tp_analyze(p, &a);
	if (rc) {
		fprintf(stderr, "html_fixture: %s\n", tp_strerror(rc));
		tp_profile_free(p);
		return 1;
	}
	rc = tp_html_write_file(p, &a, out, 0, 1, &d);
	if (rc)
		fprintf(stderr, "html_fixture: %s\n", d.msg);
	/* The lanes the page must show, in display order: Layer, [MCU], GDMA, [SDMA], TIU. */
	printf("lanes:");
	for (int c = 0; c < 2; c++) {
		printf(" %d:Layer", c);
		if (tp_profile_find_track(p, 0, c, TP_TRACK_MCU) >= 0)
			printf(" %d:MCU", c);
		printf(" %d:GDMA", c);
		if (tp_profile_find_track(p, 0, c, TP_TRACK_SDMA) >= 0)
			printf(" %d:SDMA", c);
		printf(" %d:TIU", c);
	}
	printf("\ncommands: %zu\n", tp_profile_slice_count(p));
	tp_analysis_free(&a);
	tp_profile_free(p);
	return rc ? 1 : 0;
}
