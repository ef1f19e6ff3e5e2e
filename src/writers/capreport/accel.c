/*
 * accel.c — the accelerator analysis (src/analysis/accel.h) as the summaries show it: a
 * section of summary.txt, the "accelerator" member of summary.json and a section of
 * summary.md (layout in docs/summary.md and docs/accelerator-analysis.md). The three renderers
 * share the row formatting below; every name from the input is escaped for its destination
 * (JSON strings, Markdown cells; summary.txt is cleaned of control bytes by its writer).
 * Owns nothing.
 */
#include "writers/capreport/capreport.h"

#include "analysis/accel.h"

#include <string.h>

/* Appends ns as microseconds ("123.456"). */
static void us(struct tp_buf *b, int64_t ns)
{
	tp_buf_ns_as_us(b, ns);
}

/* Appends share × 100 with 2 decimals. */
static void pct(struct tp_buf *b, double share)
{
	tp_buf_fixed(b, share * 100.0, 2);
}

static double ratio(int64_t num, int64_t den)
{
	return den > 0 ? (double)num / (double)den : 0;
}

static const char *work_name(uint8_t w)
{
	return w == TP_WORK_STEP ? "step" : tp_work_type((enum tp_work)w);
}

/* A host row's name: its operator, or for the steps' row what it stands for. */
static const char *host_name(const struct tp_profile *p, const struct tp_accel_row *r)
{
	return r->kind == TP_WORK_STEP ? "(steps, outside any operator)" : tp_str(p, r->name);
}

/* ---- summary.txt ------------------------------------------------------------------------------
 */

/* ns as microseconds with 3 decimals into t (n bytes), as tp_buf_ns_as_us writes them. */
static const char *us_text(char *t, size_t n, int64_t ns)
{
	uint64_t m = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(t, n, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(m / 1000),
	         (unsigned long long)(m % 1000));
	return t;
}

/* A column of width w, right-aligned, then " | ": a time (is_ns) or the text. */
static void cell(struct tp_buf *b, int w, const char *text, int64_t ns, int is_ns)
{
	char t[32];
	tp_buf_printf(b, "%*s | ", w, is_ns ? us_text(t, sizeof t, ns) : text);
}

static void text_head(const struct tp_accel *a, struct tp_buf *b)
{
	tp_buf_printf(b,
	              "\nAccelerator (%zu device lane%s, %zu host thread%s; "
	              "docs/accelerator-analysis.md)\n",
	              a->lanes, a->lanes == 1 ? "" : "s", a->host_threads,
	              a->host_threads == 1 ? "" : "s");
	tp_buf_printf(b, "Bottleneck: %s\n", a->verdict);
	int64_t span = a->end_ns - a->begin_ns;
	tp_buf_puts(b, "Device span(us): ");
	us(b, span);
	tp_buf_puts(b, "   busy(us): ");
	us(b, a->total.busy_ns);
	tp_buf_puts(b, " (");
	pct(b, ratio(a->total.busy_ns, span));
	tp_buf_puts(b, " %)   device time(us): ");
	us(b, a->total.device_ns);
	tp_buf_puts(b, "\nDevice time by kind(us):");
	for (int k = 0; k < TP_ACC_KINDS; k++) {
		tp_buf_printf(b, " %s ", tp_accel_kind_name((enum tp_accel_kind)k));
		us(b, a->total.ns[k]);
		tp_buf_printf(b, " (%llu, ", (unsigned long long)a->total.count[k]);
		pct(b, ratio(a->total.ns[k], span));
		tp_buf_puts(b, k + 1 < TP_ACC_KINDS ? " % of the span);" : " % of the span)\n");
	}
	if (a->total.count[TP_ACC_COMM]) {
		tp_buf_puts(b, "Communication overlapped by compute(us): ");
		us(b, a->total.comm_overlap_ns);
		tp_buf_puts(b, "   exposed: ");
		pct(b, a->comm_exposed);
		tp_buf_puts(b, " % of busy time\n");
	}
	tp_buf_printf(b,
	              "Launches: %llu runtime calls launched %llu of %llu pieces of work; "
	              "launch time(us) ",
	              (unsigned long long)a->launches, (unsigned long long)a->linked,
	              (unsigned long long)(a->total.count[0] + a->total.count[1] +
	                                   a->total.count[2] + a->total.count[3]));
	const char *label[4] = {"", "; launch-to-start(us) median ", " p90 ", " max "};
	int64_t v[4] = {a->launch_ns, a->delay_median_ns, a->delay_p90_ns, a->delay_max_ns};
	char t[32];
	for (int i = 0; i < 4; i++)
		tp_buf_printf(b, "%s%s", label[i], us_text(t, sizeof t, v[i]));
	tp_buf_printf(b, "; queue depth max %u mean ", a->queue_max);
	tp_buf_fixed(b, a->queue_mean, 2);
	tp_buf_putc(b, '\n');
}

static void text_steps(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b)
{
	if (!a->nsteps) {
		tp_buf_puts(b, "Steps: none (no host step annotation): the figures above are over "
		               "the whole device span\n");
		return;
	}
	tp_buf_puts(b,
	            "\nSteps (host steps; device work of a step = the work launched inside it)\n");
	tp_buf_printf(b,
	              "%-16s | %12s | %12s | %12s | %12s | %6s | %12s | %12s | %8s | %12s | "
	              "%10s | %5s\n",
	              "Step", "Host(us)", "Device(us)", "Busy(us)", "Idle(us)", "Idle%",
	              "Compute(us)", "Copy+Fill(us)", "Launches", "Launch(us)", "Delay(us)",
	              "Queue");
	for (size_t i = 0; i < a->nsteps; i++) {
		const struct tp_accel_step *s = &a->steps[i];
		tp_buf_printf(b, "%-16.16s | ", tp_str(p, s->name));
		cell(b, 12, NULL, s->dur_ns, 1);
		cell(b, 12, NULL, s->w.device_ns, 1);
		cell(b, 12, NULL, s->w.busy_ns, 1);
		cell(b, 12, NULL, s->idle_ns, 1);
		char t[32];
		double idle = ratio(s->idle_ns, s->dur_ns) * 100.0;
		long long hund = (long long)(idle * 100.0 + 0.5);
		snprintf(t, sizeof t, "%lld.%02lld", hund / 100, hund % 100);
		cell(b, 6, t, 0, 0);
		cell(b, 12, NULL, s->w.ns[TP_ACC_COMPUTE], 1);
		cell(b, 12, NULL, s->w.ns[TP_ACC_MEMCPY] + s->w.ns[TP_ACC_MEMSET], 1);
		tp_buf_printf(b, "%8llu | ", (unsigned long long)s->launches);
		cell(b, 12, NULL, s->launch_ns, 1);
		cell(b, 10, NULL, s->delay_median_ns, 1);
		tp_buf_printf(b, "%5u\n", s->queue_max);
	}
	char t[4][32];
	tp_buf_printf(b, "Median of %zu steps: host(us) %s +/- %s, device(us) %s +/- %s, idle ",
	              a->nsteps, us_text(t[0], 32, a->step_median_ns),
	              us_text(t[1], 32, a->step_spread_ns), us_text(t[2], 32, a->device_median_ns),
	              us_text(t[3], 32, a->device_spread_ns));
	pct(b, a->idle_share);
	tp_buf_puts(b, " %\n");
}

static void text_ranks(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b)
{
	tp_buf_puts(b, "\nDevices\n");
	tp_buf_printf(b, "%-24s | %5s | %12s | %12s | %12s | %12s | %14s\n", "Device", "Rank",
	              "Device(us)", "Busy(us)", "Compute(us)", "Comm(us)", "PerStep(us)");
	for (size_t i = 0; i < a->nranks; i++) {
		const struct tp_accel_rank *r = &a->ranks[i];
		char rk[24];
		snprintf(rk, sizeof rk, r->rank >= 0 ? "%lld" : "-", (long long)r->rank);
		tp_buf_printf(b, "%-24.24s | %5s | ", tp_str(p, p->devices[r->device].name), rk);
		cell(b, 12, NULL, r->w.device_ns, 1);
		cell(b, 12, NULL, r->w.busy_ns, 1);
		cell(b, 12, NULL, r->w.ns[TP_ACC_COMPUTE], 1);
		cell(b, 12, NULL, r->w.ns[TP_ACC_COMM], 1);
		us(b, r->step_device_ns);
		tp_buf_putc(b, '\n');
	}
	if (a->nranks > 1) {
		tp_buf_puts(b, "Imbalance (busiest device over the mean, device time");
		tp_buf_puts(b, a->nsteps ? " per step): " : "): ");
		pct(b, a->imbalance);
		tp_buf_puts(b, " %\n");
	}
}

static void text_rows(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b)
{
	tp_buf_printf(b, "\nDevice work by name (%zu of %zu; share of device time)\n", a->nkernels,
	              a->kernel_rows);
	tp_buf_printf(b, "%-7s | %8s | %12s | %7s | %s\n", "Kind", "Count", "Time(us)", "Share",
	              "Name");
	for (size_t i = 0; i < a->nkernels; i++) {
		const struct tp_accel_row *r = &a->kernels[i];
		tp_buf_printf(b, "%-7s | %8llu | ", tp_accel_kind_name((enum tp_accel_kind)r->kind),
		              (unsigned long long)r->count);
		cell(b, 12, NULL, r->total_ns, 1);
		pct(b, r->share);
		tp_buf_printf(b, "%% | %s\n", tp_str(p, r->name));
	}
	tp_buf_printf(b, "\nHost time by operator (self time, %zu of %zu; shares of ", a->nhost,
	              a->host_rows);
	us(b, a->host_self_ns);
	tp_buf_puts(b, " us add up to 100 %)\n");
	tp_buf_printf(b, "%-10s | %8s | %12s | %7s | %12s | %s\n", "Class", "Count", "Self(us)",
	              "Share", "Total(us)", "Name");
	for (size_t i = 0; i < a->nhost; i++) {
		const struct tp_accel_row *r = &a->host[i];
		tp_buf_printf(b, "%-10s | %8llu | ", work_name(r->kind),
		              (unsigned long long)r->count);
		cell(b, 12, NULL, r->total_ns, 1);
		pct(b, r->share);
		tp_buf_puts(b, "% | ");
		cell(b, 12, NULL, r->incl_ns, 1);
		tp_buf_printf(b, "%s\n", host_name(p, r));
	}
}

void tp_capreport_accel_text(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b)
{
	if (!a)
		return;
	text_head(a, b);
	text_steps(p, a, b);
	text_ranks(p, a, b);
	text_rows(p, a, b);
}

/* ---- summary.json -----------------------------------------------------------------------------
 */

/* "k": — k may start with the newline and indentation to put before it. */
static void jkey(struct tp_buf *b, const char *k)
{
	size_t ws = strspn(k, "\n ");
	tp_buf_printf(b, "%.*s\"%s\": ", (int)ws, k, k + ws);
}

static void jus(struct tp_buf *b, const char *k, int64_t ns, const char *after)
{
	jkey(b, k);
	us(b, ns);
	tp_buf_puts(b, after);
}

static void jpct(struct tp_buf *b, const char *k, double share, const char *after)
{
	jkey(b, k);
	pct(b, share);
	tp_buf_puts(b, after);
}

static void jstr(struct tp_buf *b, const char *k, const char *v, const char *after)
{
	jkey(b, k);
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, v);
	tp_buf_putc(b, '"');
	tp_buf_puts(b, after);
}

/* {"count": {...}, "us": {...}, "device_us": .., "busy_us": .., "comm_overlap_us": ..} */
static void jwork(struct tp_buf *b, const struct tp_accel_work *w)
{
	tp_buf_puts(b, "{\"count\": {");
	for (int k = 0; k < TP_ACC_KINDS; k++)
		tp_buf_printf(b, "%s\"%s\": %llu", k ? ", " : "",
		              tp_accel_kind_name((enum tp_accel_kind)k),
		              (unsigned long long)w->count[k]);
	tp_buf_puts(b, "}, \"time_us\": {");
	for (int k = 0; k < TP_ACC_KINDS; k++) {
		tp_buf_printf(b, "%s\"%s\": ", k ? ", " : "",
		              tp_accel_kind_name((enum tp_accel_kind)k));
		us(b, w->ns[k]);
	}
	tp_buf_puts(b, "}, ");
	jus(b, "device_us", w->device_ns, ", ");
	jus(b, "busy_us", w->busy_ns, ", ");
	jus(b, "comm_overlap_us", w->comm_overlap_ns, "}");
}

/* The launch figures of a step or of the whole trace: launch time, launch-to-start median and
 * maximum, queue depth maximum and mean; `ind` goes before each key. */
static void jlaunch(struct tp_buf *b, const char *ind, const char *sep, int64_t launch_ns,
                    int64_t median_ns, int64_t max_ns, uint32_t qmax, double qmean)
{
	const char *keys[3] = {"launch_us", "launch_to_start_median_us", "launch_to_start_max_us"};
	int64_t v[3] = {launch_ns, median_ns, max_ns};
	for (int i = 0; i < 3; i++) {
		tp_buf_printf(b, "%s\"%s\": ", ind, keys[i]);
		us(b, v[i]);
		tp_buf_puts(b, sep);
	}
	tp_buf_printf(b, "%s\"queue_max\": %u%s%s\"queue_mean\": ", ind, qmax, sep, ind);
	tp_buf_fixed(b, qmean, 3);
}

static void json_steps(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b)
{
	tp_buf_puts(b, "    \"steps\": [");
	for (size_t i = 0; i < a->nsteps; i++) {
		const struct tp_accel_step *s = &a->steps[i];
		tp_buf_puts(b, i ? ",\n      {" : "\n      {");
		jstr(b, "name", tp_str(p, s->name), ", ");
		jus(b, "start_us", s->start_ns, ", ");
		jus(b, "host_us", s->dur_ns, ", ");
		jus(b, "device_us", s->w.device_ns, ", ");
		jus(b, "busy_us", s->w.busy_ns, ", ");
		jus(b, "idle_us", s->idle_ns, ", ");
		jpct(b, "idle_pct", ratio(s->idle_ns, s->dur_ns), ", ");
		tp_buf_printf(b, "\"launches\": %llu, ", (unsigned long long)s->launches);
		jlaunch(b, "", ", ", s->launch_ns, s->delay_median_ns, s->delay_max_ns,
		        s->queue_max, s->queue_mean);
		tp_buf_puts(b, ", \"work\": ");
		jwork(b, &s->w);
		tp_buf_putc(b, '}');
	}
	tp_buf_puts(b, a->nsteps ? "\n    ],\n" : "],\n");
}

static void json_ranks(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b)
{
	tp_buf_puts(b, "    \"devices\": [");
	for (size_t i = 0; i < a->nranks; i++) {
		const struct tp_accel_rank *r = &a->ranks[i];
		tp_buf_puts(b, i ? ",\n      {" : "\n      {");
		jstr(b, "name", tp_str(p, p->devices[r->device].name), ", ");
		tp_buf_printf(b, "\"pid\": %d, ", p->devices[r->device].id);
		if (r->rank >= 0)
			tp_buf_printf(b, "\"rank\": %lld, ", (long long)r->rank);
		else
			tp_buf_puts(b, "\"rank\": null, ");
		jus(b, "step_device_us", r->step_device_ns, ", \"work\": ");
		jwork(b, &r->w);
		tp_buf_putc(b, '}');
	}
	tp_buf_puts(b, a->nranks ? "\n    ],\n" : "],\n");
	jpct(b, "    imbalance_pct", a->imbalance, ",\n");
}

static void json_rows(const struct tp_profile *p, const struct tp_accel_row *v, size_t n, int host,
                      struct tp_buf *b)
{
	for (size_t i = 0; i < n; i++) {
		const struct tp_accel_row *r = &v[i];
		tp_buf_puts(b, i ? ",\n      {" : "\n      {");
		jstr(b, "name", host ? host_name(p, r) : tp_str(p, r->name), ", ");
		jstr(b, host ? "class" : "kind",
		     host ? work_name(r->kind) : tp_accel_kind_name((enum tp_accel_kind)r->kind),
		     ", ");
		tp_buf_printf(b, "\"count\": %llu, ", (unsigned long long)r->count);
		jus(b, host ? "self_us" : "time_us", r->total_ns, ", ");
		if (host)
			jus(b, "total_us", r->incl_ns, ", ");
		jpct(b, "share_pct", r->share, "}");
	}
	tp_buf_puts(b, n ? "\n    ]" : "]");
}

static void json_totals(const struct tp_accel *a, struct tp_buf *b)
{
	tp_buf_printf(b, "    \"device_lanes\": %zu,\n    \"host_threads\": %zu,\n", a->lanes,
	              a->host_threads);
	jstr(b, "    bottleneck", tp_accel_bound_name(a->bound), ",\n");
	jstr(b, "    verdict", a->verdict, ",\n");
	int64_t span = a->end_ns - a->begin_ns;
	jus(b, "    device_begin_us", a->begin_ns, ",\n");
	jus(b, "    device_span_us", span, ",\n");
	jpct(b, "    busy_pct_of_span", ratio(a->total.busy_ns, span), ",\n");
	jpct(b, "    compute_pct_of_span", ratio(a->total.ns[TP_ACC_COMPUTE], span), ",\n");
	jpct(b, "    comm_exposed_pct", a->comm_exposed, ",\n");
	tp_buf_puts(b, "    \"work\": ");
	jwork(b, &a->total);
	tp_buf_printf(b, ",\n    \"launches\": %llu,\n    \"linked\": %llu,\n",
	              (unsigned long long)a->launches, (unsigned long long)a->linked);
	jus(b, "    launch_to_start_p90_us", a->delay_p90_ns, ",\n");
	jlaunch(b, "    ", ",\n", a->launch_ns, a->delay_median_ns, a->delay_max_ns, a->queue_max,
	        a->queue_mean);
	tp_buf_puts(b, ",\n");
	jus(b, "    queue_window_us",
	    a->queue_buckets ? (span + (int64_t)a->queue_buckets - 1) / (int64_t)a->queue_buckets
	                     : 0,
	    ",\n    \"queue_series\": [");
	for (size_t i = 0; i < a->queue_buckets; i++)
		tp_buf_printf(b, "%s%u", i ? "," : "", a->queue[i]);
	tp_buf_printf(b, "],\n    \"step_count\": %zu,\n", a->nsteps);
	jus(b, "    step_median_us", a->step_median_ns, ",\n");
	jus(b, "    step_spread_us", a->step_spread_ns, ",\n");
	jus(b, "    device_median_us", a->device_median_ns, ",\n");
	jus(b, "    device_spread_us", a->device_spread_ns, ",\n");
	jus(b, "    busy_median_us", a->busy_median_ns, ",\n");
	jpct(b, "    idle_pct", a->idle_share, ",\n");
}

void tp_capreport_accel_json(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b)
{
	if (!a)
		return;
	tp_buf_puts(b, "\"accelerator\": {\n");
	json_totals(a, b);
	json_steps(p, a, b);
	json_ranks(p, a, b);
	tp_buf_printf(b, "    \"kernel_rows\": %zu,\n    \"kernels\": [", a->kernel_rows);
	json_rows(p, a->kernels, a->nkernels, 0, b);
	tp_buf_printf(b, ",\n    \"host_op_rows\": %zu,\n", a->host_rows);
	jus(b, "    host_self_us", a->host_self_ns, ",\n    \"host_ops\": [");
	json_rows(p, a->host, a->nhost, 1, b);
	tp_buf_puts(b, "\n  }");
}

/* ---- summary.md --------------------------------------------------------------------------------
 */

static void md_us(struct tp_buf *b, int64_t ns)
{
	tp_buf_puts(b, " | ");
	us(b, ns);
}

void tp_capreport_accel_md(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b)
{
	if (!a)
		return;
	tp_buf_puts(b, "## Accelerator\n\n**");
	tp_md_cell(b, a->verdict);
	tp_buf_puts(b, "**\n\n");
	int64_t span = a->end_ns - a->begin_ns;
	tp_buf_puts(b, "| Device span (us) | Busy (us) | Busy % | Compute % | Launches | "
	               "Launch-to-start median (us) | Queue max |\n|---:|---:|---:|---:|---:|---:|"
	               "---:|\n| ");
	us(b, span);
	md_us(b, a->total.busy_ns);
	tp_buf_puts(b, " | ");
	pct(b, ratio(a->total.busy_ns, span));
	tp_buf_puts(b, " | ");
	pct(b, ratio(a->total.ns[TP_ACC_COMPUTE], span));
	tp_buf_printf(b, " | %llu", (unsigned long long)a->launches);
	md_us(b, a->delay_median_ns);
	tp_buf_printf(b, " | %u |\n\n", a->queue_max);
	if (a->nsteps) {
		tp_buf_puts(b, "| Step | Host (us) | Device (us) | Busy (us) | Idle % | Launches | "
		               "Launch (us) |\n|---|---:|---:|---:|---:|---:|---:|\n");
		for (size_t i = 0; i < a->nsteps; i++) {
			const struct tp_accel_step *s = &a->steps[i];
			tp_buf_puts(b, "| ");
			tp_md_cell(b, tp_str(p, s->name));
			md_us(b, s->dur_ns);
			md_us(b, s->w.device_ns);
			md_us(b, s->w.busy_ns);
			tp_buf_puts(b, " | ");
			pct(b, ratio(s->idle_ns, s->dur_ns));
			tp_buf_printf(b, " | %llu", (unsigned long long)s->launches);
			md_us(b, s->launch_ns);
			tp_buf_puts(b, " |\n");
		}
		tp_buf_putc(b, '\n');
	}
	tp_buf_puts(b, "| Host operator (self time) | Class | Count | Self (us) | Share % |\n"
	               "|---|---|---:|---:|---:|\n");
	for (size_t i = 0; i < a->nhost && i < 10; i++) {
		const struct tp_accel_row *r = &a->host[i];
		tp_buf_puts(b, "| ");
		tp_md_cell(b, host_name(p, r));
		tp_buf_printf(b, " | %s | %llu", work_name(r->kind), (unsigned long long)r->count);
		md_us(b, r->total_ns);
		tp_buf_puts(b, " | ");
		pct(b, r->share);
		tp_buf_puts(b, " |\n");
	}
	tp_buf_putc(b, '\n');
}
