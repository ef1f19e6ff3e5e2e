/*
 * fuzz_cdm_read.c — libFuzzer target for the whole cdm_profile_data reader (src/readers/sophgo
 * cdm_*.c): the input becomes cdmlib0_0.profile of a scratch directory — so the real BM1690
 * file and tests/fixtures/cdm/cdmlib_small.hex are seeds as they are — and, for odd sizes,
 * also cdma0_1.profile (the CDMA path). The input's size picks global.profile: the bmodel
 * path of BM1690, the tpuDNN path of BM1690 (arch 8800) or SG2260E (arch 140814). The same
 * bytes also go through cdm_global_parse as text. Every run also has a small
 * tensor_location.json whose entries claim command ids on core 0 up to 2^32 - 1, so the layer
 * join sees the fuzzed PMU ids: no allocation may follow their size (libFuzzer's malloc
 * limit reports one that does). The reader must return a profile or an error with a message,
 * never crash, leak or leave end < start. The block walk in parts of a few records must give
 * what one pass gives, and so must the records of an engine read in parts of a few records on
 * three threads (the names left keyed, as for a large core file; inputs of even size).
 */
#include "fuzz_check.h"
#include "fuzz_scratch.h"
#include "readers/sophgo/cdm/cdm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *dir = "";

static void put(const char *name, const void *p, size_t n)
{
	fuzz_put(dir, name, p, n);
}

/* cdm_walk_jobs in parts of 1 to 7 records against one pass: the same answer. */
static void walk_parts(const uint8_t *data, size_t size)
{
	const struct sg_chip *chip = sg_chip_by_arch(TP_ARCH_BM1690);
	struct cdm_walk a, b;
	struct tp_diag da = {0}, db = {0};
	int ra = cdm_walk(data, size, "fz", chip, &a, &da);
	int rb = cdm_walk_jobs(data, size, "fz", chip, NULL, 1, size % 7 + 1, &b, &db);
	if (ra != rb || strcmp(da.msg, db.msg) != 0)
		abort();
	if (ra != TP_OK)
		return;
	if (a.npmu != b.npmu || a.dyn_records != b.dyn_records || a.dyn_other != b.dyn_other ||
	    a.extra_used != b.extra_used || a.partial_bytes != b.partial_bytes)
		abort();
	for (size_t i = 0; i < a.npmu; i++)
		if (a.pmu[i].count != b.pmu[i].count || a.pmu[i].off != b.pmu[i].off)
			abort();
	for (int e = 0; e < CDM_NENG; e++) {
		if (a.dyn[e].n != b.dyn[e].n)
			abort();
		for (size_t i = 0; i < a.dyn[e].n; i++)
			if (a.dyn[e].v[i].id != b.dyn[e].v[i].id ||
			    a.dyn[e].v[i].op != b.dyn[e].v[i].op)
				abort();
	}
	cdm_walk_free(&a);
	cdm_walk_free(&b);
}

static struct tp_profile *read_keyed(int jobs, size_t part, int *rc, struct tp_diag *d)
{
	struct tp_bmprofile_opts o = {
	    .detail = TP_BMPROFILE_DETAIL_OFF, .jobs = jobs, .part = part};
	struct tp_profile *p = NULL;
	memset(d, 0, sizeof *d);
	*rc = tp_cdm_read(dir, &o, &p, d);
	return p;
}

/* The engines' records in parts (cdm_eparts.c) against one pass: the same answer. */
static void read_parts(size_t size)
{
	int ra, rb;
	struct tp_diag da, db;
	struct tp_profile *a = read_keyed(1, SIZE_MAX, &ra, &da);
	struct tp_profile *b = read_keyed(3, size % 5 + 1, &rb, &db);
	if (ra != rb || strcmp(da.msg, db.msg) != 0)
		abort();
	if (ra == TP_OK) {
		if (a->num_tracks != b->num_tracks || a->num_notes != b->num_notes ||
		    memcmp(&a->stats, &b->stats, sizeof a->stats) != 0)
			abort();
		for (size_t i = 0; i < a->num_notes; i++)
			if (strcmp(tp_str(a, a->notes[i].text), tp_str(b, b->notes[i].text)) != 0)
				abort();
		for (size_t t = 0; t < a->num_tracks; t++) {
			const struct tp_track *x = &a->tracks[t], *y = &b->tracks[t];
			if (x->count != y->count || x->num_labels != y->num_labels)
				abort();
			for (size_t i = 0; i < x->count; i++) {
				const struct tp_slice *s = &x->slices[i], *u = &y->slices[i];
				if (s->start_ns != u->start_ns ||
				    tp_slice_end(x, s) != tp_slice_end(y, u) ||
				    s->cmd_id != u->cmd_id || s->dep_id != u->dep_id ||
				    s->label != u->label ||
				    memcmp(tp_slice_label(x, s), tp_slice_label(y, u),
				           sizeof(struct tp_label)) != 0)
					abort();
				struct tp_cost c1, c2;
				tp_track_get_cost(x, i, &c1);
				tp_track_get_cost(y, i, &c2);
				if (memcmp(&c1, &c2, sizeof c1) != 0)
					abort();
			}
		}
	}
	tp_profile_free(a);
	tp_profile_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dir = fuzz_scratch_dir_get("fuzz_cdm");
	/* The seed corpus holds every shared dump (some near 1 MiB); the cdm layouts are all
	 * reached within 64 KiB, and the fixed-run smoke of `make test` stays short. */
	if (size > (size_t)1 << 16)
		size = (size_t)1 << 16;
	struct cdm_global g;
	struct tp_diag d = {0};
	(void)cdm_global_parse((const char *)data, size, "fz", &g, &d);
	walk_parts(data, size);

	static const char *const globals[3] = {
	    "bmodel\narch=5\ntpu_freq=1000\n",
	    "arch=8800\ntpu_freq=1000\nmax_record_num=100000\ntail_offset_ns=1000\n",
	    "arch = 140814\r\ntpu_freq=1000\r\n",
	};
	const char *gp = globals[size % 3];
	put("global.profile", gp, strlen(gp));
	put("cdmlib0_0.profile", data, size);
	static const char json[] =
	    "[{\"file-line\": 1, \"core_id\": 0, \"opcode\": \"tpu.Conv2D\",\n"
	    "  \"tiu_dma_id(before)\": [0, 0], \"tiu_dma_id(after)\": [3, 3]},\n"
	    " {\"file-line\": 2, \"core_id\": 0, \"opcode\": \"tpu.Load\",\n"
	    "  \"tiu_dma_id(before)\": [2, 2], \"tiu_dma_id(after)\": [4294967295, 4294967295]}]\n";
	put("tensor_location.json", json, sizeof json - 1);
	int port = size % 2 == 1;
	if (port)
		put("cdma0_1.profile", data, size);
	struct tp_profile *p = NULL;
	memset(&d, 0, sizeof d);
	int rc = tp_cdm_read(dir, NULL, &p, &d);
	fuzz_check_read(rc, p, &d, 1);
	if (size % 2 == 0) /* (half the inputs: the fixed runs of make test stay short) */
		read_parts(size);
	if (port) {
		char path[256];
		snprintf(path, sizeof path, "%s/cdma0_1.profile", dir);
		unlink(path);
	}
	return 0;
}
