/*
 * diff.h — comparison of two profiles ("what changed between run A and run B?"): the analysis
 * behind `tpuprof diff` (src/cli/diff.c) and its three outputs, diff.txt, diff.json and
 * diff.html (docs/diff.md).
 *
 * Inputs are two finished profiles with their analyses, from any reader. The diff matches
 *   - layers: by name; layers without a name (Sophgo dumps) and layers left unmatched by name
 *     by (device, core, type, position among the layers of that type on that core);
 *   - operator types: Sophgo layer types, or the op_type of captured / traced operators;
 *   - operators: traced / captured operator slices by name (when the input has no layers);
 *   - command types: (engine, function name) over engine tracks;
 * and reports per row the time on each side, the delta (absolute, %, share of the total
 * change), appeared / vanished rows, and per-core engine utilisation and DDR bandwidth deltas.
 * Rows of each kind are ranked by impact: |delta| descending (ties by key, so output is
 * deterministic).
 *
 * Noise: when both inputs hold at least two steps (TP_CAP_TYPE_STEP slices, warm-up steps
 * excluded), the total of each side is the median step time and its spread the half-range of
 * its step times; the total change is "within noise" when |Δmedian| is no larger than the
 * larger spread. Every row then gets the same treatment: a slice counts toward the step whose
 * interval holds its start (slices outside every non-warm-up step count toward none), each
 * side's time is the median of the row's per-step sums, with their half-range as its spread,
 * and the row is "within noise" when |Δ| is no larger than the larger spread.
 *
 * Accelerators: when both inputs have device lanes (src/analysis/accel.h), each side's median
 * host step and median device time per step (with their half-ranges) are compared on their
 * own, and the verdict names what bounds the step: "host-bound" when the device work got
 * faster beyond noise but the step did not, or the step moved while the device time stayed;
 * "device-bound" when the step moved by about what the device time moved; else B's own
 * bottleneck. Device work (kernels, copies, fills, collectives) is ranked among the command
 * types as "<kind> <name>"; host operators alone are the operators.
 *
 * Ownership: struct tp_diff owns everything it points to (one arena plus its row arrays) and
 * is released by tp_diff_free. It does not point into the profiles, which may be freed after
 * tp_diff_compute. Not thread-safe.
 */
#ifndef TP_DIFF_H
#define TP_DIFF_H

#include "analysis/analysis.h"
#include "writers/jobreport/jobreport.h"

enum tp_diff_kind { TP_DIFF_LAYER = 0, TP_DIFF_OP_TYPE, TP_DIFF_OP, TP_DIFF_CMD, TP_DIFF_KINDS };
const char *tp_diff_kind_name(enum tp_diff_kind k); /* "layers", "op_types", "ops", "cmd_types" */

enum tp_diff_status { TP_DIFF_BOTH = 0, TP_DIFF_APPEARED, TP_DIFF_VANISHED };

struct tp_diff_row {
	const char *key;    /* match key, unique within its kind */
	const char *label;  /* what the user reads ("Conv2D #3 (layer 73, core 0)") */
	int64_t a_ns, b_ns; /* time on each side (0 when absent) */
	uint64_t a_count, b_count;
	int64_t delta_ns;    /* b - a */
	double pct;          /* delta / a * 100; 0 when a is 0 */
	double share;        /* delta / total delta; 0 when the total did not change */
	uint8_t status;      /* enum tp_diff_status */
	const char *alt_key; /* layers: the (core, type, position) key used when names do
	                        not match; NULL otherwise */
	int64_t a_spread_ns, b_spread_ns; /* noise-aware: half-range of the per-step sums */
	int8_t within_noise;              /* noise-aware: 1 if |delta| <= the larger spread, else 0;
	                                     -1 without steps */
};

struct tp_diff_engine {        /* one (device, core, engine) present on either side */
	char name[48];         /* "core 0 TIU" */
	double a_util, b_util; /* busy / total time, 0..1 */
	double a_gbps, b_gbps; /* DMA: DDR average bandwidth; 0 for TIU */
	int64_t a_busy_ns, b_busy_ns;
};

struct tp_diff_item { /* one bar of a side's timeline (diff.html) */
	int64_t start_ns, dur_ns;
	uint32_t lane, label; /* indexes into the side's lanes / labels */
};

/* The accelerator figures of one side (its analysis' accel; docs/accelerator-analysis.md):
 * host step time and device time per step, each with its noise. have = 0 when the side has
 * no device lanes. Strings are the diff's (arena). */
struct tp_diff_accel {
	int have;
	size_t steps;                        /* host steps (0: the device span stands for one) */
	int64_t step_ns, step_spread_ns;     /* median host step; half-range of the steps */
	int64_t device_ns, device_spread_ns; /* median device time per step; its half-range */
	double idle_share;                   /* median idle / step */
	const char *bound;                   /* "host-bound", ... */
	const char *verdict;                 /* the side's own verdict */
};

struct tp_diff_side {
	const char *name;   /* what the user passed (path) */
	const char *source; /* reader name */
	int64_t total_ns;   /* total time, or median step time */
	size_t steps;       /* non-warm-up steps found (0 or 1: no noise estimate) */
	int64_t step_min_ns, step_max_ns;
	int64_t spread_ns; /* half-range of step times; 0 without steps */
	/* Timeline for diff.html: lanes, bar labels, bars sorted by start. */
	const char **lanes;
	size_t nlanes;
	const char **labels;
	size_t nlabels;
	struct tp_diff_item *items;
	size_t nitems;
	uint64_t items_dropped; /* bars past TP_DIFF_MAX_ITEMS */
	struct tp_diff_accel accel;
};

#define TP_DIFF_MAX_ITEMS 50000
/* Rows per section that diff.html embeds (its tables show the first 200, its waterfall the
 * first 10): the page stays a few MB for any dump, while diff.json keeps every row. */
#define TP_DIFF_PAGE_ROWS 1000

struct tp_diff {
	struct tp_arena arena;
	struct tp_diff_side a, b;
	int64_t total_delta_ns;
	double total_pct;
	int noise_aware; /* both sides have >= 2 steps */
	int within_noise;
	struct tp_diff_row *rows[TP_DIFF_KINDS];
	size_t nrows[TP_DIFF_KINDS];
	struct tp_diff_engine *engines;
	size_t nengines;
	/* Both sides have device lanes: the step and the device time side by side. The changes
	 * are within noise (1) when |delta| is no larger than the larger half-range, -1 when a
	 * side has fewer than two steps. */
	int have_accel;
	double step_pct, device_pct;
	int step_within_noise, device_within_noise;
	const char *bound;   /* what the two sides together say: "host-bound", ... */
	const char *verdict; /* "device -52 %, step +20 %: host-bound: ..." */
};
typedef struct tp_diff tp_diff;

/* Compares profile a (with analysis aa) against b (ba); name_a / name_b label them in the
 * outputs (copied). Fills *out (overwritten; free with tp_diff_free even on error). Returns
 * TP_OK or TP_ENOMEM. */
int tp_diff_compute(const struct tp_profile *a, const struct tp_analysis *aa, const char *name_a,
                    const struct tp_profile *b, const struct tp_analysis *ba, const char *name_b,
                    struct tp_diff *out);
void tp_diff_free(struct tp_diff *d);

/* The outputs, appended to b (check b->oom). Every string that came from an input is escaped
 * for its destination: control characters and escape sequences are shown as \xNN in diff.txt
 * (terminal-safe), JSON-escaped in diff.json, and inserted as text by diff.html's script.
 * `top` caps the rows per kind in diff.txt (0 = 20). Deterministic. */
void tp_diff_text(const struct tp_diff *d, size_t top, struct tp_buf *b);
void tp_diff_json(const struct tp_diff *d, struct tp_buf *b);
void tp_diff_html(const struct tp_diff *d, struct tp_buf *b);

/*
 * Two jobs (`tpuprof diff JOB_A JOB_B`, docs/job.md): device × call matched by name (device
 * label, call number, process id), each pair's total time and engine utilisation on both
 * sides, ranked by |change of total time| (an appeared call counts its B time, a vanished one
 * minus its A time; ties by key). A call that failed on a side has no time there and ranks by
 * the other side's. Owns its rows (one arena); tp_jobdiff_free releases them. The jobs may be
 * freed after tp_jobdiff_compute.
 */
struct tp_jobdiff_row {
	const char *device;
	int64_t call, pid;
	const char *a_name, *b_name; /* the dumps ("" when absent on that side) */
	uint8_t status;              /* enum tp_diff_status */
	int a_ok, b_ok;              /* converted on that side */
	int64_t a_ns, b_ns, delta_ns;
	double pct; /* delta / a * 100; 0 when a is 0 */
	double a_util[TP_ENGINES], b_util[TP_ENGINES];
	double a_imb, b_imb;
};

struct tp_jobdiff {
	struct tp_arena arena;
	const char *a_name, *b_name;
	struct tp_jobdiff_row *rows;
	size_t n;
	int64_t a_total_ns, b_total_ns; /* sums over the calls converted on both sides */
	double total_pct;
	size_t both, appeared, vanished, failed;
};

/* Compares job a against job b (both after tp_job_finish); names label them (copied). Fills
 * *out (overwritten; free with tp_jobdiff_free even on error). TP_OK or TP_ENOMEM. */
int tp_jobdiff_compute(const struct tp_job *a, const char *name_a, const struct tp_job *b,
                       const char *name_b, struct tp_jobdiff *out);
void tp_jobdiff_free(struct tp_jobdiff *d);
/* job_diff.txt (top rows, 0 = 20; terminal-safe), job_diff.json and job_diff.html
 * (self-contained, sortable), appended to b. Deterministic. */
void tp_jobdiff_text(const struct tp_jobdiff *d, size_t top, struct tp_buf *b);
void tp_jobdiff_json(const struct tp_jobdiff *d, struct tp_buf *b);
void tp_jobdiff_html(const struct tp_jobdiff *d, struct tp_buf *b);

#endif /* TP_DIFF_H */
