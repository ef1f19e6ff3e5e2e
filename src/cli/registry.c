/*
 * registry.c — the readers and outputs the CLI knows, in the order they are tried / written.
 * Adding a reader or an output is one line here (plus a prepare step, for the rare output that
 * must touch the profile before the analysis).
 */
#include "cli/cli.h"

#include "readers/capfile/capfile.h"
#include "readers/sophgo/sophgo.h"
#include "readers/traceread/traceread.h"
#include "writers/capreport/capreport.h"
#include "writers/chrome/chrome.h"
#include "writers/html/html.h"
#include "writers/opscsv/opscsv.h"
#include "writers/perfetto/perfetto.h"
#include "writers/sqlitedb/sqlitedb.h"
#include "writers/summary/summary.h"
#include "writers/xlsx/xlsx.h"

static int sophgo_detail(int cli)
{
	return cli == TP_CLI_DETAIL_FULL   ? TP_BMPROFILE_DETAIL_ON
	       : cli == TP_CLI_DETAIL_NONE ? TP_BMPROFILE_DETAIL_OFF
	                                   : TP_BMPROFILE_DETAIL_AUTO;
}

static int read_bmprofile(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d)
{
	struct tp_bmprofile_opts bo = {.arch_override = o->arch,
	                               .tiu_freq_mhz = o->tiu_freq_mhz,
	                               .gdma_freq_mhz = o->gdma_freq_mhz,
	                               .detail = sophgo_detail(o->detail),
	                               .jobs = o->jobs};
	return tp_bmprofile_read(o->in_dir, &bo, out, d);
}

static int read_cdm(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d)
{
	struct tp_cdm_opts co = {.arch_override = o->arch,
	                         .tiu_freq_mhz = o->tiu_freq_mhz,
	                         .gdma_freq_mhz = o->gdma_freq_mhz,
	                         .detail = sophgo_detail(o->detail),
	                         .jobs = o->jobs};
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

size_t tp_cli_outputs(const struct tp_output *const **out)
{
	/* Written in this order; the console summary comes last. */
	static const struct tp_output *const list[] = {
	    &tp_output_summary_txt, &tp_output_summary_json, &tp_output_capmd,
	    &tp_output_opscsv,      &tp_output_html,         &tp_output_perfetto,
	    &tp_output_chrome,      &tp_output_sqlite,       &tp_output_xlsx,
	};
	*out = list;
	return sizeof list / sizeof *list;
}

/* A workbook cut at --xlsx_rows says so in every summary too (never a silent cut). */
static int prepare_xlsx(struct tp_profile *p, const struct tp_out_opts *o, struct tp_diag *d)
{
	(void)d;
	return tp_xlsx_note_cap(p, o->max_cores, o->xlsx_rows);
}

int tp_cli_prepare_output(const struct tp_output *out, struct tp_profile *p,
                          const struct tp_out_opts *o, struct tp_diag *d)
{
	static const struct {
		const struct tp_output *out;
		int (*prepare)(struct tp_profile *p, const struct tp_out_opts *o,
		               struct tp_diag *d);
	} steps[] = {{&tp_output_xlsx, prepare_xlsx}};
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
		if (steps[i].out == out)
			return steps[i].prepare(p, o, d);
	return TP_OK;
}
