/*
 * fuzz_netstat.c — libFuzzer target for the net_stat.sim parser
 * (src/readers/sophgo/bmprofile/bmp_netstat.c), a side file: any bytes must parse with TP_OK, and a
 * skipped line must be reported with a line number inside the text and a NUL-terminated
 * description. Seeds: the real dumps' net_stat.sim files (copied by scripts/fuzz.sh at run time).
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Only a prefix of big inputs is parsed: the real net_stat.sim files are 50-55 KiB, and the
	 * shared seed corpus also holds ~1 MB binaries that would only slow every run down. */
	if (size > (64 << 10))
		size = 64 << 10;
	struct bmp_netstat ns;
	if (bmp_netstat_parse((const char *)data, size, "net_stat.sim", &ns, NULL) != TP_OK)
		abort();
	unsigned long lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (ns.bad_lines && (ns.first_bad_line == 0 || ns.first_bad_line > lines ||
	                     !memchr(ns.bad_what, 0, sizeof ns.bad_what)))
		abort();
	if (!memchr(ns.runtime_ms, 0, sizeof ns.runtime_ms))
		abort();
	/* The same parse keeping the items: the same figures, one item per counted item. */
	struct bmp_netstat ns2;
	struct bmp_sim_items it = {0};
	int rc = bmp_netstat_parse_items((const char *)data, size, "net_stat.sim", &ns2, NULL, &it);
	if (rc == TP_OK && (it.n[0] != ns2.bd_items || it.n[1] != ns2.gdma_items ||
	                    memcmp(&ns, &ns2, sizeof ns) != 0))
		abort();
	for (size_t i = 0; i < it.n[1]; i++)
		if (!it.v[1][i].gdma)
			abort();
	bmp_sim_items_free(&it);
	return 0;
}
