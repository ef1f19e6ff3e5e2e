/*
 * async.c — the capture reader's async ranges (tpuprof_async_*): the begins and ends collected
 * from every thread are paired by (id, name) in time order and laid out on as few "async
 * ranges" tracks as keep them from overlapping. Owns, for one call, the pair and lane arrays.
 */
#include "readers/capfile/capfile_int.h"

#include <stdio.h>
#include <stdlib.h>

static int async_cmp(const void *a, const void *b)
{
	const struct async_ev *x = a, *y = b;
	/* A begin and an end at one tick: the begin first. */
	int64_t kx[] = {tp_key_u64(x->id), x->name, tp_key_u64(x->ts), !x->begin, (int64_t)x->seq};
	int64_t ky[] = {tp_key_u64(y->id), y->name, tp_key_u64(y->ts), !y->begin, (int64_t)y->seq};
	return tp_cmp_keys(kx, ky, 5);
}

struct async_pair {
	const struct async_ev *b, *e; /* e NULL: cut short */
	int64_t start, end;
};

static int pair_start_cmp(const void *a, const void *b)
{
	const struct async_pair *x = a, *y = b;
	int64_t kx[] = {x->start, (int64_t)x->b->seq}, ky[] = {y->start, (int64_t)y->b->seq};
	return tp_cmp_keys(kx, ky, 2);
}

/* Pairs async begins and ends by (id, name) in time order and lays the ranges out on as few
 * "async ranges" tracks as keep them from overlapping. */
int cap_pair_async(struct cap_rd *r, uint64_t end_tick)
{
	if (r->nasync == 0)
		return TP_OK;
	struct tp_profile *p = r->p;
	qsort(r->async, r->nasync, sizeof *r->async, async_cmp);
	struct async_pair *pairs = tp_calloc(r->nasync, sizeof *pairs);
	int64_t *lane_end = tp_calloc(r->nasync, sizeof *lane_end);
	int *lane_track = tp_calloc(r->nasync, sizeof *lane_track);
	size_t np = 0, nlanes = 0;
	int rc = TP_OK;
	if (!pairs || !lane_end || !lane_track) {
		rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
		goto out;
	}
	for (size_t i = 0; i < r->nasync; i++) {
		const struct async_ev *e = &r->async[i];
		if (!e->begin) {
			r->unmatched_ends++;
			continue;
		}
		const struct async_ev *n = i + 1 < r->nasync ? &r->async[i + 1] : NULL;
		struct async_pair *q = &pairs[np++];
		q->b = e;
		q->start = rel_ns(r, e->ts);
		if (n && !n->begin && n->id == e->id && n->name == e->name) {
			q->e = n;
			q->end = rel_ns(r, n->ts);
			i++;
		} else {
			r->unclosed++;
			q->end = rel_ns(r, end_tick > e->ts ? end_tick : e->ts);
		}
		if (q->end < q->start)
			q->end = q->start;
	}
	qsort(pairs, np, sizeof *pairs, pair_start_cmp);
	for (size_t k = 0; k < np; k++) {
		struct async_pair *q = &pairs[k];
		size_t lane = 0;
		while (lane < nlanes && lane_end[lane] > q->start)
			lane++;
		if (lane == nlanes) {
			char name[48];
			if (lane == 0)
				snprintf(name, sizeof name, "async ranges");
			else
				snprintf(name, sizeof name, "async ranges (%zu)", lane + 1);
			lane_track[lane] = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, name, 0);
			if (lane_track[lane] < 0) {
				rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
				goto out;
			}
			p->tracks[lane_track[lane]].tid = -1;
			nlanes++;
		}
		lane_end[lane] = q->end;
		tp_args_begin(p);
		tp_args_add_uint(p, TP_CAP_KEY_ASYNC_ID, q->b->id);
		tp_args_add_int(p, TP_CAP_KEY_BEGIN_TID, q->b->tid);
		tp_args_add_int(p, TP_CAP_KEY_END_TID, q->e ? q->e->tid : -1);
		if (q->b->category && tp_str(p, q->b->category)[0])
			tp_args_add_str(p, TP_CAP_KEY_CATEGORY, tp_str(p, q->b->category));
		if (q->b->color & 0x01000000u) {
			char c[8];
			snprintf(c, sizeof c, "#%06x", q->b->color & 0xffffffu);
			tp_args_add_str(p, TP_CAP_KEY_COLOR, c);
		}
		if (q->b->has_src) {
			if (tp_str(p, q->b->src_file)[0])
				tp_args_add_str(p, TP_CAP_KEY_SRC_FILE, tp_str(p, q->b->src_file));
			tp_args_add_int(p, TP_CAP_KEY_SRC_LINE, q->b->src_line);
			if (tp_str(p, q->b->src_func)[0])
				tp_args_add_str(p, TP_CAP_KEY_SRC_FUNC, tp_str(p, q->b->src_func));
		}
		if (q->e == NULL)
			tp_args_add_int(p, TP_CAP_KEY_CUT, 1);
		struct tp_slice *s = tp_track_push(p, lane_track[lane]);
		if (s == NULL) {
			rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
			goto out;
		}
		s->start_ns = q->start;
		tp_slice_set_end(p, &p->tracks[lane_track[lane]], s, q->end);
		const char *nm = tp_str(p, q->b->name);
		struct tp_label lb = {.name = tp_profile_str(p, nm[0] ? nm : TP_CAP_TYPE_ASYNC)};
		lb.type = tp_profile_str(p, TP_CAP_TYPE_ASYNC);
		tp_slice_set_label(p, &p->tracks[lane_track[lane]], s, &lb);
		s->args = tp_args_end(p);
	}
out:
	tp_free(pairs);
	tp_free(lane_end);
	tp_free(lane_track);
	return rc;
}
