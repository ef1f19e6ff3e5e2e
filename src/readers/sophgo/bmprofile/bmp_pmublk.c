/*
 * bmp_pmublk.c — one engine's PMU block of a core (TIU or GDMA records, §4.5-§4.6) onto its
 * track: checked, decoded into raw slices, inst_ids unwrapped, GDMA's stale records trimmed
 * (§9.2 step 2) and the 32-bit counters unwrapped (§9). Slices leave here holding raw cycles;
 * the timeline passes (bmp_perfai.c, bmp_legacy.c) rewrite them. A block is read in one go or
 * in parts on several threads (struct bmp_pmu_blk): each part decodes its records with the
 * inst_id state of the record before it and interns through a tp_part; the ids of the wraps
 * before a part are added once every part has counted its own, so the track is the one a
 * single pass makes. Owns the GDMA PMU counters kept per slice for the argument sets.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* PMU blocks -> raw slices.                                                                */
/* ---------------------------------------------------------------------------------------- */

/* PMU blocks are read a window at a time: the window's records are checked (valid_end), then
 * decoded while they are still in the cache, so that each page is mapped and read once, and
 * the pages read are released every PMU_DROP_BYTES. */
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

/* The block's records: where the validity words are, the inst_id width. */
static size_t valid_at(const struct bmp_rd *r, int e)
{
	return e == BMP_ENG_TIU && r->chip->tiu_pmu_id_first ? 8 : 0;
}
static unsigned id_width(const struct bmp_rd *r, int e)
{
	return e == BMP_ENG_TIU ? r->chip->tiu_id_bits : r->chip->gdma_id_bits;
}
static const uint8_t *blk_base(const struct bmp_pmu_blk *b)
{
	return b->f->data + b->sp->off;
}

/* The TIU record at p, in the chip's layout. */
static void tiu_decode(const struct bmp_rd *r, const uint8_t *p, struct bmp_tiu_rec *rec)
{
	if (r->chip->tiu_pmu_id_first)
		bmp_tiu_decode_id_first(p, rec);
	else
		bmp_tiu_decode(p, rec);
}

static uint32_t tiu_id_at(const struct bmp_rd *r, const uint8_t *p)
{
	struct bmp_tiu_rec rec;
	tiu_decode(r, p, &rec);
	return rec.inst_id;
}

/* The zero inst_ids of a GDMA part, for the §9.2 trimming. */
static void zero_seen(struct bmp_pmu_part *q, size_t i)
{
	if (q->nz == 0)
		q->z0 = i;
	else if (q->nz == 1)
		q->z1 = i;
	q->zl = i;
	q->nz++;
}

/* A new slice at index k of track t: what tp_track_push gives. */
static struct tp_slice *slice_at(struct tp_track *tr, size_t k)
{
	struct tp_slice *s = &tr->slices[k];
	tp_slice_init(s);
	return s;
}

/* Records [i, j) of part q onto their slices (record i at slice first + i - d), with the
 * inst_id state u of the record before i. */
static void decode_recs(struct bmp_rd *r, struct bmp_pmu_blk *b, size_t qq, size_t i, size_t j,
                        struct bmp_unwrap *u)
{
	struct bmp_pmu_part *q = &b->part[qq];
	const uint8_t *base = blk_base(b);
	size_t rs = bmp_pmu_rec_bytes(r, b->e);
	struct tp_track *tr = &r->p->tracks[b->t];
	if (b->e == BMP_ENG_TIU) {
		for (; i < j; i++) {
			struct bmp_tiu_rec rec;
			tiu_decode(r, base + i * rs, &rec);
			uint64_t id = bmp_unwrap_next(u, rec.inst_id);
			struct tp_slice *s = slice_at(tr, b->first + i - b->d);
			s->cmd_id = (uint32_t)(id + 1);
			s->start_ns = rec.start; /* raw counter values until unwrap_times */
			tp_part_set_end(&b->pt[qq], s, rec.end);
		}
		return;
	}
	uint32_t wrap_top = (uint32_t)((1u << u->width) - 536u);
	uint64_t *const *gd = b->gd;
	for (; i < j; i++) {
		struct bmp_gdma_rec rec;
		bmp_gdma_decode(r->arch, base + i * rs, &rec);
		/* An id 0 that follows the top of the id range is a wrap of the 20-bit counter,
		 * not the stale-record marker the §9.2 trimming looks for (only matters past 1 Mi
		 * commands, which the reference cannot handle either). */
		if (rec.inst_id == 0 && !(i > 0 && u->last > wrap_top))
			zero_seen(q, i);
		uint64_t id = bmp_unwrap_next(u, rec.inst_id);
		struct tp_slice *s = slice_at(tr, b->first + i);
		s->cmd_id = (uint32_t)(id + 1);
		if (gd[0]) {
			gd[0][i] = rec.gmem;
			gd[1][i] = rec.lmem;
			if (gd[2])
				gd[2][i] = (uint64_t)rec.lxact << 32 | rec.gxact;
		}
		/* Bytes and stall in one label lookup (the slice is new: label 0, all zero). */
		struct tp_label lb = *tp_part_label_at(&b->pt[qq], s->label);
		lb.bytes = rec.bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)rec.bytes;
		lb.stall = rec.stall;
		tp_part_set_label(&b->pt[qq], s, &lb);
		s->start_ns = rec.start; /* raw counter values until unwrap_times */
		tp_part_set_end(&b->pt[qq], s, rec.end);
	}
}

/* The GDMA counters' arrays of core k in b, when kept and room for `need` records. */
static void gd_take(const struct bmp_rd *r, struct bmp_pmu_blk *b, size_t need)
{
	unsigned k = b->core;
	int kept = b->e == BMP_ENG_GDMA && r->gd_gmem[k] && need <= r->gd_cap[k];
	b->gd[0] = kept ? r->gd_gmem[k] : NULL;
	b->gd[1] = kept ? r->gd_lmem[k] : NULL;
	b->gd[2] = kept ? r->gd_xact[k] : NULL;
}

int bmp_pmu_plan(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                 struct bmp_core_cmds *cc, unsigned core, int e, size_t part, struct bmp_pmu_blk *b)
{
	memset(b, 0, sizeof *b);
	b->f = f;
	b->sp = sp;
	b->e = e;
	b->core = core;
	b->t = bmp_eng_track(r, core, e);
	size_t rs = bmp_pmu_rec_bytes(r, e);
	b->n = sp->len / rs;
	b->first = r->p->tracks[b->t].count;
	const uint8_t *base = blk_base(b);
	/* §9.2 step 4: a leading system.send_msg record is dropped. */
	if (e == BMP_ENG_TIU && r->perfai && b->n && valid_end(r, base, rs, valid_at(r, e), 0, 1)) {
		struct bmp_cmd c;
		if (cc->have[BMP_ENG_TIU] &&
		    bmp_cmdbuf_get(&cc->cb[BMP_ENG_TIU], tiu_id_at(r, base) + 1, &c) &&
		    c.op == 15 && c.sub == 8)
			b->d = 1;
	}
	size_t np = tp_split_count(b->n, part);
	/* Split, the slices are reserved for every record at once. */
	if (b->n > PMU_RESERVE_ALL / sizeof(struct tp_slice))
		np = 1;
	b->part = tp_calloc(np, sizeof *b->part);
	b->pt = tp_calloc(np, sizeof *b->pt);
	if (!b->part || !b->pt)
		return bmp_nomem(r);
	b->nparts = np;
	for (size_t q = 0; q < np; q++) {
		struct bmp_pmu_part *pq = &b->part[q];
		tp_split_at(b->n, np, q, &pq->a, &pq->b);
		size_t lo = pq->a > b->d ? pq->a : b->d;
		size_t hi = pq->b > lo ? pq->b : lo;
		tp_part_open(&b->pt[q], r->p, b->t, b->first + lo - b->d, hi - lo, np == 1);
	}
	if (bmp_pmu_direct(b))
		return TP_OK;
	if (tp_track_reserve(r->p, b->t, b->n - b->d) != TP_OK)
		return bmp_nomem(r);
	if (e == BMP_ENG_GDMA && r->detail && r->dec && gd_room(r, core, b->n, b->n) != TP_OK)
		return TP_ENOMEM;
	gd_take(r, b, b->n);
	return TP_OK;
}

int bmp_pmu_part(struct bmp_rd *r, struct bmp_pmu_blk *b, size_t qi)
{
	struct bmp_pmu_part *q = &b->part[qi];
	const uint8_t *base = blk_base(b);
	size_t rs = bmp_pmu_rec_bytes(r, b->e), at = valid_at(r, b->e), win = pmu_window(rs);
	size_t from = q->a > b->d ? q->a : b->d;
	struct bmp_unwrap u = {.width = id_width(r, b->e)};
	/* The state after the record before `from`: only its inst_id counts (the first record
	 * starts from 0, which is never past the top of the range). */
	if (from > 0) {
		const uint8_t *p = base + (from - 1) * rs;
		if (b->e == BMP_ENG_TIU) {
			u.last = tiu_id_at(r, p);
		} else {
			struct bmp_gdma_rec rec;
			bmp_gdma_decode(r->arch, p, &rec);
			u.last = rec.inst_id;
		}
	}
	struct tp_track *tr = &r->p->tracks[b->t];
	q->vend = q->b;
	size_t w0 = q->a; /* the first byte not yet counted, as a record index */
	for (size_t w = q->a; w < q->b; w += win) {
		size_t we = q->b - w < win ? q->b : w + win;
		size_t j = valid_end(r, base, rs, at, w, we);
		size_t lo = w > from ? w : from;
		if (bmp_pmu_direct(b) && j > lo) {
			if (pmu_room(r, b->t, j - lo, b->n - lo) != TP_OK)
				return TP_ENOMEM;
			if (b->e == BMP_ENG_GDMA && r->detail && r->dec &&
			    gd_room(r, b->core, j, b->n) != TP_OK)
				return TP_ENOMEM;
			gd_take(r, b, j);
			tr = &r->p->tracks[b->t];
			tr->count = b->first + j - b->d;
		}
		if (j > lo)
			decode_recs(r, b, qi, lo, j, &u);
		/* What was read goes back every PMU_DROP_BYTES, or every window when the block is
		 * read in parts (many in flight), and counts for the progress line. */
		if ((j - w0) * rs >= (bmp_pmu_direct(b) ? PMU_DROP_BYTES : 1)) {
			tp_file_drop(b->f, b->sp->off + w0 * rs, b->sp->off + j * rs);
			bmp_iter_progress(r, (j - w0) * rs);
			q->counted += (j - w0) * rs;
			w0 = j;
		}
		if (j < we) {
			q->vend = j;
			break;
		}
	}
	q->wraps = u.wraps;
	return TP_OK;
}

int bmp_pmu_settle(struct bmp_rd *r, struct bmp_pmu_blk *b)
{
	b->nv = b->n;
	b->live = b->nparts;
	for (size_t q = 0; q < b->nparts; q++)
		if (b->part[q].vend < b->part[q].b) {
			b->nv = b->part[q].vend;
			b->live = q + 1;
			break;
		}
	/* Parts past the first invalid record read nothing that stays. */
	for (size_t q = b->live; q < b->nparts; q++)
		tp_part_free(&b->pt[q]);
	/* The last live part's slices end at the first invalid record. */
	struct bmp_pmu_part *last = &b->part[b->live - 1];
	size_t lo = last->a > b->d ? last->a : b->d;
	b->pt[b->live - 1].n = last->vend > lo ? last->vend - lo : 0;
	b->wraps = 0;
	for (size_t q = 0; q < b->live; q++) {
		b->part[q].delta = b->wraps << id_width(r, b->e);
		b->wraps += b->part[q].wraps;
	}
	if (bmp_pmu_direct(b))
		return TP_OK;
	struct tp_track *tr = &r->p->tracks[b->t];
	tr->count = b->first + (b->nv > b->d ? b->nv - b->d : 0);
	if (tp_parts_merge(b->pt, b->live) != TP_OK)
		return bmp_nomem(r);
	return TP_OK;
}

void bmp_pmu_commit(struct bmp_pmu_blk *b, size_t q)
{
	if (q >= b->live)
		return;
	struct tp_part *pt = &b->pt[q];
	tp_part_commit(pt);
	uint32_t delta = (uint32_t)b->part[q].delta; /* cmd_id is the low 32 bits */
	if (!delta || !pt->n)
		return; /* (an empty track may have no slice array) */
	struct tp_slice *s = pt->p->tracks[pt->track].slices + pt->first;
	for (size_t i = 0; i < pt->n; i++)
		s[i].cmd_id += delta;
}

void bmp_pmu_free(struct bmp_pmu_blk *b)
{
	for (size_t q = 0; b->pt && q < b->nparts; q++)
		tp_part_free(&b->pt[q]);
	TP_FREE_ALL(b->part, b->pt);
	*b = (struct bmp_pmu_blk){0};
}

/* GDMA's §9.2 step 2: the stale records around the zero inst_ids trimmed off the block's
 * slices (and its kept counters). */
static void gdma_trim(struct bmp_rd *r, struct bmp_pmu_blk *b)
{
	size_t nz = 0, z0 = 0, z1 = 0, zl = 0;
	for (size_t q = 0; q < b->live; q++) {
		const struct bmp_pmu_part *pq = &b->part[q];
		if (!pq->nz)
			continue;
		if (nz == 0) {
			z0 = pq->z0;
			if (pq->nz > 1)
				z1 = pq->z1;
		} else if (nz == 1) {
			z1 = pq->z0;
		}
		zl = pq->zl;
		nz += pq->nz;
	}
	size_t lo, hi;
	bmp_trim_range(b->nv, nz, z0, z1, zl, &lo, &hi);
	unsigned core = b->core;
	struct tp_track *tr = &r->p->tracks[b->t];
	if (lo > 0 && hi > lo) {
		memmove(tr->slices + b->first, tr->slices + b->first + lo,
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
	tr->count = b->first + (hi - lo);
	BMP_RSTATS(r)->records_dropped += b->nv - (hi - lo);
}

void bmp_pmu_finish(struct bmp_rd *r, struct bmp_pmu_blk *b, size_t *first)
{
	size_t counted = 0;
	for (size_t q = 0; q < b->nparts; q++)
		counted += b->part[q].counted;
	*first = b->first;
	tp_track_fit(r->p, b->t);
	BMP_RSTATS(r)->records_read += b->n;
	BMP_RSTATS(r)->records_dropped += b->n - b->nv + b->d;
	bmp_iter_progress(r, b->sp->len - counted);
	tp_file_drop(b->f, b->sp->off, b->sp->off + b->sp->len);
	if (b->e == BMP_ENG_TIU) {
		unwrap_times(r, b->t, b->first, r->tiu_mhz, b->core, "TIU");
		if (b->wraps)
			bmp_note(r, "core %u TIU inst_id wrapped %llu times (%u-bit counter)",
			         b->core, (unsigned long long)b->wraps, id_width(r, b->e));
	} else {
		if (r->perfai)
			gdma_trim(r, b);
		unwrap_times(r, b->t, b->first, r->gdma_mhz, b->core, "GDMA");
	}
	bmp_pmu_free(b);
}

int bmp_pmu_run(struct bmp_rd *r, struct bmp_pmu_blk *b, size_t *first)
{
	int rc = TP_OK;
	for (size_t q = 0; q < b->nparts && rc == TP_OK; q++)
		rc = bmp_pmu_part(r, b, q);
	if (rc == TP_OK)
		rc = bmp_pmu_settle(r, b);
	if (rc != TP_OK) {
		bmp_pmu_free(b);
		return rc;
	}
	for (size_t q = 0; q < b->nparts; q++)
		bmp_pmu_commit(b, q);
	bmp_pmu_finish(r, b, first);
	return TP_OK;
}

/* The block in one go: one direct part on this thread. */
static int read_block(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                      struct bmp_core_cmds *cc, unsigned core, int e, size_t *first)
{
	struct bmp_pmu_blk b;
	int rc = bmp_pmu_plan(r, f, sp, cc, core, e, SIZE_MAX, &b);
	if (rc != TP_OK) {
		bmp_pmu_free(&b);
		return rc;
	}
	return bmp_pmu_run(r, &b, first);
}

int bmp_read_tiu(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                 struct bmp_core_cmds *cc, unsigned core, size_t *first)
{
	return read_block(r, f, sp, cc, core, BMP_ENG_TIU, first);
}

int bmp_read_gdma(struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *sp,
                  unsigned core, size_t *first)
{
	return read_block(r, f, sp, NULL, core, BMP_ENG_GDMA, first);
}
