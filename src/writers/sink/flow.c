/*
 * flow.c — the flows of tp_sink_drive (sink_int.h): each waiting command (dep_id) of a core's
 * TIU and GDMA tracks becomes an edge from the partner engine's command with that cmd id, and
 * the model's own flows (imported traces) edges between the slices that enclose their ends.
 * Every edge gets a flow id that is only unique while its flow is open, so ids stay small; the
 * delivery then walks the edges in waiting-slice order (flow_in) and, per track, in source
 * order (flows_out) without storing either order twice.
 *
 * Owns the plan's edge storage (flow ids, ends, runs, block minima, the runs grouped by
 * source track) and the delivery's source walk; tp_sink_flows_free frees them.
 */
#include <stdlib.h>
#include <string.h>

#include "writers/sink/sink_int.h"

/* Sets the flow id of edge e. Ids are at most the number of flows open at once, so they are
 * stored as narrow as they allow: 1 byte each until an id reaches 255, then the array is
 * widened to 2 or 4 bytes (a copy, once). Returns TP_ENOMEM when widening fails. */
static int flow_widen(struct plan *pl, size_t e, uint32_t id);

static inline int flow_set(struct plan *pl, size_t e, uint32_t id)
{
	if (pl->fw == 1 && (id == EDGE_DROPPED || id < UINT8_MAX)) { /* the usual case */
		pl->flow[e] = id == EDGE_DROPPED ? UINT8_MAX : (uint8_t)id;
		return TP_OK;
	}
	return flow_widen(pl, e, id);
}

int tp_sink_flow_width(struct plan *pl, unsigned need)
{
	if (need > pl->fw) {
		uint8_t *n = tp_malloc(pl->cap_flow * need);
		if (!n)
			return TP_ENOMEM;
		for (size_t i = 0; i < pl->cap_flow; i++) {
			uint32_t v = flow_get(pl, i);
			if (need == 2) {
				uint16_t x = v == EDGE_DROPPED ? UINT16_MAX : (uint16_t)v;
				memcpy(n + 2 * i, &x, 2);
			} else {
				memcpy(n + 4 * i, &v, 4);
			}
		}
		tp_free(pl->flow);
		pl->flow = n;
		pl->fw = need;
	}
	return TP_OK;
}

/* flow_set past its usual case: widens the array when id needs it, then stores. */
static int flow_widen(struct plan *pl, size_t e, uint32_t id)
{
	if (tp_sink_flow_width(pl, id == EDGE_DROPPED || id < UINT8_MAX ? 1
	                           : id < UINT16_MAX                    ? 2
	                                                                : 4))
		return TP_ENOMEM;
	if (pl->fw == 1) {
		pl->flow[e] = id == EDGE_DROPPED ? UINT8_MAX : (uint8_t)id;
	} else if (pl->fw == 2) {
		uint16_t x = id == EDGE_DROPPED ? UINT16_MAX : (uint16_t)id;
		memcpy(pl->flow + 2 * e, &x, 2);
	} else {
		memcpy(pl->flow + 4 * e, &id, 4);
	}
	return TP_OK;
}

/* Waiting commands (dep_id) of one core's TIU and GDMA tracks become flow edges from the
 * partner engine's command with that cmd id (the latest one that started no later). */
struct cmdix {
	const struct tp_track *t;
	uint64_t *key; /* cmd_id << 32 | slice index, ascending; NULL when the track's cmd ids
	                  never decrease (the usual case): then the slices are searched */
	size_t hint;   /* where the previous search ended: waiters' dependencies mostly
	                  ascend, so the next lower bound is usually a few keys further */
};

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int build_cmdix(struct cmdix *c, const struct tp_track *t)
{
	c->t = t;
	c->key = NULL;
	c->hint = 0;
	size_t k = 1;
	while (k < t->count && t->slices[k].cmd_id >= t->slices[k - 1].cmd_id)
		k++;
	if (k >= t->count)
		return TP_OK; /* in cmd id order already: no index needed */
	c->key = tp_malloc(t->count * sizeof *c->key);
	if (!c->key)
		return TP_ENOMEM;
	for (k = 0; k < t->count; k++)
		c->key[k] = (uint64_t)t->slices[k].cmd_id << 32 | (uint64_t)k;
	qsort(c->key, t->count, sizeof *c->key, u64_cmp);
	return TP_OK;
}

/* Key k of the index: cmd_id << 32 | slice index. */
static uint64_t cmdix_key(const struct cmdix *c, size_t k)
{
	return c->key ? c->key[k] : (uint64_t)c->t->slices[k].cmd_id << 32 | (uint64_t)k;
}

static long cmdix_find(struct cmdix *c, uint32_t cmd, int64_t before_ns)
{
	const struct tp_slice *s = c->t->slices;
	size_t lo = 0, hi = c->t->count;
	uint64_t want = (uint64_t)cmd << 32;
	/* The lower bound of `want` (first key >= want), found by galloping from the hint
	 * to bracket it in [lo, hi) and then bisecting: the same index a bisection of the
	 * whole index finds, in O(log distance) cache-friendly steps. */
	size_t h = c->hint < hi ? c->hint : hi;
	if (h < hi && cmdix_key(c, h) < want) {
		size_t step = 1;
		lo = h + 1;
		while (lo + step - 1 < hi && cmdix_key(c, lo + step - 1) < want) {
			lo += step;
			step *= 2;
		}
		if (lo + step - 1 < hi)
			hi = lo + step - 1;
	} else {
		size_t step = 1;
		hi = h;
		while (hi >= step && cmdix_key(c, hi - step) >= want) {
			hi -= step;
			step *= 2;
		}
		lo = hi >= step ? hi - step + 1 : 0;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmdix_key(c, mid) < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	c->hint = lo;
	if (lo == c->t->count || cmdix_key(c, lo) >> 32 != cmd)
		return -1;
	long best = (long)(uint32_t)cmdix_key(c, lo);
	for (size_t k = lo; k < c->t->count && cmdix_key(c, k) >> 32 == cmd; k++)
		if (s[(uint32_t)cmdix_key(c, k)].start_ns <= before_ns)
			best = (long)(uint32_t)cmdix_key(c, k);
	return best;
}

/* The partner plan track of a TIU or GDMA plan track (the first of the other kind on the same
 * device and core), or -1. */
static long partner(const struct plan *pl, size_t i)
{
	const struct plan_track *w = &pl->dts[i];
	if (w->t->kind != TP_TRACK_TIU && w->t->kind != TP_TRACK_GDMA)
		return -1;
	int want = w->t->kind == TP_TRACK_TIU ? TP_TRACK_GDMA : TP_TRACK_TIU;
	for (size_t k = 0; k < pl->ndts; k++)
		if (pl->dts[k].t->kind == want && pl->dts[k].t->device == w->t->device &&
		    pl->dts[k].t->core == w->t->core)
			return (long)k;
	return -1;
}

/* The index of the slice of t enclosing ts (the latest-starting one that has not ended), or
 * -1. Slices are sorted by start (tp_profile_finish). */
static long enclosing(const struct tp_track *t, int64_t ts)
{
	size_t lo = tp_upper_bound_i64(t->slices, t->count, sizeof *t->slices,
	                               offsetof(struct tp_slice, start_ns), ts);
	/* Walk back over the slices that started no later than ts: nested ones come after their
	 * parents, so the first that still covers ts is the innermost. A bounded walk keeps a
	 * pathological track from costing O(n) per flow. */
	for (size_t k = lo, steps = 0; k-- > 0 && steps < 64; steps++)
		if (tp_slice_end(t, &t->slices[k]) >= ts)
			return (long)k;
	return -1;
}

/* A flow that starts exactly where one slice ends and the next begins (a producer hands its
 * result over at its end, as TensorFlow's flows do, and the thread's next op starts at that
 * instant) binds by enclosing() to the slice that begins there, which cannot be its source
 * when the target starts at that instant too. Returns the slice ending at ts instead, found
 * walking back from k (the enclosing slice, which starts at ts) with the same bound as
 * enclosing(); k when there is none. */
static long ending_at(const struct tp_track *t, int64_t ts, long k)
{
	if (t->slices[k].start_ns != ts)
		return k;
	for (size_t j = (size_t)k, steps = 0; j-- > 0 && steps < 64; steps++)
		if (t->slices[j].start_ns < ts && tp_slice_end(t, &t->slices[j]) == ts)
			return (long)j;
	return k;
}

/* The source of waiting slice s (dep_id != 0) on the partner track indexed by cx: the latest
 * command with that cmd id that started no later; -1 when there is none, -2 when it does not
 * start before s (an id collision: drawing it would pair flow ends wrongly). */
static long dep_match(struct cmdix *cx, const struct tp_slice *s)
{
	long src = cmdix_find(cx, s->dep_id, s->start_ns);
	if (src < 0)
		return -1;
	return cx->t->slices[src].start_ns >= s->start_ns ? -2 : src;
}

static void edge_cursor_start(const struct edge_run *r, struct edge_cursor *w)
{
	w->e = r->from;
	w->src = 0;
	w->dst = 0;
	w->pos = r->pos;
}

/* Reads a varint of at most 5 bytes that add_edge wrote. */
static uint32_t uvarint_get(const uint8_t *b, size_t *pos)
{
	uint32_t v = 0;
	unsigned shift = 0;
	uint8_t c;
	do {
		c = b[(*pos)++];
		v |= (uint32_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	return v;
}

/* The next edge of run r on walk w: returns 1 and its ends (slice indices on the run's
 * source and waiting plan tracks), 0 past the run's end. */
static int edge_next(const struct plan *pl, const struct edge_run *r, struct edge_cursor *w,
                     uint32_t *src, uint32_t *dst)
{
	if (w->e >= r->to)
		return 0;
	if (pl->edges) {
		*src = pl->edges[w->e].src_idx;
		*dst = pl->edges[w->e].dst_idx;
		w->e++;
		return 1;
	}
	/* The deltas from the run's previous edge, modulo 2^32: the waiting index's first
	 * (never negative), then the source index's, zigzag-coded (add_edge). */
	w->dst += uvarint_get(pl->ends, &w->pos);
	uint32_t z = uvarint_get(pl->ends, &w->pos);
	w->src += (z >> 1) ^ (0u - (z & 1));
	*src = w->src;
	*dst = w->dst;
	w->e++;
	return 1;
}

/* Appends an edge (the edges come in destination order) to the last run, or starts a run.
 * Its flow id is the caller's to set (flow_set; pl->flow starts zeroed). */
static int add_edge(struct plan *pl, uint32_t sdt, uint32_t si, uint32_t ddt, uint32_t di)
{
	struct edge_run *r = pl->nruns ? &pl->runs[pl->nruns - 1] : NULL;
	if (!r || r->src_dt != sdt || r->dst_dt != ddt) {
		struct edge_run *n =
		    tp_grow(pl->runs, sizeof *pl->runs, pl->nruns + 1, &pl->cap_runs);
		if (!n)
			return TP_ENOMEM;
		pl->runs = n;
		r = &pl->runs[pl->nruns++];
		memset(r, 0, sizeof *r);
		r->src_dt = sdt;
		r->dst_dt = ddt;
		r->from = r->to = (uint32_t)pl->nedges;
		r->blk = (uint32_t)pl->nblk; /* nblk <= nedges < 2^32: each run has an edge */
		r->src_sorted = 1;
		r->pos = pl->nends;
	} else if (si < r->last_src) {
		r->src_sorted = 0;
	}
	uint32_t prev_src = r->last_src, prev_dst = r->last_dst; /* 0, 0 in a new run */
	r->last_src = si;
	if ((r->to - r->from) % EBLK == 0) {
		uint32_t *g = tp_grow(pl->blkmin, sizeof *g, pl->nblk + 1, &pl->cap_blk);
		if (!g)
			return TP_ENOMEM;
		pl->blkmin = g;
		pl->blkmin[pl->nblk++] = si;
	} else if (si < pl->blkmin[pl->nblk - 1]) {
		pl->blkmin[pl->nblk - 1] = si;
	}
	if (pl->edges) {
		pl->edges[pl->nedges] = (struct edge){si, di};
	} else {
		/* The ends as deltas from the run's previous edge (0, 0 before its first), 2
		 * bytes for most edges: the waiting index (ascending along a run), then the
		 * source index zigzag-coded (dependencies mostly ascend). */
		if (pl->cap_ends - pl->nends < 10) {
			uint8_t *g = tp_grow(pl->ends, 1, pl->nends + 10, &pl->cap_ends);
			if (!g)
				return TP_ENOMEM;
			pl->ends = g;
		}
		uint32_t dd = di - prev_dst, ds = si - prev_src;
		uint32_t z = ds << 1 ^ (0u - (ds >> 31));
		for (int k = 0; k < 2; k++) {
			uint32_t v = k ? z : dd;
			while (v >= 0x80) {
				pl->ends[pl->nends++] = (uint8_t)(v | 0x80);
				v >>= 7;
			}
			pl->ends[pl->nends++] = (uint8_t)v;
		}
	}
	r->last_dst = di;
	pl->nedges++;
	r->to = (uint32_t)pl->nedges;
	return TP_OK;
}

/* An edge with both its plan tracks: only while the model's flows are sorted in. */
struct track_edge {
	uint32_t src_dt, src_idx, dst_dt, dst_idx;
};

static int track_edge_cmp(const void *x, const void *y)
{
	const struct track_edge *a = x, *b = y;
	int64_t ka[] = {a->dst_dt, a->dst_idx, a->src_dt, a->src_idx};
	int64_t kb[] = {b->dst_dt, b->dst_idx, b->src_dt, b->src_idx};
	return tp_cmp_keys(ka, kb, 4);
}

/* The model's explicit flows (imported traces) as edges, when both ends resolve to a slice
 * and the target starts after the source. The drive walks edges in destination order and a
 * slice ends at most one flow, so all edges are re-sorted by destination (through a
 * temporary list of 16 bytes per edge, only when the model has flows; the ends are stored
 * then) and a second flow into the same slice is dropped (counted). */
static int plan_model_flows(struct plan *pl)
{
	const struct tp_profile *p = pl->p;
	if (!p->num_flows || !pl->edges)
		return TP_OK;
	struct track_edge *w = tp_malloc((pl->nedges + p->num_flows) * sizeof *w);
	if (!w)
		return TP_ENOMEM;
	size_t n = 0;
	for (size_t r = 0; r < pl->nruns; r++)
		for (uint32_t i = pl->runs[r].from; i < pl->runs[r].to; i++)
			w[n++] = (struct track_edge){pl->runs[r].src_dt, pl->edges[i].src_idx,
			                             pl->runs[r].dst_dt, pl->edges[i].dst_idx};
	size_t before = n;
	/* The plan track of each model track (its first). */
	long *dt_of = tp_malloc((p->num_tracks + 1) * sizeof *dt_of);
	if (!dt_of) {
		tp_free(w);
		return TP_ENOMEM;
	}
	for (size_t t = 0; t < p->num_tracks; t++)
		dt_of[t] = -1;
	for (size_t k = pl->ndts; k-- > 0;)
		if (pl->dts[k].model_track >= 0)
			dt_of[pl->dts[k].model_track] = (long)k;
	for (size_t i = 0; i < p->num_flows; i++) {
		const struct tp_flow *f = &p->flows[i];
		long sdt = f->from_track >= 0 && (size_t)f->from_track < p->num_tracks
		               ? dt_of[f->from_track]
		               : -1;
		long ddt = f->to_track >= 0 && (size_t)f->to_track < p->num_tracks
		               ? dt_of[f->to_track]
		               : -1;
		if (sdt < 0 || ddt < 0 || pl->dts[sdt].t->count > UINT32_MAX ||
		    pl->dts[ddt].t->count > UINT32_MAX) {
			pl->flows_skipped++;
			continue;
		}
		long si = enclosing(pl->dts[sdt].t, f->from_ns);
		long di = enclosing(pl->dts[ddt].t, f->to_ns);
		if (si >= 0 && di >= 0 &&
		    pl->dts[sdt].t->slices[si].start_ns >= pl->dts[ddt].t->slices[di].start_ns)
			si = ending_at(pl->dts[sdt].t, f->from_ns, si);
		if (si < 0 || di < 0 ||
		    pl->dts[sdt].t->slices[si].start_ns >= pl->dts[ddt].t->slices[di].start_ns) {
			pl->flows_skipped++;
			continue;
		}
		w[n++] =
		    (struct track_edge){(uint32_t)sdt, (uint32_t)si, (uint32_t)ddt, (uint32_t)di};
	}
	tp_free(dt_of);
	int st = TP_OK;
	if (n > before) {
		qsort(w, n, sizeof *w, track_edge_cmp);
		pl->nedges = 0;
		pl->nruns = 0;
		pl->nblk = 0;
		for (size_t i = 0; i < n && !st; i++) {
			uint32_t id = 0;
			if (i && w[i].dst_dt == w[i - 1].dst_dt &&
			    w[i].dst_idx == w[i - 1].dst_idx) {
				id = EDGE_DROPPED;
				pl->flows_dropped++;
			}
			st = add_edge(pl, w[i].src_dt, w[i].src_idx, w[i].dst_dt, w[i].dst_idx);
			if (!st)
				st = flow_set(pl, pl->nedges - 1, id);
		}
	}
	tp_free(w);
	return st;
}

/* Turns blkmin (per run and block of EBLK edges: the smallest source index in the block, from
 * add_edge) into the smallest from that block to the run's end, and groups the runs by source
 * plan track (srcruns, srcoff). */
static int index_edges(struct plan *pl)
{
	pl->srcoff = tp_calloc(pl->ndts + 1, sizeof *pl->srcoff);
	pl->srcruns = tp_malloc(pl->nruns * sizeof *pl->srcruns);
	size_t *fill = tp_malloc((pl->ndts + 1) * sizeof *fill);
	if (!pl->srcoff || !pl->srcruns || !fill) {
		tp_free(fill);
		return TP_ENOMEM;
	}
	for (size_t r = 0; r < pl->nruns; r++) {
		const struct edge_run *x = &pl->runs[r];
		for (uint32_t b = (x->to - x->from + EBLK - 1) / EBLK; b-- > 1;)
			if (pl->blkmin[x->blk + b] < pl->blkmin[x->blk + b - 1])
				pl->blkmin[x->blk + b - 1] = pl->blkmin[x->blk + b];
		pl->srcoff[x->src_dt + 1]++;
	}
	for (size_t dt = 0; dt < pl->ndts; dt++)
		pl->srcoff[dt + 1] += pl->srcoff[dt];
	memcpy(fill, pl->srcoff, (pl->ndts + 1) * sizeof *fill);
	for (size_t r = 0; r < pl->nruns; r++)
		pl->srcruns[fill[pl->runs[r].src_dt]++] = (uint32_t)r;
	tp_free(fill);
	return TP_OK;
}

static int pulled_less(const struct pulled_edge *x, const struct pulled_edge *y)
{
	return x->src < y->src || (x->src == y->src && x->e < y->e);
}

DEFINE_HEAP(pulled_heap, struct pulled_heap, struct pulled_edge, pulled_less)

DEFINE_PQ(pulled_pq, struct pulled_pq, struct pulled_edge, pulled_less, pulled_heap)

/* Starts walking the edges whose source lies on plan track dt in source order. */
int tp_sink_source_iter_start(const struct plan *pl, struct source_iter *it, uint32_t dt)
{
	it->dt = dt;
	it->runs.n = 0;
	it->pend.h.n = 0;
	it->pend.qh = it->pend.qn = 0;
	it->single = 0;
	size_t nr = pl->srcoff[dt + 1] - pl->srcoff[dt];
	if (nr > it->cap_w) {
		struct edge_cursor *g = tp_grow(it->w, sizeof *g, nr, &it->cap_w);
		if (!g)
			return TP_ENOMEM;
		it->w = g;
	}
	it->nw = nr;
	if (nr == 1 && pl->runs[pl->srcruns[pl->srcoff[dt]]].src_sorted) {
		/* In (source index, edge index) order already: the run's own. */
		it->single = 1;
		it->run = pl->srcruns[pl->srcoff[dt]];
		edge_cursor_start(&pl->runs[it->run], &it->w[0]);
		return TP_OK;
	}
	for (size_t k = 0; k < nr; k++) {
		const struct edge_run *r = &pl->runs[pl->srcruns[pl->srcoff[dt] + k]];
		edge_cursor_start(r, &it->w[k]);
		if (heap_push(&it->runs, pl->blkmin[r->blk], k))
			return TP_ENOMEM;
	}
	return TP_OK;
}

/* The next edge of the walk started by tp_sink_source_iter_start, in (source index, edge index)
 * order: returns 1 and sets *x, 0 when no edge is left, TP_ENOMEM. An edge is handed out once every
 * edge that could precede it has been pulled: when the heap's head has a smaller source
 * index than any run's edges still to pull (blkmin). */
int tp_sink_source_iter_next(const struct plan *pl, struct source_iter *it, struct pulled_edge *x)
{
	if (it->single) {
		const struct edge_run *r = &pl->runs[it->run];
		x->e = it->w[0].e;
		x->run = it->run;
		return edge_next(pl, r, &it->w[0], &x->src, &x->dst);
	}
	for (;;) {
		const struct pulled_edge *m = pulled_pq_min(&it->pend);
		if (m && (!it->runs.n || (int64_t)m->src < it->runs.a[0].key)) {
			*x = pulled_pq_pop(&it->pend);
			return 1;
		}
		if (!it->runs.n)
			return 0;
		struct heap_item h = item_heap_pop(&it->runs);
		uint32_t run = pl->srcruns[pl->srcoff[it->dt] + h.id];
		const struct edge_run *r = &pl->runs[run];
		struct edge_cursor *w = &it->w[h.id];
		for (int j = 0; j < EBLK; j++) {
			struct pulled_edge y = {0, 0, w->e, run};
			if (!edge_next(pl, r, w, &y.src, &y.dst))
				break;
			if (pulled_pq_push(&it->pend, &y))
				return TP_ENOMEM;
		}
		if (w->e < r->to &&
		    heap_push(&it->runs, pl->blkmin[r->blk + (w->e - r->from) / EBLK], h.id))
			return TP_ENOMEM;
	}
}

static void source_iter_free(struct source_iter *it)
{
	tp_free(it->w);
	tp_free(it->runs.a);
	pulled_pq_free(&it->pend);
	memset(it, 0, sizeof *it);
}

/* One waiting plan track's dependency edges, matched on its own (any thread): they form one
 * run (their pair of plan tracks is the track's own), built by add_edge in a plan of the
 * job's (lp: the run, its ends or edges and its block minima, relative to the run's start)
 * and appended to the plan's in track order (append_deps), so the edges are those the
 * waiting tracks matched one after another would give. */
struct dep_job {
	const struct plan *pl;
	long partner; /* the partner plan track, or -1: no edges */
	struct plan lp;
	uint64_t skipped; /* flows_skipped's share */
	int st;
};

struct dep_jobs {
	struct dep_job *j;
	int stored; /* the ends are stored in full (pl->edges) */
};

static void match_deps(void *arg, size_t i)
{
	struct dep_jobs *x = arg;
	struct dep_job *jb = &x->j[i];
	const struct plan *pl = jb->pl;
	const struct tp_track *t = pl->dts[i].t;
	if (jb->partner < 0)
		return;
	size_t n = 0;
	for (size_t k = 0; k < t->count; k++)
		n += t->slices[k].dep_id != 0;
	if (!n)
		return;
	struct plan *lp = &jb->lp;
	lp->cap_ends = x->stored ? 0 : 2 * n + 16; /* most edges take 2 bytes; grown if not */
	if ((x->stored && !(lp->edges = tp_malloc(n * sizeof *lp->edges))) ||
	    (!x->stored && !(lp->ends = tp_malloc(lp->cap_ends)))) {
		jb->st = TP_ENOMEM;
		return;
	}
	struct cmdix cx;
	if (build_cmdix(&cx, pl->dts[jb->partner].t)) {
		jb->st = TP_ENOMEM;
		return;
	}
	for (size_t k = 0; k < t->count; k++) {
		const struct tp_slice *s = &t->slices[k];
		if (!s->dep_id)
			continue;
		long src = dep_match(&cx, s);
		if (src == -2)
			jb->skipped++;
		if (src >= 0 &&
		    add_edge(lp, (uint32_t)jb->partner, (uint32_t)src, (uint32_t)i, (uint32_t)k)) {
			jb->st = TP_ENOMEM;
			break;
		}
	}
	tp_free(cx.key);
}

/* Appends job jb's run (if any) to the plan's edges: the run with its offsets moved to the
 * plan's, its ends (or edges) and block minima copied; TP_OK or TP_ENOMEM. */
static int append_deps(struct plan *pl, const struct dep_job *jb)
{
	const struct plan *lp = &jb->lp;
	if (!lp->nruns)
		return TP_OK;
	struct edge_run *n = tp_grow(pl->runs, sizeof *pl->runs, pl->nruns + 1, &pl->cap_runs);
	if (!n)
		return TP_ENOMEM;
	pl->runs = n;
	uint32_t *g = tp_grow(pl->blkmin, sizeof *g, pl->nblk + lp->nblk, &pl->cap_blk);
	if (!g)
		return TP_ENOMEM;
	pl->blkmin = g;
	struct edge_run r = lp->runs[0];
	r.from += (uint32_t)pl->nedges;
	r.to += (uint32_t)pl->nedges;
	r.blk += (uint32_t)pl->nblk;
	r.pos += pl->nends;
	pl->runs[pl->nruns++] = r;
	memcpy(pl->blkmin + pl->nblk, lp->blkmin, lp->nblk * sizeof *g);
	pl->nblk += lp->nblk;
	if (pl->edges) {
		memcpy(pl->edges + pl->nedges, lp->edges, lp->nedges * sizeof *pl->edges);
	} else {
		uint8_t *e = tp_grow(pl->ends, 1, pl->nends + lp->nends, &pl->cap_ends);
		if (!e)
			return TP_ENOMEM;
		pl->ends = e;
		memcpy(pl->ends + pl->nends, lp->ends, lp->nends);
		pl->nends += lp->nends;
	}
	pl->nedges += lp->nedges;
	return TP_OK;
}

/* Allocates the plan's runs, ends and block minima for all the jobs' at once (the appends
 * then copy into them, each job's freed after its copy); TP_OK or TP_ENOMEM. */
static int reserve_deps(struct plan *pl, const struct dep_jobs *x)
{
	size_t runs = 0, ends = 0, blk = 0;
	for (size_t i = 0; i < pl->ndts; i++) {
		runs += x->j[i].lp.nruns;
		ends += x->j[i].lp.nends;
		blk += x->j[i].lp.nblk;
	}
	struct edge_run *r = tp_grow(pl->runs, sizeof *r, runs ? runs : 1, &pl->cap_runs);
	if (!r)
		return TP_ENOMEM;
	pl->runs = r;
	uint32_t *b = tp_grow(pl->blkmin, sizeof *b, blk ? blk : 1, &pl->cap_blk);
	if (!b)
		return TP_ENOMEM;
	pl->blkmin = b;
	if (!x->stored) {
		pl->ends = tp_malloc(ends ? ends : 1);
		pl->cap_ends = ends ? ends : 1;
	}
	return x->stored || pl->ends ? TP_OK : TP_ENOMEM;
}

/* The dependency edges of every waiting plan track, matched on `threads` threads (tp_par_run;
 * 0: on this thread), appended in track order. The flow ids are allocated once for the most
 * there can be (the edges and the model's flows). TP_OK or TP_ENOMEM. */
static int plan_deps(struct plan *pl, unsigned threads)
{
	struct dep_jobs x = {tp_calloc(pl->ndts ? pl->ndts : 1, sizeof *x.j),
	                     pl->p->num_flows != 0};
	if (!x.j)
		return TP_ENOMEM;
	for (size_t i = 0; i < pl->ndts; i++) {
		long pi = partner(pl, i);
		if (pi >= 0 &&
		    (pl->dts[i].t->count > UINT32_MAX || pl->dts[pi].t->count > UINT32_MAX))
			pi = -1;
		x.j[i].pl = pl;
		x.j[i].partner = pi;
	}
	if (threads)
		tp_par_run(threads, pl->ndts, match_deps, &x);
	else
		for (size_t i = 0; i < pl->ndts; i++)
			match_deps(&x, i);
	size_t most = pl->p->num_flows;
	int st = TP_OK;
	for (size_t i = 0; i < pl->ndts; i++) {
		most += x.j[i].lp.nedges;
		pl->flows_skipped += x.j[i].skipped;
		if (x.j[i].st)
			st = x.j[i].st;
	}
	if (!st && most && most < UINT32_MAX) {
		pl->flow = tp_calloc(most, 1);
		pl->fw = 1;
		pl->cap_flow = most;
		if (x.stored)
			pl->edges = tp_malloc(most * sizeof *pl->edges);
		if (!pl->flow || (x.stored && !pl->edges) || reserve_deps(pl, &x))
			st = TP_ENOMEM;
		for (size_t i = 0; i < pl->ndts && !st; i++) {
			st = append_deps(pl, &x.j[i]);
			TP_FREE_ALL(x.j[i].lp.runs, x.j[i].lp.ends, x.j[i].lp.edges,
			            x.j[i].lp.blkmin);
			memset(&x.j[i].lp, 0, sizeof x.j[i].lp);
		}
	}
	for (size_t i = 0; i < pl->ndts; i++)
		TP_FREE_ALL(x.j[i].lp.runs, x.j[i].lp.ends, x.j[i].lp.edges, x.j[i].lp.blkmin);
	tp_free(x.j);
	return st;
}

int tp_sink_plan_flows(struct plan *pl, unsigned threads, struct tp_diag *d)
{
	/* Edges are counted in 32 bits (slice and edge indices). */
	if (pl->ndts > UINT32_MAX || pl->total_slices > UINT32_MAX)
		return TP_OK;
	if (plan_deps(pl, threads))
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning flows");
	if (!pl->flow)
		return TP_OK;
	if (plan_model_flows(pl))
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning flows");
	if (!pl->nedges)
		return TP_OK;
	if (index_edges(pl))
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning flows");
	return tp_sink_flow_ids(pl, threads, d);
}

/* The next edge in destination order over all runs (walk w on run *ri): returns 1 with the
 * waiting slice's id and the edge index, 0 after the last. */
static int dst_next(const struct plan *pl, size_t *ri, struct edge_cursor *w, uint64_t *dst_id,
                    uint32_t *e)
{
	while (*ri < pl->nruns) {
		const struct edge_run *r = &pl->runs[*ri];
		uint32_t at = w->e, src, dst;
		if (edge_next(pl, r, w, &src, &dst)) {
			*dst_id = slice_id(pl, r->dst_dt, dst);
			*e = at;
			return 1;
		}
		if (++*ri < pl->nruns)
			edge_cursor_start(&pl->runs[*ri], w);
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Delivery                                                                                  */
/* ---------------------------------------------------------------------------------------- */

struct run_key {
	const struct plan *pl;
	size_t ti;
};

static int run_not_before(const void *ctx, size_t i)
{
	const struct run_key *k = ctx;
	return k->pl->runs[i].dst_dt >= k->ti;
}

void tp_sink_flows_start(const struct plan *pl, struct flow_cursor *fc, size_t ti)
{
	memset(fc, 0, sizeof *fc);
	struct run_key key = {pl, ti}; /* the first run waiting on ti or later */
	size_t lo = tp_upper_bound(pl->nruns, run_not_before, &key);
	fc->run = lo;
	if (lo < pl->nruns)
		edge_cursor_start(&pl->runs[lo], &fc->in);
	fc->have_in = dst_next(pl, &fc->run, &fc->in, &fc->in_id, &fc->in_e);
}

int tp_sink_flows_track(const struct plan *pl, struct walker *wk, size_t ti)
{
	struct flow_cursor *fc = &wk->fc;
	fc->out = (struct pulled_edge){0, 0, 0, 0};
	fc->have_out = 0;
	if (pl->srcoff && pl->srcoff[ti] < pl->srcoff[ti + 1]) {
		fc->have_out = tp_sink_source_iter_start(pl, &wk->out_walk, (uint32_t)ti);
		if (!fc->have_out)
			fc->have_out = tp_sink_source_iter_next(pl, &wk->out_walk, &fc->out);
	}
	return fc->have_out < 0 ? TP_ENOMEM : TP_OK;
}

int tp_sink_flows_slice(const struct plan *pl, struct walker *wk, size_t k,
                        struct tp_sink_slice *ss)
{
	struct flow_cursor *fc = &wk->fc;
	ss->flow_in = 0;
	while (fc->have_in && fc->in_id < ss->id)
		fc->have_in = dst_next(pl, &fc->run, &fc->in, &fc->in_id, &fc->in_e);
	if (fc->have_in && fc->in_id == ss->id && flow_get(pl, fc->in_e) != EDGE_DROPPED)
		ss->flow_in = flow_get(pl, fc->in_e);
	size_t n = 0;
	while (fc->have_out > 0 && fc->out.src <= k) {
		uint32_t f = flow_get(pl, fc->out.e);
		if (fc->out.src == k && f != EDGE_DROPPED) {
			uint64_t *g = tp_grow(wk->out_ids, sizeof *g, n + 1, &wk->cap_out_ids);
			if (!g)
				return TP_ENOMEM;
			wk->out_ids = g;
			wk->out_ids[n++] = f;
		}
		if ((fc->have_out = tp_sink_source_iter_next(pl, &wk->out_walk, &fc->out)) < 0)
			return TP_ENOMEM;
	}
	ss->num_flows_out = n;
	ss->flows_out = wk->out_ids;
	return TP_OK;
}

int tp_sink_emit_flows(const struct plan *pl, struct tp_sink *sink)
{
	int st = TP_OK;
	for (size_t r = 0; r < pl->nruns && !st && sink->flow; r++) {
		const struct edge_run *x = &pl->runs[r];
		struct edge_cursor w;
		edge_cursor_start(x, &w);
		uint32_t at = w.e, src, dst;
		for (; !st && edge_next(pl, x, &w, &src, &dst); at = w.e)
			if (flow_get(pl, at) != EDGE_DROPPED)
				st = sink->flow(sink->ctx, flow_get(pl, at),
				                slice_id(pl, x->src_dt, src),
				                slice_id(pl, x->dst_dt, dst));
	}
	return st;
}

void tp_sink_flows_free(struct plan *pl)
{
	TP_FREE_ALL(pl->flow, pl->edges, pl->ends, pl->runs, pl->blkmin, pl->srcruns, pl->srcoff);
}

int tp_sink_source_iter_copy(struct source_iter *di, const struct source_iter *si)
{
	di->dt = si->dt;
	di->single = si->single;
	di->run = si->run;
	di->runs.n = di->pend.h.n = 0;
	di->pend.qh = di->pend.qn = 0;
	for (size_t i = 0; i < si->runs.n; i++)
		if (item_heap_push(&di->runs, &si->runs.a[i]))
			return TP_ENOMEM;
	for (size_t i = 0; i < si->pend.h.n; i++)
		if (pulled_heap_push(&di->pend.h, &si->pend.h.a[i]))
			return TP_ENOMEM;
	for (size_t i = si->pend.qh; i < si->pend.qn; i++)
		if (pulled_pq_push(&di->pend, &si->pend.q[i]))
			return TP_ENOMEM;
	if (si->nw > di->cap_w) {
		struct edge_cursor *g = tp_grow(di->w, sizeof *g, si->nw, &di->cap_w);
		if (!g)
			return TP_ENOMEM;
		di->w = g;
	}
	if (si->nw)
		memcpy(di->w, si->w, si->nw * sizeof *di->w);
	di->nw = si->nw;
	return TP_OK;
}

void tp_sink_source_iter_free(struct source_iter *it)
{
	source_iter_free(it);
}
