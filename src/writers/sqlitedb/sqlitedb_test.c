/*
 * sqlitedb_test.c — unit tests for the SQLite writer through the SQLite API: schema and
 * column names as Perfetto's, key sanitising, value types and display values, the README
 * queries' rows, replacing an existing file, and clean failures (no file left behind).
 */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures/c/sink_fixture.h"
#include "testutil.h"
#include "writers/sqlitedb/sqlitedb.h"
#include "writers/sqlitedb/sqlitedb_int.h"

static char *one(sqlite3 *db, const char *sql)
{
	static char out[512];
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	out[0] = 0;
	size_t n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			const unsigned char *t = sqlite3_column_text(st, c);
			n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", c ? "|" : "",
			                      t ? (const char *)t : "NULL");
		}
		n += (size_t)snprintf(out + n, sizeof out - n, ";");
	}
	sqlite3_finalize(st);
	return out;
}

/* The writer as tp_test_oom_sweep_file calls it: on the calling thread, and with workers
 * packing the argument table. */
static int write_db(const struct tp_profile *p, const char *path, struct tp_diag *d)
{
	return tp_sqlitedb_write(p, NULL, path, 0, d);
}

static int write_db_jobs(const struct tp_profile *p, const char *path, struct tp_diag *d)
{
	return tp_sqlitedb_write_jobs(p, NULL, path, 0, 3, NULL, d);
}

static void test_db(void **state)
{
	(void)state;
	struct tp_test_out out;
	tp_test_out_make(&out, "tp_sqlitedb_test", "profile.db");
	const char *path = out.path;
	FILE *old = fopen(path, "w"); /* an older file is replaced, not appended to */
	fputs("not a database", old);
	fclose(old);
	struct tp_profile *p = fx_profile();
	struct tp_diag d = {0};
	assert_int_equal(tp_sqlitedb_write(p, NULL, path, 0, &d), TP_OK);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_string_equal(one(db, "select count(*) from slice"), "14;");
	assert_string_equal(one(db, "select name, dur from slice s where s.name=\"mm.normal\" "
	                            "order by dur desc"),
	                    "mm.normal|500;mm.normal|100;");
	assert_string_equal(one(db, "select s.name, a.real_value, a.value_type, a.display_value "
	                            "from slice s join args a on s.arg_set_id = a.arg_set_id "
	                            "where a.key = 'debug.DDR Bandwidth(GB/s)' and "
	                            "a.real_value between 5 and 20"),
	                    "tensorSt|10.0392|real|10.0392;");
	assert_string_equal(one(db, "select s.name, a.display_value from slice s join args a on "
	                            "s.arg_set_id = a.arg_set_id where a.key = 'debug.uArch Rate' "
	                            "and CAST(a.display_value AS DOUBLE) < 40"),
	                    "arith.add|37.5%;");
	assert_string_equal(one(db,
	                        "select flat_key, value_type, int_value, display_value from args "
	                        "where key = 'debug.flops'"),
	                    "debug.flops|int|1048576|1048576;");
	assert_string_equal(one(db, "select pid, name from process order by upid"),
	                    "1000|BM1688 device 0;4242|app \"quoted\" (pid 4242);");
	assert_string_equal(one(db, "select tid, name from thread"), "4243|main\tthread;");
	assert_string_equal(one(db, "select name, unit from counter_track order by id"),
	                    "DDR Bandwidth|GB/s;TIU Utilization|%;TIU Utilization|%;queue|items;");
	assert_string_equal(one(db, "select slice_out, slice_in, trace_id from flow"),
	                    "6|2|1;3|7|1;"); /* ids: TIU 1-4, GDMA 5-7; id 1 reused */
	sqlite3_close(db);
	/* Unwritable destination and out-of-memory runs leave nothing behind. */
	char *bad = tp_path_join(out.dir, "missing/profile.db");
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_sqlitedb_write(p, NULL, bad, 0, &d), TP_EOUTPUT);
	assert_int_equal(access(bad, F_OK), -1);
	unlink(path);
	tp_test_oom_sweep_file(write_db, p, path, 300);
	tp_test_oom_sweep_file(write_db_jobs, p, path, 300);
	tp_test_out_done(&out);
	tp_free(bad);
	tp_profile_free(p);
}

/* Interns "mm" C0 AF "x" (an overlong '/': invalid UTF-8) into p's strings; returns its id. */
static uint32_t intern_bad_name(struct tp_profile *p)
{
	uint32_t bad;
	assert_int_equal(tp_strtab_intern(&p->strs,
	                                  "mm\xc0\xaf"
	                                  "x",
	                                  5, &bad),
	                 TP_OK);
	return bad;
}

/* A name that bypassed the model's UTF-8 repair (put in the string table directly) is still
 * stored as valid UTF-8 TEXT: U+FFFD per maximal invalid subpart. */
static void test_invalid_utf8_name(void **state)
{
	(void)state;
	struct tp_test_out out;
	tp_test_out_make(&out, "tp_sqlitedb_test", "profile.db");
	const char *path = out.path;
	struct tp_profile *p = fx_profile();
	uint32_t bad = intern_bad_name(p);
	for (size_t t = 0; t < p->num_tracks; t++)
		for (size_t i = 0; i < p->tracks[t].count; i++)
			if (strcmp(tp_str(p, tp_slice_name(&p->tracks[t], &p->tracks[t].slices[i])),
			           "mm.normal") == 0)
				tp_slice_set_name(p, &p->tracks[t], &p->tracks[t].slices[i], bad);
	struct tp_diag d = {0};
	assert_int_equal(tp_sqlitedb_write(p, NULL, path, 0, &d), TP_OK);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_string_equal(one(db, "select distinct name from slice where name like 'mm%'"),
	                    "mm\xEF\xBF\xBD\xEF\xBF\xBDx;");
	sqlite3_close(db);
	tp_test_out_done(&out);
	tp_profile_free(p);
}

static int64_t one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Hundreds of slices, so rows go through the multi-row INSERTs (64 rows a statement) and the
 * one-row tail: every slice row equals its model slice in drive order (TIU then GDMA of core
 * 0), every slice has exactly the args tp_sink_fill_args gives it, arg ids are 1..N with
 * no gap, a name with invalid UTF-8 inside a full batch is repaired, and the set lookup and
 * the README queries use the indexes. */
static void test_batches(void **state)
{
	(void)state;
	static const char *const names[] = {"conv.normal", "mm.normal", "arith.add"};
	struct tp_test_out file;
	tp_test_out_make(&file, "tp_sqlitedb_test", "profile.db");
	const char *path = file.path;
	struct tp_profile *p = tp_profile_new();
	p->arch = TP_ARCH_BM1688;
	p->chip = tp_chip_by_arch(TP_ARCH_BM1688);
	p->tiu_freq_mhz = p->gdma_freq_mhz = 1000;
	int dev = tp_profile_add_device(p, "BM1688 device 0", 0, 1);
	int tr[2] = {tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, "TIU", 1000),
	             tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, "GDMA", 1000)};
	const int per_track = 301; /* 4 full batches and a tail of 45 rows on TIU alone */
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < per_track; i++) {
			int64_t b = 1000 * i + 7 * k;
			struct tp_slice *s =
			    fx_cmd(p, tr[k], k ? "tensorLd" : names[i % 3],
			           k ? "DMA_tensor" : "sCONV", b, b + 100 + i, (uint32_t)i + 1);
			if (k) {
				tp_slice_set_bytes(p, &p->tracks[tr[k]], s,
				                   512u * (uint32_t)(i + 1));
				tp_slice_set_dir(p, &p->tracks[tr[k]], s, TP_DIR_DDR_TO_LMEM);
			}
		}
	uint32_t bad = intern_bad_name(p);
	tp_slice_set_name(p, &p->tracks[tr[0]], &p->tracks[tr[0]].slices[100], bad);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_diag d = {0};
	assert_int_equal(tp_sqlitedb_write(p, NULL, path, 1, &d), TP_OK);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(
	    sqlite3_prepare_v2(db,
	                       "select s.id, s.ts, s.dur, s.name, s.cmd_id, s.arg_set_id,"
	                       " (select count(*) from args a where a.arg_set_id ="
	                       " s.arg_set_id) from slice s order by s.id",
	                       -1, &st, NULL),
	    SQLITE_OK);
	static struct tp_sink_slice out; /* large: TP_SINK_MAX_ARGS arguments */
	int64_t id = 0, nargs = 0;
	for (int k = 0; k < 2; k++) {
		const struct tp_track *t = &p->tracks[tr[k]];
		for (size_t i = 0; i < t->count; i++) {
			const struct tp_slice *m = &t->slices[i];
			memset(&out, 0, sizeof out);
			tp_sink_fill_args(p, t, m, 1, &out);
			assert_true(out.num_args > 0);
			nargs += (int64_t)out.num_args;
			assert_int_equal(sqlite3_step(st), SQLITE_ROW);
			assert_int_equal(sqlite3_column_int64(st, 0), ++id);
			assert_int_equal(sqlite3_column_int64(st, 1), m->start_ns);
			assert_int_equal(sqlite3_column_int64(st, 2),
			                 tp_slice_end(t, m) - m->start_ns);
			const char *want = tp_slice_name(t, m) == bad
			                       ? "mm\xEF\xBF\xBD\xEF\xBF\xBDx"
			                       : tp_str(p, tp_slice_name(t, m));
			assert_string_equal((const char *)sqlite3_column_text(st, 3), want);
			assert_int_equal(sqlite3_column_int64(st, 4), m->cmd_id);
			assert_int_equal(sqlite3_column_int64(st, 5), id);
			assert_int_equal(sqlite3_column_int64(st, 6), (int64_t)out.num_args);
		}
	}
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	assert_true(nargs > 64 * 20);
	assert_int_equal(one_int(db, "select count(*) from arg_value"), nargs);
	assert_int_equal(one_int(db, "select min(id) from arg_value"), 1);
	assert_int_equal(one_int(db, "select max(id) from arg_value"), nargs);
	assert_int_equal(one_int(db, "select count(distinct id) from arg_value"), nargs);
	assert_int_equal(one_int(db, "select count(*) from arg_value v left join arg_key k on"
	                             " k.id = v.key_id where k.key is null"),
	                 0);
	assert_int_equal(one_int(db,
	                         "select count(*) from args where key = 'debug.DMA data size(B)'"
	                         " and int_value = 512 * 301"),
	                 1);
	/* The set lookup reads the clustered table (no sort, no scan); a range on real values
	 * uses the partial (key, real_value) index. */
	assert_non_null(
	    strstr(one(db, "explain query plan select * from args where arg_set_id = 5"),
	           "PRIMARY KEY (arg_set_id=?)"));
	assert_non_null(
	    strstr(one(db, "explain query plan select s.name from slice s join args a"
	                   " using(arg_set_id) where a.key = 'debug.DDR Bandwidth(GB/s)'"
	                   " and a.real_value between 5 and 20"),
	           "arg_value_key_real (key_id=? AND real_value>? AND real_value<?)"));
	sqlite3_close(db);
	tp_test_out_done(&file);
	tp_profile_free(p);
}

/* ---- the page writer (btree.c) against SQLite's own b-trees ------------------------------ */

#define BT_SCHEMA                                                                                  \
	"CREATE TABLE t(a INTEGER NOT NULL, b INTEGER NOT NULL, s TEXT, r REAL, i INTEGER,"        \
	" PRIMARY KEY(a, b)) WITHOUT ROWID;"

static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Row k of a b-tree test: every serial type (NULL, integers of each width, 0 and 1, reals
 * with the REAL affinity's integer form, texts up to the longest a page keeps). */
static void bt_row(uint64_t seed, int k, struct sqb_val *v, char *text)
{
	static const double reals[] = {
	    1.0, -0.0, 1.5, 1e300, 9.3e18, -9223372036854775808.0, 0.1, 4294967296.0, 2.5e-300};
	static const int64_t ints[] = {
	    0,         1,         -1, 127, 128, -32768, 8388608, 2147483648, -140737488355329,
	    INT64_MAX, INT64_MIN, 255};
	uint64_t x = seed * 7919 + (uint64_t)k + 1;
	rng_next(&x);
	size_t n =
	    rng_next(&x) % 4 == 0 ? (size_t)(rng_next(&x) % 950) : (size_t)(rng_next(&x) % 12);
	for (size_t i = 0; i < n; i++)
		text[i] = (char)('a' + rng_next(&x) % 26);
	text[n] = 0;
	v[0] = (struct sqb_val){.type = SQB_INT, .i = k / 3};
	v[1] = (struct sqb_val){.type = SQB_INT, .i = k};
	v[2] = rng_next(&x) % 5 ? (struct sqb_val){.type = SQB_TEXT, .s = text, .n = (uint32_t)n}
	                        : (struct sqb_val){.type = SQB_NULL};
	uint64_t r = rng_next(&x) % 11;
	v[3] = r < 9 ? sqb_real(reals[r]) : r == 9 ? sqb_real(NAN) : (struct sqb_val){0};
	v[4] = (struct sqb_val){.type = SQB_INT, .i = ints[rng_next(&x) % 12]};
}

struct bt_file {
	int fd;
};

static int bt_write(void *ctx, uint32_t pgno, const uint8_t *page)
{
	struct bt_file *f = ctx;
	return pwrite(f->fd, page, SQB_PAGE, ((off_t)pgno - 1) * SQB_PAGE) == SQB_PAGE ? 0 : 1;
}

static void bt_exec(sqlite3 *db, const char *sql)
{
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

/* Rows [0, n) of seed packed in parts of random sizes (the last part ends on a leaf, every
 * other on a separator) into table t of the empty database at path. */
static void bt_fill(const char *path, uint64_t seed, int n)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	bt_exec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=OFF;" BT_SCHEMA);
	uint32_t npages = (uint32_t)one_int(db, "PRAGMA page_count");
	uint32_t root = (uint32_t)one_int(db, "SELECT rootpage FROM sqlite_schema WHERE name='t'");
	sqlite3_close(db);
	struct bt_file f = {open(path, O_RDWR)};
	assert_true(f.fd >= 0);
	uint32_t *child = calloc((size_t)n, sizeof *child);
	struct tp_buf seps;
	tp_buf_init(&seps);
	size_t *off = calloc((size_t)n + 1, sizeof *off), nleaves = 0, nseps = 0;
	struct sqb_out o = {.next = npages + 1, .write = bt_write, .ctx = &f};
	uint64_t x = seed + 99;
	char text[1000];
	uint8_t cell[SQB_MAX_CELL];
	for (int k = 0; k < n;) {
		int len = 2 + (int)(rng_next(&x) % (seed % 2 ? 40 : 400));
		int last = k + len >= n;
		if (last)
			len = n - k;
		struct sqb_pack pk;
		sqb_pack_init(&pk);
		for (int i = 0; i < len; i++, k++) {
			struct sqb_val v[5];
			bt_row(seed, k, v, text);
			size_t cl = sqb_cell(cell, v, 5);
			assert_true(cl > 0);
			assert_int_equal(sqb_pack_add(&pk, cell, cl), 0);
		}
		assert_int_equal(sqb_pack_end(&pk, last), 0);
		assert_int_equal(pk.nseps, last ? pk.npages - 1 : pk.npages);
		for (size_t i = 0; i < pk.npages; i++) {
			child[nleaves++] = o.next;
			assert_int_equal(bt_write(&f, o.next++, pk.pages + i * SQB_PAGE), 0);
		}
		for (size_t i = 0; i < pk.nseps; i++) {
			off[nseps++] = seps.len;
			tp_buf_put(&seps, pk.seps.data + pk.sep_off[i],
			           pk.sep_off[i + 1] - pk.sep_off[i]);
		}
		sqb_pack_free(&pk);
	}
	off[nseps] = seps.len;
	assert_int_equal(nseps + 1, nleaves);
	if (nleaves == 1) { /* the leaf moves to the root: the file ends before it */
		uint8_t pg[SQB_PAGE];
		assert_int_equal(pread(f.fd, pg, SQB_PAGE, ((off_t)child[0] - 1) * SQB_PAGE),
		                 SQB_PAGE);
		assert_int_equal(bt_write(&f, root, pg), 0);
		o.next = child[0];
	} else {
		assert_int_equal(
		    sqb_interior(child, nleaves, (const uint8_t *)seps.data, off, root, &o), 0);
	}
	uint8_t cnt[4] = {(uint8_t)((o.next - 1) >> 24), (uint8_t)((o.next - 1) >> 16),
	                  (uint8_t)((o.next - 1) >> 8), (uint8_t)(o.next - 1)};
	assert_int_equal(pwrite(f.fd, cnt, 4, 28), 4);
	assert_int_equal(ftruncate(f.fd, (off_t)(o.next - 1) * SQB_PAGE), 0);
	close(f.fd);
	free(child);
	free(off);
	tp_buf_free(&seps);
}

/* The same rows inserted by SQLite into table t of a new database at path. */
static void bt_reference(const char *path, uint64_t seed, int n)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char text[1000];
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	bt_exec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=OFF;" BT_SCHEMA "BEGIN");
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?,?,?,?,?)", -1, &st, NULL),
	                 SQLITE_OK);
	for (int k = 0; k < n; k++) {
		struct sqb_val v[5];
		bt_row(seed, k, v, text);
		sqlite3_bind_int64(st, 1, v[0].i);
		sqlite3_bind_int64(st, 2, v[1].i);
		if (v[2].type == SQB_TEXT)
			sqlite3_bind_text(st, 3, text, (int)v[2].n, SQLITE_STATIC);
		if (v[3].type != SQB_NULL)
			sqlite3_bind_double(st, 4, v[3].type == SQB_INT ? (double)v[3].i : v[3].d);
		sqlite3_bind_int64(st, 5, v[4].i);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	sqlite3_finalize(st);
	bt_exec(db, "COMMIT");
	sqlite3_close(db);
}

/* Tables packed here in parts of random sizes (texts up to the longest a page keeps, so part
 * ends hit every case: a pending separator, a single cell after one) pass SQLite's
 * integrity check and hold what SQLite's INSERT stores, record for record: the same values
 * (EXCEPT both ways, types included) and the same payload bytes (dbstat). */
static void test_btree_parts(void **state)
{
	(void)state;
	struct tp_test_out out;
	tp_test_out_make(&out, "tp_sqlitedb_test", "bt.db");
	char *ref = tp_path_join(out.dir, "ref.db");
	static const int sizes[] = {1, 2, 3, 50, 400, 3000, 20000};
	for (uint64_t seed = 1; seed <= 14; seed++) {
		int n = sizes[seed % 7];
		unlink(out.path);
		unlink(ref);
		bt_fill(out.path, seed, n);
		bt_reference(ref, seed, n);
		sqlite3 *db;
		assert_int_equal(sqlite3_open(out.path, &db), SQLITE_OK);
		assert_string_equal(one(db, "PRAGMA integrity_check"), "ok;");
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_prepare_v2(db, "ATTACH ? AS ref", -1, &st, NULL),
		                 SQLITE_OK);
		sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
		assert_int_equal(one_int(db, "SELECT count(*) FROM main.t"), n);
		assert_int_equal(
		    one_int(db, "SELECT count(*) FROM (SELECT a, b, s, typeof(s), r,"
		                " typeof(r), i FROM main.t EXCEPT SELECT a, b, s, typeof(s),"
		                " r, typeof(r), i FROM ref.t)"),
		    0);
		assert_int_equal(one_int(db, "SELECT count(*) FROM (SELECT * FROM ref.t EXCEPT"
		                             " SELECT * FROM main.t)"),
		                 0);
		assert_int_equal(
		    one_int(db, "SELECT sum(payload) FROM dbstat('main') WHERE name = 't'"),
		    one_int(db, "SELECT sum(payload) FROM dbstat('ref') WHERE name = 't'"));
		sqlite3_close(db);
	}
	unlink(ref);
	tp_free(ref);
	tp_test_out_done(&out);
}

/* A profile of `n` slices with many arguments each: several parts of arg_value. */
static struct tp_profile *many_args(int n)
{
	struct tp_profile *p = tp_profile_new();
	p->arch = TP_ARCH_BM1688;
	p->chip = tp_chip_by_arch(TP_ARCH_BM1688);
	p->tiu_freq_mhz = p->gdma_freq_mhz = 1000;
	int dev = tp_profile_add_device(p, "BM1688 device 0", 0, 1);
	int tr = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, "TIU", 1000);
	char key[32], big[1200];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	for (int i = 0; i < n; i++) {
		struct tp_slice *s = fx_cmd(p, tr, i % 2 ? "conv.normal" : "mm.normal", "sCONV",
		                            1000 * i, 1000 * i + 500, (uint32_t)i + 1);
		tp_args_begin(p);
		for (int k = 0; k < 40; k++) {
			snprintf(key, sizeof key, "field%d", k);
			if (k % 10 == 3)
				tp_args_add_real(p, key,
				                 k == 3  ? (i % 7) * 0.5
				                 : i % 5 ? 1.0 * i
				                         : NAN);
			else if (k % 10 == 7)
				tp_args_add_str(p, key, k == 7 && i % 1000 == 999 ? big : "INT8");
			else if (k == 9)
				tp_args_add_uint(p, key,
				                 i % 3 ? (uint64_t)i : UINT64_MAX - (uint64_t)i);
			else
				tp_args_add_int(p, key, (int64_t)i * k - 5000);
		}
		s->args = tp_args_end(p);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

static void slurp(const char *path, struct tp_buf *b)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char chunk[65536];
	size_t n;
	b->len = 0;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		tp_buf_put(b, chunk, n);
	fclose(f);
}

/* The argument table in parts on --jobs threads: the same bytes for 1, 2, 3 and 16 threads,
 * a sound database, and the values SQLite would store (the long texts go through SQLite). */
static void test_args_jobs(void **state)
{
	(void)state;
	struct tp_test_out out;
	tp_test_out_make(&out, "tp_sqlitedb_test", "profile.db");
	struct tp_profile *p = many_args(6000); /* 240 000 arguments: several parts */
	struct tp_buf one_b, b;
	tp_buf_init(&one_b);
	tp_buf_init(&b);
	static const int jobs[] = {1, 2, 3, 16};
	for (int j = 0; j < 4; j++) {
		struct tp_diag d = {0};
		assert_int_equal(tp_sqlitedb_write_jobs(p, NULL, out.path, 1, jobs[j], NULL, &d),
		                 TP_OK);
		slurp(out.path, j ? &b : &one_b);
		if (j) {
			assert_int_equal(b.len, one_b.len);
			assert_memory_equal(b.data, one_b.data, b.len);
		}
	}
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(out.path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_string_equal(one(db, "PRAGMA integrity_check"), "ok;");
	int64_t nargs = one_int(db, "SELECT count(*) FROM arg_value");
	assert_true(nargs > 6000 * 40);
	assert_int_equal(one_int(db, "SELECT count(*) FROM arg_value WHERE length(string_value) >"
	                             " 1000"),
	                 6);
	assert_int_equal(one_int(db, "SELECT max(id) FROM arg_value"), nargs);
	assert_string_equal(one(db, "SELECT real_value, typeof(real_value), value_type FROM args"
	                            " WHERE key = 'debug.field13' AND arg_set_id = 12"),
	                    "11.0|real|real;");
	assert_string_equal(one(db, "SELECT count(*) FROM args WHERE key = 'debug.field13'"
	                            " AND real_value IS NULL"),
	                    "1200;"); /* NaN is stored as NULL */
	assert_string_equal(one(db, "SELECT value_type, display_value FROM args WHERE key ="
	                            " 'debug.field9' AND arg_set_id = 1"),
	                    "uint|18446744073709551615;");
	/* The index written with the table answers the range query as SQLite's would. */
	static const char *const range[] = {
	    "SELECT count(*) FROM arg_value INDEXED BY arg_value_key_real WHERE key_id = (SELECT id"
	    " FROM arg_key WHERE key = 'debug.field3') AND real_value BETWEEN 1 AND 2",
	    "SELECT count(*) FROM arg_value NOT INDEXED WHERE key_id = (SELECT id FROM arg_key"
	    " WHERE key = 'debug.field3') AND real_value BETWEEN 1 AND 2"};
	assert_int_equal(one_int(db, range[0]), 2571); /* i % 7 in 2..4 */
	assert_int_equal(one_int(db, range[0]), one_int(db, range[1]));
	sqlite3_close(db);
	tp_buf_free(&one_b);
	tp_buf_free(&b);
	tp_test_out_done(&out);
	tp_profile_free(p);
}

/* ---- tables in parts (argtree.c): a rowid table and its indexes ---------------------- */

#define TR_SCHEMA                                                                                  \
	"CREATE TABLE u(id INTEGER PRIMARY KEY, a INTEGER, s TEXT, r REAL, i INTEGER);"            \
	"CREATE INDEX u_s ON u(s); CREATE INDEX u_ar ON u(a, r);"                                  \
	"CREATE INDEX u_i ON u(i) WHERE r IS NOT NULL;"
static const char *const tr_names[] = {"u", "u_s", "u_ar", "u_i"};

/* Row k of a tree test: bt_row's values but b, after a rowid (1- and 9-byte varints, negative
 * ones). */
static void tr_row(uint64_t seed, int k, struct sqb_val *v, char *text)
{
	static const int64_t base[] = {1, -4611686018427387904, 72057594037927936};
	struct sqb_val b[5];
	bt_row(seed, k, b, text);
	v[1] = b[0];
	v[2] = b[2];
	v[3] = b[3];
	v[4] = b[4];
	v[0] = (struct sqb_val){.type = SQB_INT,
	                        .i = base[seed % 3] +
	                             (int64_t)k * (1 + (int64_t)(seed % 5) * 1000003)};
}

static void tr_insert(sqlite3_stmt *st, const struct sqb_val *v)
{
	sqb_bind(st, v, 5);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_reset(st);
}

/* A block of rows [first, first + n) of a seed, made again when read. */
struct tr_block {
	uint64_t seed;
	int first, n;
	char text[1000];
};

static int tr_block_row(void *ctx, size_t i, struct sqb_val *v)
{
	struct tr_block *b = ctx;
	tr_row(b->seed, b->first + (int)i, v, b->text);
	return !(v[2].type == SQB_TEXT && v[2].n > SQB_LONG_TEXT);
}

static void tr_block_release(void *ctx)
{
	free(ctx);
}

/* Rows [0, n) of seed built by sqb_tree on `jobs` threads, joined with `tune`, into table u of a
 * new database at path (its long rows inserted by SQLite afterwards, as the writer does). */
static void tr_fill(const char *path, uint64_t seed, int n, int jobs,
                    const struct sqb_join_tune *tune)
{
	static const struct sqb_tree_def def = {
	    5, 1, 0, 3, {{1, {2}, -1}, {2, {1, 3}, -1}, {1, {4}, 3}}};
	sqlite3 *db;
	struct sqb_roots roots;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	bt_exec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=OFF;" TR_SCHEMA);
	uint32_t npages = (uint32_t)one_int(db, "PRAGMA page_count");
	for (int x = 0; x < 4; x++) {
		char sql[96];
		snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name = '%s'",
		         tr_names[x]);
		*(x ? &roots.index[x - 1] : &roots.table) = (uint32_t)one_int(db, sql);
	}
	sqlite3_close(db);
	char spool[4096];
	snprintf(spool, sizeof spool, "%s.spool", path);
	close(open(spool, O_RDWR | O_CREAT | O_TRUNC, 0600));
	int err = 0;
	struct sqb_tree *t = sqb_tree_new(&def, spool, jobs, &err);
	assert_non_null(t);
	t->tune = *tune;
	uint64_t x = seed + 7;
	int nlong = 0, *longs = calloc((size_t)n + 1, sizeof *longs);
	for (int k = 0; k < n;) { /* blocks of random sizes, long rows kept out */
		struct tr_block *b = calloc(1, sizeof *b);
		b->seed = seed;
		b->first = k;
		b->n = 1 + (int)(rng_next(&x) % (seed % 2 ? 40 : 400));
		if (b->n > n - k)
			b->n = n - k;
		struct sqb_block blk = {(size_t)b->n,     0, 0, sizeof *b, tr_block_row,
		                        tr_block_release, b};
		for (int i = 0; i < b->n; i++, k++) {
			char text[1000];
			struct sqb_val v[5];
			tr_row(seed, k, v, text);
			size_t tl = v[2].type == SQB_TEXT ? v[2].n : 0;
			if (tl > SQB_LONG_TEXT) {
				longs[nlong++] = k;
				continue;
			}
			blk.cells++;
			blk.bound += SQB_ROW_BOUND(5, tl);
		}
		assert_int_equal(sqb_tree_add_block(t, &blk), TP_OK);
	}
	assert_int_equal(sqb_tree_finish(t), TP_OK);
	assert_int_equal(sqb_tree_join(&t, &roots, 1, path, npages, &err), TP_OK);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	bt_exec(db, "BEGIN");
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO u VALUES(?,?,?,?,?)", -1, &st, NULL),
	                 SQLITE_OK);
	for (int i = 0; i < nlong; i++) {
		char text[1000];
		struct sqb_val v[5];
		tr_row(seed, longs[i], v, text);
		tr_insert(st, v);
	}
	sqlite3_finalize(st);
	bt_exec(db, "COMMIT");
	sqlite3_close(db);
	free(longs);
	sqb_tree_free(t);
	unlink(spool);
}

/* The tree-built database at path against SQLite's at ref (n rows each). */
static void tr_check(const char *path, const char *ref, int n)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_string_equal(one(db, "PRAGMA integrity_check"), "ok;");
	assert_int_equal(sqlite3_prepare_v2(db, "ATTACH ? AS ref", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	assert_int_equal(one_int(db, "SELECT count(*) FROM main.u"), n);
	static const char *const both[] = {
	    "SELECT count(*) FROM (SELECT id, a, s, typeof(s), r, typeof(r), i FROM main.u EXCEPT"
	    " SELECT id, a, s, typeof(s), r, typeof(r), i FROM ref.u)",
	    "SELECT count(*) FROM (SELECT id, a, s, typeof(s), r, typeof(r), i FROM ref.u EXCEPT"
	    " SELECT id, a, s, typeof(s), r, typeof(r), i FROM main.u)"};
	assert_int_equal(one_int(db, both[0]), 0);
	assert_int_equal(one_int(db, both[1]), 0);
	for (int x = 0; x < 4; x++) {
		char sql[2][128];
		for (int k = 0; k < 2; k++)
			snprintf(
			    sql[k], sizeof sql[k],
			    "SELECT coalesce(sum(payload), 0) FROM dbstat('%s') WHERE name = '%s'",
			    k ? "ref" : "main", tr_names[x]);
		assert_int_equal(one_int(db, sql[0]), one_int(db, sql[1]));
	}
	/* Each index answers as a scan does. */
	static const char *const q[][2] = {
	    {"SELECT count(*), sum(id % 1000) FROM u INDEXED BY u_s WHERE s > 'm'",
	     "SELECT count(*), sum(id % 1000) FROM u NOT INDEXED WHERE s > 'm'"},
	    {"SELECT count(*), sum(id % 1000) FROM u INDEXED BY u_ar WHERE a = 7 AND r > 0.5",
	     "SELECT count(*), sum(id % 1000) FROM u NOT INDEXED WHERE a = 7 AND r > 0.5"},
	    {"SELECT count(*), sum(id % 1000) FROM u INDEXED BY u_i WHERE r IS NOT NULL AND i > "
	     "200",
	     "SELECT count(*), sum(id % 1000) FROM u NOT INDEXED WHERE r IS NOT NULL AND i > 200"}};
	for (int k = 0; k < 3; k++) {
		char a[64];
		snprintf(a, sizeof a, "%s", one(db, q[k][0]));
		assert_string_equal(a, one(db, q[k][1]));
	}
	sqlite3_close(db);
}

/* A rowid table and three indexes (one partial) built in parts on 1 and 3 threads (with the
 * join's index ranges as large as the writer's, and small): the same bytes; SQLite's integrity
 * check (indexes against the table) passes; the rows and index payloads are those of the same rows
 * INSERTed by SQLite; queries through each index agree with a scan. */
static void test_tree_parts(void **state)
{
	(void)state;
	struct tp_test_out out;
	tp_test_out_make(&out, "tp_sqlitedb_test", "tr.db");
	char *ref = tp_path_join(out.dir, "ref.db"), *three = tp_path_join(out.dir, "tr3.db");
	static const int sizes[] = {1, 2, 3, 50, 400, 3000, 20000};
	for (uint64_t seed = 1; seed <= 9; seed++) {
		int n = seed > 7 ? 20000 : sizes[seed % 7];
		/* Seeds 8 and 9, 20 000 rows: ranges of 300 entries (a few leaves), streamed 2
		 * leaves at a time, 6 held at most: many ranges per index, written at the head and
		 * waiting. */
		static const struct sqb_join_tune small = {300, 6, 2};
		const struct sqb_join_tune *tune = seed > 7 ? &small : &sqb_join_default;
		unlink(out.path);
		unlink(three);
		unlink(ref);
		tr_fill(out.path, seed, n, 1, tune);
		tr_fill(three, seed, n, 3, tune);
		struct tp_buf b1, b3;
		tp_buf_init(&b1);
		tp_buf_init(&b3);
		slurp(out.path, &b1);
		slurp(three, &b3);
		assert_int_equal(b1.len, b3.len);
		assert_memory_equal(b1.data, b3.data, b1.len);
		tp_buf_free(&b1);
		tp_buf_free(&b3);
		sqlite3 *db;
		sqlite3_stmt *st;
		char text[1000];
		assert_int_equal(sqlite3_open(ref, &db), SQLITE_OK);
		bt_exec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=OFF;" TR_SCHEMA "BEGIN");
		assert_int_equal(
		    sqlite3_prepare_v2(db, "INSERT INTO u VALUES(?,?,?,?,?)", -1, &st, NULL),
		    SQLITE_OK);
		for (int k = 0; k < n; k++) {
			struct sqb_val v[5];
			tr_row(seed, k, v, text);
			tr_insert(st, v);
		}
		sqlite3_finalize(st);
		bt_exec(db, "COMMIT");
		sqlite3_close(db);
		tr_check(out.path, ref, n);
	}
	unlink(ref);
	unlink(three);
	tp_free(ref);
	tp_free(three);
	tp_test_out_done(&out);
}

#include "tp_test_main.h"
