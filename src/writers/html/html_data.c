/*
 * html_data.c — the data sections of result.html besides the lanes and the argument sets: the
 * analysis (per-core engine statistics, rankings), the layer table, and the memory records
 * (local memory per lane and DDR tensors from the compiler log, local-memory records from the
 * commands).
 *
 * Owns the memory records of c->mem (html_mem_plan) until html_mem_free.
 */
#include "writers/html/html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOP_MAX 200
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
	/* One decode of each layer per column, not two, when every value fits the buffer. */
	int32_t *vals = html_vals(c, n);
	if (vals && html_fill_col(vals, n, layer_col, &g)) {
		html_put_col_vals(&c->o, layer_cols[pt->k], n, vals);
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

/* Records [k * HTML_ROWS_PART, ...) of the commands' r into out. */
static void cmd_lmem_range(const struct ctx *c, const struct tp_lmem_recs *r, size_t k,
                           struct memrec *out)
{
	const struct tp_profile *p = c->p;
	size_t a = k * HTML_ROWS_PART, b = r->n - a > HTML_ROWS_PART ? a + HTML_ROWS_PART : r->n;
	for (size_t i = a; i < b; i++) {
		const struct tp_lmem_rec *x = &r->v[i];
		const struct tp_track *t = &p->tracks[x->track];
		const struct tp_slice *s = &t->slices[x->slice];
		out[i] = (struct memrec){x->begin_ns - c->t0,
		                         x->end_ns - c->t0,
		                         x->lane_offset,
		                         x->bytes,
		                         s->layer,
		                         t->core,
		                         s->cmd_id,
		                         x->write,
		                         (int)t->kind + 1};
	}
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

/* The records are made per range of HTML_ROWS_PART layers (the compiler's, both passes) or
 * commands' records, on c->jobs threads, then copied into the two tables in order. */
struct mem_run {
	const struct ctx *c;
	struct html_mem *hm;
	size_t np;             /* ranges of layers */
	struct memrecs *parts; /* per range: pass 0, then pass 1 */
	size_t *at;            /* per range and pass: where its records go */
	struct tp_lmem_recs cmd;
	size_t ncmd; /* ranges of the commands' records */
};

static void tensors_part(void *arg, size_t k)
{
	struct mem_run *w = arg;
	size_t n = w->c->p->num_layers, a = (k % w->np) * HTML_ROWS_PART;
	size_t b = n - a > HTML_ROWS_PART ? a + HTML_ROWS_PART : n;
	/* On a copy, stored once: the parts sit side by side, and the next one grows on another
	 * thread. */
	struct memrecs q = w->parts[k];
	for (size_t li = a; li < b && !q.oom; li++)
		add_layer_tensors(w->c, li, (int)(k / w->np), &q);
	w->parts[k] = q;
}

/* Copy k: a range's compiler records into its table (pass 0 ranges, the commands' record
 * ranges after them in the LOCAL table, pass 1 ranges). */
static void mem_copy(void *arg, size_t k)
{
	struct mem_run *w = arg;
	struct html_mem *hm = w->hm;
	if (k >= w->np && k < w->np + w->ncmd) {
		cmd_lmem_range(w->c, &w->cmd, k - w->np, hm->l.v + hm->l.n - w->cmd.n);
		return;
	}
	size_t q = k < w->np ? k : k - w->ncmd;
	struct memrecs *m = &w->parts[q];
	if (m->n)
		memcpy((q < w->np ? hm->l.v : hm->g.v) + w->at[q], m->v, m->n * sizeof *m->v);
	tp_free(m->v);
	m->v = NULL;
}

/* The tables' sizes and each range's place in them; allocates them. */
static int mem_tables(struct mem_run *w)
{
	struct html_mem *hm = w->hm;
	for (size_t q = 0; q < 2 * w->np; q++) {
		struct memrecs *t = q < w->np ? &hm->l : &hm->g;
		if (w->parts[q].oom)
			return TP_ENOMEM;
		w->at[q] = t->n;
		t->n += w->parts[q].n;
	}
	hm->l.n += w->cmd.n;
	hm->l.v = tp_malloc((hm->l.n ? hm->l.n : 1) * sizeof *hm->l.v);
	hm->g.v = tp_malloc((hm->g.n ? hm->g.n : 1) * sizeof *hm->g.v);
	return hm->l.v && hm->g.v ? TP_OK : TP_ENOMEM;
}

int html_mem_plan(struct ctx *c)
{
	struct html_mem *hm = tp_calloc(1, sizeof *hm);
	if (!hm)
		return TP_ENOMEM;
	c->mem = hm;
	hm->every = 1;
	struct mem_run w = {.c = c, .hm = hm};
	w.np = (c->p->num_layers + HTML_ROWS_PART - 1) / HTML_ROWS_PART;
	w.parts = tp_calloc(2 * w.np + 1, sizeof *w.parts);
	w.at = tp_calloc(2 * w.np + 1, sizeof *w.at);
	int rc = w.parts && w.at ? TP_OK : TP_ENOMEM;
	if (!rc)
		tp_par_run(c->jobs, 2 * w.np, tensors_part, &w);
	/* LOCAL records from the commands, after the compiler's. */
	if (!rc && html_facts_of(c->p->chip).lane_bytes)
		rc = tp_lmem_from_commands_jobs(c->p, c->max_cores, LMEM_CMD_MAX, c->jobs, &w.cmd);
	hm->every = w.cmd.every ? w.cmd.every : 1;
	hm->dropped = w.cmd.dropped;
	w.ncmd = (w.cmd.n + HTML_ROWS_PART - 1) / HTML_ROWS_PART;
	if (!rc)
		rc = mem_tables(&w);
	if (!rc)
		tp_par_run(c->jobs, 2 * w.np + w.ncmd, mem_copy, &w);
	for (size_t q = 0; w.parts && q < 2 * w.np; q++)
		tp_free(w.parts[q].v);
	tp_free(w.parts);
	tp_free(w.at);
	tp_free(w.cmd.v);
	return rc;
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
