/*
 * chrome.c — the Chrome trace-event JSON writer: a tp_sink that prints one JSON event per
 * line into a buffer that is flushed to the file whenever it passes FLUSH_BYTES, so memory
 * does not grow with the output.
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

static void str(struct tp_buf *b, const char *s)
{
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, s ? s : "");
	tp_buf_putc(b, '"');
}

static void i64(struct tp_buf *b, int64_t v)
{
	char tmp[24];
	char *e = tmp + sizeof tmp, *q = e;
	uint64_t a = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
	do {
		*--q = (char)('0' + a % 10);
		a /= 10;
	} while (a);
	if (v < 0)
		*--q = '-';
	tp_buf_put(b, q, (size_t)(e - q));
}

static void u64(struct tp_buf *b, uint64_t a)
{
	char tmp[24];
	char *e = tmp + sizeof tmp, *q = e;
	do {
		*--q = (char)('0' + a % 10);
		a /= 10;
	} while (a);
	tp_buf_put(b, q, (size_t)(e - q));
}

static void real(struct tp_buf *b, double v)
{
	char tmp[40];
	if (v != v || v - v != 0) { /* NaN or infinite: JSON has no such numbers */
		tp_buf_puts(b, "null");
		return;
	}
	size_t n = tp_sink_fmt_real(tmp, sizeof tmp, v);
	tp_buf_put(b, tmp, n);
}

/* Starts an event: `,\n{"ph":"X","pid":P,"tid":T` */
static void head(struct cw *w, const char *ph, int32_t pid, int32_t tid)
{
	struct tp_buf *b = &w->b;
	tp_buf_puts(b, w->first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
	w->first = 0;
	tp_buf_puts(b, ph);
	tp_buf_puts(b, "\",\"pid\":");
	i64(b, pid);
	tp_buf_puts(b, ",\"tid\":");
	i64(b, tid);
}

static void meta(struct cw *w, int32_t pid, int32_t tid, const char *name, const char *sval,
                 int64_t ival)
{
	head(w, "M", pid, tid);
	tp_buf_puts(&w->b, ",\"name\":\"");
	tp_buf_puts(&w->b, name);
	if (sval) {
		tp_buf_puts(&w->b, "\",\"args\":{\"name\":");
		str(&w->b, sval);
	} else {
		tp_buf_puts(&w->b, "\",\"args\":{\"sort_index\":");
		i64(&w->b, ival);
	}
	tp_buf_puts(&w->b, "}}");
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

static void flow_ev(struct cw *w, const struct tp_sink_slice *s, const char *ph, uint64_t id)
{
	struct tp_buf *b = &w->b;
	head(w, ph, s->track->pid, s->track->tid);
	tp_buf_puts(b, ",\"ts\":");
	tp_buf_ns_as_us(b, s->ts_ns);
	tp_buf_puts(b, ",\"id\":");
	u64(b, id);
	tp_buf_puts(b, ",\"name\":\"dependency\",\"cat\":\"dependency\"");
	if (ph[0] == 'f')
		tp_buf_puts(b, ",\"bp\":\"e\"");
	tp_buf_putc(b, '}');
}

static int cw_slice(void *ctx, const struct tp_sink_slice *s)
{
	struct cw *w = ctx;
	struct tp_buf *b = &w->b;
	head(w, "X", s->track->pid, s->track->tid);
	tp_buf_puts(b, ",\"ts\":");
	tp_buf_ns_as_us(b, s->ts_ns);
	tp_buf_puts(b, ",\"dur\":");
	tp_buf_ns_as_us(b, s->dur_ns);
	tp_buf_puts(b, ",\"name\":");
	str(b, s->name);
	tp_buf_puts(b, ",\"cat\":");
	str(b, s->category);
	if (s->num_args) {
		tp_buf_puts(b, ",\"args\":{");
		for (size_t i = 0; i < s->num_args; i++) {
			const struct tp_sink_arg *a = &s->args[i];
			if (i)
				tp_buf_putc(b, ',');
			str(b, a->key);
			tp_buf_putc(b, ':');
			switch (a->type) {
			case TP_ARG_INT:
				i64(b, a->i);
				break;
			case TP_ARG_UINT:
				u64(b, a->u);
				break;
			case TP_ARG_REAL:
				real(b, a->d);
				break;
			default:
				str(b, a->s);
				break;
			}
		}
		tp_buf_putc(b, '}');
	}
	tp_buf_putc(b, '}');
	for (size_t i = 0; i < s->num_flows_out; i++)
		flow_ev(w, s, "s", s->flows_out[i]);
	if (s->flow_in)
		flow_ev(w, s, "f", s->flow_in);
	return flush(w, 0);
}

static int cw_counter(void *ctx, const struct tp_sink_track *t, int64_t ts_ns, double value)
{
	struct cw *w = ctx;
	struct tp_buf *b = &w->b;
	head(w, "C", t->pid, t->tid);
	tp_buf_puts(b, ",\"ts\":");
	tp_buf_ns_as_us(b, ts_ns);
	tp_buf_puts(b, ",\"name\":");
	str(b, t->full_name ? t->full_name : t->name);
	tp_buf_puts(b, ",\"args\":{");
	str(b, t->unit && *t->unit ? t->unit : "value");
	tp_buf_putc(b, ':');
	real(b, value);
	tp_buf_puts(b, "}}");
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
