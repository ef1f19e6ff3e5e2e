/*
 * diff_accel.c — the accelerator side of `tpuprof diff` (contract in diff.h): each side's
 * median host step and median device time per step with their noise, from its accelerator
 * analysis, and the verdict on what bounds the step. Owns nothing beyond strings in the
 * diff's arena.
 */
#include "diff/diff_int.h"

#include <stdio.h>
#include <string.h>

static int side_of(struct tp_diff *d, struct tp_diff_accel *x, const struct tp_accel *a)
{
	if (!a) {
		*x = (struct tp_diff_accel){0};
		return TP_OK;
	}
	*x = (struct tp_diff_accel){.have = 1,
	                            .steps = a->nsteps,
	                            .step_ns = a->step_median_ns,
	                            .step_spread_ns = a->step_spread_ns,
	                            .device_ns = a->device_median_ns,
	                            .device_spread_ns = a->device_spread_ns,
	                            .idle_share = a->idle_share,
	                            .bound = tp_accel_bound_name(a->bound),
	                            .verdict = tp_arena_strdup(&d->arena, a->verdict)};
	return x->verdict ? TP_OK : TP_ENOMEM;
}

static double pct_of(int64_t a, int64_t b)
{
	return a ? (double)(b - a) * 100.0 / (double)a : 0;
}

/* 1 when b - a is no larger than the larger half-range, 0 when it is, -1 without two steps on
 * each side (no noise estimate). */
static int within(const struct tp_diff_accel *a, const struct tp_diff_accel *b, int64_t va,
                  int64_t vb, int64_t sa, int64_t sb)
{
	if (a->steps < 2 || b->steps < 2)
		return -1;
	return tp_diff_abs64(vb - va) <= (sa > sb ? sa : sb);
}

static long long whole(double pct)
{
	return (long long)(pct + (pct >= 0 ? 0.5 : -0.5));
}

/* The verdict's words after "device X %, step Y %: ". */
static const char *explain(struct tp_diff *d, const struct tp_diff_accel *a,
                           const struct tp_diff_accel *b, char *buf, size_t n)
{
	int64_t dstep = b->step_ns - a->step_ns, ddev = b->device_ns - a->device_ns;
	int dev_moved = d->device_within_noise != 1 && ddev != 0;
	int step_moved = d->step_within_noise != 1 && dstep != 0;
	long long idle = whole(b->idle_share * 100);
	int64_t slack =
	    a->step_spread_ns > b->step_spread_ns ? a->step_spread_ns : b->step_spread_ns;
	if (slack < tp_diff_abs64(dstep) / 10)
		slack = tp_diff_abs64(dstep) / 10;
	if (dev_moved && ddev < 0 && (dstep >= 0 || !step_moved)) {
		snprintf(buf, n,
		         "the device time fell %lld %% but the step %s: B's device is idle %lld %% "
		         "of each step, waiting for the host to launch work",
		         -whole(d->device_pct),
		         step_moved && dstep > 0 ? "got slower" : "did not get faster", idle);
		return "host-bound";
	}
	if (step_moved && !dev_moved) {
		snprintf(buf, n,
		         "the step changed while the device time did not: the change is on the "
		         "host (B's device is idle %lld %% of each step)",
		         idle);
		return "host-bound";
	}
	if (step_moved && dev_moved && tp_diff_abs64(dstep - ddev) <= slack) {
		snprintf(buf, n,
		         "the step moved with the device time (B's device is busy %lld %% of "
		         "each step)",
		         100 - idle);
		return "device-bound";
	}
	snprintf(buf, n, "%s", b->verdict ? b->verdict : "");
	return b->bound ? b->bound : "mixed";
}

int tp_diff_accel(struct tp_diff *d, const struct tp_analysis *aa, const struct tp_analysis *ba)
{
	if (side_of(d, &d->a.accel, aa->accel) || side_of(d, &d->b.accel, ba->accel))
		return TP_ENOMEM;
	const struct tp_diff_accel *a = &d->a.accel, *b = &d->b.accel;
	if (!a->have || !b->have)
		return TP_OK;
	d->have_accel = 1;
	d->step_pct = pct_of(a->step_ns, b->step_ns);
	d->device_pct = pct_of(a->device_ns, b->device_ns);
	d->step_within_noise =
	    within(a, b, a->step_ns, b->step_ns, a->step_spread_ns, b->step_spread_ns);
	d->device_within_noise =
	    within(a, b, a->device_ns, b->device_ns, a->device_spread_ns, b->device_spread_ns);
	char why[400], text[512];
	const char *bound = explain(d, a, b, why, sizeof why);
	snprintf(text, sizeof text, "device %+lld %%, step %+lld %%: %s: %s", whole(d->device_pct),
	         whole(d->step_pct), bound, why);
	d->bound = tp_arena_strdup(&d->arena, bound);
	d->verdict = tp_arena_strdup(&d->arena, text);
	return d->bound && d->verdict ? TP_OK : TP_ENOMEM;
}
