/*
 * main.c — entry point of the tpuprof command: dispatches to a subcommand and is the only
 * place that turns statuses into exit codes (0 ok, 1 usage, 2 bad input, 3 output failure,
 * 4 `diff --fail-if-slower` tripped, 5 some dumps of a job failed).
 */
#include "cli/cli.h"

#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int main(int argc, char **argv)
{
#ifdef __GLIBC__
	/* A fixed threshold: glibc otherwise raises it to the size of each large block freed (up
	 * to 32 MiB), after which such blocks come from the per-thread arenas, whose freed room
	 * stays resident, so the peak memory would grow with --jobs (docs/perf-notes/
	 * cores-reader.md, "Third round"). */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return tp_cli_check(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "diff") == 0)
		return tp_cli_diff(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "job") == 0)
		return tp_cli_job(argc - 1, argv + 1);
	return tp_cli_convert(argc, argv);
}
