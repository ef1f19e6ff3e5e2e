/*
 * chrome.c — the Chrome trace-event JSON writer: a tp_sink that prints one JSON event per
 * line into a buffer that is flushed to the file whenever it passes FLUSH_BYTES, so memory
 * does not grow with the output. Events are formatted by hand through a raw cursor (integers,
 * ns as µs with three decimals, constant parts copied whole, strings copied as they are when
 * nothing needs escaping), about 3x faster than field-by-field buffer calls.
 *
 * Owns: the output file (tp_afile) and one text buffer.
 */
#include <string.h>

#include "chrome/chrome.h"

#define FLUSH_BYTES (1 << 20)

struct cw {
	struct tp_afile f;
	const char *path;
	struct tp_diag *d;
	struct tp_buf b;
	int first; /* no event written yet (no comma needed) */
};

static int flush(struct cw *w, int force)
{
	if (w->b.oom)
		return tp_diag_set(w->d, TP_ENOMEM, "%s: out of memory", w->path);
	if (!force && w->b.len < FLUSH_BYTES)
		return TP_OK;
	if (w->b.len && fwrite(w->b.data, 1, w->b.len, w->f.fp) != w->b.len)
		return tp_diag_set(w->d, TP_EOUTPUT, "%s: write failed", w->f.tmp_path);
	w->b.len = 0;
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Hand-written formatting into the buffer through a raw cursor (no printf, no per-field
 * buffer call): an event first makes room for its fixed parts and numbers (EVENT_ROOM), and
 * every string makes room for its worst-case escaped length plus EVENT_ROOM again, so a
 * cursor always has EVENT_ROOM bytes ahead of it after a string. */
#define EVENT_ROOM 256

/* Makes room for n bytes after cursor o (NULL: at the buffer's end); returns the cursor, or
 * NULL on out of memory (b.oom set, reported by flush). */
static char *room(struct cw *w, char *o, size_t n)
{
	struct tp_buf *b = &w->b;
	size_t len = o ? (size_t)(o - b->data) : b->len;
	if (b->oom)
		return NULL;
	if (b->data && n <= b->cap - len)
		return b->data + len;
	size_t cap = b->cap;
	char *nd = tp_grow(b->data, 1, len + n, &cap);
	if (!nd) {
		b->oom = 1;
		return NULL;
	}
	b->data = nd;
	b->cap = cap;
	return nd + len;
}

static void done(struct cw *w, char *o)
{
	if (o)
		w->b.len = (size_t)(o - w->b.data);
}

static char *lit(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}
#define LIT(o, s) lit((o), (s), sizeof(s) - 1)

static char *put_u64(char *o, uint64_t a)
{
	char tmp[24], *e = tmp + sizeof tmp, *q = e;
	do {
		*--q = (char)('0' + a % 10);
		a /= 10;
	} while (a);
	return lit(o, q, (size_t)(e - q));
}

static char *put_i64(char *o, int64_t v)
{
	if (v < 0) {
		*o++ = '-';
		return put_u64(o, (uint64_t)(-(v + 1)) + 1);
	}
	return put_u64(o, (uint64_t)v);
}

/* Nanoseconds as microseconds with exactly three decimals (tp_buf_ns_as_us). */
static char *put_us(char *o, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	if (ns < 0)
		*o++ = '-';
	o = put_u64(o, a / 1000);
	unsigned f = (unsigned)(a % 1000);
	o[0] = '.';
	o[1] = (char)('0' + f / 100);
	o[2] = (char)('0' + f / 10 % 10);
	o[3] = (char)('0' + f % 10);
	return o + 4;
}

static char *put_real(char *o, double v)
{
	if (v != v || v - v != 0) /* NaN or infinite: JSON has no such numbers */
		return LIT(o, "null");
	return o + tp_sink_fmt_real(o, 40, v);
}

/* Bytes a JSON string may hold unescaped on the fast path: printable ASCII but '"', '\' and
 * '<' (tp_buf_json_str escapes "</" and "<!"). Anything else takes tp_buf_json_str. */
static int plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<';
}

/* A quoted JSON string at o; returns the cursor with EVENT_ROOM bytes of room, or NULL. */
static char *put_str(struct cw *w, char *o, const char *s)
{
	if (!s)
		s = "";
	size_t n = strlen(s);
	if (!(o = room(w, o, 6 * n + 2 + EVENT_ROOM)))
		return NULL;
	char *start = o;
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!plain_byte(c)) {
			w->b.len = (size_t)(start - w->b.data) + 1;
			tp_buf_json_str(&w->b, s);
			tp_buf_putc(&w->b, '"');
			return room(w, NULL, EVENT_ROOM);
		}
		o[i] = (char)c;
	}
	o += n;
	*o++ = '"';
	return o;
}

/* Starts an event: `,\n{"ph":"X","pid":P,"tid":T` (room for EVENT_ROOM bytes ensured). */
static char *head(struct cw *w, char ph, int32_t pid, int32_t tid)
{
	char *o = room(w, NULL, EVENT_ROOM);
	if (!o)
		return NULL;
	if (w->first)
		o = LIT(o, "\n{\"ph\":\"");
	else
		o = LIT(o, ",\n{\"ph\":\"");
	w->first = 0;
	*o++ = ph;
	o = LIT(o, "\",\"pid\":");
	o = put_i64(o, pid);
	o = LIT(o, ",\"tid\":");
	return put_i64(o, tid);
}

static void meta(struct cw *w, int32_t pid, int32_t tid, const char *name, const char *sval,
                 int64_t ival)
{
	char *o = head(w, 'M', pid, tid);
	if (!o)
		return;
	o = LIT(o, ",\"name\":\"");
	o = lit(o, name, strlen(name)); /* a constant key of ours, under EVENT_ROOM */
	if (sval) {
		o = LIT(o, "\",\"args\":{\"name\":");
		o = put_str(w, o, sval);
	} else {
		o = LIT(o, "\",\"args\":{\"sort_index\":");
		o = put_i64(o, ival);
	}
	if (o)
		o = LIT(o, "}}");
	done(w, o);
}

static int cw_begin(void *ctx, const struct tp_profile *p, const struct tp_analysis *a)
{
	struct cw *w = ctx;
	(void)a;
	(void)p;
	tp_buf_puts(&w->b, "{\"traceEvents\":[");
	return flush(w, 0);
}

static int cw_track(void *ctx, const struct tp_sink_track *t)
{
	struct cw *w = ctx;
	if (t->is_process) {
		meta(w, t->pid, t->tid, "process_name", t->name, 0);
		meta(w, t->pid, t->tid, "process_sort_index", NULL, t->sort_index);
	} else if (!t->is_container && !t->is_counter) {
		/* Chrome has no track tree: threads carry the flat name ("Core 0 GDMA") and sort by
		 * drive order, which is the tree order. */
		meta(w, t->pid, t->tid, "thread_name", t->full_name ? t->full_name : t->name, 0);
		meta(w, t->pid, t->tid, "thread_sort_index", NULL, (int64_t)t->index);
	}
	return flush(w, 0);
}

static char *flow_ev(struct cw *w, char *o, const struct tp_sink_slice *s, char ph, uint64_t id)
{
	done(w, o);
	if (!(o = head(w, ph, s->track->pid, s->track->tid)))
		return NULL;
	o = LIT(o, ",\"ts\":");
	o = put_us(o, s->ts_ns);
	o = LIT(o, ",\"id\":");
	o = put_u64(o, id);
	o = LIT(o, ",\"name\":\"dependency\",\"cat\":\"dependency\"");
	if (ph == 'f')
		o = LIT(o, ",\"bp\":\"e\"");
	*o++ = '}';
	return o;
}

static int cw_slice(void *ctx, const struct tp_sink_slice *s)
{
	struct cw *w = ctx;
	char *o = head(w, 'X', s->track->pid, s->track->tid);
	if (!o)
		return flush(w, 0);
	o = LIT(o, ",\"ts\":");
	o = put_us(o, s->ts_ns);
	o = LIT(o, ",\"dur\":");
	o = put_us(o, s->dur_ns);
	o = LIT(o, ",\"name\":");
	o = put_str(w, o, s->name);
	if (o)
		o = LIT(o, ",\"cat\":");
	if (o)
		o = put_str(w, o, s->category);
	if (o && s->num_args) {
		o = LIT(o, ",\"args\":{");
		for (size_t i = 0; o && i < s->num_args; i++) {
			const struct tp_sink_arg *a = &s->args[i];
			if (i)
				*o++ = ',';
			if (!(o = put_str(w, o, a->key)))
				break;
			*o++ = ':';
			switch (a->type) {
			case TP_ARG_INT:
				o = put_i64(o, a->i);
				break;
			case TP_ARG_UINT:
				o = put_u64(o, a->u);
				break;
			case TP_ARG_REAL:
				o = put_real(o, a->d);
				break;
			default:
				o = put_str(w, o, a->s);
				break;
			}
		}
		if (o)
			*o++ = '}';
	}
	if (o)
		*o++ = '}';
	for (size_t i = 0; o && i < s->num_flows_out; i++)
		o = flow_ev(w, o, s, 's', s->flows_out[i]);
	if (o && s->flow_in)
		o = flow_ev(w, o, s, 'f', s->flow_in);
	done(w, o);
	return flush(w, 0);
}

static int cw_counter(void *ctx, const struct tp_sink_track *t, int64_t ts_ns, double value)
{
	struct cw *w = ctx;
	char *o = head(w, 'C', t->pid, t->tid);
	if (o) {
		o = LIT(o, ",\"ts\":");
		o = put_us(o, ts_ns);
		o = LIT(o, ",\"name\":");
		o = put_str(w, o, t->full_name ? t->full_name : t->name);
	}
	if (o) {
		o = LIT(o, ",\"args\":{");
		o = put_str(w, o, t->unit && *t->unit ? t->unit : "value");
	}
	if (o) {
		*o++ = ':';
		o = put_real(o, value);
		o = LIT(o, "}}");
	}
	done(w, o);
	return flush(w, 0);
}

static int cw_end(void *ctx, int status)
{
	struct cw *w = ctx;
	if (status)
		return status;
	tp_buf_puts(&w->b,
	            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"tpuprof\"}}\n");
	return flush(w, 1);
}

int tp_chrome_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                    int full_args, struct tp_diag *d)
{
	struct cw w;
	memset(&w, 0, sizeof w);
	w.path = path;
	w.d = d;
	w.first = 1;
	tp_buf_init(&w.b);
	int st = tp_afile_open(&w.f, path, d);
	if (!st) {
		struct tp_sink sink = {&w,         cw_begin, cw_track, cw_slice,
		                       cw_counter, NULL,     cw_end,   full_args};
		st = tp_sink_drive(p, a, &sink, d);
	}
	if (!st)
		st = tp_afile_commit(&w.f, d);
	tp_afile_abort(&w.f);
	tp_buf_free(&w.b);
	return st;
}

static int output_write(const struct tp_profile *p, const struct tp_analysis *a,
                        const struct tp_out_opts *o, struct tp_diag *d)
{
	char *path = tp_path_join(o && o->out_dir ? o->out_dir : ".", "trace.json");
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "out of memory");
	int st = tp_chrome_write(p, a, path, o && o->trace_args_full, d);
	tp_free(path);
	return st;
}

const struct tp_output tp_output_chrome = {
    "chrome",
    "trace.json",
    "--json",
    NULL,
    0,
    "Chrome trace-event JSON (chrome://tracing, speedscope, scripts)",
    output_write,
};
