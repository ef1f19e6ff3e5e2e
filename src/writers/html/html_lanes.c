/*
 * html_lanes.c — the timeline lanes of result.html: which tracks become lanes and in what
 * order, Layer lanes built from the layer table, each command's derived values (block height,
 * uArch rate, bandwidth), the coarse level of detail, and each lane's JSON object with one
 * binary column per field.
 *
 * Owns the lanes it collects until html_lanes_free, and a level-of-detail buffer while a lane's
 * facts are written; the lane views' slice orders (html_lane_views) are the caller's.
 */
#include "writers/html/html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* An argument's number; a string reads as the number it starts with ("74.9%" -> 74.9). */
static double arg_num(const struct tp_profile *p, const struct tp_arg *a)
{
	double v;
	tp_arg_as_double(p, a, &v);
	return v;
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

/* TIU uArch rate in 0..1: the cost model's, else the command's uArch Rate or Alg/uArch Ops
 * arguments; -1 if unknown. */
static double tiu_util(const struct tp_profile *p, const struct keys *k, const struct lane *l,
                       const struct tp_slice *s)
{
	struct tp_cost cb;
	const struct tp_cost *c = slice_cost(p, l, s, &cb);
	if (c)
		return c->uarch_rate;
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

static int64_t col_val(struct ctx *c, const struct lane *l, const struct tp_slice *s, int col)
{
	switch (col) {
	case C_DUR:
		return lane_end(c->p, l, s) - s->start_ns;
	case C_NAME:
		return html_smap(&c->sm, lane_label(c->p, l, s).name);
	case C_TYPE:
		return html_smap(&c->sm, lane_label(c->p, l, s).type);
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

/* lane_col of a track's lane whose column needs neither the previous slice nor the clock: the
 * slice taken straight from its array. */
static int64_t slice_col(void *u, size_t i)
{
	const struct lane_get *g = u;
	return col_val(g->c, g->l, &g->l->s[i], g->col);
}

/* Column g->col of lane g->l into v[0..n-1] (html_fill_col). */
static int fill_col(struct lane_get *g, int32_t *v)
{
	const struct lane *l = g->l;
	int whole = !l->s || g->col == C_TS || (g->col == C_DUR && g->residual);
	return html_fill_col(v, l->n, whole ? lane_col : slice_col, g);
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

/* The buckets [*b0, *b1] slice s of lane l touches; 0 when it touches none. */
static int lod_buckets(const struct ctx *c, const struct lane *l, const struct tp_slice *s,
                       size_t *b0, size_t *b1)
{
	double span = (double)(c->p->span_end_ns - c->p->span_begin_ns);
	double bw = (span > 1 ? span : 1) / LOD_BUCKETS;
	double a = floor((double)(s->start_ns - c->t0) / bw);
	double e = floor((double)(lane_end(c->p, l, s) - c->t0) / bw);
	if (e < 0 || a >= LOD_BUCKETS)
		return 0;
	*b0 = a < 0 ? 0 : (size_t)a;
	*b1 = e >= LOD_BUCKETS ? LOD_BUCKETS - 1 : (size_t)e;
	return 1;
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
	struct tp_slice tmp;
	for (size_t i = 0; i < l->n; i++) {
		const struct tp_slice *s = lane_at(c->p, l, i, &tmp);
		size_t b0, b1;
		if (!lod_buckets(c, l, s, &b0, &b1))
			continue;
		int hv = height_of(c->p, &c->k, l, s, c->bw_scale);
		struct tp_label lb = lane_label(c->p, l, s);
		int32_t col = lb.kind != TP_CMD_NORMAL ? -1 : (int32_t)html_smap(&c->sm, lb.name);
		for (size_t k = b0; k <= b1; k++)
			if (hv > h[k]) {
				h[k] = (uint16_t)hv;
				sv[k] = col;
			}
	}
	tp_buf_printf(&c->o.b, ",\"lod\":{\"n\":%d", LOD_BUCKETS);
	struct lod_get g = {h, sv, 0};
	html_put_col(&c->o, "h", LOD_BUCKETS, lod_col, &g);
	g.col = 1;
	html_put_col(&c->o, "s", LOD_BUCKETS, lod_col, &g);
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

/* The lane a part of lane pt->u reads: a copy that decodes its layers through the part's
 * memo (c->memo: one per thread). */
static struct lane part_lane(const struct ctx *c, const struct part *pt)
{
	struct lane l = *(const struct lane *)pt->u;
	if (l.memo)
		l.memo = c->memo;
	return l;
}

/* The lane clock exactly as printed (0 without one). */
static double lane_mhz(const struct lane *l)
{
	struct tp_buf mb;
	tp_buf_init(&mb);
	html_put_real(&mb, l->mhz);
	tp_buf_putc(&mb, 0);
	double mhz = mb.oom ? 0 : strtod(mb.data, NULL);
	tp_buf_free(&mb);
	return mhz;
}

/* TIU and DMA block heights are derived by the page (from "ua" / "ck", and from bytes, cycles
 * and "bwScale") instead of travelling as a column: "hd":1. */
static int lane_hd(const struct lane *l)
{
	return l->kind == TP_TRACK_TIU || tp_track_kind_is_dma((enum tp_track_kind)l->kind);
}

/* Part: lane pt->u's facts, rows and level of detail (a comma first unless pt->k is 0). */
static void lane_head_part(struct ctx *c, const struct part *pt)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	struct lane lv = part_lane(c, pt);
	const struct lane *l = &lv;
	if (pt->k)
		tp_buf_putc(b, ',');
	tp_buf_puts(b, "{\"kind\":");
	html_put_str(b, tp_track_kind_name((enum tp_track_kind)l->kind));
	tp_buf_puts(b, ",\"label\":");
	html_put_str(b, l->label);
	tp_buf_printf(b, ",\"dev\":%d,\"core\":%d,\"mhz\":", (int)l->device, (int)l->core);
	html_put_real(b, l->mhz);
	tp_buf_puts(b, ",\"n\":");
	tp_buf_i64(b, (int64_t)l->n);
	if (l->track >= 0 && p->tracks[l->track].dropped) {
		tp_buf_puts(b, ",\"dropped\":");
		html_put_u64(b, p->tracks[l->track].dropped);
	}
	/* Durations are mostly the engine cycles in ns: with a clock, "dur" holds only the
	 * difference from trunc(cycles / MHz * 1000), computed with the MHz exactly as printed
	 * so the page's arithmetic lands on the same nanosecond. */
	tp_buf_printf(b, ",\"durRes\":%d,\"hd\":%d,\"rows\":%d", lane_mhz(l) > 0, lane_hd(l),
	              lane_rows(p, l));
	emit_lod(c, l);
	html_flush(&c->o, 0);
}

/* Part: column pt->k of lane pt->u (the last one closes the lane's object). */
static void lane_col_part(struct ctx *c, const struct part *pt)
{
	struct tp_buf *b = &c->o.b;
	struct lane lv = part_lane(c, pt);
	const struct lane *l = &lv;
	int col = pt->k;
	/* A column is computed once into a column buffer, when html_vals lends one, for the
	 * "same value" check and html_put_col; else each pass computes it again (same bytes). */
	int32_t *vals = NULL;
	int from_layers = l->track < 0 && l->n;
	double mhz = lane_mhz(l);
	struct lane_get g = {c, l, col, mhz, mhz > 0};
	if (col == C_H && lane_hd(l))
		goto end;
	/* A column with one value for every command is written as that number (left out when it
	 * is 0); "ts" is the gap from the previous command's end (its start for the first) and
	 * always a column. */
	int same = col != C_TS;
	int64_t first = 0;
	if (from_layers && !layer_col_varies(col)) {
		first = lane_col(&g, 0);
	} else if ((vals = html_vals(c, l->n)) && fill_col(&g, vals)) {
		for (size_t i = 1; i < l->n && same; i++)
			same = vals[i] == vals[0];
		first = vals[0];
	} else {
		vals = NULL;
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
	} else if (vals) {
		html_put_col_vals(&c->o, col_key[col], l->n, vals);
	} else {
		html_put_col(&c->o, col_key[col], l->n, lane_col, &g);
	}
end:
	if (col == C_COUNT - 1)
		tp_buf_putc(b, '}');
	html_flush(&c->o, 0);
}

/* Find: the strings rows [pt->a, pt->b) of lane pt->u use in stream pt->k: 0 the level of
 * detail (names of normal commands), 1 the "nm" column, 2 the "ty" column. */
static void lane_find(struct ctx *c, const struct part *pt)
{
	struct lane lv = part_lane(c, pt);
	const struct lane *l = &lv;
	struct tp_slice tmp;
	for (size_t i = pt->a; i < pt->b; i++) {
		const struct tp_slice *s = lane_at(c->p, l, i, &tmp);
		struct tp_label lb = lane_label(c->p, l, s);
		size_t b0, b1;
		if (pt->k == 0 && (lb.kind != TP_CMD_NORMAL || !lod_buckets(c, l, s, &b0, &b1)))
			continue;
		html_smap(&c->sm, pt->k == 2 ? lb.type : lb.name);
	}
}

void html_lane_parts(const struct lane *view, size_t idx, struct parts *finds, struct parts *ps)
{
	for (int k = 0; k < 3; k++)
		for (size_t a = 0; a < view->n; a += HTML_ROWS_PART)
			html_part_add(finds, lane_find, view, a,
			              view->n - a > HTML_ROWS_PART ? a + HTML_ROWS_PART : view->n,
			              k);
	html_part_add(ps, lane_head_part, view, 0, 0, idx != 0);
	for (int col = 0; col < C_COUNT; col++)
		html_part_add(ps, lane_col_part, view, 0, 0, col);
}

/* A lane made from layers, for its parts: its layer indexes in slice order (one walk of the
 * table when the lane has none, instead of one per pass) in *ord (owned by the caller, NULL
 * when the lane has its own) and a copy of the lane that reads them. 4 bytes a layer of this
 * lane. TP_OK / TP_ENOMEM. */
static int lane_view(const struct lane *l, struct lane *view, uint32_t **ord)
{
	*view = *l;
	*ord = NULL;
	if (l->track >= 0 || !l->n || !l->walk)
		return TP_OK;
	uint32_t *o = tp_malloc(l->n * sizeof *o);
	if (!o)
		return TP_ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		o[i] = tp_walk_at(&l->walk->w, i);
	view->lay = *ord = o;
	view->walk = NULL;
	return TP_OK;
}

struct views_run {
	const struct lane *lanes;
	struct lane *views;
	uint32_t **ords;
	int err;
};

static void view_one(void *arg, size_t i)
{
	struct views_run *r = arg;
	if (lane_view(&r->lanes[i], &r->views[i], &r->ords[i]) != TP_OK)
		__atomic_store_n(&r->err, 1, __ATOMIC_RELAXED);
}

int html_lane_views(unsigned jobs, const struct lane *lanes, size_t nl, struct lane **views,
                    uint32_t ***ords)
{
	struct views_run r = {lanes, tp_calloc(nl ? nl : 1, sizeof **views),
	                      tp_calloc(nl ? nl : 1, sizeof **ords), 0};
	*views = r.views;
	*ords = r.ords;
	if (!r.views || !r.ords)
		return TP_ENOMEM;
	tp_par_run(jobs, nl, view_one, &r);
	return r.err ? TP_ENOMEM : TP_OK;
}

struct layer_lanes_run {
	const struct tp_profile *p;
	struct lane *want; /* device and core set: the Layer lane to build for them */
	int *rc;
};

static void layer_lane_one(void *arg, size_t k)
{
	struct layer_lanes_run *r = arg;
	/* On a copy, stored once: the lanes sit side by side, and the next one fills on another
	 * thread. */
	struct lane l = r->want[k];
	r->rc[k] = layer_lane(r->p, l.device, l.core, &l);
	r->want[k] = l;
}

/* Appends to l[0..*n) (capacity cap) a Layer lane built from the layer table for each core
 * that has engines but no Layer track, in engine lane order (built on `jobs` threads). */
static int add_layer_lanes(const struct tp_profile *p, unsigned jobs, struct lane *l, size_t *n,
                           size_t cap)
{
	size_t engines = *n, nw = 0;
	struct lane *want = tp_calloc(engines ? engines : 1, sizeof *want);
	int *rc = tp_calloc(engines ? engines : 1, sizeof *rc);
	if (!want || !rc) {
		tp_free(want);
		tp_free(rc);
		return TP_ENOMEM;
	}
	for (size_t i = 0; i < engines; i++) {
		int have = l[i].core < 0 || l[i].kind == TP_TRACK_LAYER;
		for (size_t j = 0; j < engines && !have; j++)
			have = l[j].kind == TP_TRACK_LAYER && l[j].device == l[i].device &&
			       l[j].core == l[i].core;
		for (size_t j = 0; j < nw && !have; j++)
			have = want[j].device == l[i].device && want[j].core == l[i].core;
		if (!have) {
			want[nw].device = l[i].device;
			want[nw++].core = l[i].core;
		}
	}
	struct layer_lanes_run r = {p, want, rc};
	tp_par_run(jobs, nw, layer_lane_one, &r);
	int st = TP_OK;
	for (size_t k = 0; k < nw; k++) {
		struct lane *y = &want[k];
		if (!st && rc[k])
			st = rc[k];
		if (!st && y->n && *n < cap) {
			l[(*n)++] = *y;
			continue;
		}
		tp_free(y->lay);
		lwalk_free(y->walk);
		tp_free(y->memo);
	}
	tp_free(want);
	tp_free(rc);
	return st;
}

/* Collects the lanes to show: engine tracks per (device, core) in display order, a Layer lane
 * built from the layer table where the reader made none, then host / thread tracks. */
int html_collect_lanes(const struct tp_profile *p, size_t max_cores, unsigned jobs,
                       struct lane **out, size_t *nout)
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
	int rc = add_layer_lanes(p, jobs, l, &n, cap);
	if (rc) {
		html_lanes_free(l, n);
		return rc;
	}
	qsort(l, n, sizeof *l, lane_cmp);
	*out = l;
	*nout = n;
	return TP_OK;
}

void html_lanes_free(struct lane *lanes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		tp_free(lanes[i].lay);
		lwalk_free(lanes[i].walk);
		tp_free(lanes[i].memo);
	}
	tp_free(lanes);
}

/* The highest bandwidth of a normal command in rows [r->a, r->b) of a DMA lane. */
static double bw_max_range(const struct tp_profile *p, const struct html_lrange *r)
{
	const struct lane *l = r->l;
	double seen = 0;
	if (!tp_track_kind_is_dma((enum tp_track_kind)l->kind) || !l->s)
		return 0;
	for (size_t j = r->a; j < r->b; j++)
		if (lane_label(p, l, &l->s[j]).kind == TP_CMD_NORMAL) {
			double g = slice_gbps(&l->s[j], lane_label(p, l, &l->s[j]).bytes,
			                      lane_end(p, l, &l->s[j]), l->mhz);
			if (g > seen)
				seen = g;
		}
	return seen;
}

struct bw_run {
	const struct tp_profile *p;
	const struct html_lrange *r;
	double *max;
};

static void bw_one(void *arg, size_t k)
{
	struct bw_run *b = arg;
	b->max[k] = bw_max_range(b->p, &b->r[k]);
}

int html_bw_max_seen(const struct tp_profile *p, unsigned jobs, const struct lane *lanes, size_t nl,
                     double *seen)
{
	struct html_lrange *r;
	size_t n = html_lane_ranges(lanes, nl, &r);
	struct bw_run b = {p, r, tp_calloc(n ? n : 1, sizeof *b.max)};
	*seen = 0;
	if (!r || !b.max) {
		tp_free(r);
		tp_free(b.max);
		return TP_ENOMEM;
	}
	tp_par_run(jobs, n, bw_one, &b);
	for (size_t k = 0; k < n; k++)
		if (b.max[k] > *seen)
			*seen = b.max[k];
	tp_free(r);
	tp_free(b.max);
	return TP_OK;
}
