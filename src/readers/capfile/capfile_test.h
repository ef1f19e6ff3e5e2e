/*
 * capfile_test.h — the helpers of capfile_test.c that run the tpuprof_probe program
 * (tests/tools/capture_probe.c, linked with the static libtpuprof) in a fresh TPUPROF_DIR and
 * find and load the dumps it leaves (capfile_test_run.c). The probe's path comes from TP_PROBE
 * (set by CMake).
 */
#ifndef TP_CAPFILE_TEST_H
#define TP_CAPFILE_TEST_H

#include "readers/capfile/capfile.h"

#include <sys/types.h>

struct run {
	char dir[256]; /* TPUPROF_DIR of this run */
	char out[300]; /* stdout file */
	char err[300]; /* stderr file */
	pid_t pid;
	int status;
};

/* A fresh TPUPROF_DIR (and output file names) in r, removed by probe_cleanup. */
void probe_dir(struct run *r);
/* Starts the probe with `env` (NULL-terminated "K=V" list, added to a clean copy of the
 * environment without TPUPROF* variables) and TPUPROF_DIR = r->dir unless env sets it. */
void probe_start(struct run *r, const char *const *env, const char *a1, const char *a2);
/* Waits for the probe to end (its status in r->status). */
void probe_wait(struct run *r);
/* probe_dir, probe_start and probe_wait. */
void run_probe(struct run *r, const char *const *env, const char *a1, const char *a2);
/* run_probe with the one environment setting var ("K=V"). */
void run_probe_with(struct run *r, const char *var, const char *a1, const char *a2);
/* Removes every directory probe_dir made (call when all tests passed; kept for a look if not). */
void probe_cleanup(void);
/* The text of a file (at most 64 KiB, "" when absent) in a static buffer. */
char *read_text(const char *path);
int count_lines(const char *s);
/* The dump directories under r->dir (at most max), sorted by name; returns how many. */
int dump_dirs(const struct run *r, char out[][512], int max);
/* Reads the one dump under r->dir (the test fails if there is not exactly one). */
struct tp_profile *read_only_dump(const struct run *r);
/* run_probe, then read_only_dump. */
struct tp_profile *probe_dump(struct run *r, const char *const *env, const char *a1,
                              const char *a2);
/* Waits until the probe has printed "ready". */
void wait_ready(const struct run *r);
/* A whole file (malloc'd, *n bytes); the test fails if it cannot be read. */
uint8_t *load_file(const char *path, size_t *n);
/* Runs the probe as run_probe does; it must leave one dump, whose capture.tpp is returned
 * (malloc'd, *n bytes). */
uint8_t *probe_capture(const char *const *env, const char *a1, const char *a2, size_t *n);

#endif /* TP_CAPFILE_TEST_H */
