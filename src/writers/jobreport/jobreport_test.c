/*
 * jobreport_test.c — unit tests of the job report: the entry of a built profile (strips,
 * coalesced runs, core imbalance), job_entry.json written and read back unchanged, the JSON
 * reader's errors located at their byte, the job-wide figures (natural device order, slowest,
 * most imbalanced, siblings, device imbalance, alignment), the escaping of input names in the
 * three text outputs, and job.pftrace passing the Perfetto checker with one process per
 * device and one call slice per converted call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs stdarg/stddef/setjmp first: its own block keeps it last. */
#include <cmocka.h>

#include "writers/jobreport/jobreport.h"
#include "writers/jobreport/jobreport_int.h"
#include "writers/perfetto/perfetto.h"

#include "testutil.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Two cores; core 0's TIU busy [0,100) and [1000,1100) ns, core 1's TIU busy [0,50), a GDMA
 * command on core 0 at [500,600), and a sys command (not busy) at [1100,1200). */
static struct tp_profile *two_cores(void)
{
	struct tp_profile *p = tp_profile_new();
	assert_non_null(p);
	p->source = tp_profile_str(p, "test");
	int dev = tp_profile_add_device(p, "dev", 0, 2);
	const struct {
		int core, kind;
		int64_t s, e;
		int sys;
	} cmds[] = {{0, TP_TRACK_TIU, 0, 100, 0},
	            {0, TP_TRACK_TIU, 1000, 1100, 0},
	            {0, TP_TRACK_TIU, 1100, 1200, 1},
	            {1, TP_TRACK_TIU, 0, 50, 0},
	            {0, TP_TRACK_GDMA, 500, 600, 0}};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		int t =
		    tp_profile_find_track(p, dev, cmds[i].core, (enum tp_track_kind)cmds[i].kind);
		if (t < 0)
			t = tp_profile_add_track(p, dev, cmds[i].core,
			                         (enum tp_track_kind)cmds[i].kind, "x", 1000);
		struct tp_slice *s = tp_track_push(p, t);
		s->start_ns = cmds[i].s;
		s->cycles = (uint32_t)(cmds[i].e - cmds[i].s);
		tp_slice_set_end(p, &p->tracks[t], s, cmds[i].e);
		tp_slice_set_kind(p, &p->tracks[t], s, cmds[i].sys ? TP_CMD_SYS : TP_CMD_NORMAL);
	}
	assert_int_equal(tp_profile_finish(p), TP_OK);
	return p;
}

/* two_cores() analysed, with an empty job. */
struct fx {
	struct tp_profile *p;
	struct tp_analysis a;
	struct tp_job j;
};

static void fx_open(struct fx *f)
{
	f->p = two_cores();
	assert_int_equal(tp_analyze(f->p, &f->a), TP_OK);
	tp_job_init(&f->j, "t");
}

static void fx_close(struct fx *f)
{
	tp_job_free(&f->j);
	tp_analysis_free(&f->a);
	tp_profile_free(f->p);
}

static void test_entry_build(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f);
	struct tp_job_entry *e = tp_job_add(&f.j);
	assert_int_equal(tp_job_entry_build(&f.j, e, f.p, &f.a), TP_OK);
	assert_int_equal(e->ok, 1);
	assert_int_equal(e->num_cores, 2);
	assert_int_equal(e->total_ns, 1200);
	assert_int_equal(e->ncores, 2);
	/* Core 0's TIU: two runs (the 900 ns gap is far above 1200/2000), sys not counted. */
	const struct tp_job_engine *x = &e->cores[0].eng[TP_TRACK_TIU];
	assert_int_equal(x->nruns, 2);
	assert_int_equal(x->runs[1].start_ns, 1000);
	assert_int_equal(x->runs[1].dur_ns, 100);
	/* Bin 0 covers [0,12): fully busy; bin 90 covers [1080,1092): busy; bin 95 is the sys
	 * command: idle. */
	assert_int_equal(x->strip[0], 1000);
	assert_int_equal(x->strip[90], 1000);
	assert_int_equal(x->strip[95], 0);
	assert_int_equal(x->strip[50], 0);
	/* TIU busy 200 vs 50 ns: max / mean = 200 / 125. */
	assert_true(e->imbalance > 1.59 && e->imbalance < 1.61);
	assert_int_equal(e->anchor, TP_JOB_ANCHOR_NONE);
	fx_close(&f);
}

/* A call's clock anchor: bmprofile subnets (host wall clock, the earliest start) or a Chrome
 * trace's base; the job is aligned only when every converted call has one of the same kind. */
static void test_anchors(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f);
	struct tp_subnet sn = {.id = 0, .begin_usec = 5000, .end_usec = 6000};
	assert_int_equal(tp_profile_add_subnet(f.p, &sn), 0);
	sn.begin_usec = 4000;
	assert_int_equal(tp_profile_add_subnet(f.p, &sn), 1);
	struct tp_job_entry *e = tp_job_add(&f.j);
	e->device = "dev0";
	assert_int_equal(tp_job_entry_build(&f.j, e, f.p, &f.a), TP_OK);
	assert_int_equal(e->anchor, TP_JOB_ANCHOR_HOST_WALL);
	assert_int_equal(e->anchor_ns, 4000000);
	e = tp_job_add(&f.j);
	e->device = "dev1";
	assert_int_equal(tp_job_entry_build(&f.j, e, f.p, &f.a), TP_OK);
	tp_job_finish(&f.j);
	assert_int_equal(f.j.aligned, 1);
	assert_int_equal(f.j.anchor, TP_JOB_ANCHOR_HOST_WALL);
	/* A third call from a Chrome trace: another clock, so nothing is aligned. */
	assert_int_equal(tp_profile_set_meta(f.p, "chrome_trace.ts_base_ns", "123"), TP_OK);
	e = tp_job_add(&f.j);
	e->device = "trace";
	assert_int_equal(tp_job_entry_build(&f.j, e, f.p, &f.a), TP_OK);
	assert_int_equal(e->anchor, TP_JOB_ANCHOR_TRACE);
	assert_int_equal(e->anchor_ns, 123);
	tp_job_finish(&f.j);
	assert_int_equal(f.j.aligned, 0);
	fx_close(&f);
}

static void test_entry_roundtrip(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f);
	struct tp_job *j = &f.j;
	struct tp_job_entry *e = tp_job_add(j);
	e->name = "x/cdm_profile_data_dev3-1";
	e->device = "x/dev3";
	e->call = 1;
	e->error = "quote \" backslash \\ newline \n </script>";
	assert_int_equal(tp_job_entry_build(j, e, f.p, &f.a), TP_OK);
	struct tp_buf b1, b2;
	tp_buf_init(&b1);
	tp_buf_init(&b2);
	tp_job_entry_json(e, &b1);
	char path[] = "/tmp/jobreport_test_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b1.data, b1.len), (ssize_t)b1.len);
	close(fd);
	struct tp_diag d = {0};
	assert_int_equal(tp_job_entry_read(j, path, &d), TP_OK);
	assert_int_equal(j->n, 2);
	assert_string_equal(j->e[1].error, j->e[0].error);
	assert_int_equal(j->e[1].cores[0].eng[TP_TRACK_TIU].nruns, 2);
	tp_job_entry_json(&j->e[1], &b2);
	assert_int_equal(b1.len, b2.len);
	assert_memory_equal(b1.data, b2.data, b1.len);
	/* A damaged file: the error names the byte. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "{\"tpuprof_job_entry\":1,\"name\":tru}", 34), 34);
	close(fd);
	assert_int_equal(tp_job_entry_read(j, path, &d), TP_EFORMAT);
	assert_non_null(strstr(d.msg, "@0x1e"));
	assert_int_equal(j->n, 2);
	unlink(path);
	tp_buf_free(&b1);
	tp_buf_free(&b2);
	fx_close(&f);
}

static void test_json_reader(void **state)
{
	(void)state;
	struct tp_arena ar;
	tp_arena_init(&ar, 0);
	size_t off;
	const char *why;
	const char *ok = "{\"a\":[1,-2.5e1,\"\\u00e9\\ud83d\\ude00\"],\"b\":{\"c\":null}}";
	const struct tp_jv *v = tp_jr_parse(&ar, ok, strlen(ok), &off, &why);
	assert_non_null(v);
	const struct tp_jv *a = tp_jr_get(v, "a");
	assert_int_equal(a->n, 3);
	assert_int_equal(a->items[0].i, 1);
	assert_true(a->items[1].num == -25.0 && !a->items[1].is_int);
	assert_string_equal(a->items[2].s, "\xc3\xa9\xf0\x9f\x98\x80");
	const char *bad[] = {"[1,]", "{\"a\" 1}", "\"\x01\"", "[1] x", "-x"};
	const size_t at[] = {3, 5, 1, 4, 0};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_null(tp_jr_parse(&ar, bad[i], strlen(bad[i]), &off, &why));
		assert_int_equal(off, at[i]);
	}
	char deep[200];
	memset(deep, '[', sizeof deep);
	assert_null(tp_jr_parse(&ar, deep, sizeof deep, &off, &why));
	assert_string_equal(why, "nested too deep");
	tp_arena_free(&ar);
}

static struct tp_job_entry *add(struct tp_job *j, const char *dev, int64_t call, int64_t total,
                                double imb, int ok)
{
	struct tp_job_entry *e = tp_job_add(j);
	char name[64];
	snprintf(name, sizeof name, "cdm_profile_data_%s-%lld", dev, (long long)call);
	e->name = e->out = tp_job_str(j, name);
	e->device = tp_job_str(j, dev);
	e->call = call;
	e->ok = ok;
	e->total_ns = ok ? total : 0;
	e->imbalance = imb;
	e->ncores = 0;
	e->error = ok ? "" : "no profile data";
	e->exit_code = ok ? 0 : 2;
	return e;
}

static void three_devices(struct tp_job *j)
{
	tp_job_init(j, "job <&> dir");
	add(j, "dev10", 0, 1000, 0, 1);
	add(j, "dev2", 1, 1100, 0, 1);
	add(j, "dev2", 0, 1000, 0, 1);
	add(j, "dev1", 0, 4000, 0, 1);
	add(j, "dev1", 1, 1000, 0, 0);
	for (size_t i = 0; i < j->n; i++)
		if (j->e[i].call == 0) {
			/* imbalance counts only with two cores */
			j->e[i].cores = tp_arena_alloc(&j->arena, 2 * sizeof *j->e[i].cores);
			memset(j->e[i].cores, 0, 2 * sizeof *j->e[i].cores);
			j->e[i].ncores = 2;
			j->e[i].imbalance = j->e[i].total_ns == 1000 ? 1.5 : 1.1;
		}
	tp_job_finish(j);
}

static void test_job_finish(void **state)
{
	(void)state;
	struct tp_job j;
	three_devices(&j);
	/* Natural order: dev1, dev2, dev10; calls in order. */
	assert_string_equal(j.e[0].device, "dev1");
	assert_int_equal(j.e[1].call, 1);
	assert_string_equal(j.e[2].device, "dev2");
	assert_string_equal(j.e[4].device, "dev10");
	assert_int_equal(j.ndevices, 3);
	assert_int_equal(j.nfailed, 1);
	assert_int_equal(j.slowest, 0);
	assert_int_equal(j.imbalanced, 2); /* dev2 call 0 (1.5; dev10 ties, later) */
	/* Call 0: 4000, 1000, 1000: max / mean = 4000 / 2000. */
	assert_true(j.device_imbalance > 1.999 && j.device_imbalance < 2.001);
	assert_int_equal(j.device_imbalance_call, 0);
	/* dev1 call 0 against the median (1000) of its siblings: +300 %. */
	assert_true(j.e[0].sibling_dev > 2.999 && j.e[0].sibling_dev < 3.001);
	/* dev2 call 1 has no sibling device: against dev2's call 0, +10 %. */
	assert_true(j.e[3].sibling_dev > 0.099 && j.e[3].sibling_dev < 0.101);
	assert_int_equal(j.aligned, 0);
	tp_job_free(&j);
}

/* j's job_summary.json (into b, emptied first) parsed in ar (initialised here). */
static const struct tp_jv *summary_json(struct tp_job *j, struct tp_buf *b, struct tp_arena *ar)
{
	b->len = 0;
	tp_job_summary_json(j, b);
	tp_arena_init(ar, 0);
	size_t off;
	const char *why;
	const struct tp_jv *v = tp_jr_parse(ar, b->data, b->len, &off, &why);
	assert_non_null(v);
	return v;
}

static void test_outputs_escape(void **state)
{
	(void)state;
	struct tp_job j;
	three_devices(&j);
	struct tp_job_entry *e = &j.e[1]; /* the failed one */
	e->error = "</script><img src=x onerror=alert(1)>\x1b[31m";
	struct tp_buf b;
	tp_buf_init(&b);
	tp_job_page(&j, &b);
	assert_non_null(b.data);
	assert_null(strstr(b.data, "</script><img")); /* "<img" alone is inert in a JSON block */
	assert_null(strstr(b.data, "\x1b"));
	assert_non_null(strstr(b.data, "<title>tpuprof job: job &lt;&amp;&gt; dir</title>"));
	/* One </script> per script block, none from the data. */
	size_t n = 0;
	for (const char *s = b.data; (s = strstr(s, "</script>")) != NULL; s++)
		n++;
	assert_int_equal(n, 2);
	b.len = 0;
	tp_job_summary_text(&j, &b);
	tp_buf_putc(&b, 0);
	assert_null(strchr(b.data, '\x1b'));
	assert_non_null(strstr(b.data, "[slowest]"));
	assert_non_null(strstr(b.data, "Failed (1)"));
	struct tp_arena ar;
	const struct tp_jv *v = summary_json(&j, &b, &ar);
	assert_int_equal(tp_jr_int(v, "failed", -1), 1);
	const struct tp_jv *calls = tp_jr_get(v, "calls");
	assert_int_equal(calls->n, 5);
	assert_string_equal(tp_jr_str(&calls->items[1], "error", ""), e->error);
	tp_arena_free(&ar);
	tp_buf_free(&b);
	tp_job_free(&j);
}

struct counts {
	int calls, busy;
};

static int visit(void *ctx, const struct tp_perfetto_event *e)
{
	struct counts *c = ctx;
	if (e->type == 1 && e->category && e->category_len == 4 && !memcmp(e->category, "call", 4))
		c->calls++;
	/* Engine slices carry their engine as category and "N commands" as name. */
	char name[64] = "";
	if (e->name && e->name_len < sizeof name)
		memcpy(name, e->name, e->name_len);
	if (e->type == 1 && strstr(name, " command"))
		c->busy++;
	return TP_OK;
}

/* More calls with siblings than the outlier list holds: the list keeps the largest. */
static void test_many_outliers(void **state)
{
	(void)state;
	struct tp_job j;
	tp_job_init(&j, "many");
	for (int d = 0; d < 6; d++)
		for (int c = 0; c < 4; c++) {
			char dev[16];
			snprintf(dev, sizeof dev, "dev%d", d);
			add(&j, dev, c, 1000 + 37 * d * (c + 1), 0, 1);
		}
	tp_job_finish(&j);
	struct tp_buf b;
	tp_buf_init(&b);
	struct tp_arena ar;
	const struct tp_jv *v = summary_json(&j, &b, &ar);
	const struct tp_jv *o = tp_jr_get(v, "outliers");
	assert_int_equal(o->n, 10);
	for (size_t i = 1; i < o->n; i++) {
		double prev = tp_jr_num(&o->items[i - 1], "sibling_dev", 0);
		double cur = tp_jr_num(&o->items[i], "sibling_dev", 0);
		assert_true(fabs(prev) >= fabs(cur));
	}
	/* dev5 call 3 is the farthest from its siblings. */
	assert_string_equal(tp_jr_str(&o->items[0], "device", ""), "dev5");
	assert_int_equal(tp_jr_int(&o->items[0], "call", -1), 3);
	tp_arena_free(&ar);
	tp_buf_free(&b);
	tp_job_free(&j);
}

static void test_trace(void **state)
{
	(void)state;
	struct fx f;
	fx_open(&f);
	struct tp_profile *p = f.p;
	struct tp_analysis a = f.a;
	struct tp_job j;
	three_devices(&j);
	for (size_t i = 0; i < j.n; i++)
		if (j.e[i].ok) {
			int64_t call = j.e[i].call;
			assert_int_equal(tp_job_entry_build(&j, &j.e[i], p, &a), TP_OK);
			j.e[i].call = call;
		}
	tp_job_finish(&j);
	char dir[] = "/tmp/jobreport_trace_XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct tp_diag d = {0};
	assert_int_equal(tp_job_report_write(&j, dir, &d), TP_OK);
	char *path = tp_path_join(dir, "job.pftrace");
	struct tp_perfetto_check_report r;
	struct counts c = {0};
	assert_int_equal(tp_perfetto_check_visit(path, &r, visit, &c, &d), TP_OK);
	assert_int_equal(r.processes, 3);
	assert_int_equal(c.calls, 4);    /* the failed call has no slice */
	assert_int_equal(c.busy, 4 * 4); /* per call: 2 TIU runs core 0, 1 core 1, 1 GDMA */
	static const char *const files[] = {"job.pftrace", "job_summary.txt", "job_summary.json",
	                                    "index.html"};
	for (size_t i = 0; i < 4; i++) {
		char *fp = tp_path_join(dir, files[i]);
		assert_int_equal(unlink(fp), 0);
		tp_free(fp);
	}
	rmdir(dir);
	tp_free(path);
	tp_job_free(&j);
	fx_close(&f);
}

#include "tp_test_main.h"
