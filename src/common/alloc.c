/*
 * alloc.c — the one allocation wrapper. Owns the process-wide fault-injection counter used by
 * tests to make the Nth allocation fail (the only global state outside src/capture/).
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

static long fail_countdown = -1; /* < 0: never fail */
static long alloc_count;

static int should_fail(void)
{
	alloc_count++;
	if (fail_countdown < 0)
		return 0;
	if (fail_countdown == 0)
		return 1;
	fail_countdown--;
	return 0;
}

long tp_alloc_fail_after(long n)
{
	long c = alloc_count;
	alloc_count = 0;
	fail_countdown = n;
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
