/*
 * cdm_cores.c — reading the core files of a cdm dump: each cdmlib*.profile is walked, its PMU
 * records become slices (fill_track), normalised per track and matched to their commands; with
 * --jobs the cores are read on the threads (tp_par_run), a core without argument sets one job
 * per engine (its large TIU and GDMA engines one job per part, cdm_eparts.c), on copies of the
 * reader whose notes, statistics and errors are applied afterwards in core and engine order,
 * so the profile is the same for every thread count.
 * Also the CDMA port files (read_cdma).
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

/* ---- files ----------------------------------------------------------------------------- */

static const enum tp_track_kind kind_of[CDM_NENG] = {TP_TRACK_TIU, TP_TRACK_GDMA, TP_TRACK_SDMA,
                                                     TP_TRACK_CDMA};

static int fill_track(struct cdm_rd *r, int t, const uint8_t *data, const struct cdm_walk *w,
                      int eng)
{
	size_t total = 0;
	for (size_t k = 0; k < w->npmu; k++)
		if (w->pmu[k].engine == eng)
			total += w->pmu[k].count;
	if (tp_track_reserve(r->p, t, total) != TP_OK)
		return cdm_nomem(r);
	/* GDMA/SDMA slices carry their record's position (+1) in args until cdm_apply_cmd reads the
	 * PMU counters for their argument set (detail with table-decoded descriptors only). */
	int stash = r->detail && r->dec && (eng == CDM_GDMA || eng == CDM_SDMA);
	uint32_t pos = 0;
	struct tp_part pt;
	tp_part_open(&pt, r->p, t, 0, total, 1);
	for (size_t k = 0; k < w->npmu; k++) {
		if (w->pmu[k].engine != eng)
			continue;
		for (size_t i = 0; i < w->pmu[k].count; i++) {
			struct cdm_pmu m;
			cdm_pmu_decode(data, &w->pmu[k], i, &m);
			struct tp_slice *s = tp_track_push(r->p, t);
			if (!s)
				return cdm_nomem(r);
			pos++;
			if (stash)
				s->args = pos;
			s->start_ns = m.start;
			tp_slice_set_end(r->p, &r->p->tracks[t], s, m.end);
			s->cmd_id = m.id;
			cdm_fill_label(&pt, s, &m);
		}
	}
	CDM_RSTATS(r)->records_read += total;
	return TP_OK;
}

/* Opens core file cr->core and walks it on `threads` threads (any thread: errors go to d). */
static int core_open(const struct cdm_rd *r, struct cdm_core_read *cr, unsigned threads,
                     struct tp_diag *d)
{
	cr->path = tp_path_join(r->dir, r->cores[cr->core]);
	if (!cr->path)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", r->dir);
	int rc = tp_file_load(&cr->f, cr->path, d);
	if (rc)
		return rc;
	cr->loaded = 1;
	rc = cdm_walk_jobs(cr->f.data, cr->f.size, cr->path, r->chip, r->dec, threads, r->part,
	                   &cr->w, d);
	cr->walked = rc == TP_OK;
	return rc;
}

/* Buffer b of core file cr given back: the file (0), or one of its walk's command lists (1 to
 * 4: DYN_DATA's by engine, 5 to 8: the descriptor streams'). Each is a job of STEP_CLOSE:
 * they are most of what a core holds. */
#define CORE_BUFS (1 + 2 * CDM_NENG)
static void core_release(struct cdm_core_read *cr, int b)
{
	if (b == 0) {
		if (cr->loaded)
			tp_file_release(&cr->f);
		cr->loaded = 0;
		return;
	}
	struct cdm_cmds *l = b <= CDM_NENG ? &cr->w.dyn[b - 1] : &cr->w.des[b - 1 - CDM_NENG];
	tp_free(l->v);
	memset(l, 0, sizeof *l);
}

static void core_close(struct cdm_core_read *cr)
{
	if (cr->walked)
		cdm_walk_free(&cr->w);
	if (cr->loaded)
		tp_file_release(&cr->f);
	tp_free(cr->path);
	sg_aside_free(&cr->aside);
	TP_FREE_ALL(cr->seen, cr->first, cr->cache, cr->used, cr->map);
	memset(cr, 0, sizeof *cr);
}

/* What a walked core file says before its records are read: statistics, notes, its command
 * source, whether it keeps argument sets; creates its TIU / GDMA / SDMA tracks. Calling
 * thread, core order (r->job = cr). */
static int core_setup(struct cdm_rd *r, struct cdm_core_read *cr)
{
	const struct cdm_walk *w = &cr->w;
	size_t core = cr->core;
	CDM_RSTATS(r)->files_read++;
	CDM_RSTATS(r)->blocks_read += w->blocks_read;
	CDM_RSTATS(r)->blocks_skipped += w->blocks_skipped;
	size_t *have = cr->have;
	for (size_t k = 0; k < w->npmu; k++)
		have[w->pmu[k].engine] += w->pmu[k].count;
	/* Argument sets: always with DETAIL_ON, never with OFF, and by default while the core
	 * file holds at most TP_BMPROFILE_DETAIL_AUTO_LIMIT records. */
	cr->detail =
	    r->detail_opt == TP_BMPROFILE_DETAIL_ON ||
	    (r->detail_opt == TP_BMPROFILE_DETAIL_AUTO &&
	     have[CDM_TIU] + have[CDM_GDMA] + have[CDM_SDMA] <= TP_BMPROFILE_DETAIL_AUTO_LIMIT);
	if (!cr->detail) {
		cr->keyed = 1;
		if (!(cr->seen = tp_calloc((1u << CDM_NAME_CACHE_BITS) / 8, 1)))
			return cdm_nomem(r);
	}
	if (have[CDM_CDMA])
		cdm_note(
		    r,
		    "%s: MONITOR_CDMA blocks in a core file were skipped (CDMA PMU records come "
		    "from cdma*_N.profile)",
		    r->cores[core]);
	/* 3 = the bmodel's descriptor streams (also without the "bmodel" line), 2 = DYN_EXTRA,
	 * 1 = DYN_DATA, 0 = PMU only. */
	cr->cmode = w->have_des && r->g.bmodel ? 3
	            : w->have_extra            ? 2
	            : w->have_dyn              ? 1
	            : w->have_des              ? 3
	                                       : 0;
	if (cr->cmode > r->mode)
		r->mode = cr->cmode;
	cr->mode = r->mode;
	if (w->dyn_v2)
		cdm_note(
		    r,
		    "%s: DYN_DATA is in the unverified layout v2 (bigTpuProfile 0.3.x); command "
		    "names were not read, the PMU timing was",
		    r->cores[core]);
	if (w->partial_bytes)
		cdm_note(r, "%s: %llu bytes of partial records at block ends were ignored",
		         r->cores[core], (unsigned long long)w->partial_bytes);
	if (w->des_kv_blocks)
		cdm_note(r, "%s: %llu BLOCK_DES_KV blocks (DES-mode dispatch) are not decoded",
		         r->cores[core], (unsigned long long)w->des_kv_blocks);
	for (int e = 0; e < CDM_NENG; e++)
		if (w->des_stop_off[e]) {
			r->des_unknown++;
			cdm_note(
			    r,
			    "%s@0x%llx: descriptor decoding stopped at a header the BM1690 table "
			    "does not know; later commands are unnamed",
			    r->cores[core], (unsigned long long)w->des_stop_off[e]);
		}
	struct cdm_core_info *ci = &r->ci[core];
	for (int e = 0; e < 3; e++) {
		ci->track[e] = -1;
		if (!have[e] && !(e < 2 && (have[CDM_TIU] || have[CDM_GDMA])))
			continue;
		char name[16];
		snprintf(name, sizeof name, "%s", tp_track_kind_name(kind_of[e]));
		int t = tp_profile_add_track(r->p, r->device, (int32_t)core, kind_of[e], name,
		                             e == CDM_TIU ? r->tiu_mhz : r->dma_mhz);
		if (t < 0)
			return cdm_nomem(r);
		ci->track[e] = t;
	}
	return TP_OK;
}

/* Reads engine e's PMU records of core cr->core onto its track (core_setup made it), steps
 * 1-4 of the pipeline and the commands (§8.3). Touches only that track, its entries of the
 * core_info and r->job: any thread may run it, on a copy of the reader with r->job (cr, or
 * the engine's own record of a keyed core: engine_open), r->d, r->detail and r->mode the
 * core's. */
static int core_engine(struct cdm_rd *r, struct cdm_core_read *cr, int e)
{
	struct cdm_walk *w = &cr->w;
	size_t core = cr->core;
	struct cdm_core_info *ci = &r->ci[core];
	int t = ci->track[e];
	if (t < 0)
		return TP_OK;
	int rc = fill_track(r, t, cr->f.data, w, e);
	if (rc)
		return rc;
	struct tp_track *tr = &r->p->tracks[t];
	cdm_unwrap_ids(r, tr);
	cdm_unwrap_times(r, tr, 0);
	if (e == CDM_SDMA)
		cdm_reorder(r, tr);
	int64_t end1 = tr->count >= 2 ? tp_slice_end(tr, &tr->slices[1]) : 0;
	cdm_engine_head(r, core, e, tr->count, tr->count >= 2 ? &end1 : NULL);
	cdm_drop_front(r, tr, 2);
	size_t k;
	struct cdm_cmds *cmds = cdm_engine_cmds(w, cr->cmode, e, &k);
	if (cmds && cr->cmode != 3) { /* DYN_DATA's: its init sync dropped, its ids unwrapped */
		if (k) {
			memmove(cmds->v, cmds->v + k, (cmds->n - k) * sizeof *cmds->v);
			cmds->n -= k;
		}
		cdm_unwrap_cmd_ids(cmds);
	}
	struct cdm_cmds none = {0};
	return cdm_match(r, t, cmds ? cmds : &none, &ci->unmatched[e], &ci->unmatched_bytes[e],
	                 cr->f.data, w);
}

/* What follows a core's engines (r->job = cr): the note on a missing init handshake, the
 * report of an allocation that failed in set_names. */
static int core_records_end(struct cdm_rd *r, struct cdm_core_read *cr)
{
	if (!r->ci[cr->core].have_anchor && (cr->have[CDM_TIU] || cr->have[CDM_GDMA]))
		cdm_note(
		    r,
		    "%s: fewer than 2 TIU PMU records: no init handshake, the core is not aligned "
		    "with the others",
		    r->cores[cr->core]);
	if (cr->aside.oom)
		return cdm_nomem(r);
	return TP_OK;
}

/* Reads the records of core cr->core onto its tracks, engine by engine (core_engine). */
static int core_records(struct cdm_rd *r, struct cdm_core_read *cr)
{
	for (int e = 0; e < 3; e++) {
		int rc = core_engine(r, cr, e);
		if (rc)
			return rc;
	}
	return core_records_end(r, cr);
}

/* Interns the names a keyed core's commands need, in the order set_names would have at their
 * first use (the core's TIU, GDMA, SDMA records in order). Calling thread, core order. */
static void core_names(struct cdm_rd *r, struct cdm_core_read *cr)
{
	for (size_t i = 0; i < cr->nfirst; i++)
		cdm_cached_names(r, cdm_name_key(&cr->first[i]), &cr->first[i]);
}

/* Gives the slices of engine e's track of core cr->core their names (core_names or
 * core_scratch_in filled the name cache): each label of the track maps to the label with the
 * key's names, then every slice follows the map; with argument sets, the slices' set ids
 * follow the room read_cores reserved. Reads the name cache, writes the track: any thread. */
static int relabel_track(struct cdm_rd *r, const struct cdm_core_read *cr, int e)
{
	int t = r->ci[cr->core].track[e];
	if (t < 0)
		return TP_OK;
	struct tp_track *tr = &r->p->tracks[t];
	uint32_t n = tr->num_labels;
	uint32_t *map = tp_malloc((size_t)n * sizeof *map);
	if (!map)
		return TP_ENOMEM;
	/* Every slice's label holds a key now (match gave each slice its command); labels no
	 * slice uses any more (fill_track's, name 0) map to something unused. */
	for (uint32_t i = 0; i < n; i++) {
		struct tp_label l = tr->labels[i];
		const uint32_t *names = r->cache[l.name & ((1u << CDM_NAME_CACHE_BITS) - 1)];
		l.name = names[0];
		l.type = names[1];
		if (tp_track_label(tr, &l, &map[i]) != TP_OK) {
			tp_free(map);
			return TP_ENOMEM;
		}
	}
	for (size_t k = 0; k < tr->count; k++)
		tr->slices[k].label = map[tr->slices[k].label];
	tp_free(map);
	/* A worker's argument sets (ids in its scratch profile). */
	for (size_t k = 0; cr->ap && k < tr->count; k++)
		if (tr->slices[k].args)
			tr->slices[k].args = cr->set0 + tr->slices[k].args - 1;
	return TP_OK;
}

/* Gives a core's slices their names and moves its argument sets in (relabel_track for each
 * engine, then tp_args_copy_in). */
static int core_relabel(struct cdm_rd *r, struct cdm_core_read *cr)
{
	for (int e = 0; e < 3; e++)
		if (relabel_track(r, cr, e) != TP_OK)
			return TP_ENOMEM;
	if (cr->ap)
		tp_args_copy_in(r->p, cr->set0, cr->arg0, cr->ap, cr->map);
	return TP_OK;
}

/* A core with detail read on a worker, on the calling thread in core order: its strings
 * into the profile (those of its names into the name cache, at their keys' first use) and
 * room for its argument sets. */
static int core_scratch_in(struct cdm_rd *r, struct cdm_core_read *cr)
{
	if (cr->ap->oom || !(cr->map = tp_profile_str_map(r->p, cr->ap)))
		return cdm_nomem(r);
	for (size_t i = 0; i < cr->nused; i++) {
		uint32_t key = cr->used[i];
		if (!r->cache[key][0]) {
			r->cache[key][0] = cr->map[cr->cache[key][0]];
			r->cache[key][1] = cr->map[cr->cache[key][1]];
		}
	}
	if (tp_args_reserve(r->p, cr->ap, &cr->set0, &cr->arg0) != TP_OK)
		return cdm_nomem(r);
	return TP_OK;
}

/* Room in the profile's argument arrays for the sets of the wave's cores with detail and,
 * at their size per core, for those of the cores after them: growing the arrays core by
 * core would copy them each time (room never written costs address space only). */
static int wave_room(struct cdm_rd *r, const struct cdm_core_read *cr, size_t n, size_t left)
{
	size_t args = 0, sets = 0, m = 0;
	for (size_t k = 0; k < n; k++)
		if (cr[k].ap && !cr[k].rc) {
			args += cr[k].ap->num_args;
			sets += cr[k].ap->num_argsets - 1;
			m++;
		}
	if (!m || args / m > (SIZE_MAX / 4) / left)
		return TP_OK;
	return tp_args_room(r->p, args / m * left, sets / m * left) == TP_OK ? TP_OK : cdm_nomem(r);
}

/* One call of a read_cores step: core k of the wave, whole (e < 0) or, in STEP_RECORDS and
 * STEP_RELABEL of a keyed core, its engine e alone, so that the threads share a wave of fewer
 * cores than --jobs (sg_wave bounds the cores in flight by memory); in STEP_RECORDS and the
 * parts' own steps part q (>= 0) of an engine read in parts; in STEP_CLOSE buffer e of the
 * core (core_release). */
struct cores_job {
	uint32_t k;
	int e;
	int32_t q;
};

enum { STEP_OPEN, STEP_RECORDS, STEP_RELABEL, STEP_CLOSE, STEP_COUNT, STEP_COMMIT };

/* tp_par_run's calls of read_cores: STEP_OPEN opens and walks a core's file, STEP_RECORDS reads
 * its records, STEP_RELABEL relabels them, STEP_CLOSE gives its large buffers back (the
 * calling thread then closes it, core_close); the reading steps each on a copy of the reader
 * whose notes, statistics and errors stay in the core's struct cdm_core_read, or an engine's
 * (eng[3 k + e]: its notes, statistics, first commands and counters, merged into the core's by
 * engines_merge). An engine read in parts (ep[2 k + e]) has STEP_COUNT before STEP_RECORDS
 * and STEP_COMMIT after. */
struct cores_par {
	struct cdm_rd *r;
	struct cdm_core_read *cr;
	struct cdm_core_read *eng;   /* 3 per core of a wave */
	struct cdm_eparts *ep;       /* 2 per core of a wave: TIU, GDMA */
	struct tp_profile **scratch; /* per core of a wave, reused */
	const struct cores_job *job;
	int step;
	unsigned
	    inner; /* STEP_OPEN: threads each core's walk may use (--jobs over the wave's cores) */
};

/* Core k of the wave with detail: its scratch profile (emptied) and name cache. */
static int scratch_open(struct cores_par *a, size_t k)
{
	struct cdm_core_read *cr = &a->cr[k];
	struct tp_profile **sp = &a->scratch[k];
	if (*sp && tp_args_clear(*sp) != TP_OK) {
		tp_profile_free(*sp);
		*sp = NULL;
	}
	if (!*sp)
		*sp = tp_profile_new();
	cr->ap = *sp;
	cr->cache = tp_calloc((size_t)1 << CDM_NAME_CACHE_BITS, sizeof *cr->cache);
	return cr->ap && cr->cache ? TP_OK : TP_ENOMEM;
}

/* The record an engine of a keyed core is read into in STEP_RECORDS: keyed, its own seen bitmap. */
static int engine_open(struct cdm_core_read *x, const struct cdm_core_read *cr)
{
	memset(x, 0, sizeof *x);
	x->core = cr->core;
	x->keyed = 1;
	x->seen = tp_calloc((1u << CDM_NAME_CACHE_BITS) / 8, 1);
	return x->seen ? TP_OK : TP_ENOMEM;
}

static void engine_close(const struct cdm_rd *r, struct cdm_core_read *x)
{
	cdm_keys_free(r, x->keys);
	sg_aside_free(&x->aside);
	TP_FREE_ALL(x->seen, x->first);
	memset(x, 0, sizeof *x);
}

/* STEP_RECORDS or STEP_RELABEL of core cr (engine e, or all when e < 0) on the reader copy rk, into
 * x (cr, or the engine's record). */
static void cores_step(struct cores_par *a, struct cdm_rd *rk, struct cdm_core_read *cr,
                       struct cdm_core_read *x, int e)
{
	rk->job = x;
	rk->d = &x->d;
	if (a->step == STEP_RELABEL) {
		int rc = e < 0 ? core_relabel(rk, cr) : relabel_track(rk, cr, e);
		if (rc != TP_OK)
			x->rc = cdm_nomem(rk);
		return;
	}
	x->rc = e < 0 ? core_records(rk, cr) : core_engine(rk, cr, e);
	memcpy(x->keys, rk->keys, sizeof x->keys);
	x->id_wraps = rk->id_wraps;
	x->ts_wraps = rk->ts_wraps;
	x->reordered = rk->reordered;
}

/* The reader as the records of core cr are read on a worker: its own name keys, counters
 * and PMU lookup, the core's detail and command mode. */
static struct cdm_rd reader_for(const struct cdm_rd *r, const struct cdm_core_read *cr)
{
	struct cdm_rd rk = *r;
	if (cr->ap)
		rk.ap = cr->ap;
	memset(rk.keys, 0, sizeof rk.keys);
	rk.detail = cr->detail;
	rk.mode = cr->mode;
	rk.pmu_w = NULL;
	rk.id_wraps = rk.ts_wraps = rk.reordered = 0;
	return rk;
}

/* Part q of engine e of core k of the wave, in the parts' steps (cdm_eparts.c). */
static void part_step(struct cores_par *a, size_t k, int e, size_t q)
{
	struct cdm_eparts *ep = &a->ep[2 * k + (size_t)e];
	if (a->step == STEP_COUNT) {
		cdm_epart_count(ep, q);
	} else if (a->step == STEP_COMMIT) {
		cdm_epart_commit(ep, q);
	} else {
		struct cdm_rd rk = reader_for(a->r, &a->cr[k]);
		rk.d = &ep->v[q].x.d;
		ep->v[q].rc = cdm_epart_fill(&rk, ep, q);
	}
}

static void cores_par_one(void *v, size_t i)
{
	struct cores_par *a = v;
	size_t k = a->job[i].k;
	int e = a->job[i].e;
	struct cdm_core_read *cr = &a->cr[k];
	if (a->step == STEP_OPEN) {
		cr->rc = core_open(a->r, cr, a->inner, &cr->d);
		return;
	}
	if (a->step == STEP_CLOSE) {
		core_release(cr, e);
		return;
	}
	if (a->job[i].q >= 0) {
		part_step(a, k, e, (size_t)a->job[i].q);
		return;
	}
	if (cr->rc)
		return;
	struct cdm_core_read *x = e < 0 ? cr : &a->eng[3 * k + (size_t)e];
	if (a->step == STEP_RECORDS && x != cr && engine_open(x, cr) != TP_OK) {
		x->rc = cdm_nomem(&(struct cdm_rd){.dir = a->r->dir, .d = &x->d});
		return;
	}
	if (a->step == STEP_RECORDS && !cr->keyed && scratch_open(a, k) != TP_OK) {
		cr->rc = cdm_nomem(&(struct cdm_rd){.dir = a->r->dir, .d = &cr->d});
		return;
	}
	struct cdm_rd rk = reader_for(a->r, cr);
	cores_step(a, &rk, cr, x, e);
}

/* A keyed core read engine by engine (STEP_RECORDS), on the calling thread: the first error in
 * engine order, or the engines' notes, statistics and counters and their first commands in
 * engine order (set_names keys include the engine, so no key is first in two engines), as
 * core_records would have left them in the core's record. */
static void engines_merge(struct cdm_rd *r, struct cdm_core_read *cr, struct cdm_core_read *x)
{
	for (int e = 0; e < 3; e++)
		if (x[e].rc) {
			cr->d = x[e].d;
			cr->rc = x[e].rc;
			return;
		}
	size_t n = x[0].nfirst + x[1].nfirst + x[2].nfirst;
	struct cdm_cmd *v = tp_grow(cr->first, sizeof *v, n ? n : 1, &cr->cap_first);
	if (v)
		cr->first = v;
	for (int e = 0; e < 3; e++) {
		if (v && x[e].nfirst)
			memcpy(v + cr->nfirst, x[e].first, x[e].nfirst * sizeof *v);
		cr->nfirst += v ? x[e].nfirst : 0;
		sg_aside_move(&cr->aside, &x[e].aside);
		cr->id_wraps += x[e].id_wraps;
		cr->ts_wraps += x[e].ts_wraps;
		cr->reordered += x[e].reordered;
	}
	if (!v)
		cr->aside.oom = 1;
	struct cdm_rd rk = *r;
	rk.job = cr;
	rk.d = &cr->d;
	cr->rc = core_records_end(&rk, cr);
}

/* The parts of engine e of core k of the wave: 0 when it is read whole. */
static size_t parts_of(const struct cores_par *a, size_t k, int e)
{
	return a->ep && e >= 0 && e < 2 ? a->ep[2 * k + (size_t)e].np : 0;
}

/* A job's PMU records: a part's, an engine's, or the core's for a whole-core job. */
static size_t job_records(const struct cores_par *a, const struct cores_job *j)
{
	if (j->q >= 0) {
		const struct cdm_epart *x = &a->ep[2 * j->k + (size_t)j->e].v[j->q];
		return x->b - x->a;
	}
	const size_t *h = a->cr[j->k].have;
	return j->e >= 0 ? h[j->e] : h[CDM_TIU] + h[CDM_GDMA] + h[CDM_SDMA] + h[CDM_CDMA];
}

/* The calls of a step over the wave's n cores: a keyed core's STEP_RECORDS and STEP_RELABEL by
 * engine, and in STEP_RECORDS an engine read in parts by part; the parts' own steps only the
 * parts; STEP_CLOSE each core's CORE_BUFS buffers. STEP_RECORDS and STEP_RELABEL jobs go largest
 * first (by PMU records; tp_par_run hands them out in order), so that the wave does not end on a
 * large engine started last while the other threads wait. */
static size_t cores_jobs(struct cores_job *job, const struct cores_par *a, size_t n, int step)
{
	int whole = step == STEP_OPEN;
	int parts_only = step == STEP_COUNT || step == STEP_COMMIT;
	size_t m = 0;
	for (size_t k = 0; k < n; k++) {
		for (int b = 0; step == STEP_CLOSE && b < CORE_BUFS; b++)
			job[m++] = (struct cores_job){.k = (uint32_t)k, .e = b, .q = -1};
		if (step == STEP_CLOSE)
			continue;
		if (whole || !a->cr[k].keyed) {
			if (!parts_only)
				job[m++] = (struct cores_job){.k = (uint32_t)k, .e = -1, .q = -1};
			continue;
		}
		for (int e = 0; e < 3; e++) {
			size_t np = step == STEP_RELABEL ? 0 : parts_of(a, k, e);
			if (!np && !parts_only)
				job[m++] = (struct cores_job){.k = (uint32_t)k, .e = e, .q = -1};
			for (size_t q = 0; q < np; q++)
				job[m++] =
				    (struct cores_job){.k = (uint32_t)k, .e = e, .q = (int32_t)q};
		}
	}
	if (step != STEP_RECORDS && step != STEP_RELABEL)
		return m;
	for (size_t i = 1; i < m; i++) { /* a stable insertion sort: a few jobs per thread */
		struct cores_job x = job[i];
		size_t w = job_records(a, &x), j = i;
		for (; j > 0 && job_records(a, &job[j - 1]) < w; j--)
			job[j] = job[j - 1];
		job[j] = x;
	}
	return m;
}

/* Each core file's working memory while it is read, for sg_wave: its mapping, its walk (about
 * as large) and with argument sets their scratch copy, about twice the file in all. A file
 * that cannot be read counts 0 (opening it reports why). */
static uint64_t *cores_est(const struct cdm_rd *r)
{
	uint64_t *est = tp_calloc(r->ncores ? r->ncores : 1, sizeof *est);
	for (size_t k = 0; est && k < r->ncores; k++) {
		char *path = tp_path_join(r->dir, r->cores[k]);
		struct stat st;
		if (path && stat(path, &st) == 0 && st.st_size > 0)
			est[k] = 2 * (uint64_t)st.st_size;
		tp_free(path);
	}
	return est;
}

/* CDMA commands ride in the owner core's DYN_DATA, one list per port (§8.2 step 5): the
 * wave's n cores', in core order. Calling thread. */
static int wave_cdma(struct cdm_rd *r, const struct cdm_core_read *cr, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct cdm_cmds *cd = &cr[k].w.dyn[CDM_CDMA];
		if (!cd->n || cr[k].w.dyn_v2)
			continue;
		r->cdma_owner = (int)cr[k].core;
		for (size_t i = 0; i < cd->n; i++) {
			struct cdm_cmds *l = &r->port[cd->v[i].port].cmds;
			if (l->n == l->cap) {
				struct cdm_cmd *v = tp_grow(l->v, sizeof *v, l->n + 1, &l->cap);
				if (!v)
					return cdm_nomem(r);
				l->v = v;
			}
			l->v[l->n++] = cd->v[i];
		}
	}
	return TP_OK;
}

/* STEP_RECORDS of a wave of n cores: the TIU and GDMA records of its keyed cores in parts
 * where cdm_eparts_plan says so (the parts' unwraps counted and carried, their slices filled,
 * their tables merged into the tracks in part order and their slices committed), every other
 * engine or core whole; then each keyed core's engines merged in engine order. */
static int wave_records(struct cores_par *a, size_t n)
{
	struct cdm_rd *r = a->r;
	unsigned threads = r->jobs > 1 ? r->jobs : 1;
	size_t nparts = 0;
	int rc = TP_OK;
	for (size_t k = 0; k < 2 * n && rc == TP_OK; k++) {
		rc = cdm_eparts_plan(r, &a->cr[k / 2], (int)(k % 2), r->part, &a->ep[k]);
		nparts += a->ep[k].np;
	}
	const struct cores_job *keep = a->job;
	struct cores_job *job = rc == TP_OK ? tp_calloc(3 * n + nparts, sizeof *job) : NULL;
	if (rc == TP_OK && !job)
		rc = cdm_nomem(r);
	if (rc == TP_OK) {
		a->job = job;
		a->step = STEP_COUNT;
		tp_tm_begin("count");
		tp_par_run(threads, cores_jobs(job, a, n, STEP_COUNT), cores_par_one, a);
		for (size_t k = 0; k < 2 * n; k++)
			cdm_eparts_carry(&a->ep[k]);
		tp_tm_end();
		a->step = STEP_RECORDS;
		tp_tm_begin("fill");
		tp_par_run(threads, cores_jobs(job, a, n, STEP_RECORDS), cores_par_one, a);
		tp_tm_end();
		tp_tm_begin("end");
		for (size_t k = 0; k < 2 * n; k++) {
			struct cdm_core_read *x = &a->eng[3 * (k / 2) + k % 2];
			if (!a->ep[k].np)
				continue;
			if (engine_open(x, &a->cr[k / 2]) != TP_OK) {
				x->rc = cdm_nomem(&(struct cdm_rd){.dir = r->dir, .d = &x->d});
				continue;
			}
			struct cdm_rd rk = *r;
			rk.d = &x->d;
			x->rc = cdm_eparts_end(&rk, &a->cr[k / 2], &a->ep[k], x);
		}
		tp_tm_end();
		a->step = STEP_COMMIT;
		tp_tm_begin("commit");
		tp_par_run(threads, cores_jobs(job, a, n, STEP_COMMIT), cores_par_one, a);
		tp_tm_end();
		for (size_t k = 0; k < n; k++)
			if (a->cr[k].keyed && !a->cr[k].rc)
				engines_merge(r, &a->cr[k], &a->eng[3 * k]);
	}
	for (size_t k = 0; k < 3 * n; k++)
		engine_close(r, &a->eng[k]);
	for (size_t k = 0; k < 2 * n; k++)
		cdm_eparts_free(&a->ep[k]);
	a->job = keep;
	tp_free(job);
	return rc;
}

/* Reads the core files, up to r->jobs at a time (one thread each) while their working memory
 * fits sg_wave's bound: open and walk them at once;
 * then on the calling thread in core order their statistics, notes and tracks (core_setup);
 * their records at once (core_records; a core that keeps argument sets builds them in a
 * scratch profile; a keyed core's engines are jobs of their own, core_engine, merged by
 * engines_merge, and its large TIU and GDMA engines are read in parts, wave_records, so that
 * a wave of fewer cores than --jobs still keeps the threads busy);
 * the names in core order (core_names; core_scratch_in maps a scratch
 * profile's strings and reserves its sets' room) and the labels and argument sets at once
 * (core_relabel; a keyed core's tracks one job each, relabel_track). Whatever is shared (strings,
 * notes, statistics, the track list, CDMA command lists) changes only on the calling thread, in
 * core order, so the profile is the same for every r->jobs and whichever cores go together. At most
 * r->jobs core files (and their walks and scratch profiles) are held at a time, and beyond the
 * first only as many as SG_WAVE_SPARE allows. */
int cdm_read_cores(struct cdm_rd *r)
{
	size_t wave = r->jobs > 1 ? r->jobs : 1;
	struct cdm_core_read *cr = tp_calloc(wave, sizeof *cr);
	struct cdm_core_read *eng = tp_calloc(3 * wave, sizeof *eng);
	struct cores_job *job = tp_calloc(CORE_BUFS * wave, sizeof *job);
	struct cdm_eparts *ep = tp_calloc(2 * wave, sizeof *ep);
	struct tp_profile **scratch = tp_calloc(wave, sizeof *scratch);
	uint64_t *est = cores_est(r);
	if (!cr || !eng || !job || !ep || !scratch || !est) {
		TP_FREE_ALL(cr, eng, job, ep, scratch, est);
		return cdm_nomem(r);
	}
	int rc = TP_OK;
	for (size_t c0 = 0, n = 0; c0 < r->ncores && rc == TP_OK; c0 += n) {
		n = sg_wave(est, c0, r->ncores, (unsigned)wave);
		for (size_t k = 0; k < n; k++)
			cr[k].core = c0 + k;
		/* A slot this wave leaves empty gives its scratch room back. */
		for (size_t k = n; k < wave; k++) {
			tp_profile_free(scratch[k]);
			scratch[k] = NULL;
		}
		struct cores_par a = {.r = r,
		                      .cr = cr,
		                      .eng = eng,
		                      .scratch = scratch,
		                      .job = job,
		                      .ep = ep,
		                      .step = STEP_OPEN,
		                      .inner = (unsigned)(wave / n)};
		tp_tm_begin("open");
		tp_par_run((unsigned)wave, cores_jobs(job, &a, n, STEP_OPEN), cores_par_one, &a);
		tp_tm_end();
		tp_tm_begin("setup");
		for (size_t k = 0; k < n && rc == TP_OK; k++) {
			if (cr[k].rc) {
				*r->d = cr[k].d;
				rc = cr[k].rc;
				break;
			}
			r->job = &cr[k];
			rc = core_setup(r, &cr[k]);
			r->job = NULL;
		}
		tp_tm_end();
		tp_tm_begin("records");
		if (rc == TP_OK)
			rc = wave_records(&a, n);
		tp_tm_end();
		tp_tm_begin("names");
		if (rc == TP_OK)
			rc = wave_room(r, cr, n, r->ncores - c0);
		for (size_t k = 0; k < n && rc == TP_OK; k++) {
			struct cdm_core_read *x = &cr[k];
			cdm_keys_free(r, x->keys);
			r->job = x;
			if (x->rc) {
				*r->d = x->d;
				rc = x->rc;
			} else {
				if (x->keyed)
					core_names(r, x);
				else
					rc = core_scratch_in(r, x);
				r->id_wraps += x->id_wraps;
				r->ts_wraps += x->ts_wraps;
				r->reordered += x->reordered;
			}
			r->job = NULL;
			if (rc)
				break;
			if (sg_aside_apply(r->p, &x->aside) != TP_OK)
				rc = cdm_nomem(r);
			r->detail = x->detail; /* read_cdma's, as the last core file's */
		}
		tp_tm_end();
		tp_tm_begin("relabel");
		if (rc == TP_OK) {
			a.step = STEP_RELABEL;
			tp_par_run((unsigned)wave, cores_jobs(job, &a, n, STEP_RELABEL),
			           cores_par_one, &a);
			for (size_t k = 0; k < 4 * n && rc == TP_OK; k++) {
				/* The core's own record, then its engines'. */
				struct cdm_core_read *x = k < n ? &cr[k] : &eng[k - n];
				if (x->rc) {
					*r->d = x->d;
					rc = x->rc;
				}
			}
			for (size_t k = 0; k < 3 * n; k++)
				engine_close(r, &eng[k]);
		}
		tp_tm_end();
		tp_tm_begin("cdma");
		if (rc == TP_OK)
			rc = wave_cdma(r, cr, n);
		tp_tm_end();
		/* Unmapping the files and freeing the walks' lists on the threads. */
		tp_tm_begin("close");
		a.step = STEP_CLOSE;
		tp_par_run((unsigned)wave, cores_jobs(job, &a, n, STEP_CLOSE), cores_par_one, &a);
		for (size_t k = 0; k < n; k++) {
			cdm_keys_free(r, cr[k].keys);
			core_close(&cr[k]);
		}
		tp_tm_end();
	}
	for (size_t k = 0; k < wave; k++)
		tp_profile_free(scratch[k]);
	TP_FREE_ALL(scratch, cr, eng, job, ep, est);
	return rc;
}

int cdm_read_cdma(struct cdm_rd *r, size_t k)
{
	unsigned port = r->cdma_port[k];
	struct cdm_port_info *pi = &r->port[port];
	struct tp_file f;
	char *path = NULL;
	int rc = cdm_load(r, r->cdma[k], &f, &path);
	if (rc) {
		tp_free(path);
		return rc;
	}
	struct cdm_walk w;
	rc = cdm_walk_jobs(f.data, f.size, path, r->chip, r->dec, 1, 0, &w, r->d);
	if (rc)
		goto out_file;
	r->p->stats.files_read++;
	r->p->stats.blocks_read += w.blocks_read;
	r->p->stats.blocks_skipped += w.blocks_skipped;
	size_t have = 0;
	for (size_t i = 0; i < w.npmu; i++)
		if (w.pmu[i].engine == CDM_CDMA)
			have += w.pmu[i].count;
	if (!have)
		goto out_walk;
	if (pi->track >= 0) {
		rc =
		    tp_diag_set(r->d, TP_EFORMAT, "%s: a second file for CDMA port %u", path, port);
		goto out_walk;
	}
	/* Owner: the core whose DYN_DATA carries CDMA commands; tpu-mlir's default is the last
	 * core (index 7 on an 8-core dump). */
	pi->owner = r->cdma_owner >= 0 ? r->cdma_owner : (int)r->ncores - 1;
	char name[32];
	snprintf(name, sizeof name, "CDMA port %u", port);
	int t = tp_profile_add_track(r->p, r->device, pi->owner, TP_TRACK_CDMA, name, r->dma_mhz);
	if (t < 0) {
		rc = cdm_nomem(r);
		goto out_walk;
	}
	pi->track = t;
	if ((rc = fill_track(r, t, f.data, &w, CDM_CDMA)))
		goto out_walk;
	struct tp_track *tr = &r->p->tracks[t];
	cdm_unwrap_ids(r, tr);
	cdm_unwrap_times(r, tr, 1);
	cdm_reorder(r, tr);
out_walk:
	cdm_walk_free(&w);
out_file:
	tp_file_release(&f);
	tp_free(path);
	return rc;
}
