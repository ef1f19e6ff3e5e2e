/*
 * bmp_gpool.c — the driver of global.profile's chunked parse (bmp_global.c scans a chunk into
 * events and applies them): scanning workers fill a ring of chunk slots while the calling
 * thread applies the chunks in file order, and the text already applied is released behind
 * them. Owns the worker pool, the ring and bmp_global_parse.
 */
#include "common/timings.h"
#include "common/wsync.h"
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

/* Scanning workers at most: about as many as a chunk's scan takes of its in-order apply's CPU
 * (the names' copies and the records' packing run where it is scanned), since more would wait
 * for the apply; each adds a slot's events and resident text to the memory in flight
 * (docs/perf-notes/cores-reader.md). The apply now only places what the scans made: that is
 * --jobs 16's fifteen workers. */
#define GSCAN_MAX 15u

/* The parallel driver: `nthreads` workers tokenize chunks into a ring of `nslot` slots (four
 * more than the workers: each can scan while a few scanned chunks wait for the apply) while
 * the calling thread applies them in order, and scans the next chunk itself when no worker
 * has taken it. A worker takes chunk k only when k is less than `nslot` chunks ahead of the
 * one being applied, so at most nslot chunks of events (and of resident text) exist at once. */
struct gpool {
	const char *text;
	size_t len, nchunks;
	const struct bmp_global *g;
	struct gchunk *slot;
	size_t nslot;
	/* The workers wait on cv_job for a free slot, the parsing thread on cv_done for its
	 * chunk. */
	struct tp_wsync ws;
	size_t next;    /* next chunk to scan */
	size_t applied; /* chunks applied so far */
	uint8_t *ready; /* per slot: 1 = scanned, waiting to be applied */
	int stop;       /* a chunk failed: scan no more */
	/* With drop_pages: the text before drop_to is applied, that before dropped released;
	 * the thread that scans the next chunk releases the rest (drop_take), off the applying
	 * thread. */
	size_t dropped, drop_to;
	/* The layer records faulted in by the thread that scans a chunk (layer_prefault): the
	 * layer table's storage chunks the applying thread made and published (lmem[0..nlmem),
	 * records of lrec bytes; lrec 0 = none yet) and the first layer index no scanned chunk
	 * has claimed; page 0 = layers not kept (or one text chunk), nothing faulted in. */
	char **lmem;
	size_t nlmem, cap_lmem, lrec, lnext;
	size_t page;
};

/* Faults in [a, a + n) writable without writing it (the kernel zeroes the pages there, not
 * at the applying thread's first write); a kernel without MADV_POPULATE_WRITE leaves the
 * fault to that write. */
static void mem_populate(char *a, size_t n, size_t page)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t b = (uintptr_t)a & ~(uintptr_t)(page - 1);
	(void)madvise((void *)b, (uintptr_t)a + n - b, MADV_POPULATE_WRITE);
#else
	(void)a;
	(void)n;
	(void)page;
#endif
}

/* Faults in the records that chunk ch's layer lines will be stored in: the next ch->nlayers
 * not claimed by a chunk scanned before (chunks scanned out of order claim each other's
 * ranges, the union is the same), as far as the storage is published. Any thread, under
 * ws.mu when `lock`; only a hint: the layers and their order do not depend on it. */
static void layer_prefault(struct gpool *gp, const struct gchunk *ch, int lock)
{
	if (!ch->nlayers || !gp->page)
		return;
	char *a[2];
	size_t n[2], m = 0;
	if (lock)
		pthread_mutex_lock(&gp->ws.mu);
	size_t i = gp->lnext, to = i + ch->nlayers;
	gp->lnext = to;
	while (gp->lrec && i < to && m < 2 && i / TP_LAYER_CHUNK < gp->nlmem) {
		size_t k = i / TP_LAYER_CHUNK, e = (k + 1) * TP_LAYER_CHUNK;
		if (e > to)
			e = to;
		a[m] = gp->lmem[k] + (i - k * TP_LAYER_CHUNK) * gp->lrec;
		n[m++] = (e - i) * gp->lrec;
		i = e;
	}
	if (lock)
		pthread_mutex_unlock(&gp->ws.mu);
	for (size_t j = 0; j < m; j++)
		mem_populate(a[j], n[j], gp->page);
}

/* Keeps the layer table's storage a storage chunk ahead of every layer claimed so far (more
 * than a text chunk's layer lines), and publishes it to layer_prefault. Applying thread only
 * (it adds the layers), under ws.mu when the workers run. */
static void layer_room(struct gpool *gp, struct tp_profile *p)
{
	if (!gp->page)
		return;
	size_t want = (gp->lnext > p->num_layers ? gp->lnext : p->num_layers) + TP_LAYER_CHUNK;
	if (tp_profile_layer_room(p, want) != TP_OK)
		return;
	size_t rec;
	char *m;
	while ((m = tp_profile_layer_chunk(p, gp->nlmem, &rec))) {
		char **v = tp_grow(gp->lmem, sizeof *v, gp->nlmem + 1, &gp->cap_lmem);
		if (!v)
			return;
		gp->lmem = v;
		gp->lmem[gp->nlmem++] = m;
		gp->lrec = rec;
	}
}

/* What a released range starts before its own start: chunk_start(k) reads the byte before
 * chunk k, and that read maps back the pages around it (a whole large folio's worth when
 * the page cache holds the file in 2 MiB folios; docs/perf-notes/sophgo.md) after they were
 * released. */
#define GDROP_BACK ((size_t)2 << 20)

/* The range of applied text not yet released, taken by the caller (under ws.mu, or the one
 * thread); empty without drop_pages. */
static void drop_take(struct gpool *gp, size_t *from, size_t *to)
{
	*from = gp->dropped > GDROP_BACK ? gp->dropped - GDROP_BACK : 0;
	*to = gp->g->drop_pages ? gp->drop_to : 0;
	gp->dropped = gp->drop_to;
}

/* A worker's step, under ws.mu: scans the next chunk when its slot is free; 0 when there is
 * none to take now. */
static int gstep(void *arg)
{
	struct gpool *gp = arg;
	if (gp->stop || gp->next >= gp->nchunks || gp->next >= gp->applied + gp->nslot)
		return 0;
	size_t k = gp->next++;
	struct gchunk *ch = &gp->slot[k % gp->nslot];
	size_t from, to;
	drop_take(gp, &from, &to);
	pthread_mutex_unlock(&gp->ws.mu);
	tp_map_drop(gp->text, from, to);
	bmp_gchunk_scan(gp->text, gp->len, gp->g, ch, k);
	layer_prefault(gp, ch, 1);
	pthread_mutex_lock(&gp->ws.mu);
	gp->ready[k % gp->nslot] = 1;
	pthread_cond_broadcast(&gp->ws.cv_done);
	return 1;
}

/* Stops and joins the workers, and frees the slots. */
static void pool_stop(struct gpool *gp, pthread_t *th, unsigned started)
{
	if (started)
		tp_wsync_stop(&gp->ws, th, (int)started);
	for (size_t i = 0; i < gp->nslot; i++) {
		bmp_gchunk_fill(&gp->slot[i]); /* the last chunks' names and records */
		tp_free(gp->slot[i].ev);
		tp_free(gp->slot[i].tens);
		bmp_gfast_free(&gp->slot[i].fast);
	}
	tp_free(gp->slot);
	tp_free(gp->ready);
	tp_free(gp->lmem);
}

/* Chunk k, scanned: by a worker (waits for it), or here when no worker has taken it. */
static void take_chunk(struct gpool *gp, unsigned started, size_t k)
{
	struct gchunk *ch = &gp->slot[k % gp->nslot];
	int mine = !started;
	size_t from = 0, to = 0;
	if (!started)
		drop_take(gp, &from, &to);
	if (started) {
		pthread_mutex_lock(&gp->ws.mu);
		if (gp->next == k) {
			gp->next++; /* no worker has it: scan it here rather than wait */
			mine = 1;
			drop_take(gp, &from, &to);
		} else {
			while (!gp->ready[k % gp->nslot])
				pthread_cond_wait(&gp->ws.cv_done, &gp->ws.mu);
		}
		pthread_mutex_unlock(&gp->ws.mu);
	}
	if (mine) { /* one thread, or no worker took the chunk (same code) */
		tp_tm_par_begin();
		tp_map_drop(gp->text, from, to);
		bmp_gchunk_scan(gp->text, gp->len, gp->g, ch, k);
		layer_prefault(gp, ch, started != 0);
		tp_tm_par_end();
	}
}

/* Chunk k applied (rc its result): its slot is free for the workers. */
static void chunk_done(struct gpool *gp, struct tp_profile *p, unsigned started, size_t k, int rc)
{
	if (!started) {
		gp->drop_to = gp->slot[k % gp->nslot].end;
		layer_room(gp, p);
		return;
	}
	pthread_mutex_lock(&gp->ws.mu);
	layer_room(gp, p);
	gp->drop_to = gp->slot[k % gp->nslot].end;
	gp->ready[k % gp->nslot] = 0;
	gp->applied = k + 1;
	/* A slot freed is one chunk to scan: one worker woken (waking all costs the applying
	 * thread, the parse's serial path); a failure stops them all. */
	if (rc) {
		gp->stop = 1;
		pthread_cond_broadcast(&gp->ws.cv_job);
	} else {
		pthread_cond_signal(&gp->ws.cv_job);
	}
	pthread_mutex_unlock(&gp->ws.mu);
}

int bmp_global_parse(const char *text, size_t len, const char *path, struct tp_profile *p,
                     struct bmp_global *g, struct tp_diag *d)
{
	struct bmp_gctx c = {.path = path,
	                     .p = p,
	                     .g = g,
	                     .d = d,
	                     .cur_layer = -1,
	                     .cur_subnet = -1,
	                     .pend_layer = -1};
	size_t nchunks = len ? (len + GCHUNK - 1) / GCHUNK : 0;
	/* jobs scanning workers, at most GSCAN_MAX: the calling thread's in-order apply is the
	 * lighter side (the names' copies and the records' packing run where a chunk is
	 * scanned), so it mostly waits for the next chunk; with jobs - 1 workers the single
	 * worker of --jobs 2 would set the pace alone. */
	unsigned nthreads = g->jobs > 1 ? (unsigned)g->jobs : 0;
	if (nthreads > GSCAN_MAX)
		nthreads = GSCAN_MAX;
	if (nchunks < 2)
		nthreads = 0;
	else if (nthreads > nchunks - 1)
		nthreads = (unsigned)(nchunks - 1);
	unsigned long no = 0;
	int rc = TP_OK;
	struct gpool gp = {.text = text,
	                   .len = len,
	                   .nchunks = nchunks,
	                   .g = g,
	                   .nslot = nthreads ? (size_t)nthreads + 4 : 1};
	gp.slot = tp_calloc(gp.nslot, sizeof *gp.slot);
	gp.ready = tp_calloc(gp.nslot, 1);
	if (!gp.slot || !gp.ready) {
		tp_free(gp.slot);
		tp_free(gp.ready);
		return bmp_gctx_oom(&c);
	}
	if (!g->no_layers && nchunks > 1) {
		long pg = sysconf(_SC_PAGESIZE);
		gp.page = pg > 0 ? (size_t)pg : 4096;
		layer_room(&gp, p);
	}
	pthread_t th[64];
	/* nthreads workers: tp_wsync_start counts the calling thread as one of the jobs. */
	unsigned started =
	    (unsigned)tp_wsync_start(&gp.ws, th, (int)nthreads + 1, (int)nthreads, gstep, &gp);
	for (size_t k = 0; k < nchunks; k++) {
		struct gchunk *ch = &gp.slot[k % gp.nslot];
		take_chunk(&gp, started, k);
		/* Room for the tensors of every chunk at the first one's count (a bit more), so
		 * that the array is not copied at each growth; unwritten room is address space,
		 * and without it the array grows as usual. */
		if (k == 0 && ch->ntens && ch->ntens < SIZE_MAX / 256 / nchunks)
			(void)tp_profile_tensor_room(p, ch->ntens * nchunks + ch->ntens / 8);
		rc = bmp_gchunk_apply(&c, text, ch, no + 1);
		no += ch->lines;
		if (g->src)
			tp_file_progress(g->src, ch->end);
		chunk_done(&gp, p, started, k, rc);
		if (rc)
			break;
	}
	pool_stop(&gp, th, started);
	/* What the scanners left: the last chunks, and pages read back after their release. */
	if (g->drop_pages)
		tp_map_drop(text, 0, len);
	/* Even after an error (keeping its message), so that no tensor or node names a layer the
	 * table lacks. */
	if (!rc)
		rc = bmp_gflush_layer(&c);
	else if (c.pend_layer >= 0)
		tp_profile_add_layer(p, &c.pend); /* out of memory here sets p's sticky flag */
	if (rc)
		return rc;
	g->lines = no;
	if (p->oom)
		return bmp_gctx_oom(&c);
	return TP_OK;
}
