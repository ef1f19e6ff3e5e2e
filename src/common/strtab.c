/*
 * strtab.c — string interning: an open-addressing hash (FNV-1a) over strings the table copies
 * into its own blocks. Id 0 is always the empty string, so a zeroed record names "". Per id it
 * keeps only a 4-byte location (dumps add a unique name per layer, millions of them): the
 * block index above bit TP_STRTAB_BLOCK_BITS, the offset in the block below it. Each stored
 * string is laid out as a LEB128 varint of (length << 1 | unique) followed by the bytes and a
 * NUL, so a probe compares lengths before bytes and a rehash skips the unique strings. A string
 * longer than a block gets a block of its own. Owns: the blocks, the location array and the
 * hash (struct tp_strtab in common.h).
 */
#include "common/common.h"

#include <string.h>

#define BLOCK_BYTES ((size_t)1 << TP_STRTAB_BLOCK_BITS)
#define OFF_MASK ((uint32_t)BLOCK_BYTES - 1)
#define MAX_BLOCKS ((uint32_t)1 << (32 - TP_STRTAB_BLOCK_BITS))

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* The stored header of id: sets *n (length) and *unique; returns the bytes. */
static const char *entry(const struct tp_strtab *t, uint32_t id, size_t *n, int *unique)
{
	uint32_t loc = t->locs[id];
	const unsigned char *p =
	    (const unsigned char *)t->blocks[loc >> TP_STRTAB_BLOCK_BITS] + (loc & OFF_MASK);
	uint64_t v = 0;
	unsigned sh = 0;
	while (*p & 0x80) {
		v |= (uint64_t)(*p++ & 0x7F) << sh;
		sh += 7;
	}
	v |= (uint64_t)*p++ << sh;
	*n = (size_t)(v >> 1);
	*unique = (int)(v & 1);
	return (const char *)p;
}

int tp_strtab_init(struct tp_strtab *t)
{
	memset(t, 0, sizeof *t);
	uint32_t id;
	return tp_strtab_intern(t, "", 0, &id);
}

void tp_strtab_free(struct tp_strtab *t)
{
	tp_free_each(t->blocks, t->nblocks);
	tp_free(t->locs);
	tp_free(t->slots);
	tp_free(t->resv);
	memset(t, 0, sizeof *t);
}

static int rehash(struct tp_strtab *t, uint32_t nslots)
{
	uint32_t *slots = tp_calloc(nslots, sizeof *slots);
	if (!slots)
		return TP_ENOMEM;
	size_t r = 0;
	for (uint32_t id = 0; id < t->count; id++) {
		/* A reserved batch: unique strings, maybe not written yet. */
		if (r < t->nresv && id == t->resv[r][0]) {
			id += t->resv[r++][1] - 1;
			continue;
		}
		size_t n;
		int unique;
		const char *s = entry(t, id, &n, &unique);
		if (unique)
			continue;
		tp_slot_put(slots, nslots - 1, hash(s, n), id + 1);
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
		size_t cn;
		int unique;
		const char *cs = entry(t, cand, &cn, &unique);
		if (cn == n && memcmp(cs, s, n) == 0) {
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
	if (n >= TP_STRTAB_MAX_LEN || t->count == UINT32_MAX - 1)
		return TP_ENOMEM;
	/* Load factor at most 1/2 keeps linear-probe runs short. */
	if ((uint64_t)(t->nfind + 1) * 2 >= (uint64_t)t->nslots) {
		uint32_t ns = t->nslots ? t->nslots * 2 : 256;
		if (rehash(t, ns) != TP_OK)
			return TP_ENOMEM;
	}
	return append(t, s, n, hash(s, n), 1, id);
}

/* Room for `need` bytes: the current block's tail, a new block, or (past a block's size) a
 * block of its own. Returns the location or UINT32_MAX on out of memory / a full table. */
static uint32_t reserve(struct tp_strtab *t, size_t need)
{
	if (t->nblocks && need <= BLOCK_BYTES - t->used) {
		uint32_t loc = (t->nblocks - 1) << TP_STRTAB_BLOCK_BITS | (uint32_t)t->used;
		t->used += need;
		return loc;
	}
	if (t->nblocks == MAX_BLOCKS)
		return UINT32_MAX;
	if (t->nblocks == t->cap_blocks) {
		size_t cap = t->cap_blocks;
		char **b = tp_grow(t->blocks, sizeof *b, (size_t)t->nblocks + 1, &cap);
		if (!b)
			return UINT32_MAX;
		t->blocks = b;
		t->cap_blocks = cap > MAX_BLOCKS ? MAX_BLOCKS : (uint32_t)cap;
	}
	char *blk = tp_malloc(need > BLOCK_BYTES ? need : BLOCK_BYTES);
	if (!blk)
		return UINT32_MAX;
	uint32_t k = t->nblocks++;
	t->blocks[k] = blk;
	/* An oversized string fills its block: the next string starts a new one. */
	t->used = need > BLOCK_BYTES ? BLOCK_BYTES : need;
	return k << TP_STRTAB_BLOCK_BITS;
}

/* Writes the varint header of a string of n bytes (unique or not) into hdr; returns its
 * size. */
static size_t header(unsigned char hdr[10], size_t n, int findable)
{
	size_t nh = 0;
	uint64_t v = (uint64_t)n << 1 | (findable ? 0u : 1u);
	while (v >= 0x80) {
		hdr[nh++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	hdr[nh++] = (unsigned char)v;
	return nh;
}

/* Room in t->locs for `add` more ids. */
static int locs_room(struct tp_strtab *t, size_t add)
{
	if (add > (size_t)(UINT32_MAX - 1 - t->count))
		return TP_ENOMEM;
	if (t->count + add <= t->cap)
		return TP_OK;
	uint64_t nc = t->cap ? t->cap : 256;
	while (nc < t->count + add)
		nc *= 2;
	if (nc > UINT32_MAX)
		nc = UINT32_MAX;
	uint32_t *locs = tp_realloc(t->locs, (size_t)nc * sizeof *locs);
	if (!locs)
		return TP_ENOMEM;
	t->locs = locs;
	t->cap = (uint32_t)nc;
	return TP_OK;
}

/* Stores s under a new id; `findable` also links it into the hash. */
static int append(struct tp_strtab *t, const char *s, size_t n, uint32_t h, int findable,
                  uint32_t *id)
{
	if (n >= TP_STRTAB_MAX_LEN || locs_room(t, 1) != TP_OK)
		return TP_ENOMEM;
	unsigned char hdr[10];
	size_t nh = header(hdr, n, findable);
	uint32_t loc = reserve(t, nh + n + 1);
	if (loc == UINT32_MAX)
		return TP_ENOMEM;
	char *dst = t->blocks[loc >> TP_STRTAB_BLOCK_BITS] + (loc & OFF_MASK);
	memcpy(dst, hdr, nh);
	if (n)
		memcpy(dst + nh, s, n);
	dst[nh + n] = 0;
	uint32_t nid = t->count++;
	t->locs[nid] = loc;
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

int tp_strtab_reserve_unique(struct tp_strtab *t, const uint32_t *len, size_t n, uint32_t *first,
                             struct tp_strtab_run **run, size_t *nrun, size_t *cap_run)
{
	*nrun = 0;
	*first = t->count;
	if (!n)
		return TP_OK;
	if (locs_room(t, n) != TP_OK)
		return TP_ENOMEM;
	if (t->nresv == t->cap_resv) {
		uint32_t(*v)[2] = tp_grow(t->resv, sizeof *v, t->nresv + 1, &t->cap_resv);
		if (!v)
			return TP_ENOMEM;
		t->resv = v;
	}
	/* What a failure puts back: the blocks made here go, the last block's fill returns. */
	uint32_t nblocks0 = t->nblocks;
	size_t used0 = t->used;
	for (size_t i = 0; i < n; i++) {
		unsigned char hdr[10]; /* its size only: the fill writes it */
		uint32_t blk = t->nblocks;
		uint32_t loc = len[i] && len[i] < TP_STRTAB_MAX_LEN
		                   ? reserve(t, header(hdr, len[i], 0) + len[i] + 1)
		                   : UINT32_MAX;
		if (loc == UINT32_MAX)
			goto fail;
		t->locs[*first + i] = loc;
		/* A string in a new block starts a run; else it follows the one before. */
		if (!*nrun || t->nblocks != blk) {
			struct tp_strtab_run *r = tp_grow(*run, sizeof *r, *nrun + 1, cap_run);
			if (!r)
				goto fail;
			*run = r;
			r[(*nrun)++] = (struct tp_strtab_run){
			    t->blocks[loc >> TP_STRTAB_BLOCK_BITS] + (loc & OFF_MASK), 0};
		}
		(*run)[*nrun - 1].count++;
	}
	t->resv[t->nresv][0] = *first;
	t->resv[t->nresv++][1] = (uint32_t)n;
	t->count += (uint32_t)n;
	return TP_OK;
fail:
	for (uint32_t k = nblocks0; k < t->nblocks; k++)
		tp_free(t->blocks[k]);
	t->nblocks = nblocks0;
	t->used = used0;
	*nrun = 0;
	return TP_ENOMEM;
}

void tp_strtab_fill_unique(const struct tp_strtab_run *run, size_t nrun, const uint32_t *len,
                           const char *bytes)
{
	for (size_t r = 0; r < nrun; r++) {
		char *at = run[r].at;
		for (size_t i = 0; i < run[r].count; i++) {
			unsigned char hdr[10];
			size_t nh = header(hdr, *len, 0);
			memcpy(at, hdr, nh);
			memcpy(at + nh, bytes, *len);
			at[nh + *len] = 0;
			at += nh + *len + 1;
			bytes += *len++;
		}
	}
}

const char *tp_strtab_get(const struct tp_strtab *t, uint32_t id)
{
	if (id >= t->count)
		return "";
	size_t n;
	int unique;
	return entry(t, id, &n, &unique);
}
