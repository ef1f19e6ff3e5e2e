/*
 * capture_toggle.c — the probe's `toggle` scenario: the main thread enables and disables
 * capture every ON_MS milliseconds while THREADS threads record without pause, then every
 * session's dump is read back and each thread's records are checked against what it
 * attempted. Run under ThreadSanitizer it is also the race test of enable/disable against
 * recording.
 *
 * What a thread attempted in which session: the main thread moves a phase word through
 * 4k+1 (enabling session k), 4k+2 (on: tpuprof_enable returned), 4k+3 (tpuprof_disable about
 * to be called) and 4k+4 (off: disable returned). A recording thread reads the phase before
 * and after each event (async_begin with the event's sequence number as its id, one record):
 * an event that saw 4k+2 both times was certainly made while session k was on, so it must be
 * in session k's dump or counted there as dropped; an event whose two readings touch k's
 * enabling or disabling phase may belong to k or to no session; any other event must not be
 * in session k.
 *
 * The check, per thread and session: the recorded sequence numbers run without a gap from a
 * to b; the thread's dropped count D covers the attempts right after b (a full buffer drops
 * every later event of that session), so the session accounts for [a, b + D]; that range
 * holds every event certain for the session and only events that may belong to it; and no
 * event is accounted for in two sessions. The session totals (SUMMARY) must equal the sums
 * over its threads, with no event lost for want of a buffer.
 */
#include "capture_probe.h"

#include "capture/capfmt.h"
#include "tpuprof/tpuprof.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TG_MAX_THREADS 64
#define TG_MAX_SESSIONS 2000
#define TG_MAX_FAILS 20

struct span {
	int64_t lo, hi; /* sequence numbers; empty when lo > hi */
};

struct rec_thread {
	pthread_t th;
	int idx;
	int64_t attempts;
	struct span *may, *must; /* per session */
};

static _Atomic uint32_t g_phase;
static _Atomic int g_stop;
static int g_sessions;
static int g_fails;

static void fail(int k, int idx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fail(int k, int idx, const char *fmt, ...)
{
	if (g_fails++ >= TG_MAX_FAILS)
		return;
	va_list ap;
	va_start(ap, fmt);
	if (idx >= 0)
		printf("FAIL session %d thread rec-%d: ", k, idx);
	else
		printf("FAIL session %d: ", k);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static void note(struct span *sp, int64_t i)
{
	if (sp->lo > sp->hi)
		sp->lo = i;
	sp->hi = i; /* sequence numbers only grow */
}

/* Event i saw phase p1 before and p2 after its call. */
static void classify(struct rec_thread *t, int64_t i, uint32_t p1, uint32_t p2)
{
	for (uint32_t k = p1 == 0 ? 0 : (p1 - 1) / 4; k < (uint32_t)g_sessions && 4 * k + 1 <= p2;
	     k++)
		if (4 * k + 3 >= p1)
			note(&t->may[k], i);
	if (p1 == p2 && p1 % 4 == 2)
		note(&t->must[p1 / 4], i);
}

static void *record_main(void *arg)
{
	struct rec_thread *t = arg;
	char name[16];
	snprintf(name, sizeof name, "rec-%d", t->idx);
	tpuprof_thread_name(name);
	int64_t i = 0;
	for (; !atomic_load_explicit(&g_stop, memory_order_relaxed); i++) {
		uint32_t p1 = atomic_load(&g_phase);
		tpuprof_async_begin("e", (uint64_t)i, NULL);
		/* The record's publication comes before the second reading. */
		atomic_thread_fence(memory_order_seq_cst);
		uint32_t p2 = atomic_load(&g_phase);
		classify(t, i, p1, p2);
	}
	t->attempts = i;
	return NULL;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0, r;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			unsigned char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	*len = n;
	return buf;
}

/* One THREAD block and its RECORDS block of thread rec-idx in session k: the records are its
 * events without a gap; with `t` (the final dump), the range they and the dropped count
 * account for (*acc) is checked against what the thread attempted. Returns the dropped
 * count. */
static uint64_t check_thread(int k, int idx, struct rec_thread *t, const unsigned char *thr,
                             const unsigned char *recs, uint64_t nrec, struct span *acc)
{
	uint64_t n = rd64(thr + 8), d = rd64(thr + 16);
	if (n != nrec)
		fail(k, idx, "THREAD says %llu records, RECORDS holds %llu", (unsigned long long)n,
		     (unsigned long long)nrec);
	int64_t a = 0, b = -1;
	for (uint64_t r = 0; r < nrec; r++) {
		const unsigned char *p = recs + r * TP_CAPFMT_RECORD_SIZE;
		int64_t seq = (int64_t)rd64(p + 16);
		if (p[8] != TP_CAPFMT_REC_ASYNC_BEGIN || (r > 0 && seq != b + 1)) {
			fail(k, idx, "record %llu: kind %u, id %lld after %lld",
			     (unsigned long long)r, p[8], (long long)seq, (long long)b);
			break;
		}
		if (r == 0)
			a = seq;
		b = seq;
	}
	if (t == NULL)
		return d;
	const struct span *must = &t->must[k], *may = &t->may[k];
	if (nrec == 0) /* everything dropped: the range starts at the first possible event */
		a = may->lo, b = may->lo - 1;
	acc->lo = a;
	acc->hi = b + (int64_t)d;
	if (must->lo <= must->hi && (must->lo < acc->lo || must->hi > acc->hi))
		fail(k, idx,
		     "accounts for [%lld, %lld] (recorded %llu, dropped %llu) but made "
		     "[%lld, %lld] while the session was on",
		     (long long)acc->lo, (long long)acc->hi, (unsigned long long)nrec,
		     (unsigned long long)d, (long long)must->lo, (long long)must->hi);
	if (acc->lo <= acc->hi && (acc->lo < may->lo || acc->hi > may->hi))
		fail(k, idx,
		     "accounts for [%lld, %lld], outside the events it may hold "
		     "[%lld, %lld]",
		     (long long)acc->lo, (long long)acc->hi, (long long)may->lo,
		     (long long)may->hi);
	return d;
}

struct totals {
	uint64_t recorded, dropped, certain, possible;
};

/* Reads session k's capture.tpp and checks every thread in it; with ts NULL (a dump flushed
 * while the session records) only the dump's own consistency. */
static void check_session(const char *dir, int k, struct rec_thread *ts, int nth, struct span *last,
                          struct totals *tot)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/tpuprof_data_dev0-%d.%ld/capture.tpp", dir, k,
	         (long)getpid());
	size_t len = 0;
	unsigned char *f = slurp(path, &len);
	if (f == NULL || len < TP_CAPFMT_HEADER_SIZE ||
	    memcmp(f, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE) != 0) {
		fail(k, -1, "cannot read %s", path);
		free(f);
		return;
	}
	int seen[TG_MAX_THREADS] = {0};
	uint64_t sum_n = 0, sum_d = 0, sum_recorded = 0, sum_dropped = 0;
	const unsigned char *thr = NULL;
	for (size_t off = TP_CAPFMT_HEADER_SIZE; off + TP_CAPFMT_BLOCK_HEADER_SIZE <= len;) {
		uint32_t type = rd32(f + off);
		uint64_t blen = rd64(f + off + 8);
		const unsigned char *p = f + off + TP_CAPFMT_BLOCK_HEADER_SIZE;
		if (blen > len - off - TP_CAPFMT_BLOCK_HEADER_SIZE) {
			fail(k, -1, "block at %zu runs past the end", off);
			break;
		}
		if (type == TP_CAPFMT_BLK_SUMMARY) {
			sum_recorded = rd64(p + 8);
			sum_dropped = rd64(p + 16);
		} else if (type == TP_CAPFMT_BLK_THREAD) {
			thr = p;
		} else if (type == TP_CAPFMT_BLK_RECORDS && thr) {
			int idx = -1;
			if (sscanf((const char *)thr + 40, "rec-%d", &idx) != 1 || idx < 0 ||
			    idx >= nth || seen[idx]++) {
				fail(k, idx, "unexpected thread block \"%.16s\"", thr + 40);
			} else {
				struct span acc;
				uint64_t nrec = blen / TP_CAPFMT_RECORD_SIZE;
				sum_d +=
				    check_thread(k, idx, ts ? &ts[idx] : NULL, thr, p, nrec, &acc);
				sum_n += nrec;
				if (ts && acc.lo <= acc.hi && acc.lo <= last[idx].hi)
					fail(k, idx,
					     "accounts for event %lld, already in an "
					     "earlier session (up to %lld)",
					     (long long)acc.lo, (long long)last[idx].hi);
				if (ts && acc.lo <= acc.hi)
					last[idx] = acc;
			}
			thr = NULL;
		}
		off += TP_CAPFMT_BLOCK_HEADER_SIZE + blen;
	}
	for (int i = 0; ts && i < nth; i++) {
		const struct span *m = &ts[i].must[k], *y = &ts[i].may[k];
		if (!seen[i] && m->lo <= m->hi)
			fail(k, i,
			     "no buffer in the dump, yet %lld events were made while the "
			     "session was on",
			     (long long)(m->hi - m->lo + 1));
		if (m->lo <= m->hi)
			tot->certain += (uint64_t)(m->hi - m->lo + 1);
		if (y->lo <= y->hi)
			tot->possible += (uint64_t)(y->hi - y->lo + 1);
	}
	if (sum_recorded != sum_n || sum_dropped != sum_d)
		fail(k, -1, "SUMMARY says %llu recorded, %llu dropped; the threads hold %llu, %llu",
		     (unsigned long long)sum_recorded, (unsigned long long)sum_dropped,
		     (unsigned long long)sum_n, (unsigned long long)sum_d);
	if (tot) {
		tot->recorded += sum_n;
		tot->dropped += sum_d;
	}
	free(f);
}

static int remove_session(const char *dir, int k)
{
	char cmd[4400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s/tpuprof_data_dev0-%d.%ld'", dir, k, (long)getpid());
	return system(cmd);
}

/* Usage: toggle THREADS SESSIONS ON_MS MAX_RECORDS (mode 1). */
int probe_toggle(int argc, char **argv)
{
	int nth = argc > 2 ? atoi(argv[2]) : 16;
	g_sessions = argc > 3 ? atoi(argv[3]) : 100;
	int on_ms = argc > 4 ? atoi(argv[4]) : 20;
	uint32_t max = argc > 5 ? (uint32_t)atol(argv[5]) : 1024;
	const char *dir = getenv("TPUPROF_DIR") ? getenv("TPUPROF_DIR") : ".";
	if (nth < 1 || nth > TG_MAX_THREADS || g_sessions < 1 || g_sessions > TG_MAX_SESSIONS)
		return 2;
	struct rec_thread *ts = calloc((size_t)nth, sizeof *ts);
	for (int i = 0; i < nth; i++) {
		ts[i].idx = i;
		ts[i].may = malloc((size_t)g_sessions * sizeof(struct span));
		ts[i].must = malloc((size_t)g_sessions * sizeof(struct span));
		for (int k = 0; k < g_sessions; k++)
			ts[i].may[k] = ts[i].must[k] = (struct span){1, 0};
		pthread_create(&ts[i].th, NULL, record_main, &ts[i]);
	}
	for (int k = 0; k < g_sessions; k++) {
		atomic_store(&g_phase, 4u * (uint32_t)k + 1);
		int rc = tpuprof_enable(max, TPUPROF_MODE_CONDENSED);
		atomic_store(&g_phase, 4u * (uint32_t)k + 2);
		/* A flush at once, while the threads attach to the session: its dump must be
		 * whole too. */
		if (tpuprof_flush() != TPUPROF_OK)
			fail(k, -1, "flush failed");
		check_session(dir, k, NULL, nth, NULL, NULL);
		sleep_ms(on_ms);
		atomic_store(&g_phase, 4u * (uint32_t)k + 3);
		int rd = tpuprof_disable();
		atomic_store(&g_phase, 4u * (uint32_t)k + 4);
		if (rc != TPUPROF_OK || rd != TPUPROF_OK)
			fail(k, -1, "enable %d, disable %d", rc, rd);
		sleep_ms(1);
	}
	atomic_store(&g_stop, 1);
	int64_t attempts = 0;
	for (int i = 0; i < nth; i++) {
		pthread_join(ts[i].th, NULL);
		attempts += ts[i].attempts;
	}
	struct span last[TG_MAX_THREADS];
	for (int i = 0; i < nth; i++)
		last[i] = (struct span){1, -1};
	struct totals tot = {0, 0, 0, 0};
	for (int k = 0; k < g_sessions; k++) {
		check_session(dir, k, ts, nth, last, &tot);
		if (g_fails == 0)
			remove_session(dir, k);
	}
	printf("toggle: %d sessions, %d threads, %lld events attempted: %llu recorded + %llu "
	       "dropped; %llu made while a session was on, %llu around its start or end\n",
	       g_sessions, nth, (long long)attempts, (unsigned long long)tot.recorded,
	       (unsigned long long)tot.dropped, (unsigned long long)tot.certain,
	       (unsigned long long)(tot.possible - tot.certain));
	for (int i = 0; i < nth; i++) {
		free(ts[i].may);
		free(ts[i].must);
	}
	free(ts);
	if (g_fails > TG_MAX_FAILS)
		printf("... %d failures in all\n", g_fails);
	return g_fails ? 1 : 0;
}
