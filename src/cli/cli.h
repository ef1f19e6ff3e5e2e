/*
 * cli.h — the tpuprof command: one file per subcommand (convert.c with its options in
 * convert_opts.c, check.c, diff.c, job.c with the job_*.c files and job_int.h) and the
 * registries of readers and outputs (registry.c). main.c dispatches.
 */
#ifndef TP_CLI_H
#define TP_CLI_H

#include "writers/sink/sink.h"

/* Options of the convert (default) subcommand. */
struct tp_cli_opts {
	const char *in_dir;
	const char *out_dir;
	enum tp_arch arch;    /* --arch, TP_ARCH_UNKNOWN = detect */
	double tiu_freq_mhz;  /* --tiu_freq, 0 = arch default */
	double gdma_freq_mhz; /* --gdma_freq */
	int num_core;         /* --num_core: cores shown (tracks of higher cores dropped), 0 all */
	int quiet, verbose;
	int force_arch; /* --force-arch: --arch even against the dump's own arch line */
	const char *sparse_ratios;
	int trace_args_compact; /* --trace_args compact */
	const char *trace_file; /* --trace_file: host Chrome trace or capture merged onto the device
	                           timeline */
	unsigned char *enabled; /* per registry output: 1 = write */
	int jobs;               /* --jobs: outputs written at once, 0 = tp_jobs_default() */
	int detail;             /* --detail: enum tp_cli_detail */
	uint64_t xlsx_rows;     /* --xlsx_rows: 0 = the workbook's default cap */
	long progress_delay_ms; /* --progress-delay: ms before the progress line shows */
	const char *timings;    /* --timings FILE: the per-phase report (common/timings.h) */
};
/* --detail: how much per-command detail readers keep (the Sophgo readers' argument sets). */
enum tp_cli_detail { TP_CLI_DETAIL_AUTO = 0, TP_CLI_DETAIL_FULL = 1, TP_CLI_DETAIL_NONE = -1 };

/* A reader the CLI can dispatch to. */
struct tp_cli_reader {
	const char *name;
	const char *doc;
	int (*probe)(const char *dir);
	int (*read)(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d);
	int takes_file;  /* 1: the input is a file (in_dir names it), not a directory */
	int takes_stdin; /* 1: reads the input "-" (standard input); the first such reader does */
};

/* Registries (registry.c): set *out to a static array and return its length. */
size_t tp_cli_outputs(const struct tp_output **out);
size_t tp_cli_readers(const struct tp_cli_reader *const **out);
/* Runs the steps the enabled outputs (enabled[i] for the registry's output i) need before the
 * analysis, once each, on the calling thread after the input is read: the notes the summaries
 * repeat (the workbook's row cap, what the trace outputs cut or cannot draw). TP_OK, or an
 * error status with d set. */
int tp_cli_prepare_outputs(const unsigned char *enabled, struct tp_profile *p,
                           const struct tp_out_opts *o, struct tp_diag *d);

int tp_cli_convert(int argc, char **argv);
/* Called by tp_cli_convert_run after the outputs are written, with the model and analysis
 * they were written from; returns 0 or an exit code. */
typedef int (*tp_cli_done_fn)(void *ctx, const struct tp_profile *p, const struct tp_analysis *a);
/* Converts o->in_dir into o->out_dir (options parsed by tp_cli_convert_opts; o->jobs 0 is
 * replaced by the online CPUs), printing every error itself; then calls done (may be NULL).
 * Returns the exit code. Installs the signal cleanup of temporaries. */
int tp_cli_convert_run(struct tp_cli_opts *o, tp_cli_done_fn done, void *ctx);
/* The registry reader whose probe accepts `path` (a directory, or a file for the readers that
 * take files), or NULL. Reads nothing else. */
const struct tp_cli_reader *tp_cli_probe(const char *path);
/* The output folder's lock (.tpuprof.lock, flock): waits while another process holds it,
 * saying which; returns the fd for tp_cli_unlock_dir, or -1 with d set. The file is removed
 * when the lock is let go (and by the signal cleanup), so none is left behind. */
int tp_cli_lock_dir(const char *dir, int quiet, struct tp_diag *d);
void tp_cli_unlock_dir(int fd, const char *dir);

/* `tpuprof job` and `tpuprof JOB_DIR OUT_DIR` (job.c): every dump below JOB_DIR converted into
 * OUT_DIR/<dump>/, plus the job report. argv[0] is the subcommand ("job") or the program when
 * dispatched from the convert form. Returns the exit code (0 ok, 1 usage, 2 no dump found, 3
 * output failure, 5 some dumps failed). */
int tp_cli_job(int argc, char **argv);
/* 1 when some dump lies below `dir`, or dir is one (any depth; stops at the first; earlier
 * tpuprof output folders are not searched). folders_only: dump folders only, not Chrome
 * traces. */
int tp_cli_job_has_dumps(const char *dir, int folders_only);
struct tp_job;
/* Reads every dump below job folder `dir` in this process, one at a time, into entries of j
 * (a dump that fails to read becomes a failed entry) and finishes j. TP_OK; TP_ENOTFOUND
 * when no dump is found; TP_ENOMEM (d set). */
int tp_cli_job_load(const char *dir, struct tp_job *j, struct tp_diag *d);
/* For a job's pass-through options: 0 when `arg` is a convert option without a value (or
 * carries it as --name=VALUE), 1 when it takes the next argument as its value, -1 when it is
 * not a convert option. */
int tp_cli_convert_opt_arity(const char *arg);
/* Sets *quiet for -q / --quiet, *verbose for -v / --verbose; 1 when `a` is one of them. */
int tp_cli_log_flag(const char *a, int *quiet, int *verbose);
/* tp_cli_convert_opts's "go on and convert" (every other return value is an exit code). */
#define TP_CLI_RUN (-1)
/* Parses the convert subcommand's argv into *o (overwritten); `enabled` (one per registry
 * output, at least 32) gets the outputs to write and o->enabled points at it. Prints --help,
 * --version or a usage error itself. Returns TP_CLI_RUN, or the exit code (0 after --help or
 * --version, 1 on a usage error). */
int tp_cli_convert_opts(int argc, char **argv, struct tp_cli_opts *o, unsigned char *enabled);
/* `tpuprof diff A B [OUT_DIR]` (diff.c). Returns the exit code (0, 1, 2, 3, or 4 = slower). */
int tp_cli_diff(int argc, char **argv);
/* Reads `in` (directory or file) with the first registry reader whose probe accepts it, using
 * base's reader options. TP_ENOTFOUND (d filled) when none does. Caller frees *out. */
int tp_cli_load(const char *in, const struct tp_cli_opts *base, struct tp_profile **out,
                struct tp_diag *d);
int tp_cli_check(int argc, char **argv);
void tp_cli_usage(FILE *f);

#endif /* TP_CLI_H */
