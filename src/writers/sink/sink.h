/*
 * sink.h — the interface between the model and the trace writers (Perfetto, Chrome JSON,
 * SQLite): struct tp_sink, a streaming event consumer (begin / track / slice / counter / flow
 * / end). tp_sink_drive walks a finished profile and calls it in a fixed, deterministic order,
 * so a writer never sees the input format and never needs the whole output in memory. The
 * slices' arguments are named as the reference tools name them (tp_sink_fill_args).
 *
 * struct tp_output and struct tp_out_opts, what the CLI knows about every output, are in
 * writers/output.h (included here for the writers that use both).
 */
#ifndef TP_SINK_H
#define TP_SINK_H

#include "analysis/analysis.h"
#include "writers/output.h"

/* Track as announced to a sink. Uuids are stable, small, unique and nonzero. */
struct tp_sink_track {
	uint64_t uuid;
	uint64_t parent_uuid; /* 0 = root */
	const char *name;
	int is_process;        /* a device / process container */
	int is_counter;        /* a counter track */
	const char *unit;      /* counter unit or NULL */
	int32_t pid, tid;      /* Perfetto/Chrome ids, never 0 */
	int32_t sort_index;    /* display order among siblings (lower first) */
	int model_track;       /* index into profile->tracks, or -1 */
	int counter;           /* index into profile->counters, or -1 (derived counters) */
	int32_t core;          /* -1 if none */
	size_t index;          /* position in drive order (0-based), for per-track writer state */
	int32_t lane;          /* lane of a model track whose slices overlap: 0 = main lane */
	int nested;            /* slices may nest (captures' thread tracks); else one level */
	const char *full_name; /* flat display name ("Core 0 TIU", thread name, device name) */
	int is_container;      /* groups child tracks ("Core N"); never carries events */
	/* The ids as the input recorded them, which pid/tid above may not be (they are made
	 * unique and nonzero for the viewers: a pid 0, a negative or repeated tid, the lanes of
	 * overlapping slices get others): input_pid is the device's id (tp_device.id) on every
	 * track; input_tid the model track's tid on thread and host tracks and every one of their
	 * lanes (has_input_tid), else 0. input_pid_text / input_tid_text: the id's text where
	 * the input wrote one the model could not keep as that number (tp_device.id_text,
	 * tp_track.tid_text), else NULL; it stands in for the number. */
	int64_t input_pid, input_tid;
	int has_input_tid;
	const char *input_pid_text, *input_tid_text;
};

/* One argument as seen by a sink, key spelled as the reference tools spell it. */
struct tp_sink_arg {
	const char *key;
	enum tp_arg_type type;
	int64_t i;
	uint64_t u;
	double d;
	const char *s;
};

#define TP_SINK_MAX_ARGS 192 /* a long TIU descriptor alone has 96 decoded fields */

/* An argument as a writer keeps it past the slice callback (recorded to be written later): the
 * key and the one value its type prints. */
struct tp_sink_parg {
	const char *key;
	union {
		int64_t i;
		uint64_t u;
		double d;
		const char *s;
	} v;
	int type; /* enum tp_arg_type */
};

/* A slice as a writer records it to write later (tp_sink_record): its strings stay valid until
 * the sink's end callback; its arguments and flows are kept in the writer's arrays. */
struct tp_sink_rec {
	int64_t ts, dur;
	const char *name, *cat;
	uint64_t flow_in;
	size_t arg0, flow0; /* its first argument and flow in the writer's arrays */
	uint32_t nargs, nflows;
};

static inline void tp_sink_arg_pack(struct tp_sink_parg *x, const struct tp_sink_arg *a)
{
	x->key = a->key;
	x->type = (int)a->type;
	switch (a->type) {
	case TP_ARG_INT:
		x->v.i = a->i;
		break;
	case TP_ARG_UINT:
		x->v.u = a->u;
		break;
	case TP_ARG_REAL:
		x->v.d = a->d;
		break;
	default:
		x->v.s = a->s;
		break;
	}
}

/* A complete slice with everything a writer prints. Strings point into the profile. */
struct tp_sink_slice {
	const struct tp_sink_track *track;
	const struct tp_slice
	    *slice;  /* the model record; for a Layer track the driver builds
	              * from the profile's layer table, a copy valid during the call */
	uint64_t id; /* unique slice id (1-based, in drive order) */
	const char *name;
	const char *category; /* engine / function type */
	int64_t ts_ns, dur_ns;
	size_t num_args;
	struct tp_sink_arg args[TP_SINK_MAX_ARGS];
	/* Nesting and dependency flows, so a streaming writer can emit everything about a slice
	 * when it sees it. */
	uint32_t depth;       /* nesting depth on its (lane) track */
	uint64_t parent_id;   /* id of the enclosing slice, 0 = none */
	uint64_t flow_in;     /* flow id ending at this slice (it waits), 0 = none: a slice ends
	                       * at most one flow (a second one into it is counted and noted,
	                       * tp_sink_note). Flow ids are small and reused once a flow
	                       * has ended (they identify a flow only while it is open). */
	size_t num_flows_out; /* flows starting at this slice (others wait for it), all of them */
	const uint64_t *flows_out; /* their ids; owned by the driver, valid during the call */
};

/* Records slice s into r, its arguments at args[*nargs] on and its outgoing flows at
 * flows[*nflows] on (the caller made room), advancing both counts. */
static inline void tp_sink_record(struct tp_sink_rec *r, struct tp_sink_parg *args, size_t *nargs,
                                  uint64_t *flows, size_t *nflows, const struct tp_sink_slice *s)
{
	r->ts = s->ts_ns;
	r->dur = s->dur_ns;
	r->name = s->name;
	r->cat = s->category;
	r->flow_in = s->flow_in;
	r->arg0 = *nargs;
	r->flow0 = *nflows;
	r->nargs = (uint32_t)s->num_args;
	r->nflows = (uint32_t)s->num_flows_out;
	for (size_t i = 0; i < s->num_args; i++)
		tp_sink_arg_pack(&args[(*nargs)++], &s->args[i]);
	for (size_t i = 0; i < s->num_flows_out; i++)
		flows[(*nflows)++] = s->flows_out[i];
}

/* Slices delivered in parts on several threads (tp_sink_drive_parts). A part is a run of
 * at most part_slices slices of one track (0: TP_SINK_PART_SLICES), so the parts are fixed by
 * the profile, never by the thread count. Each part is walked on one of `jobs` threads, its
 * slices handed to `slice` with the part's slot; the driving thread then hands the slots to
 * `emit` strictly in part order (track order, then slice order). A sink whose output is its
 * parts' outputs in that order therefore writes the same bytes for any jobs, while only
 * `emit` runs on one thread. At most 2 * jobs slots are in flight at once, which bounds a
 * sink's memory to a part's output per slot. begin, track, counter, flow and end are called
 * as without parts, on the driving thread; tp_sink.slice is not called. */
#define TP_SINK_PART_SLICES 1024
struct tp_sink_parts {
	int jobs;           /* threads in all, the driving one included; 0 = tp_jobs_default() */
	size_t part_slices; /* 0 = TP_SINK_PART_SLICES */
	/* After every track, before any part, on the driving thread: the sink makes nslots empty
	 * slots (indices 0 .. nslots - 1). */
	int (*slots)(void *ctx, size_t nslots);
	/* One slice of the part being walked into `slot` (any thread; one thread per slot at a
	 * time; the slice's strings stay valid until end). */
	int (*slice)(void *ctx, size_t slot, const struct tp_sink_slice *s);
	/* The slot's part is complete (the driving thread, in part order): the sink writes it
	 * out and empties the slot for a later part, or (with work2) does what must be done in
	 * order before the part's second stage. */
	int (*emit)(void *ctx, size_t slot);
	/* Optional second stage (NULL: none): after emit, on any thread, then emit2 on the
	 * driving thread in part order, after which the slot is free. */
	int (*work2)(void *ctx, size_t slot);
	int (*emit2)(void *ctx, size_t slot);
	/* Nonzero: at most threads + 2 parts are open, from their walk's start to the end of
	 * their second stage, so a sink whose part holds most of its memory while open (its
	 * records) needs about that many at once, not the ring's 2 x threads; the ring's other
	 * slots hold parts done and waiting for their turn. The part next in order is always
	 * among those open or let in, so the parts never stall. */
	int lean;
};

struct tp_sink {
	void *ctx;
	/* Called once first. */
	int (*begin)(void *ctx, const struct tp_profile *p, const struct tp_analysis *a);
	/* Called for every track before any slice or counter on it; parents before children. */
	int (*track)(void *ctx, const struct tp_sink_track *t);
	/* Slices of one track are delivered in (ts asc, dur desc) order; tracks one after the
	 * other in track order. Nested slices (captures) come parent first. */
	int (*slice)(void *ctx, const struct tp_sink_slice *s);
	/* Counter value at ts on a counter track. */
	int (*counter)(void *ctx, const struct tp_sink_track *t, int64_t ts_ns, double value);
	/* A flow arrow from slice id `from` to slice id `to` (both already delivered). The
	 * flow id is the one carried by tp_sink_slice.flows_out / flow_in. Any callback may be
	 * NULL (the event is then skipped). */
	int (*flow)(void *ctx, uint64_t flow_id, uint64_t from_slice, uint64_t to_slice);
	/* Called once last, also after an error (with status != TP_OK) so it can clean up. */
	int (*end)(void *ctx, int status);
	int full_args; /* deliver tp_sink_fill_args(..., full = 1, ...) args */
};

/* Walks the profile: begin, tracks (device containers, then per core the engine tracks TIU,
 * GDMA, SDMA, CDMA, MCU, Layer, plus derived counter tracks "DDR Bandwidth" (GB/s) and
 * "TIU Utilization" (%) per core; then thread tracks and capture counters), slices per
 * track, counters, flows for dependencies (dep_id), end. Returns the first error. */
int tp_sink_drive(const struct tp_profile *p, const struct tp_analysis *a, struct tp_sink *sink,
                  struct tp_diag *d);

/* tp_sink_drive with the slices in parts (struct tp_sink_parts; sink->slice is not called). */
int tp_sink_drive_parts(const struct tp_profile *p, const struct tp_analysis *a,
                        struct tp_sink *sink, const struct tp_sink_parts *parts, struct tp_diag *d);

/* Writes n bytes at offset off of file descriptor fd with pwrite(2), in pieces of at most
 * TP_WRITE_PIECE as tp_afile_write does, retrying on EINTR: how the trace writers write a
 * part at its place in the file from any thread. Returns 0, or the failure's errno (EIO when
 * there is none). */
int tp_sink_pwrite(int fd, const void *p, size_t n, uint64_t off);

/* Formats a finite double in the shortest "%.15g"/"%.17g" form that reads back exactly
 * (locale-independent: '.' decimal point); non-finite values give "nan"/"inf"/"-inf". Writes
 * at most n bytes including the NUL into out (n >= 32 is always enough); returns the length.
 * Shared by the text writers so JSON and SQLite display values agree. */
size_t tp_sink_fmt_real(char *out, size_t n, double v);

/* Adds notes to p for what the trace outputs will not show as read: flows that cannot be
 * drawn (a second flow into the same slice: a slice ends at most one flow; a flow whose ends
 * do not bind to slices or whose source does not start before its target). Call once before
 * writing the trace outputs. Costs a flow plan only when the profile has model flows
 * (imported traces), built on `jobs` threads. TP_OK or TP_ENOMEM. */
int tp_sink_note(struct tp_profile *p, int jobs);

/* Fills out->args with the reference-named arguments of model slice s on track t (keys
 * spelled as the reference tools spell them). full = 0 (what the trace writers use by
 * default) keeps each trace small and carries what cannot be derived: engine commands get
 * Function Type, Direction (DMA), Data Type, Layer Id, Cmd Id, the dependency (des_cmd_id_dep
 * on TIU, cmd_id_dep on DMA), for DMA DMA data size(B), DDR Bandwidth(GB/s) and L2M
 * Bandwidth(GB/s) (L2 directions), Stall Cycle when non-zero, then the slice's argset (e.g.
 * uArch Rate, descriptor fields); Layer slices get Layer Id, Layer Type, Layer Name. The slice
 * name is the Function Name and its track the engine. full = 1 adds Function Name, Layer Type,
 * Layer Name, Global Idx (the place on the track from 1, as the vendor counts), Start Cycle, End
 * Cycle and Asic Cycle to every command. An argset key equal to a generated key is dropped (one
 * value per key). Strings point into the profile. Thread-safe for distinct out. */
void tp_sink_fill_args(const struct tp_profile *p, const struct tp_track *t,
                       const struct tp_slice *s, int full, struct tp_sink_slice *out);

#endif /* TP_SINK_H */
