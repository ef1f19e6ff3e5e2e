/*
 * job_find.c — finds the dumps of a job: walks JOB_DIR to any depth, in name order, and makes
 * one task per dump with its device and call taken from the name the writing tool gave it:
 *   cdm_profile_data_dev{D}-{N}   (bigTpuProfile: device D, call N; "-N" may be absent)
 *   bmprofile_data-{D}            (bmruntime / bmlib: device D)
 *   tpuprof_data_dev{D}-{N}.{PID} (libtpuprof: device D, session N, process PID)
 *   NAME.json, NAME.json.gz       (Chrome traces: one device named NAME)
 * Any other folder a reader accepts is a device of its own, named by its path. Devices in
 * different folders are different devices (node1/dev0 and node2/dev0). Owns the walk's
 * state: the folders already entered (device and inode), so a symbolic link loop or a second
 * path to the same folder is noted instead of followed.
 */
#include "cli/job_int.h"
#include "readers/outdir/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 64

struct seen {
	dev_t dev;
	ino_t ino;
};

struct walk {
	struct tp_job_plan *pl;
	struct seen *seen; /* folders entered and dumps taken */
	size_t nseen, cap_seen;
	int have_skip;
	struct seen skip;
	int oom;
	int stop_at_first; /* tp_cli_job_has_dumps */
	int folders_only;  /* tp_cli_job_has_dumps: dump folders, not trace files */
};

/* 1 when (dev, ino) was seen; else records it and returns 0. */
static int seen_before(struct walk *w, const struct stat *st)
{
	for (size_t i = 0; i < w->nseen; i++)
		if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
			return 1;
	struct seen *n = tp_grow(w->seen, sizeof *w->seen, w->nseen + 1, &w->cap_seen);
	if (!n) {
		w->oom = 1;
		return 1;
	}
	w->seen = n;
	w->seen[w->nseen++] = (struct seen){st->st_dev, st->st_ino};
	return 0;
}

/* Parses decimal digits at *s into *v; 0 and *s moved past them, or -1 when none. */
static int digits(const char **s, int64_t *v)
{
	size_t n = strspn(*s, "0123456789");
	if (!n || n > 18)
		return -1;
	if (tp_parse_i64(*s, n, v) != 0)
		return -1;
	*s += n;
	return 0;
}

/* Device and call (and pid) from the dump's file name; 0 when it follows none of the naming
 * schemes. */
static int parse_name(const char *base, int64_t *dev, int64_t *call, int64_t *pid)
{
	const char *s;
	*call = *pid = 0;
	if (strncmp(base, "cdm_profile_data_dev", 20) == 0) {
		s = base + 20;
		if (digits(&s, dev))
			return 0;
		if (*s == 0)
			return 1;
		return *s++ == '-' && !digits(&s, call) && *s == 0;
	}
	if (strncmp(base, "tpuprof_data_dev", 16) == 0) {
		s = base + 16;
		return !digits(&s, dev) && *s++ == '-' && !digits(&s, call) && *s++ == '.' &&
		       !digits(&s, pid) && *s == 0;
	}
	if (strncmp(base, "bmprofile_data-", 15) == 0) {
		s = base + 15;
		return !digits(&s, dev) && *s == 0;
	}
	return 0;
}

static const char *kind_of(const struct tp_cli_reader *r)
{
	if (strcmp(r->name, "sophgo-cdm") == 0)
		return "cdm";
	if (strcmp(r->name, "sophgo-bmprofile") == 0)
		return "bmprofile";
	if (strcmp(r->name, "tpuprof-capture") == 0)
		return "capture";
	return "trace";
}

/* Bytes of input: the file, or the regular files directly in the folder; a gzip'd trace
 * counts 8 times its size (what it inflates to, roughly, for the memory estimate). */
static uint64_t input_bytes(const char *path, const struct stat *st)
{
	if (S_ISREG(st->st_mode)) {
		size_t n = strlen(path);
		uint64_t b = (uint64_t)st->st_size;
		return n > 3 && strcmp(path + n - 3, ".gz") == 0 ? b * 8 : b;
	}
	DIR *dir = opendir(path);
	uint64_t total = 0;
	struct dirent *e;
	struct stat fs;
	while (dir && (e = readdir(dir)) != NULL)
		if (fstatat(dirfd(dir), e->d_name, &fs, 0) == 0 && S_ISREG(fs.st_mode))
			total += (uint64_t)fs.st_size;
	if (dir)
		closedir(dir);
	return total;
}

/* The name without .json / .json.gz / .tpp (a trace's output folder and device name). */
static char *stem(const char *rel)
{
	static const char *const ext[] = {".json.gz", ".json", ".tpp"};
	char *s = tp_strdup(rel);
	size_t n = s ? strlen(s) : 0;
	for (size_t i = 0; s && i < sizeof ext / sizeof *ext; i++) {
		size_t k = strlen(ext[i]);
		if (n > k && strcmp(s + n - k, ext[i]) == 0) {
			s[n - k] = 0;
			break;
		}
	}
	return s;
}

/* An output folder no earlier task uses: rel, else rel~2, rel~3, ... */
static const char *unique_out(struct tp_job_plan *pl, const char *rel)
{
	char buf[PATH_MAX + 16];
	snprintf(buf, sizeof buf, "%s", rel);
	for (unsigned k = 2;; k++) {
		size_t i = 0;
		while (i < pl->n && strcmp(pl->t[i].out, buf) != 0)
			i++;
		if (i == pl->n)
			return tp_arena_strdup(&pl->arena, buf);
		snprintf(buf, sizeof buf, "%s~%u", rel, k);
	}
}

static int add_task(struct walk *w, const char *path, const char *rel, const struct stat *st,
                    const struct tp_cli_reader *r)
{
	struct tp_job_plan *pl = w->pl;
	struct tp_job_task *t = tp_grow(pl->t, sizeof *pl->t, pl->n + 1, &pl->cap);
	char *name = stem(rel);
	if (!t || !name) {
		tp_free(name);
		return TP_ENOMEM;
	}
	pl->t = t;
	t = &pl->t[pl->n];
	memset(t, 0, sizeof *t);
	t->kind = kind_of(r);
	t->bytes = input_bytes(path, st);
	t->input = tp_arena_strdup(&pl->arena, rel);
	t->out = unique_out(pl, name);
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	int64_t dev;
	char label[PATH_MAX + 32];
	if (parse_name(base, &dev, &t->call, &t->pid))
		snprintf(label, sizeof label, "%.*sdev%lld", slash ? (int)(slash - name + 1) : 0,
		         name, (long long)dev);
	else
		snprintf(label, sizeof label, "%s", name);
	t->device = tp_arena_strdup(&pl->arena, label);
	tp_free(name);
	if (!t->input || !t->out || !t->device)
		return TP_ENOMEM;
	pl->n++;
	return TP_OK;
}

/* Files worth probing: the names Chrome traces and captures have (probing every file of a
 * large tree would read each one's head). */
static int candidate_file(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && strcmp(name + n - 5, ".json") == 0) ||
	       (n > 8 && strcmp(name + n - 8, ".json.gz") == 0) ||
	       (n > 4 && strcmp(name + n - 4, ".tpp") == 0);
}

static int walk_dir(struct walk *w, const char *path, const char *rel, int depth);

/* A plain .json file is taken for a Chrome trace only when its first 64 KiB also name an
 * event phase ("ph"): the readers' probe accepts any JSON array, and a job folder may hold
 * other JSON files (configurations, results). */
static int looks_like_trace(const char *path)
{
	size_t n = strlen(path);
	if (n < 5 || strcmp(path + n - 5, ".json") != 0)
		return 1;
	FILE *f = fopen(path, "rb");
	char *buf = f ? tp_malloc(65537) : NULL;
	size_t got = buf ? fread(buf, 1, 65536, f) : 0;
	int yes = 0;
	for (size_t i = 0; buf && i + 4 <= got && !yes; i++)
		yes = memcmp(buf + i, "\"ph\"", 4) == 0;
	tp_free(buf);
	if (f)
		fclose(f);
	return yes;
}

/* One entry of a folder: a dump becomes a task, a folder is walked, the rest is ignored. */
static int visit(struct walk *w, const char *path, const char *rel, int depth, int is_link)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		if (is_link || errno != ENOENT)
			return tp_job_plan_note(w->pl, "%s: not followed: %s", rel,
			                        errno == ELOOP ? "symbolic link loop"
			                                       : strerror(errno));
		return TP_OK;
	}
	if (w->have_skip && st.st_dev == w->skip.dev && st.st_ino == w->skip.ino)
		return TP_OK; /* OUT_DIR inside JOB_DIR */
	if (!S_ISDIR(st.st_mode) && !(S_ISREG(st.st_mode) && candidate_file(rel)))
		return TP_OK;
	if (S_ISREG(st.st_mode) && access(path, R_OK) != 0)
		return tp_job_plan_note(w->pl, "%s: cannot read: %s", rel, strerror(errno));
	if (S_ISDIR(st.st_mode) && tp_outdir_probe(path))
		return TP_OK; /* an earlier tpuprof output folder, not a dump */
	const struct tp_cli_reader *r = tp_cli_probe(path);
	if (r && (S_ISREG(st.st_mode) ? w->folders_only || !looks_like_trace(path) : 0))
		r = NULL;
	if (r || S_ISDIR(st.st_mode)) {
		if (seen_before(w, &st))
			return w->oom
			           ? TP_ENOMEM
			           : tp_job_plan_note(w->pl,
			                              "%s: not followed: the same %s was already "
			                              "searched (symbolic link)",
			                              rel, r ? "dump" : "folder");
	}
	if (r) {
		if (w->stop_at_first) {
			w->pl->n = 1;
			return TP_OK;
		}
		return add_task(w, path, rel, &st, r);
	}
	if (!S_ISDIR(st.st_mode))
		return TP_OK;
	if (depth >= MAX_DEPTH)
		return tp_job_plan_note(w->pl, "%s: not searched: deeper than %d folders", rel,
		                        MAX_DEPTH);
	return walk_dir(w, path, rel, depth + 1);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder `path` (without . and ..), sorted; NULL with *n 0 when it cannot be
 * read (noted). */
static char **list_dir(struct walk *w, const char *path, const char *rel, size_t *n)
{
	*n = 0;
	DIR *dir = opendir(path);
	if (!dir) {
		tp_job_plan_note(w->pl, "%s: cannot read: %s", rel[0] ? rel : ".", strerror(errno));
		return NULL;
	}
	char **names = NULL;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char **nn = tp_grow(names, sizeof *names, *n + 1, &cap);
		char *s = tp_strdup(e->d_name);
		if (!nn || !s) {
			tp_free(s);
			if (nn)
				names = nn;
			w->oom = 1;
			break;
		}
		names = nn;
		names[(*n)++] = s;
	}
	closedir(dir);
	if (*n)
		qsort(names, *n, sizeof *names, cmp_name);
	return names;
}

static int walk_dir(struct walk *w, const char *path, const char *rel, int depth)
{
	size_t n;
	char **names = list_dir(w, path, rel, &n);
	int rc = w->oom ? TP_ENOMEM : TP_OK;
	for (size_t i = 0; i < n && rc == TP_OK && !(w->stop_at_first && w->pl->n); i++) {
		char *p = tp_path_join(path, names[i]);
		char *r = rel[0] ? tp_path_join(rel, names[i]) : tp_strdup(names[i]);
		struct stat lst;
		if (!p || !r)
			rc = TP_ENOMEM;
		else if (lstat(p, &lst) == 0)
			rc = visit(w, p, r, depth, S_ISLNK(lst.st_mode));
		tp_free(p);
		tp_free(r);
	}
	for (size_t i = 0; i < n; i++)
		tp_free(names[i]);
	tp_free(names);
	return rc != TP_OK ? rc : w->oom ? TP_ENOMEM : TP_OK;
}

static int find(struct tp_job_plan *pl, const char *job_dir, const char *skip, int first,
                struct tp_diag *d)
{
	struct walk w = {.pl = pl, .stop_at_first = first, .folders_only = first == 2};
	struct stat st;
	char abs[PATH_MAX];
	if (stat(job_dir, &st) != 0 || !S_ISDIR(st.st_mode) || !realpath(job_dir, abs))
		return tp_diag_set(d, TP_ENOTFOUND, "%s: %s", job_dir,
		                   errno == ENOENT ? "no such folder" : strerror(errno));
	struct stat sk;
	if (skip && stat(skip, &sk) == 0) {
		w.have_skip = 1;
		w.skip = (struct seen){sk.st_dev, sk.st_ino};
	}
	pl->root = tp_arena_strdup(&pl->arena, abs);
	pl->title = tp_arena_strdup(&pl->arena, job_dir);
	int rc = pl->root && pl->title ? TP_OK : TP_ENOMEM;
	const struct tp_cli_reader *r = tp_cli_probe(abs);
	char *slash = strrchr(abs, '/');
	if (rc == TP_OK && r && slash && slash[1]) {
		/* JOB_DIR is a dump itself: a job of one, rooted at its parent. */
		*slash = 0;
		pl->root = tp_arena_strdup(&pl->arena, abs[0] ? abs : "/");
		rc = !pl->root ? TP_ENOMEM
		     : first   ? (pl->n = 1, TP_OK)
		               : add_task(&w, job_dir, slash + 1, &st, r);
	} else if (rc == TP_OK && !seen_before(&w, &st)) {
		rc = walk_dir(&w, abs, "", 0);
	}
	tp_free(w.seen);
	if (rc != TP_OK)
		return tp_diag_set(d, rc, "out of memory searching %s", job_dir);
	return TP_OK;
}

int tp_job_find(struct tp_job_plan *pl, const char *job_dir, const char *skip, struct tp_diag *d)
{
	return find(pl, job_dir, skip, 0, d);
}

int tp_cli_job_has_dumps(const char *dir, int folders_only)
{
	struct tp_job_plan pl;
	tp_job_plan_init(&pl);
	struct tp_diag d = {0};
	int found = find(&pl, dir, NULL, folders_only ? 2 : 1, &d) == TP_OK && pl.n > 0;
	tp_job_plan_free(&pl);
	return found;
}
