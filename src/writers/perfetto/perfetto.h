/*
 * perfetto.h — the Perfetto trace writer (perfetto.pftrace, hand-encoded protobuf, streamed)
 * and a structural checker for Perfetto files (`tpuprof check FILE.pftrace`).
 *
 * Layout written (shared/specs/perfetto.md §4): one process track per device; per core a
 * "Core N" container with the engine tracks and the derived counters; thread tracks for
 * captures; slices as SLICE_BEGIN/END with interned names, categories and annotation names;
 * one packet sequence per timeline track, whose first packet clears incremental state and
 * sets defaults (the track uuid, and an incremental clock so timestamps are small deltas).
 * Packets are batched into zlib-compressed `compressed_packets` chunks (< 512 KiB each)
 * unless compression is turned off; worker threads compress chunks while the next is encoded,
 * and the encoder helps when they fall behind (same bytes as without them).
 */
#ifndef TP_PERFETTO_H
#define TP_PERFETTO_H

#include "writers/sink/sink.h"

struct tp_perfetto_opts {
	int uncompressed; /* 1: plain packets (readable with protoc --decode); 0: zlib chunks */
	int level;        /* compression level 1..12; 0 = default (1, fastest) */
	int full_args;    /* also the derivable per-command args (tp_sink_fill_args) */
	int threads;      /* threads the writer may use, the caller's included: the slices are
	                     walked and encoded in parts on N threads, and compressed by N - 1
	                     workers (at most 8); 0 = tp_jobs_default(), 1 = the caller alone.
	                     The output bytes are the same for any value */
};

/* Writes the profile as a Perfetto trace to `path` (temporary file + rename). `a` may be NULL
 * (nothing is read from it). `o` may be NULL (defaults). Returns TP_OK, TP_ENOMEM, TP_EOUTPUT
 * (message names the path) or an error of tp_sink_drive. Thread-safe for distinct profiles. */
int tp_perfetto_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                      const struct tp_perfetto_opts *o, struct tp_diag *d);

/* The `write` of the CLI's output "perfetto" (perfetto.pftrace): o->trace_args_full,
 * o->jobs. */
int tp_perfetto_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                             const char *path, const struct tp_out_opts *o, struct tp_diag *d);

/* What tp_perfetto_check counted. */
struct tp_perfetto_check_report {
	uint64_t packets;   /* packets, counting each packet inside compressed chunks */
	uint64_t chunks;    /* compressed_packets chunks */
	uint64_t sequences; /* distinct trusted_packet_sequence_id values */
	uint64_t tracks;    /* track descriptors */
	uint64_t processes, threads, counter_tracks;
	uint64_t slices; /* SLICE_BEGIN events */
	uint64_t instants;
	uint64_t counters;         /* COUNTER events */
	uint64_t flows;            /* flows ended (terminating_flow_ids); ids may be reused */
	uint64_t annotations;      /* debug annotations on events */
	uint64_t interned;         /* interned entries defined */
	int max_depth;             /* deepest nesting seen on one track */
	int64_t first_ts, last_ts; /* resolved trace-time range of events */
};

/* Decompression limits of tp_perfetto_check: one compressed_packets chunk inflates to at most
 * 16 MiB (the writer's chunks hold 256 KiB), and a whole file to at most 64 MiB plus 64 times
 * its own size (the writer's traces compress 5-20x); beyond either the check fails with a
 * located error instead of inflating a decompression bomb (1 MB of zlib can hold 1 GiB). An
 * empty file is an error, not "ok: 0 packets". */
#define TP_PERFETTO_CHECK_MAX_CHUNK ((uint64_t)16 << 20)
#define TP_PERFETTO_CHECK_MAX_TOTAL(file_size) (((uint64_t)64 << 20) + (uint64_t)(file_size)*64u)

/* Validates the Perfetto file at `path` against the rules tpuprof's writer follows:
 *   every packet (and every packet inside a compressed chunk) parses with valid wire types;
 *   track events carry trusted_packet_sequence_id; the first packet of every sequence clears
 *   incremental state, and no packet needs incremental state before that; interned ids are
 *   defined (in that sequence, since its last clear) before use; every track_uuid an event
 *   uses, and every parent_uuid, is declared by an earlier descriptor, each uuid once;
 *   process and thread descriptors have non-zero pid/tid; BEGIN/END are balanced and nested
 *   per track, never on counter tracks; counter events only on counter tracks with a value;
 *   event timestamps are non-decreasing per track; flow ids are fixed64 in fields 47/48 or
 *   varints in their deprecated twins 36/42 (what tpuprof writes), never both on one event.
 * Fills *r (may be NULL). Returns TP_OK, or TP_EFORMAT / TP_ETRUNC with d naming
 * "path@0xOFFSET: rule broken" (for packets inside a chunk, the chunk's offset and the offset
 * inside the decompressed chunk), TP_ENOTFOUND / TP_EIO / TP_ENOMEM. */
int tp_perfetto_check(const char *path, struct tp_perfetto_check_report *r, struct tp_diag *d);

/* One debug annotation of a decoded event, as trace_processor stores it in `args`: type 'i'
 * (int_value), 'u' (uint_value), 'd' (double_value: v holds the IEEE-754 bits), 'b' (bool),
 * 'p' (pointer) or 's' (string_value or an interned string_value_iid, resolved: s, n). */
struct tp_perfetto_arg {
	const char *key; /* resolved name (interned name_iid or inline name), not NUL-ended */
	size_t key_len;
	int type;
	uint64_t v;
	const char *s;
	size_t n;
};

/* One decoded track event, timestamps resolved to trace time (ns) and interned strings
 * resolved. name/category are NULL when absent. Pointers are valid during the call only. */
struct tp_perfetto_event {
	int type; /* 1 SLICE_BEGIN, 2 SLICE_END, 3 INSTANT, 4 COUNTER */
	uint64_t track_uuid;
	int64_t ts;
	const char *name, *category;
	size_t name_len, category_len;
	size_t num_args;
	const struct tp_perfetto_arg *args;
	size_t num_flows, num_term_flows; /* flow_ids (36 or 47), terminating_flow_ids (42/48) */
	const uint64_t *flows, *term_flows;
	int has_double; /* counter: double_counter_value (else counter_value) */
	double counter_value;
	int64_t int_counter_value;
};

/* tp_perfetto_check that also hands every track event that passed the checks, in file order,
 * to fn (which returns TP_OK to go on, or a status that stops the check and is returned; it
 * should set d itself). fn may be NULL. Interned strings are kept for the visitor, so memory
 * also grows with the interned entries of the file. Same errors as tp_perfetto_check. */
typedef int (*tp_perfetto_visit_fn)(void *ctx, const struct tp_perfetto_event *e);
int tp_perfetto_check_visit(const char *path, struct tp_perfetto_check_report *r,
                            tp_perfetto_visit_fn fn, void *ctx, struct tp_diag *d);

#endif /* TP_PERFETTO_H */
