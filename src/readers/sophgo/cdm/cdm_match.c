/*
 * cdm_match.c — §8.3: every PMU slice gets its command. Commands come from the descriptor
 * streams, DYN_DATA or DYN_EXTRA (cdm_file.c); a track whose record count differs from its
 * command count is paired section by section (runs of increasing ids, aligned by edit
 * distance on their lengths). A matched slice gets its names (through the reader's name
 * cache), kind, direction, data type, dependency, TIU cost and, with detail, its argument set
 * in the vendor's spelling. Also the omission of the profiler's sys commands (§8.2 step 9).
 */
#include "readers/sophgo/cdm/cdm_int.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- names ----------------------------------------------------------------------------- */

/* The name-cache key of command c (NULL = none): every field its names depend on. */
uint32_t cdm_name_key(const struct cdm_cmd *c)
{
	if (!c || !c->known)
		return 0;
	return 1u | (uint32_t)(c->engine & 3u) << 1 | (uint32_t)(c->is_short & 1u) << 3 |
	       (uint32_t)(c->op & 31u) << 4 | (uint32_t)(c->sub & 31u) << 9 |
	       (uint32_t)(c->dir & 15u) << 14; /* < 2^CDM_NAME_CACHE_BITS */
}

/* c's (name, type) interned in p into e (NULL c: the unknown command's). */
static void intern_names(struct tp_profile *p, uint32_t e[2], const struct cdm_cmd *c)
{
	const char *type, *name;
	char buf[96];
	struct cdm_cmd none = {0};
	cdm_cmd_names(c ? c : &none, &type, &name, buf, sizeof buf);
	e[0] = tp_profile_str(p, name);
	e[1] = tp_profile_str(p, type);
}

/* The interned (name, type) of key `key`, those of c on the key's first use. Interns strings:
 * calling thread only. */
const uint32_t *cdm_cached_names(struct cdm_rd *r, uint32_t key, const struct cdm_cmd *c)
{
	uint32_t *e = r->cache[key];
	if (!e[0])
		intern_names(r->p, e, c);
	return e;
}

void cdm_keys_free(const struct cdm_rd *r, uint32_t **keys[SG_ENG_COUNT])
{
	for (int e = 0; e < SG_ENG_COUNT; e++) {
		for (size_t i = 0; keys[e] && r->dec && i < r->dec->ncls[e]; i++)
			tp_free(keys[e][i]);
		tp_free(keys[e]);
		keys[e] = NULL;
	}
}

/* A worker's core with detail: the names of key `key` in its scratch profile, those of c
 * on the key's first use in the core (the order one thread interns them in), the key kept
 * in used[] for read_cores. NULL when out of memory. */
static const uint32_t *scratch_names(struct cdm_rd *r, struct cdm_core_read *j, uint32_t key,
                                     const struct cdm_cmd *c)
{
	uint32_t *e = j->cache[key];
	if (!e[0]) {
		uint32_t *u = tp_grow(j->used, sizeof *u, j->nused + 1, &j->cap_used);
		if (!u)
			return NULL;
		j->used = u;
		u[j->nused++] = key;
		intern_names(r->ap, e, c);
	}
	return e;
}

static void set_names(struct cdm_rd *r, struct tp_label *s, const struct cdm_cmd *c)
{
	uint32_t key = cdm_name_key(c);
	struct cdm_core_read *j = r->job;
	if (j && j->keyed) {
		/* Names later (core_names): the key stands in the label meanwhile. */
		if (!(j->seen[key >> 3] & (1u << (key & 7)))) {
			struct cdm_cmd *v =
			    tp_grow(j->first, sizeof *v, j->nfirst + 1, &j->cap_first);
			if (!v) {
				j->aside.oom = 1; /* read_cores reports it */
				return;
			}
			j->first = v;
			v[j->nfirst++] = c ? *c : (struct cdm_cmd){0};
			j->seen[key >> 3] |= (uint8_t)(1u << (key & 7));
		}
		s->name = key;
		s->type = 0;
		return;
	}
	if (j && j->ap) {
		/* The key stands in the label until core_relabel, as for a keyed core. */
		if (!scratch_names(r, j, key, c))
			j->aside.oom = 1;
		s->name = key;
		s->type = 0;
		return;
	}
	const uint32_t *e = cdm_cached_names(r, key, c);
	s->name = e[0];
	s->type = e[1];
}

/* Sections: maximal runs of strictly increasing ids (§8.3). */
struct section {
	size_t first, count;
	uint64_t len; /* last id - first id + 1 */
};

static int sections_of(const uint32_t *ids, size_t n, size_t stride, struct section **out,
                       size_t *nout)
{
	size_t ns = 0, cap = 0;
	struct section *v = NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = *(const uint32_t *)((const uint8_t *)ids + i * stride);
		uint32_t prev =
		    i ? *(const uint32_t *)((const uint8_t *)ids + (i - 1) * stride) : 0;
		if (i == 0 || id <= prev) {
			if (ns == cap) {
				struct section *nv = tp_grow(v, sizeof *nv, ns + 1, &cap);
				if (!nv) {
					tp_free(v);
					return TP_ENOMEM;
				}
				v = nv;
			}
			v[ns++] = (struct section){.first = i, .count = 0};
		}
		v[ns - 1].count++;
		uint32_t first =
		    *(const uint32_t *)((const uint8_t *)ids + v[ns - 1].first * stride);
		v[ns - 1].len = (uint64_t)id - first + 1;
	}
	*out = v;
	*nout = ns;
	return TP_OK;
}

/* Pairs PMU sections with command sections by the minimum edit distance on their lengths
 * (match 0 when equal, insertion/deletion 1, substitution 2) and writes pair[i] = command
 * section of PMU section i or -1. Falls back to pairing in order when the table would be
 * larger than 16 M cells. */
static int align_sections(const struct section *ps, size_t np, const struct section *cs, size_t nc,
                          long *pair)
{
	for (size_t i = 0; i < np; i++)
		pair[i] = -1;
	if (np + 1 > ((size_t)16 << 20) / (nc + 1)) {
		for (size_t i = 0; i < np && i < nc; i++)
			pair[i] = (long)i;
		return TP_OK;
	}
	size_t w = nc + 1;
	uint32_t *dp = tp_malloc((np + 1) * w * sizeof *dp);
	if (!dp)
		return TP_ENOMEM;
	for (size_t i = 0; i <= np; i++)
		dp[i * w] = (uint32_t)i;
	for (size_t j = 0; j <= nc; j++)
		dp[j] = (uint32_t)j;
	for (size_t i = 1; i <= np; i++)
		for (size_t j = 1; j <= nc; j++) {
			uint32_t sub =
			    dp[(i - 1) * w + j - 1] + (ps[i - 1].len == cs[j - 1].len ? 0 : 2);
			uint32_t del = dp[(i - 1) * w + j] + 1, ins = dp[i * w + j - 1] + 1;
			uint32_t m = sub < del ? sub : del;
			dp[i * w + j] = m < ins ? m : ins;
		}
	size_t i = np, j = nc;
	while (i > 0 && j > 0) {
		uint32_t here = dp[i * w + j];
		int eq = ps[i - 1].len == cs[j - 1].len;
		if (eq && here == dp[(i - 1) * w + j - 1]) {
			pair[i - 1] = (long)(j - 1);
			i--;
			j--;
		} else if (here == dp[(i - 1) * w + j] + 1) {
			i--;
		} else if (here == dp[i * w + j - 1] + 1) {
			j--;
		} else {
			i--; /* substitution: lengths differ, leave the PMU section unpaired */
			j--;
		}
	}
	tp_free(dp);
	return TP_OK;
}

/* ---- per-command detail (table-decoded descriptors) -------------------------------------- */

/* The argument keys of one class's fields (sg_class_keys: TIU `des_` + regdef name, DMA/CDMA
 * the plain name), built once per class. NULL when out of memory. */
static const uint32_t *class_keys(struct cdm_rd *r, int eng, const struct sg_dclass *dc)
{
	size_t ci = (size_t)(dc - r->dec->cls[eng]);
	if (!r->keys[eng] && !(r->keys[eng] = tp_calloc(r->dec->ncls[eng], sizeof *r->keys[eng])))
		return NULL;
	if (r->keys[eng][ci])
		return r->keys[eng][ci];
	uint32_t *k = sg_class_keys(r->ap, dc, eng == SG_ENG_TIU, 0);
	if (!k)
		return NULL;
	r->keys[eng][ci] = k;
	return k;
}

static double round4(double x)
{
	return floor(x * 10000.0 + 0.5) / 10000.0;
}

/* The argument set of a table-decoded command (costmodel §3.14, §5 items 1-4, 8-9, BM1690
 * printers bm1690_defs.py::get_tiu_info / get_dma_info): every field under the vendor's
 * name; TIU "Data Type" A -> B and the cost figures (both ratios 0.0%, the rate 0.0% when
 * uArch Ops is 0); GDMA/SDMA the mask and joined address fields, the data type and, from the
 * PMU record `m` (NULL = none), the byte / bandwidth / transaction counters with no clock
 * factor, the bandwidth under DDR or L2M by the direction. */
static void add_detail(struct cdm_rd *r, const struct tp_track *t, const struct tp_slice *s,
                       const struct cdm_cmd *c, const struct sg_desc *d, const struct tp_cost *k,
                       const struct cdm_pmu *m)
{
	struct tp_profile *p = r->ap;
	int eng = c->engine == CDM_TIU    ? SG_ENG_TIU
	          : c->engine == CDM_CDMA ? SG_ENG_CDMA
	                                  : SG_ENG_DMA;
	const struct sg_dclass *dc = d->cls;
	const uint32_t *keys = class_keys(r, eng, dc);
	if (!keys) {
		p->oom = 1;
		return;
	}
	for (uint16_t i = 0; i < dc->rc->nfields; i++)
		if (keys[i])
			tp_args_add(p,
			            &(struct tp_arg){.key = keys[i],
			                             .type = TP_ARG_UINT,
			                             .v.u = sg_field(d, c->raw, dc->dict_src[i])});
	char buf[40];
	if (eng == SG_ENG_TIU) {
		const char *b = sg_has(d, SG_F_OPT_RES0_PREC)
		                    ? sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_OPT_RES0_PREC))
		                    : "None";
		const char *a = sg_has(d, SG_F_OPT_OPD0_PREC)
		                    ? sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_OPT_OPD0_PREC))
		                    : b;
		snprintf(buf, sizeof buf, "%s -> %s", a, b);
		tp_args_add_str(p, "Data Type", buf);
		if (k->valid) {
			tp_args_add_uint(p, "Alg Ops", k->alg_ops);
			tp_args_add_uint(p, "uArch Ops", k->uarch_ops);
			tp_args_add_uint(p, "Alg Cycle", k->alg_cycle);
			sg_pct1(buf, sizeof buf, (double)k->alg_ops, (double)k->uarch_ops);
			tp_args_add_str(p, "uArch Rate", buf);
			tp_args_add_str(p, "Initial Cycle Ratio", "0.0%");
			tp_args_add_str(p, "Bank Conflict Ratio", "0.0%");
		}
		return;
	}
	if (eng != SG_ENG_DMA)
		return;
	/* sDMA_sys has no address registers: the printer gives it zero addresses, whose tags
	 * (0) read as DDR, and prints that direction. */
	if (strcmp(dc->rc->op_name, "DMA_masked_select") != 0) {
		tp_args_add_uint(p, "mask_start_addr_h8", 0);
		tp_args_add_uint(p, "mask_start_addr_l32", 0);
	}
	uint64_t sa = sg_get(d, c->raw, SG_F_SRC_H8) << 32 | sg_get(d, c->raw, SG_F_SRC_L32);
	uint64_t da = sg_get(d, c->raw, SG_F_DST_H8) << 32 | sg_get(d, c->raw, SG_F_DST_L32);
	tp_args_add_uint(p, "dst_start_addr", da);
	tp_args_add_uint(p, "src_start_addr", sa);
	if (c->kind != TP_CMD_NORMAL)
		tp_args_add_str(p, "Direction", "DDR->DDR");
	if (sg_has(d, SG_F_SRC_FMT))
		tp_args_add_str(p, "Data Type",
		                sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_SRC_FMT)));
	if (!m)
		return;
	/* Slices still hold raw cycles here (finalize() converts them): Asic = end - start + 1. */
	uint64_t x = m->bytes;
	int64_t end = tp_slice_end(t, s);
	double asic = end >= s->start_ns ? (double)(end - s->start_ns + 1) : 1.0;
	double bw = round4((double)x / asic);
	int ddr = tp_dir_touches_ddr((enum tp_dir)c->dir);
	int l2 = !ddr && tp_dir_touches_l2((enum tp_dir)c->dir); /* DDR wins, as the printer's */
	struct sg_dma_figs fg = {.stall = m->stall,
	                         .gmem = x,
	                         .lmem = x,
	                         .gxact = m->gxact,
	                         .lxact = m->lxact,
	                         .size = x,
	                         .gbw = bw,
	                         .lbw = bw,
	                         .ddr_bw = ddr ? bw : 0.0,
	                         .l2m_bw = l2 ? bw : 0.0};
	sg_add_dma_args(p, &fg, SG_DMA_BM1690);
}

/* The PMU record of a GDMA/SDMA slice: fill_track leaves its position among the core file's
 * records of that engine (+1) in s->args until the command is applied. Lookups come mostly
 * in record order, so the span of the previous one is tried first (r->pmu_*). */
static int pmu_of(struct cdm_rd *r, const struct cdm_walk *w, const uint8_t *data, int eng,
                  uint32_t pos, struct cdm_pmu *m)
{
	if (!w || !data || !pos)
		return 0;
	size_t i = pos - 1, k = 0, base = 0;
	if (r->pmu_w == w && r->pmu_eng == eng && i >= r->pmu_base) {
		k = r->pmu_k;
		base = r->pmu_base;
	}
	for (; k < w->npmu; k++) {
		if (w->pmu[k].engine != eng)
			continue;
		if (i - base < w->pmu[k].count) {
			r->pmu_w = w;
			r->pmu_eng = eng;
			r->pmu_k = k;
			r->pmu_base = base;
			cdm_pmu_decode(data, &w->pmu[k], i - base, m);
			return 1;
		}
		base += w->pmu[k].count;
	}
	return 0;
}

/* Slice s gets label lb in part pt, through the memo when there is one. Only keyed labels go
 * through it: with type 0 and a key for the name, the label the slice has and the name, kind,
 * direction and dtype decide the one it gets. */
static void set_label_memo(struct tp_part *pt, struct tp_slice *s, const struct tp_label *lb,
                           struct sg_label_memo *memo)
{
	if (!memo || lb->type) {
		tp_part_set_label(pt, s, lb);
		return;
	}
	uint64_t tup = (uint64_t)lb->name | (uint64_t)lb->kind << 32 | (uint64_t)lb->dir << 40 |
	               (uint64_t)lb->dtype << 48;
	uint32_t from = s->label;
	struct sg_label_memo *e = sg_label_memo_at(memo, CDM_MEMO_BITS, from, tup);
	if (sg_label_memo_hit(e, from, tup))
		s->label = e->to;
	else if (tp_part_set_label(pt, s, lb) == TP_OK)
		sg_label_memo_put(e, from, tup, s->label);
}

void cdm_apply_cmd(struct cdm_rd *r, struct tp_part *pt, size_t index, const struct cdm_cmd *c,
                   const uint8_t *data, const struct cdm_walk *w, struct sg_label_memo *memo)
{
	struct tp_track *tr = &r->p->tracks[pt->track];
	struct tp_slice *s = &tr->slices[index];
	uint32_t pos = s->args;
	s->args = 0;
	struct tp_label lb = *tp_part_label_at(pt, s->label);
	set_names(r, &lb, c);
	if (c) {
		lb.kind = c->kind;
		lb.dir = c->dir;
		lb.dtype = c->dtype;
	}
	set_label_memo(pt, s, &lb, memo);
	if ((!c || !c->cls) && r->dec && r->mode == 3 && tr->kind == TP_TRACK_TIU) {
		/* A TIU record without a descriptor in a dump that has them (the profiler's and the
		 * runtime's sync): the vendor's printer counts it as 1 Alg op and 1 uArch op with
		 * no cycles (bm1690_defs.py get_tiu_info_dyn, costmodel §3.14), and its workbook
		 * totals include them (PROVENANCE.txt: totalAlgOps 175461253 = 4 such + the
		 * commands'). */
		tp_part_set_cost(pt, index,
		                 &(struct tp_cost){.alg_ops = 1, .uarch_ops = 1, .valid = 1});
	}
	if (!c)
		return;
	s->dep_id = c->dep;
	if (!c->cls || !r->dec)
		return;
	int eng = c->engine == CDM_TIU    ? SG_ENG_TIU
	          : c->engine == CDM_CDMA ? SG_ENG_CDMA
	                                  : SG_ENG_DMA;
	struct sg_desc d = {.cls = c->cls,
	                    .is_short = c->is_short,
	                    .op = c->op,
	                    .sub = c->sub,
	                    .bytes = c->cls->bytes};
	d.sub_name = eng == SG_ENG_TIU
	                 ? r->dec->tiu_sub[c->op & 15][c->sub & 31]
	                 : r->dec->dma_sub[eng == SG_ENG_CDMA][c->op & 31][c->sub & 7];
	struct tp_cost k = {0};
	if (eng == SG_ENG_TIU) {
		sg_tiu_cost(r->chip, &d, c->raw, &k);
		tp_part_set_cost(pt, index, &k);
	}
	if (!r->detail)
		return;
	struct cdm_pmu m;
	int have_m = eng == SG_ENG_DMA && pmu_of(r, w, data, c->engine, pos, &m);
	tp_args_begin(r->ap);
	add_detail(r, tr, s, c, &d, &k, have_m ? &m : NULL);
	s->args = tp_args_end(r->ap);
}

/* §8.3: gives every slice of track t its command from cmds (or the "unknown" fallback). */
int cdm_match(struct cdm_rd *r, int t, const struct cdm_cmds *cmds, uint64_t *unmatched,
              uint64_t *unmatched_bytes, const uint8_t *data, const struct cdm_walk *w)
{
	struct tp_track *tr = &r->p->tracks[t];
	size_t n = tr->count;
	if (n == 0)
		return TP_OK;
	struct tp_part pt;
	tp_part_open(&pt, r->p, t, 0, n, 1);
	if (cmds->n == n) {
		for (size_t i = 0; i < n; i++)
			cdm_apply_cmd(r, &pt, i, &cmds->v[i], data, w, NULL);
		return TP_OK;
	}
	struct section *ps = NULL, *cs = NULL;
	size_t np = 0, nc = 0;
	long *pair = NULL;
	uint64_t um = 0, um_bytes = 0; /* unmatched slices and bytes, added once at the end */
	int rc = sections_of(&tr->slices[0].cmd_id, n, sizeof *tr->slices, &ps, &np);
	if (rc == TP_OK && cmds->n)
		rc = sections_of(&cmds->v[0].id, cmds->n, sizeof *cmds->v, &cs, &nc);
	if (rc == TP_OK && !(pair = tp_malloc(np * sizeof *pair)))
		rc = TP_ENOMEM;
	if (rc == TP_OK)
		rc = align_sections(ps, np, cs, nc, pair);
	if (rc != TP_OK)
		goto out;
	for (size_t i = 0; i < np; i++) {
		const struct section *p = &ps[i];
		uint32_t id0 = tr->slices[p->first].cmd_id;
		for (size_t k = p->first; k < p->first + p->count; k++) {
			struct tp_slice *s = &tr->slices[k];
			const struct cdm_cmd *c = NULL;
			if (pair[i] >= 0) {
				const struct section *q = &cs[pair[i]];
				uint64_t off = (uint64_t)s->cmd_id - id0;
				if (off < q->count)
					c = &cmds->v[q->first + off];
			}
			cdm_apply_cmd(r, &pt, k, c, data, w, NULL);
			if (!c) {
				um++;
				um_bytes += tp_slice_bytes(&r->p->tracks[t], s);
			}
		}
	}
	/* The counters sit beside the other engines', which other threads count. */
	*unmatched += um;
	*unmatched_bytes += um_bytes;
out:
	tp_free(ps);
	tp_free(cs);
	tp_free(pair);
	return rc == TP_ENOMEM ? cdm_nomem(r) : rc;
}

/* Step 9: profiler-inserted sync commands at the head and tail of an engine's list. */
/* Returns how many records it omitted. Touches only t: any thread. (cdm_int.h) */
size_t cdm_omit_sys(struct tp_track *t)
{
	size_t lo = 0, hi = t->count;
	while (lo < hi && tp_slice_kind(t, &t->slices[lo]) != TP_CMD_NORMAL)
		lo++;
	while (hi > lo && tp_slice_kind(t, &t->slices[hi - 1]) != TP_CMD_NORMAL)
		hi--;
	if (lo == 0 && hi == t->count)
		return 0;
	memmove(t->slices, t->slices + lo, (hi - lo) * sizeof *t->slices);
	/* The per-slice cost ids (TIU, set by match) follow their slices. */
	if (t->cost && lo)
		memmove(t->cost, (char *)t->cost + lo * t->cost_width, (hi - lo) * t->cost_width);
	size_t n = t->count - (hi - lo);
	t->count = hi - lo;
	return n;
}
