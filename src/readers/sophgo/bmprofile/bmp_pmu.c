/*
 * bmp_pmu.c — the MCU (DYN_DATA) records of one core onto its MCU track (§4.7), and the
 * argument sets of legacy PMU records. The TIU and GDMA records: bmp_pmublk.c.
 */
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
