/*
 * model_test.c — unit tests for profile construction, argument sets, finishing (sorting,
 * nesting depth, span), long strings cut at the model boundary, cost entries, slice labels
 * and long durations, and the reference cycle<->ns conversions (the layer table:
 * model_layers_test.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "model/argkeys.h"
#include "model/lmemrec.h"
#include "model/model.h"
#include "testutil.h"

static void test_build_and_finish(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	int dev = tp_profile_add_device(p, "dev0", 0, 1);
	int tr = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, "main", 0);
	assert_int_equal(tp_profile_find_track(p, dev, -1, TP_TRACK_THREAD), tr);
	assert_int_equal(tp_profile_find_track(p, dev, 0, TP_TRACK_TIU), -1);
	/* Pushed out of order: child, parent, sibling. */
	int64_t spans[][2] = {{20, 30}, {10, 100}, {40, 50}, {100, 120}};
	for (int i = 0; i < 4; i++) {
		struct tp_slice *s = tp_track_push(p, tr);
		s->start_ns = spans[i][0];
		tp_slice_set_end(p, &p->tracks[tr], s, spans[i][1]);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct tp_track *t = &p->tracks[tr];
	assert_int_equal(t->slices[0].start_ns, 10);
	assert_int_equal(tp_slice_depth(t, &t->slices[0]), 0);
	assert_int_equal(tp_slice_depth(t, &t->slices[1]), 1);
	assert_int_equal(tp_slice_depth(t, &t->slices[2]), 1);
	assert_int_equal(tp_slice_depth(t, &t->slices[3]),
	                 0); /* starts exactly at the parent's end */
	assert_int_equal(p->span_begin_ns, 10);
	assert_int_equal(p->span_end_ns, 120);
	assert_int_equal(tp_profile_slice_count(p), 4);
	tp_profile_free(p);
}

static void test_args_and_meta(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	uint32_t none = tp_args_begin(p);
	(void)none;
	assert_int_equal(tp_args_end(p), 0); /* empty set -> 0 */
	tp_args_begin(p);
	tp_args_add_str(p, "in0.shape", "[1,3,224,224]");
	tp_args_add_int(p, "flops", -5);
	uint32_t id = tp_args_end(p);
	assert_int_equal(id, 1);
	size_t n;
	const struct tp_arg *a = tp_args_get(p, id, &n);
	assert_int_equal(n, 2);
	assert_string_equal(tp_str(p, a[0].key), "in0.shape");
	assert_string_equal(tp_str(p, a[0].v.s), "[1,3,224,224]");
	assert_int_equal(a[1].v.i, -5);
	assert_null(tp_args_get(p, 0, &n));
	tp_profile_set_meta(p, "arch", "BM1688");
	tp_profile_set_meta(p, "arch", "BM1684X");
	assert_string_equal(tp_profile_get_meta(p, "arch"), "BM1684X");
	assert_int_equal(p->num_meta, 1);
	assert_null(tp_profile_get_meta(p, "missing"));
	tp_profile_free(p);
}

/* Numbers out of arguments of every type: saturation at the int64 range, truncation toward
 * zero, strings as 0 (integer) or as the number they start with (double). */
/* The capture keys are the ids of the strings the profile holds, 0 for the others. */
static void test_cap_keys(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	uint32_t op = tp_profile_str(p, TP_CAP_TYPE_OP),
	         warm = tp_profile_str(p, TP_CAP_KEY_WARMUP);
	uint32_t cut = tp_profile_str(p, TP_CAP_KEY_CUT);
	struct tp_cap_keys k;
	memset(&k, 0xff, sizeof k);
	tp_cap_keys_of(p, &k);
	assert_true(op && warm && cut);
	assert_int_equal(k.ty_op, op);
	assert_int_equal(k.k_warm, warm);
	assert_int_equal(k.k_cut, cut);
	assert_int_equal(k.ty_step, 0);
	assert_int_equal(k.k_flops, 0);
	tp_profile_free(p);
}

static void test_arg_numbers(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	tp_args_begin(p);
	tp_args_add_int(p, "i", -5);
	tp_args_add_uint(p, "u", UINT64_MAX);
	tp_args_add_real(p, "r", -2.75);
	tp_args_add_real(p, "big", 1e30);
	tp_args_add_real(p, "nan", 0.0 / 0.0);
	tp_args_add_str(p, "pct", "74.9%");
	tp_args_add_str(p, "text", "n/a");
	size_t n;
	const struct tp_arg *a = tp_args_get(p, tp_args_end(p), &n);
	assert_int_equal(n, 7);
	assert_true(tp_arg_as_i64(&a[0]) == -5);
	assert_true(tp_arg_as_i64(&a[1]) == INT64_MAX);
	assert_true(tp_arg_as_i64(&a[2]) == -2);
	assert_true(tp_arg_as_i64(&a[3]) == INT64_MAX);
	assert_true(tp_arg_as_i64(&a[4]) == 0);
	assert_true(tp_arg_as_i64(&a[5]) == 0);
	double d = -1;
	assert_int_equal(tp_arg_as_double(p, &a[0], &d), 1);
	assert_true(d == -5.0);
	assert_int_equal(tp_arg_as_double(p, &a[1], &d), 1);
	assert_true(d == 18446744073709551615.0);
	assert_int_equal(tp_arg_as_double(p, &a[2], &d), 1);
	assert_true(d == -2.75);
	assert_int_equal(tp_arg_as_double(p, &a[5], &d), 1);
	assert_true(d == 74.9);
	assert_int_equal(tp_arg_as_double(p, &a[6], &d), 0);
	assert_true(d == 0);
	tp_profile_free(p);
}

static void test_cycle_conversion(void **state)
{
	(void)state;
	/* R: TIU record 0 start 452 437 360 at 900 MHz -> 502 708 177 ns (truncated). */
	assert_int_equal(tp_cycles_to_ns(452437360, 900), 502708177);
	assert_int_equal(tp_cycles_to_ns(100, 0), 0);
	assert_int_equal(tp_ns_to_cycles(1000, 750), 750);
	assert_int_equal(tp_ns_to_cycles(1, 900), 0);
	/* Exact conversion: 1850301 cycles at 900 MHz are 2055890 ns, as on the
	 * vendor's timeline; the truncated float division gives 2055889. */
	assert_int_equal(tp_cycles_to_ns_exact(1850301, 900), 2055890);
	assert_int_equal(tp_cycles_to_ns(1850301, 900), 2055889);
	assert_int_equal(tp_cycles_to_ns_exact(452437360, 900), 502708177);
	assert_int_equal(tp_cycles_to_ns_exact(100, 0), 0);
	/* Against integer rationals: 900 MHz = ×10/9, 750 = ×4/3, 937.5 = ×16/15, 1000 = ×1. */
	uint64_t x = 12345;
	for (int i = 0; i < 100000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t c = (x >> 20) & ((1ull << 40) - 1);
		assert_int_equal(tp_cycles_to_ns_exact(c, 900), c * 10 / 9);
		assert_int_equal(tp_cycles_to_ns_exact(c, 750), c * 4 / 3);
		assert_int_equal(tp_cycles_to_ns_exact(c, 937.5), c * 16 / 15);
		assert_int_equal(tp_cycles_to_ns_exact(c, 1000), c);
	}
	/* Both sides of the one-division path's limit (cycles·10^6 <= INT64_MAX), and a clock
	 * change between calls of one thread (the per-thread kHz cache). */
	for (uint64_t c = (uint64_t)INT64_MAX / 1000000u - 2;
	     c < (uint64_t)INT64_MAX / 1000000u + 3; c++) {
		assert_int_equal(tp_cycles_to_ns_exact(c, 900), c * 10 / 9);
		/* 1 kHz: cycles·10^6 ns, saturated past INT64_MAX */
		assert_int_equal(tp_cycles_to_ns_exact(c, 0.001),
		                 c <= (uint64_t)INT64_MAX / 1000000u ? c * 1000000u
		                                                     : (uint64_t)INT64_MAX);
	}
	assert_int_equal(tp_cycles_to_ns_exact(1850301, 900), 2055890);
	/* No overflow at the top of the range: 2^63 cycles at 1000 MHz is past INT64_MAX ns. */
	assert_int_equal(tp_cycles_to_ns_exact(UINT64_MAX, 1000), INT64_MAX);
	assert_int_equal(tp_cycles_to_ns_exact(9000000000000000000ull, 900), INT64_MAX);
	assert_string_equal(tp_arch_name(tp_arch_from_name("a2")), "BM1688");
	assert_string_equal(tp_dir_name(TP_DIR_LMEM_TO_DDR), "LMEM->DDR");
	assert_true(tp_dir_writes_ddr(TP_DIR_LMEM_TO_DDR));
	assert_false(tp_dir_reads_ddr(TP_DIR_LMEM_TO_DDR));
}

/* Costs stay with their slices when finish sorts a track; slices pushed after the last cost
 * entry read as not modelled. */
static void test_cost_follows_sort(void **state)
{
	(void)state;
	int t;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_TIU, "TIU", 1000, &t);
	const int64_t starts[3] = {30, 10, 20};
	for (int k = 0; k < 3; k++) {
		struct tp_slice *s = tp_track_push(p, t);
		s->start_ns = starts[k];
		tp_slice_set_end(p, &p->tracks[t], s, starts[k] + 5);
		s->cmd_id = (uint32_t)k + 1;
		if (k < 2) {
			struct tp_cost c = {.alg_ops = 100u * ((uint64_t)k + 1), .valid = 1};
			assert_int_equal(tp_track_set_cost(p, t, (size_t)k, &c), TP_OK);
		}
	}
	struct tp_cost c = {.valid = 1};
	assert_int_equal(tp_track_set_cost(p, t, 3, &c), TP_ERANGE); /* past the end */
	assert_int_equal(tp_profile_finish(p), TP_OK);
	const struct tp_track *tr = &p->tracks[t];
	assert_non_null(tr->cost);
	assert_int_equal(tr->slices[0].cmd_id, 2);
	assert_int_equal(tp_track_get_cost(tr, 0, &c), 1);
	assert_int_equal(c.alg_ops, 200);
	assert_int_equal(tr->slices[1].cmd_id, 3);
	assert_int_equal(tp_track_get_cost(tr, 1, &c), 0);
	assert_int_equal(c.alg_ops, 0);
	assert_int_equal(tr->slices[2].cmd_id, 1);
	assert_int_equal(tp_track_get_cost(tr, 2, &c), 1);
	assert_int_equal(c.alg_ops, 100);
	assert_int_equal(tp_track_get_cost(tr, 3, &c), 0); /* past the end reads as none */
	/* Equal entries share one dictionary entry, also when set after finish. */
	assert_int_equal(tr->num_cost_dict, 2);
	struct tp_cost c200 = {.alg_ops = 200, .valid = 1};
	assert_int_equal(tp_track_set_cost(p, t, 1, &c200), TP_OK);
	assert_int_equal(tr->num_cost_dict, 2);
	assert_int_equal(tp_track_get_cost(tr, 1, &c), 1);
	assert_int_equal(c.alg_ops, 200);
	struct tp_cost c7 = {.alg_ops = 7, .valid = 1};
	assert_int_equal(tp_track_set_cost(p, t, 2, &c7), TP_OK);
	assert_int_equal(tr->num_cost_dict, 3);
	assert_int_equal(tp_track_get_cost(tr, 2, &c), 1);
	assert_int_equal(c.alg_ops, 7);
	assert_int_equal(tp_track_get_cost(tr, 0, &c), 1);
	assert_int_equal(c.alg_ops, 200);
	tp_profile_free(p);
}

/* The LOCAL memory records a reader keeps per slice (model/lmemrec.h) come back packed as set,
 * follow their slice through the sort, and slices pushed after the last set have none. */
static void test_lmem_follows_sort(void **state)
{
	(void)state;
	int t;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_TIU, "TIU", 1000, &t);
	const int64_t starts[4] = {30, 10, 20, 5};
	struct tp_lmem_cmd_rec r[TP_LMEM_CMD_RECS] = {
	    {.lane_offset = 131071, .bytes = 0x7FFFFFFF, .write = 1},
	    {.lane_offset = 0, .bytes = 1, .write = 0},
	    {.lane_offset = 4096, .bytes = 65536, .write = 0}};
	for (int k = 0; k < 4; k++) {
		struct tp_slice *s = tp_track_push(p, t);
		s->start_ns = starts[k];
		tp_slice_set_end(p, &p->tracks[t], s, starts[k] + 5);
		s->cmd_id = (uint32_t)k + 1;
		/* cmd 1: all three records, cmd 2: none, cmd 3: the last one; cmd 4 after them */
		if (k == 0)
			assert_int_equal(tp_track_set_lmem(p, t, 0, r, 3), TP_OK);
		if (k == 2)
			assert_int_equal(tp_track_set_lmem(p, t, 2, r + 2, 1), TP_OK);
	}
	assert_int_equal(tp_track_set_lmem(p, t, 4, r, 1), TP_ERANGE); /* past the end */
	assert_int_equal(tp_track_set_lmem(p, t, 1, r, 4), TP_ERANGE); /* too many */
	assert_int_equal(tp_profile_finish(p), TP_OK);
	const struct tp_track *tr = &p->tracks[t];
	assert_int_equal(tr->num_lmem_recs, 4);
	struct tp_lmem_cmd_rec g[TP_LMEM_CMD_RECS];
	for (size_t i = 0; i < tr->count; i++) {
		unsigned n = tp_track_get_lmem(tr, i, g);
		switch (tr->slices[i].cmd_id) {
		case 1:
			assert_int_equal(n, 3);
			for (unsigned k = 0; k < 3; k++) {
				assert_int_equal(g[k].lane_offset, r[k].lane_offset);
				assert_int_equal(g[k].bytes, r[k].bytes);
				assert_int_equal(g[k].write, r[k].write);
			}
			break;
		case 3:
			assert_int_equal(n, 1);
			assert_int_equal(g[0].lane_offset, 4096);
			assert_int_equal(g[0].bytes, 65536);
			break;
		default:
			assert_int_equal(n, 0);
		}
	}
	assert_int_equal(tr->slices[0].cmd_id, 4);
	tp_profile_free(p);
}

static uint64_t rnd(uint64_t *x)
{
	*x = *x * 6364136223846793005u + 1442695040888963407u;
	return *x >> 33;
}

/* The packed cost entries give back exactly what was stored, at and past each field's packed
 * width (those go to the side array), and a shuffled track is sorted by (start, -end,
 * start_cycle, cmd_id) with equal slices in push order and every cost with its slice. */
static void test_cost_pack_and_sort(void **state)
{
	(void)state;
	int t;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_TIU, "TIU", 1000, &t);
	enum { N = 5000 };
	uint64_t x = 7;
	/* Each slice's cost by push order, kept as set (the array widens from 1 to 2 bytes per
	 * entry on the way: every entry must survive it). */
	struct tp_cost *want = calloc(N, sizeof *want);
	assert_non_null(want);
	for (int k = 0; k < N; k++) {
		struct tp_slice *s = tp_track_push(p, t);
		s->start_ns = (int64_t)(rnd(&x) % 50);
		tp_slice_set_end(p, &p->tracks[t], s, s->start_ns + (int64_t)(rnd(&x) % 3));
		s->cmd_id = (uint32_t)(rnd(&x) % 4); /* many slices equal on every sort key */
		s->args = (uint32_t)k;               /* push order, to check stability */
		const uint64_t lim[] = {(uint64_t)1 << 40, (uint64_t)1 << 40, (uint64_t)1 << 32,
		                        256, 64};
		uint64_t v[5];
		for (int f = 0; f < 5; f++) {
			uint64_t r = rnd(&x) % 8;
			/* 0: zero, 1: the largest packed, 2: the first unpacked, 3: the largest
			 * value, */
			v[f] = r == 0   ? 0
			       : r == 1 ? lim[f] - 1
			       : r == 2 ? lim[f]
			       : r == 3 ? ~(uint64_t)0
			                : rnd(&x) % lim[f];
		}
		struct tp_cost c = {.alg_ops = v[0],
		                    .uarch_ops = v[1],
		                    .alg_cycle = (uint32_t)v[2],
		                    .init_cycle = (uint32_t)(k % 5 ? v[3] % 256 : v[3]),
		                    .bank_cycle = (uint32_t)(k % 5 ? v[4] % 64 : v[4]),
		                    .valid = (uint8_t)(k % 11 != 0)};
		/* What reading gives back: the ratios derived from the slice's cycles. */
		tp_cost_ratios(&c, p->tracks[t].slices[k].cycles);
		if (k % 7 != 6) {
			assert_int_equal(tp_track_set_cost(p, t, (size_t)k, &c), TP_OK);
			want[k] = c;
		}
		struct tp_cost back;
		assert_int_equal(tp_track_get_cost(&p->tracks[t], (size_t)k, &back),
		                 k % 7 != 6 ? c.valid : 0);
		if (k % 7 != 6)
			assert_memory_equal(&back, &c, sizeof c);
	}
	assert_true(p->tracks[t].num_cost_big > 0);
	assert_int_equal(p->tracks[t].cost_width, 2); /* over 255 entries, under 65536 */
	assert_int_equal(tp_profile_finish(p), TP_OK);
	const struct tp_track *tr = &p->tracks[t];
	assert_int_equal(tr->count, N);
	for (size_t k = 0; k < N; k++) {
		const struct tp_slice *s = &tr->slices[k];
		if (k) {
			const struct tp_slice *a = &tr->slices[k - 1];
			int ord = a->start_ns != s->start_ns ? a->start_ns < s->start_ns
			          : tp_slice_end(tr, a) != tp_slice_end(tr, s)
			              ? tp_slice_end(tr, a) > tp_slice_end(tr, s)
			          : a->cmd_id != s->cmd_id ? a->cmd_id < s->cmd_id
			                                   : a->args < s->args;
			assert_true(ord);
		}
		struct tp_cost c;
		tp_track_get_cost(tr, k, &c);
		assert_memory_equal(&c, &want[s->args], sizeof c);
	}
	free(want);
	tp_profile_free(p);
}

/* The per-slice cost ids take 1 byte while the dictionary has at most 255 entries, then 2,
 * then 4; every entry reads back through each widening and through the sort. */
/* The ratios a cost entry reads back with are the vendor's, from the entry's figures and the
 * slice's Asic Cycle (sophgo-costmodel.md §3): the BM1688 reference commands print "9.3%" /
 * "0.0%" (CONV, ref cmd 0) and "12.5%" (sMM, cmd 192). Packed and whole ("big") entries give
 * the same numbers; the figures' text under TP_KEY_* is what a reader writes from them. */
static void test_cost_ratios(void **state)
{
	(void)state;
	int t;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_TIU, "TIU", 900, &t);
	static const struct {
		uint64_t alg, uarch;
		uint32_t init, bank, cycles;
	} v[] = {
	    {235225088, 2516828160u, 23, 0, 312031},               /* CONV */
	    {131072, 1048576, 32, 3, 200},                         /* sMM */
	    {(uint64_t)1 << 41, (uint64_t)1 << 42, 300, 70, 1000}, /* kept whole */
	    {5, 0, 0, 0, 0},                                       /* no uArch ops, no cycles */
	};
	size_t n = sizeof v / sizeof *v;
	for (size_t i = 0; i < n; i++) {
		struct tp_slice *s = tp_track_push(p, t);
		s->start_ns = (int64_t)i * 10;
		s->cycles = v[i].cycles;
		tp_slice_set_end(p, &p->tracks[t], s, s->start_ns + 5);
		struct tp_cost c = {.alg_ops = v[i].alg,
		                    .uarch_ops = v[i].uarch,
		                    .init_cycle = v[i].init,
		                    .bank_cycle = v[i].bank,
		                    .valid = 1,
		                    .uarch_rate = 7, /* ignored: derived on reading */
		                    .init_ratio = 7};
		assert_int_equal(tp_track_set_cost(p, t, i, &c), TP_OK);
	}
	tp_track_push(p, t)->start_ns = 1000; /* a slice without cost, last */
	assert_int_equal(tp_profile_finish(p), TP_OK);
	const struct tp_track *tr = &p->tracks[t];
	assert_int_equal(tr->num_cost_big, 1);
	struct tp_cost c;
	char buf[32];
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(tp_track_get_cost(tr, i, &c), 1);
		double asic = (double)v[i].cycles + 1e-4;
		assert_true(c.uarch_rate ==
		            (v[i].uarch ? (double)v[i].alg / (double)v[i].uarch : 0));
		assert_true(c.init_ratio == (double)v[i].init / asic);
		assert_true(c.bank_ratio == (double)v[i].bank / asic);
	}
	assert_int_equal(tp_track_get_cost(tr, 0, &c), 1);
	snprintf(buf, sizeof buf, "%.1f%%", c.uarch_rate * 100.0);
	assert_string_equal(buf, "9.3%");
	snprintf(buf, sizeof buf, "%.1f%%", c.init_ratio * 100.0);
	assert_string_equal(buf, "0.0%");
	tp_track_get_cost(tr, 1, &c);
	snprintf(buf, sizeof buf, "%.1f%%", c.uarch_rate * 100.0);
	assert_string_equal(buf, "12.5%");
	snprintf(buf, sizeof buf, "%.1f%%", c.bank_ratio * 100.0);
	assert_string_equal(buf, "1.5%");
	assert_int_equal(tp_track_get_cost(tr, n, &c), 0);
	assert_true(c.uarch_rate == 0 && c.init_ratio == 0 && c.bank_ratio == 0);
	/* tp_cost_ratios gives a reader the same numbers before the entry is stored. */
	struct tp_cost k = {
	    .alg_ops = 131072, .uarch_ops = 1048576, .init_cycle = 32, .bank_cycle = 3, .valid = 1};
	tp_cost_ratios(&k, 200);
	tp_track_get_cost(tr, 1, &c);
	assert_memory_equal(&k, &c, sizeof k);
	/* The reference spellings a reader files them under. */
	tp_args_begin(p);
	snprintf(buf, sizeof buf, "%.1f%%", k.uarch_rate * 100.0);
	tp_args_add_str(p, TP_KEY_UARCH_RATE, buf);
	uint32_t args = tp_args_end(p);
	double d;
	assert_int_equal(
	    tp_arg_as_double(p, tp_args_find(p, args, tp_profile_find_str(p, "uArch Rate")), &d),
	    1);
	assert_true(d == 12.5);
	tp_profile_free(p);
}

static void test_cost_width(void **state)
{
	(void)state;
	int t;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_TIU, "TIU", 1000, &t);
	enum { N = 140000 }; /* about 75000 distinct entries */
	for (uint32_t k = 0; k < N; k++) {
		struct tp_slice *s = tp_track_push(p, t);
		s->start_ns = N - k; /* reversed: the sort moves every slice */
		s->cmd_id = k;
		tp_slice_set_end(p, &p->tracks[t], s, s->start_ns + 1);
		struct tp_cost c = {.alg_ops = k % 3 ? k : 0,
		                    .valid = 1}; /* k % 3 == 0 share one */
		if (k % 5 != 4)
			assert_int_equal(tp_track_set_cost(p, t, k, &c), TP_OK);
		/* Distinct entries so far: about 8/15 of k, plus the shared one. */
		if (k == 300)
			assert_int_equal(p->tracks[t].cost_width, 1);
		if (k == 600)
			assert_int_equal(p->tracks[t].cost_width, 2);
	}
	assert_int_equal(p->tracks[t].cost_width, 4);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	const struct tp_track *tr = &p->tracks[t];
	for (size_t i = 0; i < N; i++) {
		uint32_t k = tr->slices[i].cmd_id;
		assert_int_equal(k, N - 1 - i);
		struct tp_cost c;
		assert_int_equal(tp_track_get_cost(tr, i, &c), k % 5 != 4);
		assert_true(c.alg_ops == (k % 5 != 4 && k % 3 ? k : 0));
	}
	tp_profile_free(p);
}

/* Vendor rows: appended zeroed with their core, named once; --num_core drops the rows of the
 * dropped cores with their tracks. */
static void test_vendor_rows(void **state)
{
	(void)state;
	int tiu[3];
	struct tp_profile *p = tp_test_cores("d", 3, TP_TRACK_TIU, 1000, tiu);
	for (int32_t c = 0; c < 3; c++) {
		struct tp_slice *s = tp_track_push(p, tiu[c]);
		tp_slice_set_end(p, &p->tracks[tiu[c]], s, 10 * (c + 1));
		struct tp_vendor_row *v = tp_profile_vendor_row(p, "tool.py", 0, c);
		assert_non_null(v);
		assert_int_equal(v->tiu_cycle, 0);
		v->total_time_ns = 100 + c;
	}
	assert_int_equal(p->vendor.num_rows, 3);
	assert_string_equal(tp_str(p, p->vendor.tool), "tool.py");
	assert_int_equal(tp_profile_drop_cores(p, 2), 1);
	assert_int_equal(p->vendor.num_rows, 2);
	assert_int_equal(p->vendor.rows[1].core, 1);
	assert_int_equal(p->vendor.rows[1].total_time_ns, 101);
	tp_profile_free(p);
	p = tp_profile_new(); /* the first row allocates: out of memory is sticky */
	tp_alloc_fail_after(0);
	assert_null(tp_profile_vendor_row(p, "tool.py", 0, 0));
	tp_alloc_fail_after(-1);
	assert_int_equal(p->vendor.num_rows, 0);
	tp_test_finish_oom(p);
}

static void test_oom_is_reported(void **state)
{
	(void)state;
	int tr;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_TIU, NULL, 900, &tr);
	tp_alloc_fail_after(0);
	assert_null(tp_track_push(p, tr));
	tp_alloc_fail_after(-1);
	tp_test_finish_oom(p);
}

/* Strings longer than TP_PROFILE_MAX_STR are cut where they enter the model: on a character
 * boundary (never inside a multi-byte character, also one that UTF-8 repair made), ending in
 * the mark, at most TP_PROFILE_MAX_STR bytes; counted once per distinct cut string; noted once
 * by tp_profile_finish, the note updated by a later finish. Strings up to the limit are kept. */
static void test_long_strings_cut(void **state)
{
	(void)state;
	enum { MAX = TP_PROFILE_MAX_STR, MARK = sizeof TP_PROFILE_CUT_MARK - 1 };
	size_t n = 4 * (size_t)MAX;
	char *big = malloc(n + 1);
	assert_non_null(big);
	/* "a" then 3-byte euros: the cut at MAX - MARK bytes falls inside a euro. */
	big[0] = 'a';
	for (size_t i = 1; i + 3 <= n; i += 3)
		memcpy(big + i, "\xe2\x82\xac", 3);
	size_t used = 1 + (n - 1) / 3 * 3;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	uint32_t id = tp_profile_strn(p, big, used);
	const char *s = tp_str(p, id);
	size_t len = strlen(s), keep = 1 + (MAX - MARK - 1) / 3 * 3;
	assert_true(len <= MAX);
	assert_int_equal(len, keep + MARK);
	assert_memory_equal(s, big, keep);
	assert_string_equal(s + keep, TP_PROFILE_CUT_MARK);
	assert_int_equal(p->strs_cut, 1);
	/* The same long string again, and one sharing its cut prefix: the same id, no new cut. */
	assert_int_equal(tp_profile_strn(p, big, used - 3), id);
	assert_int_equal(p->strs_cut, 1);
	/* Exactly MAX bytes is kept whole; invalid bytes that repair grows past MAX are cut. */
	memset(big, 'b', MAX);
	assert_int_equal(strlen(tp_str(p, tp_profile_strn(p, big, MAX))), MAX);
	assert_int_equal(p->strs_cut, 1);
	memset(big, 0xff, MAX / 2); /* each becomes U+FFFD, 3 bytes */
	s = tp_str(p, tp_profile_strn_unique(p, big, MAX / 2));
	len = strlen(s);
	assert_true(len <= MAX && len > MAX - MARK - 3);
	assert_int_equal((len - MARK) % 3, 0);
	assert_string_equal(s + len - MARK, TP_PROFILE_CUT_MARK);
	assert_int_equal(p->strs_cut, 2);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	assert_int_equal(p->num_notes, 1);
	assert_non_null(strstr(tp_str(p, p->notes[0].text), "2 strings longer than 65536 bytes"));
	big[0] = 'c';
	tp_profile_strn(p, big, n);
	tp_profile_note(p, "another note");
	assert_int_equal(tp_profile_finish(p), TP_OK);
	assert_int_equal(p->num_notes, 2);
	assert_non_null(strstr(tp_str(p, p->notes[0].text), "3 strings longer than 65536 bytes"));
	tp_profile_free(p);
	free(big);
}

/* tp_profile_str_ok accepts exactly what add_str keeps as it is (valid UTF-8 up to the limit),
 * and tp_profile_strn_unique_ok then adds the same bytes tp_profile_strn_unique would. */
static void test_str_ok(void **state)
{
	(void)state;
	enum { MAX = TP_PROFILE_MAX_STR };
	char *big = malloc((size_t)MAX + 1);
	assert_non_null(big);
	memset(big, 'x', (size_t)MAX + 1);
	assert_true(tp_profile_str_ok(big, MAX));
	assert_false(tp_profile_str_ok(big, (size_t)MAX + 1));
	assert_true(tp_profile_str_ok("caf\xc3\xa9", 5));
	assert_false(tp_profile_str_ok("caf\xc3", 4));
	assert_false(tp_profile_str_ok("\xff", 1));
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	uint32_t a = tp_profile_strn_unique_ok(p, "conv_1\xc3\xa9", 8);
	uint32_t b = tp_profile_strn_unique(p, "conv_1\xc3\xa9", 8);
	assert_true(a && b && a != b); /* unique: not de-duplicated */
	assert_string_equal(tp_str(p, a), tp_str(p, b));
	assert_int_equal(p->strs_cut, 0);
	tp_profile_free(p);
	free(big);
}

/* Labels: equal labels share one id, a setter changes one field of one slice only, the
 * table grows past its first hash, and an allocation failure leaves the slice as it was. */
static void test_labels(void **state)
{
	(void)state;
	int tr;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_GDMA, NULL, 1000, &tr);
	struct tp_track *t = &p->tracks[tr];
	struct tp_slice *s[3];
	for (int i = 0; i < 3; i++)
		s[i] = tp_track_push(p, tr);
	assert_int_equal(tp_slice_name(t, s[0]), 0); /* pushed: the all-zero label */
	assert_int_equal(tp_slice_kind(t, s[0]), TP_CMD_NORMAL);
	struct tp_label l = {.name = tp_profile_str(p, "tensorLd"),
	                     .type = tp_profile_str(p, "DMA"),
	                     .kind = TP_CMD_SYS,
	                     .dir = TP_DIR_DDR_TO_LMEM,
	                     .dtype = TP_DT_INT8};
	assert_int_equal(tp_slice_set_label(p, t, s[0], &l), TP_OK);
	assert_int_equal(tp_slice_set_label(p, t, s[1], &l), TP_OK);
	assert_int_equal(s[0]->label, s[1]->label);
	assert_int_equal(tp_slice_set_stall(p, t, s[0], 7), TP_OK);
	assert_int_not_equal(s[0]->label, s[1]->label);
	assert_int_equal(tp_slice_stall(t, s[0]), 7);
	assert_int_equal(tp_slice_stall(t, s[1]), 0);
	assert_int_equal(tp_slice_set_label(p, t, s[2], tp_slice_label(t, s[1])), TP_OK);
	assert_int_equal(tp_slice_set_name(p, t, s[2], tp_profile_str(p, "tensorSt")), TP_OK);
	assert_string_equal(tp_str(p, tp_slice_name(t, s[2])), "tensorSt");
	assert_string_equal(tp_str(p, tp_slice_name(t, s[1])), "tensorLd");
	assert_string_equal(tp_str(p, tp_slice_type(t, s[2])), "DMA");
	assert_int_equal(tp_slice_kind(t, s[2]), TP_CMD_SYS);
	assert_int_equal(tp_slice_dir(t, s[2]), TP_DIR_DDR_TO_LMEM);
	assert_int_equal(tp_slice_dtype(t, s[2]), TP_DT_INT8);
	assert_int_equal(t->num_labels, 4); /* zero, l, l + stall 7, l named tensorSt */
	/* 1000 distinct stalls: the hash is rebuilt several times, every label reads back. */
	for (uint32_t i = 0; i < 1000; i++) {
		struct tp_slice *x = tp_track_push(p, tr);
		assert_int_equal(tp_slice_set_stall(p, &p->tracks[tr], x, 1000 + i), TP_OK);
	}
	t = &p->tracks[tr];
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(tp_slice_stall(t, &t->slices[3 + i]), 1000 + i);
	assert_int_equal(t->num_labels, 1004);
	/* Out of memory on a new label (the first one that needs the table to grow): reported,
	 * sticky, the slice keeps its label. */
	struct tp_slice *y = &t->slices[0];
	uint32_t before = y->label, v = 5000;
	int rc = TP_OK;
	tp_alloc_fail_after(0);
	while (rc == TP_OK && v < 100000)
		rc = tp_slice_set_stall(p, t, y, v++);
	tp_alloc_fail_after(-1);
	assert_int_equal(rc, TP_ENOMEM);
	assert_int_equal(tp_slice_stall(t, y), v - 2); /* the last one that fitted */
	assert_int_not_equal(y->label, before);
	assert_int_equal(p->oom, 1);
	tp_test_finish_oom(p);
}

/* Durations: exact at and past the 2^31 ns inline limit, negative and up to INT64_MAX ends;
 * the end moves with the start; the sort orders equal starts by the exact end. */
static void test_long_durations(void **state)
{
	(void)state;
	int tr;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_HOST, "h", 0, &tr);
	const int64_t lim = INT64_C(0x80000000);
	struct {
		int64_t start, end;
		int escaped;
	} c[] = {
	    {0, lim - 1, 0},   {5, 5 + lim, 1}, {-10, INT64_MAX, 1},
	    {INT64_MIN, 0, 1}, {100, 50, 1},    {7, 7, 0},
	};
	size_t n = sizeof c / sizeof *c;
	for (size_t i = 0; i < n; i++) {
		struct tp_slice *s = tp_track_push(p, tr);
		s->start_ns = c[i].start;
		assert_int_equal(tp_slice_set_end(p, &p->tracks[tr], s, c[i].end), TP_OK);
	}
	struct tp_track *t = &p->tracks[tr];
	for (size_t i = 0; i < n; i++) {
		assert_true(tp_slice_end(t, &t->slices[i]) == c[i].end);
		assert_int_equal(!!(t->slices[i].dur & TP_SLICE_LONG_DUR), c[i].escaped);
	}
	assert_true(tp_slice_dur(t, &t->slices[4]) == -50);
	/* Moving the start moves the end, inline or not. */
	t->slices[1].start_ns += 1000;
	assert_true(tp_slice_end(t, &t->slices[1]) == 1005 + lim);
	t->slices[0].start_ns -= 1;
	assert_true(tp_slice_end(t, &t->slices[0]) == lim - 2);
	/* Re-setting a long end to a short one goes back inline. */
	assert_int_equal(tp_slice_set_end(p, t, &t->slices[4], 150), TP_OK);
	assert_int_equal(t->slices[4].dur, 50);
	/* Out of memory on a new long entry (the first one that needs the table to grow):
	 * reported, sticky, the slice keeps its end. */
	int rc = TP_OK;
	int64_t e = 7 + 3 * lim;
	tp_alloc_fail_after(0);
	while (rc == TP_OK && e < 1000 * lim)
		rc = tp_slice_set_end(p, t, &t->slices[5], e += lim);
	tp_alloc_fail_after(-1);
	assert_int_equal(rc, TP_ENOMEM);
	assert_true(tp_slice_end(t, &t->slices[5]) == e - lim);
	assert_int_equal(p->oom, 1);
	tp_profile_free(p);

	/* Equal starts sort by end descending, ends past 2^31 ns included. */
	p = tp_test_one_track("d", TP_TRACK_THREAD, "main", 0, &tr);
	int64_t ends[] = {10, 3 * lim, 20, 5 * lim, lim};
	for (uint32_t i = 0; i < 5; i++) {
		struct tp_slice *s = tp_track_push(p, tr);
		s->cmd_id = i;
		tp_slice_set_end(p, &p->tracks[tr], s, ends[i]);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	t = &p->tracks[tr];
	uint32_t want[] = {3, 1, 4, 2, 0};
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(t->slices[i].cmd_id, want[i]);
		assert_true(tp_slice_end(t, &t->slices[i]) == ends[want[i]]);
		assert_int_equal(tp_slice_depth(t, &t->slices[i]),
		                 i); /* each inside the previous */
	}
	assert_true(p->span_end_ns == 5 * lim);
	tp_profile_free(p);
}

/* tp_profile_finish drops the labels no slice uses (here "x", replaced, and the depth-0
 * label of a nested slice) and renumbers the rest; label 0 stays the all-zero one. */
static void test_labels_compact(void **state)
{
	(void)state;
	int tr;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_THREAD, "main", 0, &tr);
	struct tp_slice *a = tp_track_push(p, tr);
	tp_slice_set_end(p, &p->tracks[tr], a, 100);
	tp_slice_set_name(p, &p->tracks[tr], a, tp_profile_str(p, "x"));
	tp_slice_set_name(p, &p->tracks[tr], a, tp_profile_str(p, "y"));
	struct tp_slice *b = tp_track_push(p, tr); /* inside a, keeps the zero label */
	b->start_ns = 10;
	tp_slice_set_end(p, &p->tracks[tr], b, 20);
	struct tp_slice *c = tp_track_push(p, tr); /* inside a, named "z" */
	c->start_ns = 30;
	tp_slice_set_end(p, &p->tracks[tr], c, 40);
	tp_slice_set_name(p, &p->tracks[tr], c, tp_profile_str(p, "z"));
	struct tp_slice *e = tp_track_push(p, tr); /* after a, depth 0: keeps label 0 */
	e->start_ns = 200;
	tp_slice_set_end(p, &p->tracks[tr], e, 210);
	assert_int_equal(p->tracks[tr].num_labels, 4); /* zero, x, y, z */
	assert_int_equal(tp_profile_finish(p), TP_OK);
	const struct tp_track *t = &p->tracks[tr];
	/* zero; y; depth 1 zero (b); depth 1 z (c): "x" and depth 0 "z" are gone */
	assert_int_equal(t->num_labels, 4);
	assert_string_equal(tp_str(p, tp_slice_name(t, &t->slices[0])), "y");
	assert_int_equal(tp_slice_name(t, &t->slices[1]), 0);
	assert_int_equal(tp_slice_depth(t, &t->slices[1]), 1);
	assert_string_equal(tp_str(p, tp_slice_name(t, &t->slices[2])), "z");
	assert_int_equal(tp_slice_depth(t, &t->slices[2]), 1);
	assert_int_equal(t->slices[3].label, 0);
	for (uint32_t i = 1; i < t->num_labels; i++)
		assert_true(t->labels[i].name || t->labels[i].depth); /* only label 0 is all zero */
	assert_null(t->label_slots);
	/* A label added after finish still interns (the hash is rebuilt). */
	struct tp_slice *d = tp_track_push(p, tr);
	assert_int_equal(tp_slice_set_name(p, &p->tracks[tr], d, tp_profile_str(p, "y")), TP_OK);
	assert_int_equal(d->label, p->tracks[tr].slices[0].label);
	tp_profile_free(p);
}

/* Start cycles keep their high half in the label: exact at, below and past 2^32 (and at
 * UINT64_MAX), a label per distinct high half, not per slice; the DMA size lives in the label
 * too; equal start and end times sort by the full start cycle; tp_slice_end_cycle adds the
 * cycles across the 2^32 boundary. */
static void test_start_cycle_and_bytes(void **state)
{
	(void)state;
	int tr;
	struct tp_profile *p = tp_test_one_track("d", TP_TRACK_GDMA, "GDMA", 1000, &tr);
	const uint64_t hi = UINT64_C(1) << 32;
	uint64_t cyc[] = {hi + 5, 7, hi - 1, 3 * hi + 2, hi, UINT64_MAX, 3 * hi + 1, 0};
	size_t n = sizeof cyc / sizeof *cyc;
	for (size_t i = 0; i < n; i++) {
		struct tp_slice *s = tp_track_push(p, tr);
		s->cmd_id = (uint32_t)i;
		s->cycles = 10;
		tp_slice_set_end(p, &p->tracks[tr], s, 100); /* all equal: the cycle decides */
		assert_int_equal(tp_slice_set_bytes(p, &p->tracks[tr], s, i % 2 ? 4096 : 512),
		                 TP_OK);
		assert_int_equal(tp_slice_set_start_cycle(p, &p->tracks[tr], s, cyc[i]), TP_OK);
	}
	struct tp_track *t = &p->tracks[tr];
	for (size_t i = 0; i < n; i++) {
		assert_true(tp_slice_start_cycle(t, &t->slices[i]) == cyc[i]);
		assert_int_equal(tp_slice_bytes(t, &t->slices[i]), i % 2 ? 4096 : 512);
	}
	assert_true(tp_slice_end_cycle(t, &t->slices[2]) == hi + 8);
	/* Labels once compacted: the zero one and the (bytes, high half) pairs that occur. */
	assert_int_equal(tp_profile_finish(p), TP_OK);
	t = &p->tracks[tr];
	uint32_t want[] = {7, 1, 2, 4, 0, 6, 3, 5}; /* cmd ids by start cycle */
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(t->slices[i].cmd_id, want[i]);
		assert_true(tp_slice_start_cycle(t, &t->slices[i]) == cyc[want[i]]);
	}
	/* zero, (512, 0) (4096, 0) (512, 1) (4096, 3) (512, 3) (4096, 2^32 - 1) */
	assert_int_equal(t->num_labels, 7);
	/* Thousands of slices over a few high halves and sizes: the label table stays small. */
	for (uint32_t i = 0; i < 5000; i++) {
		struct tp_slice *s = tp_track_push(p, tr);
		assert_int_equal(tp_slice_set_bytes(p, &p->tracks[tr], s, 1024u << (i % 3)), TP_OK);
		assert_int_equal(tp_slice_set_start_cycle(p, &p->tracks[tr], s, i * (hi / 1000)),
		                 TP_OK);
	}
	t = &p->tracks[tr];
	for (uint32_t i = 0; i < 5000; i++) {
		assert_true(tp_slice_start_cycle(t, &t->slices[n + i]) == i * (hi / 1000));
		assert_int_equal(tp_slice_bytes(t, &t->slices[n + i]), 1024u << (i % 3));
	}
	assert_true(t->num_labels <= 7 + 3 * 5); /* at most high halves 0..4 by three sizes more */
	tp_profile_free(p);
}

/* A profile of five tracks, slices out of order, labels that become unused (compacted) and
 * cost entries on some slices, built the same way twice. */
static struct tp_profile *finish_input(void)
{
	struct tp_profile *p = tp_profile_new();
	int dev = tp_profile_add_device(p, "d", 0, 5);
	uint64_t seed = 11;
	for (int c = 0; c < 5; c++) {
		int t = tp_profile_add_track(p, dev, c, c % 2 ? TP_TRACK_GDMA : TP_TRACK_TIU, NULL,
		                             1000);
		for (int i = 0; i < 3000; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			struct tp_slice *s = tp_track_push(p, t);
			s->start_ns = (int64_t)((seed >> 20) % 100000) + c * 7;
			s->cmd_id = (uint32_t)i + 1;
			tp_slice_set_end(p, &p->tracks[t], s,
			                 s->start_ns + (int64_t)((seed >> 50) % 500));
			char nm[16];
			snprintf(nm, sizeof nm, "n%u", (unsigned)((seed >> 8) % 9));
			/* A first label that a second one replaces: the first becomes unused. */
			tp_slice_set_name(p, &p->tracks[t], s, tp_profile_str(p, "tmp"));
			tp_slice_set_name(p, &p->tracks[t], s, tp_profile_str(p, nm));
			if (c % 2 == 0 && i % 3 == 0) {
				struct tp_cost k = {.alg_ops = (uint64_t)i,
				                    .uarch_ops = (uint64_t)i + 1,
				                    .valid = 1};
				assert_int_equal(tp_track_set_cost(p, t, (size_t)i, &k), TP_OK);
			}
		}
	}
	return p;
}

/* tp_profile_finish_jobs sorts and compacts one track per thread: the profile must be the one
 * a single thread makes (slices, labels, cost entries, span). */
static void test_finish_jobs(void **state)
{
	(void)state;
	struct tp_profile *a = finish_input(), *b = finish_input();
	assert_int_equal(tp_profile_finish(a), TP_OK);
	assert_int_equal(tp_profile_finish_jobs(b, 3), TP_OK);
	assert_int_equal(a->span_begin_ns, b->span_begin_ns);
	assert_int_equal(a->span_end_ns, b->span_end_ns);
	assert_true(a->span_end_ns > a->span_begin_ns);
	assert_int_equal(a->num_tracks, b->num_tracks);
	for (size_t i = 0; i < a->num_tracks; i++) {
		const struct tp_track *x = &a->tracks[i], *y = &b->tracks[i];
		assert_int_equal(x->count, y->count);
		assert_memory_equal(x->slices, y->slices, x->count * sizeof *x->slices);
		for (size_t k = 1; k < x->count; k++)
			assert_true(x->slices[k - 1].start_ns <= x->slices[k].start_ns);
		assert_int_equal(x->num_labels, y->num_labels);
		assert_memory_equal(x->labels, y->labels, x->num_labels * sizeof *x->labels);
		assert_int_equal(x->num_labels, 1 + 9); /* label 0 and the nine names: "tmp" gone */
		for (size_t k = 0; k < x->count; k++) {
			struct tp_cost cx, cy;
			int hx = tp_track_get_cost(x, k, &cx), hy = tp_track_get_cost(y, k, &cy);
			assert_int_equal(hx, hy);
			if (hx)
				assert_memory_equal(&cx, &cy, sizeof cx);
		}
	}
	tp_profile_free(a);
	tp_profile_free(b);
}

#include "tp_test_main.h"
