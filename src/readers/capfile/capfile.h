/*
 * capfile.h — the reader of libtpuprof capture dumps (tpuprof_data_dev{D}-{N}.{PID}/
 * capture.tpp, format in docs/capture-format.md and src/capture/capfmt.h). It fills the
 * profile model: arch TP_ARCH_CPU, one device per dump (the process), one TP_TRACK_THREAD
 * track per recorded thread with activities, steps, operators and runtime calls as slices
 * (types and argument keys per the TP_CAP_* conventions in model/argkeys.h), counters as
 * tp_counter series, and drop counts on the tracks and in profile->stats.
 *
 * A dump cut short (process killed, disk full, file truncated) is read as far as it goes:
 * the result is TP_OK with the note "dump truncated: N records lost" and stats updated.
 * Malformed dumps fail with `path@0xOFFSET: message`.
 */
#ifndef TP_CAPFILE_H
#define TP_CAPFILE_H

#include "model/model.h"

/* The dump file name inside a dump directory. */
#define TP_CAPFILE_NAME "capture.tpp"

/* Returns 1 if `dir` is a dump directory (holds capture.tpp starting with the dump magic) or
 * is itself such a file, else 0. Never fails loudly; reads at most the first 8 bytes. */
int tp_capfile_probe(const char *dir);

/* Reads the dump in `dir` (a dump directory, or the capture.tpp file itself) into a new
 * profile stored in *out (caller frees with tp_profile_free). Returns TP_OK (possibly with
 * truncation notes), or TP_ENOTFOUND / TP_EIO / TP_EFORMAT / TP_ETRUNC / TP_EUNSUPPORTED /
 * TP_ENOMEM with `d` filled; *out is NULL on error. */
int tp_capfile_read(const char *dir, struct tp_profile **out, struct tp_diag *d);

/* Parses a dump held in memory (`data`, `size` bytes); `display` names it in messages.
 * Same results as tp_capfile_read. Used by tp_capfile_read, the tests and the fuzzer. */
int tp_capfile_parse(const uint8_t *data, size_t size, const char *display, struct tp_profile **out,
                     struct tp_diag *d);

/* One live thread file (thread-K.tpc of a dump directory) held in memory; `path` names it in
 * messages. */
struct tp_capfile_live {
	const char *path;
	const uint8_t *data;
	size_t size;
};

/* Rebuilds the dump of a process that died (or still runs) from its live files held in
 * memory — `ses` (`ses_size` bytes) is session.tpc, `threads` the `n` thread files in K
 * order — and parses it, with the "process died" and recovery notes. Same results as
 * tp_capfile_read on such a directory (which loads the files and shares this rebuild). Used
 * by the tests and the fuzzer (fuzz/fuzz_capfile_live.c). *out is NULL on error. */
int tp_capfile_rebuild_parse(const uint8_t *ses, size_t ses_size, const char *display,
                             const struct tp_capfile_live *threads, size_t n,
                             struct tp_profile **out, struct tp_diag *d);

#endif /* TP_CAPFILE_H */
