/*
 * job.c — `tpuprof job`: a whole job in one command (docs/job.md).
 *
 *   tpuprof job JOB_DIR [OUT_DIR] [options]     find, convert every dump, write the report
 *   tpuprof job --plan JOB_DIR [OUT_DIR]        only find: OUT_DIR/job_plan.tsv, one task per dump
 *   tpuprof job --task K [OUT_DIR]              convert task K of the plan (any node)
 *   tpuprof job --merge [OUT_DIR]               the report from the per-dump outputs alone
 *
 * `tpuprof JOB_DIR OUT_DIR` lands here too when JOB_DIR is no dump itself but holds dumps.
 * Convert options (--detail, --sqlite, --disable_xlsx, ...) are passed on to every dump's
 * conversion and kept in the plan, so tasks run elsewhere convert alike. Parses the options
 * and wires the steps of job_find.c, job_plan.c, job_run.c and job_task.c together.
 */
#include "cli/job_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum mode { RUN = 0, PLAN, TASK, MERGE };

struct job_opts {
	enum mode mode;
	long task;
	const char *job_dir, *out_dir;
	struct tp_job_run_opts run;
	int have_mem;
	const char **pass; /* convert options, as typed (a value is its own element) */
	size_t npass;
};

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: tpuprof job JOB_DIR [OUT_DIR] [options]   convert every dump below JOB_DIR "
	       "into\n"
	       "                                                 OUT_DIR/<dump>/ and write the job "
	       "report\n"
	       "       tpuprof job --plan JOB_DIR [OUT_DIR]      write OUT_DIR/job_plan.tsv: one "
	       "task per dump\n"
	       "       tpuprof job --task K [OUT_DIR]            convert task K of the plan (K = 0 "
	       "..\n"
	       "                                                 tasks-1; e.g. "
	       "$SLURM_ARRAY_TASK_ID)\n"
	       "       tpuprof job --merge [OUT_DIR]             write the job report from the "
	       "per-dump\n"
	       "                                                 outputs (no raw dump needed)\n"
	       "OUT_DIR defaults to profile_out. Dumps: cdm_profile_data_dev{D}-{N}/, "
	       "bmprofile_data-{D}/,\n"
	       "tpuprof_data_dev{D}-{N}.{PID}/, any folder tpuprof converts, Chrome traces "
	       "*.json and\n"
	       "*.json.gz, at any depth. Report: OUT_DIR/index.html, job_summary.txt, "
	       "job_summary.json,\n"
	       "job.pftrace (see docs/job.md).\n\n"
	       "Options:\n"
	       "  -j, --jobs N         threads in all (default: the CPUs this process may use):\n"
	       "                       up to N dumps at once\n"
	       "  --mem-limit SIZE     start another dump only while the running ones' estimated "
	       "memory\n"
	       "                       stays under SIZE (e.g. 8G, 512M; default 3/4 of the "
	       "available\n"
	       "                       memory, at most the cgroup's limit; 0 = no limit); one "
	       "dump always runs\n"
	       "  -q, --quiet          print nothing but errors\n"
	       "  -v, --verbose        also print the plan and what the search skipped\n"
	       "  -h, --help           this text\n"
	       "Every convert option (tpuprof --help) is passed on to each dump's conversion.\n\n"
	       "Exit codes: 0 every dump converted, 1 usage error, 2 no dump found, 3 cannot "
	       "write,\n"
	       "5 some dumps failed (the others are converted; the report lists the failures).\n");
}

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "tpuprof job: ");
	char buf[TP_DIAG_MAX];
	snprintf(buf, sizeof buf, msg, arg);
	tp_text_fputs(stderr, buf, TP_TEXT_TERM | TP_TEXT_LINE);
	fprintf(stderr, " (see tpuprof job --help)\n");
	return 1;
}

/* SIZE: digits with an optional K, M, G or T (powers of 1024). */
static int parse_size(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (end == v || errno || v[0] == '-')
		return -1;
	int shift = 0;
	if (*end) {
		const char *u = strchr("KMGT", *end >= 'a' ? *end - 32 : *end);
		if (!u || !*u || (end[1] && !(end[1] == 'B' || end[1] == 'b')) ||
		    (end[1] && end[2]))
			return -1;
		shift = 10 * (int)(u - "KMGT" + 1);
	}
	if (shift && n > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

/* 3/4 of the memory this process may use, 0 (no limit) when unknown: a cgroup's limit (a
 * container's, Slurm's --mem) kills the whole job past it, whatever the machine has. */
static uint64_t default_mem_limit(void)
{
	return tp_mem_room() / 4 * 3;
}

static int job_option(int argc, char **argv, int *i, struct job_opts *o)
{
	const char *a = argv[*i];
	const char *v = NULL;
	size_t n = strcspn(a, "=");
	int has_eq = a[n] == '=';
	if (strcmp(a, "--plan") == 0 || strcmp(a, "--merge") == 0 ||
	    (strncmp(a, "--task", n) == 0 && n == 6)) {
		enum mode m = a[2] == 'p' ? PLAN : a[2] == 'm' ? MERGE : TASK;
		if (o->mode != RUN && o->mode != m)
			return usage_error("--plan, --task and --merge exclude each other (got %s)",
			                   a);
		o->mode = m;
		if (m != TASK)
			return 0;
		v = has_eq ? a + 7 : *i + 1 < argc ? argv[++*i] : NULL;
		char *end;
		o->task = v ? strtol(v, &end, 10) : -1;
		if (!v || end == v || *end || o->task < 0)
			return usage_error("--task needs a task number >= 0, got '%s'", v ? v : "");
		return 0;
	}
	int jobs = (strncmp(a, "--jobs", n) == 0 && n == 6) || strcmp(a, "-j") == 0;
	int mem = strncmp(a, "--mem-limit", n) == 0 && n == 11;
	if (!jobs && !mem)
		return -1;
	v = has_eq ? a + n + 1 : *i + 1 < argc ? argv[++*i] : NULL;
	if (jobs) {
		char *end;
		long j = v ? strtol(v, &end, 10) : 0;
		if (!v || end == v || *end || j < 1 || j > 1024)
			return usage_error("--jobs needs a thread count from 1 to 1024, got '%s'",
			                   v ? v : "");
		o->run.jobs = (int)j;
		return 0;
	}
	if (!v || parse_size(v, &o->run.mem_limit))
		return usage_error("--mem-limit needs a size (8G, 512M, 0), got '%s'", v ? v : "");
	o->have_mem = 1;
	return 0;
}

/* A convert option for the dumps: kept (with its value) after checking it is one. */
static int pass_option(int argc, char **argv, int *i, struct job_opts *o)
{
	int arity = tp_cli_convert_opt_arity(argv[*i]);
	if (strncmp(argv[*i], "--timings", 9) == 0 && arity >= 0)
		return usage_error("%s reports on one conversion; it is not an option of a job",
		                   argv[*i]);
	if (arity < 0)
		return usage_error("unknown option '%s'", argv[*i]);
	o->pass[o->npass++] = argv[*i];
	if (arity == 1) {
		if (*i + 1 >= argc)
			return usage_error("%s needs a value", argv[*i]);
		o->pass[o->npass++] = argv[++*i];
	}
	return 0;
}

/* Checks the passed-on options as the conversion will read them. */
static int check_pass(const struct job_opts *o)
{
	char **argv = tp_malloc((o->npass + 3) * sizeof *argv);
	if (!argv)
		return 3;
	int argc = 0;
	argv[argc++] = "tpuprof";
	for (size_t i = 0; i < o->npass; i++)
		argv[argc++] = (char *)o->pass[i];
	argv[argc++] = "JOB_DIR";
	argv[argc] = NULL;
	unsigned char enabled[32];
	struct tp_cli_opts co;
	int rc = tp_cli_convert_opts(argc, argv, &co, enabled);
	tp_free(argv);
	return rc == TP_CLI_RUN ? 0 : rc;
}

static int parse(int argc, char **argv, struct job_opts *o)
{
	const char *pos[2] = {0};
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (tp_cli_log_flag(a, &o->run.quiet, &o->run.verbose))
			continue;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		int rc = job_option(argc, argv, &i, o);
		if (rc > 0 ||
		    (rc < 0 && a[0] == '-' && a[1] && (rc = pass_option(argc, argv, &i, o))))
			return rc;
		if (rc == 0)
			continue;
		if (npos == 2)
			return usage_error("unexpected argument '%s'", a);
		pos[npos++] = a;
	}
	int want_job = o->mode == RUN || o->mode == PLAN;
	if (want_job && npos == 0)
		return usage_error("%s", "needs JOB_DIR (the folder holding the dumps)");
	if (!want_job && npos == 2)
		return usage_error(
		    "unexpected argument '%s' (--task and --merge take OUT_DIR only)", pos[1]);
	o->job_dir = want_job ? pos[0] : NULL;
	o->out_dir = want_job ? (npos == 2 ? pos[1] : "profile_out")
	             : npos   ? pos[0]
	                      : "profile_out";
	if (o->npass && (o->mode == TASK || o->mode == MERGE))
		return usage_error(
		    "convert options go to the plan (tpuprof job --plan ... %s), not to "
		    "--task or --merge",
		    o->pass[0]);
	return check_pass(o) ? 1 : TP_CLI_RUN;
}

/* ---- The modes ---------------------------------------------------------------------------- */

/* OUT_DIR must be a folder of its own: not a dump, not JOB_DIR. 0 or 1 (said why). */
static int check_out_dir(const struct job_opts *o)
{
	struct stat a, b;
	if (tp_is_dir(o->out_dir) && tp_cli_job_has_dumps(o->out_dir, 1))
		fprintf(
		    stderr,
		    "tpuprof: %s holds profile data (a dump, or dump folders below it): tpuprof "
		    "never writes its outputs among dumps; give an output folder of its own\n",
		    o->out_dir);
	else if (stat(o->job_dir, &a) == 0 && stat(o->out_dir, &b) == 0 && a.st_dev == b.st_dev &&
	         a.st_ino == b.st_ino)
		fprintf(stderr,
		        "tpuprof: OUT_DIR %s is JOB_DIR itself: the outputs would land in the "
		        "dumps' folder; give an output folder of its own\n",
		        o->out_dir);
	else
		return 0;
	return 1;
}

static void print_notes(const struct tp_job_plan *pl, int verbose)
{
	for (size_t i = 0; i < pl->nnotes && (verbose || i < 5); i++)
		fprintf(stderr, "tpuprof: note: %s\n", pl->notes[i]);
	if (!verbose && pl->nnotes > 5)
		fprintf(stderr, "tpuprof: note: ... and %zu more (-v, or job_plan.tsv)\n",
		        pl->nnotes - 5);
}

/* Finds the dumps and writes the plan. 0, or the exit code after saying why. */
static int make_plan(const struct job_opts *o, struct tp_job_plan *pl)
{
	struct tp_diag d = {0};
	if (tp_job_find(pl, o->job_dir, o->out_dir, &d) != TP_OK) {
		fprintf(stderr, "tpuprof: %s\n", d.msg);
		return d.status == TP_ENOMEM ? 3 : 2;
	}
	for (size_t i = 0; i < o->npass; i++)
		if (tp_job_plan_opt(pl, o->pass[i]) != TP_OK)
			return 3;
	if (!o->run.quiet || !pl->n)
		print_notes(pl, o->run.verbose);
	if (!pl->n) {
		fprintf(stderr,
		        "tpuprof: %s: no profile data found below it (no "
		        "cdm_profile_data_dev*, bmprofile_data-*, tpuprof_data_dev* "
		        "folder or Chrome trace)\n",
		        o->job_dir);
		return 2;
	}
	if (tp_job_plan_write(pl, o->out_dir, &d) != TP_OK) {
		fprintf(stderr, "tpuprof: %s\n", d.msg);
		return 3;
	}
	return 0;
}

static size_t devices(const struct tp_job_plan *pl)
{
	size_t n = 0;
	for (size_t i = 0; i < pl->n; i++) {
		size_t k = 0;
		while (k < i && strcmp(pl->t[k].device, pl->t[i].device) != 0)
			k++;
		n += k == i;
	}
	return n;
}

static int run_plan_mode(const struct job_opts *o, struct tp_job_plan *pl)
{
	int code = make_plan(o, pl);
	if (code || o->run.quiet)
		return code;
	printf("%zu dumps of %zu devices below %s: plan in %s/%s\n", pl->n, devices(pl), o->job_dir,
	       o->out_dir, TP_JOB_PLAN_FILE);
	printf("run each task: tpuprof job --task K %s   (K = 0 .. %zu; a Slurm array: "
	       "--array=0-%zu)\nthen: tpuprof job --merge %s\n",
	       o->out_dir, pl->n - 1, pl->n - 1, o->out_dir);
	return 0;
}

static int run_job(struct job_opts *o, struct tp_job_plan *pl)
{
	int code = make_plan(o, pl);
	if (code)
		return code;
	if (!o->run.jobs) {
		int n = tp_cpu_count();
		o->run.jobs = n > 1024 ? 1024 : n;
	}
	if (!o->have_mem)
		o->run.mem_limit = default_mem_limit();
	if (!o->run.quiet) {
		char mem[64] = "no memory limit";
		if (o->run.mem_limit)
			snprintf(mem, sizeof mem, "memory limit %.1f GiB",
			         (double)o->run.mem_limit / (1024.0 * 1024 * 1024));
		printf("%zu dumps of %zu devices below %s; converting up to %d at once (%s) into "
		       "%s/\n",
		       pl->n, devices(pl), o->job_dir,
		       o->run.jobs < (int)pl->n ? o->run.jobs : (int)pl->n, mem, o->out_dir);
	}
	fflush(stdout);
	long failed = tp_job_run_all(pl, o->out_dir, &o->run);
	if (failed < 0)
		return 3;
	return tp_job_merge(pl, o->out_dir, o->run.quiet);
}

static int run_task(const struct job_opts *o, struct tp_job_plan *pl)
{
	struct tp_diag d = {0};
	if (tp_job_plan_read(pl, o->out_dir, &d) != TP_OK) {
		fprintf(stderr, "tpuprof: %s (make one with tpuprof job --plan JOB_DIR %s)\n",
		        d.msg, o->out_dir);
		return 2;
	}
	if ((size_t)o->task >= pl->n) {
		fprintf(stderr, "tpuprof: task %ld: the plan in %s has %zu tasks (0 .. %zu)\n",
		        o->task, o->out_dir, pl->n, pl->n ? pl->n - 1 : 0);
		return 1;
	}
	return tp_job_task_run(pl, (size_t)o->task, o->out_dir, o->run.jobs, o->run.quiet);
}

static int run_merge(const struct job_opts *o, struct tp_job_plan *pl)
{
	struct tp_diag d = {0};
	int rc = tp_job_plan_read(pl, o->out_dir, &d);
	if (rc != TP_OK && rc != TP_ENOTFOUND) {
		fprintf(stderr, "tpuprof: %s\n", d.msg);
		return 2;
	}
	return tp_job_merge(rc == TP_OK ? pl : NULL, o->out_dir, o->run.quiet);
}

/* Runs a mode that writes OUT_DIR's own files under OUT_DIR's lock. */
static int locked(struct job_opts *o, struct tp_job_plan *pl,
                  int (*fn)(struct job_opts *o, struct tp_job_plan *pl))
{
	struct tp_diag d = {0};
	if (tp_mkdirs(o->out_dir, &d) != TP_OK) {
		fprintf(stderr, "tpuprof: %s\n", d.msg);
		return 3;
	}
	int fd = tp_cli_lock_dir(o->out_dir, o->run.quiet, &d);
	if (fd < 0) {
		fprintf(stderr, "tpuprof: %s\n", d.msg);
		return 3;
	}
	int code = fn(o, pl);
	tp_cli_unlock_dir(fd, o->out_dir);
	return code;
}

static int plan_fn(struct job_opts *o, struct tp_job_plan *pl)
{
	return run_plan_mode(o, pl);
}

static int merge_fn(struct job_opts *o, struct tp_job_plan *pl)
{
	return run_merge(o, pl);
}

int tp_cli_job(int argc, char **argv)
{
	struct job_opts o;
	memset(&o, 0, sizeof o);
	o.pass = tp_malloc(((size_t)argc + 1) * sizeof *o.pass);
	if (!o.pass)
		return 3;
	int code = parse(argc, argv, &o);
	struct tp_job_plan pl;
	tp_job_plan_init(&pl);
	if (code == TP_CLI_RUN) {
		tp_temp_cleanup_on_signals();
		if ((o.mode == RUN || o.mode == PLAN) && check_out_dir(&o))
			code = 1;
		else if (o.mode == TASK)
			code = run_task(&o, &pl);
		else
			code = locked(&o, &pl,
			              o.mode == RUN    ? run_job
			              : o.mode == PLAN ? plan_fn
			                               : merge_fn);
	}
	tp_job_plan_free(&pl);
	tp_free(o.pass);
	return code;
}
