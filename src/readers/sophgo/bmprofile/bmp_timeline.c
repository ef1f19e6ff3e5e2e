/*
 * bmp_timeline.c — the pure rules of the PerfAI timeline reconstruction (sophgo-bmprofile.md
 * §9.2) that do not need the model: which GDMA records survive the trimming by inst_id == 0
 * positions. The unwrapping and the cycle/ns conversions are inline in bmp_int.h; the
 * reader (bmp_reader.c) applies them to the slices.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

void bmp_trim_range(size_t n, size_t nz, size_t z_first, size_t z_second, size_t z_last, size_t *lo,
                    size_t *hi)
{
	/* §9.2 step 2, verified on the real BM1688 dump (zeros at 0, 1, 146 -> keep 1..145):
	 *   no zero        keep everything
	 *   one zero       drop the first record (wherever the zero is)
	 *   two zeros i<j  keep the records strictly between them
	 *   three or more  keep from the second zero (inclusive) to the last zero (exclusive) */
	if (nz == 0) {
		*lo = 0;
		*hi = n;
	} else if (nz == 1) {
		*lo = n ? 1 : 0;
		*hi = n;
	} else if (nz == 2) {
		*lo = z_first + 1;
		*hi = z_second;
	} else {
		*lo = z_second;
		*hi = z_last;
	}
	if (*hi > n)
		*hi = n;
	if (*lo > *hi)
		*lo = *hi;
}
