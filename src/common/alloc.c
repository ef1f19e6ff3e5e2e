/*
 * alloc.c — the one allocation wrapper. Owns the process-wide fault-injection counter used by
 * tests to make the Nth allocation fail (the only global state outside src/capture/).
 */
#include "common/common.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Blocks of HUGE_MIN bytes or more ask for transparent huge pages (the kernel uses them for
 * the 2 MiB-aligned ranges inside). The model's arrays (slices, layers, ranks) are the bulk of
 * the resident memory and are written once, front to back: with 4 KiB pages their first touch
 * costs a page fault per 4 KiB, with the hint one per 2 MiB (docs/perf-notes/cores-reader.md,
 * "Eighth round"). Debian's kernels run THP in "madvise" mode, so nothing happens without the
 * hint. The system's settings still decide: THP "never" ignores it, and with Debian's defrag
 * default ("madvise") a fault in a hinted range may compact memory to find a huge page. The
 * untouched tail of a block stays unbacked in both cases (a huge page is only allocated for a
 * 2 MiB range the program writes), so the peak RSS moves by at most one huge page per growing
 * array. madvise's answer is ignored: the hint is an optimisation, and a kernel without THP
 * (EINVAL) behaves as without the hint.
 *
 * In tpuprof such blocks have mappings of their own (main.c sets glibc's mmap threshold to
 * 1 MiB). Elsewhere glibc may place one in its heap: the hint then also covers its neighbours'
 * pages, and tp_free gives back pages malloc would have handed out again; both only cost
 * time. */
#define HUGE_MIN ((size_t)4 << 20)

/* The hint covers the whole block, page-rounded, up to its usable end: for a block glibc
 * mapped on its own that is exactly its mapping. Hinting only part of it would split the
 * mapping, and realloc can then no longer grow it with mremap (EFAULT across mappings): it
 * copies the array into fresh pages on every growth instead. */
static void *hint_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	if (p && n >= HUGE_MIN) {
		uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
		size_t usable = malloc_usable_size(p);
		uintptr_t b = (uintptr_t)p & ~(page - 1);
		uintptr_t e = ((uintptr_t)p + usable + page - 1) & ~(page - 1);
		(void)madvise((void *)b, e - b, MADV_HUGEPAGE);
	}
#endif
	return p;
}

void *tp_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	return hint_huge(malloc(n ? n : 1), n);
}

void *tp_calloc(size_t count, size_t size)
{
	if (should_fail())
		return NULL;
	void *p = calloc(count ? count : 1, size ? size : 1);
	return p && count && size ? hint_huge(p, count * size) : p;
}

void *tp_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	return hint_huge(realloc(p, n ? n : 1), n);
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

void *tp_push(void *arrp, size_t elem, size_t *n, size_t *cap)
{
	void *p;
	memcpy(&p, arrp, sizeof p);
	if (*n < *cap) /* room left: no call into tp_grow per element */
		return (char *)p + elem * (*n)++;
	if (*n == SIZE_MAX)
		return NULL;
	p = tp_grow(p, elem, *n + 1, cap);
	if (!p)
		return NULL;
	memcpy(arrp, &p, sizeof p);
	return (char *)p + elem * (*n)++;
}

char *tp_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *r = tp_malloc(n);
	if (r)
		memcpy(r, s, n);
	return r;
}

/* A large block's pages are given back with madvise before free unmaps it: madvise takes the
 * address space's lock shared, munmap exclusively, so threads that free large blocks at once
 * (the readers' per-core working memory) release the pages side by side and only the empty
 * mapping's removal waits. The range is rounded inward, so malloc's own headers around the
 * block are not touched. */
void tp_free(void *p)
{
	size_t n = p ? malloc_usable_size(p) : 0;
	if (n >= HUGE_MIN)
		tp_map_drop(p, 0, n);
	free(p);
}

void tp_free_list(void *const *blocks, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tp_free(blocks[i]);
}

void tp_free_each(void *arr, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		void *q;
		memcpy(&q, (char *)arr + i * sizeof q, sizeof q);
		tp_free(q);
	}
	tp_free(arr);
}
