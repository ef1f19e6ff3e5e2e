/*
 * timings.c — the per-phase report behind `tpuprof --timings FILE` (timings.h). Owns the
 * table of phase records, the stack of open phases (touched by the driving thread only), the
 * per-thread parallel-section clock and the process-wide counters of side-thread serial CPU
 * and live pool threads. Memory peaks come from the kernel's high-water mark of the
 * process (VmHWM in /proc/self/status), which each phase boundary folds into the open phases
 * and resets (writing 5 to /proc/self/clear_refs), so a phase's peak is its own.
 */
#include "common/timings.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int tp_tm_enabled;

#define TM_MAX_PHASES 128
#define TM_MAX_DEPTH 8

struct tm_phase {
	const char *name;
	int parent; /* index of the parent record, -1 for the root */
	int depth;
	unsigned runs;
	uint64_t wall_ns, cpu_ns, serial_ns;
	unsigned threads;        /* most threads at once (the driving one included) */
	uint64_t rss_start, hwm; /* bytes: resident at its first start, peak */
};

/* An open phase: its record and the clocks at its start. */
struct tm_open {
	int rec;
	uint64_t wall0, cpu0, thr0, par0, solo0;
};

static struct tm_phase phases[TM_MAX_PHASES];
static int nphases;
static struct tm_open open_[TM_MAX_DEPTH];
static int depth;
static atomic_uint_fast64_t solo_ns;
static atomic_int live_threads = 1;
static atomic_int peak_threads = 1;

static _Thread_local int par_depth;
static _Thread_local uint64_t par_t0, par_ns;
static _Thread_local uint64_t solo_t0;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* VmRSS or VmHWM of this process in bytes, 0 when /proc cannot say. */
static uint64_t proc_status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return 0;
	char line[256];
	size_t n = strlen(key);
	uint64_t kb = 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, key, n) == 0) {
			kb = strtoull(line + n, NULL, 10);
			break;
		}
	fclose(f);
	return kb * 1024;
}

static void reset_hwm(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "5", 1) != 1) {
		/* An old kernel: the peaks then run from the start of the process. */
	}
	close(fd);
}

/* Folds the high-water mark and thread peak since the last boundary into every open phase,
 * then starts both afresh. */
static void fold_peaks(void)
{
	uint64_t hwm = proc_status_kb("VmHWM:");
	int thr = atomic_exchange(&peak_threads, atomic_load(&live_threads));
	for (int i = 0; i < depth; i++) {
		struct tm_phase *ph = &phases[open_[i].rec];
		if (hwm > ph->hwm)
			ph->hwm = hwm;
		if ((unsigned)thr > ph->threads)
			ph->threads = (unsigned)thr;
	}
	reset_hwm();
}

static int find_or_add(const char *name, int parent)
{
	for (int i = 0; i < nphases; i++)
		if (phases[i].parent == parent && strcmp(phases[i].name, name) == 0)
			return i;
	if (nphases == TM_MAX_PHASES)
		return -1;
	phases[nphases] = (struct tm_phase){.name = name, .parent = parent, .depth = depth};
	return nphases++;
}

void tp_tm_begin(const char *name)
{
	if (!tp_tm_enabled)
		return;
	if (depth == TM_MAX_DEPTH)
		return;
	fold_peaks();
	int rec = find_or_add(name, depth ? open_[depth - 1].rec : -1);
	if (rec < 0)
		return;
	if (!phases[rec].runs++)
		phases[rec].rss_start = proc_status_kb("VmRSS:");
	open_[depth++] = (struct tm_open){.rec = rec,
	                                  .wall0 = clock_ns(CLOCK_MONOTONIC),
	                                  .cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID),
	                                  .thr0 = clock_ns(CLOCK_THREAD_CPUTIME_ID),
	                                  .par0 = par_ns,
	                                  .solo0 = atomic_load(&solo_ns)};
}

void tp_tm_end(void)
{
	if (!tp_tm_enabled || depth == 0)
		return;
	fold_peaks();
	struct tm_open *o = &open_[--depth];
	struct tm_phase *ph = &phases[o->rec];
	uint64_t thr = clock_ns(CLOCK_THREAD_CPUTIME_ID) - o->thr0;
	uint64_t par = par_ns - o->par0;
	ph->wall_ns += clock_ns(CLOCK_MONOTONIC) - o->wall0;
	ph->cpu_ns += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - o->cpu0;
	ph->serial_ns += (thr > par ? thr - par : 0) + (atomic_load(&solo_ns) - o->solo0);
}

void tp_tm_par_begin(void)
{
	if (tp_tm_enabled && par_depth++ == 0)
		par_t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void tp_tm_par_end(void)
{
	if (tp_tm_enabled && par_depth > 0 && --par_depth == 0)
		par_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - par_t0;
}

void tp_tm_solo_begin(void)
{
	if (tp_tm_enabled)
		solo_t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void tp_tm_solo_end(void)
{
	if (tp_tm_enabled)
		atomic_fetch_add(&solo_ns, clock_ns(CLOCK_THREAD_CPUTIME_ID) - solo_t0);
}

void tp_tm_thread(int delta)
{
	if (!tp_tm_enabled)
		return;
	int now = atomic_fetch_add(&live_threads, delta) + delta;
	int peak = atomic_load(&peak_threads);
	while (now > peak && !atomic_compare_exchange_weak(&peak_threads, &peak, now)) {
	}
}

void tp_tm_enable(void)
{
	tp_tm_enabled = 1;
	tp_tm_begin("total");
}

/* The path of record i ("read/global"), for the report. */
static void put_path(struct tp_buf *b, int i)
{
	if (phases[i].parent > 0) {
		put_path(b, phases[i].parent);
		tp_buf_putc(b, '/');
	}
	tp_buf_json_str(b, phases[i].name);
}

static void put_secs(struct tp_buf *b, const char *key, uint64_t ns)
{
	tp_buf_printf(b, ", \"%s\": ", key);
	tp_buf_fixed(b, (double)ns / 1e9, 6);
}

int tp_tm_write(const char *path, int jobs, const char *input, struct tp_diag *d)
{
	if (!tp_tm_enabled)
		return TP_OK;
	while (depth > 0)
		tp_tm_end();
	struct tp_buf b;
	tp_buf_init(&b);
	tp_buf_printf(&b, "{\"version\": 1, \"jobs\": %d, \"input\": \"", jobs);
	tp_buf_json_str(&b, input);
	tp_buf_puts(&b, "\",\n \"phases\": [");
	for (int i = 0; i < nphases; i++) {
		const struct tm_phase *ph = &phases[i];
		tp_buf_puts(&b, i ? ",\n  {\"name\": \"" : "\n  {\"name\": \"");
		put_path(&b, i);
		tp_buf_printf(&b, "\", \"depth\": %d, \"runs\": %u", ph->depth, ph->runs);
		put_secs(&b, "wall_s", ph->wall_ns);
		put_secs(&b, "cpu_s", ph->cpu_ns);
		put_secs(&b, "serial_cpu_s", ph->serial_ns);
		tp_buf_printf(
		    &b,
		    ", \"threads\": %u, \"rss_start_bytes\": %llu, \"rss_peak_bytes\": "
		    "%llu}",
		    ph->threads, (unsigned long long)ph->rss_start,
		    (unsigned long long)(ph->hwm > ph->rss_start ? ph->hwm : ph->rss_start));
	}
	tp_buf_puts(&b, "\n ]}\n");
	if (b.oom) {
		tp_buf_free(&b);
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
	}
	struct tp_afile f;
	int rc = tp_afile_open(&f, path, d);
	if (rc == TP_OK) {
		if (tp_afile_write(&f, b.data, b.len) != 0) {
			rc = tp_afile_fail(&f, d);
			tp_afile_abort(&f);
		} else {
			rc = tp_afile_commit(&f, d);
		}
	}
	tp_buf_free(&b);
	return rc;
}
