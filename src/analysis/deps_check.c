/*
 * deps_check.c — tp_deps_check (deps_check.h): for each core, the TIU commands' waits on GDMA
 * commands and the GDMA commands' waits on TIU commands, each against the partner's end.
 * Owns only the scratch index of each track being checked.
 */
#include "analysis/deps_check.h"

#include <stdlib.h>
#include <string.h>

/* Parts large against a job's start, small against a track of a million commands. */
#define DEPS_PART 65536

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

/* The waits of slices [lo, hi) of track t on the partner's commands v[0..n). */
static void check_range(const struct tp_track *t, size_t lo, size_t hi, const struct tp_id_end *v,
                        size_t n, struct tp_deps_report *r)
{
	size_t at = 0;
	for (size_t i = lo; i < hi; i++) {
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

/*
 * The check in parts of `part` slices, each a job of tp_par_run, so that a core's two tracks
 * use more than two threads. Per track (each is the other's partner): the commands with a
 * cmd_id are copied per part into the track's index, which is closed up and sorted by id when
 * the parts did not find it sorted. Then per part of each side its
 * waits are checked; the parts' reports are merged in order (a core's TIU side before its GDMA
 * side, slices in order), so the first violation is the one a single pass finds.
 */
struct deps_track {
	const struct tp_track *t;
	struct tp_id_end *v; /* the index: the commands with a cmd_id, by id */
	size_t n;
	size_t part0, nparts; /* its parts in deps_run.part */
	int sorted;
};

struct deps_part {
	struct deps_track *dt;            /* the track the part is of */
	const struct deps_track *partner; /* whose index its waits are looked up in */
	size_t lo, hi;                    /* slices [lo, hi) */
	size_t ids;                       /* its commands with a cmd_id */
	uint32_t first, last;             /* the first and last of those ids */
	int sorted;                       /* they are in id order */
	int oom;                          /* side_job could not index its partner */
	struct tp_deps_report r;
};

struct deps_run {
	struct deps_track *trk;
	struct deps_part *part;
};

/* Copies the part's commands with a cmd_id into its track's index from the part's first slice
 * on (the index has a place per slice), noting how many and whether they are in id order. */
static void part_copy(void *arg, size_t k)
{
	struct deps_part *q = &((struct deps_run *)arg)->part[k];
	const struct tp_track *t = q->dt->t;
	struct tp_id_end *o = q->dt->v + q->lo;
	/* In locals, stored once: another thread checks a neighbouring part, whose report
	 * shares these fields' cache lines. */
	size_t ids = q->ids;
	uint32_t first = q->first, last = q->last;
	int sorted = 1;
	for (size_t i = q->lo; i < q->hi; i++) {
		uint32_t id = t->slices[i].cmd_id;
		if (!id)
			continue;
		if (!ids)
			first = id;
		else if (id < last)
			sorted = 0;
		last = id;
		o[ids++] = (struct tp_id_end){id, tp_slice_end(t, &t->slices[i])};
	}
	q->ids = ids;
	q->first = first;
	q->last = last;
	q->sorted = sorted;
}

/* Room for track t's index: a place per slice. */
static struct tp_id_end *index_alloc(const struct tp_track *t)
{
	return tp_malloc((t->count ? t->count : 1) * sizeof(struct tp_id_end));
}

static void track_sort(void *arg, size_t k)
{
	struct deps_track *dt = &((struct deps_run *)arg)->trk[k];
	if (!dt->sorted) /* PMU records come in id order but for restarts */
		qsort(dt->v, dt->n, sizeof *dt->v, tp_id_end_cmp);
}

static void part_check(void *arg, size_t k)
{
	struct deps_part *q = &((struct deps_run *)arg)->part[k];
	/* On a copy, for the reason part_copy gives. */
	struct tp_deps_report r = q->r;
	check_range(q->dt->t, q->lo, q->hi, q->partner->v, q->partner->n, &r);
	q->r = r;
}

/* With every track one part: job k indexes track k's partner (the one part of the partner is
 * part k ^ 1) and checks track k against it at once, while the index is in the cache. Each
 * index is then built once, by the one job that reads it. */
static void side_job(void *arg, size_t k)
{
	struct deps_run *x = arg;
	struct deps_track *dt = &x->trk[k ^ 1];
	/* The partner's index only while this side is checked: one per thread at a time. */
	if (!(dt->v = index_alloc(dt->t))) {
		x->part[k].oom = 1;
		return;
	}
	part_copy(arg, k ^ 1);
	dt->n = x->part[k ^ 1].ids;
	dt->sorted = x->part[k ^ 1].sorted;
	track_sort(arg, k ^ 1);
	part_check(arg, k);
	tp_free(dt->v);
	dt->v = NULL;
}

/* Each track's index closed up where slices had no cmd_id (moved on this thread: rare), and
 * whether it is sorted already. */
static void index_close(struct deps_run *x, size_t ntrk)
{
	for (size_t i = 0; i < ntrk; i++) {
		struct deps_track *dt = &x->trk[i];
		dt->sorted = 1;
		uint32_t last = 0;
		for (size_t q = dt->part0; q < dt->part0 + dt->nparts; q++) {
			struct deps_part *pq = &x->part[q];
			if (dt->n != pq->lo)
				memmove(dt->v + dt->n, dt->v + pq->lo, pq->ids * sizeof *dt->v);
			dt->n += pq->ids;
			if (!pq->ids)
				continue;
			if (!pq->sorted || pq->first < last)
				dt->sorted = 0;
			last = pq->last;
		}
	}
}

int tp_deps_check_parts(const struct tp_profile *p, unsigned jobs, size_t part,
                        struct tp_deps_report *r)
{
	memset(r, 0, sizeof *r);
	jobs = jobs ? jobs : 1;
	/* Each core's TIU and GDMA tracks, TIU first, in track order. */
	/* (two entries per TIU track: tracks are not unique per core in every profile) */
	struct deps_run x = {tp_calloc(2 * (p->num_tracks ? p->num_tracks : 1), sizeof *x.trk),
	                     NULL};
	if (!x.trk)
		return TP_ENOMEM;
	size_t ntrk = 0, nparts = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		int g = t->kind == TP_TRACK_TIU
		            ? tp_profile_find_track(p, t->device, t->core, TP_TRACK_GDMA)
		            : -1;
		if (g < 0)
			continue;
		x.trk[ntrk++].t = t;
		x.trk[ntrk++].t = &p->tracks[g];
	}
	/* Tracks in parts only when threads outnumber them: the parts' index pass reads every
	 * slice once more than side_job does. */
	if (!part)
		part = jobs > ntrk ? DEPS_PART : SIZE_MAX;
	for (size_t i = 0; i < ntrk; i++) {
		x.trk[i].part0 = nparts;
		/* (an empty track is one empty part, so that unsplit tracks are one part each) */
		x.trk[i].nparts = tp_split_count(x.trk[i].t->count, part);
		nparts += x.trk[i].nparts;
	}
	int rc = TP_ENOMEM;
	x.part = tp_calloc(nparts ? nparts : 1, sizeof *x.part);
	if (!x.part)
		goto out;
	for (size_t i = 0; i < ntrk; i++)
		for (size_t q = 0; q < x.trk[i].nparts; q++) {
			struct deps_part *pq = &x.part[x.trk[i].part0 + q];
			pq->dt = &x.trk[i];
			pq->partner = &x.trk[i ^ 1]; /* a core's two tracks are adjacent */
			tp_split_at(x.trk[i].t->count, x.trk[i].nparts, q, &pq->lo, &pq->hi);
		}
	if (nparts == ntrk) {
		tp_par_run(jobs, ntrk, side_job, &x);
		for (size_t k = 0; k < nparts; k++)
			if (x.part[k].oom)
				goto out;
	} else {
		for (size_t i = 0; i < ntrk; i++)
			if (!(x.trk[i].v = index_alloc(x.trk[i].t)))
				goto out;
		tp_par_run(jobs, nparts, part_copy, &x);
		index_close(&x, ntrk);
		tp_par_run(jobs, ntrk, track_sort, &x);
		tp_par_run(jobs, nparts, part_check, &x);
	}
	for (size_t k = 0; k < nparts; k++) {
		const struct tp_deps_report *c = &x.part[k].r;
		uint64_t checked = r->checked + c->checked, violated = r->violated + c->violated;
		if (c->violated && !r->violated)
			*r = *c; /* the first violation in part order: one pass's */
		r->checked = checked;
		r->violated = violated;
	}
	rc = TP_OK;
out:
	for (size_t i = 0; i < ntrk; i++)
		tp_free(x.trk[i].v);
	TP_FREE_ALL(x.trk, x.part);
	return rc;
}

int tp_deps_check_jobs(const struct tp_profile *p, unsigned jobs, struct tp_deps_report *r)
{
	return tp_deps_check_parts(p, jobs, 0, r);
}

int tp_deps_check(const struct tp_profile *p, struct tp_deps_report *r)
{
	return tp_deps_check_jobs(p, 1, r);
}
