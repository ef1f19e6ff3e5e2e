/*
 * traceread_bench.c — `traceread_bench FILE [RUNS]`: reads a Chrome-trace JSON file with the
 * streaming reader (src/readers/traceread) RUNS times (default 3) and prints, per run and as the
 * best run, wall time, process CPU time, MB/s by each (MB = 10^6 bytes), slices, and the peak RSS
 * of the process. CPU-time throughput is the figure to compare on a shared machine, where wall time
 * measures the neighbours as much as the reader.
 */
#include "readers/traceread/traceread.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double secs(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: traceread_bench FILE [RUNS]\n");
		return 1;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 3;
	struct stat st;
	if (stat(argv[1], &st) != 0) {
		perror(argv[1]);
		return 2;
	}
	double mb = (double)st.st_size / 1e6, best_wall = 1e30, best_cpu = 1e30;
	size_t slices = 0;
	for (int r = 0; r < runs; r++) {
		struct tp_profile *p = NULL;
		struct tp_diag d = {0};
		double w0 = secs(CLOCK_MONOTONIC), c0 = secs(CLOCK_PROCESS_CPUTIME_ID);
		int rc = tp_traceread_read(argv[1], &p, &d);
		double w = secs(CLOCK_MONOTONIC) - w0, c = secs(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (rc) {
			fprintf(stderr, "traceread_bench: %s\n", d.msg);
			return 2;
		}
		slices = tp_profile_slice_count(p);
		tp_profile_free(p);
		printf("run %d: %.1f MB, wall %.3f s (%.1f MB/s), cpu %.3f s (%.1f MB/s)\n", r + 1,
		       mb, w, mb / w, c, mb / c);
		if (w < best_wall)
			best_wall = w;
		if (c < best_cpu)
			best_cpu = c;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("traceread %s: %.1f MB, %zu slices, best wall %.1f MB/s, best cpu %.1f MB/s, "
	       "peak RSS %.1f MiB\n",
	       argv[1], mb, slices, mb / best_wall, mb / best_cpu, (double)ru.ru_maxrss / 1024.0);
	return 0;
}
