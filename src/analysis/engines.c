/*
 * engines.c — the per-engine statistics in the reference tools' definitions
 * (sophgo-bmprofile.md §10.2, PerfWeb, sophgo-analysis.md §4.4): working, busy and idle time,
 * utilisation and bandwidths of each engine, each core's ratios against the total time
 * (parallelism, TIU working ratio, concurrency bound, compute share, the PerfDoc figures), and
 * the Overall row over the cores, and the DDR burst length. The per-slice sums come from
 * tp_analysis_accumulate (analysis_int.h) and, for the burst counters that only the records'
 * argument sets carry, tp_analysis_burst_add, in the driver's per-core passes.
 */
#include <string.h>

#include "analysis/analysis_int.h"

int tp_analysis_burst_keys(const struct tp_profile *p, struct tp_burst_keys *k)
{
	*k = (struct tp_burst_keys){0};
	static const char bl[] = "gmem_bl_sum";
	k->has_bl_sum = tp_strtab_find(&p->strs, bl, sizeof bl - 1, &k->bl_sum);
	k->has_xact =
	    tp_strtab_find(&p->strs, TP_KEY_GMEM_XACT, strlen(TP_KEY_GMEM_XACT), &k->xact);
	return k->has_bl_sum || k->has_xact;
}

static uint64_t arg_count(const struct tp_arg *a)
{
	if (a->type == TP_ARG_UINT)
		return a->v.u;
	if (a->type == TP_ARG_INT)
		return a->v.i > 0 ? (uint64_t)a->v.i : 0;
	if (a->type == TP_ARG_REAL)
		return a->v.d > 0 ? (uint64_t)a->v.d : 0;
	return 0;
}

void tp_analysis_burst_add(const struct tp_profile *p, const struct tp_burst_keys *k,
                           const struct tp_track *t, const struct tp_slice *s,
                           struct tp_engine_stats *e)
{
	/* The selection of ddr_bytes (tp_analysis_accumulate): PerfAI sums the counters over
	 * the records whose Direction names DDR. */
	if (!s->args || tp_slice_kind(t, s) != TP_CMD_NORMAL || tp_slice_bytes(t, s) == 0 ||
	    !tp_dir_touches_ddr((enum tp_dir)tp_slice_dir(t, s)))
		return;
	size_t n = 0;
	const struct tp_arg *a = tp_args_get(p, s->args, &n);
	for (size_t i = 0; a && i < n; i++) {
		if (k->has_bl_sum && a[i].key == k->bl_sum)
			e->ddr_burst_sum += arg_count(&a[i]);
		else if (k->has_xact && a[i].key == k->xact)
			e->ddr_xact += arg_count(&a[i]);
	}
}

void tp_analysis_sums_add(struct tp_engine_stats *dst, const struct tp_engine_stats *src)
{
	dst->total_cycle += src->total_cycle;
	dst->sys_cycle += src->sys_cycle;
	dst->wait_cycle += src->wait_cycle;
	dst->busy_cycle += src->busy_cycle;
	dst->stall_cycle += src->stall_cycle;
	dst->cost_missing += src->cost_missing;
	dst->cost_commands += src->cost_commands;
	dst->alg_ops += src->alg_ops;
	dst->uarch_ops += src->uarch_ops;
	dst->alg_cycle += src->alg_cycle;
	dst->init_cycle += src->init_cycle;
	dst->bank_cycle += src->bank_cycle;
	dst->ddr_bytes += src->ddr_bytes;
	dst->ddr_cycle += src->ddr_cycle;
	dst->l2_bytes += src->l2_bytes;
	dst->l2_cycle += src->l2_cycle;
	dst->ddr_read_bytes += src->ddr_read_bytes;
	dst->ddr_read_cycle += src->ddr_read_cycle;
	dst->ddr_write_bytes += src->ddr_write_bytes;
	dst->ddr_write_cycle += src->ddr_write_cycle;
	dst->ddr_burst_sum += src->ddr_burst_sum;
	dst->ddr_xact += src->ddr_xact;
}

/* e's bandwidths (bytes / ns of their cycles at mhz) and burst length from its sums: one
 * core's, or the Overall row's over the cores. */
static void data_ratios(struct tp_engine_stats *e, double mhz)
{
	e->ddr_avg_gbps =
	    tp_analysis_ratio((double)e->ddr_bytes, (double)tp_cycles_to_ns(e->ddr_cycle, mhz));
	e->l2_avg_gbps =
	    tp_analysis_ratio((double)e->l2_bytes, (double)tp_cycles_to_ns(e->l2_cycle, mhz));
	e->ddr_read_gbps = tp_analysis_ratio((double)e->ddr_read_bytes,
	                                     (double)tp_cycles_to_ns(e->ddr_read_cycle, mhz));
	e->ddr_write_gbps = tp_analysis_ratio((double)e->ddr_write_bytes,
	                                      (double)tp_cycles_to_ns(e->ddr_write_cycle, mhz));
	e->ddr_avg_burst = tp_analysis_ratio((double)e->ddr_burst_sum, (double)e->ddr_xact);
}

void tp_analysis_finish_engine(struct tp_engine_stats *e, double mhz, int64_t total_ns)
{
	/* PerfWeb: TIU excludes only wait_msg; DMA working = total - sys wait. Both are the same
	 * expression with our kinds. */
	e->working_cycle = e->total_cycle - e->wait_cycle;
	e->working_ns = tp_cycles_to_ns(e->working_cycle, mhz);
	e->busy_ns = tp_cycles_to_ns(e->busy_cycle, mhz);
	e->idle_ns = total_ns > e->busy_ns ? total_ns - e->busy_ns : 0;
	e->utilization = tp_analysis_ratio((double)e->busy_ns, (double)total_ns);
	data_ratios(e, mhz);
}

/* Core c's ratios against the total time; returns its parallelism numerator (TIU + GDMA + SDMA
 * working ns). */
static double core_ratios(struct tp_core_stats *c, double total)
{
	struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU], *gdma = &c->eng[TP_TRACK_GDMA],
	                       *sdma = &c->eng[TP_TRACK_SDMA], *cdma = &c->eng[TP_TRACK_CDMA];
	double tiu_ns = (double)tiu->working_ns, gdma_ns = (double)gdma->working_ns;
	double num = tiu_ns + gdma_ns + (double)sdma->working_ns;
	c->tiu_working_ratio = tp_analysis_ratio(tiu_ns, total);
	c->parallelism = tp_analysis_ratio(num, total);
	c->tiu_working_ratio_max = c->tiu_working_ratio;
	double mn = tiu_ns < gdma_ns ? tiu_ns : gdma_ns;
	double bound = tiu_ns > 0 && gdma_ns > 0 ? (tiu_ns + gdma_ns - total) / mn : 0;
	c->concurrency_bound = bound > 0 ? bound : 0;
	double dma_busy = (double)(gdma->busy_ns + sdma->busy_ns + cdma->busy_ns);
	c->compute_share = tp_analysis_ratio((double)tiu->busy_ns, (double)tiu->busy_ns + dma_busy);
	/* PerfDoc adds TIU ns to raw GDMA cycles (sophgo-analysis.md §5.4). */
	double mixed = tiu_ns + (double)gdma->working_cycle + (double)sdma->working_cycle;
	c->perfdoc_parallelism = tp_analysis_ratio(mixed, total);
	double gm = (double)gdma->working_cycle, mn2 = tiu_ns < gm ? tiu_ns : gm;
	c->perfdoc_concurrency = tiu_ns > 0 && gm > 0 ? (tiu_ns + gm - total) / mn2 : 0;
	return num;
}

/* Adds one engine's figures of a core (x) to the Overall row's engine (o): whether any core
 * has the engine or cost figures, and the sums of its counts, cycles, times and bytes (the
 * ratios are derived from the sums afterwards). */
static void engine_add(struct tp_engine_stats *o, const struct tp_engine_stats *x)
{
	o->present |= x->present;
	o->has_cost |= x->has_cost;
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
	o->ddr_burst_sum += x->ddr_burst_sum;
	o->ddr_xact += x->ddr_xact;
	o->alg_ops += x->alg_ops;
	o->uarch_ops += x->uarch_ops;
	o->alg_cycle += x->alg_cycle;
	o->init_cycle += x->init_cycle;
	o->bank_cycle += x->bank_cycle;
	o->cost_commands += x->cost_commands;
	o->cost_missing += x->cost_missing;
}

/* Adds core c to the Overall row: the busiest core's engines (working time and cycles), the
 * engine sums, and the largest measured concurrency and overlap. */
static void overall_add(struct tp_analysis *a, const struct tp_core_stats *c)
{
	const struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU], *gdma = &c->eng[TP_TRACK_GDMA],
	                             *sdma = &c->eng[TP_TRACK_SDMA];
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
	for (int e = 0; e < TP_ENGINES; e++)
		engine_add(&a->overall.eng[e], &c->eng[e]);
	if (c->concurrency > a->overall.concurrency)
		a->overall.concurrency = c->concurrency;
	if (c->overlap_ns > a->overall.overlap_ns)
		a->overall.overlap_ns = c->overlap_ns;
}

/* The Overall row's ratios (a->num_cores > 0): parallelism, TIU working ratio, bandwidths,
 * utilisation, compute share and concurrency bound over the cores; sum_num and sum_tiu are the
 * cores' parallelism numerators and TIU working ns. */
static void overall_row(const struct tp_profile *p, struct tp_analysis *a, double sum_num,
                        double sum_tiu)
{
	double total = (double)a->total_time_ns;
	double n = (double)a->num_cores;
	a->overall.device = -1;
	a->overall.core = -1;
	/* PerfWeb's Overall Parallelism: the busiest core's engines together, (max TIU +
	 * max GDMA + max SDMA working time) / total time (sophgo-analysis.md §6); tpuprof's
	 * per-core mean is kept under its own name. */
	a->overall.parallelism = tp_analysis_ratio(
	    (double)(a->overall_tiu_max_ns + a->overall_gdma_max_ns + a->overall_sdma_max_ns),
	    total);
	a->overall.mean_parallelism = tp_analysis_ratio(sum_num, total * n);
	a->overall.tiu_working_ratio = tp_analysis_ratio(sum_tiu, total * n);
	a->overall.tiu_working_ratio_max = tp_analysis_ratio((double)a->overall_tiu_max_ns, total);
	for (int e = 0; e < TP_ENGINES; e++) {
		struct tp_engine_stats *o = &a->overall.eng[e];
		/* Overall bandwidth: Σ bytes / ns(Σ cycles) at the engine's clock (all
		 * cores of one device share a clock). */
		double mhz = 0;
		for (size_t i = 0; i < p->num_tracks; i++)
			if (p->tracks[i].kind == e) {
				mhz = p->tracks[i].freq_mhz;
				break;
			}
		data_ratios(o, mhz);
		o->utilization = tp_analysis_ratio((double)o->busy_ns, total * n);
	}
	double dma_busy =
	    (double)(a->overall.eng[TP_TRACK_GDMA].busy_ns + a->overall.eng[TP_TRACK_SDMA].busy_ns +
	             a->overall.eng[TP_TRACK_CDMA].busy_ns);
	double tb = (double)a->overall.eng[TP_TRACK_TIU].busy_ns;
	a->overall.compute_share = tp_analysis_ratio(tb, tb + dma_busy);
	double tmax = (double)a->overall_tiu_max_ns, gmax = (double)a->overall_gdma_max_ns;
	double mn = tmax < gmax ? tmax : gmax;
	double bound = tmax > 0 && gmax > 0 ? (tmax + gmax - total) / mn : 0;
	a->overall.concurrency_bound = bound > 0 ? bound : 0;
}

void tp_analysis_engine_ratios(const struct tp_profile *p, struct tp_analysis *a)
{
	double total = (double)a->total_time_ns;
	double sum_num = 0, sum_tiu = 0;
	for (size_t i = 0; i < a->num_cores; i++) {
		struct tp_core_stats *c = &a->cores[i];
		sum_num += core_ratios(c, total);
		sum_tiu += (double)c->eng[TP_TRACK_TIU].working_ns;
		overall_add(a, c);
	}
	if (a->num_cores)
		overall_row(p, a, sum_num, sum_tiu);
}
