/*
 * chip.c — the Sophgo chip table: one row per chip the specs name, holding every constant the
 * readers, the cost model and the writers use (clocks, lanes, execution units, local memory,
 * PMU record sizes, arch ids as the runtimes write them). Adding a chip is adding a row.
 *
 * Sources (facts only, no code): specs/sophgo-bmprofile.md §2 (arch ids), §4.5/§4.6 and §11
 * (PMU record sizes), §8.1 (clocks); specs/sophgo-costmodel.md §2 (NPU_NUM, EU/CUBE bases,
 * alignment, local memory, banks, DDR/L2 peaks: tpu-mlir profile_helper/<chip>_defs.py
 * DMA_ARCH/TIU_ARCH and debugger/target_<chip>/memmap.py); specs/sophgo-cdm.md §3/§4.5 (cdm
 * arch ids, cores, CDMA ports). The reference dumps' __CHIP_ARCH_ARGS__ headers agree with
 * the BM1688, CV184X and BM1690 rows.
 */
#include "readers/sophgo/sg_chip.h"

#include <stddef.h>
#include <stdint.h>

/* The cost model's constants as tpu-mlir's <chip>_defs.py lists them: TIU_ARCH (NPU_NUM, EU and
 * CUBE bases, OHOW and vector OHOW alignment, execution units, local memory in all lanes and in
 * one, banks) and DMA_ARCH (DDR and L2 peaks in GB/s, DDR clock, bus and L2 max burst, bus
 * width). */
#define TIU_ARCH(npu, eu, cube, ohow, vohow, exec, lmem, lane, nbanks)                             \
	.npu_num = npu, .eu_base = eu, .cube_base = cube, .ohow_align = ohow,                      \
	.vector_ohow_align = vohow, .exec_units = exec, .lmem_bytes = lmem, .lane_bytes = lane,    \
	.banks = nbanks
#define DMA_ARCH(ddr_gbps, l2_gbps, ddr_clk, burst, l2_burst, bus_bits)                            \
	.ddr_max_gbps = ddr_gbps, .l2_max_gbps = l2_gbps, .ddr_mhz = ddr_clk,                      \
	.bus_max_burst = burst, .l2_max_burst = l2_burst, .bus_bandwidth = bus_bits

/* BM1684 and BM1684X write the same PMU records and descriptors' type field, and share the
 * legacy timeline (sophgo-bmprofile.md §4.5, §9.1). */
#define BM1684_PMU                                                                                 \
	.tiu_pmu_bytes = 32, .gdma_pmu_bytes = 192, .dma_cmd_type_bits = 4, .tiu_sys_bits = 128,   \
	.bmp_timeline = SG_TL_LEGACY, .tiu_id_bits = 16

/* BM1690 and its 4-core SG2260E share the core design: clocks, TIU and DMA constants. */
#define BM1690_CORE                                                                                \
	.tiu_mhz = 1000, .dma_mhz = 1000,                                                          \
	TIU_ARCH(64, 64, 64, 4, 64, 64 * 256 / 2 / 8, 16u << 20, 1u << 18, 16),                    \
	DMA_ARCH(68.264, 128, 8533, 2, 1, 128)

/* ... and write the same PMU records and descriptors' type field (AKSV's layouts are assumed
 * identical to AKS's, sophgo-cdm.md §4.5, [I]). */
#define BM1690_PMU                                                                                 \
	.tiu_pmu_bytes = 16, .gdma_pmu_bytes = 64, .cdma_pmu_bytes = 128, .dma_cmd_type_bits = 5,  \
	.tiu_sys_bits = 128

static const struct sg_chip chips[] = {
    {
        .c = {.name = "BM1684",
              .arch = TP_ARCH_BM1684,
              .cores = 1,
              .tiu_mhz = 550, /* EU unknown */
              .dma_mhz = 575,
              .npu_num = 64,
              .lane_bytes = 8 * 65536,
              .banks = 8,
              .lmem_bytes = (uint64_t)64 * 8 * 65536},
        .bmp_arch = 1,
        BM1684_PMU,
        .gdma_id_bits = 16,
        .pmu_fill = UINT32_MAX,
    },
    {
        .c = {.name = "BM1684X",
              .arch = TP_ARCH_BM1684X,
              .cores = 1,
              .tiu_mhz = 1000,
              .dma_mhz = 1000,
              .npu_num = 64,
              .eu_base = 16,
              .lane_bytes = 16 * 16384,
              .banks = 16,
              .lmem_bytes = (uint64_t)64 * 262144},
        .bmp_arch = 3,
        BM1684_PMU,
        .gdma_id_bits = 20,
        .pmu_fill = UINT32_MAX,
    },
    {
        /* "sg2260"'s little sibling: Chip Arch A2; CV186X is the same silicon. */
        .c = {.name = "BM1688",
              .arch = TP_ARCH_BM1688,
              .cores = 2,
              .tiu_mhz = 900,
              .dma_mhz = 750,
              TIU_ARCH(32, 16, 32, 4, 16, 32 * 256 / 2 / 8, 4u << 20, 1u << 17, 16),
              DMA_ARCH(32, 0, 4266, 16, 0, 64)},
        .bmp_arch = 4,
        .tiu_pmu_bytes = 32,
        .gdma_pmu_bytes = 256,
        .dma_cmd_type_bits = 4,
        .tiu_sys_bits = 128,
        .bmp_timeline = SG_TL_PERFAI,
        .tiu_id_bits = 16,
        .gdma_id_bits = 20,
        .pmu_fill = 0,
    },
    {
        /* Clocks for compute ability 0.75 (the default); 0.5 and 0.35 run TIU 500/375 MHz,
         * DMA 500 MHz (sophgo-bmprofile.md §8.1), selectable with --tiu_freq/--gdma_freq. */
        .c = {.name = "CV184X",
              .arch = TP_ARCH_CV184X,
              .cores = 1,
              .tiu_mhz = 750,
              .dma_mhz = 650,
              TIU_ARCH(8, 16, 16, 4, 8, 32 * 256 / 2 / 8, 512u << 10, 1u << 16, 16),
              DMA_ARCH(4, 0, 2133, 32, 0, 64)},
        .bmp_arch = 8,
        .tiu_pmu_bytes = 16,
        .gdma_pmu_bytes = 64,
        .dma_cmd_type_bits = 5,
        .tiu_sys_bits = 64,
        /* PMU layouts: tpu-mlir profile_helper/cv184x_defs.py (BDProfileFormat,
         * GDMAProfileFormat) @6ea894e9; the runtime pre-fills with 0 as on BM1688. */
        .bmp_timeline = SG_TL_PERFAI,
        .tiu_pmu_id_first = 1,
        .tiu_id_bits = 20,
        .gdma_id_bits = 20,
        .pmu_fill = 0,
    },
    {
        .c = {.name = "BM1690", .arch = TP_ARCH_BM1690, .cores = 8, BM1690_CORE},
        .bmp_arch = 5,
        .cdm_arch = {5, 8800},
        BM1690_PMU,
        .cdma_ports = 11,
    },
    {
        .c = {.name = "SG2260E", .arch = TP_ARCH_SG2260E, .cores = 4, BM1690_CORE},
        .bmp_arch = -1,
        .cdm_arch = {6, 140814},
        BM1690_PMU,
        .cdma_ports = 10,
        .id_wrap = 0x3FFFF,
    },
};

const struct sg_chip *sg_chip_by_arch(enum tp_arch a)
{
	for (size_t i = 0; i < sizeof chips / sizeof *chips; i++)
		if (chips[i].c.arch == a)
			return &chips[i];
	return NULL;
}

const struct tp_chip *tp_chip_by_arch(enum tp_arch a)
{
	const struct sg_chip *c = sg_chip_by_arch(a);
	return c ? &c->c : NULL;
}

const struct sg_chip *sg_chip_by_bmp_arch(int raw)
{
	for (size_t i = 0; i < sizeof chips / sizeof *chips; i++)
		if (chips[i].bmp_arch == raw && raw >= 0)
			return &chips[i];
	return NULL;
}

const struct sg_chip *sg_chip_by_cdm_arch(long raw)
{
	for (size_t i = 0; i < sizeof chips / sizeof *chips; i++)
		for (size_t k = 0; k < sizeof chips[i].cdm_arch / sizeof *chips[i].cdm_arch; k++)
			if (chips[i].cdm_arch[k] == raw && raw > 0)
				return &chips[i];
	return NULL;
}

size_t sg_chips(const struct sg_chip **out)
{
	*out = chips;
	return sizeof chips / sizeof *chips;
}
