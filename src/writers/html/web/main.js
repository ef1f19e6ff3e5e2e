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
