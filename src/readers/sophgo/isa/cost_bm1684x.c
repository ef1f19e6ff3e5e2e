/*
 * cost_bm1684x.c — BM1684X's TIU cost model per command (specs/sophgo-costmodel.md §3.14):
 * Alg Ops and uArch Ops only, as the vendor's legacy profiler (bmprofile_analyze,
 * profile_helper/opdef_1684x.py alg_ops / arch_ops) gives them; it has no cycle formula (the
 * "Alg cycle" it prints is the compiler simulator's, net_stat.sim), no initial or
 * bank-conflict cycles. Also the legacy printer's operand type names ("f16", "si32"). Owns
 * nothing.
 *
 * The spec's BM1684X deltas: conv adds has_bias (not opt_opd2_const) and aligns ic to the lane
 * count; spatial dimensions align to EU(t). The rest follows the BM1688 structure of §3 with
 * those alignments, checked on every TIU command of the real BM1684X dump (90 commands:
 * tests/sophgo/test_bm1684x.py against the vendor's instruction.csv), which fixes:
 *   - EU(t) = 64 / itemsize(t) lanes-wide elements: 16 for 32-bit, 32 for 16-bit operands
 *     (8-bit: 64, by the same rule, not seen in the reference);
 *   - conv: has_bias is 1 on every conv.normal (short layouts have no operand count);
 *   - pord: depthwise (2·kh·kw − 1) per output, maxpooling (kh·kw − 1);
 *   - arith (f = 1), tsbc l_copy / l_bc / s_distribute: n·ALIGN(c, NPU)·ALIGN(h·w, EU);
 *   - SYS: 1 and 1.
 * Sub-operations neither the spec nor the reference pins down (avg/min/roi pooling, arith.div,
 * the transposes, s_bc, MM2, SFU, LIN, CMP, VC, SG, RQ/DQ) are not modelled (valid = 0): no
 * invented figure.
 */
#include "readers/sophgo/isa/sg_isa.h"

#include <stdio.h>

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return a ? (x + a - 1) / a * a : 0;
}

/* Bytes of one element of precision code `prec` (INT4 counts as 1). */
static unsigned prec_bytes(unsigned prec)
{
	switch (prec) {
	case 1: /* FP16 */
	case 3: /* INT16 */
	case 5: /* BF16 */
		return 2;
	case 2: /* FP32 */
	case 4: /* INT32 */
		return 4;
	default:
		return 1;
	}
}

static uint64_t dim(const struct sg_desc *c, const uint8_t *p, enum sg_fid f)
{
	return sg_has(c, f) ? sg_get(c, p, f) : 1;
}

/* Operand 0's precision: opd0_prec, or the result's in layouts without it (tsbc). */
static unsigned opd0_prec(const struct sg_desc *c, const uint8_t *p)
{
	return (unsigned)sg_get(
	    c, p, sg_has(c, SG_F_OPT_OPD0_PREC) ? SG_F_OPT_OPD0_PREC : SG_F_OPT_RES0_PREC);
}

void sg_tiu_cost_bm1684x(const struct tp_chip *k, const struct sg_desc *c, const uint8_t *p,
                         struct tp_cost *out)
{
	*out = (struct tp_cost){0};
	uint64_t npu = k->npu_num, eu = (uint64_t)k->eu_base * 4 / prec_bytes(opd0_prec(c, p));
	if (!npu || !eu)
		return;
	uint64_t n = dim(c, p, SG_F_RES0_N), ch = dim(c, p, SG_F_RES0_C),
	         h = dim(c, p, SG_F_RES0_H), w = dim(c, p, SG_F_RES0_W);
	uint64_t outs = n * ch * h * w, lanes = n * align_up(ch, npu) * align_up(h * w, eu);
	uint64_t alg, arch;
	switch (c->op) {
	case 0: { /* CONV conv.normal: opdef_1684x conv_op */
		if (c->sub != 0)
			return;
		uint64_t ic = sg_get(c, p, SG_F_OPD0_C), kh = sg_get(c, p, SG_F_OPD1_H),
		         kw = sg_get(c, p, SG_F_OPD1_W);
		uint64_t bias = 1;
		if (sg_has(c, SG_F_TSK_OPD_NUM))
			bias = sg_get(c, p, SG_F_TSK_OPD_NUM) > 2;
		if (2 * ic * kh * kw + bias < 1)
			return;
		alg = outs * (2 * ic * kh * kw - 1 + bias);
		arch = lanes * (2 * align_up(ic, npu) * kh * kw - 1 + bias);
		break;
	}
	case 1: { /* PorD */
		uint64_t kk = sg_get(c, p, SG_F_OPD1_H) * sg_get(c, p, SG_F_OPD1_W);
		uint64_t per;
		if (c->sub == 0 && kk) /* depthwise: a multiply-add per tap, less one add */
			per = 2 * kk - 1;
		else if (c->sub == 4 && kk) /* maxpooling: kh·kw − 1 comparisons */
			per = kk - 1;
		else
			return;
		alg = outs * per;
		arch = lanes * per;
		break;
	}
	case 3: /* AR */
		if (c->sub == 12)
			return; /* arith.div: not pinned down */
		alg = outs;
		arch = lanes;
		break;
	case 5: /* TRANS&BC: l_copy, l_bc, s_distribute */
		if (c->sub != 2 && c->sub != 3 && c->sub != 5)
			return;
		alg = outs;
		arch = lanes;
		break;
	case 15: /* SYS */
		alg = arch = 1;
		break;
	default:
		return;
	}
	if (!arch)
		return; /* an empty shape: nothing to model, no figure */
	out->alg_ops = alg;
	out->uarch_ops = arch;
	out->valid = 1;
}

/* The legacy printer's name of an operand type: f16 / f32 / bf16 for floats, and for integers
 * si / ui with a sign register, i without one, then the width. */
static void type_name(unsigned prec, int has_sign, unsigned sign, char *buf, size_t n)
{
	static const char *const fl[8] = {NULL, "f16", "f32", NULL, NULL, "bf16", NULL, NULL};
	static const unsigned bits[8] = {8, 16, 32, 16, 32, 16, 4, 8};
	if (prec < 8 && fl[prec]) {
		snprintf(buf, n, "%s", fl[prec]);
		return;
	}
	snprintf(buf, n, "%s%u", !has_sign ? "i" : sign ? "si" : "ui", bits[prec & 7]);
}

void sg_bm1684x_dtypes(const struct sg_desc *c, const uint8_t *p, char *opd0, char *res, size_t n)
{
	opd0[0] = res[0] = '\0';
	if (!sg_has(c, SG_F_OPT_RES0_PREC))
		return;
	unsigned rp = (unsigned)sg_get(c, p, SG_F_OPT_RES0_PREC);
	unsigned op = opd0_prec(c, p);
	int hs = sg_has(c, SG_F_OPT_OPD0_SIGN);
	unsigned s0 = hs ? (unsigned)sg_get(c, p, SG_F_OPT_OPD0_SIGN) : 0;
	/* AR keeps the result's sign in the opd2_sign register. */
	int hrs = hs;
	unsigned rs = s0;
	if (c->op == 3 && sg_has(c, SG_F_OPT_OPD2_SIGN)) {
		rs = (unsigned)sg_get(c, p, SG_F_OPT_OPD2_SIGN);
		hrs = 1;
	}
	type_name(op, hs, s0, opd0, n);
	type_name(rp, hrs, rs, res, n);
}
