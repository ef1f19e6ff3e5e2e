/*
 * blocks.c — pass 1 of the capture reader: the dump's header (the profile's device and run
 * metadata) and its blocks (hardware counter names, summary, metadata, and each thread's
 * string table and records, located but not yet read). Owns nothing: the threads found go to
 * the reader's struct cap_rd.
 *
 * Format (docs/capture-format.md has the full OFFSET / SIZE / FIELD tables; the numbers are
 * in src/capture/capfmt.h, shared with the writer):
 *   OFFSET SIZE FIELD
 *   0      8    magic "TPUPCAP\0"
 *   8      4    version (this reader accepts 1)
 *   12     4    header size (>= 128; bytes past 128 are skipped)
 *   16     4    endianness mark 0x01020304 as written (little-endian only)
 *   20     4    record size (32)
 *   24..127     pid, device, session, mode, clock, record limit, calibration, comm, flushes
 *   128    ...  blocks: u32 type, u32 flags, u64 length, payload
 * Accepted: HWINFO, SUMMARY, THREAD (+ its RECORDS), END. Unknown block types are skipped by
 * length and counted; unknown record kinds are skipped and counted (a note says so).
 * Rejected (TP_EFORMAT / TP_EUNSUPPORTED): bad magic, other versions, big-endian dumps,
 * other record sizes, unknown clocks, string tables that do not match their counts, RECORDS
 * without a THREAD, string ids out of range.
 * Truncation (no END block, or a block longer than the bytes left) is not an error: what is
 * there is read, and the SUMMARY block written before the thread data says how many records
 * are missing ("dump truncated: N records lost").
 */
#include "readers/capfile/capfile_int.h"

#include <stdio.h>

int cap_read_header(struct cap_rd *r, struct tp_cursor *c, size_t size)
{
	if (size < TP_CAPFMT_MAGIC_SIZE ||
	    memcmp(c->base, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE) != 0)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, 0,
		                  "not a tpuprof capture (bad magic)");
	if (size < TP_CAPFMT_HEADER_SIZE)
		return tp_diag_at(r->d, TP_ETRUNC, r->path, size,
		                  "header truncated: %zu of %d bytes present", size,
		                  TP_CAPFMT_HEADER_SIZE);
	tp_cur_skip(c, TP_CAPFMT_MAGIC_SIZE);
	uint32_t version = tp_cur_u32(c);
	uint32_t hsize = tp_cur_u32(c);
	uint32_t endian = tp_cur_u32(c);
	uint32_t recsize = tp_cur_u32(c);
	if (version != TP_CAPFMT_VERSION)
		return tp_diag_at(r->d, TP_EUNSUPPORTED, r->path, TP_CAPFMT_OFF_VERSION,
		                  "capture format version %u (this tpuprof reads %d)", version,
		                  TP_CAPFMT_VERSION);
	if (hsize < TP_CAPFMT_HEADER_SIZE || hsize > size)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, TP_CAPFMT_OFF_HEADER_SIZE,
		                  "header size %u is outside [%d, %zu]", hsize,
		                  TP_CAPFMT_HEADER_SIZE, size);
	if (endian != TP_CAPFMT_ENDIAN_MARK)
		return tp_diag_at(r->d, TP_EUNSUPPORTED, r->path, TP_CAPFMT_OFF_ENDIAN,
		                  endian == 0x04030201u ? "big-endian dumps are not supported"
		                                        : "bad endianness mark 0x%08x",
		                  endian);
	if (recsize != TP_CAPFMT_RECORD_SIZE)
		return tp_diag_at(r->d, TP_EUNSUPPORTED, r->path, TP_CAPFMT_OFF_RECORD_SIZE,
		                  "record size %u (this tpuprof reads %d)", recsize,
		                  TP_CAPFMT_RECORD_SIZE);
	uint32_t pid = tp_cur_u32(c);
	uint32_t device = tp_cur_u32(c);
	uint32_t session = tp_cur_u32(c);
	uint32_t mode = tp_cur_u32(c);
	uint32_t clock = tp_cur_u32(c);
	uint32_t limit = tp_cur_u32(c);
	r->tick0 = tp_cur_u64(c);
	r->ns0 = tp_cur_u64(c);
	r->tick1 = tp_cur_u64(c);
	r->ns1 = tp_cur_u64(c);
	char comm[TP_CAPFMT_COMM_SIZE + 1];
	const uint8_t *cm = tp_cur_bytes(c, TP_CAPFMT_COMM_SIZE);
	memcpy(comm, cm, TP_CAPFMT_COMM_SIZE);
	comm[TP_CAPFMT_COMM_SIZE] = 0;
	uint32_t flushes = tp_cur_u32(c);
	if (mode > 2)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, TP_CAPFMT_OFF_MODE,
		                  "capture mode %u is not 0, 1 or 2", mode);
	if (clock != TP_CAPFMT_CLOCK_MONOTONIC && clock != TP_CAPFMT_CLOCK_TSC)
		return tp_diag_at(r->d, TP_EUNSUPPORTED, r->path, TP_CAPFMT_OFF_CLOCK,
		                  "unknown clock kind %u", clock);
	r->mode = (int)mode;
	r->clock = (int)clock;
	tp_cur_init(c, c->base, size, 0);
	tp_cur_skip(c, hsize);

	struct tp_profile *p = r->p;
	char buf[96];
	if (comm[0])
		snprintf(buf, sizeof buf, "%s (pid %u)", cap_clean_cstr(p, comm), pid);
	else
		snprintf(buf, sizeof buf, "process %u", pid);
	if (tp_profile_add_device(p, buf, (int32_t)pid, 0) < 0)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	static const char *const modes[] = {"0 (timing)", "1 (condensed)", "2 (detailed)"};
	tp_profile_set_meta(p, "capture_mode", modes[mode]);
	snprintf(buf, sizeof buf, "%u", device);
	tp_profile_set_meta(p, "capture_device", buf);
	snprintf(buf, sizeof buf, "%u", session);
	tp_profile_set_meta(p, "capture_session", buf);
	tp_profile_set_meta(p, "capture_clock", clock == TP_CAPFMT_CLOCK_TSC ? "tsc" : "monotonic");
	snprintf(buf, sizeof buf, "%u", limit);
	tp_profile_set_meta(p, "capture_record_limit", buf);
	if (comm[0])
		tp_profile_set_meta(p, "process", cap_clean_cstr(p, comm));
	(void)flushes;
	return TP_OK;
}

static int block_hwinfo(struct cap_rd *r, struct tp_cursor *b, uint64_t off)
{
	uint32_t kind = tp_cur_u32(b), n = tp_cur_u32(b);
	if (b->bad || kind > TP_CAPFMT_HW_SOFTWARE || n > TP_CAPFMT_MAX_HW ||
	    (uint64_t)n * TP_CAPFMT_HW_NAME_SIZE > tp_cur_left(b))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off,
		                  "bad HWINFO block (kind %u, %u names)", kind, n);
	r->hw_kind = kind;
	r->hw_n = n;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *s = tp_cur_bytes(b, TP_CAPFMT_HW_NAME_SIZE);
		memcpy(r->hw_names[i], s, TP_CAPFMT_HW_NAME_SIZE);
		r->hw_names[i][TP_CAPFMT_HW_NAME_SIZE] = 0;
	}
	return TP_OK;
}

/* META: run metadata from tpuprof_meta, stored as profile metadata (later entries for the
 * same key win, as in the writer). */
static int block_meta(struct cap_rd *r, struct tp_cursor *b, uint64_t off)
{
	enum { ENTRY = TP_CAPFMT_META_KEY + TP_CAPFMT_META_VALUE };
	uint32_t n = tp_cur_u32(b);
	tp_cur_u32(b);
	if (b->bad || n > TP_CAPFMT_META_MAX || (uint64_t)n * ENTRY > tp_cur_left(b))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off, "bad META block (%u entries)", n);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = tp_cur_bytes(b, ENTRY);
		char key[TP_CAPFMT_META_KEY + 1], val[TP_CAPFMT_META_VALUE + 1];
		memcpy(key, e, TP_CAPFMT_META_KEY);
		key[TP_CAPFMT_META_KEY] = 0;
		memcpy(val, e + TP_CAPFMT_META_KEY, TP_CAPFMT_META_VALUE);
		val[TP_CAPFMT_META_VALUE] = 0;
		if (!key[0])
			return tp_diag_at(r->d, TP_EFORMAT, r->path,
			                  off + 16 + 8 + (uint64_t)i * ENTRY,
			                  "META entry %u has an empty key", i);
		if (tp_profile_set_meta(r->p, cap_clean_cstr(r->p, key),
		                        cap_clean_cstr(r->p, val)) != TP_OK)
			return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	}
	return TP_OK;
}

static int block_summary(struct cap_rd *r, struct tp_cursor *b, uint64_t off)
{
	if (tp_cur_left(b) < 32)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off,
		                  "SUMMARY block shorter than 32 bytes");
	tp_cur_u32(b);
	tp_cur_u32(b);
	r->sum_records = tp_cur_u64(b);
	r->sum_dropped = tp_cur_u64(b);
	r->sum_str_dropped = tp_cur_u64(b);
	r->have_summary = 1;
	return TP_OK;
}

static int block_thread(struct cap_rd *r, struct tp_cursor *b, uint64_t off)
{
	if (tp_cur_left(b) < 56)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off,
		                  "THREAD block shorter than 56 bytes");
	struct cap_thr t;
	memset(&t, 0, sizeof t);
	t.off = off;
	t.tid = (int64_t)tp_cur_u64(b);
	t.declared = tp_cur_u64(b);
	t.dropped = tp_cur_u64(b);
	t.nstr = tp_cur_u32(b);
	t.sbytes = tp_cur_u32(b);
	t.str_dropped = tp_cur_u32(b);
	t.hw_kind = tp_cur_u32(b);
	memcpy(t.name, tp_cur_bytes(b, TP_CAPFMT_COMM_SIZE), TP_CAPFMT_COMM_SIZE);
	t.name[TP_CAPFMT_COMM_SIZE] = 0;
	if (t.sbytes != tp_cur_left(b))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off + TP_CAPFMT_BLOCK_HEADER_SIZE + 28,
		                  "thread %lld: string table of %u bytes but %zu bytes follow",
		                  (long long)t.tid, t.sbytes, tp_cur_left(b));
	if (t.nstr > t.sbytes)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off + TP_CAPFMT_BLOCK_HEADER_SIZE + 24,
		                  "thread %lld: %u strings cannot fit in %u bytes",
		                  (long long)t.tid, t.nstr, t.sbytes);
	t.strs_off = tp_cur_offset(b);
	t.strs = tp_cur_bytes(b, t.sbytes);
	if (t.sbytes == 0)
		t.strs = NULL;
	struct cap_thr *nt = tp_grow(r->thr, sizeof *r->thr, r->nthr + 1, &r->cap_thr);
	if (nt == NULL)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	r->thr = nt;
	r->thr[r->nthr++] = t;
	return TP_OK;
}

/* `avail` bytes of the block are present out of `len` declared (truncated when less). */
static int block_records(struct cap_rd *r, struct tp_cursor *b, uint64_t off, uint64_t len,
                         uint64_t avail)
{
	struct cap_thr *t = r->nthr ? &r->thr[r->nthr - 1] : NULL;
	if (t == NULL || t->have_recs)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off,
		                  "RECORDS block without its THREAD block");
	if (len % TP_CAPFMT_RECORD_SIZE != 0 || len / TP_CAPFMT_RECORD_SIZE != t->declared)
		return tp_diag_at(
		    r->d, TP_EFORMAT, r->path, off + 8,
		    "RECORDS block of %llu bytes does not hold the %llu records of thread %lld",
		    (unsigned long long)len, (unsigned long long)t->declared, (long long)t->tid);
	t->have_recs = 1;
	t->nrec = avail / TP_CAPFMT_RECORD_SIZE;
	t->recs_off = tp_cur_offset(b);
	t->recs = t->nrec ? tp_cur_bytes(b, (size_t)(t->nrec * TP_CAPFMT_RECORD_SIZE)) : NULL;
	return TP_OK;
}

/* The readers of the whole blocks by type (RECORDS, which may come cut, and END aside). */
typedef int block_fn(struct cap_rd *r, struct tp_cursor *b, uint64_t off);
static block_fn *const block_fns[] = {[TP_CAPFMT_BLK_HWINFO] = block_hwinfo,
                                      [TP_CAPFMT_BLK_SUMMARY] = block_summary,
                                      [TP_CAPFMT_BLK_THREAD] = block_thread,
                                      [TP_CAPFMT_BLK_META] = block_meta};

int cap_read_blocks(struct cap_rd *r, struct tp_cursor *c)
{
	while (tp_cur_left(c) > 0) {
		uint64_t off = tp_cur_offset(c);
		if (tp_cur_left(c) < TP_CAPFMT_BLOCK_HEADER_SIZE) {
			r->bytes_missing += TP_CAPFMT_BLOCK_HEADER_SIZE - tp_cur_left(c);
			return TP_OK; /* truncated inside a block header */
		}
		uint32_t type = tp_cur_u32(c);
		tp_cur_u32(c); /* flags: none defined */
		uint64_t len = tp_cur_u64(c);
		size_t left = tp_cur_left(c);
		struct tp_cursor b;
		if (len > left) {
			r->bytes_missing += len - left;
			/* Only a cut RECORDS block still yields data: its whole records. */
			if (type == TP_CAPFMT_BLK_RECORDS) {
				tp_cur_sub(c, left, &b);
				return block_records(r, &b, off, len, left);
			}
			return TP_OK;
		}
		tp_cur_sub(c, (size_t)len, &b);
		if (type == TP_CAPFMT_BLK_END) {
			r->p->stats.blocks_read++;
			r->complete = 1;
			return TP_OK;
		}
		block_fn *fn = type < sizeof block_fns / sizeof *block_fns ? block_fns[type] : NULL;
		if (!fn && type != TP_CAPFMT_BLK_RECORDS) {
			r->p->stats.blocks_skipped++;
			continue;
		}
		r->p->stats.blocks_read++;
		int rc = fn ? fn(r, &b, off) : block_records(r, &b, off, len, len);
		if (rc != TP_OK)
			return rc;
	}
	return TP_OK;
}
