/*
 * layer_touch.c — joining many commands to their layers at once
 * (tp_profile_layers_touch_jobs): a reader's last layer step, once every slice of its engine
 * tracks holds its layer. The layers are split into parts of LT_PART (fixed by the data);
 * each part is touched on a thread, in track order and slice order, which is the order one
 * pass gives each layer, so the table is the same for every thread count. Tracks are read in
 * chunks of LT_CHUNK slices whose layer span lets a part skip the chunks that hold none of its
 * layers (a track runs its layers in about their order). A touch that needs a side-table entry
 * (the tables are shared by every layer) is kept, with the rest of that layer's touches, for
 * the calling thread, which does them afterwards part by part.
 */
#include "model/model.h"
#include "model/model_int.h"

#include <string.h>

#define LT_PART 4096u
#define LT_CHUNK 4096u

struct lt_span {
	int32_t lo, hi; /* layers of a chunk's slices; lo > hi: none */
};

/* A touch left to the calling thread. */
struct lt_def {
	int64_t begin, end;
	uint32_t layer, cmd;
	int tiu;
};

struct lt_part {
	struct lt_def *v;
	size_t n, cap;
	int oom;
};

struct lt_run {
	struct tp_profile *p;
	const int *tr;
	const uint8_t *tiu;
	size_t ntr;
	int with_cmd;
	struct lt_span **span; /* per track, per chunk */
	struct lt_part *part;
};

static size_t nchunks(const struct tp_track *t)
{
	return (t->count + LT_CHUNK - 1) / LT_CHUNK;
}

/* Track k's chunk spans. */
static void span_one(void *v, size_t k)
{
	struct lt_run *a = v;
	const struct tp_track *t = &a->p->tracks[a->tr[k]];
	struct lt_span *sp = a->span[k];
	for (size_t c = 0; c < nchunks(t); c++) {
		struct lt_span x = {INT32_MAX, -1};
		size_t end = (c + 1) * LT_CHUNK < t->count ? (c + 1) * LT_CHUNK : t->count;
		for (size_t i = c * LT_CHUNK; i < end; i++) {
			int32_t L = t->slices[i].layer;
			if (L < 0)
				continue;
			if (L < x.lo)
				x.lo = L;
			if (L > x.hi)
				x.hi = L;
		}
		sp[c] = x;
	}
}

static void defer(struct lt_part *q, const struct lt_def *d)
{
	if (q->n == q->cap) {
		struct lt_def *g = tp_grow(q->v, sizeof *g, q->n + 1, &q->cap);
		if (!g) {
			q->oom = 1;
			return;
		}
		q->v = g;
	}
	q->v[q->n++] = *d;
}

/* The touches of layers [lo, hi) in chunk c of track k. */
static void part_chunk(struct lt_run *a, struct lt_part *q, uint8_t *late, size_t k, size_t c,
                       uint32_t lo, uint32_t hi)
{
	const struct tp_track *t = &a->p->tracks[a->tr[k]];
	size_t end = (c + 1) * LT_CHUNK < t->count ? (c + 1) * LT_CHUNK : t->count;
	for (size_t i = c * LT_CHUNK; i < end; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (s->layer < 0 || (uint32_t)s->layer < lo || (uint32_t)s->layer >= hi)
			continue;
		struct lt_def d = {.begin = s->start_ns,
		                   .end = tp_slice_end(t, s),
		                   .layer = (uint32_t)s->layer,
		                   .cmd = a->with_cmd ? s->cmd_id : 0,
		                   .tiu = a->tiu[k]};
		uint32_t r = d.layer - lo;
		if (!(late[r / 8] & 1u << r % 8) &&
		    tp_model_layer_touch_rec(a->p, d.layer, d.begin, d.end, d.tiu, d.cmd))
			continue;
		late[r / 8] |= (uint8_t)(1u << r % 8);
		defer(q, &d);
	}
}

/* Part j: layers [j * LT_PART, (j + 1) * LT_PART) touched in track and slice order. */
static void part_one(void *v, size_t j)
{
	struct lt_run *a = v;
	uint32_t lo = (uint32_t)(j * LT_PART), hi = lo + LT_PART;
	if (hi > a->p->num_layers)
		hi = (uint32_t)a->p->num_layers;
	uint8_t late[LT_PART / 8];
	memset(late, 0, sizeof late);
	/* On a copy: the parts sit side by side, and another thread defers into the next one. */
	struct lt_part q = a->part[j];
	for (size_t k = 0; k < a->ntr; k++) {
		const struct tp_track *t = &a->p->tracks[a->tr[k]];
		for (size_t c = 0; c < nchunks(t); c++) {
			const struct lt_span *sp = &a->span[k][c];
			if (sp->lo > sp->hi || (uint32_t)sp->hi < lo || (uint32_t)sp->lo >= hi)
				continue;
			part_chunk(a, &q, late, k, c, lo, hi);
		}
	}
	a->part[j] = q;
}

static void run_free(struct lt_run *a, size_t nparts)
{
	for (size_t k = 0; a->span && k < a->ntr; k++)
		tp_free(a->span[k]);
	tp_free(a->span);
	for (size_t j = 0; a->part && j < nparts; j++)
		tp_free(a->part[j].v);
	tp_free(a->part);
}

int tp_profile_layers_touch_jobs(struct tp_profile *p, const int *tr, const uint8_t *tiu,
                                 size_t ntr, int with_cmd, unsigned jobs)
{
	size_t nparts = (p->num_layers + LT_PART - 1) / LT_PART;
	if (!ntr || !nparts)
		return TP_OK;
	struct lt_run a = {.p = p, .tr = tr, .tiu = tiu, .ntr = ntr, .with_cmd = with_cmd};
	a.span = tp_calloc(ntr, sizeof *a.span);
	a.part = tp_calloc(nparts, sizeof *a.part);
	int rc = a.span && a.part ? TP_OK : TP_ENOMEM;
	for (size_t k = 0; rc == TP_OK && k < ntr; k++) {
		size_t n = nchunks(&p->tracks[tr[k]]);
		if (!(a.span[k] = tp_calloc(n ? n : 1, sizeof **a.span)))
			rc = TP_ENOMEM;
	}
	if (rc == TP_OK) {
		tp_par_run(jobs ? jobs : 1, ntr, span_one, &a);
		tp_par_run(jobs ? jobs : 1, nparts, part_one, &a);
	}
	/* The touches that need side-table entries, each layer's in its order. */
	for (size_t j = 0; rc == TP_OK && j < nparts; j++) {
		const struct lt_part *q = &a.part[j];
		if (q->oom)
			rc = TP_ENOMEM;
		for (size_t i = 0; rc == TP_OK && i < q->n; i++) {
			const struct lt_def *d = &q->v[i];
			rc = tp_profile_layer_touch(p, d->layer, d->begin, d->end, d->tiu, d->cmd);
		}
	}
	run_free(&a, nparts);
	if (rc != TP_OK)
		p->oom = 1;
	return rc == TP_OK ? TP_OK : TP_ENOMEM;
}
