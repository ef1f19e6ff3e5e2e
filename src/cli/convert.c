/*
 * convert.c — `tpuprof IN_DIR [OUT_DIR] [options]`: detect the input format (a directory, or a
 * capture.tpp file given directly), read it into the model, analyse, and write the enabled
 * outputs into OUT_DIR (default profile_out). Owns the output-directory discipline: the lock on
 * OUT_DIR, the stale-output marker, and installing the signal cleanup of temporaries. Once the
 * model is built the enabled outputs are written concurrently by --jobs N threads (default:
 * the online CPUs); each output reads the finished model and analysis only, so the files are
 * the same bytes whatever N is, and messages are printed in registry order after the join.
 * The live progress line (common/progress.h) runs while stderr is a terminal and not -q.
 */
#include "cli/cli.h"
#include "common/progress.h"
#include "readers/traceread/traceread.h"
#include "writers/chrome/chrome.h"
#include "writers/opsreport/opsreport.h"
#include "writers/perfetto/perfetto.h"
#include "writers/sqlitedb/sqlitedb.h"
#include "writers/summary/summary.h"
#include "writers/xlsx/xlsx.h"

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

void tp_cli_usage(FILE *f)
{
	fprintf(f, "usage: tpuprof IN [OUT_DIR] [options]         convert a profile directory, a "
	           "Chrome-trace\n"
	           "                                              file or a capture.tpp (OUT_DIR: "
	           "profile_out)\n"
	           "       tpuprof check FILE.pftrace             validate a Perfetto trace "
	           "written by tpuprof\n"
	           "       tpuprof diff A B [OUT_DIR]             compare two runs (see tpuprof "
	           "diff --help)\n"
	           "\n"
	           "Inputs (detected from the content):\n");
	const struct tp_cli_reader *const *rd;
	size_t nr = tp_cli_readers(&rd);
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "  %-20s %s\n", rd[i]->name, rd[i]->doc);
	fprintf(
	    f,
	    "\nOptions:\n"
	    "  --arch NAME          override the architecture (BM1684, BM1684X, BM1688, CV186X, "
	    "A2,\n"
	    "                       CV184X, BM1690, SG2260, SG2260E)\n"
	    "  --num_core N         show cores 0..N-1 only: tracks of higher cores are dropped "
	    "after\n"
	    "                       reading (alignment still uses every core), so no output has "
	    "them\n"
	    "  --tiu_freq MHZ       TIU clock used to turn cycles into time (default: per arch)\n"
	    "  --gdma_freq MHZ      GDMA clock (default: per arch)\n"
	    "  --sparse-ratios FILE perf-ratio table for ops.csv (see docs/sparse-ratios.md)\n"
	    "  --trace_file FILE    host Chrome-trace JSON laid next to the device lanes, aligned\n"
	    "                       as in docs/input-chrome-trace.md (tpudnn disable_profile / "
	    "first\n"
	    "                       tpudnn event)\n"
	    "  --detail MODE        per-command detail of Sophgo dumps (decoded registers, DMA\n"
	    "                       counters, LOCAL memory from the commands): auto (default: all\n"
	    "                       up to 1 M commands, registers up to 200 k), full (always; ~1 "
	    "KB\n"
	    "                       per command), none (40 bytes per command)\n"
	    "  --trace_args MODE    full (default): every reference annotation on each trace "
	    "slice;\n"
	    "                       compact: drop the ones derivable from the slice itself "
	    "(Function\n"
	    "                       Name, Global Idx, Start/End/Asic Cycle, Layer Type/Name) for\n"
	    "                       smaller traces of huge dumps\n"
	    "  --xlsx_rows N|all    rows per engine and core in PerfAI_output.xlsx: the first N\n"
	    "                       commands in time (default: 400000 rows shared by the\n"
	    "                       sheets, 10000 to 50000 each; totals always cover all;\n"
	    "                       a cut sheet and the summary notes say so); all = every row\n"
	    "  -j, --jobs N         threads for reading the Sophgo dumps and writing up to N\n"
	    "                       outputs at once (default: the online CPUs); the files are\n"
	    "                       identical for every N\n"
	    "  -q, --quiet          print nothing but errors (and no progress line)\n"
	    "  -v, --verbose        print reader statistics and timings\n"
	    "  -h, --help           this text\n"
	    "  --version            print the version\n"
	    "\nOutputs (written into OUT_DIR):\n");
	const struct tp_output *const *outs;
	size_t n = tp_cli_outputs(&outs);
	for (size_t i = 0; i < n; i++) {
		char flags[96] = "";
		if (outs[i]->enable_flag)
			snprintf(flags, sizeof flags, "%s", outs[i]->enable_flag);
		if (outs[i]->disable_flag)
			snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%s%s",
			         flags[0] ? ", " : "", outs[i]->disable_flag);
		fprintf(f, "  %-28s %-3s %-36s %s\n", outs[i]->file,
		        outs[i]->default_on ? "on" : "off", flags, outs[i]->doc);
	}
	fprintf(f, "\nExit codes: 0 ok, 1 usage error, 2 bad input, 3 cannot write output.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	char msg[TP_DIAG_MAX];
	snprintf(msg, sizeof msg, fmt, arg);
	fprintf(stderr, "tpuprof: ");
	tp_text_fputs(stderr, msg, TP_TEXT_CTRL | TP_TEXT_LINE);
	fprintf(stderr, " (see tpuprof --help)\n");
	return 1;
}

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

/* Matches "--name VALUE" and "--name=VALUE"; returns 1 and sets *val (and advances *i). */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **val, int *err)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*val = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != 0)
		return 0;
	if (*i + 1 >= argc) {
		*err = 1;
		return 1;
	}
	*val = argv[++*i];
	return 1;
}

/* Clocks are accepted from 1 MHz to 100 GHz: every accelerator tpuprof reads runs between
 * (BM1684 550 MHz .. BM1688 1 GHz), and outside it cycle counts turned into nanoseconds stop
 * being meaningful (1e-9 MHz overflows int64 for any cycle count; NaN, infinities and
 * negatives are not clocks). */
#define TP_CLI_MHZ_MIN 1.0
#define TP_CLI_MHZ_MAX 100000.0
static int parse_mhz(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= TP_CLI_MHZ_MIN && v <= TP_CLI_MHZ_MAX))
		return -1;
	*out = v;
	return 0;
}

/* ---- Output-directory discipline ----------------------------------------------------------- */

#define LOCK_NAME ".tpuprof.lock"
#define STALE_NAME "tpuprof-STALE.txt"

/* Takes an exclusive flock on OUT_DIR/.tpuprof.lock so two runs never mix their files. When
 * another run holds it, says which process (its pid is in the file) and waits. Returns the
 * fd to keep open until exit (the kernel releases the lock with it), or -1 with d set. */
static int lock_out_dir(const char *dir, int quiet, struct tp_diag *d)
{
	char *path = tp_path_join(dir, LOCK_NAME);
	if (!path) {
		tp_diag_set(d, TP_ENOMEM, "out of memory");
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0) {
		tp_diag_set(d, TP_EOUTPUT, "%s: cannot create the lock file: %s", path,
		            strerror(errno));
		tp_free(path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		if (!quiet) {
			char msg[TP_DIAG_MAX];
			snprintf(
			    msg, sizeof msg,
			    "%s is being written by tpuprof process %s (lock %s); waiting for it "
			    "to finish",
			    dir, pid[0] ? pid : "?", path);
			err_line(msg);
		}
		while (flock(fd, LOCK_EX) != 0) {
			if (errno != EINTR) {
				tp_diag_set(d, TP_EOUTPUT, "%s: cannot lock: %s", path,
				            strerror(errno));
				close(fd);
				tp_free(path);
				return -1;
			}
		}
	}
	char pid[32];
	int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		/* The pid is a courtesy for the message above; the lock itself holds. */
	}
	tp_free(path);
	return fd;
}

/* Identity of an output file before this run, to tell afterwards whether this run replaced
 * it (every output is renamed into place, so a rewritten file has a new inode). */
struct out_id {
	int exists;
	dev_t dev;
	ino_t ino;
};

static void out_ids(const char *dir, struct out_id *ids, size_t n,
                    const struct tp_output *const *outs)
{
	for (size_t i = 0; i < n; i++) {
		char *path = tp_path_join(dir, outs[i]->file);
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
	const struct tp_output *const *outs;
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
		tp_buf_printf(&b, "%s\n", outs[i]->file);
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
	const struct tp_output *const *outs;
	struct out_job *jobs;
	size_t njobs;
	atomic_size_t next;
};

static void *out_worker(void *arg)
{
	struct out_pool *pl = arg;
	for (;;) {
		size_t k = atomic_fetch_add(&pl->next, 1);
		if (k >= pl->njobs)
			break;
		struct out_job *j = &pl->jobs[k];
		const struct tp_output *out = pl->outs[j->idx];
		tp_progress_slot_begin(j->idx, out->name);
		double w0 = now_s();
		j->status = out->write(pl->p, pl->a, pl->oo, &j->d);
		j->secs = now_s() - w0;
		tp_progress_slot_end(j->idx);
	}
	return NULL;
}

/* Expected cost rank of an output (lower = longer): the longest start first, so N threads
 * finish together (the spreadsheet alone is most of a default run). Order only; the files do
 * not depend on it. */
static int cost_rank(const char *name)
{
	static const char *const heavy[] = {"xlsx", "sqlite", "perfetto", "chrome", "html"};
	for (size_t i = 0; i < sizeof heavy / sizeof *heavy; i++)
		if (strcmp(name, heavy[i]) == 0)
			return (int)i;
	return (int)(sizeof heavy / sizeof *heavy);
}

/* Writes the jobs with up to `nthreads` threads (the calling thread is one of them). A
 * thread that cannot be created only means fewer threads. */
static void write_outputs(struct out_pool *pl, int nthreads)
{
	/* Stable insertion sort by cost rank (a handful of outputs). */
	for (size_t i = 1; i < pl->njobs; i++) {
		struct out_job t = pl->jobs[i];
		size_t k = i;
		while (k > 0 && cost_rank(pl->outs[pl->jobs[k - 1].idx]->name) >
		                    cost_rank(pl->outs[t.idx]->name)) {
			pl->jobs[k] = pl->jobs[k - 1];
			k--;
		}
		pl->jobs[k] = t;
	}
	atomic_store(&pl->next, 0);
	pthread_t th[64];
	size_t nth = 0;
	size_t want = nthreads > 1 ? (size_t)nthreads - 1 : 0; /* besides the calling thread */
	if (pl->njobs == 0 || want > pl->njobs - 1)
		want = pl->njobs ? pl->njobs - 1 : 0;
	if (want > sizeof th / sizeof *th)
		want = sizeof th / sizeof *th;
	while (nth < want && pthread_create(&th[nth], NULL, out_worker, pl) == 0)
		nth++;
	out_worker(pl);
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

static int convert_main(int argc, char **argv);

int tp_cli_convert(int argc, char **argv)
{
	int rc = convert_main(argc, argv);
	tp_progress_finish(0); /* a failed run: stop the live line (no-op after success) */
	return rc;
}

static int convert_main(int argc, char **argv)
{
	const struct tp_output *const *outs;
	size_t nout = tp_cli_outputs(&outs);
	unsigned char enabled[32] = {0};
	for (size_t i = 0; i < nout; i++)
		enabled[i] = (unsigned char)outs[i]->default_on;
	struct tp_cli_opts o = {.out_dir = "profile_out", .enabled = enabled};
	const char *pos[2] = {0};
	int npos = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		int err = 0;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			tp_cli_usage(stdout);
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			printf("tpuprof %s\n", TP_VERSION);
			return 0;
		}
		if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			o.quiet = 1;
			continue;
		}
		if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			o.verbose = 1;
			continue;
		}
		if (opt_value(argc, argv, &i, "--jobs", &v, &err) ||
		    opt_value(argc, argv, &i, "-j", &v, &err)) {
			char *end = NULL;
			long n = err ? 0 : strtol(v, &end, 10);
			if (err || end == v || *end || n < 1 || n > 64)
				return usage_error(
				    "--jobs needs a thread count from 1 to 64, got '%s'",
				    err ? "" : v);
			o.jobs = (int)n;
			continue;
		}
		if (opt_value(argc, argv, &i, "--arch", &v, &err)) {
			if (err)
				return usage_error("%s needs a value", a);
			o.arch = tp_arch_from_name(v);
			if (o.arch == TP_ARCH_UNKNOWN || o.arch == TP_ARCH_CPU)
				return usage_error("unknown --arch '%s'", v);
			continue;
		}
		if (opt_value(argc, argv, &i, "--tiu_freq", &v, &err)) {
			if (err || parse_mhz(v, &o.tiu_freq_mhz))
				return usage_error(
				    "--tiu_freq needs a clock in MHz between 1 and 100000, "
				    "got '%s'",
				    err ? "" : v);
			continue;
		}
		if (opt_value(argc, argv, &i, "--gdma_freq", &v, &err)) {
			if (err || parse_mhz(v, &o.gdma_freq_mhz))
				return usage_error(
				    "--gdma_freq needs a clock in MHz between 1 and 100000, "
				    "got '%s'",
				    err ? "" : v);
			continue;
		}
		if (opt_value(argc, argv, &i, "--num_core", &v, &err)) {
			char *end = NULL;
			long n = err ? 0 : strtol(v, &end, 10);
			if (err || end == v || *end || n < 1 || n > 1024)
				return usage_error("--num_core needs a core count >= 1, got '%s'",
				                   err ? "" : v);
			o.num_core = (int)n;
			continue;
		}
		if (opt_value(argc, argv, &i, "--detail", &v, &err)) {
			if (err || (strcmp(v, "auto") != 0 && strcmp(v, "full") != 0 &&
			            strcmp(v, "none") != 0))
				return usage_error(
				    "--detail takes 'auto', 'full' or 'none', got '%s'",
				    err ? "" : v);
			o.detail = strcmp(v, "full") == 0   ? TP_CLI_DETAIL_FULL
			           : strcmp(v, "none") == 0 ? TP_CLI_DETAIL_NONE
			                                    : TP_CLI_DETAIL_AUTO;
			continue;
		}
		if (opt_value(argc, argv, &i, "--trace_args", &v, &err)) {
			if (err || (strcmp(v, "full") != 0 && strcmp(v, "compact") != 0))
				return usage_error(
				    "--trace_args takes 'full' or 'compact', got '%s'",
				    err ? "" : v);
			o.trace_args_compact = strcmp(v, "compact") == 0;
			continue;
		}
		if (opt_value(argc, argv, &i, "--xlsx_rows", &v, &err)) {
			uint64_t cap;
			if (err || tp_xlsx_parse_rows(v, &cap))
				return usage_error(
				    "--xlsx_rows takes a row count >= 1 or 'all', got '%s'",
				    err ? "" : v);
			o.xlsx_rows = cap;
			continue;
		}
		if (opt_value(argc, argv, &i, "--trace_file", &v, &err)) {
			if (err)
				return usage_error("%s needs a Chrome-trace JSON file", a);
			o.trace_file = v;
			continue;
		}
		if (opt_value(argc, argv, &i, "--sparse-ratios", &v, &err)) {
			if (err)
				return usage_error("%s needs a file", a);
			o.sparse_ratios = v;
			continue;
		}
		int matched = 0;
		for (size_t k = 0; k < nout; k++) {
			if (outs[k]->enable_flag && strcmp(a, outs[k]->enable_flag) == 0) {
				enabled[k] = 1;
				matched = 1;
			}
			if (outs[k]->disable_flag && strcmp(a, outs[k]->disable_flag) == 0) {
				enabled[k] = 0;
				matched = 1;
			}
		}
		if (matched)
			continue;
		if (a[0] == '-' && a[1] != 0)
			return usage_error("unknown option '%s'", a);
		if (npos == 2)
			return usage_error("unexpected argument '%s'", a);
		pos[npos++] = a;
	}
	if (npos == 0) {
		tp_cli_usage(stderr);
		return 1;
	}
	o.in_dir = pos[0];
	if (npos == 2)
		o.out_dir = pos[1];

	struct tp_diag d = {0};
	struct stat st;
	if (stat(o.in_dir, &st) != 0) {
		int e = errno;
		snprintf(d.msg, sizeof d.msg, "%s: %s", o.in_dir,
		         e == ELOOP    ? "symbolic link loop (too many levels of symbolic links)"
		         : e == ENOENT ? "no such file or directory"
		                       : strerror(e));
		err_line(d.msg);
		return 2;
	}
	/* A directory, or a capture file given directly (docs/capture-format.md); never open a
	 * FIFO or device (it would block or never end). */
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		snprintf(
		    d.msg, sizeof d.msg,
		    "%s: not a directory or a regular file (expected a profile data directory)",
		    o.in_dir);
		err_line(d.msg);
		return 2;
	}
	const struct tp_cli_reader *const *rd;
	size_t nr = tp_cli_readers(&rd);
	const struct tp_cli_reader *reader = NULL;
	for (size_t i = 0; i < nr && !reader; i++)
		if ((S_ISDIR(st.st_mode) || rd[i]->takes_file) && rd[i]->probe(o.in_dir))
			reader = rd[i];
	if (!reader) {
		snprintf(
		    d.msg, sizeof d.msg,
		    S_ISDIR(st.st_mode)
		        ? "%s: no profile data found (expected global.profile / iter*.profile, "
		          "cdmlib*.profile, or a tpuprof capture)"
		        : "%s: not a directory (expected a profile data directory, a tpuprof "
		          "capture.tpp file or a Chrome-trace JSON file)",
		    o.in_dir);
		err_line(d.msg);
		return 2;
	}
	/* The ratio file is an input: a missing or unreadable one is found before anything is
	 * read or written (ops.csv parses it in full later). */
	if (o.sparse_ratios) {
		int fd = tp_open_regular(o.sparse_ratios, &d);
		if (fd < 0) {
			err_line(d.msg);
			return 2;
		}
		close(fd);
	}

	/* From here on temporaries exist: Ctrl-C or a kill removes them (common/file.c). */
	tp_temp_cleanup_on_signals();
	if (!o.jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.jobs = n < 1 ? 1 : n > 64 ? 64 : (int)n;
	}
	tp_progress_start(!o.quiet && isatty(STDERR_FILENO), input_size(o.in_dir));
	double t0 = now_s();
	struct tp_profile *p = NULL;
	int rc = reader->read(&o, &p, &d);
	if (rc != TP_OK) {
		err_line(d.msg[0] ? d.msg : tp_strerror(rc));
		tp_profile_free(p);
		mark_stale(o.out_dir, NULL);
		return tp_status_exit_code(rc);
	}
	if (o.trace_file) {
		struct tp_profile *host = NULL;
		rc = tp_traceread_read(o.trace_file, &host, &d);
		if (rc == TP_OK)
			rc = tp_traceread_merge_host(p, host, o.trace_file, &d);
		tp_profile_free(host);
		if (rc != TP_OK) {
			err_line(d.msg[0] ? d.msg : tp_strerror(rc));
			tp_profile_free(p);
			mark_stale(o.out_dir, NULL);
			return tp_status_exit_code(rc);
		}
	}
	if (o.num_core > 0) {
		int dropped = tp_profile_drop_cores(p, o.num_core);
		if (dropped < 0) {
			fprintf(stderr, "tpuprof: %s\n", tp_strerror(dropped));
			tp_profile_free(p);
			return tp_status_exit_code(dropped);
		}
		if (dropped > 0 &&
		    tp_profile_note(p, "--num_core %d: %d tracks of higher cores are not shown",
		                    o.num_core, dropped) != TP_OK) {
			tp_profile_free(p);
			return tp_status_exit_code(TP_ENOMEM);
		}
	}
	/* A workbook cut at --xlsx_rows says so in every summary too (never a silent cut). */
	for (size_t i = 0; i < nout; i++)
		if (enabled[i] && outs[i] == &tp_output_xlsx &&
		    tp_xlsx_note_cap(p, 0, o.xlsx_rows) != TP_OK) {
			tp_profile_free(p);
			return tp_status_exit_code(TP_ENOMEM);
		}
	/* What the trace outputs cannot show as read (cut strings, flows they cannot draw) is
	 * noted once, whichever of them are written. */
	for (size_t i = 0; i < nout; i++)
		if (enabled[i] && (outs[i] == &tp_output_perfetto || outs[i] == &tp_output_chrome ||
		                   outs[i] == &tp_output_sqlite)) {
			if (tp_sink_note(p) != TP_OK) {
				tp_profile_free(p);
				return tp_status_exit_code(TP_ENOMEM);
			}
			break;
		}
	double t1 = now_s();
	tp_progress_phase(TP_PHASE_ANALYZE);
	struct tp_analysis an;
	/* A capture's operator table, built once for ops.csv, the summaries and the workbook. */
	struct tp_op_table ops;
	memset(&ops, 0, sizeof ops);
	rc = tp_analyze_jobs(p, &an, (unsigned)o.jobs);
	if (rc == TP_OK && (rc = tp_op_table_build(p, &ops)) == TP_OK && ops.count)
		an.ops = &ops;
	if (rc != TP_OK) {
		fprintf(stderr, "tpuprof: analysis: %s\n", tp_strerror(rc));
		tp_analysis_free(&an);
		tp_op_table_free(&ops);
		tp_profile_free(p);
		mark_stale(o.out_dir, NULL);
		return tp_status_exit_code(rc);
	}
	double t2 = now_s();
	if (o.verbose) {
		char msg[TP_DIAG_MAX];
		snprintf(msg, sizeof msg,
		         "read %s (%s) in %.3f s: %zu slices, %llu records, %llu dropped, "
		         "%llu blocks skipped; analysis %.3f s",
		         o.in_dir, reader->name, t1 - t0, tp_profile_slice_count(p),
		         (unsigned long long)p->stats.records_read,
		         (unsigned long long)p->stats.records_dropped,
		         (unsigned long long)p->stats.blocks_skipped, t2 - t1);
		err_line(msg);
	}

	int exit_code = 0, lockfd = -1;
	struct out_id before[32];
	if (tp_mkdirs(o.out_dir, &d) != TP_OK ||
	    (lockfd = lock_out_dir(o.out_dir, o.quiet, &d)) < 0) {
		err_line(d.msg);
		exit_code = 3;
		goto out;
	}
	out_ids(o.out_dir, before, nout, outs);
	struct tp_out_opts oo = {.out_dir = o.out_dir,
	                         .quiet = o.quiet,
	                         .verbose = o.verbose,
	                         .sparse_ratios_path = o.sparse_ratios,
	                         .trace_args_full = !o.trace_args_compact,
	                         .jobs = o.jobs,
	                         .xlsx_rows = o.xlsx_rows};
	tp_progress_phase(TP_PHASE_WRITE);
	struct out_job jobs[32];
	struct out_pool pool = {.p = p, .a = &an, .oo = &oo, .outs = outs, .jobs = jobs};
	for (size_t i = 0; i < nout; i++)
		if (enabled[i])
			jobs[pool.njobs++] = (struct out_job){.idx = i};
	tp_progress_outputs(pool.njobs);
	write_outputs(&pool, o.jobs);
	/* Messages in registry order, whatever order the threads finished in. */
	for (size_t i = 0; i < nout; i++) {
		const struct out_job *j = NULL;
		for (size_t k = 0; k < pool.njobs; k++)
			if (jobs[k].idx == i)
				j = &jobs[k];
		if (!j)
			continue;
		if (j->status != TP_OK) {
			char msg[TP_DIAG_MAX + 64];
			snprintf(msg, sizeof msg, "%s: %s", outs[i]->file,
			         j->d.msg[0] ? j->d.msg : tp_strerror(j->status));
			err_line(msg);
			int code = tp_status_exit_code(j->status);
			if (code > exit_code)
				exit_code = code;
			continue;
		}
		if (o.verbose) {
			/* Some outputs apply only to some inputs (ops.csv to captures) and write
			 * nothing otherwise. */
			char *path = tp_path_join(o.out_dir, outs[i]->file);
			struct stat fs;
			if (path && stat(path, &fs) == 0) {
				char msg[TP_DIAG_MAX];
				snprintf(msg, sizeof msg, "wrote %s in %.3f s", path, j->secs);
				err_line(msg);
			}
			tp_free(path);
		}
	}
	tp_progress_finish(exit_code ? 0 : o.verbose ? 2 : 1);
	if (!o.quiet) {
		struct tp_buf b;
		tp_buf_init(&b);
		tp_summary_text(p, &an, 1, &b);
		if (b.data)
			fputs(b.data, stdout);
		tp_buf_free(&b);
		for (size_t i = 0; i < p->num_notes && i < 8; i++) {
			fputs("note: ", stdout);
			tp_text_fputs(stdout, tp_str(p, p->notes[i].text),
			              TP_TEXT_CTRL | TP_TEXT_LINE);
			fputc('\n', stdout);
		}
		fputs("outputs in ", stdout);
		tp_text_fputs(stdout, o.out_dir, TP_TEXT_CTRL | TP_TEXT_LINE);
		fputs("/:", stdout);
		for (size_t i = 0; i < nout; i++) {
			char *path = tp_path_join(o.out_dir, outs[i]->file);
			struct stat fs;
			if (enabled[i] && path && stat(path, &fs) == 0)
				printf(" %s", outs[i]->file);
			tp_free(path);
		}
		printf("\n");
	}
	mark_stale(o.out_dir, before);
out:
	if (lockfd >= 0)
		close(lockfd);
	tp_analysis_free(&an);
	tp_op_table_free(&ops);
	tp_profile_free(p);
	return exit_code;
}
