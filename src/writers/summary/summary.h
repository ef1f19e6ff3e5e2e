/*
 * summary.h — the summary outputs: summary.txt (the reference SummaryExporter table of
 * sophgo-analysis.md §4.2–§4.3, extended with the §4.4 engine metrics and notes) and
 * summary.json (the same numbers with units in the key names, record counts, top layers and
 * command types). Both are also available as text in a tp_buf for the console.
 */
#ifndef TP_SUMMARY_H
#define TP_SUMMARY_H

#include "writers/sink/sink.h"

/* Appends the summary table. `console` = 1 gives the console form (no SDMA columns when the
 * profile has no SDMA, as the reference console copy). Never fails except out of memory
 * (reported through out->oom). */
void tp_summary_text(const struct tp_profile *p, const struct tp_analysis *a, int console,
                     struct tp_buf *out);
/* Appends summary.json. */
void tp_summary_json(const struct tp_profile *p, const struct tp_analysis *a, struct tp_buf *out);

/* The `render` of the CLI's output "summary" (summary.txt). */
int tp_summary_txt_render(const struct tp_profile *p, const struct tp_analysis *a,
                          const struct tp_out_opts *o, struct tp_buf *b, struct tp_diag *d);
/* The `write` of the CLI's output "summary-json" (summary.json); a capture's is streamed. */
int tp_summary_json_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                          const struct tp_out_opts *o, struct tp_diag *d);

#endif /* TP_SUMMARY_H */
