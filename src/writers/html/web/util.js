/*
 * The script of tpuprof's result.html (embedded into the page at build time): one function in
 * parts, src/writers/html/web/{util,lanes,overview,timeline,table,search,memory,cores,main}.js in that
 * order. This first part opens it and holds the DOM helpers and colours.
 *
 * Reads the profile from <script type="application/json" id="tp-data"> (layout documented in
 * src/writers/html/html.c), builds typed arrays per lane, and draws: summary cards, a canvas timeline
 * with level-of-detail rendering (commands narrower than a pixel are merged per pixel column,
 * keeping the tallest), overview tables (sortable), local/global memory charts and the
 * cross-core views (cores.js).
 *
 * Every string from the profile is inserted with textContent (never innerHTML), so names in a
 * dump are always shown as text. A small test API is exposed as window.tpuprof.
 */
'use strict';
(function () {
  const timings = { start: performance.now() };
  const D = JSON.parse(document.getElementById('tp-data').textContent);
  timings.parsed = performance.now();
  const S = D.strs;
  const str = (i) => (i >= 0 && i < S.length ? S[i] : '');
  const $ = (id) => document.getElementById(id);
  /* The filter of the tables: per string index, 1 when the string contains q (case-insensitive);
   * null for an empty q (no filter). */
  function strHits(q) {
    if (!q) return null;
    const h = new Uint8Array(S.length), ql = q.toLowerCase();
    for (let i = 0; i < S.length; i++) h[i] = S[i].toLowerCase().includes(ql) ? 1 : 0;
    return h;
  }

  /* ---------------------------------------------------------------- small DOM helpers */
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  /* A time in the unit that suits it (ns, µs, ms, s), about 4 significant digits. */
  function fmtTime(ns) {
    const a = Math.abs(ns);
    const [div, u] = a < 1e3 ? [1, 'ns'] : a < 1e6 ? [1e3, '\u00b5s'] : a < 1e9 ? [1e6, 'ms'] : [1e9, 's'];
    const v = ns / div, av = Math.abs(v);
    return v.toFixed(div === 1 ? 0 : av >= 100 ? 1 : av >= 10 ? 2 : 3) + ' ' + u;
  }
  function fmtUs(ns) {
    const us = ns / 1000;
    const a = Math.abs(us);
    const d = a >= 1000 ? 1 : a >= 10 ? 2 : 3;
    return us.toFixed(d) + ' \u00b5s';
  }
  const fmtPct = (x) => (x === null || x === undefined || !isFinite(x) ? '-' : (x * 100).toFixed(2) + '%');
  const fmtNum = (x, d) => (x === null || x === undefined || !isFinite(x) ? '-' : Number(x).toFixed(d));
  function fmtBytes(b) {
    if (b >= 1 << 30) return (b / (1 << 30)).toFixed(2) + ' GiB';
    if (b >= 1 << 20) return (b / (1 << 20)).toFixed(2) + ' MiB';
    if (b >= 1 << 10) return (b / 1024).toFixed(1) + ' KiB';
    return b + ' B';
  }
  const hex = (v) => '0x' + (typeof v === 'string' && /^\d+$/.test(v) ? BigInt(v) : Number(v)).toString(16);
  function kvTable(rows) {
    const t = el('table');
    for (const [k, v] of rows) {
      const tr = el('tr');
      tr.appendChild(el('td', null, k));
      tr.appendChild(el('td', null, v));
      t.appendChild(tr);
    }
    return t;
  }

  /* A sortable table: cols = [{name, t (text column), fmt}], rows = arrays of raw values. */
  /* Compact: key / value pairs flow in as many columns as fit; empty values are left out. */
  function kvGrid(pairs) {
    const g = el('div', { class: 'kv-grid' });
    for (const [k, v] of pairs) {
      if (v === null || v === undefined || String(v) === '') continue;
      const it = el('div');
      it.appendChild(el('span', { class: 'k' }, k));
      it.appendChild(el('span', { class: 'v' }, v));
      g.appendChild(it);
    }
    return g;
  }
  function sortableTable(cols, rows, sortCol, desc, limit) {
    const table = el('table', { class: 'data' });
    let showAll = !limit || rows.length <= limit;
    const thead = el('thead');
    const hr = el('tr');
    const tbody = el('tbody');
    let sc = sortCol, sd = !!desc;
    function render() {
      const r = rows.slice();
      if (sc >= 0) {
        r.sort((a, b) => {
          const x = a[sc], y = b[sc];
          /* Numbers numerically (missing values first), text naturally ("cmd 9" < "cmd 10"). */
          const nx = typeof x === 'number' || x === null || x === undefined, ny = typeof y === 'number' || y === null || y === undefined;
          const c = nx && ny ? (x ?? -Infinity) - (y ?? -Infinity) || 0 : String(x ?? '').localeCompare(String(y ?? ''), undefined, { numeric: true });
          return sd ? -c : c;
        });
      }
      tbody.textContent = '';
      for (const row of showAll ? r : r.slice(0, limit)) {
        const tr = el('tr');
        cols.forEach((c, i) => {
          const td = el('td', { class: c.t ? 't name' : '' }, c.fmt ? c.fmt(row[i], row) : row[i]);
          const hl = c.hl ? c.hl(row[i], row) : '';
          if (hl) td.classList.add('hl-' + hl);
          if (c.t) td.title = String(row[i]);
          tr.appendChild(td);
        });
        tbody.appendChild(tr);
      }
      [...hr.children].forEach((th, i) => {
        th.classList.toggle('sorted-asc', i === sc && !sd);
        th.classList.toggle('sorted-desc', i === sc && sd);
      });
    }
    cols.forEach((c, i) => {
      const th = el('th', { class: c.t ? 't' : '' }, c.name);
      th.addEventListener('click', () => {
        if (sc === i) sd = !sd;
        else { sc = i; sd = !c.t; }
        render();
      });
      hr.appendChild(th);
    });
    thead.appendChild(hr);
    table.appendChild(thead);
    table.appendChild(tbody);
    render();
    if (showAll) return table;
    const wrap = el('div');
    wrap.appendChild(table);
    const more = el('button', { class: 'more' }, 'Show all ' + rows.length + ' rows');
    more.addEventListener('click', () => { showAll = !showAll; more.textContent = showAll ? 'Show the first ' + limit : 'Show all ' + rows.length + ' rows'; render(); });
    wrap.appendChild(more);
    return wrap;
  }

  /* ---------------------------------------------------------------- colours */
  const PALETTE = [];
  for (let i = 0; i < 40; i++) {
    const hue = (i * 137.508) % 360;
    PALETTE.push('hsl(' + hue.toFixed(0) + ',' + (55 + (i % 3) * 10) + '%,' + (52 + (i % 4) * 5) + '%)');
  }
  const SYS_COLOR = PALETTE.length;
  PALETTE.push('#9aa0ab');
  /* The same colours as 32-bit pixels (ImageData is RGBA bytes; little-endian words). */
  function hslToPixel(h, sat, l) {
    sat /= 100; l /= 100;
    const f = (n) => { const k = (n + h / 30) % 12; return l - sat * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1)); };
    return rgbPixel(Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255));
  }
  function rgbPixel(r, g, b) { return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0; }
  const PIX = new Uint32Array(PALETTE.length);
  for (let i = 0; i < SYS_COLOR; i++) PIX[i] = hslToPixel((i * 137.508) % 360, 55 + (i % 3) * 10, 52 + (i % 4) * 5);
  PIX[SYS_COLOR] = rgbPixel(0x9a, 0xa0, 0xab);
  const PIX_BW = rgbPixel(0x2f, 0x6f, 0xde);
  const PIX_BG = [rgbPixel(255, 255, 255), rgbPixel(0xfb, 0xfc, 0xfd)], PIX_GRID = rgbPixel(0xec, 0xee, 0xf3),
        PIX_GROUP = rgbPixel(0xe9, 0xed, 0xf4);
  function hashStr(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  const strColor = new Int16Array(S.length).fill(-1);
  function colorOf(si) {
    if (strColor[si] < 0) strColor[si] = hashStr(str(si)) % (PALETTE.length - 1);
    return strColor[si];
  }
  /* Appends to the legend box `title` and the `max` most frequent names of counts (a Map from
   * string index to count), each with its colour swatch; nothing when counts is empty. */
  function legendTop(box, title, counts, max) {
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, max);
    if (!top.length) return;
    box.appendChild(el('span', { class: 'lg-title' }, title));
    for (const [si] of top) {
      const it = el('span', { class: 'lg-item' });
      const sw = el('span', { class: 'legend' });
      sw.style.background = PALETTE[colorOf(si)];
      it.appendChild(sw);
      it.appendChild(document.createTextNode(str(si)));
      box.appendChild(it);
    }
  }

