/*
 * resources.c — what this process may use: tp_cpu_count, behind the default of --jobs, and
 * tp_mem_room, the default of `tpuprof job --mem-limit`. The CPUs it may run on (its affinity:
 * taskset, a batch scheduler's cpuset), at most its cgroup's CPU quota rounded up (a
 * container's --cpus, a Kubernetes CPU limit); the memory the system has available, at most
 * its cgroup's memory limit (a container's --memory, Slurm's --mem). The machine's figures
 * would over-subscribe such a process: every thread holds its buffers and the quota throttles
 * them all; dumps started for memory the cgroup does not have get the whole job killed.
 * A cgroup's limits are those of its own and of every cgroup above it: cgroup v2 (cpu.max,
 * memory.max) and v1 (cpu.cfs_quota_us / cpu.cfs_period_us in the hierarchy with the cpu
 * controller, memory.limit_in_bytes in the one with memory). Owns nothing beyond the call.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "common.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file at path into buf (NUL-terminated, at most cap - 1 bytes); its length, -1 if it
 * cannot be read. */
static long read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (long)n;
}

/* A positive decimal number at *s (moved past it), 0 if there is none or it overflows. */
static uint64_t number(const char **s)
{
	const char *p = *s;
	uint64_t v = 0;
	if (*p < '0' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	return v;
}

/* The start of the file dir/name into text (64 bytes), "" if it cannot be read. */
static void file_text(const char *dir, const char *name, char text[64])
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ||
	    read_small(path, text, 64) < 0)
		text[0] = '\0';
}

/* The positive number the file dir/name starts with, 0 if none. */
static uint64_t file_number(const char *dir, const char *name)
{
	char text[64];
	file_text(dir, name, text);
	const char *s = text;
	return number(&s);
}

/* What a limit is of, and in which cgroup version. */
enum what { CPU_V2, CPU_V1, MEM_V2, MEM_V1 };

/* A v1 memory limit at or above this is the kernel's "no limit" (a page-rounded 2^63 - 1). */
#define MEM_V1_NONE ((uint64_t)1 << 62)

/* The limit of the cgroup directory dir, 0 for none: CPUs (the quota over its period, rounded
 * up; v2's cpu.max "QUOTA PERIOD" or "max PERIOD", v1's quota -1 for none) or bytes (v2's
 * memory.max, "max" for none; v1's memory.limit_in_bytes). */
static uint64_t dir_limit(const char *dir, enum what w)
{
	uint64_t quota = 0, period = 0;
	if (w == MEM_V2)
		return file_number(dir, "memory.max");
	if (w == MEM_V1) {
		uint64_t b = file_number(dir, "memory.limit_in_bytes");
		return b >= MEM_V1_NONE ? 0 : b;
	}
	if (w == CPU_V2) {
		char text[64];
		file_text(dir, "cpu.max", text);
		const char *s = text;
		quota = number(&s);
		if (*s != ' ')
			return 0;
		s++;
		period = number(&s);
	} else {
		quota = file_number(dir, "cpu.cfs_quota_us");
		period = file_number(dir, "cpu.cfs_period_us");
	}
	if (!quota || !period)
		return 0;
	return quota / period + (quota % period != 0);
}

/* The tightest limit of the cgroup at root/sub/path and the cgroups above it up to root/sub
 * (sub empty for v2), 0 for none. path is a string; one that is not absolute or climbs ("..":
 * a cgroup outside this namespace's view) has none that can be read here. */
static uint64_t walk_limit(const char *root, const char *sub, const char *path, enum what w)
{
	char dir[PATH_MAX];
	size_t len = strlen(path);
	uint64_t best = 0;
	if (len >= sizeof dir || path[0] != '/' || strstr(path, "/..") != NULL)
		return 0;
	for (;;) {
		if (snprintf(dir, sizeof dir, "%s%s%s%.*s", root, *sub ? "/" : "", sub, (int)len,
		             path) >= (int)sizeof dir)
			return best;
		uint64_t v = dir_limit(dir, w);
		if (v && (!best || v < best))
			best = v;
		while (len > 0 && path[len - 1] == '/') /* the parent: drop the last component */
			len--;
		if (!len)
			return best;
		while (len > 0 && path[len - 1] != '/')
			len--;
	}
}

/* Whether the v1 controller list ctl (comma-separated) has `name`. */
static int has_controller(const char *ctl, const char *name)
{
	size_t n = strlen(name);
	for (const char *s = ctl; *s;) {
		size_t k = strcspn(s, ",");
		if (k == n && !memcmp(s, name, n))
			return 1;
		s += k + (s[k] == ',');
	}
	return 0;
}

/* The tightest CPU (cpu != 0) or memory limit of the cgroups listed in the file proc_cgroup
 * (the format of /proc/self/cgroup), their file systems mounted at root; 0 for none. */
static uint64_t cgroup_limit(const char *proc_cgroup, const char *root, int cpu)
{
	char text[8192];
	uint64_t best = 0;
	if (!proc_cgroup || read_small(proc_cgroup, text, sizeof text) < 0)
		return 0;
	/* Lines "ID:CONTROLLERS:PATH": v2's has ID 0 and no controllers; a v1 hierarchy is
	 * mounted at root/CONTROLLERS. */
	for (char *line = text; *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0'; /* each PATH a string of its own */
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			*c2 = '\0';
			const char *ctl = c1 + 1, *path = c2 + 1;
			uint64_t v = 0;
			if (c1 - line == 1 && line[0] == '0' && !*ctl)
				v = walk_limit(root, "", path, cpu ? CPU_V2 : MEM_V2);
			else if (has_controller(ctl, cpu ? "cpu" : "memory"))
				v = walk_limit(root, ctl, path, cpu ? CPU_V1 : MEM_V1);
			if (v && (!best || v < best))
				best = v;
		}
		if (!end)
			break;
		line = end + 1;
	}
	return best;
}

int tp_cpu_count_in(int affinity, const char *proc_cgroup, const char *root)
{
	int n = affinity > 0 ? affinity : 1;
	uint64_t q = cgroup_limit(proc_cgroup, root, 1);
	return q && q < (uint64_t)n ? (int)q : n;
}

static int cpus;

static void cpus_once(void)
{
	int n = 0;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	if (n < 1) { /* more CPUs than a cpu_set_t holds: every online one */
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c < 1 ? 1 : c > INT_MAX ? INT_MAX : (int)c;
	}
	cpus = tp_cpu_count_in(n, "/proc/self/cgroup", "/sys/fs/cgroup");
}

/* Once per process: every pool started without a thread count asks (tp_wsync_workers). */
int tp_cpu_count(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, cpus_once);
	return cpus;
}

int tp_jobs_default(void)
{
	int n = tp_cpu_count();
	return n > TP_MAX_JOBS ? TP_MAX_JOBS : n;
}

uint64_t tp_mem_room_in(const char *meminfo, const char *proc_cgroup, const char *root)
{
	char text[16384];
	uint64_t avail = 0;
	if (meminfo && read_small(meminfo, text, sizeof text) >= 0) {
		const char *s = strstr(text, "MemAvailable:");
		if (s && (s == text || s[-1] == '\n')) {
			s += strlen("MemAvailable:");
			while (*s == ' ' || *s == '\t')
				s++;
			uint64_t kb = number(&s);
			avail = kb > UINT64_MAX / 1024 ? UINT64_MAX : kb * 1024;
		}
	}
	uint64_t lim = cgroup_limit(proc_cgroup, root, 0);
	return lim && (!avail || lim < avail) ? lim : avail;
}

uint64_t tp_mem_room(void)
{
	return tp_mem_room_in("/proc/meminfo", "/proc/self/cgroup", "/sys/fs/cgroup");
}
