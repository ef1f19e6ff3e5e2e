/*
 * main.c — entry point of the tpuprof command: dispatches to a subcommand and is the only
 * place that turns statuses into exit codes (0 ok, 1 usage, 2 bad input, 3 output failure,
 * 4 `diff --fail-if-slower` tripped, 5 some dumps of a job failed).
 */
#include "cli/cli.h"

#include <string.h>

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return tp_cli_check(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "diff") == 0)
		return tp_cli_diff(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "job") == 0)
		return tp_cli_job(argc - 1, argv + 1);
	return tp_cli_convert(argc, argv);
}
