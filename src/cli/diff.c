/*
 * diff.c — `tpuprof diff A B [OUT_DIR] [--fail-if-slower PCT] [-q]`: reads two inputs with the
 * readers of the registry (any dump, capture or trace file tpuprof converts) or from an earlier
 * tpuprof output folder (its profile.db, src/readers/outdir), analyses both,
 * compares them (src/diff) and writes diff.txt, diff.json and diff.html into OUT_DIR (default
 * diff_out); the top of diff.txt goes to the console. Two jobs (job folders or `tpuprof job`
 * output folders, docs/job.md) are compared call by call instead: job_diff.txt/json/html. Exit 0,
 * or 4 when --fail-if-slower is given and B's total time grew by more than PCT percent (1 usage, 2
 * bad input, 3 output).
 */
#include "diff/diff.h"
#include "cli/cli.h"
#include "readers/outdir/outdir.h"
#include "writers/jobreport/jobreport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int usage(const char *msg, const char *arg)
{
	fprintf(stderr, "tpuprof diff: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nusage: tpuprof diff A B [OUT_DIR] [--fail-if-slower PCT] [-q]\n");
	return 1;
}

/* 1 when v is a plain decimal number: digits with at most one '.', nothing else (strtod
 * would also take hex, exponents, inf and nan). */
static int decimal(const char *v)
{
	int digits = 0, dots = 0;
	for (; *v; v++) {
		if (*v >= '0' && *v <= '9')
			digits++;
		else if (*v == '.' && !dots)
			dots++;
		else
			return 0;
	}
	return digits > 0;
}

/* Writes STEM.txt, STEM.json and STEM.html into out_dir (made when missing); on failure says
 * why on stderr and returns the status (d set). */
static int write_outputs(const char *out_dir, const char *stem, const struct tp_buf *txt,
                         const struct tp_buf *js, const struct tp_buf *html, struct tp_diag *d)
{
	const struct tp_buf *body[3] = {txt, js, html};
	const char *ext[3] = {"txt", "json", "html"};
	int st = tp_mkdirs(out_dir, d);
	for (int k = 0; k < 3 && st == TP_OK; k++) {
		char name[64];
		snprintf(name, sizeof name, "%s.%s", stem, ext[k]);
		st = tp_write_buf_file(out_dir, name, body[k], d);
	}
	if (st != TP_OK)
		fprintf(stderr, "tpuprof: %s\n", d->msg[0] ? d->msg : "cannot write the diff");
	return st;
}

int tp_cli_load(const char *in, const struct tp_cli_opts *base, struct tp_profile **out,
                struct tp_diag *d)
{
	*out = NULL;
	struct stat st;
	if (stat(in, &st) != 0)
		return tp_diag_set(d, TP_ENOTFOUND, "%s: no such file or directory", in);
	const struct tp_cli_reader *const *rd;
	size_t nr = tp_cli_readers(&rd);
	for (size_t i = 0; i < nr; i++) {
		if (!(S_ISDIR(st.st_mode) || rd[i]->takes_file) || !rd[i]->probe(in))
			continue;
		struct tp_cli_opts o = *base;
		o.in_dir = in;
		return rd[i]->read(&o, out, d);
	}
	/* An earlier tpuprof output folder: read back from its profile.db. */
	if (tp_outdir_probe(in))
		return tp_outdir_read(in, out, d);
	return tp_diag_set(d, TP_ENOTFOUND,
	                   "%s: no profile data found (a bmprofile dump, a tpuprof capture or a "
	                   "Chrome-trace JSON file)",
	                   in);
}

/* ---- Two jobs -------------------------------------------------------------------------- */

/* What `path` is as a side of a job diff: 2 a job output folder (job_summary.json), 1 a job
 * folder (no dump itself, dumps below it), 0 neither. */
static int job_kind(const char *path)
{
	char *s = tp_path_join(path, "job_summary.json");
	struct stat st;
	int out = s && stat(s, &st) == 0 && S_ISREG(st.st_mode);
	tp_free(s);
	if (out)
		return 2;
	return tp_is_dir(path) && !tp_cli_probe(path) && !tp_outdir_probe(path) &&
	       tp_cli_job_has_dumps(path, 0);
}

static int load_job(const char *path, int kind, struct tp_job *j)
{
	struct tp_diag d = {0};
	int rc;
	if (kind == 2) {
		char *s = tp_path_join(path, "job_summary.json");
		rc =
		    s ? tp_job_summary_read(j, s, &d) : tp_diag_set(&d, TP_ENOMEM, "out of memory");
		tp_free(s);
		if (rc == TP_OK)
			tp_job_finish(j);
	} else {
		rc = tp_cli_job_load(path, j, &d);
	}
	if (rc != TP_OK)
		fprintf(stderr, "tpuprof: %s\n", d.msg[0] ? d.msg : tp_strerror(rc));
	return rc;
}

/* `tpuprof diff JOB_A JOB_B [OUT_DIR]`: job_diff.txt/json/html. Returns the exit code. */
static int diff_jobs(const char *const *pos, const int *kind, const char *out_dir, int quiet,
                     int have_fail, double fail_pct)
{
	struct tp_job j[2];
	tp_job_init(&j[0], pos[0]);
	tp_job_init(&j[1], pos[1]);
	struct tp_jobdiff df;
	memset(&df, 0, sizeof df);
	struct tp_buf txt, js, html;
	tp_buf_init(&txt);
	tp_buf_init(&js);
	tp_buf_init(&html);
	struct tp_diag d = {0};
	int code = 0;
	for (int s = 0; s < 2 && !code; s++)
		if (load_job(pos[s], kind[s], &j[s]) != TP_OK)
			code = 2;
	if (!code && tp_jobdiff_compute(&j[0], pos[0], &j[1], pos[1], &df) != TP_OK) {
		fprintf(stderr, "tpuprof: diff: out of memory\n");
		code = 2;
	}
	if (!code) {
		tp_jobdiff_text(&df, 20, &txt);
		tp_jobdiff_json(&df, &js);
		tp_jobdiff_html(&df, &html);
		if (write_outputs(out_dir, "job_diff", &txt, &js, &html, &d) != TP_OK)
			code = 3;
	}
	if (!code && !quiet) {
		fputs(txt.data ? txt.data : "", stdout);
		printf("outputs in %s/: job_diff.txt job_diff.json job_diff.html\n", out_dir);
	}
	if (!code && have_fail && df.total_pct > fail_pct) {
		if (!quiet)
			printf("FAIL: total time grew by %.2f%% (limit %.2f%%)\n", df.total_pct,
			       fail_pct);
		code = 4;
	}
	tp_buf_free(&txt);
	tp_buf_free(&js);
	tp_buf_free(&html);
	tp_jobdiff_free(&df);
	tp_job_free(&j[0]);
	tp_job_free(&j[1]);
	return code;
}

static void help(void)
{
	printf("usage: tpuprof diff A B [OUT_DIR] [--fail-if-slower PCT] [-q]\n"
	       "Compares two runs (any inputs tpuprof converts, or earlier output "
	       "folders\n"
	       "written with --sqlite) and writes diff.txt, diff.json and diff.html "
	       "into\n"
	       "OUT_DIR (default diff_out). Two jobs (folders of dumps, or tpuprof "
	       "job output\n"
	       "folders) are compared call by call: job_diff.txt, job_diff.json, "
	       "job_diff.html.\n"
	       "Exit 0, or 4 with --fail-if-slower when B's total time grew by more "
	       "than PCT %%.\n");
}

int tp_cli_diff(int argc, char **argv)
{
	const char *pos[3] = {0};
	int npos = 0, quiet = 0, have_fail = 0;
	double fail_pct = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			help();
			return 0;
		}
		if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			quiet = 1;
			continue;
		}
		if (strncmp(a, "--fail-if-slower", 16) == 0 && (a[16] == 0 || a[16] == '=')) {
			const char *v = a[16] == '=' ? a + 17 : (i + 1 < argc ? argv[++i] : NULL);
			char *end = NULL;
			if (!v)
				return usage("%s needs a percentage", a);
			fail_pct = decimal(v) ? strtod(v, &end) : -1;
			if (!end || end == v || *end || !(fail_pct >= 0) || fail_pct > 1e9)
				return usage("--fail-if-slower needs a percentage >= 0, got '%s'",
				             v);
			have_fail = 1;
			continue;
		}
		if (a[0] == '-' && a[1])
			return usage("unknown option '%s'", a);
		if (npos == 3)
			return usage("unexpected argument '%s'", a);
		pos[npos++] = a;
	}
	if (npos < 2)
		return usage("%s", "needs two inputs");
	const char *out_dir = npos == 3 ? pos[2] : "diff_out";
	int kind[2] = {job_kind(pos[0]), job_kind(pos[1])};
	if (kind[0] && kind[1])
		return diff_jobs(pos, kind, out_dir, quiet, have_fail, fail_pct);
	if (kind[0] || kind[1])
		return usage("%s is a job (a folder of dumps, or a tpuprof job's output) and the "
		             "other input is not: compare two jobs, or two dumps",
		             pos[kind[0] ? 0 : 1]);

	struct tp_cli_opts o = {.quiet = 1};
	struct tp_profile *p[2] = {NULL, NULL};
	struct tp_analysis an[2];
	memset(an, 0, sizeof an);
	struct tp_diff df;
	memset(&df, 0, sizeof df);
	struct tp_diag d = {0};
	struct tp_buf txt, js, html;
	tp_buf_init(&txt);
	tp_buf_init(&js);
	tp_buf_init(&html);
	int code = 0, st = TP_OK;
	for (int s = 0; s < 2; s++) {
		if ((st = tp_cli_load(pos[s], &o, &p[s], &d)) != TP_OK) {
			fprintf(stderr, "tpuprof: %s\n", d.msg[0] ? d.msg : tp_strerror(st));
			code = tp_status_exit_code(st);
			goto out;
		}
		if ((st = tp_analyze(p[s], &an[s])) != TP_OK) {
			fprintf(stderr, "tpuprof: analysis: %s\n", tp_strerror(st));
			code = tp_status_exit_code(st);
			goto out;
		}
	}
	if ((st = tp_diff_compute(p[0], &an[0], pos[0], p[1], &an[1], pos[1], &df)) != TP_OK) {
		fprintf(stderr, "tpuprof: diff: %s\n", tp_strerror(st));
		code = tp_status_exit_code(st);
		goto out;
	}
	tp_diff_text(&df, 20, &txt);
	tp_diff_json(&df, &js);
	tp_diff_html(&df, &html);
	if (write_outputs(out_dir, "diff", &txt, &js, &html, &d) != TP_OK) {
		code = d.status == TP_ENOMEM ? 2 : 3;
		goto out;
	}
	if (!quiet) {
		struct tp_buf con;
		tp_buf_init(&con);
		tp_diff_text(&df, 10, &con);
		if (con.data)
			fputs(con.data, stdout);
		tp_buf_free(&con);
		printf("outputs in %s/: diff.txt diff.json diff.html\n", out_dir);
	}
	if (have_fail && df.total_pct > fail_pct) {
		if (!quiet)
			printf("FAIL: total time grew by %.2f%% (limit %.2f%%)\n", df.total_pct,
			       fail_pct);
		code = 4;
	}
out:
	tp_buf_free(&txt);
	tp_buf_free(&js);
	tp_buf_free(&html);
	tp_diff_free(&df);
	for (int s = 0; s < 2; s++) {
		tp_analysis_free(&an[s]);
		tp_profile_free(p[s]);
	}
	return code;
}
