/*
 * profile.c — creating and freeing a profile, its string table (the model's UTF-8 boundary),
 * devices and tracks, slice storage, and the profile's side tables (tensors, subnets, memory
 * records, counters, metadata, notes, vendor rows, flows). Owns every array of struct
 * tp_profile except the layer table (layers.c) and the argument sets (args.c).
 */
#include "model/model.h"
#include "model/model_int.h"

#include <stdio.h>
#include <string.h>

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

void tp_model_track_free(struct tp_track *t)
{
	TP_FREE_ALL(t->slices, t->cost, t->cost_big, t->cost_dict, t->cost_slots, t->lmem,
	            t->lmem_recs, t->labels, t->label_slots, t->long_dur);
}

/* What the counters and tracks own, the profile's arrays, then its owned tables (layers,
 * strings) and the arena. */
void tp_profile_free(struct tp_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->num_counters; i++)
		tp_free(p->counters[i].samples);
	for (size_t i = 0; i < p->num_tracks; i++)
		tp_model_track_free(&p->tracks[i]);
	TP_FREE_ALL(p->devices, p->tracks, p->tensors, p->layer_sim, p->subnets, p->mems,
	            p->counters, p->args, p->argsets, p->meta, p->notes, p->flows, p->vendor.rows);
	tp_model_layer_tab_free(&p->layer_tab);
	tp_strtab_free(&p->strs);
	tp_arena_free(&p->arena);
	tp_free(p);
}

/* s[0..n) repaired (invalid UTF-8 becomes U+FFFD) and, when that is longer than
 * TP_PROFILE_MAX_STR bytes, cut to its longest prefix that ends on a character boundary and
 * leaves room for TP_PROFILE_CUT_MARK, which is appended. Only the first TP_PROFILE_MAX_STR + 4
 * repaired bytes are ever made (a repaired character is at most 4 bytes), so a name of
 * hundreds of MB costs no more than one of 64 KiB. Returns 1 when it cut. */
static int repair_and_cut(struct tp_buf *out, const char *s, size_t n)
{
	tp_text_put(out, s, n, TP_TEXT_UTF8, TP_PROFILE_MAX_STR + 4, 0);
	if (out->oom || out->len <= TP_PROFILE_MAX_STR)
		return 0;
	static const char mark[] = TP_PROFILE_CUT_MARK;
	size_t keep = TP_PROFILE_MAX_STR - (sizeof mark - 1);
	/* The repaired text is valid UTF-8: backing up over continuation bytes lands on the
	 * first byte of the character the cut would split. */
	while (keep > 0 && ((unsigned char)out->data[keep] & 0xc0) == 0x80)
		keep--;
	out->len = keep;
	tp_buf_put(out, mark, sizeof mark - 1);
	return 1;
}

/* The model boundary of the text-safety layer: every string a reader hands the model is made
 * valid UTF-8 here, once (invalid sequences become U+FFFD), so no writer ever sees invalid
 * UTF-8, and cut at TP_PROFILE_MAX_STR bytes, so every writer sees the same bounded string.
 * Control characters stay: they are data, and each writer escapes them for its destination.
 * Returns the id, or 0 with p->oom set. */
static uint32_t add_str(struct tp_profile *p, const char *s, size_t n, int unique)
{
	uint32_t id = 0;
	int cut = 0;
	struct tp_buf fixed;
	tp_buf_init(&fixed);
	if (!tp_profile_str_ok(s, n)) {
		cut = repair_and_cut(&fixed, s, n);
		if (fixed.oom) {
			p->oom = 1;
			tp_buf_free(&fixed);
			return 0;
		}
		s = fixed.data;
		n = fixed.len;
	}
	uint32_t before = p->strs.count;
	int st = unique ? tp_strtab_add_unique(&p->strs, s, n, &id)
	                : tp_strtab_intern(&p->strs, s, n, &id);
	if (st != TP_OK) {
		p->oom = 1;
		id = 0;
	} else if (cut && p->strs.count > before) {
		p->strs_cut++; /* counted once per distinct cut string, as the table holds them */
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

int tp_profile_str_ok(const char *s, size_t n)
{
	return n <= TP_PROFILE_MAX_STR && tp_text_is_safe(s, n, TP_TEXT_UTF8);
}

uint32_t tp_profile_strn_unique_ok(struct tp_profile *p, const char *s, size_t n)
{
	uint32_t id = 0;
	if (tp_strtab_add_unique(&p->strs, s, n, &id) != TP_OK) {
		p->oom = 1;
		id = 0;
	}
	return id;
}

uint32_t tp_profile_str(struct tp_profile *p, const char *s)
{
	return tp_profile_strn(p, s ? s : "", s ? strlen(s) : 0);
}

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
	tp_slice_init(s);
	return s;
}

int tp_profile_add_tensor(struct tp_profile *p, const struct tp_tensor *t)
{
	return (int)PUSH(p, tensors, num_tensors, cap_tensors, *t);
}

int tp_profile_tensor_room(struct tp_profile *p, size_t n)
{
	if (p->num_tensors + n <= p->cap_tensors)
		return TP_OK;
	struct tp_tensor *t = tp_grow(p->tensors, sizeof *t, p->num_tensors + n, &p->cap_tensors);
	if (!t)
		return TP_ENOMEM;
	p->tensors = t;
	return TP_OK;
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
	return tp_model_push(p, &c->samples, sizeof s, &c->count, &c->cap, &s) < 0 ? TP_ENOMEM
	                                                                           : TP_OK;
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
