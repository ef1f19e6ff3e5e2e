/*
 * capfmt.h — the on-disk constants of a libtpuprof capture dump (capture.tpp), shared by the
 * writer (src/capture/: dump.c, buffers.c, session.c) and the reader
 * (src/readers/capfile/capfile.c). The layout is documented field by field in
 * docs/capture-format.md; this header only names the numbers.
 * It depends on nothing but <stdint.h> so the capture library stays free of tpcore.
 *
 * Summary (all integers little-endian on the hosts tpuprof supports):
 *   file   = header (TP_CAPFMT_HEADER_SIZE bytes) then blocks
 *   block  = u32 type, u32 flags (0), u64 payload length, payload
 *   blocks = HWINFO, SUMMARY, then per thread THREAD + RECORDS, then END
 * A dump whose END block is missing was cut short; the SUMMARY block (written before any
 * thread data) tells the reader how many records it should have seen.
 */
#ifndef TP_CAPFMT_H
#define TP_CAPFMT_H

#include <stdint.h>

#define TP_CAPFMT_MAGIC "TPUPCAP\0" /* 8 bytes */
#define TP_CAPFMT_MAGIC_SIZE 8
#define TP_CAPFMT_VERSION 1
#define TP_CAPFMT_HEADER_SIZE 128
#define TP_CAPFMT_ENDIAN_MARK 0x01020304u /* written natively: 04 03 02 01 = little-endian */
#define TP_CAPFMT_RECORD_SIZE 32
#define TP_CAPFMT_BLOCK_HEADER_SIZE 16
#define TP_CAPFMT_COMM_SIZE 16    /* process / thread name field, NUL padded */
#define TP_CAPFMT_MAX_DIMS 8      /* dims recorded per tensor */
#define TP_CAPFMT_MAX_HW 4        /* counters per hardware-counter set */
#define TP_CAPFMT_HW_NAME_SIZE 24 /* NUL-padded counter name in HWINFO */

/* Header field offsets (see docs/capture-format.md for the meaning of each). */
#define TP_CAPFMT_OFF_MAGIC 0
#define TP_CAPFMT_OFF_VERSION 8
#define TP_CAPFMT_OFF_HEADER_SIZE 12
#define TP_CAPFMT_OFF_ENDIAN 16
#define TP_CAPFMT_OFF_RECORD_SIZE 20
#define TP_CAPFMT_OFF_PID 24
#define TP_CAPFMT_OFF_DEVICE 28
#define TP_CAPFMT_OFF_SESSION 32
#define TP_CAPFMT_OFF_MODE 36
#define TP_CAPFMT_OFF_CLOCK 40
#define TP_CAPFMT_OFF_MAX_RECORDS 44
#define TP_CAPFMT_OFF_TICK0 48
#define TP_CAPFMT_OFF_NS0 56
#define TP_CAPFMT_OFF_TICK1 64
#define TP_CAPFMT_OFF_NS1 72
#define TP_CAPFMT_OFF_COMM 80
#define TP_CAPFMT_OFF_FLUSHES 96
#define TP_CAPFMT_OFF_FLAGS 100 /* u32 TP_CAPFMT_HF_* */
/* bytes 104..127 are reserved (zero) */

/* Header flags. */
#define TP_CAPFMT_HF_FINAL 0x1 /* the session's last dump: recording had ended */

/*
 * Live files (crash-safe recording). While a session records, its directory holds
 *   session.tpc       TP_CAPFMT_SES_SIZE bytes, shared-mapped by the process: a dump header
 *                     (same layout as above; TICK1/NS1 refreshed while recording), then the
 *                     hardware-counter names, lost-event count and run metadata below;
 *   thread-K.tpc      one per recording thread: a TP_CAPFMT_CHUNK_HEADER-byte header, the
 *                     thread's records at offset TP_CAPFMT_CHUNK_HEADER and its string table
 *                     at STR_OFF. Records and strings are written straight into the shared
 *                     mapping, and the published counts in the header are stored after them,
 *                     so whatever the process had recorded is on disk however it dies.
 * A session that ends normally writes capture.tpp with TP_CAPFMT_HF_FINAL and removes the
 * live files; a directory that still holds session.tpc and no final capture.tpp belongs to a
 * process that died (or is still running): the reader rebuilds the dump from the live files.
 */
#define TP_CAPFMT_SES_FILE "session.tpc"
#define TP_CAPFMT_SES_SIZE 8192
#define TP_CAPFMT_SES_OFF_HW 128   /* u32 kind, u32 count, MAX_HW x name[24] */
#define TP_CAPFMT_SES_OFF_LOST 256 /* u64 events lost because no thread buffer existed */
#define TP_CAPFMT_SES_OFF_META 512 /* u32 count, u32 0, META_MAX x {key, value} */
#define TP_CAPFMT_CHUNK_MAGIC "TPUPTHR\0"
#define TP_CAPFMT_CHUNK_HEADER 4096
#define TP_CAPFMT_CK_OFF_VERSION 8      /* u32 1, u32 header size */
#define TP_CAPFMT_CK_OFF_REC_CAP 16     /* u64 record capacity */
#define TP_CAPFMT_CK_OFF_STR_OFF 24     /* u64 file offset of the string table */
#define TP_CAPFMT_CK_OFF_STR_CAP 32     /* u64 string table capacity (bytes) */
#define TP_CAPFMT_CK_OFF_TID 40         /* i64 */
#define TP_CAPFMT_CK_OFF_NAME 48        /* name[16] */
#define TP_CAPFMT_CK_OFF_PUB 64         /* u64 records published */
#define TP_CAPFMT_CK_OFF_STR_PUB 72     /* u64 strings published: count << 32 | bytes */
#define TP_CAPFMT_CK_OFF_DROPPED 80     /* u64 records dropped */
#define TP_CAPFMT_CK_OFF_STR_DROPPED 88 /* u32 strings not kept */
#define TP_CAPFMT_CK_OFF_HW_KIND 92     /* u32 */
#define TP_CAPFMT_CK_OFF_FLAGS 96       /* u32 TP_CAPFMT_CKF_* */
#define TP_CAPFMT_CKF_DISK_FULL 0x1     /* the file could not grow: later records were dropped */

/* Names: at most this many bytes of UTF-8 (cut on a character boundary); invalid bytes are
 * replaced by U+FFFD by the capture library and again by the reader. */
#define TP_CAPFMT_MAX_STR 1023

/* Clock kinds (header CLOCK). */
enum tp_capfmt_clock {
	TP_CAPFMT_CLOCK_MONOTONIC = 1, /* ticks are CLOCK_MONOTONIC nanoseconds */
	TP_CAPFMT_CLOCK_TSC =
	    2, /* ticks are x86 TSC; ns = ns0 + (t-tick0)*(ns1-ns0)/(tick1-tick0) */
};

/* Run metadata set with tpuprof_meta (fixed-size, NUL-padded fields). */
#define TP_CAPFMT_META_KEY 32
#define TP_CAPFMT_META_VALUE 96
#define TP_CAPFMT_META_MAX 32

/* Block types. */
enum tp_capfmt_block {
	TP_CAPFMT_BLK_HWINFO = 1, /* u32 kind, u32 count, count x name[24] */
	TP_CAPFMT_BLK_SUMMARY =
	    2, /* u32 threads, u32 0, u64 records, u64 dropped, u64 strings_dropped */
	TP_CAPFMT_BLK_THREAD = 3,  /* see docs: tid, counts, name, string table */
	TP_CAPFMT_BLK_RECORDS = 4, /* count x 32-byte records of the preceding THREAD */
	TP_CAPFMT_BLK_META = 5,    /* u32 count, u32 0, count x {key[META_KEY], value[META_VALUE]},
	                              NUL-padded; a later entry for a key replaces an earlier one */
	TP_CAPFMT_BLK_END = 0x454e44, /* "DNE": u64 records written, u64 dropped */
};

/* Hardware-counter kinds (HWINFO kind). */
enum tp_capfmt_hw {
	TP_CAPFMT_HW_NONE = 0,     /* TPUPROF_HWCOUNTERS off, or no counter could be opened */
	TP_CAPFMT_HW_HARDWARE = 1, /* PMU events: cycles, instructions, cache misses */
	TP_CAPFMT_HW_SOFTWARE = 2, /* fallback: task clock (ns), page faults, context switches */
};

/*
 * Records: 32 bytes each.
 *   0  u64 ts     clock ticks (see CLOCK); 0 in continuation records
 *   8  u8  kind   enum tp_capfmt_rec
 *   9  u8  flags  TP_CAPFMT_F_*
 *  10  u16 aux    kind-specific small value
 *  12  u32 name   thread string id (0 = none / "")
 *  16  u64 a      kind-specific
 *  24  u64 b      kind-specific
 */
enum tp_capfmt_rec {
	TP_CAPFMT_REC_ACT_BEGIN = 1,    /* name, a = step (i64), b = meta string id */
	TP_CAPFMT_REC_ACT_END = 2,      /* name, a = step, b = meta string id */
	TP_CAPFMT_REC_STEP_BEGIN = 3,   /* name = graph, a = step, flags WARMUP */
	TP_CAPFMT_REC_STEP_END = 4,     /* name = graph, a = step */
	TP_CAPFMT_REC_OP_BEGIN = 5,     /* name = op name, a = step, b = type id | post_op id << 32,
	                                  flags STEP|WARMUP */
	TP_CAPFMT_REC_OP_END = 6,       /* name = op name; followed by the op's detail records */
	TP_CAPFMT_REC_RT_BEGIN = 7,     /* name = call name, a = step, flags STEP|WARMUP */
	TP_CAPFMT_REC_RT_END = 8,       /* name = call name */
	TP_CAPFMT_REC_COUNTER = 9,      /* name = counter name, a = IEEE-754 double bits */
	TP_CAPFMT_REC_MARK = 10,        /* instant: name, a = step, b = category id | colour << 32,
	                                  flags STEP|WARMUP */
	TP_CAPFMT_REC_ASYNC_BEGIN = 11, /* name, a = id (u64), b = category id | colour << 32;
	                                  may end on another thread */
	TP_CAPFMT_REC_ASYNC_END = 12,   /* name, a = id */
	TP_CAPFMT_REC_RANGE_BEGIN = 13, /* name, a = step, b = category id | colour << 32, flags
	                                  STEP|WARMUP; followed by a SRCLOC record when given */
	TP_CAPFMT_REC_RANGE_END = 14,   /* name */
	/* Detail records: continuation of the OP_END just before them (ts = 0). */
	TP_CAPFMT_REC_TENSOR = 16,   /* aux = role << 8 | index, name = tensor name, a = dtype id,
	                               b = ndim; followed by ceil(ndim/2) DIMS records */
	TP_CAPFMT_REC_DIMS = 17,     /* aux = dims in this record (1..2), a, b = dims (i64) */
	TP_CAPFMT_REC_ATTR = 18,     /* name = key id, a = value id */
	TP_CAPFMT_REC_COST = 19,     /* a = bytes, b = flops */
	TP_CAPFMT_REC_SPARSITY = 20, /* a = IEEE-754 double bits: fraction of zero weights */
	TP_CAPFMT_REC_HW = 21,       /* aux = counter index in HWINFO, a = delta over the op */
	TP_CAPFMT_REC_SRCLOC = 22,   /* continuation of MARK / RANGE_BEGIN: name = file id,
	                               a = line, b = function id */
};

#define TP_CAPFMT_F_WARMUP 0x01 /* inside a warm-up step */
#define TP_CAPFMT_F_STEP 0x02   /* `a` holds a step index (the scope is inside a step) */

/* Tensor roles (TENSOR aux high byte). */
enum tp_capfmt_role {
	TP_CAPFMT_ROLE_INPUT = 0,
	TP_CAPFMT_ROLE_OUTPUT = 1,
	TP_CAPFMT_ROLE_WEIGHT = 2,
};

#endif /* TP_CAPFMT_H */
