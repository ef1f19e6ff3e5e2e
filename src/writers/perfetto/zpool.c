/*
 * zpool.c — the Perfetto writer's output end for the packets written on the driving thread
 * (descriptors, counters; a part's slices are compressed by the part, parts.c): packets are
 * batched into zlib-format `compressed_packets` chunks (CHUNK_BYTES of packets each), compressed
 * with libdeflate by a pool of worker threads while the encoder fills the next chunk (and, when
 * more than two chunks per worker wait, compressed by the encoder itself: zpool_steal), and written
 * in chunk order, so the bytes do not depend on the number of workers. Without compression the
 * packets are written as they are.
 *
 * Owns the workers, their compressors and their ring of chunk slots (SLOTS_PER_WORKER per
 * worker), all inside struct pw (perfetto_int.h); tp_perfetto_zstop releases them.
 */
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/timings.h"
#include "writers/perfetto/perfetto_int.h"

size_t tp_pw_zhead(uint8_t *hdr, size_t zn)
{
	size_t h = 0;
	size_t inner = tp_pb_varint_size((uint64_t)F_PKT_COMPRESSED << 3 | TP_PB_LEN) +
	               tp_pb_varint_size(zn) + zn;
	hdr[h++] = (uint8_t)(F_TRACE_PACKET << 3 | TP_PB_LEN);
	h += tp_pb_varint_to(hdr + h, inner);
	h += tp_pb_varint_to(hdr + h, (uint64_t)F_PKT_COMPRESSED << 3 | TP_PB_LEN);
	h += tp_pb_varint_to(hdr + h, zn);
	return h;
}

/* Writes one compressed chunk `z` (zn bytes) as Trace.packet { compressed_packets }. */
static int write_compressed(struct pw *w, const uint8_t *z, size_t zn)
{
	uint8_t hdr[24];
	size_t h = tp_pw_zhead(hdr, zn);
	if (tp_afile_write(&w->f, hdr, h) != 0 || tp_afile_write(&w->f, z, zn) != 0)
		return tp_afile_fail(&w->f, w->d);
	return TP_OK;
}

struct zarg {
	struct zpool *zp;
	int k; /* worker index: its own compressor */
};

/* A compression worker: takes the oldest queued chunk, compresses it with its own
 * compressor (libdeflate compressors are not shared between threads), marks it done. */
static void *zworker_main(void *arg)
{
	struct zpool *zp = ((struct zarg *)arg)->zp;
	int k = ((struct zarg *)arg)->k;
	tp_free(arg);
	tp_tm_thread(1);
	pthread_mutex_lock(&zp->sync.mu);
	for (;;) {
		struct zslot *job =
		    pw_ring_first(zp->slot, sizeof *zp->slot, zp->nslots, zp->head, zp->tail,
		                  offsetof(struct zslot, state), ZS_QUEUED);
		if (!job) {
			if (zp->quit)
				break;
			pthread_cond_wait(&zp->sync.cv_job, &zp->sync.mu);
			continue;
		}
		job->state = ZS_BUSY;
		pthread_mutex_unlock(&zp->sync.mu);
		size_t zn = libdeflate_zlib_compress(zp->z[k], job->in.p, job->in.len, job->out.p,
		                                     job->out.cap);
		pthread_mutex_lock(&zp->sync.mu);
		job->zn = zn;
		job->state = ZS_DONE;
		pthread_cond_broadcast(&zp->sync.cv_done);
	}
	pthread_mutex_unlock(&zp->sync.mu);
	tp_tm_thread(-1);
	return NULL;
}

/* Writes the chunks at the head of the ring that are done, in order; with `wait`, first
 * waits until the head chunk is done (so one slot is free afterwards). Returns a status. */
static int zpool_drain(struct pw *w, int wait)
{
	struct zpool *zp = &w->zp;
	int st = TP_OK;
	pthread_mutex_lock(&zp->sync.mu);
	if (wait)
		while (zp->head < zp->tail && zp->slot[zp->head % zp->nslots].state != ZS_DONE)
			pthread_cond_wait(&zp->sync.cv_done, &zp->sync.mu);
	while (!st && zp->head < zp->tail && zp->slot[zp->head % zp->nslots].state == ZS_DONE) {
		struct zslot *z = &zp->slot[zp->head % zp->nslots];
		pthread_mutex_unlock(&zp->sync.mu); /* a DONE slot belongs to the main thread */
		st = z->zn ? write_compressed(w, z->out.p, z->zn)
		           : tp_diag_set(w->d, TP_EOUTPUT, "%s: compression failed", w->path);
		pthread_mutex_lock(&zp->sync.mu);
		z->state = ZS_FREE;
		zp->head++;
	}
	pthread_mutex_unlock(&zp->sync.mu);
	return st;
}

/* Compresses the oldest queued chunk on the calling (encoding) thread when more than `keep`
 * chunks are queued, so that `keep` are left for the workers; returns 1 when it did. Each
 * chunk is compressed on its own at one level, so who compresses it does not change the
 * bytes. */
static int zpool_steal(struct pw *w, size_t keep)
{
	struct zpool *zp = &w->zp;
	struct zslot *job = NULL;
	size_t queued = 0;
	pthread_mutex_lock(&zp->sync.mu);
	for (uint64_t i = zp->head; i < zp->tail; i++) {
		struct zslot *z = &zp->slot[i % zp->nslots];
		if (z->state == ZS_QUEUED && !queued++)
			job = z;
	}
	if (queued > keep)
		job->state = ZS_BUSY;
	else
		job = NULL;
	pthread_mutex_unlock(&zp->sync.mu);
	if (!job)
		return 0;
	tp_tm_par_begin();
	size_t zn =
	    libdeflate_zlib_compress(w->z, job->in.p, job->in.len, job->out.p, job->out.cap);
	tp_tm_par_end();
	pthread_mutex_lock(&zp->sync.mu);
	job->zn = zn;
	job->state = ZS_DONE;
	pthread_cond_broadcast(&zp->sync.cv_done);
	pthread_mutex_unlock(&zp->sync.mu);
	return 1;
}

/* Compresses or waits for every queued chunk and writes them all, in order. */
int tp_perfetto_zcollect(struct pw *w)
{
	struct zpool *zp = &w->zp;
	int st = TP_OK;
	while (!st && zp->nthreads) {
		pthread_mutex_lock(&zp->sync.mu);
		int empty = zp->head == zp->tail;
		pthread_mutex_unlock(&zp->sync.mu);
		if (empty)
			break;
		/* The last chunks: the encoder has nothing else to do, so it takes queued
		 * ones itself instead of waiting for the workers to get to them. */
		st = zpool_drain(w, !zpool_steal(w, 0));
	}
	return st;
}

int tp_perfetto_flush_chunk(struct pw *w)
{
	if (w->chunk.oom || w->zout.oom)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory encoding the trace",
		                   w->path);
	if (!w->chunk.len)
		return TP_OK;
	size_t n = w->chunk.len;
	if (!w->compress) {
		if (tp_afile_write(&w->f, w->chunk.p, n) != 0)
			return tp_afile_fail(&w->f, w->d);
		w->chunk.len = 0;
		return TP_OK;
	}
	size_t bound = libdeflate_zlib_compress_bound(w->z, n);
	struct zpool *zp = &w->zp;
	if (zp->nthreads) {
		/* Write what is done; when the ring is full, compress the oldest queued chunk
		 * (if any) and wait for the oldest one. */
		pthread_mutex_lock(&zp->sync.mu);
		int full = zp->tail - zp->head == zp->nslots;
		pthread_mutex_unlock(&zp->sync.mu);
		if (full)
			zpool_steal(w, 0);
		int st = zpool_drain(w, full);
		if (st)
			return st;
		/* The tail slot is FREE (the ring has room), so it is ours: swap the chunk in. */
		struct zslot *z = &zp->slot[zp->tail % zp->nslots];
		if (tp_pb_reserve(&z->out, bound))
			return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory compressing",
			                   w->path);
		struct tp_pb t = z->in;
		z->in = w->chunk;
		w->chunk = t;
		w->chunk.len = 0;
		pthread_mutex_lock(&zp->sync.mu);
		z->state = ZS_QUEUED;
		zp->tail++;
		pthread_cond_signal(&zp->sync.cv_job);
		pthread_mutex_unlock(&zp->sync.mu);
		/* Balance: when the encoder is ahead of the workers (more than two chunks queued
		 * per worker, so each still has its next one and one more after the steal), it
		 * compresses the oldest queued chunk itself and leaves the rest to them. Stealing
		 * then, and not only when the ring is full, keeps every thread busy; keeping one
		 * queued chunk per worker instead of two steals too often
		 * (docs/perf-notes/trace-writers.md). */
		zpool_steal(w, 2 * (size_t)zp->nthreads);
		return TP_OK;
	}
	w->zout.len = 0;
	if (tp_pb_reserve(&w->zout, bound))
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory compressing", w->path);
	tp_tm_par_begin();
	size_t zn = libdeflate_zlib_compress(w->z, w->chunk.p, n, w->zout.p, bound);
	tp_tm_par_end();
	if (!zn)
		return tp_diag_set(w->d, TP_EOUTPUT, "%s: compression failed", w->path);
	w->chunk.len = 0;
	return write_compressed(w, w->zout.p, zn);
}

/* Starts the compression workers when they can help (compressing, more than one CPU):
 * `threads` is how many threads the writer may use in all, the calling (encoding) thread
 * included; 0 = tp_jobs_default(). At most MAX_ZWORKERS. Any failure just leaves fewer
 * workers (none: compression inline); the output bytes are the same either way. */
void tp_perfetto_zstart(struct pw *w, int threads)
{
	struct zpool *zp = &w->zp;
	int want = tp_wsync_workers(threads, MAX_ZWORKERS);
	if (!w->compress || want < 1)
		return;
	zp->w = w;
	if (tp_wsync_init(&zp->sync))
		return;
	/* Fixed before any worker starts (pthread_create orders it before their ring scans);
	 * workers that fail to start leave the ring larger than needed, which only adds slack. */
	zp->nslots = SLOTS_PER_WORKER * (size_t)want;
	for (int k = 0; k < want; k++) {
		struct zarg *a = tp_malloc(sizeof *a);
		if (!a || !(zp->z[k] = libdeflate_alloc_compressor(w->level))) {
			tp_free(a);
			break;
		}
		a->zp = zp;
		a->k = k;
		if (pthread_create(&zp->th[k], NULL, zworker_main, a)) {
			tp_free(a);
			libdeflate_free_compressor(zp->z[k]);
			zp->z[k] = NULL;
			break;
		}
		zp->nthreads++;
	}
	if (!zp->nthreads)
		tp_wsync_destroy(&zp->sync);
}

void tp_perfetto_zstop(struct pw *w)
{
	struct zpool *zp = &w->zp;
	if (zp->nthreads) {
		pthread_mutex_lock(&zp->sync.mu);
		zp->quit = 1; /* workers finish what is queued, then leave */
		pthread_cond_broadcast(&zp->sync.cv_job);
		pthread_mutex_unlock(&zp->sync.mu);
		for (int k = 0; k < zp->nthreads; k++) {
			pthread_join(zp->th[k], NULL);
			libdeflate_free_compressor(zp->z[k]);
		}
		tp_wsync_destroy(&zp->sync);
		zp->nthreads = 0;
	}
	for (size_t i = 0; i < ZSLOTS; i++) {
		tp_pb_free(&zp->slot[i].in);
		tp_pb_free(&zp->slot[i].out);
	}
}
