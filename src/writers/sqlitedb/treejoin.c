/*
 * treejoin.c — the join of the tables argtree.c built (sqb_tree_join): once SQLite has written
 * the other tables and closed the database, the first tree's spool becomes the database
 * (SQLite's pages copied in front of its leaves, the few leaves they displace copied after the
 * others), the other trees' spools are copied after it on --jobs threads, the interior levels
 * are built over each tree's leaves, and each index's sorted runs are merged in key ranges on
 * --jobs threads into its pages. Every page's place depends on the rows only, so the file is
 * the same bytes for every --jobs.
 *
 * Owns: nothing beyond a call (the ranges' pages, the merge heaps); writes the trees' files.
 */
#define _GNU_SOURCE /* copy_file_range (glibc >= 2.27), fallocate's hole punching */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "common/timings.h"
#include "writers/sqlitedb/sqlitedb_int.h"

#define COPY_PIECE ((size_t)16 << 20) /* bytes of spool one thread copies at a time */

static int page_write(void *ctx, uint32_t pgno, const uint8_t *page)
{
	struct sqb_tree *t = ctx;
	return sqb_write_all(t->db, page, SQB_PAGE, ((off_t)pgno - 1) * SQB_PAGE, &t->err);
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
		st = sqb_write_all(out, buf, (size_t)r, to, err);
		from += r;
		to += r;
		len -= (size_t)r;
	}
	tp_free(buf);
	return st;
}

/* A copy of len bytes from in at `from` to out at `to`, in pieces on --jobs threads; with
 * punch, each copied piece's disk space in `in` is given back. */
struct copy {
	int in, out, punch;
	off_t from, to;
	size_t len;
	int *res, *errs; /* per piece */
};

static void copy_piece(void *arg, size_t k)
{
	struct copy *c = arg;
	size_t at = k * COPY_PIECE, n = c->len - at < COPY_PIECE ? c->len - at : COPY_PIECE;
	c->res[k] =
	    copy_range(c->in, c->out, c->from + (off_t)at, c->to + (off_t)at, n, &c->errs[k]);
	/* The spool and the database's copy of it never both take the table's size, where the
	 * file system can punch holes. */
	if (c->punch && !c->res[k])
		(void)fallocate(c->in, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		                c->from + (off_t)at, (off_t)n);
}

static int copy_par(struct copy *c, int jobs, int *err)
{
	size_t n = (c->len + COPY_PIECE - 1) / COPY_PIECE;
	if (!n)
		return TP_OK;
	c->res = tp_calloc(n, sizeof *c->res);
	c->errs = tp_calloc(n, sizeof *c->errs);
	int st = c->res && c->errs ? TP_OK : TP_ENOMEM;
	if (!st)
		tp_par_run((unsigned)(jobs > 0 ? jobs : 64), n, copy_piece, c);
	for (size_t k = 0; !st && k < n; k++)
		if ((st = c->res[k]))
			*err = c->errs[k];
	tp_free(c->res);
	tp_free(c->errs);
	return st;
}

/* The spool's leaves copied after the database's pages. */
static int copy_leaves(struct sqb_tree *t, size_t nleaves)
{
	struct copy c = {.in = t->fd,
	                 .out = t->db,
	                 .punch = 1,
	                 .to = ((off_t)t->first - 1) * SQB_PAGE,
	                 .len = nleaves * SQB_PAGE};
	return copy_par(&c, t->jobs, &t->err);
}

void sqb_heap_trim(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* Index x's runs of every part, once every range of x is merged. */
static void runs_free(struct sqb_tree *t, int x)
{
	for (size_t k = 0; k < t->nmetas; k++)
		sqb_run_free(&t->metas[k]->ix[x]);
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
			sqb_seps_free(t->metas[k]); /* copied: not held twice */
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
 * tune.range_entries entries each, the bounds sampled from the runs (every SAMPLE_EVERY-th entry of
 * each), so they depend on the entries only. Every range but an index's last ends on a
 * separator, as a table's parts do. */
#define SAMPLE_EVERY RUN_MARK

/* One range of an index: its entries from `from` (NULL: the first) to before `to` (NULL: the
 * last); its packed leaves. */
struct range {
	int x, last, single; /* the index; its last range; its only one */
	const uint8_t *from, *to;
	struct sqb_pack k;
	int packed, st, err;
	uint32_t base;  /* its first leaf's page, once placed (or once it is the head) */
	size_t flushed; /* leaves written already (the head's), before k's */
	size_t counted; /* k's leaves counted in the job's held pages */
};

/* A range's leaves in all. */
static size_t range_pages(const struct range *g)
{
	return g->flushed + g->k.npages;
}

/* A range's runs merged: the next entry, or NULL. */
struct merge {
	struct sqb_tree *t;
	int x; /* the index */
	/* heap of part numbers by their next entry; per part, its next entry's and its share's
	 * end's offsets in the run's cells */
	size_t *heap, n, *pos, *end;
};

static const uint8_t *merge_head(const struct merge *g, size_t k)
{
	return (const uint8_t *)g->t->metas[k]->ix[g->x].cells.data + g->pos[k];
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
	if ((g->pos[k] += sqb_cell_len(e)) == g->end[k])
		g->heap[0] = g->heap[--g->n];
	merge_down(g, 0);
	return e;
}

/* The offset of the first entry of run u not below key (the cells' length if none): the first
 * mark not below it, then a scan from the mark before. */
static size_t lower_bound(const struct run *u, const uint8_t *key)
{
	const uint8_t *c = (const uint8_t *)u->cells.data;
	size_t nmark = (u->n + RUN_MARK - 1) / RUN_MARK, lo = 0, hi = nmark;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sqb_cell_cmp(c + u->mark[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	size_t at = u->mark[lo - 1], end = lo < nmark ? u->mark[lo] : u->cells.len;
	while (at < end && sqb_cell_cmp(c + at, key) < 0)
		at += sqb_cell_len(c + at);
	return at;
}

/* The ranges of a tree's indexes, packed on --jobs threads and placed in order as they are
 * packed: each is written by the thread that placed it, then its pages are freed (its
 * separators stay for the interior levels). The range at the placement's head (every one
 * before it placed) knows its first page, so it writes its leaves as it packs them; the
 * others hold theirs until they are placed, up to tune.budget leaves per thread beside the
 * head's, beyond which a range waits until it is the head or the held leaves are written. So
 * the join's leaves in flight are bounded by the budget and tune.stream leaves per thread. */
/* The held-leaf budget covers about one range ahead of the head per thread, so that a thread
 * seldom waits; one budget for the whole join would let about one range be packed beside the
 * head's whatever the thread count (sizes: docs/perf-notes/cores-sqlite.md). */
const struct sqb_join_tune sqb_join_default = {(size_t)1 << 16, 512, 32};
struct ixjob {
	struct sqb_tree *t;
	struct range *r;
	size_t nr, placed;
	size_t held;   /* leaves held by ranges not yet written (their `counted`) */
	size_t budget; /* the most held before a range not at the head waits */
	uint32_t next; /* the next free page */
	const uint32_t *roots;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* the head moved or held leaves were written */
};

/* Range i's leaves so far counted as held; when it is the head, all but its last one (which
 * the part's end may still change) written and dropped, else a wait while the held leaves
 * are over the budget. TP_OK or TP_EOUTPUT. */
static int range_stream(struct ixjob *j, size_t i)
{
	struct range *g = &j->r[i];
	struct sqb_pack *k = &g->k;
	pthread_mutex_lock(&j->mu);
	j->held += k->npages - g->counted;
	g->counted = k->npages;
	while (j->placed != i && j->held > j->budget)
		pthread_cond_wait(&j->cv, &j->mu);
	int head = j->placed == i;
	if (head)
		g->base = j->next; /* nothing is placed before the head finishes */
	pthread_mutex_unlock(&j->mu);
	if (!head)
		return TP_OK;
	size_t n = k->npages - 1;
	int st = sqb_write_all(j->t->db, k->pages, n * SQB_PAGE,
	                       ((off_t)g->base + (off_t)g->flushed - 1) * SQB_PAGE, &g->err);
	sqb_pack_drop(k, n);
	g->flushed += n;
	pthread_mutex_lock(&j->mu);
	j->held -= n;
	g->counted = k->npages;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return st;
}

/* Range i's leaves packed from its share of the runs. */
static int pack_range(struct ixjob *j, size_t i)
{
	struct sqb_tree *t = j->t;
	struct range *g = &j->r[i];
	size_t nm = t->nmetas ? t->nmetas : 1;
	/* Per part, the range's share of its run: entries [lo, hi). */
	size_t *lo = tp_malloc(nm * sizeof *lo), *hi = tp_malloc(nm * sizeof *hi);
	struct merge m = {.t = t, .x = g->x, .pos = lo, .end = hi};
	m.heap = tp_malloc(nm * sizeof *m.heap);
	int st = m.heap && lo && hi ? TP_OK : TP_ENOMEM;
	for (size_t k = 0; !st && k < t->nmetas; k++) {
		const struct run *u = &t->metas[k]->ix[g->x];
		lo[k] = g->from ? lower_bound(u, g->from) : 0;
		hi[k] = g->to ? lower_bound(u, g->to) : u->cells.len;
	}
	for (size_t q = 0; !st && q < t->nmetas; q++)
		if (lo[q] < hi[q])
			m.heap[m.n++] = q;
	for (size_t q = m.n; q-- > 0;)
		merge_down(&m, q);
	const uint8_t *e;
	while (!st && (e = merge_next(&m))) {
		if (sqb_pack_add(&g->k, e, sqb_cell_len(e)))
			st = TP_ENOMEM;
		else if (g->k.npages >= g->counted + t->tune.stream)
			st = range_stream(j, i);
	}
	tp_free(m.heap);
	tp_free(lo);
	tp_free(hi);
	if (!st && sqb_pack_end(&g->k, g->last))
		st = TP_ENOMEM;
	return st;
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
	for (size_t k = 0; k < t->nmetas; k++) {
		const struct run *u = &t->metas[k]->ix[x];
		for (size_t i = 0; i < u->n; i += SAMPLE_EVERY)
			smp[n++] = (const uint8_t *)u->cells.data + u->mark[i / SAMPLE_EVERY];
	}
	if (n > 1)
		qsort(smp, n, sizeof *smp, sqb_ent_cmp);
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
	size_t want = (total + t->tune.range_entries - 1) / t->tune.range_entries;
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
		g->from = q ? smp[q * ns / want] : NULL;
		g->to = q + 1 < want ? smp[(q + 1) * ns / want] : NULL;
	}
	tp_free(smp);
	return st;
}

/* Range g's leaves written: at its base, or its index's single leaf at the root. */
static void write_range(struct ixjob *j, struct range *g)
{
	struct sqb_pack *k = &g->k;
	if (!g->st && range_pages(g) == 1 && g->single)
		g->st = sqb_write_all(j->t->db, k->pages, SQB_PAGE,
		                      ((off_t)j->roots[g->x] - 1) * SQB_PAGE, &g->err);
	else if (!g->st && k->npages)
		g->st = sqb_write_all(j->t->db, k->pages, k->npages * SQB_PAGE,
		                      ((off_t)g->base + (off_t)g->flushed - 1) * SQB_PAGE, &g->err);
	tp_free(k->pages);
	k->pages = NULL;
	k->cap = 0; /* npages stays: the interior levels count the leaves */
	pthread_mutex_lock(&j->mu);
	j->held -= g->counted;
	g->counted = 0;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

static void range_job(void *arg, size_t i)
{
	struct ixjob *j = arg;
	struct range *g = &j->r[i];
	int st = pack_range(j, i);
	pthread_mutex_lock(&j->mu);
	g->st = g->st ? g->st : st;
	g->packed = 1;
	j->held += g->k.npages - g->counted;
	g->counted = g->k.npages;
	size_t from = j->placed;
	for (; j->placed < j->nr && j->r[j->placed].packed; j->placed++) {
		struct range *p = &j->r[j->placed];
		if (p->st || (p->single && range_pages(p) == 1))
			continue;
		p->base = j->next;
		j->next += (uint32_t)range_pages(p);
	}
	size_t to = j->placed;
	if (to > from)
		pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	for (size_t q = from; q < to; q++) {
		write_range(j, &j->r[q]);
		/* Every range of its index is merged: the index's runs are not read again, and
		 * glibc keeps what they freed in the arenas of the load's threads unless trimmed.
		 */
		if (j->r[q].last) {
			runs_free(j->t, j->r[q].x);
			sqb_heap_trim();
		}
	}
}

/* The interior levels of index x over its ranges' leaves [a, b) (more than one leaf). */
static int index_top(const struct range *r, size_t a, size_t b, uint32_t root, struct sqb_out *o)
{
	size_t nleaves = 0, sepbytes = 0;
	for (size_t q = a; q < b; q++) {
		nleaves += range_pages(&r[q]);
		sepbytes += r[q].k.seps.len;
	}
	uint32_t *child = tp_malloc(nleaves * sizeof *child);
	size_t *off = tp_malloc((nleaves + 1) * sizeof *off);
	uint8_t *seps = tp_malloc(sepbytes ? sepbytes : 1);
	int st = TP_ENOMEM;
	if (child && off && seps) {
		size_t c = 0, s = 0, at = 0;
		for (size_t q = a; q < b; q++) {
			for (size_t i = 0; i < range_pages(&r[q]); i++)
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
		unsigned threads = (unsigned)(t->jobs > 0 ? t->jobs : 64);
		size_t busy =
		    threads < j.nr ? threads : j.nr; /* the head's thread and the others */
		j.budget = t->tune.budget * (busy > 1 ? busy - 1 : 1);
		pthread_mutex_init(&j.mu, NULL);
		pthread_cond_init(&j.cv, NULL);
		tp_par_run(threads, j.nr, range_job, &j);
		pthread_cond_destroy(&j.cv);
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
			n += range_pages(&j.r[b]);
		if (n > 1)
			st = index_top(j.r, a, b, roots[j.r[a].x], o);
	}
	for (size_t q = 0; q < j.nr; q++)
		sqb_pack_free(&j.r[q].k);
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
	struct copy lv = {
	    .in = t->fd, .out = t->fd, .to = ((off_t)to - 1) * SQB_PAGE, .len = moved * SQB_PAGE};
	struct copy sq = {.in = sqf, .out = t->fd, .len = n * SQB_PAGE};
	int st = copy_par(&lv, t->jobs, &t->err);
	if (!st)
		st = copy_par(&sq, t->jobs, &t->err);
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
		st = sqb_write_all(db, b, 4, 28, err);
	}
	if (!st && ftruncate(db, (off_t)(o.next - 1) * SQB_PAGE))
		st = TP_EOUTPUT, *err = errno;
	/* SQLite's file is removed before the rename: ext4 starts the writeback of a file
	 * renamed over another (auto_da_alloc), on this thread, for the whole database. */
	if (!st && unlink(db_path) && errno != ENOENT)
		st = TP_EOUTPUT, *err = errno;
	if (!st && rename(t[0]->spool, db_path))
		st = TP_EOUTPUT, *err = errno;
	if (!st)
		t[0]->renamed = 1;
	return st;
}
