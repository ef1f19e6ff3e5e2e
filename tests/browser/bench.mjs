// bench.mjs — measures result.html in headless chromium: time to first paint and frames per
// second while panning and zooming. Usage: node bench.mjs NAME PAGE.html [NAME PAGE.html ...]
// For each page prints one line:
//   html NAME size=BYTES bytes_per_cmd=B first_paint_ms=X ready_ms=Y fcp_ms=F full_render_ms=R0
//        pan_fps=Z pan_fps_zoomed=Z2 zoom_fps=Z3 render_ms_mean=R render_ms_max=M commands=N
// first_paint_ms: from navigation start to the end of the first timeline render (drawn from the
// writer's level of detail); ready_ms: every lane decoded, tables and memory charts built;
// fcp_ms: the browser's first-contentful-paint entry; full_render_ms: median of 20 renders of
// the whole span.
// pan_fps: frames completed per second while panning 1% per animation frame for 2 s with the
// whole profile in view (every command visible: the level-of-detail worst case); pan_fps_zoomed
// the same at 1/20 of the span. render_ms_*: the timeline's own draw time per frame.
import { statSync } from 'node:fs';
import { launch, open } from './lib.mjs';

const args = process.argv.slice(2);
if (args.length < 2 || args.length % 2) {
  console.error('usage: node bench.mjs NAME PAGE.html [NAME PAGE.html ...]');
  process.exit(1);
}

async function zoomFps(page) {
  return page.evaluate(async () => {
    const T = window.tpuprof;
    T.reset();
    let frames = 0, k = 0;
    const times = [];
    const t0 = performance.now();
    await new Promise((done) => {
      function step() {
        T.zoom(k++ % 60 < 30 ? 0.85 : 1 / 0.85, 0.37);
        times.push(T.lastRenderMs());
        frames++;
        if (performance.now() - t0 < 2000) requestAnimationFrame(step);
        else done();
      }
      requestAnimationFrame(step);
    });
    return { fps: (frames * 1000) / (performance.now() - t0), max: Math.max(...times) };
  });
}

async function fullRender(page) {
  return page.evaluate(() => {
    const T = window.tpuprof;
    T.reset();
    const t = [];
    for (let i = 0; i < 20; i++) t.push(T.render());
    t.sort((a, b) => a - b);
    return t[10];
  });
}

async function panFps(page, zoomTo) {
  return page.evaluate(async (z) => {
    const T = window.tpuprof;
    T.reset();
    if (z < 1) T.setView(0, T.spanNs() * z);
    const times = [];
    let frames = 0;
    const t0 = performance.now();
    let dir = 1;
    await new Promise((done) => {
      function step() {
        const r = T.viewRange();
        if (r[1] >= T.spanNs() * 1.04) dir = -1;
        if (r[0] <= -T.spanNs() * 0.04) dir = 1;
        T.pan(0.01 * dir); /* renders synchronously */
        times.push(T.lastRenderMs());
        frames++;
        if (performance.now() - t0 < 2000) requestAnimationFrame(step);
        else done();
      }
      requestAnimationFrame(step);
    });
    const el = performance.now() - t0;
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    return { fps: (frames * 1000) / el, mean, max: Math.max(...times) };
  }, zoomTo);
}

const browser = await launch();
let failed = 0;
try {
  for (let i = 0; i < args.length; i += 2) {
    const [name, file] = [args[i], args[i + 1]];
    const rec = await open(browser.context, file, { timeout: 120000 });
    const { page } = rec;
    const fp = await page.evaluate(() => window.tpuprof.firstPaintMs());
    const ready = await page.evaluate(() => window.tpuprof.timings().memory);
    const fcp = await page.evaluate(() => {
      const e = performance.getEntriesByName('first-contentful-paint')[0];
      return e ? e.startTime : -1;
    });
    const n = await page.evaluate(() => window.tpuprof.lanes().reduce((a, l) => a + (l.kind === 'Layer' ? 0 : l.n), 0));
    const full = await panFps(page, 1);
    const zoomed = await panFps(page, 0.05);
    const zf = await zoomFps(page);
    const fr = await fullRender(page);
    if (rec.errors.length) { failed = 1; console.error('bench: ' + name + ': page errors: ' + rec.errors.join('; ')); }
    const size = statSync(file).size;
    console.log(`html ${name} size=${size} bytes_per_cmd=${(size / Math.max(1, n)).toFixed(1)} first_paint_ms=${fp.toFixed(0)} ` +
      `ready_ms=${ready.toFixed(0)} fcp_ms=${fcp.toFixed(0)} full_render_ms=${fr.toFixed(2)} ` +
      `pan_fps=${full.fps.toFixed(1)} pan_fps_zoomed=${zoomed.fps.toFixed(1)} zoom_fps=${zf.fps.toFixed(1)} ` +
      `render_ms_mean=${full.mean.toFixed(2)} render_ms_max=${full.max.toFixed(2)} commands=${n}`);
    await page.close();
  }
} finally {
  await browser.close();
}
process.exit(failed);
