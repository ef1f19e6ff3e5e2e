/*
 * cursor.c — the bounds-checked little-endian byte cursor every binary parser reads through.
 * A failed read makes the cursor sticky-bad and records the absolute offset, so a parser can
 * read a whole record and check once.
 */
#include "common/common.h"

#include <string.h>

void tp_cur_init(struct tp_cursor *c, const void *base, size_t len, uint64_t origin)
{
	memset(c, 0, sizeof *c);
	c->base = base;
	c->len = len;
	c->origin = origin;
}

static const uint8_t *take(struct tp_cursor *c, size_t n)
{
	if (c->bad)
		return NULL;
	if (n > c->len - c->pos) {
		c->bad = 1;
		c->bad_at = c->origin + c->pos;
		c->bad_need = n;
		return NULL;
	}
	const uint8_t *p = c->base + c->pos;
	c->pos += n;
	return p;
}

uint8_t tp_cur_u8(struct tp_cursor *c)
{
	const uint8_t *p = take(c, 1);
	return p ? p[0] : 0;
}

uint16_t tp_cur_u16(struct tp_cursor *c)
{
	const uint8_t *p = take(c, 2);
	if (!p)
		return 0;
	return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t tp_cur_u32(struct tp_cursor *c)
{
	const uint8_t *p = take(c, 4);
	return p ? tp_le32(p) : 0;
}

uint64_t tp_cur_u64(struct tp_cursor *c)
{
	const uint8_t *p = take(c, 8);
	return p ? tp_le64(p) : 0;
}

const uint8_t *tp_cur_bytes(struct tp_cursor *c, size_t n)
{
	return take(c, n);
}

int tp_cur_skip(struct tp_cursor *c, size_t n)
{
	return take(c, n) ? 0 : -1;
}

int tp_cur_sub(struct tp_cursor *c, size_t n, struct tp_cursor *sub)
{
	uint64_t at = tp_cur_offset(c);
	const uint8_t *p = take(c, n);
	if (!p) {
		tp_cur_init(sub, NULL, 0, at);
		sub->bad = 1;
		sub->bad_at = at;
		return -1;
	}
	tp_cur_init(sub, p, n, at);
	return 0;
}

uint64_t tp_bits(const uint8_t *p, unsigned lo, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++) {
		unsigned b = lo + i;
		v |= (uint64_t)((p[b >> 3] >> (b & 7)) & 1u) << i;
	}
	return v;
}
