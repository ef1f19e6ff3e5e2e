/*
 * opscsv_test.c — unit tests for the sparse ratio file parser and lookup, CSV escaping, and
 * the ops.csv writer against the reviewed golden tests/golden/opscsv_small/ops.csv (the
 * operator table itself: src/analysis/optable_test.c).
 * Set TP_UPDATE_GOLDEN=1 to rewrite the golden (then review the diff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h> /* after the three headers it needs */

#include "testutil.h"
#include "writers/opscsv/opscsv.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures/c/ops_fixture.h"

/* ---- sparse ratios ----------------------------------------------------------------------- */

static int parse_str(struct tp_sparse_ratios *r, const char *text, struct tp_diag *d)
{
	memset(d, 0, sizeof *d);
	return tp_sparse_ratios_parse(r, text, strlen(text), "ratios.txt", d);
}

static void test_ratios_defaults(void **state)
{
	(void)state;
	struct tp_sparse_ratios r;
	assert_int_equal(tp_sparse_ratios_defaults(&r), TP_OK);
	assert_int_equal(r.aim_pct, 90);
	const struct tp_sparse_ratio_row *row = tp_sparse_ratios_lookup(&r, "256x1024");
	assert_string_equal(row->shape, "256x1024");
	assert_true(tp_sparse_ratio_at(row, 90) == 4.5);
	assert_true(tp_sparse_ratio_at(row, 80) == 3.0);
	assert_true(tp_sparse_ratio_at(row, 70) == 2.5);
	assert_true(tp_sparse_ratio_at(row, 60) == 1.0);
	row = tp_sparse_ratios_lookup(&r, "1024x256");
	assert_true(tp_sparse_ratio_at(row, 90) == 5.0);
	row = tp_sparse_ratios_lookup(&r, "64x64");
	assert_string_equal(row->shape, "*");
	assert_true(tp_sparse_ratio_at(row, 90) == 4.0);
	assert_int_equal(row->line, 0);
	tp_sparse_ratios_free(&r);
}

static void test_ratios_parse_ok(void **state)
{
	(void)state;
	struct tp_sparse_ratios r;
	struct tp_diag d;
	const char *text = "# measured on box 7\n"
	                   "\n"
	                   "aim 80%   # target\n"
	                   "256x256  3.5 2.25 1.5 1\n"
	                   "0256x0064,6,5,4,1.125\r\n"
	                   "*        2   1.5  1.25 0.5\n";
	assert_int_equal(parse_str(&r, text, &d), TP_OK);
	assert_int_equal(r.aim_pct, 80);
	assert_int_equal(r.count, 2);
	assert_true(r.from_file);
	const struct tp_sparse_ratio_row *row = tp_sparse_ratios_lookup(&r, "256x256");
	assert_int_equal(row->line, 4);
	assert_true(tp_sparse_ratio_at(row, r.aim_pct) == 2.25);
	row = tp_sparse_ratios_lookup(&r, "256x64"); /* stored canonical */
	assert_int_equal(row->line, 5);
	assert_true(row->ratio[3] == 1.125);
	/* A file replaces the built-in shapes: 1024x256 falls back to the file's '*' row. */
	row = tp_sparse_ratios_lookup(&r, "1024x256");
	assert_string_equal(row->shape, "*");
	assert_int_equal(row->line, 6);
	assert_true(tp_sparse_ratio_at(row, 80) == 1.5);
	tp_sparse_ratios_free(&r);

	/* Without '*' and aim lines: the built-in fallback and aim 90 %. */
	assert_int_equal(parse_str(&r, "64x64 9 8 7 6", &d), TP_OK);
	assert_int_equal(r.aim_pct, 90);
	row = tp_sparse_ratios_lookup(&r, "1x1");
	assert_int_equal(row->line, 0);
	assert_true(row->ratio[0] == 4.0);
	tp_sparse_ratios_free(&r);
}

static void test_ratios_parse_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} cases[] = {
	    {"256x256 4 2.5 2\n", "ratios.txt:1: expected 5 fields (weight shape and ratios for "
	                          "90%, 80%, 70% and others), found 4"},
	    {"# c\n256x256 4 2.5 2 1 9 9 9\n",
	     "ratios.txt:2: expected 5 fields (weight shape and ratios for 90%, 80%, 70% and "
	     "others), found more than 6"},
	    {"\n\n256xx256 4 2.5 2 1\n", "ratios.txt:3: bad weight shape '256xx256': expected "
	                                 "positive dims joined by 'x', e.g. 256x1024"},
	    {"0x256 4 2.5 2 1\n", "ratios.txt:1: bad weight shape '0x256': expected positive dims "
	                          "joined by 'x', e.g. 256x1024"},
	    {"256x256 4 2,5 2 1\n", "ratios.txt:1: expected 5 fields (weight shape and ratios for "
	                            "90%, 80%, 70% and others), found 6"},
	    {"256x256 4 1e3 2 1\n", "ratios.txt:1: bad 80% ratio '1e3': expected a decimal number "
	                            "greater than 0 and at most 1000, e.g. 2.5"},
	    {"256x256 4 2.5 2 0\n", "ratios.txt:1: bad others ratio '0': expected a decimal number "
	                            "greater than 0 and at most 1000, e.g. 2.5"},
	    {"256x256 -4 2.5 2 1\n", "ratios.txt:1: bad 90% ratio '-4': expected a decimal number "
	                             "greater than 0 and at most 1000, e.g. 2.5"},
	    {"256x256 4 2.5 2 1\n256x256 5 2.5 2 1\n",
	     "ratios.txt:2: weight shape 256x256 already given on line 1"},
	    {"* 1 1 1 1\n* 2 2 2 2\n", "ratios.txt:2: fallback row '*' already given on line 1"},
	    {"aim 90\naim 80\n", "ratios.txt:2: aim already given on line 1"},
	    {"aim 100\n", "ratios.txt:1: expected 'aim PERCENT' with a whole percent from 1 to 99"},
	    {"aim\n", "ratios.txt:1: expected 'aim PERCENT' with a whole percent from 1 to 99"},
	    {"aim 85.5%\n",
	     "ratios.txt:1: expected 'aim PERCENT' with a whole percent from 1 to 99"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tp_sparse_ratios r;
		struct tp_diag d;
		assert_int_equal(parse_str(&r, cases[i].text, &d), TP_EFORMAT);
		assert_string_equal(d.msg, cases[i].msg);
		assert_null(r.rows); /* nothing left to free */
	}
	/* A NUL byte inside the text. */
	struct tp_sparse_ratios r;
	struct tp_diag d = {0};
	assert_int_equal(tp_sparse_ratios_parse(&r, "aim 90\n2\0x", 10, "f", &d), TP_EFORMAT);
	assert_string_equal(d.msg, "f:2: NUL byte in a text file");
	/* Missing file. */
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_sparse_ratios_load(&r, "/nonexistent/ratios.txt", &d), TP_ENOTFOUND);
	assert_non_null(strstr(d.msg, "/nonexistent/ratios.txt"));
}

/* ---- CSV --------------------------------------------------------------------------------- */

/* A CSV cell: the text, whether it came from an input (formula guard on), the cell written. */
struct cell_case {
	const char *in;
	int from_input;
	const char *want;
};

static const struct cell_case cell_cases[] = {
    {"plain", 1, "plain"},
    {"", 1, ""},
    {"a,b", 1, "\"a,b\""},
    {"say \"hi\"", 1, "\"say \"\"hi\"\"\""},
    {"two\nlines", 1, "\"two\nlines\""},
    {"cr\rhere", 1, "\"cr\rhere\""},
    {"=1+1", 1, "'=1+1"},
    /* Text safety: ESC, BEL, DEL and C1 controls never reach the file; a formula after a
     * control byte is still guarded. */
    {"a\x1b[31mb\x07\x7f\xc2\x9b", 1, "a\xEF\xBF\xBD[31mb\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
    {"=cmd|' /C calc'!A0", 1, "'=cmd|' /C calc'!A0"},
    {"\x01,=x", 1, "\"\xEF\xBF\xBD,=x\""},
    {"+cmd", 1, "'+cmd"},
    {"-1x256", 1, "'-1x256"},
    {"@SUM(A1)", 1, "'@SUM(A1)"},
    {"\tx", 1, "'\tx"},
    {"=HYPERLINK(\"a,b\")", 1, "\"'=HYPERLINK(\"\"a,b\"\")\""},
    {"a=b", 1, "a=b"},   /* only a leading sign is dangerous */
    {"-0.5", 0, "-0.5"}, /* the writer's own numbers are not guarded */
    {"'quoted'", 1, "'quoted'"},
};

static void test_csv_escaping(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cell_cases / sizeof cell_cases[0]; i++) {
		const struct cell_case *c = &cell_cases[i];
		struct tp_buf b;
		tp_buf_init(&b);
		tp_csv_cell(&b, c->in, c->from_input);
		assert_string_equal(b.len ? b.data : "", c->want);
		tp_buf_free(&b);
	}
}

/* ---- the writer -------------------------------------------------------------------------- */

static void render_small(struct tp_buf *b, const struct tp_sparse_ratios *r)
{
	struct tp_profile *p = build_small(WARM_BY_STEP, 4, 1);
	struct tp_op_table t;
	assert_int_equal(tp_op_table_build(p, &t), TP_OK);
	tp_buf_init(b);
	assert_int_equal(tp_opscsv_render(p, &t, r, b), TP_OK);
	tp_op_table_free(&t);
	tp_profile_free(p);
}

static void test_golden_small(void **state)
{
	(void)state;
	struct tp_sparse_ratios r;
	assert_int_equal(tp_sparse_ratios_defaults(&r), TP_OK);
	struct tp_buf b;
	render_small(&b, &r);
	tp_sparse_ratios_free(&r);
	tp_test_golden(b.data, b.len, "tests/golden/opscsv_small/ops.csv");
	tp_buf_free(&b);
}

static void test_render_with_ratio_file(void **state)
{
	(void)state;
	struct tp_sparse_ratios r;
	struct tp_diag d;
	assert_int_equal(parse_str(&r, "aim 70\n256x256 8 6 5 1\n* 3 2 1.6 1.1\n", &d), TP_OK);
	struct tp_buf b;
	render_small(&b, &r);
	tp_sparse_ratios_free(&r);
	/* Ratio table: 256x256 from line 2, the other eligible shapes from the '*' row. */
	assert_non_null(
	    strstr(b.data, "\n256x256,8.000000,6.000000,5.000000,1.000000,file line 2\n"));
	assert_non_null(
	    strstr(b.data, "\n256x1000,3.000000,2.000000,1.600000,1.100000,file line 3 (*)\n"));
	/* q_proj: mean 0.011 ms at aim 70 % -> ratio 5 -> 0.0022 ms. */
	assert_non_null(strstr(b.data, ",256x256,12.50%,true,0.011000,70%,5.000000,0.002200,"));
	/* out (256x1000, fallback): 0.004 / 1.6 = 0.0025 ms. */
	assert_non_null(strstr(b.data, ",256x1000,0.00%,true,0.004000,70%,1.600000,0.002500,"));
	tp_buf_free(&b);
}

/* The CLI's "ops" output (its registry entry) as far as this module is concerned. */
static const struct tp_output ops_output = {
    .name = "ops", .file = "ops.csv", .render = tp_opscsv_output_render};

static void write_profile_to(const struct tp_profile *p, const char *dir, const char *ratios,
                             struct tp_diag *d, int want)
{
	struct tp_out_opts o = {0};
	o.out_dir = dir;
	o.sparse_ratios_path = ratios;
	memset(d, 0, sizeof *d);
	assert_int_equal(tp_output_write(&ops_output, p, NULL, &o, d), want);
}

static void test_output_entry(void **state)
{
	(void)state;
	char dir[] = "/tmp/opscsv_test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char csv[sizeof dir + 16], rat[sizeof dir + 16];
	snprintf(csv, sizeof csv, "%s/ops.csv", dir);
	snprintf(rat, sizeof rat, "%s/r.txt", dir);
	struct tp_diag d;
	struct stat sb;

	/* No operators: success and no file. */
	struct tp_profile *empty = tp_profile_new();
	tp_profile_finish(empty);
	write_profile_to(empty, dir, NULL, &d, TP_OK);
	assert_int_equal(stat(csv, &sb), -1);

	/* A bad ratio file is an error even without operators, with FILE:LINE. */
	FILE *f = fopen(rat, "w");
	fputs("aim 90\n256x256 4 2.5 x 1\n", f);
	fclose(f);
	write_profile_to(empty, dir, rat, &d, TP_EFORMAT);
	char want[256];
	snprintf(want, sizeof want,
	         "%s:2: bad 70%% ratio 'x': expected a decimal number greater "
	         "than 0 and at most 1000, e.g. 2.5",
	         rat);
	assert_string_equal(d.msg, want);
	tp_profile_free(empty);

	/* With operators: the file equals the rendered text. */
	struct tp_profile *p = build_small(WARM_BY_STEP, 4, 1);
	write_profile_to(p, dir, rat, &d, TP_EFORMAT);
	assert_int_equal(stat(csv, &sb), -1); /* nothing half-written */
	write_profile_to(p, dir, NULL, &d, TP_OK);
	struct tp_sparse_ratios r;
	tp_sparse_ratios_defaults(&r);
	struct tp_buf b;
	render_small(&b, &r);
	tp_sparse_ratios_free(&r);
	size_t n;
	char *got = tp_test_slurp(csv, &n);
	assert_non_null(got);
	assert_int_equal(n, b.len);
	assert_memory_equal(got, b.data, n);
	free(got);
	tp_buf_free(&b);
	tp_profile_free(p);
	unlink(csv);
	unlink(rat);
	rmdir(dir);
}

/* Ratios, table and ops.csv as tp_test_oom_sweep calls it (ctx: the profile). */
static int render_all(void *ctx, struct tp_diag *d)
{
	const struct tp_profile *p = ctx;
	struct tp_op_table t;
	struct tp_sparse_ratios r;
	struct tp_buf b;
	tp_buf_init(&b);
	int st = tp_sparse_ratios_defaults(&r);
	if (st == TP_OK) {
		st = tp_op_table_build(p, &t);
		if (st == TP_OK) {
			st = tp_opscsv_render(p, &t, &r, &b);
			tp_op_table_free(&t);
		}
		tp_sparse_ratios_free(&r);
	}
	tp_buf_free(&b);
	return st ? tp_diag_set(d, st, "ops.csv: %s", tp_strerror(st)) : TP_OK;
}

static void test_oom_paths(void **state)
{
	(void)state;
	sweep_small(render_all);
}

#include "tp_test_main.h"
