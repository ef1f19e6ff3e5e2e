/*
 * job_plan.c — the job plan, OUT_DIR/job_plan.tsv: what `tpuprof job --plan` writes and
 * `--task K` and `--merge` read, so a scheduler (a Slurm array, GNU parallel, a Kubernetes
 * indexed Job) can run each task anywhere that sees JOB_DIR and OUT_DIR at the same paths.
 *
 *   # tpuprof job plan 1
 *   job<TAB>JOB_DIR as given        root<TAB>JOB_DIR absolute
 *   option<TAB>--sqlite             (one line per convert option the tasks pass on)
 *   note<TAB>text                   (what the search skipped, and why)
 *   count<TAB>N                     (the number of task lines, so a cut file is noticed)
 *   task<TAB>K<TAB>kind<TAB>device<TAB>call<TAB>pid<TAB>bytes<TAB>out<TAB>input
 *
 * Fields are percent-escaped (% TAB LF CR as %25 %09 %0A %0D), so any file name survives.
 * Owns the plan container (struct tp_job_plan: its arena and arrays).
 */
#include "cli/job_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tp_job_plan_init(struct tp_job_plan *pl)
{
	memset(pl, 0, sizeof *pl);
	tp_arena_init(&pl->arena, 0);
	pl->title = pl->root = "";
}

void tp_job_plan_free(struct tp_job_plan *pl)
{
	tp_free(pl->t);
	tp_free(pl->opts);
	tp_free(pl->notes);
	tp_arena_free(&pl->arena);
	memset(pl, 0, sizeof *pl);
}

static int push_str(struct tp_job_plan *pl, const char ***v, size_t *n, size_t *cap, const char *s)
{
	const char **nv = tp_grow(*v, sizeof **v, *n + 1, cap);
	const char *c = tp_arena_strdup(&pl->arena, s);
	if (!nv || !c) {
		if (nv)
			*v = nv;
		return TP_ENOMEM;
	}
	*v = nv;
	(*v)[(*n)++] = c;
	return TP_OK;
}

int tp_job_plan_note(struct tp_job_plan *pl, const char *fmt, ...)
{
	char msg[TP_DIAG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return push_str(pl, &pl->notes, &pl->nnotes, &pl->cap_notes, msg);
}

int tp_job_plan_opt(struct tp_job_plan *pl, const char *opt)
{
	return push_str(pl, &pl->opts, &pl->nopts, &pl->cap_opts, opt);
}

/* ---- Writing ------------------------------------------------------------------------------ */

static void field(struct tp_buf *b, const char *s)
{
	tp_buf_putc(b, '\t');
	for (; *s; s++) {
		if (*s == '%' || *s == '\t' || *s == '\n' || *s == '\r')
			tp_buf_printf(b, "%%%02X", (unsigned char)*s);
		else
			tp_buf_putc(b, *s);
	}
}

int tp_job_plan_write(const struct tp_job_plan *pl, const char *out_dir, struct tp_diag *d)
{
	struct tp_buf b;
	tp_buf_init(&b);
	tp_buf_puts(&b, "# tpuprof job plan 1\n# run each task with: tpuprof job --task K OUT_DIR "
	                "(K = 0 .. tasks-1), then: tpuprof job --merge OUT_DIR\njob");
	field(&b, pl->title);
	tp_buf_puts(&b, "\nroot");
	field(&b, pl->root);
	tp_buf_putc(&b, '\n');
	for (size_t i = 0; i < pl->nopts; i++) {
		tp_buf_puts(&b, "option");
		field(&b, pl->opts[i]);
		tp_buf_putc(&b, '\n');
	}
	for (size_t i = 0; i < pl->nnotes; i++) {
		tp_buf_puts(&b, "note");
		field(&b, pl->notes[i]);
		tp_buf_putc(&b, '\n');
	}
	tp_buf_printf(&b, "count\t%zu\n", pl->n);
	for (size_t i = 0; i < pl->n; i++) {
		const struct tp_job_task *t = &pl->t[i];
		tp_buf_printf(&b, "task\t%zu", i);
		field(&b, t->kind);
		field(&b, t->device);
		tp_buf_printf(&b, "\t%lld\t%lld\t%llu", (long long)t->call, (long long)t->pid,
		              (unsigned long long)t->bytes);
		field(&b, t->out);
		field(&b, t->input);
		tp_buf_putc(&b, '\n');
	}
	int rc = tp_write_buf_file(out_dir, TP_JOB_PLAN_FILE, &b, d);
	tp_buf_free(&b);
	return rc;
}

/* ---- Reading ------------------------------------------------------------------------------ */

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Splits `line` at tabs into at most `max` fields, unescaping each in place. */
static size_t split(char *line, char **f, size_t max)
{
	size_t n = 0;
	for (char *p = line; n < max;) {
		f[n++] = p;
		char *tab = strchr(p, '\t');
		if (tab)
			*tab = 0;
		char *w = p;
		for (char *r = p; *r; r++) {
			int hi, lo;
			if (*r == '%' && (hi = unhex(r[1])) >= 0 && (lo = unhex(r[2])) >= 0) {
				*w++ = (char)(hi << 4 | lo);
				r += 2;
			} else {
				*w++ = *r;
			}
		}
		*w = 0;
		if (!tab)
			break;
		p = tab + 1;
	}
	return n;
}

static int num(const char *s, int64_t *v)
{
	return tp_parse_i64(s, strlen(s), v);
}

/* 1 when path s is absolute, empty or has a ".." component (it would leave its folder). */
static int leaves(const char *s)
{
	if (!s[0] || s[0] == '/')
		return 1;
	for (const char *p = s; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == 0))
			return 1;
	return 0;
}

static int task_line(struct tp_job_plan *pl, char **f, size_t n)
{
	int64_t k, call, pid, bytes;
	if (n != 9 || num(f[1], &k) || k != (int64_t)pl->n || num(f[4], &call) || num(f[5], &pid) ||
	    num(f[6], &bytes) || bytes < 0)
		return TP_EFORMAT;
	struct tp_job_task *t = tp_grow(pl->t, sizeof *pl->t, pl->n + 1, &pl->cap);
	if (!t)
		return TP_ENOMEM;
	pl->t = t;
	t = &pl->t[pl->n];
	t->kind = tp_arena_strdup(&pl->arena, f[2]);
	t->device = tp_arena_strdup(&pl->arena, f[3]);
	t->call = call;
	t->pid = pid;
	t->bytes = (uint64_t)bytes;
	t->out = tp_arena_strdup(&pl->arena, f[7]);
	t->input = tp_arena_strdup(&pl->arena, f[8]);
	if (!t->kind || !t->device || !t->out || !t->input)
		return TP_ENOMEM;
	/* An output folder must stay inside OUT_DIR whoever edited the plan. */
	if (leaves(t->out) || !t->input[0])
		return TP_EFORMAT;
	pl->n++;
	return TP_OK;
}

static int plan_line(struct tp_job_plan *pl, char *line, int64_t *ntasks)
{
	char *f[10];
	size_t n = split(line, f, 10);
	if (line[0] == '#' || (n == 1 && !f[0][0]))
		return TP_OK;
	if (strcmp(f[0], "task") == 0)
		return task_line(pl, f, n);
	if (n != 2)
		return TP_EFORMAT;
	if (strcmp(f[0], "job") == 0)
		return (pl->title = tp_arena_strdup(&pl->arena, f[1])) ? TP_OK : TP_ENOMEM;
	if (strcmp(f[0], "root") == 0)
		return (pl->root = tp_arena_strdup(&pl->arena, f[1])) ? TP_OK : TP_ENOMEM;
	if (strcmp(f[0], "option") == 0)
		return tp_job_plan_opt(pl, f[1]);
	if (strcmp(f[0], "note") == 0)
		return tp_job_plan_note(pl, "%s", f[1]);
	if (strcmp(f[0], "count") == 0)
		return num(f[1], ntasks) ? TP_EFORMAT : TP_OK;
	return TP_EFORMAT;
}

int tp_job_plan_read(struct tp_job_plan *pl, const char *out_dir, struct tp_diag *d)
{
	char *path = tp_path_join(out_dir, TP_JOB_PLAN_FILE);
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	struct tp_file f;
	int rc = tp_file_load(&f, path, d);
	if (rc != TP_OK) {
		tp_free(path);
		return rc;
	}
	char *text = tp_malloc(f.size + 1);
	if (text) {
		memcpy(text, f.data, f.size);
		text[f.size] = 0;
	}
	tp_file_release(&f);
	int64_t ntasks = -1;
	unsigned long line = 1;
	rc = text ? TP_OK : TP_ENOMEM;
	for (char *p = text; rc == TP_OK && p && *p; line++) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		rc = plan_line(pl, p, &ntasks);
		p = nl ? nl + 1 : NULL;
	}
	if (rc == TP_OK && ntasks != (int64_t)pl->n)
		rc = tp_diag_line(d, TP_EFORMAT, path, line,
		                  "the plan lists %zu tasks but says \"count %lld\" (a cut file?)",
		                  pl->n, (long long)ntasks);
	else if (rc == TP_EFORMAT)
		tp_diag_line(d, rc, path, line - 1, "not a line of a tpuprof job plan");
	else if (rc == TP_ENOMEM)
		tp_diag_set(d, rc, "out of memory reading %s", path);
	tp_free(text);
	tp_free(path);
	return rc;
}
