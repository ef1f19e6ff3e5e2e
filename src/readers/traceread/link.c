/*
 * link.c — the Chrome-trace reader's flows: s/t/f flow points paired by cat and id, and
 * Kineto's launch links (a runtime call to the device activity of the same args.correlation)
 * where no flow event draws one. Owns, for one call, the sorted point arrays it builds.
 */
#include "readers/traceread/traceread_int.h"

#include <stdlib.h>

/* ---------------------------------------------------------------------------------------- */
/* Flow events (s, t, f)                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Orders flow starts by (key, ts, file order): the starts of one id in time order. */
static int fpt_cmp(const void *x, const void *y)
{
	const struct fpt *a = *(const struct fpt *const *)x, *b = *(const struct fpt *const *)y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a < b ? -1 : a > b;
}

struct fpt_key {
	const struct fpt *const *st; /* starts sorted by fpt_cmp */
	const struct fpt *e;
};

/* Start i sorts after end e: a later key, or the same key at a later time. */
static int start_after_end(const void *ctx, size_t i)
{
	const struct fpt_key *k = ctx;
	const struct fpt *s = k->st[i];
	return s->key > k->e->key || (s->key == k->e->key && s->ts > k->e->ts);
}

/* Each end (f, t) pairs with the latest start (s, t) of the same cat and id that is not later
 * than it (the later one in the file on a tie); in file order a start may come after its end,
 * and an id may be used again once its flow has ended. */
int trace_pair_flows(struct trace_rd *r, int64_t base)
{
	struct tp_profile *p = r->p;
	const struct fpt **st = tp_malloc((r->nfstart + 1) * sizeof *st);
	if (!st)
		return TP_ENOMEM;
	for (size_t i = 0; i < r->nfstart; i++)
		st[i] = &r->fstart[i];
	qsort(st, r->nfstart, sizeof *st, fpt_cmp);
	for (size_t i = 0; i < r->nfend; i++) {
		const struct fpt *e = &r->fend[i];
		/* The last start with e's key and a ts not after e's: an upper bound. */
		struct fpt_key key = {st, e};
		size_t lo = tp_upper_bound(r->nfstart, start_after_end, &key);
		if (!lo || st[lo - 1]->key != e->key) {
			r->flows_unmatched++;
			continue;
		}
		struct tp_flow fl = {st[lo - 1]->track, e->track, st[lo - 1]->ts - base,
		                     e->ts - base};
		if (tp_profile_add_flow(p, &fl)) {
			tp_free(st);
			return TP_ENOMEM;
		}
		r->flows_matched++;
	}
	tp_free(st);
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Launch links by correlation id (Kineto)                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Kineto gives a runtime call that launches device work (cat "cuda_runtime", "cuda_driver",
 * "privateuse1_runtime", ...: class TP_WORK_RUNTIME) and the device activity it launched (cat
 * "kernel", "gpu_memcpy", "gpu_memset", "mtia_ccp_events": the busy device classes) the same
 * args.correlation, and usually writes an "ac2g" s/f flow pair with that id as well. Traces
 * without those flow events (older writers, filtered files) still carry the ids: each device
 * activity whose correlation names a runtime call, and whose start no s/f flow already
 * reaches, gets a flow from that call. */
struct corr_pt {
	uint64_t corr;
	int32_t track;
	int64_t ts;
};

struct corr_key {
	const struct corr_pt *v; /* sorted by corr_cmp */
	uint64_t corr;
};

/* Point i's correlation is not below the key's. */
static int corr_not_below(const void *ctx, size_t i)
{
	const struct corr_key *k = ctx;
	return k->v[i].corr >= k->corr;
}

static int corr_cmp(const void *x, const void *y)
{
	const struct corr_pt *a = x, *b = y;
	int64_t ka[] = {tp_key_u64(a->corr), a->ts, a->track};
	int64_t kb[] = {tp_key_u64(b->corr), b->ts, b->track};
	return tp_cmp_keys(ka, kb, 3);
}

static int arg_id(const struct tp_profile *p, const struct tp_arg *a, uint64_t *out)
{
	if (!a)
		return 0;
	if (a->type == TP_ARG_INT && a->v.i >= 0)
		*out = (uint64_t)a->v.i;
	else if (a->type == TP_ARG_UINT)
		*out = a->v.u;
	else if (a->type == TP_ARG_STR) {
		const char *s = tp_str(p, a->v.s);
		if (tp_parse_u64(s, strlen(s), out) != 0)
			return 0;
	} else
		return 0;
	return 1;
}

int trace_link_correlations(struct trace_rd *r)
{
	struct tp_profile *p = r->p;
	uint32_t k_corr = tp_profile_find_str(p, TP_KEY_CORRELATION);
	if (!k_corr)
		return TP_OK;
	struct corr_pt *src = NULL, *dst = NULL, *have = NULL;
	size_t ns = 0, cs = 0, nd = 0, cd = 0, nh = 0, ch = 0;
	int st = TP_OK;
	struct tp_work_ids w;
	tp_work_ids(p, &w);
	for (size_t t = 0; t < p->num_tracks && st == TP_OK; t++) {
		const struct tp_track *tr = &p->tracks[t];
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *sl = &tr->slices[k];
			if (!sl->args)
				continue;
			/* 1 source (runtime / driver call), 2 target (device work), 0 neither. */
			enum tp_work cls = tp_work_of(&w, tp_slice_type(tr, sl));
			int role = cls == TP_WORK_RUNTIME ? 1 : tp_work_busy(cls) ? 2 : 0;
			uint64_t corr;
			if (!role || !arg_id(p, tp_args_find(p, sl->args, k_corr), &corr))
				continue;
			struct corr_pt pt = {corr, (int32_t)t, sl->start_ns};
			struct corr_pt **v = role == 1 ? &src : &dst;
			size_t *n = role == 1 ? &ns : &nd, *c = role == 1 ? &cs : &cd;
			struct corr_pt *g = tp_grow(*v, sizeof *g, *n + 1, c);
			if (!g) {
				st = TP_ENOMEM;
				break;
			}
			*v = g;
			g[(*n)++] = pt;
		}
	}
	if (st == TP_OK && ns && nd) {
		/* Flow ends already drawn by s/f pairs, as (track, ts) with corr = 0. */
		for (size_t i = 0; i < p->num_flows; i++) {
			struct corr_pt *g = tp_grow(have, sizeof *g, nh + 1, &ch);
			if (!g) {
				st = TP_ENOMEM;
				break;
			}
			have = g;
			have[nh++] = (struct corr_pt){0, p->flows[i].to_track, p->flows[i].to_ns};
		}
		qsort(src, ns, sizeof *src, corr_cmp);
		if (nh)
			qsort(have, nh, sizeof *have, corr_cmp);
		for (size_t i = 0; i < nd && st == TP_OK; i++) {
			struct corr_pt key = {0, dst[i].track, dst[i].ts};
			if (nh && bsearch(&key, have, nh, sizeof *have, corr_cmp))
				continue;
			/* The first runtime call with this correlation. */
			struct corr_key ck = {src, dst[i].corr};
			size_t lo = tp_upper_bound(ns, corr_not_below, &ck);
			if (lo == ns || src[lo].corr != dst[i].corr || src[lo].ts > dst[i].ts)
				continue;
			struct tp_flow fl = {src[lo].track, dst[i].track, src[lo].ts, dst[i].ts};
			if (tp_profile_add_flow(p, &fl))
				st = TP_ENOMEM;
			else
				r->flows_corr++;
		}
	}
	tp_free(src);
	tp_free(dst);
	tp_free(have);
	return st;
}
