/*
 * sqlitedb.c — the SQLite writer: a tp_sink that bulk-inserts tracks, slices, args, counters
 * and flows with prepared statements inside one transaction (journal and syncing off: the
 * database is a temporary file until it is complete), then builds the indexes and renames the
 * file into place.
 *
 * Owns: the sqlite3 connection, its prepared statements and the temporary file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sqlitedb/sqlitedb.h"

static const char schema[] =
    "CREATE TABLE process(upid INTEGER PRIMARY KEY, pid INTEGER, name TEXT, sort_index INTEGER);"
    "CREATE TABLE thread(utid INTEGER PRIMARY KEY, tid INTEGER, name TEXT, upid INTEGER);"
    "CREATE TABLE track(id INTEGER PRIMARY KEY, name TEXT, type TEXT, parent_id INTEGER,"
    " upid INTEGER, utid INTEGER, core INTEGER, lane INTEGER, unit TEXT, sort_index INTEGER);"
    "CREATE TABLE slice(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER,"
    " category TEXT, name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER,"
    " cmd_id INTEGER);"
    /* Argument keys are stored once (a row per distinct key) and values with a key id and a
     * type code; the `args` view gives them Perfetto's columns. Compared with a flat table
     * this makes the database about three times smaller and faster to write, and queries
     * on `args` still use the indexes (SQLite flattens the view). */
    "CREATE TABLE arg_key(id INTEGER PRIMARY KEY, key TEXT UNIQUE);"
    "CREATE TABLE arg_value(id INTEGER PRIMARY KEY, arg_set_id INTEGER, key_id INTEGER,"
    " int_value INTEGER, string_value TEXT, real_value REAL, type INTEGER);"
    "CREATE VIEW args AS SELECT v.id AS id, v.arg_set_id AS arg_set_id, k.key AS flat_key,"
    " k.key AS key, v.int_value AS int_value,"
    " CASE WHEN v.type = 3 THEN v.string_value END AS string_value, v.real_value AS real_value,"
    " CASE v.type WHEN 0 THEN 'int' WHEN 1 THEN 'uint' WHEN 2 THEN 'real' ELSE 'string' END"
    " AS value_type,"
    " CASE v.type WHEN 0 THEN CAST(v.int_value AS TEXT) WHEN 2 THEN CAST(v.real_value AS TEXT)"
    " ELSE v.string_value END AS display_value"
    " FROM arg_value v JOIN arg_key k ON k.id = v.key_id;"
    "CREATE TABLE counter(id INTEGER PRIMARY KEY, ts INTEGER, track_id INTEGER, value REAL);"
    "CREATE TABLE flow(id INTEGER PRIMARY KEY, slice_out INTEGER, slice_in INTEGER,"
    " trace_id INTEGER);"
    "CREATE VIEW thread_track AS SELECT id, name, type, parent_id, utid FROM track"
    " WHERE type = 'thread';"
    "CREATE VIEW process_track AS SELECT id, name, type, parent_id, upid FROM track"
    " WHERE type IN ('process', 'container', 'slice');"
    "CREATE VIEW counter_track AS SELECT id, name, type, parent_id, upid, unit FROM track"
    " WHERE type = 'counter';";

static const char indexes[] = "CREATE INDEX slice_name ON slice(name);"
                              "CREATE INDEX slice_track_ts ON slice(track_id, ts);"
                              "CREATE INDEX slice_arg_set ON slice(arg_set_id);"
                              "CREATE INDEX arg_value_set ON arg_value(arg_set_id);"
                              "CREATE INDEX arg_value_key_real ON arg_value(key_id, real_value);"
                              "CREATE INDEX counter_track_ts ON counter(track_id, ts);";

enum { S_PROC, S_THREAD, S_TRACK, S_SLICE, S_ARG, S_COUNTER, S_FLOW, S_KEY, S_COUNT };
static const char *const stmt_sql[S_COUNT] = {
    "INSERT INTO process VALUES(?,?,?,?)",
    "INSERT INTO thread VALUES(?,?,?,?)",
    "INSERT INTO track VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO slice VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO arg_value(arg_set_id,key_id,int_value,string_value,real_value,type)"
    " VALUES(?,?,?,?,?,?)",
    "INSERT INTO counter(ts,track_id,value) VALUES(?,?,?)",
    "INSERT INTO flow(slice_out,slice_in,trace_id) VALUES(?,?,?)",
    "INSERT INTO arg_key(key) VALUES(?) ON CONFLICT(key) DO UPDATE SET key = key RETURNING id",
};

struct sw {
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
	const char *path;
	struct tp_diag *d;
	int64_t next_upid, next_utid, cur_upid;
	char key[600];
	/* key string address -> arg_key.id (addresses are stable during the drive) */
	struct keyent {
		const char *s;
		int64_t id;
	} * keys;
	size_t nkeys, cap_keys;
};

static int dberr(struct sw *w, const char *what)
{
	return tp_diag_set(w->d, TP_EOUTPUT, "%s: %s: %s", w->path, what,
	                   w->db ? sqlite3_errmsg(w->db) : "cannot open");
}

static int exec(struct sw *w, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(w->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		int st = tp_diag_set(w->d, TP_EOUTPUT, "%s: %s", w->path, err ? err : "SQL failed");
		sqlite3_free(err);
		return st;
	}
	return TP_OK;
}

static int step(struct sw *w, int which)
{
	sqlite3_stmt *s = w->st[which];
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE ? TP_OK : dberr(w, "insert failed");
}

/* TEXT must be valid UTF-8 for SQLite's string functions: repaired (U+FFFD) through common's
 * text-safety layer on the rare slow path. */
static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (!v)
		return;
	size_t n = strlen(v);
	if (tp_text_is_safe(v, n, TP_TEXT_UTF8)) {
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
		return;
	}
	struct tp_buf t;
	tp_buf_init(&t);
	tp_text_put(&t, v, n, TP_TEXT_UTF8, 0, 0);
	if (!t.oom)
		sqlite3_bind_text(s, i, t.data ? t.data : "", -1, SQLITE_TRANSIENT);
	tp_buf_free(&t);
}

static int sw_track(void *ctx, const struct tp_sink_track *t)
{
	struct sw *w = ctx;
	sqlite3_stmt *s;
	int st;
	const char *type = t->is_process     ? "process"
	                   : t->is_container ? "container"
	                   : t->is_counter   ? "counter"
	                   : t->nested       ? "thread"
	                                     : "slice";
	int64_t utid = 0;
	if (t->is_process) {
		w->cur_upid = ++w->next_upid;
		s = w->st[S_PROC];
		sqlite3_bind_int64(s, 1, w->cur_upid);
		sqlite3_bind_int64(s, 2, t->pid);
		bind_text(s, 3, t->name);
		sqlite3_bind_int64(s, 4, t->sort_index);
		if ((st = step(w, S_PROC)))
			return st;
	} else if (t->nested && !t->is_counter) {
		utid = ++w->next_utid;
		s = w->st[S_THREAD];
		sqlite3_bind_int64(s, 1, utid);
		sqlite3_bind_int64(s, 2, t->tid);
		bind_text(s, 3, t->name);
		sqlite3_bind_int64(s, 4, w->cur_upid);
		if ((st = step(w, S_THREAD)))
			return st;
	}
	s = w->st[S_TRACK];
	sqlite3_bind_int64(s, 1, (sqlite3_int64)t->uuid);
	bind_text(s, 2, t->name);
	sqlite3_bind_text(s, 3, type, -1, SQLITE_STATIC);
	if (t->parent_uuid)
		sqlite3_bind_int64(s, 4, (sqlite3_int64)t->parent_uuid);
	sqlite3_bind_int64(s, 5, w->cur_upid);
	if (utid)
		sqlite3_bind_int64(s, 6, utid);
	if (t->core >= 0)
		sqlite3_bind_int64(s, 7, t->core);
	sqlite3_bind_int64(s, 8, t->lane);
	bind_text(s, 9, t->is_counter ? t->unit : NULL);
	sqlite3_bind_int64(s, 10, t->sort_index);
	return step(w, S_TRACK);
}

/* Perfetto's arg key for a debug annotation: "debug." + name with '.', '[' and ']' -> '_'. */
static const char *debug_key(struct sw *w, const char *name)
{
	size_t n = strlen(name);
	if (n > sizeof w->key - 7)
		n = sizeof w->key - 7;
	memcpy(w->key, "debug.", 6);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		w->key[6 + i] = c == '.' || c == '[' || c == ']' ? '_' : c;
	}
	w->key[6 + n] = 0;
	return w->key;
}

static size_t key_hash(const char *s, size_t cap)
{
	return (size_t)(((uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* The arg_key id of an argument name, inserting the sanitised key on first sight. */
static int key_id(struct sw *w, const char *name, int64_t *id)
{
	if ((w->nkeys + 1) * 2 > w->cap_keys) {
		size_t ncap = w->cap_keys ? w->cap_keys * 2 : 64;
		struct keyent *nk = tp_calloc(ncap, sizeof *nk);
		if (!nk)
			return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
		for (size_t i = 0; i < w->cap_keys; i++) {
			if (!w->keys[i].s)
				continue;
			size_t h = key_hash(w->keys[i].s, ncap);
			while (nk[h].s)
				h = (h + 1) & (ncap - 1);
			nk[h] = w->keys[i];
		}
		tp_free(w->keys);
		w->keys = nk;
		w->cap_keys = ncap;
	}
	size_t h = key_hash(name, w->cap_keys);
	while (w->keys[h].s) {
		if (w->keys[h].s == name) {
			*id = w->keys[h].id;
			return TP_OK;
		}
		h = (h + 1) & (w->cap_keys - 1);
	}
	/* Two addresses may hold the same text (a reader's key and ours): the upsert returns
	 * the existing row then. */
	sqlite3_stmt *s = w->st[S_KEY];
	sqlite3_bind_text(s, 1, debug_key(w, name), -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	int64_t got = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return dberr(w, "insert failed");
	w->keys[h].s = name;
	w->keys[h].id = got;
	w->nkeys++;
	*id = got;
	return TP_OK;
}

static int sw_slice(void *ctx, const struct tp_sink_slice *ss)
{
	struct sw *w = ctx;
	sqlite3_stmt *s = w->st[S_SLICE];
	sqlite3_bind_int64(s, 1, (sqlite3_int64)ss->id);
	sqlite3_bind_int64(s, 2, ss->ts_ns);
	sqlite3_bind_int64(s, 3, ss->dur_ns);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)ss->track->uuid);
	bind_text(s, 5, ss->category);
	bind_text(s, 6, ss->name);
	sqlite3_bind_int64(s, 7, ss->depth);
	if (ss->parent_id)
		sqlite3_bind_int64(s, 8, (sqlite3_int64)ss->parent_id);
	if (ss->num_args)
		sqlite3_bind_int64(s, 9, (sqlite3_int64)ss->id);
	if (ss->slice && ss->slice->cmd_id)
		sqlite3_bind_int64(s, 10, ss->slice->cmd_id);
	int st = step(w, S_SLICE);
	for (size_t i = 0; i < ss->num_args && !st; i++) {
		const struct tp_sink_arg *a = &ss->args[i];
		int64_t kid = 0;
		if ((st = key_id(w, a->key, &kid)))
			break;
		char num[32];
		s = w->st[S_ARG];
		sqlite3_bind_int64(s, 1, (sqlite3_int64)ss->id);
		sqlite3_bind_int64(s, 2, kid);
		switch (a->type) {
		case TP_ARG_INT:
			sqlite3_bind_int64(s, 3, a->i);
			sqlite3_bind_int(s, 6, 0);
			break;
		case TP_ARG_UINT:
			/* int_value is signed 64-bit, as in trace_processor; a value above
			 * INT64_MAX keeps its exact decimal text for display_value. */
			sqlite3_bind_int64(s, 3, (sqlite3_int64)a->u);
			if (a->u <= (uint64_t)INT64_MAX) {
				sqlite3_bind_int(s, 6, 0);
			} else {
				snprintf(num, sizeof num, "%llu", (unsigned long long)a->u);
				sqlite3_bind_text(s, 4, num, -1, SQLITE_TRANSIENT);
				sqlite3_bind_int(s, 6, 1);
			}
			break;
		case TP_ARG_REAL:
			sqlite3_bind_double(s, 5, a->d);
			sqlite3_bind_int(s, 6, 2);
			break;
		default:
			bind_text(s, 4, a->s ? a->s : "");
			sqlite3_bind_int(s, 6, 3);
			break;
		}
		st = step(w, S_ARG);
	}
	return st;
}

static int sw_counter(void *ctx, const struct tp_sink_track *t, int64_t ts_ns, double value)
{
	struct sw *w = ctx;
	sqlite3_stmt *s = w->st[S_COUNTER];
	sqlite3_bind_int64(s, 1, ts_ns);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)t->uuid);
	sqlite3_bind_double(s, 3, value);
	return step(w, S_COUNTER);
}

static int sw_flow(void *ctx, uint64_t flow_id, uint64_t from, uint64_t to)
{
	struct sw *w = ctx;
	sqlite3_stmt *s = w->st[S_FLOW];
	sqlite3_bind_int64(s, 1, (sqlite3_int64)from);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)to);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)flow_id);
	return step(w, S_FLOW);
}

static int sw_end(void *ctx, int status)
{
	(void)ctx;
	return status;
}

int tp_sqlitedb_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                      int full_args, struct tp_diag *d)
{
	struct sw w;
	memset(&w, 0, sizeof w);
	w.path = path;
	w.d = d;
	errno = 0;
	char *tmp = tp_temp_path_for(path);
	if (!tmp)
		return tp_diag_set(d, errno == ENOMEM || errno == 0 ? TP_ENOMEM : TP_EOUTPUT,
		                   "%s: cannot create: %s", path,
		                   errno ? strerror(errno) : "out of memory");
	int st = TP_OK;
	unlink(tmp); /* tp_temp_path_for made an empty file; SQLite creates its own */
	/* NOMUTEX: the connection is used by this thread only (other outputs may be written by
	 * other threads at the same time, each with its own connection), so SQLite's per-call
	 * mutex is pure cost (~11 % of the writer's time in perf, issue 10). */
	if (sqlite3_open_v2(tmp, &w.db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK) {
		st = dberr(&w, "cannot create the database");
		goto out;
	}
	if ((st = exec(&w, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
	                   " PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536;")) ||
	    (st = exec(&w, schema)) || (st = exec(&w, "BEGIN")))
		goto out;
	for (int i = 0; i < S_COUNT; i++)
		if (sqlite3_prepare_v2(w.db, stmt_sql[i], -1, &w.st[i], NULL) != SQLITE_OK) {
			st = dberr(&w, "cannot prepare an insert");
			goto out;
		}
	struct tp_sink sink = {&w,         NULL,    sw_track, sw_slice,
	                       sw_counter, sw_flow, sw_end,   full_args};
	if ((st = tp_sink_drive(p, a, &sink, d)))
		goto out;
	if ((st = exec(&w, indexes)) || (st = exec(&w, "COMMIT")))
		goto out;
out:
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(w.st[i]);
	tp_free(w.keys);
	if (w.db && sqlite3_close(w.db) != SQLITE_OK && !st)
		st = tp_diag_set(d, TP_EOUTPUT, "%s: cannot close the database", path);
	if (!st)
		st = tp_rename_into_place(tmp, path, d);
	if (st)
		unlink(tmp);
	tp_temp_forget(tmp);
	tp_free(tmp);
	return st;
}

static int output_write(const struct tp_profile *p, const struct tp_analysis *a,
                        const struct tp_out_opts *o, struct tp_diag *d)
{
	char *path = tp_path_join(o && o->out_dir ? o->out_dir : ".", "profile.db");
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	int st = tp_sqlitedb_write(p, a, path, o && o->trace_args_full, d);
	tp_free(path);
	return st;
}

const struct tp_output tp_output_sqlite = {
    "sqlite",
    "profile.db",
    "--sqlite",
    NULL,
    0,
    "SQLite database with Perfetto-style slice/args/counter tables (sqlite3 shell SQL)",
    output_write,
};
