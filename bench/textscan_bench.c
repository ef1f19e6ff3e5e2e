/*
 * textscan_bench.c — `textscan_bench GLOBAL_PROFILE [RUNS]`: the machine's baselines for the
 * bmprofile reader's text half (the ">= 2 GB/s of input per core" target), next to the reader's
 * own global.profile parser, all in process over the same bytes held in memory (read once,
 * untimed, so the disk and page cache are out of the figures).
 *
 * Rows, best of RUNS (default 3), GB = 10^9 bytes of the whole file, per CPU-second:
 *   - newline scan: memchr for every line end, nothing else (the floor of any line reader);
 *   - key=value scan: every line split at each '=' with its decimal value accumulated (what a
 *     bare tokenizer that keeps every number costs);
 *   - key=value scan, tensor lines skipped: the same, but lines starting "tensor_id=" after the
 *     tag only find their end, as the reader does for a large dump (tensors not kept);
 *   - bmp_global_parse --jobs 1 and with the online CPUs: the reader's parser, tokenizing and
 *     building its node and layer events as tpuprof does for a large BM1688 dump (tensors
 *     skipped, nodes and layers kept), CPU and wall.
 * The scans are deliberately simple scalar loops: they bound what a straightforward tokenizer
 * does on this machine, not what SIMD could.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double secs(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads the whole file in 1 MiB pieces (large single reads are slow on the bench VM). */
static char *slurp(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	size_t len = (size_t)st.st_size, off = 0;
	char *b = malloc(len + 1);
	while (b && off < len) {
		size_t want = len - off < (1u << 20) ? len - off : (1u << 20);
		ssize_t r = read(fd, b + off, want);
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	if (!b || off != len) {
		fprintf(stderr, "%s: short read\n", path);
		free(b);
		return NULL;
	}
	b[len] = '\n';
	*n = len;
	return b;
}

static uint64_t scan_lines(const char *t, size_t n)
{
	uint64_t lines = 0;
	const char *p = t, *e = t + n;
	while (p < e) {
		const char *q = memchr(p, '\n', (size_t)(e - p));
		lines++;
		p = q ? q + 1 : e;
	}
	return lines;
}

/* Sum of every decimal value after an '=' (so the compiler keeps the work). */
static uint64_t scan_values(const char *t, size_t n, int skip_tensors)
{
	static const char tag[] = "[bmprofile] ";
	uint64_t sum = 0;
	const char *p = t, *e = t + n;
	while (p < e) {
		const char *q = memchr(p, '\n', (size_t)(e - p));
		if (!q)
			q = e;
		const char *s = p;
		p = q + 1;
		if (skip_tensors && (size_t)(q - s) > sizeof tag + 9 &&
		    !memcmp(s + sizeof tag - 1, "tensor_id=", 10))
			continue;
		while (s < q) {
			const char *eq = memchr(s, '=', (size_t)(q - s));
			if (!eq)
				break;
			s = eq + 1;
			uint64_t v = 0;
			while (s < q && (unsigned)(*s - '0') < 10)
				v = v * 10 + (uint64_t)(*s++ - '0');
			sum += v;
			while (s < q && *s != ' ')
				s++;
		}
	}
	return sum;
}

/* The reader's parser as tpuprof runs it on a large BM1688 dump. 0 on success. */
static int parse_once(const char *t, size_t n, int jobs)
{
	struct tp_profile *p = tp_profile_new();
	struct bmp_global g;
	struct tp_diag d = {0};
	if (!p)
		return -1;
	memset(&g, 0, sizeof g);
	g.no_tensors = 1;
	g.jobs = jobs;
	int rc = bmp_global_parse(t, n, "global.profile", p, &g, &d);
	if (rc)
		fprintf(stderr, "textscan_bench: %s\n", d.msg);
	bmp_global_free(&g);
	tp_profile_free(p);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: textscan_bench GLOBAL_PROFILE [RUNS]\n");
		return 1;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 3;
	size_t n = 0;
	char *t = slurp(argv[1], &n);
	if (!t)
		return 2;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int par = cpus > 1 ? (int)cpus : 2;
	const char *label[] = {"newline scan", "key=value scan",
	                       "key=value scan, tensor lines skipped", "bmp_global_parse --jobs 1",
	                       "bmp_global_parse --jobs N"};
	uint64_t sink = 0;
	double gb = (double)n / 1e9;
	printf("textscan %s: %.1f MB in memory, %d runs, %ld CPUs\n", argv[1], (double)n / 1e6,
	       runs, cpus);
	for (int k = 0; k < 5; k++) {
		double bw = 1e30, bc = 1e30;
		for (int r = 0; r < runs; r++) {
			double w0 = secs(CLOCK_MONOTONIC), c0 = secs(CLOCK_PROCESS_CPUTIME_ID);
			if (k == 0)
				sink += scan_lines(t, n);
			else if (k < 3)
				sink += scan_values(t, n, k == 2);
			else if (parse_once(t, n, k == 3 ? 1 : par))
				return 2;
			double w = secs(CLOCK_MONOTONIC) - w0,
			       c = secs(CLOCK_PROCESS_CPUTIME_ID) - c0;
			bw = w < bw ? w : bw;
			bc = c < bc ? c : bc;
		}
		printf("  %-40s wall %.3f s (%.2f GB/s)  cpu %.3f s (%.2f GB/s per core)\n",
		       label[k], bw, gb / bw, bc, gb / bc);
		if (k == 4)
			printf("  (--jobs N = %d threads)\n", par);
	}
	printf("  (checksum %llu)\n", (unsigned long long)sink);
	free(t);
	return 0;
}
