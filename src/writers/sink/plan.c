/*
 * plan.c — the track plan of tp_sink_drive (sink_int.h): the track tree (one process per
 * device; per core a "Core N" container with the engine tracks TIU, GDMA, SDMA, CDMA, MCU,
 * Layer and the derived counters; then the device's thread/host tracks and its counters), the
 * lanes that spread overlapping slices of one track over same-named tracks, the uuids, pids
 * and tids (small, unique, never 0), the Layer tracks synthesised from the profile's layer
 * table when the reader made none, and the derived counters' values ("DDR Bandwidth" in GB/s,
 * "TIU Utilization" in %), computed over at most COUNTER_WINDOWS windows of the device's span.
 *
 * Owns nothing beyond the plan: its track list, names (the plan's arena), lane stacks and
 * synthesised tracks, all freed by tp_sink_drive.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers/sink/sink_int.h"

#define COUNTER_WINDOWS 4000 /* derived counters: at most this many windows over the span */
#define MIN_WINDOW_NS 1000

/* ---------------------------------------------------------------------------------------- */
/* Tracks and lanes                                                                          */
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

int tp_sink_lane_room(struct lane *ln, size_t need)
{
	if (need <= ln->cap)
		return 0;
	size_t cap = ln->cap;
	int64_t *e = tp_grow(ln->ends, sizeof *e, need, &cap);
	if (!e)
		return -1;
	ln->ends = e;
	cap = ln->cap;
	uint64_t *ids = tp_grow(ln->ids, sizeof *ids, need, &cap);
	if (!ids)
		return -1;
	ln->ids = ids;
	ln->cap = cap;
	return 0;
}

long tp_sink_lane_assign(struct lanes *lz, const struct tp_slice *s, int64_t end, int nested,
                         uint64_t id, uint32_t *depth, uint64_t *parent)
{
	size_t l;
	for (l = 0; l < lz->used; l++) {
		struct lane *ln = &lz->l[l];
		while (ln->depth && ln->ends[ln->depth - 1] <= s->start_ns)
			ln->depth--;
		if (ln->depth == 0 || (nested && ln->ends[ln->depth - 1] >= end))
			break;
	}
	if (l == lz->used) {
		if (l == MAX_LANES)
			return -1;
		if (l == lz->cap) {
			size_t cap = lz->cap;
			struct lane *g = tp_grow(lz->l, sizeof *g, l + 1, &cap);
			if (!g)
				return -2;
			memset(g + lz->cap, 0, (cap - lz->cap) * sizeof *g);
			lz->l = g;
			lz->cap = cap;
		}
		lz->l[l].depth = 0;
		lz->used++;
	}
	struct lane *ln = &lz->l[l];
	if (tp_sink_lane_room(ln, ln->depth + 1))
		return -2;
	*depth = (uint32_t)ln->depth;
	*parent = ln->depth ? ln->ids[ln->depth - 1] : 0;
	ln->ends[ln->depth] = end;
	ln->ids[ln->depth] = id;
	ln->depth++;
	return (long)l;
}

void tp_sink_lanes_free(struct lanes *lz)
{
	for (size_t l = 0; l < lz->cap; l++) {
		tp_free(lz->l[l].ends);
		tp_free(lz->l[l].ids);
	}
	tp_free(lz->l);
	memset(lz, 0, sizeof *lz);
}

/* Assigns a track's slices to lanes in lz (left empty): the lanes it needs in *nlanes, or
 * lane_take's failure (-1, -2) with the slice in *at. */
static long lanes_of(const struct tp_profile *p, struct lanes *lz, const struct tp_track *t,
                     struct synth *syn, int nested, size_t *nlanes, int64_t *at)
{
	lanes_reset(lz);
	for (size_t k = 0; k < t->count; k++) {
		uint32_t depth;
		uint64_t parent;
		struct tp_slice tmp;
		int64_t end;
		const struct tp_slice *s = pt_slice(p, t, syn, k, &tmp, &end);
		long l = lane_take(lz, s, end, nested, k + 1, &depth, &parent);
		if (l < 0) {
			*at = s->start_ns;
			lanes_reset(lz);
			return l;
		}
	}
	*nlanes = lz->used ? lz->used : 1;
	lanes_reset(lz);
	return 0;
}

static int track_nested(const struct tp_track *t)
{
	return t->kind == TP_TRACK_THREAD || t->kind == TP_TRACK_HOST;
}

/* Counts the lanes a track needs: as counted ahead when that did not fail there (a model
 * track's in pl->model_lanes, a synthesised one's in syn->nlanes), else now, on this thread. */
static int count_lanes(struct plan *pl, const struct tp_track *t, struct synth *syn,
                       int model_track, size_t *nlanes, struct tp_diag *d)
{
	if (model_track >= 0 && pl->model_lanes && pl->model_lanes[model_track]) {
		*nlanes = pl->model_lanes[model_track];
		return TP_OK;
	}
	if (syn && syn->nlanes) {
		*nlanes = syn->nlanes;
		return TP_OK;
	}
	int64_t at = 0;
	long l = lanes_of(pl->p, &pl->lanes, t, syn, track_nested(t), nlanes, &at);
	if (l == -2)
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace lanes");
	if (l < 0)
		return tp_diag_set(d, TP_ERANGE,
		                   "track \"%s\": more than %d slices overlap at %lld ns",
		                   tp_str(pl->p, t->name), MAX_LANES, (long long)at);
	return TP_OK;
}

/* Track t's lanes (syn: when synthesised), counted ahead on any thread with lanes of its
 * own; 0 on a failure, so that the track is counted again in order, for its diagnostic. */
static size_t lanes_ahead(const struct tp_profile *p, const struct tp_track *t, struct synth *syn)
{
	struct lanes lz;
	memset(&lz, 0, sizeof lz);
	size_t n = 0;
	int64_t at;
	if (lanes_of(p, &lz, t, syn, track_nested(t), &n, &at))
		n = 0;
	tp_sink_lanes_free(&lz);
	return n;
}

/* Model track i's lanes, counted ahead on any thread into pl->model_lanes[i]. */
static void count_model_lanes(void *arg, size_t i)
{
	struct plan *pl = arg;
	pl->model_lanes[i] = lanes_ahead(pl->p, &pl->p->tracks[i], NULL);
}

static int add_plan_track(struct plan *pl, const struct tp_track *t, struct synth *syn,
                          int model_track, const struct tp_sink_track *proto, const char *lane_name,
                          struct tp_diag *d)
{
	int nested = track_nested(t);
	size_t nlanes = 1;
	int st = count_lanes(pl, t, syn, model_track, &nlanes, d);
	if (st)
		return st;
	struct plan_track *n = tp_grow(pl->dts, sizeof *pl->dts, pl->ndts + 1, &pl->cap_dts);
	if (!n)
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	pl->dts = n;
	struct plan_track *dt = &pl->dts[pl->ndts++];
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

/* ---------------------------------------------------------------------------------------- */
/* Devices: processes, cores, threads, counters                                              */
/* ---------------------------------------------------------------------------------------- */

static int int_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

static size_t intset_slot(const struct intset *s, int32_t x)
{
	uint64_t h = (uint64_t)(uint32_t)x * 0x9e3779b97f4a7c15ull;
	size_t k = (size_t)(h >> 32) & (s->cap - 1);
	while (s->v[k] && s->v[k] != x)
		k = (k + 1) & (s->cap - 1);
	return k;
}

static int intset_has(const struct intset *s, int32_t x)
{
	return s->cap && s->v[intset_slot(s, x)] == x;
}

/* Adds x (nonzero). TP_OK or TP_ENOMEM. */
static int intset_add(struct intset *s, int32_t x)
{
	if (2 * (s->n + 1) > s->cap) {
		struct intset g = {tp_calloc(s->cap ? 2 * s->cap : 64, sizeof *g.v),
		                   s->cap ? 2 * s->cap : 64, 0};
		if (!g.v)
			return TP_ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i]) {
				g.v[intset_slot(&g, s->v[i])] = s->v[i];
				g.n++;
			}
		tp_free(s->v);
		*s = g;
	}
	size_t k = intset_slot(s, x);
	if (!s->v[k]) {
		s->v[k] = x;
		s->n++;
	}
	return TP_OK;
}

static void intset_clear(struct intset *s)
{
	tp_oa_clear(s->v, s->cap, sizeof *s->v);
	s->n = 0;
}

/* Groups n items by device (device_of(p, i)) into *idx, in item order, with offsets *at
 * (num_devices + 1). TP_OK or TP_ENOMEM. */
static int by_device(const struct tp_profile *p, size_t n,
                     int32_t (*device_of)(const struct tp_profile *, size_t), uint32_t **idx,
                     size_t **at)
{
	*at = tp_calloc(p->num_devices + 2, sizeof **at);
	*idx = tp_malloc((n + 1) * sizeof **idx);
	if (!*at || !*idx)
		return TP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int32_t dv = device_of(p, i);
		if (dv >= 0 && (size_t)dv < p->num_devices)
			(*at)[dv + 2]++;
	}
	for (size_t dv = 0; dv < p->num_devices; dv++)
		(*at)[dv + 2] += (*at)[dv + 1];
	for (size_t i = 0; i < n; i++) {
		int32_t dv = device_of(p, i);
		if (dv >= 0 && (size_t)dv < p->num_devices)
			(*idx)[(*at)[dv + 1]++] = (uint32_t)i;
	}
	return TP_OK;
}

static int32_t track_device(const struct tp_profile *p, size_t i)
{
	return p->tracks[i].device;
}

static int32_t counter_device(const struct tp_profile *p, size_t i)
{
	return p->counters[i].device;
}

/* The process track of device dev, with a pid unique among the plan's processes: capture
 * devices carry the OS pid; accelerator devices often id 0, which Perfetto folds into the
 * kernel's swapper process (perfetto.md pitfall 13). */
static struct tp_sink_track *plan_process(struct plan *pl, int32_t dev)
{
	const struct tp_profile *p = pl->p;
	const struct tp_device *dv = &p->devices[dev];
	struct tp_sink_track *proc = new_track(pl);
	if (!proc)
		return NULL;
	size_t first = proc->index;
	int32_t pid = dv->id > 0 ? dv->id : 1000 + dev;
	while (intset_has(&pl->pids, pid))
		pid++;
	if (intset_add(&pl->pids, pid))
		return NULL;
	proc = &pl->tracks[first];
	proc->pid = pid;
	proc->is_process = 1;
	proc->sort_index = dev;
	proc->name = dv->name ? cstr(p, &pl->strs, dv->name) : "";
	if (!*proc->name)
		proc->name = fmt_name(pl, "Device %d%s", dv->id, "");
	proc->full_name = proc->name;
	return proc;
}

/* A device's cores, as device_cores lists them. */
struct core_list {
	int32_t *v;
	size_t n;
};

/* The cores of device dev that have engine or layer tracks, ascending (possibly repeated),
 * in *out (owned by the caller) and their number in *n. TP_OK or TP_ENOMEM. */
static int device_cores(const struct plan *pl, int32_t dev, int32_t **out, size_t *n)
{
	const struct tp_profile *p = pl->p;
	size_t from = pl->dev_track_at[dev], to = pl->dev_track_at[dev + 1];
	size_t cap_cores = to - from + 1; /* grown for the cores only layers have */
	int32_t *cores = tp_calloc(cap_cores, sizeof *cores);
	if (!cores)
		return TP_ENOMEM;
	size_t nc = 0;
	for (size_t j = from; j < to; j++) {
		const struct tp_track *t = &p->tracks[pl->dev_track[j]];
		if (t->device == dev && t->core >= 0 && t->kind <= TP_TRACK_LAYER)
			cores[nc++] = t->core;
	}
	/* Layers add their cores once each (a million layers must not mean a million-entry
	 * sort): the last core seen is skipped cheaply, others are looked up in the list (the
	 * sort and the duplicate skip of plan_device still cover a list that outgrows the
	 * lookup). */
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
			return TP_ENOMEM;
		}
		cores = g;
		cores[nc++] = lcore;
	}
	qsort(cores, nc, sizeof *cores, int_cmp);
	*out = cores;
	*n = nc;
	return TP_OK;
}

/* The Layer track of (dev, core) synthesised from the profile's layer table, when the reader
 * made none and some layer has timing. */
static int plan_synth_layer(struct plan *pl, int32_t dev, int32_t core, uint64_t box_uuid,
                            int32_t pid, int32_t *rank, struct tp_diag *d)
{
	struct synth *lt;
	if (tp_sink_synth_layers(pl, dev, core, &lt))
		return tp_diag_set(d, TP_ENOMEM, "out of memory building layer tracks");
	if (!lt)
		return TP_OK;
	struct tp_sink_track proto = {0};
	proto.parent_uuid = box_uuid;
	proto.pid = pid;
	proto.core = core;
	proto.sort_index = (*rank)++;
	proto.full_name = fmt_name(pl, "Core %d %s", core, "Layer");
	return add_plan_track(pl, &lt->t, lt, -1, &proto, "Layer", d);
}

/* The "Core N" container of (dev, core) and in it the engine tracks in kind order (TIU,
 * GDMA, SDMA, CDMA, MCU, Layer; a synthesised Layer track when the reader made none), then
 * the derived counters "DDR Bandwidth" (when the core has DMA) and "TIU Utilization". */
static int plan_core(struct plan *pl, int32_t dev, int32_t core, int32_t pid, uint64_t proc_uuid,
                     int32_t sort, struct tp_diag *d)
{
	const struct tp_profile *p = pl->p;
	struct tp_sink_track *box = new_track(pl);
	if (!box)
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	box->parent_uuid = proc_uuid;
	box->is_container = 1;
	box->name = fmt_name(pl, "Core %d%s", core, "");
	box->full_name = box->name;
	box->pid = pid;
	box->core = core;
	box->sort_index = sort;
	uint64_t box_uuid = box->uuid;
	int32_t rank = 0;
	int has_tiu = 0, has_dma = 0, reader_layer = 0, st = TP_OK;
	for (int k = TP_TRACK_TIU; k <= TP_TRACK_LAYER && !st; k++) {
		for (size_t j = pl->dev_track_at[dev]; j < pl->dev_track_at[dev + 1] && !st; j++) {
			size_t i = pl->dev_track[j];
			const struct tp_track *t = &p->tracks[i];
			if (t->device != dev || t->core != core || t->kind != k)
				continue;
			has_tiu |= k == TP_TRACK_TIU;
			has_dma |= tp_track_kind_is_dma((enum tp_track_kind)k);
			reader_layer |= k == TP_TRACK_LAYER;
			struct tp_sink_track proto = {0};
			proto.parent_uuid = box_uuid;
			proto.pid = pid;
			proto.core = core;
			proto.sort_index = rank++;
			/* A core can have several CDMA tracks (one per port, cdm reader) and
			 * several MCU ones (the firmware's records, and those it ran outside the
			 * net, bmprofile reader): they keep their own names ("CDMA port 3", "GDMA
			 * outside the net"). */
			const char *kn = kind_order_name(k);
			if ((k == TP_TRACK_CDMA || k == TP_TRACK_MCU) && t->name &&
			    tp_str(p, t->name)[0])
				kn = cstr(p, &pl->strs, t->name);
			proto.full_name = fmt_name(pl, "Core %d %s", core, kn);
			st = add_plan_track(pl, t, NULL, (int)i, &proto, kn, d);
		}
		if (k == TP_TRACK_LAYER && !reader_layer && !st)
			st = plan_synth_layer(pl, dev, core, box_uuid, pid, &rank, d);
	}
	if (!st && has_dma)
		st = add_derived(pl, dev, core, 1, box_uuid, pid, rank++, d);
	if (!st && has_tiu)
		st = add_derived(pl, dev, core, 2, box_uuid, pid, rank++, d);
	return st;
}

/* Thread, host and core-less tracks of device dev, in model order; a thread keeps its tid
 * when it is positive and no earlier track of the device uses it (pl->tids). */
static int plan_threads(struct plan *pl, int32_t dev, int32_t pid, uint64_t proc_uuid,
                        int32_t *sort, struct tp_diag *d)
{
	const struct tp_profile *p = pl->p;
	int st = TP_OK;
	intset_clear(&pl->tids);
	for (size_t j = pl->dev_track_at[dev]; j < pl->dev_track_at[dev + 1] && !st; j++) {
		size_t i = pl->dev_track[j];
		const struct tp_track *t = &p->tracks[i];
		if (t->device != dev || (t->core >= 0 && t->kind <= TP_TRACK_LAYER))
			continue;
		struct tp_sink_track proto = {0};
		proto.parent_uuid = proc_uuid;
		proto.pid = pid;
		proto.core = t->core;
		proto.sort_index = (*sort)++;
		const char *nm = cstr(p, &pl->strs, t->name);
		if (!*nm)
			nm = tp_track_kind_name((enum tp_track_kind)t->kind);
		proto.full_name = nm;
		int64_t tid = t->tid;
		proto.tid = tid > 0 && tid <= INT32_MAX && !intset_has(&pl->tids, (int32_t)tid)
		                ? (int32_t)tid
		                : 0;
		proto.input_tid = t->tid;
		proto.has_input_tid = 1;
		proto.input_tid_text = t->tid_text ? cstr(p, &pl->strs, t->tid_text) : NULL;
		if (proto.tid && intset_add(&pl->tids, proto.tid))
			return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
		st = add_plan_track(pl, t, NULL, (int)i, &proto, nm, d);
	}
	return st;
}

/* The counters the source recorded on device dev. */
static int plan_counters(struct plan *pl, int32_t dev, int32_t pid, uint64_t proc_uuid,
                         int32_t *sort, struct tp_diag *d)
{
	const struct tp_profile *p = pl->p;
	for (size_t j = pl->dev_counter_at[dev]; j < pl->dev_counter_at[dev + 1]; j++) {
		size_t i = pl->dev_counter[j];
		const struct tp_counter *c = &p->counters[i];
		struct tp_sink_track *x = new_track(pl);
		if (!x)
			return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
		x->parent_uuid = proc_uuid;
		x->name = cstr(p, &pl->strs, c->name);
		x->full_name = x->name;
		x->is_counter = 1;
		x->unit = c->unit ? cstr(p, &pl->strs, c->unit) : NULL;
		x->pid = pid;
		x->sort_index = (*sort)++;
		x->counter = (int)i;
		if (c->track >= 0 && (size_t)c->track < p->num_tracks)
			x->core = p->tracks[c->track].core;
	}
	return TP_OK;
}

/* Synthetic tids for every track of the device from `first` (its process track) on that has
 * none (engine lanes, containers, counters, tid-less threads): unique in the process, never
 * 0, never a tid a captured thread already uses (pl->tids holds those; a synthetic tid is
 * always above the ones given before it). The process track itself uses its pid. */
static void assign_tids(struct plan *pl, size_t first, int32_t pid)
{
	pl->tracks[first].tid = pid;
	int32_t next = 1;
	for (size_t i = first + 1; i < pl->ntracks; i++) {
		struct tp_sink_track *x = &pl->tracks[i];
		if (x->tid > 0)
			continue;
		while (intset_has(&pl->tids, next))
			next++;
		x->tid = next++;
	}
}

static int plan_device(struct plan *pl, int32_t dev, const struct core_list *cl, struct tp_diag *d)
{
	struct tp_sink_track *proc = plan_process(pl, dev);
	if (!proc)
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	size_t first = proc->index;
	int32_t pid = proc->pid;
	uint64_t proc_uuid = proc->uuid;
	const int32_t *cores = cl->v;
	int st = TP_OK;
	int32_t sort = 0;
	for (size_t ci = 0; ci < cl->n && !st; ci++)
		if (!ci || cores[ci] != cores[ci - 1])
			st = plan_core(pl, dev, cores[ci], pid, proc_uuid, sort++, d);
	if (!st)
		st = plan_threads(pl, dev, pid, proc_uuid, &sort, d);
	if (!st)
		st = plan_counters(pl, dev, pid, proc_uuid, &sort, d);
	if (st)
		return st;
	assign_tids(pl, first, pid);
	const struct tp_device *dv = &pl->p->devices[dev];
	const char *pid_text = dv->id_text ? cstr(pl->p, &pl->strs, dv->id_text) : NULL;
	for (size_t i = first; i < pl->ntracks; i++) {
		pl->tracks[i].input_pid = dv->id;
		pl->tracks[i].input_pid_text = pid_text;
	}
	return TP_OK;
}

/* Layer track i of pl->ahead, built and its lanes counted on any thread (a failure leaves it
 * to be built in order, for the same diagnostics). */
static void synth_ahead_one(void *arg, size_t i)
{
	struct plan *pl = arg;
	struct synth_ahead *a = &pl->ahead[i];
	struct synth *y;
	if (tp_sink_synth_build(pl->p, a->dev, a->core, &y))
		return;
	if (y)
		y->nlanes = lanes_ahead(pl->p, &y->t, y);
	a->y = y;
	a->built = 1;
}

/* Whether device dev has a Layer track of the reader's on core. */
static int has_layer_track(const struct plan *pl, int32_t dev, int32_t core)
{
	for (size_t j = pl->dev_track_at[dev]; j < pl->dev_track_at[dev + 1]; j++) {
		const struct tp_track *t = &pl->p->tracks[pl->dev_track[j]];
		if (t->device == dev && t->core == core && t->kind == TP_TRACK_LAYER)
			return 1;
	}
	return 0;
}

/* Lists in pl->ahead the (device, core) pairs whose Layer track plan_core will synthesise
 * (each once); TP_ENOMEM leaves the list empty (every track is then built in order). */
static int plan_ahead(struct plan *pl, const struct core_list *cl)
{
	size_t cap = 0;
	for (size_t dev = 0; dev < pl->p->num_devices; dev++) {
		const int32_t *cores = cl[dev].v;
		for (size_t i = 0; i < cl[dev].n; i++) {
			if ((i && cores[i] == cores[i - 1]) ||
			    has_layer_track(pl, (int32_t)dev, cores[i]))
				continue;
			struct synth_ahead *g = tp_grow(pl->ahead, sizeof *g, pl->nahead + 1, &cap);
			if (!g) {
				tp_free(pl->ahead);
				pl->ahead = NULL;
				pl->nahead = 0;
				return TP_ENOMEM;
			}
			pl->ahead = g;
			memset(&g[pl->nahead], 0, sizeof *g);
			g[pl->nahead].dev = (int32_t)dev;
			g[pl->nahead++].core = cores[i];
		}
	}
	return TP_OK;
}

int tp_sink_plan_tracks(struct plan *pl, unsigned threads, struct tp_diag *d)
{
	const struct tp_profile *p = pl->p;
	if (by_device(p, p->num_tracks, track_device, &pl->dev_track, &pl->dev_track_at) ||
	    by_device(p, p->num_counters, counter_device, &pl->dev_counter, &pl->dev_counter_at))
		return tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	/* Counting a model track's lanes reads only the track: done ahead, one track per task
	 * (without the array, or on this thread alone, in order as each track is planned). */
	if (threads && p->num_tracks &&
	    (pl->model_lanes = tp_calloc(p->num_tracks, sizeof(size_t))))
		tp_par_run(threads, p->num_tracks, count_model_lanes, pl);
	/* Each device's cores, listed once for both plan_ahead and plan_device (each listing
	 * scans the layer table). */
	struct core_list *cl = tp_calloc(p->num_devices + 1, sizeof *cl);
	int st = cl ? TP_OK : TP_ENOMEM;
	for (size_t dev = 0; dev < p->num_devices && !st; dev++)
		st = device_cores(pl, (int32_t)dev, &cl[dev].v, &cl[dev].n);
	if (st)
		st = tp_diag_set(d, TP_ENOMEM, "out of memory planning trace tracks");
	if (!st && threads && plan_ahead(pl, cl) == TP_OK && pl->nahead)
		tp_par_run(threads, pl->nahead, synth_ahead_one, pl);
	for (size_t dev = 0; dev < p->num_devices && !st; dev++)
		st = plan_device(pl, (int32_t)dev, &cl[dev], d);
	for (size_t dev = 0; cl && dev < p->num_devices; dev++)
		tp_free(cl[dev].v);
	tp_free(cl);
	return st;
}

void tp_sink_plan_tracks_free(struct plan *pl)
{
	for (size_t i = 0; i < pl->nahead; i++)
		tp_sink_synth_free(pl->ahead[i].y);
	tp_free(pl->ahead);
	pl->ahead = NULL;
	pl->nahead = 0;
	TP_FREE_ALL(pl->dev_track, pl->dev_track_at, pl->dev_counter, pl->dev_counter_at,
	            pl->pids.v, pl->tids.v, pl->model_lanes);
}

/* ---------------------------------------------------------------------------------------- */
/* Derived counters                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* The window width of the derived counters and their count (0: none, the device has no span). */
static int64_t derived_windows(const struct tp_profile *p, size_t *nb)
{
	int64_t span = p->device_end_ns - p->device_begin_ns;
	*nb = 0;
	if (span <= 0)
		return 0;
	int64_t w = (span + COUNTER_WINDOWS - 1) / COUNTER_WINDOWS;
	if (w < MIN_WINDOW_NS)
		w = MIN_WINDOW_NS;
	*nb = (size_t)((span + w - 1) / w);
	return w;
}

/* Adds track t's commands to derived counter dv's windows: the amount inside partial windows
 * (part) and the difference array of per-ns rates (rate). */
static void derived_add(const struct tp_profile *p, const struct derived *dv,
                        const struct tp_track *t, int64_t w, size_t nb, double *part, double *rate)
{
	int64_t begin = p->device_begin_ns;
	for (size_t k = 0; k < t->count; k++) {
		const struct tp_slice *s = &t->slices[k];
		if (tp_slice_kind(t, s) != TP_CMD_NORMAL || tp_slice_end(t, s) <= s->start_ns)
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

double *tp_sink_derived_values(const struct plan *pl, const struct derived *dv)
{
	const struct tp_profile *p = pl->p;
	/* The windows follow the device's own span: a host trace merged beside it (seconds of
	 * host events around milliseconds of device work) must not widen them. */
	size_t nb;
	int64_t w = derived_windows(p, &nb), span = p->device_end_ns - p->device_begin_ns;
	double *part = tp_calloc(nb + 1, sizeof *part); /* amount inside partial windows */
	double *rate = tp_calloc(nb + 2, sizeof *rate); /* difference array of per-ns rates */
	if (!part || !rate) {
		tp_free(part);
		tp_free(rate);
		return NULL;
	}
	for (size_t ti = 0; ti < pl->ndts; ti++) {
		const struct tp_track *t = pl->dts[ti].t;
		if (t->device != dv->device || t->core != dv->core)
			continue;
		if (dv->what == 1 ? !tp_track_kind_is_dma((enum tp_track_kind)t->kind)
		                  : t->kind != TP_TRACK_TIU)
			continue;
		derived_add(p, dv, t, w, nb, part, rate);
	}
	double r = 0;
	for (size_t k = 0; k < nb; k++) {
		r += rate[k];
		int64_t ws = (int64_t)k * w;
		int64_t width = span - ws < w ? span - ws : w;
		double v = (part[k] + r * (double)w) / (double)width;
		if (dv->what == 2)
			v *= 100.0;
		if (fabs(v) < 1e-9)
			v = 0; /* cancelling difference-array sums leave dust */
		part[k] = round(v * 1e4) / 1e4;
	}
	tp_free(rate);
	return part;
}

int tp_sink_emit_derived(const struct plan *pl, const struct derived *dv, const double *vals,
                         struct tp_sink *sink)
{
	const struct tp_profile *p = pl->p;
	size_t nb;
	int64_t w = derived_windows(p, &nb), begin = p->device_begin_ns;
	if (!nb || !sink->counter)
		return TP_OK;
	int st = TP_OK;
	const struct tp_sink_track *tr = &pl->tracks[dv->track];
	double last = NAN;
	for (size_t k = 0; k < nb && !st; k++) {
		double v = vals[k];
		if (k == 0 || v != last)
			st = sink->counter(sink->ctx, tr, begin + (int64_t)k * w, v);
		last = v;
	}
	if (!st && last != 0)
		st = sink->counter(sink->ctx, tr, begin + (p->device_end_ns - begin), 0.0);
	return st;
}
