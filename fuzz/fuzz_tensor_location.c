/*
 * fuzz_tensor_location.c — libFuzzer target for tensor_location.json
 * (src/readers/sophgo/sg_layers.c): the bytes are parsed as the side file and applied to a small
 * profile (one core, a TIU and a GDMA track with commands 1..64, the last TIU command's id taken
 * from the input's last four bytes, as a PMU id would be), as the reader does. Any bytes
 * must give TP_OK (a note for what was skipped) with every slice's layer pointing at a real layer
 * and every layer's tensors inside the tensor table, never a crash, leak or sanitizer report,
 * and no allocation sized by an id (libFuzzer's malloc limit reports one).
 * Seeds: the real dumps' tensor_location.json files (scripts/fuzz.sh copies ../shared/testdata at
 * run time).
 */
#include "readers/sophgo/sg_int.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Only a prefix of big inputs is parsed: the real tensor_location.json files are
	 * 227-263 KiB, and the shared seed corpus also holds ~1 MB binaries that would only
	 * slow every run down. */
	if (size > (320 << 10))
		size = 320 << 10;
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return 0;
	int dev = tp_profile_add_device(p, "fuzz", 0, 1);
	int tiu = tp_profile_add_track(p, dev, 0, TP_TRACK_TIU, NULL, 750);
	int gdma = tp_profile_add_track(p, dev, 0, TP_TRACK_GDMA, NULL, 650);
	if (dev < 0 || tiu < 0 || gdma < 0) {
		tp_profile_free(p);
		return 0;
	}
	for (int t = 0; t < 2; t++)
		for (uint32_t i = 1; i <= 64; i++) {
			struct tp_slice *s = tp_track_push(p, t ? gdma : tiu);
			if (!s)
				break;
			s->cmd_id = i;
			if (!t && i == 64 && size >= 4)
				s->cmd_id = tp_le32(data + size - 4) | 1u;
			s->start_ns = i * 10;
			tp_slice_set_end(p, &p->tracks[t ? gdma : tiu], s, i * 10 + 5);
		}
	struct sg_layers L = {0};
	int rc = sg_layers_parse_json(p, data, size, "tensor_location.json", &L);
	if (rc == TP_OK) {
		int tt[1] = {tiu}, gt[1] = {gdma};
		rc = sg_layers_apply(p, &L, "tensor_location.json", tt, gt, 1, 1, 0);
	}
	if (rc != TP_OK && rc != TP_ENOMEM)
		abort();
	for (int t = 0; t < 2 && rc == TP_OK; t++) {
		const struct tp_track *tr = &p->tracks[t ? gdma : tiu];
		for (size_t i = 0; i < tr->count; i++)
			if (tr->slices[i].layer < -1 ||
			    (tr->slices[i].layer >= 0 &&
			     (size_t)tr->slices[i].layer >= p->num_layers))
				abort();
	}
	for (size_t i = 0; rc == TP_OK && i < p->num_layers; i++) {
		struct tp_layer ly;
		tp_profile_layer(p, i, &ly);
		if ((uint64_t)ly.first_tensor + ly.num_tensors > p->num_tensors)
			abort();
	}
	sg_layers_free(&L);
	tp_profile_free(p);
	return 0;
}
