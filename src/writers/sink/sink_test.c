/*
 * sink_test.c — unit tests for tp_sink_drive and the reference-named arguments, on the
 * sink_fixture.h profile: track tree and order, ids (no pid/tid 0, unique uuids), lanes for
 * overlapping commands, nesting, dependency flows, arguments, derived counters, error
 * propagation and out-of-memory behaviour; slices in parts on several threads are those of the
 * one walk.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "fixtures/c/sink_fixture.h"
#include "writers/sink/sink.h"

#define MAXT 64
#define MAXS 128
#define MAXC 64

struct rec_slice {
	size_t track;
	uint64_t id, parent, flow_in, flows_out[4];
	size_t nflows_out;
	uint32_t depth;
	char name[64], cat[32];
	int64_t ts, dur;
	char args[1024]; /* "key=value;" */
};

struct rec {
	int began, ended, end_status;
	struct tp_sink_track tracks[MAXT];
	char tnames[MAXT][64], fnames[MAXT][64];
	size_t ntracks;
	struct rec_slice s[MAXS];
	size_t ns;
	struct {
		size_t track;
		int64_t ts;
		double v;
	} c[MAXC];
	size_t nc;
	uint64_t flows[8][3];
	size_t nflows;
	int fail_at_slice; /* return an error at this slice (1-based), 0 = never */
};

static int r_begin(void *ctx, const struct tp_profile *p, const struct tp_analysis *a)
{
	(void)p;
	(void)a;
	((struct rec *)ctx)->began++;
	return TP_OK;
}

static int r_track(void *ctx, const struct tp_sink_track *t)
{
	struct rec *r = ctx;
	assert_true(r->ntracks < MAXT);
	assert_int_equal(t->index, r->ntracks);
	r->tracks[r->ntracks] = *t;
	snprintf(r->tnames[r->ntracks], 64, "%s", t->name ? t->name : "");
	snprintf(r->fnames[r->ntracks], 64, "%s", t->full_name ? t->full_name : "");
	r->ntracks++;
	return TP_OK;
}

static int r_slice(void *ctx, const struct tp_sink_slice *s)
{
	struct rec *r = ctx;
	assert_true(r->ns < MAXS);
	struct rec_slice *x = &r->s[r->ns++];
	if (r->fail_at_slice && (size_t)r->fail_at_slice == r->ns)
		return TP_EOUTPUT;
	x->track = s->track->index;
	x->id = s->id;
	x->parent = s->parent_id;
	x->depth = s->depth;
	x->flow_in = s->flow_in;
	x->nflows_out = s->num_flows_out;
	for (size_t i = 0; i < s->num_flows_out && i < 4; i++)
		x->flows_out[i] = s->flows_out[i];
	snprintf(x->name, sizeof x->name, "%s", s->name);
	snprintf(x->cat, sizeof x->cat, "%s", s->category);
	x->ts = s->ts_ns;
	x->dur = s->dur_ns;
	size_t n = 0;
	for (size_t i = 0; i < s->num_args; i++) {
		const struct tp_sink_arg *a = &s->args[i];
		char v[128];
		switch (a->type) {
		case TP_ARG_INT:
			snprintf(v, sizeof v, "%lld", (long long)a->i);
			break;
		case TP_ARG_UINT:
			snprintf(v, sizeof v, "%llu", (unsigned long long)a->u);
			break;
		case TP_ARG_REAL:
			tp_sink_fmt_real(v, sizeof v, a->d);
			break;
		default:
			snprintf(v, sizeof v, "'%s'", a->s);
			break;
		}
		n += (size_t)snprintf(x->args + n, sizeof x->args - n, "%s=%s;", a->key, v);
	}
	return TP_OK;
}

static int r_counter(void *ctx, const struct tp_sink_track *t, int64_t ts, double v)
{
	struct rec *r = ctx;
	assert_true(r->nc < MAXC);
	r->c[r->nc].track = t->index;
	r->c[r->nc].ts = ts;
	r->c[r->nc].v = v;
	r->nc++;
	return TP_OK;
}

/* Both recording sinks log flows the same way: (id, source slice id, waiting slice id) as entry
 * *n of flows, which has room for cap entries. */
static int log_flow(uint64_t (*flows)[3], size_t *n, size_t cap, uint64_t id, uint64_t from,
                    uint64_t to)
{
	assert_true(*n < cap);
	flows[*n][0] = id;
	flows[*n][1] = from;
	flows[*n][2] = to;
	(*n)++;
	return TP_OK;
}

static int r_flow(void *ctx, uint64_t id, uint64_t from, uint64_t to)
{
	struct rec *r = ctx;
	return log_flow(r->flows, &r->nflows, sizeof r->flows / sizeof r->flows[0], id, from, to);
}

static int r_end(void *ctx, int status)
{
	struct rec *r = ctx;
	r->ended++;
	r->end_status = status;
	return status;
}

static int drive(const struct tp_profile *p, struct rec *r, int full)
{
	struct tp_sink sink = {r, r_begin, r_track, r_slice, r_counter, r_flow, r_end, full};
	struct tp_diag d = {0};
	return tp_sink_drive(p, NULL, &sink, &d);
}

/* Drives p through a sink that takes only slices and flows (the flow tests' recorders). */
static void drive_flows(const struct tp_profile *p, void *ctx,
                        int (*slice)(void *ctx, const struct tp_sink_slice *s),
                        int (*flow)(void *ctx, uint64_t id, uint64_t from, uint64_t to))
{
	struct tp_sink sink = {ctx, NULL, NULL, slice, NULL, flow, NULL, 0};
	struct tp_diag d = {0};
	assert_int_equal(tp_sink_drive(p, NULL, &sink, &d), TP_OK);
}

/* What the recording sink got from driving p (full: with the derivable arguments), in a
 * static recorder that the next call starts afresh. */
static const struct rec *driven(const struct tp_profile *p, int full)
{
	static struct rec r;
	memset(&r, 0, sizeof r);
	assert_int_equal(drive(p, &r, full), TP_OK);
	return &r;
}

static const struct rec_slice *find(const struct rec *r, const char *name, int64_t ts)
{
	for (size_t i = 0; i < r->ns; i++)
		if (!strcmp(r->s[i].name, name) && r->s[i].ts == ts)
			return &r->s[i];
	fail_msg("slice %s@%lld not delivered", name, (long long)ts);
	return NULL;
}

static void test_tracks(void **state)
{
	const struct rec *r = driven(*state, 0);
	assert_int_equal(r->began, 1);
	assert_int_equal(r->ended, 1);
	/* Tree order: device, core box, engines in TIU GDMA(lanes) Layer order, derived
	 * counters; next core; then the capture process with its thread and counter. */
	const char *want[][2] = {
	    {"BM1688 device 0", "BM1688 device 0"},
	    {"Core 0", "Core 0"},
	    {"TIU", "Core 0 TIU"},
	    {"GDMA", "Core 0 GDMA"},
	    {"GDMA", "Core 0 GDMA"},
	    {"Layer", "Core 0 Layer"},
	    {"DDR Bandwidth", "Core 0 DDR Bandwidth"},
	    {"TIU Utilization", "Core 0 TIU Utilization"},
	    {"Core 1", "Core 1"},
	    {"TIU", "Core 1 TIU"},
	    {"TIU Utilization", "Core 1 TIU Utilization"},
	    {"app \"quoted\" (pid 4242)", "app \"quoted\" (pid 4242)"},
	    {"main\tthread", "main\tthread"},
	    {"queue", "queue"},
	};
	assert_int_equal(r->ntracks, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < r->ntracks; i++) {
		assert_string_equal(r->tnames[i], want[i][0]);
		assert_string_equal(r->fnames[i], want[i][1]);
		const struct tp_sink_track *t = &r->tracks[i];
		assert_true(t->pid != 0);
		assert_true(t->tid != 0);
		assert_true(t->uuid != 0);
		for (size_t k = 0; k < i; k++) {
			assert_true(r->tracks[k].uuid != t->uuid);
			if (r->tracks[k].pid == t->pid && !t->is_process &&
			    !r->tracks[k].is_process)
				assert_true(r->tracks[k].tid != t->tid);
		}
		if (t->parent_uuid) {
			size_t k = 0;
			while (k < i && r->tracks[k].uuid != t->parent_uuid)
				k++;
			assert_true(k < i); /* parents come first */
		}
	}
	assert_true(r->tracks[0].is_process);
	assert_int_equal(r->tracks[0].pid, 1000); /* device id 0 must not become pid 0 */
	assert_true(r->tracks[1].is_container);
	assert_int_equal(r->tracks[3].lane, 0);
	assert_int_equal(r->tracks[4].lane, 1);
	assert_true(r->tracks[6].is_counter);
	assert_string_equal(r->tracks[6].unit, "GB/s");
	assert_int_equal(r->tracks[11].pid, 4242);
	assert_int_equal(r->tracks[12].tid, 4243);
	assert_true(r->tracks[12].nested);
	assert_true(r->tracks[13].is_counter);
	assert_string_equal(r->tracks[13].unit, "items");
}

static void test_slices_lanes_nesting_flows(void **state)
{
	const struct rec *r = driven(*state, 0);
	assert_int_equal(r->ns, 14);
	for (size_t i = 0; i < r->ns; i++)
		assert_int_equal(r->s[i].id, i + 1);
	/* The overlapping GDMA load goes to lane 1; the others stay on lane 0. */
	assert_int_equal(find(r, "tensorLd", 0)->track, 3);
	assert_int_equal(find(r, "tensorLd", 50)->track, 4);
	assert_int_equal(find(r, "tensorSt", 950)->track, 3);
	/* Layers synthesised from the layer table. */
	const struct rec_slice *conv = find(r, "Conv2D", 0);
	assert_int_equal(conv->track, 5);
	assert_int_equal(conv->dur, 400);
	assert_string_equal(conv->args, "Layer Id=7;Layer Type='Conv2D';Layer Name='conv1';");
	/* Capture nesting: step > op > runtime, then a sibling op. */
	const struct rec_slice *step = find(r, "step 0", 0), *op = find(r, "MatMul\n<\x01>", 100),
	                       *rt = find(r, "launch\\kernel", 200), *sm = find(r, "Softmax", 600);
	assert_int_equal(step->depth, 0);
	assert_int_equal(step->parent, 0);
	assert_int_equal(op->depth, 1);
	assert_int_equal(op->parent, step->id);
	assert_int_equal(rt->depth, 2);
	assert_int_equal(rt->parent, op->id);
	assert_int_equal(sm->depth, 1);
	assert_int_equal(sm->parent, step->id);
	assert_string_equal(op->cat, "op");
	/* Flows: TIU mm.normal (dep 2) waits for GDMA cmd 2; GDMA tensorSt (dep 3) waits for
	 * TIU cmd 3. The flow id is the waiting slice's id. */
	const struct rec_slice *mm = find(r, "mm.normal", 400), *ld2 = find(r, "tensorLd", 50),
	                       *mm3 = find(r, "mm.normal", 900), *st = find(r, "tensorSt", 950),
	                       *cv = find(r, "conv.normal", 100), *st3 = find(r, "tensorSt", 950);
	/* Flow 1 is open over [50,400]; the second flow starts at 900, after it ended, so it
	 * reuses id 1 (ids are kept small). conv.normal's dep matches a later command: no flow. */
	assert_int_equal(mm->flow_in, 1);
	assert_int_equal(ld2->nflows_out, 1);
	assert_int_equal(ld2->flows_out[0], 1);
	assert_int_equal(st->flow_in, 1);
	assert_int_equal(mm3->nflows_out, 1);
	assert_int_equal(mm3->flows_out[0], 1);
	assert_int_equal(cv->flow_in, 0);
	assert_int_equal(st3->nflows_out, 0);
	assert_int_equal(r->nflows, 2);
	assert_int_equal(r->flows[0][0], 1);
	assert_int_equal(r->flows[0][1], ld2->id);
	assert_int_equal(r->flows[0][2], mm->id);
	assert_int_equal(r->flows[1][0], 1);
	assert_int_equal(r->flows[1][1], mm3->id);
	assert_int_equal(r->flows[1][2], st->id);
}

static void test_args(void **state)
{
	const struct rec *r = driven(*state, 0);
	assert_string_equal(find(r, "conv.normal", 100)->args,
	                    "Function Type='sCONV';Data Type='INT8';Layer Id=7;Cmd Id=1;"
	                    "des_cmd_id_dep=3;");
	assert_string_equal(find(r, "conv.normal", 100)->cat, "TIU");
	assert_string_equal(find(r, "mm.normal", 400)->args,
	                    "Function Type='sMM';Layer Id=9;Cmd Id=2;des_cmd_id_dep=2;");
	/* 4096 B in 101 cycles at 1000 MHz = 40.554455 GB/s, rounded to 4 decimals. */
	assert_string_equal(find(r, "tensorLd", 0)->args,
	                    "Function Type='DMA_tensor';Direction='DDR->LMEM';Data Type='INT8';"
	                    "Cmd Id=1;DMA data size(B)=4096;DDR Bandwidth(GB/s)=40.5545;"
	                    "Stall Cycle=5;");
	assert_string_equal(find(r, "tensorSt", 950)->args,
	                    "Function Type='DMA_tensor';Direction='LMEM->DDR';Cmd Id=3;"
	                    "cmd_id_dep=3;DMA data size(B)=512;DDR Bandwidth(GB/s)=10.0392;");
	/* sys commands carry no bandwidth fields. */
	assert_string_equal(find(r, "system.wait_msg", 1000)->args,
	                    "Function Type='SYS';Cmd Id=4;");
	assert_string_equal(find(r, "arith.add", 0)->args,
	                    "Function Type='sAR';Cmd Id=1;uArch Rate='37.5%';");
	assert_string_equal(find(r, "MatMul\n<\x01>", 100)->args,
	                    "op_type='MatMul';attr.path='C:\\tmp\\x</script>';flops=1048576;"
	                    "weight_sparse_ratio=0.25;delta=-3;");
	/* The full set adds the derivable fields. */
	r = driven(*state, 1);
	assert_string_equal(find(r, "conv.normal", 100)->args,
	                    "Function Name='conv.normal';Function Type='sCONV';Data Type='INT8';"
	                    "Layer Id=7;Layer Type='Conv2D';Layer Name='conv1';Cmd Id=1;"
	                    "des_cmd_id_dep=3;Global Idx=1;Start Cycle=100;End Cycle=400;"
	                    "Asic Cycle=301;");
}

static void test_counters(void **state)
{
	const struct rec *r = driven(*state, 0);
	/* Span [0,1100) in 1000 ns windows. Core 0 DDR: 4096+8192+512 B in window 0 = 12.8
	 * GB/s, then 0. Core 0 TIU: 900 of 1000 ns busy (the wait_msg in window 1 is sys) = 90 %,
	 * then 0. Core 1 TIU: 50 ns = 5 %. Then the captured counter as recorded. */
	struct {
		size_t track;
		int64_t ts;
		double v;
	} want[] = {
	    {6, 0, 12.8},  {6, 1000, 0}, {7, 0, 90},   {7, 1000, 0}, {10, 0, 5},
	    {10, 1000, 0}, {13, 0, 0},   {13, 100, 3}, {13, 600, 1},
	};
	assert_int_equal(r->nc, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < r->nc; i++) {
		assert_int_equal(r->c[i].track, want[i].track);
		assert_int_equal(r->c[i].ts, want[i].ts);
		assert_float_equal(r->c[i].v, want[i].v, 1e-9);
	}
}

static void test_errors(void **state)
{
	(void)state;
	struct tp_profile *p = fx_profile();
	static struct rec r;
	memset(&r, 0, sizeof r);
	r.fail_at_slice = 3;
	struct tp_sink sink = {&r, r_begin, r_track, r_slice, r_counter, r_flow, r_end, 0};
	struct tp_diag d = {0};
	assert_int_equal(tp_sink_drive(p, NULL, &sink, &d), TP_EOUTPUT);
	assert_int_equal(r.ns, 3);
	assert_int_equal(r.ended, 1); /* end still runs, with the error */
	assert_int_equal(r.end_status, TP_EOUTPUT);
	assert_int_equal(r.nc, 0);
	/* A track pointing at no device is an input error, found before anything is sent. */
	p->tracks[0].device = 7;
	memset(&r, 0, sizeof r);
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_sink_drive(p, NULL, &sink, &d), TP_EFORMAT);
	assert_non_null(strstr(d.msg, "has no device"));
	assert_int_equal(r.began, 0);
	p->tracks[0].device = 0;
	/* Out of memory anywhere in the plan: a clean TP_ENOMEM. */
	int ok = 0;
	for (long n = 0; n < 300 && !ok; n++) {
		memset(&r, 0, sizeof r);
		memset(&d, 0, sizeof d);
		tp_alloc_fail_after(n);
		int st = tp_sink_drive(p, NULL, &sink, &d);
		tp_alloc_fail_after(-1);
		if (st == TP_OK)
			ok = 1;
		else
			assert_int_equal(st, TP_ENOMEM);
	}
	assert_true(ok);
	tp_profile_free(p);
}

static void test_fmt_real(void **state)
{
	(void)state;
	char b[40];
	tp_sink_fmt_real(b, sizeof b, 0.1);
	assert_string_equal(b, "0.1");
	tp_sink_fmt_real(b, sizeof b, 40.5545);
	assert_string_equal(b, "40.5545");
	tp_sink_fmt_real(b, sizeof b, -0.0);
	assert_string_equal(b, "0");
	tp_sink_fmt_real(b, sizeof b, 1.0 / 3.0);
	assert_string_equal(b, "0.33333333333333331");
	tp_sink_fmt_real(b, sizeof b, 1e300 * 1e300);
	assert_string_equal(b, "inf");
	tp_sink_fmt_real(b, sizeof b, -12.05);
	assert_string_equal(b, "-12.05");
	tp_sink_fmt_real(b, sizeof b, 123456789.0001);
	assert_string_equal(b, "123456789.0001");
	/* The 4-decimal fast path prints what "%.15g" (or "%.17g" when that does not read back)
	 * prints: values rounded to 4 decimals as the writers round them, and raw doubles. */
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double mag = (double)(x % 1000000000000ull) / (double)(1ull << (x >> 58));
		double v = (x & 1 ? -1 : 1) * mag / 1e4;
		if (i & 2)
			v = round(v * 1e4) / 1e4;
		char want[40];
		snprintf(want, sizeof want, "%.15g", v);
		if (strtod(want, NULL) != v)
			snprintf(want, sizeof want, "%.17g", v);
		if (v == 0)
			strcpy(want, "0");
		size_t n = tp_sink_fmt_real(b, sizeof b, v);
		assert_string_equal(b, want);
		assert_int_equal(n, strlen(want));
	}
}

/* Flow bookkeeping of many dependencies: each drawn flow's id is the waiter's flow_in and one
 * of its source's flows_out. Waiters whose sources descend (the source-ordered edge list must
 * be fully sorted) and ones whose sources nearly ascend (two by two swapped: the cheap path)
 * give the same kind of result: every waiter has exactly one flow. */
struct flowrec {
	uint64_t *in;   /* by slice id */
	uint64_t *outs; /* by slice id: up to 2 ids */
	size_t n, flows, bad;
	uint64_t max_id;
};

static int f_slice(void *ctx, const struct tp_sink_slice *s)
{
	struct flowrec *f = ctx;
	assert_true(s->id < f->n);
	f->in[s->id] = s->flow_in;
	assert_true(s->num_flows_out <= 2);
	for (size_t i = 0; i < s->num_flows_out; i++)
		f->outs[2 * s->id + i] = s->flows_out[i];
	return TP_OK;
}

static int f_flow(void *ctx, uint64_t id, uint64_t from, uint64_t to)
{
	struct flowrec *f = ctx;
	f->flows++;
	if (id > f->max_id)
		f->max_id = id;
	if (from >= f->n || to >= f->n || f->in[to] != id ||
	    (f->outs[2 * from] != id && f->outs[2 * from + 1] != id))
		f->bad++;
	return TP_OK;
}

static void test_many_flows(void **state)
{
	(void)state;
	/* Pattern 2: 70 000 flows all open at once (every waiter after every source): ids
	 * 1..70 000, past what 1 and 2 bytes per stored id hold. */
	for (int pattern = 0; pattern < 3; pattern++) {
		const int N = pattern == 2 ? 70000 : 3000;
		struct tp_profile *p = tp_profile_new();
		assert_non_null(p);
		int dev = tp_profile_add_device(p, "d", 0, 1);
		int tiu = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, "TIU", 1000);
		int gdma = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, "GDMA", 1000);
		for (int j = 0; j < N; j++)
			fx_cmd(p, gdma, "ld", "DMA_tensor", j * 10, j * 10 + 5, (uint32_t)j + 1);
		for (int k = 0; k < N; k++) {
			struct tp_slice *s = fx_cmd(p, tiu, "mm", "sMM", N * 10 + k * 10,
			                            N * 10 + k * 10 + 5, (uint32_t)k + 1);
			s->dep_id = pattern == 0   ? (uint32_t)(N - k)
			            : pattern == 1 ? (uint32_t)((k ^ 1) + 1)
			                           : (uint32_t)k + 1;
		}
		assert_int_equal(tp_profile_finish(p), TP_OK);
		struct flowrec f = {calloc(2 * (size_t)N + 2, 8),
		                    calloc(4 * (size_t)N + 4, 8),
		                    2 * (size_t)N + 2,
		                    0,
		                    0,
		                    0};
		assert_non_null(f.in);
		assert_non_null(f.outs);
		drive_flows(p, &f, f_slice, f_flow);
		assert_int_equal(f.flows, N);
		assert_int_equal(f.bad, 0);
		if (pattern != 1) /* every flow is open when the last source starts */
			assert_int_equal(f.max_id, N);
		size_t waiters = 0;
		for (size_t id = 1; id < f.n; id++)
			waiters += f.in[id] != 0;
		assert_int_equal(waiters, N);
		free(f.in);
		free(f.outs);
		tp_profile_free(p);
	}
}

/* Flows against a reference written from the documented rules (docs/trace-outputs.md), on
 * two cores whose TIU and GDMA wait for each other with repeated cmd ids (so the partner
 * lookup needs its index), sources far out of order (more than a block of the source-order
 * walk), hot sources with many waiters (more than 8), and model flows between the
 * cores' TIU tracks that compete with dependencies for the same waiting slice (and the same
 * without model flows, also with cmd ids in order):
 *   - a waiter's source is the partner's latest command with its dep_id that started no
 *     later; no flow when that one starts at the same time;
 *   - a slice ends at most one flow: of the edges into it, the first by source slice id;
 *   - a source keeps all its edges, in waiting slice id order;
 *   - in order of (source start, source id, waiter id), a flow takes the smallest id not
 *     held by a flow whose waiter starts at or after its source's start.
 * The sink must report exactly these flows (in waiter order), flow_in and flows_out. */
#define RN 3000                     /* commands per track */
#define RT 4                        /* tracks: TIU0, GDMA0, TIU1, GDMA1 */
#define RF 40                       /* model flows */
#define RR_FLOWS (2 * RT * RN + RF) /* room in struct rref's flows */

struct rslice {
	int track, idx;
	uint64_t flow_in, *out; /* out: a copy of flows_out (malloc) */
	size_t nout;
};

struct rref {
	const struct tp_profile *p;
	uint64_t ids[RT][RN]; /* slice id by model track and index */
	struct rslice *by_id; /* RT * RN + 1 */
	uint64_t (*flows)[3];
	size_t nflows;
};

static int rr_slice(void *ctx, const struct tp_sink_slice *s)
{
	struct rref *r = ctx;
	int t = s->track->model_track;
	assert_true(t >= 0 && t < RT && s->id >= 1 && s->id <= RT * RN);
	int idx = (int)(s->slice - r->p->tracks[t].slices);
	r->ids[t][idx] = s->id;
	struct rslice *x = &r->by_id[s->id];
	x->track = t;
	x->idx = idx;
	x->flow_in = s->flow_in;
	x->nout = s->num_flows_out;
	if (x->nout) {
		x->out = malloc(x->nout * sizeof *x->out);
		assert_non_null(x->out);
		memcpy(x->out, s->flows_out, x->nout * sizeof *x->out);
	}
	return TP_OK;
}

static int rr_flow(void *ctx, uint64_t id, uint64_t from, uint64_t to)
{
	struct rref *r = ctx;
	return log_flow(r->flows, &r->nflows, RR_FLOWS, id, from, to);
}

struct redge {
	uint64_t src, dst, id;
	int64_t src_ns, dst_ns;
	int dropped;
};

static int redge_dst_cmp(const void *x, const void *y)
{
	const struct redge *a = x, *b = y;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	return a->src < b->src ? -1 : a->src > b->src;
}

static int redge_src_cmp(const void *x, const void *y)
{
	const struct redge *a = *(const struct redge *const *)x,
	                   *b = *(const struct redge *const *)y;
	if (a->src_ns != b->src_ns)
		return a->src_ns < b->src_ns ? -1 : 1;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	return a->dst < b->dst ? -1 : a->dst > b->dst;
}

/* The reference test's profile: two cores' TIU and GDMA tracks of RN commands with random
 * dependencies (mode 1: cmd ids ascend, so the plan finds the edges again instead of storing
 * their ends; mode 0: cmd ids repeat, plus RF model flows). tr gets the model tracks. */
static struct tp_profile *reference_profile(int mode, int tr[RT])
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	int dev = tp_profile_add_device(p, "d", 0, 2);
	for (int c = 0; c < 2; c++) {
		tr[2 * c] = tp_profile_add_track(p, dev, c, TP_TRACK_TIU, "TIU", 1000);
		tr[2 * c + 1] = tp_profile_add_track(p, dev, c, TP_TRACK_GDMA, "GDMA", 1000);
	}
	uint32_t seed = 12345;
#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 8) % 1000003u)
	for (int t = 0; t < RT; t++)
		for (int j = 0; j < RN; j++) {
			/* Non-overlapping, start ties across tracks; cmd ids repeat every 700
			 * (mode 1: ascending). */
			int64_t b = (int64_t)j * 10 + (int64_t)(RND() % 3);
			uint32_t m = mode == 1 ? RN + 1 : 700;
			struct tp_slice *s = fx_cmd(p, tr[t], t % 2 ? "ld" : "mm", "x", b, b + 5,
			                            (uint32_t)(j % (int)m) + 1);
			uint32_t r = (uint32_t)RND() % 100;
			if (r < 60 && j > 0) /* a recent command of the partner */
				s->dep_id =
				    (uint32_t)((j - 1 - (int)(RND() % 4)) % (int)m + (int)m) % m +
				    1;
			else if (r < 70) /* far back, or ahead (then an older command or none) */
				s->dep_id = (uint32_t)(RND() % m) + 1;
			else if (r < 80) /* a hot source */
				s->dep_id = 5;
		}
	for (int i = 0; i < (mode == 0 ? RF : 0); i++) {
		int a = (int)(RND() % RN), b = (int)(RND() % RN);
		struct tp_flow f = {tr[i % 2 ? 0 : 2], tr[i % 2 ? 2 : 0], 0, 0};
		f.from_ns = (int64_t)a * 10 + 3; /* inside slice a (starts at most 2 later) */
		f.to_ns = (int64_t)b * 10 + 3;
		assert_int_equal(tp_profile_add_flow(p, &f), TP_OK);
	}
#undef RND
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

/* The edges the reference expects, by brute force, into e; returns how many. */
static size_t reference_edges(const struct tp_profile *p, const int tr[RT], const struct rref *r,
                              struct redge *e)
{
	size_t ne = 0;
	for (int t = 0; t < RT; t++) {
		const struct tp_track *w = &p->tracks[tr[t]], *q = &p->tracks[tr[t ^ 1]];
		for (size_t k = 0; k < w->count; k++) {
			const struct tp_slice *s = &w->slices[k];
			if (!s->dep_id)
				continue;
			long best = -1;
			for (size_t j = 0; j < q->count; j++)
				if (q->slices[j].cmd_id == s->dep_id &&
				    q->slices[j].start_ns <= s->start_ns)
					best = (long)j;
			if (best < 0 || q->slices[best].start_ns == s->start_ns)
				continue;
			e[ne++] = (struct redge){r->ids[t ^ 1][best],      r->ids[t][k], 0,
			                         q->slices[best].start_ns, s->start_ns,  0};
		}
	}
	for (size_t i = 0; i < p->num_flows; i++) {
		const struct tp_flow *f = &p->flows[i];
		int ft = f->from_track == tr[0] ? 0 : 2, tt = f->to_track == tr[0] ? 0 : 2;
		size_t a = (size_t)(f->from_ns / 10), b = (size_t)(f->to_ns / 10);
		const struct tp_slice *x = &p->tracks[tr[ft]].slices[a],
		                      *y = &p->tracks[tr[tt]].slices[b];
		assert_true(x->start_ns <= f->from_ns &&
		            tp_slice_end(&p->tracks[tr[ft]], x) >= f->from_ns);
		if (x->start_ns < y->start_ns)
			e[ne++] = (struct redge){r->ids[ft][a], r->ids[tt][b], 0,
			                         x->start_ns,   y->start_ns,   0};
	}
	qsort(e, ne, sizeof *e, redge_dst_cmp);
	return ne;
}

/* Marks the edges the plan does not draw (a waiter's second flow) and gives the others their
 * flow ids: in source order, the smallest id whose last holder's waiter started before the
 * source. Returns how many were dropped (*dup) and how many sources have more than 8 flows
 * (*hot: all of them are kept). */
static void reference_ids(struct redge *e, size_t ne, size_t *dup, size_t *hot)
{
	*dup = *hot = 0;
	for (size_t i = 1; i < ne; i++)
		if (e[i].dst == e[i - 1].dst)
			e[i].dropped = 1, (*dup)++;
	size_t *seen = calloc(RT * RN + 1, sizeof *seen); /* edges so far by source id */
	assert_non_null(seen);
	for (size_t i = 0; i < ne; i++)
		if (!e[i].dropped && ++seen[e[i].src] == 9)
			(*hot)++;
	free(seen);
	struct redge **o = calloc(ne, sizeof *o);
	assert_non_null(o);
	size_t no = 0;
	for (size_t i = 0; i < ne; i++)
		if (!e[i].dropped)
			o[no++] = &e[i];
	qsort(o, no, sizeof *o, redge_src_cmp);
	/* Flows come in source order, so an id is held only by the last flow given it. */
	int64_t *until = calloc(no + 2, sizeof *until); /* by id: the last holder's waiter start */
	assert_non_null(until);
	for (size_t i = 0; i < no; i++) {
		uint64_t id = 1;
		while (until[id] && until[id] >= o[i]->src_ns)
			id++;
		o[i]->id = id;
		until[id] = o[i]->dst_ns;
	}
	free(until);
	free(o);
}

/* The sink saw exactly the drawn edges: flow callbacks in waiting order with the reference
 * ids, and each slice's flow_in and flows_out. */
static void reference_check(const struct rref *r, const struct redge *e, size_t ne)
{
	size_t k = 0;
	for (size_t i = 0; i < ne; i++) {
		if (e[i].dropped)
			continue;
		assert_true(k < r->nflows);
		assert_int_equal(r->flows[k][0], e[i].id);
		assert_int_equal(r->flows[k][1], e[i].src);
		assert_int_equal(r->flows[k][2], e[i].dst);
		assert_int_equal(r->by_id[e[i].dst].flow_in, e[i].id);
		k++;
	}
	assert_int_equal(k, r->nflows);
	size_t *seen = calloc(RT * RN + 1, sizeof *seen);
	assert_non_null(seen);
	for (size_t i = 0; i < ne; i++) {
		if (e[i].dropped)
			continue;
		size_t n = seen[e[i].src]++;
		assert_true(n < r->by_id[e[i].src].nout);
		assert_int_equal(r->by_id[e[i].src].out[n], e[i].id);
	}
	size_t ins = 0;
	for (uint64_t id = 1; id <= RT * RN; id++) {
		ins += r->by_id[id].flow_in != 0;
		assert_int_equal(seen[id], r->by_id[id].nout);
	}
	assert_int_equal(ins, k);
	free(seen);
}

static void flows_reference(int mode)
{
	int tr[RT];
	struct tp_profile *p = reference_profile(mode, tr);
	struct rref r = {p,
	                 {{0}},
	                 calloc(RT * RN + 1, sizeof(struct rslice)),
	                 calloc(RR_FLOWS, sizeof *r.flows),
	                 0};
	assert_non_null(r.by_id);
	assert_non_null(r.flows);
	drive_flows(p, &r, rr_slice, rr_flow);

	struct redge *e = calloc(RT * RN + RF, sizeof *e);
	assert_non_null(e);
	size_t ne = reference_edges(p, tr, &r, e), dup, hot;
	reference_ids(e, ne, &dup, &hot);
	assert_true(hot > 0 && (mode != 0 || dup > 0)); /* the cases are exercised */
	reference_check(&r, e, ne);
	free(e);
	for (size_t i = 0; i <= RT * RN; i++)
		free(r.by_id[i].out);
	free(r.by_id);
	free(r.flows);
	tp_profile_free(p);
}

static void test_flows_reference(void **state)
{
	(void)state;
	flows_reference(0); /* repeated cmd ids, model flows: ends stored */
	flows_reference(1); /* ascending cmd ids, no model flows: ends found again */
	flows_reference(2); /* repeated cmd ids, no model flows: ends stored */
}

/* Layer tracks synthesised from the layer table come out in (begin, later end first) order
 * per core, whether the table lists each core's layers in that order (mode 0) or nearly
 * (mode 2: pairs swapped; the order comes from one tp_walk of the table) or not at all (mode
 * 1: reversed, past tp_walk's window; the indexes are sorted), with two cores' layers interleaved,
 * layers that overlap (extra lanes) and an untimed layer left out. */
#define NJ 40 /* layers per core */

static void layer_table(struct rec *r, int mode)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	int dev = tp_profile_add_device(p, "d", 0, 2);
	enum { NL = 2 * NJ };
	struct tp_layer ls[NL];
	for (int j = 0; j < NJ; j++)
		for (int c = 0; c < 2; c++) {
			struct tp_layer *l = &ls[2 * j + c];
			memset(l, 0, sizeof *l);
			l->id = c * 100 + j;
			l->type = tp_profile_str(p, "Conv2D");
			l->name = tp_profile_str(p, "x");
			l->device = dev;
			l->core = c;
			l->subnet = l->group = -1;
			l->begin_ns = j * 100 + (j % 3) * 10 + c;
			l->end_ns = j == 4 ? l->begin_ns - 1 : l->begin_ns + 50 + (j % 2) * 200;
		}
	for (int i = 0; i < NL; i++)
		assert_int_equal(tp_profile_add_layer(p, &ls[mode == 1   ? NL - 1 - i
		                                             : mode == 2 ? i ^ 2
		                                                         : i]),
		                 i);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	memset(r, 0, sizeof *r);
	assert_int_equal(drive(p, r, 0), TP_OK);
	tp_profile_free(p);
}

static void test_layer_tracks(void **state)
{
	(void)state;
	static struct rec a, b;
	layer_table(&a, 0);
	for (int mode = 1; mode < 3; mode++) {
		layer_table(&b, mode);
		assert_int_equal(a.ns, 2 * (NJ - 1));
		assert_int_equal(b.ns, a.ns);
		for (size_t i = 0; i < a.ns; i++) {
			const struct rec_slice *x = &a.s[i], *y = &b.s[i];
			int core = strncmp(a.fnames[x->track], "Core 1", 6) == 0;
			assert_string_equal(a.fnames[x->track], b.fnames[y->track]);
			assert_int_equal(x->ts, y->ts);
			assert_int_equal(x->dur, y->dur);
			assert_string_equal(x->args, y->args);
			/* Per core: slice k is the k-th layer by begin (the untimed j = 4 left
			 * out). */
			size_t k = i % (NJ - 1);
			int j = (int)k < 4 ? (int)k : (int)k + 1;
			assert_int_equal(x->ts, j * 100 + (j % 3) * 10 + core);
			assert_int_equal(x->dur, 50 + (j % 2) * 200);
			char want[64];
			snprintf(want, sizeof want, "Layer Id=%d;", core * 100 + j);
			assert_non_null(strstr(x->args, want));
		}
	}
}

/* Slices in parts (tp_sink_drive_parts) are those of the one walk, in the same order, for any
 * part size and thread count: each slice is written out as text (track, ids, nesting, flows,
 * name, times, arguments), by the walk straight into one buffer, by the parts into their
 * slot's buffer, appended to the whole in emit order. */
struct ptext {
	struct tp_buf all;
	struct tp_buf slot[64];
	size_t nslots, emits;
};

static void slice_text(struct tp_buf *b, const struct tp_sink_slice *s)
{
	tp_buf_printf(b, "%zu %llu %llu %u %llu [", s->track->index, (unsigned long long)s->id,
	              (unsigned long long)s->parent_id, s->depth, (unsigned long long)s->flow_in);
	for (size_t i = 0; i < s->num_flows_out; i++)
		tp_buf_printf(b, " %llu", (unsigned long long)s->flows_out[i]);
	tp_buf_printf(b, "] %s|%s %lld %lld", s->name, s->category ? s->category : "-",
	              (long long)s->ts_ns, (long long)s->dur_ns);
	for (size_t i = 0; i < s->num_args; i++) {
		const struct tp_sink_arg *a = &s->args[i];
		if (a->type == TP_ARG_INT)
			tp_buf_printf(b, " %s=i%lld", a->key, (long long)a->i);
		else if (a->type == TP_ARG_UINT)
			tp_buf_printf(b, " %s=u%llu", a->key, (unsigned long long)a->u);
		else if (a->type == TP_ARG_REAL)
			tp_buf_printf(b, " %s=r%.17g", a->key, a->d);
		else
			tp_buf_printf(b, " %s=s%s", a->key, a->s ? a->s : "(null)");
	}
	tp_buf_putc(b, '\n');
}

static int pt_slice_one(void *ctx, const struct tp_sink_slice *s)
{
	slice_text(&((struct ptext *)ctx)->all, s);
	return TP_OK;
}

static int pt_slots(void *ctx, size_t n)
{
	struct ptext *t = ctx;
	assert_true(n >= 1 && n <= 64);
	t->nslots = n;
	return TP_OK;
}

static int pt_part_slice(void *ctx, size_t slot, const struct tp_sink_slice *s)
{
	struct ptext *t = ctx;
	assert_true(slot < t->nslots);
	slice_text(&t->slot[slot], s);
	return TP_OK;
}

static int pt_emit(void *ctx, size_t slot)
{
	struct ptext *t = ctx;
	tp_buf_put(&t->all, t->slot[slot].data, t->slot[slot].len);
	t->slot[slot].len = 0;
	t->emits++;
	return TP_OK;
}

/* The slices of p as text: one walk (jobs 0), or parts of psize slices on jobs threads (lean:
 * tp_sink_parts.lean). */
static void parts_text(const struct tp_profile *p, int full, int jobs, size_t psize, int lean,
                       struct ptext *t)
{
	memset(t, 0, sizeof *t);
	tp_buf_init(&t->all);
	for (size_t i = 0; i < 64; i++)
		tp_buf_init(&t->slot[i]);
	struct tp_sink sink = {t, NULL, NULL, pt_slice_one, NULL, NULL, NULL, full};
	struct tp_sink_parts pp = {jobs, psize, pt_slots, pt_part_slice, pt_emit, NULL, NULL, lean};
	struct tp_diag d = {0};
	int st =
	    jobs ? tp_sink_drive_parts(p, NULL, &sink, &pp, &d) : tp_sink_drive(p, NULL, &sink, &d);
	assert_int_equal(st, TP_OK);
	assert_false(t->all.oom);
	for (size_t i = 0; i < 64; i++)
		tp_buf_free(&t->slot[i]);
}

/* ... for jobs 1, 2, 3, 8 and parts of 1, 2, 3, 5, 7, 64 and the default size (lng: parts of
 * 7, 64 and the default size on 1 and 3 threads, default arguments only), each also lean: with
 * few parts open, the next one in order must still be let in (else the drive stalls) and the
 * slices must not change. */
static void parts_same(const struct tp_profile *p, int lng)
{
	static const int jobs[] = {1, 3, 2, 8};
	static const size_t psize[] = {7, 64, 0, 1, 2, 3, 5};
	size_t nj = lng ? 2 : 4, np = lng ? 3 : 7;
	for (int full = 0; full < 2 - lng; full++) {
		struct ptext ref, got;
		parts_text(p, full, 0, 0, 0, &ref);
		assert_true(ref.all.len > 0);
		for (size_t j = 0; j < nj; j++)
			for (size_t k = 0; k < np * 2; k++) {
				int lean = k >= np;
				parts_text(p, full, jobs[j], psize[k % np], lean, &got);
				assert_true(got.emits > 0);
				if (got.all.len != ref.all.len ||
				    memcmp(got.all.data, ref.all.data, ref.all.len) != 0)
					fail_msg("parts of %zu on %d threads (full %d, lean %d): "
					         "other slices",
					         psize[k % np], jobs[j], full, lean);
				tp_buf_free(&got.all);
			}
		tp_buf_free(&ref.all);
	}
}

static void test_parts(void **state)
{
	parts_same(*state, 0);                 /* lanes, nesting, layers, a flow */
	for (int mode = 0; mode < 3; mode++) { /* long tracks with many flows */
		int tr[RT];
		struct tp_profile *p = reference_profile(mode, tr);
		parts_same(p, 1);
		tp_profile_free(p);
	}
}

#define TP_TEST_GROUP_SETUP fx_setup
#define TP_TEST_GROUP_TEARDOWN fx_teardown
#include "tp_test_main.h"
