/*
 * xlsx_fixture.c — deterministic synthetic profiles for the workbook tests and benchmark
 * (see xlsx_fixture.h). Commands are laid out back to back per engine with lengths from a
 * fixed linear congruential sequence, so every run builds the same profile.
 */
#include "writers/xlsx/xlsx_fixture.h"
#include "readers/sophgo/sophgo_int.h"

#include <stdio.h>
#include <string.h>

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xFFFF;
}

#define TIU_MHZ 900.0
#define DMA_MHZ 750.0

static int fill_engine(struct tp_profile *p, int track, enum tp_track_kind kind, size_t n, int core,
                       int layers, int bad, uint32_t seed)
{
	uint64_t cyc = 100 + (uint64_t)core * 37;
	double mhz = kind == TP_TRACK_TIU ? TIU_MHZ : DMA_MHZ;
	if (tp_track_reserve(p, track, n))
		return -1;
	static const enum tp_dir dirs[] = {TP_DIR_DDR_TO_LMEM, TP_DIR_LMEM_TO_DDR,
	                                   TP_DIR_LMEM_TO_LMEM, TP_DIR_DDR_TO_DDR};
	uint32_t t_wait = tp_profile_str(p, kind == TP_TRACK_TIU ? "system.wait_msg" : "sys_wait");
	uint32_t t_sys = tp_profile_str(p, kind == TP_TRACK_TIU ? "SYS" : "DMA_sys");
	uint32_t t_conv = tp_profile_str(p, kind == TP_TRACK_TIU ? "conv.normal" : "tensorLd");
	uint32_t t_conv_ty = tp_profile_str(p, kind == TP_TRACK_TIU ? "CONV" : "DMA_tensor");
	uint32_t t_ar = tp_profile_str(p, kind == TP_TRACK_TIU ? "arith.add" : "tensorSt");
	uint32_t t_bad = bad ? tp_profile_str(p, "bad\xff\xfe name\x01 \xe2\x82") : 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t len = 20 + lcg(&seed) % 3000;
		uint32_t gap = lcg(&seed) % 50;
		cyc += gap;
		struct tp_slice *s = tp_track_push(p, track);
		if (!s)
			return -1;
		tp_slice_set_start_cycle(p, &p->tracks[track], s, cyc);
		s->cycles = len;
		s->start_ns = tp_cycles_to_ns(cyc, mhz);
		tp_slice_set_end(p, &p->tracks[track], s, tp_cycles_to_ns(cyc + len - 1, mhz));
		cyc += len;
		/* Core 1's TIU ids start at 2, as on the real BM1688 dump (its leading send_msg
		 * is dropped), so "Avg Cycle Last 200" must divide by Cmd Id, not the row. */
		s->cmd_id = (uint32_t)i + 1 + (kind == TP_TRACK_TIU && core == 1);
		int wait = i % 10 == 9;
		tp_slice_set_kind(p, &p->tracks[track], s, wait ? TP_CMD_SYS_WAIT : TP_CMD_NORMAL);
		tp_slice_set_name(p, &p->tracks[track], s, wait ? t_wait : (i % 3 ? t_conv : t_ar));
		tp_slice_set_type(p, &p->tracks[track], s, wait ? t_sys : t_conv_ty);
		if (bad && i == 1)
			tp_slice_set_name(p, &p->tracks[track], s, t_bad);
		tp_slice_set_dtype(p, &p->tracks[track], s,
		                   wait         ? TP_DT_NONE
		                   : i % 4 == 0 ? TP_DT_FP32
		                                : TP_DT_INT8);
		s->dep_id = i > 2 ? (uint32_t)i - 2 : 0;
		if (kind != TP_TRACK_TIU && !wait) {
			tp_slice_set_dir(p, &p->tracks[track], s, (uint8_t)dirs[i % 4]);
			tp_slice_set_bytes(p, &p->tracks[track], s, 1024 + lcg(&seed) % 65536);
			tp_slice_set_stall(p, &p->tracks[track], s,
			                   i % 7 == 0 ? lcg(&seed) % 100 : 0);
		}
		s->layer = layers ? (int32_t)(i * 4 / (n ? n : 1)) : -1;
		tp_args_begin(p);
		if (kind == TP_TRACK_TIU && core == 0) {
			/* Core 0 has decoded descriptors: a cost entry for every command (sys
			 * commands count 1 op, as the vendor's), the args the decoder writes. */
			struct tp_cost c = {0};
			c.alg_ops = wait ? 1 : 100 + (uint64_t)(i % 10) * 100;
			c.uarch_ops = wait ? 1 : 1000;
			c.alg_cycle = wait ? 0 : len / 4;
			c.init_cycle = wait ? 0 : (uint32_t)(i % 3) * len / 40;
			c.bank_cycle = i % 7 == 3 ? 5 : 0;
			c.valid = 1;
			if (tp_track_set_cost(p, track, i, &c) != TP_OK)
				return -1;
			tp_args_add_uint(p, "des_tsk_typ", wait ? 15 : 0);
			tp_args_add_uint(p, "des_res0_addr", 0x1000u + i * 64);
			tp_args_add_uint(p, "des_res0_n", 1);
			tp_args_add_str(p, "Data Type", wait ? "INT8 -> INT8" : "FP16 -> FP32");
			if (wait)
				tp_args_add_int(p, "Msg Id", (int64_t)(i % 128));
		} else if (kind == TP_TRACK_TIU) {
			tp_args_add_uint(p, "des_tsk_typ", wait ? 15 : 0);
			tp_args_add_uint(p, "des_res0_addr", 0x1000u + i * 64);
			if (!wait && i % 5 == 0) {
				tp_args_add_uint(p, "Alg Ops", 600);
				tp_args_add_uint(p, "uArch Ops", 1000);
			}
			if (wait)
				tp_args_add_int(p, "Msg Id", (int64_t)(i % 128));
		} else {
			tp_args_add_uint(p, "src_start_addr", 0x100000000ull + i * 4096);
			tp_args_add_uint(p, "cmd_type", wait ? 6 : 0);
			if (bad && i == 2)
				tp_args_add_str(p, "note", "=HYPERLINK(\"x\")\x02");
		}
		s->args = tp_args_end(p);
	}
	return 0;
}

struct tp_profile *fx_engines(const struct fx_engines_cfg *cfg)
{
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return NULL;
	p->arch = TP_ARCH_BM1688;
	p->chip = &sg_chip_by_arch(TP_ARCH_BM1688)->c;
	p->net_name = tp_profile_str(p, "synthetic-net");
	p->source = tp_profile_str(p, "xlsx-fixture");
	p->tiu_freq_mhz = TIU_MHZ;
	p->gdma_freq_mhz = DMA_MHZ;
	int dev = tp_profile_add_device(p, "BM1688 device 0", 0, 2);
	if (dev < 0)
		goto fail;
	if (cfg->layers) {
		static const char *const names[] = {"conv1", "relu1", "pool1", "fc"};
		static const char *const types[] = {"Conv2D", "Relu", "MaxPool", "MatMul"};
		for (int c = 0; c < 2; c++)
			for (int i = 0; i < 4; i++) {
				struct tp_layer l = {.id = 10 + i,
				                     .device = 0,
				                     .core = c,
				                     .subnet = 0,
				                     .group = -1,
				                     .tiu_first = 1,
				                     .tiu_last = 5,
				                     .begin_ns = 1000 * i,
				                     .end_ns = 1000 * i + 900};
				l.name = tp_profile_str(p, names[i]);
				l.type = tp_profile_str(p, types[i]);
				if (tp_profile_add_layer(p, &l) < 0)
					goto fail;
			}
	}
	for (int c = 0; c < 2; c++) {
		int tt = tp_profile_add_track(p, dev, c, TP_TRACK_TIU, "TIU", TIU_MHZ);
		int tg = tp_profile_add_track(p, dev, c, TP_TRACK_GDMA, "GDMA", DMA_MHZ);
		if (tt < 0 || tg < 0 ||
		    fill_engine(p, tt, TP_TRACK_TIU, cfg->tiu[c], c, cfg->layers, cfg->bad_strings,
		                7u + (uint32_t)c) ||
		    fill_engine(p, tg, TP_TRACK_GDMA, cfg->gdma[c], c, cfg->layers,
		                cfg->bad_strings, 11u + (uint32_t)c))
			goto fail;
		if (cfg->sdma[c]) {
			int ts = tp_profile_add_track(p, dev, c, TP_TRACK_SDMA, "SDMA", DMA_MHZ);
			if (ts < 0 || fill_engine(p, ts, TP_TRACK_SDMA, cfg->sdma[c], c, 0, 0,
			                          13u + (uint32_t)c))
				goto fail;
		}
	}
	tp_profile_set_meta(p, "arch", "BM1688");
	tp_profile_note(p, "synthetic profile for the workbook tests");
	if (tp_profile_finish(p) != TP_OK)
		goto fail;
	return p;
fail:
	tp_profile_free(p);
	return NULL;
}

/* One operator execution nested in a step. */
static int add_op(struct tp_profile *p, int track, int64_t *t, const char *name, const char *type,
                  const char *wshape, double sparsity, int64_t dur, int warm, int step)
{
	struct tp_slice *s = tp_track_push(p, track);
	if (!s)
		return -1;
	s->start_ns = *t;
	tp_slice_set_end(p, &p->tracks[track], s, *t + dur);
	*t += dur + 100;
	tp_slice_set_name(p, &p->tracks[track], s, tp_profile_str(p, name));
	tp_slice_set_type(p, &p->tracks[track], s, tp_profile_str(p, TP_CAP_TYPE_OP));
	tp_args_begin(p);
	tp_args_add_str(p, TP_CAP_KEY_OP_TYPE, type);
	tp_args_add_str(p, TP_CAP_KEY_POST_OP, !strcmp(type, "MatMul") ? "gelu" : "");
	tp_args_add_int(p, TP_CAP_KEY_STEP, step);
	tp_args_add_int(p, TP_CAP_KEY_WARMUP, warm);
	tp_args_add_str(p, TP_CAP_KEY_INPUTS, "x;w");
	tp_args_add_str(p, TP_CAP_KEY_INPUT_SHAPES, "1x128x256;256x256");
	tp_args_add_str(p, TP_CAP_KEY_INPUT_DTYPES, "fp32;fp32");
	tp_args_add_str(p, TP_CAP_KEY_OUTPUTS, "y");
	tp_args_add_str(p, TP_CAP_KEY_OUTPUT_SHAPES, "1x128x256");
	tp_args_add_str(p, TP_CAP_KEY_OUTPUT_DTYPES, "fp32");
	if (wshape) {
		tp_args_add_str(p, TP_CAP_KEY_WEIGHT_SHAPE, wshape);
		tp_args_add_real(p, TP_CAP_KEY_WEIGHT_SPARSITY, sparsity);
	}
	tp_args_add_uint(p, TP_CAP_KEY_FLOPS, 1000000);
	s->args = tp_args_end(p);
	return 0;
}

struct tp_profile *fx_capture(unsigned steps)
{
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return NULL;
	p->arch = TP_ARCH_CPU;
	p->net_name = tp_profile_str(p, "bert-mini");
	p->source = tp_profile_str(p, "tpuprof-capture");
	int dev = tp_profile_add_device(p, "bench (pid 4242)", 4242, 0);
	int t1 = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, "main", 0);
	int t2 = tp_profile_add_track(p, dev, -1, TP_TRACK_THREAD, "worker's pool", 0);
	if (dev < 0 || t1 < 0 || t2 < 0)
		goto fail;
	p->tracks[t1].tid = 4242;
	p->tracks[t2].tid = 4243;
	int64_t t = 1000;
	for (unsigned st = 0; st < steps; st++) {
		int warm = st == 0;
		struct tp_slice *s = tp_track_push(p, t1);
		if (!s)
			goto fail;
		int64_t begin = t;
		tp_slice_set_name(p, &p->tracks[t1], s, tp_profile_str(p, "graph"));
		tp_slice_set_type(p, &p->tracks[t1], s, tp_profile_str(p, TP_CAP_TYPE_STEP));
		tp_args_begin(p);
		tp_args_add_int(p, TP_CAP_KEY_STEP, st);
		tp_args_add_int(p, TP_CAP_KEY_WARMUP, warm);
		s->args = tp_args_end(p);
		size_t idx = p->tracks[t1].count - 1;
		t += 10;
		/* Durations grow with the step so mean, min and max differ. */
		int64_t k = (int64_t)st;
		if (add_op(p, t1, &t, "fc1", "MatMul", "256x256", 0.1, 40000 + 100 * k, warm,
		           (int)st) ||
		    add_op(p, t1, &t, "fc2", "MatMul", "1024x256", 0.0, 80000 + 200 * k, warm,
		           (int)st) ||
		    add_op(p, t1, &t, "act", "Gelu", NULL, 0, 5000 + 10 * k, warm, (int)st) ||
		    add_op(p, t1, &t, "fc3", "InnerProduct", "256x1024", 0.7, 30000, warm,
		           (int)st) ||
		    add_op(p, t1, &t, "sm", "Softmax", NULL, 0, 7000 + 10 * k, warm, (int)st))
			goto fail;
		p->tracks[t1].slices[idx].start_ns = begin;
		tp_slice_set_end(p, &p->tracks[t1], &p->tracks[t1].slices[idx], t);
		t += 1000;
	}
	int64_t w = 2000;
	for (unsigned i = 0; i < steps * 2; i++) {
		struct tp_slice *s = tp_track_push(p, t2);
		if (!s)
			goto fail;
		s->start_ns = w;
		tp_slice_set_end(p, &p->tracks[t2], s, w + 20000);
		w += 50000;
		tp_slice_set_name(p, &p->tracks[t2], s, tp_profile_str(p, "prefetch"));
		tp_slice_set_type(p, &p->tracks[t2], s, tp_profile_str(p, TP_CAP_TYPE_ACTIVITY));
	}
	if (tp_profile_finish(p) != TP_OK)
		goto fail;
	return p;
fail:
	tp_profile_free(p);
	return NULL;
}
