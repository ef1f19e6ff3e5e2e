/*
 * cpus.c — tp_cpu_count: how many CPUs this process may use, the default of --jobs. The CPUs
 * it may run on (its affinity: taskset, a batch scheduler's cpuset), at most its cgroup's CPU
 * quota rounded up (a container's --cpus, a Kubernetes CPU limit: cgroup v2 cpu.max, v1
 * cpu.cfs_quota_us over cpu.cfs_period_us; the tightest of its cgroup and those above it). The
 * machine's online CPUs would over-subscribe such a process: every thread holds its buffers,
 * and the quota throttles them all. Owns nothing beyond the call.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "common.h"

#include <fcntl.h>
#include <limits.h>
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
static unsigned long long number(const char **s)
{
	const char *p = *s;
	unsigned long long v = 0;
	if (*p < '0' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (ULLONG_MAX - 9) / 10)
			return 0;
		v = v * 10 + (unsigned long long)(*p - '0');
	}
	*s = p;
	return v;
}

/* CPUs a quota of `quota` per `period` allows, rounded up; 0 for none (or no figure). */
static int quota_cpus(unsigned long long quota, unsigned long long period)
{
	if (!quota || !period)
		return 0;
	unsigned long long n = quota / period + (quota % period != 0);
	return n > INT_MAX ? INT_MAX : (int)n;
}

/* The quota of the cgroup directory dir: v2's cpu.max ("QUOTA PERIOD" or "max PERIOD"), or
 * v1's cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us; 0 for none. */
static int dir_quota(const char *dir, int v1)
{
	char path[PATH_MAX], text[64], per[64];
	if (!v1) {
		if (snprintf(path, sizeof path, "%s/cpu.max", dir) >= (int)sizeof path ||
		    read_small(path, text, sizeof text) < 0)
			return 0;
		const char *s = text;
		unsigned long long q = number(&s);
		if (*s != ' ')
			return 0;
		s++;
		return quota_cpus(q, number(&s));
	}
	if (snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir) >= (int)sizeof path ||
	    read_small(path, text, sizeof text) < 0 ||
	    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir) >= (int)sizeof path ||
	    read_small(path, per, sizeof per) < 0)
		return 0;
	const char *q = text, *p = per;
	unsigned long long quota = number(&q);
	return quota_cpus(quota, number(&p));
}

/* Whether the v1 controller list `ctl` (len bytes, comma-separated) has "cpu". */
static int has_cpu(const char *ctl, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && ctl[j] != ',')
			j++;
		if (j - i == 3 && !memcmp(ctl + i, "cpu", 3))
			return 1;
		i = j + 1;
	}
	return 0;
}

/* The tightest quota of the cgroup at root/sub/path and the cgroups above it up to root/sub
 * (sub empty for v2), 0 for none. path is a string of len bytes; one that climbs ("..": a
 * cgroup outside this namespace's view) has none that can be read here. */
static int walk_quota(const char *root, const char *sub, size_t sublen, const char *path,
                      size_t len, int v1)
{
	char dir[PATH_MAX];
	int best = 0;
	if (len >= sizeof dir || !len || path[0] != '/' || strstr(path, "/..") != NULL)
		return 0;
	for (;;) {
		if (snprintf(dir, sizeof dir, "%s%s%.*s%.*s", root, sublen ? "/" : "", (int)sublen,
		             sub, (int)len, path) >= (int)sizeof dir)
			return best;
		int q = dir_quota(dir, v1);
		if (q && (!best || q < best))
			best = q;
		while (len > 0 && path[len - 1] == '/') /* the parent: drop the last component */
			len--;
		if (!len)
			return best;
		while (len > 0 && path[len - 1] != '/')
			len--;
	}
}

int tp_cpu_count_in(int affinity, const char *proc_cgroup, const char *root)
{
	int n = affinity > 0 ? affinity : 1, best = 0;
	char text[8192];
	if (!proc_cgroup || read_small(proc_cgroup, text, sizeof text) < 0)
		return n;
	/* Lines "ID:CONTROLLERS:PATH": v2's has ID 0 and no controllers; a v1 hierarchy with the
	 * cpu controller is mounted at root/CONTROLLERS. */
	for (char *line = text; *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0'; /* each PATH a string of its own */
		size_t len = strlen(line);
		char *c1 = memchr(line, ':', len);
		char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			const char *ctl = c1 + 1, *path = c2 + 1;
			size_t ctllen = (size_t)(c2 - ctl), plen = len - (size_t)(path - line);
			int q = 0;
			if (c1 - line == 1 && line[0] == '0' && !ctllen)
				q = walk_quota(root, "", 0, path, plen, 0);
			else if (has_cpu(ctl, ctllen))
				q = walk_quota(root, ctl, ctllen, path, plen, 1);
			if (q && (!best || q < best))
				best = q;
		}
		line += len + (end != NULL);
	}
	return best && best < n ? best : n;
}

int tp_cpu_count(void)
{
	int n = 0;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	if (n < 1) { /* more CPUs than a cpu_set_t holds: every online one */
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c < 1 ? 1 : c > INT_MAX ? INT_MAX : (int)c;
	}
	return tp_cpu_count_in(n, "/proc/self/cgroup", "/sys/fs/cgroup");
}
