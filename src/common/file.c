/*
 * file.c — input files (mapped read-only) and atomic output files: written under a temporary
 * name next to the target and renamed into place only when complete.
 */
#define _GNU_SOURCE /* renameat2 (glibc >= 2.28) */
#include "common/common.h"
#include "common/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int tp_open_regular(const char *path, struct tp_diag *d)
{
	/* O_NONBLOCK: opening a FIFO for reading otherwise blocks until a writer appears, before
	 * fstat could tell it is not a file. Regular files ignore the flag; it is cleared anyway
	 * so a later read behaves normally. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			return tp_diag_set(d, TP_EIO,
			                   "%s: symbolic link loop (too many levels of "
			                   "symbolic links)",
			                   path);
		return tp_diag_set(d, e == ENOENT ? TP_ENOTFOUND : TP_EIO, "%s: %s", path,
		                   strerror(e));
	}
	struct stat st;
	memset(&st, 0, sizeof st);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int isdir = S_ISDIR(st.st_mode), isfifo = S_ISFIFO(st.st_mode),
		    isdev = S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode);
		close(fd);
		return tp_diag_set(d, TP_EIO, "%s: not a regular file (%s)", path,
		                   isdir    ? "a directory"
		                   : isfifo ? "a FIFO"
		                   : isdev  ? "a device"
		                            : "a special file");
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int tp_file_load(struct tp_file *f, const char *path, struct tp_diag *d)
{
	memset(f, 0, sizeof *f);
	int fd = tp_open_regular(path, d);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return tp_diag_set(d, TP_EIO, "%s: %s", path, strerror(e));
	}
	if (st.st_size == 0) {
		close(fd);
		static const uint8_t empty[1];
		f->data = empty;
		return TP_OK;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return tp_diag_set(d, TP_EIO, "%s: cannot map: %s", path, strerror(errno));
	f->data = m;
	f->size = (size_t)st.st_size;
	f->mapped = 1;
	return TP_OK;
}

void tp_file_progress(struct tp_file *f, size_t upto)
{
	if (upto > f->size)
		upto = f->size;
	if (upto > f->reported) {
		tp_progress_input_done(upto - f->reported);
		f->reported = upto;
	}
}

void tp_file_release(struct tp_file *f)
{
	/* the reading phase's progress (common/progress.h): what tp_file_progress has not told */
	tp_progress_input_done(f->size - f->reported);
	if (f->mapped) {
		/* The pages first, under the address space's lock taken shared (tp_free's reason):
		 * threads that release their inputs at once do not wait for each other. */
		tp_file_drop(f, 0, f->size);
		munmap((void *)f->data, f->size);
	}
	memset(f, 0, sizeof *f);
}

void tp_map_drop(const void *base, size_t from, size_t to)
{
	if (to <= from)
		return;
	long ps = sysconf(_SC_PAGESIZE); /* called once per MBs given back: cheap enough */
	uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
	uintptr_t b = ((uintptr_t)base + from + page - 1) & ~(page - 1);
	uintptr_t e = ((uintptr_t)base + to) & ~(page - 1);
	if (e > b)
		madvise((void *)b, e - b, MADV_DONTNEED);
}

void tp_file_drop(const struct tp_file *f, size_t from, size_t to)
{
	if (f->mapped)
		tp_map_drop(f->data, from, to > f->size ? f->size : to);
}

/* ---- Temporary files an interrupted run must remove -------------------------------------- */
/* A fixed table of path copies, each published by one atomic flag: the signal handler may run
 * at any moment, reads only slots whose flag is 1 and only calls unlink() (async-signal-
 * safe). Writers have a handful of temporaries open at once; a path that does not fit, or a
 * full table, is simply not tracked (ordinary error paths still remove it). */
#define TMP_SLOTS 64
#define TMP_PATH_MAX 4096
#define TMP_READING 4 /* or-ed into 1 / 3 while one thread compares the slot's path */
static char tmp_names[TMP_SLOTS][TMP_PATH_MAX];
/* 0 free, 2 being written, 1 file, 3 directory. A slot's path changes only between 0 and its
 * kind, and a slot is freed only by the thread that holds it as TMP_READING, so a path is never
 * rewritten while another thread compares it. */
static atomic_int tmp_state[TMP_SLOTS];

static void tmp_track_as(const char *path, int kind)
{
	size_t n = strlen(path);
	if (n >= TMP_PATH_MAX)
		return;
	for (size_t i = 0; i < TMP_SLOTS; i++) {
		int expect = 0;
		if (atomic_compare_exchange_strong(&tmp_state[i], &expect, 2)) {
			memcpy(tmp_names[i], path, n + 1);
			atomic_store(&tmp_state[i], kind);
			return;
		}
	}
}

static void tmp_track(const char *path)
{
	tmp_track_as(path, 1);
}

void tp_temp_track_file(const char *path)
{
	tmp_track_as(path, 1);
}

void tp_temp_track_dir(const char *dir)
{
	tmp_track_as(dir, 3);
}

static void tmp_untrack(const char *path)
{
	for (size_t i = 0; i < TMP_SLOTS; i++)
		for (;;) {
			int s = atomic_load(&tmp_state[i]);
			if (!(s & 1))
				break; /* free, or being written: not a path tracked before this
				          call */
			if (s & TMP_READING)
				continue; /* another thread compares it; it gives the slot back at
				             once */
			if (!atomic_compare_exchange_weak(&tmp_state[i], &s, s | TMP_READING))
				continue;
			int match = strcmp(tmp_names[i], path) == 0;
			atomic_store(&tmp_state[i], match ? 0 : s);
			if (match)
				return;
			break;
		}
}

void tp_temp_forget(const char *tmp_path)
{
	tmp_untrack(tmp_path);
}

static void on_fatal_signal(int sig)
{
	int e = errno;
	for (size_t i = 0; i < TMP_SLOTS; i++)
		if ((atomic_load(&tmp_state[i]) & 3) == 1)
			unlink(tmp_names[i]);
	/* Then the directories a writer created for itself, if they are empty now. */
	for (size_t i = 0; i < TMP_SLOTS; i++)
		if ((atomic_load(&tmp_state[i]) & 3) == 3)
			rmdir(tmp_names[i]);
	errno = e;
	/* Die of the same signal, so the parent sees the usual status (128 + sig). */
	signal(sig, SIG_DFL);
	raise(sig);
}

void tp_temp_cleanup_on_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fatal_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESETHAND;
		struct sigaction old;
		/* A signal the caller's parent ignores (nohup) stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

/* Names are `path`.tmp-PID.N (N counts this process's temporaries), so no two live processes
 * pick the same one. The name is tracked BEFORE the file exists and then created with O_EXCL:
 * a signal between the two finds nothing to unlink, while the other order (create, then
 * track, as with mkstemp) left the file behind when the signal fell in between. A name that
 * exists (a stale temporary of a dead process with the same pid) is untracked and skipped.
 * The mode is 0666 less the umask, as for any created file. */
static atomic_uint tmp_counter;

char *tp_temp_path_for(const char *path)
{
	size_t n = strlen(path);
	char *t = tp_malloc(n + 40);
	if (!t) {
		errno = ENOMEM; /* callers tell "out of memory" from "cannot create" by errno */
		return NULL;
	}
	memcpy(t, path, n);
	for (int tries = 0; tries < 1000; tries++) {
		unsigned c = atomic_fetch_add(&tmp_counter, 1);
		snprintf(t + n, 40, ".tmp-%lx.%u", (unsigned long)getpid(), c);
		tmp_track(t);
		int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			close(fd);
			return t;
		}
		int e = errno;
		tmp_untrack(t);
		if (e != EEXIST) {
			tp_free(t);
			errno = e;
			return NULL;
		}
	}
	tp_free(t);
	errno = EEXIST;
	return NULL;
}

/*
 * Replaces an existing regular file at `path` by `tmp_path` with one atomic exchange, then
 * deletes the old contents (now under `tmp_path`). Returns 1 when done, 0 when the caller must
 * fall back to rename(2) (no file to replace, or a filesystem without RENAME_EXCHANGE). An
 * exchange because ext4 (auto_da_alloc) writes the new file back inside a rename that replaces
 * one, and not inside an exchange.
 */
static int exchange_into_place(const char *tmp_path, const char *path)
{
#ifdef RENAME_EXCHANGE
	struct stat st;
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (renameat2(AT_FDCWD, tmp_path, AT_FDCWD, path, RENAME_EXCHANGE) != 0)
		return 0;
	unlink(tmp_path); /* the old contents (on failure they stay under the temporary name) */
	return 1;
#else
	(void)tmp_path;
	(void)path;
	return 0;
#endif
}

int tp_rename_into_place(const char *tmp_path, const char *path, struct tp_diag *d)
{
	if (exchange_into_place(tmp_path, path)) {
		tmp_untrack(tmp_path);
		return TP_OK;
	}
	if (rename(tmp_path, path) != 0) {
		int e = errno;
		unlink(tmp_path);
		tmp_untrack(tmp_path);
		return tp_diag_set(d, TP_EOUTPUT, "%s: cannot rename into place: %s", path,
		                   strerror(e));
	}
	tmp_untrack(tmp_path);
	return TP_OK;
}

int tp_afile_open(struct tp_afile *f, const char *path, struct tp_diag *d)
{
	memset(f, 0, sizeof *f);
	f->path = tp_strdup(path);
	if (!f->path)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
	f->tmp_path = tp_temp_path_for(path);
	if (!f->tmp_path) {
		int e = errno;
		tp_free(f->path);
		f->path = NULL;
		if (e == ENOMEM)
			return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
		return tp_diag_set(d, TP_EOUTPUT, "%s: cannot create: %s", path, strerror(e));
	}
	/* The temporary exists (empty, made by tp_temp_path_for), so it is opened without the
	 * O_TRUNC that fopen("wb") adds. On ext4 (auto_da_alloc, the default) a truncate to zero
	 * marks the file, and its close then allocates blocks and starts writeback of everything
	 * written, in the caller's thread: 12-16 ms at the close of a 44 MB perfetto.pftrace on
	 * the bench machine, 0.014 ms without the truncate. */
	int fd = open(f->tmp_path, O_WRONLY | O_CLOEXEC);
	f->fp = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f->fp) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		tp_afile_abort(f);
		return tp_diag_set(d, TP_EOUTPUT, "%s: cannot create: %s", path, strerror(e));
	}
	/* Large buffer: writers stream millions of small records. */
	setvbuf(f->fp, NULL, _IOFBF, 1 << 20);
	return TP_OK;
}

int tp_afile_write(struct tp_afile *f, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		size_t k = n < TP_WRITE_PIECE ? n : TP_WRITE_PIECE;
		if (fwrite(c, 1, k, f->fp) != k) {
			if (!f->err)
				f->err = errno ? errno : EIO;
			return -1;
		}
		c += k;
		n -= k;
	}
	return 0;
}

int tp_afile_commit(struct tp_afile *f, struct tp_diag *d)
{
	int st = TP_OK;
	if (!f->fp)
		return tp_diag_set(d, TP_EOUTPUT, "%s: not open", f->path ? f->path : "?");
	int bad = ferror(f->fp);
	/* The failed write's errno (recorded, or still in errno when the stream went bad
	 * earlier; fclose reports its own); the message names the final file, not the
	 * temporary. */
	int e = f->err ? f->err : errno;
	int closed = fclose(f->fp);
	if (closed != 0)
		e = errno;
	if (closed != 0 || bad) {
		f->fp = NULL;
		st = tp_diag_set(d, TP_EOUTPUT, "%s: write failed: %s", f->path,
		                 e ? strerror(e) : "I/O error");
		tp_afile_abort(f);
		return st;
	}
	f->fp = NULL;
	st = tp_rename_into_place(f->tmp_path, f->path, d);
	tp_free(f->tmp_path);
	tp_free(f->path);
	f->tmp_path = f->path = NULL;
	return st;
}

int tp_afile_fail(struct tp_afile *f, struct tp_diag *d)
{
	int e = f->err ? f->err : errno;
	return tp_diag_set(d, TP_EOUTPUT, "%s: write failed: %s", f->path ? f->path : "?",
	                   e ? strerror(e) : "I/O error");
}

void tp_afile_abort(struct tp_afile *f)
{
	if (f->fp)
		fclose(f->fp);
	if (f->tmp_path) {
		unlink(f->tmp_path);
		tmp_untrack(f->tmp_path);
	}
	tp_free(f->tmp_path);
	tp_free(f->path);
	memset(f, 0, sizeof *f);
}

int tp_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tp_mkdirs(const char *path, struct tp_diag *d)
{
	char *p = tp_strdup(path);
	if (!p)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	int st = TP_OK;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == 0) {
			char c = *s;
			*s = 0;
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				st = tp_diag_set(d, TP_EOUTPUT, "%s: cannot create directory: %s",
				                 p, strerror(errno));
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	if (st == TP_OK && !tp_is_dir(path))
		st = tp_diag_set(d, TP_EOUTPUT, "%s: exists and is not a directory", path);
	tp_free(p);
	return st;
}

char *tp_path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	while (a > 1 && dir[a - 1] == '/')
		a--;
	char *r = tp_malloc(a + b + 2);
	if (!r)
		return NULL;
	memcpy(r, dir, a);
	r[a] = '/';
	memcpy(r + a + 1, name, b + 1);
	return r;
}

int tp_write_buf_path(const char *path, const struct tp_buf *b, struct tp_diag *d)
{
	if (b->oom)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
	struct tp_afile f;
	int st = tp_afile_open(&f, path, d);
	if (st == TP_OK) {
		if (tp_afile_write(&f, b->data, b->len) != 0) {
			int e = errno;
			tp_afile_abort(&f);
			st = tp_diag_set(d, TP_EOUTPUT, "%s: write failed: %s", path, strerror(e));
		} else {
			st = tp_afile_commit(&f, d);
		}
	}
	return st;
}

int tp_write_buf_file(const char *dir, const char *name, const struct tp_buf *b, struct tp_diag *d)
{
	if (b->oom)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", name);
	char *path = tp_path_join(dir, name);
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", name);
	int st = tp_write_buf_path(path, b, d);
	tp_free(path);
	return st;
}
