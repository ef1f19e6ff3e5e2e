/*
 * html_args.c — the argument sets in result.html: which sets to embed (those the shown lanes
 * use, in id order, within a byte budget), the integer sets that share their keys ("shapes")
 * as binary columns and the rest as JSON. Planned and written per range of ARGS_PART profile
 * set ids on --jobs threads (html_par.c), the ranges fixed by the ids.
 *
 * Owns c->args (html_args_plan) until html_args_free; c->argmap is the caller's to free.
 */
#include "writers/html/html_int.h"

#include <string.h>

/* Argument sets beyond this many JSON bytes are left out (and the page says so): a generated
 * dump with a private argument set per command must not turn the page into gigabytes. */
#define ARGS_BUDGET ((size_t)64 << 20)
/* Set ids per range: a range's JSON is a part (a few hundred bytes a set). */
#define ARGS_PART 4096

static void emit_arg_value(struct ctx *c, const struct tp_arg *a)
{
	struct tp_buf *b = &c->o.b;
	switch (a->type) {
	case TP_ARG_INT:
		tp_buf_i64(b, a->v.i);
		break;
	case TP_ARG_UINT:
		html_put_u64(b, a->v.u);
		break;
	case TP_ARG_REAL:
		html_put_real(b, a->v.d);
		break;
	default:
		html_put_str(b, tp_str(c->p, a->v.s));
		break;
	}
}

struct mark_run {
	const struct tp_profile *p;
	struct html_lrange *r;
	uint32_t *argmap;
};

/* Marks the argument sets rows [a, b) of a lane use (layer lanes have none): 1, stored
 * atomically as other ranges may mark the same set. */
static void mark_used(void *arg, size_t k)
{
	struct mark_run *m = arg;
	const struct html_lrange *r = &m->r[k];
	for (size_t j = r->a; r->l->s && j < r->b; j++) {
		uint32_t id = r->l->s[j].args;
		/* Read first: a store takes the line from the thread marking nearby sets. */
		if (id && id < m->p->num_argsets &&
		    !__atomic_load_n(&m->argmap[id], __ATOMIC_RELAXED))
			__atomic_store_n(&m->argmap[id], 1, __ATOMIC_RELAXED);
	}
}

/* Chooses which argument sets to embed (those used by shown lanes, in id order, within the
 * budget) and fills c->argmap. */
int html_plan_args(struct ctx *c, const struct lane *lanes, size_t nl)
{
	const struct tp_profile *p = c->p;
	if (p->num_argsets < 2)
		return TP_OK;
	c->argmap = tp_calloc(p->num_argsets, sizeof *c->argmap);
	struct mark_run r = {p, NULL, c->argmap};
	size_t n = html_lane_ranges(lanes, nl, &r.r);
	if (!c->argmap || !r.r) {
		tp_free(r.r);
		return TP_ENOMEM;
	}
	tp_par_run(c->jobs, n, mark_used, &r);
	tp_free(r.r);
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

/* ------------------------------------------------------------------------------------------ */
/* Shapes.                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Argument sets whose values are all integers share "shapes" (the same keys in the same
 * order, e.g. src_start_addr, dst_start_addr on every DMA command): those travel as binary
 * columns, one per key and shape. "argShapes": the key lists (string ids) of the first
 * ARG_SHAPES_MAX shapes in id order; "argShape": per embedded set (page ids 1..N) its shape +
 * 1, or 0 when it is in "argsets" (JSON, [key, value, ...], in page id order, the others
 * skipped); "argVals": per shape, one column per key over the sets of that shape in page id
 * order. */
#define ARG_SHAPES_MAX 64
#define SHAPE_INT UINT32_MAX /* planning: an integer set, shape not yet known */

/* One range of set ids [1 + k * ARGS_PART, ...). */
struct args_range {
	uint32_t rep[ARG_SHAPES_MAX]; /* its first shapes in id order: a set of each */
	size_t nrep;
	size_t at[ARG_SHAPES_MAX]; /* per page shape: its sets in this range, then where its
	                              first one goes in ids[] */
};

struct html_args {
	uint32_t *shape; /* per page id - 1: shape + 1, 0 = JSON; NULL when none is embedded */
	size_t nshapes;
	uint32_t rep[ARG_SHAPES_MAX];  /* a set of each shape (its keys) */
	uint32_t *ids[ARG_SHAPES_MAX]; /* profile set ids of each shape, page order */
	size_t n[ARG_SHAPES_MAX];
	struct args_range *r;
	size_t nr;
};

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

/* The index in rep[0..n) of the shape of set id (*last first: runs of one shape), n if none. */
static size_t shape_find(const struct tp_profile *p, const uint32_t *rep, size_t n, size_t *last,
                         uint32_t id)
{
	if (*last < n && same_keys(p, rep[*last], id))
		return *last;
	for (size_t j = 0; j < n; j++)
		if (same_keys(p, rep[j], id))
			return *last = j;
	return n;
}

struct args_run {
	struct ctx *c;
	struct html_args *g;
};

static void range_ids(const struct ctx *c, size_t k, size_t *a, size_t *b)
{
	*a = 1 + k * ARGS_PART;
	*b = c->p->num_argsets - *a > ARGS_PART ? *a + ARGS_PART : c->p->num_argsets;
}

/* Step 1, per range: marks its integer sets and lists its first shapes. */
static void range_shapes(void *arg, size_t k)
{
	struct args_run *w = arg;
	const struct tp_profile *p = w->c->p;
	struct args_range *r = &w->g->r[k];
	size_t a, b, last = 0;
	range_ids(w->c, k, &a, &b);
	for (size_t id = a; id < b; id++) {
		if (!w->c->argmap[id])
			continue;
		size_t n;
		const struct tp_arg *x = tp_args_get(p, (uint32_t)id, &n);
		if (!x || !args_int(x, n))
			continue;
		w->g->shape[w->c->argmap[id] - 1] = SHAPE_INT;
		if (shape_find(p, r->rep, r->nrep, &last, (uint32_t)id) == r->nrep &&
		    r->nrep < ARG_SHAPES_MAX)
			r->rep[r->nrep++] = (uint32_t)id;
	}
}

/* Step 2, per range: the shape of each integer set (0 = none of the page's: JSON), counted. */
static void range_assign(void *arg, size_t k)
{
	struct args_run *w = arg;
	struct html_args *g = w->g;
	struct args_range *r = &g->r[k];
	size_t a, b, last = 0;
	range_ids(w->c, k, &a, &b);
	for (size_t id = a; id < b; id++) {
		uint32_t pid = w->c->argmap[id];
		if (!pid || g->shape[pid - 1] != SHAPE_INT)
			continue;
		size_t s = shape_find(w->c->p, g->rep, g->nshapes, &last, (uint32_t)id);
		g->shape[pid - 1] = s < g->nshapes ? (uint32_t)s + 1 : 0;
		if (s < g->nshapes)
			r->at[s]++;
	}
}

/* Step 3, per range: its sets of each shape into that shape's ids. */
static void range_fill(void *arg, size_t k)
{
	struct args_run *w = arg;
	struct html_args *g = w->g;
	struct args_range *r = &g->r[k];
	size_t a, b;
	range_ids(w->c, k, &a, &b);
	for (size_t id = a; id < b; id++) {
		uint32_t pid = w->c->argmap[id];
		if (pid && g->shape[pid - 1])
			g->ids[g->shape[pid - 1] - 1][r->at[g->shape[pid - 1] - 1]++] =
			    (uint32_t)id;
	}
}

int html_args_plan(struct ctx *c)
{
	struct html_args *g = tp_calloc(1, sizeof *g);
	if (!g)
		return TP_ENOMEM;
	c->args = g;
	size_t nout = c->num_argsets_out;
	if (!nout || !c->argmap)
		return TP_OK;
	g->nr = (c->p->num_argsets - 1 + ARGS_PART - 1) / ARGS_PART;
	g->shape = tp_calloc(nout, sizeof *g->shape);
	g->r = tp_calloc(g->nr, sizeof *g->r);
	if (!g->shape || !g->r)
		return TP_ENOMEM;
	struct args_run w = {c, g};
	tp_par_run(c->jobs, g->nr, range_shapes, &w);
	/* The page's shapes: the first ARG_SHAPES_MAX in id order. */
	for (size_t k = 0; k < g->nr; k++)
		for (size_t j = 0; j < g->r[k].nrep && g->nshapes < ARG_SHAPES_MAX; j++) {
			size_t last = 0;
			if (shape_find(c->p, g->rep, g->nshapes, &last, g->r[k].rep[j]) ==
			    g->nshapes)
				g->rep[g->nshapes++] = g->r[k].rep[j];
		}
	tp_par_run(c->jobs, g->nr, range_assign, &w);
	for (size_t s = 0; s < g->nshapes; s++) {
		for (size_t k = 0; k < g->nr; k++) {
			size_t n = g->r[k].at[s];
			g->r[k].at[s] = g->n[s];
			g->n[s] += n;
		}
		if (!(g->ids[s] = tp_malloc((g->n[s] ? g->n[s] : 1) * sizeof *g->ids[s])))
			return TP_ENOMEM;
	}
	tp_par_run(c->jobs, g->nr, range_fill, &w);
	return TP_OK;
}

void html_args_free(struct html_args *g)
{
	if (!g)
		return;
	for (size_t s = 0; s < g->nshapes; s++)
		tp_free(g->ids[s]);
	tp_free(g->shape);
	tp_free(g->r);
	tp_free(g);
}

/* ------------------------------------------------------------------------------------------ */
/* Parts.                                                                                     */
/* ------------------------------------------------------------------------------------------ */

struct arg_get {
	struct ctx *c;
	const uint32_t *ids;   /* profile argset ids */
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

/* Calls fn for each JSON set of range k (pt->a), in id order, with its arguments. */
static void each_json_set(struct ctx *c, size_t k,
                          void (*fn)(struct ctx *c, const struct tp_arg *x, size_t n))
{
	const struct html_args *g = c->args;
	size_t a, e;
	range_ids(c, k, &a, &e);
	for (size_t id = a; id < e; id++) {
		uint32_t pid = c->argmap[id];
		if (!pid || g->shape[pid - 1])
			continue;
		size_t n;
		const struct tp_arg *x = tp_args_get(c->p, (uint32_t)id, &n);
		fn(c, x, x ? n : 0);
	}
}

static void find_keys(struct ctx *c, const struct tp_arg *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		html_smap(&c->sm, x[i].key);
}

static void emit_set(struct ctx *c, const struct tp_arg *x, size_t n)
{
	struct tp_buf *b = &c->o.b;
	tp_buf_puts(b, ",[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			tp_buf_putc(b, ',');
		tp_buf_i64(b, html_smap(&c->sm, x[i].key));
		tp_buf_putc(b, ',');
		emit_arg_value(c, &x[i]);
	}
	tp_buf_putc(b, ']');
}

/* Find: the keys of the JSON sets of range pt->a. */
static void range_find(struct ctx *c, const struct part *pt)
{
	each_json_set(c, pt->a, find_keys);
}

/* Part: the JSON sets of range pt->a. */
static void range_part(struct ctx *c, const struct part *pt)
{
	each_json_set(c, pt->a, emit_set);
}

/* Part: the section's text around the ranges and columns (pt->k: 0 its start, 1 the end of
 * "argsets" and "argShapes" (a find too: its keys), 2 the start of "argVals", 3 shape pt->a's
 * start, 4 a shape's end, 5 the end of "argVals"). */
static void args_text_part(struct ctx *c, const struct part *pt)
{
	struct tp_buf *b = &c->o.b;
	const struct html_args *g = c->args;
	switch (pt->k) {
	case 0:
		tp_buf_puts(b, ",\"argsets\":[[]");
		break;
	case 1:
		tp_buf_printf(b, "],\"argsDropped\":%zu,\"argShapes\":[", c->args_dropped);
		for (size_t k = 0; k < g->nshapes; k++) {
			size_t n;
			const struct tp_arg *a = tp_args_get(c->p, g->rep[k], &n);
			tp_buf_puts(b, k ? ",[" : "[");
			for (size_t i = 0; i < n; i++) {
				if (i)
					tp_buf_putc(b, ',');
				tp_buf_i64(b, html_smap(&c->sm, a[i].key));
			}
			tp_buf_putc(b, ']');
		}
		tp_buf_putc(b, ']');
		break;
	case 2:
		tp_buf_puts(b, ",\"argVals\":[");
		break;
	case 3:
		tp_buf_printf(b, "%s{\"n\":%zu", pt->a ? "," : "", g->n[pt->a]);
		break;
	case 4:
		tp_buf_putc(b, '}');
		break;
	default:
		tp_buf_putc(b, ']');
		break;
	}
}

/* Part: "argShape" (pt->k < 0) or key pt->k of shape pt->a in "argVals". */
static void args_col_part(struct ctx *c, const struct part *pt)
{
	const struct html_args *g = c->args;
	struct arg_get a = {c, g->ids[pt->a], g->shape, pt->k};
	if (pt->k < 0) {
		html_put_col(&c->o, "argShape", c->num_argsets_out, arg_get_fn, &a);
		return;
	}
	char key[24];
	snprintf(key, sizeof key, "k%d", pt->k);
	html_put_col(&c->o, key, g->n[pt->a], arg_get_fn, &a);
}

void html_args_parts(const struct ctx *c, struct parts *finds, struct parts *ps)
{
	const struct html_args *g = c->args;
	html_part_add(ps, args_text_part, NULL, 0, 0, 0);
	for (size_t k = 0; g->shape && k < g->nr; k++) {
		html_part_add(finds, range_find, NULL, k, 0, 0);
		html_part_add(ps, range_part, NULL, k, 0, 0);
	}
	html_part_add(finds, args_text_part, NULL, 0, 0, 1);
	html_part_add(ps, args_text_part, NULL, 0, 0, 1);
	if (g->shape)
		html_part_add(ps, args_col_part, NULL, 0, 0, -1);
	html_part_add(ps, args_text_part, NULL, 0, 0, 2);
	for (size_t s = 0; s < g->nshapes; s++) {
		size_t n;
		tp_args_get(c->p, g->rep[s], &n);
		html_part_add(ps, args_text_part, NULL, s, 0, 3);
		for (size_t i = 0; i < n; i++)
			html_part_add(ps, args_col_part, NULL, s, 0, (int)i);
		html_part_add(ps, args_text_part, NULL, s, 0, 4);
	}
	html_part_add(ps, args_text_part, NULL, 0, 0, 5);
}
