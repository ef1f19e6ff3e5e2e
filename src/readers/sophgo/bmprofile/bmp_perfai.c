/*
 * bmp_perfai.c — the PerfAI timeline of BM1688/CV186X and CV184X (§9.2): per core, its
 * command files, TIU and GDMA records, trimming, wait_msg alignment and the cycle and ns
 * fields. The per-core work runs one engine of a core per job (tp_par_run), or, with more
 * threads than engines, each engine's records and fill in parts (struct tp_part); what
 * interns strings (names, notes) is applied afterwards in core order, so the profile is the
 * same for every thread count.
 */
#include "common/progress.h"
#include "common/timings.h"
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* BM1688 / CV186X: the PerfAI path (§9.2).                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Output Start Cycle / Asic Cycle (End - Start + 1) from aligned cycles [cs, ce], and the
 * times the reference derives from them: ns = floor(cycles x 1000 / MHz) + the iteration's
 * offset. */
void bmp_set_cycles(struct tp_part *pt, struct tp_slice *s, int64_t cs, int64_t ce, double mhz,
                    int64_t offset_ns)
{
	uint64_t cyc = (uint64_t)(ce - cs) + 1;
	tp_part_set_start_cycle(pt, s, (uint64_t)cs);
	s->cycles = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
	/* Exact integer conversion: the vendor's timeline is cycles / MHz x 1000 to 0.01 ns, and
	 * the truncated float division put 16 of the real dump's 940 times 1 ns low (1850301
	 * cycles at 900 MHz are 2055890 ns, not 2055889). The alignment above keeps the vendor's
	 * float arithmetic, which its cycles depend on. */
	s->start_ns = tp_cycles_to_ns_exact((uint64_t)cs, mhz) + offset_ns;
	tp_part_set_end(pt, s, tp_cycles_to_ns_exact((uint64_t)ce, mhz) + offset_ns);
}

/* Rewrites raw ns -> aligned cycles and ns (§9.2 steps 5–7) for the slices of part pt (of an
 * engine e track), the global zero `sub` taken off; *clamped counts those that started
 * before it. */
static void finish_slices(struct bmp_rd *r, struct tp_part *pt, int e, int64_t sub,
                          int64_t offset_ns, uint64_t *clamped)
{
	if (!pt->n)
		return; /* (no slices: the array may be NULL) */
	double mhz = e == BMP_ENG_TIU ? r->tiu_mhz : r->gdma_mhz;
	struct tp_track *tr = &r->p->tracks[pt->track];
	struct tp_slice *s = tr->slices + pt->first;
	uint64_t n = 0; /* added once: *clamped sits beside other parts' counts */
	for (size_t i = 0; i < pt->n; i++, s++) {
		int64_t cs = bmp_ns_to_cycles(s->start_ns - sub, mhz);
		int64_t ce = bmp_ns_to_cycles(tp_slice_end(tr, s) - sub, mhz);
		if (cs < 0) {
			cs = 0;
			n++;
		}
		if (ce < cs)
			ce = cs;
		bmp_set_cycles(pt, s, cs, ce, mhz, offset_ns);
	}
	*clamped += n;
}

/* §9.2 step 5 for core k: the anchor is the first system.wait_msg of the TIU command list and
 * the TIU record that executed it. */
static void tiu_anchor(const struct bmp_rd *r, unsigned k, struct bmp_core_cmds *cc,
                       const struct core_range *cr, int64_t *anchor, int *have_anchor)
{
	if (!cc->have[BMP_ENG_TIU])
		return;
	struct bmp_cmd c;
	uint32_t wait_id = 0;
	for (uint32_t id = 1; bmp_cmdbuf_get(&cc->cb[BMP_ENG_TIU], id, &c); id++)
		if (c.op == 15 && c.sub == 9) {
			wait_id = id;
			break;
		}
	const struct tp_slice *s = r->p->tracks[r->tiu_track[k]].slices;
	for (size_t i = cr->first[BMP_ENG_TIU];
	     wait_id && i < cr->first[BMP_ENG_TIU] + cr->n[BMP_ENG_TIU]; i++)
		if (s[i].cmd_id == wait_id) {
			*anchor = s[i].start_ns;
			*have_anchor = 1;
			break;
		}
}

/* Core k's engine e block sp read at once, or with `blk` planned in parts of r->part records
 * and left in blk for read_cores (*later = 1) when it is larger than one part. */
static int engine_block(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                        struct bmp_core_cmds *cc, unsigned k, int e, struct core_range *cr,
                        struct bmp_pmu_blk *blk, int *later)
{
	struct bmp_pmu_blk one;
	struct bmp_pmu_blk *b = blk ? blk : &one;
	int rc = bmp_pmu_plan(r, f, sp, cc, k, e, blk ? r->part : SIZE_MAX, b);
	*later = rc == TP_OK && !bmp_pmu_direct(b);
	if (rc != TP_OK && !blk)
		bmp_pmu_free(&one);
	if (rc != TP_OK || *later)
		return rc;
	if ((rc = bmp_pmu_run(r, b, &cr->first[e])) != TP_OK)
		return rc;
	cr->n[e] = r->p->tracks[bmp_eng_track(r, k, e)].count - cr->first[e];
	return TP_OK;
}

/* §9.2 steps 1-5 for core k, one engine at a time so that a core's engines run on two
 * threads: BMP_ENG_TIU opens its command files, reads its TIU records into raw slices and finds
 * the wait_msg anchor; BMP_ENG_GDMA reads its GDMA records. Each touches only its own track
 * (the TIU side also cc); notes and statistics go through rnote/BMP_RSTATS, so a copy of r per
 * engine may run it on a worker thread, and merging the TIU copy's before the GDMA copy's
 * keeps the order of one thread. With `blk` the engine's block is only planned in parts of
 * r->part records (read_cores reads them, and finds the anchor, afterwards). */
static int perfai_engine(struct bmp_rd *r, const char *ipath, const struct tp_file *f,
                         const struct bmp_iter *it, unsigned k, int e, struct bmp_core_cmds *cc,
                         struct core_range *cr, int64_t *anchor, int *have_anchor,
                         struct bmp_pmu_blk *blk)
{
	int rc, later;
	if (e == BMP_ENG_GDMA)
		return k < it->n_gdma ? engine_block(r, f, &it->gdma[k], cc, k, e, cr, blk, &later)
		                      : TP_OK;
	*have_anchor = 0;
	if (k < it->n_cmd && (rc = bmp_cmds_open(r, ipath, &it->cmd[k], k, cc)) != TP_OK)
		return rc;
	if (k < it->n_bd &&
	    ((rc = engine_block(r, f, &it->bd[k], cc, k, e, cr, blk, &later)) != TP_OK || later))
		return rc;
	tiu_anchor(r, k, cc, cr, anchor, have_anchor);
	return TP_OK;
}

/* Adds a finished job's notes and statistics to the profile, and frees them. */
static void job_merge(struct bmp_rd *r, struct bmp_core_job *j)
{
	if (sg_aside_apply(r->p, &j->aside) != TP_OK)
		r->p->oom = 1;
}

/* A core filled on a worker with argument sets (detail): its argument sets and the strings
 * they and its names use go to a scratch profile, its labels are kept in lab (names in the
 * scratch profile's ids), and the calling thread moves them into the profile in core order
 * (tp_profile_str_map, tp_args_reserve), so string and set ids are those of one thread. */
struct core_fill {
	struct bmp_rd rk; /* the worker's view of the reader: ap, lab, caches of its own */
	struct tp_profile *ap;
	struct bmp_lab *lab[2];
	uint32_t *map; /* ap's string id -> the profile's */
	uint32_t set0; /* the profile's id of ap's argument set 1 */
	size_t arg0;   /* and index of ap's argument 0 */
	int ready;     /* rk holds caches to free */
};

/* What fill_plain keeps beside a part of an engine's slices. */
struct fill_part {
	unsigned k; /* core */
	int e;      /* engine */
	uint64_t clamped;
};

struct perfai_par {
	struct bmp_rd *r;
	const char *ipath;
	const struct tp_file *f;
	const struct bmp_iter *it;
	struct bmp_core_cmds *cc;
	struct core_range *cr;
	int64_t *anchor;
	int *have_anchor;
	struct bmp_core_job *job;
	int64_t zero, offset_ns, *delta;
	uint64_t *clamped;
	uint32_t none[2];            /* bmp_names_apply's names of a command without descriptor */
	struct core_fill *fill;      /* per core, with argument sets */
	struct tp_profile **scratch; /* per core of a wave: the scratch profiles, reused */
	unsigned nscratch;
	unsigned wave0; /* the first core of the wave being filled */
	unsigned nc;    /* the cores: a2_par_read's job i is core i % nc, engine i / nc */
	/* fill_plain's parts: those of core k's engine e are part[part0[i]..][nparts_of[i]] with
	 * i = e * nc + k, in slice order; pinfo[j] is part[j]'s core and engine */
	struct tp_part *part;
	struct fill_part *pinfo;
	size_t nparts, part0[2 * BMP_MAX_CORES], nparts_of[2 * BMP_MAX_CORES];
	_Atomic int oom; /* an index or a merge of the parts ran out of memory */
	/* read_cores in parts (more threads than engines): job i's block plan (its parts set
	 * while it is planned and not finished), and the flat list of every plan's parts (job,
	 * part) */
	struct bmp_pmu_blk *blk;
	size_t (*pmu_jobs)[2], npmu;
};

/* The record of job i of read_cores (core i % nc, engine i / nc). */
static struct bmp_core_job *job_of(const struct perfai_par *a, size_t i)
{
	return &a->job[2 * (i % a->nc) + i / a->nc];
}

/* The worker's view of the reader for job i: notes, statistics and errors kept in the job;
 * after the job's first step, its GDMA counter arrays are the job's. */
static void job_view(struct perfai_par *a, size_t i, int later, struct bmp_rd *rk)
{
	unsigned k = (unsigned)(i % a->nc);
	struct bmp_core_job *j = job_of(a, i);
	*rk = *a->r;
	rk->job = j;
	rk->d = &j->d;
	if (later && i / a->nc == BMP_ENG_GDMA) {
		rk->gd_gmem[k] = j->gd_gmem;
		rk->gd_lmem[k] = j->gd_lmem;
		rk->gd_xact[k] = j->gd_xact;
		rk->gd_cap[k] = j->gd_cap;
	}
}

/* Job i of read_cores: core i % nc, engine i / nc (the TIU jobs first). */
static void a2_par_read(void *v, size_t i)
{
	struct perfai_par *a = v;
	unsigned nc = a->nc, k = (unsigned)(i % nc); /* < the core count */
	int e = (int)(i / nc);
	struct bmp_rd rk;
	job_view(a, i, 0, &rk);
	struct bmp_core_job *j = rk.job;
	j->rc = perfai_engine(&rk, a->ipath, a->f, a->it, k, e, &a->cc[k], &a->cr[k], &a->anchor[k],
	                      &a->have_anchor[k], a->blk ? &a->blk[i] : NULL);
	if (e == BMP_ENG_GDMA) { /* its counter arrays (detail), which read_cores hands back */
		j->gd_gmem = rk.gd_gmem[k];
		j->gd_lmem = rk.gd_lmem[k];
		j->gd_xact = rk.gd_xact[k];
		j->gd_cap = rk.gd_cap[k];
	}
}

/* Flat job i of a read in parts: a part's records, or its commit. */
static void a2_par_pmu(void *v, size_t i)
{
	struct perfai_par *a = v;
	size_t jb = a->pmu_jobs[i][0];
	/* (a part of a block read in parts cannot fail: its room was reserved when planned) */
	if (!job_of(a, jb)->rc)
		(void)bmp_pmu_part(a->r, &a->blk[jb], a->pmu_jobs[i][1]);
}

static void a2_par_pmu_commit(void *v, size_t i)
{
	struct perfai_par *a = v;
	size_t jb = a->pmu_jobs[i][0];
	if (!job_of(a, jb)->rc)
		bmp_pmu_commit(&a->blk[jb], a->pmu_jobs[i][1]);
}

/* Job i of a read in parts, once its parts are read: where its records end, the parts merged. */
static void a2_par_settle(void *v, size_t i)
{
	struct perfai_par *a = v;
	struct bmp_rd rk;
	job_view(a, i, 1, &rk);
	if (a->blk[i].part && !rk.job->rc)
		rk.job->rc = bmp_pmu_settle(&rk, &a->blk[i]);
}

/* Job i of a read in parts, once its parts are committed: the block finished and the TIU
 * side's anchor found. */
static void a2_par_finish(void *v, size_t i)
{
	struct perfai_par *a = v;
	unsigned k = (unsigned)(i % a->nc);
	int e = (int)(i / a->nc);
	struct bmp_rd rk;
	job_view(a, i, 1, &rk);
	if (rk.job->rc || !a->blk[i].part)
		return;
	struct core_range *cr = &a->cr[k];
	bmp_pmu_finish(&rk, &a->blk[i], &cr->first[e]);
	cr->n[e] = rk.p->tracks[bmp_eng_track(&rk, k, e)].count - cr->first[e];
	if (e == BMP_ENG_TIU)
		tiu_anchor(&rk, k, &a->cc[k], cr, &a->anchor[k], &a->have_anchor[k]);
}

/* The planned blocks read in parts: every part on the threads, each block settled, every part
 * committed, each block finished. */
static int read_parts(struct perfai_par *ap, unsigned nc)
{
	struct bmp_rd *r = ap->r;
	size_t n = 0;
	for (size_t i = 0; i < 2 * (size_t)nc; i++)
		if (ap->blk[i].part)
			n += ap->blk[i].nparts;
	ap->pmu_jobs = tp_calloc(n ? n : 1, sizeof *ap->pmu_jobs);
	if (!ap->pmu_jobs)
		return bmp_nomem(r);
	for (size_t i = 0; i < 2 * (size_t)nc; i++)
		for (size_t q = 0; ap->blk[i].part && q < ap->blk[i].nparts; q++) {
			ap->pmu_jobs[ap->npmu][0] = i;
			ap->pmu_jobs[ap->npmu++][1] = q;
		}
	tp_par_run((unsigned)r->jobs, ap->npmu, a2_par_pmu, ap);
	tp_par_run((unsigned)r->jobs, 2 * (size_t)nc, a2_par_settle, ap);
	tp_par_run((unsigned)r->jobs, ap->npmu, a2_par_pmu_commit, ap);
	tp_par_run((unsigned)r->jobs, 2 * (size_t)nc, a2_par_finish, ap);
	return TP_OK;
}

/* Part i of fill_plain: its times (generation 0), then its commands (generation 1). */
static void a2_par_fill(void *v, size_t i)
{
	struct perfai_par *a = v;
	struct fill_part *fp = &a->pinfo[i];
	finish_slices(a->r, &a->part[i], fp->e, a->zero, a->offset_ns, &fp->clamped);
	tp_part_next_gen(&a->part[i]);
	bmp_fill_part(a->r, &a->cc[fp->k], &a->part[i], fp->e);
}

/* Job i of fill_plain's index step: core i % nc's engine i / nc command buffer indexed to its
 * end when its track is filled in parts (their cursors seek through the index). */
static void a2_par_index(void *v, size_t i)
{
	struct perfai_par *a = v;
	unsigned nc = a->nc, k = (unsigned)(i % nc); /* < the core count */
	int e = (int)(i / nc);
	struct bmp_core_cmds *cc = &a->cc[k];
	if (cc->have[e] && a->nparts_of[i] > 1 && bmp_cmdbuf_finish(&cc->cb[e]) != TP_OK)
		a->oom = 1;
}

/* Job i: the parts of core i % nc's engine i / nc merged into its track. */
static void a2_par_merge(void *v, size_t i)
{
	struct perfai_par *a = v;
	if (a->nparts_of[i] > 1 && tp_parts_merge(a->part + a->part0[i], a->nparts_of[i]) != TP_OK)
		a->oom = 1;
}

static void a2_par_commit(void *v, size_t i)
{
	struct perfai_par *a = v;
	tp_part_commit(&a->part[i]);
}

static void a2_par_name(void *v, size_t kk)
{
	struct perfai_par *a = v;
	unsigned k = (unsigned)kk; /* < the core count */
	bmp_names_apply(a->r, k, &a->cr[k], a->none);
}

/* Every core's records and commands, per core and engine through tp_par_run (job[2 k + e]). */
static int read_cores(struct perfai_par *ap, unsigned nc)
{
	struct bmp_rd *r = ap->r;
	ap->job = tp_calloc(2 * (size_t)(nc ? nc : 1), sizeof *ap->job);
	if (!ap->job)
		return bmp_nomem(r);
	ap->nc = nc;
	/* With more threads than engines, each engine's records are read in parts. */
	if (r->jobs > 2 * (int)nc) {
		ap->blk = tp_calloc(2 * (size_t)nc, sizeof *ap->blk);
		if (!ap->blk)
			return bmp_nomem(r);
	}
	tp_par_run((unsigned)r->jobs, 2 * (size_t)nc, a2_par_read, ap);
	int rc = ap->blk ? read_parts(ap, nc) : TP_OK;
	/* The jobs own the GDMA counter arrays: back to r on every path, error or not. */
	for (unsigned k = 0; k < nc; k++) {
		const struct bmp_core_job *g = &ap->job[2 * k + BMP_ENG_GDMA];
		r->gd_gmem[k] = g->gd_gmem;
		r->gd_lmem[k] = g->gd_lmem;
		r->gd_xact[k] = g->gd_xact;
		r->gd_cap[k] = g->gd_cap;
	}
	if (rc != TP_OK)
		return rc;
	/* In core order, TIU before GDMA: the first that failed reports (as one thread would:
	 * it would not have read the GDMA records after a TIU error). */
	for (size_t i = 0; i < 2 * (size_t)nc; i++) {
		if (ap->job[i].rc) {
			if (r->d)
				*r->d = ap->job[i].d;
			return ap->job[i].rc;
		}
		job_merge(r, &ap->job[i]);
	}
	return TP_OK;
}

/* Core alignment against core 0: each core's slices move by its wait_msg anchor's distance
 * from core 0's (delta[k]). */
static void align_cores(const struct perfai_par *ap, unsigned nc, int64_t *delta)
{
	struct bmp_rd *r = ap->r;
	const struct core_range *cr = ap->cr;
	for (unsigned k = 1; k < nc; k++) {
		if (!ap->have_anchor[0] || !ap->have_anchor[k]) {
			if (cr[k].n[BMP_ENG_TIU] || cr[k].n[BMP_ENG_GDMA])
				tp_profile_note(
				    r->p, "%s: core %u has no wait_msg anchor; left unaligned",
				    ap->ipath, k);
			continue;
		}
		delta[k] = ap->anchor[k] - ap->anchor[0];
		for (int e = 0; e < 2; e++) {
			struct tp_slice *s = r->p->tracks[bmp_eng_track(r, k, e)].slices;
			for (size_t i = cr[k].first[e]; i < cr[k].first[e] + cr[k].n[e]; i++)
				s[i].start_ns -= delta[k]; /* the end moves with the start */
		}
	}
}

/* Global zero: min over cores of the first TIU and first GDMA start (0 when none). */
static int64_t global_zero(const struct bmp_rd *r, const struct core_range *cr, unsigned nc)
{
	int64_t zero = INT64_MAX;
	for (unsigned k = 0; k < nc; k++) {
		for (int e = 0; e < 2; e++) {
			const struct tp_track *t = &r->p->tracks[bmp_eng_track(r, k, e)];
			if (cr[k].n[e] && t->slices[cr[k].first[e]].start_ns < zero)
				zero = t->slices[cr[k].first[e]].start_ns;
		}
	}
	return zero == INT64_MAX ? 0 : zero;
}

static void fill_free(struct core_fill *cf)
{
	if (cf->ready) {
		bmp_fill_caches_free(&cf->rk);
		tp_free(cf->rk.cache);
	}
	tp_free(cf->lab[0]);
	tp_free(cf->lab[1]);
	tp_free(cf->map);
	memset(cf, 0, sizeof *cf);
}

/* Core k's slices with argument sets, on a worker: times, then each command's fields, into
 * the core's struct core_fill. Touches only core k's tracks, cc and fill. */
static void a2_par_detail(void *v, size_t kk)
{
	struct perfai_par *a = v;
	unsigned k = a->wave0 + (unsigned)kk; /* < the core count */
	struct bmp_rd *r = a->r;
	struct core_fill *cf = &a->fill[k];
	cf->rk = *r;
	struct tp_profile **sp = &a->scratch[kk];
	if (*sp && tp_args_clear(*sp) != TP_OK) {
		tp_profile_free(*sp);
		*sp = NULL;
	}
	if (!*sp)
		*sp = tp_profile_new();
	cf->rk.ap = cf->ap = *sp;
	const struct core_range *cr = &a->cr[k];
	cf->rk.lab[0] = cf->lab[0] =
	    tp_malloc((cr->n[BMP_ENG_TIU] ? cr->n[BMP_ENG_TIU] : 1) * sizeof *cf->lab[0]);
	cf->rk.lab[1] = cf->lab[1] =
	    tp_malloc((cr->n[BMP_ENG_GDMA] ? cr->n[BMP_ENG_GDMA] : 1) * sizeof *cf->lab[1]);
	cf->rk.cache = tp_calloc(BMP_NAME_CACHE, sizeof *cf->rk.cache);
	memset(cf->rk.keys, 0, sizeof cf->rk.keys);
	memset(cf->rk.lmem_fields, 0, sizeof cf->rk.lmem_fields);
	cf->ready = 1;
	if (!cf->ap || !cf->lab[0] || !cf->lab[1] || !cf->rk.cache) {
		if (cf->ap)
			cf->ap->oom = 1;
		return;
	}
	for (int e = 0; e < 2; e++) {
		int t = bmp_eng_track(r, k, e);
		struct tp_part pt;
		tp_part_open(&pt, r->p, t, cr->first[e], cr->n[e], 1);
		finish_slices(r, &pt, e, a->zero, a->offset_ns, &a->clamped[2 * k + (unsigned)e]);
		for (size_t i = 0; i < cr->n[e]; i++)
			bmp_fill_cmd(&cf->rk, &a->cc[k], e, t, cr->first[e] + i, k, i);
	}
}

/* Core k's filled argument sets and labels into the profile, once the calling thread has
 * mapped its strings and reserved its sets; frees its fill. Touches only core k's tracks
 * and the reserved room. */
static void a2_par_move(void *v, size_t kk)
{
	struct perfai_par *a = v;
	unsigned k = a->wave0 + (unsigned)kk; /* < the core count */
	struct bmp_rd *r = a->r;
	const struct core_range *cr = &a->cr[k];
	struct core_fill *cf = &a->fill[k];
	tp_args_copy_in(r->p, cf->set0, cf->arg0, cf->ap, cf->map);
	for (int e = 0; e < 2; e++) {
		struct tp_track *tr = &r->p->tracks[bmp_eng_track(r, k, e)];
		size_t first = cr->first[e];
		size_t n = cr->n[e];
		for (size_t i = 0; i < n; i++) {
			struct tp_slice *s = &tr->slices[first + i];
			const struct bmp_lab *b = &cf->lab[e][i];
			if (b->what != BMP_LAB_KEEP) {
				struct tp_label l = *tp_slice_label(tr, s);
				l.name = cf->map[b->name];
				l.type = cf->map[b->type];
				if (b->what == BMP_LAB_ALL) {
					l.kind = b->kind;
					l.dir = b->dir;
					l.dtype = b->dtype;
				}
				tp_slice_set_label(r->p, tr, s, &l);
			}
			if (s->args)
				s->args = cf->set0 + s->args - 1;
		}
	}
	fill_free(cf);
}

/* What comes after core k's slices, on the calling thread in core order: its MCU records,
 * then the command files' notes. */
static int core_after(struct perfai_par *ap, unsigned k)
{
	struct bmp_rd *r = ap->r;
	const struct bmp_iter *it = ap->it;
	int rc;
	if (k < it->n_dyn) {
		/* The MCU timer counts from record 0's base in the PMU counters' epoch (§4.9), so
		 * it takes the same zero and core shift. */
		rc = bmp_read_dyn(r, ap->f, &it->dyn[k], k < it->n_extra ? &it->extra[k] : NULL, k,
		                  0, -ap->zero - ap->delta[k] + ap->offset_ns);
		if (rc)
			return rc;
	}
	if ((rc = bmp_cmds_close(r, &ap->cc[k])) != TP_OK)
		return rc;
	bmp_cmds_free(&ap->cc[k]);
	return TP_OK;
}

/* fill_plain's parts: each engine's slices in parts of r->part when there are more
 * threads than engines, else one direct part per engine. A split engine's command buffer is
 * indexed to its end first, since parts look commands up concurrently through cursors of
 * their own: serial work, worth it only when threads would otherwise wait. */
static int plan_parts(struct perfai_par *ap, unsigned nc)
{
	struct bmp_rd *r = ap->r;
	size_t size = r->jobs > 2 * (int)nc ? r->part : SIZE_MAX;
	size_t total = 0;
	for (int e = 0; e < 2; e++)
		for (unsigned k = 0; k < nc; k++) {
			size_t n = ap->cr[k].n[e], i = (size_t)e * nc + k;
			ap->nparts_of[i] = tp_split_count(n, size);
			ap->part0[i] = total;
			total += ap->nparts_of[i];
		}
	ap->part = tp_calloc(total, sizeof *ap->part);
	ap->pinfo = tp_calloc(total, sizeof *ap->pinfo);
	if (!ap->part || !ap->pinfo)
		return bmp_nomem(r);
	ap->nparts = total;
	for (size_t i = 0; i < 2 * (size_t)nc; i++) {
		unsigned k = (unsigned)(i % nc);
		int e = (int)(i / nc);
		size_t first = ap->cr[k].first[e], n = ap->cr[k].n[e];
		for (size_t q = 0; q < ap->nparts_of[i]; q++) {
			struct fill_part *fp = &ap->pinfo[ap->part0[i] + q];
			size_t lo, hi;
			tp_split_at(n, ap->nparts_of[i], q, &lo, &hi);
			tp_part_open(&ap->part[ap->part0[i] + q], r->p, bmp_eng_track(r, k, e),
			             first + lo, hi - lo, ap->nparts_of[i] == 1);
			fp->k = k;
			fp->e = e;
		}
	}
	return TP_OK;
}

/* Each engine's slices in parts (their times and commands; the parts' labels and cost entries
 * merged into the tracks in slice order), then names interned in core order and set per core. */
static int fill_plain(struct perfai_par *ap, unsigned nc)
{
	struct bmp_rd *r = ap->r;
	int rc = TP_OK;
	tp_tm_begin("fill");
	ap->nc = nc;
	if ((rc = plan_parts(ap, nc)) != TP_OK) {
		tp_tm_end();
		return rc;
	}
	int split = ap->nparts > 2 * (size_t)nc;
	if (split) {
		tp_tm_begin("index");
		tp_par_run((unsigned)r->jobs, 2 * (size_t)nc, a2_par_index, ap);
		tp_tm_end();
	}
	tp_tm_begin("parts");
	if (!ap->oom)
		tp_par_run((unsigned)r->jobs, ap->nparts, a2_par_fill, ap);
	tp_tm_end();
	if (split && !ap->oom) {
		tp_tm_begin("merge");
		tp_par_run((unsigned)r->jobs, 2 * (size_t)nc, a2_par_merge, ap);
		if (!ap->oom)
			tp_par_run((unsigned)r->jobs, ap->nparts, a2_par_commit, ap);
		tp_tm_end();
	}
	for (size_t i = 0; i < ap->nparts; i++) {
		struct fill_part *fp = &ap->pinfo[i];
		ap->clamped[2 * fp->k + (unsigned)fp->e] += fp->clamped;
	}
	tp_tm_end();
	if (ap->oom)
		return bmp_nomem(r);
	tp_tm_begin("apply");
	struct bmp_parts ps;
	if (bmp_names_scan(r, ap->cr, nc, &ps) != TP_OK) {
		tp_tm_end();
		return bmp_nomem(r);
	}
	int have_none = 0;
	for (unsigned k = 0; k < nc && rc == TP_OK; k++) {
		bmp_names_discover(r, &ap->cc[k], k, &ps, ap->none, &have_none);
		rc = core_after(ap, k);
	}
	bmp_parts_free(&ps);
	tp_tm_end();
	if (rc != TP_OK)
		return rc;
	tp_tm_begin("name");
	tp_par_run((unsigned)r->jobs, nc, a2_par_name, ap);
	rc = bmp_share_cost_args(r, ap->cr, nc);
	tp_tm_end();
	return rc;
}

/* Room in the profile's argument arrays for this wave's sets and, at this wave's size per
 * core, those of the cores after it: growing them core by core would copy what is there each
 * time (room never written costs address space only). */
static int wave_room(struct perfai_par *ap, unsigned k0, unsigned n, unsigned nc)
{
	size_t args = 0, sets = 0;
	for (unsigned k = k0; k < k0 + n; k++)
		if (ap->fill[k].ap) {
			args += ap->fill[k].ap->num_args;
			sets += ap->fill[k].ap->num_argsets - 1;
		}
	unsigned left = nc - k0;
	if (n && args / n > (SIZE_MAX / 2) / left)
		return TP_OK; /* absurd: left to the growth core by core */
	if (tp_args_room(ap->r->p, args / n * left, sets / n * left) != TP_OK)
		return bmp_nomem(ap->r);
	return TP_OK;
}

/* A core's scratch argument sets (and kept labels) while it is filled, for sg_wave, in bytes
 * a command: about 49 arguments of 16 bytes on BM1688 with the descriptor fields, 12 without. */
#define DETAIL_CMD_BYTES 800
#define DETAIL_CMD_BYTES_NO_FIELDS 224

/* The cores with argument sets, in waves of up to --jobs cores while their scratch sets fit
 * sg_wave's bound (what is in flight is that many cores' scratch sets): a2_par_detail per
 * core, then in core order their strings mapped, their sets' room reserved and what follows
 * each core, then a2_par_move per core. */
static int fill_detail(struct perfai_par *ap, unsigned nc)
{
	struct bmp_rd *r = ap->r;
	unsigned w = r->jobs > 1 ? (unsigned)r->jobs : 1;
	uint64_t est[BMP_MAX_CORES];
	for (unsigned k = 0; k < nc; k++)
		est[k] = (uint64_t)(ap->cr[k].n[BMP_ENG_TIU] + ap->cr[k].n[BMP_ENG_GDMA]) *
		         (r->fields ? DETAIL_CMD_BYTES : DETAIL_CMD_BYTES_NO_FIELDS);
	ap->fill = tp_calloc(nc ? nc : 1, sizeof *ap->fill);
	ap->nscratch = w < nc ? w : nc ? nc : 1;
	ap->scratch = tp_calloc(ap->nscratch, sizeof *ap->scratch);
	if (!ap->fill || !ap->scratch)
		return bmp_nomem(r);
	for (unsigned k0 = 0, n = 0; k0 < nc; k0 += n) {
		n = (unsigned)sg_wave(est, k0, nc, w);
		/* A slot this wave leaves empty gives its scratch room back. */
		for (unsigned kk = n; kk < ap->nscratch; kk++) {
			tp_profile_free(ap->scratch[kk]);
			ap->scratch[kk] = NULL;
		}
		ap->wave0 = k0;
		tp_tm_begin("fill");
		tp_par_run(w, n, a2_par_detail, ap);
		tp_tm_end();
		int rc = wave_room(ap, k0, n, nc);
		tp_tm_begin("apply");
		for (unsigned k = k0; k < k0 + n && rc == TP_OK; k++) {
			struct core_fill *cf = &ap->fill[k];
			if (!cf->ap || cf->ap->oom ||
			    !(cf->map = tp_profile_str_map(r->p, cf->ap)) ||
			    tp_args_reserve(r->p, cf->ap, &cf->set0, &cf->arg0) != TP_OK)
				rc = bmp_nomem(r);
			else
				rc = core_after(ap, k);
		}
		tp_tm_end();
		if (rc != TP_OK)
			return rc;
		tp_tm_begin("name");
		tp_par_run(w, n, a2_par_move, ap);
		tp_tm_end();
	}
	return TP_OK;
}

int bmp_iter_perfai(struct bmp_rd *r, const char *ipath, const struct tp_file *f,
                    const struct bmp_iter *it)
{
	unsigned nc = it->n_bd > it->n_gdma ? it->n_bd : it->n_gdma;
	int rc = TP_OK;
	struct core_range cr[BMP_MAX_CORES];
	int64_t anchor[BMP_MAX_CORES];
	int have_anchor[BMP_MAX_CORES];
	uint64_t clamped_k[2 * BMP_MAX_CORES]; /* per core and engine */
	struct bmp_core_cmds *cc = tp_calloc(BMP_MAX_CORES, sizeof *cc);
	if (!cc)
		return bmp_nomem(r);
	memset(cr, 0, sizeof cr);
	memset(clamped_k, 0, sizeof clamped_k);
	/* Per-core work through tp_par_run (on up to --jobs threads; with one, on this thread):
	 * each core only touches its own tracks; notes, statistics, names and argument sets are
	 * added in core order afterwards. Without argument sets bmp_fill_part rewrites labels
	 * through a memo, which also makes it the cheaper path on one thread
	 * (docs/perf-notes/sophgo.md); with them, fill_detail. */
	int per_core = !r->detail;
	struct perfai_par ap = {.r = r,
	                        .ipath = ipath,
	                        .f = f,
	                        .it = it,
	                        .cc = cc,
	                        .cr = cr,
	                        .anchor = anchor,
	                        .have_anchor = have_anchor,
	                        .clamped = clamped_k};
	tp_tm_begin("cores");
	if ((rc = bmp_ensure_tracks(r, nc ? nc - 1 : 0)) == TP_OK)
		rc = read_cores(&ap, nc);
	tp_tm_end();
	if (rc != TP_OK)
		goto out;
	int64_t delta[BMP_MAX_CORES] = {0};
	align_cores(&ap, nc, delta);
	int64_t zero = global_zero(r, cr, nc);
	/* Later iterations sit after the first by their host begin time. */
	int64_t offset_ns = 0;
	if (!r->have_first_begin) {
		r->first_begin_usec = it->summary.begin_usec;
		r->have_first_begin = 1;
	} else if (it->summary.begin_usec > r->first_begin_usec) {
		offset_ns = (int64_t)((it->summary.begin_usec - r->first_begin_usec) * 1000);
	}
	ap.zero = zero;
	ap.offset_ns = offset_ns;
	ap.delta = delta;
	rc = per_core ? fill_plain(&ap, nc) : fill_detail(&ap, nc);
	if (rc != TP_OK)
		goto out;
	uint64_t clamped = 0;
	for (unsigned k = 0; k < 2 * nc; k++)
		clamped += clamped_k[k];
	if (clamped)
		tp_profile_note(r->p,
		                "%s: %llu records started before the global zero; clamped to 0",
		                ipath, (unsigned long long)clamped);
out:
	for (unsigned k = 0; ap.job && k < 2 * nc; k++)
		sg_aside_free(&ap.job[k].aside);
	for (size_t i = 0; ap.blk && i < 2 * (size_t)nc; i++)
		bmp_pmu_free(&ap.blk[i]);
	TP_FREE_ALL(ap.blk, ap.pmu_jobs);
	for (size_t i = 0; i < ap.nparts; i++)
		tp_part_free(&ap.part[i]);
	TP_FREE_ALL(ap.part, ap.pinfo);
	tp_free(ap.job);
	for (unsigned k = 0; ap.fill && k < nc; k++)
		fill_free(&ap.fill[k]);
	tp_free(ap.fill);
	for (unsigned k = 0; ap.scratch && k < ap.nscratch; k++)
		tp_profile_free(ap.scratch[k]);
	tp_free(ap.scratch);
	for (unsigned k = 0; k < BMP_MAX_CORES; k++)
		bmp_cmds_free(&cc[k]);
	tp_free(cc);
	return rc;
}
