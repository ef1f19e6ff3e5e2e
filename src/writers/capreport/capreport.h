/*
 * capreport.h — summary.json and summary.md of tpuprof captures (host programs instrumented
 * with libtpuprof): the Cambricon profiler's app_stats / op_stats structure
 * (neural-engine-cambricon.md §B.3) with units in every key name, overall latency and
 * throughput statistics over the non-warm-up steps, per-operator-type aggregates and the
 * slowest operators (§B.4 recommended tables). The layout is documented in
 * docs/capture-reports.md.
 *
 * The summary output (src/writers/summary) calls tp_capreport_write_json for captures
 * (profile->arch == TP_ARCH_CPU); tp_capmd_render renders summary.md on its own.
 * Everything is deterministic: stable orders with ties broken by name, no clock, host name or
 * pid other than what the capture itself recorded. No global state; thread-safe on distinct
 * buffers.
 */
#ifndef TP_CAPREPORT_H
#define TP_CAPREPORT_H

#include "writers/sink/sink.h"

/* Number of operators listed in the "slowest operators" tables. */
#define TP_CAPREPORT_TOP_OPS 20
/* Per-step activity rows printed in summary.md before the table is cut (summary.json has
 * them all). */
#define TP_CAPREPORT_MD_ACTIVITY_ROWS 100

/* Appends the complete summary.json document of capture `p` to `out`. `a` is not needed
 * and may be NULL (the statistics come from the profile's operator, step and activity
 * slices). Returns TP_OK or TP_ENOMEM (then `out` holds a partial document and has oom
 * set). */
int tp_capreport_write_json(const struct tp_profile *p, const struct tp_analysis *a,
                            struct tp_buf *out);

/* Receives summary.json while it is written: `n` bytes that follow the previous call's.
 * Returns 0, or nonzero to stop the document (tp_capreport_stream_json then returns
 * TP_EOUTPUT). */
typedef int (*tp_capreport_flush_fn)(void *ctx, const char *bytes, size_t n);
/* tp_capreport_write_json with bounded memory: whenever `out` holds at least `flush_at`
 * bytes between two entries of the document, they go to `flush` and `out` is emptied; what
 * is left at the end stays in `out` for the caller to hand over too. The bytes are those
 * tp_capreport_write_json would write (a capture of many steps writes an op_stats entry per
 * step and operator, which can reach a hundred megabytes). TP_OK, TP_ENOMEM or TP_EOUTPUT. */
int tp_capreport_stream_json(const struct tp_profile *p, const struct tp_analysis *a,
                             struct tp_buf *out, size_t flush_at, tp_capreport_flush_fn flush,
                             void *ctx);

/* Appends the complete summary.md document of capture `p` to `out`. Same contract as
 * tp_capreport_write_json. Every string from the capture is escaped for Markdown tables. */
int tp_capreport_write_md(const struct tp_profile *p, const struct tp_analysis *a,
                          struct tp_buf *out);

/* Appends `s` escaped for one Markdown table cell: '|' and Markdown punctuation are
 * backslash-escaped, '&', '<', '>' become entities, CR / LF / TAB become spaces. */
void tp_md_cell(struct tp_buf *b, const char *s);

/* The accelerator analysis (src/analysis/accel.h; NULL: nothing is written): as a section of
 * summary.txt, as the member "accelerator": {...} of summary.json's top object (the caller
 * writes the separators around it), and as a section of summary.md (accel.c). */
struct tp_accel;
void tp_capreport_accel_text(const struct tp_profile *p, const struct tp_accel *a,
                             struct tp_buf *b);
void tp_capreport_accel_json(const struct tp_profile *p, const struct tp_accel *a,
                             struct tp_buf *b);
void tp_capreport_accel_md(const struct tp_profile *p, const struct tp_accel *a, struct tp_buf *b);

/* The `render` of output "summary-md" (OUT_DIR/summary.md, listed in the CLI's registry):
 * renders only for captures (arch == TP_ARCH_CPU), otherwise leaves `b` empty (no file). */
int tp_capmd_render(const struct tp_profile *p, const struct tp_analysis *a,
                    const struct tp_out_opts *o, struct tp_buf *b, struct tp_diag *d);

#endif /* TP_CAPREPORT_H */
