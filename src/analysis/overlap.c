/*
 * overlap.c — the measured concurrency of a core: the time its TIU and some DMA engine are
 * both busy, from the unions of their busy (non-sys) command intervals. The unions are
 * streamed from the sorted tracks without a copy, in windows of time on several threads
 * (tp_overlap_*); a core with a track out of start order has them built as arrays of
 * intervals, sorted by merging the tracks' runs (tp_analysis_core_overlap).
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
	size_t *pos, *end; /* each track's next slice and its limit */
	size_t nt;
};

/* The next busy slice start among the tracks (its track in *k), 0 if none. */
static int ustream_peek(struct ustream *u, size_t *k)
{
	int found = 0;
	for (size_t j = 0; j < u->nt; j++) {
		const struct tp_track *t = u->t[j];
		size_t end = u->end[j];
		while (u->pos[j] < end && tp_slice_kind(t, &t->slices[u->pos[j]]) != TP_CMD_NORMAL)
			u->pos[j]++;
		if (u->pos[j] < end && (!found || t->slices[u->pos[j]].start_ns <
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

/* Core c's figures from its TIU union's length tl, its DMA union's dl and their overlap ov. */
static void set_overlap(struct tp_core_stats *c, int64_t tl, int64_t dl, int64_t ov)
{
	c->eng[TP_TRACK_TIU].union_ns = tl;
	c->overlap_ns = ov;
	int64_t mn = tl < dl ? tl : dl;
	c->concurrency = mn > 0 ? (double)ov / (double)mn : 0;
}

int tp_analysis_core_overlap(const struct tp_profile *p, struct tp_core_stats *c)
{
	int st = TP_OK;
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
		set_overlap(c, tl, dl, ival_overlap(tv, tn, dv, dn));
	}
	tp_free(tv);
	tp_free(dv);
	return st;
}

/* ---- In time windows, on several threads ----------------------------------------------- */

/* Windows of a core at most: the scan's per-window arrays stay small on a core of many
 * millions of slices. */
#define OV_MAX_WINDOWS 256

/* Tracks of a core at most for the windows (a sweep keeps their positions on its stack); a
 * core with more, which no reader makes, takes tp_analysis_core_overlap. */
#define OV_SWEEP_TRACKS 16

/* Core c's overlap in windows of time [at[w], at[w + 1]): each stream's union restricted to a
 * window is the union of its slices that start there, clipped at the window's end, and of
 * [at[w], latest end of the slices that start before it) (every earlier slice that reaches
 * into the window covers its start). Lengths and overlaps of disjoint windows add up, so the
 * sums are the one sweep's. */
struct tp_overlap {
	const struct tp_track **t; /* TIU tracks, then the DMA ones */
	size_t nt, ntiu, nw;
	int64_t *at;        /* nw + 1 bounds */
	size_t *lo, *hi;    /* [w * nt + j]: track j's slices that start in window w */
	int64_t *maxe;      /* [w * 2 + stream]: latest end of a busy slice starting in w */
	int64_t *carry;     /* [w * 2 + stream]: latest end of a busy slice starting before w */
	int64_t *sums;      /* [w * 3]: TIU union, DMA union, overlap */
	unsigned char *bad; /* [w]: a track out of start order in its part of the indices */
};

void tp_overlap_free(struct tp_overlap *o)
{
	if (o)
		TP_FREE_ALL(o->t, o->at, o->lo, o->hi, o->maxe, o->carry, o->sums, o->bad);
	tp_free(o);
}

/* The first slice of track t that starts at or after x (binary search: t in start order). */
static size_t first_at(const struct tp_track *t, int64_t x)
{
	size_t a = 0, b = t->count;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (t->slices[m].start_ns < x)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

int tp_overlap_plan(const struct tp_profile *p, const struct tp_core_stats *c,
                    struct tp_overlap **out)
{
	*out = NULL;
	struct tp_overlap *o = tp_calloc(1, sizeof *o);
	if (!o || !(o->t = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *o->t))) {
		tp_overlap_free(o);
		return TP_ENOMEM;
	}
	size_t total = 0;
	const struct tp_track *widest = NULL;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < p->num_tracks; i++) {
			const struct tp_track *x = &p->tracks[i];
			if (x->device != c->device || x->core != c->core ||
			    !tp_analysis_is_engine(x->kind) ||
			    (x->kind == TP_TRACK_TIU) != (pass == 0))
				continue;
			o->t[o->nt++] = x;
			o->ntiu += pass == 0;
			total += x->count;
			if (!widest || x->count > widest->count)
				widest = x;
		}
	size_t nw = tp_split_count(total, TP_ANALYSIS_PART);
	nw = nw > OV_MAX_WINDOWS ? OV_MAX_WINDOWS : nw;
	o->at = tp_malloc((nw + 1) * sizeof *o->at);
	if (!o->at) {
		tp_overlap_free(o);
		return TP_ENOMEM;
	}
	/* Bounds at evenly spaced starts of the core's largest track, strictly increasing. */
	o->at[0] = INT64_MIN;
	size_t k = 1;
	for (size_t w = 1; w < nw; w++) {
		int64_t x = widest->slices[widest->count / nw * w].start_ns;
		if (x > o->at[k - 1])
			o->at[k++] = x;
	}
	o->nw = k;
	o->at[k] = INT64_MAX;
	o->lo = tp_malloc(o->nw * o->nt * sizeof *o->lo);
	o->hi = tp_malloc(o->nw * o->nt * sizeof *o->hi);
	o->maxe = tp_malloc(o->nw * 2 * sizeof *o->maxe);
	o->carry = tp_malloc(o->nw * 2 * sizeof *o->carry);
	o->sums = tp_calloc(o->nw * 3, sizeof *o->sums);
	o->bad = tp_calloc(o->nw, 1);
	if (!o->lo || !o->hi || !o->maxe || !o->carry || !o->sums || !o->bad) {
		tp_overlap_free(o);
		return TP_ENOMEM;
	}
	if (o->nt > OV_SWEEP_TRACKS)
		o->bad[0] = 1; /* tp_overlap_carry then sends the core to the whole-core path */
	*out = o;
	return TP_OK;
}

size_t tp_overlap_windows(const struct tp_overlap *o)
{
	return o ? o->nw : 0;
}

void tp_overlap_scan(struct tp_overlap *o, size_t w)
{
	o->maxe[2 * w] = o->maxe[2 * w + 1] = INT64_MIN;
	for (size_t j = 0; j < o->nt; j++) {
		const struct tp_track *t = o->t[j];
		/* The start order, over this window's share of the indices (and the pair before
		 * it): the bounds below assume it. */
		size_t a, b;
		tp_split_at(t->count, o->nw, w, &a, &b);
		for (size_t i = a ? a : 1; i < b; i++)
			if (t->slices[i - 1].start_ns > t->slices[i].start_ns)
				o->bad[w] = 1;
		size_t lo = w ? first_at(t, o->at[w]) : 0;
		size_t hi = w + 1 < o->nw ? first_at(t, o->at[w + 1]) : t->count;
		o->lo[w * o->nt + j] = lo;
		o->hi[w * o->nt + j] = hi;
		/* In a local: the next window's figures share this cache line, and another thread
		 * scans that window. */
		int64_t m = o->maxe[2 * w + (j >= o->ntiu)];
		for (size_t i = lo; i < hi; i++)
			if (tp_slice_kind(t, &t->slices[i]) == TP_CMD_NORMAL &&
			    tp_slice_end(t, &t->slices[i]) > m)
				m = tp_slice_end(t, &t->slices[i]);
		o->maxe[2 * w + (j >= o->ntiu)] = m;
	}
}

int tp_overlap_carry(struct tp_overlap *o)
{
	int64_t c[2] = {INT64_MIN, INT64_MIN};
	for (size_t w = 0; w < o->nw; w++) {
		if (o->bad[w])
			return 0;
		for (int s = 0; s < 2; s++) {
			o->carry[2 * w + s] = c[s];
			if (o->maxe[2 * w + s] > c[s])
				c[s] = o->maxe[2 * w + s];
		}
	}
	return 1;
}

/* One stream's union inside a window: the carried interval first, then the stream's merged
 * slices clipped at the window's end, touching or overlapping ones merged. */
struct wstream {
	struct ustream u;
	int64_t cb, ce, end; /* the carried interval [cb, ce) when ce > cb; the window's end */
	struct ival next;
	int has_next;
};

static int wstream_raw(struct wstream *s, struct ival *iv)
{
	if (s->ce > s->cb) {
		*iv = (struct ival){s->cb, s->ce < s->end ? s->ce : s->end};
		s->ce = s->cb;
		return 1;
	}
	if (!ustream_next(&s->u, iv))
		return 0;
	if (iv->e > s->end)
		iv->e = s->end;
	return 1;
}

static int wstream_next(struct wstream *s, struct ival *out)
{
	if (s->has_next)
		*out = s->next, s->has_next = 0;
	else if (!wstream_raw(s, out))
		return 0;
	struct ival x;
	while (wstream_raw(s, &x)) {
		if (x.b > out->e) {
			s->next = x;
			s->has_next = 1;
			break;
		}
		if (x.e > out->e)
			out->e = x.e;
	}
	return 1;
}

void tp_overlap_sweep(struct tp_overlap *o, size_t w)
{
	/* The positions advance once per slice: on the stack, not in o->lo, whose next window's
	 * share of a cache line another thread sweeps. */
	size_t pos[OV_SWEEP_TRACKS], end[OV_SWEEP_TRACKS];
	memcpy(pos, &o->lo[w * o->nt], o->nt * sizeof *pos);
	memcpy(end, &o->hi[w * o->nt], o->nt * sizeof *end);
	int64_t b0 = o->at[w], e0 = o->at[w + 1];
	struct wstream ts = {
	    .u = {o->t, pos, end, o->ntiu}, .cb = b0, .ce = o->carry[2 * w], .end = e0};
	struct wstream ds = {.u = {o->t + o->ntiu, pos + o->ntiu, end + o->ntiu, o->nt - o->ntiu},
	                     .cb = b0,
	                     .ce = o->carry[2 * w + 1],
	                     .end = e0};
	int64_t tl = 0, dl = 0, ov = 0;
	struct ival x, y;
	int hx = wstream_next(&ts, &x), hy = wstream_next(&ds, &y);
	if (hx)
		tl += x.e - x.b;
	if (hy)
		dl += y.e - y.b;
	while (hx && hy) {
		int64_t b = x.b > y.b ? x.b : y.b, e = x.e < y.e ? x.e : y.e;
		if (e > b)
			ov += e - b;
		if (x.e < y.e) {
			if ((hx = wstream_next(&ts, &x)))
				tl += x.e - x.b;
		} else if ((hy = wstream_next(&ds, &y))) {
			dl += y.e - y.b;
		}
	}
	while (hx && (hx = wstream_next(&ts, &x)))
		tl += x.e - x.b;
	while (hy && (hy = wstream_next(&ds, &y)))
		dl += y.e - y.b;
	o->sums[3 * w] = tl;
	o->sums[3 * w + 1] = dl;
	o->sums[3 * w + 2] = ov;
}

void tp_overlap_finish(const struct tp_overlap *o, struct tp_core_stats *c)
{
	int64_t tl = 0, dl = 0, ov = 0;
	for (size_t w = 0; w < o->nw; w++) {
		tl += o->sums[3 * w];
		dl += o->sums[3 * w + 1];
		ov += o->sums[3 * w + 2];
	}
	set_overlap(c, tl, dl, ov);
}
