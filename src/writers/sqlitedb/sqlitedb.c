/*
 * sqlitedb.c — the SQLite writer: a tp_sink that bulk-inserts tracks and counters inside one
 * transaction (journal and syncing off: the database is a temporary file until it is
 * complete), collects the flows in blocks, and walks the sink's slices in parts on --jobs
 * threads (slices.c turns them into blocks of rows) for argtree.c, which packs the pages of
 * slice, arg_value, flow and their indexes on those threads; then lets SQLite build the other
 * indexes (and the empty roots of these), closes the file, lets treejoin.c join the three
 * tables to it (and inserts the few rows too long for its pages), and renames the file into
 * place.
 *
 * Speed: the counter rows SQLite writes are queued and inserted BATCH at a time through one
 * prepared multi-row INSERT (one sqlite3_step per batch instead of per row: the per-statement
 * start/halt/reset work was most of SQLite's time besides the b-tree itself). Rows keep their
 * order, so ids and content are those of one INSERT per row. SQLite's memory statistics (a
 * global mutex on every allocation) are switched off once per process.
 *
 * Owns: the sqlite3 connection, its prepared statements, the row queue, the three tables'
 * builders and the temporary files (the database and argtree.c's spools).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/timings.h"
#include "writers/sqlitedb/sqlitedb.h"
#include "writers/sqlitedb/sqlitedb_int.h"

const char tp_sqlitedb_schema_sql[] =
    /* pid and tid are the viewers' (unique, nonzero, one per lane); input_pid and input_tid
     * the input's own, so that a query by the ids of the source finds every slice: an
     * integer, or the input's text where it wrote one that is not a number the model keeps
     * (a Chrome trace's "pid": "Python"; SQLite stores text in an INTEGER column as text
     * unless it reads as a number). */
    "CREATE TABLE process(upid INTEGER PRIMARY KEY, pid INTEGER, name TEXT, sort_index INTEGER,"
    " input_pid INTEGER);"
    "CREATE TABLE thread(utid INTEGER PRIMARY KEY, tid INTEGER, name TEXT, upid INTEGER,"
    " input_pid INTEGER, input_tid INTEGER);"
    "CREATE TABLE track(id INTEGER PRIMARY KEY, name TEXT, type TEXT, parent_id INTEGER,"
    " upid INTEGER, utid INTEGER, core INTEGER, lane INTEGER, unit TEXT, sort_index INTEGER);"
    "CREATE TABLE slice(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER,"
    " category TEXT, name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER,"
    " cmd_id INTEGER);"
    /* Argument keys are stored once (a row per distinct key) and values with a key id and a
     * type code; the `args` view gives them Perfetto's columns. Compared with a flat table
     * this makes the database about three times smaller and faster to write, and queries
     * on `args` still use the indexes (SQLite flattens the view). arg_value is clustered by
     * (arg_set_id, id): rows arrive in that order, so the set's rows sit together and the
     * set lookup needs no index of its own (that index's sort would be a large share of the
     * writer's time). */
    "CREATE TABLE arg_key(id INTEGER PRIMARY KEY, key TEXT UNIQUE);"
    "CREATE TABLE arg_value(id INTEGER NOT NULL, arg_set_id INTEGER NOT NULL, key_id INTEGER,"
    " int_value INTEGER, string_value TEXT, real_value REAL, type INTEGER,"
    " PRIMARY KEY(arg_set_id, id)) WITHOUT ROWID;"
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

const char tp_sqlitedb_index_sql[] =
    "CREATE INDEX slice_name ON slice(name);"
    "CREATE INDEX slice_track_ts ON slice(track_id, ts);"
    "CREATE INDEX slice_arg_set ON slice(arg_set_id);"
    /* Only the real values (a small share of the rows): a range on real_value implies IS NOT
     * NULL. No index on key_id alone: sorting every arg row for it would be much of the
     * writer's time, and at scale every key is on a large share of the rows, where a scan
     * costs what the index lookups cost (a key filter scans arg_value, as trace_processor
     * does). */
    "CREATE INDEX arg_value_key_real ON arg_value(key_id, real_value)"
    " WHERE real_value IS NOT NULL;"
    "CREATE INDEX counter_track_ts ON counter(track_id, ts);";

/* Fresh temporary file, nobody else reads it until the rename: no journal, no syncing, no
 * locking between statements, a 64 MiB page cache. Temporary storage stays on disk (SQLite's
 * default): CREATE INDEX spills its sort runs there; in memory they would make the peak RSS
 * grow with the number of rows. The file format argtree.c writes pages of is set, whatever
 * the library's defaults: UTF-8 text, 4096-byte pages, no auto-vacuum (no pointer-map pages). */
const char tp_sqlitedb_pragma_sql[] =
    "PRAGMA encoding='UTF-8'; PRAGMA page_size=4096; PRAGMA auto_vacuum=NONE;"
    " PRAGMA journal_mode=OFF;"
    " PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536;";

static void init_sqlite(void)
{
	/* Before the library initialises (else SQLITE_MISUSE, harmless): no global memory
	 * statistics, whose mutex is taken on every allocation. Only this
	 * module uses SQLite in the process. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

void tp_sqlitedb_init_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, init_sqlite);
}

enum { S_PROC, S_THREAD, S_TRACK, S_KEY, S_COUNT };
static const char *const stmt_sql[S_COUNT] = {
    "INSERT INTO process VALUES(?,?,?,?,?)",
    "INSERT INTO thread VALUES(?,?,?,?,?,?)",
    "INSERT INTO track VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO arg_key(key) VALUES(?) ON CONFLICT(key) DO UPDATE SET key = key RETURNING id",
};

/* The batched tables: INSERT text without the VALUES tuples, and the column count. */
enum { Q_COUNTER, Q_COUNT };
static const struct {
	const char *head;
	int ncols;
} queue_def[Q_COUNT] = {
    {"INSERT INTO counter(ts,track_id,value) VALUES", 3},
};
#define BATCH 64 /* rows per multi-row INSERT (64 x 3 parameters, far below SQLite's limit) */

/* The tables argtree.c writes, in the order they are joined: the sink's slices' two
 * (slices.c) and the flows (their rows in blocks made here). */
enum { T_FLOW = SQT_COUNT, T_COUNT };
/* flow's columns (id, the rowid, first). */
enum { F_ID, F_OUT, F_IN, F_TRACE, F_NCOLS };

/* Their columns in record order, their indexes (created empty by tp_sqlitedb_index_sql), and
 * the INSERT for the rows too long for its pages. */
static const struct {
	struct sqb_tree_def def;
	const char *name, *index[SQB_MAX_IDX], *insert;
} tree_def[T_COUNT] = {
    {{A_NCOLS, 0, 2, 1, {{2, {A_KEY, A_REAL}, A_REAL}}},
     "arg_value",
     {"arg_value_key_real"},
     "INSERT INTO arg_value(arg_set_id,id,key_id,int_value,string_value,real_value,type)"
     " VALUES(?,?,?,?,?,?,?)"},
    {{C_NCOLS, 1, 0, 3, {{1, {C_NAME}, -1}, {2, {C_TRACK, C_TS}, -1}, {1, {C_ARGSET}, -1}}},
     "slice",
     {"slice_name", "slice_track_ts", "slice_arg_set"},
     "INSERT INTO slice VALUES(?,?,?,?,?,?,?,?,?,?)"},
    {{F_NCOLS, 1, 0, 0, {{0, {0}, -1}}}, "flow", {NULL}, "INSERT INTO flow VALUES(?,?,?,?)"},
};

/* Flows handed to their tree in blocks (the rowids count on from first). */
#define FLOW_BLOCK 4096
struct flow_block {
	int64_t first;
	size_t n;
	int64_t v[FLOW_BLOCK][F_NCOLS - 1];
};

struct queue {
	sqlite3_stmt *one, *many; /* one row; BATCH rows */
	int ncols;
	size_t n;             /* rows queued */
	struct sqb_val *vals; /* BATCH * ncols (numbers only) */
};

struct sw {
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
	struct queue q[Q_COUNT];
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
	int timed; /* stats wanted: each batch's insert time is measured (a system call each) */
	uint64_t q_rows[Q_COUNT];       /* rows inserted per queue (the stats) */
	struct sqb_tree *tree[T_COUNT]; /* arg_value's, slice's and flow's rows (argtree.c) */
	struct flow_block *fb;          /* the flows being collected */
	int64_t nflows;
	int jobs;
	struct sl_slot *slots; /* the sink's parts being walked (slices.c) */
	size_t nslots;
	struct sl_out out;
};

/* CPU seconds of this thread: the stats stay meaningful on a loaded machine. */
static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The operating system's error behind the database's last failure when it was an I/O error
 * (SQLite's own message says only "disk I/O error"), else 0: the connection's record of it,
 * else the database file's (the unix VFS keeps the errno of the failed write there when a
 * later call has already changed errno). */
static int io_errno(const struct sw *w)
{
	if (!w->db || (sqlite3_errcode(w->db) & 0xff) != SQLITE_IOERR)
		return 0;
	int e = sqlite3_system_errno(w->db);
	if (!e && sqlite3_file_control(w->db, "main", SQLITE_FCNTL_LAST_ERRNO, &e) != SQLITE_OK)
		e = 0;
	return e;
}

/* An I/O failure as every output reports one (tp_afile_fail): the final path and the OS's
 * reason. */
static int write_failed(struct sw *w, int e)
{
	return tp_diag_set(w->d, TP_EOUTPUT, "%s: write failed: %s", w->path, strerror(e));
}

static int dberr(struct sw *w, const char *what)
{
	int e = io_errno(w);
	if (e)
		return write_failed(w, e);
	return tp_diag_set(w->d, TP_EOUTPUT, "%s: %s: %s", w->path, what,
	                   w->db ? sqlite3_errmsg(w->db) : "cannot open");
}

static int oom(struct sw *w)
{
	return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
}

static int exec(struct sw *w, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(w->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		int e = io_errno(w);
		int st =
		    e ? write_failed(w, e)
		      : tp_diag_set(w->d, TP_EOUTPUT, "%s: %s", w->path, err ? err : "SQL failed");
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

/* An input pid or tid: its text where the input wrote one the model could not keep as a
 * number, else the number. */
static void bind_id(sqlite3_stmt *s, int i, int64_t num, const char *text)
{
	if (text)
		bind_text(s, i, text);
	else
		sqlite3_bind_int64(s, i, num);
}

/* ---- row queues ------------------------------------------------------------------------ */

/* Appends "(?,?,...)" for one row of q. */
static void put_tuple(struct tp_buf *sql, const struct queue *q)
{
	tp_buf_putc(sql, '(');
	for (int c = 0; c < q->ncols; c++)
		tp_buf_puts(sql, c ? ",?" : "?");
	tp_buf_putc(sql, ')');
}

static int queue_open(struct sw *w, int which)
{
	struct queue *q = &w->q[which];
	q->ncols = queue_def[which].ncols;
	q->vals = tp_calloc((size_t)BATCH * (size_t)q->ncols, sizeof *q->vals);
	if (!q->vals)
		return oom(w);
	struct tp_buf sql;
	tp_buf_init(&sql);
	tp_buf_puts(&sql, queue_def[which].head);
	put_tuple(&sql, q);
	tp_buf_putc(&sql, 0);
	int st = TP_OK;
	if (!sql.oom && sqlite3_prepare_v2(w->db, sql.data, -1, &q->one, NULL) != SQLITE_OK)
		st = dberr(w, "cannot prepare an insert");
	sql.len--; /* the NUL */
	for (int r = 1; r < BATCH; r++) {
		tp_buf_putc(&sql, ',');
		put_tuple(&sql, q);
	}
	tp_buf_putc(&sql, 0);
	if (sql.oom)
		st = oom(w);
	else if (!st && sqlite3_prepare_v2(w->db, sql.data, -1, &q->many, NULL) != SQLITE_OK)
		st = dberr(w, "cannot prepare an insert");
	tp_buf_free(&sql);
	return st;
}

static void queue_close(struct queue *q)
{
	sqlite3_finalize(q->one);
	sqlite3_finalize(q->many);
	tp_free(q->vals);
}

/* Binds rows [from, from + n) of the queue to s (parameters numbered from 1) and steps it. */
static int queue_step(struct sw *w, struct queue *q, sqlite3_stmt *s, size_t from, size_t n)
{
	sqb_bind(s, q->vals + from * (size_t)q->ncols, (int)n * q->ncols);
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? TP_OK : dberr(w, "insert failed");
}

/* Inserts every queued row: a full queue in one statement, a partial one row by row. */
static int queue_flush(struct sw *w, struct queue *q)
{
	if (!q->n)
		return TP_OK;
	int st = TP_OK;
	if (q->n == BATCH)
		st = queue_step(w, q, q->many, 0, BATCH);
	else
		for (size_t r = 0; r < q->n && !st; r++)
			st = queue_step(w, q, q->one, r, 1);
	w->q_rows[q - w->q] += q->n;
	q->n = 0;
	return st;
}

/* Points *out at the next free row of queue `which` (its values to be filled, all NULL),
 * flushing a full queue first. */
static int queue_row(struct sw *w, int which, struct sqb_val **out)
{
	struct queue *q = &w->q[which];
	int st;
	if (q->n == BATCH && (st = queue_flush(w, q)))
		return st;
	struct sqb_val *v = q->vals + q->n++ * (size_t)q->ncols;
	for (int c = 0; c < q->ncols; c++)
		v[c].type = SQB_NULL;
	*out = v;
	return TP_OK;
}

/* ---- sink callbacks ---------------------------------------------------------------------- */

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
		bind_id(s, 5, t->input_pid, t->input_pid_text);
		if ((st = step(w, S_PROC)))
			return st;
	} else if (t->nested && !t->is_counter) {
		utid = ++w->next_utid;
		s = w->st[S_THREAD];
		sqlite3_bind_int64(s, 1, utid);
		sqlite3_bind_int64(s, 2, t->tid);
		bind_text(s, 3, t->name);
		sqlite3_bind_int64(s, 4, w->cur_upid);
		bind_id(s, 5, t->input_pid, t->input_pid_text);
		if (t->has_input_tid)
			bind_id(s, 6, t->input_tid, t->input_tid_text);
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

static int keyent_used(const void *e)
{
	return ((const struct keyent *)e)->s != NULL;
}

static size_t keyent_hash(const void *e, size_t cap)
{
	return key_hash(((const struct keyent *)e)->s, cap);
}

/* The arg_key id of an argument name, inserting the sanitised key on first sight. */
static int key_id(struct sw *w, const char *name, int64_t *id)
{
	if ((w->nkeys + 1) * 2 > w->cap_keys) {
		struct keyent *nk =
		    tp_oa_grow(w->keys, &w->cap_keys, 64, sizeof *nk, keyent_used, keyent_hash);
		if (!nk)
			return oom(w);
		w->keys = nk;
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

/* A failure of argtree.c as the writer reports it. */
static int args_failed(struct sw *w, int st, int err)
{
	return st == TP_EOUTPUT ? write_failed(w, err ? err : EIO) : oom(w);
}

/* ---- slices in parts -------------------------------------------------------------------- */

static int sw_key_id(void *ctx, const char *key, int64_t *id)
{
	return key_id(ctx, key, id);
}

static int sw_add(void *ctx, int which, const struct sqb_block *b)
{
	struct sw *w = ctx;
	int st = sqb_tree_add_block(w->tree[which], b), err = 0;
	if (st)
		sqb_tree_status(w->tree[which], &err);
	return st ? args_failed(w, st, err) : TP_OK;
}

static int sw_slots(void *ctx, size_t n)
{
	struct sw *w = ctx;
	if (!(w->slots = tp_calloc(n, sizeof *w->slots)))
		return oom(w);
	w->nslots = n;
	return TP_OK;
}

static int sw_part_slice(void *ctx, size_t slot, const struct tp_sink_slice *ss)
{
	struct sw *w = ctx;
	sl_record(w->out.pool, &w->slots[slot], ss); /* out of memory: reported by sw_emit */
	return TP_OK;
}

static int sw_emit(void *ctx, size_t slot)
{
	struct sw *w = ctx;
	int st = sl_emit(&w->slots[slot], &w->out);
	return st == TP_ENOMEM ? oom(w) : st;
}

static int sw_counter(void *ctx, const struct tp_sink_track *t, int64_t ts_ns, double value)
{
	struct sw *w = ctx;
	struct sqb_val *v;
	int st = queue_row(w, Q_COUNTER, &v);
	if (st)
		return st;
	v[0] = (struct sqb_val){.type = SQB_INT, .i = ts_ns};
	v[1] = (struct sqb_val){.type = SQB_INT, .i = (int64_t)t->uuid};
	v[2] = (struct sqb_val){.type = SQB_REAL, .d = value};
	return TP_OK;
}

static int flow_row(void *ctx, size_t i, struct sqb_val *v)
{
	const struct flow_block *b = ctx;
	v[F_ID] = (struct sqb_val){.type = SQB_INT, .i = b->first + (int64_t)i};
	for (int c = 1; c < F_NCOLS; c++)
		v[c] = (struct sqb_val){.type = SQB_INT, .i = b->v[i][c - 1]};
	return 1;
}

static void flow_release(void *ctx)
{
	tp_free(ctx);
}

/* The flows collected so far handed to their tree. */
static int flows_flush(struct sw *w)
{
	struct flow_block *b = w->fb;
	if (!b)
		return TP_OK;
	w->fb = NULL;
	struct sqb_block blk = {
	    b->n, b->n, b->n * SQB_ROW_BOUND(F_NCOLS, 0), sizeof *b, flow_row, flow_release, b};
	return sw_add(w, T_FLOW, &blk);
}

/* A flow's row: its id is the next rowid, as SQLite's INSERT would give it. */
static int sw_flow(void *ctx, uint64_t flow_id, uint64_t from, uint64_t to)
{
	struct sw *w = ctx;
	if (!w->fb) {
		if (!(w->fb = tp_malloc(sizeof *w->fb)))
			return oom(w);
		w->fb->first = w->nflows + 1;
		w->fb->n = 0;
	}
	int64_t *v = w->fb->v[w->fb->n++];
	v[0] = (int64_t)from;
	v[1] = (int64_t)to;
	v[2] = (int64_t)flow_id;
	w->nflows++;
	return w->fb->n == FLOW_BLOCK ? flows_flush(w) : TP_OK;
}

/* The trees are complete before the drive ends: they keep the sink's texts by reference. */
static int sw_end(void *ctx, int status)
{
	struct sw *w = ctx;
	int err = 0;
	if (!status)
		status = flows_flush(w);
	for (int k = 0; k < T_COUNT && !status; k++)
		if ((status = sqb_tree_finish(w->tree[k])))
			status =
			    args_failed(w, status, sqb_tree_status(w->tree[k], &err) ? err : 0);
	if (status) { /* parts still queued are dropped while the texts are valid */
		for (int k = 0; k < T_COUNT; k++) {
			sqb_tree_free(w->tree[k]);
			w->tree[k] = NULL;
		}
	} else {
		/* Every block is back, and the parts in flight freed their memory: the join needs
		 * neither. */
		sl_pool_trim(w->out.pool);
		sqb_heap_trim();
	}
	return status;
}

/* Opens a new database in the empty file at path (tp_temp_path_for's: SQLite takes an empty
 * file for an empty database) with the writer's settings. Not created here: a signal's
 * cleanup (tp_temp_cleanup_on_signals) that removed the temporary from another thread must not
 * see it come back. */
static int db_create(struct sw *w, const char *path)
{
	/* NOMUTEX: the connection is used by this thread only (other outputs may be written by
	 * other threads at the same time, each with its own connection), so SQLite's per-call
	 * mutex is pure cost. */
	if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		return dberr(w, "cannot create the database");
	return exec(w, tp_sqlitedb_pragma_sql);
}

/* Closes the statements and the connection. TP_OK, or TP_EOUTPUT when closing failed (st: the
 * status so far, kept when it is an error). */
static int sw_close(struct sw *w, int st)
{
	for (int i = 0; i < S_COUNT; i++) {
		sqlite3_finalize(w->st[i]);
		w->st[i] = NULL;
	}
	for (int i = 0; i < Q_COUNT; i++)
		queue_close(&w->q[i]);
	memset(w->q, 0, sizeof w->q);
	if (w->db && sqlite3_close(w->db) != SQLITE_OK && !st)
		st = tp_diag_set(w->d, TP_EOUTPUT, "%s: cannot close the database", w->path);
	w->db = NULL;
	return st;
}

/* An integer the database answers to sql, in *out (nonzero). */
static int query_u32(struct sw *w, const char *sql, uint32_t *out)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(w->db, sql, -1, &s, NULL) != SQLITE_OK)
		return dberr(w, "cannot read the schema");
	int rc = sqlite3_step(s);
	*out = rc == SQLITE_ROW ? (uint32_t)sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW && *out ? TP_OK : dberr(w, "cannot read the schema");
}

/* The database at tmp with the schema, the load's transaction open, the inserts and the row
 * queues prepared. The caller closes them, also on failure. */
static int sw_open(struct sw *w, const char *tmp)
{
	int st;
	if ((st = db_create(w, tmp)) || (st = exec(w, tp_sqlitedb_schema_sql)) ||
	    (st = exec(w, "BEGIN")))
		return st;
	for (int i = 0; i < S_COUNT; i++)
		if (sqlite3_prepare_v2(w->db, stmt_sql[i], -1, &w->st[i], NULL) != SQLITE_OK)
			return dberr(w, "cannot prepare an insert");
	for (int i = 0; i < Q_COUNT; i++)
		if ((st = queue_open(w, i)))
			return st;
	return TP_OK;
}

/* Where argtree.c joins its tables: the database's page count, the roots of the tables and
 * their indexes (empty pages so far). */
struct layout {
	uint32_t npages;
	struct sqb_roots roots[T_COUNT];
};

/* The root page of table or index `name`. */
static int root_of(struct sw *w, const char *name, uint32_t *out)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name = '%s'", name);
	return query_u32(w, sql, out);
}

/* Ends SQLite's part: the queued rows, the indexes (those of argtree.c's tables over the
 * still empty tables), COMMIT; notes the layout and closes. */
static int sw_commit(struct sw *w, struct layout *lo)
{
	int st = TP_OK;
	uint32_t psize = 0;
	for (int i = 0; i < Q_COUNT && !st; i++)
		st = queue_flush(w, &w->q[i]);
	if (st || (st = exec(w, tp_sqlitedb_index_sql)) || (st = exec(w, "COMMIT")) ||
	    (st = query_u32(w, "PRAGMA page_count", &lo->npages)) ||
	    (st = query_u32(w, "PRAGMA page_size", &psize)))
		return st;
	for (int k = 0; k < T_COUNT; k++) {
		if ((st = root_of(w, tree_def[k].name, &lo->roots[k].table)))
			return st;
		for (int x = 0; x < tree_def[k].def.nidx; x++)
			if ((st = root_of(w, tree_def[k].index[x], &lo->roots[k].index[x])))
				return st;
	}
	if (psize != SQB_PAGE)
		return tp_diag_set(w->d, TP_EOUTPUT, "%s: SQLite made %u-byte pages, not %d",
		                   w->path, psize, SQB_PAGE);
	return sw_close(w, TP_OK);
}

void sqb_bind(struct sqlite3_stmt *s, const struct sqb_val *v, int n)
{
	for (int c = 0; c < n; c++) {
		if (v[c].type == SQB_INT)
			sqlite3_bind_int64(s, c + 1, v[c].i);
		else if (v[c].type == SQB_REAL)
			sqlite3_bind_double(s, c + 1, v[c].d);
		else if (v[c].type == SQB_TEXT)
			sqlite3_bind_text(s, c + 1, v[c].s, (int)v[c].n, SQLITE_STATIC);
		else
			sqlite3_bind_null(s, c + 1);
	}
}

/* Tree k's rows too long for argtree.c's pages, inserted by SQLite (with their index
 * entries). */
static int insert_long_of(struct sw *w, int k)
{
	size_t n = w->out.nlong[k];
	sqlite3_stmt *s;
	int st = TP_OK;
	if (!n)
		return TP_OK;
	if (sqlite3_prepare_v2(w->db, tree_def[k].insert, -1, &s, NULL) != SQLITE_OK)
		return dberr(w, "cannot prepare an insert");
	for (size_t i = 0; i < n && !st; i++) {
		sqb_bind(s, w->out.longs[k] + i * (size_t)tree_def[k].def.ncols,
		         tree_def[k].def.ncols);
		int rc = sqlite3_step(s);
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
		if (rc != SQLITE_DONE)
			st = dberr(w, "insert failed");
	}
	sqlite3_finalize(s);
	return st;
}

/* The rows too long for argtree.c's pages, inserted by SQLite into the joined database at
 * tmp. */
static int insert_long(struct sw *w, const char *tmp)
{
	int st = TP_OK, any = 0;
	for (int k = 0; k < SQT_COUNT; k++)
		any |= w->out.nlong[k] != 0;
	if (!any)
		return TP_OK;
	if (sqlite3_open_v2(tmp, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		return dberr(w, "cannot open the database");
	if ((st = exec(w, tp_sqlitedb_pragma_sql)) || (st = exec(w, "BEGIN")))
		return st;
	for (int k = 0; k < SQT_COUNT && !st; k++)
		st = insert_long_of(w, k);
	if (!st)
		st = exec(w, "COMMIT");
	return sw_close(w, st);
}

/* The drive: SQLite's tables loaded, the big tables' rows packed and spooled. */
static int sw_load(struct sw *w, const struct tp_profile *p, const struct tp_analysis *a,
                   const char *tmp, int full_args)
{
	int st;
	if ((st = sw_open(w, tmp)))
		return st;
	w->out.ctx = w;
	w->out.key_id = sw_key_id;
	w->out.add = sw_add;
	struct tp_sink sink = {w, NULL, sw_track, NULL, sw_counter, sw_flow, sw_end, full_args};
	struct tp_sink_parts parts = {w->jobs, 0, sw_slots, sw_part_slice, sw_emit, NULL, NULL, 0};
	return tp_sink_drive_parts(p, a, &sink, &parts, w->d);
}

/* The whole database at tmp (argtree.c's tables spooled at spool[]); with --timings, one
 * phase per step under the output's. */
static int sw_build(struct sw *w, const struct tp_profile *p, const struct tp_analysis *a,
                    const char *tmp, char *const *spool, int full_args, int jobs, double *t_load)
{
	int st, err = 0;
	if (!(w->out.pool = sl_pool_new()))
		return oom(w);
	for (int k = 0; k < T_COUNT; k++) {
		if (!(w->tree[k] = sqb_tree_new(&tree_def[k].def, spool[k], jobs, &err)))
			return oom(w);
		if (w->timed)
			sqb_tree_timed(w->tree[k]);
		if ((st = sqb_tree_status(w->tree[k], &err)))
			return args_failed(w, st, err);
	}
	tp_tm_begin("load");
	st = sw_load(w, p, a, tmp, full_args);
	tp_tm_end();
	*t_load = now_s();
	if (st)
		return st;
	struct layout lo;
	memset(&lo, 0, sizeof lo);
	tp_tm_begin("index");
	st = sw_commit(w, &lo);
	tp_tm_end();
	if (st)
		return st;
	tp_tm_begin("join");
	if ((st = sqb_tree_join(w->tree, lo.roots, T_COUNT, tmp, lo.npages, &err)))
		st = args_failed(w, st, err);
	tp_tm_end();
	return st ? st : insert_long(w, tmp);
}

int tp_sqlitedb_write_jobs(const struct tp_profile *p, const struct tp_analysis *a,
                           const char *path, int full_args, int jobs,
                           struct tp_sqlitedb_stats *stats, struct tp_diag *d)
{
	double t_start = now_s(), t_load = 0;
	struct sw w;
	memset(&w, 0, sizeof w);
	w.path = path;
	w.d = d;
	w.timed = stats != NULL;
	w.jobs = jobs;
	tp_sqlitedb_init_once();
	errno = 0;
	char *tmp = tp_temp_path_for(path), *spool[T_COUNT] = {NULL};
	for (int k = 0; k < T_COUNT && tmp && (!k || spool[k - 1]); k++)
		spool[k] = tp_temp_path_for(path);
	int st = TP_OK;
	if (!spool[T_COUNT - 1]) {
		st = tp_diag_set(d, errno == ENOMEM || errno == 0 ? TP_ENOMEM : TP_EOUTPUT,
		                 "%s: cannot create: %s", path,
		                 errno ? strerror(errno) : "out of memory");
	} else {
		st = sw_build(&w, p, a, tmp, spool, full_args, jobs, &t_load);
	}
	st = sw_close(&w, st);
	uint64_t rows[T_COUNT];
	double pack_secs[T_COUNT];
	for (int k = 0; k < T_COUNT; k++) {
		rows[k] = w.tree[k] ? sqb_tree_rows(w.tree[k]) : 0;
		pack_secs[k] = w.tree[k] ? sqb_tree_pack_secs(w.tree[k]) : 0;
		sqb_tree_free(w.tree[k]);
		if (spool[k]) {
			unlink(spool[k]);
			tp_temp_forget(spool[k]);
			tp_free(spool[k]);
		}
	}
	tp_free(w.keys);
	tp_free(w.slots);
	tp_free(w.fb);
	sl_out_free(&w.out);
	sl_pool_free(w.out.pool);
	if (tmp) {
		if (!st)
			st = tp_rename_into_place(tmp, path, d);
		if (st)
			unlink(tmp);
		tp_temp_forget(tmp);
		tp_free(tmp);
	}
	if (stats && !st) {
		memset(stats, 0, sizeof *stats);
		stats->slices = rows[SQT_SLICE];
		stats->args = rows[SQT_ARGS];
		stats->other = w.q_rows[Q_COUNTER] + rows[T_FLOW];
		stats->slice_secs = pack_secs[SQT_SLICE];
		stats->arg_secs = pack_secs[SQT_ARGS];
		stats->load_secs = t_load - t_start;
		stats->total_secs = now_s() - t_start;
		stats->index_secs = stats->total_secs - stats->load_secs;
	}
	return st;
}

int tp_sqlitedb_write_ex(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                         int full_args, struct tp_sqlitedb_stats *stats, struct tp_diag *d)
{
	return tp_sqlitedb_write_jobs(p, a, path, full_args, 1, stats, d);
}

int tp_sqlitedb_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                      int full_args, struct tp_diag *d)
{
	return tp_sqlitedb_write_ex(p, a, path, full_args, NULL, d);
}

int tp_sqlitedb_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                             const char *path, const struct tp_out_opts *o, struct tp_diag *d)
{
	return tp_sqlitedb_write_jobs(p, a, path, o && o->trace_args_full, o ? o->jobs : 1, NULL,
	                              d);
}
