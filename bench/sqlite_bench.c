/*
 * sqlite_bench.c — BENCHMARK TOOL for the SQLite writer, used by scripts/bench.sh:
 *
 *   sqlite_bench dump DIR DB [compact]
 *       reads the bmprofile dump DIR in process (default reader options, so --detail auto),
 *       analyses it and writes DB through tp_sqlitedb_write_ex (trace args full unless
 *       `compact`), then prints two lines: all rows, CPU seconds of the process (SQLite's
 *       sorter threads included) and wall seconds of the write, with rows/s; then rows per
 *       table, SQLite's insert time and rows/s for slices and for args separately, load /
 *       index+commit / total seconds of the writing thread's CPU, bytes of the database per
 *       row and the process's peak RSS (the profile included).
 *   sqlite_bench bare DB SLICES ARGS
 *       the baseline: a bare sqlite3 loop, no tpuprof code on the row path — the writer's
 *       pragmas, schema and indexes (tp_sqlitedb_*_sql), one prepared single-row INSERT per
 *       table stepped per row in one transaction, SLICES slice rows then ARGS arg_value rows
 *       of the writer's shape (slice: 8 integers, two short texts; arg: 86 % integer, 12 %
 *       short text, 2 % real, the mix of a full-detail BM1688 dump), then the same indexes.
 *       Prints the same lines.
 *
 * Timings are printed, never asserted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#include "readers/sophgo/sophgo.h"
#include "writers/sqlitedb/sqlitedb.h"

/* CPU seconds of this thread (the phase timings), of the whole process (SQLite's sorter
 * threads included) and wall seconds. */
static double clock_s(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static double wall0, cpu0; /* at the start of the write */

static void start(void)
{
	wall0 = clock_s(CLOCK_MONOTONIC);
	cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static double rate(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

static void report(const char *what, const char *db, const struct tp_sqlitedb_stats *s)
{
	struct stat sb;
	long long bytes = stat(db, &sb) ? -1 : (long long)sb.st_size;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	uint64_t rows = s->slices + s->args + s->other;
	double wall = clock_s(CLOCK_MONOTONIC) - wall0,
	       cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	printf("sqlite %s: %" PRIu64 " rows in %.2f s CPU (all threads) = %.2f M rows/s CPU,"
	       " %.2f s wall = %.2f M rows/s wall\n",
	       what, rows, cpu, rate(rows, cpu) / 1e6, wall, rate(rows, wall) / 1e6);
	printf("sqlite %s: slices %" PRIu64 " in %.2f s = %.2f M rows/s | args %" PRIu64
	       " in %.2f s = %.2f M rows/s | other %" PRIu64
	       " | load %.2f s, indexes+commit %.2f s,"
	       " total %.2f s = %.2f M rows/s (load only %.2f M rows/s) | db %lld B = %.1f B/row"
	       " | peak RSS %ld MiB\n",
	       what, s->slices, s->slice_secs, rate(s->slices, s->slice_secs) / 1e6, s->args,
	       s->arg_secs, rate(s->args, s->arg_secs) / 1e6, s->other, s->load_secs, s->index_secs,
	       s->total_secs, rate(rows, s->total_secs) / 1e6, rate(rows, s->load_secs) / 1e6,
	       bytes, rows ? (double)bytes / (double)rows : 0, ru.ru_maxrss / 1024);
}

static int dump(const char *dir, const char *db, int full)
{
	struct tp_bmprofile_opts o;
	memset(&o, 0, sizeof o);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	if (tp_bmprofile_read(dir, &o, &p, &d) != TP_OK) {
		fprintf(stderr, "sqlite_bench: %s\n", d.msg);
		tp_profile_free(p);
		return 2;
	}
	struct tp_analysis a;
	if (tp_analyze(p, &a) != TP_OK) {
		fprintf(stderr, "sqlite_bench: analysis failed\n");
		tp_profile_free(p);
		return 2;
	}
	struct tp_sqlitedb_stats s;
	start();
	int st = tp_sqlitedb_write_ex(p, &a, db, full, &s, &d);
	if (st)
		fprintf(stderr, "sqlite_bench: %s\n", d.msg);
	else
		report(full ? "writer (trace args full)" : "writer (trace args compact)", db, &s);
	tp_analysis_free(&a);
	tp_profile_free(p);
	return st ? 3 : 0;
}

static int run(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite_bench: %s\n", err ? err : "SQL failed");
		sqlite3_free(err);
		return 1;
	}
	return 0;
}

static int bare(const char *path, uint64_t nslices, uint64_t nargs)
{
	static const char *const names[] = {"conv.normal", "mm.normal",   "tensorLd",
	                                    "tensorSt",    "arith.add",   "sfu.taylor",
	                                    "tensorMv",    "pord.maxpool"};
	static const char *const cats[] = {"TIU", "GDMA", "SDMA"};
	static const char *const strs[] = {"INT8", "FP16", "DDR->LMEM", "conv2d", "sCONV"};
	struct tp_sqlitedb_stats s;
	memset(&s, 0, sizeof s);
	/* Written to a tracked temporary and renamed at the end, as the writer does: an
	 * interrupted run (Ctrl-C during a multi-GB bench row) leaves no database behind. */
	char *tmp = tp_temp_path_for(path);
	if (!tmp) {
		fprintf(stderr, "sqlite_bench: %s: no temporary path\n", path);
		return 3;
	}
	start();
	tp_sqlitedb_init_once();
	double t0 = now_s();
	sqlite3 *db;
	sqlite3_stmt *ins_slice = NULL, *ins_arg = NULL;
	if (sqlite3_open_v2(tmp, &db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK ||
	    run(db, tp_sqlitedb_pragma_sql) || run(db, tp_sqlitedb_schema_sql) ||
	    run(db, "BEGIN") ||
	    sqlite3_prepare_v2(db, "INSERT INTO slice VALUES(?,?,?,?,?,?,?,?,?,?)", -1, &ins_slice,
	                       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
	                       "INSERT INTO arg_value(id,arg_set_id,key_id,int_value,"
	                       "string_value,real_value,type) VALUES(?,?,?,?,?,?,?)",
	                       -1, &ins_arg, NULL) != SQLITE_OK)
		goto fail;
	uint64_t lcg = 1;
	double t1 = now_s();
	for (uint64_t i = 1; i <= nslices; i++) {
		lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
		sqlite3_bind_int64(ins_slice, 1, (sqlite3_int64)i);
		sqlite3_bind_int64(ins_slice, 2, (sqlite3_int64)(i * 1000));
		sqlite3_bind_int64(ins_slice, 3, (sqlite3_int64)(lcg >> 54));
		sqlite3_bind_int64(ins_slice, 4, (sqlite3_int64)(4 + i % 6));
		sqlite3_bind_text(ins_slice, 5, cats[i % 3], -1, SQLITE_STATIC);
		sqlite3_bind_text(ins_slice, 6, names[(lcg >> 40) % 8], -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins_slice, 7, 0);
		sqlite3_bind_null(ins_slice, 8);
		sqlite3_bind_int64(ins_slice, 9, (sqlite3_int64)i);
		sqlite3_bind_int64(ins_slice, 10, (sqlite3_int64)(i / 6 + 1));
		if (sqlite3_step(ins_slice) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(ins_slice);
	}
	double t2 = now_s();
	uint64_t per = nslices ? (nargs + nslices - 1) / nslices : 1;
	for (uint64_t i = 0; i < nargs; i++) {
		lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
		unsigned kind = (unsigned)(lcg >> 57) % 50; /* 43 int, 6 text, 1 real */
		sqlite3_bind_int64(ins_arg, 1, (sqlite3_int64)(i + 1));
		sqlite3_bind_int64(ins_arg, 2, (sqlite3_int64)(i / per + 1));
		sqlite3_bind_int64(ins_arg, 3, (sqlite3_int64)(i % per + 1));
		sqlite3_bind_null(ins_arg, 4);
		sqlite3_bind_null(ins_arg, 5);
		sqlite3_bind_null(ins_arg, 6);
		if (kind < 43) {
			sqlite3_bind_int64(ins_arg, 4, (sqlite3_int64)(lcg >> 40));
			sqlite3_bind_int(ins_arg, 7, 0);
		} else if (kind < 49) {
			sqlite3_bind_text(ins_arg, 5, strs[kind % 5], -1, SQLITE_STATIC);
			sqlite3_bind_int(ins_arg, 7, 3);
		} else {
			sqlite3_bind_double(ins_arg, 6, (double)(lcg >> 44) / 1e4);
			sqlite3_bind_int(ins_arg, 7, 2);
		}
		if (sqlite3_step(ins_arg) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(ins_arg);
	}
	double t3 = now_s();
	if (run(db, tp_sqlitedb_index_sql) || run(db, "COMMIT"))
		goto fail;
	double t4 = now_s();
	sqlite3_finalize(ins_slice);
	sqlite3_finalize(ins_arg);
	ins_slice = ins_arg = NULL;
	struct tp_diag d = {0};
	if (sqlite3_close(db) != SQLITE_OK) {
		db = NULL;
		goto fail;
	}
	if (tp_rename_into_place(tmp, path, &d) != TP_OK) {
		fprintf(stderr, "sqlite_bench: %s\n", d.msg);
		remove(tmp);
		tp_temp_forget(tmp);
		tp_free(tmp);
		return 3;
	}
	tp_free(tmp);
	s.slices = nslices;
	s.args = nargs;
	s.slice_secs = t2 - t1;
	s.arg_secs = t3 - t2;
	s.load_secs = t3 - t0;
	s.index_secs = t4 - t3;
	s.total_secs = now_s() - t0;
	report("bare sqlite3 loop", path, &s);
	return 0;
fail:
	fprintf(stderr, "sqlite_bench: %s: %s\n", tmp, db ? sqlite3_errmsg(db) : "close failed");
	sqlite3_finalize(ins_slice);
	sqlite3_finalize(ins_arg);
	sqlite3_close(db);
	remove(tmp);
	tp_temp_forget(tmp);
	tp_free(tmp);
	return 3;
}

int main(int argc, char **argv)
{
	tp_temp_cleanup_on_signals(); /* the writer's and bare's temporaries go on Ctrl-C */
	if (argc >= 4 && !strcmp(argv[1], "dump"))
		return dump(argv[2], argv[3], !(argc > 4 && !strcmp(argv[4], "compact")));
	if (argc == 5 && !strcmp(argv[1], "bare"))
		return bare(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));
	fprintf(stderr, "usage: sqlite_bench dump DIR DB [compact] | bare DB SLICES ARGS\n");
	return 1;
}
