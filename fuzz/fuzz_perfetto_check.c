/*
 * fuzz_perfetto_check.c — libFuzzer target for `tpuprof check`'s Perfetto reader
 * (src/writers/perfetto/check.c): the input becomes a .pftrace file that tp_perfetto_check must
 * accept or reject with a located message, never crash, leak, hang or inflate a
 * decompression bomb past its documented limit.
 *
 * Seeds are real traces made at run time by tpuprof's own writer: when TP_FUZZ_SEED_DIR is
 * set (scripts/fuzz.sh sets it to the corpus directory), LLVMFuzzerInitialize writes the
 * trace writers' fixture profile (tests/fixtures/c/sink_fixture.h) there as perfetto traces —
 * uncompressed (so mutations reach every packet rule), zlib-compressed, and with the full
 * per-command annotations — before libFuzzer reads the corpus.
 */
#include "fixtures/c/sink_fixture.h"
#include "fuzz_check.h"
#include "fuzz_scratch.h"
#include "writers/perfetto/perfetto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *path = "";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_seed_dir(argc, argv);
	if (!dir)
		return 0;
	struct tp_profile *p = fx_profile();
	if (!p)
		abort();
	static const struct {
		const char *name;
		struct tp_perfetto_opts o;
	} seeds[] = {
	    {"gen_fixture_plain.pftrace", {.uncompressed = 1, .threads = 1}},
	    {"gen_fixture_full_plain.pftrace", {.uncompressed = 1, .full_args = 1, .threads = 1}},
	    {"gen_fixture_zlib.pftrace", {.threads = 1}},
	};
	for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
		char *out = tp_path_join(dir, seeds[i].name);
		struct tp_diag d = {0};
		if (!out || tp_perfetto_write(p, NULL, out, &seeds[i].o, &d) != TP_OK) {
			fprintf(stderr, "fuzz_perfetto_check: cannot write seed %s: %s\n",
			        seeds[i].name, d.msg);
			abort();
		}
		tp_free(out);
	}
	tp_profile_free(p);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	path = fuzz_scratch_file_get("fuzz_pfcheck");
	fuzz_write(path, data, size);
	struct tp_perfetto_check_report r;
	struct tp_diag d = {0};
	int st = tp_perfetto_check(path, &r, &d);
	if (st != TP_OK && d.msg[0] == 0)
		abort(); /* every rejection says where */
	if (st == TP_OK && r.packets == 0)
		abort(); /* an empty trace is an error, never "ok: 0 packets" */
	return 0;
}
