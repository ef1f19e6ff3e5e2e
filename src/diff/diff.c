/*
 * diff.c — computes the comparison of two profiles (contract in diff.h): per-side steps and
 * totals, rows of every kind matched by key (layers falling back to core/type/position),
 * deltas and ranking, engine figures, and the per-side timelines drawn by diff.html.
 * Owns nothing beyond the struct tp_diff it fills; scratch tables are freed before returning.
 */
#include "diff/diff_int.h"

#include <stdlib.h>
#include <string.h>

const char *tp_diff_kind_name(enum tp_diff_kind k)
{
	static const char *const n[] = {"layers", "op_types", "ops", "cmd_types"};
	return (unsigned)k < TP_DIFF_KINDS ? n[k] : "?";
}

/* ---------------------------------------------------------------------------------------- */
/* A string-keyed table of rows                                                              */
/* ---------------------------------------------------------------------------------------- */

struct agg {
	struct tp_diff_row *v;
	size_t n, cap;
	struct tp_ixmap ix;
};

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Rows are only looked up while they are collected, before rematch_layers clears the keys
 * of merged rows; a cleared key hashes as "". */
static size_t fnv_at(const void *ctx, size_t i)
{
	const char *k = ((const struct tp_diff_row *)ctx)[i].key;
	return fnv(k ? k : "");
}

/* The row with `key`, created (zeroed, key copied into the arena) if absent; NULL on OOM. */
static struct tp_diff_row *agg_get(struct tp_diff *d, struct agg *g, const char *key)
{
	if (tp_ixmap_reserve(&g->ix, g->n, fnv_at, g->v))
		return NULL;
	size_t j;
	for (j = tp_ixmap_start(&g->ix, fnv(key)); g->ix.slot[j]; j = tp_ixmap_next(&g->ix, j)) {
		struct tp_diff_row *r = &g->v[g->ix.slot[j] - 1];
		if (strcmp(r->key, key) == 0)
			return r;
	}
	struct tp_diff_row *v = tp_grow(g->v, sizeof *v, g->n + 1, &g->cap);
	if (!v)
		return NULL;
	g->v = v;
	struct tp_diff_row *r = &v[g->n];
	memset(r, 0, sizeof *r);
	r->key = tp_arena_strdup(&d->arena, key);
	if (!r->key)
		return NULL;
	g->ix.slot[j] = (uint32_t)++g->n;
	return r;
}

static void agg_free(struct agg *g)
{
	tp_free(g->v);
	tp_ixmap_free(&g->ix);
	memset(g, 0, sizeof *g);
}

/* ---------------------------------------------------------------------------------------- */
/* Steps                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static int i64_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

struct stepiv {
	int64_t start, end;
};

static int iv_cmp(const void *x, const void *y)
{
	const struct stepiv *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Non-warm-up steps of a profile: *out their durations sorted, *iv their intervals sorted by
 * start (both owned by the caller, *n entries each). */
static int collect_steps(const struct tp_profile *p, int64_t **out, struct stepiv **iv, size_t *n)
{
	*out = NULL;
	*iv = NULL;
	*n = 0;
	uint32_t ty = tp_profile_find_str(p, TP_CAP_TYPE_STEP);
	uint32_t kw = tp_profile_find_str(p, TP_CAP_KEY_WARMUP);
	size_t cap = 0, cap_iv = 0;
	if (!ty)
		return TP_OK;
	struct tp_host_walk hw = {0};
	for (const struct tp_slice *s; (s = tp_host_walk_next(p, &hw));) {
		const struct tp_track *tr = hw.tr;
		if (tp_slice_type(tr, s) != ty)
			continue;
		const struct tp_arg *w = kw ? tp_args_find(p, s->args, kw) : NULL;
		if (w && ((w->type == TP_ARG_INT && w->v.i) || (w->type == TP_ARG_UINT && w->v.u)))
			continue;
		int64_t *v = tp_grow(*out, sizeof *v, *n + 1, &cap);
		if (!v)
			return TP_ENOMEM;
		*out = v;
		struct stepiv *w2 = tp_grow(*iv, sizeof *w2, *n + 1, &cap_iv);
		if (!w2)
			return TP_ENOMEM;
		*iv = w2;
		w2[*n] = (struct stepiv){s->start_ns, tp_slice_end(tr, s)};
		v[(*n)++] = tp_slice_end(tr, s) - s->start_ns;
	}
	if (*n) {
		qsort(*out, *n, sizeof **out, i64_cmp);
		qsort(*iv, *n, sizeof **iv, iv_cmp);
	}
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Rows of one side                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* Per-row, per-step sums for the noise estimate: acc[kind][row] holds nsteps(A) + nsteps(B)
 * slots (A's steps first), allocated when the row first gets time inside a step. */
struct acc {
	int64_t **v;
	size_t n, cap;
};

struct ctx {
	struct tp_diff *d;
	struct agg rows[TP_DIFF_KINDS];
	int side;               /* 0 = A, 1 = B */
	int64_t div;            /* per-step normalisation (1 without steps) */
	const char **layer_key; /* per layer of the current side: its row key (timeline labels) */
	/* Noise-aware only: the current side's step intervals, the step counts of both sides. */
	const struct stepiv *iv;
	size_t niv, nsteps[2];
	struct acc acc[TP_DIFF_KINDS];
};

static void add(struct tp_diff_row *r, int side, int64_t ns, uint64_t count)
{
	if (side == 0) {
		r->a_ns += ns;
		r->a_count += count;
	} else {
		r->b_ns += ns;
		r->b_count += count;
	}
}

/* The step whose interval holds t (the latest-starting one), or -1. */
static long step_of(const struct ctx *c, int64_t t)
{
	size_t lo =
	    tp_upper_bound_i64(c->iv, c->niv, sizeof *c->iv, offsetof(struct stepiv, start), t);
	for (size_t i = lo; i-- > 0;)
		if (t < c->iv[i].end || (t == c->iv[i].start && t == c->iv[i].end))
			return (long)i;
		else if (i + 8 < lo)
			break; /* steps do not nest deeply: give up after a few */
	return -1;
}

static int acc_fit(struct acc *a, size_t n);

/* Adds a slice of `dur` starting at `start` to row r of kind k on the current side. */
static int add_at(struct ctx *c, enum tp_diff_kind k, struct agg *g, struct tp_diff_row *r,
                  int64_t start, int64_t dur, uint64_t count)
{
	add(r, c->side, dur / c->div, count);
	if (!c->d->noise_aware)
		return TP_OK;
	long st = step_of(c, start);
	if (st < 0)
		return TP_OK;
	size_t ix = (size_t)(r - g->v);
	struct acc *a = &c->acc[k];
	if (acc_fit(a, ix + 1))
		return TP_ENOMEM;
	if (!a->v[ix] && !(a->v[ix] = tp_calloc(c->nsteps[0] + c->nsteps[1], sizeof **a->v)))
		return TP_ENOMEM;
	a->v[ix][(c->side ? c->nsteps[0] : 0) + (size_t)st] += dur;
	return TP_OK;
}

/* Makes a->v hold n row slots (new ones NULL). */
static int acc_fit(struct acc *a, size_t n)
{
	while (a->n < n) {
		int64_t **e = tp_push(&a->v, sizeof *a->v, &a->n, &a->cap);
		if (!e)
			return TP_ENOMEM;
		*e = NULL;
	}
	return TP_OK;
}

static void acc_free(struct acc *a)
{
	for (size_t i = 0; i < a->n; i++)
		tp_free(a->v[i]);
	tp_free(a->v);
	memset(a, 0, sizeof *a);
}

/* Adds timed layer l (index i of p) to the layer and operator-type rows; ord counts the
 * layers of each core and type so far (a layer without a name is keyed by its position).
 * TP_OK / TP_ENOMEM. */
static int add_layer(struct ctx *c, const struct tp_profile *p, const struct tp_layer *l, size_t i,
                     struct agg *ord)
{
	struct tp_diff *d = c->d;
	char key[512], alt[512], label[512];
	const char *type = tp_str(p, l->type), *name = tp_str(p, l->name);
	snprintf(key, sizeof key, "d%d/c%d/%s", l->device, l->core, type);
	struct tp_diff_row *o = agg_get(d, ord, key);
	if (!o)
		return TP_ENOMEM;
	uint64_t n = o->a_count++;
	snprintf(alt, sizeof alt, "core %d.%d %s #%llu", l->device, l->core, type,
	         (unsigned long long)n);
	if (name[0]) {
		snprintf(key, sizeof key, "%s", name);
		snprintf(label, sizeof label, "%s (%s)", name, type);
	} else {
		snprintf(key, sizeof key, "%s", alt);
		snprintf(label, sizeof label, "%s #%llu (layer %d, core %d)", type,
		         (unsigned long long)n, l->id, l->core);
	}
	struct tp_diff_row *r = agg_get(d, &c->rows[TP_DIFF_LAYER], key);
	if (!r)
		return TP_ENOMEM;
	if (!r->label)
		r->label = tp_arena_strdup(&d->arena, label);
	if (!r->alt_key)
		r->alt_key = tp_arena_strdup(&d->arena, alt);
	c->layer_key[i] = r->key;
	int st = add_at(c, TP_DIFF_LAYER, &c->rows[TP_DIFF_LAYER], r, l->begin_ns,
	                l->end_ns - l->begin_ns, 1);
	if (st)
		return st;
	/* Operator types of a device profile: its layer types. */
	struct tp_diff_row *t = agg_get(d, &c->rows[TP_DIFF_OP_TYPE], type);
	if (!t || !r->label || !r->alt_key)
		return TP_ENOMEM;
	return add_at(c, TP_DIFF_OP_TYPE, &c->rows[TP_DIFF_OP_TYPE], t, l->begin_ns,
	              l->end_ns - l->begin_ns, 1);
}

static int fill_layers(struct ctx *c, const struct tp_profile *p)
{
	struct agg ord = {0};
	int st = TP_OK;
	c->layer_key = p->num_layers ? tp_calloc(p->num_layers, sizeof *c->layer_key) : NULL;
	if (p->num_layers && !c->layer_key)
		return TP_ENOMEM;
	for (size_t i = 0; i < p->num_layers && st == TP_OK; i++) {
		struct tp_layer ly;
		const struct tp_layer *l = tp_profile_timed_layer(p, i, &ly);
		if (l)
			st = add_layer(c, p, l, i, &ord);
	}
	agg_free(&ord);
	return st;
}

static int fill_slices(struct ctx *c, const struct tp_profile *p)
{
	struct tp_diff *d = c->d;
	uint32_t ty_op = tp_profile_find_str(p, TP_CAP_TYPE_OP);
	uint32_t k_type = tp_profile_find_str(p, TP_CAP_KEY_OP_TYPE);
	struct tp_work_ids w;
	tp_work_ids(p, &w);
	char key[512];
	for (size_t t = 0; t < p->num_tracks; t++) {
		const struct tp_track *tr = &p->tracks[t];
		int engine = tr->kind <= TP_TRACK_CDMA;
		int host = tp_track_kind_is_host((enum tp_track_kind)tr->kind);
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *s = &tr->slices[k];
			int64_t dur = tp_slice_end(tr, s) - s->start_ns;
			int st = TP_OK;
			/* Device work of a trace (kernels, copies, ...) ranks as commands. */
			enum tp_work cls =
			    host ? tp_work_of(&w, tp_slice_type(tr, s)) : TP_WORK_NONE;
			if (engine || tp_work_busy(cls)) {
				snprintf(key, sizeof key, "%s %s",
				         engine ? tp_track_kind_name((enum tp_track_kind)tr->kind)
				                : tp_work_type(cls),
				         tp_str(p, tp_slice_name(tr, s)));
				struct tp_diff_row *r = agg_get(d, &c->rows[TP_DIFF_CMD], key);
				if (!r)
					return TP_ENOMEM;
				st = add_at(c, TP_DIFF_CMD, &c->rows[TP_DIFF_CMD], r, s->start_ns,
				            dur, 1);
			} else if (host && ty_op && tp_slice_type(tr, s) == ty_op &&
			           !p->num_layers) {
				struct tp_diff_row *r = agg_get(d, &c->rows[TP_DIFF_OP],
				                                tp_str(p, tp_slice_name(tr, s)));
				if (!r)
					return TP_ENOMEM;
				if ((st = add_at(c, TP_DIFF_OP, &c->rows[TP_DIFF_OP], r,
				                 s->start_ns, dur, 1)))
					return st;
				const struct tp_arg *a =
				    k_type ? tp_args_find(p, s->args, k_type) : NULL;
				const char *ot = a && a->type == TP_ARG_STR
				                     ? tp_str(p, a->v.s)
				                     : tp_str(p, tp_slice_name(tr, s));
				r = agg_get(d, &c->rows[TP_DIFF_OP_TYPE], ot);
				if (!r)
					return TP_ENOMEM;
				st = add_at(c, TP_DIFF_OP_TYPE, &c->rows[TP_DIFF_OP_TYPE], r,
				            s->start_ns, dur, 1);
			}
			if (st)
				return st;
		}
	}
	return TP_OK;
}

/* The engine row named `name`, added when new; NULL when out of memory. */
static struct tp_diff_engine *engine_row(struct tp_diff *d, const char *name)
{
	for (size_t k = 0; k < d->nengines; k++)
		if (strcmp(d->engines[k].name, name) == 0)
			return &d->engines[k];
	size_t cap = d->nengines;
	struct tp_diff_engine *v = tp_grow(d->engines, sizeof *v, d->nengines + 1, &cap);
	if (!v)
		return NULL;
	d->engines = v;
	struct tp_diff_engine *x = &v[d->nengines++];
	memset(x, 0, sizeof *x);
	snprintf(x->name, sizeof x->name, "%s", name);
	return x;
}

/* Engine e of core cs on side `side` (multi: name the device too). TP_OK / TP_ENOMEM. */
static int add_engine(struct tp_diff *d, int side, const struct tp_core_stats *cs, int e, int multi)
{
	const struct tp_engine_stats *es = &cs->eng[e];
	const char *kind = tp_track_kind_name((enum tp_track_kind)e);
	char name[48];
	if (multi)
		snprintf(name, sizeof name, "device %d core %d %s", cs->device, cs->core, kind);
	else
		snprintf(name, sizeof name, "core %d %s", cs->core, kind);
	struct tp_diff_engine *x = engine_row(d, name);
	if (!x)
		return TP_ENOMEM;
	double gbps = tp_track_kind_is_dma((enum tp_track_kind)e) ? es->ddr_avg_gbps : 0;
	if (side == 0) {
		x->a_util = es->utilization;
		x->a_gbps = gbps;
		x->a_busy_ns = es->busy_ns;
	} else {
		x->b_util = es->utilization;
		x->b_gbps = gbps;
		x->b_busy_ns = es->busy_ns;
	}
	return TP_OK;
}

static int fill_engines(struct tp_diff *d, int side, const struct tp_profile *p,
                        const struct tp_analysis *an)
{
	int multi = p->num_devices > 1;
	for (size_t i = 0; i < an->num_cores; i++)
		for (int e = 0; e < TP_ENGINES; e++)
			if (an->cores[i].eng[e].present &&
			    add_engine(d, side, &an->cores[i], e, multi))
				return TP_ENOMEM;
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Timeline of one side                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* The index of label s among sd->labels, added when new; *cap is the capacity of sd->labels. */
static int intern_label(struct tp_diff *d, struct tp_diff_side *sd, size_t *cap, struct agg *labels,
                        const char *s, uint32_t *out)
{
	struct tp_diff_row *r = agg_get(d, labels, s);
	if (!r)
		return TP_ENOMEM;
	if (!r->a_count) {
		const char **v = tp_grow(sd->labels, sizeof *v, sd->nlabels + 1, cap);
		if (!v)
			return TP_ENOMEM;
		sd->labels = v;
		v[sd->nlabels++] = r->key;
		r->a_count = sd->nlabels; /* index + 1 */
	}
	*out = (uint32_t)(r->a_count - 1);
	return TP_OK;
}

static int item_cmp(const void *x, const void *y)
{
	const struct tp_diff_item *a = x, *b = y;
	/* Longest first among bars that start together on one lane. */
	int64_t ka[] = {a->start_ns, a->lane, b->dur_ns}, kb[] = {b->start_ns, b->lane, a->dur_ns};
	return tp_cmp_keys(ka, kb, 3);
}

/* Appends lane `name`; *cap is the capacity of sd->lanes (grown by tp_grow's factor, so adding
 * n lanes copies O(n) pointers in all). */
static int add_lane(struct tp_diff *d, struct tp_diff_side *sd, size_t *cap, const char *name,
                    uint32_t *ix)
{
	const char **lv = tp_grow(sd->lanes, sizeof *lv, sd->nlanes + 1, cap);
	if (!lv)
		return TP_ENOMEM;
	sd->lanes = lv;
	char *ls = tp_arena_strdup(&d->arena, name);
	if (!ls)
		return TP_ENOMEM;
	*ix = (uint32_t)sd->nlanes;
	lv[sd->nlanes++] = ls;
	return TP_OK;
}

static int add_item(struct tp_diff_side *sd, size_t *cap, int64_t start, int64_t dur, uint32_t lane,
                    uint32_t label)
{
	struct tp_diff_item *iv = tp_grow(sd->items, sizeof *iv, sd->nitems + 1, cap);
	if (!iv)
		return TP_ENOMEM;
	sd->items = iv;
	iv[sd->nitems++] = (struct tp_diff_item){start, dur, lane, label};
	return TP_OK;
}

/* Lanes: per core a "Layer" lane drawn from the layer table (bars labelled with the layer's
 * row key, so the page can colour them by their delta), then the engine lanes (commands
 * labelled with their layer's key when they have one), then host lanes (depth 0 and 1). */
static int fill_timeline(struct ctx *c, struct tp_diff_side *sd, const struct tp_profile *p)
{
	struct tp_diff *d = c->d;
	struct agg labels = {0};
	int st = TP_OK;
	size_t cap_items = 0, cap_lanes = sd->nlanes, cap_labels = sd->nlabels;
	char lane[256];
	for (size_t i = 0; i < p->num_layers && st == TP_OK; i++) {
		struct tp_layer ly;
		const struct tp_layer *l = tp_profile_timed_layer(p, i, &ly);
		if (!l || !c->layer_key || !c->layer_key[i])
			continue;
		/* One lane per (device, core), found by name among the lanes made so far. */
		snprintf(lane, sizeof lane, "core %d Layer", l->core);
		uint32_t ix = (uint32_t)sd->nlanes;
		for (size_t k = 0; k < sd->nlanes; k++)
			if (strcmp(sd->lanes[k], lane) == 0)
				ix = (uint32_t)k;
		if (ix == sd->nlanes && (st = add_lane(d, sd, &cap_lanes, lane, &ix)))
			break;
		if (sd->nitems >= TP_DIFF_MAX_ITEMS) {
			sd->items_dropped++;
			continue;
		}
		uint32_t li;
		if ((st = intern_label(d, sd, &cap_labels, &labels, c->layer_key[i], &li)) ||
		    (st = add_item(sd, &cap_items, l->begin_ns - p->span_begin_ns,
		                   l->end_ns - l->begin_ns, ix, li)))
			break;
	}
	for (size_t t = 0; t < p->num_tracks && st == TP_OK; t++) {
		const struct tp_track *tr = &p->tracks[t];
		int host = tp_track_kind_is_host((enum tp_track_kind)tr->kind);
		int want = host || tr->kind <= TP_TRACK_CDMA ||
		           (tr->kind == TP_TRACK_LAYER && !p->num_layers);
		if (!want || !tr->count)
			continue;
		const char *dev = tr->device >= 0 && (size_t)tr->device < p->num_devices
		                      ? tp_str(p, p->devices[tr->device].name)
		                      : "";
		if (tr->core >= 0)
			snprintf(lane, sizeof lane, "core %d %s", tr->core, tp_str(p, tr->name));
		else
			snprintf(lane, sizeof lane, "%s / %s", dev, tp_str(p, tr->name));
		uint32_t lane_ix;
		if ((st = add_lane(d, sd, &cap_lanes, lane, &lane_ix)))
			break;
		for (size_t k = 0; k < tr->count; k++) {
			const struct tp_slice *s = &tr->slices[k];
			if (host && tp_slice_depth(tr, s) > 1)
				continue;
			if (sd->nitems >= TP_DIFF_MAX_ITEMS) {
				sd->items_dropped++;
				continue;
			}
			const char *lab = tp_str(p, tp_slice_name(tr, s));
			if (s->layer >= 0 && (size_t)s->layer < p->num_layers && c->layer_key &&
			    c->layer_key[s->layer])
				lab = c->layer_key[s->layer];
			uint32_t li;
			if ((st = intern_label(d, sd, &cap_labels, &labels, lab, &li)) ||
			    (st = add_item(sd, &cap_items, s->start_ns - p->span_begin_ns,
			                   tp_slice_end(tr, s) - s->start_ns, lane_ix, li)))
				break;
		}
	}
	if (st == TP_OK && sd->nitems)
		qsort(sd->items, sd->nitems, sizeof *sd->items, item_cmp);
	agg_free(&labels);
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Ranking                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static int row_cmp(const void *x, const void *y)
{
	const struct tp_diff_row *a = x, *b = y;
	int c = tp_diff_cmp_change(a->delta_ns, b->delta_ns);
	if (c)
		return c;
	int64_t ma = a->a_ns > a->b_ns ? a->a_ns : a->b_ns,
	        mb = b->a_ns > b->b_ns ? b->a_ns : b->b_ns;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* Layers left unmatched by name pair up by (core, type, position); their per-step sums of B
 * (noise-aware diffs) move along. */
static void rematch_layers(struct agg *g, struct acc *acc, size_t na, size_t nb)
{
	for (size_t i = 0; i < g->n; i++) {
		struct tp_diff_row *b = &g->v[i];
		if (!b->key || b->a_count || !b->alt_key || strcmp(b->key, b->alt_key) == 0)
			continue;
		for (size_t k = 0; k < g->n; k++) {
			struct tp_diff_row *a = &g->v[k];
			if (k == i || !a->key || a->b_count || !a->alt_key ||
			    strcmp(a->alt_key, b->alt_key) != 0)
				continue;
			a->b_ns = b->b_ns;
			a->b_count = b->b_count;
			b->key = NULL;                               /* merged into a */
			if (i < acc->n && acc->v[i] && k < acc->n) { /* acc_fit made k < n */
				if (acc->v[k])
					memcpy(acc->v[k] + na, acc->v[i] + na,
					       nb * sizeof **acc->v);
				else {
					/* a had no time inside A's steps: take b's array (its A
					 * part is 0). */
					acc->v[k] = acc->v[i];
					acc->v[i] = NULL;
				}
			}
			break;
		}
	}
}

/* Median and half-range of v[0..n) (sorted in place). */
static void med_spread(int64_t *v, size_t n, int64_t *med, int64_t *spread)
{
	qsort(v, n, sizeof *v, i64_cmp);
	*med = n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
	*spread = (v[n - 1] - v[0]) / 2;
}

/* Noise-aware diffs: each row's time per side becomes the median of its per-step sums, with
 * the half-range as spread, and the row is within noise when |Δ median| <= the larger spread.
 * A row with no time inside any step has median and spread 0 on both sides. */
static void row_noise(struct tp_diff *d, struct agg *g, struct acc *acc, size_t na, size_t nb)
{
	for (size_t i = 0; i < g->n; i++) {
		struct tp_diff_row *r = &g->v[i];
		r->within_noise = -1;
		if (!r->key || !d->noise_aware)
			continue;
		int64_t *v = i < acc->n ? acc->v[i] : NULL;
		r->a_ns = r->b_ns = r->a_spread_ns = r->b_spread_ns = 0;
		if (v) {
			med_spread(v, na, &r->a_ns, &r->a_spread_ns);
			med_spread(v + na, nb, &r->b_ns, &r->b_spread_ns);
		}
		int64_t delta = r->b_ns - r->a_ns, ad = delta < 0 ? -delta : delta;
		r->within_noise =
		    ad <= (r->a_spread_ns > r->b_spread_ns ? r->a_spread_ns : r->b_spread_ns);
	}
}

static void finish_rows(struct tp_diff *d, struct agg *g, enum tp_diff_kind kind)
{
	size_t n = 0;
	for (size_t i = 0; i < g->n; i++) {
		struct tp_diff_row *r = &g->v[i];
		if (!r->key)
			continue;
		r->delta_ns = r->b_ns - r->a_ns;
		r->pct = r->a_ns ? (double)r->delta_ns * 100.0 / (double)r->a_ns : 0;
		r->share = d->total_delta_ns ? (double)r->delta_ns / (double)d->total_delta_ns : 0;
		r->status = !r->a_count   ? TP_DIFF_APPEARED
		            : !r->b_count ? TP_DIFF_VANISHED
		                          : TP_DIFF_BOTH;
		if (!r->label)
			r->label = r->key;
		g->v[n++] = *r;
	}
	g->n = n;
	if (n)
		qsort(g->v, n, sizeof *g->v, row_cmp);
	d->rows[kind] = g->v;
	d->nrows[kind] = n;
	g->v = NULL;
}

int tp_diff_compute(const struct tp_profile *a, const struct tp_analysis *aa, const char *name_a,
                    const struct tp_profile *b, const struct tp_analysis *ba, const char *name_b,
                    struct tp_diff *out)
{
	memset(out, 0, sizeof *out);
	tp_arena_init(&out->arena, 1 << 16);
	struct ctx c = {.d = out};
	int64_t *steps[2] = {NULL, NULL};
	struct stepiv *ivs[2] = {NULL, NULL};
	size_t nsteps[2] = {0, 0};
	const struct tp_profile *ps[2] = {a, b};
	const struct tp_analysis *as[2] = {aa, ba};
	struct tp_diff_side *sides[2] = {&out->a, &out->b};
	const char *names[2] = {name_a, name_b};
	int st = TP_OK;

	for (int s = 0; s < 2 && !st; s++)
		st = collect_steps(ps[s], &steps[s], &ivs[s], &nsteps[s]);
	if (st)
		goto out;
	out->noise_aware = nsteps[0] >= 2 && nsteps[1] >= 2;
	for (int s = 0; s < 2; s++) {
		struct tp_diff_side *sd = sides[s];
		sd->name = tp_arena_strdup(&out->arena, names[s] ? names[s] : "");
		sd->source = tp_arena_strdup(&out->arena, tp_str(ps[s], ps[s]->source));
		if (!sd->name || !sd->source) {
			st = TP_ENOMEM;
			goto out;
		}
		sd->steps = nsteps[s];
		if (out->noise_aware) {
			size_t n = nsteps[s];
			int64_t *v = steps[s];
			sd->total_ns =
			    n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
			sd->step_min_ns = v[0];
			sd->step_max_ns = v[n - 1];
			sd->spread_ns = (v[n - 1] - v[0]) / 2;
		} else if (as[s]->num_cores) {
			sd->total_ns = as[s]->total_time_ns;
		} else {
			sd->total_ns = ps[s]->span_end_ns - ps[s]->span_begin_ns;
		}
	}
	out->total_delta_ns = out->b.total_ns - out->a.total_ns;
	out->total_pct =
	    out->a.total_ns ? (double)out->total_delta_ns * 100.0 / (double)out->a.total_ns : 0;
	if (out->noise_aware) {
		int64_t spread =
		    out->a.spread_ns > out->b.spread_ns ? out->a.spread_ns : out->b.spread_ns;
		int64_t ad = out->total_delta_ns < 0 ? -out->total_delta_ns : out->total_delta_ns;
		out->within_noise = ad <= spread;
	}

	c.nsteps[0] = nsteps[0];
	c.nsteps[1] = nsteps[1];
	for (int s = 0; s < 2; s++) {
		c.side = s;
		c.div = out->noise_aware ? (int64_t)nsteps[s] : 1;
		c.iv = ivs[s];
		c.niv = nsteps[s];
		if ((st = fill_layers(&c, ps[s])) || (st = fill_slices(&c, ps[s])) ||
		    (st = fill_engines(out, s, ps[s], as[s])) ||
		    (st = fill_timeline(&c, sides[s], ps[s]))) {
			tp_free(c.layer_key);
			goto out;
		}
		tp_free(c.layer_key);
		c.layer_key = NULL;
	}
	if ((st = acc_fit(&c.acc[TP_DIFF_LAYER], c.rows[TP_DIFF_LAYER].n)))
		goto out;
	rematch_layers(&c.rows[TP_DIFF_LAYER], &c.acc[TP_DIFF_LAYER], nsteps[0], nsteps[1]);
	for (int k = 0; k < TP_DIFF_KINDS; k++) {
		row_noise(out, &c.rows[k], &c.acc[k], nsteps[0], nsteps[1]);
		finish_rows(out, &c.rows[k], (enum tp_diff_kind)k);
	}
	st = tp_diff_accel(out, aa, ba);
out:
	for (int k = 0; k < TP_DIFF_KINDS; k++) {
		agg_free(&c.rows[k]);
		acc_free(&c.acc[k]);
	}
	for (int s = 0; s < 2; s++) {
		tp_free(steps[s]);
		tp_free(ivs[s]);
	}
	return st;
}

void tp_diff_free(struct tp_diff *d)
{
	for (int k = 0; k < TP_DIFF_KINDS; k++)
		tp_free(d->rows[k]);
	tp_free(d->engines);
	struct tp_diff_side *sides[2] = {&d->a, &d->b};
	for (int s = 0; s < 2; s++) {
		tp_free(sides[s]->lanes);
		tp_free(sides[s]->labels);
		tp_free(sides[s]->items);
	}
	tp_arena_free(&d->arena);
	memset(d, 0, sizeof *d);
}
