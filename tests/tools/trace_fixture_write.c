/*
 * trace_fixture_write.c — TEST TOOL: writes the sink_fixture.h profile through every trace
 * writer into OUT_DIR (perfetto_plain.pftrace, perfetto.pftrace, trace.json, profile.db), for
 * the end-to-end tests and the reviewed goldens. Usage: trace_fixture_write OUT_DIR
 */
#include <stdio.h>

#include "fixtures/c/sink_fixture.h"
#include "writers/chrome/chrome.h"
#include "writers/perfetto/perfetto.h"
#include "writers/sqlitedb/sqlitedb.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
		return 1;
	}
	struct tp_profile *p = fx_profile();
	if (!p) {
		fprintf(stderr, "cannot build the fixture profile\n");
		return 3;
	}
	struct tp_diag d = {0};
	struct tp_perfetto_opts plain = {1, 0, 0, 0};
	char *f1 = tp_path_join(argv[1], "perfetto_plain.pftrace");
	char *f2 = tp_path_join(argv[1], "perfetto.pftrace");
	char *f3 = tp_path_join(argv[1], "trace.json");
	char *f4 = tp_path_join(argv[1], "profile.db");
	int st = tp_perfetto_write(p, NULL, f1, &plain, &d);
	if (!st)
		st = tp_perfetto_write(p, NULL, f2, NULL, &d);
	if (!st)
		st = tp_chrome_write(p, NULL, f3, 0, &d);
	if (!st)
		st = tp_sqlitedb_write(p, NULL, f4, 0, &d);
	if (st)
		fprintf(stderr, "trace_fixture_write: %s\n", d.msg);
	tp_free(f1);
	tp_free(f2);
	tp_free(f3);
	tp_free(f4);
	tp_profile_free(p);
	return st ? tp_status_exit_code(st) : 0;
}
