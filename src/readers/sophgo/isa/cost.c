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
 * divides by), sub-operation codes the op index does not list, other chips (BM1684X's
 * arch-only model is not implemented yet).
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

/* EU_NUM / CUBE_NUM / itemsize by precision code (target_1688/memmap.py). */
static uint64_t eu_num(const struct tp_chip *k, unsigned prec)
{
	switch (prec) {
	case 1:
	case 3:
	case 5:
		return k->eu_base / 2;
	case 2:
	case 4:
		return k->eu_base / 4;
	case 6:
		return k->eu_base * 2;
	default:
		return k->eu_base;
	}
}

static uint64_t cube_num(const struct tp_chip *k, unsigned prec)
{
	switch (prec) {
	case 1:
	case 3:
	case 5:
		return k->cube_base / 2;
	case 2:
	case 4:
		return 1;
	case 6:
		return k->cube_base * 2;
	default:
		return k->cube_base;
	}
}

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

void sg_tiu_cost(const struct sg_chip *chip, const struct sg_desc *c, const uint8_t *p,
                 struct tp_cost *out)
{
	*out = (struct tp_cost){0};
	if (!chip || !c->cls)
		return;
	const enum tp_arch ar = chip->c.arch;
	/* BM1690 (and its 4-core SG2260E) deltas of §3.14 (target_1690/opdef.py). */
	const int b1690 = ar == TP_ARCH_BM1690 || ar == TP_ARCH_SG2260E;
	if (ar != TP_ARCH_BM1688 && ar != TP_ARCH_CV184X && !b1690)
		return;
	const struct tp_chip *k = &chip->c;
	const uint64_t npu = k->npu_num, ohow = k->ohow_align;
	const uint64_t per_lane = k->npu_num ? k->exec_units / k->npu_num : 0;
	if (!npu || !ohow || !per_lane || !k->eu_base || !k->cube_base)
		return;
	if (c->op != 15 && c->op != 12 && !c->sub_name)
		return; /* a code the op index does not list */
	const uint64_t n = dim(c, p, SG_F_RES0_N), ch = dim(c, p, SG_F_RES0_C),
	               h = dim(c, p, SG_F_RES0_H), w = dim(c, p, SG_F_RES0_W);
	const unsigned t = opd0_prec(c, p), tr = res0_prec(c, p);
	const uint64_t eu = eu_num(k, t);
	uint64_t alg = 0, arch = 0, cyc = 0, init = 0, bank = 0;
	switch (c->op) {
	case 0: { /* CONV: conv_op */
		if (b1690 && (c->sub == 1 || c->sub == 4))
			break; /* conv.bw / conv.bw.tf32: ops 0, alg_cycle 0 (target_1690 conv_op)
			        */
		if (c->sub != 0)
			return;
		uint64_t ic = sg_get(c, p, SG_F_OPD0_C), kh = sg_get(c, p, SG_F_OPD1_H),
		         kw = sg_get(c, p, SG_F_OPD1_W), bias = sg_get(c, p, SG_F_OPT_OPD2_CONST);
		int64_t per = (int64_t)(2 * ic * kh * kw) - 1 + (int64_t)bias;
		if (per < 0)
			return;
		alg = n * ch * h * w * (uint64_t)per;
		uint64_t aeu, cpc;
		if (t == 2) {
			aeu = eu;
			cpc = 1;
		} else {
			ic = align(ic, cube_num(k, t));
			aeu = ohow;
			cpc = cube_num(k, t);
		}
		int64_t aper = (int64_t)(2 * ic * kh * kw) - 1 + (int64_t)bias;
		arch = n * align(ch, npu) * align(h * w, aeu) * (uint64_t)(aper < 0 ? 0 : aper);
		cyc = div_up(alg, npu * cpc * aeu * 2);
		init = 23;
		break;
	}
	case 1: { /* PorD: pord_op */
		uint64_t kh = sg_get(c, p, SG_F_OPD1_H), kw = sg_get(c, p, SG_F_OPD1_W), f = 2;
		if (c->sub != 0 && c->sub != 1 && c->sub != 4) {
			kh = kw = 1;
			f = 7;
		}
		if (f * kh * kw < 1)
			return;
		uint64_t per = f * kh * kw - 1;
		alg = n * ch * h * w * per;
		arch = n * align(ch, npu) * align(h * w, eu) * per;
		uint64_t s = c->sub == 0   ? 2
		             : c->sub == 1 ? 1
		             : c->sub == 2 ? 3
		             : c->sub == 4 ? 1
		                           : 7;
		cyc = div_up(alg, s * eu * npu);
		init = 10;
		break;
	}
	case 2:
		if (c->sub == 1) { /* MM: mm_op; BM1688's converter always gives 3 operands */
			uint64_t m = sg_get(c, p, SG_F_OPD0_N),
			         kk = sg_get(c, p, SG_F_OPD0_W) * sg_get(c, p, SG_F_OPD0_C);
			uint64_t nn = sg_get(c, p, SG_F_RES0_W) * sg_get(c, p, SG_F_RES0_C);
			if (sg_get(c, p, SG_F_OPT_LEFT_TRAN)) {
				uint64_t x = kk;
				kk = m;
				m = x;
			}
			uint64_t per = 2 * kk; /* 2k - 1 + has_bias */
			alg = m * nn * per;
			arch = m * align(sg_get(c, p, SG_F_RES0_C), npu) *
			       align(sg_get(c, p, SG_F_RES0_W), eu) * per;
			cyc = div_up(alg, eu * npu * 2);
			init = 32;
		} else if (c->sub >= 4 && c->sub <= 6) { /* MM2: mm2_op */
			uint64_t m = sg_get(c, p, SG_F_RES0_C), kk = sg_get(c, p, SG_F_OPD1_W),
			         nn = sg_get(c, p, SG_F_OPD1_C);
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
			alg = 2 * m * nn * kk;
			/* BM1690 aligns n to EU(res), BM1688/CV184X to CUBE(res). */
			arch = 2 * align(m, npu) *
			       align(nn, b1690 ? eu_num(k, tr) : cube_num(k, tr)) * align(kk, ohow);
			cyc = div_up(alg, cube_num(k, t) * ohow * npu * 2);
			init = c->sub == 4 ? 81 : c->sub == 5 ? 56 : 37;
		} else {
			return;
		}
		break;
	case 3: { /* AR: ar_op */
		uint64_t f = c->sub == 12 ? 5 : 1;
		alg = n * ch * h * w * f;
		arch = n * align(ch, npu) * align(h * w, eu) * f;
		cyc = div_up(alg, eu * f * npu);
		init = 11;
		break;
	}
	case 4: /* RQ&DQ: rqdq_op */
		alg = n * ch * h * w * 3;
		arch = n * align(ch, npu) * align(h * w, eu) * 3;
		cyc = div_up(alg, eu * npu * 3);
		init = 11;
		bank = sg_get(c, p, SG_F_RES0_ADDR) * 2 == sg_get(c, p, SG_F_OPD0_ADDR) ? 2 : 1;
		break;
	case 5: { /* CW&BC: transbc_op; result shape per sCW_sBC_converter: s_bc (1,c,1,w),
		   * s_distribute (1,c,1,1) */
		uint64_t rn = n, rh = h, rw = w;
		if (c->sub == 4 || c->sub == 5)
			rn = rh = 1;
		if (c->sub == 5)
			rw = 1;
		alg = rn * ch * rh * rw;
		uint64_t hw = c->sub <= 1 ? rh * align(rw, eu) : align(rh * rw, eu);
		arch = rn * align(ch, npu) * hw;
		uint64_t aeu = per_lane / item_bytes(tr);
		uint64_t thr = (c->sub == 3 || c->sub == 4) ? aeu * npu : aeu;
		cyc = div_up(alg, thr);
		static const uint8_t ini[6] = {30, 0, 27, 27, 3, 3};
		init = c->sub < 6 ? ini[c->sub] : 0;
		break;
	}
	case 6: /* SG (eu 0..16) / SGL (eu 17, 18): sg_op, sgl_op */
		alg = n * ch * h * w;
		arch = n * align(ch, npu) * h * align(w, eu);
		if (c->sub == 17 || c->sub == 18) {
			cyc = div_up(alg, npu * npu);
			init = 24;
		} else {
			cyc = div_up(alg, npu);
			init = 11;
		}
		break;
	case 9: { /* SFU: sfu_op, one result tensor; operand-0 shape (long) or the result's */
		uint64_t f;
		if (c->sub == 12 || c->sub == 13) {
			uint64_t l = sg_get(c, p, SG_F_OPD1_N);
			if (l == 0)
				return;
			f = 2 * l - 1;
		} else if (c->sub == 15) {
			f = 1;
		} else if (c->sub == 17) {
			f = 30;
			init = 14;
		} else {
			return;
		}
		uint64_t on = n, oc = ch, oh = h, ow = w;
		if (sg_has(c, SG_F_OPD0_N)) {
			on = sg_get(c, p, SG_F_OPD0_N);
			oc = sg_get(c, p, SG_F_OPD0_C);
			oh = sg_get(c, p, SG_F_OPD0_H);
			ow = sg_get(c, p, SG_F_OPD0_W);
		}
		alg = on * oc * oh * ow * f;
		arch = on * align(oc, npu) * align(oh * ow, eu) * f;
		uint64_t f2 = (c->sub == 12 || c->sub == 13) ? 2 : 1;
		cyc = div_up(alg, eu * npu * f2);
		break;
	}
	case 10: /* LIN: lin_op */
		alg = n * ch * h * w * 2;
		arch = n * align(ch, npu) * h * align(w, eu) * 2;
		cyc = div_up(alg, (per_lane / item_bytes(tr)) * npu * 2);
		init = 12;
		break;
	case 13: { /* CMP: cmp_op; result 0 has operand 0's type, or opt_opd2_prec's for the
		    * select-only codes 23, 24, 26 (sCMP_converter) */
		unsigned rt = t;
		if (c->sub == 23 || c->sub == 24 || c->sub == 26)
			rt = (unsigned)sg_get(c, p, SG_F_OPT_OPD2_PREC);
		alg = n * ch * h * w * 2;
		arch = n * align(ch, npu) * align(h * w, eu) * 2;
		cyc = div_up(alg, (per_lane / item_bytes(rt)) * npu * 2);
		init = 9;
		break;
	}
	case 14: { /* VC: vc_op; the vendor's results[1] is res0 here (one result). sVC's result
		    * shape is ((opd0_c - 1) * opd0_w + opd1_w, res0_c, 1, res0_w) (sVC_converter)
		    */
		uint64_t vn = n;
		if (!sg_has(c, SG_F_RES0_N)) {
			uint64_t oc = sg_get(c, p, SG_F_OPD0_C);
			if (oc == 0)
				return;
			vn = (oc - 1) * sg_get(c, p, SG_F_OPD0_W) + sg_get(c, p, SG_F_OPD1_W);
		}
		alg = vn * ch * h * w;
		uint64_t b = item_bytes(t),
		         b1 = item_bytes((unsigned)sg_get(c, p, SG_F_OPT_OPD1_PREC)),
		         br = item_bytes(tr);
		if (b1 > b)
			b = b1;
		if (br > b)
			b = br;
		uint64_t aeu = per_lane / b;
		arch = vn * align(ch, npu) * h * align(w, aeu);
		cyc = div_up(alg, aeu * npu);
		break;
	}
	case 12:
	case 15: /* SYS_TR_ACC, SYS */
		alg = arch = 1;
		break;
	default: /* LAR and unknown task types */
		return;
	}
	if (b1690) /* bm1690_defs.py::get_tiu_info prints both ratios as 0.0% */
		init = bank = 0;
	out->alg_ops = alg;
	out->uarch_ops = arch;
	out->alg_cycle = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
	out->init_cycle = (uint32_t)init;
	out->bank_cycle = (uint32_t)bank;
	out->valid = 1;
}
