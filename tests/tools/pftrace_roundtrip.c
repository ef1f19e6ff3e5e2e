/*
 * pftrace_roundtrip.c — TEST TOOL: does the Perfetto trace show what the model holds?
 *
 * For each INPUT (a bmprofile or cdm dump directory, or `fixture` =
 * tests/fixtures/c/sink_fixture.h) it writes perfetto.pftrace with the writer's options, decodes it
 * with the checker's visitor (tp_perfetto_check_visit: interned strings resolved, incremental
 * timestamps summed, BEGIN and END paired per track) and compares, event by event in file order,
 * with what the sink driver delivers from the model: every slice's track, begin, duration, name,
 * category, every argument (key, the type trace_processor stores it as, value) in order, the flows
 * it starts and ends; every counter sample's track, time and value. The comparison is on a
 * canonical form: an int or uint argument that fits int64 is trace_processor's 'int' (the writer's
 * int_value), larger ones 'uint'; reals compare bit for bit; strings after the UTF-8 repair
 * the writer applies (tp_text_put). Prints per input: slices, counters, args, flows compared,
 * and for the first differences both sides in full.
 *
 * Usage: pftrace_roundtrip [--full] [--plain] [--jobs N] [--detail none|auto|full]
 *                          [--out FILE] INPUT...
 * Exit 0 = every input matches, 1 = a difference or an error, 77 = every input was absent
 * (printed as SKIPPED). Memory: 24 bytes per event of the largest input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures/c/sink_fixture.h"
#include "readers/sophgo/sophgo.h"
#include "writers/perfetto/perfetto.h"

/* One event reduced to a hash of its canonical form (duration excluded) and its duration. */
struct rec {
	uint64_t h;
	int64_t dur;          /* slices; -1 = counter */
	uint64_t nargs_flows; /* args << 32 | flows: for the totals */
};

struct canon {
	uint64_t h;
	struct tp_buf *txt; /* non-NULL: also a readable rendering */
};

static void c_bytes(struct canon *c, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		c->h = (c->h ^ b[i]) * 0x100000001b3ull;
}

static void c_u64(struct canon *c, const char *label, uint64_t v)
{
	c_bytes(c, &v, sizeof v);
	if (c->txt)
		tp_buf_printf(c->txt, " %s=%llu", label, (unsigned long long)v);
}

static void c_str(struct canon *c, const char *label, const char *s, size_t n)
{
	uint64_t len = n;
	c_bytes(c, &len, sizeof len);
	c_bytes(c, s, n);
	if (c->txt)
		tp_buf_printf(c->txt, " %s=\"%.*s\"", label, (int)(n > 200 ? 200 : n), s);
}

static void c_arg(struct canon *c, const char *key, size_t kn, int type, uint64_t v, const char *s,
                  size_t sn)
{
	uint64_t len = kn; /* (an empty key: the caller rendered it) */
	c_bytes(c, &len, sizeof len);
	c_bytes(c, key, kn);
	unsigned char t = (unsigned char)type;
	c_bytes(c, &t, 1);
	if (type == 's') {
		c_str(c, "s", s, sn);
	} else {
		c_bytes(c, &v, sizeof v);
		if (c->txt) {
			if (type == 'd') {
				double d;
				memcpy(&d, &v, sizeof d);
				tp_buf_printf(c->txt, " %c=%.17g", type, d);
			} else {
				tp_buf_printf(c->txt, " %c=%llu", type, (unsigned long long)v);
			}
		}
	}
}

struct side {
	struct rec *r;
	size_t n, cap;
	int oom;
	size_t describe; /* index to render into txt, or SIZE_MAX */
	struct tp_buf txt;
	/* decoder: open slices per track uuid (uuids are small: an array of stacks) */
	size_t **open;
	size_t *depth, *cap_open;
	size_t ntracks;
};

static struct rec *push(struct side *sd)
{
	struct rec *nr = tp_grow(sd->r, sizeof *sd->r, sd->n + 1, &sd->cap);
	if (!nr) {
		sd->oom = 1;
		return NULL;
	}
	sd->r = nr;
	memset(&sd->r[sd->n], 0, sizeof *sd->r);
	return &sd->r[sd->n++];
}

/* ---- model side: what the sink driver delivers ---- */

/* The string as the writer puts it in the file (invalid UTF-8 repaired). */
static void c_model_str(struct canon *c, const char *label, const char *s)
{
	s = s ? s : "";
	size_t n = strlen(s);
	if (tp_text_is_safe(s, n, TP_TEXT_UTF8)) {
		c_str(c, label, s, n);
		return;
	}
	struct tp_buf t;
	tp_buf_init(&t);
	tp_text_put(&t, s, n, TP_TEXT_UTF8, 0, 0);
	c_str(c, label, t.data ? t.data : "", t.len);
	tp_buf_free(&t);
}

static int m_slice(void *ctx, const struct tp_sink_slice *s)
{
	struct side *sd = ctx;
	struct canon c = {0xcbf29ce484222325ull, NULL};
	if (sd->n == sd->describe)
		c.txt = &sd->txt;
	c_u64(&c, "SLICE track", s->track->uuid);
	c_u64(&c, "ts", (uint64_t)s->ts_ns);
	c_model_str(&c, "name", s->name);
	c_model_str(&c, "cat", s->category);
	for (size_t i = 0; i < s->num_args; i++) {
		const struct tp_sink_arg *a = &s->args[i];
		c_model_str(&c, "key", a->key); /* hashed like c_arg's key */
		switch (a->type) {
		case TP_ARG_INT:
			c_arg(&c, "", 0, 'i', (uint64_t)a->i, NULL, 0);
			break;
		case TP_ARG_UINT:
			c_arg(&c, "", 0, a->u <= (uint64_t)INT64_MAX ? 'i' : 'u', a->u, NULL, 0);
			break;
		case TP_ARG_REAL: {
			uint64_t v;
			memcpy(&v, &a->d, sizeof v);
			c_arg(&c, "", 0, 'd', v, NULL, 0);
			break;
		}
		default: {
			const char *str = a->s ? a->s : "";
			struct tp_buf t;
			tp_buf_init(&t);
			if (!tp_text_is_safe(str, strlen(str), TP_TEXT_UTF8)) {
				tp_text_put(&t, str, strlen(str), TP_TEXT_UTF8, 0, 0);
				c_arg(&c, "", 0, 's', 0, t.data ? t.data : "", t.len);
			} else {
				c_arg(&c, "", 0, 's', 0, str, strlen(str));
			}
			tp_buf_free(&t);
			break;
		}
		}
	}
	for (size_t i = 0; i < s->num_flows_out; i++)
		c_u64(&c, "flow_out", s->flows_out[i]);
	if (s->flow_in)
		c_u64(&c, "flow_in", s->flow_in);
	struct rec *r = push(sd);
	if (!r)
		return TP_ENOMEM;
	r->h = c.h;
	r->dur = s->dur_ns;
	r->nargs_flows = (uint64_t)s->num_args << 32 | (s->num_flows_out + (s->flow_in != 0));
	if (c.txt)
		tp_buf_printf(c.txt, " dur=%lld", (long long)s->dur_ns);
	return TP_OK;
}

static int m_counter(void *ctx, const struct tp_sink_track *t, int64_t ts, double v)
{
	struct side *sd = ctx;
	struct canon c = {0xcbf29ce484222325ull, NULL};
	if (sd->n == sd->describe)
		c.txt = &sd->txt;
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	c_u64(&c, "COUNTER track", t->uuid);
	c_u64(&c, "ts", (uint64_t)ts);
	c_u64(&c, "value_bits", bits);
	struct rec *r = push(sd);
	if (!r)
		return TP_ENOMEM;
	r->h = c.h;
	r->dur = -1;
	return TP_OK;
}

/* ---- file side: the checker's decoded events ---- */

static int d_event(void *ctx, const struct tp_perfetto_event *e)
{
	struct side *sd = ctx;
	if (e->type == 4) {
		if (!e->has_double)
			return TP_EFORMAT; /* tpuprof writes double counters only */
		return m_counter(ctx, &(struct tp_sink_track){.uuid = e->track_uuid}, e->ts,
		                 e->counter_value);
	}
	if (e->type != 1 && e->type != 2)
		return TP_EFORMAT; /* tpuprof writes no instants */
	if (e->track_uuid >= sd->ntracks) {
		size_t n = (size_t)e->track_uuid + 1;
		size_t **o = realloc(sd->open, n * sizeof *o);
		size_t *dp = realloc(sd->depth, n * sizeof *dp);
		size_t *cp = realloc(sd->cap_open, n * sizeof *cp);
		if (o)
			sd->open = o;
		if (dp)
			sd->depth = dp;
		if (cp)
			sd->cap_open = cp;
		if (!o || !dp || !cp)
			return TP_ENOMEM;
		for (size_t i = sd->ntracks; i < n; i++) {
			sd->open[i] = NULL;
			sd->depth[i] = sd->cap_open[i] = 0;
		}
		sd->ntracks = n;
	}
	size_t u = (size_t)e->track_uuid;
	if (e->type == 2) {
		if (!sd->depth[u])
			return TP_EFORMAT; /* the checker already refuses this */
		struct rec *r = &sd->r[sd->open[u][--sd->depth[u]]];
		r->dur = e->ts - r->dur; /* dur held the begin */
		if (sd->open[u][sd->depth[u]] == sd->describe)
			tp_buf_printf(&sd->txt, " dur=%lld", (long long)r->dur);
		return TP_OK;
	}
	struct canon c = {0xcbf29ce484222325ull, NULL};
	if (sd->n == sd->describe)
		c.txt = &sd->txt;
	c_u64(&c, "SLICE track", e->track_uuid);
	c_u64(&c, "ts", (uint64_t)e->ts);
	c_str(&c, "name", e->name ? e->name : "", e->name ? e->name_len : 0);
	c_str(&c, "cat", e->category ? e->category : "", e->category ? e->category_len : 0);
	for (size_t i = 0; i < e->num_args; i++) {
		const struct tp_perfetto_arg *a = &e->args[i];
		c_str(&c, "key", a->key ? a->key : "", a->key ? a->key_len : 0);
		c_arg(&c, "", 0, a->type, a->v, a->s, a->n);
	}
	for (size_t i = 0; i < e->num_flows; i++)
		c_u64(&c, "flow_out", e->flows[i]);
	for (size_t i = 0; i < e->num_term_flows; i++)
		c_u64(&c, "flow_in", e->term_flows[i]);
	struct rec *r = push(sd);
	if (!r)
		return TP_ENOMEM;
	r->h = c.h;
	r->dur = e->ts; /* the begin, until the END */
	r->nargs_flows = (uint64_t)e->num_args << 32 | (e->num_flows + e->num_term_flows);
	if (sd->depth[u] == sd->cap_open[u]) {
		size_t cap = sd->cap_open[u];
		size_t *o = tp_grow(sd->open[u], sizeof *o, sd->depth[u] + 1, &cap);
		if (!o)
			return TP_ENOMEM;
		sd->open[u] = o;
		sd->cap_open[u] = cap;
	}
	sd->open[u][sd->depth[u]++] = sd->n - 1;
	return TP_OK;
}

static void side_free(struct side *sd)
{
	for (size_t i = 0; i < sd->ntracks; i++)
		tp_free(sd->open[i]);
	free(sd->open);
	free(sd->depth);
	free(sd->cap_open);
	tp_free(sd->r);
	tp_buf_free(&sd->txt);
	memset(sd, 0, sizeof *sd);
}

static int run_model(const struct tp_profile *p, int full, struct side *sd, struct tp_diag *d)
{
	struct tp_sink sink = {sd, NULL, NULL, m_slice, m_counter, NULL, NULL, full};
	int st = tp_sink_drive(p, NULL, &sink, d);
	return st ? st : sd->oom ? TP_ENOMEM : TP_OK;
}

static int run_file(const char *path, struct side *sd, struct tp_perfetto_check_report *r,
                    struct tp_diag *d)
{
	int st = tp_perfetto_check_visit(path, r, d_event, sd, d);
	if (st && !d->msg[0])
		tp_diag_set(d, st, "%s: decoded events do not fit the writer's form", path);
	return st;
}

struct opts {
	int full, plain, jobs, detail;
	const char *out;
};

static int load(const char *in, const struct opts *o, struct tp_profile **p, struct tp_diag *d)
{
	if (!strcmp(in, "fixture")) {
		*p = fx_profile();
		return *p ? TP_OK : TP_ENOMEM;
	}
	struct tp_bmprofile_opts bo = {0};
	bo.detail = o->detail;
	if (tp_cdm_probe(in))
		return tp_cdm_read(in, &bo, p, d);
	return tp_bmprofile_read(in, &bo, p, d);
}

/* 0 = match, 1 = difference or error. */
static int one(const char *in, const struct opts *o)
{
	struct tp_diag d = {0};
	struct tp_profile *p = NULL;
	int st = load(in, o, &p, &d);
	if (st) {
		fprintf(stderr, "%s: %s\n", in, d.msg);
		return 1;
	}
	char tmpl[] = "/tmp/pftrace_roundtrip.XXXXXX";
	char *dir = NULL, *path;
	if (o->out) {
		path = tp_path_join(".", o->out);
	} else {
		dir = mkdtemp(tmpl);
		path = dir ? tp_path_join(dir, "perfetto.pftrace") : NULL;
	}
	int bad = 1;
	struct side m = {0}, f = {0};
	m.describe = f.describe = SIZE_MAX;
	struct tp_perfetto_check_report r;
	struct tp_perfetto_opts po = {o->plain, 0, o->full, o->jobs};
	if (!path) {
		fprintf(stderr, "%s: out of memory\n", in);
		goto out;
	}
	if ((st = tp_perfetto_write(p, NULL, path, &po, &d)) ||
	    (st = run_model(p, o->full, &m, &d)) || (st = run_file(path, &f, &r, &d))) {
		fprintf(stderr, "%s: %s\n", in, d.msg[0] ? d.msg : tp_strerror(st));
		goto out;
	}
	size_t n = m.n < f.n ? m.n : f.n, diffs = 0;
	uint64_t slices = 0, counters = 0, args = 0, flows = 0;
	for (size_t i = 0; i < n; i++) {
		if (m.r[i].h == f.r[i].h && m.r[i].dur == f.r[i].dur) {
			slices += m.r[i].dur >= 0;
			counters += m.r[i].dur < 0;
			args += m.r[i].nargs_flows >> 32;
			flows += m.r[i].nargs_flows & 0xffffffffu;
			continue;
		}
		if (diffs++ < 3) {
			/* Render both sides of event i (a second, describing pass). */
			struct side m2 = {0}, f2 = {0};
			m2.describe = f2.describe = i;
			struct tp_perfetto_check_report r2;
			struct tp_diag d2 = {0};
			run_model(p, o->full, &m2, &d2);
			run_file(path, &f2, &r2, &d2);
			printf("%s: event %zu differs\n  model:%.*s\n  file: %.*s\n", in, i,
			       (int)m2.txt.len, m2.txt.data ? m2.txt.data : "", (int)f2.txt.len,
			       f2.txt.data ? f2.txt.data : "");
			side_free(&m2);
			side_free(&f2);
		}
	}
	if (m.n != f.n) {
		printf("%s: the model delivers %zu events, the file holds %zu\n", in, m.n, f.n);
		diffs++;
	}
	printf("%s (%s args%s): %zu events compared: %llu slices, %llu counter samples, %llu args, "
	       "%llu flow ends; %zu differ\n",
	       in, o->full ? "full" : "compact", o->plain ? ", plain" : "", n,
	       (unsigned long long)slices, (unsigned long long)counters, (unsigned long long)args,
	       (unsigned long long)flows, diffs);
	bad = diffs != 0 || n == 0;
out:
	side_free(&m);
	side_free(&f);
	if (path && !o->out)
		unlink(path);
	if (dir)
		rmdir(dir);
	tp_free(path);
	tp_profile_free(p);
	return bad;
}

int main(int argc, char **argv)
{
	struct opts o = {0, 0, 0, TP_BMPROFILE_DETAIL_AUTO, NULL};
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--full")) {
			o.full = 1;
		} else if (!strcmp(argv[i], "--plain")) {
			o.plain = 1;
		} else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
			o.jobs = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			o.out = argv[++i];
		} else if (!strcmp(argv[i], "--detail") && i + 1 < argc) {
			i++;
			o.detail = !strcmp(argv[i], "none")   ? TP_BMPROFILE_DETAIL_OFF
			           : !strcmp(argv[i], "full") ? TP_BMPROFILE_DETAIL_ON
			                                      : TP_BMPROFILE_DETAIL_AUTO;
		} else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 1;
		}
	}
	if (i == argc) {
		fprintf(stderr,
		        "usage: %s [--full] [--plain] [--jobs N] [--detail none|auto|full] "
		        "[--out FILE] INPUT...\n",
		        argv[0]);
		return 1;
	}
	int failed = 0, ran = 0;
	for (; i < argc; i++) {
		struct stat sb;
		if (strcmp(argv[i], "fixture") && stat(argv[i], &sb)) {
			printf("SKIPPED: %s is absent\n", argv[i]);
			continue;
		}
		ran++;
		failed |= one(argv[i], &o);
	}
	if (!ran)
		return 77;
	return failed;
}
