/*
 * thread.c — pass 2 of the capture reader: one thread's records into a track. Begin and end
 * records nest on a stack and close as slices with their argument sets (an operator's detail
 * records — tensors, attributes, cost, hardware counters — follow its end record), counter
 * records become counter samples, async begins and ends are collected for async.c. Owns, for
 * one thread, the string id maps, the scope stack and the detail buffers.
 */
#include "readers/capfile/capfile_int.h"

#include <stddef.h>
#include <stdio.h>

static const char *const key_text[NKEYS] = {
    TP_CAP_KEY_STEP,          TP_CAP_KEY_WARMUP,
    TP_CAP_KEY_META,          TP_CAP_KEY_GRAPH,
    TP_CAP_KEY_OP_TYPE,       TP_CAP_KEY_POST_OP,
    TP_CAP_KEY_INPUTS,        TP_CAP_KEY_INPUT_SHAPES,
    TP_CAP_KEY_INPUT_DTYPES,  TP_CAP_KEY_OUTPUTS,
    TP_CAP_KEY_OUTPUT_SHAPES, TP_CAP_KEY_OUTPUT_DTYPES,
    TP_CAP_KEY_WEIGHT_SHAPE,  TP_CAP_KEY_WEIGHT_SPARSITY,
    TP_CAP_KEY_BYTES,         TP_CAP_KEY_FLOPS,
    TP_CAP_KEY_CUT,           TP_CAP_KEY_CATEGORY,
    TP_CAP_KEY_COLOR,         TP_CAP_KEY_SRC_FILE,
    TP_CAP_KEY_SRC_LINE,      TP_CAP_KEY_SRC_FUNC,
};
static const char *const type_text[NTYPES] = {
    TP_CAP_TYPE_ACTIVITY, TP_CAP_TYPE_STEP, TP_CAP_TYPE_OP,
    TP_CAP_TYPE_RANGE,    TP_CAP_TYPE_MARK, TP_CAP_TYPE_RUNTIME,
};

struct open_scope {
	uint8_t kind, flags;
	uint32_t name;
	uint64_t a, b;
	uint64_t ts;
	uint64_t off;                /* file offset of the begin record */
	int has_src;                 /* a SRCLOC record followed the begin */
	uint32_t src_file, src_func; /* thread string ids */
	int64_t src_line;
};

struct detail {
	struct tp_buf in_names, in_shapes, in_dtypes, out_names, out_shapes, out_dtypes, wshape;
	int have_in, have_out, have_w, have_cost, have_sparse; /* detail_reset clears from here */
	uint64_t bytes, flops;
	double sparse;
	uint32_t attr_key[64],
	    attr_val[64]; /* thread string id of the name, profile id of the value */
	int nattr;
	uint64_t hw[TP_CAPFMT_MAX_HW];
	int have_hw[TP_CAPFMT_MAX_HW];
};

struct tctx {
	struct cap_rd *r;
	const struct cap_thr *t;
	uint32_t *ids;      /* thread string id -> profile string id */
	uint32_t *attr_ids; /* thread string id -> id of "attr.<it>", 0 until first used */
	struct detail dt;   /* the operator being closed (buffers reused from op to op) */
	int track;
	struct open_scope *stack;
	size_t depth, cap;
	struct {
		uint32_t name;
		int counter;
	} * ctr;
	size_t nctr, cap_ctr;
};

static int str_id(struct tctx *x, uint32_t id, uint64_t off, uint32_t *out)
{
	if (id > x->t->nstr)
		return tp_diag_at(x->r->d, TP_EFORMAT, x->r->path, off,
		                  "string id %u out of range (thread %lld has %u strings)", id,
		                  (long long)x->t->tid, x->t->nstr);
	*out = x->ids[id];
	return TP_OK;
}

/* The profile string id of thread string `id` (a record field of 32 or 64 bits). */
static int str_sid(struct tctx *x, uint64_t id, uint64_t off, uint32_t *sid)
{
	*sid = 0;
	if (id > UINT32_MAX)
		return tp_diag_at(x->r->d, TP_EFORMAT, x->r->path, off,
		                  "string id %llu out of range", (unsigned long long)id);
	return str_id(x, (uint32_t)id, off, sid);
}

static int str_of(struct tctx *x, uint64_t id, uint64_t off, const char **s)
{
	uint32_t pid;
	int rc = str_sid(x, id, off, &pid);
	*s = rc == TP_OK ? tp_str(x->r->p, pid) : "";
	return rc;
}

static int type_of(uint8_t begin_kind)
{
	switch (begin_kind) {
	case TP_CAPFMT_REC_ACT_BEGIN:
		return T_ACTIVITY;
	case TP_CAPFMT_REC_STEP_BEGIN:
		return T_STEP;
	case TP_CAPFMT_REC_OP_BEGIN:
		return T_OP;
	case TP_CAPFMT_REC_RANGE_BEGIN:
		return T_RANGE;
	case TP_CAPFMT_REC_MARK:
		return T_MARK;
	default:
		return T_RUNTIME;
	}
}

static uint32_t type_id(struct cap_rd *r, int t)
{
	if (!r->type[t])
		r->type[t] = tp_profile_str(r->p, type_text[t]);
	return r->type[t];
}

/* The id of key K_* `k`. The arg_* helpers below add one argument to the open set; each
 * interns its key before its value, the order tp_args_add_str used (string ids follow first
 * use, so the outputs do not change). A failed append sets the profile's sticky oom flag,
 * which tp_profile_finish reports. */
static uint32_t key_id(struct cap_rd *r, int k)
{
	if (!r->key[k])
		r->key[k] = tp_profile_str(r->p, key_text[k]);
	return r->key[k];
}

static void arg_put(struct cap_rd *r, struct tp_arg *a)
{
	(void)tp_args_add(r->p, a);
}

static void arg_int(struct cap_rd *r, int k, int64_t v)
{
	struct tp_arg a = {.key = key_id(r, k), .type = TP_ARG_INT, .v.i = v};
	arg_put(r, &a);
}

static void arg_uint_key(struct cap_rd *r, uint32_t key, uint64_t v)
{
	struct tp_arg a = {.key = key, .type = TP_ARG_UINT, .v.u = v};
	arg_put(r, &a);
}

static void arg_real(struct cap_rd *r, int k, double v)
{
	struct tp_arg a = {.key = key_id(r, k), .type = TP_ARG_REAL, .v.d = v};
	arg_put(r, &a);
}

/* A string argument whose value is already a profile string (a thread string's id). */
static void arg_sid(struct cap_rd *r, int k, uint32_t sid)
{
	struct tp_arg a = {.key = key_id(r, k), .type = TP_ARG_STR, .v.s = sid};
	arg_put(r, &a);
}

/* A string argument made of n bytes of text (interned here, after the key). */
static void arg_text(struct cap_rd *r, int k, const char *s, size_t n)
{
	struct tp_arg a = {.key = key_id(r, k), .type = TP_ARG_STR};
	a.v.s = tp_profile_strn(r->p, s, n);
	arg_put(r, &a);
}

static void join(struct tp_buf *b, const char *s)
{
	if (b->len)
		tp_buf_putc(b, ';');
	tp_buf_puts(b, s);
}

/* The operator's text buffers (offsets in struct detail): the one list that reset and free
 * walk. */
static const size_t dt_buf_off[] = {
    offsetof(struct detail, in_names),   offsetof(struct detail, in_shapes),
    offsetof(struct detail, in_dtypes),  offsetof(struct detail, out_names),
    offsetof(struct detail, out_shapes), offsetof(struct detail, out_dtypes),
    offsetof(struct detail, wshape)};
#define DT_NBUF (sizeof dt_buf_off / sizeof *dt_buf_off)

static struct tp_buf *dt_buf(struct detail *dt, size_t k)
{
	return (struct tp_buf *)(void *)((char *)dt + dt_buf_off[k]);
}

/* Every buffer empty (a zeroed tp_buf is an empty one). */
static void detail_init(struct detail *dt)
{
	memset(dt, 0, sizeof *dt);
}

/* Empties dt for the next operator, keeping its buffers' memory. */
static void detail_reset(struct detail *dt)
{
	for (size_t k = 0; k < DT_NBUF; k++)
		dt_buf(dt, k)->len = 0; /* oom stays: it is sticky, and reported */
	size_t from = offsetof(struct detail, have_in);
	memset((char *)dt + from, 0, sizeof *dt - from);
}

static void detail_free(struct detail *dt)
{
	for (size_t k = 0; k < DT_NBUF; k++)
		tp_buf_free(dt_buf(dt, k));
}

/* Reads the detail records following an OP_END at index *i (advancing it). */
static int read_detail(struct tctx *x, uint64_t *i, struct detail *dt)
{
	const struct cap_thr *t = x->t;
	struct rec q;
	while (*i + 1 < t->nrec) {
		get_rec(t, *i + 1, &q);
		if (q.kind < TP_CAPFMT_REC_TENSOR)
			break;
		(*i)++;
		const char *s1 = "", *s2 = "";
		int rc;
		switch (q.kind) {
		case TP_CAPFMT_REC_TENSOR: {
			int role = q.aux >> 8;
			if (q.b > TP_CAPFMT_MAX_DIMS || role > TP_CAPFMT_ROLE_WEIGHT)
				return tp_diag_at(x->r->d, TP_EFORMAT, x->r->path, q.off,
				                  "tensor record with role %d and %llu dims", role,
				                  (unsigned long long)q.b);
			if ((rc = str_of(x, q.name, q.off + 12, &s1)) != TP_OK ||
			    (rc = str_of(x, q.a, q.off + 16, &s2)) != TP_OK)
				return rc;
			/* Shape: dims records follow, two dims each; "1x128x256" (at most
			 * TP_CAPFMT_MAX_DIMS numbers of at most 20 characters, and the x's). */
			char shape[TP_CAPFMT_MAX_DIMS * 21 + 1];
			size_t sl = 0;
			uint64_t want = q.b, got = 0;
			while (got < want && *i + 1 < t->nrec) {
				struct rec dm;
				get_rec(t, *i + 1, &dm);
				if (dm.kind != TP_CAPFMT_REC_DIMS)
					break;
				(*i)++;
				uint64_t v[2] = {dm.a, dm.b};
				for (int k = 0; k < 2 && k < dm.aux && got < want; k++, got++) {
					if (got)
						shape[sl++] = 'x';
					sl += tp_fmt_i64(shape + sl, (int64_t)v[k]);
				}
			}
			shape[sl] = 0;
			if (role == TP_CAPFMT_ROLE_INPUT) {
				join(&dt->in_names, s1);
				join(&dt->in_shapes, shape);
				join(&dt->in_dtypes, s2);
				dt->have_in++;
			} else if (role == TP_CAPFMT_ROLE_OUTPUT) {
				join(&dt->out_names, s1);
				join(&dt->out_shapes, shape);
				join(&dt->out_dtypes, s2);
				dt->have_out++;
			} else {
				dt->wshape.len = 0;
				tp_buf_puts(&dt->wshape, shape);
				dt->have_w = 1;
			}
			break;
		}
		case TP_CAPFMT_REC_ATTR: {
			uint32_t
			    name_sid; /* checks the id; the key is made once per name (attr_key) */
			int at = dt->nattr < 64 ? dt->nattr : 63;
			if ((rc = str_id(x, q.name, q.off + 12, &name_sid)) != TP_OK)
				return rc;
			dt->attr_key[at] = q.name;
			if (q.a > UINT32_MAX)
				return tp_diag_at(x->r->d, TP_EFORMAT, x->r->path, q.off + 16,
				                  "attribute value id out of range");
			if ((rc = str_id(x, (uint32_t)q.a, q.off + 16, &dt->attr_val[at])) != TP_OK)
				return rc;
			if (dt->nattr < 64)
				dt->nattr++;
			break;
		}
		case TP_CAPFMT_REC_COST: /* 0 = unknown: not reported */
			dt->bytes = q.a;
			dt->flops = q.b;
			dt->have_cost = q.a || q.b;
			break;
		case TP_CAPFMT_REC_SPARSITY:
			memcpy(&dt->sparse, &q.a, sizeof dt->sparse);
			dt->have_sparse = dt->sparse == dt->sparse; /* not NaN */
			break;
		case TP_CAPFMT_REC_HW:
			if (q.aux < TP_CAPFMT_MAX_HW) {
				dt->hw[q.aux] = q.a;
				dt->have_hw[q.aux] = 1;
			}
			break;
		case TP_CAPFMT_REC_DIMS:
			x->r->orphan_details++;
			break;
		default:
			x->r->unknown_records++;
			break;
		}
	}
	return TP_OK;
}

/* The key "attr.<name>" of thread string `name` (a checked id), made on its first use. */
static uint32_t attr_key(struct tctx *x, uint32_t name)
{
	struct tp_profile *p = x->r->p;
	if (!x->attr_ids[name]) {
		struct tp_buf k;
		tp_buf_init(&k);
		tp_buf_puts(&k, TP_CAP_KEY_ATTR_PREFIX);
		tp_buf_puts(&k, tp_str(p, x->ids[name]));
		if (!k.oom)
			x->attr_ids[name] = tp_profile_strn(p, k.data, k.len);
		else
			p->oom = 1;
		tp_buf_free(&k);
	}
	return x->attr_ids[name];
}

/* The key "hw.<counter name>" of hardware counter k (< TP_CAPFMT_MAX_HW). */
static uint32_t hw_key(struct cap_rd *r, uint32_t k)
{
	if (!r->hw_key[k]) {
		char key[64];
		if (k >= r->hw_n)
			snprintf(key, sizeof key, "%scounter%u", TP_CAP_KEY_HW_PREFIX, k);
		else
			snprintf(key, sizeof key, "%s%s", TP_CAP_KEY_HW_PREFIX,
			         r->hw_names[k][0] ? r->hw_names[k] : "counter");
		r->hw_key[k] = tp_profile_str(r->p, key);
	}
	return r->hw_key[k];
}

static void add_step_args(struct cap_rd *r, const struct open_scope *o)
{
	int in_step = (o->flags & TP_CAPFMT_F_STEP) != 0;
	arg_int(r, K_STEP, in_step ? (int64_t)o->a : -1);
	arg_int(r, K_WARMUP, (o->flags & TP_CAPFMT_F_WARMUP) ? 1 : 0);
}

/* Category and colour of a mark / range (b = category id | colour << 32). */
static int add_style(struct tctx *x, uint64_t b, uint64_t off)
{
	struct cap_rd *r = x->r;
	uint32_t cat;
	int rc = str_sid(x, b & 0xffffffffu, off, &cat);
	if (rc != TP_OK)
		return rc;
	if (tp_str(r->p, cat)[0])
		arg_sid(r, K_CATEGORY, cat);
	uint32_t color = (uint32_t)(b >> 32);
	if (color & 0x01000000u) {
		char c[8];
		snprintf(c, sizeof c, "#%06x", color & 0xffffffu);
		arg_text(r, K_COLOR, c, strlen(c));
	}
	return TP_OK;
}

static int add_src(struct tctx *x, const struct open_scope *o)
{
	if (!o->has_src)
		return TP_OK;
	struct cap_rd *r = x->r;
	uint32_t f, fn;
	int rc;
	if ((rc = str_sid(x, o->src_file, o->off + 44, &f)) != TP_OK ||
	    (rc = str_sid(x, o->src_func, o->off + 56, &fn)) != TP_OK)
		return rc;
	if (tp_str(r->p, f)[0])
		arg_sid(r, K_SRC_FILE, f);
	arg_int(r, K_SRC_LINE, o->src_line);
	if (tp_str(r->p, fn)[0])
		arg_sid(r, K_SRC_FUNC, fn);
	return TP_OK;
}

/* A SRCLOC continuation right after record *i, consumed into `o`. */
static void take_src(const struct cap_thr *t, uint64_t *i, struct open_scope *o)
{
	if (*i + 1 >= t->nrec)
		return;
	struct rec q;
	get_rec(t, *i + 1, &q);
	if (q.kind != TP_CAPFMT_REC_SRCLOC)
		return;
	(*i)++;
	o->has_src = 1;
	o->src_file = q.name;
	o->src_func = q.b > UINT32_MAX ? UINT32_MAX : (uint32_t)q.b;
	o->src_line = (int64_t)q.a;
}

/* Adds a joined list (names, shapes or dtypes of the tensors) as a string argument. */
static void arg_list(struct cap_rd *r, int k, const struct tp_buf *b)
{
	if (b->oom)
		r->p->oom = 1; /* tp_profile_finish reports it */
	else
		arg_text(r, k, b->len ? b->data : "", b->len);
}

/* Closes the innermost scope as a slice ending at `end_tick`; `i` points at its end record
 * (or is NULL for scopes still open at the end of the dump). */
/* The arguments of an operator: type, step, tensors, weight, cost, attributes, counters. */
static int add_op_args(struct tctx *x, const struct open_scope *o, const struct detail *dt)
{
	struct cap_rd *r = x->r;
	int rc;
	if (r->mode >= 1) {
		uint32_t ot, po;
		if ((rc = str_sid(x, o->b & 0xffffffffu, o->off + 24, &ot)) != TP_OK ||
		    (rc = str_sid(x, o->b >> 32, o->off + 28, &po)) != TP_OK)
			return rc;
		arg_sid(r, K_OP_TYPE, ot);
		arg_sid(r, K_POST_OP, po);
	}
	add_step_args(r, o);
	if (dt->have_in) {
		arg_list(r, K_INPUTS, &dt->in_names);
		arg_list(r, K_INPUT_SHAPES, &dt->in_shapes);
		arg_list(r, K_INPUT_DTYPES, &dt->in_dtypes);
	}
	if (dt->have_out) {
		arg_list(r, K_OUTPUTS, &dt->out_names);
		arg_list(r, K_OUTPUT_SHAPES, &dt->out_shapes);
		arg_list(r, K_OUTPUT_DTYPES, &dt->out_dtypes);
	}
	if (dt->have_w)
		arg_list(r, K_WEIGHT_SHAPE, &dt->wshape);
	if (dt->have_sparse)
		arg_real(r, K_WEIGHT_SPARSITY, dt->sparse);
	if (dt->have_cost && dt->bytes)
		arg_uint_key(r, key_id(r, K_BYTES), dt->bytes);
	if (dt->have_cost && dt->flops)
		arg_uint_key(r, key_id(r, K_FLOPS), dt->flops);
	for (int k = 0; k < dt->nattr; k++) {
		struct tp_arg a = {.key = attr_key(x, dt->attr_key[k]),
		                   .type = TP_ARG_STR,
		                   .v.s = dt->attr_val[k]};
		arg_put(r, &a);
	}
	for (uint32_t k = 0; k < TP_CAPFMT_MAX_HW; k++)
		if (dt->have_hw[k])
			arg_uint_key(r, hw_key(r, k), dt->hw[k]);
	return TP_OK;
}

/* Closes the innermost scope as a slice ending at `end_tick`; `i` points at its end record
 * (or is NULL for scopes still open at the end of the dump). */
static int close_scope(struct tctx *x, const struct open_scope *o, uint64_t end_tick,
                       const struct rec *end, uint64_t *i)
{
	struct cap_rd *r = x->r;
	struct tp_profile *p = r->p;
	struct detail *dt = &x->dt;
	detail_reset(dt);
	int rc = TP_OK;
	if (end && o->kind == TP_CAPFMT_REC_OP_BEGIN)
		rc = read_detail(x, i, dt);
	if (rc != TP_OK)
		return rc;
	int type = type_of(o->kind);
	uint32_t name;
	if ((rc = str_sid(x, o->name, o->off + 12, &name)) != TP_OK)
		return rc;
	uint32_t args = tp_args_begin(p);
	(void)args;
	switch (o->kind) {
	case TP_CAPFMT_REC_ACT_BEGIN: {
		arg_int(r, K_STEP, (int64_t)o->a);
		uint32_t meta;
		if ((rc = str_sid(x, o->b, o->off + 24, &meta)) != TP_OK)
			return rc;
		if (!tp_str(p, meta)[0] && end &&
		    (rc = str_sid(x, end->b, end->off + 24, &meta)) != TP_OK)
			return rc;
		if (tp_str(p, meta)[0])
			arg_sid(r, K_META, meta);
		break;
	}
	case TP_CAPFMT_REC_STEP_BEGIN:
		if (r->mode >= 1)
			arg_sid(r, K_GRAPH, name);
		arg_int(r, K_STEP, (int64_t)o->a);
		arg_int(r, K_WARMUP, (o->flags & TP_CAPFMT_F_WARMUP) ? 1 : 0);
		break;
	case TP_CAPFMT_REC_OP_BEGIN:
		if ((rc = add_op_args(x, o, dt)) != TP_OK)
			return rc;
		break;
	case TP_CAPFMT_REC_RANGE_BEGIN:
	case TP_CAPFMT_REC_MARK:
		add_step_args(r, o);
		if ((rc = add_style(x, o->b, o->off + 24)) != TP_OK ||
		    (rc = add_src(x, o)) != TP_OK)
			return rc;
		break;
	default: /* runtime call */
		add_step_args(r, o);
		break;
	}
	if (end == NULL && o->kind != TP_CAPFMT_REC_MARK)
		arg_int(r, K_CUT, 1);
	struct tp_slice *s = tp_track_push(p, x->track);
	if (s == NULL)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	s->start_ns = rel_ns(r, o->ts);
	tp_slice_set_end(p, &p->tracks[x->track], s, rel_ns(r, end_tick));
	if (tp_slice_end(&p->tracks[x->track], s) < s->start_ns)
		tp_slice_set_end(p, &p->tracks[x->track], s, s->start_ns);
	struct tp_label lb = {.name = tp_str(p, name)[0] ? name : type_id(r, type)};
	lb.type = type_id(r, type);
	tp_slice_set_label(p, &p->tracks[x->track], s, &lb);
	s->args = tp_args_end(p);
	return TP_OK;
}

static int counter_sample(struct tctx *x, const struct rec *q)
{
	struct cap_rd *r = x->r;
	uint32_t name = 0;
	int rc = str_id(x, q->name, q->off + 12, &name);
	if (rc != TP_OK)
		return rc;
	int idx = -1;
	for (size_t k = 0; k < x->nctr; k++)
		if (x->ctr[k].name == name)
			idx = x->ctr[k].counter;
	if (idx < 0) {
		idx = tp_profile_add_counter(r->p, 0, x->track,
		                             name ? tp_str(r->p, name) : "counter", "");
		void *n = tp_grow(x->ctr, sizeof *x->ctr, x->nctr + 1, &x->cap_ctr);
		if (idx < 0 || n == NULL)
			return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
		x->ctr = n;
		x->ctr[x->nctr].name = name;
		x->ctr[x->nctr].counter = idx;
		x->nctr++;
	}
	double v;
	memcpy(&v, &q->a, sizeof v);
	if (tp_counter_push(r->p, idx, rel_ns(r, q->ts), v) != TP_OK)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	return TP_OK;
}

static int collect_async(struct tctx *x, const struct open_scope *o)
{
	struct cap_rd *r = x->r;
	struct async_ev *g = tp_grow(r->async, sizeof *g, r->nasync + 1, &r->cap_async);
	if (g == NULL)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	r->async = g;
	struct async_ev *e = &r->async[r->nasync];
	memset(e, 0, sizeof *e);
	int rc;
	if ((rc = str_id(x, o->name, o->off + 12, &e->name)) != TP_OK)
		return rc;
	e->begin = o->kind == TP_CAPFMT_REC_ASYNC_BEGIN;
	if (e->begin) {
		if (o->b & 0xffffffffu) {
			if ((rc = str_id(x, (uint32_t)(o->b & 0xffffffffu), o->off + 24,
			                 &e->category)) != TP_OK)
				return rc;
		}
		e->color = (uint32_t)(o->b >> 32);
		if (o->has_src) {
			e->has_src = 1;
			e->src_line = o->src_line;
			if ((rc = str_id(x, o->src_file, o->off + 44, &e->src_file)) != TP_OK ||
			    (rc = str_id(x, o->src_func, o->off + 56, &e->src_func)) != TP_OK)
				return rc;
		}
	}
	e->id = o->a;
	e->ts = o->ts;
	e->tid = x->t->tid;
	e->seq = r->nasync;
	r->nasync++;
	return TP_OK;
}

/* Interns the thread's strings into x->ids: exactly nstr NUL-terminated strings fill sbytes. */
static int intern_strings(struct tctx *x)
{
	struct cap_rd *r = x->r;
	const struct cap_thr *t = x->t;
	uint32_t pos = 0;
	for (uint32_t k = 1; k <= t->nstr; k++) {
		const uint8_t *z = memchr(t->strs + pos, 0, t->sbytes - pos);
		if (z == NULL)
			return tp_diag_at(r->d, TP_EFORMAT, r->path, t->strs_off + pos,
			                  "thread %lld: string %u is not NUL-terminated",
			                  (long long)t->tid, k);
		size_t len = (size_t)(z - (t->strs + pos));
		x->ids[k] = cap_clean_str(r->p, (const char *)t->strs + pos, len);
		pos += (uint32_t)len + 1;
	}
	if (pos != t->sbytes)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, t->strs_off + pos,
		                  "thread %lld: %u bytes after its %u strings", (long long)t->tid,
		                  t->sbytes - pos, t->nstr);
	if (r->drop) /* interned: the profile holds copies */
		tp_map_drop(r->bytes, (size_t)t->strs_off, (size_t)(t->strs_off + t->sbytes));
	return TP_OK;
}

/* The thread's track (x->track), named after the thread. */
static int make_track(struct tctx *x)
{
	struct cap_rd *r = x->r;
	struct tp_profile *p = r->p;
	const struct cap_thr *t = x->t;
	char name[64];
	if (t->name[0])
		snprintf(name, sizeof name, "%s", cap_clean_cstr(p, t->name));
	else
		snprintf(name, sizeof name, "thread %lld", (long long)t->tid);
	x->track = tp_profile_add_track(p, 0, -1, TP_TRACK_THREAD, name, 0);
	if (x->track < 0)
		return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	p->tracks[x->track].tid = t->tid;
	p->tracks[x->track].dropped = t->dropped;
	return TP_OK;
}

/* Handles record q, the thread's record *i (advanced past the continuations it consumes). */
static int thread_record(struct tctx *x, const struct rec *q, uint64_t *i)
{
	struct cap_rd *r = x->r;
	const struct cap_thr *t = x->t;
	int rc = TP_OK;
	struct open_scope o = {q->kind, q->flags, q->name, q->a, q->b, q->ts, q->off, 0, 0, 0, 0};
	switch (q->kind) {
	case TP_CAPFMT_REC_ACT_BEGIN:
	case TP_CAPFMT_REC_STEP_BEGIN:
	case TP_CAPFMT_REC_OP_BEGIN:
	case TP_CAPFMT_REC_RT_BEGIN:
	case TP_CAPFMT_REC_RANGE_BEGIN: {
		void *n = tp_grow(x->stack, sizeof *x->stack, x->depth + 1, &x->cap);
		if (n == NULL)
			return tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
		x->stack = n;
		if (q->kind == TP_CAPFMT_REC_RANGE_BEGIN)
			take_src(t, i, &o);
		x->stack[x->depth++] = o;
		break;
	}
	case TP_CAPFMT_REC_MARK:
		take_src(t, i, &o);
		rc = close_scope(x, &o, q->ts, NULL, NULL);
		break;
	case TP_CAPFMT_REC_ASYNC_BEGIN:
	case TP_CAPFMT_REC_ASYNC_END:
		if (q->kind == TP_CAPFMT_REC_ASYNC_BEGIN)
			take_src(t, i, &o);
		rc = collect_async(x, &o);
		break;
	case TP_CAPFMT_REC_ACT_END:
	case TP_CAPFMT_REC_STEP_END:
	case TP_CAPFMT_REC_OP_END:
	case TP_CAPFMT_REC_RT_END:
	case TP_CAPFMT_REC_RANGE_END:
		if (x->depth == 0 || x->stack[x->depth - 1].kind != q->kind - 1) {
			r->unmatched_ends++;
			break;
		}
		x->depth--;
		rc = close_scope(x, &x->stack[x->depth], q->ts, q, i);
		break;
	case TP_CAPFMT_REC_COUNTER:
		rc = counter_sample(x, q);
		break;
	case TP_CAPFMT_REC_TENSOR:
	case TP_CAPFMT_REC_DIMS:
	case TP_CAPFMT_REC_ATTR:
	case TP_CAPFMT_REC_COST:
	case TP_CAPFMT_REC_SPARSITY:
	case TP_CAPFMT_REC_HW:
	case TP_CAPFMT_REC_SRCLOC:
		r->orphan_details++;
		break;
	default:
		r->unknown_records++;
		break;
	}
	return rc;
}

/* Walks the thread's records; scopes still open when the dump was written end at the dump
 * time (or at the thread's last event when the dump time is unknown). */
static int thread_records(struct tctx *x)
{
	struct cap_rd *r = x->r;
	const struct cap_thr *t = x->t;
	int rc;
	uint64_t last = 0;
	for (uint64_t i = 0; i < t->nrec; i++) {
		struct rec q;
		if (!(i % DROP_EVERY))
			drop_read(r, t, i);
		get_rec(t, i, &q);
		if (timed(q.kind))
			last = q.ts;
		if ((rc = thread_record(x, &q, &i)) != TP_OK)
			return rc;
	}
	uint64_t end_tick = r->tick1 > last ? r->tick1 : last;
	if (r->clock == TP_CAPFMT_CLOCK_MONOTONIC && r->ns1 > last)
		end_tick = r->ns1;
	while (x->depth > 0) {
		x->depth--;
		r->unclosed++;
		if ((rc = close_scope(x, &x->stack[x->depth], end_tick, NULL, NULL)) != TP_OK)
			return rc;
	}
	drop_read(r, t, t->nrec);
	return TP_OK;
}

int cap_read_thread(struct cap_rd *r, const struct cap_thr *t)
{
	struct tp_profile *p = r->p;
	struct tctx x;
	memset(&x, 0, sizeof x);
	x.r = r;
	x.t = t;
	int rc = TP_OK;
	detail_init(&x.dt);
	x.ids = tp_calloc((size_t)t->nstr + 1, sizeof *x.ids);
	x.attr_ids = tp_calloc((size_t)t->nstr + 1, sizeof *x.attr_ids);
	if (x.ids == NULL || x.attr_ids == NULL) {
		rc = tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
		goto out;
	}
	if ((rc = intern_strings(&x)) != TP_OK || (rc = make_track(&x)) != TP_OK)
		goto out;
	p->stats.records_read += t->nrec;
	p->stats.records_dropped += t->dropped;
	rc = thread_records(&x);
out:
	TP_FREE_ALL(x.ctr, x.stack, x.ids, x.attr_ids);
	detail_free(&x.dt);
	return rc;
}
