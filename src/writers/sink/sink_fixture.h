/*
 * sink_fixture.h — TEST ONLY: a small hand-built profile used by the trace writers' tests
 * (sink, perfetto, chrome, sqlite) and their golden files. Header-only so every test binary
 * gets the same profile without a library.
 *
 * Contents (times in ns; TIU/GDMA clocks 1000 MHz so 1 cycle = 1 ns):
 *   device 0 "BM1688 device 0" (id 0 -> synthetic pid), 2 cores
 *     core 0 TIU : conv.normal [100,400) cmd 1 dep 3 (GDMA cmd 3 starts later: no flow);
 *                  mm.normal [400,900) cmd 2 dep 2 (waits for GDMA cmd 2); mm.normal
 *                  [900,1000) cmd 3; system.wait_msg (sys) [1000,1100)
 *     core 0 GDMA: tensorLd [0,100) cmd 1 4096 B DDR->LMEM; tensorLd [50,400) cmd 2 (overlaps
 *                  cmd 1: a second lane) 8192 B; tensorSt [950,1000) cmd 3 512 B dep 3
 *                  (waits for TIU cmd 3), LMEM->DDR
 *     core 1 TIU : arith.add [0,50) cmd 1, uArch Rate "37.5%" in its argset
 *     layers: conv "Conv2D" id 7 core 0 [0,400) ; matmul "MatMul" id 9 core 0 [400,1000)
 *   device 1 "app \"quoted\" (pid 4242)" id 4242: thread tid 4243 "main\tthread" with
 *     step [0,1000) > op "MatMul\n<\x01>" [100,600) > runtime "launch\\kernel" [200,300)
 *     and op "Softmax" [600,700); args with strings that need escaping; a counter "queue"
 *     with samples 0@0, 3@100, 1@600.
 */
#ifndef TP_SINK_FIXTURE_H
#define TP_SINK_FIXTURE_H

#include "model/model.h"
#include "readers/sophgo/sophgo_int.h"

static struct tp_slice *fx_cmd(struct tp_profile *p, int tr, const char *name, const char *type,
                               int64_t b, int64_t e, uint32_t cmd)
{
	struct tp_slice *s = tp_track_push(p, tr);
	s->start_ns = b;
	tp_slice_set_end(p, &p->tracks[tr], s, e);
	tp_slice_set_start_cycle(p, &p->tracks[tr], s, (uint64_t)b);
	s->cycles = (uint32_t)(e - b + 1);
	tp_slice_set_name(p, &p->tracks[tr], s, tp_profile_str(p, name));
	tp_slice_set_type(p, &p->tracks[tr], s, tp_profile_str(p, type));
	s->cmd_id = cmd;
	return s;
}

static struct tp_profile *fx_profile(void)
{
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return NULL;
	p->arch = TP_ARCH_BM1688;
	p->chip = &sg_chip_by_arch(TP_ARCH_BM1688)->c;
	p->tiu_freq_mhz = p->gdma_freq_mhz = 1000;
	int dev = tp_profile_add_device(p, "BM1688 device 0", 0, 2);
	int tiu0 = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, "TIU", 1000);
	int gdma0 = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, "GDMA", 1000);
	int tiu1 = tp_profile_add_track(p, dev, 1, TP_TRACK_TIU, "TIU", 1000);
	struct tp_slice *s;
	s = fx_cmd(p, tiu0, "conv.normal", "sCONV", 100, 400, 1);
	tp_slice_set_dtype(p, &p->tracks[tiu0], s, TP_DT_INT8);
	s->dep_id = 3; /* GDMA cmd 3 starts later: a false match, no flow */
	s->layer = 0;
	s = fx_cmd(p, tiu0, "mm.normal", "sMM", 400, 900, 2);
	s->dep_id = 2;
	s->layer = 1;
	s = fx_cmd(p, tiu0, "mm.normal", "sMM", 900, 1000, 3);
	s->layer = 1;
	s = fx_cmd(p, tiu0, "system.wait_msg", "SYS", 1000, 1100, 4);
	tp_slice_set_kind(p, &p->tracks[tiu0], s, TP_CMD_SYS_WAIT);
	s = fx_cmd(p, gdma0, "tensorLd", "DMA_tensor", 0, 100, 1);
	tp_slice_set_bytes(p, &p->tracks[gdma0], s, 4096);
	tp_slice_set_dir(p, &p->tracks[gdma0], s, TP_DIR_DDR_TO_LMEM);
	tp_slice_set_dtype(p, &p->tracks[gdma0], s, TP_DT_INT8);
	tp_slice_set_stall(p, &p->tracks[gdma0], s, 5);
	s = fx_cmd(p, gdma0, "tensorLd", "DMA_tensor", 50, 400, 2);
	tp_slice_set_bytes(p, &p->tracks[gdma0], s, 8192);
	tp_slice_set_dir(p, &p->tracks[gdma0], s, TP_DIR_DDR_TO_LMEM);
	s = fx_cmd(p, gdma0, "tensorSt", "DMA_tensor", 950, 1000, 3);
	tp_slice_set_bytes(p, &p->tracks[gdma0], s, 512);
	tp_slice_set_dir(p, &p->tracks[gdma0], s, TP_DIR_LMEM_TO_DDR);
	s->dep_id = 3;
	tp_args_begin(p);
	tp_args_add_str(p, "uArch Rate", "37.5%");
	uint32_t as = tp_args_end(p);
	s = fx_cmd(p, tiu1, "arith.add", "sAR", 0, 50, 1);
	s->args = as;
	struct tp_layer l = {0};
	l.id = 7;
	l.type = tp_profile_str(p, "Conv2D");
	l.name = tp_profile_str(p, "conv1");
	l.device = dev;
	l.core = 0;
	l.subnet = l.group = -1;
	l.begin_ns = 0;
	l.end_ns = 400;
	tp_profile_add_layer(p, &l);
	l.id = 9;
	l.type = tp_profile_str(p, "MatMul");
	l.name = tp_profile_str(p, "fc");
	l.begin_ns = 400;
	l.end_ns = 1000;
	tp_profile_add_layer(p, &l);

	int app = tp_profile_add_device(p, "app \"quoted\" (pid 4242)", 4242, 0);
	int th = tp_profile_add_track(p, app, -1, TP_TRACK_THREAD, "main\tthread", 0);
	p->tracks[th].tid = 4243;
	s = tp_track_push(p, th);
	s->start_ns = 0;
	tp_slice_set_end(p, &p->tracks[th], s, 1000);
	tp_slice_set_name(p, &p->tracks[th], s, tp_profile_str(p, "step 0"));
	tp_slice_set_type(p, &p->tracks[th], s, tp_profile_str(p, TP_CAP_TYPE_STEP));
	tp_args_begin(p);
	tp_args_add_int(p, TP_CAP_KEY_STEP, 0);
	tp_args_add_str(p, TP_CAP_KEY_GRAPH, "g\"1\"");
	s->args = tp_args_end(p);
	s = tp_track_push(p, th);
	s->start_ns = 100;
	tp_slice_set_end(p, &p->tracks[th], s, 600);
	tp_slice_set_name(p, &p->tracks[th], s, tp_profile_str(p, "MatMul\n<\x01>"));
	tp_slice_set_type(p, &p->tracks[th], s, tp_profile_str(p, TP_CAP_TYPE_OP));
	tp_args_begin(p);
	tp_args_add_str(p, TP_CAP_KEY_OP_TYPE, "MatMul");
	tp_args_add_str(p, "attr.path", "C:\\tmp\\x</script>");
	tp_args_add_uint(p, TP_CAP_KEY_FLOPS, 1u << 20);
	tp_args_add_real(p, TP_CAP_KEY_WEIGHT_SPARSITY, 0.25);
	tp_args_add_int(p, "delta", -3);
	s->args = tp_args_end(p);
	s = tp_track_push(p, th);
	s->start_ns = 200;
	tp_slice_set_end(p, &p->tracks[th], s, 300);
	tp_slice_set_name(p, &p->tracks[th], s, tp_profile_str(p, "launch\\kernel"));
	tp_slice_set_type(p, &p->tracks[th], s, tp_profile_str(p, TP_CAP_TYPE_RUNTIME));
	s = tp_track_push(p, th);
	s->start_ns = 600;
	tp_slice_set_end(p, &p->tracks[th], s, 700);
	tp_slice_set_name(p, &p->tracks[th], s, tp_profile_str(p, "Softmax"));
	tp_slice_set_type(p, &p->tracks[th], s, tp_profile_str(p, TP_CAP_TYPE_OP));
	int c = tp_profile_add_counter(p, app, th, "queue", "items");
	tp_counter_push(p, c, 0, 0);
	tp_counter_push(p, c, 100, 3);
	tp_counter_push(p, c, 600, 1);
	if (tp_profile_finish(p) != TP_OK) {
		tp_profile_free(p);
		return NULL;
	}
	return p;
}

#endif /* TP_SINK_FIXTURE_H */
