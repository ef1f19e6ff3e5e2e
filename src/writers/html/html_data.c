/*
 * html_data.c — the data sections of result.html besides the lanes: argument sets (integer
 * sets sharing their keys as binary columns, the rest as JSON), the analysis (per-core engine
 * statistics, rankings), the layer table, and the memory records (local memory per lane and
 * DDR tensors from the compiler log, local-memory records from the commands).
 *
 * Owns nothing beyond one call but c->argmap (the caller frees it).
 */
#include "writers/html/html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOP_MAX 200
/* Argument sets beyond this many JSON bytes are left out (and the page says so): a generated
 * dump with a private argument set per command must not turn the page into gigabytes. */
#define ARGS_BUDGET ((size_t)64 << 20)

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
		if (id && id < m->p->num_argsets)
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

void html_emit_argsets(struct ctx *c)
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
			tp_buf_i64(b, html_smap(&c->sm, a[i].key));
			tp_buf_putc(b, ',');
			emit_arg_value(c, &a[i]);
		}
		tp_buf_putc(b, ']');
		html_flush(&c->o, 0);
	}
	tp_buf_printf(b, "],\"argsDropped\":%zu,\"argShapes\":[", c->args_dropped);
	for (size_t k = 0; k < nshapes; k++) {
		size_t n;
		const struct tp_arg *a = tp_args_get(p, shapes[k].set, &n);
		tp_buf_puts(b, k ? ",[" : "[");
		for (size_t i = 0; i < n; i++) {
			if (i)
				tp_buf_putc(b, ',');
			tp_buf_i64(b, html_smap(&c->sm, a[i].key));
		}
		tp_buf_putc(b, ']');
	}
	tp_buf_putc(b, ']');
	struct arg_get g = {c, NULL, shape, -1};
	if (shape)
		html_put_col(&c->o, "argShape", nout, arg_get_fn, &g);
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
			html_put_col(&c->o, key, shapes[k].n, arg_get_fn, &g);
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
	html_put_u64(b, e->records);
	tp_buf_puts(b, ",\"totalCycle\":");
	html_put_u64(b, e->total_cycle);
	tp_buf_puts(b, ",\"workingCycle\":");
	html_put_u64(b, e->working_cycle);
	tp_buf_puts(b, ",\"busyCycle\":");
	html_put_u64(b, e->busy_cycle);
	tp_buf_puts(b, ",\"busyNs\":");
	tp_buf_i64(b, e->busy_ns);
	tp_buf_puts(b, ",\"workingNs\":");
	tp_buf_i64(b, e->working_ns);
	tp_buf_puts(b, ",\"idleNs\":");
	tp_buf_i64(b, e->idle_ns);
	tp_buf_puts(b, ",\"util\":");
	html_put_real(b, e->utilization);
	tp_buf_puts(b, ",\"ddrBytes\":");
	html_put_u64(b, e->ddr_bytes);
	tp_buf_puts(b, ",\"ddrGbps\":");
	html_put_real(b, e->ddr_avg_gbps);
	tp_buf_puts(b, ",\"ddrReadGbps\":");
	html_put_real(b, e->ddr_read_gbps);
	tp_buf_puts(b, ",\"ddrWriteGbps\":");
	html_put_real(b, e->ddr_write_gbps);
	tp_buf_puts(b, ",\"l2Gbps\":");
	html_put_real(b, e->l2_avg_gbps);
	tp_buf_puts(b, ",\"stallCycle\":");
	html_put_u64(b, e->stall_cycle);
	tp_buf_puts(b, ",\"algOps\":");
	html_put_u64(b, e->alg_ops);
	tp_buf_puts(b, ",\"uarchOps\":");
	html_put_u64(b, e->uarch_ops);
	/* Σ alg / Σ uarch; null (NAN) = no descriptors in the dump (never an invented 100 %). */
	double rate;
	tp_buf_puts(b, ",\"uarchRate\":");
	html_put_real(b, tp_uarch_rate(e, &rate) ? rate : NAN);
	tp_buf_puts(b, ",\"algCycle\":");
	html_put_u64(b, e->alg_cycle);
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
	html_put_real(b, cs->tiu_working_ratio);
	tp_buf_puts(b, ",\"parallelism\":");
	html_put_real(b, cs->parallelism);
	tp_buf_puts(b, ",\"concurrency\":");
	html_put_real(b, cs->concurrency);
	tp_buf_puts(b, ",\"computeShare\":");
	html_put_real(b, cs->compute_share);
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
		tp_buf_i64(b, html_smap(&c->sm, r[i].name));
		tp_buf_puts(b, ",\"type\":");
		tp_buf_i64(b, html_smap(&c->sm, r[i].type));
		tp_buf_printf(b, ",\"layer\":%d,\"core\":%d,\"count\":", (int)r[i].index,
		              (int)r[i].core);
		html_put_u64(b, r[i].count);
		tp_buf_puts(b, ",\"total\":");
		tp_buf_i64(b, r[i].total_ns);
		tp_buf_puts(b, ",\"min\":");
		tp_buf_i64(b, r[i].min_ns);
		tp_buf_puts(b, ",\"max\":");
		tp_buf_i64(b, r[i].max_ns);
		tp_buf_puts(b, ",\"share\":");
		html_put_real(b, r[i].share);
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, ']');
}

void html_emit_analysis(struct ctx *c, size_t max_cores)
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
	html_emit_ltab(c);
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
		return html_smap(&g->c->sm, y->name);
	case 2:
		return html_smap(&g->c->sm, y->type);
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

/* The layer table as binary columns (html_put_col), indexed by layer index: id, name, type
 * (only what the page shows: layer times are the Layer lanes' blocks). */
static const char *const layer_cols[] = {"id", "name", "type"};

static void layers_head_part(struct ctx *c, const struct part *pt)
{
	(void)pt;
	tp_buf_puts(&c->o.b, ",\"layers\":{\"n\":");
	tp_buf_i64(&c->o.b, (int64_t)c->p->num_layers);
}

/* Part: column pt->k of the layer table (the last one closes the object). */
static void layers_col_part(struct ctx *c, const struct part *pt)
{
	struct layer_get g = {c, pt->k};
	size_t n = c->p->num_layers;
	if (n && n <= c->cap_vals) { /* one decode of each layer per column, not two */
		for (size_t i = 0; i < n; i++)
			c->vals[i] = layer_col(&g, i);
		html_put_col_vals(&c->o, layer_cols[pt->k], n, c->vals);
	} else {
		html_put_col(&c->o, layer_cols[pt->k], n, layer_col, &g);
	}
	if (pt->k == 2)
		tp_buf_putc(&c->o.b, '}');
}

/* Find: the strings of column pt->k (name or type) of layers [pt->a, pt->b). */
static void layers_find(struct ctx *c, const struct part *pt)
{
	struct layer_get g = {c, pt->k};
	for (size_t i = pt->a; i < pt->b; i++)
		layer_col(&g, i);
}

void html_layers_parts(const struct ctx *c, struct parts *finds, struct parts *ps)
{
	size_t n = c->p->num_layers;
	for (int k = 1; k <= 2; k++)
		for (size_t a = 0; a < n; a += HTML_ROWS_PART)
			html_part_add(finds, layers_find, NULL, a,
			              n - a > HTML_ROWS_PART ? a + HTML_ROWS_PART : n, k);
	html_part_add(ps, layers_head_part, NULL, 0, 0, 0);
	for (int k = 0; k < 3; k++)
		html_part_add(ps, layers_col_part, NULL, 0, 0, k);
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

/* Memory records travel as binary columns (html_put_col): "b" / "e" begin and end (ns from the
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

/* What the memory section writes, made before its parts: the LOCAL records (the compiler's,
 * then the commands') and the DDR ones. */
struct html_mem {
	struct memrecs l, g;
	size_t every, dropped; /* the commands' records: sampling, records left out */
};

static const char *const memrec_cols[] = {"b", "e", "a", "sz", "w", "ly", "co", "id", "en"};

/* LOCAL records from the commands (tp_lmem_from_commands), at most LMEM_CMD_MAX: past it
 * those of one command in *every, over the whole run (the page says so). */
#define LMEM_CMD_MAX 300000

struct cmd_lmem_run {
	const struct ctx *c;
	const struct tp_lmem_recs *r;
	struct memrec *out;
};

/* Records [k * HTML_ROWS_PART, ...) of the commands' into memrecs. */
static void cmd_lmem_part(void *arg, size_t k)
{
	struct cmd_lmem_run *w = arg;
	const struct tp_profile *p = w->c->p;
	size_t a = k * HTML_ROWS_PART,
	       b = a + HTML_ROWS_PART < w->r->n ? a + HTML_ROWS_PART : w->r->n;
	for (size_t i = a; i < b; i++) {
		const struct tp_lmem_rec *x = &w->r->v[i];
		const struct tp_track *t = &p->tracks[x->track];
		const struct tp_slice *s = &t->slices[x->slice];
		w->out[i] = (struct memrec){x->begin_ns - w->c->t0,
		                            x->end_ns - w->c->t0,
		                            x->lane_offset,
		                            x->bytes,
		                            s->layer,
		                            t->core,
		                            s->cmd_id,
		                            x->write,
		                            (int)t->kind + 1};
	}
}

/* Appends the commands' LOCAL records to m (on c->jobs threads). */
static void add_cmd_lmem(const struct ctx *c, struct memrecs *m, struct html_mem *hm)
{
	struct tp_lmem_recs r;
	hm->every = 1;
	if (tp_lmem_from_commands_jobs(c->p, c->max_cores, LMEM_CMD_MAX, c->jobs, &r) != TP_OK) {
		m->oom = 1;
		return;
	}
	hm->dropped = r.dropped;
	hm->every = r.every;
	struct memrec *g = r.n ? tp_grow(m->v, sizeof *m->v, m->n + r.n, &m->cap) : m->v;
	if (r.n && !g) {
		m->oom = 1;
	} else if (r.n) {
		m->v = g;
		struct cmd_lmem_run w = {c, &r, m->v + m->n};
		tp_par_run(c->jobs, (r.n + HTML_ROWS_PART - 1) / HTML_ROWS_PART, cmd_lmem_part, &w);
		m->n += r.n;
	}
	tp_free(r.v);
}

/* The compiler log's records of layer li into m: local-memory slices of grouped tensors (per
 * lane; pass 0) or DDR tensors (pass 1), over the time span of the layer that reads (is_in)
 * or writes them. */
static void add_layer_tensors(const struct ctx *c, size_t li, int pass, struct memrecs *m)
{
	const struct tp_profile *p = c->p;
	struct arch_facts f = html_facts_of(p->chip);
	struct tp_layer ly;
	const struct tp_layer *y = tp_profile_timed_layer(p, li, &ly);
	if (!y)
		return;
	if (c->max_cores && y->core >= 0 && (size_t)y->core >= c->max_cores)
		return;
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
			/* Local: no DDR address and a slice shape from the layer group. */
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
		if (size != UINT64_MAX && size <= UINT64_MAX / dsz && !(pass == 1 && t->gsize))
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
		memrec_add(m, &q);
	}
}

struct tensors_run {
	const struct ctx *c;
	int pass;
	struct memrecs *parts; /* per range of HTML_ROWS_PART layers */
};

static void tensors_part(void *arg, size_t k)
{
	struct tensors_run *w = arg;
	size_t n = w->c->p->num_layers, a = k * HTML_ROWS_PART;
	size_t b = n - a > HTML_ROWS_PART ? a + HTML_ROWS_PART : n;
	for (size_t li = a; li < b && !w->parts[k].oom; li++)
		add_layer_tensors(w->c, li, w->pass, &w->parts[k]);
}

/* Appends the compiler log's records of every layer (pass 0: local, 1: DDR) to m, in layer
 * order: per range of layers on c->jobs threads, then joined. */
static void add_tensors(const struct ctx *c, int pass, struct memrecs *m)
{
	size_t np = (c->p->num_layers + HTML_ROWS_PART - 1) / HTML_ROWS_PART;
	struct tensors_run w = {c, pass, tp_calloc(np ? np : 1, sizeof *w.parts)};
	if (!w.parts) {
		m->oom = 1;
		return;
	}
	tp_par_run(c->jobs, np, tensors_part, &w);
	for (size_t k = 0; k < np; k++) {
		struct memrecs *q = &w.parts[k];
		m->oom |= q->oom;
		struct memrec *g = q->n ? tp_grow(m->v, sizeof *m->v, m->n + q->n, &m->cap) : m->v;
		if (q->n && !g)
			m->oom = 1;
		if (q->n && g && !m->oom) {
			m->v = g;
			memcpy(m->v + m->n, q->v, q->n * sizeof *q->v);
			m->n += q->n;
		}
		tp_free(q->v);
	}
	tp_free(w.parts);
}

int html_mem_plan(struct ctx *c)
{
	struct html_mem *hm = tp_calloc(1, sizeof *hm);
	if (!hm)
		return TP_ENOMEM;
	c->mem = hm;
	hm->every = 1;
	add_tensors(c, 0, &hm->l);
	if (html_facts_of(c->p->chip).lane_bytes)
		add_cmd_lmem(c, &hm->l, hm);
	add_tensors(c, 1, &hm->g);
	return hm->l.oom || hm->g.oom ? TP_ENOMEM : TP_OK;
}

void html_mem_free(struct html_mem *hm)
{
	if (!hm)
		return;
	tp_free(hm->l.v);
	tp_free(hm->g.v);
	tp_free(hm);
}

/* Part: column pt->k of memory records pt->u. */
static void memrec_col_part(struct ctx *c, const struct part *pt)
{
	const struct memrecs *m = pt->u;
	struct memrec_get g = {m, pt->k};
	html_put_col(&c->o, memrec_cols[pt->k], m->n, memrec_get, &g);
}

/* Part: the memory section's text before, between and after the two record tables (pt->k:
 * 0, 1, 2). */
static void mem_text_part(struct ctx *c, const struct part *pt)
{
	struct tp_buf *b = &c->o.b;
	const struct tp_profile *p = c->p;
	const struct html_mem *hm = c->mem;
	if (pt->k == 0) {
		struct arch_facts f = html_facts_of(p->chip);
		tp_buf_printf(b, ",\"lmem\":{\"laneBytes\":%u,\"banks\":%u,\"npus\":%u,",
		              f.lane_bytes, f.banks, f.npus);
		tp_buf_printf(b, "\"recs\":{\"n\":%zu", hm->l.n);
		return;
	}
	if (pt->k == 1) {
		tp_buf_putc(b, '}');
		/* "cmdEvery" only when sampled: the page of a smaller profile is unchanged. */
		if (hm->every > 1)
			tp_buf_printf(b, ",\"cmdEvery\":%zu", hm->every);
		tp_buf_printf(b, ",\"cmdDropped\":%zu},\"gmem\":{", hm->dropped);
		tp_buf_printf(b, "\"recs\":{\"n\":%zu", hm->g.n);
		return;
	}
	tp_buf_puts(b, "},\"blocks\":[");
	for (size_t i = 0; i < p->num_mems; i++) {
		const struct tp_mem *mm = &p->mems[i];
		if (i)
			tp_buf_putc(b, ',');
		tp_buf_printf(b, "[%d,", (int)mm->mtype);
		html_put_u64(b, mm->addr);
		tp_buf_putc(b, ',');
		html_put_u64(b, mm->size);
		tp_buf_putc(b, ',');
		tp_buf_i64(b, html_smap(&c->sm, mm->desc));
		tp_buf_putc(b, ']');
	}
	tp_buf_puts(b, "]}");
}

/* The memory section (,"lmem" and "gmem": memory records and blocks) from c->mem. */
void html_mem_parts(const struct ctx *c, struct parts *finds, struct parts *ps)
{
	html_part_add(ps, mem_text_part, NULL, 0, 0, 0);
	for (int k = 0; k < 9; k++)
		html_part_add(ps, memrec_col_part, &c->mem->l, 0, 0, k);
	html_part_add(ps, mem_text_part, NULL, 0, 0, 1);
	for (int k = 0; k < 9; k++)
		html_part_add(ps, memrec_col_part, &c->mem->g, 0, 0, k);
	html_part_add(ps, mem_text_part, NULL, 0, 0, 2);
	html_part_add(finds, mem_text_part, NULL, 0, 0, 2);
}
