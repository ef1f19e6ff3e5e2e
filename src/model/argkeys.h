/*
 * argkeys.h — the reference tools' spellings of the argument keys that readers attach to
 * commands and writers print or look up: one definition each, so that a reader and a writer
 * cannot disagree on a letter. The spellings are the vendor's columns (PerfAI_output.xlsx,
 * the bmprofile / tpu_profile text; sophgo-costmodel.md §3, sophgo-bmprofile.md §10), which
 * users compare with, hence the odd ones ("DMA data size(B)").
 *
 * Numbers behind the cost keys are typed fields of the model (struct tp_cost in model.h: the
 * figures, and the ratios derived from them); an argument under TP_KEY_UARCH_RATE & co.
 * carries the vendor's printed text ("74.9%", ratio × 100 with one decimal) for the outputs
 * that list arguments as they are. A writer needing the number reads struct tp_cost
 * (tp_track_get_cost), never the text.
 */
#ifndef TP_ARGKEYS_H
#define TP_ARGKEYS_H

/* Every command. */
#define TP_KEY_FUNCTION_TYPE "Function Type"
#define TP_KEY_FUNCTION_NAME "Function Name"
#define TP_KEY_DATA_TYPE "Data Type" /* TIU "A -> B" (opd0 -> result precision) */
#define TP_KEY_STALL_CYCLE "Stall Cycle"
#define TP_KEY_TIU_DEP "des_cmd_id_dep" /* the dependency id on TIU commands */
#define TP_KEY_DMA_DEP "cmd_id_dep"     /* on DMA commands */

/* TIU cost model (struct tp_cost). */
#define TP_KEY_ALG_OPS "Alg Ops"
#define TP_KEY_UARCH_OPS "uArch Ops"
#define TP_KEY_ALG_CYCLE "Alg Cycle"
#define TP_KEY_UARCH_RATE "uArch Rate"          /* tp_cost.uarch_rate as "74.9%" */
#define TP_KEY_INIT_RATIO "Initial Cycle Ratio" /* tp_cost.init_ratio as "0.1%" */
#define TP_KEY_BANK_RATIO "Bank Conflict Ratio" /* tp_cost.bank_ratio as "0.0%" */

/* DMA PMU figures. */
#define TP_KEY_DMA_SIZE "DMA data size(B)"
#define TP_KEY_DDR_BW "DDR Bandwidth(GB/s)"
#define TP_KEY_L2_BW "L2M Bandwidth(GB/s)"
#define TP_KEY_GMEM_XFER_BYTES "gmem_xfer_bytes(B)"
#define TP_KEY_GMEM_BW "gmem_bandwidth"
#define TP_KEY_GMEM_DMA_SIZE "gmem_dma_data_size(B)"
#define TP_KEY_GMEM_XACT "gmem_xact_cnt"
#define TP_KEY_LMEM_XFER_BYTES "lmem_xfer_bytes"
#define TP_KEY_LMEM_BW "lmem_bandwidth"
#define TP_KEY_LMEM_DMA_SIZE "lmem_dma_data_size(B)"
#define TP_KEY_LMEM_XACT "lmem_xact_cnt"

#endif /* TP_ARGKEYS_H */
