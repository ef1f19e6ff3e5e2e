/*
 * jobdiff.c — comparison of two jobs (contract in diff.h): the calls of both matched by
 * (device, call, pid), their totals and engine utilisation side by side, ranked by the change
 * of total time; rendered as job_diff.txt, job_diff.json and job_diff.html.
 */
#include "diff/diff_int.h"

#include <stdlib.h>
#include <string.h>

/* The order of (device, call, pid) keys: the job report's (tp_job_finish). */
static int key_cmp(const char *da, int64_t ca, int64_t pa, const char *db, int64_t cb, int64_t pb)
{
	int c = tp_job_natcmp(da, db);
	if (c)
		return c;
	if (ca != cb)
		return ca < cb ? -1 : 1;
	return pa < pb ? -1 : pa > pb;
}

static int cmp_key(const struct tp_job_entry *a, const struct tp_job_entry *b)
{
	return key_cmp(a->device, a->call, a->pid, b->device, b->call, b->pid);
}

static void side(struct tp_jobdiff_row *r, const struct tp_job_entry *e, int is_b)
{
	if (!e)
		return;
	r->device = e->device;
	r->call = e->call;
	r->pid = e->pid;
	if (is_b) {
		r->b_name = e->name;
		r->b_ok = e->ok;
		r->b_ns = e->ok ? e->total_ns : 0;
		r->b_imb = e->imbalance;
		memcpy(r->b_util, e->eng_util, sizeof r->b_util);
	} else {
		r->a_name = e->name;
		r->a_ok = e->ok;
		r->a_ns = e->ok ? e->total_ns : 0;
		r->a_imb = e->imbalance;
		memcpy(r->a_util, e->eng_util, sizeof r->a_util);
	}
}

/* Copies the row's strings into the diff's arena (the jobs may go away). */
static int own(struct tp_jobdiff *d, struct tp_jobdiff_row *r)
{
	r->device = tp_arena_strdup(&d->arena, r->device);
	r->a_name = tp_arena_strdup(&d->arena, r->a_name ? r->a_name : "");
	r->b_name = tp_arena_strdup(&d->arena, r->b_name ? r->b_name : "");
	return r->device && r->a_name && r->b_name ? TP_OK : TP_ENOMEM;
}

static int cmp_rank(const void *x, const void *y)
{
	const struct tp_jobdiff_row *a = x, *b = y;
	int c = tp_diff_cmp_change(a->delta_ns, b->delta_ns);
	return c ? c : key_cmp(a->device, a->call, a->pid, b->device, b->call, b->pid);
}

static void figures(struct tp_jobdiff *d, struct tp_jobdiff_row *r)
{
	r->status = r->a_name[0] && r->b_name[0] ? TP_DIFF_BOTH
	            : r->b_name[0]               ? TP_DIFF_APPEARED
	                                         : TP_DIFF_VANISHED;
	r->delta_ns = r->b_ns - r->a_ns;
	r->pct = r->a_ns ? (double)r->delta_ns * 100.0 / (double)r->a_ns : 0;
	if (r->status == TP_DIFF_APPEARED)
		d->appeared++;
	else if (r->status == TP_DIFF_VANISHED)
		d->vanished++;
	else if (!r->a_ok || !r->b_ok)
		d->failed++;
	else {
		d->both++;
		d->a_total_ns += r->a_ns;
		d->b_total_ns += r->b_ns;
	}
}

int tp_jobdiff_compute(const struct tp_job *a, const char *name_a, const struct tp_job *b,
                       const char *name_b, struct tp_jobdiff *out)
{
	memset(out, 0, sizeof *out);
	tp_arena_init(&out->arena, 0);
	out->a_name = tp_arena_strdup(&out->arena, name_a);
	out->b_name = tp_arena_strdup(&out->arena, name_b);
	out->rows = tp_calloc(a->n + b->n + 1, sizeof *out->rows);
	if (!out->rows || !out->a_name || !out->b_name)
		return TP_ENOMEM;
	size_t i = 0, k = 0;
	while (i < a->n || k < b->n) {
		int c = i == a->n ? 1 : k == b->n ? -1 : cmp_key(&a->e[i], &b->e[k]);
		struct tp_jobdiff_row *r = &out->rows[out->n++];
		side(r, c <= 0 ? &a->e[i] : NULL, 0);
		side(r, c >= 0 ? &b->e[k] : NULL, 1);
		i += c <= 0;
		k += c >= 0;
		if (own(out, r) != TP_OK)
			return TP_ENOMEM;
		figures(out, r);
	}
	qsort(out->rows, out->n, sizeof *out->rows, cmp_rank);
	out->total_pct = out->a_total_ns ? (double)(out->b_total_ns - out->a_total_ns) * 100.0 /
	                                       (double)out->a_total_ns
	                                 : 0;
	return TP_OK;
}

void tp_jobdiff_free(struct tp_jobdiff *d)
{
	tp_free(d->rows);
	tp_arena_free(&d->arena);
	memset(d, 0, sizeof *d);
}

/* ---- Renderings ----------------------------------------------------------------------------- */

static const char *row_status(const struct tp_jobdiff_row *r)
{
	if (r->status == TP_DIFF_APPEARED)
		return "appeared";
	if (r->status == TP_DIFF_VANISHED)
		return "vanished";
	return !r->a_ok && !r->b_ok ? "failed in A and B"
	       : !r->a_ok           ? "failed in A"
	       : !r->b_ok           ? "failed in B"
	                            : "both";
}

void tp_jobdiff_text(const struct tp_jobdiff *d, size_t top, struct tp_buf *b)
{
	size_t from = b->len;
	if (!top)
		top = 20;
	tp_buf_printf(b, "tpuprof diff of two jobs\nA: %s\nB: %s\n", d->a_name, d->b_name);
	tp_buf_printf(b,
	              "%zu calls on both sides (total %.3f -> %.3f us, %+.2f%%), %zu appeared, %zu "
	              "vanished, %zu failed on a side\n\n",
	              d->both, (double)d->a_total_ns / 1000, (double)d->b_total_ns / 1000,
	              d->total_pct, d->appeared, d->vanished, d->failed);
	tp_buf_puts(b, "Calls ranked by the change of total time\nDevice               Call       "
	               "A(us)        B(us)     Delta(us)   Delta%  TIU% A->B      Status\n");
	for (size_t i = 0; i < d->n && i < top; i++) {
		const struct tp_jobdiff_row *r = &d->rows[i];
		char dev[21];
		tp_text_copy(dev, sizeof dev, r->device, TP_TEXT_TERM | TP_TEXT_LINE);
		tp_buf_printf(b, "%-20s %5lld %12.3f %12.3f %+13.3f %+8.2f %5.1f->%-5.1f  %s\n",
		              dev, (long long)r->call, (double)r->a_ns / 1000,
		              (double)r->b_ns / 1000, (double)r->delta_ns / 1000, r->pct,
		              r->a_util[0] * 100, r->b_util[0] * 100, row_status(r));
	}
	if (d->n > top)
		tp_buf_printf(b, "... %zu more in job_diff.json\n", d->n - top);
	tp_buf_clean(b, from, TP_TEXT_TERM);
}

static void row_json(struct tp_buf *b, const struct tp_jobdiff_row *r)
{
	tp_buf_puts(b, "{\"device\":\"");
	tp_buf_json_str(b, r->device);
	tp_buf_printf(b, "\",\"call\":%lld,\"pid\":%lld", (long long)r->call, (long long)r->pid);
	tp_diff_json_ab_str(b, "_name", r->a_name, r->b_name);
	tp_buf_printf(
	    b, ",\"status\":\"%s\",\"a_ns\":%lld,\"b_ns\":%lld,\"delta_ns\":%lld,\"pct\":",
	    row_status(r), (long long)r->a_ns, (long long)r->b_ns, (long long)r->delta_ns);
	tp_buf_fixed(b, r->pct, 4);
	const double *u[2] = {r->a_util, r->b_util};
	for (int s = 0; s < 2; s++) {
		tp_buf_printf(b, ",\"%c_util\":{", s ? 'b' : 'a');
		for (int k = 0; k < TP_ENGINES; k++) {
			tp_buf_printf(b, "%s\"%s\":", k ? "," : "",
			              tp_track_kind_name((enum tp_track_kind)k));
			tp_buf_fixed(b, u[s][k], 6);
		}
		tp_buf_putc(b, '}');
	}
	tp_diff_json_ab_fixed(b, "_imbalance", r->a_imb, r->b_imb, 6);
	tp_buf_putc(b, '}');
}

void tp_jobdiff_json(const struct tp_jobdiff *d, struct tp_buf *b)
{
	tp_buf_puts(b, "{\"tool\":\"tpuprof\",\"version\":\"" TP_VERSION "\"");
	tp_diff_json_ab_str(b, "", d->a_name, d->b_name);
	tp_buf_printf(b,
	              ",\"both\":%zu,\"appeared\":%zu,\"vanished\":%zu,\"failed\":%zu,"
	              "\"a_total_ns\":%lld,\"b_total_ns\":%lld,\"total_pct\":",
	              d->both, d->appeared, d->vanished, d->failed, (long long)d->a_total_ns,
	              (long long)d->b_total_ns);
	tp_buf_fixed(b, d->total_pct, 4);
	tp_buf_puts(b, ",\"calls\":[");
	for (size_t i = 0; i < d->n; i++) {
		if (i)
			tp_buf_putc(b, ',');
		row_json(b, &d->rows[i]);
	}
	tp_buf_puts(b, "]}\n");
}

static const char jobdiff_page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta "
    "http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
    "'unsafe-inline'; script-src 'unsafe-inline'\"><title>tpuprof diff of two jobs</title>"
    "<style>body{font:13px system-ui,sans-serif;margin:16px}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:2px 6px}th{background:#f0f0f0;cursor:pointer}"
    "td.n{text-align:right}tr.up td{background:#fde2e2}tr.down td{background:#dff5e1}"
    "</style></head><body><h1>tpuprof diff of two jobs</h1><p id=\"sum\"></p>"
    "<table id=\"rows\"></table><script type=\"application/json\" id=\"d\">";

static const char jobdiff_page_tail[] =
    "</script><script>(function(){var D=JSON.parse(document.getElementById('d').textContent);"
    "function el(t,x){var e=document.createElement(t);e.textContent=x;return e;}"
    "document.getElementById('sum').textContent='A: '+D.a+' \\u2014 B: '+D.b+' \\u2014 '+"
    "D.both+' calls on both sides, total '+(D.total_pct>=0?'+':'')+D.total_pct.toFixed(2)+"
    "'%, '+D.appeared+' appeared, '+D.vanished+' vanished, '+D.failed+' failed on a side';"
    "var C=[['Device','device'],['Call','call'],['A (\\u00b5s)','a_ns'],['B (\\u00b5s)','b_ns'],"
    "['\\u0394 (\\u00b5s)','delta_ns'],['\\u0394 %','pct'],['Status','status'],"
    "['A dump','a_name'],['B dump','b_name']],key=null,dir=1;"
    "function draw(){var t=document.getElementById('rows');t.textContent='';"
    "var h=document.createElement('tr');C.forEach(function(c){var th=el('th',c[0]);"
    "th.onclick=function(){dir=key===c[1]?-dir:1;key=c[1];draw();};h.appendChild(th);});"
    "t.appendChild(h);var r=D.calls.slice();if(key)r.sort(function(a,b){var x=a[key],"
    "y=b[key];return (typeof x==='number'?x-y:String(x).localeCompare(String(y)))*dir;});"
    "r.forEach(function(c){var tr=document.createElement('tr');"
    "if(c.delta_ns>0)tr.className='up';else if(c.delta_ns<0)tr.className='down';"
    "C.forEach(function(col){var v=c[col[1]];if(/_ns$/.test(col[1]))v=(v/1000).toFixed(3);"
    "else if(col[1]==='pct')v=v.toFixed(2);var td=el('td',String(v));"
    "if(typeof c[col[1]]==='number')td.className='n';tr.appendChild(td);});"
    "t.appendChild(tr);});}draw();})();</script></body></html>\n";

void tp_jobdiff_html(const struct tp_jobdiff *d, struct tp_buf *b)
{
	tp_buf_puts(b, jobdiff_page_head);
	tp_jobdiff_json(d, b); /* tp_buf_json_str escapes "</": nothing closes the script */
	tp_buf_puts(b, jobdiff_page_tail);
}
