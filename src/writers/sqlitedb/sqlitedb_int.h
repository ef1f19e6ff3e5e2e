/*
 * sqlitedb_int.h — what the SQLite writer's files share (module-private): the page writer for
 * SQLite b-trees (btree.c: records, leaf packing, interior levels) and the tables built with
 * it on --jobs threads (argtree.c).
 *
 * The big tables (arg_value, a WITHOUT ROWID table, and slice, a rowid table) and their
 * indexes are not inserted through SQLite: their b-tree pages are written here in SQLite's
 * file format (sqlite.org fileformat2: "B-tree Pages", "Record Format") and joined to the
 * database SQLite built for the other tables once it is closed. Everything here is for
 * 4096-byte pages, the size the writer's database has.
 */
#ifndef TP_SQLITEDB_INT_H
#define TP_SQLITEDB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "writers/sink/sink.h"

#define SQB_PAGE 4096
/* The most payload an index b-tree cell keeps on its page ((U - 12) * 64 / 255 - 23 for
 * U = 4096): records up to this size never need overflow pages. */
#define SQB_MAX_LOCAL 1002
/* The largest cell this writer makes: a payload of SQB_MAX_LOCAL and its 2-byte size. */
#define SQB_MAX_CELL (SQB_MAX_LOCAL + 2)
/* The most columns of a record this writer makes. */
#define SQB_MAX_COLS 12

/* ---- records (btree.c) ------------------------------------------------------------------ */

/* SQB_TEXT_REF: a text that sqb_tree_add keeps by reference (valid UTF-8, valid until
 * sqb_tree_finish returns); a record holds it as SQB_TEXT. */
enum { SQB_NULL, SQB_INT, SQB_REAL, SQB_TEXT, SQB_TEXT_REF };

/* One column value of a record. A value for a REAL column goes through sqb_real first. */
struct sqb_val {
	int type; /* SQB_* */
	uint32_t n;
	union {
		int64_t i;
		double d;
		const char *s; /* SQB_TEXT: n bytes, valid UTF-8 */
	};
};

/* A double stored in a REAL column as SQLite stores it: NaN as NULL, an integral value that
 * fits in an int64 (neither end) as that integer, else the double. */
struct sqb_val sqb_real(double d);

/* The cell of an index b-tree leaf holding the record of vals[0..n): the payload's size as
 * a varint, then the record. Writes it to out (room for SQB_MAX_CELL bytes) and returns its
 * length, or 0 when the record is longer than SQB_MAX_LOCAL (it would need overflow pages). */
size_t sqb_cell(uint8_t *out, const struct sqb_val *vals, int n);
/* The cell of a table b-tree leaf: the payload's size, the rowid, the record (at most
 * SQB_MAX_CELL bytes, else 0). */
size_t sqb_table_cell(uint8_t *out, int64_t rowid, const struct sqb_val *vals, int n);
/* The length of an index b-tree leaf's cell. */
size_t sqb_cell_len(const uint8_t *cell);
/* Two index b-tree cells in SQLite's order of their records (BINARY collation, every column
 * ascending): <0, 0, >0. */
int sqb_cell_cmp(const uint8_t *a, const uint8_t *b);

/* Binds the n values of v (no SQB_TEXT_REF) to SQLite's statement s, parameters from 1, the
 * texts static (sqlitedb.c). */
struct sqlite3_stmt;
void sqb_bind(struct sqlite3_stmt *s, const struct sqb_val *v, int n);

/* ---- leaves (btree.c) -------------------------------------------------------------------- */

/* Packs cells in key order into full leaf pages and the separators between them (in an index
 * b-tree an interior cell holds an entry of its own: the one between two leaves). A part of
 * a table packed on its own ends either with a leaf (the table's last part) or with a
 * separator (any other part: the entry between its last leaf and the next part's first),
 * so parts packed on different threads join in order with nothing moved. In a table b-tree
 * (sqb_pack_table) the separator above a leaf is its last rowid, a copy: every leaf but the
 * table's last has one, and a part ends on its last leaf, however full. */
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
	int table;          /* a table b-tree (sqb_pack_table) */
	int64_t last_rowid; /* table: the last cell's */
};

void sqb_pack_init(struct sqb_pack *k);
void sqb_pack_free(struct sqb_pack *k);
/* Makes k a table b-tree's packer (cells from sqb_table_cell); kept by reset and free. */
void sqb_pack_table(struct sqb_pack *k);
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
	int table;     /* the tree is a table b-tree (separators are rowids) */
	int (*write)(void *ctx, uint32_t pgno, const uint8_t *page);
	void *ctx;
};

/* Builds the interior levels over the leaves child[0..n) (page numbers, key order, n >= 2)
 * with the n - 1 separators in seps (cells as sqb_pack keeps them: sep_off[i] .. sep_off[i +
 * 1]); the top page is written at page `root`, every other one at a new number from o. 0, -1
 * when out of memory, or the write's nonzero result. */
int sqb_interior(const uint32_t *child, size_t n, const uint8_t *seps, const size_t *sep_off,
                 uint32_t root, struct sqb_out *o);

/* ---- tables built in parts (argtree.c) -------------------------------------------------- */

#define SQB_MAX_IDX 4

/* An index of a tree: an entry for each row (unless column not_null, when >= 0, is NULL: a
 * partial index's WHERE ... IS NOT NULL) holds the columns cols[0..ncols) then the table's
 * key (the rowid, or a WITHOUT ROWID table's primary key). */
struct sqb_index_def {
	int ncols, cols[4], not_null;
};

/* A table: rows of ncols values in record order. A rowid table's column 0 is its INTEGER
 * PRIMARY KEY: the row's rowid, stored as NULL in the record. A WITHOUT ROWID table's
 * primary key is its first nkey columns. */
struct sqb_tree_def {
	int ncols, rowid, nkey, nidx;
	struct sqb_index_def idx[SQB_MAX_IDX];
};

struct sqb_tree;

/* Starts a table's builder: parts are packed on up to `jobs` threads (the caller's included;
 * 0 = the online CPUs) and spooled to a new file at spool_path. NULL when out of memory; a
 * spool that cannot be created is the builder's status (sqb_tree_status). */
struct sqb_tree *sqb_tree_new(const struct sqb_tree_def *def, const char *spool_path, int jobs,
                              int *err);
/* The first failure so far: TP_OK, TP_ENOMEM, or TP_EOUTPUT with the errno in *err. */
int sqb_tree_status(const struct sqb_tree *t, int *err);
/* Adds the next row, v[0..ncols) (rows come in key order; SQB_TEXT texts are copied and
 * repaired to UTF-8, SQB_TEXT_REF ones kept by reference; a REAL column's value comes from
 * sqb_real). TP_OK or the builder's status. */
int sqb_tree_add(struct sqb_tree *t, const struct sqb_val *v);
/* Packs what is left and waits for every part to be written. TP_OK or the status. */
int sqb_tree_finish(struct sqb_tree *t);
/* Times each part's packing (before the first row), for the stats; the CPU seconds spent
 * packing so far, every thread's. */
void sqb_tree_timed(struct sqb_tree *t);
double sqb_tree_pack_secs(const struct sqb_tree *t);
/* Rows added, and those too long for the page writer (to be inserted by SQLite after the
 * join, in the order added: ncols values each). */
uint64_t sqb_tree_rows(const struct sqb_tree *t);
size_t sqb_tree_nlong(const struct sqb_tree *t);
const struct sqb_val *sqb_tree_long(const struct sqb_tree *t, size_t i);

/* Where a tree goes in the closed database: the roots of the table and of its indexes (empty
 * pages so far, made by SQLite's CREATE statements). */
struct sqb_roots {
	uint32_t table, index[SQB_MAX_IDX];
};

/* After sqb_tree_finish: joins the trees t[0..n) to the closed database at db_path, whose
 * `npages` pages hold them empty at roots[k]: appends each one's leaves, interior pages (the
 * top ones written at the roots) and its indexes' pages, and sets the header's page count.
 * TP_OK, TP_ENOMEM, or TP_EOUTPUT with the errno in *err. */
int sqb_tree_join(struct sqb_tree *const *t, const struct sqb_roots *roots, size_t n,
                  const char *db_path, uint32_t npages, int *err);
/* Stops the threads, removes the spool and frees everything (NULL is fine). */
void sqb_tree_free(struct sqb_tree *t);

/* ---- the slice and argument rows (slices.c) ---------------------------------------------- */

/* The trees the writer builds, in the order they are joined. */
enum { SQT_ARGS, SQT_SLICE, SQT_COUNT };
/* arg_value's record (WITHOUT ROWID: the key first, then the other columns as declared). */
enum { A_SET, A_ID, A_KEY, A_INT, A_STR, A_REAL, A_TYPE, A_NCOLS };
/* arg_value's type column. */
enum { ARG_INT, ARG_UINT_BIG, ARG_REAL, ARG_STRING };
/* slice's columns as declared (id, the rowid, first). */
enum { C_ID, C_TS, C_DUR, C_TRACK, C_CAT, C_NAME, C_DEPTH, C_PARENT, C_ARGSET, C_CMD, C_NCOLS };

/* A text as a slot keeps it: the sink's string (valid until the drive's end), its length, and
 * whether it is valid UTF-8 as it is (else the tree copies it repaired). */
struct sl_text {
	const char *s;
	uint32_t n;
	int ok;
};

struct sl_arg {
	const char *key;
	int type; /* enum tp_arg_type */
	union {
		int64_t i;
		uint64_t u;
		double d;
	} v;
	struct sl_text s;
};

struct sl_slice {
	uint64_t id, parent;
	int64_t ts, dur, track, cmd;
	uint32_t depth, nargs;
	size_t arg0;
	struct sl_text name, cat;
};

/* One part of the sink's slices (tp_sink_drive_parts), recorded by the thread that walks it. */
struct sl_slot {
	struct sl_slice *sl;
	size_t n, cap;
	struct sl_arg *args;
	size_t nargs, cap_args;
	int oom;
};

/* Where a slot's rows go, in order: argument keys' ids (inserting new ones), rows added to
 * tree SQT_*; both return a status already reported. */
struct sl_out {
	void *ctx;
	int (*key_id)(void *ctx, const char *key, int64_t *id);
	int (*add)(void *ctx, int tree, const struct sqb_val *v);
	int64_t next_arg; /* the last argument row's id */
};

/* Records slice ss into slot s (any thread; out of memory is the slot's oom). */
void sl_record(struct sl_slot *s, const struct tp_sink_slice *ss);
/* The slot's slices and their arguments as rows, in order; empties the slot. */
int sl_emit(struct sl_slot *s, struct sl_out *o);
void sl_slot_free(struct sl_slot *s);

#endif /* TP_SQLITEDB_INT_H */
