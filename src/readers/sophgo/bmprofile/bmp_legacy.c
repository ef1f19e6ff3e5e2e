/*
 * bmp_legacy.c — the legacy timeline of BM1684 and BM1684X (§9.1): the dyn start offset,
 * TIU re-anchoring, and the cycle and ns fields of each core's slices.
 */
#include "common/progress.h"
#include "model/lmemrec.h"
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
/* BM1684 / BM1684X: the legacy path (§9.1).                                                */
/* ---------------------------------------------------------------------------------------- */

/* Legacy slices carry engine cycles in start_ns/end_ns; turn them into the final fields. */
static void finish_cycles(struct bmp_rd *r, int t, size_t first, size_t n, double mhz,
                          int64_t offset_ns)
{
	if (!n)
		return; /* (no slices: the array may be NULL) */
	struct tp_track *tr = &r->p->tracks[t];
	struct tp_slice *s = tr->slices + first;
	struct tp_part pt;
	tp_part_open(&pt, r->p, t, first, n, 1);
	for (size_t i = 0; i < n; i++, s++) {
		int64_t cs = s->start_ns < 0 ? 0 : s->start_ns;
		int64_t ce = tp_slice_end(tr, s) < cs ? cs : tp_slice_end(tr, s);
		bmp_set_cycles(&pt, s, cs, ce, mhz, offset_ns);
		/* The vendor's legacy cycle count ("1684x Cycle", §10.3) is end - start, not
		 * PerfAI's end - start + 1: the engine totals it sums are those of its summary. */
		uint64_t cyc = (uint64_t)(ce - cs);
		s->cycles = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
	}
}

/* start_offset (§9.1): the end of the first NODE_SET (µs since DYN record 1; its begin when
 * the record is not closed), 0 without one; *tick the DYN init record's tick (0 when the core
 * has fewer than 2 DYN records). The firmware's own first command runs from the NODE_SET's
 * begin to its end, and the net's records start after it (bm1684x_blazeface: 10.96 µs). */
static double dyn_start_us(const struct tp_file *f, const struct bmp_span *dyn, uint64_t *tick)
{
	*tick = 0;
	if (dyn->len / BMP_DYN_REC_SIZE < 2)
		return 0;
	const uint8_t *db = f->data + dyn->off;
	struct bmp_dyn_rec d0, d;
	bmp_dyn_decode(db, &d0);
	bmp_dyn_decode(db + BMP_DYN_REC_SIZE, &d);
	*tick = d0.end;
	uint64_t dbase = d.begin;
	for (size_t i = 1; i < dyn->len / BMP_DYN_REC_SIZE; i++) {
		bmp_dyn_decode(db + i * BMP_DYN_REC_SIZE, &d);
		if ((d.type & 0xFF) == 1 && d.begin >= dbase && *tick && *tick < 1000000) {
			uint64_t at = d.end != UINT64_MAX && d.end >= d.begin ? d.end : d.begin;
			return (double)(at - dbase) * (double)*tick / 1000.0;
		}
	}
	return 0;
}

/* The ids of the firmware's NODE_SET records for engine e (§4.7: gdma_id for GDMA, bd_id for
 * TIU), in record order, into *out (caller frees; NULL when none). */
static int dyn_node_ids(const struct bmp_rd *r, const struct tp_file *f, const struct bmp_span *dyn,
                        int e, uint32_t **out, size_t *n)
{
	int is_1684 = r->arch == TP_ARCH_BM1684;
	size_t nrec = dyn->len / BMP_DYN_REC_SIZE, cap = 0;
	*out = NULL;
	*n = 0;
	for (size_t i = 1; i < nrec; i++) {
		struct bmp_dyn_rec d;
		bmp_dyn_decode(f->data + dyn->off + i * BMP_DYN_REC_SIZE, &d);
		unsigned eng = is_1684 ? (unsigned)(d.id >> 48) & 15 : (unsigned)(d.id >> 40) & 7;
		if ((d.type & 0xFF) != 1 || eng != (e == BMP_ENG_TIU ? 0u : 1u))
			continue;
		uint64_t gid = is_1684 ? (d.id >> 16) & 0xFFFF : (d.id >> 20) & 0xFFFFF;
		uint64_t bid = is_1684 ? d.id & 0xFFFF : d.id & 0xFFFFF;
		uint32_t *v = tp_grow(*out, sizeof *v, *n + 1, &cap);
		if (!v) {
			tp_free(*out);
			*out = NULL;
			return TP_ENOMEM;
		}
		*out = v;
		v[(*n)++] = (uint32_t)(e == BMP_ENG_TIU ? bid : gid);
	}
	return TP_OK;
}

/* Which of a core's records s[0..n) of one engine the firmware ran outside the net's command
 * stream (out[i] = 1), matched as §8.2 does: a record runs the node whose id is its inst_id +
 * 1 (mod 2^bits). Records before the stream restarts (the second record with inst_id 0) are
 * tried against the firmware's NODE_SETs dyn[0..nd) first; the rest against the net's own
 * node lines stat[0..ns) first, then against the NODE_SETs left. A record neither matches
 * stays in the stream. Without a restart no leading record is set aside: a dump whose first
 * NODE_SET starts the net's own first command (as generated ones do) keeps it. */
static size_t mark_outside(const struct tp_slice *s, size_t n, const uint32_t *dyn, size_t nd,
                           const uint32_t *stat, size_t ns, uint32_t mask, uint8_t *out)
{
	size_t restart = 0, zeros = 0, di = 0, si = 0, marked = 0;
	for (size_t i = 0; i < n && !restart; i++)
		if (((s[i].cmd_id - 1) & mask) == 0 && zeros++ == 1)
			restart = i;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = s[i].cmd_id & mask;
		out[i] = 0;
		if (i < restart) {
			if (di < nd && (dyn[di] & mask) == id) {
				out[i] = 1;
				di++;
			}
		} else if (si < ns && (stat[si] & mask) == id) {
			si++;
		} else if (di < nd && (dyn[di] & mask) == id) {
			out[i] = 1;
			di++;
		}
		marked += out[i];
	}
	return marked;
}

/* Marks core k's records of engine e outside the net's stream (see mark_outside) into
 * *outp (caller frees; NULL when none is). */
static int find_outside(struct bmp_rd *r, const struct tp_file *f, const struct bmp_iter *it,
                        unsigned k, int e, const struct tp_slice *s, size_t n, uint8_t **outp)
{
	*outp = NULL;
	const struct bmp_nodes *nd = &r->g.nodes[k][e];
	const uint32_t *stat = e == BMP_ENG_TIU ? nd->bd_id : nd->gdma_id;
	if (!n || k >= it->n_dyn || !stat)
		return TP_OK;
	uint32_t *dyn;
	size_t ndyn;
	if (dyn_node_ids(r, f, &it->dyn[k], e, &dyn, &ndyn) != TP_OK)
		return bmp_nomem(r);
	uint8_t *out = ndyn ? tp_malloc(n) : NULL;
	if (ndyn && !out) {
		tp_free(dyn);
		return bmp_nomem(r);
	}
	unsigned bits = e == BMP_ENG_TIU ? r->chip->tiu_id_bits : r->chip->gdma_id_bits;
	uint32_t mask = (uint32_t)((1u << bits) - 1u);
	if (out && mark_outside(s, n, dyn, ndyn, stat, nd->n, mask, out))
		*outp = out;
	else
		tp_free(out);
	tp_free(dyn);
	return TP_OK;
}

/* Moves the marked slices of track t [first, first + n) to core k's outside track of engine e
 * (created on first use: an MCU-kind track named after the engine, so no engine total counts
 * them) with their times, label and arguments, without a layer; *n becomes the slices left. */
static int move_outside(struct bmp_rd *r, unsigned k, int e, int t, size_t first, size_t *n,
                        const uint8_t *mark)
{
	if (r->outside_track[k][e] < 0) {
		r->outside_track[k][e] = tp_profile_add_track(
		    r->p, r->device, (int32_t)k, TP_TRACK_MCU,
		    e == BMP_ENG_TIU ? "TIU outside the net" : "GDMA outside the net",
		    e == BMP_ENG_TIU ? r->tiu_mhz : r->gdma_mhz);
		if (r->outside_track[k][e] < 0)
			return bmp_nomem(r);
		/* Its End Cycle as on the engine track the slices come from. */
		r->p->tracks[r->outside_track[k][e]].end_cycle_exclusive = 1;
	}
	int ot = r->outside_track[k][e];
	size_t kept = 0, moved = 0;
	for (size_t i = 0; i < *n; i++) {
		struct tp_track *tr = &r->p->tracks[t];
		struct tp_slice *s = &tr->slices[first + i];
		if (!mark[i]) {
			if (tr->cost && kept != i) { /* the cost array stays in step */
				struct tp_cost kc;
				tp_track_get_cost(tr, first + i, &kc);
				if (tp_track_set_cost(r->p, t, first + kept, &kc) != TP_OK)
					return bmp_nomem(r);
				tr = &r->p->tracks[t];
				s = &tr->slices[first + i];
			}
			tp_track_move_lmem(tr, first + kept, first + i);
			tr->slices[first + kept++] = *s;
			continue;
		}
		/* A slice moved out loses its kept LOCAL memory records (its place here is reused).
		 */
		if (tr->lmem && first + i < tr->lmem_cap)
			tr->lmem[first + i] = 0;
		struct tp_slice old = *s;
		struct tp_label lb = *tp_slice_label(tr, s);
		int64_t end = tp_slice_end(tr, s);
		struct tp_slice *o = tp_track_push(r->p, ot);
		if (!o)
			return bmp_nomem(r);
		o->start_ns = old.start_ns;
		o->start_cycle_lo = old.start_cycle_lo;
		o->cycles = old.cycles;
		o->cmd_id = old.cmd_id;
		o->dep_id = old.dep_id;
		o->args = old.args;
		o->layer = -1;
		tp_slice_set_label(r->p, &r->p->tracks[ot], o, &lb);
		tp_slice_set_end(r->p, &r->p->tracks[ot], o, end);
		moved++;
	}
	r->p->tracks[t].count = first + kept;
	*n = kept;
	tp_profile_note(
	    r->p,
	    "core %u: %zu %s record%s ran outside the net's command stream (issued by "
	    "the firmware, matched to its NODE_SET records, §8.2): shown on the track "
	    "\"%s outside the net\", without a layer, and left out of the engine totals",
	    k, moved, e == BMP_ENG_TIU ? "TIU" : "GDMA", moved == 1 ? "" : "s",
	    e == BMP_ENG_TIU ? "TIU" : "GDMA");
	return TP_OK;
}

/* A GDMA cycle count in TIU cycles, rounded up: the re-anchored TIU command starts at the
 * earliest whole TIU cycle not before the GDMA command ends (the vendor keeps the fraction;
 * truncating would start it up to one TIU cycle before, as on BM1684's 550 / 575 MHz).
 * Exact in integers for whole-MHz clocks; equal clocks (BM1684X) change nothing. */
static int64_t gdma_end_in_tiu(const struct bmp_rd *r, int64_t g)
{
	double t = r->tiu_mhz, d = r->gdma_mhz;
	if (g >= 0 && g < (INT64_C(1) << 40) && t == (double)(int64_t)t &&
	    d == (double)(int64_t)d && t >= 1 && d >= 1 && t <= 1e6 && d <= 1e6) {
		uint64_t ti = (uint64_t)t, di = (uint64_t)d;
		return (int64_t)(((uint64_t)g * ti + di - 1) / di);
	}
	return (int64_t)ceil((double)g * t / d);
}

/* TIU re-anchoring of core k: the first static GDMA node with a PMU record ends where the TIU
 * node that depends on it (bd_id + 1, same gdma_id) starts. Records the firmware ran outside
 * the net's stream (gout[i], may be NULL) are no static node's. Moves ts[0..tn) so; 1 if a
 * pair was found. */
static int tiu_anchor(struct bmp_rd *r, unsigned k, struct tp_slice *ts, size_t tn,
                      const struct tp_slice *gs, size_t gn, const uint8_t *gout, uint32_t mask)
{
	const struct bmp_nodes *gnod = &r->g.nodes[k][BMP_ENG_GDMA];
	const struct bmp_nodes *tnod = &r->g.nodes[k][BMP_ENG_TIU];
	if (!gnod->gdma_id || !tnod->bd_id)
		return 0;
	for (size_t i = 0; i < gn; i++) {
		if (gout && gout[i])
			continue; /* not a node of the net */
		uint32_t gid = gs[i].cmd_id & mask;
		for (size_t a = 0; a < gnod->n; a++) {
			if (gnod->gdma_id[a] != gid)
				continue;
			uint32_t want_bd = gnod->bd_id[a] + 1, want_g = gnod->gdma_id[a];
			for (size_t b = 0; b < tnod->n; b++) {
				if (tnod->bd_id[b] != want_bd || tnod->gdma_id[b] != want_g)
					continue;
				for (size_t j = 0; j < tn; j++)
					if ((ts[j].cmd_id & mask) == (want_bd & mask)) {
						int64_t gend = gdma_end_in_tiu(
						    r, tp_slice_end(&r->p->tracks[r->gdma_track[k]],
						                    &gs[i]));
						int64_t sh = gend - ts[j].start_ns;
						for (size_t q = 0; q < tn; q++)
							ts[q].start_ns += sh;
						return 1;
					}
				break;
			}
			break;
		}
	}
	return 0;
}

/* Core k of the iteration: its records, their times (§9.1) and commands. */
static int legacy_core(struct bmp_rd *r, const char *ipath, const struct tp_file *f,
                       const struct bmp_iter *it, unsigned k, struct bmp_core_cmds *cc,
                       int64_t iter_off_ns)
{
	uint32_t mask = (uint32_t)((1u << r->chip->gdma_id_bits) - 1u);
	size_t tf = 0, gf = 0, tn = 0, gn = 0;
	int rc;
	if (k < it->n_cmd && (rc = bmp_cmds_open(r, ipath, &it->cmd[k], k, cc)) != TP_OK)
		return rc;
	if (k < it->n_bd) {
		if ((rc = bmp_read_tiu(r, f, &it->bd[k], cc, k, &tf)) != TP_OK)
			return rc;
		tn = r->p->tracks[r->tiu_track[k]].count - tf;
	}
	if (k < it->n_gdma) {
		if ((rc = bmp_read_gdma(r, f, &it->gdma[k], k, &gf)) != TP_OK)
			return rc;
		gn = r->p->tracks[r->gdma_track[k]].count - gf;
	}
	uint64_t tick = 0;
	double start_us = k < it->n_dyn ? dyn_start_us(f, &it->dyn[k], &tick) : 0;
	struct tp_slice *ts = tn ? r->p->tracks[r->tiu_track[k]].slices + tf : NULL;
	struct tp_slice *gs = gn ? r->p->tracks[r->gdma_track[k]].slices + gf : NULL;
	uint8_t *out[2] = {NULL, NULL}; /* [BMP_ENG_*]: records outside the net's stream */
	if ((rc = find_outside(r, f, it, k, BMP_ENG_TIU, ts, tn, &out[BMP_ENG_TIU])) != TP_OK ||
	    (rc = find_outside(r, f, it, k, BMP_ENG_GDMA, gs, gn, &out[BMP_ENG_GDMA])) != TP_OK)
		goto out;
	int64_t t0 = ts ? ts[0].start_ns : 0, g0 = gs ? gs[0].start_ns : 0;
	/* start_us comes from file data: a garbled DYN record must not overflow the cast
	 * (UB); offsets are clamped to 2^53 ns (~104 days), far beyond any real run. */
	int64_t toff = tp_f64_to_i64_clamp(start_us * r->tiu_mhz, 0, INT64_C(1) << 53),
	        goff = tp_f64_to_i64_clamp(start_us * r->gdma_mhz, 0, INT64_C(1) << 53);
	for (size_t i = 0; i < tn; i++) /* the ends move with the starts */
		ts[i].start_ns = ts[i].start_ns - t0 + toff;
	for (size_t i = 0; i < gn; i++)
		gs[i].start_ns = gs[i].start_ns - g0 + goff;
	if (tn && gn && !tiu_anchor(r, k, ts, tn, gs, gn, out[BMP_ENG_GDMA], mask))
		tp_profile_note(r->p,
		                "%s: core %u: cannot determine tiu start time (no GDMA/TIU "
		                "node pair with PMU records)",
		                ipath, k);
	finish_cycles(r, r->tiu_track[k], tf, tn, r->tiu_mhz, iter_off_ns);
	finish_cycles(r, r->gdma_track[k], gf, gn, r->gdma_mhz, iter_off_ns);
	/* The records stay readable (a dropped mapping faults back in): bmp_fill_cmd reads the
	 * PMU counters of the legacy printer's pmu_info from them. */
	r->pmu_rec[BMP_ENG_TIU] = tn ? f->data + it->bd[k].off : NULL;
	r->pmu_rec[BMP_ENG_GDMA] = gn ? f->data + it->gdma[k].off : NULL;
	r->pmu_nrec[BMP_ENG_TIU] = tn;
	r->pmu_nrec[BMP_ENG_GDMA] = gn;
	for (int e = 0; e < 2; e++) {
		int t = bmp_eng_track(r, k, e);
		size_t first = e == BMP_ENG_TIU ? tf : gf, n = e == BMP_ENG_TIU ? tn : gn;
		for (size_t i = 0; i < n; i++)
			bmp_fill_cmd(r, cc, e, t, first + i, k, i);
		if (out[e] && (rc = move_outside(r, k, e, t, first, &n, out[e])) != TP_OK)
			goto out;
	}
	if (k < it->n_dyn && tick &&
	    (rc = bmp_read_dyn(r, f, &it->dyn[k], k < it->n_extra ? &it->extra[k] : NULL, k, 1,
	                       iter_off_ns)) != TP_OK)
		goto out;
	rc = bmp_cmds_close(r, cc);
out:
	r->pmu_rec[0] = r->pmu_rec[1] = NULL;
	tp_free(out[0]);
	tp_free(out[1]);
	return rc;
}

int bmp_iter_legacy(struct bmp_rd *r, const char *ipath, const struct tp_file *f,
                    const struct bmp_iter *it)
{
	unsigned nc = it->n_bd > it->n_gdma ? it->n_bd : it->n_gdma;
	int rc = TP_OK;
	struct bmp_core_cmds *cc = tp_calloc(BMP_MAX_CORES, sizeof *cc);
	if (!cc)
		return bmp_nomem(r);
	if ((rc = bmp_ensure_tracks(r, nc ? nc - 1 : 0)) != TP_OK)
		goto out;
	int64_t iter_off_ns = 0;
	if (!r->have_first_begin) {
		r->first_begin_usec = it->summary.begin_usec;
		r->have_first_begin = 1;
	} else if (it->summary.begin_usec > r->first_begin_usec && it->n_dyn &&
	           it->dyn[0].len / BMP_DYN_REC_SIZE >= 2) {
		/* §9.1: the iteration's begin relative to the first one, only with >= 2 DYN
		 * records. */
		iter_off_ns = (int64_t)((it->summary.begin_usec - r->first_begin_usec) * 1000);
	}
	for (unsigned k = 0; k < nc; k++) {
		if ((rc = legacy_core(r, ipath, f, it, k, &cc[k], iter_off_ns)) != TP_OK)
			goto out;
		bmp_cmds_free(&cc[k]);
	}
out:
	for (unsigned k = 0; k < BMP_MAX_CORES; k++)
		bmp_cmds_free(&cc[k]);
	tp_free(cc);
	return rc;
}
