/*
 * analysis.c — derives the per-core engine statistics, the summary ratios and the rankings
 * from a finished profile. Definitions follow the reference tools where users compare numbers
 * (sophgo-bmprofile.md §10.2, PerfWeb), and sophgo-analysis.md §4.4 for the metrics the
 * reference promises but never computed (busy / idle / utilisation, DDR read and write).
 *
 * Owns the arrays inside struct tp_analysis (cores, rankings); freed by tp_analysis_free.
 */
#include "analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

double tp_slice_gbps(const struct tp_slice *s, double freq_mhz)
{
	/* bytes / (cycles / MHz * 1000 ns) without truncation, as the reference's per-command
	 * figure (bytes / Asic Cycle × MHz / 1000). */
	double ns = s->cycles && freq_mhz > 0 ? (double)s->cycles * 1000.0 / freq_mhz
	                                      : (double)(s->end_ns - s->start_ns);
	return ns > 0 ? (double)s->bytes / ns : 0.0;
}

static double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

/* Engine kinds that carry hardware commands (TIU, GDMA, SDMA, CDMA). */
static int is_engine(uint8_t kind) { return kind < TP_ENGINES; }

static int find_core(struct tp_analysis *a, int32_t device, int32_t core)
{
	for (size_t i = 0; i < a->num_cores; i++)
		if (a->cores[i].device == device && a->cores[i].core == core)
			return (int)i;
	return -1;
}

const struct tp_core_stats *tp_analysis_core(const struct tp_analysis *a, int32_t device,
                                             int32_t core)
{
	for (size_t i = 0; i < a->num_cores; i++)
		if (a->cores[i].device == device && a->cores[i].core == core)
			return &a->cores[i];
	return NULL;
}

static void accumulate(const struct tp_track *t, struct tp_engine_stats *e)
{
	e->present = t->count > 0;
	e->records += t->count;
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		uint64_t c = s->cycles;
		e->total_cycle += c;
		if (s->kind != TP_CMD_NORMAL)
			e->sys_cycle += c;
		if (s->kind == TP_CMD_SYS_WAIT)
			e->wait_cycle += c;
		if (s->kind == TP_CMD_NORMAL)
			e->busy_cycle += c;
		e->stall_cycle += s->stall;
		if (t->kind == TP_TRACK_TIU || s->kind != TP_CMD_NORMAL || s->bytes == 0)
			continue;
		enum tp_dir d = (enum tp_dir)s->dir;
		if (tp_dir_touches_ddr(d)) {
			e->ddr_bytes += s->bytes;
			e->ddr_cycle += c;
		} else if (tp_dir_touches_l2(d)) {
			e->l2_bytes += s->bytes;
			e->l2_cycle += c;
		}
		if (tp_dir_reads_ddr(d)) {
			e->ddr_read_bytes += s->bytes;
			e->ddr_read_cycle += c;
		}
		if (tp_dir_writes_ddr(d)) {
			e->ddr_write_bytes += s->bytes;
			e->ddr_write_cycle += c;
		}
	}
}

static void finish_engine(struct tp_engine_stats *e, double mhz,
                          int64_t total_ns)
{
	/* PerfWeb: TIU excludes only wait_msg; DMA working = total - sys wait. Both are the same
	 * expression with our kinds. */
	e->working_cycle = e->total_cycle - e->wait_cycle;
	e->working_ns = tp_cycles_to_ns(e->working_cycle, mhz);
	e->busy_ns = tp_cycles_to_ns(e->busy_cycle, mhz);
	e->idle_ns = total_ns > e->busy_ns ? total_ns - e->busy_ns : 0;
	e->utilization = ratio((double)e->busy_ns, (double)total_ns);
	e->ddr_avg_gbps = ratio((double)e->ddr_bytes, (double)tp_cycles_to_ns(e->ddr_cycle, mhz));
	e->l2_avg_gbps = ratio((double)e->l2_bytes, (double)tp_cycles_to_ns(e->l2_cycle, mhz));
	e->ddr_read_gbps =
		ratio((double)e->ddr_read_bytes, (double)tp_cycles_to_ns(e->ddr_read_cycle, mhz));
	e->ddr_write_gbps =
		ratio((double)e->ddr_write_bytes, (double)tp_cycles_to_ns(e->ddr_write_cycle, mhz));
}

static int rank_cmp(const void *x, const void *y)
{
	const struct tp_rank *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->core != b->core)
		return a->core < b->core ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Keeps the `cap` best ranks (rank_cmp order) in h[0..*n): a max-heap on rank_cmp, so the root
 * is the worst kept entry and a better candidate replaces it. */
static void sift_down(struct tp_rank *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && rank_cmp(&h[l], &h[m]) > 0)
			m = l;
		if (r < n && rank_cmp(&h[r], &h[m]) > 0)
			m = r;
		if (m == i)
			return;
		struct tp_rank t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_offer(struct tp_rank *h, size_t *n, size_t cap, const struct tp_rank *r)
{
	if (*n < cap) {
		size_t i = (*n)++;
		h[i] = *r;
		while (i > 0 && rank_cmp(&h[(i - 1) / 2], &h[i]) < 0) {
			struct tp_rank t = h[i];
			h[i] = h[(i - 1) / 2];
			h[(i - 1) / 2] = t;
			i = (i - 1) / 2;
		}
		return;
	}
	if (cap == 0 || rank_cmp(r, &h[0]) >= 0)
		return;
	h[0] = *r;
	sift_down(h, *n, 0);
}

/* Groups slices by (core, track kind, name) into `out`. A small open-addressing map keyed by
 * the triple keeps this O(n) over tens of millions of commands. */
struct rank_map {
	struct tp_rank *v;
	size_t n, cap;
	uint32_t *slots; /* index + 1 */
	size_t nslots;
};

static uint64_t rkey(int32_t core, uint32_t type, uint32_t name)
{
	return ((uint64_t)(uint32_t)core * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)type << 40) ^ name;
}

static struct tp_rank *rank_get(struct rank_map *m, int32_t core, uint32_t type, uint32_t name)
{
	if ((m->n + 1) * 2 > m->nslots) {
		size_t ns = m->nslots ? m->nslots * 2 : 64;
		uint32_t *slots = tp_calloc(ns, sizeof *slots);
		if (!slots)
			return NULL;
		for (size_t i = 0; i < m->n; i++) {
			size_t h = rkey(m->v[i].core, m->v[i].type, m->v[i].name) & (ns - 1);
			while (slots[h])
				h = (h + 1) & (ns - 1);
			slots[h] = (uint32_t)i + 1;
		}
		tp_free(m->slots);
		m->slots = slots;
		m->nslots = ns;
	}
	size_t h = rkey(core, type, name) & (m->nslots - 1);
	while (m->slots[h]) {
		struct tp_rank *r = &m->v[m->slots[h] - 1];
		if (r->core == core && r->type == type && r->name == name)
			return r;
		h = (h + 1) & (m->nslots - 1);
	}
	struct tp_rank *nv = tp_grow(m->v, sizeof *nv, m->n + 1, &m->cap);
	if (!nv)
		return NULL;
	m->v = nv;
	struct tp_rank *r = &m->v[m->n];
	memset(r, 0, sizeof *r);
	r->core = core;
	r->type = type;
	r->name = name;
	r->index = -1;
	r->min_ns = INT64_MAX;
	m->slots[h] = (uint32_t)++m->n;
	return r;
}

static void rank_add(struct tp_rank *r, int64_t dur)
{
	r->count++;
	r->total_ns += dur;
	if (dur < r->min_ns)
		r->min_ns = dur;
	if (dur > r->max_ns)
		r->max_ns = dur;
}

int tp_analyze(const struct tp_profile *p, struct tp_analysis *a)
{
	memset(a, 0, sizeof *a);
	a->profile = p;
	int st = TP_OK;
	struct rank_map cmds = {0}, ops = {0};

	/* Cores: one entry per (device, core) that owns an engine track, in track order. */
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		a->engine_records[t->kind] += t->count;
		if (!is_engine(t->kind) || find_core(a, t->device, t->core) >= 0)
			continue;
		size_t cap = a->num_cores;
		struct tp_core_stats *c = tp_grow(a->cores, sizeof *c, a->num_cores + 1, &cap);
		if (!c) {
			st = TP_ENOMEM;
			goto out;
		}
		a->cores = c;
		memset(&c[a->num_cores], 0, sizeof *c);
		c[a->num_cores].device = t->device;
		c[a->num_cores].core = t->core;
		a->num_cores++;
	}

	/* Total time: max end - min start over every engine record (PerfWeb). The reference takes
	 * the GDMA "end" as the last record's end rather than the maximum; records are in start
	 * order, and for PMU streams the last record also ends last, so both agree unless a DMA
	 * overtakes a later one — then we keep the true maximum. */
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (!is_engine(t->kind) || t->count == 0)
			continue;
		if (t->slices[0].start_ns < lo)
			lo = t->slices[0].start_ns;
		for (size_t k = 0; k < t->count; k++)
			if (t->slices[k].end_ns > hi)
				hi = t->slices[k].end_ns;
	}
	a->total_time_ns = lo <= hi ? hi - lo : 0;

	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (!is_engine(t->kind))
			continue;
		struct tp_core_stats *c = &a->cores[find_core(a, t->device, t->core)];
		accumulate(t, &c->eng[t->kind]);
		finish_engine(&c->eng[t->kind], t->freq_mhz, a->total_time_ns);
		for (size_t k = 0; k < t->count; k++) {
			const struct tp_slice *s = &t->slices[k];
			struct tp_rank *r = rank_get(&cmds, t->core, t->name, s->name);
			if (!r) {
				st = TP_ENOMEM;
				goto out;
			}
			rank_add(r, s->end_ns - s->start_ns);
		}
	}

	double total = (double)a->total_time_ns;
	double sum_num = 0, sum_tiu = 0;
	for (size_t i = 0; i < a->num_cores; i++) {
		struct tp_core_stats *c = &a->cores[i];
		struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU], *gdma = &c->eng[TP_TRACK_GDMA],
		                       *sdma = &c->eng[TP_TRACK_SDMA], *cdma = &c->eng[TP_TRACK_CDMA];
		double tiu_ns = (double)tiu->working_ns, gdma_ns = (double)gdma->working_ns;
		double num = tiu_ns + gdma_ns + (double)sdma->working_ns;
		c->tiu_working_ratio = ratio(tiu_ns, total);
		c->parallelism = ratio(num, total);
		double mn = tiu_ns < gdma_ns ? tiu_ns : gdma_ns;
		c->concurrency = tiu_ns > 0 && gdma_ns > 0 ? (tiu_ns + gdma_ns - total) / mn : 0;
		double dma_busy = (double)(gdma->busy_ns + sdma->busy_ns + cdma->busy_ns);
		c->compute_share = ratio((double)tiu->busy_ns, (double)tiu->busy_ns + dma_busy);
		/* PerfDoc adds TIU ns to raw GDMA cycles (sophgo-analysis.md §5.4). */
		double mixed = tiu_ns + (double)gdma->working_cycle + (double)sdma->working_cycle;
		c->perfdoc_parallelism = ratio(mixed, total);
		double gm = (double)gdma->working_cycle, mn2 = tiu_ns < gm ? tiu_ns : gm;
		c->perfdoc_concurrency = tiu_ns > 0 && gm > 0 ? (tiu_ns + gm - total) / mn2 : 0;
		sum_num += num;
		sum_tiu += tiu_ns;
		if ((int64_t)tiu->working_ns > a->overall_tiu_max_ns) {
			a->overall_tiu_max_ns = tiu->working_ns;
			a->overall_tiu_max_cycle = tiu->working_cycle;
		}
		if ((int64_t)gdma->working_ns > a->overall_gdma_max_ns) {
			a->overall_gdma_max_ns = gdma->working_ns;
			a->overall_gdma_max_cycle = gdma->working_cycle;
		}
		if ((int64_t)sdma->working_ns > a->overall_sdma_max_ns) {
			a->overall_sdma_max_ns = sdma->working_ns;
			a->overall_sdma_max_cycle = sdma->working_cycle;
		}
		for (int e = 0; e < TP_ENGINES; e++) {
			struct tp_engine_stats *o = &a->overall.eng[e], *x = &c->eng[e];
			o->present |= x->present;
			o->records += x->records;
			o->total_cycle += x->total_cycle;
			o->sys_cycle += x->sys_cycle;
			o->wait_cycle += x->wait_cycle;
			o->working_cycle += x->working_cycle;
			o->busy_cycle += x->busy_cycle;
			o->busy_ns += x->busy_ns;
			o->working_ns += x->working_ns;
			o->idle_ns += x->idle_ns;
			o->ddr_bytes += x->ddr_bytes;
			o->ddr_cycle += x->ddr_cycle;
			o->l2_bytes += x->l2_bytes;
			o->l2_cycle += x->l2_cycle;
			o->ddr_read_bytes += x->ddr_read_bytes;
			o->ddr_write_bytes += x->ddr_write_bytes;
			o->ddr_read_cycle += x->ddr_read_cycle;
			o->ddr_write_cycle += x->ddr_write_cycle;
			o->stall_cycle += x->stall_cycle;
			o->alg_ops += x->alg_ops;
			o->uarch_ops += x->uarch_ops;
		}
	}
	if (a->num_cores) {
		double n = (double)a->num_cores;
		a->overall.device = -1;
		a->overall.core = -1;
		a->overall.parallelism = ratio(sum_num, total * n);
		a->overall.tiu_working_ratio = ratio(sum_tiu, total * n);
		for (int e = 0; e < TP_ENGINES; e++) {
			struct tp_engine_stats *o = &a->overall.eng[e];
			/* Overall bandwidth: Σ bytes / ns(Σ cycles) at the engine's clock (all cores of
			 * one device share a clock). */
			double mhz = 0;
			for (size_t i = 0; i < p->num_tracks; i++)
				if (p->tracks[i].kind == e) {
					mhz = p->tracks[i].freq_mhz;
					break;
				}
			o->ddr_avg_gbps = ratio((double)o->ddr_bytes, (double)tp_cycles_to_ns(o->ddr_cycle, mhz));
			o->l2_avg_gbps = ratio((double)o->l2_bytes, (double)tp_cycles_to_ns(o->l2_cycle, mhz));
			o->ddr_read_gbps = ratio((double)o->ddr_read_bytes,
			                         (double)tp_cycles_to_ns(o->ddr_read_cycle, mhz));
			o->ddr_write_gbps = ratio((double)o->ddr_write_bytes,
			                          (double)tp_cycles_to_ns(o->ddr_write_cycle, mhz));
			o->utilization = ratio((double)o->busy_ns, total * n);
		}
		double dma_busy = (double)(a->overall.eng[TP_TRACK_GDMA].busy_ns +
		                           a->overall.eng[TP_TRACK_SDMA].busy_ns +
		                           a->overall.eng[TP_TRACK_CDMA].busy_ns);
		double tb = (double)a->overall.eng[TP_TRACK_TIU].busy_ns;
		a->overall.compute_share = ratio(tb, tb + dma_busy);
		double tmax = (double)a->overall_tiu_max_ns, gmax = (double)a->overall_gdma_max_ns;
		double mn = tmax < gmax ? tmax : gmax;
		a->overall.concurrency = tmax > 0 && gmax > 0 ? (tmax + gmax - total) / mn : 0;
	}

	/* Command rankings, shares relative to total time. */
	for (size_t i = 0; i < cmds.n; i++)
		cmds.v[i].share = ratio((double)cmds.v[i].total_ns, total);
	if (cmds.n) /* qsort(NULL, 0) is undefined behaviour */
		qsort(cmds.v, cmds.n, sizeof *cmds.v, rank_cmp);
	a->top_cmds = cmds.v;
	a->num_top_cmds = cmds.n;
	cmds.v = NULL;

	/* Layers by span (begin..end of their matched commands): the top TP_ANALYSIS_TOP_LAYERS,
	 * selected with a bounded heap so a dump with millions of layers is not sorted whole. */
	if (p->num_layers) {
		size_t cap = p->num_layers < TP_ANALYSIS_TOP_LAYERS ? p->num_layers : TP_ANALYSIS_TOP_LAYERS;
		a->top_layers = tp_calloc(cap, sizeof *a->top_layers);
		if (!a->top_layers) {
			st = TP_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < p->num_layers; i++) {
			const struct tp_layer *l = &p->layers[i];
			if (l->begin_ns > l->end_ns)
				continue;
			struct tp_rank r = {0};
			r.name = l->name;
			r.type = l->type;
			r.index = (int32_t)i;
			r.core = l->core;
			r.count = (uint64_t)(l->tiu_last >= l->tiu_first && l->tiu_last ? l->tiu_last - l->tiu_first + 1 : 0) +
			          (uint64_t)(l->gdma_last >= l->gdma_first && l->gdma_last ? l->gdma_last - l->gdma_first + 1 : 0);
			r.total_ns = r.min_ns = r.max_ns = l->end_ns - l->begin_ns;
			r.share = ratio((double)r.total_ns, total);
			heap_offer(a->top_layers, &a->num_top_layers, cap, &r);
		}
		if (a->num_top_layers)
			qsort(a->top_layers, a->num_top_layers, sizeof *a->top_layers, rank_cmp);
	}

	/* Captures: operator slices grouped by op_type (falling back to the slice name). */
	uint32_t op_key, op_type_str;
	int have_key = tp_strtab_find(&p->strs, TP_CAP_KEY_OP_TYPE, strlen(TP_CAP_KEY_OP_TYPE), &op_key);
	if (tp_strtab_find(&p->strs, TP_CAP_TYPE_OP, strlen(TP_CAP_TYPE_OP), &op_type_str)) {
		for (size_t i = 0; i < p->num_tracks; i++) {
			const struct tp_track *t = &p->tracks[i];
			for (size_t k = 0; k < t->count; k++) {
				const struct tp_slice *s = &t->slices[k];
				if (s->type != op_type_str)
					continue;
				const struct tp_arg *ot = have_key ? tp_args_find(p, s->args, op_key) : NULL;
				uint32_t ty = ot && ot->type == TP_ARG_STR ? ot->v.s : s->name;
				struct tp_rank *r = rank_get(&ops, -1, 0, ty);
				if (!r) {
					st = TP_ENOMEM;
					goto out;
				}
				rank_add(r, s->end_ns - s->start_ns);
			}
		}
		int64_t span = p->span_end_ns - p->span_begin_ns;
		for (size_t i = 0; i < ops.n; i++)
			ops.v[i].share = ratio((double)ops.v[i].total_ns, (double)span);
		if (ops.n)
			qsort(ops.v, ops.n, sizeof *ops.v, rank_cmp);
		a->op_types = ops.v;
		a->num_op_types = ops.n;
		ops.v = NULL;
	}
out:
	tp_free(cmds.v);
	tp_free(cmds.slots);
	tp_free(ops.v);
	tp_free(ops.slots);
	if (st != TP_OK)
		tp_analysis_free(a);
	return st;
}

void tp_analysis_free(struct tp_analysis *a)
{
	tp_free(a->cores);
	tp_free(a->top_layers);
	tp_free(a->top_cmds);
	tp_free(a->op_types);
	memset(a, 0, sizeof *a);
}
