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

void *tp_arena_alloc(struct tp_arena *a, size_t n)
{
	if (n > SIZE_MAX - 16)
		return NULL;
	size_t need = (n + 15) & ~(size_t)15;
	struct tp_arena_chunk *c = a->head;
	if (!c || c->size - c->used < need) {
		size_t sz = need > a->chunk_size ? need : a->chunk_size;
		if (sz > SIZE_MAX - sizeof *c)
			return NULL;
		c = tp_malloc(sizeof *c + sz);
		if (!c)
			return NULL;
		c->size = sz;
		c->used = 0;
		/* Oversized blocks go behind the current chunk so its free space stays usable. */
		if (a->head && need > a->chunk_size) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
		a->reserved += sz;
	}
	void *p = c->data + c->used;
	c->used += need;
	a->used += need;
	memset(p, 0, n);
	return p;
}

char *tp_arena_strndup(struct tp_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *r = tp_arena_alloc(a, n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = 0;
	}
	return r;
}

char *tp_arena_strdup(struct tp_arena *a, const char *s) { return tp_arena_strndup(a, s, strlen(s)); }

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
