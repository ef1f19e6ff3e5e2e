/*
 * output.h — what the CLI knows about an output: struct tp_output (a file name, its enable
 * and disable flags, whether it is on by default, and its entry point), the options every
 * output receives (struct tp_out_opts) and tp_output_write, which does the part every output
 * shares: naming the file inside OUT_DIR, and for an output that renders into memory, the
 * buffer and the file. Trace writers implement `write` by calling tp_sink_drive
 * (writers/sink/sink.h); report writers (summary, HTML, xlsx, CSV) read model + analysis
 * directly.
 */
#ifndef TP_OUTPUT_H
#define TP_OUTPUT_H

#include "analysis/analysis.h"

/* Options shared by outputs (set by the CLI). */
struct tp_out_opts {
	const char *out_dir; /* existing directory */
	int quiet, verbose;
	size_t max_cores;               /* --num_core: cap on per-core outputs, 0 = all */
	const char *sparse_ratios_path; /* --sparse-ratios FILE for ops.csv, NULL = defaults */
	int trace_args_full; /* trace writers: also the derivable per-command args (Function
	                        Name, Global Idx, Start/End/Asic Cycle, Layer Type/Name); see
	                        tp_sink_fill_args */
	int jobs;            /* --jobs: threads the conversion may use in all (an output may use
	                        up to this many for itself, e.g. Perfetto's compression
	                        workers); 0 = tp_jobs_default() */
	uint64_t xlsx_rows;  /* --xlsx_rows: records per per-command sheet of the workbook; 0 =
	                        TP_XLSX_DEFAULT_ROWS, TP_XLSX_ROWS_ALL = every record */
};

/* An output the CLI can produce. It sets one of `write` and `render`. */
struct tp_output {
	const char *name;         /* "perfetto" */
	const char *file;         /* relative path inside OUT_DIR: "perfetto.pftrace" */
	const char *enable_flag;  /* "--perfetto" or NULL */
	const char *disable_flag; /* "--disable_perfetto" or NULL */
	int default_on;
	const char *doc; /* one line for --help and the README */
	/* 1 = the writer spreads its own work over o->jobs threads; such outputs are written
	 * one at a time (tpuprof convert), so their memory peaks never add up. */
	int spreads;
	/* Writes the output to `path` (OUT_DIR/file); reports failures in `d`. */
	int (*write)(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
	             const struct tp_out_opts *o, struct tp_diag *d);
	/* Renders the whole file into `b`, which tp_output_write then writes to OUT_DIR/file. An
	 * output with nothing to say for this profile (a capture-only report) leaves `b` empty:
	 * no file is written. */
	int (*render)(const struct tp_profile *p, const struct tp_analysis *a,
	              const struct tp_out_opts *o, struct tp_buf *b, struct tp_diag *d);
};

/* Writes `out` for `p` and `a` into o->out_dir ("." when `o` or its out_dir is NULL). */
int tp_output_write(const struct tp_output *out, const struct tp_profile *p,
                    const struct tp_analysis *a, const struct tp_out_opts *o, struct tp_diag *d);

#endif /* TP_OUTPUT_H */
