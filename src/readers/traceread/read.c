/*
 * read.c — the Chrome-trace reader's entry points and top level (contract and model mapping in
 * traceread.h; user documentation in docs/input-chrome-trace.md).
 *
 * The top level (an array, or an object whose "traceEvents" member is the array) is walked
 * value by value; members other than traceEvents are skipped by trace_src_scan_value (bracket
 * counting with string awareness). Each event object is parsed in one pass straight from the
 * source's window by json.c; when the parse runs out of bytes, the window is refilled — grown
 * only for an event larger than it — and the event parsed again. The args of an event are
 * parsed strictly in a second, short pass when they are stored (event.c). Nothing of the file
 * is retained beyond the current event: strings go into the profile's string table, B/E and
 * b/e matching keeps only the open events, flow points are kept until the end to pair them.
 *
 * Owns, for one call: the read buffer, the scratch string buffer, the hash maps from
 * (pid, tid) / (pid, cat) / (pid, series) to model indices, the open-event stacks and the flow
 * points; all are released before returning. The profile goes to the caller.
 */
#include "readers/traceread/traceread_int.h"

#include "model/merge.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <zlib.h>

/* ---------------------------------------------------------------------------------------- */
/* Top level                                                                                */
/* ---------------------------------------------------------------------------------------- */

static int scan_err(struct trace_rd *r, int sc, const char *what)
{
	if (sc == SCAN_NOMEM)
		return tp_diag_at(r->d, TP_ENOMEM, r->path, r->s.base + r->s.pos,
		                  "out of memory (or a single %s larger than 1 GiB)", what);
	return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos, "malformed %s", what);
}

/* Reads the event array whose '[' is at pos. Each event is parsed in one pass straight from
 * the buffer; when the parse runs out of bytes, the buffer is refilled (grown only for an
 * event larger than it) and the event parsed again. */
static int read_events(struct trace_rd *r)
{
	r->s.pos++; /* '[' */
	for (;;) {
		int c = trace_src_skip_ws(&r->s, 1);
		if (c == -2)
			return scan_err(r, SCAN_NOMEM, "event");
		if (c == -1) {
			r->truncated = 1;
			r->trunc_off = r->s.base + r->s.pos;
			return TP_OK;
		}
		if (c == ']') {
			r->s.pos++;
			return TP_OK;
		}
		if (c != '{')
			return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
			                  "expected a trace event object, found '%c'",
			                  c >= 0x20 && c < 0x7f ? c : '?');
		for (;;) {
			const char *q = (const char *)r->s.buf + r->s.pos;
			struct json_cur j = {q, (const char *)r->s.buf + r->s.len, NULL, NULL, 0,
			                     1};
			struct trace_ev e;
			memset(&e, 0, sizeof e);
			if (trace_json_event(&j, &e) == 0) {
				size_t n = (size_t)(j.p - q);
				int st = trace_event(r, q, n, &e);
				if (st)
					return st;
				r->s.pos += n;
				break;
			}
			if (!j.short_)
				return tp_diag_at(r->d, TP_EFORMAT, r->path, off_of(r, j.err_at),
				                  "bad JSON in trace event: %s", j.err);
			long m = trace_src_more(&r->s);
			if (m < 0)
				return scan_err(r, SCAN_NOMEM, "event");
			if (m == 0) {
				r->truncated = 1;
				r->trunc_off = r->s.base + r->s.pos;
				return TP_OK;
			}
		}
	}
}

/* Kineto's "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8}. */
static int dist_member(void *ctx, const struct json_val *k, const struct json_val *v)
{
	struct trace_rd *r = ctx;
	int64_t x;
	if (v->kind != 'n' || tp_parse_i64(v->p, v->n, &x) != 0 || x < 0)
		return 0;
	if (json_key_is(k, "rank"))
		r->rank = x;
	else if (json_key_is(k, "world_size"))
		r->world_size = x;
	return 0;
}

/* The rank and world size of a distributed run from the object at q (n bytes); a malformed
 * object is ignored: it describes the run, it holds no events. */
static void read_distributed(struct trace_rd *r, const char *q, size_t n)
{
	struct json_cur j = {q, q + n, NULL, NULL, 0, 0};
	struct json_val v = {q, n, 'o', 0};
	trace_json_members(&j, &v, dist_member, r);
}

static int read_top(struct trace_rd *r)
{
	/* UTF-8 byte order mark. */
	if (trace_src_peek(&r->s, 0) == 0xEF && trace_src_peek(&r->s, 1) == 0xBB &&
	    trace_src_peek(&r->s, 2) == 0xBF)
		r->s.pos += 3;
	int c = trace_src_skip_ws(&r->s, 0);
	if (c == -2)
		return scan_err(r, SCAN_NOMEM, "value");
	if (c == '[')
		return read_events(r);
	if (c != '{')
		return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
		                  "not a Chrome trace: expected '[' or '{'");
	r->s.pos++;
	int found = 0;
	for (;;) {
		c = trace_src_skip_ws(&r->s, 1);
		if (c == -2)
			return scan_err(r, SCAN_NOMEM, "value");
		if (c == -1) {
			if (found) {
				/* Cut after the events: nothing lost. */
				return TP_OK;
			}
			break;
		}
		if (c == '}')
			break;
		if (c != '"')
			return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
			                  "expected a member name in the trace object");
		size_t n;
		int sc = trace_src_scan_value(&r->s, &n);
		if (sc == SCAN_EOF)
			break;
		if (sc)
			return scan_err(r, sc, "member name");
		int is_events = n == 13 && memcmp(r->s.buf + r->s.pos, "\"traceEvents\"", 13) == 0;
		int is_dist =
		    n == 17 && memcmp(r->s.buf + r->s.pos, "\"distributedInfo\"", 17) == 0;
		r->s.pos += n;
		c = trace_src_skip_ws(&r->s, 0);
		if (c != ':') {
			if (c == -1)
				break;
			return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
			                  "expected ':' after a member name");
		}
		r->s.pos++;
		c = trace_src_skip_ws(&r->s, 0);
		if (c == -1)
			break;
		if (is_events && !found) {
			if (c != '[')
				return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
				                  "\"traceEvents\" is not an array");
			found = 1;
			int st = read_events(r);
			if (st || r->truncated)
				return st;
			continue;
		}
		sc = trace_src_scan_value(&r->s, &n);
		if (sc == SCAN_EOF)
			break;
		if (sc)
			return scan_err(r, sc, "value");
		if (is_dist && c == '{')
			read_distributed(r, (const char *)r->s.buf + r->s.pos, n);
		r->s.pos += n;
	}
	if (!found)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
		                  "not a Chrome trace: the object has no \"traceEvents\" array");
	return TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Finishing                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Closes the B and b events still open at the last timestamp. */
static int close_open(struct trace_rd *r)
{
	for (size_t t = 0; t < r->nstk; t++)
		for (size_t k = r->stk[t].n; k-- > 0;) {
			struct open_ev *o = &r->stk[t].v[k];
			r->unclosed_b++;
			if (trace_add_slice(r, o->track, o->ts, r->max_ns, o->name,
			                    trace_event_type(r, o->name, o->cat), o->args))
				return TP_ENOMEM;
		}
	for (size_t k = 0; k < r->nasync; k++) {
		struct open_ev *o = &r->async_open[k];
		r->unclosed_async++;
		if (trace_add_slice(r, o->track, o->ts, r->max_ns, o->name, r->ty_async, o->args))
			return TP_ENOMEM;
	}
	return TP_OK;
}

/* Devices and tracks take the names their M events gave. */
static void apply_names(struct trace_rd *r)
{
	struct tp_profile *p = r->p;
	for (size_t i = 0; i < r->devices.cap; i++) {
		const struct trace_map_ent *d = &r->devices.e[i];
		int32_t nm;
		if (d->val1 && trace_map_get(&r->pname, d->key, &nm))
			p->devices[d->val1 - 1].name = (uint32_t)nm;
	}
	for (size_t i = 0; i < r->tracks.cap; i++) {
		const struct trace_map_ent *t = &r->tracks.e[i];
		int32_t nm;
		if (t->val1 && trace_map_get(&r->tname, t->key, &nm))
			p->tracks[t->val1 - 1].name = (uint32_t)nm;
	}
}

/* Re-base: the earliest event at 0 (the base goes to *base). The whole span must fit in int64
 * ns. */
static int rebase(struct trace_rd *r, int64_t *base_out)
{
	struct tp_profile *p = r->p;
	int64_t base = r->min_ns, span;
	if (__builtin_sub_overflow(r->max_ns, r->min_ns, &span))
		return tp_diag_at(r->d, TP_ERANGE, r->path, r->s.base + r->s.pos,
		                  "timestamps span more than 2^63 ns (%lld .. %lld ns)",
		                  (long long)r->min_ns, (long long)r->max_ns);
	for (size_t t = 0; t < p->num_tracks; t++)
		for (size_t k = 0; k < p->tracks[t].count; k++) {
			p->tracks[t].slices[k].start_ns -= base; /* the end moves with the start */
		}
	for (size_t c = 0; c < p->num_counters; c++)
		for (size_t k = 0; k < p->counters[c].count; k++)
			p->counters[c].samples[k].ts_ns -= base;
	*base_out = base;
	return TP_OK;
}

static void write_notes(struct trace_rd *r)
{
	struct tp_profile *p = r->p;
	p->stats.files_read = 1;
	p->stats.records_read = r->events;
	p->stats.records_dropped =
	    r->no_ph + r->no_ts + r->unknown_ph + r->unmatched_e + r->unmatched_async;
	if (r->truncated)
		tp_profile_note(p,
		                "trace truncated at byte %llu (the writing tool was probably "
		                "killed): events up to there were read",
		                (unsigned long long)r->trunc_off);
	/* The counts with a note of their own, in the order the notes are written. */
	const struct {
		uint64_t n;
		const char *fmt;
	} counted[] = {
	    {r->unmatched_e, "%llu 'E' events without a matching 'B' ignored"},
	    {r->unclosed_b, "%llu 'B' events never closed: ended at the last timestamp"},
	    {r->unmatched_async, "%llu async 'e' events without a matching 'b' ignored"},
	    {r->unclosed_async, "%llu async 'b' events never closed: ended at the last timestamp"},
	    {r->x_no_dur, "%llu 'X' events without a usable dur read as 0 long"},
	    {r->neg_dur, "%llu events with a negative dur read as 0 long"},
	};
	for (size_t i = 0; i < sizeof counted / sizeof *counted; i++)
		if (counted[i].n)
			tp_profile_note(p, counted[i].fmt, (unsigned long long)counted[i].n);
	if (r->no_ph || r->no_ts || r->bad_ts)
		tp_profile_note(p,
		                "%llu events without a phase and %llu without a usable ts skipped",
		                (unsigned long long)r->no_ph, (unsigned long long)r->no_ts);
	if (r->unknown_ph)
		tp_profile_note(p, "%llu events of unsupported phases skipped",
		                (unsigned long long)r->unknown_ph);
	if (r->n_flow)
		tp_profile_note(p,
		                "%llu flow events (s/t/f) read: %llu flows paired by id, %llu ends "
		                "without a start",
		                (unsigned long long)r->n_flow, (unsigned long long)r->flows_matched,
		                (unsigned long long)r->flows_unmatched);
	if (r->flows_corr)
		tp_profile_note(p,
		                "%llu launch flows from args.correlation (runtime call -> device "
		                "activity without an s/f flow)",
		                (unsigned long long)r->flows_corr);
	if (r->utf8_fixed)
		tp_profile_note(p, "%llu invalid UTF-8 sequences replaced by U+FFFD",
		                (unsigned long long)r->utf8_fixed);
	if (r->args_dropped)
		tp_profile_note(p, "%llu event args past %d per event dropped",
		                (unsigned long long)r->args_dropped, MAX_ARGS);
}

/* Closes what is still open, names devices/tracks, re-bases time, pairs flows and writes the
 * notes. */
static int finish(struct trace_rd *r)
{
	struct tp_profile *p = r->p;
	if (close_open(r))
		return TP_ENOMEM;
	if (tp_profile_slice_count(p) == 0 && p->num_counters == 0 && r->truncated)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, r->trunc_off,
		                  "trace truncated before its first complete event");
	if (tp_profile_slice_count(p) == 0 && p->num_counters == 0)
		return tp_diag_at(r->d, TP_EFORMAT, r->path, r->s.base + r->s.pos,
		                  "no trace events (%llu read, none with a usable phase and time)",
		                  (unsigned long long)r->events);
	apply_names(r);
	int64_t base = 0;
	int st = rebase(r, &base);
	if (st)
		return st;
	if (trace_pair_flows(r, base))
		return TP_ENOMEM;
	if (trace_link_correlations(r))
		return TP_ENOMEM;
	char num[32];
	snprintf(num, sizeof num, "%lld", (long long)base);
	tp_profile_set_meta(p, TP_META_TRACE_BASE_NS, num);
	snprintf(num, sizeof num, "%llu", (unsigned long long)r->events);
	tp_profile_set_meta(p, "chrome_trace.events", num);
	if (r->rank >= 0) {
		snprintf(num, sizeof num, "%lld", (long long)r->rank);
		tp_profile_set_meta(p, TP_META_RANK, num);
	}
	if (r->world_size >= 0) {
		snprintf(num, sizeof num, "%lld", (long long)r->world_size);
		tp_profile_set_meta(p, TP_META_WORLD_SIZE, num);
	}
	write_notes(r);
	return p->oom ? TP_ENOMEM : TP_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Entry points                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* The input's error when the gzip layer failed: it replaces whatever the parse made of the
 * early end of the inflated text. */
static int gzip_error(struct trace_rd *r, const char *path)
{
	if (r->d)
		memset(r->d, 0, sizeof *r->d);
	return tp_diag_at(r->d, r->s.zerr, path, r->s.zoff, "%s", r->s.zmsg);
}

/* Reads the trace from r->s (set up) into *out; `path` names the input. The offsets in the
 * JSON layer's messages are into the text it reads, so for gzip input they name the input
 * "<path> (gunzipped)"; the gzip layer's own errors give offsets into the file. */
static int run(struct trace_rd *r, const char *path, struct tp_profile **out)
{
	int st = TP_OK;
	char *gz_name = NULL;
	*out = NULL;
	r->path = path;
	if (r->s.gz) {
		size_t n = strlen(path) + sizeof " (gunzipped)";
		gz_name = tp_malloc(n);
		if (!gz_name)
			return tp_diag_set(r->d, TP_ENOMEM, "out of memory");
		snprintf(gz_name, n, "%s (gunzipped)", path);
		r->path = gz_name;
	}
	r->p = tp_profile_new();
	if (!r->p) {
		tp_free(gz_name);
		return tp_diag_set(r->d, TP_ENOMEM, "out of memory");
	}
	r->p->arch = TP_ARCH_CPU;
	r->p->source = tp_profile_str(r->p, "chrome-trace");
	r->ty_op = tp_profile_str(r->p, TP_CAP_TYPE_OP);
	r->k_cat = tp_profile_str(r->p, "cat");
	r->k_optype = tp_profile_str(r->p, TP_CAP_KEY_OP_TYPE);
	r->ty_instant = tp_profile_str(r->p, "instant");
	r->ty_step = tp_profile_str(r->p, TP_CAP_TYPE_STEP);
	r->ty_async = tp_profile_str(r->p, "async");
	r->ty_work[TP_WORK_OP] = r->ty_op;
	r->ty_work[TP_WORK_STEP] = r->ty_step;
	r->rank = r->world_size = -1;
	tp_buf_init(&r->tmp);
	st = read_top(r);
	if (!st)
		trace_src_drain(&r->s);
	if (r->s.zerr)
		st = gzip_error(r, path);
	else if (!st && r->s.ioerr && r->s.gz)
		st = tp_diag_set(r->d, TP_EIO, "%s: read error", path);
	else if (!st && r->s.ioerr)
		st = tp_diag_at(r->d, TP_EIO, r->path, r->s.base + r->s.len, "read error");
	if (!st)
		st = finish(r);
	if (!st)
		st = tp_profile_finish(r->p);
	if (st == TP_ENOMEM && r->d && !r->d->msg[0])
		tp_diag_set(r->d, TP_ENOMEM, "%s: out of memory", r->path);
	tp_buf_free(&r->tmp);
	trace_map_free(&r->tracks);
	trace_map_free(&r->devices);
	trace_map_free(&r->async_tracks);
	trace_map_free(&r->counters);
	trace_map_free(&r->pname);
	trace_map_free(&r->tname);
	for (size_t t = 0; t < r->nstk; t++)
		tp_free(r->stk[t].v);
	TP_FREE_ALL(r->stk, r->async_open, r->fstart, r->fend, gz_name);
	if (st) {
		tp_profile_free(r->p);
		return st;
	}
	*out = r->p;
	return TP_OK;
}

int tp_traceread_parse(const uint8_t *data, size_t size, const char *display,
                       struct tp_profile **out, struct tp_diag *d)
{
	struct trace_rd r;
	memset(&r, 0, sizeof r);
	r.d = d;
	*out = NULL;
	int st = trace_src_init_mem(&r.s, data, size);
	if (st)
		st = tp_diag_set(d, st, "out of memory");
	else
		st = run(&r, display, out);
	trace_src_free(&r.s);
	return st;
}

int tp_traceread_read(const char *path, struct tp_profile **out, struct tp_diag *d)
{
	*out = NULL;
	int std_in = strcmp(path, "-") == 0;
	FILE *fp = std_in ? stdin : fopen(path, "rb");
	if (!fp)
		return tp_diag_set(d, errno == ENOENT ? TP_ENOTFOUND : TP_EIO, "%s: %s", path,
		                   strerror(errno));
	struct trace_rd r;
	memset(&r, 0, sizeof r);
	r.d = d;
	int st = trace_src_init_file(&r.s, fp);
	if (st)
		st = tp_diag_set(d, st, "out of memory");
	else
		st = run(&r, std_in ? "<stdin>" : path, out);
	trace_src_free(&r.s);
	if (!std_in)
		fclose(fp);
	return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Probe                                                                                     */
/* ---------------------------------------------------------------------------------------- */

enum { PROBE = 65536 }; /* bytes looked at: of the file, and of the text a gzip file holds */

/* Writes "<prefix><what>" into why[0..n) (when why) and returns 0. */
static int say(char *why, size_t n, const char *prefix, const char *what)
{
	if (why && n)
		snprintf(why, n, "%s%s", prefix, what);
	return 0;
}

/* Whether the text buf[0..n) starts like a Chrome trace: after whitespace and an optional
 * UTF-8 BOM, '[' or '{' with "traceEvents" named within it. Else 0 with why filled. */
static int probe_text(char *buf, size_t n, const char *prefix, char *why, size_t wn)
{
	buf[n] = 0;
	size_t i = 0;
	if (n >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB &&
	    (unsigned char)buf[2] == 0xBF)
		i = 3;
	while (i < n && is_ws((unsigned char)buf[i]))
		i++;
	if (i >= n)
		return say(why, wn, prefix, n ? "holds only white space" : "is empty");
	if (buf[i] == '[')
		return 1;
	if (buf[i] != '{') {
		char what[80];
		unsigned char c = (unsigned char)buf[i];
		if (c > 0x20 && c < 0x7f)
			snprintf(what, sizeof what, "starts with '%c', not '[' or '{'", c);
		else
			snprintf(what, sizeof what, "starts with byte 0x%02x, not '[' or '{'", c);
		return say(why, wn, prefix, what);
	}
	for (size_t k = i; k + 13 <= n; k++)
		if (buf[k] == '"' && memcmp(buf + k, "\"traceEvents\"", 13) == 0)
			return 1;
	return say(why, wn, prefix, "is a JSON object without \"traceEvents\" in its first 64 KiB");
}

/* The first text of the gzip data raw[0..n) into text (at most PROBE - 1 bytes); -1 when not
 * even that inflates (zlib's reason in *msg). */
static long probe_inflate(const uint8_t *raw, size_t n, char *text, const char **msg)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		*msg = "out of memory";
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)raw;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)text;
	z.avail_out = PROBE - 1;
	int zr = inflate(&z, Z_SYNC_FLUSH);
	long got = (long)(PROBE - 1 - z.avail_out);
	if (got == 0 && zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
		*msg = z.msg ? z.msg : "inflate failed";
		got = -1;
	}
	inflateEnd(&z);
	return got;
}

int tp_traceread_sniff(const char *path, char *why, size_t n)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return say(why, n, "", "is not a regular file");
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return say(why, n, "cannot be opened: ", strerror(errno));
	char *raw = tp_malloc(PROBE), *text = tp_malloc(PROBE);
	int yes = 0;
	if (!raw || !text) {
		say(why, n, "", "cannot be looked at (out of memory)");
		goto out;
	}
	size_t got = fread(raw, 1, PROBE - 1, fp);
	if (got < 2 || (unsigned char)raw[0] != 0x1f || (unsigned char)raw[1] != 0x8b) {
		yes = probe_text(raw, got, "it ", why, n);
		goto out;
	}
	const char *msg = NULL;
	long len = probe_inflate((const uint8_t *)raw, got, text, &msg);
	if (len < 0)
		say(why, n, "it is gzip data that does not inflate: ", msg);
	else
		yes = probe_text(text, (size_t)len, "it is gzip data, and the text it holds ", why,
		                 n);
out:
	fclose(fp);
	tp_free(raw);
	tp_free(text);
	return yes;
}

int tp_traceread_probe(const char *path)
{
	return tp_traceread_sniff(path, NULL, 0);
}
