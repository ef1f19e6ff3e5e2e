/*
 * outdir_int.h — private to the output-folder reader (outdir.c, outdir_db.c) and its unit test:
 * the reader's state and the guarded database access. outdir_db.c opens profile.db the only way
 * the reader trusts it (read-only, immutable, views off, limits, a statement budget, the schema
 * checked) and reads summary.json's scalars; outdir.c turns the tables into the model.
 */
#ifndef TP_OUTDIR_INT_H
#define TP_OUTDIR_INT_H

#include "readers/outdir/outdir.h"

#include <sqlite3.h>

/* Largest core number a track may carry; cores past it are not from a tpuprof profile. */
#define OD_MAX_CORE 4095
/* Slice times (ns) outside [-OD_MAX_TIME, OD_MAX_TIME], start and end, are not read: inside
 * it every difference of two times fits in an int64. */
#define OD_MAX_TIME (INT64_C(1) << 61)
/* Longest string or blob a column may hold. */
#define OD_MAX_VALUE (64 * 1024 * 1024)
/* Clocks summary.json may give, as the converter accepts them (MHz). */
#define OD_MHZ_MIN 1.0
#define OD_MHZ_MAX 100000.0

/* Database ids (any int64) -> small values, memory linear in the rows, not in the ids: a dense
 * table when the ids are (as the writer makes them), else sorted pairs searched. Add every
 * pair, then od_idmap_finish, then od_idmap_get. */
struct od_idmap {
	int64_t *ids;
	int32_t *vals;
	size_t n, cap;
	int32_t *dense; /* dense[id - base], -1 where absent; NULL when searched */
	int64_t base;
	size_t ndense;
};
int od_idmap_add(struct od_idmap *m, int64_t id, int32_t val);
int od_idmap_finish(struct od_idmap *m);
/* The value of id, or -1. A repeated id gives the value added last. */
int32_t od_idmap_get(const struct od_idmap *m, int64_t id);
void od_idmap_free(struct od_idmap *m);

struct od_lay { /* (device, core, layer id) -> layer index, for commands' Layer Id */
	int32_t device, core, id, index;
};

struct od_reader {
	sqlite3 *db;
	const char *path; /* profile.db, for messages */
	struct tp_profile *p;
	struct tp_diag *d;
	char **keys; /* arg_key rows' keys without "debug.", in row order */
	size_t nkeys;
	struct od_idmap key_of;   /* arg_key id -> index into keys */
	struct od_idmap dev_of;   /* process upid -> model device */
	struct od_idmap track_of; /* track id -> model track */
	int64_t *track_ids;       /* the database ids of the tracks mapped, in row order */
	size_t ntrack_ids, cap_track_ids;
	struct tp_ixmap host; /* model host tracks by (device, name) */
	double tiu_mhz, dma_mhz;
	struct od_lay *lays;
	size_t nlays, cap_lays;
	struct od_lay *byid; /* lays sorted by (device, core, id, index), for od_find_layer */
	size_t nbyid;
	uint64_t skipped_times; /* slices whose times are out of range */
	uint64_t ops_left;      /* the statement budget, in progress-handler calls */
};

/* Opens r->path for reading only, after refusing what is not a plain, quiet database file
 * (not a regular file; a journal or write-ahead log beside it; write-locked by a process).
 * Immutable (no journal, no -wal/-shm files, nothing written beside it), views disabled,
 * untrusted schema, value lengths capped, a statement budget proportional to the file size;
 * then checks that every table the reader reads is a plain table with the columns it reads.
 * TP_OK, or TP_EIO / TP_EFORMAT / TP_EUNSUPPORTED with r->d saying which and why. */
int od_open(struct od_reader *r);
/* Prepares sql on r->db; TP_OK, or an error naming the database. */
int od_prepare(struct od_reader *r, const char *sql, sqlite3_stmt **st);
/* The error for a failed sqlite3_step while reading `what`. */
int od_step_error(struct od_reader *r, const char *what, int rc);

/* summary.json's scalars the reader uses (its first 64 KiB; absent or unreadable = none):
 * clocks in OD_MHZ_MIN..OD_MHZ_MAX (else 0), source, architecture, network name. */
struct od_summary {
	double tiu_mhz, dma_mhz;
	char source[200], arch[64], net_name[256];
	int have_source, have_arch, have_net;
};
void od_read_summary(const char *path, struct od_summary *s);

#endif /* TP_OUTDIR_INT_H */
