/*
 * record.c — the recording API of tpuprof.h: the per-event space checks (a begin reserves the
 * slot of its end), the step context, scopes, operators with their details, counters, marks,
 * ranges, async ranges and thread names. Each public function tests the session word inline
 * and calls a never-inlined worker only when capture is on.
 */
#include "capture/capture_int.h"

#include <stdlib.h>
#include <string.h>

static inline void leave(struct cap_thread *t)
{
	atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* The start of a recording call on session word `s`: the thread announces `s` in t->busy,
 * then reads the session word again. finish_session stores 0 into the word, makes every
 * thread of the process pass a full memory barrier (membarrier: tp_cap_quiesce) and then
 * waits while a thread's busy still holds the ending word. So either this second read sees
 * the session over (the event came after its end and is not recorded), or finish_session
 * sees the announcement and waits for leave(): a session's dump holds every event that saw
 * it, and the session's parameters (read by tp_cap_attach) cannot change under a recording
 * call. Without membarrier the thread fences itself. NULL: nothing to record. */
static inline struct cap_thread *enter(uint32_t s)
{
	struct cap_thread *t = tp_cap_tls_thread;
	if (UNLIKELY(t == NULL) && (t = tp_cap_thread_new()) == NULL)
		return NULL;
	atomic_store_explicit(&t->busy, s, memory_order_relaxed);
	if (UNLIKELY(!tp_cap_membarrier))
		TP_CAP_FULL_FENCE();
	else
		atomic_signal_fence(memory_order_seq_cst);
	if (UNLIKELY(atomic_load_explicit(&tp_cap_state, memory_order_acquire) != s ||
	             (atomic_load_explicit(&t->state, memory_order_relaxed) != s &&
	              tp_cap_attach(t, s) != 0))) {
		leave(t);
		return NULL;
	}
	return t;
}

static inline void publish(struct cap_thread *t)
{
	atomic_store_explicit(&t->h->pub, t->n, memory_order_release);
}

static inline void drop(struct cap_thread *t, uint64_t n)
{
	atomic_store_explicit(&t->h->dropped,
	                      atomic_load_explicit(&t->h->dropped, memory_order_relaxed) + n,
	                      memory_order_relaxed);
}

/* Room for a begin and its end. Returns the record or NULL (dropped and counted). */
static inline struct cap_rec *begin_rec(struct cap_thread *t)
{
	if (UNLIKELY(t->dropped_open || t->n + t->reserved + 2 > t->lim) &&
	    (t->dropped_open || !tp_cap_grow_recs(t, 2))) {
		t->dropped_open++;
		drop(t, 1);
		return NULL;
	}
	t->reserved++;
	return &t->recs[t->n];
}

/* The end of a scope: uses the slot its begin reserved; dropped if its begin was. */
static inline struct cap_rec *end_rec(struct cap_thread *t)
{
	if (UNLIKELY(t->dropped_open)) {
		t->dropped_open--;
		drop(t, 1);
		return NULL;
	}
	if (LIKELY(t->reserved)) {
		t->reserved--;
		return &t->recs[t->n];
	}
	/* An end without a begin (misuse): treat as an instant. */
	if (t->n + 1 > t->lim && !tp_cap_grow_recs(t, 1)) {
		drop(t, 1);
		return NULL;
	}
	return &t->recs[t->n];
}

/* Room for k records that reserve nothing. */
static inline int room(struct cap_thread *t, uint32_t k)
{
	return (uint64_t)t->n + t->reserved + k <= t->lim || tp_cap_grow_recs(t, k);
}

/* ---- step context ---- */

static inline void step_ctx(struct cap_thread *t, struct cap_rec *r)
{
	if (t->step_depth > 0 && t->step_cap > 0) {
		/* Deeper than the stack could grow: the innermost level it holds. */
		int i = (t->step_depth < t->step_cap ? t->step_depth : t->step_cap) - 1;
		r->a = (uint64_t)t->steps[i];
		r->flags = (uint8_t)(TP_CAPFMT_F_STEP | (t->step_warm[i] ? TP_CAPFMT_F_WARMUP : 0));
		return;
	}
	uint64_t w = atomic_load_explicit(&tp_cap_step_word, memory_order_relaxed);
	if (w & 1) {
		r->a = (uint64_t)((int64_t)w >> 2);
		r->flags = (uint8_t)(TP_CAPFMT_F_STEP | ((w & 2) ? TP_CAPFMT_F_WARMUP : 0));
	} else {
		r->a = 0;
		r->flags = 0;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Recording API                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* The public functions test the session word inline and call these (never inlined) workers
 * only when capture is on, so the off path is a load, a test and a return. */
#define OFF_RETURN(s)                                                                              \
	uint32_t s = atomic_load_explicit(&tp_cap_state, memory_order_relaxed);                    \
	if (LIKELY(s == 0))                                                                        \
	return
/* Every worker starts with ENTER_OR_RETURN and leaves (leave(t)) on each way out. */
#define ENTER_OR_RETURN(s, t)                                                                      \
	struct cap_thread *t = enter(s);                                                           \
	if (UNLIKELY(t == NULL))                                                                   \
	return
/* The record a begin or end writes; none when it was dropped (and counted). */
#define REC_OR_LEAVE(t, r, get)                                                                    \
	struct cap_rec *r = (get);                                                                 \
	if (r == NULL) {                                                                           \
		leave(t);                                                                          \
		return;                                                                            \
	}

/* The fields of an end record other than its name, which starts as 0 (no name). */
static inline void end_fields(struct cap_rec *r, uint64_t ts, uint8_t kind, uint64_t a)
{
	r->ts = ts;
	r->kind = kind;
	r->flags = 0;
	r->aux = 0;
	r->name = 0;
	r->a = a;
	r->b = 0;
}

static NOINLINE void scope_begin(uint32_t s, uint8_t kind, const char *name, int64_t step,
                                 const char *meta, int with_ctx)
{
	ENTER_OR_RETURN(s, t);
	REC_OR_LEAVE(t, r, begin_rec(t))
	int mode = mode_of(s);
	r->kind = kind;
	r->aux = 0;
	r->flags = 0;
	r->a = (uint64_t)step;
	r->b = 0;
	if (with_ctx)
		step_ctx(t, r);
	if (mode >= TPUPROF_MODE_CONDENSED) {
		r->name = intern_ptr(t, name);
		if (meta)
			r->b = intern_text(t, meta);
	} else {
		r->name = 0;
	}
	r->ts = now_ticks();
	t->n++;
	publish(t);
	leave(t);
}

static NOINLINE void scope_end(uint32_t s, uint64_t ts, uint8_t kind, const char *name,
                               int64_t step, const char *meta)
{
	ENTER_OR_RETURN(s, t);
	REC_OR_LEAVE(t, r, end_rec(t))
	end_fields(r, ts, kind, (uint64_t)step);
	if (mode_of(s) >= TPUPROF_MODE_CONDENSED) {
		r->name = intern_ptr(t, name);
		if (meta)
			r->b = intern_text(t, meta);
	}
	t->n++;
	publish(t);
	leave(t);
}

void tpuprof_activity_begin(const char *name, int64_t step, const char *meta)
{
	OFF_RETURN(s);
	scope_begin(s, TP_CAPFMT_REC_ACT_BEGIN, name, step, meta, 0);
}

void tpuprof_activity_end(const char *name, int64_t step, const char *meta)
{
	OFF_RETURN(s);
	scope_end(s, now_ticks(), TP_CAPFMT_REC_ACT_END, name, step, meta);
}

static NOINLINE void step_begin(uint32_t s, const char *graph, int64_t step, int warmup)
{
	ENTER_OR_RETURN(s, t);
	/* The step context is kept even when the record itself is dropped. */
	if (t->step_depth >= t->step_cap && t->step_cap < STEP_MAX) {
		int nc = t->step_cap ? t->step_cap * 2 : 16;
		int64_t *ns = realloc(t->steps, (size_t)nc * sizeof *ns);
		if (ns)
			t->steps = ns;
		uint8_t *nw = ns ? realloc(t->step_warm, (size_t)nc) : NULL;
		if (nw) {
			t->step_warm = nw;
			t->step_cap = nc;
		}
	}
	if (t->step_depth < t->step_cap) {
		t->steps[t->step_depth] = step;
		t->step_warm[t->step_depth] = warmup != 0;
	}
	if (t->step_depth < INT32_MAX)
		t->step_depth++;
	uint64_t w = ((uint64_t)step << 2) | (warmup ? 2u : 0u) | 1u;
	atomic_store_explicit(&tp_cap_step_word, w, memory_order_relaxed);
	t->step_word = w;
	REC_OR_LEAVE(t, r, begin_rec(t))
	r->kind = TP_CAPFMT_REC_STEP_BEGIN;
	r->flags = warmup ? TP_CAPFMT_F_WARMUP : 0;
	r->aux = 0;
	r->a = (uint64_t)step;
	r->b = 0;
	r->name = mode_of(s) >= TPUPROF_MODE_CONDENSED ? intern_ptr(t, graph) : 0;
	r->ts = now_ticks();
	t->n++;
	publish(t);
	leave(t);
}

void tpuprof_step_begin(const char *graph, int64_t step, int warmup)
{
	OFF_RETURN(s);
	step_begin(s, graph, step, warmup);
}

static NOINLINE void step_end(uint32_t s, uint64_t ts, const char *graph, int64_t step)
{
	ENTER_OR_RETURN(s, t);
	if (t->step_depth > 0)
		t->step_depth--;
	if (t->step_word) {
		uint64_t w = t->step_word;
		/* Clear the process-wide step only if it is still ours. */
		atomic_compare_exchange_strong(&tp_cap_step_word, &w, 0);
		t->step_word = 0;
	}
	REC_OR_LEAVE(t, r, end_rec(t))
	end_fields(r, ts, TP_CAPFMT_REC_STEP_END, (uint64_t)step);
	r->name = mode_of(s) >= TPUPROF_MODE_CONDENSED ? intern_ptr(t, graph) : 0;
	t->n++;
	publish(t);
	leave(t);
}

void tpuprof_step_end(const char *graph, int64_t step)
{
	OFF_RETURN(s);
	step_end(s, now_ticks(), graph, step);
}

static NOINLINE void op_begin(uint32_t s, const struct tpuprof_op *op)
{
	ENTER_OR_RETURN(s, t);
	REC_OR_LEAVE(t, r, begin_rec(t))
	r->kind = TP_CAPFMT_REC_OP_BEGIN;
	r->aux = 0;
	r->b = 0;
	step_ctx(t, r);
	r->name = 0;
	if (mode_of(s) >= TPUPROF_MODE_CONDENSED && op) {
		const uint32_t *id = tp_cap_intern_op(t, op);
		r->name = id[0];
		r->b = (uint64_t)id[1] | (uint64_t)id[2] << 32;
	}
	if (UNLIKELY(t->hw_fd >= 0)) {
		if (t->hw_depth < HW_STACK && tp_cap_hw_read(t, t->hw_stack[t->hw_depth]) != 0)
			t->hw_stack[t->hw_depth][0] = UINT64_MAX;
		t->hw_depth++;
	}
	r->ts = now_ticks();
	t->n++;
	publish(t);
	leave(t);
}

void tpuprof_op_begin(const struct tpuprof_op *op)
{
	OFF_RETURN(s);
	op_begin(s, op);
}

static uint32_t dims_records(int ndim)
{
	if (ndim < 0)
		ndim = 0;
	if (ndim > TP_CAPFMT_MAX_DIMS)
		ndim = TP_CAPFMT_MAX_DIMS;
	return (uint32_t)(ndim + 1) / 2;
}

static void put_tensor(struct cap_thread *t, int role, int idx, const struct tpuprof_tensor *x,
                       const int64_t *shape, int ndim)
{
	if (ndim < 0 || shape == NULL)
		ndim = 0;
	if (ndim > TP_CAPFMT_MAX_DIMS)
		ndim = TP_CAPFMT_MAX_DIMS;
	struct cap_rec *r = &t->recs[t->n++];
	r->ts = 0;
	r->kind = TP_CAPFMT_REC_TENSOR;
	r->flags = 0;
	r->aux = (uint16_t)(role << 8 | (idx & 0xff));
	r->name = x ? intern_text(t, x->name) : 0;
	r->a = x ? intern_text(t, x->dtype) : 0;
	r->b = (uint64_t)ndim;
	for (int i = 0; i < ndim; i += 2) {
		r = &t->recs[t->n++];
		memset(r, 0, sizeof *r);
		r->kind = TP_CAPFMT_REC_DIMS;
		r->aux = (uint16_t)(ndim - i >= 2 ? 2 : 1);
		r->a = (uint64_t)shape[i];
		r->b = ndim - i >= 2 ? (uint64_t)shape[i + 1] : 0;
	}
}

/* The caller's view of a growable struct (tpuprof.h, "Growing without breaking the ABI"): `n`
 * bytes of it are readable. FIELD_IN(T, f, n): field f of struct T lies wholly in n bytes. */
#define FIELD_IN(T, f, n) (offsetof(T, f) + sizeof(((T *)0)->f) <= (size_t)(n))

/* Copies the part of a caller's tensor that `esize` covers into *x (the rest reads as absent). */
static void tensor_view(struct tpuprof_tensor *x, const struct tpuprof_tensor *src, size_t esize)
{
	if (esize == sizeof *x) { /* the caller's layout is ours: a plain copy */
		*x = *src;
		return;
	}
	memset(x, 0, sizeof *x);
	memcpy(x, src, esize < sizeof *x ? esize : sizeof *x);
	if (!FIELD_IN(struct tpuprof_tensor, ndim, esize) ||
	    !FIELD_IN(struct tpuprof_tensor, shape, esize)) {
		x->ndim = 0;
		x->shape = NULL;
	}
	if (!FIELD_IN(struct tpuprof_tensor, dtype, esize))
		x->dtype = NULL;
	if (!FIELD_IN(struct tpuprof_tensor, name, esize))
		x->name = NULL;
}

static const struct tpuprof_tensor *tensor_at(const struct tpuprof_tensor *base, size_t esize,
                                              int i)
{
	return (const struct tpuprof_tensor *)(const void *)((const char *)base +
	                                                     (size_t)i * esize);
}

/* Copies the part of the caller's detail that its `size` covers into *v; fields it does not
 * cover are absent (NULL / 0 / sparsity unknown). Returns 0 when nothing is readable. */
static int detail_view(struct tpuprof_op_detail *v, const struct tpuprof_op_detail *d)
{
	typedef struct tpuprof_op_detail D;
	memset(v, 0, sizeof *v);
	v->weight_sparsity = -1;
	if (d == NULL)
		return 0;
	size_t n = d->size;
	if (n == sizeof *v) { /* the caller compiled this header: every field is there */
		*v = *d;
		if (!v->tensor_size) {
			v->inputs = v->outputs = NULL;
			v->num_inputs = v->num_outputs = 0;
		}
		if (!v->attr_size) {
			v->attrs = NULL;
			v->num_attrs = 0;
		}
		return 1;
	}
	if (!FIELD_IN(D, attr_size, n))
		return 0;
	if (n > sizeof *v)
		n = sizeof *v;
		/* Field by field, so a field the size cuts in the middle stays absent. */
#define TAKE(f)                                                                                    \
	do {                                                                                       \
		if (FIELD_IN(D, f, n))                                                             \
			v->f = d->f;                                                               \
	} while (0)
	TAKE(size);
	TAKE(tensor_size);
	TAKE(attr_size);
	if (FIELD_IN(D, num_inputs, n) && d->tensor_size) {
		v->inputs = d->inputs;
		v->num_inputs = d->num_inputs;
	}
	if (FIELD_IN(D, num_outputs, n) && d->tensor_size) {
		v->outputs = d->outputs;
		v->num_outputs = d->num_outputs;
	}
	if (FIELD_IN(D, weight_ndim, n)) {
		v->weight_shape = d->weight_shape;
		v->weight_ndim = d->weight_ndim;
	}
	TAKE(weight_sparsity);
	if (FIELD_IN(D, num_attrs, n) && d->attr_size) {
		v->attrs = d->attrs;
		v->num_attrs = d->num_attrs;
	}
	TAKE(bytes);
	TAKE(flops);
#undef TAKE
	return 1;
}

static void put_detail(struct cap_thread *t, const struct tpuprof_op_detail *caller,
                       const uint64_t *hw_delta, uint32_t hw_n)
{
	uint32_t need = hw_n;
	int ni = 0, no = 0, na = 0;
	struct tpuprof_op_detail view;
	const struct tpuprof_op_detail *d = detail_view(&view, caller) ? &view : NULL;
	size_t ts = d ? d->tensor_size : 0, as = d ? d->attr_size : 0;
	struct tpuprof_tensor x;
	if (d) {
		ni = d->inputs && d->num_inputs > 0 ? d->num_inputs : 0;
		no = d->outputs && d->num_outputs > 0 ? d->num_outputs : 0;
		na = d->attrs && d->num_attrs > 0 && FIELD_IN(struct tpuprof_attr, value, as)
		         ? d->num_attrs
		         : 0;
		if (ni > 255)
			ni = 255;
		if (no > 255)
			no = 255;
		for (int i = 0; i < ni; i++) {
			tensor_view(&x, tensor_at(d->inputs, ts, i), ts);
			need += 1 + dims_records(x.ndim);
		}
		for (int i = 0; i < no; i++) {
			tensor_view(&x, tensor_at(d->outputs, ts, i), ts);
			need += 1 + dims_records(x.ndim);
		}
		if (d->weight_shape)
			need += 1 + dims_records(d->weight_ndim);
		need += (uint32_t)na + (d->bytes || d->flops ? 1 : 0) +
		        (d->weight_sparsity >= 0 && d->weight_shape ? 1 : 0);
	}
	if (need == 0)
		return;
	if (!room(t, need)) {
		drop(t, need);
		return;
	}
	if (d) {
		for (int i = 0; i < ni; i++) {
			tensor_view(&x, tensor_at(d->inputs, ts, i), ts);
			put_tensor(t, TP_CAPFMT_ROLE_INPUT, i, &x, x.shape, x.ndim);
		}
		for (int i = 0; i < no; i++) {
			tensor_view(&x, tensor_at(d->outputs, ts, i), ts);
			put_tensor(t, TP_CAPFMT_ROLE_OUTPUT, i, &x, x.shape, x.ndim);
		}
		if (d->weight_shape)
			put_tensor(t, TP_CAPFMT_ROLE_WEIGHT, 0, NULL, d->weight_shape,
			           d->weight_ndim);
		for (int i = 0; i < na; i++) {
			const struct tpuprof_attr *at =
			    (const struct tpuprof_attr *)(const void *)((const char *)d->attrs +
			                                                (size_t)i * as);
			struct cap_rec *r = &t->recs[t->n++];
			memset(r, 0, sizeof *r);
			r->kind = TP_CAPFMT_REC_ATTR;
			r->name = intern_text(t, at->key);
			r->a = intern_text(t, at->value);
		}
		struct cap_rec *r;
		if (d->bytes || d->flops) { /* 0 = unknown: never reported as a measured 0 */
			r = &t->recs[t->n++];
			memset(r, 0, sizeof *r);
			r->kind = TP_CAPFMT_REC_COST;
			r->a = d->bytes;
			r->b = d->flops;
		}
		if (d->weight_sparsity >= 0 && d->weight_shape) {
			r = &t->recs[t->n++];
			memset(r, 0, sizeof *r);
			r->kind = TP_CAPFMT_REC_SPARSITY;
			memcpy(&r->a, &d->weight_sparsity, sizeof r->a);
		}
	}
	for (uint32_t i = 0; i < hw_n; i++) {
		struct cap_rec *r = &t->recs[t->n++];
		memset(r, 0, sizeof *r);
		r->kind = TP_CAPFMT_REC_HW;
		r->aux = (uint16_t)i;
		r->a = hw_delta[i];
	}
}

static NOINLINE void op_end(uint32_t s, uint64_t ts, const struct tpuprof_op *op,
                            const struct tpuprof_op_detail *detail)
{
	ENTER_OR_RETURN(s, t);
	uint64_t delta[TP_CAPFMT_MAX_HW];
	uint32_t hw_n = 0;
	if (UNLIKELY(t->hw_fd >= 0) && t->hw_depth > 0) {
		t->hw_depth--;
		uint64_t now[TP_CAPFMT_MAX_HW];
		if (t->hw_depth < HW_STACK && t->hw_stack[t->hw_depth][0] != UINT64_MAX &&
		    tp_cap_hw_read(t, now) == 0) {
			for (uint32_t i = 0; i < t->hw_n; i++) {
				uint64_t d = now[i] - t->hw_stack[t->hw_depth][i];
				delta[i] = d > t->hw_self[i] ? d - t->hw_self[i] : 0;
			}
			hw_n = t->hw_n;
		}
	}
	REC_OR_LEAVE(t, r, end_rec(t))
	int mode = mode_of(s);
	end_fields(r, ts, TP_CAPFMT_REC_OP_END, 0);
	if (mode >= TPUPROF_MODE_CONDENSED && op) {
		/* The slice takes its name from the begin record; the end's name only helps a
		 * human reading raw records, so the descriptor's cached id is taken unverified. */
		struct cache_ent *home = t->cache ? home_of(t, ptr_hash(op)) : NULL;
		r->name = home && home->tag == 2 && home->key == (const void *)op
		              ? home->id[0]
		              : tp_cap_intern_op(t, op)[0];
	}
	t->n++;
	if (mode >= TPUPROF_MODE_DETAILED)
		put_detail(t, detail, delta, hw_n);
	publish(t);
	leave(t);
}

void tpuprof_op_end(const struct tpuprof_op *op, const struct tpuprof_op_detail *detail)
{
	OFF_RETURN(s);
	op_end(s, now_ticks(), op, detail);
}

void tpuprof_runtime_begin(const char *name)
{
	OFF_RETURN(s);
	scope_begin(s, TP_CAPFMT_REC_RT_BEGIN, name, 0, NULL, 1);
}

void tpuprof_runtime_end(const char *name)
{
	OFF_RETURN(s);
	scope_end(s, now_ticks(), TP_CAPFMT_REC_RT_END, name, 0, NULL);
}

void tpuprof_counter(const char *name, double value)
{
	OFF_RETURN(s);
	if (mode_of(s) < TPUPROF_MODE_CONDENSED) /* a sample needs its name */
		return;
	ENTER_OR_RETURN(s, t);
	if (!room(t, 1)) {
		drop(t, 1);
		leave(t);
		return;
	}
	struct cap_rec *r = &t->recs[t->n];
	r->kind = TP_CAPFMT_REC_COUNTER;
	r->flags = 0;
	r->aux = 0;
	r->name = intern_ptr(t, name);
	memcpy(&r->a, &value, sizeof r->a);
	r->b = 0;
	r->ts = now_ticks();
	t->n++;
	publish(t);
	leave(t);
}

/* ---- marks, ranges, async ranges, thread names ---- */

/* The fields of a caller's attribute struct that its `size` covers (NULL/0 otherwise). */
struct attr_view {
	uint32_t color;
	const char *category, *file, *function;
	int line;
};

static void attr_read(const struct tpuprof_event_attr *a, struct attr_view *v)
{
	memset(v, 0, sizeof *v);
	if (a == NULL)
		return;
	size_t n = a->size;
#define HAS(f) (n >= offsetof(struct tpuprof_event_attr, f) + sizeof a->f)
	if (HAS(color))
		v->color = a->color;
	if (HAS(category))
		v->category = a->category;
	if (HAS(file))
		v->file = a->file;
	if (HAS(line))
		v->line = a->line;
	if (HAS(function))
		v->function = a->function;
#undef HAS
}

static uint64_t attr_style(struct cap_thread *t, int mode, const struct attr_view *v)
{
	if (mode < TPUPROF_MODE_CONDENSED)
		return 0;
	return (uint64_t)intern_text(t, v->category) | (uint64_t)v->color << 32;
}

/* The SRCLOC continuation after t->recs[t->n - 1] (mode 2, when a location was given). */
static void put_srcloc(struct cap_thread *t, int mode, const struct attr_view *v)
{
	if (mode < TPUPROF_MODE_DETAILED || (v->file == NULL && v->function == NULL))
		return;
	if (!room(t, 1)) {
		drop(t, 1);
		return;
	}
	struct cap_rec *r = &t->recs[t->n];
	memset(r, 0, sizeof *r);
	r->kind = TP_CAPFMT_REC_SRCLOC;
	r->name = intern_text(t, v->file);
	r->a = (uint64_t)(int64_t)v->line;
	r->b = intern_text(t, v->function);
	t->n++;
}

static NOINLINE void mark_rec(uint32_t s, uint8_t kind, const char *name, uint64_t a,
                              const struct tpuprof_event_attr *attr)
{
	ENTER_OR_RETURN(s, t);
	if (!room(t, 1)) {
		drop(t, 1);
		leave(t);
		return;
	}
	int mode = mode_of(s);
	struct attr_view v;
	attr_read(attr, &v);
	struct cap_rec *r = &t->recs[t->n];
	r->kind = kind;
	r->aux = 0;
	r->flags = 0;
	r->a = a;
	if (kind == TP_CAPFMT_REC_MARK)
		step_ctx(t, r);
	r->name = mode >= TPUPROF_MODE_CONDENSED ? intern_text(t, name) : 0;
	r->b = attr_style(t, mode, &v);
	r->ts = now_ticks();
	t->n++;
	if (kind != TP_CAPFMT_REC_ASYNC_END)
		put_srcloc(t, mode, &v);
	publish(t);
	leave(t);
}

void tpuprof_mark(const char *name, const struct tpuprof_event_attr *attr)
{
	OFF_RETURN(s);
	mark_rec(s, TP_CAPFMT_REC_MARK, name, 0, attr);
}

void tpuprof_async_begin(const char *name, uint64_t id, const struct tpuprof_event_attr *attr)
{
	OFF_RETURN(s);
	mark_rec(s, TP_CAPFMT_REC_ASYNC_BEGIN, name, id, attr);
}

void tpuprof_async_end(const char *name, uint64_t id)
{
	OFF_RETURN(s);
	mark_rec(s, TP_CAPFMT_REC_ASYNC_END, name, id, NULL);
}

static NOINLINE void range_begin(uint32_t s, const char *name,
                                 const struct tpuprof_event_attr *attr)
{
	ENTER_OR_RETURN(s, t);
	REC_OR_LEAVE(t, r, begin_rec(t))
	int mode = mode_of(s);
	struct attr_view v;
	attr_read(attr, &v);
	r->kind = TP_CAPFMT_REC_RANGE_BEGIN;
	r->aux = 0;
	step_ctx(t, r);
	r->name = mode >= TPUPROF_MODE_CONDENSED ? intern_text(t, name) : 0;
	r->b = attr_style(t, mode, &v);
	r->ts = now_ticks();
	t->n++;
	put_srcloc(t, mode, &v);
	publish(t);
	leave(t);
}

void tpuprof_range_begin(const char *name, const struct tpuprof_event_attr *attr)
{
	OFF_RETURN(s);
	range_begin(s, name, attr);
}

void tpuprof_range_end(const char *name)
{
	OFF_RETURN(s);
	scope_end(s, now_ticks(), TP_CAPFMT_REC_RANGE_END, name, 0, NULL);
}

void tpuprof_thread_name(const char *name)
{
	char buf[MAX_STR_LEN + 1];
	int same;
	memset(tp_cap_tls_name, 0, sizeof tp_cap_tls_name);
	if (name == NULL)
		return;
	size_t len = tp_cap_clean_text(name, buf, &same);
	/* Keep whole characters within 15 bytes. */
	size_t keep = 0;
	while (keep < len) {
		size_t k = tp_cap_utf8_seq((const unsigned char *)buf + keep, len - keep);
		if (k == 0 || keep + k > TP_CAPFMT_COMM_SIZE - 1)
			break;
		keep += k;
	}
	memcpy(tp_cap_tls_name, buf, keep);
	struct cap_thread *t = tp_cap_tls_thread;
	if (t && t->h && atomic_load_explicit(&t->state, memory_order_relaxed) != 0)
		memcpy(t->h->name, tp_cap_tls_name, sizeof tp_cap_tls_name);
}

#define VSTR_(x) #x
#define VSTR(x) VSTR_(x)
const char *tpuprof_version(void)
{
	return VSTR(TPUPROF_VERSION_MAJOR) "." VSTR(TPUPROF_VERSION_MINOR) "." VSTR(
	    TPUPROF_VERSION_PATCH);
}
