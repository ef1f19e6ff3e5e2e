/*
 * lmem.c — the LOCAL memory view from the commands themselves, as the vendor's page builds it
 * (sophgo-analysis.md §6 "LOCAL MEM USAGE(ONE LANE)", reference-outputs.md §3.2
 * lmem_op_record): every DMA command with a local-memory side and every TIU operand / result
 * becomes a rectangle [start, end] × [lane offset, lane offset + bytes per lane] on one lane
 * (the rules: model/lmemrec.h).
 *
 * A command's records are the ones its reader kept in the track's compact form (when it
 * dropped the decoded descriptor fields), else those its argument set's fields give (vendor
 * names, as the descriptor decoders write them); a command with neither contributes nothing.
 * Unlike the vendor, the offset is the address itself modulo the lane, not relative to the
 * lowest address seen.
 *
 * Owns the record array it returns (tp_free). A page cannot hold three records for each of
 * millions of commands: when the commands give more than `max` records, only those of one
 * command in `every` (every = ceil(records / max), counted over the commands that give any, in
 * track order) are kept, so the whole run and every core stay covered; the rest are counted.
 * The commands are read in parts of one track each, on up to `jobs` threads: each part keeps
 * its records (again, one command in `every`, when they are too many) until they are copied
 * into place.
 */
#include "analysis/analysis.h"
#include "model/lmemrec.h"

#include <string.h>

/* The argument keys of the fields, interned in the profile (0 = absent), and a small open
 * hash table from key to field index: a command's every argument is looked up in it. */
#define KEY_SLOTS 128 /* a power of two, over twice TP_LK_COUNT */

struct keys {
	uint32_t k[TP_LK_COUNT];
	uint32_t slot_key[KEY_SLOTS]; /* 0 = empty */
	uint8_t slot_field[KEY_SLOTS];
};

static unsigned key_slot(uint32_t key)
{
	return (key * 2654435761u) >> 25 & (KEY_SLOTS - 1);
}

static void keys_index(struct keys *k)
{
	memset(k->slot_key, 0, sizeof k->slot_key);
	for (int j = 0; j < TP_LK_COUNT; j++) {
		if (!k->k[j])
			continue;
		unsigned s = key_slot(k->k[j]);
		while (k->slot_key[s] && k->slot_key[s] != k->k[j])
			s = (s + 1) & (KEY_SLOTS - 1);
		k->slot_key[s] = k->k[j];
		k->slot_field[s] = (uint8_t)j;
	}
}

/* The field index of argument key `key`, -1 when no field has it. */
static int key_field(const struct keys *k, uint32_t key)
{
	for (unsigned s = key_slot(key); k->slot_key[s]; s = (s + 1) & (KEY_SLOTS - 1))
		if (k->slot_key[s] == key)
			return k->slot_field[s];
	return -1;
}

/* The argument values of one slice, by key index. */
static void read_vals(const struct tp_profile *p, const struct keys *k, uint32_t args,
                      struct tp_lmem_vals *o)
{
	memset(o, 0, sizeof *o);
	size_t n;
	const struct tp_arg *a = tp_args_get(p, args, &n);
	for (size_t i = 0; a && i < n; i++) {
		if (a[i].type != TP_ARG_INT && a[i].type != TP_ARG_UINT)
			continue;
		int j = a[i].key ? key_field(k, a[i].key) : -1;
		if (j < 0)
			continue;
		o->v[j] = a[i].type == TP_ARG_INT && a[i].v.i < 0 ? 0 : a[i].v.u;
		o->have[j] = 1;
	}
}

/* The records of slice i of t: kept by the reader, else from its argument set. */
static unsigned slice_recs(const struct tp_profile *p, const struct keys *k,
                           const struct tp_track *t, size_t i, struct tp_lmem_cmd_rec *r)
{
	const struct tp_slice *s = &t->slices[i];
	unsigned n = tp_track_get_lmem(t, i, r);
	if (n || !s->args)
		return n;
	struct tp_lmem_vals v;
	read_vals(p, k, s->args, &v);
	return tp_lmem_cmd_recs(p->chip, t, s, &v, r);
}

/* The commands are read in parts of at most LM_PART slices of one track, fixed by the data
 * (never by the thread count), so that any number of threads gives the same records. */
#define LM_PART 16384

struct lm_part {
	size_t track, i0, i1;
	size_t giving, recs;   /* commands that give records, their records */
	size_t nth0;           /* giving commands in the parts before this one */
	struct tp_lmem_rec *v; /* the kept records (owned until copied) */
	size_t n, cap;
	int oom;
};

struct lm_run {
	const struct tp_profile *p;
	const struct keys *k;
	struct lm_part *parts;
	size_t every, max;
	struct tp_lmem_recs *out;
	size_t *at; /* per part: where its records go in out->v */
};

/* One part: counts the commands that give records and their records, and keeps the records
 * of every `every`-th of them (counted over the whole run from the part's nth0) in the part's
 * own array. */
static void lm_keep(void *arg, size_t pi)
{
	struct lm_run *r = arg;
	/* On a copy: the parts sit side by side, and another thread updates the next one's
	 * counts. */
	struct lm_part part = r->parts[pi], *q = &part;
	const struct tp_track *t = &r->p->tracks[q->track];
	size_t nth = q->nth0;
	q->giving = q->recs = q->n = 0;
	for (size_t i = q->i0; i < q->i1 && !q->oom; i++) {
		const struct tp_slice *s = &t->slices[i];
		if (tp_slice_kind(t, s) != TP_CMD_NORMAL)
			continue;
		struct tp_lmem_cmd_rec rec[TP_LMEM_CMD_RECS];
		unsigned n = slice_recs(r->p, r->k, t, i, rec);
		q->giving += n != 0;
		q->recs += n;
		if (!n || nth++ % r->every)
			continue;
		struct tp_lmem_rec *g = tp_grow(q->v, sizeof *g, q->n + n, &q->cap);
		if (!g) {
			q->oom = 1;
			break;
		}
		q->v = g;
		for (unsigned j = 0; j < n; j++)
			g[q->n++] = (struct tp_lmem_rec){
			    .begin_ns = s->start_ns,
			    .end_ns = tp_slice_end(t, s),
			    .lane_offset = rec[j].lane_offset,
			    .bytes = rec[j].bytes,
			    .write = rec[j].write,
			    .track = (int32_t)q->track,
			    .slice = i,
			};
	}
	r->parts[pi] = part;
}

/* One part's kept records (those before the cap) into place. */
static void lm_copy(void *arg, size_t pi)
{
	struct lm_run *r = arg;
	struct lm_part *q = &r->parts[pi];
	size_t at = r->at[pi], n = at < r->max ? r->max - at : 0;
	if (n > q->n)
		n = q->n;
	if (n)
		memcpy(r->out->v + at, q->v, n * sizeof *q->v);
	tp_free(q->v);
	q->v = NULL;
}

/* The parts of the tracks whose commands can give records, in track order. */
static struct lm_part *lm_parts(const struct tp_profile *p, size_t max_cores, size_t *np)
{
	size_t n = 0, cap = 0;
	struct lm_part *v = NULL;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *t = &p->tracks[ti];
		if (t->kind >= TP_ENGINES ||
		    (max_cores && t->core >= 0 && (size_t)t->core >= max_cores))
			continue;
		for (size_t i0 = 0; i0 < t->count; i0 += LM_PART) {
			struct lm_part *g = tp_grow(v, sizeof *v, n + 1, &cap);
			if (!g) {
				tp_free(v);
				return NULL;
			}
			v = g;
			v[n++] = (struct lm_part){.track = ti,
			                          .i0 = i0,
			                          .i1 = t->count - i0 > LM_PART ? i0 + LM_PART
			                                                        : t->count};
		}
	}
	*np = n;
	return v ? v : tp_calloc(1, sizeof *v);
}

/* Keeps every part's records, and when they are more than `max`, those of one giving command
 * in `every` instead; copies them into out in part order, at most `max`. */
static int collect(const struct tp_profile *p, const struct keys *k, size_t max_cores, size_t max,
                   unsigned jobs, struct tp_lmem_recs *out)
{
	size_t np = 0;
	struct lm_part *parts = lm_parts(p, max_cores, &np);
	size_t *at = tp_malloc((np ? np : 1) * sizeof *at);
	if (!parts || !at) {
		tp_free(parts);
		tp_free(at);
		return TP_ENOMEM;
	}
	struct lm_run r = {
	    .p = p, .k = k, .parts = parts, .every = 1, .max = max, .out = out, .at = at};
	tp_par_run(jobs, np, lm_keep, &r);
	size_t total = 0, giving = 0;
	for (size_t i = 0; i < np; i++) {
		parts[i].nth0 = giving;
		giving += parts[i].giving;
		total += parts[i].recs;
	}
	/* More records than fit: one command in `every` over the whole run instead of the
	 * first commands only, so every core and the end of the run keep their records. */
	if (total > max && max) {
		r.every = total / max + (total % max != 0);
		tp_par_run(jobs, np, lm_keep, &r);
	}
	size_t kept = 0;
	int oom = 0;
	for (size_t i = 0; i < np; i++) {
		at[i] = kept;
		kept += parts[i].n;
		oom |= parts[i].oom;
	}
	out->n = kept < max ? kept : max;
	out->every = r.every;
	out->dropped = total - out->n;
	out->v = oom ? NULL : tp_malloc((out->n ? out->n : 1) * sizeof *out->v);
	if (out->v)
		tp_par_run(jobs, np, lm_copy, &r);
	for (size_t i = 0; i < np; i++)
		tp_free(parts[i].v);
	tp_free(parts);
	tp_free(at);
	if (!out->v) {
		memset(out, 0, sizeof *out);
		out->every = 1;
		return TP_ENOMEM;
	}
	return TP_OK;
}

int tp_lmem_from_commands_jobs(const struct tp_profile *p, size_t max_cores, size_t max,
                               unsigned jobs, struct tp_lmem_recs *out)
{
	memset(out, 0, sizeof *out);
	out->every = 1;
	const struct tp_chip *chip = p->chip;
	if (!chip || !chip->lane_bytes || !chip->npu_num)
		return TP_OK;
	struct keys k;
	memset(&k, 0, sizeof k);
	int any = 0;
	for (int j = 0; j < TP_LK_COUNT; j++)
		any |= (k.k[j] = tp_profile_find_str(p, tp_lmem_key_names[j])) != 0;
	for (size_t ti = 0; ti < p->num_tracks && !any; ti++)
		any = p->tracks[ti].lmem != NULL;
	if (!any)
		return TP_OK;
	keys_index(&k);
	return collect(p, &k, max_cores, max, jobs ? jobs : 1, out);
}

int tp_lmem_from_commands(const struct tp_profile *p, size_t max_cores, size_t max,
                          struct tp_lmem_recs *out)
{
	return tp_lmem_from_commands_jobs(p, max_cores, max, 1, out);
}
