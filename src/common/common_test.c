/*
 * common_test.c — unit tests for the status table, diagnostics, arena, byte cursor, string
 * table, buffers/formatting and atomic output files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_status(void **state)
{
	(void)state;
	assert_string_equal(tp_status_name(TP_EFORMAT), "TP_EFORMAT");
	assert_string_equal(tp_strerror(TP_OK), "success");
	assert_int_equal(tp_status_exit_code(TP_OK), 0);
	assert_int_equal(tp_status_exit_code(TP_EUSAGE), 1);
	assert_int_equal(tp_status_exit_code(TP_EFORMAT), 2);
	assert_int_equal(tp_status_exit_code(TP_ETRUNC), 2);
	assert_int_equal(tp_status_exit_code(TP_EOUTPUT), 3);
}

static void test_diag_keeps_first(void **state)
{
	(void)state;
	struct tp_diag d = {0};
	assert_int_equal(tp_diag_at(&d, TP_EFORMAT, "iter0.profile", 0x2214,
	                            "GDMA block length %u exceeds the %u bytes left", 4096u, 312u),
	                 TP_EFORMAT);
	tp_diag_line(&d, TP_EIO, "global.profile", 17, "second error");
	assert_string_equal(d.msg,
	                    "iter0.profile@0x2214: GDMA block length 4096 exceeds the 312 bytes left");
	assert_int_equal(d.status, TP_EFORMAT);
	struct tp_diag e = {0};
	tp_diag_line(&e, TP_EFORMAT, "global.profile", 17, "bad arch");
	assert_string_equal(e.msg, "global.profile:17: bad arch");
}

static void test_cursor_bounds(void **state)
{
	(void)state;
	const uint8_t b[] = {1, 0, 0, 0, 0x44, 0x33, 0x22, 0x11, 9};
	struct tp_cursor c, sub;
	tp_cur_init(&c, b, sizeof b, 0x100);
	assert_int_equal(tp_cur_u32(&c), 1);
	assert_int_equal(tp_cur_sub(&c, 4, &sub), 0);
	assert_int_equal(tp_cur_u16(&sub), 0x3344);
	assert_int_equal(tp_cur_u32(&sub), 0); /* only 2 left in the sub-cursor */
	assert_true(sub.bad);
	assert_int_equal(sub.bad_at, 0x106);
	assert_false(c.bad); /* the parent is unaffected */
	assert_int_equal(tp_cur_left(&c), 1);
	assert_int_equal(tp_cur_u64(&c), 0);
	assert_true(c.bad);
	assert_int_equal(c.bad_at, 0x108);
	assert_int_equal(tp_cur_left(&c), 0);
}

static void test_bits(void **state)
{
	(void)state;
	const uint8_t b[] = {0xF0, 0x0F, 0xAA, 0x55, 0, 0, 0, 0, 0xFF};
	assert_int_equal(tp_bits(b, 4, 8), 0xFF);
	assert_int_equal(tp_bits(b, 0, 4), 0);
	assert_int_equal(tp_bits(b, 16, 16), 0x55AA);
	assert_int_equal(tp_bits(b, 64, 8), 0xFF);
}

static void test_strtab(void **state)
{
	(void)state;
	struct tp_arena a;
	struct tp_strtab t;
	tp_arena_init(&a, 128);
	assert_int_equal(tp_strtab_init(&t, &a), TP_OK);
	uint32_t id1, id2, id3;
	assert_int_equal(tp_strtab_intern(&t, "conv.normal", 11, &id1), TP_OK);
	assert_int_equal(tp_strtab_intern(&t, "tensorLd", 8, &id2), TP_OK);
	assert_int_equal(tp_strtab_intern(&t, "conv.normalXX", 11, &id3), TP_OK);
	assert_int_equal(id1, id3);
	assert_int_not_equal(id1, id2);
	assert_string_equal(tp_strtab_get(&t, 0), "");
	assert_string_equal(tp_strtab_get(&t, id2), "tensorLd");
	/* Many strings force rehashing; every id must still resolve. */
	char buf[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof buf, "s%d", i);
		uint32_t id;
		assert_int_equal(tp_strtab_intern(&t, buf, strlen(buf), &id), TP_OK);
	}
	uint32_t f;
	assert_true(tp_strtab_find(&t, "s4999", 5, &f));
	assert_string_equal(tp_strtab_get(&t, f), "s4999");
	assert_false(tp_strtab_find(&t, "s5000", 5, &f));
	/* Unique additions get fresh ids, resolve, and never become findable (even after the
	 * interned strings force more rehashing). */
	uint32_t u1, u2;
	assert_int_equal(tp_strtab_add_unique(&t, "layer/a", 7, &u1), TP_OK);
	assert_int_equal(tp_strtab_add_unique(&t, "layer/a", 7, &u2), TP_OK);
	assert_int_not_equal(u1, u2);
	assert_string_equal(tp_strtab_get(&t, u2), "layer/a");
	for (int i = 5000; i < 9000; i++) {
		snprintf(buf, sizeof buf, "s%d", i);
		uint32_t id;
		assert_int_equal(tp_strtab_intern(&t, buf, strlen(buf), &id), TP_OK);
	}
	assert_false(tp_strtab_find(&t, "layer/a", 7, &f));
	assert_true(tp_strtab_find(&t, "s8999", 5, &f));
	assert_string_equal(tp_strtab_get(&t, u1), "layer/a");
	tp_strtab_free(&t);
	tp_arena_free(&a);
}

static void test_alloc_failure_hook(void **state)
{
	(void)state;
	struct tp_arena a;
	tp_arena_init(&a, 64);
	tp_alloc_fail_after(0);
	assert_null(tp_arena_alloc(&a, 10));
	tp_alloc_fail_after(-1);
	assert_non_null(tp_arena_alloc(&a, 10));
	assert_non_null(tp_arena_alloc(&a, 1000)); /* oversized chunk */
	assert_non_null(tp_arena_alloc(&a, 10));
	tp_arena_free(&a);
}

static void test_buf_format(void **state)
{
	(void)state;
	struct tp_buf b;
	tp_buf_init(&b);
	tp_buf_ns_as_us(&b, 1200000);
	tp_buf_putc(&b, ' ');
	tp_buf_ns_as_us(&b, 7);
	tp_buf_putc(&b, ' ');
	tp_buf_fixed(&b, -0.0001, 3);
	tp_buf_putc(&b, ' ');
	tp_buf_fixed(&b, 21.8649, 2);
	assert_string_equal(b.data, "1200.000 0.007 0.000 21.86");
	b.len = 0;
	tp_buf_json_str(&b, "a\"b\\c\n\x01</script><!--");
	assert_string_equal(b.data, "a\\\"b\\\\c\\n\\u0001\\u003c/script>\\u003c!--");
	b.len = 0;
	/* A lone '<' and bytes >= 0x80 (UTF-8) pass through; 0x1f, DEL and a final '<' do not
	 * confuse the table. */
	tp_buf_json_str(&b, "a<b \x1f\x7f\xc3\xa9<");
	assert_string_equal(b.data, "a<b \\u001f\\u007f\xc3\xa9<");
	b.len = 0;
	tp_buf_ns_as_us(&b, -1234567);
	tp_buf_putc(&b, ' ');
	tp_buf_ns_as_us(&b, 0);
	tp_buf_putc(&b, ' ');
	tp_buf_ns_as_us(&b, INT64_MAX);
	assert_string_equal(b.data, "-1234.567 0.000 9223372036854775.807");
	tp_buf_free(&b);
}

static void test_atomic_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/tp_common_test_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *sub = tp_path_join(dir, "a/b");
	struct tp_diag d = {0};
	assert_int_equal(tp_mkdirs(sub, &d), TP_OK);
	char *path = tp_path_join(sub, "out.txt");
	struct tp_afile f;
	assert_int_equal(tp_afile_open(&f, path, &d), TP_OK);
	fputs("hello", f.fp);
	assert_int_equal(access(path, F_OK), -1); /* not visible before commit */
	assert_int_equal(tp_afile_commit(&f, &d), TP_OK);
	assert_int_equal(access(path, F_OK), 0);
	/* Aborted files leave nothing behind. */
	char *p2 = tp_path_join(sub, "gone.txt");
	assert_int_equal(tp_afile_open(&f, p2, &d), TP_OK);
	char *tmp = tp_strdup(f.tmp_path);
	tp_afile_abort(&f);
	assert_int_equal(access(p2, F_OK), -1);
	assert_int_equal(access(tmp, F_OK), -1);
	unlink(path);
	rmdir(sub);
	*strrchr(sub, '/') = 0;
	rmdir(sub);
	rmdir(dir);
	tp_free(tmp);
	tp_free(p2);
	tp_free(path);
	tp_free(sub);
}

static void test_parse(void **state)
{
	(void)state;
	int64_t v;
	uint64_t u;
	assert_int_equal(tp_parse_i64("-42", 3, &v), 0);
	assert_int_equal(v, -42);
	assert_int_equal(tp_parse_u64("18446744073709551615", 20, &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(tp_parse_u64("18446744073709551616", 20, &u), -1);
	assert_int_equal(tp_parse_u64("12a", 3, &u), -1);
	assert_int_equal(tp_parse_u64("", 0, &u), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status),       cmocka_unit_test(test_diag_keeps_first),
		cmocka_unit_test(test_cursor_bounds), cmocka_unit_test(test_bits),
		cmocka_unit_test(test_strtab),       cmocka_unit_test(test_alloc_failure_hook),
		cmocka_unit_test(test_buf_format),   cmocka_unit_test(test_atomic_file),
		cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
