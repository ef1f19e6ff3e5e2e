/*
 * coreparts_test.c — the analysis' per-core passes run in parts of each engine track
 * (analysis.c): a core whose tracks hold several parts must get what one pass over every
 * slice in order gives. The oracle is that pass written out: the engine sums
 * (tp_analysis_accumulate and tp_analysis_burst_add over every record in order), each name's
 * rank, each Function Type's row, the cost hot lists (equal lost cycles in different parts
 * keep the earlier slice) and the total time, for one and three threads. The worst layers,
 * summed in parts of each TIU track too, against each layer's sums taken whole. The overlap of
 * TIU and DMA, in windows of time, against the unions of every busy interval sorted whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

enum { NT = 150001, ND = 140000, NN = 5, PART = TP_ANALYSIS_PART };
static const char *const names[NN] = {"conv.normal", "mm.normal", "tensorLd", "sys.nop", "ar.add"};

static uint64_t next(uint64_t *rng)
{
	*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
	return *rng;
}

static void add(struct tp_profile *p, int tr, uint64_t start, uint32_t cycles,
                enum tp_cmd_kind kind, enum tp_dir dir, uint32_t bytes, const char *name)
{
	struct tp_track *t = &p->tracks[tr];
	struct tp_slice *s = tp_track_push(p, tr);
	tp_slice_set_start_cycle(p, t, s, start);
	s->cycles = cycles;
	s->start_ns = tp_cycles_to_ns(start, 1000);
	tp_slice_set_end(p, t, s, tp_cycles_to_ns(start + cycles - 1, 1000));
	tp_slice_set_kind(p, t, s, (uint8_t)kind);
	tp_slice_set_dir(p, t, s, (uint8_t)dir);
	tp_slice_set_bytes(p, t, s, bytes);
	tp_slice_set_name(p, t, s, tp_profile_str(p, name));
}

/* TIU: three parts of commands of five names and three Function Types, costs with many
 * equal lost cycles and a few long commands in every part; sys and wait records. */
static void add_tiu(struct tp_profile *p, int t0, const uint32_t *types)
{
	uint64_t rng = 17, at = 0;
	for (int i = 0; i < NT; i++) {
		uint64_t r = next(&rng);
		uint32_t cyc = 10 * (uint32_t)((r >> 33) % 4 + 1);
		if ((r >> 30) % 4000 == 0)
			cyc = 500 + 10 * (uint32_t)((r >> 12) % 3);
		int nm = (int)((r >> 20) % NN);
		enum tp_cmd_kind kind =
		    nm == 3 ? ((r >> 50) & 1 ? TP_CMD_SYS_WAIT : TP_CMD_SYS) : TP_CMD_NORMAL;
		add(p, t0, at, cyc, kind, TP_DIR_NONE, 0, names[nm]);
		struct tp_track *t = &p->tracks[t0];
		assert_int_equal(tp_slice_set_type(p, t, &t->slices[i], types[nm % 3]), TP_OK);
		struct tp_cost k = {.alg_ops = 1 + (r >> 40) % 3,
		                    .uarch_ops = 2 + (r >> 42) % 3,
		                    .alg_cycle = cyc / 2,
		                    .init_cycle = (r >> 45) % 2 ? cyc / 5 : 0,
		                    .bank_cycle = (uint32_t)(r >> 47) % 3,
		                    .valid = (r >> 52) % 7 != 0};
		assert_int_equal(tp_track_set_cost(p, t0, (size_t)i, &k), TP_OK);
		at += cyc / 2 + (r >> 58);
	}
}

/* GDMA: three parts of DDR, L2 and local moves with stalls, some with burst counters. */
static void add_gdma(struct tp_profile *p, int g0)
{
	static const enum tp_dir dirs[] = {TP_DIR_DDR_TO_LMEM, TP_DIR_LMEM_TO_DDR,
	                                   TP_DIR_DDR_TO_DDR,  TP_DIR_LMEM_TO_LMEM,
	                                   TP_DIR_DDR_TO_L2,   TP_DIR_L2_TO_LMEM};
	uint64_t rng = 29, at = 5;
	for (int i = 0; i < ND; i++) {
		uint64_t r = next(&rng);
		uint32_t cyc = (uint32_t)(r >> 40) % 200 + 1;
		enum tp_cmd_kind kind = (r >> 30) % 9 == 0 ? TP_CMD_SYS : TP_CMD_NORMAL;
		add(p, g0, at, cyc, kind, dirs[(r >> 20) % 6], (uint32_t)(r >> 50) % 3 * 64,
		    names[2 + (r >> 25) % 2]);
		struct tp_track *t = &p->tracks[g0];
		assert_int_equal(tp_slice_set_stall(p, t, &t->slices[i], (uint32_t)(r >> 55)),
		                 TP_OK);
		if ((r >> 35) % 4 == 0) {
			tp_args_begin(p);
			tp_args_add_uint(p, TP_KEY_GMEM_XACT, 1 + (r >> 36) % 9);
			tp_args_add_uint(p, "gmem_bl_sum", (r >> 44) % 100);
			t->slices[i].args = tp_args_end(p);
		}
		at += cyc / 3 + 1;
	}
}

struct hot_ent {
	double lost;
	size_t slice;
};

/* Worst first, then slice order: the stable sort of entries made in slice order. */
static int ent_cmp(const void *x, const void *y)
{
	const struct hot_ent *a = x, *b = y;
	if (a->lost != b->lost)
		return a->lost > b->lost ? -1 : 1;
	return (a->slice > b->slice) - (a->slice < b->slice);
}

struct oracle {
	struct tp_engine_stats eng[2]; /* TIU, GDMA */
	struct {
		uint64_t count;
		int64_t total, min, max;
	} rank[2][NN];
	uint64_t ft_instr[3], ft_asic[3], ft_alg[3], ft_aops[3], ft_uops[3];
	struct hot_ent *lo, *hi;
	size_t nlo, nhi;
	int64_t first, last;
};

static int name_of(const struct tp_profile *p, uint32_t id)
{
	int n = 0;
	while (n < NN && tp_profile_str((struct tp_profile *)p, names[n]) != id)
		n++;
	assert_true(n < NN);
	return n;
}

/* One record of TIU (e = 0) or GDMA (e = 1) into the oracle, as the one pass takes it. */
static void oracle_one(const struct tp_profile *p, const struct tp_burst_keys *bk,
                       const uint32_t *types, struct oracle *o, int e, const struct tp_track *t,
                       size_t i)
{
	const struct tp_slice *s = &t->slices[i];
	struct tp_cost k;
	if (!e)
		tp_track_get_cost(t, i, &k);
	tp_analysis_accumulate(t, s, e ? NULL : &k, &o->eng[e]);
	if (e)
		tp_analysis_burst_add(p, bk, t, s, &o->eng[e]);
	int64_t end = tp_slice_end(t, s), dur = end - s->start_ns;
	o->first = s->start_ns < o->first ? s->start_ns : o->first;
	o->last = end > o->last ? end : o->last;
	int n = name_of(p, tp_slice_name(t, s));
	o->rank[e][n].count++;
	o->rank[e][n].total += dur;
	o->rank[e][n].min = dur < o->rank[e][n].min ? dur : o->rank[e][n].min;
	o->rank[e][n].max = dur > o->rank[e][n].max ? dur : o->rank[e][n].max;
	if (e)
		return;
	int f = 0;
	while (types[f] != tp_slice_type(t, s))
		f++;
	o->ft_instr[f]++;
	o->ft_asic[f] += s->cycles;
	o->ft_alg[f] += k.valid ? k.alg_cycle : 0;
	o->ft_aops[f] += k.valid ? k.alg_ops : 0;
	o->ft_uops[f] += k.valid ? k.uarch_ops : 0;
	if (!k.valid || tp_slice_kind(t, s) != TP_CMD_NORMAL)
		return;
	if (k.uarch_ops > k.alg_ops)
		o->lo[o->nlo++] = (struct hot_ent){(double)s->cycles * (1.0 - k.uarch_rate), i};
	if (k.init_ratio > 0.01)
		o->hi[o->nhi++] = (struct hot_ent){(double)k.init_cycle, i};
}

static void oracle_make(const struct tp_profile *p, const struct tp_track *const tr[2],
                        const uint32_t *types, struct oracle *o)
{
	memset(o, 0, sizeof *o);
	o->first = INT64_MAX;
	o->last = INT64_MIN;
	for (int e = 0; e < 2; e++)
		for (int n = 0; n < NN; n++)
			o->rank[e][n].min = INT64_MAX, o->rank[e][n].max = INT64_MIN;
	o->lo = calloc(NT, sizeof *o->lo);
	o->hi = calloc(NT, sizeof *o->hi);
	assert_non_null(o->lo);
	assert_non_null(o->hi);
	struct tp_burst_keys bk;
	assert_true(tp_analysis_burst_keys(p, &bk));
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < tr[e]->count; i++)
			oracle_one(p, &bk, types, o, e, tr[e], i);
	qsort(o->lo, o->nlo, sizeof *o->lo, ent_cmp);
	qsort(o->hi, o->nhi, sizeof *o->hi, ent_cmp);
	/* What the case must exercise: every sum non-zero, more hot entries than a list keeps,
	 * among the worst some of the last part, and equal lost cycles in different parts. */
	assert_true(o->eng[1].ddr_burst_sum > 0 && o->eng[1].l2_bytes > 0 &&
	            o->eng[1].stall_cycle > 0 && o->eng[0].bank_cycle > 0 &&
	            o->eng[0].cost_missing > 0 && o->eng[0].wait_cycle > 0);
	assert_true(o->nlo > TP_ANALYSIS_HOT && o->nhi > TP_ANALYSIS_HOT);
	/* The TIU track's parts as the analysis cuts it (tp_split_at): slices per part. */
	size_t per = (NT + tp_split_count(NT, PART) - 1) / tp_split_count(NT, PART);
	assert_true(tp_split_count(NT, PART) >= 3);
	int late = 0, tie = 0;
	for (size_t i = 0; i < TP_ANALYSIS_HOT; i++) {
		late |= (o->lo[i].slice >= 2 * per) | (o->hi[i].slice >= 2 * per) << 1;
		for (size_t k = i + 1; k < TP_ANALYSIS_HOT; k++) {
			tie |= o->lo[i].lost == o->lo[k].lost &&
			       o->lo[i].slice / per != o->lo[k].slice / per;
			tie |= (o->hi[i].lost == o->hi[k].lost &&
			        o->hi[i].slice / per != o->hi[k].slice / per)
			       << 1;
		}
	}
	assert_int_equal(late, 3);
	assert_int_equal(tie, 3);
}

/* got's sums must be the oracle's: the fields derived from them, and those the driver sets
 * per track, are taken from got itself. */
static void check_sums(const struct tp_engine_stats *got, const struct tp_engine_stats *want)
{
	struct tp_engine_stats w;
	memcpy(&w, got, sizeof w); /* padding too: the whole struct is compared */
	w.total_cycle = want->total_cycle;
	w.sys_cycle = want->sys_cycle;
	w.wait_cycle = want->wait_cycle;
	w.busy_cycle = want->busy_cycle;
	w.ddr_bytes = want->ddr_bytes;
	w.ddr_cycle = want->ddr_cycle;
	w.l2_bytes = want->l2_bytes;
	w.l2_cycle = want->l2_cycle;
	w.ddr_read_bytes = want->ddr_read_bytes;
	w.ddr_write_bytes = want->ddr_write_bytes;
	w.ddr_read_cycle = want->ddr_read_cycle;
	w.ddr_write_cycle = want->ddr_write_cycle;
	w.stall_cycle = want->stall_cycle;
	w.ddr_burst_sum = want->ddr_burst_sum;
	w.ddr_xact = want->ddr_xact;
	w.alg_ops = want->alg_ops;
	w.uarch_ops = want->uarch_ops;
	w.alg_cycle = want->alg_cycle;
	w.init_cycle = want->init_cycle;
	w.bank_cycle = want->bank_cycle;
	w.cost_commands = want->cost_commands;
	w.cost_missing = want->cost_missing;
	assert_memory_equal(&w, got, sizeof w);
}

static void check(const struct tp_profile *p, const struct tp_analysis *a,
                  const struct tp_track *const tr[2], const uint32_t *types, const struct oracle *o)
{
	assert_int_equal(a->total_time_ns, o->last - o->first);
	check_sums(&a->cores[0].eng[TP_TRACK_TIU], &o->eng[0]);
	check_sums(&a->cores[0].eng[TP_TRACK_GDMA], &o->eng[1]);
	assert_int_equal(a->cores[0].eng[TP_TRACK_TIU].records, NT);
	assert_int_equal(a->cores[0].eng[TP_TRACK_GDMA].records, ND);
	assert_int_equal(a->num_top_cmds, NN + 2);
	for (size_t i = 0; i < a->num_top_cmds; i++) {
		const struct tp_rank *r = &a->top_cmds[i];
		int e = r->type == tr[1]->name;
		assert_true(e || r->type == tr[0]->name);
		int n = name_of(p, r->name);
		assert_int_equal(r->count, o->rank[e][n].count);
		assert_int_equal(r->total_ns, o->rank[e][n].total);
		assert_int_equal(r->min_ns, o->rank[e][n].min);
		assert_int_equal(r->max_ns, o->rank[e][n].max);
	}
	assert_int_equal(a->cores[0].num_ftypes, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct tp_ftype_stats *f = &a->cores[0].ftypes[i];
		int k = 0;
		while (types[k] != f->type)
			k++;
		assert_int_equal(f->instr, o->ft_instr[k]);
		assert_int_equal(f->asic_cycle, o->ft_asic[k]);
		assert_int_equal(f->alg_cycle, o->ft_alg[k]);
		assert_int_equal(f->alg_ops, o->ft_aops[k]);
		assert_int_equal(f->uarch_ops, o->ft_uops[k]);
	}
	assert_int_equal(a->num_low_uarch, TP_ANALYSIS_HOT);
	assert_int_equal(a->num_high_init, TP_ANALYSIS_HOT);
	for (size_t i = 0; i < TP_ANALYSIS_HOT; i++) {
		assert_int_equal(a->low_uarch[i].slice, o->lo[i].slice);
		assert_true(a->low_uarch[i].lost_cycles == o->lo[i].lost);
		assert_int_equal(a->high_init[i].slice, o->hi[i].slice);
		assert_true(a->high_init[i].lost_cycles == o->hi[i].lost);
	}
}

static void test_core_parts(void **state)
{
	(void)state;
	int t0, g0;
	struct tp_profile *p = tp_test_tiu_gdma("dev", 1, 1000, &t0, &g0);
	const uint32_t types[3] = {tp_profile_str(p, "sCONV"), tp_profile_str(p, "sMM"),
	                           tp_profile_str(p, "SYS")};
	add_tiu(p, t0, types);
	add_gdma(p, g0);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	const struct tp_track *const tr[2] = {&p->tracks[t0], &p->tracks[g0]};
	struct oracle o;
	oracle_make(p, tr, types, &o);
	static const unsigned jobs[] = {1, 3};
	int64_t overlap = 0, tiu_union = 0; /* not in the oracle: the same for every run */
	for (size_t j = 0; j < 2; j++) {
		struct tp_analysis a;
		assert_int_equal(tp_analyze_jobs(p, &a, jobs[j]), TP_OK);
		check(p, &a, tr, types, &o);
		if (!j)
			overlap = a.cores[0].overlap_ns,
			tiu_union = a.cores[0].eng[TP_TRACK_TIU].union_ns;
		assert_true(overlap > 0 && tiu_union > 0);
		assert_int_equal(a.cores[0].overlap_ns, overlap);
		assert_int_equal(a.cores[0].eng[TP_TRACK_TIU].union_ns, tiu_union);
		tp_analysis_free(&a);
	}
	/* Out of memory at each allocation of the analysis in turn: TP_ENOMEM and nothing left
	 * allocated (ASan), until one that needs no more gives the same figures. */
	for (long n = 0;; n++) {
		struct tp_analysis a;
		tp_alloc_fail_after(n);
		int st = tp_analyze_jobs(p, &a, 1);
		tp_alloc_fail_after(-1);
		if (st == TP_OK) {
			check(p, &a, tr, types, &o);
			assert_int_equal(a.cores[0].overlap_ns, overlap);
			tp_analysis_free(&a);
			assert_true(n > 10);
			break;
		}
		assert_int_equal(st, TP_ENOMEM);
	}
	free(o.lo);
	free(o.hi);
	tp_profile_free(p);
}

/* The worst layers of a TIU track of several parts: a layer's run crossing two part
 * boundaries, only slices of no layer (an invalid cost) filling a whole part inside one run,
 * a part of a single run, hundreds of short runs; with `back`, a layer whose commands come
 * back in a later part (the per-layer sums instead). The oracle: each layer's sums, lost
 * cycles, the ten worst (then layer index). */
static void layer_parts_case(int back)
{
	enum { NL = 400, N = 5 * PART };
	int t0;
	struct tp_profile *p = tp_test_one_track("dev", TP_TRACK_TIU, NULL, 1000, &t0);
	for (int i = 0; i < NL; i++) {
		struct tp_layer l = {
		    .id = i, .core = 0, .subnet = -1, .group = -1, .begin_ns = 1, .end_ns = 0};
		assert_int_equal(tp_profile_add_layer(p, &l), i);
	}
	struct lacc_want {
		uint64_t alg, uarch, asic;
	} *want = calloc(NL, sizeof *want);
	assert_non_null(want);
	uint64_t rng = 5;
	int layer = 0, left = PART + PART / 2; /* layer 0 runs over the first boundary */
	int lng = -1;                          /* the layer of the run over two boundaries */
	for (int i = 0; i < N; i++) {
		uint64_t r = next(&rng);
		if (--left < 0) {
			layer = layer + 1 < NL ? layer + 1 : NL - 1;
			left = (int)(r >> 40) % 600;
		}
		int none = i >= 2 * PART - 100 && i < 3 * PART + 100; /* inside lng's run */
		if (i == 2 * PART - 200)
			lng = ++layer, left = 2 * PART;
		int l = back && i >= 4 * PART && i < 4 * PART + 50 ? 0 : layer;
		uint32_t cyc = 10 + (uint32_t)(r >> 50) % 90;
		add(p, t0, (uint64_t)i * 100, cyc, TP_CMD_NORMAL, TP_DIR_NONE, 0, "conv.normal");
		p->tracks[t0].slices[i].layer = l;
		struct tp_cost c = {.alg_ops = 1 + (r >> 20) % 50,
		                    .uarch_ops = 60 + (r >> 30) % 40,
		                    .init_cycle = (uint32_t)(r >> 10) % 7,
		                    .valid = !none};
		assert_int_equal(tp_track_set_cost(p, t0, (size_t)i, &c), TP_OK);
		if (!none) {
			want[l].alg += c.alg_ops;
			want[l].uarch += c.uarch_ops;
			want[l].asic += cyc;
		}
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct hot_ent *w = calloc(NL, sizeof *w);
	assert_non_null(w);
	size_t nw = 0; /* the layers with commands (the others have no figures) */
	for (int l = 0; l < NL; l++)
		if (want[l].uarch > want[l].alg)
			w[nw++] = (struct hot_ent){
			    (double)want[l].asic *
			        (1.0 - (double)want[l].alg / (double)want[l].uarch),
			    (size_t)l};
	assert_true(nw > TP_ANALYSIS_HOT);
	qsort(w, nw, sizeof *w, ent_cmp);
	static const unsigned jobs[] = {1, 3};
	for (size_t j = 0; j < 2; j++) {
		struct tp_analysis a;
		assert_int_equal(tp_analyze_jobs(p, &a, jobs[j]), TP_OK);
		assert_int_equal(a.num_low_uarch_layers, TP_ANALYSIS_HOT);
		for (size_t i = 0; i < TP_ANALYSIS_HOT; i++) {
			const struct tp_cost_hot *h = &a.low_uarch_layers[i];
			assert_int_equal(h->layer, (int32_t)w[i].slice);
			assert_int_equal(h->asic_cycle, want[h->layer].asic);
			assert_int_equal(h->alg_ops, want[h->layer].alg);
			assert_int_equal(h->uarch_ops, want[h->layer].uarch);
			assert_true(h->lost_cycles == w[i].lost);
		}
		tp_analysis_free(&a);
	}
	/* Layer 0 and lng, whose runs cross the boundaries, are among the worst. */
	int seen = 0;
	for (size_t i = 0; i < TP_ANALYSIS_HOT; i++)
		seen |= (w[i].slice == 0) | (w[i].slice == (size_t)lng) << 1;
	assert_int_equal(seen, 3);
	free(w);
	free(want);
	tp_profile_free(p);
}

static void test_layer_hot_parts(void **state)
{
	(void)state;
	layer_parts_case(0);
	layer_parts_case(1);
}

struct span {
	int64_t b, e;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;
	return (a->b > b->b) - (a->b < b->b);
}

/* Sorts v and merges it into its union in place (touching spans merge); the union's length. */
static int64_t span_union(struct span *v, size_t *n)
{
	qsort(v, *n, sizeof *v, span_cmp);
	size_t m = 0;
	for (size_t i = 1; i < *n; i++)
		if (v[i].b <= v[m].e)
			v[m].e = v[i].e > v[m].e ? v[i].e : v[m].e;
		else
			v[++m] = v[i];
	*n = *n ? m + 1 : 0;
	int64_t len = 0;
	for (size_t i = 0; i < *n; i++)
		len += v[i].e - v[i].b;
	return len;
}

/* Busy spans of TIU and of the DMA tracks of one core, several windows of slices each: long
 * commands reaching over many windows, sys records, DMA on two tracks; with `shuffle`, a
 * track out of start order, and with `many`, 16 more DMA tracks than the windows take (the
 * whole-core path both). The oracle: both unions sorted whole and their intersection. */
static void overlap_case(int shuffle, int many)
{
	enum { NS = 90000, MANY = 16, NM = 500 };
	int t0, g0;
	struct tp_profile *p = tp_test_tiu_gdma("dev", 1, 1000, &t0, &g0);
	int s0 = tp_profile_add_track(p, 0, 0, TP_TRACK_SDMA, NULL, 1000);
	const int tr[3] = {t0, g0, s0};
	struct span *sp[2];
	size_t n[2] = {0, 0};
	sp[0] = calloc(3 * NS, sizeof *sp[0]);
	sp[1] = calloc(3 * NS + MANY * NM, sizeof *sp[1]);
	assert_non_null(sp[0]);
	assert_non_null(sp[1]);
	uint64_t rng = 11;
	for (int k = 0; k < 3; k++) {
		uint64_t at = (uint64_t)k * 7;
		for (int i = 0; i < NS - k * 20000; i++) {
			uint64_t r = next(&rng);
			uint32_t cyc = (r >> 20) % 500 == 0 ? 400000 : 1 + (uint32_t)(r >> 40) % 60;
			enum tp_cmd_kind kind = (r >> 30) % 11 == 0 ? TP_CMD_SYS : TP_CMD_NORMAL;
			add(p, tr[k], at, cyc, kind, TP_DIR_NONE, 0, names[k ? 2 : 0]);
			at += (r >> 50) % 90 + 1;
		}
	}
	for (int m = 0; many && m < MANY; m++) {
		int x = tp_profile_add_track(p, 0, 0, TP_TRACK_SDMA, NULL, 1000);
		for (int i = 0; i < NM; i++)
			add(p, x, (uint64_t)(m * 9000 + i * 800), 300, TP_CMD_NORMAL, TP_DIR_NONE,
			    0, names[2]);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	if (shuffle) { /* after the finish, which would sort the track */
		assert_true(p->tracks[g0].count > 60000);
		p->tracks[g0].slices[60000].start_ns = p->tracks[g0].slices[100].start_ns;
	}
	for (size_t k = 0; k < p->num_tracks; k++) {
		const struct tp_track *t = &p->tracks[k];
		int dma = t->kind != TP_TRACK_TIU;
		for (size_t i = 0; i < t->count; i++)
			if (tp_slice_kind(t, &t->slices[i]) == TP_CMD_NORMAL)
				sp[dma][n[dma]++] = (struct span){t->slices[i].start_ns,
				                                  tp_slice_end(t, &t->slices[i])};
	}
	int64_t tl = span_union(sp[0], &n[0]), dl = span_union(sp[1], &n[1]), ov = 0;
	for (size_t i = 0, j = 0; i < n[0] && j < n[1];) {
		int64_t b = sp[0][i].b > sp[1][j].b ? sp[0][i].b : sp[1][j].b;
		int64_t e = sp[0][i].e < sp[1][j].e ? sp[0][i].e : sp[1][j].e;
		ov += e > b ? e - b : 0;
		if (sp[0][i].e < sp[1][j].e)
			i++;
		else
			j++;
	}
	assert_true(ov > 0 && ov < tl && ov < dl);
	/* The path the analysis takes: several windows, swept unless a track is out of order or
	 * there are too many tracks. */
	struct tp_core_stats c = {.device = p->tracks[t0].device, .core = p->tracks[t0].core};
	struct tp_overlap *o;
	assert_int_equal(tp_overlap_plan(p, &c, &o), TP_OK);
	assert_true(tp_overlap_windows(o) >= 3);
	for (size_t w = 0; w < tp_overlap_windows(o); w++)
		tp_overlap_scan(o, w);
	assert_int_equal(tp_overlap_carry(o), !shuffle && !many);
	tp_overlap_free(o);
	static const unsigned jobs[] = {1, 3};
	for (size_t j = 0; j < 2; j++) {
		struct tp_analysis a;
		assert_int_equal(tp_analyze_jobs(p, &a, jobs[j]), TP_OK);
		assert_int_equal(a.cores[0].eng[TP_TRACK_TIU].union_ns, tl);
		assert_int_equal(a.cores[0].overlap_ns, ov);
		assert_true(a.cores[0].concurrency == (double)ov / (double)(tl < dl ? tl : dl));
		tp_analysis_free(&a);
	}
	free(sp[0]);
	free(sp[1]);
	tp_profile_free(p);
}

static void test_overlap_windows(void **state)
{
	(void)state;
	overlap_case(0, 0);
	overlap_case(1, 0);
	overlap_case(0, 1);
}

#include "tp_test_main.h"
