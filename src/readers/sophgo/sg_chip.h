/*
 * sg_chip.h — the Sophgo chip table (chip.c): one row per chip with what every Sophgo reader,
 * the descriptor decoders and the cost model need to know about it (PMU record sizes, id
 * widths, clocks, the bmprofile timeline rule), beside the model's struct tp_chip that
 * analysis and writers see (their public lookup is tp_chip_by_arch in sophgo.h). Static data:
 * nothing here allocates or owns state.
 */
#ifndef TP_SG_CHIP_H
#define TP_SG_CHIP_H

#include "readers/sophgo/sophgo.h"

/* ---------------------------------------------------------------------------------------- */
/* The chip table (chip.c): one row per chip, shared by every Sophgo reader.                 */
/* ---------------------------------------------------------------------------------------- */

struct sg_chip {
	struct tp_chip c;           /* what analysis and writers may see (tp_profile.chip = &c) */
	int bmp_arch;               /* global.profile "arch=" value of bmprofile_data, -1 none */
	long cdm_arch[2];           /* cdm_profile_data "arch=" values (old, new writers), 0 none */
	unsigned tiu_pmu_bytes;     /* TIU PMU record size */
	unsigned gdma_pmu_bytes;    /* GDMA (and SDMA) PMU record size */
	unsigned cdma_pmu_bytes;    /* CDMA PMU record size, 0 = no CDMA */
	unsigned dma_cmd_type_bits; /* DMA descriptor cmd_type width: 4 or 5 */
	unsigned tiu_sys_bits;      /* TIU SYS descriptor length in bits (CV184X: 64) */
	unsigned cdma_ports;        /* CDMA ports per device */
	uint32_t id_wrap;           /* command-id wrap value (SG2260E 0x3FFFF), 0 none */
	/* bmprofile_data reader (sophgo-bmprofile.md §4.5, §4.6, §8.1, §9, §11): */
	uint8_t bmp_timeline;     /* enum sg_timeline: how iter<N>.profile becomes a timeline */
	uint8_t tiu_pmu_id_first; /* TIU PMU record starts with inst_id (CV184X: id, conflict,
	                             start, end) instead of start, end, id */
	uint8_t tiu_id_bits;      /* TIU PMU inst_id width (16 on 32-byte records, 20 CV184X) */
	uint8_t gdma_id_bits;     /* GDMA PMU inst_id width (16 BM1684, 20 otherwise) */
	uint32_t pmu_fill;        /* start/end word of a never-written PMU record: 0 or ~0 */
};

/* Timeline reconstruction rule of a chip's bmprofile_data (sophgo-bmprofile.md §9). */
enum sg_timeline {
	SG_TL_NONE = 0,   /* bmprofile_data not read for this chip */
	SG_TL_LEGACY = 1, /* §9.1 (BM1684, BM1684X): dyn start offset, TIU re-anchoring */
	SG_TL_PERFAI = 2, /* §9.2 (BM1688/CV186X, CV184X): trimming, wait_msg alignment */
};
/* Lookups; NULL when the table has no such chip. Thread-safe (static data). */
const struct sg_chip *sg_chip_by_arch(enum tp_arch a);
const struct sg_chip *sg_chip_by_bmp_arch(int raw);
const struct sg_chip *sg_chip_by_cdm_arch(long raw);
size_t sg_chips(const struct sg_chip **out);

#endif /* TP_SG_CHIP_H */
