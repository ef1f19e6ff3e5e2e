  /* ---------------------------------------------------------------- capture page */
  /* A capture's page: memory.js's place (a capture has no device memory). Says what the page
   * shows in the capture's words: the header (process, mode, threads, steps), the tooltip and
   * pinned details of an event (its kind, step, tensors with dtype, shape and bytes,
   * attributes, category, source location; a counter sample's value), the overview (steps,
   * latency, throughput, one row per thread) and, under the timeline, the operator-type, step
   * and operator tables of the writer's "capture" section (html_capture.c; the statistics of
   * summary.json: non-warm-up executions).
   *
   * cmdRows (timeline.js) and buildOverview / buildOverview2 (overview.js) are declared again
   * below: a function declared twice in one scope is the later declaration everywhere in it,
   * so the shared parts call these on a capture's page, and device pages (whose script has no
   * capture part) keep theirs. */
  const memCharts = [];
  /* cores.js (the cross-core views) is a device page's part: here its section stays hidden,
   * and the hooks the shared parts call (render's rangeRedraw, main's buildCores and coreApi)
   * are empty. A capture has no register sets: no tooltip toggle either. */
  const rangeRedraw = null, coreApi = {};
  function buildCores() { $('cores').hidden = true; }
  $('tip-regs').parentElement.hidden = true;
  const KIND = { op: 'operator', step: 'step', activity: 'activity', runtime: 'runtime call', range: 'range', mark: 'mark', async: 'async range' };
  const META = new Map(D.meta);
  const PROC = D.devices[0] || 'a process';
  const evLanes = lanes.filter((L) => L.kind !== 'Counter');
  const nEvents = evLanes.reduce((t, L) => t + L.n, 0);
  $('caption').textContent = 'tpuprof: capture of ' + PROC;
  document.title = 'tpuprof: capture of ' + PROC;
  $('subcaption').textContent = [
    'capture' + (META.get('capture_mode') ? ' \u00b7 mode ' + META.get('capture_mode') : ''),
    evLanes.length + ' thread lane' + (evLanes.length === 1 ? '' : 's'),
    nEvents.toLocaleString('en-US') + ' events',
    CAP.steps.length + ' steps',
    'span ' + fmtTime(spanNs),
    D.source ? 'source ' + D.source : null,
  ].filter(Boolean).join(' \u00b7 ');
  $('search').placeholder = 'Search event name or kind (Enter: next)';
  const DETAILS_HINT = 'Click an event to pin its details here.';
  for (const g of groups) g.label = PROC;

  /* Steps counted in statistics: the non-warm-up ones, or all when every step is warm-up (the
   * rule of summary.json). */
  const stepRows = CAP.steps;
  const counted = stepRows.some((s) => !s[2]) ? stepRows.filter((s) => !s[2]) : stepRows;
  const countedNs = counted.reduce((t, s) => t + s[4], 0);
  const batch = Number(META.get('batch_size')) > 0 ? Number(META.get('batch_size')) : 1;
  function latencyStats() {
    const v = counted.map((s) => s[4]).sort((a, b) => a - b), n = v.length;
    if (!n) return null;
    const med = n % 2 ? v[n >> 1] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return { min: v[0], mean: v.reduce((a, b) => a + b, 0) / n, median: med, p99: v[Math.max(0, Math.ceil(0.99 * n) - 1)], max: v[n - 1], n };
  }

  /* ---------------------------------------------------------------- event arguments */
  /* An event's arguments read for display: its kind, type (operator type or category), step
   * and warm-up flag, tensors ({name, dtype, shape} from the ';'-joined lists), attributes
   * ("attr." keys) and the remaining arguments as [key, value]. */
  function splitList(v) { return v === undefined || v === null || v === '' ? [] : String(v).split(';'); }
  function tensorsOf(m, side) {
    const names = splitList(m.get(side + '_names')), shapes = splitList(m.get(side + '_shapes')), dts = splitList(m.get(side + '_dtypes'));
    const n = Math.max(names.length, shapes.length, dts.length), out = [];
    for (let k = 0; k < n; k++) out.push({ name: names[k] || '', shape: shapes[k] || '', dtype: dts[k] || '' });
    return out;
  }
  function tensorText(t) { return (t.name ? t.name + ' ' : '') + (t.dtype || '?') + '[' + t.shape + ']'; }
  const USED = new Set(['op_type', 'post_op', 'step', 'warmup', 'graph', 'meta', 'category', 'color', 'src_file', 'src_line', 'src_function',
    'weight_shape', 'weight_sparse_ratio', 'bytes', 'flops', 'cut_short', 'async_id', 'begin_tid', 'end_tid'].concat(
    ...['input', 'output'].map((s) => [s + '_names', s + '_shapes', s + '_dtypes'])));
  function argMap(a) {
    const as = a ? argset(a) : null, m = new Map();
    if (as) for (let j = 0; j + 1 < as.length; j += 2) m.set(str(as[j]), as[j + 1]);
    return m;
  }
  function capArgs(L, i) {
    if (L.kind === 'Counter') return { kind: 'counter', type: '', map: new Map(), inputs: [], outputs: [], attrs: [], rest: [] };
    const m = argMap(at(L.T, 'ar', i)), ty = str(at(L.T, 'ty', i));
    const r = { kind: KIND[ty] || ty, type: String(m.get('op_type') ?? m.get('category') ?? ''), map: m,
      inputs: tensorsOf(m, 'input'), outputs: tensorsOf(m, 'output'), attrs: [], rest: [] };
    for (const [k, v] of m) {
      if (k.startsWith('attr.')) r.attrs.push([k.slice(5), String(v)]);
      else if (!USED.has(k)) r.rest.push([k, String(v)]);
    }
    return r;
  }
  /* The step row (CAP.steps) of step slice i of lane L. */
  function stepRowOf(L, i) {
    const li = lanes.indexOf(L);
    return stepRows.find((s) => s[9] === li && s[3] === L.start[i]) || null;
  }

  /* ---------------------------------------------------------------- tooltip rows */
  function cmdRows(L, i) {
    const rows = [];
    if (L.kind === 'Counter') {
      const v = L.T.vals[i], th = lanes[L.T.thread];
      rows.push(['Counter', L.label], ['Thread', th ? th.label : '-'], ['Time', fmtTime(L.start[i])],
        ['Value', v === null ? 'not a number' : String(v) + (L.T.unit ? ' ' + L.T.unit : '')], ['Until', fmtTime(L.end[i]) + ' (next sample)']);
      return rows;
    }
    const a = capArgs(L, i), m = a.map;
    rows.push(['Name', str(at(L.T, 'nm', i))], ['Kind', a.kind]);
    if (a.type) rows.push([m.has('op_type') ? 'Operator type' : 'Category', a.type]);
    if (m.get('post_op')) rows.push(['Fused post-op', String(m.get('post_op'))]);
    rows.push(['Thread', L.label], ['Start', fmtTime(L.start[i])], ['Duration', fmtTime(L.end[i] - L.start[i])]);
    if (L.row) rows.push(['Depth', String(L.row[i])]);
    if (m.has('step') && m.get('step') >= 0) rows.push(['Step', String(m.get('step')) + (m.get('warmup') ? ' (warm-up)' : '')]);
    if (m.get('graph')) rows.push(['Graph', String(m.get('graph'))]);
    if (str(at(L.T, 'ty', i)) === 'step') {
      const s = stepRowOf(L, i);
      if (s) rows.push(['Operators', s[5] + ' (' + fmtTime(s[6]) + ', ' + fmtPct(s[4] ? s[6] / s[4] : 0) + ' of the step)'],
        ['Activities', s[7] + ' (' + fmtTime(s[8]) + ')']);
    }
    a.inputs.forEach((t, k) => rows.push(['Input ' + k, tensorText(t)]));
    a.outputs.forEach((t, k) => rows.push(['Output ' + k, tensorText(t)]));
    if (m.get('weight_shape')) rows.push(['Weight', '[' + m.get('weight_shape') + ']' + (m.has('weight_sparse_ratio') ? ', ' + fmtPct(Number(m.get('weight_sparse_ratio'))) + ' zeros' : '')]);
    if (m.get('bytes')) rows.push(['Bytes', m.get('bytes') + ' (' + fmtBytes(Number(m.get('bytes'))) + ')']);
    if (m.get('flops')) rows.push(['FLOPs', String(m.get('flops'))]);
    for (const [k, v] of a.attrs) rows.push(['Attribute ' + k, v]);
    if (m.get('meta')) rows.push(['Meta', String(m.get('meta'))]);
    if (m.get('color')) rows.push(['Colour', String(m.get('color'))]);
    if (m.get('src_file')) rows.push(['Source', m.get('src_file') + ':' + (m.get('src_line') ?? '?') + (m.get('src_function') ? ' (' + m.get('src_function') + ')' : '')]);
    if (m.has('async_id')) rows.push(['Async id', String(m.get('async_id'))], ['Threads', 'began on ' + m.get('begin_tid') + ', ended on ' + (m.get('end_tid') === -1 ? '- (cut short)' : m.get('end_tid'))]);
    if (m.get('cut_short')) rows.push(['Cut short', 'still open when the dump was written; left out of the statistics']);
    for (const [k, v] of a.rest) rows.push([k, v]);
    return rows;
  }

  /* ---------------------------------------------------------------- counter lanes */
  /* Drawn again over what render() made of them, after every frame (render calls memRedraw
   * last): the series as a step chart whose samples wide enough carry their value, and the
   * lane's range in the gutter, where the shared drawing would label blocks with durations.
   * A view with more samples than pixel columns keeps the shared drawing (no labels fit). */
  const fmtVal = (v) => (v === null ? 'n/a' : Number.isInteger(v) ? v.toLocaleString('en-US') : String(Number(v.toPrecision(4))));
  function drawCounter(L) {
    const t0 = view.t0, t1 = view.t1, pw = plotW(), k = pw / (t1 - t0), vals = L.T.vals;
    const a = Math.max(0, lowerBound(L.start, t0) - 1), b = lowerBound(L.start, t1);
    ctx.fillStyle = '#f5f7fa';
    ctx.fillRect(0, L.y, GUTTER, L.h - 1);
    ctx.fillStyle = '#1d2330';
    ctx.fillText(L.label, 8, L.y + 11);
    ctx.fillStyle = '#8a91a1';
    ctx.fillText(fmtVal(L.lo) + ' \u2013 ' + fmtVal(L.hi) + (L.T.unit ? ' ' + L.T.unit : ''), 8, L.y + 25);
    if (b - a > pw) return;
    const top = L.y + 2, full = L.rowH - 2;
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, L.y, W - GUTTER, L.h - 1);
    ctx.clip();
    ctx.fillStyle = L.i % 2 ? '#fbfcfd' : '#ffffff';
    ctx.fillRect(GUTTER, L.y, W - GUTTER, L.h - 1);
    const colr = PALETTE[L.col[0]];
    for (let i = a; i < L.n && L.start[i] <= t1; i++) {
      const x0 = GUTTER + Math.max(0, (L.start[i] - t0) * k), x1 = GUTTER + Math.min(pw, (L.end[i] - t0) * k);
      const h = Math.max(1, (L.hv[i] / 1000) * full), y = top + full - h;
      ctx.fillStyle = colr;
      ctx.globalAlpha = 0.45;
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
      ctx.globalAlpha = 1;
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), 1.5);
      if (x1 - x0 >= 40) {
        ctx.fillStyle = '#1d2330';
        ctx.fillText(fmtVal(vals[i]), x0 + 3, Math.max(top + 6, y - 6 < top + 6 ? y + 8 : y - 6));
      }
    }
    if (L.mark) for (const i of L.markVisible()) outline(L, i, '#ff2d55', 2);
    if (hover && hover.L === L) outline(L, hover.i, '#1d2330', 1);
    if (pinned && pinned.L === L) outline(L, pinned.i, '#000000', 2);
    ctx.restore();
  }
  function memRedraw() {
    /* pin(null) (timeline.js) puts the device page's hint back; the frame after it, this one. */
    const hint = $('details').firstChild;
    if (!pinned && hint && hint.textContent !== DETAILS_HINT) hint.textContent = DETAILS_HINT;
    ctx.save();
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (const L of lanes) if (L.kind === 'Counter' && L.ready) drawCounter(L);
    ctx.restore();
  }

  /* ---------------------------------------------------------------- overview (capture) */
  function buildOverview() {
    const cards = $('cards'), st = latencyStats();
    cards.appendChild(card('Capture span', fmtTime(spanNs)));
    cards.appendChild(card('Steps', stepRows.length + (stepRows.length > counted.length ? ' (' + (stepRows.length - counted.length) + ' warm-up)' : '')));
    if (st) {
      cards.appendChild(card('Step latency (mean)', fmtTime(st.mean)));
      cards.appendChild(card('Throughput', fmtNum((batch * 1e9) / st.mean, 1) + ' samples/s'));
    }
    cards.appendChild(card('Operator executions', CAP.opTypes.reduce((t, r) => t + r[1] + r[2], 0).toLocaleString('en-US')));
    const dropped = evLanes.reduce((t, L) => t + (L.T.dropped ? Number(L.T.dropped) : 0), 0);
    if (dropped) cards.appendChild(card('Dropped events', dropped.toLocaleString('en-US')));

    const info = [['Process', PROC], ['Source', D.source], ['Span', fmtTime(spanNs)], ['Events', String(nEvents)], ['Threads', String(CAP.threads.length)]];
    if (st) info.push(['Step latency', 'min ' + fmtTime(st.min) + ' \u00b7 median ' + fmtTime(st.median) + ' \u00b7 p99 ' + fmtTime(st.p99) + ' \u00b7 max ' + fmtTime(st.max) + ' (' + st.n + ' steps)']);
    for (const [k, v] of D.meta) info.push([k, v]);
    $('info').appendChild(kvGrid(info));

    /* One row per thread lane: events, operators, nesting, top-level busy time. */
    $('engines').previousElementSibling.textContent = 'Threads';
    const tid = new Map(CAP.threads);
    const rows = evLanes.map((L) => {
      let busy = 0, ops = 0, depth = 0;
      const ty = col(L.T, 'ty'), opId = S.indexOf('op');
      for (let k = 0; k < L.n; k++) {
        const d = L.row ? L.row[k] : 0;
        if (!d) busy += L.end[k] - L.start[k];
        if (d > depth) depth = d;
        if ((isCol(ty) ? ty[k] : ty) === opId) ops++;
      }
      return [L.label, tid.has(L.i) ? tid.get(L.i) : null, L.n, ops, depth + 1, busy, busy / spanNs, L.T.dropped ? Number(L.T.dropped) : 0];
    });
    $('engines').appendChild(sortableTable([{ name: 'Thread', t: 1 }, { name: 'tid' }, { name: 'Events' }, { name: 'Operators' }, { name: 'Levels' },
      { name: 'Busy (ms)', fmt: (v) => fmtNum(v / 1e6, 3) }, { name: 'Busy share', fmt: fmtPct }, { name: 'Dropped' }], rows, 5, true));
    $('engines').appendChild(el('div', { class: 'muted' }, 'Busy: the time covered by the thread\'s outermost events; Levels: nesting depth (step \u2192 activity \u2192 operator \u2192 \u2026).'));
  }
  function buildOverview2() {
    $('top-layers').parentElement.parentElement.style.display = 'none'; /* the device rankings */
    buildNotes(' (tensors, attributes)');
  }

  /* ---------------------------------------------------------------- operators and steps */
  const ms = (v) => fmtNum(v / 1e6, 3);
  function buildMemory() {
    $('memory').querySelector('h2').textContent = 'Operators and steps';
    const body = $('memory-body'), warm = CAP.opTypes.reduce((t, r) => t + r[2], 0);
    body.style.whiteSpace = 'nowrap';
    body.appendChild(el('div', { class: 'muted' }, CAP.opsWarmupCounted
      ? 'Every operator execution was inside a warm-up step, so all are counted.'
      : 'Statistics count the operator executions outside warm-up steps, as summary.json' + (warm ? ' (' + warm + ' warm-up executions left out).' : '.')));
    const two = el('div', { class: 'two-col' }), left = el('div', { id: 'cap-optypes' }), right = el('div', { id: 'cap-steps' });
    left.appendChild(el('h3', null, 'Operator types'));
    left.appendChild(sortableTable([{ name: 'Type', t: 1 }, { name: 'Executions' }, { name: 'Total (ms)', fmt: ms }, { name: 'Mean (ms)', fmt: ms },
      { name: 'Min (ms)', fmt: ms }, { name: 'Max (ms)', fmt: ms }, { name: '% of step time', fmt: fmtPct }],
      CAP.opTypes.map((r) => [str(r[0]) || '(none)', r[1], r[3], r[1] ? r[3] / r[1] : null, r[4], r[5], countedNs ? r[3] / countedNs : null]), 2, true, 20));
    right.appendChild(el('h3', null, 'Steps'));
    if (stepRows.length) {
      right.appendChild(sortableTable([{ name: 'Step' }, { name: 'Graph', t: 1 }, { name: 'Warm-up', t: 1 }, { name: 'Start', fmt: fmtTime },
        { name: 'Latency (ms)', fmt: ms }, { name: 'Operators' }, { name: 'Operator time (ms)', fmt: ms }, { name: 'Operator share', fmt: fmtPct },
        { name: 'Activity time (ms)', fmt: ms }],
        stepRows.map((s) => [s[1], str(s[0]), s[2] ? 'yes' : '', s[3], s[4], s[5], s[6], s[4] ? s[6] / s[4] : null, s[8]]), -1, false, 10));
      if (CAP.stepsOmitted) right.appendChild(el('div', { class: 'muted' }, CAP.stepsOmitted + ' more steps are in summary.json.'));
    } else right.appendChild(el('div', { class: 'muted' }, 'No steps in this capture (tpuprof_step_begin / tpuprof.step).'));
    two.appendChild(left);
    two.appendChild(right);
    body.appendChild(two);
    const ops = el('div', { id: 'cap-ops' });
    ops.appendChild(el('h3', null, 'Operators'));
    ops.appendChild(sortableTable([{ name: 'Operator', t: 1 }, { name: 'Type', t: 1 }, { name: 'Executions' }, { name: 'Total (ms)', fmt: ms },
      { name: 'Mean (ms)', fmt: ms }, { name: 'Median (ms)', fmt: ms }, { name: 'P99 (ms)', fmt: ms }, { name: 'Max (ms)', fmt: ms },
      { name: 'Bytes', fmt: (v) => (v ? fmtBytes(v) : '-') }, { name: 'FLOPs', fmt: (v) => (v ? String(v) : '-') }, { name: 'Outputs', t: 1 }],
      CAP.ops.map((r) => [str(r[0]), str(r[1]), r[2], r[4], r[5], r[6], r[7], r[9], Number(r[10]), Number(r[11]),
        tensorsOf(argMap(r[12]), 'output').map(tensorText).join(', ')]), 3, true, 20));
    if (CAP.opsOmitted) ops.appendChild(el('div', { class: 'muted' }, CAP.opsOmitted + ' more operators are in ops.csv and summary.json.'));
    body.appendChild(ops);
    capTestApi();
  }
  /* The capture's additions to the test API (window.tpuprof is made in main.js, before the
   * tables are built). */
  function capTestApi() {
    window.tpuprof.capture = {
      maxDepth: () => lanes.reduce((m, L) => (L.kind === 'Thread' && L.row ? Math.max(m, ...L.row) : m), 0),
      laneRows: (li) => Array.from(lanes[li].row || []),
      counterValue: (li, i) => lanes[li].T.vals[i],
    };
  }
