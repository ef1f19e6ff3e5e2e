/*
 * parts.c — a track's slices set in parts on several threads (struct tp_part in parts.h): each
 * part interns into tables of its own, merged into the track in part order, generation by
 * generation, so that the track's ids are those of one thread setting the slices in order.
 */
#include "model/parts.h"
#include "model/model.h"
#include "model/model_int.h"

#include <string.h>

void tp_part_open(struct tp_part *pt, struct tp_profile *p, int track, size_t first, size_t n,
                  int direct)
{
	*pt = (struct tp_part){.p = p, .track = track, .first = first, .n = n, .direct = direct};
}

static struct tp_track *part_track(const struct tp_part *pt)
{
	return &pt->p->tracks[pt->track];
}

static int part_oom(struct tp_part *pt)
{
	if (pt->direct)
		pt->p->oom = 1;
	else
		pt->oom = 1;
	return TP_ENOMEM;
}

int tp_part_set_label_slow(struct tp_part *pt, struct tp_slice *s, const struct tp_label *l)
{
	uint32_t id;
	if (pt->direct) {
		if (tp_track_label(part_track(pt), l, &id) != TP_OK)
			return part_oom(pt);
		s->label = id;
		return TP_OK;
	}
	/* The track's table is not probed here: tp_track_label moves its label_last even on a
	 * hit, and other parts read the table meanwhile. A label the track already has gets a
	 * part id too, and the merge maps it to the track's. */
	if (pt->gen >= TP_PART_GENS || tp_track_label(&pt->loc[pt->gen], l, &id) != TP_OK)
		return part_oom(pt);
	s->label = TP_PART_LOCAL | (pt->gen ? TP_PART_GEN1 : 0) | id;
	return TP_OK;
}

int tp_part_set_long_dur(struct tp_part *pt, struct tp_slice *s, uint64_t d)
{
	if (pt->direct)
		return tp_slice_set_long_dur(pt->p, part_track(pt), s, d);
	if (pt->gen >= TP_PART_GENS)
		return part_oom(pt);
	/* Kept in the part's table with the slice's place; the merge moves it into the track's. */
	struct tp_track *lt = &pt->loc[pt->gen];
	size_t cap = lt->cap_long_dur;
	uint64_t *v = tp_grow(lt->long_dur, sizeof *v, (size_t)lt->num_long_dur + 1, &cap);
	if (!v)
		return part_oom(pt);
	lt->long_dur = v;
	lt->cap_long_dur = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
	size_t *at = tp_realloc(pt->long_at[pt->gen], cap * sizeof *at);
	if (!at)
		return part_oom(pt);
	pt->long_at[pt->gen] = at;
	at[lt->num_long_dur] = (size_t)(s - part_track(pt)->slices);
	v[lt->num_long_dur++] = d;
	s->dur = TP_SLICE_LONG_DUR; /* its index is the track's, set by the merge */
	return TP_OK;
}

int tp_part_set_cost(struct tp_part *pt, size_t index, const struct tp_cost *c)
{
	if (pt->direct)
		return tp_track_set_cost(pt->p, pt->track, index, c);
	if (index < pt->first || index - pt->first >= pt->n)
		return TP_ERANGE;
	if (pt->gen >= TP_PART_GENS)
		return part_oom(pt);
	if (!pt->cost && !(pt->cost = tp_calloc(pt->n, sizeof *pt->cost)))
		return part_oom(pt);
	uint32_t id = tp_model_cost_intern(&pt->loc[pt->gen], c);
	if (!id)
		return part_oom(pt);
	pt->cost[index - pt->first] = id | (uint32_t)pt->gen << 31;
	return TP_OK;
}

/* Generation g of part pt into its track: labels, long durations, cost entries. */
static int merge_gen(struct tp_part *pt, int g, uint32_t *cost_max)
{
	struct tp_track *t = part_track(pt);
	struct tp_track *lt = &pt->loc[g];
	if (lt->num_labels) {
		pt->map[g] = tp_malloc(lt->num_labels * sizeof *pt->map[g]);
		if (!pt->map[g])
			return TP_ENOMEM;
		for (uint32_t k = 0; k < lt->num_labels; k++)
			if (tp_track_label(t, &lt->labels[k], &pt->map[g][k]) != TP_OK)
				return TP_ENOMEM;
	}
	for (uint32_t k = 0; k < lt->num_long_dur; k++) {
		struct tp_slice *s = &t->slices[pt->long_at[g][k]];
		if (tp_slice_set_long_dur(pt->p, t, s, lt->long_dur[k]) != TP_OK)
			return TP_ENOMEM;
	}
	if (lt->num_cost_dict) {
		pt->cost_map[g] = tp_malloc(lt->num_cost_dict * sizeof *pt->cost_map[g]);
		if (!pt->cost_map[g])
			return TP_ENOMEM;
		for (uint32_t k = 0; k < lt->num_cost_dict; k++) {
			uint32_t id = tp_model_cost_move(t, lt, k + 1);
			if (!id)
				return TP_ENOMEM;
			pt->cost_map[g][k] = id;
			if (id > *cost_max)
				*cost_max = id;
		}
	}
	return TP_OK;
}

int tp_parts_merge(struct tp_part *v, size_t n)
{
	if (!n || v[0].direct)
		return TP_OK;
	struct tp_track *t = part_track(&v[0]);
	uint32_t cost_max = 0;
	int any_cost = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].oom)
			goto oom;
		any_cost |= v[i].cost != NULL;
	}
	for (int g = 0; g < TP_PART_GENS; g++)
		for (size_t i = 0; i < n; i++)
			if (merge_gen(&v[i], g, &cost_max) != TP_OK)
				goto oom;
	if (any_cost && ((t->cost_cap < t->count && tp_model_cost_grow(t) != TP_OK) ||
	                 tp_model_cost_fit(t, cost_max) != TP_OK))
		goto oom;
	return TP_OK;
oom:
	v[0].p->oom = 1;
	return TP_ENOMEM;
}

void tp_part_free(struct tp_part *pt)
{
	for (int g = 0; g < TP_PART_GENS; g++) {
		tp_model_track_free(&pt->loc[g]);
		memset(&pt->loc[g], 0, sizeof pt->loc[g]);
		TP_FREE_ALL(pt->long_at[g], pt->map[g], pt->cost_map[g]);
		pt->long_at[g] = NULL;
		pt->map[g] = pt->cost_map[g] = NULL;
	}
	tp_free(pt->cost);
	pt->cost = NULL;
}

void tp_part_commit(struct tp_part *pt)
{
	if (pt->direct || !pt->n) {
		tp_part_free(pt); /* (an empty track may have no slice array) */
		return;
	}
	struct tp_track *t = part_track(pt);
	struct tp_slice *s = t->slices + pt->first;
	for (size_t i = 0; i < pt->n; i++) {
		uint32_t id = s[i].label;
		if (id & TP_PART_LOCAL)
			s[i].label = pt->map[id & TP_PART_GEN1 ? 1 : 0]
			                    [id & ~(TP_PART_LOCAL | TP_PART_GEN1)];
	}
	for (size_t i = 0; pt->cost && i < pt->n; i++) {
		uint32_t c = pt->cost[i];
		if (c)
			tp_model_cost_put(t, pt->first + i,
			                  pt->cost_map[c >> 31][(c & 0x7FFFFFFFu) - 1]);
	}
	tp_part_free(pt);
}
