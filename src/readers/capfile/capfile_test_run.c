/*
 * capfile_test_run.c — runs the tpuprof_probe program for capfile_test.c and finds the dumps
 * it leaves (contracts in capfile_test.h). Owns the list of directories it made.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "readers/capfile/capfile_test.h"
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TP_PROBE
#error "TP_PROBE must name the tpuprof_probe binary"
#endif

extern char **environ;

/* Every directory made, removed at the end when all tests passed (kept for a look if not). */
static char g_made[64][256];
static int g_nmade;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void probe_dir(struct run *r)
{
	const char *base = getenv("TP_BINARY_DIR");
	snprintf(r->dir, sizeof r->dir, "%s/capfile_test.XXXXXX", base ? base : "/tmp");
	assert_non_null(mkdtemp(r->dir));
	if (g_nmade < 64)
		snprintf(g_made[g_nmade++], sizeof g_made[0], "%s", r->dir);
	snprintf(r->out, sizeof r->out, "%s/stdout.txt", r->dir);
	snprintf(r->err, sizeof r->err, "%s/stderr.txt", r->dir);
}

/* Starts the probe with `env` (NULL-terminated "K=V" list, added to a clean copy of the
 * environment without TPUPROF* variables) and TPUPROF_DIR = r->dir unless env sets it. */
void probe_start(struct run *r, const char *const *env, const char *a1, const char *a2)
{
	char *envp[64];
	size_t n = 0;
	static char dirvar[300];
	for (char **e = environ; *e && n < 40; e++)
		if (strncmp(*e, "TPUPROF", 7) != 0)
			envp[n++] = *e;
	int has_dir = 0;
	for (const char *const *e = env; e && *e; e++) {
		envp[n++] = (char *)*e;
		has_dir |= strncmp(*e, "TPUPROF_DIR=", 12) == 0;
	}
	if (!has_dir) {
		snprintf(dirvar, sizeof dirvar, "TPUPROF_DIR=%s", r->dir);
		envp[n++] = dirvar;
	}
	envp[n] = NULL;
	char *argv[] = {(char *)TP_PROBE, (char *)a1, (char *)a2, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, r->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, r->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(posix_spawn(&r->pid, TP_PROBE, &fa, NULL, argv, envp), 0);
	posix_spawn_file_actions_destroy(&fa);
}

void probe_wait(struct run *r)
{
	assert_int_equal(waitpid(r->pid, &r->status, 0), r->pid);
}

void run_probe(struct run *r, const char *const *env, const char *a1, const char *a2)
{
	probe_dir(r);
	probe_start(r, env, a1, a2);
	probe_wait(r);
}

void run_probe_with(struct run *r, const char *var, const char *a1, const char *a2)
{
	const char *const env[] = {var, NULL};
	run_probe(r, env, a1, a2);
}

char *read_text(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "rb");
	size_t n = 0;
	if (f) {
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int dump_dirs(const struct run *r, char out[][512], int max)
{
	DIR *d = opendir(r->dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "tpuprof_data_dev", 16) == 0 && n < max)
			snprintf(out[n++], 512, "%s/%s", r->dir, e->d_name);
	if (d)
		closedir(d);
	/* sort by name */
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (strcmp(out[i], out[j]) > 0) {
				char t[512];
				memcpy(t, out[i], 512);
				memcpy(out[i], out[j], 512);
				memcpy(out[j], t, 512);
			}
	return n;
}

struct tp_profile *read_only_dump(const struct run *r)
{
	char dirs[4][512];
	assert_int_equal(dump_dirs(r, dirs, 4), 1);
	assert_true(tp_capfile_probe(dirs[0]));
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_capfile_read(dirs[0], &p, &d);
	if (rc != TP_OK)
		fail_msg("read failed: %s", d.msg);
	return p;
}

struct tp_profile *probe_dump(struct run *r, const char *const *env, const char *a1, const char *a2)
{
	run_probe(r, env, a1, a2);
	return read_only_dump(r);
}

void wait_ready(const struct run *r)
{
	for (int i = 0; i < 2000; i++) {
		if (strstr(read_text(r->out), "ready"))
			return;
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	fail_msg("probe never got ready");
}

uint8_t *load_file(const char *path, size_t *n)
{
	uint8_t *b = (uint8_t *)tp_test_slurp(path, n);
	assert_non_null(b);
	return b;
}

/* Runs the probe as run_probe does; it must leave one dump, whose capture.tpp is returned
 * (malloc'd, *n bytes). */
uint8_t *probe_capture(const char *const *env, const char *a1, const char *a2, size_t *n)
{
	struct run r;
	run_probe(&r, env, a1, a2);
	char dirs[2][512], path[600];
	assert_int_equal(dump_dirs(&r, dirs, 2), 1);
	snprintf(path, sizeof path, "%s/capture.tpp", dirs[0]);
	return load_file(path, n);
}

void probe_cleanup(void)
{
	for (int i = 0; i < g_nmade; i++)
		nftw(g_made[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
