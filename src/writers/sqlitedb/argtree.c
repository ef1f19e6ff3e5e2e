/*
 * argtree.c — tables written as b-tree pages (btree.c) on --jobs threads instead of inserted
 * through SQLite on one: the argument table arg_value (WITHOUT ROWID) and the slice table (a
 * rowid table), each with its indexes.
 *
 * The caller hands over its rows in blocks (struct sqb_block: the rows stay the caller's, read
 * back when the part is packed); a part closes when its blocks' cells may need more than
 * PART_BOUND bytes or the blocks hold more than PART_MEM (bounds computed from the rows,
 * never from --jobs) and is packed into leaf
 * pages by a worker, or by the caller's thread itself when it has none or every slot is busy;
 * the worker also encodes the part's index entries and sorts them, then gives the blocks
 * back. Parts take their places in a spool file in order (a part's first page is the sum of
 * its predecessors' page counts) and each is written by a thread that packed it or placed it,
 * concurrently with the others. Its separators and index entries stay in memory (one
 * separator per leaf, one entry per row and index). Once SQLite has written the other tables
 * and closed the database, sqb_tree_join (treejoin.c) joins the trees to it: the same bytes
 * for every --jobs, since the parts' bounds, their packing and their order depend on the rows
 * only.
 *
 * Rows whose record would need overflow pages (texts of more than SQB_LONG_TEXT bytes) are the
 * caller's to keep out (its block's row callback skips them) and to insert through SQLite.
 *
 * Owns: the parts and their threads, the spool file (removed by sqb_tree_free unless it became
 * the database), the index runs; a block until it is given back.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/timings.h"
#include "common/wsync.h"
#include "writers/sqlitedb/sqlitedb_int.h"

/* A leaf closes only when the next cell (at most SQB_MAX_CELL bytes and its pointer) does
 * not fit, so each holds at least this many bytes of cells and pointers. */
#define LEAF_MIN_FILL (SQB_PAGE - 8 - (SQB_MAX_CELL + 2))
/* A part's bound of cell and pointer bytes (about 30 000 rows of a Sophgo dump: 0.7 MB of
 * pages, 1.4 MB of rows). */
#define PART_BOUND ((size_t)500 * LEAF_MIN_FILL)
/* A part's bound of the bytes its blocks hold (a block may be shared with another tree, whose
 * rows in it are few: this keeps a part from holding many blocks alive). */
#define PART_MEM ((size_t)4 << 20)

int sqb_write_all(int fd, const void *p, size_t len, off_t at, int *err)
{
	for (size_t done = 0; done < len;) {
		ssize_t w = pwrite(fd, (const char *)p + done, len - done, at + (off_t)done);
		if (w <= 0) {
			*err = w < 0 ? errno : EIO;
			return TP_EOUTPUT;
		}
		done += (size_t)w;
	}
	return TP_OK;
}

/* ---- packing a part (any thread) -------------------------------------------------------- */

int sqb_ent_cmp(const void *x, const void *y)
{
	return sqb_cell_cmp(*(const uint8_t *const *)x, *(const uint8_t *const *)y);
}

/* Row v's entry of index x appended to run u (none where the index leaves it out). */
static int index_entry(const struct sqb_tree *t, const struct sqb_index_def *x,
                       const struct sqb_val *v, struct run *u)
{
	struct sqb_val e[SQB_MAX_COLS];
	uint8_t cell[SQB_MAX_CELL];
	int n = 0;
	if (x->not_null >= 0 && v[x->not_null].type == SQB_NULL)
		return TP_OK;
	for (int c = 0; c < x->ncols; c++)
		e[n++] = v[x->cols[c]];
	for (int c = 0; c < (t->def.rowid ? 1 : t->def.nkey); c++)
		e[n++] = v[c];
	size_t len = sqb_cell(cell, e, n);
	if (!len)
		return TP_ENOMEM; /* not reached: SQB_LONG_TEXT keeps every entry short */
	if (u->n == u->cap) {
		size_t *o = tp_grow(u->off, sizeof *o, u->n + 1, &u->cap);
		if (!o)
			return TP_ENOMEM;
		u->off = o;
	}
	u->off[u->n++] = u->cells.len;
	tp_buf_put(&u->cells, cell, len);
	return u->cells.oom ? TP_ENOMEM : TP_OK;
}

/* Run u's cells rewritten in index order (u->off then holds their new offsets). */
static int run_reorder(struct run *u)
{
	const uint8_t *base = (const uint8_t *)u->cells.data;
	const uint8_t **ent = tp_malloc(u->n * sizeof *ent);
	char *sorted = tp_malloc(u->cells.len);
	if (!ent || !sorted) {
		tp_free(ent);
		tp_free(sorted);
		return TP_ENOMEM;
	}
	for (size_t i = 0; i < u->n; i++)
		ent[i] = base + u->off[i];
	qsort(ent, u->n, sizeof *ent, sqb_ent_cmp);
	for (size_t i = 0, at = 0; i < u->n; i++) {
		size_t len = sqb_cell_len(ent[i]);
		memcpy(sorted + at, ent[i], len);
		u->off[i] = at;
		at += len;
	}
	tp_free(ent);
	tp_free(u->cells.data);
	u->cells.data = sorted;
	u->cells.cap = u->cells.len;
	return TP_OK;
}

/* Run u's entries in index order, back to back, and their marks: what is held until the join
 * (no pointer per entry). */
static int run_sort(struct run *u)
{
	if (!u->n)
		return TP_OK;
	if (!(u->mark = tp_malloc((u->n + RUN_MARK - 1) / RUN_MARK * sizeof *u->mark)))
		return TP_ENOMEM;
	/* Most runs come in order or nearly (an index led by the rowid or by a column that
	 * grows with it): the check stops at the first entry out of order. */
	const uint8_t *base = (const uint8_t *)u->cells.data;
	size_t i = 1;
	while (i < u->n && sqb_cell_cmp(base + u->off[i - 1], base + u->off[i]) < 0)
		i++;
	if (i < u->n) {
		if (run_reorder(u))
			return TP_ENOMEM;
	} else if (u->cells.cap > u->cells.len) { /* the growth slack given back */
		char *c = tp_realloc(u->cells.data, u->cells.len);
		if (c) {
			u->cells.data = c;
			u->cells.cap = u->cells.len;
		}
	}
	for (i = 0; i < u->n; i += RUN_MARK)
		u->mark[i / RUN_MARK] = u->off[i];
	tp_free(u->off);
	u->off = NULL;
	u->cap = 0;
	return TP_OK;
}

/* Packs part p: its leaves in p->pk, its separators and sorted index entries in its meta. */
static int pack_part(struct sqb_tree *t, struct part *p)
{
	struct meta *m = p->m;
	struct sqb_pack *k = &p->pk;
	uint8_t cell[SQB_MAX_CELL];
	struct sqb_val v[SQB_MAX_COLS];
	int st = TP_OK;
	sqb_pack_reset(k);
	for (size_t b = 0; b < p->nblocks && !st; b++)
		for (size_t i = 0; i < p->blocks[b].nrows && !st; i++) {
			if (!p->blocks[b].row(p->blocks[b].ctx, i, v))
				continue; /* kept aside by the caller */
			size_t len;
			if (t->def.rowid) { /* the INTEGER PRIMARY KEY is the cell's key, NULL in
				             * the record
				             */
				struct sqb_val key = v[0];
				v[0] = (struct sqb_val){.type = SQB_NULL};
				len = sqb_table_cell(cell, key.i, v, t->def.ncols);
				v[0] = key;
			} else {
				len = sqb_cell(cell, v, t->def.ncols);
			}
			if (!len || sqb_pack_add(k, cell, len))
				return TP_ENOMEM;
			for (int x = 0; x < t->def.nidx && !st; x++)
				st = index_entry(t, &t->def.idx[x], v, &m->ix[x]);
		}
	for (int x = 0; x < t->def.nidx && !st; x++)
		st = run_sort(&m->ix[x]);
	if (st || sqb_pack_end(k, p->last) || k->seps.oom)
		return TP_ENOMEM;
	m->npages = k->npages;
	m->nseps = k->nseps;
	/* The separators move to the meta; the pages stay until they are written. */
	m->seps = k->seps;
	m->sep_off = k->sep_off;
	tp_buf_init(&k->seps);
	k->sep_off = NULL;
	k->cap_seps = 0;
	return TP_OK;
}

/* Gives part p's blocks back to their owners. */
static void release_blocks(struct part *p)
{
	for (size_t b = 0; b < p->nblocks; b++)
		if (p->blocks[b].release)
			p->blocks[b].release(p->blocks[b].ctx);
	p->nblocks = p->cells = p->bound = p->mem = 0;
}

static void part_free(struct sqb_tree *t, struct part *p)
{
	release_blocks(p);
	p->m->part = NULL;
	p->state = P_FREE;
	if (t->nthreads)
		pthread_cond_broadcast(&t->sync.cv_done);
}

static void fail(struct sqb_tree *t, int st, int err)
{
	if (st && !t->status) {
		t->status = st;
		t->err = err;
	}
}

/* Places the packed parts that are next in order, then writes them (outside the lock; other
 * threads write theirs meanwhile) and frees their slots. After a failure, packed parts are
 * dropped instead. Threads: called and returns with mu held. */
static void place_and_write(struct sqb_tree *t)
{
	struct part *mine[TREE_WORKERS + 2];
	size_t n = 0;
	if (t->status) {
		for (size_t i = 0; i < t->nslots; i++)
			if (t->slot[i].state == P_PACKED)
				part_free(t, &t->slot[i]);
		return;
	}
	while (t->placed < t->nmetas && t->metas[t->placed]->packed) {
		struct meta *m = t->metas[t->placed++];
		m->base = t->next_page;
		t->next_page += m->npages;
		m->part->state = P_WRITING;
		mine[n++] = m->part;
	}
	if (!n)
		return;
	if (t->nthreads)
		pthread_mutex_unlock(&t->sync.mu);
	int st = TP_OK, err = 0;
	for (size_t i = 0; i < n && !st; i++) {
		const struct meta *m = mine[i]->m;
		st = sqb_write_all(t->fd, mine[i]->pk.pages, m->npages * SQB_PAGE,
		                   (off_t)m->base * SQB_PAGE, &err);
	}
	if (t->nthreads)
		pthread_mutex_lock(&t->sync.mu);
	fail(t, st, err);
	for (size_t i = 0; i < n; i++)
		part_free(t, mine[i]);
}

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Packs a BUSY part, then places and writes what is ready. Threads: called and returns with
 * mu held. */
static void pack_and_place(struct sqb_tree *t, struct part *p)
{
	if (t->nthreads)
		pthread_mutex_unlock(&t->sync.mu);
	tp_tm_par_begin();
	double t0 = t->timed ? thread_cpu_s() : 0;
	int st = pack_part(t, p);
	release_blocks(p); /* their rows are in the pages and index runs now */
	double secs = t->timed ? thread_cpu_s() - t0 : 0;
	tp_tm_par_end();
	if (t->nthreads)
		pthread_mutex_lock(&t->sync.mu);
	t->pack_secs += secs;
	fail(t, st, 0);
	p->state = P_PACKED;
	p->m->packed = !st;
	if (st)
		part_free(t, p);
	tp_tm_par_begin();
	place_and_write(t);
	tp_tm_par_end();
}

/* The oldest queued part (lowest sequence number), marked BUSY, or NULL. Threads: mu held. */
static struct part *take_queued(struct sqb_tree *t)
{
	struct part *best = NULL;
	for (size_t i = 0; i < t->nslots; i++) {
		struct part *p = &t->slot[i];
		if (p->state == P_QUEUED && (!best || p->m->seq < best->m->seq))
			best = p;
	}
	if (best)
		best->state = P_BUSY;
	return best;
}

/* Packs the oldest queued part, if any: 1 if it did. Threads: mu held. */
static int pack_queued(void *arg)
{
	struct sqb_tree *t = arg;
	struct part *p = take_queued(t);
	if (p)
		pack_and_place(t, p);
	return p != NULL;
}

/* ---- the sink's side --------------------------------------------------------------------- */

static void workers_start(struct sqb_tree *t)
{
	t->nthreads = tp_wsync_start(&t->sync, t->th, t->jobs, TREE_WORKERS, pack_queued, t);
}

static void workers_stop(struct sqb_tree *t)
{
	if (!t->nthreads)
		return;
	tp_wsync_stop(&t->sync, t->th, t->nthreads);
	t->nthreads = 0;
}

struct sqb_tree *sqb_tree_new(const struct sqb_tree_def *def, const char *spool_path, int jobs,
                              int *err)
{
	struct sqb_tree *t = tp_calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->def = *def;
	t->tune = sqb_join_default;
	t->fd = t->db = -1;
	t->jobs = jobs;
	int workers = tp_wsync_workers(jobs, TREE_WORKERS);
	t->nslots = (size_t)(workers > 0 ? workers : 0) + 2;
	t->slot = tp_calloc(t->nslots, sizeof *t->slot);
	t->spool = tp_strdup(spool_path);
	if (!t->slot || !t->spool) {
		sqb_tree_free(t);
		return NULL;
	}
	for (size_t i = 0; i < t->nslots; i++) {
		sqb_pack_init(&t->slot[i].pk);
		if (def->rowid)
			sqb_pack_table(&t->slot[i].pk);
	}
	/* The file exists, empty (tp_temp_path_for); not created here, as db_create says. No
	 * O_TRUNC: on ext4 (auto_da_alloc) a truncate to zero marks the file, and its close then
	 * allocates and submits the writeback of the whole file in the closing thread, a stall
	 * of the driving thread after the join for the spool that becomes the database. */
	if ((t->fd = open(spool_path, O_RDWR | O_CLOEXEC)) < 0) {
		*err = errno ? errno : EIO;
		t->status = TP_EOUTPUT;
	}
	return t;
}

int sqb_tree_status(const struct sqb_tree *t, int *err)
{
	*err = t->err;
	return t->status;
}

/* A FREE slot made the part being filled, with a new meta; waits (packing queued parts
 * itself) while every slot is in use. */
static int start_part(struct sqb_tree *t)
{
	if (!t->nthreads && !t->nmetas)
		workers_start(t); /* at the first row: a table without rows needs none */
	struct meta *m = tp_calloc(1, sizeof *m);
	if (!m)
		return TP_ENOMEM;
	tp_buf_init(&m->seps);
	if (t->nthreads) /* the metas are read by place_and_write under mu */
		pthread_mutex_lock(&t->sync.mu);
	struct meta **ms = tp_grow(t->metas, sizeof *ms, t->nmetas + 1, &t->cap_metas);
	if (!ms) {
		if (t->nthreads)
			pthread_mutex_unlock(&t->sync.mu);
		tp_free(m);
		return TP_ENOMEM;
	}
	t->metas = ms;
	m->seq = t->nmetas;
	t->metas[t->nmetas++] = m;
	struct part *p = NULL;
	for (;;) {
		for (size_t i = 0; i < t->nslots && !p; i++)
			if (t->slot[i].state == P_FREE)
				p = &t->slot[i];
		if (p || !t->nthreads)
			break;
		if (!pack_queued(t))
			pthread_cond_wait(&t->sync.cv_done, &t->sync.mu);
	}
	p->state = P_FILLING;
	p->last = 0;
	p->m = m;
	m->part = p;
	int st = t->status;
	if (t->nthreads)
		pthread_mutex_unlock(&t->sync.mu);
	t->cur = p;
	return st;
}

/* Queues the part being filled (or packs it at once without workers). */
static int queue_cur(struct sqb_tree *t, int last)
{
	struct part *p = t->cur;
	t->cur = NULL;
	p->last = last;
	if (!t->nthreads) {
		p->state = P_BUSY;
		pack_and_place(t, p);
		return t->status;
	}
	pthread_mutex_lock(&t->sync.mu);
	p->state = P_QUEUED;
	pthread_cond_signal(&t->sync.cv_job);
	int st = t->status;
	pthread_mutex_unlock(&t->sync.mu);
	return st;
}

int sqb_tree_add_block(struct sqb_tree *t, const struct sqb_block *b)
{
	int st;
	if (t->status || !b->cells) {
		if (b->release)
			b->release(b->ctx);
		return t->status;
	}
	if (t->cur && t->cur->cells >= 2 &&
	    (t->cur->bound + b->bound > PART_BOUND || t->cur->mem + b->mem > PART_MEM) &&
	    (st = queue_cur(t, 0))) {
		if (b->release)
			b->release(b->ctx);
		return st;
	}
	if (!t->cur && (st = start_part(t))) {
		if (b->release)
			b->release(b->ctx);
		return st;
	}
	struct part *p = t->cur;
	if (p->nblocks == p->cap_blocks) {
		struct sqb_block *n = tp_grow(p->blocks, sizeof *n, p->nblocks + 1, &p->cap_blocks);
		if (!n) {
			if (b->release)
				b->release(b->ctx);
			return TP_ENOMEM;
		}
		p->blocks = n;
	}
	p->blocks[p->nblocks++] = *b;
	p->cells += b->cells;
	p->bound += b->bound;
	p->mem += b->mem;
	t->rows += b->cells;
	return TP_OK;
}

int sqb_tree_finish(struct sqb_tree *t)
{
	int st = TP_OK;
	if (t->cur)
		st = queue_cur(t, 1);
	if (t->nthreads) {
		pthread_mutex_lock(&t->sync.mu);
		for (;;) {
			int busy = 0;
			for (size_t i = 0; i < t->nslots; i++)
				busy |= t->slot[i].state != P_FREE;
			if (!busy)
				break;
			if (!pack_queued(t))
				pthread_cond_wait(&t->sync.cv_done, &t->sync.mu);
		}
		pthread_mutex_unlock(&t->sync.mu);
	}
	workers_stop(t);
	/* Every part is written: the slots' page buffers are not kept through the join, which
	 * needs the memory. */
	for (size_t i = 0; t->slot && i < t->nslots; i++) {
		tp_free(t->slot[i].blocks);
		t->slot[i].blocks = NULL;
		t->slot[i].cap_blocks = 0;
		sqb_pack_free(&t->slot[i].pk);
	}
	return st ? st : t->status;
}

void sqb_tree_timed(struct sqb_tree *t)
{
	t->timed = 1;
}

double sqb_tree_pack_secs(const struct sqb_tree *t)
{
	return t->pack_secs;
}

uint64_t sqb_tree_rows(const struct sqb_tree *t)
{
	return t->rows;
}

void sqb_seps_free(struct meta *m)
{
	tp_buf_free(&m->seps);
	tp_free(m->sep_off);
	m->sep_off = NULL;
	m->nseps = 0;
}

void sqb_run_free(struct run *u)
{
	tp_buf_free(&u->cells);
	tp_free(u->off);
	tp_free(u->mark);
	u->off = u->mark = NULL;
	u->n = u->cap = 0;
}

void sqb_tree_free(struct sqb_tree *t)
{
	if (!t)
		return;
	if (t->nthreads)
		pthread_mutex_lock(&t->sync.mu);
	if (t->cur) { /* a failed drive: the part being filled is dropped */
		release_blocks(t->cur);
		t->cur->state = P_FREE;
		t->cur = NULL;
	}
	t->status = t->status ? t->status : TP_ENOMEM; /* queued parts are dropped unwritten */
	if (t->nthreads)
		pthread_mutex_unlock(&t->sync.mu);
	sqb_tree_finish(t);
	if (t->fd >= 0) {
		close(t->fd);
		if (!t->renamed)
			unlink(t->spool);
	}
	if (t->db >= 0)
		close(t->db);
	tp_free(t->spool);
	for (size_t i = 0; i < t->nmetas; i++) {
		sqb_seps_free(t->metas[i]);
		for (int x = 0; x < SQB_MAX_IDX; x++)
			sqb_run_free(&t->metas[i]->ix[x]);
		tp_free(t->metas[i]);
	}
	tp_free(t->metas);
	tp_free(t->slot);
	tp_free(t);
}
