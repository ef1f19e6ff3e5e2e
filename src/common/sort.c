/*
 * sort.c — a stable sort of index arrays (u32 positions into a caller's table), for tables too
 * large to copy while they sort: the model's tracks (slices and their costs permuted after the
 * sort) and the page's layer lanes. Owns nothing; the caller passes the scratch array.
 * Also tp_walk: the same order without an index, for tables nearly in order already (the
 * trace's and the page's layer lanes built from a layer table), and tp_upper_bound, the
 * binary search over a sorted table.
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

size_t tp_upper_bound(size_t n, int (*after)(const void *ctx, size_t i), const void *ctx)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (after(ctx, mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

size_t tp_upper_bound_i64(const void *base, size_t n, size_t size, size_t off, int64_t key)
{
	if (!n) /* base may be NULL then: no pointer arithmetic on it */
		return 0;
	const unsigned char *p = (const unsigned char *)base + off;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t v;
		memcpy(&v, p + mid * size, sizeof v);
		if (v > key)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void walk_reset(struct tp_walk *w)
{
	w->next = 0;
	w->head = 0;
	w->len = 0;
	w->k = 0;
	w->cur = w->prev = 0;
}

void tp_walk_start(struct tp_walk *w, size_t n, int (*keep)(const void *ctx, size_t i),
                   int (*before)(const void *ctx, uint32_t x, uint32_t y), const void *ctx)
{
	w->n = n;
	w->keep = keep;
	w->before = before;
	w->ctx = ctx;
	walk_reset(w);
}

int tp_walk_next(struct tp_walk *w, uint32_t *out)
{
	enum { M = TP_WALK_WINDOW - 1 };
	/* Fill the window, each new index inserted from the back (nearly sorted: few moves). */
	while (w->len < TP_WALK_WINDOW && w->next < w->n) {
		size_t i = w->next++;
		if (!w->keep(w->ctx, i))
			continue;
		size_t j = w->len++;
		for (; j && w->before(w->ctx, (uint32_t)i, w->win[(w->head + j - 1) & M]); j--)
			w->win[(w->head + j) & M] = w->win[(w->head + j - 1) & M];
		w->win[(w->head + j) & M] = (uint32_t)i;
	}
	if (!w->len)
		return 0;
	*out = w->win[w->head];
	w->head = (w->head + 1) & M;
	w->len--;
	return 1;
}

int tp_walk_ordered(struct tp_walk *w, size_t *count)
{
	walk_reset(w);
	uint32_t x, last = 0;
	size_t n = 0;
	int ok = 1;
	while (tp_walk_next(w, &x)) {
		if (n && !w->before(w->ctx, last, x))
			ok = 0;
		last = x;
		n++;
	}
	walk_reset(w);
	*count = n;
	return ok;
}

uint32_t tp_walk_at(struct tp_walk *w, size_t k)
{
	if (k + 1 == w->k)
		return w->cur;
	if (k + 2 == w->k)
		return w->prev;
	if (k < w->k)
		walk_reset(w);
	while (w->k <= k) {
		w->prev = w->cur;
		if (!tp_walk_next(w, &w->cur))
			break; /* k past the end: the caller's bug; the last index stays */
		w->k++;
	}
	return w->cur;
}
