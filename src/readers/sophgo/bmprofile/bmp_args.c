/*
 * bmp_args.c — what one command gives its slice: the per-core command files (cmd_*.dat,
 * opened for lookups by cmd_id and closed with notes on where decoding stopped) and, per
 * slice, the name, type, kind, direction, data type, dependency and TIU cost from its
 * descriptor, plus with detail its argument set in the vendor's spelling (decoded fields, data
 * type, cost figures, GDMA PMU figures, the DMA printer's tail). Owns the argument-key table.
 */
#include "common/progress.h"
#include "model/lmemrec.h"
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The argument keys' spellings (bmp_int.h). */
const char *const bmp_key_names[BMP_K_NKEYS] = {
    "src_start_addr", "dst_start_addr", "cmd_id_dep", "Msg Id",     "Sd\\Wt Count",
    "gdma_id",        "bd_id",          "id",         "profile_id", "extra"};

static void name_of(struct bmp_rd *r, const struct bmp_cmd *c, uint32_t *name, uint32_t *type)
{
	struct bmp_name_slot *s = &r->cache[c->key % BMP_NAME_CACHE];
	if (!s->set) {
		s->name = tp_profile_str(r->ap, c->name);
		s->type = tp_profile_str(r->ap, c->type);
		s->set = 1;
	}
	*name = s->name;
	*type = s->type;
}

/* ---------------------------------------------------------------------------------------- */
/* Command files.                                                                           */
/* ---------------------------------------------------------------------------------------- */
void bmp_cmds_free(struct bmp_core_cmds *cc)
{
	for (int e = 0; e < 2; e++) {
		bmp_cmdbuf_free(&cc->cb[e]);
		tp_file_release(&cc->f[e]);
		tp_free(cc->path[e]);
		cc->path[e] = NULL;
		cc->have[e] = 0;
	}
}

/* Opens cmd_<base>_<core>_<engine>.dat (legacy arches first try cmd_<base>_<engine>.dat) for
 * lookups from the COMMAND block's offset (indexed as they go: see close_cmds). */
int bmp_cmds_open(struct bmp_rd *r, const char *iter_path, const struct bmp_command *cm,
                  unsigned core, struct bmp_core_cmds *cc)
{
	for (int e = 0; e < 2; e++) {
		uint64_t base = e == BMP_ENG_TIU ? cm->bd_base : cm->gdma_base;
		uint64_t offset = e == BMP_ENG_TIU ? cm->bd_offset : cm->gdma_offset;
		uint64_t expect = e == BMP_ENG_TIU ? cm->bd_count : cm->gdma_count;
		if (expect == 0)
			continue;
		char name[96];
		int found = 0;
		if (!r->perfai) {
			snprintf(name, sizeof name, "cmd_%llx_%d.dat", (unsigned long long)base, e);
			found = bmp_exists(r, name);
		}
		if (!found) {
			snprintf(name, sizeof name, "cmd_%llx_%u_%d.dat", (unsigned long long)base,
			         core, e);
			found = bmp_exists(r, name);
		}
		if (found < 0)
			return bmp_nomem(r);
		if (!found)
			return tp_diag_set(
			    r->d, TP_ENOTFOUND,
			    "%s: COMMAND block %u names %s, which is missing from %s", iter_path,
			    core, name, r->dir);
		char *pth = NULL;
		int rc = bmp_load(r, name, &cc->f[e], &pth);
		if (rc)
			return rc;
		if (offset > cc->f[e].size) {
			rc = tp_diag_at(r->d, TP_EFORMAT, pth, 0,
			                "COMMAND offset %llu is past the end of the %zu-byte file",
			                (unsigned long long)offset, cc->f[e].size);
			tp_free(pth);
			return rc;
		}
		const uint8_t *data = cc->f[e].data + offset;
		size_t len = cc->f[e].size - (size_t)offset;
		int irc = r->dec ? bmp_cmdbuf_init_dec(&cc->cb[e], r->arch, e, r->dec, data, len,
		                                       cc->f[e].mapped)
		          : cc->f[e].mapped
		              ? bmp_cmdbuf_init_mapped(&cc->cb[e], r->arch, e, data, len)
		              : bmp_cmdbuf_init(&cc->cb[e], r->arch, e, data, len);
		if (irc != TP_OK) {
			tp_free(pth);
			return bmp_nomem(r);
		}
		cc->have[e] = 1;
		cc->path[e] = pth;
		cc->offset[e] = (size_t)offset;
		cc->expect[e] = expect;
		/* BM1684's fixed slots: trailing padding is not commands, and a file too short for
		 * the count was cut. */
		if (r->arch == TP_ARCH_BM1684 && expect < UINT32_MAX)
			bmp_cmdbuf_limit(&cc->cb[e], (uint32_t)expect);
		if (r->arch == TP_ARCH_BM1684 && len / 128 < expect)
			return tp_diag_at(r->d, TP_ETRUNC, pth, cc->f[e].size,
			                  "the file ends after %zu of the %llu 128-byte commands "
			                  "COMMAND block %u names",
			                  len / 128, (unsigned long long)expect, core);
	}
	return TP_OK;
}

/* After core cc's lookups: indexes what they did not reach, notes where decoding stopped and
 * a command count that differs from the COMMAND block's, and releases the files' pages (the
 * command buffers release what lies behind their index as it grows). Runs on the calling
 * thread (notes). TP_OK / TP_ENOMEM. */
int bmp_cmds_close(struct bmp_rd *r, struct bmp_core_cmds *cc)
{
	for (int e = 0; e < 2; e++) {
		if (!cc->have[e])
			continue;
		struct bmp_cmdbuf *cb = &cc->cb[e];
		if (bmp_cmdbuf_finish(cb) != TP_OK)
			return bmp_nomem(r);
		/* BM1684 / BM1684X buffers hold every command the COMMAND block counts (their
		 * descriptors carry no end of their own before it): one that decodes fewer was
		 * cut or garbled. */
		if (!r->perfai && cb->count < cc->expect[e]) {
			int cut = !cb->stopped || cb->len - cb->stop_off < 128;
			return tp_diag_at(
			    r->d, cut ? TP_ETRUNC : TP_EFORMAT, cc->path[e],
			    cc->offset[e] + (cb->stopped ? cb->stop_off : cb->len),
			    "%s after %u of the %llu commands the COMMAND block names",
			    cut ? "the file ends" : "undecodable command", cb->count,
			    (unsigned long long)cc->expect[e]);
		}
		if (cb->stopped)
			bmp_note(r,
			         "%s@0x%zx: command decoding stopped at an unknown descriptor "
			         "after %u commands; later commands are unnamed",
			         cc->path[e], cc->offset[e] + cb->stop_off, cb->count);
		if (cb->count != cc->expect[e])
			bmp_note(r, "%s: decoded %u commands, the COMMAND block says %llu",
			         cc->path[e], cb->count, (unsigned long long)cc->expect[e]);
		tp_file_drop(&cc->f[e], 0, cc->f[e].size);
	}
	return TP_OK;
}

void bmp_fill_caches_free(struct bmp_rd *r)
{
	for (int e = 0; e < 2; e++) {
		const struct sg_decoder *kd = r->dec ? r->dec : r->fdec;
		for (size_t i = 0; r->keys[e] && kd && i < kd->ncls[e]; i++)
			tp_free(r->keys[e][i]);
		tp_free(r->keys[e]);
		r->keys[e] = NULL;
		for (size_t i = 0; r->lmem_fields[e] && kd && i < kd->ncls[e]; i++)
			tp_free(r->lmem_fields[e][i]);
		tp_free(r->lmem_fields[e]);
		r->lmem_fields[e] = NULL;
	}
}

/* The argument keys of one class's fields (sg_class_keys, with BM1688's DMA printer renames),
 * built once per class. NULL when out of memory. */
static const uint32_t *class_keys(struct bmp_rd *r, int engine, const struct sg_dclass *dc)
{
	int eng = engine == BMP_ENG_TIU ? SG_ENG_TIU : SG_ENG_DMA;
	const struct sg_decoder *kd = r->dec ? r->dec : r->fdec;
	size_t ci = (size_t)(dc - kd->cls[eng]);
	if (!r->keys[engine]) {
		r->keys[engine] = tp_calloc(kd->ncls[eng], sizeof *r->keys[engine]);
		if (!r->keys[engine])
			return NULL;
	}
	if (r->keys[engine][ci])
		return r->keys[engine][ci];
	uint32_t *k = sg_class_keys(r->ap, dc, engine == BMP_ENG_TIU, r->arch == TP_ARCH_BM1688);
	if (!k)
		return NULL;
	r->keys[engine][ci] = k;
	return k;
}

/* Every decoded field as an argument, in class order under the vendor's names. A repeated
 * name appears once, at its first position, with the value of its last occurrence, as the
 * vendor's dict does. */
static void add_fields(struct bmp_rd *r, int engine, const struct bmp_cmd *c)
{
	const struct sg_dclass *dc = c->desc.cls;
	const uint32_t *keys = class_keys(r, engine, dc);
	if (!keys) {
		r->ap->oom = 1;
		return;
	}
	for (uint16_t i = 0; i < dc->rc->nfields; i++)
		if (keys[i])
			tp_args_add(r->ap, &(struct tp_arg){
			                       .key = keys[i],
			                       .type = TP_ARG_UINT,
			                       .v.u = sg_field(&c->desc, c->raw, dc->dict_src[i])});
}

/* The field index of each LOCAL memory key in one class (UINT16_MAX = none), matched by the
 * argument key the class's field would get (sg_class_keys: TIU "des_" + the regdef name, DMA
 * the plain name; BM1688's renames touch only *_start_addr_h32 / _l8, never one of these) and
 * skipping the names the vendor's dict drops. Built once per class; NULL when out of memory. */
static const uint16_t *lmem_fields(struct bmp_rd *r, int engine, const struct sg_dclass *dc)
{
	int eng = engine == BMP_ENG_TIU ? SG_ENG_TIU : SG_ENG_DMA;
	const struct sg_decoder *kd = r->dec ? r->dec : r->fdec;
	size_t ci = (size_t)(dc - kd->cls[eng]);
	if (!r->lmem_fields[engine] &&
	    !(r->lmem_fields[engine] = tp_calloc(kd->ncls[eng], sizeof *r->lmem_fields[0])))
		return NULL;
	uint16_t **slot = &r->lmem_fields[engine][ci];
	if (*slot)
		return *slot;
	uint16_t *f = tp_malloc(TP_LK_COUNT * sizeof *f);
	if (!f)
		return NULL;
	const char *pre = engine == BMP_ENG_TIU ? "des_" : "";
	for (int j = 0; j < TP_LK_COUNT; j++) {
		f[j] = UINT16_MAX;
		const char *want = tp_lmem_key_names[j];
		if (strncmp(want, pre, strlen(pre)))
			continue;
		for (uint16_t i = 0; i < dc->rc->nfields && f[j] == UINT16_MAX; i++)
			if (dc->dict_src[i] != UINT16_MAX &&
			    !strcmp(dc->rc->fields[i].name, want + strlen(pre)))
				f[j] = i;
	}
	return *slot = f;
}

/* Without the decoded fields, the command's LOCAL memory records (model/lmemrec.h) from the
 * values its argument set would have held with them: the class's fields, then what the DMA
 * printer's tail and the PMU figures add (addresses, LMEM bytes), later values winning as in
 * the argument set; l is the label the command gets. Kept in the track's compact form. */
static void keep_lmem(struct bmp_rd *r, int engine, const struct bmp_cmd *c,
                      const struct tp_label *l, int t, size_t index, unsigned core, size_t rel)
{
	const uint16_t *fi = lmem_fields(r, engine, c->desc.cls);
	if (!fi) {
		r->ap->oom = 1;
		return;
	}
	struct tp_lmem_vals v;
	memset(&v, 0, sizeof v);
	for (int j = 0; j < TP_LK_COUNT; j++)
		if (fi[j] != UINT16_MAX) {
			v.v[j] = sg_field(&c->desc, c->raw, c->desc.cls->dict_src[fi[j]]);
			v.have[j] = 1;
		}
	if (engine == BMP_ENG_GDMA && c->kind == TP_CMD_NORMAL) {
		v.v[TP_LK_DST_ADDR] = c->dst_addr;
		v.v[TP_LK_SRC_ADDR] = c->src_addr;
		v.have[TP_LK_DST_ADDR] = v.have[TP_LK_SRC_ADDR] = 1;
	}
	if (engine == BMP_ENG_GDMA && r->gd_gmem[core] && rel < r->gd_cap[core]) {
		v.v[TP_LK_LMEM_BYTES] = r->gd_lmem[core][rel];
		v.have[TP_LK_LMEM_BYTES] = 1;
	}
	struct tp_lmem_cmd_rec rec[TP_LMEM_CMD_RECS];
	unsigned n =
	    tp_lmem_label_recs(r->p->chip, (enum tp_track_kind)r->p->tracks[t].kind, l, &v, rec);
	if (n)
		tp_track_set_lmem(r->p, t, index, rec, n);
}

/* TIU "Data Type": name(opd0 precision) -> name(result precision) (costmodel §4). */
static void add_tiu_dtype(struct bmp_rd *r, const struct bmp_cmd *c)
{
	const struct sg_desc *d = &c->desc;
	int ho = sg_has(d, SG_F_OPT_OPD0_PREC), hr = sg_has(d, SG_F_OPT_RES0_PREC);
	const char *a = "None", *b = "None";
	if (hr)
		b = sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_OPT_RES0_PREC));
	a = ho ? sg_prec_name((unsigned)sg_get(d, c->raw, SG_F_OPT_OPD0_PREC)) : b;
	char buf[40];
	snprintf(buf, sizeof buf, "%s -> %s", a, b);
	tp_args_add_str(r->ap, "Data Type", buf);
}

static void add_tiu_cost(struct bmp_rd *r, const struct tp_cost *k, uint32_t asic)
{
	char buf[32];
	tp_args_add_uint(r->ap, "Alg Ops", k->alg_ops);
	tp_args_add_uint(r->ap, "uArch Ops", k->uarch_ops);
	tp_args_add_uint(r->ap, "Alg Cycle", k->alg_cycle);
	sg_pct1(buf, sizeof buf, (double)k->alg_ops, (double)k->uarch_ops);
	tp_args_add_str(r->ap, "uArch Rate", buf);
	sg_pct1(buf, sizeof buf, (double)k->init_cycle, (double)asic + 1e-4);
	tp_args_add_str(r->ap, "Initial Cycle Ratio", buf);
	sg_pct1(buf, sizeof buf, (double)k->bank_cycle, (double)asic + 1e-4);
	tp_args_add_str(r->ap, "Bank Conflict Ratio", buf);
}

/* The simulator's cycles (net_stat.sim) of core `core`'s command cmd_id of engine e, 0 when
 * none was matched (read_netstat). Node i runs command i + 1 (§8.2: by position). */
static uint32_t sim_cycles(const struct bmp_rd *r, int e, unsigned core, uint32_t cmd_id)
{
	if (core != 0 || !r->sim_cyc[e] || cmd_id == 0 || cmd_id > r->nsim[e])
		return 0;
	return r->sim_cyc[e][cmd_id - 1];
}

/* BM1684X's legacy printer (instruction.csv): the operand types, the simulator's cycles
 * ("Alg Cycle", GDMA included) and, on TIU, the cost figures with its uArch Rate of three
 * decimals. */
static void add_legacy_args(struct bmp_rd *r, int engine, const struct bmp_cmd *c,
                            const struct tp_cost *k, uint32_t sim)
{
	char o0[16], rs[16];
	if (engine == BMP_ENG_TIU) {
		sg_bm1684x_dtypes(&c->desc, c->raw, o0, rs, sizeof o0);
	} else if (sg_has(&c->desc, SG_F_SRC_FMT) && c->kind == TP_CMD_NORMAL) {
		static const char *const n[8] = {"i8",  "f16",  "f32", "i16",
		                                 "i32", "bf16", "i4",  "i8"};
		snprintf(o0, sizeof o0, "%s", n[sg_get(&c->desc, c->raw, SG_F_SRC_FMT) & 7]);
		snprintf(rs, sizeof rs, "%s", o0);
	} else {
		o0[0] = rs[0] = '\0';
	}
	tp_args_add_str(r->ap, "Opd0 Dtype", o0);
	tp_args_add_str(r->ap, "Res Dtype", rs);
	tp_args_add_uint(r->ap, "Alg Cycle", sim);
	if (engine != BMP_ENG_TIU || !k->valid)
		return;
	char buf[32];
	tp_args_add_uint(r->ap, "Alg Ops", k->alg_ops);
	tp_args_add_uint(r->ap, "uArch Ops", k->uarch_ops);
	snprintf(buf, sizeof buf, "%.3f%%",
	         k->uarch_ops ? (double)k->alg_ops / (double)k->uarch_ops * 100.0 : 0.0);
	tp_args_add_str(r->ap, "uArch Rate", buf);
}

/* Python's round(x, 4) for the positive values here. */
static double round4(double x)
{
	return floor(x * 10000.0 + 0.5) / 10000.0;
}

/* GDMA PMU figures per command (costmodel §5 steps 6, 7, 9): BM1688 counts bytes only and
 * the transactions are bytes / 16 (xact NULL); CV184X counts transactions (xact = DDR side |
 * LMEM side << 32). Bandwidths are bytes per GDMA cycle times the GDMA clock in GHz. */
static void add_gdma_pmu(struct bmp_rd *r, const struct tp_track *tr, const struct tp_slice *s,
                         uint64_t gmem, uint64_t lmem, const uint64_t *xact)
{
	struct tp_profile *p = r->ap;
	double ghz = r->gdma_mhz / 1000.0, asic = s->cycles ? (double)s->cycles : 1.0;
	double gbw = round4((double)gmem / asic * ghz), lbw = round4((double)lmem / asic * ghz);
	unsigned xa = r->chip && r->chip->c.vector_ohow_align ? r->chip->c.vector_ohow_align : 16;
	uint64_t gx = xact ? (*xact & 0xFFFFFFFFu) : gmem / xa, lx = xact ? *xact >> 32 : lmem / xa;
	struct sg_dma_figs fg = {.stall = tp_slice_stall(tr, s),
	                         .gmem = gmem,
	                         .lmem = lmem,
	                         .gxact = gx,
	                         .lxact = lx,
	                         .size = gmem > lmem ? gmem : lmem,
	                         .gbw = gbw,
	                         .lbw = lbw,
	                         .ddr_bw = gbw > lbw ? gbw : lbw};
	sg_add_dma_args(p, &fg, SG_DMA_PERFAI);
}

/* What the vendor's DMA printer adds after the decoded fields (costmodel §5 steps 1, 2, 4):
 * the mask address fields that only masked_select's layout has (as 0), then the joined
 * addresses; a sys command instead gets its address fields as 0 (CV184X prints them with
 * the LMEM->LMEM direction its zero addresses give). Data Type is the DATATYPE name of
 * src_data_format on every command (the vendor's names: BFP16, not BF16). */
static void add_dma_tail(struct bmp_rd *r, const struct bmp_cmd *c)
{
	struct tp_profile *p = r->ap;
	int has_mask = strcmp(c->desc.cls->rc->op_name, "DMA_masked_select") == 0;
	if ((r->arch == TP_ARCH_BM1688 && c->kind == TP_CMD_NORMAL) || r->arch == TP_ARCH_CV184X) {
		if (!has_mask) {
			tp_args_add_uint(p, "mask_start_addr_h8", 0);
			tp_args_add_uint(p, "mask_start_addr_l32", 0);
		}
	}
	if (c->kind == TP_CMD_NORMAL) {
		tp_args_add_uint(p, bmp_key_names[BMP_K_DST], c->dst_addr);
		tp_args_add_uint(p, bmp_key_names[BMP_K_SRC], c->src_addr);
	} else if (r->arch == TP_ARCH_CV184X) {
		static const char *const zero[] = {"dst_start_addr_l32", "src_start_addr_l32",
		                                   "src_start_addr_h13", "dst_start_addr_h13"};
		for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
			tp_args_add_uint(p, zero[i], 0);
		tp_args_add_str(p, "Direction", "LMEM->LMEM");
	}
	if (sg_has(&c->desc, SG_F_SRC_FMT))
		tp_args_add_str(p, "Data Type",
		                sg_prec_name((unsigned)sg_get(&c->desc, c->raw, SG_F_SRC_FMT)));
}

/* Sets slice s's label to l, or keeps what `what` (BMP_LAB_*) changes of it in r->lab. */
static void put_label(struct bmp_rd *r, int engine, size_t rel, struct tp_track *tr,
                      struct tp_slice *s, const struct tp_label *l, uint8_t what)
{
	if (!r->lab[engine]) {
		tp_slice_set_label(r->p, tr, s, l);
		return;
	}
	r->lab[engine][rel] = (struct bmp_lab){l->name, l->type, l->kind, l->dir, l->dtype, what};
}

/* Fills name/type/kind/dir/dtype/dep of slice `index` of track `t` from its command, its
 * cost figures (TIU commands with a table-decoded descriptor, whatever the detail level) and,
 * with detail, its argument set. `rel` is the slice's position among the core's slices of
 * this iteration (for the GDMA byte counters kept beside them). */
void bmp_fill_cmd(struct bmp_rd *r, struct bmp_core_cmds *cc, int engine, int t, size_t index,
                  unsigned core, size_t rel)
{
	struct bmp_cmd c;
	struct tp_track *tr = &r->p->tracks[t];
	struct tp_slice *s = &tr->slices[index];
	if (!cc->have[engine] || !bmp_cmdbuf_get(&cc->cb[engine], s->cmd_id, &c)) {
		struct tp_label l = *tp_slice_label(tr, s);
		l.name = tp_profile_str(r->ap, "cmd_type_-1_0");
		l.type = tp_profile_str(r->ap, "cmd_type_-1");
		put_label(r, engine, rel, tr, s, &l, BMP_LAB_NAMES);
		return;
	}
	/* BM1684X: the register tables give the fields the hand-written decoder does not. */
	if (!c.have_desc && r->fdec && c.raw &&
	    sg_decode(r->fdec, engine == BMP_ENG_TIU ? SG_ENG_TIU : SG_ENG_DMA, c.raw, c.raw_n,
	              &c.desc)) {
		c.have_desc = 1;
		/* TIU names as its op index spells them (sys.end, not BM1688's system.end). */
		if (engine == BMP_ENG_TIU && c.desc.sub_name)
			c.name = c.desc.sub_name;
	}
	struct tp_label l = *tp_slice_label(tr, s);
	l.kind = c.kind;
	l.dir = c.dir;
	l.dtype = c.dtype;
	name_of(r, &c, &l.name, &l.type);
	put_label(r, engine, rel, tr, s, &l, BMP_LAB_ALL);
	s->dep_id = c.dep;
	struct tp_cost k = {0};
	uint32_t sim = r->sim_cyc[engine] ? sim_cycles(r, engine, core, s->cmd_id) : 0;
	if (engine == BMP_ENG_TIU && c.have_desc)
		sg_tiu_cost(r->chip, &c.desc, c.raw, &k);
	/* BM1684X: the vendor's Alg cycle is the simulator's, on every command of both engines
	 * (a GDMA entry and a TIU one without a model are valid 0: figures no total counts). */
	if (r->fdec && c.have_desc)
		k.alg_cycle = sim;
	if ((engine == BMP_ENG_TIU || r->fdec) && c.have_desc) {
		tp_track_set_cost(r->p, t, index, &k);
		s = &r->p->tracks[t].slices[index];
	}
	if (!r->detail)
		return;
	tp_args_begin(r->ap);
	struct tp_profile *p = r->ap;
	if (c.have_desc && r->fields)
		add_fields(r, engine, &c);
	else if (c.have_desc && c.kind == TP_CMD_NORMAL)
		keep_lmem(r, engine, &c, &l, t, index, core, rel);
	if (c.have_desc && r->fdec) {
		add_legacy_args(r, engine, &c, &k, sim);
		if (r->fields && r->pmu_rec[engine] && rel < r->pmu_nrec[engine])
			bmp_legacy_pmu_args(
			    p, engine, r->pmu_rec[engine] + rel * bmp_pmu_rec_bytes(r, engine));
	} else if (c.have_desc && engine == BMP_ENG_TIU) {
		add_tiu_dtype(r, &c);
		if (k.valid)
			add_tiu_cost(r, &k, s->cycles);
	} else if (r->arch == TP_ARCH_BM1684 && r->sim_cyc[engine]) {
		tp_args_add_uint(p, "Alg Cycle", sim); /* BM1684: no register tables, no types */
	}
	if (engine == BMP_ENG_GDMA && c.have_desc)
		add_dma_tail(r, &c);
	else if (engine == BMP_ENG_GDMA && c.kind == TP_CMD_NORMAL && r->arch != TP_ARCH_BM1684X) {
		tp_args_add_uint(p, bmp_key_names[BMP_K_DST], c.dst_addr);
		tp_args_add_uint(p, bmp_key_names[BMP_K_SRC], c.src_addr);
	}
	if (engine == BMP_ENG_GDMA && c.have_desc && r->gd_gmem[core] && rel < r->gd_cap[core])
		add_gdma_pmu(r, tr, s, r->gd_gmem[core][rel], r->gd_lmem[core][rel],
		             r->gd_xact[core] ? &r->gd_xact[core][rel] : NULL);
	/* The dependency also lives in s->dep_id (writers derive cmd_id_dep from it). */
	if (c.has_msg) {
		tp_args_add_uint(p, bmp_key_names[BMP_K_MSG], c.msg_id);
		tp_args_add_uint(p, bmp_key_names[BMP_K_CNT], c.msg_cnt);
	}
	s->args = tp_args_end(p);
}
