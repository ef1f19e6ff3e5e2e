/*
 * The accelerator section of result.html (docs/accelerator-analysis.md): written into the page
 * by src/writers/html/html.c only for profiles that have device lanes, after the page's main
 * script, as a function the writer calls with {accelerator: ...} (summary.json's member of the
 * same name). It adds a section before the overview: the bottleneck in words, the totals, the
 * queue depth over the device span, the steps (host time and device time side by side), the
 * devices and their imbalance, and the top kernels and host operators. Strings from the profile
 * are set with textContent only. window.tpuprofAccel exposes what the browser test reads.
 */
(function (X) {
  'use strict';
  const A = X.accelerator;
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  const us = (v) => Number(v).toFixed(3);
  const pct = (v) => Number(v).toFixed(2) + ' %';
  function table(head, rows) {
    const t = el('table', null, 'accel-table');
    const h = el('tr');
    for (const c of head) h.appendChild(el('th', c));
    t.appendChild(h);
    for (const r of rows) {
      const tr = el('tr');
      for (const c of r) tr.appendChild(el('td', c));
      t.appendChild(tr);
    }
    return t;
  }
  /* The queue depth per window of the device span, as bars on a small canvas. */
  function queueChart() {
    const q = A.queue_series || [];
    const c = el('canvas');
    c.width = 600;
    c.height = 60;
    c.title = 'queue depth (launched, not finished) over the device span; windows of ' + us(A.queue_window_us) + ' \u00b5s';
    const g = c.getContext && c.getContext('2d');
    const max = Math.max(1, ...q);
    if (g) {
      g.fillStyle = '#4a7fb5';
      q.forEach((v, i) => {
        const h = (v / max) * 56;
        g.fillRect((i * c.width) / q.length, 58 - h, Math.max(1, c.width / q.length - 1), h);
      });
    }
    return c;
  }
  const sec = el('section');
  sec.id = 'accelerator';
  sec.appendChild(el('h2', 'Accelerator'));
  sec.appendChild(el('div', A.verdict, 'accel-verdict'));
  const w = A.work.time_us;
  sec.appendChild(table(['Device span (\u00b5s)', 'Busy', 'Compute', 'Copies + fills', 'Communication',
    'Launches', 'Launch-to-start median (\u00b5s)', 'Queue max / mean'],
  [[us(A.device_span_us), pct(A.busy_pct_of_span), us(w.compute), us(w.memcpy + w.memset), us(w.comm),
    String(A.launches), us(A.launch_to_start_median_us), A.queue_max + ' / ' + Number(A.queue_mean).toFixed(2)]]));
  if (A.queue_series && A.queue_series.length) {
    sec.appendChild(el('h3', 'Queue depth over the device span'));
    sec.appendChild(queueChart());
  }
  if (A.steps.length) {
    sec.appendChild(el('h3', 'Steps: host time and device time (median ' + us(A.step_median_us) + ' \u00b1 ' +
      us(A.step_spread_us) + ' / ' + us(A.device_median_us) + ' \u00b1 ' + us(A.device_spread_us) + ' \u00b5s)'));
    sec.appendChild(table(['Step', 'Host (\u00b5s)', 'Device (\u00b5s)', 'Busy (\u00b5s)', 'Idle', 'Launches',
      'Launch (\u00b5s)', 'Launch-to-start (\u00b5s)', 'Queue max'],
    A.steps.map((s) => [s.name, us(s.host_us), us(s.device_us), us(s.busy_us), pct(s.idle_pct), String(s.launches),
      us(s.launch_us), us(s.launch_to_start_median_us), String(s.queue_max)])));
  }
  if (A.devices.length > 1) {
    sec.appendChild(el('h3', 'Devices (imbalance ' + pct(A.imbalance_pct) + ')'));
    sec.appendChild(table(['Device', 'Rank', 'Device (\u00b5s)', 'Busy (\u00b5s)', 'Per step (\u00b5s)'],
      A.devices.map((d) => [d.name, d.rank === null ? '-' : String(d.rank), us(d.work.device_us), us(d.work.busy_us),
        us(d.step_device_us)])));
  }
  sec.appendChild(el('h3', 'Device work by name (top 10 of ' + A.kernel_rows + ')'));
  sec.appendChild(table(['Kind', 'Count', 'Time (\u00b5s)', 'Share', 'Name'],
    A.kernels.slice(0, 10).map((k) => [k.kind, String(k.count), us(k.time_us), pct(k.share_pct), k.name])));
  sec.appendChild(el('h3', 'Host time by operator (self time, top 10 of ' + A.host_op_rows + ')'));
  sec.appendChild(table(['Class', 'Count', 'Self (\u00b5s)', 'Share', 'Total (\u00b5s)', 'Name'],
    A.host_ops.slice(0, 10).map((h) => [h.class, String(h.count), us(h.self_us), pct(h.share_pct), us(h.total_us), h.name])));
  const ov = document.getElementById('overview');
  if (ov && ov.parentNode) ov.parentNode.insertBefore(sec, ov);
  else document.body.appendChild(sec);
  window.tpuprofAccel = {
    verdict: () => A.verdict,
    steps: () => A.steps.map((s) => [s.name, s.host_us, s.device_us]),
    rows: () => [...sec.querySelectorAll('tr')].length,
  };
})
