/*
 * json.c — summary.json: the summary's numbers with units in the key names (per core, the
 * Overall row, the vendor's figures when present, record counts, rankings, hot spots,
 * metadata and notes). Captures get the capture summary instead (src/writers/capreport).
 */
#include "writers/capreport/capreport.h"
#include "writers/summary/summary_int.h"

static void jus(struct tp_buf *b, int *first, const char *k, int64_t ns)
{
	jkey(b, first, k);
	tp_buf_ns_as_us(b, ns);
}

/* Integer fields k[i]: v[i], i < n. */
static void jints(struct tp_buf *b, int *first, const char *const *k, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		jint(b, first, k[i], v[i]);
}

static void engine_json(struct tp_buf *b, const struct tp_engine_stats *x, enum tp_track_kind e)
{
	int f = 1;
	tp_buf_putc(b, '{');
	static const char *const ck[] = {"records",    "total_cycle", "working_cycle",
	                                 "busy_cycle", "sys_cycle",   "wait_cycle"};
	const uint64_t cv[] = {x->records,    x->total_cycle, x->working_cycle,
	                       x->busy_cycle, x->sys_cycle,   x->wait_cycle};
	jints(b, &f, ck, cv, sizeof ck / sizeof *ck);
	jus(b, &f, "busy_us", x->busy_ns);
	jus(b, &f, "idle_us", x->idle_ns);
	jus(b, &f, "working_us", x->working_ns);
	jnum(b, &f, "utilization_pct", x->utilization * 100, 4);
	if (tp_track_kind_is_dma(e)) {
		jint(b, &f, "ddr_bytes", x->ddr_bytes);
		jint(b, &f, "ddr_cycle", x->ddr_cycle);
		jnum(b, &f, "ddr_avg_bw_gbps", x->ddr_avg_gbps, 4);
		jint(b, &f, "l2_bytes", x->l2_bytes);
		jnum(b, &f, "l2_avg_bw_gbps", x->l2_avg_gbps, 4);
		jint(b, &f, "ddr_burst_length_sum", x->ddr_burst_sum);
		jint(b, &f, "ddr_xact_count", x->ddr_xact);
		jnum(b, &f, "avg_ddr_burst_length", x->ddr_avg_burst, 4);
		jint(b, &f, "ddr_read_bytes", x->ddr_read_bytes);
		jint(b, &f, "ddr_write_bytes", x->ddr_write_bytes);
		jnum(b, &f, "ddr_read_bw_gbps", x->ddr_read_gbps, 4);
		jnum(b, &f, "ddr_write_bw_gbps", x->ddr_write_gbps, 4);
		jint(b, &f, "stall_cycle", x->stall_cycle);
	} else if (e == TP_TRACK_TIU) {
		/* null = no descriptors in the dump (never an invented figure). */
		double r;
		int known = tp_uarch_rate(x, &r);
		jkey(b, &f, "uarch_rate_pct");
		if (known)
			tp_buf_fixed(b, 100.0 * r, 4);
		else
			tp_buf_puts(b, "null");
		static const char *const k[] = {"total_alg_cycle", "total_alg_ops",
		                                "total_uarch_ops", "total_init_cycle",
		                                "total_bank_conflict_cycle"};
		const uint64_t v[] = {x->alg_cycle, x->alg_ops, x->uarch_ops, x->init_cycle,
		                      x->bank_cycle};
		for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
			jkey(b, &f, k[i]);
			if (known)
				tp_buf_printf(b, "%llu", (unsigned long long)v[i]);
			else
				tp_buf_puts(b, "null");
		}
		jint(b, &f, "cost_commands", x->cost_commands);
		jint(b, &f, "cost_missing", x->cost_missing);
	}
	tp_buf_putc(b, '}');
}

static void ftype_json(struct tp_buf *b, const struct tp_profile *p, const struct tp_core_stats *c)
{
	double rate;
	int known = tp_uarch_rate(&c->eng[TP_TRACK_TIU], &rate);
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < c->num_ftypes; i++) {
		const struct tp_ftype_stats *x = &c->ftypes[i];
		int f = 1;
		tp_buf_puts(b, i ? ",{" : "{");
		jstr(b, &f, "function_type", tp_str(p, x->type));
		jint(b, &f, "instr_num", x->instr);
		jint(b, &f, "asic_cycle", x->asic_cycle);
		if (known) {
			jint(b, &f, "alg_ops", x->alg_ops);
			jint(b, &f, "uarch_ops", x->uarch_ops);
			jint(b, &f, "alg_cycle", x->alg_cycle);
			jnum(b, &f, "uarch_rate_pct",
			     x->uarch_ops ? 100.0 * (double)x->alg_ops / (double)x->uarch_ops : 0,
			     4);
		}
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
}

static void core_json(struct tp_buf *b, const struct tp_analysis *a, const struct tp_core_stats *c,
                      int overall)
{
	int f = 1;
	tp_buf_putc(b, '{');
	if (!overall) {
		jint(b, &f, "device", (uint64_t)c->device);
		jint(b, &f, "core", (uint64_t)c->core);
	}
	jnum(b, &f, "parallelism_pct", c->parallelism * 100, 4);
	jnum(b, &f, "tiu_working_ratio_pct", c->tiu_working_ratio * 100, 4);
	jnum(b, &f, "concurrency_pct", c->concurrency * 100, 4);
	jus(b, &f, "tiu_dma_overlap_us", c->overlap_ns);
	jnum(b, &f, "concurrency_lower_bound_pct", c->concurrency_bound * 100, 4);
	jnum(b, &f, "compute_share_pct", c->compute_share * 100, 4);
	if (overall) {
		jnum(b, &f, "mean_core_parallelism_pct", c->mean_parallelism * 100, 4);
		jnum(b, &f, "tiu_working_ratio_max_pct", c->tiu_working_ratio_max * 100, 4);
		/* Per engine (TIU, GDMA, SDMA): the largest over the cores, in cycles and in us. */
		static const char *const mk[][2] = {{"max_tiu_cycle", "max_tiu_us"},
		                                    {"max_gdma_cycle", "max_gdma_us"},
		                                    {"max_sdma_cycle", "max_sdma_us"}};
		const uint64_t mc[] = {a->overall_tiu_max_cycle, a->overall_gdma_max_cycle,
		                       a->overall_sdma_max_cycle};
		const int64_t mn[] = {a->overall_tiu_max_ns, a->overall_gdma_max_ns,
		                      a->overall_sdma_max_ns};
		for (size_t e = 0; e < 3; e++) {
			jint(b, &f, mk[e][0], mc[e]);
			jus(b, &f, mk[e][1], mn[e]);
		}
	} else {
		jint(b, &f, "total_tiu_cycle", c->eng[TP_TRACK_TIU].working_cycle);
		jint(b, &f, "total_gdma_cycle", c->eng[TP_TRACK_GDMA].working_cycle);
		jint(b, &f, "total_sdma_cycle", c->eng[TP_TRACK_SDMA].working_cycle);
		jnum(b, &f, "perfdoc_parallelism_pct", c->perfdoc_parallelism * 100, 4);
		jnum(b, &f, "perfdoc_concurrency_pct", c->perfdoc_concurrency * 100, 4);
	}
	jnum(b, &f, "gdma_ddr_avg_bw_gbps", c->eng[TP_TRACK_GDMA].ddr_avg_gbps, 4);
	jnum(b, &f, "gdma_l2_avg_bw_gbps", c->eng[TP_TRACK_GDMA].l2_avg_gbps, 4);
	jnum(b, &f, "sdma_ddr_avg_bw_gbps", c->eng[TP_TRACK_SDMA].ddr_avg_gbps, 4);
	jnum(b, &f, "gdma_avg_ddr_burst_length", c->eng[TP_TRACK_GDMA].ddr_avg_burst, 4);
	jnum(b, &f, "sdma_avg_ddr_burst_length", c->eng[TP_TRACK_SDMA].ddr_avg_burst, 4);
	if (c->eng[TP_TRACK_TIU].present) {
		jkey(b, &f, "tiu_function_types");
		ftype_json(b, a->profile, c);
	}
	jkey(b, &f, "engines");
	tp_buf_putc(b, '{');
	int g = 1;
	for (int e = 0; e < TP_ENGINES; e++) {
		if (!c->eng[e].present)
			continue;
		jkey(b, &g, tp_track_kind_name((enum tp_track_kind)e));
		engine_json(b, &c->eng[e], (enum tp_track_kind)e);
	}
	tp_buf_puts(b, "}}");
}

static void rank_json(struct tp_buf *b, const struct tp_profile *p, const struct tp_rank *r,
                      size_t n, size_t max, int layers)
{
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < n && i < max; i++) {
		int f = 1;
		tp_buf_puts(b, i ? ",{" : "{");
		if (layers) {
			struct tp_layer lv;
			const struct tp_layer *l = tp_profile_layer(p, (size_t)r[i].index, &lv);
			jint(b, &f, "core", (uint64_t)l->core);
			jkey(b, &f, "layer_id");
			tp_buf_printf(b, "%d", l->id);
			jstr(b, &f, "type", tp_str(p, l->type));
			jstr(b, &f, "name", tp_str(p, l->name));
			jint(b, &f, "commands", r[i].count);
		} else {
			if (r[i].core >= 0)
				jint(b, &f, "core", (uint64_t)r[i].core);
			if (r[i].type)
				jstr(b, &f, "engine", tp_str(p, r[i].type));
			jstr(b, &f, "name", tp_str(p, r[i].name));
			jint(b, &f, "count", r[i].count);
			jus(b, &f, "min_us", r[i].min_ns);
			jus(b, &f, "max_us", r[i].max_ns);
		}
		jus(b, &f, "time_us", r[i].total_ns);
		jnum(b, &f, "share_pct", r[i].share * 100, 4);
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
}

static void hot_json(struct tp_buf *b, const struct tp_profile *p, const struct tp_cost_hot *h,
                     size_t n)
{
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		int f = 1;
		tp_buf_puts(b, i ? ",{" : "{");
		jint(b, &f, "core", (uint64_t)h[i].core);
		if (h[i].track >= 0) {
			const struct tp_slice *s = &p->tracks[h[i].track].slices[h[i].slice];
			jint(b, &f, "cmd_id", s->cmd_id);
			jstr(b, &f, "name", tp_str(p, tp_slice_name(&p->tracks[h[i].track], s)));
		}
		if (h[i].layer >= 0 && (size_t)h[i].layer < p->num_layers) {
			struct tp_layer lv;
			const struct tp_layer *l = tp_profile_layer(p, (size_t)h[i].layer, &lv);
			jkey(b, &f, "layer_id");
			tp_buf_printf(b, "%d", l->id);
			jstr(b, &f, "layer_name", tp_str(p, l->name));
		}
		jint(b, &f, "asic_cycle", h[i].asic_cycle);
		jint(b, &f, "alg_ops", h[i].alg_ops);
		jint(b, &f, "uarch_ops", h[i].uarch_ops);
		jint(b, &f, "init_cycle", h[i].init_cycle);
		jnum(b, &f, "uarch_rate_pct",
		     h[i].uarch_ops ? 100.0 * (double)h[i].alg_ops / (double)h[i].uarch_ops : 0, 4);
		jnum(b, &f, "ranked_cycles", h[i].lost_cycles, 1);
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
}

/* summary.json: the vendor tool's figures under its names ("vendor"), when the reader found
 * them; tpuprof's stay in "cores"/"overall". The two ratios are null where the vendor's
 * totalTime cannot be the core's span (tp_vendor_row.short_span). */
static void vendor_json(struct tp_buf *b, int *f, const struct tp_profile *p)
{
	if (!p->vendor.num_rows)
		return;
	jkey(b, f, "vendor");
	tp_buf_putc(b, '{');
	int h = 1;
	jstr(b, &h, "tool", tp_str(p, p->vendor.tool));
	jkey(b, &h, "cores");
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < p->vendor.num_rows; i++) {
		const struct tp_vendor_row *x = &p->vendor.rows[i];
		int k = 1;
		tp_buf_puts(b, i ? ",{" : "{");
		jint(b, &k, "device", (uint64_t)x->device);
		jint(b, &k, "core", (uint64_t)x->core);
		jint(b, &k, "total_time_ns", (uint64_t)x->total_time_ns);
		jus(b, &k, "total_time_us", x->total_time_ns);
		if (x->short_span) { /* a ratio over that totalTime means nothing (the notes) */
			jkey(b, &k, "parallelism_pct");
			tp_buf_puts(b, "null");
			jkey(b, &k, "tiu_working_ratio_pct");
			tp_buf_puts(b, "null");
		} else {
			jnum(b, &k, "parallelism_pct", x->parallelism * 100, 4);
			jnum(b, &k, "tiu_working_ratio_pct", x->tiu_working_ratio * 100, 4);
		}
		jint(b, &k, "total_tiu_cycle", x->tiu_cycle);
		jint(b, &k, "total_gdma_cycle", x->gdma_cycle);
		jint(b, &k, "total_sdma_cycle", x->sdma_cycle);
		jnum(b, &k, "gdma_ddr_avg_bw_gbps", x->gdma_ddr_gbps, 4);
		jnum(b, &k, "gdma_l2_avg_bw_gbps", x->gdma_l2_gbps, 4);
		jnum(b, &k, "sdma_ddr_avg_bw_gbps", x->sdma_ddr_gbps, 4);
		jkey(b, &k, "records");
		tp_buf_putc(b, '{');
		int m = 1;
		for (int e = 0; e <= TP_TRACK_CDMA; e++)
			jint(b, &m, tp_track_kind_name((enum tp_track_kind)e), x->records[e]);
		tp_buf_puts(b, "}}");
	}
	tp_buf_puts(b, "]}");
}

/* summary.json: record counts per track kind and the reader's statistics. */
static void counts_json(struct tp_buf *b, int *f, const struct tp_profile *p,
                        const struct tp_analysis *a)
{
	jkey(b, f, "record_counts");
	tp_buf_putc(b, '{');
	int g = 1;
	for (int k = 0; k < TP_TRACK_KIND_COUNT; k++)
		if (a->engine_records[k])
			jint(b, &g, tp_track_kind_name((enum tp_track_kind)k),
			     a->engine_records[k]);
	tp_buf_putc(b, '}');
	jkey(b, f, "read_stats");
	g = 1;
	tp_buf_putc(b, '{');
	const struct tp_read_stats *st = &p->stats;
	static const char *const sk[] = {"files_read",   "blocks_read",     "blocks_skipped",
	                                 "records_read", "records_dropped", "bytes_missing"};
	const uint64_t sv[] = {st->files_read,   st->blocks_read,     st->blocks_skipped,
	                       st->records_read, st->records_dropped, st->bytes_missing};
	jints(b, &g, sk, sv, sizeof sk / sizeof *sk);
	tp_buf_putc(b, '}');
}

/* summary.json: the profile's metadata and notes. */
static void meta_json(struct tp_buf *b, int *f, const struct tp_profile *p)
{
	int g = 1;
	jkey(b, f, "metadata");
	tp_buf_putc(b, '{');
	for (size_t i = 0; i < p->num_meta; i++)
		jstr(b, &g, tp_str(p, p->meta[i].key), tp_str(p, p->meta[i].value));
	tp_buf_putc(b, '}');
	jkey(b, f, "notes");
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < p->num_notes; i++) {
		if (i)
			tp_buf_putc(b, ',');
		jquote(b, tp_str(p, p->notes[i].text));
	}
	tp_buf_puts(b, "]}\n");
}

void tp_summary_json(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *b)
{
	int f = 1;
	tp_buf_putc(b, '{');
	jstr(b, &f, "tool", "tpuprof");
	jstr(b, &f, "version", TP_VERSION);
	jstr(b, &f, "source", tp_str(p, p->source));
	jstr(b, &f, "arch", tp_arch_name(p->arch));
	jstr(b, &f, "net_name", tp_str(p, p->net_name));
	jnum(b, &f, "tiu_freq_mhz", p->tiu_freq_mhz, 3);
	jnum(b, &f, "gdma_freq_mhz", p->gdma_freq_mhz, 3);
	jint(b, &f, "total_time_ns", (uint64_t)a->total_time_ns);
	jus(b, &f, "total_time_us", a->total_time_ns);
	jkey(b, &f, "cores");
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < a->num_cores; i++) {
		if (i)
			tp_buf_putc(b, ',');
		core_json(b, a, &a->cores[i], 0);
	}
	tp_buf_putc(b, ']');
	if (a->num_cores) {
		jkey(b, &f, "overall");
		core_json(b, a, &a->overall, 1);
	}
	vendor_json(b, &f, p);
	counts_json(b, &f, p, a);
	jkey(b, &f, "top_layers");
	rank_json(b, p, a->top_layers, a->num_top_layers, 20, 1);
	jkey(b, &f, "top_commands");
	rank_json(b, p, a->top_cmds, a->num_top_cmds, 20, 0);
	jkey(b, &f, "low_uarch_rate_commands");
	hot_json(b, p, a->low_uarch, a->num_low_uarch);
	jkey(b, &f, "low_uarch_rate_layers");
	hot_json(b, p, a->low_uarch_layers, a->num_low_uarch_layers);
	jkey(b, &f, "high_initial_cycle_ratio_commands");
	hot_json(b, p, a->high_init, a->num_high_init);
	if (a->num_op_types) {
		jkey(b, &f, "op_types");
		rank_json(b, p, a->op_types, a->num_op_types, 100, 0);
	}
	if (a->accel) {
		tp_buf_putc(b, ',');
		tp_capreport_accel_json(p, a->accel, b);
	}
	if (a->ltab) {
		jkey(b, &f, "layer_table");
		tp_summary_ltab_json(p, a->ltab, b);
	}
	meta_json(b, &f, p);
}
