/*
 * fuzz_capfile.c — libFuzzer target for the capture dump reader (src/capfile): any bytes go
 * through tp_capfile_parse, which must return a status (never crash, leak or read out of
 * bounds) and, on success, leave a profile whose slices are well-formed.
 */
#include "capfile/capfile.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_capfile_parse(data, size, "fuzz.tpp", &p, &d);
	if (rc == TP_OK) {
		for (size_t t = 0; t < p->num_tracks; t++)
			for (size_t i = 0; i < p->tracks[t].count; i++)
				if (p->tracks[t].slices[i].end_ns < p->tracks[t].slices[i].start_ns)
					abort();
		tp_profile_free(p);
	} else if (p != NULL || d.msg[0] == 0) {
		abort(); /* an error must come with a message and no profile */
	}
	return 0;
}
