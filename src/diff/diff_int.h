/*
 * diff_int.h — what the diff's files share (diff.c computes the rows, diff_accel.c the
 * accelerator comparison, diff_out.c renders, with the JSON helpers jobdiff.c shares); only for
 * them and diff_test.c.
 */
#ifndef TP_DIFF_INT_H
#define TP_DIFF_INT_H

#include "diff/diff.h"

/* Fills d->a.accel and d->b.accel from the two analyses' accelerator figures and, when both
 * have them, the comparison and its verdict (d->have_accel and after). Strings go to d's
 * arena. TP_OK / TP_ENOMEM. */
int tp_diff_accel(struct tp_diff *d, const struct tp_analysis *aa, const struct tp_analysis *ba);

static inline int64_t tp_diff_abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

/* The ranking of rows by change: -1 when delta da is the larger in magnitude, 1 when db is,
 * 0 when they tie. */
static inline int tp_diff_cmp_change(int64_t da, int64_t db)
{
	int64_t x = tp_diff_abs64(da), y = tp_diff_abs64(db);
	return x == y ? 0 : x > y ? -1 : 1;
}

/* JSON of a field both sides have: `,"aSUFFIX":A,"bSUFFIX":B` with A and B as microseconds
 * (tp_buf_ns_as_us), with `decimals` decimals (tp_buf_fixed), or as JSON strings (NULL as ""). */
void tp_diff_json_ab_us(struct tp_buf *b, const char *suffix, int64_t a_ns, int64_t b_ns);
void tp_diff_json_ab_fixed(struct tp_buf *b, const char *suffix, double a, double bv, int decimals);
void tp_diff_json_ab_str(struct tp_buf *b, const char *suffix, const char *a, const char *bv);

#endif /* TP_DIFF_INT_H */
