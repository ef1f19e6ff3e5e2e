/*
 * summary_test.c — layout of summary.txt (reference widths, Overall row in µs, n/a uArch rate)
 * and summary.json well-formedness on a small hand-built profile.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "testutil.h"
#include "writers/summary/summary.h"

#include <stdlib.h>
#include <string.h>

static struct tp_profile *build(void)
{
	struct tp_profile *p = tp_profile_new();
	int dev = tp_profile_add_device(p, "dev", 0, 1);
	int t = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, NULL, 1000);
	int g = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, NULL, 1000);
	struct tp_slice *s = tp_track_push(p, t);
	s->cycles = 1500;
	tp_slice_set_end(p, &p->tracks[t], s, 1499);
	tp_slice_set_name(p, &p->tracks[t], s, tp_profile_str(p, "conv.normal"));
	s = tp_track_push(p, g);
	s->start_ns = 100;
	tp_slice_set_start_cycle(p, &p->tracks[g], s, 100);
	s->cycles = 1000;
	tp_slice_set_end(p, &p->tracks[g], s, 1099);
	tp_slice_set_bytes(p, &p->tracks[g], s, 20000);
	tp_slice_set_dir(p, &p->tracks[g], s, TP_DIR_DDR_TO_LMEM);
	tp_slice_set_name(p, &p->tracks[g], s, tp_profile_str(p, "tensorLd \"quoted\""));
	p->net_name = tp_profile_str(p, "net</script>");
	tp_profile_note(p, "a note");
	tp_profile_finish(p);
	return p;
}

/* The state of the tests that render build()'s profile: it, its analysis and an empty
 * buffer (cmocka setup / teardown). */
struct fx {
	struct tp_profile *p;
	struct tp_analysis a;
	struct tp_buf b;
};

/* An fx holding the finished profile p (its owner from here on) and p's analysis. */
static struct fx *fx_of(struct tp_profile *p)
{
	struct fx *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->p = p;
	tp_buf_init(&f->b);
	assert_int_equal(tp_analyze(p, &f->a), TP_OK);
	return f;
}

static void fx_free(struct fx *f)
{
	tp_buf_free(&f->b);
	tp_analysis_free(&f->a);
	tp_profile_free(f->p);
	free(f);
}

static int fx_setup(void **state)
{
	*state = fx_of(build());
	return 0;
}

static int fx_teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* What render writes: summary.txt, its console form, or summary.json. */
enum form { TEXT_FILE, TEXT_CONSOLE, JSON };

/* Renders f's profile and analysis as `form` into f's buffer (emptied first); returns the
 * text. */
static const char *render(struct fx *f, enum form form)
{
	tp_buf_free(&f->b);
	tp_buf_init(&f->b);
	if (form == JSON)
		tp_summary_json(f->p, &f->a, &f->b);
	else
		tp_summary_text(f->p, &f->a, form == TEXT_CONSOLE, &f->b);
	return f->b.data;
}

static void test_text_layout(void **state)
{
	struct fx *f = *state;
	const char *txt = render(f, TEXT_FILE);
	const char *hdr =
	    " CoreId | Parallelism(%) |  totalTime(us) | TiuWorkingRatio |  totalTiuCycle | "
	    "uArchURate |   totalGdmaCycle | GdmaDdrAvgBW(GB/s) |  GdmaL2AvgBW(GB/s) | "
	    "GdmaAvgDdrBurstLength |   totalSdmaCycle | SdmaDdrAvgBW(GB/s) | "
	    "SdmaAvgDdrBurstLength\n";
	assert_non_null(strstr(txt, hdr));
	/* total 1499 ns; parallelism (1500 + 1000) / 1499; DDR 20000 B / 1000 ns = 20 GB/s */
	assert_non_null(
	    strstr(txt, "      0 |        166.78% |          1.499 |         100.07% |"
	                "           1500 |        n/a |             1000 |              20.00 |"));
	assert_non_null(strstr(txt, "Overall |"));
	assert_non_null(strstr(txt, "1.500(us)"));
	assert_non_null(strstr(txt, "- a note\n"));
	/* The rule lines are as wide as the header. */
	size_t w = strlen(hdr) - 1;
	char *eq = tp_malloc(w + 3);
	eq[0] = '\n';
	memset(eq + 1, '=', w);
	eq[w + 1] = '\n';
	eq[w + 2] = 0;
	assert_non_null(strstr(txt, eq + 1));
	tp_free(eq);
	/* The console form drops the SDMA columns when there is no SDMA. */
	txt = render(f, TEXT_CONSOLE);
	assert_null(strstr(txt, "totalSdmaCycle"));
	assert_non_null(strstr(txt, "GdmaAvgDdrBurstLength\n"));
}

/* A vendor row from the reader is printed beside tpuprof's under the same column names, in
 * summary.txt and in summary.json's "vendor"; without one there is no such table. */
static void test_vendor_rows(void **state)
{
	struct fx *f = *state;
	const char *txt = render(f, TEXT_FILE);
	assert_null(strstr(txt, "Vendor comparison"));
	struct tp_vendor_row *v = tp_profile_vendor_row(f->p, "tool\".py", 0, 0);
	v->total_time_ns = 2000;
	v->parallelism = 0.25;
	v->tiu_working_ratio = 0.125;
	v->tiu_cycle = 7;
	v->gdma_cycle = 8;
	v->sdma_cycle = 9;
	v->gdma_ddr_gbps = 1.234;
	v->gdma_l2_gbps = 5.5;
	v->records[TP_TRACK_GDMA] = 3;
	txt = render(f, TEXT_FILE);
	assert_non_null(strstr(txt, "Figures of               | CoreId | Parallelism(%) | "
	                            "totalTime(us) | TiuWorkingRatio |"));
	assert_non_null(strstr(txt, "tpuprof (hardware)       |      0 |        166.78% |"
	                            "         1.499 |         100.07% |          1500 |"));
	assert_non_null(strstr(txt, "vendor (tool\".py)        |      0 |         25.00% |"
	                            "         2.000 |          12.50% |             7 |"
	                            "              8 |               1.23 |              5.50 |"
	                            "              9 |               0.00 |      0 |      3 |"));
	txt = render(f, JSON);
	assert_non_null(strstr(txt, "\"vendor\":{\"tool\":\"tool\\\".py\",\"cores\":[{"
	                            "\"device\":0,\"core\":0,\"total_time_ns\":2000,"));
	assert_non_null(strstr(txt, "\"records\":{\"TIU\":0,\"GDMA\":3,\"SDMA\":0,\"CDMA\":0}}]}"));
}

static void test_json_escapes(void **state)
{
	struct fx *f = *state;
	const char *txt = render(f, JSON);
	assert_non_null(strstr(txt, "\"net_name\":\"net\\u003c/script>\""));
	assert_non_null(strstr(txt, "\"name\":\"tensorLd \\\"quoted\\\"\""));
	assert_non_null(strstr(txt, "\"total_time_ns\":1499,"));
	assert_non_null(strstr(txt, "\"total_time_us\":1.499,"));
	assert_non_null(strstr(txt, "\"uarch_rate_pct\":null"));
}

/* With cost data: the uArchURate column, the Function Type table and the hot-spot notes. */
static void test_cost_columns(void **state)
{
	(void)state;
	struct tp_profile *p = build();
	int t = tp_profile_find_track(p, 0, 0, TP_TRACK_TIU);
	struct tp_layer l = {.id = 7,
	                     .device = 0,
	                     .core = 0,
	                     .subnet = -1,
	                     .group = -1,
	                     .begin_ns = 0,
	                     .end_ns = 1499};
	l.name = tp_profile_str(p, "conv<1>");
	l.type = tp_profile_str(p, "Conv2D");
	int li = tp_profile_add_layer(p, &l);
	struct tp_slice *s = &p->tracks[t].slices[0];
	tp_slice_set_type(p, &p->tracks[t], s, tp_profile_str(p, "sCONV"));
	s->cmd_id = 2;
	s->layer = li;
	/* init_cycle 300 does not fit the packed entry: it goes through the track's cost_big. */
	struct tp_cost c = {.alg_ops = 235225088,
	                    .uarch_ops = 2516828160u,
	                    .alg_cycle = 28714,
	                    .init_cycle = 300,
	                    .valid = 1};
	assert_int_equal(tp_track_set_cost(p, t, 0, &c), TP_OK);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	struct fx *f = fx_of(p);
	const char *txt = render(f, TEXT_FILE);
	/* 235225088 / 2516828160 = 9.346 % (the vendor's first resnet50 conv: "9.3%") */
	assert_non_null(strstr(txt, "|      9.35% |"));
	assert_null(strstr(txt, "n/a"));
	assert_non_null(strstr(txt, "TIU function types, core 0\n"));
	assert_non_null(strstr(txt, "sCONV            |         1 |      235225088 |  100.00% |"
	                            "        28714 |  100.00% |     2516828160 |      9.35% |"));
	assert_non_null(strstr(txt, "- Low uArch rate"));
	assert_non_null(strstr(txt, "core 0 TIU cmd 2 conv.normal (layer 7 Conv2D conv<1>) at "
	                            "9.35%"));
	assert_non_null(strstr(txt, "- Low uArch rate, worst layers: core 0 layer 7 Conv2D"));
	/* 300 / 1500 = 20 % initial cycles */
	assert_non_null(strstr(txt, "- High initial-cycle ratio"));
	assert_non_null(strstr(txt, "at 20.00% (300 cycles)"));
	txt = render(f, JSON);
	assert_non_null(strstr(txt, "\"uarch_rate_pct\":9.3461,\"total_alg_cycle\":28714,"));
	assert_non_null(strstr(txt, "\"tiu_function_types\":[{\"function_type\":\"sCONV\","));
	assert_non_null(strstr(txt, "\"low_uarch_rate_commands\":[{\"core\":0,\"cmd_id\":2,"));
	assert_non_null(strstr(txt, "\"layer_name\":\"conv\\u003c1>\"")
	                    ? strstr(txt, "\"layer_name\":\"conv\\u003c1>\"")
	                    : strstr(txt, "\"layer_name\":\"conv<1>\""));
	fx_free(f);
}

/* Names reach the console and summary.txt: no ESC / C1 control survives, invalid UTF-8 was
 * repaired at the model boundary, and the rest of the name is kept. */
static void test_text_controls(void **state)
{
	(void)state;
	int t;
	struct tp_profile *p = tp_test_one_track("dev", TP_TRACK_TIU, NULL, 1000, &t);
	struct tp_slice *s = tp_track_push(p, t);
	s->cycles = 10;
	tp_slice_set_end(p, &p->tracks[t], s, 9);
	tp_slice_set_name(p, &p->tracks[t], s,
	                  tp_profile_str(p, "conv\x1b]0;pwned\x07\xc2\x9b"
	                                    "2J\xff"));
	tp_profile_note(p, "note \x1b[2J with \x08 controls\r");
	tp_profile_finish(p);
	struct fx *f = fx_of(p);
	for (int console = 0; console < 2; console++) {
		const char *txt = render(f, console ? TEXT_CONSOLE : TEXT_FILE);
		size_t len = f->b.len;
		assert_null(memchr(txt, 0x1b, len));
		assert_null(memchr(txt, 0x07, len));
		assert_null(memchr(txt, 0x08, len));
		assert_null(strstr(txt, "\xc2\x9b"));
		assert_true(tp_text_is_safe(txt, len, TP_TEXT_TERM));
		if (!console)
			assert_non_null(strstr(
			    txt, "note \xEF\xBF\xBD[2J with \xEF\xBF\xBD controls\xEF\xBF\xBD"));
	}
	fx_free(f);
}

/* The Overall row's cycle cells are the busiest core's cycles at the engine clock rounded to
 * the ns: 96730 cycles at 900 MHz are 107.4778 us, shown 107.478 (the timeline's truncated ns
 * would give 107.477). */
static void test_overall_cycles_rounded(void **state)
{
	(void)state;
	int t;
	struct tp_profile *p = tp_test_one_track("dev", TP_TRACK_TIU, NULL, 900, &t);
	p->tiu_freq_mhz = 900;
	struct tp_slice *s = tp_track_push(p, t);
	s->cycles = 96730;
	tp_slice_set_end(p, &p->tracks[t], s, 107477);
	tp_slice_set_name(p, &p->tracks[t], s, tp_profile_str(p, "conv.normal"));
	tp_profile_finish(p);
	struct fx *f = fx_of(p);
	const char *txt = render(f, TEXT_FILE);
	assert_non_null(strstr(txt, "107.478(us)"));
	assert_null(strstr(txt, "107.477(us)"));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_text_layout, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_json_escapes, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_vendor_rows, fx_setup, fx_teardown),
	    cmocka_unit_test(test_cost_columns),
	    cmocka_unit_test(test_text_controls),
	    cmocka_unit_test(test_overall_cycles_rounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
