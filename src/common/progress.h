/*
 * progress.h — live progress of a conversion on a terminal, and the hooks through
 * which readers and writers report how far they are.
 *
 * The CLI owns one process-wide progress display: tp_progress_start() (only when stderr is a
 * TTY and not -q) starts a ticker thread that redraws one line on stderr every ~100 ms once
 * the conversion has run longer than the start delay (~1 s, the CLI's --progress-delay), so
 * short conversions print
 * nothing. Phases follow each other (reading, analysis, writing); each gets its own line,
 * which is finished with its time when the next phase begins. tp_progress_finish() prints the
 * final line with the time per phase.
 *
 * Hooks for library code (cheap, safe from any thread, no-ops when no display runs):
 *   tp_progress_input_done(bytes)   a reader finished with `bytes` of input
 *                                   (common/file.c calls it when a mapped file is released)
 *   tp_progress_report(done, total) the output written by the calling thread is at
 *                                   done/total of its work (units are the writer's own)
 * A writer that never reports shows its elapsed time only.
 */
#ifndef TP_PROGRESS_H
#define TP_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

enum tp_progress_phase { TP_PHASE_READ, TP_PHASE_ANALYZE, TP_PHASE_WRITE, TP_PHASE_COUNT };

/* Starts the display. `show` = 0 records phase times only (for the -v final line) and never
 * draws. `input_total` is the input size in bytes (0 = unknown). `delay_ms` is the time
 * before the first draw (TP_PROGRESS_DELAY_DEFAULT_MS unless the user chose). Returns 0, or
 * -1 when the ticker thread cannot start (progress is then simply not shown). */
#define TP_PROGRESS_DELAY_DEFAULT_MS 1000
int tp_progress_start(int show, uint64_t input_total, long delay_ms);
/* Ends the current phase (its live line becomes "PHASE ... in S s") and begins `ph`. */
void tp_progress_phase(enum tp_progress_phase ph);
/* Output slots of the write phase: `slot` < TP_PROGRESS_SLOTS, `name` static. Call begin from
 * the thread that writes the output (it binds the thread to the slot for tp_progress_report)
 * and end from the same thread. */
#define TP_PROGRESS_SLOTS 32
/* How many outputs the write phase will run (for "writing K/N done"); before the slots. */
void tp_progress_outputs(size_t n);
void tp_progress_slot_begin(size_t slot, const char *name);
void tp_progress_slot_end(size_t slot);
/* Stops the ticker and finishes the live line. mode 0 (a failed run): nothing more; 1: when
 * the display was shown, prints "tpuprof: done in T s: reading R s, analysis A s, writing W s
 * (out1 S s, ...)" on stderr; 2: prints that line in any case (-v). Safe to call when
 * tp_progress_start was not called, and more than once (then does nothing). */
void tp_progress_finish(int mode);

/* The CLI's own stderr lines go between these two: lock clears the live line (it is redrawn
 * at the next tick) and keeps the ticker from drawing until unlock. */
void tp_progress_lock(void);
void tp_progress_unlock(void);

void tp_progress_input_done(uint64_t bytes);
void tp_progress_report(uint64_t done, uint64_t total);

#endif /* TP_PROGRESS_H */
