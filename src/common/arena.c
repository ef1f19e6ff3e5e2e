/*
 * arena.c — chunked bump allocator. Chunks are heap blocks linked newest-first; an allocation
 * larger than the chunk size gets a chunk of its own. Everything is released at once.
 */
#include "common/common.h"

#include <string.h>

struct tp_arena_chunk {
	struct tp_arena_chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

void tp_arena_init(struct tp_arena *a, size_t chunk_size)
{
	memset(a, 0, sizeof *a);
	a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
}

/* n zeroed bytes at a multiple of `align` (1 or 16) in the current chunk, or in a new one. */
static void *take(struct tp_arena *a, size_t n, size_t align)
{
	if (n > SIZE_MAX - 16)
		return NULL;
	struct tp_arena_chunk *c = a->head;
	size_t off = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || off > c->size || c->size - off < n) {
		size_t sz = n > a->chunk_size ? n : a->chunk_size;
		if (sz > SIZE_MAX - sizeof *c)
			return NULL;
		struct tp_arena_chunk *nc = tp_malloc(sizeof *nc + sz);
		if (!nc)
			return NULL;
		nc->size = sz;
		nc->used = 0;
		/* Oversized blocks go behind the current chunk so its free space stays usable. */
		if (c && n > a->chunk_size) {
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		a->reserved += sz;
		c = nc;
		off = 0;
	}
	void *p = c->data + off;
	c->used = off + n;
	a->used += n;
	memset(p, 0, n);
	return p;
}

void *tp_arena_alloc(struct tp_arena *a, size_t n)
{
	if (n > SIZE_MAX - 16)
		return NULL;
	return take(a, (n + 15) & ~(size_t)15, 16);
}

/* Strings are packed byte by byte (no alignment): millions of short layer names. */
char *tp_arena_strndup(struct tp_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *r = take(a, n + 1, 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = 0;
	}
	return r;
}

char *tp_arena_strdup(struct tp_arena *a, const char *s)
{
	return tp_arena_strndup(a, s, strlen(s));
}

void tp_arena_free(struct tp_arena *a)
{
	struct tp_arena_chunk *c = a->head;
	while (c) {
		struct tp_arena_chunk *n = c->next;
		tp_free(c);
		c = n;
	}
	a->head = NULL;
	a->used = a->reserved = 0;
}
