/*
 * fuzz_outdir_db.c — libFuzzer target for the output-folder reader (src/readers/outdir): the
 * input is written as profile.db into a scratch folder and read back with tp_outdir_read,
 * which must return a status (never crash, hang, leak or read out of bounds) and, on success,
 * leave a well-formed profile.
 *
 * Mutations work on the database's pages: the custom mutator picks one page (the page size from
 * the header, bytes 16-17) and lets libFuzzer mutate it in place, or copies one page over
 * another, so b-tree pages stay page-sized and most mutants still open as databases.
 * Seeds: when TP_FUZZ_SEED_DIR is set (scripts/fuzz.sh sets it to the corpus directory),
 * LLVMFuzzerInitialize writes the trace writers' fixture profile (tests/fixtures/c/sink_fixture.h)
 * there with the SQLite writer, cut down to the tables the reader reads and 512-byte pages so
 * the seed fits the smoke run's length limit.
 */
#include "fixtures/c/sink_fixture.h"
#include "fuzz_check.h"
#include "fuzz_scratch.h"
#include "readers/outdir/outdir.h"
#include "writers/sqlitedb/sqlitedb.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* Drops what the reader never reads and rewrites the file with small pages. */
static const char shrink_sql[] =
    "DROP VIEW args; DROP VIEW thread_track; DROP VIEW process_track; DROP VIEW counter_track;"
    "DROP TABLE counter; DROP TABLE flow; DROP TABLE thread;"
    "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_seed_dir(argc, argv);
	if (!dir)
		return 0;
	struct tp_profile *p = fx_profile();
	char *out = tp_path_join(dir, "gen_outdir_profile.db");
	struct tp_diag d = {0};
	sqlite3 *db = NULL;
	if (!p || !out || tp_sqlitedb_write_ex(p, NULL, out, 1, NULL, &d) != TP_OK ||
	    sqlite3_open(out, &db) != SQLITE_OK) {
		fprintf(stderr, "fuzz_outdir_db: cannot write the seed: %s\n", d.msg);
		abort();
	}
	sqlite3_stmt *st;
	/* Indexes first: their names come from the schema. */
	while (sqlite3_prepare_v2(db,
	                          "SELECT name FROM sqlite_master WHERE type = 'index' AND sql "
	                          "IS NOT NULL LIMIT 1",
	                          -1, &st, NULL) == SQLITE_OK &&
	       sqlite3_step(st) == SQLITE_ROW) {
		char sql[256];
		snprintf(sql, sizeof sql, "DROP INDEX \"%s\"", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			abort();
	}
	sqlite3_finalize(st);
	if (sqlite3_exec(db, shrink_sql, NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "fuzz_outdir_db: cannot shrink the seed: %s\n", sqlite3_errmsg(db));
		abort();
	}
	sqlite3_close(db);
	tp_free(out);
	tp_profile_free(p);
	return 0;
}

static size_t page_size(const uint8_t *data, size_t size)
{
	if (size < 100 || memcmp(data, "SQLite format 3", 16) != 0)
		return 0;
	size_t ps = (size_t)data[16] << 8 | data[17];
	ps = ps == 1 ? 65536 : ps;
	return ps >= 512 && (ps & (ps - 1)) == 0 && ps <= size ? ps : 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	size_t ps = page_size(data, size);
	if (!ps || seed % 8 == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	size_t npages = size / ps, a = (seed / 8) % npages, b = (seed / 8 / npages) % npages;
	if (seed % 8 == 1 && a != b) {
		memcpy(data + a * ps, data + b * ps, ps); /* one page over another */
		return size;
	}
	/* Page 0 holds the header; keep its first 100 bytes most of the time. */
	size_t off = a * ps + (a == 0 && seed % 8 != 2 ? 100 : 0), len = (a + 1) * ps - off;
	size_t n = LLVMFuzzerMutate(data + off, len, len);
	if (n < len) /* the page keeps its size: the tail it gave up is zeroed */
		memset(data + off + n, 0, len - n);
	return size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_scratch_dir_get("fuzz_outdir");
	char path[128];
	snprintf(path, sizeof path, "%s/profile.db", dir);
	fuzz_write(path, data, size);
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_outdir_read(dir, &p, &d);
	fuzz_check_read(rc, p, &d, 0);
	return 0;
}
