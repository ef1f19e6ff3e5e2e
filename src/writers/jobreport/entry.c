/*
 * entry.c — one dump's job entry: built from its converted profile and analysis (totals, per
 * core and engine figures, the utilisation strips and the coalesced busy runs), and written as
 * job_entry.json. Owns the job container (struct tp_job: its arena and entry array).
 */
#include "writers/jobreport/jobreport.h"
#include "writers/jobreport/jobreport_int.h"

#include "model/merge.h"

#include <stdlib.h>

void tp_job_init(struct tp_job *j, const char *title)
{
	memset(j, 0, sizeof *j);
	tp_arena_init(&j->arena, 0);
	j->title = tp_job_str(j, title);
}

void tp_job_free(struct tp_job *j)
{
	tp_free(j->e);
	tp_free(j->notes);
	tp_arena_free(&j->arena);
	memset(j, 0, sizeof *j);
}

const char *tp_job_str(struct tp_job *j, const char *s)
{
	return tp_arena_strdup(&j->arena, s ? s : "");
}

struct tp_job_entry *tp_job_add(struct tp_job *j)
{
	struct tp_job_entry *e = tp_grow(j->e, sizeof *j->e, j->n + 1, &j->cap);
	if (!e)
		return NULL;
	j->e = e;
	e = &j->e[j->n++];
	memset(e, 0, sizeof *e);
	e->name = e->out = e->kind = e->device = e->error = e->source = e->arch = e->net = "";
	return e;
}

int tp_job_note(struct tp_job *j, const char *text)
{
	const char **n = tp_grow(j->notes, sizeof *j->notes, j->nnotes + 1, &j->cap_notes);
	const char *c = tp_job_str(j, text);
	if (!n || !c) {
		if (n)
			j->notes = n;
		return TP_ENOMEM;
	}
	j->notes = n;
	j->notes[j->nnotes++] = c;
	return TP_OK;
}

const char *tp_job_anchor_name(int anchor)
{
	return anchor == TP_JOB_ANCHOR_HOST_WALL ? "host_wall_clock"
	       : anchor == TP_JOB_ANCHOR_TRACE   ? "trace_clock"
	                                         : "none";
}

/* ---- The digest of one engine track ------------------------------------------------------- */

/* Adds [s, e) to the strip's bins over [0, len): each bin gets its overlap, in ns. */
static void strip_add(int64_t *acc, int64_t len, int64_t s, int64_t e)
{
	if (len <= 0 || e <= s)
		return;
	if (s < 0)
		s = 0;
	if (e > len)
		e = len;
	for (int64_t k = s * TP_JOB_BINS / len; k < TP_JOB_BINS && s < e; k++) {
		int64_t bin_end = (k + 1) * len / TP_JOB_BINS;
		int64_t upto = e < bin_end ? e : bin_end;
		if (upto > s)
			acc[k] += upto - s;
		s = upto;
	}
}

/* Busy runs of track t's non-sys slices merged across gaps up to `gap` ns; counts them and,
 * when out is not NULL, stores them (origin subtracted). */
static size_t runs_with_gap(const struct tp_track *t, int64_t origin, int64_t gap,
                            struct tp_job_run *out)
{
	size_t n = 0;
	int64_t rs = 0, re = 0;
	uint32_t cmds = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (tp_slice_kind(t, s) != TP_CMD_NORMAL)
			continue;
		int64_t e = tp_slice_end(t, s);
		if (cmds && s->start_ns - re <= gap) {
			if (e > re)
				re = e;
			cmds++;
			continue;
		}
		if (cmds && out)
			out[n - 1] = (struct tp_job_run){rs - origin, re - rs, cmds};
		n++;
		rs = s->start_ns;
		re = e;
		cmds = 1;
	}
	if (cmds && out)
		out[n - 1] = (struct tp_job_run){rs - origin, re - rs, cmds};
	return n;
}

/* Fills the strip and the runs of engine x from track t over the call's [origin, origin +
 * len). The runs gap doubles from len / 2000 until at most TP_JOB_MAX_RUNS remain. */
static int digest_track(struct tp_job *j, struct tp_job_engine *x, const struct tp_track *t,
                        int64_t origin, int64_t len)
{
	int64_t acc[TP_JOB_BINS] = {0};
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (tp_slice_kind(t, s) == TP_CMD_NORMAL)
			strip_add(acc, len, s->start_ns - origin, tp_slice_end(t, s) - origin);
	}
	for (int k = 0; k < TP_JOB_BINS; k++) {
		int64_t w = (k + 1) * len / TP_JOB_BINS - k * len / TP_JOB_BINS;
		int64_t pm = w > 0 ? acc[k] * 1000 / w : 0;
		x->strip[k] = (uint16_t)(pm > 1000 ? 1000 : pm);
	}
	int64_t gap = len / 2000;
	size_t n;
	while ((n = runs_with_gap(t, origin, gap, NULL)) > TP_JOB_MAX_RUNS)
		gap = gap ? gap * 2 : 1;
	if (!n)
		return TP_OK;
	x->runs = tp_arena_alloc(&j->arena, n * sizeof *x->runs);
	if (!x->runs)
		return TP_ENOMEM;
	x->nruns = runs_with_gap(t, origin, gap, x->runs);
	return TP_OK;
}

/* ---- The entry ------------------------------------------------------------------------------ */

static void entry_anchor(struct tp_job_entry *e, const struct tp_profile *p)
{
	const char *base = tp_profile_get_meta(p, TP_META_TRACE_BASE_NS);
	int64_t v;
	if (base && tp_parse_i64(base, strlen(base), &v) == 0) {
		e->anchor = TP_JOB_ANCHOR_TRACE;
		e->anchor_ns = v + p->span_begin_ns;
		return;
	}
	/* bmprofile: the subnets' host start times (wall clock, microseconds) are the one link
	 * from the device timeline to a clock other calls share; the first subnet starts the
	 * run. */
	uint64_t first = 0;
	for (size_t i = 0; i < p->num_subnets; i++)
		if (p->subnets[i].begin_usec && (!first || p->subnets[i].begin_usec < first))
			first = p->subnets[i].begin_usec;
	if (first && first < (uint64_t)INT64_MAX / 1000) {
		e->anchor = TP_JOB_ANCHOR_HOST_WALL;
		e->anchor_ns = (int64_t)first * 1000;
	}
}

/* Per-core busy time for the imbalance: TIU where the chip has it, else the busiest engine. */
static int64_t core_load(const struct tp_core_stats *c, int use_tiu)
{
	if (use_tiu)
		return c->eng[TP_TRACK_TIU].busy_ns;
	int64_t m = 0;
	for (int k = 0; k < TP_ENGINES; k++)
		if (c->eng[k].busy_ns > m)
			m = c->eng[k].busy_ns;
	return m;
}

static void entry_imbalance(struct tp_job_entry *e, const struct tp_analysis *a)
{
	int use_tiu = 0;
	for (size_t i = 0; i < a->num_cores; i++)
		use_tiu |= a->cores[i].eng[TP_TRACK_TIU].busy_ns > 0;
	int64_t max = 0, sum = 0;
	for (size_t i = 0; i < a->num_cores; i++) {
		int64_t l = core_load(&a->cores[i], use_tiu);
		sum += l;
		if (l > max)
			max = l;
	}
	if (a->num_cores && sum > 0)
		e->imbalance = (double)max * (double)a->num_cores / (double)sum;
}

static int entry_core(struct tp_job *j, struct tp_job_core *c, const struct tp_profile *p,
                      const struct tp_core_stats *cs, int64_t origin, int64_t len)
{
	c->device = cs->device;
	c->core = cs->core;
	for (int k = 0; k < TP_ENGINES; k++) {
		const struct tp_engine_stats *s = &cs->eng[k];
		struct tp_job_engine *x = &c->eng[k];
		if (!s->present)
			continue;
		x->present = 1;
		x->records = s->records;
		x->busy_ns = s->busy_ns;
		x->util = s->utilization;
		x->ddr_gbps = tp_track_kind_is_dma((enum tp_track_kind)k) ? s->ddr_avg_gbps : 0;
		x->has_uarch = k == TP_TRACK_TIU && tp_uarch_rate(s, &x->uarch_rate);
		int t = tp_profile_find_track(p, cs->device, cs->core, (enum tp_track_kind)k);
		if (t >= 0 && digest_track(j, x, &p->tracks[t], origin, len) != TP_OK)
			return TP_ENOMEM;
	}
	return TP_OK;
}

void tp_jr_entry_means(struct tp_job_entry *e)
{
	for (int k = 0; k < TP_ENGINES; k++) {
		double sum = 0;
		size_t n = 0;
		for (size_t i = 0; i < e->ncores; i++)
			if (e->cores[i].eng[k].present) {
				sum += e->cores[i].eng[k].util;
				n++;
			}
		e->eng_util[k] = n ? sum / (double)n : 0;
	}
}

int tp_job_entry_build(struct tp_job *j, struct tp_job_entry *e, const struct tp_profile *p,
                       const struct tp_analysis *a)
{
	e->ok = 1;
	e->exit_code = 0;
	e->source = tp_job_str(j, tp_str(p, p->source));
	e->arch = tp_job_str(j, p->chip ? p->chip->name : tp_arch_name(p->arch));
	e->net = tp_job_str(j, tp_str(p, p->net_name));
	if (!e->source || !e->arch || !e->net)
		return TP_ENOMEM;
	e->num_cores = (int32_t)a->num_cores;
	int64_t origin = p->span_begin_ns;
	int64_t len = p->span_end_ns > p->span_begin_ns ? p->span_end_ns - p->span_begin_ns : 0;
	e->total_ns = a->total_time_ns > 0 ? a->total_time_ns : len;
	for (size_t t = 0; t < p->num_tracks; t++)
		e->records += p->tracks[t].count;
	e->parallelism = a->overall.parallelism;
	e->concurrency = a->overall.concurrency;
	e->ddr_gbps = a->overall.eng[TP_TRACK_GDMA].ddr_avg_gbps;
	e->has_uarch = tp_uarch_rate(&a->overall.eng[TP_TRACK_TIU], &e->uarch_rate);
	entry_anchor(e, p);
	entry_imbalance(e, a);
	if (a->num_cores) {
		e->cores = tp_arena_alloc(&j->arena, a->num_cores * sizeof *e->cores);
		if (!e->cores)
			return TP_ENOMEM;
		memset(e->cores, 0, a->num_cores * sizeof *e->cores);
		e->ncores = a->num_cores;
	}
	for (size_t i = 0; i < a->num_cores; i++)
		if (entry_core(j, &e->cores[i], p, &a->cores[i], origin, len) != TP_OK)
			return TP_ENOMEM;
	tp_jr_entry_means(e);
	return TP_OK;
}

/* ---- job_entry.json ----------------------------------------------------------------------- */

static void jkey(struct tp_buf *b, int *first, const char *k)
{
	if (!*first)
		tp_buf_putc(b, ',');
	*first = 0;
	tp_buf_putc(b, '"');
	tp_buf_puts(b, k);
	tp_buf_puts(b, "\":");
}

void tp_jr_json_str(struct tp_buf *b, int *first, const char *k, const char *v)
{
	jkey(b, first, k);
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, v ? v : "");
	tp_buf_putc(b, '"');
}

void tp_jr_json_strs(struct tp_buf *b, const char *k, const char *const *v, size_t n)
{
	tp_buf_printf(b, ",\"%s\":[", k);
	for (size_t i = 0; i < n; i++) {
		tp_buf_puts(b, i ? ",\"" : "\"");
		tp_buf_json_str(b, v[i]);
		tp_buf_putc(b, '"');
	}
	tp_buf_putc(b, ']');
}

void tp_jr_json_int(struct tp_buf *b, int *first, const char *k, int64_t v)
{
	jkey(b, first, k);
	tp_buf_i64(b, v);
}

void tp_jr_json_num(struct tp_buf *b, int *first, const char *k, double v)
{
	jkey(b, first, k);
	tp_buf_fixed(b, v == v ? v : 0, 6);
}

static void engine_json(struct tp_buf *b, const struct tp_job_engine *x)
{
	int f = 1;
	tp_buf_putc(b, '{');
	tp_jr_json_int(b, &f, "present", x->present);
	if (x->present) {
		tp_jr_json_int(b, &f, "records", (int64_t)x->records);
		tp_jr_json_int(b, &f, "busy_ns", x->busy_ns);
		tp_jr_json_num(b, &f, "util", x->util);
		tp_jr_json_num(b, &f, "ddr_gbps", x->ddr_gbps);
		tp_jr_json_int(b, &f, "has_uarch", x->has_uarch);
		tp_jr_json_num(b, &f, "uarch_rate", x->uarch_rate);
		jkey(b, &f, "strip");
		for (int k = 0; k < TP_JOB_BINS; k++) {
			tp_buf_putc(b, k ? ',' : '[');
			tp_buf_u64(b, x->strip[k]);
		}
		tp_buf_putc(b, ']');
		/* Runs flattened: start, duration, commands. */
		jkey(b, &f, "runs");
		tp_buf_putc(b, '[');
		for (size_t r = 0; r < x->nruns; r++) {
			if (r)
				tp_buf_putc(b, ',');
			tp_buf_i64(b, x->runs[r].start_ns);
			tp_buf_putc(b, ',');
			tp_buf_i64(b, x->runs[r].dur_ns);
			tp_buf_putc(b, ',');
			tp_buf_u64(b, x->runs[r].commands);
		}
		tp_buf_putc(b, ']');
	}
	tp_buf_putc(b, '}');
}

void tp_jr_entry_fields(const struct tp_job_entry *e, struct tp_buf *b, int *f)
{
	tp_jr_json_str(b, f, "name", e->name);
	tp_jr_json_str(b, f, "out", e->out);
	tp_jr_json_str(b, f, "kind", e->kind);
	tp_jr_json_str(b, f, "device", e->device);
	tp_jr_json_int(b, f, "call", e->call);
	tp_jr_json_int(b, f, "pid", e->pid);
	tp_jr_json_int(b, f, "ok", e->ok);
	tp_jr_json_int(b, f, "exit_code", e->exit_code);
	tp_jr_json_str(b, f, "error", e->error);
	tp_jr_json_str(b, f, "source", e->source);
	tp_jr_json_str(b, f, "arch", e->arch);
	tp_jr_json_str(b, f, "net", e->net);
	tp_jr_json_int(b, f, "num_cores", e->num_cores);
	tp_jr_json_int(b, f, "total_ns", e->total_ns);
	tp_jr_json_int(b, f, "records", (int64_t)e->records);
	tp_jr_json_num(b, f, "parallelism", e->parallelism);
	tp_jr_json_num(b, f, "concurrency", e->concurrency);
	tp_jr_json_num(b, f, "ddr_gbps", e->ddr_gbps);
	tp_jr_json_int(b, f, "has_uarch", e->has_uarch);
	tp_jr_json_num(b, f, "uarch_rate", e->uarch_rate);
	tp_jr_json_num(b, f, "imbalance", e->imbalance);
	tp_jr_json_str(b, f, "anchor", tp_job_anchor_name(e->anchor));
	tp_jr_json_int(b, f, "anchor_ns", e->anchor_ns);
}

void tp_job_entry_json(const struct tp_job_entry *e, struct tp_buf *b)
{
	int f = 1;
	tp_buf_putc(b, '{');
	tp_jr_json_int(b, &f, "tpuprof_job_entry", 1);
	tp_jr_entry_fields(e, b, &f);
	jkey(b, &f, "cores");
	tp_buf_putc(b, '[');
	for (size_t i = 0; i < e->ncores; i++) {
		int g = 1;
		tp_buf_puts(b, i ? ",{" : "{");
		tp_jr_json_int(b, &g, "device", e->cores[i].device);
		tp_jr_json_int(b, &g, "core", e->cores[i].core);
		jkey(b, &g, "engines");
		for (int k = 0; k < TP_ENGINES; k++) {
			tp_buf_putc(b, k ? ',' : '[');
			engine_json(b, &e->cores[i].eng[k]);
		}
		tp_buf_puts(b, "]}");
	}
	tp_buf_puts(b, "]}\n");
}
