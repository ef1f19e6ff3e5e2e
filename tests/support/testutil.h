/*
 * testutil.h — helpers shared by the unit tests (linked through the tp_testsupport library):
 * reading a whole file, the out-of-memory sweep every writer test runs, a temporary output
 * directory, and a slice appended to a profile built in code.
 */
#ifndef TP_TEST_TESTUTIL_H
#define TP_TEST_TESTUTIL_H

#include "common/common.h"
#include "model/model.h"

/* Reads the whole file into a malloc'ed, NUL-terminated buffer (caller frees with free());
 * *n (if not NULL) gets the length. Returns NULL if the file cannot be opened or read. */
char *tp_test_slurp(const char *path, size_t *n);
/* tp_test_slurp as bytes, failing the cmocka test when the file cannot be read. */
uint8_t *tp_test_must_slurp(const char *path, size_t *n);

/* TP_SOURCE_DIR/rel, in one of a few rotating static buffers (valid for the next 3 calls);
 * fails the cmocka test when TP_SOURCE_DIR is unset (ctest sets it). */
const char *tp_test_source_path(const char *rel);
/* Compares data[0..n) byte for byte with the golden file TP_SOURCE_DIR/rel; with
 * TP_UPDATE_GOLDEN set, rewrites the golden first and prints that it did (review the diff). */
void tp_test_golden(const void *data, size_t n, const char *rel);

/* Runs write(ctx, diag) with the Nth allocation failing, for N = 0, 1, 2, ... until a run
 * succeeds (at most max_runs runs). Every failing run must return TP_ENOMEM, record it in the
 * diag with a message, and leave nothing at `path` (no half-written output; path may be NULL
 * for writers that produce no file). Fails the cmocka test otherwise, or if no run succeeds.
 * Returns the number of allocations of the successful run. */
long tp_test_oom_sweep(int (*write)(void *ctx, struct tp_diag *d), void *ctx, const char *path,
                       long max_runs);

/* A writer of p into the file at path, as the file-writer tests sweep it. */
typedef int (*tp_test_file_writer)(const struct tp_profile *p, const char *path, struct tp_diag *d);
/* tp_test_oom_sweep of write(p, path, d): the same checks, for writers that take only these. */
long tp_test_oom_sweep_file(tp_test_file_writer write, const struct tp_profile *p, const char *path,
                            long max_runs);

/* A test's output file: a fresh directory /tmp/PREFIX.XXXXXX and the path of one file in it. */
struct tp_test_out {
	char dir[96];
	char *path; /* dir/FILE (tp_free'd by tp_test_out_done) */
};
/* Creates the directory and names the file (not created). Fails the test when it cannot. */
void tp_test_out_make(struct tp_test_out *o, const char *prefix, const char *file);
/* Removes the file and the directory (left in place if the test put more in it) and frees
 * the path. */
void tp_test_out_done(struct tp_test_out *o);

/* Adds the tensor shape of one side ("src" or "dst") of a DMA command to the argument set
 * being built, under the descriptor's names: SIDE_start_addr, SIDE_nsize, _csize, _hsize,
 * _wsize (what the LOCAL memory view reads). */
void tp_test_add_dma_shape(struct tp_profile *p, const char *side, uint64_t addr, uint64_t n,
                           uint64_t c, uint64_t h, uint64_t w);

/* A new profile with one device `device` (id 0, one core) holding one track of kind k named
 * `name` (NULL: unnamed) at mhz: on core 0, or on no core for host and thread tracks. *track
 * gets the track's index. Fails the cmocka test when out of memory. */
struct tp_profile *tp_test_one_track(const char *device, enum tp_track_kind k, const char *name,
                                     uint32_t mhz, int *track);

/* Track x of pa and track y of pb are the same, id for id: slices, labels (with `names`, also
 * the strings their names are in their profiles), long durations, cost entries and widths. */
void tp_test_same_track(const struct tp_profile *pa, const struct tp_track *x,
                        const struct tp_profile *pb, const struct tp_track *y, int names);

/* A new profile holding one device `device` (index 0, id 0) of `cores` cores and, on core 0,
 * a TIU and a GDMA track named after their kind at mhz: *tiu and *gdma get their indices.
 * Fails the cmocka test when out of memory. */
struct tp_profile *tp_test_tiu_gdma(const char *device, int32_t cores, double mhz, int *tiu,
                                    int *gdma);

/* A new profile holding one device `device` (index 0, id 0) of `cores` cores with one track
 * of kind k, named after the kind, on each core at mhz: tracks[c] gets core c's track index.
 * Fails the cmocka test when out of memory. */
struct tp_profile *tp_test_cores(const char *device, int32_t cores, enum tp_track_kind k,
                                 double mhz, int *tracks);

/* A new profile of a captured process: one device `process` (index 0, id pid, no core) holding one
 * thread track named `thread`; *track gets its index. Fails the cmocka test when out of memory. */
struct tp_profile *tp_test_thread(const char *process, int32_t pid, const char *thread, int *track);

/* After an allocation failed while p was built, the failure is sticky: tp_profile_finish must
 * refuse the profile with TP_ENOMEM. Checks that and frees p. */
void tp_test_finish_oom(struct tp_profile *p);

/* Appends to track tr of p a slice [begin, end) named `name` of type `type` (a capture's
 * TP_CAP_TYPE_* or any text) with argument set args. Fails the cmocka test when out of memory. */
void tp_test_push_slice(struct tp_profile *p, int tr, const char *type, const char *name,
                        int64_t begin, int64_t end, uint32_t args);

#endif
