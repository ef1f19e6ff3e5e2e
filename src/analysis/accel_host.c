/*
 * accel_host.c — host time by operator for the accelerator analysis: the self (exclusive)
 * time of every operator, runtime call, annotation and step on the host threads, i.e. its
 * duration minus what its nested children cover, summed by name so the rows add up to the
 * threads' busy time. The profiler's envelope and bookkeeping, instants and async ranges are
 * left out. Steps share one row (name 0): the time of the steps spent outside any operator.
 * Also counts the host threads that hold any of them (struct tp_accel.host_threads). Owns, for
 * one call, its per-track scratch arrays.
 */
#include "analysis/accel_int.h"

#include <string.h>

static int counted(enum tp_work w)
{
	return w == TP_WORK_OP || w == TP_WORK_RUNTIME || w == TP_WORK_STEP ||
	       w == TP_WORK_ANNOTATION;
}

struct host_scan {
	const struct acc_ctx *c;
	const struct tp_track *tr;
	struct rowmap *m;
	int64_t *child; /* per slice: time its direct children cover */
	size_t *stk;    /* open slices, innermost last */
	size_t depth, cap;
	size_t seen; /* slices counted on the track */
};

/* Slice k is closed: its self time goes to its row. */
static int close_slice(struct host_scan *h, size_t k)
{
	const struct tp_slice *s = &h->tr->slices[k];
	enum tp_work w = tp_work_of(&h->c->w, tp_slice_type(h->tr, s));
	struct tp_accel_row *r =
	    tp_accel_row_get(h->m, w == TP_WORK_STEP ? 0 : tp_slice_name(h->tr, s), (uint8_t)w);
	if (!r)
		return TP_ENOMEM;
	int64_t dur = tp_slice_dur(h->tr, s), self = dur - h->child[k];
	r->count++;
	r->total_ns += self > 0 ? self : 0;
	r->incl_ns += dur;
	return TP_OK;
}

/* One host thread's slices (sorted by start, longest first), nested by a stack. */
static int host_track(struct host_scan *h)
{
	const struct tp_track *tr = h->tr;
	h->depth = h->seen = 0;
	memset(h->child, 0, tr->count * sizeof *h->child);
	for (size_t k = 0; k < tr->count; k++) {
		const struct tp_slice *s = &tr->slices[k];
		if (!counted(tp_work_of(&h->c->w, tp_slice_type(tr, s))))
			continue;
		int64_t end = tp_slice_end(tr, s);
		h->seen++;
		while (h->depth &&
		       tp_slice_end(tr, &tr->slices[h->stk[h->depth - 1]]) <= s->start_ns)
			if (close_slice(h, h->stk[--h->depth]))
				return TP_ENOMEM;
		if (h->depth) {
			size_t up = h->stk[h->depth - 1];
			int64_t pend = tp_slice_end(tr, &tr->slices[up]);
			h->child[up] += (end < pend ? end : pend) - s->start_ns;
		}
		size_t *v = tp_grow(h->stk, sizeof *v, h->depth + 1, &h->cap);
		if (!v)
			return TP_ENOMEM;
		h->stk = v;
		h->stk[h->depth++] = k;
	}
	while (h->depth)
		if (close_slice(h, h->stk[--h->depth]))
			return TP_ENOMEM;
	return TP_OK;
}

int tp_accel_host_rows(struct acc_ctx *c)
{
	const struct tp_profile *p = c->p;
	struct rowmap m = {0};
	struct host_scan h = {.c = c, .m = &m};
	size_t most = 0;
	for (size_t t = 0; t < p->num_tracks; t++)
		if (c->role[t] == ACC_HOST && p->tracks[t].count > most)
			most = p->tracks[t].count;
	h.child = tp_malloc((most ? most : 1) * sizeof *h.child);
	int st = h.child ? TP_OK : TP_ENOMEM;
	for (size_t t = 0; t < p->num_tracks && st == TP_OK; t++) {
		if (c->role[t] != ACC_HOST)
			continue;
		h.tr = &p->tracks[t];
		st = host_track(&h);
		c->a->host_threads += h.seen > 0;
	}
	for (size_t i = 0; i < m.n && st == TP_OK; i++)
		c->a->host_self_ns += m.v[i].total_ns;
	if (st == TP_OK)
		st = tp_accel_rows_top(p, &m, c->a->host_self_ns, &c->a->host, &c->a->nhost,
		                       &c->a->host_rows);
	tp_free(h.child);
	tp_free(h.stk);
	tp_accel_rows_free(&m);
	return st;
}
