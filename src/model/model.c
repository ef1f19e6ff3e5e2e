/*
 * model.c — construction, lookup and finishing of the format-agnostic profile model, plus the
 * enum name tables shared by every reader and writer.
 */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const arch_names[] = {"unknown", "BM1684", "BM1684X", "BM1688",
                                         "BM1690",  "CPU",    "CV184X",  "SG2260E"};
_Static_assert(sizeof arch_names / sizeof *arch_names == TP_ARCH_COUNT, "one name per arch");

const char *tp_arch_name(enum tp_arch a)
{
	return (unsigned)a < sizeof arch_names / sizeof *arch_names ? arch_names[a] : "unknown";
}

enum tp_arch tp_arch_from_name(const char *name)
{
	static const struct {
		const char *n;
		enum tp_arch a;
	} alias[] = {
	    {"BM1684", TP_ARCH_BM1684},   {"BM1684X", TP_ARCH_BM1684X}, {"BM1688", TP_ARCH_BM1688},
	    {"A2", TP_ARCH_BM1688},       {"CV186X", TP_ARCH_BM1688},   {"CV186AH", TP_ARCH_BM1688},
	    {"BM1690", TP_ARCH_BM1690},   {"SG2260", TP_ARCH_BM1690},   {"CV184X", TP_ARCH_CV184X},
	    {"SG2260E", TP_ARCH_SG2260E}, {"BM1690E", TP_ARCH_SG2260E}, {"CPU", TP_ARCH_CPU}};
	for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
		if (strcasecmp(name, alias[i].n) == 0)
			return alias[i].a;
	return TP_ARCH_UNKNOWN;
}

const char *tp_track_kind_name(enum tp_track_kind k)
{
	static const char *const n[] = {"TIU", "GDMA",  "SDMA",   "CDMA",
	                                "MCU", "Layer", "Thread", "Host"};
	return (unsigned)k < TP_TRACK_KIND_COUNT ? n[k] : "?";
}

const char *tp_dir_name(enum tp_dir d)
{
	static const char *const n[] = {"-",          "DDR->LMEM", "LMEM->DDR", "DDR->DDR",
	                                "LMEM->LMEM", "DDR->L2M",  "L2M->DDR",  "L2M->LMEM",
	                                "LMEM->L2M",  "L2M->L2M"};
	return (unsigned)d < TP_DIR_COUNT ? n[d] : "-";
}

int tp_dir_reads_ddr(enum tp_dir d)
{
	return d == TP_DIR_DDR_TO_LMEM || d == TP_DIR_DDR_TO_DDR || d == TP_DIR_DDR_TO_L2;
}

int tp_dir_writes_ddr(enum tp_dir d)
{
	return d == TP_DIR_LMEM_TO_DDR || d == TP_DIR_DDR_TO_DDR || d == TP_DIR_L2_TO_DDR;
}

int tp_dir_touches_l2(enum tp_dir d)
{
	return d == TP_DIR_DDR_TO_L2 || d == TP_DIR_L2_TO_DDR || d == TP_DIR_L2_TO_LMEM ||
	       d == TP_DIR_LMEM_TO_L2 || d == TP_DIR_L2_TO_L2;
}

const char *tp_dtype_name(enum tp_dtype t)
{
	static const char *const n[] = {"",      "FP32",   "FP16",  "INT8",   "UINT8",
	                                "INT16", "UINT16", "INT32", "UINT32", "BF16",
	                                "FP8",   "INT4",   "FP64",  "INT64",  "BOOL"};
	return (unsigned)t < TP_DT_COUNT ? n[t] : "";
}

unsigned tp_dtype_size(enum tp_dtype t)
{
	static const unsigned char s[] = {0, 4, 2, 1, 1, 2, 2, 4, 4, 2, 1, 1, 8, 8, 1};
	return (unsigned)t < TP_DT_COUNT ? s[t] : 0;
}

static void layer_tab_free(struct tp_layer_table *t);

struct tp_profile *tp_profile_new(void)
{
	struct tp_profile *p = tp_calloc(1, sizeof *p);
	if (!p)
		return NULL;
	tp_arena_init(&p->arena, 256 * 1024);
	if (tp_strtab_init(&p->strs) != TP_OK) {
		/* A partly initialised table may hold some of its arrays. */
		tp_strtab_free(&p->strs);
		tp_arena_free(&p->arena);
		tp_free(p);
		return NULL;
	}
	/* Argset id 0 means "no arguments". */
	p->argsets = tp_calloc(16, sizeof *p->argsets);
	if (!p->argsets) {
		tp_profile_free(p);
		return NULL;
	}
	p->cap_argsets = 16;
	p->num_argsets = 1;
	return p;
}

void tp_profile_free(struct tp_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->num_tracks; i++) {
		tp_free(p->tracks[i].slices);
		tp_free(p->tracks[i].cost);
		tp_free(p->tracks[i].cost_big);
		tp_free(p->tracks[i].cost_dict);
		tp_free(p->tracks[i].cost_slots);
		tp_free(p->tracks[i].labels);
		tp_free(p->tracks[i].label_slots);
		tp_free(p->tracks[i].long_dur);
	}
	for (size_t i = 0; i < p->num_counters; i++)
		tp_free(p->counters[i].samples);
	tp_free(p->devices);
	tp_free(p->tracks);
	layer_tab_free(&p->layer_tab);
	tp_free(p->tensors);
	tp_free(p->subnets);
	tp_free(p->mems);
	tp_free(p->counters);
	tp_free(p->args);
	tp_free(p->argsets);
	tp_free(p->meta);
	tp_free(p->notes);
	tp_free(p->flows);
	tp_free(p->vendor.rows);
	tp_strtab_free(&p->strs);
	tp_arena_free(&p->arena);
	tp_free(p);
}

/* The model boundary of the text-safety layer: every string a reader hands the model is made
 * valid UTF-8 here, once (invalid sequences become U+FFFD), so no writer ever sees invalid
 * UTF-8. Control characters stay: they are data, and each writer escapes them for its
 * destination. Returns the id, or 0 with p->oom set. */
static uint32_t add_str(struct tp_profile *p, const char *s, size_t n, int unique)
{
	uint32_t id = 0;
	struct tp_buf fixed;
	tp_buf_init(&fixed);
	if (!tp_text_is_safe(s, n, TP_TEXT_UTF8)) {
		tp_text_put(&fixed, s, n, TP_TEXT_UTF8, 0, 0);
		if (fixed.oom) {
			p->oom = 1;
			tp_buf_free(&fixed);
			return 0;
		}
		s = fixed.data;
		n = fixed.len;
	}
	int st = unique ? tp_strtab_add_unique(&p->strs, s, n, &id)
	                : tp_strtab_intern(&p->strs, s, n, &id);
	if (st != TP_OK) {
		p->oom = 1;
		id = 0;
	}
	tp_buf_free(&fixed);
	return id;
}

uint32_t tp_profile_strn(struct tp_profile *p, const char *s, size_t n)
{
	return add_str(p, s, n, 0);
}

uint32_t tp_profile_strn_unique(struct tp_profile *p, const char *s, size_t n)
{
	return add_str(p, s, n, 1);
}

uint32_t tp_profile_str(struct tp_profile *p, const char *s)
{
	return tp_profile_strn(p, s ? s : "", s ? strlen(s) : 0);
}

/* Appends one element of `elem` bytes to a (ptr, num, cap) table; returns its index or -1
 * (and sets the profile's sticky oom flag). */
static long push(struct tp_profile *p, void *arrp, size_t elem, size_t *num, size_t *cap,
                 const void *val)
{
	void **arr = arrp;
	void *np = tp_grow(*arr, elem, *num + 1, cap);
	if (!np) {
		p->oom = 1;
		return -1;
	}
	*arr = np;
	memcpy((char *)np + *num * elem, val, elem);
	return (long)(*num)++;
}
#define PUSH(p, arr, num, cap, val)                                                                \
	push((p), &(p)->arr, sizeof *(p)->arr, &(p)->num, &(p)->cap, &(val))

int tp_profile_add_device(struct tp_profile *p, const char *name, int32_t id, int32_t num_cores)
{
	struct tp_device dv = {.name = tp_profile_str(p, name), .id = id, .num_cores = num_cores};
	return (int)PUSH(p, devices, num_devices, cap_devices, dv);
}

int tp_profile_add_track(struct tp_profile *p, int32_t device, int32_t core,
                         enum tp_track_kind kind, const char *name, double freq_mhz)
{
	struct tp_track t = {.name = tp_profile_str(p, name ? name : tp_track_kind_name(kind)),
	                     .kind = (uint8_t)kind,
	                     .device = device,
	                     .core = core,
	                     .freq_mhz = freq_mhz};
	/* Label 0, the all-zero one, is what tp_track_push gives every slice. */
	uint32_t id;
	if (tp_track_label(&t, &(struct tp_label){0}, &id) != TP_OK) {
		tp_free(t.labels);
		tp_free(t.label_slots);
		p->oom = 1;
		return -1;
	}
	int i = (int)PUSH(p, tracks, num_tracks, cap_tracks, t);
	if (i < 0) {
		tp_free(t.labels);
		tp_free(t.label_slots);
	}
	return i;
}

int tp_profile_find_track(const struct tp_profile *p, int32_t device, int32_t core,
                          enum tp_track_kind kind)
{
	for (size_t i = 0; i < p->num_tracks; i++)
		if (p->tracks[i].device == device && p->tracks[i].core == core &&
		    p->tracks[i].kind == kind)
			return (int)i;
	return -1;
}

int tp_track_reserve(struct tp_profile *p, int track, size_t n)
{
	struct tp_track *t = &p->tracks[track];
	if (n > SIZE_MAX - t->count)
		return TP_ENOMEM;
	size_t need = t->count + n;
	if (need <= t->cap)
		return TP_OK;
	if (need > SIZE_MAX / sizeof *t->slices)
		return TP_ENOMEM;
	struct tp_slice *s = tp_realloc(t->slices, need * sizeof *s);
	if (!s) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	t->slices = s;
	t->cap = need;
	return TP_OK;
}

void tp_track_fit(struct tp_profile *p, int track)
{
	struct tp_track *t = &p->tracks[track];
	if (t->cap <= t->count || t->count == 0)
		return;
	struct tp_slice *s = tp_realloc(t->slices, t->count * sizeof *s);
	if (s) {
		t->slices = s;
		t->cap = t->count;
	}
}

struct tp_slice *tp_track_push(struct tp_profile *p, int track)
{
	struct tp_track *t = &p->tracks[track];
	if (t->count == t->cap) {
		struct tp_slice *s = tp_grow(t->slices, sizeof *s, t->count + 1, &t->cap);
		if (!s) {
			p->oom = 1;
			return NULL;
		}
		t->slices = s;
	}
	struct tp_slice *s = &t->slices[t->count++];
	memset(s, 0, sizeof *s);
	s->layer = -1;
	return s;
}

/* A label is 24 bytes without padding (static assert in model.h): compared as bytes and hashed
 * as three 64-bit words (read one by one: an array copy goes through the stack). */
static uint64_t label_word(const struct tp_label *l, size_t i)
{
	uint64_t w;
	memcpy(&w, (const char *)l + 8 * i, sizeof w);
	return w;
}

static uint32_t label_hash(const struct tp_label *l)
{
	uint64_t h = (label_word(l, 0) ^ (label_word(l, 1) * 0x9E3779B97F4A7C15ull) ^
	              (label_word(l, 2) * 0xFF51AFD7ED558CCDull)) *
	             0xC2B2AE3D27D4EB4Full;
	return (uint32_t)(h >> 32);
}

static int label_eq(const struct tp_label *x, const struct tp_label *y)
{
	return ((label_word(x, 0) ^ label_word(y, 0)) | (label_word(x, 1) ^ label_word(y, 1)) |
	        (label_word(x, 2) ^ label_word(y, 2))) == 0;
}

/* Rebuilds the label hash with n slots (a power of two). TP_OK / TP_ENOMEM. */
static int label_rehash(struct tp_track *t, uint32_t n)
{
	uint32_t *slots = tp_calloc(n, sizeof *slots);
	if (!slots)
		return TP_ENOMEM;
	for (uint32_t k = 0; k < t->num_labels; k++) {
		uint32_t h = label_hash(&t->labels[k]) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = k + 1;
	}
	tp_free(t->label_slots);
	t->label_slots = slots;
	t->num_label_slots = n;
	return TP_OK;
}

/* Appends l (not yet in t) at hash slot h, or when h is UINT32_MAX first grows the hash and
 * finds l's slot. Out of line: the lookups that find their label (nearly all) then need few
 * registers. TP_OK / TP_ENOMEM. */
static __attribute__((noinline)) int label_add(struct tp_track *t, const struct tp_label *l,
                                               uint32_t h, uint32_t *id)
{
	if (t->num_labels >= UINT32_MAX / 4)
		return TP_ENOMEM;
	if (h == UINT32_MAX) {
		uint32_t n = t->num_label_slots ? t->num_label_slots : 16;
		while ((t->num_labels + 1) * 2 > n)
			n *= 2;
		if (label_rehash(t, n) != TP_OK)
			return TP_ENOMEM;
		h = label_hash(l) & (t->num_label_slots - 1);
		for (; t->label_slots[h]; h = (h + 1) & (t->num_label_slots - 1)) {
			uint32_t k = t->label_slots[h] - 1;
			if (label_eq(&t->labels[k], l)) {
				*id = t->label_last = k;
				return TP_OK;
			}
		}
	}
	size_t cap = t->cap_labels;
	struct tp_label *v = tp_grow(t->labels, sizeof *v, (size_t)t->num_labels + 1, &cap);
	if (!v)
		return TP_ENOMEM;
	t->labels = v;
	t->cap_labels = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
	v[t->num_labels] = *l;
	t->label_slots[h] = t->num_labels + 1;
	*id = t->label_last = t->num_labels++;
	return TP_OK;
}

int tp_track_label(struct tp_track *t, const struct tp_label *l, uint32_t *id)
{
	*id = 0;
	if (t->num_labels && label_eq(&t->labels[t->label_last], l)) {
		*id = t->label_last;
		return TP_OK;
	}
	if ((t->num_labels + 1) * 2 > t->num_label_slots)
		return label_add(t, l, UINT32_MAX, id); /* the hash must grow first */
	uint32_t h = label_hash(l) & (t->num_label_slots - 1);
	for (; t->label_slots[h]; h = (h + 1) & (t->num_label_slots - 1)) {
		uint32_t k = t->label_slots[h] - 1;
		if (label_eq(&t->labels[k], l)) {
			*id = t->label_last = k;
			return TP_OK;
		}
	}
	return label_add(t, l, h, id);
}

int tp_slice_set_long_dur(struct tp_profile *p, struct tp_track *t, struct tp_slice *s, uint64_t d)
{
	/* Rare (host activities, raw counters before unwrapping): an entry of the side table.
	 * Entries are only added, never reused: a slice copied from elsewhere may carry an
	 * index that is not this track's. */
	size_t cap = t->cap_long_dur;
	uint64_t *v = t->num_long_dur < TP_SLICE_LONG_DUR - 1
	                  ? tp_grow(t->long_dur, sizeof *v, (size_t)t->num_long_dur + 1, &cap)
	                  : NULL;
	if (!v) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	t->long_dur = v;
	t->cap_long_dur = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
	v[t->num_long_dur] = d;
	s->dur = TP_SLICE_LONG_DUR | t->num_long_dur++;
	return TP_OK;
}

/* The cost id of slice i of t (i < cost_cap), whatever the array's width. */
static uint32_t cost_at(const struct tp_track *t, size_t i)
{
	switch (t->cost_width) {
	case 1:
		return ((const uint8_t *)t->cost)[i];
	case 2:
		return ((const uint16_t *)t->cost)[i];
	default:
		return ((const uint32_t *)t->cost)[i];
	}
}

/* Stores id v for slice i (v must fit cost_width: see cost_fit). */
static void cost_put(struct tp_track *t, size_t i, uint32_t v)
{
	switch (t->cost_width) {
	case 1:
		((uint8_t *)t->cost)[i] = (uint8_t)v;
		break;
	case 2:
		((uint16_t *)t->cost)[i] = (uint16_t)v;
		break;
	default:
		((uint32_t *)t->cost)[i] = v;
		break;
	}
}

/* Gives track t a zeroed cost entry for each slice it has room for (1 byte each on first
 * use). TP_OK / TP_ENOMEM. */
static int cost_grow(struct tp_track *t)
{
	size_t n = t->cap > t->count ? t->cap : t->count;
	if (!t->cost_width)
		t->cost_width = 1;
	if (n > SIZE_MAX / t->cost_width)
		return TP_ENOMEM;
	char *c = tp_realloc(t->cost, n * t->cost_width);
	if (!c)
		return TP_ENOMEM;
	memset(c + t->cost_cap * t->cost_width, 0, (n - t->cost_cap) * t->cost_width);
	t->cost = c;
	t->cost_cap = n;
	return TP_OK;
}

/* Widens t's cost array until id v fits (1 -> 2 -> 4 bytes per entry), converting the
 * entries in place from the last one down (an entry's new place never overlaps an earlier
 * entry's old one). TP_OK / TP_ENOMEM (the array is unchanged). */
static int cost_fit(struct tp_track *t, uint32_t v)
{
	unsigned w = v <= UINT8_MAX ? 1 : v <= UINT16_MAX ? 2 : 4;
	if (w <= t->cost_width)
		return TP_OK;
	if (t->cost_cap > SIZE_MAX / w)
		return TP_ENOMEM;
	void *c = tp_realloc(t->cost, t->cost_cap * w);
	if (!c)
		return TP_ENOMEM;
	struct tp_track old = *t;
	old.cost = c;
	t->cost = c;
	t->cost_width = (uint8_t)w;
	for (size_t i = t->cost_cap; i-- > 0;)
		cost_put(t, i, cost_at(&old, i));
	return TP_OK;
}

#define PK_OPS_BITS 40
#define PK_BIG ((uint64_t)1 << 63)

static uint32_t pk_hash(const struct tp_cost_pk *e)
{
	uint64_t h = (e->w[0] ^ (e->w[1] * 0x9E3779B97F4A7C15ull)) * 0xC2B2AE3D27D4EB4Full;
	return (uint32_t)(h >> 32);
}

/* Rebuilds the dictionary's hash with n slots (a power of two). TP_OK / TP_ENOMEM. */
static int dict_rehash(struct tp_track *t, uint32_t n)
{
	uint32_t *slots = tp_calloc(n, sizeof *slots);
	if (!slots)
		return TP_ENOMEM;
	for (uint32_t k = 0; k < t->num_cost_dict; k++) {
		if (t->cost_dict[k].w[1] & PK_BIG)
			continue;
		uint32_t h = pk_hash(&t->cost_dict[k]) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = k + 1;
	}
	tp_free(t->cost_slots);
	t->cost_slots = slots;
	t->num_cost_slots = n;
	return TP_OK;
}

/* The dictionary index + 1 of entry e, added if new (big entries are never shared). 0 on out
 * of memory. */
static uint32_t dict_put(struct tp_track *t, const struct tp_cost_pk *e)
{
	if (t->num_cost_dict >= UINT32_MAX / 2 - 1)
		return 0;
	if ((t->num_cost_dict + 1) * 2 > t->num_cost_slots || !t->cost_slots) {
		uint32_t n = t->num_cost_slots ? t->num_cost_slots : 64;
		while ((t->num_cost_dict + 1) * 2 > n)
			n *= 2;
		if (dict_rehash(t, n) != TP_OK)
			return 0;
	}
	uint32_t h = 0;
	if (!(e->w[1] & PK_BIG)) {
		h = pk_hash(e) & (t->num_cost_slots - 1);
		for (; t->cost_slots[h]; h = (h + 1) & (t->num_cost_slots - 1)) {
			const struct tp_cost_pk *d = &t->cost_dict[t->cost_slots[h] - 1];
			if (d->w[0] == e->w[0] && d->w[1] == e->w[1])
				return t->cost_slots[h];
		}
	}
	size_t cap = t->cap_cost_dict;
	struct tp_cost_pk *v = tp_grow(t->cost_dict, sizeof *v, (size_t)t->num_cost_dict + 1, &cap);
	if (!v)
		return 0;
	t->cost_dict = v;
	t->cap_cost_dict = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
	v[t->num_cost_dict] = *e;
	uint32_t id = ++t->num_cost_dict;
	if (!(e->w[1] & PK_BIG))
		t->cost_slots[h] = id;
	return id;
}

int tp_track_set_cost(struct tp_profile *p, int track, size_t index, const struct tp_cost *c)
{
	struct tp_track *t = &p->tracks[track];
	if (index >= t->count)
		return TP_ERANGE;
	if (t->cost_cap < t->count && cost_grow(t) != TP_OK) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	struct tp_cost_pk e;
	const uint64_t ops_max = ((uint64_t)1 << PK_OPS_BITS) - 1;
	if (c->alg_ops <= ops_max && c->uarch_ops <= ops_max && c->init_cycle < 256 &&
	    c->bank_cycle < 64 && c->valid <= 1) {
		e.w[0] = c->alg_ops | c->uarch_ops << PK_OPS_BITS;
		e.w[1] = c->uarch_ops >> (64 - PK_OPS_BITS) | (uint64_t)c->alg_cycle << 16 |
		         (uint64_t)c->init_cycle << 48 | (uint64_t)c->bank_cycle << 56 |
		         (uint64_t)c->valid << 62;
	} else {
		/* Rare (absurd dimensions): the whole entry goes to the side array. */
		struct tp_cost *v =
		    tp_grow(t->cost_big, sizeof *v, t->num_cost_big + 1, &t->cap_cost_big);
		if (!v) {
			p->oom = 1;
			return TP_ENOMEM;
		}
		t->cost_big = v;
		v[t->num_cost_big] = *c;
		e.w[0] = t->num_cost_big++;
		e.w[1] = PK_BIG;
	}
	uint32_t id = dict_put(t, &e);
	if (!id || cost_fit(t, id) != TP_OK) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	cost_put(t, index, id);
	return TP_OK;
}

int tp_track_get_cost(const struct tp_track *t, size_t i, struct tp_cost *out)
{
	if (!t->cost || i >= t->count || i >= t->cost_cap) {
		*out = (struct tp_cost){0};
		return 0;
	}
	uint32_t id = cost_at(t, i);
	if (!id) {
		*out = (struct tp_cost){0};
		return 0;
	}
	const struct tp_cost_pk *e = &t->cost_dict[id - 1];
	if (e->w[1] & PK_BIG) {
		*out = t->cost_big[e->w[0]];
		return out->valid;
	}
	const uint64_t ops_max = ((uint64_t)1 << PK_OPS_BITS) - 1;
	*out = (struct tp_cost){
	    .alg_ops = e->w[0] & ops_max,
	    .uarch_ops = e->w[0] >> PK_OPS_BITS | (e->w[1] & 0xFFFF) << (64 - PK_OPS_BITS),
	    .alg_cycle = (uint32_t)(e->w[1] >> 16),
	    .init_cycle = (uint32_t)(e->w[1] >> 48 & 0xFF),
	    .bank_cycle = (uint32_t)(e->w[1] >> 56 & 0x3F),
	    .valid = (uint8_t)(e->w[1] >> 62 & 1),
	};
	return out->valid;
}

/* ---------------------------------------------------------------------------------------- */
/* The layer table (see struct tp_layer_table in model.h).                                  */
/* ---------------------------------------------------------------------------------------- */

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
	if (l->begin_ns <= l->end_ns) {
		if (l->begin_ns < 0 || l->begin_ns >= LR_BEGIN_MAX ||
		    (uint64_t)(l->end_ns - l->begin_ns) > UINT32_MAX)
			return 0;
		bits |= LR_TIMED;
		r->begin_lo = (uint32_t)l->begin_ns;
		r->begin_hi = (uint16_t)((uint64_t)l->begin_ns >> 32);
		r->dur = (uint32_t)(l->end_ns - l->begin_ns);
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
	r->bits = (uint16_t)bits;
	r->id = l->id;
	r->type = l->type;
	r->name = l->name;
	r->tiu_first = l->tiu_first;
	r->gdma_first = l->gdma_first;
	r->tiu_span = span[0];
	r->gdma_span = span[1];
	r->subnet = (uint16_t)(l->subnet + 1);
	r->group = (uint16_t)(l->group + 1);
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
 * fault whose TLB flush interrupts every other thread of the process (4.5 % of a g1m
 * conversion's CPU). */
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

int tp_profile_add_layer(struct tp_profile *p, const struct tp_layer *l)
{
	struct tp_layer_table *t = &p->layer_tab;
	size_t i = p->num_layers;
	if (i >= INT32_MAX) {
		p->oom = 1;
		return -1;
	}
	if (i == t->num_chunks * TP_LAYER_CHUNK) {
		struct tp_layer_rec **c =
		    tp_grow(t->chunks, sizeof *c, t->num_chunks + 1, &t->cap_chunks);
		if (!c) {
			p->oom = 1;
			return -1;
		}
		t->chunks = c;
		/* Zeroed: layer_store reads a record's side-entry bits before it writes it. */
		if (!(c[t->num_chunks] = tp_calloc(TP_LAYER_CHUNK, sizeof **c))) {
			p->oom = 1;
			return -1;
		}
		t->num_chunks++;
	}
	if (layer_store(p, i, l, 1) != TP_OK)
		return -1;
	p->num_layers = i + 1;
	return (int)i;
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

int tp_profile_layer_span(const struct tp_profile *p, size_t i, int64_t *begin, int64_t *end)
{
	*begin = 0;
	*end = -1;
	if (i >= p->num_layers)
		return 0;
	const struct tp_layer_rec *r = rec_at(&p->layer_tab, i);
	if (r->bits & LR_WIDE) {
		struct tp_layer l;
		tp_profile_layer(p, i, &l);
		*begin = l.begin_ns;
		*end = l.end_ns;
		return l.begin_ns <= l.end_ns;
	}
	if (!(r->bits & LR_TIMED))
		return 0;
	*begin = (int64_t)((uint64_t)r->begin_hi << 32 | r->begin_lo);
	*end = *begin + (int64_t)r->dur;
	return 1;
}

int32_t tp_profile_layer_id(const struct tp_profile *p, size_t i)
{
	if (i >= p->num_layers)
		return -1;
	const struct tp_layer_rec *r = rec_at(&p->layer_tab, i);
	if (r->bits & LR_WIDE) {
		struct tp_layer l;
		return tp_profile_layer(p, i, &l)->id;
	}
	return r->id;
}

int tp_profile_layer_place(const struct tp_profile *p, size_t i, int32_t *device, int32_t *core)
{
	*device = 0;
	*core = 0;
	if (i >= p->num_layers)
		return 0;
	const struct tp_layer_rec *r = rec_at(&p->layer_tab, i);
	if (r->bits & LR_WIDE) {
		struct tp_layer l;
		tp_profile_layer(p, i, &l);
		*device = l.device;
		*core = l.core;
		return l.begin_ns <= l.end_ns;
	}
	*device = (int32_t)(r->bits >> LR_DEV_SHIFT & LR_DEV_MAX);
	*core = (int32_t)(r->bits >> LR_CORE_SHIFT & 0x3F) - 1;
	return (r->bits & LR_TIMED) != 0;
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

int tp_profile_layer_touch(struct tp_profile *p, size_t i, int64_t begin, int64_t end, int tiu,
                           uint32_t cmd_id)
{
	if (i >= p->num_layers)
		return TP_ERANGE;
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
			return TP_OK;
		}
	}
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

static void layer_tab_free(struct tp_layer_table *t)
{
	for (size_t i = 0; i < t->num_chunks; i++)
		tp_free(t->chunks[i]);
	tp_free(t->chunks);
	tp_free(t->wide);
	tp_free(t->tens);
	memset(t, 0, sizeof *t);
}

int tp_profile_add_tensor(struct tp_profile *p, const struct tp_tensor *t)
{
	return (int)PUSH(p, tensors, num_tensors, cap_tensors, *t);
}

int tp_profile_add_subnet(struct tp_profile *p, const struct tp_subnet *s)
{
	return (int)PUSH(p, subnets, num_subnets, cap_subnets, *s);
}

int tp_profile_add_mem(struct tp_profile *p, const struct tp_mem *m)
{
	return (int)PUSH(p, mems, num_mems, cap_mems, *m);
}

int tp_profile_add_counter(struct tp_profile *p, int32_t device, int32_t track, const char *name,
                           const char *unit)
{
	struct tp_counter c = {.name = tp_profile_str(p, name),
	                       .unit = tp_profile_str(p, unit ? unit : ""),
	                       .device = device,
	                       .track = track};
	return (int)PUSH(p, counters, num_counters, cap_counters, c);
}

int tp_counter_push(struct tp_profile *p, int counter, int64_t ts_ns, double value)
{
	struct tp_counter *c = &p->counters[counter];
	struct tp_counter_sample s = {ts_ns, value};
	return push(p, &c->samples, sizeof s, &c->count, &c->cap, &s) < 0 ? TP_ENOMEM : TP_OK;
}

int tp_profile_set_meta(struct tp_profile *p, const char *key, const char *value)
{
	uint32_t k = tp_profile_str(p, key), v = tp_profile_str(p, value);
	for (size_t i = 0; i < p->num_meta; i++)
		if (p->meta[i].key == k) {
			p->meta[i].value = v;
			return p->oom ? TP_ENOMEM : TP_OK;
		}
	struct tp_meta m = {k, v};
	return PUSH(p, meta, num_meta, cap_meta, m) < 0 ? TP_ENOMEM : TP_OK;
}

const char *tp_profile_get_meta(const struct tp_profile *p, const char *key)
{
	uint32_t k;
	if (!tp_strtab_find(&p->strs, key, strlen(key), &k))
		return NULL;
	for (size_t i = 0; i < p->num_meta; i++)
		if (p->meta[i].key == k)
			return tp_str(p, p->meta[i].value);
	return NULL;
}

int tp_profile_note(struct tp_profile *p, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	struct tp_note n = {tp_profile_str(p, buf)};
	return PUSH(p, notes, num_notes, cap_notes, n) < 0 ? TP_ENOMEM : TP_OK;
}

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

struct tp_vendor_row *tp_profile_vendor_row(struct tp_profile *p, const char *tool, int32_t device,
                                            int32_t core)
{
	uint32_t name = tp_profile_str(p, tool);
	struct tp_vendor_row *v =
	    tp_grow(p->vendor.rows, sizeof *v, p->vendor.num_rows + 1, &p->vendor.cap_rows);
	if (!v || !name) {
		p->oom = 1;
		return NULL;
	}
	p->vendor.rows = v;
	p->vendor.tool = name;
	v += p->vendor.num_rows++;
	memset(v, 0, sizeof *v);
	v->device = device;
	v->core = core;
	return v;
}

int tp_profile_add_flow(struct tp_profile *p, const struct tp_flow *f)
{
	struct tp_flow *v = tp_grow(p->flows, sizeof *v, p->num_flows + 1, &p->cap_flows);
	if (!v) {
		p->oom = 1;
		return TP_ENOMEM;
	}
	p->flows = v;
	v[p->num_flows++] = *f;
	return TP_OK;
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

const struct tp_arg *tp_args_find(const struct tp_profile *p, uint32_t args, uint32_t key)
{
	size_t n;
	const struct tp_arg *a = key ? tp_args_get(p, args, &n) : NULL;
	for (size_t i = 0; a && i < n; i++)
		if (a[i].key == key)
			return &a[i];
	return NULL;
}

static int slice_cmp(const struct tp_track *t, const struct tp_slice *x, const struct tp_slice *y)
{
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	int64_t xe = tp_slice_end(t, x), ye = tp_slice_end(t, y);
	if (xe != ye)
		return xe > ye ? -1 : 1;
	uint64_t xc = tp_slice_start_cycle(t, x), yc = tp_slice_start_cycle(t, y);
	if (xc != yc)
		return xc < yc ? -1 : 1;
	if (x->cmd_id != y->cmd_id)
		return x->cmd_id < y->cmd_id ? -1 : 1;
	return 0;
}

static int sample_cmp(const void *a, const void *b)
{
	const struct tp_counter_sample *x = a, *y = b;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* Stable-enough sort: the comparators above are total on everything a reader distinguishes,
 * and readers append in source order, so we first check whether a track is already sorted
 * (the common case for PMU streams) and only sort when needed. */
static int sorted(const struct tp_track *t)
{
	const struct tp_slice *s = t->slices;
	for (size_t i = 1; i < t->count; i++)
		if (slice_cmp(t, &s[i - 1], &s[i]) > 0)
			return 0;
	return 1;
}

static int slice_before(const void *ctx, uint32_t x, uint32_t y)
{
	const struct tp_track *t = ctx;
	return slice_cmp(t, &t->slices[x], &t->slices[y]) < 0;
}

/* Sorts a track's slices and keeps its cost array (if any) in step without a copy of either: a u32
 * permutation (the slices' old indexes) is sorted by the slices with tp_sort_index (stable: equal
 * slices keep their order, as glibc's qsort of the pair array did), then both arrays are
 * permuted in place by following its cycles. Temporary memory: 8 bytes per slice. */
static int sort_track(struct tp_track *t)
{
	size_t n = t->count;
	if (n > UINT32_MAX || n > SIZE_MAX / (2 * sizeof(uint32_t)))
		return TP_ENOMEM;
	uint32_t *perm = tp_malloc(n * sizeof *perm), *tmp = tp_malloc(n * sizeof *tmp);
	if (!perm || !tmp) {
		tp_free(perm);
		tp_free(tmp);
		return TP_ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		perm[k] = (uint32_t)k;
	tp_sort_index(perm, tmp, n, slice_before, t);
	tp_free(tmp);
	/* perm[k] = old index of the slice that goes to k. Each cycle k -> perm[k] -> ... is
	 * rotated once; a placed position is marked by perm[k] = k. */
	for (size_t k = 0; k < n; k++) {
		if (perm[k] == k)
			continue;
		struct tp_slice s = t->slices[k];
		uint32_t c = t->cost ? cost_at(t, k) : 0;
		size_t j = k;
		for (;;) {
			size_t from = perm[j];
			perm[j] = (uint32_t)j;
			if (from == k) {
				t->slices[j] = s;
				if (t->cost)
					cost_put(t, j, c);
				break;
			}
			t->slices[j] = t->slices[from];
			if (t->cost)
				cost_put(t, j, cost_at(t, from));
			j = from;
		}
	}
	tp_free(perm);
	return TP_OK;
}

/* Drops the labels no slice uses any more (readers and the depth pass leave some behind:
 * intermediate combinations, scratch marks), renumbers the rest in order, gives back the
 * growth slack and frees the hash (tp_track_label rebuilds it if a label is added later), so
 * a track whose slices all differ costs one 24-byte label per slice, not more. Label 0 stays
 * the all-zero one. TP_OK / TP_ENOMEM. */
static int labels_compact(struct tp_track *t)
{
	tp_free(t->label_slots);
	t->label_slots = NULL;
	t->num_label_slots = 0;
	t->label_last = 0;
	if (!t->num_labels)
		return TP_OK;
	uint32_t *map = tp_calloc(t->num_labels, sizeof *map);
	if (!map)
		return TP_ENOMEM;
	for (size_t k = 0; k < t->count; k++)
		map[t->slices[k].label] = 1;
	map[0] = 0;
	uint32_t n = 1; /* label 0 is kept */
	for (uint32_t i = 1; i < t->num_labels; i++)
		if (map[i]) {
			t->labels[n] = t->labels[i];
			map[i] = n++;
		}
	if (n < t->num_labels)
		for (size_t k = 0; k < t->count; k++)
			t->slices[k].label = map[t->slices[k].label];
	tp_free(map);
	t->num_labels = n;
	if (t->cap_labels > n) {
		struct tp_label *v = tp_realloc(t->labels, n * sizeof *v);
		if (v) {
			t->labels = v;
			t->cap_labels = n;
		}
	}
	return TP_OK;
}

/* tp_profile_finish's work on one track: cost array to full length, sort, nesting depths,
 * labels compacted, and the track's earliest start / latest end. Touches only t (and, for
 * THREAD/HOST tracks, p's oom flag). */
struct finish_job {
	struct tp_profile *p;
	struct tp_track *t;
	int64_t lo, hi;
	int rc;
};

static void finish_track(struct finish_job *j)
{
	struct tp_profile *p = j->p;
	struct tp_track *t = j->t;
	j->lo = INT64_MAX;
	j->hi = INT64_MIN;
	j->rc = TP_ENOMEM;
	if (t->cost && t->cost_cap < t->count) {
		/* Slices pushed after the last cost entry have none. */
		if (cost_grow(t) != TP_OK)
			return;
	}
	/* The dictionary's hash is only for adding; a later tp_track_set_cost rebuilds it. */
	tp_free(t->cost_slots);
	t->cost_slots = NULL;
	t->num_cost_slots = 0;
	if (!sorted(t) && sort_track(t) != TP_OK)
		return;
	if (t->kind == TP_TRACK_THREAD || t->kind == TP_TRACK_HOST) {
		/* Nesting depth from a stack of open ends. */
		int64_t stack[256];
		unsigned depth = 0;
		for (size_t k = 0; k < t->count; k++) {
			struct tp_slice *s = &t->slices[k];
			while (depth && stack[depth - 1] <= s->start_ns)
				depth--;
			if (tp_slice_set_depth(p, t, s, (uint8_t)(depth < 255 ? depth : 255)) !=
			    TP_OK)
				return;
			if (depth < 256)
				stack[depth++] = tp_slice_end(t, s);
		}
	}
	if (labels_compact(t) != TP_OK)
		return;
	for (size_t k = 0; k < t->count; k++) {
		if (t->slices[k].start_ns < j->lo)
			j->lo = t->slices[k].start_ns;
		if (tp_slice_end(t, &t->slices[k]) > j->hi)
			j->hi = tp_slice_end(t, &t->slices[k]);
	}
	j->rc = TP_OK;
}

/* tp_par_run's call: finish_track on job k. */
static void finish_one(void *v, size_t k)
{
	finish_track(&((struct finish_job *)v)[k]);
}

int tp_profile_finish(struct tp_profile *p)
{
	return tp_profile_finish_jobs(p, 1);
}

int tp_profile_finish_jobs(struct tp_profile *p, unsigned jobs)
{
	if (p->oom)
		return TP_ENOMEM;
	/* The growth slack of the per-tensor array (up to a third: millions of tensors on large
	 * dumps) is given back before analysis and the writers add their own (the layer table
	 * grows by chunks and has none to give back). */
	if (p->cap_tensors > p->num_tensors && p->num_tensors) {
		struct tp_tensor *t = tp_realloc(p->tensors, p->num_tensors * sizeof *t);
		if (t) {
			p->tensors = t;
			p->cap_tensors = p->num_tensors;
		}
	}
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	/* One track per thread when asked, unless a track needs nesting depths (their labels
	 * may set the profile's shared oom flag; captures and traces have few slices anyway). */
	int par = jobs > 1 && p->num_tracks > 1;
	for (size_t i = 0; i < p->num_tracks && par; i++)
		if (p->tracks[i].kind == TP_TRACK_THREAD || p->tracks[i].kind == TP_TRACK_HOST)
			par = 0;
	struct finish_job *fj = tp_calloc(p->num_tracks ? p->num_tracks : 1, sizeof *fj);
	if (!fj)
		return TP_ENOMEM;
	for (size_t i = 0; i < p->num_tracks; i++) {
		fj[i].p = p;
		fj[i].t = &p->tracks[i];
	}
	if (par)
		tp_par_run(jobs, p->num_tracks, finish_one, fj);
	int rc = TP_OK;
	for (size_t i = 0; i < p->num_tracks && rc == TP_OK; i++) {
		if (!par)
			finish_track(&fj[i]);
		rc = fj[i].rc;
		if (fj[i].lo < lo)
			lo = fj[i].lo;
		if (fj[i].hi > hi)
			hi = fj[i].hi;
	}
	tp_free(fj);
	if (rc != TP_OK)
		return rc;
	for (size_t i = 0; i < p->num_counters; i++) {
		struct tp_counter *c = &p->counters[i];
		for (size_t k = 1; k < c->count; k++)
			if (c->samples[k - 1].ts_ns > c->samples[k].ts_ns) {
				/* qsort is not stable; samples at equal times keep no promised
				 * order. */
				qsort(c->samples, c->count, sizeof *c->samples, sample_cmp);
				break;
			}
	}
	if (lo > hi)
		lo = hi = 0;
	p->span_begin_ns = lo;
	p->span_end_ns = hi;
	return TP_OK;
}

size_t tp_profile_slice_count(const struct tp_profile *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->num_tracks; i++)
		n += p->tracks[i].count;
	return n;
}

/* The clock in whole kHz when it is one (900 MHz, 750 MHz, 937.5 MHz...), else 0. */
static uint64_t whole_khz(double mhz)
{
	double khz = mhz * 1000.0, r = nearbyint(khz);
	return r >= 1 && r < 9007199254740992.0 && fabs(khz - r) <= 1e-6 * r ? (uint64_t)r : 0;
}

int64_t tp_cycles_to_ns(uint64_t cycles, double mhz)
{
	if (!(mhz > 0))
		return 0;
	/* The vendor's alignment computes int(cycles / MHz * 1000) in double precision; the
	 * BM1688 reader's §9.2 steps reproduce its cycles with exactly this truncation. An absurd
	 * clock (--tiu_freq 1e-9) must saturate, not overflow the cast (UB). */
	int64_t ns;
	if (tp_f64_to_i64((double)cycles / mhz * 1000.0, &ns) != 0)
		return INT64_MAX;
	return ns;
}

int64_t tp_cycles_to_ns_exact(uint64_t cycles, double mhz)
{
	if (!(mhz > 0))
		return 0;
	/* ns = floor(cycles × 10^6 / kHz) in integers: 1850301 cycles at 900 MHz are 2055890 ns,
	 * which the double expression truncates to 2055889 (2055.89 is not representable). Split
	 * so nothing overflows when cycles·10^6 would: cycles = q·k + r, ns = q·10^6 +
	 * floor(r·10^6 / k), r < k. The last clock's kHz is kept per thread: whole_khz's rounding
	 * and tests cost more than the division, and a reader converts millions of cycle counts
	 * at one or two clocks. */
	static _Thread_local double last_mhz;
	static _Thread_local uint64_t last_k;
	uint64_t k;
	if (mhz == last_mhz) {
		k = last_k;
	} else {
		k = whole_khz(mhz);
		last_mhz = mhz;
		last_k = k;
	}
	if (k && cycles <= (uint64_t)INT64_MAX / 1000000u) /* 2.5 hours at 1 GHz */
		return (int64_t)(cycles * 1000000u / k);
	if (k && k <= UINT64_MAX / 1000000u) {
		uint64_t q = cycles / k, r = cycles % k;
		if (q > (uint64_t)INT64_MAX / 1000000u)
			return INT64_MAX;
		return (int64_t)(q * 1000000u + r * 1000000u / k);
	}
	return (int64_t)((long double)cycles * 1000.0L / (long double)mhz);
}

uint64_t tp_ns_to_cycles(int64_t ns, double mhz)
{
	if (!(mhz > 0) || ns <= 0)
		return 0;
	/* The vendor's back-conversion int(ns * MHz / 1000) in double precision, kept as is: the
	 * BM1688 alignment (sophgo-bmprofile.md §9.2) reproduces its Start/End Cycles with it
	 * (core 1 TIU cmd 6 ends at cycle 381677, the exact quotient would give 381678). */
	double c = (double)ns * mhz / 1000.0;
	/* 2^64 is the first double above UINT64_MAX; saturate rather than overflow the cast. */
	return c < 18446744073709551616.0 ? (uint64_t)c : UINT64_MAX;
}

int tp_profile_drop_cores(struct tp_profile *p, int32_t keep)
{
	int32_t *map = tp_malloc((p->num_tracks + 1) * sizeof *map);
	if (!map)
		return TP_ENOMEM;
	size_t w = 0;
	for (size_t i = 0; i < p->num_tracks; i++) {
		struct tp_track *t = &p->tracks[i];
		if (t->core >= keep && t->kind < TP_TRACK_LAYER) {
			tp_free(t->slices);
			tp_free(t->cost);
			tp_free(t->cost_big);
			tp_free(t->cost_dict);
			tp_free(t->cost_slots);
			tp_free(t->labels);
			tp_free(t->label_slots);
			tp_free(t->long_dur);
			map[i] = -1;
			continue;
		}
		map[i] = (int32_t)w;
		p->tracks[w++] = *t;
	}
	int removed = (int)(p->num_tracks - w);
	p->num_tracks = w;
	size_t cw = 0;
	for (size_t i = 0; i < p->num_counters; i++) {
		struct tp_counter *c = &p->counters[i];
		if (c->track >= 0 && map[c->track] < 0) {
			tp_free(c->samples);
			continue;
		}
		if (c->track >= 0)
			c->track = map[c->track];
		p->counters[cw++] = *c;
	}
	p->num_counters = cw;
	tp_free(map);
	size_t vw = 0;
	for (size_t i = 0; i < p->vendor.num_rows; i++)
		if (p->vendor.rows[i].core < keep)
			p->vendor.rows[vw++] = p->vendor.rows[i];
	p->vendor.num_rows = vw;
	for (size_t i = 0; i < p->num_devices; i++)
		if (p->devices[i].num_cores > keep)
			p->devices[i].num_cores = keep;
	int rc = tp_profile_finish(p);
	return rc != TP_OK ? rc : removed;
}
