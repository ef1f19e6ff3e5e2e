/*
 * xlsx_fixture.h — synthetic profiles built in code for the workbook's tests and benchmark
 * (not part of tpcore): a BM1688-like two-core accelerator dump with TIU/GDMA/SDMA commands,
 * sys commands, directions, argument sets and layers, and a tpuprof capture with warm-up and
 * measured steps of operators (sparse-eligible and not). Everything is deterministic.
 */
#ifndef TP_XLSX_FIXTURE_H
#define TP_XLSX_FIXTURE_H

#include "model/model.h"

struct fx_engines_cfg {
	size_t tiu[2], gdma[2], sdma[2]; /* commands per core */
	int layers;                      /* attach commands to a few layers */
	int bad_strings;                 /* names with invalid UTF-8 and control characters */
};

/* Builds and finishes an accelerator profile. Returns NULL on out of memory. Caller frees
 * with tp_profile_free. */
struct tp_profile *fx_engines(const struct fx_engines_cfg *cfg);

/* Builds and finishes a capture: one device, two threads, `steps` steps (the first is
 * warm-up) of five operators each. Returns NULL on out of memory. */
struct tp_profile *fx_capture(unsigned steps);

#endif /* TP_XLSX_FIXTURE_H */
