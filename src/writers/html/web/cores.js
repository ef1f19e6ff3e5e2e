  /* ---------------------------------------------------------------- cores side by side */
  /* The cross-core views: every core's engines busy / idle side by side, a utilisation strip
   * per core on one time axis (framing the timeline's view), the visible range per lane, time
   * by function per core (pies), the TIU uArch rate by function, the send / wait messages per
   * core, and the filter / collapse of cores that the timeline follows. Reads the decoded
   * lanes only; runs once every lane is decoded (buildCores), the range parts on each render. */
  let rangeRedraw = null; /* called by render (timeline.js) once the views exist */
  const ENGS = ['TIU', 'GDMA', 'SDMA', 'CDMA'];
  const coreKeys = [];
  for (const L of lanes) if (L.core >= 0 && !coreKeys.some((k) => k.dev === L.dev && k.core === L.core)) coreKeys.push({ dev: L.dev, core: L.core });
  const keyLabel = (k) => (D.devices.length > 1 ? 'Dev ' + k.dev + ' ' : '') + 'Core ' + k.core;
  const engLanes = (k) => lanes.filter((L) => L.dev === k.dev && L.core === k.core && ENGS.includes(L.kind) && L.n)
    .sort((a, b) => ENGS.indexOf(a.kind) - ENGS.indexOf(b.kind));
  const shownKeys = () => coreKeys.filter((k) => coreState[k.dev + '/' + k.core] !== 'hidden');
  const isSys = (L, i) => at(L.T, 'ck', i) !== 0;

  /* "0-3,6" -> the cores whose number is listed; '' -> null (every core). */
  function parseCores(s) {
    s = s.trim();
    if (!s) return null;
    const set = new Set();
    for (const part of s.split(/[\s,]+/)) {
      const m = /^(\d+)(?:-(\d+))?$/.exec(part);
      if (!m) continue;
      const a = +m[1], b = m[2] === undefined ? a : +m[2];
      for (let c = Math.min(a, b); c <= Math.max(a, b) && c - a < 4096; c++) set.add(c);
    }
    return set;
  }
  function relayout() {
    layout();
    resize();
    render();
    if (coresBuilt) buildCoreViews();
  }
  function setCoreFilter(s) {
    const set = parseCores(s);
    for (const k of coreKeys) {
      const key = k.dev + '/' + k.core;
      if (set && !set.has(k.core)) coreState[key] = 'hidden';
      else if (coreState[key] === 'hidden') delete coreState[key];
    }
    relayout();
  }
  function setCollapsed(k, on) {
    const key = k.dev + '/' + k.core;
    if (coreState[key] === 'hidden') return;
    if (on) coreState[key] = 'collapsed'; else delete coreState[key];
  }
  /* A click on a core's header in the timeline collapses or expands it. */
  canvas.addEventListener('click', (ev) => {
    const r = canvas.getBoundingClientRect(), y = ev.clientY - r.top;
    const g = groups.find((G) => y >= G.y && y < G.y + GROUP_H && G.key.split('/')[1] !== '-1');
    if (!g || ev.clientX - r.left > GUTTER) return;
    const [dev, core] = g.key.split('/').map(Number);
    setCollapsed({ dev, core }, !g.collapsed);
    relayout();
  });

  /* Busy fraction per bin of [t0, t1) of a lane's non-sys commands. */
  function busyBins(L, t0, t1, nb) {
    const out = new Float64Array(nb), bw = (t1 - t0) / nb;
    if (!L.ready || bw <= 0) return out;
    for (let i = lowerBound(L.end, t0); i < L.n && L.start[i] < t1; i++) {
      if (isSys(L, i)) continue;
      let s = Math.max(L.start[i], t0);
      const e = Math.min(L.end[i], t1);
      while (s < e) {
        const b = Math.min(nb - 1, Math.floor((s - t0) / bw)), be = Math.min(e, t0 + (b + 1) * bw);
        out[b] += be - s;
        s = be > s ? be : e;
      }
    }
    for (let b = 0; b < nb; b++) out[b] = Math.min(1, out[b] / bw);
    return out;
  }

  function buildBars() {
    const host = $('core-bars');
    host.textContent = '';
    const g = el('div', { class: 'core-grid' });
    g.appendChild(el('div', { class: 'muted' }, 'core'));
    for (const e of ENGS) g.appendChild(el('div', { class: 'muted' }, e + ' busy / idle'));
    for (const k of shownKeys()) {
      g.appendChild(el('div', { 'data-core': k.core }, keyLabel(k)));
      const st = A ? A.cores.find((c) => c.dev === k.dev && c.core === k.core) : null;
      ENGS.forEach((e, ei) => {
        const L = engLanes(k).find((M) => M.kind === e);
        let busy = 0, util = null;
        if (st && st.eng[ei].present) { busy = st.eng[ei].busyNs; util = st.eng[ei].util; }
        else if (L) { for (let i = 0; i < L.n; i++) if (!isSys(L, i)) busy += L.end[i] - L.start[i]; util = busy / spanNs; }
        const cell = el('div', { class: 'ebar', title: util === null ? e + ': none' :
          e + ': busy ' + fmtUs(busy) + ', idle ' + fmtUs(Math.max(0, totalNs - busy)) + ', ' + fmtPct(util) });
        if (util !== null) {
          const f = el('span');
          f.style.width = Math.min(100, util * 100).toFixed(1) + '%';
          cell.appendChild(f);
          cell.appendChild(el('em', null, fmtPct(util)));
        }
        g.appendChild(cell);
      });
    }
    host.appendChild(g);
  }

  /* One strip per core and engine (TIU and GDMA), the whole span on one axis; the timeline's
   * view is framed on each (drawStripFrames, every render). */
  const strips = [];
  function buildStrips() {
    const host = $('core-strips');
    host.textContent = '';
    strips.length = 0;
    for (const k of shownKeys()) {
      for (const L of engLanes(k)) {
        if (L.kind !== 'TIU' && L.kind !== 'GDMA') continue;
        const row = el('div', { class: 'strip-row' });
        row.appendChild(el('span', { class: 'lbl' }, keyLabel(k) + ' ' + L.kind));
        const cv = el('canvas', { 'data-core': k.core, 'data-kind': L.kind, height: 14 });
        row.appendChild(cv);
        host.appendChild(row);
        strips.push({ cv, L, bins: null });
      }
    }
    for (const S of strips) {
      const w = Math.max(100, Math.round(S.cv.clientWidth || 600));
      S.cv.width = w;
      S.bins = busyBins(S.L, 0, spanNs, w);
    }
    drawStripFrames();
  }
  function drawStripFrames() {
    for (const S of strips) {
      const x = S.cv.getContext('2d'), w = S.cv.width, h = S.cv.height;
      const rgb = S.L.kind === 'TIU' ? '47,111,222' : '39,174,96';
      x.clearRect(0, 0, w, h);
      for (let b = 0; b < w; b++) {
        x.fillStyle = 'rgba(' + rgb + ',' + (0.06 + 0.94 * S.bins[b]).toFixed(3) + ')';
        x.fillRect(b, 0, 1, h);
      }
      const a = (view.t0 / spanNs) * w, z = (view.t1 / spanNs) * w;
      x.strokeStyle = '#d0342c';
      x.strokeRect(Math.max(0, a) + 0.5, 0.5, Math.max(1, Math.min(w, z) - Math.max(0, a) - 1), h - 1);
    }
  }
  /* A click on a strip centres the timeline there, keeping its zoom. */
  $('core-strips').addEventListener('click', (ev) => {
    if (ev.target.tagName !== 'CANVAS') return;
    const r = ev.target.getBoundingClientRect(), t = ((ev.clientX - r.left) / r.width) * spanNs;
    const half = (view.t1 - view.t0) / 2;
    setView(t - half, t + half);
    render();
  });

  /* Per shown lane: commands, busy time and utilisation inside the view, and its top function
   * there. */
  function rangeRows() {
    const rows = [];
    for (const k of shownKeys()) for (const L of engLanes(k)) {
      let n = 0, busy = 0;
      const byName = new Map();
      for (let i = lowerBound(L.end, view.t0); i < L.n && L.start[i] < view.t1; i++) {
        n++;
        if (isSys(L, i)) continue;
        const d = Math.min(L.end[i], view.t1) - Math.max(L.start[i], view.t0);
        busy += d;
        const nm = at(L.T, 'nm', i);
        byName.set(nm, (byName.get(nm) || 0) + d);
      }
      let top = '', topD = -1;
      for (const [nm, d] of byName) if (d > topD) { topD = d; top = str(nm); }
      rows.push([keyLabel(k), L.kind, n, busy, busy / Math.max(1, view.t1 - view.t0), top]);
    }
    return rows;
  }
  let rangeTimer = 0;
  function drawRange() {
    const host = $('range-table');
    host.textContent = '';
    host.appendChild(el('div', { class: 'muted', id: 'range-caption' }, fmtTime(view.t0) + ' \u2013 ' + fmtTime(view.t1)));
    host.appendChild(sortableTable([{ name: 'Core', t: 1 }, { name: 'Engine', t: 1 }, { name: 'Commands' },
      { name: 'Busy (\u00b5s)', fmt: (v) => fmtNum(v / 1000, 3) }, { name: 'Util', fmt: fmtPct },
      { name: 'Top function', t: 1 }], rangeRows(), -1));
  }
  /* Called at the end of every render: frames on the strips at once, the table a little later
   * (a drag renders many frames). */
  rangeRedraw = () => {
    if (!coresBuilt) return;
    drawStripFrames();
    clearTimeout(rangeTimer);
    rangeTimer = setTimeout(drawRange, 120);
  };

  const PIE = ['#2f6fde', '#e08a1e', '#27ae60', '#8e44ad', '#d0342c', '#16a2b8', '#b7950b', '#7f8c8d'];
  function pie(title, parts) {
    const box = el('div', { class: 'pie' });
    box.appendChild(el('div', null, title));
    const total = parts.reduce((t, p) => t + p[1], 0);
    const cv = el('canvas', { width: 90, height: 90 });
    box.appendChild(cv);
    const x = cv.getContext('2d');
    let a = -Math.PI / 2;
    parts.forEach((p, i) => {
      const b = a + (total > 0 ? (p[1] / total) * 2 * Math.PI : 0);
      x.beginPath(); x.moveTo(45, 45); x.arc(45, 45, 42, a, b); x.closePath();
      x.fillStyle = PIE[i % PIE.length]; x.fill();
      a = b;
    });
    parts.forEach((p, i) => {
      const r = el('div');
      const sw = el('span', { class: 'legend' });
      sw.style.background = PIE[i % PIE.length];
      r.appendChild(sw);
      r.appendChild(el('span', null, p[0] + ' ' + (total > 0 ? ((p[1] / total) * 100).toFixed(1) : '0') + '%'));
      box.appendChild(r);
    });
    return box;
  }
  function byFunction(L) {
    const m = new Map();
    for (let i = 0; i < L.n; i++) if (!isSys(L, i)) { const nm = str(at(L.T, 'nm', i)) || '(none)'; m.set(nm, (m.get(nm) || 0) + L.end[i] - L.start[i]); }
    const all = [...m].sort((p, q) => q[1] - p[1] || (p[0] < q[0] ? -1 : 1));
    const top = all.slice(0, 7);
    const rest = all.slice(7).reduce((t, p) => t + p[1], 0);
    if (rest > 0) top.push(['other', rest]);
    return top;
  }
  function buildPies() {
    const host = $('core-pies');
    host.textContent = '';
    const g = el('div', { class: 'pies' });
    for (const k of shownKeys()) for (const L of engLanes(k)) {
      if (L.kind !== 'TIU' && L.kind !== 'GDMA') continue;
      const parts = byFunction(L);
      if (parts.length) g.appendChild(pie(keyLabel(k) + ' ' + L.kind, parts));
    }
    host.appendChild(g);
  }
  /* Duration-weighted uArch rate per TIU function over the cores shown. */
  function buildUarch() {
    const host = $('uarch-chart');
    host.textContent = '';
    const m = new Map();
    for (const k of shownKeys()) for (const L of engLanes(k)) {
      if (L.kind !== 'TIU' || !L.T.ua) continue;
      for (let i = 0; i < L.n; i++) {
        const u = at(L.T, 'ua', i);
        if (!u || isSys(L, i)) continue;
        const nm = str(at(L.T, 'nm', i)), d = L.end[i] - L.start[i], acc = m.get(nm) || [0, 0];
        acc[0] += ((u - 1) / 10000) * d;
        acc[1] += d;
        m.set(nm, acc);
      }
    }
    if (!m.size) { host.appendChild(el('div', { class: 'muted' }, 'No uArch rate in this dump (no TIU descriptors).')); return; }
    const rows = [...m].map(([nm, a]) => [nm, a[0] / a[1], a[1]]).sort((p, q) => q[2] - p[2]).slice(0, 20);
    for (const [nm, r, d] of rows) {
      const line = el('div', { class: 'hbar', title: nm + ': ' + fmtPct(r) + ' over ' + fmtUs(d) });
      line.appendChild(el('span', { class: 'lbl' }, nm));
      const b = el('span', { class: 'b' });
      b.style.width = Math.max(1, Math.round(r * 220)) + 'px';
      line.appendChild(b);
      line.appendChild(el('span', null, fmtPct(r)));
      host.appendChild(line);
    }
  }
  /* send_msg / wait_msg per core: counts, time spent waiting, and when (a strip of wait time). */
  function buildMsgs() {
    const host = $('msg-chart');
    host.textContent = '';
    const rows = [];
    for (const k of shownKeys()) {
      let sends = 0, waits = 0, waitNs = 0;
      const bins = new Float64Array(200);
      for (const L of engLanes(k)) for (let i = 0; i < L.n; i++) {
        const c = at(L.T, 'ck', i);
        if (c === 2) sends++;
        else if (c === 3) {
          waits++;
          const d = L.end[i] - L.start[i];
          waitNs += d;
          bins[Math.min(199, Math.floor((L.start[i] / spanNs) * 200))] += d;
        }
      }
      rows.push({ k, sends, waits, waitNs, bins });
    }
    if (!rows.some((r) => r.sends || r.waits)) { host.appendChild(el('div', { class: 'muted' }, 'No send_msg / wait_msg commands in this dump.')); return; }
    const max = Math.max(...rows.map((r) => Math.max(...r.bins)));
    for (const r of rows) {
      const line = el('div', { class: 'strip-row', 'data-core': r.k.core });
      line.appendChild(el('span', { class: 'lbl' }, keyLabel(r.k)));
      const cv = el('canvas', { width: 400, height: 14 });
      const x = cv.getContext('2d');
      for (let b = 0; b < 200; b++) if (r.bins[b] > 0) {
        x.fillStyle = 'rgba(208,52,44,' + (0.2 + 0.8 * (r.bins[b] / max)).toFixed(3) + ')';
        x.fillRect(b * 2, 0, 2, 14);
      }
      line.appendChild(cv);
      line.appendChild(el('span', null, r.sends + ' send, ' + r.waits + ' wait, ' + fmtUs(r.waitNs) + ' waiting'));
      host.appendChild(line);
    }
  }

  let coresBuilt = false;
  function buildCoreViews() {
    buildBars();
    buildStrips();
    drawRange();
    buildPies();
    buildUarch();
    buildMsgs();
  }
  function buildCores() {
    if (!coreKeys.length) { $('cores').hidden = true; return; }
    coresBuilt = true;
    buildCoreViews();
    const f = $('core-filter');
    f.addEventListener('change', () => setCoreFilter(f.value));
    f.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') setCoreFilter(f.value); });
    $('core-collapse').addEventListener('click', () => { coreKeys.forEach((k) => setCollapsed(k, true)); relayout(); });
    $('core-expand').addEventListener('click', () => { coreKeys.forEach((k) => setCollapsed(k, false)); relayout(); });
  }
  /* For window.tpuprof (main.js). */
  const coreApi = {
    setCoreFilter,
    collapseCore: (core, on) => { const k = coreKeys.find((c) => c.core === core); if (k) { setCollapsed(k, on); relayout(); } },
    shownLanes: () => lanes.filter((L) => !L.hidden).length,
    stripCount: () => strips.length,
    rangeRows: () => rangeRows(),
    coreHeaders: () => groups.map((g) => g.label),
    coreHeaderY: (i) => (groups[i] ? groups[i].y : -1),
  };
