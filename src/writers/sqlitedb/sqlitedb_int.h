/*
 * sqlitedb_int.h — what the SQLite writer's files share (module-private): the page writer for
 * SQLite index b-trees (btree.c: records, leaf packing, interior levels) and the argument
 * table built with it on --jobs threads (argtree.c).
 *
 * The argument rows (arg_value, a WITHOUT ROWID table, most of the database) are not inserted
 * through SQLite: their b-tree pages are written here in SQLite's file format (sqlite.org
 * fileformat2: "B-tree Pages", "Record Format") and joined to the database SQLite built for
 * the other tables once it is closed. Everything here is for 4096-byte pages, the size the
 * writer's database has.
 */
#ifndef TP_SQLITEDB_INT_H
#define TP_SQLITEDB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

#define SQB_PAGE 4096
/* The most payload an index b-tree cell keeps on its page ((U - 12) * 64 / 255 - 23 for
 * U = 4096): records up to this size never need overflow pages. */
#define SQB_MAX_LOCAL 1002
/* The largest cell this writer makes: a payload of SQB_MAX_LOCAL and its 2-byte size. */
#define SQB_MAX_CELL (SQB_MAX_LOCAL + 2)

/* ---- records (btree.c) ------------------------------------------------------------------ */

enum { SQB_NULL, SQB_INT, SQB_REAL, SQB_TEXT };

/* One column value of a record. A value for a REAL column goes through sqb_real first. */
struct sqb_val {
	int type; /* SQB_* */
	int64_t i;
	double d;
	const char *s; /* SQB_TEXT: n bytes, valid UTF-8 */
	uint32_t n;
};

/* A double stored in a REAL column as SQLite stores it: NaN as NULL, an integral value that
 * fits in an int64 (neither end) as that integer, else the double. */
struct sqb_val sqb_real(double d);

/* The cell of an index b-tree leaf holding the record of vals[0..n): the payload's size as
 * a varint, then the record. Writes it to out (room for SQB_MAX_CELL bytes) and returns its
 * length, or 0 when the record is longer than SQB_MAX_LOCAL (it would need overflow pages). */
size_t sqb_cell(uint8_t *out, const struct sqb_val *vals, int n);

/* ---- leaves (btree.c) -------------------------------------------------------------------- */

/* Packs cells in key order into full leaf pages and the separators between them (in an index
 * b-tree an interior cell holds an entry of its own: the one between two leaves). A part of
 * a table packed on its own ends either with a leaf (the table's last part) or with a
 * separator (any other part: the entry between its last leaf and the next part's first),
 * so parts packed on different threads join in order with nothing moved. */
struct sqb_pack {
	uint8_t *pages; /* npages leaves, SQB_PAGE bytes each, in key order */
	size_t npages, cap;
	struct tp_buf seps; /* the separators' cells, back to back */
	size_t *sep_off;    /* nseps + 1 offsets into seps */
	size_t nseps, cap_seps;
	uint8_t cur[SQB_PAGE]; /* the leaf being filled */
	int ncur, cstart;      /* its cells; where its cell content starts */
	uint8_t pend[SQB_MAX_CELL];
	size_t npend; /* a cell that did not fit in the last leaf: the separator after it */
	int oom;
};

void sqb_pack_init(struct sqb_pack *k);
void sqb_pack_free(struct sqb_pack *k);
/* Empties k for the next part, keeping its allocations. */
void sqb_pack_reset(struct sqb_pack *k);
/* Adds the next cell (from sqb_cell). A part that does not end the table needs at least two
 * cells. 0, or -1 when out of memory. */
int sqb_pack_add(struct sqb_pack *k, const uint8_t *cell, size_t len);
/* Ends the part: with `last`, on a leaf; else on a separator. 0, or -1 when out of memory. */
int sqb_pack_end(struct sqb_pack *k, int last);

/* ---- interior levels (btree.c) ---------------------------------------------------------- */

/* Where pages go: the next free page number, and a page's bytes written at a number. */
struct sqb_out {
	uint32_t next; /* the next page number to use */
	int (*write)(void *ctx, uint32_t pgno, const uint8_t *page);
	void *ctx;
};

/* Builds the interior levels over the leaves child[0..n) (page numbers, key order, n >= 2)
 * with the n - 1 separators in seps (cells as sqb_pack keeps them: sep_off[i] .. sep_off[i +
 * 1]); the top page is written at page `root`, every other one at a new number from o. 0, -1
 * when out of memory, or the write's nonzero result. */
int sqb_interior(const uint32_t *child, size_t n, const uint8_t *seps, const size_t *sep_off,
                 uint32_t root, struct sqb_out *o);

/* ---- the argument table (argtree.c) ------------------------------------------------------ */

struct argtree;

/* One argument row of arg_value: kind says which value columns are set (the table's `type`
 * column is derived from it). */
enum { ARG_INT, ARG_UINT_BIG, ARG_REAL, ARG_STRING };
struct arg_row {
	int64_t id, set, key;
	int kind;
	int64_t i;     /* ARG_INT, ARG_UINT_BIG: int_value */
	double d;      /* ARG_REAL: real_value */
	const char *s; /* ARG_UINT_BIG, ARG_STRING: string_value (copied; repaired to UTF-8) */
};

/* Starts the table's builder: parts are packed on up to `jobs` threads (the caller's
 * included; 0 = the online CPUs) and spooled to a new file at spool_path. NULL when out of
 * memory; a spool that cannot be created is the builder's status (argtree_status). */
struct argtree *argtree_new(const char *spool_path, int jobs, int *err);
/* The first failure so far: TP_OK, TP_ENOMEM, or TP_EOUTPUT with the errno in *err. */
int argtree_status(const struct argtree *t, int *err);
/* Adds the next row (rows come in (set, id) order). TP_OK or the builder's status. */
int argtree_add(struct argtree *t, const struct arg_row *r);
/* Packs what is left and waits for every part to be written. TP_OK or the status. */
int argtree_finish(struct argtree *t);
/* Times each part's packing (before the first row), for the stats; the CPU seconds spent
 * packing so far, every thread's. */
void argtree_timed(struct argtree *t);
double argtree_pack_secs(const struct argtree *t);
/* Rows added, and those too long for the page writer (inserted by SQLite afterwards, in the
 * order added). */
uint64_t argtree_rows(const struct argtree *t);
size_t argtree_nlong(const struct argtree *t);
const struct arg_row *argtree_long(const struct argtree *t, size_t i);
/* After argtree_finish: joins the table and its index arg_value_key_real to the closed
 * database at db_path, whose `npages` pages hold both of them empty at pages `root` and
 * `index_root`: appends the leaves, the interior pages (the top ones written at the roots) and
 * the index's pages, and sets the header's page count. TP_OK, TP_ENOMEM, or TP_EOUTPUT with
 * the errno in *err. */
int argtree_join(struct argtree *t, const char *db_path, uint32_t npages, uint32_t root,
                 uint32_t index_root, int *err);
/* Stops the threads, removes the spool and frees everything (NULL is fine). */
void argtree_free(struct argtree *t);

#endif /* TP_SQLITEDB_INT_H */
