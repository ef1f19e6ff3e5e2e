/*
 * sg_testutil.h — helpers shared by the Sophgo readers' unit tests (bmprofile/ and cdm/ tests;
 * compiled into each test, never into the converter): fixture and temp paths, the real dumps
 * under ../shared, track and slice lookups, argument lookups, and the out-of-memory sweep of a
 * whole read. Every helper fails the running cmocka test on a broken precondition.
 */
#ifndef TP_SG_TESTUTIL_H
#define TP_SG_TESTUTIL_H

#include "model/model.h"
#include "readers/sophgo/bmprofile/bmp_int.h"

/* tests/fixtures/<sub> and <binary dir>/<tmp_name> (created), set by sgt_setup. */
extern char sgt_fixdir[2048], sgt_tmpdir[2048];
void sgt_setup(const char *fixture_sub, const char *tmp_name);

/* Removes path and everything below it (no error when absent). */
void sgt_rmtree(const char *path);
/* Materialises fixture `name` into a fresh temp dir `as` and returns its path (static
 * buffer, valid until the next call). */
const char *sgt_make_fixture(const char *name, const char *as);
/* The path dir/file, in one of a few rotating static buffers (valid for the next 3 calls). */
const char *sgt_in(const char *dir, const char *file);
/* The hex fixture sgt_fixdir/name turned into bytes (malloc'ed, caller frees); *n gets the
 * length. Fails the test when it cannot be read or parsed. */
uint8_t *sgt_load_hex(const char *name, size_t *n);
/* Overwrites the little-endian u32 at `off` of the file. */
void sgt_put_u32(const char *path, size_t off, uint32_t v);

/* The layer of node i, read without a cursor. */
int32_t sgt_node_layer(const struct bmp_nodes *nd, size_t i);
/* Layer i of p, decoded into one of a few rotating buffers (tests hold a handful at once). */
const struct tp_layer *sgt_layer_at(const struct tp_profile *p, size_t i);
/* Track of `core` and kind k on device 0 (fails the test if absent). */
const struct tp_track *sgt_track(const struct tp_profile *p, int core, enum tp_track_kind k);
/* The slice with cmd_id (fails the test if none). */
const struct tp_slice *sgt_by_cmd(const struct tp_track *t, uint32_t cmd_id);
/* Integer / string argument `key` of argument set `set`. */
int64_t sgt_arg_int(const struct tp_profile *p, uint32_t set, const char *key, int *found);
const char *sgt_arg_str(const struct tp_profile *p, uint32_t set, const char *key);

/* Path of ../shared/testdata/sophgo/<rel> (TP_SHARED_DIR overrides ../shared); 0 after
 * printing SKIPPED when absent. */
int sgt_shared_path(char *out, size_t n, const char *rel);
/* Reads the dump in dir with the bmprofile reader; fails the test with the reader's message
 * when it gives an error. */
struct tp_profile *sgt_read(const char *dir);
/* Reads the shared dump `name` with the bmprofile reader, its vendor outputs'
 * directory (reference/<name>) in ref[0..n); NULL after printing SKIPPED when either is
 * absent (the caller then calls skip()). */
struct tp_profile *sgt_read_shared(const char *name, char *dir, char *ref, size_t n);

/* Runs read(dir) with the Nth allocation failing for N from the first allocation after
 * tp_profile_new's own, until a run succeeds (at most `limit`): every failing run must return
 * TP_ENOMEM and no profile, and with `need_msg` a message. */
void sgt_oom_sweep(int (*read)(const char *dir, struct tp_profile **p, struct tp_diag *d),
                   const char *dir, long limit, int need_msg);

#endif
