/*
 * drive.c — tp_sink_drive: walks a finished profile and feeds a trace sink (Perfetto, Chrome
 * JSON, SQLite) in one fixed, deterministic order, so that every writer agrees on:
 *   - the track tree, lanes, uuids, pids and tids (plan.c);
 *   - slice ids (1-based in drive order), nesting depth and parent slice per lane;
 *   - dependency and model flows with their flow ids (flow.c);
 *   - the reference-named arguments of every slice (refnames.c).
 * Order: begin, every track, every track's slices, derived counters, the source's counters,
 * flows, end.
 *
 * Owns the plan for one call; all of it is freed before tp_sink_drive returns. Memory beyond
 * the profile: O(tracks + layers + dependency edges + counter windows), never O(output): an
 * edge costs its flow id (1 byte while ids stay below 255) and its ends (about 2 bytes), and
 * a synthesised Layer track keeps its layers' indexes in slice order (4 bytes a layer).
 */
#include <stdlib.h>
#include <string.h>

#include "common/progress.h"
#include "common/wsync.h"
#include "writers/sink/sink_int.h"

void tp_sink_plan_free(struct plan *pl)
{
	for (size_t i = 0; i < pl->nsynth; i++) {
		tp_free(pl->synth[i]->layers);
		tp_free(pl->synth[i]);
	}
	tp_free(pl->synth);
	tp_sink_lanes_free(&pl->lanes);
	tp_free(pl->tracks);
	tp_free(pl->dts);
	tp_free(pl->der);
	tp_sink_plan_tracks_free(pl);
	tp_sink_flows_free(pl);
	tp_arena_free(&pl->arena);
}

int tp_sink_track_start(const struct plan *pl, struct walker *wk, size_t ti, int seek,
                        struct tp_diag *d)
{
	lanes_reset(&wk->lanes);
	if (seek)
		tp_sink_flows_start(pl, &wk->fc, ti);
	if (tp_sink_flows_track(pl, wk, ti))
		return tp_diag_set(d, TP_ENOMEM, "out of memory writing flows");
	return TP_OK;
}

int tp_sink_walk(const struct plan *pl, struct walker *wk, size_t ti, size_t k0, size_t k1,
                 const struct tp_sink_walk_to *to, struct tp_sink_slice *ss, struct tp_diag *d)
{
	const struct tp_profile *p = pl->p;
	const struct plan_track *dt = &pl->dts[ti];
	const struct tp_track *t = dt->t;
	const char *cat;
	if (t->kind == TP_TRACK_THREAD || t->kind == TP_TRACK_HOST)
		cat = NULL;
	else
		cat = kind_order_name(t->kind <= TP_TRACK_LAYER ? t->kind : 0);
	struct tp_layer_memo *memo = dt->syn ? &wk->smemo : &wk->memo;
	struct tp_slice tmp;
	for (size_t k = k0; k < k1; k++) {
		int64_t end;
		const struct tp_slice *s = pt_slice(p, t, dt->syn, k, &tmp, &end);
		uint64_t id = dt->base_id + k + 1;
		uint32_t depth;
		uint64_t parent;
		long lane = lane_take(&wk->lanes, s, end, dt->nested, id, &depth, &parent);
		if (lane < 0 || (size_t)lane >= dt->nlanes)
			return tp_diag_set(d, TP_ENOMEM, "trace lane planning went wrong");
		ss->id = id;
		if (!to) { /* the position alone */
			if (tp_sink_flows_slice(pl, wk, k, ss))
				return tp_diag_set(d, TP_ENOMEM, "out of memory writing flows");
			continue;
		}
		ss->track = &pl->tracks[dt->first_lane + (size_t)lane];
		ss->slice = s;
		struct tp_label lb = pt_label(p, t, dt->syn, s, memo);
		ss->name = cstr(p, &wk->strs, lb.name);
		ss->category = cat ? cat : cstr(p, &wk->strs, lb.type);
		ss->ts_ns = s->start_ns;
		ss->dur_ns = end - s->start_ns;
		ss->depth = depth;
		ss->parent_id = parent;
		tp_sink_fill_args_cached(p, t, s, to->full_args, ss, memo, &wk->strs);
		if (tp_sink_flows_slice(pl, wk, k, ss))
			return tp_diag_set(d, TP_ENOMEM, "out of memory writing flows");
		int st = to->fn(to->ctx, to->arg, ss);
		if (st)
			return st;
		if (to->progress && (id & 4095) == 0)
			tp_progress_report(id, pl->total_slices);
	}
	return TP_OK;
}

/* sink->slice as a walk's destination. */
static int to_sink(void *ctx, size_t arg, const struct tp_sink_slice *ss)
{
	(void)arg;
	const struct tp_sink *sink = ctx;
	return sink->slice ? sink->slice(sink->ctx, ss) : TP_OK;
}

/* Every plan track's slices, track after track, on this thread. */
static int deliver(const struct plan *pl, struct tp_sink *sink, struct tp_sink_slice *ss,
                   struct tp_diag *d)
{
	struct walker wk;
	memset(&wk, 0, sizeof wk);
	tp_sink_flows_start(pl, &wk.fc, 0);
	struct tp_sink_walk_to to = {to_sink, sink, 0, sink->full_args, 1};
	int st = TP_OK;
	for (size_t ti = 0; ti < pl->ndts && !st; ti++) {
		st = tp_sink_track_start(pl, &wk, ti, 0, d);
		if (!st)
			st = tp_sink_walk(pl, &wk, ti, 0, pl->dts[ti].t->count, &to, ss, d);
	}
	tp_sink_walker_free(&wk);
	return st;
}

/* The plan of p: tracks of every device, slice ids, flows; parts of it on `threads` threads
 * (0: all on this thread). */
static int build_plan(struct plan *pl, const struct tp_profile *p, unsigned threads,
                      struct tp_diag *d)
{
	pl->p = p;
	tp_arena_init(&pl->arena, 16384);
	for (size_t i = 0; i < p->num_tracks; i++)
		if (p->tracks[i].device < 0 || (size_t)p->tracks[i].device >= p->num_devices)
			return tp_diag_set(d, TP_EFORMAT, "track %zu (\"%s\") has no device", i,
			                   tp_str(p, p->tracks[i].name));
	int st = tp_sink_plan_tracks(pl, threads, d);
	if (st)
		return st;
	uint64_t id = 0;
	for (size_t i = 0; i < pl->ndts; i++) {
		pl->dts[i].base_id = id;
		id += pl->dts[i].t->count;
	}
	pl->total_slices = id;
	return tp_sink_plan_flows(pl, threads, d);
}

/* The threads planning may use for `jobs`: the calling thread and the parts' workers. */
static unsigned plan_threads_for(int jobs)
{
	return (unsigned)tp_wsync_workers(jobs, MAX_PART_THREADS - 1) + 1;
}

/* Notes the flows the trace outputs will not draw (tp_sink_note). */
static int note_flows(struct tp_profile *p, int jobs)
{
	if (!p->num_flows)
		return TP_OK;
	struct plan *pl = tp_calloc(1, sizeof *pl);
	if (!pl)
		return TP_ENOMEM;
	struct tp_diag d = {0};
	int st = build_plan(pl, p, plan_threads_for(jobs), &d);
	uint64_t dropped = pl->flows_dropped, skipped = pl->flows_skipped;
	tp_sink_plan_free(pl);
	tp_free(pl);
	if (st == TP_ENOMEM)
		return st;
	if (!st && dropped)
		st = tp_profile_note(
		    p,
		    "trace outputs: %llu flows not drawn: each ends at a slice that "
		    "another flow already ends at (a slice ends at most one flow)",
		    (unsigned long long)dropped);
	if (!st && skipped)
		st = tp_profile_note(
		    p,
		    "trace outputs: %llu flows not drawn: an end binds to no slice, "
		    "or the source does not start before the target",
		    (unsigned long long)skipped);
	return st == TP_ENOMEM ? st : TP_OK;
}

int tp_sink_note(struct tp_profile *p, int jobs)
{
	return note_flows(p, jobs);
}

/* The derived counters' values, one counter per task. */
struct dvals {
	const struct plan *pl;
	double **v;
};

static void dval_one(void *arg, size_t i)
{
	struct dvals *x = arg;
	x->v[i] = tp_sink_derived_values(x->pl, &x->pl->der[i]);
}

/* Delivers the derived counters, their values computed first: on `threads` threads (one
 * counter each; tp_par_run), or with threads 0 on this thread. */
static int emit_derived(const struct plan *pl, struct tp_sink *sink, unsigned threads,
                        struct tp_diag *d)
{
	if (!pl->nder || !sink->counter)
		return TP_OK;
	struct dvals x = {pl, tp_calloc(pl->nder, sizeof *x.v)};
	if (!x.v)
		return tp_diag_set(d, TP_ENOMEM, "out of memory computing derived counters");
	if (threads)
		tp_par_run(threads, pl->nder, dval_one, &x);
	else
		for (size_t i = 0; i < pl->nder; i++)
			dval_one(&x, i);
	int st = TP_OK;
	for (size_t i = 0; i < pl->nder && !st; i++)
		st = x.v[i] ? tp_sink_emit_derived(pl, &pl->der[i], x.v[i], sink)
		            : tp_diag_set(d, TP_ENOMEM, "out of memory computing derived counters");
	for (size_t i = 0; i < pl->nder; i++)
		tp_free(x.v[i]);
	tp_free(x.v);
	return st;
}

/* tp_sink_drive, with the slices in parts when `parts` is given. */
static int drive(const struct tp_profile *p, const struct tp_analysis *a, struct tp_sink *sink,
                 const struct tp_sink_parts *parts, struct tp_diag *d)
{
	struct plan *pl = tp_calloc(1, sizeof *pl);
	struct tp_sink_slice *ss = tp_calloc(1, sizeof *ss);
	int st = TP_OK, begun = 0;
	if (!pl || !ss) {
		st = tp_diag_set(d, TP_ENOMEM, "out of memory starting a trace writer");
		goto out;
	}
	unsigned threads = parts ? plan_threads_for(parts->jobs) : 0;
	if ((st = build_plan(pl, p, threads, d)))
		goto out;

	if (sink->begin && (st = sink->begin(sink->ctx, p, a)))
		goto out;
	begun = 1;
	for (size_t i = 0; i < pl->ntracks && !st; i++)
		if (sink->track)
			st = sink->track(sink->ctx, &pl->tracks[i]);
	if (!st)
		st = parts ? tp_sink_deliver_parts(pl, sink, parts, d) : deliver(pl, sink, ss, d);
	if (!st)
		st = emit_derived(pl, sink, threads, d);
	for (size_t i = 0; i < pl->ntracks && !st; i++) {
		const struct tp_sink_track *t = &pl->tracks[i];
		if (t->counter < 0 || !sink->counter)
			continue;
		const struct tp_counter *c = &p->counters[t->counter];
		for (size_t k = 0; k < c->count && !st; k++)
			st = sink->counter(sink->ctx, t, c->samples[k].ts_ns, c->samples[k].value);
	}
	if (!st)
		st = tp_sink_emit_flows(pl, sink);
out:
	if (begun && sink->end) {
		int est = sink->end(sink->ctx, st);
		if (!st)
			st = est;
	}
	if (st && d && d->status == TP_OK)
		tp_diag_set(d, st, "writing a trace: %s", tp_strerror(st));
	if (pl)
		tp_sink_plan_free(pl);
	tp_free(pl);
	tp_free(ss);
	return st;
}

int tp_sink_drive(const struct tp_profile *p, const struct tp_analysis *a, struct tp_sink *sink,
                  struct tp_diag *d)
{
	return drive(p, a, sink, NULL, d);
}

int tp_sink_drive_parts(const struct tp_profile *p, const struct tp_analysis *a,
                        struct tp_sink *sink, const struct tp_sink_parts *parts, struct tp_diag *d)
{
	return drive(p, a, sink, parts, d);
}
