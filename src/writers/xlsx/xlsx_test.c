/*
 * xlsx_test.c — unit tests of the workbook writer on profiles built in code: sheet planning
 * (parts, names), byte-identical output for the same input, failures that leave no file
 * (bad directory, bad temp dir, bad ratio file, every allocation failing in turn) and the
 * output entry the CLI uses. Cell contents are checked by xlsx_check.py with openpyxl.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures/c/xlsx_fixture.h"
#include "testutil.h"
#include "writers/xlsx/xlsx.h"

static char tmpdir[512];

static int make_tmpdir(void **state)
{
	(void)state;
	const char *b = getenv("TP_BINARY_DIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/xlsx_test.XXXXXX", b && *b ? b : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static void rm_rf(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char p[1024];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rm_rf(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

static int remove_tmpdir(void **state)
{
	(void)state;
	rm_rf(tmpdir);
	return 0;
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	struct dirent *e;
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_parts(void **state)
{
	(void)state;
	assert_int_equal(tp_xlsx_parts(0, 0), 1);
	assert_int_equal(tp_xlsx_parts(TP_XLSX_EXCEL_MAX_ROWS - TP_XLSX_DATA_ROW, 0), 1);
	assert_int_equal(tp_xlsx_parts(TP_XLSX_EXCEL_MAX_ROWS - TP_XLSX_DATA_ROW + 1, 0), 2);
	assert_int_equal(tp_xlsx_parts(2500, 1000), 3); /* 996 rows per sheet */
	assert_int_equal(tp_xlsx_parts(1992, 1000), 2);
	assert_int_equal(tp_xlsx_parts(1993, 1000), 3);
}

static void test_sheet_name(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"a[b]:c*?/\\d", "a_b__c____d"},
	    {"'quoted'", "quoted"},
	    {"", "Sheet"},
	    {"0123456789012345678901234567890123456789", "0123456789012345678901234567890"},
	    /* 30 ASCII characters and a 2-byte character make 31 characters (32 bytes). */
	    {"012345678901234567890123456789\xc3\xa9xyz", "012345678901234567890123456789\xc3\xa9"},
	    /* A truncated UTF-8 sequence is replaced (once: one maximal invalid subpart), never
	     * copied half. */
	    {"ab\xe2\x82", "ab_"},
	    /* Surrogates, overlong forms, control characters and U+FFFF never reach
	     * workbook.xml. */
	    {"s\xed\xa0\x80o\xc0\xaf"
	     "c\x1b\xc2\x9b"
	     "n\xef\xbf\xbf",
	     "s___o__c__n_"},
	    /* A lead byte followed by a non-continuation byte is not copied either. */
	    {"a\xc3"
	     "Az",
	     "a_Az"},
	};
	char b[128];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		tp_xlsx_sheet_name(b, sizeof b, cases[i].in);
		assert_string_equal(b, cases[i].want);
	}
}

static struct tp_profile *small_engines(void)
{
	struct fx_engines_cfg cfg = {.tiu = {40, 9}, .gdma = {25, 4}, .sdma = {3, 0}, .layers = 1};
	return fx_engines(&cfg);
}

/* `p` (not NULL) with its analysis in *a. */
static struct tp_profile *analyzed(struct tp_profile *p, struct tp_analysis *a)
{
	assert_non_null(p);
	assert_int_equal(tp_analyze(p, a), TP_OK);
	return p;
}

/* Leaves the heap's free blocks full of garbage, so that a writer reading memory it never set
 * (a compressor's tables) writes other bytes than on fresh, zeroed pages. Two passes: the
 * first raises glibc's mmap threshold (freeing a mapped block does), the second's blocks then
 * come from the heap and stay there when freed. */
static void dirty_heap(void)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t sz = (size_t)1 << 16; sz <= (size_t)1 << 23; sz <<= 1) {
			void *b = malloc(sz);
			if (b)
				memset(b, 0xA5, sz);
			free(b);
		}
}

static void test_deterministic(void **state)
{
	(void)state;
	struct tp_analysis a;
	struct tp_profile *p = analyzed(small_engines(), &a);
	char p1[600], p2[600];
	snprintf(p1, sizeof p1, "%s/a.xlsx", tmpdir);
	snprintf(p2, sizeof p2, "%s/b.xlsx", tmpdir);
	struct tp_diag d = {0};
	assert_int_equal(tp_xlsx_write(p, &a, p1, NULL, &d), TP_OK);
	dirty_heap();
	assert_int_equal(tp_xlsx_write(p, &a, p2, NULL, &d), TP_OK);
	size_t n1 = 0, n2 = 0;
	char *b1 = tp_test_slurp(p1, &n1), *b2 = tp_test_slurp(p2, &n2);
	assert_non_null(b1);
	assert_non_null(b2);
	assert_true(n1 > 4 && !memcmp(b1, "PK\x03\x04", 4));
	assert_int_equal(n1, n2);
	assert_memory_equal(b1, b2, n1);
	/* A different row limit changes the file (the limit is honoured). */
	struct tp_xlsx_opts xo = {.max_rows = 20};
	assert_int_equal(tp_xlsx_write(p, &a, p2, &xo, &d), TP_OK);
	free(b2);
	b2 = tp_test_slurp(p2, &n2);
	assert_true(n1 != n2 || memcmp(b1, b2, n1) != 0);
	free(b1);
	free(b2);
	unlink(p1);
	unlink(p2);
	tp_analysis_free(&a);
	tp_profile_free(p);
}

/* 300 host tracks (one per pid in a trace) need more worksheets than the budget: the
 * workbook is written under an open-file limit of 200 (libxlsxwriter keeps a file open per
 * worksheet, so 300 sheets could not be), and the CLI's note says where the
 * extra tracks went: 120 sheets are the Engine Summary, 118 track sheets and 'Other tracks',
 * which holds the other 182. */
static void test_many_tracks(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	for (int k = 0; k < 300; k++) {
		char name[32];
		snprintf(name, sizeof name, "pid %d", k);
		int dev = tp_profile_add_device(p, name, k, 0);
		int t = tp_profile_add_track(p, dev, -1, TP_TRACK_HOST, "tid 1", 0);
		assert_true(dev >= 0 && t >= 0);
		struct tp_slice *s = tp_track_push(p, t);
		assert_non_null(s);
		s->start_ns = 1000 * k;
		tp_slice_set_end(p, &p->tracks[t], s, s->start_ns + 500);
		tp_slice_set_name(p, &p->tracks[t], s, tp_profile_str(p, "op"));
	}
	struct tp_analysis a;
	analyzed(p, &a);
	size_t notes = p->num_notes;
	assert_int_equal(tp_xlsx_note_cap(p, 0, 0), TP_OK);
	assert_int_equal(p->num_notes, notes + 1);
	assert_non_null(
	    strstr(tp_str(p, p->notes[notes].text), "182 tracks have no sheet of their own"));
	struct rlimit old, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = old.rlim_cur < 200 ? old.rlim_cur : 200;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	char path[600];
	snprintf(path, sizeof path, "%s/many.xlsx", tmpdir);
	struct tp_diag d = {0};
	int st = tp_xlsx_write(p, &a, path, NULL, &d);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(st, TP_OK);
	unlink(path);
	tp_analysis_free(&a);
	tp_profile_free(p);
}

static void test_bad_paths_leave_nothing(void **state)
{
	(void)state;
	struct tp_analysis a;
	struct tp_profile *p = analyzed(small_engines(), &a);
	struct tp_diag d = {0};
	char path[600];
	snprintf(path, sizeof path, "%s/missing-dir/x.xlsx", tmpdir);
	assert_int_equal(tp_xlsx_write(p, &a, path, NULL, &d), TP_EOUTPUT);
	assert_non_null(strstr(d.msg, "missing-dir/x.xlsx"));

	tp_analysis_free(&a);
	tp_profile_free(p);
}

static void test_ratio_file_error(void **state)
{
	(void)state;
	struct tp_analysis a;
	struct tp_profile *p = analyzed(fx_capture(3), &a);
	char dir[600], path[700];
	snprintf(dir, sizeof dir, "%s/ratios", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof path, "%s/out.xlsx", dir);
	struct tp_xlsx_opts xo = {.sparse_ratios_path = "/nonexistent/ratios.txt"};
	struct tp_diag d = {0};
	int st = tp_xlsx_write(p, &a, path, &xo, &d);
	assert_int_equal(st, TP_ENOTFOUND);
	assert_non_null(strstr(d.msg, "ratios.txt"));
	assert_int_equal(count_entries(dir), 0);

	/* The ratio file is read after the workbook was opened: an existing workbook survives
	 * the failed rewrite byte for byte, and no temporary file is left next to it. */
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_xlsx_write(p, &a, path, NULL, &d), TP_OK);
	size_t n0 = 0, n1 = 0;
	char *before = tp_test_slurp(path, &n0);
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_xlsx_write(p, &a, path, &xo, &d), TP_ENOTFOUND);
	char *after = tp_test_slurp(path, &n1);
	assert_non_null(before);
	assert_non_null(after);
	assert_int_equal(n0, n1);
	assert_memory_equal(before, after, n0);
	assert_int_equal(count_entries(dir), 1);
	free(before);
	free(after);
	tp_analysis_free(&a);
	tp_profile_free(p);
}

/* Every allocation the writer makes fails in turn: each run ends in TP_OK or TP_ENOMEM, and
 * a failed run leaves no file behind. */
static void oom_loop(struct tp_profile *p, const char *sub, const struct tp_xlsx_opts *xo)
{
	struct tp_analysis a;
	assert_int_equal(tp_analyze(p, &a), TP_OK);
	char dir[600], path[700];
	snprintf(dir, sizeof dir, "%s/%s", tmpdir, sub);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof path, "%s/out.xlsx", dir);
	int ok = 0;
	long n;
	for (n = 0; n < 10000 && !ok; n++) {
		struct tp_diag d = {0};
		tp_alloc_fail_after(n);
		int st = tp_xlsx_write(p, &a, path, xo, &d);
		tp_alloc_fail_after(-1);
		if (st == TP_OK) {
			ok = 1;
			break;
		}
		assert_int_equal(st, TP_ENOMEM);
		assert_int_equal(d.status, TP_ENOMEM);
		assert_int_equal(count_entries(dir), 0);
	}
	assert_true(ok);
	assert_true(n > 3); /* the writer does allocate: the loop exercised failures */
	assert_int_equal(count_entries(dir), 1);
	tp_analysis_free(&a);
}

static void test_oom_engines(void **state)
{
	(void)state;
	struct tp_profile *p = small_engines();
	oom_loop(p, "oom-engines", NULL);
	/* Capped: the layer list and the cap notes allocate too. */
	struct tp_xlsx_opts xo = {.row_cap = 2};
	oom_loop(p, "oom-engines-capped", &xo);
	tp_profile_free(p);
}

static void test_oom_capture(void **state)
{
	(void)state;
	struct tp_profile *p = fx_capture(3);
	oom_loop(p, "oom-capture", NULL);
	tp_profile_free(p);
}

/* --xlsx_rows: parsing, the default and the profile note the CLI adds. */
static void test_row_cap(void **state)
{
	(void)state;
	uint64_t v = 7;
	assert_int_equal(tp_xlsx_parse_rows("all", &v), 0);
	assert_true(v == TP_XLSX_ROWS_ALL);
	assert_int_equal(tp_xlsx_parse_rows("123", &v), 0);
	assert_true(v == 123);
	static const char *const bad[] = {"0",   "-1", "",    "12k",
	                                  "ALL", " 5", "1e3", "99999999999999999999999"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		v = 7;
		assert_int_equal(tp_xlsx_parse_rows(bad[i], &v), -1);
		assert_true(v == 7);
	}
	assert_int_equal(tp_xlsx_parse_rows(NULL, &v), -1);

	struct tp_profile *p = small_engines(); /* TIU 40/9, GDMA 25/4, SDMA 3/0, layers */
	size_t notes = p->num_notes;
	assert_int_equal(tp_xlsx_note_cap(p, 0, TP_XLSX_ROWS_ALL), TP_OK);
	assert_int_equal(p->num_notes, notes); /* nothing cut, nothing said */
	assert_int_equal(tp_xlsx_note_cap(p, 0, 30), TP_OK);
	assert_int_equal(p->num_notes, notes + 1);
	const char *t = tp_str(p, p->notes[notes].text);
	assert_non_null(strstr(t, TP_XLSX_NOTE_PREFIX "1 per-command sheet(s)"));
	assert_non_null(strstr(t, "first 30 commands"));
	assert_non_null(strstr(t, "TIU_0, 40"));
	assert_non_null(strstr(t, "--xlsx_rows all"));
	/* --num_core 1 style: core 1's tracks do not count; 9 TIU commands of core 1 would be
	 * cut at 5, but only core 0's 40 TIU, 25 GDMA are counted (SDMA 3 is not cut). */
	assert_int_equal(tp_xlsx_note_cap(p, 1, 5), TP_OK);
	t = tp_str(p, p->notes[notes + 1].text);
	assert_non_null(strstr(t, "2 per-command sheet(s)"));
	/* The small profile's default is the per-sheet maximum: 400 000 rows over a few sheets. */
	size_t ns = 99;
	assert_true(tp_xlsx_cap_for(p, 0, 0, &ns) == TP_XLSX_DEFAULT_ROWS);
	assert_true(ns >= 4 && ns <= 8);
	assert_true(tp_xlsx_cap_for(p, 0, 123, &ns) == 123 && ns == 0);
	tp_profile_free(p);

	/* Many cores: 30 TIU tracks share the budget (13 333 rows each), and the CLI note says
	 * the cap is that default, with the count of sheets. 60 tracks would get 6 666: the
	 * floor of 10 000 holds. */
	p = tp_profile_new();
	int dev = tp_profile_add_device(p, "dev", 0, 60);
	for (int c = 0; c < 60; c++) {
		int tr = tp_profile_add_track(p, dev, c, TP_TRACK_TIU, "TIU", 1000);
		size_t n = c == 0 ? 13334 : c < 30 ? 1 : 0;
		for (size_t i = 0; i < n; i++) {
			struct tp_slice *x = tp_track_push(p, tr);
			x->start_ns = (int64_t)i * 10;
			tp_slice_set_end(p, &p->tracks[tr], x, x->start_ns + 5);
		}
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	assert_true(tp_xlsx_cap_for(p, 0, 0, &ns) == TP_XLSX_ROW_BUDGET / 30 && ns == 30);
	assert_true(tp_xlsx_cap_for(p, 10, 0, &ns) == 40000 && ns == 10); /* --num_core 10 */
	assert_true(tp_xlsx_cap_for(p, 6, 0, &ns) == TP_XLSX_DEFAULT_ROWS && ns == 6);
	notes = p->num_notes;
	assert_int_equal(tp_xlsx_note_cap(p, 0, 0), TP_OK);
	assert_int_equal(p->num_notes, notes + 1);
	t = tp_str(p, p->notes[notes].text);
	assert_non_null(strstr(t, "1 per-command sheet(s) show only the first 13333 commands"));
	assert_non_null(strstr(t, "(the default: 400000 rows shared by 30 per-record sheets"));
	for (int c = 30; c < 60; c++) {
		struct tp_slice *x = tp_track_push(p, c);
		x->start_ns = 0;
		tp_slice_set_end(p, &p->tracks[c], x, 5);
	}
	assert_true(tp_xlsx_cap_for(p, 0, 0, &ns) == TP_XLSX_MIN_DEFAULT_ROWS && ns == 60);
	tp_profile_free(p);
}

static void test_output_entry(void **state)
{
	(void)state;
	/* The CLI's "xlsx" output (its registry entry) as far as this module is concerned. */
	const struct tp_output xlsx_output = {
	    .name = "xlsx", .file = TP_XLSX_FILE, .write = tp_xlsx_output_write};
	struct tp_analysis a;
	struct tp_profile *p = analyzed(small_engines(), &a);
	char out[600], path[700];
	snprintf(out, sizeof out, "%s/cli-out", tmpdir);
	assert_int_equal(mkdir(out, 0755), 0);
	struct tp_out_opts o = {.out_dir = out};
	struct tp_diag d = {0};
	assert_int_equal(tp_output_write(&xlsx_output, p, &a, &o, &d), TP_OK);
	snprintf(path, sizeof path, "%s/PerfDoc/PerfAI_output.xlsx", out);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 1000);
	tp_analysis_free(&a);
	tp_profile_free(p);
}

#define TP_TEST_GROUP_SETUP make_tmpdir
#define TP_TEST_GROUP_TEARDOWN remove_tmpdir
#include "tp_test_main.h"
