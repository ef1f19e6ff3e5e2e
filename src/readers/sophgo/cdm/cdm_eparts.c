/*
 * cdm_eparts.c — one engine of a keyed core file read in parts on several threads: the
 * records' id and time unwraps counted per part, then each part fills its slices already
 * unwrapped, without the two init records, and gives them their commands, interning into
 * tables of its own (struct tp_part, two generations: the fill's labels, then the commands'),
 * so that the track, its labels and its names' first uses are those of core_engine's one
 * pass.
 */
#include "readers/sophgo/cdm/cdm_int.h"

#include <stdlib.h>
#include <string.h>

void cdm_fill_label(struct tp_part *pt, struct tp_slice *s, const struct cdm_pmu *m)
{
	/* One field at a time, as the tp_slice_set_<field> setters go: the labels a track holds
	 * (the steps between included) are those one thread filling it would intern. */
	struct tp_label l = *tp_part_label_at(pt, s->label);
	if (l.bytes != m->bytes) {
		l.bytes = m->bytes;
		tp_part_set_label(pt, s, &l);
		l = *tp_part_label_at(pt, s->label);
	}
	if (l.stall != m->stall) {
		l.stall = m->stall;
		tp_part_set_label(pt, s, &l);
		l = *tp_part_label_at(pt, s->label);
	}
	if (l.depth != m->thread) {
		l.depth = m->thread;
		tp_part_set_label(pt, s, &l);
	}
}

/* Where a walk through one engine's records stands: PMU span k, its record i. */
struct rec_at {
	size_t k, i;
};

/* The next run of engine e's records from *at, at most max of them (in *len): the first
 * record's bytes. *at passes them. */
static const uint8_t *next_run(const struct cdm_eparts *ep, struct rec_at *at, size_t max,
                               size_t *len)
{
	const struct cdm_walk *w = ep->w;
	while (w->pmu[at->k].engine != ep->e || at->i >= w->pmu[at->k].count) {
		at->k++;
		at->i = 0;
	}
	const struct cdm_span *sp = &w->pmu[at->k];
	size_t rs = cdm_pmu_rec_size(ep->e), n = sp->count - at->i;
	*len = n < max ? n : max;
	const uint8_t *p = ep->data + sp->off + at->i * rs;
	at->i += *len;
	return p;
}

/* The record before the next, for the unwrap rules (cdm_id_wrapped, cdm_ts_wrapped): both
 * depend on two adjacent records as read, whatever the carries before them. */
struct unwrap_prev {
	uint32_t id;
	int64_t end; /* as read, plus a wrap when it is below its start */
};

static void prev_of(struct unwrap_prev *u, uint32_t id, uint32_t start, uint32_t end)
{
	u->id = id;
	u->end = (int64_t)end + (end < start ? CDM_WRAP : 0);
}

/* A walk through part q's records: each step gives the next record and whether the id and the
 * cycle counter wrapped between the record before it and it (no wrap before the engine's
 * first). */
struct part_walk {
	const struct cdm_eparts *ep;
	struct rec_at at;
	size_t left, run; /* records left in the part, and in the current run */
	const uint8_t *p; /* the run's next record */
	struct unwrap_prev u;
	int have; /* u holds a record */
};

static void walk_start(struct part_walk *pw, const struct cdm_eparts *ep, const struct cdm_epart *q)
{
	*pw = (struct part_walk){.ep = ep, .at = {q->k0, q->i0}, .left = q->b - q->a};
	if (q->a > 0) { /* the record before the part (k0, i0 point there) */
		size_t len;
		const uint8_t *p = next_run(ep, &pw->at, 1, &len);
		prev_of(&pw->u, tp_le32(p + 8), tp_le32(p), tp_le32(p + 4));
		pw->have = 1;
	}
}

/* The part's next record (NULL after its last), with its wraps; pw->u then holds it. */
static const uint8_t *walk_next(struct part_walk *pw, int *id_wrap, int *ts_wrap)
{
	if (!pw->left)
		return NULL;
	if (!pw->run)
		pw->p = next_run(pw->ep, &pw->at, pw->left, &pw->run);
	const uint8_t *p = pw->p;
	pw->p += cdm_pmu_rec_size(pw->ep->e);
	pw->run--;
	pw->left--;
	uint32_t id = tp_le32(p + 8), start = tp_le32(p);
	*id_wrap = pw->have && cdm_id_wrapped(pw->u.id, id);
	*ts_wrap = pw->have && cdm_ts_wrapped(pw->u.end, start);
	prev_of(&pw->u, id, start, tp_le32(p + 4));
	pw->have = 1;
	return p;
}

/* A part's label memos (struct sg_label_memo, CDM_MEMO_BITS each): the fill's and the
 * commands'. */
enum { MEMO_FILL, MEMO_CMDS, MEMOS };

/* cdm_fill_label through the fill's memo: the bytes, stall and thread packed in 64 bits decide
 * the label (a stall of 2^31 cycles or more, which does not fit, goes without the memo). */
static void fill_memo(struct tp_part *pt, struct sg_label_memo *memo, struct tp_slice *s,
                      const struct cdm_pmu *m)
{
	if (m->stall >> 31) {
		cdm_fill_label(pt, s, m);
		return;
	}
	uint64_t tup =
	    (uint64_t)m->bytes | (uint64_t)m->stall << 32 | (uint64_t)(m->thread & 1u) << 63;
	uint32_t from = s->label;
	struct sg_label_memo *e = sg_label_memo_at(memo, CDM_MEMO_BITS, from, tup);
	if (sg_label_memo_hit(e, from, tup)) {
		s->label = e->to;
		return;
	}
	cdm_fill_label(pt, s, m);
	if (!pt->oom)
		sg_label_memo_put(e, from, tup, s->label);
}

/* The memo of memo kind k of a part's memos. */
static struct sg_label_memo *memo_of(struct sg_label_memo *memos, int k)
{
	return memos + ((size_t)k << CDM_MEMO_BITS);
}

int cdm_eparts_plan(struct cdm_rd *r, struct cdm_core_read *cr, int e, size_t part,
                    struct cdm_eparts *ep)
{
	memset(ep, 0, sizeof *ep);
	struct cdm_walk *w = &cr->w;
	int t = r->ci[cr->core].track[e];
	size_t n = cr->have[e];
	if (!cr->keyed || t < 0 || (e != CDM_TIU && e != CDM_GDMA) || n < 3 ||
	    tp_split_count(n, part) < 2)
		return TP_OK;
	/* The commands core_engine would match, when it would match them one to one (or have
	 * none to match): anything else takes its section matching, in one pass. */
	size_t skip;
	const struct cdm_cmds *cmds = cdm_engine_cmds(w, cr->cmode, e, &skip);
	size_t nc = cmds ? cmds->n - skip : 0;
	if (nc && nc != n - 2)
		return TP_OK;
	size_t np = tp_split_count(n, part);
	ep->v = tp_calloc(np, sizeof *ep->v);
	ep->pt = tp_calloc(np, sizeof *ep->pt);
	if (!ep->v || !ep->pt || tp_track_reserve(r->p, t, n - 2) != TP_OK) {
		cdm_eparts_free(ep);
		return cdm_nomem(r);
	}
	ep->e = e;
	ep->t = t;
	ep->n = n;
	ep->np = np;
	ep->cmds = nc ? cmds->v + skip : NULL;
	ep->data = cr->f.data;
	ep->w = w;
	/* Each part starts at its predecessor record (the unwrap rules read it). */
	size_t k = 0, base = 0;
	for (size_t q = 0; q < np; q++) {
		struct cdm_epart *x = &ep->v[q];
		tp_split_at(n, np, q, &x->a, &x->b);
		size_t from = x->a ? x->a - 1 : 0;
		while (w->pmu[k].engine != e || from - base >= w->pmu[k].count) {
			if (w->pmu[k].engine == e)
				base += w->pmu[k].count;
			k++;
		}
		x->k0 = k;
		x->i0 = from - base;
		size_t lo = x->a > 2 ? x->a - 2 : 0, hi = x->b > 2 ? x->b - 2 : 0;
		tp_part_open(&ep->pt[q], r->p, t, lo, hi - lo, 0);
	}
	return TP_OK;
}

void cdm_epart_count(struct cdm_eparts *ep, size_t qi)
{
	struct cdm_epart *q = &ep->v[qi];
	struct part_walk pw;
	walk_start(&pw, ep, q);
	int id_wrap, ts_wrap;
	q->id_wraps = q->ts_wraps = 0;
	while (walk_next(&pw, &id_wrap, &ts_wrap)) {
		q->id_wraps += (uint64_t)id_wrap;
		q->ts_wraps += (uint64_t)ts_wrap;
	}
}

void cdm_eparts_carry(struct cdm_eparts *ep)
{
	uint64_t ids = 0, ts = 0;
	for (size_t q = 0; q < ep->np; q++) {
		ep->v[q].id_delta = (uint32_t)(ids * 65536u);
		ep->v[q].ts_off = (int64_t)ts * CDM_WRAP;
		ids += ep->v[q].id_wraps;
		ts += ep->v[q].ts_wraps;
	}
}

/* Record i of part q (m, at unwrapped times st..en, id offset by delta) onto its slice. */
static void fill_one(struct cdm_rd *r, struct cdm_eparts *ep, size_t qi, size_t i,
                     const struct cdm_pmu *m, int64_t st, int64_t en, uint32_t delta,
                     struct sg_label_memo *memo)
{
	struct cdm_epart *q = &ep->v[qi];
	struct tp_part *pt = &ep->pt[qi];
	tp_part_set_gen(pt, 0);
	if (i < 2) {
		/* An init record (step 4): its labels are the track's first, its end the
		 * handshake's. */
		struct tp_slice init;
		tp_slice_init(&init);
		cdm_fill_label(pt, &init, m);
		if (i == 1)
			ep->end1 = en; /* (one part has record 1) */
		return;
	}
	struct tp_slice *s = &r->p->tracks[ep->t].slices[i - 2];
	tp_slice_init(s);
	s->start_ns = st;
	tp_part_set_end(pt, s, en);
	s->cmd_id = m->id + delta;
	fill_memo(pt, memo_of(memo, MEMO_FILL), s, m);
	tp_part_set_gen(pt, 1);
	const struct cdm_cmd *c = ep->cmds ? &ep->cmds[i - 2] : NULL;
	cdm_apply_cmd(r, pt, i - 2, c, ep->data, ep->w, memo_of(memo, MEMO_CMDS));
	if (!c) {
		q->unmatched++;
		q->unmatched_bytes += m->bytes;
	}
}

int cdm_epart_fill(struct cdm_rd *r, struct cdm_eparts *ep, size_t qi)
{
	struct cdm_epart *q = &ep->v[qi];
	struct cdm_core_read *x = &q->x;
	x->keyed = 1;
	x->seen = tp_calloc((1u << CDM_NAME_CACHE_BITS) / 8, 1);
	struct sg_label_memo *memo = tp_calloc((size_t)MEMOS << CDM_MEMO_BITS, sizeof *memo);
	if (!x->seen || !memo) {
		tp_free(memo);
		return TP_ENOMEM;
	}
	r->job = x;
	struct part_walk pw;
	walk_start(&pw, ep, q);
	uint32_t delta = q->id_delta;
	int64_t off = q->ts_off;
	const uint8_t *p;
	int id_wrap, ts_wrap;
	for (size_t i = q->a; (p = walk_next(&pw, &id_wrap, &ts_wrap)); i++) {
		struct cdm_pmu m;
		cdm_pmu_at(p, ep->e, &m);
		delta += id_wrap ? 65536u : 0;
		off += ts_wrap ? CDM_WRAP : 0;
		fill_one(r, ep, qi, i, &m, (int64_t)m.start + off, pw.u.end + off, delta, memo);
	}
	r->job = NULL;
	tp_free(memo);
	return ep->pt[qi].oom || x->aside.oom ? TP_ENOMEM : TP_OK;
}

/* Into x (the engine's record) what its parts met, in part order: each name key's first
 * command (as one pass meets them), the wrap counters, the parts' notes and statistics. */
static int parts_into(struct cdm_eparts *ep, struct cdm_core_read *x)
{
	for (size_t q = 0; q < ep->np; q++) {
		struct cdm_core_read *y = &ep->v[q].x;
		for (size_t i = 0; i < y->nfirst; i++) {
			uint32_t key = cdm_name_key(&y->first[i]);
			if (x->seen[key >> 3] & (1u << (key & 7)))
				continue;
			struct cdm_cmd *v =
			    tp_grow(x->first, sizeof *v, x->nfirst + 1, &x->cap_first);
			if (!v)
				return TP_ENOMEM;
			x->first = v;
			v[x->nfirst++] = y->first[i];
			x->seen[key >> 3] |= (uint8_t)(1u << (key & 7));
		}
		x->id_wraps += ep->v[q].id_wraps;
		x->ts_wraps += ep->v[q].ts_wraps;
		sg_aside_move(&x->aside, &y->aside);
	}
	return TP_OK;
}

int cdm_eparts_end(struct cdm_rd *r, const struct cdm_core_read *cr, struct cdm_eparts *ep,
                   struct cdm_core_read *x)
{
	struct tp_track *tr = &r->p->tracks[ep->t];
	for (size_t q = 0; q < ep->np; q++)
		if (ep->v[q].rc)
			return cdm_nomem(r);
	tr->count = ep->n - 2; /* every slice is filled */
	if (tp_parts_merge(ep->pt, ep->np) != TP_OK) {
		tr->count = 0; /* (its slices hold the parts' ids) */
		return cdm_nomem(r);
	}
	ep->merged = 1;
	struct cdm_core_info *ci = &r->ci[cr->core];
	for (size_t q = 0; q < ep->np; q++) {
		ci->unmatched[ep->e] += ep->v[q].unmatched;
		ci->unmatched_bytes[ep->e] += ep->v[q].unmatched_bytes;
	}
	r->job = x;
	CDM_RSTATS(r)->records_read += ep->n;
	CDM_RSTATS(r)->records_dropped += 2;
	cdm_engine_head(r, cr->core, ep->e, ep->n, &ep->end1);
	r->job = NULL;
	return parts_into(ep, x) == TP_OK && !x->aside.oom ? TP_OK : cdm_nomem(r);
}

void cdm_epart_commit(struct cdm_eparts *ep, size_t q)
{
	if (ep->merged)
		tp_part_commit(&ep->pt[q]);
}

void cdm_eparts_free(struct cdm_eparts *ep)
{
	for (size_t q = 0; q < ep->np; q++) {
		struct cdm_core_read *x = &ep->v[q].x;
		tp_part_free(&ep->pt[q]);
		sg_aside_free(&x->aside);
		TP_FREE_ALL(x->seen, x->first);
	}
	TP_FREE_ALL(ep->v, ep->pt);
	memset(ep, 0, sizeof *ep);
}
