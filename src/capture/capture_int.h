/*
 * capture_int.h — libtpuprof's private header, shared by the files of src/capture/ only: the
 * record and live-file layouts, the per-thread buffer, the global state (declared here,
 * defined in init.c) and the functions one file of the runtime calls in another. Cross-file
 * names carry the tp_cap_ prefix: they are hidden in libtpuprof.so but visible to the linker
 * of a program that links libtpuprof.a, so they must not collide with the program's own.
 *
 * Hot path (one event): load the session word; if 0 return. Otherwise fetch this thread's
 * buffer (thread-local pointer), announce the call in its busy word and read the session word
 * again (enter in record.c: how a session's end waits for the calls inside it), check that
 * the buffer belongs to the current session, check space, write one 32-byte record, publish
 * the new count with a release store and clear busy. No lock, no allocation, no system call
 * (except the opt-in hardware counters), no log. When the mapped part of the buffer is used
 * up, a slow path maps (and pre-faults) the next extent.
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
#ifndef TP_CAPTURE_INT_H
#define TP_CAPTURE_INT_H

#include "tpuprof/tpuprof.h"

#include "capture/capfmt.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
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
	_Atomic uint32_t busy;   /* session word of the recording call in progress, 0 = none */
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
	uint32_t snap_s; /* the buffer's session word when the counts were taken */
	uint32_t snap_n;
	uint64_t snap_str;
	uint64_t snap_dropped;
	uint32_t snap_str_dropped;
};

/* Background pre-fault state of one thread's request (cap_thread.pf_state; buffers.c). */
enum { PF_IDLE, PF_QUEUED, PF_BUSY, PF_ABANDONED, PF_READY, PF_FAILED };

/* The environment switches (env_table.h), read once by init.c. */
struct cap_env {
	int auto_mode; /* -1 none, else 1 or 2 */
	char dir[4096];
	uint32_t record_size;
	int hwcounters;
	int crashsafe;
	int prefault; /* TPUPROF_PREFAULT: pre-fault the next extent on a background thread */
};

/* The session: its parameters, its directory and the shared mapping of session.tpc. */
struct cap_ses {
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
};

/* ---- global state (src/capture is the one place allowed to have it; defined in init.c) ---- */

extern _Atomic uint32_t tp_cap_state; /* gen << 2 | (mode + 1); 0 = off */
/* tpuprof_active (tpuprof.h) is the public mirror of tp_cap_state != 0. */
extern _Atomic(struct cap_thread *) tp_cap_threads; /* lock-free push-only registry */
extern _Atomic uint64_t tp_cap_step_word; /* process-wide open step: step<<2 | warm<<1 | 1 */
extern pthread_mutex_t tp_cap_ctl;        /* enable / disable / flush / meta / device */
extern pthread_key_t tp_cap_key;          /* its destructor marks a thread's buffer gone */
extern TLS_MODEL _Thread_local struct cap_thread *tp_cap_tls_thread;
extern TLS_MODEL _Thread_local char tp_cap_tls_name[TP_CAPFMT_COMM_SIZE]; /* thread_name */
extern struct cap_env tp_cap_env;
extern struct cap_ses tp_cap_ses;
extern pthread_mutex_t tp_cap_dir_mu; /* session dir / thread files */
extern pthread_mutex_t tp_cap_calib_mu;
extern int tp_cap_use_tsc;
extern int tp_cap_membarrier; /* membarrier command quiescing uses; 0 = threads fence */

/* A full (store-load) memory barrier. gcc's ThreadSanitizer does not model
 * atomic_thread_fence and refuses to compile it (-Wtsan); there a sequentially consistent
 * read-modify-write of one shared word stands in: the same order on the hardware, and an
 * access TSan sees. */
#if defined(__SANITIZE_THREAD__)
#define TP_CAP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TP_CAP_TSAN 1
#endif
#endif
#ifdef TP_CAP_TSAN
extern _Atomic unsigned tp_cap_fence_word;
#define TP_CAP_FULL_FENCE()                                                                        \
	((void)atomic_fetch_add_explicit(&tp_cap_fence_word, 0u, memory_order_seq_cst))
#else
#define TP_CAP_FULL_FENCE() atomic_thread_fence(memory_order_seq_cst)
#endif
extern uint64_t tp_cap_tick0, tp_cap_ns0; /* calibration point taken at initialisation */
extern _Atomic int tp_cap_hw_kind;        /* process-wide counter kind, -1 = not probed yet */
extern pthread_mutex_t tp_cap_hw_mu;
extern char tp_cap_hw_names[TP_CAPFMT_MAX_HW][TP_CAPFMT_HW_NAME_SIZE];
extern uint32_t tp_cap_hw_n;
extern char tp_cap_comm[TP_CAPFMT_COMM_SIZE];
/* Run metadata (tpuprof_meta): append-only fixed entries; tp_cap_meta_n is published after an
 * entry is complete, so a flush (even from a signal handler) reads only whole entries. */
extern char tp_cap_meta[TP_CAPFMT_META_MAX][TP_CAPFMT_META_KEY + TP_CAPFMT_META_VALUE];
extern _Atomic uint32_t tp_cap_meta_n;

/* ---- init.c: initialisation, warnings, clock ---- */

void tp_cap_ensure_init(void);
void tp_cap_membarrier_setup(void);
void tp_cap_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A (tick, ns) pair read close together: the tick is bracketed by two clock reads. */
void tp_cap_calib_point(uint64_t *tick, uint64_t *ns);

/* ---- hwcounters.c: per-operator counters (opt-in, mode 2) ---- */

void tp_cap_hw_open(struct cap_thread *t);
void tp_cap_hw_close(struct cap_thread *t);
int tp_cap_hw_read(struct cap_thread *t, uint64_t *vals);
/* Writes the counter kind and names into session.tpc (tp_cap_hw_mu held). */
void tp_cap_ses_put_hw(void);

/* ---- buffers.c: thread buffers, their live files and the pre-fault worker ---- */

struct cap_thread *tp_cap_thread_new(void);
int tp_cap_attach(struct cap_thread *t, uint32_t s);
int tp_cap_grow_recs(struct cap_thread *t, uint32_t k);
int tp_cap_grow_str(struct cap_thread *t, size_t need);
void tp_cap_chunk_release(struct cap_thread *t);
void tp_cap_ses_put_meta(void);
void tp_cap_pf_atfork_child(void);

/* ---- names.c: UTF-8 cleaning and interning ---- */

size_t tp_cap_utf8_seq(const unsigned char *s, size_t n);
size_t tp_cap_clean_text(const char *s, char *out, int *same);
uint32_t tp_cap_intern_text_at(struct cap_thread *t, const char *s, uint32_t *at);
const uint32_t *tp_cap_intern_op(struct cap_thread *t, const struct tpuprof_op *op);

/* ---- dump.c: the dump writer (async-signal-safe) ---- */

void tp_cap_fill_header(unsigned char *h, uint64_t tick1, uint64_t ns1, uint32_t flags);
int tp_cap_write_dump(uint32_t s, int final);
void tp_cap_remove_live(uint32_t s);
int tp_cap_flush_lock(int from_signal);
void tp_cap_flush_unlock(void);

/* ---- session.c: sessions, signals, fork ---- */

/* Creates the session directory, session.tpc and its mapping. Called with tp_cap_dir_mu held
 * (or before the session is published). 0 or -1 (errno set; one warning per process). */
int tp_cap_ses_make(void);
int tp_cap_start_session(uint32_t max_records, int mode, int lazy);
int tp_cap_finish_session(int warn_on_error);
void tp_cap_fork_prepare(void);
void tp_cap_fork_parent(void);
void tp_cap_fork_child(void);

/* ---- small inline helpers ---- */

static inline int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline uint64_t now_ticks(void)
{
#if HAVE_TSC
	if (LIKELY(tp_cap_use_tsc))
		return __rdtsc();
#endif
	return (uint64_t)mono_ns();
}

static inline void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}
static inline void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline int64_t gettid_(void)
{
	return (int64_t)syscall(SYS_gettid);
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

static inline uint32_t intern_text(struct cap_thread *t, const char *s)
{
	uint32_t at;
	return tp_cap_intern_text_at(t, s, &at);
}

/* 1 if the cached id/offset still describe the text at `s` (NULL or "" = id 0; an offset of
 * UINT32_MAX = cleaned text, never taken as the same). */
static inline int same_text(const struct cap_thread *t, const char *s, uint32_t id, uint32_t off)
{
	if (s == NULL || s[0] == 0)
		return id == 0;
	return id != 0 && off != UINT32_MAX && strcmp(t->str + off, s) == 0;
}

/* A name given as a string (activity, graph, runtime call, counter): kept by value. */
static inline uint32_t intern_ptr(struct cap_thread *t, const char *s)
{
	return intern_text(t, s);
}

static inline int mode_of(uint32_t s)
{
	return (int)(s & 3u) - 1;
}

#endif /* TP_CAPTURE_INT_H */
