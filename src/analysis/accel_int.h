/*
 * accel_int.h — what the accelerator analysis' files share (accel.c: lanes, device work,
 * launches and steps; accel_stats.c: the figures per step, per device and in all;
 * accel_host.c: host self time; accel_verdict.c: names and the verdict); only for them (the
 * unit test, accel_test.c, uses accel.h alone).
 */
#ifndef TP_ACCEL_INT_H
#define TP_ACCEL_INT_H

#include "analysis/accel.h"

/* Per track: what it is to the analysis. */
enum { ACC_NONE = 0, ACC_HOST = 1, ACC_LANE = 2 };

/* One piece of device work. */
struct acc_item {
	int64_t start, end;
	uint64_t corr;  /* correlation id (has_corr) */
	int32_t track;  /* its device lane */
	int32_t device; /* the lane's device */
	int32_t launch; /* index into launches, -1 none */
	int32_t step;   /* index into the analysis' steps, -1 none */
	uint32_t name;
	uint8_t kind; /* enum tp_accel_kind */
	uint8_t has_corr;
};

/* A host slice that launched (or may have launched) device work. */
struct acc_launch {
	uint64_t corr;
	int64_t start, end;
	int32_t track, device, step;
	uint32_t slice; /* its index on the track */
	uint8_t has_corr, used;
};

struct acc_ctx {
	const struct tp_profile *p;
	struct tp_work_ids w;
	struct tp_accel *a;
	uint8_t *role; /* per track: ACC_* */
	struct acc_item *items;
	size_t nitems, cap_items;
	struct acc_launch *launches;
	size_t nlaunches, cap_launches;
	size_t nruntime; /* launches[0..nruntime) are runtime calls, in (track, slice) order */
};

/* Rows by (name, kind): the kernels' (accel_stats.c) and the host operators' (accel_host.c). */
struct rowmap {
	struct tp_accel_row *v;
	size_t n, cap;
	struct tp_ixmap ix;
};
/* The row of (name, kind) in m, made (zeroed) when new; NULL on out of memory. */
struct tp_accel_row *tp_accel_row_get(struct rowmap *m, uint32_t name, uint8_t kind);
/* m's rows by total_ns (descending; ties by name, then kind): the first TP_ACCEL_TOP into a new
 * *out (*nout of them, share = total / denom), *nall = all rows. TP_OK / TP_ENOMEM. */
int tp_accel_rows_top(const struct tp_profile *p, struct rowmap *m, int64_t denom,
                      struct tp_accel_row **out, size_t *nout, size_t *nall);
void tp_accel_rows_free(struct rowmap *m);

/* accel_stats.c: the figures of a->steps, ranks, totals, queue, delays and the kernel
 * ranking, from the linked and stepped items. TP_OK / TP_ENOMEM. */
int tp_accel_stats(struct acc_ctx *c);
/* accel_host.c: the host rows (self time by name) over the ACC_HOST tracks. TP_OK /
 * TP_ENOMEM. */
int tp_accel_host_rows(struct acc_ctx *c);
/* accel_stats.c: median and half-range of v[0..n) (sorted in place); 0, 0 when n is 0. */
void tp_accel_median(int64_t *v, size_t n, int64_t *med, int64_t *spread);

#endif /* TP_ACCEL_INT_H */
