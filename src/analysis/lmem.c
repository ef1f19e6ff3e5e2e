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
 */
#include "analysis/analysis.h"
#include "model/lmemrec.h"

#include <string.h>

/* The argument keys of the fields, interned in the profile (0 = absent). */
struct keys {
	uint32_t k[TP_LK_COUNT];
};

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
		for (int j = 0; j < TP_LK_COUNT; j++)
			if (k->k[j] && a[i].key == k->k[j]) {
				o->v[j] = a[i].type == TP_ARG_INT && a[i].v.i < 0 ? 0 : a[i].v.u;
				o->have[j] = 1;
			}
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

/* One pass over the commands: the records of every `every`-th command that has any (counted
 * over all tracks in order), at most `max` of them; the rest are counted in out->dropped. */
static int collect(const struct tp_profile *p, const struct keys *k, size_t max_cores, size_t max,
                   size_t every, struct tp_lmem_recs *out)
{
	size_t cap = 0, nth = 0;
	for (size_t ti = 0; ti < p->num_tracks; ti++) {
		const struct tp_track *t = &p->tracks[ti];
		if (t->kind >= TP_ENGINES ||
		    (max_cores && t->core >= 0 && (size_t)t->core >= max_cores))
			continue;
		for (size_t i = 0; i < t->count; i++) {
			const struct tp_slice *s = &t->slices[i];
			if (tp_slice_kind(t, s) != TP_CMD_NORMAL)
				continue;
			struct tp_lmem_cmd_rec r[TP_LMEM_CMD_RECS];
			unsigned n = slice_recs(p, k, t, i, r);
			if (!n)
				continue;
			if (nth++ % every) {
				out->dropped += n;
				continue;
			}
			for (unsigned j = 0; j < n; j++) {
				if (out->n >= max) {
					out->dropped++;
					continue;
				}
				struct tp_lmem_rec *g =
				    tp_grow(out->v, sizeof *g, out->n + 1, &cap);
				if (!g) {
					tp_free(out->v);
					memset(out, 0, sizeof *out);
					return TP_ENOMEM;
				}
				out->v = g;
				g[out->n++] = (struct tp_lmem_rec){
				    .begin_ns = s->start_ns,
				    .end_ns = tp_slice_end(t, s),
				    .lane_offset = r[j].lane_offset,
				    .bytes = r[j].bytes,
				    .write = r[j].write,
				    .track = (int32_t)ti,
				    .slice = i,
				};
			}
		}
	}
	return TP_OK;
}

int tp_lmem_from_commands(const struct tp_profile *p, size_t max_cores, size_t max,
                          struct tp_lmem_recs *out)
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
	int st = collect(p, &k, max_cores, max, 1, out);
	if (st != TP_OK || !out->dropped || !max)
		return st;
	/* More records than fit: one command in `every` over the whole run instead of the
	 * first commands only, so every core and the end of the run keep their records. */
	size_t total = out->n + out->dropped, every = total / max + (total % max != 0);
	tp_free(out->v);
	memset(out, 0, sizeof *out);
	out->every = every;
	return collect(p, &k, max_cores, max, every, out);
}
