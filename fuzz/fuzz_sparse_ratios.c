/*
 * fuzz_sparse_ratios.c — libFuzzer target for the --sparse-ratios file parser
 * (src/writers/opscsv/ratios.c): any bytes go through tp_sparse_ratios_parse, which must return
 * a status (never crash, leak or read out of bounds); an error must carry a "FILE:LINE:" message
 * and leave nothing allocated, and a success must give ratios in (0, 1000] and an aim in 1..99 that
 * lookups can use.
 */
#include "writers/opscsv/opscsv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_row(const struct tp_sparse_ratio_row *row)
{
	for (int k = 0; k < 4; k++)
		if (!(row->ratio[k] > 0 && row->ratio[k] <= 1000))
			abort();
	if (!memchr(row->shape, 0, sizeof row->shape))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_sparse_ratios r;
	struct tp_diag d = {0};
	int rc = tp_sparse_ratios_parse(&r, (const char *)data, size, "fuzz.txt", &d);
	if (rc != TP_OK) {
		if (r.rows != NULL || strncmp(d.msg, "fuzz.txt", 8) != 0)
			abort();
		return 0;
	}
	if (r.aim_pct < 1 || r.aim_pct > 99)
		abort();
	for (size_t i = 0; i < r.count; i++) {
		check_row(&r.rows[i]);
		if (tp_sparse_ratios_lookup(&r, r.rows[i].shape) != &r.rows[i])
			abort();
	}
	check_row(&r.fallback);
	check_row(tp_sparse_ratios_lookup(&r, "256x256"));
	tp_sparse_ratios_free(&r);
	return 0;
}
