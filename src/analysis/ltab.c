/*
 * ltab.c — the layer table, its per-Function summary and the what-if table (ltab.h). Layer
 * figures come from the commands joined to each layer (slice.layer) on the TIU and GDMA
 * tracks, the layer's tensors and the TIU cost model (track cost); the Overall figures from
 * the analysis. Owns the rows and what-if arrays of a struct tp_ltab.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ltab.h"

static const char *const func_names[TP_LTF_COUNT] = {
    [TP_LTF_ACTIVE] = "Active",     [TP_LTF_ATTENTION] = "Attention", [TP_LTF_CONV] = "Conv",
    [TP_LTF_CAST] = "Cast",         [TP_LTF_ELTWISE] = "Eltwise",     [TP_LTF_FC] = "FC",
    [TP_LTF_MULSHIFT] = "MulShift", [TP_LTF_LAYERNORM] = "LayerNorm", [TP_LTF_LUT] = "Lut",
    [TP_LTF_MATMUL] = "MatMul",     [TP_LTF_POOL] = "Pool",           [TP_LTF_REDUCE] = "Reduce",
    [TP_LTF_SOFTMAX] = "Softmax",   [TP_LTF_OTHERS] = "Others",
};

const char *tp_ltab_func_name(enum tp_ltab_func f)
{
	return (unsigned)f < TP_LTF_COUNT ? func_names[f] : "Others";
}

void tp_ltab_dtypes(const struct tp_ltab_sums *s, const char *sep, char *out, size_t n)
{
	size_t k = 0;
	out[0] = 0;
	for (unsigned i = 0; i < s->num_dt && k < n; i++)
		k += (size_t)snprintf(out + k, n - k, "%s%s", i ? sep : "",
		                      tp_dtype_name((enum tp_dtype)s->dt[i]));
}

const char *tp_ltab_bound_name(enum tp_ltab_bound b)
{
	return b == TP_LTB_TIU ? "TIU" : b == TP_LTB_GDMA ? "GDMA" : "-";
}

double tp_ltab_theo_rate(const struct tp_ltab_eng *e)
{
	return e->us > 0 ? e->theo_us / e->us : 0;
}

/* Layer type (the MLIR op name global.profile records) -> Function. The blazeface dump
 * confirms Conv2D, Add, Pool2D, Cast and Others (Load, Store, Pad, Permute, Concat); the rest
 * follow the op names of the Function rows. */
static const struct {
	const char *type;
	enum tp_ltab_func func;
} type_funcs[] = {
    {"Conv1D", TP_LTF_CONV},          {"Conv2D", TP_LTF_CONV},
    {"Conv3D", TP_LTF_CONV},          {"Deconv", TP_LTF_CONV},
    {"Deconv3D", TP_LTF_CONV},        {"Cast", TP_LTF_CAST},
    {"Add", TP_LTF_ELTWISE},          {"Sub", TP_LTF_ELTWISE},
    {"Mul", TP_LTF_ELTWISE},          {"Max", TP_LTF_ELTWISE},
    {"Min", TP_LTF_ELTWISE},          {"AddConst", TP_LTF_ELTWISE},
    {"SubConst", TP_LTF_ELTWISE},     {"MulConst", TP_LTF_ELTWISE},
    {"MaxConst", TP_LTF_ELTWISE},     {"MinConst", TP_LTF_ELTWISE},
    {"Pool1D", TP_LTF_POOL},          {"Pool2D", TP_LTF_POOL},
    {"Pool3D", TP_LTF_POOL},          {"MaxPoolWithMask", TP_LTF_POOL},
    {"AdaptiveAvgPool", TP_LTF_POOL}, {"MatMul", TP_LTF_MATMUL},
    {"FullyConnected", TP_LTF_FC},    {"Active", TP_LTF_ACTIVE},
    {"Attention", TP_LTF_ATTENTION},  {"MulShift", TP_LTF_MULSHIFT},
    {"LayerNorm", TP_LTF_LAYERNORM},  {"Lut", TP_LTF_LUT},
    {"Reduce", TP_LTF_REDUCE},        {"Softmax", TP_LTF_SOFTMAX},
};

static enum tp_ltab_func func_of(const char *type)
{
	for (size_t i = 0; i < sizeof type_funcs / sizeof type_funcs[0]; i++)
		if (strcmp(type, type_funcs[i].type) == 0)
			return type_funcs[i].func;
	return TP_LTF_OTHERS;
}

/* Peak TOPS of a layer at 1 GHz (sophgo-bmprofile.md §10.3): conv/matmul 32/16/2, pool/fc
 * 8/4/2, others 4/2/1 for 8-bit / 16-bit / 32-bit data; a layer with any 32-bit type counts
 * as 32-bit, else any 16-bit one as 16-bit. Only the legacy chips have the table. */
static double peak_tops(const struct tp_profile *p, enum tp_ltab_func f, const uint8_t *dt,
                        unsigned ndt)
{
	if (p->arch != TP_ARCH_BM1684X && p->arch != TP_ARCH_BM1684)
		return 0;
	unsigned width = 1;
	for (unsigned i = 0; i < ndt; i++) {
		unsigned w = tp_dtype_size((enum tp_dtype)dt[i]);
		if (w > width)
			width = w;
	}
	int k = width >= 4 ? 2 : width == 2 ? 1 : 0;
	static const double conv[3] = {32, 16, 2}, pool[3] = {8, 4, 2}, other[3] = {4, 2, 1};
	const double *row = f == TP_LTF_CONV || f == TP_LTF_MATMUL ? conv
	                    : f == TP_LTF_POOL || f == TP_LTF_FC   ? pool
	                                                           : other;
	double mhz = p->tiu_freq_mhz > 0 ? p->tiu_freq_mhz : 1000;
	return row[k] * (mhz / 1000);
}

static void add_dt(struct tp_ltab_sums *s, uint8_t dt)
{
	if (!dt)
		return;
	for (unsigned i = 0; i < s->num_dt; i++)
		if (s->dt[i] == dt)
			return;
	if (s->num_dt < TP_LTAB_MAX_DT)
		s->dt[s->num_dt++] = dt;
}

/* Theoretical DMA time in µs: S2L at 58, L2S at 44, S2S at 28 GiB/s per GHz of the GDMA
 * clock (§10.3), in the vendor's order of operations. */
static double gdma_theo_us(const struct tp_profile *p, uint64_t s2l, uint64_t l2s, uint64_t s2s)
{
	const double gib = 1073741824.0;
	double ghz = (p->gdma_freq_mhz > 0 ? p->gdma_freq_mhz : 1000) / 1000;
	return ((double)s2l / (58 * gib * ghz) + (double)l2s / (44 * gib * ghz) +
	        (double)s2s / (28 * gib * ghz)) *
	       1e6;
}

static double period_us(double mhz)
{
	return 1.0 / (mhz > 0 ? mhz : 1000);
}

/* An engine of a layer row: `cycles` at `period` µs each, theoretical time theo_us (its share is
 * set once every row is known). */
static void eng_set(struct tp_ltab_eng *e, uint64_t cycles, double period, double theo_us)
{
	e->cycles = cycles;
	e->us = (double)cycles * period;
	e->theo_us = theo_us;
}

/* Per-layer command totals, indexed by profile layer. */
struct acc {
	uint64_t tiu_cycles, gdma_cycles, load_cycles, store_cycles;
	uint64_t s2l, l2s, s2s, alg, uarch;
	double begin_us, end_us;
	uint32_t cmds;
	uint32_t geo[8]; /* tp_ltab_row.geo */
};

/* The descriptor fields of a conv or pool command that give its layer's kernel, strides and
 * padding (in tp_ltab_row.geo order), and the Function Types of those commands. */
static const char *const geo_keys[8] = {
    TP_KEY_TIU_KH,     TP_KEY_TIU_KW,       TP_KEY_TIU_STRIDE_H, TP_KEY_TIU_STRIDE_W,
    TP_KEY_TIU_PAD_UP, TP_KEY_TIU_PAD_DOWN, TP_KEY_TIU_PAD_LEFT, TP_KEY_TIU_PAD_RIGHT,
};
struct arg_ids {
	uint32_t key[8];
	uint32_t ar[2];      /* TP_KEY_GDMA_D0_AR, _D1_AR */
	uint32_t conv, pool; /* strtab ids of "sCONV", "sPorD" (0 absent) */
};

static void arg_ids_of(const struct tp_profile *p, struct arg_ids *g)
{
	for (int k = 0; k < 8; k++)
		g->key[k] = tp_profile_find_str(p, geo_keys[k]);
	g->ar[0] = tp_profile_find_str(p, TP_KEY_GDMA_D0_AR);
	g->ar[1] = tp_profile_find_str(p, TP_KEY_GDMA_D1_AR);
	g->conv = tp_profile_find_str(p, "sCONV");
	g->pool = tp_profile_find_str(p, "sPorD");
}

/* Widens a's kernel, strides and padding to those of TIU command s (a conv or pool). The
 * vendor's layer has the largest of each: a 5x5 stride-2 conv that the compiler splits into a
 * 5x1 stride-(2,1) pool and a 1x5 stride-(1,2) conv reads 5x5, stride 2, 2. */
static void acc_geo(const struct tp_profile *p, const struct arg_ids *g, const struct tp_track *t,
                    const struct tp_slice *s, struct acc *a)
{
	uint32_t ty = tp_slice_type(t, s);
	if (!s->args || !ty || (ty != g->conv && ty != g->pool))
		return;
	for (int k = 0; k < 8; k++) {
		const struct tp_arg *x = tp_args_find(p, s->args, g->key[k]);
		int64_t v = x ? tp_arg_as_i64(x) : 0;
		if (v > (int64_t)a->geo[k] && v <= UINT32_MAX)
			a->geo[k] = (uint32_t)v;
	}
}

static void touch_span(struct acc *a, double b, double e)
{
	if (!a->cmds || b < a->begin_us)
		a->begin_us = b;
	if (!a->cmds || e > a->end_us)
		a->end_us = e;
	a->cmds++;
}

/* Bytes a load read from DDR: the AXI read counters (d0_ar + d1_ar) when the command carries
 * them, which round small loads up to the bus burst as the vendor's S2L does; else the bytes
 * it moved. */
static uint64_t load_bytes(const struct tp_profile *p, const struct arg_ids *g,
                           const struct tp_slice *s, uint64_t moved)
{
	const struct tp_arg *a0 = s->args ? tp_args_find(p, s->args, g->ar[0]) : NULL;
	const struct tp_arg *a1 = s->args ? tp_args_find(p, s->args, g->ar[1]) : NULL;
	if (!a0 || !a1)
		return moved;
	return (uint64_t)tp_arg_as_i64(a0) + (uint64_t)tp_arg_as_i64(a1);
}

static void acc_gdma(const struct tp_profile *p, const struct arg_ids *g, struct acc *a,
                     const struct tp_track *t, const struct tp_slice *s)
{
	uint64_t b = tp_slice_bytes(t, s);
	a->gdma_cycles += s->cycles;
	switch (tp_slice_dir(t, s)) {
	case TP_DIR_DDR_TO_LMEM:
		a->s2l += load_bytes(p, g, s, b);
		a->load_cycles += s->cycles;
		break;
	case TP_DIR_LMEM_TO_DDR:
		a->l2s += b;
		a->store_cycles += s->cycles;
		break;
	case TP_DIR_DDR_TO_DDR:
		a->s2s += b;
		break;
	default:
		break;
	}
}

/* The commands of layers [lo, hi) into acc (indexed by profile layer). */
/* Slices of an engine track are visited in chunks of LTAB_CHUNK; a chunk's smallest and
 * largest layer let a part of the layers skip the chunks that hold none of its layers (a
 * track runs its layers in about their order, so each part reads few chunks). */
#define LTAB_CHUNK 4096

struct chunk_span {
	int32_t lo, hi; /* lo > hi: no slice of the chunk has a layer */
};

/* The commands of layers [lo, hi) into acc (indexed by profile layer). span: per engine track
 * in track order, its chunks' layer spans. */
static void accumulate(const struct tp_profile *p, const struct arg_ids *ga,
                       const struct chunk_span *span, struct acc *acc, size_t lo, size_t hi)
{
	struct arg_ids g = *ga;
	for (size_t k = 0; k < p->num_tracks; k++) {
		const struct tp_track *t = &p->tracks[k];
		if (t->kind != TP_TRACK_TIU && t->kind != TP_TRACK_GDMA)
			continue;
		double per =
		    period_us(t->kind == TP_TRACK_TIU ? p->tiu_freq_mhz : p->gdma_freq_mhz);
		for (size_t c0 = 0; c0 < t->count; c0 += LTAB_CHUNK, span++) {
			if (span->lo > span->hi || (size_t)span->hi < lo || (size_t)span->lo >= hi)
				continue;
			size_t c1 = t->count - c0 < LTAB_CHUNK ? t->count : c0 + LTAB_CHUNK;
			for (size_t i = c0; i < c1; i++) {
				const struct tp_slice *s = &t->slices[i];
				if (s->layer < 0 || (size_t)s->layer < lo || (size_t)s->layer >= hi)
					continue;
				struct acc *a = &acc[s->layer];
				uint64_t cy = tp_slice_start_cycle(t, s);
				touch_span(a, (double)cy * per, (double)(cy + s->cycles) * per);
				if (t->kind == TP_TRACK_GDMA) {
					acc_gdma(p, &g, a, t, s);
					continue;
				}
				a->tiu_cycles += s->cycles;
				acc_geo(p, &g, t, s, a);
				struct tp_cost c;
				if (t->cost && tp_track_get_cost(t, i, &c)) {
					a->alg += c.alg_ops;
					a->uarch += c.uarch_ops;
				}
			}
		}
	}
}

/* The layer spans of chunk k of all engine tracks' chunks (spans in track order). */
struct span_par {
	const struct tp_profile *p;
	struct chunk_span *span;
	const size_t *first; /* per track: its first chunk's index in span */
};

static void span_par_one(void *v, size_t k)
{
	struct span_par *a = v;
	const struct tp_track *t = &a->p->tracks[k];
	if (t->kind != TP_TRACK_TIU && t->kind != TP_TRACK_GDMA)
		return;
	struct chunk_span *sp = a->span + a->first[k];
	for (size_t c0 = 0; c0 < t->count; c0 += LTAB_CHUNK, sp++) {
		size_t c1 = t->count - c0 < LTAB_CHUNK ? t->count : c0 + LTAB_CHUNK;
		/* In a local: the next track's first span may share the line, on another thread. */
		struct chunk_span x = {INT32_MAX, -1};
		for (size_t i = c0; i < c1; i++) {
			int32_t l = t->slices[i].layer;
			if (l < 0)
				continue;
			if (l < x.lo)
				x.lo = l;
			if (l > x.hi)
				x.hi = l;
		}
		*sp = x;
	}
}

/* The chunk spans of p's engine tracks (caller frees), on up to `jobs` threads; NULL when out
 * of memory. */
static struct chunk_span *chunk_spans(const struct tp_profile *p, unsigned jobs)
{
	size_t *first = tp_malloc((p->num_tracks ? p->num_tracks : 1) * sizeof *first), n = 0;
	if (!first)
		return NULL;
	for (size_t k = 0; k < p->num_tracks; k++) {
		const struct tp_track *t = &p->tracks[k];
		first[k] = n;
		if (t->kind == TP_TRACK_TIU || t->kind == TP_TRACK_GDMA)
			n += (t->count + LTAB_CHUNK - 1) / LTAB_CHUNK;
	}
	struct span_par a = {
	    .p = p, .span = tp_malloc((n ? n : 1) * sizeof *a.span), .first = first};
	if (a.span)
		tp_par_run(jobs, p->num_tracks, span_par_one, &a);
	tp_free(first);
	return a.span;
}

/* Tensor ids in (id, index) order, for the first definition of an id. */
struct tid {
	int64_t id;
	uint32_t index;
};
static int cmp_tid(const void *x, const void *y)
{
	const struct tid *a = x, *b = y;
	int64_t ka[] = {a->id, a->index}, kb[] = {b->id, b->index};
	return tp_cmp_keys(ka, kb, 2);
}

static uint32_t first_def(const struct tid *ids, size_t n, int64_t id, uint32_t self)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[lo].id == id ? ids[lo].index : self;
}

static uint64_t tensor_bytes(const struct tp_tensor *t)
{
	uint64_t n = t->ndim ? 1 : 0;
	for (unsigned d = 0; d < t->ndim && d < TP_MAX_DIMS; d++)
		n *= t->shape[d] > 0 ? (uint64_t)t->shape[d] : 0;
	return n * tp_dtype_size((enum tp_dtype)t->dtype);
}

static void nchw(const struct tp_tensor *t, int64_t *out)
{
	/* Dims 0..3 as they come, a missing one 1 (a 3-d [1x896x16] reads 1, 896, 16, 1), as
	 * the vendor's layer table has them. */
	for (int d = 0; d < 4; d++)
		out[d] = d < t->ndim ? t->shape[d] : 1;
}

/* The simulator's cycles of layer id (tp_profile.layer_sim), 0 when it has none. */
static uint64_t layer_sim_cycles(const struct tp_profile *p, int32_t id)
{
	size_t i = tp_upper_bound_i64(p->layer_sim, p->num_layer_sim, sizeof *p->layer_sim,
	                              offsetof(struct tp_layer_sim, layer_id), id);
	return i && p->layer_sim[i - 1].layer_id == id ? p->layer_sim[i - 1].cycles : 0;
}

/* The tensors of layer l (resolved to first definitions), its shapes, bytes and types. */
static int layer_tensors(const struct tp_profile *p, const struct tid *ids,
                         const struct tp_layer *l, struct tp_ltab *t, struct tp_ltab_row *r)
{
	r->tens_first = t->num_tens;
	int seen_in = 0, seen_out = 0;
	for (int pass = 1; pass >= 0; pass--)
		for (uint32_t k = 0; k < l->num_tensors; k++) {
			uint32_t ti = l->first_tensor + k;
			if (ti >= p->num_tensors || p->tensors[ti].is_in != pass)
				continue;
			const struct tp_tensor *own = &p->tensors[ti];
			uint32_t fi = first_def(ids, p->num_tensors, own->id, ti);
			const struct tp_tensor *def = &p->tensors[fi];
			struct tp_ltab_tensor *e =
			    tp_push(&t->tens, sizeof *t->tens, &t->num_tens, &t->cap_tens);
			if (!e)
				return TP_ENOMEM;
			*e = (struct tp_ltab_tensor){.tensor = fi, .is_in = own->is_in};
			if (pass && !seen_in++)
				nchw(def, r->in);
			if (!pass && !seen_out++)
				nchw(def, r->out);
			if (own->is_const) {
				if (pass)
					r->s.weight_bytes += tensor_bytes(def);
				continue;
			}
			if (pass)
				r->in_bytes += tensor_bytes(def);
			else
				r->out_bytes += tensor_bytes(def);
			add_dt(&r->s, def->dtype);
		}
	/* A layer of constants only (a weight load) takes its constants' types. */
	for (size_t k = r->tens_first; !r->s.num_dt && k < t->num_tens; k++)
		add_dt(&r->s, p->tensors[t->tens[k].tensor].dtype);
	r->tens_count = t->num_tens - r->tens_first;
	return TP_OK;
}

static void row_figures(const struct tp_profile *p, const struct acc *a, struct tp_ltab_row *r)
{
	double tp = period_us(p->tiu_freq_mhz), gp = period_us(p->gdma_freq_mhz);
	const double gib = 1073741824.0;
	r->s.s2l_bytes = a->s2l;
	r->s.l2s_bytes = a->l2s;
	r->s.s2s_bytes = a->s2s;
	eng_set(&r->s.gdma, a->gdma_cycles, gp, gdma_theo_us(p, a->s2l, a->l2s, a->s2s));
	memcpy(r->geo, a->geo, sizeof r->geo);
	r->load_cycles = a->load_cycles;
	r->store_cycles = a->store_cycles;
	r->load_gibps =
	    a->load_cycles ? (double)a->s2l / gib / ((double)a->load_cycles * gp * 1e-6) : 0;
	r->store_gibps =
	    a->store_cycles ? (double)a->l2s / gib / ((double)a->store_cycles * gp * 1e-6) : 0;
	r->s.alg_ops = a->alg;
	r->s.uarch_ops = a->uarch;
	r->s.peak_tops = peak_tops(p, r->func, r->s.dt, r->s.num_dt);
	eng_set(&r->s.tiu, a->tiu_cycles, tp,
	        r->s.peak_tops > 0 ? (double)a->alg / (r->s.peak_tops * 1024 * 1000) : 0);
	r->bound = r->s.tiu.us > r->s.gdma.us   ? TP_LTB_TIU
	           : r->s.gdma.us > r->s.tiu.us ? TP_LTB_GDMA
	                                        : TP_LTB_NONE;
	if (!r->is_global)
		return;
	r->total_us = a->end_us - a->begin_us;
	r->actual_tops = r->total_us > 0 ? (double)a->alg / r->total_us / 1e6 : 0;
	r->parallelism = r->total_us > 0 ? (r->s.tiu.us + r->s.gdma.us) / r->total_us : 0;
	double mn = r->s.tiu.us < r->s.gdma.us ? r->s.tiu.us : r->s.gdma.us;
	r->concurrency = mn > 0 ? (r->s.tiu.us + r->s.gdma.us - r->total_us) / mn : 1;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct tp_ltab_row *a = x, *b = y;
	if (a->s.tiu.cycles != b->s.tiu.cycles)
		return a->s.tiu.cycles > b->s.tiu.cycles ? -1 : 1;
	return a->layer < b->layer ? -1 : a->layer > b->layer;
}

/* The layers are built in parts of LTAB_PART layers (fixed by the data, not the thread
 * count), the parts through tp_par_run: each part accumulates its layers' commands and counts
 * its rows and tensors, then writes them after the previous parts' (rows and tensors in
 * layer order, as one pass gives them). */
#define LTAB_PART 4096

struct ltab_par {
	const struct tp_profile *p;
	struct arg_ids g;
	struct acc *acc;
	struct tp_ltab *t;
	const struct tid *ids;
	const struct chunk_span *span;
	size_t nparts;
	size_t *rows0, *tens0; /* per part: its rows' first index, its tensors' (then the counts) */
	int oom;
};

/* The tensors of layer l that layer_tensors lists. */
static size_t layer_tensor_count(const struct tp_profile *p, const struct tp_layer *l)
{
	size_t n = 0;
	for (uint32_t k = 0; k < l->num_tensors; k++)
		n += l->first_tensor + k < p->num_tensors;
	return n;
}

/* Part k, first pass: its layers' commands, and how many rows and tensors it gives. */
static void ltab_par_count(void *v, size_t k)
{
	struct ltab_par *a = v;
	const struct tp_profile *p = a->p;
	size_t lo = k * LTAB_PART,
	       hi = lo + LTAB_PART < p->num_layers ? lo + LTAB_PART : p->num_layers;
	accumulate(p, &a->g, a->span, a->acc, lo, hi);
	size_t rows = 0, tens = 0;
	for (size_t i = lo; i < hi; i++) {
		if (!a->acc[i].cmds)
			continue;
		struct tp_layer l;
		tp_profile_layer(p, i, &l);
		rows++;
		tens += layer_tensor_count(p, &l);
	}
	a->rows0[k] = rows;
	a->tens0[k] = tens;
}

/* Part k, second pass: its rows at rows0[k], their tensors at tens0[k]. */
static void ltab_par_rows(void *v, size_t k)
{
	struct ltab_par *a = v;
	const struct tp_profile *p = a->p;
	struct tp_ltab *t = a->t;
	size_t lo = k * LTAB_PART,
	       hi = lo + LTAB_PART < p->num_layers ? lo + LTAB_PART : p->num_layers;
	struct tp_ltab part = {.tens = t->tens ? t->tens + a->tens0[k] : NULL,
	                       .cap_tens = a->tens0[k + 1] - a->tens0[k]};
	size_t row = a->rows0[k];
	for (size_t i = lo; i < hi; i++) {
		if (!a->acc[i].cmds)
			continue;
		struct tp_layer l;
		tp_profile_layer(p, i, &l);
		struct tp_ltab_row *r = &t->rows[row++];
		memset(r, 0, sizeof *r);
		r->layer = (int32_t)i;
		r->id = l.id;
		r->type = l.type;
		r->is_global = !l.is_local;
		r->func = func_of(tp_str(p, l.type));
		r->sim_cycles = layer_sim_cycles(p, l.id);
		if (layer_tensors(p, a->ids, &l, &part, r) != TP_OK)
			a->oom = 1; /* cannot happen: the part's room was counted */
		r->tens_first += a->tens0[k];
		row_figures(p, &a->acc[i], r);
	}
}

/* The rows sorted by cmp_rows: each part of LTAB_PART rows sorted on its own (tp_par_run),
 * the parts merged into an order (a heap of the parts' heads, on this thread: no rows are
 * copied), then the rows copied into that order part by part (tp_par_run). cmp_rows is a
 * total order, so the result is that of one sort. */
struct sort_par {
	struct tp_ltab_row *rows, *dst;
	const uint32_t *order;
	size_t n;
};

static void sort_par_part(void *v, size_t k)
{
	struct sort_par *a = v;
	size_t lo = k * LTAB_PART, n = a->n - lo < LTAB_PART ? a->n - lo : LTAB_PART;
	qsort(a->rows + lo, n, sizeof *a->rows, cmp_rows);
}

static void sort_par_copy(void *v, size_t k)
{
	struct sort_par *a = v;
	size_t lo = k * LTAB_PART, hi = a->n - lo < LTAB_PART ? a->n : lo + LTAB_PART;
	for (size_t i = lo; i < hi; i++)
		a->dst[i] = a->rows[a->order[i]];
}

/* Restores the heap property of h[0..n) (cursors into rows, smallest row first) from i down. */
static void heap_down(const struct tp_ltab_row *rows, size_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < n && cmp_rows(&rows[h[l]], &rows[h[m]]) < 0)
			m = l;
		if (r < n && cmp_rows(&rows[h[r]], &rows[h[m]]) < 0)
			m = r;
		if (m == i)
			return;
		size_t x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static int sort_rows(struct tp_ltab *t, unsigned jobs)
{
	size_t n = t->num_rows, np = (n + LTAB_PART - 1) / LTAB_PART;
	struct sort_par a = {.rows = t->rows, .n = n};
	tp_par_run(jobs, np, sort_par_part, &a);
	if (np <= 1)
		return TP_OK;
	uint32_t *order = tp_malloc(n * sizeof *order);
	size_t *h = tp_malloc(np * sizeof *h);
	a.dst = tp_malloc(n * sizeof *a.dst);
	if (!order || !h || !a.dst) {
		tp_free(order);
		tp_free(h);
		tp_free(a.dst);
		return TP_ENOMEM;
	}
	/* h holds each unfinished part's next row; a part's last row is followed by the next
	 * part's first, so a cursor is done when it reaches its part's end. */
	size_t nh = np;
	for (size_t k = 0; k < np; k++)
		h[k] = k * LTAB_PART;
	for (size_t k = np; k-- > 0;)
		heap_down(t->rows, h, nh, k);
	for (size_t i = 0; i < n; i++) {
		size_t x = h[0];
		order[i] = (uint32_t)x;
		if ((x + 1) % LTAB_PART && x + 1 < n)
			h[0] = x + 1;
		else
			h[0] = h[--nh];
		heap_down(t->rows, h, nh, 0);
	}
	a.order = order;
	tp_par_run(jobs, np, sort_par_copy, &a);
	tp_free(t->rows);
	t->rows = a.dst;
	tp_free(order);
	tp_free(h);
	return TP_OK;
}

static int build_rows(const struct tp_profile *p, struct tp_ltab *t, unsigned jobs)
{
	struct tid *ids = tp_malloc((p->num_tensors ? p->num_tensors : 1) * sizeof *ids);
	if (!ids)
		return TP_ENOMEM;
	for (size_t i = 0; i < p->num_tensors; i++)
		ids[i] = (struct tid){p->tensors[i].id, (uint32_t)i};
	qsort(ids, p->num_tensors, sizeof *ids, cmp_tid);
	struct ltab_par a = {.p = p, .t = t, .ids = ids};
	a.acc = tp_calloc(p->num_layers, sizeof *a.acc);
	arg_ids_of(p, &a.g);
	a.nparts = (p->num_layers + LTAB_PART - 1) / LTAB_PART;
	a.rows0 = tp_calloc(a.nparts + 1, sizeof *a.rows0);
	a.tens0 = tp_calloc(a.nparts + 1, sizeof *a.tens0);
	struct chunk_span *span = chunk_spans(p, jobs);
	a.span = span;
	int rc = TP_ENOMEM;
	if (!a.acc || !a.rows0 || !a.tens0 || !span)
		goto out;
	tp_par_run(jobs, a.nparts, ltab_par_count, &a);
	size_t rows = 0, tens = 0;
	for (size_t k = 0; k <= a.nparts; k++) {
		size_t r = k < a.nparts ? a.rows0[k] : 0, n = k < a.nparts ? a.tens0[k] : 0;
		a.rows0[k] = rows;
		a.tens0[k] = tens;
		rows += r;
		tens += n;
	}
	if (tens && !(t->tens = tp_malloc(tens * sizeof *t->tens)))
		goto out;
	t->cap_tens = t->num_tens = tens;
	t->num_rows = rows;
	tp_par_run(jobs, a.nparts, ltab_par_rows, &a);
	rc = a.oom ? TP_ENOMEM : sort_rows(t, jobs);
out:
	TP_FREE_ALL(a.acc, span, a.rows0, a.tens0, ids);
	return rc;
}

/* Adds engine r into e (the share is set afterwards). */
static void eng_add(struct tp_ltab_eng *e, const struct tp_ltab_eng *r)
{
	e->cycles += r->cycles;
	e->us += r->us;
	e->theo_us += r->theo_us;
}

/* Sets e's share of all the engine's cycles. */
static void eng_ratio(struct tp_ltab_eng *e, const struct tp_ltab_eng *all)
{
	e->ratio = all->cycles ? (double)e->cycles / (double)all->cycles : 0;
}

/* Adds row r's sums into s (ratios are set afterwards). */
static void add_sums(struct tp_ltab_sums *s, const struct tp_ltab_sums *r)
{
	s->weight_bytes += r->weight_bytes;
	s->s2l_bytes += r->s2l_bytes;
	s->l2s_bytes += r->l2s_bytes;
	s->s2s_bytes += r->s2s_bytes;
	eng_add(&s->gdma, &r->gdma);
	s->alg_ops += r->alg_ops;
	s->uarch_ops += r->uarch_ops;
	eng_add(&s->tiu, &r->tiu);
	if (r->peak_tops > s->peak_tops)
		s->peak_tops = r->peak_tops;
	for (unsigned i = 0; i < r->num_dt; i++)
		add_dt(s, r->dt[i]);
}

static void set_ratios(struct tp_ltab_sums *s, const struct tp_ltab_sums *all)
{
	eng_ratio(&s->gdma, &all->gdma);
	eng_ratio(&s->tiu, &all->tiu);
}

static int cmp_funcs(const void *x, const void *y)
{
	const struct tp_ltab_func_row *a = x, *b = y;
	if ((a->func == TP_LTF_OTHERS) != (b->func == TP_LTF_OTHERS))
		return a->func == TP_LTF_OTHERS ? 1 : -1;
	if (a->s.alg_ops != b->s.alg_ops)
		return a->s.alg_ops > b->s.alg_ops ? -1 : 1;
	return (int)a->func - (int)b->func;
}

static void build_funcs(struct tp_ltab *t)
{
	struct tp_ltab_func_row f[TP_LTF_COUNT];
	memset(f, 0, sizeof f);
	for (size_t i = 0; i < t->num_rows; i++) {
		const struct tp_ltab_row *r = &t->rows[i];
		struct tp_ltab_func_row *fr = &f[r->func];
		fr->func = r->func;
		add_sums(&fr->s, &r->s);
		size_t k = 0;
		while (k < fr->num_types && fr->types[k] != r->type)
			k++;
		if (k == fr->num_types && k < sizeof fr->types / sizeof fr->types[0])
			fr->types[fr->num_types++] = r->type;
	}
	t->num_funcs = 0;
	for (int k = 0; k < TP_LTF_COUNT; k++)
		if (f[k].num_types)
			t->funcs[t->num_funcs++] = f[k];
	qsort(t->funcs, t->num_funcs, sizeof t->funcs[0], cmp_funcs);
	for (size_t k = 0; k < t->num_funcs; k++)
		add_sums(&t->overall, &t->funcs[k].s);
	/* The vendor's Overall times are sums over the layer rows in row order, its theoretical
	 * times sums over the Function rows: the float sums differ in the last digit. */
	t->overall.gdma.us = t->overall.tiu.us = 0;
	for (size_t i = 0; i < t->num_rows; i++) {
		t->overall.gdma.us += t->rows[i].s.gdma.us;
		t->overall.tiu.us += t->rows[i].s.tiu.us;
	}
	for (size_t k = 0; k < t->num_funcs; k++)
		set_ratios(&t->funcs[k].s, &t->overall);
	for (size_t i = 0; i < t->num_rows; i++)
		set_ratios(&t->rows[i].s, &t->overall);
	set_ratios(&t->overall, &t->overall);
}

/* MAC utilisation at total time `us`: the net's flops at the model's peak, over `us`. */
static double mac_util(const struct tp_ltab *t, double us)
{
	double peak = t->overall.peak_tops;
	return peak > 0 && us > 0 && t->flops > 0 ? t->flops / (peak * 1024 * 1000) / us : 0;
}

/* One series of "each Function at a peak" rows, from total time `start`: a Function's TIU
 * time drops to its Alg Ops at the model's (model = 1) or its own PeakTops; the total is the
 * longer of the engines, TIU and GDMA overlapped fully. */
static void peak_series(struct tp_ltab *t, int model, double start)
{
	double tiu = t->overall.tiu.us, prev = start;
	for (size_t k = 0; k < t->num_funcs; k++) {
		const struct tp_ltab_func_row *f = &t->funcs[k];
		double peak = model ? t->overall.peak_tops : f->s.peak_tops;
		struct tp_ltab_whatif *w = &t->whatif[t->num_whatif++];
		w->kind = model ? TP_LTC_MODEL_PEAK : TP_LTC_LAYER_PEAK;
		w->func = f->func;
		w->tiu_before_us = f->s.tiu.us;
		/* Without the cost model's Alg Ops (or a peak) the time stays as measured. */
		w->tiu_after_us = peak > 0 && t->overall.uarch_ops
		                      ? (double)f->s.alg_ops / (peak * 1e12) * 1e6
		                      : f->s.tiu.us;
		tiu -= f->s.tiu.us - w->tiu_after_us;
		w->total_us = tiu > t->overall.gdma.us ? tiu : t->overall.gdma.us;
		w->reduced_us = prev - w->total_us;
		prev = w->total_us;
		w->concurrency = 1;
		w->mac_util = mac_util(t, w->total_us);
	}
}

static int build_whatif(struct tp_ltab *t)
{
	t->whatif = tp_calloc(2 + 2 * t->num_funcs, sizeof *t->whatif);
	if (!t->whatif)
		return TP_ENOMEM;
	struct tp_ltab_whatif *o = &t->whatif[t->num_whatif++];
	o->kind = TP_LTC_ORIGIN;
	o->total_us = t->total_us;
	o->concurrency = t->concurrency;
	o->mac_util = mac_util(t, o->total_us);
	struct tp_ltab_whatif *v = &t->whatif[t->num_whatif++];
	v->kind = TP_LTC_OVERLAP;
	/* Overlapped fully, the longer engine is the total. */
	v->total_us =
	    t->overall.tiu.us > t->overall.gdma.us ? t->overall.tiu.us : t->overall.gdma.us;
	v->reduced_us = o->total_us - v->total_us;
	v->concurrency = 1;
	v->mac_util = mac_util(t, v->total_us);
	peak_series(t, 1, v->total_us);
	peak_series(t, 0, v->total_us);
	return TP_OK;
}

static void overall_figures(const struct tp_profile *p, const struct tp_analysis *a,
                            struct tp_ltab *t)
{
	t->total_us = (double)a->total_time_ns / 1000.0;
	t->parallelism = a->overall.parallelism;
	t->concurrency = a->overall.concurrency_bound;
	/* 10^6 / (Σ TIU cycles × period), the vendor's: not the sum of the rows' times. */
	double tiu_us = (double)t->overall.tiu.cycles * period_us(p->tiu_freq_mhz);
	t->fps = tiu_us > 0 ? 1e6 / tiu_us : 0;
	const char *fl = tp_profile_get_meta(p, "sim_flops");
	t->flops = fl ? strtod(fl, NULL) : 0;
	for (size_t i = 0; i < t->num_rows; i++)
		t->sim_cycles += t->rows[i].sim_cycles;
}

int tp_ltab_build(const struct tp_profile *p, const struct tp_analysis *a, struct tp_ltab *t)
{
	return tp_ltab_build_jobs(p, a, t, 1);
}

int tp_ltab_build_jobs(const struct tp_profile *p, const struct tp_analysis *a, struct tp_ltab *t,
                       unsigned jobs)
{
	memset(t, 0, sizeof *t);
	t->profile = p;
	if (!p->num_layers)
		return TP_OK;
	t->rows = tp_calloc(p->num_layers, sizeof *t->rows);
	int rc = t->rows ? build_rows(p, t, jobs ? jobs : 1) : TP_ENOMEM;
	if (rc == TP_OK && t->num_rows) {
		build_funcs(t);
		overall_figures(p, a, t);
		rc = build_whatif(t);
	}
	if (rc != TP_OK)
		tp_ltab_free(t);
	return rc;
}

void tp_ltab_free(struct tp_ltab *t)
{
	tp_free(t->rows);
	tp_free(t->tens);
	tp_free(t->whatif);
	memset(t, 0, sizeof *t);
}
