/*
 * bmp_real_test.c — the bmprofile reader on the real dumps in ../shared/testdata/sophgo: the
 * BM1688 resnet50 dump against the reference converter's numbers (PROVENANCE.txt), and the
 * CV184X blazeface dump command by command and layer by layer against the vendor's own outputs;
 * on every real dump, the LOCAL memory records kept without the decoded fields against those the
 * fields give. Each test prints SKIPPED and is skipped when the dump is absent.
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

#include "analysis/analysis.h"
#include "hexfile.h"
#include "model/lmemrec.h"
#include "readers/sophgo/bmprofile/bmp_int.h"
#include "readers/sophgo/sg_testutil.h"
#include "readers/sophgo/sophgo.h"
#include "testutil.h"

/* ---------------------------------------------------------------------------------------- */
/* The real BM1688 dump.                                                                    */
/* ---------------------------------------------------------------------------------------- */

static void test_real_bm1688(void **state)
{
	(void)state;
	char dir[4096];
	if (!sgt_shared_path(dir, sizeof dir, "bm1688_resnet50")) {
		skip();
		return;
	}
	struct tp_profile *p = sgt_read(dir);
	/* Records written by the reference converter (PROVENANCE.txt). */
	const struct tp_track *t0 = sgt_track(p, 0, TP_TRACK_TIU),
	                      *t1 = sgt_track(p, 1, TP_TRACK_TIU);
	const struct tp_track *g0 = sgt_track(p, 0, TP_TRACK_GDMA),
	                      *g1 = sgt_track(p, 1, TP_TRACK_GDMA);
	assert_int_equal(t0->count, 257);
	assert_int_equal(t1->count, 47);
	assert_int_equal(g0->count, 145);
	assert_int_equal(g1->count, 21);
	/* First conv: raw 452448533 .. 452760563 = 312031 cycles, unchanged by the round trip. */
	const struct tp_slice *s = sgt_by_cmd(t0, 2);
	assert_string_equal(tp_str(p, tp_slice_name(t0, s)), "conv.normal");
	assert_string_equal(tp_str(p, tp_slice_type(t0, s)), "sCONV");
	assert_int_equal(s->cycles, 312031);
	/* GDMA core 0 cmd 2: 101376 bytes in 3377 cycles (= 22.5147 GB/s at 750 MHz). */
	s = sgt_by_cmd(g0, 2);
	assert_int_equal(tp_slice_bytes(g0, s), 101376);
	assert_int_equal(s->cycles, 3377);
	assert_string_equal(tp_str(p, tp_slice_name(g0, s)), "tensorLd");
	/* Total span, with the GDMA "end" taken as the last record's end (§10.2 quirk). */
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	const struct tp_track *all[4] = {t0, t1, g0, g1};
	for (int k = 0; k < 4; k++) {
		const struct tp_track *t = all[k];
		for (size_t i = 0; i < t->count; i++) {
			if (t->slices[i].start_ns < lo)
				lo = t->slices[i].start_ns;
			if (t->kind == TP_TRACK_TIU && tp_slice_end(t, &t->slices[i]) > hi)
				hi = tp_slice_end(t, &t->slices[i]);
		}
		if (t->kind == TP_TRACK_GDMA && t->count) {
			/* tracks are sorted by start; the last record in PMU order has the top cmd
			 * id */
			const struct tp_slice *last = &t->slices[0];
			for (size_t i = 0; i < t->count; i++)
				if (t->slices[i].cmd_id > last->cmd_id)
					last = &t->slices[i];
			if (tp_slice_end(t, last) > hi)
				hi = tp_slice_end(t, last);
		}
	}
	assert_int_equal(lo, 0);
	assert_int_equal(hi - lo, 2176268);
	/* Per-core sums of the PerfWeb summary (§10.2). */
	uint64_t tiu[2] = {0}, gdma[2] = {0}, gwait[2] = {0}, ddr[2] = {0};
	for (int c = 0; c < 2; c++) {
		const struct tp_track *t = c ? t1 : t0, *g = c ? g1 : g0;
		for (size_t i = 0; i < t->count; i++)
			if (tp_slice_kind(t, &t->slices[i]) != TP_CMD_SYS_WAIT)
				tiu[c] += t->slices[i].cycles;
		for (size_t i = 0; i < g->count; i++) {
			gdma[c] += g->slices[i].cycles;
			if (tp_slice_kind(g, &g->slices[i]) == TP_CMD_SYS_WAIT)
				gwait[c] += g->slices[i].cycles;
			if (tp_slice_kind(g, &g->slices[i]) == TP_CMD_NORMAL &&
			    tp_dir_touches_ddr((enum tp_dir)tp_slice_dir(g, &g->slices[i])))
				ddr[c] += tp_slice_bytes(g, &g->slices[i]);
		}
	}
	assert_int_equal(tiu[0], 1304643);
	assert_int_equal(tiu[1], 91343);
	assert_int_equal(gdma[0] - gwait[0], 1077718);
	assert_int_equal(gdma[1] - gwait[1], 155776);
	assert_int_equal(ddr[0], 31417504);
	assert_int_equal(ddr[1], 2927680);
	/* Layers from the node lines: 184 local + 1 global; the first Load owns GDMA cmd 1. */
	assert_int_equal(p->num_layers, 185);
	assert_int_equal(sgt_by_cmd(g0, 1)->layer, 0);
	assert_string_equal(tp_str(p, sgt_layer_at(p, 0)->type), "Load");
	assert_int_equal(sgt_by_cmd(t0, 257)->layer, -1); /* system.end */
	assert_string_equal(tp_str(p, tp_slice_name(t0, sgt_by_cmd(t0, 257))), "system.end");
	assert_int_equal(p->num_mems, 14);
	assert_string_equal(tp_profile_get_meta(p, "sim_total_cycle"), "1872297");
	assert_string_equal(tp_profile_get_meta(p, "sim_flops"), "7743042536");
	assert_int_equal(p->stats.records_dropped, 3);
	tp_profile_free(p);
}

/* ---------------------------------------------------------------------------------------- */
/* The real CV184X blazeface dump, command by command against the vendor's RegInfo files.   */
/* ---------------------------------------------------------------------------------------- */

/* One record of tiuRegInfo_<core>.txt / tdmaRegInfo_<core>.txt. */
struct ref_rec {
	char name[48], dir[24];
	long long start, end, cmd_id;
};

/* Value of "\t<key>: <value>" inside [b, e), copied to out; 1 if found. */
static int ref_field(const char *b, const char *e, const char *key, char *out, size_t n)
{
	size_t kn = strlen(key);
	for (const char *q = b; q && q < e; q = memchr(q, '\n', (size_t)(e - q))) {
		if (*q == '\n')
			q++;
		if (q + kn + 3 < e && q[0] == '\t' && !memcmp(q + 1, key, kn) && q[1 + kn] == ':' &&
		    q[2 + kn] == ' ') {
			const char *v = q + kn + 3, *ve = memchr(v, '\n', (size_t)(e - v));
			size_t m = (size_t)((ve ? ve : e) - v);
			if (m >= n)
				m = n - 1;
			memcpy(out, v, m);
			out[m] = 0;
			return 1;
		}
	}
	return 0;
}

/* Parses every `marker` record of a RegInfo file; returns the count, records in *out. */
static size_t ref_records(const char *path, const char *marker, struct ref_rec **out)
{
	size_t len = 0;
	char *txt = tp_test_slurp(path, &len);
	assert_non_null(txt);
	size_t n = 0, cap = 0;
	*out = NULL;
	size_t ml = strlen(marker);
	for (char *b = strstr(txt, marker); b;) {
		char *e = strstr(b + ml, marker);
		char *end = e ? e : txt + len;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			*out = realloc(*out, cap * sizeof **out);
			assert_non_null(*out);
		}
		struct ref_rec *r = &(*out)[n++];
		char v[64];
		memset(r, 0, sizeof *r);
		assert_true(ref_field(b, end, "Function Name", r->name, sizeof r->name));
		ref_field(b, end, "Direction", r->dir, sizeof r->dir);
		assert_true(ref_field(b, end, "Start Cycle", v, sizeof v));
		r->start = atoll(v);
		assert_true(ref_field(b, end, "End Cycle", v, sizeof v));
		r->end = atoll(v);
		assert_true(ref_field(b, end, "Cmd Id", v, sizeof v));
		r->cmd_id = atoll(v);
		b = e;
	}
	free(txt);
	return n;
}

static const char *dir_text(enum tp_dir d)
{
	switch (d) {
	case TP_DIR_DDR_TO_LMEM:
		return "DDR->LMEM";
	case TP_DIR_LMEM_TO_DDR:
		return "LMEM->DDR";
	case TP_DIR_DDR_TO_DDR:
		return "DDR->DDR";
	case TP_DIR_LMEM_TO_LMEM:
		return "LMEM->LMEM";
	default:
		return "-";
	}
}

/* Every record of one engine against the reference: same count, and per Cmd Id the same
 * Start/End Cycle, Function Name and (GDMA) Direction. */
static void check_against_ref(const struct tp_profile *p, const struct tp_track *t,
                              const char *path, const char *marker, int dma)
{
	struct ref_rec *ref = NULL;
	size_t n = ref_records(path, marker, &ref);
	assert_int_equal(n, t->count);
	size_t checked = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tp_slice *s = sgt_by_cmd(t, (uint32_t)ref[i].cmd_id);
		if (!s)
			fail_msg("%s: Cmd Id %lld has no slice", path, ref[i].cmd_id);
		if ((long long)tp_slice_start_cycle(t, s) != ref[i].start ||
		    (long long)tp_slice_end_cycle(t, s) != ref[i].end)
			fail_msg("%s: Cmd Id %lld: cycles %llu..%llu, reference %lld..%lld", path,
			         ref[i].cmd_id, (unsigned long long)tp_slice_start_cycle(t, s),
			         (unsigned long long)tp_slice_end_cycle(t, s), ref[i].start,
			         ref[i].end);
		if (strcmp(tp_str(p, tp_slice_name(t, s)), ref[i].name) != 0)
			fail_msg("%s: Cmd Id %lld: name %s, reference %s", path, ref[i].cmd_id,
			         tp_str(p, tp_slice_name(t, s)), ref[i].name);
		/* The reference prints LMEM->LMEM for sys commands (their addresses are zeroed);
		 * tpuprof says they have no direction. */
		if (dma && tp_slice_kind(t, s) == TP_CMD_NORMAL &&
		    strcmp(dir_text(tp_slice_dir(t, s)), ref[i].dir) != 0)
			fail_msg("%s: Cmd Id %lld: direction %s, reference %s", path, ref[i].cmd_id,
			         dir_text(tp_slice_dir(t, s)), ref[i].dir);
		checked++;
	}
	assert_int_equal(checked, n);
	free(ref);
}

/* A shared dump read once for the tests of a group (p NULL when absent: they skip). */
struct shared_dump {
	char dir[4096], ref[4096];
	struct tp_profile *p;
};

/* The group's dump; skips the running test (skip() does not return) when it is absent. */
static const struct tp_profile *shared_profile(const struct shared_dump *sd)
{
	if (!sd->p)
		skip();
	return sd->p;
}

static int cv184x_setup(void **state)
{
	struct shared_dump *sd = calloc(1, sizeof *sd);
	assert_non_null(sd);
	sd->p = sgt_read_shared("cv184x_blazeface", sd->dir, sd->ref, sizeof sd->dir);
	*state = sd;
	return 0;
}

static int shared_teardown(void **state)
{
	struct shared_dump *sd = *state;
	tp_profile_free(sd->p);
	free(sd);
	return 0;
}

static void test_real_cv184x(void **state)
{
	const struct shared_dump *sd = *state;
	const struct tp_profile *p = shared_profile(sd);
	const char *ref = sd->ref;
	char path[4200];
	assert_int_equal(p->arch, TP_ARCH_CV184X);
	assert_true(p->tiu_freq_mhz == 750 && p->gdma_freq_mhz == 650);
	const struct tp_track *t0 = sgt_track(p, 0, TP_TRACK_TIU),
	                      *g0 = sgt_track(p, 0, TP_TRACK_GDMA);
	assert_int_equal(t0->count, 116);
	assert_int_equal(g0->count, 225);
	snprintf(path, sizeof path, "%s/tiuRegInfo_0.txt", ref);
	check_against_ref(p, t0, path, "__TIU_REG_INFO__", 0);
	snprintf(path, sizeof path, "%s/tdmaRegInfo_0.txt", ref);
	check_against_ref(p, g0, path, "__TDMA_REG_INFO__", 1);
	/* PROVENANCE.txt: totalTiuCycle 591160, totalGdmaCycle 724000, DDR avg 4.39 GB/s. */
	uint64_t tiu = 0, gdma = 0, ddr = 0, ddr_cyc = 0;
	for (size_t i = 0; i < t0->count; i++)
		if (tp_slice_kind(t0, &t0->slices[i]) != TP_CMD_SYS_WAIT)
			tiu += t0->slices[i].cycles;
	for (size_t i = 0; i < g0->count; i++) {
		const struct tp_slice *s = &g0->slices[i];
		if (tp_slice_kind(g0, s) != TP_CMD_SYS_WAIT)
			gdma += s->cycles;
		if (tp_slice_kind(g0, s) == TP_CMD_NORMAL &&
		    tp_dir_touches_ddr((enum tp_dir)tp_slice_dir(g0, s))) {
			ddr += tp_slice_bytes(g0, s);
			ddr_cyc += s->cycles;
		}
	}
	assert_int_equal(tiu, 591160);
	assert_int_equal(gdma, 724000);
	assert_int_equal((int)((double)ddr * 650.0 / 1000.0 / (double)ddr_cyc * 100 + 0.5), 439);
	/* GDMA Cmd 1 (tdmaRegInfo): tensorLd of 70656 bytes, stall 0, FP32. */
	const struct tp_slice *s = sgt_by_cmd(g0, 1);
	assert_int_equal(tp_slice_bytes(g0, s), 70656);
	assert_int_equal(tp_slice_dtype(g0, s), TP_DT_FP32);
	assert_int_equal(tp_slice_dir(g0, s), TP_DIR_DDR_TO_LMEM);
}

/* One row of a time_data list in the vendor's profile_data.js: a Python list literal on one
 * line; fields split on ", " (no field of these rows contains ", "). */
struct js_row {
	int cat;
	double begin, end;
	char f[24][48];
	int nf;
};

static int js_rows(const char *path, struct js_row **out)
{
	size_t len = 0;
	char *txt = tp_test_slurp(path, &len);
	assert_non_null(txt);
	int n = 0, cap = 0;
	*out = NULL;
	for (char *l = txt; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		char *row = strstr(l, "time_data0 = [[");
		row = row                                                          ? row + 14
		      : (l[0] == '[' && l[1] >= '0' && l[1] <= '3' && l[2] == ',') ? l
		                                                                   : NULL;
		if (row) {
			if (n == cap) {
				cap = cap ? cap * 2 : 512;
				*out = realloc(*out, (size_t)cap * sizeof **out);
				assert_non_null(*out);
			}
			struct js_row *r = &(*out)[n++];
			memset(r, 0, sizeof *r);
			char *q = row + 1;
			while (r->nf < 24) {
				char *e = strstr(q, ", ");
				char *stop = e ? e : strrchr(q, ']');
				size_t m = stop ? (size_t)(stop - q) : strlen(q);
				if (m && (q[0] == '\'' || q[0] == '"') && m >= 2) {
					q++;
					m -= 2;
				}
				if (m >= sizeof r->f[0])
					m = sizeof r->f[0] - 1;
				memcpy(r->f[r->nf], q, m);
				r->f[r->nf++][m] = 0;
				if (!e)
					break;
				q = e + 2;
			}
			r->cat = atoi(r->f[0]);
			r->begin = atof(r->f[1]);
			r->end = atof(r->f[2]);
		}
		l = nl ? nl + 1 : NULL;
	}
	free(txt);
	return n;
}

/* Layers of the real CV184X dump from tensor_location.json + final.mlir against the vendor's
 * profile_data.js: per command the vendor's layer_id (file-line) and layer type; the layer
 * rows' ids, types and spans; the group rows' spans. */
static void test_real_cv184x_layers(void **state)
{
	const struct shared_dump *sd = *state;
	const struct tp_profile *p = shared_profile(sd);
	const char *dir = sd->dir, *ref = sd->ref;
	char path[4200];
	assert_int_equal(p->num_layers, 215); /* one per tensor_location.json entry */
	const struct tp_track *tr[2] = {sgt_track(p, 0, TP_TRACK_TIU),
	                                sgt_track(p, 0, TP_TRACK_GDMA)};
	snprintf(path, sizeof path, "%s/profile_data.js", ref);
	struct js_row *rows = NULL;
	int n = js_rows(path, &rows);
	int cmds = 0, layer_rows = 0, group_rows = 0;
	for (int i = 0; i < n; i++) {
		const struct js_row *r = &rows[i];
		if (r->cat <= 1) {
			const struct tp_slice *s = sgt_by_cmd(tr[r->cat], (uint32_t)atoi(r->f[7]));
			assert_non_null(s);
			if (!strcmp(r->f[9],
			            "-")) { /* the vendor's "no layer" (system.end, chain end) */
				assert_int_equal(s->layer, -1);
				cmds++;
				continue;
			}
			if (s->layer < 0)
				fail_msg("%s cmd %s: no layer, vendor %s", r->cat ? "GDMA" : "TIU",
				         r->f[7], r->f[9]);
			const struct tp_layer *ly = sgt_layer_at(p, (size_t)(s->layer));
			if (ly->id != atoi(r->f[9]) || strcmp(tp_str(p, ly->type), r->f[10]) != 0)
				fail_msg("%s cmd %s: layer %d %s, vendor %s %s",
				         r->cat ? "GDMA" : "TIU", r->f[7], ly->id,
				         tp_str(p, ly->type), r->f[9], r->f[10]);
			cmds++;
		} else if (r->cat == 2) {
			/* The vendor merges a layer's commands into display rows (PerfAI_web
			 * js_prep.py merge_layer_data); each row lies inside the span of our layers
			 * with that id and type, and a global layer's row is exactly its span. */
			int64_t lo = INT64_MAX, hi = INT64_MIN;
			int global = 0, found = 0;
			for (size_t L = 0; L < p->num_layers; L++) {
				const struct tp_layer *ly = sgt_layer_at(p, (size_t)L);
				if (ly->id != atoi(r->f[9]) || ly->begin_ns > ly->end_ns)
					continue;
				assert_string_equal(tp_str(p, ly->type), r->f[10]);
				found = 1;
				global |= !ly->is_local;
				lo = ly->begin_ns < lo ? ly->begin_ns : lo;
				hi = ly->end_ns > hi ? ly->end_ns : hi;
			}
			assert_true(found);
			if ((int64_t)r->begin < lo || (int64_t)r->end > hi)
				fail_msg("layer row %s %s %.0f..%.0f outside %lld..%lld", r->f[9],
				         r->f[10], r->begin, r->end, (long long)lo, (long long)hi);
			if (global && ((int64_t)r->begin != lo || (int64_t)r->end != hi))
				fail_msg("global layer %s: %.0f..%.0f, ours %lld..%lld", r->f[9],
				         r->begin, r->end, (long long)lo, (long long)hi);
			layer_rows++;
		} else {
			/* "Group<k>  L<line - 1>": the span of the group's member layers. */
			const char *at = strstr(r->f[5], " L");
			assert_non_null(at);
			int gline = atoi(at + 2) + 1;
			int64_t lo = INT64_MAX, hi = INT64_MIN;
			snprintf(path, sizeof path, "%s/final.mlir", dir);
			size_t mlen = 0;
			char *mt = tp_test_slurp(path, &mlen);
			struct sg_mlir m;
			assert_int_equal(sg_mlir_parse(mt, mlen, &m), TP_OK);
			int g = -1;
			for (size_t k = 0; k < m.ngroups; k++)
				if (m.groups[k].line == (uint32_t)gline)
					g = (int)k;
			assert_true(g >= 0);
			for (size_t L = 0; L < p->num_layers; L++) {
				const struct tp_layer *ly = sgt_layer_at(p, (size_t)L);
				if (ly->group != g || ly->begin_ns > ly->end_ns)
					continue;
				lo = ly->begin_ns < lo ? ly->begin_ns : lo;
				hi = ly->end_ns > hi ? ly->end_ns : hi;
			}
			if ((int64_t)r->begin != lo || (int64_t)r->end != hi)
				fail_msg("group row %s: %.0f..%.0f, ours %lld..%lld", r->f[5],
				         r->begin, r->end, (long long)lo, (long long)hi);
			sg_mlir_free(&m);
			free(mt);
			group_rows++;
		}
	}
	free(rows);
	assert_int_equal(cmds, 341);
	assert_int_equal(layer_rows, 209);
	assert_int_equal(group_rows, 13);
	/* Names are the MLIR loc names; tensors carry shape, dtype and location. */
	const struct tp_slice *conv = sgt_by_cmd(tr[0], 2);
	const struct tp_layer *ly = sgt_layer_at(p, (size_t)(conv->layer));
	assert_int_equal(ly->id, 19);
	assert_string_equal(tp_str(p, ly->name), "80_Relu");
	assert_int_equal(ly->group, 0);
	assert_true(ly->num_tensors >= 2);
	const struct tp_tensor *out = &p->tensors[ly->first_tensor + ly->num_tensors - 1];
	assert_int_equal(out->is_in, 0);
	assert_int_equal(out->dtype, TP_DT_BF16);
	assert_int_equal(out->ndim, 4);
	assert_int_equal(out->shape[1], 24);
	const struct tp_slice *ld = sgt_by_cmd(tr[1], 1);
	const struct tp_layer *lly = sgt_layer_at(p, (size_t)(ld->layer));
	assert_string_equal(tp_str(p, lly->type), "Load");
	const struct tp_tensor *in = &p->tensors[lly->first_tensor];
	assert_int_equal(in->is_in, 1);
	assert_int_equal(in->gaddr, 2201171394560ull);
	assert_int_equal(in->dtype, TP_DT_FP32);
}

/* ---------------------------------------------------------------------------------------- */
/* LOCAL memory records without the decoded fields.                                         */
/* ---------------------------------------------------------------------------------------- */

/* Each real bmprofile dump read as usual and with the decoded fields dropped (as above
 * TP_BMPROFILE_FIELDS_AUTO_LIMIT, through fields_limit): the compact records the reader keeps
 * then give the same LOCAL memory records as the fields do, record for record (TIU results and
 * operands included: BM1688 and CV184X carry shapes; BM1684X, read on the legacy path, gives
 * none either way). */
static void test_real_lmem_without_fields(void **state)
{
	(void)state;
	static const char *const dumps[] = {"bm1688_resnet50", "cv184x_blazeface",
	                                    "bm1684x_blazeface"};
	int read = 0;
	for (size_t k = 0; k < sizeof dumps / sizeof *dumps; k++) {
		char dir[4096];
		if (!sgt_shared_path(dir, sizeof dir, dumps[k]))
			continue;
		struct tp_profile *p[2] = {NULL, NULL};
		struct tp_diag d = {0};
		for (int f = 0; f < 2; f++) {
			struct tp_bmprofile_opts o = {.fields_limit = f ? 1 : 0};
			if (tp_bmprofile_read(dir, &o, &p[f], &d))
				fail_msg("%s: read failed: %s", dumps[k], d.msg);
		}
		int note = 0;
		for (size_t i = 0; i < p[1]->num_notes; i++)
			note |= strstr(tp_str(p[1], p[1]->notes[i].text),
			               "LOCAL memory records are") != NULL;
		assert_true(note);
		struct tp_lmem_recs r[2];
		for (int f = 0; f < 2; f++)
			assert_int_equal(tp_lmem_from_commands(p[f], 0, SIZE_MAX, &r[f]), TP_OK);
		size_t tiu = 0, kept = 0;
		for (size_t i = 0; i < p[1]->num_tracks; i++) { /* the records commands still own */
			const struct tp_track *tr = &p[1]->tracks[i];
			struct tp_lmem_cmd_rec one[TP_LMEM_CMD_RECS];
			for (size_t j = 0; tr->kind < TP_ENGINES && j < tr->count; j++)
				kept += tp_track_get_lmem(tr, j, one);
		}
		assert_int_equal(r[1].n, r[0].n);
		assert_int_equal(kept, r[0].n); /* every record came from the compact form */
		for (size_t i = 0; i < r[0].n; i++) {
			const struct tp_lmem_rec *a = &r[0].v[i], *b = &r[1].v[i];
			assert_int_equal(a->begin_ns, b->begin_ns);
			assert_int_equal(a->end_ns, b->end_ns);
			assert_int_equal(a->lane_offset, b->lane_offset);
			assert_int_equal(a->bytes, b->bytes);
			assert_int_equal(a->write, b->write);
			assert_int_equal(a->track, b->track);
			assert_int_equal(a->slice, b->slice);
			tiu += p[0]->tracks[a->track].kind == TP_TRACK_TIU;
		}
		printf("%s: %zu LOCAL memory records (%zu TIU), the same without the fields\n",
		       dumps[k], r[0].n, tiu);
		assert_true(r[0].n > tiu && tiu > 0);
		for (int f = 0; f < 2; f++) {
			tp_free(r[f].v);
			tp_profile_free(p[f]);
		}
		read++;
	}
	if (!read)
		skip();
}

int main(void)
{
	sgt_setup("bmprofile", "bmp_real_test_tmp");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_bm1688),
	    cmocka_unit_test_setup_teardown(test_real_cv184x, cv184x_setup, shared_teardown),
	    cmocka_unit_test_setup_teardown(test_real_cv184x_layers, cv184x_setup, shared_teardown),
	    cmocka_unit_test(test_real_lmem_without_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
