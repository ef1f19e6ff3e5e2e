/*
 * dump.c — the dump writer: capture.tpp from the published counts of every buffer of a
 * session, written to capture.tpp.tmp and renamed into place, and the flush lock that
 * serialises writers. Async-signal-safe: the SIGINT/SIGTERM handler runs it too.
 */
#include "capture/capture_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

static _Atomic int g_flush_owner;    /* tid of the flushing thread, 0 = free */
static unsigned char g_scratch[512]; /* block headers; used under the flush lock only */

/* ---------------------------------------------------------------------------------------- */
/* Dump writer (async-signal-safe; runs with the flush lock held)                            */
/* ---------------------------------------------------------------------------------------- */

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

void tp_cap_fill_header(unsigned char *h, uint64_t tick1, uint64_t ns1, uint32_t flags)
{
	memset(h, 0, TP_CAPFMT_HEADER_SIZE);
	memcpy(h + TP_CAPFMT_OFF_MAGIC, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE);
	put32(h + TP_CAPFMT_OFF_VERSION, TP_CAPFMT_VERSION);
	put32(h + TP_CAPFMT_OFF_HEADER_SIZE, TP_CAPFMT_HEADER_SIZE);
	uint32_t mark = TP_CAPFMT_ENDIAN_MARK;
	memcpy(h + TP_CAPFMT_OFF_ENDIAN, &mark, 4); /* native order: tells the reader */
	put32(h + TP_CAPFMT_OFF_RECORD_SIZE, TP_CAPFMT_RECORD_SIZE);
	put32(h + TP_CAPFMT_OFF_PID, (uint32_t)getpid());
	put32(h + TP_CAPFMT_OFF_DEVICE, (uint32_t)tp_cap_ses.device_active);
	put32(h + TP_CAPFMT_OFF_SESSION, tp_cap_ses.session);
	put32(h + TP_CAPFMT_OFF_MODE, (uint32_t)tp_cap_ses.mode);
	put32(h + TP_CAPFMT_OFF_CLOCK,
	      tp_cap_use_tsc ? TP_CAPFMT_CLOCK_TSC : TP_CAPFMT_CLOCK_MONOTONIC);
	put32(h + TP_CAPFMT_OFF_MAX_RECORDS, tp_cap_ses.max_records);
	put64(h + TP_CAPFMT_OFF_TICK0, tp_cap_tick0);
	put64(h + TP_CAPFMT_OFF_NS0, tp_cap_ns0);
	put64(h + TP_CAPFMT_OFF_TICK1, tick1);
	put64(h + TP_CAPFMT_OFF_NS1, ns1);
	memcpy(h + TP_CAPFMT_OFF_COMM, tp_cap_comm, TP_CAPFMT_COMM_SIZE);
	put32(h + TP_CAPFMT_OFF_FLUSHES, tp_cap_ses.flushes);
	put32(h + TP_CAPFMT_OFF_FLAGS, flags);
}

static unsigned char *block(unsigned char *p, uint32_t type, uint64_t len)
{
	put32(p, type);
	put32(p + 4, 0);
	put64(p + 8, len);
	return p + TP_CAPFMT_BLOCK_HEADER_SIZE;
}

/* Writes the dump of session word `s` as capture.tpp: into capture.tpp.tmp, then renamed over
 * the previous one, so what is on disk is never rewritten in place (a failed or interrupted
 * write leaves the previous capture.tpp and the live files as they were). `final` marks the
 * session's last dump. Returns 0 (also when a lazy session never recorded) or -1, errno set. */
int tp_cap_write_dump(uint32_t s, int final)
{
	if (!atomic_load(&tp_cap_ses.made))
		return 0;
	/* Snapshot counts first: records before strings, so every string a counted record
	 * uses is inside the string snapshot. */
	uint32_t nthreads = 0;
	uint64_t total = 0, dropped = 0, sdropped = 0;
	struct cap_thread *head = atomic_load_explicit(&tp_cap_threads, memory_order_acquire);
	for (struct cap_thread *t = head; t; t = t->next) {
		t->snap_s = atomic_load_explicit(&t->state, memory_order_acquire);
		if (t->snap_s != s)
			continue;
		t->snap_n = (uint32_t)atomic_load_explicit(&t->h->pub, memory_order_acquire);
		t->snap_str = atomic_load_explicit(&t->h->str_pub, memory_order_acquire);
		t->snap_dropped = atomic_load_explicit(&t->h->dropped, memory_order_relaxed);
		t->snap_str_dropped =
		    atomic_load_explicit(&t->h->str_dropped, memory_order_relaxed);
		nthreads++;
		total += t->snap_n;
		dropped += t->snap_dropped;
		sdropped += t->snap_str_dropped;
	}
	unsigned char *ses = __atomic_load_n(&tp_cap_ses.ses, __ATOMIC_ACQUIRE);
	if (ses)
		dropped += __atomic_load_n((uint64_t *)(void *)(ses + TP_CAPFMT_SES_OFF_LOST),
		                           __ATOMIC_RELAXED);
	uint64_t tick1, ns1;
	tp_cap_calib_point(&tick1, &ns1);
	tp_cap_ses.flushes++;

	int fd = open(tp_cap_ses.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	int rc = -1;
	unsigned char *h = g_scratch;
	tp_cap_fill_header(h, tick1, ns1, final ? TP_CAPFMT_HF_FINAL : 0);
	unsigned char *p = h + TP_CAPFMT_HEADER_SIZE;
	/* HWINFO */
	int hwk = atomic_load_explicit(&tp_cap_hw_kind, memory_order_acquire);
	uint32_t hwn = hwk > 0 ? tp_cap_hw_n : 0;
	p = block(p, TP_CAPFMT_BLK_HWINFO, 8 + (uint64_t)hwn * TP_CAPFMT_HW_NAME_SIZE);
	put32(p, hwk > 0 ? (uint32_t)hwk : TP_CAPFMT_HW_NONE);
	put32(p + 4, hwn);
	p += 8;
	for (uint32_t i = 0; i < hwn; i++, p += TP_CAPFMT_HW_NAME_SIZE)
		memcpy(p, tp_cap_hw_names[i], TP_CAPFMT_HW_NAME_SIZE);
	/* SUMMARY */
	p = block(p, TP_CAPFMT_BLK_SUMMARY, 32);
	put32(p, nthreads);
	put32(p + 4, 0);
	put64(p + 8, total);
	put64(p + 16, dropped);
	put64(p + 24, sdropped);
	p += 32;
	/* META */
	uint32_t nmeta = atomic_load_explicit(&tp_cap_meta_n, memory_order_acquire);
	p = block(p, TP_CAPFMT_BLK_META, 8 + (uint64_t)nmeta * sizeof tp_cap_meta[0]);
	put32(p, nmeta);
	put32(p + 4, 0);
	p += 8;
	if (write_all(fd, h, (size_t)(p - h)) != 0 ||
	    (nmeta && write_all(fd, tp_cap_meta, nmeta * sizeof tp_cap_meta[0]) != 0))
		goto out;

	for (struct cap_thread *t = head; t; t = t->next) {
		if (t->snap_s != s) /* attached after the snapshot: in the next dump */
			continue;
		uint32_t scount = (uint32_t)(t->snap_str >> 32), sbytes = (uint32_t)t->snap_str;
		p = block(h, TP_CAPFMT_BLK_THREAD, 56 + (uint64_t)sbytes);
		put64(p, (uint64_t)t->tid);
		put64(p + 8, t->snap_n);
		put64(p + 16, t->snap_dropped);
		put32(p + 24, scount);
		put32(p + 28, sbytes);
		put32(p + 32, t->snap_str_dropped);
		put32(p + 36, t->h->hw_kind);
		memcpy(p + 40, t->h->name, TP_CAPFMT_COMM_SIZE);
		p += 56;
		if (write_all(fd, h, (size_t)(p - h)) != 0 ||
		    (sbytes && write_all(fd, t->str, sbytes) != 0))
			goto out;
		p = block(h, TP_CAPFMT_BLK_RECORDS, (uint64_t)t->snap_n * TP_CAPFMT_RECORD_SIZE);
		if (write_all(fd, h, (size_t)(p - h)) != 0 ||
		    (t->snap_n &&
		     write_all(fd, t->recs, (size_t)t->snap_n * TP_CAPFMT_RECORD_SIZE) != 0))
			goto out;
	}
	p = block(h, TP_CAPFMT_BLK_END, 16);
	put64(p, total);
	put64(p + 8, dropped);
	p += 16;
	rc = write_all(fd, h, (size_t)(p - h));
out:;
	int err = errno;
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc == 0 && rename(tp_cap_ses.tmp, tp_cap_ses.path) != 0) {
		rc = -1;
		err = errno;
	}
	if (rc != 0)
		unlink(tp_cap_ses.tmp);
	errno = err;
	return rc;
}

/* Removes the live files of session `s` once its final capture.tpp is in place. */
void tp_cap_remove_live(uint32_t s)
{
	for (struct cap_thread *t = atomic_load_explicit(&tp_cap_threads, memory_order_acquire); t;
	     t = t->next)
		if (atomic_load_explicit(&t->state, memory_order_acquire) == s && t->path)
			unlink(t->path);
	if (atomic_load(&tp_cap_ses.made))
		unlink(tp_cap_ses.sespath);
}

/* Flush lock: a spin flag holding the owner's tid, so a signal handler can tell whether it
 * interrupted its own thread's flush (then it must not wait). */
int tp_cap_flush_lock(int from_signal)
{
	int me = (int)gettid_();
	for (long spins = 0;; spins++) {
		int free_ = 0;
		if (atomic_compare_exchange_strong(&g_flush_owner, &free_, me))
			return 1;
		if (free_ == me)
			return 0;
		if (from_signal && spins > 2000) /* ~2 s */
			return 0;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

void tp_cap_flush_unlock(void)
{
	atomic_store(&g_flush_owner, 0);
}
