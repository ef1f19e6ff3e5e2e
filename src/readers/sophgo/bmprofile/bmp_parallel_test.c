/*
 * bmp_parallel_test.c — the chunked global.profile parser (bmp_global.c) gives the same
 * profile, node lists and first error for every thread count. A synthetic global.profile of
 * several 4 MB chunks (layers, tensors, nodes of four cores, "end parallel.", subnet lines,
 * variant lines the generic path handles, CRLF, lines without the tag) is parsed with 1, 2, 3
 * and 8 threads and every result compared field by field with the one-thread parse; then
 * damaged lines near the end of a chunk, and a second one in a later chunk, must give the
 * message of the first in file order with its exact line number. Labelled tsan: the TSan
 * build runs it (TP_TEST_TSAN=1: smaller) to check the workers and the applying thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers/sophgo/bmprofile/bmp_int.h"

/* Layer i of p, decoded into one of a few rotating buffers (tests hold a handful at once). */
static const struct tp_layer *layer_at(const struct tp_profile *p, size_t i)
{
	static struct tp_layer buf[8];
	static unsigned next;
	return tp_profile_layer(p, i, &buf[next++ % 8]);
}

struct text {
	char *s;
	size_t n, cap;
	unsigned long lines;
};

static void put(struct text *t, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	assert_true(k > 0 && (size_t)k < sizeof line);
	if (t->n + (size_t)k + 1 > t->cap) {
		t->cap = (t->n + (size_t)k + 1) * 2;
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	memcpy(t->s + t->n, line, (size_t)k);
	t->n += (size_t)k;
	for (int i = 0; i < k; i++)
		t->lines += line[i] == '\n';
}

/* About `mb` MB of runtime-style text. Line numbers of interest are returned through *mark:
 * the first line written after `mark_at` bytes (0 = none). */
static void gen(struct text *t, size_t mb, unsigned seed)
{
	unsigned x = seed;
	put(t, "[bmprofile] arch=4\n[bmprofile] net_name=par net\n[bmprofile] tpu_freq=0\n");
	put(t, "...Start Profile Log...\n[bmprofile] core_list=0,1,2,3,\n");
	int subnet = 0, layer = 0;
	put(t, "[bmprofile] start to run subnet_id=%d\n", subnet);
	while (t->n < mb << 20) {
		x = x * 1103515245u + 12345u;
		unsigned r = (x >> 8) % 100;
		if (r < 10) {
			put(t, "[bmprofile] %s_layer: layer_id=%d layer_type=%s layer_name=L %d\n",
			    r & 1 ? "local" : "global", layer, r & 2 ? "Load" : "Conv2D", layer);
			layer++;
		} else if (r < 30) {
			put(t,
			    "[bmprofile] tensor_id=%u is_in=%u shape=[1x%ux3] dtype=%u is_const=0 "
			    "gaddr=%u gsize=0 loffset=4 nslice=1 hslice=2 l2addr=0\n",
			    x % 1000, x & 1, (x >> 4) % 50 + 1, (x >> 9) % 9, x);
		} else if (r < 55) {
			put(t,
			    "[bmprofile] gdma cmd_id bd_id=%u gdma_id=%u gdma_dir=%u gdma_func=0 "
			    "core=%u\n",
			    x % 70000, (x >> 3) % 70000, (x >> 5) % 5, (x >> 11) % 4);
		} else if (r < 80) {
			put(t, "[bmprofile] gdma cmd_id bd_id=0 gdma_id=%u bd_func=%u core=%u\n",
			    (x >> 3) % 70000, x % 13, (x >> 11) % 4);
		} else if (r < 83) {
			put(t, "[bmprofile] bd cmd_id bd_id=%u gdma_id=%u bd_func=1\n", x % 500,
			    x % 7);
		} else if (r < 86) {
			/* Variants only the generic path takes: keys in another order, blanks,
			 * CRLF. */
			put(t,
			    "[bmprofile] gdma cmd_id core=%u gdma_func=2 bd_id=%u  gdma_id=%u\r\n",
			    (x >> 11) % 4, x % 9, x % 11);
		} else if (r < 88) {
			put(t,
			    "  noise [bmprofile] local_layer:  layer_type=Store layer_id=%d "
			    "layer_name=S\n",
			    layer++);
		} else if (r < 92) {
			put(t, "[bmprofile] end parallel.\n[bmprofile] start parallel.\n");
		} else if (r < 93) {
			put(t,
			    "[bmprofile] end to run subnet_id=%d\n[bmprofile] start to run "
			    "subnet_id=%d\n",
			    subnet, subnet + 1);
			subnet++;
		} else if (r < 94) {
			put(t, "[bmprofile] mtype=%u addr=%u size=64 alloc=1 free=2 desc=m %u\n",
			    x % 3, x, x);
		} else if (r < 96) {
			put(t, "\n");
		} else {
			put(t, "some other log line %u\n", x);
		}
	}
	put(t, "[bmprofile] end to run subnet_id=%d", subnet); /* no final newline */
}

struct result {
	struct tp_profile *p;
	struct bmp_global g;
	int rc;
	struct tp_diag d;
};

/* keep_ids: the legacy arches' node ids and "end parallel." rule. */
static void parse_ids(const struct text *t, int jobs, int no_tensors, int keep_ids,
                      struct result *r)
{
	memset(r, 0, sizeof *r);
	r->p = tp_profile_new();
	assert_non_null(r->p);
	r->g.keep_ids = keep_ids;
	r->g.no_tensors = no_tensors;
	r->g.jobs = jobs;
	r->rc = bmp_global_parse(t->s, t->n, "d/global.profile", r->p, &r->g, &r->d);
}

static void parse(const struct text *t, int jobs, int no_tensors, struct result *r)
{
	parse_ids(t, jobs, no_tensors, 1, r);
}

static void done(struct result *r)
{
	bmp_global_free(&r->g);
	tp_profile_free(r->p);
}

static void same(const struct result *a, const struct result *b)
{
	assert_int_equal(a->rc, b->rc);
	assert_string_equal(a->d.msg, b->d.msg);
	if (a->rc)
		return;
	assert_int_equal(a->g.lines, b->g.lines);
	assert_int_equal(a->g.arch, b->g.arch);
	assert_int_equal(a->g.n_cores, b->g.n_cores);
	assert_int_equal(a->p->num_layers, b->p->num_layers);
	for (size_t i = 0; i < a->p->num_layers; i++) {
		const struct tp_layer *x = layer_at(a->p, (size_t)i),
		                      *y = layer_at(b->p, (size_t)i);
		assert_int_equal(x->id, y->id);
		assert_string_equal(tp_str(a->p, x->name), tp_str(b->p, y->name));
		assert_string_equal(tp_str(a->p, x->type), tp_str(b->p, y->type));
		assert_int_equal(x->core, y->core);
		assert_int_equal(x->subnet, y->subnet);
		assert_int_equal(x->is_local, y->is_local);
		assert_int_equal(x->is_data_move, y->is_data_move);
		assert_int_equal(x->group, y->group);
		assert_true(x->begin_ns == y->begin_ns && x->end_ns == y->end_ns);
		assert_int_equal(x->first_tensor, y->first_tensor);
		assert_int_equal(x->num_tensors, y->num_tensors);
	}
	assert_int_equal(a->p->num_tensors, b->p->num_tensors);
	if (a->p->num_tensors)
		assert_memory_equal(a->p->tensors, b->p->tensors,
		                    a->p->num_tensors * sizeof *a->p->tensors);
	assert_int_equal(a->p->num_mems, b->p->num_mems);
	for (size_t i = 0; i < a->p->num_mems; i++) {
		assert_int_equal(a->p->mems[i].addr, b->p->mems[i].addr);
		assert_string_equal(tp_str(a->p, a->p->mems[i].desc),
		                    tp_str(b->p, b->p->mems[i].desc));
	}
	for (int c = 0; c < BMP_MAX_CORES; c++)
		for (int e = 0; e < 2; e++) {
			const struct bmp_nodes *x = &a->g.nodes[c][e], *y = &b->g.nodes[c][e];
			assert_int_equal(x->n, y->n);
			if (!x->n)
				continue;
			struct bmp_node_cursor cx = {0, 0, 0}, cy = {0, 0, 0};
			for (size_t i = 0; i < x->n; i++)
				assert_int_equal(bmp_nodes_layer(x, i, &cx),
				                 bmp_nodes_layer(y, i, &cy));
			/* The encoding too, not only what it reads back as. */
			assert_memory_equal(x->ld, y->ld, x->n);
			assert_int_equal(x->nmark, y->nmark);
			assert_memory_equal(x->mark, y->mark, x->nmark * sizeof *x->mark);
			assert_int_equal(x->nesc, y->nesc);
			if (x->nesc)
				assert_memory_equal(x->esc, y->esc, x->nesc * sizeof *x->esc);
			assert_int_equal(x->last, y->last);
			assert_int_equal(!x->bd_id, !y->bd_id);
			if (!x->bd_id) /* node ids not kept */
				continue;
			assert_memory_equal(x->bd_id, y->bd_id, x->n * sizeof *x->bd_id);
			assert_memory_equal(x->gdma_id, y->gdma_id, x->n * sizeof *x->gdma_id);
			assert_memory_equal(x->dir, y->dir, x->n * sizeof *x->dir);
		}
}

/* The ThreadSanitizer build (TP_TEST_TSAN=1) runs ~20x slower: fewer chunks and counts. */
static int tsan(void)
{
	const char *e = getenv("TP_TEST_TSAN");
	return e && *e == '1';
}

static void test_same_for_every_thread_count(void **state)
{
	(void)state;
	struct text t = {0};
	gen(&t, tsan() ? 9 : 14, 7); /* 3 or 4 chunks */
	for (int nt = 0; nt < 2; nt++) {
		struct result one;
		parse(&t, 1, nt, &one);
		assert_int_equal(one.rc, TP_OK);
		assert_int_equal(one.g.lines, t.lines + 1); /* the last line has no newline */
		assert_true(one.p->num_layers > 10000);
		assert_true(one.g.nodes[3][BMP_ENG_GDMA].n > 1000);
		assert_int_equal(one.p->num_tensors > 0, !nt);
		static const int jobs[] = {3, 2, 8};
		for (size_t j = 0; j < (tsan() ? 1 : sizeof jobs / sizeof *jobs); j++) {
			struct result many;
			parse(&t, jobs[j], nt, &many);
			same(&one, &many);
			done(&many);
		}
		done(&one);
	}
	free(t.s);
}

/* Text of fast-form lines only (layers, tensors, nodes of four cores, "end parallel."),
 * with every `every`-th line `filler`: nodes ahead of the first layer, runs of layers no node
 * of a stream follows (deltas past 255: escapes), nodes after "end parallel." (no layer, and
 * the layer kept on the legacy arches). */
struct fast_gen {
	unsigned x, no, every;
	int layer;
	const char *filler;
};

/* gen_fast's lines until the text has `until` bytes. */
static void fast_lines(struct text *t, struct fast_gen *f, size_t until)
{
	while (t->n < until) {
		if (++f->no % f->every == 0) {
			put(t, "%s\n", f->filler);
			continue;
		}
		f->x = f->x * 1103515245u + 12345u;
		unsigned x = f->x, r = (x >> 8) % 100;
		if (r < 25) {
			static const char *const types[] = {"T0", "Load", "T2", "Store", "T4"};
			put(t, "[bmprofile] %s_layer: layer_id=%d layer_type=%s layer_name=N%d\n",
			    r & 1 ? "local" : "global", f->layer, types[x % 5], f->layer);
			f->layer++;
		} else if (r < 35) {
			put(t,
			    "[bmprofile] tensor_id=%u is_in=1 shape=[1x2] dtype=1 is_const=0 "
			    "gaddr=%u "
			    "gsize=0 loffset=0 nslice=1 hslice=1 l2addr=0\n",
			    x % 1000, x);
		} else if (r < 70) {
			/* core 3 rarely: hundreds of layers between its nodes */
			unsigned core = (x >> 11) % 40 == 0 ? 3 : (x >> 11) % 3;
			put(t, "[bmprofile] gdma cmd_id bd_id=0 gdma_id=%u bd_func=1 core=%u\n",
			    x % 9000, core);
		} else if (r < 92) {
			put(t,
			    "[bmprofile] gdma cmd_id bd_id=%u gdma_id=%u gdma_dir=%u gdma_func=0 "
			    "core=%u\n",
			    x % 9000, (x >> 3) % 9000, (x >> 5) % 4, (x >> 13) % 3);
		} else {
			put(t, "[bmprofile] end parallel.\n");
		}
	}
}

static void gen_fast(struct text *t, size_t mb, unsigned seed, unsigned every, const char *filler)
{
	struct fast_gen f = {.x = seed, .every = every, .filler = filler};
	put(t, "[bmprofile] arch=4\n[bmprofile] core_list=0,1,2,3,\n");
	put(t, "[bmprofile] gdma cmd_id bd_id=0 gdma_id=1 bd_func=1 core=1\n");
	fast_lines(t, &f, mb << 20);
}

/* The scan sorts a chunk of fast-form lines into node streams (struct gfast) and the apply
 * appends them a stream at a time: the nodes (their layers, escapes, marks, ids), the layers'
 * cores and tensors must be those of the same text applied line by line, which a line for the
 * generic parser in every chunk forces. Both arches' "end parallel." rules. */
static void test_node_streams(void **state)
{
	(void)state;
	const char *nop = "[bmprofile] start parallel.", *generic = "[bmprofile] x_note=12345678";
	size_t mb = tsan() ? 9 : 13;
	struct text fast = {0}, slow = {0};
	gen_fast(&fast, mb, 11, 997, nop);
	gen_fast(&slow, mb, 11, 997, generic);
	for (int keep = 0; keep < 2; keep++) {
		struct bmp_global g = {.keep_ids = keep};
		struct gchunk ch = {0};
		for (size_t k = 1; k < 3; k++) { /* chunk 0 has the header lines */
			bmp_gchunk_scan(fast.s, fast.n, &g, &ch, k);
			assert_int_equal(ch.fast.on, 1);
			assert_int_equal(ch.fast.names, 1); /* the names batch is taken too */
			bmp_gchunk_scan(slow.s, slow.n, &g, &ch, k);
			assert_int_equal(ch.fast.on, 0);
		}
		bmp_gfast_free(&ch.fast);
		tp_free(ch.ev);
		tp_free(ch.tens);
		/* Without tensor lines the fill also writes the layer records (gfast.recs). Under
		 * ThreadSanitizer with workers only: the fill's names and records are written on
		 * them. */
		for (int jobs = tsan() ? 3 : 1, nt = 0; jobs <= 3; nt = !nt, jobs += 2 * !nt) {
			struct result a, b;
			parse_ids(&fast, jobs, nt, keep, &a);
			parse_ids(&slow, 1, nt, keep, &b);
			assert_int_equal(a.rc, TP_OK);
			assert_true(a.g.nodes[3][BMP_ENG_TIU].nesc > 10);
			same(&a, &b);
			done(&a);
			done(&b);
		}
	}
	free(fast.s);
	free(slow.s);
}

/* A chunk of layers without tensors takes the records path (apply_recs), which reads only
 * its last layer line and whether an "end parallel." follows it. Chunk 1 here ends in a local
 * layer and an "end parallel.", and chunk 2 starts with nodes: they must get no layer, as the
 * line-by-line parse gives them, on both arches' rules. */
static void test_recs_chunk_end(void **state)
{
	(void)state;
	const char *endpar = "[bmprofile] end parallel.\n";
	const char *filler[2] = {"[bmprofile] start parallel.", "[bmprofile] x_note=12345678"};
	struct text txt[2] = {{0}, {0}};
	for (int k = 0; k < 2; k++) {
		struct text *t = &txt[k];
		struct fast_gen f = {.x = 5, .every = 997, .filler = filler[k]};
		put(t, "[bmprofile] arch=4\n[bmprofile] core_list=0,1,2,3,\n");
		fast_lines(t, &f, 2 * GCHUNK - 300);
		/* The "end parallel." line's end is the byte at 2 * GCHUNK - 1: chunk 2 starts
		 * after it. */
		char head[128], pad[512];
		int hn = snprintf(head, sizeof head,
		                  "[bmprofile] local_layer: layer_id=%d layer_type=T0 layer_name=N",
		                  f.layer++);
		size_t np = 2 * GCHUNK - t->n - (size_t)hn - 1 - strlen(endpar);
		assert_true(hn > 0 && np > 0 && np < 300);
		memset(pad, 'x', np);
		pad[np] = 0;
		put(t, "%s%s\n", head, pad);
		put(t, "%s", endpar);
		assert_int_equal(t->n, 2 * GCHUNK);
		for (unsigned c = 0; c < 3; c++)
			put(t, "[bmprofile] gdma cmd_id bd_id=0 gdma_id=%u bd_func=1 core=%u\n",
			    c + 1, c);
		fast_lines(t, &f, 2 * GCHUNK + ((size_t)1 << 20));
	}
	/* The premise: chunk 1 takes the fast path with its names batched, has no tensor (no
	 * tensors kept) and ends in the "end parallel." right after its last layer. */
	struct bmp_global g = {.keep_ids = 1, .no_tensors = 1};
	struct gchunk ch = {0};
	bmp_gchunk_scan(txt[0].s, txt[0].n, &g, &ch, 1);
	assert_int_equal(ch.fast.on, 1);
	assert_int_equal(ch.fast.names, 1);
	assert_int_equal(ch.ntens, 0);
	assert_true(ch.fast.nl >= 2);
	assert_int_equal(ch.fast.llast + 2, ch.fast.nev);
	bmp_gfast_free(&ch.fast);
	tp_free(ch.ev);
	tp_free(ch.tens);
	for (int keep = 0; keep < 2; keep++)
		for (int jobs = tsan() ? 3 : 1; jobs <= 3; jobs += 2) {
			struct result a, b;
			parse_ids(&txt[0], jobs, 1, keep, &a);
			parse_ids(&txt[1], 1, 1, keep, &b);
			assert_int_equal(a.rc, TP_OK);
			same(&a, &b);
			done(&a);
			done(&b);
		}
	free(txt[0].s);
	free(txt[1].s);
}

/* Replaces the line holding byte `at` by `repl` padded with blanks to the same length (so
 * offsets and line numbers stay); returns its 1-based line number. */
static unsigned long damage(struct text *t, size_t at, const char *repl)
{
	size_t b = at, e = at;
	while (b > 0 && t->s[b - 1] != '\n')
		b--;
	while (e < t->n && t->s[e] != '\n')
		e++;
	size_t k = strlen(repl);
	assert_true(e - b >= k);
	memcpy(t->s + b, repl, k);
	memset(t->s + b + k, ' ', e - b - k);
	unsigned long no = 1;
	for (size_t i = 0; i < b; i++)
		no += t->s[i] == '\n';
	return no;
}

/* With each thread count in jobs[0..njobs), the parse fails with exactly `want`. */
static void expect_error(const struct text *t, const int *jobs, size_t njobs, const char *want)
{
	for (size_t j = 0; j < njobs; j++) {
		struct result r;
		parse(t, jobs[j], 1, &r);
		assert_int_equal(r.rc, TP_EFORMAT);
		assert_string_equal(r.d.msg, want);
		done(&r);
	}
}

static void test_first_error_wins(void **state)
{
	(void)state;
	struct text t = {0};
	gen(&t, tsan() ? 13 : 14, 11); /* the late damage sits in chunk 3 */
	/* A later chunk's damage first, then one late in chunk 1 (before it in file order). */
	unsigned long late = damage(&t, ((size_t)3 << 22) + 1000, "[bmprofile] mtype=1 addr=zz");
	unsigned long first = damage(&t, ((size_t)2 << 22) - 300,
	                             "[bmprofile] gdma cmd_id bd_id=1 gdma_id=q7 gdma_func=0");
	assert_true(first < late);
	char want[128];
	snprintf(want, sizeof want, "d/global.profile:%lu: bad gdma_id value \"q7\"", first);
	static const int jobs[] = {1, 4, 2, 8};
	size_t njobs = tsan() ? 2 : sizeof jobs / sizeof *jobs;
	expect_error(&t, jobs, njobs, want);
	/* Only the later damage left: it is reported, with its own line. */
	damage(&t, ((size_t)2 << 22) - 300, "[bmprofile] end parallel.");
	snprintf(want, sizeof want, "d/global.profile:%lu: bad addr value \"zz\"", late);
	expect_error(&t, jobs, njobs, want);
	free(t.s);
}

/* Chunk edges: a line that spans a whole chunk, and texts of one byte around the size. */
static void test_chunk_edges(void **state)
{
	(void)state;
	struct text t = {0};
	put(&t,
	    "[bmprofile] arch=4\n[bmprofile] global_layer: layer_id=1 layer_type=A layer_name=");
	while (t.n < ((size_t)9 << 20))
		put(&t, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		        "xxxxxx");
	put(&t, "\n[bmprofile] gdma cmd_id bd_id=0 gdma_id=5 bd_func=1 core=2\n");
	struct result one, many;
	parse(&t, 1, 1, &one);
	parse(&t, 4, 1, &many);
	assert_int_equal(one.rc, TP_OK);
	assert_int_equal(one.p->num_layers, 1);
	assert_int_equal(one.g.nodes[2][BMP_ENG_TIU].n, 1);
	struct bmp_node_cursor cur = {0, 0, 0};
	assert_int_equal(bmp_nodes_layer(&one.g.nodes[2][BMP_ENG_TIU], 0, &cur), 0);
	assert_int_equal(one.g.lines, 3);
	same(&one, &many);
	done(&one);
	done(&many);
	free(t.s);
}

/* Line ends (bmp_global.c finds them 64 bytes at a time): lines of every length from 0 to 200
 * bytes, so each falls at every offset of a 64-byte block, runs of empty lines, then a damaged
 * line whose number must be exact, and a valid text whose line count must be. */
static void test_line_lengths(void **state)
{
	(void)state;
	struct text t = {0};
	put(&t, "[bmprofile] arch=4\n");
	unsigned long want = 1;
	for (int len = 0; len <= 200; len++) {
		char line[256];
		memset(line, len % 3 ? 'x' : '\r', (size_t)len);
		line[len] = 0;
		put(&t, "%s\n", line);
		want++;
		if (len % 17 == 0) {
			put(&t, "\n\n\n");
			want += 3;
		}
	}
	put(&t, "[bmprofile] gdma cmd_id bd_id=0 gdma_id=5 bd_func=1 core=2"); /* no newline */
	want++;
	struct result r;
	parse(&t, 1, 1, &r);
	assert_int_equal(r.rc, TP_OK);
	assert_int_equal(r.g.lines, want);
	assert_int_equal(r.g.nodes[2][BMP_ENG_TIU].n, 1);
	done(&r);
	put(&t, "\n[bmprofile] mtype=1 addr=zz\n");
	char msg[128];
	snprintf(msg, sizeof msg, "d/global.profile:%lu: bad addr value \"zz\"", want + 1);
	parse(&t, 2, 1, &r);
	assert_int_equal(r.rc, TP_EFORMAT);
	assert_string_equal(r.d.msg, msg);
	done(&r);
	free(t.s);
}

/* Resident pages of [p, p + n) (/proc/self/pagemap's present bit), or -1 when the file
 * cannot be read. */
static long present_pages(const void *p, size_t n)
{
	FILE *f = fopen("/proc/self/pagemap", "rb");
	if (!f)
		return -1;
	long ps = sysconf(_SC_PAGESIZE), count = 0;
	uintptr_t first = (uintptr_t)p / (uintptr_t)ps,
	          last = ((uintptr_t)p + n - 1) / (uintptr_t)ps;
	if (fseek(f, (long)(first * 8), SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	for (uintptr_t pg = first; pg <= last; pg++) {
		uint64_t e;
		if (fread(&e, sizeof e, 1, f) != 1) {
			fclose(f);
			return -1;
		}
		count += (long)(e >> 63);
	}
	fclose(f);
	return count;
}

/* With drop_pages (the text is a file mapping), a parse leaves none of the file resident:
 * each chunk is given back once applied, and so are the pages a later chunk's start search
 * reads back in (chunk_start reads the byte before its chunk). Before, those stayed mapped to
 * the end: the fault-around window at every 4 MB boundary, whole 2 MiB folios when the page
 * cache holds the file in large folios. */
static void test_drop_pages(void **state)
{
	(void)state;
	struct text t = {0};
	gen(&t, 17, 7); /* 5 chunks */
	char path[] = "/tmp/tp_drop_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t.s, t.n), (ssize_t)t.n);
	close(fd);
	for (int jobs = 1; jobs <= 3; jobs += 2) {
		struct tp_file f;
		struct tp_diag d = {0};
		assert_int_equal(tp_file_load(&f, path, &d), TP_OK);
		assert_true(f.mapped);
		struct result r;
		memset(&r, 0, sizeof r);
		r.p = tp_profile_new();
		r.g.jobs = jobs;
		r.g.drop_pages = 1;
		r.rc = bmp_global_parse((const char *)f.data, f.size, path, r.p, &r.g, &r.d);
		assert_int_equal(r.rc, TP_OK);
		long left = present_pages(f.data, f.size);
		if (left < 0) {
			tp_file_release(&f);
			done(&r);
			unlink(path);
			free(t.s);
			skip(); /* prints SKIPPED for this test: no pagemap to read */
		}
		/* At most the last, partial page (a drop gives back whole pages only). */
		if (left > 1)
			fail_msg("--jobs %d: %ld pages of the %zu-byte file still resident", jobs,
			         left, f.size);
		tp_file_release(&f);
		done(&r);
	}
	unlink(path);
	free(t.s);
}

#include "tp_test_main.h"
