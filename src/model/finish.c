/*
 * finish.c — tp_profile_finish: every track sorted (its cost array kept in step), nesting
 * depths of thread tracks, labels compacted, counters sorted, the profile's span and the note
 * on strings cut at TP_PROFILE_MAX_STR; and tp_profile_drop_cores, which removes cores and
 * finishes again.
 */
#include "model/model.h"
#include "model/model_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int slice_cmp(const struct tp_track *t, const struct tp_slice *x, const struct tp_slice *y)
{
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	int64_t xe = tp_slice_end(t, x), ye = tp_slice_end(t, y);
	if (xe != ye)
		return xe > ye ? -1 : 1;
	uint64_t xc = tp_slice_start_cycle(t, x), yc = tp_slice_start_cycle(t, y);
	if (xc != yc)
		return xc < yc ? -1 : 1;
	if (x->cmd_id != y->cmd_id)
		return x->cmd_id < y->cmd_id ? -1 : 1;
	return 0;
}

static int sample_cmp(const void *a, const void *b)
{
	const struct tp_counter_sample *x = a, *y = b;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static int slice_before(const void *ctx, uint32_t x, uint32_t y)
{
	const struct tp_track *t = ctx;
	return slice_cmp(t, &t->slices[x], &t->slices[y]) < 0;
}

/* Sorts a track's slices and keeps its cost array and its kept LOCAL memory entries (if any) in
 * step without a copy of any: a u32
 * permutation (the slices' old indexes) is sorted by the slices with tp_sort_index (stable: equal
 * slices keep their order, as glibc's qsort of the pair array did), then the arrays are
 * permuted in place by following its cycles. Temporary memory: 8 bytes per slice. */
static int sort_track(struct tp_track *t)
{
	size_t n = t->count;
	if (n > UINT32_MAX || n > SIZE_MAX / (2 * sizeof(uint32_t)))
		return TP_ENOMEM;
	uint32_t *perm = tp_malloc(n * sizeof *perm), *tmp = tp_malloc(n * sizeof *tmp);
	if (!perm || !tmp) {
		tp_free(perm);
		tp_free(tmp);
		return TP_ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		perm[k] = (uint32_t)k;
	tp_sort_index(perm, tmp, n, slice_before, t);
	tp_free(tmp);
	/* perm[k] = old index of the slice that goes to k. Each cycle k -> perm[k] -> ... is
	 * rotated once; a placed position is marked by perm[k] = k. */
	for (size_t k = 0; k < n; k++) {
		if (perm[k] == k)
			continue;
		struct tp_slice s = t->slices[k];
		uint32_t c = t->cost ? tp_model_cost_at(t, k) : 0;
		uint32_t lm = t->lmem ? t->lmem[k] : 0;
		size_t j = k;
		for (;;) {
			size_t from = perm[j];
			perm[j] = (uint32_t)j;
			if (from == k) {
				t->slices[j] = s;
				if (t->cost)
					tp_model_cost_put(t, j, c);
				if (t->lmem)
					t->lmem[j] = lm;
				break;
			}
			t->slices[j] = t->slices[from];
			if (t->cost)
				tp_model_cost_put(t, j, tp_model_cost_at(t, from));
			if (t->lmem)
				t->lmem[j] = t->lmem[from];
			j = from;
		}
	}
	tp_free(perm);
	return TP_OK;
}

/* Drops the labels no slice uses any more (readers and the depth pass leave some behind:
 * intermediate combinations, scratch marks), renumbers the rest in order, gives back the
 * growth slack and frees the hash (tp_track_label rebuilds it if a label is added later), so
 * a track whose slices all differ costs one 24-byte label per slice, not more. Label 0 stays
 * the all-zero one. map: num_labels entries, nonzero for each label a slice uses (finish_scan
 * marked them); it is overwritten and freed. TP_OK / TP_ENOMEM. */
static int labels_compact(struct tp_track *t, uint32_t *map)
{
	tp_free(t->label_slots);
	t->label_slots = NULL;
	t->num_label_slots = 0;
	t->label_last = 0;
	if (!t->num_labels) {
		tp_free(map);
		return TP_OK;
	}
	map[0] = 0;
	uint32_t n = 1; /* label 0 is kept */
	for (uint32_t i = 1; i < t->num_labels; i++)
		if (map[i]) {
			t->labels[n] = t->labels[i];
			map[i] = n++;
		}
	if (n < t->num_labels)
		for (size_t k = 0; k < t->count; k++)
			t->slices[k].label = map[t->slices[k].label];
	tp_free(map);
	t->num_labels = n;
	if (t->cap_labels > n) {
		struct tp_label *v = tp_realloc(t->labels, n * sizeof *v);
		if (v) {
			t->labels = v;
			t->cap_labels = n;
		}
	}
	return TP_OK;
}

/* One pass over a track's slices for what finish needs of each (the slices of a large profile
 * are far larger than the caches, and memory bandwidth is what two threads share): whether
 * they are in order (readers append in source order, so a PMU stream usually is and is then
 * not sorted), the labels they use (marked in map when not NULL) and their earliest start and
 * latest end. Returns 1 if in order. */
static int finish_scan(const struct tp_track *t, uint32_t *map, int64_t *lo, int64_t *hi)
{
	const struct tp_slice *s = t->slices;
	int in_order = 1;
	/* In locals: *lo and *hi sit in a job array whose neighbours other threads update. */
	int64_t l = *lo, h = *hi;
	for (size_t k = 0; k < t->count; k++) {
		int64_t e = tp_slice_end(t, &s[k]);
		if (s[k].start_ns < l)
			l = s[k].start_ns;
		if (e > h)
			h = e;
		if (map)
			map[s[k].label] = 1;
		if (k && in_order && slice_cmp(t, &s[k - 1], &s[k]) > 0)
			in_order = 0;
	}
	*lo = l;
	*hi = h;
	return in_order;
}

/* tp_profile_finish's work on one track: cost array to full length, sort, nesting depths,
 * labels compacted, and the track's earliest start / latest end. Touches only t (and, for
 * THREAD/HOST tracks, p's oom flag). */
struct finish_job {
	struct tp_profile *p;
	struct tp_track *t;
	int64_t lo, hi;
	int rc;
};

static void finish_track(struct finish_job *j)
{
	struct tp_profile *p = j->p;
	struct tp_track *t = j->t;
	j->lo = INT64_MAX;
	j->hi = INT64_MIN;
	j->rc = TP_ENOMEM;
	if (t->cost && t->cost_cap < t->count) {
		/* Slices pushed after the last cost entry have none. */
		if (tp_model_cost_grow(t) != TP_OK)
			return;
	}
	if (tp_model_lmem_fit(t) != TP_OK)
		return;
	/* The dictionary's hash is only for adding; a later tp_track_set_cost rebuilds it. */
	tp_free(t->cost_slots);
	t->cost_slots = NULL;
	t->num_cost_slots = 0;
	/* Nesting depths add labels, so a thread track's are marked after them. */
	int nest = t->kind == TP_TRACK_THREAD || t->kind == TP_TRACK_HOST;
	uint32_t *map = !nest && t->num_labels ? tp_calloc(t->num_labels, sizeof *map) : NULL;
	if (!nest && t->num_labels && !map)
		return;
	if (!finish_scan(t, map, &j->lo, &j->hi) && sort_track(t) != TP_OK) {
		tp_free(map);
		return;
	}
	if (nest) {
		/* Nesting depth from a stack of open ends. */
		int64_t stack[256];
		unsigned depth = 0;
		for (size_t k = 0; k < t->count; k++) {
			struct tp_slice *s = &t->slices[k];
			while (depth && stack[depth - 1] <= s->start_ns)
				depth--;
			if (tp_slice_set_depth(p, t, s, (uint8_t)(depth < 255 ? depth : 255)) !=
			    TP_OK) {
				tp_free(map);
				return;
			}
			if (depth < 256)
				stack[depth++] = tp_slice_end(t, s);
		}
		map = t->num_labels ? tp_calloc(t->num_labels, sizeof *map) : NULL;
		if (t->num_labels && !map)
			return;
		for (size_t k = 0; k < t->count; k++)
			map[t->slices[k].label] = 1;
	}
	if (labels_compact(t, map) != TP_OK)
		return;
	j->rc = TP_OK;
}

/* tp_par_run's call: finish_track on job k. */
static void finish_one(void *v, size_t k)
{
	finish_track(&((struct finish_job *)v)[k]);
}

/* The one note on strings cut at TP_PROFILE_MAX_STR: added by the first finish that sees a
 * cut, its count updated by a later one (a merge or a core filter finishes again). */
static int note_cuts(struct tp_profile *p)
{
	if (!p->strs_cut)
		return TP_OK;
	char buf[160];
	snprintf(buf, sizeof buf,
	         "%llu strings longer than %d bytes cut there in every output (names, "
	         "categories, values; each ends in \"" TP_PROFILE_CUT_MARK "\")",
	         (unsigned long long)p->strs_cut, TP_PROFILE_MAX_STR);
	if (p->strs_cut_note) {
		uint32_t id = tp_profile_str(p, buf);
		if (p->oom)
			return TP_ENOMEM;
		p->notes[p->strs_cut_note - 1].text = id;
		return TP_OK;
	}
	if (tp_profile_note(p, "%s", buf) != TP_OK)
		return TP_ENOMEM;
	p->strs_cut_note = p->num_notes;
	return TP_OK;
}

int tp_profile_finish(struct tp_profile *p)
{
	return tp_profile_finish_jobs(p, 1);
}

int tp_profile_finish_jobs(struct tp_profile *p, unsigned jobs)
{
	if (p->oom)
		return TP_ENOMEM;
	/* The growth slack of the per-tensor array (up to a third: millions of tensors on large
	 * dumps) is given back before analysis and the writers add their own (the layer table
	 * grows by chunks and has none to give back). */
	if (p->cap_tensors > p->num_tensors && p->num_tensors) {
		struct tp_tensor *t = tp_realloc(p->tensors, p->num_tensors * sizeof *t);
		if (t) {
			p->tensors = t;
			p->cap_tensors = p->num_tensors;
		}
	}
	int64_t lo = INT64_MAX, hi = INT64_MIN, dlo = INT64_MAX, dhi = INT64_MIN;
	/* One track per thread (tp_par_run; with one job, on this thread), unless a track needs
	 * nesting depths (their labels may set the profile's shared oom flag; captures and
	 * traces have few slices anyway). */
	int par = p->num_tracks > 1;
	for (size_t i = 0; i < p->num_tracks && par; i++)
		if (p->tracks[i].kind == TP_TRACK_THREAD || p->tracks[i].kind == TP_TRACK_HOST)
			par = 0;
	struct finish_job *fj = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *fj);
	if (!fj)
		return TP_ENOMEM;
	for (size_t i = 0; i < p->num_tracks; i++) {
		fj[i].p = p;
		fj[i].t = &p->tracks[i];
	}
	if (par)
		tp_par_run(jobs > 1 ? jobs : 1, p->num_tracks, finish_one, fj);
	int rc = TP_OK;
	for (size_t i = 0; i < p->num_tracks && rc == TP_OK; i++) {
		if (!par)
			finish_track(&fj[i]);
		rc = fj[i].rc;
		if (fj[i].lo < lo)
			lo = fj[i].lo;
		if (fj[i].hi > hi)
			hi = fj[i].hi;
		if (p->tracks[i].kind == TP_TRACK_THREAD || p->tracks[i].kind == TP_TRACK_HOST)
			continue;
		if (fj[i].lo < dlo)
			dlo = fj[i].lo;
		if (fj[i].hi > dhi)
			dhi = fj[i].hi;
	}
	tp_free(fj);
	if (rc != TP_OK)
		return rc;
	for (size_t i = 0; i < p->num_counters; i++) {
		struct tp_counter *c = &p->counters[i];
		for (size_t k = 1; k < c->count; k++)
			if (c->samples[k - 1].ts_ns > c->samples[k].ts_ns) {
				/* qsort is not stable; samples at equal times keep no promised
				 * order. */
				qsort(c->samples, c->count, sizeof *c->samples, sample_cmp);
				break;
			}
	}
	if (lo > hi)
		lo = hi = 0;
	p->span_begin_ns = lo;
	p->span_end_ns = hi;
	if (dlo > dhi)
		dlo = dhi = 0;
	p->device_begin_ns = dlo;
	p->device_end_ns = dhi;
	return note_cuts(p);
}

size_t tp_profile_slice_count(const struct tp_profile *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->num_tracks; i++)
		n += p->tracks[i].count;
	return n;
}

int tp_profile_drop_cores(struct tp_profile *p, int32_t keep)
{
	int32_t *map = tp_malloc((p->num_tracks + 1) * sizeof *map);
	if (!map)
		return TP_ENOMEM;
	size_t w = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		struct tp_track *t = &p->tracks[i];
		if (t->core >= keep && t->kind < TP_TRACK_LAYER) {
			tp_model_track_free(t);
			map[i] = -1;
			continue;
		}
		map[i] = (int32_t)w;
		p->tracks[w++] = *t;
	}
	int removed = (int)(p->num_tracks - w);
	p->num_tracks = w;
	size_t cw = 0;
	for (size_t i = 0; i < p->num_counters; i++) {
		struct tp_counter *c = &p->counters[i];
		if (c->track >= 0 && map[c->track] < 0) {
			tp_free(c->samples);
			continue;
		}
		if (c->track >= 0)
			c->track = map[c->track];
		p->counters[cw++] = *c;
	}
	p->num_counters = cw;
	tp_free(map);
	size_t vw = 0;
	for (size_t i = 0; i < p->vendor.num_rows; i++)
		if (p->vendor.rows[i].core < keep)
			p->vendor.rows[vw++] = p->vendor.rows[i];
	p->vendor.num_rows = vw;
	for (size_t i = 0; i < p->num_devices; i++)
		if (p->devices[i].num_cores > keep)
			p->devices[i].num_cores = keep;
	int rc = tp_profile_finish(p);
	return rc != TP_OK ? rc : removed;
}
