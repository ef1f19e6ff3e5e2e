/*
 * buffers.c — per-thread record buffers: the crash-safe live files (thread-K.tpc, mapped
 * extent by extent with disk space reserved first), the background worker that pre-faults a
 * thread's next extent, the session.tpc fields written while recording (metadata, clock
 * calibration, events lost for want of a buffer), and attach, which gives a thread its
 * buffer for the current session. It owns the thread registry's entries and the pre-fault
 * queue.
 */
#include "capture/capture_int.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

/* ---------------------------------------------------------------------------------------- */
/* Thread buffers                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* ---- the session directory and its live files ---- */

#ifdef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE_ MADV_POPULATE_WRITE
#else
#define MADV_POPULATE_WRITE_ 23 /* Linux 5.14; older kernels answer EINVAL */
#endif

static size_t round_page(size_t n)
{
	return (n + PAGE_SZ - 1) & ~(size_t)(PAGE_SZ - 1);
}

/* Maps [off, off+len) of the file at `path` over the reservation at `base`, after making sure
 * the file has disk space for it (so a later store can never raise SIGBUS). */
static int map_extent(const char *path, unsigned char *base, size_t off, size_t len, int touch)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = posix_fallocate(fd, (off_t)off, (off_t)len) == 0 ? 0 : -1;
	if (rc == 0 && mmap(base + off, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
	                    (off_t)off) == MAP_FAILED)
		rc = -1;
	close(fd);
	/* Take the pages' write faults here (the file system marks each page dirty on its first
	 * store), not while recording: in one call where the kernel has MADV_POPULATE_WRITE
	 * (Linux 5.14), else, with `touch` (the owner thread, on pages it has not used yet), by
	 * storing to each page. The pre-fault worker never stores: what it does (fallocate, the
	 * same shared mapping of the same file range, populate) leaves the data as it is, so the
	 * owner may map the same extent at the same time without losing a record. */
	if (rc == 0 && madvise(base + off, len, MADV_POPULATE_WRITE_) != 0 && touch)
		for (size_t i = 0; i < len; i += PAGE_SZ)
			__atomic_store_n(base + off + i, (unsigned char)0, __ATOMIC_RELAXED);
	return rc;
}

/* ---- background pre-fault of record extents ----
 * Mapping an extent of a live file is the costliest thing recording does (per page: disk
 * space, a page-cache page, zeroing, the first-store fault that marks it dirty), and a thread
 * would pay it every REC_EXTENT records (figures: docs/perf-notes/capture.md). So when a
 * thread starts using an extent (from its second on) it asks one background thread (started
 * on first use, all signals blocked) to map and touch the NEXT one (map_extent); when the
 * thread reaches it, it only advances its limit. If the worker has not got to it yet, the
 * thread takes the request back and maps the extent itself; if the worker is busy with it
 * (late: a loaded machine), the thread does not wait for it but maps the extent itself too
 * (harmless, see map_extent) and leaves the request abandoned; if the worker failed (disk
 * full), the thread retries itself and takes the usual disk-full path. Crash safety is the
 * same either way: the extent is fallocated and mapped from the same file, only earlier.
 * g_pf_mu guards the queue and every cap_thread's pf_* fields. */
static pthread_mutex_t g_pf_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_pf_work = PTHREAD_COND_INITIALIZER; /* a request was queued */
static pthread_cond_t g_pf_done = PTHREAD_COND_INITIALIZER; /* a request finished */
static struct cap_thread *g_pf_head, *g_pf_tail;
static pid_t g_pf_pid; /* the process whose worker runs; 0 = none (or a fork child's parent) */
static int g_warned_anon;

static void *pf_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g_pf_mu);
	for (;;) {
		while (g_pf_head == NULL)
			pthread_cond_wait(&g_pf_work, &g_pf_mu);
		struct cap_thread *t = g_pf_head;
		g_pf_head = t->pf_next;
		if (g_pf_head == NULL)
			g_pf_tail = NULL;
		t->pf_state = PF_BUSY; /* tp_cap_chunk_release waits: path and base stay valid */
		const char *path = t->path;
		unsigned char *base = t->base;
		size_t off = t->pf_off, len = t->pf_len;
		pthread_mutex_unlock(&g_pf_mu);
		int rc = map_extent(path, base, off, len, 0);
		pthread_mutex_lock(&g_pf_mu);
		if (t->pf_state == PF_ABANDONED)
			t->pf_state = PF_IDLE; /* its owner mapped the extent itself */
		else
			t->pf_state = rc == 0 ? PF_READY : PF_FAILED;
		pthread_cond_broadcast(&g_pf_done);
	}
	return NULL;
}

/* Asks the worker to map [off, off+len) of t's live file ahead of use (best effort: with no
 * worker, nothing happens and the thread maps the extent itself when it gets there). */
static void pf_request(struct cap_thread *t, size_t off, size_t len)
{
	if (!tp_cap_env.prefault || t->path == NULL)
		return;
	pthread_mutex_lock(&g_pf_mu);
	pid_t me = getpid();
	if (g_pf_pid != me) {
		pthread_t th;
		pthread_attr_t at;
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old); /* the host's signals never land there */
		int ok = pthread_attr_init(&at) == 0;
		if (ok) {
			pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
			ok = pthread_create(&th, &at, pf_main, NULL) == 0;
			pthread_attr_destroy(&at);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (ok)
			g_pf_pid = me;
	}
	if (g_pf_pid == me && t->pf_state == PF_IDLE) {
		t->pf_off = off;
		t->pf_len = len;
		t->pf_state = PF_QUEUED;
		t->pf_next = NULL;
		if (g_pf_tail)
			g_pf_tail->pf_next = t;
		else
			g_pf_head = t;
		g_pf_tail = t;
		pthread_cond_signal(&g_pf_work);
	}
	pthread_mutex_unlock(&g_pf_mu);
}

/* Takes t's request back from the queue (called with g_pf_mu held). */
static void pf_dequeue(struct cap_thread *t)
{
	struct cap_thread **pp = &g_pf_head, *prev = NULL;
	while (*pp && *pp != t) {
		prev = *pp;
		pp = &(*pp)->pf_next;
	}
	if (*pp) {
		*pp = t->pf_next;
		if (g_pf_tail == t)
			g_pf_tail = prev;
	}
	t->pf_state = PF_IDLE;
}

/* At an extent boundary: 1 if the worker has the extent at `off` mapped and pre-faulted (the
 * request is done), else 0 and the caller maps it itself — never waiting for the worker: a
 * queued request is taken back, one the worker is busy with is abandoned (the worker finishes
 * it harmlessly; see map_extent). */
static int pf_take(struct cap_thread *t, size_t off)
{
	if (!tp_cap_env.prefault)
		return 0;
	pthread_mutex_lock(&g_pf_mu);
	int ready = 0;
	if (t->pf_state == PF_QUEUED)
		pf_dequeue(t);
	else if (t->pf_state == PF_BUSY)
		t->pf_state = PF_ABANDONED;
	else if (t->pf_state == PF_READY || t->pf_state == PF_FAILED) {
		ready = t->pf_state == PF_READY && t->pf_off == off;
		t->pf_state = PF_IDLE;
	}
	pthread_mutex_unlock(&g_pf_mu);
	return ready;
}

/* Before t's mapping goes (tp_cap_chunk_release): ends its request, waiting until the worker no
 * longer uses t's path and mapping. */
static void pf_cancel(struct cap_thread *t)
{
	if (!tp_cap_env.prefault)
		return;
	pthread_mutex_lock(&g_pf_mu);
	if (t->pf_state == PF_QUEUED)
		pf_dequeue(t);
	while (t->pf_state == PF_BUSY || t->pf_state == PF_ABANDONED)
		pthread_cond_wait(&g_pf_done, &g_pf_mu);
	t->pf_state = PF_IDLE;
	pthread_mutex_unlock(&g_pf_mu);
}

/* In a fork child: the pre-fault worker is the parent's, so none runs here until one is
 * needed; its lock and queue start afresh. */
void tp_cap_pf_atfork_child(void)
{
	pthread_mutex_init(&g_pf_mu, NULL);
	pthread_cond_init(&g_pf_work, NULL);
	pthread_cond_init(&g_pf_done, NULL);
	g_pf_head = g_pf_tail = NULL;
	g_pf_pid = 0;
}

void tp_cap_ses_put_meta(void)
{
	unsigned char *m = __atomic_load_n(&tp_cap_ses.ses, __ATOMIC_ACQUIRE);
	if (m == NULL)
		return;
	uint32_t n = atomic_load_explicit(&tp_cap_meta_n, memory_order_acquire);
	memcpy(m + TP_CAPFMT_SES_OFF_META + 8, tp_cap_meta, n * sizeof tp_cap_meta[0]);
	put32(m + TP_CAPFMT_SES_OFF_META, n);
}

/* Refreshes the clock calibration point in session.tpc, so a dump rebuilt after a crash can
 * convert ticks to time. Cheap and rare (thread start, every REC_EXTENT records). */
static void calib_refresh(void)
{
	if (pthread_mutex_trylock(&tp_cap_calib_mu) != 0)
		return;
	unsigned char *m = __atomic_load_n(&tp_cap_ses.ses, __ATOMIC_ACQUIRE);
	if (m) {
		uint64_t t1, n1;
		tp_cap_calib_point(&t1, &n1);
		put64(m + TP_CAPFMT_OFF_TICK1, t1);
		put64(m + TP_CAPFMT_OFF_NS1, n1);
	}
	pthread_mutex_unlock(&tp_cap_calib_mu);
}

/* Counts events lost because no thread buffer could be made (rare; takes a lock). */
static void ses_lost(uint64_t n)
{
	pthread_mutex_lock(&tp_cap_calib_mu);
	unsigned char *m = __atomic_load_n(&tp_cap_ses.ses, __ATOMIC_ACQUIRE);
	if (m)
		__atomic_fetch_add((uint64_t *)(void *)(m + TP_CAPFMT_SES_OFF_LOST), n,
		                   __ATOMIC_RELAXED);
	pthread_mutex_unlock(&tp_cap_calib_mu);
}

/* ---- thread buffers ---- */

void tp_cap_chunk_release(struct cap_thread *t)
{
	pf_cancel(t); /* the worker is done with this mapping before it goes */
	if (t->base)
		munmap(t->base, t->vsize);
	free(t->path);
	t->base = NULL;
	t->path = NULL;
	t->h = NULL;
	t->recs = NULL;
	t->str = NULL;
	t->cap = t->lim = t->str_lim = 0;
}

/* Gives `t` a fresh live file for `cap` records (header page mapped and filled, the first
 * extents mapped and pre-faulted). If no file can be made, the buffer is anonymous memory:
 * recorded normally, written by flushes, but not kept if the process dies. 0 or -1. */
static int chunk_create(struct cap_thread *t, uint32_t cap)
{
	size_t rec_bytes = round_page((size_t)cap * TP_CAPFMT_RECORD_SIZE);
	size_t str_off = TP_CAPFMT_CHUNK_HEADER + rec_bytes;
	size_t vsize = str_off + STR_CAP;
	unsigned char *base =
	    mmap(NULL, vsize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -1;
	char path[4300];
	int fd = -1;
	pthread_mutex_lock(&tp_cap_dir_mu);
	if (tp_cap_env.crashsafe &&
	    (tp_cap_ses.made || (tp_cap_ses.lazy && tp_cap_ses_make() == 0))) {
		snprintf(path, sizeof path, "%s/thread-%u.tpc", tp_cap_ses.dir,
		         tp_cap_ses.nchunks++);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	}
	pthread_mutex_unlock(&tp_cap_dir_mu);
	int ok = fd >= 0 && posix_fallocate(fd, 0, TP_CAPFMT_CHUNK_HEADER) == 0 &&
	         mmap(base, TP_CAPFMT_CHUNK_HEADER, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
	              fd, 0) != MAP_FAILED;
	if (fd >= 0)
		close(fd);
	t->path = ok ? strdup(path) : NULL;
	if (ok && t->path == NULL)
		ok = 0;
	if (!ok) {
		if (fd >= 0)
			unlink(path);
		/* Anonymous memory for the whole buffer (pages are touched only when used). */
		if (mmap(base, vsize, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
		         0) == MAP_FAILED) {
			munmap(base, vsize);
			return -1;
		}
		if (tp_cap_env.crashsafe &&
		    !__atomic_exchange_n(&g_warned_anon, 1, __ATOMIC_RELAXED))
			tp_cap_warn(
			    "cannot create a per-thread file in \"%s\"; records are kept in "
			    "memory and "
			    "written only when the session ends normally",
			    tp_cap_ses.dir);
	}
	t->base = base;
	t->vsize = vsize;
	t->h = (struct chunk_hdr *)(void *)base;
	t->recs = (struct cap_rec *)(void *)(base + TP_CAPFMT_CHUNK_HEADER);
	t->str = (char *)base + str_off;
	t->cap = cap;
	t->lim = ok ? 0 : cap;
	t->str_lim = ok ? 0 : STR_CAP;
	struct chunk_hdr *h = t->h;
	memcpy(h->magic, TP_CAPFMT_CHUNK_MAGIC, 8);
	h->version = 1;
	h->hdr_size = TP_CAPFMT_CHUNK_HEADER;
	h->rec_cap = cap;
	h->str_off = str_off;
	h->str_cap = STR_CAP;
	return 0;
}

/* Slow path of the space checks: maps more of the live file until `k` more records (beyond
 * the reserved ones) fit, pre-faulting the new pages. 1 if they fit now, else 0 (the session
 * limit is reached, or the disk is full: the limit drops to what is mapped). */
NOINLINE int tp_cap_grow_recs(struct cap_thread *t, uint32_t k)
{
	while ((uint64_t)t->n + t->reserved + k > t->lim) {
		if (t->lim >= t->cap || t->path == NULL)
			return 0;
		uint32_t ext = t->cap - t->lim < REC_EXTENT ? t->cap - t->lim : REC_EXTENT;
		size_t off = TP_CAPFMT_CHUNK_HEADER + (size_t)t->lim * TP_CAPFMT_RECORD_SIZE;
		size_t len = round_page((size_t)ext * TP_CAPFMT_RECORD_SIZE);
		if (!pf_take(t, off) && map_extent(t->path, t->base, off, len, 1) != 0) {
			t->cap = t->lim;
			atomic_fetch_or_explicit(&t->h->flags, TP_CAPFMT_CKF_DISK_FULL,
			                         memory_order_relaxed);
			return 0;
		}
		t->lim += ext;
		calib_refresh();
		/* Records only go forward: have the next extent ready before they reach it. Only
		 * once the thread has filled its first extent, so short-lived threads (one op, then
		 * exit) cost the worker nothing. */
		if (t->lim < t->cap && off > TP_CAPFMT_CHUNK_HEADER) {
			uint32_t next = t->cap - t->lim < REC_EXTENT ? t->cap - t->lim : REC_EXTENT;
			pf_request(t, off + len, round_page((size_t)next * TP_CAPFMT_RECORD_SIZE));
		}
	}
	return 1;
}

int tp_cap_grow_str(struct cap_thread *t, size_t need)
{
	while (t->str_len + need > t->str_lim) {
		if (t->str_lim >= STR_CAP || t->path == NULL)
			return 0;
		size_t off = (size_t)((unsigned char *)t->str - t->base) + t->str_lim;
		if (map_extent(t->path, t->base, off, STR_EXTENT, 1) != 0) {
			atomic_fetch_or_explicit(&t->h->flags, TP_CAPFMT_CKF_DISK_FULL,
			                         memory_order_relaxed);
			return 0;
		}
		t->str_lim += STR_EXTENT;
	}
	return 1;
}

static void reset_thread(struct cap_thread *t)
{
	struct chunk_hdr *h = t->h;
	t->n = 0;
	t->reserved = 0;
	t->dropped_open = 0;
	atomic_store_explicit(&h->pub, 0, memory_order_relaxed);
	atomic_store_explicit(&h->dropped, 0, memory_order_relaxed);
	t->str_len = 0;
	t->str_count = 0;
	atomic_store_explicit(&h->str_pub, 0, memory_order_relaxed);
	atomic_store_explicit(&h->str_dropped, 0, memory_order_relaxed);
	if (t->cache)
		memset(t->cache, 0, sizeof(struct cache_ent) * ((size_t)t->cache_mask + 1));
	t->cache_used = 0;
	t->step_depth = 0;
	t->step_word = 0;
	t->hw_depth = 0;
	t->tid = gettid_();
	h->tid = t->tid;
	memset(h->name, 0, sizeof h->name);
	if (tp_cap_tls_name[0])
		memcpy(h->name, tp_cap_tls_name, sizeof h->name);
	else
		prctl(PR_GET_NAME, h->name, 0, 0, 0);
}

/* Slow path of a thread's first event: its cap_thread, from the registry (one whose thread
 * exited and whose buffer finish_session released: state 0) or a new one pushed onto it.
 * Reads nothing of the session, so it runs before the thread announces itself (enter in
 * record.c). NULL (the event is lost and counted in session.tpc) if memory is short. */
NOINLINE struct cap_thread *tp_cap_thread_new(void)
{
	struct cap_thread *t = NULL;
	for (struct cap_thread *c = atomic_load_explicit(&tp_cap_threads, memory_order_acquire); c;
	     c = c->next) {
		int one = 1;
		if (atomic_load_explicit(&c->state, memory_order_acquire) == 0 &&
		    atomic_compare_exchange_strong(&c->gone, &one, 0)) {
			t = c;
			break;
		}
	}
	if (t == NULL) {
		t = calloc(1, sizeof *t);
		if (t == NULL) {
			ses_lost(1);
			return NULL;
		}
		t->hw_fd = -1;
		struct cap_thread *head = atomic_load(&tp_cap_threads);
		do
			t->next = head;
		while (!atomic_compare_exchange_weak(&tp_cap_threads, &head, t));
	}
	tp_cap_tls_thread = t;
	pthread_setspecific(tp_cap_key, t);
	return t;
}

/* Slow path: gives `t` (the calling thread's) a buffer for session word `s`. Called inside a
 * recording call that has announced `s` in t->busy and seen it still current, so the session
 * cannot end (finish_session waits for t) and its parameters are stable. 0, or -1 when no
 * buffer can be had at all (the event is lost and counted in session.tpc). */
NOINLINE int tp_cap_attach(struct cap_thread *t, uint32_t s)
{
	int mode = (int)(s & 3u) - 1;
	uint32_t cap = tp_cap_ses.max_records;
	/* Stop the flusher from looking at this buffer while it is replaced. */
	atomic_store_explicit(&t->state, 0, memory_order_release);
	tp_cap_hw_close(t);
	if (t->base && t->path == NULL && !tp_cap_env.crashsafe && t->h->rec_cap >= cap) {
		/* TPUPROF_CRASHSAFE=0: reuse the private buffer, its pages are already touched. */
		t->cap = t->lim = cap;
	} else {
		tp_cap_chunk_release(t);
	}
	if (t->cache == NULL) {
		t->cache = calloc(CACHE_MIN, sizeof(struct cache_ent));
		t->cache_mask = t->cache ? CACHE_MIN - 1 : 0;
	}
	if (t->base == NULL && chunk_create(t, cap) != 0) {
		ses_lost(1);
		return -1;
	}
	reset_thread(t);
	/* Pre-fault the first extents here, outside the recording fast path. */
	tp_cap_grow_recs(t, 2);
	tp_cap_grow_str(t, 1);
	calib_refresh();
	if (mode == TPUPROF_MODE_DETAILED && tp_cap_env.hwcounters)
		tp_cap_hw_open(t);
	t->h->hw_kind = t->hw_kind;
	atomic_store_explicit(&t->state, s, memory_order_release);
	return 0;
}
