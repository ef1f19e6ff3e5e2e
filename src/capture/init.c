/*
 * init.c — libtpuprof's initialisation and the definitions of its global state (declared in
 * capture_int.h): the environment switches, read once from the one table (env_table.h), the
 * clock (TSC where it is invariant, else CLOCK_MONOTONIC) and its calibration point, the
 * thread-exit, fork and load/unload hooks, and the warning line.
 */
#include "capture/capture_int.h"
#include "capture/env_table.h"

#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

/* ---- global state (declared, with what each holds, in capture_int.h) ---- */

_Atomic uint32_t tp_cap_state;
/* The public mirror of tp_cap_state != 0 for the inline TPUPROF_ON() test (tpuprof.h). */
TPUPROF_API uint32_t tpuprof_active;
_Atomic(struct cap_thread *) tp_cap_threads;
_Atomic uint64_t tp_cap_step_word;
pthread_mutex_t tp_cap_ctl = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
pthread_key_t tp_cap_key;
TLS_MODEL _Thread_local struct cap_thread *tp_cap_tls_thread;
TLS_MODEL _Thread_local char tp_cap_tls_name[TP_CAPFMT_COMM_SIZE];
struct cap_env tp_cap_env;
struct cap_ses tp_cap_ses;
pthread_mutex_t tp_cap_dir_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t tp_cap_calib_mu = PTHREAD_MUTEX_INITIALIZER;
int tp_cap_use_tsc;
int tp_cap_membarrier;
#ifdef TP_CAP_TSAN
_Atomic unsigned tp_cap_fence_word;
#endif
uint64_t tp_cap_tick0, tp_cap_ns0;
_Atomic int tp_cap_hw_kind = -1;
pthread_mutex_t tp_cap_hw_mu = PTHREAD_MUTEX_INITIALIZER;
char tp_cap_hw_names[TP_CAPFMT_MAX_HW][TP_CAPFMT_HW_NAME_SIZE];
uint32_t tp_cap_hw_n;
char tp_cap_comm[TP_CAPFMT_COMM_SIZE];
char tp_cap_meta[TP_CAPFMT_META_MAX][TP_CAPFMT_META_KEY + TP_CAPFMT_META_VALUE];
_Atomic uint32_t tp_cap_meta_n;

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                            */
/* ---------------------------------------------------------------------------------------- */

void tp_cap_warn(const char *fmt, ...)
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

/* A (tick, ns) pair read close together: the tick is bracketed by two clock reads. */
void tp_cap_calib_point(uint64_t *tick, uint64_t *ns)
{
	int64_t a = mono_ns();
	uint64_t t = now_ticks();
	int64_t b = mono_ns();
	*tick = t;
	*ns = (uint64_t)(a + (b - a) / 2);
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

/* A 0/1 switch that is on unless set to "0"; a value other than "", "0" or "1" warns. */
static int env_on_unless_0(enum env_id id)
{
	const char *v = env_get(id);
	if (strcmp(v, "0") == 0)
		return 0;
	if (v[0] && strcmp(v, "1") != 0)
		tp_cap_warn("%s=%.64s is not 0 or 1; using 1", env_spec[id].name, v);
	return 1;
}

static void read_env(void)
{
	const char *m = env_get(ENV_MODE);
	tp_cap_env.auto_mode = -1;
	if (m[0] == 0 || strcmp(m, "off") == 0)
		tp_cap_env.auto_mode = -1;
	else if (strcmp(m, "0") == 0 || strcmp(m, "1") == 0 || strcmp(m, "2") == 0)
		tp_cap_env.auto_mode = m[0] - '0'; /* the TPUPROF_MODE_* numbers */
	else
		tp_cap_warn("TPUPROF=%.64s is not off, 0, 1 or 2; capture stays off", m);

	const char *dir = env_get(ENV_DIR);
	if (dir[0] == 0)
		dir = env_spec[ENV_DIR].def;
	if (strlen(dir) >= sizeof tp_cap_env.dir - 64) {
		tp_cap_warn("TPUPROF_DIR is too long; using \"%s\"", env_spec[ENV_DIR].def);
		dir = env_spec[ENV_DIR].def;
	}
	snprintf(tp_cap_env.dir, sizeof tp_cap_env.dir, "%s", dir);

	uint32_t rs = 0;
	const char *r = env_get(ENV_RECORD_SIZE);
	if (parse_u32(r, &rs) != 0 || rs < 16 || rs > MAX_RECORDS) {
		tp_cap_warn("TPUPROF_RECORD_SIZE=%.64s is not a count in [16, %u]; using %s", r,
		            MAX_RECORDS, env_spec[ENV_RECORD_SIZE].def);
		parse_u32(env_spec[ENV_RECORD_SIZE].def, &rs);
	}
	tp_cap_env.record_size = rs;

	tp_cap_env.crashsafe = env_on_unless_0(ENV_CRASHSAFE);
	tp_cap_env.prefault = env_on_unless_0(ENV_PREFAULT);

	const char *h = env_get(ENV_HWCOUNTERS);
	if (h[0] == 0 || strcmp(h, "0") == 0)
		tp_cap_env.hwcounters = 0;
	else if (strcmp(h, "1") == 0)
		tp_cap_env.hwcounters = 1;
	else {
		tp_cap_warn("TPUPROF_HWCOUNTERS=%.64s is not 0 or 1; counters stay off", h);
		tp_cap_env.hwcounters = 0;
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

/* Thread exit (pthread key destructor): the counters' file descriptors are closed now (they
 * count only this thread), the buffer stays until its records are written. */
static void thread_gone(void *p)
{
	struct cap_thread *t = p;
	tp_cap_hw_close(t);
	atomic_store_explicit(&t->busy, 0, memory_order_release); /* cancelled inside a call */
	atomic_store_explicit(&t->gone, 1, memory_order_release);
}

/* The barrier finish_session forces on recording threads (see enter in record.c):
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED (Linux 4.14) once the process is registered for it, else
 * MEMBARRIER_CMD_GLOBAL (slower, Linux 4.3), else none: recording calls then fence
 * themselves. Also run in a fork child, whose registration is its own. */
void tp_cap_membarrier_setup(void)
{
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		tp_cap_membarrier = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
	else if (cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL))
		tp_cap_membarrier = MEMBARRIER_CMD_GLOBAL;
	else
		tp_cap_membarrier = 0;
}

static void init_once(void)
{
	read_env();
	tp_cap_use_tsc = tsc_usable();
	tp_cap_calib_point(&tp_cap_tick0, &tp_cap_ns0);
	tp_cap_membarrier_setup();
	pthread_key_create(&tp_cap_key, thread_gone);
	pthread_atfork(tp_cap_fork_prepare, tp_cap_fork_parent, tp_cap_fork_child);
	prctl(PR_GET_NAME, tp_cap_comm, 0, 0, 0);
}

void tp_cap_ensure_init(void)
{
	pthread_once(&g_once, init_once);
}

__attribute__((constructor)) static void lib_load(void)
{
	tp_cap_ensure_init();
	if (tp_cap_env.auto_mode >= 0) {
		pthread_mutex_lock(&tp_cap_ctl);
		tp_cap_start_session(0, tp_cap_env.auto_mode, 0);
		pthread_mutex_unlock(&tp_cap_ctl);
	}
}

__attribute__((destructor)) static void lib_unload(void)
{
	pthread_mutex_lock(&tp_cap_ctl);
	if (atomic_load(&tp_cap_state) != 0)
		tp_cap_finish_session(1);
	pthread_mutex_unlock(&tp_cap_ctl);
}
