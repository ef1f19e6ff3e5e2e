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
                  'offset in the lane; ' + (fromCmds ? 'filled: from the commands (DMA LMEM side, TIU operands and results' +
                    (lm.cmdEvery > 1 ? '; one command in ' + lm.cmdEvery + ', see below' : '') + ')' : '') +
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
    /* The writer samples past its budget (html_data.c LMEM_CMD_MAX): one command in cmdEvery. */
    if (lm.cmdDropped) body.appendChild(el('div', { class: 'muted mem-sampled' }, 'LOCAL MEM from the commands is downsampled: the commands give ' +
      (lm.recs.filter((r) => r.length > 8).length + lm.cmdDropped) + ' records, more than the page holds (300 000), so the filled rectangles are ' +
      'those of one command in ' + (lm.cmdEvery || 1) + ' (every ' + (lm.cmdEvery || 1) + '-th command that touches LOCAL memory, engine by engine in time order, over the whole run); ' +
      lm.cmdDropped + ' records are left out and the \u201cin use\u201d strips count only the drawn ones. The compiler\'s tensor records are never sampled.'));
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

