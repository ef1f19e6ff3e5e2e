/*
 * html.c — writes result.html: the page skeleton, CSS and JS embedded at build time from
 * src/writers/html/web/ (generated html_assets.c), with the profile's data as one JSON document
 * inside <script type="application/json" id="tp-data">.
 *
 * Data layout (read by web/app.js, version 2): small things (arch, clocks, per-core engine
 * statistics, rankings, notes) as plain JSON; everything per command, per layer or per memory
 * record as binary integer columns (put_col: base64 of zigzag varints, plain / delta / runs,
 * whichever is shortest; about 20 bytes per command in all). Each timeline lane has "ts" (gap
 * from the previous command's end, ns), "dur" (with "durRes":1 the difference from
 * trunc(cyc / mhz * 1000)), name/type as indexes into one string table of the strings
 * actually used, cmd id, cycles, bytes, layer index + 1, height 0..1000 (only for lanes
 * without "hd":1: TIU and DMA heights are derived by the page), direction, dtype, stall,
 * dependency, argument set, class, depth, uArch rate, Alg / uArch Ops. A column with the same
 * value for every command is written as that one number (and left out when it is 0).
 *
 * Owns nothing beyond one call: every buffer is released before tp_html_write_file returns.
 * Memory beyond the profile and the output buffer: a column buffer of 8 bytes per layer (each
 * column computed once, see struct ctx.vals) and, while a Layer lane made from the layer table
 * is written, 4 bytes per layer of that lane (its slice order).
 * Strings from the input only ever pass through tp_buf_json_str (JSON, "</" and "<!--"
 * escaped) or html_text (the <title>), and the page inserts them with textContent.
 */
#include "writers/html/html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Generated from web/ by embed_assets.cmake. */
extern const unsigned char tp_html_page_html[];
extern const size_t tp_html_page_html_len;
extern const unsigned char tp_html_app_css[];
extern const size_t tp_html_app_css_len;
extern const unsigned char tp_html_app_js[];
extern const size_t tp_html_app_js_len;

#define FLUSH_AT (1u << 20)
/* The column buffer (struct ctx.vals) holds at least this many values (512 KB). */
#define VALS_MIN ((size_t)1 << 16)
#define TOP_MAX 200
/* Argument sets beyond this many JSON bytes are left out (and the page says so): a generated
 * dump with a private argument set per command must not turn the page into gigabytes. */
#define ARGS_BUDGET ((size_t)64 << 20)

struct out {
	struct tp_buf b;
	FILE *fp;
	int err;
};

static void flush_out(struct out *o, int force)
{
	if (o->b.oom)
		o->err = TP_ENOMEM;
	if (o->err || (!force && o->b.len < FLUSH_AT))
		return;
	if (o->b.len && fwrite(o->b.data, 1, o->b.len, o->fp) != o->b.len)
		o->err = TP_EOUTPUT;
	o->b.len = 0;
}

/* Integers beyond 2^53 would lose digits in JavaScript, so they travel as strings. */
static void put_u64(struct tp_buf *b, uint64_t v)
{
	if (v > ((uint64_t)1 << 53)) {
		tp_buf_putc(b, '"');
		tp_buf_u64(b, v);
		tp_buf_putc(b, '"');
		return;
	}
	tp_buf_u64(b, v);
}

/* A real in fixed notation with up to 6 decimals, trailing zeros trimmed; null if not finite. */
static void put_real(struct tp_buf *b, double v)
{
	if (!isfinite(v)) {
		tp_buf_puts(b, "null");
		return;
	}
	size_t at = b->len;
	tp_buf_fixed(b, v, 6);
	if (b->oom)
		return;
	while (b->len > at + 1 && b->data[b->len - 1] == '0')
		b->len--;
	if (b->data[b->len - 1] == '.')
		b->len--;
}

static void put_str(struct tp_buf *b, const char *s)
{
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, s ? s : "");
	tp_buf_putc(b, '"');
}

/* Text for an HTML element body (the <title>): & < > " ' become character references. */
static void html_text(struct tp_buf *b, const char *s)
{
	/* One line of valid UTF-8 without control characters (common's text-safety layer). */
	struct tp_buf t;
	tp_buf_init(&t);
	tp_text_put(&t, s, strlen(s), TP_TEXT_CTRL | TP_TEXT_LINE, 0, 0);
	s = t.data && !t.oom ? t.data : "";
	for (; *s; s++) {
		switch (*s) {
		case '&':
			tp_buf_puts(b, "&amp;");
			break;
		case '<':
			tp_buf_puts(b, "&lt;");
			break;
		case '>':
			tp_buf_puts(b, "&gt;");
			break;
		case '"':
			tp_buf_puts(b, "&quot;");
			break;
		case '\'':
			tp_buf_puts(b, "&#39;");
			break;
		default:
			tp_buf_putc(b, *s);
		}
	}
	tp_buf_free(&t);
}

/* ------------------------------------------------------------------------------------------ */
/* Binary integer columns.                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* An integer column travels as one JSON string: a mode letter, then base64 (RFC 4648, padded)
 * of zigzag LEB128 varints. Mode 'r': the values; 'd': each value's difference from the
 * previous one (the first from 0); 'l' / 'm': runs, pairs (value, run length), of the values
 * ('l') or of the differences ('m'). Upper case ('R', 'D', 'L', 'M'): some value is beyond
 * int32 (up to 2^51; the page decodes into a Float64Array instead of an Int32Array). The
 * writer picks the shortest of the four. Base64 characters never need escaping in JSON or in
 * a <script> element. Values beyond +-2^51 are clamped (no profile quantity reaches them). */
#define COL_LIM ((int64_t)1 << 51)

typedef int64_t (*col_get_fn)(void *u, size_t i);

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static size_t varint_len(uint64_t z)
{
	/* 7 bits a byte: 1 + (bit length - 1) / 7 (z = 0 takes one byte). */
	return z ? (size_t)(70 - __builtin_clzll(z)) / 7 : 1;
}

static int64_t col_clamp(int64_t v)
{
	return v > COL_LIM ? COL_LIM : v < -COL_LIM ? -COL_LIM : v;
}

/* The base64 of a byte stream, staged: bytes gather in `in` and go out 3 at a time as 4
 * characters, B64_STAGE bytes (a multiple of 3) per tp_buf_put, so the characters are those
 * of one encoding of the whole stream. */
#define B64_STAGE 768
struct b64w {
	struct out *o;
	size_t n;
	unsigned char in[B64_STAGE];
};

static const char b64_abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Encodes the staged whole triplets (all of them when n is a multiple of 3) and keeps the
 * rest (0..2 bytes) staged. */
static void b64_flush(struct b64w *w)
{
	char q[B64_STAGE / 3 * 4];
	size_t whole = w->n / 3 * 3, k = 0;
	for (size_t i = 0; i < whole; i += 3) {
		uint32_t a = (uint32_t)w->in[i] << 16 | (uint32_t)w->in[i + 1] << 8 | w->in[i + 2];
		q[k++] = b64_abc[a >> 18 & 63];
		q[k++] = b64_abc[a >> 12 & 63];
		q[k++] = b64_abc[a >> 6 & 63];
		q[k++] = b64_abc[a & 63];
	}
	if (k)
		tp_buf_put(&w->o->b, q, k);
	memmove(w->in, w->in + whole, w->n - whole);
	w->n -= whole;
}

static void b64_end(struct b64w *w)
{
	b64_flush(w);
	if (!w->n)
		return;
	uint32_t a = (uint32_t)w->in[0] << 16 | (w->n == 2 ? (uint32_t)w->in[1] << 8 : 0u);
	char q[4] = {b64_abc[a >> 18 & 63], b64_abc[a >> 12 & 63],
	             w->n == 2 ? b64_abc[a >> 6 & 63] : '=', '='};
	tp_buf_put(&w->o->b, q, 4);
	w->n = 0;
}

static inline void b64_varint(struct b64w *w, int64_t v)
{
	if (w->n > B64_STAGE - 10) /* a varint takes at most 10 bytes */
		b64_flush(w);
	uint64_t z = zigzag(v);
	while (z >= 0x80) {
		w->in[w->n++] = (unsigned char)((z & 0x7f) | 0x80);
		z >>= 7;
	}
	w->in[w->n++] = (unsigned char)z;
}

/* Writes ,"KEY":"<mode><base64>" for values get(u, 0..n-1): the body of put_col and
 * put_col_vals (inlined into each, so the array reader's get is a load). */
static inline __attribute__((always_inline)) void put_col_with(struct out *o, const char *key,
                                                               size_t n, col_get_fn get, void *u)
{
	size_t len[4] = {0, 0, 0, 0}; /* plain, delta, runs of values, runs of differences */
	int wide = 0;
	int64_t prev = 0, rv[2] = {0, 0};
	size_t run[2] = {0, 0};
	for (size_t i = 0; i < n; i++) {
		int64_t v = col_clamp(get(u, i));
		if (v > INT32_MAX || v < INT32_MIN)
			wide = 1;
		int64_t x[2] = {v, v - prev};
		prev = v;
		for (int k = 0; k < 2; k++) {
			len[k] += varint_len(zigzag(x[k]));
			if (run[k] && x[k] == rv[k]) {
				run[k]++;
				continue;
			}
			if (run[k])
				len[2 + k] += varint_len(zigzag(rv[k])) + varint_len(run[k]);
			rv[k] = x[k];
			run[k] = 1;
		}
	}
	for (int k = 0; k < 2; k++)
		if (run[k])
			len[2 + k] += varint_len(zigzag(rv[k])) + varint_len(run[k]);
	int mode = 0;
	for (int k = 1; k < 4; k++)
		if (len[k] < len[mode])
			mode = k;
	tp_buf_printf(&o->b, ",\"%s\":\"%c", key, (wide ? "RDLM" : "rdlm")[mode]);
	struct b64w w;
	w.o = o;
	w.n = 0;
	int d = mode & 1;
	prev = 0;
	int64_t cur = 0;
	size_t cnt = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t v = col_clamp(get(u, i));
		int64_t x = d ? v - prev : v;
		prev = v;
		if (mode < 2) {
			b64_varint(&w, x);
		} else if (cnt && x == cur) {
			cnt++;
		} else {
			if (cnt) {
				b64_varint(&w, cur);
				b64_varint(&w, (int64_t)cnt);
			}
			cur = x;
			cnt = 1;
		}
		if ((i & 4095) == 4095)
			flush_out(o, 0);
	}
	if (cnt) {
		b64_varint(&w, cur);
		b64_varint(&w, (int64_t)cnt);
	}
	b64_end(&w);
	tp_buf_putc(&o->b, '"');
	flush_out(o, 0);
}

static void put_col(struct out *o, const char *key, size_t n, col_get_fn get, void *u)
{
	put_col_with(o, key, n, get, u);
}

static inline int64_t vals_col(void *u, size_t i)
{
	return ((const int64_t *)u)[i];
}

/* put_col of the values v[0..n-1]. */
static void put_col_vals(struct out *o, const char *key, size_t n, const int64_t *v)
{
	put_col_with(o, key, n, vals_col, (void *)(uintptr_t)v);
}

/* ------------------------------------------------------------------------------------------ */
/* String table: only the profile strings the page uses, numbered in first-use order.          */
/* ------------------------------------------------------------------------------------------ */

struct strmap {
	uint32_t *idx; /* profile string id -> page index + 1, 0 = not yet used (turned into
	                  page index -> profile string id by strmap_invert, at the end) */
	size_t n, nprof;
};

static uint32_t smap(struct strmap *m, uint32_t id)
{
	if (id >= m->nprof)
		id = 0;
	if (m->idx[id])
		return m->idx[id] - 1;
	m->idx[id] = (uint32_t)++m->n;
	return (uint32_t)(m->n - 1);
}

#define STR_DONE 0x80000000u /* strmap_invert: the entry is a final page -> string entry */

/* Turns idx (string -> page + 1) into page -> string in place (STR_DONE set; entries from n
 * on are 0), so the table needs no second array (4 bytes per string; a generated dump's
 * page uses every layer name). Each string's entry is moved along the chain of the entries it
 * displaces: O(nprof). smap must not be called afterwards. Needs nprof < 2^31 (checked by
 * the caller). */
static void strmap_invert(struct strmap *m)
{
	uint32_t *a = m->idx;
	for (size_t p = 0; p < m->nprof; p++) {
		if (!a[p] || (a[p] & STR_DONE))
			continue;
		uint32_t s = (uint32_t)p, v = a[p];
		a[p] = 0;
		for (;;) {
			uint32_t j = v - 1, next = a[j];
			a[j] = s | STR_DONE;
			if (!next) /* an unused string's entry (or one already moved on) */
				break;
			s = j;
			v = next;
		}
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Arch facts the page needs that the model does not carry.                                    */
/* ------------------------------------------------------------------------------------------ */

struct arch_facts {
	double ddr_max_gbps; /* per-core DDR peak, scale of DMA block heights; 0 = use max seen */
	uint32_t lane_bytes; /* local memory of one NPU lane */
	uint32_t banks;      /* banks per lane */
	uint32_t npus;       /* lanes */
};

static struct arch_facts facts_of(const struct tp_chip *c)
{
	/* The chip table (src/readers/sophgo/chip.c) holds these constants with their sources. */
	struct arch_facts f = {0, 0, 0, 0};
	if (c) {
		f.ddr_max_gbps = c->ddr_max_gbps;
		f.lane_bytes = c->lane_bytes;
		f.banks = c->banks;
		f.npus = c->npu_num;
	}
	return f;
}

/* ------------------------------------------------------------------------------------------ */
/* Lanes.                                                                                      */
/* ------------------------------------------------------------------------------------------ */

struct lane {
	int track; /* profile track index, -1 for a lane made from layers */
	int kind;  /* enum tp_track_kind */
	int32_t device, core;
	const struct tp_slice *s; /* the track's slices, or NULL for a lane made from layers */
	size_t n;
	uint32_t *lay;              /* lane made from layers: owned layer indexes in slice
	                               order (4 bytes a layer; lane_at builds each slice) ... */
	struct lwalk *walk;         /* ... or, when the table lists them nearly in that order,
	                               owned: lane_at's walk of the table (tp_walk) */
	struct tp_layer_memo *memo; /* lane made from layers: owned (lane_label and height_of
	                               of one slice decode its layer once; lane_at and lane_end
	                               read only the span) */
	double mhz;
	const char *label;
};

static int kind_order(int k)
{
	switch (k) {
	case TP_TRACK_LAYER:
		return 0;
	case TP_TRACK_MCU:
		return 1;
	case TP_TRACK_GDMA:
		return 2;
	case TP_TRACK_SDMA:
		return 3;
	case TP_TRACK_CDMA:
		return 4;
	case TP_TRACK_TIU:
		return 5;
	default:
		return 6;
	}
}

static int lane_cmp(const void *x, const void *y)
{
	const struct lane *a = x, *b = y;
	int ah = a->core < 0, bh = b->core < 0; /* host / thread lanes last */
	if (ah != bh)
		return ah - bh;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->core != b->core)
		return a->core < b->core ? -1 : 1;
	if (kind_order(a->kind) != kind_order(b->kind))
		return kind_order(a->kind) - kind_order(b->kind);
	return a->track - b->track;
}

/* A walk of the layer table for a lane made from layers nearly in table order (the callers
 * ask for slices in order, and for the one before: tp_walk_at). */
struct lwalk {
	struct tp_walk w;
	const struct tp_profile *p;
	uint64_t *bits; /* owned: bit i = layer i is on the lane (1 bit a layer: a walk looks at
	                   every layer of the table) */
};

static int lwalk_keep(const void *ctx, size_t i)
{
	const struct lwalk *l = ctx;
	return (int)(l->bits[i / 64] >> (i % 64) & 1);
}

static void lwalk_free(struct lwalk *w)
{
	if (w)
		tp_free(w->bits);
	tp_free(w);
}

static int layer_before(const void *ctx, uint32_t x, uint32_t y);

static int lwalk_before(const void *ctx, uint32_t x, uint32_t y)
{
	return layer_before(((const struct lwalk *)ctx)->p, x, y);
}

/* The layer index of slice i of a lane made from layers. */
static size_t lane_layer(const struct lane *l, size_t i)
{
	return l->lay ? l->lay[i] : tp_walk_at(&l->walk->w, i);
}

/* Slice i of a lane: the track's own, or for a lane made from layers one built into *tmp (the
 * layer's span, named by its type, typed by its name, tied to it). */
static const struct tp_slice *lane_at(const struct tp_profile *p, const struct lane *l, size_t i,
                                      struct tp_slice *tmp)
{
	if (!l->lay && !l->walk)
		return &l->s[i];
	size_t li = lane_layer(l, i);
	int64_t begin, end;
	tp_profile_layer_span(p, li, &begin, &end); /* the span alone: no decode */
	memset(tmp, 0, sizeof *tmp);
	tmp->start_ns = begin;
	tmp->layer = (int32_t)li;
	return tmp;
}

/* The end of slice s of lane l (from lane_at): its track's, or its layer's. */
static int64_t lane_end(const struct tp_profile *p, const struct lane *l, const struct tp_slice *s)
{
	if (!l->lay && !l->walk)
		return tp_slice_end(&p->tracks[l->track], s);
	int64_t begin, end;
	tp_profile_layer_span(p, (size_t)s->layer, &begin, &end);
	return end;
}

/* The label of slice s of lane l (from lane_at): its track's, or for a lane made from layers
 * the layer's type as name and its name as type, a normal command. */
static struct tp_label lane_label(const struct tp_profile *p, const struct lane *l,
                                  const struct tp_slice *s)
{
	if (!l->lay && !l->walk)
		return *tp_slice_label(&p->tracks[l->track], s);
	const struct tp_layer *y = tp_layer_memo_get(p, l->memo, (size_t)s->layer);
	return (struct tp_label){.name = y->type, .type = y->name, .kind = TP_CMD_NORMAL};
}

/* Layer x before layer y on a lane made from layers: start ascending, end descending, then
 * layer index (a total order, so the sort's result is unique). ctx: the profile. */
static int layer_before(const void *ctx, uint32_t x, uint32_t y)
{
	int64_t ab, ae, bb, be;
	tp_profile_layer_span(ctx, x, &ab, &ae);
	tp_profile_layer_span(ctx, y, &bb, &be);
	if (ab != bb)
		return ab < bb;
	if (ae != be)
		return ae > be;
	return x < y;
}

/* Builds a Layer lane for (device, core) from the layer table when the reader made none: the
 * indexes of its layers in slice order, or only a walk of the table when it lists them in
 * that order already (lane_at makes the slices). */
static int layer_lane(const struct tp_profile *p, int32_t device, int32_t core, struct lane *l)
{
	memset(l, 0, sizeof *l);
	l->track = -1;
	l->kind = TP_TRACK_LAYER;
	l->device = device;
	l->core = core;
	l->label = "Layer";
	size_t n = 0;
	if (p->num_layers > UINT32_MAX)
		return TP_ENOMEM;
	struct lwalk *w = tp_calloc(1, sizeof *w);
	if (!w || !(w->bits = tp_calloc(p->num_layers / 64 + 1, sizeof *w->bits))) {
		lwalk_free(w);
		return TP_ENOMEM;
	}
	w->p = p;
	for (size_t i = 0; i < p->num_layers; i++) {
		int32_t ldev, lcore;
		if (tp_profile_layer_place(p, i, &ldev, &lcore) && ldev == device &&
		    lcore == core) {
			w->bits[i / 64] |= (uint64_t)1 << (i % 64);
			n++;
		}
	}
	if (!n) {
		lwalk_free(w);
		return TP_OK;
	}
	if (!(l->memo = tp_calloc(1, sizeof *l->memo))) {
		lwalk_free(w);
		return TP_ENOMEM;
	}
	tp_walk_start(&w->w, p->num_layers, lwalk_keep, lwalk_before, w);
	if (tp_walk_ordered(&w->w, &n)) { /* the usual case: walk the table, no index */
		l->walk = w;
		l->n = n;
		return TP_OK;
	}
	lwalk_free(w);
	l->lay = tp_malloc(n * sizeof *l->lay);
	uint32_t *tmp = tp_malloc(n * sizeof *tmp);
	if (!l->lay || !tmp) {
		tp_free(l->lay);
		tp_free(tmp);
		l->lay = NULL;
		return TP_ENOMEM;
	}
	for (size_t i = 0; i < p->num_layers; i++) {
		struct tp_layer ly;
		const struct tp_layer *y = tp_profile_layer(p, i, &ly);
		if (y->device == device && y->core == core && y->begin_ns <= y->end_ns)
			l->lay[l->n++] = (uint32_t)i;
	}
	tp_sort_index(l->lay, tmp, l->n, layer_before, p);
	tp_free(tmp);
	return TP_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Per-command derived values.                                                                */
/* ------------------------------------------------------------------------------------------ */

struct keys {
	uint32_t uarch_rate, alg_ops, uarch_ops; /* 0 = key absent from the profile */
};

static double arg_num(const struct tp_profile *p, const struct tp_arg *a)
{
	switch (a->type) {
	case TP_ARG_INT:
		return (double)a->v.i;
	case TP_ARG_UINT:
		return (double)a->v.u;
	case TP_ARG_REAL:
		return a->v.d;
	default:
		return strtod(tp_str(p, a->v.s), NULL); /* "74.9%" -> 74.9 */
	}
}

/* The cost entry of a lane's slice (TIU tracks with descriptors) in *buf, NULL if none. */
static const struct tp_cost *slice_cost(const struct tp_profile *p, const struct lane *l,
                                        const struct tp_slice *s, struct tp_cost *buf)
{
	if (l->track < 0 || l->kind != TP_TRACK_TIU)
		return NULL;
	const struct tp_track *t = &p->tracks[l->track];
	if (!t->cost || s < t->slices || s >= t->slices + t->count)
		return NULL;
	return tp_track_get_cost(t, (size_t)(s - t->slices), buf) ? buf : NULL;
}

/* TIU uArch rate in 0..1: the cost model's Alg Ops / uArch Ops, else the command's uArch Rate
 * or Alg/uArch Ops arguments; -1 if unknown. */
static double tiu_util(const struct tp_profile *p, const struct keys *k, const struct lane *l,
                       const struct tp_slice *s)
{
	struct tp_cost cb;
	const struct tp_cost *c = slice_cost(p, l, s, &cb);
	if (c)
		return c->uarch_ops ? (double)c->alg_ops / (double)c->uarch_ops : 0;
	size_t n;
	const struct tp_arg *a = tp_args_get(p, s->args, &n);
	double alg = -1, uarch = -1;
	for (size_t i = 0; a && i < n; i++) {
		if (k->uarch_rate && a[i].key == k->uarch_rate)
			return arg_num(p, &a[i]) / 100.0;
		if (k->alg_ops && a[i].key == k->alg_ops)
			alg = arg_num(p, &a[i]);
		if (k->uarch_ops && a[i].key == k->uarch_ops)
			uarch = arg_num(p, &a[i]);
	}
	if (alg >= 0 && uarch > 0)
		return alg / uarch;
	return -1;
}

/* Bytes per ns = GB/s over the command's engine cycles (its duration if it has none). */
static double slice_gbps(const struct tp_slice *s, uint32_t bytes, int64_t end, double mhz)
{
	double ns =
	    s->cycles && mhz > 0 ? (double)s->cycles * 1000.0 / mhz : (double)(end - s->start_ns);
	return ns > 0 ? (double)bytes / ns : 0;
}

static int height_of(const struct tp_profile *p, const struct keys *k, const struct lane *l,
                     const struct tp_slice *s, double bw_scale)
{
	double h = 1;
	if (tp_track_kind_is_dma((enum tp_track_kind)l->kind)) {
		h = bw_scale > 0
		        ? slice_gbps(s, lane_label(p, l, s).bytes, lane_end(p, l, s), l->mhz) /
		              bw_scale
		        : 1;
		if (lane_label(p, l, s).kind != TP_CMD_NORMAL)
			h = 0.15; /* sys commands: a thin marker, they move no data */
	} else if (l->kind == TP_TRACK_TIU) {
		/* Bar height = uArch rate when known; full height (and "n/a" in the tooltip)
		 * when the dump has no descriptors. */
		double u = tiu_util(p, k, l, s);
		h = u >= 0 ? u : 1;
		if (lane_label(p, l, s).kind != TP_CMD_NORMAL)
			h = 0.15;
	} else if (l->kind == TP_TRACK_LAYER) {
		struct tp_layer ly;
		h = s->layer >= 0 && (size_t)s->layer < p->num_layers &&
		            (l->memo ? tp_layer_memo_get(p, l->memo, (size_t)s->layer)
		                     : tp_profile_layer(p, (size_t)s->layer, &ly))
		                ->is_data_move
		        ? 0.5
		        : 1;
	}
	if (!(h >= 0.02))
		h = 0.02; /* keep every command visible */
	if (h > 1)
		h = 1;
	return (int)lround(h * 1000);
}

/* ------------------------------------------------------------------------------------------ */
/* JSON sections.                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* "ua" = TIU uArch rate in 0.01 % steps + 1 (0 = unknown), "ao" / "uo" = Alg / uArch Ops
 * (0 = unknown). */
enum col {
	C_TS,
	C_DUR,
	C_NAME,
	C_TYPE,
	C_CMD,
	C_CYC,
	C_BYTES,
	C_LAYER,
	C_H,
	C_DIR,
	C_DT,
	C_STALL,
	C_DEP,
	C_ARGS,
	C_KIND,
	C_DEPTH,
	C_UA,
	C_AO,
	C_UO,
	C_COUNT
};
static const char *const col_key[C_COUNT] = {"ts", "dur", "nm",  "ty", "cmd", "cyc", "by",
                                             "ly", "h",   "dir", "dt", "st",  "dep", "ar",
                                             "ck", "dp",  "ua",  "ao", "uo"};

struct ctx {
	const struct tp_profile *p;
	const struct tp_analysis *a;
	struct out o;
	struct strmap sm;
	struct keys k;
	uint32_t *argmap; /* profile argset id -> page index + 1 (0 = not embedded) */
	size_t num_argsets_out, args_dropped;
	double bw_scale;
	int64_t t0;    /* span start: page times are relative to it */
	int64_t *vals; /* owned, cap_vals entries (NULL if none): one column of a lane or of
	                  the layer table, computed once for the "same value" check and
	                  put_col's two passes (8 bytes a layer: sized for the layer table,
	                  used for every lane that fits) */
	size_t cap_vals;
};

static int64_t col_val(struct ctx *c, const struct lane *l, const struct tp_slice *s, int col)
{
	switch (col) {
	case C_DUR:
		return lane_end(c->p, l, s) - s->start_ns;
	case C_NAME:
		return smap(&c->sm, lane_label(c->p, l, s).name);
	case C_TYPE:
		return smap(&c->sm, lane_label(c->p, l, s).type);
	case C_CMD:
		return s->cmd_id;
	case C_CYC:
		return s->cycles;
	case C_BYTES:
		return lane_label(c->p, l, s).bytes;
	case C_LAYER:
		return (int64_t)s->layer + 1;
	case C_H:
		return height_of(c->p, &c->k, l, s, c->bw_scale);
	case C_DIR:
		return lane_label(c->p, l, s).dir;
	case C_DT:
		return lane_label(c->p, l, s).dtype;
	case C_STALL:
		return lane_label(c->p, l, s).stall;
	case C_DEP:
		return s->dep_id;
	case C_ARGS:
		return c->argmap && s->args < c->p->num_argsets ? c->argmap[s->args] : 0;
	case C_KIND:
		return lane_label(c->p, l, s).kind;
	case C_DEPTH:
		return lane_label(c->p, l, s).depth;
	case C_UA: {
		if (l->kind != TP_TRACK_TIU || lane_label(c->p, l, s).kind != TP_CMD_NORMAL)
			return 0;
		double u = tiu_util(c->p, &c->k, l, s);
		return u >= 0 ? (int64_t)llround(u * 10000) + 1 : 0;
	}
	case C_AO:
	case C_UO: {
		struct tp_cost kb;
		const struct tp_cost *k = slice_cost(c->p, l, s, &kb);
		uint64_t v = !k ? 0 : col == C_AO ? k->alg_ops : k->uarch_ops;
		return v < ((uint64_t)1 << 53) ? (int64_t)v : 0;
	}
	default:
		return 0;
	}
}

struct lane_get {
	struct ctx *c;
	const struct lane *l;
	int col;
	double mhz;   /* the lane clock exactly as printed */
	int residual; /* "dur" is the difference from trunc(cycles / mhz * 1000) */
};

static int64_t lane_col(void *u, size_t i)
{
	struct lane_get *g = u;
	struct tp_slice tmp, tprev;
	const struct tp_slice *s = lane_at(g->c->p, g->l, i, &tmp);
	if (g->col == C_TS)
		return s->start_ns -
		       (i ? lane_end(g->c->p, g->l, lane_at(g->c->p, g->l, i - 1, &tprev))
		          : g->c->t0);
	int64_t v = col_val(g->c, g->l, s, g->col);
	if (g->col == C_DUR && g->residual)
		v -= (int64_t)((double)s->cycles / g->mhz * 1000.0);
	return v;
}

/* Column g->col of lane g->l into v[0..n-1]: lane_col of each slice, the slices of a track's
 * lane taken straight from its array. */
static void fill_col(struct lane_get *g, int64_t *v)
{
	const struct lane *l = g->l;
	if (!l->s || g->col == C_TS || (g->col == C_DUR && g->residual)) {
		for (size_t i = 0; i < l->n; i++)
			v[i] = lane_col(g, i);
		return;
	}
	for (size_t i = 0; i < l->n; i++)
		v[i] = col_val(g->c, l, &l->s[i], g->col);
}

/* Rows of a lane, as the page packs them: layers overlap inside a layer group, so they go
 * greedily into the first row whose last block has ended (at most LAYER_ROWS rows, the last
 * one shared); thread lanes use their nesting depth (at most 16 rows). */
#define LAYER_ROWS 6

static int lane_rows(const struct tp_profile *p, const struct lane *l)
{
	int rows = 1;
	struct tp_slice tmp;
	if (l->kind == TP_TRACK_LAYER) {
		int64_t row_end[LAYER_ROWS];
		int used = 0;
		for (size_t i = 0; i < l->n; i++) {
			const struct tp_slice *s = lane_at(p, l, i, &tmp);
			int r = 0;
			while (r < used && row_end[r] > s->start_ns)
				r++;
			if (r >= LAYER_ROWS)
				r = LAYER_ROWS - 1;
			if (r == used)
				row_end[used++] = lane_end(p, l, s);
			else if (lane_end(p, l, s) > row_end[r])
				row_end[r] = lane_end(p, l, s);
		}
		return used > 1 ? used : 1;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct tp_slice *s = lane_at(p, l, i, &tmp);
		unsigned depth = lane_label(p, l, s).depth;
		int d = depth > 15 ? 15 : (int)depth;
		if (d + 1 > rows)
			rows = d + 1;
	}
	return rows;
}

/* A coarse level of detail the page draws before it has decoded the commands: the span in
 * LOD_BUCKETS equal buckets, per bucket the tallest block touching it ("h", 0 = empty) and
 * its colour ("s": its name's string index, -1 for a sys command), rows merged. */
#define LOD_BUCKETS 4096

struct lod_get {
	const uint16_t *h;
	const int32_t *s;
	int col;
};

static int64_t lod_col(void *u, size_t i)
{
	struct lod_get *g = u;
	return g->col ? g->s[i] : g->h[i];
}

static void emit_lod(struct ctx *c, const struct lane *l)
{
	if (!l->n)
		return;
	uint16_t *h = tp_calloc(LOD_BUCKETS, sizeof *h);
	int32_t *sv = tp_calloc(LOD_BUCKETS, sizeof *sv);
	if (!h || !sv) {
		c->o.err = TP_ENOMEM;
		tp_free(h);
		tp_free(sv);
		return;
	}
	double span = (double)(c->p->span_end_ns - c->p->span_begin_ns);
	double bw = (span > 1 ? span : 1) / LOD_BUCKETS;
	struct tp_slice tmp;
	for (size_t i = 0; i < l->n; i++) {
		const struct tp_slice *s = lane_at(c->p, l, i, &tmp);
		double a = floor((double)(s->start_ns - c->t0) / bw);
		double e = floor((double)(lane_end(c->p, l, s) - c->t0) / bw);
		if (e < 0 || a >= LOD_BUCKETS)
			continue;
		size_t b0 = a < 0 ? 0 : (size_t)a,
		       b1 = e >= LOD_BUCKETS ? LOD_BUCKETS - 1 : (size_t)e;
		int hv = height_of(c->p, &c->k, l, s, c->bw_scale);
		struct tp_label lb = lane_label(c->p, l, s);
		int32_t col = lb.kind != TP_CMD_NORMAL ? -1 : (int32_t)smap(&c->sm, lb.name);
		for (size_t k = b0; k <= b1; k++)
			if (hv > h[k]) {
				h[k] = (uint16_t)hv;
				sv[k] = col;
			}
	}
	tp_buf_printf(&c->o.b, ",\"lod\":{\"n\":%d", LOD_BUCKETS);
	struct lod_get g = {h, sv, 0};
	put_col(&c->o, "h", LOD_BUCKETS, lod_col, &g);
	g.col = 1;
	put_col(&c->o, "s", LOD_BUCKETS, lod_col, &g);
	tp_buf_putc(&c->o.b, '}');
	tp_free(h);
	tp_free(sv);
}

/* A column of a lane made from layers whose value is the same for every slice: lane_at builds
 * each slice zeroed but for its start and layer, so only these columns can differ. */
static int layer_col_varies(int col)
{
	return col == C_TS || col == C_DUR || col == C_NAME || col == C_TYPE || col == C_LAYER ||
	       col == C_H;
}

/* A lane made from layers, prepared for emit_lane: its layer indexes in slice order (one walk
 * of the table when the lane has none, instead of one per pass) in *ord (owned by the caller,
 * NULL when the lane has its own) and a copy of the lane that reads them. 4 bytes a layer of
 * this lane, freed after it. TP_OK / TP_ENOMEM. */
static int layer_lane_view(const struct lane *l, struct lane *view, uint32_t **ord)
{
	*view = *l;
	*ord = NULL;
	if (!l->walk)
		return TP_OK;
	uint32_t *o = tp_malloc((l->n ? l->n : 1) * sizeof *o);
	if (!o)
		return TP_ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		o[i] = tp_walk_at(&l->walk->w, i);
	view->lay = *ord = o;
	view->walk = NULL;
	return TP_OK;
}

static void emit_lane(struct ctx *c, const struct lane *lane)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	/* A lane made from layers is read many times over (rows, level of detail, each column):
	 * it reads its layer indexes from an array (layer_lane_view). Each column of a lane that
	 * fits c->vals is computed once into it for the "same value" check and put_col. */
	struct lane view;
	uint32_t *ord = NULL;
	const struct lane *l = lane;
	int64_t *vals = lane->n && lane->n <= c->cap_vals ? c->vals : NULL;
	int from_layers = lane->track < 0 && lane->n;
	if (from_layers) {
		if (layer_lane_view(lane, &view, &ord) != TP_OK) {
			c->o.err = TP_ENOMEM;
			return;
		}
		l = &view;
	}
	tp_buf_puts(b, "{\"kind\":");
	put_str(b, tp_track_kind_name((enum tp_track_kind)l->kind));
	tp_buf_puts(b, ",\"label\":");
	put_str(b, l->label);
	tp_buf_printf(b, ",\"dev\":%d,\"core\":%d,\"mhz\":", (int)l->device, (int)l->core);
	put_real(b, l->mhz);
	tp_buf_puts(b, ",\"n\":");
	tp_buf_i64(b, (int64_t)l->n);
	if (l->track >= 0 && p->tracks[l->track].dropped) {
		tp_buf_puts(b, ",\"dropped\":");
		put_u64(b, p->tracks[l->track].dropped);
	}
	/* Durations are mostly the engine cycles in ns: with a clock, "dur" holds only the
	 * difference from trunc(cycles / MHz * 1000), computed with the MHz exactly as printed
	 * so the page's arithmetic lands on the same nanosecond. */
	struct tp_buf mb;
	tp_buf_init(&mb);
	put_real(&mb, l->mhz);
	tp_buf_putc(&mb, 0);
	double mhz = mb.oom ? 0 : strtod(mb.data, NULL);
	tp_buf_free(&mb);
	int residual = mhz > 0;
	/* TIU and DMA block heights are derived by the page (from "ua" / "ck", and from bytes,
	 * cycles and "bwScale") instead of travelling as a column: "hd":1. */
	int hd = l->kind == TP_TRACK_TIU || tp_track_kind_is_dma((enum tp_track_kind)l->kind);
	tp_buf_printf(b, ",\"durRes\":%d,\"hd\":%d,\"rows\":%d", residual, hd, lane_rows(p, l));
	emit_lod(c, l);
	struct lane_get g = {c, l, 0, mhz, residual};
	for (int col = 0; col < C_COUNT; col++) {
		if (col == C_H && hd)
			continue;
		/* A column with one value for every command is written as that number (left out
		 * when it is 0); "ts" is the gap from the previous command's end (its start for the
		 * first) and always a column. */
		g.col = col;
		int same = col != C_TS;
		int64_t first = 0;
		if (from_layers && !layer_col_varies(col)) {
			first = lane_col(&g, 0);
		} else if (vals) {
			fill_col(&g, vals);
			for (size_t i = 1; i < l->n && same; i++)
				same = vals[i] == vals[0];
			first = vals[0];
		} else {
			for (size_t i = 0; i < l->n && same; i++) {
				int64_t v = lane_col(&g, i);
				if (i == 0)
					first = v;
				same = v == first;
			}
		}
		if (same) {
			if (first) {
				tp_buf_printf(b, ",\"%s\":", col_key[col]);
				tp_buf_i64(b, first);
			}
			continue;
		}
		if (vals)
			put_col_vals(&c->o, col_key[col], l->n, vals);
		else
			put_col(&c->o, col_key[col], l->n, lane_col, &g);
	}
	tp_buf_putc(b, '}');
	flush_out(&c->o, 0);
	tp_free(ord);
}

static void emit_arg_value(struct ctx *c, const struct tp_arg *a)
{
	struct tp_buf *b = &c->o.b;
	switch (a->type) {
	case TP_ARG_INT:
		tp_buf_i64(b, a->v.i);
		break;
	case TP_ARG_UINT:
		put_u64(b, a->v.u);
		break;
	case TP_ARG_REAL:
		put_real(b, a->v.d);
		break;
	default:
		put_str(b, tp_str(c->p, a->v.s));
		break;
	}
}

/* Chooses which argument sets to embed (those used by shown lanes, in id order, within the
 * budget) and fills c->argmap. */
static int plan_args(struct ctx *c, const struct lane *lanes, size_t nl)
{
	const struct tp_profile *p = c->p;
	if (p->num_argsets < 2)
		return TP_OK;
	c->argmap = tp_calloc(p->num_argsets, sizeof *c->argmap);
	if (!c->argmap)
		return TP_ENOMEM;
	for (size_t i = 0; i < nl; i++)
		for (size_t j = 0; lanes[i].s && j < lanes[i].n; j++) /* layer lanes have no args */
			if (lanes[i].s[j].args && lanes[i].s[j].args < p->num_argsets)
				c->argmap[lanes[i].s[j].args] = 1;
	size_t bytes = 0;
	for (size_t id = 1; id < p->num_argsets; id++) {
		if (!c->argmap[id])
			continue;
		size_t cost = 4 + (size_t)p->argsets[id].count * 24;
		if (bytes + cost > ARGS_BUDGET) {
			c->argmap[id] = 0;
			c->args_dropped++;
			continue;
		}
		bytes += cost;
		c->argmap[id] = (uint32_t)++c->num_argsets_out;
	}
	return TP_OK;
}

/* Argument sets whose values are all integers share "shapes" (the same keys in the same
 * order, e.g. src_start_addr, dst_start_addr on every DMA command): those travel as binary
 * columns, one per key and shape. "argShapes": the key lists (string ids); "argShape": per
 * embedded set (page ids 1..N) its shape + 1, or 0 when it is in "argsets" (JSON, [key, value,
 * ...], in page id order, the others skipped); "argVals": per shape, one column per key over
 * the sets of that shape in page id order. */
#define ARG_SHAPES_MAX 64

struct argshape {
	uint32_t set;  /* a profile argset id with this shape (its keys) */
	uint32_t *ids; /* profile argset ids of this shape, page order */
	size_t n, cap;
};

struct arg_get {
	struct ctx *c;
	const uint32_t *ids;   /* profile argset ids (NULL: i + 1 in the argmap order) */
	const uint32_t *shape; /* per page id - 1: shape + 1 or 0 */
	int key;               /* >= 0: value of this key; -1: the shape column */
};

static int64_t arg_get_fn(void *u, size_t i)
{
	struct arg_get *g = u;
	if (g->key < 0)
		return g->shape[i];
	size_t n;
	const struct tp_arg *a = tp_args_get(g->c->p, g->ids[i], &n);
	if (!a || (size_t)g->key >= n)
		return 0;
	const struct tp_arg *x = &a[g->key];
	return x->type == TP_ARG_INT ? x->v.i : (int64_t)x->v.u;
}

static int args_int(const struct tp_arg *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].type == TP_ARG_INT && a[i].v.i >= -COL_LIM && a[i].v.i <= COL_LIM)
			continue;
		if (a[i].type == TP_ARG_UINT && a[i].v.u <= (uint64_t)COL_LIM)
			continue;
		return 0;
	}
	return n > 0;
}

static int same_keys(const struct tp_profile *p, uint32_t x, uint32_t y)
{
	size_t nx, ny;
	const struct tp_arg *a = tp_args_get(p, x, &nx), *b = tp_args_get(p, y, &ny);
	if (nx != ny)
		return 0;
	for (size_t i = 0; i < nx; i++)
		if (a[i].key != b[i].key)
			return 0;
	return 1;
}

static void emit_argsets(struct ctx *c)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	size_t nout = c->num_argsets_out, nshapes = 0, last = 0;
	struct argshape shapes[ARG_SHAPES_MAX];
	memset(shapes, 0, sizeof shapes);
	uint32_t *shape = nout ? tp_calloc(nout, sizeof *shape) : NULL;
	if (nout && !shape)
		c->o.err = TP_ENOMEM;
	tp_buf_puts(b, ",\"argsets\":[[]");
	for (size_t id = 1; shape && c->argmap && id < p->num_argsets; id++) {
		if (!c->argmap[id])
			continue;
		size_t n;
		const struct tp_arg *a = tp_args_get(p, (uint32_t)id, &n);
		if (a && args_int(a, n)) {
			size_t k = nshapes;
			if (nshapes && same_keys(p, shapes[last].set, (uint32_t)id))
				k = last;
			for (size_t j = 0; j < nshapes && k == nshapes; j++)
				if (same_keys(p, shapes[j].set, (uint32_t)id))
					k = j;
			if (k == nshapes && nshapes < ARG_SHAPES_MAX)
				shapes[nshapes++].set = (uint32_t)id;
			if (k < nshapes) {
				struct argshape *sh = &shapes[k];
				uint32_t *g =
				    tp_grow(sh->ids, sizeof *sh->ids, sh->n + 1, &sh->cap);
				if (!g) {
					c->o.err = TP_ENOMEM;
					break;
				}
				sh->ids = g;
				sh->ids[sh->n++] = (uint32_t)id;
				shape[c->argmap[id] - 1] = (uint32_t)k + 1;
				last = k;
				continue;
			}
		}
		tp_buf_puts(b, ",[");
		for (size_t i = 0; a && i < n; i++) {
			if (i)
				tp_buf_putc(b, ',');
			tp_buf_i64(b, smap(&c->sm, a[i].key));
			tp_buf_putc(b, ',');
			emit_arg_value(c, &a[i]);
		}
		tp_buf_putc(b, ']');
		flush_out(&c->o, 0);
	}
	tp_buf_printf(b, "],\"argsDropped\":%zu,\"argShapes\":[", c->args_dropped);
	for (size_t k = 0; k < nshapes; k++) {
		size_t n;
		const struct tp_arg *a = tp_args_get(p, shapes[k].set, &n);
		tp_buf_puts(b, k ? ",[" : "[");
		for (size_t i = 0; i < n; i++) {
			if (i)
				tp_buf_putc(b, ',');
			tp_buf_i64(b, smap(&c->sm, a[i].key));
		}
		tp_buf_putc(b, ']');
	}
	tp_buf_putc(b, ']');
	struct arg_get g = {c, NULL, shape, -1};
	if (shape)
		put_col(&c->o, "argShape", nout, arg_get_fn, &g);
	tp_buf_puts(b, ",\"argVals\":[");
	for (size_t k = 0; k < nshapes; k++) {
		size_t n;
		tp_args_get(p, shapes[k].set, &n);
		tp_buf_printf(b, "%s{\"n\":%zu", k ? "," : "", shapes[k].n);
		g.ids = shapes[k].ids;
		for (size_t i = 0; i < n; i++) {
			char key[24];
			snprintf(key, sizeof key, "k%zu", i);
			g.key = (int)i;
			put_col(&c->o, key, shapes[k].n, arg_get_fn, &g);
		}
		tp_buf_putc(b, '}');
		tp_free(shapes[k].ids);
	}
	tp_buf_putc(b, ']');
	tp_free(shape);
}

static void emit_engine(struct tp_buf *b, const struct tp_engine_stats *e)
{
	tp_buf_printf(b, "{\"present\":%d,\"records\":", e->present);
	put_u64(b, e->records);
	tp_buf_puts(b, ",\"totalCycle\":");
	put_u64(b, e->total_cycle);
	tp_buf_puts(b, ",\"workingCycle\":");
	put_u64(b, e->working_cycle);
	tp_buf_puts(b, ",\"busyCycle\":");
	put_u64(b, e->busy_cycle);
	tp_buf_puts(b, ",\"busyNs\":");
	tp_buf_i64(b, e->busy_ns);
	tp_buf_puts(b, ",\"workingNs\":");
	tp_buf_i64(b, e->working_ns);
	tp_buf_puts(b, ",\"idleNs\":");
	tp_buf_i64(b, e->idle_ns);
	tp_buf_puts(b, ",\"util\":");
	put_real(b, e->utilization);
	tp_buf_puts(b, ",\"ddrBytes\":");
	put_u64(b, e->ddr_bytes);
	tp_buf_puts(b, ",\"ddrGbps\":");
	put_real(b, e->ddr_avg_gbps);
	tp_buf_puts(b, ",\"ddrReadGbps\":");
	put_real(b, e->ddr_read_gbps);
	tp_buf_puts(b, ",\"ddrWriteGbps\":");
	put_real(b, e->ddr_write_gbps);
	tp_buf_puts(b, ",\"l2Gbps\":");
	put_real(b, e->l2_avg_gbps);
	tp_buf_puts(b, ",\"stallCycle\":");
	put_u64(b, e->stall_cycle);
	tp_buf_puts(b, ",\"algOps\":");
	put_u64(b, e->alg_ops);
	tp_buf_puts(b, ",\"uarchOps\":");
	put_u64(b, e->uarch_ops);
	/* Σ alg / Σ uarch; null = no descriptors in the dump (never an invented 100 %). */
	double rate;
	tp_buf_puts(b, ",\"uarchRate\":");
	if (tp_uarch_rate(e, &rate))
		put_real(b, rate);
	else
		tp_buf_puts(b, "null");
	tp_buf_puts(b, ",\"algCycle\":");
	put_u64(b, e->alg_cycle);
	tp_buf_putc(b, '}');
}

static void emit_core(struct ctx *c, const struct tp_core_stats *cs)
{
	struct tp_buf *b = &c->o.b;
	tp_buf_printf(b, "{\"dev\":%d,\"core\":%d,\"eng\":[", (int)cs->device, (int)cs->core);
	for (int e = 0; e < TP_ENGINES; e++) {
		if (e)
			tp_buf_putc(b, ',');
		emit_engine(b, &cs->eng[e]);
	}
	tp_buf_puts(b, "],\"tiuWorkingRatio\":");
	put_real(b, cs->tiu_working_ratio);
	tp_buf_puts(b, ",\"parallelism\":");
	put_real(b, cs->parallelism);
	tp_buf_puts(b, ",\"concurrency\":");
	put_real(b, cs->concurrency);
	tp_buf_puts(b, ",\"computeShare\":");
	put_real(b, cs->compute_share);
	tp_buf_putc(b, '}');
}

static void emit_ranks(struct ctx *c, const char *key, const struct tp_rank *r, size_t n)
{
	struct tp_buf *b = &c->o.b;
	tp_buf_printf(b, ",\"%s\":[", key);
	for (size_t i = 0; r && i < n; i++) {
		if (i)
			tp_buf_putc(b, ',');
		tp_buf_puts(b, "{\"name\":");
		tp_buf_i64(b, smap(&c->sm, r[i].name));
		tp_buf_puts(b, ",\"type\":");
		tp_buf_i64(b, smap(&c->sm, r[i].type));
		tp_buf_printf(b, ",\"layer\":%d,\"core\":%d,\"count\":", (int)r[i].index,
		              (int)r[i].core);
		put_u64(b, r[i].count);
		tp_buf_puts(b, ",\"total\":");
		tp_buf_i64(b, r[i].total_ns);
		tp_buf_puts(b, ",\"min\":");
		tp_buf_i64(b, r[i].min_ns);
		tp_buf_puts(b, ",\"max\":");
		tp_buf_i64(b, r[i].max_ns);
		tp_buf_puts(b, ",\"share\":");
		put_real(b, r[i].share);
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
}

static void emit_analysis(struct ctx *c, size_t max_cores)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_analysis *a = c->a;
	if (!a) {
		tp_buf_puts(b, ",\"analysis\":null");
		return;
	}
	tp_buf_puts(b, ",\"analysis\":{\"totalNs\":");
	tp_buf_i64(b, a->total_time_ns);
	tp_buf_puts(b, ",\"cores\":[");
	size_t shown = 0;
	for (size_t i = 0; i < a->num_cores; i++) {
		if (max_cores && a->cores[i].core >= 0 && (size_t)a->cores[i].core >= max_cores)
			continue;
		if (shown++)
			tp_buf_putc(b, ',');
		emit_core(c, &a->cores[i]);
	}
	tp_buf_puts(b, "],\"overall\":");
	emit_core(c, &a->overall);
	/* Rankings are for reading: the first TOP_MAX rows are plenty. */
	emit_ranks(c, "topLayers", a->top_layers,
	           a->num_top_layers < TOP_MAX ? a->num_top_layers : TOP_MAX);
	emit_ranks(c, "topCmds", a->top_cmds,
	           a->num_top_cmds < TOP_MAX ? a->num_top_cmds : TOP_MAX);
	emit_ranks(c, "opTypes", a->op_types,
	           a->num_op_types < TOP_MAX ? a->num_op_types : TOP_MAX);
	tp_buf_putc(b, '}');
}

struct layer_get {
	struct ctx *c;
	int col;
};

static int64_t layer_col(void *u, size_t i)
{
	struct layer_get *g = u;
	struct tp_layer ly;
	const struct tp_layer *y = tp_profile_layer(g->c->p, i, &ly);
	int timed = y->begin_ns <= y->end_ns;
	switch (g->col) {
	case 0:
		return y->id;
	case 1:
		return smap(&g->c->sm, y->name);
	case 2:
		return smap(&g->c->sm, y->type);
	case 3:
		return y->core;
	case 4:
		return y->is_local;
	case 5:
		return y->is_data_move;
	case 6:
		return y->group;
	case 7:
		return y->subnet;
	case 8:
		return timed ? y->begin_ns - g->c->t0 : -1;
	default:
		return timed ? y->end_ns - g->c->t0 : -1;
	}
}

/* The layer table as binary columns (put_col), indexed by layer index: id, name, type. */
static void emit_layers(struct ctx *c)
{
	struct tp_buf *b = &c->o.b;
	/* Only what the page shows (layer times are the Layer lanes' blocks). */
	static const char *const cols[] = {"id", "name", "type"};
	tp_buf_puts(b, ",\"layers\":{\"n\":");
	tp_buf_i64(b, (int64_t)c->p->num_layers);
	struct layer_get g = {c, 0};
	size_t n = c->p->num_layers;
	for (size_t col = 0; col < sizeof cols / sizeof *cols; col++) {
		g.col = (int)col;
		if (n && n <= c->cap_vals) { /* one decode of each layer per column, not two */
			for (size_t i = 0; i < n; i++)
				c->vals[i] = layer_col(&g, i);
			put_col_vals(&c->o, cols[col], n, c->vals);
		} else {
			put_col(&c->o, cols[col], n, layer_col, &g);
		}
	}
	tp_buf_putc(b, '}');
}

/* Elements of a tensor (1 for a scalar); saturates instead of overflowing. */
static uint64_t tensor_elems(const struct tp_tensor *t, int64_t n_slice, int64_t h_slice,
                             uint32_t npus)
{
	uint64_t e = 1;
	for (unsigned d = 0; d < t->ndim && d < TP_MAX_DIMS; d++) {
		int64_t v = t->shape[d];
		if (d == 0 && n_slice > 0 && n_slice < v)
			v = n_slice;
		if (d == 1 && npus)
			v = (v + npus - 1) / npus; /* channels are spread over the lanes */
		if (d == 2 && h_slice > 0 && h_slice < v)
			v = h_slice;
		if (v <= 0)
			v = 1;
		if (e > UINT64_MAX / (uint64_t)v)
			return UINT64_MAX;
		e *= (uint64_t)v;
	}
	return e;
}

/* Memory records travel as binary columns (put_col): "b" / "e" begin and end (ns from the
 * span start), "a" lane offset or DDR address, "sz" bytes (per lane for LOCAL), "w" 1 = write,
 * "ly" layer index, "co" core, "id" tensor id or cmd id, "en" 0 for a compiler tensor record,
 * else the command's engine (1 TIU / 2 GDMA / 3 SDMA / 4 CDMA). */
struct memrec {
	int64_t b, e, a, sz, ly, co, id;
	int w, en;
};

struct memrecs {
	struct memrec *v;
	size_t n, cap;
	int oom;
};

static void memrec_add(struct memrecs *m, const struct memrec *r)
{
	struct memrec *g = tp_grow(m->v, sizeof *m->v, m->n + 1, &m->cap);
	if (!g) {
		m->oom = 1;
		return;
	}
	m->v = g;
	m->v[m->n++] = *r;
}

struct memrec_get {
	const struct memrecs *m;
	int col;
};

static int64_t memrec_get(void *u, size_t i)
{
	struct memrec_get *g = u;
	const struct memrec *r = &g->m->v[i];
	switch (g->col) {
	case 0:
		return r->b;
	case 1:
		return r->e;
	case 2:
		return r->a;
	case 3:
		return r->sz;
	case 4:
		return r->w;
	case 5:
		return r->ly;
	case 6:
		return r->co;
	case 7:
		return r->id;
	default:
		return r->en;
	}
}

static void emit_memrecs(struct ctx *c, const struct memrecs *m)
{
	static const char *const cols[] = {"b", "e", "a", "sz", "w", "ly", "co", "id", "en"};
	tp_buf_printf(&c->o.b, "\"recs\":{\"n\":%zu", m->n);
	struct memrec_get g = {m, 0};
	for (int col = 0; col < 9; col++) {
		g.col = col;
		put_col(&c->o, cols[col], m->n, memrec_get, &g);
	}
	tp_buf_putc(&c->o.b, '}');
}

/* LOCAL records from the commands (tp_lmem_from_commands), at most LMEM_CMD_MAX. */
#define LMEM_CMD_MAX 300000

static size_t add_cmd_lmem(struct ctx *c, size_t max_cores, struct memrecs *m)
{
	const struct tp_profile *p = c->p;
	struct tp_lmem_recs r;
	if (tp_lmem_from_commands(p, max_cores, LMEM_CMD_MAX, &r) != TP_OK) {
		m->oom = 1;
		return 0;
	}
	size_t dropped = r.dropped;
	for (size_t i = 0; i < r.n; i++) {
		const struct tp_lmem_rec *x = &r.v[i];
		const struct tp_track *t = &p->tracks[x->track];
		const struct tp_slice *s = &t->slices[x->slice];
		struct memrec q = {x->begin_ns - c->t0,
		                   x->end_ns - c->t0,
		                   x->lane_offset,
		                   x->bytes,
		                   s->layer,
		                   t->core,
		                   s->cmd_id,
		                   x->write,
		                   (int)t->kind + 1};
		memrec_add(m, &q);
	}
	tp_free(r.v);
	return dropped;
}

/* Memory records from the compiler log: local-memory slices of grouped tensors (per lane) and
 * DDR tensors, over the time span of the layer that reads (is_in) or writes them; then the
 * LOCAL records the commands themselves give (both views overlaid on the page). */
static void emit_memory(struct ctx *c, size_t max_cores)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	struct arch_facts f = facts_of(p->chip);
	tp_buf_printf(b, ",\"lmem\":{\"laneBytes\":%u,\"banks\":%u,\"npus\":%u,", f.lane_bytes,
	              f.banks, f.npus);
	struct memrecs m = {0};
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			size_t dropped = f.lane_bytes ? add_cmd_lmem(c, max_cores, &m) : 0;
			emit_memrecs(c, &m);
			tp_buf_printf(b, ",\"cmdDropped\":%zu},\"gmem\":{", dropped);
			m.n = 0;
		}
		for (size_t li = 0; li < p->num_layers; li++) {
			struct tp_layer ly;
			const struct tp_layer *y = tp_profile_layer(p, li, &ly);
			if (y->begin_ns > y->end_ns)
				continue;
			if (max_cores && y->core >= 0 && (size_t)y->core >= max_cores)
				continue;
			for (uint32_t k = 0; k < y->num_tensors; k++) {
				size_t ti = (size_t)y->first_tensor + k;
				if (ti >= p->num_tensors)
					break;
				const struct tp_tensor *t = &p->tensors[ti];
				unsigned dsz = tp_dtype_size((enum tp_dtype)t->dtype);
				if (!dsz)
					dsz = 1;
				uint64_t addr, size;
				if (pass == 0) {
					/* Local: no DDR address and a slice shape from the layer
					 * group. */
					if (t->gaddr || !t->nslice || !f.lane_bytes)
						continue;
					addr = t->loffset;
					size = tensor_elems(t, t->nslice, t->hslice, f.npus);
				} else {
					if (!t->gaddr)
						continue;
					addr = t->gaddr;
					size = t->gsize ? t->gsize : tensor_elems(t, 0, 0, 0);
				}
				if (size != UINT64_MAX && size <= UINT64_MAX / dsz &&
				    !(pass == 1 && t->gsize))
					size *= dsz;
				if (addr > (uint64_t)COL_LIM)
					addr = (uint64_t)COL_LIM;
				if (size > (uint64_t)COL_LIM)
					size = (uint64_t)COL_LIM;
				struct memrec q = {y->begin_ns - c->t0,
				                   y->end_ns - c->t0,
				                   (int64_t)addr,
				                   (int64_t)size,
				                   (int64_t)li,
				                   y->core,
				                   t->id,
				                   t->is_in ? 0 : 1,
				                   0};
				memrec_add(&m, &q);
			}
		}
	}
	emit_memrecs(c, &m);
	if (m.oom)
		c->o.err = TP_ENOMEM;
	tp_free(m.v);
	tp_buf_puts(b, ",\"blocks\":[");
	for (size_t i = 0; i < p->num_mems; i++) {
		const struct tp_mem *mm = &p->mems[i];
		if (i)
			tp_buf_putc(b, ',');
		tp_buf_printf(b, "[%d,", (int)mm->mtype);
		put_u64(b, mm->addr);
		tp_buf_putc(b, ',');
		put_u64(b, mm->size);
		tp_buf_putc(b, ',');
		tp_buf_i64(b, smap(&c->sm, mm->desc));
		tp_buf_putc(b, ']');
	}
	tp_buf_puts(b, "]}");
}

static void emit_head(struct ctx *c, double bw_max_seen)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	struct arch_facts f = facts_of(p->chip);
	tp_buf_puts(b, "{\"v\":1,\"arch\":");
	put_str(b, tp_arch_name(p->arch));
	tp_buf_puts(b, ",\"net\":");
	put_str(b, tp_str(p, p->net_name));
	tp_buf_puts(b, ",\"source\":");
	put_str(b, tp_str(p, p->source));
	tp_buf_puts(b, ",\"tiuMhz\":");
	put_real(b, p->tiu_freq_mhz);
	tp_buf_puts(b, ",\"gdmaMhz\":");
	put_real(b, p->gdma_freq_mhz);
	tp_buf_puts(b, ",\"spanNs\":");
	tp_buf_i64(b, p->span_end_ns - p->span_begin_ns);
	tp_buf_puts(b, ",\"ddrMaxGbps\":");
	put_real(b, f.ddr_max_gbps);
	tp_buf_puts(b, ",\"bwScale\":");
	put_real(b, c->bw_scale);
	tp_buf_puts(b, ",\"bwMaxSeen\":");
	put_real(b, bw_max_seen);
	tp_buf_puts(b, ",\"dirs\":[");
	for (int d = 0; d < TP_DIR_COUNT; d++) {
		if (d)
			tp_buf_putc(b, ',');
		put_str(b, tp_dir_name((enum tp_dir)d));
	}
	tp_buf_puts(b, "],\"dtypes\":[");
	for (int d = 0; d < TP_DT_COUNT; d++) {
		if (d)
			tp_buf_putc(b, ',');
		put_str(b, tp_dtype_name((enum tp_dtype)d));
	}
	tp_buf_puts(b, "],\"meta\":[");
	for (size_t i = 0; i < p->num_meta; i++) {
		if (i)
			tp_buf_putc(b, ',');
		tp_buf_putc(b, '[');
		put_str(b, tp_str(p, p->meta[i].key));
		tp_buf_putc(b, ',');
		put_str(b, tp_str(p, p->meta[i].value));
		tp_buf_putc(b, ']');
	}
	tp_buf_puts(b, "],\"notes\":[");
	for (size_t i = 0; i < p->num_notes; i++) {
		if (i)
			tp_buf_putc(b, ',');
		put_str(b, tp_str(p, p->notes[i].text));
	}
	tp_buf_puts(b, "],\"devices\":[");
	for (size_t i = 0; i < p->num_devices; i++) {
		if (i)
			tp_buf_putc(b, ',');
		put_str(b, tp_str(p, p->devices[i].name));
	}
	tp_buf_putc(b, ']');
}

/* Writes the page template, replacing @TITLE@, @CSS@, @JS@ and @DATA@. */
static int emit_page(struct ctx *c, const struct lane *lanes, size_t nl, size_t max_cores,
                     double bw_max_seen)
{
	struct tp_buf *b = &c->o.b;
	const char *t = (const char *)tp_html_page_html;
	const char *end = t + tp_html_page_html_len;
	while (t < end && !c->o.err) {
		const char *at = memchr(t, '@', (size_t)(end - t));
		if (!at) {
			tp_buf_put(b, t, (size_t)(end - t));
			break;
		}
		tp_buf_put(b, t, (size_t)(at - t));
		t = at;
		if (!strncmp(t, "@TITLE@", 7)) {
			const char *net = tp_str(c->p, c->p->net_name);
			tp_buf_puts(b, "tpuprof: ");
			html_text(b, *net ? net : "profile");
			tp_buf_puts(b, " on ");
			html_text(b, tp_arch_name(c->p->arch));
			t += 7;
		} else if (!strncmp(t, "@CSS@", 5)) {
			tp_buf_put(b, tp_html_app_css, tp_html_app_css_len);
			t += 5;
		} else if (!strncmp(t, "@JS@", 4)) {
			tp_buf_put(b, tp_html_app_js, tp_html_app_js_len);
			t += 4;
		} else if (!strncmp(t, "@DATA@", 6)) {
			emit_head(c, bw_max_seen);
			tp_buf_puts(b, ",\"lanes\":[");
			for (size_t i = 0; i < nl && !c->o.err; i++) {
				if (i)
					tp_buf_putc(b, ',');
				emit_lane(c, &lanes[i]);
			}
			tp_buf_putc(b, ']');
			emit_argsets(c);
			emit_analysis(c, max_cores);
			emit_layers(c);
			emit_memory(c, max_cores);
			/* The string table last: it holds every string the sections above used. */
			tp_buf_puts(b, ",\"strs\":[");
			/* Page index -> string: into the free column buffer when it holds them
			 * (independent stores, not strmap_invert's chain of dependent ones), else
			 * in place. */
			const uint32_t *inv;
			if (c->vals && c->sm.n <= c->cap_vals * 2) {
				uint32_t *v = (uint32_t *)(void *)c->vals;
				for (size_t i = 0; i < c->sm.nprof; i++)
					if (c->sm.idx[i])
						v[c->sm.idx[i] - 1] = (uint32_t)i;
				inv = v;
			} else {
				strmap_invert(&c->sm);
				inv = c->sm.idx;
			}
			for (size_t i = 0; i < c->sm.n; i++) {
				if (i)
					tp_buf_putc(b, ',');
				put_str(b, tp_str(c->p, inv[i] & ~STR_DONE));
				flush_out(&c->o, 0);
			}
			tp_buf_puts(b, "]}");
			t += 6;
		} else {
			tp_buf_putc(b, '@');
			t++;
		}
		flush_out(&c->o, 0);
	}
	flush_out(&c->o, 1);
	return c->o.err;
}

/* Collects the lanes to show: engine tracks per (device, core) in display order, a Layer lane
 * built from the layer table where the reader made none, then host / thread tracks. */
static int collect_lanes(const struct tp_profile *p, size_t max_cores, struct lane **out,
                         size_t *nout)
{
	size_t cap = p->num_tracks + p->num_tracks / 2 + 1, n = 0;
	struct lane *l = tp_calloc(cap, sizeof *l);
	if (!l)
		return TP_ENOMEM;
	for (size_t i = 0; i < p->num_tracks; i++) {
		const struct tp_track *t = &p->tracks[i];
		if (t->core >= 0 && max_cores && (size_t)t->core >= max_cores)
			continue;
		if (t->kind == TP_TRACK_LAYER && !t->count)
			continue;
		struct lane *x = &l[n++];
		x->track = (int)i;
		x->kind = t->kind;
		x->device = t->device;
		x->core = t->core;
		x->s = t->slices;
		x->n = t->count;
		x->mhz = t->freq_mhz;
		x->label = tp_str(p, t->name);
		if (!*x->label)
			x->label = tp_track_kind_name((enum tp_track_kind)t->kind);
	}
	/* Layer lanes from the layer table for cores that have engines but no Layer track. */
	size_t engines = n;
	for (size_t i = 0; i < engines; i++) {
		if (l[i].core < 0 || l[i].kind == TP_TRACK_LAYER)
			continue;
		int have = 0;
		for (size_t j = 0; j < n && !have; j++)
			have = l[j].kind == TP_TRACK_LAYER && l[j].device == l[i].device &&
			       l[j].core == l[i].core;
		if (have)
			continue;
		struct lane y;
		int rc = layer_lane(p, l[i].device, l[i].core, &y);
		if (rc) {
			tp_free(y.memo);
			for (size_t j = 0; j < n; j++) {
				tp_free(l[j].lay);
				lwalk_free(l[j].walk);
				tp_free(l[j].memo);
			}
			tp_free(l);
			return rc;
		}
		if (!y.n) {
			tp_free(y.memo);
			continue;
		}
		if (n == cap) {
			tp_free(y.lay);
			lwalk_free(y.walk);
			tp_free(y.memo);
			break;
		}
		l[n++] = y;
	}
	qsort(l, n, sizeof *l, lane_cmp);
	*out = l;
	*nout = n;
	return TP_OK;
}

int tp_html_write_file(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                       size_t max_cores, struct tp_diag *d)
{
	struct ctx c;
	struct tp_afile af = {0};
	struct lane *lanes = NULL;
	size_t nl = 0;
	int rc;
	memset(&c, 0, sizeof c);
	c.p = p;
	c.a = a;
	c.t0 = p->span_begin_ns;
	tp_buf_init(&c.o.b);
	c.sm.nprof = p->strs.count ? p->strs.count : 1;
	c.sm.idx = c.sm.nprof < STR_DONE ? tp_calloc(c.sm.nprof, sizeof *c.sm.idx) : NULL;
	if (!c.sm.idx) {
		rc = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	tp_strtab_find(&p->strs, "uArch Rate", 10, &c.k.uarch_rate);
	tp_strtab_find(&p->strs, "Alg Ops", 7, &c.k.alg_ops);
	tp_strtab_find(&p->strs, "uArch Ops", 9, &c.k.uarch_ops);

	rc = collect_lanes(p, max_cores, &lanes, &nl);
	if (!rc)
		rc = plan_args(&c, lanes, nl);
	if (rc) {
		rc = tp_diag_set(d, rc, "%s: out of memory", path);
		goto out;
	}
	/* DMA block heights: bandwidth over the arch's DDR peak, or over the highest bandwidth
	 * seen when the arch has no known peak (or a command exceeds it). */
	double seen = 0;
	for (size_t i = 0; i < nl; i++) {
		if (!tp_track_kind_is_dma((enum tp_track_kind)lanes[i].kind) || !lanes[i].s)
			continue;
		for (size_t j = 0; j < lanes[i].n; j++)
			if (lane_label(p, &lanes[i], &lanes[i].s[j]).kind == TP_CMD_NORMAL) {
				double g = slice_gbps(
				    &lanes[i].s[j], lane_label(p, &lanes[i], &lanes[i].s[j]).bytes,
				    lane_end(p, &lanes[i], &lanes[i].s[j]), lanes[i].mhz);
				if (g > seen)
					seen = g;
			}
	}
	c.bw_scale = facts_of(p->chip).ddr_max_gbps;
	if (seen > c.bw_scale)
		c.bw_scale = seen;
	/* The column buffer: as many entries as layers (8 bytes a layer), at least VALS_MIN; lanes
	 * longer than that recompute their columns instead (same bytes). No buffer: the same. */
	c.cap_vals = p->num_layers > VALS_MIN ? p->num_layers : VALS_MIN;
	if (!(c.vals = tp_malloc(c.cap_vals * sizeof *c.vals)))
		c.cap_vals = 0;

	rc = tp_afile_open(&af, path, d);
	if (rc)
		goto out;
	c.o.fp = af.fp;
	rc = emit_page(&c, lanes, nl, max_cores, seen);
	if (rc) {
		tp_afile_abort(&af);
		rc = tp_diag_set(d, rc, "%s: %s", path,
		                 rc == TP_ENOMEM ? "out of memory" : "write failed");
		goto out;
	}
	rc = tp_afile_commit(&af, d);
out:
	for (size_t i = 0; i < nl; i++) {
		tp_free(lanes[i].lay);
		lwalk_free(lanes[i].walk);
		tp_free(lanes[i].memo);
	}
	tp_free(lanes);
	tp_free(c.argmap);
	tp_free(c.vals);
	tp_free(c.sm.idx);
	tp_buf_free(&c.o.b);
	return rc;
}

static int html_write(const struct tp_profile *p, const struct tp_analysis *a,
                      const struct tp_out_opts *o, struct tp_diag *d)
{
	char *path = tp_path_join(o && o->out_dir ? o->out_dir : ".", "result.html");
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "result.html: out of memory");
	int rc = tp_html_write_file(p, a, path, o ? o->max_cores : 0, d);
	tp_free(path);
	return rc;
}

const struct tp_output tp_output_html = {
    .name = "html",
    .file = "result.html",
    .enable_flag = NULL,
    .disable_flag = "--disable_web",
    .default_on = 1,
    .doc = "result.html: self-contained offline web page (overview, timeline, memory charts)",
    .write = html_write,
};
