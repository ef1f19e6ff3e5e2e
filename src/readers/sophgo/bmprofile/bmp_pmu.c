/*
 * bmp_pmu.c — PMU blocks into raw slices: the TIU, GDMA and MCU (DYN_DATA) records of one core
 * read a window at a time, checked, decoded onto the core's tracks, their 32-bit counters and
 * inst_ids unwrapped (§4.5-§4.7, §9). Slices leave here holding raw cycles; the timeline
 * passes (bmp_perfai.c, bmp_legacy.c) rewrite them. Owns the GDMA PMU counters kept per slice
 * for the argument sets.
 */
#include "common/progress.h"
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------------------------------- */
/* PMU blocks -> raw slices.                                                                */
/* ---------------------------------------------------------------------------------------- */

/* PMU blocks are read a window at a time: the window's records are checked (valid_end), then
 * decoded while they are still in the cache, and the pages read are released every
 * PMU_DROP_BYTES. (Checking the whole block first and decoding it afterwards read every page
 * twice and, since the check released what it read, mapped it twice.) */
#define PMU_WINDOW_BYTES ((size_t)256 << 10)
#define PMU_DROP_BYTES ((size_t)2 << 20)

/* Records per window for records of `rec` bytes (at least 1). */
static size_t pmu_window(size_t rec)
{
	return rec < PMU_WINDOW_BYTES ? PMU_WINDOW_BYTES / rec : 1;
}

/* The first record in [from, to) that is not valid, or `to`: BM1688/CV184X pre-fill with 0,
 * the legacy arches with 0xFF (§4.5; chip->pmu_fill), and the runtime writes only the valid
 * prefix, so the block's records end at the first one whose start or end word is the fill.
 * `at` is the byte offset of the start word (the end word follows it). */
static size_t valid_end(const struct bmp_rd *r, const uint8_t *base, size_t rec, size_t at,
                        size_t from, size_t to)
{
	uint32_t bad = r->chip->pmu_fill;
	for (size_t i = from; i < to; i++) {
		const uint8_t *q = base + i * rec + at;
		if (tp_le32(q) == bad || tp_le32(q + 4) == bad)
			return i;
	}
	return to;
}

/* Room on track t for `more` slices of a PMU block that has `left` records from here on
 * (valid or not). The whole rest of the block when that is under PMU_RESERVE_ALL bytes of
 * slices, so the array is allocated once; past that by
 * doubling what the track holds, so a block of many GB whose records end early does not
 * reserve (even address space only) for its fill. The reader calls tp_track_fit once the
 * block is read. TP_OK / TP_ENOMEM (reported). */
#define PMU_RESERVE_ALL ((size_t)1 << 30)

static int pmu_room(struct bmp_rd *r, int t, size_t more, size_t left)
{
	const struct tp_track *tr = &r->p->tracks[t];
	if (tr->cap - tr->count >= more)
		return TP_OK;
	size_t want = left;
	if (left > PMU_RESERVE_ALL / sizeof(struct tp_slice)) {
		want = tr->count > more ? tr->count : more;
		if (want > left)
			want = left;
		if (want < more)
			want = more;
	}
	return tp_track_reserve(r->p, t, want) == TP_OK ? TP_OK : bmp_nomem(r);
}

/* One window of PMU block sp read (records [0, upto) of `rec` bytes so far): once
 * PMU_DROP_BYTES more have been read, releases their pages and counts them as read (progress
 * line). *dropped: bytes released. */
static void pmu_window_done(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                            size_t rec, size_t upto, size_t *dropped)
{
	size_t b = upto * rec;
	if (b > *dropped && b - *dropped >= PMU_DROP_BYTES) {
		tp_file_drop(f, sp->off, sp->off + b);
		bmp_iter_progress(r, b - *dropped);
		*dropped = b;
	}
}

/* PMU block sp of n records read onto track t: gives back the room reserved past its slices,
 * counts the n records read and `lost` of them dropped, and the rest of the block's bytes as
 * read (`dropped` of them were counted window by window). */
static void pmu_block_done(struct bmp_rd *r, int t, const struct bmp_span *sp, size_t n,
                           uint64_t lost, size_t dropped)
{
	tp_track_fit(r->p, t);
	BMP_RSTATS(r)->records_read += n;
	BMP_RSTATS(r)->records_dropped += lost;
	bmp_iter_progress(r, sp->len - dropped);
}

/* Turns the raw 32-bit counter values left in start_ns/end_ns of slices [first, count) into
 * 64-bit values. BM1688 (§9.2) then converts them to ns (int(cycles / MHz * 1000)); the legacy
 * path keeps cycles. Wraps: the legacy rule (§9.1) assumes one whenever start or end
 * decreases; the PerfAI path has no wrap handling in the reference, so we only assume one
 * when a counter drops by more than 2^31 (a real wrap; never the case in the reference's
 * data), which keeps long dumps monotonic without changing short ones. A record whose end
 * wrapped and start did not ends 2^32 later on both paths (the legacy rule would count a wrap
 * there and move every later record, and this one's start, 2^32 cycles on). Runs after the GDMA
 * trimming so stale records cannot fake a wrap. */
static void unwrap_times(struct bmp_rd *r, int t, size_t first, double mhz, unsigned core,
                         const char *eng)
{
	struct tp_track *tr = &r->p->tracks[t];
	uint64_t hi = 0, wraps = 0;
	uint32_t ls = 0, le = 0;
	int a2 = r->perfai;
	for (size_t i = first; i < tr->count; i++) {
		struct tp_slice *s = &tr->slices[i];
		uint32_t st = (uint32_t)s->start_ns, en = (uint32_t)tp_slice_end(tr, s);
		/* the end wrapped, the start did not (legacy: that is this record's own, not a
		 * wrap of the records after it) */
		int end_wrapped = en < st && st - en > 0x80000000u;
		if (i > first) {
			int wrapped = a2 ? (st < ls && ls - st > 0x80000000u)
			                 : (st < ls || (en < le && !end_wrapped));
			if (wrapped) {
				hi += UINT64_C(1) << 32;
				wraps++;
			}
		}
		ls = st;
		le = en;
		uint64_t s64 = hi + st, e64 = hi + en;
		if (end_wrapped)
			e64 += UINT64_C(1) << 32;
		if (a2) {
			s->start_ns = tp_cycles_to_ns(s64, mhz);
			tp_slice_set_end(r->p, tr, s, tp_cycles_to_ns(e64, mhz));
		} else {
			s->start_ns = (int64_t)s64;
			tp_slice_set_end(r->p, tr, s, (int64_t)e64);
		}
	}
	if (wraps)
		bmp_note(r,
		         "core %u %s: the 32-bit cycle counter wrapped %llu time(s); "
		         "unwrapped",
		         core, eng, (unsigned long long)wraps);
}

/* Decodes the TIU records of one core into raw slices (start_ns/end_ns = raw cycles as ns
 * per §9.2 step 3 on BM1688, raw 64-bit-unwrapped cycles on legacy arches). Returns the index
 * of the first new slice in *first. */
int bmp_read_tiu(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                 struct bmp_core_cmds *cc, unsigned core, size_t *first)
{
	int t = r->tiu_track[core];
	const uint8_t *base = f->data + sp->off;
	const size_t rs = r->chip->tiu_pmu_bytes;
	const int id_first = r->chip->tiu_pmu_id_first;
	size_t n = sp->len / rs, nv = n, win = pmu_window(rs), dropped = 0;
	*first = r->p->tracks[t].count;
	struct bmp_unwrap u = {.width = r->chip->tiu_id_bits};
	uint64_t dropped_recs = 0;
	for (size_t w = 0; w < nv; w += win) {
		size_t we = n - w < win ? n : w + win;
		size_t j = valid_end(r, base, rs, id_first ? 8 : 0, w, we);
		if (j < we)
			nv = j; /* the last window */
		if (pmu_room(r, t, j - w, n - w) != TP_OK)
			return TP_ENOMEM;
		size_t i = w;
		if (w == 0 && r->perfai && j > 0) {
			/* §9.2 step 4: a leading system.send_msg record is dropped. */
			struct bmp_tiu_rec rec;
			struct bmp_cmd c;
			if (id_first)
				bmp_tiu_decode_id_first(base, &rec);
			else
				bmp_tiu_decode(base, &rec);
			if (cc->have[BMP_ENG_TIU] &&
			    bmp_cmdbuf_get(&cc->cb[BMP_ENG_TIU], rec.inst_id + 1, &c) &&
			    c.op == 15 && c.sub == 8) {
				bmp_unwrap_next(&u, rec.inst_id);
				i = 1;
				dropped_recs++;
			}
		}
		for (; i < j; i++) {
			struct bmp_tiu_rec rec;
			if (id_first)
				bmp_tiu_decode_id_first(base + i * rs, &rec);
			else
				bmp_tiu_decode(base + i * rs, &rec);
			uint64_t id = bmp_unwrap_next(&u, rec.inst_id);
			struct tp_slice *s = tp_track_push(r->p, t);
			struct tp_track *tr = &r->p->tracks[t];
			s->cmd_id = (uint32_t)(id + 1);
			s->start_ns = rec.start; /* raw counter values until unwrap_times */
			tp_slice_set_end(r->p, tr, s, rec.end);
		}
		pmu_window_done(r, f, sp, rs, j, &dropped);
	}
	pmu_block_done(r, t, sp, n, n - nv + dropped_recs, dropped);
	unwrap_times(r, t, *first, r->tiu_mhz, core, "TIU");
	if (u.wraps)
		bmp_note(r, "core %u TIU inst_id wrapped %llu times (%u-bit counter)", core,
		         (unsigned long long)u.wraps, u.width);
	tp_file_drop(f, sp->off, sp->off + sp->len);
	return TP_OK;
}

/* Grows core k's GDMA PMU counters (detail only) to hold at least `need` records of a block
 * of `n`, by doubling (never past n). TP_OK / TP_ENOMEM (reported). */
static int gd_room(struct bmp_rd *r, unsigned k, size_t need, size_t n)
{
	if (need <= r->gd_cap[k])
		return TP_OK;
	size_t want = r->gd_cap[k] * 2;
	if (want > n)
		want = n;
	if (want < need)
		want = need;
	int counted_xact = r->arch == TP_ARCH_CV184X;
	uint64_t *g = tp_realloc(r->gd_gmem[k], want * sizeof *g);
	if (g)
		r->gd_gmem[k] = g;
	uint64_t *l = g ? tp_realloc(r->gd_lmem[k], want * sizeof *l) : NULL;
	if (l)
		r->gd_lmem[k] = l;
	uint64_t *x = l && counted_xact ? tp_realloc(r->gd_xact[k], want * sizeof *x) : NULL;
	if (x)
		r->gd_xact[k] = x;
	if (!g || !l || (counted_xact && !x))
		return bmp_nomem(r);
	r->gd_cap[k] = want;
	return TP_OK;
}

int bmp_read_gdma(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                  unsigned core, size_t *first)
{
	int t = r->gdma_track[core];
	size_t rs = r->chip->gdma_pmu_bytes;
	const uint8_t *base = f->data + sp->off;
	size_t n = sp->len / rs, nv = n, win = pmu_window(rs), dropped = 0;
	*first = r->p->tracks[t].count;
	unsigned width = r->chip->gdma_id_bits;
	struct bmp_unwrap u = {.width = width};
	size_t nz = 0, z0 = 0, z1 = 0, zl = 0;
	uint32_t wrap_top = (uint32_t)((1u << width) - 536u);
	for (size_t w = 0; w < nv; w += win) {
		size_t we = n - w < win ? n : w + win;
		size_t j = valid_end(r, base, rs, 0, w, we);
		if (j < we)
			nv = j; /* the last window */
		if (pmu_room(r, t, j - w, n - w) != TP_OK)
			return TP_ENOMEM;
		if (r->detail && r->dec && gd_room(r, core, j, n) != TP_OK)
			return TP_ENOMEM;
		for (size_t i = w; i < j; i++) {
			struct bmp_gdma_rec rec;
			bmp_gdma_decode(r->arch, base + i * rs, &rec);
			/* An id 0 that follows the top of the id range is a wrap of the 20-bit
			 * counter, not the stale-record marker the §9.2 trimming looks for (only
			 * matters past 1 Mi commands, which the reference cannot handle either). */
			if (rec.inst_id == 0 && !(i > 0 && u.last > wrap_top)) {
				if (nz == 0)
					z0 = i;
				else if (nz == 1)
					z1 = i;
				zl = i;
				nz++;
			}
			uint64_t id = bmp_unwrap_next(&u, rec.inst_id);
			struct tp_slice *s = tp_track_push(r->p, t);
			struct tp_track *tr = &r->p->tracks[t];
			s->cmd_id = (uint32_t)(id + 1);
			if (r->gd_gmem[core] && i < r->gd_cap[core]) {
				r->gd_gmem[core][i] = rec.gmem;
				r->gd_lmem[core][i] = rec.lmem;
				if (r->gd_xact[core])
					r->gd_xact[core][i] = (uint64_t)rec.lxact << 32 | rec.gxact;
			}
			/* Bytes and stall in one label lookup (the slice is new: label 0, all
			 * zero). */
			struct tp_label lb = *tp_slice_label(tr, s);
			lb.bytes = rec.bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)rec.bytes;
			lb.stall = rec.stall;
			tp_slice_set_label(r->p, tr, s, &lb);
			s->start_ns = rec.start; /* raw counter values until unwrap_times */
			tp_slice_set_end(r->p, tr, s, rec.end);
		}
		pmu_window_done(r, f, sp, rs, j, &dropped);
	}
	pmu_block_done(r, t, sp, n, n - nv, dropped);
	tp_file_drop(f, sp->off, sp->off + sp->len);
	if (r->perfai) {
		size_t lo, hi;
		bmp_trim_range(nv, nz, z0, z1, zl, &lo, &hi);
		struct tp_track *tr = &r->p->tracks[t];
		if (lo > 0 && hi > lo) {
			memmove(tr->slices + *first, tr->slices + *first + lo,
			        (hi - lo) * sizeof *tr->slices);
			if (r->gd_gmem[core] && hi <= r->gd_cap[core]) {
				memmove(r->gd_gmem[core], r->gd_gmem[core] + lo,
				        (hi - lo) * sizeof(uint64_t));
				memmove(r->gd_lmem[core], r->gd_lmem[core] + lo,
				        (hi - lo) * sizeof(uint64_t));
				if (r->gd_xact[core])
					memmove(r->gd_xact[core], r->gd_xact[core] + lo,
					        (hi - lo) * sizeof(uint64_t));
			}
		}
		tr->count = *first + (hi - lo);
		BMP_RSTATS(r)->records_dropped += nv - (hi - lo);
	}
	unwrap_times(r, t, *first, r->gdma_mhz, core, "GDMA");
	return TP_OK;
}

/* MCU (DYN_DATA) records of one core -> slices on an MCU track. `shift_ns` maps the MCU
 * timer's ns (since its base) onto the profile's axis. */
/* The name and type of MCU record d (is_1684: BM1684's engine-id layout). */
static void dyn_label(const struct bmp_dyn_rec *d, int is_1684, char *nm, size_t nn, char *tyn,
                      size_t tn)
{
	unsigned ty = d->type & 0xFF;
	unsigned eng = is_1684 ? (unsigned)(d->id >> 48) & 15 : (unsigned)(d->id >> 40) & 7;
	static const char *const engs[8] = {"BD", "GDMA", "GDE", "SORT", "NMS", "CDMA", "6", "7"};
	static const char *const engs1684[4] = {"BD", "GDMA", "CDMA", "GDE"};
	switch (ty) {
	case 0:
		snprintf(nm, nn, "func");
		snprintf(tyn, tn, "FUNC");
		break;
	case 1:
		snprintf(nm, nn, "set_%s",
		         is_1684 ? (eng < 4 ? engs1684[eng] : "UNKNOWN") : engs[eng]);
		snprintf(tyn, tn, "NODE_SET");
		break;
	case 2:
		snprintf(nm, nn, "wait");
		snprintf(tyn, tn, "NODE_WAIT");
		break;
	default:
		snprintf(nm, nn, "dyn_type_%u", ty);
		snprintf(tyn, tn, "DYN_%u", ty);
		break;
	}
}

/* The arguments of MCU record d: ids, and the DYN_EXTRA STRING items with its profile_id
 * (items come in profile_id order; ex advances past them). */
static void dyn_args(struct bmp_rd *r, const struct bmp_dyn_rec *d, int is_1684,
                     struct tp_cursor *ex)
{
	unsigned ty = d->type & 0xFF;
	uint64_t gid = is_1684 ? (d->id >> 16) & 0xFFFF : (d->id >> 20) & 0xFFFFF;
	uint64_t bid = is_1684 ? d->id & 0xFFFF : d->id & 0xFFFFF;
	tp_args_add_uint(r->p, bmp_key_names[BMP_K_PID], d->profile_id);
	if (ty == 1 || ty == 2) {
		tp_args_add_uint(r->p, bmp_key_names[BMP_K_GDMA_ID], gid);
		tp_args_add_uint(r->p, bmp_key_names[BMP_K_BD_ID], bid);
	} else {
		tp_args_add_uint(r->p, bmp_key_names[BMP_K_RAW_ID], d->id);
	}
	while (tp_cur_left(ex) >= 12) {
		size_t save = ex->pos;
		uint32_t pid = tp_cur_u32(ex), et = tp_cur_u32(ex), ln = tp_cur_u32(ex);
		if (pid > d->profile_id || ln > tp_cur_left(ex)) {
			ex->pos = save;
			break;
		}
		const uint8_t *txt = tp_cur_bytes(ex, ln);
		if (pid == d->profile_id && et == 0 && txt) {
			char buf[256];
			size_t m = ln < sizeof buf - 1 ? ln : sizeof buf - 1;
			memcpy(buf, txt, m);
			buf[m] = 0;
			tp_args_add_str(r->p, bmp_key_names[BMP_K_EXTRA], buf);
		}
	}
}

/* Times of MCU record d on track t: ticks since tbase, shifted; a record that starts before
 * the timeline's zero is pinned to 0 (*early counts them). */
static void dyn_times(struct bmp_rd *r, int t, struct tp_slice *s, const struct bmp_dyn_rec *d,
                      uint64_t tbase, uint64_t tick, int64_t shift_ns, uint64_t *early)
{
	s->start_ns = (int64_t)((d->begin - tbase) * tick) + shift_ns;
	if (d->end == 0 || d->end == UINT64_MAX || d->end < d->begin ||
	    (d->end - tbase) > (uint64_t)INT64_MAX / tick)
		tp_slice_set_end(r->p, &r->p->tracks[t], s, s->start_ns);
	else
		tp_slice_set_end(r->p, &r->p->tracks[t], s,
		                 (int64_t)((d->end - tbase) * tick) + shift_ns);
	if (s->start_ns < 0) {
		/* The firmware starts work before the first PMU record (the timeline's zero); such
		 * records are pinned to 0 so the axis stays non-negative. */
		int64_t e = tp_slice_end(&r->p->tracks[t], s);
		s->start_ns = 0;
		tp_slice_set_end(r->p, &r->p->tracks[t], s, e < 0 ? 0 : e);
		(*early)++;
	}
}

int bmp_read_dyn(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                 const struct bmp_span *extra, unsigned core, int legacy_base, int64_t shift_ns)
{
	const uint8_t *base = f->data + sp->off;
	size_t n = sp->len / BMP_DYN_REC_SIZE;
	if (n < 2)
		return TP_OK;
	struct bmp_dyn_rec r0, r1;
	bmp_dyn_decode(base, &r0);
	bmp_dyn_decode(base + BMP_DYN_REC_SIZE, &r1);
	r->p->stats.records_read += n;
	if (r0.type != UINT32_MAX || r0.end == 0 || r0.end > 1000000) {
		tp_profile_note(r->p, "core %u DYN_DATA has no timer record; MCU records skipped",
		                core);
		r->p->stats.records_dropped += n;
		return TP_OK;
	}
	uint64_t tick = r0.end;
	uint64_t tbase = legacy_base ? r1.begin : r0.begin;
	if (r->mcu_track[core] < 0) {
		r->mcu_track[core] = tp_profile_add_track(
		    r->p, r->device, (int32_t)core, TP_TRACK_MCU, NULL, 1000.0 / (double)tick);
		if (r->mcu_track[core] < 0)
			return bmp_nomem(r);
	}
	int t = r->mcu_track[core];
	if (tp_track_reserve(r->p, t, n - 1) != TP_OK)
		return bmp_nomem(r);
	struct tp_cursor ex;
	tp_cur_init(&ex, extra ? f->data + extra->off : (const uint8_t *)"", extra ? extra->len : 0,
	            extra ? extra->off : 0);
	int is_1684 = r->arch == TP_ARCH_BM1684;
	uint64_t early = 0;
	for (size_t i = 1; i < n; i++) {
		struct bmp_dyn_rec d;
		bmp_dyn_decode(base + i * BMP_DYN_REC_SIZE, &d);
		if (d.begin < tbase || (d.begin - tbase) > (uint64_t)INT64_MAX / tick) {
			r->p->stats.records_dropped++;
			continue;
		}
		struct tp_slice *s = tp_track_push(r->p, t);
		if (!s)
			return bmp_nomem(r);
		dyn_times(r, t, s, &d, tbase, tick, shift_ns, &early);
		s->cmd_id = d.profile_id;
		char nm[48], tyn[32];
		dyn_label(&d, is_1684, nm, sizeof nm, tyn, sizeof tyn);
		struct tp_label l = *tp_slice_label(&r->p->tracks[t], s);
		l.name = tp_profile_str(r->p, nm);
		l.type = tp_profile_str(r->p, tyn);
		l.kind = TP_CMD_NORMAL;
		tp_slice_set_label(r->p, &r->p->tracks[t], s, &l);
		if (!r->detail)
			continue;
		tp_args_begin(r->p);
		dyn_args(r, &d, is_1684, &ex);
		s = &r->p->tracks[t].slices[r->p->tracks[t].count - 1];
		s->args = tp_args_end(r->p);
	}
	if (early)
		tp_profile_note(r->p,
		                "core %u: %llu MCU records began before the first PMU record; "
		                "their start is shown at 0",
		                core, (unsigned long long)early);
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* BM1684X PMU records as counters (the legacy printer's pmu_info).                         */
/* ---------------------------------------------------------------------------------------- */

/* The 192-byte GDMA record's words by tpu-mlir's BM1684X names (§4.6: its def, with the
 * vendor's "12sram" spelling of two of them), u32 at 4·index; index 2 is inst_id (bits 0-19)
 * and reserved (20-31). Checked on every record of the real BM1684X dump against the vendor's
 * instruction.csv. 0-1 (the times) are added by the caller. */
static const char *const gdma_words[48] = {
    NULL,
    NULL,
    NULL,
    "d0_aw_bytes",
    "d0_wr_bytes",
    "d0_ar_bytes",
    "d1_aw_bytes",
    "d1_wr_bytes",
    "d1_ar_bytes",
    "gif_aw_bytes",
    "gif_wr_bytes",
    "gif_ar_bytes",
    "gif_12sram_aw_bytes",
    "gif_l2sram_w_bytes",
    "gif_l2sram_ar_bytes",
    "reserved1",
    "axi_d0_wr_valid_bytes",
    "axi_d0_rd_valid_bytes",
    "axi_d1_wr_valid_bytes",
    "axi_d1_rd_valid_bytes",
    "gif_fmem_wr_valid_bytes",
    "gif_fmem_rd_valid_bytes",
    "gif_l2sram_wr_valid_bytes",
    "gif_l2sram_rd_valid_bytes",
    "axi_d0_wr_stall_bytes",
    "axi_d0_rd_stall_bytes",
    "axi_d1_wr_stall_bytes",
    "axi_d1_rd_stall_bytes",
    "gif_fmem_wr_stall_bytes",
    "gif_fmem_rd_stall_bytes",
    "gif_l2sram_wr_stall_bytes",
    "gif_12sram_rd_stall_bytes",
    "axi_d0_aw_end",
    "axi_d0_aw_st",
    "axi_d0_ar_end",
    "axi_d0_ar_st",
    "axi_d0_wr_end",
    "axi_d0_wr_st",
    "axi_d0_rd_end",
    "axi_d0_rd_st",
    "axi_d1_aw_end",
    "axi_d1_aw_st",
    "axi_d1_ar_end",
    "axi_d1_ar_st",
    "axi_d1_wr_end",
    "axi_d1_wr_st",
    "axi_d1_rd_end",
    "axi_d1_rd_st",
};

void bmp_legacy_pmu_args(struct tp_profile *p, int engine, const uint8_t *rec)
{
	char key[48];
	tp_args_add_uint(p, BMP_PMU_PREFIX "raw_inst_start_time", tp_le32(rec));
	tp_args_add_uint(p, BMP_PMU_PREFIX "raw_inst_end_time", tp_le32(rec + 4));
	if (engine == BMP_ENG_TIU) { /* §4.5, 32 bytes */
		uint64_t w = tp_le64(rec + 8);
		tp_args_add_uint(p, BMP_PMU_PREFIX "inst_id", w & 0xFFFF);
		tp_args_add_uint(p, BMP_PMU_PREFIX "computation_load", w >> 16);
		tp_args_add_uint(p, BMP_PMU_PREFIX "num_read", tp_le32(rec + 16));
		tp_args_add_uint(p, BMP_PMU_PREFIX "num_read_stall", tp_le32(rec + 20));
		tp_args_add_uint(p, BMP_PMU_PREFIX "num_write", tp_le32(rec + 24));
		tp_args_add_uint(p, BMP_PMU_PREFIX "reserved", tp_le32(rec + 28));
		return;
	}
	uint32_t w = tp_le32(rec + 8);
	tp_args_add_uint(p, BMP_PMU_PREFIX "inst_id", w & 0xFFFFF);
	tp_args_add_uint(p, BMP_PMU_PREFIX "reserved", w >> 20);
	for (unsigned i = 3; i < 48; i++) {
		snprintf(key, sizeof key, BMP_PMU_PREFIX "%s", gdma_words[i]);
		tp_args_add_uint(p, key, tp_le32(rec + 4 * i));
	}
}
