/*
 * jsonread.c — a small JSON reader for the files the job report writes itself
 * (job_entry.json, job_summary.json), and reading a job entry back from one. Strict JSON
 * (RFC 8259), values built into a caller's arena; errors say at which byte. The inputs are a
 * few hundred KiB, so a plain recursive descent with a depth limit suffices.
 */
#include "writers/jobreport/jobreport_int.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct jp {
	struct tp_arena *a;
	const char *s, *end, *p;
	const char *why;
	int depth;
};

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int fail(struct jp *j, const char *why)
{
	if (!j->why)
		j->why = why;
	return -1;
}

static int value(struct jp *j, struct tp_jv *v);

/* An escape after the backslash at j->p; appends its character to b. */
static int escape(struct jp *j, struct tp_buf *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k = j->p < j->end ? strchr(from, *j->p) : NULL;
	if (k && *k) {
		tp_buf_putc(b, to[k - from]);
		j->p++;
		return 0;
	}
	uint32_t cp, lo;
	if (j->p >= j->end || *j->p != 'u' || j->end - j->p < 5 || tp_parse_hex4(j->p + 1, &cp))
		return fail(j, "bad escape");
	j->p += 5;
	if (cp >= 0xD800 && cp < 0xDC00 && j->end - j->p >= 6 && j->p[0] == '\\' &&
	    j->p[1] == 'u' && !tp_parse_hex4(j->p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		j->p += 6;
	} else if (cp >= 0xD800 && cp < 0xE000) {
		cp = 0xFFFD; /* a lone surrogate */
	}
	tp_buf_utf8(b, cp);
	return 0;
}

static int string(struct jp *j, const char **out, size_t *len)
{
	struct tp_buf b;
	tp_buf_init(&b);
	j->p++; /* the opening quote */
	int rc = 0;
	while (!rc) {
		if (j->p >= j->end) {
			rc = fail(j, "unterminated string");
			break;
		}
		char c = *j->p;
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20) {
			rc = fail(j, "control character in a string");
			break;
		}
		j->p++;
		if (c == '\\')
			rc = escape(j, &b);
		else
			tp_buf_putc(&b, c);
	}
	if (!rc) {
		j->p++;
		*out = tp_arena_strndup(j->a, b.data ? b.data : "", b.len);
		*len = b.len;
		if (!*out || b.oom)
			rc = fail(j, "out of memory");
	}
	tp_buf_free(&b);
	return rc;
}

static int number(struct jp *j, struct tp_jv *v)
{
	const char *q = j->p;
	if (q < j->end && *q == '-')
		q++;
	if (q >= j->end || *q < '0' || *q > '9')
		return fail(j, "bad number");
	char tmp[64];
	size_t n = 0;
	int integral = 1;
	const char *p = j->p;
	while (p < j->end && n < sizeof tmp - 1 && strchr("+-0123456789.eE", *p)) {
		integral &= *p != '.' && *p != 'e' && *p != 'E';
		tmp[n++] = *p++;
	}
	tmp[n] = 0;
	char *end;
	errno = 0;
	v->type = JV_NUM;
	v->num = strtod(tmp, &end);
	if (end != tmp + n)
		return fail(j, "bad number");
	if (integral && tp_parse_i64(tmp, n, &v->i) == 0)
		v->is_int = 1;
	j->p = p;
	return 0;
}

static int literal(struct jp *j, struct tp_jv *v, const char *word, int type, int b)
{
	size_t n = strlen(word);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return fail(j, "unexpected character");
	j->p += n;
	v->type = type;
	v->i = b;
	v->num = b;
	v->is_int = 1;
	return 0;
}

/* Items of an array or members of an object, gathered in a heap list then copied to the
 * arena. */
static int compound(struct jp *j, struct tp_jv *v, int obj)
{
	struct tp_jv *items = NULL;
	const char **keys = NULL;
	size_t n = 0, cap = 0, kcap = 0;
	int rc = 0;
	char close = obj ? '}' : ']';
	j->p++;
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		goto done;
	}
	for (;;) {
		ws(j);
		const char *key = NULL;
		size_t klen;
		if (obj) {
			if (j->p >= j->end || *j->p != '"' || string(j, &key, &klen)) {
				rc = fail(j, "expected a member name");
				break;
			}
			ws(j);
			if (j->p >= j->end || *j->p != ':') {
				rc = fail(j, "expected ':'");
				break;
			}
			j->p++;
		}
		struct tp_jv *ni = tp_grow(items, sizeof *items, n + 1, &cap);
		const char **nk = obj ? tp_grow(keys, sizeof *keys, n + 1, &kcap) : NULL;
		if (!ni || (obj && !nk)) {
			if (ni)
				items = ni;
			if (nk)
				keys = nk;
			rc = fail(j, "out of memory");
			break;
		}
		items = ni;
		if (obj) {
			keys = nk;
			keys[n] = key;
		}
		memset(&items[n], 0, sizeof items[n]);
		if ((rc = value(j, &items[n])) != 0)
			break;
		n++;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			break;
		}
		rc = fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		break;
	}
done:
	if (!rc && n) {
		v->items = tp_arena_alloc(j->a, n * sizeof *items);
		v->keys = obj ? tp_arena_alloc(j->a, n * sizeof *keys) : NULL;
		if (!v->items || (obj && !v->keys)) {
			rc = fail(j, "out of memory");
		} else {
			memcpy(v->items, items, n * sizeof *items);
			if (obj)
				memcpy(v->keys, keys, n * sizeof *keys);
		}
	}
	v->type = obj ? JV_OBJ : JV_ARR;
	v->n = rc ? 0 : n;
	tp_free(items);
	tp_free(keys);
	return rc;
}

static int value(struct jp *j, struct tp_jv *v)
{
	ws(j);
	if (j->p >= j->end)
		return fail(j, "unexpected end");
	if (++j->depth > 64)
		return fail(j, "nested too deep");
	int rc;
	switch (*j->p) {
	case '{':
		rc = compound(j, v, 1);
		break;
	case '[':
		rc = compound(j, v, 0);
		break;
	case '"':
		v->type = JV_STR;
		rc = string(j, &v->s, &v->n);
		break;
	case 't':
		rc = literal(j, v, "true", JV_BOOL, 1);
		break;
	case 'f':
		rc = literal(j, v, "false", JV_BOOL, 0);
		break;
	case 'n':
		rc = literal(j, v, "null", JV_NULL, 0);
		break;
	default:
		rc = number(j, v);
	}
	j->depth--;
	return rc;
}

const struct tp_jv *tp_jr_parse(struct tp_arena *a, const char *text, size_t len, size_t *err_off,
                                const char **why)
{
	struct jp j = {.a = a, .s = text, .end = text + len, .p = text};
	struct tp_jv *root = tp_arena_alloc(a, sizeof *root);
	if (!root) {
		*err_off = 0;
		*why = "out of memory";
		return NULL;
	}
	memset(root, 0, sizeof *root);
	if (value(&j, root) == 0) {
		ws(&j);
		if (j.p == j.end)
			return root;
		fail(&j, "trailing data");
	}
	*err_off = (size_t)(j.p - j.s);
	*why = j.why ? j.why : "syntax error";
	return NULL;
}

const struct tp_jv *tp_jr_get(const struct tp_jv *v, const char *key)
{
	if (!v || v->type != JV_OBJ)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->items[i];
	return NULL;
}

int64_t tp_jr_int(const struct tp_jv *v, const char *key, int64_t dflt)
{
	const struct tp_jv *x = tp_jr_get(v, key);
	return x && (x->type == JV_NUM || x->type == JV_BOOL) && x->is_int ? x->i : dflt;
}

double tp_jr_num(const struct tp_jv *v, const char *key, double dflt)
{
	const struct tp_jv *x = tp_jr_get(v, key);
	return x && x->type == JV_NUM ? x->num : dflt;
}

const char *tp_jr_str(const struct tp_jv *v, const char *key, const char *dflt)
{
	const struct tp_jv *x = tp_jr_get(v, key);
	return x && x->type == JV_STR ? x->s : dflt;
}

/* ---- Reading an entry back ---------------------------------------------------------------- */

static int anchor_from_name(const char *s)
{
	for (int k = TP_JOB_ANCHOR_NONE; k <= TP_JOB_ANCHOR_TRACE; k++)
		if (strcmp(s, tp_job_anchor_name(k)) == 0)
			return k;
	return TP_JOB_ANCHOR_NONE;
}

int tp_jr_entry_scalars(struct tp_job *j, struct tp_job_entry *e, const struct tp_jv *o)
{
	const char **strs[] = {&e->name,  &e->out,    &e->kind, &e->device,
	                       &e->error, &e->source, &e->arch, &e->net};
	static const char *const skeys[] = {"name",  "out",    "kind", "device",
	                                    "error", "source", "arch", "net"};
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		if (!(*strs[i] = tp_job_str(j, tp_jr_str(o, skeys[i], ""))))
			return TP_ENOMEM;
	int64_t *ints[] = {&e->call, &e->pid, &e->total_ns, &e->anchor_ns};
	static const char *const ikeys[] = {"call", "pid", "total_ns", "anchor_ns"};
	for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
		*ints[i] = tp_jr_int(o, ikeys[i], 0);
	double *nums[] = {&e->parallelism, &e->concurrency, &e->ddr_gbps, &e->uarch_rate,
	                  &e->imbalance};
	static const char *const nkeys[] = {"parallelism", "concurrency", "ddr_gbps", "uarch_rate",
	                                    "imbalance"};
	for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
		*nums[i] = tp_jr_num(o, nkeys[i], 0);
	e->ok = tp_jr_int(o, "ok", 0) != 0;
	e->exit_code = (int)tp_jr_int(o, "exit_code", 0);
	e->num_cores = (int32_t)tp_jr_int(o, "num_cores", 0);
	e->records = (uint64_t)tp_jr_int(o, "records", 0);
	e->has_uarch = tp_jr_int(o, "has_uarch", 0) != 0;
	e->anchor = anchor_from_name(tp_jr_str(o, "anchor", ""));
	return TP_OK;
}

static int read_engine(struct tp_job *j, struct tp_job_engine *x, const struct tp_jv *o)
{
	x->present = tp_jr_int(o, "present", 0) != 0;
	if (!x->present)
		return TP_OK;
	x->records = (uint64_t)tp_jr_int(o, "records", 0);
	x->busy_ns = tp_jr_int(o, "busy_ns", 0);
	x->util = tp_jr_num(o, "util", 0);
	x->ddr_gbps = tp_jr_num(o, "ddr_gbps", 0);
	x->has_uarch = tp_jr_int(o, "has_uarch", 0) != 0;
	x->uarch_rate = tp_jr_num(o, "uarch_rate", 0);
	const struct tp_jv *s = tp_jr_get(o, "strip"), *r = tp_jr_get(o, "runs");
	for (size_t k = 0; s && s->type == JV_ARR && k < s->n && k < TP_JOB_BINS; k++) {
		int64_t v = s->items[k].is_int ? s->items[k].i : 0;
		x->strip[k] = (uint16_t)(v < 0 ? 0 : v > 1000 ? 1000 : v);
	}
	if (!r || r->type != JV_ARR || r->n < 3)
		return TP_OK;
	size_t n = r->n / 3;
	if (n > TP_JOB_MAX_RUNS)
		n = TP_JOB_MAX_RUNS;
	if (!(x->runs = tp_arena_alloc(&j->arena, n * sizeof *x->runs)))
		return TP_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		const struct tp_jv *t = &r->items[3 * k];
		x->runs[k] = (struct tp_job_run){t[0].i, t[1].i, (uint32_t)t[2].i};
	}
	x->nruns = n;
	return TP_OK;
}

static int read_cores(struct tp_job *j, struct tp_job_entry *e, const struct tp_jv *cores)
{
	if (!cores || cores->type != JV_ARR || !cores->n)
		return TP_OK;
	if (!(e->cores = tp_arena_alloc(&j->arena, cores->n * sizeof *e->cores)))
		return TP_ENOMEM;
	memset(e->cores, 0, cores->n * sizeof *e->cores);
	e->ncores = cores->n;
	for (size_t i = 0; i < cores->n; i++) {
		const struct tp_jv *c = &cores->items[i], *eng = tp_jr_get(c, "engines");
		e->cores[i].device = (int32_t)tp_jr_int(c, "device", 0);
		e->cores[i].core = (int32_t)tp_jr_int(c, "core", 0);
		for (size_t k = 0; eng && eng->type == JV_ARR && k < eng->n && k < TP_ENGINES; k++)
			if (read_engine(j, &e->cores[i].eng[k], &eng->items[k]) != TP_OK)
				return TP_ENOMEM;
	}
	tp_jr_entry_means(e);
	return TP_OK;
}

/* Reads a whole regular file (at most 256 MiB) into a heap buffer. */
static int slurp(const char *path, char **out, size_t *len, struct tp_diag *d)
{
	struct tp_file f;
	int rc = tp_file_load(&f, path, d);
	if (rc != TP_OK)
		return rc;
	*out = f.size < ((size_t)256 << 20) ? tp_malloc(f.size + 1) : NULL;
	if (*out) {
		memcpy(*out, f.data, f.size);
		(*out)[f.size] = 0;
		*len = f.size;
	}
	size_t size = f.size;
	tp_file_release(&f);
	if (!*out)
		return size >= ((size_t)256 << 20)
		           ? tp_diag_set(d, TP_EFORMAT, "%s: larger than 256 MiB", path)
		           : tp_diag_set(d, TP_ENOMEM, "out of memory reading %s", path);
	return TP_OK;
}

/* Reads and parses the JSON file at path into `scratch`, checking that its top-level `marker`
 * member is 1 (`what` names the kind of file in the error). NULL with *rc and d set. */
static const struct tp_jv *load_json(const char *path, const char *marker, const char *what,
                                     struct tp_arena *scratch, int *rc, struct tp_diag *d)
{
	char *text = NULL;
	size_t len = 0, off = 0;
	const char *why = NULL;
	const struct tp_jv *root = NULL;
	if ((*rc = slurp(path, &text, &len, d)) != TP_OK)
		return NULL;
	root = tp_jr_parse(scratch, text, len, &off, &why);
	tp_free(text); /* the values are copies in the arena */
	if (!root)
		*rc = strcmp(why, "out of memory") == 0
		          ? tp_diag_set(d, TP_ENOMEM, "out of memory reading %s", path)
		          : tp_diag_at(d, TP_EFORMAT, path, off, "%s", why);
	else if (tp_jr_int(root, marker, 0) != 1)
		*rc = tp_diag_at(d, TP_EFORMAT, path, 0, "not a %s (no \"%s\": 1)", what, marker);
	return *rc == TP_OK ? root : NULL;
}

/* Reads the document at path marked "marker": 1 and hands its root to `read`; the parsed
 * document lives until read returns. */
static int read_doc(struct tp_job *j, const char *path, const char *marker, const char *what,
                    int (*read)(struct tp_job *j, const struct tp_jv *root, const char *path,
                                struct tp_diag *d),
                    struct tp_diag *d)
{
	struct tp_arena scratch;
	tp_arena_init(&scratch, 0);
	int rc;
	const struct tp_jv *root = load_json(path, marker, what, &scratch, &rc, d);
	if (root)
		rc = read(j, root, path, d);
	tp_arena_free(&scratch);
	return rc;
}

static int read_entry(struct tp_job *j, const struct tp_jv *root, const char *path,
                      struct tp_diag *d)
{
	int rc = TP_OK;
	struct tp_job_entry *e = tp_job_add(j);
	if (!e)
		rc = tp_diag_set(d, TP_ENOMEM, "out of memory");
	else if ((rc = tp_jr_entry_scalars(j, e, root)) != TP_OK ||
	         (rc = read_cores(j, e, tp_jr_get(root, "cores"))) != TP_OK)
		rc = tp_diag_set(d, rc, "out of memory reading %s", path);
	if (rc != TP_OK && e)
		j->n--;
	return rc;
}

int tp_job_entry_read(struct tp_job *j, const char *path, struct tp_diag *d)
{
	return read_doc(j, path, "tpuprof_job_entry", "tpuprof job entry", read_entry, d);
}

static int read_summary(struct tp_job *j, const struct tp_jv *root, const char *path,
                        struct tp_diag *d)
{
	const struct tp_jv *calls = tp_jr_get(root, "calls");
	if (!calls || calls->type != JV_ARR)
		return tp_diag_at(d, TP_EFORMAT, path, 0,
		                  "a tpuprof job summary without \"calls\"");
	for (size_t i = 0; i < calls->n; i++) {
		const struct tp_jv *c = &calls->items[i], *u = tp_jr_get(c, "engine_util");
		struct tp_job_entry *e = tp_job_add(j);
		if (!e || tp_jr_entry_scalars(j, e, c) != TP_OK)
			return tp_diag_set(d, TP_ENOMEM, "out of memory reading %s", path);
		for (int k = 0; k < TP_ENGINES; k++)
			e->eng_util[k] = tp_jr_num(u, tp_track_kind_name((enum tp_track_kind)k), 0);
	}
	return TP_OK;
}

int tp_job_summary_read(struct tp_job *j, const char *path, struct tp_diag *d)
{
	return read_doc(j, path, "tpuprof_job_summary", "tpuprof job summary", read_summary, d);
}
