/*
 * bmp_legacy.c — the legacy timeline of BM1684 and BM1684X (§9.1): the dyn start offset,
 * TIU re-anchoring, and the cycle and ns fields of each core's slices.
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
	for (size_t i = 0; i < n; i++, s++) {
		int64_t cs = s->start_ns < 0 ? 0 : s->start_ns;
		int64_t ce = tp_slice_end(tr, s) < cs ? cs : tp_slice_end(tr, s);
		bmp_set_cycles(r->p, tr, s, cs, ce, mhz, offset_ns);
	}
}

/* start_offset: the first NODE_SET's time (µs since DYN record 1), 0 without one; *tick the
 * DYN init record's tick (0 when the core has fewer than 2 DYN records). */
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
		if ((d.type & 0xFF) == 1 && d.begin >= dbase && *tick && *tick < 1000000)
			return (double)(d.begin - dbase) * (double)*tick / 1000.0;
	}
	return 0;
}

/* TIU re-anchoring of core k: the first static GDMA node with a PMU record ends where the TIU
 * node that depends on it (bd_id + 1, same gdma_id) starts. Moves ts[0..tn) so; 1 if a pair
 * was found. */
static int tiu_anchor(struct bmp_rd *r, unsigned k, struct tp_slice *ts, size_t tn,
                      const struct tp_slice *gs, size_t gn, uint32_t mask)
{
	const struct bmp_nodes *gnod = &r->g.nodes[k][BMP_ENG_GDMA];
	const struct bmp_nodes *tnod = &r->g.nodes[k][BMP_ENG_TIU];
	if (!gnod->gdma_id || !tnod->bd_id)
		return 0;
	for (size_t i = 0; i < gn; i++) {
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
						int64_t gend =
						    (int64_t)((double)tp_slice_end(
						                  &r->p->tracks[r->gdma_track[k]],
						                  &gs[i]) *
						              r->tiu_mhz / r->gdma_mhz);
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
	int64_t t0 = ts ? ts[0].start_ns : 0, g0 = gs ? gs[0].start_ns : 0;
	/* start_us comes from file data: a garbled DYN record must not overflow the cast
	 * (UB); offsets are clamped to 2^53 ns (~104 days), far beyond any real run. */
	int64_t toff = tp_f64_to_i64_clamp(start_us * r->tiu_mhz, 0, INT64_C(1) << 53),
	        goff = tp_f64_to_i64_clamp(start_us * r->gdma_mhz, 0, INT64_C(1) << 53);
	for (size_t i = 0; i < tn; i++) /* the ends move with the starts */
		ts[i].start_ns = ts[i].start_ns - t0 + toff;
	for (size_t i = 0; i < gn; i++)
		gs[i].start_ns = gs[i].start_ns - g0 + goff;
	if (tn && gn && !tiu_anchor(r, k, ts, tn, gs, gn, mask))
		tp_profile_note(r->p,
		                "%s: core %u: cannot determine tiu start time (no GDMA/TIU "
		                "node pair with PMU records)",
		                ipath, k);
	finish_cycles(r, r->tiu_track[k], tf, tn, r->tiu_mhz, iter_off_ns);
	finish_cycles(r, r->gdma_track[k], gf, gn, r->gdma_mhz, iter_off_ns);
	for (int e = 0; e < 2; e++) {
		int t = e == BMP_ENG_TIU ? r->tiu_track[k] : r->gdma_track[k];
		size_t first = e == BMP_ENG_TIU ? tf : gf, n = e == BMP_ENG_TIU ? tn : gn;
		for (size_t i = 0; i < n; i++)
			bmp_fill_cmd(r, cc, e, t, first + i, k, i);
	}
	if (k < it->n_dyn && tick &&
	    (rc = bmp_read_dyn(r, f, &it->dyn[k], k < it->n_extra ? &it->extra[k] : NULL, k, 1,
	                       iter_off_ns)) != TP_OK)
		return rc;
	return bmp_cmds_close(r, cc);
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
