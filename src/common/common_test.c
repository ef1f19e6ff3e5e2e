/*
 * common_test.c — unit tests for the status table, diagnostics, arena, byte cursor,
 * buffers/formatting and atomic output files (string table: strtab_test.c; text safety:
 * text_test.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "common/common.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
	assert_string_equal(
	    d.msg, "iter0.profile@0x2214: GDMA block length 4096 exceeds the 312 bytes left");
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

/* tp_push grows from empty through several reallocations, keeps what was pushed, and on a
 * failed allocation returns NULL with the array, count and capacity unchanged. */
static void test_push(void **state)
{
	(void)state;
	struct pair {
		uint32_t a;
		uint64_t b;
	} *arr = NULL;
	size_t n = 0, cap = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		struct pair *e = tp_push(&arr, sizeof *arr, &n, &cap);
		assert_non_null(e);
		assert_ptr_equal(e, arr + i);
		assert_int_equal(n, i + 1);
		assert_true(cap >= n);
		e->a = i;
		e->b = (uint64_t)i * 3 + 1;
	}
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(arr[i].a, i);
		assert_int_equal(arr[i].b, (uint64_t)i * 3 + 1);
	}
	/* Fill the capacity so that the next push must reallocate, then make that fail. */
	while (n < cap)
		assert_non_null(tp_push(&arr, sizeof *arr, &n, &cap));
	struct pair *before = arr;
	size_t full = n, fullcap = cap;
	tp_alloc_fail_after(0);
	assert_null(tp_push(&arr, sizeof *arr, &n, &cap));
	tp_alloc_fail_after(-1);
	assert_ptr_equal(arr, before);
	assert_int_equal(n, full);
	assert_int_equal(cap, fullcap);
	assert_int_equal(arr[999].a, 999);
	/* A count at SIZE_MAX cannot grow: NULL, nothing changed. */
	size_t huge = SIZE_MAX, hcap = SIZE_MAX;
	assert_null(tp_push(&arr, sizeof *arr, &huge, &hcap));
	assert_int_equal(huge, SIZE_MAX);
	assert_ptr_equal(arr, before);
	tp_free(arr);
}

/* tp_free_each releases every block and the array: glibc's count of bytes in use comes back
 * to where it was (blocks over 1 KiB: glibc's per-thread cache would count smaller ones freed
 * as still in use). Under ASan (its own allocator) the sanitizer's leak check does the work. */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define IN_USE() mallinfo2().uordblks
#else
#define IN_USE() (size_t)0
#endif
static void test_free_each(void **state)
{
	(void)state;
	tp_free_each(NULL, 0);
	size_t before = IN_USE();
	char **v = tp_calloc(200, sizeof *v);
	assert_non_null(v);
	for (int i = 0; i < 4; i++) /* v[4..200) stay NULL */
		assert_non_null(v[i] = tp_malloc(2000 + 100 * (size_t)i));
	if (IN_USE() == 0)
		printf("SKIPPED: test_free_each cannot count bytes in use here (not glibc, or "
		       "ASan)\n");
	else
		assert_true(IN_USE() >= before + 200 * sizeof *v + 8000);
	tp_free_each(v, 200);
	assert_int_equal(IN_USE(), before);
	/* TP_FREE_ALL frees every block it lists, NULL ones skipped. */
	char *a = tp_malloc(3000), *b = NULL, *c = tp_malloc(5000);
	assert_true(a && c);
	assert_true(IN_USE() == 0 || IN_USE() >= before + 8000);
	TP_FREE_ALL(a, b, c);
	assert_int_equal(IN_USE(), before);
}
#undef IN_USE

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

/* tp_fmt_u64 / tp_fmt_i64 write what printf's %llu / %lld would, at every length and at the
 * extremes (INT64_MIN has no positive twin), and nothing past the digits. */
static void test_fmt_int(void **state)
{
	(void)state;
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < 4000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* every length: keep the low 4 * (i % 17) bits, then all 64 */
		int bits = i % 17 * 4;
		uint64_t u = bits >= 64 ? x : x & ((1ull << bits) - 1);
		int64_t v = (int64_t)u;
		if (i < 8) {
			static const int64_t edge[8] = {0,   9,  10,        99,
			                                100, -1, INT64_MIN, INT64_MAX};
			v = edge[i];
			u = i == 6 ? UINT64_MAX : (uint64_t)v;
		}
		char want[32], got[TP_FMT_INT_MAX + 2];
		memset(got, '#', sizeof got);
		snprintf(want, sizeof want, "%llu", (unsigned long long)u);
		size_t n = tp_fmt_u64(got, u);
		assert_int_equal(n, strlen(want));
		assert_memory_equal(got, want, n);
		assert_int_equal(got[n], '#');
		memset(got, '#', sizeof got);
		snprintf(want, sizeof want, "%lld", (long long)v);
		n = tp_fmt_i64(got, v);
		assert_int_equal(n, strlen(want));
		assert_memory_equal(got, want, n);
		assert_int_equal(got[n], '#');
	}
	struct tp_buf b;
	tp_buf_init(&b);
	tp_buf_i64(&b, INT64_MIN);
	tp_buf_putc(&b, ' ');
	tp_buf_u64(&b, UINT64_MAX);
	assert_string_equal(b.data, "-9223372036854775808 18446744073709551615");
	tp_buf_free(&b);
}

/* Reads up to n bytes of a small file; returns the count or -1. */
static int read_small(const char *path, char *out, size_t n)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return -1;
	size_t got = fread(out, 1, n, fp);
	fclose(fp);
	return (int)got;
}

/* Entries of a directory other than . and .. */
static int count_entries(const char *dir)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(dp));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dp);
	return n;
}

/* A write refused by the system (past RLIMIT_FSIZE, in a child): tp_afile_fail and
 * tp_afile_commit name the final path and the reason, never the temporary, which is gone. */
static void test_afile_fail(void **state)
{
	(void)state;
	char dir[] = "/tmp/tp_afile_fail.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/out.bin", dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {4096, 4096};
		static char big[3 << 20];
		struct tp_afile f;
		struct tp_diag d = {0}, dc = {0};
		int ok =
		    setrlimit(RLIMIT_FSIZE, &rl) == 0 && tp_afile_open(&f, path, &d) == TP_OK &&
		    tp_afile_write(&f, big, sizeof big) != 0 &&
		    tp_afile_fail(&f, &d) == TP_EOUTPUT && tp_afile_commit(&f, &dc) == TP_EOUTPUT;
		ok = ok && strncmp(d.msg, path, strlen(path)) == 0 &&
		     strstr(d.msg, "write failed: ") && strstr(d.msg, strerror(EFBIG)) &&
		     !strstr(d.msg, ".tmp-") && strstr(dc.msg, strerror(EFBIG)) &&
		     !strstr(dc.msg, ".tmp-");
		if (!ok)
			fprintf(stderr, "test_afile_fail: '%s' / '%s'\n", d.msg, dc.msg);
		_exit(ok ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	DIR *dd = opendir(dir);
	assert_non_null(dd);
	struct dirent *e;
	int left = 0;
	while ((e = readdir(dd)) != NULL)
		left += e->d_name[0] != '.';
	closedir(dd);
	assert_int_equal(left, 0);
	rmdir(dir);
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
	/* Replacing it (by an exchange where the filesystem has one): readers see the old bytes
	 * until the commit, a hard link to the old file keeps them, nothing else is left behind. */
	char *link_path = tp_path_join(dir, "old-link");
	assert_int_equal(link(path, link_path), 0);
	assert_int_equal(tp_afile_open(&f, path, &d), TP_OK);
	fputs("world!", f.fp);
	char got[16];
	assert_int_equal(read_small(path, got, sizeof got), 5);
	assert_memory_equal(got, "hello", 5);
	assert_int_equal(tp_afile_commit(&f, &d), TP_OK);
	assert_int_equal(read_small(path, got, sizeof got), 6);
	assert_memory_equal(got, "world!", 6);
	assert_int_equal(read_small(link_path, got, sizeof got), 5);
	assert_memory_equal(got, "hello", 5);
	assert_int_equal(count_entries(sub), 1);
	unlink(link_path);
	tp_free(link_path);
	/* A directory in the way: a clear error, and the temporary is gone. */
	char *in_way = tp_path_join(sub, "dir.txt");
	assert_int_equal(mkdir(in_way, 0755), 0);
	assert_int_equal(tp_afile_open(&f, in_way, &d), TP_OK);
	fputs("x", f.fp);
	assert_int_equal(tp_afile_commit(&f, &d), TP_EOUTPUT);
	assert_non_null(strstr(d.msg, "cannot rename into place"));
	assert_int_equal(count_entries(sub), 2);
	rmdir(in_way);
	tp_free(in_way);
	/* tp_afile_write cuts a large write into pieces: every byte arrives, in order. */
	size_t big = 2 * TP_WRITE_PIECE + TP_WRITE_PIECE / 2 + 3;
	unsigned char *pat = tp_malloc(big), *back = tp_malloc(big);
	assert_non_null(pat);
	assert_non_null(back);
	for (size_t i = 0; i < big; i++)
		pat[i] = (unsigned char)(i * 131 + (i >> 16));
	char *bigpath = tp_path_join(sub, "big.bin");
	assert_int_equal(tp_afile_open(&f, bigpath, &d), TP_OK);
	fputs("<", f.fp); /* a partly filled stdio buffer before the pieces */
	assert_int_equal(tp_afile_write(&f, pat, big), 0);
	assert_int_equal(tp_afile_commit(&f, &d), TP_OK);
	FILE *bf = fopen(bigpath, "rb");
	assert_non_null(bf);
	assert_int_equal(fgetc(bf), '<');
	assert_int_equal(fread(back, 1, big, bf), big);
	assert_int_equal(fgetc(bf), EOF);
	fclose(bf);
	assert_memory_equal(pat, back, big);
	unlink(bigpath);
	tp_free(bigpath);
	tp_free(pat);
	tp_free(back);
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
	TP_FREE_ALL(tmp, p2, path, sub);
}

/* Temporaries: a fresh name per call, created with the umask applied, and a name that already
 * exists (a stale temporary of a dead process with our pid) is skipped, never reused. */
static void test_temp_path(void **state)
{
	(void)state;
	struct tp_test_out out;
	tp_test_out_make(&out, "tp_common_test", "out.db");
	const char *path = out.path;
	mode_t old = umask(027);
	char *a = tp_temp_path_for(path);
	umask(old);
	assert_non_null(a);
	struct stat st;
	assert_int_equal(stat(a, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(st.st_size, 0);
	char want[64];
	snprintf(want, sizeof want, ".tmp-%lx.", (unsigned long)getpid());
	const char *dot = a + strlen(path);
	assert_memory_equal(dot, want, strlen(want));
	unsigned c = (unsigned)strtoul(dot + strlen(want), NULL, 10);
	/* Plant the next two names, then ask again: the third one comes back. */
	char *planted[2];
	for (unsigned i = 0; i < 2; i++) {
		size_t n = strlen(path) + 40;
		planted[i] = tp_malloc(n);
		assert_non_null(planted[i]);
		snprintf(planted[i], n, "%s.tmp-%lx.%u", path, (unsigned long)getpid(), c + 1 + i);
		FILE *fp = fopen(planted[i], "w");
		assert_non_null(fp);
		fputs("stale", fp);
		fclose(fp);
	}
	char *b = tp_temp_path_for(path);
	assert_non_null(b);
	assert_int_equal((unsigned)strtoul(b + strlen(path) + strlen(want), NULL, 10), c + 3);
	for (unsigned i = 0; i < 2; i++) { /* untouched */
		assert_int_equal(stat(planted[i], &st), 0);
		assert_int_equal(st.st_size, 5);
		unlink(planted[i]);
		tp_free(planted[i]);
	}
	unlink(a);
	unlink(b);
	tp_test_out_done(&out);
	tp_free(a);
	tp_free(b);
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

/* tp_sort_index against an insertion sort (stable by construction) of the same keys: sizes
 * around the merge widths, few distinct keys (so stability shows), sorted and reversed input. */
static int key_before(const void *ctx, uint32_t x, uint32_t y)
{
	const int *k = ctx;
	return k[x] < k[y];
}

static void test_sort_index(void **state)
{
	(void)state;
	enum { N = 300 };
	static int key[N];
	static uint32_t v[N], tmp[N], want[N];
	const size_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 64, 65, 127, 255, 300};
	uint32_t seed = 12345;
	for (int pattern = 0; pattern < 3; pattern++)
		for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
			size_t n = sizes[si];
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				key[i] = pattern == 0   ? (int)(seed >> 16) % 5
				         : pattern == 1 ? (int)i / 3
				                        : (int)(n - i) / 2;
				v[i] = want[i] = (uint32_t)i;
			}
			for (size_t i = 1; i < n; i++)
				for (size_t j = i; j > 0 && key[want[j]] < key[want[j - 1]]; j--) {
					uint32_t x = want[j];
					want[j] = want[j - 1];
					want[j - 1] = x;
				}
			tp_sort_index(v, tmp, n, key_before, key);
			for (size_t i = 0; i < n; i++)
				assert_int_equal(v[i], want[i]);
		}
}

struct ub_key {
	const int *v;
	int key;
};

static int ub_after(const void *ctx, size_t i)
{
	const struct ub_key *k = ctx;
	return k->v[i] > k->key;
}

/* tp_upper_bound against a linear scan: runs of equal keys, every key, sizes 0 to 10. */
static void test_upper_bound(void **state)
{
	(void)state;
	static const int v[] = {1, 1, 2, 4, 4, 4, 7, 9, 9, 12};
	for (size_t n = 0; n <= sizeof v / sizeof *v; n++)
		for (int key = -1; key <= 13; key++) {
			struct ub_key k = {v, key};
			size_t want = 0;
			while (want < n && v[want] <= key)
				want++;
			assert_int_equal(tp_upper_bound(n, ub_after, &k), want);
		}
	/* The int64 form over records: the field at an offset, and an empty table at NULL (an
	 * empty id map: no arithmetic on the null pointer, which clang's UBSan reports). */
	struct rec {
		int32_t pad;
		int64_t key;
	} r[sizeof v / sizeof *v];
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		r[i] = (struct rec){-1, v[i]};
	for (int key = -1; key <= 13; key++) {
		size_t want = 0;
		while (want < sizeof v / sizeof *v && v[want] <= key)
			want++;
		assert_int_equal(tp_upper_bound_i64(r, sizeof r / sizeof *r, sizeof *r,
		                                    offsetof(struct rec, key), key),
		                 want);
		assert_int_equal(
		    tp_upper_bound_i64(NULL, 0, sizeof *r, offsetof(struct rec, key), key), 0);
	}
}

/* tp_key_u64 keeps unsigned order across 2^63, where a plain cast would turn it around; in a
 * key, tp_cmp_keys then orders such ids as unsigned compares do. */
static void test_key_u64(void **state)
{
	(void)state;
	static const uint64_t v[] = {
	    0, 1, (UINT64_C(1) << 63) - 1, UINT64_C(1) << 63, UINT64_MAX - 1, UINT64_MAX};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		for (size_t j = 0; j < sizeof v / sizeof *v; j++) {
			int64_t a[] = {tp_key_u64(v[i])}, b[] = {tp_key_u64(v[j])};
			assert_int_equal(tp_cmp_keys(a, b, 1), (v[i] > v[j]) - (v[i] < v[j]));
		}
}

/* tp_walk over a table whose kept entries (odd keys are dropped) are displaced by at most
 * `d` places: within the window it hands out exactly the sorted order, with the last two
 * and forward steps by tp_walk_at; past the window tp_walk_ordered says no. */
static int walk_keep(const void *ctx, size_t i)
{
	return ((const int *)ctx)[i] % 2 == 0;
}

static int walk_before(const void *ctx, uint32_t x, uint32_t y)
{
	const int *k = ctx;
	return k[x] < k[y] || (k[x] == k[y] && x < y);
}

static void test_walk(void **state)
{
	(void)state;
	enum { N = 400 };
	static int key[N];
	static uint32_t want[N];
	const size_t disp[] = {0, 1, 5, TP_WALK_WINDOW - 1, TP_WALK_WINDOW, 3 * TP_WALK_WINDOW};
	for (size_t di = 0; di < sizeof disp / sizeof disp[0]; di++) {
		size_t d = disp[di], nw = 0;
		/* Keys 2 * i, each block of d + 1 entries reversed (entry i moves up to d places),
		 * plus an odd key (dropped) every 7th entry. */
		for (size_t i = 0; i < N; i++) {
			size_t b = i / (d + 1) * (d + 1), e = b + d < N - 1 ? b + d : N - 1;
			key[i] = 2 * (int)(b + e - i);
			if (i % 7 == 3)
				key[i] = 1;
		}
		for (size_t i = 0; i < N; i++)
			if (walk_keep(key, i))
				want[nw++] = (uint32_t)i;
		for (size_t i = 1; i < nw; i++)
			for (size_t j = i; j > 0 && walk_before(key, want[j], want[j - 1]); j--) {
				uint32_t x = want[j];
				want[j] = want[j - 1];
				want[j - 1] = x;
			}
		struct tp_walk w;
		tp_walk_start(&w, N, walk_keep, walk_before, key);
		size_t count = 0;
		int ordered = tp_walk_ordered(&w, &count);
		assert_int_equal(count, nw);
		/* The window holds TP_WALK_WINDOW kept entries: a reversed block of up to
		 * TP_WALK_WINDOW + 1 entries (one at least dropped) fits, one of 97 does not. */
		assert_int_equal(ordered, d <= TP_WALK_WINDOW);
		if (!ordered)
			continue;
		for (size_t k = 0; k < nw; k++) {
			assert_int_equal(tp_walk_at(&w, k), want[k]);
			if (k)
				assert_int_equal(tp_walk_at(&w, k - 1), want[k - 1]);
			assert_int_equal(tp_walk_at(&w, k), want[k]);
		}
		assert_int_equal(tp_walk_at(&w, 3), want[3]); /* further back: starts over */
		assert_int_equal(tp_walk_at(&w, nw - 1), want[nw - 1]);
	}
}

static void test_f64_to_i64(void **state)
{
	(void)state;
	int64_t v = 7;
	assert_int_equal(tp_f64_to_i64(1e300, &v), -1);
	assert_int_equal(tp_f64_to_i64(-1e300, &v), -1);
	assert_int_equal(tp_f64_to_i64(9223372036854775808.0, &v), -1);
	assert_int_equal(tp_f64_to_i64(0.0 / 0.0, &v), -1);
	assert_int_equal(v, 7);
	assert_int_equal(tp_f64_to_i64(-9223372036854775808.0, &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(tp_f64_to_i64(-2.9, &v), 0);
	assert_int_equal(v, -2);
	assert_true(tp_f64_to_i64_clamp(3.7e20, 0, INT64_C(1) << 53) == INT64_C(1) << 53);
	assert_true(tp_f64_to_i64_clamp(0.0 / 0.0, -5, 5) == -5);
	assert_true(tp_f64_to_i64_clamp(-1e300, -5, 5) == -5);
	assert_true(tp_f64_to_i64_clamp(4.9, -5, 5) == 4);
	assert_true(tp_f64_to_i64_clamp(9.3e18, INT64_MIN, INT64_MAX) == INT64_MAX);
}

static void test_open_regular(void **state)
{
	(void)state;
	char dir[] = "/tmp/tp_common_test_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char fifo[300], loop[300], file[300];
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	snprintf(loop, sizeof loop, "%s/loop", dir);
	snprintf(file, sizeof file, "%s/file", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(loop, loop), 0);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fputs("x", f);
	fclose(f);
	struct tp_diag d = {0};
	struct tp_file tf;
	/* A FIFO must be refused without blocking (no writer exists: open() would hang). */
	assert_int_equal(tp_file_load(&tf, fifo, &d), TP_EIO);
	assert_non_null(strstr(d.msg, "not a regular file (a FIFO)"));
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_file_load(&tf, loop, &d), TP_EIO);
	assert_non_null(strstr(d.msg, "symbolic link loop"));
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_file_load(&tf, dir, &d), TP_EIO);
	assert_non_null(strstr(d.msg, "a directory"));
	memset(&d, 0, sizeof d);
	assert_int_equal(tp_file_load(&tf, "/dev/zero", &d), TP_EIO);
	assert_non_null(strstr(d.msg, "a device"));
	assert_int_equal(tp_file_load(&tf, file, &d), TP_OK);
	assert_int_equal(tf.size, 1);
	tp_file_release(&tf);
	unlink(fifo);
	unlink(loop);
	unlink(file);
	rmdir(dir);
}

/* tp_ixmap: find-or-append over an array of values, with a weak hash (many collisions) and
 * growth from empty; every value is found at the index it was appended at. */
static size_t weak_hash(const void *ctx, size_t i)
{
	return (size_t)(((const uint32_t *)ctx)[i] % 7);
}

static size_t ix_find_or_add(struct tp_ixmap *m, uint32_t *v, size_t *n, uint32_t x)
{
	assert_int_equal(tp_ixmap_reserve(m, *n, weak_hash, v), TP_OK);
	assert_true(m->cap >= 2 * (*n + 1));
	size_t k;
	for (k = tp_ixmap_start(m, x % 7); m->slot[k]; k = tp_ixmap_next(m, k))
		if (v[m->slot[k] - 1] == x)
			return m->slot[k] - 1;
	v[*n] = x;
	m->slot[k] = (uint32_t)++ * n;
	return *n - 1;
}

/* tp_oa_clear empties every slot and nothing past them; no table at all is fine. */
static void test_oa_clear(void **state)
{
	(void)state;
	uint32_t v[9];
	for (size_t i = 0; i < 9; i++)
		v[i] = (uint32_t)i + 1;
	tp_oa_clear(v, 8, sizeof *v);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(v[i], 0);
	assert_int_equal(v[8], 9);
	tp_oa_clear(NULL, 0, sizeof *v);
}

static void test_ixmap(void **state)
{
	(void)state;
	enum { N = 3000 };
	static uint32_t v[N];
	size_t n = 0;
	struct tp_ixmap m = {NULL, 0};
	for (uint32_t x = 0; x < N; x++)
		assert_int_equal(ix_find_or_add(&m, v, &n, x * 13u), x);
	assert_int_equal(n, N);
	for (uint32_t x = 0; x < N; x++) /* found again, nothing appended */
		assert_int_equal(ix_find_or_add(&m, v, &n, x * 13u), x);
	assert_int_equal(n, N);
	tp_ixmap_free(&m);
	assert_null(m.slot);
	assert_int_equal(m.cap, 0);
}

/* Resident kB of the mapping that starts at `base` (/proc/self/smaps), -1 if not found. */
static long mapping_rss_kb(const void *base)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0;
	long kb = -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
			in = lo == (unsigned long)(uintptr_t)base;
			continue;
		}
		if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* 1 if the VMA holding address a carries the VmFlag `flag` (/proc/self/smaps), 0 if not, -1
 * if no mapping holds a or smaps cannot be read. */
static int vma_has_flag(uintptr_t a, const char *flag)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0, r = -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			r = 0;
			for (char *w = strtok(line + 8, " \n"); w; w = strtok(NULL, " \n"))
				if (strcmp(w, flag) == 0)
					r = 1;
			break;
		}
	}
	fclose(f);
	return r;
}

/* 1 if addresses a and b lie in one mapping (/proc/self/maps), 0 if not or unknown. */
static int same_vma(uintptr_t a, uintptr_t b)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return 0;
	char line[512];
	int r = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && a >= lo && a < hi) {
			r = b >= lo && b < hi;
			break;
		}
	}
	fclose(f);
	return r;
}

/* Blocks of 4 MiB or more (tp_malloc, tp_calloc, tp_realloc) ask for transparent huge pages
 * ("hg" in the mapping's VmFlags); a small block does not (the hint would mark the heap
 * around it), and the contents are what was written. The hint leaves a block that has a
 * mapping of its own in one mapping, so that realloc can still grow it in place or move it
 * with mremap rather than copy it. */
static void test_alloc_huge_hint(void **state)
{
	(void)state;
	const uintptr_t huge = (uintptr_t)2 << 20;
	char *small = tp_malloc(64 << 10);
	assert_non_null(small);
	int sm = vma_has_flag((uintptr_t)small, "hg");
	if (sm < 0) {
		tp_free(small);
		print_message("SKIPPED test_alloc_huge_hint: /proc/self/smaps has no VmFlags\n");
		return;
	}
	assert_int_equal(sm, 0);
	char *big = tp_malloc((size_t)6 << 20);
	assert_non_null(big);
	uintptr_t in = ((uintptr_t)big + huge - 1) & ~(huge - 1);
	int hg = vma_has_flag(in, "hg");
	if (hg == 0 && madvise((void *)in, huge, MADV_HUGEPAGE) != 0) {
		tp_free(big);
		tp_free(small);
		print_message(
		    "SKIPPED test_alloc_huge_hint: this kernel has no transparent huge pages\n");
		return;
	}
	assert_int_equal(hg, 1);
	assert_true(same_vma((uintptr_t)big, (uintptr_t)big + ((size_t)6 << 20) - 1));
	memset(big, 0x5A, (size_t)6 << 20);
	/* Grown by tp_realloc past its size: the new interior is hinted too, the bytes kept. */
	char *grown = tp_realloc(big, (size_t)24 << 20);
	assert_non_null(grown);
	uintptr_t last = ((uintptr_t)grown + ((size_t)24 << 20)) / huge * huge - huge;
	assert_int_equal(vma_has_flag(last, "hg"), 1);
	assert_true(same_vma((uintptr_t)grown, (uintptr_t)grown + ((size_t)24 << 20) - 1));
	assert_int_equal((unsigned char)grown[0], 0x5A);
	assert_int_equal((unsigned char)grown[((size_t)6 << 20) - 1], 0x5A);
	tp_free(grown);
	unsigned char *zero = tp_calloc((size_t)1 << 20, 8);
	assert_non_null(zero);
	in = ((uintptr_t)zero + huge - 1) & ~(huge - 1);
	assert_int_equal(vma_has_flag(in, "hg"), 1);
	for (size_t i = 0; i < ((size_t)8 << 20); i += 4093)
		assert_int_equal(zero[i], 0);
	tp_free(zero);
	tp_free(small);
}

/* tp_file_drop gives back exactly the whole pages inside the range, and the bytes read the
 * same afterwards (they come back from the file). */
static void test_file_drop(void **state)
{
	(void)state;
	long pg = sysconf(_SC_PAGESIZE);
	char path[] = "/tmp/tp_common_drop_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t n = 5 * (size_t)pg;
	unsigned char *want = malloc(n);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		want[i] = (unsigned char)(i * 7 + i / 4096);
	assert_int_equal(write(fd, want, n), (ssize_t)n);
	close(fd);
	struct tp_file tf;
	struct tp_diag d = {0};
	assert_int_equal(tp_file_load(&tf, path, &d), TP_OK);
	assert_true(tf.mapped);
	volatile unsigned sum = 0;
	for (size_t i = 0; i < n; i += (size_t)pg)
		sum += tf.data[i]; /* every page resident */
	long before = mapping_rss_kb(tf.data);
	if (before < 0) {
		print_message("SKIPPED test_file_drop RSS check: /proc/self/smaps unreadable\n");
	} else {
		assert_int_equal(before, 5 * pg / 1024);
		/* [1, n - 1): pages 1..3 lie wholly inside; 0 and 4 only partly, and stay. */
		tp_file_drop(&tf, 1, n - 1);
		assert_int_equal(mapping_rss_kb(tf.data), 2 * pg / 1024);
		tp_file_drop(&tf, 0, 0); /* empty range: nothing */
		assert_int_equal(mapping_rss_kb(tf.data), 2 * pg / 1024);
	}
	assert_memory_equal(tf.data, want, n);
	tp_file_release(&tf);
	/* An empty file is not a mapping: nothing to give back, no crash. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(tp_file_load(&tf, path, &d), TP_OK);
	assert_false(tf.mapped);
	tp_file_drop(&tf, 0, 100);
	tp_file_release(&tf);
	unlink(path);
	free(want);
}

#include "tp_test_main.h"
