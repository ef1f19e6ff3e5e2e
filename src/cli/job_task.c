/*
 * job_task.c — one task of a job and the merge. A task converts one dump in this process
 * exactly as `tpuprof DUMP OUT_DIR/<out>` would (the same outputs, the same bytes), then
 * writes the dump's job entry next to them; a failed conversion writes an entry too, with the
 * exit code and the error, so the merge lists it. The merge reads the entries back and writes
 * the job report; it needs the per-dump outputs only, never the raw dumps.
 */
#include "cli/job_int.h"
#include "writers/jobreport/jobreport.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a task knows about its dump while it converts it. */
struct task_ctx {
	const struct tp_job_plan *pl;
	const struct tp_job_task *t;
	const char *dir; /* OUT_DIR/<out> */
	int entry_rc;
};

static void identity(struct tp_job *j, struct tp_job_entry *e, const struct tp_job_task *t)
{
	e->name = tp_job_str(j, t->input);
	e->out = tp_job_str(j, t->out);
	e->kind = tp_job_str(j, t->kind);
	e->device = tp_job_str(j, t->device);
	e->call = t->call;
	e->pid = t->pid;
}

static int write_entry(const struct tp_job_entry *e, const char *dir)
{
	struct tp_buf b;
	tp_buf_init(&b);
	tp_job_entry_json(e, &b);
	struct tp_diag d = {0};
	int rc = tp_write_buf_file(dir, TP_JOB_ENTRY_FILE, &b, &d);
	tp_buf_free(&b);
	if (rc != TP_OK)
		fprintf(stderr, "tpuprof: %s\n", d.msg);
	return rc;
}

/* tp_cli_convert_run's hook: the entry of the converted dump. */
static int on_done(void *arg, const struct tp_profile *p, const struct tp_analysis *a)
{
	struct task_ctx *c = arg;
	struct tp_job j;
	tp_job_init(&j, c->pl->title);
	struct tp_job_entry *e = tp_job_add(&j);
	int rc = e ? TP_OK : TP_ENOMEM;
	if (rc == TP_OK) {
		identity(&j, e, c->t);
		rc = tp_job_entry_build(&j, e, p, a);
	}
	if (rc == TP_OK)
		rc = write_entry(e, c->dir);
	else
		fprintf(stderr, "tpuprof: %s: out of memory building the job entry\n", c->dir);
	tp_job_free(&j);
	c->entry_rc = rc;
	return rc == TP_OK ? 0 : 3;
}

/* The last non-empty line of what the conversion printed on stderr, without "tpuprof: ". */
static void last_error(FILE *f, char *out, size_t cap)
{
	out[0] = 0;
	char line[TP_DIAG_MAX + 64];
	rewind(f);
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		const char *s = strncmp(line, "tpuprof: ", 9) == 0 ? line + 9 : line;
		snprintf(out, cap, "%s", s);
	}
}

/* Runs the conversion with stderr going to a temporary file as well, so the entry of a
 * failed dump can hold its error; what was printed is passed on to the real stderr. */
static int convert_captured(struct tp_cli_opts *o, struct task_ctx *c, char *err, size_t cap)
{
	fflush(stderr);
	FILE *cap_f = tmpfile();
	int saved = cap_f ? dup(STDERR_FILENO) : -1;
	if (saved >= 0 && dup2(fileno(cap_f), STDERR_FILENO) < 0) {
		close(saved);
		saved = -1;
	}
	int code = tp_cli_convert_run(o, on_done, c);
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
		char buf[4096];
		size_t n;
		rewind(cap_f);
		while ((n = fread(buf, 1, sizeof buf, cap_f)) > 0)
			fwrite(buf, 1, n, stderr);
		last_error(cap_f, err, cap);
	}
	if (cap_f)
		fclose(cap_f);
	return code;
}

void tp_job_task_fail(const struct tp_job_plan *pl, size_t k, const char *out_dir, int code,
                      const char *error)
{
	char *dir = tp_path_join(out_dir, pl->t[k].out);
	struct tp_diag d = {0};
	struct tp_job j;
	tp_job_init(&j, pl->title);
	struct tp_job_entry *e = dir && tp_mkdirs(dir, &d) == TP_OK ? tp_job_add(&j) : NULL;
	if (e) {
		identity(&j, e, &pl->t[k]);
		e->exit_code = code;
		e->error = tp_job_str(&j, error);
		write_entry(e, dir);
	}
	tp_job_free(&j);
	tp_free(dir);
}

/* argv for tp_cli_convert_opts: tpuprof INPUT DIR [options] -q? --jobs N. */
static int task_opts(const struct tp_job_plan *pl, const char *input, const char *dir, int jobs,
                     int quiet, struct tp_cli_opts *o, unsigned char *enabled, char **argv,
                     char *jobs_s)
{
	int argc = 0;
	argv[argc++] = "tpuprof";
	argv[argc++] = (char *)input;
	argv[argc++] = (char *)dir;
	for (size_t i = 0; i < pl->nopts; i++)
		argv[argc++] = (char *)pl->opts[i];
	if (quiet)
		argv[argc++] = "-q";
	if (jobs > 0) {
		snprintf(jobs_s, 16, "--jobs=%d", jobs > 64 ? 64 : jobs);
		argv[argc++] = jobs_s;
	}
	argv[argc] = NULL;
	return tp_cli_convert_opts(argc, argv, o, enabled);
}

int tp_job_task_run(const struct tp_job_plan *pl, size_t k, const char *out_dir, int jobs,
                    int quiet)
{
	const struct tp_job_task *t = &pl->t[k];
	char *input = tp_path_join(pl->root, t->input), *dir = tp_path_join(out_dir, t->out);
	char **argv = tp_malloc((pl->nopts + 8) * sizeof *argv);
	struct tp_diag d = {0};
	int code = 3;
	if (!input || !dir || !argv || tp_mkdirs(dir, &d) != TP_OK) {
		fprintf(stderr, "tpuprof: %s\n", d.msg[0] ? d.msg : "out of memory");
		goto out;
	}
	/* An entry of an earlier run must not pass for this one if this one dies. */
	char *old = tp_path_join(dir, TP_JOB_ENTRY_FILE);
	if (old)
		unlink(old);
	tp_free(old);
	unsigned char enabled[32];
	struct tp_cli_opts o;
	char jobs_s[16], err[TP_DIAG_MAX] = "";
	struct task_ctx c = {.pl = pl, .t = t, .dir = dir};
	code = task_opts(pl, input, dir, jobs, quiet, &o, enabled, argv, jobs_s);
	if (code == TP_CLI_RUN)
		code = convert_captured(&o, &c, err, sizeof err);
	else
		snprintf(err, sizeof err, "the plan's options are not accepted (see above)");
	if (code != 0 && c.entry_rc == TP_OK)
		tp_job_task_fail(pl, k, out_dir, code, err[0] ? err : "failed (no message)");
out:
	tp_free(argv);
	tp_free(input);
	tp_free(dir);
	return code;
}

/* ---- The merge ---------------------------------------------------------------------------- */

/* Adds the entry of task t (or a failed one saying why there is none). */
static int merge_task(struct tp_job *j, const struct tp_job_task *t, const char *out_dir)
{
	char *dir = tp_path_join(out_dir, t->out);
	char *path = dir ? tp_path_join(dir, TP_JOB_ENTRY_FILE) : NULL;
	struct tp_diag d = {0};
	int rc = path ? tp_job_entry_read(j, path, &d) : TP_ENOMEM;
	struct tp_job_entry *e = NULL;
	if (rc == TP_OK) {
		e = &j->e[j->n - 1];
	} else if (rc != TP_ENOMEM && (e = tp_job_add(j)) != NULL) {
		e->exit_code = 2;
		e->error =
		    tp_job_str(j, rc == TP_ENOTFOUND ? "not run: no job_entry.json (the task "
		                                       "did not finish)"
		                                     : d.msg);
	}
	if (e)
		identity(j, e, t);
	tp_free(path);
	tp_free(dir);
	return e && e->name && e->error ? TP_OK : TP_ENOMEM;
}

/* Without a plan: every job_entry.json below `dir` (symbolic links not followed). */
static int merge_scan(struct tp_job *j, const char *dir, int depth)
{
	DIR *dp = depth < 64 ? opendir(dir) : NULL;
	struct dirent *e;
	int rc = TP_OK;
	while (rc == TP_OK && dp && (e = readdir(dp)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char *p = tp_path_join(dir, e->d_name);
		struct stat st;
		if (!p)
			rc = TP_ENOMEM;
		else if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rc = merge_scan(j, p, depth + 1);
		else if (strcmp(e->d_name, TP_JOB_ENTRY_FILE) == 0) {
			struct tp_diag d = {0};
			int r = tp_job_entry_read(j, p, &d);
			rc = r == TP_ENOMEM ? r : TP_OK;
			if (r != TP_OK && r != TP_ENOMEM)
				rc = tp_job_note(j, d.msg);
		}
		tp_free(p);
	}
	if (dp)
		closedir(dp);
	return rc;
}

static void print_summary(const struct tp_job *j, const char *out_dir)
{
	struct tp_buf b;
	tp_buf_init(&b);
	tp_job_summary_text(j, &b);
	if (b.data)
		fputs(b.data, stdout);
	tp_buf_free(&b);
	fputs("job report in ", stdout);
	tp_text_fputs(stdout, out_dir, TP_TEXT_TERM | TP_TEXT_LINE);
	fputs("/: index.html job_summary.txt job_summary.json job.pftrace\n", stdout);
}

int tp_job_merge(const struct tp_job_plan *pl, const char *out_dir, int quiet)
{
	struct tp_job j;
	tp_job_init(&j, pl ? pl->title : out_dir);
	int rc = TP_OK, code = 0;
	for (size_t i = 0; pl && rc == TP_OK && i < pl->n; i++)
		rc = merge_task(&j, &pl->t[i], out_dir);
	for (size_t i = 0; pl && rc == TP_OK && i < pl->nnotes; i++)
		rc = tp_job_note(&j, pl->notes[i]);
	if (!pl && rc == TP_OK)
		rc = merge_scan(&j, out_dir, 0);
	struct tp_diag d = {0};
	if (rc != TP_OK) {
		fprintf(stderr, "tpuprof: out of memory merging the job\n");
		code = 3;
	} else if (!j.n) {
		fprintf(stderr,
		        "tpuprof: %s: no job entry found (run the tasks first: tpuprof job "
		        "--task K OUT_DIR)\n",
		        out_dir);
		code = 2;
	} else {
		tp_job_finish(&j);
		if (tp_job_report_write(&j, out_dir, &d) != TP_OK) {
			fprintf(stderr, "tpuprof: %s\n", d.msg);
			code = 3;
		} else {
			if (!quiet)
				print_summary(&j, out_dir);
			code = j.nfailed ? TP_JOB_EXIT_SOME_FAILED : 0;
		}
	}
	tp_job_free(&j);
	return code;
}

/* ---- A job folder read in this process (tpuprof diff of two job folders) ------------------- */

static int load_one(struct tp_job *j, const struct tp_job_plan *pl, const struct tp_job_task *t)
{
	struct tp_job_entry *e = tp_job_add(j);
	if (!e)
		return TP_ENOMEM;
	identity(j, e, t);
	char *in = tp_path_join(pl->root, t->input);
	struct tp_cli_opts o = {.quiet = 1};
	struct tp_profile *p = NULL;
	struct tp_analysis a;
	struct tp_diag d = {0};
	int rc = in ? tp_cli_load(in, &o, &p, &d) : TP_ENOMEM;
	if (rc == TP_OK && (rc = tp_analyze(p, &a)) == TP_OK) {
		rc = tp_job_entry_build(j, e, p, &a);
		tp_analysis_free(&a);
	} else if (rc != TP_ENOMEM) {
		e->exit_code = tp_status_exit_code(rc);
		e->error = tp_job_str(j, d.msg[0] ? d.msg : tp_strerror(rc));
		rc = e->error ? TP_OK : TP_ENOMEM;
	}
	tp_profile_free(p);
	tp_free(in);
	return rc;
}

int tp_cli_job_load(const char *dir, struct tp_job *j, struct tp_diag *d)
{
	struct tp_job_plan pl;
	tp_job_plan_init(&pl);
	int rc = tp_job_find(&pl, dir, NULL, d);
	for (size_t i = 0; rc == TP_OK && i < pl.n; i++)
		if ((rc = load_one(j, &pl, &pl.t[i])) != TP_OK)
			tp_diag_set(d, rc, "out of memory reading %s", pl.t[i].input);
	if (rc == TP_OK && !pl.n)
		rc = tp_diag_set(d, TP_ENOTFOUND, "%s: no profile data found below it", dir);
	tp_job_plan_free(&pl);
	if (rc == TP_OK)
		tp_job_finish(j);
	return rc;
}
