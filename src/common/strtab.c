/*
 * strtab.c — string interning: an open-addressing hash (FNV-1a) over strings copied into the
 * owner's arena. Id 0 is always the empty string, so a zeroed record names "". Per id it keeps
 * a pointer and a length only (12 bytes: dumps add a unique name per layer, millions); a probe
 * compares lengths before bytes, and a rehash hashes the findable strings again.
 */
#include "common/common.h"

#include <string.h>

#define UNIQUE 0x80000000u

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

int tp_strtab_init(struct tp_strtab *t, struct tp_arena *arena)
{
	memset(t, 0, sizeof *t);
	t->arena = arena;
	uint32_t id;
	return tp_strtab_intern(t, "", 0, &id);
}

void tp_strtab_free(struct tp_strtab *t)
{
	tp_free(t->strs);
	tp_free(t->lens);
	tp_free(t->slots);
	memset(t, 0, sizeof *t);
}

static int rehash(struct tp_strtab *t, uint32_t nslots)
{
	uint32_t *slots = tp_calloc(nslots, sizeof *slots);
	if (!slots)
		return TP_ENOMEM;
	for (uint32_t id = 0; id < t->count; id++) {
		if (t->lens[id] & UNIQUE)
			continue;
		uint32_t i = hash(t->strs[id], t->lens[id]) & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = id + 1;
	}
	tp_free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return TP_OK;
}

int tp_strtab_find(const struct tp_strtab *t, const char *s, size_t n, uint32_t *id)
{
	if (!t->nslots)
		return 0;
	uint32_t h = hash(s, n);
	uint32_t i = h & (t->nslots - 1);
	while (t->slots[i]) {
		uint32_t cand = t->slots[i] - 1;
		if (t->lens[cand] == n && memcmp(t->strs[cand], s, n) == 0) {
			*id = cand;
			return 1;
		}
		i = (i + 1) & (t->nslots - 1);
	}
	return 0;
}

static int append(struct tp_strtab *t, const char *s, size_t n, uint32_t h, int findable,
                  uint32_t *id);

int tp_strtab_intern(struct tp_strtab *t, const char *s, size_t n, uint32_t *id)
{
	if (tp_strtab_find(t, s, n, id))
		return TP_OK;
	if (n >= UNIQUE || t->count == UINT32_MAX - 1)
		return TP_ENOMEM;
	/* Load factor at most 1/2 keeps linear-probe runs short. */
	if ((uint64_t)(t->nfind + 1) * 2 >= (uint64_t)t->nslots) {
		uint32_t ns = t->nslots ? t->nslots * 2 : 256;
		if (rehash(t, ns) != TP_OK)
			return TP_ENOMEM;
	}
	return append(t, s, n, hash(s, n), 1, id);
}

/* Stores s under a new id; `findable` also links it into the hash. */
static int append(struct tp_strtab *t, const char *s, size_t n, uint32_t h, int findable,
                  uint32_t *id)
{
	if (n >= UNIQUE || t->count == UINT32_MAX - 1)
		return TP_ENOMEM;
	if (t->count == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 256;
		const char **strs = tp_realloc(t->strs, nc * sizeof *strs);
		if (!strs)
			return TP_ENOMEM;
		t->strs = strs;
		uint32_t *lens = tp_realloc(t->lens, nc * sizeof *lens);
		if (!lens)
			return TP_ENOMEM;
		t->lens = lens;
		t->cap = nc;
	}
	char *copy = tp_arena_strndup(t->arena, s, n);
	if (!copy)
		return TP_ENOMEM;
	uint32_t nid = t->count++;
	t->strs[nid] = copy;
	t->lens[nid] = (uint32_t)n | (findable ? 0 : UNIQUE);
	*id = nid;
	if (!findable)
		return TP_OK;
	t->nfind++;
	uint32_t i = h & (t->nslots - 1);
	while (t->slots[i])
		i = (i + 1) & (t->nslots - 1);
	t->slots[i] = nid + 1;
	return TP_OK;
}

int tp_strtab_add_unique(struct tp_strtab *t, const char *s, size_t n, uint32_t *id)
{
	if (n == 0) {
		*id = 0;
		return TP_OK;
	}
	return append(t, s, n, 0, 0, id);
}

const char *tp_strtab_get(const struct tp_strtab *t, uint32_t id)
{
	return id < t->count ? t->strs[id] : "";
}
