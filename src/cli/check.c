/*
 * check.c — `tpuprof check FILE.pftrace`: validates a Perfetto trace against the writer's rules
 * (sequence flags, declared tracks, interning, balanced slices) and prints what it found.
 */
#include "cli/cli.h"
#include "writers/perfetto/perfetto.h"

#include <string.h>

int tp_cli_check(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: tpuprof check FILE.pftrace\n");
		return 1;
	}
	struct tp_diag d = {0};
	struct tp_perfetto_check_report r;
	int st = tp_perfetto_check(argv[1], &r, &d);
	if (st != TP_OK) {
		fputs("tpuprof: ", stderr);
		tp_text_fputs(stderr, d.msg[0] ? d.msg : tp_strerror(st),
		              TP_TEXT_CTRL | TP_TEXT_LINE);
		fputc('\n', stderr);
		return tp_status_exit_code(st);
	}
	tp_text_fputs(stdout, argv[1], TP_TEXT_CTRL | TP_TEXT_LINE);
	printf(": ok: %llu packets, %llu sequences, %llu tracks (%llu processes, %llu threads, "
	       "%llu counter tracks), %llu slices (max depth %d), %llu counter values, %llu flows, "
	       "%llu annotations, %llu interned entries\n",
	       (unsigned long long)r.packets, (unsigned long long)r.sequences,
	       (unsigned long long)r.tracks, (unsigned long long)r.processes,
	       (unsigned long long)r.threads, (unsigned long long)r.counter_tracks,
	       (unsigned long long)r.slices, r.max_depth, (unsigned long long)r.counters,
	       (unsigned long long)r.flows, (unsigned long long)r.annotations,
	       (unsigned long long)r.interned);
	return 0;
}
