/*
 * job_int.h — private to the job subcommand's files in src/cli (job.c, job_find.c,
 * job_plan.c, job_task.c, job_run.c): the plan (one task per dump found below JOB_DIR) and
 * the steps that find, store, run and merge it.
 */
#ifndef TP_CLI_JOB_INT_H
#define TP_CLI_JOB_INT_H

#include "cli/cli.h"

#define TP_JOB_PLAN_FILE "job_plan.tsv"
#define TP_JOB_EXIT_SOME_FAILED 5

/* One dump to convert. Strings live in the plan's arena. */
struct tp_job_task {
	const char *kind;   /* "cdm", "bmprofile", "capture", "trace" */
	const char *device; /* device label ("dev0", "node1/dev0", a trace's name) */
	int64_t call, pid;  /* from the dump's name (0 when it has none) */
	uint64_t bytes;     /* input size, for the memory estimate */
	const char *out;    /* output folder relative to OUT_DIR */
	const char *input;  /* the dump relative to the plan's root */
};

struct tp_job_plan {
	struct tp_arena arena;
	const char *title; /* JOB_DIR as the user gave it */
	const char *root;  /* JOB_DIR as an absolute path */
	const char **opts; /* convert options every task passes on (--detail full, --sqlite) */
	size_t nopts, cap_opts;
	struct tp_job_task *t;
	size_t n, cap;
	const char **notes; /* what the search skipped, and why */
	size_t nnotes, cap_notes;
};

void tp_job_plan_init(struct tp_job_plan *pl);
void tp_job_plan_free(struct tp_job_plan *pl);
/* Appends a copy of s to the notes / the options. TP_OK or TP_ENOMEM. */
int tp_job_plan_note(struct tp_job_plan *pl, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int tp_job_plan_opt(struct tp_job_plan *pl, const char *opt);

/* job_find.c: fills pl's root, title and tasks with every dump below job_dir (any depth;
 * directories the readers accept, Chrome traces *.json / *.json.gz and capture files *.tpp),
 * never entering `skip` (OUT_DIR, when it lies inside; may be NULL) or a dump. Symbolic links
 * are followed once (loops and second visits noted, not followed); unreadable entries are
 * noted. Tasks come in path order. TP_OK, TP_ENOTFOUND (job_dir missing), TP_ENOMEM. */
int tp_job_find(struct tp_job_plan *pl, const char *job_dir, const char *skip, struct tp_diag *d);

/* job_plan.c: OUT_DIR/job_plan.tsv. */
int tp_job_plan_write(const struct tp_job_plan *pl, const char *out_dir, struct tp_diag *d);
int tp_job_plan_read(struct tp_job_plan *pl, const char *out_dir, struct tp_diag *d);

/* job_task.c: converts task k into OUT_DIR/<out>/ in this process with `jobs` threads and
 * writes its job_entry.json (also when the conversion fails: the entry then holds the exit
 * code and the error). Returns the conversion's exit code. */
int tp_job_task_run(const struct tp_job_plan *pl, size_t k, const char *out_dir, int jobs,
                    int quiet);
/* job_task.c: writes the entry of task k as failed with `code` and `error` (for a task that
 * could not write its own: killed, or never started). Best effort. */
void tp_job_task_fail(const struct tp_job_plan *pl, size_t k, const char *out_dir, int code,
                      const char *error);
/* job_task.c: builds the job report in OUT_DIR from the entries of the plan's tasks (a task
 * without job_entry.json counts as failed: "not run"), or without a plan from every
 * job_entry.json below OUT_DIR. Returns 0, TP_JOB_EXIT_SOME_FAILED, 2 (no entry), 3. */
int tp_job_merge(const struct tp_job_plan *pl, const char *out_dir, int quiet);

/* job_run.c: runs every task of the plan as a child process (`tpuprof job --task K`), at
 * most `jobs` threads in all and, past the first, only while the estimated memory of the
 * running ones stays under mem_limit bytes. Prints one line per finished dump unless quiet.
 * Returns the number of failed tasks, or -1 when no child could be started. */
struct tp_job_run_opts {
	int jobs;
	uint64_t mem_limit;
	int quiet, verbose;
};
long tp_job_run_all(const struct tp_job_plan *pl, const char *out_dir,
                    const struct tp_job_run_opts *o);

#endif /* TP_CLI_JOB_INT_H */
