/*
 * fuzz_final_mlir.c — libFuzzer target for the final.mlir parser (src/readers/sophgo/final_mlir.c).
 * Any bytes must parse (malformed lines are counted, never fatal) into ops in strictly
 * increasing line order whose names lie inside the name buffer, and groups whose member
 * ranges sit strictly between their Group and Yield lines; lookups must agree with them.
 * Seeds: the real dumps' final.mlir files (copied by scripts/fuzz.sh at run time).
 */
#include "readers/sophgo/sg_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Only a prefix of big inputs is parsed: the real final.mlir files are ~138 KiB, and the
	 * shared seed corpus also holds ~1 MB binaries that would only slow every run down. */
	if (size > (160 << 10))
		size = 160 << 10;
	struct sg_mlir m;
	if (sg_mlir_parse((const char *)data, size, &m) != TP_OK)
		return 0; /* out of memory only */
	for (size_t i = 0; i < m.nops; i++) {
		if (i && m.ops[i].line <= m.ops[i - 1].line)
			abort();
		if (m.ops[i].name >= m.nstrs ||
		    memchr(m.strs + m.ops[i].name, 0, m.nstrs - m.ops[i].name) == NULL)
			abort();
		const char *nm = sg_mlir_name(&m, m.ops[i].line);
		if (nm != m.strs + m.ops[i].name)
			abort();
	}
	for (size_t g = 0; g < m.ngroups; g++) {
		const struct sg_mlir_group *gr = &m.groups[g];
		if (gr->first &&
		    (gr->first <= gr->line || gr->last >= gr->yield || gr->first > gr->last))
			abort();
		if (gr->first) {
			int k = sg_mlir_group_of(&m, gr->first);
			if (k < 0 || (size_t)k > g)
				abort();
		}
	}
	if (m.bad_lines && (m.first_bad_line == 0 || m.first_bad_line > m.lines))
		abort();
	sg_mlir_free(&m);
	return 0;
}
