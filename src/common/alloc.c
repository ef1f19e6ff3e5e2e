/*
 * alloc.c — the one allocation wrapper. Owns the process-wide fault-injection counter used by
 * tests to make the Nth allocation fail (the only global state outside src/capture/).
 */
#include "common/common.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Atomic (relaxed) because outputs are written by several threads at once (--jobs); the
 * fault hook itself is used by single-threaded tests only. */
static atomic_long fail_countdown = -1; /* < 0: never fail */
static atomic_long alloc_count;

static int should_fail(void)
{
	atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
	long c = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
	if (c < 0)
		return 0;
	if (c == 0)
		return 1;
	atomic_store_explicit(&fail_countdown, c - 1, memory_order_relaxed);
	return 0;
}

long tp_alloc_fail_after(long n)
{
	long c = atomic_exchange(&alloc_count, 0);
	atomic_store(&fail_countdown, n);
	return c;
}

void *tp_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	return malloc(n ? n : 1);
}

void *tp_calloc(size_t count, size_t size)
{
	if (should_fail())
		return NULL;
	return calloc(count ? count : 1, size ? size : 1);
}

void *tp_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	return realloc(p, n ? n : 1);
}

void *tp_grow(void *p, size_t elem, size_t need, size_t *cap)
{
	if (need <= *cap)
		return p;
	size_t ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap += ncap / 2 + 8;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return NULL;
	void *q = tp_realloc(p, ncap * elem);
	if (!q)
		return NULL;
	*cap = ncap;
	return q;
}

char *tp_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *r = tp_malloc(n);
	if (r)
		memcpy(r, s, n);
	return r;
}

void tp_free(void *p) { free(p); }
