/*
 * capfile.c — reads libtpuprof capture dumps into the profile model (contract in capfile.h):
 * the entry points, the probe, and the parse that runs the passes (clock calibration, thread
 * order, the per-thread records, async pairing) and writes the notes. It owns nothing beyond
 * one call: the file mapping and the per-thread scratch arrays are released before returning;
 * the profile goes to the caller. The format is read by blocks.c.
 */
#include "readers/capfile/capfile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int thr_cmp(const void *a, const void *b)
{
	const struct cap_thr *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Interns `len` bytes of dump text; returns the string id. Text from a dump enters the model
 * as valid UTF-8 of at most TP_CAPFMT_MAX_STR bytes: each invalid byte and each NUL becomes
 * U+FFFD and the text is cut on a character boundary (the capture library does the same when
 * recording; this protects against other writers and damage). */
uint32_t cap_clean_str(struct tp_profile *p, const char *s, size_t len)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t i = 0;
	while (i < len && i < TP_CAPFMT_MAX_STR) {
		int32_t cp;
		size_t k = tp_utf8_decode(u + i, len - i, &cp);
		if (cp <= 0 || i + k > TP_CAPFMT_MAX_STR) /* NUL or invalid */
			break;
		i += k;
	}
	if (i == len)
		return tp_profile_strn(p, s, len);
	char out[TP_CAPFMT_MAX_STR + 1];
	size_t o = 0;
	for (i = 0; i < len;) {
		int32_t cp;
		size_t k = tp_utf8_decode(u + i, len - i, &cp);
		if (cp <= 0) /* NUL or invalid: replaced */
			k = 0;
		const char *piece = k ? s + i : "\xEF\xBF\xBD";
		size_t plen = k ? k : 3;
		if (o + plen > TP_CAPFMT_MAX_STR)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
		i += k ? k : 1;
	}
	return tp_profile_strn(p, out, o);
}

const char *cap_clean_cstr(struct tp_profile *p, const char *s)
{
	return tp_str(p, cap_clean_str(p, s, strlen(s)));
}

/* ---------------------------------------------------------------------------------------- */
/* Parse                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Calibration: needed as soon as there is one timed record. Sets r->base, the absolute ns of
 * the earliest timed record. */
static int calibrate(struct cap_rd *r)
{
	int any = 0;
	int64_t lo = 0;
	for (size_t k = 0; k < r->nthr; k++) {
		for (uint64_t i = 0; i < r->thr[k].nrec; i++) {
			struct rec q;
			if (!(i % DROP_EVERY))
				drop_read(r, &r->thr[k], i);
			get_rec(&r->thr[k], i, &q);
			if (!timed(q.kind))
				continue;
			if (!any && r->clock == TP_CAPFMT_CLOCK_TSC &&
			    (r->tick1 <= r->tick0 || r->ns1 <= r->ns0))
				return tp_diag_at(
				    r->d, TP_EFORMAT, r->path, TP_CAPFMT_OFF_TICK0,
				    "clock calibration (%llu, %llu) .. (%llu, %llu) is not "
				    "increasing",
				    (unsigned long long)r->tick0, (unsigned long long)r->ns0,
				    (unsigned long long)r->tick1, (unsigned long long)r->ns1);
			int64_t ns = tick_ns(r, q.ts);
			if (!any || ns < lo)
				lo = ns;
			any = 1;
		}
		drop_read(r, &r->thr[k], r->thr[k].nrec);
	}
	r->base = lo;
	return TP_OK;
}

/* Tracks in the order threads first recorded (ties: tid), not the writer's order. */
static void order_threads(struct cap_rd *r)
{
	for (size_t k = 0; k < r->nthr; k++) {
		r->thr[k].first = UINT64_MAX;
		for (uint64_t i = 0; i < r->thr[k].nrec; i++) {
			struct rec q;
			get_rec(&r->thr[k], i, &q);
			if (timed(q.kind)) {
				r->thr[k].first = q.ts;
				break;
			}
		}
	}
	if (r->nthr > 1)
		qsort(r->thr, r->nthr, sizeof *r->thr, thr_cmp);
}

/* The records lost and skipped, as stats and notes; `li` (may be NULL): a rebuild's findings. */
static void dump_notes(struct cap_rd *r, const struct live_info *li)
{
	struct tp_profile *p = r->p;
	uint64_t read_total = 0, thr_dropped = 0;
	for (size_t k = 0; k < r->nthr; k++) {
		read_total += r->thr[k].nrec;
		thr_dropped += r->thr[k].dropped;
	}
	/* Drops of threads whose blocks were cut off (and events lost before any buffer existed)
	 * are in the SUMMARY only: count them too, so records_dropped matches the notes. */
	if (r->have_summary && r->sum_dropped > thr_dropped)
		p->stats.records_dropped += r->sum_dropped - thr_dropped;
	if (!r->complete) {
		if (r->have_summary && r->sum_records >= read_total)
			tp_profile_note(p, "dump truncated: %llu records lost",
			                (unsigned long long)(r->sum_records - read_total));
		else if (r->tick1 == 0)
			tp_profile_note(
			    p, "dump truncated: the process ended before tpuprof wrote any "
			       "records (number of records lost unknown)");
		else
			tp_profile_note(p, "dump truncated: an unknown number of records lost");
		if (r->have_summary && r->sum_records >= read_total)
			p->stats.records_dropped += r->sum_records - read_total;
	}
	if (r->have_summary && r->sum_dropped)
		tp_profile_note(p,
		                "capture dropped %llu records: a thread's buffer was full "
		                "(raise TPUPROF_RECORD_SIZE or tpuprof_enable's max_records)",
		                (unsigned long long)r->sum_dropped);
	if (r->have_summary && r->sum_str_dropped)
		tp_profile_note(p,
		                "capture could not keep %llu strings (string storage full); "
		                "their names are empty",
		                (unsigned long long)r->sum_str_dropped);
	if (r->unclosed)
		tp_profile_note(p,
		                "%llu scopes were still open when the dump was written: they end "
		                "at the dump time, are marked " TP_CAP_KEY_CUT "=1 and are left "
		                "out of latency and operator statistics",
		                (unsigned long long)r->unclosed);
	if (r->unmatched_ends)
		tp_profile_note(p, "%llu end records without a matching begin were ignored",
		                (unsigned long long)r->unmatched_ends);
	if (r->unknown_records || r->orphan_details)
		tp_profile_note(p,
		                "%llu records of unknown kinds and %llu detail records without "
		                "an operator were skipped",
		                (unsigned long long)r->unknown_records,
		                (unsigned long long)r->orphan_details);
	if (p->stats.blocks_skipped)
		tp_profile_note(p, "%llu blocks of unknown types were skipped",
		                (unsigned long long)p->stats.blocks_skipped);
	if (li) {
		tp_profile_note(
		    p,
		    "process died before the capture was finalised: %llu records of "
		    "%u threads recovered from the live files (session.tpc, thread-*.tpc)",
		    (unsigned long long)li->records, li->threads);
		if (li->disk_full)
			tp_profile_note(p,
			                "%u threads could not grow their live file (disk full): "
			                "their later records were dropped and are counted",
			                li->disk_full);
		if (li->blank)
			tp_profile_note(
			    p,
			    "%u live thread files were empty (their threads were starting "
			    "when the process died) and were skipped",
			    li->blank);
		if (li->no_calib)
			tp_profile_note(p,
			                "the process died before the clock was calibrated: times "
			                "assume 1 tick = 1 ns");
		tp_profile_set_meta(p, "capture_recovered", "1");
	}
}

int cap_parse(const uint8_t *data, size_t size, const char *display, const struct live_info *li,
              int mapped, struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	struct cap_rd r = {.path = display, .d = d, .bytes = data, .drop = mapped};
	r.p = tp_profile_new();
	if (r.p == NULL)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", display);
	struct tp_profile *p = r.p;
	p->arch = TP_ARCH_CPU;
	p->source = tp_profile_str(p, "tpuprof-capture");
	p->stats.files_read = 1;
	struct tp_cursor c;
	tp_cur_init(&c, data, size, 0);
	int rc = cap_read_header(&r, &c, size);
	if (rc == TP_OK)
		rc = cap_read_blocks(&r, &c);
	if (rc != TP_OK)
		goto out;
	p->stats.bytes_missing = r.bytes_missing;
	{
		static const char *const hw[] = {"none", "hardware", "software"};
		tp_profile_set_meta(p, "hw_counters", hw[r.hw_kind]);
	}
	if ((rc = calibrate(&r)) != TP_OK)
		goto out;
	order_threads(&r);
	for (size_t k = 0; k < r.nthr; k++)
		if ((rc = cap_read_thread(&r, &r.thr[k])) != TP_OK)
			goto out;
	{
		uint64_t end_tick = r.clock == TP_CAPFMT_CLOCK_MONOTONIC ? r.ns1 : r.tick1;
		if ((rc = cap_pair_async(&r, end_tick)) != TP_OK)
			goto out;
	}
	dump_notes(&r, li);
	rc = tp_profile_finish(p);
	if (rc != TP_OK)
		tp_diag_set(d, rc, "%s: out of memory", display);
out:
	tp_free(r.thr);
	tp_free(r.async);
	if (rc != TP_OK) {
		tp_profile_free(p);
		return rc;
	}
	*out = p;
	return TP_OK;
}

int tp_capfile_parse(const uint8_t *data, size_t size, const char *display, struct tp_profile **out,
                     struct tp_diag *d)
{
	return cap_parse(data, size, display, NULL, 0, out, d);
}

/* ---------------------------------------------------------------------------------------- */
/* Probe and read                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* The dump file of `dir` (a directory or the file itself), allocated. */
static char *dump_path(const char *dir)
{
	return tp_is_dir(dir) ? tp_path_join(dir, TP_CAPFILE_NAME) : tp_strdup(dir);
}

static int has_magic(const char *path)
{
	int ok = 0;
	/* tp_open_regular: a FIFO or device named capture.tpp must not block the probe. */
	int fd = tp_open_regular(path, NULL);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (fd >= 0 && !f)
		close(fd);
	if (f) {
		char m[TP_CAPFMT_MAGIC_SIZE];
		ok = fread(m, 1, sizeof m, f) == sizeof m &&
		     memcmp(m, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE) == 0;
		fclose(f);
	}
	return ok;
}

int tp_capfile_probe(const char *dir)
{
	char *path = dump_path(dir);
	if (path == NULL)
		return 0;
	int ok = has_magic(path);
	tp_free(path);
	if (!ok && tp_is_dir(dir)) {
		char *ses = tp_path_join(dir, TP_CAPFMT_SES_FILE);
		ok = ses && has_magic(ses);
		tp_free(ses);
	}
	return ok;
}

/* 1 if the file at `path` is a dump marked final (the session ended normally). */
static int is_final(const char *path)
{
	uint8_t h[TP_CAPFMT_HEADER_SIZE];
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return 0;
	int ok = fread(h, 1, sizeof h, f) == sizeof h &&
	         memcmp(h, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE) == 0 &&
	         (tp_le32(h + TP_CAPFMT_OFF_FLAGS) & TP_CAPFMT_HF_FINAL);
	fclose(f);
	return ok;
}

int tp_capfile_read(const char *dir, struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	char *path = dump_path(dir);
	if (path == NULL)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	int rc;
	char *ses = tp_is_dir(dir) ? tp_path_join(dir, TP_CAPFMT_SES_FILE) : NULL;
	if (ses && access(ses, F_OK) == 0 && !is_final(path)) {
		/* The process died (or still runs): its live files hold everything recorded. */
		struct tp_buf img;
		struct live_info li;
		tp_buf_init(&img);
		rc = cap_rebuild_live(dir, &img, &li, d);
		if (rc == TP_OK)
			rc = cap_parse((const uint8_t *)img.data, img.len, ses, &li, 0, out, d);
		tp_buf_free(&img);
	} else {
		struct tp_file f;
		rc = tp_file_load(&f, path, d);
		if (rc == TP_OK) {
			rc = cap_parse(f.data, f.size, path, NULL, f.mapped, out, d);
			tp_file_release(&f);
		}
	}
	tp_free(ses);
	tp_free(path);
	return rc;
}
