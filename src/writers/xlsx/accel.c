/*
 * accel.c — the Accelerator sheet of the workbook: the accelerator analysis
 * (src/analysis/accel.h, docs/accelerator-analysis.md) for profiles with device lanes. One
 * compact sheet: the verdict, the totals as label / value rows, then the steps (host time and
 * device time side by side), the devices, and the top device work and host operators, each a
 * table with a header row. Times in µs, shares in %. Owns nothing beyond one call.
 */
#include "writers/xlsx/xlsx_int.h"

#include "analysis/accel.h"

int xl_accel_present(const struct tp_profile *p)
{
	struct tp_work_ids w;
	tp_work_ids(p, &w);
	int host = 0, engine = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (t->kind != TP_TRACK_THREAD && t->kind != TP_TRACK_HOST) {
			engine |= t->kind <= TP_TRACK_CDMA && t->count;
			continue;
		}
		host = 1;
		for (size_t k = 0; k < t->count; k++)
			if (tp_work_busy(tp_work_of(&w, tp_slice_type(t, &t->slices[k]))))
				return 1;
	}
	return host && engine;
}

/* A label in column 0 and a value in column 1 (µs, %, or a count). */
static uint32_t kv(struct xl *x, struct xl_sheet *s, uint32_t row, const char *label, double v,
                   lxw_format *fmt)
{
	xl_str(x, s, row, 0, label, x->f.bold);
	xl_num(x, s, row, 1, v, fmt);
	return row + 1;
}

static uint32_t totals(struct xl *x, struct xl_sheet *s, const struct tp_accel *a, uint32_t r)
{
	int64_t span = a->end_ns - a->begin_ns;
	r = kv(x, s, r, "Device span (us)", xl_ns_to_us(span), x->f.us);
	r = kv(x, s, r, "Busy (us)", xl_ns_to_us(a->total.busy_ns), x->f.us);
	r = kv(x, s, r, "Busy share of the span",
	       span > 0 ? (double)a->total.busy_ns / (double)span : 0, x->f.pct);
	for (int k = 0; k < TP_ACC_KINDS; k++) {
		char l[48];
		snprintf(l, sizeof l, "Device time, %s (us)",
		         tp_accel_kind_name((enum tp_accel_kind)k));
		r = kv(x, s, r, l, xl_ns_to_us(a->total.ns[k]), x->f.us);
	}
	r = kv(x, s, r, "Communication overlapped by compute (us)",
	       xl_ns_to_us(a->total.comm_overlap_ns), x->f.us);
	r = kv(x, s, r, "Launches", (double)a->launches, x->f.cyc);
	r = kv(x, s, r, "Launch time (us)", xl_ns_to_us(a->launch_ns), x->f.us);
	r = kv(x, s, r, "Launch-to-start median (us)", xl_ns_to_us(a->delay_median_ns), x->f.us);
	r = kv(x, s, r, "Launch-to-start p90 (us)", xl_ns_to_us(a->delay_p90_ns), x->f.us);
	r = kv(x, s, r, "Queue depth max", (double)a->queue_max, x->f.cyc);
	r = kv(x, s, r, "Queue depth mean", a->queue_mean, x->f.real);
	r = kv(x, s, r, "Step, median host time (us)", xl_ns_to_us(a->step_median_ns), x->f.us);
	r = kv(x, s, r, "Step, host half-range (us)", xl_ns_to_us(a->step_spread_ns), x->f.us);
	r = kv(x, s, r, "Step, median device time (us)", xl_ns_to_us(a->device_median_ns), x->f.us);
	r = kv(x, s, r, "Step, device half-range (us)", xl_ns_to_us(a->device_spread_ns), x->f.us);
	r = kv(x, s, r, "Step, median idle share", a->idle_share, x->f.pct);
	if (a->nranks > 1)
		r = kv(x, s, r, "Imbalance between devices", a->imbalance, x->f.pct);
	return r + 1;
}

static uint32_t steps(struct xl *x, struct xl_sheet *s, const struct tp_accel *a, uint32_t r)
{
	static const char *const h[] = {"Step",      "Host (us)",   "Device (us)",
	                                "Busy (us)", "Idle (us)",   "Idle share",
	                                "Launches",  "Launch (us)", "Launch-to-start median (us)",
	                                "Queue max"};
	xl_header_row(x, s, r++, h, sizeof h / sizeof *h);
	for (size_t i = 0; i < a->nsteps; i++, r++) {
		const struct tp_accel_step *t = &a->steps[i];
		xl_str(x, s, r, 0, tp_str(x->p, t->name), NULL);
		xl_num(x, s, r, 1, xl_ns_to_us(t->dur_ns), x->f.us);
		xl_num(x, s, r, 2, xl_ns_to_us(t->w.device_ns), x->f.us);
		xl_num(x, s, r, 3, xl_ns_to_us(t->w.busy_ns), x->f.us);
		xl_num(x, s, r, 4, xl_ns_to_us(t->idle_ns), x->f.us);
		xl_num(x, s, r, 5, t->dur_ns > 0 ? (double)t->idle_ns / (double)t->dur_ns : 0,
		       x->f.pct);
		xl_num(x, s, r, 6, (double)t->launches, x->f.cyc);
		xl_num(x, s, r, 7, xl_ns_to_us(t->launch_ns), x->f.us);
		xl_num(x, s, r, 8, xl_ns_to_us(t->delay_median_ns), x->f.us);
		xl_num(x, s, r, 9, (double)t->queue_max, x->f.cyc);
	}
	if (!a->nsteps)
		xl_str(x, s, r++, 0, "(no host step: the totals above cover the device span)",
		       x->f.note);
	return r + 1;
}

static uint32_t devices(struct xl *x, struct xl_sheet *s, const struct tp_accel *a, uint32_t r)
{
	static const char *const h[] = {"Device",       "Rank",      "Device (us)",  "Busy (us)",
	                                "Compute (us)", "Comm (us)", "Per step (us)"};
	xl_header_row(x, s, r++, h, sizeof h / sizeof *h);
	for (size_t i = 0; i < a->nranks; i++, r++) {
		const struct tp_accel_rank *d = &a->ranks[i];
		xl_str(x, s, r, 0, tp_str(x->p, x->p->devices[d->device].name), NULL);
		if (d->rank >= 0)
			xl_num(x, s, r, 1, (double)d->rank, x->f.cyc);
		xl_num(x, s, r, 2, xl_ns_to_us(d->w.device_ns), x->f.us);
		xl_num(x, s, r, 3, xl_ns_to_us(d->w.busy_ns), x->f.us);
		xl_num(x, s, r, 4, xl_ns_to_us(d->w.ns[TP_ACC_COMPUTE]), x->f.us);
		xl_num(x, s, r, 5, xl_ns_to_us(d->w.ns[TP_ACC_COMM]), x->f.us);
		xl_num(x, s, r, 6, xl_ns_to_us(d->step_device_ns), x->f.us);
	}
	return r + 1;
}

/* The kernels (host = 0) or the host operators (host = 1), most time first. */
static uint32_t rows(struct xl *x, struct xl_sheet *s, const struct tp_accel_row *v, size_t n,
                     int host, uint32_t r)
{
	static const char *const hk[] = {"Kind", "Count", "Time (us)", "Share", "Name"};
	static const char *const hh[] = {"Class", "Count", "Self (us)",
	                                 "Share", "Name",  "Total (us)"};
	xl_header_row(x, s, r++, host ? hh : hk, host ? 6 : 5);
	for (size_t i = 0; i < n; i++, r++) {
		const struct tp_accel_row *w = &v[i];
		xl_str(
		    x, s, r, 0,
		    host ? (w->kind == TP_WORK_STEP ? "step" : tp_work_type((enum tp_work)w->kind))
		         : tp_accel_kind_name((enum tp_accel_kind)w->kind),
		    NULL);
		xl_num(x, s, r, 1, (double)w->count, x->f.cyc);
		xl_num(x, s, r, 2, xl_ns_to_us(w->total_ns), x->f.us);
		xl_num(x, s, r, 3, w->share, x->f.pct);
		xl_str(x, s, r, 4,
		       host && w->kind == TP_WORK_STEP ? "(steps, outside any operator)"
		                                       : tp_str(x->p, w->name),
		       NULL);
		if (host)
			xl_num(x, s, r, 5, xl_ns_to_us(w->incl_ns), x->f.us);
	}
	return r + 1;
}

void xl_accel_write(struct xl *x, lxw_worksheet *ws)
{
	struct xl_sheet s = {.ws = ws};
	const struct tp_accel *a = x->a ? x->a->accel : NULL;
	xl_str(x, &s, 0, 0, "Accelerator: device lanes against host threads", x->f.title);
	if (s.wcap)
		s.width[0] = 0;
	if (!a) {
		xl_str(x, &s, 1, 0, "No device work on the device lanes.", x->f.note);
		xl_sheet_done(x, &s);
		return;
	}
	xl_str(x, &s, 1, 0, a->verdict, x->f.note);
	if (s.wcap)
		s.width[0] = 0;
	uint32_t r = totals(x, &s, a, 3);
	r = steps(x, &s, a, r);
	r = devices(x, &s, a, r);
	xl_str(x, &s, r++, 0, "Device work by name", x->f.bold);
	r = rows(x, &s, a->kernels, a->nkernels, 0, r);
	xl_str(x, &s, r++, 0, "Host time by operator (self time; shares add up to 100 %)",
	       x->f.bold);
	rows(x, &s, a->host, a->nhost, 1, r);
	worksheet_set_tab_color(ws, 0x70AD47);
	xl_sheet_done(x, &s);
}
