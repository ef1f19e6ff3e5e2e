/*
 * cost.c — a track's cost entries: one narrow id per slice (1, 2 or 4 bytes) indexing a
 * dictionary of distinct entries packed in 16 bytes (struct tp_cost_pk in model.h), with the
 * entries that do not fit kept whole in cost_big.
 */
#include "model/model.h"
#include "model/model_int.h"

#include <string.h>

int tp_model_cost_grow(struct tp_track *t)
{
	size_t n = t->cap > t->count ? t->cap : t->count;
	if (!t->cost_width)
		t->cost_width = 1;
	if (n > SIZE_MAX / t->cost_width)
		return TP_ENOMEM;
	char *c = tp_realloc(t->cost, n * t->cost_width);
	if (!c)
		return TP_ENOMEM;
	memset(c + t->cost_cap * t->cost_width, 0, (n - t->cost_cap) * t->cost_width);
	t->cost = c;
	t->cost_cap = n;
	return TP_OK;
}

/* Widens t's cost array until id v fits (1 -> 2 -> 4 bytes per entry), converting the
 * entries in place from the last one down (an entry's new place never overlaps an earlier
 * entry's old one). TP_OK / TP_ENOMEM (the array is unchanged). */
int tp_model_cost_fit(struct tp_track *t, uint32_t v)
{
	unsigned w = v <= UINT8_MAX ? 1 : v <= UINT16_MAX ? 2 : 4;
	if (w <= t->cost_width)
		return TP_OK;
	if (t->cost_cap > SIZE_MAX / w)
		return TP_ENOMEM;
	void *c = tp_realloc(t->cost, t->cost_cap * w);
	if (!c)
		return TP_ENOMEM;
	struct tp_track old = *t;
	old.cost = c;
	t->cost = c;
	t->cost_width = (uint8_t)w;
	for (size_t i = t->cost_cap; i-- > 0;)
		tp_model_cost_put(t, i, tp_model_cost_at(&old, i));
	return TP_OK;
}

#define PK_OPS_BITS 40
#define PK_BIG ((uint64_t)1 << 63)

static uint32_t pk_hash(const struct tp_cost_pk *e)
{
	uint64_t h = (e->w[0] ^ (e->w[1] * 0x9E3779B97F4A7C15ull)) * 0xC2B2AE3D27D4EB4Full;
	return (uint32_t)(h >> 32);
}

/* Rebuilds the dictionary's hash with n slots (a power of two). TP_OK / TP_ENOMEM. */
static int dict_rehash(struct tp_track *t, uint32_t n)
{
	uint32_t *slots = tp_calloc(n, sizeof *slots);
	if (!slots)
		return TP_ENOMEM;
	for (uint32_t k = 0; k < t->num_cost_dict; k++) {
		if (t->cost_dict[k].w[1] & PK_BIG)
			continue;
		tp_slot_put(slots, n - 1, pk_hash(&t->cost_dict[k]), k + 1);
	}
	tp_free(t->cost_slots);
	t->cost_slots = slots;
	t->num_cost_slots = n;
	return TP_OK;
}

/* The dictionary index + 1 of entry e, added if new (big entries are never shared). 0 on out
 * of memory. */
static uint32_t dict_put(struct tp_track *t, const struct tp_cost_pk *e)
{
	if (t->num_cost_dict >= UINT32_MAX / 2 - 1)
		return 0;
	if ((t->num_cost_dict + 1) * 2 > t->num_cost_slots || !t->cost_slots) {
		uint32_t n = t->num_cost_slots ? t->num_cost_slots : 64;
		while ((t->num_cost_dict + 1) * 2 > n)
			n *= 2;
		if (dict_rehash(t, n) != TP_OK)
			return 0;
	}
	uint32_t h = 0;
	if (!(e->w[1] & PK_BIG)) {
		h = pk_hash(e) & (t->num_cost_slots - 1);
		for (; t->cost_slots[h]; h = (h + 1) & (t->num_cost_slots - 1)) {
			const struct tp_cost_pk *d = &t->cost_dict[t->cost_slots[h] - 1];
			if (d->w[0] == e->w[0] && d->w[1] == e->w[1])
				return t->cost_slots[h];
		}
	}
	size_t cap = t->cap_cost_dict;
	struct tp_cost_pk *v = tp_grow(t->cost_dict, sizeof *v, (size_t)t->num_cost_dict + 1, &cap);
	if (!v)
		return 0;
	t->cost_dict = v;
	t->cap_cost_dict = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
	v[t->num_cost_dict] = *e;
	uint32_t id = ++t->num_cost_dict;
	if (!(e->w[1] & PK_BIG))
		t->cost_slots[h] = id;
	return id;
}

uint32_t tp_model_cost_intern(struct tp_track *t, const struct tp_cost *c)
{
	struct tp_cost_pk e;
	const uint64_t ops_max = ((uint64_t)1 << PK_OPS_BITS) - 1;
	if (c->alg_ops <= ops_max && c->uarch_ops <= ops_max && c->init_cycle < 256 &&
	    c->bank_cycle < 64 && c->valid <= 1) {
		e.w[0] = c->alg_ops | c->uarch_ops << PK_OPS_BITS;
		e.w[1] = c->uarch_ops >> (64 - PK_OPS_BITS) | (uint64_t)c->alg_cycle << 16 |
		         (uint64_t)c->init_cycle << 48 | (uint64_t)c->bank_cycle << 56 |
		         (uint64_t)c->valid << 62;
	} else {
		/* Rare (absurd dimensions): the whole entry goes to the side array. */
		struct tp_cost *v =
		    tp_grow(t->cost_big, sizeof *v, t->num_cost_big + 1, &t->cap_cost_big);
		if (!v)
			return 0;
		t->cost_big = v;
		v[t->num_cost_big] = *c;
		e.w[0] = t->num_cost_big++;
		e.w[1] = PK_BIG;
	}
	return dict_put(t, &e);
}

int tp_track_set_cost(struct tp_profile *p, int track, size_t index, const struct tp_cost *c)
{
	struct tp_track *t = &p->tracks[track];
	if (index >= t->count)
		return TP_ERANGE;
	if (t->cost_cap < t->count && tp_model_cost_grow(t) != TP_OK) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	uint32_t id = tp_model_cost_intern(t, c);
	if (!id || tp_model_cost_fit(t, id) != TP_OK) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	tp_model_cost_put(t, index, id);
	return TP_OK;
}

void tp_cost_ratios(struct tp_cost *c, uint64_t asic_cycle)
{
	/* The vendor's expressions (get_tiu_info): no guard on the Asic Cycle, which the 1e-4
	 * keeps from being a zero denominator. */
	double asic = (double)asic_cycle + 1e-4;
	c->uarch_rate = c->uarch_ops ? (double)c->alg_ops / (double)c->uarch_ops : 0;
	c->init_ratio = (double)c->init_cycle / asic;
	c->bank_ratio = (double)c->bank_cycle / asic;
}

/* The figures of entry id (1 + its dictionary index) of t, ratios not yet filled. */
static void entry_at(const struct tp_track *t, uint32_t id, struct tp_cost *out)
{
	const struct tp_cost_pk *e = &t->cost_dict[id - 1];
	if (e->w[1] & PK_BIG) {
		*out = t->cost_big[e->w[0]];
		return;
	}
	const uint64_t ops_max = ((uint64_t)1 << PK_OPS_BITS) - 1;
	*out = (struct tp_cost){
	    .alg_ops = e->w[0] & ops_max,
	    .uarch_ops = e->w[0] >> PK_OPS_BITS | (e->w[1] & 0xFFFF) << (64 - PK_OPS_BITS),
	    .alg_cycle = (uint32_t)(e->w[1] >> 16),
	    .init_cycle = (uint32_t)(e->w[1] >> 48 & 0xFF),
	    .bank_cycle = (uint32_t)(e->w[1] >> 56 & 0x3F),
	    .valid = (uint8_t)(e->w[1] >> 62 & 1),
	};
}

int tp_track_get_cost(const struct tp_track *t, size_t i, struct tp_cost *out)
{
	uint32_t id = t->cost && i < t->count && i < t->cost_cap ? tp_model_cost_at(t, i) : 0;
	if (!id) {
		*out = (struct tp_cost){0};
		return 0;
	}
	entry_at(t, id, out);
	tp_cost_ratios(out, t->slices[i].cycles);
	return out->valid;
}

uint32_t tp_model_cost_move(struct tp_track *t, const struct tp_track *from, uint32_t id)
{
	struct tp_cost c;
	entry_at(from, id, &c);
	return tp_model_cost_intern(t, &c);
}
