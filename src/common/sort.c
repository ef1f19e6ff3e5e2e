/*
 * sort.c — a stable sort of index arrays (u32 positions into a caller's table), for tables too
 * large to copy while they sort: the model's tracks (slices and their costs permuted after the
 * sort) and the page's layer lanes. Owns nothing; the caller passes the scratch array.
 */
#include "common.h"

#include <string.h>

void tp_sort_index(uint32_t *v, uint32_t *tmp, size_t n,
                   int (*before)(const void *ctx, uint32_t x, uint32_t y), const void *ctx)
{
	uint32_t *src = v, *dst = tmp;
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			if (mid == hi || !before(ctx, src[mid], src[mid - 1])) {
				/* The two runs are already in order (or there is one): a copy. */
				memcpy(dst + lo, src + lo, (hi - lo) * sizeof *dst);
				continue;
			}
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = before(ctx, src[j], src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		uint32_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
}
