/*
 * sink.c — the driver that walks a finished profile and feeds a trace sink (Perfetto, Chrome
 * JSON, SQLite) in one fixed, deterministic order, plus the reference-named slice arguments.
 *
 * What the driver decides so that every writer agrees:
 *   - the track tree: one process per device; per core a "Core N" container holding the
 *     engine tracks TIU, GDMA, SDMA, CDMA, MCU, Layer, then derived counters "DDR Bandwidth"
 *     (GB/s) and "TIU Utilization" (%); then the device's thread/host tracks and its counters;
 *   - lanes: slices of one engine track that overlap in time (a pipelined DMA engine) cannot
 *     share one timeline track (Perfetto pairs BEGIN/END as a stack), so they are spread over
 *     extra same-named lane tracks; on thread tracks properly nested slices stay on one lane;
 *   - uuids, pids and tids (small, unique, never 0), slice ids (1-based in drive order),
 *     nesting depth and parent slice per lane, and dependency flows (dep_id);
 *   - a Layer track per core synthesised from the profile's layer table when the reader made none.
 *
 * Owns: the plan (track list, names, lane stacks, flow edges) for one tp_sink_drive call; all
 * of it is freed before tp_sink_drive returns. Memory beyond the profile: O(tracks + layers +
 * dependency edges + counter windows), never O(output): an edge costs its flow id (1 byte
 * while ids stay below 255) and its ends (2 bytes for most, see struct edge), edges in source
 * order are walked, not stored, and a synthesised Layer track keeps its layers' indexes in
 * slice order (4 bytes a layer).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/progress.h"
#include "writers/sink/sink.h"

#define MAX_LANES 1024
#define COUNTER_WINDOWS 4000 /* derived counters: at most this many windows over the span */
#define MIN_WINDOW_NS 1000

/* A slice track of the plan: a model track or a synthesised Layer track. */
struct dtrack {
	const struct tp_track *t;
	int model_track;   /* -1 when synthesised */
	size_t first_lane; /* index of its lane-0 sink track */
	size_t nlanes;
	uint64_t base_id; /* slice ids are base_id + index + 1 */
	int nested;
	struct synth *syn; /* synthesised Layer track (t->slices is NULL; see dt_slice), or NULL */
};

struct lane {
	int64_t *ends;
	uint64_t *ids;
	size_t depth, cap;
};

/* Dependency edges (flows). The plan keeps one flow id per edge (a profile can have one edge
 * per command; 1 byte while the ids stay below 255, see flow_set), in waiting-slice (dst)
 * order, in runs of one (source dtrack, waiting dtrack) pair (struct erun). An edge's ends
 * (slice indices) are kept as varint deltas from the previous edge of its run in one byte
 * stream (plan.ends; 2 bytes per edge on a generated 2 M-command dump), read back in order by
 * ewalk_next: matching each waiter's dep_id on the partner track again on every walk (three
 * walks a drive) was a quarter of the driver's time. They are stored in full (struct edge, 8
 * bytes per edge) only when the model has explicit flows (sorted in among the dependencies,
 * plan_model_flows). A flow is open from its source's start to its waiter's start. */
struct edge {
	uint32_t src_idx, dst_idx; /* source slice (the one waited for), waiting slice */
};
#define EDGE_DROPPED UINT32_MAX /* flow id of an edge that is not drawn */

/* A walk along one run: the next edge and (ends in the run's byte stream, see plan.ends) the
 * stream position and the ends of the edge before it. */
struct ewalk {
	uint32_t e;
	uint32_t src, dst;
	size_t pos;
};

/* Edges in source order are not stored either: struct srcit walks the runs whose sources lie
 * on one track and reorders their edges through a heap, pulling EBLK edges of a run at a
 * time. Each run keeps, per block of EBLK edges, the smallest source index of the edges from
 * that block to the run's end (blkmin), so the walk knows when no edge still to pull can come
 * before the heap's head. Dependencies nearly ascend, so the heap holds about one block per
 * run; blkmin costs 4 bytes per EBLK edges. */
#define EBLK 16

struct erun {
	uint32_t src_dt, dst_dt; /* dtracks of the sources and the waiting slices */
	uint32_t from, to;       /* edges [from, to) */
	uint32_t blk;            /* its first entry in plan.blkmin */
	uint32_t last_src;       /* source index of its last edge (add_edge) */
	uint32_t last_dst;       /* waiting index of its last edge (add_edge) */
	size_t pos;              /* its first edge's ends in plan.ends (when not in plan.edges) */
	int src_sorted;          /* its sources never decrease along the run (add_edge) */
	struct ewalk w;          /* srcit's pull cursor (edge from + j * EBLK) */
};

/* Min-heap of (key, id) pairs. */
struct heap {
	struct hent {
		int64_t key;
		uint64_t id;
	} * a;
	size_t n, cap;
};

/* An edge pulled by a source-order walk: its ends, index and run. */
struct pent {
	uint32_t src, dst, e, run;
};

/* Min-heap of pulled edges by (src, e). */
struct pheap {
	struct pent *a;
	size_t n, cap;
};

/* Priority queues for keys that arrive nearly in order (DEFINE_PQ): a sorted FIFO q[qh, qn)
 * takes every key not below its last one, the heap the others. */
struct hpq {
	struct heap h;
	struct hent *q;
	size_t qh, qn, cap;
};
struct ppq {
	struct pheap h;
	struct pent *q;
	size_t qh, qn, cap;
};

/* A walk over the edges whose sources lie on one dtrack, in source order (srcit_next). */
struct srcit {
	struct heap runs; /* runs with edges still to pull: (blkmin of their next block, run) */
	struct ppq pend;  /* pulled edges */
	int single;       /* the dtrack's edges are one run whose sources never decrease (the
	                     usual case): walked in its own order, no heaps ... */
	uint32_t run;     /* ... and this is the run */
};

/* A direct-mapped cache of strtab id -> string for the driver's per-slice lookups: tp_str
 * decodes the table's entry on every call (~30 instructions), and a slice needs two to four
 * of the same few hundred names. The strings are the table's own (same address every time,
 * which the Perfetto writer's interning relies on). Zero-initialised = empty. */
#define SCACHE_SLOTS 256
struct scache {
	uint32_t id[SCACHE_SLOTS];
	const char *s[SCACHE_SLOTS];
};

struct derived {
	size_t track; /* sink track index */
	int32_t device, core;
	int what; /* 1 DDR bandwidth, 2 TIU utilisation */
};

struct plan {
	const struct tp_profile *p;
	struct tp_layer_memo memo;    /* the commands' layers while driving (fill_args) */
	struct scache strs;           /* strings while driving (fill_args, deliver) */
	struct tp_arena arena;        /* names */
	struct tp_sink_track *tracks; /* announced in this order */
	size_t ntracks, cap_tracks;
	struct dtrack *dts;
	size_t ndts, cap_dts;
	struct synth {
		struct tp_track t; /* kind, device, core, count; no slices */
		const struct tp_profile *p;
		uint32_t *layers; /* owned: layer indices in (begin, -end, index) order (4 bytes a
		                     layer; the passes over the track read it instead of walking
		                     the whole table each time) */
		uint64_t *bits;   /* while synth_layers runs: bit i = layer i is on the track */
		struct tp_layer_memo memo; /* dt_label and fill_args decode a layer once (dt_slice
		                              reads only its span) */
	} * *synth; /* synthesised layer tracks, each allocated on its own (stable) */
	size_t nsynth, cap_synth;
	struct derived *der;
	size_t nder, cap_der;
	uint8_t *flow;      /* flow id per edge, in waiting-slice (dst) order (flow_get) */
	unsigned fw;        /* bytes per flow id: 1, 2 or 4 */
	size_t cap_flow;    /* flow ids allocated */
	struct edge *edges; /* their ends, when stored (else NULL: see ewalk_next) */
	uint8_t *ends;      /* else their ends as varint deltas, per run (add_edge, ewalk_next) */
	size_t nends, cap_ends;
	size_t nedges;
	struct erun *runs; /* edges in runs of one (source, waiting) dtrack pair, in edge order */
	size_t nruns, cap_runs;
	uint32_t *blkmin; /* per run and block: smallest src_idx in the block (add_edge), then
	                     from the block to the run's end (index_edges) */
	size_t nblk, cap_blk;
	uint32_t *srcruns; /* run indices grouped by source dtrack (srcoff[dt] .. srcoff[dt + 1]) */
	size_t *srcoff;
	struct srcit dit; /* deliver's walk of the current track's outgoing edges */
	struct lane lanes[MAX_LANES];
	size_t nlanes_used;
	uint64_t flows_dropped;
	uint64_t flows_skipped; /* partner starts no earlier than the waiting command */
	uint64_t total_slices;  /* slices delivered in all, for the progress line */
};

static uint64_t slice_id(const struct plan *pl, uint32_t dt, uint32_t idx)
{
	return pl->dts[dt].base_id + idx + 1;
}

static int64_t slice_ns(const struct plan *pl, uint32_t dt, uint32_t idx)
{
	return pl->dts[dt].t->slices[idx].start_ns;
}

/* Flow id of edge e (EDGE_DROPPED: not drawn). */
static uint32_t flow_get(const struct plan *pl, size_t e)
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

/* flow_set past its usual case: widens the array when id needs it, then stores. */
static int flow_widen(struct plan *pl, size_t e, uint32_t id)
{
	unsigned need = id == EDGE_DROPPED || id < UINT8_MAX ? 1 : id < UINT16_MAX ? 2 : 4;
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

static const char *const kind_order_name[] = {"TIU", "GDMA", "SDMA", "CDMA", "MCU", "Layer"};

/* ---------------------------------------------------------------------------------------- */
/* Arguments                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static struct tp_sink_arg *arg_slot(struct tp_sink_slice *o, const char *key, enum tp_arg_type t)
{
	if (o->num_args >= TP_SINK_MAX_ARGS)
		return NULL;
	struct tp_sink_arg *a = &o->args[o->num_args++];
	*a = (struct tp_sink_arg){.key = key, .type = t};
	return a;
}

static void arg_uint(struct tp_sink_slice *o, const char *key, uint64_t v)
{
	struct tp_sink_arg *a = arg_slot(o, key, TP_ARG_UINT);
	if (a) {
		a->u = v;
		a->i = (int64_t)v;
	}
}

static void arg_int(struct tp_sink_slice *o, const char *key, int64_t v)
{
	struct tp_sink_arg *a = arg_slot(o, key, TP_ARG_INT);
	if (a)
		a->i = v;
}

static void arg_real(struct tp_sink_slice *o, const char *key, double v)
{
	struct tp_sink_arg *a = arg_slot(o, key, TP_ARG_REAL);
	if (a)
		a->d = v;
}

static void arg_str(struct tp_sink_slice *o, const char *key, const char *v)
{
	struct tp_sink_arg *a = arg_slot(o, key, TP_ARG_STR);
	if (a)
		a->s = v ? v : "";
}

/* Reference PerfAI rounds per-command bandwidth to 4 decimals (sophgo-analysis.md §2.3). */
static double round4(double v)
{
	if (!isfinite(v))
		return 0;
	return round(v * 1e4) / 1e4;
}

void tp_sink_fill_args(const struct tp_profile *p, const struct tp_track *t,
                       const struct tp_slice *s, struct tp_sink_slice *out)
{
	tp_sink_fill_args_ex(p, t, s, 0, out);
}

static const char *cstr(const struct tp_profile *p, struct scache *c, uint32_t id)
{
	if (!c)
		return tp_str(p, id);
	size_t k = id & (SCACHE_SLOTS - 1);
	if (c->s[k] && c->id[k] == id)
		return c->s[k];
	c->id[k] = id;
	return c->s[k] = tp_str(p, id);
}

/* tp_sink_fill_args_ex; with a memo (tp_sink_drive's: consecutive commands mostly share their
 * layer) the slice's layer is decoded once per run of commands, else on every call; with a
 * string cache sc (or NULL) strings are looked up through it. */
static void fill_args(const struct tp_profile *p, const struct tp_track *t,
                      const struct tp_slice *s, int full, struct tp_sink_slice *out,
                      struct tp_layer_memo *memo, struct scache *sc)
{
	out->num_args = 0;
	enum tp_track_kind k = (enum tp_track_kind)t->kind;
	struct tp_layer ly;
	int has_layer = s->layer >= 0 && (size_t)s->layer < p->num_layers;
	const struct tp_layer *l = NULL;
	if (has_layer &&
	    (full || k == TP_TRACK_THREAD || k == TP_TRACK_HOST || k == TP_TRACK_LAYER))
		l = memo ? tp_layer_memo_get(p, memo, (size_t)s->layer)
		         : tp_profile_layer(p, (size_t)s->layer, &ly);
	if (k != TP_TRACK_THREAD && k != TP_TRACK_HOST && k != TP_TRACK_LAYER) {
		/* Engine commands, keys spelled as the reference exporter (sophgo-analysis.md
		 * §7.2). Fields that change slowly from one command to the next come first and the
		 * ones that change every command last: in the compressed Perfetto trace a run of
		 * unchanged annotations then costs one back-reference instead of one per field. */
		const struct tp_label *lb = tp_slice_label(t, s);
		int sys = lb->kind != TP_CMD_NORMAL, dma = tp_track_kind_is_dma(k);
		enum tp_dir dir = (enum tp_dir)lb->dir;
		if (full)
			arg_str(out, "Function Name", cstr(p, sc, lb->name));
		if (lb->type)
			arg_str(out, "Function Type", cstr(p, sc, lb->type));
		if (dma && !sys && dir != TP_DIR_NONE)
			arg_str(out, "Direction", tp_dir_name(dir));
		if (lb->dtype)
			arg_str(out, "Data Type", tp_dtype_name((enum tp_dtype)lb->dtype));
		if (l) {
			arg_int(out, "Layer Id", l->id);
			if (l->type)
				arg_str(out, "Layer Type", cstr(p, sc, l->type));
			if (l->name)
				arg_str(out, "Layer Name", cstr(p, sc, l->name));
		} else if (has_layer) {
			/* The compact set names the layer by id only: no decode. */
			arg_int(out, "Layer Id", tp_profile_layer_id(p, (size_t)s->layer));
		}
		if (s->cmd_id)
			arg_uint(out, "Cmd Id", s->cmd_id);
		if (s->dep_id)
			arg_uint(out, k == TP_TRACK_TIU ? "des_cmd_id_dep" : "cmd_id_dep",
			         s->dep_id);
		if (full && s >= t->slices && s < t->slices + t->count)
			arg_uint(out, "Global Idx", (uint64_t)(s - t->slices));
		if (full && s->cycles) {
			arg_uint(out, "Start Cycle", tp_slice_start_cycle(t, s));
			arg_uint(out, "End Cycle", tp_slice_end_cycle(t, s));
			arg_uint(out, "Asic Cycle", s->cycles);
		}
		if (dma && !sys) {
			double bw = round4(tp_slice_gbps(t, s, t->freq_mhz));
			arg_uint(out, "DMA data size(B)", tp_slice_bytes(t, s));
			/* Mode-1 data has no direction: the reference then reports the bandwidth as
			 * DDR bandwidth. */
			arg_real(out, "DDR Bandwidth(GB/s)",
			         dir == TP_DIR_NONE || tp_dir_touches_ddr(dir) ? bw : 0.0);
			if (tp_dir_touches_l2(dir))
				arg_real(out, "L2M Bandwidth(GB/s)", bw);
		}
		if (lb->stall && (dma ? !sys : 1))
			arg_uint(out, "Stall Cycle", lb->stall);
	} else if (l) {
		/* Layer slices (and captured slices tied to a layer) name their layer fully. */
		arg_int(out, "Layer Id", l->id);
		if (l->type)
			arg_str(out, "Layer Type", cstr(p, sc, l->type));
		if (l->name)
			arg_str(out, "Layer Name", cstr(p, sc, l->name));
	}
	size_t n = 0, generated = out->num_args;
	const struct tp_arg *a = tp_args_get(p, s->args, &n);
	for (size_t i = 0; a && i < n; i++) {
		const char *key = cstr(p, sc, a[i].key);
		/* A reader may record a field we also derive (e.g. cmd_id_dep): keep one. The
		 * reader's "Data Type" is the more precise one (TIU "A -> B", costmodel §4), and so
		 * are its dependency registers and bandwidth columns (BM1690 puts a DDR<->L2M move
		 * under DDR only, bm1690_defs.py::get_dma_info). */
		size_t g = 0;
		while (g < generated && strcmp(out->args[g].key, key) != 0)
			g++;
		if (g < generated) {
			if (a[i].type == TP_ARG_STR && out->args[g].type == TP_ARG_STR &&
			    strcmp(key, "Data Type") == 0)
				out->args[g].s = cstr(p, sc, a[i].v.s);
			if (a[i].type == TP_ARG_REAL && out->args[g].type == TP_ARG_REAL &&
			    (strcmp(key, "DDR Bandwidth(GB/s)") == 0 ||
			     strcmp(key, "L2M Bandwidth(GB/s)") == 0))
				out->args[g].d = a[i].v.d;
			/* The register's full value (BM1690 sets bit 20 above the partner's id). */
			if (a[i].type == TP_ARG_UINT && out->args[g].type == TP_ARG_UINT &&
			    (strcmp(key, "des_cmd_id_dep") == 0 ||
			     strcmp(key, "cmd_id_dep") == 0)) {
				out->args[g].u = a[i].v.u;
				out->args[g].i = (int64_t)a[i].v.u;
			}
			continue;
		}
		switch (a[i].type) {
		case TP_ARG_INT:
			arg_int(out, key, a[i].v.i);
			break;
		case TP_ARG_UINT:
			arg_uint(out, key, a[i].v.u);
			break;
		case TP_ARG_REAL:
			arg_real(out, key, a[i].v.d);
			break;
		default:
			arg_str(out, key, cstr(p, sc, a[i].v.s));
			break;
		}
	}
}

void tp_sink_fill_args_ex(const struct tp_profile *p, const struct tp_track *t,
                          const struct tp_slice *s, int full, struct tp_sink_slice *out)
{
	fill_args(p, t, s, full, out, NULL, NULL);
}

size_t tp_sink_fmt_real(char *out, size_t n, double v)
{
	if (n == 0)
		return 0;
	if (!isfinite(v)) {
		const char *t = isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
		snprintf(out, n, "%s", t);
		return strlen(out);
	}
	if (v == 0)
		v = 0; /* -0.0 prints as 0 */
	/* Fast path for values with at most 4 decimals (bandwidths and counters are rounded to
	 * 4): when v is the double nearest to R / 10^4 for an integer R below 10^13, "%.15g"
	 * prints exactly that decimal (v is within half an ulp of it, far less than half a unit
	 * of the 15th digit), trailing zeros dropped, and it reads back as v. */
	double r = round(v * 1e4);
	if (n >= 32 && fabs(v) < 1e9 && r / 1e4 == v) {
		uint64_t m = (uint64_t)fabs(r), ip = m / 10000;
		unsigned fp = (unsigned)(m % 10000);
		char tmp[24], *q = tmp + sizeof tmp, *o = out;
		do {
			*--q = (char)('0' + ip % 10);
			ip /= 10;
		} while (ip);
		if (v < 0)
			*o++ = '-';
		memcpy(o, q, (size_t)(tmp + sizeof tmp - q));
		o += tmp + sizeof tmp - q;
		if (fp) {
			*o++ = '.';
			for (unsigned d = 1000; fp; d /= 10) {
				*o++ = (char)('0' + fp / d);
				fp %= d;
			}
		}
		*o = 0;
		return (size_t)(o - out);
	}
	int k = snprintf(out, n, "%.15g", v);
	if (k > 0 && (size_t)k < n && strtod(out, NULL) != v)
		k = snprintf(out, n, "%.17g", v);
	/* Some C libraries honour LC_NUMERIC; the project never sets a locale, but make sure. */
	for (char *q = out; *q; q++)
		if (*q == ',')
			*q = '.';
	return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Plan                                                                                      */
/* ---------------------------------------------------------------------------------------- */

static struct tp_sink_track *new_track(struct plan *pl)
{
	struct tp_sink_track *n =
	    tp_grow(pl->tracks, sizeof *pl->tracks, pl->ntracks + 1, &pl->cap_tracks);
	if (!n)
		return NULL;
	pl->tracks = n;
	struct tp_sink_track *t = &pl->tracks[pl->ntracks];
	memset(t, 0, sizeof *t);
	t->index = pl->ntracks;
	t->uuid = (uint64_t)pl->ntracks + 1;
	t->model_track = -1;
	t->counter = -1;
	t->core = -1;
	pl->ntracks++;
	return t;
}

static const char *fmt_name(struct plan *pl, const char *fmt, int32_t core, const char *s)
{
	char tmp[512];
	snprintf(tmp, sizeof tmp, fmt, core, s ? s : "");
	return tp_arena_strdup(&pl->arena, tmp);
}

/* Lane assignment: the first lane whose open stack accepts the slice. On a non-nesting track
 * a lane accepts a slice only when nothing is open on it; on a nesting track also when the
 * slice lies inside the innermost open slice. Deterministic, so the counting pass and the
 * delivery pass agree. Returns the lane or -1 when MAX_LANES would be exceeded. */
static long lane_assign(struct plan *pl, const struct tp_slice *s, int64_t end, int nested,
                        uint64_t id, uint32_t *depth, uint64_t *parent)
{
	size_t l;
	for (l = 0; l < pl->nlanes_used; l++) {
		struct lane *ln = &pl->lanes[l];
		while (ln->depth && ln->ends[ln->depth - 1] <= s->start_ns)
			ln->depth--;
		if (ln->depth == 0 || (nested && ln->ends[ln->depth - 1] >= end))
			break;
	}
	if (l == pl->nlanes_used) {
		if (l == MAX_LANES)
			return -1;
		pl->lanes[l].depth = 0;
		pl->nlanes_used++;
	}
	struct lane *ln = &pl->lanes[l];
	if (ln->depth == ln->cap) {
		size_t cap = ln->cap;
		int64_t *e = tp_grow(ln->ends, sizeof *e, ln->depth + 1, &cap);
		if (!e)
			return -2;
		ln->ends = e;
		cap = ln->cap;
		uint64_t *ids = tp_grow(ln->ids, sizeof *ids, ln->depth + 1, &cap);
		if (!ids)
			return -2;
		ln->ids = ids;
		ln->cap = cap;
	}
	*depth = (uint32_t)ln->depth;
	*parent = ln->depth ? ln->ids[ln->depth - 1] : 0;
	ln->ends[ln->depth] = end;
	ln->ids[ln->depth] = id;
	ln->depth++;
	return (long)l;
}

/* lane_assign with its usual case inline: lane 0 exists, has room and is empty once the
 * slices that ended by s's start are closed, so it takes s at depth 0 (what lane_assign's
 * first iteration decides too; closing them again there changes nothing). */
static inline long lane_take(struct plan *pl, const struct tp_slice *s, int64_t end, int nested,
                             uint64_t id, uint32_t *depth, uint64_t *parent)
{
	struct lane *ln = &pl->lanes[0];
	if (pl->nlanes_used && ln->cap) {
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
	return lane_assign(pl, s, end, nested, id, depth, parent);
}

static void lanes_reset(struct plan *pl)
{
	for (size_t l = 0; l < pl->nlanes_used; l++)
		pl->lanes[l].depth = 0;
	pl->nlanes_used = 0;
}

/* Slice k of a plan track and its end (*end): the model's record, or for a synthesised Layer
 * track one built in *tmp from its layer (valid until the next call with the same tmp), whose
 * span is read once for both. */
static const struct tp_slice *dt_slice(const struct tp_profile *p, const struct tp_track *t,
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

/* The label of slice s from dt_slice: its track's, or for a synthesised Layer track the
 * layer's type (its name when it has no type) as name and its type as type. */
static struct tp_label dt_label(const struct tp_profile *p, const struct tp_track *t,
                                struct synth *syn, const struct tp_slice *s)
{
	if (!syn)
		return *tp_slice_label(t, s);
	const struct tp_layer *l = tp_layer_memo_get(p, &syn->memo, (size_t)s->layer);
	return (struct tp_label){.name = l->type ? l->type : l->name, .type = l->type};
}

/* Counts the lanes a track needs. */
static int count_lanes(struct plan *pl, const struct tp_track *t, struct synth *syn, int nested,
                       size_t *nlanes, struct tp_diag *d)
{
	lanes_reset(pl);
	for (size_t k = 0; k < t->count; k++) {
		uint32_t depth;
		uint64_t parent;
		struct tp_slice tmp;
		int64_t end;
		const struct tp_slice *s = dt_slice(pl->p, t, syn, k, &tmp, &end);
		long l = lane_take(pl, s, end, nested, k + 1, &depth, &parent);
		if (l == -2)
			return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace lanes");
		if (l < 0)
			return tp_diag_set(
			    d, TP_ERANGE, "track \"%s\": more than %d slices overlap at %lld ns",
			    tp_str(pl->p, t->name), MAX_LANES, (long long)s->start_ns);
	}
	*nlanes = pl->nlanes_used ? pl->nlanes_used : 1;
	lanes_reset(pl);
	return TP_OK;
}

static int add_dtrack(struct plan *pl, const struct tp_track *t, struct synth *syn, int model_track,
                      const struct tp_sink_track *proto, const char *lane_name, struct tp_diag *d)
{
	int nested = t->kind == TP_TRACK_THREAD || t->kind == TP_TRACK_HOST;
	size_t nlanes = 1;
	int st = count_lanes(pl, t, syn, nested, &nlanes, d);
	if (st)
		return st;
	struct dtrack *n = tp_grow(pl->dts, sizeof *pl->dts, pl->ndts + 1, &pl->cap_dts);
	if (!n)
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	pl->dts = n;
	struct dtrack *dt = &pl->dts[pl->ndts++];
	dt->t = t;
	dt->model_track = model_track;
	dt->first_lane = pl->ntracks;
	dt->nlanes = nlanes;
	dt->nested = nested;
	dt->syn = syn;
	for (size_t l = 0; l < nlanes; l++) {
		struct tp_sink_track *x = new_track(pl);
		if (!x)
			return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
		uint64_t uuid = x->uuid;
		size_t index = x->index;
		*x = *proto;
		x->uuid = uuid;
		x->index = index;
		x->lane = (int32_t)l;
		x->nested = nested;
		x->model_track = model_track;
		x->counter = -1;
		x->name = lane_name;
		if (l > 0)
			x->tid = 0; /* assigned later: every lane is its own Chrome thread */
	}
	return TP_OK;
}

static int add_derived(struct plan *pl, int32_t device, int32_t core, int what, uint64_t parent,
                       int32_t pid, int32_t sort, struct tp_diag *d)
{
	struct tp_sink_track *x = new_track(pl);
	struct derived *n = tp_grow(pl->der, sizeof *pl->der, pl->nder + 1, &pl->cap_der);
	if (!x || !n)
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	pl->der = n;
	const char *nm = what == 1 ? "DDR Bandwidth" : "TIU Utilization";
	x->parent_uuid = parent;
	x->name = nm;
	x->full_name = fmt_name(pl, "Core %d %s", core, nm);
	x->is_counter = 1;
	x->unit = what == 1 ? "GB/s" : "%";
	x->pid = pid;
	x->sort_index = sort;
	x->core = core;
	pl->der[pl->nder++] = (struct derived){x->index, device, core, what};
	return TP_OK;
}

/* DEFINE_SORT(name, T, less) defines void name(T *a, size_t n), sorting in place by
 * less(const T *, const T *) for unique keys (stability does not matter): quicksort (median
 * of three) that needs no scratch copy, heapsort when the recursion gets deep, insertion sort
 * for short runs. The comparison is inlined, unlike qsort's function pointer. */
#define DEFINE_SORT(name, T, less)                                                                 \
	static void name##_sift(T *a, size_t n, size_t i)                                          \
	{                                                                                          \
		for (;;) {                                                                         \
			size_t l = 2 * i + 1, m = i;                                               \
			if (l < n && less(&a[m], &a[l]))                                           \
				m = l;                                                             \
			if (l + 1 < n && less(&a[m], &a[l + 1]))                                   \
				m = l + 1;                                                         \
			if (m == i)                                                                \
				return;                                                            \
			T t_ = a[i];                                                               \
			a[i] = a[m];                                                               \
			a[m] = t_;                                                                 \
			i = m;                                                                     \
		}                                                                                  \
	}                                                                                          \
	static void name##_rec(T *a, size_t n, unsigned depth)                                     \
	{                                                                                          \
		T t_;                                                                              \
		while (n > 16) {                                                                   \
			if (depth-- == 0) {                                                        \
				for (size_t i = n / 2; i-- > 0;)                                   \
					name##_sift(a, n, i);                                      \
				for (size_t i = n; i-- > 1;) {                                     \
					t_ = a[0], a[0] = a[i], a[i] = t_;                         \
					name##_sift(a, i, 0);                                      \
				}                                                                  \
				return;                                                            \
			}                                                                          \
			size_t mid = n / 2;                                                        \
			if (less(&a[mid], &a[0]))                                                  \
				t_ = a[mid], a[mid] = a[0], a[0] = t_;                             \
			if (less(&a[n - 1], &a[0]))                                                \
				t_ = a[n - 1], a[n - 1] = a[0], a[0] = t_;                         \
			if (less(&a[n - 1], &a[mid]))                                              \
				t_ = a[n - 1], a[n - 1] = a[mid], a[mid] = t_;                     \
			T piv = a[mid];                                                            \
			size_t i = 0, j = n - 1;                                                   \
			for (;;) {                                                                 \
				while (less(&a[i], &piv))                                          \
					i++;                                                       \
				while (less(&piv, &a[j]))                                          \
					j--;                                                       \
				if (i >= j)                                                        \
					break;                                                     \
				t_ = a[i], a[i] = a[j], a[j] = t_;                                 \
				i++;                                                               \
				j--;                                                               \
			}                                                                          \
			/* [0, j] <= piv <= [j + 1, n): loop on the larger side */                 \
			size_t left = j + 1;                                                       \
			if (left < n - left) {                                                     \
				name##_rec(a, left, depth);                                        \
				a += left;                                                         \
				n -= left;                                                         \
			} else {                                                                   \
				name##_rec(a + left, n - left, depth);                             \
				n = left;                                                          \
			}                                                                          \
		}                                                                                  \
		for (size_t i = 1; i < n; i++) {                                                   \
			T v_ = a[i];                                                               \
			size_t j = i;                                                              \
			for (; j > 0 && less(&v_, &a[j - 1]); j--)                                 \
				a[j] = a[j - 1];                                                   \
			a[j] = v_;                                                                 \
		}                                                                                  \
	}                                                                                          \
	static void name(T *a, size_t n)                                                           \
	{                                                                                          \
		unsigned depth = 0;                                                                \
		for (size_t k = n; k; k >>= 1)                                                     \
			depth += 2;                                                                \
		name##_rec(a, n, depth);                                                           \
	}

/* Order of a synthesised Layer track: (begin asc, end desc, layer index asc). */
struct lkey {
	int64_t begin, end;
	uint32_t layer;
};

static int lkey_less(const struct lkey *x, const struct lkey *y)
{
	if (x->begin != y->begin)
		return x->begin < y->begin;
	if (x->end != y->end)
		return x->end > y->end;
	return x->layer < y->layer;
}

DEFINE_SORT(lkey_sort, struct lkey, lkey_less)

static struct lkey lkey_of(const struct tp_profile *p, uint32_t i)
{
	struct lkey k = {0, -1, i};
	tp_profile_layer_span(p, i, &k.begin, &k.end);
	return k;
}

static int synth_keep(const void *ctx, size_t i)
{
	const struct synth *y = ctx;
	return (int)(y->bits[i / 64] >> (i % 64) & 1);
}

static int synth_before(const void *ctx, uint32_t x, uint32_t y)
{
	const struct synth *s = ctx;
	struct lkey a = lkey_of(s->p, x), b = lkey_of(s->p, y);
	return lkey_less(&a, &b);
}

/* Builds a Layer track of (device, core) from the profile's layer table, or leaves *out NULL
 * when no layer has timing. The track holds no slices (dt_slice builds each slice when it is
 * needed), only its layers' indices in slice order (4 bytes per layer): one tp_walk of the
 * table when it lists the core's layers nearly in that order (a window of TP_WALK_WINDOW; the
 * usual case), else a sort. */
static int synth_layers(struct plan *pl, int32_t device, int32_t core, struct synth **out)
{
	const struct tp_profile *p = pl->p;
	*out = NULL;
	if (p->num_layers > UINT32_MAX)
		return TP_OK;
	uint64_t *bits = tp_calloc(p->num_layers / 64 + 1, sizeof *bits);
	if (!bits)
		return TP_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < p->num_layers; i++) {
		int32_t ldev, lcore;
		if (tp_profile_layer_place(p, i, &ldev, &lcore) && ldev == device &&
		    lcore == core) {
			bits[i / 64] |= (uint64_t)1 << (i % 64);
			n++;
		}
	}
	if (!n) {
		tp_free(bits);
		return TP_OK;
	}
	struct synth **ns = tp_grow(pl->synth, sizeof *pl->synth, pl->nsynth + 1, &pl->cap_synth);
	struct synth *y = ns ? tp_calloc(1, sizeof *y) : NULL;
	if (ns)
		pl->synth = ns;
	if (!y) {
		tp_free(bits);
		return TP_ENOMEM;
	}
	pl->synth[pl->nsynth++] = y;
	y->t.kind = TP_TRACK_LAYER;
	y->t.device = device;
	y->t.core = core;
	y->t.count = n;
	y->p = p;
	y->bits = bits;
	if (!(y->layers = tp_malloc(n * sizeof *y->layers))) {
		tp_free(bits);
		y->bits = NULL;
		return TP_ENOMEM;
	}
	struct tp_walk w;
	tp_walk_start(&w, p->num_layers, synth_keep, synth_before, y);
	size_t k = 0;
	int ordered = 1;
	uint32_t x;
	while (k < n && tp_walk_next(&w, &x)) {
		if (k && !synth_before(y, y->layers[k - 1], x))
			ordered = 0;
		y->layers[k++] = x;
	}
	if (!ordered || k != n) { /* not nearly in order: sort this core's layers */
		n = 0;
		for (size_t i = 0; i < p->num_layers; i++)
			if (bits[i / 64] >> (i % 64) & 1)
				y->layers[n++] = (uint32_t)i;
		struct lkey *kv = tp_malloc(n * sizeof *kv);
		if (!kv) {
			tp_free(bits);
			y->bits = NULL;
			return TP_ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			kv[i] = lkey_of(p, y->layers[i]);
		lkey_sort(kv, n);
		for (size_t i = 0; i < n; i++)
			y->layers[i] = kv[i].layer;
		tp_free(kv);
	}
	tp_free(bits);
	y->bits = NULL;
	*out = y;
	return TP_OK;
}

static int int_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

static int pid_used(const struct plan *pl, int32_t pid)
{
	for (size_t i = 0; i < pl->ntracks; i++)
		if (pl->tracks[i].is_process && pl->tracks[i].pid == pid)
			return 1;
	return 0;
}

static int tid_used(const struct plan *pl, size_t from, int32_t tid)
{
	for (size_t i = from; i < pl->ntracks; i++)
		if (pl->tracks[i].tid == tid)
			return 1;
	return 0;
}

static int plan_device(struct plan *pl, int32_t dev, struct tp_diag *d)
{
	const struct tp_profile *p = pl->p;
	const struct tp_device *dv = &p->devices[dev];
	struct tp_sink_track *proc = new_track(pl);
	if (!proc)
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	size_t first = proc->index;
	/* Capture devices carry the OS pid; accelerator devices often id 0, which Perfetto
	 * folds into the kernel's swapper process (perfetto.md pitfall 13). */
	int32_t pid = dv->id > 0 ? dv->id : 1000 + dev;
	while (pid_used(pl, pid))
		pid++;
	proc = &pl->tracks[first];
	proc->pid = pid;
	proc->is_process = 1;
	proc->sort_index = dev;
	proc->name = dv->name ? tp_str(p, dv->name) : "";
	if (!*proc->name)
		proc->name = fmt_name(pl, "Device %d%s", dv->id, "");
	proc->full_name = proc->name;
	uint64_t proc_uuid = proc->uuid;

	/* Cores that have engine or layer tracks, ascending. */
	size_t cap_cores = p->num_tracks + 1; /* grown for the cores only layers have */
	int32_t *cores = tp_calloc(cap_cores, sizeof *cores);
	if (!cores)
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	size_t nc = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (t->device == dev && t->core >= 0 && t->kind <= TP_TRACK_LAYER)
			cores[nc++] = t->core;
	}
	/* Layers add their cores once each (a million layers must not mean a million-entry
	 * sort): the last core seen is skipped cheaply, others are looked up in the list (the
	 * sort and the duplicate skip below still cover a list that outgrows the lookup). */
	int32_t last = -1;
	for (size_t i = 0; i < p->num_layers; i++) {
		int32_t ldev, lcore;
		if (!tp_profile_layer_place(p, i, &ldev, &lcore) || ldev != dev || lcore < 0 ||
		    lcore == last)
			continue;
		last = lcore;
		size_t k = nc > 256 ? nc : 0; /* past 256 cores: appended, sorted below */
		while (k < nc && cores[k] != lcore)
			k++;
		if (k < nc)
			continue;
		int32_t *g = tp_grow(cores, sizeof *cores, nc + 1, &cap_cores);
		if (!g) {
			tp_free(cores);
			return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
		}
		cores = g;
		cores[nc++] = lcore;
	}
	qsort(cores, nc, sizeof *cores, int_cmp);
	int st = TP_OK;
	int32_t sort = 0;
	for (size_t ci = 0; ci < nc && !st; ci++) {
		if (ci && cores[ci] == cores[ci - 1])
			continue;
		int32_t core = cores[ci];
		struct tp_sink_track *box = new_track(pl);
		if (!box) {
			st = tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
			break;
		}
		box->parent_uuid = proc_uuid;
		box->is_container = 1;
		box->name = fmt_name(pl, "Core %d%s", core, "");
		box->full_name = box->name;
		box->pid = pid;
		box->core = core;
		box->sort_index = sort++;
		uint64_t box_uuid = box->uuid;
		int32_t rank = 0;
		int has_tiu = 0, has_dma = 0, has_layer_track = 0;
		for (int k = TP_TRACK_TIU; k <= TP_TRACK_LAYER && !st; k++) {
			for (size_t i = 0; i < p->num_tracks && !st; i++) {
				const struct tp_track *t = &p->tracks[i];
				if (t->device != dev || t->core != core || t->kind != k)
					continue;
				has_tiu |= k == TP_TRACK_TIU;
				has_dma |= tp_track_kind_is_dma((enum tp_track_kind)k);
				has_layer_track |= k == TP_TRACK_LAYER;
				struct tp_sink_track proto = {0};
				proto.parent_uuid = box_uuid;
				proto.pid = pid;
				proto.core = core;
				proto.sort_index = rank++;
				/* A core can have several CDMA tracks (one per port, cdm reader):
				 * they keep their own names ("CDMA port 3"). */
				const char *kn = kind_order_name[k];
				if (k == TP_TRACK_CDMA && t->name && tp_str(p, t->name)[0])
					kn = tp_str(p, t->name);
				proto.full_name = fmt_name(pl, "Core %d %s", core, kn);
				st = add_dtrack(pl, t, NULL, (int)i, &proto, kn, d);
			}
			if (k == TP_TRACK_LAYER && !has_layer_track && !st) {
				struct synth *lt;
				if (synth_layers(pl, dev, core, &lt)) {
					st = tp_diag_set(d, TP_ENOMEM,
					                 "out of memory building layer tracks");
				} else if (lt) {
					struct tp_sink_track proto = {0};
					proto.parent_uuid = box_uuid;
					proto.pid = pid;
					proto.core = core;
					proto.sort_index = rank++;
					proto.full_name = fmt_name(pl, "Core %d %s", core, "Layer");
					st = add_dtrack(pl, &lt->t, lt, -1, &proto, "Layer", d);
				}
			}
		}
		if (!st && has_dma)
			st = add_derived(pl, dev, core, 1, box_uuid, pid, rank++, d);
		if (!st && has_tiu)
			st = add_derived(pl, dev, core, 2, box_uuid, pid, rank++, d);
	}
	tp_free(cores);
	/* Thread, host and core-less tracks, in model order. */
	for (size_t i = 0; i < p->num_tracks && !st; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (t->device != dev || (t->core >= 0 && t->kind <= TP_TRACK_LAYER))
			continue;
		struct tp_sink_track proto = {0};
		proto.parent_uuid = proc_uuid;
		proto.pid = pid;
		proto.core = t->core;
		proto.sort_index = sort++;
		const char *nm = tp_str(p, t->name);
		if (!*nm)
			nm = tp_track_kind_name((enum tp_track_kind)t->kind);
		proto.full_name = nm;
		int64_t tid = t->tid;
		proto.tid = tid > 0 && tid <= INT32_MAX && !tid_used(pl, first, (int32_t)tid)
		                ? (int32_t)tid
		                : 0;
		st = add_dtrack(pl, t, NULL, (int)i, &proto, nm, d);
	}
	/* Counters recorded by the source. */
	for (size_t i = 0; i < p->num_counters && !st; i++) {
		const struct tp_counter *c = &p->counters[i];
		if (c->device != dev)
			continue;
		struct tp_sink_track *x = new_track(pl);
		if (!x) {
			st = tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
			break;
		}
		x->parent_uuid = proc_uuid;
		x->name = tp_str(p, c->name);
		x->full_name = x->name;
		x->is_counter = 1;
		x->unit = c->unit ? tp_str(p, c->unit) : NULL;
		x->pid = pid;
		x->sort_index = sort++;
		x->counter = (int)i;
		if (c->track >= 0 && (size_t)c->track < p->num_tracks)
			x->core = p->tracks[c->track].core;
	}
	if (st)
		return st;
	/* Synthetic tids for every other track of the device (engine lanes, containers,
	 * counters, tid-less threads): unique in the process, never 0, never a tid a captured
	 * thread already uses. The process track itself uses its pid. */
	pl->tracks[first].tid = pid;
	int32_t next = 1;
	for (size_t i = first + 1; i < pl->ntracks; i++) {
		struct tp_sink_track *x = &pl->tracks[i];
		if (x->tid > 0)
			continue;
		while (tid_used(pl, first + 1, next))
			next++;
		x->tid = next++;
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

static int assign_flow_ids(struct plan *pl, struct tp_diag *d);

/* The partner dtrack of a TIU or GDMA dtrack (the first of the other kind on the same device
 * and core), or -1. */
static long partner(const struct plan *pl, size_t i)
{
	const struct dtrack *w = &pl->dts[i];
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
	size_t lo = 0, hi = t->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->slices[mid].start_ns <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back over the slices that started no later than ts: nested ones come after their
	 * parents, so the first that still covers ts is the innermost. A bounded walk keeps a
	 * pathological track from costing O(n) per flow. */
	for (size_t k = lo, steps = 0; k-- > 0 && steps < 64; steps++)
		if (tp_slice_end(t, &t->slices[k]) >= ts)
			return (long)k;
	return -1;
}

static int hless(const struct hent *x, const struct hent *y)
{
	return x->key < y->key || (x->key == y->key && x->id < y->id);
}

/* A binary min-heap over a growable array of T (fields a, n, cap) ordered by less(x, y):
 * name##_push copies *x in (TP_ENOMEM when the array cannot grow), name##_pop takes the least
 * out (n > 0). One definition for the sweeps' heaps of (time, id) and of pulled edges. */
#define DEFINE_HEAP(name, H, T, less)                                                              \
	static int name##_push(H *h, const T *x)                                                   \
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
	static T name##_pop(H *h)                                                                  \
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

DEFINE_HEAP(hheap, struct heap, struct hent, hless)

static int heap_push(struct heap *h, int64_t key, uint64_t id)
{
	struct hent x = {key, id};
	return hheap_push(h, &x);
}

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

static void ewalk_start(const struct erun *r, struct ewalk *w)
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
 * source and waiting dtracks), 0 past the run's end. */
static int ewalk_next(const struct plan *pl, const struct erun *r, struct ewalk *w, uint32_t *src,
                      uint32_t *dst)
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

/* Appends an edge (the edges come in destination order) to the last run, or starts a run. */
static int add_edge(struct plan *pl, uint32_t sdt, uint32_t si, uint32_t ddt, uint32_t di,
                    uint32_t flow_id)
{
	struct erun *r = pl->nruns ? &pl->runs[pl->nruns - 1] : NULL;
	if (!r || r->src_dt != sdt || r->dst_dt != ddt) {
		struct erun *n = tp_grow(pl->runs, sizeof *pl->runs, pl->nruns + 1, &pl->cap_runs);
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
	if (flow_set(pl, pl->nedges, flow_id))
		return TP_ENOMEM;
	pl->nedges++;
	r->to = (uint32_t)pl->nedges;
	return TP_OK;
}

/* An edge with both its dtracks: only while the model's flows are sorted in. */
struct wedge {
	uint32_t src_dt, src_idx, dst_dt, dst_idx;
};

static int wedge_dst_cmp(const void *x, const void *y)
{
	const struct wedge *a = x, *b = y;
	if (a->dst_dt != b->dst_dt)
		return a->dst_dt < b->dst_dt ? -1 : 1;
	if (a->dst_idx != b->dst_idx)
		return a->dst_idx < b->dst_idx ? -1 : 1;
	if (a->src_dt != b->src_dt)
		return a->src_dt < b->src_dt ? -1 : 1;
	return a->src_idx < b->src_idx ? -1 : a->src_idx > b->src_idx;
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
	struct wedge *w = tp_malloc((pl->nedges + p->num_flows) * sizeof *w);
	if (!w)
		return TP_ENOMEM;
	size_t n = 0;
	for (size_t r = 0; r < pl->nruns; r++)
		for (uint32_t i = pl->runs[r].from; i < pl->runs[r].to; i++)
			w[n++] = (struct wedge){pl->runs[r].src_dt, pl->edges[i].src_idx,
			                        pl->runs[r].dst_dt, pl->edges[i].dst_idx};
	size_t before = n;
	for (size_t i = 0; i < p->num_flows; i++) {
		const struct tp_flow *f = &p->flows[i];
		long sdt = -1, ddt = -1;
		for (size_t k = 0; k < pl->ndts && (sdt < 0 || ddt < 0); k++) {
			if (pl->dts[k].model_track < 0)
				continue;
			if (pl->dts[k].model_track == f->from_track)
				sdt = (long)k;
			if (pl->dts[k].model_track == f->to_track)
				ddt = (long)k;
		}
		if (sdt < 0 || ddt < 0 || pl->dts[sdt].t->count > UINT32_MAX ||
		    pl->dts[ddt].t->count > UINT32_MAX) {
			pl->flows_skipped++;
			continue;
		}
		long si = enclosing(pl->dts[sdt].t, f->from_ns);
		long di = enclosing(pl->dts[ddt].t, f->to_ns);
		if (si < 0 || di < 0 ||
		    pl->dts[sdt].t->slices[si].start_ns >= pl->dts[ddt].t->slices[di].start_ns) {
			pl->flows_skipped++;
			continue;
		}
		w[n++] = (struct wedge){(uint32_t)sdt, (uint32_t)si, (uint32_t)ddt, (uint32_t)di};
	}
	int st = TP_OK;
	if (n > before) {
		qsort(w, n, sizeof *w, wedge_dst_cmp);
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
			st = add_edge(pl, w[i].src_dt, w[i].src_idx, w[i].dst_dt, w[i].dst_idx, id);
		}
	}
	tp_free(w);
	return st;
}

/* Turns blkmin (per run and block of EBLK edges: the smallest source index in the block, from
 * add_edge) into the smallest from that block to the run's end, and groups the runs by source
 * dtrack (srcruns, srcoff). */
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
		const struct erun *x = &pl->runs[r];
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

static int pless(const struct pent *x, const struct pent *y)
{
	return x->src < y->src || (x->src == y->src && x->e < y->e);
}

DEFINE_HEAP(pheap, struct pheap, struct pent, pless)

/* DEFINE_PQ(name, P, T, less, heap) defines a priority queue P of T over DEFINE_HEAP's `heap`
 * for keys that arrive nearly in order (dependencies mostly ascend): name##_push appends a key
 * not below the FIFO's last to the FIFO (no sift), else pushes it on the heap; name##_min is
 * the least (the smaller of the two heads; NULL when empty), name##_pop takes it out. The
 * order of the keys popped is the heap's alone, for total orders (keys are unique), so the
 * results are those of a plain heap; most keys just pass through the FIFO. */
#define DEFINE_PQ(name, P, T, less, heap)                                                          \
	static int name##_push(P *pq, const T *x)                                                  \
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
	static const T *name##_min(const P *pq)                                                    \
	{                                                                                          \
		const T *f = pq->qn > pq->qh ? &pq->q[pq->qh] : NULL;                              \
		if (pq->h.n && (!f || less(&pq->h.a[0], f)))                                       \
			return &pq->h.a[0];                                                        \
		return f;                                                                          \
	}                                                                                          \
	static T name##_pop(P *pq)                                                                 \
	{                                                                                          \
		if (pq->qn > pq->qh && (!pq->h.n || less(&pq->q[pq->qh], &pq->h.a[0]))) {          \
			T x = pq->q[pq->qh++];                                                     \
			if (pq->qh == pq->qn)                                                      \
				pq->qh = pq->qn = 0;                                               \
			return x;                                                                  \
		}                                                                                  \
		return heap##_pop(&pq->h);                                                         \
	}                                                                                          \
	static void name##_free(P *pq)                                                             \
	{                                                                                          \
		tp_free(pq->h.a);                                                                  \
		tp_free(pq->q);                                                                    \
		memset(pq, 0, sizeof *pq);                                                         \
	}

DEFINE_PQ(ppq, struct ppq, struct pent, pless, pheap)
DEFINE_PQ(hpq, struct hpq, struct hent, hless, hheap)

/* Starts walking the edges whose source lies on dtrack dt in source order. */
static int srcit_start(struct plan *pl, struct srcit *it, uint32_t dt)
{
	it->runs.n = 0;
	it->pend.h.n = 0;
	it->pend.qh = it->pend.qn = 0;
	it->single = 0;
	if (pl->srcoff[dt + 1] - pl->srcoff[dt] == 1 &&
	    pl->runs[pl->srcruns[pl->srcoff[dt]]].src_sorted) {
		/* In (source index, edge index) order already: the run's own. */
		it->single = 1;
		it->run = pl->srcruns[pl->srcoff[dt]];
		ewalk_start(&pl->runs[it->run], &pl->runs[it->run].w);
		return TP_OK;
	}
	for (size_t k = pl->srcoff[dt]; k < pl->srcoff[dt + 1]; k++) {
		struct erun *r = &pl->runs[pl->srcruns[k]];
		ewalk_start(r, &r->w);
		if (heap_push(&it->runs, pl->blkmin[r->blk], pl->srcruns[k]))
			return TP_ENOMEM;
	}
	return TP_OK;
}

/* The next edge of the walk started by srcit_start, in (source index, edge index) order:
 * returns 1 and sets *x, 0 when no edge is left, TP_ENOMEM. An edge is handed out once every
 * edge that could precede it has been pulled: when the heap's head has a smaller source
 * index than any run's edges still to pull (blkmin). */
static int srcit_next(struct plan *pl, struct srcit *it, struct pent *x)
{
	if (it->single) {
		struct erun *r = &pl->runs[it->run];
		x->e = r->w.e;
		x->run = it->run;
		return ewalk_next(pl, r, &r->w, &x->src, &x->dst);
	}
	for (;;) {
		const struct pent *m = ppq_min(&it->pend);
		if (m && (!it->runs.n || (int64_t)m->src < it->runs.a[0].key)) {
			*x = ppq_pop(&it->pend);
			return 1;
		}
		if (!it->runs.n)
			return 0;
		struct hent h = hheap_pop(&it->runs);
		struct erun *r = &pl->runs[h.id];
		for (int j = 0; j < EBLK; j++) {
			struct pent y = {0, 0, r->w.e, (uint32_t)h.id};
			if (!ewalk_next(pl, r, &r->w, &y.src, &y.dst))
				break;
			if (ppq_push(&it->pend, &y))
				return TP_ENOMEM;
		}
		if (r->w.e < r->to &&
		    heap_push(&it->runs, pl->blkmin[r->blk + (r->w.e - r->from) / EBLK], h.id))
			return TP_ENOMEM;
	}
}

static void srcit_free(struct srcit *it)
{
	tp_free(it->runs.a);
	ppq_free(&it->pend);
	memset(it, 0, sizeof *it);
}

static int plan_flows(struct plan *pl, struct tp_diag *d)
{
	/* Edges are counted in 32 bits (slice and edge indices); the flow ids are allocated
	 * once for the most there can be. */
	size_t most = 0;
	if (pl->ndts > UINT32_MAX || pl->total_slices > UINT32_MAX)
		return TP_OK;
	/* The ends of the edges are stored in full only when the model's flows must be sorted
	 * in (plan_model_flows), else as a byte stream of deltas (add_edge). */
	int stored = pl->p->num_flows != 0;
	for (size_t i = 0; i < pl->ndts; i++) {
		long pi = partner(pl, i);
		if (pi < 0 || pl->dts[i].t->count > UINT32_MAX || pl->dts[pi].t->count > UINT32_MAX)
			continue;
		size_t n = 0;
		for (size_t k = 0; k < pl->dts[i].t->count; k++)
			n += pl->dts[i].t->slices[k].dep_id != 0;
		most += n;
	}
	most += pl->p->num_flows;
	if (!most || most >= UINT32_MAX)
		return TP_OK;
	pl->flow = tp_calloc(most, 1);
	pl->fw = 1;
	pl->cap_flow = most;
	if (!stored) {
		pl->cap_ends = 2 * most + 16; /* most edges take 2 bytes; grown if not */
		pl->ends = tp_malloc(pl->cap_ends);
	}
	if (!pl->flow || (stored && !(pl->edges = tp_malloc(most * sizeof *pl->edges))) ||
	    (!stored && !pl->ends))
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning flows");
	for (size_t i = 0; i < pl->ndts; i++) {
		const struct dtrack *w = &pl->dts[i];
		long pi = partner(pl, i);
		if (pi < 0 || w->t->count > UINT32_MAX || pl->dts[pi].t->count > UINT32_MAX)
			continue;
		int any = 0;
		for (size_t k = 0; k < w->t->count && !any; k++)
			any = w->t->slices[k].dep_id != 0;
		if (!any)
			continue;
		struct cmdix cx;
		if (build_cmdix(&cx, pl->dts[pi].t))
			return tp_diag_set(d, TP_ENOMEM, "out of memory planning flows");
		for (size_t k = 0; k < w->t->count; k++) {
			const struct tp_slice *s = &w->t->slices[k];
			if (!s->dep_id)
				continue;
			long src = dep_match(&cx, s);
			if (src == -2)
				pl->flows_skipped++;
			if (src < 0)
				continue;
			if (add_edge(pl, (uint32_t)pi, (uint32_t)src, (uint32_t)i, (uint32_t)k,
			             0)) {
				tp_free(cx.key);
				return tp_diag_set(d, TP_ENOMEM, "out of memory planning flows");
			}
		}
		tp_free(cx.key);
	}
	if (plan_model_flows(pl))
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning flows");
	if (!pl->nedges)
		return TP_OK;
	if (index_edges(pl))
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning flows");
	return assign_flow_ids(pl, d);
}

/* Flow ids are only needed while a flow is open (Perfetto ends a flow at its
 * terminating_flow_ids event, after which the id may start another flow). Giving every flow
 * the smallest id free over its lifetime [source start, waiter start] keeps ids tiny, which
 * makes the fixed64 ids of a compressed trace nearly free, instead of ~4 bytes per flow. A
 * freed id is reused only by a flow that starts strictly later, so equal timestamps on two
 * sequences (whose order the reader does not promise) can never pair the wrong ends.
 * Flows are taken in source-start order by merging the source-order walks of the source
 * dtracks (srcit; each in start order, as a track's slices are) through a heap of their
 * heads, ties broken by source dtrack, then source index and edge index (the walk's order);
 * a source slice keeps its first TP_SINK_MAX_FLOWS flows in that order. Memory O(tracks +
 * open flows + the walks' heaps), no copy of the edge list. */
static int assign_flow_ids(struct plan *pl, struct tp_diag *d)
{
	struct heap heads = {0};
	struct hpq busy = {0}; /* open flows: (waiter's start, flow id) */
	struct idset freed = {0};
	struct srcit *it = tp_calloc(pl->ndts, sizeof *it);
	struct head {
		struct pent cur; /* the walk's current edge */
		uint32_t last;   /* source index of the edge before it */
		uint32_t same;   /* edges before it with that source (0: none or a new source) */
	} *hd = tp_calloc(pl->ndts, sizeof *hd);
	int st = it && hd ? TP_OK : TP_ENOMEM;
	for (size_t dt = 0; dt < pl->ndts && !st; dt++) {
		if (pl->srcoff[dt] == pl->srcoff[dt + 1])
			continue;
		hd[dt].last = UINT32_MAX;
		int k = srcit_start(pl, &it[dt], (uint32_t)dt);
		if (!k)
			k = srcit_next(pl, &it[dt], &hd[dt].cur);
		if (k < 0)
			st = k;
		else if (k)
			st = heap_push(&heads, slice_ns(pl, (uint32_t)dt, hd[dt].cur.src), dt);
	}
	uint64_t next = 0;
	while (heads.n && !st) {
		struct hent h = hheap_pop(&heads);
		uint32_t dt = (uint32_t)h.id;
		struct head *x = &hd[dt];
		for (;;) {
			uint32_t flow = flow_get(pl, x->cur.e);
			x->same = x->cur.src == x->last ? x->same + 1 : 0;
			x->last = x->cur.src;
			if (x->same >= TP_SINK_MAX_FLOWS) {
				flow = EDGE_DROPPED;
				pl->flows_dropped++;
				if ((st = flow_set(pl, x->cur.e, flow)))
					break;
			}
			if (flow != EDGE_DROPPED) {
				int64_t src_ns = h.key;
				const struct hent *m;
				while ((m = hpq_min(&busy)) && m->key < src_ns && !st) {
					struct hent done = hpq_pop(&busy);
					st = idset_put(&freed, done.id);
				}
				if (st)
					break;
				uint64_t id = idset_take(&freed);
				flow = (uint32_t)(id ? id : ++next);
				if ((st = flow_set(pl, x->cur.e, flow)) ||
				    (st = hpq_push(
				         &busy,
				         &(struct hent){
				             slice_ns(pl, pl->runs[x->cur.run].dst_dt, x->cur.dst),
				             flow})))
					break;
			}
			/* The walk's next edge: taken at once while it still precedes every other
			 * walk's head (the same order as pushing it and popping the minimum). */
			int k = srcit_next(pl, &it[dt], &x->cur);
			if (k <= 0) {
				st = k;
				break;
			}
			struct hent nx = {slice_ns(pl, dt, x->cur.src), dt};
			if (heads.n && !hless(&nx, &heads.a[0])) {
				st = heap_push(&heads, nx.key, nx.id);
				break;
			}
			h = nx;
		}
	}
	for (size_t dt = 0; it && dt < pl->ndts; dt++)
		srcit_free(&it[dt]);
	tp_free(it);
	tp_free(hd);
	tp_free(heads.a);
	hpq_free(&busy);
	tp_free(freed.w);
	return st ? tp_diag_set(d, TP_ENOMEM, "out of memory planning flows") : TP_OK;
}

/* The next edge in destination order over all runs (walk w on run *ri): returns 1 with the
 * waiting slice's id and the edge index, 0 after the last. */
static int dst_next(const struct plan *pl, size_t *ri, struct ewalk *w, uint64_t *dst_id,
                    uint32_t *e)
{
	while (*ri < pl->nruns) {
		const struct erun *r = &pl->runs[*ri];
		uint32_t at = w->e, src, dst;
		if (ewalk_next(pl, r, w, &src, &dst)) {
			*dst_id = slice_id(pl, r->dst_dt, dst);
			*e = at;
			return 1;
		}
		if (++*ri < pl->nruns)
			ewalk_start(&pl->runs[*ri], w);
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Derived counters                                                                          */
/* ---------------------------------------------------------------------------------------- */

static int emit_derived(struct plan *pl, const struct derived *dv, struct tp_sink *sink)
{
	const struct tp_profile *p = pl->p;
	int64_t begin = p->span_begin_ns, span = p->span_end_ns - p->span_begin_ns;
	if (span <= 0 || !sink->counter)
		return TP_OK;
	int64_t w = (span + COUNTER_WINDOWS - 1) / COUNTER_WINDOWS;
	if (w < MIN_WINDOW_NS)
		w = MIN_WINDOW_NS;
	size_t nb = (size_t)((span + w - 1) / w);
	double *part = tp_calloc(nb + 1, sizeof *part); /* amount inside partial windows */
	double *rate = tp_calloc(nb + 2, sizeof *rate); /* difference array of per-ns rates */
	if (!part || !rate) {
		tp_free(part);
		tp_free(rate);
		return TP_ENOMEM;
	}
	for (size_t ti = 0; ti < pl->ndts; ti++) {
		const struct tp_track *t = pl->dts[ti].t;
		if (t->device != dv->device || t->core != dv->core)
			continue;
		if (dv->what == 1 ? !tp_track_kind_is_dma((enum tp_track_kind)t->kind)
		                  : t->kind != TP_TRACK_TIU)
			continue;
		for (size_t k = 0; k < t->count; k++) {
			const struct tp_slice *s = &t->slices[k];
			if (tp_slice_kind(t, s) != TP_CMD_NORMAL ||
			    tp_slice_end(t, s) <= s->start_ns)
				continue;
			double amount; /* per ns of the slice */
			if (dv->what == 1) {
				enum tp_dir dir = (enum tp_dir)tp_slice_dir(t, s);
				if (!tp_slice_bytes(t, s) ||
				    !(dir == TP_DIR_NONE || tp_dir_touches_ddr(dir)))
					continue;
				amount = (double)tp_slice_bytes(t, s) /
				         (double)(tp_slice_end(t, s) - s->start_ns);
			} else {
				amount = 1.0;
			}
			int64_t a = s->start_ns - begin, b = tp_slice_end(t, s) - begin;
			size_t k0 = (size_t)(a / w), k1 = (size_t)((b - 1) / w);
			if (k1 >= nb)
				k1 = nb - 1;
			if (k0 == k1) {
				part[k0] += amount * (double)(b - a);
				continue;
			}
			part[k0] += amount * (double)((int64_t)(k0 + 1) * w - a);
			part[k1] += amount * (double)(b - (int64_t)k1 * w);
			if (k1 > k0 + 1) {
				rate[k0 + 1] += amount;
				rate[k1] -= amount;
			}
		}
	}
	int st = TP_OK;
	const struct tp_sink_track *tr = &pl->tracks[dv->track];
	double r = 0, last = NAN;
	for (size_t k = 0; k < nb && !st; k++) {
		r += rate[k];
		int64_t ws = (int64_t)k * w;
		int64_t width = span - ws < w ? span - ws : w;
		double v = (part[k] + r * (double)w) / (double)width;
		if (dv->what == 2)
			v *= 100.0;
		if (fabs(v) < 1e-9)
			v = 0; /* cancelling difference-array sums leave dust */
		v = round(v * 1e4) / 1e4;
		if (k == 0 || v != last)
			st = sink->counter(sink->ctx, tr, begin + ws, v);
		last = v;
	}
	if (!st && last != 0)
		st = sink->counter(sink->ctx, tr, begin + span, 0.0);
	tp_free(part);
	tp_free(rate);
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Drive                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void plan_free(struct plan *pl)
{
	for (size_t i = 0; i < pl->nsynth; i++) {
		tp_free(pl->synth[i]->layers);
		tp_free(pl->synth[i]);
	}
	tp_free(pl->synth);
	for (size_t l = 0; l < MAX_LANES; l++) {
		tp_free(pl->lanes[l].ends);
		tp_free(pl->lanes[l].ids);
	}
	tp_free(pl->tracks);
	tp_free(pl->dts);
	tp_free(pl->der);
	tp_free(pl->flow);
	tp_free(pl->edges);
	tp_free(pl->ends);
	tp_free(pl->runs);
	tp_free(pl->blkmin);
	tp_free(pl->srcruns);
	tp_free(pl->srcoff);
	srcit_free(&pl->dit);
	tp_arena_free(&pl->arena);
}

static int deliver(struct plan *pl, struct tp_sink *sink, struct tp_sink_slice *ss,
                   struct tp_diag *d)
{
	const struct tp_profile *p = pl->p;
	/* Edges in destination order: the next one ends at slice in_id (edge in_e). */
	size_t ri = 0;
	struct ewalk iw = {0};
	uint64_t in_id = 0;
	uint32_t in_e = 0;
	if (pl->nruns)
		ewalk_start(&pl->runs[0], &iw);
	int have_in = dst_next(pl, &ri, &iw, &in_id, &in_e);
	struct tp_slice tmp;
	for (size_t ti = 0; ti < pl->ndts; ti++) {
		const struct dtrack *dt = &pl->dts[ti];
		const struct tp_track *t = dt->t;
		const char *cat;
		if (t->kind == TP_TRACK_THREAD || t->kind == TP_TRACK_HOST)
			cat = NULL;
		else
			cat = kind_order_name[t->kind <= TP_TRACK_LAYER ? t->kind : 0];
		lanes_reset(pl);
		/* This track's outgoing edges in source order: oe is the next. */
		struct pent oe = {0, 0, 0, 0};
		int have = 0;
		if (pl->srcoff && pl->srcoff[ti] < pl->srcoff[ti + 1]) {
			have = srcit_start(pl, &pl->dit, (uint32_t)ti);
			if (!have)
				have = srcit_next(pl, &pl->dit, &oe);
			if (have < 0)
				return tp_diag_set(d, TP_ENOMEM, "out of memory writing flows");
		}
		for (size_t k = 0; k < t->count; k++) {
			int64_t end;
			const struct tp_slice *s = dt_slice(p, t, dt->syn, k, &tmp, &end);
			uint64_t id = dt->base_id + k + 1;
			uint32_t depth;
			uint64_t parent;
			long lane = lane_take(pl, s, end, dt->nested, id, &depth, &parent);
			if (lane < 0 || (size_t)lane >= dt->nlanes)
				return tp_diag_set(d, TP_ENOMEM, "trace lane planning went wrong");
			ss->track = &pl->tracks[dt->first_lane + (size_t)lane];
			ss->slice = s;
			ss->id = id;
			struct tp_label lb = dt_label(p, t, dt->syn, s);
			ss->name = cstr(p, &pl->strs, lb.name);
			ss->category = cat ? cat : cstr(p, &pl->strs, lb.type);
			ss->ts_ns = s->start_ns;
			ss->dur_ns = end - s->start_ns;
			ss->depth = depth;
			ss->parent_id = parent;
			fill_args(p, t, s, sink->full_args, ss,
			          dt->syn ? &dt->syn->memo : &pl->memo, &pl->strs);
			ss->flow_in = 0;
			while (have_in && in_id < id)
				have_in = dst_next(pl, &ri, &iw, &in_id, &in_e);
			if (have_in && in_id == id && flow_get(pl, in_e) != EDGE_DROPPED)
				ss->flow_in = flow_get(pl, in_e);
			ss->num_flows_out = 0;
			while (have > 0 && oe.src <= k) {
				uint32_t f = flow_get(pl, oe.e);
				if (oe.src == k && f != EDGE_DROPPED &&
				    ss->num_flows_out < TP_SINK_MAX_FLOWS)
					ss->flows_out[ss->num_flows_out++] = f;
				if ((have = srcit_next(pl, &pl->dit, &oe)) < 0)
					return tp_diag_set(d, TP_ENOMEM,
					                   "out of memory writing flows");
			}
			int st = sink->slice ? sink->slice(sink->ctx, ss) : TP_OK;
			if (st)
				return st;
			if ((id & 4095) == 0)
				tp_progress_report(id, pl->total_slices);
		}
	}
	return TP_OK;
}

int tp_sink_drive(const struct tp_profile *p, const struct tp_analysis *a, struct tp_sink *sink,
                  struct tp_diag *d)
{
	struct plan *pl = tp_calloc(1, sizeof *pl);
	struct tp_sink_slice *ss = tp_calloc(1, sizeof *ss);
	int st = TP_OK, begun = 0;
	if (!pl || !ss) {
		st = tp_diag_set(d, TP_ENOMEM, "out of memory starting a trace writer");
		goto out;
	}
	pl->p = p;
	tp_arena_init(&pl->arena, 16384);
	for (size_t i = 0; i < p->num_tracks; i++)
		if (p->tracks[i].device < 0 || (size_t)p->tracks[i].device >= p->num_devices) {
			st = tp_diag_set(d, TP_EFORMAT, "track %zu (\"%s\") has no device", i,
			                 tp_str(p, p->tracks[i].name));
			goto out;
		}
	for (size_t dev = 0; dev < p->num_devices && !st; dev++)
		st = plan_device(pl, (int32_t)dev, d);
	if (st)
		goto out;
	uint64_t id = 0;
	for (size_t i = 0; i < pl->ndts; i++) {
		pl->dts[i].base_id = id;
		id += pl->dts[i].t->count;
	}
	pl->total_slices = id;
	if ((st = plan_flows(pl, d)))
		goto out;

	if (sink->begin && (st = sink->begin(sink->ctx, p, a)))
		goto out;
	begun = 1;
	for (size_t i = 0; i < pl->ntracks && !st; i++)
		if (sink->track)
			st = sink->track(sink->ctx, &pl->tracks[i]);
	if (!st)
		st = deliver(pl, sink, ss, d);
	for (size_t i = 0; i < pl->nder && !st; i++)
		if ((st = emit_derived(pl, &pl->der[i], sink)) == TP_ENOMEM)
			tp_diag_set(d, st, "out of memory computing derived counters");
	for (size_t i = 0; i < pl->ntracks && !st; i++) {
		const struct tp_sink_track *t = &pl->tracks[i];
		if (t->counter < 0 || !sink->counter)
			continue;
		const struct tp_counter *c = &p->counters[t->counter];
		for (size_t k = 0; k < c->count && !st; k++)
			st = sink->counter(sink->ctx, t, c->samples[k].ts_ns, c->samples[k].value);
	}
	for (size_t r = 0; r < pl->nruns && !st && sink->flow; r++) {
		const struct erun *x = &pl->runs[r];
		struct ewalk w;
		ewalk_start(x, &w);
		uint32_t at = w.e, src, dst;
		for (; !st && ewalk_next(pl, x, &w, &src, &dst); at = w.e)
			if (flow_get(pl, at) != EDGE_DROPPED)
				st = sink->flow(sink->ctx, flow_get(pl, at),
				                slice_id(pl, x->src_dt, src),
				                slice_id(pl, x->dst_dt, dst));
	}
out:
	if (begun && sink->end) {
		int est = sink->end(sink->ctx, st);
		if (!st)
			st = est;
	}
	if (st && d && d->status == TP_OK)
		tp_diag_set(d, st, "writing a trace: %s", tp_strerror(st));
	if (pl)
		plan_free(pl);
	tp_free(pl);
	tp_free(ss);
	return st;
}
