/*
 * sophgo.h — the Sophgo TPU family's readers (bmprofile and cdm_profile_data). bmprofile: Sophgo
 * TPU runtime profiles ("bmprofile_data" directories written by bmruntime with
 * BMRUNTIME_ENABLE_PROFILE=1): global.profile, iter<N>.profile, cmd_*.dat and net_stat.sim, for
 * BM1684, BM1684X, BM1688/CV186X and CV184X (specs/sophgo-bmprofile.md §1–§9), with layer
 * information from the compiler's tensor_location.json and final.mlir (side files: problems with
 * them, or with net_stat.sim, are notes, never errors).
 *
 * The reader fills one struct tp_profile: one device, per core a TIU and a GDMA track (and an
 * MCU track when the firmware trace has records), one slice per PMU record with the timeline
 * reconstructed exactly as the reference converter does (§9.2 PerfAI path for BM1688 and
 * CV184X, §9.1 legacy path for BM1684/BM1684X), layers/tensors from tensor_location.json +
 * final.mlir (else global.profile), memory from global.profile, and net_stat.sim figures as
 * metadata. The caller owns the returned profile (tp_profile_free).
 */
#ifndef TP_SOPHGO_H
#define TP_SOPHGO_H

#include "model/model.h"

/* How much per-command detail to keep as argument sets (tp_slice.args). */
enum tp_bmprofile_detail {
	TP_BMPROFILE_DETAIL_AUTO = 0, /* default: args while the dump has at most
	                                 TP_BMPROFILE_DETAIL_AUTO_LIMIT commands, then none */
	TP_BMPROFILE_DETAIL_ON = 1,   /* args for every command, whatever the size */
	TP_BMPROFILE_DETAIL_OFF = -1, /* no args: 40 bytes per command */
};
#define TP_BMPROFILE_DETAIL_AUTO_LIMIT 1000000u
/* AUTO keeps the decoded descriptor fields (des_*, DMA sizes/strides: 20-100 arguments per
 * command) only up to this many records; ON keeps them always. Without them the reader keeps
 * each command's LOCAL memory records in compact form (model/lmemrec.h). */
#define TP_BMPROFILE_FIELDS_AUTO_LIMIT 200000u

/* The options of both Sophgo readers (tp_bmprofile_read and tp_cdm_read, which has no
 * skip_layers). Zeroed options are the defaults. */
struct tp_bmprofile_opts {
	enum tp_arch arch_override; /* TP_ARCH_UNKNOWN = take the arch from global.profile (cdm:
	                               BM1690 or SG2260E) */
	int force_arch;        /* 1: arch_override even when global.profile names another arch (else
	                          that is TP_EUSAGE naming the dump's arch) */
	double tiu_freq_mhz;   /* 0 = arch default (BM1688 900, BM1684 550, BM1684X tpu_freq; cdm
	                          chips 1000) */
	double gdma_freq_mhz;  /* 0 = arch default (BM1688 750, BM1684 575, BM1684X tpu_freq; cdm
	                          chips 1000, also SDMA and CDMA) */
	int detail;            /* enum tp_bmprofile_detail; 0 (zeroed opts) = AUTO (cdm: per core
	                          file up to TP_BMPROFILE_DETAIL_AUTO_LIMIT records) */
	int skip_layers;       /* 1 = no layers/tensors (global.profile node matching and
	                          tensor_location.json skipped): only the 40-byte slices per
	                          command stay in memory, for the largest dumps */
	int jobs;              /* threads the reader may use (0 or 1 = the calling thread
	                          only); the profile is the same for every value */
	uint64_t fields_limit; /* AUTO keeps the decoded fields up to this many records; 0 =
	                          TP_BMPROFILE_FIELDS_AUTO_LIMIT (tests lower it) */
	size_t part;           /* records per part when one engine's records (cdm: also a core
	                          file's walk) are read and filled on several threads; 0 =
	                          TP_BMPROFILE_PART (tests lower it) */
};
/* Parts of about this many records keep the per-part cost (a scratch memo of label rewrites,
 * the part's tables and their merge) small against the part's work. */
#define TP_BMPROFILE_PART 65536u

/* The chip table's constants for `a` (clocks, lanes, memory sizes; model.h struct tp_chip),
 * or NULL when no Sophgo chip has that arch. Static data, valid for the program's life;
 * thread-safe. */
const struct tp_chip *tp_chip_by_arch(enum tp_arch a);

/* Returns 1 if `dir` is a directory that looks like bmprofile data (it holds global.profile or
 * an iter<N>.profile file), else 0. Never fails loudly; thread-safe. */
int tp_bmprofile_probe(const char *dir);

/* Reads the bmprofile directory `dir`. `o` may be NULL (all defaults). On success returns TP_OK
 * and stores a finished profile (tp_profile_finish done) in *out, owned by the caller. On error
 * returns a negative status, leaves *out NULL and fills `d` (may be NULL) with one line naming
 * the file as dir + "/" + name, e.g. `d/iter0.profile@0x2214: GDMA block length 4096 exceeds
 * the 312 bytes left` or `d/global.profile:17: unknown arch 9`.
 * Errors: TP_ENOTFOUND (no such dir, empty dir, missing cmd_*.dat named by a COMMAND block),
 * TP_EIO (not a directory, unreadable file), TP_EFORMAT (garbled data, counts that do not fit),
 * TP_ETRUNC (file shorter than its blocks declare), TP_EUNSUPPORTED (arch not handled),
 * TP_ENOMEM. Reentrant: no global state. */
int tp_bmprofile_read(const char *dir, const struct tp_bmprofile_opts *o, struct tp_profile **out,
                      struct tp_diag *d);

/* ---------------------------------------------------------------------------------------- */
/* cdm_profile_data_dev{D}[-{N}]/ (BM1690/SG2260, SG2260E; specs/sophgo-cdm.md): global.profile */
/* + cdmlib0_{core}.profile (+ cdma*_{port}.profile). One device, per core a TIU, GDMA and     */
/* (when recorded) SDMA track, one CDMA track per port on the owning core; one slice per PMU  */
/* record, aligned as §8.2 and named through the command streams (§8.3). Profile meta:        */
/* "arch", "tpu_freq", "tail_offset_ns" (when the dump has it), "pmu_tail_cycle" (cycles from */
/* the zero of the timeline to the last PMU end, before sys omission), "cdm_mode".           */
/* ---------------------------------------------------------------------------------------- */

/* Returns 1 if `dir` holds a cdmlib*.profile file, else 0. Thread-safe. */
int tp_cdm_probe(const char *dir);

/* Reads the cdm directory `dir`. `o` may be NULL. On success returns TP_OK and stores a
 * finished profile in *out (caller owns, tp_profile_free). On error returns a negative status,
 * leaves *out NULL and fills `d` (may be NULL) with one line naming the file, e.g.
 * `dir/cdmlib0_3.profile@0x1f8: block type 4 declares 4096 bytes, only 312 left in the file`
 * or `dir/global.profile:3: arch 'x' is not a number`. Errors: TP_ENOTFOUND (no directory,
 * no cdmlib file, no global.profile), TP_EIO, TP_EFORMAT, TP_ETRUNC, TP_EUNSUPPORTED (arch not
 * a cdm chip), TP_ENOMEM. Reentrant. */
int tp_cdm_read(const char *dir, const struct tp_bmprofile_opts *o, struct tp_profile **out,
                struct tp_diag *d);

#endif /* TP_SOPHGO_H */
