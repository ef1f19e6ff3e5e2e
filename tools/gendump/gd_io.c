/*
 * gd_io.c — the generator's output: a buffered writer per region of a file (struct gw, which
 * pwrite()s at its own running offset, so the blocks of iter0.profile are written in any
 * order at offsets fixed by the plan) with little-endian and decimal helpers, and the files
 * themselves (struct gfile), written under a temporary name and renamed into place at the end.
 */
#include "gd_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* Buffered writer for one region of one file (pwrite at a running offset).                  */
/* ---------------------------------------------------------------------------------------- */

int gw_init(struct gw *w, int fd, uint64_t off, size_t cap)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
	w->off = off;
	w->cap = cap;
	w->buf = tp_malloc(cap);
	return w->buf ? TP_OK : TP_ENOMEM;
}

static void gw_raw(struct gw *w, const uint8_t *p, size_t n)
{
	while (n > 0 && !w->err) {
		ssize_t k = pwrite(w->fd, p, n, (off_t)w->off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			w->err = errno;
			return;
		}
		p += k;
		n -= (size_t)k;
		w->off += (uint64_t)k;
	}
}

void gw_flush(struct gw *w)
{
	gw_raw(w, w->buf, w->len);
	w->len = 0;
}

void gw_free(struct gw *w)
{
	tp_free(w->buf);
	w->buf = NULL;
}

void gw_put(struct gw *w, const void *p, size_t n)
{
	w->total += n;
	if (n > w->cap - w->len) {
		gw_flush(w);
		if (n > w->cap) {
			gw_raw(w, p, n);
			return;
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

void gw_zero(struct gw *w, size_t n)
{
	static const uint8_t z[256];
	while (n > 0) {
		size_t k = n < sizeof z ? n : sizeof z;
		gw_put(w, z, k);
		n -= k;
	}
}

void gw_u32(struct gw *w, uint32_t v)
{
	uint8_t b[4];
	put_le32(b, v);
	gw_put(w, b, 4);
}

void gw_u64(struct gw *w, uint64_t v)
{
	uint8_t b[8];
	put_le64(b, v);
	gw_put(w, b, 8);
}

void gw_str(struct gw *w, const char *s)
{
	gw_put(w, s, strlen(s));
}

void gw_dec(struct gw *w, uint64_t v)
{
	char b[24];
	size_t i = sizeof b;
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	gw_put(w, b + i, sizeof b - i);
}

void gw_sdec(struct gw *w, int64_t v)
{
	if (v < 0) {
		gw_put(w, "-", 1);
		gw_dec(w, (uint64_t)0 - (uint64_t)v);
	} else {
		gw_dec(w, (uint64_t)v);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Output files: written as <name>.tmp-gendump and renamed at the end.                       */
/* ---------------------------------------------------------------------------------------- */

int gf_open(struct gfile *f, const char *dir, const char *name, struct tp_diag *d)
{
	f->fd = -1;
	f->tmp = NULL;
	f->path = tp_path_join(dir, name);
	if (!f->path)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	size_t n = strlen(f->path) + 16;
	f->tmp = tp_malloc(n);
	if (!f->tmp)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	snprintf(f->tmp, n, "%s.tmp-gendump", f->path);
	f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f->fd < 0)
		return tp_diag_set(d, TP_EOUTPUT, "%s: cannot create: %s", f->tmp, strerror(errno));
	return TP_OK;
}

int gf_commit(struct gfile *f, struct tp_diag *d)
{
	int rc = TP_OK;
	if (f->fd >= 0 && close(f->fd) != 0)
		rc = tp_diag_set(d, TP_EOUTPUT, "%s: close failed: %s", f->tmp, strerror(errno));
	f->fd = -1;
	if (rc == TP_OK && rename(f->tmp, f->path) != 0)
		rc = tp_diag_set(d, TP_EOUTPUT, "%s: cannot rename into place: %s", f->path,
		                 strerror(errno));
	return rc;
}

void gf_abort(struct gfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp)
		unlink(f->tmp);
	f->fd = -1;
}

void gf_free(struct gfile *f)
{
	tp_free(f->path);
	tp_free(f->tmp);
	f->path = f->tmp = NULL;
}
