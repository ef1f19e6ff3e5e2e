/*
 * jobreport.h — the report of a whole job (`tpuprof job`, docs/job.md): many dumps of one run,
 * one per device × call, each converted on its own into OUT_DIR/<dump>/, summed up in
 * OUT_DIR/index.html, job_summary.txt, job_summary.json and job.pftrace.
 *
 * The unit is the job entry: what the report needs of one dump, small enough to keep for
 * thousands of them (totals, per-core engine figures, a utilisation strip per core and
 * engine, and the engines' busy periods coalesced into at most TP_JOB_MAX_RUNS runs). A task
 * builds it from the converted profile (tp_job_entry_build) and stores it next to the dump's
 * outputs as job_entry.json (tp_job_entry_json); the merge reads those files back
 * (tp_job_entry_read), so the job report needs the per-dump outputs only, never the raw dumps.
 *
 * Ownership: struct tp_job owns every entry and every string and array they point to (one
 * arena); tp_job_free releases them. Not thread-safe: one thread builds and writes a job.
 */
#ifndef TP_JOBREPORT_H
#define TP_JOBREPORT_H

#include "analysis/analysis.h"

#define TP_JOB_BINS 100     /* utilisation strip: bins over the call's total time */
#define TP_JOB_MAX_RUNS 256 /* busy runs kept per core and engine (job.pftrace) */
#define TP_JOB_ENTRY_FILE "job_entry.json"

/* A busy period of one engine: consecutive commands whose gaps are short against the call. */
struct tp_job_run {
	int64_t start_ns, dur_ns; /* on the call's own time axis (0 = its first event) */
	uint32_t commands;
};

struct tp_job_engine {
	int present;
	uint64_t records;
	int64_t busy_ns;
	double util;     /* busy / total time, 0..1 */
	double ddr_gbps; /* DMA engines: DDR average bandwidth; 0 for TIU */
	int has_uarch;   /* TIU with cost data: uarch_rate is meaningful */
	double uarch_rate;
	uint16_t strip[TP_JOB_BINS]; /* busy share of each bin, per mille */
	struct tp_job_run *runs;
	size_t nruns;
};

struct tp_job_core {
	int32_t device, core;
	struct tp_job_engine eng[TP_ENGINES]; /* indexed by enum tp_track_kind (TIU..CDMA) */
};

/* Where a call's time 0 sits on a clock shared with other calls, if the data says. */
enum tp_job_anchor {
	TP_JOB_ANCHOR_NONE = 0,
	TP_JOB_ANCHOR_HOST_WALL, /* host wall clock of the run (bmprofile subnets), ns */
	TP_JOB_ANCHOR_TRACE,     /* the trace's own clock (Chrome traces' ts base), ns */
};
const char *tp_job_anchor_name(int anchor); /* "none", "host_wall_clock", "trace_clock" */

struct tp_job_entry {
	/* Identity, from the plan (names as found below JOB_DIR). */
	const char *name;   /* the dump's path relative to JOB_DIR */
	const char *out;    /* its output folder relative to OUT_DIR */
	const char *kind;   /* "cdm", "bmprofile", "capture", "trace", "dump" */
	const char *device; /* device label: "dev0", "node1/dev0", a trace's name */
	int64_t call;       /* the N of -N (calls of a device in this order), else 0 */
	int64_t pid;        /* captures: the process id in the name, else 0 */
	/* Outcome. */
	int ok;
	int exit_code;     /* the conversion's exit code (0 when ok) */
	const char *error; /* what went wrong ("" when ok) */
	/* Figures (zero when not ok). */
	const char *source, *arch, *net;
	int32_t num_cores;
	int64_t total_ns;
	uint64_t records;
	double parallelism, concurrency; /* the analysis' Overall row, 0..1 */
	double ddr_gbps;                 /* GDMA DDR average bandwidth over the cores */
	int has_uarch;
	double uarch_rate;           /* TIU over the cores, 0..1 */
	double imbalance;            /* max / mean over cores of their busy time; 0 = n/a */
	int anchor;                  /* enum tp_job_anchor */
	int64_t anchor_ns;           /* time 0 of the call on that clock */
	double eng_util[TP_ENGINES]; /* mean utilisation over the cores that have the engine */
	struct tp_job_core *cores;
	size_t ncores;
	/* Derived over the whole job by tp_job_finish. */
	double dev_share;   /* this call's total / the mean total of its call number's siblings
	                       on the other devices; 0 = no sibling */
	double sibling_dev; /* (total - median of the siblings) / median, the siblings being the
	                       same call number on other devices, else the device's other calls
	                       (calls of the same chip only) */
	size_t siblings;    /* how many; 0 = none (sibling_dev is then 0 and means nothing) */
};

struct tp_job {
	struct tp_arena arena;
	const char *title; /* what the report calls the job (JOB_DIR as given) */
	struct tp_job_entry *e;
	size_t n, cap;
	const char **notes; /* what the report should say besides the calls (dumps skipped) */
	size_t nnotes, cap_notes;
	/* Derived by tp_job_finish. */
	size_t ndevices;
	size_t nfailed;
	int aligned;             /* every converted call has the same kind of anchor */
	int anchor;              /* that kind when aligned */
	size_t slowest;          /* index of the converted call with the largest total; n = none */
	size_t imbalanced;       /* index of the call with the largest core imbalance; n = none */
	double device_imbalance; /* max over call numbers of max/mean total across devices */
	int64_t device_imbalance_call; /* the call number where it is largest */
};
typedef struct tp_job tp_job;

void tp_job_init(struct tp_job *j, const char *title);
void tp_job_free(struct tp_job *j);
/* Appends a zeroed entry (ok = 0) and returns it, or NULL on out of memory. The pointer is
 * valid until the next append. Strings set on it must live in j->arena (tp_job_str). */
struct tp_job_entry *tp_job_add(struct tp_job *j);
/* Appends a note (copied). TP_OK or TP_ENOMEM. */
int tp_job_note(struct tp_job *j, const char *text);
/* A copy of s in the job's arena ("" for NULL); NULL on out of memory. */
const char *tp_job_str(struct tp_job *j, const char *s);

/* Fills e's figures from a converted profile and its analysis (identity fields untouched;
 * e->ok set to 1). Strings and arrays go to j's arena. TP_OK or TP_ENOMEM. */
int tp_job_entry_build(struct tp_job *j, struct tp_job_entry *e, const struct tp_profile *p,
                       const struct tp_analysis *a);
/* Appends e as the JSON object of job_entry.json to b. Deterministic. */
void tp_job_entry_json(const struct tp_job_entry *e, struct tp_buf *b);
/* Reads a job_entry.json into a new entry of j. TP_OK; TP_ENOTFOUND / TP_EIO when the file
 * cannot be read; TP_EFORMAT (d names the file and the offset) when it is not one
 * tp_job_entry_json wrote; TP_ENOMEM. On error no entry is added. */
int tp_job_entry_read(struct tp_job *j, const char *path, struct tp_diag *d);

/* Reads the calls of a job_summary.json (tp_job_summary_json) back as entries of j: the
 * scalar figures and the per-engine mean utilisation (no per-core detail). For comparing
 * jobs. TP_OK; TP_ENOTFOUND / TP_EIO; TP_EFORMAT (d names the file and offset); TP_ENOMEM. */
int tp_job_summary_read(struct tp_job *j, const char *path, struct tp_diag *d);

/* Natural order of device labels: digit runs compare as numbers ("dev2" < "dev10"); the
 * order tp_job_finish sorts devices in. */
int tp_job_natcmp(const char *a, const char *b);

/* Sorts the entries (device in natural order — dev2 before dev10 —, then call, pid, name) and
 * derives the job-wide figures (failed count, slowest, most imbalanced, sibling deviations,
 * device imbalance, alignment). Call once after the last entry is added. */
void tp_job_finish(struct tp_job *j);

/* Writes job_summary.txt / job_summary.json (b appended). Deterministic. */
void tp_job_summary_text(const struct tp_job *j, struct tp_buf *b);
void tp_job_summary_json(const struct tp_job *j, struct tp_buf *b);
/* Writes index.html: self-contained (inline style and script, no network), one row per
 * entry linking to OUT_DIR/<out>/result.html. */
void tp_job_page(const struct tp_job *j, struct tp_buf *b);
/* Writes job.pftrace at `path`: one process per device, each call one labelled slice on the
 * device's Calls track with the engines' busy runs under it, calls of a device one after the
 * other (on the shared clock when every call has an anchor of the same kind). Uses the
 * Perfetto writer (writers/perfetto) on a profile built from the entries. TP_OK, TP_ENOMEM,
 * TP_EOUTPUT. */
int tp_job_trace(const struct tp_job *j, const char *path, struct tp_diag *d);
/* Everything above into out_dir: index.html, job_summary.txt, job_summary.json, job.pftrace.
 * Stops at the first failure (d says which file). */
int tp_job_report_write(const struct tp_job *j, const char *out_dir, struct tp_diag *d);

#endif /* TP_JOBREPORT_H */
