/*
 * bmp_iter.c — the iter<N>.profile block walk and the PMU record decoders (sophgo-bmprofile.md §4).
 *
 * Container (§4.1), no magic, no file header, little-endian:
 *
 *   OFFSET  SIZE  FIELD
 *   +0      4     block type (§4.2)
 *   +4      4     payload length L
 *   +8      L     payload; the next block starts at +8+L, the file ends after the last one
 *
 * Payloads checked here:
 *   1 SUMMARY       exactly 36 bytes: i32 iteration, i32 subnet_id, i32 subnet_type,
 *                   u64 begin_usec, u64 end_usec, u64 extra
 *   8 COMMAND       36-byte header (u64 gdma_base, gdma_offset, bd_base, bd_offset,
 *                   u32 group_num) + group_num x {u32 gdma count, u32 bd count}
 *   3 MONITOR_BD    n x 32-byte TIU records (16 on CV184X)
 *   4 MONITOR_GDMA  n x 256 (BM1688) / 192 (BM1684, BM1684X) / 64 (CV184X) byte GDMA records
 *                   (record sizes come from the chip table, chip.c)
 *   5 DYN_DATA      n x 32-byte MCU records
 *   6 DYN_EXTRA     chain of {u32 profile_id, u32 type, u32 length, length bytes}
 * Rejected: a short header or payload (TP_ETRUNC), a payload that is not a whole number of
 * records or whose counts do not fit (TP_EFORMAT), more than BMP_MAX_CORES blocks of one
 * per-core type. Skipped and counted: every other block type (2, 7, 9..16 and unknown ones).
 * Accepted versions: the BM1684/BM1684X/BM1688/CV184X runtime writers of libsophon 2023–2025.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <stdio.h>
#include <string.h>

size_t bmp_gdma_rec_size(enum tp_arch arch)
{
	const struct sg_chip *c = sg_chip_by_arch(arch);
	return c && c->bmp_timeline != SG_TL_NONE ? c->gdma_pmu_bytes : 0;
}

size_t bmp_tiu_rec_size(enum tp_arch arch)
{
	const struct sg_chip *c = sg_chip_by_arch(arch);
	return c && c->bmp_timeline != SG_TL_NONE ? c->tiu_pmu_bytes : 0;
}

/* "TIU block", "block type 77", ... for messages. */
static const char *block_name(uint32_t type, char *buf, size_t n)
{
	switch (type) {
	case SG_BLK_SUMMARY:
		return "SUMMARY block";
	case SG_BLK_MONITOR_BD:
		return "TIU block";
	case SG_BLK_MONITOR_GDMA:
		return "GDMA block";
	case SG_BLK_DYN_DATA:
		return "DYN_DATA block";
	case SG_BLK_DYN_EXTRA:
		return "DYN_EXTRA block";
	case SG_BLK_COMMAND:
		return "COMMAND block";
	default:
		snprintf(buf, n, "block type %u", type);
		return buf;
	}
}

/* Adds one per-core block span; fails when there are more blocks than cores we can hold. */
static int add_span(struct bmp_span *arr, unsigned *n, uint64_t off, size_t len, uint32_t type,
                    const char *path, uint64_t hdr_off, struct tp_diag *d)
{
	if (*n >= BMP_MAX_CORES)
		return tp_diag_at(d, TP_EFORMAT, path, hdr_off,
		                  "more than %d blocks of type %u (one per core expected)",
		                  BMP_MAX_CORES, type);
	arr[*n].off = off;
	arr[*n].len = len;
	(*n)++;
	return TP_OK;
}

/* A block of whole rsize-byte records (`what` names it in the error): its span. */
static int add_records(struct bmp_span *arr, unsigned *n, uint64_t off, uint32_t blen, size_t rsize,
                       const char *what, uint32_t type, const char *path, uint64_t hdr_off,
                       struct tp_diag *d)
{
	if (blen % rsize)
		return tp_diag_at(d, TP_EFORMAT, path, hdr_off,
		                  "%s block length %u is not a multiple of the %zu-byte record",
		                  what, blen, rsize);
	return add_span(arr, n, off, blen, type, path, hdr_off, d);
}

static int walk_extra(struct tp_cursor *c, const char *path, struct bmp_iter *it, struct tp_diag *d)
{
	while (tp_cur_left(c) > 0) {
		uint64_t at = tp_cur_offset(c);
		if (tp_cur_left(c) < 12)
			return tp_diag_at(d, TP_EFORMAT, path, at,
			                  "DYN_EXTRA item header needs 12 bytes, %zu left",
			                  tp_cur_left(c));
		(void)tp_cur_u32(c);
		uint32_t type = tp_cur_u32(c);
		uint32_t n = tp_cur_u32(c);
		if (n > tp_cur_left(c))
			return tp_diag_at(d, TP_EFORMAT, path, at,
			                  "DYN_EXTRA item length %u exceeds the %zu bytes left", n,
			                  tp_cur_left(c));
		tp_cur_skip(c, n);
		it->extra_items++;
		if (type == 0)
			it->extra_strings++;
	}
	return TP_OK;
}

int bmp_walk(const uint8_t *data, size_t len, enum tp_arch arch, const char *path,
             struct bmp_iter *it, struct tp_diag *d)
{
	memset(it, 0, sizeof *it);
	size_t gsize = bmp_gdma_rec_size(arch), tsize = bmp_tiu_rec_size(arch);
	if (!gsize || !tsize)
		return tp_diag_at(d, TP_EUNSUPPORTED, path, 0, "no GDMA record layout for arch %s",
		                  tp_arch_name(arch));
	struct tp_cursor c;
	tp_cur_init(&c, data, len, 0);
	if (len == 0)
		return tp_diag_at(d, TP_EFORMAT, path, 0, "empty file (no SUMMARY block)");
	while (tp_cur_left(&c) > 0) {
		uint64_t hdr = tp_cur_offset(&c);
		if (tp_cur_left(&c) < 8)
			return tp_diag_at(d, TP_ETRUNC, path, hdr,
			                  "truncated block header: 8 bytes needed, %zu left",
			                  tp_cur_left(&c));
		uint32_t type = tp_cur_u32(&c);
		uint32_t blen = tp_cur_u32(&c);
		if (blen > tp_cur_left(&c)) {
			char nb[32];
			return tp_diag_at(d, TP_ETRUNC, path, hdr,
			                  "%s length %u exceeds the %zu bytes left",
			                  block_name(type, nb, sizeof nb), blen, tp_cur_left(&c));
		}
		struct tp_cursor b;
		tp_cur_sub(&c, blen, &b);
		uint64_t poff = b.origin;
		int rc = TP_OK;
		switch (type) {
		case SG_BLK_SUMMARY:
			if (blen != BMP_SUMMARY_SIZE)
				return tp_diag_at(d, TP_EFORMAT, path, hdr,
				                  "SUMMARY block length %u, expected %d", blen,
				                  BMP_SUMMARY_SIZE);
			if (it->have_summary)
				return tp_diag_at(d, TP_EFORMAT, path, hdr, "second SUMMARY block");
			it->have_summary = 1;
			it->summary.iteration = (int32_t)tp_cur_u32(&b);
			it->summary.subnet_id = (int32_t)tp_cur_u32(&b);
			it->summary.subnet_type = (int32_t)tp_cur_u32(&b);
			it->summary.begin_usec = tp_cur_u64(&b);
			it->summary.end_usec = tp_cur_u64(&b);
			it->summary.extra = tp_cur_u64(&b);
			break;
		case SG_BLK_COMMAND: {
			if (blen < BMP_COMMAND_HDR_SIZE)
				return tp_diag_at(
				    d, TP_EFORMAT, path, hdr,
				    "COMMAND block length %u is shorter than its %d-byte header",
				    blen, BMP_COMMAND_HDR_SIZE);
			if (it->n_cmd >= BMP_MAX_CORES)
				return tp_diag_at(d, TP_EFORMAT, path, hdr,
				                  "more than %d COMMAND blocks", BMP_MAX_CORES);
			struct bmp_command *cm = &it->cmd[it->n_cmd];
			cm->gdma_base = tp_cur_u64(&b);
			cm->gdma_offset = tp_cur_u64(&b);
			cm->bd_base = tp_cur_u64(&b);
			cm->bd_offset = tp_cur_u64(&b);
			cm->group_num = tp_cur_u32(&b);
			if (cm->group_num != tp_cur_left(&b) / 8 || tp_cur_left(&b) % 8)
				return tp_diag_at(
				    d, TP_EFORMAT, path, poff + 32,
				    "COMMAND group_num %u does not fit the %zu bytes that follow",
				    cm->group_num, tp_cur_left(&b));
			for (uint32_t g = 0; g < cm->group_num; g++) {
				cm->gdma_count += tp_cur_u32(&b);
				cm->bd_count += tp_cur_u32(&b);
			}
			it->n_cmd++;
			break;
		}
		case SG_BLK_MONITOR_BD:
			rc = add_records(it->bd, &it->n_bd, poff, blen, tsize, "TIU", type, path,
			                 hdr, d);
			break;
		case SG_BLK_MONITOR_GDMA:
			rc = add_records(it->gdma, &it->n_gdma, poff, blen, gsize, "GDMA", type,
			                 path, hdr, d);
			break;
		case SG_BLK_DYN_DATA:
			rc = add_records(it->dyn, &it->n_dyn, poff, blen, BMP_DYN_REC_SIZE,
			                 "DYN_DATA", type, path, hdr, d);
			break;
		case SG_BLK_DYN_EXTRA:
			rc = walk_extra(&b, path, it, d);
			if (rc == TP_OK)
				rc = add_span(it->extra, &it->n_extra, poff, blen, type, path, hdr,
				              d);
			break;
		default:
			it->blocks_skipped++;
			continue;
		}
		if (rc != TP_OK)
			return rc;
		it->blocks_read++;
	}
	if (!it->have_summary)
		return tp_diag_at(d, TP_EFORMAT, path, 0, "no SUMMARY block");
	return TP_OK;
}

void bmp_gdma_decode(enum tp_arch arch, const uint8_t *p, struct bmp_gdma_rec *r)
{
	r->gxact = r->lxact = 0;
	r->start = tp_le32(p);
	r->end = tp_le32(p + 4);
	if (arch == TP_ARCH_BM1688) {
		/* §4.6 BM1688 layout: d0_aw 0x0C, d0_ar 0x14, d1_aw 0x18, d1_ar 0x20, fmem_aw 0x24,
		 * fmem_ar 0x2C, fmem wr/rd stall 0x70/0x74. */
		r->inst_id = tp_le32(p + 8) & 0xFFFFFu;
		r->gmem = (uint64_t)tp_le32(p + 0x0C) + tp_le32(p + 0x18) + tp_le32(p + 0x14) +
		          tp_le32(p + 0x20);
		r->lmem = (uint64_t)tp_le32(p + 0x24) + tp_le32(p + 0x2C);
		r->bytes = r->gmem > r->lmem ? r->gmem : r->lmem;
		uint64_t st = (uint64_t)tp_le32(p + 0x70) + tp_le32(p + 0x74);
		r->stall = st > UINT32_MAX ? UINT32_MAX : (uint32_t)st;
		return;
	}
	if (arch == TP_ARCH_CV184X) {
		/* 64-byte layout (cv184x_defs.py GDMAProfileFormat): start, end, inst_id, {thread,
		 * latencies}, gif_wr_rd_stall 0x10, axi_d0_w 0x14, axi_d0_ar 0x18, axi_d0_aw 0x1C,
		 * axi_d0_wr/rd_stall 0x20/0x24, gif_mem_w 0x28, gif_mem_ar 0x2C, valid counters
		 * 0x30..0x3C. Bytes moved = gif_mem_w + axi_d0_w on both sides (costmodel §5 item
		 * 7). */
		r->inst_id = tp_le32(p + 8) & 0xFFFFFu;
		r->gmem = r->lmem = r->bytes = (uint64_t)tp_le32(p + 0x28) + tp_le32(p + 0x14);
		r->stall = tp_le32(p + 0x10);
		r->gxact = tp_le32(p + 0x30) + tp_le32(p + 0x34);
		r->lxact = tp_le32(p + 0x38) + tp_le32(p + 0x3C);
		return;
	}
	/* BM1684 / BM1684X: only bytes 0–47 are used by any converter (§4.6). inst_id is 16 bits
	 * on BM1684 and 20 bits on BM1684X; the bytes moved are d0_wr + d1_wr + gif_wr (§10.3),
	 * and a record with any of them all-ones carries no byte count. */
	r->inst_id = arch == TP_ARCH_BM1684 ? (uint32_t)p[8] | (uint32_t)p[9] << 8
	                                    : tp_le32(p + 8) & 0xFFFFFu;
	uint32_t d0_wr = tp_le32(p + 16), d1_wr = tp_le32(p + 28), gif_wr = tp_le32(p + 40);
	r->gmem = (uint64_t)tp_le32(p + 12) + tp_le32(p + 20) + tp_le32(p + 24) + tp_le32(p + 32);
	r->lmem = (uint64_t)tp_le32(p + 36) + tp_le32(p + 44);
	if (d0_wr == UINT32_MAX || d1_wr == UINT32_MAX || gif_wr == UINT32_MAX)
		r->bytes = 0;
	else
		r->bytes = (uint64_t)d0_wr + d1_wr + gif_wr;
	r->stall = 0;
}
