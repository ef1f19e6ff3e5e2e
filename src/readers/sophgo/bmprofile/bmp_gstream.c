/*
 * bmp_gstream.c — a global.profile chunk's node lines sorted into their node streams (core,
 * engine) on the scanning thread, and appended to the reader's node tables in one step per
 * stream by the applying thread. Owns struct gfast (bmp_int.h): what the scan can know of a
 * chunk's nodes without the chunks before it (each node's layer relative to the chunk, the
 * delta bytes between nodes whose layers are both in the chunk), and the append that fills
 * in the rest from the state carried in, giving exactly what push_node gives node by node.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <string.h>

/* The stream of (core, eng), made on first use (its arrays kept from earlier chunks). */
static struct gstream *stream(struct gfast *f, uint8_t core, uint8_t eng)
{
	int8_t k = f->map[core][eng];
	if (k >= 0)
		return &f->st[k];
	size_t cap = f->cap_st;
	if (f->nst == cap) {
		struct gstream *v = tp_grow(f->st, sizeof *v, f->nst + 1, &cap);
		if (!v) {
			f->oom = 1;
			return NULL;
		}
		memset(v + f->cap_st, 0, (cap - f->cap_st) * sizeof *v);
		f->st = v;
		f->cap_st = cap;
	}
	struct gstream *s = &f->st[f->nst];
	f->map[core][eng] = (int8_t)f->nst++;
	s->core = core;
	s->eng = eng;
	s->n = 0;
	s->nspec = 0;
	return s;
}

/* One node of the chunk on layer `sym`, as push_node would store it after the chunk's earlier
 * nodes of its stream. */
static void add_node(struct gfast *f, const struct gev *ev, int32_t sym, int keep_ids)
{
	struct gstream *s = stream(f, ev->core, ev->eng);
	if (!s || !bmp_room(&f->oom, &s->sym, sizeof *s->sym, s->n, &s->cap_sym) ||
	    !bmp_room(&f->oom, &s->ld, 1, s->n, &s->cap_ld))
		return;
	if (keep_ids && (!bmp_room(&f->oom, &s->bd, sizeof *s->bd, s->n, &s->cap_bd) ||
	                 !bmp_room(&f->oom, &s->gd, sizeof *s->gd, s->n, &s->cap_gd) ||
	                 !bmp_room(&f->oom, &s->dir, 1, s->n, &s->cap_dir)))
		return;
	int32_t prev = s->n ? s->sym[s->n - 1] : GSYM_LAST;
	if (prev >= 0 && bmp_ld_fits(prev, sym)) {
		s->ld[s->n] = (uint8_t)(sym - prev);
	} else {
		if (!bmp_room(&f->oom, &s->spec, sizeof *s->spec, s->nspec, &s->cap_spec))
			return;
		s->spec[s->nspec++] = (struct gspec){(uint32_t)s->n, sym, prev};
	}
	s->sym[s->n] = sym;
	if (keep_ids) {
		s->bd[s->n] = (uint32_t)ev->a;
		s->gd[s->n] = (uint32_t)ev->b;
		s->dir[s->n] = ev->dir;
	}
	s->n++;
}

/* Layer line ev's type and name, packed for the string table's batch (struct gfast); a name
 * the model would repair or cut, or a type past GTYPES, leaves the chunk without one. */
static void add_name(struct gfast *f, const char *text, const struct gev *ev)
{
	if (!f->names)
		return;
	unsigned k = 0;
	while (k < f->ntypes &&
	       (f->tlen[k] != ev->n || memcmp(text + f->toff[k], text + ev->off, ev->n) != 0))
		k++;
	if (!ev->dir || (k == f->ntypes && k == GTYPES)) {
		f->names = 0;
		return;
	}
	if (k == f->ntypes) {
		f->toff[k] = ev->off;
		f->tlen[k] = ev->n;
		f->ntypes++;
	}
	if (!bmp_room(&f->oom, &f->ltype, 1, f->nl, &f->cap_ltype))
		return;
	f->ltype[f->nl] = (uint8_t)k;
	if (!ev->n2)
		return;
	size_t need = f->nnb + ev->n2;
	if (need < f->nnb ||
	    !bmp_room(&f->oom, &f->nlen, sizeof *f->nlen, f->nname, &f->cap_nlen) ||
	    !bmp_room(&f->oom, &f->nb, 1, need - 1, &f->cap_nb))
		return;
	memcpy(f->nb + f->nnb, text + ev->b, ev->n2);
	f->nnb = need;
	f->nlen[f->nname++] = ev->n2;
}

/* The walk of bmp_gchunk_apply over node, layer, tensor and "end parallel." events, with the
 * current layer kept relative to the chunk. A line for the generic parser stops it: 0. */
static int walk(const char *text, const struct bmp_global *g, const struct gchunk *ch,
                struct gfast *f)
{
	int32_t cur = GSYM_CARRY;
	int last_local = 0;
	for (size_t i = 0; i < ch->nev && !f->oom; i++) {
		const struct gev *ev = &ch->ev[i];
		switch (ev->kind) {
		case EV_NODE:
			/* push_node: the first node on a layer gives the pending layer its core. */
			if (cur >= 0 && f->lcore[cur] < 0)
				f->lcore[cur] = ev->core;
			else if (cur == GSYM_CARRY && f->core_carry < 0)
				f->core_carry = ev->core;
			else if (cur == GSYM_CARRY_EP && f->core_ep < 0)
				f->core_ep = ev->core;
			add_node(f, ev, cur, g->keep_ids);
			break;
		case EV_LAYER:
			if (f->nl >= INT32_MAX ||
			    !bmp_room(&f->oom, &f->lcore, sizeof *f->lcore, f->nl, &f->cap_lcore))
				return 0;
			add_name(f, text, ev);
			f->lcore[f->nl] = -1;
			f->llast = f->nev;
			cur = (int32_t)f->nl++;
			last_local = ev->eng;
			break;
		case EV_TENSOR:
			break;
		case EV_ENDPAR:
			/* bmp_end_parallel: the layer stays only on the legacy arches and when it
			 * is a global one (a carried layer is decided by the applying thread). */
			if (cur >= 0 && (!g->keep_ids || last_local))
				cur = GSYM_NONE;
			else if (cur == GSYM_CARRY)
				cur = GSYM_CARRY_EP;
			break;
		default:
			return 0;
		}
		if (ev->kind != EV_NODE) {
			if (!bmp_room(&f->oom, &f->lev, sizeof *f->lev, f->nev, &f->cap_lev))
				return 0;
			f->lev[f->nev++] = (uint32_t)i;
		}
	}
	return !f->oom;
}

void bmp_gfast_build(const char *text, const struct bmp_global *g, struct gchunk *ch)
{
	struct gfast *f = &ch->fast;
	f->on = 0;
	f->oom = 0;
	if (g->no_nodes || g->no_layers || ch->oom || ch->nev > UINT32_MAX)
		return;
	f->nev = 0;
	f->nl = 0;
	f->names = 1;
	f->nnb = f->nname = 0;
	f->ntypes = 0;
	f->nst = 0;
	f->core_carry = f->core_ep = -1;
	memset(f->map, -1, sizeof f->map);
	f->on = walk(text, g, ch, f);
}

/* Appends one stream of the chunk: the delta bytes as built, those gspec lists (and the
 * escapes among them, in node order) from the resolved layers, the marks of the nodes that
 * fall on one, the ids. */
static int append_stream(struct bmp_global *g, const struct gstream *s, int64_t base, int32_t carry,
                         int32_t carry_ep)
{
	struct bmp_nodes *nd = &g->nodes[s->core][s->eng];
	size_t n0 = nd->n;
	if (s->n > UINT32_MAX - n0 || bmp_nodes_room(nd, g->keep_ids, s->n) != TP_OK)
		return TP_ENOMEM;
	memcpy(nd->ld + n0, s->ld, s->n);
	for (size_t k = 0; k < s->nspec; k++) {
		const struct gspec *sp = &s->spec[k];
		int32_t cur = gsym_layer(sp->sym, base, carry, carry_ep);
		int32_t prev = sp->prev == GSYM_LAST ? (n0 ? nd->last : -1)
		                                     : gsym_layer(sp->prev, base, carry, carry_ep);
		if (bmp_node_ld(nd, n0 + sp->i, prev, cur) != TP_OK)
			return TP_ENOMEM;
	}
	for (size_t i = (n0 + BMP_NODE_MARK - 1) / BMP_NODE_MARK * BMP_NODE_MARK; i < n0 + s->n;
	     i += BMP_NODE_MARK)
		nd->mark[nd->nmark++] = gsym_layer(s->sym[i - n0], base, carry, carry_ep);
	if (g->keep_ids) {
		memcpy(nd->bd_id + n0, s->bd, s->n * sizeof *s->bd);
		memcpy(nd->gdma_id + n0, s->gd, s->n * sizeof *s->gd);
		memcpy(nd->dir + n0, s->dir, s->n);
	}
	if (s->n)
		nd->last = gsym_layer(s->sym[s->n - 1], base, carry, carry_ep);
	nd->n = n0 + s->n;
	return TP_OK;
}

int bmp_gfast_nodes(struct bmp_global *g, const struct gfast *f, int64_t base, int32_t carry,
                    int32_t carry_ep)
{
	for (size_t k = 0; k < f->nst; k++)
		if (append_stream(g, &f->st[k], base, carry, carry_ep) != TP_OK)
			return TP_ENOMEM;
	return TP_OK;
}

/* The records of the chunk's layers but its last (gfast.recs), as add_layer and the apply
 * would leave them: untimed, without tensors or commands. */
static void fill_recs(const struct gchunk *ch, const struct gfast *f)
{
	uint32_t name = f->name0;
	size_t k = 0;
	for (size_t j = 0; j < f->nev && k + 1 < f->nl; j++) {
		const struct gev *ev = &ch->ev[f->lev[j]];
		if (ev->kind != EV_LAYER)
			continue;
		uint8_t t = f->ltype[k];
		struct tp_layer l = {.id = (int32_t)ev->a,
		                     .type = f->tid[t],
		                     .name = ev->n2 ? name++ : 0,
		                     .core = f->lcore[k],
		                     .subnet = f->subnet,
		                     .group = -1,
		                     .is_local = ev->eng,
		                     .is_data_move = f->dm[t],
		                     .end_ns = -1};
		tp_layer_span_put(&f->span, k++, &l);
	}
}

void bmp_gchunk_fill(struct gchunk *ch)
{
	struct gfast *f = &ch->fast;
	if (!f->fill)
		return;
	tp_strtab_fill_unique(f->run, f->nrun, f->nlen, f->nb);
	if (f->recs)
		fill_recs(ch, f);
	f->fill = 0;
	f->recs = 0;
}

void bmp_gfast_free(struct gfast *f)
{
	for (size_t k = 0; k < f->cap_st; k++) {
		struct gstream *s = &f->st[k];
		TP_FREE_ALL(s->sym, s->ld, s->bd, s->gd, s->dir, s->spec);
	}
	TP_FREE_ALL(f->st, f->lev, f->lcore, f->nb, f->nlen, f->ltype, f->run);
	memset(f, 0, sizeof *f);
}
