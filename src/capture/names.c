/*
 * names.c — strings recorded by value: UTF-8 cleaning (invalid bytes become U+FFFD, text is
 * cut on a character boundary) and per-thread interning into the thread's string area, with
 * a cache keyed by content, by pointer hint and by operator descriptor. Owns each thread's
 * intern cache.
 */
#include "capture/capture_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- names: UTF-8 cleaning and interning ---- */

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0 if invalid: no
 * overlong forms, no surrogates, nothing above U+10FFFF. */
size_t tp_cap_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

/* Copies the NUL-terminated `s` into `out` (MAX_STR_LEN + 1 bytes) as valid UTF-8: every
 * invalid byte becomes U+FFFD, and the text is cut at MAX_STR_LEN bytes on a character
 * boundary. Returns the length; *same = 1 if `out` equals `s`. */
size_t tp_cap_clean_text(const char *s, char *out, int *same)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	*same = 1;
	while (*p) {
		size_t avail = strnlen((const char *)p, 4);
		size_t k = tp_cap_utf8_seq(p, avail);
		if (k == 0) {
			if (o + 3 > MAX_STR_LEN) {
				*same = 0;
				break;
			}
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			p++;
			*same = 0;
			continue;
		}
		if (o + k > MAX_STR_LEN) {
			*same = 0;
			break;
		}
		memcpy(out + o, p, k);
		o += k;
		p += k;
	}
	out[o] = 0;
	return o;
}

/* Stores `len` clean bytes and publishes them; returns the 1-based id, or 0 if the storage is
 * full (counted in the thread's header and reported by the converter). */
static uint32_t store_str(struct cap_thread *t, const char *s, size_t len)
{
	if (t->str == NULL || !tp_cap_grow_str(t, len + 1)) {
		atomic_fetch_add_explicit(&t->h->str_dropped, 1, memory_order_relaxed);
		return 0;
	}
	memcpy(t->str + t->str_len, s, len);
	t->str[t->str_len + len] = 0;
	t->str_len += (uint32_t)len + 1;
	t->str_count++;
	atomic_store_explicit(&t->h->str_pub, (uint64_t)t->str_count << 32 | t->str_len,
	                      memory_order_release);
	return t->str_count; /* ids are 1-based; 0 = "" */
}

/* Doubles the cache (up to CACHE_MAX) and re-inserts every entry. 0 or -1. */
static int cache_grow(struct cap_thread *t)
{
	if (t->cache == NULL || t->cache_mask + 1 >= CACHE_MAX)
		return -1;
	uint32_t nslots = (t->cache_mask + 1) * 2;
	struct cache_ent *nc = calloc(nslots, sizeof *nc);
	if (nc == NULL)
		return -1;
	struct cache_ent *old = t->cache;
	uint32_t oslots = t->cache_mask + 1;
	t->cache = nc;
	t->cache_mask = nslots - 1;
	t->cache_used = 0;
	for (uint32_t i = 0; i < oslots; i++) {
		if (old[i].tag == 0)
			continue;
		for (uint32_t j = (uint32_t)(old[i].hash >> 32) & t->cache_mask;;
		     j = (j + 1) & t->cache_mask) {
			if (nc[j].tag == 0) {
				nc[j] = old[i];
				t->cache_used++;
				break;
			}
		}
	}
	free(old);
	return 0;
}

/* Finds the entry (tag, key or content) or the free slot where it belongs (growing the
 * cache when it is half full or a neighbourhood is crowded). NULL: no slot (cache at its
 * limit) — the caller then stores without caching. */
static struct cache_ent *cache_find(struct cap_thread *t, uint64_t h, uint32_t tag, const void *key,
                                    const char *text, size_t len, int *found)
{
	*found = 0;
	if (t->cache == NULL)
		return NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		uint32_t mask = t->cache_mask;
		uint32_t i = (uint32_t)(h >> 32) & mask;
		for (uint32_t probes = 0; probes < 64; i = (i + 1) & mask, probes++) {
			struct cache_ent *e = &t->cache[i];
			if (e->tag == 0) {
				if (t->cache_used + 1 > (mask + 1) / 2 && cache_grow(t) == 0)
					break; /* retry in the bigger table */
				return e;
			}
			if (e->tag != tag || e->hash != h)
				continue;
			if (tag == 3 ? memcmp(t->str + e->off[0], text, len + 1) == 0
			             : e->key == key) {
				*found = 1;
				return e;
			}
		}
		if (attempt == 0 && t->cache_mask == mask && cache_grow(t) != 0)
			return NULL;
	}
	return NULL;
}

/* Text kept by value. A pointer hint (tag 4) remembers where the same pointer's bytes were
 * stored; it counts only if the bytes are still the same. Otherwise the text is cleaned
 * (UTF-8, length) and looked up by content. */
uint32_t tp_cap_intern_text_at(struct cap_thread *t, const char *s, uint32_t *at)
{
	*at = UINT32_MAX; /* where the stored bytes equal `s` (none if it had to be cleaned) */
	if (s == NULL || s[0] == 0)
		return 0;
	uint64_t ph = ptr_hash(s);
	if (LIKELY(t->cache != NULL)) {
		struct cache_ent *home = home_of(t, ph);
		if (LIKELY(home->tag == 4 && home->key == (const void *)s &&
		           strcmp(t->str + home->off[0], s) == 0)) {
			*at = home->off[0];
			return home->id[0];
		}
		/* The hint may sit a few slots further (its home taken by another key). */
		int hf;
		struct cache_ent *e = home->tag ? cache_find(t, ph, 4, s, NULL, 0, &hf) : NULL;
		if (e && hf && strcmp(t->str + e->off[0], s) == 0) {
			*at = e->off[0];
			return e->id[0];
		}
	}
	char buf[MAX_STR_LEN + 1];
	int same;
	size_t len = tp_cap_clean_text(s, buf, &same);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
	int found;
	struct cache_ent *e = cache_find(t, h, 3, NULL, buf, len, &found);
	uint32_t id, off;
	if (found) {
		id = e->id[0];
		off = e->off[0];
	} else {
		off = t->str_len;
		id = store_str(t, buf, len);
		if (id == 0)
			return 0;
		if (e) {
			e->key = NULL;
			e->hash = h;
			e->id[0] = id;
			e->off[0] = off;
			e->tag = 3;
			t->cache_used++;
		}
	}
	if (same)
		*at = off;
	if (same && t->cache) {
		/* Hint for the next call with this pointer (its bytes equal the stored ones). */
		struct cache_ent *hint = cache_find(t, ph, 4, s, NULL, 0, &found);
		if (hint) {
			if (!found)
				t->cache_used++;
			hint->key = s;
			hint->hash = ph;
			hint->id[0] = id;
			hint->off[0] = off;
			hint->tag = 4;
		}
	}
	return id;
}

static void op_entry_fill(struct cap_thread *t, uint32_t *id, uint32_t *off,
                          const struct tpuprof_op *op)
{
	const char *f[3] = {op->name, op->type, op->post_op};
	for (int k = 0; k < 3; k++)
		id[k] = tp_cap_intern_text_at(t, f[k], &off[k]);
}

/* An operator descriptor: name, type and post-op ids, cached by the descriptor's address and
 * verified by value (a descriptor whose strings changed is interned again). */
const uint32_t *tp_cap_intern_op(struct cap_thread *t, const struct tpuprof_op *op)
{
	uint64_t h = ptr_hash(op);
	if (LIKELY(t->cache != NULL)) {
		struct cache_ent *home = home_of(t, h);
		if (LIKELY(home->tag == 2 && home->key == (const void *)op &&
		           same_text(t, op->name, home->id[0], home->off[0]) &&
		           same_text(t, op->type, home->id[1], home->off[1]) &&
		           same_text(t, op->post_op, home->id[2], home->off[2])))
			return home->id;
	}
	int found;
	struct cache_ent *e = cache_find(t, h, 2, op, NULL, 0, &found);
	if (e && found && same_text(t, op->name, e->id[0], e->off[0]) &&
	    same_text(t, op->type, e->id[1], e->off[1]) &&
	    same_text(t, op->post_op, e->id[2], e->off[2]))
		return e->id;
	uint32_t id[3], off[3];
	op_entry_fill(t, id, off, op);
	/* The slot may have moved if the cache grew while interning. */
	e = cache_find(t, h, 2, op, NULL, 0, &found);
	if (e == NULL) {
		memcpy(t->tmp_ids, id, sizeof id);
		return t->tmp_ids;
	}
	if (!found)
		t->cache_used++;
	e->key = op;
	e->hash = h;
	memcpy(e->id, id, sizeof id);
	memcpy(e->off, off, sizeof off);
	e->tag = 2;
	return e->id;
}
