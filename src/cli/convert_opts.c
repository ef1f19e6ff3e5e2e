/*
 * convert_opts.c — the options of `tpuprof IN [OUT_DIR] [options]`: the --help text and the
 * parser that turns argv into struct tp_cli_opts. Each option that takes a value is one row of
 * a table (name, alias, how the value is checked and stored, the messages for a missing or a
 * bad value); the output switches (--json, --disable_doc, ...) come from the output registry.
 * Owns nothing: the options point into argv and into the caller's `enabled` array.
 */
#include "cli/cli.h"
#include "common/progress.h"
#include "writers/xlsx/xlsx.h"

#include <tpuprof/tpuprof_version.h>

#include <stdlib.h>
#include <string.h>

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
	           "       tpuprof job JOB_DIR [OUT_DIR]          convert every dump below JOB_DIR "
	           "and\n"
	           "                                              write the job report (see "
	           "tpuprof job --help;\n"
	           "                                              tpuprof JOB_DIR OUT_DIR does the "
	           "same)\n"
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
	    "                       CV184X, BM1690, SG2260, SG2260E); a dump that names\n"
	    "                       another arch is refused (exit 1) unless --force-arch\n"
	    "  --num_core N         show cores 0..N-1 only: tracks of higher cores are dropped "
	    "after\n"
	    "                       reading (alignment still uses every core), so no output has "
	    "them\n"
	    "  --tiu_freq MHZ       TIU clock used to turn cycles into time (default: per arch)\n"
	    "  --gdma_freq MHZ      GDMA clock (default: per arch)\n"
	    "  --sparse-ratios FILE perf-ratio table for ops.csv (see docs/sparse-ratios.md)\n"
	    "  --trace_file FILE    host side laid next to the device lanes: a Chrome-trace JSON "
	    "or\n"
	    "                       a libtpuprof capture (dump directory or capture.tpp), aligned\n"
	    "                       as in docs/input-chrome-trace.md (tpudnn disable_profile /\n"
	    "                       first tpudnn event or runtime call)\n"
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
	    "                       outputs at once (default: the CPUs this process may use,\n"
	    "                       its affinity and cgroup CPU quota); the files are\n"
	    "                       identical for every N\n"
	    "  -q, --quiet          print nothing but errors (and no progress line)\n"
	    "  --progress-delay MS  on a terminal, show the progress line once the conversion\n"
	    "                       has run MS milliseconds (default 1000; 0 = at once)\n"
	    "  -v, --verbose        print reader statistics and timings\n"
	    "  --timings FILE       write wall, CPU and serial CPU time, threads and peak\n"
	    "                       memory of each phase as JSON to FILE (the outputs are\n"
	    "                       then written one after another; docs/convert.md)\n"
	    "  -h, --help           this text\n"
	    "  --version            print the version\n"
	    "\nOutputs (written into OUT_DIR):\n");
	const struct tp_output *outs;
	size_t n = tp_cli_outputs(&outs);
	for (size_t i = 0; i < n; i++) {
		char flags[96] = "";
		if (outs[i].enable_flag)
			snprintf(flags, sizeof flags, "%s", outs[i].enable_flag);
		if (outs[i].disable_flag)
			snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%s%s",
			         flags[0] ? ", " : "", outs[i].disable_flag);
		fprintf(f, "  %-28s %-3s %-36s %s\n", outs[i].file,
		        outs[i].default_on ? "on" : "off", flags, outs[i].doc);
	}
	fprintf(f, "\nExit codes: 0 ok, 1 usage error, 2 bad input, 3 cannot write output, 5 (job) "
	           "some dumps failed.\n");
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

/* ---- The value options ---------------------------------------------------------------- */

/* Checks `v` and stores it in *o; 0, or -1 when the value is not accepted. */
typedef int (*opt_set)(struct tp_cli_opts *o, const char *v);

/* The decimal integer v in [lo, hi] as *out; 0, or -1 when v is not one. */
static int parse_long_in(const char *v, long lo, long hi, long *out)
{
	char *end = NULL;
	long n = strtol(v, &end, 10);
	if (end == v || *end || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

static int parse_int_in(const char *v, int lo, int hi, int *out)
{
	long n;
	if (parse_long_in(v, lo, hi, &n))
		return -1;
	*out = (int)n;
	return 0;
}

static int set_jobs(struct tp_cli_opts *o, const char *v)
{
	return parse_int_in(v, 1, TP_MAX_JOBS, &o->jobs);
}

static int set_arch(struct tp_cli_opts *o, const char *v)
{
	o->arch = tp_arch_from_name(v);
	return o->arch == TP_ARCH_UNKNOWN || o->arch == TP_ARCH_CPU ? -1 : 0;
}

static int set_tiu_freq(struct tp_cli_opts *o, const char *v)
{
	return parse_mhz(v, &o->tiu_freq_mhz);
}

static int set_gdma_freq(struct tp_cli_opts *o, const char *v)
{
	return parse_mhz(v, &o->gdma_freq_mhz);
}

static int set_num_core(struct tp_cli_opts *o, const char *v)
{
	return parse_int_in(v, 1, 1024, &o->num_core);
}

static int set_detail(struct tp_cli_opts *o, const char *v)
{
	if (strcmp(v, "auto") != 0 && strcmp(v, "full") != 0 && strcmp(v, "none") != 0)
		return -1;
	o->detail = strcmp(v, "full") == 0   ? TP_CLI_DETAIL_FULL
	            : strcmp(v, "none") == 0 ? TP_CLI_DETAIL_NONE
	                                     : TP_CLI_DETAIL_AUTO;
	return 0;
}

static int set_trace_args(struct tp_cli_opts *o, const char *v)
{
	if (strcmp(v, "full") != 0 && strcmp(v, "compact") != 0)
		return -1;
	o->trace_args_compact = strcmp(v, "compact") == 0;
	return 0;
}

static int set_xlsx_rows(struct tp_cli_opts *o, const char *v)
{
	uint64_t cap;
	if (tp_xlsx_parse_rows(v, &cap))
		return -1;
	o->xlsx_rows = cap;
	return 0;
}

static int set_progress_delay(struct tp_cli_opts *o, const char *v)
{
	return parse_long_in(v, 0, 86400000, &o->progress_delay_ms);
}

static int set_timings(struct tp_cli_opts *o, const char *v)
{
	o->timings = v;
	return 0;
}

static int set_trace_file(struct tp_cli_opts *o, const char *v)
{
	o->trace_file = v;
	return 0;
}

static int set_sparse_ratios(struct tp_cli_opts *o, const char *v)
{
	o->sparse_ratios = v;
	return 0;
}

/* One option with a value. `missing` is printed with the option as typed when the value is
 * absent (NULL: `bad` with an empty value instead); `bad` with the value when `set` rejects
 * it. */
struct value_opt {
	const char *name, *alias;
	opt_set set;
	const char *missing, *bad;
};

static const struct value_opt value_opts[] = {
    {"--jobs", "-j", set_jobs, NULL, "--jobs needs a thread count from 1 to 64, got '%s'"},
    {"--arch", NULL, set_arch, "%s needs a value", "unknown --arch '%s'"},
    {"--tiu_freq", NULL, set_tiu_freq, NULL,
     "--tiu_freq needs a clock in MHz between 1 and 100000, got '%s'"},
    {"--gdma_freq", NULL, set_gdma_freq, NULL,
     "--gdma_freq needs a clock in MHz between 1 and 100000, got '%s'"},
    {"--num_core", NULL, set_num_core, NULL, "--num_core needs a core count >= 1, got '%s'"},
    {"--detail", NULL, set_detail, NULL, "--detail takes 'auto', 'full' or 'none', got '%s'"},
    {"--trace_args", NULL, set_trace_args, NULL,
     "--trace_args takes 'full' or 'compact', got '%s'"},
    {"--xlsx_rows", NULL, set_xlsx_rows, NULL,
     "--xlsx_rows takes a row count >= 1 or 'all', got '%s'"},
    {"--progress-delay", NULL, set_progress_delay, NULL,
     "--progress-delay needs milliseconds from 0 to 86400000, got '%s'"},
    {"--trace_file", NULL, set_trace_file, "%s needs a Chrome-trace JSON file or a capture", NULL},
    {"--sparse-ratios", NULL, set_sparse_ratios, "%s needs a file", NULL},
    {"--timings", NULL, set_timings, "%s needs a file to write the report to", NULL},
};

/* argv[*i] as one of value_opts: -1 when it is none of them, 0 when its value was taken (*i
 * moved past it), else the exit code of the usage error (printed). */
static int value_option(int argc, char **argv, int *i, struct tp_cli_opts *o)
{
	const char *a = argv[*i];
	for (size_t k = 0; k < sizeof value_opts / sizeof *value_opts; k++) {
		const struct value_opt *vo = &value_opts[k];
		const char *v = NULL;
		int err = 0;
		if (!opt_value(argc, argv, i, vo->name, &v, &err) &&
		    !(vo->alias && opt_value(argc, argv, i, vo->alias, &v, &err)))
			continue;
		if (err && vo->missing)
			return usage_error(vo->missing, a);
		if (err || vo->set(o, v))
			return usage_error(vo->bad, err ? "" : v);
		return 0;
	}
	return -1;
}

/* `a` as an output's enable or disable switch: 1 if it is one (enabled[] updated), else 0. */
static int output_switch(const char *a, unsigned char *enabled)
{
	const struct tp_output *outs;
	size_t nout = tp_cli_outputs(&outs);
	int matched = 0;
	for (size_t k = 0; k < nout; k++) {
		if (outs[k].enable_flag && strcmp(a, outs[k].enable_flag) == 0) {
			enabled[k] = 1;
			matched = 1;
		}
		if (outs[k].disable_flag && strcmp(a, outs[k].disable_flag) == 0) {
			enabled[k] = 0;
			matched = 1;
		}
	}
	return matched;
}

int tp_cli_convert_opt_arity(const char *arg)
{
	for (size_t k = 0; k < sizeof value_opts / sizeof *value_opts; k++) {
		const char *names[2] = {value_opts[k].name, value_opts[k].alias};
		for (int i = 0; i < 2; i++) {
			size_t n = names[i] ? strlen(names[i]) : 0;
			if (n && strncmp(arg, names[i], n) == 0 && (arg[n] == 0 || arg[n] == '='))
				return arg[n] == 0;
		}
	}
	unsigned char enabled[32];
	return output_switch(arg, enabled) ? 0 : -1;
}

int tp_cli_log_flag(const char *a, int *quiet, int *verbose)
{
	int q = strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0;
	int v = strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0;
	*quiet |= q;
	*verbose |= v;
	return q || v;
}

int tp_cli_convert_opts(int argc, char **argv, struct tp_cli_opts *o, unsigned char *enabled)
{
	const struct tp_output *outs;
	size_t nout = tp_cli_outputs(&outs);
	for (size_t i = 0; i < nout; i++)
		enabled[i] = (unsigned char)outs[i].default_on;
	*o = (struct tp_cli_opts){.out_dir = "profile_out",
	                          .enabled = enabled,
	                          .progress_delay_ms = TP_PROGRESS_DELAY_DEFAULT_MS};
	const char *pos[2] = {0};
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			tp_cli_usage(stdout);
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			printf("tpuprof %s\n", TPUPROF_VERSION_STRING);
			return 0;
		}
		if (tp_cli_log_flag(a, &o->quiet, &o->verbose))
			continue;
		if (strcmp(a, "--force-arch") == 0) {
			o->force_arch = 1;
			continue;
		}
		int rc = value_option(argc, argv, &i, o);
		if (rc > 0)
			return rc;
		if (rc == 0 || output_switch(a, enabled))
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
	o->in_dir = pos[0];
	if (npos == 2)
		o->out_dir = pos[1];
	return TP_CLI_RUN;
}
