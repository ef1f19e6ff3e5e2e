/*
 * strtab_test.c — unit tests for the string table (common/strtab.c): interning, unique
 * strings, and a batch of unique strings reserved at once and filled in later.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "common/common.h"
#include "testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_strtab(void **state)
{
	(void)state;
	struct tp_strtab t;
	assert_int_equal(tp_strtab_init(&t), TP_OK);
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
	/* Strings longer than a block get a block of their own; the ones around them stay in
	 * shared blocks, and lengths from one to several varint bytes read back exactly. */
	size_t big_n = ((size_t)1 << TP_STRTAB_BLOCK_BITS) + 3;
	char *big = malloc(big_n);
	assert_non_null(big);
	for (size_t i = 0; i < big_n; i++)
		big[i] = (char)('a' + i % 26);
	uint32_t nb0 = t.nblocks, ib, ia, ic, i127, i128;
	assert_int_equal(tp_strtab_intern(&t, "before", 6, &ia), TP_OK);
	assert_int_equal(tp_strtab_intern(&t, big, big_n, &ib), TP_OK);
	assert_int_equal(tp_strtab_intern(&t, "after", 5, &ic), TP_OK);
	assert_int_equal(t.nblocks, nb0 + 2); /* the big one's, then a fresh shared one */
	assert_int_equal(strlen(tp_strtab_get(&t, ib)), big_n);
	assert_memory_equal(tp_strtab_get(&t, ib), big, big_n);
	assert_true(tp_strtab_find(&t, big, big_n, &f));
	assert_int_equal(f, ib);
	big[big_n - 1] = 'A';
	assert_false(tp_strtab_find(&t, big, big_n, &f));
	assert_string_equal(tp_strtab_get(&t, ia), "before");
	assert_string_equal(tp_strtab_get(&t, ic), "after");
	assert_int_equal(tp_strtab_add_unique(&t, big, 127, &i127), TP_OK);
	assert_int_equal(tp_strtab_add_unique(&t, big, 128, &i128), TP_OK);
	assert_int_equal(strlen(tp_strtab_get(&t, i127)), 127);
	assert_int_equal(strlen(tp_strtab_get(&t, i128)), 128);
	assert_false(tp_strtab_find(&t, big, 128, &f));
	/* Embedded NULs are part of the string: its length is stored, not searched for. */
	assert_int_equal(tp_strtab_intern(&t, "x\0y", 3, &ia), TP_OK);
	assert_true(tp_strtab_find(&t, "x\0y", 3, &f));
	assert_false(tp_strtab_find(&t, "x", 1, &f));
	assert_string_equal(tp_strtab_get(&t, 9999999), "");
	free(big);
	tp_strtab_free(&t);
}

/* A reserved batch gets the ids and strings n tp_strtab_add_unique calls give, also when it
 * spans blocks, holds a string bigger than a block and the table interns (and rehashes, which
 * leave the batch out of the hash) before the strings are filled in; a failed reservation
 * leaves the table as it was. */
static void test_strtab_batch(void **state)
{
	(void)state;
	struct tp_strtab t, ref;
	assert_int_equal(tp_strtab_init(&t), TP_OK);
	assert_int_equal(tp_strtab_init(&ref), TP_OK);
	enum { N = 40 };
	size_t blk = (size_t)1 << TP_STRTAB_BLOCK_BITS;
	uint32_t len[N];
	size_t total = 0;
	for (int i = 0; i < N; i++) {
		len[i] = (uint32_t)(i == 7 ? blk + 5 : i % 3 ? (size_t)100000 + i : (size_t)1 + i);
		total += len[i];
	}
	char *bytes = malloc(total);
	assert_non_null(bytes);
	for (size_t i = 0; i < total; i++)
		bytes[i] = (char)('a' + i % 23);
	uint32_t x, first, id;
	assert_int_equal(tp_strtab_intern(&t, "x", 1, &x), TP_OK);
	assert_int_equal(tp_strtab_intern(&ref, "x", 1, &x), TP_OK);
	struct tp_strtab_run *run = NULL;
	size_t nrun, cap = 0;
	assert_int_equal(tp_strtab_reserve_unique(&t, len, N, &first, &run, &nrun, &cap), TP_OK);
	assert_true(nrun > 2 && nrun < N);
	char buf[16];
	/* Until the fill the places hold anything; here, a findable "" at each run's start. */
	for (size_t r = 0; r < nrun; r++)
		run[r].at[0] = 0;
	uint32_t nslots = t.nslots;
	for (int i = 0; i < 600; i++) { /* rehashes skip the reserved strings, not yet written */
		snprintf(buf, sizeof buf, "k%d", i);
		assert_int_equal(tp_strtab_intern(&t, buf, strlen(buf), &id), TP_OK);
	}
	assert_true(t.nslots > nslots);
	for (uint32_t k = 0; k < t.nslots; k++)
		assert_false(t.slots[k] > first && t.slots[k] <= first + N);
	tp_strtab_fill_unique(run, nrun, len, bytes);
	const char *s = bytes;
	for (int i = 0; i < N; i++) {
		assert_int_equal(tp_strtab_add_unique(&ref, s, len[i], &id), TP_OK);
		assert_int_equal(first + (uint32_t)i, id);
		assert_int_equal(strlen(tp_strtab_get(&t, id)), len[i]);
		assert_memory_equal(tp_strtab_get(&t, id), s, len[i]);
		assert_false(tp_strtab_find(&t, s, len[i], &x));
		s += len[i];
	}
	assert_true(tp_strtab_find(&t, "k599", 4, &x));
	assert_string_equal(tp_strtab_get(&t, x), "k599");
	/* An empty string cannot be reserved: nothing is added, and the table goes on. */
	uint32_t count = t.count, nblocks = t.nblocks;
	len[N - 1] = 0;
	assert_int_equal(tp_strtab_reserve_unique(&t, len, N, &first, &run, &nrun, &cap),
	                 TP_ENOMEM);
	assert_int_equal(t.count, count);
	assert_int_equal(t.nblocks, nblocks);
	assert_int_equal(nrun, 0);
	assert_int_equal(tp_strtab_add_unique(&t, "after", 5, &id), TP_OK);
	assert_int_equal(id, count);
	assert_string_equal(tp_strtab_get(&t, id), "after");
	free(run);
	free(bytes);
	tp_strtab_free(&t);
	tp_strtab_free(&ref);
}

/* Two batches reserved back to back, then interned strings (rehashes) before either is
 * filled: both are left out of the hash, the strings around them are found. */
static void test_strtab_batches_adjacent(void **state)
{
	(void)state;
	struct tp_strtab t;
	assert_int_equal(tp_strtab_init(&t), TP_OK);
	const uint32_t len[3] = {3, 1, 4};
	struct tp_strtab_run *run[2] = {NULL, NULL};
	size_t nrun[2], cap[2] = {0, 0};
	uint32_t first[2], id, x;
	assert_int_equal(tp_strtab_intern(&t, "a", 1, &x), TP_OK);
	for (int b = 0; b < 2; b++) {
		assert_int_equal(
		    tp_strtab_reserve_unique(&t, len, 3, &first[b], &run[b], &nrun[b], &cap[b]),
		    TP_OK);
		for (size_t r = 0; r < nrun[b]; r++)
			run[b][r].at[0] = 0; /* a findable "" until the fill */
	}
	assert_int_equal(first[1], first[0] + 3);
	char buf[16];
	for (int i = 0; i < 300; i++) {
		snprintf(buf, sizeof buf, "z%d", i);
		assert_int_equal(tp_strtab_intern(&t, buf, strlen(buf), &id), TP_OK);
	}
	for (uint32_t k = 0; k < t.nslots; k++)
		assert_false(t.slots[k] > first[0] && t.slots[k] <= first[1] + 3);
	assert_true(tp_strtab_find(&t, "a", 1, &id));
	assert_int_equal(id, x);
	assert_true(tp_strtab_find(&t, "", 0, &id));
	assert_int_equal(id, 0);
	tp_strtab_fill_unique(run[0], nrun[0], len, "abcdefgh");
	tp_strtab_fill_unique(run[1], nrun[1], len, "ijklmnop");
	assert_string_equal(tp_strtab_get(&t, first[0] + 2), "efgh");
	assert_string_equal(tp_strtab_get(&t, first[1]), "ijk");
	assert_true(tp_strtab_find(&t, "z299", 4, &id));
	free(run[0]);
	free(run[1]);
	tp_strtab_free(&t);
}

#include "tp_test_main.h"
