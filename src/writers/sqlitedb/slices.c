/*
 * slices.c — the sink's slices as rows of the slice and arg_value tables, in blocks: the thread
 * that walks a part (tp_sink_drive_parts) records its slices and arguments into the part's
 * block (texts measured, checked for UTF-8 and repaired there, argument keys gathered once
 * each, long rows noted); the driving thread then, in part order, numbers the block's keys
 * and argument ids and hands the block to both tables' builders (argtree.c). Their workers
 * read the rows back when they pack the block's part, then give the block back to the pool.
 * The driving thread's work is per block, not per row.
 *
 * The texts stay the sink's (valid until its end callback, where the builders finish); only
 * repaired texts and the decimal form of an unsigned value above INT64_MAX are copied, into
 * the block.
 *
 * Owns: the pool and its blocks; the long rows' copies (struct sl_out).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "writers/sqlitedb/sqlitedb_int.h"

/* A text of a row: the sink's (s), or one in the block's text buffer (own: at off); neither:
 * NULL. */
struct sl_text {
	union {
		const char *s;
		size_t off;
	} p;
	uint32_t n;
	int own;
};

struct sl_arg {
	int64_t set;
	uint32_t key; /* the block's key number */
	uint8_t kind; /* ARG_* */
	uint8_t islong;
	union {
		int64_t i; /* ARG_INT, ARG_UINT_BIG */
		double d;  /* ARG_REAL */
	} v;
	struct sl_text s;
};

struct sl_slice {
	uint64_t id, parent;
	int64_t ts, dur, track, cmd;
	uint32_t depth, nargs;
	uint8_t islong;
	struct sl_text name, cat;
};

/* The bytes a block's rows hold (from its contents: see struct sqb_block). */
#define BLOCK_MEM(b)                                                                               \
	((b)->n * sizeof(struct sl_slice) + (b)->nargs * sizeof(struct sl_arg) + (b)->text.len)

struct sl_block {
	struct sl_slice *sl;
	size_t n, cap;
	struct sl_arg *args;
	size_t nargs, cap_args;
	struct tp_buf text; /* repaired and formatted texts */
	const char **keys;  /* distinct argument keys, first seen first */
	int64_t *ids;       /* their arg_key ids (sl_emit) */
	size_t nkeys, cap_keys, cap_ids;
	uint32_t *kh; /* open addressing over keys by address: key number + 1, 0 = empty */
	size_t cap_kh;
	int64_t arg_base; /* the id before its first argument's */
	size_t bound[SQT_COUNT], cells[SQT_COUNT];
	size_t *longs; /* long rows: index << 1 | tree */
	size_t nlongs, cap_longs;
	int refs, oom;
	int idle; /* on the pool's free list (sl_pool_trim) */
	struct sl_view {
		struct sl_block *b;
		int tree;
	} view[SQT_COUNT]; /* what each tree's block callbacks get */
	struct sl_pool *pool;
	struct sl_block *next, *all;
};

struct sl_pool {
	pthread_mutex_t mu;
	struct sl_block *free, *all;
};

struct sl_pool *sl_pool_new(void)
{
	struct sl_pool *p = tp_calloc(1, sizeof *p);
	if (p && pthread_mutex_init(&p->mu, NULL)) {
		tp_free(p);
		return NULL;
	}
	return p;
}

static void block_free(struct sl_block *b)
{
	void *arrays[] = {b->sl, b->args, b->keys, b->ids, b->kh, b->longs, b};
	tp_buf_free(&b->text);
	for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
		tp_free(arrays[i]);
}

void sl_pool_free(struct sl_pool *p)
{
	if (!p)
		return;
	for (struct sl_block *b = p->all, *n; b; b = n) {
		n = b->all;
		block_free(b);
	}
	pthread_mutex_destroy(&p->mu);
	tp_free(p);
}

void sl_pool_trim(struct sl_pool *p)
{
	pthread_mutex_lock(&p->mu);
	for (struct sl_block *b = p->free; b; b = b->next)
		b->idle = 1;
	struct sl_block **at = &p->all;
	while (*at) {
		struct sl_block *b = *at;
		if (b->idle) {
			*at = b->all;
			block_free(b);
		} else {
			at = &b->all;
		}
	}
	p->free = NULL;
	pthread_mutex_unlock(&p->mu);
}

static struct sl_block *block_get(struct sl_pool *p)
{
	pthread_mutex_lock(&p->mu);
	struct sl_block *b = p->free;
	if (b) {
		p->free = b->next;
	} else if ((b = tp_calloc(1, sizeof *b))) {
		tp_buf_init(&b->text);
		for (int k = 0; k < SQT_COUNT; k++)
			b->view[k] = (struct sl_view){b, k};
		b->pool = p;
		b->all = p->all;
		p->all = b;
	}
	pthread_mutex_unlock(&p->mu);
	return b;
}

/* A tree is done with block b (any thread): the last one empties it into the pool. */
static void block_give_back(struct sl_block *b)
{
	struct sl_pool *p = b->pool;
	pthread_mutex_lock(&p->mu);
	if (--b->refs <= 0) {
		b->n = b->nargs = b->nkeys = b->nlongs = 0;
		b->text.len = 0;
		b->text.oom = b->oom = 0;
		memset(b->bound, 0, sizeof b->bound);
		memset(b->cells, 0, sizeof b->cells);
		tp_oa_clear(b->kh, b->cap_kh, sizeof *b->kh);
		b->next = p->free;
		p->free = b;
	}
	pthread_mutex_unlock(&p->mu);
}

static void block_release(void *ctx)
{
	block_give_back(((struct sl_view *)ctx)->b);
}

/* ---- recording (the walking thread) ------------------------------------------------------ */

/* s as a row's text: measured, and copied repaired into the block when it is not valid UTF-8
 * as it is. */
static struct sl_text text_of(struct sl_block *b, const char *s)
{
	struct sl_text t = {{s}, 0, 0};
	if (!s)
		return t;
	size_t n = strlen(s);
	t.n = (uint32_t)n;
	if (!tp_text_is_safe(s, n, TP_TEXT_UTF8)) {
		t.own = 1;
		t.p.off = b->text.len;
		tp_text_put(&b->text, s, n, TP_TEXT_UTF8, 0, 0);
		t.n = (uint32_t)(b->text.len - t.p.off);
	}
	return t;
}

static size_t key_slot(const char *key, size_t cap)
{
	return (size_t)(((uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* The block's number of argument key `key` (addresses are stable during the drive). */
static int block_key(struct sl_block *b, const char *key, uint32_t *out)
{
	if ((b->nkeys + 1) * 2 > b->cap_kh) {
		size_t cap = b->cap_kh ? 2 * b->cap_kh : 64;
		uint32_t *kh = tp_calloc(cap, sizeof *kh);
		if (!kh)
			return -1;
		for (size_t k = 0; k < b->nkeys; k++) {
			size_t h = key_slot(b->keys[k], cap);
			while (kh[h])
				h = (h + 1) & (cap - 1);
			kh[h] = (uint32_t)k + 1;
		}
		tp_free(b->kh);
		b->kh = kh;
		b->cap_kh = cap;
	}
	size_t h = key_slot(key, b->cap_kh);
	for (; b->kh[h]; h = (h + 1) & (b->cap_kh - 1))
		if (b->keys[b->kh[h] - 1] == key) {
			*out = b->kh[h] - 1;
			return 0;
		}
	if (b->nkeys == b->cap_keys) {
		const char **n = tp_grow(b->keys, sizeof *n, b->nkeys + 1, &b->cap_keys);
		if (!n)
			return -1;
		b->keys = n;
	}
	b->keys[b->nkeys] = key;
	b->kh[h] = (uint32_t)b->nkeys + 1;
	*out = (uint32_t)b->nkeys++;
	return 0;
}

/* Counts row i of tree k in the block's bound, or notes it long; 0 or -1. */
static int count_row(struct sl_block *b, int k, size_t i, int ncols, size_t text, uint8_t *islong)
{
	*islong = text > SQB_LONG_TEXT;
	if (!*islong) {
		b->bound[k] += SQB_ROW_BOUND(ncols, text);
		b->cells[k]++;
		return 0;
	}
	size_t *n = tp_grow(b->longs, sizeof *n, b->nlongs + 1, &b->cap_longs);
	if (!n)
		return -1;
	b->longs = n;
	n[b->nlongs++] = i << 1 | (size_t)k;
	return 0;
}

static int record_arg(struct sl_block *b, int64_t set, const struct tp_sink_arg *a)
{
	struct sl_arg *x = &b->args[b->nargs];
	*x = (struct sl_arg){.set = set};
	if (block_key(b, a->key, &x->key))
		return -1;
	switch (a->type) {
	case TP_ARG_INT:
		x->kind = ARG_INT;
		x->v.i = a->i;
		break;
	case TP_ARG_UINT:
		/* int_value is signed 64-bit, as in trace_processor; a value above INT64_MAX keeps
		 * its exact decimal text for display_value. */
		x->kind = ARG_INT;
		x->v.i = (int64_t)a->u;
		if (a->u > (uint64_t)INT64_MAX) {
			char num[32];
			int n = snprintf(num, sizeof num, "%llu", (unsigned long long)a->u);
			x->kind = ARG_UINT_BIG;
			x->s = (struct sl_text){{.off = b->text.len}, (uint32_t)n, 1};
			tp_buf_put(&b->text, num, (size_t)n);
		}
		break;
	case TP_ARG_REAL:
		x->kind = ARG_REAL;
		x->v.d = a->d;
		break;
	default:
		x->kind = ARG_STRING;
		x->s = text_of(b, a->s ? a->s : "");
		break;
	}
	return count_row(b, SQT_ARGS, b->nargs++, A_NCOLS, x->s.n, &x->islong);
}

static int record(struct sl_block *b, const struct tp_sink_slice *ss)
{
	if (b->n == b->cap) {
		struct sl_slice *n = tp_grow(b->sl, sizeof *n, b->n + 1, &b->cap);
		if (!n)
			return -1;
		b->sl = n;
	}
	if (b->nargs + ss->num_args > b->cap_args) {
		struct sl_arg *n =
		    tp_grow(b->args, sizeof *n, b->nargs + ss->num_args, &b->cap_args);
		if (!n)
			return -1;
		b->args = n;
	}
	struct sl_slice *x = &b->sl[b->n];
	*x = (struct sl_slice){
	    .id = ss->id,
	    .parent = ss->parent_id,
	    .ts = ss->ts_ns,
	    .dur = ss->dur_ns,
	    .track = (int64_t)ss->track->uuid,
	    .cmd = ss->slice ? ss->slice->cmd_id : 0,
	    .depth = ss->depth,
	    .nargs = (uint32_t)ss->num_args,
	    .name = text_of(b, ss->name),
	    .cat = text_of(b, ss->category),
	};
	if (count_row(b, SQT_SLICE, b->n++, C_NCOLS, (size_t)x->name.n + x->cat.n, &x->islong))
		return -1;
	for (size_t i = 0; i < ss->num_args; i++)
		if (record_arg(b, (int64_t)ss->id, &ss->args[i]))
			return -1;
	return b->text.oom ? -1 : 0;
}

int sl_record(struct sl_pool *p, struct sl_slot *s, const struct tp_sink_slice *ss)
{
	if (s->oom)
		return -1;
	if (!s->b && !(s->b = block_get(p)))
		s->oom = 1;
	if (!s->oom && record(s->b, ss))
		s->oom = 1;
	return s->oom ? -1 : 0;
}

/* ---- rows (any thread, once the keys and ids are numbered) ------------------------------- */

static struct sqb_val v_int(int64_t i)
{
	return (struct sqb_val){.type = SQB_INT, .i = i};
}

static struct sqb_val v_text(const struct sl_block *b, const struct sl_text *t)
{
	if (t->own)
		return (struct sqb_val){.type = SQB_TEXT, .n = t->n, .s = b->text.data + t->p.off};
	if (!t->p.s)
		return (struct sqb_val){.type = SQB_NULL};
	return (struct sqb_val){.type = SQB_TEXT, .n = t->n, .s = t->p.s};
}

static void slice_vals(const struct sl_block *b, size_t i, struct sqb_val *v)
{
	const struct sl_slice *x = &b->sl[i];
	v[C_PARENT].type = v[C_ARGSET].type = v[C_CMD].type = SQB_NULL;
	v[C_ID] = v_int((int64_t)x->id);
	v[C_TS] = v_int(x->ts);
	v[C_DUR] = v_int(x->dur);
	v[C_TRACK] = v_int(x->track);
	v[C_CAT] = v_text(b, &x->cat);
	v[C_NAME] = v_text(b, &x->name);
	v[C_DEPTH] = v_int(x->depth);
	if (x->parent)
		v[C_PARENT] = v_int((int64_t)x->parent);
	if (x->nargs)
		v[C_ARGSET] = v_int((int64_t)x->id);
	if (x->cmd)
		v[C_CMD] = v_int(x->cmd);
}

static void arg_vals(const struct sl_block *b, size_t i, struct sqb_val *v)
{
	const struct sl_arg *a = &b->args[i];
	v[A_SET] = v_int(a->set);
	v[A_ID] = v_int(b->arg_base + (int64_t)i + 1);
	v[A_KEY] = v_int(b->ids[a->key]);
	v[A_INT].type = v[A_STR].type = v[A_REAL].type = SQB_NULL;
	if (a->kind == ARG_INT || a->kind == ARG_UINT_BIG)
		v[A_INT] = v_int(a->v.i);
	if (a->kind == ARG_UINT_BIG || a->kind == ARG_STRING)
		v[A_STR] = v_text(b, &a->s);
	if (a->kind == ARG_REAL)
		v[A_REAL] = sqb_real(a->v.d);
	v[A_TYPE] = v_int(a->kind);
}

/* Row i of the block as one tree sees it (struct sqb_block's row callback). */
static int block_row(void *ctx, size_t i, struct sqb_val *v)
{
	const struct sl_view *w = ctx;
	if (w->tree == SQT_SLICE ? w->b->sl[i].islong : w->b->args[i].islong)
		return 0;
	(w->tree == SQT_SLICE ? slice_vals : arg_vals)(w->b, i, v);
	return 1;
}

/* ---- handing over (the driving thread, in part order) ------------------------------------ */

/* Row i of tree k kept for SQLite in o, its texts copied. */
static int keep_long(struct sl_out *o, const struct sl_block *b, int k, size_t i)
{
	int nc = k == SQT_SLICE ? C_NCOLS : A_NCOLS;
	struct sqb_val *n =
	    tp_grow(o->longs[k], (size_t)nc * sizeof *n, o->nlong[k] + 1, &o->cap_long[k]);
	if (!n)
		return TP_ENOMEM;
	o->longs[k] = n;
	n += o->nlong[k]++ * (size_t)nc;
	if (k == SQT_SLICE)
		slice_vals(b, i, n);
	else
		arg_vals(b, i, n);
	for (int c = 0; c < nc; c++) {
		if (n[c].type != SQB_TEXT)
			continue;
		char *t = tp_malloc((size_t)n[c].n + 1);
		if (t) {
			memcpy(t, n[c].s, n[c].n);
			t[n[c].n] = 0;
		}
		n[c].s = t;
		if (!t) {
			n[c].type = SQB_NULL;
			return TP_ENOMEM;
		}
	}
	return TP_OK;
}

int sl_emit(struct sl_slot *s, struct sl_out *o)
{
	struct sl_block *b = s->b;
	int st = TP_OK;
	s->b = NULL;
	if (s->oom) {
		s->oom = 0;
		if (b) {
			b->refs = 1;
			block_give_back(b);
		}
		return TP_ENOMEM;
	}
	if (!b)
		return TP_OK;
	if (b->nkeys > b->cap_ids) {
		int64_t *n = tp_grow(b->ids, sizeof *n, b->nkeys, &b->cap_ids);
		if (!n)
			st = TP_ENOMEM;
		else
			b->ids = n;
	}
	for (size_t k = 0; k < b->nkeys && !st; k++)
		st = o->key_id(o->ctx, b->keys[k], &b->ids[k]);
	b->arg_base = o->next_arg;
	o->next_arg += (int64_t)b->nargs;
	for (size_t i = 0; i < b->nlongs && !st; i++)
		st = keep_long(o, b, (int)(b->longs[i] & 1), b->longs[i] >> 1);
	b->refs = 2;
	struct sqb_block blk[SQT_COUNT] = {
	    [SQT_ARGS] = {b->nargs, b->cells[SQT_ARGS], b->bound[SQT_ARGS], BLOCK_MEM(b), block_row,
	                  block_release, &b->view[SQT_ARGS]},
	    [SQT_SLICE] = {b->n, b->cells[SQT_SLICE], b->bound[SQT_SLICE], BLOCK_MEM(b), block_row,
	                   block_release, &b->view[SQT_SLICE]},
	};

	for (int k = 0; k < SQT_COUNT; k++) {
		if (st)
			block_give_back(b);
		else
			st = o->add(o->ctx, k, &blk[k]);
	}
	return st;
}

void sl_out_free(struct sl_out *o)
{
	for (int k = 0; k < SQT_COUNT; k++) {
		int nc = k == SQT_SLICE ? C_NCOLS : A_NCOLS;
		for (size_t i = 0; i < o->nlong[k] * (size_t)nc; i++)
			if (o->longs[k][i].type == SQB_TEXT)
				tp_free((char *)o->longs[k][i].s);
		tp_free(o->longs[k]);
		o->longs[k] = NULL;
		o->nlong[k] = o->cap_long[k] = 0;
	}
}
