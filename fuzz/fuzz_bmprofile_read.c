/*
 * fuzz_bmprofile_read.c — libFuzzer target for the whole bmprofile reader (src/readers/sophgo):
 * the input becomes iter0.profile of a scratch directory whose global.profile names the arch
 * chosen by the first byte; every cmd_*.dat a COMMAND block names is written with the same
 * bytes, so the timeline reconstruction, the command lookups and the layer matching all see
 * arbitrary data; net_stat.sim gets items that pair with the node lines plus the same bytes. The
 * reader must return a profile or an error with a message, never crash.
 */
#include "fuzz_check.h"
#include "fuzz_scratch.h"
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *dir = "";

static void put(const char *name, const void *p, size_t n)
{
	fuzz_put(dir, name, p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dir = fuzz_scratch_dir_get("fuzz_bmprofile");
	if (size < 1)
		return 0;
	static const int arches[3] = {4, 3, 1};
	int raw = arches[data[0] % 3];
	char g[512];
	int gl =
	    snprintf(g, sizeof g,
	             "[bmprofile] arch=%d\n[bmprofile] net_name=fz\n[bmprofile] tpu_freq=0\n"
	             "[bmprofile] local_layer: layer_id=1 layer_type=Load layer_name=\n"
	             "[bmprofile] gdma cmd_id bd_id=0 gdma_id=1 gdma_dir=0 gdma_func=0 core=0\n"
	             "[bmprofile] gdma cmd_id bd_id=1 gdma_id=1 bd_func=0 core=0\n"
	             "[bmprofile] bd cmd_id bd_id=1 gdma_id=1 bd_func=0\n"
	             "[bmprofile] core_list=0,1,\n",
	             raw);
	put("global.profile", g, (size_t)gl);
	data++;
	size--;
	/* net_stat.sim: items that pair with the node lines above (cycles from the input), then
	 * the input itself, so the simulator's pairing (legacy arches) sees both. */
	char ns[4096];
	int nl = snprintf(ns, sizeof ns,
	                  "ENGINE_BD ENGINE_GDMA\n"
	                  "A_1|AR|s:0|b:1|g:1|e:1|t:%u Load_1|GDMA_TENSOR|s:0|b:0|g:1|e:1|t:%u|"
	                  "dr:0|sz:1|bw:1.0\n",
	                  size ? data[0] : 0u, size > 1 ? data[1] : 0u);
	size_t tail = size < sizeof ns - (size_t)nl ? size : sizeof ns - (size_t)nl;
	memcpy(ns + nl, data, tail);
	put("net_stat.sim", ns, (size_t)nl + tail);
	put("iter0.profile", data, size);
	struct bmp_iter *it = malloc(sizeof *it);
	if (!it)
		return 0;
	struct tp_diag d = {0};
	char names[2 * BMP_MAX_CORES][96];
	unsigned nn = 0;
	if (bmp_walk(data, size, bmp_arch_from_raw(raw), "fz", it, &d) == TP_OK) {
		for (unsigned k = 0; k < it->n_cmd && k < 4; k++) {
			const struct bmp_command *c = &it->cmd[k];
			snprintf(names[nn++], sizeof names[0], "cmd_%llx_%u_0.dat",
			         (unsigned long long)c->bd_base, k);
			snprintf(names[nn++], sizeof names[0], "cmd_%llx_%u_1.dat",
			         (unsigned long long)c->gdma_base, k);
			if (raw != 4) {
				snprintf(names[nn++], sizeof names[0], "cmd_%llx_0.dat",
				         (unsigned long long)c->bd_base);
				snprintf(names[nn++], sizeof names[0], "cmd_%llx_1.dat",
				         (unsigned long long)c->gdma_base);
			}
		}
	}
	free(it);
	for (unsigned i = 0; i < nn; i++)
		put(names[i], data, size);
	struct tp_profile *p = NULL;
	memset(&d, 0, sizeof d);
	int rc = tp_bmprofile_read(dir, NULL, &p, &d);
	fuzz_check_read(rc, p, &d, 0);
	for (unsigned i = 0; i < nn; i++) {
		char path[256];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	return 0;
}
