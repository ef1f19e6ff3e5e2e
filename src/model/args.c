/*
 * args.c — argument sets: a slice's or layer's key/value pairs, appended set by set between
 * tp_args_begin and tp_args_end into the profile's one argument array, and their lookup.
 */
#include "model/model.h"
#include "model/model_int.h"

#include <stdlib.h>
#include <string.h>

uint32_t tp_args_begin(struct tp_profile *p)
{
	struct tp_argset s = {(uint32_t)p->num_args, 0};
	long idx = PUSH(p, argsets, num_argsets, cap_argsets, s);
	return idx < 0 ? 0 : (uint32_t)idx;
}

static int add_arg(struct tp_profile *p, struct tp_arg a)
{
	if (p->num_argsets <= 1)
		return TP_EUSAGE;
	if (PUSH(p, args, num_args, cap_args, a) < 0)
		return TP_ENOMEM;
	p->argsets[p->num_argsets - 1].count++;
	return TP_OK;
}

int tp_args_add_int(struct tp_profile *p, const char *key, int64_t v)
{
	struct tp_arg a = {.key = tp_profile_str(p, key), .type = TP_ARG_INT, .v.i = v};
	return add_arg(p, a);
}

int tp_args_add_uint(struct tp_profile *p, const char *key, uint64_t v)
{
	struct tp_arg a = {.key = tp_profile_str(p, key), .type = TP_ARG_UINT, .v.u = v};
	return add_arg(p, a);
}

int tp_args_add_real(struct tp_profile *p, const char *key, double v)
{
	struct tp_arg a = {.key = tp_profile_str(p, key), .type = TP_ARG_REAL, .v.d = v};
	return add_arg(p, a);
}

int tp_args_add(struct tp_profile *p, const struct tp_arg *a)
{
	return add_arg(p, *a);
}

int tp_args_add_str(struct tp_profile *p, const char *key, const char *v)
{
	struct tp_arg a = {
	    .key = tp_profile_str(p, key), .type = TP_ARG_STR, .v.s = tp_profile_str(p, v)};
	return add_arg(p, a);
}

uint32_t tp_args_end(struct tp_profile *p)
{
	if (p->num_argsets <= 1 || p->oom)
		return 0;
	size_t id = p->num_argsets - 1;
	if (p->argsets[id].count == 0) {
		p->num_argsets--; /* drop the empty set so ids stay dense */
		return 0;
	}
	return (uint32_t)id;
}

uint32_t *tp_profile_str_map(struct tp_profile *p, const struct tp_profile *src)
{
	uint32_t n = src->strs.count;
	uint32_t *map = tp_malloc((n ? n : 1) * sizeof *map);
	if (!map) {
		p->oom = 1;
		return NULL;
	}
	map[0] = 0; /* "" in both */
	/* src's strings came through tp_profile_str: already valid and cut, and without NULs. */
	for (uint32_t i = 1; i < n; i++) {
		const char *s = tp_strtab_get(&src->strs, i);
		map[i] = tp_profile_strn(p, s, strlen(s));
	}
	if (src->oom)
		p->oom = 1;
	return map;
}

int tp_args_clear(struct tp_profile *p)
{
	p->num_args = 0;
	p->num_argsets = 1;
	p->oom = 0;
	p->strs_cut = 0;
	tp_strtab_free(&p->strs);
	if (tp_strtab_init(&p->strs) != TP_OK) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	return TP_OK;
}

int tp_args_room(struct tp_profile *p, size_t nargs, size_t nsets)
{
	if (p->num_args + nargs > p->cap_args) {
		struct tp_arg *a = tp_grow(p->args, sizeof *a, p->num_args + nargs, &p->cap_args);
		if (!a) {
			p->oom = 1;
			return TP_ENOMEM;
		}
		p->args = a;
	}
	if (p->num_argsets + nsets > p->cap_argsets) {
		struct tp_argset *s =
		    tp_grow(p->argsets, sizeof *s, p->num_argsets + nsets, &p->cap_argsets);
		if (!s) {
			p->oom = 1;
			return TP_ENOMEM;
		}
		p->argsets = s;
	}
	return TP_OK;
}

int tp_args_reserve(struct tp_profile *p, const struct tp_profile *src, uint32_t *set0,
                    size_t *arg0)
{
	size_t nsets = src->num_argsets - 1, nargs = src->num_args;
	*set0 = (uint32_t)p->num_argsets;
	*arg0 = p->num_args;
	if (p->num_args + nargs > UINT32_MAX || p->num_argsets + nsets > UINT32_MAX) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	if (tp_args_room(p, nargs, nsets) != TP_OK)
		return TP_ENOMEM;
	p->num_args += nargs;
	p->num_argsets += nsets;
	return TP_OK;
}

void tp_args_copy_in(struct tp_profile *p, uint32_t set0, size_t arg0, const struct tp_profile *src,
                     const uint32_t *map)
{
	for (size_t i = 1; i < src->num_argsets; i++)
		p->argsets[set0 + i - 1] = (struct tp_argset){
		    (uint32_t)(arg0 + src->argsets[i].first), src->argsets[i].count};
	if (!src->num_args)
		return; /* p->args may be NULL: no offset from it */
	struct tp_arg *d = p->args + arg0;
	for (size_t i = 0; i < src->num_args; i++) {
		struct tp_arg a = src->args[i];
		a.key = map[a.key];
		if (a.type == TP_ARG_STR)
			a.v.s = map[a.v.s];
		d[i] = a;
	}
}

const struct tp_arg *tp_args_get(const struct tp_profile *p, uint32_t id, size_t *n)
{
	*n = 0;
	if (id == 0 || id >= p->num_argsets)
		return NULL;
	*n = p->argsets[id].count;
	return p->args + p->argsets[id].first;
}

uint32_t tp_profile_find_str(const struct tp_profile *p, const char *s)
{
	uint32_t id;
	return tp_strtab_find(&p->strs, s, strlen(s), &id) ? id : 0;
}

void tp_cap_keys_of(const struct tp_profile *p, struct tp_cap_keys *k)
{
	static const char *const name[] = {
	    TP_CAP_TYPE_STEP,  TP_CAP_TYPE_ACTIVITY, TP_CAP_TYPE_OP,          TP_CAP_KEY_STEP,
	    TP_CAP_KEY_WARMUP, TP_CAP_KEY_GRAPH,     TP_CAP_KEY_META,         TP_CAP_KEY_OP_TYPE,
	    TP_CAP_KEY_BYTES,  TP_CAP_KEY_FLOPS,     TP_CAP_KEY_WEIGHT_SHAPE, TP_CAP_KEY_CUT};
	uint32_t *const id[] = {&k->ty_step, &k->ty_act,  &k->ty_op,    &k->k_step,
	                        &k->k_warm,  &k->k_graph, &k->k_meta,   &k->k_type,
	                        &k->k_bytes, &k->k_flops, &k->k_wshape, &k->k_cut};
	_Static_assert(sizeof name / sizeof *name == sizeof id / sizeof *id, "a name per key");
	for (size_t i = 0; i < sizeof id / sizeof *id; i++)
		*id[i] = tp_profile_find_str(p, name[i]);
}

const struct tp_arg *tp_args_find(const struct tp_profile *p, uint32_t args, uint32_t key)
{
	size_t n;
	const struct tp_arg *a = key ? tp_args_get(p, args, &n) : NULL;
	for (size_t i = 0; a && i < n; i++)
		if (a[i].key == key)
			return &a[i];
	return NULL;
}

int64_t tp_arg_as_i64(const struct tp_arg *a)
{
	switch (a->type) {
	case TP_ARG_INT:
		return a->v.i;
	case TP_ARG_UINT:
		return a->v.u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)a->v.u;
	case TP_ARG_REAL:
		return a->v.d != a->v.d ? 0 : tp_f64_to_i64_clamp(a->v.d, INT64_MIN, INT64_MAX);
	default:
		return 0;
	}
}

int tp_arg_as_double(const struct tp_profile *p, const struct tp_arg *a, double *out)
{
	switch (a->type) {
	case TP_ARG_INT:
		*out = (double)a->v.i;
		return 1;
	case TP_ARG_UINT:
		*out = (double)a->v.u;
		return 1;
	case TP_ARG_REAL:
		*out = a->v.d;
		return 1;
	default: {
		const char *s = tp_str(p, a->v.s);
		char *end;
		*out = strtod(s, &end);
		return end != s;
	}
	}
}
