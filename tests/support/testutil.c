/*
 * testutil.c — see testutil.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

char *tp_test_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	if (n)
		*n = len;
	return buf;
}

uint8_t *tp_test_must_slurp(const char *path, size_t *n)
{
	char *b = tp_test_slurp(path, n);
	assert_non_null(b);
	return (uint8_t *)b;
}

const char *tp_test_source_path(const char *rel)
{
	static char buf[4][4096];
	static unsigned next;
	const char *src = getenv("TP_SOURCE_DIR");
	assert_non_null(src);
	char *out = buf[next++ % 4];
	int len = snprintf(out, sizeof buf[0], "%s/%s", src, rel);
	assert_true(len > 0 && (size_t)len < sizeof buf[0]);
	return out;
}

void tp_test_golden(const void *data, size_t n, const char *rel)
{
	const char *path = tp_test_source_path(rel);
	if (getenv("TP_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		fwrite(data, 1, n, f);
		fclose(f);
		printf("UPDATED golden %s: review the diff\n", path);
	}
	size_t len;
	char *want = tp_test_slurp(path, &len);
	assert_non_null(want);
	assert_int_equal(n, len);
	assert_memory_equal(data, want, len);
	free(want);
}

long tp_test_oom_sweep(int (*write)(void *ctx, struct tp_diag *d), void *ctx, const char *path,
                       long max_runs)
{
	for (long n = 0; n < max_runs; n++) {
		struct tp_diag d = {0};
		if (path)
			unlink(path);
		tp_alloc_fail_after(n);
		int st = write(ctx, &d);
		long used = tp_alloc_fail_after(-1);
		if (st == TP_OK)
			return used;
		if (st != TP_ENOMEM)
			fail_msg("allocation %ld failing gave %s (%s), not TP_ENOMEM", n,
			         tp_status_name(st), d.msg);
		assert_int_equal(d.status, TP_ENOMEM);
		assert_true(d.msg[0] != 0);
		if (path)
			assert_int_equal(access(path, F_OK), -1);
	}
	fail_msg("no run succeeded within %ld allocations", max_runs);
	return -1;
}

struct file_write {
	tp_test_file_writer write;
	const struct tp_profile *p;
	const char *path;
};

static int file_write(void *ctx, struct tp_diag *d)
{
	const struct file_write *w = ctx;
	return w->write(w->p, w->path, d);
}

long tp_test_oom_sweep_file(tp_test_file_writer write, const struct tp_profile *p, const char *path,
                            long max_runs)
{
	struct file_write w = {write, p, path};
	return tp_test_oom_sweep(file_write, &w, path, max_runs);
}

void tp_test_out_make(struct tp_test_out *o, const char *prefix, const char *file)
{
	int n = snprintf(o->dir, sizeof o->dir, "/tmp/%s.XXXXXX", prefix);
	assert_true(n > 0 && (size_t)n < sizeof o->dir);
	assert_non_null(mkdtemp(o->dir));
	o->path = tp_path_join(o->dir, file);
	assert_non_null(o->path);
}

void tp_test_out_done(struct tp_test_out *o)
{
	unlink(o->path);
	rmdir(o->dir);
	tp_free(o->path);
	o->path = NULL;
}

void tp_test_add_dma_shape(struct tp_profile *p, const char *side, uint64_t addr, uint64_t n,
                           uint64_t c, uint64_t h, uint64_t w)
{
	static const char *const field[] = {"start_addr", "nsize", "csize", "hsize", "wsize"};
	const uint64_t v[] = {addr, n, c, h, w};
	char key[32];
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		snprintf(key, sizeof key, "%s_%s", side, field[i]);
		tp_args_add_uint(p, key, v[i]);
	}
}

/* A new profile holding one device (index 0), for the builders below. */
static struct tp_profile *one_device(const char *device, int32_t id, int32_t cores)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	assert_int_equal(tp_profile_add_device(p, device, id, cores), 0);
	return p;
}

struct tp_profile *tp_test_one_track(const char *device, enum tp_track_kind k, const char *name,
                                     uint32_t mhz, int *track)
{
	struct tp_profile *p = one_device(device, 0, 1);
	int core = k == TP_TRACK_HOST || k == TP_TRACK_THREAD ? -1 : 0;
	*track = tp_profile_add_track(p, 0, core, k, name, mhz);
	assert_true(*track >= 0);
	return p;
}

struct tp_profile *tp_test_tiu_gdma(const char *device, int32_t cores, double mhz, int *tiu,
                                    int *gdma)
{
	struct tp_profile *p = one_device(device, 0, cores);
	*tiu = tp_profile_add_track(p, 0, 0, TP_TRACK_TIU, NULL, mhz);
	*gdma = tp_profile_add_track(p, 0, 0, TP_TRACK_GDMA, NULL, mhz);
	assert_true(*tiu >= 0 && *gdma >= 0);
	return p;
}

struct tp_profile *tp_test_cores(const char *device, int32_t cores, enum tp_track_kind k,
                                 double mhz, int *tracks)
{
	struct tp_profile *p = one_device(device, 0, cores);
	for (int32_t c = 0; c < cores; c++) {
		tracks[c] = tp_profile_add_track(p, 0, c, k, NULL, mhz);
		assert_true(tracks[c] >= 0);
	}
	return p;
}

struct tp_profile *tp_test_thread(const char *process, int32_t pid, const char *thread, int *track)
{
	struct tp_profile *p = one_device(process, pid, 0);
	*track = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, thread, 0);
	assert_true(*track >= 0);
	return p;
}

void tp_test_finish_oom(struct tp_profile *p)
{
	assert_int_equal(tp_profile_finish(p), TP_ENOMEM);
	tp_profile_free(p);
}

void tp_test_push_slice(struct tp_profile *p, int tr, const char *type, const char *name,
                        int64_t begin, int64_t end, uint32_t args)
{
	struct tp_slice *s = tp_track_push(p, tr);
	assert_non_null(s);
	s->start_ns = begin;
	assert_int_equal(tp_slice_set_end(p, &p->tracks[tr], s, end), TP_OK);
	struct tp_label lb = {.name = tp_profile_str(p, name), .type = tp_profile_str(p, type)};
	assert_int_equal(tp_slice_set_label(p, &p->tracks[tr], s, &lb), TP_OK);
	s->args = args;
}

void tp_test_same_track(const struct tp_profile *pa, const struct tp_track *x,
                        const struct tp_profile *pb, const struct tp_track *y, int names)
{
	assert_int_equal(x->count, y->count);
	if (x->count)
		assert_memory_equal(x->slices, y->slices, x->count * sizeof *x->slices);
	assert_int_equal(x->num_labels, y->num_labels);
	assert_memory_equal(x->labels, y->labels, x->num_labels * sizeof *x->labels);
	for (uint32_t k = 0; names && k < x->num_labels; k++)
		assert_string_equal(tp_str(pa, x->labels[k].name), tp_str(pb, y->labels[k].name));
	assert_int_equal(x->num_long_dur, y->num_long_dur);
	if (x->num_long_dur)
		assert_memory_equal(x->long_dur, y->long_dur,
		                    x->num_long_dur * sizeof *x->long_dur);
	assert_int_equal(x->cost_width, y->cost_width);
	assert_int_equal(x->cost != NULL, y->cost != NULL);
	if (x->cost)
		assert_memory_equal(x->cost, y->cost, x->count * x->cost_width);
	assert_int_equal(x->num_cost_dict, y->num_cost_dict);
	if (x->num_cost_dict)
		assert_memory_equal(x->cost_dict, y->cost_dict,
		                    x->num_cost_dict * sizeof *x->cost_dict);
	assert_int_equal(x->num_cost_big, y->num_cost_big);
	if (x->num_cost_big)
		assert_memory_equal(x->cost_big, y->cost_big,
		                    x->num_cost_big * sizeof *x->cost_big);
}
