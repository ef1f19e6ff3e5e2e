/*
 * capture.c — the libtpuprof runtime: the public API of include/tpuprof/tpuprof.h, per-thread
 * record buffers, string interning (by value, UTF-8 cleaned), the clock, hardware counters,
 * the crash-safe live files and the dump writer. It owns all of the capture's global state
 * (the only global mutable state the project allows, STYLE.md): the session word, the thread
 * registry, the control mutex, the session directory and its shared mapping, and the saved
 * signal actions. It links against libc only (never tpcore).
 *
 * Hot path (one event): load the session word; if 0 return. Otherwise fetch this thread's
 * buffer (thread-local pointer), check that it belongs to the current session, check space,
 * write one 32-byte record and publish the new count with a release store. No lock, no
 * allocation, no system call (except the opt-in hardware counters), no log. When the mapped
 * part of the buffer is used up, a slow path maps (and pre-faults) the next extent.
 *
 * Crash safety (TPUPROF_CRASHSAFE=1, the default): a thread's buffer is a reservation whose
 * pages are mapped MAP_SHARED from thread-K.tpc in the dump directory, disk space reserved
 * first (posix_fallocate), so records and published counts reach the page cache as they are
 * written and survive any death of the process; the reader rebuilds the dump from them.
 *
 * Space rule: a begin is accepted only if there is room for it AND for its end, so an
 * accepted scope can always be closed; a dropped begin makes its end drop too. Every record
 * not written is counted and the count is part of the dump.
 *
 * Publication: the owner thread writes records[n] then stores count = n+1 (release); the
 * flusher loads the count (acquire) and writes records[0, count). Strings are published the
 * same way, before any record that uses them. The flusher may therefore run in a signal
 * handler or on another thread while recording goes on; it only uses async-signal-safe calls
 * (open, write, close, rename, unlink, clock_gettime) and writes capture.tpp.tmp, renamed
 * over capture.tpp, so nothing on disk is rewritten in place.
 */
#include "tpuprof/tpuprof.h"

#include "capture/capfmt.h"
#include "capture/env_table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLS_MODEL __attribute__((tls_model("initial-exec")))
#define NOINLINE __attribute__((noinline))

#define PAGE_SZ 4096u
#define REC_EXTENT (1u << 15) /* records mapped (and pre-faulted) per growth step: 1 MiB */
#define STR_EXTENT (1u << 18) /* string bytes mapped per growth step */
#define STR_CAP (1u << 26)    /* string storage per thread and session (64 MiB, virtual) */
#define CACHE_MIN (1u << 10)  /* initial intern cache slots (power of two) */
#define CACHE_MAX (1u << 20)  /* the cache stops growing here (strings are still stored) */
#define MAX_STR_LEN TP_CAPFMT_MAX_STR
#define STEP_MAX (1 << 20) /* deeper step nesting keeps the innermost known context */
#define HW_STACK 64
#define MAX_RECORDS (1u << 28) /* 8 GiB of records per thread at most */

/* One record, laid out exactly as on disk (capfmt.h) on a little-endian host. */
struct cap_rec {
	uint64_t ts;
	uint8_t kind;
	uint8_t flags;
	uint16_t aux;
	uint32_t name;
	uint64_t a;
	uint64_t b;
};
_Static_assert(sizeof(struct cap_rec) == TP_CAPFMT_RECORD_SIZE, "record must be 32 bytes");

/* The header page of a live thread file (capfmt.h, TP_CAPFMT_CK_OFF_*), shared-mapped. */
struct chunk_hdr {
	char magic[8];
	uint32_t version, hdr_size;
	uint64_t rec_cap, str_off, str_cap;
	int64_t tid;
	char name[TP_CAPFMT_COMM_SIZE];
	_Atomic uint64_t pub;
	_Atomic uint64_t str_pub; /* count << 32 | bytes */
	_Atomic uint64_t dropped;
	_Atomic uint32_t str_dropped;
	uint32_t hw_kind;
	_Atomic uint32_t flags;
};
_Static_assert(offsetof(struct chunk_hdr, pub) == TP_CAPFMT_CK_OFF_PUB, "chunk layout");
_Static_assert(offsetof(struct chunk_hdr, str_pub) == TP_CAPFMT_CK_OFF_STR_PUB, "chunk layout");
_Static_assert(offsetof(struct chunk_hdr, dropped) == TP_CAPFMT_CK_OFF_DROPPED, "chunk layout");
_Static_assert(offsetof(struct chunk_hdr, str_dropped) == TP_CAPFMT_CK_OFF_STR_DROPPED, "layout");
_Static_assert(offsetof(struct chunk_hdr, hw_kind) == TP_CAPFMT_CK_OFF_HW_KIND, "chunk layout");
_Static_assert(offsetof(struct chunk_hdr, flags) == TP_CAPFMT_CK_OFF_FLAGS, "chunk layout");
_Static_assert(offsetof(struct chunk_hdr, name) == TP_CAPFMT_CK_OFF_NAME, "chunk layout");

/* Intern cache entry. Every string is kept BY VALUE: a pointer only ever serves as a hint
 * whose bytes are compared with the stored copy.
 *   tag 2: op descriptor at `key`; id/off = its name, type, post_op (verified by strcmp);
 *   tag 3: content entry: `hash` of the cleaned bytes, id[0] / off[0] where they are stored;
 *   tag 4: pointer hint for text at `key`: id[0] / off[0] (verified by strcmp). */
struct cache_ent {
	const void *key;
	uint64_t hash;
	uint32_t tag;
	uint32_t id[3];
	uint32_t off[3];
};

/* One thread's buffer. Owner-only fields are plain; what the flusher reads is atomic (in the
 * shared-mapped chunk header). */
struct cap_thread {
	struct cap_thread *next; /* registry link, written once before publication */
	_Atomic uint32_t state;  /* session word this buffer records for (0 = none) */
	_Atomic int gone;        /* owner thread exited (or fork child): buffer reusable */

	/* The live file: one reservation of `vsize` bytes at `base`: header page, records,
	 * strings; pages are mapped from the file as they are needed. */
	unsigned char *base;
	size_t vsize;
	char *path; /* the live file, NULL if the buffer is anonymous memory */
	struct chunk_hdr *h;
	struct cap_rec *recs;
	uint32_t cap, lim, n; /* session limit, records mapped, records written */
	uint32_t reserved;    /* slots held for the ends of open scopes */
	uint32_t dropped_open;

	char *str;
	uint32_t str_lim, str_len, str_count;
	struct cache_ent *cache;
	uint32_t cache_mask, cache_used;
	uint32_t tmp_ids[3];

	int64_t tid;

	int64_t *steps;
	uint8_t *step_warm;
	int step_cap, step_depth;
	uint64_t step_word; /* the process-wide word this thread published, 0 if none */

	int hw_fd; /* perf group leader, -1 if none */
	int hw_fds[TP_CAPFMT_MAX_HW];
	uint32_t hw_kind, hw_n;
	uint64_t hw_self[TP_CAPFMT_MAX_HW]; /* the counters' own cost per read, subtracted */
	uint64_t hw_stack[HW_STACK][TP_CAPFMT_MAX_HW];
	int hw_depth;

	/* Background pre-fault of the next record extent (g_pf_mu guards all four). */
	struct cap_thread *pf_next; /* queue link */
	int pf_state;               /* PF_IDLE / QUEUED / BUSY / READY / FAILED */
	size_t pf_off, pf_len;      /* the extent asked for */

	/* flusher snapshot (written only by the flusher holding the flush lock) */
	uint32_t snap_n;
	uint64_t snap_str;
	uint64_t snap_dropped;
	uint32_t snap_str_dropped;
};

/* ---- global state (src/capture is the one place allowed to have it) ---- */

static _Atomic uint32_t g_state; /* gen << 2 | (mode + 1); 0 = off */
/* The public mirror of g_state != 0 for the inline TPUPROF_ON() test (tpuprof.h). */
TPUPROF_API uint32_t tpuprof_active;
static _Atomic(struct cap_thread *) g_threads; /* lock-free push-only registry */
static _Atomic uint64_t g_step_word;           /* process-wide open step: step<<2 | warm<<1 | 1 */
static _Atomic int g_flush_owner;              /* tid of the flushing thread, 0 = free */
static pthread_mutex_t g_ctl = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static TLS_MODEL _Thread_local struct cap_thread *tls_thread;
static TLS_MODEL _Thread_local char tls_name[TP_CAPFMT_COMM_SIZE]; /* tpuprof_thread_name */

static struct {
	int auto_mode; /* -1 none, else 1 or 2 */
	char dir[4096];
	uint32_t record_size;
	int hwcounters;
	int crashsafe;
	int prefault; /* TPUPROF_PREFAULT: pre-fault the next extent on a background thread */
} g_env;

static struct {
	uint32_t gen;      /* last generation used */
	uint32_t sessions; /* N of the next session */
	int device;        /* D of the next session */
	int mode;
	uint32_t max_records;
	_Atomic int made;  /* the session directory and session.tpc exist */
	int lazy;          /* fork child: the directory is made by the first record */
	uint32_t session;  /* N of the active session */
	int device_active; /* D of the active session */
	uint32_t flushes;
	uint32_t nchunks;   /* thread files made in this session */
	unsigned char *ses; /* shared mapping of session.tpc (TP_CAPFMT_SES_SIZE), or NULL */
	char dir[4240];
	char path[4264];    /* capture.tpp */
	char tmp[4264];     /* capture.tpp.tmp */
	char sespath[4264]; /* session.tpc */
} g_ses;
static pthread_mutex_t g_dir_mu = PTHREAD_MUTEX_INITIALIZER; /* session dir / thread files */
static pthread_mutex_t g_calib_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_warned_anon;

static int g_use_tsc;
static uint64_t g_tick0, g_ns0;    /* calibration point taken at initialisation */
static _Atomic int g_hw_kind = -1; /* process-wide counter kind, -1 = not probed yet */
static pthread_mutex_t g_hw_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_hw_names[TP_CAPFMT_MAX_HW][TP_CAPFMT_HW_NAME_SIZE];
static uint32_t g_hw_n;
static struct sigaction g_old_int, g_old_term;
static int g_sig_installed;
static char g_comm[TP_CAPFMT_COMM_SIZE];
static unsigned char g_scratch[512]; /* block headers; used under the flush lock only */
/* Run metadata (tpuprof_meta): append-only fixed entries; g_meta_n is published after an entry
 * is complete, so a flush (even from a signal handler) reads only whole entries. */
static char g_meta[TP_CAPFMT_META_MAX][TP_CAPFMT_META_KEY + TP_CAPFMT_META_VALUE];
static _Atomic uint32_t g_meta_n;

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                            */
/* ---------------------------------------------------------------------------------------- */

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n = snprintf(line, sizeof line, "tpuprof: warning: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	ssize_t w = write(2, line, (size_t)n);
	(void)w;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline uint64_t now_ticks(void)
{
#if HAVE_TSC
	if (LIKELY(g_use_tsc))
		return __rdtsc();
#endif
	return (uint64_t)mono_ns();
}

/* A (tick, ns) pair read close together: the tick is bracketed by two clock reads. */
static void calib_point(uint64_t *tick, uint64_t *ns)
{
	int64_t a = mono_ns();
	uint64_t t = now_ticks();
	int64_t b = mono_ns();
	*tick = t;
	*ns = (uint64_t)(a + (b - a) / 2);
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static int64_t gettid_(void)
{
	return (int64_t)syscall(SYS_gettid);
}

/* Parses a decimal unsigned integer; 0 on success. */
static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > 0xffffffffu)
			return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Initialisation: environment (read once, from the one table), clock, exit/fork hooks.      */
/* ---------------------------------------------------------------------------------------- */

enum env_id {
#define ENV_ENUM(id, name, type, def, doc) id,
	TPUPROF_ENV_TABLE(ENV_ENUM)
#undef ENV_ENUM
	    ENV_COUNT
};
static const struct {
	const char *name, *def;
} env_spec[ENV_COUNT] = {
#define ENV_SPEC(id, name, type, def, doc) [id] = {name, def},
    TPUPROF_ENV_TABLE(ENV_SPEC)
#undef ENV_SPEC
};

static const char *env_get(enum env_id id)
{
	const char *v = getenv(env_spec[id].name);
	return v ? v : env_spec[id].def;
}

static void read_env(void)
{
	const char *m = env_get(ENV_MODE);
	g_env.auto_mode = -1;
	if (m[0] == 0 || strcmp(m, "off") == 0)
		g_env.auto_mode = -1;
	else if (strcmp(m, "0") == 0 || strcmp(m, "1") == 0 || strcmp(m, "2") == 0)
		g_env.auto_mode = m[0] - '0'; /* the TPUPROF_MODE_* numbers */
	else
		warn("TPUPROF=%.64s is not off, 0, 1 or 2; capture stays off", m);

	const char *dir = env_get(ENV_DIR);
	if (dir[0] == 0)
		dir = env_spec[ENV_DIR].def;
	if (strlen(dir) >= sizeof g_env.dir - 64) {
		warn("TPUPROF_DIR is too long; using \"%s\"", env_spec[ENV_DIR].def);
		dir = env_spec[ENV_DIR].def;
	}
	snprintf(g_env.dir, sizeof g_env.dir, "%s", dir);

	uint32_t rs = 0;
	const char *r = env_get(ENV_RECORD_SIZE);
	if (parse_u32(r, &rs) != 0 || rs < 16 || rs > MAX_RECORDS) {
		warn("TPUPROF_RECORD_SIZE=%.64s is not a count in [16, %u]; using %s", r,
		     MAX_RECORDS, env_spec[ENV_RECORD_SIZE].def);
		parse_u32(env_spec[ENV_RECORD_SIZE].def, &rs);
	}
	g_env.record_size = rs;

	const char *cs = env_get(ENV_CRASHSAFE);
	g_env.crashsafe = 1;
	if (strcmp(cs, "0") == 0)
		g_env.crashsafe = 0;
	else if (cs[0] && strcmp(cs, "1") != 0)
		warn("TPUPROF_CRASHSAFE=%.64s is not 0 or 1; using 1", cs);

	const char *pf = env_get(ENV_PREFAULT);
	g_env.prefault = 1;
	if (strcmp(pf, "0") == 0)
		g_env.prefault = 0;
	else if (pf[0] && strcmp(pf, "1") != 0)
		warn("TPUPROF_PREFAULT=%.64s is not 0 or 1; using 1", pf);

	const char *h = env_get(ENV_HWCOUNTERS);
	if (h[0] == 0 || strcmp(h, "0") == 0)
		g_env.hwcounters = 0;
	else if (strcmp(h, "1") == 0)
		g_env.hwcounters = 1;
	else {
		warn("TPUPROF_HWCOUNTERS=%.64s is not 0 or 1; counters stay off", h);
		g_env.hwcounters = 0;
	}
}

static int tsc_usable(void)
{
#if HAVE_TSC
	unsigned a, b, c, d;
	/* Invariant TSC (CPUID 0x80000007 EDX bit 8): constant rate across P/C-states. */
	if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
		return 1;
#endif
	return 0;
}

static void hw_close(struct cap_thread *t);

/* Thread exit (pthread key destructor): the counters' file descriptors are closed now (they
 * count only this thread), the buffer stays until its records are written. */
static void thread_gone(void *p)
{
	struct cap_thread *t = p;
	hw_close(t);
	atomic_store_explicit(&t->gone, 1, memory_order_release);
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);
static int start_session(uint32_t max_records, int mode, int lazy);
static int finish_session(int warn_on_error);

static void init_once(void)
{
	read_env();
	g_use_tsc = tsc_usable();
	calib_point(&g_tick0, &g_ns0);
	pthread_key_create(&g_key, thread_gone);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	prctl(PR_GET_NAME, g_comm, 0, 0, 0);
}

static void ensure_init(void)
{
	pthread_once(&g_once, init_once);
}

__attribute__((constructor)) static void lib_load(void)
{
	ensure_init();
	if (g_env.auto_mode >= 0) {
		pthread_mutex_lock(&g_ctl);
		start_session(0, g_env.auto_mode, 0);
		pthread_mutex_unlock(&g_ctl);
	}
}

__attribute__((destructor)) static void lib_unload(void)
{
	pthread_mutex_lock(&g_ctl);
	if (atomic_load(&g_state) != 0)
		finish_session(1);
	pthread_mutex_unlock(&g_ctl);
}

/* ---------------------------------------------------------------------------------------- */
/* Hardware counters (opt-in, mode 2).                                                       */
/* ---------------------------------------------------------------------------------------- */

struct hw_event {
	uint32_t type;
	uint64_t config;
	const char *name;
};
static const struct hw_event hw_set[3] = {
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache_misses"},
};
static const struct hw_event sw_set[3] = {
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task_clock_ns"},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page_faults"},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context_switches"},
};

static int open_set(const struct hw_event *set, int *fds)
{
	int leader = -1;
	for (int i = 0; i < 3; i++) {
		struct perf_event_attr at;
		memset(&at, 0, sizeof at);
		at.size = sizeof at;
		at.type = set[i].type;
		at.config = set[i].config;
		at.exclude_kernel = 1;
		at.exclude_hv = 1;
		at.read_format = PERF_FORMAT_GROUP;
		int fd =
		    (int)syscall(SYS_perf_event_open, &at, 0, -1, leader, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			for (int j = 0; j < i; j++)
				close(fds[j]);
			return -1;
		}
		fds[i] = fd;
		if (leader < 0)
			leader = fd;
	}
	return leader;
}

static void hw_close(struct cap_thread *t)
{
	if (t->hw_fd >= 0)
		for (uint32_t i = 0; i < t->hw_n; i++)
			close(t->hw_fds[i]);
	t->hw_fd = -1;
	t->hw_n = 0;
	t->hw_kind = TP_CAPFMT_HW_NONE;
}

static int hw_read(struct cap_thread *t, uint64_t *vals);
static void ses_put_hw(void);

/* The counters see the library's own read() at each end of an operator: measure what two
 * back-to-back reads add (the smallest of 16 tries) and subtract it from every delta, so an
 * empty operator reads about 0 rather than the cost of the system call. */
static void hw_calibrate(struct cap_thread *t)
{
	uint64_t a[TP_CAPFMT_MAX_HW], b[TP_CAPFMT_MAX_HW];
	for (uint32_t i = 0; i < t->hw_n; i++)
		t->hw_self[i] = UINT64_MAX;
	for (int k = 0; k < 16; k++) {
		if (hw_read(t, a) != 0 || hw_read(t, b) != 0)
			break;
		for (uint32_t i = 0; i < t->hw_n; i++)
			if (b[i] - a[i] < t->hw_self[i])
				t->hw_self[i] = b[i] - a[i];
	}
	for (uint32_t i = 0; i < t->hw_n; i++)
		if (t->hw_self[i] == UINT64_MAX)
			t->hw_self[i] = 0;
}

/* Opens this thread's counter group; the first thread decides the process-wide kind. */
static void hw_open(struct cap_thread *t)
{
	int fds[3];
	int leader = -1;
	uint32_t kind = TP_CAPFMT_HW_NONE;
	const struct hw_event *set = NULL;
	pthread_mutex_lock(&g_hw_mu);
	if (g_hw_kind != TP_CAPFMT_HW_SOFTWARE && (leader = open_set(hw_set, fds)) >= 0) {
		kind = TP_CAPFMT_HW_HARDWARE;
		set = hw_set;
	} else if (g_hw_kind != TP_CAPFMT_HW_HARDWARE && (leader = open_set(sw_set, fds)) >= 0) {
		kind = TP_CAPFMT_HW_SOFTWARE;
		set = sw_set;
	}
	if (set == NULL) {
		pthread_mutex_unlock(&g_hw_mu);
		return;
	}
	t->hw_fd = leader;
	for (int i = 0; i < 3; i++)
		t->hw_fds[i] = fds[i];
	t->hw_n = 3;
	t->hw_kind = kind;
	hw_calibrate(t);
	if (g_hw_kind < 0) {
		/* The first thread that opens a set decides the kind for the whole process;
		 * the names are written before the kind is published. */
		g_hw_n = 3;
		for (int i = 0; i < 3; i++)
			snprintf(g_hw_names[i], sizeof g_hw_names[i], "%s", set[i].name);
		atomic_store_explicit(&g_hw_kind, (int)kind, memory_order_release);
	}
	ses_put_hw();
	pthread_mutex_unlock(&g_hw_mu);
}

static int hw_read(struct cap_thread *t, uint64_t *vals)
{
	uint64_t buf[1 + TP_CAPFMT_MAX_HW];
	ssize_t r = read(t->hw_fd, buf, sizeof buf);
	if (r < (ssize_t)(sizeof(uint64_t) * (1 + t->hw_n)) || buf[0] != t->hw_n)
		return -1;
	for (uint32_t i = 0; i < t->hw_n; i++)
		vals[i] = buf[1 + i];
	return 0;
}

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
 * Mapping an extent of a live file costs the kernel ~1-2 µs per page (disk space, page cache
 * page, zeroing, the first-store fault that marks it dirty): ~0.4 ms per 1 MiB extent, which
 * the recording thread used to pay every REC_EXTENT records. So when a thread starts using an
 * extent (from its second on) it asks one background thread (started on first use, all
 * signals blocked) to map and touch the NEXT one (map_extent); when the thread reaches it,
 * it only advances its limit. If the worker has not got to it yet, the thread takes the
 * request back and maps the extent itself; if the worker is busy with it (late: a loaded
 * machine), the thread does not wait for it but maps the extent itself too (harmless, see
 * map_extent) and leaves the request abandoned; if the worker failed (disk full), the thread
 * retries itself and takes the usual disk-full path. Crash safety is unchanged: the extent is
 * fallocated and mapped from the same file, only earlier.
 * g_pf_mu guards the queue and every cap_thread's pf_* fields. */
enum { PF_IDLE, PF_QUEUED, PF_BUSY, PF_ABANDONED, PF_READY, PF_FAILED };
static pthread_mutex_t g_pf_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_pf_work = PTHREAD_COND_INITIALIZER; /* a request was queued */
static pthread_cond_t g_pf_done = PTHREAD_COND_INITIALIZER; /* a request finished */
static struct cap_thread *g_pf_head, *g_pf_tail;
static pid_t g_pf_pid; /* the process whose worker runs; 0 = none (or a fork child's parent) */

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
		t->pf_state = PF_BUSY; /* chunk_release waits: path and base stay valid */
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
	if (!g_env.prefault || t->path == NULL)
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
	if (!g_env.prefault)
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

/* Before t's mapping goes (chunk_release): ends its request, waiting until the worker no
 * longer uses t's path and mapping. */
static void pf_cancel(struct cap_thread *t)
{
	if (!g_env.prefault)
		return;
	pthread_mutex_lock(&g_pf_mu);
	if (t->pf_state == PF_QUEUED)
		pf_dequeue(t);
	while (t->pf_state == PF_BUSY || t->pf_state == PF_ABANDONED)
		pthread_cond_wait(&g_pf_done, &g_pf_mu);
	t->pf_state = PF_IDLE;
	pthread_mutex_unlock(&g_pf_mu);
}

/* Creates the session directory, session.tpc and its mapping. Called with g_dir_mu held
 * (or before the session is published). 0 or -1 (errno set; one warning per process). */
static int ses_make(void);

static void ses_put_hw(void)
{
	/* Called with g_hw_mu held. */
	unsigned char *m = __atomic_load_n(&g_ses.ses, __ATOMIC_ACQUIRE);
	int k = atomic_load_explicit(&g_hw_kind, memory_order_acquire);
	if (m == NULL || k <= 0)
		return;
	put32(m + TP_CAPFMT_SES_OFF_HW, (uint32_t)k);
	put32(m + TP_CAPFMT_SES_OFF_HW + 4, g_hw_n);
	memcpy(m + TP_CAPFMT_SES_OFF_HW + 8, g_hw_names, sizeof g_hw_names);
}

static void ses_put_meta(void)
{
	unsigned char *m = __atomic_load_n(&g_ses.ses, __ATOMIC_ACQUIRE);
	if (m == NULL)
		return;
	uint32_t n = atomic_load_explicit(&g_meta_n, memory_order_acquire);
	memcpy(m + TP_CAPFMT_SES_OFF_META + 8, g_meta, n * sizeof g_meta[0]);
	put32(m + TP_CAPFMT_SES_OFF_META, n);
}

/* Refreshes the clock calibration point in session.tpc, so a dump rebuilt after a crash can
 * convert ticks to time. Cheap and rare (thread start, every REC_EXTENT records). */
static void calib_refresh(void)
{
	if (pthread_mutex_trylock(&g_calib_mu) != 0)
		return;
	unsigned char *m = __atomic_load_n(&g_ses.ses, __ATOMIC_ACQUIRE);
	if (m) {
		uint64_t t1, n1;
		calib_point(&t1, &n1);
		put64(m + TP_CAPFMT_OFF_TICK1, t1);
		put64(m + TP_CAPFMT_OFF_NS1, n1);
	}
	pthread_mutex_unlock(&g_calib_mu);
}

/* Counts events lost because no thread buffer could be made (rare; takes a lock). */
static void ses_lost(uint64_t n)
{
	pthread_mutex_lock(&g_calib_mu);
	unsigned char *m = __atomic_load_n(&g_ses.ses, __ATOMIC_ACQUIRE);
	if (m)
		__atomic_fetch_add((uint64_t *)(void *)(m + TP_CAPFMT_SES_OFF_LOST), n,
		                   __ATOMIC_RELAXED);
	pthread_mutex_unlock(&g_calib_mu);
}

/* ---- thread buffers ---- */

static void chunk_release(struct cap_thread *t)
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
	pthread_mutex_lock(&g_dir_mu);
	if (g_env.crashsafe && (g_ses.made || (g_ses.lazy && ses_make() == 0))) {
		snprintf(path, sizeof path, "%s/thread-%u.tpc", g_ses.dir, g_ses.nchunks++);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	}
	pthread_mutex_unlock(&g_dir_mu);
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
		if (g_env.crashsafe && !__atomic_exchange_n(&g_warned_anon, 1, __ATOMIC_RELAXED))
			warn("cannot create a per-thread file in \"%s\"; records are kept in "
			     "memory and "
			     "written only when the session ends normally",
			     g_ses.dir);
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
static NOINLINE int grow_recs(struct cap_thread *t, uint32_t k)
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

static int grow_str(struct cap_thread *t, size_t need)
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
	if (tls_name[0])
		memcpy(h->name, tls_name, sizeof h->name);
	else
		prctl(PR_GET_NAME, h->name, 0, 0, 0);
}

/* Slow path: gives this thread a buffer for session word `s`. Returns NULL (the event is lost
 * and counted in session.tpc) only if no buffer can be had at all. */
static __attribute__((noinline)) struct cap_thread *attach(uint32_t s)
{
	struct cap_thread *t = tls_thread;
	int mode = (int)(s & 3u) - 1;
	/* The session parameters were published with the release store of g_state. */
	if (atomic_load_explicit(&g_state, memory_order_acquire) != s)
		return NULL;
	uint32_t cap = g_ses.max_records;
	if (t == NULL) {
		/* Reuse a buffer whose thread exited and whose data was already written. */
		for (struct cap_thread *c = atomic_load_explicit(&g_threads, memory_order_acquire);
		     c; c = c->next) {
			int one = 1;
			if (atomic_load_explicit(&c->state, memory_order_relaxed) != s &&
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
			struct cap_thread *head = atomic_load(&g_threads);
			do
				t->next = head;
			while (!atomic_compare_exchange_weak(&g_threads, &head, t));
		}
		tls_thread = t;
		pthread_setspecific(g_key, t);
	}
	/* Stop the flusher from looking at this buffer while it is replaced. */
	atomic_store_explicit(&t->state, 0, memory_order_release);
	hw_close(t);
	if (t->base && t->path == NULL && !g_env.crashsafe && t->h->rec_cap >= cap) {
		/* TPUPROF_CRASHSAFE=0: reuse the private buffer, its pages are already touched. */
		t->cap = t->lim = cap;
	} else {
		chunk_release(t);
	}
	if (t->cache == NULL) {
		t->cache = calloc(CACHE_MIN, sizeof(struct cache_ent));
		t->cache_mask = t->cache ? CACHE_MIN - 1 : 0;
	}
	if (t->base == NULL && chunk_create(t, cap) != 0) {
		ses_lost(1);
		return NULL;
	}
	reset_thread(t);
	/* Pre-fault the first extents here, outside the recording fast path. */
	grow_recs(t, 2);
	grow_str(t, 1);
	calib_refresh();
	if (mode == TPUPROF_MODE_DETAILED && g_env.hwcounters)
		hw_open(t);
	t->h->hw_kind = t->hw_kind;
	atomic_store_explicit(&t->state, s, memory_order_release);
	return t;
}

static inline struct cap_thread *cur_thread(uint32_t s)
{
	struct cap_thread *t = tls_thread;
	if (UNLIKELY(t == NULL || atomic_load_explicit(&t->state, memory_order_relaxed) != s))
		t = attach(s);
	return t;
}

static inline void publish(struct cap_thread *t)
{
	atomic_store_explicit(&t->h->pub, t->n, memory_order_release);
}

static inline void drop(struct cap_thread *t, uint64_t n)
{
	atomic_store_explicit(&t->h->dropped,
	                      atomic_load_explicit(&t->h->dropped, memory_order_relaxed) + n,
	                      memory_order_relaxed);
}

/* Room for a begin and its end. Returns the record or NULL (dropped and counted). */
static inline struct cap_rec *begin_rec(struct cap_thread *t)
{
	if (UNLIKELY(t->dropped_open || t->n + t->reserved + 2 > t->lim) &&
	    (t->dropped_open || !grow_recs(t, 2))) {
		t->dropped_open++;
		drop(t, 1);
		return NULL;
	}
	t->reserved++;
	return &t->recs[t->n];
}

/* The end of a scope: uses the slot its begin reserved; dropped if its begin was. */
static inline struct cap_rec *end_rec(struct cap_thread *t)
{
	if (UNLIKELY(t->dropped_open)) {
		t->dropped_open--;
		drop(t, 1);
		return NULL;
	}
	if (LIKELY(t->reserved)) {
		t->reserved--;
		return &t->recs[t->n];
	}
	/* An end without a begin (misuse): treat as an instant. */
	if (t->n + 1 > t->lim && !grow_recs(t, 1)) {
		drop(t, 1);
		return NULL;
	}
	return &t->recs[t->n];
}

/* Room for k records that reserve nothing. */
static inline int room(struct cap_thread *t, uint32_t k)
{
	return (uint64_t)t->n + t->reserved + k <= t->lim || grow_recs(t, k);
}

/* ---- names: UTF-8 cleaning and interning ---- */

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0 if invalid: no
 * overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

/* Copies the NUL-terminated `s` into `out` (MAX_STR_LEN + 1 bytes) as valid UTF-8: every
 * invalid byte becomes U+FFFD, and the text is cut at MAX_STR_LEN bytes on a character
 * boundary. Returns the length; *same = 1 if `out` equals `s`. */
static size_t clean_text(const char *s, char *out, int *same)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	*same = 1;
	while (*p) {
		size_t avail = strnlen((const char *)p, 4);
		size_t k = utf8_seq(p, avail);
		if (k == 0) {
			if (o + 3 > MAX_STR_LEN) {
				*same = 0;
				break;
			}
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			p++;
			*same = 0;
			continue;
		}
		if (o + k > MAX_STR_LEN) {
			*same = 0;
			break;
		}
		memcpy(out + o, p, k);
		o += k;
		p += k;
	}
	out[o] = 0;
	return o;
}

/* Stores `len` clean bytes and publishes them; returns the 1-based id, or 0 if the storage is
 * full (counted in the thread's header and reported by the converter). */
static uint32_t store_str(struct cap_thread *t, const char *s, size_t len)
{
	if (t->str == NULL || !grow_str(t, len + 1)) {
		atomic_fetch_add_explicit(&t->h->str_dropped, 1, memory_order_relaxed);
		return 0;
	}
	memcpy(t->str + t->str_len, s, len);
	t->str[t->str_len + len] = 0;
	t->str_len += (uint32_t)len + 1;
	t->str_count++;
	atomic_store_explicit(&t->h->str_pub, (uint64_t)t->str_count << 32 | t->str_len,
	                      memory_order_release);
	return t->str_count; /* ids are 1-based; 0 = "" */
}

static inline uint64_t ptr_hash(const void *p)
{
	/* Byte-aligned keys (string literals) must not share slots: hash every bit. */
	return (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
}

static inline struct cache_ent *home_of(struct cap_thread *t, uint64_t h)
{
	return &t->cache[(uint32_t)(h >> 32) & t->cache_mask];
}

/* Doubles the cache (up to CACHE_MAX) and re-inserts every entry. 0 or -1. */
static int cache_grow(struct cap_thread *t)
{
	if (t->cache == NULL || t->cache_mask + 1 >= CACHE_MAX)
		return -1;
	uint32_t nslots = (t->cache_mask + 1) * 2;
	struct cache_ent *nc = calloc(nslots, sizeof *nc);
	if (nc == NULL)
		return -1;
	struct cache_ent *old = t->cache;
	uint32_t oslots = t->cache_mask + 1;
	t->cache = nc;
	t->cache_mask = nslots - 1;
	t->cache_used = 0;
	for (uint32_t i = 0; i < oslots; i++) {
		if (old[i].tag == 0)
			continue;
		for (uint32_t j = (uint32_t)(old[i].hash >> 32) & t->cache_mask;;
		     j = (j + 1) & t->cache_mask) {
			if (nc[j].tag == 0) {
				nc[j] = old[i];
				t->cache_used++;
				break;
			}
		}
	}
	free(old);
	return 0;
}

/* Finds the entry (tag, key or content) or the free slot where it belongs (growing the
 * cache when it is half full or a neighbourhood is crowded). NULL: no slot (cache at its
 * limit) — the caller then stores without caching. */
static struct cache_ent *cache_find(struct cap_thread *t, uint64_t h, uint32_t tag, const void *key,
                                    const char *text, size_t len, int *found)
{
	*found = 0;
	if (t->cache == NULL)
		return NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		uint32_t mask = t->cache_mask;
		uint32_t i = (uint32_t)(h >> 32) & mask;
		for (uint32_t probes = 0; probes < 64; i = (i + 1) & mask, probes++) {
			struct cache_ent *e = &t->cache[i];
			if (e->tag == 0) {
				if (t->cache_used + 1 > (mask + 1) / 2 && cache_grow(t) == 0)
					break; /* retry in the bigger table */
				return e;
			}
			if (e->tag != tag || e->hash != h)
				continue;
			if (tag == 3 ? memcmp(t->str + e->off[0], text, len + 1) == 0
			             : e->key == key) {
				*found = 1;
				return e;
			}
		}
		if (attempt == 0 && t->cache_mask == mask && cache_grow(t) != 0)
			return NULL;
	}
	return NULL;
}

/* Text kept by value. A pointer hint (tag 4) remembers where the same pointer's bytes were
 * stored; it counts only if the bytes are still the same. Otherwise the text is cleaned
 * (UTF-8, length) and looked up by content. */
static uint32_t intern_text_at(struct cap_thread *t, const char *s, uint32_t *at)
{
	*at = UINT32_MAX; /* where the stored bytes equal `s` (none if it had to be cleaned) */
	if (s == NULL || s[0] == 0)
		return 0;
	uint64_t ph = ptr_hash(s);
	if (LIKELY(t->cache != NULL)) {
		struct cache_ent *home = home_of(t, ph);
		if (LIKELY(home->tag == 4 && home->key == (const void *)s &&
		           strcmp(t->str + home->off[0], s) == 0)) {
			*at = home->off[0];
			return home->id[0];
		}
		/* The hint may sit a few slots further (its home taken by another key). */
		int hf;
		struct cache_ent *e = home->tag ? cache_find(t, ph, 4, s, NULL, 0, &hf) : NULL;
		if (e && hf && strcmp(t->str + e->off[0], s) == 0) {
			*at = e->off[0];
			return e->id[0];
		}
	}
	char buf[MAX_STR_LEN + 1];
	int same;
	size_t len = clean_text(s, buf, &same);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
	int found;
	struct cache_ent *e = cache_find(t, h, 3, NULL, buf, len, &found);
	uint32_t id, off;
	if (found) {
		id = e->id[0];
		off = e->off[0];
	} else {
		off = t->str_len;
		id = store_str(t, buf, len);
		if (id == 0)
			return 0;
		if (e) {
			e->key = NULL;
			e->hash = h;
			e->id[0] = id;
			e->off[0] = off;
			e->tag = 3;
			t->cache_used++;
		}
	}
	if (same)
		*at = off;
	if (same && t->cache) {
		/* Hint for the next call with this pointer (its bytes equal the stored ones). */
		struct cache_ent *hint = cache_find(t, ph, 4, s, NULL, 0, &found);
		if (hint) {
			if (!found)
				t->cache_used++;
			hint->key = s;
			hint->hash = ph;
			hint->id[0] = id;
			hint->off[0] = off;
			hint->tag = 4;
		}
	}
	return id;
}

static inline uint32_t intern_text(struct cap_thread *t, const char *s)
{
	uint32_t at;
	return intern_text_at(t, s, &at);
}

/* 1 if the cached id/offset still describe the text at `s` (NULL or "" = id 0; an offset of
 * UINT32_MAX = cleaned text, never taken as the same). */
static inline int same_text(const struct cap_thread *t, const char *s, uint32_t id, uint32_t off)
{
	if (s == NULL || s[0] == 0)
		return id == 0;
	return id != 0 && off != UINT32_MAX && strcmp(t->str + off, s) == 0;
}

static void op_entry_fill(struct cap_thread *t, uint32_t *id, uint32_t *off,
                          const struct tpuprof_op *op)
{
	const char *f[3] = {op->name, op->type, op->post_op};
	for (int k = 0; k < 3; k++)
		id[k] = intern_text_at(t, f[k], &off[k]);
}

/* An operator descriptor: name, type and post-op ids, cached by the descriptor's address and
 * verified by value (a descriptor whose strings changed is interned again). */
static inline const uint32_t *intern_op(struct cap_thread *t, const struct tpuprof_op *op)
{
	uint64_t h = ptr_hash(op);
	if (LIKELY(t->cache != NULL)) {
		struct cache_ent *home = home_of(t, h);
		if (LIKELY(home->tag == 2 && home->key == (const void *)op &&
		           same_text(t, op->name, home->id[0], home->off[0]) &&
		           same_text(t, op->type, home->id[1], home->off[1]) &&
		           same_text(t, op->post_op, home->id[2], home->off[2])))
			return home->id;
	}
	int found;
	struct cache_ent *e = cache_find(t, h, 2, op, NULL, 0, &found);
	if (e && found && same_text(t, op->name, e->id[0], e->off[0]) &&
	    same_text(t, op->type, e->id[1], e->off[1]) &&
	    same_text(t, op->post_op, e->id[2], e->off[2]))
		return e->id;
	uint32_t id[3], off[3];
	op_entry_fill(t, id, off, op);
	/* The slot may have moved if the cache grew while interning. */
	e = cache_find(t, h, 2, op, NULL, 0, &found);
	if (e == NULL) {
		memcpy(t->tmp_ids, id, sizeof id);
		return t->tmp_ids;
	}
	if (!found)
		t->cache_used++;
	e->key = op;
	e->hash = h;
	memcpy(e->id, id, sizeof id);
	memcpy(e->off, off, sizeof off);
	e->tag = 2;
	return e->id;
}

/* A name given as a string (activity, graph, runtime call, counter): kept by value. */
static inline uint32_t intern_ptr(struct cap_thread *t, const char *s)
{
	return intern_text(t, s);
}

/* ---- step context ---- */

static inline void step_ctx(struct cap_thread *t, struct cap_rec *r)
{
	if (t->step_depth > 0 && t->step_cap > 0) {
		/* Deeper than the stack could grow: the innermost level it holds. */
		int i = (t->step_depth < t->step_cap ? t->step_depth : t->step_cap) - 1;
		r->a = (uint64_t)t->steps[i];
		r->flags = (uint8_t)(TP_CAPFMT_F_STEP | (t->step_warm[i] ? TP_CAPFMT_F_WARMUP : 0));
		return;
	}
	uint64_t w = atomic_load_explicit(&g_step_word, memory_order_relaxed);
	if (w & 1) {
		r->a = (uint64_t)((int64_t)w >> 2);
		r->flags = (uint8_t)(TP_CAPFMT_F_STEP | ((w & 2) ? TP_CAPFMT_F_WARMUP : 0));
	} else {
		r->a = 0;
		r->flags = 0;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Recording API                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* The public functions test the session word inline and call these (never inlined) workers
 * only when capture is on, so the off path is a load, a test and a return. */
#define OFF_RETURN(s)                                                                              \
	uint32_t s = atomic_load_explicit(&g_state, memory_order_relaxed);                         \
	if (LIKELY(s == 0))                                                                        \
	return
#define THREAD_OR_RETURN(s, t)                                                                     \
	struct cap_thread *t = cur_thread(s);                                                      \
	if (UNLIKELY(t == NULL))                                                                   \
	return

static inline int mode_of(uint32_t s)
{
	return (int)(s & 3u) - 1;
}

static NOINLINE void scope_begin(uint32_t s, uint8_t kind, const char *name, int64_t step,
                                 const char *meta, int with_ctx)
{
	THREAD_OR_RETURN(s, t);
	struct cap_rec *r = begin_rec(t);
	if (r == NULL)
		return;
	int mode = mode_of(s);
	r->kind = kind;
	r->aux = 0;
	r->flags = 0;
	r->a = (uint64_t)step;
	r->b = 0;
	if (with_ctx)
		step_ctx(t, r);
	if (mode >= TPUPROF_MODE_CONDENSED) {
		r->name = intern_ptr(t, name);
		if (meta)
			r->b = intern_text(t, meta);
	} else {
		r->name = 0;
	}
	r->ts = now_ticks();
	t->n++;
	publish(t);
}

static NOINLINE void scope_end(uint32_t s, uint64_t ts, uint8_t kind, const char *name,
                               int64_t step, const char *meta)
{
	THREAD_OR_RETURN(s, t);
	struct cap_rec *r = end_rec(t);
	if (r == NULL)
		return;
	r->ts = ts;
	r->kind = kind;
	r->flags = 0;
	r->aux = 0;
	r->a = (uint64_t)step;
	r->b = 0;
	r->name = 0;
	if (mode_of(s) >= TPUPROF_MODE_CONDENSED) {
		r->name = intern_ptr(t, name);
		if (meta)
			r->b = intern_text(t, meta);
	}
	t->n++;
	publish(t);
}

void tpuprof_activity_begin(const char *name, int64_t step, const char *meta)
{
	OFF_RETURN(s);
	scope_begin(s, TP_CAPFMT_REC_ACT_BEGIN, name, step, meta, 0);
}

void tpuprof_activity_end(const char *name, int64_t step, const char *meta)
{
	OFF_RETURN(s);
	scope_end(s, now_ticks(), TP_CAPFMT_REC_ACT_END, name, step, meta);
}

static NOINLINE void step_begin(uint32_t s, const char *graph, int64_t step, int warmup)
{
	THREAD_OR_RETURN(s, t);
	/* The step context is kept even when the record itself is dropped. */
	if (t->step_depth >= t->step_cap && t->step_cap < STEP_MAX) {
		int nc = t->step_cap ? t->step_cap * 2 : 16;
		int64_t *ns = realloc(t->steps, (size_t)nc * sizeof *ns);
		if (ns)
			t->steps = ns;
		uint8_t *nw = ns ? realloc(t->step_warm, (size_t)nc) : NULL;
		if (nw) {
			t->step_warm = nw;
			t->step_cap = nc;
		}
	}
	if (t->step_depth < t->step_cap) {
		t->steps[t->step_depth] = step;
		t->step_warm[t->step_depth] = warmup != 0;
	}
	if (t->step_depth < INT32_MAX)
		t->step_depth++;
	uint64_t w = ((uint64_t)step << 2) | (warmup ? 2u : 0u) | 1u;
	atomic_store_explicit(&g_step_word, w, memory_order_relaxed);
	t->step_word = w;
	struct cap_rec *r = begin_rec(t);
	if (r == NULL)
		return;
	r->kind = TP_CAPFMT_REC_STEP_BEGIN;
	r->flags = warmup ? TP_CAPFMT_F_WARMUP : 0;
	r->aux = 0;
	r->a = (uint64_t)step;
	r->b = 0;
	r->name = mode_of(s) >= TPUPROF_MODE_CONDENSED ? intern_ptr(t, graph) : 0;
	r->ts = now_ticks();
	t->n++;
	publish(t);
}

void tpuprof_step_begin(const char *graph, int64_t step, int warmup)
{
	OFF_RETURN(s);
	step_begin(s, graph, step, warmup);
}

static NOINLINE void step_end(uint32_t s, uint64_t ts, const char *graph, int64_t step)
{
	THREAD_OR_RETURN(s, t);
	if (t->step_depth > 0)
		t->step_depth--;
	if (t->step_word) {
		uint64_t w = t->step_word;
		/* Clear the process-wide step only if it is still ours. */
		atomic_compare_exchange_strong(&g_step_word, &w, 0);
		t->step_word = 0;
	}
	struct cap_rec *r = end_rec(t);
	if (r == NULL)
		return;
	r->ts = ts;
	r->kind = TP_CAPFMT_REC_STEP_END;
	r->flags = 0;
	r->aux = 0;
	r->a = (uint64_t)step;
	r->b = 0;
	r->name = mode_of(s) >= TPUPROF_MODE_CONDENSED ? intern_ptr(t, graph) : 0;
	t->n++;
	publish(t);
}

void tpuprof_step_end(const char *graph, int64_t step)
{
	OFF_RETURN(s);
	step_end(s, now_ticks(), graph, step);
}

static NOINLINE void op_begin(uint32_t s, const struct tpuprof_op *op)
{
	THREAD_OR_RETURN(s, t);
	struct cap_rec *r = begin_rec(t);
	if (r == NULL)
		return;
	int mode = mode_of(s);
	r->kind = TP_CAPFMT_REC_OP_BEGIN;
	r->aux = 0;
	r->b = 0;
	step_ctx(t, r);
	r->name = 0;
	if (mode >= TPUPROF_MODE_CONDENSED && op) {
		const uint32_t *id = intern_op(t, op);
		r->name = id[0];
		r->b = (uint64_t)id[1] | (uint64_t)id[2] << 32;
	}
	if (UNLIKELY(t->hw_fd >= 0)) {
		if (t->hw_depth < HW_STACK && hw_read(t, t->hw_stack[t->hw_depth]) != 0)
			t->hw_stack[t->hw_depth][0] = UINT64_MAX;
		t->hw_depth++;
	}
	r->ts = now_ticks();
	t->n++;
	publish(t);
}

void tpuprof_op_begin(const struct tpuprof_op *op)
{
	OFF_RETURN(s);
	op_begin(s, op);
}

static uint32_t dims_records(int ndim)
{
	if (ndim < 0)
		ndim = 0;
	if (ndim > TP_CAPFMT_MAX_DIMS)
		ndim = TP_CAPFMT_MAX_DIMS;
	return (uint32_t)(ndim + 1) / 2;
}

static void put_tensor(struct cap_thread *t, int role, int idx, const struct tpuprof_tensor *x,
                       const int64_t *shape, int ndim)
{
	if (ndim < 0 || shape == NULL)
		ndim = 0;
	if (ndim > TP_CAPFMT_MAX_DIMS)
		ndim = TP_CAPFMT_MAX_DIMS;
	struct cap_rec *r = &t->recs[t->n++];
	r->ts = 0;
	r->kind = TP_CAPFMT_REC_TENSOR;
	r->flags = 0;
	r->aux = (uint16_t)(role << 8 | (idx & 0xff));
	r->name = x ? intern_text(t, x->name) : 0;
	r->a = x ? intern_text(t, x->dtype) : 0;
	r->b = (uint64_t)ndim;
	for (int i = 0; i < ndim; i += 2) {
		r = &t->recs[t->n++];
		memset(r, 0, sizeof *r);
		r->kind = TP_CAPFMT_REC_DIMS;
		r->aux = (uint16_t)(ndim - i >= 2 ? 2 : 1);
		r->a = (uint64_t)shape[i];
		r->b = ndim - i >= 2 ? (uint64_t)shape[i + 1] : 0;
	}
}

/* The caller's view of a growable struct (tpuprof.h, "Growing without breaking the ABI"): `n`
 * bytes of it are readable. FIELD_IN(T, f, n): field f of struct T lies wholly in n bytes. */
#define FIELD_IN(T, f, n) (offsetof(T, f) + sizeof(((T *)0)->f) <= (size_t)(n))

/* Copies the part of a caller's tensor that `esize` covers into *x (the rest reads as absent). */
static void tensor_view(struct tpuprof_tensor *x, const struct tpuprof_tensor *src, size_t esize)
{
	if (esize == sizeof *x) { /* the caller's layout is ours: a plain copy */
		*x = *src;
		return;
	}
	memset(x, 0, sizeof *x);
	memcpy(x, src, esize < sizeof *x ? esize : sizeof *x);
	if (!FIELD_IN(struct tpuprof_tensor, ndim, esize) ||
	    !FIELD_IN(struct tpuprof_tensor, shape, esize)) {
		x->ndim = 0;
		x->shape = NULL;
	}
	if (!FIELD_IN(struct tpuprof_tensor, dtype, esize))
		x->dtype = NULL;
	if (!FIELD_IN(struct tpuprof_tensor, name, esize))
		x->name = NULL;
}

static const struct tpuprof_tensor *tensor_at(const struct tpuprof_tensor *base, size_t esize,
                                              int i)
{
	return (const struct tpuprof_tensor *)(const void *)((const char *)base +
	                                                     (size_t)i * esize);
}

/* Copies the part of the caller's detail that its `size` covers into *v; fields it does not
 * cover are absent (NULL / 0 / sparsity unknown). Returns 0 when nothing is readable. */
static int detail_view(struct tpuprof_op_detail *v, const struct tpuprof_op_detail *d)
{
	typedef struct tpuprof_op_detail D;
	memset(v, 0, sizeof *v);
	v->weight_sparsity = -1;
	if (d == NULL)
		return 0;
	size_t n = d->size;
	if (n == sizeof *v) { /* the caller compiled this header: every field is there */
		*v = *d;
		if (!v->tensor_size) {
			v->inputs = v->outputs = NULL;
			v->num_inputs = v->num_outputs = 0;
		}
		if (!v->attr_size) {
			v->attrs = NULL;
			v->num_attrs = 0;
		}
		return 1;
	}
	if (!FIELD_IN(D, attr_size, n))
		return 0;
	if (n > sizeof *v)
		n = sizeof *v;
		/* Field by field, so a field the size cuts in the middle stays absent. */
#define TAKE(f)                                                                                    \
	do {                                                                                       \
		if (FIELD_IN(D, f, n))                                                             \
			v->f = d->f;                                                               \
	} while (0)
	TAKE(size);
	TAKE(tensor_size);
	TAKE(attr_size);
	if (FIELD_IN(D, num_inputs, n) && d->tensor_size) {
		v->inputs = d->inputs;
		v->num_inputs = d->num_inputs;
	}
	if (FIELD_IN(D, num_outputs, n) && d->tensor_size) {
		v->outputs = d->outputs;
		v->num_outputs = d->num_outputs;
	}
	if (FIELD_IN(D, weight_ndim, n)) {
		v->weight_shape = d->weight_shape;
		v->weight_ndim = d->weight_ndim;
	}
	TAKE(weight_sparsity);
	if (FIELD_IN(D, num_attrs, n) && d->attr_size) {
		v->attrs = d->attrs;
		v->num_attrs = d->num_attrs;
	}
	TAKE(bytes);
	TAKE(flops);
#undef TAKE
	return 1;
}

static void put_detail(struct cap_thread *t, const struct tpuprof_op_detail *caller,
                       const uint64_t *hw_delta, uint32_t hw_n)
{
	uint32_t need = hw_n;
	int ni = 0, no = 0, na = 0;
	struct tpuprof_op_detail view;
	const struct tpuprof_op_detail *d = detail_view(&view, caller) ? &view : NULL;
	size_t ts = d ? d->tensor_size : 0, as = d ? d->attr_size : 0;
	struct tpuprof_tensor x;
	if (d) {
		ni = d->inputs && d->num_inputs > 0 ? d->num_inputs : 0;
		no = d->outputs && d->num_outputs > 0 ? d->num_outputs : 0;
		na = d->attrs && d->num_attrs > 0 && FIELD_IN(struct tpuprof_attr, value, as)
		         ? d->num_attrs
		         : 0;
		if (ni > 255)
			ni = 255;
		if (no > 255)
			no = 255;
		for (int i = 0; i < ni; i++) {
			tensor_view(&x, tensor_at(d->inputs, ts, i), ts);
			need += 1 + dims_records(x.ndim);
		}
		for (int i = 0; i < no; i++) {
			tensor_view(&x, tensor_at(d->outputs, ts, i), ts);
			need += 1 + dims_records(x.ndim);
		}
		if (d->weight_shape)
			need += 1 + dims_records(d->weight_ndim);
		need += (uint32_t)na + (d->bytes || d->flops ? 1 : 0) +
		        (d->weight_sparsity >= 0 && d->weight_shape ? 1 : 0);
	}
	if (need == 0)
		return;
	if (!room(t, need)) {
		drop(t, need);
		return;
	}
	if (d) {
		for (int i = 0; i < ni; i++) {
			tensor_view(&x, tensor_at(d->inputs, ts, i), ts);
			put_tensor(t, TP_CAPFMT_ROLE_INPUT, i, &x, x.shape, x.ndim);
		}
		for (int i = 0; i < no; i++) {
			tensor_view(&x, tensor_at(d->outputs, ts, i), ts);
			put_tensor(t, TP_CAPFMT_ROLE_OUTPUT, i, &x, x.shape, x.ndim);
		}
		if (d->weight_shape)
			put_tensor(t, TP_CAPFMT_ROLE_WEIGHT, 0, NULL, d->weight_shape,
			           d->weight_ndim);
		for (int i = 0; i < na; i++) {
			const struct tpuprof_attr *at =
			    (const struct tpuprof_attr *)(const void *)((const char *)d->attrs +
			                                                (size_t)i * as);
			struct cap_rec *r = &t->recs[t->n++];
			memset(r, 0, sizeof *r);
			r->kind = TP_CAPFMT_REC_ATTR;
			r->name = intern_text(t, at->key);
			r->a = intern_text(t, at->value);
		}
		struct cap_rec *r;
		if (d->bytes || d->flops) { /* 0 = unknown: never reported as a measured 0 */
			r = &t->recs[t->n++];
			memset(r, 0, sizeof *r);
			r->kind = TP_CAPFMT_REC_COST;
			r->a = d->bytes;
			r->b = d->flops;
		}
		if (d->weight_sparsity >= 0 && d->weight_shape) {
			r = &t->recs[t->n++];
			memset(r, 0, sizeof *r);
			r->kind = TP_CAPFMT_REC_SPARSITY;
			memcpy(&r->a, &d->weight_sparsity, sizeof r->a);
		}
	}
	for (uint32_t i = 0; i < hw_n; i++) {
		struct cap_rec *r = &t->recs[t->n++];
		memset(r, 0, sizeof *r);
		r->kind = TP_CAPFMT_REC_HW;
		r->aux = (uint16_t)i;
		r->a = hw_delta[i];
	}
}

static NOINLINE void op_end(uint32_t s, uint64_t ts, const struct tpuprof_op *op,
                            const struct tpuprof_op_detail *detail)
{
	THREAD_OR_RETURN(s, t);
	uint64_t delta[TP_CAPFMT_MAX_HW];
	uint32_t hw_n = 0;
	if (UNLIKELY(t->hw_fd >= 0) && t->hw_depth > 0) {
		t->hw_depth--;
		uint64_t now[TP_CAPFMT_MAX_HW];
		if (t->hw_depth < HW_STACK && t->hw_stack[t->hw_depth][0] != UINT64_MAX &&
		    hw_read(t, now) == 0) {
			for (uint32_t i = 0; i < t->hw_n; i++) {
				uint64_t d = now[i] - t->hw_stack[t->hw_depth][i];
				delta[i] = d > t->hw_self[i] ? d - t->hw_self[i] : 0;
			}
			hw_n = t->hw_n;
		}
	}
	struct cap_rec *r = end_rec(t);
	if (r == NULL)
		return;
	int mode = mode_of(s);
	r->ts = ts;
	r->kind = TP_CAPFMT_REC_OP_END;
	r->flags = 0;
	r->aux = 0;
	r->a = 0;
	r->b = 0;
	r->name = 0;
	if (mode >= TPUPROF_MODE_CONDENSED && op) {
		/* The slice takes its name from the begin record; the end's name only helps a
		 * human reading raw records, so the descriptor's cached id is taken unverified. */
		struct cache_ent *home = t->cache ? home_of(t, ptr_hash(op)) : NULL;
		r->name = home && home->tag == 2 && home->key == (const void *)op
		              ? home->id[0]
		              : intern_op(t, op)[0];
	}
	t->n++;
	if (mode >= TPUPROF_MODE_DETAILED)
		put_detail(t, detail, delta, hw_n);
	publish(t);
}

void tpuprof_op_end(const struct tpuprof_op *op, const struct tpuprof_op_detail *detail)
{
	OFF_RETURN(s);
	op_end(s, now_ticks(), op, detail);
}

void tpuprof_runtime_begin(const char *name)
{
	OFF_RETURN(s);
	scope_begin(s, TP_CAPFMT_REC_RT_BEGIN, name, 0, NULL, 1);
}

void tpuprof_runtime_end(const char *name)
{
	OFF_RETURN(s);
	scope_end(s, now_ticks(), TP_CAPFMT_REC_RT_END, name, 0, NULL);
}

void tpuprof_counter(const char *name, double value)
{
	OFF_RETURN(s);
	if (mode_of(s) < TPUPROF_MODE_CONDENSED) /* a sample needs its name */
		return;
	THREAD_OR_RETURN(s, t);
	if (!room(t, 1)) {
		drop(t, 1);
		return;
	}
	struct cap_rec *r = &t->recs[t->n];
	r->kind = TP_CAPFMT_REC_COUNTER;
	r->flags = 0;
	r->aux = 0;
	r->name = intern_ptr(t, name);
	memcpy(&r->a, &value, sizeof r->a);
	r->b = 0;
	r->ts = now_ticks();
	t->n++;
	publish(t);
}

/* ---- marks, ranges, async ranges, thread names ---- */

/* The fields of a caller's attribute struct that its `size` covers (NULL/0 otherwise). */
struct attr_view {
	uint32_t color;
	const char *category, *file, *function;
	int line;
};

static void attr_read(const struct tpuprof_event_attr *a, struct attr_view *v)
{
	memset(v, 0, sizeof *v);
	if (a == NULL)
		return;
	size_t n = a->size;
#define HAS(f) (n >= offsetof(struct tpuprof_event_attr, f) + sizeof a->f)
	if (HAS(color))
		v->color = a->color;
	if (HAS(category))
		v->category = a->category;
	if (HAS(file))
		v->file = a->file;
	if (HAS(line))
		v->line = a->line;
	if (HAS(function))
		v->function = a->function;
#undef HAS
}

static uint64_t attr_style(struct cap_thread *t, int mode, const struct attr_view *v)
{
	if (mode < TPUPROF_MODE_CONDENSED)
		return 0;
	return (uint64_t)intern_text(t, v->category) | (uint64_t)v->color << 32;
}

/* The SRCLOC continuation after t->recs[t->n - 1] (mode 2, when a location was given). */
static void put_srcloc(struct cap_thread *t, int mode, const struct attr_view *v)
{
	if (mode < TPUPROF_MODE_DETAILED || (v->file == NULL && v->function == NULL))
		return;
	if (!room(t, 1)) {
		drop(t, 1);
		return;
	}
	struct cap_rec *r = &t->recs[t->n];
	memset(r, 0, sizeof *r);
	r->kind = TP_CAPFMT_REC_SRCLOC;
	r->name = intern_text(t, v->file);
	r->a = (uint64_t)(int64_t)v->line;
	r->b = intern_text(t, v->function);
	t->n++;
}

static NOINLINE void mark_rec(uint32_t s, uint8_t kind, const char *name, uint64_t a,
                              const struct tpuprof_event_attr *attr)
{
	THREAD_OR_RETURN(s, t);
	if (!room(t, 1)) {
		drop(t, 1);
		return;
	}
	int mode = mode_of(s);
	struct attr_view v;
	attr_read(attr, &v);
	struct cap_rec *r = &t->recs[t->n];
	r->kind = kind;
	r->aux = 0;
	r->flags = 0;
	r->a = a;
	if (kind == TP_CAPFMT_REC_MARK)
		step_ctx(t, r);
	r->name = mode >= TPUPROF_MODE_CONDENSED ? intern_text(t, name) : 0;
	r->b = attr_style(t, mode, &v);
	r->ts = now_ticks();
	t->n++;
	if (kind != TP_CAPFMT_REC_ASYNC_END)
		put_srcloc(t, mode, &v);
	publish(t);
}

void tpuprof_mark(const char *name, const struct tpuprof_event_attr *attr)
{
	OFF_RETURN(s);
	mark_rec(s, TP_CAPFMT_REC_MARK, name, 0, attr);
}

void tpuprof_async_begin(const char *name, uint64_t id, const struct tpuprof_event_attr *attr)
{
	OFF_RETURN(s);
	mark_rec(s, TP_CAPFMT_REC_ASYNC_BEGIN, name, id, attr);
}

void tpuprof_async_end(const char *name, uint64_t id)
{
	OFF_RETURN(s);
	mark_rec(s, TP_CAPFMT_REC_ASYNC_END, name, id, NULL);
}

static NOINLINE void range_begin(uint32_t s, const char *name,
                                 const struct tpuprof_event_attr *attr)
{
	THREAD_OR_RETURN(s, t);
	struct cap_rec *r = begin_rec(t);
	if (r == NULL)
		return;
	int mode = mode_of(s);
	struct attr_view v;
	attr_read(attr, &v);
	r->kind = TP_CAPFMT_REC_RANGE_BEGIN;
	r->aux = 0;
	step_ctx(t, r);
	r->name = mode >= TPUPROF_MODE_CONDENSED ? intern_text(t, name) : 0;
	r->b = attr_style(t, mode, &v);
	r->ts = now_ticks();
	t->n++;
	put_srcloc(t, mode, &v);
	publish(t);
}

void tpuprof_range_begin(const char *name, const struct tpuprof_event_attr *attr)
{
	OFF_RETURN(s);
	range_begin(s, name, attr);
}

void tpuprof_range_end(const char *name)
{
	OFF_RETURN(s);
	scope_end(s, now_ticks(), TP_CAPFMT_REC_RANGE_END, name, 0, NULL);
}

void tpuprof_thread_name(const char *name)
{
	char buf[MAX_STR_LEN + 1];
	int same;
	memset(tls_name, 0, sizeof tls_name);
	if (name == NULL)
		return;
	size_t len = clean_text(name, buf, &same);
	/* Keep whole characters within 15 bytes. */
	size_t keep = 0;
	while (keep < len) {
		size_t k = utf8_seq((const unsigned char *)buf + keep, len - keep);
		if (k == 0 || keep + k > TP_CAPFMT_COMM_SIZE - 1)
			break;
		keep += k;
	}
	memcpy(tls_name, buf, keep);
	struct cap_thread *t = tls_thread;
	if (t && t->h && atomic_load_explicit(&t->state, memory_order_relaxed) != 0)
		memcpy(t->h->name, tls_name, sizeof tls_name);
}

#define VSTR_(x) #x
#define VSTR(x) VSTR_(x)
const char *tpuprof_version(void)
{
	return VSTR(TPUPROF_VERSION_MAJOR) "." VSTR(TPUPROF_VERSION_MINOR) "." VSTR(
	    TPUPROF_VERSION_PATCH);
}

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

static void fill_header(unsigned char *h, uint64_t tick1, uint64_t ns1, uint32_t flags)
{
	memset(h, 0, TP_CAPFMT_HEADER_SIZE);
	memcpy(h + TP_CAPFMT_OFF_MAGIC, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE);
	put32(h + TP_CAPFMT_OFF_VERSION, TP_CAPFMT_VERSION);
	put32(h + TP_CAPFMT_OFF_HEADER_SIZE, TP_CAPFMT_HEADER_SIZE);
	uint32_t mark = TP_CAPFMT_ENDIAN_MARK;
	memcpy(h + TP_CAPFMT_OFF_ENDIAN, &mark, 4); /* native order: tells the reader */
	put32(h + TP_CAPFMT_OFF_RECORD_SIZE, TP_CAPFMT_RECORD_SIZE);
	put32(h + TP_CAPFMT_OFF_PID, (uint32_t)getpid());
	put32(h + TP_CAPFMT_OFF_DEVICE, (uint32_t)g_ses.device_active);
	put32(h + TP_CAPFMT_OFF_SESSION, g_ses.session);
	put32(h + TP_CAPFMT_OFF_MODE, (uint32_t)g_ses.mode);
	put32(h + TP_CAPFMT_OFF_CLOCK, g_use_tsc ? TP_CAPFMT_CLOCK_TSC : TP_CAPFMT_CLOCK_MONOTONIC);
	put32(h + TP_CAPFMT_OFF_MAX_RECORDS, g_ses.max_records);
	put64(h + TP_CAPFMT_OFF_TICK0, g_tick0);
	put64(h + TP_CAPFMT_OFF_NS0, g_ns0);
	put64(h + TP_CAPFMT_OFF_TICK1, tick1);
	put64(h + TP_CAPFMT_OFF_NS1, ns1);
	memcpy(h + TP_CAPFMT_OFF_COMM, g_comm, TP_CAPFMT_COMM_SIZE);
	put32(h + TP_CAPFMT_OFF_FLUSHES, g_ses.flushes);
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
static int write_dump(uint32_t s, int final)
{
	if (!atomic_load(&g_ses.made))
		return 0;
	/* Snapshot counts first: records before strings, so every string a counted record
	 * uses is inside the string snapshot. */
	uint32_t nthreads = 0;
	uint64_t total = 0, dropped = 0, sdropped = 0;
	struct cap_thread *head = atomic_load_explicit(&g_threads, memory_order_acquire);
	for (struct cap_thread *t = head; t; t = t->next) {
		if (atomic_load_explicit(&t->state, memory_order_acquire) != s)
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
	unsigned char *ses = __atomic_load_n(&g_ses.ses, __ATOMIC_ACQUIRE);
	if (ses)
		dropped += __atomic_load_n((uint64_t *)(void *)(ses + TP_CAPFMT_SES_OFF_LOST),
		                           __ATOMIC_RELAXED);
	uint64_t tick1, ns1;
	calib_point(&tick1, &ns1);
	g_ses.flushes++;

	int fd = open(g_ses.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	int rc = -1;
	unsigned char *h = g_scratch;
	fill_header(h, tick1, ns1, final ? TP_CAPFMT_HF_FINAL : 0);
	unsigned char *p = h + TP_CAPFMT_HEADER_SIZE;
	/* HWINFO */
	int hwk = atomic_load_explicit(&g_hw_kind, memory_order_acquire);
	uint32_t hwn = hwk > 0 ? g_hw_n : 0;
	p = block(p, TP_CAPFMT_BLK_HWINFO, 8 + (uint64_t)hwn * TP_CAPFMT_HW_NAME_SIZE);
	put32(p, hwk > 0 ? (uint32_t)hwk : TP_CAPFMT_HW_NONE);
	put32(p + 4, hwn);
	p += 8;
	for (uint32_t i = 0; i < hwn; i++, p += TP_CAPFMT_HW_NAME_SIZE)
		memcpy(p, g_hw_names[i], TP_CAPFMT_HW_NAME_SIZE);
	/* SUMMARY */
	p = block(p, TP_CAPFMT_BLK_SUMMARY, 32);
	put32(p, nthreads);
	put32(p + 4, 0);
	put64(p + 8, total);
	put64(p + 16, dropped);
	put64(p + 24, sdropped);
	p += 32;
	/* META */
	uint32_t nmeta = atomic_load_explicit(&g_meta_n, memory_order_acquire);
	p = block(p, TP_CAPFMT_BLK_META, 8 + (uint64_t)nmeta * sizeof g_meta[0]);
	put32(p, nmeta);
	put32(p + 4, 0);
	p += 8;
	if (write_all(fd, h, (size_t)(p - h)) != 0 ||
	    (nmeta && write_all(fd, g_meta, nmeta * sizeof g_meta[0]) != 0))
		goto out;

	for (struct cap_thread *t = head; t; t = t->next) {
		if (atomic_load_explicit(&t->state, memory_order_acquire) != s)
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
	if (rc == 0 && rename(g_ses.tmp, g_ses.path) != 0) {
		rc = -1;
		err = errno;
	}
	if (rc != 0)
		unlink(g_ses.tmp);
	errno = err;
	return rc;
}

/* Removes the live files of session `s` once its final capture.tpp is in place. */
static void remove_live(uint32_t s)
{
	for (struct cap_thread *t = atomic_load_explicit(&g_threads, memory_order_acquire); t;
	     t = t->next)
		if (atomic_load_explicit(&t->state, memory_order_acquire) == s && t->path)
			unlink(t->path);
	if (atomic_load(&g_ses.made))
		unlink(g_ses.sespath);
}

/* Flush lock: a spin flag holding the owner's tid, so a signal handler can tell whether it
 * interrupted its own thread's flush (then it must not wait). */
static int flush_lock(int from_signal)
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

static void flush_unlock(void)
{
	atomic_store(&g_flush_owner, 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Sessions and signals                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Calls the action the host had before us, as the kernel would have. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *old = sig == SIGINT ? &g_old_int : &g_old_term;
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction)
			old->sa_sigaction(sig, si, uc);
	} else if (old->sa_handler == SIG_IGN) {
		return;
	} else if (old->sa_handler == SIG_DFL) {
		/* Default action: die by the same signal once this handler returns. */
		sigaction(sig, old, NULL);
		raise(sig);
	} else {
		old->sa_handler(sig);
	}
}

/* SIGINT / SIGTERM: write the dump, then do what the host's action does. When that action
 * is to die, recording stops first and the dump is the final one (the live files go). */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction *old = sig == SIGINT ? &g_old_int : &g_old_term;
	int fatal = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
	uint32_t s = atomic_load(&g_state);
	if (s != 0 && flush_lock(1)) {
		if (fatal) {
			atomic_store(&g_state, 0);
			__atomic_store_n(&tpuprof_active, 0u, __ATOMIC_RELEASE);
		}
		if (write_dump(s, fatal) != 0) {
			static const char msg[] =
			    "tpuprof: warning: could not write the dump on signal "
			    "(the live files keep the records)\n";
			ssize_t w = write(2, msg, sizeof msg - 1);
			(void)w;
		} else if (fatal) {
			remove_live(s);
		}
		flush_unlock();
	}
	chain(sig, si, uc);
	errno = saved;
}

/* Installs on_signal for `sig` with the host's mask and flags (never adding SA_RESTART), unless
 * the host ignores the signal. */
static void install_one(int sig, struct sigaction *saved)
{
	struct sigaction old;
	if (sigaction(sig, NULL, &old) != 0 ||
	    (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN))
		return;
	*saved = old;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_mask = old.sa_mask;
	sa.sa_flags =
	    SA_SIGINFO | (old.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER | SA_RESETHAND));
	sigaction(sig, &sa, NULL);
}

static void install_signals(void)
{
	if (g_sig_installed)
		return;
	g_old_int.sa_handler = SIG_DFL;
	g_old_term.sa_handler = SIG_DFL;
	install_one(SIGINT, &g_old_int);
	install_one(SIGTERM, &g_old_term);
	g_sig_installed = 1;
}

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0777);
		*p = '/';
		if (r != 0 && errno != EEXIST)
			return -1;
	}
	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int ses_make(void)
{
	char base[4200];
	int n = snprintf(base, sizeof base, "%s/tpuprof_data_dev%d-%u.%ld", g_env.dir,
	                 g_ses.device_active, g_ses.session, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof base - 16)
		return -1;
	char top[4096];
	snprintf(top, sizeof top, "%s", g_env.dir);
	if (mkdirs(top) != 0) {
		/* One warning per process: later sessions fail the same way, silently. */
		static int warned;
		if (!warned)
			warn("cannot create TPUPROF_DIR \"%s\": %s; capture stays off", g_env.dir,
			     strerror(errno));
		warned = 1;
		return -1;
	}
	snprintf(g_ses.dir, sizeof g_ses.dir, "%s", base);
	for (int k = 1; mkdir(g_ses.dir, 0777) != 0; k++) {
		if (errno != EEXIST || k > 1000) {
			warn("cannot create \"%s\": %s; capture stays off", g_ses.dir,
			     strerror(errno));
			return -1;
		}
		snprintf(g_ses.dir, sizeof g_ses.dir, "%s.%d", base, k);
	}
	snprintf(g_ses.path, sizeof g_ses.path, "%s/capture.tpp", g_ses.dir);
	snprintf(g_ses.tmp, sizeof g_ses.tmp, "%s/capture.tpp.tmp", g_ses.dir);
	snprintf(g_ses.sespath, sizeof g_ses.sespath, "%s/%s", g_ses.dir, TP_CAPFMT_SES_FILE);
	int fd = open(g_ses.sespath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	void *m = MAP_FAILED;
	int err = 0;
	if (fd >= 0) {
		if ((err = posix_fallocate(fd, 0, TP_CAPFMT_SES_SIZE)) == 0)
			m = mmap(NULL, TP_CAPFMT_SES_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			         0);
		else
			errno = err;
		err = errno;
		close(fd);
	} else {
		err = errno;
	}
	if (m == MAP_FAILED) {
		warn("cannot create \"%s\": %s; capture stays off", g_ses.sespath, strerror(err));
		unlink(g_ses.sespath);
		rmdir(g_ses.dir);
		return -1;
	}
	uint64_t t1, n1;
	calib_point(&t1, &n1);
	fill_header(m, t1, n1, 0);
	__atomic_store_n(&g_ses.ses, (unsigned char *)m, __ATOMIC_RELEASE);
	ses_put_meta();
	pthread_mutex_lock(&g_hw_mu);
	ses_put_hw();
	pthread_mutex_unlock(&g_hw_mu);
	g_ses.nchunks = 0;
	atomic_store(&g_ses.made, 1);
	return 0;
}

/* Drops the session mapping (after the session ended, or in a fork child). */
static void ses_unmap(int unmap)
{
	/* The writers of the mapping (hardware-counter names, calibration, lost count) hold
	 * g_hw_mu or g_calib_mu; order g_dir_mu -> g_hw_mu -> g_calib_mu. */
	pthread_mutex_lock(&g_hw_mu);
	pthread_mutex_lock(&g_calib_mu);
	unsigned char *m = __atomic_exchange_n(&g_ses.ses, NULL, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&g_calib_mu);
	pthread_mutex_unlock(&g_hw_mu);
	if (m && unmap)
		munmap(m, TP_CAPFMT_SES_SIZE);
	atomic_store(&g_ses.made, 0);
}

/* Called with g_ctl held and no active session. `lazy`: the directory is made by the first
 * record (fork children: a child that records nothing, or execs, writes nothing). */
static int start_session(uint32_t max_records, int mode, int lazy)
{
	if (max_records == 0)
		max_records = g_env.record_size;
	if (max_records > MAX_RECORDS)
		max_records = MAX_RECORDS;
	if (max_records < 4)
		max_records = 4;
	g_ses.mode = mode;
	g_ses.max_records = max_records;
	g_ses.device_active = g_ses.device;
	g_ses.session = g_ses.sessions;
	g_ses.flushes = 0;
	g_ses.lazy = lazy;
	atomic_store(&g_ses.made, 0);
	if (!lazy && ses_make() != 0)
		return TPUPROF_EIO;
	g_ses.sessions++;
	install_signals();
	g_ses.gen = (g_ses.gen + 1) & 0x3fffffffu;
	if (g_ses.gen == 0)
		g_ses.gen = 1;
	atomic_store_explicit(&g_step_word, 0, memory_order_relaxed);
	atomic_store_explicit(&g_state, g_ses.gen << 2 | (uint32_t)(mode + 1),
	                      memory_order_release);
	__atomic_store_n(&tpuprof_active, 1u, __ATOMIC_RELEASE);
	return TPUPROF_OK;
}

/* Called with g_ctl held and an active session. */
static int finish_session(int warn_on_error)
{
	uint32_t s = atomic_load(&g_state);
	atomic_store(&g_state, 0);
	__atomic_store_n(&tpuprof_active, 0u, __ATOMIC_RELEASE);
	int rc = TPUPROF_OK;
	flush_lock(0);
	if (write_dump(s, 1) != 0) {
		rc = TPUPROF_EIO;
		if (warn_on_error)
			warn("cannot write \"%s\": %s; the records stay in the live files of that "
			     "directory, which tpuprof converts",
			     g_ses.path, strerror(errno));
	} else {
		remove_live(s);
	}
	/* Buffers of exited threads: nobody writes them any more. */
	for (struct cap_thread *t = atomic_load(&g_threads); t; t = t->next)
		if (atomic_load(&t->state) == s && atomic_load(&t->gone)) {
			atomic_store(&t->state, 0);
			chunk_release(t);
		}
	pthread_mutex_lock(&g_dir_mu);
	ses_unmap(1);
	g_ses.lazy = 0;
	pthread_mutex_unlock(&g_dir_mu);
	flush_unlock();
	return rc;
}

int tpuprof_enable(uint32_t max_records, int mode)
{
	ensure_init();
	if (mode < TPUPROF_MODE_TIMING || mode > TPUPROF_MODE_DETAILED)
		return TPUPROF_EINVAL;
	pthread_mutex_lock(&g_ctl);
	int rc = atomic_load(&g_state) != 0 ? TPUPROF_EBUSY : start_session(max_records, mode, 0);
	pthread_mutex_unlock(&g_ctl);
	return rc;
}

int tpuprof_disable(void)
{
	ensure_init();
	pthread_mutex_lock(&g_ctl);
	int rc = atomic_load(&g_state) == 0 ? TPUPROF_EOFF : finish_session(1);
	pthread_mutex_unlock(&g_ctl);
	return rc;
}

int tpuprof_flush(void)
{
	ensure_init();
	pthread_mutex_lock(&g_ctl);
	uint32_t s = atomic_load(&g_state);
	int rc = TPUPROF_EOFF;
	if (s != 0) {
		flush_lock(0);
		rc = write_dump(s, 0) == 0 ? TPUPROF_OK : TPUPROF_EIO;
		int err = errno;
		flush_unlock();
		if (rc != TPUPROF_OK)
			warn("cannot write \"%s\": %s", g_ses.path, strerror(err));
	}
	pthread_mutex_unlock(&g_ctl);
	return rc;
}

int tpuprof_mode(void)
{
	uint32_t s = atomic_load_explicit(&g_state, memory_order_relaxed);
	return s ? mode_of(s) : -1;
}

int tpuprof_meta(const char *key, const char *value)
{
	if (!key || !value || !key[0] || strlen(key) >= TP_CAPFMT_META_KEY ||
	    strlen(value) >= TP_CAPFMT_META_VALUE)
		return TPUPROF_EINVAL;
	ensure_init();
	pthread_mutex_lock(&g_ctl);
	uint32_t n = atomic_load_explicit(&g_meta_n, memory_order_relaxed);
	int rc = TPUPROF_OK;
	if (n == TP_CAPFMT_META_MAX) {
		rc = TPUPROF_ENOMEM;
	} else {
		char *e = g_meta[n];
		memset(e, 0, sizeof g_meta[n]);
		memcpy(e, key, strlen(key));
		memcpy(e + TP_CAPFMT_META_KEY, value, strlen(value));
		atomic_store_explicit(&g_meta_n, n + 1, memory_order_release);
		pthread_mutex_lock(&g_dir_mu);
		ses_put_meta();
		pthread_mutex_unlock(&g_dir_mu);
	}
	pthread_mutex_unlock(&g_ctl);
	return rc;
}

int tpuprof_set_device(int device)
{
	if (device < 0)
		return TPUPROF_EINVAL;
	ensure_init();
	pthread_mutex_lock(&g_ctl);
	g_ses.device = device;
	pthread_mutex_unlock(&g_ctl);
	return TPUPROF_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* fork: the child never writes the parent's records (nor its live files); it starts its    */
/* own session, made on disk only when it records something.                                 */
/* ---------------------------------------------------------------------------------------- */

static void fork_prepare(void)
{
	pthread_mutex_lock(&g_ctl);
	/* Hold the flush lock too so the child cannot inherit a half-written dump state. */
	flush_lock(0);
}

static void fork_parent(void)
{
	flush_unlock();
	pthread_mutex_unlock(&g_ctl);
}

static void fork_child(void)
{
	uint32_t s = atomic_load(&g_state);
	atomic_store(&g_state, 0);
	__atomic_store_n(&tpuprof_active, 0u, __ATOMIC_RELEASE);
	/* Locks another parent thread may have held at fork time. */
	pthread_mutex_init(&g_dir_mu, NULL);
	pthread_mutex_init(&g_calib_mu, NULL);
	pthread_mutex_init(&g_hw_mu, NULL);
	/* The pre-fault worker is the parent's: none runs here until one is needed. */
	pthread_mutex_init(&g_pf_mu, NULL);
	pthread_cond_init(&g_pf_work, NULL);
	pthread_cond_init(&g_pf_done, NULL);
	g_pf_head = g_pf_tail = NULL;
	g_pf_pid = 0;
	for (struct cap_thread *t = atomic_load(&g_threads); t; t = t->next) {
		t->pf_state = PF_IDLE;
		atomic_store(&t->state, 0);
		hw_close(t);               /* the parent's counters do not count the child */
		atomic_store(&t->gone, 1); /* its mapping is the parent's: released on reuse */
	}
	tls_thread = NULL;
	ses_unmap(1);
	g_hw_kind = -1;
	prctl(PR_GET_NAME, g_comm, 0, 0, 0);
	flush_unlock();
	pthread_mutex_unlock(&g_ctl);
	if (s != 0) {
		pthread_mutex_lock(&g_ctl);
		start_session(g_ses.max_records, mode_of(s), 1);
		pthread_mutex_unlock(&g_ctl);
	}
}
