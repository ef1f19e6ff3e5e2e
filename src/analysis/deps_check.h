/*
 * deps_check.h — the dependency property every reader's timeline must satisfy: no command
 * starts before the command it waits on ends. A TIU command's dep_id names the GDMA command
 * (of its core) it waits on, a GDMA command's the TIU command; the waited-on command is the
 * partner engine's slice with that cmd_id (ids that occur twice on a track are ambiguous and
 * not checked). Readers call it once their timeline is final and note a violation; tests run
 * it on every dump.
 */
#ifndef TP_DEPS_CHECK_H
#define TP_DEPS_CHECK_H

#include "model/model.h"

/* What tp_deps_check found. The first violation is the first in track order (device, core,
 * TIU before GDMA, then slice order). */
struct tp_deps_report {
	uint64_t checked;  /* commands whose waited-on command was found */
	uint64_t violated; /* of those, the ones that start before it ends */
	int32_t device, core;
	enum tp_track_kind kind;   /* of the first violating command */
	uint32_t cmd_id, dep_id;   /* its cmd_id and the partner's */
	int64_t start_ns, dep_end; /* its start, the partner's end */
};

/* Checks every TIU and GDMA track of p. Fills *r (zeroed first). Reads p only; allocates
 * scratch it frees. TP_OK or TP_ENOMEM. */
int tp_deps_check(const struct tp_profile *p, struct tp_deps_report *r);
/* The same on up to `jobs` threads (tp_par_run): each track a job, or in parts when the
 * threads outnumber the tracks; the report does not depend on `jobs`. */
int tp_deps_check_jobs(const struct tp_profile *p, unsigned jobs, struct tp_deps_report *r);
/* The same in parts of at most `part` slices (0 = as tp_deps_check_jobs chooses; tests set
 * it). */
int tp_deps_check_parts(const struct tp_profile *p, unsigned jobs, size_t part,
                        struct tp_deps_report *r);

/* A track's command by cmd_id and its end: the scratch index of the dependency lookups here and
 * in the cdm reader's vendor timeline. tp_id_end_cmp orders by id (qsort, bsearch). */
struct tp_id_end {
	uint32_t id;
	int64_t end;
};
int tp_id_end_cmp(const void *x, const void *y);

#endif
