/*
 * accel.h — the accelerator analysis: for a profile whose tracks include device lanes (the GPU
 * streams / TPU queues of an imported trace, or a Sophgo dump's engines merged with a host
 * trace), how the device spent each step and who kept it waiting. Definitions are in
 * docs/accelerator-analysis.md; in short:
 *   - device work: the slices of device lanes that keep the device busy (enum tp_work's
 *     kernels, copies, fills and collectives; a dump's non-sys TIU / DMA commands), by kind:
 *     compute, memcpy, memset, communication;
 *   - launch: the host runtime call that queued a piece of device work, joined by the
 *     correlation id both carry (TP_KEY_CORRELATION), else by a flow from the call to it;
 *   - step: a host step slice (TP_CAP_TYPE_STEP on a host thread, PyTorch's ProfilerStep#N);
 *     the device work of a step is the work whose launch lies inside it (work without a launch:
 *     whose start does);
 *   - device time: the sum of the work's durations; busy time: the length of their union;
 *     idle time: step duration - busy time; launch-to-start delay: work start - launch start;
 *     queue depth: launched work not yet finished;
 *   - host self time: a host slice's duration minus its nested children's, so the rows add
 *     up to the threads' busy time (shares add to 100 %); the profiler's own envelope and
 *     bookkeeping are left out;
 *   - the bottleneck, named from the median step (or the whole device span without steps).
 *
 * Ownership: tp_accel_analyze returns a struct tp_accel the caller frees with
 * tp_accel_free (tp_analyze does it for struct tp_analysis.accel). It refers to the profile's
 * strings by id, so it must not outlive the profile. Read-only on the profile.
 */
#ifndef TP_ACCEL_H
#define TP_ACCEL_H

#include "model/model.h"

/* Kinds of device work. */
enum tp_accel_kind { TP_ACC_COMPUTE = 0, TP_ACC_MEMCPY, TP_ACC_MEMSET, TP_ACC_COMM, TP_ACC_KINDS };
const char *tp_accel_kind_name(enum tp_accel_kind k); /* "compute", "memcpy", "memset", "comm" */

/* What kept the step's time (from the median step): the verdict's first words. */
enum tp_accel_bound {
	TP_BOUND_NONE = 0, /* no device work */
	TP_BOUND_HOST,     /* the device idles TP_ACCEL_HOST_IDLE or more of the step */
	TP_BOUND_COMM,     /* exposed communication is TP_ACCEL_COMM_SHARE or more of busy time */
	TP_BOUND_TRANSFER, /* device-bound, copies TP_ACCEL_COPY_SHARE or more of device time */
	TP_BOUND_DEVICE,   /* the device is busy TP_ACCEL_DEVICE_BUSY or more of the step */
	TP_BOUND_MIXED,    /* none of these */
};
const char *tp_accel_bound_name(enum tp_accel_bound b); /* "host-bound", "device-bound", ... */
#define TP_ACCEL_HOST_IDLE 0.40
#define TP_ACCEL_COMM_SHARE 0.30
#define TP_ACCEL_COPY_SHARE 0.30
#define TP_ACCEL_DEVICE_BUSY 0.80

#define TP_ACCEL_TOP 25            /* kernel and host-op rows kept, by time */
#define TP_ACCEL_QUEUE_BUCKETS 200 /* the queue-depth series' windows over the device span */

/* Device work over a window. */
struct tp_accel_work {
	uint64_t count[TP_ACC_KINDS];
	int64_t ns[TP_ACC_KINDS]; /* sum of durations per kind */
	int64_t device_ns;        /* sum over every kind */
	int64_t busy_ns;          /* the length of the union of the intervals */
	int64_t comm_overlap_ns;  /* time communication and compute run at once */
};

/* One host step. */
struct tp_accel_step {
	uint32_t name; /* strtab id ("ProfilerStep#2") */
	int32_t device;
	int64_t start_ns, dur_ns;
	struct tp_accel_work w;
	int64_t idle_ns;         /* dur - busy, at least 0 */
	uint64_t launches;       /* runtime calls in the step that launched work */
	int64_t launch_ns;       /* their summed duration */
	int64_t delay_median_ns; /* launch-to-start delay of the step's work */
	int64_t delay_max_ns;
	uint32_t queue_max; /* queue depth inside the step */
	double queue_mean;  /* time-weighted over the step */
};

/* A ranked row: a kernel (device work by name) or a host operator (self time by name). */
struct tp_accel_row {
	uint32_t name; /* strtab id; 0 for the host's "steps outside operators" row */
	uint8_t kind;  /* device rows: enum tp_accel_kind; host rows: enum tp_work */
	uint64_t count;
	int64_t total_ns; /* device rows: summed durations; host rows: summed self time */
	int64_t incl_ns;  /* host rows: summed durations children included; device rows: = total */
	double share;     /* of device_ns (device rows) or of host_self_ns (host rows), 0..1 */
};

/* One accelerator device (a GPU of a multi-GPU trace, one rank's device). */
struct tp_accel_rank {
	int32_t device;         /* index into the profile's devices */
	int64_t rank;           /* the run's rank (TP_META_RANK) when it is the only one, else -1 */
	struct tp_accel_work w; /* over the whole trace */
	int64_t step_device_ns; /* median device time per step, over the steps with work on it
	                           (0 without steps) */
};

struct tp_accel {
	size_t lanes; /* device lanes */
	size_t
	    host_threads; /* host tracks holding operators, runtime calls, annotations or steps */
	int64_t begin_ns, end_ns; /* first device work's start, last one's end */
	struct tp_accel_work total;
	uint64_t linked;   /* device work joined to its launch */
	uint64_t launches; /* runtime calls that launched work */
	int64_t launch_ns;
	int64_t delay_median_ns, delay_p90_ns, delay_max_ns;
	uint32_t queue_max;
	double queue_mean;                      /* time-weighted over [begin_ns, end_ns) */
	uint16_t queue[TP_ACCEL_QUEUE_BUCKETS]; /* max depth per window of the device span */
	size_t queue_buckets;                   /* windows used (0 without launches) */
	int64_t host_self_ns;                   /* sum of the host rows' self time */
	struct tp_accel_row *host;              /* by self time, at most TP_ACCEL_TOP */
	size_t nhost, host_rows;                /* rows kept, rows in all */
	struct tp_accel_row *kernels;           /* by time, at most TP_ACCEL_TOP */
	size_t nkernels, kernel_rows;
	struct tp_accel_step *steps; /* by start */
	size_t nsteps;
	/* The median step (of the steps' figures, each taken on its own); without steps the
	 * whole device span stands for one. */
	int64_t step_median_ns, step_spread_ns;     /* host step duration; spread: half-range */
	int64_t device_median_ns, device_spread_ns; /* device time per step */
	int64_t busy_median_ns;
	double idle_share;   /* median of idle / duration */
	double comm_exposed; /* communication not hidden by compute / busy time (whole trace) */
	struct tp_accel_rank *ranks; /* one per accelerator device, in device order */
	size_t nranks;
	double imbalance; /* max / mean - 1 of the ranks' device time (per step when steps) */
	enum tp_accel_bound bound;
	char verdict[400]; /* "host-bound: the device is idle 79 % of each step; ..." */
};

/* Analyses p. *out gets a new struct tp_accel, or NULL when p has no device lanes (no device
 * work on any track, or a dump's engines with no host track beside them). TP_OK / TP_ENOMEM
 * (*out NULL). */
int tp_accel_analyze(const struct tp_profile *p, struct tp_accel **out);
void tp_accel_free(struct tp_accel *a);

/* The verdict in words for figures already computed (a->bound and the medians): what
 * tp_accel_analyze writes into a->verdict. */
void tp_accel_verdict(const struct tp_profile *p, struct tp_accel *a);

#endif /* TP_ACCEL_H */
