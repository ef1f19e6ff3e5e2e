/*
 * sink_int.h — private to the trace driver (src/writers/sink/ and the reference-naming policy,
 * src/writers/refnames.c): the plan that tp_sink_drive builds for one call and the helpers its
 * files share. The plan and its delivery, one file each:
 *   - plan.c: the track tree, lanes, pids and tids, synthesised Layer tracks and the derived
 *     counters;
 *   - flow.c: the dependency and model flows as edges, and the walks that hand them to the
 *     delivery in slice order;
 *   - flowid.c: the edges' small reusable flow ids (the sweep, in segments);
 *   - drive.c: tp_sink_drive itself, which builds the plan and delivers it to a sink, and the
 *     walk along a track (struct walker) that delivers slices;
 *   - parts.c: the slices in parts on several threads (tp_sink_parts);
 *   - synth.c: the Layer tracks synthesised from the profile's layer table (struct synth).
 * refnames.c fills each slice's reference-named arguments.
 */
#ifndef TP_SINK_INT_H
#define TP_SINK_INT_H

#include <string.h>

#include "writers/sink/sink.h"

#define MAX_LANES 1024
/* Threads a parts delivery may use, the calling thread included (parts.c; drive.c sizes the
 * plan's threads by the same bound). */
#define MAX_PART_THREADS 64

/* A direct-mapped cache of strtab id -> string for the driver's per-slice lookups: tp_str
 * decodes the table's entry on every call, and a slice needs two to four of the same few
 * hundred names. The strings are the table's own (same address every time, which the Perfetto
 * writer's interning relies on), already cut at TP_PROFILE_MAX_STR by the model. Owns nothing;
 * zero-initialised = empty. */
#define SCACHE_SLOTS 256
struct scache {
	uint32_t id[SCACHE_SLOTS];
	const char *s[SCACHE_SLOTS];
};

/* The string of id through cache c (or straight from the profile when c is NULL). */
static inline const char *cstr(const struct tp_profile *p, struct scache *c, uint32_t id)
{
	if (!c)
		return tp_str(p, id);
	size_t k = id & (SCACHE_SLOTS - 1);
	if (c->s[k] && c->id[k] == id)
		return c->s[k];
	c->id[k] = id;
	return c->s[k] = tp_str(p, id);
}

/* A slice track of the plan: a model track or a synthesised Layer track. */
struct plan_track {
	const struct tp_track *t;
	int model_track;   /* -1 when synthesised */
	size_t first_lane; /* index of its lane-0 sink track */
	size_t nlanes;
	uint64_t base_id; /* slice ids are base_id + index + 1 */
	int nested;
	struct synth *syn; /* synthesised Layer track (t->slices is NULL; see pt_slice), or NULL */
};

struct lane {
	int64_t *ends;
	uint64_t *ids;
	size_t depth, cap;
};

/* The lanes of the track being walked: l[0, used) hold their open slices (grown up to
 * MAX_LANES; kept between tracks, emptied by lanes_reset). */
struct lanes {
	struct lane *l;
	size_t used, cap;
};

/* Dependency edges (flows, flow.c). The plan keeps one flow id per edge (a profile can have
 * one edge per command; 1 byte while the ids stay below 255, see flow_set), in waiting-slice
 * (dst) order, in runs of one (source plan track, waiting plan track) pair (struct edge_run).
 * An edge's ends (slice indices) are kept as varint deltas from the previous edge of its run
 * in one byte stream (plan.ends; about 2 bytes an edge), read back in order by edge_next, so
 * the drive's walks need not match each waiter's dep_id on the partner track again. They are
 * stored in full (struct edge, 8 bytes per edge) only when the model has explicit flows
 * (sorted in among the dependencies, plan_model_flows). A flow is open from its source's
 * start to its waiter's start. */
struct edge {
	uint32_t src_idx, dst_idx; /* source slice (the one waited for), waiting slice */
};
#define EDGE_DROPPED UINT32_MAX /* flow id of an edge that is not drawn */

/* A walk along one run: the next edge and (ends in the run's byte stream, see plan.ends) the
 * stream position and the ends of the edge before it. */
struct edge_cursor {
	uint32_t e;
	uint32_t src, dst;
	size_t pos;
};

/* Edges in source order are not stored either: struct source_iter walks the runs whose
 * sources lie on one track and reorders their edges through a heap, pulling EBLK edges of a
 * run at a time. Each run keeps, per block of EBLK edges, the smallest source index of the edges
 * from that block to the run's end (blkmin), so the walk knows when no edge still to pull can come
 * before the heap's head. Dependencies nearly ascend, so the heap holds about one block per
 * run; blkmin costs 4 bytes per EBLK edges. */
#define EBLK 16

struct edge_run {
	uint32_t src_dt, dst_dt; /* plan tracks of the sources and the waiting slices */
	uint32_t from, to;       /* edges [from, to) */
	uint32_t blk;            /* its first entry in plan.blkmin */
	uint32_t last_src;       /* source index of its last edge (add_edge) */
	uint32_t last_dst;       /* waiting index of its last edge (add_edge) */
	size_t pos;              /* its first edge's ends in plan.ends (when not in plan.edges) */
	int src_sorted;          /* its sources never decrease along the run (add_edge) */
};

/* Min-heap of (key, id) pairs. */
struct heap {
	struct heap_item {
		int64_t key;
		uint64_t id;
	} * a;
	size_t n, cap;
};

/* An edge pulled by a source-order walk: its ends, index and run. */
struct pulled_edge {
	uint32_t src, dst, e, run;
};

/* Min-heap of pulled edges by (src, e). */
struct pulled_heap {
	struct pulled_edge *a;
	size_t n, cap;
};

/* Priority queues for keys that arrive nearly in order (DEFINE_PQ): a sorted FIFO q[qh, qn)
 * takes every key not below its last one, the heap the others. */
struct item_pq {
	struct heap h;
	struct heap_item *q;
	size_t qh, qn, cap;
};
struct pulled_pq {
	struct pulled_heap h;
	struct pulled_edge *q;
	size_t qh, qn, cap;
};

/* A walk over the edges whose sources lie on one plan track, in source order
 * (source_iter_next). */
struct source_iter {
	uint32_t dt;           /* the plan track */
	struct heap runs;      /* runs with edges still to pull: (blkmin of their next block, the
	                          run's place among the track's, srcruns[srcoff[dt] + place]) */
	struct edge_cursor *w; /* per place: the run's pull cursor (edge from + j * EBLK) */
	size_t nw, cap_w;      /* places: the track's runs */
	struct pulled_pq pend; /* pulled edges */
	int single;   /* the plan track's edges are one run whose sources never decrease (the
	                 usual case): walked in its own order, no heaps ... */
	uint32_t run; /* ... and this is the run */
};

struct derived {
	size_t track; /* sink track index */
	int32_t device, core;
	int what; /* 1 DDR bandwidth, 2 TIU utilisation */
};

/* A set of nonzero int32 values (pids, tids): open addressing, at most half full. */
struct intset {
	int32_t *v; /* 0 = empty slot */
	size_t cap, n;
};

struct plan {
	const struct tp_profile *p;
	struct scache strs;    /* strings while planning */
	struct tp_arena arena; /* names */
	uint32_t *dev_track;   /* model track indices grouped by device, in model order ... */
	size_t *dev_track_at;  /* ... device dev's from dev_track_at[dev] to [dev + 1] */
	uint32_t *dev_counter; /* the same for the source's counters */
	size_t *dev_counter_at;
	struct intset pids; /* the process tracks' pids */
	struct intset tids; /* the current device's tids > 0 (plan_threads, assign_tids) */
	struct tp_sink_track *tracks; /* announced in this order */
	size_t ntracks, cap_tracks;
	struct plan_track *dts;
	size_t ndts, cap_dts;
	struct synth {
		struct tp_track t; /* kind, device, core, count; no slices */
		const struct tp_profile *p;
		uint32_t *layers; /* owned: layer indices in (begin, -end, index) order (4 bytes a
		                     layer; the passes over the track read it instead of walking
		                     the whole table each time) */
		uint64_t
		    *bits;     /* while tp_sink_synth_build runs: bit i = layer i is on the track */
		size_t nlanes; /* its lanes as counted ahead (synth_ahead), 0 when not */
	} * *synth;            /* synthesised layer tracks, each allocated on its own (stable) */
	size_t nsynth, cap_synth;
	struct derived *der;
	size_t nder, cap_der;
	uint8_t *flow;      /* flow id per edge, in waiting-slice (dst) order (flow_get) */
	unsigned fw;        /* bytes per flow id: 1, 2 or 4 */
	size_t cap_flow;    /* flow ids allocated */
	struct edge *edges; /* their ends, when stored (else NULL: see edge_next) */
	uint8_t *ends;      /* else their ends as varint deltas, per run (add_edge, edge_next) */
	size_t nends, cap_ends;
	size_t nedges;
	struct edge_run *runs; /* edges in runs of one (source, waiting) plan track pair, in
	                          edge order */
	size_t nruns, cap_runs;
	uint32_t *blkmin; /* per run and block: smallest src_idx in the block (add_edge), then
	                     from the block to the run's end (index_edges) */
	size_t nblk, cap_blk;
	uint32_t *srcruns; /* run indices grouped by source plan track (srcoff[dt] ..
	                      srcoff[dt + 1]) */
	size_t *srcoff;
	struct lanes lanes;  /* count_lanes' */
	size_t *model_lanes; /* per model track: its lanes as counted ahead, 0 when not */
	/* The Layer tracks to synthesise, built and their lanes counted ahead on the threads
	 * (synth_ahead): per (device, core) without a reader's Layer track, the track (NULL when
	 * no layer has timing, or once the planner took it) and whether it was built. */
	struct synth_ahead {
		int32_t dev, core;
		struct synth *y;
		int built;
	} * ahead;
	size_t nahead;
	uint64_t flows_dropped;
	uint64_t flows_skipped; /* partner starts no earlier than the waiting command */
	uint64_t total_slices;  /* slices delivered in all, for the progress line */
};

static inline uint64_t slice_id(const struct plan *pl, uint32_t dt, uint32_t idx)
{
	return pl->dts[dt].base_id + idx + 1;
}

static inline int64_t slice_ns(const struct plan *pl, uint32_t dt, uint32_t idx)
{
	return pl->dts[dt].t->slices[idx].start_ns;
}

/* The engine name of a track kind up to Layer, the order of a core's tracks. */
static inline const char *kind_order_name(int kind)
{
	static const char *const names[] = {"TIU", "GDMA", "SDMA", "CDMA", "MCU", "Layer"};
	return names[kind];
}

/* ---------------------------------------------------------------------------------------- */
/* Lanes and plan tracks (plan.c)                                                           */
/* ---------------------------------------------------------------------------------------- */

/* Lane assignment: the first lane whose open stack accepts the slice. On a non-nesting track
 * a lane accepts a slice only when nothing is open on it; on a nesting track also when the
 * slice lies inside the innermost open slice. Deterministic, so the counting pass and the
 * delivery pass agree. Returns the lane, -1 when MAX_LANES would be exceeded, -2 when out of
 * memory. */
long tp_sink_lane_assign(struct lanes *lz, const struct tp_slice *s, int64_t end, int nested,
                         uint64_t id, uint32_t *depth, uint64_t *parent);

/* Makes room for `need` open slices on lane ln; -1 when out of memory. */
int tp_sink_lane_room(struct lane *ln, size_t need);

/* lane_assign with its usual case inline: lane 0 exists, has room and is empty once the
 * slices that ended by s's start are closed, so it takes s at depth 0 (what lane_assign's
 * first iteration decides too; closing them again there changes nothing). */
static inline long lane_take(struct lanes *lz, const struct tp_slice *s, int64_t end, int nested,
                             uint64_t id, uint32_t *depth, uint64_t *parent)
{
	struct lane *ln = lz->l;
	if (lz->used && ln->cap) {
		while (ln->depth && ln->ends[ln->depth - 1] <= s->start_ns)
			ln->depth--;
		if (ln->depth == 0) {
			*depth = 0;
			*parent = 0;
			ln->ends[0] = end;
			ln->ids[0] = id;
			ln->depth = 1;
			return 0;
		}
	}
	return tp_sink_lane_assign(lz, s, end, nested, id, depth, parent);
}

static inline void lanes_reset(struct lanes *lz)
{
	for (size_t l = 0; l < lz->used; l++)
		lz->l[l].depth = 0;
	lz->used = 0;
}

/* Frees the lanes' stacks. */
void tp_sink_lanes_free(struct lanes *lz);

/* Slice k of a plan track and its end (*end): the model's record, or for a synthesised Layer
 * track one built in *tmp from its layer (valid until the next call with the same tmp), whose
 * span is read once for both. */
static inline const struct tp_slice *pt_slice(const struct tp_profile *p, const struct tp_track *t,
                                              struct synth *syn, size_t k, struct tp_slice *tmp,
                                              int64_t *end)
{
	if (!syn) {
		*end = tp_slice_end(t, &t->slices[k]);
		return &t->slices[k];
	}
	size_t i = syn->layers[k];
	int64_t begin;
	tp_profile_layer_span(p, i, &begin, end); /* the span alone: no decode */
	memset(tmp, 0, sizeof *tmp);
	tmp->start_ns = begin;
	tmp->layer = (int32_t)i;
	return tmp;
}

/* The label of slice s from pt_slice: its track's, or for a synthesised Layer track the
 * layer's type (its name when it has no type) as name and its type as type. */
static inline struct tp_label pt_label(const struct tp_profile *p, const struct tp_track *t,
                                       struct synth *syn, const struct tp_slice *s,
                                       struct tp_layer_memo *memo)
{
	if (!syn)
		return *tp_slice_label(t, s);
	const struct tp_layer *l = tp_layer_memo_get(p, memo, (size_t)s->layer);
	return (struct tp_label){.name = l->type ? l->type : l->name, .type = l->type};
}

/* Adds the tracks of every device to the plan, device after device: its process, per core a
 * "Core N" container with the engine tracks, a Layer track and the derived counters, then the
 * thread tracks and the source's counters, with their pids and tids. Time and memory linear
 * in the tracks and counters (plus, per device, its layers); the model tracks' lanes are
 * counted on `threads` threads (0: each in turn on this thread). TP_OK, TP_ENOMEM or TP_ERANGE
 * (too many overlapping slices), with the diagnostic set. */
int tp_sink_plan_tracks(struct plan *pl, unsigned threads, struct tp_diag *d);

/* Frees what tp_sink_plan_tracks allocated besides the track lists (device index, sets). */
void tp_sink_plan_tracks_free(struct plan *pl);

/* The Layer track of (device, core) built from the profile's layer table (synth.c), NULL when
 * no layer has timing; reads only the profile (any thread). TP_OK or TP_ENOMEM. */
int tp_sink_synth_build(const struct tp_profile *p, int32_t device, int32_t core,
                        struct synth **out);
/* The Layer track of (device, core) put in pl->synth (the plan owns it then): the one built
 * ahead (pl->ahead) when there is one, else built now; *out NULL when no layer has timing. */
int tp_sink_synth_layers(struct plan *pl, int32_t device, int32_t core, struct synth **out);
/* Frees a synthesised track (NULL: nothing). */
void tp_sink_synth_free(struct synth *y);

/* Delivers derived counter dv (windowed DDR bandwidth or TIU utilisation) to sink, from its
 * values (tp_sink_derived_values): a sample where the value changes, and a last 0. */
int tp_sink_emit_derived(const struct plan *pl, const struct derived *dv, const double *vals,
                         struct tp_sink *sink);

/* Derived counter dv's value in each window (rounded as delivered; malloc'd, one per window:
 * at most COUNTER_WINDOWS), or NULL when out of memory. Reads the plan only. */
double *tp_sink_derived_values(const struct plan *pl, const struct derived *dv);

/* ---------------------------------------------------------------------------------------- */
/* Flows (flow.c)                                                                           */
/* ---------------------------------------------------------------------------------------- */

static inline int item_less(const struct heap_item *x, const struct heap_item *y)
{
	return x->key < y->key || (x->key == y->key && x->id < y->id);
}

/* A binary min-heap over a growable array of T (fields a, n, cap) ordered by less(x, y):
 * name##_push copies *x in (TP_ENOMEM when the array cannot grow), name##_pop takes the least
 * out (n > 0). One definition for the sweeps' heaps of (time, id) and of pulled edges. */
#define DEFINE_HEAP(name, H, T, less)                                                              \
	static inline int name##_push(H *h, const T *x)                                            \
	{                                                                                          \
		T *na = tp_grow(h->a, sizeof *h->a, h->n + 1, &h->cap);                            \
		if (!na)                                                                           \
			return TP_ENOMEM;                                                          \
		h->a = na;                                                                         \
		size_t i = h->n++;                                                                 \
		h->a[i] = *x;                                                                      \
		while (i && less(&h->a[i], &h->a[(i - 1) / 2])) {                                  \
			T t = h->a[i];                                                             \
			h->a[i] = h->a[(i - 1) / 2];                                               \
			h->a[(i - 1) / 2] = t;                                                     \
			i = (i - 1) / 2;                                                           \
		}                                                                                  \
		return TP_OK;                                                                      \
	}                                                                                          \
	static inline T name##_pop(H *h)                                                           \
	{                                                                                          \
		T top = h->a[0];                                                                   \
		h->a[0] = h->a[--h->n];                                                            \
		size_t i = 0;                                                                      \
		for (;;) {                                                                         \
			size_t l = 2 * i + 1, r = l + 1, m = i;                                    \
			if (l < h->n && less(&h->a[l], &h->a[m]))                                  \
				m = l;                                                             \
			if (r < h->n && less(&h->a[r], &h->a[m]))                                  \
				m = r;                                                             \
			if (m == i)                                                                \
				break;                                                             \
			T t = h->a[i];                                                             \
			h->a[i] = h->a[m];                                                         \
			h->a[m] = t;                                                               \
			i = m;                                                                     \
		}                                                                                  \
		return top;                                                                        \
	}

DEFINE_HEAP(item_heap, struct heap, struct heap_item, item_less)

static inline int heap_push(struct heap *h, int64_t key, uint64_t id)
{
	struct heap_item x = {key, id};
	return item_heap_push(h, &x);
}

/* DEFINE_PQ(name, P, T, less, heap) defines a priority queue P of T over DEFINE_HEAP's `heap`
 * for keys that arrive nearly in order (dependencies mostly ascend): name##_push appends a key
 * not below the FIFO's last to the FIFO (no sift), else pushes it on the heap; name##_min is
 * the least (the smaller of the two heads; NULL when empty), name##_pop takes it out. The
 * order of the keys popped is the heap's alone, for total orders (keys are unique), so the
 * results are those of a plain heap; most keys just pass through the FIFO. */
#define DEFINE_PQ(name, P, T, less, heap)                                                          \
	static inline int name##_push(P *pq, const T *x)                                           \
	{                                                                                          \
		if (pq->qn > pq->qh && less(x, &pq->q[pq->qn - 1]))                                \
			return heap##_push(&pq->h, x);                                             \
		if (pq->qn == pq->cap && pq->qh && pq->qh >= pq->cap / 2) {                        \
			memmove(pq->q, pq->q + pq->qh, (pq->qn - pq->qh) * sizeof *pq->q);         \
			pq->qn -= pq->qh;                                                          \
			pq->qh = 0;                                                                \
		}                                                                                  \
		T *nq = tp_grow(pq->q, sizeof *pq->q, pq->qn + 1, &pq->cap);                       \
		if (!nq)                                                                           \
			return TP_ENOMEM;                                                          \
		pq->q = nq;                                                                        \
		pq->q[pq->qn++] = *x;                                                              \
		return TP_OK;                                                                      \
	}                                                                                          \
	static inline const T *name##_min(const P *pq)                                             \
	{                                                                                          \
		const T *f = pq->qn > pq->qh ? &pq->q[pq->qh] : NULL;                              \
		if (pq->h.n && (!f || less(&pq->h.a[0], f)))                                       \
			return &pq->h.a[0];                                                        \
		return f;                                                                          \
	}                                                                                          \
	static inline T name##_pop(P *pq)                                                          \
	{                                                                                          \
		if (pq->qn > pq->qh && (!pq->h.n || less(&pq->q[pq->qh], &pq->h.a[0]))) {          \
			T x = pq->q[pq->qh++];                                                     \
			if (pq->qh == pq->qn)                                                      \
				pq->qh = pq->qn = 0;                                               \
			return x;                                                                  \
		}                                                                                  \
		return heap##_pop(&pq->h);                                                         \
	}                                                                                          \
	static inline void name##_free(P *pq)                                                      \
	{                                                                                          \
		tp_free(pq->h.a);                                                                  \
		tp_free(pq->q);                                                                    \
		memset(pq, 0, sizeof *pq);                                                         \
	}

/* Flow id of edge e (EDGE_DROPPED: not drawn). */
static inline uint32_t flow_get(const struct plan *pl, size_t e)
{
	if (pl->fw == 1)
		return pl->flow[e] == UINT8_MAX ? EDGE_DROPPED : pl->flow[e];
	if (pl->fw == 2) {
		uint16_t v;
		memcpy(&v, pl->flow + 2 * e, 2);
		return v == UINT16_MAX ? EDGE_DROPPED : v;
	}
	uint32_t v;
	memcpy(&v, pl->flow + 4 * e, 4);
	return v;
}

/* Widens the flow-id array to `need` bytes per id (a copy) when it is narrower; TP_OK or
 * TP_ENOMEM. */
int tp_sink_flow_width(struct plan *pl, unsigned need);

/* Starts walking the edges whose sources lie on plan track dt in source order (TP_OK or
 * TP_ENOMEM); tp_sink_source_iter_next hands them out one by one: 1 and *x, 0 when none is
 * left, TP_ENOMEM. */
int tp_sink_source_iter_start(const struct plan *pl, struct source_iter *it, uint32_t dt);
int tp_sink_source_iter_next(const struct plan *pl, struct source_iter *it, struct pulled_edge *x);

/* Gives every drawn edge its flow id (flowid.c): the smallest free over the flow's lifetime,
 * swept in segments on `threads` threads (0: on this thread); the ids do not depend on it. */
int tp_sink_flow_ids(struct plan *pl, unsigned threads, struct tp_diag *d);

/* Builds the plan's flow edges (dependencies between a core's TIU and GDMA commands, and the
 * model's own flows) and their flow ids. Needs the plan tracks' base ids. The dependencies
 * are matched per waiting track on `threads` threads (0: on this thread); the edges do not
 * depend on it. */
int tp_sink_plan_flows(struct plan *pl, unsigned threads, struct tp_diag *d);

/* The delivery's position in the flow edges: the next edge in waiting-slice order (over all
 * tracks) and the next edge leaving the current track, in source order. */
struct flow_cursor {
	size_t run;             /* run of the next incoming edge */
	struct edge_cursor in;  /* its cursor */
	uint64_t in_id;         /* the slice it ends at */
	uint32_t in_e;          /* its edge index */
	int have_in;            /* 0 after the last edge */
	struct pulled_edge out; /* the next edge leaving the current track */
	int have_out;           /* 1 while there is one, 0 after, < 0 on error */
};

/* What delivers slices (tp_sink_drive's own walk, or a part on a worker, parts.c): the
 * mutable state of a walk along a plan track, so that the plan is only read meanwhile. Its
 * position (lanes, flow cursors) is copied whole for a part that starts inside a track
 * (tp_sink_walker_copy); the caches are the thread's own. Zero-initialised = empty. */
struct walker {
	struct lanes lanes;
	struct flow_cursor fc;
	struct source_iter out_walk; /* the walk of the current track's outgoing edges */
	uint64_t *out_ids; /* the current slice's outgoing flow ids (tp_sink_slice.flows_out) */
	size_t cap_out_ids;
	struct tp_layer_memo memo;  /* the commands' layers (refnames.c) */
	struct tp_layer_memo smemo; /* a synthesised Layer track's layers (pt_label, refnames.c) */
	struct scache strs;         /* strings (refnames.c, drive.c) */
};

/* Starts the walk of the incoming edges at plan track ti's first slice: the first run whose
 * waiting track is ti or later (the runs are in waiting-slice order). */
void tp_sink_flows_start(const struct plan *pl, struct flow_cursor *fc, size_t ti);

/* Starts the walk of plan track ti's outgoing edges; TP_OK or TP_ENOMEM. */
int tp_sink_flows_track(const struct plan *pl, struct walker *wk, size_t ti);

/* Sets ss->flow_in and ss->flows_out of slice k (id ss->id) of the current track; TP_OK or
 * TP_ENOMEM. Slices must come in delivery order. */
int tp_sink_flows_slice(const struct plan *pl, struct walker *wk, size_t k,
                        struct tp_sink_slice *ss);

/* Makes walk di the same as si (its heaps and per-run cursors: about one block of edges per
 * run of the track); TP_OK or TP_ENOMEM. */
int tp_sink_source_iter_copy(struct source_iter *di, const struct source_iter *si);

/* Frees what a source walk holds. */
void tp_sink_source_iter_free(struct source_iter *it);

/* Makes dst's position (lanes, flow cursors) that of src, so that a walk continued from dst
 * delivers what one continued from src would; dst keeps its caches. TP_OK or TP_ENOMEM
 * (parts.c). */
int tp_sink_walker_copy(struct walker *dst, const struct walker *src);

/* Frees what a walker holds. */
void tp_sink_walker_free(struct walker *wk);

/* ---------------------------------------------------------------------------------------- */
/* Walks (drive.c) and parts (parts.c)                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Frees a plan's contents (not pl itself). */
void tp_sink_plan_free(struct plan *pl);

/* Where a walk hands its slices: fn(ctx, arg, slice) on the walking thread. */
struct tp_sink_walk_to {
	int (*fn)(void *ctx, size_t arg, const struct tp_sink_slice *ss);
	void *ctx;
	size_t arg;
	int full_args; /* tp_sink_fill_args' full */
	int progress;  /* report progress (the driving thread's walk only) */
};

/* Puts wk at the start of plan track ti: lanes empty, outgoing walk started; with seek also
 * the incoming walk (tp_sink_flows_start; without, it continues from the previous track).
 * TP_OK or TP_ENOMEM, with the diagnostic set. */
int tp_sink_track_start(const struct plan *pl, struct walker *wk, size_t ti, int seek,
                        struct tp_diag *d);

/* Walks slices [k0, k1) of plan track ti from wk's position (which must be that of slice k0)
 * with their lanes, nesting, names, arguments and flows, handing each to `to` (ss is the
 * scratch); to == NULL only moves the position (lanes and flows, no names or arguments).
 * Returns the first error. */
int tp_sink_walk(const struct plan *pl, struct walker *wk, size_t ti, size_t k0, size_t k1,
                 const struct tp_sink_walk_to *to, struct tp_sink_slice *ss, struct tp_diag *d);

/* Every plan track's slices in parts, in place of the one walk. Returns the first error,
 * with d set. */
int tp_sink_deliver_parts(const struct plan *pl, const struct tp_sink *sink,
                          const struct tp_sink_parts *pp, struct tp_diag *d);

/* Hands every drawn flow to sink->flow, run by run. */
int tp_sink_emit_flows(const struct plan *pl, struct tp_sink *sink);

/* Frees the plan's flow edges and walks. */
void tp_sink_flows_free(struct plan *pl);

/* ---------------------------------------------------------------------------------------- */
/* Arguments (refnames.c)                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* tp_sink_fill_args; with a memo (tp_sink_drive's: consecutive commands mostly share their
 * layer) the slice's layer is decoded once per run of commands, else on every call; with a
 * string cache sc (or NULL) strings are looked up through it. */
void tp_sink_fill_args_cached(const struct tp_profile *p, const struct tp_track *t,
                              const struct tp_slice *s, int full, struct tp_sink_slice *out,
                              struct tp_layer_memo *memo, struct scache *sc);

#endif /* TP_SINK_INT_H */
