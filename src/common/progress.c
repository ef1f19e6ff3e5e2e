/*
 * progress.c — the conversion's live progress line (see progress.h). Owns the process-wide
 * progress state: phase times, the per-output slots written by the writer threads through
 * relaxed atomics, and the ticker thread that draws on stderr. Everything printed on stderr
 * by this file happens under `mu`; the CLI prints its own stderr lines between
 * tp_progress_lock and tp_progress_unlock so they never land in the middle of a live line.
 */
#include "common/progress.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct slot {
	const char *name; /* set before state becomes 1 */
	atomic_int state; /* 0 unused, 1 running, 2 done */
	atomic_uint_least64_t done, total;
	atomic_llong t0, t1; /* ns */
};

static struct {
	atomic_int active;
	int show, have_thread, stop, line_on, ever_drawn;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	long long t_start, delay;
	uint64_t input_total;
	atomic_uint_least64_t input_done;
	int phase;              /* under mu */
	atomic_size_t noutputs; /* tp_progress_outputs */
	long long ph_t0[TP_PHASE_COUNT], ph_t1[TP_PHASE_COUNT];
	struct slot slots[TP_PROGRESS_SLOTS];
} g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static _Thread_local struct slot *cur_slot;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double secs(long long ns)
{
	return (double)ns * 1e-9;
}

void tp_progress_input_done(uint64_t bytes)
{
	atomic_fetch_add_explicit(&g.input_done, bytes, memory_order_relaxed);
}

void tp_progress_report(uint64_t done, uint64_t total)
{
	struct slot *s = cur_slot;
	if (!s)
		return;
	atomic_store_explicit(&s->total, total, memory_order_relaxed);
	atomic_store_explicit(&s->done, done, memory_order_relaxed);
}

static int term_width(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

#define LINE_MAX_CHARS 512

/* Appends printf output to line (bounded). */
static void cat(char *line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cat(char *line, const char *fmt, ...)
{
	size_t n = strlen(line);
	if (n + 1 >= LINE_MAX_CHARS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, LINE_MAX_CHARS - n, fmt, ap);
	va_end(ap);
}

static void fmt_eta(char *line, double elapsed, uint64_t done, uint64_t total)
{
	if (!total) {
		cat(line, " %.1f s", elapsed);
		return;
	}
	if (done > total)
		done = total;
	cat(line, " %u%%", (unsigned)(done * 100 / total));
	if (done && elapsed >= 0.5)
		cat(line, " ETA %.0f s", elapsed * (double)(total - done) / (double)done);
}

/* The live line of the current phase (mu held). */
static void live_text(char *line, long long now)
{
	double el = secs(now - g.ph_t0[g.phase]);
	line[0] = 0;
	switch (g.phase) {
	case TP_PHASE_READ: {
		double mb = (double)atomic_load_explicit(&g.input_done, memory_order_relaxed) / 1e6;
		cat(line, "tpuprof: reading %.1f", mb);
		if (g.input_total)
			cat(line, "/%.1f", (double)g.input_total / 1e6);
		cat(line, " MB, %.0f MB/s, %.1f s", el > 0 ? mb / el : 0.0, el);
		break;
	}
	case TP_PHASE_ANALYZE:
		cat(line, "tpuprof: analysing, %.1f s", el);
		break;
	default: {
		int ndone = 0, nall = 0;
		for (size_t i = 0; i < TP_PROGRESS_SLOTS; i++) {
			int st = atomic_load_explicit(&g.slots[i].state, memory_order_acquire);
			nall += st != 0;
			ndone += st == 2;
		}
		size_t want = atomic_load(&g.noutputs);
		if (want > (size_t)nall)
			nall = (int)want;
		cat(line, "tpuprof: writing %d/%d done, %.1f s", ndone, nall, el);
		for (size_t i = 0; i < TP_PROGRESS_SLOTS; i++) {
			struct slot *s = &g.slots[i];
			if (atomic_load_explicit(&s->state, memory_order_acquire) != 1)
				continue;
			cat(line, " | %s", s->name);
			fmt_eta(line, secs(now - atomic_load(&s->t0)),
			        atomic_load_explicit(&s->done, memory_order_relaxed),
			        atomic_load_explicit(&s->total, memory_order_relaxed));
		}
	}
	}
}

static void draw(long long now)
{
	char line[LINE_MAX_CHARS];
	live_text(line, now);
	int w = term_width() - 1;
	if ((int)strlen(line) > w)
		line[w] = 0;
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	g.line_on = 1;
	g.ever_drawn = 1;
}

/* Replaces the live line of the ending phase by its final text (mu held). */
static void end_phase(long long now)
{
	g.ph_t1[g.phase] = now;
	if (!g.line_on)
		return;
	double el = secs(now - g.ph_t0[g.phase]);
	if (g.phase == TP_PHASE_READ) {
		double mb = (double)atomic_load_explicit(&g.input_done, memory_order_relaxed) / 1e6;
		fprintf(stderr, "\rtpuprof: read %.1f MB in %.2f s (%.0f MB/s)\033[K\n", mb, el,
		        el > 0 ? mb / el : 0.0);
	} else if (g.phase == TP_PHASE_ANALYZE) {
		fprintf(stderr, "\rtpuprof: analysis in %.2f s\033[K\n", el);
	} else {
		int n = 0;
		for (size_t i = 0; i < TP_PROGRESS_SLOTS; i++)
			n += atomic_load(&g.slots[i].state) == 2;
		fprintf(stderr, "\rtpuprof: wrote %d outputs in %.2f s\033[K\n", n, el);
	}
	fflush(stderr);
	g.line_on = 0;
}

static void *ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g.mu);
	while (!g.stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g.cv, &g.mu, &ts);
		if (g.stop)
			break;
		long long now = now_ns();
		if (now - g.t_start >= g.delay)
			draw(now);
	}
	pthread_mutex_unlock(&g.mu);
	return NULL;
}

int tp_progress_start(int show, uint64_t input_total, long delay_ms)
{
	pthread_mutex_lock(&g.mu);
	g.t_start = now_ns();
	g.delay = (long long)delay_ms * 1000000LL;
	g.input_total = input_total;
	g.phase = TP_PHASE_READ;
	g.ph_t0[TP_PHASE_READ] = g.t_start;
	g.show = show;
	atomic_store(&g.active, 1);
	int rc = 0;
	if (show) {
		if (pthread_create(&g.th, NULL, ticker, NULL) == 0)
			g.have_thread = 1;
		else
			rc = -1;
	}
	pthread_mutex_unlock(&g.mu);
	return rc;
}

void tp_progress_phase(enum tp_progress_phase ph)
{
	if (!atomic_load(&g.active))
		return;
	pthread_mutex_lock(&g.mu);
	long long now = now_ns();
	end_phase(now);
	g.phase = (int)ph;
	g.ph_t0[ph] = now;
	g.ph_t1[ph] = 0;
	pthread_mutex_unlock(&g.mu);
}

void tp_progress_outputs(size_t n)
{
	atomic_store(&g.noutputs, n);
}

void tp_progress_slot_begin(size_t slot, const char *name)
{
	if (slot >= TP_PROGRESS_SLOTS)
		return;
	struct slot *s = &g.slots[slot];
	s->name = name;
	atomic_store(&s->done, 0);
	atomic_store(&s->total, 0);
	atomic_store(&s->t0, now_ns());
	atomic_store_explicit(&s->state, 1, memory_order_release);
	cur_slot = s;
}

void tp_progress_slot_end(size_t slot)
{
	cur_slot = NULL;
	if (slot >= TP_PROGRESS_SLOTS)
		return;
	atomic_store(&g.slots[slot].t1, now_ns());
	atomic_store_explicit(&g.slots[slot].state, 2, memory_order_release);
}

void tp_progress_lock(void)
{
	pthread_mutex_lock(&g.mu);
	if (g.line_on) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		g.line_on = 0;
	}
}

void tp_progress_unlock(void)
{
	pthread_mutex_unlock(&g.mu);
}

void tp_progress_finish(int mode)
{
	if (!atomic_load(&g.active))
		return;
	pthread_mutex_lock(&g.mu);
	g.stop = 1;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
	if (g.have_thread)
		pthread_join(g.th, NULL);
	g.have_thread = 0;
	pthread_mutex_lock(&g.mu);
	long long now = now_ns();
	end_phase(now);
	if (mode == 2 || (mode == 1 && g.ever_drawn)) {
		static const char *const names[TP_PHASE_COUNT] = {"reading", "analysis", "writing"};
		char line[LINE_MAX_CHARS] = "";
		cat(line, "tpuprof: done in %.2f s:", secs(now - g.t_start));
		int first = 1;
		for (int i = 0; i < TP_PHASE_COUNT; i++) {
			if (!g.ph_t0[i])
				continue;
			long long t1 = g.ph_t1[i] ? g.ph_t1[i] : now;
			cat(line, "%s %s %.2f s", first ? "" : ",", names[i],
			    secs(t1 - g.ph_t0[i]));
			first = 0;
			if (i != TP_PHASE_WRITE)
				continue;
			int any = 0;
			for (size_t k = 0; k < TP_PROGRESS_SLOTS; k++) {
				struct slot *s = &g.slots[k];
				if (atomic_load(&s->state) != 2)
					continue;
				cat(line, "%s%s %.2f s", any ? ", " : " (", s->name,
				    secs(atomic_load(&s->t1) - atomic_load(&s->t0)));
				any = 1;
			}
			if (any)
				cat(line, ")");
		}
		fprintf(stderr, "%s\n", line);
		fflush(stderr);
	}
	atomic_store(&g.active, 0);
	pthread_mutex_unlock(&g.mu);
}
