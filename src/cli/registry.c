/*
 * registry.c — the readers and outputs the CLI knows, in the order they are tried / written.
 * Adding a reader or an output is one line here.
 */
#include "cli/cli.h"

#include "bmprofile/bmprofile.h"
#include "summary/summary.h"

/* Modules still being integrated are referenced weakly so the command links without them;
 * registry entries whose symbol is absent are skipped. */
#define TP_WEAK_OUTPUT(sym) extern const struct tp_output sym __attribute__((weak))
TP_WEAK_OUTPUT(tp_output_perfetto);
TP_WEAK_OUTPUT(tp_output_chrome);
TP_WEAK_OUTPUT(tp_output_sqlite);
TP_WEAK_OUTPUT(tp_output_html);
TP_WEAK_OUTPUT(tp_output_xlsx);
TP_WEAK_OUTPUT(tp_output_opscsv);
TP_WEAK_OUTPUT(tp_output_capmd);
extern int tp_bmprofile_probe(const char *dir) __attribute__((weak));
extern int tp_bmprofile_read(const char *dir, const struct tp_bmprofile_opts *o,
                             struct tp_profile **out, struct tp_diag *d) __attribute__((weak));
extern int tp_capfile_probe(const char *dir) __attribute__((weak));
extern int tp_capfile_read(const char *dir, struct tp_profile **out, struct tp_diag *d)
	__attribute__((weak));

static int read_bmprofile(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d)
{
	struct tp_bmprofile_opts bo = {.arch_override = o->arch,
	                               .tiu_freq_mhz = o->tiu_freq_mhz,
	                               .gdma_freq_mhz = o->gdma_freq_mhz};
	return tp_bmprofile_read(o->in_dir, &bo, out, d);
}

static int read_capfile(const struct tp_cli_opts *o, struct tp_profile **out, struct tp_diag *d)
{
	return tp_capfile_read(o->in_dir, out, d);
}

static const struct tp_cli_reader bmprofile_reader = {
	.name = "sophgo-bmprofile",
	.doc = "Sophgo bmprofile_data-N/ (BM1684, BM1684X, BM1688/CV186X)",
	.probe = tp_bmprofile_probe,
	.read = read_bmprofile,
};

static const struct tp_cli_reader capfile_reader = {
	.name = "tpuprof-capture",
	.doc = "tpuprof_data_dev{D}-{N}/ written by libtpuprof",
	.probe = tp_capfile_probe,
	.read = read_capfile,
};

size_t tp_cli_readers(const struct tp_cli_reader *const **out)
{
	static const struct tp_cli_reader *list[4];
	size_t n = 0;
	if (tp_bmprofile_probe)
		list[n++] = &bmprofile_reader;
	if (tp_capfile_probe && tp_capfile_read)
		list[n++] = &capfile_reader;
	*out = list;
	return n;
}

size_t tp_cli_outputs(const struct tp_output *const **out)
{
	static const struct tp_output *list[16];
	static size_t n;
	if (!n) {
		const struct tp_output *all[] = {
			&tp_output_summary_txt, &tp_output_summary_json, &tp_output_html,
			&tp_output_perfetto,    &tp_output_chrome,       &tp_output_sqlite,
			&tp_output_xlsx,        &tp_output_opscsv,       &tp_output_capmd,
		};
		for (size_t i = 0; i < sizeof all / sizeof *all; i++)
			if (all[i])
				list[n++] = all[i];
	}
	*out = list;
	return n;
}
