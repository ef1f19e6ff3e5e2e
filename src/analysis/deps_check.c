/*
 * deps_check.c — tp_deps_check (deps_check.h): for each core, the TIU commands' waits on GDMA
 * commands and the GDMA commands' waits on TIU commands, each against the partner's end.
 * Owns only the scratch index of the partner track of each side being checked.
 */
#include "analysis/deps_check.h"

#include <stdlib.h>
#include <string.h>

int tp_id_end_cmp(const void *x, const void *y)
{
	const struct tp_id_end *a = x, *b = y;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The end of the unique command of v[0..n) with cmd_id id; 0 when none or several. *at is
 * where the last lookup ended: a command's dependency mostly follows the previous one's, so
 * the next few entries are tried before a binary search. */
static int find_end(const struct tp_id_end *v, size_t n, uint32_t id, size_t *at, int64_t *end)
{
	const struct tp_id_end *hit = NULL;
	for (size_t i = *at; i < n && i < *at + 4; i++)
		if (v[i].id >= id) {
			if (v[i].id == id)
				hit = &v[i];
			break;
		}
	if (!hit) {
		struct tp_id_end key = {id, 0};
		hit = bsearch(&key, v, n, sizeof *v, tp_id_end_cmp);
		if (!hit)
			return 0;
		while (hit > v && hit[-1].id == id) /* bsearch may land on any of equal ids */
			hit--;
	}
	*at = (size_t)(hit - v);
	if ((hit > v && hit[-1].id == id) || (hit + 1 < v + n && hit[1].id == id))
		return 0;
	*end = hit->end;
	return 1;
}

/* The commands of track t with a cmd_id, sorted by it (*out, caller frees). */
static int index_track(const struct tp_track *t, struct tp_id_end **out, size_t *n)
{
	*n = 0;
	*out = tp_malloc((t->count ? t->count : 1) * sizeof **out);
	if (!*out)
		return TP_ENOMEM;
	int sorted = 1;
	for (size_t i = 0; i < t->count; i++)
		if (t->slices[i].cmd_id) {
			struct tp_id_end e = {t->slices[i].cmd_id, tp_slice_end(t, &t->slices[i])};
			if (*n && (*out)[*n - 1].id > e.id)
				sorted = 0;
			(*out)[(*n)++] = e;
		}
	if (!sorted) /* PMU records come in id order but for restarts */
		qsort(*out, *n, sizeof **out, tp_id_end_cmp);
	return TP_OK;
}

/* The waits of track t's commands on the partner's commands v[0..n). */
static void check_track(const struct tp_track *t, const struct tp_id_end *v, size_t n,
                        struct tp_deps_report *r)
{
	size_t at = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		int64_t end;
		if (!s->dep_id || !find_end(v, n, s->dep_id, &at, &end))
			continue;
		r->checked++;
		if (s->start_ns >= end)
			continue;
		if (!r->violated++) {
			r->device = t->device;
			r->core = t->core;
			r->kind = (enum tp_track_kind)t->kind;
			r->cmd_id = s->cmd_id;
			r->dep_id = s->dep_id;
			r->start_ns = s->start_ns;
			r->dep_end = end;
		}
	}
}

/* One side of a core's check: track t's waits on its partner's commands. A core's TIU side
 * comes before its GDMA side, so that merged in order the first violation is the one a single
 * pass over the core (TIU, then GDMA) finds. */
struct side_check {
	const struct tp_track *t, *partner;
	struct tp_deps_report r;
	int rc;
};

static void check_side(void *arg, size_t k)
{
	struct side_check *c = (struct side_check *)arg + k;
	struct tp_id_end *v;
	size_t n;
	if ((c->rc = index_track(c->partner, &v, &n)) != TP_OK)
		return;
	check_track(c->t, v, n, &c->r);
	tp_free(v);
}

int tp_deps_check_jobs(const struct tp_profile *p, unsigned jobs, struct tp_deps_report *r)
{
	memset(r, 0, sizeof *r);
	struct side_check *c = tp_calloc(2 * (p->num_tracks ? p->num_tracks : 1), sizeof *c);
	if (!c)
		return TP_ENOMEM;
	size_t nc = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (t->kind != TP_TRACK_TIU)
			continue;
		int g = tp_profile_find_track(p, t->device, t->core, TP_TRACK_GDMA);
		if (g >= 0) {
			c[nc++] = (struct side_check){.t = t, .partner = &p->tracks[g]};
			c[nc++] = (struct side_check){.t = &p->tracks[g], .partner = t};
		}
	}
	/* Each side of each core on its own; merged in track order. */
	tp_par_run(jobs ? jobs : 1, nc, check_side, c);
	int rc = TP_OK;
	for (size_t k = 0; k < nc && rc == TP_OK; k++) {
		if ((rc = c[k].rc) != TP_OK)
			break;
		if (c[k].r.violated && !r->violated)
			*r = (struct tp_deps_report){.device = c[k].r.device,
			                             .core = c[k].r.core,
			                             .kind = c[k].r.kind,
			                             .cmd_id = c[k].r.cmd_id,
			                             .dep_id = c[k].r.dep_id,
			                             .start_ns = c[k].r.start_ns,
			                             .dep_end = c[k].r.dep_end,
			                             .checked = r->checked};
		r->checked += c[k].r.checked;
		r->violated += c[k].r.violated;
	}
	tp_free(c);
	return rc;
}

int tp_deps_check(const struct tp_profile *p, struct tp_deps_report *r)
{
	return tp_deps_check_jobs(p, 1, r);
}
