/*
 * vendor.h — the vendor profiler's own files, for the people who grep them (output
 * "vendor", off by default, --vendor_files): OUT_DIR/vendor/ holds, per chip family, what
 * the vendor's tool writes for the same dump: tiuRegInfo_<core>.txt, tdmaRegInfo_<core>.txt
 * (and cdmaRegInfo_<port>.txt) plus PerfAI_output.csv for the PerfAI chips (BM1688/CV186X,
 * CV184X, BM1690/SG2260, SG2260E), and summary.csv, layer.csv and mac_util.csv for the legacy
 * chips (BM1684X, BM1684). docs/vendor-files.md lists every deliberate difference
 * from the vendor's bytes.
 */
#ifndef TP_VENDOR_H
#define TP_VENDOR_H

#include "writers/output.h"

/* The `write` of the CLI's output "vendor": the folder `path`, written whole into a temporary
 * folder and renamed into place. A profile without a chip the vendor's tool handles writes
 * nothing. */
int tp_vendor_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                           const char *path, const struct tp_out_opts *o, struct tp_diag *d);

/* Writes the vendor files of profile p (finished; a: its analysis, for the layer files) into the
 * existing directory `dir`, each file atomically. Returns TP_OK, TP_ENOMEM or TP_EOUTPUT with d
 * filled; *nfiles (may be NULL) counts the files written. Deterministic. */
int tp_vendor_write_dir(const struct tp_profile *p, const struct tp_analysis *a, const char *dir,
                        size_t *nfiles, struct tp_diag *d);

#endif /* TP_VENDOR_H */
