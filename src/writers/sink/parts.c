/*
 * parts.c — tp_sink_drive's slices in parts on several threads (tp_sink_parts): each track's
 * slices are cut into parts of a fixed number of slices, each part is walked (lanes, names,
 * arguments, flows) on one thread into a slot of the sink's, and the driving thread hands the
 * slots back in part order.
 *
 * A part that starts inside a track needs the walk's position there (open lanes, both flow
 * walks): a first pass over each long track moves a walker along it without names or
 * arguments and copies its position at every part boundary (tp_sink_walker_copy), the long
 * tracks spread over the threads. The parts then run from those positions, and deliver what
 * one walk from the track's start would: a walk's state depends only on the slices before it.
 *
 * Owns, for one call: the part list, the boundary positions (a few hundred bytes each: open
 * lanes and the outgoing walk's heaps), a walker and a slice scratch per thread, the threads.
 * At most 2 * threads parts are in flight (walked or waiting for their turn to be emitted),
 * and with tp_sink_parts.lean at most threads + 2 of them open (walked, not through their
 * second stage).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/progress.h"
#include "common/timings.h"
#include "common/wsync.h"
#include "writers/sink/sink_int.h"

/* Slices [k0, k1) of plan track ti; `from` is the walk's position at k0, or NULL at the
 * track's start. */
struct part {
	size_t ti, k0, k1;
	struct walker *from;
};

/* A thread walking parts: its walker, slice scratch and diagnostic. */
struct pthr {
	struct pdrive *pd;
	pthread_t th;
	struct walker wk;
	struct tp_sink_slice *ss;
	TP_LINE_PAD; /* the next thread's walker moves per slice */
};

/* A slot's part: FREE -> WALK (walked on a thread) -> WALKED (to emit) -> then, with a second
 * stage, EMITTED (queued) -> WORK2 (on a thread) -> DONE2 (to emit2) -> FREE. */
enum { PS_FREE, PS_WALK, PS_WALKED, PS_EMITTED, PS_WORK2, PS_DONE2 };
struct pslot {
	int state, status;
	struct tp_diag d;
};

struct pdrive {
	const struct plan *pl;
	const struct tp_sink *sink;
	const struct tp_sink_parts *pp;
	size_t psize; /* slices per part */
	struct part *parts;
	size_t nparts;
	struct walker *pos; /* the boundary positions */
	size_t npos;
	size_t *longs; /* plan tracks of more than one part ... */
	size_t *pos0;  /* ... and the first position of each */
	size_t nlongs;
	int *lstatus; /* per long track: the first pass's status */
	/* The ring: parts [head2, next) hold slots (part % nslots); [head, next) are walked or
	 * being walked, [head2, head) emitted and in their second stage. Under mu when there are
	 * workers. */
	struct tp_wsync sync;
	int locking; /* sync is set up (workers may run) */
	int nworkers;
	struct pthr *thr; /* [0] the driving thread, then the workers */
	struct pslot *slot;
	size_t nslots, head, head2, next;
	size_t open, max_open; /* parts open (tp_sink_parts.lean), and how many may be */
	int quit;
};

static void lock(struct pdrive *pd)
{
	if (pd->locking)
		pthread_mutex_lock(&pd->sync.mu);
}

static void unlock(struct pdrive *pd)
{
	if (pd->locking)
		pthread_mutex_unlock(&pd->sync.mu);
}

int tp_sink_walker_copy(struct walker *dst, const struct walker *src)
{
	struct lanes *dl = &dst->lanes;
	const struct lanes *sl = &src->lanes;
	lanes_reset(dl);
	if (sl->used > dl->cap) {
		size_t cap = dl->cap;
		struct lane *g = tp_grow(dl->l, sizeof *g, sl->used, &cap);
		if (!g)
			return TP_ENOMEM;
		memset(g + dl->cap, 0, (cap - dl->cap) * sizeof *g);
		dl->l = g;
		dl->cap = cap;
	}
	for (size_t l = 0; l < sl->used; l++) {
		const struct lane *s = &sl->l[l];
		struct lane *d = &dl->l[l];
		if (tp_sink_lane_room(d, s->depth))
			return TP_ENOMEM;
		if (s->depth) {
			memcpy(d->ends, s->ends, s->depth * sizeof *d->ends);
			memcpy(d->ids, s->ids, s->depth * sizeof *d->ids);
		}
		d->depth = s->depth;
	}
	dl->used = sl->used;
	dst->fc = src->fc;
	return tp_sink_source_iter_copy(&dst->out_walk, &src->out_walk);
}

void tp_sink_walker_free(struct walker *wk)
{
	tp_sink_lanes_free(&wk->lanes);
	tp_sink_source_iter_free(&wk->out_walk);
	tp_free(wk->out_ids);
	memset(wk, 0, sizeof *wk);
}

/* The first pass over long track pd->longs[i]: the walk's position at every part boundary. */
static void first_pass(void *arg, size_t i)
{
	struct pdrive *pd = arg;
	const struct plan *pl = pd->pl;
	size_t ti = pd->longs[i], n = pl->dts[ti].t->count;
	struct walker wk;
	struct tp_sink_slice ss; /* only id, flow_in and flows_out are set */
	struct tp_diag d = {0};
	memset(&wk, 0, sizeof wk);
	int st = tp_sink_track_start(pl, &wk, ti, 1, &d);
	size_t at = pd->pos0[i];
	for (size_t k0 = 0; !st && k0 + pd->psize < n; k0 += pd->psize) {
		st = tp_sink_walk(pl, &wk, ti, k0, k0 + pd->psize, NULL, &ss, &d);
		if (!st)
			st = tp_sink_walker_copy(&pd->pos[at++], &wk);
	}
	tp_sink_walker_free(&wk);
	pd->lstatus[i] = st;
}

/* The parts of every plan track, and the long tracks' boundary positions. */
static int plan_parts(struct pdrive *pd, unsigned threads)
{
	const struct plan *pl = pd->pl;
	size_t np = 0, nl = 0;
	for (size_t ti = 0; ti < pl->ndts; ti++) {
		size_t n = pl->dts[ti].t->count, k = (n + pd->psize - 1) / pd->psize;
		np += k;
		nl += k > 1;
	}
	pd->nparts = np;
	pd->npos = np;
	pd->parts = tp_calloc(np ? np : 1, sizeof *pd->parts);
	pd->pos = tp_calloc(np ? np : 1, sizeof *pd->pos);
	pd->longs = tp_calloc(nl ? nl : 1, sizeof *pd->longs);
	pd->pos0 = tp_calloc(nl ? nl : 1, sizeof *pd->pos0);
	pd->lstatus = tp_calloc(nl ? nl : 1, sizeof *pd->lstatus);
	if (!pd->parts || !pd->pos || !pd->longs || !pd->pos0 || !pd->lstatus)
		return TP_ENOMEM;
	size_t at = 0;
	for (size_t ti = 0; ti < pl->ndts; ti++) {
		size_t n = pl->dts[ti].t->count;
		if (n > pd->psize) {
			pd->longs[pd->nlongs] = ti;
			pd->pos0[pd->nlongs++] = at;
		}
		for (size_t k0 = 0; k0 < n; k0 += pd->psize) {
			struct part *p = &pd->parts[at];
			p->ti = ti;
			p->k0 = k0;
			p->k1 = n - k0 > pd->psize ? k0 + pd->psize : n;
			p->from = k0 ? &pd->pos[at - 1] : NULL;
			at++;
		}
	}
	/* pos[at - 1] is written by the first pass as the position after part at - 1, that is
	 * at the start of part at (first_pass numbers them from the track's first part). */
	tp_par_run(threads, pd->nlongs, first_pass, pd);
	for (size_t i = 0; i < pd->nlongs; i++)
		if (pd->lstatus[i])
			return pd->lstatus[i];
	return TP_OK;
}

/* The slice callback of a part's walk. */
static int to_slot(void *ctx, size_t slot, const struct tp_sink_slice *ss)
{
	const struct pdrive *pd = ctx;
	return pd->pp->slice(pd->sink->ctx, slot, ss);
}

/* Walks part i into its slot on thread th. */
static int run_part(struct pdrive *pd, struct pthr *th, size_t i)
{
	const struct part *p = &pd->parts[i];
	struct pslot *sl = &pd->slot[i % pd->nslots];
	int st;
	sl->d.status = TP_OK;
	sl->d.msg[0] = 0;
	if (!p->from)
		st = tp_sink_track_start(pd->pl, &th->wk, p->ti, 1, &sl->d);
	else if ((st = tp_sink_walker_copy(&th->wk, p->from)))
		tp_diag_set(&sl->d, st, "out of memory writing a trace");
	struct tp_sink_walk_to to = {to_slot, pd, i % pd->nslots, pd->sink->full_args, 0};
	if (!st)
		st = tp_sink_walk(pd->pl, &th->wk, p->ti, p->k0, p->k1, &to, th->ss, &sl->d);
	return st;
}

/* Work for a thread (mu held): a part emitted and waiting for its second stage (it frees a
 * slot soonest), else the next part to walk while a slot is free. Marks it taken; returns 1
 * with *i (the part) and *second, 0 when there is none. */
static int take_work(struct pdrive *pd, size_t *i, int *second)
{
	for (size_t q = pd->head2; q < pd->head; q++)
		if (pd->slot[q % pd->nslots].state == PS_EMITTED) {
			pd->slot[q % pd->nslots].state = PS_WORK2;
			*i = q;
			*second = 1;
			return 1;
		}
	if (pd->next < pd->nparts && pd->next < pd->head2 + pd->nslots && pd->open < pd->max_open) {
		pd->open++;
		*i = pd->next++;
		pd->slot[*i % pd->nslots].state = PS_WALK;
		*second = 0;
		return 1;
	}
	return 0;
}

/* Does work taken by take_work (mu not held), then records its end (mu held on return). */
static void do_work(struct pdrive *pd, struct pthr *th, size_t i, int second)
{
	struct pslot *sl = &pd->slot[i % pd->nslots];
	int st = second ? pd->pp->work2(pd->sink->ctx, i % pd->nslots) : run_part(pd, th, i);
	lock(pd);
	sl->status = st;
	sl->state = second ? PS_DONE2 : PS_WALKED;
	if (second)
		pd->open--;
}

static void *worker_main(void *arg)
{
	struct pthr *th = arg;
	struct pdrive *pd = th->pd;
	tp_tm_thread(1);
	lock(pd);
	while (!pd->quit) {
		size_t i;
		int second;
		if (!take_work(pd, &i, &second)) {
			if (pd->next >= pd->nparts && pd->head >= pd->nparts)
				break; /* every part walked and emitted: no more work */
			pthread_cond_wait(&pd->sync.cv_job, &pd->sync.mu);
			continue;
		}
		unlock(pd);
		do_work(pd, th, i, second);
		pthread_cond_signal(&pd->sync.cv_done);
	}
	unlock(pd);
	tp_tm_thread(-1);
	return NULL;
}

/* Hands the head part's slot to emit (stage 1 done) or emit2 (stage 2 done), on the driving
 * thread (mu held; dropped meanwhile). Returns the status. */
static int emit_head(struct pdrive *pd, int second, struct tp_diag *d)
{
	size_t q = second ? pd->head2 : pd->head;
	struct pslot *sl = &pd->slot[q % pd->nslots];
	unlock(pd);
	int st = sl->status;
	if (st && d && d->status == TP_OK)
		*d = sl->d;
	if (!st)
		st = second ? pd->pp->emit2(pd->sink->ctx, q % pd->nslots)
		            : pd->pp->emit(pd->sink->ctx, q % pd->nslots);
	if (!st && (second || !pd->pp->work2)) {
		const struct part *p = &pd->parts[q];
		tp_progress_report(pd->pl->dts[p->ti].base_id + p->k1, pd->pl->total_slices);
	}
	lock(pd);
	if (second) {
		sl->state = PS_FREE;
		pd->head2++;
	} else {
		pd->head++;
		if (pd->pp->work2) {
			sl->state = PS_EMITTED;
		} else {
			sl->state = PS_FREE;
			pd->head2++;
			pd->open--;
		}
	}
	/* An emit makes at most one job (a second stage, or a walk in the slot it frees): one
	 * worker woken, not all of them (a wake costs the driving thread, which is the ring's
	 * serial path, and every woken worker takes the lock it needs to emit). */
	if (pd->locking)
		pthread_cond_signal(&pd->sync.cv_job);
	return st;
}

/* With a lean ring and this many workers or more, the driving thread only emits. A part it
 * walks or encodes itself holds up every emit for that long, and a lean ring lets only three
 * parts open beyond the threads: the workers then finish their parts and wait for the
 * emits, so above about four workers such a part costs more worker time than it gives. */
#define LEAN_EMIT_ONLY 5

/* The driving thread: emits in part order what is ready, and otherwise works like a worker
 * (parts' walks and second stages, marked parallel) unless LEAN_EMIT_ONLY says not to.
 * Returns the first error (with d set). */
static int drive_ring(struct pdrive *pd, struct tp_diag *d)
{
	int st = TP_OK, helps = !pd->pp->lean || pd->nworkers < LEAN_EMIT_ONLY;
	lock(pd);
	while (pd->head2 < pd->nparts && !st) {
		size_t i;
		int second;
		if (pd->head2 < pd->head && pd->slot[pd->head2 % pd->nslots].state == PS_DONE2)
			st = emit_head(pd, 1, d);
		else if (pd->head < pd->nparts &&
		         pd->slot[pd->head % pd->nslots].state == PS_WALKED && pd->head < pd->next)
			st = emit_head(pd, 0, d);
		else if (helps && take_work(pd, &i, &second)) {
			unlock(pd);
			tp_tm_par_begin();
			do_work(pd, &pd->thr[0], i, second);
			tp_tm_par_end();
		} else if (pd->locking) {
			pthread_cond_wait(&pd->sync.cv_done, &pd->sync.mu);
		} else { /* not reached: alone, the driving thread always has work or output */
			st = tp_diag_set(d, TP_EUSAGE, "writing a trace: the parts stalled");
		}
	}
	pd->quit = 1;
	if (pd->locking)
		pthread_cond_broadcast(&pd->sync.cv_job);
	unlock(pd);
	return st;
}

/* Starts up to `want` workers; any failure leaves fewer (the driving thread walks the rest). */
static void workers_start(struct pdrive *pd, int want)
{
	if (want < 1 || tp_wsync_init(&pd->sync))
		return;
	pd->locking = 1;
	for (int k = 1; k <= want; k++) {
		struct pthr *th = &pd->thr[k];
		th->pd = pd;
		if (!(th->ss = tp_calloc(1, sizeof *th->ss)) ||
		    pthread_create(&th->th, NULL, worker_main, th))
			break;
		pd->nworkers++;
	}
	if (!pd->nworkers) {
		pd->locking = 0;
		tp_wsync_destroy(&pd->sync);
	}
}

static void workers_stop(struct pdrive *pd)
{
	if (!pd->locking)
		return;
	lock(pd);
	pd->quit = 1;
	pthread_cond_broadcast(&pd->sync.cv_job);
	unlock(pd);
	for (int k = 1; k <= pd->nworkers; k++)
		pthread_join(pd->thr[k].th, NULL);
	pd->locking = 0;
	tp_wsync_destroy(&pd->sync);
}

static void pdrive_free(struct pdrive *pd)
{
	for (size_t i = 0; pd->pos && i < pd->npos; i++)
		tp_sink_walker_free(&pd->pos[i]);
	TP_FREE_ALL(pd->pos, pd->parts, pd->longs, pd->pos0, pd->lstatus);
	for (int k = 0; pd->thr && k < MAX_PART_THREADS; k++) {
		tp_sink_walker_free(&pd->thr[k].wk);
		tp_free(pd->thr[k].ss);
	}
	tp_free(pd->thr);
	tp_free(pd->slot);
}

int tp_sink_deliver_parts(const struct plan *pl, const struct tp_sink *sink,
                          const struct tp_sink_parts *pp, struct tp_diag *d)
{
	struct pdrive pd;
	memset(&pd, 0, sizeof pd);
	pd.pl = pl;
	pd.sink = sink;
	pd.pp = pp;
	pd.psize = pp->part_slices ? pp->part_slices : TP_SINK_PART_SLICES;
	int want = tp_wsync_workers(pp->jobs, MAX_PART_THREADS - 1);
	int st = TP_OK;
	pd.thr = tp_calloc(MAX_PART_THREADS, sizeof *pd.thr);
	if (!pd.thr || !(pd.thr[0].ss = tp_calloc(1, sizeof *pd.thr[0].ss))) {
		st = tp_diag_set(d, TP_ENOMEM, "out of memory writing a trace");
		goto out;
	}
	pd.thr[0].pd = &pd;
	/* The first pass runs on as many threads as the parts will (tp_par_run). */
	if ((st = plan_parts(&pd, (unsigned)want + 1))) {
		st = tp_diag_set(d, st, "out of memory planning trace parts");
		goto out;
	}
	if (pd.nparts < 2)
		want = 0;
	else if ((size_t)want > pd.nparts - 1)
		want = (int)(pd.nparts - 1);
	pd.nslots = want ? 2 * ((size_t)want + 1) : 1;
	pd.max_open = pp->lean && (size_t)want + 3 < pd.nslots ? (size_t)want + 3 : pd.nslots;
	pd.slot = tp_calloc(pd.nslots, sizeof *pd.slot);
	if (!pd.slot) {
		st = tp_diag_set(d, TP_ENOMEM, "out of memory writing a trace");
		goto out;
	}
	if ((st = pp->slots(sink->ctx, pd.nslots)))
		goto out;
	workers_start(&pd, want);
	st = drive_ring(&pd, d);
	workers_stop(&pd);
out:
	pdrive_free(&pd);
	return st;
}

int tp_sink_pwrite(int fd, const void *p, size_t n, uint64_t off)
{
	const char *q = p;
	while (n) {
		size_t k = n < TP_WRITE_PIECE ? n : TP_WRITE_PIECE;
		ssize_t r = pwrite(fd, q, k, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 && errno ? errno : EIO;
		q += r;
		off += (uint64_t)r;
		n -= (size_t)r;
	}
	return 0;
}
