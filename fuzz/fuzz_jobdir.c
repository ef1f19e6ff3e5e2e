/*
 * fuzz_jobdir.c — libFuzzer target for the job form's search (tp_job_find, src/cli/job_find.c):
 * the input is decoded into a small folder tree (folders, files with a few bytes, dump-like
 * names, symbolic links into the tree, to itself, to a parent or to nothing, an unreadable
 * folder) made in a fresh folder under a scratch directory; the search runs over it and must
 * return TP_OK (or TP_ENOMEM) and a plan where every dump is a relative path below the root
 * whose real path stays inside the tree (the links never point out of it), no dump is taken
 * twice (by path, by real path or by output folder), and tp_cli_job_has_dumps agrees with the
 * number of dumps found. A hang is libFuzzer's -timeout. The tree is removed after each input.
 *
 * Input: a sequence of 4-byte operations (op, parent folder, name, number), a file's operation
 * followed by a length byte, a prefix selector and that many content bytes. Seeds: when
 * TP_FUZZ_SEED_DIR is set, LLVMFuzzerInitialize writes a few small trees there.
 */
#include "cli/job_int.h"
#include "fuzz_check.h"
#include "fuzz_scratch.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DIRS 32
#define MAX_OPS 64

enum {
	OP_DIR,
	OP_FILE,
	OP_LINK_DIR,
	OP_LINK_UP,
	OP_LINK_DANGLING,
	OP_LINK_SELF,
	OP_NOREAD,
	OP_LINK_FILE,
	OP_COUNT
};

struct tree {
	char root[PATH_MAX];
	char dirs[MAX_DIRS][PATH_MAX];
	size_t ndirs;
	char files[MAX_DIRS][PATH_MAX];
	size_t nfiles;
	char noread[MAX_DIRS][PATH_MAX];
	size_t nnoread;
};

/* Entry names the search and the readers' probes look for, with numbers filled in. */
static void entry_name(char *buf, size_t cap, uint8_t sel, uint8_t num)
{
	unsigned a = num % 4, b = (num / 4) % 4, c = num / 16;
	switch (sel % 12) {
	case 0:
		snprintf(buf, cap, "d%u", num % 8);
		break;
	case 1:
		snprintf(buf, cap, "bmprofile_data-%u", a);
		break;
	case 2:
		snprintf(buf, cap, "cdm_profile_data_dev%u-%u", a, b);
		break;
	case 3:
		snprintf(buf, cap, "tpuprof_data_dev%u-%u.%u", a, b, c);
		break;
	case 4:
		snprintf(buf, cap, "t%u.json", a);
		break;
	case 5:
		snprintf(buf, cap, "t%u.json.gz", a);
		break;
	case 6:
		snprintf(buf, cap, "global.profile");
		break;
	case 7:
		snprintf(buf, cap, "iter%u.profile", a);
		break;
	case 8:
		snprintf(buf, cap, "cdmlib%u_%u.profile", a, b);
		break;
	case 9:
		snprintf(buf, cap, a ? "c%u.tpp" : "capture.tpp", a);
		break;
	case 10:
		snprintf(buf, cap, "session.tpc");
		break;
	default:
		snprintf(buf, cap, "cdm_profile_data_dev%u", a);
		break;
	}
}

static void write_file(const char *path, const uint8_t *content, size_t n, uint8_t prefix)
{
	static const char *const pre[] = {"", "TPUPCAP", "[{\"ph\":\"X\",", "\x1f\x8b\x08"};
	static const size_t pre_len[] = {0, 8, 11, 3};
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return;
	if (write(fd, pre[prefix % 4], pre_len[prefix % 4]) < 0 || write(fd, content, n) < 0) {
		/* a short file is as good an input as any */
	}
	close(fd);
}

static void link_to(const char *target, const char *path)
{
	if (symlink(target, path) != 0)
		return; /* the name is taken already: the tree stays as it is (any tree is an input)
		         */
}

/* Applies one operation; returns the bytes it used, or 0 at the end of the input. */
static size_t apply(struct tree *t, const uint8_t *d, size_t n)
{
	if (n < 4)
		return 0;
	uint8_t op = d[0] % OP_COUNT;
	const char *parent = t->dirs[d[1] % t->ndirs];
	char name[64], path[PATH_MAX];
	entry_name(name, sizeof name, d[2], d[3]);
	if (snprintf(path, sizeof path, "%s/%s", parent, name) >= (int)sizeof path - 64)
		return 4;
	size_t used = 4;
	switch (op) {
	case OP_DIR:
	case OP_NOREAD:
		if (mkdir(path, 0755) == 0 && t->ndirs < MAX_DIRS)
			snprintf(t->dirs[t->ndirs++], PATH_MAX, "%s", path);
		if (op == OP_NOREAD && t->nnoread < MAX_DIRS)
			snprintf(t->noread[t->nnoread++], PATH_MAX, "%s", path);
		break;
	case OP_FILE: {
		size_t len = n > 4 ? d[4] % 48u : 0;
		uint8_t prefix = n > 5 ? d[5] : 0;
		used = n > 6 ? 6 : n;
		if (len > n - used)
			len = n - used;
		write_file(path, d + used, len, prefix);
		if (t->nfiles < MAX_DIRS)
			snprintf(t->files[t->nfiles++], PATH_MAX, "%s", path);
		used += len;
		break;
	}
	case OP_LINK_DIR: /* to any folder of the tree: an ancestor makes a loop */
		link_to(t->dirs[d[3] % t->ndirs], path);
		break;
	case OP_LINK_UP: /* ".." below the root only: every link stays inside the tree */
		if (strcmp(parent, t->root) != 0)
			link_to(d[3] & 1 ? ".." : ".", path);
		break;
	case OP_LINK_DANGLING:
		link_to("no-such-entry", path);
		break;
	case OP_LINK_SELF:
		link_to(name, path);
		break;
	case OP_LINK_FILE:
		if (t->nfiles)
			link_to(t->files[d[3] % t->nfiles], path);
		break;
	}
	return used;
}

/* Removes the tree at `path` without following links; 0 when all of it went. */
static int remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	DIR *dir = opendir(path);
	struct dirent *e;
	int rc = dir ? 0 : -1;
	while (dir && (e = readdir(dir)) != NULL) {
		char sub[PATH_MAX];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		rc |= remove_tree(sub);
	}
	if (dir)
		closedir(dir);
	return rc | rmdir(path);
}

static int starts_with_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* The plan's invariants; aborts (a libFuzzer crash) when one fails. */
static void check_plan(const struct tp_job_plan *pl, const char *real_root)
{
	char(*real)[PATH_MAX] = malloc(pl->n ? pl->n * sizeof *real : 1);
	if (!real)
		abort();
	for (size_t i = 0; i < pl->n; i++) {
		const struct tp_job_task *t = &pl->t[i];
		if (!t->input || !t->out || !t->device || !t->kind || t->input[0] == '/' ||
		    strstr(t->input, "//") || strcmp(t->input, "..") == 0 ||
		    strncmp(t->input, "../", 3) == 0 || strstr(t->input, "/../"))
			abort();
		char path[PATH_MAX * 2];
		snprintf(path, sizeof path, "%s/%s", pl->root, t->input);
		if (!realpath(path, real[i]) || !starts_with_dir(real[i], real_root))
			abort();
		for (size_t k = 0; k < i; k++)
			if (strcmp(pl->t[k].input, t->input) == 0 ||
			    strcmp(pl->t[k].out, t->out) == 0 || strcmp(real[k], real[i]) == 0)
				abort();
	}
	free(real);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tree t;
	const char *base = fuzz_scratch_dir_get("fuzz_jobdir");
	memset(&t, 0, sizeof t);
	snprintf(t.root, sizeof t.root, "%s/job", base);
	if (mkdir(t.root, 0755) != 0)
		abort(); /* the previous tree was not removed */
	snprintf(t.dirs[0], PATH_MAX, "%s", t.root);
	t.ndirs = 1;
	size_t off = 0, used;
	for (int ops = 0; ops < MAX_OPS && (used = apply(&t, data + off, size - off)) > 0; ops++)
		off += used;
	for (size_t i = 0; i < t.nnoread; i++)
		chmod(t.noread[i], 0); /* unreadable except to root, which reads it all the same */

	char real_root[PATH_MAX];
	if (!realpath(t.root, real_root))
		abort();
	struct tp_job_plan pl;
	tp_job_plan_init(&pl);
	struct tp_diag d = {0};
	int rc = tp_job_find(&pl, t.root, NULL, &d);
	if (rc != TP_OK && rc != TP_ENOMEM)
		abort();
	if (rc == TP_OK) {
		check_plan(&pl, real_root);
		if (tp_cli_job_has_dumps(t.root, 0) != (pl.n > 0))
			abort();
	}
	tp_job_plan_free(&pl);

	for (size_t i = 0; i < t.nnoread; i++)
		chmod(t.noread[i], 0755);
	if (remove_tree(t.root) != 0)
		abort();
	return 0;
}

/* Seeds: operations as the decoder reads them. */
static void seed(const char *dir, const char *name, const uint8_t *ops, size_t n)
{
	fuzz_put(dir, name, ops, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_seed_dir(argc, argv);
	if (!dir)
		return 0;
	/* bmprofile_data-0 with global.profile and iter0.profile; a loop link to the root. */
	static const uint8_t bm[] = {OP_DIR, 0,   1,   0,   OP_FILE,     1,       6, 0, 4,
	                             0,      'a', 'r', 'c', 'h',         OP_FILE, 1, 7, 0,
	                             2,      0,   1,   2,   OP_LINK_DIR, 1,       0, 0};
	/* node0/cdm_profile_data_dev1-2 with cdmlib0_0.profile; a second path to it. */
	static const uint8_t cdm[] = {OP_DIR, 0, 0, 0, OP_DIR, 1,           2, 9, OP_FILE,
	                              2,      8, 0, 3, 0,      1,           2, 3, OP_FILE,
	                              2,      6, 0, 0, 0,      OP_LINK_DIR, 0, 2, 2};
	/* t0.json trace, t1.json.gz, a capture folder, dangling, self and parent links, an
	 * unreadable folder. */
	static const uint8_t mix[] = {OP_FILE,
	                              0,
	                              4,
	                              0,
	                              4,
	                              2,
	                              '}',
	                              ']',
	                              0,
	                              0,
	                              OP_FILE,
	                              0,
	                              5,
	                              1,
	                              2,
	                              3,
	                              0,
	                              0,
	                              OP_DIR,
	                              0,
	                              3,
	                              21,
	                              OP_FILE,
	                              1,
	                              9,
	                              0,
	                              4,
	                              1,
	                              1,
	                              0,
	                              0,
	                              0,
	                              OP_LINK_DANGLING,
	                              0,
	                              0,
	                              3,
	                              OP_LINK_SELF,
	                              0,
	                              0,
	                              4,
	                              OP_LINK_UP,
	                              1,
	                              0,
	                              5,
	                              OP_NOREAD,
	                              0,
	                              0,
	                              6,
	                              OP_LINK_FILE,
	                              0,
	                              4,
	                              0};
	seed(dir, "gen_jobdir_bmprofile", bm, sizeof bm);
	seed(dir, "gen_jobdir_cdm", cdm, sizeof cdm);
	seed(dir, "gen_jobdir_mix", mix, sizeof mix);
	return 0;
}
