/*
 * sqlitedb_test.c — unit tests for the SQLite writer through the SQLite API: schema and
 * column names as Perfetto's, key sanitising, value types and display values, the README
 * queries' rows, replacing an existing file, and clean failures (no file left behind).
 */
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

/* The writer as tp_test_oom_sweep_file calls it. */
static int write_db(const struct tp_profile *p, const char *path, struct tp_diag *d)
{
	return tp_sqlitedb_write(p, NULL, path, 0, d);
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

#include "tp_test_main.h"
