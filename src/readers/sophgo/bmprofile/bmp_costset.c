/*
 * bmp_costset.c — the cost figures of the TIU commands without argument sets of the PerfAI
 * path (bmp_perfai.c), as argument sets shared by every command with the same cost entry:
 * the table of distinct entries and the parts that find them on the threads.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

/* One argument set per distinct cost entry (Alg Ops, uArch Ops, Alg Cycle, uArch Rate as the
 * vendor prints them), in an open-addressing table keyed by the entry's figures. */
struct cost_set {
	uint64_t alg, uarch;
	uint32_t cycle, args; /* args 0 = empty slot */
};
struct cost_sets {
	struct cost_set *v;
	size_t cap, n; /* cap a power of two, n < cap / 2 */
};

static size_t cost_hash(const struct tp_cost *c, size_t cap)
{
	uint64_t h = c->alg_ops * 0x9E3779B97F4A7C15u ^ c->uarch_ops * 0xC2B2AE3D27D4EB4Fu ^
	             (uint64_t)c->alg_cycle * 0x165667B19E3779F9u;
	return (size_t)(h ^ h >> 29) & (cap - 1);
}

static int cost_set_used(const void *e)
{
	return ((const struct cost_set *)e)->args != 0;
}

static size_t cost_set_hash(const void *e, size_t cap)
{
	const struct cost_set *x = e;
	struct tp_cost k = {.alg_ops = x->alg, .uarch_ops = x->uarch, .alg_cycle = x->cycle};
	return cost_hash(&k, cap);
}

/* The slot of entry c (empty when absent); grows the table first when half full. */
static struct cost_set *cost_slot(struct cost_sets *s, const struct tp_cost *c)
{
	if (2 * (s->n + 1) > s->cap) {
		struct cost_set *v =
		    tp_oa_grow(s->v, &s->cap, 64, sizeof *v, cost_set_used, cost_set_hash);
		if (!v)
			return NULL;
		s->v = v;
	}
	size_t j = cost_hash(c, s->cap);
	while (s->v[j].args && !(s->v[j].alg == c->alg_ops && s->v[j].uarch == c->uarch_ops &&
	                         s->v[j].cycle == c->alg_cycle))
		j = (j + 1) & (s->cap - 1);
	return &s->v[j];
}

/* The cost figures of the TIU commands of cores 0..nc-1 (tiu slices cr[k]) that carry no
 * argument set, as sets shared by every command with the same cost entry: without per-command
 * detail (large dumps) they cost nothing per command, and the traces still carry each
 * command's uArch Rate. The sets are made in the order of their entries' first use (core by
 * core, command by command); that order is found in parts of COST_PART commands of a core
 * (fixed by the data) on the threads, each part listing its distinct entries in first-use
 * order, so that the calling thread only goes through those lists in part order. */
#define COST_PART 65536

struct cost_part {
	struct bmp_part p;    /* TIU slices */
	struct cost_sets d;   /* the part's distinct entries; args: 1 + index in ord */
	struct cost_set *ord; /* those entries in first-use order; args: the set, once made */
	size_t nord, cap_ord;
	uint32_t *loc; /* per slice: 1 + its entry's index in ord, 0 = none */
};

/* Step 1 of a part (a thread): its slices' entries, its distinct ones in first-use order. */
static void cost_part_scan(void *v, size_t k)
{
	struct bmp_part_job *cj = v;
	struct cost_part *cp = (struct cost_part *)cj->part + k;
	const struct tp_track *tr = &cj->r->p->tracks[bmp_eng_track(cj->r, cp->p.k, cp->p.e)];
	if (!(cp->loc = tp_calloc(cp->p.n, sizeof *cp->loc))) {
		cp->p.oom = 1;
		return;
	}
	for (size_t i = 0; i < cp->p.n; i++) {
		struct tp_cost c;
		size_t si = cp->p.first + i;
		if (!tr->cost || tr->slices[si].args || !tp_track_get_cost(tr, si, &c))
			continue;
		struct cost_set *e = cost_slot(&cp->d, &c), *o = NULL;
		if (!e ||
		    (!e->args && !(o = tp_push(&cp->ord, sizeof *o, &cp->nord, &cp->cap_ord)))) {
			cp->p.oom = 1;
			return;
		}
		if (!e->args) {
			*o = (struct cost_set){c.alg_ops, c.uarch_ops, c.alg_cycle, 0};
			*e = (struct cost_set){c.alg_ops, c.uarch_ops, c.alg_cycle,
			                       (uint32_t)cp->nord};
			cp->d.n++;
		}
		cp->loc[i] = e->args;
	}
}

/* Step 3 of a part (a thread): its slices get their sets. */
static void cost_part_set(void *v, size_t k)
{
	struct bmp_part_job *cj = v;
	struct cost_part *cp = (struct cost_part *)cj->part + k;
	struct tp_slice *sl =
	    cj->r->p->tracks[bmp_eng_track(cj->r, cp->p.k, cp->p.e)].slices + cp->p.first;
	for (size_t i = 0; i < cp->p.n; i++)
		if (cp->loc[i])
			sl[i].args = cp->ord[cp->loc[i] - 1].args;
}

/* Step 2 (the calling thread, in part order): a set for each entry not seen before. */
static int cost_sets_make(struct bmp_rd *r, struct cost_part *part, size_t np)
{
	struct cost_sets s = {NULL, 0, 0};
	int rc = TP_OK;
	for (size_t k = 0; k < np && rc == TP_OK; k++) {
		struct cost_part *cp = &part[k];
		for (size_t j = 0; j < cp->nord && rc == TP_OK; j++) {
			struct cost_set *o = &cp->ord[j];
			struct tp_cost c = {
			    .alg_ops = o->alg, .uarch_ops = o->uarch, .alg_cycle = o->cycle};
			struct cost_set *e = cost_slot(&s, &c);
			if (!e) {
				rc = bmp_nomem(r);
				break;
			}
			if (!e->args) {
				char buf[32];
				tp_args_begin(r->p);
				tp_args_add_uint(r->p, "Alg Ops", c.alg_ops);
				tp_args_add_uint(r->p, "uArch Ops", c.uarch_ops);
				tp_args_add_uint(r->p, "Alg Cycle", c.alg_cycle);
				sg_pct1(buf, sizeof buf, (double)c.alg_ops, (double)c.uarch_ops);
				tp_args_add_str(r->p, "uArch Rate", buf);
				uint32_t id = tp_args_end(r->p);
				if (!id) {
					rc = bmp_nomem(r);
					break;
				}
				*e = (struct cost_set){c.alg_ops, c.uarch_ops, c.alg_cycle, id};
				s.n++;
			}
			o->args = e->args;
		}
	}
	tp_free(s.v);
	return rc;
}

/* bmp_parts.release of a cost part. */
static void cost_part_free(void *v)
{
	struct cost_part *cp = v;
	TP_FREE_ALL(cp->d.v, cp->ord, cp->loc);
}

int bmp_share_cost_args(struct bmp_rd *r, const struct core_range *cr, unsigned nc)
{
	struct bmp_parts ps = {.size = COST_PART,
	                       .elem = sizeof(struct cost_part),
	                       .neng = 1,
	                       .scan = cost_part_scan,
	                       .release = cost_part_free};
	if (bmp_parts_scan(r, cr, nc, &ps) != TP_OK)
		return bmp_nomem(r);
	int rc = cost_sets_make(r, ps.v, ps.n);
	if (rc == TP_OK) {
		struct bmp_part_job cj = {r, ps.v};
		tp_par_run((unsigned)r->jobs, ps.n, cost_part_set, &cj);
	}
	bmp_parts_free(&ps);
	return rc;
}
