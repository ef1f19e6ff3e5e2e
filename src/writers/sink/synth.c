/*
 * synth.c — the Layer tracks a trace plan synthesises from the profile's layer table when the
 * reader made none (plan.c's plan_core): per (device, core) the layers' indices in slice
 * order. Built ahead on the threads (plan.c, synth_ahead_one) or when the planner reaches the
 * core; either way the plan (struct plan's synth) owns the track in the end.
 *
 * Owns nothing: each track belongs to the plan that takes it (tp_sink_synth_layers), or to
 * its pl->ahead entry until then.
 */
#include "writers/sink/sink_int.h"

/* DEFINE_SORT(name, T, less) defines void name(T *a, size_t n), sorting in place by
 * less(const T *, const T *) for unique keys (stability does not matter): quicksort (median
 * of three) that needs no scratch copy, heapsort when the recursion gets deep, insertion sort
 * for short runs. The comparison is inlined, unlike qsort's function pointer. */
#define DEFINE_SORT(name, T, less)                                                                 \
	static void name##_sift(T *a, size_t n, size_t i)                                          \
	{                                                                                          \
		for (;;) {                                                                         \
			size_t l = 2 * i + 1, m = i;                                               \
			if (l < n && less(&a[m], &a[l]))                                           \
				m = l;                                                             \
			if (l + 1 < n && less(&a[m], &a[l + 1]))                                   \
				m = l + 1;                                                         \
			if (m == i)                                                                \
				return;                                                            \
			T t_ = a[i];                                                               \
			a[i] = a[m];                                                               \
			a[m] = t_;                                                                 \
			i = m;                                                                     \
		}                                                                                  \
	}                                                                                          \
	static void name##_rec(T *a, size_t n, unsigned depth)                                     \
	{                                                                                          \
		T t_;                                                                              \
		while (n > 16) {                                                                   \
			if (depth-- == 0) {                                                        \
				for (size_t i = n / 2; i-- > 0;)                                   \
					name##_sift(a, n, i);                                      \
				for (size_t i = n; i-- > 1;) {                                     \
					t_ = a[0], a[0] = a[i], a[i] = t_;                         \
					name##_sift(a, i, 0);                                      \
				}                                                                  \
				return;                                                            \
			}                                                                          \
			size_t mid = n / 2;                                                        \
			if (less(&a[mid], &a[0]))                                                  \
				t_ = a[mid], a[mid] = a[0], a[0] = t_;                             \
			if (less(&a[n - 1], &a[0]))                                                \
				t_ = a[n - 1], a[n - 1] = a[0], a[0] = t_;                         \
			if (less(&a[n - 1], &a[mid]))                                              \
				t_ = a[n - 1], a[n - 1] = a[mid], a[mid] = t_;                     \
			T piv = a[mid];                                                            \
			size_t i = 0, j = n - 1;                                                   \
			for (;;) {                                                                 \
				while (less(&a[i], &piv))                                          \
					i++;                                                       \
				while (less(&piv, &a[j]))                                          \
					j--;                                                       \
				if (i >= j)                                                        \
					break;                                                     \
				t_ = a[i], a[i] = a[j], a[j] = t_;                                 \
				i++;                                                               \
				j--;                                                               \
			}                                                                          \
			/* [0, j] <= piv <= [j + 1, n): loop on the larger side */                 \
			size_t left = j + 1;                                                       \
			if (left < n - left) {                                                     \
				name##_rec(a, left, depth);                                        \
				a += left;                                                         \
				n -= left;                                                         \
			} else {                                                                   \
				name##_rec(a + left, n - left, depth);                             \
				n = left;                                                          \
			}                                                                          \
		}                                                                                  \
		for (size_t i = 1; i < n; i++) {                                                   \
			T v_ = a[i];                                                               \
			size_t j = i;                                                              \
			for (; j > 0 && less(&v_, &a[j - 1]); j--)                                 \
				a[j] = a[j - 1];                                                   \
			a[j] = v_;                                                                 \
		}                                                                                  \
	}                                                                                          \
	static void name(T *a, size_t n)                                                           \
	{                                                                                          \
		unsigned depth = 0;                                                                \
		for (size_t k = n; k; k >>= 1)                                                     \
			depth += 2;                                                                \
		name##_rec(a, n, depth);                                                           \
	}

/* Order of a synthesised Layer track: (begin asc, end desc, layer index asc). */
struct layer_key {
	int64_t begin, end;
	uint32_t layer;
};

static int layer_key_less(const struct layer_key *x, const struct layer_key *y)
{
	if (x->begin != y->begin)
		return x->begin < y->begin;
	if (x->end != y->end)
		return x->end > y->end;
	return x->layer < y->layer;
}

DEFINE_SORT(layer_key_sort, struct layer_key, layer_key_less)

static struct layer_key layer_key_of(const struct tp_profile *p, uint32_t i)
{
	struct layer_key k = {0, -1, i};
	tp_profile_layer_span(p, i, &k.begin, &k.end);
	return k;
}

static int synth_keep(const void *ctx, size_t i)
{
	const struct synth *y = ctx;
	return (int)(y->bits[i / 64] >> (i % 64) & 1);
}

static int synth_before(const void *ctx, uint32_t x, uint32_t y)
{
	const struct synth *s = ctx;
	struct layer_key a = layer_key_of(s->p, x), b = layer_key_of(s->p, y);
	return layer_key_less(&a, &b);
}

/* Frees a synthesised track. */
void tp_sink_synth_free(struct synth *y)
{
	if (y) {
		tp_free(y->layers);
		tp_free(y->bits);
		tp_free(y);
	}
}

/* This core's layers, sorted by their slice order (the table does not list them nearly in
 * that order). */
static int synth_sort(struct synth *y)
{
	const struct tp_profile *p = y->p;
	size_t n = 0;
	for (size_t i = 0; i < p->num_layers; i++)
		if (y->bits[i / 64] >> (i % 64) & 1)
			y->layers[n++] = (uint32_t)i;
	struct layer_key *kv = tp_malloc(n * sizeof *kv);
	if (!kv)
		return TP_ENOMEM;
	for (size_t i = 0; i < n; i++)
		kv[i] = layer_key_of(p, y->layers[i]);
	layer_key_sort(kv, n);
	for (size_t i = 0; i < n; i++)
		y->layers[i] = kv[i].layer;
	tp_free(kv);
	return TP_OK;
}

/* Builds a Layer track of (device, core) from the profile's layer table, or leaves *out NULL
 * when no layer has timing. The track holds no slices (pt_slice builds each slice when it is
 * needed), only its layers' indices in slice order (4 bytes per layer): one tp_walk of the
 * table when it lists the core's layers nearly in that order (a window of TP_WALK_WINDOW; the
 * usual case), else a sort. Reads only the profile (any thread). */
int tp_sink_synth_build(const struct tp_profile *p, int32_t device, int32_t core,
                        struct synth **out)
{
	*out = NULL;
	if (p->num_layers > UINT32_MAX)
		return TP_OK;
	uint64_t *bits = tp_calloc(p->num_layers / 64 + 1, sizeof *bits);
	if (!bits)
		return TP_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < p->num_layers; i++) {
		int32_t ldev, lcore;
		if (tp_profile_layer_place(p, i, &ldev, &lcore) && ldev == device &&
		    lcore == core) {
			bits[i / 64] |= (uint64_t)1 << (i % 64);
			n++;
		}
	}
	if (!n) {
		tp_free(bits);
		return TP_OK;
	}
	struct synth *y = tp_calloc(1, sizeof *y);
	if (!y) {
		tp_free(bits);
		return TP_ENOMEM;
	}
	y->t.kind = TP_TRACK_LAYER;
	y->t.device = device;
	y->t.core = core;
	y->t.count = n;
	y->p = p;
	y->bits = bits;
	if (!(y->layers = tp_malloc(n * sizeof *y->layers))) {
		tp_sink_synth_free(y);
		return TP_ENOMEM;
	}
	struct tp_walk w;
	tp_walk_start(&w, p->num_layers, synth_keep, synth_before, y);
	size_t k = 0;
	int ordered = 1;
	uint32_t x;
	while (k < n && tp_walk_next(&w, &x)) {
		if (k && !synth_before(y, y->layers[k - 1], x))
			ordered = 0;
		y->layers[k++] = x;
	}
	if ((!ordered || k != n) && synth_sort(y)) {
		tp_sink_synth_free(y);
		return TP_ENOMEM;
	}
	tp_free(bits);
	y->bits = NULL;
	*out = y;
	return TP_OK;
}

/* The Layer track of (device, core) in pl->synth (which owns it from then on): the one built
 * ahead when there is one, else built now. */
int tp_sink_synth_layers(struct plan *pl, int32_t device, int32_t core, struct synth **out)
{
	struct synth *y = NULL;
	int found = 0;
	for (size_t i = 0; i < pl->nahead && !found; i++) {
		struct synth_ahead *a = &pl->ahead[i];
		if (a->built && a->dev == device && a->core == core) {
			y = a->y;
			a->y = NULL;
			found = 1;
		}
	}
	*out = NULL;
	if (!found && tp_sink_synth_build(pl->p, device, core, &y))
		return TP_ENOMEM;
	if (!y)
		return TP_OK;
	struct synth **ns = tp_grow(pl->synth, sizeof *pl->synth, pl->nsynth + 1, &pl->cap_synth);
	if (!ns) {
		tp_sink_synth_free(y);
		return TP_ENOMEM;
	}
	pl->synth = ns;
	pl->synth[pl->nsynth++] = y;
	*out = y;
	return TP_OK;
}
