/*
 * convert.c — `tpuprof IN_DIR [OUT_DIR] [options]`: detect the input format, read it into the
 * model, analyse, and write the enabled outputs into OUT_DIR (default profile_out).
 */
#include "cli/cli.h"
#include "summary/summary.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void tp_cli_usage(FILE *f)
{
	fprintf(f,
	        "usage: tpuprof IN_DIR [OUT_DIR] [options]     convert a profile (OUT_DIR defaults to profile_out)\n"
	        "       tpuprof check FILE.pftrace             validate a Perfetto trace written by tpuprof\n"
	        "\n"
	        "Inputs (detected from the directory's content):\n");
	const struct tp_cli_reader *const *rd;
	size_t nr = tp_cli_readers(&rd);
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "  %-20s %s\n", rd[i]->name, rd[i]->doc);
	fprintf(f,
	        "\nOptions:\n"
	        "  --arch NAME          override the architecture (BM1684, BM1684X, BM1688, CV186X, A2,\n"
	        "                       CV184X, BM1690, SG2260, SG2260E)\n"
	        "  --num_core N         show cores 0..N-1 only: tracks of higher cores are dropped after\n"
	        "                       reading (alignment still uses every core), so no output has them\n"
	        "  --tiu_freq MHZ       TIU clock used to turn cycles into time (default: per arch)\n"
	        "  --gdma_freq MHZ      GDMA clock (default: per arch)\n"
	        "  --sparse-ratios FILE perf-ratio table for ops.csv (see docs/sparse-ratios.md)\n"
	        "  --trace_args MODE    full (default): every reference annotation on each trace slice;\n"
	        "                       compact: drop the ones derivable from the slice itself (Function\n"
	        "                       Name, Global Idx, Start/End/Asic Cycle, Layer Type/Name) for\n"
	        "                       smaller traces of huge dumps\n"
	        "  -q, --quiet          print nothing but errors\n"
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
		fprintf(f, "  %-28s %-3s %-36s %s\n", outs[i]->file, outs[i]->default_on ? "on" : "off",
		        flags, outs[i]->doc);
	}
	fprintf(f, "\nExit codes: 0 ok, 1 usage error, 2 bad input, 3 cannot write output.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "tpuprof: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see tpuprof --help)\n");
	return 1;
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

static int parse_mhz(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v > 0) || v > 100000)
		return -1;
	*out = v;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tp_cli_convert(int argc, char **argv)
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
				return usage_error("--tiu_freq needs a clock in MHz, got '%s'", err ? "" : v);
			continue;
		}
		if (opt_value(argc, argv, &i, "--gdma_freq", &v, &err)) {
			if (err || parse_mhz(v, &o.gdma_freq_mhz))
				return usage_error("--gdma_freq needs a clock in MHz, got '%s'", err ? "" : v);
			continue;
		}
		if (opt_value(argc, argv, &i, "--num_core", &v, &err)) {
			char *end = NULL;
			long n = err ? 0 : strtol(v, &end, 10);
			if (err || end == v || *end || n < 1 || n > 1024)
				return usage_error("--num_core needs a core count >= 1, got '%s'", err ? "" : v);
			o.num_core = (int)n;
			continue;
		}
		if (opt_value(argc, argv, &i, "--trace_args", &v, &err)) {
			if (err || (strcmp(v, "full") != 0 && strcmp(v, "compact") != 0))
				return usage_error("--trace_args takes 'full' or 'compact', got '%s'",
				                   err ? "" : v);
			o.trace_args_compact = strcmp(v, "compact") == 0;
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
		fprintf(stderr, "tpuprof: %s: no such file or directory\n", o.in_dir);
		return 2;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "tpuprof: %s: not a directory (expected a profile data directory)\n",
		        o.in_dir);
		return 2;
	}
	const struct tp_cli_reader *const *rd;
	size_t nr = tp_cli_readers(&rd);
	const struct tp_cli_reader *reader = NULL;
	for (size_t i = 0; i < nr && !reader; i++)
		if (rd[i]->probe(o.in_dir))
			reader = rd[i];
	if (!reader) {
		fprintf(stderr,
		        "tpuprof: %s: no profile data found (expected global.profile / iter*.profile, cdmlib*.profile, "
		        "or a tpuprof capture)\n",
		        o.in_dir);
		return 2;
	}

	double t0 = now_s();
	struct tp_profile *p = NULL;
	int rc = reader->read(&o, &p, &d);
	if (rc != TP_OK) {
		fprintf(stderr, "tpuprof: %s\n", d.msg[0] ? d.msg : tp_strerror(rc));
		tp_profile_free(p);
		return tp_status_exit_code(rc);
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
	double t1 = now_s();
	struct tp_analysis an;
	rc = tp_analyze(p, &an);
	if (rc != TP_OK) {
		fprintf(stderr, "tpuprof: analysis: %s\n", tp_strerror(rc));
		tp_profile_free(p);
		return tp_status_exit_code(rc);
	}
	double t2 = now_s();
	if (o.verbose)
		fprintf(stderr,
		        "tpuprof: read %s (%s) in %.3f s: %zu slices, %llu records, %llu dropped, "
		        "%llu blocks skipped; analysis %.3f s\n",
		        o.in_dir, reader->name, t1 - t0, tp_profile_slice_count(p),
		        (unsigned long long)p->stats.records_read,
		        (unsigned long long)p->stats.records_dropped,
		        (unsigned long long)p->stats.blocks_skipped, t2 - t1);

	int exit_code = 0;
	if (tp_mkdirs(o.out_dir, &d) != TP_OK) {
		fprintf(stderr, "tpuprof: %s\n", d.msg);
		exit_code = 3;
		goto out;
	}
	struct tp_out_opts oo = {.out_dir = o.out_dir,
	                         .quiet = o.quiet,
	                         .verbose = o.verbose,
	                         .sparse_ratios_path = o.sparse_ratios,
	                         .trace_args_full = !o.trace_args_compact};
	for (size_t i = 0; i < nout; i++) {
		if (!enabled[i])
			continue;
		struct tp_diag od = {0};
		double w0 = now_s();
		int s = outs[i]->write(p, &an, &oo, &od);
		if (s != TP_OK) {
			fprintf(stderr, "tpuprof: %s: %s\n", outs[i]->file, od.msg[0] ? od.msg : tp_strerror(s));
			int code = tp_status_exit_code(s);
			if (code > exit_code)
				exit_code = code;
			continue;
		}
		if (o.verbose) {
			/* Some outputs apply only to some inputs (ops.csv to captures) and write
			 * nothing otherwise. */
			char *path = tp_path_join(o.out_dir, outs[i]->file);
			struct stat fs;
			if (path && stat(path, &fs) == 0)
				fprintf(stderr, "tpuprof: wrote %s in %.3f s\n", path, now_s() - w0);
			tp_free(path);
		}
	}
	if (!o.quiet) {
		struct tp_buf b;
		tp_buf_init(&b);
		tp_summary_text(p, &an, 1, &b);
		if (b.data)
			fputs(b.data, stdout);
		tp_buf_free(&b);
		for (size_t i = 0; i < p->num_notes && i < 8; i++)
			printf("note: %s\n", tp_str(p, p->notes[i].text));
		printf("outputs in %s/:", o.out_dir);
		for (size_t i = 0; i < nout; i++) {
			char *path = tp_path_join(o.out_dir, outs[i]->file);
			struct stat fs;
			if (enabled[i] && path && stat(path, &fs) == 0)
				printf(" %s", outs[i]->file);
			tp_free(path);
		}
		printf("\n");
	}
out:
	tp_analysis_free(&an);
	tp_profile_free(p);
	return exit_code;
}
