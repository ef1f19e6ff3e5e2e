/*
 * cdm_norm.c — the §8.2 normalisation of a cdm dump's tracks: id and timestamp unwrapping,
 * reordering, dropping the init records (per track, while a core file is read), then for the
 * whole device the CDMA alignment, the shift of every engine onto the TIU anchor, the zero of
 * the timeline and the conversion of raw cycles into the final fields (align_all).
 */
#include "common/timings.h"
#include "readers/sophgo/cdm/cdm_int.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- pipeline steps -------------------------------------------------------------------- */

/* Step 1: ids that fall from above 65000 to below 1000 wrapped their 16-bit counter. */
void cdm_unwrap_ids(struct cdm_rd *r, struct tp_track *t)
{
	uint32_t delta = 0, last = 0;
	for (size_t i = 0; i < t->count; i++) {
		uint32_t id = t->slices[i].cmd_id;
		if (i && cdm_id_wrapped(last, id)) {
			delta += 65536;
			r->id_wraps++;
		}
		last = id;
		t->slices[i].cmd_id = id + delta;
	}
}

/* The same rule over a command list (DYN_DATA ids are the firmware's 16-bit ids). */
void cdm_unwrap_cmd_ids(struct cdm_cmds *l)
{
	uint32_t delta = 0, last = 0;
	for (size_t i = 0; i < l->n; i++) {
		uint32_t id = l->v[i].id;
		if (i && cdm_id_wrapped(last, id))
			delta += 65536;
		last = id;
		l->v[i].id = id + delta;
	}
}

/* Step 2. TIU/GDMA/SDMA: a start more than 2^31 cycles before the previous end is a counter
 * wrap; CDMA: only when start and end both went back. */
void cdm_unwrap_times(struct cdm_rd *r, struct tp_track *t, int cdma)
{
	int64_t off = 0, prev_s = 0, prev_e = 0;
	for (size_t i = 0; i < t->count; i++) {
		struct tp_slice *s = &t->slices[i];
		int64_t st = s->start_ns + off, en = tp_slice_end(t, s) + off;
		if (i) {
			int back = cdma ? (prev_s - st > CDM_WRAP / 2 && prev_e - en > CDM_WRAP / 2)
			                : cdm_ts_wrapped(prev_e, st);
			if (back) {
				off += CDM_WRAP;
				st += CDM_WRAP;
				en += CDM_WRAP;
				r->ts_wraps++;
			}
		}
		if (en < st)
			en += CDM_WRAP;
		s->start_ns = st;
		tp_slice_set_end(r->p, t, s, en);
		prev_s = st;
		prev_e = en;
	}
}

/* Step 3: the two threads of SDMA/CDMA retire out of order; put a record back before its
 * predecessor when its id is smaller and the predecessor ran on thread 1, or when the
 * predecessor's id is exactly one larger. */
void cdm_reorder(struct cdm_rd *r, struct tp_track *t)
{
	for (size_t i = 1; i < t->count; i++) {
		struct tp_slice *a = &t->slices[i - 1], *b = &t->slices[i];
		if (b->cmd_id < a->cmd_id &&
		    (tp_slice_depth(t, a) == 1 || (a->cmd_id == b->cmd_id + 1 && b->cmd_id != 0))) {
			struct tp_slice x = *a;
			*a = *b;
			*b = x;
			r->reordered++;
		}
	}
}

void cdm_engine_head(struct cdm_rd *r, size_t core, int e, size_t n, const int64_t *end1)
{
	struct cdm_core_info *ci = &r->ci[core];
	uint64_t want = r->g.rec[core < CDM_MAX_CORES ? core : 0][e];
	if (want && want - 1 != n)
		cdm_note(r, "%s: %zu %s PMU records, global.profile says %llu", r->cores[core], n,
		         tp_track_kind_name(r->p->tracks[ci->track[e]].kind),
		         (unsigned long long)(want - 1));
	/* The first two records are the init handshake (GDMA send -> TIU wait). */
	if (!end1)
		return;
	ci->init_end[e] = *end1;
	ci->have_init[e] = 1;
	if (e == CDM_TIU) {
		ci->anchor = *end1;
		ci->have_anchor = 1;
	}
}

void cdm_drop_front(struct cdm_rd *r, struct tp_track *t, size_t n)
{
	if (n > t->count)
		n = t->count;
	if (n == 0)
		return;
	memmove(t->slices, t->slices + n, (t->count - n) * sizeof *t->slices);
	t->count -= n;
	CDM_RSTATS(r)->records_dropped += n;
}

/* ---- whole-device steps ---------------------------------------------------------------- */

static void shift_track(struct tp_profile *p, int t, int64_t by)
{
	if (t < 0 || by == 0)
		return;
	struct tp_track *tr = &p->tracks[t];
	for (size_t i = 0; i < tr->count; i++)
		tr->slices[i].start_ns -= by; /* the end moves with the start */
}

/* Step 5: each CDMA port onto its owner's first SDMA record (a vSDMA send). */
static int align_cdma(struct cdm_rd *r)
{
	int used_sdma = -1;
	for (unsigned port = 0; port < CDM_MAX_PORTS; port++) {
		struct cdm_port_info *pi = &r->port[port];
		if (pi->track < 0)
			continue;
		struct tp_track *tr = &r->p->tracks[pi->track];
		int st = r->ci[pi->owner].track[CDM_SDMA];
		if (tr->count && st >= 0 && r->p->tracks[st].count) {
			int64_t off = tp_slice_end(tr, &tr->slices[0]) -
			              tp_slice_end(&r->p->tracks[st], &r->p->tracks[st].slices[0]);
			shift_track(r->p, pi->track, off);
			used_sdma = st;
		} else if (tr->count) {
			tp_profile_note(r->p,
			                "CDMA port %u: core %d has no SDMA record to align with; "
			                "left on its own clock",
			                port, pi->owner);
		}
		cdm_drop_front(r, tr, 2);
		/* CDMA ids start at 1 (§4.4); the commands of the port follow its 2 init records.
		 */
		struct cdm_cmds *l = &pi->cmds;
		size_t k = l->n < 2 ? l->n : 2;
		if (l->n) {
			memmove(l->v, l->v + k, (l->n - k) * sizeof *l->v);
			l->n -= k;
		}
		cdm_unwrap_cmd_ids(l);
		uint64_t ub = 0;
		int rc = cdm_match(r, pi->track, l, &pi->unmatched, &ub, NULL, NULL);
		if (rc)
			return rc;
	}
	if (used_sdma >= 0)
		cdm_drop_front(r, &r->p->tracks[used_sdma], 1);
	return TP_OK;
}

static int all_tracks_of(struct cdm_rd *r, size_t core, int *out)
{
	int n = 0;
	for (int e = 0; e < 3; e++)
		if (r->ci[core].track[e] >= 0)
			out[n++] = r->ci[core].track[e];
	for (unsigned port = 0; port < CDM_MAX_PORTS; port++)
		if (r->port[port].track >= 0 && r->port[port].owner == (int)core)
			out[n++] = r->port[port].track;
	return n;
}

static void finalize_track(struct tp_profile *p, struct tp_track *t, int64_t zero)
{
	double mhz = t->freq_mhz;
	for (size_t i = 0; i < t->count; i++) {
		struct tp_slice *s = &t->slices[i];
		int64_t cs = s->start_ns - zero, ce = tp_slice_end(t, s) - zero;
		uint64_t cyc = (uint64_t)(ce - cs) + 1;
		tp_slice_set_start_cycle(p, t, s, (uint64_t)cs);
		s->cycles = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
		s->start_ns = tp_cycles_to_ns((uint64_t)cs, mhz);
		tp_slice_set_end(p, t, s, tp_cycles_to_ns((uint64_t)ce, mhz));
		/* "Cmd Id" = inst_id + 1, except CDMA whose ids already start at 1 (§8.3). */
		if (t->kind != TP_TRACK_CDMA)
			s->cmd_id += 1;
		tp_slice_set_depth(p, t, s, 0);
	}
}

int cdm_set_meta_i64(struct cdm_rd *r, const char *k, long long v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", v);
	return tp_profile_set_meta(r->p, k, buf);
}

/* tp_par_run's calls of align_all: step 0 shifts track k (step 6) and finds its first start
 * and last end; step 1 is core k's vendor timeline; step 2 finalizes track k at `zero` and
 * omits its leading and trailing sys commands (steps 7-9). Each touches only its own track
 * or core (and p->oom). */
struct track_par {
	struct cdm_rd *r;
	int step;
	int64_t zero;
	int64_t *shift, *lo, *hi; /* per track */
	size_t *omitted;          /* per track */
};

static void track_par_one(void *v, size_t k)
{
	struct track_par *a = v;
	struct tp_profile *p = a->r->p;
	if (a->step == 1) {
		cdm_vendor_timeline(a->r, k, a->lo, a->hi);
		return;
	}
	struct tp_track *x = &p->tracks[k];
	if (a->step == 2) {
		finalize_track(p, x, a->zero);
		a->omitted[k] = cdm_omit_sys(x);
		return;
	}
	/* One pass: the slices of a large dump are far larger than the caches. */
	int64_t lo = INT64_MAX, hi = INT64_MIN, by = a->shift[k];
	for (size_t i = 0; i < x->count; i++) {
		struct tp_slice *s = &x->slices[i];
		if (by) /* the end moves with the start; an unshifted track is only read */
			s->start_ns -= by;
		if (s->start_ns < lo)
			lo = s->start_ns;
		if (tp_slice_end(x, s) > hi)
			hi = tp_slice_end(x, s);
	}
	a->lo[k] = lo;
	a->hi[k] = hi;
}

/* Steps 6-9 plus the notes about them. */
int cdm_align_all(struct cdm_rd *r)
{
	int rc = align_cdma(r);
	if (rc)
		return rc;
	size_t ref = r->ncores;
	for (size_t c = 0; c < r->ncores && ref == r->ncores; c++)
		if (r->ci[c].have_anchor)
			ref = c;
	size_t nt = r->p->num_tracks;
	struct track_par a = {.r = r,
	                      .shift = tp_calloc(nt + 1, sizeof *a.shift),
	                      .lo = tp_malloc((nt + 1) * sizeof *a.lo),
	                      .hi = tp_malloc((nt + 1) * sizeof *a.hi),
	                      .omitted = tp_calloc(nt + 1, sizeof *a.omitted)};
	if (!a.shift || !a.lo || !a.hi || !a.omitted) {
		rc = cdm_nomem(r);
		goto out;
	}
	int tr[3 + CDM_MAX_PORTS];
	if (ref < r->ncores)
		for (size_t c = 0; c < r->ncores; c++) {
			if (!r->ci[c].have_anchor)
				continue;
			int n = all_tracks_of(r, c, tr);
			for (int i = 0; i < n; i++)
				a.shift[tr[i]] = r->ci[c].anchor - r->ci[ref].anchor;
		}
	/* Per track at once: the shift, then each track's first start and last end. */
	a.step = 0;
	tp_tm_begin("shift");
	tp_par_run(r->jobs, nt, track_par_one, &a);
	tp_tm_end();
	int64_t zero = INT64_MAX, tail = INT64_MIN;
	for (size_t t = 0; t < nt; t++) {
		zero = a.lo[t] < zero ? a.lo[t] : zero;
		tail = a.hi[t] > tail ? a.hi[t] : tail;
	}
	if (zero == INT64_MAX)
		zero = tail = 0;
	/* The vendor's timeline, for its figures (vendor_rows): per core at once (each writes
	 * only its core_info). */
	a.step = 1;
	tp_tm_begin("timeline");
	tp_par_run(r->jobs, r->ncores, track_par_one, &a);
	tp_tm_end();
	if ((rc = cdm_set_meta_i64(r, "pmu_tail_cycle", (long long)(tail - zero))) != TP_OK) {
		rc = cdm_nomem(r);
		goto out;
	}
	a.step = 2;
	a.zero = zero;
	tp_tm_begin("finalize");
	tp_par_run(r->jobs, nt, track_par_one, &a);
	tp_tm_end();
	for (size_t t = 0; t < nt; t++) {
		r->sys_omitted += a.omitted[t];
		r->p->stats.records_dropped += a.omitted[t];
	}
	if (r->p->oom)
		rc = cdm_nomem(r);
out:
	TP_FREE_ALL(a.shift, a.lo, a.hi, a.omitted);
	return rc;
}
