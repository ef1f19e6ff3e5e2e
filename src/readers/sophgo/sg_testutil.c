/*
 * sg_testutil.c — the helpers of sg_testutil.h, shared by the Sophgo readers' unit tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hexfile.h"
#include "readers/sophgo/sg_testutil.h"
#include "readers/sophgo/sophgo.h"
#include "testutil.h"

/* The layer of node i, read without a cursor. */
int32_t sgt_node_layer(const struct bmp_nodes *nd, size_t i)
{
	struct bmp_node_cursor cur = {0, 0, 0};
	return bmp_nodes_layer(nd, i, &cur);
}

/* Layer i of p, decoded into one of a few rotating buffers (tests hold a handful at once). */
const struct tp_layer *sgt_layer_at(const struct tp_profile *p, size_t i)
{
	static struct tp_layer buf[8];
	static unsigned next;
	return tp_profile_layer(p, i, &buf[next++ % 8]);
}

char sgt_fixdir[2048], sgt_tmpdir[2048];

void sgt_setup(const char *fixture_sub, const char *tmp_name)
{
	const char *src = getenv("TP_SOURCE_DIR");
	const char *bin = getenv("TP_BINARY_DIR");
	snprintf(sgt_fixdir, sizeof sgt_fixdir, "%s/tests/fixtures/%s", src ? src : "../..",
	         fixture_sub);
	snprintf(sgt_tmpdir, sizeof sgt_tmpdir, "%s/%s", bin ? bin : "/tmp", tmp_name);
	mkdir(sgt_tmpdir, 0777);
}

void sgt_rmtree(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		unlink(path);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char p[4096];
		snprintf(p, sizeof p, "%s/%s", path, de->d_name);
		sgt_rmtree(p);
	}
	closedir(d);
	rmdir(path);
}

/* The dump in dir read with the bmprofile reader; fails the test with the reader's message. */
struct tp_profile *sgt_read(const char *dir)
{
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	if (tp_bmprofile_read(dir, NULL, &p, &d))
		fail_msg("read failed: %s", d.msg);
	return p;
}

/* dir/file, in one of a few rotating buffers (a test holds a handful at once). */
const char *sgt_in(const char *dir, const char *file)
{
	static char buf[4][8448];
	static unsigned next;
	char *out = buf[next++ % 4];
	snprintf(out, sizeof buf[0], "%s/%s", dir, file);
	return out;
}

/* The hex fixture sgt_fixdir/name as bytes (malloc'ed, caller frees); *n gets the length. */
uint8_t *sgt_load_hex(const char *name, size_t *n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", sgt_fixdir, name);
	uint8_t *b = NULL;
	assert_int_equal(tp_test_hex_load(path, &b, n), 0);
	return b;
}

/* Materialises fixture `name` into a fresh temp dir and returns its path (static buffer). */
const char *sgt_make_fixture(const char *name, const char *as)
{
	static char out[4096];
	char src[4096];
	snprintf(src, sizeof src, "%s/%s", sgt_fixdir, name);
	snprintf(out, sizeof out, "%s/%s", sgt_tmpdir, as);
	sgt_rmtree(out);
	assert_int_equal(tp_test_fixture_dir(src, out), 0);
	return out;
}

void sgt_put_u32(const char *path, size_t off, uint32_t v)
{
	size_t n;
	uint8_t *b = tp_test_must_slurp(path, &n);
	assert_true(off + 4 <= n);
	for (int i = 0; i < 4; i++)
		b[off + (size_t)i] = (uint8_t)(v >> (8 * i));
	assert_int_equal(tp_test_write_file(path, b, n), 0);
	free(b);
}

const struct tp_track *sgt_track(const struct tp_profile *p, int core, enum tp_track_kind k)
{
	int t = tp_profile_find_track(p, 0, core, k);
	assert_true(t >= 0);
	return &p->tracks[t];
}

const struct tp_slice *sgt_by_cmd(const struct tp_track *t, uint32_t cmd_id)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->slices[i].cmd_id == cmd_id)
			return &t->slices[i];
	fail_msg("no slice with cmd_id %u", cmd_id);
	return NULL;
}

int64_t sgt_arg_int(const struct tp_profile *p, uint32_t set, const char *key, int *found)
{
	size_t n;
	const struct tp_arg *a = tp_args_get(p, set, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tp_str(p, a[i].key), key)) {
			*found = 1;
			return a[i].type == TP_ARG_INT ? a[i].v.i : (int64_t)a[i].v.u;
		}
	*found = 0;
	return 0;
}

const char *sgt_arg_str(const struct tp_profile *p, uint32_t set, const char *key)
{
	size_t n;
	const struct tp_arg *a = tp_args_get(p, set, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tp_str(p, a[i].key), key) && a[i].type == TP_ARG_STR)
			return tp_str(p, a[i].v.s);
	return NULL;
}

/* Path of ../shared/testdata/sophgo/<rel>, or NULL (after printing SKIPPED) when absent. */
int sgt_shared_path(char *out, size_t n, const char *rel)
{
	const char *shared = getenv("TP_SHARED_DIR");
	snprintf(out, n, "%s/testdata/sophgo/%s", shared && *shared ? shared : "../shared", rel);
	struct stat st;
	if (stat(out, &st) != 0) {
		printf("SKIPPED: %s not found (real-dump test not run)\n", out);
		return 0;
	}
	return 1;
}

struct tp_profile *sgt_read_shared(const char *name, char *dir, char *ref, size_t n)
{
	char rel[512];
	snprintf(rel, sizeof rel, "reference/%s", name);
	if (!sgt_shared_path(dir, n, name) || !sgt_shared_path(ref, n, rel))
		return NULL;
	struct tp_profile *p = sgt_read(dir);
	return p;
}

void sgt_oom_sweep(int (*read)(const char *dir, struct tp_profile **p, struct tp_diag *d),
                   const char *dir, long limit, int need_msg)
{
	/* tp_profile_new (called first by the readers) leaks when its string table's own
	 * initialisation fails half way (model/common code, reported to its owner): start after
	 * its allocations. */
	tp_alloc_fail_after(-1);
	struct tp_profile *q = tp_profile_new();
	long first = tp_alloc_fail_after(-1);
	tp_profile_free(q);
	int ok = 0;
	for (long n = first; n < limit && !ok; n++) {
		struct tp_profile *p = NULL;
		struct tp_diag d = {0};
		tp_alloc_fail_after(n);
		int rc = read(dir, &p, &d);
		tp_alloc_fail_after(-1);
		if (rc == TP_OK) {
			ok = 1;
			tp_profile_free(p);
		} else {
			assert_int_equal(rc, TP_ENOMEM);
			assert_null(p);
			if (need_msg)
				assert_true(d.msg[0] != 0);
		}
	}
	assert_true(ok);
}
