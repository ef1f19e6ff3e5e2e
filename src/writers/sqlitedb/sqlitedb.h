/*
 * sqlitedb.h — the SQLite writer (profile.db): the trace as tables that mirror the ones
 * Perfetto's trace_processor exposes, so the same SQL runs in the sqlite3 shell.
 *
 * Tables (column names as in trace_processor):
 *   process(upid, pid, name, sort_index)            thread(utid, tid, name, upid)
 *   track(id, name, type, parent_id, upid, utid, core, lane, unit, sort_index)
 *       type: 'process', 'container' (Core N), 'slice' (engine lanes), 'thread', 'counter'
 *   slice(id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, cmd_id)
 *   args(id, arg_set_id, flat_key, key, int_value, string_value, real_value, value_type,
 *        display_value) — a view over arg_key(id, key) and arg_value(id, arg_set_id, key_id,
 *        int_value, string_value, real_value, type), so each key is stored once;
 *        key = 'debug.' || name with '.', '[' and ']' turned into '_';
 *        value_type 'int' / 'uint' (above INT64_MAX only) / 'real' / 'string';
 *        arg_value is a WITHOUT ROWID table clustered by (arg_set_id, id): a slice's args are
 *        one range of it, found without an index
 *   counter(id, ts, track_id, value)                flow(id, slice_out, slice_in, trace_id)
 * Views: thread_track, process_track, counter_track (id, name, type, parent_id, upid/utid).
 * Indexes: slice(name), slice(track_id, ts), slice(arg_set_id), arg_value(key_id, real_value)
 *          over the real values only, counter(track_id, ts). A filter on the key alone scans
 *          arg_value (as trace_processor does): see the index list in sqlitedb.c.
 * SQLite writes every table but arg_value; arg_value and its index are written as b-tree pages
 * on --jobs threads (argtree.c) and joined to SQLite's file: the same bytes for every --jobs.
 */
#ifndef TP_SQLITEDB_H
#define TP_SQLITEDB_H

#include "writers/sink/sink.h"

/* Writes the profile into a new SQLite database at `path` (built under a temporary name and
 * renamed into place; an existing file is replaced). `a` may be NULL. Returns TP_OK,
 * TP_ENOMEM, TP_EOUTPUT (message carries SQLite's) or an error of tp_sink_drive. */
/* full_args: see tp_sink_fill_args. */
int tp_sqlitedb_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                      int full_args, struct tp_diag *d);

/* What one write did (for bench/sqlite_bench.c): rows per table and CPU seconds of the writing
 * thread (SQLite's sorter threads not included). The slice and arg seconds are the CPU time of
 * packing the slice and argument tables' pages (every thread's); the load covers the whole
 * drive (sink, SQLite's inserts, packing on this thread), the index phase the rest (CREATE
 * INDEX, COMMIT, the two tables' join). */
struct tp_sqlitedb_stats {
	uint64_t slices, args, other; /* other: counter and flow rows */
	double slice_secs, arg_secs, load_secs, index_secs, total_secs;
};

/* tp_sqlitedb_write, filling *stats (when not NULL) on success. */
int tp_sqlitedb_write_ex(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                         int full_args, struct tp_sqlitedb_stats *stats, struct tp_diag *d);
/* tp_sqlitedb_write_ex on up to `jobs` threads (0 = tp_jobs_default()): the sink's slices are
 * walked and the slice and argument tables' pages packed on them. The database is the same
 * bytes for every `jobs`. */
int tp_sqlitedb_write_jobs(const struct tp_profile *p, const struct tp_analysis *a,
                           const char *path, int full_args, int jobs,
                           struct tp_sqlitedb_stats *stats, struct tp_diag *d);

/* The SQL the writer runs, shared with the bench's bare-sqlite3 baseline (bench/sqlite_bench.c)
 * so both fill the same schema the same way: the PRAGMAs of a fresh file, the tables and
 * views, and the indexes built after the load. */
extern const char tp_sqlitedb_pragma_sql[], tp_sqlitedb_schema_sql[], tp_sqlitedb_index_sql[];

/* Process-wide SQLite settings, once, before any connection opens (memory statistics off).
 * Thread-safe; the writer calls it itself. */
void tp_sqlitedb_init_once(void);

/* The `write` of the CLI's output "sqlite" (profile.db): o->trace_args_full. */
int tp_sqlitedb_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                             const char *path, const struct tp_out_opts *o, struct tp_diag *d);

#endif /* TP_SQLITEDB_H */
