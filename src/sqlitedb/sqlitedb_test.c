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

#include <cmocka.h>
#include <sqlite3.h>

#include "sink/sink_fixture.h"
#include "sqlitedb/sqlitedb.h"
#include "testutil.h"

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

/* The writer as tp_test_oom_sweep calls it. */
struct write_ctx {
	struct tp_profile *p;
	const char *path;
};

static int write_db(void *ctx, struct tp_diag *d)
{
	struct write_ctx *w = ctx;
	return tp_sqlitedb_write(w->p, NULL, w->path, 0, d);
}

static void test_db(void **state)
{
	(void)state;
	char dir[] = "/tmp/tp_sqlitedb_test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = tp_path_join(dir, "profile.db");
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
	char *bad = tp_path_join(dir, "missing/profile.db");
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_sqlitedb_write(p, NULL, bad, 0, &d), TP_EOUTPUT);
	assert_int_equal(access(bad, F_OK), -1);
	unlink(path);
	struct write_ctx w = {p, path};
	tp_test_oom_sweep(write_db, &w, path, 300);
	unlink(path);
	rmdir(dir);
	tp_free(bad);
	tp_free(path);
	tp_profile_free(p);
}

/* A name that bypassed the model's UTF-8 repair (put in the string table directly) is still
 * stored as valid UTF-8 TEXT: U+FFFD per maximal invalid subpart. */
static void test_invalid_utf8_name(void **state)
{
	(void)state;
	char dir[] = "/tmp/tp_sqlitedb_test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = tp_path_join(dir, "profile.db");
	struct tp_profile *p = fx_profile();
	uint32_t bad;
	assert_int_equal(tp_strtab_intern(&p->strs, "mm\xc0\xaf" "x", 5, &bad), TP_OK);
	for (size_t t = 0; t < p->num_tracks; t++)
		for (size_t i = 0; i < p->tracks[t].count; i++)
			if (strcmp(tp_str(p, p->tracks[t].slices[i].name), "mm.normal") == 0)
				p->tracks[t].slices[i].name = bad;
	struct tp_diag d = {0};
	assert_int_equal(tp_sqlitedb_write(p, NULL, path, 0, &d), TP_OK);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_string_equal(one(db, "select distinct name from slice where name like 'mm%'"),
	                    "mm\xEF\xBF\xBD\xEF\xBF\xBDx;");
	sqlite3_close(db);
	unlink(path);
	rmdir(dir);
	tp_free(path);
	tp_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_db),
	                                   cmocka_unit_test(test_invalid_utf8_name)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
