/*
 * desc.c — the generic, table-driven descriptor decoder (specs/sophgo-costmodel.md §1.3,
 * §1.4). It knows no chip: everything comes from an sg_isa (regdef_<chip>.c). Owns the
 * decoder context (struct sg_decoder): per class the bit offset of every field and of the
 * well-known fields, and the header-key tables that select a class in O(1).
 *
 * Bit convention (§1.3): a descriptor is a little-endian bit stream; field k starts at the sum
 * of the widths before it, LSB first. Header keys (§1.4):
 *   TIU  cmd_short bit 0, tsk_typ bits 41..44, tsk_eu_typ 45..49; SYS_TR_ACC-style heads have
 *        a 3-bit eu (45..47) and are looked up in a second table.
 *   DMA  cmd_short bit 3, cmd_type at 32 (4 or 5 bits), cmd_special_function (3 bits) after.
 *   CDMA (BM1690) cmd_type bits 4..7, special function 8..10.
 * Unknown sub-operation codes of a known (cmd_short, op) fall back to that op's first class,
 * so a new eu code still gets the right size; a key with no class at all stops decoding.
 */
#include "readers/sophgo/isa/sg_isa.h"

#include <string.h>

/* Names each well-known field may have in a table (first match wins). */
static const char *const known_names[SG_F_COUNT][3] = {
    [SG_F_CMD_SHORT] = {"cmd_short"},
    [SG_F_CMD_ID_DEP] = {"cmd_id_dep"},
    [SG_F_TSK_TYP] = {"tsk_typ"},
    [SG_F_TSK_EU_TYP] = {"tsk_eu_typ"},
    [SG_F_TSK_OPD_NUM] = {"tsk_opd_num"},
    [SG_F_OPT_RES0_PREC] = {"opt_res0_prec", "res0_prec"},
    [SG_F_OPT_OPD0_PREC] = {"opt_opd0_prec", "opd0_prec"},
    [SG_F_OPT_OPD1_PREC] = {"opt_opd1_prec", "opd1_prec"},
    [SG_F_OPT_OPD2_PREC] = {"opt_opd2_prec", "opd2_prec"},
    [SG_F_OPT_OPD0_SIGN] = {"opt_opd0_sign", "opd0_sign"},
    [SG_F_OPT_OPD2_SIGN] = {"opt_opd2_sign", "opd2_sign"},
    [SG_F_OPT_OPD2_CONST] = {"opt_opd2_const"},
    [SG_F_OPT_LEFT_TRAN] = {"opt_left_tran"},
    [SG_F_RES0_N] = {"res0_n"},
    [SG_F_RES0_C] = {"res0_c"},
    [SG_F_RES0_H] = {"res0_h"},
    [SG_F_RES0_W] = {"res0_w"},
    [SG_F_OPD0_N] = {"opd0_n"},
    [SG_F_OPD0_C] = {"opd0_c"},
    [SG_F_OPD0_H] = {"opd0_h"},
    [SG_F_OPD0_W] = {"opd0_w"},
    [SG_F_OPD1_N] = {"opd1_n"},
    [SG_F_OPD1_C] = {"opd1_c"},
    [SG_F_OPD1_H] = {"opd1_h"},
    [SG_F_OPD1_W] = {"opd1_w"},
    [SG_F_RES0_ADDR] = {"res0_addr"},
    [SG_F_OPD0_ADDR] = {"opd0_addr"},
    [SG_F_IMM] = {"imm"},
    [SG_F_RSVD1] = {"rsvd1"},
    [SG_F_CMD_TYPE] = {"cmd_type"},
    [SG_F_SPECIAL] = {"cmd_special_function"},
    [SG_F_SRC_FMT] = {"src_data_format"},
    [SG_F_RESERVED0] = {"reserved0"},
    [SG_F_SRC_L32] = {"src_start_addr_l32", "src_start_addr_h32"},
    [SG_F_SRC_H8] = {"src_start_addr_h8", "src_start_addr_l8", "src_start_addr_h13"},
    [SG_F_DST_L32] = {"dst_start_addr_l32", "dst_start_addr_h32"},
    [SG_F_DST_H8] = {"dst_start_addr_h8", "dst_start_addr_l8", "dst_start_addr_h13"},
};

/* Up to 8 little-endian bytes at p[0..avail), zero-extended. */
static uint64_t load(const uint8_t *p, size_t avail)
{
	if (avail >= 8)
		return tp_le64(p);
	uint64_t v = 0;
	for (size_t i = 0; i < avail; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint64_t sg_bits(const uint8_t *p, size_t bytes, unsigned off, unsigned width)
{
	size_t w = off / 64;
	unsigned sh = off % 64;
	if (8 * w >= bytes || width == 0)
		return 0;
	uint64_t v = load(p + 8 * w, bytes - 8 * w) >> sh;
	if (sh && sh + width > 64 && 8 * (w + 1) < bytes)
		v |= load(p + 8 * (w + 1), bytes - 8 * (w + 1)) << (64 - sh);
	return width >= 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

static const struct sg_regclass *find_class(const struct sg_regclass *t, uint16_t n,
                                            const char *name, uint16_t *idx)
{
	for (uint16_t i = 0; i < n; i++)
		if (strcmp(t[i].op_name, name) == 0) {
			*idx = i;
			return &t[i];
		}
	return NULL;
}

/* Resolves the offsets of one class into pool; returns the next free pool slot or NULL if the
 * widths do not add up. */
/* FNV-1a of a name: resolve() finds duplicate field names and the well-known names through a
 * per-class hash table, once per decoder; readers build a decoder per conversion (fuzz targets
 * per input), so this stays linear in the number of fields. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

#define SG_MAX_FIELDS 512
#define SG_SLOTS (2 * SG_MAX_FIELDS) /* open-addressed name table: never more than half full */

/* The slot of `name` (hash h) in an open-addressed table of field indexes: the slot holding
 * the first field of that name, or the empty slot where it would go. */
static unsigned name_slot(const uint16_t *first, const struct sg_regclass *rc, const uint32_t *fh,
                          uint32_t h, const char *name)
{
	unsigned at = h & (SG_SLOTS - 1);
	for (;;) {
		uint16_t j = first[at];
		if (j == UINT16_MAX || (fh[j] == h && strcmp(rc->fields[j].name, name) == 0))
			return at;
		at = (at + 1) & (SG_SLOTS - 1);
	}
}

static uint16_t *resolve(struct sg_dclass *dc, const struct sg_regclass *rc, uint16_t *pool)
{
	unsigned at = 0;
	memset(dc, 0, sizeof *dc);
	dc->rc = rc;
	dc->off = pool;
	dc->bytes = (uint16_t)((rc->length + 7) / 8);
	if (rc->nfields > SG_MAX_FIELDS)
		return NULL;
	uint32_t fh[SG_MAX_FIELDS];
	for (uint16_t i = 0; i < rc->nfields; i++) {
		const struct sg_field *f = &rc->fields[i];
		if (f->width == 0 || f->width > 64)
			return NULL;
		fh[i] = name_hash(f->name);
		pool[i] = (uint16_t)at;
		at += f->width;
	}
	/* A table may list more bits than its length (CV184X DMA_gather/scatter, as the vendor's
	 * regdef has them; regdef_test lists each such class): the command is still `length`
	 * bits long and fields past its end read 0. Fewer bits than the length is an error. */
	if (at < rc->length)
		return NULL;
	/* dict_src: a name's first field gets the index of its last one (whose value the dict
	 * keeps), later fields of the same name UINT16_MAX. `first` maps each name to its first
	 * field, so every lookup below is one probe sequence, not a scan of the class. */
	uint16_t *ds = pool + rc->nfields;
	dc->dict_src = ds;
	uint16_t first[SG_SLOTS];
	memset(first, 0xFF, sizeof first);
	for (uint16_t i = 0; i < rc->nfields; i++) {
		unsigned sl = name_slot(first, rc, fh, fh[i], rc->fields[i].name);
		ds[i] = i;
		if (first[sl] == UINT16_MAX) {
			first[sl] = i;
		} else {
			ds[first[sl]] = i;
			ds[i] = UINT16_MAX;
		}
	}
	/* Well-known fields: the first field (in table order) spelled like any of the names. */
	for (int k = 0; k < SG_F_COUNT; k++) {
		uint16_t best = UINT16_MAX;
		for (int a = 0; a < 3 && known_names[k][a]; a++) {
			const char *nm = known_names[k][a];
			uint16_t j = first[name_slot(first, rc, fh, name_hash(nm), nm)];
			if (j < best)
				best = j;
		}
		if (best != UINT16_MAX) {
			dc->kofs[k] = pool[best];
			dc->kw[k] = (uint8_t)rc->fields[best].width;
		}
	}
	return ds + rc->nfields;
}

/* Registers op-index entries of one engine. Pass 1 sets the listed codes, pass 2 fills the
 * unlisted codes of each (short, op) with that op's first class. */
static int index_ops(struct sg_decoder *d, int eng, const struct sg_opclass *ops, uint16_t nops,
                     const struct sg_regclass *rcs, uint16_t nrc)
{
	for (int pass = 0; pass < 2; pass++)
		for (uint16_t i = 0; i < nops; i++) {
			const struct sg_opclass *o = &ops[i];
			uint16_t ci;
			if (!find_class(rcs, nrc, o->op_name, &ci))
				return TP_EFORMAT;
			struct sg_dclass *dc = &d->cls[eng][ci];
			if (!dc->op)
				dc->op = o;
			/* Sub-op codes this op lists (codes >= 32 address no slot). The names are
			 * set in pass 0 only: pass 1 would repeat the same assignments in the same
			 * order. */
			uint32_t listed = 0;
			for (uint16_t s = 0; s < o->nsubs; s++)
				if (o->subs[s].code < 32)
					listed |= UINT32_C(1) << o->subs[s].code;
			for (int sh = 0; sh < 2; sh++) {
				if (o->is_short >= 0 && o->is_short != sh)
					continue;
				if (eng == SG_ENG_TIU) {
					if (o->op > 15)
						return TP_EFORMAT;
					int three = dc->kw[SG_F_TSK_EU_TYP] == 3;
					unsigned neu = three ? 8 : 32;
					if (pass == 0)
						for (uint16_t s = 0; s < o->nsubs; s++)
							if (o->subs[s].code < neu)
								d->tiu_sub[o->op][o->subs[s].code] =
								    o->subs[s].name;
					for (unsigned eu = 0; eu < neu; eu++) {
						if (pass == 0 && !(listed >> eu & 1))
							continue;
						int16_t *slot =
						    three ? &d->tiu_key3[o->op << 3 | eu]
						          : &d->tiu_key[sh << 9 | o->op << 5 | eu];
						if (*slot < 0)
							*slot = (int16_t)ci;
					}
				} else {
					int k = eng == SG_ENG_CDMA;
					if (o->op >= 32)
						return TP_EFORMAT;
					if (pass == 0)
						for (uint16_t s = 0; s < o->nsubs; s++)
							if (o->subs[s].code < 8)
								d->dma_sub[k][o->op]
								          [o->subs[s].code] =
								    o->subs[s].name;
					for (unsigned sp = 0; sp < 8; sp++) {
						if (pass == 0 && !(listed >> sp & 1))
							continue;
						int16_t *slot =
						    &d->dma_key[k][sh << 8 | o->op << 3 | sp];
						if (*slot < 0)
							*slot = (int16_t)ci;
					}
				}
			}
		}
	return TP_OK;
}

int sg_decoder_new(const struct sg_isa *isa, unsigned dma_type_bits, struct sg_decoder **out)
{
	*out = NULL;
	if (dma_type_bits != 4 && dma_type_bits != 5)
		return TP_EFORMAT;
	struct sg_decoder *d = tp_calloc(1, sizeof *d);
	if (!d)
		return TP_ENOMEM;
	d->isa = isa;
	d->dma_type_bits = dma_type_bits;
	memset(d->tiu_key, 0xFF, sizeof d->tiu_key);
	memset(d->tiu_key3, 0xFF, sizeof d->tiu_key3);
	memset(d->dma_key, 0xFF, sizeof d->dma_key);
	const struct sg_regclass *rcs[SG_ENG_COUNT] = {isa->tiu, isa->dma, isa->cdma};
	const uint16_t nrc[SG_ENG_COUNT] = {isa->ntiu, isa->ndma, isa->ncdma};
	const struct sg_opclass *ops[SG_ENG_COUNT] = {isa->tiu_ops, isa->dma_ops, isa->cdma_ops};
	const uint16_t nops[SG_ENG_COUNT] = {isa->ntiu_ops, isa->ndma_ops, isa->ncdma_ops};
	size_t nf = 0;
	for (int e = 0; e < SG_ENG_COUNT; e++)
		for (uint16_t i = 0; i < nrc[e]; i++)
			nf += rcs[e][i].nfields;
	int rc = TP_ENOMEM;
	d->pool = tp_calloc(nf ? 2 * nf : 1, sizeof *d->pool);
	if (!d->pool)
		goto fail;
	uint16_t *pool = d->pool;
	for (int e = 0; e < SG_ENG_COUNT; e++) {
		if (!nrc[e])
			continue;
		d->cls[e] = tp_calloc(nrc[e], sizeof *d->cls[e]);
		if (!d->cls[e]) {
			rc = TP_ENOMEM;
			goto fail;
		}
		d->ncls[e] = nrc[e];
		for (uint16_t i = 0; i < nrc[e]; i++) {
			pool = resolve(&d->cls[e][i], &rcs[e][i], pool);
			if (!pool) {
				rc = TP_EFORMAT;
				goto fail;
			}
		}
		if ((rc = index_ops(d, e, ops[e], nops[e], rcs[e], nrc[e])) != TP_OK)
			goto fail;
	}
	*out = d;
	return TP_OK;
fail:
	sg_decoder_free(d);
	return rc;
}

void sg_decoder_free(struct sg_decoder *d)
{
	if (!d)
		return;
	for (int e = 0; e < SG_ENG_COUNT; e++)
		tp_free(d->cls[e]);
	tp_free(d->pool);
	tp_free(d);
}

int sg_decode(const struct sg_decoder *d, int engine, const uint8_t *p, size_t left,
              struct sg_desc *out)
{
	if (left < 8 || engine < 0 || engine >= SG_ENG_COUNT)
		return 0;
	uint64_t h = tp_le64(p);
	int ci = -1;
	unsigned sh, op, sub;
	if (engine == SG_ENG_TIU) {
		sh = (unsigned)(h & 1);
		op = (unsigned)(h >> 41) & 15;
		sub = (unsigned)(h >> 45) & 31;
		ci = d->tiu_key[sh << 9 | op << 5 | sub];
		if (ci < 0) {
			ci = d->tiu_key3[op << 3 | (sub & 7)];
			if (ci >= 0)
				sub &= 7;
		}
		if (ci < 0)
			ci = d->tiu_key[(sh ^ 1) << 9 | op << 5 | sub];
	} else {
		int k = engine == SG_ENG_CDMA;
		unsigned tbits = d->dma_type_bits;
		if (k) {
			sh = 0;
			op = (unsigned)(h >> 4) & 15;
			sub = (unsigned)(h >> 8) & 7;
		} else {
			sh = (unsigned)(h >> 3) & 1;
			op = (unsigned)(h >> 32) & ((1u << tbits) - 1);
			sub = (unsigned)(h >> (32 + tbits)) & 7;
		}
		ci = d->dma_key[k][sh << 8 | op << 3 | sub];
		if (ci < 0)
			ci = d->dma_key[k][(sh ^ 1) << 8 | op << 3 | sub];
	}
	if (ci < 0)
		return 0;
	const struct sg_dclass *dc = &d->cls[engine][ci];
	if (dc->bytes > left)
		return 0;
	out->cls = dc;
	out->is_short = (uint8_t)sh;
	out->op = (uint8_t)op;
	out->sub = (uint8_t)sub;
	out->bytes = dc->bytes;
	out->sub_name = engine == SG_ENG_TIU ? d->tiu_sub[op & 15][sub & 31]
	                                     : d->dma_sub[engine == SG_ENG_CDMA][op & 31][sub & 7];
	return 1;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int sg_is_end(int engine, const struct sg_desc *c, const uint8_t *p, const uint8_t *rest,
              size_t nrest)
{
	if (engine == SG_ENG_TIU) {
		if (c->op != 15)
			return 0;
		if (nrest < 129 && all_zero(rest, nrest))
			return 1;
		return c->sub == 31 && sg_has(c, SG_F_RSVD1) && sg_get(c, p, SG_F_RSVD1) == 1;
	}
	unsigned sys = engine == SG_ENG_CDMA ? 7 : 6;
	return c->op == sys && c->sub == 0 && sg_has(c, SG_F_RESERVED0) &&
	       sg_get(c, p, SG_F_RESERVED0) == 1;
}

const struct sg_isa *sg_isa_for_arch(enum tp_arch a)
{
	switch (a) {
	case TP_ARCH_BM1688:
		return &sg_isa_bm1688;
	case TP_ARCH_CV184X:
		return &sg_isa_cv184x;
	case TP_ARCH_BM1690:
		return &sg_isa_bm1690;
	case TP_ARCH_BM1684X:
		return &sg_isa_bm1684x;
	default:
		return NULL;
	}
}

uint32_t *sg_class_keys(struct tp_profile *p, const struct sg_dclass *dc, int tiu,
                        int bm1688_renames)
{
	const struct sg_regclass *rc = dc->rc;
	uint32_t *k = tp_calloc(rc->nfields ? rc->nfields : 1, sizeof *k);
	if (!k)
		return NULL;
	for (uint16_t i = 0; i < rc->nfields; i++) {
		if (dc->dict_src[i] == UINT16_MAX)
			continue;
		const char *nm = rc->fields[i].name;
		char key[96];
		size_t len = strlen(nm);
		snprintf(key, sizeof key, "%s%s", tiu ? "des_" : "", nm);
		if (!tiu && bm1688_renames && strstr(nm, "start_addr_") && len < sizeof key) {
			if (len > 4 && strcmp(nm + len - 4, "_h32") == 0)
				memcpy(key + len - 4, "_l32", 5);
			else if (len > 3 && strcmp(nm + len - 3, "_l8") == 0)
				memcpy(key + len - 3, "_h8", 4);
		}
		k[i] = tp_profile_str(p, key);
	}
	return k;
}
