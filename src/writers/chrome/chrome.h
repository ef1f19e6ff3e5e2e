/*
 * chrome.h — the Chrome trace-event JSON writer (trace.json) for chrome://tracing, Perfetto's
 * legacy importer, speedscope and scripts.
 *
 * Format: the JSON object form {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}.
 * Integer pids/tids; "M" metadata events name processes and threads and give their sort
 * order; slices are "X" complete events with ts/dur in microseconds printed with exactly 3
 * decimals (exact to the nanosecond); counters are "C" events; dependencies are flow events
 * "s" (at the source slice) and "f" with "bp":"e" (at the waiting slice), both with the flow
 * id. Every string is JSON-escaped (control characters included). Streamed: the writer holds
 * a bounded ring of event batches, formatted on --jobs threads and written in order.
 */
#ifndef TP_CHROME_H
#define TP_CHROME_H

#include "writers/sink/sink.h"

/* Writes the profile to `path` (temporary file + rename). `a` may be NULL. Returns TP_OK,
 * TP_ENOMEM, TP_EOUTPUT or an error of tp_sink_drive; d says what and where. full_args: see
 * tp_sink_fill_args. Formats on the calling thread only (jobs = 1). */
int tp_chrome_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                    int full_args, struct tp_diag *d);

/* Options of tp_chrome_write_ex. */
struct tp_chrome_opts {
	int full_args;       /* see tp_sink_fill_args */
	int jobs;            /* threads formatting events, the caller's included; 0 = the online
	                        CPUs, 1 = none besides the caller. The file's bytes do not depend
	                        on it. Every part of the writing uses them: the slices' arguments
	                        and text (in parts), the other events' text (in batches). */
	size_t batch_events; /* events formatted per batch; 0 = the default (8192). Tests use
	                        small batches; the bytes do not depend on it either. */
	size_t part_slices;  /* slices per part of a track (tp_sink_parts), formatted on the
	                        threads; 0 = TP_SINK_PART_SLICES. Nor on this. */
};

/* tp_chrome_write with options (NULL = full_args 0, jobs 0, default batches). Same returns. */
int tp_chrome_write_ex(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                       const struct tp_chrome_opts *opts, struct tp_diag *d);

/* The `write` of the CLI's output "chrome" (trace.json): o->trace_args_full, o->jobs. */
int tp_chrome_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                           const char *path, const struct tp_out_opts *o, struct tp_diag *d);

#endif /* TP_CHROME_H */
