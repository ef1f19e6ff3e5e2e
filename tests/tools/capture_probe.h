/*
 * capture_probe.h — the scenarios of tpuprof_probe that live in files of their own.
 */
#ifndef TP_TESTS_CAPTURE_PROBE_H
#define TP_TESTS_CAPTURE_PROBE_H

/* capture_toggle.c: `tpuprof_probe toggle THREADS SESSIONS ON_MS MAX_RECORDS`. Returns 0 when
 * every session's dump accounts for what the threads attempted, 1 otherwise (the failures
 * are printed), 2 on bad arguments. */
int probe_toggle(int argc, char **argv);

#endif /* TP_TESTS_CAPTURE_PROBE_H */
