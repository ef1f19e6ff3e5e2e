/*
 * page.c — index.html, the job page: one self-contained file (inline style and script, no
 * network, opens from disk) with the job's header as a compact table, a sortable table with
 * one row per device × call linking to each dump's result.html (the slowest and the most
 * imbalanced call highlighted, failed dumps with their error), the devices' engine
 * utilisation side by side, and a utilisation strip per core of every call on one time axis
 * (engine chosen, calls collapsible, devices and cores filtered by name).
 *
 * The data sits in a <script type="application/json"> block, JSON-escaped (tp_buf_json_str
 * also escapes "</"), and the script inserts every input-derived string as text, never as
 * markup.
 */
#include "writers/jobreport/jobreport_int.h"

/* Strip numbers embedded at most (4 engines × 100 bins per core): past it, later calls show
 * no strip and the page says so, so a job of thousands of 8-core calls stays a few MB. */
#define PAGE_MAX_STRIP_VALUES 2000000

static const char page_css[] =
    "body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}"
    "h1{font-size:18px;margin:0 0 8px}h2{font-size:15px;margin:18px 0 6px}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
    "th{background:#f0f0f0;text-align:left}#calls th{cursor:pointer;user-select:none}"
    "#calls td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tr.slowest td{background:#fde2e2}tr.imbalanced td{background:#fff3c4}"
    "tr.slowest.imbalanced td{background:#fbd3a5}tr.failed td{background:#eee;color:#a00}"
    ".tag{font-size:11px;border-radius:3px;padding:0 4px;margin-left:4px;color:#fff}"
    ".tag.s{background:#c0392b}.tag.i{background:#b7950b}"
    ".bars{display:flex;gap:2px;align-items:flex-end;height:40px}"
    ".bar{width:10px;background:#4a90d9}.bar.GDMA{background:#27ae60}"
    ".bar.SDMA{background:#8e44ad}.bar.CDMA{background:#d35400}"
    ".grid{display:flex;flex-wrap:wrap;gap:10px}.dev{border:1px solid #ddd;padding:4px}"
    ".strip{display:block;height:10px;margin:1px 0}.lbl{font-size:11px;color:#555}"
    "details{margin:2px 0}summary{cursor:pointer}#note{color:#555}"
    ".legend span{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px}";

/* The script, in pieces (C caps a string literal at 4095 bytes): builds the tables and views
 * from the JSON block. */
static const char *const page_js[] = {
    "(function(){'use strict';"
    "var D=JSON.parse(document.getElementById('job-data').textContent);"
    "var EN=['TIU','GDMA','SDMA','CDMA'];"
    "function el(t,a,txt){var e=document.createElement(t);if(a)for(var k in a)"
    "e.setAttribute(k,a[k]);if(txt!==undefined)e.textContent=txt;return e;}"
    "function f(v,d){return v===null||v===undefined?'-':v.toFixed(d);}"
    "function nat(a,b){var re=/(\\d+)|(\\D+)/g,x=String(a).match(re)||[],"
    "y=String(b).match(re)||[];for(var i=0;i<Math.min(x.length,y.length);i++){"
    "var p=x[i],q=y[i];if(p===q)continue;var np=/^\\d/.test(p),nq=/^\\d/.test(q);"
    "if(np&&nq)return (+p)-(+q)||p.length-q.length;return p<q?-1:1;}"
    "return x.length-y.length;}", /* Header table. */
    "function header(){var t=document.getElementById('head');"
    "var rows=[['Job',D.title],['Dumps',D.calls.length+' ('+D.converted+' converted, '"
    "+D.failed+' failed)'],['Devices',D.num_devices],"
    "['Imbalance across devices',D.device_imbalance>0?D.device_imbalance.toFixed(3)+"
    "' (call '+D.device_imbalance_call+')':'n/a'],"
    "['Imbalance across cores',D.core_imbalance>0?D.core_imbalance.toFixed(3):'n/a'],"
    "['Time alignment',D.aligned?'devices aligned on the '+D.anchor.replace(/_/g,' ')+"
    "' every call records':'not aligned: no shared clock in the data; each device\\u2019s "
    "calls are shown from 0, one after the other']];"
    "D.notes.forEach(function(n){rows.push(['Note',n]);});"
    "rows.forEach(function(r){var tr=el('tr');tr.appendChild(el('th',null,r[0]));"
    "tr.appendChild(el('td',null,String(r[1])));t.appendChild(tr);});}", /* The sortable table. */
    "var COLS=[['Device','device','s'],['Call','call','n'],['Chip','arch','s'],"
    "['Cores','cores','n'],['Total (\\u00b5s)','total_us','n'],['TIU %','u0','n'],"
    "['GDMA %','u1','n'],['SDMA %','u2','n'],['CDMA %','u3','n'],"
    "['DDR GB/s','ddr','n'],['uArch %','uarch','n'],['Core imbalance','imb','n'],"
    "['vs siblings %','sib','n'],['Dump','name','s']];"
    "var sortKey=null,sortDir=1;"
    "function val(c,k){if(k==='total_us')return c.ok?c.total_ns/1000:null;"
    "if(/^u\\d$/.test(k)){var i=+k[1];return c.has[i]?c.util[i]*100:null;}"
    "if(k==='uarch')return c.uarch===null?null:c.uarch*100;"
    "if(k==='imb')return c.imb>0?c.imb:null;if(k==='sib')return c.sib===null?null:c.sib*100;"
    "return c[k];}"
    "function table(){var t=document.getElementById('calls');t.textContent='';"
    "var tr=el('tr');COLS.forEach(function(c){var th=el('th',{'data-key':c[1],"
    "'aria-sort':sortKey===c[1]?(sortDir>0?'ascending':'descending'):'none'},c[0]);"
    "th.onclick=function(){sortDir=sortKey===c[1]?-sortDir:1;sortKey=c[1];table();};"
    "tr.appendChild(th);});t.appendChild(tr);"
    "var idx=D.calls.map(function(c,i){return i;});"
    "if(sortKey){var col=COLS.filter(function(c){return c[1]===sortKey;})[0];"
    "idx.sort(function(a,b){var x=val(D.calls[a],sortKey),y=val(D.calls[b],sortKey);"
    "if(x===null&&y===null)return a-b;if(x===null)return 1;if(y===null)return -1;"
    "var r=col[2]==='n'?x-y:nat(x,y);return r*sortDir||a-b;});}"
    "idx.forEach(function(i){var c=D.calls[i];var r=el('tr',{'data-index':i});"
    "if(!c.ok)r.className='failed';if(i===D.slowest)r.classList.add('slowest');"
    "if(i===D.imbalanced)r.classList.add('imbalanced');"
    "COLS.forEach(function(col){var v=val(c,col[1]);var td;"
    "if(col[1]==='name'){td=el('td');var a=el('a',{href:c.out+'/result.html'},c.name);"
    "td.appendChild(a);if(!c.ok)td.appendChild(el('div',null,'exit '+c.exit_code+': '+"
    "c.error));if(i===D.slowest)td.appendChild(el('span',{'class':'tag s'},'slowest'));"
    "if(i===D.imbalanced)td.appendChild(el('span',{'class':'tag i'},'most imbalanced'));}"
    "else if(col[2]==='n'){td=el('td',{'class':'n'},v===null?'-':"
    "(col[1]==='call'||col[1]==='cores'?String(v):f(v,col[1]==='total_us'?3:"
    "col[1]==='imb'?3:2)));}else td=el('td',null,v===null?'-':String(v));"
    "r.appendChild(td);});t.appendChild(r);});}", /* Engine utilisation side by side, per device. */
    "function side(){var g=document.getElementById('side');var devs={};"
    "D.calls.forEach(function(c,i){(devs[c.device]=devs[c.device]||[]).push(i);});"
    "Object.keys(devs).sort(nat).forEach(function(d){var box=el('div',{'class':'dev',"
    "'data-device':d});box.appendChild(el('div',{'class':'lbl'},d));"
    "devs[d].forEach(function(i){var c=D.calls[i];var b=el('div',{'class':'bars',"
    "title:d+' call '+c.call});EN.forEach(function(e,k){var h=c.ok&&c.has[k]?"
    "Math.max(1,Math.round(c.util[k]*40)):0;var x=el('div',{'class':'bar '+e,"
    "title:e+' '+(c.ok&&c.has[k]?(c.util[k]*100).toFixed(1)+'%':'n/a')});"
    "x.style.height=h+'px';b.appendChild(x);});"
    "b.appendChild(el('span',{'class':'lbl'},'call '+c.call));box.appendChild(b);});"
    "g.appendChild(box);});}", /* Utilisation strips per core, all calls on one axis (the longest
                                  call). */
    "function strips(){var host=document.getElementById('strips');host.textContent='';"
    "var eng=+document.getElementById('engine').value;"
    "var flt=document.getElementById('filter').value.toLowerCase();"
    "var maxT=0;D.calls.forEach(function(c){if(c.ok&&c.total_ns>maxT)maxT=c.total_ns;});"
    "D.calls.forEach(function(c,i){if(!c.ok||!c.strips)return;"
    "var det=el('details',{open:'','data-index':i});"
    "det.appendChild(el('summary',null,c.device+' call '+c.call+' \\u2014 '+"
    "(c.total_ns/1000).toFixed(3)+' \\u00b5s'));var shown=0;"
    "c.strips.forEach(function(s){var name=c.device+' core '+s[0];"
    "if(flt&&name.toLowerCase().indexOf(flt)<0)return;var v=s[1][eng];if(!v)return;"
    "shown++;var w=Math.max(20,Math.round(600*c.total_ns/(maxT||1)));"
    "var cv=el('canvas',{'class':'strip',width:w,height:10,'data-core':s[0],"
    "title:name+' '+EN[eng]});var x=cv.getContext('2d');"
    "for(var k=0;k<v.length;k++){var u=v[k]/1000;x.fillStyle='rgba(74,144,217,'+"
    "(0.08+0.92*u)+')';x.fillRect(Math.floor(k*w/v.length),0,Math.ceil(w/v.length),10);}"
    "var row=el('div');row.appendChild(el('span',{'class':'lbl'},'core '+s[0]+' '));"
    "row.appendChild(cv);det.appendChild(row);});if(shown)host.appendChild(det);});"
    "if(D.strips_cut)host.appendChild(el('p',{id:'note'},D.strips_cut+' calls have no "
    "strip here (the page keeps 2 M strip values); their own pages have them.'));}"
    "header();table();side();strips();"
    "document.getElementById('engine').onchange=strips;"
    "document.getElementById('filter').oninput=strips;"
    "document.getElementById('collapse').onclick=function(){"
    "var d=document.querySelectorAll('#strips details');var open=false;"
    "d.forEach(function(x){open=open||x.open;});d.forEach(function(x){x.open=!open;});};"
    "})();"};

static void put_strips(struct tp_buf *b, const struct tp_job_entry *e)
{
	tp_buf_puts(b, ",\"strips\":[");
	for (size_t c = 0; c < e->ncores; c++) {
		tp_buf_printf(b, "%s[%d,[", c ? "," : "", e->cores[c].core);
		for (int k = 0; k < TP_ENGINES; k++) {
			const struct tp_job_engine *x = &e->cores[c].eng[k];
			if (k)
				tp_buf_putc(b, ',');
			if (!x->present) {
				tp_buf_puts(b, "null");
				continue;
			}
			for (int n = 0; n < TP_JOB_BINS; n++) {
				tp_buf_putc(b, n ? ',' : '[');
				tp_buf_u64(b, x->strip[n]);
			}
			tp_buf_putc(b, ']');
		}
		tp_buf_puts(b, "]]");
	}
	tp_buf_putc(b, ']');
}

static void put_call(struct tp_buf *b, const struct tp_job_entry *e, int with_strips)
{
	int f = 1;
	tp_buf_putc(b, '{');
	tp_jr_json_str(b, &f, "name", e->name);
	tp_jr_json_str(b, &f, "out", e->out);
	tp_jr_json_str(b, &f, "device", e->device);
	tp_jr_json_int(b, &f, "call", e->call);
	tp_jr_json_int(b, &f, "ok", e->ok);
	tp_jr_json_int(b, &f, "exit_code", e->exit_code);
	tp_jr_json_str(b, &f, "error", e->error);
	tp_jr_json_str(b, &f, "arch", e->ok ? e->arch : "");
	tp_jr_json_int(b, &f, "cores", e->num_cores);
	tp_jr_json_int(b, &f, "total_ns", e->total_ns);
	int has[TP_ENGINES] = {0};
	for (size_t c = 0; c < e->ncores; c++)
		for (int k = 0; k < TP_ENGINES; k++)
			has[k] |= e->cores[c].eng[k].present;
	tp_buf_puts(b, ",\"util\":[");
	for (int k = 0; k < TP_ENGINES; k++) {
		if (k)
			tp_buf_putc(b, ',');
		tp_buf_fixed(b, e->eng_util[k], 6);
	}
	tp_buf_printf(b, "],\"has\":[%d,%d,%d,%d]", has[0], has[1], has[2], has[3]);
	tp_jr_json_num(b, &f, "ddr", e->ddr_gbps);
	if (e->has_uarch)
		tp_jr_json_num(b, &f, "uarch", e->uarch_rate);
	else
		tp_buf_puts(b, ",\"uarch\":null");
	tp_jr_json_num(b, &f, "imb", e->imbalance);
	if (e->siblings)
		tp_jr_json_num(b, &f, "sib", e->sibling_dev);
	else
		tp_buf_puts(b, ",\"sib\":null");
	if (with_strips && e->ncores)
		put_strips(b, e);
	tp_buf_putc(b, '}');
}

static void put_data(const struct tp_job *j, struct tp_buf *b)
{
	int f = 1;
	tp_buf_putc(b, '{');
	tp_jr_json_str(b, &f, "title", j->title);
	tp_jr_job_fields(j, b, &f);
	tp_jr_json_int(b, &f, "slowest", j->slowest < j->n ? (int64_t)j->slowest : -1);
	tp_jr_json_int(b, &f, "imbalanced", j->imbalanced < j->n ? (int64_t)j->imbalanced : -1);
	tp_buf_puts(b, ",\"calls\":[");
	size_t budget = PAGE_MAX_STRIP_VALUES, cut = 0;
	for (size_t i = 0; i < j->n; i++) {
		size_t need = j->e[i].ncores * TP_ENGINES * TP_JOB_BINS;
		int with = need <= budget;
		if (with)
			budget -= need;
		else
			cut++;
		if (i)
			tp_buf_putc(b, ',');
		put_call(b, &j->e[i], with);
	}
	tp_buf_printf(b, "],\"strips_cut\":%zu", cut);
	tp_jr_json_strs(b, "notes", j->notes, j->nnotes);
	tp_buf_putc(b, '}');
}

void tp_job_page(const struct tp_job *j, struct tp_buf *b)
{
	tp_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	               "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	               "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
	               "<title>tpuprof job: ");
	/* The title is the only input text outside the JSON block: HTML-escaped. */
	struct tp_buf t;
	tp_buf_init(&t);
	tp_text_put(&t, j->title, strlen(j->title), TP_TEXT_CTRL | TP_TEXT_LINE, 200, 0);
	for (size_t i = 0; i < t.len; i++) {
		char c = t.data[i];
		if (c == '<')
			tp_buf_puts(b, "&lt;");
		else if (c == '>')
			tp_buf_puts(b, "&gt;");
		else if (c == '&')
			tp_buf_puts(b, "&amp;");
		else
			tp_buf_putc(b, c);
	}
	tp_buf_free(&t);
	tp_buf_printf(b, "</title><style>%s</style></head><body>\n<h1>tpuprof job report</h1>\n",
	              page_css);
	tp_buf_puts(b, "<table id=\"head\"></table>\n<h2>Calls (one row per device \xc3\x97 call; "
	               "click a column to sort)</h2>\n<table id=\"calls\"></table>\n"
	               "<h2>Engine utilisation per device, side by side</h2>\n"
	               "<div class=\"legend\">TIU<span style=\"background:#4a90d9\"></span>GDMA"
	               "<span style=\"background:#27ae60\"></span>SDMA<span "
	               "style=\"background:#8e44ad\"></span>CDMA<span "
	               "style=\"background:#d35400\"></span></div>\n<div id=\"side\" "
	               "class=\"grid\"></div>\n<h2>Utilisation over time, per core (one axis: "
	               "the longest call)</h2>\n<div>Engine <select id=\"engine\"><option "
	               "value=\"0\">TIU</option><option value=\"1\">GDMA</option><option "
	               "value=\"2\">SDMA</option><option value=\"3\">CDMA</option></select> "
	               "Filter <input id=\"filter\" placeholder=\"device or core\"> <button "
	               "id=\"collapse\">collapse / expand all</button></div>\n"
	               "<div id=\"strips\"></div>\n<script type=\"application/json\" "
	               "id=\"job-data\">");
	put_data(j, b);
	tp_buf_puts(b, "</script>\n<script>");
	for (size_t i = 0; i < sizeof page_js / sizeof *page_js; i++)
		tp_buf_puts(b, page_js[i]);
	tp_buf_puts(b, "</script>\n</body></html>\n");
}
