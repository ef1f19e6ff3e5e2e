/*
 * ixmap.c — an open-addressing index over an array its caller owns (common.h: tp_ixmap):
 * the table holds element indices + 1 and is kept at most half full; the caller hashes and
 * compares its own elements, so one mechanism serves every "find or append" table. Also the
 * growth of the open-addressing tables that keep whole entries in their slots (tp_oa_grow).
 */
#include "common/common.h"

#include <string.h>

int tp_ixmap_grow(struct tp_ixmap *m, size_t n, tp_ixmap_hash_fn hash, const void *ctx)
{
	if (2 * (n + 1) <= m->cap)
		return TP_OK;
	if (n >= UINT32_MAX - 1)
		return TP_ENOMEM; /* indices + 1 are 32-bit */
	size_t cap = m->cap ? 2 * m->cap : 64;
	while (2 * (n + 1) > cap)
		cap *= 2;
	uint32_t *sl = tp_calloc(cap, sizeof *sl);
	if (!sl)
		return TP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		tp_slot_put(sl, cap - 1, hash(ctx, i), (uint32_t)i + 1);
	}
	tp_free(m->slot);
	m->slot = sl;
	m->cap = cap;
	return TP_OK;
}

static void oa_rehash(void *to, size_t cap, const void *from, size_t from_cap, size_t size,
                      int (*used)(const void *e), size_t (*hash)(const void *e, size_t cap))
{
	unsigned char *t = to;
	const unsigned char *f = from;
	for (size_t i = 0; i < from_cap; i++) {
		const void *e = f + i * size;
		if (!used(e))
			continue;
		size_t h = hash(e, cap) & (cap - 1);
		while (used(t + h * size))
			h = (h + 1) & (cap - 1);
		memcpy(t + h * size, e, size);
	}
}

void *tp_oa_grow(void *from, size_t *cap, size_t first_cap, size_t size, int (*used)(const void *e),
                 size_t (*hash)(const void *e, size_t cap))
{
	size_t ncap = *cap ? 2 * *cap : first_cap;
	void *to = tp_calloc(ncap, size);
	if (!to)
		return NULL;
	oa_rehash(to, ncap, from, *cap, size, used, hash);
	tp_free(from);
	*cap = ncap;
	return to;
}

void tp_oa_clear(void *slots, size_t cap, size_t size)
{
	if (cap)
		memset(slots, 0, cap * size);
}

void tp_ixmap_free(struct tp_ixmap *m)
{
	tp_free(m->slot);
	m->slot = NULL;
	m->cap = 0;
}
