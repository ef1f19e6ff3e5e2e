/*
 * clock.c — conversions between an engine's cycle counts and nanoseconds, in the vendor
 * tools' arithmetic where users compare figures with theirs.
 */
#include "model/model.h"

#include <math.h>

/* The clock in whole kHz when it is one (900 MHz, 750 MHz, 937.5 MHz...), else 0. */
static uint64_t whole_khz(double mhz)
{
	double khz = mhz * 1000.0, r = nearbyint(khz);
	return r >= 1 && r < 9007199254740992.0 && fabs(khz - r) <= 1e-6 * r ? (uint64_t)r : 0;
}

int64_t tp_cycles_to_ns(uint64_t cycles, double mhz)
{
	if (!(mhz > 0))
		return 0;
	/* The vendor's alignment computes int(cycles / MHz * 1000) in double precision; the
	 * BM1688 reader's §9.2 steps reproduce its cycles with exactly this truncation. An absurd
	 * clock (--tiu_freq 1e-9) must saturate, not overflow the cast (UB). */
	int64_t ns;
	if (tp_f64_to_i64((double)cycles / mhz * 1000.0, &ns) != 0)
		return INT64_MAX;
	return ns;
}

int64_t tp_cycles_to_ns_exact(uint64_t cycles, double mhz)
{
	if (!(mhz > 0))
		return 0;
	/* ns = floor(cycles × 10^6 / kHz) in integers: 1850301 cycles at 900 MHz are 2055890 ns,
	 * which the double expression truncates to 2055889 (2055.89 is not representable). Split
	 * so nothing overflows when cycles·10^6 would: cycles = q·k + r, ns = q·10^6 +
	 * floor(r·10^6 / k), r < k. The last clock's kHz is kept per thread: whole_khz's rounding
	 * and tests cost more than the division, and a reader converts millions of cycle counts
	 * at one or two clocks. */
	static _Thread_local double last_mhz;
	static _Thread_local uint64_t last_k;
	uint64_t k;
	if (mhz == last_mhz) {
		k = last_k;
	} else {
		k = whole_khz(mhz);
		last_mhz = mhz;
		last_k = k;
	}
	if (k && cycles <= (uint64_t)INT64_MAX / 1000000u) /* 2.5 hours at 1 GHz */
		return (int64_t)(cycles * 1000000u / k);
	if (k && k <= UINT64_MAX / 1000000u) {
		uint64_t q = cycles / k, r = cycles % k;
		if (q > (uint64_t)INT64_MAX / 1000000u)
			return INT64_MAX;
		return (int64_t)(q * 1000000u + r * 1000000u / k);
	}
	return (int64_t)((long double)cycles * 1000.0L / (long double)mhz);
}

uint64_t tp_ns_to_cycles(int64_t ns, double mhz)
{
	if (!(mhz > 0) || ns <= 0)
		return 0;
	/* The vendor's back-conversion int(ns * MHz / 1000) in double precision, kept as is: the
	 * BM1688 alignment (sophgo-bmprofile.md §9.2) reproduces its Start/End Cycles with it
	 * (core 1 TIU cmd 6 ends at cycle 381677, the exact quotient would give 381678). */
	double c = (double)ns * mhz / 1000.0;
	/* 2^64 is the first double above UINT64_MAX; saturate rather than overflow the cast. */
	return c < 18446744073709551616.0 ? (uint64_t)c : UINT64_MAX;
}
