/*
 * file.c — input files (mapped read-only) and atomic output files: written under a temporary
 * name next to the target and renamed into place only when complete.
 */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int tp_file_load(struct tp_file *f, const char *path, struct tp_diag *d)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return tp_diag_set(d, errno == ENOENT ? TP_ENOTFOUND : TP_EIO, "%s: %s", path,
		                   strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tp_diag_set(d, TP_EIO, "%s: not a regular file", path);
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

void tp_file_release(struct tp_file *f)
{
	if (f->mapped)
		munmap((void *)f->data, f->size);
	memset(f, 0, sizeof *f);
}

char *tp_temp_path_for(const char *path)
{
	size_t n = strlen(path);
	char *t = tp_malloc(n + 16);
	if (!t) {
		errno = ENOMEM; /* callers tell "out of memory" from "cannot create" by errno */
		return NULL;
	}
	memcpy(t, path, n);
	memcpy(t + n, ".tmp-XXXXXX", 12);
	int fd = mkstemp(t);
	if (fd < 0) {
		tp_free(t);
		return NULL;
	}
	/* mkstemp creates 0600; outputs get the usual 0666 & ~umask like any created file. */
	mode_t um = umask(0);
	umask(um);
	fchmod(fd, 0666 & ~um);
	close(fd);
	return t;
}

int tp_rename_into_place(const char *tmp_path, const char *path, struct tp_diag *d)
{
	if (rename(tmp_path, path) != 0) {
		int e = errno;
		unlink(tmp_path);
		return tp_diag_set(d, TP_EOUTPUT, "%s: cannot rename into place: %s", path, strerror(e));
	}
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
	f->fp = fopen(f->tmp_path, "wb");
	if (!f->fp) {
		int e = errno;
		tp_afile_abort(f);
		return tp_diag_set(d, TP_EOUTPUT, "%s: cannot create: %s", path, strerror(e));
	}
	/* Large buffer: writers stream millions of small records. */
	setvbuf(f->fp, NULL, _IOFBF, 1 << 20);
	return TP_OK;
}

int tp_afile_commit(struct tp_afile *f, struct tp_diag *d)
{
	int st = TP_OK;
	if (!f->fp)
		return tp_diag_set(d, TP_EOUTPUT, "%s: not open", f->path ? f->path : "?");
	int bad = ferror(f->fp);
	if (fclose(f->fp) != 0 || bad) {
		f->fp = NULL;
		st = tp_diag_set(d, TP_EOUTPUT, "%s: write failed: %s", f->path, strerror(errno));
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

void tp_afile_abort(struct tp_afile *f)
{
	if (f->fp)
		fclose(f->fp);
	if (f->tmp_path)
		unlink(f->tmp_path);
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
				st = tp_diag_set(d, TP_EOUTPUT, "%s: cannot create directory: %s", p,
				                 strerror(errno));
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

int tp_write_buf_file(const char *dir, const char *name, const struct tp_buf *b,
                      struct tp_diag *d)
{
	if (b->oom)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", name);
	char *path = tp_path_join(dir, name);
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", name);
	struct tp_afile f;
	int st = tp_afile_open(&f, path, d);
	if (st == TP_OK) {
		if (b->len && fwrite(b->data, 1, b->len, f.fp) != b->len) {
			tp_afile_abort(&f);
			st = tp_diag_set(d, TP_EOUTPUT, "%s: write failed", path);
		} else {
			st = tp_afile_commit(&f, d);
		}
	}
	tp_free(path);
	return st;
}
