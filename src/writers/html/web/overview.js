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
  /* Per core, one row of a compact table (not three cards per core: an 8-core dump would
   * fill the first screen with them). */
  if (A && A.cores.length) {
    const t = el('table', { class: 'data compact', id: 'head-cores' });
    const hr = el('tr');
    for (const h of ['Core', 'TIU util', 'GDMA util', 'DDR GB/s']) hr.appendChild(el('th', { class: h === 'Core' ? 't' : '' }, h));
    t.appendChild(hr);
    const barCell = (v, frac) => {
      const td = el('td');
      td.appendChild(el('span', null, v));
      if (frac !== undefined && isFinite(frac)) {
        const b = el('span', { class: 'minibar' }), f = el('span');
        f.style.width = Math.max(0, Math.min(100, frac * 100)).toFixed(1) + '%';
        b.appendChild(f);
        td.appendChild(b);
      }
      return td;
    };
    for (const c of A.cores) {
      const tr = el('tr');
      tr.appendChild(el('td', { class: 't' }, coreName(c)));
      tr.appendChild(barCell(fmtPct(c.eng[0].util), c.eng[0].util));
      tr.appendChild(barCell(fmtPct(c.eng[1].util), c.eng[1].util));
      tr.appendChild(barCell(fmtNum(c.eng[1].ddrGbps, 2), D.ddrMaxGbps ? c.eng[1].ddrGbps / D.ddrMaxGbps : undefined));
      t.appendChild(tr);
    }
    $('head-table').appendChild(t);
  }

  const info = [['Arch', D.arch], ['Net', D.net], ['Source', D.source],
                ['TIU clock', D.tiuMhz ? D.tiuMhz + ' MHz' : '-'], ['GDMA clock', D.gdmaMhz ? D.gdmaMhz + ' MHz' : '-'],
                ['Total time', fmtUs(totalNs)], ['Commands', String(totalCmds)]];
  for (const [k, v] of D.meta) info.push([k, v]);
  $('info').appendChild(kvGrid(info));

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
  /* The layer table, Function rows and what-if rows (html_ltab.c; docs/summary.md). */
  function buildLayerTable(T) {
    const us = (v) => fmtNum(v, 3), pct = (v) => (v === null ? 'n/a' : fmtPct(v));
    const sumCols = [{ name: 'GDMA (\u00b5s)', fmt: us }, { name: 'GDMA share', fmt: fmtPct },
      { name: 'DDR rate', fmt: fmtPct }, { name: 'TIU (\u00b5s)', fmt: us }, { name: 'TIU share', fmt: fmtPct },
      { name: 'Alg Ops', fmt: (v) => (T.cost ? String(v) : 'n/a') }, { name: 'uArch rate', fmt: pct },
      { name: 'PeakTops', fmt: (v) => fmtNum(v, 1) }];
    const box = $('ltab');
    box.appendChild(el('h3', null, 'Layer table'));
    const rows = T.rows.map((r) => [r[0], r[1] ? 'global' : 'local', str(r[2]), r[3], r[4]].concat(r[5]));
    box.appendChild(sortableTable([{ name: 'Layer' }, { name: 'Scope', t: 1 }, { name: 'Type', t: 1 },
      { name: 'Function', t: 1 }, { name: 'Bound', t: 1 }].concat(sumCols), rows, 8, true, 20));
    if (T.n > T.rows.length) box.appendChild(el('div', { class: 'muted' }, 'The ' + T.rows.length + ' longest of ' + T.n + ' layers (all in summary.json).'));
    box.appendChild(el('h3', null, 'Layer functions'));
    box.appendChild(sortableTable([{ name: 'Function', t: 1 }].concat(sumCols), T.funcs.map((r) => [r[0]].concat(r[1])), -1));
    if (!T.whatif) return;
    box.appendChild(el('h3', null, 'What if'));
    const label = { origin: 'as measured', overlap: 'TIU and GDMA overlapped 100%', model: ' at the model\'s PeakTops', own: ' at its own PeakTops' };
    const wrows = T.whatif.map((w) => [w[1] ? w[1] + label[w[0]] : label[w[0]]].concat(w.slice(2)));
    box.appendChild(sortableTable([{ name: 'Case', t: 1 }, { name: 'TIU before (\u00b5s)', fmt: us },
      { name: 'TIU after (\u00b5s)', fmt: us }, { name: 'Saved (\u00b5s)', fmt: us }, { name: 'Total (\u00b5s)', fmt: us },
      { name: 'Concurrency', fmt: fmtPct }, { name: 'MAC util', fmt: (v) => (T.flops ? fmtPct(v) : 'n/a') }], wrows, -1));
    box.appendChild(el('div', { class: 'muted' }, (T.cost ? 'Each peak series is cumulative from the 100% overlap row; the longer engine is the total.' : 'Each Function at the peak: n/a, no TIU cost model for this dump.')));
  }
  /* The profile's notes and, when the page left argument sets out, how many (what: what the
   * sets hold, as it reads after "argument sets"). */
  function buildNotes(what) {
    if (!D.notes.length && !D.argsDropped) return;
    const ul = el('ul');
    for (const n of D.notes) ul.appendChild(el('li', null, n));
    if (D.argsDropped) ul.appendChild(el('li', null, D.argsDropped + ' argument sets' + what + ' were left out of this page to keep it small.'));
    $('notes').appendChild(el('h3', null, 'Notes'));
    $('notes').appendChild(ul);
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
  if (A && A.ltab) buildLayerTable(A.ltab);
  buildNotes('');

  }
