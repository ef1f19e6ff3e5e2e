/*
 * text_test.c — unit tests for the text-safety layer (text.c): the UTF-8 decoder, the cleaning
 * rules of each destination, the word-at-a-time safety scan, JSON string escaping of invalid
 * UTF-8 and the HTML character references.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "common/common.h"

#include <stdint.h>
#include <string.h>

static const char *clean_str(struct tp_buf *b, const char *s, unsigned flags, size_t maxb)
{
	tp_buf_free(b);
	tp_buf_init(b);
	tp_text_put(b, s, strlen(s), flags, maxb, 0);
	return b->data ? b->data : "";
}

#define FFFD "\xEF\xBF\xBD"

/* One decode: the bytes, how many tp_utf8_decode may read, what it consumes and the code
 * point it gives (-1: invalid). */
struct utf8_case {
	const char *bytes;
	size_t len;
	size_t used;
	int32_t cp;
};

static const struct utf8_case utf8_cases[] = {
    /* Valid forms at every length boundary. */
    {"\xC2\x80", 2, 2, 0x80},
    {"\xE0\xA0\x80", 3, 3, 0x800},
    {"\xF4\x8F\xBF\xBF", 4, 4, 0x10FFFF},
    {"\xEF\xBF\xBF", 3, 3, 0xFFFF},
    /* Overlong forms, surrogates, > U+10FFFF, bad lead bytes: invalid, and the maximal
     * subpart is what one U+FFFD replaces (Unicode §3.9). */
    {"\xC0\xAF", 2, 1, -1},
    {"\xC1\xBF", 2, 1, -1},
    {"\xE0\x80\xAF", 3, 1, -1},
    {"\xED\xA0\x80", 3, 1, -1},
    {"\xF4\x90\x80\x80", 4, 1, -1},
    {"\xF5\x80\x80\x80", 4, 1, -1},
    {"\xFF", 1, 1, -1},
    /* Cut short: the lead and its good continuations form one subpart. */
    {"\xE2\x82", 2, 2, -1},
    {"\xF0\x9F\x98x", 4, 3, -1},
};

static void test_utf8_decode(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof utf8_cases / sizeof utf8_cases[0]; i++) {
		const struct utf8_case *c = &utf8_cases[i];
		int32_t cp;
		assert_int_equal(tp_utf8_decode((const unsigned char *)c->bytes, c->len, &cp),
		                 c->used);
		assert_int_equal(cp, c->cp);
	}
}

static void test_text_destinations(void **state)
{
	(void)state;
	struct tp_buf b;
	tp_buf_init(&b);
	/* HTML: the five characters with a meaning in text and quoted attributes, nothing else. */
	assert_string_equal(tp_html_ref('&'), "&amp;");
	assert_string_equal(tp_html_ref('<'), "&lt;");
	assert_string_equal(tp_html_ref('>'), "&gt;");
	assert_string_equal(tp_html_ref('"'), "&quot;");
	assert_string_equal(tp_html_ref('\''), "&#39;");
	assert_null(tp_html_ref('a'));
	assert_null(tp_html_ref(';'));
	/* Repair only: controls kept (JSON/SQLite/Perfetto escape them themselves). */
	assert_string_equal(clean_str(&b,
	                              "a\xC0\xAF"
	                              "b\xED\xA0\x80"
	                              "c\x1b",
	                              TP_TEXT_UTF8, 0),
	                    "a" FFFD FFFD "b" FFFD FFFD FFFD "c\x1b");
	/* Terminal / summary.txt: ESC, BEL, DEL and C1 CSI (U+009B) never pass; \n and \t do. */
	assert_string_equal(clean_str(&b,
	                              "x\x1b[31mred\x07\x7f\xC2\x9B"
	                              "1m\n\tok",
	                              TP_TEXT_CTRL, 0),
	                    "x" FFFD "[31mred" FFFD FFFD FFFD "1m\n\tok");
	/* Terminal text: CR too (it could overwrite what the line showed). */
	assert_string_equal(clean_str(&b, "ok\rFAKE\n", TP_TEXT_TERM, 0), "ok" FFFD "FAKE\n");
	assert_string_equal(clean_str(&b, "ok\rFAKE\n", TP_TEXT_CTRL, 0), "ok\rFAKE\n");
	/* One-line field: \n \r \t too. */
	assert_string_equal(clean_str(&b, "a\nb\rc\td", TP_TEXT_CTRL | TP_TEXT_LINE, 0),
	                    "a" FFFD "b" FFFD "c" FFFD "d");
	/* XML: U+FFFE/U+FFFF dropped, C0 but tab/newline replaced, > U+10FFFF replaced. */
	assert_string_equal(clean_str(&b,
	                              "a\xEF\xBF\xBE"
	                              "b\xEF\xBF\xBF"
	                              "c\x01\t\n\xF7\xBF\xBF\xBF",
	                              TP_TEXT_XML, 0),
	                    "abc" FFFD "\t\n" FFFD FFFD FFFD FFFD);
	/* Length limits cut on character boundaries: "é" is 2 bytes, never split. */
	assert_string_equal(clean_str(&b, "ab\xC3\xA9\xC3\xA9", TP_TEXT_UTF8, 3), "ab");
	assert_string_equal(clean_str(&b, "ab\xC3\xA9\xC3\xA9", TP_TEXT_UTF8, 4), "ab\xC3\xA9");
	tp_buf_free(&b);
	tp_buf_init(&b);
	assert_int_equal(tp_text_put(&b, "\xC3\xA9\xC3\xA9z", 5, TP_TEXT_UTF8, 0, 2), 2);
	assert_string_equal(b.data, "\xC3\xA9\xC3\xA9");
	tp_buf_free(&b);
	assert_true(tp_text_is_safe("plain \xC3\xA9", 8, TP_TEXT_CTRL | TP_TEXT_XML));
	assert_false(tp_text_is_safe("\xEF\xBF\xBE", 3, TP_TEXT_XML));
	assert_true(tp_text_is_safe("\xEF\xBF\xBE", 3, TP_TEXT_UTF8));
	/* A fixed buffer (xlsx title): 255 bytes at most, no half character at the end. */
	char big[400], dst[256];
	memset(big, 0, sizeof big);
	for (size_t i = 0; i + 2 < 380; i += 2)
		memcpy(big + i, "\xC3\xA9", 2);
	tp_text_copy(dst, sizeof dst, big, TP_TEXT_XML);
	assert_int_equal(strlen(dst), 254);
	assert_true(tp_text_is_safe(dst, strlen(dst), TP_TEXT_XML));
	/* tp_buf_clean rewrites a report in place from an offset. */
	tp_buf_init(&b);
	tp_buf_puts(&b, "keep\x1b|");
	tp_buf_puts(&b, "x\x1b[2Jy\n");
	assert_int_equal(tp_buf_clean(&b, 6, TP_TEXT_CTRL), 1);
	assert_string_equal(b.data, "keep\x1b|x" FFFD "[2Jy\n");
	assert_int_equal(tp_buf_clean(&b, 6, TP_TEXT_CTRL), 0);
	tp_buf_free(&b);
}

/* tp_text_is_safe reads printable ASCII a word at a time: a byte that is not printable must be
 * seen wherever it sits in the word (first, middle, last byte, in the byte-wise tail), and the
 * answer must be the byte-wise one for each destination. */
static void test_text_safe_word_positions(void **state)
{
	(void)state;
	static const struct {
		unsigned char b;
		int utf8, ctrl; /* expected for TP_TEXT_UTF8 / TP_TEXT_CTRL */
	} cases[] = {{0x00, 1, 0}, {0x1F, 1, 0}, {0x20, 1, 1}, {0x7E, 1, 1}, {0x7F, 1, 0},
	             {0x80, 0, 0}, {0xC3, 0, 0}, {0xFF, 0, 0}, {'\t', 1, 1}};
	char buf[24];
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (size_t at = 0; at < 19; at++) {
			memset(buf, 'a', 19);
			buf[at] = (char)cases[c].b;
			assert_int_equal(tp_text_is_safe(buf, 19, TP_TEXT_UTF8), cases[c].utf8);
			assert_int_equal(tp_text_is_safe(buf, 19, TP_TEXT_CTRL), cases[c].ctrl);
		}
	/* A valid two-byte sequence across a word boundary, and one cut by the end. */
	for (size_t at = 0; at < 18; at++) {
		memset(buf, 'a', 19);
		buf[at] = (char)0xC3;
		buf[at + 1] = (char)0xA9;
		assert_true(tp_text_is_safe(buf, 19, TP_TEXT_UTF8));
		assert_false(tp_text_is_safe(buf, at + 1, TP_TEXT_UTF8));
	}
}

static void test_json_str_utf8(void **state)
{
	(void)state;
	struct tp_buf b;
	tp_buf_init(&b);
	/* Invalid UTF-8 (bad lead, overlong, surrogate, > U+10FFFF, truncated at the end) becomes
	 * \ufffd; valid multibyte text passes as is; U+2028/2029 are escaped for <script>. */
	tp_buf_json_str(&b, "\xFF"
	                    "a\xC0\x80"
	                    "\xED\xB0\x80"
	                    "\xF4\x90\x80\x80"
	                    "\xE2\x80\xA8\xE2\x80\xA9"
	                    "\xE6\x97\xA5\xF0\x9F\x98\x80"
	                    "\xE2\x82");
	assert_string_equal(b.data,
	                    "\\ufffda\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
	                    "\\ufffd\\u2028\\u2029\xE6\x97\xA5\xF0\x9F\x98\x80\\ufffd");
	tp_buf_free(&b);
}

#include "tp_test_main.h"
