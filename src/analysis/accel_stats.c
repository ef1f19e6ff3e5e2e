/*
 * accel_stats.c — the accelerator analysis' figures (definitions in accel.h): device work
 * per kind with its busy union and communication/compute overlap, per step and in all;
 * launch counts, launch-to-start delays and queue depth; the medians over the steps; one row
 * per accelerator device with the imbalance between them; the kernels ranked by time. Owns,
 * for one call, its index and event arrays.
 */
#include "analysis/accel_int.h"

#include <stdlib.h>
#include <string.h>

static int i64_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

void tp_accel_median(int64_t *v, size_t n, int64_t *med, int64_t *spread)
{
	*med = *spread = 0;
	if (!n)
		return;
	qsort(v, n, sizeof *v, i64_cmp);
	*med = n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
	*spread = (v[n - 1] - v[0]) / 2;
}

/* ---- Work over a set of items --------------------------------------------------------------- */

/* The length of the union of the intervals of items ix[0..n) (sorted by start) whose kind is
 * in `mask` (bit 1 << kind). */
static int64_t union_len(const struct acc_item *it, const uint32_t *ix, size_t n, unsigned mask)
{
	int64_t total = 0, cs = 0, ce = 0;
	int open = 0;
	for (size_t i = 0; i < n; i++) {
		const struct acc_item *x = &it[ix[i]];
		if (!(mask >> x->kind & 1))
			continue;
		if (!open || x->start > ce) {
			total += open ? ce - cs : 0;
			cs = x->start;
			ce = x->end;
			open = 1;
		} else if (x->end > ce) {
			ce = x->end;
		}
	}
	return total + (open ? ce - cs : 0);
}

/* The work of items ix[0..n) (sorted by start). */
static void work_of(const struct acc_item *it, const uint32_t *ix, size_t n,
                    struct tp_accel_work *w)
{
	memset(w, 0, sizeof *w);
	for (size_t i = 0; i < n; i++) {
		const struct acc_item *x = &it[ix[i]];
		w->count[x->kind]++;
		w->ns[x->kind] += x->end - x->start;
		w->device_ns += x->end - x->start;
	}
	w->busy_ns = union_len(it, ix, n, ~0u);
	if (w->count[TP_ACC_COMM] && w->count[TP_ACC_COMPUTE]) {
		unsigned comp = 1u << TP_ACC_COMPUTE, comm = 1u << TP_ACC_COMM;
		w->comm_overlap_ns = union_len(it, ix, n, comp) + union_len(it, ix, n, comm) -
		                     union_len(it, ix, n, comp | comm);
	}
}

/* ---- Queue depth and delays ------------------------------------------------------------------ */

struct qev {
	int64_t t;
	int32_t d; /* +1 launched, -1 finished */
};

static int qev_cmp(const void *x, const void *y)
{
	const struct qev *a = x, *b = y;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->d < b->d ? -1 : a->d > b->d; /* a finish before a launch at the same time */
}

/* What the queue of the linked items ix[0..n) was over [lo, hi): depth = launched, not yet
 * finished. *mean time-weighted, *max; with bk, the maximum per window of nb equal ones.
 * TP_OK / TP_ENOMEM. */
static int queue_of(const struct acc_ctx *c, const uint32_t *ix, size_t n, int64_t lo, int64_t hi,
                    double *mean, uint32_t *max, uint16_t *bk, size_t nb)
{
	*mean = 0;
	*max = 0;
	struct qev *ev = tp_malloc((2 * n + 1) * sizeof *ev);
	if (!ev)
		return TP_ENOMEM;
	size_t ne = 0;
	for (size_t i = 0; i < n; i++) {
		const struct acc_item *x = &c->items[ix[i]];
		if (x->launch < 0 || c->launches[x->launch].start > x->end)
			continue;
		ev[ne++] = (struct qev){c->launches[x->launch].start, 1};
		ev[ne++] = (struct qev){x->end, -1};
	}
	qsort(ev, ne, sizeof *ev, qev_cmp);
	double area = 0, width = (double)(hi - lo);
	int64_t depth = 0;
	for (size_t i = 0; i < ne && hi > lo; i++) {
		depth += ev[i].d;
		int64_t a = ev[i].t < lo ? lo : ev[i].t;
		int64_t b = i + 1 < ne ? ev[i + 1].t : hi;
		if (b > hi)
			b = hi;
		if (b <= a || depth <= 0)
			continue;
		area += (double)depth * (double)(b - a);
		if ((uint64_t)depth > *max)
			*max = (uint32_t)(depth > UINT32_MAX ? UINT32_MAX : depth);
		if (!bk)
			continue;
		size_t k0 = (size_t)((double)(a - lo) * (double)nb / width);
		size_t k1 = (size_t)((double)(b - 1 - lo) * (double)nb / width);
		for (size_t k = k0; k <= k1 && k < nb; k++)
			if ((uint64_t)depth > bk[k])
				bk[k] = (uint16_t)(depth > UINT16_MAX ? UINT16_MAX : depth);
	}
	*mean = width > 0 ? area / width : 0;
	tp_free(ev);
	return TP_OK;
}

/* Launch-to-start delays of the linked items ix[0..n) into d (room for n); their number. */
static size_t delays_of(const struct acc_ctx *c, const uint32_t *ix, size_t n, int64_t *d)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct acc_item *x = &c->items[ix[i]];
		if (x->launch >= 0)
			d[k++] = x->start - c->launches[x->launch].start;
	}
	return k;
}

/* ---- Whole trace, steps, devices ------------------------------------------------------------- */

static int by_start(const void *ctx, uint32_t x, uint32_t y)
{
	const struct acc_item *it = ctx;
	return it[x].start < it[y].start;
}

static int by_step(const void *ctx, uint32_t x, uint32_t y)
{
	const struct acc_item *it = ctx;
	return it[x].step != it[y].step ? it[x].step < it[y].step : it[x].start < it[y].start;
}

/* The whole-trace figures from ix (every item, sorted by start); d: scratch for the delays. */
static int whole(struct acc_ctx *c, const uint32_t *ix, int64_t *d)
{
	struct tp_accel *a = c->a;
	size_t n = c->nitems;
	a->begin_ns = c->items[ix[0]].start;
	a->end_ns = a->begin_ns;
	for (size_t i = 0; i < n; i++)
		if (c->items[i].end > a->end_ns)
			a->end_ns = c->items[i].end;
	work_of(c->items, ix, n, &a->total);
	for (size_t i = 0; i < c->nlaunches; i++)
		if (c->launches[i].used) {
			a->launches++;
			a->launch_ns += c->launches[i].end - c->launches[i].start;
		}
	size_t nd = delays_of(c, ix, n, d);
	a->linked = nd;
	if (nd) {
		qsort(d, nd, sizeof *d, i64_cmp);
		a->delay_median_ns =
		    nd % 2 ? d[nd / 2] : d[nd / 2 - 1] + (d[nd / 2] - d[nd / 2 - 1]) / 2;
		a->delay_p90_ns = d[(nd - 1) * 9 / 10];
		a->delay_max_ns = d[nd - 1];
		a->queue_buckets = TP_ACCEL_QUEUE_BUCKETS;
	}
	return queue_of(c, ix, n, a->begin_ns, a->end_ns, &a->queue_mean, &a->queue_max,
	                nd ? a->queue : NULL, TP_ACCEL_QUEUE_BUCKETS);
}

/* Step s's figures from its items ix[0..n) (sorted by start); d: scratch for the delays. */
static int one_step(struct acc_ctx *c, struct tp_accel_step *s, const uint32_t *ix, size_t n,
                    int64_t *d)
{
	work_of(c->items, ix, n, &s->w);
	s->idle_ns = s->dur_ns > s->w.busy_ns ? s->dur_ns - s->w.busy_ns : 0;
	size_t nd = delays_of(c, ix, n, d);
	int64_t spread;
	tp_accel_median(d, nd, &s->delay_median_ns, &spread);
	s->delay_max_ns = nd ? d[nd - 1] : 0;
	return queue_of(c, ix, n, s->start_ns, s->start_ns + s->dur_ns, &s->queue_mean,
	                &s->queue_max, NULL, 0);
}

/* Every step's figures (ix: every item, sorted here by (step, start)), and the medians. */
static int steps(struct acc_ctx *c, uint32_t *ix, uint32_t *tmp, int64_t *d)
{
	struct tp_accel *a = c->a;
	for (size_t i = 0; i < c->nlaunches; i++) {
		const struct acc_launch *l = &c->launches[i];
		if (l->used && l->step >= 0) {
			a->steps[l->step].launches++;
			a->steps[l->step].launch_ns += l->end - l->start;
		}
	}
	tp_sort_index(ix, tmp, c->nitems, by_step, c->items);
	size_t i = 0;
	while (i < c->nitems && c->items[ix[i]].step < 0)
		i++;
	for (size_t s = 0; s < a->nsteps; s++) {
		size_t j = i;
		while (j < c->nitems && c->items[ix[j]].step == (int32_t)s)
			j++;
		if (one_step(c, &a->steps[s], ix + i, j - i, d))
			return TP_ENOMEM;
		i = j;
	}
	size_t n = a->nsteps;
	int64_t sp;
	for (size_t k = 0; k < n; k++)
		d[k] = a->steps[k].dur_ns;
	tp_accel_median(d, n, &a->step_median_ns, &a->step_spread_ns);
	for (size_t k = 0; k < n; k++)
		d[k] = a->steps[k].w.device_ns;
	tp_accel_median(d, n, &a->device_median_ns, &a->device_spread_ns);
	for (size_t k = 0; k < n; k++)
		d[k] = a->steps[k].w.busy_ns;
	tp_accel_median(d, n, &a->busy_median_ns, &sp);
	/* The idle share in parts per million, so the median of integers serves. */
	for (size_t k = 0; k < n; k++)
		d[k] =
		    a->steps[k].dur_ns > 0
		        ? (int64_t)((double)a->steps[k].idle_ns * 1e6 / (double)a->steps[k].dur_ns)
		        : 0;
	int64_t ppm;
	tp_accel_median(d, n, &ppm, &sp);
	a->idle_share = (double)ppm / 1e6;
	return TP_OK;
}

/* Without steps the device span stands for one step. */
static void no_steps(struct tp_accel *a)
{
	a->step_median_ns = a->end_ns - a->begin_ns;
	a->device_median_ns = a->total.device_ns;
	a->busy_median_ns = a->total.busy_ns;
	a->idle_share =
	    a->step_median_ns > 0 ? 1.0 - (double)a->total.busy_ns / (double)a->step_median_ns : 0;
}

/* One row per accelerator device (ix: every item sorted by start), their median device time
 * per step (over the steps with work on the device), and the imbalance between them. */
static int ranks(struct acc_ctx *c, const uint32_t *ix, uint32_t *sub, int64_t *d)
{
	struct tp_accel *a = c->a;
	const struct tp_profile *p = c->p;
	for (size_t dev = 0; dev < p->num_devices; dev++) {
		size_t n = 0;
		for (size_t i = 0; i < c->nitems; i++)
			if (c->items[ix[i]].device == (int32_t)dev)
				sub[n++] = ix[i];
		if (!n)
			continue;
		if (!a->ranks && !(a->ranks = tp_calloc(p->num_devices, sizeof *a->ranks)))
			return TP_ENOMEM;
		struct tp_accel_rank *r = &a->ranks[a->nranks++];
		r->device = (int32_t)dev;
		r->rank = -1;
		work_of(c->items, sub, n, &r->w);
		memset(d, 0, (a->nsteps ? a->nsteps : 1) * sizeof *d);
		for (size_t i = 0; i < n; i++)
			if (c->items[sub[i]].step >= 0)
				d[c->items[sub[i]].step] +=
				    c->items[sub[i]].end - c->items[sub[i]].start;
		/* Over the steps that launched work on this device (another rank's steps launch
		 * none). */
		size_t m = 0;
		for (size_t k = 0; k < a->nsteps; k++)
			if (d[k])
				d[m++] = d[k];
		int64_t sp;
		tp_accel_median(d, m, &r->step_device_ns, &sp);
	}
	const char *rk = tp_profile_get_meta(p, TP_META_RANK);
	int64_t v;
	if (a->nranks == 1 && rk && tp_parse_i64(rk, strlen(rk), &v) == 0)
		a->ranks[0].rank = v;
	if (a->nranks < 2)
		return TP_OK;
	double sum = 0, max = 0;
	for (size_t i = 0; i < a->nranks; i++) {
		double x =
		    (double)(a->nsteps ? a->ranks[i].step_device_ns : a->ranks[i].w.device_ns);
		sum += x;
		max = x > max ? x : max;
	}
	a->imbalance = sum > 0 ? max / (sum / (double)a->nranks) - 1.0 : 0;
	return TP_OK;
}

/* ---- Kernels by time ------------------------------------------------------------------------ */

static size_t row_hash(uint32_t name, uint8_t kind)
{
	uint64_t h = ((uint64_t)name << 8 | kind) * UINT64_C(0x9E3779B97F4A7C15);
	return (size_t)(h ^ h >> 29);
}

static size_t row_hash_at(const void *ctx, size_t i)
{
	const struct tp_accel_row *r = &((const struct tp_accel_row *)ctx)[i];
	return row_hash(r->name, r->kind);
}

struct tp_accel_row *tp_accel_row_get(struct rowmap *m, uint32_t name, uint8_t kind)
{
	if (tp_ixmap_reserve(&m->ix, m->n, row_hash_at, m->v))
		return NULL;
	size_t k;
	for (k = tp_ixmap_start(&m->ix, row_hash(name, kind)); m->ix.slot[k];
	     k = tp_ixmap_next(&m->ix, k)) {
		struct tp_accel_row *r = &m->v[m->ix.slot[k] - 1];
		if (r->name == name && r->kind == kind)
			return r;
	}
	struct tp_accel_row *v = tp_grow(m->v, sizeof *v, m->n + 1, &m->cap);
	if (!v)
		return NULL;
	m->v = v;
	memset(&v[m->n], 0, sizeof *v);
	v[m->n].name = name;
	v[m->n].kind = kind;
	m->ix.slot[k] = (uint32_t)++m->n;
	return &v[m->n - 1];
}

struct row_order {
	const struct tp_profile *p;
	const struct tp_accel_row *v;
};

static int row_before(const void *ctx, uint32_t x, uint32_t y)
{
	const struct row_order *o = ctx;
	const struct tp_accel_row *a = &o->v[x], *b = &o->v[y];
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns;
	int c = strcmp(tp_str(o->p, a->name), tp_str(o->p, b->name));
	return c ? c < 0 : a->kind < b->kind;
}

int tp_accel_rows_top(const struct tp_profile *p, struct rowmap *m, int64_t denom,
                      struct tp_accel_row **out, size_t *nout, size_t *nall)
{
	*nall = m->n;
	*nout = m->n < TP_ACCEL_TOP ? m->n : TP_ACCEL_TOP;
	uint32_t *ix = tp_malloc((m->n ? m->n : 1) * 2 * sizeof *ix);
	*out = tp_malloc((*nout ? *nout : 1) * sizeof **out);
	if (!ix || !*out) {
		tp_free(ix);
		return TP_ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++)
		ix[i] = (uint32_t)i;
	struct row_order o = {p, m->v};
	tp_sort_index(ix, ix + m->n, m->n, row_before, &o);
	for (size_t i = 0; i < *nout; i++) {
		(*out)[i] = m->v[ix[i]];
		(*out)[i].share = denom > 0 ? (double)(*out)[i].total_ns / (double)denom : 0;
	}
	tp_free(ix);
	return TP_OK;
}

void tp_accel_rows_free(struct rowmap *m)
{
	tp_free(m->v);
	tp_ixmap_free(&m->ix);
	memset(m, 0, sizeof *m);
}

/* The device work by (name, kind), most time first. */
static int kernels(struct acc_ctx *c)
{
	struct rowmap m = {0};
	int st = TP_OK;
	for (size_t i = 0; i < c->nitems && st == TP_OK; i++) {
		const struct acc_item *x = &c->items[i];
		struct tp_accel_row *r = tp_accel_row_get(&m, x->name, x->kind);
		if (!r) {
			st = TP_ENOMEM;
			break;
		}
		r->count++;
		r->total_ns += x->end - x->start;
		r->incl_ns = r->total_ns;
	}
	if (st == TP_OK)
		st = tp_accel_rows_top(c->p, &m, c->a->total.device_ns, &c->a->kernels,
		                       &c->a->nkernels, &c->a->kernel_rows);
	tp_accel_rows_free(&m);
	return st;
}

int tp_accel_stats(struct acc_ctx *c)
{
	struct tp_accel *a = c->a;
	size_t n = c->nitems, nd = (n > a->nsteps ? n : a->nsteps) + 1;
	uint32_t *ix = tp_malloc(3 * n * sizeof *ix);
	int64_t *d = tp_malloc(nd * sizeof *d);
	int st = TP_ENOMEM;
	if (!ix || !d)
		goto out;
	for (size_t i = 0; i < n; i++)
		ix[i] = (uint32_t)i;
	tp_sort_index(ix, ix + n, n, by_start, c->items);
	if ((st = whole(c, ix, d)) || (st = ranks(c, ix, ix + n, d)))
		goto out;
	if (a->nsteps)
		st = steps(c, ix, ix + n, d);
	else
		no_steps(a);
	if (st == TP_OK)
		st = kernels(c);
	if (st == TP_OK && a->total.busy_ns > 0)
		a->comm_exposed = (double)(a->total.ns[TP_ACC_COMM] - a->total.comm_overlap_ns) /
		                  (double)a->total.busy_ns;
out:
	tp_free(ix);
	tp_free(d);
	return st;
}
