/*
 * fuzz_resources.c — libFuzzer target for the cgroup and meminfo parsing of
 * src/common/resources.c (tp_cpu_count_in, tp_mem_room_in): the input, cut at 0xff bytes, is
 * the text of /proc/self/cgroup, of /proc/meminfo and of a cgroup's cpu.max, memory.max,
 * cpu.cfs_quota_us, cpu.cfs_period_us and memory.limit_in_bytes, written into a scratch
 * directory that is also the cgroup root (so the lines "0::/" and "N:cpu:/" reach those files,
 * deeper paths missing ones). tp_cpu_count_in must stay within [1, affinity]; tp_mem_room_in
 * must not exceed what the files say (MemAvailable, or a limit when it is unknown).
 * Seeds: when TP_FUZZ_SEED_DIR is set, LLVMFuzzerInitialize writes a few real-looking sets.
 */
#include "common/common.h"
#include "fuzz_check.h"
#include "fuzz_scratch.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"cgroup",
                                    "meminfo",
                                    "cpu.max",
                                    "memory.max",
                                    "cpu.cfs_quota_us",
                                    "cpu.cfs_period_us",
                                    "memory.limit_in_bytes"};
#define NFILES (sizeof names / sizeof *names)

/* A broken contract is a crash for libFuzzer. */
#define MUST(c)                                                                                    \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_seed_dir(argc, argv);
	if (!dir)
		return 0;
	static const char *const seeds[] = {
	    "0::/\n\xffMemTotal: 1000 kB\nMemAvailable: 800 kB\n\xff"
	    "250000 100000\n\xff"
	    "1073741824\n",
	    "12:cpu,cpuacct:/\n4:memory:/\n0::/\n\xffMemAvailable: 16000000 kB\n\xff\xff\xff"
	    "400000\n\xff"
	    "100000\n\xff"
	    "9223372036854771712\n",
	    "0::/user.slice/a/b\n\xff\xffmax 100000\n\xffmax\n"};
	for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
		char name[32];
		snprintf(name, sizeof name, "resources_%zu", i);
		fuzz_put(dir, name, seeds[i], strlen(seeds[i]));
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_scratch_dir_get("fuzz_resources");
	size_t at = 0;
	for (size_t k = 0; k < NFILES; k++) {
		size_t end = at;
		while (end < size && data[end] != 0xff)
			end++;
		fuzz_put(dir, names[k], data + (at < size ? at : size), end > at ? end - at : 0);
		at = end + 1;
	}
	char proc[128], meminfo[128];
	snprintf(proc, sizeof proc, "%s/cgroup", dir);
	snprintf(meminfo, sizeof meminfo, "%s/meminfo", dir);
	int n = tp_cpu_count_in(8, proc, dir);
	MUST(n >= 1 && n <= 8);
	MUST(tp_cpu_count_in(0, proc, dir) == 1);
	uint64_t with = tp_mem_room_in(meminfo, proc, dir);
	uint64_t avail = tp_mem_room_in(meminfo, NULL, dir);
	uint64_t lim = tp_mem_room_in(NULL, proc, dir);
	MUST(!avail || with <= avail);
	MUST(!lim || with <= lim);
	MUST(with == 0 || with == avail || with == lim);
	return 0;
}
