/*
 * flowid.c — the flow ids of tp_sink_drive's edges (sink_int.h): each drawn edge gets the
 * smallest id free over its flow's lifetime, so ids stay small. The sweep that decides them
 * runs in segments on several threads, each checked in order against the one before it, so
 * the ids are those of one sweep whatever the thread count.
 *
 * Owns, for one call: the walks' positions at the segments' times, each segment's states
 * (the flows open at its start and end) and its heaps; the ids go into the plan's array.
 */
#include <stdlib.h>
#include <string.h>

#include "writers/sink/sink_int.h"

DEFINE_PQ(item_pq, struct item_pq, struct heap_item, item_less, item_heap)

/* The smallest free flow id: a bitmap of freed ids (bit k = id k + 1) with every word below
 * `lo` zero, so finding the smallest is a scan from lo that usually stops at once. */
struct idset {
	uint64_t *w;
	size_t nw, cap, lo;
};

static int idset_put(struct idset *f, uint64_t id)
{
	size_t k = (size_t)((id - 1) / 64);
	if (k >= f->nw) {
		uint64_t *nw = tp_grow(f->w, sizeof *f->w, k + 1, &f->cap);
		if (!nw)
			return TP_ENOMEM;
		f->w = nw;
		memset(f->w + f->nw, 0, (k + 1 - f->nw) * sizeof *f->w);
		f->nw = k + 1;
	}
	f->w[k] |= (uint64_t)1 << ((id - 1) % 64);
	if (k < f->lo)
		f->lo = k;
	return TP_OK;
}

/* Takes the smallest id in the set; 0 when it is empty. */
static uint64_t idset_take(struct idset *f)
{
	while (f->lo < f->nw && !f->w[f->lo])
		f->lo++;
	if (f->lo == f->nw)
		return 0;
	unsigned b = (unsigned)__builtin_ctzll(f->w[f->lo]);
	f->w[f->lo] &= f->w[f->lo] - 1;
	return (uint64_t)f->lo * 64 + b + 1;
}

/* Flow ids are only needed while a flow is open (Perfetto ends a flow at its
 * terminating_flow_ids event, after which the id may start another flow). Giving every flow
 * the smallest id free over its lifetime [source start, waiter start] keeps ids tiny, which
 * makes the fixed64 ids of a compressed trace nearly free, instead of ~4 bytes per flow. A
 * freed id is reused only by a flow that starts strictly later, so equal timestamps on two
 * sequences (whose order the reader does not promise) can never pair the wrong ends.
 * Flows are taken in source-start order by merging the source-order walks of the source
 * plan tracks (source_iter; each in start order, as a track's slices are) through a heap of their
 * heads, ties broken by source plan track, then source index and edge index (the walk's order);
 * a source slice keeps all its flows, in that order. Memory O(tracks +
 * open flows + the walks' heaps), no copy of the edge list.
 *
 * The sweep is split into segments (one per SWEEP_SEG_EDGES edges, at most SWEEP_SEGS) at a fixed
 * grid of times over the sources (the data's, not the thread count's), swept on several threads
 * (tp_sink_flow_ids). What a segment needs from the ones before it is the sweep's state where it
 * starts: the open flows (waiter start at or after the segment's start, id), every other id being
 * free (struct sweep_state; a few entries: ids stay small). Each segment guesses it by sweeping
 * from fresh state a quarter of a grid cell earlier (the warm-up, which writes nothing) and records
 * the state it found at its start and the state at its end. In segment order the driving thread
 * compares each segment's guess with the previous segment's end state: where they are the
 * same, the segment's ids are those of one sweep over everything (the sweep from equal states
 * is the same); where not, the segment is swept again from the true state on the driving
 * thread. So the ids never depend on the thread count, only the work does. */
#define SWEEP_SEGS 64        /* at most */
#define SWEEP_SEG_EDGES 1024 /* at least, on average: fewer edges, fewer segments */
#define SWEEP_WIDE 1         /* a segment's status: an id does not fit the array's width */

/* The sweep's state at a time T: the open flows whose waiter starts at or after T, as (waiter
 * start, id) in item_less order; every other id is free. */
struct sweep_state {
	struct heap_item *a;
	size_t n;
};

static int item_cmp(const void *x, const void *y)
{
	return item_less(x, y) ? -1 : item_less(y, x);
}

/* Takes the open flows of busy with waiter start >= t into *s (sorted); TP_OK or TP_ENOMEM. */
static int sweep_state_take(const struct item_pq *busy, int64_t t, struct sweep_state *s)
{
	size_t most = busy->h.n + (busy->qn - busy->qh);
	s->n = 0;
	s->a = tp_malloc((most ? most : 1) * sizeof *s->a);
	if (!s->a)
		return TP_ENOMEM;
	for (size_t i = 0; i < busy->h.n; i++)
		if (busy->h.a[i].key >= t)
			s->a[s->n++] = busy->h.a[i];
	for (size_t i = busy->qh; i < busy->qn; i++)
		if (busy->q[i].key >= t)
			s->a[s->n++] = busy->q[i];
	qsort(s->a, s->n, sizeof *s->a, item_cmp);
	return TP_OK;
}

static int sweep_state_same(const struct sweep_state *x, const struct sweep_state *y)
{
	for (size_t i = 0; x->n == y->n && i < x->n; i++)
		if (x->a[i].key != y->a[i].key || x->a[i].id != y->a[i].id)
			return 0;
	return x->n == y->n;
}

/* Sets busy, freed and *next to state s: its flows open, every other id free. */
static int sweep_state_load(const struct sweep_state *s, struct item_pq *busy, struct idset *freed,
                            uint64_t *next)
{
	uint64_t top = 0;
	for (size_t i = 0; i < s->n; i++)
		top = s->a[i].id > top ? s->a[i].id : top;
	uint8_t *open = tp_calloc(top + 1, 1); /* top <= the edges: ids stay below them */
	if (!open)
		return TP_ENOMEM;
	int st = TP_OK;
	for (size_t i = 0; i < s->n && !st; i++) {
		open[s->a[i].id] = 1;
		st = item_pq_push(busy, &s->a[i]);
	}
	for (uint64_t id = 1; id <= top && !st; id++)
		if (!open[id])
			st = idset_put(freed, id);
	tp_free(open);
	*next = top;
	return st;
}

/* One sweep: its walks it[dt] at their current edges cur[dt] (where have[dt]), starting from
 * state `from` (NULL: fresh), over sources before tend; ids are stored only for sources at
 * or after twrite, at the array's width (sweep_put; SWEEP_WIDE when an id does not fit). The
 * state at twrite goes to *at and the one at tend to *end when not NULL. TP_OK, SWEEP_WIDE or
 * TP_ENOMEM. */
struct sweep_span {
	struct source_iter *it;
	struct pulled_edge *cur;
	const int *have;
	const struct sweep_state *from;
	int64_t twrite, tend;
	struct sweep_state *at, *end;
};

/* flow_get and flow_set for the segments, which run on several threads: relaxed atomic loads
 * and stores at the array's width, which stays fixed meanwhile. A segment's warm-up reads
 * the ids of edges another segment stores, only to know whether they are EDGE_DROPPED, which
 * no store writes or overwrites. */
static uint32_t sweep_get(const struct plan *pl, uint32_t e)
{
	if (pl->fw == 1) {
		uint8_t v = __atomic_load_n(&pl->flow[e], __ATOMIC_RELAXED);
		return v == UINT8_MAX ? EDGE_DROPPED : v;
	}
	if (pl->fw == 2) {
		uint16_t v = __atomic_load_n((uint16_t *)(void *)pl->flow + e, __ATOMIC_RELAXED);
		return v == UINT16_MAX ? EDGE_DROPPED : v;
	}
	return __atomic_load_n((uint32_t *)(void *)pl->flow + e, __ATOMIC_RELAXED);
}

static int sweep_put(struct plan *pl, uint32_t e, uint32_t id)
{
	if (pl->fw == 1 && id < UINT8_MAX)
		__atomic_store_n(&pl->flow[e], (uint8_t)id, __ATOMIC_RELAXED);
	else if (pl->fw == 2 && id < UINT16_MAX)
		__atomic_store_n((uint16_t *)(void *)pl->flow + e, (uint16_t)id, __ATOMIC_RELAXED);
	else if (pl->fw == 4)
		__atomic_store_n((uint32_t *)(void *)pl->flow + e, id, __ATOMIC_RELAXED);
	else
		return SWEEP_WIDE;
	return TP_OK;
}

static int sweep_run(struct plan *pl, const struct sweep_span *sp)
{
	struct heap heads = {0};
	struct item_pq busy = {0}; /* open flows: (waiter's start, flow id) */
	struct idset freed = {0};
	uint64_t next = 0;
	int st = sp->from ? sweep_state_load(sp->from, &busy, &freed, &next) : TP_OK, taken = 0;
	for (size_t dt = 0; dt < pl->ndts && !st; dt++)
		if (sp->have[dt] && slice_ns(pl, (uint32_t)dt, sp->cur[dt].src) < sp->tend)
			st = heap_push(&heads, slice_ns(pl, (uint32_t)dt, sp->cur[dt].src), dt);
	while (heads.n && !st) {
		struct heap_item h = item_heap_pop(&heads);
		uint32_t dt = (uint32_t)h.id;
		struct pulled_edge *x = &sp->cur[dt];
		for (;;) {
			int64_t src_ns = h.key;
			if (src_ns >= sp->twrite && !taken++ && sp->at &&
			    (st = sweep_state_take(&busy, sp->twrite, sp->at)))
				break;
			uint32_t flow = sweep_get(pl, x->e);
			if (flow != EDGE_DROPPED) {
				const struct heap_item *m;
				while ((m = item_pq_min(&busy)) && m->key < src_ns && !st) {
					struct heap_item done = item_pq_pop(&busy);
					st = idset_put(&freed, done.id);
				}
				if (st)
					break;
				uint64_t id = idset_take(&freed);
				flow = (uint32_t)(id ? id : ++next);
				if (src_ns >= sp->twrite) /* else the warm-up: nothing stored */
					st = sweep_put(pl, x->e, flow);
				if (st ||
				    (st = item_pq_push(
				         &busy,
				         &(struct heap_item){
				             slice_ns(pl, pl->runs[x->run].dst_dt, x->dst), flow})))
					break;
			}
			/* The walk's next edge: taken at once while it still precedes every other
			 * walk's head (the same order as pushing it and popping the minimum). */
			int k = tp_sink_source_iter_next(pl, &sp->it[dt], x);
			if (k <= 0) {
				st = k;
				break;
			}
			struct heap_item nx = {slice_ns(pl, dt, x->src), dt};
			if (nx.key >= sp->tend)
				break;
			if (heads.n && !item_less(&nx, &heads.a[0])) {
				st = heap_push(&heads, nx.key, nx.id);
				break;
			}
			h = nx;
		}
	}
	if (!st && !taken && sp->at)
		st = sweep_state_take(&busy, sp->twrite, sp->at);
	if (!st && sp->end)
		st = sweep_state_take(&busy, sp->tend, sp->end);
	tp_free(heads.a);
	item_pq_free(&busy);
	tp_free(freed.w);
	return st;
}

/* A source walk's state at a time: its walk and current edge, the first at or after the time
 * (have: 0 when none is left). */
struct sweep_at {
	struct source_iter it;
	struct pulled_edge cur;
	int have;
};

/* The segmented sweep: the times (th[2k]: segment k's warm-up start, th[2k + 1]: its start;
 * both INT64_MIN for segment 0), every walk's state at each (at[dt * 2 * nseg + i]), a
 * status per walk, and per segment its status, the state it guessed at its start and the
 * one at its end. */
struct sweep {
	struct plan *pl;
	size_t nseg;
	int64_t th[2 * SWEEP_SEGS];
	struct sweep_at *at;
	int *walk_st;
	struct sweep_seg {
		int st;
		struct sweep_state guess, end;
	} seg[SWEEP_SEGS];
};

/* Walks plan track dt's sources once, keeping the walk's state at each of the times (any
 * thread: reads the plan, writes at[dt * 2 * nseg ...] and walk_st[dt]). */
static void sweep_marks(void *arg, size_t dt)
{
	struct sweep *sw = arg;
	const struct plan *pl = sw->pl;
	struct sweep_at *at = &sw->at[dt * 2 * sw->nseg];
	if (pl->srcoff[dt] == pl->srcoff[dt + 1])
		return;
	struct source_iter it;
	memset(&it, 0, sizeof it);
	struct pulled_edge cur = {0};
	int k = tp_sink_source_iter_start(pl, &it, (uint32_t)dt);
	if (!k)
		k = tp_sink_source_iter_next(pl, &it, &cur);
	for (size_t g = 0; g < 2 * sw->nseg && k >= 0; g++) {
		while (k == 1 && slice_ns(pl, (uint32_t)dt, cur.src) < sw->th[g])
			k = tp_sink_source_iter_next(pl, &it, &cur);
		if (k < 0)
			break;
		at[g].cur = cur;
		at[g].have = k;
		if (k == 1 && tp_sink_source_iter_copy(&at[g].it, &it))
			k = TP_ENOMEM;
	}
	if (k < 0)
		sw->walk_st[dt] = k;
	tp_sink_source_iter_free(&it);
}

/* Sweeps segment k from the walks' states at time i (2k: the warm-up's start, fresh state;
 * 2k + 1: its start, from state `from`), moving the walks out of at[]. */
static int sweep_seg_run(struct sweep *sw, size_t k, size_t i, const struct sweep_state *from,
                         struct sweep_state *guess, struct sweep_state *end)
{
	struct plan *pl = sw->pl;
	size_t n = pl->ndts;
	struct source_iter *it = tp_calloc(n, sizeof *it);
	struct pulled_edge *cur = tp_calloc(n, sizeof *cur);
	int *have = tp_calloc(n, sizeof *have);
	int st = it && cur && have ? TP_OK : TP_ENOMEM;
	for (size_t dt = 0; dt < n && !st; dt++) {
		struct sweep_at *a = &sw->at[dt * 2 * sw->nseg + i];
		it[dt] = a->it; /* moved: freed with the segment's walks */
		memset(&a->it, 0, sizeof a->it);
		cur[dt] = a->cur;
		have[dt] = a->have;
	}
	struct sweep_span sp = {it,
	                        cur,
	                        have,
	                        from,
	                        sw->th[2 * k + 1],
	                        k + 1 < sw->nseg ? sw->th[2 * k + 3] : INT64_MAX,
	                        guess,
	                        end};
	if (!st)
		st = sweep_run(pl, &sp);
	for (size_t dt = 0; it && dt < n; dt++)
		tp_sink_source_iter_free(&it[dt]);
	TP_FREE_ALL(it, cur, have);
	return st;
}

/* Segment k with its warm-up (any thread: its walks' states are its own). */
static void sweep_seg(void *arg, size_t k)
{
	struct sweep *sw = arg;
	struct sweep_seg *sg = &sw->seg[k];
	sg->st = sweep_seg_run(sw, k, 2 * k, NULL, &sg->guess, &sg->end);
}

/* The times: a fixed grid of nseg cells over the times of the sources' tracks, each
 * segment's warm-up starting a quarter of a cell before it. */
static void sweep_grid(struct sweep *sw)
{
	const struct plan *pl = sw->pl;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t dt = 0; dt < pl->ndts; dt++) {
		if (pl->srcoff[dt] == pl->srcoff[dt + 1])
			continue;
		const struct tp_track *t = pl->dts[dt].t;
		lo = t->slices[0].start_ns < lo ? t->slices[0].start_ns : lo;
		hi = t->slices[t->count - 1].start_ns > hi ? t->slices[t->count - 1].start_ns : hi;
	}
	uint64_t cell = lo < hi ? ((uint64_t)hi - (uint64_t)lo) / sw->nseg : 0;
	sw->th[0] = sw->th[1] = INT64_MIN;
	for (size_t k = 1; k < sw->nseg; k++) {
		sw->th[2 * k + 1] = (int64_t)((uint64_t)lo + cell * k);
		sw->th[2 * k] = (int64_t)((uint64_t)lo + cell * k - cell / 4);
	}
}

/* In segment order: each segment's guess against the true state at its start (the previous
 * segment's end), the segment swept again from the true state where they differ. Returns
 * TP_OK, SWEEP_WIDE or TP_ENOMEM. */
static int sweep_check(struct sweep *sw)
{
	struct sweep_state truth = {0}; /* at segment 0's start: nothing open */
	int st = TP_OK;
	for (size_t k = 0; k < sw->nseg && !st; k++) {
		struct sweep_seg *sg = &sw->seg[k];
		if ((st = sg->st))
			break;
		if (!sweep_state_same(&sg->guess, &truth)) {
			struct sweep_state end = {0};
			st = sweep_seg_run(sw, k, 2 * k + 1, &truth, NULL, &end);
			tp_free(sg->end.a);
			sg->end = end;
		}
		tp_free(truth.a);
		truth = sg->end;
		sg->end.a = NULL;
	}
	tp_free(truth.a);
	return st;
}

/* The sweep in segments on `threads` threads (tp_par_run; 0: on this thread), the walks'
 * states at the segments' times found by a first walk per source track (also spread over the
 * threads), then checked in order (sweep_check). TP_OK, SWEEP_WIDE or TP_ENOMEM. */
static int sweep_try(struct plan *pl, unsigned threads)
{
	struct sweep *sw = tp_calloc(1, sizeof *sw);
	size_t n = pl->ndts;
	if (sw) {
		sw->pl = pl;
		sw->nseg = pl->nedges / SWEEP_SEG_EDGES;
		sw->nseg = sw->nseg < 1 ? 1 : sw->nseg > SWEEP_SEGS ? SWEEP_SEGS : sw->nseg;
		sw->at = tp_calloc(n * 2 * sw->nseg, sizeof *sw->at);
		sw->walk_st = tp_calloc(n, sizeof *sw->walk_st);
	}
	int st = sw && sw->at && sw->walk_st ? TP_OK : TP_ENOMEM;
	if (!st) {
		sweep_grid(sw);
		if (threads)
			tp_par_run(threads, n, sweep_marks, sw);
		else
			for (size_t dt = 0; dt < n; dt++)
				sweep_marks(sw, dt);
		for (size_t dt = 0; dt < n && !st; dt++)
			st = sw->walk_st[dt];
	}
	if (!st) {
		if (threads)
			tp_par_run(threads, sw->nseg, sweep_seg, sw);
		else
			for (size_t k = 0; k < sw->nseg; k++)
				sweep_seg(sw, k);
		st = sweep_check(sw);
	}
	for (size_t i = 0; sw && sw->at && i < n * 2 * sw->nseg; i++)
		tp_sink_source_iter_free(&sw->at[i].it);
	for (size_t k = 0; sw && k < SWEEP_SEGS; k++)
		TP_FREE_ALL(sw->seg[k].guess.a, sw->seg[k].end.a);
	if (sw)
		TP_FREE_ALL(sw->at, sw->walk_st);
	tp_free(sw);
	return st;
}

/* The flow ids (sweep_try). The array stays 1 byte per id while the ids do (at most 254 flows
 * open at once); when one does not fit, it is widened to 4 bytes and the sweep done again
 * (with EDGE_DROPPED kept, the ids stored meanwhile are overwritten). */
int tp_sink_flow_ids(struct plan *pl, unsigned threads, struct tp_diag *d)
{
	int st = sweep_try(pl, threads);
	if (st == SWEEP_WIDE)
		st = tp_sink_flow_width(pl, 4) ? TP_ENOMEM : sweep_try(pl, threads);
	return st ? tp_diag_set(d, TP_ENOMEM, "out of memory planning flows") : TP_OK;
}
