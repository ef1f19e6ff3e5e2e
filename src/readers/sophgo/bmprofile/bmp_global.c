/*
 * bmp_global.c — parser for global.profile (sophgo-bmprofile.md §3): the runtime header (arch,
 * net_name, tpu_freq), the compiler log (subnets, layers, tensors, TIU/GDMA node lines), the
 * core list and the memory lines. Fills the profile's layers, tensors, mems and meta directly;
 * node lines go to struct bmp_global for the layer matching done by the reader. This file owns
 * the chunked scan (the fast forms of node and layer lines) and the apply of a chunk, the layer
 * and node tables; the lines it hands over whole are parsed in bmp_gline.c, and the driver
 * that runs the scans on the threads is bmp_gpool.c.
 *
 * Grammar: lines end with '\n' (trailing '\r' and blanks are ignored, and blanks around a
 * key's '=' are accepted: harmless variants); meaningful lines contain
 * "[bmprofile]" followed by a body. Bodies recognised (others are ignored, as the reference
 * does):
 *   arch=<int> | tpu_freq=<int> | net_name=<rest> | is_mlir=<int> | core_list=<a,b,>
 *   start to run subnet_id=<n> | end to run subnet_id=<n> | start parallel. | end parallel.
 *   global_layer: / local_layer: layer_id=<n> layer_type=<str> layer_name=<rest>
 *   tensor_id=<n> is_in= shape=[AxB..] dtype= is_const= gaddr= gsize= loffset= nslice= hslice=
 *     [l2addr=]
 *   gdma cmd_id bd_id= gdma_id= gdma_dir= gdma_func= [core=]     (GDMA node)
 *   gdma cmd_id bd_id=0 gdma_id=<dep> bd_func= core=            (TIU node, BM1688 quirk §3.1)
 *   bd cmd_id bd_id= gdma_id= bd_func= [core=]                  (TIU node, BM1684X)
 *   mtype=<n> addr= size= alloc= free= desc=<rest>
 * A recognised line with a missing key or a malformed number is an error `path:LINE: ...`.
 * Node lines attach to the last layer line until `end parallel.` or a subnet boundary.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum tp_arch bmp_arch_from_raw(int raw)
{
	const struct sg_chip *c = sg_chip_by_bmp_arch(raw);
	return c ? c->c.arch : TP_ARCH_UNKNOWN;
}

int bmp_gctx_oom(struct bmp_gctx *c)
{
	return tp_diag_set(c->d, TP_ENOMEM, "%s: out of memory", c->path);
}

/* 1 if a[0..k) == b[0..k): word loads the compiler unrolls for a constant k (a libc memcmp
 * call per key costs more than the compare on these short keys). A tail after whole words is
 * the last 8 bytes again (overlapping); below 8 bytes, one 4-, 2- and 1-byte compare each (the
 * loop over 4 and 2 unrolls too). */
static inline int eqn(const char *a, const char *b, size_t k)
{
	uint64_t x, y;
	if (k >= 8) {
		while (k >= 8) {
			memcpy(&x, a, 8);
			memcpy(&y, b, 8);
			if (x != y)
				return 0;
			a += 8;
			b += 8;
			k -= 8;
		}
		if (!k)
			return 1;
		memcpy(&x, a + k - 8, 8);
		memcpy(&y, b + k - 8, 8);
		return x == y;
	}
	for (size_t w = 4; w >= 2; w /= 2) {
		if (k < w)
			continue;
		uint32_t u = 0, v = 0;
		memcpy(&u, a, w);
		memcpy(&v, b, w);
		if (u != v)
			return 0;
		a += w;
		b += w;
		k -= w;
	}
	return !k || *a == *b;
}

/* Body l starts with the literal `lit` (no '=' variant: for keys without '='). */
#define LIT(l, lit) ((l)->n >= sizeof(lit) - 1 && eqn((l)->s, lit, sizeof(lit) - 1))

/* Reads `key` + '=' + decimal digits (at most 18) at *p, then one blank or the end. Returns 1
 * if so. Always inlined: every call passes a literal key, so the key test becomes one or two
 * word compares (memcmp of a constant size) and the digit loop has a single bound (the per-line hot
 * path of the tokenizer; the numbers are short, so a word-at-a-time digit reader costs more than it
 * saves here). */
static inline __attribute__((always_inline)) int fast_num(const char **p, const char *end,
                                                          const char *key, size_t kn, uint64_t *out)
{
	const char *q = *p;
	if (q >= end || (size_t)(end - q) <= kn || memcmp(q, key, kn) != 0)
		return 0;
	q += kn;
	const char *d0 = q, *top = end - q > 18 ? q + 18 : end;
	uint64_t v = 0;
	unsigned dg;
	while (q < top && (dg = (unsigned)(unsigned char)*q - '0') < 10) {
		v = v * 10 + dg;
		q++;
	}
	if (q == d0 || (q < end && *q != ' '))
		return 0;
	*out = v;
	*p = q < end ? q + 1 : q;
	return 1;
}

/* The runtime's layer layout "layer_id=N layer_type=T layer_name=REST", read without the
 * generic key search. Returns 1 and the fields, or 0 to let the generic path (and its
 * messages) handle the line. Pure: safe from the chunk workers. */
static int fast_layer(const struct bmp_line *l, int is_local, int64_t *id, const char **tv,
                      size_t *tn, const char **nv, size_t *nn)
{
	size_t skip = is_local ? 12 : 13;
	if (l->n < skip)
		return 0;
	const char *p = l->s + skip, *end = l->s + l->n;
	while (p < end && *p == ' ')
		p++;
	uint64_t uid;
	if (!fast_num(&p, end, "layer_id=", 9, &uid) || uid > INT32_MAX ||
	    (size_t)(end - p) <= 11 || !eqn(p, "layer_type=", 11))
		return 0;
	const char *t = p + 11, *te = t;
	while (te < end && *te != ' ')
		te++;
	if (te >= end || (size_t)(end - te) < 12 || !eqn(te + 1, "layer_name=", 11))
		return 0;
	*tv = t;
	*tn = (size_t)(te - t);
	*nv = te + 12;
	*nn = (size_t)(end - *nv);
	*id = (int64_t)uid;
	return 1;
}

static int add_layer(struct bmp_gctx *c, int64_t id, const char *tv, size_t tn, const char *nv,
                     size_t nn, int is_local, int name_ok);

int bmp_gline_layer(struct bmp_gctx *c, struct bmp_line *l, int is_local)
{
	int64_t id;
	const char *tv, *nv;
	size_t tn, nn;
	if (fast_layer(l, is_local, &id, &tv, &tn, &nv, &nn))
		return add_layer(c, id, tv, tn, nv, nn, is_local, 0);
	int rc = bmp_line_i64(c, l, "layer_id", &id);
	if (rc)
		return rc;
	if (!bmp_line_kv(l, "layer_type", 0, &tv, &tn))
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "missing layer_type=");
	if (!bmp_line_kv(l, "layer_name", 1, &nv, &nn)) {
		nv = "";
		nn = 0;
	}
	return add_layer(c, id, tv, tn, nv, nn, is_local, 0);
}

/* "end parallel." closes a local layer's group: its node lines end there. A global layer's
 * node lines can sit inside parallel blocks of their own, and on the legacy arches (node ids
 * kept, §8.2) the vendor joins the nodes after such a block to the global layer too (the
 * tail of layers 288-308 of the real BM1684X dump). */
void bmp_end_parallel(struct bmp_gctx *c)
{
	if (!c->g->keep_ids || c->cur_layer < 0 || c->pend.is_local)
		c->cur_layer = -1;
}

int bmp_gflush_layer(struct bmp_gctx *c)
{
	if (c->pend_layer < 0)
		return TP_OK;
	int32_t i = c->pend_layer;
	c->pend_layer = -1;
	return tp_profile_add_layer(c->p, &c->pend) == i ? TP_OK : bmp_gctx_oom(c);
}

/* A layer of type `type` whose strings are in the table: pending until the next one. */
static int put_layer(struct bmp_gctx *c, int64_t id, uint32_t type, uint32_t name, int is_local,
                     int data_move)
{
	struct tp_layer ly = {0};
	ly.id = (int32_t)id;
	ly.type = type;
	ly.name = name;
	ly.device = 0;
	ly.core = -1;
	ly.subnet = c->cur_subnet;
	ly.group = -1;
	ly.is_local = (uint8_t)is_local;
	ly.is_data_move = (uint8_t)data_move;
	ly.first_tensor = (uint32_t)c->p->num_tensors;
	ly.begin_ns = 0;
	ly.end_ns = -1;
	/* Nothing else adds layers during the parse, so the next index is this layer's. */
	if (c->p->num_layers >= INT32_MAX)
		return bmp_gctx_oom(c);
	c->cur_layer = c->pend_layer = (int32_t)c->p->num_layers;
	c->pend = ly;
	return TP_OK;
}

/* Load/Store-like layer types, drawn half height. */
static int data_move(const char *tv, size_t tn)
{
	return (tn == 4 && memcmp(tv, "Load", 4) == 0) || (tn == 5 && memcmp(tv, "Store", 5) == 0);
}

/* name_ok: the chunk's scan found the name fit for the model as it is (tp_profile_str_ok). */
static int add_layer(struct bmp_gctx *c, int64_t id, const char *tv, size_t tn, const char *nv,
                     size_t nn, int is_local, int name_ok)
{
	if (c->g->no_layers)
		return TP_OK;
	int rc = bmp_gflush_layer(c);
	if (rc)
		return rc;
	/* Layer types repeat: remember the last few instead of hashing every time. */
	uint32_t type = 0;
	for (int i = 0; i < 8; i++)
		if (c->type_len[i] == tn && c->type_id[i] && eqn(c->type_str[i], tv, tn)) {
			type = c->type_id[i];
			break;
		}
	if (!type) {
		type = tp_profile_strn(c->p, tv, tn);
		int slot = c->type_next++ & 7;
		c->type_id[slot] = type;
		c->type_str[slot] = tp_str(c->p, type);
		c->type_len[slot] = tn;
	}
	/* Layer names are unique. */
	uint32_t name = name_ok ? tp_profile_strn_unique_ok(c->p, nv, nn)
	                        : tp_profile_strn_unique(c->p, nv, nn);
	return put_layer(c, id, type, name, is_local, data_move(tv, tn));
}

static inline int push_node(struct bmp_gctx *c, struct bmp_line *l, int engine, int64_t core,
                            uint64_t bd_id, uint64_t gdma_id, uint8_t dir)
{
	if (core < 0 || core >= BMP_MAX_CORES)
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no,
		                    "core %lld out of range 0..%d", (long long)core,
		                    BMP_MAX_CORES - 1);
	if (c->g->no_nodes)
		return TP_OK;
	struct bmp_nodes *nd = &c->g->nodes[core][engine];
	if (nd->n >= UINT32_MAX || bmp_nodes_room(nd, c->g->keep_ids, 1) != TP_OK)
		return bmp_gctx_oom(c);
	int32_t cur = c->cur_layer, prev = nd->n ? nd->last : -1;
	if (nd->n % BMP_NODE_MARK == 0)
		nd->mark[nd->nmark++] = cur;
	if (bmp_node_ld(nd, nd->n, prev, cur) != TP_OK)
		return bmp_gctx_oom(c);
	nd->last = cur;
	if (c->g->keep_ids) {
		nd->bd_id[nd->n] = (uint32_t)bd_id;
		nd->gdma_id[nd->n] = (uint32_t)gdma_id;
		nd->dir[nd->n] = dir;
	}
	nd->n++;
	if (c->cur_layer >= 0 && c->pend.core < 0)
		c->pend.core = (int32_t)core;
	return TP_OK;
}

/* Node lines exactly as the runtime writes them, without the generic key search:
 *   bd_id=N gdma_id=N (bd_func=N | gdma_dir=N gdma_func=N) [core=N]
 * Returns 1 and the fields, or 0 to let the generic path (and its messages) handle it. */
static int fast_node(const struct bmp_line *l, size_t skip, uint64_t *bd, uint64_t *gd, int *tiu,
                     uint64_t *dir, uint64_t *core)
{
	if (skip >= l->n) /* a line cut right after its prefix (fuzzer finding) */
		return 0;
	const char *p = l->s + skip, *end = l->s + l->n;
	uint64_t f;
	if (!fast_num(&p, end, "bd_id=", 6, bd) || !fast_num(&p, end, "gdma_id=", 8, gd))
		return 0;
	if (fast_num(&p, end, "bd_func=", 8, &f)) {
		*tiu = 1;
	} else if (fast_num(&p, end, "gdma_dir=", 9, dir) &&
	           fast_num(&p, end, "gdma_func=", 10, &f)) {
		*tiu = 0;
	} else {
		return 0;
	}
	*core = 0;
	if (p < end && !fast_num(&p, end, "core=", 5, core))
		return 0;
	return p == end;
}

int bmp_gline_node(struct bmp_gctx *c, struct bmp_line *l, int bd_prefix)
{
	static const uint8_t dirs[4] = {TP_DIR_DDR_TO_LMEM, TP_DIR_LMEM_TO_DDR, TP_DIR_DDR_TO_DDR,
	                                TP_DIR_LMEM_TO_LMEM};
	{
		uint64_t fb, fg, fd = 99, fc;
		int ftiu;
		if (fast_node(l, bd_prefix ? 10 : 12, &fb, &fg, &ftiu, &fd, &fc) &&
		    fc < BMP_MAX_CORES)
			return push_node(c, l, (bd_prefix || ftiu) ? BMP_ENG_TIU : BMP_ENG_GDMA,
			                 (int64_t)fc, fb, fg, fd < 4 ? dirs[fd] : TP_DIR_NONE);
	}
	uint64_t bd_id, gdma_id;
	int64_t core = 0;
	int rc;
	if ((rc = bmp_line_u64(c, l, "bd_id", &bd_id)) ||
	    (rc = bmp_line_u64(c, l, "gdma_id", &gdma_id)))
		return rc;
	const char *v;
	size_t n;
	if (bmp_line_kv(l, "core", 0, &v, &n) && tp_parse_i64(v, n, &core) != 0)
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no, "bad core value \"%.*s\"",
		                    (int)(n > 40 ? 40 : n), v);
	/* A `bd_func=` key makes it a TIU node, whatever the prefix (BM1688 writes TIU nodes as
	 * `gdma cmd_id bd_id=0 gdma_id=<dep> bd_func=<n> core=<n>`, §3.1). */
	int tiu = bd_prefix || bmp_line_kv(l, "bd_func", 0, &v, &n);
	if (!tiu && !bmp_line_kv(l, "gdma_func", 0, &v, &n))
		return tp_diag_line(c->d, TP_EFORMAT, c->path, l->no,
		                    "node line without bd_func= or gdma_func=");
	/* gdma_dir (§3.3): 0 S2L, 1 L2S, 2 S2S, 3 L2L. */
	int64_t gd;
	uint8_t dir = TP_DIR_NONE;
	if (!tiu && bmp_line_kv(l, "gdma_dir", 0, &v, &n) && tp_parse_i64(v, n, &gd) == 0 &&
	    gd >= 0 && gd < 4)
		dir = dirs[gd];
	return push_node(c, l, tiu ? BMP_ENG_TIU : BMP_ENG_GDMA, core, bd_id, gdma_id, dir);
}

/* ---------------------------------------------------------------------------------------- */
/* Chunked parse. The text is cut into chunks of GCHUNK bytes, each extended to the end of   */
/* its last line. A chunk is tokenized on its own (any thread): every line is split off,     */
/* its tag found and its kind decided; the runtime's common lines (node, layer, "end         */
/* parallel.") become compact events with their numbers already read, lines that nothing    */
/* keeps are dropped, and every other line becomes an EV_LINE event that the generic parser  */
/* (do_line) handles. The events of the chunks are then applied to the model in file order   */
/* by one thread (bmp_gchunk_apply): layers, nodes and every error message come from there,  */
/* so the result and the first error reported are the same whatever the thread count. The    */
/* driver (the workers and the ring of chunks) is bmp_gpool.c.                               */
/* ---------------------------------------------------------------------------------------- */

/* Start of chunk k: after the first '\n' at or after k*GCHUNK - 1 (so a chunk never splits a
 * line), 0 for the first chunk, len when no line ends there. */
static size_t chunk_start(const char *text, size_t len, size_t k)
{
	if (k == 0)
		return 0;
	size_t x = k * GCHUNK - 1;
	if (x >= len)
		return len;
	const char *nl = memchr(text + x, '\n', len - x);
	return nl ? (size_t)(nl - text) + 1 : len;
}

static struct gev *push_ev(struct gchunk *ch)
{
	if (!bmp_room(&ch->oom, &ch->ev, sizeof *ch->ev, ch->nev, &ch->cap))
		return NULL;
	return &ch->ev[ch->nev++];
}

/* The line ends of a chunk, found 64 bytes at a time: the block's '\n' bytes as a bit mask
 * (SSE2 compares), so the next line end costs a count of trailing zeros instead of a memchr
 * call per line (global.profile lines are ~80 bytes, and a call's setup would dominate the
 * search). Gives exactly memchr's answers; never reads at or past `end`.
 * Without SSE2 it is memchr. */
struct nlfind {
	const char *text;
	size_t end;    /* search limit (the chunk's end) */
	size_t base;   /* the block in `mask` is [base, base + 64) */
	uint64_t mask; /* bit i: text[base + i] == '\n' (bits at or past end are 0) */
	int have;      /* mask holds a block */
};

/* Offset of the first '\n' in text[pos, end), or end if there is none. */
static inline size_t nl_next(struct nlfind *f, size_t pos)
{
#if defined(__SSE2__)
	for (;;) {
		if (f->have && pos >= f->base && pos - f->base < 64) {
			uint64_t m = f->mask & (~(uint64_t)0 << (pos - f->base));
			if (m)
				return f->base + (size_t)__builtin_ctzll(m);
			pos = f->base + 64;
		}
		if (pos >= f->end)
			return f->end;
		f->base = pos;
		f->have = 1;
		const char *q = f->text + pos;
		if (f->end - pos >= 64) {
			const __m128i nl = _mm_set1_epi8('\n');
			uint64_t m0 = (unsigned)_mm_movemask_epi8(
			    _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)q), nl));
			uint64_t m1 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
			    _mm_loadu_si128((const __m128i *)(const void *)(q + 16)), nl));
			uint64_t m2 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
			    _mm_loadu_si128((const __m128i *)(const void *)(q + 32)), nl));
			uint64_t m3 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
			    _mm_loadu_si128((const __m128i *)(const void *)(q + 48)), nl));
			f->mask = m0 | m1 << 16 | m2 << 32 | m3 << 48;
		} else {
			uint64_t m = 0;
			for (size_t i = 0; i < f->end - pos; i++)
				if (q[i] == '\n')
					m |= (uint64_t)1 << i;
			f->mask = m;
		}
	}
#else
	const char *nl = memchr(f->text + pos, '\n', f->end - pos);
	return nl ? (size_t)(nl - f->text) : f->end;
#endif
}

/* The body of line s[0..n) after the "[bmprofile]" tag, found anywhere in the line as the
 * reference's patterns do (it is at the start of every line the runtime writes). 0 when the
 * line has no tag. */
static inline int line_body(const char *s, size_t n, struct bmp_line *l)
{
	static const char tag[] = "[bmprofile]";
	const char *tp = NULL;
	if (n >= sizeof tag - 1 && eqn(s, tag, sizeof tag - 1)) {
		tp = s;
	} else {
		const char *q = s;
		while ((q = memchr(q, '[', (size_t)(s + n - q))) != NULL) {
			if ((size_t)(s + n - q) >= sizeof tag - 1 &&
			    !memcmp(q, tag, sizeof tag - 1)) {
				tp = q;
				break;
			}
			q++;
		}
	}
	if (!tp)
		return 0;
	size_t b = (size_t)(tp - s) + sizeof tag - 1;
	if (b + 1 < n && s[b] == ' ' && s[b + 1] > ' ') /* the runtime's one blank */
		b++;
	else
		while (b < n && (s[b] == ' ' || s[b] == '\t'))
			b++;
	l->s = s + b;
	l->n = n - b;
	l->no = 0;
	l->parsed = 0;
	return 1;
}

/* What the scan does with a line: nothing is kept, an event was pushed, the generic parser
 * takes it, or out of memory. */
enum scan_res { SC_DROP, SC_DONE, SC_GENERIC, SC_OOM };

/* A node line (bd_prefix: the "bd cmd_id" form) in its fast form, as an EV_NODE event. */
static inline enum scan_res scan_node(const struct bmp_line *l, int bd_prefix,
                                      const struct bmp_global *g, struct gchunk *ch, uint32_t lno)
{
	static const uint8_t dirs[4] = {TP_DIR_DDR_TO_LMEM, TP_DIR_LMEM_TO_DDR, TP_DIR_DDR_TO_DDR,
	                                TP_DIR_LMEM_TO_LMEM};
	uint64_t fb, fg, fd = 99, fc;
	int ftiu;
	if (!fast_node(l, bd_prefix ? 10 : 12, &fb, &fg, &ftiu, &fd, &fc) || fc >= BMP_MAX_CORES)
		return SC_GENERIC;
	if (g->no_nodes) /* bd cmd_id with layers kept: bmp_gline_node would keep nothing */
		return SC_DROP;
	struct gev *ev = push_ev(ch);
	if (!ev)
		return SC_OOM;
	ev->kind = EV_NODE;
	ev->eng = (bd_prefix || ftiu) ? BMP_ENG_TIU : BMP_ENG_GDMA;
	ev->dir = fd < 4 ? dirs[fd] : TP_DIR_NONE;
	ev->core = (uint8_t)fc;
	ev->lno = lno;
	ev->a = fb;
	ev->b = fg;
	return SC_DONE;
}

/* A layer line in its fast form, as an EV_LAYER event. */
static inline enum scan_res scan_layer(const char *text, const struct bmp_line *l, int is_local,
                                       const struct bmp_global *g, struct gchunk *ch, uint32_t lno)
{
	int64_t id;
	const char *tv, *nv;
	size_t tn, nn;
	if (!fast_layer(l, is_local, &id, &tv, &tn, &nv, &nn) || nn > UINT32_MAX || tn > UINT32_MAX)
		return SC_GENERIC;
	if (g->no_layers)
		return SC_DROP;
	struct gev *ev = push_ev(ch);
	if (!ev)
		return SC_OOM;
	ev->kind = EV_LAYER;
	ev->eng = (uint8_t)is_local;
	ch->nlayers++;
	ev->lno = lno;
	ev->a = (uint64_t)id;
	ev->off = (uint64_t)(tv - text);
	ev->n = (uint32_t)tn;
	ev->b = (uint64_t)(nv - text);
	ev->n2 = (uint32_t)nn;
	ev->dir = (uint8_t)tp_profile_str_ok(nv, nn);
	return SC_DONE;
}

/* A tensor line read by the scan, as an EV_TENSOR event with its fields in the chunk's
 * tensors; a line with an error goes to the generic parser, which reports it in file order. */
static inline enum scan_res scan_tensor(const struct bmp_line *line, struct gchunk *ch,
                                        uint32_t lno)
{
	struct bmp_line l = *line;
	struct tp_diag d;
	d.status = TP_OK;
	struct bmp_gctx c = {.path = "", .d = &d};
	struct tp_tensor t;
	if (bmp_gline_tensor_parse(&c, &l, &t) != TP_OK)
		return SC_GENERIC;
	if (!bmp_room(&ch->oom, &ch->tens, sizeof *ch->tens, ch->ntens, &ch->cap_tens))
		return SC_OOM;
	struct gev *ev = push_ev(ch);
	if (!ev)
		return SC_OOM;
	ch->tens[ch->ntens] = t;
	ev->kind = EV_TENSOR;
	ev->lno = lno;
	ev->a = ch->ntens++;
	return SC_DONE;
}

/* Decides what to do with a tagged line: the fast forms, the lines nothing keeps, or the
 * generic parser. */
static inline enum scan_res scan_line(const char *text, const struct bmp_line *l,
                                      const struct bmp_global *g, struct gchunk *ch, uint32_t lno)
{
	char c0 = l->n ? l->s[0] : 0;
	if (c0 == 't' && (LIT(l, "tensor_id=") || bmp_line_starts(l, "tensor_id=")))
		return g->no_tensors || g->no_layers ? SC_DROP : scan_tensor(l, ch, lno);
	if (c0 == 'g' && LIT(l, "gdma cmd_id"))
		return g->no_nodes ? SC_DROP : scan_node(l, 0, g, ch, lno);
	if (c0 == 'b' && LIT(l, "bd cmd_id"))
		return g->no_nodes && g->no_layers ? SC_DROP : scan_node(l, 1, g, ch, lno);
	if (c0 == 'e' && LIT(l, "end parallel")) {
		struct gev *ev = push_ev(ch);
		if (!ev)
			return SC_OOM;
		ev->kind = EV_ENDPAR;
		ev->lno = lno;
		return SC_DONE;
	}
	int is_local = c0 == 'l' && LIT(l, "local_layer:");
	if (is_local || (c0 == 'g' && LIT(l, "global_layer:")))
		return g->no_nodes && g->no_layers ? SC_DROP
		                                   : scan_layer(text, l, is_local, g, ch, lno);
	if (c0 == 's' && LIT(l, "start parallel"))
		return SC_DROP; /* no body of bmp_gline_apply starts so */
	return SC_GENERIC;
}

/* Tokenizes chunk [ch->beg, ch->end) into events (see above). Pure apart from ch: reads the
 * text and the input flags of g only. Decides exactly as bmp_gline_apply would: a line the
 * fast forms do not cover goes to bmp_gline_apply unchanged. */
static void scan_chunk_into(const char *text, const struct bmp_global *g, struct gchunk *ch)
{
	size_t pos = ch->beg, len = ch->end;
	uint32_t no = 0;
	struct nlfind nf = {.text = text, .end = len};
	ch->nev = 0;
	ch->ntens = 0;
	ch->nlayers = 0;
	ch->oom = 0;
	while (pos < len) {
		size_t e = nl_next(&nf, pos);
		uint32_t lno = no++;
		size_t end = e;
		/* CRLF and trailing blanks are harmless variants. */
		while (end > pos &&
		       (text[end - 1] == '\r' || text[end - 1] == ' ' || text[end - 1] == '\t'))
			end--;
		const char *s = text + pos;
		size_t n = end - pos;
		pos = e + 1;
		struct bmp_line l;
		if (!line_body(s, n, &l))
			continue;
		enum scan_res res = scan_line(text, &l, g, ch, lno);
		if (res == SC_OOM)
			return;
		if (res != SC_GENERIC)
			continue;
		struct gev *ev = push_ev(ch);
		if (!ev)
			return;
		ev->kind = EV_LINE;
		ev->lno = lno;
		ev->a = (uint64_t)(l.s - text);
		ev->b = l.n;
	}
	ch->lines = no;
}

/* scan_chunk_into on a copy of the slot: the slots sit side by side in one array, and the
 * event count a worker bumps per event shared a cache line with the slot the applying thread
 * reads at the same time (the slot is written back once, when the chunk is done). */
static void scan_chunk(const char *text, const struct bmp_global *g, struct gchunk *ch)
{
	struct gchunk w = *ch;
	scan_chunk_into(text, g, &w);
	*ch = w;
}

/* The chunk's layer names as one batch of the string table (struct gfast), when no string
 * is interned between them: every layer type of the chunk is in the table already (a new one
 * would take an id between two names). Sets the type ids and Load/Store flags per chunk type
 * and the first name's id, and leaves the names' copy to bmp_gchunk_fill; 0: the layers are
 * added one by one. */
static int names_batch(struct bmp_gctx *c, const char *text, struct gfast *f, uint32_t *tid,
                       uint8_t *dm, uint32_t *first)
{
	f->recs = 0;
	if (!f->names || !f->nl)
		return 0;
	for (unsigned k = 0; k < f->ntypes; k++) {
		const char *tv = text + f->toff[k];
		if (!tp_profile_str_ok(tv, f->tlen[k]) ||
		    !tp_strtab_find(&c->p->strs, tv, f->tlen[k], &tid[k]))
			return 0;
		dm[k] = (uint8_t)data_move(tv, f->tlen[k]);
	}
	if (tp_strtab_reserve_unique(&c->p->strs, f->nlen, f->nname, first, &f->run, &f->nrun,
	                             &f->cap_run) != TP_OK)
		return 0;
	f->fill = 1;
	return 1;
}

/* Layer line ev of a batch (names_batch): its name is the next id unless it is empty. */
static int batch_layer(struct bmp_gctx *c, const struct gev *ev, uint32_t type, int dm,
                       uint32_t *next)
{
	int rc = bmp_gflush_layer(c);
	if (rc)
		return rc;
	return put_layer(c, (int64_t)ev->a, type, ev->n2 ? (*next)++ : 0, ev->eng, dm);
}

/* Whether the fill may write the records of the chunk's layers but its last (gfast.recs):
 * a batch chunk of two layers or more (fewer than a storage chunk holds), without tensors,
 * whose layers fit a record alone. */
static int recs_ok(const struct bmp_gctx *c, const struct gchunk *ch)
{
	const struct gfast *f = &ch->fast;
	if (f->nl < 2 || f->nl >= TP_LAYER_CHUNK || ch->ntens)
		return 0;
	int32_t core = -1; /* the largest lcore: the widest core field */
	for (size_t k = 0; k < f->nl; k++)
		if (f->lcore[k] > core)
			core = f->lcore[k];
	struct tp_layer l = {.core = core,
	                     .subnet = c->cur_subnet,
	                     .group = -1,
	                     .is_local = 1,
	                     .is_data_move = 1,
	                     .end_ns = -1};
	return tp_layer_fits(&l);
}

/* A batch chunk whose fill writes the records (recs_ok): the layers but the last are added at
 * once (tp_profile_add_layers), the last stays pending as add_layer leaves it. Only the last
 * layer line and the "end parallel." lines after it leave state behind: put_layer sets the
 * current and the pending layer whatever the lines before it did to them, and a second "end
 * parallel." changes nothing the first did not. So the events before it, which another
 * thread wrote, are not read here. */
static int apply_recs(struct bmp_gctx *c, struct gchunk *ch, const uint32_t *tid, const uint8_t *dm,
                      uint32_t name0)
{
	struct gfast *f = &ch->fast;
	size_t nl = f->nl - 1;
	int rc = bmp_gflush_layer(c);
	if (rc)
		return rc;
	if (tp_profile_add_layers(c->p, nl, &f->span) != TP_OK)
		return bmp_gctx_oom(c);
	f->recs = 1;
	f->name0 = name0;
	f->subnet = c->cur_subnet;
	memcpy(f->tid, tid, sizeof f->tid);
	memcpy(f->dm, dm, sizeof f->dm);
	const struct gev *ev = &ch->ev[f->lev[f->llast]];
	uint8_t t = f->ltype[nl];
	rc = put_layer(c, (int64_t)ev->a, tid[t], ev->n2 ? name0 + (uint32_t)f->nname - 1 : 0,
	               ev->eng, dm[t]);
	c->pend.core = f->lcore[nl];
	if (!rc && f->llast + 1 < f->nev)
		bmp_end_parallel(c);
	return rc;
}

/* The type and the whole name of layer line ev, which add_layer reads (and copies the name). */
static inline void prefetch_layer(const char *text, const struct gev *ev)
{
	__builtin_prefetch(text + ev->off);
	__builtin_prefetch(text + ev->b);
	__builtin_prefetch(text + ev->b + (ev->n2 ? ev->n2 - 1 : 0));
}

/* A fast chunk's layer, tensor and "end parallel." events one by one (batch: its names are
 * a batch of the string table, its types tid/dm, the next name's id *next). */
static int apply_lines(struct bmp_gctx *c, const char *text, const struct gchunk *ch, int batch,
                       const uint32_t *tid, const uint8_t *dm, uint32_t *next)
{
	const struct gfast *f = &ch->fast;
	size_t nl = 0;
	for (size_t j = 0; j < f->nev; j++) {
		/* The type and the name of a layer line a few ahead (another thread scanned
		 * them): add_layer copies the name. */
		if (!batch && j + 8 < f->nev && ch->ev[f->lev[j + 8]].kind == EV_LAYER)
			prefetch_layer(text, &ch->ev[f->lev[j + 8]]);
		const struct gev *ev = &ch->ev[f->lev[j]];
		int rc = TP_OK;
		if (ev->kind == EV_LAYER) {
			rc = batch ? batch_layer(c, ev, tid[f->ltype[nl]], dm[f->ltype[nl]], next)
			           : add_layer(c, (int64_t)ev->a, text + ev->off, ev->n,
			                       text + ev->b, ev->n2, ev->eng, ev->dir);
			c->pend.core = f->lcore[nl++];
		} else if (ev->kind == EV_TENSOR) {
			rc = bmp_gline_tensor_add(c, &ch->tens[ev->a]);
		} else {
			bmp_end_parallel(c);
		}
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* A chunk the scan sorted into node streams (struct gfast): its other lines in order (layers,
 * tensors, "end parallel."), then each stream's nodes at once, leaving what its events
 * applied one at a time leave (the nodes change nothing the other lines read but the pending
 * layer's core, which the scan found). */
static int apply_fast(struct bmp_gctx *c, const char *text, struct gchunk *ch)
{
	struct gfast *f = &ch->fast;
	int32_t carry = c->cur_layer;
	int32_t carry_ep = !c->g->keep_ids || carry < 0 || c->pend.is_local ? -1 : carry;
	/* The index the chunk's first layer line gets (add_layer; the pending one is next). */
	int64_t base = (int64_t)c->p->num_layers + (c->pend_layer >= 0);
	if (carry >= 0 && c->pend.core < 0 && f->core_carry >= 0)
		c->pend.core = f->core_carry;
	if (carry_ep >= 0 && c->pend.core < 0 && f->core_ep >= 0)
		c->pend.core = f->core_ep;
	uint32_t tid[GTYPES], next;
	uint8_t dm[GTYPES];
	int batch = names_batch(c, text, f, tid, dm, &next);
	int rc = batch && recs_ok(c, ch) ? apply_recs(c, ch, tid, dm, next)
	                                 : apply_lines(c, text, ch, batch, tid, dm, &next);
	if (rc)
		return rc;
	if (bmp_gfast_nodes(c->g, f, base, carry, carry_ep) != TP_OK)
		return bmp_gctx_oom(c);
	return TP_OK;
}

int bmp_gchunk_apply(struct bmp_gctx *c, const char *text, struct gchunk *ch,
                     unsigned long first_no)
{
	if (ch->oom)
		return bmp_gctx_oom(c);
	if (ch->fast.on)
		return apply_fast(c, text, ch);
	for (size_t i = 0; i < ch->nev; i++) {
		const struct gev *ev = &ch->ev[i];
		/* Another thread wrote the events and scanned the text, so neither is in this
		 * core's cache: the events further ahead, and the type and the whole name of a
		 * layer line 16 events ahead, which add_layer reads here (the name is copied into
		 * the string table). */
		if (i + 32 < ch->nev)
			__builtin_prefetch(&ch->ev[i + 32]);
		if (i + 16 < ch->nev && ch->ev[i + 16].kind == EV_LAYER)
			prefetch_layer(text, &ch->ev[i + 16]);
		struct bmp_line l;
		l.no = first_no + ev->lno;
		l.parsed = 0;
		int rc = TP_OK;
		switch (ev->kind) {
		case EV_NODE:
			l.s = "";
			l.n = 0;
			rc = push_node(c, &l, ev->eng, ev->core, ev->a, ev->b, ev->dir);
			break;
		case EV_LAYER:
			rc = add_layer(c, (int64_t)ev->a, text + ev->off, ev->n, text + ev->b,
			               ev->n2, ev->eng, ev->dir);
			break;
		case EV_ENDPAR:
			bmp_end_parallel(c);
			break;
		case EV_TENSOR:
			rc = bmp_gline_tensor_add(c, &ch->tens[ev->a]);
			break;
		default:
			l.s = text + ev->a;
			l.n = (size_t)ev->b;
			rc = bmp_gline_apply(c, &l);
			break;
		}
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* Scans chunk k into slot ch (any thread). */
void bmp_gchunk_scan(const char *text, size_t len, const struct bmp_global *g, struct gchunk *ch,
                     size_t k)
{
	ch->beg = chunk_start(text, len, k);
	ch->end = chunk_start(text, len, k + 1);
	if (ch->end < ch->beg)
		ch->end = ch->beg;
	ch->lines = 0;
	bmp_gchunk_fill(ch); /* the slot's last chunk's names, before they are replaced */
	scan_chunk(text, g, ch);
	bmp_gfast_build(text, g, ch);
}

int bmp_nodes_grow(struct bmp_nodes *nd, int keep_ids, size_t need, size_t nmark)
{
	uint8_t *ld = tp_grow(nd->ld, 1, need, &nd->cap_ld);
	if (!ld)
		return TP_ENOMEM;
	nd->ld = ld;
	int32_t *m = tp_grow(nd->mark, sizeof *m, nmark, &nd->cap_mark);
	if (!m)
		return TP_ENOMEM;
	nd->mark = m;
	if (!keep_ids || need <= nd->cap)
		return TP_OK;
	size_t cap = nd->cap, cap2 = nd->cap, cap3 = nd->cap;
	uint32_t *b = tp_grow(nd->bd_id, sizeof *b, need, &cap);
	if (!b)
		return TP_ENOMEM;
	nd->bd_id = b;
	uint32_t *gd = tp_grow(nd->gdma_id, sizeof *gd, need, &cap2);
	if (!gd)
		return TP_ENOMEM;
	nd->gdma_id = gd;
	uint8_t *dr = tp_grow(nd->dir, 1, need, &cap3);
	if (!dr)
		return TP_ENOMEM;
	nd->dir = dr;
	nd->cap = cap < cap2 ? (cap < cap3 ? cap : cap3) : (cap2 < cap3 ? cap2 : cap3);
	return TP_OK;
}

int32_t bmp_nodes_layer(const struct bmp_nodes *nd, size_t i, struct bmp_node_cursor *cur)
{
	/* Walk on from the cursor when node i is at most one mark ahead; else restart at i's
	 * mark. */
	if (!cur->pos || i + 1 < cur->pos || i + 1 - cur->pos > BMP_NODE_MARK) {
		size_t m = i / BMP_NODE_MARK, at = m * BMP_NODE_MARK;
		size_t lo = 0, hi = nd->nesc;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (nd->esc[mid].node <= at)
				lo = mid + 1;
			else
				hi = mid;
		}
		cur->pos = at + 1;
		cur->v = nd->mark[m];
		cur->esc = lo;
	}
	while (cur->pos <= i) {
		uint8_t d = nd->ld[cur->pos];
		if (d == 255 && cur->esc < nd->nesc && nd->esc[cur->esc].node == cur->pos)
			cur->v = nd->esc[cur->esc++].layer;
		else
			cur->v += d;
		cur->pos++;
	}
	return cur->v;
}

void bmp_global_free(struct bmp_global *g)
{
	for (int i = 0; i < BMP_MAX_CORES; i++)
		for (int e = 0; e < 2; e++) {
			struct bmp_nodes *n = &g->nodes[i][e];
			TP_FREE_ALL(n->ld, n->mark, n->esc, n->bd_id, n->gdma_id, n->dir);
			memset(n, 0, sizeof *n);
		}
}
