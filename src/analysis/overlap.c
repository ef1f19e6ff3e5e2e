/*
 * overlap.c — the measured concurrency of a core: the time its TIU and some DMA engine are
 * both busy, from the unions of their busy (non-sys) command intervals. The unions are
 * streamed from the sorted tracks without a copy when that works, else built as arrays of
 * intervals, sorted by merging the tracks' runs.
 */
#include "analysis/analysis_int.h"

#include <stdlib.h>

struct ival {
	int64_t b, e;
};

static int ival_cmp(const void *x, const void *y)
{
	const struct ival *a = x, *b = y;
	return (a->b > b->b) - (a->b < b->b);
}

/* Appends the busy (non-sys) commands of a track as intervals [start, end]. */
static int ival_add(struct ival **v, size_t *n, size_t *cap, const struct tp_track *t)
{
	/* Room for the whole track at once: no growth slack or copies on large dumps. */
	if (t->count && *n + t->count > *cap) {
		struct ival *nv = tp_realloc(*v, (*n + t->count) * sizeof *nv);
		if (!nv)
			return TP_ENOMEM;
		*v = nv;
		*cap = *n + t->count;
	}
	for (size_t i = 0; i < t->count; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (tp_slice_kind(t, s) != TP_CMD_NORMAL)
			continue;
		struct ival *nv = tp_grow(*v, sizeof *nv, *n + 1, cap);
		if (!nv)
			return TP_ENOMEM;
		*v = nv;
		nv[(*n)++] = (struct ival){s->start_ns, tp_slice_end(t, s)};
	}
	return TP_OK;
}

/* Sorts v[0..n) by start, the concatenation of `nruns` runs starting at runs[0] = 0, runs[1],
 * ... Each run is one track's slices, usually already in start order (tp_profile_finish):
 * then the runs are merged (a stable merge, the order qsort's merge sort gives too) instead
 * of sorted. Returns TP_OK or TP_ENOMEM. */
static int ival_sort(struct ival *v, size_t n, const size_t *runs, size_t nruns)
{
	for (size_t r = 0; r < nruns; r++) {
		size_t b = runs[r], e = r + 1 < nruns ? runs[r + 1] : n;
		for (size_t k = b + 1; k < e; k++)
			if (v[k - 1].b > v[k].b) {
				qsort(v, n, sizeof *v, ival_cmp);
				return TP_OK;
			}
	}
	if (nruns < 2)
		return TP_OK;
	struct ival *tmp = tp_malloc(n * sizeof *tmp);
	if (!tmp)
		return TP_ENOMEM;
	for (size_t r = 1; r < nruns; r++) {
		size_t mid = runs[r], e = r + 1 < nruns ? runs[r + 1] : n;
		size_t i = 0, j = mid, o = 0;
		while (i < mid && j < e)
			tmp[o++] = v[j].b < v[i].b ? v[j++] : v[i++];
		while (i < mid)
			tmp[o++] = v[i++];
		while (j < e)
			tmp[o++] = v[j++];
		memcpy(v, tmp, e * sizeof *v);
	}
	tp_free(tmp);
	return TP_OK;
}

/* Merges sorted intervals in place; returns the new count and the union length. */
static size_t ival_union(struct ival *v, size_t n, int64_t *len)
{
	*len = 0;
	if (!n)
		return 0;
	size_t m = 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i].b <= v[m].e) {
			if (v[i].e > v[m].e)
				v[m].e = v[i].e;
		} else
			v[++m] = v[i];
	}
	for (size_t i = 0; i <= m; i++)
		*len += v[i].e - v[i].b;
	return m + 1;
}

static int64_t ival_overlap(const struct ival *x, size_t nx, const struct ival *y, size_t ny)
{
	int64_t o = 0;
	size_t i = 0, j = 0;
	while (i < nx && j < ny) {
		int64_t b = x[i].b > y[j].b ? x[i].b : y[j].b;
		int64_t e = x[i].e < y[j].e ? x[i].e : y[j].e;
		if (e > b)
			o += e - b;
		if (x[i].e < y[j].e)
			i++;
		else
			j++;
	}
	return o;
}

/* Busy intervals of a set of tracks merged into their union, streamed in start order without
 * a copy: each track is sorted by start (tp_profile_finish), so the next interval is the
 * smallest next busy slice among the tracks, and touching or overlapping ones are merged as
 * ival_union does. */
struct ustream {
	const struct tp_track **t;
	size_t *pos;
	size_t nt;
};

/* The next busy slice start among the tracks (its track in *k), 0 if none. */
static int ustream_peek(struct ustream *u, size_t *k)
{
	int found = 0;
	for (size_t j = 0; j < u->nt; j++) {
		const struct tp_track *t = u->t[j];
		while (u->pos[j] < t->count &&
		       tp_slice_kind(t, &t->slices[u->pos[j]]) != TP_CMD_NORMAL)
			u->pos[j]++;
		if (u->pos[j] < t->count && (!found || t->slices[u->pos[j]].start_ns <
		                                           u->t[*k]->slices[u->pos[*k]].start_ns)) {
			*k = j;
			found = 1;
		}
	}
	return found;
}

static int ustream_next(struct ustream *u, struct ival *out)
{
	size_t k = 0;
	if (!ustream_peek(u, &k))
		return 0;
	const struct tp_slice *s = &u->t[k]->slices[u->pos[k]++];
	*out = (struct ival){s->start_ns, tp_slice_end(u->t[k], s)};
	while (ustream_peek(u, &k)) {
		s = &u->t[k]->slices[u->pos[k]];
		if (s->start_ns > out->e)
			break;
		if (tp_slice_end(u->t[k], s) > out->e)
			out->e = tp_slice_end(u->t[k], s);
		u->pos[k]++;
	}
	return 1;
}

/* Measured concurrency of one core from the streamed unions; 0 if a track is out of start
 * order (a profile tp_profile_finish did not see), then core_overlap copies and sorts. */
static int core_overlap_stream(const struct tp_profile *p, struct tp_core_stats *c, int *done)
{
	*done = 0;
	const struct tp_track **t = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *t);
	size_t *pos = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *pos);
	if (!t || !pos) {
		tp_free(t);
		tp_free(pos);
		return TP_ENOMEM;
	}
	/* TIU tracks first, then the DMA ones: the two streams share the arrays. */
	size_t ntiu = 0, n = 0;
	int ok = 1;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < p->num_tracks; i++) {
			const struct tp_track *x = &p->tracks[i];
			if (x->device != c->device || x->core != c->core ||
			    !tp_analysis_is_engine(x->kind) ||
			    (x->kind == TP_TRACK_TIU) != (pass == 0))
				continue;
			for (size_t k = 1; k < x->count && ok; k++)
				if (x->slices[k - 1].start_ns > x->slices[k].start_ns)
					ok = 0;
			t[n++] = x;
			ntiu += pass == 0;
		}
	if (ok) {
		struct ustream tu = {t, pos, ntiu}, du = {t + ntiu, pos + ntiu, n - ntiu};
		int64_t tl = 0, dl = 0, o = 0;
		struct ival x, y;
		int hx = ustream_next(&tu, &x), hy = ustream_next(&du, &y);
		if (hx)
			tl += x.e - x.b;
		if (hy)
			dl += y.e - y.b;
		while (hx && hy) {
			int64_t b = x.b > y.b ? x.b : y.b, e = x.e < y.e ? x.e : y.e;
			if (e > b)
				o += e - b;
			if (x.e < y.e) {
				if ((hx = ustream_next(&tu, &x)))
					tl += x.e - x.b;
			} else if ((hy = ustream_next(&du, &y))) {
				dl += y.e - y.b;
			}
		}
		while (hx && (hx = ustream_next(&tu, &x)))
			tl += x.e - x.b;
		while (hy && (hy = ustream_next(&du, &y)))
			dl += y.e - y.b;
		c->eng[TP_TRACK_TIU].union_ns = tl;
		c->overlap_ns = o;
		int64_t mn = tl < dl ? tl : dl;
		c->concurrency = mn > 0 ? (double)c->overlap_ns / (double)mn : 0;
		*done = 1;
	}
	tp_free(t);
	tp_free(pos);
	return TP_OK;
}

int tp_analysis_core_overlap(const struct tp_profile *p, struct tp_core_stats *c)
{
	int done, st = core_overlap_stream(p, c, &done);
	if (st != TP_OK || done)
		return st;
	struct ival *tv = NULL, *dv = NULL;
	size_t tn = 0, tc = 0, dn = 0, dc = 0;
	size_t truns[8] = {0}, druns[8] = {0}, ntr = 0, ndr = 0; /* where each track's run starts */
	for (size_t i = 0; i < p->num_tracks && st == TP_OK; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (t->device != c->device || t->core != c->core || !tp_analysis_is_engine(t->kind))
			continue;
		if (t->kind == TP_TRACK_TIU) {
			if (ntr < 8)
				truns[ntr] = tn;
			ntr++;
			st = ival_add(&tv, &tn, &tc, t);
		} else {
			if (ndr < 8)
				druns[ndr] = dn;
			ndr++;
			st = ival_add(&dv, &dn, &dc, t);
		}
	}
	/* More than 8 tracks of a kind on one core (not a layout any reader makes): sorted whole.
	 */
	if (st == TP_OK && tn && ntr > 8)
		qsort(tv, tn, sizeof *tv, ival_cmp);
	else if (st == TP_OK)
		st = ival_sort(tv, tn, truns, ntr);
	if (st == TP_OK && dn && ndr > 8)
		qsort(dv, dn, sizeof *dv, ival_cmp);
	else if (st == TP_OK)
		st = ival_sort(dv, dn, druns, ndr);
	if (st == TP_OK) {
		int64_t tl, dl;
		tn = ival_union(tv, tn, &tl);
		dn = ival_union(dv, dn, &dl);
		c->eng[TP_TRACK_TIU].union_ns = tl;
		c->overlap_ns = ival_overlap(tv, tn, dv, dn);
		int64_t mn = tl < dl ? tl : dl;
		c->concurrency = mn > 0 ? (double)c->overlap_ns / (double)mn : 0;
	}
	tp_free(tv);
	tp_free(dv);
	return st;
}
