/*
 * session.c — sessions and their control API (tpuprof_enable / disable / flush / mode / meta /
 * set_device): the session directory and session.tpc, start and finish, the SIGINT/SIGTERM
 * handler that writes the dump and chains to the host's action, and the fork hooks (a child
 * starts its own session, made on disk only when it records). Owns the saved signal actions.
 */
#include "capture/capture_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>

static struct sigaction g_old_int, g_old_term;
static int g_sig_installed;

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

/* After the session word `s` was replaced by 0: waits until no thread is inside a recording
 * call for `s` (enter and leave in record.c). The barrier makes every thread's announcement
 * visible here, or its own second read of the word see the end. The calling thread is skipped
 * (a signal handler may have interrupted its recording call); `bounded` (signal handler):
 * gives up after about 2 s, as a recording thread could be waiting for a lock the
 * interrupted thread holds. */
static void quiesce(uint32_t s, int bounded)
{
	if (tp_cap_membarrier)
		syscall(SYS_membarrier, tp_cap_membarrier, 0, 0);
	TP_CAP_FULL_FENCE();
	struct cap_thread *self = tp_cap_tls_thread;
	for (struct cap_thread *t = atomic_load_explicit(&tp_cap_threads, memory_order_acquire); t;
	     t = t->next) {
		for (long spins = 0;
		     t != self && atomic_load_explicit(&t->busy, memory_order_acquire) == s;
		     spins++) {
			if (bounded && spins > 2000)
				return;
			struct timespec ts = {0, spins < 100 ? 10000 : 1000000};
			nanosleep(&ts, NULL);
		}
	}
}

/* SIGINT / SIGTERM: write the dump, then do what the host's action does. When that action
 * is to die, recording stops first and the dump is the final one (the live files go). */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction *old = sig == SIGINT ? &g_old_int : &g_old_term;
	int fatal = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
	uint32_t s = atomic_load(&tp_cap_state);
	if (s != 0 && tp_cap_flush_lock(1)) {
		if (fatal) {
			atomic_store(&tp_cap_state, 0);
			__atomic_store_n(&tpuprof_active, 0u, __ATOMIC_RELEASE);
			quiesce(s, 1);
		}
		if (tp_cap_write_dump(s, fatal) != 0) {
			static const char msg[] =
			    "tpuprof: warning: could not write the dump on signal "
			    "(the live files keep the records)\n";
			ssize_t w = write(2, msg, sizeof msg - 1);
			(void)w;
		} else if (fatal) {
			tp_cap_remove_live(s);
		}
		tp_cap_flush_unlock();
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

int tp_cap_ses_make(void)
{
	char base[4200];
	int n = snprintf(base, sizeof base, "%s/tpuprof_data_dev%d-%u.%ld", tp_cap_env.dir,
	                 tp_cap_ses.device_active, tp_cap_ses.session, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof base - 16)
		return -1;
	char top[4096];
	snprintf(top, sizeof top, "%s", tp_cap_env.dir);
	if (mkdirs(top) != 0) {
		/* One warning per process: later sessions fail the same way, silently. */
		static int warned;
		if (!warned)
			tp_cap_warn("cannot create TPUPROF_DIR \"%s\": %s; capture stays off",
			            tp_cap_env.dir, strerror(errno));
		warned = 1;
		return -1;
	}
	snprintf(tp_cap_ses.dir, sizeof tp_cap_ses.dir, "%s", base);
	for (int k = 1; mkdir(tp_cap_ses.dir, 0777) != 0; k++) {
		if (errno != EEXIST || k > 1000) {
			tp_cap_warn("cannot create \"%s\": %s; capture stays off", tp_cap_ses.dir,
			            strerror(errno));
			return -1;
		}
		snprintf(tp_cap_ses.dir, sizeof tp_cap_ses.dir, "%s.%d", base, k);
	}
	snprintf(tp_cap_ses.path, sizeof tp_cap_ses.path, "%s/capture.tpp", tp_cap_ses.dir);
	snprintf(tp_cap_ses.tmp, sizeof tp_cap_ses.tmp, "%s/capture.tpp.tmp", tp_cap_ses.dir);
	snprintf(tp_cap_ses.sespath, sizeof tp_cap_ses.sespath, "%s/%s", tp_cap_ses.dir,
	         TP_CAPFMT_SES_FILE);
	int fd = open(tp_cap_ses.sespath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
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
		tp_cap_warn("cannot create \"%s\": %s; capture stays off", tp_cap_ses.sespath,
		            strerror(err));
		unlink(tp_cap_ses.sespath);
		rmdir(tp_cap_ses.dir);
		return -1;
	}
	uint64_t t1, n1;
	tp_cap_calib_point(&t1, &n1);
	tp_cap_fill_header(m, t1, n1, 0);
	__atomic_store_n(&tp_cap_ses.ses, (unsigned char *)m, __ATOMIC_RELEASE);
	tp_cap_ses_put_meta();
	pthread_mutex_lock(&tp_cap_hw_mu);
	tp_cap_ses_put_hw();
	pthread_mutex_unlock(&tp_cap_hw_mu);
	tp_cap_ses.nchunks = 0;
	atomic_store(&tp_cap_ses.made, 1);
	return 0;
}

/* Drops the session mapping (after the session ended, or in a fork child). */
static void ses_unmap(int unmap)
{
	/* The writers of the mapping (hardware-counter names, calibration, lost count) hold
	 * tp_cap_hw_mu or tp_cap_calib_mu; order tp_cap_dir_mu -> tp_cap_hw_mu -> tp_cap_calib_mu.
	 */
	pthread_mutex_lock(&tp_cap_hw_mu);
	pthread_mutex_lock(&tp_cap_calib_mu);
	unsigned char *m = __atomic_exchange_n(&tp_cap_ses.ses, NULL, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&tp_cap_calib_mu);
	pthread_mutex_unlock(&tp_cap_hw_mu);
	if (m && unmap)
		munmap(m, TP_CAPFMT_SES_SIZE);
	atomic_store(&tp_cap_ses.made, 0);
}

/* Buffers of exited threads whose session has ended (written by its final dump, or the
 * thread exited after it): nobody writes them any more. Each is released first, then marked
 * free (state 0) for tp_cap_thread_new, which may claim it at once. Called with tp_cap_ctl
 * held and no session active (or the ending one quiesced). */
static void release_gone(void)
{
	for (struct cap_thread *t = atomic_load(&tp_cap_threads); t; t = t->next)
		if (atomic_load(&t->gone) && atomic_load(&t->state) != 0) {
			tp_cap_chunk_release(t);
			atomic_store_explicit(&t->state, 0, memory_order_release);
		}
}

/* Called with tp_cap_ctl held and no active session. `lazy`: the directory is made by the first
 * record (fork children: a child that records nothing, or execs, writes nothing). */
int tp_cap_start_session(uint32_t max_records, int mode, int lazy)
{
	if (max_records == 0)
		max_records = tp_cap_env.record_size;
	if (max_records > MAX_RECORDS)
		max_records = MAX_RECORDS;
	if (max_records < 4)
		max_records = 4;
	tp_cap_ses.mode = mode;
	tp_cap_ses.max_records = max_records;
	tp_cap_ses.device_active = tp_cap_ses.device;
	tp_cap_ses.session = tp_cap_ses.sessions;
	tp_cap_ses.flushes = 0;
	tp_cap_ses.lazy = lazy;
	atomic_store(&tp_cap_ses.made, 0);
	release_gone(); /* threads that exited after the last session ended */
	if (!lazy && tp_cap_ses_make() != 0)
		return TPUPROF_EIO;
	tp_cap_ses.sessions++;
	install_signals();
	tp_cap_ses.gen = (tp_cap_ses.gen + 1) & 0x3fffffffu;
	if (tp_cap_ses.gen == 0)
		tp_cap_ses.gen = 1;
	atomic_store_explicit(&tp_cap_step_word, 0, memory_order_relaxed);
	atomic_store_explicit(&tp_cap_state, tp_cap_ses.gen << 2 | (uint32_t)(mode + 1),
	                      memory_order_release);
	__atomic_store_n(&tpuprof_active, 1u, __ATOMIC_RELEASE);
	return TPUPROF_OK;
}

/* Called with tp_cap_ctl held and an active session. */
int tp_cap_finish_session(int warn_on_error)
{
	uint32_t s = atomic_load(&tp_cap_state);
	atomic_store(&tp_cap_state, 0);
	__atomic_store_n(&tpuprof_active, 0u, __ATOMIC_RELEASE);
	quiesce(s, 0);
	int rc = TPUPROF_OK;
	tp_cap_flush_lock(0);
	if (tp_cap_write_dump(s, 1) != 0) {
		rc = TPUPROF_EIO;
		if (warn_on_error)
			tp_cap_warn(
			    "cannot write \"%s\": %s; the records stay in the live files of that "
			    "directory, which tpuprof converts",
			    tp_cap_ses.path, strerror(errno));
	} else {
		tp_cap_remove_live(s);
	}
	release_gone();
	pthread_mutex_lock(&tp_cap_dir_mu);
	ses_unmap(1);
	tp_cap_ses.lazy = 0;
	pthread_mutex_unlock(&tp_cap_dir_mu);
	tp_cap_flush_unlock();
	return rc;
}

int tpuprof_enable(uint32_t max_records, int mode)
{
	tp_cap_ensure_init();
	if (mode < TPUPROF_MODE_TIMING || mode > TPUPROF_MODE_DETAILED)
		return TPUPROF_EINVAL;
	pthread_mutex_lock(&tp_cap_ctl);
	int rc = atomic_load(&tp_cap_state) != 0 ? TPUPROF_EBUSY
	                                         : tp_cap_start_session(max_records, mode, 0);
	pthread_mutex_unlock(&tp_cap_ctl);
	return rc;
}

int tpuprof_disable(void)
{
	tp_cap_ensure_init();
	pthread_mutex_lock(&tp_cap_ctl);
	int rc = atomic_load(&tp_cap_state) == 0 ? TPUPROF_EOFF : tp_cap_finish_session(1);
	pthread_mutex_unlock(&tp_cap_ctl);
	return rc;
}

int tpuprof_flush(void)
{
	tp_cap_ensure_init();
	pthread_mutex_lock(&tp_cap_ctl);
	uint32_t s = atomic_load(&tp_cap_state);
	int rc = TPUPROF_EOFF;
	if (s != 0) {
		tp_cap_flush_lock(0);
		rc = tp_cap_write_dump(s, 0) == 0 ? TPUPROF_OK : TPUPROF_EIO;
		int err = errno;
		tp_cap_flush_unlock();
		if (rc != TPUPROF_OK)
			tp_cap_warn("cannot write \"%s\": %s", tp_cap_ses.path, strerror(err));
	}
	pthread_mutex_unlock(&tp_cap_ctl);
	return rc;
}

int tpuprof_mode(void)
{
	uint32_t s = atomic_load_explicit(&tp_cap_state, memory_order_relaxed);
	return s ? mode_of(s) : -1;
}

int tpuprof_meta(const char *key, const char *value)
{
	if (!key || !value || !key[0] || strlen(key) >= TP_CAPFMT_META_KEY ||
	    strlen(value) >= TP_CAPFMT_META_VALUE)
		return TPUPROF_EINVAL;
	tp_cap_ensure_init();
	pthread_mutex_lock(&tp_cap_ctl);
	uint32_t n = atomic_load_explicit(&tp_cap_meta_n, memory_order_relaxed);
	int rc = TPUPROF_OK;
	if (n == TP_CAPFMT_META_MAX) {
		rc = TPUPROF_ENOMEM;
	} else {
		char *e = tp_cap_meta[n];
		memset(e, 0, sizeof tp_cap_meta[n]);
		memcpy(e, key, strlen(key));
		memcpy(e + TP_CAPFMT_META_KEY, value, strlen(value));
		atomic_store_explicit(&tp_cap_meta_n, n + 1, memory_order_release);
		pthread_mutex_lock(&tp_cap_dir_mu);
		tp_cap_ses_put_meta();
		pthread_mutex_unlock(&tp_cap_dir_mu);
	}
	pthread_mutex_unlock(&tp_cap_ctl);
	return rc;
}

int tpuprof_set_device(int device)
{
	if (device < 0)
		return TPUPROF_EINVAL;
	tp_cap_ensure_init();
	pthread_mutex_lock(&tp_cap_ctl);
	tp_cap_ses.device = device;
	pthread_mutex_unlock(&tp_cap_ctl);
	return TPUPROF_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* fork: the child never writes the parent's records (nor its live files); it starts its    */
/* own session, made on disk only when it records something.                                 */
/* ---------------------------------------------------------------------------------------- */

void tp_cap_fork_prepare(void)
{
	pthread_mutex_lock(&tp_cap_ctl);
	/* Hold the flush lock too so the child cannot inherit a half-written dump state. */
	tp_cap_flush_lock(0);
}

void tp_cap_fork_parent(void)
{
	tp_cap_flush_unlock();
	pthread_mutex_unlock(&tp_cap_ctl);
}

void tp_cap_fork_child(void)
{
	uint32_t s = atomic_load(&tp_cap_state);
	atomic_store(&tp_cap_state, 0);
	__atomic_store_n(&tpuprof_active, 0u, __ATOMIC_RELEASE);
	/* Locks another parent thread may have held at fork time. */
	pthread_mutex_init(&tp_cap_dir_mu, NULL);
	pthread_mutex_init(&tp_cap_calib_mu, NULL);
	pthread_mutex_init(&tp_cap_hw_mu, NULL);
	tp_cap_pf_atfork_child();
	for (struct cap_thread *t = atomic_load(&tp_cap_threads); t; t = t->next) {
		t->pf_state = PF_IDLE;
		atomic_store(&t->state, 0);
		atomic_store(&t->busy, 0);
		tp_cap_hw_close(t);        /* the parent's counters do not count the child */
		atomic_store(&t->gone, 1); /* its mapping is the parent's: released on reuse */
	}
	tp_cap_tls_thread = NULL;
	ses_unmap(1);
	tp_cap_hw_kind = -1;
	tp_cap_membarrier_setup(); /* the registration belongs to the parent's process */
	prctl(PR_GET_NAME, tp_cap_comm, 0, 0, 0);
	tp_cap_flush_unlock();
	pthread_mutex_unlock(&tp_cap_ctl);
	if (s != 0) {
		pthread_mutex_lock(&tp_cap_ctl);
		tp_cap_start_session(tp_cap_ses.max_records, mode_of(s), 1);
		pthread_mutex_unlock(&tp_cap_ctl);
	}
}
