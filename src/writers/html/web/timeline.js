  /* ---------------------------------------------------------------- timeline layout */
  const canvas = $('timeline');
  const ctx = canvas.getContext('2d', { alpha: false });
  const GUTTER = 128, AXIS_H = 24, GROUP_H = 18;
  const groups = []; /* {y, label, key, collapsed} core headers */
  /* Counter lanes: per core with DMA lanes, the DDR bandwidth over time (bytes of the DMA
   * commands spread evenly over their duration), drawn under the core's last lane. Made once
   * (allCounters); `counters` holds those of the cores shown. */
  const counters = [], allCounters = [];
  const COUNTER_H = 34;
  let contentH = AXIS_H;
  const coreKey = (L) => L.dev + '/' + L.core;
  /* "dev/core" -> 'collapsed' (header only) or 'hidden' (filtered out); absent = shown. */
  const coreState = {};
  {
    const isDma = (L) => L.kind === 'GDMA' || L.kind === 'SDMA' || L.kind === 'CDMA';
    const seen = {};
    for (const L of lanes) {
      const k = coreKey(L);
      if (L.core < 0 || seen[k]) continue;
      seen[k] = 1;
      const dma = lanes.filter((M) => M.dev === L.dev && M.core === L.core && isDma(M) && M.n);
      const tiu = lanes.find((M) => M.dev === L.dev && M.core === L.core && M.kind === 'TIU' && M.n && M.T.ua);
      const ch = dma.length && tiu ? COUNTER_H + 10 : COUNTER_H;
      if (dma.length || tiu) allCounters.push({ dev: L.dev, core: L.core, y: 0, h: ch, dma, tiu, lv: null, rlv: null });
    }
  }
  /* Lays the lanes out from the top: a header per core (a collapsed core keeps only its
   * header, a filtered one nothing), its lanes, then its counter lane. */
  function layout() {
    groups.length = 0;
    counters.length = 0;
    contentH = AXIS_H;
    let key = null;
    for (let li = 0; li < lanes.length; li++) {
      const L = lanes[li];
      const k = coreKey(L), st = L.core >= 0 ? coreState[k] : undefined;
      if (k !== key) {
        key = k;
        if (st !== 'hidden') {
          const name = L.core >= 0 ? (D.devices.length > 1 ? (D.devices[L.dev] || 'Device ' + L.dev) + ' \u00b7 ' : '') + 'Core ' + L.core : 'Host';
          groups.push({ y: contentH, label: (L.core >= 0 ? (st === 'collapsed' ? '\u25b8 ' : '\u25be ') : '') + name +
            (st === 'collapsed' ? ' (collapsed)' : ''), key: k, collapsed: st === 'collapsed' });
          contentH += GROUP_H;
        }
      }
      L.hidden = !!st;
      if (L.hidden) { L.y = -1e9; continue; }
      L.y = contentH;
      contentH += L.h;
      const next = lanes[li + 1];
      if (L.core >= 0 && (!next || coreKey(next) !== k)) {
        const C = allCounters.find((c) => c.dev === L.dev && c.core === L.core);
        if (C) { C.y = contentH; counters.push(C); contentH += C.h; }
      }
    }
    contentH += 6;
  }
  layout();
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
    for (const L of lanes) if (L.i % 2 && !L.hidden) fbRect(0, W, L.y, L.y + L.h, PIX_BG[1]);
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
      if (L.hidden) continue;
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
      if (L.hidden) continue;
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
    if (rangeRedraw) rangeRedraw();
  }

  /* ---------------------------------------------------------------- picking + details */
  function laneAt(y) {
    for (const L of lanes) if (!L.hidden && y >= L.y && y < L.y + L.h) return L;
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
  /* The rows shown for command i of lane L; `regs` 0 leaves a long argument set (more than 8
   * fields: the decoded registers, 40 and more on TIU) out but says how many there are. */
  function cmdRows(L, i, regs = 1) {
    const T = L.T, g = (c) => at(T, c, i);
    const rows = [];
    const kind = L.kind, isDma = kind === 'GDMA' || kind === 'SDMA' || kind === 'CDMA';
    if (g('cmd')) rows.push(['Cmd Id', String(g('cmd'))]);
    /* Global Idx: the command's place on its engine, from 1, as in the vendor's files. */
    if (kind !== 'Layer' && L.core >= 0) rows.push(['Global Idx', String(i + 1)]);
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
    if (as && !regs && as.length / 2 > 8) {
      rows.push(['Registers', as.length / 2 + ' fields (tick \u201cregisters in tooltip\u201d, or click to pin)']);
      return rows;
    }
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
    const regs = $('tip-regs');
    tooltip.appendChild(kvTable(cmdRows(hit.L, hit.i, regs && regs.checked ? 1 : 0)));
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

