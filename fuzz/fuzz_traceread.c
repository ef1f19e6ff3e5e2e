/*
 * fuzz_traceread.c — libFuzzer target for the Chrome-trace JSON reader (src/readers/traceread): any
 * bytes go through tp_traceread_parse, which must return a status (never crash, leak or read out of
 * bounds) and, on success, leave a profile whose slices are well-formed and whose strings are
 * valid UTF-8 as far as the first byte of each multi-byte sequence says. The profile then goes
 * through the accelerator analysis (src/analysis/accel.h: lanes, launches, steps, self time),
 * whose figures must stay consistent: busy time within device time, shares within 100 %.
 */
#include "analysis/accel.h"
#include "readers/traceread/traceread.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_profile *p = NULL;
	struct tp_diag d = {0};
	int rc = tp_traceread_parse(data, size, "fuzz.json", &p, &d);
	if (rc == TP_OK) {
		for (size_t t = 0; t < p->num_tracks; t++)
			for (size_t i = 0; i < p->tracks[t].count; i++) {
				const struct tp_slice *s = &p->tracks[t].slices[i];
				if (tp_slice_end(&p->tracks[t], s) < s->start_ns)
					abort();
				const unsigned char *n = (const unsigned char *)tp_str(
				    p, tp_slice_name(&p->tracks[t], s));
				for (; *n; n++)
					if (*n == 0xFF || *n == 0xFE || *n == 0xC0 || *n == 0xC1)
						abort(); /* never a valid UTF-8 byte: should have
						            been replaced */
			}
		struct tp_accel *a = NULL;
		if (tp_accel_analyze(p, &a) == TP_OK && a) {
			if (a->total.busy_ns > a->total.device_ns || a->total.busy_ns < 0 ||
			    a->idle_share < 0 || a->idle_share > 1 ||
			    a->linked > a->total.count[0] + a->total.count[1] + a->total.count[2] +
			                    a->total.count[3])
				abort();
			double share = 0;
			for (size_t i = 0; i < a->nhost; i++)
				share += a->host[i].share;
			if (share > 1.000001)
				abort();
		}
		tp_accel_free(a);
		tp_profile_free(p);
	} else if (p != NULL || d.msg[0] == 0) {
		abort(); /* an error must come with a message and no profile */
	}
	return 0;
}
