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
 *
 * The second half holds tpuprof's own conventions for captured host slices (TP_CAP_*): the
 * slice types and argument keys the capture reader writes and the reports read; then those of
 * imported traces (TP_TRACE_*). model.h includes this header.
 */
#ifndef TP_ARGKEYS_H
#define TP_ARGKEYS_H

/* Every command. */
#define TP_KEY_FUNCTION_TYPE "Function Type"
#define TP_KEY_FUNCTION_NAME "Function Name"
#define TP_KEY_DATA_TYPE "Data Type" /* TIU "A -> B" (opd0 -> result precision) */
#define TP_KEY_STALL_CYCLE "Stall Cycle"
#define TP_KEY_GLOBAL_IDX "Global Idx"  /* 1-based: tp_slice_global_idx */
#define TP_KEY_TIU_DEP "des_cmd_id_dep" /* the dependency id on TIU commands */
#define TP_KEY_DMA_DEP "cmd_id_dep"     /* on DMA commands */
/* TIU conv / pool descriptor fields (the vendor's register names): kernel, strides, padding */
#define TP_KEY_TIU_KH "des_opd1_h"
#define TP_KEY_TIU_KW "des_opd1_w"
#define TP_KEY_TIU_STRIDE_H "des_res_op_y_str"
#define TP_KEY_TIU_STRIDE_W "des_res_op_x_str"
#define TP_KEY_TIU_PAD_UP "des_opd0_up_pad"
#define TP_KEY_TIU_PAD_DOWN "des_opd0_dn_pad"
#define TP_KEY_TIU_PAD_LEFT "des_opd0_lf_pad"
#define TP_KEY_TIU_PAD_RIGHT "des_opd0_rt_pad"
/* Legacy (BM1684X / BM1684) GDMA PMU counters, "pmu." + the vendor's counter name: bytes read
 * over the two AXI ports */
#define TP_KEY_GDMA_D0_AR "pmu.d0_ar_bytes"
#define TP_KEY_GDMA_D1_AR "pmu.d1_ar_bytes"

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

/*
 * Conventions for tpuprof captures (host code instrumented with libtpuprof), shared by the
 * capture reader and the operator reports. A captured slice has:
 *   type = one of the TP_CAP_TYPE_* strings, name = the activity / graph / operator name.
 * Its argument set uses these keys (absent when the capture mode did not record them):
 */
#define TP_CAP_TYPE_ACTIVITY "activity"        /* application layer: data prep, post-processing */
#define TP_CAP_TYPE_STEP "step"                /* one iteration of a graph */
#define TP_CAP_TYPE_OP "op"                    /* one operator execution */
#define TP_CAP_TYPE_RUNTIME "runtime"          /* a runtime / driver call */
#define TP_CAP_KEY_OP_TYPE "op_type"           /* str: MatMul, Softmax, ... */
#define TP_CAP_KEY_POST_OP "post_op"           /* str: fused post op ("gelu"), may be "" */
#define TP_CAP_KEY_STEP "step"                 /* int: step index the slice belongs to */
#define TP_CAP_KEY_GRAPH "graph"               /* str: graph name of a step */
#define TP_CAP_KEY_WARMUP "warmup"             /* int: 1 if inside a warm-up step */
#define TP_CAP_KEY_INPUTS "input_names"        /* str: names joined with ';' */
#define TP_CAP_KEY_INPUT_SHAPES "input_shapes" /* str: "1x128x256;256x256" */
#define TP_CAP_KEY_INPUT_DTYPES "input_dtypes" /* str: "fp32;fp32" */
#define TP_CAP_KEY_OUTPUTS "output_names"
#define TP_CAP_KEY_OUTPUT_SHAPES "output_shapes"
#define TP_CAP_KEY_OUTPUT_DTYPES "output_dtypes"
#define TP_CAP_KEY_WEIGHT_SHAPE "weight_shape"           /* str: "256x256" or "" */
#define TP_CAP_KEY_WEIGHT_SPARSITY "weight_sparse_ratio" /* real: fraction of zero weights */
#define TP_CAP_KEY_BYTES "bytes"                         /* uint: bytes moved */
#define TP_CAP_KEY_FLOPS "flops"                         /* uint: floating point operations */
#define TP_CAP_KEY_ATTR_PREFIX "attr." /* str: operator attributes, "attr.<name>" */
#define TP_CAP_KEY_META "meta"         /* str: free text given to activities/steps */
#define TP_CAP_KEY_HW_PREFIX "hw."     /* uint: per-op counters, "hw.cycles", ... */

/* Slice argument (int 1) on scopes that were still open when the dump was written (the
 * process was killed, or the session ended inside them): their end is the dump time, not a
 * measured end, so reports leave them out of latency and operator statistics. */
#define TP_CAP_KEY_CUT "cut_short"

/* Slice types and argument keys of the mark / range / async API (tpuprof_mark, ...). */
#define TP_CAP_TYPE_MARK "mark"            /* zero-length slice */
#define TP_CAP_TYPE_RANGE "range"          /* tpuprof_range_begin/end on its thread */
#define TP_CAP_TYPE_ASYNC "async"          /* tpuprof_async_*, on "async ranges" tracks */
#define TP_CAP_KEY_CATEGORY "category"     /* str */
#define TP_CAP_KEY_COLOR "color"           /* str "#rrggbb" */
#define TP_CAP_KEY_SRC_FILE "src_file"     /* str */
#define TP_CAP_KEY_SRC_LINE "src_line"     /* int */
#define TP_CAP_KEY_SRC_FUNC "src_function" /* str */
#define TP_CAP_KEY_ASYNC_ID "async_id"     /* uint */
#define TP_CAP_KEY_BEGIN_TID "begin_tid"   /* int: thread that began an async range */
#define TP_CAP_KEY_END_TID "end_tid"       /* int: thread that ended it (-1: cut short) */

/*
 * Conventions for imported traces (the Chrome-trace reader; host traces merged into dumps):
 * what a slice of a host thread or of a device queue is, as its type (enum tp_work in model.h
 * reads it back). The reader decides from the format's own categories
 * (docs/input-chrome-trace.md). Host operators, runtime calls and steps keep the capture types
 * TP_CAP_TYPE_OP, _RUNTIME and _STEP.
 */
#define TP_TRACE_TYPE_ANNOTATION "annotation" /* a user range on a host thread */
#define TP_TRACE_TYPE_PROFILER "profiler"     /* the profiler's envelope and bookkeeping */
#define TP_TRACE_TYPE_KERNEL "kernel"         /* device: a compute kernel */
#define TP_TRACE_TYPE_MEMCPY "memcpy"         /* device: a copy */
#define TP_TRACE_TYPE_MEMSET "memset"         /* device: a fill */
#define TP_TRACE_TYPE_COLLECTIVE "collective" /* device: a communication kernel (NCCL, ...) */
#define TP_TRACE_TYPE_DEVICE_ANNOTATION "device_annotation" /* a host range shown on a queue */
#define TP_TRACE_TYPE_SYNC "device_sync" /* device: a wait (stream waits on an event, ...) */
/* The id that joins a launching runtime call to the device work it launched (an argument,
 * the same value on both slices), and the rank of a distributed run (profile meta). */
#define TP_KEY_CORRELATION "correlation"
#define TP_META_RANK "distributed.rank"
#define TP_META_WORLD_SIZE "distributed.world_size"

#endif /* TP_ARGKEYS_H */
