/*
 * optable.c — groups the operator executions of a capture into one row per operator and
 * computes their latency statistics (count, total, min, max, mean, median, nearest-rank
 * p99) over the non-warm-up executions. Owns nothing beyond the table's rows array; the
 * rows point into the profile.
 */
#include "analysis/optable.h"

#include "model/argkeys.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One operator execution, gathered before grouping. */
struct exec {
	uint32_t name, op_type;
	uint32_t track;
	int warmup;
	const struct tp_slice *s;
};

/* Step index -> warm-up flag, sorted by step for bsearch. */
struct stepflag {
	int64_t step;
	int warmup;
};

const struct tp_arg *tp_op_arg(const struct tp_profile *p, uint32_t args, const char *key)
{
	return tp_args_find(p, args, tp_profile_find_str(p, key));
}

const char *tp_op_arg_str(const struct tp_profile *p, uint32_t args, const char *key)
{
	const struct tp_arg *a = tp_op_arg(p, args, key);
	return a && a->type == TP_ARG_STR ? tp_str(p, a->v.s) : "";
}

static uint64_t arg_uint(const struct tp_arg *a)
{
	if (!a)
		return 0;
	if (a->type == TP_ARG_UINT)
		return a->v.u;
	int64_t v = tp_arg_as_i64(a);
	return v < 0 ? 0 : (uint64_t)v;
}

int tp_op_sparse_eligible(const char *op_type, const char *weight_shape)
{
	static const char *const dense[] = {"MatMul", "InnerProduct",   "Gemm",
	                                    "Linear", "FullyConnected", "Dense"};
	int known = 0;
	for (size_t i = 0; i < sizeof dense / sizeof dense[0]; i++)
		if (strcasecmp(op_type, dense[i]) == 0)
			known = 1;
	if (!known)
		return 0;
	/* Exactly two positive decimal dims "AxB". */
	const char *x = strchr(weight_shape, 'x');
	if (!x || strchr(x + 1, 'x'))
		return 0;
	uint64_t d0, d1;
	if (tp_parse_u64(weight_shape, (size_t)(x - weight_shape), &d0) ||
	    tp_parse_u64(x + 1, strlen(x + 1), &d1) || d0 == 0 || d1 == 0)
		return 0;
	return d0 % 4 == 0;
}

int64_t tp_percentile_ns(const int64_t *sorted, size_t n, unsigned pct)
{
	if (n == 0 || pct == 0)
		return 0;
	if (pct > 100)
		pct = 100;
	/* rank = ceil(pct * n / 100), computed in integers so p99 never suffers rounding. */
	size_t rank = (n * pct + 99) / 100;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

int64_t tp_median_ns(const int64_t *sorted, size_t n)
{
	if (n == 0)
		return 0;
	if (n % 2)
		return sorted[n / 2];
	/* Halves first, so two values near INT64_MAX cannot overflow. */
	int64_t a = sorted[n / 2 - 1], b = sorted[n / 2];
	return a / 2 + b / 2 + (a % 2 + b % 2) / 2;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

void tp_sort_ns(int64_t *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof *v, cmp_i64);
}

static int cmp_stepflag(const void *x, const void *y)
{
	const struct stepflag *a = x, *b = y;
	if (a->step != b->step)
		return (a->step > b->step) - (a->step < b->step);
	/* Two step slices with one index (several graphs): warm-up wins, deterministically. */
	return b->warmup - a->warmup;
}

/* Executions are grouped by interned ids (cheap, and any total order groups them); the rows
 * are ordered afterwards by resolved strings, which is what the output promises. */
static int cmp_exec(const void *x, const void *y)
{
	const struct exec *a = x, *b = y;
	int64_t ka[] = {a->name, a->op_type, a->s->start_ns, a->track},
	        kb[] = {b->name, b->op_type, b->s->start_ns, b->track};
	int c = tp_cmp_keys(ka, kb, 4);
	return c ? c : (a->s > b->s) - (a->s < b->s);
}

/* One distinct (name, op_type) of order_execs: its executions and, once sorted, where it was. */
struct gkey {
	uint32_t name, op_type;
	size_t count, at;
};

static int cmp_gkey(const void *x, const void *y)
{
	const struct gkey *a = x, *b = y;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return (a->op_type > b->op_type) - (a->op_type < b->op_type);
}

static size_t gkey_hash(uint32_t name, uint32_t op_type)
{
	uint64_t h = ((uint64_t)name << 32 | op_type) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32);
}

/* Merges the sorted runs of v[0..n) (cmp_exec order) using tmp (n entries). */
static void merge_runs(struct exec *v, struct exec *tmp, size_t n)
{
	for (;;) {
		size_t o = 0, i = 0, runs = 0;
		while (i < n) {
			size_t a = i++;
			while (i < n && cmp_exec(&v[i - 1], &v[i]) <= 0)
				i++;
			size_t b = i;
			if (i < n) /* a second run starts at b: v[b - 1] > v[b] */
				for (i++; i < n && cmp_exec(&v[i - 1], &v[i]) <= 0; i++)
					;
			if (b == i) { /* no second run: copied as it is */
				memcpy(tmp + o, v + a, (b - a) * sizeof *v);
				o += b - a;
			} else {
				size_t x = a, y = b;
				while (x < b && y < i)
					tmp[o++] = cmp_exec(&v[y], &v[x]) < 0 ? v[y++] : v[x++];
				memcpy(tmp + o, v + x, (b - x) * sizeof *v);
				o += b - x;
				memcpy(tmp + o, v + y, (i - y) * sizeof *v);
				o += i - y;
			}
			runs++;
		}
		memcpy(v, tmp, n * sizeof *v);
		if (runs <= 1)
			return;
	}
}

static size_t gkey_hash_at(const void *ctx, size_t i)
{
	const struct gkey *g = &((const struct gkey *)ctx)[i];
	return gkey_hash(g->name, g->op_type);
}

/* Puts ex[0..n) in cmp_exec order without comparing every execution with every other: the
 * distinct (name, op_type) keys are found by hashing and sorted (a few hundred at most in
 * practice), the executions are scattered into their key's range in their collected order,
 * and each range, a sequence of runs already in start order (one per track: a track's
 * slices are sorted), is merged run by run. The same order as qsort with cmp_exec (a total
 * order), at a fraction of the cost of sorting every execution (docs/perf-notes/analysis.md).
 * `tmp` holds n entries. TP_OK or TP_ENOMEM. */
static int order_execs(struct exec *ex, size_t n, struct exec *tmp)
{
	struct tp_ixmap map = {NULL, 0};
	struct gkey *keys = NULL;
	size_t nkeys = 0, cap_keys = 0, *rank = NULL, *next = NULL;
	uint32_t *of = tp_malloc((n ? n : 1) * sizeof *of); /* execution -> key index */
	int st = TP_ENOMEM;
	if (!of)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (tp_ixmap_reserve(&map, nkeys, gkey_hash_at, keys))
			goto out;
		size_t k;
		for (k = tp_ixmap_start(&map, gkey_hash(ex[i].name, ex[i].op_type)); map.slot[k];
		     k = tp_ixmap_next(&map, k)) {
			const struct gkey *g = &keys[map.slot[k] - 1];
			if (g->name == ex[i].name && g->op_type == ex[i].op_type)
				break;
		}
		if (!map.slot[k]) {
			struct gkey *g = tp_grow(keys, sizeof *keys, nkeys + 1, &cap_keys);
			if (!g)
				goto out;
			keys = g;
			keys[nkeys] = (struct gkey){ex[i].name, ex[i].op_type, 0, 0};
			map.slot[k] = (uint32_t)++nkeys;
		}
		of[i] = map.slot[k] - 1;
		keys[of[i]].count++;
	}
	/* Key ranges in (name, op_type) order: rank[key index] = its place, next[place] = where
	 * its next execution goes. */
	for (size_t g = 0; g < nkeys; g++)
		keys[g].at = g;
	qsort(keys, nkeys, sizeof *keys, cmp_gkey);
	rank = tp_malloc((nkeys ? nkeys : 1) * sizeof *rank);
	next = tp_malloc((nkeys ? nkeys : 1) * sizeof *next);
	if (!rank || !next)
		goto out;
	size_t at = 0;
	for (size_t r = 0; r < nkeys; r++) {
		rank[keys[r].at] = r;
		next[r] = at;
		at += keys[r].count;
	}
	for (size_t i = 0; i < n; i++)
		tmp[next[rank[of[i]]]++] = ex[i];
	memcpy(ex, tmp, n * sizeof *ex);
	at = 0;
	for (size_t r = 0; r < nkeys; r++) {
		merge_runs(ex + at, tmp, keys[r].count);
		at += keys[r].count;
	}
	st = TP_OK;
out:
	tp_ixmap_free(&map);
	TP_FREE_ALL(rank, next, keys, of);
	return st;
}

/* Row ordering key with resolved strings. */
struct rowkey {
	struct tp_op_row row;
	const char *name, *type;
};

static int cmp_rowkey(const void *x, const void *y)
{
	const struct rowkey *a = x, *b = y;
	if (a->row.first_start_ns != b->row.first_start_ns)
		return a->row.first_start_ns < b->row.first_start_ns ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return strcmp(a->type, b->type);
}

int tp_op_table_for(const struct tp_profile *p, const struct tp_analysis *a,
                    struct tp_op_table *own, const struct tp_op_table **out)
{
	memset(own, 0, sizeof *own);
	if (a && a->ops) {
		*out = a->ops;
		return TP_OK;
	}
	*out = own;
	return tp_op_table_build(p, own);
}

/* Pass 1: the warm-up flag of every step index, in *steps (*n entries, sorted by
 * cmp_stepflag; the caller frees the array, also on failure). TP_OK / TP_ENOMEM. */
static int step_flags(const struct tp_profile *p, const struct tp_cap_keys *k,
                      struct stepflag **steps, size_t *n)
{
	size_t cap = 0;
	for (size_t ti = 0; ti < p->num_tracks && k->ty_step; ti++) {
		const struct tp_track *tr = &p->tracks[ti];
		if (!tp_track_kind_is_host((enum tp_track_kind)tr->kind))
			continue;
		for (size_t i = 0; i < tr->count; i++) {
			const struct tp_slice *s = &tr->slices[i];
			const struct tp_arg *sa;
			if (tp_slice_type(tr, s) != k->ty_step ||
			    !(sa = tp_args_find(p, s->args, k->k_step)))
				continue;
			struct stepflag *g = tp_grow(*steps, sizeof **steps, *n + 1, &cap);
			if (!g)
				return TP_ENOMEM;
			*steps = g;
			const struct tp_arg *w = tp_args_find(p, s->args, k->k_warm);
			g[*n].step = tp_arg_as_i64(sa);
			g[*n].warmup = w && tp_arg_as_i64(w) != 0;
			(*n)++;
		}
	}
	if (*n)
		qsort(*steps, *n, sizeof **steps, cmp_stepflag);
	return TP_OK;
}

/* Whether operator execution s of track tr is warm-up: its own flag, else that of the step
 * its step argument names, else that of cur_step, the step slice enclosing it on its track. */
static int exec_warm(const struct tp_profile *p, const struct tp_cap_keys *k,
                     const struct tp_track *tr, const struct tp_slice *s,
                     const struct tp_slice *cur_step, const struct stepflag *steps, size_t nsteps)
{
	const struct tp_arg *w = tp_args_find(p, s->args, k->k_warm);
	const struct tp_arg *sa = tp_args_find(p, s->args, k->k_step);
	if (w)
		return tp_arg_as_i64(w) != 0;
	if (sa && nsteps) {
		struct stepflag key = {tp_arg_as_i64(sa), 1};
		/* The comparator orders warm-up first inside one index; search for the exact
		 * step with either flag. */
		const struct stepflag *hit =
		    bsearch(&key, steps, nsteps, sizeof *steps, cmp_stepflag);
		if (!hit) {
			key.warmup = 0;
			hit = bsearch(&key, steps, nsteps, sizeof *steps, cmp_stepflag);
		}
		return hit ? hit->warmup : 0;
	}
	if (cur_step && s->start_ns >= cur_step->start_ns &&
	    tp_slice_end(tr, s) <= tp_slice_end(tr, cur_step)) {
		const struct tp_arg *cw = tp_args_find(p, cur_step->args, k->k_warm);
		return cw && tp_arg_as_i64(cw) != 0;
	}
	return 0;
}

/* Pass 2: every operator execution with its warm-up flag, in *ex (*n entries; the caller frees
 * the array, also on failure); counts them in t. TP_OK / TP_ENOMEM. */
static int gather_execs(const struct tp_profile *p, const struct tp_cap_keys *k,
                        const struct stepflag *steps, size_t nsteps, struct tp_op_table *t,
                        struct exec **ex, size_t *n)
{
	size_t cap = 0;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *tr = &p->tracks[ti];
		if (!tp_track_kind_is_host((enum tp_track_kind)tr->kind))
			continue;
		const struct tp_slice *cur_step = NULL; /* latest step slice on this track */
		for (size_t i = 0; i < tr->count; i++) {
			const struct tp_slice *s = &tr->slices[i];
			if (k->ty_step && tp_slice_type(tr, s) == k->ty_step) {
				cur_step = s;
				continue;
			}
			if (tp_slice_type(tr, s) != k->ty_op)
				continue;
			if (k->k_cut && tp_args_find(p, s->args, k->k_cut)) {
				/* Cut short by the end of the capture (a kill): its end is not
				 * measured. */
				t->cut_executions++;
				continue;
			}
			int warm = exec_warm(p, k, tr, s, cur_step, steps, nsteps);
			struct exec *g = tp_grow(*ex, sizeof **ex, *n + 1, &cap);
			if (!g)
				return TP_ENOMEM;
			*ex = g;
			const struct tp_arg *ot = tp_args_find(p, s->args, k->k_type);
			g[*n].name = tp_slice_name(tr, s);
			g[*n].op_type = ot && ot->type == TP_ARG_STR ? ot->v.s : 0;
			g[*n].track = (uint32_t)ti;
			g[*n].warmup = warm;
			g[*n].s = s;
			(*n)++;
			t->executions++;
			t->warmup_executions += (uint64_t)warm;
		}
	}
	return TP_OK;
}

/* Fills row rk from the executions ex[i..j) of one operator (in start order); durs is scratch
 * for j - i durations. */
static void fill_row(const struct tp_profile *p, const struct tp_cap_keys *k,
                     const struct tp_op_table *t, const struct exec *ex, size_t i, size_t j,
                     int64_t *durs, struct rowkey *rk)
{
	struct tp_op_row *r = &rk->row;
	r->name = ex[i].name;
	r->op_type = ex[i].op_type;
	r->first_start_ns = ex[i].s->start_ns; /* group sorted by start */
	size_t nd = 0;
	for (size_t e = i; e < j; e++) {
		int counted = !ex[e].warmup || t->counted_warmup;
		if (ex[e].warmup)
			r->runs_warmup++;
		if (!counted)
			continue;
		if (!r->desc)
			r->desc = ex[e].s;
		int64_t d = tp_slice_dur(&p->tracks[ex[e].track], ex[e].s);
		durs[nd++] = d;
		r->total_ns += d;
	}
	if (!r->desc) /* only warm-up executions: describe the row by its first one */
		r->desc = ex[i].s;
	r->args = r->desc->args;
	r->runs = nd;
	if (nd) {
		tp_sort_ns(durs, nd);
		r->min_ns = durs[0];
		r->max_ns = durs[nd - 1];
		r->median_ns = tp_median_ns(durs, nd);
		r->p99_ns = tp_percentile_ns(durs, nd, 99);
		r->mean_ns = (double)r->total_ns / (double)nd;
	}
	r->bytes = arg_uint(tp_args_find(p, r->args, k->k_bytes));
	r->flops = arg_uint(tp_args_find(p, r->args, k->k_flops));
	const struct tp_arg *ws = tp_args_find(p, r->args, k->k_wshape);
	rk->name = tp_str(p, r->name);
	rk->type = tp_str(p, r->op_type);
	r->sparse_eligible =
	    tp_op_sparse_eligible(rk->type, ws && ws->type == TP_ARG_STR ? tp_str(p, ws->v.s) : "");
}

int tp_op_table_build(const struct tp_profile *p, struct tp_op_table *t)
{
	int st = TP_ENOMEM;
	struct exec *ex = NULL;
	struct stepflag *steps = NULL;
	int64_t *durs = NULL;
	struct rowkey *keys = NULL;
	size_t nex = 0, nsteps = 0, nkeys = 0;
	memset(t, 0, sizeof *t);
	struct tp_cap_keys k;
	tp_cap_keys_of(p, &k);
	if (!k.ty_op) /* no slice can have type "op" */
		return TP_OK;
	if (step_flags(p, &k, &steps, &nsteps) != TP_OK ||
	    gather_execs(p, &k, steps, nsteps, t, &ex, &nex) != TP_OK)
		goto out;
	if (nex == 0) {
		st = TP_OK;
		goto out;
	}
	t->counted_warmup = t->warmup_executions == t->executions;
	{
		struct exec *tmp = tp_malloc(nex * sizeof *tmp);
		int ost = tmp ? order_execs(ex, nex, tmp) : TP_ENOMEM;
		tp_free(tmp);
		if (ost)
			goto out;
	}
	if (!(durs = tp_malloc(nex * sizeof *durs)) || !(keys = tp_calloc(nex, sizeof *keys)))
		goto out;
	for (size_t i = 0; i < nex;) {
		size_t j = i;
		while (j < nex && ex[j].name == ex[i].name && ex[j].op_type == ex[i].op_type)
			j++;
		fill_row(p, &k, t, ex, i, j, durs, &keys[nkeys++]);
		i = j;
	}
	qsort(keys, nkeys, sizeof *keys, cmp_rowkey);
	if (!(t->rows = tp_malloc(nkeys * sizeof *t->rows)))
		goto out;
	for (size_t i = 0; i < nkeys; i++)
		t->rows[i] = keys[i].row;
	t->count = nkeys;
	st = TP_OK;
out:
	TP_FREE_ALL(keys, durs, steps, ex);
	if (st != TP_OK)
		tp_op_table_free(t);
	return st;
}

void tp_op_table_free(struct tp_op_table *t)
{
	tp_free(t->rows);
	memset(t, 0, sizeof *t);
}

struct row_order {
	const struct tp_op_row *rows;
	enum tp_op_order by;
};

static int row_before(const void *ctx, uint32_t x, uint32_t y)
{
	const struct row_order *o = ctx;
	const struct tp_op_row *a = &o->rows[x], *b = &o->rows[y];
	switch (o->by) {
	case TP_OP_BY_TYPE:
		return a->op_type < b->op_type;
	case TP_OP_BY_TOTAL:
		return a->total_ns > b->total_ns;
	case TP_OP_BY_MEAN:
		return a->mean_ns > b->mean_ns;
	}
	return 0;
}

const struct tp_op_row **tp_op_rows_by(const struct tp_op_table *t, enum tp_op_order by)
{
	size_t n = t->count, slots = n ? n : 1;
	/* The n pointers, then the index sorted stably (so ties keep the table's order) and its
	 * merge buffer: 2n uint32 in the same block, behind the pointers. */
	const struct tp_op_row **v = tp_malloc(slots * (sizeof *v + 2 * sizeof(uint32_t)));
	if (!v)
		return NULL;
	uint32_t *ix = (uint32_t *)(void *)(v + slots);
	for (size_t i = 0; i < n; i++)
		ix[i] = (uint32_t)i;
	struct row_order o = {t->rows, by};
	tp_sort_index(ix, ix + n, n, row_before, &o);
	for (size_t i = 0; i < n; i++)
		v[i] = &t->rows[ix[i]];
	return v;
}
