/*
 * layers.c — the layer table (struct tp_layer_table in model.h): 40-byte records in fixed
 * chunks, the wide side table for layers whose values do not fit a record, the tensor-range
 * side table, and the accessors that read a layer back whole or in part.
 */
#include "model/model.h"
#include "model/model_int.h"

#include <string.h>

/* One layer in 40 bytes. Fields hold a struct tp_layer exactly when rec_pack says it fits;
 * otherwise only LR_WIDE is set and the layer lives in the wide side table. */
struct tp_layer_rec {
	uint32_t begin_lo; /* begin_ns bits 0..31 (timed layers) */
	uint16_t begin_hi; /* begin_ns bits 32..47 */
	uint16_t bits;     /* LR_* flags, core + 1 and device (below) */
	uint32_t dur;      /* end_ns - begin_ns */
	int32_t id;
	uint32_t type, name; /* strtab ids */
	uint32_t tiu_first, gdma_first;
	uint16_t tiu_span, gdma_span; /* last - first when first != 0 */
	uint16_t subnet, group;       /* value + 1: 0 = -1 */
};
_Static_assert(sizeof(struct tp_layer_rec) == 40, "a layer record must stay 40 bytes");

struct tp_layer_wide {
	uint32_t index;
	struct tp_layer l;
};

struct tp_layer_tens {
	uint32_t index;
	uint32_t first, num;
};

enum {
	LR_LOCAL = 1u << 0,
	LR_DATA_MOVE = 1u << 1,
	LR_TIMED = 1u << 2,
	LR_WIDE = 1u << 3,
	LR_TENS = 1u << 4,
	LR_CORE_SHIFT = 5, /* 6 bits: core + 1, so -1..62 */
	LR_CORE_MAX = 62,
	LR_DEV_SHIFT = 11, /* 5 bits: device 0..31 */
	LR_DEV_MAX = 31,
};
#define LR_BEGIN_MAX ((int64_t)1 << 48)

static struct tp_layer_rec *rec_at(const struct tp_layer_table *t, size_t i)
{
	return &t->chunks[i / TP_LAYER_CHUNK][i % TP_LAYER_CHUNK];
}

/* Packs l into *r; returns 0 when some value does not fit (r is then unspecified). */
static int rec_pack(const struct tp_layer *l, struct tp_layer_rec *r)
{
	memset(r, 0, sizeof *r);
	if (l->core < -1 || l->core > LR_CORE_MAX || l->device < 0 || l->device > LR_DEV_MAX ||
	    l->subnet < -1 || l->subnet > 0xFFFE || l->group < -1 || l->group > 0xFFFE ||
	    l->is_local > 1 || l->is_data_move > 1)
		return 0;
	unsigned bits = (unsigned)(l->core + 1) << LR_CORE_SHIFT | (unsigned)l->device
	                                                               << LR_DEV_SHIFT;
	bits |= l->is_local ? LR_LOCAL : 0u;
	bits |= l->is_data_move ? LR_DATA_MOVE : 0u;
	int64_t begin = 0, dur = 0;
	if (l->begin_ns <= l->end_ns) {
		if (l->begin_ns < 0 || l->begin_ns >= LR_BEGIN_MAX ||
		    (uint64_t)(l->end_ns - l->begin_ns) > UINT32_MAX)
			return 0;
		bits |= LR_TIMED;
		begin = l->begin_ns;
		dur = l->end_ns - l->begin_ns;
	}
	const uint32_t first[2] = {l->tiu_first, l->gdma_first},
	               last[2] = {l->tiu_last, l->gdma_last};
	uint16_t span[2] = {0, 0};
	for (int e = 0; e < 2; e++) {
		if (first[e] == 0 && last[e] == 0)
			continue;
		if (first[e] == 0 || last[e] < first[e] || last[e] - first[e] > 0xFFFF)
			return 0;
		span[e] = (uint16_t)(last[e] - first[e]);
	}
	*r = (struct tp_layer_rec){.begin_lo = (uint32_t)begin,
	                           .begin_hi = (uint16_t)((uint64_t)begin >> 32),
	                           .bits = (uint16_t)bits,
	                           .dur = (uint32_t)dur,
	                           .id = l->id,
	                           .type = l->type,
	                           .name = l->name,
	                           .tiu_first = l->tiu_first,
	                           .gdma_first = l->gdma_first,
	                           .tiu_span = span[0],
	                           .gdma_span = span[1],
	                           .subnet = (uint16_t)(l->subnet + 1),
	                           .group = (uint16_t)(l->group + 1)};
	return 1;
}

static void rec_unpack(const struct tp_layer_rec *r, struct tp_layer *l)
{
	memset(l, 0, sizeof *l);
	l->id = r->id;
	l->type = r->type;
	l->name = r->name;
	l->device = (int32_t)(r->bits >> LR_DEV_SHIFT & LR_DEV_MAX);
	l->core = (int32_t)(r->bits >> LR_CORE_SHIFT & 0x3F) - 1;
	l->subnet = (int32_t)r->subnet - 1;
	l->group = (int32_t)r->group - 1;
	l->is_local = (r->bits & LR_LOCAL) != 0;
	l->is_data_move = (r->bits & LR_DATA_MOVE) != 0;
	l->tiu_first = r->tiu_first;
	l->tiu_last = r->tiu_first ? r->tiu_first + r->tiu_span : 0;
	l->gdma_first = r->gdma_first;
	l->gdma_last = r->gdma_first ? r->gdma_first + r->gdma_span : 0;
	if (r->bits & LR_TIMED) {
		l->begin_ns = (int64_t)((uint64_t)r->begin_hi << 32 | r->begin_lo);
		l->end_ns = l->begin_ns + (int64_t)r->dur;
	} else {
		l->begin_ns = 0;
		l->end_ns = -1;
	}
}

/* Index of the first entry of a side table (elements of `size` bytes starting with a uint32_t
 * layer index, sorted) whose index is >= i. */
static size_t side_find(const void *arr, size_t n, size_t size, uint32_t i)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t v;
		memcpy(&v, (const char *)arr + mid * size, sizeof v);
		if (v < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Puts (has) or removes (!has) the entry of layer i in a sorted side table; `val` is the
 * whole entry. Appending in index order (the readers' case) costs no move. */
static int side_put(struct tp_profile *p, void **arr, size_t *n, size_t *cap, size_t size,
                    uint32_t i, int has, const void *val)
{
	char *a = *arr;
	uint32_t at = 0;
	if (*n)
		memcpy(&at, a + (*n - 1) * size, sizeof at);
	size_t k = !*n || at < i ? *n : side_find(a, *n, size, i);
	int found = 0;
	if (k < *n) {
		memcpy(&at, a + k * size, sizeof at);
		found = at == i;
	}
	if (!has) {
		if (found) {
			memmove(a + k * size, a + (k + 1) * size, (*n - k - 1) * size);
			(*n)--;
		}
		return TP_OK;
	}
	if (!found) {
		void *g = tp_grow(*arr, size, *n + 1, cap);
		if (!g) {
			p->oom = 1;
			return TP_ENOMEM;
		}
		*arr = a = g;
		memmove(a + (k + 1) * size, a + k * size, (*n - k) * size);
		(*n)++;
	}
	memcpy(a + k * size, val, size);
	return TP_OK;
}

/* Stores l as layer i, whose record (zeroed for a new layer) tells which side entries it
 * has; the side tables are only touched when an entry is needed or goes away. `fresh`: i is
 * a new layer, whose record is known to be zero and is not read: a read before the first
 * write of a calloc'd page maps the shared zero page, and the write then takes a second
 * fault whose TLB flush interrupts every other thread of the process. */
static int layer_store(struct tp_profile *p, size_t i, const struct tp_layer *l, int fresh)
{
	struct tp_layer_table *t = &p->layer_tab;
	struct tp_layer_rec *dst = rec_at(t, i), r;
	unsigned old = fresh ? 0 : dst->bits;
	uint32_t ix = (uint32_t)i;
	if (rec_pack(l, &r)) {
		if (l->num_tensors) {
			struct tp_layer_tens te = {ix, l->first_tensor, l->num_tensors};
			if (side_put(p, (void **)&t->tens, &t->num_tens, &t->cap_tens, sizeof te,
			             ix, 1, &te) != TP_OK)
				return TP_ENOMEM;
			r.bits |= LR_TENS;
		} else if (old & LR_TENS) {
			side_put(p, (void **)&t->tens, &t->num_tens, &t->cap_tens, sizeof *t->tens,
			         ix, 0, NULL);
		}
		if (old & LR_WIDE)
			side_put(p, (void **)&t->wide, &t->num_wide, &t->cap_wide, sizeof *t->wide,
			         ix, 0, NULL);
	} else {
		struct tp_layer_wide w = {ix, *l};
		if (side_put(p, (void **)&t->wide, &t->num_wide, &t->cap_wide, sizeof w, ix, 1,
		             &w) != TP_OK)
			return TP_ENOMEM;
		if (old & LR_TENS)
			side_put(p, (void **)&t->tens, &t->num_tens, &t->cap_tens, sizeof *t->tens,
			         ix, 0, NULL);
		memset(&r, 0, sizeof r);
		r.bits = LR_WIDE;
	}
	*dst = r;
	return TP_OK;
}

/* One more storage chunk: TP_OK or TP_ENOMEM. */
static int add_chunk(struct tp_layer_table *t)
{
	struct tp_layer_rec **c = tp_grow(t->chunks, sizeof *c, t->num_chunks + 1, &t->cap_chunks);
	if (!c)
		return TP_ENOMEM;
	t->chunks = c;
	/* Zeroed: layer_store reads a record's side-entry bits before it writes it. */
	if (!(c[t->num_chunks] = tp_calloc(TP_LAYER_CHUNK, sizeof **c)))
		return TP_ENOMEM;
	t->num_chunks++;
	return TP_OK;
}

int tp_profile_layer_room(struct tp_profile *p, size_t n)
{
	struct tp_layer_table *t = &p->layer_tab;
	if (n > INT32_MAX)
		n = INT32_MAX;
	while (t->num_chunks * TP_LAYER_CHUNK < n)
		if (add_chunk(t) != TP_OK)
			return TP_ENOMEM;
	return TP_OK;
}

void *tp_profile_layer_chunk(const struct tp_profile *p, size_t k, size_t *rec_bytes)
{
	*rec_bytes = sizeof(struct tp_layer_rec);
	return k < p->layer_tab.num_chunks ? p->layer_tab.chunks[k] : NULL;
}

int tp_profile_add_layer(struct tp_profile *p, const struct tp_layer *l)
{
	struct tp_layer_table *t = &p->layer_tab;
	size_t i = p->num_layers;
	if (i >= INT32_MAX) {
		p->oom = 1;
		return -1;
	}
	if (i == t->num_chunks * TP_LAYER_CHUNK && add_chunk(t) != TP_OK) {
		p->oom = 1;
		return -1;
	}
	if (layer_store(p, i, l, 1) != TP_OK)
		return -1;
	p->num_layers = i + 1;
	return (int)i;
}

int tp_layer_fits(const struct tp_layer *l)
{
	struct tp_layer_rec r;
	return !l->num_tensors && rec_pack(l, &r);
}

int tp_profile_add_layers(struct tp_profile *p, size_t n, struct tp_layer_span *s)
{
	struct tp_layer_table *t = &p->layer_tab;
	size_t i = p->num_layers;
	if (n >= TP_LAYER_CHUNK || i + n > INT32_MAX || tp_profile_layer_room(p, i + n) != TP_OK) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	s->first = i;
	s->n0 = TP_LAYER_CHUNK - i % TP_LAYER_CHUNK;
	s->rec[0] = rec_at(t, i);
	s->rec[1] = i + s->n0 < t->num_chunks * TP_LAYER_CHUNK ? rec_at(t, i + s->n0) : NULL;
	p->num_layers = i + n;
	return TP_OK;
}

void tp_layer_span_put(const struct tp_layer_span *s, size_t k, const struct tp_layer *l)
{
	struct tp_layer_rec r;
	(void)rec_pack(l, &r);
	if (k < s->n0)
		s->rec[0][k] = r;
	else
		s->rec[1][k - s->n0] = r;
}

int tp_profile_set_layer(struct tp_profile *p, size_t i, const struct tp_layer *l)
{
	if (i >= p->num_layers)
		return TP_ERANGE;
	return layer_store(p, i, l, 0);
}

const struct tp_layer *tp_profile_layer(const struct tp_profile *p, size_t i, struct tp_layer *out)
{
	const struct tp_layer_table *t = &p->layer_tab;
	if (i >= p->num_layers) {
		memset(out, 0, sizeof *out);
		out->id = -1;
		out->end_ns = -1;
		return out;
	}
	const struct tp_layer_rec *r = rec_at(t, i);
	if (r->bits & LR_WIDE) {
		size_t k = side_find(t->wide, t->num_wide, sizeof *t->wide, (uint32_t)i);
		*out = t->wide[k].l;
		if (out->begin_ns > out->end_ns) {
			out->begin_ns = 0;
			out->end_ns = -1;
		}
		if (!out->num_tensors)
			out->first_tensor = 0;
		return out;
	}
	rec_unpack(r, out);
	if (r->bits & LR_TENS) {
		size_t k = side_find(t->tens, t->num_tens, sizeof *t->tens, (uint32_t)i);
		out->first_tensor = t->tens[k].first;
		out->num_tensors = t->tens[k].num;
	}
	return out;
}

const struct tp_layer *tp_profile_timed_layer(const struct tp_profile *p, size_t i,
                                              struct tp_layer *out)
{
	const struct tp_layer *l = tp_profile_layer(p, i, out);
	return l->begin_ns <= l->end_ns ? l : NULL;
}

const struct tp_layer *tp_layer_memo_get(const struct tp_profile *p, struct tp_layer_memo *m,
                                         size_t i)
{
	for (unsigned k = 0; k < 2; k++)
		if (m->valid >> k & 1 && m->i[k] == i)
			return &m->l[k];
	unsigned k = m->next;
	m->next ^= 1;
	m->i[k] = i;
	m->valid |= 1u << k;
	return tp_profile_layer(p, i, &m->l[k]);
}

/* The record of layer i (< num_layers) when it holds the layer, else NULL with the layer read
 * whole into *wide. */
static const struct tp_layer_rec *narrow_rec(const struct tp_profile *p, size_t i,
                                             struct tp_layer *wide)
{
	const struct tp_layer_rec *r = rec_at(&p->layer_tab, i);
	if (!(r->bits & LR_WIDE))
		return r;
	tp_profile_layer(p, i, wide);
	return NULL;
}

/* Where and when layer i (< num_layers) ran, from its record or the whole layer: timed = 0
 * when no command of it was matched (a record then gives begin 0, end -1). */
struct layer_pos {
	int64_t begin, end;
	int32_t device, core;
	int timed;
};

static void layer_pos(const struct tp_profile *p, size_t i, struct layer_pos *o)
{
	struct tp_layer l;
	const struct tp_layer_rec *r = narrow_rec(p, i, &l);
	if (!r) {
		*o = (struct layer_pos){l.begin_ns, l.end_ns, l.device, l.core,
		                        l.begin_ns <= l.end_ns};
		return;
	}
	o->timed = (r->bits & LR_TIMED) != 0;
	o->begin = o->timed ? (int64_t)((uint64_t)r->begin_hi << 32 | r->begin_lo) : 0;
	o->end = o->timed ? o->begin + (int64_t)r->dur : -1;
	o->device = (int32_t)(r->bits >> LR_DEV_SHIFT & LR_DEV_MAX);
	o->core = (int32_t)(r->bits >> LR_CORE_SHIFT & 0x3F) - 1;
}

int tp_profile_layer_span(const struct tp_profile *p, size_t i, int64_t *begin, int64_t *end)
{
	struct layer_pos v = {0, -1, 0, 0, 0};
	if (i < p->num_layers)
		layer_pos(p, i, &v);
	*begin = v.begin;
	*end = v.end;
	return v.timed;
}

int32_t tp_profile_layer_id(const struct tp_profile *p, size_t i)
{
	if (i >= p->num_layers)
		return -1;
	struct tp_layer l;
	const struct tp_layer_rec *r = narrow_rec(p, i, &l);
	return r ? r->id : l.id;
}

int tp_profile_layer_place(const struct tp_profile *p, size_t i, int32_t *device, int32_t *core)
{
	struct layer_pos v = {0, -1, 0, 0, 0};
	if (i < p->num_layers)
		layer_pos(p, i, &v);
	*device = v.device;
	*core = v.core;
	return v.timed;
}

/* The edit of tp_profile_layer_touch on a whole layer. */
static void touch_layer(struct tp_layer *l, int64_t begin, int64_t end, int tiu, uint32_t cmd_id)
{
	if (cmd_id) {
		uint32_t *first = tiu ? &l->tiu_first : &l->gdma_first;
		uint32_t *last = tiu ? &l->tiu_last : &l->gdma_last;
		if (*first == 0 || cmd_id < *first)
			*first = cmd_id;
		if (cmd_id > *last)
			*last = cmd_id;
	}
	if (l->begin_ns > l->end_ns) {
		l->begin_ns = begin;
		l->end_ns = end;
	} else {
		if (begin < l->begin_ns)
			l->begin_ns = begin;
		if (end > l->end_ns)
			l->end_ns = end;
	}
}

int tp_model_layer_touch_rec(struct tp_profile *p, size_t i, int64_t begin, int64_t end, int tiu,
                             uint32_t cmd_id)
{
	struct tp_layer_rec *r = rec_at(&p->layer_tab, i);
	if (!(r->bits & LR_WIDE) && begin <= end) {
		/* In place when the result still fits the record (the usual case). */
		int64_t b = begin, e = end;
		if (r->bits & LR_TIMED) {
			int64_t ob = (int64_t)((uint64_t)r->begin_hi << 32 | r->begin_lo);
			int64_t oe = ob + (int64_t)r->dur;
			b = ob < begin ? ob : begin;
			e = oe > end ? oe : end;
		}
		uint32_t *firstp = tiu ? &r->tiu_first : &r->gdma_first;
		uint16_t *spanp = tiu ? &r->tiu_span : &r->gdma_span;
		uint32_t first = *firstp, last = first ? first + *spanp : 0;
		if (cmd_id) {
			if (first == 0 || cmd_id < first)
				first = cmd_id;
			if (cmd_id > last)
				last = cmd_id;
		}
		if (b >= 0 && b < LR_BEGIN_MAX && (uint64_t)(e - b) <= UINT32_MAX &&
		    (first == 0 ? last == 0 : last - first <= 0xFFFF)) {
			r->begin_lo = (uint32_t)b;
			r->begin_hi = (uint16_t)((uint64_t)b >> 32);
			r->dur = (uint32_t)(e - b);
			r->bits |= LR_TIMED;
			*firstp = first;
			*spanp = (uint16_t)(last - first);
			return 1;
		}
	}
	return 0;
}

int tp_profile_layer_touch(struct tp_profile *p, size_t i, int64_t begin, int64_t end, int tiu,
                           uint32_t cmd_id)
{
	if (i >= p->num_layers)
		return TP_ERANGE;
	if (tp_model_layer_touch_rec(p, i, begin, end, tiu, cmd_id))
		return TP_OK;
	struct tp_layer l;
	tp_profile_layer(p, i, &l);
	touch_layer(&l, begin, end, tiu, cmd_id);
	return layer_store(p, i, &l, 0);
}

size_t tp_profile_layer_bytes(const struct tp_profile *p)
{
	const struct tp_layer_table *t = &p->layer_tab;
	return t->num_chunks * TP_LAYER_CHUNK * sizeof(struct tp_layer_rec) +
	       t->cap_chunks * sizeof *t->chunks + t->cap_wide * sizeof *t->wide +
	       t->cap_tens * sizeof *t->tens;
}

void tp_model_layer_tab_free(struct tp_layer_table *t)
{
	tp_free_each(t->chunks, t->num_chunks);
	tp_free(t->wide);
	tp_free(t->tens);
	memset(t, 0, sizeof *t);
}
