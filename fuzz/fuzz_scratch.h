/*
 * fuzz_scratch.h — the scratch directory or file a fuzz target writes its input into (readers
 * that take a path): made once under /tmp on first use and removed when the fuzzer exits
 * (atexit: libFuzzer returns from its run loop after -runs=N or -max_total_time), so a
 * `make test` leaves no fuzz_* entries in /tmp. A crash still leaves it for inspection.
 * Owns one process-wide path; a target includes this header once.
 */
#ifndef TP_FUZZ_SCRATCH_H
#define TP_FUZZ_SCRATCH_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_scratch[64];
static int fuzz_scratch_dir;

static void fuzz_scratch_remove(void)
{
	if (!fuzz_scratch[0])
		return;
	if (!fuzz_scratch_dir) {
		unlink(fuzz_scratch);
		return;
	}
	DIR *d = opendir(fuzz_scratch);
	if (d) {
		struct dirent *e;
		char p[sizeof fuzz_scratch + 260];
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(p, sizeof p, "%s/%s", fuzz_scratch, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(fuzz_scratch);
}

/* Returns the scratch directory /tmp/<prefix>_XXXXXX, made on the first call; aborts if it
 * cannot be made (the fuzzer cannot run without it). */
static inline const char *fuzz_scratch_dir_get(const char *prefix)
{
	if (!fuzz_scratch[0]) {
		snprintf(fuzz_scratch, sizeof fuzz_scratch, "/tmp/%s_XXXXXX", prefix);
		if (!mkdtemp(fuzz_scratch))
			abort();
		fuzz_scratch_dir = 1;
		atexit(fuzz_scratch_remove);
	}
	return fuzz_scratch;
}

/* Returns the scratch file /tmp/<prefix>_XXXXXX, made (empty) on the first call. */
static inline const char *fuzz_scratch_file_get(const char *prefix)
{
	if (!fuzz_scratch[0]) {
		snprintf(fuzz_scratch, sizeof fuzz_scratch, "/tmp/%s_XXXXXX", prefix);
		int fd = mkstemp(fuzz_scratch);
		if (fd < 0)
			abort();
		close(fd);
		atexit(fuzz_scratch_remove);
	}
	return fuzz_scratch;
}

/* Writes the n bytes at p as the file at path; aborts if it cannot (the fuzzer cannot run
 * without it). */
static inline void fuzz_write(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
		abort();
}

/* fuzz_write of the file dir/name. */
static inline void fuzz_put(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		abort();
	fuzz_write(path, p, n);
}

#endif /* TP_FUZZ_SCRATCH_H */
