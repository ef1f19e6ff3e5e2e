/*
 * html_test.c — unit tests of the result.html writer: hostile strings cannot leave the JSON
 * data element, the title is HTML-escaped, output is deterministic, the data holds the lanes
 * and columns that were built, a capture's page (and only a capture's) has its counter lanes,
 * tables and script, and out-of-memory at any allocation leaves no file behind.
 * (The page's behaviour in a browser is tested by tests/browser/.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers/sophgo/sophgo.h"
#include "testutil.h"
#include "writers/html/html.h"
#include "writers/html/html_int.h"

#define EVIL "</script><img src=x onerror=alert(1)><!--"

extern const unsigned char tp_html_app_js[];
extern const unsigned char tp_html_app_css[];

/* The page every test writes (set up once). */
static char path[256];

/* A BM1688 profile with one device of `cores` cores; `chip`: with the chip table. */
static struct tp_profile *bm1688(int cores, int chip)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->arch = TP_ARCH_BM1688;
	if (chip)
		p->chip = tp_chip_by_arch(TP_ARCH_BM1688);
	tp_profile_add_device(p, "dev", 0, cores);
	return p;
}

/* Writes the page of `p` (cores < max_cores, 0 = all) to `path` and returns its text (free
 * it); *n (may be NULL) gets its length. */
static char *page_of(const struct tp_profile *p, size_t max_cores, size_t *n)
{
	struct tp_diag d = {0};
	assert_int_equal(tp_html_write_file(p, NULL, path, max_cores, 1, &d), TP_OK);
	char *text = tp_test_slurp(path, n);
	assert_non_null(text);
	return text;
}

static struct tp_profile *make(void)
{
	struct tp_profile *p = bm1688(1, 1);
	p->net_name = tp_profile_str(p, EVIL);
	int tiu = tp_profile_add_track(p, 0, 0, TP_TRACK_TIU, "TIU", 900);
	int gdma = tp_profile_add_track(p, 0, 0, TP_TRACK_GDMA, "GDMA", 750);
	struct tp_layer l;
	memset(&l, 0, sizeof l);
	l.type = tp_profile_str(p, "Conv2D");
	l.name = tp_profile_str(p, EVIL);
	l.begin_ns = 100;
	l.end_ns = 900;
	assert_int_equal(tp_profile_add_layer(p, &l), 0);
	for (int i = 0; i < 3; i++) {
		struct tp_slice *s = tp_track_push(p, tiu);
		s->start_ns = 100 + i * 300;
		tp_slice_set_end(p, &p->tracks[tiu], s, s->start_ns + 200);
		s->cycles = 180;
		s->cmd_id = (uint32_t)i + 1;
		tp_slice_set_name(p, &p->tracks[tiu], s,
		                  tp_profile_str(p, i == 1 ? EVIL : "conv.normal"));
		s->layer = 0;
		tp_args_begin(p);
		tp_args_add_str(p, "uArch Rate", "50.0%");
		s->args = tp_args_end(p);
		s = tp_track_push(p, gdma);
		s->start_ns = 50 + i * 300;
		tp_slice_set_end(p, &p->tracks[gdma], s, s->start_ns + 100);
		s->cycles = 75;
		tp_slice_set_bytes(p, &p->tracks[gdma], s,
		                   1600); /* 16 GB/s over 100 ns = half of BM1688's 32 GB/s */
		s->cmd_id = (uint32_t)i + 1;
		tp_slice_set_name(p, &p->tracks[gdma], s, tp_profile_str(p, "tensorLd"));
		tp_slice_set_dir(p, &p->tracks[gdma], s, TP_DIR_DDR_TO_LMEM);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

/* The page of make()'s profile (malloc'ed, caller frees). */
static char *make_page(void)
{
	struct tp_profile *p = make();
	char *s = page_of(p, 0, NULL);
	tp_profile_free(p);
	return s;
}

static size_t count(const char *hay, const char *needle)
{
	size_t c = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		c++;
	return c;
}

/* Decodes the binary column "KEY" of the JSON object starting at `obj` (searched up to `end`,
 * after a nested "lod" object) into out[0..n-1], independently of html.c: mode letter r/d/l/m
 * (upper case: wide), base64, zigzag LEB128 varints, d/m differences, l/m (value, run) pairs.
 * A plain number is that value n times. Returns 0 when the key is absent (all zero), 1 when
 * found, -1 when malformed. */
static int column(const char *obj, const char *end, const char *key, int64_t *out, size_t n)
{
	char pat[64];
	const char *lod = strstr(obj, "\"lod\":{");
	if (lod && lod < end)
		obj = strchr(lod, '}');
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *k = strstr(obj, pat);
	for (size_t i = 0; i < n; i++)
		out[i] = 0;
	if (!k || k >= end)
		return 0;
	k += strlen(pat);
	if (*k != '"') {
		long long v = strtoll(k, NULL, 10);
		for (size_t i = 0; i < n; i++)
			out[i] = v;
		return 1;
	}
	char mode = (char)(k[1] | 32);
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint64_t acc = 0, vals[64];
	unsigned shift = 0, bits = 0, nbits = 0;
	size_t nv = 0;
	for (const char *q = k + 2; *q && *q != '"'; q++) {
		const char *at = *q == '=' ? NULL : strchr(abc, *q);
		if (!at)
			continue;
		bits = bits << 6 | (unsigned)(at - abc);
		nbits += 6;
		if (nbits < 8)
			continue;
		nbits -= 8;
		unsigned byte = bits >> nbits & 255;
		bits &= (1u << nbits) - 1;
		acc |= (uint64_t)(byte & 127) << shift;
		shift += 7;
		if (byte & 128)
			continue;
		if (nv == 64)
			return -1;
		vals[nv++] = acc;
		acc = 0;
		shift = 0;
	}
	size_t o = 0;
	int64_t prev = 0;
	int runs = mode == 'l' || mode == 'm', delta = mode == 'd' || mode == 'm';
	for (size_t i = 0; i < nv; i += runs ? 2 : 1) {
		int64_t v = (int64_t)(vals[i] >> 1) ^ -(int64_t)(vals[i] & 1);
		/* Run lengths are zigzag varints too (b64_varint; web/lanes.js decCol). */
		uint64_t times = runs ? (i + 1 < nv ? vals[i + 1] >> 1 : 0) : 1;
		for (uint64_t t = 0; t < times; t++) {
			if (o == n)
				return -1;
			prev = delta ? prev + v : v;
			out[o++] = prev;
		}
	}
	return o == n ? 1 : -1;
}

/* The end of the lane object starting at `lane`: the next lane or the end of the lanes. */
static const char *lane_end(const char *lane)
{
	const char *e = strstr(lane + 1, "{\"kind\":");
	return e ? e : strstr(lane, "],\"argsets\"");
}

#define ASSERT_COL(obj, end, key, ...)                                                             \
	do {                                                                                       \
		static const int64_t want_[] = {__VA_ARGS__};                                      \
		int64_t got_[sizeof want_ / sizeof *want_];                                        \
		assert_int_equal(column(obj, end, key, got_, sizeof want_ / sizeof *want_), 1);    \
		assert_memory_equal(got_, want_, sizeof want_);                                    \
	} while (0)

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof path, "/tmp/tp_html_test_%d.html", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_escaping(void **state)
{
	(void)state;
	char *s = make_page();
	/* Exactly the two script elements of the template end: the data and the page script. */
	assert_int_equal(count(s, "</script"), 2);
	/* Raw "<img" may only appear inside the JSON data element (where it is inert text). */
	char *data = strstr(s, "id=\"tp-data\">");
	assert_non_null(data);
	char *data_end = strstr(data, "</script");
	assert_non_null(data_end);
	for (char *q = strstr(s, "<img"); q; q = strstr(q + 1, "<img"))
		assert_true(q > data && q < data_end);
	assert_int_equal(count(s, "<!--"), 1); /* the template's own comment */
	/* The title carries the net name as escaped text. */
	assert_non_null(strstr(s, "<title>tpuprof: &lt;/script&gt;&lt;img src=x "
	                          "onerror=alert(1)&gt;&lt;!-- on BM1688</title>"));
	/* In the JSON the name is there, with "</" and "<!--" escaped. */
	assert_non_null(
	    strstr(s, "\"net\":\"\\u003c/script><img src=x onerror=alert(1)>\\u003c!--\""));
	free(s);
}

static void test_content(void **state)
{
	(void)state;
	char *s = make_page();
	/* Lanes in display order: the Layer lane made from the layer table, GDMA, then TIU. */
	char *layer = strstr(s, "{\"kind\":\"Layer\"");
	char *gdma = strstr(s, "{\"kind\":\"GDMA\"");
	char *tiu = strstr(s, "{\"kind\":\"TIU\"");
	assert_non_null(layer);
	assert_non_null(gdma);
	assert_non_null(tiu);
	assert_true(layer < gdma && gdma < tiu);
	/* GDMA (starts 50, 350, 650; 100 ns each): "ts" = gaps from the previous end, "dur" left
	 * out because every duration equals its 75 cycles at 750 MHz, heights = 16 GB/s of 32 =
	 * 500 for every command, so one number. */
	const char *gdma_end = lane_end(gdma), *tiu_end = lane_end(tiu);
	int64_t v[3];
	ASSERT_COL(gdma, gdma_end, "ts", 0, 200, 200);
	assert_int_equal(column(gdma, gdma_end, "dur", v, 3), 0);
	/* Heights are derived by the page for DMA and TIU lanes ("hd":1, no "h" column) from
	 * the bytes (one number: 1600 for all) and cycles (75) over "bwScale" 32. */
	assert_non_null(strstr(gdma, "\"hd\":1"));
	assert_int_equal(column(gdma, gdma_end, "h", v, 3), 0);
	assert_non_null(strstr(gdma, "\"by\":1600,"));
	assert_non_null(strstr(gdma, "\"cyc\":75"));
	assert_non_null(strstr(s, "\"bwScale\":32,"));
	/* TIU: uArch Rate 50% -> "ua" 5001 (the page's height 500); all-zero columns (bytes,
	 * dir) left out. */
	ASSERT_COL(tiu, tiu_end, "ua", 5001);
	assert_int_equal(column(tiu, tiu_end, "by", v, 1), 0);
	assert_int_equal(column(tiu, tiu_end, "dir", v, 1), 0);
	/* The page's own assets never close their element early. */
	assert_null(strstr((const char *)tp_html_app_js, "</script"));
	assert_null(strstr((const char *)tp_html_app_css, "</style"));
	free(s);
}

/* TIU bars from the cost model: height = Alg Ops / uArch Ops, the rate and ops travel in the
 * "ua" / "ao" / "uo" columns; a track without descriptors says unknown (ua 0), not 100 %. */
static void test_cost_heights(void **state)
{
	(void)state;
	struct tp_profile *p = bm1688(2, 0);
	int t0 = tp_profile_add_track(p, 0, 0, TP_TRACK_TIU, "TIU", 900);
	int t1 = tp_profile_add_track(p, 0, 1, TP_TRACK_TIU, "TIU", 900);
	static const uint64_t alg[] = {235225088, 300, 100};
	static const uint64_t uarch[] = {2516828160u, 1000, 100};
	for (int i = 0; i < 3; i++) {
		for (int tr = 0; tr < 2; tr++) {
			struct tp_slice *s = tp_track_push(p, tr ? t1 : t0);
			s->start_ns = 100 + i * 300;
			tp_slice_set_end(p, &p->tracks[tr ? t1 : t0], s, s->start_ns + 200);
			s->cycles = 180;
			s->cmd_id = (uint32_t)i + 1;
			tp_slice_set_name(p, &p->tracks[tr ? t1 : t0], s,
			                  tp_profile_str(p, "conv.normal"));
		}
		assert_int_equal(
		    tp_track_set_cost(
		        p, t0, (size_t)i,
		        &(struct tp_cost){.alg_ops = alg[i], .uarch_ops = uarch[i], .valid = 1}),
		    TP_OK);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	size_t n;
	char *s = page_of(p, 0, &n);
	char *c0 = strstr(s, "{\"kind\":\"TIU\",\"label\":\"TIU\",\"dev\":0,\"core\":0");
	char *c1 = strstr(s, "{\"kind\":\"TIU\",\"label\":\"TIU\",\"dev\":0,\"core\":1");
	assert_non_null(c0);
	assert_non_null(c1);
	const char *e0 = lane_end(c0), *e1 = lane_end(c1);
	/* 9.35 % (the first resnet50 conv), 30 %, 100 %: the page's heights 93, 300, 1000 */
	ASSERT_COL(c0, e0, "ua", 936, 3001, 10001);
	ASSERT_COL(c0, e0, "ao", 235225088, 300, 100);
	ASSERT_COL(c0, e0, "uo", 2516828160, 1000, 100);
	/* The coarse level of detail carries the tallest height per bucket: 1000 somewhere. */
	assert_non_null(strstr(c0, "\"lod\":{\"n\":4096,\"h\":\""));
	/* Core 1: no descriptors, rate unknown (the column is left out: all 0, full height). */
	int64_t v[3];
	assert_int_equal(column(c1, e1, "ua", v, 3), 0);
	free(s);
	tp_profile_free(p);
}

/* The LOCAL memory chart gets records from the commands (9 elements, engine last) next to the
 * compiler's tensor records. */
static void test_cmd_lmem(void **state)
{
	(void)state;
	struct tp_profile *p = bm1688(1, 1); /* 32 lanes of 128 KiB */
	int g = tp_profile_add_track(p, 0, 0, TP_TRACK_GDMA, "GDMA", 750);
	struct tp_slice *s = tp_track_push(p, g);
	s->start_ns = 1000;
	tp_slice_set_end(p, &p->tracks[g], s, 1500);
	s->cycles = 375;
	s->cmd_id = 7;
	tp_slice_set_bytes(p, &p->tracks[g], s, 50176);
	tp_slice_set_dir(p, &p->tracks[g], s, TP_DIR_DDR_TO_LMEM);
	tp_slice_set_name(p, &p->tracks[g], s, tp_profile_str(p, "tensorLd"));
	tp_args_begin(p);
	tp_test_add_dma_shape(p, "dst", 131072 * 3 + 8192, 1, 64, 28, 28);
	tp_args_add_uint(p, "src_data_format", 0);
	s->args = tp_args_end(p);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	char *page = page_of(p, 0, NULL);
	/* begin 0 (span start), end 500, lane offset 8192, 1568 bytes per lane, write, no layer,
	 * core 0, cmd 7, engine GDMA (2) */
	const char *lm = strstr(page, "\"lmem\":{");
	assert_non_null(lm);
	const char *lm_end = strstr(lm, "\"gmem\"");
	assert_non_null(strstr(lm, "\"recs\":{\"n\":1,"));
	ASSERT_COL(lm, lm_end, "b", 0);
	ASSERT_COL(lm, lm_end, "e", 500);
	ASSERT_COL(lm, lm_end, "a", 8192);
	ASSERT_COL(lm, lm_end, "sz", 1568);
	ASSERT_COL(lm, lm_end, "w", 1);
	ASSERT_COL(lm, lm_end, "ly", -1);
	ASSERT_COL(lm, lm_end, "co", 0);
	ASSERT_COL(lm, lm_end, "id", 7);
	ASSERT_COL(lm, lm_end, "en", 2);
	assert_non_null(strstr(lm, "\"cmdDropped\":0}"));
	free(page);
	tp_profile_free(p);
}

/* The same page for the same profile written twice, and for the same profile built again. */
static void test_deterministic(void **state)
{
	(void)state;
	struct tp_profile *p = make(), *again = make();
	size_t n1, n2, n3;
	char *a = page_of(p, 0, &n1);
	char *b = page_of(p, 0, &n2);
	char *c = page_of(again, 0, &n3);
	assert_int_equal(n1, n2);
	assert_memory_equal(a, b, n1);
	assert_int_equal(n1, n3);
	assert_memory_equal(a, c, n1);
	free(a);
	free(b);
	free(c);
	tp_profile_free(p);
	tp_profile_free(again);
}

/* A profile whose page has many parts: per core a TIU and a GDMA lane longer than a part's
 * rows, names first used late in a lane, integer argument sets of two shapes among JSON ones
 * over several ranges of set ids, LOCAL records from the commands, and more layers than a
 * part's rows (no Layer track: Layer lanes made from the table). */
static struct tp_profile *many_parts(void)
{
	enum { CMDS = 20000, LAYERS = 18000 };
	struct tp_profile *p = bm1688(2, 1);
	for (int core = 0; core < 2; core++) {
		int tiu = tp_profile_add_track(p, 0, core, TP_TRACK_TIU, "TIU", 900);
		int gdma = tp_profile_add_track(p, 0, core, TP_TRACK_GDMA, "GDMA", 750);
		for (int i = 0; i < CMDS; i++) {
			char name[32];
			struct tp_slice *s = tp_track_push(p, tiu);
			assert_non_null(s);
			s->start_ns = 100 * (int64_t)i;
			tp_slice_set_end(p, &p->tracks[tiu], s, s->start_ns + 40 + i % 50);
			/* One count beyond 32 bits: the lane's "cyc" and "dur" columns are wide. */
			s->cycles = i == CMDS / 2 ? 3000000000u : (uint32_t)(30 + i % 40);
			s->cmd_id = (uint32_t)i + 1;
			s->layer = (i / 3) % LAYERS;
			if (i % 4999 == 4998)
				snprintf(name, sizeof name, "late%d.%d", core, i);
			else
				snprintf(name, sizeof name, "op%d", (i * 7919) % 50);
			tp_slice_set_name(p, &p->tracks[tiu], s, tp_profile_str(p, name));
			s = tp_track_push(p, gdma);
			assert_non_null(s);
			s->start_ns = 100 * (int64_t)i + 50;
			tp_slice_set_end(p, &p->tracks[gdma], s, s->start_ns + 30);
			s->cycles = 20;
			s->cmd_id = (uint32_t)i + 1;
			tp_slice_set_bytes(p, &p->tracks[gdma], s, (uint32_t)(64 + i % 1000));
			tp_slice_set_name(p, &p->tracks[gdma], s, tp_profile_str(p, "tensorLd"));
			tp_slice_set_dir(p, &p->tracks[gdma], s, TP_DIR_DDR_TO_LMEM);
			tp_args_begin(p);
			if (i % 3 == 0) {
				tp_test_add_dma_shape(p, "dst", (uint64_t)(i % 64) * 4096, 1, 64,
				                      1 + i % 28, 28);
				tp_args_add_uint(p, "src_data_format", 0);
			} else if (i % 3 == 1) {
				tp_args_add_uint(p, "src_start_addr", (uint64_t)i * 64);
				tp_args_add_uint(p, "dst_start_addr", (uint64_t)i * 32);
			} else {
				snprintf(name, sizeof name, "k%d", i % 97);
				tp_args_add_str(p, name, "text");
			}
			s->args = tp_args_end(p);
		}
	}
	for (int i = 0; i < LAYERS; i++) {
		char name[32];
		struct tp_layer l;
		memset(&l, 0, sizeof l);
		snprintf(name, sizeof name, "layer%d", i);
		l.name = tp_profile_str(p, name);
		snprintf(name, sizeof name, "Type%d", i % 13);
		l.type = tp_profile_str(p, name);
		l.id = i;
		l.core = i % 2;
		l.begin_ns = 300 * (int64_t)(i / 2);
		l.end_ns = l.begin_ns + 250 + i % 100;
		assert_int_equal(tp_profile_add_layer(p, &l), i);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

/* p's page at 2, 3, 8 and 64 threads, with these budgets, is want[0..n1). */
static void same_at_jobs(const struct tp_profile *p, const struct html_budgets *budgets,
                         const char *want, size_t n1)
{
	static const unsigned jobs[] = {2, 3, 8, 64};
	struct tp_diag d = {0};
	size_t n;
	for (size_t k = 0; k < sizeof jobs / sizeof *jobs; k++) {
		assert_int_equal(html_write_file(p, NULL, path, 0, jobs[k], budgets, &d), TP_OK);
		char *got = tp_test_slurp(path, &n);
		assert_non_null(got);
		assert_int_equal(n, n1);
		assert_memory_equal(got, want, n1);
		free(got);
	}
}

/* The same bytes for every thread count, however the parts are scheduled. */
static void test_jobs(void **state)
{
	(void)state;
	struct tp_profile *p = many_parts();
	struct tp_diag d = {0};
	size_t n1;
	assert_int_equal(tp_html_write_file(p, NULL, path, 0, 1, &d), TP_OK);
	char *want = tp_test_slurp(path, &n1);
	assert_non_null(want);
	/* Every kind of part is there: strings first used late, both shapes, JSON sets, LOCAL
	 * records from the commands, both Layer lanes, a wide column. */
	assert_non_null(strstr(want, "\"late1.19995\""));
	assert_non_null(strstr(want, "\"argShapes\":[[") && strstr(want, "]],\"argShape\""));
	assert_int_equal(count(want, "{\"kind\":\"Layer\""), 2);
	const char *lm = strstr(want, "\"lmem\":{");
	assert_non_null(lm);
	lm = strstr(lm, "\"recs\":{\"n\":");
	assert_non_null(lm);
	assert_true(strtol(lm + 12, NULL, 10) > 10000);
	/* A wide column (a value beyond 32 bits: no column buffer) is there too. */
	const char *cyc = strstr(want, "\"cyc\":\"");
	assert_non_null(cyc);
	assert_non_null(strchr("RDLM", cyc[7]));
	same_at_jobs(p, &html_budgets_default, want, n1);
	/* Budgets of a byte: every part past the next one to write waits for it, no written
	 * buffer is kept, and only two column buffers are lent (the other threads compute their
	 * columns again): the same bytes. */
	static const struct html_budgets tiny = {1, 1, 1};
	same_at_jobs(p, &tiny, want, n1);
	free(want);
	tp_profile_free(p);
}

/* The writer as tp_test_oom_sweep_file calls it. */
static int write_page(const struct tp_profile *p, const char *file, struct tp_diag *d)
{
	return tp_html_write_file(p, NULL, file, 0, 1, d);
}

/* Every allocation of writing p's page failing in turn (p freed). */
static void oom_sweep(struct tp_profile *p)
{
	/* More than zero allocations means the sweep really exercised failing runs. */
	assert_true(tp_test_oom_sweep_file(write_page, p, path, 1000) > 0);
	tp_profile_free(p);
}

static struct tp_profile *capture(void);

/* A device dump's page and a capture's. */
static void test_oom(void **state)
{
	(void)state;
	oom_sweep(make());
	oom_sweep(capture());
}

static void test_max_cores(void **state)
{
	(void)state;
	struct tp_profile *p = make();
	int t1 = tp_profile_add_track(p, 0, 1, TP_TRACK_TIU, "TIU", 900);
	struct tp_slice *s = tp_track_push(p, t1);
	s->start_ns = 200;
	tp_slice_set_end(p, &p->tracks[t1], s, 300);
	char *all = page_of(p, 0, NULL);
	assert_non_null(strstr(all, "\"dev\":0,\"core\":1,"));
	char *one = page_of(p, 1, NULL);
	assert_null(strstr(one, "\"dev\":0,\"core\":1,"));
	assert_non_null(strstr(one, "\"dev\":0,\"core\":0,"));
	free(all);
	free(one);
	tp_profile_free(p);
}

/* Columns are computed once into a buffer as long as the layer table (at least 65536 values)
 * when the lane fits it, and recomputed per pass when it does not: a 70 000-command lane on a
 * profile without layers (past the buffer) and a 1000-command lane (in it) must both carry
 * their values: "cmd" i + 1 (varying), "ts" the gaps (0, then 5 each), "by" one number. */
static void lane_columns(int track_kind, const char *kind, size_t n)
{
	struct tp_profile *p = bm1688(1, 1);
	int t = tp_profile_add_track(p, 0, 0, (enum tp_track_kind)track_kind, kind, 900);
	for (size_t i = 0; i < n; i++) {
		struct tp_slice *s = tp_track_push(p, t);
		assert_non_null(s);
		s->start_ns = 10 * (int64_t)i;
		tp_slice_set_end(p, &p->tracks[t], s, s->start_ns + 5);
		s->cmd_id = (uint32_t)i + 1;
		tp_slice_set_bytes(p, &p->tracks[t], s, 64);
		tp_slice_set_name(p, &p->tracks[t], s, tp_profile_str(p, "op"));
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	char *text = page_of(p, 0, NULL);
	char pat[64];
	snprintf(pat, sizeof pat, "{\"kind\":\"%s\"", kind);
	const char *lane = strstr(text, pat);
	assert_non_null(lane);
	const char *end = lane_end(lane);
	assert_non_null(end);
	int64_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
	assert_non_null(got);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		want[i] = (int64_t)i + 1;
	assert_int_equal(column(lane, end, "cmd", got, n), 1);
	assert_memory_equal(got, want, n * sizeof *got);
	for (size_t i = 0; i < n; i++)
		want[i] = i ? 5 : 0;
	assert_int_equal(column(lane, end, "ts", got, n), 1);
	assert_memory_equal(got, want, n * sizeof *got);
	const char *by = strstr(lane, "\"by\":64");
	assert_true(by && by < end);
	free(got);
	free(want);
	free(text);
	tp_profile_free(p);
}

static void test_lane_columns(void **state)
{
	(void)state;
	lane_columns(TP_TRACK_TIU, "TIU", 70000); /* longer than the column buffer */
	lane_columns(TP_TRACK_GDMA, "GDMA", 1000);
}

/* A Layer lane made from the layer table lists its layers by start, then longest first, then
 * layer index (the expected order computed here by insertion sort over the finished table):
 * 40 layers with many equal starts and ends take the writer's merge sort through several
 * passes; "ly" is layer index + 1, "dur" each layer's length and "ts" the gap from the
 * previous one's end. Mode 1: the table lists core 0's layers in that order already,
 * interleaved with core 1's and an untimed one (the writer walks the table, no index);
 * mode 2: in reverse (past the walk's window: an index is sorted). */
static void layer_lane_order(int mode)
{
	struct tp_profile *p = bm1688(1, 1);
	int tiu = tp_profile_add_track(p, 0, 0, TP_TRACK_TIU, "TIU", 900);
	struct tp_slice *s = tp_track_push(p, tiu);
	s->start_ns = 0;
	tp_slice_set_end(p, &p->tracks[tiu], s, 1000);
	tp_slice_set_name(p, &p->tracks[tiu], s, tp_profile_str(p, "conv.normal"));
	enum { N = 40 };
	uint32_t x = 12345;
	for (int i = 0, at = 0; i < N; i++) {
		struct tp_layer l;
		memset(&l, 0, sizeof l);
		x = x * 1103515245u + 12345u;
		l.type = tp_profile_str(p, "Conv2D");
		l.name = tp_profile_str(p, "layer");
		l.begin_ns = (int64_t)(x >> 16) % 5 * 100;
		l.end_ns = l.begin_ns + (int64_t)(x >> 8) % 3 * 50;
		if (mode == 1) {
			l.begin_ns = i / 2 * 100;
			l.end_ns = l.begin_ns + 300 - i % 2 * 100;
		}
		if (mode == 2) {
			l.begin_ns = (N - i) * 100;
			l.end_ns = l.begin_ns + 50;
		}
		assert_int_equal(tp_profile_add_layer(p, &l), at++);
		if (mode == 1) { /* another core's layer, and one without timing */
			l.core = 1;
			l.begin_ns = 7;
			assert_int_equal(tp_profile_add_layer(p, &l), at++);
			l.core = 0;
			l.begin_ns = l.end_ns + 1;
			if (i == 10)
				assert_int_equal(tp_profile_add_layer(p, &l), at++);
		}
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	size_t nl = 0;
	int64_t want_ly[N], want_dur[N], want_ts[N], got[N];
	for (size_t i = 0; i < p->num_layers; i++) {
		struct tp_layer av, bv;
		const struct tp_layer *a = tp_profile_layer(p, i, &av);
		if (a->core != 0 || a->begin_ns > a->end_ns)
			continue;
		size_t k = nl++;
		while (k > 0) {
			const struct tp_layer *b =
			    tp_profile_layer(p, (size_t)want_ly[k - 1] - 1, &bv);
			int after = b->begin_ns < a->begin_ns ||
			            (b->begin_ns == a->begin_ns && b->end_ns >= a->end_ns);
			if (after)
				break;
			want_ly[k] = want_ly[k - 1];
			k--;
		}
		want_ly[k] = (int64_t)i + 1;
	}
	assert_int_equal(nl, N);
	for (size_t i = 0; i < nl; i++) {
		struct tp_layer av;
		const struct tp_layer *a = tp_profile_layer(p, (size_t)want_ly[i] - 1, &av);
		want_dur[i] = a->end_ns - a->begin_ns;
		struct tp_layer prev;
		want_ts[i] = a->begin_ns -
		             (i ? tp_profile_layer(p, (size_t)want_ly[i - 1] - 1, &prev)->end_ns
		                : p->span_begin_ns);
	}
	char *text = page_of(p, 0, NULL);
	char *layer = strstr(text, "{\"kind\":\"Layer\"");
	assert_non_null(layer);
	const char *end = lane_end(layer);
	assert_non_null(strstr(layer, "\"n\":40,"));
	assert_int_equal(column(layer, end, "ly", got, N), 1);
	assert_memory_equal(got, want_ly, sizeof want_ly);
	assert_int_equal(column(layer, end, "dur", got, N), 1);
	assert_memory_equal(got, want_dur, sizeof want_dur);
	assert_int_equal(column(layer, end, "ts", got, N), 1);
	assert_memory_equal(got, want_ts, sizeof want_ts);
	free(text);
	tp_profile_free(p);
}

static void test_layer_lane_order(void **state)
{
	(void)state;
	layer_lane_order(0);
	layer_lane_order(1);
	layer_lane_order(2);
}

/* ---- A capture's page ---------------------------------------------------------------------- */

static uint32_t cap_args(struct tp_profile *p, int64_t step, int warm, const char *op_type)
{
	tp_args_begin(p);
	tp_args_add_int(p, TP_CAP_KEY_STEP, step);
	tp_args_add_int(p, TP_CAP_KEY_WARMUP, warm);
	if (op_type) {
		tp_args_add_str(p, TP_CAP_KEY_OP_TYPE, op_type);
		tp_args_add_str(p, TP_CAP_KEY_OUTPUT_SHAPES, "4x1000");
		tp_args_add_str(p, TP_CAP_KEY_OUTPUT_DTYPES, "fp32");
	}
	return tp_args_end(p);
}

/* A capture: thread "main" (tid 42) with a warm-up step 0 (1000..2000) and step 1
 * (3000..5000); in step 1 an activity 3100..4500 holding MatMul 3200..3600 (which holds a
 * nested MatMul 3300..3400) and Softmax 3700..3800, one MatMul in step 0; a counter
 * "queue_depth" on the thread: 1 at 1500, 2.5 at 3500, 0 at 4000. */
static struct tp_profile *capture(void)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->arch = TP_ARCH_CPU;
	tp_profile_add_device(p, "app (pid 42)", 42, 0);
	int t = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, "main", 0);
	p->tracks[t].tid = 42;
	tp_test_push_slice(p, t, TP_CAP_TYPE_STEP, "net", 1000, 2000, cap_args(p, 0, 1, NULL));
	tp_test_push_slice(p, t, TP_CAP_TYPE_OP, "fc", 1100, 1300, cap_args(p, 0, 1, "MatMul"));
	tp_test_push_slice(p, t, TP_CAP_TYPE_STEP, "net", 3000, 5000, cap_args(p, 1, 0, NULL));
	tp_test_push_slice(p, t, TP_CAP_TYPE_ACTIVITY, "infer", 3100, 4500,
	                   cap_args(p, 1, 0, NULL));
	tp_test_push_slice(p, t, TP_CAP_TYPE_OP, "fc", 3200, 3600, cap_args(p, 1, 0, "MatMul"));
	tp_test_push_slice(p, t, TP_CAP_TYPE_OP, "fc.inner", 3300, 3400,
	                   cap_args(p, 1, 0, "MatMul"));
	tp_test_push_slice(p, t, TP_CAP_TYPE_OP, "prob", 3700, 3800, cap_args(p, 1, 0, "Softmax"));
	int c = tp_profile_add_counter(p, 0, t, "queue_depth", "items");
	tp_counter_push(p, c, 1500, 1);
	tp_counter_push(p, c, 3500, 2.5);
	tp_counter_push(p, c, 4000, 0);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

static void test_capture(void **state)
{
	(void)state;
	struct tp_profile *p = capture();
	char *s = page_of(p, 0, NULL);
	assert_non_null(strstr(s, "<title>tpuprof: capture of app (pid 42)</title>"));
	/* The capture's script (its parts after the shared ones), not the device page's. */
	assert_non_null(strstr(s, "function capArgs("));
	/* The thread lane (depths 0..3: step, activity, operator, nested operator: 4 rows), its
	 * counter right after it as a step chart from 1500 to the span end (5000). */
	const char *th = strstr(s, "{\"kind\":\"Thread\"");
	const char *ct = strstr(s, "{\"kind\":\"Counter\",\"label\":\"queue_depth\"");
	assert_non_null(th);
	assert_non_null(ct);
	assert_true(th < ct && lane_end(th) == ct);
	assert_non_null(strstr(th, "\"rows\":4"));
	const char *ct_end = strstr(ct, "]}") + 2;
	assert_non_null(strstr(ct, "\"thread\":0,"));
	assert_non_null(strstr(ct, "\"unit\":\"items\""));
	ASSERT_COL(ct, ct_end, "ts", 500, 0, 0);
	ASSERT_COL(ct, ct_end, "dur", 2000, 500, 1000);
	ASSERT_COL(ct, ct_end, "h", 400, 1000, 0);
	assert_non_null(strstr(ct, "\"vals\":[1,2.5,0]}"));
	/* Threads (lane index, tid); operator types over the non-warm-up executions (the warm-up
	 * MatMul counted apart), by total; operators; one row per step with its outermost
	 * operators (fc 400 + prob 100; fc.inner is inside fc) and activities. */
	const char *cap = strstr(s, ",\"capture\":{\"threads\":[[0,42]],\"opsWarmupCounted\":0");
	assert_non_null(cap);
	/* String indexes are the page's: read them back through "strs". */
	char want[256];
	const char *strs = strstr(s, ",\"strs\":[");
	assert_non_null(strs);
	int mm = -1, sm = -1, net = -1, k = 0;
	for (const char *q = strs + 9; *q == '"'; k++) {
		const char *e = strchr(q + 1, '"');
		if (e - q - 1 == 6 && !strncmp(q + 1, "MatMul", 6))
			mm = k;
		if (e - q - 1 == 7 && !strncmp(q + 1, "Softmax", 7))
			sm = k;
		if (e - q - 1 == 3 && !strncmp(q + 1, "net", 3))
			net = k;
		q = e + 1 + (e[1] == ',');
	}
	assert_true(mm >= 0 && sm >= 0 && net >= 0);
	snprintf(want, sizeof want, "\"opTypes\":[[%d,2,1,500,100,400],[%d,1,0,100,100,100]]", mm,
	         sm);
	assert_non_null(strstr(cap, want));
	snprintf(want, sizeof want,
	         "\"steps\":[[%d,0,1,0,1000,1,200,0,0,0],[%d,1,0,2000,2000,2,500,1,1400,0]],"
	         "\"stepsOmitted\":0}",
	         net, net);
	assert_non_null(strstr(cap, want));
	assert_non_null(strstr(cap, "\"opsOmitted\":0"));
	free(s);
	tp_profile_free(p);
}

/* Host tracks of a Chrome trace, and a device dump with a capture's thread next to it, get the
 * page without the capture parts. */
static void test_capture_only(void **state)
{
	(void)state;
	struct tp_profile *p = tp_profile_new();
	p->arch = TP_ARCH_CPU;
	tp_profile_add_device(p, "pid 1", 1, 0);
	int h = tp_profile_add_track(p, 0, -1, TP_TRACK_HOST, "tid 1", 0);
	tp_test_push_slice(p, h, TP_CAP_TYPE_OP, "aten::conv2d", 0, 100, 0);
	int c = tp_profile_add_counter(p, 0, -1, "mem", "");
	tp_counter_push(p, c, 10, 1);
	assert_int_equal(tp_profile_finish(p), TP_OK);
	char *s = page_of(p, 0, NULL);
	assert_null(strstr(s, "function capArgs("));
	assert_null(strstr(s, "\"capture\":"));
	assert_null(strstr(s, "\"kind\":\"Counter\""));
	free(s);
	tp_profile_free(p);
	p = make();
	int t = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, "main", 0);
	tp_test_push_slice(p, t, TP_CAP_TYPE_STEP, "net", 0, 100, cap_args(p, 0, 0, NULL));
	assert_int_equal(tp_profile_finish(p), TP_OK);
	s = page_of(p, 0, NULL);
	assert_null(strstr(s, "\"capture\":"));
	assert_non_null(strstr(s, "{\"kind\":\"Thread\""));
	free(s);
	tp_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_escaping),
	    cmocka_unit_test(test_content),
	    cmocka_unit_test(test_cost_heights),
	    cmocka_unit_test(test_cmd_lmem),
	    cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_jobs),
	    cmocka_unit_test(test_oom),
	    cmocka_unit_test(test_max_cores),
	    cmocka_unit_test(test_layer_lane_order),
	    cmocka_unit_test(test_lane_columns),
	    cmocka_unit_test(test_capture),
	    cmocka_unit_test(test_capture_only),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
