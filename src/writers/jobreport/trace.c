/*
 * trace.c — job.pftrace: the job as one Perfetto trace. The entries become a profile of their
 * own (one device per job device, a "Calls" track with one labelled slice per call, and per
 * core the engines' busy runs of every call), which the Perfetto writer (writers/perfetto)
 * encodes like any other profile: the job trace shares its encoding, its compression and
 * `tpuprof check`. Calls of a device follow one another in call order; they sit on a shared
 * clock only when every converted call records one of the same kind (tp_job.aligned).
 */
#include "writers/jobreport/jobreport_int.h"

#include "writers/perfetto/perfetto.h"

/* Gap between two calls of a device laid back to back: a twentieth of the longest call, at
 * least 1 µs, so the calls read as separate segments. */
static int64_t call_gap(const struct tp_job *j)
{
	int64_t max = 0;
	for (size_t i = 0; i < j->n; i++)
		if (j->e[i].ok && j->e[i].total_ns > max)
			max = j->e[i].total_ns;
	return max / 20 > 1000 ? max / 20 : 1000;
}

static int add_slice(struct tp_profile *p, int track, int64_t start, int64_t dur, const char *name,
                     const char *type, uint32_t args)
{
	struct tp_track *t = &p->tracks[track];
	struct tp_slice *s = tp_track_push(p, track);
	if (!s)
		return TP_ENOMEM;
	s->start_ns = start;
	s->args = args;
	struct tp_label l = {0};
	l.name = tp_profile_str(p, name);
	l.type = tp_profile_str(p, type);
	if (tp_slice_set_label(p, t, s, &l) != TP_OK)
		return TP_ENOMEM;
	return tp_slice_set_end(p, t, s, start + (dur > 0 ? dur : 1));
}

static uint32_t call_args(struct tp_profile *p, const struct tp_job_entry *e)
{
	tp_args_begin(p);
	tp_args_add_str(p, "dump", e->name);
	tp_args_add_str(p, "output", e->out);
	tp_args_add_str(p, "chip", e->arch);
	tp_args_add_int(p, "cores", e->num_cores);
	tp_args_add_real(p, "total (us)", (double)e->total_ns / 1000);
	if (e->imbalance > 0)
		tp_args_add_real(p, "core imbalance", e->imbalance);
	tp_args_add_str(p, "clock", tp_job_anchor_name(e->anchor));
	return tp_args_end(p);
}

/* The engine track of (device, core, kind), created on first use; -1 on out of memory. */
static int engine_track(struct tp_profile *p, int dev, int core, int kind)
{
	int t = tp_profile_find_track(p, dev, core, (enum tp_track_kind)kind);
	if (t < 0)
		t = tp_profile_add_track(p, dev, core, (enum tp_track_kind)kind,
		                         tp_track_kind_name((enum tp_track_kind)kind), 0);
	return t;
}

static int add_call(struct tp_profile *p, int dev, int calls, const struct tp_job_entry *e,
                    int64_t at)
{
	char label[512];
	snprintf(label, sizeof label, "call %lld: %s", (long long)e->call, e->name);
	int rc = add_slice(p, calls, at, e->total_ns, label, "call", call_args(p, e));
	for (size_t c = 0; rc == TP_OK && c < e->ncores; c++) {
		for (int k = 0; rc == TP_OK && k < TP_ENGINES; k++) {
			const struct tp_job_engine *x = &e->cores[c].eng[k];
			if (!x->present || !x->nruns)
				continue;
			int t = engine_track(p, dev, (int)c, k);
			if (t < 0)
				return TP_ENOMEM;
			for (size_t r = 0; rc == TP_OK && r < x->nruns; r++) {
				char name[48];
				snprintf(name, sizeof name, "%u commands", x->runs[r].commands);
				rc = add_slice(p, t, at + x->runs[r].start_ns, x->runs[r].dur_ns,
				               x->runs[r].commands == 1 ? "1 command" : name,
				               "busy", 0);
			}
		}
	}
	return rc;
}

/* Adds device entries [i, k) (one device, calls in order) to p. */
static int add_device(struct tp_profile *p, const struct tp_job *j, size_t i, size_t k,
                      int64_t origin, int64_t gap)
{
	int32_t cores = 0, ok = 0;
	for (size_t x = i; x < k; x++) {
		ok |= j->e[x].ok;
		if ((int32_t)j->e[x].ncores > cores)
			cores = (int32_t)j->e[x].ncores;
	}
	if (!ok)
		return TP_OK; /* a device none of whose calls converted has no process */
	int dev = tp_profile_add_device(p, j->e[i].device, (int32_t)p->num_devices, cores);
	int calls = dev < 0 ? -1 : tp_profile_add_track(p, dev, -1, TP_TRACK_HOST, "Calls", 0);
	if (calls < 0)
		return TP_ENOMEM;
	int64_t at = 0;
	for (size_t x = i; x < k; x++) {
		const struct tp_job_entry *e = &j->e[x];
		if (!e->ok)
			continue;
		int64_t start = j->aligned ? e->anchor_ns - origin : at;
		int rc = add_call(p, dev, calls, e, start);
		if (rc != TP_OK)
			return rc;
		at = start + e->total_ns + gap;
	}
	return TP_OK;
}

static int build(struct tp_profile *p, const struct tp_job *j)
{
	p->source = tp_profile_str(p, "tpuprof-job");
	int64_t origin = INT64_MAX, gap = call_gap(j);
	for (size_t i = 0; i < j->n; i++)
		if (j->e[i].ok && j->e[i].anchor_ns < origin)
			origin = j->e[i].anchor_ns;
	for (size_t i = 0; i < j->n;) {
		size_t k = i;
		while (k < j->n && strcmp(j->e[k].device, j->e[i].device) == 0)
			k++;
		int rc = add_device(p, j, i, k, origin, gap);
		if (rc != TP_OK)
			return rc;
		i = k;
	}
	return tp_profile_finish(p);
}

int tp_job_trace(const struct tp_job *j, const char *path, struct tp_diag *d)
{
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return tp_diag_set(d, TP_ENOMEM, "out of memory building job.pftrace");
	int rc = build(p, j);
	if (rc != TP_OK)
		rc = tp_diag_set(d, rc, "out of memory building job.pftrace");
	else
		rc = tp_perfetto_write(p, NULL, path, NULL, d);
	tp_profile_free(p);
	return rc;
}

int tp_job_report_write(const struct tp_job *j, const char *out_dir, struct tp_diag *d)
{
	static const struct {
		const char *file;
		void (*fn)(const struct tp_job *j, struct tp_buf *b);
	} files[] = {{"job_summary.txt", tp_job_summary_text},
	             {"job_summary.json", tp_job_summary_json},
	             {"index.html", tp_job_page}};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		struct tp_buf b;
		tp_buf_init(&b);
		files[i].fn(j, &b);
		int rc = tp_write_buf_file(out_dir, files[i].file, &b, d);
		tp_buf_free(&b);
		if (rc != TP_OK)
			return rc;
	}
	char *path = tp_path_join(out_dir, "job.pftrace");
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	int rc = tp_job_trace(j, path, d);
	tp_free(path);
	return rc;
}
