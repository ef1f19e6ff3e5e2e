/*
 * registry.c — the readers and outputs the CLI knows, in the order they are tried / written:
 * their names, files, flags and help lines, and the entry points the modules export for them.
 * Adding a reader or an output is one entry here (plus a prepare step, for the rare output
 * that must touch the profile before the analysis).
 */
#include "cli/cli.h"

#include <string.h>

#include "readers/capfile/capfile.h"
#include "readers/sophgo/sophgo.h"
#include "readers/traceread/traceread.h"
#include "writers/capreport/capreport.h"
#include "writers/chrome/chrome.h"
#include "writers/html/html.h"
#include "writers/opscsv/opscsv.h"
#include "writers/perfetto/perfetto.h"
#include "writers/sink/sink.h"
#include "writers/sqlitedb/sqlitedb.h"
#include "writers/summary/summary.h"
#include "writers/vendor/vendor.h"
#include "writers/xlsx/xlsx.h"

static int sophgo_detail(int cli)
{
	return cli == TP_CLI_DETAIL_FULL   ? TP_BMPROFILE_DETAIL_ON
	       : cli == TP_CLI_DETAIL_NONE ? TP_BMPROFILE_DETAIL_OFF
	                                   : TP_BMPROFILE_DETAIL_AUTO;
}

/* The Sophgo readers' options from the command line. */
static struct tp_bmprofile_opts sophgo_opts(const struct tp_cli_opts *o)
{
	return (struct tp_bmprofile_opts){.arch_override = o->arch,
	                                  .force_arch = o->force_arch,
	                                  .tiu_freq_mhz = o->tiu_freq_mhz,
	                                  .gdma_freq_mhz = o->gdma_freq_mhz,
	                                  .detail = sophgo_detail(o->detail),
	                                  .jobs = o->jobs};
}

static int read_bmprofile(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d)
{
	struct tp_bmprofile_opts bo = sophgo_opts(o);
	return tp_bmprofile_read(o->in_dir, &bo, out, d);
}

static int read_cdm(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d)
{
	struct tp_bmprofile_opts co = sophgo_opts(o);
	return tp_cdm_read(o->in_dir, &co, out, d);
}

static int read_capfile(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d)
{
	return tp_capfile_read(o->in_dir, out, d);
}

static int read_trace(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d)
{
	return tp_traceread_read(o->in_dir, out, d);
}

static const struct tp_cli_reader bmprofile_reader = {
    .name = "sophgo-bmprofile",
    .doc = "Sophgo bmprofile_data-N/ (BM1684, BM1684X, BM1688/CV186X, CV184X)",
    .probe = tp_bmprofile_probe,
    .read = read_bmprofile,
};

/* Tried before bmprofile: a cdm directory also holds a global.profile. */
static const struct tp_cli_reader cdm_reader = {
    .name = "sophgo-cdm",
    .doc = "Sophgo cdm_profile_data_dev{D}[-{N}]/ (BM1690/SG2260, SG2260E)",
    .probe = tp_cdm_probe,
    .read = read_cdm,
};

static const struct tp_cli_reader capfile_reader = {
    .name = "tpuprof-capture",
    .doc = "tpuprof_data_dev{D}-{N}/ written by libtpuprof",
    .probe = tp_capfile_probe,
    .read = read_capfile,
    .takes_file = 1, /* capture.tpp given directly */
};

static const struct tp_cli_reader trace_reader = {
    .name = "chrome-trace",
    .doc = "Chrome-trace JSON file, plain or gzip'd, or - for standard input (PyTorch/Kineto, "
           "ONNX Runtime, MXNet, TensorFlow timeline)",
    .probe = tp_traceread_probe,
    .read = read_trace,
    .takes_file = 1,
    .takes_stdin = 1,
};

size_t tp_cli_readers(const struct tp_cli_reader *const **out)
{
	static const struct tp_cli_reader *const list[] = {&cdm_reader, &bmprofile_reader,
	                                                   &capfile_reader, &trace_reader};
	*out = list;
	return sizeof list / sizeof *list;
}

/* The outputs, written in this order; the console summary comes last. */
static const struct tp_output outputs[] = {
    {
        .name = "summary",
        .file = "summary.txt",
        .disable_flag = "--disable_summary",
        .default_on = 1,
        .doc = "per-core summary table (reference layout) + engine busy/idle/utilisation, DDR "
               "read/write bandwidth, top layers and command types, notes",
        .render = tp_summary_txt_render,
    },
    {
        .name = "summary-json",
        .file = "summary.json",
        .disable_flag = "--disable_summary",
        .default_on = 1,
        .doc = "the summary numbers as JSON (units in key names), record counts, rankings",
        .write = tp_summary_json_write,
    },
    {
        .name = "summary-md",
        .file = "summary.md",
        .disable_flag = "--disable_summary",
        .default_on = 1,
        .doc = "capture summary as Markdown: latency/throughput, activities, operator types, "
               "slowest operators (captures only)",
        .render = tp_capmd_render,
    },
    {
        .name = "ops",
        .file = "ops.csv",
        .disable_flag = "--disable_ops_csv",
        .default_on = 1,
        .doc = "per-operator latency table with the sparse what-if columns (captures only)",
        .render = tp_opscsv_output_render,
    },
    {
        .name = "html",
        .spreads = 1,
        .file = "result.html",
        .disable_flag = "--disable_web",
        .default_on = 1,
        .doc = "result.html: self-contained offline web page (overview, timeline, memory charts)",
        .write = tp_html_output_write,
    },
    {
        .name = "perfetto",
        .spreads = 1,
        .file = "perfetto.pftrace",
        .enable_flag = "--perfetto",
        .disable_flag = "--disable_perfetto",
        .default_on = 1,
        .doc = "Perfetto trace for ui.perfetto.dev (compressed protobuf; SQL via trace_processor)",
        .write = tp_perfetto_output_write,
    },
    {
        .name = "chrome",
        .spreads = 1,
        .file = "trace.json",
        .enable_flag = "--json",
        .doc = "Chrome trace-event JSON (chrome://tracing, speedscope, scripts)",
        .write = tp_chrome_output_write,
    },
    {
        .name = "sqlite",
        .spreads = 1,
        .file = "profile.db",
        .enable_flag = "--sqlite",
        .doc = "SQLite database with Perfetto-style slice/args/counter tables (sqlite3 shell SQL)",
        .write = tp_sqlitedb_output_write,
    },
    {
        .name = "xlsx",
        .spreads = 1,
        .file = TP_XLSX_FILE,
        .disable_flag = "--disable_doc",
        .default_on = 1,
        .doc = "spreadsheet: Engine Summary, one sheet per engine and core (a command a row, "
               "by Global Idx; up to 50000 rows each unless --xlsx_rows), layers, operators "
               "with live sparse what-if formulas",
        .write = tp_xlsx_output_write,
    },
    {
        .name = "vendor",
        .file = "vendor",
        .enable_flag = "--vendor_files",
        .doc = "the vendor profiler's own files (tiuRegInfo_N.txt, tdmaRegInfo_N.txt, "
               "PerfAI_output.csv; instruction.csv, summary.csv, layer.csv, mac_util.csv for "
               "BM1684X/BM1684) for grep, as "
               "docs/vendor-files.md lists",
        .write = tp_vendor_output_write,
    },
};

size_t tp_cli_outputs(const struct tp_output **out)
{
	*out = outputs;
	return sizeof outputs / sizeof *outputs;
}

/* A workbook cut at --xlsx_rows says so in every summary too (never a silent cut). */
static int prepare_xlsx(struct tp_profile *p, const struct tp_out_opts *o, struct tp_diag *d)
{
	(void)d;
	return tp_xlsx_note_cap(p, o->max_cores, o->xlsx_rows);
}

/* What the trace outputs cannot show as read (flows they cannot draw) is noted once,
 * whichever of them are written. */
static int prepare_trace(struct tp_profile *p, const struct tp_out_opts *o, struct tp_diag *d)
{
	int rc = tp_sink_note(p, o->jobs);
	return rc == TP_OK ? rc
	                   : tp_diag_set(d, rc, "out of memory noting the trace outputs' flows");
}

int tp_cli_prepare_outputs(const unsigned char *enabled, struct tp_profile *p,
                           const struct tp_out_opts *o, struct tp_diag *d)
{
	typedef int (*prepare_fn)(struct tp_profile * p, const struct tp_out_opts *o,
	                          struct tp_diag *d);
	/* In the order their notes appear; a step shared by several outputs runs once. */
	static const struct {
		const char *output; /* its name in outputs[] */
		prepare_fn prepare;
	} steps[] = {{"xlsx", prepare_xlsx},
	             {"perfetto", prepare_trace},
	             {"chrome", prepare_trace},
	             {"sqlite", prepare_trace}};
	enum { NSTEPS = sizeof steps / sizeof *steps };
	prepare_fn done[NSTEPS];
	size_t ndone = 0;
	const struct tp_output *outs;
	size_t nout = tp_cli_outputs(&outs);
	for (size_t i = 0; i < NSTEPS; i++) {
		int on = 0, seen = 0;
		for (size_t k = 0; k < nout; k++)
			on |= enabled[k] && strcmp(outs[k].name, steps[i].output) == 0;
		for (size_t k = 0; k < ndone; k++)
			seen |= done[k] == steps[i].prepare;
		if (!on || seen)
			continue;
		done[ndone++] = steps[i].prepare;
		int rc = steps[i].prepare(p, o, d);
		if (rc != TP_OK)
			return rc;
	}
	return TP_OK;
}
