/*
 * accel.c — the accelerator analysis' driver (contract in accel.h): tells device lanes from
 * host threads, gathers the device work and the runtime calls that may have launched it,
 * joins them by correlation id (else by a flow), and places launches and work in the host
 * steps; accel_stats.c, accel_host.c and accel_verdict.c derive the figures. Owns, for one
 * call, the lane roles, the work and launch arrays; the struct tp_accel goes to the caller.
 */
#include "analysis/accel_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- Lanes ---------------------------------------------------------------------------------- */

/* A device lane: a host track holding device work (a GPU stream), or an engine of a dump that
 * has host tracks beside it (a host trace merged in); ACC_HOST: any other host track. */
static int lane_roles(struct acc_ctx *c)
{
	const struct tp_profile *p = c->p;
	int has_host = 0;
	c->role = tp_calloc(p->num_tracks ? p->num_tracks : 1, 1);
	if (!c->role)
		return TP_ENOMEM;
	for (size_t t = 0; t < p->num_tracks; t++) {
		const struct tp_track *tr = &p->tracks[t];
		if (!tp_track_kind_is_host((enum tp_track_kind)tr->kind))
			continue;
		has_host = 1;
		c->role[t] = ACC_HOST;
		for (size_t k = 0; k < tr->count; k++)
			if (tp_work_on_device(
			        tp_work_of(&c->w, tp_slice_type(tr, &tr->slices[k])))) {
				c->role[t] = ACC_LANE;
				break;
			}
	}
	for (size_t t = 0; t < p->num_tracks && has_host; t++)
		if (p->tracks[t].kind <= TP_TRACK_CDMA && p->tracks[t].count)
			c->role[t] = ACC_LANE;
	return TP_OK;
}

/* ---- Device work and launches --------------------------------------------------------------- */

/* The kind of work slice s of track tr is, or -1 when it keeps no device busy. */
static int work_kind(const struct acc_ctx *c, const struct tp_track *tr, const struct tp_slice *s)
{
	if (tr->kind <= TP_TRACK_CDMA) {
		if (tp_slice_kind(tr, s) != TP_CMD_NORMAL)
			return -1; /* sys commands: waits, syncs, ends */
		return tr->kind == TP_TRACK_TIU    ? TP_ACC_COMPUTE
		       : tr->kind == TP_TRACK_CDMA ? TP_ACC_COMM
		                                   : TP_ACC_MEMCPY;
	}
	switch (tp_work_of(&c->w, tp_slice_type(tr, s))) {
	case TP_WORK_KERNEL:
		return TP_ACC_COMPUTE;
	case TP_WORK_MEMCPY:
		return TP_ACC_MEMCPY;
	case TP_WORK_MEMSET:
		return TP_ACC_MEMSET;
	case TP_WORK_COLLECTIVE:
		return TP_ACC_COMM;
	default:
		return -1;
	}
}

/* The correlation id of a slice's arguments into *v; 0 when it has none. */
static int corr_of(const struct tp_profile *p, uint32_t key, const struct tp_slice *s, uint64_t *v)
{
	const struct tp_arg *a = key && s->args ? tp_args_find(p, s->args, key) : NULL;
	if (!a || (a->type != TP_ARG_INT && a->type != TP_ARG_UINT) ||
	    (a->type == TP_ARG_INT && a->v.i < 0))
		return 0;
	*v = a->type == TP_ARG_INT ? (uint64_t)a->v.i : a->v.u;
	return 1;
}

static int push_launch(struct acc_ctx *c, const struct acc_launch *l)
{
	if (c->nlaunches == c->cap_launches) {
		void *v = tp_grow(c->launches, sizeof *l, c->nlaunches + 1, &c->cap_launches);
		if (!v)
			return TP_ENOMEM;
		c->launches = v;
	}
	c->launches[c->nlaunches++] = *l;
	return TP_OK;
}

/* Slice k of track t as a launch (a runtime call on a host thread) or as device work (on a
 * lane), when it is one; k_corr is the correlation key's id. TP_OK / TP_ENOMEM. */
static int gather_slice(struct acc_ctx *c, uint32_t k_corr, size_t t, size_t k)
{
	const struct tp_track *tr = &c->p->tracks[t];
	const struct tp_slice *s = &tr->slices[k];
	if (c->role[t] == ACC_HOST) {
		if (tp_work_of(&c->w, tp_slice_type(tr, s)) != TP_WORK_RUNTIME)
			return TP_OK;
		struct acc_launch l = {.start = s->start_ns,
		                       .end = tp_slice_end(tr, s),
		                       .track = (int32_t)t,
		                       .device = tr->device,
		                       .step = -1,
		                       .slice = (uint32_t)k};
		l.has_corr = (uint8_t)corr_of(c->p, k_corr, s, &l.corr);
		return push_launch(c, &l);
	}
	int kind = work_kind(c, tr, s);
	if (kind < 0)
		return TP_OK;
	if (c->nitems == c->cap_items) {
		void *v = tp_grow(c->items, sizeof *c->items, c->nitems + 1, &c->cap_items);
		if (!v)
			return TP_ENOMEM;
		c->items = v;
	}
	struct acc_item *it = &c->items[c->nitems++];
	*it = (struct acc_item){.start = s->start_ns,
	                        .end = tp_slice_end(tr, s),
	                        .track = (int32_t)t,
	                        .device = tr->device,
	                        .launch = -1,
	                        .step = -1,
	                        .name = tp_slice_name(tr, s),
	                        .kind = (uint8_t)kind};
	it->has_corr = (uint8_t)corr_of(c->p, k_corr, s, &it->corr);
	return TP_OK;
}

/* Every piece of device work on the lanes, and every runtime call on the host tracks (in
 * (track, slice) order: launch_find's binary search relies on it). */
static int gather(struct acc_ctx *c)
{
	const struct tp_profile *p = c->p;
	uint32_t k_corr = tp_profile_find_str(p, TP_KEY_CORRELATION);
	for (size_t t = 0; t < p->num_tracks; t++)
		for (size_t k = 0; k < p->tracks[t].count && c->role[t]; k++)
			if (gather_slice(c, k_corr, t, k))
				return TP_ENOMEM;
	c->nruntime = c->nlaunches;
	return TP_OK;
}

/* ---- A sorted index of (major, minor) keys -------------------------------------------------- */

/* One entry of a table (its index `at`) under its key. */
struct keyed {
	uint64_t major;
	int64_t minor;
	uint32_t at;
};

static int cmp64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* By key, then by index (a total order: qsort's result does not depend on its algorithm). */
static int keyed_cmp(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	int c = (a->major > b->major) - (a->major < b->major);
	if (!c)
		c = cmp64(a->minor, b->minor);
	return c ? c : cmp64(a->at, b->at);
}

struct keyed_find {
	const struct keyed *k;
	uint64_t major;
	int64_t minor;
};

static int keyed_after(const void *ctx, size_t i)
{
	const struct keyed_find *f = ctx;
	return f->k[i].major > f->major || (f->k[i].major == f->major && f->k[i].minor > f->minor);
}

/* The number of entries of k[0..n) (sorted by keyed_cmp) whose key is not after (major,
 * minor). */
static size_t keyed_upper(const struct keyed *k, size_t n, uint64_t major, int64_t minor)
{
	struct keyed_find f = {k, major, minor};
	return tp_upper_bound(n, keyed_after, &f);
}

/* Joins each piece of work that carries a correlation id to the runtime call with the same id:
 * the latest one that starts no later than the work (ids can be reused across a long run),
 * else the first one. */
static int link_corr(struct acc_ctx *c)
{
	size_t n = 0;
	struct keyed *k = tp_malloc((c->nruntime ? c->nruntime : 1) * sizeof *k);
	if (!k)
		return TP_ENOMEM;
	for (size_t i = 0; i < c->nruntime; i++)
		if (c->launches[i].has_corr)
			k[n++] =
			    (struct keyed){c->launches[i].corr, c->launches[i].start, (uint32_t)i};
	qsort(k, n, sizeof *k, keyed_cmp);
	for (size_t i = 0; i < c->nitems && n; i++) {
		struct acc_item *it = &c->items[i];
		if (!it->has_corr)
			continue;
		size_t lo = keyed_upper(k, n, it->corr, it->start);
		if (lo && k[lo - 1].major == it->corr)
			it->launch = (int32_t)k[lo - 1].at;
		else if (lo < n && k[lo].major == it->corr)
			it->launch = (int32_t)k[lo].at;
	}
	tp_free(k);
	return TP_OK;
}

/* The first of n records (stride bytes apart, sorted by the int64 start at byte offset `off`)
 * that starts after t; n when none does. */
static size_t first_after(const void *base, size_t n, size_t stride, size_t off, int64_t t)
{
	const char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t k;
		memcpy(&k, b + mid * stride + off, sizeof k);
		if (k <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The innermost slice of track tr that holds time t (the latest-starting one), or -1. */
static long slice_at(const struct tp_track *tr, int64_t t)
{
	size_t lo = first_after(tr->slices, tr->count, sizeof *tr->slices,
	                        offsetof(struct tp_slice, start_ns), t);
	for (size_t k = lo; k-- > 0 && lo - k <= 64;)
		if (tp_slice_end(tr, &tr->slices[k]) >= t)
			return (long)k;
	return -1;
}

/* The launch of (track, slice) among launches[from, to) (sorted by that pair), or -1. */
static long launch_find(const struct acc_ctx *c, size_t from, size_t to, int32_t track,
                        uint32_t slice)
{
	while (from < to) {
		size_t mid = from + (to - from) / 2;
		const struct acc_launch *l = &c->launches[mid];
		if (l->track < track || (l->track == track && l->slice < slice))
			from = mid + 1;
		else
			to = mid;
	}
	if (from < c->nlaunches && c->launches[from].track == track &&
	    c->launches[from].slice == slice)
		return (long)from;
	return -1;
}

static int launch_cmp(const void *x, const void *y)
{
	const struct acc_launch *a = x, *b = y;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return a->slice < b->slice ? -1 : a->slice > b->slice;
}

/* The host slice a flow into item `it` starts from (a flow ends where the work starts on its
 * lane), as (*track, *slice): fk[0..nf) keys the flows into lanes by (to_track, to_ns). 0 when
 * no flow reaches it from a host thread. */
static int flow_source(const struct acc_ctx *c, const struct keyed *fk, size_t nf,
                       const struct acc_item *it, int32_t *track, uint32_t *slice)
{
	const struct tp_profile *p = c->p;
	for (size_t i = keyed_upper(fk, nf, (uint64_t)it->track, it->start); i-- > 0;) {
		const struct tp_flow *fl = &p->flows[fk[i].at];
		if (fl->to_track != it->track || fl->to_ns != it->start)
			break;
		if (fl->from_track < 0 || (size_t)fl->from_track >= p->num_tracks ||
		    c->role[fl->from_track] != ACC_HOST)
			continue;
		long k = slice_at(&p->tracks[fl->from_track], fl->from_ns);
		if (k < 0)
			continue;
		*track = fl->from_track;
		*slice = (uint32_t)k;
		return 1;
	}
	return 0;
}

/* Work waiting for a launch that is no runtime call: (item, host track, slice). */
struct pend {
	size_t item;
	int32_t track;
	uint32_t slice;
};

/* The pending launches as launches after the runtime calls (sorted by (track, slice), one
 * each), and their items pointed at them. TP_OK / TP_ENOMEM. */
static int add_extra_launches(struct acc_ctx *c, const struct pend *pd, size_t np)
{
	const struct tp_profile *p = c->p;
	size_t first = c->nlaunches;
	for (size_t i = 0; i < np; i++) {
		const struct tp_track *tr = &p->tracks[pd[i].track];
		const struct tp_slice *s = &tr->slices[pd[i].slice];
		struct acc_launch x = {0,           s->start_ns, tp_slice_end(tr, s),
		                       pd[i].track, tr->device,  -1,
		                       pd[i].slice, 0,           0};
		if (push_launch(c, &x))
			return TP_ENOMEM;
	}
	struct acc_launch *ex = c->launches + first;
	qsort(ex, np, sizeof *ex, launch_cmp);
	size_t u = 0;
	for (size_t i = 0; i < np; i++)
		if (!u || launch_cmp(&ex[u - 1], &ex[i]) != 0)
			ex[u++] = ex[i];
	c->nlaunches = first + u;
	for (size_t i = 0; i < np; i++)
		c->items[pd[i].item].launch =
		    (int32_t)launch_find(c, first, c->nlaunches, pd[i].track, pd[i].slice);
	return TP_OK;
}

/* Work without a correlation link takes the host slice a flow draws to it as its launch: a
 * runtime call, or an operator of a trace that has no runtime calls. */
static int link_flows(struct acc_ctx *c)
{
	const struct tp_profile *p = c->p;
	size_t todo = 0;
	for (size_t i = 0; i < c->nitems; i++)
		todo += c->items[i].launch < 0;
	if (!todo || !p->num_flows)
		return TP_OK;
	struct keyed *fx = tp_malloc(p->num_flows * sizeof *fx);
	struct pend *pd = NULL;
	size_t nf = 0, np = 0, cap = 0;
	if (!fx)
		return TP_ENOMEM;
	for (size_t f = 0; f < p->num_flows; f++) {
		const struct tp_flow *fl = &p->flows[f];
		if (fl->to_track >= 0 && (size_t)fl->to_track < p->num_tracks &&
		    c->role[fl->to_track] == ACC_LANE)
			fx[nf++] = (struct keyed){(uint64_t)fl->to_track, fl->to_ns, (uint32_t)f};
	}
	qsort(fx, nf, sizeof *fx, keyed_cmp);
	int st = TP_OK;
	for (size_t i = 0; i < c->nitems && nf; i++) {
		struct acc_item *it = &c->items[i];
		int32_t track;
		uint32_t slice;
		if (it->launch >= 0 || !flow_source(c, fx, nf, it, &track, &slice))
			continue;
		long l = launch_find(c, 0, c->nruntime, track, slice);
		if (l >= 0) {
			it->launch = (int32_t)l;
			continue;
		}
		struct pend *v = tp_grow(pd, sizeof *v, np + 1, &cap);
		if (!v) {
			st = TP_ENOMEM;
			break;
		}
		pd = v;
		pd[np++] = (struct pend){i, track, slice};
	}
	if (st == TP_OK && np)
		st = add_extra_launches(c, pd, np);
	tp_free(fx);
	tp_free(pd);
	return st;
}

/* ---- Steps ---------------------------------------------------------------------------------- */

/* Steps by start, then device, longest first. */
static int step_cmp(const void *x, const void *y)
{
	const struct tp_accel_step *a = x, *b = y;
	int c = cmp64(a->start_ns, b->start_ns);
	if (!c)
		c = cmp64(a->device, b->device);
	return c ? c : cmp64(b->dur_ns, a->dur_ns);
}

/* The host steps (TP_CAP_TYPE_STEP slices of host threads), by start. */
static int gather_steps(struct acc_ctx *c)
{
	const struct tp_profile *p = c->p;
	struct tp_accel *a = c->a;
	size_t cap = 0;
	for (size_t t = 0; t < p->num_tracks; t++) {
		const struct tp_track *tr = &p->tracks[t];
		for (size_t k = 0; k < tr->count && c->role[t] == ACC_HOST; k++) {
			const struct tp_slice *s = &tr->slices[k];
			if (tp_work_of(&c->w, tp_slice_type(tr, s)) != TP_WORK_STEP)
				continue;
			struct tp_accel_step *v = tp_grow(a->steps, sizeof *v, a->nsteps + 1, &cap);
			if (!v)
				return TP_ENOMEM;
			a->steps = v;
			memset(&v[a->nsteps], 0, sizeof *v);
			v[a->nsteps].name = tp_slice_name(tr, s);
			v[a->nsteps].device = tr->device;
			v[a->nsteps].start_ns = s->start_ns;
			v[a->nsteps++].dur_ns = tp_slice_dur(tr, s);
		}
	}
	if (a->nsteps)
		qsort(a->steps, a->nsteps, sizeof *a->steps, step_cmp);
	return TP_OK;
}

/* The step that holds time t: the latest-starting one of device `dev` when that device has
 * steps (a launch belongs to its own process' step), else of any device; -1 when none. */
static int32_t step_at(const struct tp_accel *a, const uint8_t *dev_steps, size_t ndev, int64_t t,
                       int32_t dev)
{
	size_t hi = first_after(a->steps, a->nsteps, sizeof *a->steps,
	                        offsetof(struct tp_accel_step, start_ns), t);
	int own = dev >= 0 && (size_t)dev < ndev && dev_steps[dev];
	for (size_t i = hi; i-- > 0 && hi - i <= 64;) {
		const struct tp_accel_step *s = &a->steps[i];
		if (t < s->start_ns + s->dur_ns && (!own || s->device == dev))
			return (int32_t)i;
	}
	return -1;
}

/* Launches go to the step that holds their start; work to its launch's step, or without a
 * launch to the step that holds its own start. */
static int place_in_steps(struct acc_ctx *c)
{
	const struct tp_profile *p = c->p;
	struct tp_accel *a = c->a;
	size_t ndev = p->num_devices;
	uint8_t *dev_steps = tp_calloc(ndev ? ndev : 1, 1);
	if (!dev_steps)
		return TP_ENOMEM;
	for (size_t i = 0; i < a->nsteps; i++)
		if (a->steps[i].device >= 0 && (size_t)a->steps[i].device < ndev)
			dev_steps[a->steps[i].device] = 1;
	for (size_t i = 0; i < c->nlaunches && a->nsteps; i++)
		c->launches[i].step =
		    step_at(a, dev_steps, ndev, c->launches[i].start, c->launches[i].device);
	for (size_t i = 0; i < c->nitems; i++) {
		struct acc_item *it = &c->items[i];
		if (it->launch >= 0) {
			c->launches[it->launch].used = 1;
			it->step = c->launches[it->launch].step;
		} else if (a->nsteps) {
			it->step = step_at(a, dev_steps, ndev, it->start, -1);
		}
	}
	tp_free(dev_steps);
	return TP_OK;
}

/* ---- Driver --------------------------------------------------------------------------------- */

int tp_accel_analyze(const struct tp_profile *p, struct tp_accel **out)
{
	*out = NULL;
	struct acc_ctx c;
	memset(&c, 0, sizeof c);
	c.p = p;
	tp_work_ids(p, &c.w);
	int st = lane_roles(&c);
	size_t lanes = 0;
	for (size_t t = 0; st == TP_OK && t < p->num_tracks; t++)
		lanes += c.role[t] == ACC_LANE;
	if (st == TP_OK && lanes)
		st = gather(&c);
	if (st != TP_OK || !c.nitems)
		goto out;
	c.a = tp_calloc(1, sizeof *c.a);
	if (!c.a) {
		st = TP_ENOMEM;
		goto out;
	}
	c.a->lanes = lanes;
	if ((st = link_corr(&c)) || (st = link_flows(&c)) || (st = gather_steps(&c)) ||
	    (st = place_in_steps(&c)) || (st = tp_accel_stats(&c)) || (st = tp_accel_host_rows(&c)))
		goto out;
	tp_accel_verdict(p, c.a);
	*out = c.a;
	c.a = NULL;
out:
	tp_accel_free(c.a);
	tp_free(c.role);
	tp_free(c.items);
	tp_free(c.launches);
	return st;
}

void tp_accel_free(struct tp_accel *a)
{
	if (!a)
		return;
	TP_FREE_ALL(a->host, a->kernels, a->steps, a->ranks, a);
}
