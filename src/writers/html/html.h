/*
 * html.h — result.html: one self-contained, offline web page that shows a profile at a glance
 * (overview tables, a canvas timeline per core, local/global memory charts).
 *
 * The page's own JavaScript, CSS and HTML skeleton are real source files in src/writers/html/web/,
 * embedded into the binary at build time (embed_assets.cmake). The profile data is embedded
 * as JSON inside <script type="application/json">, columnar per track, so a million commands
 * stay compact and parse quickly; every string from the input is JSON-escaped (including "</"
 * and "<!--") and the page inserts it as text only.
 */
#ifndef TP_HTML_H
#define TP_HTML_H

#include "writers/sink/sink.h"

/* The `write` of the CLI's output "html" (result.html): needs p (finished); a may be NULL
 * (the overview then shows per-lane counts only). Honours o->max_cores. */
int tp_html_output_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                         const struct tp_out_opts *o, struct tp_diag *d);

/* Writes the page for profile p (finished with tp_profile_finish) and analysis a (may be NULL)
 * to `path` through a temporary file renamed into place. max_cores caps the cores shown
 * (0 = all); up to `jobs` threads write it (0 = 1). Returns TP_OK, TP_ENOMEM, or TP_EOUTPUT
 * with d filled. Deterministic: the same profile gives the same bytes, whatever `jobs` is.
 * Thread-safe as long as p and a are not modified. */
int tp_html_write_file(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                       size_t max_cores, unsigned jobs, struct tp_diag *d);

#endif /* TP_HTML_H */
