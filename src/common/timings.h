/*
 * timings.h — the opt-in per-phase report of a conversion (`tpuprof --timings FILE`,
 * docs/perf-notes/cores.md): for each named phase (the reader's stages, the analysis, each
 * output) its wall time, the CPU time of the whole process, the CPU time spent in sections
 * that run on one thread (its serial part), the most threads that ran at once and its peak
 * resident memory, written as one JSON file at the end.
 *
 * Off unless tp_tm_enable() was called: every hook is then one test of a global flag, so the
 * instrumented code costs nothing in a normal run.
 *
 * What counts as serial: the CPU time of the thread that opened the phase (the driving
 * thread), less the time it spent inside parallel sections (tp_tm_par_begin/end: one share of
 * work that --jobs spreads over threads, e.g. its own part of a tp_par_run, or a compression
 * chunk it runs inline when it has no workers), plus the CPU time of side threads that do
 * one-thread work beside it (tp_tm_solo_begin/end). Worker threads of a pool are parallel.
 *
 * Phases are opened and closed on the thread that drives the conversion, in nested order; a
 * phase that is opened again under the same parent (one per iteration of a dump) adds to its
 * first record.
 */
#ifndef TP_TIMINGS_H
#define TP_TIMINGS_H

#include "common/common.h"

extern int tp_tm_enabled;

/* Turns the report on and opens the root phase "total"; call once, before any thread. */
void tp_tm_enable(void);
static inline int tp_tm_on(void)
{
	return tp_tm_enabled;
}

/* Opens phase `name` (static text, no '/') under the innermost open one; closes it. */
void tp_tm_begin(const char *name);
void tp_tm_end(void);
/* Closes the innermost phase and passes a step's status through, so a timed step reads
 * `tp_tm_begin("x"); rc = tp_tm_end_rc(step(...));`. */
static inline int tp_tm_end_rc(int rc)
{
	tp_tm_end();
	return rc;
}

/* A parallel share of work on the calling thread (nests). */
void tp_tm_par_begin(void);
void tp_tm_par_end(void);
/* One-thread work on a side thread beside the driving one (its CPU counts as serial). */
void tp_tm_solo_begin(void);
void tp_tm_solo_end(void);
/* A pool's worker thread starts (+1) or ends (-1): the phase's thread count. */
void tp_tm_thread(int delta);

/* Closes every open phase and writes the report (a JSON object, docs/perf-notes/cores.md)
 * to `path`, with `jobs` and `input` recorded in it. TP_OK, or an error with d set. */
int tp_tm_write(const char *path, int jobs, const char *input, struct tp_diag *d);

#endif /* TP_TIMINGS_H */
