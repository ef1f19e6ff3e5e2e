/*
 * diff_int.h — what the diff's files share (diff.c computes the rows, diff_accel.c the
 * accelerator comparison, diff_out.c renders); only for them and diff_test.c.
 */
#ifndef TP_DIFF_INT_H
#define TP_DIFF_INT_H

#include "diff/diff.h"

/* Fills d->a.accel and d->b.accel from the two analyses' accelerator figures and, when both
 * have them, the comparison and its verdict (d->have_accel and after). Strings go to d's
 * arena. TP_OK / TP_ENOMEM. */
int tp_diff_accel(struct tp_diff *d, const struct tp_analysis *aa, const struct tp_analysis *ba);

#endif /* TP_DIFF_INT_H */
