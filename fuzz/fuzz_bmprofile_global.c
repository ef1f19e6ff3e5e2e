/*
 * fuzz_bmprofile_global.c — libFuzzer target for the bmprofile text parsers (src/readers/sophgo):
 * global.profile (layers, tensors, node lines, memory lines) and net_stat.sim. Any bytes must
 * give a status (with a `path:LINE:` message on error), never a crash or leak.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_profile *p = tp_profile_new();
	if (!p)
		return 0;
	struct bmp_global *g = calloc(1, sizeof *g);
	if (!g) {
		tp_profile_free(p);
		return 0;
	}
	g->keep_ids = size & 1;
	struct tp_diag d = {0};
	int rc = bmp_global_parse((const char *)data, size, "global.profile", p, g, &d);
	if (rc != TP_OK && d.msg[0] == 0)
		abort();
	/* Node layers must point at real layers (or -1), read in order and at random. */
	for (int c = 0; c < BMP_MAX_CORES; c++)
		for (int e = 0; e < 2; e++) {
			struct bmp_node_cursor cur = {0, 0, 0};
			for (size_t i = 0; i < g->nodes[c][e].n; i++) {
				int32_t L = bmp_nodes_layer(&g->nodes[c][e], i, &cur);
				if (L < -1 || (L >= 0 && (size_t)L >= p->num_layers))
					abort();
				struct bmp_node_cursor one = {0, 0, 0};
				if (bmp_nodes_layer(&g->nodes[c][e], i, &one) != L)
					abort();
			}
		}
	bmp_global_free(g);
	free(g);
	tp_profile_free(p);
	struct bmp_netstat ns;
	memset(&d, 0, sizeof d);
	rc = bmp_netstat_parse((const char *)data, size, "net_stat.sim", &ns, &d);
	if (rc != TP_OK && d.msg[0] == 0)
		abort();
	return 0;
}
