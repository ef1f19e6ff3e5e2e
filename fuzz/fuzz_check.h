/*
 * fuzz_check.h — the contract every reader's fuzz target checks on one result: success gives
 * a profile whose slices end no earlier than they start (and, with `nonneg`, start at or after
 * the time axis' 0); failure gives a message and no profile. Anything else aborts, which
 * libFuzzer reports as a crash. The profile is freed. Also the seed folder a target's
 * LLVMFuzzerInitialize writes generated seeds into.
 */
#ifndef TP_FUZZ_CHECK_H
#define TP_FUZZ_CHECK_H

#include "common/common.h"
#include "model/model.h"

#include <stdlib.h>

static inline void fuzz_check_read(int rc, struct tp_profile *p, const struct tp_diag *d,
                                   int nonneg)
{
	if (rc != TP_OK) {
		if (p != NULL || d->msg[0] == 0)
			abort();
		return;
	}
	for (size_t t = 0; t < p->num_tracks; t++)
		for (size_t i = 0; i < p->tracks[t].count; i++) {
			const struct tp_slice *s = &p->tracks[t].slices[i];
			if (tp_slice_end(&p->tracks[t], s) < s->start_ns ||
			    (nonneg && s->start_ns < 0))
				abort();
		}
	tp_profile_free(p);
}

/* The common start of a target's LLVMFuzzerInitialize: the folder where it writes its generated
 * seeds (TP_FUZZ_SEED_DIR, set by scripts/fuzz.sh), or NULL when there is none. */
static inline const char *fuzz_seed_dir(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *dir = getenv("TP_FUZZ_SEED_DIR");
	return dir && *dir ? dir : NULL;
}

#endif /* TP_FUZZ_CHECK_H */
