/*
 * check.c — `tpuprof check FILE.pftrace`: validates a Perfetto trace against the writer's rules
 * (sequence flags, declared tracks, interning, balanced slices) and prints what it found.
 */
#include "cli/cli.h"

#include <string.h>

/* Provided by the Perfetto writer module; weak until it is linked. */
extern int tp_cli_perfetto_check(const char *path, FILE *report, struct tp_diag *d)
	__attribute__((weak));

int tp_cli_check(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: tpuprof check FILE.pftrace\n");
		return 1;
	}
	if (!tp_cli_perfetto_check) {
		fprintf(stderr, "tpuprof: check: this build has no Perfetto support\n");
		return 1;
	}
	struct tp_diag d = {0};
	int st = tp_cli_perfetto_check(argv[1], stdout, &d);
	if (st != TP_OK) {
		fprintf(stderr, "tpuprof: %s\n", d.msg[0] ? d.msg : tp_strerror(st));
		return tp_status_exit_code(st);
	}
	return 0;
}
