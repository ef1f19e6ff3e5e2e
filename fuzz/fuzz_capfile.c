/*
 * fuzz_capfile.c — libFuzzer target for the capture dump reader (src/readers/capfile): any bytes go
 * through tp_capfile_parse, which must return a status (never crash, leak or read out of
 * bounds) and, on success, leave a profile whose slices are well-formed.
 */
#include "fuzz_check.h"
#include "readers/capfile/capfile.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_capfile_parse(data, size, "fuzz.tpp", &p, &d);
	fuzz_check_read(rc, p, &d, 0);
	return 0;
}
