/*
 * resources_test.c — unit tests for resources.c over a cgroup tree written in a temporary
 * directory: tp_cpu_count, the affinity at most the tightest CPU quota of the process's
 * cgroups (v2 and v1, the cgroup and those above it), and tp_mem_room, MemAvailable at most
 * the tightest memory limit; malformed files count as no limit.
 */
#define _GNU_SOURCE /* nftw, sched_getaffinity, CPU_COUNT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "common/common.h"

#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A scratch tree: dir, and in it "cgroup" (the /proc/self/cgroup text) and "fs" (the root). */
struct tree {
	char dir[64], proc[96], root[96], mem[96];
};

/* The file at path holding text. */
static void text_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void tree_make(struct tree *t, const char *proc_text)
{
	snprintf(t->dir, sizeof t->dir, "/tmp/tp_cpus.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->proc, sizeof t->proc, "%s/cgroup", t->dir);
	snprintf(t->root, sizeof t->root, "%s/fs", t->dir);
	snprintf(t->mem, sizeof t->mem, "%s/meminfo", t->dir);
	assert_int_equal(mkdir(t->root, 0700), 0);
	text_file(t->proc, proc_text);
}

/* root/rel (its directories made) holding text. */
static void put(const struct tree *t, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", t->root, rel);
	for (char *s = path + strlen(t->root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(path, 0700);
		*s = '/';
	}
	text_file(path, text);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void tree_free(struct tree *t)
{
	assert_int_equal(nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* v2: the tightest quota of the cgroup and those above it, rounded up ("max": none; the
 * 250000 / 100000 of a cgroup above: 3 CPUs), never more than the affinity, never below 1. */
static void test_v2_quota(void **state)
{
	(void)state;
	struct tree t;
	tree_make(&t, "0::/a/b/c\n");
	put(&t, "a/b/c/cpu.max", "max 100000\n");
	put(&t, "a/b/cpu.max", "250000 100000\n");
	put(&t, "a/cpu.max", "800000 100000\n");
	assert_int_equal(tp_cpu_count_in(16, t.proc, t.root), 3);
	assert_int_equal(tp_cpu_count_in(2, t.proc, t.root), 2);
	put(&t, "cpu.max", "50000 100000\n"); /* the root's (a container's own): half a CPU */
	assert_int_equal(tp_cpu_count_in(16, t.proc, t.root), 1);
	put(&t, "cpu.max", "max 100000\n");
	put(&t, "a/b/c/cpu.max", "200000 100000\n");
	assert_int_equal(tp_cpu_count_in(16, t.proc, t.root), 2);
	/* Another cgroup's quota is not this process's. */
	put(&t, "a/x/cpu.max", "100000 100000\n");
	assert_int_equal(tp_cpu_count_in(16, t.proc, t.root), 2);
	tree_free(&t);
	/* No cgroup file, no tree: the affinity (at least 1). */
	assert_int_equal(tp_cpu_count_in(7, "/nonexistent/tp_cpus/cgroup", "/nonexistent"), 7);
	assert_int_equal(tp_cpu_count_in(7, NULL, "/nonexistent"), 7);
	assert_int_equal(tp_cpu_count_in(0, NULL, "/nonexistent"), 1);
}

/* v1: the hierarchy whose controllers include cpu, at root/CONTROLLERS (-1: none), beside
 * others (memory, a named one) and an empty v2 line of a hybrid system. */
static void test_v1_quota(void **state)
{
	(void)state;
	struct tree t;
	tree_make(&t, "9:name=systemd:/\n4:memory:/m\n3:cpuacct,cpu:/job/7\n0::/\n");
	put(&t, "cpuacct,cpu/job/7/cpu.cfs_quota_us", "-1\n");
	put(&t, "cpuacct,cpu/job/7/cpu.cfs_period_us", "100000\n");
	put(&t, "cpuacct,cpu/job/cpu.cfs_quota_us", "400000\n");
	put(&t, "cpuacct,cpu/job/cpu.cfs_period_us", "100000\n");
	put(&t, "memory/m/cpu.cfs_quota_us", "100000\n"); /* not the cpu hierarchy */
	put(&t, "memory/m/cpu.cfs_period_us", "100000\n");
	assert_int_equal(tp_cpu_count_in(32, t.proc, t.root), 4);
	/* "cpuacct" alone is not "cpu". */
	tree_free(&t);
	tree_make(&t, "2:cpuacct:/job\n");
	put(&t, "cpuacct/job/cpu.cfs_quota_us", "100000\n");
	put(&t, "cpuacct/job/cpu.cfs_period_us", "100000\n");
	assert_int_equal(tp_cpu_count_in(32, t.proc, t.root), 32);
	tree_free(&t);
}

/* Files that say no number, or nonsense, are no quota; lines that are not "ID:CONTROLLERS:PATH"
 * with an absolute PATH, and a path that climbs out of the tree (".."), are not followed. */
static void test_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {"",
	                                  "max",
	                                  "0 100000",
	                                  "100000 0",
	                                  "100000",
	                                  "x 100000",
	                                  "100000 x",
	                                  "-5 100000",
	                                  " 100000 100000",
	                                  "1e5 1e5",
	                                  "99999999999999999999999 1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct tree t;
		tree_make(&t, "0::/g\n");
		put(&t, "g/cpu.max", bad[i]);
		assert_int_equal(tp_cpu_count_in(8, t.proc, t.root), 8);
		tree_free(&t);
	}
	static const char *const procs[] = {"",       "garbage",    "0:/g\n",    "::\n",
	                                    "0::g\n", "0::/../g\n", "0::/g/..\n"};
	for (size_t i = 0; i < sizeof procs / sizeof *procs; i++) {
		struct tree t;
		tree_make(&t, procs[i]);
		put(&t, "g/cpu.max", "100000 100000\n");
		put(&t, "cpu.max", "100000 100000\n");
		assert_int_equal(tp_cpu_count_in(8, t.proc, t.root), 8);
		tree_free(&t);
	}
	/* The last line without its newline still counts. */
	struct tree t;
	tree_make(&t, "4:memory:/\n0::/g");
	put(&t, "g/cpu.max", "300000 100000");
	assert_int_equal(tp_cpu_count_in(8, t.proc, t.root), 3);
	tree_free(&t);
}

/* Memory: MemAvailable, at most the tightest limit of the cgroup and those above it (v2
 * "max": none; v1's 2^63 - 1 rounded to a page: none); either alone when the other is
 * unknown. */
static void test_mem_room(void **state)
{
	(void)state;
	struct tree t;
	tree_make(&t, "0::/s/job\n");
	text_file(t.mem,
	          "MemTotal:       32000000 kB\nMemFree:  100 kB\nMemAvailable:   16000000 kB\n");
	uint64_t avail = 16000000ull * 1024;
	assert_true(tp_mem_room_in(t.mem, t.proc, t.root) == avail);
	put(&t, "s/job/memory.max", "max\n");
	put(&t, "s/memory.max", "4294967296\n");
	assert_true(tp_mem_room_in(t.mem, t.proc, t.root) == 4294967296ull);
	put(&t, "s/job/memory.max", "1073741824\n");
	assert_true(tp_mem_room_in(t.mem, t.proc, t.root) == 1073741824ull);
	put(&t, "s/job/memory.max", "99999999999999\n"); /* above MemAvailable */
	assert_true(tp_mem_room_in(t.mem, t.proc, t.root) == 4294967296ull);
	assert_true(tp_mem_room_in(NULL, t.proc, t.root) == 4294967296ull);
	assert_true(tp_mem_room_in(t.mem, NULL, t.root) == avail);
	assert_true(tp_mem_room_in(NULL, NULL, t.root) == 0);
	tree_free(&t);
	/* v1: the hierarchy with the memory controller, not the cpu one. */
	tree_make(&t, "5:memory:/slurm/uid_0/job_7\n4:cpu,cpuacct:/slurm\n");
	text_file(t.mem, "MemAvailable: 16000000 kB\n");
	put(&t, "memory/slurm/uid_0/job_7/memory.limit_in_bytes", "9223372036854771712\n");
	put(&t, "memory/slurm/uid_0/memory.limit_in_bytes", "2147483648\n");
	put(&t, "cpu,cpuacct/slurm/memory.limit_in_bytes", "1024\n");
	assert_true(tp_mem_room_in(t.mem, t.proc, t.root) == 2147483648ull);
	put(&t, "memory/slurm/uid_0/memory.limit_in_bytes", "9223372036854771712\n");
	assert_true(tp_mem_room_in(NULL, t.proc, t.root) == 0); /* no limit, nothing known */
	tree_free(&t);
	/* A meminfo without MemAvailable (kernels before 3.14), or only one that names another
	 * field "...MemAvailable:", says nothing. */
	tree_make(&t, "");
	text_file(t.mem, "MemTotal: 100 kB\nXMemAvailable: 5 kB\n");
	assert_true(tp_mem_room_in(t.mem, t.proc, t.root) == 0);
	tree_free(&t);
}

/* The process's own figure: at least 1, at most its affinity. */
static void test_this_process(void **state)
{
	(void)state;
	cpu_set_t set;
	assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
	int n = tp_cpu_count();
	assert_true(n >= 1);
	assert_true(n <= CPU_COUNT(&set));
}

#include "tp_test_main.h"
