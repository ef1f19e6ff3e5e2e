/*
 * outdir_db.c — how the output-folder reader touches its inputs. profile.db comes from a folder
 * the user points at, so it is treated as hostile: it must be a regular file with no journal
 * or write-ahead log beside it and no writer holding it; it is opened read-only and immutable
 * (SQLite then takes no locks and creates nothing beside it, so a read never writes into the
 * folder), with views disabled and the schema untrusted (nothing stored in the database runs:
 * the reader names its tables and they must be plain tables with the columns it reads, no
 * generated columns), values capped at OD_MAX_VALUE bytes and every statement on a budget of
 * virtual-machine steps proportional to the file's size. summary.json is read the same way as
 * every other input (regular files only, a bounded prefix). Also the id maps (od_idmap).
 * Owns nothing past the calls.
 */
#include "readers/outdir/outdir_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Id maps ----------------------------------------------------------------------------- */

int od_idmap_add(struct od_idmap *m, int64_t id, int32_t val)
{
	if (m->n == m->cap) {
		size_t cap = m->cap;
		int64_t *ids = tp_grow(m->ids, sizeof *ids, m->n + 1, &cap);
		if (!ids)
			return TP_ENOMEM;
		m->ids = ids;
		size_t cap2 = m->cap;
		int32_t *vals = tp_grow(m->vals, sizeof *vals, cap, &cap2);
		if (!vals)
			return TP_ENOMEM;
		m->vals = vals;
		m->cap = cap < cap2 ? cap : cap2;
	}
	m->ids[m->n] = id;
	m->vals[m->n++] = val;
	return TP_OK;
}

static int idm_before(const void *ctx, uint32_t x, uint32_t y)
{
	const struct od_idmap *m = ctx;
	return m->ids[x] < m->ids[y];
}

int od_idmap_finish(struct od_idmap *m)
{
	if (!m->n)
		return TP_OK;
	int64_t lo = m->ids[0], hi = m->ids[0];
	for (size_t i = 1; i < m->n; i++) {
		lo = m->ids[i] < lo ? m->ids[i] : lo;
		hi = m->ids[i] > hi ? m->ids[i] : hi;
	}
	/* Dense when the span is at most twice the rows (the writer numbers rows 0.. or 1..). */
	if ((uint64_t)hi - (uint64_t)lo < 2 * (uint64_t)m->n + 1024) {
		size_t n = (size_t)((uint64_t)hi - (uint64_t)lo) + 1;
		if (!(m->dense = tp_malloc(n * sizeof *m->dense)))
			return TP_ENOMEM;
		memset(m->dense, 0xff, n * sizeof *m->dense);
		for (size_t i = 0; i < m->n; i++)
			m->dense[m->ids[i] - lo] = m->vals[i];
		m->base = lo;
		m->ndense = n;
		return TP_OK;
	}
	/* Sorted by id, stably: the last of equal ids is found first walking back. */
	if (m->n > UINT32_MAX)
		return TP_ENOMEM;
	uint32_t *ix = tp_malloc(m->n * sizeof *ix), *tmp = tp_malloc(m->n * sizeof *tmp);
	int64_t *ids = tp_malloc(m->n * sizeof *ids);
	int32_t *vals = tp_malloc(m->n * sizeof *vals);
	if (!ix || !tmp || !ids || !vals) {
		TP_FREE_ALL(ix, tmp, ids, vals);
		return TP_ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++)
		ix[i] = (uint32_t)i;
	tp_sort_index(ix, tmp, m->n, idm_before, m);
	for (size_t i = 0; i < m->n; i++) {
		ids[i] = m->ids[ix[i]];
		vals[i] = m->vals[ix[i]];
	}
	tp_free(m->ids);
	tp_free(m->vals);
	m->ids = ids;
	m->vals = vals;
	tp_free(ix);
	tp_free(tmp);
	return TP_OK;
}

int32_t od_idmap_get(const struct od_idmap *m, int64_t id)
{
	if (m->dense) {
		if (id < m->base || (uint64_t)id - (uint64_t)m->base >= m->ndense)
			return -1;
		return m->dense[id - m->base];
	}
	size_t i = tp_upper_bound_i64(m->ids, m->n, sizeof *m->ids, 0, id);
	return i && m->ids[i - 1] == id ? m->vals[i - 1] : -1;
}

void od_idmap_free(struct od_idmap *m)
{
	tp_free(m->ids);
	tp_free(m->vals);
	tp_free(m->dense);
	memset(m, 0, sizeof *m);
}

/* ---- Before SQLite sees the file ----------------------------------------------------------- */

/* A non-empty file `suffix` beside the database: SQLite's rollback journal or write-ahead log. */
static int beside(const char *db, const char *suffix)
{
	size_t n = strlen(db), k = strlen(suffix);
	char *p = tp_malloc(n + k + 1);
	if (!p)
		return 0;
	memcpy(p, db, n);
	memcpy(p + n, suffix, k + 1);
	struct stat st;
	int found = lstat(p, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_size > 0);
	tp_free(p);
	return found;
}

/* SQLite's lock bytes (its Unix VFS): PENDING_BYTE at 1 GiB, then RESERVED_BYTE and the
 * 510-byte shared range. A writer holds a write lock there; readers hold read locks, which
 * do not conflict with the read lock asked about here. */
#define OD_LOCK_START 0x40000000
#define OD_LOCK_LEN 512

/* The file at fd (regular, checked) for SQLite: refuses a journal or WAL beside it and a
 * writer's lock on it. */
static int check_quiet(struct od_reader *r, int fd)
{
	static const struct {
		const char *suffix, *what, *why;
	} side[] = {
	    {"-journal", "a rollback journal",
	     ": a write to the database did not finish; the file is read only when it stands alone "
	     "(convert the input again with --sqlite)"},
	    {"-wal", "a write-ahead log",
	     ", whose changes reading the file alone would miss (checkpoint it with sqlite3, or "
	     "convert the input again with --sqlite)"},
	};
	for (size_t k = 0; k < sizeof side / sizeof *side; k++)
		if (beside(r->path, side[k].suffix))
			return tp_diag_set(r->d, TP_EUNSUPPORTED, "%s: %s (%s%s) lies beside it%s",
			                   r->path, side[k].what, r->path, side[k].suffix,
			                   side[k].why);
	struct flock fl;
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = OD_LOCK_START;
	fl.l_len = OD_LOCK_LEN + 2;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		return tp_diag_set(r->d, TP_EIO,
		                   "%s: locked by process %ld, which is writing it; wait until it "
		                   "is done",
		                   r->path, (long)fl.l_pid);
	return TP_OK;
}

/* "file:" URI of path: every byte outside the unreserved set and '/' percent-encoded. */
static char *file_uri(const char *path, const char *query)
{
	struct tp_buf b;
	tp_buf_init(&b);
	tp_buf_puts(&b, "file:");
	for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("-._~/", *s))
			tp_buf_putc(&b, (char)*s);
		else
			tp_buf_printf(&b, "%%%02X", *s);
	}
	tp_buf_puts(&b, query);
	tp_buf_putc(&b, 0);
	if (b.oom) {
		tp_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* ---- The connection ------------------------------------------------------------------------- */

static int budget(void *arg)
{
	uint64_t *left = arg;
	if (*left == 0)
		return 1; /* interrupts the statement: SQLITE_INTERRUPT */
	--*left;
	return 0;
}

/* Progress-handler calls are every OD_OPS_STEP virtual-machine steps. */
#define OD_OPS_STEP 10000
/* Steps allowed in all: a floor plus so many per byte of the file, far above what reading a
 * database the writer made needs. */
#define OD_OPS_FLOOR UINT64_C(1000000000)
#define OD_OPS_PER_BYTE 1000

static int step_error(struct od_reader *r, const char *what, int rc)
{
	const char *why = sqlite3_errmsg(r->db);
	switch (rc) {
	case SQLITE_INTERRUPT:
		return tp_diag_set(r->d, TP_EFORMAT,
		                   "%s: %s: stopped after more work than a tpuprof profile.db of "
		                   "this size needs",
		                   r->path, what);
	case SQLITE_NOTADB:
		return tp_diag_set(r->d, TP_EFORMAT, "%s: not an SQLite database", r->path);
	case SQLITE_CORRUPT:
		return tp_diag_set(r->d, TP_EFORMAT, "%s: %s: the database is damaged (%s)",
		                   r->path, what, why);
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return tp_diag_set(r->d, TP_EIO, "%s: %s: locked by another process (%s)", r->path,
		                   what, why);
	case SQLITE_NOMEM:
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	case SQLITE_TOOBIG:
		return tp_diag_set(r->d, TP_EFORMAT,
		                   "%s: %s: a value longer than %d bytes (not written by tpuprof)",
		                   r->path, what, OD_MAX_VALUE);
	default:
		return tp_diag_set(r->d, TP_EFORMAT, "%s: %s: %s", r->path, what, why);
	}
}

int od_step_error(struct od_reader *r, const char *what, int rc)
{
	return step_error(r, what, rc);
}

int od_prepare(struct od_reader *r, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(r->db, sql, -1, st, NULL);
	if (rc != SQLITE_OK)
		return step_error(r, "cannot query", rc);
	return TP_OK;
}

/* The tables read and their columns, as sqlitedb.c creates them. */
static const struct {
	const char *table;
	const char *const cols[8];
} schema[] = {
    {"process", {"upid", "pid", "name", NULL}},
    {"track", {"id", "name", "type", "upid", "core", NULL}},
    {"slice", {"id", "ts", "dur", "track_id", "category", "name", "cmd_id", "arg_set_id"}},
    {"arg_key", {"id", "key", NULL}},
    {"arg_value",
     {"id", "arg_set_id", "key_id", "type", "int_value", "real_value", "string_value", NULL}},
};

/* Each table of `schema` is a plain table (no view, no virtual table) whose columns include
 * the ones read, none of them generated. */
static int check_table(struct od_reader *r, size_t t)
{
	sqlite3_stmt *st;
	int rc = od_prepare(r, "SELECT type, sql FROM sqlite_master WHERE name = ?1", &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, schema[t].table, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	const unsigned char *type = step == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
	const unsigned char *sql = step == SQLITE_ROW ? sqlite3_column_text(st, 1) : NULL;
	int plain = type && strcmp((const char *)type, "table") == 0 && sql &&
	            strncmp((const char *)sql, "CREATE TABLE", 12) == 0;
	sqlite3_finalize(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return step_error(r, "reading the schema", step);
	if (!plain)
		return tp_diag_set(
		    r->d, TP_EFORMAT, "%s: not a tpuprof profile.db: %s is %s, not a table",
		    r->path, schema[t].table, step == SQLITE_DONE ? "missing" : "something else");
	if ((rc = od_prepare(r, "SELECT name, hidden FROM pragma_table_xinfo(?1)", &st)))
		return rc;
	sqlite3_bind_text(st, 1, schema[t].table, -1, SQLITE_STATIC);
	unsigned found = 0, generated = 0; /* bit c: schema[t].cols[c] */
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		for (unsigned c = 0; c < 8 && schema[t].cols[c] && name; c++)
			if (strcmp(name, schema[t].cols[c]) == 0) {
				found |= 1u << c;
				if (sqlite3_column_int(st, 1) != 0)
					generated |= 1u << c;
			}
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE)
		return step_error(r, "reading the schema", step);
	for (unsigned c = 0; c < 8 && schema[t].cols[c]; c++)
		if (!(found & 1u << c) || (generated & 1u << c))
			return tp_diag_set(
			    r->d, TP_EFORMAT, "%s: not a tpuprof profile.db: table %s %s column %s",
			    r->path, schema[t].table,
			    generated & 1u << c ? "computes its" : "has no", schema[t].cols[c]);
	return TP_OK;
}

/* Settings of a fresh connection: nothing in the database runs, values are bounded, every
 * statement is on the budget. */
static int configure(struct od_reader *r, uint64_t size)
{
	int off = 0, on = 1;
	if (sqlite3_db_config(r->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, &off) != SQLITE_OK ||
	    sqlite3_db_config(r->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &off) != SQLITE_OK ||
	    sqlite3_db_config(r->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &off) != SQLITE_OK ||
	    sqlite3_db_config(r->db, SQLITE_DBCONFIG_DEFENSIVE, 1, &on) != SQLITE_OK)
		return tp_diag_set(r->d, TP_EIO, "%s: cannot configure SQLite: %s", r->path,
		                   sqlite3_errmsg(r->db));
	sqlite3_limit(r->db, SQLITE_LIMIT_LENGTH, OD_MAX_VALUE);
	sqlite3_limit(r->db, SQLITE_LIMIT_ATTACHED, 0);
	uint64_t ops = OD_OPS_FLOOR + (size > (UINT64_MAX - OD_OPS_FLOOR) / OD_OPS_PER_BYTE
	                                   ? UINT64_MAX - OD_OPS_FLOOR
	                                   : size * OD_OPS_PER_BYTE);
	r->ops_left = ops / OD_OPS_STEP;
	sqlite3_progress_handler(r->db, OD_OPS_STEP, budget, &r->ops_left);
	return TP_OK;
}

int od_open(struct od_reader *r)
{
	int fd = tp_open_regular(r->path, r->d);
	if (fd < 0)
		return r->d->status;
	struct stat st;
	int rc = fstat(fd, &st) == 0 ? check_quiet(r, fd) : TP_OK;
	close(fd);
	if (rc)
		return rc;
	char *uri = file_uri(r->path, "?mode=ro&immutable=1");
	if (!uri)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	/* One thread uses the connection: no mutex around every column read. */
	int sq = sqlite3_open_v2(
	    uri, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	tp_free(uri);
	if (sq != SQLITE_OK)
		return step_error(r, "cannot open", sq);
	if ((rc = configure(r, (uint64_t)st.st_size)))
		return rc;
	for (size_t t = 0; t < sizeof schema / sizeof *schema && !rc; t++)
		rc = check_table(r, t);
	return rc;
}

/* ---- summary.json -------------------------------------------------------------------------- */

/* The value of the first "key": in s (white space after the colon skipped: the capture and
 * trace summaries write one): a number (*num) or a string copied into str (JSON escapes other
 * than \" and \\ kept as written). 1 if found. */
static int json_scalar(const char *s, const char *key, double *num, char *str, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = s ? strstr(s, pat) : NULL;
	if (!p)
		return 0;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p == '"') {
		if (!str)
			return 0;
		size_t n = 0;
		for (p++; *p && *p != '"' && n + 1 < cap; p++) {
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
			str[n++] = *p;
		}
		str[n] = 0;
		return 1;
	}
	if (!num)
		return 0;
	char *end;
	*num = strtod(p, &end);
	return end != p;
}

static double mhz(const char *s, const char *key)
{
	double v;
	return json_scalar(s, key, &v, NULL, 0) && v >= OD_MHZ_MIN && v <= OD_MHZ_MAX ? v : 0;
}

void od_read_summary(const char *path, struct od_summary *s)
{
	memset(s, 0, sizeof *s);
	struct tp_diag d = {0};
	int fd = tp_open_regular(path, &d);
	if (fd < 0)
		return;
	enum { MAX = 1 << 16 }; /* the scalars sit at the top of summary.json */
	char *buf = tp_malloc(MAX + 1);
	size_t n = 0;
	while (buf && n < MAX) {
		ssize_t k = read(fd, buf + n, MAX - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (!buf)
		return;
	buf[n] = 0;
	s->tiu_mhz = mhz(buf, "tiu_freq_mhz");
	s->dma_mhz = mhz(buf, "gdma_freq_mhz");
	s->have_source = json_scalar(buf, "source", NULL, s->source, sizeof s->source);
	s->have_arch = json_scalar(buf, "arch", NULL, s->arch, sizeof s->arch);
	s->have_net = json_scalar(buf, "net_name", NULL, s->net_name, sizeof s->net_name);
	tp_free(buf);
}
