/*
 * model_int.h — declarations shared by the model's own files (profile.c, labels.c, cost.c,
 * layers.c, layer_touch.c, args.c, finish.c) and its unit test; not for other modules, which use
 * model.h.
 */
#ifndef TP_MODEL_INT_H
#define TP_MODEL_INT_H

#include "model/model.h"

/* Appends one element of `elem` bytes to a (ptr, num, cap) table; returns its index or -1
 * (and sets the profile's sticky oom flag). Inline: it is on every reader's append path. */
static inline long tp_model_push(struct tp_profile *p, void *arrp, size_t elem, size_t *num,
                                 size_t *cap, const void *val)
{
	void **arr = arrp;
	void *np = tp_grow(*arr, elem, *num + 1, cap);
	if (!np) {
		p->oom = 1;
		return -1;
	}
	*arr = np;
	memcpy((char *)np + *num * elem, val, elem);
	return (long)(*num)++;
}
#define PUSH(p, arr, num, cap, val)                                                                \
	tp_model_push((p), &(p)->arr, sizeof *(p)->arr, &(p)->num, &(p)->cap, &(val))

/* The cost id of slice i of t (i < cost_cap), whatever the array's width. */
static inline uint32_t tp_model_cost_at(const struct tp_track *t, size_t i)
{
	switch (t->cost_width) {
	case 1:
		return ((const uint8_t *)t->cost)[i];
	case 2:
		return ((const uint16_t *)t->cost)[i];
	default:
		return ((const uint32_t *)t->cost)[i];
	}
}

/* Stores id v for slice i (v must fit cost_width: see tp_model_cost_fit). */
static inline void tp_model_cost_put(struct tp_track *t, size_t i, uint32_t v)
{
	switch (t->cost_width) {
	case 1:
		((uint8_t *)t->cost)[i] = (uint8_t)v;
		break;
	case 2:
		((uint16_t *)t->cost)[i] = (uint16_t)v;
		break;
	default:
		((uint32_t *)t->cost)[i] = v;
		break;
	}
}

/* Gives track t a zeroed cost entry for each slice it has room for (1 byte each on first
 * use). TP_OK / TP_ENOMEM. */
int tp_model_cost_grow(struct tp_track *t);
/* Interns cost entry c in t's dictionary (a big entry goes to cost_big, never shared) and
 * returns its id (1 + its index), or 0 on out of memory. The slices' array is untouched. */
uint32_t tp_model_cost_intern(struct tp_track *t, const struct tp_cost *c);
/* Interns entry `id` of track from's dictionary in t's; returns t's id, or 0 on out of
 * memory. */
uint32_t tp_model_cost_move(struct tp_track *t, const struct tp_track *from, uint32_t id);
/* Widens t's cost array until id v fits. TP_OK / TP_ENOMEM (the array is unchanged). */
int tp_model_cost_fit(struct tp_track *t, uint32_t v);
/* Gives a track that has kept LOCAL memory records (lmemrec.c) an entry for each slice it
 * has room for; nothing for one without. TP_OK / TP_ENOMEM. */
int tp_model_lmem_fit(struct tp_track *t);

/* tp_profile_layer_touch when layer i (< num_layers) keeps its compact record: done there,
 * returns 1; else changes nothing and returns 0 (the touch needs a side-table entry, which
 * tp_profile_layer_touch makes). Touches only layer i's record. */
int tp_model_layer_touch_rec(struct tp_profile *p, size_t i, int64_t begin, int64_t end, int tiu,
                             uint32_t cmd_id);
/* Bytes the layer table holds (records, chunk pointers and side tables), for tests. */
size_t tp_profile_layer_bytes(const struct tp_profile *p);
/* Frees the layer table's arrays and zeroes it. */
void tp_model_layer_tab_free(struct tp_layer_table *t);
/* Frees what track t owns (its slices and their side arrays); t itself is left as it was. */
void tp_model_track_free(struct tp_track *t);

#endif /* TP_MODEL_INT_H */
