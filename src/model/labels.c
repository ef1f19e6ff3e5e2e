/*
 * labels.c — a track's label table (the distinct (name, type, kind, direction, data type)
 * labels its slices index, interned through an open-addressing hash) and its side table of
 * long durations.
 */
#include "model/model.h"
#include "model/model_int.h"

#include <string.h>

/* A label is 24 bytes without padding (static assert in model.h): compared as bytes and hashed
 * as three 64-bit words (read one by one: an array copy goes through the stack). */
static uint64_t label_word(const struct tp_label *l, size_t i)
{
	uint64_t w;
	memcpy(&w, (const char *)l + 8 * i, sizeof w);
	return w;
}

static uint32_t label_hash(const struct tp_label *l)
{
	uint64_t h = (label_word(l, 0) ^ (label_word(l, 1) * 0x9E3779B97F4A7C15ull) ^
	              (label_word(l, 2) * 0xFF51AFD7ED558CCDull)) *
	             0xC2B2AE3D27D4EB4Full;
	return (uint32_t)(h >> 32);
}

static int label_eq(const struct tp_label *x, const struct tp_label *y)
{
	return ((label_word(x, 0) ^ label_word(y, 0)) | (label_word(x, 1) ^ label_word(y, 1)) |
	        (label_word(x, 2) ^ label_word(y, 2))) == 0;
}

/* Rebuilds the label hash with n slots (a power of two). TP_OK / TP_ENOMEM. */
static int label_rehash(struct tp_track *t, uint32_t n)
{
	uint32_t *slots = tp_calloc(n, sizeof *slots);
	if (!slots)
		return TP_ENOMEM;
	for (uint32_t k = 0; k < t->num_labels; k++)
		tp_slot_put(slots, n - 1, label_hash(&t->labels[k]), k + 1);
	tp_free(t->label_slots);
	t->label_slots = slots;
	t->num_label_slots = n;
	return TP_OK;
}

/* Appends l (not yet in t) at hash slot h, or when h is UINT32_MAX first grows the hash and
 * finds l's slot. Out of line: the lookups that find their label (nearly all) then need few
 * registers. TP_OK / TP_ENOMEM. */
static __attribute__((noinline)) int label_add(struct tp_track *t, const struct tp_label *l,
                                               uint32_t h, uint32_t *id)
{
	if (t->num_labels >= UINT32_MAX / 4)
		return TP_ENOMEM;
	if (h == UINT32_MAX) {
		uint32_t n = t->num_label_slots ? t->num_label_slots : 16;
		while ((t->num_labels + 1) * 2 > n)
			n *= 2;
		if (label_rehash(t, n) != TP_OK)
			return TP_ENOMEM;
		h = label_hash(l) & (t->num_label_slots - 1);
		for (; t->label_slots[h]; h = (h + 1) & (t->num_label_slots - 1)) {
			uint32_t k = t->label_slots[h] - 1;
			if (label_eq(&t->labels[k], l)) {
				*id = t->label_last = k;
				return TP_OK;
			}
		}
	}
	size_t cap = t->cap_labels;
	struct tp_label *v = tp_grow(t->labels, sizeof *v, (size_t)t->num_labels + 1, &cap);
	if (!v)
		return TP_ENOMEM;
	t->labels = v;
	t->cap_labels = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
	v[t->num_labels] = *l;
	t->label_slots[h] = t->num_labels + 1;
	*id = t->label_last = t->num_labels++;
	return TP_OK;
}

int tp_track_label(struct tp_track *t, const struct tp_label *l, uint32_t *id)
{
	*id = 0;
	if (t->num_labels && label_eq(&t->labels[t->label_last], l)) {
		*id = t->label_last;
		return TP_OK;
	}
	if ((t->num_labels + 1) * 2 > t->num_label_slots)
		return label_add(t, l, UINT32_MAX, id); /* the hash must grow first */
	uint32_t h = label_hash(l) & (t->num_label_slots - 1);
	for (; t->label_slots[h]; h = (h + 1) & (t->num_label_slots - 1)) {
		uint32_t k = t->label_slots[h] - 1;
		if (label_eq(&t->labels[k], l)) {
			*id = t->label_last = k;
			return TP_OK;
		}
	}
	return label_add(t, l, h, id);
}

int tp_slice_set_long_dur(struct tp_profile *p, struct tp_track *t, struct tp_slice *s, uint64_t d)
{
	/* Rare (host activities, raw counters before unwrapping): an entry of the side table.
	 * Entries are only added, never reused: a slice copied from elsewhere may carry an
	 * index that is not this track's. */
	size_t cap = t->cap_long_dur;
	uint64_t *v = t->num_long_dur < TP_SLICE_LONG_DUR - 1
	                  ? tp_grow(t->long_dur, sizeof *v, (size_t)t->num_long_dur + 1, &cap)
	                  : NULL;
	if (!v) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	t->long_dur = v;
	t->cap_long_dur = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
	v[t->num_long_dur] = d;
	s->dur = TP_SLICE_LONG_DUR | t->num_long_dur++;
	return TP_OK;
}
