/*
 * sg_deps.c — the Sophgo readers' last steps: the dependency property of deps_check.h on the
 * finished timeline, and a profile note when commands start before what they wait on ends
 * (the timeline is then as the input recorded it: the readers never move a command to hide
 * it); then the profile's sort and index, and its hand-over or release. Owns nothing.
 */
#include "analysis/deps_check.h"
#include "common/timings.h"
#include "readers/sophgo/sg_int.h"

int sg_deps_note(struct tp_profile *p, unsigned jobs)
{
	struct tp_deps_report r;
	if (tp_deps_check_jobs(p, jobs, &r) != TP_OK)
		return TP_ENOMEM;
	if (!r.violated)
		return TP_OK;
	int tiu = r.kind == TP_TRACK_TIU;
	tp_profile_note(p,
	                "dependencies: %llu of %llu commands start before the command they wait "
	                "on ends, as the input records them (first: core %d %s cmd %u starts at "
	                "%lld ns, %s cmd %u it waits on ends at %lld ns)",
	                (unsigned long long)r.violated, (unsigned long long)r.checked, (int)r.core,
	                tiu ? "TIU" : "GDMA", r.cmd_id, (long long)r.start_ns, tiu ? "GDMA" : "TIU",
	                r.dep_id, (long long)r.dep_end);
	return TP_OK;
}

int sg_read_deps(struct tp_profile *p, int rc, unsigned jobs, struct tp_diag *d, const char *dir)
{
	tp_tm_begin("deps");
	if (rc == TP_OK && sg_deps_note(p, jobs) != TP_OK)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	tp_tm_end();
	if (rc == TP_OK && p->oom)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	return rc;
}

int sg_read_done(struct tp_profile *p, int rc, unsigned jobs, struct tp_diag *d, const char *dir,
                 struct tp_profile **out)
{
	tp_tm_begin("finish");
	if (rc == TP_OK && tp_profile_finish_jobs(p, jobs) != TP_OK)
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", dir);
	tp_tm_end();
	if (rc != TP_OK) {
		tp_profile_free(p);
		return rc;
	}
	*out = p;
	return TP_OK;
}
