/*
 * chrome.c — the Chrome trace-event JSON writer: a tp_sink whose callbacks record each event
 * compactly (numbers, string pointers, the slice's arguments) into a batch of up to
 * batch_events events; full batches are formatted to text on worker threads (--jobs) and
 * written to the file strictly in batch order, so the bytes are the same for any number of
 * threads and any batch size. Memory is bounded by the ring of batches (two per worker), not
 * by the trace. Text is formatted by hand through a raw cursor (integers with a two-digit
 * table, ns as µs with three decimals, constant parts copied whole, strings copied as they are
 * when nothing needs escaping). The slices come in parts (tp_sink_drive_parts), each formatted
 * on the thread that walks it and written at its place in the file by any thread (below).
 *
 * Strings are recorded by pointer, not copied: tp_sink_drive's strings (slice names,
 * categories, argument keys and values, track names) stay valid until its end callback, and
 * cw_end formats and writes every batch before it returns.
 *
 * Owns: the output file (tp_afile), the batch ring and its worker threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "writers/chrome/chrome.h"

#include "common/timings.h"
#include "common/wsync.h"

#define BATCH_EVENTS 8192     /* events per batch by default */
#define BATCH_ARGS (1u << 17) /* a batch is also full at this many arguments */
#define MAX_WORKERS 8         /* like Perfetto's compression workers; 17 batches of ~5 MB at most */

/* One recorded event. */
enum { EV_SLICE, EV_COUNTER, EV_META_STR, EV_META_INT };
struct ev {
	uint8_t kind;
	int32_t pid, tid;
	/* A slice; for a counter: ts, name (the track's) and cat (the unit key); metadata: name
	 * (the key), cat (META_STR: the value), dur (META_INT: the value). */
	struct tp_sink_rec r;
	double value; /* counter */
};

enum { SLOT_FREE, SLOT_FILLING, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };

struct batch {
	struct ev *ev;
	size_t nev, cap_ev;
	struct tp_sink_parg *args;
	size_t nargs, cap_args;
	uint64_t *flows;
	size_t nflows, cap_flows;
	int first;       /* the batch holds the trace's first event (no leading comma) */
	struct tp_buf b; /* the formatted text */
	int state;
	TP_LINE_PAD; /* a worker formats into b while the next slot is filled */
};

struct cw {
	struct tp_afile f;
	const char *path;
	struct tp_diag *d;
	size_t batch_events;
	int first;   /* no event recorded yet */
	int status;  /* first error (TP_ENOMEM / TP_EOUTPUT), reported once (the sink's thread) */
	int wstatus; /* first error of a batch write (under mu) */
	int writing; /* a thread is writing the head batch (under mu) */
	/* Ring of batches: head = next to write, tail = next to queue; slot i % nslots. */
	struct batch *slot;
	size_t nslots;
	uint64_t head, tail;
	struct batch *cur; /* the batch being filled (slot tail % nslots) or NULL */
	int nthreads;
	pthread_t th[MAX_WORKERS];
	struct tp_wsync sync;
	struct cpart *parts; /* the part slots */
	size_t nparts;
	/* While the parts run, the file is written at offsets (pwrite) and not through f.fp:
	 * poff is where the next part goes. */
	int at_offsets;
	uint64_t poff;
};

/* ---------------------------------------------------------------------------------------- */
/* Formatting a batch into its text buffer through a raw cursor: an event first makes room for
 * its fixed parts and numbers (EVENT_ROOM), and every string makes room for its worst-case
 * escaped length plus EVENT_ROOM again, so a cursor always has EVENT_ROOM bytes ahead of it
 * after a string. */
#define EVENT_ROOM 256

/* Makes room for n bytes after cursor o (NULL: at the buffer's end); returns the cursor, or
 * NULL on out of memory (b->oom set). */
static char *room(struct tp_buf *b, char *o, size_t n)
{
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

static void done(struct tp_buf *b, char *o)
{
	if (o)
		b->len = (size_t)(o - b->data);
}

static char *lit(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}
#define LIT(o, s) lit((o), (s), sizeof(s) - 1)

static char *put_u64(char *o, uint64_t v)
{
	return o + tp_fmt_u64(o, v);
}
static char *put_i64(char *o, int64_t v)
{
	return o + tp_fmt_i64(o, v);
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
	o[2] = tp_digits2[2 * (f % 100)];
	o[3] = tp_digits2[2 * (f % 100) + 1];
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

/* Strings seen while formatting one batch, by address (the drive's strings do not change
 * while it runs): a string once found plain is copied without looking at it again. */
#define SCACHE 512
struct scache {
	const char *p[SCACHE];
	uint32_t len[SCACHE];
};

/* A part's slot (tp_sink_parts): its slices formatted on the thread that walks the part, one
 * at a time through a one-event batch, into the part's text. */
struct cpart {
	struct batch rec;
	struct scache sc;
	struct tp_buf b;
	uint64_t off; /* the text's place in the file, bytes [skip, len) of b */
	size_t skip;
	int err;     /* errno of a failed write */
	TP_LINE_PAD; /* b grows per slice while the next part's thread fills its rec */
};

static size_t scache_slot(const char *s)
{
	uintptr_t h = (uintptr_t)s;
	return (size_t)((h ^ (h >> 9) ^ (h >> 17)) & (SCACHE - 1));
}

/* A quoted JSON string at o; returns the cursor with EVENT_ROOM bytes of room, or NULL. */
static char *put_str(struct tp_buf *b, struct scache *sc, char *o, const char *s)
{
	if (!s)
		s = "";
	size_t k = scache_slot(s);
	if (sc->p[k] == s) {
		size_t n = sc->len[k];
		if (!(o = room(b, o, n + 2 + EVENT_ROOM)))
			return NULL;
		*o++ = '"';
		memcpy(o, s, n);
		o += n;
		*o++ = '"';
		return o;
	}
	size_t n = strlen(s);
	if (!(o = room(b, o, 6 * n + 2 + EVENT_ROOM)))
		return NULL;
	char *start = o;
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!plain_byte(c)) {
			b->len = (size_t)(start - b->data) + 1;
			tp_buf_json_str(b, s);
			tp_buf_putc(b, '"');
			return room(b, NULL, EVENT_ROOM);
		}
		o[i] = (char)c;
	}
	if (n <= UINT32_MAX) {
		sc->p[k] = s;
		sc->len[k] = (uint32_t)n;
	}
	o += n;
	*o++ = '"';
	return o;
}

/* Starts an event: `,\n{"ph":"X","pid":P,"tid":T` (room for EVENT_ROOM bytes ensured). */
static char *head(struct tp_buf *b, int first, char ph, int32_t pid, int32_t tid)
{
	char *o = room(b, NULL, EVENT_ROOM);
	if (!o)
		return NULL;
	if (first)
		o = LIT(o, "\n{\"ph\":\"");
	else
		o = LIT(o, ",\n{\"ph\":\"");
	*o++ = ph;
	o = LIT(o, "\",\"pid\":");
	o = put_i64(o, pid);
	o = LIT(o, ",\"tid\":");
	return put_i64(o, tid);
}

static char *flow_ev(struct tp_buf *b, char *o, const struct ev *e, char ph, uint64_t id)
{
	done(b, o);
	if (!(o = head(b, 0, ph, e->pid, e->tid)))
		return NULL;
	o = LIT(o, ",\"ts\":");
	o = put_us(o, e->r.ts);
	o = LIT(o, ",\"id\":");
	o = put_u64(o, id);
	o = LIT(o, ",\"name\":\"dependency\",\"cat\":\"dependency\"");
	if (ph == 'f')
		o = LIT(o, ",\"bp\":\"e\"");
	*o++ = '}';
	return o;
}

static void fmt_slice(struct tp_buf *b, struct scache *sc, const struct batch *bt,
                      const struct ev *e, int first)
{
	char *o = head(b, first, 'X', e->pid, e->tid);
	if (!o)
		return;
	o = LIT(o, ",\"ts\":");
	o = put_us(o, e->r.ts);
	o = LIT(o, ",\"dur\":");
	o = put_us(o, e->r.dur);
	o = LIT(o, ",\"name\":");
	o = put_str(b, sc, o, e->r.name);
	if (o)
		o = LIT(o, ",\"cat\":");
	if (o)
		o = put_str(b, sc, o, e->r.cat);
	if (o && e->r.nargs) {
		o = LIT(o, ",\"args\":{");
		for (size_t i = 0; o && i < e->r.nargs; i++) {
			const struct tp_sink_parg *a = &bt->args[e->r.arg0 + i];
			if (i)
				*o++ = ',';
			if (!(o = put_str(b, sc, o, a->key)))
				break;
			*o++ = ':';
			switch (a->type) {
			case TP_ARG_INT:
				o = put_i64(o, a->v.i);
				break;
			case TP_ARG_UINT:
				o = put_u64(o, a->v.u);
				break;
			case TP_ARG_REAL:
				o = put_real(o, a->v.d);
				break;
			default:
				o = put_str(b, sc, o, a->v.s);
				break;
			}
		}
		if (o)
			*o++ = '}';
	}
	if (o)
		*o++ = '}';
	for (size_t i = 0; o && i < e->r.nflows; i++)
		o = flow_ev(b, o, e, 's', bt->flows[e->r.flow0 + i]);
	if (o && e->r.flow_in)
		o = flow_ev(b, o, e, 'f', e->r.flow_in);
	done(b, o);
}

static void fmt_event(struct tp_buf *b, struct scache *sc, const struct batch *bt,
                      const struct ev *e, int first)
{
	char *o;
	switch (e->kind) {
	case EV_SLICE:
		fmt_slice(b, sc, bt, e, first);
		return;
	case EV_COUNTER:
		o = head(b, first, 'C', e->pid, e->tid);
		if (o) {
			o = LIT(o, ",\"ts\":");
			o = put_us(o, e->r.ts);
			o = LIT(o, ",\"name\":");
			o = put_str(b, sc, o, e->r.name);
		}
		if (o) {
			o = LIT(o, ",\"args\":{");
			o = put_str(b, sc, o, e->r.cat);
		}
		if (o) {
			*o++ = ':';
			o = put_real(o, e->value);
			o = LIT(o, "}}");
		}
		done(b, o);
		return;
	default: /* metadata: the key is a constant of ours, under EVENT_ROOM */
		o = head(b, first, 'M', e->pid, e->tid);
		if (!o)
			return;
		o = LIT(o, ",\"name\":\"");
		o = lit(o, e->r.name, strlen(e->r.name));
		if (e->kind == EV_META_STR) {
			o = LIT(o, "\",\"args\":{\"name\":");
			o = put_str(b, sc, o, e->r.cat);
		} else {
			o = LIT(o, "\",\"args\":{\"sort_index\":");
			o = put_i64(o, e->r.dur);
		}
		if (o)
			o = LIT(o, "}}");
		done(b, o);
		return;
	}
}

/* Formats a recorded batch into bt->b (which is empty). */
static void fmt_batch(struct batch *bt)
{
	struct scache sc;
	memset(&sc, 0, sizeof sc);
	bt->b.len = 0;
	for (size_t i = 0; i < bt->nev && !bt->b.oom; i++)
		fmt_event(&bt->b, &sc, bt, &bt->ev[i], bt->first && i == 0);
}

/* Formats and writes every batch still in the ring. */
static int queue_cur(struct cw *w);
static int wait_ring(struct cw *w, uint64_t in_flight);
static int drain(struct cw *w)
{
	queue_cur(w);
	return wait_ring(w, 0);
}

/* ---------------------------------------------------------------------------------------- */
/* The ring. The sink's thread records into the slot at tail and queues it; any thread (a
 * worker, or the sink's thread while it waits for a free slot) formats the oldest queued
 * batch; whichever thread finishes a batch also writes every formatted batch at the head, in
 * order (one writer at a time), and frees its slot. Without workers the sink's thread formats
 * and writes each batch as it is queued. */

static struct batch *slot_at(struct cw *w, uint64_t q)
{
	return &w->slot[q % w->nslots];
}

/* Writes the batches that are formatted at the head, in order. Threads: called with mu held
 * (it drops mu while writing), unless there are no workers. */
static void write_ready(struct cw *w)
{
	while (!w->writing && w->head < w->tail && slot_at(w, w->head)->state == SLOT_DONE) {
		struct batch *bt = slot_at(w, w->head);
		w->writing = 1;
		int st = w->wstatus;
		if (w->nthreads)
			pthread_mutex_unlock(&w->sync.mu);
		if (!st && bt->b.oom)
			st = TP_ENOMEM;
		if (!st && tp_afile_write(&w->f, bt->b.data, bt->b.len) != 0)
			st = TP_EOUTPUT;
		bt->b.len = 0;
		if (w->nthreads)
			pthread_mutex_lock(&w->sync.mu);
		if (st && !w->wstatus)
			w->wstatus = st;
		bt->state = SLOT_FREE;
		w->head++;
		w->writing = 0;
		if (w->nthreads)
			pthread_cond_broadcast(&w->sync.cv_done);
	}
}

/* Formats a BUSY batch, then writes what is ready. Threads: called and returns with mu held. */
static void format_and_write(struct cw *w, struct batch *bt)
{
	if (w->nthreads)
		pthread_mutex_unlock(&w->sync.mu);
	tp_tm_par_begin();
	fmt_batch(bt);
	tp_tm_par_end();
	if (w->nthreads)
		pthread_mutex_lock(&w->sync.mu);
	bt->state = SLOT_DONE;
	write_ready(w);
}

/* Formats and writes the oldest queued batch (marked BUSY meanwhile), if any: 1 if it did.
 * The workers' step, and the sink's while it waits. Threads: mu held. */
static int format_queued(void *arg)
{
	struct cw *w = arg;
	for (uint64_t q = w->head; q < w->tail; q++) {
		struct batch *bt = slot_at(w, q);
		if (bt->state == SLOT_QUEUED) {
			bt->state = SLOT_BUSY;
			format_and_write(w, bt);
			return 1;
		}
	}
	return 0;
}

/* Records the first error and its message (the sink's thread only). */
static int fail(struct cw *w, int st)
{
	if (!w->status) {
		w->status = st;
		if (st == TP_ENOMEM)
			tp_diag_set(w->d, st, "%s: out of memory", w->path);
		else
			tp_afile_fail(&w->f, w->d);
	}
	return w->status;
}

/* Writes the file's own framing (the sink's thread, no batch in flight). */
static int write_bytes(struct cw *w, const void *p, size_t n)
{
	if (w->status)
		return w->status;
	if (tp_afile_write(&w->f, p, n) != 0)
		return fail(w, TP_EOUTPUT);
	return TP_OK;
}

/* Waits until fewer than `in_flight` batches are queued or being formatted or written
 * (0: none), formatting queued batches itself meanwhile; then takes up a writer's error. */
static int wait_ring(struct cw *w, uint64_t in_flight)
{
	if (w->nthreads)
		pthread_mutex_lock(&w->sync.mu);
	while (w->tail - w->head > (in_flight ? in_flight - 1 : 0)) {
		if (format_queued(w))
			continue;
		if (w->nthreads)
			pthread_cond_wait(&w->sync.cv_done, &w->sync.mu);
		else
			break; /* not reached: without workers nothing stays queued */
	}
	int st = w->wstatus;
	if (w->nthreads)
		pthread_mutex_unlock(&w->sync.mu);
	return st ? fail(w, st) : w->status;
}

/* Queues the batch being filled (if it holds events); without workers, formats and writes
 * it at once. */
static int queue_cur(struct cw *w)
{
	struct batch *bt = w->cur;
	if (!bt || !bt->nev)
		return w->status;
	w->cur = NULL;
	if (!w->nthreads) {
		bt->state = SLOT_QUEUED;
		w->tail++;
		return wait_ring(w, 0);
	}
	pthread_mutex_lock(&w->sync.mu);
	bt->state = SLOT_QUEUED;
	w->tail++;
	pthread_cond_signal(&w->sync.cv_job);
	pthread_mutex_unlock(&w->sync.mu);
	return w->status;
}

/* Makes room in bt for one more event, nargs arguments and nflows flows; -1 when out of
 * memory. */
static int batch_room(struct batch *bt, size_t nargs, size_t nflows)
{
	if (bt->nev == bt->cap_ev) {
		struct ev *g = tp_grow(bt->ev, sizeof *bt->ev, bt->nev + 1, &bt->cap_ev);
		if (!g)
			return -1;
		bt->ev = g;
	}
	if (bt->nargs + nargs > bt->cap_args) {
		struct tp_sink_parg *g =
		    tp_grow(bt->args, sizeof *bt->args, bt->nargs + nargs, &bt->cap_args);
		if (!g)
			return -1;
		bt->args = g;
	}
	if (bt->nflows + nflows > bt->cap_flows) {
		uint64_t *g =
		    tp_grow(bt->flows, sizeof *bt->flows, bt->nflows + nflows, &bt->cap_flows);
		if (!g)
			return -1;
		bt->flows = g;
	}
	return 0;
}

/* The batch to record into, with room for one more event, nargs arguments and nflows flows;
 * NULL on error (w->status set). */
static struct batch *cur_batch(struct cw *w, size_t nargs, size_t nflows)
{
	struct batch *bt = w->cur;
	if (bt && (bt->nev >= w->batch_events || bt->nargs + nargs > BATCH_ARGS)) {
		queue_cur(w);
		bt = NULL;
	}
	if (!bt) {
		if (wait_ring(w, w->nslots))
			return NULL;
		bt = slot_at(w, w->tail);
		bt->nev = bt->nargs = bt->nflows = 0;
		bt->first = w->first;
		bt->state = SLOT_FILLING;
		w->cur = bt;
	}
	if (batch_room(bt, nargs, nflows)) {
		fail(w, TP_ENOMEM);
		return NULL;
	}
	w->first = 0;
	return bt;
}

static struct ev *new_ev(struct cw *w, struct batch **out, size_t nargs, size_t nflows)
{
	struct batch *bt = cur_batch(w, nargs, nflows);
	if (!bt)
		return NULL;
	*out = bt;
	struct ev *e = &bt->ev[bt->nev++];
	memset(e, 0, sizeof *e);
	return e;
}

static int meta(struct cw *w, int32_t pid, int32_t tid, const char *name, const char *sval,
                int64_t ival)
{
	struct batch *bt;
	struct ev *e = new_ev(w, &bt, 0, 0);
	if (!e)
		return w->status;
	e->kind = sval ? EV_META_STR : EV_META_INT;
	e->pid = pid;
	e->tid = tid;
	e->r.name = name;
	e->r.cat = sval;
	e->r.dur = ival;
	return TP_OK;
}

static int cw_begin(void *ctx, const struct tp_profile *p, const struct tp_analysis *a)
{
	struct cw *w = ctx;
	(void)a;
	(void)p;
	return write_bytes(w, "{\"traceEvents\":[", 16);
}

static int cw_track(void *ctx, const struct tp_sink_track *t)
{
	struct cw *w = ctx;
	int st = TP_OK;
	if (t->is_process) {
		st = meta(w, t->pid, t->tid, "process_name", t->name ? t->name : "", 0);
		if (!st)
			st = meta(w, t->pid, t->tid, "process_sort_index", NULL, t->sort_index);
	} else if (!t->is_container && !t->is_counter) {
		/* Chrome has no track tree: threads carry the flat name ("Core 0 GDMA") and sort by
		 * drive order, which is the tree order. */
		const char *nm = t->full_name ? t->full_name : t->name;
		st = meta(w, t->pid, t->tid, "thread_name", nm ? nm : "", 0);
		if (!st)
			st = meta(w, t->pid, t->tid, "thread_sort_index", NULL, (int64_t)t->index);
	}
	return st;
}

/* Records slice s as event e of bt (which has room for its arguments and flows). */
static void record_slice(struct batch *bt, struct ev *e, const struct tp_sink_slice *s)
{
	e->kind = EV_SLICE;
	e->pid = s->track->pid;
	e->tid = s->track->tid;
	tp_sink_record(&e->r, bt->args, &bt->nargs, bt->flows, &bt->nflows, s);
}

static int cw_slice(void *ctx, const struct tp_sink_slice *s)
{
	struct cw *w = ctx;
	struct batch *bt;
	struct ev *e = new_ev(w, &bt, s->num_args, s->num_flows_out);
	if (!e)
		return w->status;
	record_slice(bt, e, s);
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Slices in parts (tp_sink_drive_parts): each part's slices are formatted into its slot's text
 * on the thread that walks the part; in part order the driving thread gives each part its
 * place in the file (the sum of the lengths before it), and any thread then writes the text
 * there (pwrite), so the kernel's copy into the page cache is off the driving thread. Track
 * metadata comes before (through the ring, written out when the parts start) and the counters
 * after (f.fp moved to the parts' end first), so the file is the same bytes as with every
 * event through the ring. */

/* The stream f.fp takes over again after the parts (the driving thread). */
static int parts_done(struct cw *w)
{
	if (!w->at_offsets)
		return w->status;
	w->at_offsets = 0;
	if (fseeko(w->f.fp, (off_t)w->poff, SEEK_SET) != 0)
		return fail(w, TP_EOUTPUT);
	return w->status;
}

static int cw_slots(void *ctx, size_t n)
{
	struct cw *w = ctx;
	int st = drain(w);
	if (st)
		return st;
	off_t at;
	if (fflush(w->f.fp) != 0 || (at = ftello(w->f.fp)) < 0)
		return fail(w, TP_EOUTPUT);
	w->poff = (uint64_t)at;
	w->at_offsets = 1;
	w->parts = tp_calloc(n, sizeof *w->parts);
	if (!w->parts)
		return fail(w, TP_ENOMEM);
	w->nparts = n;
	for (size_t i = 0; i < n; i++)
		tp_buf_init(&w->parts[i].b);
	return TP_OK;
}

/* One slice of a part (any thread): out of memory is reported when the part is emitted. */
static int cw_part_slice(void *ctx, size_t slot, const struct tp_sink_slice *s)
{
	struct cw *w = ctx;
	struct cpart *cp = &w->parts[slot];
	struct batch *bt = &cp->rec;
	bt->nev = bt->nargs = bt->nflows = 0;
	if (batch_room(bt, s->num_args, s->num_flows_out)) {
		cp->b.oom = 1;
		return TP_OK;
	}
	struct ev *e = &bt->ev[bt->nev++];
	memset(e, 0, sizeof *e);
	record_slice(bt, e, s);
	fmt_event(&cp->b, &cp->sc, bt, e, 0);
	return TP_OK;
}

/* The part's place in the file (the driving thread, in part order). */
static int cw_emit(void *ctx, size_t slot)
{
	struct cw *w = ctx;
	struct cpart *cp = &w->parts[slot];
	if (cp->b.oom)
		return fail(w, TP_ENOMEM);
	cp->skip = 0;
	if (w->first && cp->b.len) { /* a slice first of all (no metadata): no leading comma */
		cp->skip = 1;
		w->first = 0;
	}
	cp->off = w->poff;
	cp->err = 0;
	w->poff += cp->b.len - cp->skip;
	return TP_OK;
}

/* Writes the part's text at its place (any thread), in pieces as tp_afile_write does; an
 * error is reported in order, by cw_emit2. */
static int cw_write_part(void *ctx, size_t slot)
{
	struct cw *w = ctx;
	struct cpart *cp = &w->parts[slot];
	cp->err =
	    tp_sink_pwrite(fileno(w->f.fp), cp->b.data + cp->skip, cp->b.len - cp->skip, cp->off);
	return TP_OK;
}

static int cw_emit2(void *ctx, size_t slot)
{
	struct cw *w = ctx;
	struct cpart *cp = &w->parts[slot];
	cp->b.len = 0;
	if (cp->err) {
		if (!w->f.err)
			w->f.err = cp->err;
		return fail(w, TP_EOUTPUT);
	}
	return TP_OK;
}

static int cw_counter(void *ctx, const struct tp_sink_track *t, int64_t ts_ns, double value)
{
	struct cw *w = ctx;
	if (parts_done(w))
		return w->status;
	struct batch *bt;
	struct ev *e = new_ev(w, &bt, 0, 0);
	if (!e)
		return w->status;
	e->kind = EV_COUNTER;
	e->pid = t->pid;
	e->tid = t->tid;
	e->r.ts = ts_ns;
	e->value = value;
	e->r.name = t->full_name ? t->full_name : t->name;
	e->r.cat = t->unit && *t->unit ? t->unit : "value";
	return TP_OK;
}

static void workers_stop(struct cw *w);

/* Every batch is formatted and written (or, after an error, the workers are stopped) before
 * this returns: the drive frees the strings the batches point to right after. */
static int cw_end(void *ctx, int status)
{
	struct cw *w = ctx;
	if (!status)
		status = parts_done(w);
	if (!status)
		status = drain(w);
	workers_stop(w);
	if (status)
		return status;
	static const char tail[] =
	    "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"tpuprof\"}}\n";
	return write_bytes(w, tail, sizeof tail - 1);
}

/* Starts up to jobs - 1 workers (the sink's thread formats too); 0 = tp_jobs_default(). Any
 * failure just leaves fewer workers (none: formatting inline); the bytes are the same. */
static void workers_start(struct cw *w, int jobs)
{
	w->nthreads = tp_wsync_start(&w->sync, w->th, jobs, MAX_WORKERS, format_queued, w);
}

static void workers_stop(struct cw *w)
{
	if (!w->nthreads)
		return;
	pthread_mutex_lock(&w->sync.mu);
	/* Batches still queued after an error are not formatted: nothing will write them. */
	for (uint64_t q = w->head; q < w->tail; q++)
		if (w->slot[q % w->nslots].state == SLOT_QUEUED)
			w->slot[q % w->nslots].state = SLOT_FREE;
	pthread_mutex_unlock(&w->sync.mu);
	tp_wsync_stop(&w->sync, w->th, w->nthreads);
	w->nthreads = 0;
}

int tp_chrome_write_ex(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                       const struct tp_chrome_opts *opts, struct tp_diag *d)
{
	struct cw w;
	memset(&w, 0, sizeof w);
	w.path = path;
	w.d = d;
	w.first = 1;
	w.batch_events = opts && opts->batch_events ? opts->batch_events : BATCH_EVENTS;
	int st = tp_afile_open(&w.f, path, d);
	if (!st) {
		workers_start(&w, opts ? opts->jobs : 0);
		w.nslots = w.nthreads ? 2 * (size_t)w.nthreads + 1 : 1;
		w.slot = tp_calloc(w.nslots, sizeof *w.slot);
		if (!w.slot)
			st = tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
	}
	if (!st) {
		for (size_t i = 0; i < w.nslots; i++)
			tp_buf_init(&w.slot[i].b);
		struct tp_sink sink = {&w,         cw_begin, cw_track, cw_slice,
		                       cw_counter, NULL,     cw_end,   opts && opts->full_args};
		struct tp_sink_parts parts = {opts ? opts->jobs : 0,
		                              opts ? opts->part_slices : 0,
		                              cw_slots,
		                              cw_part_slice,
		                              cw_emit,
		                              cw_write_part,
		                              cw_emit2,
		                              0};
		st = tp_sink_drive_parts(p, a, &sink, &parts, d);
	}
	workers_stop(&w);
	if (!st)
		st = tp_afile_commit(&w.f, d);
	tp_afile_abort(&w.f);
	for (size_t i = 0; w.slot && i < w.nslots; i++) {
		tp_free(w.slot[i].ev);
		tp_free(w.slot[i].args);
		tp_free(w.slot[i].flows);
		tp_buf_free(&w.slot[i].b);
	}
	tp_free(w.slot);
	for (size_t i = 0; i < w.nparts; i++) {
		tp_free(w.parts[i].rec.ev);
		tp_free(w.parts[i].rec.args);
		tp_free(w.parts[i].rec.flows);
		tp_buf_free(&w.parts[i].b);
	}
	tp_free(w.parts);
	return st;
}

int tp_chrome_write(const struct tp_profile *p, const struct tp_analysis *a, const char *path,
                    int full_args, struct tp_diag *d)
{
	struct tp_chrome_opts o = {full_args, 1, 0, 0};
	return tp_chrome_write_ex(p, a, path, &o, d);
}

int tp_chrome_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                           const char *path, const struct tp_out_opts *o, struct tp_diag *d)
{
	struct tp_chrome_opts co = {o && o->trace_args_full, o ? o->jobs : 0, 0, 0};
	return tp_chrome_write_ex(p, a, path, &co, d);
}
