/*
 * diff_out.c — the three renderings of a struct tp_diff (contract in diff.h): diff.txt for
 * terminals (input strings with control bytes shown as \xNN), diff.json (units in key names,
 * exact µs from integer ns) and diff.html (self-contained: inline CSS and script, the data as
 * escaped JSON in a <script type="application/json"> block, strings inserted as text only).
 */
#include "diff/diff_int.h"

#include <string.h>

static const char *status_name(uint8_t s)
{
	return s == TP_DIFF_APPEARED ? "appeared" : s == TP_DIFF_VANISHED ? "vanished" : "both";
}

/* Terminal-safe copy of an input string: C0 controls, DEL and the C1 range (as UTF-8 U+0080..
 * U+009F) become \xNN so no escape sequence reaches the terminal. */
static void put_term(struct tp_buf *b, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	for (; *p && n < max; p++, n++) {
		if (*p < 0x20 || *p == 0x7f)
			tp_buf_printf(b, "\\x%02x", *p);
		else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
			tp_buf_printf(b, "\\x%02x", p[1]);
			p++;
		} else
			tp_buf_putc(b, (char)*p);
	}
	if (*p)
		tp_buf_puts(b, "...");
}

static void put_us_signed(struct tp_buf *b, int64_t ns)
{
	if (ns > 0)
		tp_buf_putc(b, '+');
	tp_buf_ns_as_us(b, ns);
}

/* A right-aligned column: formats into a scratch buffer first. */
static void col_us(struct tp_buf *b, int64_t ns, int sign, int width)
{
	struct tp_buf t;
	tp_buf_init(&t);
	if (sign)
		put_us_signed(&t, ns);
	else
		tp_buf_ns_as_us(&t, ns);
	for (int i = (int)t.len; i < width; i++)
		tp_buf_putc(b, ' ');
	if (t.data)
		tp_buf_put(b, t.data, t.len);
	tp_buf_free(&t);
}

static const char *noise_word(int within)
{
	return within < 0 ? "" : within ? ", within noise" : ", beyond noise";
}

/* "<what>: A 60930.466 +/- 4030.579 us -> B 72957.950 +/- 6161.937 us (+19.74 %, beyond
 * noise)" */
static void accel_line(struct tp_buf *b, const char *what, int64_t a, int64_t sa, int64_t bv,
                       int64_t sb, double pct, int within)
{
	tp_buf_printf(b, "  %s: A ", what);
	tp_buf_ns_as_us(b, a);
	tp_buf_puts(b, " +/- ");
	tp_buf_ns_as_us(b, sa);
	tp_buf_puts(b, " us -> B ");
	tp_buf_ns_as_us(b, bv);
	tp_buf_puts(b, " +/- ");
	tp_buf_ns_as_us(b, sb);
	tp_buf_puts(b, " us (");
	if (pct > 0)
		tp_buf_putc(b, '+');
	tp_buf_fixed(b, pct, 2);
	tp_buf_printf(b, " %%%s)\n", noise_word(within));
}

/* The accelerator comparison: host step and device time per step side by side. */
static void accel_text(const struct tp_diff *d, struct tp_buf *b)
{
	if (!d->have_accel)
		return;
	const struct tp_diff_accel *a = &d->a.accel, *x = &d->b.accel;
	tp_buf_printf(b, "\nAccelerator (median per step, +/- half-range; %zu and %zu steps)\n",
	              a->steps, x->steps);
	accel_line(b, "host step  ", a->step_ns, a->step_spread_ns, x->step_ns, x->step_spread_ns,
	           d->step_pct, d->step_within_noise);
	accel_line(b, "device time", a->device_ns, a->device_spread_ns, x->device_ns,
	           x->device_spread_ns, d->device_pct, d->device_within_noise);
	tp_buf_puts(b, "verdict: ");
	put_term(b, d->verdict, 600);
	tp_buf_putc(b, '\n');
}

void tp_diff_text(const struct tp_diff *d, size_t top, struct tp_buf *b)
{
	if (!top)
		top = 20;
	const struct tp_diff_side *sides[2] = {&d->a, &d->b};
	tp_buf_puts(b, "tpuprof diff\n");
	for (int s = 0; s < 2; s++) {
		const struct tp_diff_side *sd = sides[s];
		tp_buf_printf(b, "%c: ", s ? 'B' : 'A');
		put_term(b, sd->name, 200);
		tp_buf_puts(b, " (");
		put_term(b, sd->source, 60);
		tp_buf_puts(b, ")  total ");
		tp_buf_ns_as_us(b, sd->total_ns);
		tp_buf_puts(b, " us");
		if (d->noise_aware) {
			tp_buf_printf(b, " (median of %zu steps, range ", sd->steps);
			tp_buf_ns_as_us(b, sd->step_min_ns);
			tp_buf_puts(b, " .. ");
			tp_buf_ns_as_us(b, sd->step_max_ns);
			tp_buf_puts(b, " us)");
		}
		tp_buf_putc(b, '\n');
	}
	tp_buf_puts(b, "total change: ");
	put_us_signed(b, d->total_delta_ns);
	tp_buf_puts(b, " us (");
	if (d->total_pct > 0)
		tp_buf_putc(b, '+');
	tp_buf_fixed(b, d->total_pct, 2);
	tp_buf_puts(b, "%)");
	if (d->noise_aware)
		tp_buf_puts(b, d->within_noise ? "  within noise" : "  beyond noise");
	tp_buf_putc(b, '\n');
	accel_text(d, b);

	static const char *const titles[] = {"Layers", "Operator types", "Operators",
	                                     "Command types"};
	for (int k = 0; k < TP_DIFF_KINDS; k++) {
		size_t n = d->nrows[k];
		if (!n)
			continue;
		size_t appeared = 0, vanished = 0;
		for (size_t i = 0; i < n; i++) {
			appeared += d->rows[k][i].status == TP_DIFF_APPEARED;
			vanished += d->rows[k][i].status == TP_DIFF_VANISHED;
		}
		tp_buf_printf(b,
		              "\n%s, ranked by impact (%zu of %zu; %zu appeared, %zu vanished)%s\n",
		              titles[k], n < top ? n : top, n, appeared, vanished,
		              d->noise_aware ? ", per-step medians (~ = within noise: |delta| <= "
		                               "the larger half-range of the per-step times)"
		                             : "");
		tp_buf_printf(b, "%4s %14s %9s %8s %14s %14s  %s\n", "rank", "delta(us)", "delta%",
		              "share", "A(us)", "B(us)", "name");
		for (size_t i = 0; i < n && i < top; i++) {
			const struct tp_diff_row *r = &d->rows[k][i];
			tp_buf_printf(b, "%4zu ", i + 1);
			col_us(b, r->delta_ns, 1, 14);
			if (r->status == TP_DIFF_BOTH && r->a_ns) {
				char pct[32];
				snprintf(pct, sizeof pct, "%+.2f%%", r->pct);
				tp_buf_printf(b, " %9s", pct);
			} else
				tp_buf_printf(b, " %9s",
				              r->status == TP_DIFF_APPEARED   ? "new"
				              : r->status == TP_DIFF_VANISHED ? "gone"
				                                              : "-");
			char share[32];
			snprintf(share, sizeof share, "%.1f%%", r->share * 100);
			tp_buf_printf(b, " %8s ", d->total_delta_ns ? share : "-");
			col_us(b, r->a_ns, 0, 14);
			tp_buf_putc(b, ' ');
			col_us(b, r->b_ns, 0, 14);
			tp_buf_puts(b, "  ");
			put_term(b, r->label, 120);
			if (r->within_noise == 1)
				tp_buf_puts(b, "  ~");
			if (r->a_count != r->b_count && r->status == TP_DIFF_BOTH)
				tp_buf_printf(b, "  [count %llu -> %llu]",
				              (unsigned long long)r->a_count,
				              (unsigned long long)r->b_count);
			tp_buf_putc(b, '\n');
		}
	}
	if (d->nengines) {
		tp_buf_puts(
		    b,
		    "\nEngines (utilisation = busy / total time; DDR = average DMA bandwidth)\n");
		for (size_t i = 0; i < d->nengines; i++) {
			const struct tp_diff_engine *e = &d->engines[i];
			tp_buf_printf(b, "  %-22s util %6.2f%% -> %6.2f%% (%+.2f pp)", e->name,
			              e->a_util * 100, e->b_util * 100,
			              (e->b_util - e->a_util) * 100);
			if (e->a_gbps != 0 || e->b_gbps != 0)
				tp_buf_printf(b, "  DDR %.3f -> %.3f GB/s (%+.3f)", e->a_gbps,
				              e->b_gbps, e->b_gbps - e->a_gbps);
			tp_buf_putc(b, '\n');
		}
	}
}

static void json_str(struct tp_buf *b, const char *s)
{
	tp_buf_putc(b, '"');
	tp_buf_json_str(b, s ? s : "");
	tp_buf_putc(b, '"');
}

/* `,"KEY":` and ns as microseconds (tp_buf_ns_as_us). */
static void json_us(struct tp_buf *b, const char *key, int64_t ns)
{
	tp_buf_printf(b, ",\"%s\":", key);
	tp_buf_ns_as_us(b, ns);
}

void tp_diff_json_ab_us(struct tp_buf *b, const char *suffix, int64_t a_ns, int64_t b_ns)
{
	tp_buf_printf(b, ",\"a%s\":", suffix);
	tp_buf_ns_as_us(b, a_ns);
	tp_buf_printf(b, ",\"b%s\":", suffix);
	tp_buf_ns_as_us(b, b_ns);
}

void tp_diff_json_ab_fixed(struct tp_buf *b, const char *suffix, double a, double bv, int decimals)
{
	tp_buf_printf(b, ",\"a%s\":", suffix);
	tp_buf_fixed(b, a, decimals);
	tp_buf_printf(b, ",\"b%s\":", suffix);
	tp_buf_fixed(b, bv, decimals);
}

void tp_diff_json_ab_str(struct tp_buf *b, const char *suffix, const char *a, const char *bv)
{
	tp_buf_printf(b, ",\"a%s\":", suffix);
	json_str(b, a);
	tp_buf_printf(b, ",\"b%s\":", suffix);
	json_str(b, bv);
}

/* The end of an accel object: `,"bottleneck":...,"verdict":...}`. */
static void json_verdict(struct tp_buf *b, const char *bound, const char *verdict)
{
	tp_buf_puts(b, ",\"bottleneck\":");
	json_str(b, bound);
	tp_buf_puts(b, ",\"verdict\":");
	json_str(b, verdict);
	tp_buf_putc(b, '}');
}

static void json_side(struct tp_buf *b, const struct tp_diff_side *sd)
{
	tp_buf_puts(b, "{\"name\":");
	json_str(b, sd->name);
	tp_buf_puts(b, ",\"source\":");
	json_str(b, sd->source);
	json_us(b, "total_us", sd->total_ns);
	tp_buf_printf(b, ",\"steps\":%zu", sd->steps);
	json_us(b, "step_min_us", sd->step_min_ns);
	json_us(b, "step_max_us", sd->step_max_ns);
	json_us(b, "spread_us", sd->spread_ns);
	const struct tp_diff_accel *x = &sd->accel;
	if (x->have) {
		tp_buf_printf(b, ",\"accel\":{\"steps\":%zu", x->steps);
		json_us(b, "step_us", x->step_ns);
		json_us(b, "step_spread_us", x->step_spread_ns);
		json_us(b, "device_us", x->device_ns);
		json_us(b, "device_spread_us", x->device_spread_ns);
		tp_buf_puts(b, ",\"idle_pct\":");
		tp_buf_fixed(b, x->idle_share * 100, 2);
		json_verdict(b, x->bound, x->verdict);
	}
	tp_buf_putc(b, '}');
}

static const char *json_noise(int within)
{
	return within < 0 ? "null" : within ? "true" : "false";
}

/* The rows of every section, the first `max` of each (they are ranked by impact). */
static void json_rows(struct tp_buf *b, const struct tp_diff *d, size_t max)
{
	for (int k = 0; k < TP_DIFF_KINDS; k++) {
		tp_buf_printf(b, ",\n\"%s\":[", tp_diff_kind_name((enum tp_diff_kind)k));
		for (size_t i = 0; i < d->nrows[k] && i < max; i++) {
			const struct tp_diff_row *r = &d->rows[k][i];
			tp_buf_puts(b, i ? ",\n {\"key\":" : "\n {\"key\":");
			json_str(b, r->key);
			tp_buf_puts(b, ",\"label\":");
			json_str(b, r->label);
			tp_buf_printf(b, ",\"status\":\"%s\"", status_name(r->status));
			tp_diff_json_ab_us(b, "_us", r->a_ns, r->b_ns);
			json_us(b, "delta_us", r->delta_ns);
			tp_buf_puts(b, ",\"delta_pct\":");
			tp_buf_fixed(b, r->pct, 3);
			tp_buf_puts(b, ",\"share_of_change\":");
			tp_buf_fixed(b, r->share, 4);
			tp_buf_printf(b, ",\"a_count\":%llu,\"b_count\":%llu",
			              (unsigned long long)r->a_count,
			              (unsigned long long)r->b_count);
			if (r->within_noise >= 0) {
				tp_diff_json_ab_us(b, "_spread_us", r->a_spread_ns, r->b_spread_ns);
				tp_buf_printf(b, ",\"within_noise\":%s}",
				              r->within_noise ? "true" : "false");
			} else
				tp_buf_puts(b, ",\"a_spread_us\":null,\"b_spread_us\":null,"
				               "\"within_noise\":null}");
		}
		tp_buf_puts(b, "]");
	}
}

static void json_doc(const struct tp_diff *d, struct tp_buf *b, size_t max_rows)
{
	tp_buf_puts(b, "{\"tool\":\"tpuprof diff\",\n\"a\":");
	json_side(b, &d->a);
	tp_buf_puts(b, ",\n\"b\":");
	json_side(b, &d->b);
	tp_buf_puts(b, ",\n\"total_delta_us\":");
	tp_buf_ns_as_us(b, d->total_delta_ns);
	tp_buf_puts(b, ",\"total_delta_pct\":");
	tp_buf_fixed(b, d->total_pct, 3);
	tp_buf_printf(b, ",\"noise_aware\":%s,\"within_noise\":%s",
	              d->noise_aware ? "true" : "false",
	              d->noise_aware ? (d->within_noise ? "true" : "false") : "null");
	if (d->have_accel) {
		tp_buf_puts(b, ",\n\"accel\":{\"step_delta_pct\":");
		tp_buf_fixed(b, d->step_pct, 3);
		tp_buf_puts(b, ",\"device_delta_pct\":");
		tp_buf_fixed(b, d->device_pct, 3);
		tp_buf_printf(b, ",\"step_within_noise\":%s,\"device_within_noise\":%s",
		              json_noise(d->step_within_noise), json_noise(d->device_within_noise));
		json_verdict(b, d->bound, d->verdict);
	}
	json_rows(b, d, max_rows);
	tp_buf_puts(b, ",\n\"engines\":[");
	for (size_t i = 0; i < d->nengines; i++) {
		const struct tp_diff_engine *e = &d->engines[i];
		tp_buf_puts(b, i ? ",\n {\"name\":" : "\n {\"name\":");
		json_str(b, e->name);
		tp_diff_json_ab_fixed(b, "_util", e->a_util, e->b_util, 6);
		tp_diff_json_ab_fixed(b, "_ddr_gbps", e->a_gbps, e->b_gbps, 4);
		tp_diff_json_ab_us(b, "_busy_us", e->a_busy_ns, e->b_busy_ns);
		tp_buf_putc(b, '}');
	}
	tp_buf_puts(b, "]}\n");
}

void tp_diff_json(const struct tp_diff *d, struct tp_buf *b)
{
	json_doc(d, b, SIZE_MAX);
}

/* Delta of each timeline label (the key of a row of the page's first non-empty section, as
 * the page's script picks it) for the bar colours, since the page embeds only the top rows.
 * Labels of both sides are interned in t; delta[id] / has[id] by their id. */
struct label_deltas {
	struct tp_strtab t;
	int64_t *delta;
	uint8_t *has;
};

static int label_deltas_init(struct label_deltas *ld, const struct tp_diff *d)
{
	memset(ld, 0, sizeof *ld);
	if (tp_strtab_init(&ld->t) != TP_OK)
		return TP_ENOMEM;
	const struct tp_diff_side *sides[2] = {&d->a, &d->b};
	uint32_t id;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < sides[s]->nlabels; i++)
			if (tp_strtab_intern(&ld->t, sides[s]->labels[i],
			                     strlen(sides[s]->labels[i]), &id) != TP_OK)
				return TP_ENOMEM;
	ld->delta = tp_calloc(ld->t.count ? ld->t.count : 1, sizeof *ld->delta);
	ld->has = tp_calloc(ld->t.count ? ld->t.count : 1, 1);
	if (!ld->delta || !ld->has)
		return TP_ENOMEM;
	int k = 0;
	while (k < TP_DIFF_KINDS && !d->nrows[k])
		k++;
	for (size_t i = 0; k < TP_DIFF_KINDS && i < d->nrows[k]; i++) {
		const char *key = d->rows[k][i].key;
		if (tp_strtab_find(&ld->t, key, strlen(key), &id) && !ld->has[id]) {
			ld->delta[id] = d->rows[k][i].delta_ns;
			ld->has[id] = 1;
		}
	}
	return TP_OK;
}

static void label_deltas_free(struct label_deltas *ld)
{
	tp_strtab_free(&ld->t);
	tp_free(ld->delta);
	tp_free(ld->has);
}

/* Timeline data of one side for the page: lanes, labels, each label's delta in µs (null when
 * no row has it), bars as flat [lane, start, dur, label] quadruples in ns. */
static void json_timeline(struct tp_buf *b, const struct tp_diff_side *sd,
                          const struct label_deltas *ld)
{
	tp_buf_puts(b, "{\"lanes\":[");
	for (size_t i = 0; i < sd->nlanes; i++) {
		if (i)
			tp_buf_putc(b, ',');
		json_str(b, sd->lanes[i]);
	}
	tp_buf_puts(b, "],\"labels\":[");
	for (size_t i = 0; i < sd->nlabels; i++) {
		if (i)
			tp_buf_putc(b, ',');
		json_str(b, sd->labels[i]);
	}
	tp_buf_puts(b, "],\"deltas\":[");
	for (size_t i = 0; i < sd->nlabels; i++) {
		uint32_t id;
		if (i)
			tp_buf_putc(b, ',');
		if (tp_strtab_find(&ld->t, sd->labels[i], strlen(sd->labels[i]), &id) &&
		    ld->has[id])
			tp_buf_ns_as_us(b, ld->delta[id]);
		else
			tp_buf_puts(b, "null");
	}
	tp_buf_printf(b, "],\"dropped\":%llu,\"bars\":[", (unsigned long long)sd->items_dropped);
	for (size_t i = 0; i < sd->nitems; i++) {
		const struct tp_diff_item *it = &sd->items[i];
		tp_buf_printf(b, "%s%u,%lld,%lld,%u", i ? "," : "", it->lane,
		              (long long)it->start_ns, (long long)it->dur_ns, it->label);
	}
	tp_buf_puts(b, "]}");
}

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
    "<title>tpuprof diff</title>\n<style>\n"
    "body{font:13px system-ui,sans-serif;margin:16px;color:#222}\n"
    "h1{font-size:18px}h2{font-size:15px;margin-top:22px}\n"
    "table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid "
    "#ddd;text-align:right}\n"
    "td.n,th.n{text-align:left;max-width:480px;overflow:hidden;text-overflow:ellipsis;white-space:"
    "nowrap}\n"
    ".up{color:#b00}.down{color:#070}\n"
    "canvas{display:block;border:1px solid #ccc;margin:2px 0;cursor:grab}\n"
    "#tl .side{font-weight:600;margin-top:6px}\n"
    "</style></head><body>\n"
    "<h1>tpuprof diff</h1><div id=\"summary\"></div>\n"
    "<h2>Biggest contributors (waterfall from A's total to B's)</h2><svg id=\"wf\" width=\"960\" "
    "height=\"340\"></svg>\n"
    "<h2>Timelines (same scale; wheel to zoom, drag to pan, double-click to reset)</h2><div "
    "id=\"tl\"></div>\n"
    "<div id=\"tables\"></div>\n"
    "<script type=\"application/json\" id=\"diff-data\">";

/* Under the totals: the accelerator verdict, written into the page only when the diff has
 * one. */
static const char accel_js[] =
    "if(D.diff.accel)S.appendChild(el('div','verdict: '+D.diff.accel.verdict));\n";

/* The page script, one literal per line (ISO C caps a literal at 4095 characters). */
static const char *const page_tail[] = {
    "</script>\n<script>\n",
    "(function(){'use strict';\n",
    "var D=JSON.parse(document.getElementById('diff-data').textContent);\n",
    "function el(t,txt,cls){var "
    "e=document.createElement(t);if(txt!==undefined)e.textContent=txt;if(cls)e.className=cls;"
    "return e;}\n",
    "function us(v){return Number(v).toFixed(3);}\n",
    "var S=document.getElementById('summary');\n",
    "['a','b'].forEach(function(k){var s=D.diff[k];S.appendChild(el('div',k.toUpperCase()+': "
    "'+s.name+' ('+s.source+')  total '+us(s.total_us)+' us'+(s.steps>1?' (median of '+s.steps+' "
    "steps)':'')));});\n",
    "var tc=el('div','total change: '+(D.diff.total_delta_us>0?'+':'')+us(D.diff.total_delta_us)+' "
    "us ('+D.diff.total_delta_pct.toFixed(2)+'%)'+(D.diff.noise_aware?(D.diff.within_noise?'  "
    "within noise':'  beyond noise'):''),D.diff.total_delta_us>0?'up':'down');\n",
    "S.appendChild(tc);\n",
    NULL, /* the accelerator verdict's line (accel_js), for diffs that have one */
    "var kinds=['layers','op_types','ops','cmd_types'],titles={layers:'Layers',op_types:'Operator "
    "types',ops:'Operators',cmd_types:'Command types'};\n",
    "var main=kinds.filter(function(k){return D.diff[k].length;})[0]||'layers';\n",
    "var top=D.diff[main].filter(function(r){return r.delta_us!=0;}).slice(0,10);\n",
    "/* waterfall */\n",
    "var W=document.getElementById('wf'),NS='http://www.w3.org/2000/svg';\n",
    "var steps=[{l:'A total',v:D.diff.a.total_us,abs:1}],run=D.diff.a.total_us,shown=0;\n",
    "top.forEach(function(r){steps.push({l:r.label,v:r.delta_us});shown+=r.delta_us;});\n",
    "steps.push({l:'other / overlap',v:D.diff.total_delta_us-shown});steps.push({l:'B "
    "total',v:D.diff.b.total_us,abs:1});\n",
    "/* Bars float between running totals; the axis starts just below the smallest total so small "
    "deltas stay visible. */\n",
    "var "
    "lo=Infinity,hi=-Infinity,acc=0;steps.forEach(function(s){if(s.abs){acc=s.v;}else{acc+=s.v;}lo="
    "Math.min(lo,acc,s.abs?acc:acc-s.v);hi=Math.max(hi,acc,s.abs?acc:acc-s.v);});\n",
    "var pad=Math.max((hi-lo)*0.15,Math.abs(hi)*0.001,0.001);lo-=pad;hi+=pad/3;\n",
    "var bw=900/steps.length,sc=function(v){return 250-(v-lo)/((hi-lo)||1)*240;};acc=0;\n",
    "steps.forEach(function(s,i){var "
    "y0,y1,c;if(s.abs){y0=250;y1=sc(s.v);acc=s.v;c='#889';}else{y0=sc(acc);y1=sc(acc+s.v);acc+=s.v;"
    "c=s.v>0?'#d55':'#5a5';}\n",
    " var "
    "r=document.createElementNS(NS,'rect');r.setAttribute('x',i*bw+4);r.setAttribute('width',bw-8);"
    "r.setAttribute('y',Math.min(y0,y1));r.setAttribute('height',Math.max(1,Math.abs(y1-y0)));r."
    "setAttribute('fill',c);\n",
    " var t=document.createElementNS(NS,'title');t.textContent=s.l+': "
    "'+(s.abs?'':(s.v>0?'+':''))+us(s.v)+' us';r.appendChild(t);W.appendChild(r);\n",
    " var "
    "tx=document.createElementNS(NS,'text');tx.setAttribute('transform','translate('+(i*bw+bw/"
    "2)+',258) rotate(30)');tx.setAttribute('font-size','10');var "
    "mx=22;tx.textContent=s.l.length>mx?s.l.slice(0,mx-1)+'\\u2026':s.l;W.appendChild(tx);});\n",
    "/* timelines: one view shared by both sides; bars coloured by T.deltas */\n",
    "var hot={};top.forEach(function(r){hot[r.key]=1;});\n",
    "var span=1;['a','b'].forEach(function(k){var b=D.timeline[k].bars;for(var "
    "i=0;i<b.length;i+=4)span=Math.max(span,b[i+1]+b[i+2]);});\n",
    "var view={t0:0,t1:span},cvs=[],TL=document.getElementById('tl'),LH=14,WID=1100;\n",
    "function color(lab,d){if(d===null||d===undefined){var h=0;for(var "
    "i=0;i<lab.length;i++)h=(h*31+lab.charCodeAt(i))|0;return "
    "'hsl('+(Math.abs(h)%360)+',35%,70%)';}return d>0?'#e66':d<0?'#6b6':'#aab';}\n",
    "['a','b'].forEach(function(k){var T=D.timeline[k];TL.appendChild(el('div',k.toUpperCase()+': "
    "'+D.diff[k].name+(T.dropped?' ('+T.dropped+' bars not shown)':''),'side'));\n",
    " var "
    "c=el('canvas');c.width=WID;c.height=Math.max(1,T.lanes.length)*LH+16;TL.appendChild(c);cvs."
    "push({c:c,T:T});});\n",
    "function draw(){cvs.forEach(function(o){var "
    "g=o.c.getContext('2d'),T=o.T,b=T.bars,k=WID/"
    "(view.t1-view.t0);g.clearRect(0,0,o.c.width,o.c.height);\n",
    " for(var i=0;i<b.length;i+=4){var "
    "x=(b[i+1]-view.t0)*k,w=Math.max(1,b[i+2]*k);if(x>WID||x+w<0)continue;var "
    "lab=T.labels[b[i+3]];g.fillStyle=color(lab,T.deltas[b[i+3]]);g.fillRect(x,b[i]*LH+1,w,LH-2);"
    "if(hot[lab]){g.strokeStyle='#900';g.strokeRect(x,b[i]*LH+1,w,LH-2);}}\n",
    " g.fillStyle='#333';g.font='10px "
    "sans-serif';T.lanes.forEach(function(l,i){g.fillText(l,2,i*LH+11);});\n",
    " g.fillText(us(view.t0/1000)+' us',2,o.c.height-3);var e=us(view.t1/1000)+' "
    "us';g.fillText(e,WID-g.measureText(e).width-2,o.c.height-3);});}\n",
    "cvs.forEach(function(o){var c=o.c,drag=null;\n",
    " c.addEventListener('wheel',function(ev){ev.preventDefault();var "
    "f=ev.deltaY>0?1.25:0.8,m=view.t0+(view.t1-view.t0)*ev.offsetX/"
    "WID;view.t0=m-(m-view.t0)*f;view.t1=m+(view.t1-m)*f;draw();});\n",
    " c.addEventListener('mousedown',function(ev){drag={x:ev.clientX,t0:view.t0,t1:view.t1};});\n",
    " window.addEventListener('mouseup',function(){drag=null;});\n",
    " c.addEventListener('mousemove',function(ev){if(!drag)return;var "
    "d=(ev.clientX-drag.x)*(drag.t1-drag.t0)/WID;view.t0=drag.t0-d;view.t1=drag.t1-d;draw();});\n",
    " c.addEventListener('dblclick',function(){view={t0:0,t1:span};draw();});});\n",
    "draw();\n",
    "/* tables */\n",
    "var TB=document.getElementById('tables');\n",
    "kinds.forEach(function(k){var rows=D.diff[k];if(!rows.length)return;var "
    "n=D.rows_total[k];TB.appendChild(el('h2',titles[k]+' ranked by impact ('+n+(n>rows.length?'; "
    "the page holds the first '+rows.length+', diff.json all':'')+')'));\n",
    " var t=el('table'),h=el('tr');['rank','delta (us)','delta %','share','A (us)','B "
    "(us)','status','name'].forEach(function(x,i){h.appendChild(el('th',x,i==7?'n':''));});t."
    "appendChild(h);\n",
    " rows.slice(0,200).forEach(function(r,i){var "
    "tr=el('tr');[String(i+1),(r.delta_us>0?'+':'')+us(r.delta_us),r.status=='both'?r.delta_pct."
    "toFixed(2)+'%':'',(r.share_of_change*100).toFixed(1)+'%',us(r.a_us),us(r.b_us),r.status+(r."
    "within_noise?' (within "
    "noise)':'')].forEach(function(x,j){tr.appendChild(el('td',x,j==1?(r.delta_us>0?'up':r.delta_"
    "us<0?'down':''):''));});\n",
    "  tr.appendChild(el('td',r.label,'n'));t.appendChild(tr);});TB.appendChild(t);});\n",
    "if(D.diff.engines.length){TB.appendChild(el('h2','Engines'));var "
    "t=el('table'),h=el('tr');['engine','util A','util B','DDR A (GB/s)','DDR B "
    "(GB/s)'].forEach(function(x,i){h.appendChild(el('th',x,i?'':'n'));});t.appendChild(h);\n",
    " D.diff.engines.forEach(function(e){var "
    "tr=el('tr');tr.appendChild(el('td',e.name,'n'));[(e.a_util*100).toFixed(2)+'%',(e.b_util*100)."
    "toFixed(2)+'%',e.a_ddr_gbps.toFixed(3),e.b_ddr_gbps.toFixed(3)].forEach(function(x){tr."
    "appendChild(el('td',x));});t.appendChild(tr);});TB.appendChild(t);}\n",
    "})();\n</script></body></html>\n",
};

void tp_diff_html(const struct tp_diff *d, struct tp_buf *b)
{
	tp_buf_puts(b, page_head);
	/* tp_buf_json_str escapes "</" and "<!--", so nothing here can close the script. */
	struct label_deltas ld;
	if (label_deltas_init(&ld, d) != TP_OK) {
		label_deltas_free(&ld);
		b->oom = 1; /* the caller reports it; no page without its colours */
		return;
	}
	tp_buf_puts(b, "{\"diff\":");
	json_doc(d, b, TP_DIFF_PAGE_ROWS);
	tp_buf_puts(b, ",\"rows_total\":{");
	for (int k = 0; k < TP_DIFF_KINDS; k++)
		tp_buf_printf(b, "%s\"%s\":%zu", k ? "," : "",
		              tp_diff_kind_name((enum tp_diff_kind)k), d->nrows[k]);
	tp_buf_puts(b, "},\"timeline\":{\"a\":");
	json_timeline(b, &d->a, &ld);
	tp_buf_puts(b, ",\"b\":");
	json_timeline(b, &d->b, &ld);
	tp_buf_puts(b, "}}");
	label_deltas_free(&ld);
	for (size_t i = 0; i < sizeof page_tail / sizeof *page_tail; i++)
		tp_buf_puts(b, page_tail[i] ? page_tail[i] : d->have_accel ? accel_js : "");
}
