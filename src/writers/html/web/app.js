/*
 * app.js — the script of tpuprof's result.html (embedded into the page at build time).
 *
 * Reads the profile from <script type="application/json" id="tp-data"> (layout documented in
 * src/html/html.c), builds typed arrays per lane, and draws: summary cards, a canvas timeline
 * with level-of-detail rendering (commands narrower than a pixel are merged per pixel column,
 * keeping the tallest), overview tables (sortable) and local/global memory charts.
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

  /* ---------------------------------------------------------------- lanes */
  const LANE_H = { Layer: 18, MCU: 18, TIU: 34, GDMA: 34, SDMA: 34, CDMA: 34 };
  /* Binary columns (html.c put_col): a mode letter, then base64 of zigzag LEB128 varints;
   * r = values, d = differences, l / m = (value, run length) pairs of values / differences;
   * lower case fits in int32, upper case up to 2^51. Decoded straight from the string's
   * characters into a typed array (no intermediate binary string). */
  const B64 = new Int8Array(128).fill(-1);
  for (let i = 0; i < 64; i++) B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
  function decCol(v, n) {
    if (typeof v !== 'string') return v;
    const m = v.charCodeAt(0) | 32, wide = v.charCodeAt(0) < 97;
    const delta = m === 100 || m === 109, runs = m === 108 || m === 109;
    const o = wide ? new Float64Array(n) : new Int32Array(n);
    let k = 0, acc = 0, mul = 1, prev = 0, bits = 0, nb = 0, val = 0, half = false;
    const len = v.length;
    for (let p = 1; p < len && k < n; p++) {
      const q = B64[v.charCodeAt(p)];
      if (q < 0) continue; /* '=' padding */
      bits = (bits << 6) | q;
      nb += 6;
      if (nb < 8) continue;
      nb -= 8;
      const byte = (bits >> nb) & 255;
      bits &= (1 << nb) - 1;
      acc += (byte & 127) * mul;
      if (byte & 128) { mul *= 128; continue; }
      const x = acc % 2 ? -(acc + 1) / 2 : acc / 2;
      acc = 0; mul = 1;
      if (!runs) {
        if (delta) { prev += x; o[k++] = prev; } else o[k++] = x;
      } else if (!half) { val = x; half = true; }
      else {
        half = false;
        const cnt = Math.min(x, n - k);
        if (delta) for (let j = 0; j < cnt; j++) { prev += val; o[k++] = prev; }
        else { o.fill(val, k, k + cnt); k += cnt; }
      }
    }
    return o;
  }
  /* Column value of command i: a column is a typed array (decoded on first use), one number
   * for all commands, or absent (0). */
  const isCol = (v) => typeof v === 'object' && v !== null;
  const col = (T, key) => { const v = T[key]; return typeof v === 'string' ? (T[key] = decCol(v, T.n)) : v; };
  const at = (T, key, i) => { const v = col(T, key); return v === undefined ? 0 : typeof v === 'number' ? v : v[i]; };
  /* Block heights (0..1000) the writer leaves to the page ("hd":1), as html.c height_of:
   * TIU = uArch rate ("ua" - 1 in 0.01 %; full height when unknown), DMA = bandwidth over
   * bwScale (bytes over the engine cycles in ns, else over the duration); sys commands 150;
   * never below 20. */
  function heights(T, n, hv, start, end) {
    const dma = T.kind === 'GDMA' || T.kind === 'SDMA' || T.kind === 'CDMA';
    for (let i = 0; i < n; i++) {
      let h;
      if (at(T, 'ck', i)) h = 0.15;
      else if (dma) {
        const cy = at(T, 'cyc', i), ns = cy && T.mhz > 0 ? (cy * 1000) / T.mhz : end[i] - start[i];
        h = D.bwScale > 0 ? (ns > 0 ? at(T, 'by', i) / ns : 0) / D.bwScale : 1;
      } else { const u = at(T, 'ua', i); h = u ? (u - 1) / 10000 : 1; }
      if (!(h >= 0.02)) h = 0.02;
      if (h > 1) h = 1;
      hv[i] = Math.round(h * 1000);
    }
  }
  /* Lanes start as shells drawn from the writer's coarse level of detail ("lod"); their
   * commands are decoded afterwards, one lane per task (decodeLane), so the first timeline
   * appears as soon as the data is parsed and the page stays responsive while it loads. */
  const spanNs = Math.max(1, D.spanNs || 1);
  const lanes = D.lanes.map((T, li) => {
    const rows = Math.max(1, T.rows || 1);
    const unit = LANE_H[T.kind] || 16;
    const rowH = rows > 1 || T.kind === 'Layer' ? Math.max(unit, 16) : unit;
    let lod = null;
    if (T.lod) {
      const H = decCol(T.lod.h, T.lod.n), Sx = decCol(T.lod.s, T.lod.n);
      const H16 = new Uint16Array(T.lod.n), C = new Uint8Array(T.lod.n);
      if (isCol(H)) H16.set(H); else H16.fill(H || 0);
      for (let j = 0; j < T.lod.n; j++) { const sj = isCol(Sx) ? Sx[j] : Sx || 0; C[j] = sj < 0 ? SYS_COLOR : colorOf(sj); }
      lod = [[{ bw: spanNs / T.lod.n, H: H16, C }]];
      T.lod = null;
    }
    return { i: li, T, n: T.n, ready: !T.n, start: null, end: null, maxDur: 0, hv: null, col: null, row: null, rows, rowH,
             h: rows * rowH + 4, y: 0, kind: T.kind, core: T.core, dev: T.dev, label: T.label, mark: null, mip: null, lod };
  });
  function decodeLane(L) {
    const T = L.T, n = L.n;
    const start = new Float64Array(n), end = new Float64Array(n);
    let prevEnd = 0, maxDur = 0;
    const ts = col(T, 'ts') || new Int32Array(n), dur = col(T, 'dur'), cyc = col(T, 'cyc'), mhz = T.mhz;
    const durA = isCol(dur), durC = durA ? 0 : dur || 0, cycA = isCol(cyc), cycC = cycA ? 0 : cyc || 0;
    for (let i = 0; i < n; i++) {
      /* ts: gap from the previous command's end; dur: with durRes, the difference from the
       * engine cycles in ns (same double arithmetic as the writer). */
      const st = prevEnd + ts[i];
      let d = durA ? dur[i] : durC;
      if (T.durRes) d += Math.trunc(((cycA ? cyc[i] : cycC) / mhz) * 1000);
      start[i] = st;
      end[i] = st + d;
      prevEnd = st + d;
      if (d > maxDur) maxDur = d;
    }
    const hv = new Uint16Array(n);
    if (T.hd) heights(T, n, hv, start, end);
    else { const h = col(T, 'h'); if (isCol(h)) hv.set(h); else hv.fill(h || 0); }
    T.ts = T.dur = T.h = null; /* decoded into start/end/hv */
    const cl = new Uint8Array(n);
    const nmA = col(T, 'nm'), ckA = col(T, 'ck');
    if (isCol(nmA)) for (let i = 0; i < n; i++) cl[i] = colorOf(nmA[i]);
    else cl.fill(colorOf(nmA || 0));
    if (isCol(ckA)) { for (let i = 0; i < n; i++) if (ckA[i]) cl[i] = SYS_COLOR; }
    else if (ckA) cl.fill(SYS_COLOR);
    /* Rows: layers overlap inside a layer group, so they are packed greedily into rows (the
     * writer counted them the same way: html.c lane_rows); thread lanes use their depth. */
    let row = null;
    const R = L.rows;
    if (T.kind === 'Layer' && n) {
      row = new Uint8Array(n);
      const rowEnd = [];
      const MAXR = 6;
      for (let i = 0; i < n; i++) {
        let r = 0;
        while (r < rowEnd.length && rowEnd[r] > start[i]) r++;
        if (r >= MAXR) r = MAXR - 1;
        rowEnd[r] = Math.max(rowEnd[r] || 0, end[i]);
        row[i] = Math.min(r, R - 1);
      }
    } else if (T.dp) {
      row = new Uint8Array(n);
      for (let i = 0; i < n; i++) row[i] = Math.min(at(T, 'dp', i), 15, R - 1);
    }
    Object.assign(L, { start, end, maxDur, hv, col: cl, row, ckC: ckA });
    buildMip(L);
    L.ready = true;
  }
  timings.lanes = performance.now();

  /* Level-of-detail pyramid per lane and row (layers included): level 0 splits the span into
   * up to 2^20 buckets (2^18 per row for multi-row lanes) holding the tallest command touching
   * each (and its colour); each further level halves the resolution. Drawing a zoomed-out
   * view then costs one step per pixel column and row instead of one per command. */
  function buildMip(L) {
    if (L.n < 4096) return;
    const R = L.rows, per = [];
    const cnt = new Int32Array(R);
    for (let i = 0; i < L.n; i++) cnt[L.row ? L.row[i] : 0]++;
    for (let r = 0; r < R; r++) {
      const cap = R > 1 ? 1 << 18 : 1 << 20;
      const nb = Math.min(cap, 1 << Math.ceil(Math.log2(Math.max(2, cnt[r] * 2))));
      per.push({ bw: spanNs / nb, H: new Uint16Array(nb), C: new Uint8Array(nb) });
    }
    const s = L.start, e = L.end, hv = L.hv, col = L.col, row = L.row;
    for (let i = 0; i < L.n; i++) {
      const lv = per[row ? row[i] : 0], H = lv.H, C = lv.C, nb = H.length;
      let b0 = Math.floor(s[i] / lv.bw), b1 = Math.floor(e[i] / lv.bw);
      if (b0 < 0) b0 = 0;
      if (b1 >= nb) b1 = nb - 1;
      const h = hv[i] || 1;
      for (let b = b0; b <= b1; b++) if (h > H[b]) { H[b] = h; C[b] = col[i]; }
    }
    L.mip = per.map((lv0) => {
      let H = lv0.H, C = lv0.C;
      const levels = [lv0];
      while (H.length > 512) {
        const m = H.length >> 1, H2 = new Uint16Array(m), C2 = new Uint8Array(m);
        for (let j = 0; j < m; j++) {
          const a = 2 * j, b = a + 1;
          if (H[b] > H[a]) { H2[j] = H[b]; C2[j] = C[b]; } else { H2[j] = H[a]; C2[j] = C[a]; }
        }
        H = H2; C = C2;
        levels.push({ bw: levels[levels.length - 1].bw * 2, H, C });
      }
      return levels;
    });
  }

  function lowerBound(a, v) { /* first index with a[i] >= v */
    let lo = 0, hi = a.length;
    while (lo < hi) { const m = (lo + hi) >>> 1; if (a[m] < v) lo = m + 1; else hi = m; }
    return lo;
  }

  /* ---------------------------------------------------------------- header and overview */
  const A = D.analysis;
  const totalNs = A && A.totalNs ? A.totalNs : spanNs;
  const net = D.net || 'profile';
  $('caption').textContent = 'tpuprof: ' + net + ' on ' + D.arch;
  document.title = 'tpuprof: ' + net + ' on ' + D.arch;
  const totalCmds = lanes.reduce((s, L) => s + (L.kind === 'Layer' ? 0 : L.n), 0);
  $('subcaption').textContent = [
    'arch ' + D.arch,
    D.tiuMhz ? 'TIU ' + D.tiuMhz + ' MHz' : null,
    D.gdmaMhz ? 'GDMA ' + D.gdmaMhz + ' MHz' : null,
    'total ' + fmtUs(totalNs),
    totalCmds + ' commands',
    D.source ? 'source ' + D.source : null,
  ].filter(Boolean).join(' \u00b7 ');

  const ENG = ['TIU', 'GDMA', 'SDMA', 'CDMA'];
  function coreName(c) { return (D.devices.length > 1 ? 'Dev ' + c.dev + ' ' : '') + 'Core ' + c.core; }
  function card(k, v, frac) {
    const c = el('div', { class: 'card' });
    c.appendChild(el('div', { class: 'k' }, k));
    c.appendChild(el('div', { class: 'v' }, v));
    if (frac !== undefined) {
      const b = el('div', { class: 'bar' });
      const f = el('div');
      f.style.width = Math.max(0, Math.min(100, frac * 100)).toFixed(1) + '%';
      b.appendChild(f);
      c.appendChild(b);
    }
    return c;
  }
  function buildOverview() {
  const cards = $('cards');
  cards.appendChild(card('Total time', fmtUs(totalNs)));
  if (A) {
    for (const c of A.cores) {
      cards.appendChild(card(coreName(c) + ' TIU util', fmtPct(c.eng[0].util), c.eng[0].util));
      cards.appendChild(card(coreName(c) + ' GDMA util', fmtPct(c.eng[1].util), c.eng[1].util));
      cards.appendChild(card(coreName(c) + ' DDR BW', fmtNum(c.eng[1].ddrGbps, 2) + ' GB/s',
                             D.ddrMaxGbps ? c.eng[1].ddrGbps / D.ddrMaxGbps : undefined));
    }
  }

  const info = [['Arch', D.arch], ['Net', D.net], ['Source', D.source],
                ['TIU clock', D.tiuMhz ? D.tiuMhz + ' MHz' : '-'], ['GDMA clock', D.gdmaMhz ? D.gdmaMhz + ' MHz' : '-'],
                ['Total time', fmtUs(totalNs)], ['Commands', String(totalCmds)]];
  for (const [k, v] of D.meta) info.push([k, v]);
  /* Compact: key / value pairs flow in as many columns as fit; empty values are left out. */
  const infoG = el('div', { class: 'kv-grid' });
  for (const [k, v] of info) {
    if (v === null || v === undefined || String(v) === '') continue;
    const it = el('div');
    it.appendChild(el('span', { class: 'k' }, k));
    it.appendChild(el('span', { class: 'v' }, v));
    infoG.appendChild(it);
  }
  $('info').appendChild(infoG);

  if (A && A.cores.length) {
    /* Engines no core has (SDMA, CDMA on many chips) get no columns. */
    const has = ENG.map((_, e) => A.cores.some((c) => c.eng[e].present));
    const cols = [{ name: 'Core', t: 1 }, { name: 'Total (\u00b5s)', fmt: (v) => fmtNum(v / 1000, 3) }];
    ENG.forEach((e, k) => {
      if (!has[k]) return;
      cols.push({ name: e + ' busy (\u00b5s)', fmt: (v) => fmtNum(v / 1000, 3) });
      cols.push({ name: e + ' util', fmt: fmtPct });
    });
    ENG.forEach((e, k) => { if (k && has[k]) cols.push({ name: e + ' DDR GB/s', fmt: (v) => fmtNum(v, 2) }); });
    /* The vendor summary's highlights (as the xlsx writer, docs/xlsx.md "Highlights"): uArch
     * rate < 50 % red / < 75 % yellow, TiuWorkingRatio < 15 % red / < 30 % yellow,
     * Parallelism < 105 % red / < 205 % yellow (BM1688, BM1690), DDR bandwidth < 50 % / 75 %
     * of the chip's peak red / yellow. */
    const lo = (red, yellow) => (v) => (v === null || v === undefined || !isFinite(v) ? '' : v < red ? 'red' : v < yellow ? 'yellow' : '');
    const dual = /^BM16(88|90)$/.test(D.arch);
    if (D.ddrMaxGbps > 0) cols.forEach((c) => { if (/DDR GB\/s/.test(c.name)) c.hl = lo(D.ddrMaxGbps * 0.5, D.ddrMaxGbps * 0.75); });
    if (has[0]) cols.push({ name: 'TIU uArch rate', fmt: (v) => (v === null || v === undefined ? 'n/a' : fmtPct(v)), hl: lo(0.5, 0.75) });
    if (has[0]) cols.push({ name: 'TiuWorkingRatio', fmt: fmtPct, hl: lo(0.15, 0.3) });
    cols.push({ name: 'Parallelism', fmt: fmtPct, hl: lo(1.05, dual ? 2.05 : 1.05) }, { name: 'Concurrency', fmt: fmtPct }, { name: 'Compute share', fmt: fmtPct });
    ENG.forEach((e, k) => { if (has[k]) cols.push({ name: e + ' cmds' }); });
    const rows = A.cores.map((c) => {
      const r = [coreName(c), A.totalNs];
      for (let e = 0; e < 4; e++) if (has[e]) { r.push(c.eng[e].busyNs); r.push(c.eng[e].util); }
      for (let e = 1; e < 4; e++) if (has[e]) r.push(c.eng[e].ddrGbps);
      if (has[0]) r.push(c.eng[0].uarchRate);
      if (has[0]) r.push(c.tiuWorkingRatio);
      r.push(c.parallelism, c.concurrency, c.computeShare);
      for (let e = 0; e < 4; e++) if (has[e]) r.push(c.eng[e].records);
      return r;
    });
    $('engines').appendChild(sortableTable(cols, rows, -1));
    $('engines').appendChild(el('div', { class: 'muted' }, 'Highlights as the vendor summary: red / yellow = uArch rate < 50 / 75 %, TiuWorkingRatio < 15 / 30 %, Parallelism < 105 / ' + (dual ? '205' : '105') + ' %, DDR bandwidth < 50 / 75 % of the peak.'));
  } else {
    /* No analysis: per-lane counts and busy time straight from the lanes. */
    const rows = lanes.map((L) => {
      let busy = 0;
      for (let i = 0; i < L.n; i++) busy += L.end[i] - L.start[i];
      return ['Core ' + L.core, L.label, L.n, busy, busy / spanNs];
    });
    $('engines').appendChild(sortableTable([{ name: 'Core', t: 1 }, { name: 'Lane', t: 1 }, { name: 'Commands' },
      { name: 'Busy (\u00b5s)', fmt: (v) => fmtNum(v / 1000, 3) }, { name: 'Busy share', fmt: fmtPct }], rows, -1));
  }

  }
  /* Argument set of page id a (html.c emit_argsets): binary shapes or the JSON list. */
  let argPos = null;
  function argset(a) {
    if (!argPos) {
      argPos = [];
      const shape = typeof D.argShape === 'string' ? decCol(D.argShape, countArgs()) : null;
      const rows = D.argShapes.map(() => 0);
      let j = 1;
      for (let i = 0; shape && i < shape.length; i++) argPos.push(shape[i] ? [shape[i] - 1, rows[shape[i] - 1]++] : [-1, j++]);
      D.argVals.forEach((V) => { for (const k in V) if (k !== 'n') V[k] = decCol(V[k], V.n); });
    }
    const q = argPos[a - 1];
    if (!q) return D.argsets[a] || null;
    if (q[0] < 0) return D.argsets[q[1]] || null;
    const keys = D.argShapes[q[0]], V = D.argVals[q[0]], out = [];
    keys.forEach((k, i) => { out.push(k, V['k' + i][q[1]]); });
    return out;
  }
  function countArgs() { return D.argVals.reduce((t, V) => t + V.n, 0) + D.argsets.length - 1; }
  /* The layer table (id, name, type string ids), decoded on first use. */
  const LY = D.layers;
  function lyDecode() { for (const k of ['id', 'name', 'type']) if (!isCol(LY[k])) LY[k] = decCol(LY[k], LY.n) || new Int32Array(LY.n); }
  function layerText(li) {
    if (li < 0 || li >= LY.n) return '-';
    lyDecode();
    const nm = str(LY.name[li]);
    return '#' + LY.id[li] + ' ' + str(LY.type[li]) + (nm ? ' ' + nm : '');
  }
  function buildOverview2() {
  if (A && A.topLayers.length) {
    const rows = A.topLayers.map((r, i) => [i + 1, r.layer >= 0 ? layerText(r.layer) : str(r.name), str(r.type),
      r.core, r.count, r.total, r.share]).filter((r) => (r[1] && r[1] !== '-') || r[2]);
    $('top-layers').appendChild(sortableTable([{ name: '#' }, { name: 'Layer', t: 1 }, { name: 'Type', t: 1 },
      { name: 'Core' }, { name: 'Cmds' }, { name: 'Time (\u00b5s)', fmt: (v) => fmtNum(v / 1000, 3) },
      { name: 'Share', fmt: fmtPct }], rows, 5, true, 20));
  } else $('top-layers').appendChild(el('div', { class: 'muted' }, 'No layer information in this profile.'));
  if (A && A.topCmds.length) {
    const rows = A.topCmds.map((r) => [str(r.type), str(r.name), r.core, r.count, r.total, r.min, r.max, r.share]).filter((r) => r[0] || r[1]);
    $('top-cmds').appendChild(sortableTable([{ name: 'Engine', t: 1 }, { name: 'Command', t: 1 }, { name: 'Core' },
      { name: 'Count' }, { name: 'Time (\u00b5s)', fmt: (v) => fmtNum(v / 1000, 3) },
      { name: 'Min (\u00b5s)', fmt: (v) => fmtNum(v / 1000, 3) }, { name: 'Max (\u00b5s)', fmt: (v) => fmtNum(v / 1000, 3) },
      { name: 'Share', fmt: fmtPct }], rows, 4, true, 20));
  } else $('top-cmds').appendChild(el('div', { class: 'muted' }, 'No command statistics (analysis not available).'));
  if (D.notes.length || D.argsDropped) {
    const ul = el('ul');
    for (const n of D.notes) ul.appendChild(el('li', null, n));
    if (D.argsDropped) ul.appendChild(el('li', null, D.argsDropped + ' argument sets were left out of this page to keep it small.'));
    $('notes').appendChild(el('h3', null, 'Notes'));
    $('notes').appendChild(ul);
  }

  }
  /* ---------------------------------------------------------------- timeline layout */
  const canvas = $('timeline');
  const ctx = canvas.getContext('2d', { alpha: false });
  const GUTTER = 128, AXIS_H = 24, GROUP_H = 18;
  const groups = []; /* {y, label} core headers */
  /* Counter lanes: per core with DMA lanes, the DDR bandwidth over time (bytes of the DMA
   * commands spread evenly over their duration), drawn under the core's last lane. */
  const counters = [];
  const COUNTER_H = 34;
  let contentH = AXIS_H;
  {
    let key = null;
    const isDma = (L) => L.kind === 'GDMA' || L.kind === 'SDMA' || L.kind === 'CDMA';
    for (let li = 0; li < lanes.length; li++) {
      const L = lanes[li];
      const k = L.dev + '/' + L.core;
      if (k !== key) {
        key = k;
        groups.push({ y: contentH, label: L.core >= 0 ? (D.devices.length > 1 ? (D.devices[L.dev] || 'Device ' + L.dev) + ' \u00b7 ' : '') + 'Core ' + L.core : 'Host' });
        contentH += GROUP_H;
      }
      L.y = contentH;
      contentH += L.h;
      const next = lanes[li + 1];
      if (L.core >= 0 && (!next || next.dev + '/' + next.core !== k)) {
        const dma = lanes.filter((M) => M.dev === L.dev && M.core === L.core && isDma(M) && M.n);
        const tiu = lanes.find((M) => M.dev === L.dev && M.core === L.core && M.kind === 'TIU' && M.n && M.T.ua);
        const ch = dma.length && tiu ? COUNTER_H + 10 : COUNTER_H;
        if (dma.length || tiu) { counters.push({ dev: L.dev, core: L.core, y: contentH, h: ch, dma, tiu, lv: null, rlv: null }); contentH += ch; }
      }
    }
    contentH += 6;
  }
  /* Bytes per bucket (2^16 buckets over the span, then halving levels) once the DMA lanes
   * are decoded; a zoomed-in view sums the visible commands per pixel instead. */
  /* TIU uArch rate over time (when the dump has it): per bucket / pixel the duration-weighted
   * mean of the rate of the TIU commands there ("ua" - 1 in 0.01 %). */
  function rateSums(L, i) { const u = at(L.T, 'ua', i); return u ? (u - 1) / 10000 : -1; }
  function buildRate(C) {
    const L = C.tiu, nb = 1 << 16, bw = spanNs / nb, N = new Float64Array(nb), Dn = new Float64Array(nb);
    for (let i = 0; i < L.n; i++) {
      const r = rateSums(L, i), d = L.end[i] - L.start[i];
      if (r < 0 || d <= 0) continue;
      spread(N, bw, L.start[i], L.end[i], r * d, 0);
      spread(Dn, bw, L.start[i], L.end[i], d, 0);
    }
    const lv = [{ bw, N, D: Dn }];
    while (lv[lv.length - 1].N.length > 256) {
      const p = lv[lv.length - 1], m = p.N.length >> 1, N2 = new Float64Array(m), D2 = new Float64Array(m);
      for (let j = 0; j < m; j++) { N2[j] = p.N[2 * j] + p.N[2 * j + 1]; D2[j] = p.D[2 * j] + p.D[2 * j + 1]; }
      lv.push({ bw: p.bw * 2, N: N2, D: D2 });
    }
    C.rlv = lv;
  }
  function rateColumns(C, pw) {
    const L = C.tiu, t0 = view.t0, t1 = view.t1, nsPerPx = (t1 - t0) / pw, n = Math.ceil(pw);
    const N = new Float64Array(n), Dn = new Float64Array(n);
    if (!L || !L.ready) return null;
    const a = lowerBound(L.start, t0 - L.maxDur), b = lowerBound(L.start, t1);
    if (!C.rlv || b - a < 100000) {
      for (let i = a; i < b; i++) {
        const r = rateSums(L, i), d = L.end[i] - L.start[i];
        if (r < 0 || d <= 0) continue;
        spread(N, nsPerPx, L.start[i], L.end[i], r * d, t0);
        spread(Dn, nsPerPx, L.start[i], L.end[i], d, t0);
      }
    } else {
      let lv = C.rlv[0];
      for (const m of C.rlv) if (m.bw <= nsPerPx) lv = m;
      const j0 = Math.max(0, Math.floor(t0 / lv.bw)), j1 = Math.min(lv.N.length - 1, Math.floor(t1 / lv.bw));
      for (let j = j0; j <= j1; j++) { const px = Math.floor((j * lv.bw - t0) / nsPerPx); if (px >= 0 && px < n) { N[px] += lv.N[j]; Dn[px] += lv.D[j]; } }
    }
    const out = new Float64Array(n);
    for (let k = 0; k < n; k++) out[k] = Dn[k] > 0 ? N[k] / Dn[k] : NaN;
    return out;
  }
  function buildCounter(C) {
    if (C.tiu) buildRate(C);
    const nb = 1 << 16, bw = spanNs / nb, B = new Float64Array(nb);
    for (const L of C.dma) {
      const by = col(L.T, 'by'), byA = isCol(by);
      for (let i = 0; i < L.n; i++) spread(B, bw, L.start[i], L.end[i], byA ? by[i] : by || 0, 0);
    }
    const lv = [{ bw, B }];
    let cur = B;
    while (cur.length > 256) {
      const m = cur.length >> 1, B2 = new Float64Array(m);
      for (let j = 0; j < m; j++) B2[j] = cur[2 * j] + cur[2 * j + 1];
      cur = B2;
      lv.push({ bw: lv[lv.length - 1].bw * 2, B: B2 });
    }
    C.lv = lv;
  }
  /* Adds `bytes` spread evenly over [s, e) into buckets of width bw starting at t0. */
  function spread(B, bw, s, e, bytes, t0) {
    if (!bytes) return;
    const nb = B.length;
    if (e <= s) { const b = Math.floor((s - t0) / bw); if (b >= 0 && b < nb) B[b] += bytes; return; }
    const rate = bytes / (e - s);
    let b0 = Math.floor((s - t0) / bw), b1 = Math.floor((e - t0) / bw);
    if (b1 < 0 || b0 >= nb) return;
    if (b0 === b1) { B[b0] += bytes; return; }
    for (let b = Math.max(0, b0); b <= Math.min(nb - 1, b1); b++) {
      const a = Math.max(s, t0 + b * bw), z = Math.min(e, t0 + (b + 1) * bw);
      if (z > a) B[b] += rate * (z - a);
    }
  }
  /* GB/s per pixel column of the current view. */
  function counterColumns(C, pw) {
    const t0 = view.t0, t1 = view.t1, nsPerPx = (t1 - t0) / pw, out = new Float64Array(Math.ceil(pw));
    if (!C.dma.every((L) => L.ready)) return out;
    let visible = 0;
    for (const L of C.dma) visible += lowerBound(L.start, t1) - lowerBound(L.start, t0 - L.maxDur);
    if (!C.lv || visible < 100000) {
      for (const L of C.dma) {
        const by = col(L.T, 'by'), byA = isCol(by);
        for (let i = lowerBound(L.start, t0 - L.maxDur); i < L.n && L.start[i] <= t1; i++) spread(out, nsPerPx, L.start[i], L.end[i], byA ? by[i] : by || 0, t0);
      }
    } else {
      let lv = C.lv[0];
      for (const m of C.lv) if (m.bw <= nsPerPx) lv = m;
      const B = lv.B, j0 = Math.max(0, Math.floor(t0 / lv.bw)), j1 = Math.min(B.length - 1, Math.floor(t1 / lv.bw));
      for (let j = j0; j <= j1; j++) { const px = Math.floor((j * lv.bw - t0) / nsPerPx); if (px >= 0 && px < out.length) out[px] += B[j]; }
    }
    for (let k = 0; k < out.length; k++) out[k] /= nsPerPx; /* bytes per ns = GB/s */
    return out;
  }
  let W = 800, H = contentH, dpr = 1;
  const view = { t0: 0, t1: spanNs };
  let hover = null, pinned = null, dirty = true, frames = 0, firstPaintMs = -1, lastRenderMs = 0;
  let drag = null, boxMode = false, mouseFrac = 0.5; /* W/S zoom at the cursor, like Perfetto */

  function resize() {
    dpr = window.devicePixelRatio || 1;
    W = Math.max(300, canvas.parentElement.clientWidth);
    H = contentH;
    canvas.style.height = H + 'px';
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    dirty = true;
    schedule();
  }
  const plotW = () => W - GUTTER;
  const xOf = (t) => GUTTER + ((t - view.t0) / (view.t1 - view.t0)) * plotW();
  const tOf = (x) => view.t0 + ((x - GUTTER) / plotW()) * (view.t1 - view.t0);

  function setView(t0, t1) {
    const minSpan = 20; /* ns */
    if (t1 - t0 < minSpan) { const c = (t0 + t1) / 2; t0 = c - minSpan / 2; t1 = c + minSpan / 2; }
    const pad = spanNs * 0.05;
    const span = Math.min(t1 - t0, spanNs + 2 * pad);
    if (t0 < -pad) { t0 = -pad; t1 = t0 + span; }
    if (t1 > spanNs + pad) { t1 = spanNs + pad; t0 = t1 - span; }
    view.t0 = t0;
    view.t1 = t1;
    hideTooltip();
    dirty = true;
    schedule();
  }
  function zoom(factor, frac) {
    if (frac === undefined) frac = 0.5;
    const t = view.t0 + (view.t1 - view.t0) * frac;
    setView(t - (t - view.t0) * factor, t + (view.t1 - t) * factor);
  }
  function pan(frac) {
    const d = (view.t1 - view.t0) * frac;
    setView(view.t0 + d, view.t1 + d);
  }
  function reset() { setView(0, spanNs); }

  let scheduled = false;
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => { scheduled = false; if (dirty) render(); });
  }

  /* Nice tick step for the axis: 1, 2, 5 x 10^k ns with at least ~90 px between ticks. */
  function tickStep() {
    const ns = ((view.t1 - view.t0) / plotW()) * 90;
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(ns, 1e-9))));
    for (const m of [1, 2, 5, 10]) if (p * m >= ns) return p * m;
    return p * 10;
  }

  /* The plot area is drawn into a pixel buffer (one putImageData per frame): a zoomed-out
   * million-command view is thousands of rectangles, and canvas fillRect calls with changing
   * colours cost far more than writing the pixels. Coordinates are CSS px relative to the
   * plot's left edge; fbRect clips and scales to device pixels. */
  let fb = null, fb32 = null, fbW = 0, fbH = 0;
  function fbRect(x0, x1, y0, y1, pix) {
    let X0 = Math.floor(x0 * dpr), X1 = Math.floor(x1 * dpr);
    if (X1 <= X0) X1 = X0 + 1;
    if (X0 < 0) X0 = 0;
    if (X1 > fbW) X1 = fbW;
    let Y0 = Math.round(y0 * dpr), Y1 = Math.round(y1 * dpr);
    if (Y1 <= Y0) Y1 = Y0 + 1;
    if (Y0 < 0) Y0 = 0;
    if (Y1 > fbH) Y1 = fbH;
    if (X0 >= X1) return;
    if (X1 - X0 > 24) {
      for (let y = Y0; y < Y1; y++) fb32.fill(pix, y * fbW + X0, y * fbW + X1);
    } else { /* narrow (the common zoomed-out case): plain stores beat fill() calls */
      const w = X1 - X0;
      for (let o = Y0 * fbW + X0, end = Y1 * fbW + X0; o < end; o += fbW)
        for (let k = 0; k < w; k++) fb32[o + k] = pix;
    }
  }

  /* Draws one lane. Commands at least ~1.5 px wide are drawn as they are; narrower ones are
   * merged per pixel column (per row), keeping the tallest height and the colour of the
   * longest, so the cost is bounded by what is visible, and a million-command lane stays a
   * handful of thousand rectangles. */
  function drawLane(L) {
    const n = L.n;
    if (!n) return;
    if (!L.ready) { if (L.lod) drawMip(L, view.t0, view.t1, plotW(), plotW() / (view.t1 - view.t0), L.lod); return; }
    const s = L.start, e = L.end, hcol = L.hv, col = L.col, row = L.row;
    const t0 = view.t0, t1 = view.t1, pw = plotW(), k = pw / (t1 - t0);
    const rowH = L.rowH, baseY = L.y + 2;
    let i = lowerBound(s, t0 - L.maxDur);
    if (L.mip && lowerBound(s, t1) - i > 3 * pw) { drawMip(L, t0, t1, pw, k, L.mip); return; }
    const R = L.rows;
    const ckC = L.ckC, ckCol = !!ckC, ckOf = (j) => (isCol(ckC) ? ckC[j] : ckC);
    const pPx = new Float64Array(R).fill(-1), pH = new Float64Array(R), pC = new Int32Array(R), pLen = new Float64Array(R);
    function fill(x, w, r, h, c) {
      const full = rowH - 2;
      const hh = Math.max(1, (h / 1000) * full);
      fbRect(x, x + w, baseY + r * rowH + (full - hh), baseY + r * rowH + full, PIX[c]);
    }
    for (; i < n; i++) {
      const st = s[i];
      if (st > t1) break;
      const en = e[i];
      if (en < t0) continue;
      let x0 = (st - t0) * k, x1 = (en - t0) * k;
      if (x0 < 0) x0 = 0;
      if (x1 > pw) x1 = pw;
      const r = row ? row[i] : 0;
      const w = x1 - x0;
      if (w >= 1.5) {
        if (pPx[r] >= 0) { fill(pPx[r], 1, r, pH[r], pC[r]); pPx[r] = -1; }
        fill(x0, w - 0.5, r, hcol[i], col[i]);
        if ((w >= 36 || (w >= 3 && ckCol && ckOf(i) === 3)) && overlays.length < 4000) overlays.push(L, i, x0, w, r);
      } else {
        const px = x0 | 0;
        if (px !== pPx[r]) {
          if (pPx[r] >= 0) fill(pPx[r], 1, r, pH[r], pC[r]);
          pPx[r] = px; pH[r] = hcol[i]; pC[r] = col[i]; pLen[r] = w;
        } else {
          if (hcol[i] > pH[r]) pH[r] = hcol[i];
          if (w > pLen[r]) { pLen[r] = w; pC[r] = col[i]; }
        }
      }
    }
    for (let r = 0; r < R; r++) if (pPx[r] >= 0) fill(pPx[r], 1, r, pH[r], pC[r]);
  }

  /* Draws a lane from a pyramid (per row: levels): the coarsest level whose buckets are at
   * most a pixel wide; per pixel column the tallest bucket wins, equal neighbouring columns
   * become one rect. */
  function drawMip(L, t0, t1, pw, k, mip) {
    const nsPerPx = (t1 - t0) / pw;
    for (let r = 0; r < mip.length; r++) {
      let lv = mip[r][0];
      for (const m of mip[r]) if (m.bw <= nsPerPx) lv = m;
      drawLevel(L, r, lv, t0, t1, pw, k);
    }
  }
  function drawLevel(L, r, lv, t0, t1, pw, k) {
    const H = lv.H, C = lv.C, bw = lv.bw, full = L.rowH - 2, baseY = L.y + 2 + r * L.rowH;
    let j = Math.max(0, Math.floor(t0 / bw));
    const j1 = Math.min(H.length - 1, Math.floor(t1 / bw));
    let curPx = -1, curH = 0, curC = 0, runX = -1, runW = 0, runH = 0, runC = -1;
    function flushRun() {
      if (runX < 0) return;
      const hh = Math.max(1, (runH / 1000) * full);
      fbRect(runX, runX + runW, baseY + (full - hh), baseY + full, PIX[runC]);
      runX = -1;
    }
    function pushPx() {
      if (curPx < 0) return;
      if (runX >= 0 && curPx === runX + runW && curH === runH && curC === runC) runW++;
      else { flushRun(); runX = curPx; runW = 1; runH = curH; runC = curC; }
    }
    for (; j <= j1; j++) {
      const h = H[j];
      if (!h) continue;
      let px = Math.floor((j * bw - t0) * k);
      if (px < 0) px = 0;
      if (px >= pw) break;
      const w = Math.max(1, Math.floor(bw * k)); /* buckets wider than a pixel (coarse lod) */
      if (w > 1) { pushPx(); flushRun(); curPx = -1; fbRect(px, Math.min(pw, px + w), baseY + full - Math.max(1, (h / 1000) * full), baseY + full, PIX[C[j]]); continue; }
      if (px !== curPx) { pushPx(); curPx = px; curH = h; curC = C[j]; }
      else if (h > curH) { curH = h; curC = C[j]; }
    }
    pushPx();
    flushRun();
  }

  function outline(L, i, color, lw) {
    const x0 = Math.max(GUTTER, xOf(L.start[i])), x1 = Math.min(W, xOf(L.end[i]));
    if (x1 < GUTTER || x0 > W) return;
    const r = L.row ? L.row[i] : 0;
    ctx.strokeStyle = color;
    ctx.lineWidth = lw;
    ctx.strokeRect(x0 - 1, L.y + 2 + r * L.rowH - 1, Math.max(2, x1 - x0) + 2, L.rowH);
  }

  /* Blocks drawn one by one this frame that get a label (wide ones) or hatching (waits):
   * flat list of (lane, index, x, width, row). */
  const overlays = [];
  let hatch = null;
  function drawOverlays() {
    if (!hatch) {
      const c = document.createElement('canvas');
      c.width = c.height = 8;
      const g = c.getContext('2d');
      g.strokeStyle = 'rgba(110,118,135,0.85)';
      g.lineWidth = 1.5;
      g.beginPath(); g.moveTo(0, 8); g.lineTo(8, 0); g.moveTo(-2, 2); g.lineTo(2, -2); g.moveTo(6, 10); g.lineTo(10, 6); g.stroke();
      hatch = ctx.createPattern(c, 'repeat');
    }
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, AXIS_H, W - GUTTER, H - AXIS_H);
    ctx.clip();
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (let k = 0; k < overlays.length; k += 5) {
      const L = overlays[k], i = overlays[k + 1], x = GUTTER + overlays[k + 2], w = overlays[k + 3], r = overlays[k + 4];
      const y = L.y + 2 + r * L.rowH, hh = L.rowH - 2;
      if (at(L.T, 'ck', i) === 3) { /* wait_msg: the whole wait hatched, so it is seen */
        ctx.fillStyle = hatch;
        ctx.fillRect(x, y, w, hh);
        ctx.strokeStyle = 'rgba(110,118,135,0.9)';
        ctx.lineWidth = 1;
        ctx.strokeRect(x + 0.5, y + 0.5, Math.max(0, w - 1), hh - 1);
      }
      if (w < 36) continue;
      /* Label: name and duration, shortened to fit; dark text on the block's lower part. */
      let txt = str(at(L.T, 'nm', i)) + ' ' + fmtTime(L.end[i] - L.start[i]);
      const room = w - 6;
      if (ctx.measureText(txt).width > room) {
        let lo = 0, hi = txt.length;
        while (lo < hi) { const m = (lo + hi + 1) >> 1; if (ctx.measureText(txt.slice(0, m) + '\u2026').width <= room) lo = m; else hi = m - 1; }
        if (lo < 2) continue;
        txt = txt.slice(0, lo) + '\u2026';
      }
      ctx.fillStyle = 'rgba(255,255,255,0.75)';
      const tw = ctx.measureText(txt).width;
      const ty = y + hh - 7;
      ctx.fillRect(x + 2, ty - 6, tw + 2, 12);
      ctx.fillStyle = '#1d2330';
      ctx.fillText(txt, x + 3, ty);
    }
    ctx.restore();
  }

  /* The command that command i of lane L waits for: TIU waits on GDMA command ids and GDMA
   * on TIU ones (the "dep" column), on the same core; the latest such command that starts no
   * later than this one. null when there is none (or the lane is not decoded yet). */
  function depTarget(L, i) {
    const dep = at(L.T, 'dep', i);
    if (!dep || (L.kind !== 'TIU' && L.kind !== 'GDMA')) return null;
    const want = L.kind === 'TIU' ? 'GDMA' : 'TIU';
    const O = lanes.find((M) => M.kind === want && M.core === L.core && M.dev === L.dev);
    if (!O || !O.ready) return null;
    const c = col(O.T, 'cmd');
    let j = Math.min(O.n - 1, lowerBound(O.start, L.start[i] + 1) - 1);
    for (let g = 0; j >= 0 && g < 500000; j--, g++) if ((isCol(c) ? c[j] : c) === dep) return { L: O, i: j };
    return null;
  }
  /* The first command on the other engine of the core that waits for command i of lane L
   * (its "dep" is this command's id), starting no earlier than this one; null if none. */
  function signalTarget(L, i) {
    if (L.kind !== 'TIU' && L.kind !== 'GDMA') return null;
    const id = at(L.T, 'cmd', i);
    if (!id) return null;
    const want = L.kind === 'TIU' ? 'GDMA' : 'TIU';
    const O = lanes.find((M) => M.kind === want && M.core === L.core && M.dev === L.dev);
    if (!O || !O.ready) return null;
    const d = col(O.T, 'dep');
    if (!isCol(d)) return d === id ? { L: O, i: lowerBound(O.start, L.start[i]) } : null;
    for (let j = lowerBound(O.start, L.start[i]), g = 0; j < O.n && g < 500000; j++, g++) if (d[j] === id) return { L: O, i: j };
    return null;
  }
  function laneMidY(L, i) { return L.y + 2 + (L.row ? L.row[i] : 0) * L.rowH + (L.rowH - 2) / 2; }
  function drawDep(hit) {
    const t = depTarget(hit.L, hit.i);
    if (t) arrow(t, hit, 'waits for ' + t.L.label + ' cmd ' + at(t.L.T, 'cmd', t.i), '#d0342c', '#a4221b');
    const w = signalTarget(hit.L, hit.i);
    if (w) arrow(hit, w, 'signals ' + w.L.label + ' cmd ' + at(w.L.T, 'cmd', w.i), '#2f6fde', '#1d4fa8');
  }
  /* An arrow from the end of command `a` to the start of command `b`, labelled. */
  function arrow(a, b, txt, color, textColor) {
    const x1 = xOf(a.L.end[a.i]), y1 = laneMidY(a.L, a.i), x2 = xOf(b.L.start[b.i]), y2 = laneMidY(b.L, b.i);
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.bezierCurveTo(x1 + Math.max(20, (x2 - x1) / 2), y1, x2 - Math.max(20, (x2 - x1) / 2), y2, x2, y2);
    ctx.stroke();
    const hx = x2, hy = y2; /* arrow head pointing right into the waiter */
    ctx.beginPath();
    ctx.moveTo(hx, hy);
    ctx.lineTo(hx - 8 * Math.cos(0.45), hy + 8 * Math.sin(0.45));
    ctx.lineTo(hx - 8 * Math.cos(0.45), hy - 8 * Math.sin(0.45));
    ctx.closePath();
    ctx.fill();
    ctx.beginPath();
    ctx.arc(x1, y1, 3, 0, 2 * Math.PI);
    ctx.fill();
    ctx.font = '10px system-ui, sans-serif';
    const tw = ctx.measureText(txt).width, lx = Math.min(Math.max(GUTTER + 2, (x1 + x2) / 2 - tw / 2), W - tw - 4), ly = (y1 + y2) / 2;
    ctx.fillStyle = 'rgba(255,255,255,0.85)';
    ctx.fillRect(lx - 2, ly - 7, tw + 4, 14);
    ctx.fillStyle = textColor;
    ctx.fillText(txt, lx, ly);
  }

  function render() {
    const tStart = performance.now();
    dirty = false;
    /* 1. plot area pixels: lane bands, grid, commands */
    fbW = canvas.width - Math.round(GUTTER * dpr);
    fbH = canvas.height;
    if (!fb || fb.width !== fbW || fb.height !== fbH) {
      fb = ctx.createImageData(Math.max(1, fbW), Math.max(1, fbH));
      fb32 = new Uint32Array(fb.data.buffer);
    }
    fb32.fill(PIX_BG[0]);
    for (const g of groups) fbRect(0, W, g.y, g.y + GROUP_H, PIX_GROUP);
    for (const L of lanes) if (L.i % 2) fbRect(0, W, L.y, L.y + L.h, PIX_BG[1]);
    const step = tickStep();
    const first = Math.ceil(view.t0 / step) * step;
    const labels = [];
    for (let t = first; t <= view.t1; t += step) {
      const x = xOf(t);
      if (x < GUTTER) continue;
      fbRect(x - GUTTER, x - GUTTER + 1 / dpr, AXIS_H, H, PIX_GRID);
      labels.push([Math.round(x) + 0.5, t]);
    }
    overlays.length = 0;
    for (const L of lanes) {
      drawLane(L);
      fbRect(0, W, L.y + L.h - 1, L.y + L.h, PIX_GRID);
    }
    for (const C of counters) {
      const cols = counterColumns(C, plotW());
      let mx = 0;
      for (let k = 0; k < cols.length; k++) if (cols[k] > mx) mx = cols[k];
      C.max = mx;
      C.scale = D.ddrMaxGbps > 0 ? Math.max(D.ddrMaxGbps, mx) : mx;
      const full = C.h - 6;
      if (C.scale > 0) for (let k = 0; k < cols.length; k++) if (cols[k] > 0) {
        const hh = Math.max(1, (cols[k] / C.scale) * full);
        fbRect(k, k + 1, C.y + 3 + full - hh, C.y + 3 + full, PIX_BW);
      }
      fbRect(0, W, C.y + C.h - 1, C.y + C.h, PIX_GRID);
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.putImageData(fb, Math.round(GUTTER * dpr), 0);
    /* 2. axis, labels, outlines with the canvas API on top */
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = '#f5f7fa';
    ctx.fillRect(0, 0, GUTTER, H);
    ctx.fillRect(0, 0, W, AXIS_H);
    ctx.fillStyle = '#485066';
    /* Axis unit from the tick step (ns, µs, ms, s), decimals so that ticks differ; a label
     * that would run past the right edge is drawn to the left of its tick. */
    const [udiv, uname] = step < 1e3 ? [1, 'ns'] : step < 1e6 ? [1e3, '\u00b5s'] : step < 1e9 ? [1e6, 'ms'] : [1e9, 's'];
    const dec = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / udiv) + 1e-9)));
    for (const [x, t] of labels) {
      const txt = (t / udiv).toFixed(dec) + ' ' + uname, tw = ctx.measureText(txt).width;
      if (x + 3 + tw > W - 2) { ctx.textAlign = 'right'; ctx.fillText(txt, x - 3, AXIS_H / 2); ctx.textAlign = 'left'; }
      else ctx.fillText(txt, x + 3, AXIS_H / 2);
    }
    for (const g of groups) {
      ctx.fillStyle = '#e9edf4';
      ctx.fillRect(0, g.y, GUTTER, GROUP_H);
      ctx.fillStyle = '#1d2330';
      ctx.font = 'bold 12px system-ui, sans-serif';
      ctx.fillText(g.label, 6, g.y + GROUP_H / 2);
    }
    drawOverlays();
    ctx.font = '11px system-ui, sans-serif';
    for (const L of lanes) {
      ctx.fillStyle = '#f5f7fa';
      ctx.fillRect(0, L.y, GUTTER, L.h);
      ctx.fillStyle = '#1d2330';
      ctx.fillText(L.label, 8, L.y + Math.min(L.h / 2, 11));
      ctx.fillStyle = '#8a91a1';
      if (L.h >= 26) ctx.fillText(L.kind === 'TIU' ? 'height: uArch rate' : L.kind === 'GDMA' || L.kind === 'SDMA' || L.kind === 'CDMA' ? 'height: GB/s' : L.n + ' items', 8, L.y + 24);
      ctx.save();
      ctx.beginPath();
      ctx.rect(GUTTER, L.y, W - GUTTER, L.h);
      ctx.clip();
      if (L.mark) for (const i of L.markVisible()) outline(L, i, '#ff2d55', 2);
      if (hover && hover.L === L) outline(L, hover.i, '#1d2330', 1);
      if (pinned && pinned.L === L) outline(L, pinned.i, '#000000', 2);
      ctx.restore();
    }
    for (const C of counters) {
      ctx.fillStyle = '#f5f7fa';
      ctx.fillRect(0, C.y, GUTTER, C.h);
      ctx.fillStyle = '#1d2330';
      ctx.fillText(C.dma.length ? 'DDR GB/s' : 'TIU uArch rate', 8, C.y + 11);
      ctx.fillStyle = '#8a91a1';
      if (C.dma.length) ctx.fillText('peak in view ' + (C.max || 0).toFixed(1), 8, C.y + 24);
      /* TIU uArch rate as an orange line over the band (0..100 %). */
      const rc = C.tiu ? rateColumns(C, plotW()) : null;
      C.rate = rc;
      if (rc) {
        const full = C.h - 6;
        ctx.save();
        ctx.beginPath();
        ctx.rect(GUTTER, C.y, W - GUTTER, C.h);
        ctx.clip();
        ctx.strokeStyle = '#e07b00';
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        let pen = false, sum = 0, cnt = 0;
        for (let k = 0; k < rc.length; k++) {
          if (!(rc[k] >= 0)) { pen = false; continue; }
          const y = C.y + 3 + full - Math.min(1, rc[k]) * full;
          if (pen) ctx.lineTo(GUTTER + k + 0.5, y); else ctx.moveTo(GUTTER + k + 0.5, y);
          pen = true;
          sum += rc[k];
          cnt++;
        }
        ctx.stroke();
        ctx.restore();
        ctx.fillStyle = '#b86400';
        if (cnt) ctx.fillText('uArch rate ' + ((sum / cnt) * 100).toFixed(1) + '% (line)', 8, C.y + (C.dma.length ? 36 : 24));
      }
    }
    /* Dependency arrows of the hovered and the pinned command. */
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, AXIS_H, W - GUTTER, H - AXIS_H);
    ctx.clip();
    for (const hit of [pinned, hover]) if (hit) drawDep(hit);
    ctx.restore();
    ctx.strokeStyle = '#d9dde5';
    ctx.beginPath();
    ctx.moveTo(GUTTER - 0.5, 0);
    ctx.lineTo(GUTTER - 0.5, H);
    ctx.stroke();
    if (drag && drag.box) {
      const a = Math.min(drag.x0, drag.x), b = Math.max(drag.x0, drag.x);
      ctx.fillStyle = 'rgba(47,111,222,0.15)';
      ctx.fillRect(a, AXIS_H, b - a, H - AXIS_H);
      ctx.strokeStyle = '#2f6fde';
      ctx.strokeRect(a + 0.5, AXIS_H + 0.5, b - a, H - AXIS_H - 1);
    }
    $('range-info').textContent = fmtTime(view.t0) + ' \u2013 ' + fmtTime(view.t1) + ' (' + fmtTime(view.t1 - view.t0) + ')';
    frames++;
    lastRenderMs = performance.now() - tStart;
    if (firstPaintMs < 0) firstPaintMs = performance.now();
    if (memRedraw) memRedraw();
  }

  /* ---------------------------------------------------------------- picking + details */
  function laneAt(y) {
    for (const L of lanes) if (y >= L.y && y < L.y + L.h) return L;
    return null;
  }
  function pick(x, y) {
    const L = laneAt(y);
    if (!L || x < GUTTER || !L.n || !L.ready) return null;
    const r = L.row ? Math.max(0, Math.min(L.rows - 1, Math.floor((y - L.y - 2) / L.rowH))) : 0;
    const t = tOf(x), tol = ((view.t1 - view.t0) / plotW()) * 3;
    const s = L.start, e = L.end;
    let i = lowerBound(s, t + tol) - 1, best = -1, bestD = Infinity, guard = 0;
    for (; i >= 0 && s[i] >= t - L.maxDur - tol && guard < 20000; i--, guard++) {
      if (L.row && L.row[i] !== r) continue;
      const d = t < s[i] ? s[i] - t : t > e[i] ? t - e[i] : 0;
      if (d <= tol && (d < bestD || (d === bestD && e[i] - s[i] < e[best] - s[best]))) { best = i; bestD = d; }
    }
    return best >= 0 ? { L, i: best } : null;
  }
  function cmdRows(L, i) {
    const T = L.T, g = (c) => at(T, c, i);
    const rows = [];
    const kind = L.kind, isDma = kind === 'GDMA' || kind === 'SDMA' || kind === 'CDMA';
    if (g('cmd')) rows.push(['Cmd Id', String(g('cmd'))]);
    rows.push([kind === 'Layer' ? 'Layer type' : 'Function', str(g('nm'))]);
    if (g('ty')) rows.push([kind === 'Layer' ? 'Layer name' : 'Function type', str(g('ty'))]);
    rows.push(['Engine', (L.core >= 0 ? 'Core ' + L.core + ' ' : '') + L.label]);
    rows.push(['Start', fmtTime(L.start[i])]);
    rows.push(['Duration', fmtTime(L.end[i] - L.start[i])]);
    if (g('cyc')) rows.push(['Cycles', String(g('cyc'))]);
    if (g('by')) rows.push(['Bytes', g('by') + ' (' + fmtBytes(g('by')) + ')']);
    if (isDma) {
      const ns = g('cyc') && T.mhz ? (g('cyc') * 1000) / T.mhz : L.end[i] - L.start[i];
      rows.push(['Bandwidth', (ns > 0 ? g('by') / ns : 0).toFixed(4) + ' GB/s']);
    }
    if (kind === 'TIU' && !g('ck')) {
      /* Bar height = uArch rate (Alg Ops / uArch Ops) when the dump has TIU descriptors. */
      rows.push(['uArch rate', g('ua') ? ((g('ua') - 1) / 100).toFixed(2) + '%' : 'n/a (no descriptors in this dump; full-height bar)']);
      if (g('ao')) rows.push(['Alg Ops', String(g('ao'))]);
      if (g('uo')) rows.push(['uArch Ops', String(g('uo'))]);
    }
    if (g('dir')) rows.push(['Direction', D.dirs[g('dir')] || String(g('dir'))]);
    if (g('dt')) rows.push(['Data type', D.dtypes[g('dt')] || String(g('dt'))]);
    if (g('st')) rows.push(['Stall cycles', String(g('st'))]);
    if (g('dep')) {
      const t = depTarget(L, i);
      rows.push(['Waits for', (t ? t.L.label : kind === 'TIU' ? 'GDMA' : kind === 'GDMA' ? 'TIU' : 'cmd') + ' cmd ' + g('dep') +
        (t ? ' (ends ' + fmtTime(t.L.end[t.i]) + ', ' + fmtTime(Math.abs(L.start[i] - t.L.end[t.i])) +
          (L.start[i] >= t.L.end[t.i] ? ' before' : ' after') + ' this starts)' : '')]);
    }
    if (g('ck')) rows.push(['Class', ['normal', 'sys', 'send_msg', 'wait_msg'][g('ck')] || String(g('ck'))]);
    if (g('ly')) rows.push(['Layer', layerText(g('ly') - 1)]);
    const as = g('ar') ? argset(g('ar')) : null;
    /* Address arguments (des_*_addr, src/dst_start_addr, ...) in hex, as the vendor shows them. */
    if (as) for (let j = 0; j + 1 < as.length; j += 2) {
      const k = str(as[j]), v = as[j + 1];
      rows.push([k, /addr/i.test(k) && (typeof v === 'number' || /^\d+$/.test(String(v))) ? hex(v) : String(v)]);
    }
    return rows;
  }
  const tooltip = $('tooltip');
  function showTooltip(hit, cx, cy) {
    tooltip.textContent = '';
    tooltip.appendChild(kvTable(cmdRows(hit.L, hit.i)));
    tooltip.hidden = false;
    const r = tooltip.getBoundingClientRect();
    let x = cx + 14, y = cy + 14;
    if (x + r.width > window.innerWidth - 4) x = Math.max(4, cx - r.width - 14);
    if (y + r.height > window.innerHeight - 4) y = Math.max(4, cy - r.height - 14);
    tooltip.style.left = x + 'px';
    tooltip.style.top = y + 'px';
  }
  function hideTooltip() { $('tooltip').hidden = true; }
  function pin(hit) {
    pinned = hit;
    const d = $('details');
    d.textContent = '';
    if (!hit) { d.appendChild(el('div', { class: 'muted' }, 'Click a command to pin its details here.')); }
    else {
      d.appendChild(kvTable(cmdRows(hit.L, hit.i)));
      const t = depTarget(hit.L, hit.i);
      if (t) {
        const b = el('button', { id: 'follow-dep' }, 'Go to the command it waits for: ' + t.L.label + ' cmd ' + at(t.L.T, 'cmd', t.i));
        b.addEventListener('click', () => jumpTo(t));
        d.appendChild(b);
      }
      const w = signalTarget(hit.L, hit.i);
      if (w) {
        const b = el('button', { id: 'follow-signal' }, 'Go to the command waiting for it: ' + w.L.label + ' cmd ' + at(w.L.T, 'cmd', w.i));
        b.addEventListener('click', () => jumpTo(w));
        d.appendChild(b);
      }
    }
    dirty = true;
    schedule();
  }

  /* ---------------------------------------------------------------- input */
  const local = (ev) => { const r = canvas.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const [x] = local(ev);
    const frac = Math.max(0, Math.min(1, (x - GUTTER) / plotW()));
    if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) { pan(ev.deltaX / plotW()); return; }
    const dy = ev.deltaMode === 1 ? ev.deltaY * 33 : ev.deltaY;
    zoom(Math.exp(dy * 0.0025), frac);
  }, { passive: false });
  canvas.addEventListener('mousedown', (ev) => {
    if (ev.button !== 0) return;
    const [x, y] = local(ev);
    drag = { x0: x, y0: y, x, t0: view.t0, t1: view.t1, box: boxMode || ev.shiftKey, moved: false };
    canvas.classList.toggle('dragging', !drag.box);
    canvas.focus();
  });
  window.addEventListener('mousemove', (ev) => {
    const [x, y] = local(ev);
    if (drag) {
      drag.x = x;
      if (Math.abs(x - drag.x0) > 3) drag.moved = true;
      if (drag.box) { dirty = true; schedule(); }
      else if (drag.moved) {
        const dt = ((x - drag.x0) / plotW()) * (drag.t1 - drag.t0);
        setView(drag.t0 - dt, drag.t1 - dt);
      }
      hideTooltip();
      return;
    }
    mouseFrac = ev.target === canvas && x >= GUTTER ? Math.min(1, (x - GUTTER) / plotW()) : 0.5;
    if (ev.target !== canvas) { if (hover) { hover = null; dirty = true; schedule(); } hideTooltip(); return; }
    const hit = pick(x, y);
    if ((hit && (!hover || hit.L !== hover.L || hit.i !== hover.i)) || (!hit && hover)) { hover = hit; dirty = true; schedule(); }
    if (hit) showTooltip(hit, ev.clientX, ev.clientY);
    else hideTooltip();
  });
  window.addEventListener('mouseup', (ev) => {
    if (!drag) return;
    const d = drag;
    drag = null;
    canvas.classList.remove('dragging');
    if (d.box && d.moved) {
      const a = tOf(Math.min(d.x0, d.x)), b = tOf(Math.max(d.x0, d.x));
      setView(a, b);
      if (boxMode) toggleBox(false);
    } else if (!d.moved && ev.target === canvas) {
      const [x, y] = local(ev);
      pin(pick(x, y));
    } else { dirty = true; schedule(); }
  });
  canvas.addEventListener('mouseleave', () => { if (hover) { hover = null; dirty = true; schedule(); } hideTooltip(); });
  window.addEventListener('keydown', (ev) => {
    const tag = (ev.target && ev.target.tagName) || '';
    if (tag === 'INPUT' || tag === 'TEXTAREA' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key.toLowerCase();
    if (k === 'w') zoom(0.8, mouseFrac);
    else if (k === 's') zoom(1.25, mouseFrac);
    else if (k === 'a') pan(-0.1);
    else if (k === 'd') pan(0.1);
    else if (k === '0') reset();
    else if (k === 'escape') pin(null);
    else return;
    ev.preventDefault();
  });
  function toggleBox(on) {
    boxMode = on === undefined ? !boxMode : on;
    $('btn-box').classList.toggle('on', boxMode);
    canvas.classList.toggle('boxmode', boxMode);
  }
  $('btn-zoom-in').addEventListener('click', () => zoom(0.5));
  $('btn-zoom-out').addEventListener('click', () => zoom(2));
  $('btn-reset').addEventListener('click', reset);
  $('btn-box').addEventListener('click', () => toggleBox());
  window.addEventListener('resize', resize);

  /* ---------------------------------------------------------------- command table */
  /* Every command of the engine lanes, filtered by engine, function / type (substring of the
   * name or type), layer (substring of the layer's name or type) and minimum duration; rows
   * are (lane, index) pairs in two typed arrays, only the ~30 rows in the scroll window exist
   * as elements (virtualized). A click jumps the timeline there and pins the command. */
  const ROW_H = 20;
  let tRows = { L: new Int32Array(0), I: new Int32Array(0), n: 0 };
  function buildTable() {
    const sel = $('f-engine');
    lanes.forEach((L, li) => { if (L.kind !== 'Layer' && L.n) sel.appendChild(el('option', { value: String(li) }, (L.core >= 0 ? 'Core ' + L.core + ' ' : '') + L.label)); });
    const head = $('cmd-head');
    for (const h of ['Engine', 'Cmd Id', 'Function', 'Function type', 'Start', 'Duration', 'Layer']) head.appendChild(el('span', null, h));
    for (const id of ['f-engine', 'f-type', 'f-layer', 'f-dur', 'f-sort']) $(id).addEventListener(id === 'f-engine' || id === 'f-sort' ? 'change' : 'input', () => { clearTimeout(filterTimer); filterTimer = setTimeout(filterTable, 200); });
    $('cmd-scroll').addEventListener('scroll', drawTable);
    filterTable();
  }
  let filterTimer = 0;
  function strHits(q) {
    if (!q) return null;
    const h = new Uint8Array(S.length), ql = q.toLowerCase();
    for (let i = 0; i < S.length; i++) h[i] = S[i].toLowerCase().includes(ql) ? 1 : 0;
    return h;
  }
  function filterTable() {
    const eng = $('f-engine').value, ty = strHits($('f-type').value.trim()), ly = strHits($('f-layer').value.trim());
    const minNs = Number($('f-dur').value || 0) * 1000;
    let total = 0;
    for (const L of lanes) if (L.kind !== 'Layer') total += L.n;
    const RL = new Int32Array(total), RI = new Int32Array(total);
    let n = 0;
    if (ly) lyDecode();
    lanes.forEach((L, li) => {
      if (L.kind === 'Layer' || !L.n || !L.ready || (eng !== '' && Number(eng) !== li)) return;
      const T = L.T, nm = col(T, 'nm'), tyc = col(T, 'ty'), lyc = col(T, 'ly');
      for (let i = 0; i < L.n; i++) {
        if (minNs && L.end[i] - L.start[i] < minNs) continue;
        if (ty && !ty[isCol(nm) ? nm[i] : nm || 0] && !ty[isCol(tyc) ? tyc[i] : tyc || 0]) continue;
        if (ly) { const l = isCol(lyc) ? lyc[i] : lyc || 0; if (!l || (!ly[LY.name[l - 1]] && !ly[LY.type[l - 1]])) continue; }
        RL[n] = li; RI[n] = i; n++;
      }
    });
    tRows = { L: RL.subarray(0, n), I: RI.subarray(0, n), n };
    if ($('f-sort').checked && n) {
      const ord = new Int32Array(n).map((_, k) => k), dur = new Float64Array(n);
      for (let k = 0; k < n; k++) { const L = lanes[RL[k]]; dur[k] = L.end[RI[k]] - L.start[RI[k]]; }
      ord.sort((a, b) => dur[b] - dur[a]);
      tRows = { L: Int32Array.from(ord, (k) => RL[k]), I: Int32Array.from(ord, (k) => RI[k]), n };
    }
    $('f-count').textContent = n.toLocaleString('en-US') + ' of ' + total.toLocaleString('en-US') + ' commands';
    $('cmd-spacer').style.height = n * ROW_H + 'px';
    $('cmd-scroll').scrollTop = 0;
    drawTable();
  }
  function drawTable() {
    const sc = $('cmd-scroll'), sp = $('cmd-spacer');
    const first = Math.floor(sc.scrollTop / ROW_H), last = Math.min(tRows.n, first + Math.ceil(sc.clientHeight / ROW_H) + 2);
    sp.textContent = '';
    for (let k = first; k < last; k++) {
      const L = lanes[tRows.L[k]], i = tRows.I[k], T = L.T;
      const r = el('div', { class: 'cmd-row' + (pinned && pinned.L === L && pinned.i === i ? ' sel' : '') });
      r.style.position = 'absolute';
      r.style.top = k * ROW_H + 'px';
      r.style.left = r.style.right = '0';
      const lyi = at(T, 'ly', i);
      for (const v of [(L.core >= 0 ? 'Core ' + L.core + ' ' : '') + L.label, String(at(T, 'cmd', i)), str(at(T, 'nm', i)), str(at(T, 'ty', i)),
        fmtTime(L.start[i]), fmtTime(L.end[i] - L.start[i]), lyi ? layerText(lyi - 1) : '-']) r.appendChild(el('span', null, v));
      r.addEventListener('click', () => { jumpTo({ L, i }); drawTable(); });
      sp.appendChild(r);
    }
  }

  /* ---------------------------------------------------------------- legend */
  /* Colours: one per command / layer name (hashed), so the most frequent names of the engine
   * lanes and of the layer lanes are listed with their swatch; then the fixed marks. */
  function buildLegend() {
    const box = $('legend');
    box.textContent = '';
    const add = (title, counts, max) => {
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
    };
    const cmds = new Map(), lays = new Map();
    for (const L of lanes) {
      const m = L.kind === 'Layer' ? lays : cmds, nm = col(L.T, 'nm');
      if (isCol(nm)) { const c = new Map(); for (let i = 0; i < L.n; i += Math.max(1, L.n >> 16)) c.set(nm[i], (c.get(nm[i]) || 0) + 1); for (const [k, v] of c) m.set(k, (m.get(k) || 0) + v); }
      else if (L.n) m.set(nm || 0, (m.get(nm || 0) || 0) + L.n);
    }
    add('Commands:', cmds, 12);
    add('Layers:', lays, 8);
    const fixed = el('span', { class: 'lg-item' });
    const sys = el('span', { class: 'legend' });
    sys.style.background = PALETTE[SYS_COLOR];
    fixed.appendChild(sys);
    fixed.appendChild(document.createTextNode('sys / messages (thin)'));
    box.appendChild(fixed);
    const w = el('span', { class: 'lg-item' });
    w.appendChild(el('span', { class: 'legend hatched' }));
    w.appendChild(document.createTextNode('wait_msg (hatched)'));
    box.appendChild(w);
    const a = el('span', { class: 'lg-item' });
    a.appendChild(el('span', { class: 'legend arrow' }));
    a.appendChild(document.createTextNode('waits for (hover / pin)'));
    const sg = el('span', { class: 'legend arrow' });
    sg.style.background = '#2f6fde';
    a.appendChild(sg);
    a.appendChild(document.createTextNode('signals'));
    box.appendChild(a);
    box.appendChild(el('span', { class: 'lg-title' }, 'Heights: TIU = uArch rate, DMA = bandwidth / DDR peak; labels on blocks \u2265 36 px'));
  }

  /* ---------------------------------------------------------------- search */
  /* Incremental: the lanes are scanned in slices of ~10 ms (setTimeout between them) with the
   * running count shown; a new query cancels the running one. Matches stay per lane (L.mark,
   * sorted by start); Enter walks them in time order across lanes (cursor: time + lane). */
  let matchCount = 0, matchPos = -1, cursor = null, lastQuery = '', searchJob = 0;
  function search(q) {
    q = (q || '').trim();
    lastQuery = q;
    matchCount = 0;
    matchPos = -1;
    cursor = null;
    const job = ++searchJob;
    for (const L of lanes) { L.mark = null; L.markVisible = null; }
    const info = $('search-info');
    if (!q) { info.textContent = ''; dirty = true; schedule(); return Promise.resolve(0); }
    const idm = /^#?(\d+)$/.exec(q);
    const want = idm ? Number(idm[1]) : -1;
    const ql = q.toLowerCase();
    let strHit = null;
    if (want < 0) {
      lyDecode();
      strHit = new Uint8Array(S.length);
      for (let i = 0; i < S.length; i++) strHit[i] = S[i].toLowerCase().includes(ql) ? 1 : 0;
    }
    let li = 0, i = 0, idx = [];
    return new Promise((resolve) => {
      function chunk() {
        if (job !== searchJob) { resolve(-1); return; }
        const t = performance.now();
        while (li < lanes.length && performance.now() - t < 10) {
          const L = lanes[li], T = L.T, n = L.n;
          if (!L.ready) decodeLane(L);
          const end = Math.min(n, i + 32768);
          if (want >= 0) {
            const c = col(T, 'cmd');
            if (isCol(c)) { for (; i < end; i++) if (c[i] === want) idx.push(i); }
            else { if (c === want) for (; i < end; i++) idx.push(i); i = end; }
          } else {
            const nm = col(T, 'nm'), ty = col(T, 'ty'), ly = col(T, 'ly');
            const nmA = isCol(nm), tyA = isCol(ty), lyA = isCol(ly), LN = LY.name, LT = LY.type;
            for (; i < end; i++) {
              const l = lyA ? ly[i] : ly || 0;
              if (strHit[nmA ? nm[i] : nm || 0] || strHit[tyA ? ty[i] : ty || 0] || (l > 0 && (strHit[LN[l - 1]] || strHit[LT[l - 1]]))) idx.push(i);
            }
          }
          if (i >= n) {
            if (idx.length) markLane(L, Int32Array.from(idx));
            matchCount += idx.length;
            idx = [];
            li++;
            i = 0;
          }
        }
        if (li < lanes.length) {
          info.textContent = 'searching\u2026 ' + (matchCount + idx.length) + ' so far';
          setTimeout(chunk, 0);
          return;
        }
        info.textContent = matchCount ? matchCount + ' match' + (matchCount > 1 ? 'es' : '') : 'no match';
        if (matchCount) nextMatch();
        dirty = true;
        schedule();
        resolve(matchCount);
      }
      chunk();
    });
  }
  function markLane(L, arr) {
    L.mark = arr;
    /* Outlines only for what is visible, at most 2000 per lane. */
    L.markVisible = function* () {
      let c = 0;
      for (let j = lowerBound2(L, arr, view.t0 - L.maxDur); j < arr.length && c < 2000; j++) {
        const k = arr[j];
        if (L.start[k] > view.t1) break;
        if (L.end[k] >= view.t0) { c++; yield k; }
      }
    };
  }
  function lowerBound2(L, arr, v) {
    let lo = 0, hi = arr.length;
    while (lo < hi) { const m = (lo + hi) >>> 1; if (L.start[arr[m]] < v) lo = m + 1; else hi = m; }
    return lo;
  }
  function jumpTo(hit) {
    const s = hit.L.start[hit.i], e = hit.L.end[hit.i];
    const span = Math.max((e - s) * 6, Math.min(view.t1 - view.t0, spanNs / 20), 200);
    setView((s + e) / 2 - span / 2, (s + e) / 2 + span / 2);
    pin(hit);
  }
  /* The next match in time order after the cursor (wrapping), and its rank. */
  function nextMatch() {
    if (!matchCount) return;
    let best = null;
    const t = cursor ? cursor.t : -Infinity, cl = cursor ? cursor.li : -1, ci = cursor ? cursor.i : -1;
    for (const L of lanes) {
      if (!L.mark) continue;
      const arr = L.mark;
      let j = lowerBound2(L, arr, t);
      while (j < arr.length && L.start[arr[j]] === t && (L.i < cl || (L.i === cl && arr[j] <= ci))) j++;
      if (j < arr.length) {
        const st = L.start[arr[j]];
        if (!best || st < best.t || (st === best.t && L.i < best.li)) best = { t: st, li: L.i, i: arr[j], L };
      }
    }
    if (!best) { cursor = null; matchPos = -1; nextMatch(); return; }
    cursor = best;
    matchPos = (matchPos + 1) % matchCount;
    jumpTo({ L: best.L, i: best.i });
    $('search-info').textContent = matchPos + 1 + ' / ' + matchCount;
  }
  $('search').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      if (ev.target.value.trim() !== lastQuery) search(ev.target.value);
      else nextMatch();
    }
  });
  /* Typing searches as you go (after a short pause); Enter walks the matches. */
  let typeTimer = 0;
  $('search').addEventListener('input', (ev) => {
    clearTimeout(typeTimer);
    typeTimer = setTimeout(() => { if (ev.target.value.trim() !== lastQuery) search(ev.target.value); }, 250);
  });

  /* ---------------------------------------------------------------- memory charts */
  let memRedraw = null;
  const memCharts = [];
  function buildMemory() {
    const body = $('memory-body');
    const lm = D.lmem, gm = D.gmem;
    /* Records back into arrays [begin, end, addr, size, write, layer, core, id(, engine)]. */
    for (const M of [lm, gm]) {
      const R = M.recs, n = R.n, c = {};
      for (const k of ['b', 'e', 'a', 'sz', 'w', 'ly', 'co', 'id', 'en']) c[k] = decCol(R[k], n) || new Int32Array(n);
      const out = new Array(n);
      for (let i = 0; i < n; i++) {
        const r = [c.b[i], c.e[i], c.a[i], c.sz[i], c.w[i], c.ly[i], c.co[i], c.id[i]];
        if (c.en[i]) r.push(c.en[i]);
        out[i] = r;
      }
      M.recs = out;
    }
    const charts = [];
    const cores = [...new Set(lm.recs.concat(gm.recs).map((r) => r[6]))].sort((a, b) => a - b);
    const ENG = ['', 'TIU', 'GDMA', 'SDMA', 'CDMA'];
    function recTip(r, space) {
      if (r.length > 8) /* from a command (vendor's view): its engine and id */
        return [['Command', ENG[r[8]] + ' cmd ' + r[7]], ['Access', r[4] ? 'write (into LMEM)' : 'read (out of LMEM)'],
                ['Layer', layerText(r[5])], ['Lane offset', hex(r[2])], ['Size', r[3] + ' (' + fmtBytes(r[3]) + ') per lane'],
                ['Time', fmtUs(r[0]) + ' \u2013 ' + fmtUs(r[1])]];
      return [['Tensor', String(r[7])], ['Access', r[4] ? 'write' : 'read'], ['Layer', layerText(r[5])],
              [space === 'L' ? 'Lane offset' : 'Address', hex(r[2])], ['Size', r[3] + ' (' + fmtBytes(r[3]) + ')' + (space === 'L' ? ' per lane' : '')],
              ['Time', fmtUs(r[0]) + ' \u2013 ' + fmtUs(r[1])]];
    }
    function makeChart(title, recs, space, yBlocks, yTotal, yLabel, height) {
      const wrap = el('div', { class: 'memchart' });
      const h = el('h3', null, title);
      wrap.appendChild(h);
      const leg = el('div', { class: 'muted' });
      const sw = (c, t) => { const s = el('span', { class: 'legend' }); s.style.background = c; leg.appendChild(s); leg.appendChild(document.createTextNode(t)); };
      sw('rgba(220,40,40,.75)', 'write');
      sw('rgba(30,160,60,.75)', 'read');
      leg.appendChild(document.createTextNode('  \u00b7 x: time (follows the timeline view), y: ' + yLabel));
      wrap.appendChild(leg);
      const cv = el('canvas');
      const USE_H = 40, CH = (height || 260) + USE_H, TOP = USE_H + 6, BOT = 6;
      cv.style.height = CH + 'px';
      wrap.appendChild(cv);
      body.appendChild(wrap);
      const c2 = cv.getContext('2d');
      const overlay = recs.some((r) => r.length > 8) && recs.some((r) => r.length <= 8);
      const yOf = (addr) => { /* address -> y through the (sorted) block list; -1 if unused */
        let lo = 0, hi = yBlocks.length - 1;
        while (lo < hi) { const m = (lo + hi + 1) >>> 1; if (yBlocks[m].a <= addr) lo = m; else hi = m - 1; }
        const b = yBlocks[lo];
        if (!b || addr < b.a || addr > b.a + b.size) return -1;
        return TOP + ((b.off + ((addr - b.a) / b.size) * b.show) / yTotal) * (CH - TOP - BOT);
      };
      recs.sort((a, b) => a[0] - b[0]);
      const rStart = Float64Array.from(recs, (r) => r[0]);
      const rMaxDur = recs.reduce((m, r) => Math.max(m, r[1] - r[0]), 0);
      const chart = {
        draw() {
          const w = Math.max(300, cv.parentElement.clientWidth);
          const d = window.devicePixelRatio || 1;
          if (cv.width !== Math.round(w * d)) { cv.width = Math.round(w * d); cv.height = Math.round(CH * d); cv.style.height = CH + 'px'; }
          c2.setTransform(d, 0, 0, d, 0, 0);
          c2.fillStyle = '#fff'; c2.fillRect(0, 0, w, CH);
          c2.font = '10px system-ui, sans-serif'; c2.textBaseline = 'middle';
          const k = (w - GUTTER) / (view.t1 - view.t0);
          let lastY = -1;
          yBlocks.forEach((b, j) => {
            const y0 = yOf(b.a), y1 = TOP + ((b.off + b.show) / yTotal) * (CH - TOP - BOT);
            if (y1 - lastY < 1 && j) return; /* thousands of tiny blocks: one band per pixel */
            lastY = y1;
            c2.fillStyle = j % 2 ? '#f3f5f9' : '#fafbfc';
            c2.fillRect(GUTTER, y0, w - GUTTER, y1 - y0);
            c2.strokeStyle = '#c9ced8'; c2.beginPath(); c2.moveTo(0, Math.round(y0) + 0.5); c2.lineTo(w, Math.round(y0) + 0.5); c2.stroke();
            if (y1 - y0 >= 10) { c2.fillStyle = '#485066'; c2.fillText(b.label, 4, (y0 + y1) / 2); }
          });
          for (let q = lowerBound(rStart, view.t0 - rMaxDur); q < recs.length; q++) {
            const r = recs[q];
            if (r[0] > view.t1) break;
            if (r[1] < view.t0) continue;
            const ya = yOf(r[2]), yb = yOf(r[2] + r[3]);
            if (ya < 0) continue;
            const x0 = GUTTER + Math.max(0, (r[0] - view.t0) * k), x1 = GUTTER + Math.min(w - GUTTER, (r[1] - view.t0) * k);
            const rw = Math.max(1, x1 - x0), rh = Math.max(1, (yb < 0 ? ya + 1 : yb) - ya);
            if (overlay && r.length <= 8) {
              /* The compiler's tensor view drawn as outlines over the commands' filled view. */
              c2.strokeStyle = r[4] ? 'rgba(150,20,20,.9)' : 'rgba(20,110,40,.9)';
              c2.strokeRect(x0 + 0.5, ya + 0.5, Math.max(0, rw - 1), Math.max(0, rh - 1));
              continue;
            }
            c2.fillStyle = r[4] ? 'rgba(220,40,40,.55)' : 'rgba(30,160,60,.55)';
            c2.fillRect(x0, ya, rw, rh);
          }
          /* Usage over time (top strip): per pixel column the bytes of the records alive
           * there (a difference array over the visible records), scaled to the space shown. */
          const pw = Math.max(1, Math.ceil(w - GUTTER)), diff = new Float64Array(pw + 2);
          for (let q = lowerBound(rStart, view.t0 - rMaxDur); q < recs.length; q++) {
            const r = recs[q];
            if (r[0] > view.t1) break;
            if (r[1] < view.t0 || (overlay && r.length <= 8)) continue;
            const a = Math.max(0, Math.floor((r[0] - view.t0) * k)), b = Math.min(pw, Math.floor((r[1] - view.t0) * k));
            diff[a] += r[3];
            diff[b + 1] -= r[3];
          }
          const use = new Float64Array(pw);
          let acc = 0, peak = 0;
          for (let x = 0; x < pw; x++) { acc += diff[x]; use[x] = acc; if (acc > peak) peak = acc; }
          const cap = space === 'L' ? yTotal : Math.max(peak, 1);
          c2.fillStyle = '#f5f7fa';
          c2.fillRect(0, 0, w, USE_H);
          c2.fillStyle = 'rgba(47,111,222,0.35)';
          c2.strokeStyle = '#2f6fde';
          c2.beginPath();
          c2.moveTo(GUTTER, USE_H - 2);
          for (let x = 0; x < pw; x++) c2.lineTo(GUTTER + x, USE_H - 2 - Math.min(1, use[x] / cap) * (USE_H - 6));
          c2.lineTo(GUTTER + pw, USE_H - 2);
          c2.closePath();
          c2.fill();
          c2.fillStyle = '#485066';
          c2.fillText('in use (peak ' + fmtBytes(peak) + (space === 'L' ? ' of ' + fmtBytes(cap) : '') + ')', 4, USE_H / 2);
          chart.peak = peak;
          chart.k = k;
        },
      };
      cv.addEventListener('mousemove', (ev) => {
        const rc = cv.getBoundingClientRect(), x = ev.clientX - rc.left, y = ev.clientY - rc.top;
        const t = view.t0 + (x - GUTTER) / chart.k;
        let hit = null;
        for (const r of recs) {
          if (t < r[0] || t > r[1]) continue;
          const ya = yOf(r[2]), yb = yOf(r[2] + r[3]);
          if (y >= ya - 1 && y <= Math.max(ya + 1, yb) + 1) hit = r;
        }
        if (!hit) { hideTooltip(); return; }
        tooltip.textContent = '';
        tooltip.appendChild(kvTable(recTip(hit, space)));
        tooltip.hidden = false;
        tooltip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 300) + 'px';
        tooltip.style.top = ev.clientY + 14 + 'px';
      });
      cv.addEventListener('mouseleave', hideTooltip);
      chart.cv = cv;
      chart.visible = true;
      charts.push(chart);
      memCharts.push(chart);
    }
    let any = false;
    for (const core of cores) {
      const lrecs = lm.recs.filter((r) => r[6] === core);
      if (lrecs.length && lm.laneBytes) {
        any = true;
        const bank = lm.laneBytes / lm.banks, blocks = [];
        for (let b = 0; b < lm.banks; b++) blocks.push({ a: b * bank, size: bank, show: bank, off: b * bank, label: 'BANK[' + b + ']' });
        const fromCmds = lrecs.some((r) => r.length > 8), fromTensors = lrecs.some((r) => r.length <= 8);
        makeChart('LOCAL MEM (one lane, ' + fmtBytes(lm.laneBytes) + ', ' + lm.banks + ' banks) \u00b7 Core ' + core, lrecs, 'L', blocks, lm.laneBytes,
                  'offset in the lane; ' + (fromCmds ? 'filled: from the commands (DMA LMEM side, TIU operands and results)' : '') +
                  (fromCmds && fromTensors ? '; outlined: the compiler\'s tensors' : fromTensors ? 'sizes estimated from the compiler\'s tensor shapes' : ''));
      }
      const grecs = gm.recs.filter((r) => r[6] === core);
      if (grecs.length) {
        any = true;
        /* Only the used blocks: merge accessed ranges that touch, then stack them with a
         * minimum share of the height each, so small tensors stay visible next to big ones. */
        const rs = grecs.map((r) => [r[2], r[2] + Math.max(1, r[3])]).sort((a, b) => a[0] - b[0]);
        const merged = [];
        for (const [a, b] of rs) {
          const m = merged[merged.length - 1];
          if (m && a <= m[1]) m[1] = Math.max(m[1], b);
          else merged.push([a, b]);
        }
        /* Each block gets at least half the average height, so the many small weight
         * blocks stay readable next to a few large activation blocks. */
        const raw = merged.reduce((t, [a, b]) => t + (b - a), 0), minShow = raw / (2 * merged.length);
        let off = 0;
        const blocks = merged.map(([a, b]) => {
          const blk = { a, size: b - a, show: Math.max(b - a, minShow), off, label: hex(a) + ' (' + fmtBytes(b - a) + ')' };
          off += blk.show;
          return blk;
        });
        makeChart('GLOBAL MEM (used blocks only) \u00b7 Core ' + core, grecs, 'G', blocks, off, 'DDR address, unused gaps removed',
                  Math.max(260, Math.min(720, merged.length * 9 + 12)));
      }
    }
    /* Totals from the runtime's allocation lines (mtype 1 = device DDR). */
    const ddr = gm.blocks.filter((b) => b[0] === 1);
    if (ddr.length) {
      any = true;
      const tot = { coeff: 0, runtime: 0, tensor: 0 };
      for (const b of ddr) {
        const d = str(b[3]).toLowerCase();
        if (d.includes('coeff')) tot.coeff += b[2];
        else if (d.includes('tensor') || d.includes('io_mem')) tot.tensor += b[2];
        else tot.runtime += b[2];
      }
      body.appendChild(el('h3', null, 'GLOBAL MEM allocations'));
      const t = kvTable([['coeff', fmtBytes(tot.coeff)], ['runtime', fmtBytes(tot.runtime)], ['tensor', fmtBytes(tot.tensor)],
                         ['total', fmtBytes(tot.coeff + tot.runtime + tot.tensor)]]);
      t.className = 'data';
      body.appendChild(t);
      body.appendChild(el('div', { style: 'height:8px' }));
      body.appendChild(sortableTable([{ name: 'Description', t: 1 }, { name: 'Address', fmt: hex }, { name: 'Size', fmt: fmtBytes }],
        ddr.map((b) => [str(b[3]), b[1], b[2]]), 1, false, 20));
    }
    if (lm.cmdDropped) body.appendChild(el('div', { class: 'muted' }, 'LOCAL MEM from the commands: the last ' + lm.cmdDropped +
      ' records (past the page\'s budget) are left out.'));
    if (!any) body.appendChild(el('div', { class: 'muted' }, 'This profile has no memory records (they come from the compiler log: tensors with loffset / gaddr, the runtime mtype lines, and the commands\' descriptor fields' +
      (D.notes.some((n) => /large dump/.test(n)) ? '; the reader left the per-command details out of this large dump, see Notes' : '') + ').'));
    if (charts.length) {
      /* Memory charts follow the timeline's range, but only those on screen are redrawn and
       * only once the timeline has settled, so panning stays fluid. */
      if (window.IntersectionObserver) {
        const io = new IntersectionObserver((es) => {
          for (const en of es) {
            const c = charts.find((x) => x.cv === en.target);
            if (c) { c.visible = en.isIntersecting; if (c.visible && c.stale) { c.stale = false; c.draw(); } }
          }
        });
        for (const c of charts) { c.visible = false; c.stale = false; io.observe(c.cv); }
      }
      /* First drawn right after the timeline's first paint, not before it. */
      setTimeout(() => { for (const c of charts) c.draw(); }, 0);
      let timer = 0;
      memRedraw = () => {
        clearTimeout(timer);
        timer = setTimeout(() => { for (const c of charts) { if (c.visible) c.draw(); else c.stale = true; } }, 150);
      };
    }
  }

  /* ---------------------------------------------------------------- test API + start */
  window.tpuprof = {
    lanes: () => lanes.map((L) => ({ core: L.core, dev: L.dev, kind: L.kind, label: L.label, n: L.n, y: L.y, h: L.h })),
    viewRange: () => [view.t0, view.t1],
    spanNs: () => spanNs,
    setView: (a, b) => { setView(a, b); render(); },
    zoom: (f, frac) => { zoom(f, frac); render(); },
    pan: (f) => { pan(f); render(); },
    reset: () => { reset(); render(); },
    render: () => { dirty = true; render(); return lastRenderMs; },
    frames: () => frames,
    firstPaintMs: () => firstPaintMs,
    timings: () => timings,
    lastRenderMs: () => lastRenderMs,
    /* Client coordinates of the middle of command i of lane li (for hover tests). */
    cmdPoint: (li, i) => {
      const L = lanes[li], r = canvas.getBoundingClientRect();
      const x0 = Math.max(GUTTER, xOf(L.start[i])), x1 = Math.min(W, xOf(L.end[i]));
      const row = L.row ? L.row[i] : 0;
      return { x: r.left + (x0 + x1) / 2, y: r.top + L.y + 2 + row * L.rowH + L.rowH - 4 };
    },
    cmdTime: (li, i) => [lanes[li].start[i], lanes[li].end[i]],
    cmdId: (li, i) => at(lanes[li].T, 'cmd', i),
    tooltipText: () => (tooltip.hidden ? '' : tooltip.textContent),
    detailsText: () => $('details').textContent,
    search: (q) => search(q),
    memCharts: () => document.querySelectorAll('.memchart canvas').length,
    memPeaks: () => memCharts.map((c) => c.peak || 0),
    ready: () => ready,
    /* The command table: set filters like a user would be too slow to type; rows shown. */
    tableCount: () => tRows.n,
    tableRows: () => [...document.querySelectorAll('#cmd-spacer .cmd-row')].map((r) => [...r.children].map((c) => c.textContent)),
    counters: () => counters.map((C) => ({ core: C.core, y: C.y, h: C.h, max: C.max || 0, cols: Array.from(counterColumns(C, plotW())),
      rate: C.tiu ? Array.from(rateColumns(C, plotW()) || []).map((x) => (isFinite(x) ? x : null)) : null })),
  };
  /* Start: the timeline from the writer's level of detail at once, then one lane decoded per
   * task (redrawn after each, with progress in the loading bar), then the overview tables and
   * the memory charts. Search is enabled once every lane is decoded. */
  let ready = false;
  const loading = $('loading'), searchBox = $('search');
  searchBox.disabled = true;
  resize();
  render();
  timings.firstPaint = performance.now();
  const todo = lanes.filter((L) => !L.ready);
  const todoCmds = todo.reduce((t, L) => t + L.n, 0);
  let done = 0, doneCmds = 0;
  function progress() {
    loading.textContent = 'Decoding commands: ' + doneCmds.toLocaleString('en-US') + ' / ' + todoCmds.toLocaleString('en-US') +
      ' (' + done + ' / ' + todo.length + ' lanes) \u2014 the timeline is usable; search and tables follow.';
  }
  function step() {
    const t = performance.now();
    while (done < todo.length && performance.now() - t < 40) { /* small lanes: several per task */
      const L = todo[done++];
      decodeLane(L);
      doneCmds += L.n;
    }
    if (done < todo.length) {
      progress();
      dirty = true;
      schedule();
      setTimeout(step, 0);
      return;
    }
    timings.decoded = performance.now();
    for (const C of counters) buildCounter(C);
    buildLegend();
    buildTable();
    buildOverview();
    buildOverview2();
    timings.overview = performance.now();
    buildMemory();
    timings.memory = performance.now();
    loading.hidden = true;
    searchBox.disabled = false;
    ready = true;
    dirty = true;
    schedule();
  }
  progress();
  setTimeout(step, 0);
})();
