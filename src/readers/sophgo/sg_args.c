/*
 * sg_args.c — argument-set pieces both Sophgo readers write in the vendor's spelling: the DMA
 * PMU figures the vendor's printers add after a command's decoded fields (costmodel §5 steps
 * 6-9). One table of key names; the two printers (PerfAI for bmprofile_data, the BM1690
 * printer for cdm_profile_data) list the same keys in different orders, so each has an order.
 * Owns nothing.
 */
#include "readers/sophgo/sg_int.h"

enum fig {
	F_STALL,
	F_GXFER,
	F_GBW,
	F_GSIZE,
	F_GXACT,
	F_LXFER,
	F_LBW,
	F_LSIZE,
	F_LXACT,
	F_SIZE,
	F_DDR_BW,
	F_L2M_BW,
	F_L2M_ZERO, /* PerfAI prints the L2M bandwidth as an integer 0 */
	F_GBL_SUM,
	F_GBL_AVG,
	F_LBL_SUM,
	F_LBL_AVG,
	F_LMSK,
	F_GMSK,
	F_LN32,
	F_GN32,
	F_NFIGS
};

static const char *const key[F_NFIGS] = {
    [F_STALL] = "Stall Cycle",
    [F_GXFER] = "gmem_xfer_bytes(B)",
    [F_GBW] = "gmem_bandwidth",
    [F_GSIZE] = "gmem_dma_data_size(B)",
    [F_GXACT] = "gmem_xact_cnt",
    [F_LXFER] = "lmem_xfer_bytes",
    [F_LBW] = "lmem_bandwidth",
    [F_LSIZE] = "lmem_dma_data_size(B)",
    [F_LXACT] = "lmem_xact_cnt",
    [F_SIZE] = "DMA data size(B)",
    [F_DDR_BW] = "DDR Bandwidth(GB/s)",
    [F_L2M_BW] = "L2M Bandwidth(GB/s)",
    [F_L2M_ZERO] = "L2M Bandwidth(GB/s)",
    [F_GBL_SUM] = "gmem_bl_sum",
    [F_GBL_AVG] = "gmem_avg_burst_length",
    [F_LBL_SUM] = "lmem_bl_sum",
    [F_LBL_AVG] = "lmem_avg_burst_length",
    [F_LMSK] = "lmem_msk_wr_cnt",
    [F_GMSK] = "gmem_msk_wr_cnt",
    [F_LN32] = "lmem_n32Ba_sa_cnt",
    [F_GN32] = "gmem_n32Ba_sa_cnt",
};

static const uint8_t order_perfai[] = {F_STALL,    F_GXFER,   F_GBW,     F_GSIZE,   F_GXACT,
                                       F_LXFER,    F_LBW,     F_LSIZE,   F_LXACT,   F_SIZE,
                                       F_DDR_BW,   F_GBL_SUM, F_GBL_AVG, F_LBL_SUM, F_LBL_AVG,
                                       F_L2M_ZERO, F_LMSK,    F_GMSK,    F_LN32,    F_GN32};
static const uint8_t order_bm1690[] = {F_STALL,   F_GXFER,  F_GBW,     F_GSIZE,   F_LXFER,
                                       F_LBW,     F_LSIZE,  F_SIZE,    F_LXACT,   F_GXACT,
                                       F_DDR_BW,  F_L2M_BW, F_GBL_SUM, F_GBL_AVG, F_LBL_SUM,
                                       F_LBL_AVG, F_LMSK,   F_GMSK,    F_LN32,    F_GN32};

/* The figures that are reals; the others are unsigned. */
static const uint8_t is_real[F_NFIGS] = {[F_GBW] = 1, [F_LBW] = 1, [F_DDR_BW] = 1, [F_L2M_BW] = 1};

void sg_add_dma_args(struct tp_profile *p, const struct sg_dma_figs *f, enum sg_dma_printer pr)
{
	const uint8_t *o = pr == SG_DMA_PERFAI ? order_perfai : order_bm1690;
	size_t n = pr == SG_DMA_PERFAI ? sizeof order_perfai : sizeof order_bm1690;
	/* Each figure by its id; the counters the PMU does not have stay 0. */
	const uint64_t u[F_NFIGS] = {
	    [F_STALL] = f->stall, [F_GXFER] = f->gmem,  [F_GSIZE] = f->gmem,  [F_LXFER] = f->lmem,
	    [F_LSIZE] = f->lmem,  [F_GXACT] = f->gxact, [F_LXACT] = f->lxact, [F_SIZE] = f->size};
	const double r[F_NFIGS] = {
	    [F_GBW] = f->gbw, [F_LBW] = f->lbw, [F_DDR_BW] = f->ddr_bw, [F_L2M_BW] = f->l2m_bw};
	for (size_t i = 0; i < n; i++) {
		if (is_real[o[i]])
			tp_args_add_real(p, key[o[i]], r[o[i]]);
		else
			tp_args_add_uint(p, key[o[i]], u[o[i]]);
	}
}
