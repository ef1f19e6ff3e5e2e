/*
 * bmp_names.c — the commands of the PerfAI path without argument sets: each slice's descriptor
 * fields and TIU cost (bmp_fill_part, a part of an engine's slices at a time, on any thread),
 * then their names interned in the order one thread would intern them (bmp_names_scan on the
 * threads, bmp_names_discover in core order) and set per core (bmp_names_apply). Also the
 * cutting of a core's slices into parts that threads scan (bmp_parts_scan).
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <stdlib.h>
#include <string.h>

/* Slice name marks left by bmp_fill_part for bmp_names_discover and bmp_names_apply: a command with
 * no descriptor, or the descriptor's name-cache key. */
#define NAME_NONE UINT32_MAX

/* bmp_fill_part's and bmp_names_apply's memos of label rewrites (struct sg_label_memo): in
 * the fill a slice's new label depends on its old one and its command's name key, kind,
 * direction and dtype; in the names' pass on its old one only. */
#define LABEL_MEMO_BITS 13
#define LABEL_MEMO ((size_t)1 << LABEL_MEMO_BITS)

/* Slices a part fills between releases of the mapped commands it has read. */
#define BMP_PART_DROP 8192

/* The per-command work of part pt of an engine e track without argument sets (detail off):
 * kind, direction, dtype, dependency and TIU cost from the descriptor, and in s->name the
 * name-cache key (or NAME_NONE) for bmp_names_discover, which interns the names in slice order
 * afterwards. Touches only the part's slices and the command buffer (through a cursor of its
 * own unless the part is direct): parts may run on worker threads. */
void bmp_fill_part(struct bmp_rd *r, struct bmp_core_cmds *cc, struct tp_part *pt, int e)
{
	struct sg_label_memo *memo = tp_calloc(LABEL_MEMO, sizeof *memo);
	struct tp_track *tr = &r->p->tracks[pt->track];
	struct bmp_cmdcur cur = {0};
	const struct bmp_cmdbuf *cb = &cc->cb[e];
	/* A direct part looks up through a copy of the buffer, stored back at the end: each
	 * lookup moves its cursor, and the other engine's buffer, which another thread uses,
	 * shares cache lines with it. */
	struct bmp_cmdbuf own = pt->direct ? cc->cb[e] : (struct bmp_cmdbuf){0};
	int have = cc->have[e];
	size_t drop_from = SIZE_MAX; /* a part's mapped commands read so far, from here */
	for (size_t i = 0; i < pt->n; i++) {
		struct bmp_cmd c;
		struct tp_slice *s = &tr->slices[pt->first + i];
		if (!pt->direct && cb->mapped && cur.id) {
			/* What the part has read goes back as it goes, as the lazy index drops what
			 * it passed: parts in flight then hold little of the file in memory. */
			if (drop_from == SIZE_MAX)
				drop_from = cur.off;
			else if (i % BMP_PART_DROP == 0 && cur.off > drop_from) {
				tp_map_drop(cb->data, drop_from, cur.off);
				drop_from = cur.off;
			}
		}
		if (!have || !(pt->direct ? bmp_cmdbuf_get(&own, s->cmd_id, &c)
		                          : bmp_cmdbuf_at(cb, &cur, s->cmd_id, &c))) {
			tp_part_set_name(pt, s, NAME_NONE);
			continue;
		}
		uint64_t tup =
		    (uint64_t)c.key << 24 | (uint64_t)c.kind << 16 | (uint64_t)c.dir << 8 | c.dtype;
		struct sg_label_memo *m =
		    memo ? sg_label_memo_at(memo, LABEL_MEMO_BITS, s->label, tup) : NULL;
		if (m && sg_label_memo_hit(m, s->label, tup)) {
			s->label = m->to;
		} else {
			struct tp_label l = *tp_part_label_at(pt, s->label);
			l.name = c.key;
			l.kind = c.kind;
			l.dir = c.dir;
			l.dtype = c.dtype;
			uint32_t from = s->label;
			if (tp_part_set_label(pt, s, &l) == TP_OK && m)
				sg_label_memo_put(m, from, tup, s->label);
		}
		s->dep_id = c.dep;
		if (e == BMP_ENG_TIU && c.have_desc) {
			struct tp_cost kc = {0};
			sg_tiu_cost(r->chip, &c.desc, c.raw, &kc);
			tp_part_set_cost(pt, pt->first + i, &kc);
		}
	}
	if (drop_from != SIZE_MAX && cur.off > drop_from)
		tp_map_drop(cb->data, drop_from, cur.off);
	if (pt->direct)
		cc->cb[e] = own;
	tp_free(memo);
}

/* bmp_names_discover's step for slice s of core k's engine e: a name-cache slot's names at its
 * first use, the names of a command without descriptor at the first such slice. 1 when the
 * slice's command cannot be read (its name becomes NAME_NONE; the slot stays unset). */
static int name_one(struct bmp_rd *r, struct bmp_core_cmds *cc, int e, struct tp_track *tr,
                    struct tp_slice *s, uint32_t none[2], int *have_none)
{
	/* bmp_fill_part left the name-cache key in the label's name. */
	uint32_t key = tp_slice_label(tr, s)->name;
	struct bmp_cmd c;
	int failed = 0;
	if (key != NAME_NONE && r->cache[key % BMP_NAME_CACHE].set)
		return 0;
	if (key != NAME_NONE && !bmp_cmdbuf_get(&cc->cb[e], s->cmd_id, &c)) {
		tp_slice_set_name(r->p, tr, s, NAME_NONE); /* cannot happen */
		failed = 1;
	} else if (key != NAME_NONE) {
		/* First use of this cache slot: the command's own names. */
		struct bmp_name_slot *ns = &r->cache[key % BMP_NAME_CACHE];
		ns->name = tp_profile_str(r->p, c.name);
		ns->type = tp_profile_str(r->p, c.type);
		ns->set = 1;
		return 0;
	}
	if (!*have_none) {
		none[0] = tp_profile_str(r->p, "cmd_type_-1_0");
		none[1] = tp_profile_str(r->p, "cmd_type_-1");
		*have_none = 1;
	}
	return failed;
}

/* name_one over slices [first + i0, first + n) of core k's engine e. */
static void name_range(struct bmp_rd *r, struct bmp_core_cmds *cc, unsigned k, int e, size_t first,
                       size_t i0, size_t n, uint32_t none[2], int *have_none)
{
	struct tp_track *tr = &r->p->tracks[bmp_eng_track(r, k, e)];
	for (size_t i = i0; i < n; i++)
		(void)name_one(r, cc, e, tr, &tr->slices[first + i], none, have_none);
}

/* Part q of ps (its struct bmp_part head). */
static struct bmp_part *part_at(const struct bmp_parts *ps, size_t q)
{
	return (struct bmp_part *)(void *)((char *)ps->v + q * ps->elem);
}

int bmp_parts_scan(struct bmp_rd *r, const struct core_range *cr, unsigned nc, struct bmp_parts *ps)
{
	size_t np = 0;
	for (unsigned k = 0; k < nc; k++) {
		ps->core0[k] = np;
		for (int e = 0; e < ps->neng; e++)
			np += (cr[k].n[e] + ps->size - 1) / ps->size;
	}
	ps->core0[nc] = np;
	ps->n = 0;
	ps->v = tp_calloc(np ? np : 1, ps->elem);
	if (!ps->v)
		return TP_ENOMEM;
	for (unsigned k = 0; k < nc; k++)
		for (int e = 0; e < ps->neng; e++)
			for (size_t i = 0; i < cr[k].n[e]; i += ps->size) {
				*part_at(ps, ps->n++) = (struct bmp_part){
				    .k = k,
				    .e = e,
				    .first = cr[k].first[e] + i,
				    .n = cr[k].n[e] - i < ps->size ? cr[k].n[e] - i : ps->size};
			}
	struct bmp_part_job job = {r, ps->v};
	tp_par_run((unsigned)r->jobs, np, ps->scan, &job);
	int oom = 0;
	for (size_t q = 0; q < np; q++)
		oom |= part_at(ps, q)->oom;
	if (!oom)
		return TP_OK;
	bmp_parts_free(ps);
	return TP_ENOMEM;
}

void bmp_parts_free(struct bmp_parts *ps)
{
	for (size_t q = 0; ps->v && q < ps->n; q++)
		ps->release(part_at(ps, q));
	tp_free(ps->v);
	ps->v = NULL;
	ps->n = 0;
}

/* The names the slices need are interned in the order bmp_fill_cmd interns them (core by core,
 * TIU then GDMA, slice order) so that string ids are those of one thread. Which slices intern
 * is found in parts of NAME_PART slices of a core's engine (fixed by the data) on the threads:
 * the slices where a name-cache slot is used for the first time in the part, and the part's
 * first slice without a name; bmp_names_discover (the calling thread) then runs name_one on those
 * slices only, in order, since a slot's later uses in the part intern nothing. */
#define NAME_PART 65536

struct name_part {
	struct bmp_part p;
	uint32_t *at; /* the slices (offsets in the part) name_one may intern at */
	size_t nat, cap_at;
};

static void name_part_scan(void *v, size_t q)
{
	struct bmp_part_job *nj = v;
	struct name_part *np = (struct name_part *)nj->part + q;
	const struct tp_track *tr = &nj->r->p->tracks[bmp_eng_track(nj->r, np->p.k, np->p.e)];
	uint64_t *seen = tp_calloc(BMP_NAME_CACHE / 64, sizeof *seen);
	int none_seen = 0;
	if (!seen) {
		np->p.oom = 1;
		return;
	}
	for (size_t i = 0; i < np->p.n; i++) {
		uint32_t key = tp_slice_label(tr, &tr->slices[np->p.first + i])->name, slot;
		if (key == NAME_NONE) {
			if (none_seen)
				continue;
			none_seen = 1;
		} else {
			slot = key % BMP_NAME_CACHE;
			if (seen[slot / 64] >> (slot % 64) & 1)
				continue;
			seen[slot / 64] |= (uint64_t)1 << (slot % 64);
		}
		uint32_t *a = tp_push(&np->at, sizeof *a, &np->nat, &np->cap_at);
		if (!a) {
			np->p.oom = 1;
			break;
		}
		*a = (uint32_t)i;
	}
	tp_free(seen);
}

void bmp_names_discover(struct bmp_rd *r, struct bmp_core_cmds *cc, unsigned k,
                        const struct bmp_parts *ps, uint32_t none[2], int *have_none)
{
	const struct name_part *part = (const struct name_part *)ps->v + ps->core0[k];
	size_t n = ps->core0[k + 1] - ps->core0[k];
	for (size_t q = 0; q < n; q++) {
		const struct name_part *np = &part[q];
		struct tp_track *tr = &r->p->tracks[bmp_eng_track(r, k, np->p.e)];
		for (size_t j = 0; j < np->nat; j++)
			if (name_one(r, cc, np->p.e, tr, &tr->slices[np->p.first + np->at[j]], none,
			             have_none)) {
				/* The slot stays unset: the part's next uses of it try again. */
				name_range(r, cc, k, np->p.e, np->p.first, np->at[j] + 1, np->p.n,
				           none, have_none);
				break;
			}
	}
}

/* bmp_parts.release of a name part. */
static void name_part_free(void *v)
{
	tp_free(((struct name_part *)v)->at);
}

int bmp_names_scan(struct bmp_rd *r, const struct core_range *cr, unsigned nc, struct bmp_parts *ps)
{
	*ps = (struct bmp_parts){.size = NAME_PART,
	                         .elem = sizeof(struct name_part),
	                         .neng = 2,
	                         .scan = name_part_scan,
	                         .release = name_part_free};
	return bmp_parts_scan(r, cr, nc, ps);
}

void bmp_names_apply(struct bmp_rd *r, unsigned k, const struct core_range *cr,
                     const uint32_t none[2])
{
	struct sg_label_memo *memo = tp_calloc(LABEL_MEMO, sizeof *memo);
	for (int e = 0; e < 2; e++) {
		int t = bmp_eng_track(r, k, e);
		size_t first = cr->first[e];
		size_t n = cr->n[e];
		if (memo)
			memset(memo, 0, LABEL_MEMO * sizeof *memo);
		for (size_t i = 0; i < n; i++) {
			struct tp_track *tr = &r->p->tracks[t];
			struct tp_slice *s = &tr->slices[first + i];
			/* The name cache does not change during this pass, so the label a slice
			 * gets depends only on the label it has. */
			struct sg_label_memo *m =
			    memo ? sg_label_memo_at(memo, LABEL_MEMO_BITS, s->label, 0) : NULL;
			if (m && sg_label_memo_hit(m, s->label, 0)) {
				s->label = m->to;
				continue;
			}
			struct tp_label l = *tp_slice_label(tr, s);
			if (l.name == NAME_NONE) {
				l.name = none[0];
				l.type = none[1];
			} else {
				const struct bmp_name_slot *ns = &r->cache[l.name % BMP_NAME_CACHE];
				l.name = ns->name;
				l.type = ns->type;
			}
			uint32_t from = s->label;
			if (tp_slice_set_label(r->p, tr, s, &l) == TP_OK && m)
				sg_label_memo_put(m, from, 0, s->label);
		}
	}
	tp_free(memo);
}
