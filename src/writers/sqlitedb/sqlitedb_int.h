/*
 * sqlitedb_int.h — what the SQLite writer's files share (module-private): the page writer for
 * SQLite b-trees (btree.c: records, leaf packing, interior levels), the tables built with it
 * on --jobs threads (argtree.c), their join to SQLite's database (treejoin.c) and the sink's
 * slices as their rows (slices.c).
 *
 * The big tables (arg_value, a WITHOUT ROWID table, and slice, a rowid table) and their
 * indexes are not inserted through SQLite: their b-tree pages are written here in SQLite's
 * file format (sqlite.org fileformat2: "B-tree Pages", "Record Format") and joined to the
 * database SQLite built for the other tables once it is closed. Everything here is for
 * 4096-byte pages, the size the writer's database has.
 */
#ifndef TP_SQLITEDB_INT_H
#define TP_SQLITEDB_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/common.h"
#include "common/wsync.h"
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

enum { SQB_NULL, SQB_INT, SQB_REAL, SQB_TEXT };

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

/* Binds the n values of v to SQLite's statement s, parameters from 1, the
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
/* Drops the first n closed leaves (the caller has written them), keeping the others: the last
 * closed leaf may still change until the part ends, so a caller keeps it. */
void sqb_pack_drop(struct sqb_pack *k, size_t n);
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
 * 0 = tp_jobs_default()) and spooled to a new file at spool_path. NULL when out of memory; a
 * spool that cannot be created is the builder's status (sqb_tree_status). */
struct sqb_tree *sqb_tree_new(const struct sqb_tree_def *def, const char *spool_path, int jobs,
                              int *err);
/* The first failure so far: TP_OK, TP_ENOMEM, or TP_EOUTPUT with the errno in *err. */
int sqb_tree_status(const struct sqb_tree *t, int *err);
/* Texts longer than this in all may make a record longer than SQB_MAX_LOCAL or a cell longer
 * than SQB_MAX_CELL (the other columns take at most 2 header and 8 body bytes each, a rowid 9):
 * such a row is kept out of the pages and inserted by SQLite. */
#define SQB_LONG_TEXT 900
/* The most bytes a row of ncols columns with `text` bytes of texts takes in a leaf: its cell
 * and cell pointer. */
#define SQB_ROW_BOUND(ncols, text) ((size_t)15 + 10 * (size_t)(ncols) + (size_t)(text))

/* The caller's rows, handed over in order: row(ctx, i, v) fills row i's values (texts valid
 * UTF-8) or returns 0 for a row kept out (a long one); it is called on any
 * thread once the block's part is packed, after which release(ctx) (when set) gives the block
 * back, on that thread. cells: the rows not kept out; bound: the sum of their
 * SQB_ROW_BOUND; mem: the bytes the block holds while a tree has it (from its contents, never
 * its capacity: a part's end depends on it). */
struct sqb_block {
	size_t nrows, cells, bound, mem;
	int (*row)(void *ctx, size_t i, struct sqb_val *v);
	void (*release)(void *ctx);
	void *ctx;
};

/* Adds the next block (rows come in key order). The block is given back also on failure.
 * TP_OK or the builder's status. */
int sqb_tree_add_block(struct sqb_tree *t, const struct sqb_block *b);
/* Packs what is left and waits for every part to be written. TP_OK or the status. */
int sqb_tree_finish(struct sqb_tree *t);
/* Times each part's packing (before the first row), for the stats; the CPU seconds spent
 * packing so far, every thread's. */
void sqb_tree_timed(struct sqb_tree *t);
double sqb_tree_pack_secs(const struct sqb_tree *t);
/* Rows added (the blocks' cells). */
uint64_t sqb_tree_rows(const struct sqb_tree *t);

/* ---- a tree's state (argtree.c builds it, treejoin.c joins it) ------------------------ */

/* The most worker threads a tree packs on, whatever --jobs: a part in flight holds its blocks
 * (up to PART_MEM), its pages and its runs until it is placed, and each worker adds up to
 * two (the part it packs, the next queued one), so the tree's memory in flight is bounded by
 * this, not by the thread count. Three trees and the sink's walk share the threads. */
#define TREE_WORKERS 4

/* Every RUN_MARK-th entry of a sorted run has its offset noted: the join finds a key's place
 * in a run from them, and samples them to split the indexes into ranges. */
#define RUN_MARK 64
/* One index's entries of a part: cells back to back, in row order while they are encoded
 * (off: each one's offset), then in index order (mark[i]: entry i * RUN_MARK's offset). */
struct run {
	struct tp_buf cells;
	size_t *off, *mark;
	size_t n, cap;
};

/* What a packed part leaves for the join. */
struct meta {
	uint64_t seq;
	int packed;        /* its pages are known (their count) */
	struct part *part; /* the slot holding its pages until they are written */
	size_t npages, nseps, base;
	struct tp_buf seps;
	size_t *sep_off;
	struct run ix[SQB_MAX_IDX];
};

/* Hands the memory glibc keeps free in the threads' arenas back to the system (a no-op with
 * another C library), once a phase's buffers are freed. */
void sqb_heap_trim(void);
/* A part's separators, once the interior levels have their copy (or the tree is freed). */
void sqb_seps_free(struct meta *m);
/* A part's run of one index, once every range of the index is merged (or the tree is freed). */
void sqb_run_free(struct run *u);

enum { P_FREE, P_FILLING, P_QUEUED, P_BUSY, P_PACKED, P_WRITING };

struct part {
	int state, last;
	struct sqb_block *blocks; /* its rows */
	size_t nblocks, cap_blocks, cells, bound, mem;
	struct meta *m;
	struct sqb_pack pk;
	TP_LINE_PAD; /* pk's last rowid moves per row while the next slot's blocks are read */
};

/* The join's sizes: the entries of an index range, the leaves held by ranges ahead of their
 * place (per thread beside the head's), the leaves the head range writes at a time. The range size
 * shapes the file's pages; the others only the memory. A tree takes sqb_join_default (treejoin.c);
 * sqlitedb_test makes its trees' small, so that small tables take many ranges, stream and wait. */
struct sqb_join_tune {
	size_t range_entries, budget, stream;
};
extern const struct sqb_join_tune sqb_join_default;

struct sqb_tree {
	struct sqb_tree_def def;
	struct sqb_join_tune tune; /* set before sqb_tree_join */
	char *spool;
	int fd, jobs;   /* the spool */
	int db;         /* the database, while sqb_tree_join writes it */
	uint32_t first; /* the database's page number of the first leaf */
	struct part *slot, *cur;
	size_t nslots;
	struct tp_wsync sync;
	pthread_t th[TREE_WORKERS];
	int nthreads;
	int status, err; /* the first failure of a part (TP_ENOMEM / TP_EOUTPUT and errno) */
	struct meta **metas;
	size_t nmetas, cap_metas;
	size_t placed, next_page; /* parts placed in the file so far; their pages */
	uint64_t rows;
	int timed; /* sqb_tree_timed: each part's packing is timed (a system call each) */
	/* The spool made the database (sqb_tree_join's first tree): its first `moved` leaves
	 * were copied to page moved_to on, the others are at their spool pages; renamed: the
	 * spool is the database's file now. */
	int adopted, renamed;
	size_t moved;
	uint32_t moved_to;
	double pack_secs; /* CPU seconds packing parts, all threads */
};

/* Writes len bytes at offset `at` of fd: TP_OK, or TP_EOUTPUT with the errno in *err. */
int sqb_write_all(int fd, const void *p, size_t len, off_t at, int *err);
/* qsort's order of two index entries (pointers to cells): sqb_cell_cmp's. */
int sqb_ent_cmp(const void *x, const void *y);

/* Where a tree goes in the closed database: the roots of the table and of its indexes (empty
 * pages so far, made by SQLite's CREATE statements). */
struct sqb_roots {
	uint32_t table, index[SQB_MAX_IDX];
};

/* After sqb_tree_finish: joins the trees t[0..n) to the closed database at db_path, whose
 * `npages` pages hold them empty at roots[k]. t[0]'s spool becomes the database (SQLite's
 * pages copied into it, the file renamed to db_path: its leaves are not copied); then each
 * tree's leaves (the others' copied from their spools), interior pages (the top ones written
 * at the roots) and its indexes' pages, and the header's page count. TP_OK, TP_ENOMEM, or
 * TP_EOUTPUT with the errno in *err. */
int sqb_tree_join(struct sqb_tree *const *t, const struct sqb_roots *roots, size_t n,
                  const char *db_path, uint32_t npages, int *err);
/* Stops the threads, removes the spool and frees everything (NULL is fine). */
void sqb_tree_free(struct sqb_tree *t);

/* ---- the slice and argument rows (slices.c) ---------------------------------------------- */

/* The trees built from the sink's slices, in the order they are joined (the writer's flow tree
 * follows them). */
enum { SQT_ARGS, SQT_SLICE, SQT_COUNT };
/* arg_value's record (WITHOUT ROWID: the key first, then the other columns as declared). */
enum { A_SET, A_ID, A_KEY, A_INT, A_STR, A_REAL, A_TYPE, A_NCOLS };
/* arg_value's type column. */
enum { ARG_INT, ARG_UINT_BIG, ARG_REAL, ARG_STRING };
/* slice's columns as declared (id, the rowid, first). */
enum { C_ID, C_TS, C_DUR, C_TRACK, C_CAT, C_NAME, C_DEPTH, C_PARENT, C_ARGSET, C_CMD, C_NCOLS };

/* The sink's slices of one part (tp_sink_drive_parts) recorded by the thread that walks it,
 * then handed to both trees as blocks (slices.c). */
struct sl_block;
struct sl_pool;

/* One part being walked into: its block (NULL until its first slice). */
struct sl_slot {
	struct sl_block *b;
	int oom;
};

/* Where blocks go, in part order: argument keys' ids (inserting new ones), blocks added to
 * tree SQT_*, both returning a status already reported; the long rows kept for SQLite. */
struct sl_out {
	void *ctx;
	int (*key_id)(void *ctx, const char *key, int64_t *id);
	int (*add)(void *ctx, int tree, const struct sqb_block *b);
	int64_t next_arg;                 /* the last argument row's id */
	struct sqb_val *longs[SQT_COUNT]; /* ncols values each, texts owned */
	size_t nlong[SQT_COUNT], cap_long[SQT_COUNT];
	struct sl_pool *pool;
};

/* The blocks' pool (NULL when out of memory), freed with every block once no tree holds one. */
struct sl_pool *sl_pool_new(void);
void sl_pool_free(struct sl_pool *p);
/* Frees the blocks no part holds: what the drive's parts in flight (more with --jobs) left. */
void sl_pool_trim(struct sl_pool *p);
/* Records slice ss into slot s (any thread); 0, or -1 when out of memory. */
int sl_record(struct sl_pool *p, struct sl_slot *s, const struct tp_sink_slice *ss);
/* Hands the slot's block to the trees (its keys numbered and its long rows kept in order):
 * TP_OK or a status already reported; TP_ENOMEM (not reported) when recording ran out. */
int sl_emit(struct sl_slot *s, struct sl_out *o);
/* The long rows of o (freed). */
void sl_out_free(struct sl_out *o);

#endif /* TP_SQLITEDB_INT_H */
