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

  /* Counts the slice names of every lane (sampled: at most about 64 Ki slices a lane) into the
   * Map pick(L) returns for the lane: the legend's most frequent names. */
  function countLaneNames(pick) {
    for (const L of lanes) {
      const m = pick(L), nm = col(L.T, 'nm');
      if (isCol(nm)) { const c = new Map(); for (let i = 0; i < L.n; i += Math.max(1, L.n >> 16)) c.set(nm[i], (c.get(nm[i]) || 0) + 1); for (const [k, v] of c) m.set(k, (m.get(k) || 0) + v); }
      else if (L.n) m.set(nm || 0, (m.get(nm || 0) || 0) + L.n);
    }
  }

  /* Starts the legend with the most frequent names of two groups of lanes (second(L): the
   * lane is of the second), at most max1 and max2 of each under their titles; returns the
   * legend's box for what follows. */
  function legendNames(second, title1, max1, title2, max2) {
    const box = $('legend'), m = [new Map(), new Map()];
    box.textContent = '';
    countLaneNames((L) => m[second(L) ? 1 : 0]);
    legendTop(box, title1, m[0], max1);
    legendTop(box, title2, m[1], max2);
    return box;
  }

  /* The rows of a table after its filters: each row (index i of a lane inTable accepts; only
   * the lane the f-engine filter names, when it names one) at least the f-dur filter long for
   * which keepOf(L)(i) is true, as tableRows gives them; shows the count of those rows among
   * all (`noun`: what a row is) and scrolls the table back to its top. */
  function filterRows(inTable, keepOf, noun) {
    const eng = $('f-engine').value, minNs = Number($('f-dur').value || 0) * 1000;
    let total = 0;
    for (const L of lanes) if (inTable(L)) total += L.n;
    const RL = new Int32Array(total), RI = new Int32Array(total);
    let n = 0;
    lanes.forEach((L, li) => {
      if (!inTable(L) || !L.n || !L.ready || (eng !== '' && Number(eng) !== li)) return;
      const keep = keepOf(L);
      for (let i = 0; i < L.n; i++) {
        if (minNs && L.end[i] - L.start[i] < minNs) continue;
        if (keep(i)) { RL[n] = li; RI[n] = i; n++; }
      }
    });
    $('f-count').textContent = n.toLocaleString('en-US') + ' of ' + total.toLocaleString('en-US') + ' ' + noun;
    $('cmd-spacer').style.height = n * ROW_H + 'px';
    $('cmd-scroll').scrollTop = 0;
    return tableRows(RL, RI, n);
  }

  /* Draws the rows of a table (tableRows) that lie in its scroll window, the only rows that
   * exist as elements: cells(L, i) gives a row's texts, grid (when given) its grid columns,
   * titled puts each text in its cell's tooltip too. A click jumps the timeline to the row
   * and pins it. */
  function drawTableRows(rows, cells, grid, titled) {
    const sc = $('cmd-scroll'), sp = $('cmd-spacer');
    const first = Math.floor(sc.scrollTop / ROW_H), last = Math.min(rows.n, first + Math.ceil(sc.clientHeight / ROW_H) + 2);
    sp.textContent = '';
    for (let k = first; k < last; k++) {
      const L = lanes[rows.L[k]], i = rows.I[k];
      const r = el('div', { class: 'cmd-row' + (pinned && pinned.L === L && pinned.i === i ? ' sel' : '') });
      r.style.position = 'absolute';
      r.style.top = k * ROW_H + 'px';
      r.style.left = r.style.right = '0';
      if (grid) r.style.gridTemplateColumns = grid;
      for (const v of cells(L, i)) {
        const c = el('span', null, v);
        if (titled) c.title = v;
        r.appendChild(c);
      }
      r.addEventListener('click', () => { jumpTo({ L, i }); drawTable(); });
      sp.appendChild(r);
    }
  }

  /* A table's n filtered rows, (lane, index) pairs in RL and RI, as the table draws them:
   * longest first when "longest first" (f-sort) is checked, else as found. */
  function tableRows(RL, RI, n) {
    if (!$('f-sort').checked || !n) return { L: RL.subarray(0, n), I: RI.subarray(0, n), n };
    const ord = new Int32Array(n).map((_, k) => k), dur = new Float64Array(n);
    for (let k = 0; k < n; k++) { const L = lanes[RL[k]]; dur[k] = L.end[RI[k]] - L.start[RI[k]]; }
    ord.sort((a, b) => dur[b] - dur[a]);
    return { L: Int32Array.from(ord, (k) => RL[k]), I: Int32Array.from(ord, (k) => RI[k]), n };
  }
