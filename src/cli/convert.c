/*
 * convert.c — `tpuprof IN_DIR [OUT_DIR] [options]`: detect the input format (a directory, or a
 * capture.tpp file given directly), read it into the model, analyse, and write the enabled
 * outputs into OUT_DIR (default profile_out). Owns the output-directory discipline: the lock on
 * OUT_DIR, the stale-output marker, removing the temporaries a killed run left, and installing
 * the signal cleanup of temporaries. Once the model is built the enabled outputs are written
 * with --jobs N threads (default: the CPUs this process may use, tp_cpu_count): the large ones one
 * after another, each spread over the N threads, the small ones beside them; each output reads the
 * finished model and analysis only, so the files are the same bytes whatever N is, and messages are
 * printed in registry order after the join. The live progress line (common/progress.h) runs while
 * stderr is a terminal and not -q.
 */
#include "analysis/optable.h"
#include "cli/cli.h"
#include "common/progress.h"
#include "common/timings.h"
#include "model/merge.h"
#include "readers/capfile/capfile.h"
#include "readers/traceread/traceread.h"
#include "writers/summary/summary.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Prints "tpuprof: MSG" on stderr; paths and names in MSG come from the user or the input,
 * so they pass the text-safety layer (no ESC reaches the terminal). */
static void err_line(const char *msg)
{
	tp_progress_lock(); /* never in the middle of the live progress line */
	fputs("tpuprof: ", stderr);
	tp_text_fputs(stderr, msg, TP_TEXT_CTRL | TP_TEXT_LINE);
	fputc('\n', stderr);
	tp_progress_unlock();
}

/* ---- Output-directory discipline ----------------------------------------------------------- */

#define LOCK_NAME ".tpuprof.lock"
#define STALE_NAME "tpuprof-STALE.txt"

/* Takes an exclusive flock on OUT_DIR/.tpuprof.lock so two runs never mix their files. When
 * another run holds it, says which process (its pid is in the file) and waits. The holder
 * removes the file before it lets go (tp_cli_unlock_dir, or the signal cleanup), so a waiter
 * may wake up holding a file no longer at that path: it then starts over on the current one.
 * Returns the fd to hand to tp_cli_unlock_dir, or -1 with d set. */
int tp_cli_lock_dir(const char *dir, int quiet, struct tp_diag *d)
{
	char *path = tp_path_join(dir, LOCK_NAME);
	if (!path) {
		tp_diag_set(d, TP_ENOMEM, "out of memory");
		return -1;
	}
	int fd = -1, said = 0;
	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
		if (fd < 0) {
			tp_diag_set(d, TP_EOUTPUT, "%s: cannot create the lock file: %s", path,
			            strerror(errno));
			break;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			char pid[32] = "";
			ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
			pid[n > 0 ? n : 0] = 0;
			pid[strcspn(pid, "\n")] = 0;
			if (!quiet && !said++) {
				char msg[TP_DIAG_MAX];
				snprintf(msg, sizeof msg,
				         "%s is being written by tpuprof process %s (lock %s); "
				         "waiting for it to finish",
				         dir, pid[0] ? pid : "?", path);
				err_line(msg);
			}
			int rc;
			while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
			}
			if (rc != 0) {
				tp_diag_set(d, TP_EOUTPUT, "%s: cannot lock: %s", path,
				            strerror(errno));
				close(fd);
				fd = -1;
				break;
			}
		}
		struct stat held, now;
		if (fstat(fd, &held) == 0 && stat(path, &now) == 0 && held.st_dev == now.st_dev &&
		    held.st_ino == now.st_ino)
			break;
		close(fd);
	}
	if (fd >= 0) {
		char pid[32];
		int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
		if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
			/* The pid is a courtesy for the message above; the lock itself holds. */
		}
		tp_temp_track_file(path); /* a Ctrl-C removes it too */
	}
	tp_free(path);
	return fd;
}

void tp_cli_unlock_dir(int fd, const char *dir)
{
	if (fd < 0)
		return;
	char *path = tp_path_join(dir, LOCK_NAME);
	if (path) {
		tp_temp_forget(path);
		unlink(path); /* before the unlock: see tp_cli_lock_dir */
	}
	tp_free(path);
	close(fd);
}

/* Identity of an output file before this run, to tell afterwards whether this run replaced
 * it (every output is renamed into place, so a rewritten file has a new inode). */
struct out_id {
	int exists;
	dev_t dev;
	ino_t ino;
};

static void out_ids(const char *dir, struct out_id *ids, size_t n, const struct tp_output *outs)
{
	for (size_t i = 0; i < n; i++) {
		char *path = tp_path_join(dir, outs[i].file);
		struct stat st;
		ids[i].exists = path && lstat(path, &st) == 0;
		if (ids[i].exists) {
			ids[i].dev = st.st_dev;
			ids[i].ino = st.st_ino;
		}
		tp_free(path);
	}
}

/* After a run: every output file in `dir` that this run did not write (it failed, or the
 * output was not enabled or did not apply) is named in tpuprof-STALE.txt, so an old file
 * never passes for the latest result; with none, the marker is removed. `before` is NULL when
 * nothing was written. Best effort: a marker that cannot be written is reported, not fatal. */
static void mark_stale(const char *dir, const struct out_id *before)
{
	if (!tp_is_dir(dir))
		return;
	const struct tp_output *outs;
	size_t n = tp_cli_outputs(&outs);
	struct out_id now[32];
	out_ids(dir, now, n, outs);
	struct tp_buf b;
	tp_buf_init(&b);
	size_t nstale = 0;
	for (size_t i = 0; i < n; i++) {
		if (!now[i].exists)
			continue;
		int fresh = before && (!before[i].exists || before[i].ino != now[i].ino ||
		                       before[i].dev != now[i].dev);
		if (fresh)
			continue;
		if (!nstale++)
			tp_buf_puts(
			    &b,
			    "These files in this directory were NOT written by the latest tpuprof "
			    "run into it (it failed, or did not produce them); they are left "
			    "over from an earlier run:\n");
		tp_buf_printf(&b, "%s\n", outs[i].file);
	}
	char *marker = tp_path_join(dir, STALE_NAME);
	if (nstale) {
		struct tp_diag d = {0};
		if (tp_write_buf_file(dir, STALE_NAME, &b, &d) != TP_OK)
			err_line(d.msg);
	} else if (marker) {
		unlink(marker);
	}
	tp_free(marker);
	tp_buf_free(&b);
}

/* `name` is a temporary of `base` (tp_temp_path_for's "BASE.tmp-HEXPID.N"). */
static int is_temp_of(const char *name, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(name, base, n) != 0 || strncmp(name + n, ".tmp-", 5) != 0)
		return 0;
	const char *p = name + n + 5, *dot = strchr(p, '.');
	if (!dot || dot == p || !dot[1])
		return 0;
	return strspn(p, "0123456789abcdef") == (size_t)(dot - p) &&
	       strspn(dot + 1, "0123456789") == strlen(dot + 1);
}

/* Removes from the directory of OUT_DIR/`file` the temporaries of `file` that a killed run
 * left (SIGKILL, a crash, power loss: no handler removed them). Called under OUT_DIR's lock,
 * which every run holds while it writes, so no temporary there belongs to a live run. Each
 * removal is said on stderr (unless quiet); one that fails names the file and the reason. */
static void remove_dead_temps(const char *out_dir, const char *file, int quiet)
{
	char *path = tp_path_join(out_dir, file);
	char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash) {
		tp_free(path);
		return;
	}
	*slash = 0;
	const char *base = slash + 1;
	DIR *dir = opendir(path);
	struct dirent *e;
	while (dir && (e = readdir(dir)) != NULL) {
		if (!is_temp_of(e->d_name, base))
			continue;
		struct stat st;
		int have = fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		           S_ISREG(st.st_mode);
		if (!have)
			continue;
		char msg[TP_DIAG_MAX];
		if (unlinkat(dirfd(dir), e->d_name, 0) != 0)
			snprintf(msg, sizeof msg,
			         "%s/%s: cannot remove this temporary of an interrupted run: %s",
			         path, e->d_name, strerror(errno));
		else if (!quiet)
			snprintf(msg, sizeof msg,
			         "removed %s/%s (%llu bytes), a temporary an interrupted run left",
			         path, e->d_name, (unsigned long long)st.st_size);
		else
			continue;
		err_line(msg);
	}
	if (dir)
		closedir(dir);
	tp_free(path);
}

/* remove_dead_temps for every output file and the stale marker. */
static void remove_dead_outputs(const char *out_dir, int quiet)
{
	const struct tp_output *outs;
	size_t n = tp_cli_outputs(&outs);
	for (size_t i = 0; i < n; i++)
		remove_dead_temps(out_dir, outs[i].file, quiet);
	remove_dead_temps(out_dir, STALE_NAME, quiet);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- Writing the outputs concurrently (--jobs) ----------------------------------------- */

struct out_job {
	size_t idx; /* registry index (also the progress slot) */
	int status;
	struct tp_diag d;
	double secs;
};

struct out_pool {
	const struct tp_profile *p;
	const struct tp_analysis *a;
	const struct tp_out_opts *oo;
	const struct tp_output *outs;
	struct out_job *jobs;
	size_t njobs;
	/* jobs[0, nspread) spread over --jobs threads themselves and are written one after
	 * another; jobs[nspread, njobs) use one thread each and are taken by whichever thread
	 * is free. */
	size_t nspread;
	atomic_size_t next; /* the next of the one-thread outputs */
};

static void write_one(struct out_pool *pl, struct out_job *j)
{
	const struct tp_output *out = &pl->outs[j->idx];
	tp_progress_slot_begin(j->idx, out->name);
	tp_tm_begin(out->name); /* --timings: only this thread writes */
	double w0 = now_s();
	j->status = tp_output_write(out, pl->p, pl->a, pl->oo, &j->d);
	j->secs = now_s() - w0;
	tp_tm_end();
	tp_progress_slot_end(j->idx);
}

static void *single_worker(void *arg)
{
	struct out_pool *pl = arg;
	for (;;) {
		size_t k = pl->nspread + atomic_fetch_add(&pl->next, 1);
		if (k >= pl->njobs)
			break;
		write_one(pl, &pl->jobs[k]);
	}
	return NULL;
}

/* Writes the jobs with up to `nthreads` threads (the calling thread is one of them). The
 * outputs that spread over --jobs threads are written one after another by the calling
 * thread, each with every thread: running them at the same time would add their peak
 * memories together (and their threads, --jobs of each) for no gain in cores. The other
 * threads write the one-thread outputs meanwhile; the calling thread joins them after. A
 * thread that cannot be created only means fewer threads. With --timings the calling thread
 * writes everything, so that each output's figures are its own. The files never depend on
 * the order. */
static void write_outputs(struct out_pool *pl, int nthreads)
{
	atomic_store(&pl->next, 0);
	pthread_t th[64];
	size_t nth = 0, nsingle = pl->njobs - pl->nspread;
	size_t want = nthreads > 1 && !tp_tm_on() ? (size_t)nthreads - 1 : 0; /* besides this one */
	if (want > nsingle)
		want = nsingle;
	if (want > sizeof th / sizeof *th)
		want = sizeof th / sizeof *th;
	while (nth < want && pthread_create(&th[nth], NULL, single_worker, pl) == 0)
		nth++;
	for (size_t k = 0; k < pl->nspread; k++)
		write_one(pl, &pl->jobs[k]);
	single_worker(pl);
	for (size_t i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
}

/* Bytes of input for the reading progress: the file, or the regular files directly in the
 * directory (readers may read fewer; the line then stops short of the total). */
static uint64_t input_size(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	DIR *dir = opendir(path);
	if (!dir)
		return 0;
	uint64_t total = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	}
	closedir(dir);
	return total;
}

/* ---- One conversion ----------------------------------------------------------------- */

/* The registry reader that accepts o->in_dir, after checking that the input (and the
 * --sparse-ratios file) can be read. NULL after printing why not (exit code 2). */
static const struct tp_cli_reader *pick_reader(const struct tp_cli_opts *o)
{
	struct tp_diag d = {0};
	struct stat st;
	int std_in = strcmp(o->in_dir, "-") == 0; /* a Chrome trace on standard input */
	if (!std_in && stat(o->in_dir, &st) != 0) {
		int e = errno;
		snprintf(d.msg, sizeof d.msg, "%s: %s", o->in_dir,
		         e == ELOOP    ? "symbolic link loop (too many levels of symbolic links)"
		         : e == ENOENT ? "no such file or directory"
		                       : strerror(e));
		err_line(d.msg);
		return NULL;
	}
	/* A directory, or a capture file given directly (docs/capture-format.md); never open a
	 * FIFO or device (it would block or never end). */
	if (!std_in && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		snprintf(
		    d.msg, sizeof d.msg,
		    "%s: not a directory or a regular file (expected a profile data directory)",
		    o->in_dir);
		err_line(d.msg);
		return NULL;
	}
	const struct tp_cli_reader *const *rd;
	size_t nr = tp_cli_readers(&rd);
	const struct tp_cli_reader *reader = NULL;
	for (size_t i = 0; i < nr && !reader; i++)
		if (std_in ? rd[i]->takes_stdin
		           : (S_ISDIR(st.st_mode) || rd[i]->takes_file) && rd[i]->probe(o->in_dir))
			reader = rd[i];
	if (!reader && !std_in && S_ISDIR(st.st_mode)) {
		snprintf(d.msg, sizeof d.msg,
		         "%s: no profile data found (expected global.profile / iter*.profile, "
		         "cdmlib*.profile, or a tpuprof capture)",
		         o->in_dir);
		err_line(d.msg);
		return NULL;
	}
	if (!reader) {
		char why[200];
		tp_traceread_sniff(o->in_dir, why, sizeof why);
		snprintf(d.msg, sizeof d.msg,
		         "%s: a file, but not one tpuprof reads: not a tpuprof capture.tpp (no "
		         "capture magic), and not a Chrome-trace JSON file, plain or gzip'd (%s)",
		         o->in_dir, why);
		err_line(d.msg);
		return NULL;
	}
	/* The ratio file is an input: a missing or unreadable one is found before anything is
	 * read or written (ops.csv parses it in full later). */
	if (o->sparse_ratios) {
		int fd = tp_open_regular(o->sparse_ratios, &d);
		if (fd < 0) {
			err_line(d.msg);
			return NULL;
		}
		close(fd);
	}
	return reader;
}

/* Reads the input into *pp, lays the --trace_file host side (a Chrome trace or a capture) next
 * to it, drops the cores past --num_core and lets every enabled output prepare the profile
 * (notes the summaries repeat).
 * 0, or the exit code after printing why (*pp freed and NULL). */
static int load_input(const struct tp_cli_opts *o, const struct tp_cli_reader *reader,
                      const struct tp_out_opts *oo, struct tp_profile **pp)
{
	struct tp_diag d = {0};
	struct tp_profile *p = NULL;
	tp_tm_begin("read");
	int rc = reader->read(o, &p, &d);
	if (rc == TP_OK && o->trace_file) {
		/* The host side: a libtpuprof capture (its directory or capture.tpp) or a Chrome
		 * trace. */
		struct tp_profile *host = NULL;
		int cap = tp_capfile_probe(o->trace_file);
		rc = cap ? tp_capfile_read(o->trace_file, &host, &d)
		         : tp_traceread_read(o->trace_file, &host, &d);
		if (rc == TP_OK)
			rc = cap ? tp_profile_merge_capture(p, host, o->trace_file, &d)
			         : tp_profile_merge_host(p, host, o->trace_file, &d);
		tp_profile_free(host);
	}
	tp_tm_end();
	if (rc != TP_OK) {
		err_line(d.msg[0] ? d.msg : tp_strerror(rc));
		tp_profile_free(p);
		mark_stale(o->out_dir, NULL);
		return tp_status_exit_code(rc);
	}
	if (o->num_core > 0) {
		int dropped = tp_profile_drop_cores(p, o->num_core);
		if (dropped < 0) {
			fprintf(stderr, "tpuprof: %s\n", tp_strerror(dropped));
			tp_profile_free(p);
			return tp_status_exit_code(dropped);
		}
		if (dropped > 0 &&
		    tp_profile_note(p, "--num_core %d: %d tracks of higher cores are not shown",
		                    o->num_core, dropped) != TP_OK) {
			tp_profile_free(p);
			return tp_status_exit_code(TP_ENOMEM);
		}
	}
	tp_tm_begin("prepare");
	rc = tp_cli_prepare_outputs(o->enabled, p, oo, &d);
	tp_tm_end();
	if (rc != TP_OK) {
		err_line(d.msg[0] ? d.msg : tp_strerror(rc));
		tp_profile_free(p);
		return tp_status_exit_code(rc);
	}
	*pp = p;
	return 0;
}

/* Analyses p into *an, with a capture's operator table (*ops, built once for ops.csv, the
 * summaries and the workbook). 0, or the exit code after printing why. */
static int analyse(const struct tp_cli_opts *o, const struct tp_profile *p, struct tp_analysis *an,
                   struct tp_op_table *ops)
{
	memset(ops, 0, sizeof *ops);
	tp_tm_begin("analysis");
	int rc = tp_analyze_jobs(p, an, (unsigned)o->jobs);
	if (rc == TP_OK && (rc = tp_op_table_build(p, ops)) == TP_OK && ops->count)
		an->ops = ops;
	tp_tm_end();
	if (rc != TP_OK) {
		fprintf(stderr, "tpuprof: analysis: %s\n", tp_strerror(rc));
		mark_stale(o->out_dir, NULL);
		return tp_status_exit_code(rc);
	}
	return 0;
}

/* Prints each output's failure (and with -v each file written) in registry order, whatever
 * order the threads finished in. Returns the highest exit code of the failures, 0 if none. */
static int report_outputs(const struct tp_cli_opts *o, const struct out_pool *pool)
{
	const struct tp_output *outs;
	size_t nout = tp_cli_outputs(&outs);
	int exit_code = 0;
	for (size_t i = 0; i < nout; i++) {
		const struct out_job *j = NULL;
		for (size_t k = 0; k < pool->njobs; k++)
			if (pool->jobs[k].idx == i)
				j = &pool->jobs[k];
		if (!j)
			continue;
		if (j->status != TP_OK) {
			char msg[TP_DIAG_MAX + 64];
			snprintf(msg, sizeof msg, "%s: %s", outs[i].file,
			         j->d.msg[0] ? j->d.msg : tp_strerror(j->status));
			err_line(msg);
			int code = tp_status_exit_code(j->status);
			if (code > exit_code)
				exit_code = code;
			continue;
		}
		if (o->verbose) {
			/* Some outputs apply only to some inputs (ops.csv to captures) and write
			 * nothing otherwise. */
			char *path = tp_path_join(o->out_dir, outs[i].file);
			struct stat fs;
			if (path && stat(path, &fs) == 0) {
				char msg[TP_DIAG_MAX];
				snprintf(msg, sizeof msg, "wrote %s in %.3f s", path, j->secs);
				err_line(msg);
			}
			tp_free(path);
		}
	}
	return exit_code;
}

/* The console summary on stdout: the summary text, the first notes and the files written. */
static void print_console(const struct tp_cli_opts *o, const struct tp_profile *p,
                          const struct tp_analysis *an)
{
	const struct tp_output *outs;
	size_t nout = tp_cli_outputs(&outs);
	struct tp_buf b;
	tp_buf_init(&b);
	tp_summary_text(p, an, 1, &b);
	if (b.data)
		fputs(b.data, stdout);
	tp_buf_free(&b);
	for (size_t i = 0; i < p->num_notes && i < 8; i++) {
		fputs("note: ", stdout);
		tp_text_fputs(stdout, tp_str(p, p->notes[i].text), TP_TEXT_CTRL | TP_TEXT_LINE);
		fputc('\n', stdout);
	}
	fputs("outputs in ", stdout);
	tp_text_fputs(stdout, o->out_dir, TP_TEXT_CTRL | TP_TEXT_LINE);
	fputs("/:", stdout);
	for (size_t i = 0; i < nout; i++) {
		char *path = tp_path_join(o->out_dir, outs[i].file);
		struct stat fs;
		if (o->enabled[i] && path && stat(path, &fs) == 0)
			printf(" %s", outs[i].file);
		tp_free(path);
	}
	printf("\n");
}

/* Writes the enabled outputs into OUT_DIR under its lock, reports them, prints the console
 * summary and updates the stale marker. Returns the exit code. */
static int write_all(const struct tp_cli_opts *o, const struct tp_profile *p,
                     const struct tp_analysis *an, const struct tp_out_opts *oo)
{
	const struct tp_output *outs;
	size_t nout = tp_cli_outputs(&outs);
	struct tp_diag d = {0};
	struct out_id before[32];
	int lockfd = -1;
	if (tp_mkdirs(o->out_dir, &d) != TP_OK ||
	    (lockfd = tp_cli_lock_dir(o->out_dir, o->quiet, &d)) < 0) {
		err_line(d.msg);
		return 3;
	}
	remove_dead_outputs(o->out_dir, o->quiet);
	out_ids(o->out_dir, before, nout, outs);
	tp_progress_phase(TP_PHASE_WRITE);
	struct out_job jobs[32];
	struct out_pool pool = {.p = p, .a = an, .oo = oo, .outs = outs, .jobs = jobs};
	/* The spreading outputs first (write_outputs), each group in registry order. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nout; i++)
			if (o->enabled[i] && (outs[i].spreads != 0) == (pass == 0))
				jobs[pool.njobs++] = (struct out_job){.idx = i};
		if (pass == 0)
			pool.nspread = pool.njobs;
	}
	tp_progress_outputs(pool.njobs);
	tp_tm_begin("write");
	write_outputs(&pool, o->jobs);
	tp_tm_end();
	int exit_code = report_outputs(o, &pool);
	tp_progress_finish(exit_code ? 0 : o->verbose ? 2 : 1);
	if (!o->quiet)
		print_console(o, p, an);
	mark_stale(o->out_dir, before);
	tp_cli_unlock_dir(lockfd, o->out_dir);
	return exit_code;
}

/* The registry reader that accepts `path` as an input (probe only, nothing read), or NULL. */
const struct tp_cli_reader *tp_cli_probe(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		return NULL;
	const struct tp_cli_reader *const *rd;
	size_t nr = tp_cli_readers(&rd);
	for (size_t i = 0; i < nr; i++)
		if ((S_ISDIR(st.st_mode) || rd[i]->takes_file) && rd[i]->probe(path))
			return rd[i];
	return NULL;
}

/* An OUT_DIR that holds profile data is never written into: the outputs would mix with (and
 * could replace) the raw dump. 0, or 1 after saying why (a usage error). */
static int refuse_dump_out_dir(const struct tp_cli_opts *o)
{
	if (!tp_is_dir(o->out_dir))
		return 0;
	const struct tp_cli_reader *r = tp_cli_probe(o->out_dir);
	char msg[TP_DIAG_MAX];
	if (r)
		snprintf(msg, sizeof msg,
		         "%s holds profile data (a %s dump): tpuprof never writes its outputs into "
		         "a dump; give an output folder of its own (to convert several dumps: "
		         "tpuprof job JOB_DIR OUT_DIR)",
		         o->out_dir, r->name);
	else if (tp_cli_job_has_dumps(o->out_dir, 1))
		snprintf(msg, sizeof msg,
		         "%s holds profile data (dump folders below it): tpuprof never writes its "
		         "outputs among dumps; give an output folder of its own (to convert them "
		         "all: tpuprof job %s OUT_DIR)",
		         o->out_dir, o->out_dir);
	else
		return 0;
	err_line(msg);
	return 1;
}

int tp_cli_convert_run(struct tp_cli_opts *o, tp_cli_done_fn done, void *ctx)
{
	if (refuse_dump_out_dir(o))
		return 1;
	const struct tp_cli_reader *reader = pick_reader(o);
	if (!reader)
		return 2;
	/* From here on temporaries exist: Ctrl-C or a kill removes them (common/file.c). */
	tp_temp_cleanup_on_signals();
	if (!o->jobs)
		o->jobs = tp_jobs_default();
	if (o->timings)
		tp_tm_enable();
	tp_progress_start(!o->quiet && isatty(STDERR_FILENO), input_size(o->in_dir),
	                  o->progress_delay_ms);
	struct tp_out_opts oo = {.out_dir = o->out_dir,
	                         .quiet = o->quiet,
	                         .verbose = o->verbose,
	                         .sparse_ratios_path = o->sparse_ratios,
	                         .trace_args_full = !o->trace_args_compact,
	                         .jobs = o->jobs,
	                         .xlsx_rows = o->xlsx_rows};
	double t0 = now_s();
	struct tp_profile *p = NULL;
	int code = load_input(o, reader, &oo, &p);
	if (code)
		return code;
	double t1 = now_s();
	tp_progress_phase(TP_PHASE_ANALYZE);
	struct tp_analysis an;
	struct tp_op_table ops;
	code = analyse(o, p, &an, &ops);
	if (!code && o->verbose) {
		char msg[TP_DIAG_MAX];
		snprintf(msg, sizeof msg,
		         "read %s (%s) on %d thread%s in %.3f s: %zu slices, %llu records, %llu "
		         "dropped, %llu blocks skipped; analysis %.3f s",
		         o->in_dir, reader->name, o->jobs, o->jobs == 1 ? "" : "s", t1 - t0,
		         tp_profile_slice_count(p), (unsigned long long)p->stats.records_read,
		         (unsigned long long)p->stats.records_dropped,
		         (unsigned long long)p->stats.blocks_skipped, now_s() - t1);
		err_line(msg);
	}
	if (!code)
		code = write_all(o, p, &an, &oo);
	if (!code && o->timings) {
		struct tp_diag d = {0};
		if (tp_tm_write(o->timings, o->jobs, o->in_dir, &d) != TP_OK) {
			err_line(d.msg);
			code = 3;
		}
	}
	if (!code && done)
		code = done(ctx, p, &an);
	tp_analysis_free(&an);
	tp_op_table_free(&ops);
	tp_profile_free(p);
	return code;
}

/* `tpuprof A B` where B is itself an input: the user meant several dumps (or a diff), not
 * "write A's outputs into the dump B". 1 after saying so, else 0. */
static int two_inputs(const struct tp_cli_opts *o)
{
	const struct tp_cli_reader *ra = tp_cli_probe(o->in_dir);
	const struct tp_cli_reader *rb = ra ? tp_cli_probe(o->out_dir) : NULL;
	if (!rb)
		return 0;
	char msg[TP_DIAG_MAX];
	snprintf(msg, sizeof msg,
	         "%s and %s are both profile inputs, but tpuprof IN [OUT_DIR] converts one input "
	         "into an output folder: put the dumps in one folder and run tpuprof job JOB_DIR "
	         "OUT_DIR, or compare two runs with tpuprof diff A B (see tpuprof --help)",
	         o->in_dir, o->out_dir);
	err_line(msg);
	return 1;
}

int tp_cli_convert(int argc, char **argv)
{
	unsigned char enabled[32];
	struct tp_cli_opts o;
	int rc = tp_cli_convert_opts(argc, argv, &o, enabled);
	if (rc == TP_CLI_RUN && two_inputs(&o))
		rc = 1;
	/* A folder that is no dump itself but holds dumps below it is a job (docs/job.md). */
	if (rc == TP_CLI_RUN && tp_is_dir(o.in_dir) && !tp_cli_probe(o.in_dir) &&
	    tp_cli_job_has_dumps(o.in_dir, 0))
		return tp_cli_job(argc, argv);
	if (rc == TP_CLI_RUN)
		rc = tp_cli_convert_run(&o, NULL, NULL);
	tp_progress_finish(0); /* a failed run: stop the live line (no-op after success) */
	return rc;
}
