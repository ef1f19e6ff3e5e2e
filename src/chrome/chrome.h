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
 * one event at a time.
 */
#ifndef TP_CHROME_H
#define TP_CHROME_H

#include "sink/sink.h"

/* Writes the profile to `path` (temporary file + rename). `a` may be NULL. Returns TP_OK,
 * TP_ENOMEM, TP_EOUTPUT or an error of tp_sink_drive; d says what and where. full_args: see
 * tp_sink_fill_args_ex. */
int tp_chrome_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                    int full_args, struct tp_diag *d);

/* The CLI's description: trace.json, --json, default off. */
extern const struct tp_output tp_output_chrome;

#endif /* TP_CHROME_H */
