/*
 * event.c — model building for the Chrome-trace reader: interns an event's strings (through
 * small caches of recent ids), builds its argument set, finds or makes its device and track,
 * and turns each phase into slices, open B/b events, counter samples or flow points. Owns the
 * u64 -> int32 maps that key devices, tracks and counter series (freed by read.c's run).
 */
#include "readers/traceread/traceread_int.h"

#include <stdlib.h>

/* ---------------------------------------------------------------------------------------- */
/* u64 -> int32 open-addressing map                                                         */
/* ---------------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

int trace_map_get(const struct trace_map *m, uint64_t key, int32_t *val)
{
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1;
	for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
		if (!m->e[i].val1)
			return 0;
		if (m->e[i].key == key) {
			*val = (int32_t)(m->e[i].val1 - 1);
			return 1;
		}
	}
}

static int ent_used(const void *e)
{
	return ((const struct trace_map_ent *)e)->val1 != 0;
}

static size_t ent_hash(const void *e, size_t cap)
{
	(void)cap;
	return mix(((const struct trace_map_ent *)e)->key);
}

int trace_map_put(struct trace_map *m, uint64_t key, int32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct trace_map_ent *e =
		    tp_oa_grow(m->e, &m->cap, 64, sizeof *e, ent_used, ent_hash);
		if (!e)
			return TP_ENOMEM;
		m->e = e;
	}
	size_t mask = m->cap - 1, i = mix(key) & mask;
	while (m->e[i].val1 && m->e[i].key != key)
		i = (i + 1) & mask;
	if (!m->e[i].val1)
		m->n++;
	m->e[i].key = key;
	m->e[i].val1 = (uint32_t)val + 1;
	return TP_OK;
}

void trace_map_free(struct trace_map *m)
{
	tp_free(m->e);
	memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------------------------------- */
/* Strings                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Interns raw bytes through a small cache: pid, tid, name and cat repeat from event to event,
 * so most lookups end in one memcmp instead of a hash-table probe. */
static uint32_t intern_raw(struct trace_rd *r, const char *p, size_t n)
{
	/* Hash eight bytes at a time (names of GPU kernels run to hundreds of bytes). */
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	size_t slot = (size_t)h & 511;
	if (r->icache[slot].h == h && r->icache[slot].n == n && r->icache[slot].id &&
	    memcmp(r->icache[slot].s, p, n) == 0)
		return r->icache[slot].id;
	uint32_t id = tp_profile_strn(r->p, p, n);
	if (n < UINT32_MAX) {
		r->icache[slot].h = h;
		r->icache[slot].n = (uint32_t)n;
		r->icache[slot].id = id;
		r->icache[slot].s = tp_str(r->p, id);
	}
	return id;
}

/* Interns a value as a string: strings decoded, anything else as its raw text. 0 = "" also
 * on error (callers check r->p->oom / the decode status separately). */
static int intern_val(struct trace_rd *r, const struct json_val *v, uint32_t *id)
{
	if (v->kind == 's' && v->esc) {
		int st = trace_decode_str(r, v);
		if (st)
			return st;
		*id = tp_profile_strn(r->p, r->tmp.data, r->tmp.len);
		return 0;
	}
	*id = v->kind ? intern_raw(r, v->p, v->n) : 0;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Model building                                                                           */
/* ---------------------------------------------------------------------------------------- */

struct args_ctx {
	struct trace_rd *r;
	size_t n;
	int st;
};

/* A JSON integer of at most 18 digits ("-12", "7") without the general path's work; -1
 * (use the general path) for anything else. */
static int int_plain(const char *p, size_t n, int64_t *out)
{
	size_t i = n && p[0] == '-';
	if (i == n || n - i > 18)
		return -1;
	uint64_t v = 0;
	for (size_t k = i; k < n; k++) {
		unsigned d = (unsigned)(p[k] - '0');
		if (d > 9)
			return -1;
		v = v * 10 + d;
	}
	*out = i ? -(int64_t)v : (int64_t)v;
	return 0;
}

static int arg_member(void *ctx, const struct json_val *k, const struct json_val *v)
{
	struct args_ctx *a = ctx;
	struct trace_rd *r = a->r;
	if (a->n >= MAX_ARGS) {
		r->args_dropped++;
		return 0;
	}
	uint32_t key = 0;
	/* Events of one kind repeat their arg keys in the same order: compare with the key the
	 * previous event had at this position before hashing. */
	size_t pos = a->n;
	if (pos < 16 && !k->esc && r->kcache[pos].s && r->kcache[pos].n == k->n &&
	    memcmp(r->kcache[pos].s, k->p, k->n) == 0)
		key = r->kcache[pos].id;
	else {
		if (intern_val(r, k, &key) || !key)
			return r->p->oom ? 1 : 0;
		if (pos < 16 && !k->esc && k->n < UINT32_MAX) {
			r->kcache[pos].s = tp_str(r->p, key);
			r->kcache[pos].n = (uint32_t)k->n;
			r->kcache[pos].id = key;
		}
	}
	struct tp_arg arg = {.key = key};
	if (v->kind == 's') {
		uint32_t id = 0;
		int st = intern_val(r, v, &id);
		if (st == -2)
			return 1;
		if (st)
			return 0; /* a bad escape in one value: the value is left out */
		arg.type = TP_ARG_STR;
		arg.v.s = id;
	} else if (v->kind == 'n' && int_plain(v->p, v->n, &arg.v.i) == 0) {
		arg.type = TP_ARG_INT;
	} else if (v->kind == 'n') {
		int integral = !memchr(v->p, '.', v->n) && !memchr(v->p, 'e', v->n) &&
		               !memchr(v->p, 'E', v->n);
		if (integral && tp_parse_i64(v->p, v->n, &arg.v.i) == 0)
			arg.type = TP_ARG_INT;
		else if (integral && tp_parse_u64(v->p, v->n, &arg.v.u) == 0)
			arg.type = TP_ARG_UINT;
		else if (trace_val_real(v, &arg.v.d) == 0)
			arg.type = TP_ARG_REAL;
		else
			return 0;
	} else if (v->kind == 'l') {
		if (v->p[0] != 't' && v->p[0] != 'f')
			return 0;
		arg.type = TP_ARG_INT;
		arg.v.i = v->p[0] == 't';
	} else {
		/* Nested objects / arrays: their JSON text, shortened, as a string (bytes that are
		 * not UTF-8 replaced, NULs dropped). */
		size_t n = v->n < MAX_RAW_ARG ? v->n : MAX_RAW_ARG;
		struct tp_buf *b = &r->tmp;
		size_t ascii = 0;
		while (ascii < n && (unsigned char)v->p[ascii] - 1u < 0x7fu)
			ascii++;
		if (ascii == v->n) {
			/* Short and plain ASCII (the usual case): interned as it stands. */
			arg.type = TP_ARG_STR;
			arg.v.s = intern_raw(r, v->p, v->n);
			a->n++;
			return tp_args_add(r->p, &arg) == TP_OK && !r->p->oom ? 0 : 1;
		}
		b->len = 0;
		for (size_t q = 0; q < n;) {
			size_t run = 0;
			while (q + run < n && (unsigned char)v->p[q + run] - 1u < 0x7fu)
				run++;
			if (run) {
				tp_buf_put(b, v->p + q, run);
				q += run;
				continue;
			}
			int32_t cp;
			size_t l = tp_utf8_decode((const uint8_t *)v->p + q, n - q, &cp);
			if (cp < 0) {
				if (v->p[q])
					tp_buf_utf8(b, 0xFFFD);
				q++;
				continue;
			}
			tp_buf_put(b, v->p + q, l);
			q += l;
		}
		if (v->n > MAX_RAW_ARG)
			tp_buf_puts(b, "...");
		if (b->oom)
			return 1;
		arg.type = TP_ARG_STR;
		arg.v.s = intern_raw(r, b->data ? b->data : "", b->len);
	}
	a->n++;
	return tp_args_add(r->p, &arg) == TP_OK && !r->p->oom ? 0 : 1; /* 1: out of memory */
}

/* The first occurrence of "\"op_name\"" in p[0..n), or NULL. Searched by its '_' (rare in
 * args, unlike the quote it starts with). */
static const char *find_op_name(const char *p, size_t n)
{
	static const char needle[] = "\"op_name\"";
	const char *e = p + n, *q = p + 3;
	while (q < e) {
		q = memchr(q, '_', (size_t)(e - q));
		if (!q)
			return NULL;
		if ((size_t)(e - (q - 3)) >= 9 && memcmp(q - 3, needle, 9) == 0)
			return q - 3;
		q++;
	}
	return NULL;
}

/* Builds the argument set of an event: "cat", "op_type", then the event's args. */
static int make_args(struct trace_rd *r, struct json_cur *j, const struct trace_ev *e,
                     uint32_t name, uint32_t cat, int with_optype, uint32_t *out)
{
	tp_args_begin(r->p);
	if (cat) {
		struct tp_arg a = {.key = r->k_cat, .type = TP_ARG_STR, .v.s = cat};
		tp_args_add(r->p, &a);
	}
	if (with_optype) {
		/* ONNX Runtime names node events after the node and gives the type as op_name. */
		uint32_t ty = name;
		if (e->args.kind == 'o') {
			const char *end = e->args.p + e->args.n;
			const char *hit = find_op_name(e->args.p, e->args.n);
			if (hit) {
				hit += 9;
				struct json_cur sub = {hit, end, NULL, NULL, 0, 0};
				json_ws(&sub);
				if (sub.p < sub.e && *sub.p == ':') {
					sub.p++;
					struct json_val v;
					if (!trace_json_value(&sub, &v, 1) && v.kind == 's')
						intern_val(r, &v, &ty);
				}
			}
		}
		struct tp_arg a = {.key = r->k_optype, .type = TP_ARG_STR, .v.s = ty};
		tp_args_add(r->p, &a);
	}
	if (e->args.kind == 'o') {
		struct args_ctx a = {r, 0, 0};
		int st = trace_json_members(j, &e->args, arg_member, &a);
		if (st > 0)
			return TP_ENOMEM;
		if (st)
			return TP_EFORMAT;
	}
	*out = tp_args_end(r->p);
	return r->p->oom ? TP_ENOMEM : TP_OK;
}

static int get_device(struct trace_rd *r, uint32_t pid)
{
	int32_t v;
	if (trace_map_get(&r->devices, pid, &v))
		return v;
	char name[96];
	const char *ps = tp_str(r->p, pid);
	snprintf(name, sizeof name, "pid %.80s", ps);
	int64_t num = 0;
	int32_t id = (int32_t)r->p->num_devices;
	int numeric =
	    tp_parse_i64(ps, strlen(ps), &num) == 0 && num >= INT32_MIN && num <= INT32_MAX;
	if (numeric)
		id = (int32_t)num;
	int dev = tp_profile_add_device(r->p, name, id, 0);
	if (dev < 0 || trace_map_put(&r->devices, pid, dev))
		return -1;
	if (!numeric) /* the position stands in for the id: keep the text for profile.db */
		r->p->devices[dev].id_text = pid;
	return dev;
}

/* The host track keyed (pid, sid) in m, made on first use on pid's device and named
 * "<prefix> <sid's string>" (at most `max` bytes of it; *made set to 1). -1 out of memory. */
static int host_track(struct trace_rd *r, struct trace_map *m, uint32_t pid, uint32_t sid,
                      const char *prefix, int max, int *made)
{
	int32_t v;
	uint64_t key = (uint64_t)pid << 32 | sid;
	if (trace_map_get(m, key, &v))
		return v;
	int dev = get_device(r, pid);
	if (dev < 0)
		return -1;
	char name[128];
	snprintf(name, sizeof name, "%s %.*s", prefix, max, tp_str(r->p, sid));
	int tr = tp_profile_add_track(r->p, dev, -1, TP_TRACK_HOST, name, 0);
	if (tr < 0 || trace_map_put(m, key, tr))
		return -1;
	*made = 1;
	return tr;
}

static int get_track(struct trace_rd *r, uint32_t pid, uint32_t tid)
{
	int made = 0;
	int tr = host_track(r, &r->tracks, pid, tid, "tid", 80, &made);
	if (tr >= 0 && made) {
		const char *ts = tp_str(r->p, tid);
		int64_t num;
		if (tp_parse_i64(ts, strlen(ts), &num) == 0)
			r->p->tracks[tr].tid = num;
		else
			r->p->tracks[tr].tid_text = tid;
	}
	return tr;
}

static int get_async_track(struct trace_rd *r, uint32_t pid, uint32_t cat)
{
	int made = 0;
	return host_track(r, &r->async_tracks, pid, cat, "async", 100, &made);
}

int trace_add_slice(struct trace_rd *r, int track, int64_t ts, int64_t end, uint32_t name,
                    uint32_t type, uint32_t args)
{
	struct tp_slice *s = tp_track_push(r->p, track);
	if (!s)
		return TP_ENOMEM;
	s->start_ns = ts;
	tp_slice_set_end(r->p, &r->p->tracks[track], s, end < ts ? ts : end);
	tp_slice_set_label(r->p, &r->p->tracks[track], s,
	                   &(struct tp_label){.name = name, .type = type});
	s->args = args;
	return TP_OK;
}

static void see_ts(struct trace_rd *r, int64_t ts)
{
	if (!r->any_ts || ts < r->min_ns)
		r->min_ns = ts;
	if (!r->any_ts || ts > r->max_ns)
		r->max_ns = ts;
	r->any_ts = 1;
}

static int push_open(struct trace_rd *r, int track, const struct open_ev *o)
{
	size_t t = (size_t)track;
	if (t >= r->nstk) {
		struct stack *n = tp_grow(r->stk, sizeof *n, t + 1, &r->capstk);
		if (!n)
			return TP_ENOMEM;
		r->stk = n;
		memset(n + r->nstk, 0, (t + 1 - r->nstk) * sizeof *n);
		r->nstk = t + 1;
	}
	struct stack *k = &r->stk[t];
	struct open_ev *v = tp_grow(k->v, sizeof *v, k->n + 1, &k->cap);
	if (!v)
		return TP_ENOMEM;
	k->v = v;
	v[k->n++] = *o;
	return TP_OK;
}

/* args.name of an M event. */
static int name_member(void *ctx, const struct json_val *k, const struct json_val *v)
{
	if (json_key_is(k, "name"))
		*(struct json_val *)ctx = *v;
	return 0;
}

struct counter_ctx {
	struct trace_rd *r;
	uint32_t pid, name;
	int dev;
};

/* One member of a C event's args: a sample of the series "<name>" or "<name> <key>". */
static int counter_member(void *ctx, const struct json_val *k, const struct json_val *v)
{
	struct counter_ctx *c = ctx;
	struct trace_rd *r = c->r;
	double x;
	uint32_t kid = 0;
	if (trace_val_real(v, &x) || intern_val(r, k, &kid))
		return 0;
	char sname[256];
	const char *nm = tp_str(r->p, c->name), *ks = tp_str(r->p, kid);
	if (strcmp(nm, ks) == 0 || !ks[0])
		snprintf(sname, sizeof sname, "%s", nm);
	else
		snprintf(sname, sizeof sname, "%s %s", nm, ks);
	uint32_t sid = tp_profile_str(r->p, sname);
	int32_t ci;
	uint64_t key = (uint64_t)c->pid << 32 | sid;
	if (!trace_map_get(&r->counters, key, &ci)) {
		ci = tp_profile_add_counter(r->p, c->dev, -1, sname, "");
		if (ci < 0 || trace_map_put(&r->counters, key, ci))
			return 1;
	}
	return tp_counter_push(r->p, ci, r->cur_ts, x) ? 1 : 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/* The class an event's category gives (Kineto's categories, the most common writer of device
 * traces; docs/input-chrome-trace.md lists them): host operators for every category it does
 * not know. */
static enum tp_work cat_class(const char *cat)
{
	static const struct {
		const char *cat;
		enum tp_work w;
	} tab[] = {
	    {"kernel", TP_WORK_KERNEL},
	    {"mtia_ccp_events", TP_WORK_KERNEL},
	    {"gpu_memcpy", TP_WORK_MEMCPY},
	    {"gpu_memset", TP_WORK_MEMSET},
	    {"gpu_user_annotation", TP_WORK_DEVICE_ANNOTATION},
	    {"cuda_sync", TP_WORK_SYNC},
	    {"user_annotation", TP_WORK_ANNOTATION},
	    {"Trace", TP_WORK_PROFILER},    /* the envelope "PyTorch Profiler (0)" */
	    {"overhead", TP_WORK_PROFILER}, /* the profiler's own cost ("CUPTI Overhead") */
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
		if (strcmp(cat, tab[i].cat) == 0)
			return tab[i].w;
	if (ends_with(cat, "_runtime") || ends_with(cat, "_driver"))
		return TP_WORK_RUNTIME; /* cuda_runtime, cuda_driver, privateuse1_runtime, ... */
	return TP_WORK_OP;
}

/* Communication kernels run on a device queue like any kernel; their names say what they are
 * (NCCL's "ncclDevKernel_AllReduce_Sum_f32_RING_LL", RCCL's, oneCCL's). */
static int collective_name(const char *s)
{
	return strstr(s, "nccl") || strstr(s, "rccl") || strstr(s, "NCCL") || strstr(s, "ccl::");
}

/* The type of a complete event named `name` in category `cat` (enum tp_work, model.h): by its
 * category, then by name where the category is not enough. PyTorch's profiler marks each
 * iteration with a "ProfilerStep#N" annotation: on a host thread those become steps
 * (TP_CAP_TYPE_STEP), so the step reports and `tpuprof diff`'s noise estimate see them, while
 * the same range projected onto a GPU stream stays a device annotation. */
uint32_t trace_event_type(struct trace_rd *r, uint32_t name, uint32_t cat)
{
	unsigned h = cat & 15;
	if (r->cat_id[h] != cat || !r->cat_set[h]) {
		r->cat_id[h] = cat;
		r->cat_set[h] = 1;
		r->cat_w[h] = (uint8_t)cat_class(tp_str(r->p, cat));
	}
	enum tp_work w = (enum tp_work)r->cat_w[h];
	const char *nm = tp_str(r->p, name);
	if (w == TP_WORK_KERNEL && collective_name(nm))
		w = TP_WORK_COLLECTIVE;
	else if ((w == TP_WORK_OP || w == TP_WORK_ANNOTATION) &&
	         strncmp(nm, "ProfilerStep#", 13) == 0)
		w = TP_WORK_STEP;
	else if (w != TP_WORK_DEVICE_ANNOTATION && strncmp(nm, "PyTorch Profiler (", 18) == 0)
		w = TP_WORK_PROFILER;
	if (!r->ty_work[w])
		r->ty_work[w] = tp_profile_str(r->p, tp_work_type(w));
	return r->ty_work[w];
}

/* ---------------------------------------------------------------------------------------- */
/* Events by phase                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* The interned ids and the time of the event being handled. */
struct ev_ids {
	uint32_t pid, tid, name, cat;
	int64_t ts;
};

/* make_args, with a bad args object reported at its place. */
static int event_args(struct trace_rd *r, struct json_cur *j, const struct trace_ev *e,
                      const struct ev_ids *x, int with_optype, uint32_t *args)
{
	int st = make_args(r, j, e, x->name, x->cat, with_optype, args);
	if (st == TP_EFORMAT)
		return tp_diag_at(r->d, st, r->path, off_of(r, j->err_at),
		                  "bad JSON in trace event: %s", j->err);
	return st;
}

/* M: process_name / thread_name give devices and tracks their names (applied in finish). */
static int event_meta(struct trace_rd *r, struct json_cur *j, const struct trace_ev *e,
                      const struct ev_ids *x)
{
	r->n_meta++;
	const char *nm = tp_str(r->p, x->name);
	int is_p = strcmp(nm, "process_name") == 0, is_t = strcmp(nm, "thread_name") == 0;
	if (!is_p && !is_t) {
		r->meta_ignored++;
		return TP_OK;
	}
	/* args.name */
	struct json_val an = {0};
	if (e->args.kind == 'o')
		if (trace_json_members(j, &e->args, name_member, &an) == -1)
			return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, j->err_at),
			                  "bad JSON in trace event: %s", j->err);
	uint32_t val = 0;
	if (an.kind != 's' || intern_val(r, &an, &val) || !val) {
		r->meta_ignored++;
		return TP_OK;
	}
	if (is_p)
		return trace_map_put(&r->pname, x->pid, (int32_t)val);
	return trace_map_put(&r->tname, (uint64_t)x->pid << 32 | x->tid, (int32_t)val);
}

/* X: a complete event. */
static int event_complete(struct trace_rd *r, struct json_cur *j, const struct trace_ev *e,
                          const struct ev_ids *x)
{
	int64_t ts = x->ts, dur = 0;
	if (e->dur.kind == 'n' || e->dur.kind == 's') {
		if (tp_traceread_us_to_ns(e->dur.p, e->dur.n, &dur) != 0)
			r->x_no_dur++, dur = 0;
	} else
		r->x_no_dur++;
	if (dur < 0) {
		r->neg_dur++;
		dur = 0;
	}
	int64_t end_ns;
	if (__builtin_add_overflow(ts, dur, &end_ns))
		dur = INT64_MAX - ts; /* ts > 0 here: only a positive sum can overflow */
	int tr = get_track(r, x->pid, x->tid);
	uint32_t args = 0;
	if (tr < 0)
		return TP_ENOMEM;
	int st = event_args(r, j, e, x, 1, &args);
	if (st)
		return st;
	see_ts(r, ts);
	see_ts(r, ts + dur);
	r->n_x++;
	return trace_add_slice(r, tr, ts, ts + dur, x->name, trace_event_type(r, x->name, x->cat),
	                       args);
}

/* B: opens a slice on its track's stack. */
static int event_begin(struct trace_rd *r, struct json_cur *j, const struct trace_ev *e,
                       const struct ev_ids *x)
{
	int tr = get_track(r, x->pid, x->tid);
	if (tr < 0)
		return TP_ENOMEM;
	struct open_ev o = {x->ts, x->name, x->cat, 0, 0, tr, x->pid};
	int st = event_args(r, j, e, x, 1, &o.args);
	if (st)
		return st;
	see_ts(r, x->ts);
	return push_open(r, tr, &o);
}

/* E: closes the innermost open B of its track. */
static int event_end(struct trace_rd *r, const struct ev_ids *x)
{
	int tr = get_track(r, x->pid, x->tid);
	if (tr < 0)
		return TP_ENOMEM;
	see_ts(r, x->ts);
	size_t t = (size_t)tr;
	if (t >= r->nstk || r->stk[t].n == 0) {
		r->unmatched_e++;
		return TP_OK;
	}
	struct open_ev *o = &r->stk[t].v[--r->stk[t].n];
	r->n_be++;
	return trace_add_slice(r, tr, o->ts, x->ts, o->name, trace_event_type(r, o->name, o->cat),
	                       o->args);
}

/* i / I (on the thread's track) and n (on the async track of its cat): zero-length slices. */
static int event_instant(struct trace_rd *r, struct json_cur *j, const struct trace_ev *e,
                         const struct ev_ids *x, char ph)
{
	int tr = ph == 'n' ? get_async_track(r, x->pid, x->cat) : get_track(r, x->pid, x->tid);
	if (tr < 0)
		return TP_ENOMEM;
	uint32_t args = 0;
	int st = event_args(r, j, e, x, 0, &args);
	if (st)
		return st;
	see_ts(r, x->ts);
	r->n_i++;
	return trace_add_slice(r, tr, x->ts, x->ts, x->name, r->ty_instant, args);
}

/* b opens an async slice; e closes the latest open b with the same pid, cat and id (and name
 * when given). */
static int event_async(struct trace_rd *r, struct json_cur *j, const struct trace_ev *e,
                       const struct ev_ids *x, const char *q, char ph)
{
	uint32_t id = 0;
	if (intern_val(r, &e->id, &id))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, q),
		                  "bad string escape in event id");
	see_ts(r, x->ts);
	if (ph == 'b') {
		int tr = get_async_track(r, x->pid, x->cat);
		if (tr < 0)
			return TP_ENOMEM;
		struct open_ev o = {x->ts, x->name, x->cat, id, 0, tr, x->pid};
		int st = event_args(r, j, e, x, 0, &o.args);
		if (st)
			return st;
		struct open_ev *a = tp_grow(r->async_open, sizeof *a, r->nasync + 1, &r->capasync);
		if (!a)
			return TP_ENOMEM;
		r->async_open = a;
		a[r->nasync++] = o;
		return TP_OK;
	}
	for (size_t k = r->nasync; k-- > 0;) {
		struct open_ev *o = &r->async_open[k];
		if (o->pid != x->pid || o->cat != x->cat || o->id != id ||
		    (x->name && o->name != x->name))
			continue;
		struct open_ev a = *o;
		memmove(o, o + 1, (r->nasync - k - 1) * sizeof *o);
		r->nasync--;
		r->n_async++;
		return trace_add_slice(r, a.track, a.ts, x->ts, a.name, r->ty_async, a.args);
	}
	r->unmatched_async++;
	return TP_OK;
}

/* C: each member of args is a sample of its own series. */
static int event_counter(struct trace_rd *r, struct json_cur *j, const struct trace_ev *e,
                         const struct ev_ids *x)
{
	if (e->args.kind != 'o')
		return TP_OK;
	int dev = get_device(r, x->pid);
	if (dev < 0)
		return TP_ENOMEM;
	see_ts(r, x->ts);
	r->n_counter++;
	struct counter_ctx cc = {r, x->pid, x->name, dev};
	r->cur_ts = x->ts;
	int cst = trace_json_members(j, &e->args, counter_member, &cc);
	if (cst > 0)
		return TP_ENOMEM;
	if (cst == -1)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, j->err_at),
		                  "bad JSON in trace event: %s", j->err);
	return r->p->oom ? TP_ENOMEM : TP_OK;
}

/* Appends pt to the list *v of *n points (capacity *cap). TP_OK / TP_ENOMEM. */
static int push_fpt(struct fpt **v, size_t *n, size_t *cap, struct fpt pt)
{
	struct fpt *g = tp_grow(*v, sizeof *g, *n + 1, cap);
	if (!g)
		return TP_ENOMEM;
	*v = g;
	g[(*n)++] = pt;
	return TP_OK;
}

/* s / t / f: a flow point, kept until finish pairs them (link.c). */
static int event_flow(struct trace_rd *r, const struct trace_ev *e, const struct ev_ids *x,
                      const char *q, char ph)
{
	uint32_t id = 0;
	if (intern_val(r, &e->id, &id))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, q),
		                  "bad string escape in event id");
	int tr = get_track(r, x->pid, x->tid);
	if (tr < 0)
		return TP_ENOMEM;
	see_ts(r, x->ts);
	struct fpt pt = {(uint64_t)x->cat << 32 | id, tr, x->ts};
	/* A step (t) ends one segment and starts the next. */
	if (ph != 's' && push_fpt(&r->fend, &r->nfend, &r->capfend, pt))
		return TP_ENOMEM;
	if (ph != 'f' && push_fpt(&r->fstart, &r->nfstart, &r->capfstart, pt))
		return TP_ENOMEM;
	return TP_OK;
}

int trace_event(struct trace_rd *r, const char *q, size_t n, const struct trace_ev *ev)
{
	struct json_cur j = {q, q + n, NULL, NULL, 0, 0};
	const struct trace_ev *e = ev;
	r->events++;
	if (e->ph.kind != 's' || e->ph.n != 1) {
		r->no_ph++;
		return TP_OK;
	}
	char ph = e->ph.p[0];
	struct ev_ids x = {0, 0, 0, 0, 0};
	if (intern_val(r, &e->pid, &x.pid) || intern_val(r, &e->tid, &x.tid) ||
	    intern_val(r, &e->name, &x.name) || intern_val(r, &e->cat, &x.cat))
		return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, q),
		                  "bad string escape in trace event");
	if (r->p->oom)
		return TP_ENOMEM;
	if (ph == 'M')
		return event_meta(r, &j, e, &x);

	int have_ts = 0;
	if (e->ts.kind == 'n' || e->ts.kind == 's') {
		if (tp_traceread_us_to_ns(e->ts.p, e->ts.n, &x.ts) == 0)
			have_ts = 1;
		else
			r->bad_ts++;
	}
	if (!memchr("XBEiInbeCstf", ph, 12)) {
		r->unknown_ph++;
		return TP_OK;
	}
	if (ph == 's' || ph == 't' || ph == 'f')
		r->n_flow++;
	if (!have_ts) {
		r->no_ts++;
		return TP_OK;
	}
	switch (ph) {
	case 'X':
		return event_complete(r, &j, e, &x);
	case 'B':
		return event_begin(r, &j, e, &x);
	case 'E':
		return event_end(r, &x);
	case 'i':
	case 'I':
	case 'n':
		return event_instant(r, &j, e, &x, ph);
	case 'b':
	case 'e':
		return event_async(r, &j, e, &x, q, ph);
	case 'C':
		return event_counter(r, &j, e, &x);
	default: /* s, t, f */
		return event_flow(r, e, &x, q, ph);
	}
}
