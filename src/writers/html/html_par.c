/*
 * html_par.c — the page's data written as parts on --jobs threads. The data is a list of parts
 * in page order (a lane's facts, one column of a lane, a column of the layer table, a section),
 * each cut where the data puts the boundary, never by the thread count. Strings are numbered
 * in the order the page first uses them, so that number must be known before any part that
 * uses a string is written: first the "finds" (small pieces of the same walk: the strings of a
 * range of rows, or a whole small section run with html_smap recording) each record the
 * strings they use, in order, on the threads; then they are numbered in page order, also on
 * the threads (number_found); then the parts are written on the threads, each into its own
 * buffer, with html_smap only reading the numbers, and go to the file in order, whoever
 * finishes the next one. Memory in flight is bounded by byte budgets that do not grow with
 * the thread count: a part past the next one to write starts only while the finished parts
 * waiting for an earlier one hold less than a budget (c->budgets.held), written buffers are
 * kept for reuse up to another, and the column buffers (4 bytes a layer each) are lent up to
 * a third (at least two). A capture's page is written on the calling thread in one pass, its
 * parts in order with html_smap numbering as it goes.
 *
 * Owns nothing beyond one call of html_parts_write: the buffers, the column buffers, the
 * per-thread scratch (string bits, layer memo), the find lists and the numbering's arrays are
 * released before it returns.
 */
#include "writers/html/html_int.h"

#include "common/timings.h"

#include <pthread.h>
#include <string.h>

/* held: bytes (allocated) of the finished parts waiting for an earlier one; past it, only the
 * next part to write starts. A thread may start one part just under it, so the most held is
 * this plus a part per thread (a part is one column of a lane: at most a few MB).
 * pool: bytes of written buffers kept for the next parts (no new pages to fault in).
 * vals: bytes of column buffers lent at once (html_vals); at least VALS_MIN_BUFS of them. */
const struct html_budgets html_budgets_default = {(size_t)8 << 20, (size_t)8 << 20,
                                                  (size_t)16 << 20};
#define POOL_MAX 64
#define VALS_MIN_BUFS 2

void html_part_add(struct parts *ps, part_fn fn, const void *u, size_t a, size_t b, int k)
{
	struct part *g = tp_grow(ps->v, sizeof *ps->v, ps->n + 1, &ps->cap);
	if (!g) {
		ps->oom = 1;
		return;
	}
	ps->v = g;
	ps->v[ps->n++] = (struct part){fn, u, a, b, k};
}

size_t html_lane_ranges(const struct lane *lanes, size_t nl, struct html_lrange **out)
{
	size_t n = 0, cap = 0;
	struct html_lrange *v = NULL;
	for (size_t i = 0; i < nl; i++)
		for (size_t a = 0; a < lanes[i].n; a += HTML_ROWS_PART) {
			struct html_lrange *g = tp_grow(v, sizeof *v, n + 1, &cap);
			if (!g) {
				tp_free(v);
				*out = NULL;
				return 0;
			}
			v = g;
			v[n++] = (struct html_lrange){
			    &lanes[i], a,
			    lanes[i].n - a > HTML_ROWS_PART ? a + HTML_ROWS_PART : lanes[i].n};
		}
	*out = v ? v : tp_calloc(1, sizeof *v);
	return n;
}

/* Per-thread scratch: a part takes a free one while it runs. */
struct slot {
	uint64_t *seen; /* finds: one bit per profile string, all clear between finds */
	struct tp_layer_memo memo;
	struct slot *next;
};

struct html_run {
	const struct ctx *c;
	const struct parts *ps;
	struct strrec *recs; /* finds: one list each */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct slot *free_slots;
	struct tp_buf *done;          /* parts: the finished buffers not yet written */
	size_t held;                  /* their bytes (allocated), but for the next one's */
	struct tp_buf pool[POOL_MAX]; /* written buffers kept for the next parts (emptied,
	                                 still allocated), pool_bytes in all */
	size_t npool, pool_bytes;
	int32_t **vfree; /* column buffers not lent (nvfree), vmade made of at most vmax */
	size_t nvfree, vmade, vmax;
	uint8_t *ready;
	size_t next;
	int writing, err, miss;
};

static struct slot *slot_get(struct html_run *r)
{
	pthread_mutex_lock(&r->mu);
	struct slot *s = r->free_slots;
	if (s)
		r->free_slots = s->next;
	pthread_mutex_unlock(&r->mu);
	if (!s)
		s = tp_calloc(1, sizeof *s);
	return s;
}

static void slot_put(struct html_run *r, struct slot *s)
{
	pthread_mutex_lock(&r->mu);
	s->next = r->free_slots;
	r->free_slots = s;
	pthread_mutex_unlock(&r->mu);
}

static void slots_free(struct html_run *r)
{
	while (r->free_slots) {
		struct slot *s = r->free_slots;
		r->free_slots = s->next;
		tp_free(s->seen);
		tp_free(s);
	}
}

static void set_err(struct html_run *r, int err)
{
	pthread_mutex_lock(&r->mu);
	if (!r->err)
		r->err = err;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* The context one part runs in: the page's, with its own buffer (no file), the slot's scratch
 * and html_smap recording into rec (a find) or only reading (a part). */
static struct ctx part_ctx(struct html_run *r, struct slot *s, struct strrec *rec)
{
	struct ctx pc = *r->c;
	tp_buf_init(&pc.o.b);
	pc.o.f = NULL;
	pc.o.err = 0;
	pc.sm.rec = rec;
	pc.sm.frozen = !rec;
	pc.sm.miss = &r->miss;
	memset(&s->memo, 0, sizeof s->memo);
	pc.memo = &s->memo;
	pc.vals = NULL;
	pc.run = r;
	return pc;
}

int32_t *html_vals(struct ctx *c, size_t n)
{
	if (!n || n > c->cap_vals)
		return NULL;
	if (c->vals || !c->run)
		return c->vals;
	struct html_run *r = c->run;
	int make = 0;
	pthread_mutex_lock(&r->mu);
	if (r->nvfree)
		c->vals = r->vfree[--r->nvfree];
	else if (r->vmade < r->vmax)
		make = 1, r->vmade++;
	pthread_mutex_unlock(&r->mu);
	if (make && !(c->vals = tp_malloc(c->cap_vals * sizeof *c->vals))) {
		pthread_mutex_lock(&r->mu);
		r->vmade--;
		pthread_mutex_unlock(&r->mu);
	}
	return c->vals;
}

/* Gives back the column buffer part context pc borrowed (with r->mu held). */
static void vals_put(struct html_run *r, struct ctx *pc)
{
	if (pc->vals)
		r->vfree[r->nvfree++] = pc->vals;
	pc->vals = NULL;
}

static void find_one(void *arg, size_t k)
{
	struct html_run *r = arg;
	struct slot *s = slot_get(r);
	if (s && !s->seen)
		s->seen = tp_calloc(r->c->sm.nprof / 64 + 1, sizeof *s->seen);
	if (!s || !s->seen) {
		if (s)
			slot_put(r, s);
		set_err(r, TP_ENOMEM);
		return;
	}
	/* Recorded on the stack and stored once: the records sit side by side, and the finds
	 * beside this one record into theirs on other threads. */
	struct strrec local = r->recs[k], *rec = &local;
	rec->seen = s->seen;
	struct ctx pc = part_ctx(r, s, rec);
	r->ps->v[k].fn(&pc, &r->ps->v[k]);
	for (size_t i = 0; i < rec->n; i++)
		s->seen[rec->ids[i] / 64] &= ~((uint64_t)1 << (rec->ids[i] % 64));
	rec->seen = NULL;
	r->recs[k] = local;
	if (pc.vals) {
		pthread_mutex_lock(&r->mu);
		vals_put(r, &pc);
		pthread_mutex_unlock(&r->mu);
	}
	if (pc.o.b.oom || pc.o.err == TP_ENOMEM || rec->oom)
		set_err(r, TP_ENOMEM);
	tp_buf_free(&pc.o.b);
	slot_put(r, s);
}

/* Keeps written buffer b for the next parts while the pool has room, else frees it. */
static void pool_put(struct html_run *r, struct tp_buf *b)
{
	if (!b->oom && b->cap && r->npool < POOL_MAX &&
	    r->pool_bytes + b->cap <= r->c->budgets.pool) {
		b->len = 0;
		r->pool_bytes += b->cap;
		r->pool[r->npool++] = *b;
	} else {
		tp_buf_free(b);
	}
}

/* Writes the finished parts from r->next on, in order, while they are ready; one thread at a
 * time (r->writing). Called and returns with r->mu held. The file write is one-thread work
 * whichever thread does it: counted as serial. */
static void write_ready(struct html_run *r)
{
	if (r->writing)
		return;
	r->writing = 1;
	while (r->next < r->ps->n && r->ready[r->next]) {
		struct tp_buf b = r->done[r->next];
		memset(&r->done[r->next], 0, sizeof b);
		r->next++;
		/* The new next part's bytes no longer count as waiting. */
		if (r->next < r->ps->n && r->ready[r->next])
			r->held -= r->done[r->next].cap;
		pthread_cond_broadcast(&r->cv);
		int err = r->err;
		pthread_mutex_unlock(&r->mu);
		if (!err && b.len) {
			tp_tm_solo_begin();
			if (tp_afile_write(r->c->o.f, b.data, b.len) != 0)
				err = TP_EOUTPUT;
			tp_tm_solo_end();
		}
		pthread_mutex_lock(&r->mu);
		pool_put(r, &b);
		if (err && !r->err)
			r->err = err;
	}
	r->writing = 0;
}

static void part_one(void *arg, size_t k)
{
	struct html_run *r = arg;
	pthread_mutex_lock(&r->mu);
	while (k != r->next && r->held >= r->c->budgets.held && !r->err)
		pthread_cond_wait(&r->cv, &r->mu);
	int err = r->err;
	struct tp_buf b;
	if (r->npool) {
		b = r->pool[--r->npool];
		r->pool_bytes -= b.cap;
	} else {
		tp_buf_init(&b);
	}
	pthread_mutex_unlock(&r->mu);
	struct ctx pc = {0};
	if (!err) {
		struct slot *s = slot_get(r);
		if (!s) {
			err = TP_ENOMEM;
		} else {
			pc = part_ctx(r, s, NULL);
			pc.o.b = b;
			r->ps->v[k].fn(&pc, &r->ps->v[k]);
			b = pc.o.b;
			err = b.oom ? TP_ENOMEM : pc.o.err;
			slot_put(r, s);
		}
	}
	pthread_mutex_lock(&r->mu);
	vals_put(r, &pc);
	if (err && !r->err)
		r->err = err;
	r->done[k] = b;
	r->ready[k] = 1;
	if (k != r->next)
		r->held += b.cap;
	write_ready(r);
	pthread_mutex_unlock(&r->mu);
}

/* Numbering the strings the finds recorded, in page order: a string's number is its place
 * among the first uses, find after find, each find's list in its own order. On the threads:
 * each string's first find (an atomic minimum), then per find the strings it is first to use,
 * then (after a prefix over the finds' counts, O(finds)) their numbers. */
struct num_run {
	const struct strrec *recs;
	struct strmap *sm;
	uint32_t *first; /* per profile string: its first find + 1, 0 = none */
	size_t *at;      /* per find: how many strings it is first to use, then the first one's
	                    number */
};

static void first_one(void *arg, size_t k)
{
	struct num_run *w = arg;
	uint32_t me = (uint32_t)k + 1;
	for (size_t i = 0; i < w->recs[k].n; i++) {
		uint32_t *f = &w->first[w->recs[k].ids[i]];
		uint32_t cur = __atomic_load_n(f, __ATOMIC_RELAXED);
		while ((!cur || cur > me) &&
		       !__atomic_compare_exchange_n(f, &cur, me, 1, __ATOMIC_RELAXED,
		                                    __ATOMIC_RELAXED))
			;
	}
}

static void count_one(void *arg, size_t k)
{
	struct num_run *w = arg;
	size_t n = 0;
	for (size_t i = 0; i < w->recs[k].n; i++)
		n += w->first[w->recs[k].ids[i]] == k + 1;
	w->at[k] = n;
}

static void assign_one(void *arg, size_t k)
{
	struct num_run *w = arg;
	size_t j = w->at[k];
	for (size_t i = 0; i < w->recs[k].n; i++) {
		uint32_t id = w->recs[k].ids[i];
		if (w->first[id] != k + 1)
			continue;
		w->sm->inv[j] = id;
		w->sm->idx[id] = (uint32_t)++j;
	}
}

/* Numbers the strings the n finds recorded (each lists a string once, none numbered
 * before), as html_smap would one after another. TP_OK or TP_ENOMEM. */
static int number_found(struct ctx *c, const struct strrec *recs, size_t n)
{
	struct num_run w = {recs, &c->sm, tp_calloc(c->sm.nprof, sizeof *w.first),
	                    tp_malloc((n ? n : 1) * sizeof *w.at)};
	if (!w.first || !w.at) {
		TP_FREE_ALL(w.first, w.at);
		return TP_ENOMEM;
	}
	tp_par_run(c->jobs, n, first_one, &w);
	tp_par_run(c->jobs, n, count_one, &w);
	for (size_t k = 0; k < n; k++) {
		size_t cnt = w.at[k];
		w.at[k] = c->sm.n;
		c->sm.n += cnt;
	}
	tp_par_run(c->jobs, n, assign_one, &w);
	TP_FREE_ALL(w.first, w.at);
	return TP_OK;
}

static int run_parallel(struct ctx *c, const struct parts *finds, const struct parts *ps)
{
	struct html_run r;
	memset(&r, 0, sizeof r);
	r.c = c;
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	unsigned jobs = c->jobs ? c->jobs : 1;
	r.recs = tp_calloc(finds->n ? finds->n : 1, sizeof *r.recs);
	r.done = tp_calloc(ps->n ? ps->n : 1, sizeof *r.done);
	r.ready = tp_calloc(ps->n ? ps->n : 1, 1);
	size_t vbytes = c->cap_vals * sizeof *c->vals;
	r.vmax = vbytes ? c->budgets.vals / vbytes : 0;
	if (r.vmax < VALS_MIN_BUFS)
		r.vmax = VALS_MIN_BUFS;
	if (r.vmax > jobs)
		r.vmax = jobs;
	r.vfree = tp_calloc(r.vmax, sizeof *r.vfree);
	if (!r.recs || !r.done || !r.ready || !r.vfree)
		r.err = TP_ENOMEM;
	if (!r.err) {
		r.ps = finds;
		tp_tm_begin("finds");
		tp_par_run(jobs, finds->n, find_one, &r);
		if (!r.err)
			r.err = number_found(c, r.recs, finds->n);
		tp_tm_end();
	}
	if (!r.err) {
		c->sm.frozen = 1;
		r.ps = ps;
		tp_tm_begin("parts");
		tp_par_run(jobs, ps->n, part_one, &r);
		tp_tm_end();
		if (!r.err && r.miss)
			r.err = HTML_EMISS;
	}
	for (size_t k = 0; r.recs && k < finds->n; k++)
		tp_free(r.recs[k].ids);
	for (size_t k = 0; r.done && k < ps->n; k++)
		tp_buf_free(&r.done[k]);
	for (size_t k = 0; k < r.npool; k++)
		tp_buf_free(&r.pool[k]);
	for (size_t k = 0; k < r.nvfree; k++)
		tp_free(r.vfree[k]);
	TP_FREE_ALL(r.vfree, r.recs, r.done, r.ready);
	slots_free(&r);
	pthread_cond_destroy(&r.cv);
	pthread_mutex_destroy(&r.mu);
	return r.err;
}

int html_parts_write(struct ctx *c, const struct parts *finds, const struct parts *ps)
{
	if (finds->oom || ps->oom)
		return TP_ENOMEM;
	if (!c->cap) {
		html_flush(&c->o, 1);
		if (c->o.err)
			return c->o.err;
		return run_parallel(c, finds, ps);
	}
	for (size_t k = 0; k < ps->n && !c->o.err; k++) {
		ps->v[k].fn(c, &ps->v[k]);
		html_flush(&c->o, 0);
	}
	return c->o.err;
}
