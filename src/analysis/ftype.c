/*
 * ftype.c — the per-Function-Type TIU table (PerfDoc TIU_c sheet; sophgo-costmodel.md §4):
 * one table per core, built during the driver's per-core passes, and the Overall one merged
 * from them, each with its total row. Owns the tables' arrays (struct tp_core_stats.ftypes), freed
 * by tp_analysis_free.
 */
#include "analysis/analysis_int.h"

#include <string.h>

/* The row of `type` in c's Function Type table, appended when new (linear search with a
 * last-hit cache: a dump has a few dozen types); NULL when out of memory. */
static struct tp_ftype_stats *ftype_row(struct tp_core_stats *c, size_t *cap, size_t *last,
                                        uint32_t type)
{
	size_t j = *last;
	if (j >= c->num_ftypes || c->ftypes[j].type != type) {
		for (j = 0; j < c->num_ftypes && c->ftypes[j].type != type; j++)
			;
		if (j == c->num_ftypes) {
			struct tp_ftype_stats *v = tp_grow(c->ftypes, sizeof *v, j + 1, cap);
			if (!v)
				return NULL;
			c->ftypes = v;
			memset(&v[j], 0, sizeof *v);
			v[j].type = type;
			c->num_ftypes++;
		}
		*last = j;
	}
	return &c->ftypes[j];
}

int tp_analysis_ftype_join(struct tp_core_stats *c, size_t *cap, size_t *last,
                           const struct tp_ftype_stats *f)
{
	struct tp_ftype_stats *r = ftype_row(c, cap, last, f->type);
	if (!r)
		return TP_ENOMEM;
	r->instr += f->instr;
	r->asic_cycle += f->asic_cycle;
	r->alg_ops += f->alg_ops;
	r->uarch_ops += f->uarch_ops;
	r->alg_cycle += f->alg_cycle;
	return TP_OK;
}

/* Adds slice i of TIU track t to a Function Type table. */
int tp_analysis_ftype_add(struct tp_core_stats *c, size_t *cap, size_t *last, uint32_t type,
                          uint64_t asic, const struct tp_cost *k)
{
	struct tp_ftype_stats *f = ftype_row(c, cap, last, type);
	if (!f)
		return TP_ENOMEM;
	f->instr++;
	f->asic_cycle += asic;
	if (k && k->valid) {
		f->alg_ops += k->alg_ops;
		f->uarch_ops += k->uarch_ops;
		f->alg_cycle += k->alg_cycle;
	}
	return TP_OK;
}

/* Sorts a Function Type table by name (insertion sort: a few dozen rows, and qsort would need
 * the profile in a global). */
void tp_analysis_sort_ftypes(const struct tp_profile *p, struct tp_core_stats *c)
{
	for (size_t i = 1; i < c->num_ftypes; i++) {
		struct tp_ftype_stats x = c->ftypes[i];
		size_t j = i;
		while (j > 0 && strcmp(tp_str(p, c->ftypes[j - 1].type), tp_str(p, x.type)) > 0) {
			c->ftypes[j] = c->ftypes[j - 1];
			j--;
		}
		c->ftypes[j] = x;
	}
}

/* The total row of c's Function Type table (struct tp_core_stats.ftype_total). */
static void total_row(struct tp_core_stats *c)
{
	const struct tp_engine_stats *tiu = &c->eng[TP_TRACK_TIU];
	struct tp_ftype_stats f = {0};
	for (size_t k = 0; k < c->num_ftypes; k++) {
		f.instr += c->ftypes[k].instr;
		f.asic_cycle += c->ftypes[k].asic_cycle;
	}
	f.alg_ops = tiu->alg_ops;
	f.uarch_ops = tiu->uarch_ops;
	f.alg_cycle = tiu->alg_cycle;
	c->ftype_total = f;
}

int tp_analysis_ftype_overall(const struct tp_profile *p, struct tp_analysis *a)
{
	size_t cap = 0, last = 0;
	for (size_t ci = 0; ci < a->num_cores; ci++)
		for (size_t j = 0; j < a->cores[ci].num_ftypes; j++) {
			const struct tp_ftype_stats *f = &a->cores[ci].ftypes[j];
			/* Adds a row for the type (counting one command), then the rest. */
			int st = tp_analysis_ftype_add(&a->overall, &cap, &last, f->type, 0, NULL);
			if (st != TP_OK)
				return st;
			struct tp_ftype_stats *o = &a->overall.ftypes[last];
			o->instr += f->instr - 1;
			o->asic_cycle += f->asic_cycle;
			o->alg_ops += f->alg_ops;
			o->uarch_ops += f->uarch_ops;
			o->alg_cycle += f->alg_cycle;
		}
	tp_analysis_sort_ftypes(p, &a->overall);
	for (size_t ci = 0; ci < a->num_cores; ci++)
		total_row(&a->cores[ci]);
	total_row(&a->overall);
	return TP_OK;
}
