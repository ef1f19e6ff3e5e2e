/*
 * accel_verdict.c — the accelerator analysis' names and its verdict: which of the bounds of
 * enum tp_accel_bound the median step shows (the thresholds are accel.h's TP_ACCEL_*), and the
 * sentence that says it with the figures behind it. Owns nothing.
 */
#include "analysis/accel_int.h"

#include <stdio.h>
#include <string.h>

const char *tp_accel_kind_name(enum tp_accel_kind k)
{
	static const char *const n[] = {"compute", "memcpy", "memset", "comm"};
	return (unsigned)k < TP_ACC_KINDS ? n[k] : "?";
}

const char *tp_accel_bound_name(enum tp_accel_bound b)
{
	static const char *const n[] = {"no device work", "host-bound",   "communication-bound",
	                                "transfer-bound", "device-bound", "mixed"};
	return (unsigned)b <= TP_BOUND_MIXED ? n[b] : "?";
}

/* A percentage of a share, rounded to a whole number. */
static long long pct(double share)
{
	return (long long)(share * 100.0 + (share >= 0 ? 0.5 : -0.5));
}

/* ns as "12.345 ms" (>= 1 ms) or "12.3 us", in integer arithmetic (no locale). */
static void span_text(char *b, size_t n, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	if (ns >= 1000000)
		snprintf(b, n, "%lld.%03lld ms", (long long)(ns / 1000000),
		         (long long)(ns / 1000 % 1000));
	else
		snprintf(b, n, "%lld.%lld us", (long long)(ns / 1000), (long long)(ns / 100 % 10));
}

static enum tp_accel_bound bound_of(const struct tp_accel *a)
{
	if (!a->total.device_ns)
		return TP_BOUND_NONE;
	double busy = 1.0 - a->idle_share;
	double copies = (double)(a->total.ns[TP_ACC_MEMCPY] + a->total.ns[TP_ACC_MEMSET]) /
	                (double)a->total.device_ns;
	if (a->comm_exposed >= TP_ACCEL_COMM_SHARE)
		return TP_BOUND_COMM;
	if (a->idle_share >= TP_ACCEL_HOST_IDLE)
		return TP_BOUND_HOST;
	if (busy >= TP_ACCEL_DEVICE_BUSY)
		return copies >= TP_ACCEL_COPY_SHARE ? TP_BOUND_TRANSFER : TP_BOUND_DEVICE;
	return TP_BOUND_MIXED;
}

/* "; 785 launches per step take 9.876 ms of host time (12.6 us each), and work starts 25.1 us
 * after its launch (median) with at most 12 queued" */
static void launch_text(const struct tp_accel *a, char *b, size_t n)
{
	if (!a->launches) {
		snprintf(b, n, "; no launch is joined to its device work");
		return;
	}
	uint64_t per = a->launches;
	int64_t ns = a->launch_ns;
	if (a->nsteps) {
		per = ns = 0;
		for (size_t i = 0; i < a->nsteps; i++) {
			per += a->steps[i].launches;
			ns += a->steps[i].launch_ns;
		}
		per /= a->nsteps;
		ns /= (int64_t)a->nsteps;
	}
	char t[32], each[32], delay[32];
	span_text(t, sizeof t, ns);
	span_text(each, sizeof each, a->launch_ns / (int64_t)a->launches);
	span_text(delay, sizeof delay, a->delay_median_ns);
	snprintf(b, n,
	         "; %llu launches%s take %s of host time (%s each), and work starts %s after "
	         "its launch (median) with at most %u queued",
	         (unsigned long long)per, a->nsteps ? " per step" : "", t, each, delay,
	         a->queue_max);
}

void tp_accel_verdict(const struct tp_profile *p, struct tp_accel *a)
{
	a->bound = bound_of(a);
	const char *of = a->nsteps ? "each step" : "the device span";
	const char *name = tp_accel_bound_name(a->bound);
	long long busy = pct(1.0 - a->idle_share), idle = pct(a->idle_share);
	char l[240];
	launch_text(a, l, sizeof l);
	double dev = (double)(a->total.device_ns ? a->total.device_ns : 1);
	switch (a->bound) {
	case TP_BOUND_NONE:
		snprintf(a->verdict, sizeof a->verdict, "%s", name);
		break;
	case TP_BOUND_HOST:
	case TP_BOUND_MIXED:
		snprintf(a->verdict, sizeof a->verdict, "%s: the device is idle %lld %% of %s%s",
		         name, idle, of, l);
		break;
	case TP_BOUND_COMM:
		snprintf(a->verdict, sizeof a->verdict,
		         "%s: %lld %% of the device's busy time is communication that no "
		         "computation hides (busy %lld %% of %s)",
		         name, pct(a->comm_exposed), busy, of);
		break;
	case TP_BOUND_TRANSFER:
		snprintf(
		    a->verdict, sizeof a->verdict,
		    "%s: the device is busy %lld %% of %s, and copies and fills take %lld %% "
		    "of its time",
		    name, busy, of,
		    pct((double)(a->total.ns[TP_ACC_MEMCPY] + a->total.ns[TP_ACC_MEMSET]) / dev));
		break;
	case TP_BOUND_DEVICE:
		snprintf(
		    a->verdict, sizeof a->verdict,
		    "%s: the device is busy %lld %% of %s; compute kernels take %lld %% of its "
		    "time, the longest in all %.60s (%lld %%)",
		    name, busy, of, pct((double)a->total.ns[TP_ACC_COMPUTE] / dev),
		    a->nkernels ? tp_str(p, a->kernels[0].name) : "-",
		    a->nkernels ? pct(a->kernels[0].share) : 0);
		break;
	}
}
