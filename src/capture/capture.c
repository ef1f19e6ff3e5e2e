/*
 * capture.c — the libtpuprof runtime: the public API of include/tpuprof/tpuprof.h, per-thread
 * record buffers, string interning, the clock, hardware counters and the dump writer.
 * It owns all of the capture's global state (the only global mutable state the project
 * allows, STYLE.md): the session word, the thread registry, the control mutex, the open dump
 * file and the saved signal actions. It links against libc only (never tpcore).
 *
 * Hot path (one event): load the session word; if 0 return. Otherwise fetch this thread's
 * buffer (thread-local pointer), check that it belongs to the current session, check space,
 * write one 32-byte record and publish the new count with a release store. No lock, no
 * allocation, no system call (except the opt-in hardware counters), no log.
 *
 * Space rule: a begin is accepted only if there is room for it AND for its end, so an
 * accepted scope can always be closed; a dropped begin makes its end drop too. Every record
 * not written is counted and the count is part of the dump.
 *
 * Publication: the owner thread writes records[n] then stores count = n+1 (release); the
 * flusher loads the count (acquire) and writes records[0, count). Strings are published the
 * same way, before any record that uses them. The flusher may therefore run in a signal
 * handler or on another thread while recording goes on; it only uses async-signal-safe calls
 * (open, write, lseek, ftruncate, close, clock_gettime).
 */
#include "tpuprof/tpuprof.h"

#include "capture/capfmt.h"
#include "capture/env_table.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

#define STR_BYTES (1u << 20)  /* per-thread string storage */
#define CACHE_SLOTS (1u << 13) /* per-thread intern cache (power of two) */
#define MAX_STR_LEN 1023u     /* longer strings are cut */
#define STEP_STACK 16
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

/* Intern cache entry. Pointer keys (tag 1: string pointer, tag 2: op descriptor) map to one
 * or three string ids; content keys (tag 3) map a hash to an id whose bytes are compared;
 * tag 4 is a pointer hint for content-interned text (id, byte offset), checked by strcmp. */
struct cache_ent {
	const void *key;
	uint64_t hash;
	uint32_t tag;
	uint32_t id[3];
};

/* One thread's buffer. Owner-only fields are plain; fields the flusher reads are atomic. */
struct cap_thread {
	struct cap_thread *next; /* registry link, written once before publication */
	_Atomic uint32_t state;  /* session word this buffer records for (0 = none) */
	_Atomic int gone;        /* owner thread exited (or fork child): buffer reusable */

	struct cap_rec *recs;
	uint32_t alloc;       /* records allocated (kept across sessions: pages stay touched) */
	uint32_t cap, n;      /* this session's limit (<= alloc) and records written */
	_Atomic uint32_t pub; /* published record count */
	uint32_t reserved;    /* slots held for the ends of open scopes */
	uint32_t dropped_open;
	_Atomic uint64_t dropped;

	char *str;
	uint32_t str_len, str_count;
	_Atomic uint64_t str_pub; /* count << 32 | bytes */
	_Atomic uint32_t str_dropped;
	struct cache_ent *cache;

	int64_t tid;
	char name[TP_CAPFMT_COMM_SIZE];

	int64_t steps[STEP_STACK];
	uint8_t step_warm[STEP_STACK];
	int step_depth;
	uint64_t step_word; /* the process-wide word this thread published, 0 if none */

	int hw_fd;          /* perf group leader, -1 if none */
	int hw_fds[TP_CAPFMT_MAX_HW];
	uint32_t hw_kind, hw_n;
	uint64_t hw_stack[HW_STACK][TP_CAPFMT_MAX_HW];
	int hw_depth;

	/* flusher snapshot (written only by the flusher holding the flush lock) */
	uint32_t snap_n;
	uint64_t snap_str;
	uint64_t snap_dropped;
	uint32_t snap_str_dropped;
};

/* ---- global state (src/capture is the one place allowed to have it) ---- */

static _Atomic uint32_t g_state;         /* gen << 2 | (mode + 1); 0 = off */
/* The public mirror of g_state != 0 for the inline TPUPROF_ON() test (tpuprof.h). */
TPUPROF_API uint32_t tpuprof_active;
static _Atomic(struct cap_thread *) g_threads; /* lock-free push-only registry */
static _Atomic uint64_t g_step_word;     /* process-wide open step: step<<2 | warm<<1 | 1 */
static _Atomic int g_flush_owner;        /* tid of the flushing thread, 0 = free */
static pthread_mutex_t g_ctl = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static TLS_MODEL _Thread_local struct cap_thread *tls_thread;

static struct {
	int auto_mode; /* -1 none, else 1 or 2 */
	char dir[4096];
	uint32_t record_size;
	int hwcounters;
} g_env;

static struct {
	uint32_t gen;        /* last generation used */
	uint32_t sessions;   /* N of the next session */
	int device;          /* D of the next session */
	int mode;
	uint32_t max_records;
	int fd;              /* open dump file, -1 if none */
	uint32_t session;    /* N of the active session */
	int device_active;   /* D of the active session */
	uint32_t flushes;
	char path[4264];
} g_ses = {0, 0, 0, 0, 0, -1, 0, 0, 0, {0}};

static int g_use_tsc;
static uint64_t g_tick0, g_ns0; /* calibration point taken at initialisation */
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

static int64_t gettid_(void) { return (int64_t)syscall(SYS_gettid); }

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
	if (m[0] == 0 || strcmp(m, "0") == 0)
		g_env.auto_mode = -1;
	else if (strcmp(m, "1") == 0 || strcmp(m, "2") == 0)
		g_env.auto_mode = m[0] - '0';
	else
		warn("TPUPROF=%.64s is not 0, 1 or 2; capture stays off", m);

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
		warn("TPUPROF_RECORD_SIZE=%.64s is not a count in [16, %u]; using %s", r, MAX_RECORDS,
		     env_spec[ENV_RECORD_SIZE].def);
		parse_u32(env_spec[ENV_RECORD_SIZE].def, &rs);
	}
	g_env.record_size = rs;

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

static void thread_gone(void *p)
{
	struct cap_thread *t = p;
	atomic_store_explicit(&t->gone, 1, memory_order_release);
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);
static int start_session(uint32_t max_records, int mode);
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

static void ensure_init(void) { pthread_once(&g_once, init_once); }

__attribute__((constructor)) static void lib_load(void)
{
	ensure_init();
	if (g_env.auto_mode > 0) {
		pthread_mutex_lock(&g_ctl);
		start_session(0, g_env.auto_mode);
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
		int fd = (int)syscall(SYS_perf_event_open, &at, 0, -1, leader, PERF_FLAG_FD_CLOEXEC);
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
	if (g_hw_kind < 0) {
		/* The first thread that opens a set decides the kind for the whole process;
		 * the names are written before the kind is published. */
		g_hw_n = 3;
		for (int i = 0; i < 3; i++)
			snprintf(g_hw_names[i], sizeof g_hw_names[i], "%s", set[i].name);
		atomic_store_explicit(&g_hw_kind, (int)kind, memory_order_release);
	}
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

static void reset_thread(struct cap_thread *t)
{
	t->n = 0;
	t->reserved = 0;
	t->dropped_open = 0;
	atomic_store_explicit(&t->pub, 0, memory_order_relaxed);
	atomic_store_explicit(&t->dropped, 0, memory_order_relaxed);
	t->str_len = 0;
	t->str_count = 0;
	atomic_store_explicit(&t->str_pub, 0, memory_order_relaxed);
	atomic_store_explicit(&t->str_dropped, 0, memory_order_relaxed);
	if (t->cache)
		memset(t->cache, 0, sizeof(struct cache_ent) * CACHE_SLOTS);
	t->step_depth = 0;
	t->step_word = 0;
	t->hw_depth = 0;
	t->tid = gettid_();
	memset(t->name, 0, sizeof t->name);
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
}

/* Slow path: gives this thread a buffer for session word `s`. Returns NULL (and the event is
 * lost uncounted) only if not even the small thread structure can be allocated. */
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
		for (struct cap_thread *c = atomic_load_explicit(&g_threads, memory_order_acquire); c;
		     c = c->next) {
			int one = 1;
			if (atomic_load_explicit(&c->state, memory_order_relaxed) != s &&
			    atomic_compare_exchange_strong(&c->gone, &one, 0)) {
				t = c;
				break;
			}
		}
		if (t == NULL) {
			t = calloc(1, sizeof *t);
			if (t == NULL)
				return NULL;
			t->hw_fd = -1;
			struct cap_thread *head = atomic_load(&g_threads);
			do
				t->next = head;
			while (!atomic_compare_exchange_weak(&g_threads, &head, t));
		}
		tls_thread = t;
		pthread_setspecific(g_key, t);
	}
	/* Stop the flusher from looking at this buffer while it is reset. */
	atomic_store_explicit(&t->state, 0, memory_order_release);
	if (t->alloc < cap) {
		/* Grow only: a buffer whose pages were touched by an earlier session costs no
		 * page faults the next time. */
		free(t->recs);
		t->recs = malloc((size_t)cap * sizeof(struct cap_rec));
		t->alloc = t->recs ? cap : 0;
	}
	t->cap = t->alloc < cap ? t->alloc : cap;
	if (t->str == NULL)
		t->str = malloc(STR_BYTES);
	if (t->cache == NULL)
		t->cache = calloc(CACHE_SLOTS, sizeof(struct cache_ent));
	hw_close(t);
	reset_thread(t);
	if (mode == TPUPROF_MODE_DETAILED && g_env.hwcounters)
		hw_open(t);
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
	atomic_store_explicit(&t->pub, t->n, memory_order_release);
}

static inline void drop(struct cap_thread *t, uint64_t n)
{
	atomic_store_explicit(&t->dropped,
	                      atomic_load_explicit(&t->dropped, memory_order_relaxed) + n,
	                      memory_order_relaxed);
}

/* Room for a begin and its end. Returns the record or NULL (dropped and counted). */
static inline struct cap_rec *begin_rec(struct cap_thread *t)
{
	if (UNLIKELY(t->dropped_open || t->n + t->reserved + 2 > t->cap)) {
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
	if (t->n + 1 > t->cap) {
		drop(t, 1);
		return NULL;
	}
	return &t->recs[t->n];
}

/* Room for k records that reserve nothing. */
static inline int room(struct cap_thread *t, uint32_t k)
{
	return t->n + t->reserved + k <= t->cap;
}

/* ---- interning ---- */

static inline uint64_t ptr_hash(const void *p)
{
	/* Byte-aligned keys (string literals) must not share slots: hash every bit. */
	return (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
}

/* Copies s into the thread's string storage and publishes it; 0 if full (counted). */
static uint32_t store_str(struct cap_thread *t, const char *s, size_t len)
{
	if (len > MAX_STR_LEN)
		len = MAX_STR_LEN;
	if (t->str == NULL || len + 1 > STR_BYTES - t->str_len) {
		atomic_fetch_add_explicit(&t->str_dropped, 1, memory_order_relaxed);
		return 0;
	}
	memcpy(t->str + t->str_len, s, len);
	t->str[t->str_len + len] = 0;
	t->str_len += (uint32_t)len + 1;
	t->str_count++;
	atomic_store_explicit(&t->str_pub, (uint64_t)t->str_count << 32 | t->str_len,
	                      memory_order_release);
	return t->str_count; /* ids are 1-based; 0 = "" */
}

static struct cache_ent *cache_slot(struct cap_thread *t, uint64_t h, const void *key,
                                    uint32_t tag, int *found)
{
	if (t->cache == NULL) {
		*found = 0;
		return NULL;
	}
	uint32_t mask = CACHE_SLOTS - 1;
	for (uint32_t i = (uint32_t)(h >> 40) & mask, probes = 0; probes < 32;
	     i = (i + 1) & mask, probes++) {
		struct cache_ent *e = &t->cache[i];
		if (e->tag == 0) {
			*found = 0;
			return e;
		}
		if (e->tag == tag && e->hash == h && (tag == 3 || e->key == key)) {
			if (tag != 3 || strcmp(t->str + (uint32_t)(uintptr_t)e->key, key) == 0) {
				*found = 1;
				return e;
			}
		}
	}
	*found = 0;
	return NULL; /* neighbourhood full: store uncached */
}

/* A string kept by pointer. */
static inline uint32_t intern_ptr(struct cap_thread *t, const char *s)
{
	if (s == NULL)
		return 0;
	int found;
	uint64_t h = ptr_hash(s);
	if (LIKELY(t->cache != NULL)) {
		struct cache_ent *home = &t->cache[(uint32_t)(h >> 40) & (CACHE_SLOTS - 1)];
		if (LIKELY(home->tag == 1 && home->key == (const void *)s))
			return home->id[0];
	}
	struct cache_ent *e = cache_slot(t, h, s, 1, &found);
	if (LIKELY(found))
		return e->id[0];
	uint32_t id = store_str(t, s, strlen(s));
	if (e && id) {
		e->key = s;
		e->hash = h;
		e->id[0] = id;
		e->tag = 1;
	}
	return id;
}

/* A string compared by content (meta text, tensor names, dtypes, attribute values). */
static uint32_t intern_text(struct cap_thread *t, const char *s)
{
	if (s == NULL || s[0] == 0)
		return 0;
	/* Fast path: the same pointer as last time with the same bytes (a tag-4 hint in the
	 * pointer's home slot remembers the id and where its bytes are stored). */
	uint64_t ph = ptr_hash(s);
	struct cache_ent *home =
		t->cache ? &t->cache[(uint32_t)(ph >> 40) & (CACHE_SLOTS - 1)] : NULL;
	if (home && home->tag == 4 && home->key == (const void *)s &&
	    strcmp(t->str + home->id[1], s) == 0)
		return home->id[0];
	uint64_t h = 1469598103934665603ull;
	size_t len = 0;
	for (; s[len] && len < MAX_STR_LEN; len++)
		h = (h ^ (unsigned char)s[len]) * 1099511628211ull;
	int found;
	char cut[MAX_STR_LEN + 1];
	const char *key = s;
	if (s[len]) { /* cut: compare against the cut copy */
		memcpy(cut, s, len);
		cut[len] = 0;
		key = cut;
	}
	struct cache_ent *e = cache_slot(t, h, key, 3, &found);
	uint32_t id, off;
	if (found) {
		id = e->id[0];
		off = (uint32_t)(uintptr_t)e->key;
	} else {
		off = t->str_len;
		id = store_str(t, s, len);
		if (e && id) {
			e->key = (const void *)(uintptr_t)off;
			e->hash = h;
			e->id[0] = id;
			e->tag = 3;
		}
	}
	if (home && id && !s[len] && (home->tag == 0 || home->tag == 4)) {
		home->key = s;
		home->hash = ph;
		home->id[0] = id;
		home->id[1] = off;
		home->tag = 4;
	}
	return id;
}

/* An operator descriptor: name, type and post-op ids, cached by the descriptor's address. */
static inline const uint32_t *intern_op(struct cap_thread *t, const struct tpuprof_op *op)
{
	static const uint32_t none[3] = {0, 0, 0};
	int found;
	uint64_t h = ptr_hash(op);
	/* Fast path: the descriptor sits in its home slot (the common case). */
	if (LIKELY(t->cache != NULL)) {
		struct cache_ent *home = &t->cache[(uint32_t)(h >> 40) & (CACHE_SLOTS - 1)];
		if (LIKELY(home->tag == 2 && home->key == (const void *)op))
			return home->id;
	}
	struct cache_ent *e = cache_slot(t, h, op, 2, &found);
	if (LIKELY(found))
		return e->id;
	if (e == NULL)
		return none;
	e->id[0] = op->name ? store_str(t, op->name, strlen(op->name)) : 0;
	e->id[1] = op->type ? store_str(t, op->type, strlen(op->type)) : 0;
	e->id[2] = op->post_op ? store_str(t, op->post_op, strlen(op->post_op)) : 0;
	e->key = op;
	e->hash = h;
	e->tag = 2;
	return e->id;
}

/* ---- step context ---- */

static inline void step_ctx(struct cap_thread *t, struct cap_rec *r)
{
	if (t->step_depth > 0) {
		int i = t->step_depth - 1;
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
#define NOINLINE __attribute__((noinline))
#define OFF_RETURN(s)                                                                          \
	uint32_t s = atomic_load_explicit(&g_state, memory_order_relaxed);                    \
	if (LIKELY(s == 0))                                                                    \
		return
#define THREAD_OR_RETURN(s, t)                                                                 \
	struct cap_thread *t = cur_thread(s);                                                  \
	if (UNLIKELY(t == NULL))                                                               \
		return

static inline int mode_of(uint32_t s) { return (int)(s & 3u) - 1; }

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
	if (t->step_depth < STEP_STACK) {
		t->steps[t->step_depth] = step;
		t->step_warm[t->step_depth] = warmup != 0;
	}
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

static void put_detail(struct cap_thread *t, const struct tpuprof_op_detail *d,
                       const uint64_t *hw_delta, uint32_t hw_n)
{
	uint32_t need = hw_n;
	int ni = 0, no = 0, na = 0;
	if (d) {
		ni = d->inputs && d->num_inputs > 0 ? d->num_inputs : 0;
		no = d->outputs && d->num_outputs > 0 ? d->num_outputs : 0;
		na = d->attrs && d->num_attrs > 0 ? d->num_attrs : 0;
		if (ni > 255)
			ni = 255;
		if (no > 255)
			no = 255;
		for (int i = 0; i < ni; i++)
			need += 1 + dims_records(d->inputs[i].ndim);
		for (int i = 0; i < no; i++)
			need += 1 + dims_records(d->outputs[i].ndim);
		if (d->weight_shape)
			need += 1 + dims_records(d->weight_ndim);
		need += (uint32_t)na + 1 + (d->weight_sparsity >= 0 ? 1 : 0);
	}
	if (need == 0)
		return;
	if (!room(t, need)) {
		drop(t, need);
		return;
	}
	if (d) {
		for (int i = 0; i < ni; i++)
			put_tensor(t, TP_CAPFMT_ROLE_INPUT, i, &d->inputs[i], d->inputs[i].shape,
			           d->inputs[i].ndim);
		for (int i = 0; i < no; i++)
			put_tensor(t, TP_CAPFMT_ROLE_OUTPUT, i, &d->outputs[i], d->outputs[i].shape,
			           d->outputs[i].ndim);
		if (d->weight_shape)
			put_tensor(t, TP_CAPFMT_ROLE_WEIGHT, 0, NULL, d->weight_shape, d->weight_ndim);
		for (int i = 0; i < na; i++) {
			struct cap_rec *r = &t->recs[t->n++];
			memset(r, 0, sizeof *r);
			r->kind = TP_CAPFMT_REC_ATTR;
			r->name = intern_text(t, d->attrs[i].key);
			r->a = intern_text(t, d->attrs[i].value);
		}
		struct cap_rec *r = &t->recs[t->n++];
		memset(r, 0, sizeof *r);
		r->kind = TP_CAPFMT_REC_COST;
		r->a = d->bytes;
		r->b = d->flops;
		if (d->weight_sparsity >= 0) {
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
			for (uint32_t i = 0; i < t->hw_n; i++)
				delta[i] = now[i] - t->hw_stack[t->hw_depth][i];
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
	r->name = mode >= TPUPROF_MODE_CONDENSED && op ? intern_op(t, op)[0] : 0;
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
	if (mode_of(s) < TPUPROF_MODE_DETAILED)
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

static void fill_header(unsigned char *h, uint64_t tick1, uint64_t ns1)
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
}

static unsigned char *block(unsigned char *p, uint32_t type, uint64_t len)
{
	put32(p, type);
	put32(p + 4, 0);
	put64(p + 8, len);
	return p + TP_CAPFMT_BLOCK_HEADER_SIZE;
}

/* Writes the whole dump of session word `s` from offset 0. Returns 0 or -1. */
static int write_dump(uint32_t s)
{
	int fd = g_ses.fd;
	if (fd < 0)
		return -1;
	/* Snapshot counts first: records before strings, so every string a counted record
	 * uses is inside the string snapshot. */
	uint32_t nthreads = 0;
	uint64_t total = 0, dropped = 0, sdropped = 0;
	struct cap_thread *head = atomic_load_explicit(&g_threads, memory_order_acquire);
	for (struct cap_thread *t = head; t; t = t->next) {
		if (atomic_load_explicit(&t->state, memory_order_acquire) != s)
			continue;
		t->snap_n = atomic_load_explicit(&t->pub, memory_order_acquire);
		t->snap_str = atomic_load_explicit(&t->str_pub, memory_order_acquire);
		t->snap_dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
		t->snap_str_dropped = atomic_load_explicit(&t->str_dropped, memory_order_relaxed);
		nthreads++;
		total += t->snap_n;
		dropped += t->snap_dropped;
		sdropped += t->snap_str_dropped;
	}
	uint64_t tick1, ns1;
	calib_point(&tick1, &ns1);
	g_ses.flushes++;

	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		return -1;
	unsigned char *h = g_scratch;
	fill_header(h, tick1, ns1);
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
		return -1;

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
		put32(p + 36, t->hw_kind);
		/* The name may change under us only through prctl in the owner; copy bytes. */
		memcpy(p + 40, t->name, TP_CAPFMT_COMM_SIZE);
		p += 56;
		if (write_all(fd, h, (size_t)(p - h)) != 0 ||
		    (sbytes && write_all(fd, t->str, sbytes) != 0))
			return -1;
		p = block(h, TP_CAPFMT_BLK_RECORDS, (uint64_t)t->snap_n * TP_CAPFMT_RECORD_SIZE);
		if (write_all(fd, h, (size_t)(p - h)) != 0 ||
		    (t->snap_n &&
		     write_all(fd, t->recs, (size_t)t->snap_n * TP_CAPFMT_RECORD_SIZE) != 0))
			return -1;
	}
	p = block(h, TP_CAPFMT_BLK_END, 16);
	put64(p, total);
	put64(p + 8, dropped);
	p += 16;
	return write_all(fd, h, (size_t)(p - h));
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

static void flush_unlock(void) { atomic_store(&g_flush_owner, 0); }

/* ---------------------------------------------------------------------------------------- */
/* Sessions and signals                                                                      */
/* ---------------------------------------------------------------------------------------- */

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

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	uint32_t s = atomic_load(&g_state);
	if (s != 0 && flush_lock(1)) {
		if (write_dump(s) != 0) {
			static const char msg[] = "tpuprof: warning: could not write the dump on signal\n";
			ssize_t w = write(2, msg, sizeof msg - 1);
			(void)w;
		}
		flush_unlock();
	}
	chain(sig, si, uc);
	errno = saved;
}

static void install_signals(void)
{
	if (g_sig_installed)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	struct sigaction old;
	/* A signal the application ignores stays ignored. */
	if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN &&
	    sigaction(SIGINT, &sa, &g_old_int) != 0)
		g_old_int.sa_handler = SIG_DFL;
	if (sigaction(SIGTERM, NULL, &old) == 0 && old.sa_handler != SIG_IGN &&
	    sigaction(SIGTERM, &sa, &g_old_term) != 0)
		g_old_term.sa_handler = SIG_DFL;
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

/* Creates the session directory and file. Called with g_ctl held. */
static int open_dump(void)
{
	char base[4200];
	int n = snprintf(base, sizeof base, "%s/tpuprof_data_dev%d-%u.%ld", g_env.dir, g_ses.device,
	                 g_ses.sessions, (long)getpid());
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
	char dir[4232];
	snprintf(dir, sizeof dir, "%s", base);
	for (int k = 1; mkdir(dir, 0777) != 0; k++) {
		if (errno != EEXIST || k > 1000) {
			warn("cannot create \"%s\": %s; capture stays off", dir, strerror(errno));
			return -1;
		}
		snprintf(dir, sizeof dir, "%s.%d", base, k);
	}
	snprintf(g_ses.path, sizeof g_ses.path, "%s/capture.tpp", dir);
	int fd = open(g_ses.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		warn("cannot create \"%s\": %s; capture stays off", g_ses.path, strerror(errno));
		return -1;
	}
	/* A header right away: a process killed before any flush leaves a dump that says so. */
	unsigned char h[TP_CAPFMT_HEADER_SIZE];
	fill_header(h, 0, 0);
	if (write_all(fd, h, sizeof h) != 0) {
		warn("cannot write \"%s\": %s; capture stays off", g_ses.path, strerror(errno));
		close(fd);
		return -1;
	}
	g_ses.fd = fd;
	return 0;
}

/* Called with g_ctl held and no active session. */
static int start_session(uint32_t max_records, int mode)
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
	if (open_dump() != 0)
		return TPUPROF_EIO;
	g_ses.sessions++;
	install_signals();
	g_ses.gen = (g_ses.gen + 1) & 0x3fffffffu;
	if (g_ses.gen == 0)
		g_ses.gen = 1;
	atomic_store_explicit(&g_step_word, 0, memory_order_relaxed);
	atomic_store_explicit(&g_state, g_ses.gen << 2 | (uint32_t)(mode + 1), memory_order_release);
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
	if (write_dump(s) != 0) {
		rc = TPUPROF_EIO;
		if (warn_on_error)
			warn("cannot write \"%s\": %s", g_ses.path, strerror(errno));
	}
	close(g_ses.fd);
	g_ses.fd = -1;
	flush_unlock();
	return rc;
}

int tpuprof_enable(uint32_t max_records, int mode)
{
	ensure_init();
	if (mode < TPUPROF_MODE_TIMING || mode > TPUPROF_MODE_DETAILED)
		return TPUPROF_EINVAL;
	pthread_mutex_lock(&g_ctl);
	int rc = atomic_load(&g_state) != 0 ? TPUPROF_EBUSY : start_session(max_records, mode);
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
		rc = write_dump(s) == 0 ? TPUPROF_OK : TPUPROF_EIO;
		flush_unlock();
		if (rc != TPUPROF_OK)
			warn("cannot write \"%s\": %s", g_ses.path, strerror(errno));
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
/* fork: the child never writes the parent's records; it starts its own session if the      */
/* parent had one.                                                                           */
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
	for (struct cap_thread *t = atomic_load(&g_threads); t; t = t->next) {
		atomic_store(&t->state, 0);
		hw_close(t); /* the parent's counters do not count the child */
		atomic_store(&t->gone, 1);
	}
	tls_thread = NULL;
	if (g_ses.fd >= 0)
		close(g_ses.fd);
	g_ses.fd = -1;
	g_hw_kind = -1;
	prctl(PR_GET_NAME, g_comm, 0, 0, 0);
	flush_unlock();
	pthread_mutex_unlock(&g_ctl);
	if (s != 0) {
		pthread_mutex_lock(&g_ctl);
		start_session(g_ses.max_records, mode_of(s));
		pthread_mutex_unlock(&g_ctl);
	}
}
