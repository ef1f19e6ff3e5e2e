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
 * and closed the database, sqb_tree_join makes the first tree's spool the database (SQLite's
 * pages copied in front, the few leaves they displace after the others), copies the other
 * spools after it (in pieces on --jobs threads: in the kernel where the file system can),
 * builds the interior pages over the leaves, merges each index's sorted runs into its pages
 * (in key ranges on --jobs threads) and sets the page count: the same bytes for every --jobs,
 * since the parts' bounds, their packing and their order depend on the rows only.
 *
 * Rows whose record would need overflow pages (texts of more than SQB_LONG_TEXT bytes) are the
 * caller's to keep out (its block's row callback skips them) and to insert through SQLite.
 *
 * Owns: the parts and their threads, the spool file (removed by sqb_tree_free unless it became
 * the database), the index runs; a block until it is given back.
 */
#define _GNU_SOURCE /* copy_file_range (glibc >= 2.27), fallocate's hole punching */
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
#define MAX_WORKERS 63
#define COPY_PIECE ((size_t)16 << 20) /* bytes of spool one thread copies at a time */

/* One index's entries of a part: cells back to back, sorted through ent. */
struct run {
	struct tp_buf cells;
	size_t *off;         /* while encoding: each entry's offset in cells */
	const uint8_t **ent; /* once sorted: the entries in index order */
	size_t n, cap;
};

/* What a packed part leaves for the join. */
struct meta {
	uint64_t seq;
	int packed;        /* its pages are known (their count) */
	struct part *part; /* the slot holding its pages until they are written */
	size_t npages, nseps, base;
	struct tp_buf seps;
	size_t *sep_off;
	struct run ix[SQB_MAX_IDX];
};

enum { P_FREE, P_FILLING, P_QUEUED, P_BUSY, P_PACKED, P_WRITING };

struct part {
	int state, last;
	struct sqb_block *blocks; /* its rows */
	size_t nblocks, cap_blocks, cells, bound, mem;
	struct meta *m;
	struct sqb_pack pk;
};

struct sqb_tree {
	struct sqb_tree_def def;
	char *spool;
	int fd, jobs;   /* the spool */
	int db;         /* the database, while sqb_tree_join writes it */
	uint32_t first; /* the database's page number of the first leaf */
	struct part *slot, *cur;
	size_t nslots;
	struct tp_wsync sync;
	pthread_t th[MAX_WORKERS];
	int nthreads;
	int status, err; /* the first failure of a part (TP_ENOMEM / TP_EOUTPUT and errno) */
	struct meta **metas;
	size_t nmetas, cap_metas;
	size_t placed, next_page; /* parts placed in the file so far; their pages */
	uint64_t rows;
	int timed; /* sqb_tree_timed: each part's packing is timed (a system call each) */
	/* The spool made the database (sqb_tree_join's first tree): its first `moved` leaves
	 * were copied to page moved_to on, the others are at their spool pages; renamed: the
	 * spool is the database's file now. */
	int adopted, renamed;
	size_t moved;
	uint32_t moved_to;
	double pack_secs; /* CPU seconds packing parts, all threads */
};

static int write_all(int fd, const void *p, size_t len, off_t at, int *err)
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

static int ent_cmp(const void *x, const void *y)
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

/* Run u's entries sorted (the offsets become pointers once the cells no longer move). */
static int run_sort(struct run *u)
{
	if (!u->n)
		return TP_OK;
	if (!(u->ent = tp_malloc(u->n * sizeof *u->ent)))
		return TP_ENOMEM;
	for (size_t i = 0; i < u->n; i++)
		u->ent[i] = (const uint8_t *)u->cells.data + u->off[i];
	tp_free(u->off);
	u->off = NULL;
	u->cap = 0;
	qsort(u->ent, u->n, sizeof *u->ent, ent_cmp);
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
	struct part *mine[MAX_WORKERS + 2];
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
		st = write_all(t->fd, mine[i]->pk.pages, m->npages * SQB_PAGE,
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
	t->nthreads = tp_wsync_start(&t->sync, t->th, t->jobs, MAX_WORKERS, pack_queued, t);
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
	t->fd = t->db = -1;
	t->jobs = jobs;
	int workers = tp_wsync_workers(jobs, MAX_WORKERS);
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
	/* The file exists (tp_temp_path_for); not created here, as db_create says. */
	if ((t->fd = open(spool_path, O_RDWR | O_TRUNC | O_CLOEXEC)) < 0) {
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
	for (size_t i = 0; t->slot && i < t->nslots; i++) {
		tp_free(t->slot[i].blocks);
		sqb_pack_free(&t->slot[i].pk);
	}
	for (size_t i = 0; i < t->nmetas; i++) {
		tp_buf_free(&t->metas[i]->seps);
		tp_free(t->metas[i]->sep_off);
		for (int x = 0; x < SQB_MAX_IDX; x++) {
			struct run *u = &t->metas[i]->ix[x];
			tp_buf_free(&u->cells);
			tp_free(u->off);
			tp_free(u->ent);
		}
		tp_free(t->metas[i]);
	}
	tp_free(t->metas);
	tp_free(t->slot);
	tp_free(t);
}

/* ---- the join ------------------------------------------------------------------------- */

static int page_write(void *ctx, uint32_t pgno, const uint8_t *page)
{
	struct sqb_tree *t = ctx;
	return write_all(t->db, page, SQB_PAGE, ((off_t)pgno - 1) * SQB_PAGE, &t->err);
}

/* Copies len bytes from the spool at `from` to the database at `to`: in the kernel where the
 * file system can, else through a buffer. */
static int copy_range(int in, int out, off_t from, off_t to, size_t len, int *err)
{
	while (len) {
		ssize_t c = copy_file_range(in, &from, out, &to, len, 0);
		if (c > 0) {
			len -= (size_t)c;
			continue;
		}
		if (c == 0 ||
		    (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)) {
			*err = c ? errno : EIO;
			return TP_EOUTPUT;
		}
		break; /* no kernel copy here: through a buffer */
	}
	static const size_t chunk = (size_t)1 << 20;
	char *buf = len ? tp_malloc(chunk) : NULL;
	if (len && !buf)
		return TP_ENOMEM;
	int st = TP_OK;
	while (len && !st) {
		ssize_t r = pread(in, buf, len < chunk ? len : chunk, from);
		if (r <= 0) {
			*err = r < 0 ? errno : EIO;
			st = TP_EOUTPUT;
			break;
		}
		st = write_all(out, buf, (size_t)r, to, err);
		from += r;
		to += r;
		len -= (size_t)r;
	}
	tp_free(buf);
	return st;
}

struct copy {
	struct sqb_tree *t;
	size_t len;      /* bytes of leaves in the spool */
	int *res, *errs; /* per piece */
};

static void copy_piece(void *arg, size_t k)
{
	struct copy *c = arg;
	size_t at = k * COPY_PIECE, n = c->len - at < COPY_PIECE ? c->len - at : COPY_PIECE;
	c->res[k] = copy_range(c->t->fd, c->t->db, (off_t)at,
	                       ((off_t)c->t->first - 1) * SQB_PAGE + (off_t)at, n, &c->errs[k]);
	/* The copied piece's disk space is given back at once (where the file system can), so
	 * the spool and the database's copy of it never both take the table's size. */
	if (!c->res[k])
		(void)fallocate(c->t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)at,
		                (off_t)n);
}

/* The spool's leaves copied after the database's pages (in pieces on --jobs threads). */
static int copy_leaves(struct sqb_tree *t, size_t nleaves)
{
	struct copy c = {.t = t, .len = nleaves * SQB_PAGE};
	size_t n = (c.len + COPY_PIECE - 1) / COPY_PIECE;
	c.res = tp_calloc(n, sizeof *c.res);
	c.errs = tp_calloc(n, sizeof *c.errs);
	int st = c.res && c.errs ? TP_OK : TP_ENOMEM;
	if (!st)
		tp_par_run((unsigned)(t->jobs > 0 ? t->jobs : 64), n, copy_piece, &c);
	for (size_t k = 0; !st && k < n; k++)
		if ((st = c.res[k]))
			t->err = c.errs[k];
	tp_free(c.res);
	tp_free(c.errs);
	return st;
}

/* The table's leaves after the database's pages and the interior levels over them, or its
 * single leaf written at the root. */
static int join_table(struct sqb_tree *t, uint32_t root, struct sqb_out *o)
{
	size_t nleaves = t->next_page, nseps = 0, sepbytes = 0;
	for (size_t k = 0; k < t->nmetas; k++) {
		nseps += t->metas[k]->nseps;
		sepbytes += t->metas[k]->seps.len;
	}
	if (!nleaves)
		return TP_OK;
	if (nleaves == 1) {
		uint8_t page[SQB_PAGE];
		off_t at = t->moved ? ((off_t)t->moved_to - 1) * SQB_PAGE : 0;
		ssize_t r = pread(t->fd, page, SQB_PAGE, at);
		if (r != SQB_PAGE) {
			t->err = r < 0 ? errno : EIO;
			return TP_EOUTPUT;
		}
		return page_write(t, root, page);
	}
	if (nseps + 1 != nleaves)
		return TP_ENOMEM; /* not reached: every part but the last ends on a separator */
	int st = TP_OK;
	if (!t->adopted) {
		tp_tm_begin("copy");
		st = copy_leaves(t, nleaves);
		tp_tm_end();
		o->next = t->first + (uint32_t)nleaves;
	}
	if (st)
		return st;
	tp_tm_begin("interior");
	uint32_t *child = tp_malloc(nleaves * sizeof *child);
	size_t *off = tp_malloc((nseps + 1) * sizeof *off);
	uint8_t *seps = tp_malloc(sepbytes ? sepbytes : 1);
	st = TP_ENOMEM;
	if (child && off && seps) {
		size_t s = 0, at = 0;
		for (size_t i = 0; i < nleaves; i++)
			child[i] =
			    i < t->moved ? t->moved_to + (uint32_t)i : t->first + (uint32_t)i;
		for (size_t k = 0; k < t->nmetas; k++) {
			const struct meta *m = t->metas[k];
			for (size_t i = 0; i < m->nseps; i++)
				off[s++] = at + m->sep_off[i];
			if (m->seps.len)
				memcpy(seps + at, m->seps.data, m->seps.len);
			at += m->seps.len;
		}
		off[s] = at;
		int rc = sqb_interior(child, nleaves, seps, off, root, o);
		st = rc < 0 ? TP_ENOMEM : rc;
	}
	tp_tm_end();
	tp_free(child);
	tp_free(off);
	tp_free(seps);
	return st;
}

/* An index's entries are merged and packed in ranges of keys on --jobs threads: about
 * RANGE_ENTRIES entries each, the bounds sampled from the runs (every SAMPLE_EVERY-th entry of
 * each), so they depend on the entries only. Every range but an index's last ends on a
 * separator, as a table's parts do. */
#define RANGE_ENTRIES ((size_t)1 << 16)
#define SAMPLE_EVERY 64

/* One range of an index: per part, its run's entries [lo, hi); its packed leaves. */
struct range {
	int x, last, single; /* the index; its last range; its only one */
	size_t *lo, *hi;
	struct sqb_pack k;
	int packed, st, err;
	uint32_t base; /* its first leaf's page, once placed */
};

/* A range's runs merged: the next entry, or NULL. */
struct merge {
	struct sqb_tree *t;
	int x;                       /* the index */
	size_t *heap, n, *pos, *end; /* heap of part numbers by their next entry; per part */
};

static const uint8_t *merge_head(const struct merge *g, size_t k)
{
	return g->t->metas[k]->ix[g->x].ent[g->pos[k]];
}

static void merge_down(struct merge *g, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, b = i;
		if (l < g->n &&
		    sqb_cell_cmp(merge_head(g, g->heap[l]), merge_head(g, g->heap[b])) < 0)
			b = l;
		if (l + 1 < g->n &&
		    sqb_cell_cmp(merge_head(g, g->heap[l + 1]), merge_head(g, g->heap[b])) < 0)
			b = l + 1;
		if (b == i)
			return;
		size_t h = g->heap[i];
		g->heap[i] = g->heap[b];
		g->heap[b] = h;
		i = b;
	}
}

static const uint8_t *merge_next(struct merge *g)
{
	if (!g->n)
		return NULL;
	size_t k = g->heap[0];
	const uint8_t *e = merge_head(g, k);
	if (++g->pos[k] == g->end[k])
		g->heap[0] = g->heap[--g->n];
	merge_down(g, 0);
	return e;
}

/* Range g's leaves packed from its share of the runs. */
static int pack_range(struct sqb_tree *t, struct range *g)
{
	struct merge m = {.t = t, .x = g->x, .pos = g->lo, .end = g->hi};
	m.heap = tp_malloc((t->nmetas ? t->nmetas : 1) * sizeof *m.heap);
	int st = m.heap ? TP_OK : TP_ENOMEM;
	for (size_t i = 0; !st && i < t->nmetas; i++)
		if (g->lo[i] < g->hi[i])
			m.heap[m.n++] = i;
	for (size_t i = m.n; i-- > 0;)
		merge_down(&m, i);
	const uint8_t *e;
	while (!st && (e = merge_next(&m)))
		if (sqb_pack_add(&g->k, e, sqb_cell_len(e)))
			st = TP_ENOMEM;
	tp_free(m.heap);
	if (!st && sqb_pack_end(&g->k, g->last))
		st = TP_ENOMEM;
	return st;
}

/* The first entry of run u not below key. */
static size_t lower_bound(const struct run *u, const uint8_t *key)
{
	size_t lo = 0, hi = u->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sqb_cell_cmp(u->ent[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The sampled entries of index x, sorted (*ns of them). */
static const uint8_t **index_samples(const struct sqb_tree *t, int x, size_t *ns)
{
	*ns = 0;
	for (size_t k = 0; k < t->nmetas; k++)
		*ns += (t->metas[k]->ix[x].n + SAMPLE_EVERY - 1) / SAMPLE_EVERY;
	const uint8_t **smp = tp_malloc((*ns ? *ns : 1) * sizeof *smp);
	if (!smp)
		return NULL;
	size_t n = 0;
	for (size_t k = 0; k < t->nmetas; k++)
		for (size_t i = 0; i < t->metas[k]->ix[x].n; i += SAMPLE_EVERY)
			smp[n++] = t->metas[k]->ix[x].ent[i];
	if (n > 1)
		qsort(smp, n, sizeof *smp, ent_cmp);
	return smp;
}

/* Index x's ranges appended to r. Each holds at least two samples' entries (the entries are
 * distinct: an index entry ends with the table's key), so a range that ends on a separator
 * has the two cells packing needs. */
static int index_ranges(const struct sqb_tree *t, int x, struct range **r, size_t *nr, size_t *cap)
{
	size_t total = 0, ns;
	for (size_t k = 0; k < t->nmetas; k++)
		total += t->metas[k]->ix[x].n;
	if (!total)
		return TP_OK;
	const uint8_t **smp = index_samples(t, x, &ns);
	if (!smp)
		return TP_ENOMEM;
	size_t want = (total + RANGE_ENTRIES - 1) / RANGE_ENTRIES;
	if (want > ns / 2)
		want = ns / 2;
	if (want < 1)
		want = 1;
	int st = TP_OK;
	for (size_t q = 0; q < want && !st; q++) {
		struct range *n = tp_grow(*r, sizeof *n, *nr + 1, cap);
		if (!n) {
			st = TP_ENOMEM;
			break;
		}
		*r = n;
		struct range *g = &n[(*nr)++];
		memset(g, 0, sizeof *g);
		sqb_pack_init(&g->k);
		g->x = x;
		g->last = q + 1 == want;
		g->single = want == 1;
		g->lo = tp_malloc((t->nmetas ? t->nmetas : 1) * sizeof *g->lo);
		g->hi = tp_malloc((t->nmetas ? t->nmetas : 1) * sizeof *g->hi);
		if (!g->lo || !g->hi) {
			st = TP_ENOMEM;
			break;
		}
		const uint8_t *from = q ? smp[q * ns / want] : NULL;
		const uint8_t *to = q + 1 < want ? smp[(q + 1) * ns / want] : NULL;
		for (size_t k = 0; k < t->nmetas; k++) {
			const struct run *u = &t->metas[k]->ix[x];
			g->lo[k] = from ? lower_bound(u, from) : 0;
			g->hi[k] = to ? lower_bound(u, to) : u->n;
		}
	}
	tp_free(smp);
	return st;
}

/* The ranges of a tree's indexes, packed on --jobs threads and placed in order as they are
 * packed: each is written by the thread that placed it, then its pages are freed (its
 * separators stay for the interior levels). */
struct ixjob {
	struct sqb_tree *t;
	struct range *r;
	size_t nr, placed;
	uint32_t next; /* the next free page */
	const uint32_t *roots;
	pthread_mutex_t mu;
};

/* Range g's leaves written: at its base, or its index's single leaf at the root. */
static void write_range(struct ixjob *j, struct range *g)
{
	struct sqb_pack *k = &g->k;
	if (!g->st && k->npages == 1 && g->single)
		g->st = write_all(j->t->db, k->pages, SQB_PAGE,
		                  ((off_t)j->roots[g->x] - 1) * SQB_PAGE, &g->err);
	else if (!g->st && k->npages)
		g->st = write_all(j->t->db, k->pages, k->npages * SQB_PAGE,
		                  ((off_t)g->base - 1) * SQB_PAGE, &g->err);
	tp_free(k->pages);
	k->pages = NULL;
	k->cap = 0; /* npages stays: the interior levels count the leaves */
}

static void range_job(void *arg, size_t i)
{
	struct ixjob *j = arg;
	struct range *g = &j->r[i];
	g->st = pack_range(j->t, g);
	pthread_mutex_lock(&j->mu);
	g->packed = 1;
	size_t from = j->placed;
	for (; j->placed < j->nr && j->r[j->placed].packed; j->placed++) {
		struct range *p = &j->r[j->placed];
		if (p->st || (p->single && p->k.npages == 1))
			continue;
		p->base = j->next;
		j->next += (uint32_t)p->k.npages;
	}
	size_t to = j->placed;
	pthread_mutex_unlock(&j->mu);
	for (size_t q = from; q < to; q++)
		write_range(j, &j->r[q]);
}

/* The interior levels of index x over its ranges' leaves [a, b) (more than one leaf). */
static int index_top(const struct range *r, size_t a, size_t b, uint32_t root, struct sqb_out *o)
{
	size_t nleaves = 0, sepbytes = 0;
	for (size_t q = a; q < b; q++) {
		nleaves += r[q].k.npages;
		sepbytes += r[q].k.seps.len;
	}
	uint32_t *child = tp_malloc(nleaves * sizeof *child);
	size_t *off = tp_malloc((nleaves + 1) * sizeof *off);
	uint8_t *seps = tp_malloc(sepbytes ? sepbytes : 1);
	int st = TP_ENOMEM;
	if (child && off && seps) {
		size_t c = 0, s = 0, at = 0;
		for (size_t q = a; q < b; q++) {
			for (size_t i = 0; i < r[q].k.npages; i++)
				child[c++] = r[q].base + (uint32_t)i;
			for (size_t i = 0; i < r[q].k.nseps; i++)
				off[s++] = at + r[q].k.sep_off[i];
			if (r[q].k.seps.len)
				memcpy(seps + at, r[q].k.seps.data, r[q].k.seps.len);
			at += r[q].k.seps.len;
		}
		off[s] = at;
		int rc = s + 1 == nleaves ? sqb_interior(child, nleaves, seps, off, root, o) : -1;
		st = rc < 0 ? TP_ENOMEM : rc;
	}
	tp_free(child);
	tp_free(off);
	tp_free(seps);
	return st;
}

/* The indexes' pages, after the table's: each index's ranges packed and written on --jobs
 * threads, every index's leaves before the interior pages. */
static int join_indexes(struct sqb_tree *t, const uint32_t *roots, struct sqb_out *o)
{
	struct ixjob j = {.t = t, .next = o->next, .roots = roots};
	size_t cap = 0;
	int st = TP_OK;
	for (int x = 0; x < t->def.nidx && !st; x++)
		st = index_ranges(t, x, &j.r, &j.nr, &cap);
	if (!st && j.nr) {
		pthread_mutex_init(&j.mu, NULL);
		tp_par_run((unsigned)(t->jobs > 0 ? t->jobs : 64), j.nr, range_job, &j);
		pthread_mutex_destroy(&j.mu);
		o->next = j.next;
	}
	for (size_t q = 0; q < j.nr && !st; q++)
		if ((st = j.r[q].st))
			t->err = j.r[q].err;
	o->table = 0;
	for (size_t a = 0, b; a < j.nr && !st; a = b) {
		size_t n = 0;
		for (b = a; b < j.nr && j.r[b].x == j.r[a].x; b++)
			n += j.r[b].k.npages;
		if (n > 1)
			st = index_top(j.r, a, b, roots[j.r[a].x], o);
	}
	for (size_t q = 0; q < j.nr; q++) {
		sqb_pack_free(&j.r[q].k);
		tp_free(j.r[q].lo);
		tp_free(j.r[q].hi);
	}
	tp_free(j.r);
	return st;
}

/* Tree t after the pages so far (o->next on). */
static int join_one(struct sqb_tree *t, int db, const struct sqb_roots *r, struct sqb_out *o)
{
	int st = t->status;
	t->db = db;
	t->first = t->adopted ? 1 : o->next;
	o->ctx = t;
	o->table = t->def.rowid;
	if (!st)
		st = join_table(t, r->table, o);
	tp_tm_begin("indexes");
	if (!st)
		st = join_indexes(t, r->index, o);
	tp_tm_end();
	t->db = -1;
	return st;
}

/* Tree t's spool made the database, so that its leaves are not copied: the leaves at the
 * pages SQLite's npages pages take (the first ones) copied after the others, then SQLite's
 * pages (from the file sqf) copied in front. Leaves hold no page numbers, so any order of
 * them is valid; the interior levels list them where they are. */
static int adopt_spool(struct sqb_tree *t, int sqf, uint32_t npages, struct sqb_out *o)
{
	size_t nleaves = t->next_page, n = npages;
	size_t moved = nleaves < n ? nleaves : n, to = (nleaves > n ? nleaves : n) + 1;
	int st = copy_range(t->fd, t->fd, 0, ((off_t)to - 1) * SQB_PAGE, moved * SQB_PAGE, &t->err);
	if (!st)
		st = copy_range(sqf, t->fd, 0, 0, n * SQB_PAGE, &t->err);
	t->adopted = 1;
	t->moved = moved;
	t->moved_to = (uint32_t)to;
	o->next = (uint32_t)(n + (nleaves > 1 ? nleaves : 0) + 1);
	return st;
}

int sqb_tree_join(struct sqb_tree *const *t, const struct sqb_roots *roots, size_t n,
                  const char *db_path, uint32_t npages, int *err)
{
	struct sqb_out o = {.next = npages + 1, .write = page_write};
	int st = TP_OK, sqf = n ? open(db_path, O_RDONLY | O_CLOEXEC) : -1;
	*err = 0;
	if (!n)
		return TP_OK;
	if (sqf < 0) {
		*err = errno;
		return TP_EOUTPUT;
	}
	int db = t[0]->fd;
	if ((st = t[0]->status) || (st = adopt_spool(t[0], sqf, npages, &o)))
		*err = t[0]->err;
	close(sqf);
	for (size_t k = 0; k < n && !st; k++)
		if ((st = join_one(t[k], db, &roots[k], &o)))
			*err = t[k]->err;
	if (!st) { /* the header's page count (valid: SQLite left the change counter and the
		    * version-valid-for number equal) */
		uint32_t c = o.next - 1;
		uint8_t b[4] = {(uint8_t)(c >> 24), (uint8_t)(c >> 16), (uint8_t)(c >> 8),
		                (uint8_t)c};
		st = write_all(db, b, 4, 28, err);
	}
	if (!st && ftruncate(db, (off_t)(o.next - 1) * SQB_PAGE))
		st = TP_EOUTPUT, *err = errno;
	if (!st && rename(t[0]->spool, db_path))
		st = TP_EOUTPUT, *err = errno;
	if (!st)
		t[0]->renamed = 1;
	return st;
}
