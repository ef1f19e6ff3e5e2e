/*
 * cost.c — the vendor's TIU cost model per command (specs/sophgo-costmodel.md §3): Alg Ops,
 * uArch Ops, Alg Cycle, initial and bank-conflict cycles for every op class of BM1688/CV186X
 * (and CV184X, which §3.14 says uses the same formulas with its own constants). Constants
 * come from the chip table (chip.c); operands from the decoded descriptor (desc.c). Owns
 * nothing.
 *
 * Source of every formula: tpu-mlir python/debugger/target_1688/opdef.py
 * <class>.ops / alg_cycle / initial_cycle / bank_conflict_cycle, as transcribed in the spec
 * (conv, mm, arith, pooling and rq checked there against the reference on 189 commands;
 * tests/sophgo/refcheck.py checks all 304 TIU commands of the BM1688 dump). Where a short
 * layout lacks a register a formula reads (classes absent from the reference dump):
 *   - operand-0 precision absent (sCW&sBC, sLIN, sSGL): the result precision;
 *   - result precision absent (sCMP): operand 0's, or opt_opd2_prec for eu 23/24/26;
 *   - result shapes: sCW&sBC s_bc (1,c,1,w) and s_distribute (1,c,1,1); sVC
 *     ((opd0_c-1)*opd0_w + opd1_w, c, 1, w); a dimension a layout lacks otherwise reads 1.
 * These follow target_1688/opparam.py's s<OP>_converter (tpu-mlir @3dd87425), which builds
 * the operands the formulas read; the long forms are assumed to build them the same way.
 * BM1690 / SG2260E (§3.14, target_1690/opdef.py): the same formulas with its constants,
 * except MM2's uArch aligns n to EU(res) (not CUBE), conv.bw / conv.bw.tf32 give 0 ops and 0
 * cycles, and no initial / bank-conflict cycles (its printer shows both ratios as 0.0%).
 * Not modelled (valid = 0): LAR (the vendor's base class returns 0 ops, which its printer
 * divides by), sub-operation codes the op index does not list, other chips. BM1684X has its
 * own ops-only model (cost_bm1684x.c).
 */
#include "readers/sophgo/isa/sg_isa.h"

#include <stdio.h>

static uint64_t div_up(uint64_t x, uint64_t a)
{
	return a ? (x + a - 1) / a : 0;
}

static uint64_t align(uint64_t x, uint64_t a)
{
	return div_up(x, a) * a;
}

/* Precision codes (sg_prec_name's order) as target_1688/memmap.py sizes them: itemsize by
 * code, and EU_NUM / CUBE_NUM from it, a lane's units split by the item size. */
enum { PREC_INT4 = 6 };

static uint64_t item_bytes(unsigned prec)
{
	switch (prec) {
	case 1:
	case 3:
	case 5:
		return 2;
	case 2:
	case 4:
		return 4;
	default:
		return 1; /* INT8, FP8, INT4 (0.5 rounded up) */
	}
}

/* INT4 packs two items a unit. */
static uint64_t eu_num(const struct tp_chip *k, unsigned prec)
{
	return prec == PREC_INT4 ? k->eu_base * 2 : k->eu_base / item_bytes(prec);
}

/* As EU_NUM, but 32-bit items have a single cube. */
static uint64_t cube_num(const struct tp_chip *k, unsigned prec)
{
	if (prec == PREC_INT4)
		return k->cube_base * 2;
	return item_bytes(prec) == 4 ? 1 : k->cube_base / item_bytes(prec);
}

const char *sg_prec_name(unsigned code)
{
	static const char *const names[10] = {"INT8",  "FP16", "FP32", "INT16", "INT32",
	                                      "BFP16", "INT4", "FP8",  "FP20",  "TF32"};
	return code < 10 ? names[code] : "None";
}

void sg_pct1(char *buf, size_t n, double num, double den)
{
	if (den == 0) {
		snprintf(buf, n, "0.0%%");
		return;
	}
	snprintf(buf, n, "%.1f%%", num / den * 100.0);
}

/* A shape dimension, 1 when the layout has no such register. */
static uint64_t dim(const struct sg_desc *c, const uint8_t *p, enum sg_fid f)
{
	return sg_has(c, f) ? sg_get(c, p, f) : 1;
}

static unsigned opd0_prec(const struct sg_desc *c, const uint8_t *p)
{
	return (unsigned)sg_get(
	    c, p, sg_has(c, SG_F_OPT_OPD0_PREC) ? SG_F_OPT_OPD0_PREC : SG_F_OPT_RES0_PREC);
}

static unsigned res0_prec(const struct sg_desc *c, const uint8_t *p)
{
	return (unsigned)sg_get(
	    c, p, sg_has(c, SG_F_OPT_RES0_PREC) ? SG_F_OPT_RES0_PREC : SG_F_OPT_OPD0_PREC);
}

/* One command's operands and the chip's constants, as every op class's formula reads them. */
struct tiu_in {
	const struct tp_chip *k;
	const struct sg_desc *c;
	const uint8_t *p;
	uint64_t npu, ohow, per_lane; /* lanes, ohow alignment, execution units per lane */
	uint64_t n, ch, h, w;         /* result 0's shape */
	unsigned t, tr;               /* operand 0's and result 0's precision */
	uint64_t eu;                  /* EU(operand 0) */
	int b1690;                    /* BM1690 / SG2260E deltas */
};

/* The figures a formula gives. */
struct tiu_fig {
	uint64_t alg, arch, cyc, init, bank;
};

/* Each op class's formula: 1 with the figures set, 0 when the command is not modelled. */

static int cost_conv(const struct tiu_in *in, struct tiu_fig *o) /* CONV: conv_op */
{
	const struct sg_desc *c = in->c;
	const uint8_t *p = in->p;
	if (in->b1690 && (c->sub == 1 || c->sub == 4))
		return 1; /* conv.bw / conv.bw.tf32: ops 0, alg_cycle 0 (target_1690 conv_op) */
	if (c->sub != 0)
		return 0;
	uint64_t ic = sg_get(c, p, SG_F_OPD0_C), kh = sg_get(c, p, SG_F_OPD1_H),
	         kw = sg_get(c, p, SG_F_OPD1_W), bias = sg_get(c, p, SG_F_OPT_OPD2_CONST);
	int64_t per = (int64_t)(2 * ic * kh * kw) - 1 + (int64_t)bias;
	if (per < 0)
		return 0;
	o->alg = in->n * in->ch * in->h * in->w * (uint64_t)per;
	uint64_t aeu, cpc;
	if (in->t == 2) {
		aeu = in->eu;
		cpc = 1;
	} else {
		ic = align(ic, cube_num(in->k, in->t));
		aeu = in->ohow;
		cpc = cube_num(in->k, in->t);
	}
	int64_t aper = (int64_t)(2 * ic * kh * kw) - 1 + (int64_t)bias;
	o->arch = in->n * align(in->ch, in->npu) * align(in->h * in->w, aeu) *
	          (uint64_t)(aper < 0 ? 0 : aper);
	o->cyc = div_up(o->alg, in->npu * cpc * aeu * 2);
	o->init = 23;
	return 1;
}

static int cost_pord(const struct tiu_in *in, struct tiu_fig *o) /* PorD: pord_op */
{
	const struct sg_desc *c = in->c;
	uint64_t kh = sg_get(c, in->p, SG_F_OPD1_H), kw = sg_get(c, in->p, SG_F_OPD1_W), f = 2;
	if (c->sub != 0 && c->sub != 1 && c->sub != 4) {
		kh = kw = 1;
		f = 7;
	}
	if (f * kh * kw < 1)
		return 0;
	uint64_t per = f * kh * kw - 1;
	o->alg = in->n * in->ch * in->h * in->w * per;
	o->arch = in->n * align(in->ch, in->npu) * align(in->h * in->w, in->eu) * per;
	uint64_t s = c->sub == 0 ? 2 : c->sub == 1 ? 1 : c->sub == 2 ? 3 : c->sub == 4 ? 1 : 7;
	o->cyc = div_up(o->alg, s * in->eu * in->npu);
	o->init = 10;
	return 1;
}

/* MM: mm_op; BM1688's converter always gives 3 operands. */
static int cost_mm(const struct tiu_in *in, struct tiu_fig *o)
{
	const struct sg_desc *c = in->c;
	const uint8_t *p = in->p;
	uint64_t m = sg_get(c, p, SG_F_OPD0_N),
	         kk = sg_get(c, p, SG_F_OPD0_W) * sg_get(c, p, SG_F_OPD0_C);
	uint64_t nn = sg_get(c, p, SG_F_RES0_W) * sg_get(c, p, SG_F_RES0_C);
	if (sg_get(c, p, SG_F_OPT_LEFT_TRAN)) {
		uint64_t x = kk;
		kk = m;
		m = x;
	}
	uint64_t per = 2 * kk; /* 2k - 1 + has_bias */
	o->alg = m * nn * per;
	o->arch = m * align(sg_get(c, p, SG_F_RES0_C), in->npu) *
	          align(sg_get(c, p, SG_F_RES0_W), in->eu) * per;
	o->cyc = div_up(o->alg, in->eu * in->npu * 2);
	o->init = 32;
	return 1;
}

static int cost_mm2(const struct tiu_in *in, struct tiu_fig *o) /* MM2: mm2_op */
{
	const struct sg_desc *c = in->c;
	uint64_t m = sg_get(c, in->p, SG_F_RES0_C), kk = sg_get(c, in->p, SG_F_OPD1_W),
	         nn = sg_get(c, in->p, SG_F_OPD1_C);
	if (c->sub == 5) {
		uint64_t x = kk;
		kk = nn;
		nn = x;
	} else if (c->sub == 6) {
		uint64_t m0 = m, k0 = kk;
		m = k0;
		kk = m0;
		nn = k0; /* (m, k, n) <- (k, m, k), as the vendor wrote it */
	}
	o->alg = 2 * m * nn * kk;
	/* BM1690 aligns n to EU(res), BM1688/CV184X to CUBE(res). */
	o->arch = 2 * align(m, in->npu) *
	          align(nn, in->b1690 ? eu_num(in->k, in->tr) : cube_num(in->k, in->tr)) *
	          align(kk, in->ohow);
	o->cyc = div_up(o->alg, cube_num(in->k, in->t) * in->ohow * in->npu * 2);
	o->init = c->sub == 4 ? 81 : c->sub == 5 ? 56 : 37;
	return 1;
}

static int cost_ar(const struct tiu_in *in, struct tiu_fig *o) /* AR: ar_op */
{
	uint64_t f = in->c->sub == 12 ? 5 : 1;
	o->alg = in->n * in->ch * in->h * in->w * f;
	o->arch = in->n * align(in->ch, in->npu) * align(in->h * in->w, in->eu) * f;
	o->cyc = div_up(o->alg, in->eu * f * in->npu);
	o->init = 11;
	return 1;
}

static int cost_rqdq(const struct tiu_in *in, struct tiu_fig *o) /* RQ&DQ: rqdq_op */
{
	o->alg = in->n * in->ch * in->h * in->w * 3;
	o->arch = in->n * align(in->ch, in->npu) * align(in->h * in->w, in->eu) * 3;
	o->cyc = div_up(o->alg, in->eu * in->npu * 3);
	o->init = 11;
	o->bank = sg_get(in->c, in->p, SG_F_RES0_ADDR) * 2 == sg_get(in->c, in->p, SG_F_OPD0_ADDR)
	              ? 2
	              : 1;
	return 1;
}

/* CW&BC: transbc_op; result shape per sCW_sBC_converter: s_bc (1,c,1,w), s_distribute
 * (1,c,1,1). */
static int cost_cwbc(const struct tiu_in *in, struct tiu_fig *o)
{
	const unsigned sub = in->c->sub;
	uint64_t rn = in->n, rh = in->h, rw = in->w;
	if (sub == 4 || sub == 5)
		rn = rh = 1;
	if (sub == 5)
		rw = 1;
	o->alg = rn * in->ch * rh * rw;
	uint64_t hw = sub <= 1 ? rh * align(rw, in->eu) : align(rh * rw, in->eu);
	o->arch = rn * align(in->ch, in->npu) * hw;
	uint64_t aeu = in->per_lane / item_bytes(in->tr);
	uint64_t thr = (sub == 3 || sub == 4) ? aeu * in->npu : aeu;
	o->cyc = div_up(o->alg, thr);
	static const uint8_t ini[6] = {30, 0, 27, 27, 3, 3};
	o->init = sub < 6 ? ini[sub] : 0;
	return 1;
}

/* SG (eu 0..16) / SGL (eu 17, 18): sg_op, sgl_op. */
static int cost_sg(const struct tiu_in *in, struct tiu_fig *o)
{
	o->alg = in->n * in->ch * in->h * in->w;
	o->arch = in->n * align(in->ch, in->npu) * in->h * align(in->w, in->eu);
	if (in->c->sub == 17 || in->c->sub == 18) {
		o->cyc = div_up(o->alg, in->npu * in->npu);
		o->init = 24;
	} else {
		o->cyc = div_up(o->alg, in->npu);
		o->init = 11;
	}
	return 1;
}

/* SFU: sfu_op, one result tensor; operand-0 shape (long) or the result's. */
static int cost_sfu(const struct tiu_in *in, struct tiu_fig *o)
{
	const struct sg_desc *c = in->c;
	const uint8_t *p = in->p;
	uint64_t f;
	if (c->sub == 12 || c->sub == 13) {
		uint64_t l = sg_get(c, p, SG_F_OPD1_N);
		if (l == 0)
			return 0;
		f = 2 * l - 1;
	} else if (c->sub == 15) {
		f = 1;
	} else if (c->sub == 17) {
		f = 30;
		o->init = 14;
	} else {
		return 0;
	}
	uint64_t on = in->n, oc = in->ch, oh = in->h, ow = in->w;
	if (sg_has(c, SG_F_OPD0_N)) {
		on = sg_get(c, p, SG_F_OPD0_N);
		oc = sg_get(c, p, SG_F_OPD0_C);
		oh = sg_get(c, p, SG_F_OPD0_H);
		ow = sg_get(c, p, SG_F_OPD0_W);
	}
	o->alg = on * oc * oh * ow * f;
	o->arch = on * align(oc, in->npu) * align(oh * ow, in->eu) * f;
	uint64_t f2 = (c->sub == 12 || c->sub == 13) ? 2 : 1;
	o->cyc = div_up(o->alg, in->eu * in->npu * f2);
	return 1;
}

static int cost_lin(const struct tiu_in *in, struct tiu_fig *o) /* LIN: lin_op */
{
	o->alg = in->n * in->ch * in->h * in->w * 2;
	o->arch = in->n * align(in->ch, in->npu) * in->h * align(in->w, in->eu) * 2;
	o->cyc = div_up(o->alg, (in->per_lane / item_bytes(in->tr)) * in->npu * 2);
	o->init = 12;
	return 1;
}

/* CMP: cmp_op; result 0 has operand 0's type, or opt_opd2_prec's for the select-only codes
 * 23, 24, 26 (sCMP_converter). */
static int cost_cmp(const struct tiu_in *in, struct tiu_fig *o)
{
	const unsigned sub = in->c->sub;
	unsigned rt = in->t;
	if (sub == 23 || sub == 24 || sub == 26)
		rt = (unsigned)sg_get(in->c, in->p, SG_F_OPT_OPD2_PREC);
	o->alg = in->n * in->ch * in->h * in->w * 2;
	o->arch = in->n * align(in->ch, in->npu) * align(in->h * in->w, in->eu) * 2;
	o->cyc = div_up(o->alg, (in->per_lane / item_bytes(rt)) * in->npu * 2);
	o->init = 9;
	return 1;
}

/* VC: vc_op; the vendor's results[1] is res0 here (one result). sVC's result shape is
 * ((opd0_c - 1) * opd0_w + opd1_w, res0_c, 1, res0_w) (sVC_converter). */
static int cost_vc(const struct tiu_in *in, struct tiu_fig *o)
{
	const struct sg_desc *c = in->c;
	const uint8_t *p = in->p;
	uint64_t vn = in->n;
	if (!sg_has(c, SG_F_RES0_N)) {
		uint64_t oc = sg_get(c, p, SG_F_OPD0_C);
		if (oc == 0)
			return 0;
		vn = (oc - 1) * sg_get(c, p, SG_F_OPD0_W) + sg_get(c, p, SG_F_OPD1_W);
	}
	o->alg = vn * in->ch * in->h * in->w;
	uint64_t b = item_bytes(in->t), b1 = item_bytes((unsigned)sg_get(c, p, SG_F_OPT_OPD1_PREC)),
	         br = item_bytes(in->tr);
	if (b1 > b)
		b = b1;
	if (br > b)
		b = br;
	uint64_t aeu = in->per_lane / b;
	o->arch = vn * align(in->ch, in->npu) * in->h * align(in->w, aeu);
	o->cyc = div_up(o->alg, aeu * in->npu);
	return 1;
}

/* MM: sub 1 is mm_op, subs 4-6 mm2_op; the others have no formula. */
static int cost_mm_any(const struct tiu_in *in, struct tiu_fig *o)
{
	if (in->c->sub == 1)
		return cost_mm(in, o);
	if (in->c->sub >= 4 && in->c->sub <= 6)
		return cost_mm2(in, o);
	return 0;
}

/* SYS_TR_ACC (12) and SYS (15): one Alg op and one uArch op, no cycles. */
static int cost_sys(const struct tiu_in *in, struct tiu_fig *o)
{
	(void)in;
	o->alg = o->arch = 1;
	return 1;
}

/* The formula of the command's op class (task type): 0 when none applies (LAR and unknown
 * task types). */
static int cost_class(const struct tiu_in *in, struct tiu_fig *o)
{
	typedef int (*cost_fn)(const struct tiu_in *in, struct tiu_fig *o);
	static const cost_fn by_type[16] = {
	    [0] = cost_conv, [1] = cost_pord, [2] = cost_mm_any, [3] = cost_ar,   [4] = cost_rqdq,
	    [5] = cost_cwbc, [6] = cost_sg,   [9] = cost_sfu,    [10] = cost_lin, [12] = cost_sys,
	    [13] = cost_cmp, [14] = cost_vc,  [15] = cost_sys};
	const cost_fn f = in->c->op < 16 ? by_type[in->c->op] : NULL;
	return f ? f(in, o) : 0;
}

void sg_tiu_cost(const struct sg_chip *chip, const struct sg_desc *c, const uint8_t *p,
                 struct tp_cost *out)
{
	*out = (struct tp_cost){0};
	if (!chip || !c->cls)
		return;
	const enum tp_arch ar = chip->c.arch;
	if (ar == TP_ARCH_BM1684X) {
		sg_tiu_cost_bm1684x(&chip->c, c, p, out);
		return;
	}
	struct tiu_in in;
	/* BM1690 (and its 4-core SG2260E) deltas of §3.14 (target_1690/opdef.py). */
	in.b1690 = ar == TP_ARCH_BM1690 || ar == TP_ARCH_SG2260E;
	if (ar != TP_ARCH_BM1688 && ar != TP_ARCH_CV184X && !in.b1690)
		return;
	const struct tp_chip *k = &chip->c;
	in.k = k;
	in.c = c;
	in.p = p;
	in.npu = k->npu_num;
	in.ohow = k->ohow_align;
	in.per_lane = k->npu_num ? k->exec_units / k->npu_num : 0;
	if (!in.npu || !in.ohow || !in.per_lane || !k->eu_base || !k->cube_base)
		return;
	if (c->op != 15 && c->op != 12 && !c->sub_name)
		return; /* a code the op index does not list */
	in.n = dim(c, p, SG_F_RES0_N);
	in.ch = dim(c, p, SG_F_RES0_C);
	in.h = dim(c, p, SG_F_RES0_H);
	in.w = dim(c, p, SG_F_RES0_W);
	in.t = opd0_prec(c, p);
	in.tr = res0_prec(c, p);
	in.eu = eu_num(k, in.t);
	struct tiu_fig o = {0, 0, 0, 0, 0};
	if (!cost_class(&in, &o))
		return;
	if (in.b1690) /* bm1690_defs.py::get_tiu_info prints both ratios as 0.0% */
		o.init = o.bank = 0;
	out->alg_ops = o.alg;
	out->uarch_ops = o.arch;
	out->alg_cycle = o.cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)o.cyc;
	out->init_cycle = (uint32_t)o.init;
	out->bank_cycle = (uint32_t)o.bank;
	out->valid = 1;
}
