/*
 * live.c — rebuilding the dump of a process that died (or still runs) from its live files:
 * session.tpc and one thread-K.tpc per thread, which the capture library keeps up to date
 * while recording (docs/capture-format.md). The rebuilt image is what the process would have
 * written, and is parsed like any dump. Owns, for one call, the loaded files and the image.
 */
#include "readers/capfile/capfile_int.h"

#include <dirent.h>
#include <stdlib.h>

static void b32(struct tp_buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	tp_buf_put(b, x, 4);
}
static void b64(struct tp_buf *b, uint64_t v)
{
	b32(b, (uint32_t)v);
	b32(b, (uint32_t)(v >> 32));
}
static void bblock(struct tp_buf *b, uint32_t type, uint64_t len)
{
	b32(b, type);
	b32(b, 0);
	b64(b, len);
}

static int name_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t lx = strlen(x), ly = strlen(y); /* thread-2 before thread-10 */
	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

/* One live thread file, checked: its published records and strings lie inside the file. */
struct live_thr {
	const uint8_t *data;
	size_t size;
	const char *path;
	uint64_t n, dropped, str_off;
	uint32_t scount, sbytes, sdropped, hw_kind, flags;
};

static int live_thread(const uint8_t *m, size_t size, const char *path, struct live_thr *lt,
                       struct tp_diag *d)
{
	lt->data = m;
	lt->size = size;
	lt->path = path;
	if (size < TP_CAPFMT_CHUNK_HEADER || memcmp(m, TP_CAPFMT_CHUNK_MAGIC, 8) != 0)
		return tp_diag_at(d, TP_EFORMAT, path, 0, "not a tpuprof live thread file");
	uint64_t cap = tp_le64(m + TP_CAPFMT_CK_OFF_REC_CAP);
	lt->str_off = tp_le64(m + TP_CAPFMT_CK_OFF_STR_OFF);
	lt->n = tp_le64(m + TP_CAPFMT_CK_OFF_PUB);
	uint64_t sp = tp_le64(m + TP_CAPFMT_CK_OFF_STR_PUB);
	lt->scount = (uint32_t)(sp >> 32);
	lt->sbytes = (uint32_t)sp;
	lt->dropped = tp_le64(m + TP_CAPFMT_CK_OFF_DROPPED);
	lt->sdropped = tp_le32(m + TP_CAPFMT_CK_OFF_STR_DROPPED);
	lt->hw_kind = tp_le32(m + TP_CAPFMT_CK_OFF_HW_KIND);
	lt->flags = tp_le32(m + TP_CAPFMT_CK_OFF_FLAGS);
	if (lt->n > cap || cap > (UINT64_MAX - TP_CAPFMT_CHUNK_HEADER) / TP_CAPFMT_RECORD_SIZE ||
	    TP_CAPFMT_CHUNK_HEADER + lt->n * TP_CAPFMT_RECORD_SIZE > size)
		return tp_diag_at(d, TP_EFORMAT, path, TP_CAPFMT_CK_OFF_PUB,
		                  "%llu published records do not fit in the file (%zu bytes)",
		                  (unsigned long long)lt->n, size);
	if (lt->str_off < TP_CAPFMT_CHUNK_HEADER + cap * TP_CAPFMT_RECORD_SIZE ||
	    lt->str_off > size || lt->sbytes > size - lt->str_off)
		return tp_diag_at(d, TP_EFORMAT, path, TP_CAPFMT_CK_OFF_STR_PUB,
		                  "string table (%u bytes at 0x%llx) lies outside the file",
		                  lt->sbytes, (unsigned long long)lt->str_off);
	return TP_OK;
}

/* Sums of the usable live thread files. */
struct live_sums {
	uint64_t total, dropped, sdropped;
};

/* Checks the thread files th[0..nth) into lt (the usable ones, *nlt of them) and sums their
 * counts. A thread file whose header was never written (the process died while the thread was
 * starting) holds nothing and is skipped (counted in li->blank); any other malformed file is
 * an error. */
static int check_threads(const struct tp_capfile_live *th, size_t nth, struct live_thr *lt,
                         size_t *nlt, struct live_sums *sum, struct live_info *li,
                         struct tp_diag *d)
{
	int rc;
	*nlt = 0;
	for (size_t k = 0; k < nth; k++) {
		struct live_thr *cur = &lt[*nlt];
		if ((rc = live_thread(th[k].data, th[k].size, th[k].path, cur, d)) != TP_OK) {
			int blank =
			    rc == TP_EFORMAT && (th[k].size < TP_CAPFMT_CHUNK_HEADER ||
			                         memcmp(th[k].data, "\0\0\0\0\0\0\0\0", 8) == 0);
			memset(cur, 0, sizeof *cur);
			if (!blank)
				return rc;
			memset(d, 0, sizeof *d);
			li->blank++;
			continue;
		}
		if (sum->total + cur->n < sum->total)
			return tp_diag_at(d, TP_EFORMAT, cur->path, TP_CAPFMT_CK_OFF_PUB,
			                  "record counts overflow");
		sum->total += cur->n;
		sum->dropped += cur->dropped;
		sum->sdropped += cur->sdropped;
		if (cur->flags & TP_CAPFMT_CKF_DISK_FULL)
			li->disk_full++;
		(*nlt)++;
	}
	return TP_OK;
}

/* Header: the session's, with the latest calibration point it holds (a made-up one, 1 tick =
 * 1 ns, when the process died before calibrating). */
static void image_header(const uint8_t *m, struct tp_buf *img, struct live_info *li)
{
	uint8_t h[TP_CAPFMT_HEADER_SIZE];
	memcpy(h, m, sizeof h);
	memset(h + TP_CAPFMT_OFF_FLAGS, 0, 4);
	if (tp_le32(h + TP_CAPFMT_OFF_CLOCK) == TP_CAPFMT_CLOCK_TSC &&
	    (tp_le64(h + TP_CAPFMT_OFF_TICK1) <= tp_le64(h + TP_CAPFMT_OFF_TICK0) ||
	     tp_le64(h + TP_CAPFMT_OFF_NS1) <= tp_le64(h + TP_CAPFMT_OFF_NS0))) {
		uint64_t t0 = tp_le64(h + TP_CAPFMT_OFF_TICK0), n0 = tp_le64(h + TP_CAPFMT_OFF_NS0);
		for (int i = 0; i < 8; i++) {
			h[TP_CAPFMT_OFF_TICK1 + i] = (uint8_t)((t0 + 1000000000u) >> (8 * i));
			h[TP_CAPFMT_OFF_NS1 + i] = (uint8_t)((n0 + 1000000000u) >> (8 * i));
		}
		li->no_calib = 1;
	}
	tp_buf_put(img, h, sizeof h);
}

/* The HWINFO, SUMMARY and META blocks, from the session file m. */
static void image_session_blocks(const uint8_t *m, struct tp_buf *img, size_t nlt,
                                 const struct live_sums *sum)
{
	uint32_t hwk = tp_le32(m + TP_CAPFMT_SES_OFF_HW),
	         hwn = tp_le32(m + TP_CAPFMT_SES_OFF_HW + 4);
	if (hwn > TP_CAPFMT_MAX_HW)
		hwn = 0;
	bblock(img, TP_CAPFMT_BLK_HWINFO, 8 + (uint64_t)hwn * TP_CAPFMT_HW_NAME_SIZE);
	b32(img, hwk);
	b32(img, hwn);
	tp_buf_put(img, m + TP_CAPFMT_SES_OFF_HW + 8, (size_t)hwn * TP_CAPFMT_HW_NAME_SIZE);
	bblock(img, TP_CAPFMT_BLK_SUMMARY, 32);
	b32(img, (uint32_t)nlt);
	b32(img, 0);
	b64(img, sum->total);
	b64(img, sum->dropped);
	b64(img, sum->sdropped);
	uint32_t nmeta = tp_le32(m + TP_CAPFMT_SES_OFF_META);
	enum { ENTRY = TP_CAPFMT_META_KEY + TP_CAPFMT_META_VALUE };
	if (nmeta > TP_CAPFMT_META_MAX)
		nmeta = 0;
	bblock(img, TP_CAPFMT_BLK_META, 8 + (uint64_t)nmeta * ENTRY);
	b32(img, nmeta);
	b32(img, 0);
	tp_buf_put(img, m + TP_CAPFMT_SES_OFF_META + 8, (size_t)nmeta * ENTRY);
}

/* A THREAD block and its RECORDS block for each usable thread file. */
static void image_threads(struct tp_buf *img, const struct live_thr *lt, size_t nlt)
{
	for (size_t k = 0; k < nlt; k++) {
		const struct live_thr *t = &lt[k];
		const uint8_t *c = t->data;
		bblock(img, TP_CAPFMT_BLK_THREAD, 56 + (uint64_t)t->sbytes);
		b64(img, tp_le64(c + TP_CAPFMT_CK_OFF_TID));
		b64(img, t->n);
		b64(img, t->dropped);
		b32(img, t->scount);
		b32(img, t->sbytes);
		b32(img, t->sdropped);
		b32(img, t->hw_kind);
		tp_buf_put(img, c + TP_CAPFMT_CK_OFF_NAME, TP_CAPFMT_COMM_SIZE);
		tp_buf_put(img, c + t->str_off, t->sbytes);
		bblock(img, TP_CAPFMT_BLK_RECORDS, t->n * TP_CAPFMT_RECORD_SIZE);
		tp_buf_put(img, c + TP_CAPFMT_CHUNK_HEADER, (size_t)(t->n * TP_CAPFMT_RECORD_SIZE));
	}
}

/* Builds, in `img`, the dump the process would have written from its live files held in
 * memory: `m` (`msize` bytes) is session.tpc, `th` the thread files in K order (see
 * check_threads for the files that are skipped). */
static int rebuild_mem(const uint8_t *m, size_t msize, const char *ses_path,
                       const struct tp_capfile_live *th, size_t nth, struct tp_buf *img,
                       struct live_info *li, struct tp_diag *d)
{
	memset(li, 0, sizeof *li);
	if (msize < TP_CAPFMT_SES_SIZE)
		return tp_diag_at(d, TP_ETRUNC, ses_path, msize,
		                  "session file of %zu bytes (expected %d)", msize,
		                  TP_CAPFMT_SES_SIZE);
	struct live_thr *lt = tp_calloc(nth ? nth : 1, sizeof *lt);
	if (lt == NULL)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", ses_path);
	size_t nlt = 0;
	struct live_sums sum = {0, 0, 0};
	int rc = check_threads(th, nth, lt, &nlt, &sum, li, d);
	if (rc != TP_OK)
		goto out;
	sum.dropped += tp_le64(m + TP_CAPFMT_SES_OFF_LOST);
	image_header(m, img, li);
	image_session_blocks(m, img, nlt, &sum);
	image_threads(img, lt, nlt);
	bblock(img, TP_CAPFMT_BLK_END, 16);
	b64(img, sum.total);
	b64(img, sum.dropped);
	li->threads = (uint32_t)nlt;
	li->records = sum.total;
	if (img->oom)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", ses_path);
out:
	tp_free(lt);
	return rc;
}

/* Loads session.tpc and the thread-K.tpc files of `dir` (in K order) and rebuilds. */
int cap_rebuild_live(const char *dir, struct tp_buf *img, struct live_info *li, struct tp_diag *d)
{
	memset(li, 0, sizeof *li);
	char *sp = tp_path_join(dir, TP_CAPFMT_SES_FILE);
	if (sp == NULL)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	struct tp_file sf;
	int rc = tp_file_load(&sf, sp, d);
	if (rc != TP_OK) {
		tp_free(sp);
		return rc;
	}
	char **names = NULL;
	size_t nn = 0, cap_n = 0, nloaded = 0;
	struct tp_file *files = NULL;
	struct tp_capfile_live *th = NULL;
	{
		DIR *dd = opendir(dir);
		if (dd == NULL) {
			rc = tp_diag_set(d, TP_EIO, "%s: cannot list the directory", dir);
			goto out;
		}
		struct dirent *e;
		while ((e = readdir(dd)) != NULL) {
			size_t l = strlen(e->d_name);
			if (strncmp(e->d_name, "thread-", 7) != 0 || l < 11 ||
			    strcmp(e->d_name + l - 4, ".tpc") != 0)
				continue;
			char **g = tp_grow(names, sizeof *names, nn + 1, &cap_n);
			char *c = g ? tp_strdup(e->d_name) : NULL;
			if (c == NULL) {
				if (g)
					names = g;
				closedir(dd);
				rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
				goto out;
			}
			names = g;
			names[nn++] = c;
		}
		closedir(dd);
	}
	if (nn > 1)
		qsort(names, nn, sizeof *names, name_cmp);
	files = tp_calloc(nn ? nn : 1, sizeof *files);
	th = tp_calloc(nn ? nn : 1, sizeof *th);
	if (files == NULL || th == NULL) {
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	for (size_t k = 0; k < nn; k++) {
		char *path = tp_path_join(dir, names[k]);
		if (path == NULL) {
			rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
			goto out;
		}
		tp_free(names[k]);
		names[k] = path; /* freed with the names */
		if ((rc = tp_file_load(&files[k], path, d)) != TP_OK)
			goto out;
		nloaded = k + 1;
		th[k].path = path;
		th[k].data = files[k].data;
		th[k].size = files[k].size;
	}
	rc = rebuild_mem(sf.data, sf.size, sp, th, nn, img, li, d);
	if (rc == TP_OK && img->oom)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
out:
	for (size_t k = 0; k < nloaded; k++)
		tp_file_release(&files[k]);
	tp_free(files);
	tp_free(th);
	tp_free_each(names, nn);
	tp_file_release(&sf);
	tp_free(sp);
	return rc;
}

int tp_capfile_rebuild_parse(const uint8_t *ses, size_t ses_size, const char *display,
                             const struct tp_capfile_live *threads, size_t n,
                             struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	struct tp_buf img;
	struct live_info li;
	tp_buf_init(&img);
	int rc = rebuild_mem(ses, ses_size, display, threads, n, &img, &li, d);
	if (rc == TP_OK && img.oom)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", display);
	if (rc == TP_OK)
		rc = cap_parse((const uint8_t *)img.data, img.len, display, &li, 0, out, d);
	tp_buf_free(&img);
	return rc;
}
