/*
 * tp_bench.c — the measuring driver behind `make bench` (scripts/bench.sh). It owns no
 * benchmark policy; it only measures and formats:
 *
 *   tp-bench run --out ROWS --name NAME --group G --cmds N --cores C [--bytes B] [--repeat R]
 *                [--clean DIR] -- CMD ARGS...
 *       runs CMD as a child (fork + execvp), waits with wait4() and appends one row to the
 *       file ROWS: name, group, commands, cores, input bytes, wall ns, peak RSS KiB
 *       (ru_maxrss of that child alone, getrusage semantics), exit status, CPU ns (user +
 *       system of the child, from the same rusage), runs, median wall ns. The child's stdout
 *       and stderr pass through. With --repeat R (at most 15) CMD runs R times back to back
 *       (the repeats' output goes to /dev/null) and the row is the run with the least wall
 *       time, plus the median wall of the R runs: on a shared machine the best run is the one
 *       least disturbed, and the median shows how much the others were; a failing run stops
 *       the repeats and is the row. --clean DIR removes DIR (rm -rf, untimed) before each
 *       run, so that every run writes into a fresh output directory. Exits with the row's
 *       status (128+signal if killed).
 *   tp-bench count DIR
 *       prints "<commands> <cores>" of a bmprofile_data directory: the sum of the COMMAND
 *       blocks' group counts in its iter*.profile files (0 0 if none), cores = COMMAND blocks
 *       of iter0.profile; of a cdm_profile_data directory: the PMU records of its cdmlib*
 *       and cdma* files, cores = cdmlib files; of a libtpuprof capture directory (capture.tpp,
 *       docs/capture-format.md): its records (RECORDS blocks), "cores" = its threads.
 *   tp-bench spin [R [DIR [N]]]
 *       the machine's own ceilings for a --jobs N ratio (N default 2, at most 64), one line
 *       each: a fixed amount of work on one thread, then the same on each of N threads at
 *       once, alternately R times (default 3); prints the best wall of each and their
 *       throughput ratio (N x one / N threads).
 *       The work: a loop of integer arithmetic ("spin"); fresh anonymous memory mapped,
 *       written and unmapped ("fresh memory", what a phase pays for the pages it first
 *       touches); passes over an array already written ("memory reads", the bandwidth a
 *       pass over a profile's slices needs); with DIR, 1 MiB pwrite()s into a new file
 *       there, one per thread ("file writes", the page-cache copy every output pays). On a
 *       shared VM two threads do not always get two cores, nor twice the memory and
 *       page-cache throughput, nor do sixteen busy cores run at one busy core's clock, and no
 *       phase whose time is in that kind of work can beat its line's ratio.
 *   tp-bench table ROWS [--baseline GROUP=NAME]...
 *       prints the rows as a table with derived columns: CPU s and CPU/wall (threads kept
 *       busy; rows of older files without CPU show "-"), runs and median wall s (rows of one
 *       run show "1" and their wall), commands/s, commands/s per core, ns per command, peak
 *       RSS MiB, bytes of RAM per command ((RSS - baseline RSS) / commands) and ratios of
 *       ns/command and RSS to the baseline row of the same group (default: the group's first
 *       row).
 *
 * Timings are printed, never asserted. Numbers are formatted with integer arithmetic so the
 * output does not depend on the locale.
 */
#include "capture/capfmt.h"
#include "readers/capfile/capfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"

static int usage(void)
{
	fputs("usage: tp-bench run --out ROWS --name NAME [--group G] [--cmds N] [--cores C] "
	      "[--bytes B] [--repeat R] [--clean DIR] -- CMD [ARGS...]\n"
	      "       tp-bench count DIR\n"
	      "       tp-bench spin [R [DIR [N]]]\n"
	      "       tp-bench table ROWS [--baseline GROUP=NAME]...\n",
	      stderr);
	return 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int parse_u64(const char *s, uint64_t *v)
{
	return s && tp_parse_u64(s, strlen(s), v) == 0 ? 0 : -1;
}

/* Names go into a tab-separated file: replace tabs and newlines. */
static void clean(char *s)
{
	for (; *s; s++)
		if (*s == '\t' || *s == '\n' || *s == '\r')
			*s = ' ';
}

#define MAX_REPEAT 15

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Runs argv as a child and waits for it: wall ns, wait status and the child's rusage. With
 * `quiet`, the child's stdout and stderr go to /dev/null (the repeats of a case). Returns 0,
 * or -1 after printing why. */
static int run_once(char **argv, int quiet, int64_t *wall, int *status, struct rusage *ru)
{
	fflush(NULL);
	int64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "tp-bench: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
				close(fd);
			}
		}
		execvp(argv[0], argv);
		fprintf(stderr, "tp-bench: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	memset(ru, 0, sizeof *ru);
	pid_t w;
	do {
		w = wait4(pid, status, 0, ru);
	} while (w < 0 && errno == EINTR);
	*wall = now_ns() - t0;
	if (w < 0) {
		fprintf(stderr, "tp-bench: wait4: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* rm -rf DIR before a run, untimed: every run writes into a fresh directory (deleting a
 * previous run's large files inside the timed run would be charged to the writer). */
static int remove_tree(const char *dir)
{
	char *argv[] = {"rm", "-rf", "--", (char *)dir, NULL};
	int64_t wall;
	int status;
	struct rusage ru;
	if (run_once(argv, 0, &wall, &status, &ru))
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "tp-bench: rm -rf %s failed\n", dir);
		return -1;
	}
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	const char *out = NULL, *group = "default";
	char name[256] = "case";
	uint64_t cmds = 0, cores = 0, bytes = 0, repeat = 1;
	const char *clean_dir = NULL;
	int i = 2;
	while (i < argc) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!v)
			return usage();
		if (!strcmp(a, "--out"))
			out = v;
		else if (!strcmp(a, "--name"))
			snprintf(name, sizeof name, "%s", v);
		else if (!strcmp(a, "--group"))
			group = v;
		else if (!strcmp(a, "--cmds")) {
			if (parse_u64(v, &cmds))
				return usage();
		} else if (!strcmp(a, "--cores")) {
			if (parse_u64(v, &cores))
				return usage();
		} else if (!strcmp(a, "--bytes")) {
			if (parse_u64(v, &bytes))
				return usage();
		} else if (!strcmp(a, "--clean")) {
			clean_dir = v;
		} else if (!strcmp(a, "--repeat")) {
			if (parse_u64(v, &repeat) || !repeat || repeat > MAX_REPEAT)
				return usage();
		} else
			return usage();
		i += 2;
	}
	if (!out || i >= argc)
		return usage();
	clean(name);
	char grp[64];
	snprintf(grp, sizeof grp, "%s", group);
	clean(grp);

	int64_t walls[MAX_REPEAT], wall = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	int status = 0, runs = 0;
	for (uint64_t r = 0; r < repeat; r++) {
		struct rusage one;
		int64_t w1;
		int st1;
		if (clean_dir && remove_tree(clean_dir))
			return 1;
		if (run_once(argv + i, r > 0, &w1, &st1, &one))
			return 1;
		walls[runs++] = w1;
		/* The fastest run is the row; a failed run is the row and ends the repeats. */
		if (!r || w1 < wall || st1 != 0) {
			wall = w1;
			ru = one;
			status = st1;
		}
		if (st1 != 0)
			break;
	}
	qsort(walls, (size_t)runs, sizeof *walls, i64_cmp);
	int64_t median = walls[runs / 2];
	int code = WIFEXITED(status)     ? WEXITSTATUS(status)
	           : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
	                                 : 1;
	FILE *f = fopen(out, "a");
	if (!f) {
		fprintf(stderr, "tp-bench: cannot append to %s: %s\n", out, strerror(errno));
		return 1;
	}
	/* ru_maxrss is in KiB on Linux. */
	long long cpu = ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	                ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	fprintf(f, "%s\t%s\t%llu\t%llu\t%llu\t%lld\t%ld\t%d\t%lld\t%d\t%lld\n", name, grp,
	        (unsigned long long)cmds, (unsigned long long)cores, (unsigned long long)bytes,
	        (long long)wall, ru.ru_maxrss, code, cpu, runs, (long long)median);
	if (fclose(f) != 0) {
		fprintf(stderr, "tp-bench: write %s failed\n", out);
		return 1;
	}
	if (runs > 1 && code != 0)
		fprintf(stderr,
		        "tp-bench: %s: run %d of %llu failed after %lld.%03lld s, exit %d\n", name,
		        runs, (unsigned long long)repeat, (long long)(wall / 1000000000),
		        (long long)(wall / 1000000 % 1000), code);
	else if (runs > 1)
		fprintf(
		    stderr,
		    "tp-bench: %s: best %lld.%03lld s of %d runs (median %lld.%03lld s), peak RSS "
		    "%ld KiB, exit %d\n",
		    name, (long long)(wall / 1000000000), (long long)(wall / 1000000 % 1000), runs,
		    (long long)(median / 1000000000), (long long)(median / 1000000 % 1000),
		    ru.ru_maxrss, code);
	else
		fprintf(stderr, "tp-bench: %s: %lld.%03lld s, peak RSS %ld KiB, exit %d\n", name,
		        (long long)(wall / 1000000000), (long long)(wall / 1000000 % 1000),
		        ru.ru_maxrss, code);
	return code;
}

/* ---------------------------------------------------------------------------------------- */
/* count: commands in a bmprofile directory (COMMAND blocks, §4.4 of sophgo-bmprofile.md).   */
/* ---------------------------------------------------------------------------------------- */

static int count_file(const char *path, uint64_t *cmds, uint64_t *blocks)
{
	struct tp_file f;
	struct tp_diag d = {0};
	if (tp_file_load(&f, path, &d) != TP_OK) {
		fprintf(stderr, "tp-bench: %s\n", d.msg);
		return -1;
	}
	struct tp_cursor c;
	tp_cur_init(&c, f.data, f.size, 0);
	while (tp_cur_left(&c) >= 8) {
		uint32_t type = tp_cur_u32(&c), len = tp_cur_u32(&c);
		struct tp_cursor b;
		if (tp_cur_sub(&c, len, &b) != 0)
			break;
		if (type != 8 || len < 36)
			continue;
		tp_cur_skip(&b, 32);
		uint32_t groups = tp_cur_u32(&b);
		for (uint32_t g = 0; g < groups && tp_cur_left(&b) >= 8; g++) {
			*cmds += tp_cur_u32(&b);
			*cmds += tp_cur_u32(&b);
		}
		(*blocks)++;
	}
	tp_file_release(&f);
	return 0;
}

/* cdm_profile_data (sophgo-cdm.md §4): PMU records of the TIU (16 B), GDMA/SDMA (64 B) and
 * CDMA (128 B) blocks of one cdmlib / cdma file. */
static int count_cdm_file(const char *path, uint64_t *cmds)
{
	struct tp_file f;
	struct tp_diag d = {0};
	if (tp_file_load(&f, path, &d) != TP_OK) {
		fprintf(stderr, "tp-bench: %s\n", d.msg);
		return -1;
	}
	struct tp_cursor c;
	tp_cur_init(&c, f.data, f.size, 0);
	while (tp_cur_left(&c) >= 8) {
		uint32_t type = tp_cur_u32(&c), len = tp_cur_u32(&c);
		if (tp_cur_skip(&c, len) != 0)
			break;
		uint32_t rs = type == 3 ? 16 : type == 4 || type == 11 ? 64 : type == 12 ? 128 : 0;
		if (rs)
			*cmds += len / rs;
	}
	tp_file_release(&f);
	return 0;
}

/* A libtpuprof capture (docs/capture-format.md): the records of its RECORDS blocks and the
 * number of those blocks (one per thread). 0 when the file is not a capture. */
static int count_capture(const char *path, uint64_t *recs, uint64_t *threads)
{
	struct tp_file f;
	struct tp_diag d = {0};
	if (tp_file_load(&f, path, &d) != TP_OK)
		return -1;
	struct tp_cursor c;
	tp_cur_init(&c, f.data, f.size, 0);
	int ok = f.size >= TP_CAPFMT_HEADER_SIZE &&
	         !memcmp(f.data, TP_CAPFMT_MAGIC, TP_CAPFMT_MAGIC_SIZE);
	if (ok) {
		tp_cur_skip(&c, TP_CAPFMT_OFF_HEADER_SIZE);
		uint32_t hs = tp_cur_u32(&c);
		tp_cur_init(&c, f.data, f.size, 0);
		ok = tp_cur_skip(&c, hs) == 0;
	}
	while (ok && tp_cur_left(&c) >= TP_CAPFMT_BLOCK_HEADER_SIZE) {
		uint32_t type = tp_cur_u32(&c);
		tp_cur_u32(&c);
		uint64_t len = tp_cur_u64(&c);
		if (len > tp_cur_left(&c))
			len = tp_cur_left(&c); /* truncated dump: what is there */
		tp_cur_skip(&c, (size_t)len);
		if (type == TP_CAPFMT_BLK_RECORDS) {
			*recs += len / TP_CAPFMT_RECORD_SIZE;
			(*threads)++;
		}
	}
	tp_file_release(&f);
	return ok ? 0 : -1;
}

static int cmd_count(const char *dir)
{
	{
		char *cap = tp_path_join(dir, TP_CAPFILE_NAME);
		uint64_t recs = 0, threads = 0;
		int is_cap = cap && count_capture(cap, &recs, &threads) == 0;
		tp_free(cap);
		if (is_cap) {
			printf("%llu %llu\n", (unsigned long long)recs,
			       (unsigned long long)threads);
			return 0;
		}
	}
	DIR *dp = opendir(dir);
	if (!dp) {
		printf("0 0\n");
		return 0;
	}
	uint64_t cmds = 0, cores = 0;
	struct dirent *e;
	while ((e = readdir(dp)) != NULL) {
		size_t n = strlen(e->d_name);
		if ((!strncmp(e->d_name, "cdmlib", 6) || !strncmp(e->d_name, "cdma", 4)) && n > 8 &&
		    !strcmp(e->d_name + n - 8, ".profile")) {
			char *p = tp_path_join(dir, e->d_name);
			if (p && count_cdm_file(p, &cmds) == 0 && !strncmp(e->d_name, "cdmlib", 6))
				cores++;
			tp_free(p);
			continue;
		}
		if (strncmp(e->d_name, "iter", 4) != 0 || n < 12 ||
		    strcmp(e->d_name + n - 8, ".profile") != 0)
			continue;
		char *p = tp_path_join(dir, e->d_name);
		uint64_t blocks = 0;
		if (p && count_file(p, &cmds, &blocks) == 0 && !strcmp(e->d_name, "iter0.profile"))
			cores = blocks;
		tp_free(p);
	}
	closedir(dp);
	printf("%llu %llu\n", (unsigned long long)cmds, (unsigned long long)cores);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* table                                                                                     */
/* ---------------------------------------------------------------------------------------- */

struct row {
	char name[256], group[64];
	uint64_t cmds, cores, bytes;
	int64_t wall_ns, cpu_ns; /* cpu_ns < 0: not recorded */
	int64_t median_ns;       /* median wall of the runs (wall_ns is the least) */
	long rss_kib;
	int status, runs;
};

/* v / 10^dec as text with `dec` decimals (v >= 0). */
static void fix(char *buf, size_t n, uint64_t v, int dec)
{
	uint64_t p = 1;
	for (int i = 0; i < dec; i++)
		p *= 10;
	if (dec == 0)
		snprintf(buf, n, "%llu", (unsigned long long)v);
	else
		snprintf(buf, n, "%llu.%0*llu", (unsigned long long)(v / p), dec,
		         (unsigned long long)(v % p));
}

/* a/b with `dec` decimals, rounded; "-" if b == 0. Uses long double only for range. */
static void ratio(char *buf, size_t n, long double a, long double b, int dec)
{
	if (b <= 0 || a < 0) {
		snprintf(buf, n, "-");
		return;
	}
	long double p = 1;
	for (int i = 0; i < dec; i++)
		p *= 10;
	long double v = a / b * p + 0.5L;
	if (v > 1.8e19L) {
		snprintf(buf, n, "huge");
		return;
	}
	fix(buf, n, (uint64_t)v, dec);
}

/* One line of a results file into *r: 8, 9 or 11 tab-separated fields (older files have no
 * CPU time, or no runs and median). Returns 0 for a line of another shape. */
static int parse_row(char *line, struct row *r)
{
	memset(r, 0, sizeof *r);
	char *fld[11];
	int nf = 0;
	char *s = line;
	line[strcspn(line, "\n")] = 0;
	while (nf < 11) {
		fld[nf++] = s;
		char *t = strchr(s, '\t');
		if (!t)
			break;
		*t = 0;
		s = t + 1;
	}
	if (nf != 8 && nf != 9 && nf != 11)
		return 0;
	r->cpu_ns = nf >= 9 ? strtoll(fld[8], NULL, 10) : -1;
	r->runs = nf == 11 ? (int)strtol(fld[9], NULL, 10) : 1;
	snprintf(r->name, sizeof r->name, "%s", fld[0]);
	snprintf(r->group, sizeof r->group, "%s", fld[1]);
	r->cmds = strtoull(fld[2], NULL, 10);
	r->cores = strtoull(fld[3], NULL, 10);
	r->bytes = strtoull(fld[4], NULL, 10);
	r->wall_ns = strtoll(fld[5], NULL, 10);
	r->median_ns = nf == 11 ? strtoll(fld[10], NULL, 10) : r->wall_ns;
	r->rss_kib = strtol(fld[6], NULL, 10);
	r->status = (int)strtol(fld[7], NULL, 10);
	return 1;
}

/* The name given by --baseline GROUP=NAME for `group` in argv[3..], else NULL. */
static const char *baseline_arg(int argc, char **argv, const char *group)
{
	const char *bn = NULL;
	for (int a = 3; a + 1 < argc; a += 2) {
		const char *eq = strchr(argv[a + 1], '=');
		if (!strcmp(argv[a], "--baseline") && eq &&
		    (size_t)(eq - argv[a + 1]) == strlen(group) &&
		    !strncmp(argv[a + 1], group, strlen(group)))
			bn = eq + 1;
	}
	return bn;
}

/* The baseline row of r's group: the row --baseline names, else the group's first row. */
static const struct row *baseline_of(const struct row *rows, size_t nrows, const struct row *r,
                                     int argc, char **argv)
{
	const struct row *base = NULL;
	const char *bn = baseline_arg(argc, argv, r->group);
	for (size_t j = 0; bn && j < nrows; j++)
		if (!strcmp(rows[j].group, r->group) && !strcmp(rows[j].name, bn))
			base = &rows[j];
	for (size_t j = 0; j < nrows && !base; j++)
		if (!strcmp(rows[j].group, r->group))
			base = &rows[j];
	return base;
}

/* One row of the table, with its ratios to `base` (NULL: none). */
static void print_row(const struct row *r, const struct row *base)
{
	char cpu[32], par[32];
	if (r->cpu_ns >= 0) {
		fix(cpu, sizeof cpu, (uint64_t)(r->cpu_ns / 1000000), 3);
		ratio(par, sizeof par, (long double)r->cpu_ns, (long double)r->wall_ns, 2);
	} else {
		snprintf(cpu, sizeof cpu, "-");
		snprintf(par, sizeof par, "-");
	}
	char cmds[32], wall[32], med[32], cps[32], cpsc[32], nspc[32], rss[32], bpc[32], xt[32],
	    xr[32];
	snprintf(cmds, sizeof cmds, "%llu", (unsigned long long)r->cmds);
	fix(wall, sizeof wall, (uint64_t)(r->wall_ns / 1000000), 3);
	fix(med, sizeof med, (uint64_t)(r->median_ns / 1000000), 3);
	ratio(cps, sizeof cps, (long double)r->cmds * 1e9L, (long double)r->wall_ns, 0);
	ratio(cpsc, sizeof cpsc, (long double)r->cmds * 1e9L,
	      (long double)r->wall_ns * (long double)(r->cores ? r->cores : 1), 0);
	ratio(nspc, sizeof nspc, (long double)r->wall_ns, (long double)r->cmds, 1);
	ratio(rss, sizeof rss, (long double)r->rss_kib, 1024.0L, 1);
	if (r->cmds && base && r->rss_kib >= base->rss_kib)
		ratio(bpc, sizeof bpc, (long double)(r->rss_kib - base->rss_kib) * 1024.0L,
		      (long double)r->cmds, 1);
	else
		snprintf(bpc, sizeof bpc, "-");
	if (base && base->cmds && r->cmds)
		ratio(xt, sizeof xt, (long double)r->wall_ns / (long double)r->cmds,
		      (long double)base->wall_ns / (long double)base->cmds, 2);
	else
		snprintf(xt, sizeof xt, "-");
	ratio(xr, sizeof xr, (long double)r->rss_kib, base ? (long double)base->rss_kib : 0, 2);
	printf("%-34s %-8s %12s %9s %4d %9s %9s %8s %12s %13s %9s %9s %9s %8s %8s %6d\n", r->name,
	       r->group, cmds, wall, r->runs, med, cpu, par, cps, cpsc, nspc, rss, bpc, xt, xr,
	       r->status);
}

static int cmd_table(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		fprintf(stderr, "tp-bench: cannot read %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	struct row *rows = NULL;
	size_t nrows = 0, cap = 0;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		struct row r;
		if (!parse_row(line, &r))
			continue;
		struct row *nr = tp_grow(rows, sizeof *rows, nrows + 1, &cap);
		if (!nr) {
			fclose(f);
			tp_free(rows);
			return 1;
		}
		rows = nr;
		rows[nrows++] = r;
	}
	fclose(f);

	/* Baselines: --baseline GROUP=NAME, else each group's first row. */
	printf("%-34s %-8s %12s %9s %4s %9s %9s %8s %12s %13s %9s %9s %9s %8s %8s %6s\n", "case",
	       "group", "commands", "wall s", "runs", "med s", "CPU s", "CPU/wall", "cmd/s",
	       "cmd/s/core", "ns/cmd", "RSS MiB", "B/cmd", "x ns/c", "x RSS", "exit");
	for (size_t i = 0; i < nrows; i++)
		print_row(&rows[i], baseline_of(rows, nrows, &rows[i], argc, argv));
	printf("(B/cmd = (peak RSS - RSS of the group's baseline row) / commands; x = ratio to the "
	       "baseline row:");
	for (size_t i = 0; i < nrows; i++) {
		int first = 1;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(rows[j].group, rows[i].group))
				first = 0;
		if (!first)
			continue;
		const char *bn = baseline_arg(argc, argv, rows[i].group);
		printf(" %s=%s", rows[i].group, bn ? bn : rows[i].name);
	}
	printf(")\n");
	tp_free(rows);
	return 0;
}

/* The ceilings' work, the same on every thread (nothing shared but the machine). */
enum { CEIL_SPIN, CEIL_FRESH, CEIL_READS, CEIL_WRITES };
#define CEIL_FRESH_BYTES ((size_t)128 << 20)
#define CEIL_READ_BYTES ((size_t)128 << 20)
#define CEIL_READ_PASSES 8
#define CEIL_WRITE_BYTES ((size_t)256 << 20)
#define CEIL_WRITE_BLOCK ((size_t)1 << 20)

struct ceil_arg {
	int kind, k, rc;
	const char *dir;
	const uint64_t *mem; /* CEIL_READS: this thread's array, written before the timing */
	uint64_t sum;
};

/* Dependent integer work. */
static void ceil_spin(int k)
{
	volatile uint64_t x = (uint64_t)k;
	for (uint64_t i = 0; i < 400000000u; i++)
		x = x * 6364136223846793005u + i;
}

/* Twice: map fresh pages, write every byte, unmap (the kernel zeroes each page first). */
static int ceil_fresh(int k)
{
	for (int r = 0; r < 2; r++) {
		char *m = mmap(NULL, CEIL_FRESH_BYTES, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		memset(m, k + r, CEIL_FRESH_BYTES);
		munmap(m, CEIL_FRESH_BYTES);
	}
	return 0;
}

/* Passes over an array far larger than the caches, written beforehand: the memory bandwidth
 * a pass over a profile's slices needs (finish, relabel, alignment), not its first touch. */
static uint64_t ceil_reads(const uint64_t *m)
{
	uint64_t s = 0;
	for (int r = 0; r < CEIL_READ_PASSES; r++) {
		for (size_t i = 0; i < CEIL_READ_BYTES / sizeof *m; i++)
			s += m[i];
		__asm__ volatile("" : "+r"(s)::"memory"); /* each pass reads the memory again */
	}
	return s;
}

/* A new file in dir written by 1 MiB pwrite()s (the page-cache copy), then removed. */
static int ceil_writes(const char *dir, int k)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s/tp-bench-ceil-%ld-%d", dir, (long)getpid(), k) >=
	    (int)sizeof path)
		return -1;
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	char *b = malloc(CEIL_WRITE_BLOCK);
	int rc = b ? 0 : -1;
	if (b)
		memset(b, 'a' + k, CEIL_WRITE_BLOCK);
	for (size_t off = 0; !rc && off < CEIL_WRITE_BYTES; off += CEIL_WRITE_BLOCK)
		if (pwrite(fd, b, CEIL_WRITE_BLOCK, (off_t)off) != (ssize_t)CEIL_WRITE_BLOCK)
			rc = -1;
	free(b);
	close(fd);
	unlink(path);
	return rc;
}

static void *ceil_one(void *arg)
{
	struct ceil_arg *a = arg;
	if (a->kind == CEIL_SPIN)
		ceil_spin(a->k);
	else if (a->kind == CEIL_FRESH)
		a->rc = ceil_fresh(a->k);
	else if (a->kind == CEIL_READS)
		a->sum = ceil_reads(a->mem);
	else
		a->rc = ceil_writes(a->dir, a->k);
	return NULL;
}

#define CEIL_MAX_THREADS 64

/* Wall ns of the work on `n` threads at once; -1 if a thread failed. */
static int64_t ceil_wall(int kind, const char *dir, uint64_t *const *mem, int n)
{
	pthread_t th[CEIL_MAX_THREADS];
	struct ceil_arg a[CEIL_MAX_THREADS];
	int64_t t0 = now_ns();
	int started = 0;
	for (int k = 0; k < n; k++) {
		a[k] = (struct ceil_arg){.kind = kind, .k = k + 1, .dir = dir, .mem = mem[k]};
		if (pthread_create(&th[started], NULL, ceil_one, &a[k]) != 0)
			break;
		started++;
	}
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	int64_t t = now_ns() - t0;
	if (started != n)
		return -1;
	for (int k = 0; k < n; k++)
		if (a[k].rc)
			return -1;
	return t;
}

static int cmd_spin(int argc, char **argv)
{
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	const char *dir = argc > 3 && argv[3][0] ? argv[3] : NULL;
	int n = argc > 4 ? atoi(argv[4]) : 2;
	if (reps < 1 || reps > 15 || n < 2 || n > CEIL_MAX_THREADS || argc > 5)
		return usage();
	if (dir && access(dir, W_OK) != 0) { /* before the other ceilings' seconds of work */
		fprintf(stderr, "tp-bench spin: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	static const char *const what[] = {"spin", "fresh memory", "memory reads", "file writes"};
	static const char *const unit[] = {"the work", "the bytes", "the bytes", "the bytes"};
	uint64_t *mem[CEIL_MAX_THREADS] = {0};
	int rc = 0;
	for (int k = 0; k < n && !rc; k++) {
		if (!(mem[k] = malloc(CEIL_READ_BYTES)))
			rc = 1;
		else
			memset(mem[k], k + 1, CEIL_READ_BYTES);
	}
	if (rc)
		fprintf(stderr, "tp-bench spin: out of memory\n");
	for (int kind = CEIL_SPIN; !rc && kind <= (dir ? CEIL_WRITES : CEIL_READS); kind++) {
		int64_t one = -1, all = -1;
		for (int r = 0; r < reps; r++) {
			int64_t a = ceil_wall(kind, dir, mem, 1), b = ceil_wall(kind, dir, mem, n);
			if (a < 0 || b < 0) {
				fprintf(stderr, "tp-bench spin: %s failed\n", what[kind]);
				rc = 1;
				break;
			}
			one = one < 0 || a < one ? a : one;
			all = all < 0 || b < all ? b : all;
		}
		if (!rc)
			printf("%s: one thread %.3f s, %d threads %.3f s: %d threads did %.2fx %s "
			       "of one per second (best of %d)\n",
			       what[kind], (double)one / 1e9, n, (double)all / 1e9, n,
			       n * (double)one / (double)all, unit[kind], reps);
	}
	for (int k = 0; k < n; k++)
		free(mem[k]);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc, argv);
	if (!strcmp(argv[1], "count") && argc == 3)
		return cmd_count(argv[2]);
	if (!strcmp(argv[1], "table"))
		return cmd_table(argc, argv);
	if (!strcmp(argv[1], "spin"))
		return cmd_spin(argc, argv);
	return usage();
}
