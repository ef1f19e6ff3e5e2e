/*
 * gendump_test.c — unit tests of the synthetic bmprofile generator: block order, sizes and
 * record counts of iter0.profile (walked with tp_cursor), cmd files that decode by the §6
 * size table to exactly the COMMAND counts, node line counts in global.profile, the BM1688
 * quirks (stale / trailing inst_id-0 GDMA records, core 1 starting with send_msg), counter
 * wrap only with --wrap, determinism (same seed = same bytes, other seed = other bytes) and
 * option errors. Every expectation is computed from the files, not copied from the
 * generator. Each test generates into its own temporary directory and removes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gendump.h"

/* ---------------------------------------------------------------------------------------- */
/* Helpers.                                                                                   */
/* ---------------------------------------------------------------------------------------- */

struct tdir {
	char path[512];
};

static void tdir_make(struct tdir *t)
{
	const char *base = getenv("TP_BINARY_DIR");
	snprintf(t->path, sizeof t->path, "%s/gendump_test.XXXXXX", base && *base ? base : "/tmp");
	assert_non_null(mkdtemp(t->path));
}

static void tdir_remove(struct tdir *t)
{
	DIR *dir = opendir(t->path);
	if (dir) {
		struct dirent *e;
		while ((e = readdir(dir)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char p[1024];
			snprintf(p, sizeof p, "%s/%s", t->path, e->d_name);
			unlink(p);
		}
		closedir(dir);
	}
	rmdir(t->path);
}

static void gen(const struct gd_opts *o, struct tdir *t, struct gd_result *r)
{
	struct tp_diag d = {0};
	tdir_make(t);
	int rc = gd_generate(o, t->path, r, &d);
	if (rc != TP_OK)
		fail_msg("gd_generate: %s", d.msg);
}

static void load(const char *dir, const char *name, struct tp_file *f)
{
	char p[1024];
	struct tp_diag d = {0};
	snprintf(p, sizeof p, "%s/%s", dir, name);
	if (tp_file_load(f, p, &d) != TP_OK)
		fail_msg("load %s: %s", p, d.msg);
}

struct blk {
	uint32_t type, len;
	uint64_t off; /* payload offset */
};

/* Walks the block stream; returns the number of blocks (fails on a truncated file). */
static size_t walk(const struct tp_file *f, struct blk *b, size_t max)
{
	struct tp_cursor c;
	size_t n = 0;
	tp_cur_init(&c, f->data, f->size, 0);
	while (tp_cur_left(&c) > 0) {
		assert_true(n < max);
		assert_true(tp_cur_left(&c) >= 8);
		b[n].type = tp_cur_u32(&c);
		b[n].len = tp_cur_u32(&c);
		b[n].off = tp_cur_offset(&c);
		struct tp_cursor sub;
		assert_int_equal(tp_cur_sub(&c, b[n].len, &sub), 0);
		n++;
	}
	assert_false(c.bad);
	return n;
}

/* Decoded cmd file: command count, sys kinds seen, tail. */
struct cmds {
	uint64_t n;
	uint64_t nonsys; /* GDMA: commands other than cmd_type 6 */
	unsigned first_typ, first_eu;
	unsigned last_typ, last_eu;
	uint64_t first_wait; /* 1-based index of the first TIU wait_msg, 0 if none */
	size_t tail;         /* bytes after the last command */
	uint64_t *deps;      /* cmd_id_dep of every command (tp_malloc'ed) */
};

/* TIU descriptor length from its header, by the §6 table; 0 = unknown. */
static size_t tiu_len(const uint8_t *p, unsigned *typ, unsigned *eu)
{
	unsigned shortf = (unsigned)tp_bits(p, 0, 1);
	*typ = (unsigned)tp_bits(p, 41, 4);
	*eu = (unsigned)tp_bits(p, 45, 5);
	if (*typ == 12) {
		*eu = (unsigned)tp_bits(p, 45, 3);
		return 16;
	}
	if (*typ == 15)
		return 16;
	if (!shortf)
		return 128;
	switch (*typ) {
	case 0:
	case 1:
	case 3:
		return 64;
	case 2:
		return *eu == 1 ? 48 : 32;
	case 4:
	case 5:
	case 9:
	case 10:
		return 32;
	case 6:
	case 13:
	case 14:
		return 48;
	default:
		return 0;
	}
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void decode(const struct tp_file *f, int tiu, struct cmds *out)
{
	memset(out, 0, sizeof *out);
	out->deps = tp_malloc(f->size / 16 * sizeof *out->deps + 8);
	assert_non_null(out->deps);
	size_t pos = 0;
	while (pos < f->size) {
		assert_true(f->size - pos >= 16);
		const uint8_t *p = f->data + pos;
		unsigned typ, eu;
		size_t len;
		int sys;
		if (tiu) {
			len = tiu_len(p, &typ, &eu);
			sys = typ == 15;
		} else {
			typ = (unsigned)tp_bits(p, 32, 4);
			eu = (unsigned)tp_bits(p, 36, 3);
			sys = typ == 6;
			len = sys ? 16 : 96;
		}
		assert_int_not_equal(len, 0);
		assert_true(len <= f->size - pos);
		/* TIU cmd_id_dep bits 17-40, GDMA bits 64-87 (§6). */
		out->deps[out->n] = tiu ? tp_bits(p, 17, 24) : tp_bits(p, 64, 24);
		out->n++;
		if (out->n == 1) {
			out->first_typ = typ;
			out->first_eu = eu;
		}
		if (!sys)
			out->nonsys++;
		if (tiu && typ == 15 && eu == 9 && !out->first_wait)
			out->first_wait = out->n;
		out->last_typ = typ;
		out->last_eu = eu;
		pos += len;
		/* §6: the stream ends at a sys command followed by an all-zero tail < 129 bytes. */
		if (sys && f->size - pos < 129 && all_zero(f->data + pos, f->size - pos))
			break;
	}
	out->tail = f->size - pos;
}

static uint64_t count_lines(const struct tp_file *f, const char *needle, const char *and_too)
{
	uint64_t n = 0;
	const char *s = (const char *)f->data, *end = s + f->size;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		char buf[512];
		size_t k = len < sizeof buf - 1 ? len : sizeof buf - 1;
		memcpy(buf, s, k);
		buf[k] = 0;
		if (strstr(buf, needle) && (!and_too || strstr(buf, and_too)))
			n++;
		s += len + 1;
	}
	return n;
}

/* The value of `key` (e.g. "gdma_id=") in each BM1688 node line of `core` that contains
 * `kind` ("bd_func=" for TIU, "gdma_func=" for GDMA), in file order. Returns the count. */
static uint64_t line_deps(const struct tp_file *f, const char *kind, const char *key, unsigned core,
                          uint64_t *out, uint64_t max)
{
	char core_kv[32];
	snprintf(core_kv, sizeof core_kv, " core=%u", core);
	uint64_t n = 0;
	const char *s = (const char *)f->data, *end = s + f->size;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		char buf[512];
		size_t k = len < sizeof buf - 1 ? len : sizeof buf - 1;
		memcpy(buf, s, k);
		buf[k] = 0;
		const char *kv = strstr(buf, key);
		if (strstr(buf, kind) && strstr(buf, core_kv) && kv && n < max)
			out[n++] = strtoull(kv + strlen(key), NULL, 10);
		s += len + 1;
	}
	return n;
}

static int files_equal(const char *a, const char *b, const char *name)
{
	struct tp_file fa, fb;
	load(a, name, &fa);
	load(b, name, &fb);
	int eq = fa.size == fb.size && memcmp(fa.data, fb.data, fa.size) == 0;
	tp_file_release(&fa);
	tp_file_release(&fb);
	return eq;
}

static void cmd_name(char *buf, size_t n, uint64_t base, unsigned core, unsigned engine)
{
	snprintf(buf, n, "cmd_%llx_%u_%u.dat", (unsigned long long)base, core, engine);
}

/* ---------------------------------------------------------------------------------------- */
/* Layout checks shared by both arches.                                                       */
/* ---------------------------------------------------------------------------------------- */

/* One core's COMMAND block: its GDMA and TIU command counts and cmd-file base addresses. */
struct core_cmds {
	uint64_t gdma, tiu, gbase, bbase;
};

/* The COMMAND block b of core c (§4.2): counts that add up to --cmds, the bases the generator
 * reported. */
static void check_command_block(const struct gd_opts *o, const struct gd_result *r,
                                const struct tp_file *it, const struct blk *b, unsigned c,
                                struct core_cmds *cc)
{
	assert_int_equal(b->type, 8);
	assert_int_equal(b->len, 44);
	struct tp_cursor cur;
	tp_cur_init(&cur, it->data + b->off, b->len, b->off);
	cc->gbase = tp_cur_u64(&cur);
	assert_int_equal(tp_cur_u64(&cur), 0);
	cc->bbase = tp_cur_u64(&cur);
	assert_int_equal(tp_cur_u64(&cur), 0);
	assert_int_equal(tp_cur_u32(&cur), 1);
	cc->gdma = tp_cur_u32(&cur);
	cc->tiu = tp_cur_u32(&cur);
	assert_false(cur.bad);
	assert_int_equal(cc->gdma + cc->tiu, o->cmds);
	assert_int_equal(cc->gbase, r->gdma_base[c]);
	assert_int_equal(cc->bbase, r->bd_base[c]);
}

/* Core c's cmd files decode to exactly the COMMAND counts and end like R's; *dt and *dg get
 * the decoded TIU and GDMA commands (deps owned by the caller). */
static void check_cmd_files(const struct gd_opts *o, const char *dir, const struct gd_result *r,
                            unsigned c, const struct core_cmds *cc, struct cmds *dt,
                            struct cmds *dg)
{
	int a1688 = o->arch == 4;
	char name[128];
	struct tp_file ft, fg;
	cmd_name(name, sizeof name, cc->bbase, c, 0);
	load(dir, name, &ft);
	cmd_name(name, sizeof name, cc->gbase, c, 1);
	load(dir, name, &fg);
	decode(&ft, 1, dt);
	decode(&fg, 0, dg);
	assert_int_equal(dt->n, cc->tiu);
	assert_int_equal(dg->n, cc->gdma);
	assert_int_equal(ft.size % 128, 0);
	assert_int_equal(fg.size % 128, 0);
	assert_true(dt->tail < 128 && dg->tail < 128);
	assert_int_equal(dt->last_typ, 15);
	assert_int_equal(dt->last_eu, 31); /* system.end */
	assert_int_equal(dg->last_typ, 6);
	assert_int_equal(dg->last_eu, 0); /* chain_end */
	assert_int_equal(ft.size, r->tiu_bytes[c]);
	if (a1688 && c > 0) {
		assert_int_equal(dt->first_typ, 15); /* core >0 starts with system.send_msg */
		assert_int_equal(dt->first_eu, 8);
	}
	if (a1688 && o->cores > 1)
		assert_true(dt->first_wait > 0);
	tp_file_release(&ft);
	tp_file_release(&fg);
}

/* Core c's monitor blocks from b[k] on: MONITOR_BD, MONITOR_GDMA, DYN and (core 0) DYN_EXTRA.
 * Returns the index of the block after them. */
static size_t check_monitor_blocks(const struct gd_opts *o, const struct tp_file *it,
                                   const struct blk *b, size_t k, unsigned c,
                                   const struct core_cmds *cc, const struct cmds *dg)
{
	int a1688 = o->arch == 4;
	uint32_t grec = a1688 ? 256 : 192;
	/* MONITOR_BD: one 32-byte record per TIU command, inst_id = index mod 2^16, starts
	 * strictly after the previous end (no wrap without --wrap). */
	assert_int_equal(b[k].type, 3);
	assert_int_equal(b[k].len, 32 * cc->tiu);
	const uint8_t *p = it->data + b[k].off;
	uint32_t prev_end = 0;
	for (uint64_t i = 0; i < cc->tiu; i++, p += 32) {
		uint32_t s = tp_le32(p), e = tp_le32(p + 4);
		assert_int_equal(tp_le64(p + 8) & 0xFFFF, i & 0xFFFF);
		assert_true(s != 0 && e != 0 && s != 0xFFFFFFFFu && e != 0xFFFFFFFFu);
		if (!o->wrap) {
			assert_true(s <= e);
			if (i > 0)
				assert_true(s > prev_end);
		}
		prev_end = e;
	}
	k++;
	/* MONITOR_GDMA: one record per non-sys GDMA command; BM1688 core 0 adds the stale
	 * first and the trailing inst_id-0 records, BM1684X the firmware's inst_id-0 record
	 * before the net's, which start again from 0. */
	uint64_t want = dg->nonsys + (a1688 ? (c == 0 ? 2 : 0) : 1);
	assert_int_equal(b[k].type, 4);
	assert_int_equal(b[k].len, (uint64_t)grec * want);
	p = it->data + b[k].off;
	if (a1688 && c == 0) {
		assert_int_equal(tp_le32(p + 8) & 0xFFFFF, 0);
		assert_int_equal(tp_le32(p + grec + 8) & 0xFFFFF, 0);
		assert_int_equal(tp_le32(p + (want - 1) * grec + 8) & 0xFFFFF, 0);
		/* the stale record ends before the first real one starts */
		assert_true(tp_le32(p + 4) < tp_le32(p + grec));
	}
	if (!a1688) {
		assert_int_equal(tp_le32(p + 8) & 0xFFFFF, 0);
		assert_int_equal(tp_le32(p + grec + 8) & 0xFFFFF, 0);
	}
	for (uint64_t i = 1; i < want && !o->wrap; i++)
		assert_true(tp_le32(p + i * grec) > tp_le32(p + (i - 1) * grec + 4));
	k++;
	assert_int_equal(b[k].type, 5);
	assert_int_equal(b[k].len % 32, 0);
	assert_true(b[k].len >= 64);
	/* DYN record 0: type 0xFFFFFFFF, 20 ns per tick (§4.7). */
	p = it->data + b[k].off;
	assert_int_equal(tp_le32(p + 4), 0xFFFFFFFFu);
	assert_int_equal(tp_le64(p + 24), 20);
	k++;
	if (c == 0) {
		assert_int_equal(b[k].type, 6);
		assert_int_equal(b[k].len, 12 + 256);
		k++;
	}
	return k;
}

/* Core c's node lines in global.profile: on BM1688 one per command except the final end /
 * chain_end (§3.1), agreeing with the descriptors on every dependency, in order; BM1684X has
 * lines for those two as well (after the runtime's "insert ... end" notes), as its real dump. */
static void check_node_lines(const struct gd_opts *o, const struct tp_file *gp, unsigned c,
                             const struct core_cmds *cc, const struct cmds *dt,
                             const struct cmds *dg)
{
	if (o->arch != 4) {
		assert_int_equal(count_lines(gp, "] bd cmd_id bd_id=", NULL), cc->tiu);
		assert_int_equal(count_lines(gp, "] gdma cmd_id bd_id=", NULL), cc->gdma);
		assert_int_equal(count_lines(gp, "] insert bd end (cmd_id bd_id=", NULL), 1);
		assert_int_equal(count_lines(gp, "] insert gdma end (cmd_id gdma_id=", NULL), 1);
		return;
	}
	char core_kv[32];
	snprintf(core_kv, sizeof core_kv, " core=%u", c);
	assert_int_equal(count_lines(gp, "bd_func=", core_kv), cc->tiu - 1);
	assert_int_equal(count_lines(gp, "gdma_func=", core_kv), cc->gdma - 1);
	/* TIU lines carry the dependency as gdma_id=, GDMA lines as bd_id=. */
	uint64_t *ld = tp_malloc((cc->tiu + cc->gdma) * sizeof *ld);
	assert_non_null(ld);
	uint64_t m = line_deps(gp, "bd_func=", "gdma_id=", c, ld, cc->tiu);
	assert_int_equal(m, cc->tiu - 1);
	for (uint64_t i = 0; i < m; i++)
		assert_int_equal(ld[i], dt->deps[i]);
	m = line_deps(gp, "gdma_func=", "bd_id=", c, ld, cc->gdma);
	assert_int_equal(m, cc->gdma - 1);
	for (uint64_t i = 0; i < m; i++)
		assert_int_equal(ld[i], dg->deps[i]);
	tp_free(ld);
}

/* global.profile's framing: the arch line, one subnet run, balanced parallel sections, one
 * core list, the per-core descriptors and some layer and tensor lines. */
static void check_global_framing(const struct gd_opts *o, const struct tp_file *gp)
{
	char arch_line[64];
	snprintf(arch_line, sizeof arch_line, "[bmprofile] arch=%d\n", o->arch);
	assert_memory_equal(gp->data, arch_line, strlen(arch_line));
	assert_int_equal(count_lines(gp, "[bmprofile] is_mlir=1", NULL), 1);
	assert_int_equal(count_lines(gp, "start to run subnet_id=0", NULL), 1);
	assert_int_equal(count_lines(gp, "end to run subnet_id=0", NULL), 1);
	assert_int_equal(count_lines(gp, "start parallel.", NULL),
	                 count_lines(gp, "end parallel.", NULL));
	assert_int_equal(count_lines(gp, "[bmprofile] core_list=", NULL), 1);
	assert_int_equal(count_lines(gp, "desc=bd_cmd_mem", NULL), o->cores);
	assert_int_equal(count_lines(gp, "desc=gdma_perf_monitor", NULL), o->cores);
	assert_true(count_lines(gp, "local_layer: layer_id=", NULL) > 0);
	assert_true(count_lines(gp, "tensor_id=", NULL) > 0);
}

static void check_dump(const struct gd_opts *o, const char *dir, const struct gd_result *r)
{
	unsigned nc = o->cores;
	struct tp_file it;
	load(dir, "iter0.profile", &it);
	struct blk b[32];
	size_t nb = walk(&it, b, 32);

	/* Expected order (§4.2): SUMMARY, COMMAND x cores, then per core BD, GDMA, DYN and
	 * DYN_EXTRA when it has items (core 0 carries the NODE_SET descriptor). */
	size_t k = 0;
	assert_int_equal(b[k].type, 1);
	assert_int_equal(b[k].len, 36);
	k++;
	struct core_cmds cc[2];
	for (unsigned c = 0; c < nc; c++, k++)
		check_command_block(o, r, &it, &b[k], c, &cc[c]);
	struct tp_file gp;
	load(dir, "global.profile", &gp);
	for (unsigned c = 0; c < nc; c++) {
		struct cmds dt, dg;
		check_cmd_files(o, dir, r, c, &cc[c], &dt, &dg);
		k = check_monitor_blocks(o, &it, b, k, c, &cc[c], &dg);
		check_node_lines(o, &gp, c, &cc[c], &dt, &dg);
		tp_free(dt.deps);
		tp_free(dg.deps);
	}
	assert_int_equal(k, nb);
	check_global_framing(o, &gp);
	tp_file_release(&gp);
	tp_file_release(&it);
}

/* ---------------------------------------------------------------------------------------- */
/* Tests.                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void test_bm1688_two_cores(void **state)
{
	(void)state;
	struct gd_opts o;
	gd_opts_default(&o);
	o.cmds = 3000;
	o.seed = 7;
	struct tdir t;
	struct gd_result r;
	gen(&o, &t, &r);
	check_dump(&o, t.path, &r);
	/* core_list names both cores */
	struct tp_file gp;
	load(t.path, "global.profile", &gp);
	assert_int_equal(count_lines(&gp, "[bmprofile] core_list=0,1,", NULL), 1);
	tp_file_release(&gp);
	tdir_remove(&t);
}

static void test_bm1688_one_core(void **state)
{
	(void)state;
	struct gd_opts o;
	gd_opts_default(&o);
	o.cores = 1;
	o.cmds = 500;
	struct tdir t;
	struct gd_result r;
	gen(&o, &t, &r);
	check_dump(&o, t.path, &r);
	tdir_remove(&t);
}

static void test_bm1684x(void **state)
{
	(void)state;
	struct gd_opts o;
	gd_opts_default(&o);
	o.arch = 3;
	o.cores = 1;
	o.cmds = 2000;
	o.seed = 3;
	struct tdir t;
	struct gd_result r;
	gen(&o, &t, &r);
	check_dump(&o, t.path, &r);
	struct tp_file gp;
	load(t.path, "global.profile", &gp);
	/* BM1684X spelling: no core= keys, TIU lines carry their own 1-based bd_id. */
	assert_int_equal(count_lines(&gp, " core=", NULL), 0);
	assert_int_equal(count_lines(&gp, "] bd cmd_id bd_id=1 ", NULL), 1);
	assert_int_equal(count_lines(&gp, "tpu_freq=1000", NULL), 1);
	tp_file_release(&gp);
	tdir_remove(&t);
}

static const char *const files[] = {"global.profile", "iter0.profile", "net_stat.sim"};

static void test_deterministic(void **state)
{
	(void)state;
	struct gd_opts o;
	gd_opts_default(&o);
	o.cmds = 1500;
	o.seed = 42;
	struct tdir a, b, c;
	struct gd_result ra, rb, rc;
	gen(&o, &a, &ra);
	gen(&o, &b, &rb);
	o.seed = 43;
	gen(&o, &c, &rc);
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		assert_true(files_equal(a.path, b.path, files[i]));
	for (unsigned core = 0; core < 2; core++) {
		char name[128];
		cmd_name(name, sizeof name, ra.bd_base[core], core, 0);
		assert_true(files_equal(a.path, b.path, name));
		cmd_name(name, sizeof name, ra.gdma_base[core], core, 1);
		assert_true(files_equal(a.path, b.path, name));
	}
	assert_false(files_equal(a.path, c.path, "iter0.profile"));
	assert_false(files_equal(a.path, c.path, "global.profile"));
	tdir_remove(&a);
	tdir_remove(&b);
	tdir_remove(&c);
}

static void test_hostile(void **state)
{
	(void)state;
	struct gd_opts o;
	gd_opts_default(&o);
	o.cmds = 800;
	o.hostile = 1;
	struct tdir t;
	struct gd_result r;
	gen(&o, &t, &r);
	check_dump(&o, t.path, &r);
	struct tp_file gp;
	load(t.path, "global.profile", &gp);
	assert_true(count_lines(&gp, "layer_name=</script><img src=x onerror=alert(1)>", NULL) > 0);
	assert_true(count_lines(&gp, "net_name=net</script>", NULL) == 1);
	assert_true(count_lines(&gp, "layer_name=back\\slash", NULL) > 0);
	assert_true(count_lines(&gp, "layer_name=quote\"d", NULL) > 0);
	tp_file_release(&gp);
	tdir_remove(&t);
}

/* --wrap: the 32-bit TIU counter passes 2^32 within the dump (a start below its
 * predecessor); without it, check_dump already proved every start is after the last end. */
static void test_wrap(void **state)
{
	(void)state;
	struct gd_opts o;
	gd_opts_default(&o);
	o.cmds = 2000;
	o.wrap = 1;
	struct tdir t;
	struct gd_result r;
	gen(&o, &t, &r);
	check_dump(&o, t.path, &r);
	struct tp_file it;
	load(t.path, "iter0.profile", &it);
	struct blk b[32];
	walk(&it, b, 32);
	assert_int_equal(b[3].type, 3); /* core 0's MONITOR_BD */
	const uint8_t *p = it.data + b[3].off;
	int wrapped = 0;
	for (uint32_t i = 1; i < b[3].len / 32; i++)
		if (tp_le32(p + i * 32) < tp_le32(p + (i - 1) * 32))
			wrapped++;
	assert_int_equal(wrapped, 1);
	tp_file_release(&it);
	tdir_remove(&t);
}

static void test_bad_options(void **state)
{
	(void)state;
	struct gd_opts o;
	struct tp_diag d = {0};
	uint64_t min = 0;
	gd_opts_default(&o);
	assert_int_equal(gd_check(&o, &min, &d), TP_OK);
	o.cmds = min - 1;
	assert_int_equal(gd_check(&o, NULL, &d), TP_EUSAGE);
	assert_non_null(strstr(d.msg, "too small"));
	gd_opts_default(&o);
	o.cores = 3;
	assert_int_equal(gd_check(&o, NULL, &d), TP_EUSAGE);
	gd_opts_default(&o);
	o.arch = 3; /* BM1684X is single-core */
	assert_int_equal(gd_check(&o, NULL, &d), TP_EUSAGE);
	gd_opts_default(&o);
	assert_int_equal(gd_parse_mix(&o, "conv=1,bogus=2", &d), TP_EUSAGE);
	assert_int_equal(gd_parse_mix(&o, "conv=0,load=0", &d), TP_EUSAGE);
	assert_int_equal(gd_parse_mix(&o, "conv=5,load=x", &d), TP_EUSAGE);
	assert_int_equal(gd_parse_mix(&o, "conv=5,store=2", &d), TP_OK);
	assert_int_equal(o.mix[GD_CONV], 5);
	assert_int_equal(o.mix[GD_STORE], 2);
	assert_int_equal(o.mix[GD_LOAD], 0);
}

/* A mix with only compute kinds still fills the GDMA budget (with loads) and vice versa. */
static void test_one_sided_mix(void **state)
{
	(void)state;
	struct gd_opts o;
	struct tp_diag d = {0};
	gd_opts_default(&o);
	o.cmds = 600;
	assert_int_equal(gd_parse_mix(&o, "add=1", &d), TP_OK);
	struct tdir t;
	struct gd_result r;
	gen(&o, &t, &r);
	check_dump(&o, t.path, &r);
	tdir_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bm1688_two_cores), cmocka_unit_test(test_bm1688_one_core),
	    cmocka_unit_test(test_bm1684x),          cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_hostile),          cmocka_unit_test(test_wrap),
	    cmocka_unit_test(test_bad_options),      cmocka_unit_test(test_one_sided_mix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
