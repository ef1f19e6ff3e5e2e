/*
 * outdir.h — an earlier tpuprof output folder as an input: reads the folder's profile.db
 * (written with --sqlite) back into a profile, so `tpuprof diff` compares output folders, and
 * an output folder against a dump, with the same code as two inputs (docs/diff.md "Output
 * folders"). The profile is the caller's; nothing is kept between calls.
 */
#ifndef TP_OUTDIR_H
#define TP_OUTDIR_H

#include "model/model.h"

/* 1 when `dir` is a directory holding profile.db or summary.json. */
int tp_outdir_probe(const char *dir);
/* Reads an output folder's profile.db (written with --sqlite) back into a new profile (*out,
 * caller frees): devices, engine and host tracks, slices with the fields the analysis and the
 * diff use, host slices' annotations, and the layer table; clocks and source from
 * summary.json. TP_EUNSUPPORTED when the folder has no profile.db, TP_EFORMAT when the
 * database is not one tpuprof wrote (d names the file), TP_ENOMEM. */
int tp_outdir_read(const char *dir, struct tp_profile **out, struct tp_diag *d);

#endif /* TP_OUTDIR_H */
