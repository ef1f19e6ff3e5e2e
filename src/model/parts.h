/*
 * parts.h — a track's slices set in parts on several threads (parts.c).
 */
#ifndef TP_MODEL_PARTS_H
#define TP_MODEL_PARTS_H

#include "model/model.h"

/*
 * A part of a track: a range of its slices whose labels, long durations and cost entries a
 * worker sets while other parts of the same track are set on other threads. What a part
 * interns goes to tables of its own (a slice's label is then a part id, TP_PART_LOCAL set);
 * tp_parts_merge interns the parts' tables into the track in part order, and tp_part_commit
 * rewrites each part's slices to the track's ids. The ids are those one thread setting the
 * slices in order would give. A part may set in generations (tp_part_next_gen): everything of
 * generation 0 of every part is merged before generation 1's, as one thread would set all of
 * the track's slices once and then all of them again. A direct part (the track's only one)
 * sets the track itself, as the tp_slice_set_* functions do.
 *
 * Between opening and committing, only the part's own functions may read or set its slices'
 * labels and cost entries, and a slice given a duration of 2^31 ns or more reads its end only
 * after the commit.
 */
#define TP_PART_GENS 2
#define TP_PART_LOCAL 0x80000000u
#define TP_PART_GEN1 0x40000000u /* with TP_PART_LOCAL: a label of generation 1 */
struct tp_part {
	struct tp_profile *p;
	int track;
	size_t first, n; /* slices [first, first + n) of the track */
	int direct;
	int gen;
	int oom;
	/* per generation: the labels, cost entries and long durations new to the part */
	struct tp_track loc[TP_PART_GENS];
	uint32_t *cost;                /* n entries: 0 none, else the local cost id | gen << 31 */
	size_t *long_at[TP_PART_GENS]; /* the slices given loc[gen].long_dur's entries */
	uint32_t *map[TP_PART_GENS];   /* local label id -> the track's */
	uint32_t *cost_map[TP_PART_GENS];
};
/* Opens part pt over slices [first, first + n) of track `track` of p. Allocates nothing. */
void tp_part_open(struct tp_part *pt, struct tp_profile *p, int track, size_t first, size_t n,
                  int direct);
/* What the part sets from now on belongs to the next generation. */
static inline void tp_part_next_gen(struct tp_part *pt)
{
	pt->gen++;
}
/* What the part sets from now on belongs to generation g (< TP_PART_GENS). Each generation has
 * tables of its own, so a part that sets each of its slices in generation 0 and then in 1,
 * slice after slice, interns what a part setting all of them in 0 and then all in 1 would. */
static inline void tp_part_set_gen(struct tp_part *pt, int g)
{
	pt->gen = g;
}
static inline const struct tp_label *tp_part_label_at(const struct tp_part *pt, uint32_t id)
{
	if (!(id & TP_PART_LOCAL))
		return &pt->p->tracks[pt->track].labels[id];
	return &pt->loc[id & TP_PART_GEN1 ? 1 : 0].labels[id & ~(TP_PART_LOCAL | TP_PART_GEN1)];
}
/* Sets the label of slice s (one of the part's). TP_OK; TP_ENOMEM (pt->oom, or the profile's
 * oom flag for a direct part; s keeps its label). */
int tp_part_set_label_slow(struct tp_part *pt, struct tp_slice *s, const struct tp_label *l);
static inline int tp_part_set_label(struct tp_part *pt, struct tp_slice *s,
                                    const struct tp_label *l)
{
	if (memcmp(tp_part_label_at(pt, s->label), l, sizeof *l) == 0)
		return TP_OK; /* unchanged */
	return tp_part_set_label_slow(pt, s, l);
}
static inline int tp_part_set_name(struct tp_part *pt, struct tp_slice *s, uint32_t name)
{
	const struct tp_label *c = tp_part_label_at(pt, s->label);
	if (c->name == name)
		return TP_OK;
	struct tp_label l = *c;
	l.name = name;
	return tp_part_set_label_slow(pt, s, &l);
}
/* tp_slice_set_start_cycle and tp_slice_set_end for the part's slice s. */
static inline int tp_part_set_start_cycle(struct tp_part *pt, struct tp_slice *s, uint64_t cycle)
{
	s->start_cycle_lo = (uint32_t)cycle;
	const struct tp_label *c = tp_part_label_at(pt, s->label);
	if (c->cycle_hi == (uint32_t)(cycle >> 32))
		return TP_OK;
	struct tp_label l = *c;
	l.cycle_hi = (uint32_t)(cycle >> 32);
	return tp_part_set_label_slow(pt, s, &l);
}
int tp_part_set_long_dur(struct tp_part *pt, struct tp_slice *s, uint64_t d);
static inline int tp_part_set_end(struct tp_part *pt, struct tp_slice *s, int64_t end_ns)
{
	uint64_t d = (uint64_t)end_ns - (uint64_t)s->start_ns;
	if (d < TP_SLICE_LONG_DUR) {
		s->dur = (uint32_t)d;
		return TP_OK;
	}
	return tp_part_set_long_dur(pt, s, d);
}
/* tp_track_set_cost for the part's slice `index` (of the track). */
int tp_part_set_cost(struct tp_part *pt, size_t index, const struct tp_cost *c);
/* Interns what parts v[0..n) of one track (in the order of their slices) set into the track,
 * in part order generation by generation. On the calling thread, once no part is being set.
 * TP_OK / TP_ENOMEM (also when a part ran out of memory; sets the profile's oom flag). */
int tp_parts_merge(struct tp_part *v, size_t n);
/* Rewrites the part's slices to the track's ids and frees what the part holds. After
 * tp_parts_merge; parts of a track may be committed on different threads. */
void tp_part_commit(struct tp_part *pt);
/* Frees what the part holds (without committing: on an error path). */
void tp_part_free(struct tp_part *pt);

#endif /* TP_MODEL_PARTS_H */
