// page.test.mjs — result.html in real headless chromium (node --test). Pages come from
// html_fixture (profiles built in code) and, when available, from the tpuprof CLI run on the
// real BM1688 dump. Checked: loads from file:// with no console errors and no request besides
// the file itself; lanes match the profile; zoom (keys and wheel) changes the visible range;
// hovering a command shows its Cmd Id; click pins details; search finds commands; memory
// charts exist (and, on a 1 M-command dump, are sampled over the whole run and say so); hostile
// names render as text and execute nothing; a capture's page (threads as
// flame charts, counters, operator and step tables, tensors) speaks the capture's words; a trace
// with device lanes gets the accelerator section (and a dump page none). Screenshots are saved
// to $TP_BINARY_DIR/browser/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { decodeColumn, launch, open } from './lib.mjs';

const BIN = process.env.TP_BINARY_DIR;
const FIXTURE = process.env.TP_HTML_FIXTURE;
const SHARED = process.env.TP_SHARED_DIR;
const CLI = process.env.TP_CLI;
assert.ok(BIN && FIXTURE, 'TP_BINARY_DIR and TP_HTML_FIXTURE must be set (run through ctest)');
const OUT = join(BIN, 'browser');
mkdirSync(OUT, { recursive: true });

function fixture(kind, ...args) {
  const file = join(OUT, kind + '.html');
  const out = execFileSync(FIXTURE, [kind, ...args, file], { encoding: 'utf8' });
  const lanes = /lanes: (.*)/.exec(out)[1].split(' ');
  return { file, lanes };
}

let browser;
before(async () => { browser = await launch(); });
after(async () => { if (browser) await browser.close(); });

function assertClean(rec) {
  assert.deepEqual(rec.errors, [], 'console/page errors');
  assert.deepEqual(rec.requests.filter((u) => u !== rec.url), [], 'network requests besides the page itself');
  assert.deepEqual(rec.dialogs, [], 'dialogs');
}

test('fixture page: loads offline, lanes, zoom, hover, pin, search, memory', async () => {
  const { file, lanes: want } = fixture('small');
  const rec = await open(browser.context, file);
  const { page } = rec;
  const lanes = await page.evaluate(() => window.tpuprof.lanes());
  assert.deepEqual(lanes.map((l) => l.core + ':' + l.kind), want);
  for (const l of lanes) assert.ok(l.n > 0, 'lane ' + l.core + ':' + l.kind + ' has commands');

  // Keyboard zoom (W) narrows the range; S widens it again; D pans right.
  const r0 = await page.evaluate(() => window.tpuprof.viewRange());
  await page.locator('#timeline').focus();
  await page.keyboard.press('w');
  await page.waitForFunction((w) => { const r = window.tpuprof.viewRange(); return r[1] - r[0] < w; }, r0[1] - r0[0]);
  const r1 = await page.evaluate(() => window.tpuprof.viewRange());
  assert.ok(r1[1] - r1[0] < (r0[1] - r0[0]) * 0.9, 'W zooms in: ' + r0 + ' -> ' + r1);
  await page.keyboard.press('d');
  await page.waitForFunction((a) => window.tpuprof.viewRange()[0] > a, r1[0]);
  const r2 = await page.evaluate(() => window.tpuprof.viewRange());
  assert.ok(Math.abs((r2[1] - r2[0]) - (r1[1] - r1[0])) < 1e-6 * (r1[1] - r1[0]), 'D pans without zooming');

  // Wheel zoom at the cursor keeps the time under the cursor in place.
  const box = await page.locator('#timeline').boundingBox();
  const cx = box.x + box.width * 0.6, cy = box.y + 60;
  const tBefore = await page.evaluate(([x]) => { const r = window.tpuprof.viewRange(); const c = document.getElementById('timeline').getBoundingClientRect(); return r[0] + (x - c.left - 128) / (c.width - 128) * (r[1] - r[0]); }, [cx]);
  await page.mouse.move(cx, cy);
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((w) => { const r = window.tpuprof.viewRange(); return r[1] - r[0] < w * 0.9; }, r2[1] - r2[0]);
  const tAfter = await page.evaluate(([x]) => { const r = window.tpuprof.viewRange(); const c = document.getElementById('timeline').getBoundingClientRect(); return r[0] + (x - c.left - 128) / (c.width - 128) * (r[1] - r[0]); }, [cx]);
  assert.ok(Math.abs(tAfter - tBefore) < (r2[1] - r2[0]) * 0.01, 'time under cursor kept: ' + tBefore + ' vs ' + tAfter);

  // Hover a TIU command of core 1: the tooltip shows its Cmd Id.
  const li = lanes.findIndex((l) => l.core === 1 && l.kind === 'TIU');
  const n = lanes[li].n, i = Math.floor(n / 2);
  const [s, e] = await page.evaluate(([a, b]) => window.tpuprof.cmdTime(a, b), [li, i]);
  await page.evaluate(([a, b]) => window.tpuprof.setView(a, b), [s - (e - s) * 2, e + (e - s) * 2]);
  const pt = await page.evaluate(([a, b]) => window.tpuprof.cmdPoint(a, b), [li, i]);
  const cmd = await page.evaluate(([a, b]) => window.tpuprof.cmdId(a, b), [li, i]);
  assert.ok(cmd > 0);
  await page.mouse.move(pt.x, pt.y);
  await page.waitForFunction(() => window.tpuprof.tooltipText() !== '');
  const tip = await page.evaluate(() => window.tpuprof.tooltipText());
  assert.match(tip, new RegExp('Cmd Id' + cmd + '(?!\\d)'), 'tooltip: ' + tip);
  // Global Idx: the command's place on its engine, from 1 (docs/vendor-files.md).
  assert.match(tip, new RegExp('Global Idx' + (i + 1) + '(?!\\d)'), 'tooltip: ' + tip);
  assert.match(tip, /Layer#\d+ (Load|Conv2D|Store)/, 'tooltip names the layer: ' + tip);
  assert.match(tip, /uArch Rate\d+\.\d%/, 'tooltip lists the argument set: ' + tip);
  // Core 1's TIU has no cost model in the fixture: its uArch rate comes from the reader's
  // "uArch Rate" argument, and no Alg Ops are shown.
  {
    const r = /uArch rate(\d+\.\d\d)%/.exec(tip), a = /uArch Rate(\d+\.\d)%/.exec(tip);
    assert.ok(r && a && Number(r[1]).toFixed(1) === Number(a[1]).toFixed(1), 'rate from the argument: ' + tip);
    assert.doesNotMatch(tip, /Alg Ops/, tip);
  }
  // Click pins the same command into the details panel.
  await page.mouse.click(pt.x, pt.y);
  const det = await page.evaluate(() => window.tpuprof.detailsText());
  assert.match(det, new RegExp('Cmd Id' + cmd + '(?!\\d)'));
  {
    // Core 0 has cost data: the tooltip gives uArch rate = Alg Ops / uArch Ops (the same
    // figure as its "uArch Rate" argument) and the bar is that tall.
    const l0 = lanes.findIndex((l) => l.core === 0 && l.kind === 'TIU');
    let j = Math.floor(lanes[l0].n / 2), tip0 = '';
    for (let tries = 0; tries < 20 && !/uArch rate\d/.test(tip0); tries++, j++) {
      const [s0, e0] = await page.evaluate(([a, b]) => window.tpuprof.cmdTime(a, b), [l0, j]);
      await page.evaluate(([a, b]) => window.tpuprof.setView(a, b), [s0 - (e0 - s0) * 2, e0 + (e0 - s0) * 2]);
      const p0 = await page.evaluate(([a, b]) => window.tpuprof.cmdPoint(a, b), [l0, j]);
      await page.mouse.move(p0.x, p0.y);
      await page.waitForFunction(() => window.tpuprof.tooltipText() !== '');
      tip0 = await page.evaluate(() => window.tpuprof.tooltipText());
    }
    const m = /uArch rate(\d+\.\d\d)%/.exec(tip0), a = /uArch Rate(\d+\.\d)%/.exec(tip0);
    assert.ok(m && a, 'core 0 tooltip has the cost-model rate and the argument: ' + tip0);
    assert.equal(Number(m[1]).toFixed(1), Number(a[1]).toFixed(1), tip0);
    assert.match(tip0, /Alg Ops\d+uArch Ops1000/, tip0);
  }

  // Shift+drag box-zooms to the dragged range.
  await page.evaluate(() => window.tpuprof.reset());
  const bb = await page.locator('#timeline').boundingBox();
  const xa = bb.x + 128 + (bb.width - 128) * 0.25, xb = bb.x + 128 + (bb.width - 128) * 0.5;
  const span = await page.evaluate(() => window.tpuprof.viewRange());
  await page.keyboard.down('Shift');
  await page.mouse.move(xa, bb.y + 60);
  await page.mouse.down();
  await page.mouse.move((xa + xb) / 2, bb.y + 70);
  await page.mouse.move(xb, bb.y + 80);
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const rb = await page.evaluate(() => window.tpuprof.viewRange());
  const w0 = span[1] - span[0];
  assert.ok(Math.abs(rb[0] - (span[0] + w0 * 0.25)) < w0 * 0.01 && Math.abs(rb[1] - (span[0] + w0 * 0.5)) < w0 * 0.01,
    'box zoom to a quarter..half: ' + span + ' -> ' + rb);

  // Search by name finds commands and jumps to the first.
  const hits = await page.evaluate(() => window.tpuprof.search('tensorSt'));
  const gdmaStores = await page.evaluate(() => JSON.parse(document.getElementById('tp-data').textContent)).then((D) => {
    const id = D.strs.indexOf('tensorSt');
    return D.lanes.reduce((s, L) => s + decodeColumn(L.nm, L.n).filter((x) => x === id).length, 0);
  });
  assert.equal(hits, gdmaStores);
  assert.ok(hits > 0);
  assert.match(await page.evaluate(() => window.tpuprof.detailsText()), /tensorSt/);
  // Search by cmd id.
  assert.ok(await page.evaluate((c) => window.tpuprof.search('#' + c), cmd) >= 1);
  // Search by Global Idx: the (i+1)-th command of every engine lane that has one.
  {
    const want = lanes.filter((l) => l.kind !== 'Layer' && l.core >= 0 && l.n > i).length;
    assert.equal(await page.evaluate((g) => window.tpuprof.search('g' + g), i + 1), want);
    assert.equal(await page.evaluate((g) => window.tpuprof.search('Global Idx ' + g), i + 1), want);
    // Once: the tooltip lists the Global Idx a single time.
    assert.equal(tip.split('Global Idx').length, 2, 'tooltip: ' + tip);
  }

  // Memory charts: LOCAL and GLOBAL per core for the fixture's tensors.
  assert.equal(await page.evaluate(() => window.tpuprof.memCharts()), 4);
  assert.match(await page.locator('#memory').innerText(), /LOCAL MEM.*Core 0/);
  // Core 0's LOCAL chart also has the commands' own records (DMA LMEM sides), drawn filled
  // over the compiler's outlined tensors; core 1 (no descriptor fields) only the tensors.
  assert.match(await page.locator('#memory').innerText(), /filled: from the commands.*outlined: the compiler's tensors/);
  assert.match(await page.locator('#memory').innerText(), /Core 1[\s\S]*sizes estimated from the compiler's tensor shapes/);
  assert.match(await page.locator('#memory').innerText(), /coeff/);
  // Overview tables: both cores, sortable (clicking a header reorders).
  const eng = await page.locator('#engines').innerText();
  assert.match(eng, /Core 0/);
  assert.match(eng, /Core 1/);
  // uArch rate per core: core 0 has cost data (a percentage), core 1 none (n/a, not 100 %).
  assert.match(eng, /TIU uArch rate/);
  assert.match(eng, /Core 0[^\n]*\d+\.\d+\s*%/);
  assert.match(eng, /Core 1[^\n]*n\/a/);

  // Counter lanes: core 0's TIU has uArch rates (cost data), so its band carries the rate
  // curve, within 0..1 and equal to the one rate when the view holds a single command.
  await page.evaluate(() => window.tpuprof.reset());
  const ctrs = await page.evaluate(() => window.tpuprof.counters());
  const c0 = ctrs.find((c) => c.core === 0), c1 = ctrs.find((c) => c.core === 1);
  assert.ok(c0 && c0.rate && c0.rate.some((x) => x !== null), 'core 0 uArch rate curve');
  assert.ok(c0.rate.every((x) => x === null || (x >= 0 && x <= 1)));
  assert.ok(c1, 'core 1 counter lane');
  {
    const Dd = await page.evaluate(() => JSON.parse(document.getElementById('tp-data').textContent));
    const l0 = lanes.findIndex((l) => l.core === 0 && l.kind === 'TIU');
    const ua = decodeColumn(Dd.lanes[l0].ua, Dd.lanes[l0].n);
    const j = ua.findIndex((u) => u > 1);
    assert.ok(j >= 0, 'a core 0 TIU command with a known rate');
    const [a, b] = await page.evaluate(([x, y]) => window.tpuprof.cmdTime(x, y), [l0, j]);
    await page.evaluate(([x, y]) => window.tpuprof.setView(x + (y - x) * 0.25, y - (y - x) * 0.25), [a, b]);
    const r = (await page.evaluate(() => window.tpuprof.counters())).find((c) => c.core === 0).rate;
    const mid = r[Math.floor(r.length / 2)];
    assert.ok(Math.abs(mid - (ua[j] - 1) / 10000) < 1e-9, 'rate inside one command = its uArch rate: ' + mid + ' vs ' + ua[j]);
  }

  await page.evaluate(() => window.tpuprof.reset());
  await page.screenshot({ path: join(OUT, 'small.png'), fullPage: true });
  assertClean(rec);
  await page.close();
});

test('hostile names render as text and execute nothing', async () => {
  const evil = '</script><img src=x onerror=alert(1)>';
  const { file } = fixture('hostile');
  const rec = await open(browser.context, file);
  const { page } = rec;
  assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0, 'no injected element');
  assert.equal(await page.evaluate(() => document.scripts.length), 2, 'only the page\'s two scripts');
  assert.ok((await page.locator('#caption').textContent()).includes(evil), 'net name shown as text');
  assert.ok((await page.title()).includes(evil), 'title shown as text');
  assert.ok((await page.locator('#top-layers').textContent()).includes(evil), 'layer name shown as text');
  // Hover a Conv2D layer block: the tooltip carries the name as text.
  const lanes = await page.evaluate(() => window.tpuprof.lanes());
  const li = lanes.findIndex((l) => l.kind === 'Layer');
  await page.evaluate((a) => window.tpuprof.search('Conv2D'), li);
  const det = await page.evaluate(() => window.tpuprof.detailsText());
  assert.ok(det.includes(evil), 'pinned layer details show the name: ' + det);
  await page.screenshot({ path: join(OUT, 'hostile.png'), fullPage: true });
  assertClean(rec);
  await page.close();
});

test('real BM1688 dump through the tpuprof CLI', async (t) => {
  const dump = SHARED ? join(SHARED, 'testdata/sophgo/bm1688_resnet50') : '';
  if (!dump || !existsSync(dump)) { console.log('SKIPPED: real dump absent (' + dump + ')'); t.skip('SKIPPED: real dump absent'); return; }
  if (!CLI || !existsSync(CLI)) { console.log('SKIPPED: tpuprof CLI not built'); t.skip('SKIPPED: tpuprof CLI not built'); return; }
  const out = join(OUT, 'real');
  rmSync(out, { recursive: true, force: true });
  try {
    execFileSync(CLI, [dump, out, '-q'], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    const msg = String(e.stderr || e.message);
    if (/no profile data found/.test(msg)) {
      console.log('SKIPPED: the tpuprof CLI cannot read the dump yet (bmprofile reader not linked): ' + msg.trim());
      t.skip('SKIPPED: bmprofile reader not linked');
      return;
    }
    throw e;
  }
  const file = join(out, 'result.html');
  assert.ok(existsSync(file), 'tpuprof wrote result.html by default');
  const rec = await open(browser.context, file);
  const { page } = rec;
  const lanes = await page.evaluate(() => window.tpuprof.lanes());
  // Lanes per core and engine must carry every record the analysis counted (summary.json).
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  for (const kind of ['TIU', 'GDMA', 'SDMA', 'CDMA']) {
    const n = lanes.filter((l) => l.kind === kind).reduce((a, l) => a + l.n, 0);
    assert.equal(n, summary.record_counts[kind] || 0, kind + ' commands on the page vs summary.json');
  }
  for (const core of [0, 1]) {
    assert.ok(lanes.find((x) => x.core === core && x.kind === 'TIU'), 'core ' + core + ' TIU lane');
    assert.ok(lanes.find((x) => x.core === core && x.kind === 'GDMA'), 'core ' + core + ' GDMA lane');
  }
  // PROVENANCE.txt: totalTime 2176.268 us.
  assert.match(await page.locator('#subcaption').textContent(), /total 2176\.\d+ µs/);
  await page.screenshot({ path: join(OUT, 'real.png'), fullPage: true });
  console.log('real dump page: ' + statSync(file).size + ' bytes');

  // The page's data decoded here independently (lib.mjs decodeColumn) for the checks below.
  const D = await page.evaluate(() => JSON.parse(document.getElementById('tp-data').textContent));
  const LYN = decodeColumn(D.layers.name, D.layers.n), LYT = decodeColumn(D.layers.type, D.layers.n);
  const cols = D.lanes.map((L) => {
    const c = {};
    for (const k of ['nm', 'ty', 'ly', 'cmd', 'dep', 'by', 'cyc', 'dur']) c[k] = decodeColumn(L[k], L.n);
    c.durNs = c.dur.map((d, i) => d + (L.durRes ? Math.trunc((c.cyc[i] / L.mhz) * 1000) : 0));
    return c;
  });
  const hasQ = (si, q) => (D.strs[si] || '').toLowerCase().includes(q);

  // Typing in the search box searches incrementally; the count is every command or layer
  // whose name, type or layer name/type contains "conv".
  let want = 0;
  D.lanes.forEach((L, li) => { const c = cols[li]; for (let i = 0; i < L.n; i++) {
    const l = c.ly[i];
    if (hasQ(c.nm[i], 'conv') || hasQ(c.ty[i], 'conv') || (l > 0 && (hasQ(LYN[l - 1], 'conv') || hasQ(LYT[l - 1], 'conv')))) want++;
  } });
  assert.ok(want > 0);
  await page.fill('#search', 'conv');
  await page.waitForFunction(() => / \/ \d+$/.test(document.getElementById('search-info').textContent), null, { timeout: 10000 });
  assert.equal(await page.locator('#search-info').textContent(), '1 / ' + want);
  await page.locator('#search').press('Enter');
  assert.equal(await page.locator('#search-info').textContent(), '2 / ' + want);

  // Pin a TIU command that waits for a GDMA command (by clicking it), see the arrow and the
  // engine named, then follow the dependency with the button.
  const tl = lanes.findIndex((l) => l.core === 0 && l.kind === 'TIU');
  const gl = lanes.findIndex((l) => l.core === 0 && l.kind === 'GDMA');
  const ti = cols[tl].dep.findIndex((d, i) => d > 0 && i > 0);
  assert.ok(ti > 0, 'a TIU command with a dependency');
  const dep = cols[tl].dep[ti];
  const [ts, te] = await page.evaluate(([a, b]) => window.tpuprof.cmdTime(a, b), [tl, ti]);
  await page.evaluate(([a, b]) => window.tpuprof.setView(a, b), [ts - (te - ts) * 3, te + (te - ts) * 2]);
  const tp = await page.evaluate(([a, b]) => window.tpuprof.cmdPoint(a, b), [tl, ti]);
  await page.mouse.click(tp.x, tp.y);
  assert.match(await page.evaluate(() => window.tpuprof.detailsText()), new RegExp('Waits forGDMA cmd ' + dep + '(?!\\d)'));
  await page.mouse.move(5, 5);
  const red = await page.evaluate(() => {
    const c = document.getElementById('timeline'), g = c.getContext('2d'), d = g.getImageData(0, 0, c.width, c.height).data;
    let k = 0;
    for (let p = 0; p < d.length; p += 4) if (Math.abs(d[p] - 0xd0) < 12 && Math.abs(d[p + 1] - 0x34) < 12 && Math.abs(d[p + 2] - 0x2c) < 12) k++;
    return k;
  });
  assert.ok(red > 20, 'the dependency arrow is drawn (' + red + ' red pixels)');
  await page.click('#follow-dep');
  const det2 = await page.evaluate(() => window.tpuprof.detailsText());
  assert.match(det2, new RegExp('Cmd Id' + dep + '(?!\\d)'), det2);
  assert.match(det2, /EngineCore 0 GDMA/, det2);
  // ... and back: the GDMA command names the first TIU command that waits for it.
  assert.match(await page.locator('#follow-signal').textContent(), /TIU cmd \d+/);
  await page.click('#follow-signal');
  const det3 = await page.evaluate(() => window.tpuprof.detailsText());
  assert.match(det3, /EngineCore 0 TIU/, det3);
  assert.match(det3, new RegExp('Waits forGDMA cmd ' + dep + '(?!\\d)'), det3);

  // Automatic units: a 500 ns window is shown in ns.
  await page.evaluate(() => window.tpuprof.setView(1000, 1500));
  assert.match(await page.locator('#range-info').textContent(), /\(500 ns\)/);
  await page.evaluate(() => window.tpuprof.reset());

  // DDR counter lanes: over the whole view the curve integrates to the core's DMA bytes.
  const ctr = await page.evaluate(() => window.tpuprof.counters());
  assert.equal(ctr.length, 2, 'one DDR counter lane per core');
  for (const C of ctr) {
    const [a, b] = await page.evaluate(() => window.tpuprof.viewRange());
    const nsPerPx = (b - a) / C.cols.length;
    const area = C.cols.reduce((x, y) => x + y, 0) * nsPerPx;
    let bytes = 0;
    D.lanes.forEach((L, li) => { if (L.core === C.core && /DMA/.test(L.kind)) bytes += cols[li].by.reduce((x, y) => x + y, 0); });
    assert.ok(bytes > 0 && Math.abs(area - bytes) < bytes * 0.01, 'core ' + C.core + ' DDR curve ' + area + ' vs ' + bytes + ' bytes');
  }

  // The command table, filtered like a user: core 0 TIU, "conv", at least 30 µs.
  const opt = await page.locator('#f-engine option', { hasText: 'Core 0 TIU' }).getAttribute('value');
  await page.selectOption('#f-engine', opt);
  await page.fill('#f-type', 'conv');
  await page.fill('#f-dur', '30');
  let wantRows = 0;
  for (let i = 0; i < lanes[tl].n; i++) if ((hasQ(cols[tl].nm[i], 'conv') || hasQ(cols[tl].ty[i], 'conv')) && cols[tl].durNs[i] >= 30000) wantRows++;
  assert.ok(wantRows > 0);
  await page.waitForFunction((w) => window.tpuprof.tableCount() === w, wantRows, { timeout: 10000 });
  const rows = await page.evaluate(() => window.tpuprof.tableRows());
  assert.ok(rows.length > 0 && rows.every((r) => r[0] === 'Core 0 TIU' && /conv/i.test(r[2] + r[3])), JSON.stringify(rows.slice(0, 3)));
  // Memory charts carry a usage-over-time strip: some bytes in use somewhere in the view.
  await page.evaluate(() => window.tpuprof.reset());
  await page.locator('#memory').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => window.tpuprof.memPeaks().some((p) => p > 0), null, { timeout: 10000 });
  // A row click moves the timeline there and pins the command.
  await page.locator('#cmd-spacer .cmd-row').first().click();
  assert.match(await page.evaluate(() => window.tpuprof.detailsText()), new RegExp('Cmd Id' + rows[0][1] + '(?!\\d)'));
  // --disable_web turns the page off.
  const off = join(OUT, 'real-noweb');
  rmSync(off, { recursive: true, force: true });
  execFileSync(CLI, [dump, off, '-q', '--disable_web'], { encoding: 'utf8', stdio: 'pipe' });
  assert.ok(!existsSync(join(off, 'result.html')), '--disable_web: no result.html');
  assertClean(rec);
  await page.close();
});

// A capture's page (html_capture.c, web/cap_*.js) for a capture made here with the build's
// Python package (tests/support/py_capture.py: two threads, step -> activity -> operator ->
// operator, tensors, attributes, two counters) and for the bert_mini example's when it is
// built: it loads clean; thread lanes are flame charts (nesting depth > 1 for the Python
// capture); each counter series is a lane under its thread whose hovered sample shows its
// value; the operator-type, step and operator tables hold what summary.json says; hovering an
// operator shows its tensors' dtype[shape] and attributes; the event table filters by tensor
// text; and no TPU word of the device page is anywhere on it.
const TPU_WORDS = [/uArch/i, /Cmd Id/, /sys \/ messages/, /wait_msg/, /Heights:/, /\bTIU\b/, /\bGDMA\b/, /\bDMA\b/,
  /compiler/i, /LOCAL MEM/, /Engines per core/, /Top layers/, /Top command types/, /layer contains/i, /cmd id/i, /\bcommands?\b/i];
function assertNoTpuWords(text, what) {
  for (const w of TPU_WORDS) assert.doesNotMatch(text, w, what + ' says ' + w);
}
async function hoverEvent(page, li, i) {
  const [s, e] = await page.evaluate(([a, b]) => window.tpuprof.cmdTime(a, b), [li, i]);
  await page.evaluate(([a, b]) => window.tpuprof.setView(a, b), [s - (e - s) * 2 - 1000, e + (e - s) * 2 + 1000]);
  const pt = await page.evaluate(([a, b]) => window.tpuprof.cmdPoint(a, b), [li, i]);
  await page.mouse.move(pt.x, pt.y);
  await page.waitForFunction(() => window.tpuprof.tooltipText() !== '');
  return page.evaluate(() => window.tpuprof.tooltipText());
}
// Index of the first event named `name` (from `from` on) in lane li, read from the page data.
function eventIndex(D, li, name, from = 0) {
  const L = D.lanes[li], nm = decodeColumn(L.nm, L.n), id = D.strs.indexOf(name);
  return nm.findIndex((x, k) => k >= from && x === id);
}
async function capturePage(t, dump, name) {
  const out = join(OUT, name);
  rmSync(out, { recursive: true, force: true });
  execFileSync(CLI, [dump, out, '-q', '--json'], { encoding: 'utf8', stdio: 'pipe' });
  const rec = await open(browser.context, join(out, 'result.html'));
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  const D = await rec.page.evaluate(() => JSON.parse(document.getElementById('tp-data').textContent));
  return { rec, page: rec.page, summary, D };
}

test('capture page: flame chart, counters, operator and step tables, tensors, capture words', async (t) => {
  if (!CLI || !existsSync(CLI)) { console.log('SKIPPED: tpuprof CLI not built'); t.skip('SKIPPED: tpuprof CLI not built'); return; }
  const maker = join(process.env.TP_SOURCE_DIR || join(BIN, '..'), 'tests', 'support', 'py_capture.py');
  const capDir = join(OUT, 'pycap');
  rmSync(capDir, { recursive: true, force: true });
  let dump;
  try {
    dump = execFileSync('/usr/bin/python3', [maker, BIN, capDir], { encoding: 'utf8', stdio: 'pipe' }).trim().split('\n').pop();
  } catch (e) {
    if (e.status === 77) { console.log(String(e.stdout).trim()); t.skip('SKIPPED: Python package not built'); return; }
    throw e;
  }
  const { rec, page, summary, D } = await capturePage(t, dump, 'capture-py');
  assert.match(await page.title(), /^tpuprof: capture of python3 \(pid \d+\)$/);
  const lanes = await page.evaluate(() => window.tpuprof.lanes());
  assert.deepEqual(lanes.map((l) => l.kind + ':' + l.label), ['Thread:host loop', 'Counter:queue_depth', 'Thread:decoder', 'Counter:decoded_bytes']);
  // Flame chart: step (0) -> activity (1) -> Normalize (2) -> Sub / Div (3), one row each.
  assert.equal(await page.evaluate(() => window.tpuprof.capture.maxDepth()), 3);
  const rows = await page.evaluate(() => window.tpuprof.capture.laneRows(0));
  for (const [nm, depth] of [['resnet50', 0], ['preprocess', 1], ['input.norm', 2], ['input.norm.sub', 3], ['prob', 2]])
    assert.equal(rows[eventIndex(D, 0, nm)], depth, nm + ' at depth ' + depth);
  assert.ok(lanes[0].h >= 4 * 18, 'four 18 px rows: ' + lanes[0].h);

  // Operator types: the non-warm-up executions (steps 1 and 2) as summary.json's op_type_stats.
  const opt = await page.locator('#cap-optypes').innerText();
  for (const r of summary.op_type_stats) {
    assert.equal(r.executions, 2);
    assert.match(opt, new RegExp(r.op_type + '\\s+' + r.executions + '\\s+' + r.total_ms.toFixed(3)), 'op type row ' + r.op_type + ': ' + opt);
  }
  const steps = await page.locator('#cap-steps').innerText();
  assert.match(steps, /\n0\s+resnet50\s+yes\s/);
  for (const s of summary.steps) assert.match(steps, new RegExp('\\n' + s.step + '\\s+resnet50\\s+(yes\\s+)?[\\d.]+ ms\\s+' + s.latency_ms.toFixed(3)), 'step ' + s.step);
  assert.match(await page.locator('#cap-ops').innerText(), /input\.norm\s+Normalize\s+2\s/);

  // An operator's tooltip: its type, step, tensors (name dtype[shape]) and attributes.
  const norm = eventIndex(D, 0, 'input.norm', eventIndex(D, 0, 'input.norm') + 1); // step 1's
  const tip = await hoverEvent(page, 0, norm);
  assert.match(tip, /Nameinput\.norm(?!\.)/);
  assert.match(tip, /KindoperatorOperator typeNormalize/);
  assert.match(tip, /Step1(?! \(warm-up\))/);
  assert.match(tip, /Input 0image uint8\[4x3x224x224\]/);
  assert.match(tip, /Output 0input fp32\[4x3x224x224\]/);
  assert.match(tip, /Attribute layoutNCHW/);
  assert.match(tip, /Bytes\d+ \(\d/);
  assertNoTpuWords(tip, 'operator tooltip');
  // A counter sample: its value.
  const q = eventIndex(D, 1, 'queue_depth');
  const ctip = await hoverEvent(page, 1, q + 1);
  assert.match(ctip, /Counterqueue_depthThreadhost loop/);
  assert.match(ctip, /Value1(?!\d)/, ctip);
  assert.equal(await page.evaluate(() => window.tpuprof.capture.counterValue(1, 0)), 2);

  // Event table: the tensor filter finds the events with a 224x224 tensor (3 operators a step).
  await page.fill('#f-layer', '224');
  await page.waitForFunction(() => window.tpuprof.tableCount() === 9, null, { timeout: 10000 });
  const trows = await page.evaluate(() => window.tpuprof.tableRows());
  assert.ok(trows.every((r) => /224/.test(r[6] + r[7])), JSON.stringify(trows.slice(0, 2)));
  await page.fill('#f-layer', '');
  await page.waitForFunction((n) => window.tpuprof.tableCount() === n, D.lanes.filter((L) => L.kind === 'Thread').reduce((a, L) => a + L.n, 0), { timeout: 10000 });

  // A pinned event, then Esc: the details say "event" again.
  await page.locator('#cmd-spacer .cmd-row').first().click();
  await page.waitForFunction(() => /Nameload model/.test(window.tpuprof.detailsText()), null, { timeout: 10000 });
  await page.locator('#timeline').focus();
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => /Click an event/.test(window.tpuprof.detailsText()));
  await page.evaluate(() => window.tpuprof.reset());
  await page.mouse.move(5, 5);
  assertNoTpuWords(await page.locator('body').innerText(), 'the page');
  await page.screenshot({ path: join(OUT, 'capture-py.png'), fullPage: true });
  assertClean(rec);
  await page.close();

  // The bert_mini example (make run's capture), when built: the same page, its own words.
  const bert = join(BIN, 'examples', 'bert_mini', 'bert_mini');
  if (!existsSync(bert)) { console.log('SKIPPED: bert_mini not built (no OpenBLAS): its capture page not checked'); return; }
  const bdir = join(OUT, 'bertcap');
  rmSync(bdir, { recursive: true, force: true });
  mkdirSync(bdir, { recursive: true });
  execFileSync(bert, ['--layers', '2', '--steps', '4', '--warmup', '1', '--quiet'], { env: { ...process.env, TPUPROF: '2', TPUPROF_DIR: bdir }, stdio: 'pipe' });
  const bdump = join(bdir, readdirSync(bdir).find((f) => f.startsWith('tpuprof_data_dev')));
  const B = await capturePage(t, bdump, 'capture-bert');
  assert.equal(await B.page.evaluate(() => window.tpuprof.capture.maxDepth()), 1, 'step -> operator');
  const bopt = await B.page.locator('#cap-optypes').innerText();
  for (const r of B.summary.op_type_stats) assert.match(bopt, new RegExp(r.op_type + '\\s+' + r.executions + '\\s'));
  assert.equal((await B.page.locator('#cap-steps tbody tr').count()), 4);
  const mm = eventIndex(B.D, 0, 'encoder.0.attn.q');
  const btip = await hoverEvent(B.page, 0, mm);
  assert.match(btip, /Operator typeMatMul/);
  assert.match(btip, /Output 0encoder\.0\.attn\.q_out fp32\[\d+x\d+x256\]/, btip);
  await B.page.mouse.move(5, 5);
  assertNoTpuWords(await B.page.locator('body').innerText(), 'bert_mini page');
  await B.page.screenshot({ path: join(OUT, 'capture-bert.png'), fullPage: true });
  assertClean(B.rec);
  await B.page.close();
});

// diff.html of two generated dumps with more layers than the page embeds: it loads offline
// with no errors, its tables say how many rows exist and how many the page holds, the
// embedded rows are diff.json's first TP_DIFF_PAGE_ROWS, every timeline label carries
// diff.json's delta for its key (the bar colours), and the timelines are painted in those
// colours.
test('diff page: capped rows, every bar coloured by its layer delta', async (t) => {
  const gen = join(BIN, 'tpuprof-gendump');
  if (!CLI || !existsSync(CLI) || !existsSync(gen)) {
    console.log('SKIPPED: tpuprof CLI or tpuprof-gendump not built');
    t.skip('SKIPPED: tpuprof CLI or tpuprof-gendump not built');
    return;
  }
  const dir = join(OUT, 'diffpage');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, seed] of [['a', '1'], ['b', '2']])
    execFileSync(gen, ['--quiet', '--cmds', '2000', '--seed', seed, join(dir, name)], { stdio: 'pipe' });
  execFileSync(CLI, ['diff', join(dir, 'a'), join(dir, 'b'), join(dir, 'out'), '-q'], { stdio: 'pipe' });
  const full = JSON.parse(readFileSync(join(dir, 'out', 'diff.json'), 'utf8'));
  const PAGE_ROWS = 1000; // TP_DIFF_PAGE_ROWS (src/diff/diff.h)
  assert.ok(full.layers.length > PAGE_ROWS, 'the dumps have more layers than the page holds: ' + full.layers.length);
  const page = await browser.context.newPage();
  const url = pathToFileURL(join(dir, 'out', 'diff.html')).href;
  const rec = { page, url, errors: [], requests: [], dialogs: [] };
  page.on('console', (m) => { if (m.type() === 'error') rec.errors.push('console: ' + m.text()); });
  page.on('pageerror', (e) => rec.errors.push('pageerror: ' + e.message));
  page.on('request', (r) => rec.requests.push(r.url()));
  page.on('dialog', async (d) => { rec.dialogs.push(d.type() + ': ' + d.message()); await d.dismiss(); });
  await page.goto(url, { waitUntil: 'load', timeout: 60000 });
  await page.waitForSelector('#tables table', { timeout: 20000 });
  const heads = await page.$$eval('#tables h2', (hs) => hs.map((h) => h.textContent));
  assert.equal(heads[0], 'Layers ranked by impact (' + full.layers.length + '; the page holds the first ' + PAGE_ROWS + ', diff.json all)');
  assert.equal(await page.$$eval('#tables table', (ts) => ts[0].querySelectorAll('tr').length), 201, 'header + 200 rows');
  const D = await page.evaluate(() => JSON.parse(document.getElementById('diff-data').textContent));
  assert.deepEqual(D.diff.layers, full.layers.slice(0, PAGE_ROWS));
  assert.equal(D.rows_total.layers, full.layers.length);
  const byKey = new Map(full.layers.map((r) => [r.key, r.delta_us]));
  let coloured = 0;
  for (const s of ['a', 'b']) {
    const T = D.timeline[s];
    assert.equal(T.deltas.length, T.labels.length);
    T.labels.forEach((l, i) => {
      assert.equal(T.deltas[i], byKey.has(l) ? byKey.get(l) : null, s + ' label ' + l);
      if (T.deltas[i]) coloured++;
    });
  }
  assert.ok(coloured > PAGE_ROWS, 'labels with a delta beyond the embedded rows: ' + coloured);
  // The first timeline shows slower (#e66) and faster (#6b6) bars.
  const px = await page.evaluate(() => {
    const c = document.querySelector('#tl canvas'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let red = 0, green = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] === 0xee && d[i + 1] === 0x66 && d[i + 2] === 0x66) red++;
      if (d[i] === 0x66 && d[i + 1] === 0xbb && d[i + 2] === 0x66) green++;
    }
    return { red, green };
  });
  assert.ok(px.red > 0 && px.green > 0, 'red and green bars: ' + JSON.stringify(px));
  await page.screenshot({ path: join(OUT, 'diff.png'), fullPage: true });
  assertClean(rec);
  await page.close();
});

// Memory charts at the largest size `--detail auto` keeps per-command detail for (README: 1 M
// commands): the commands of a generated 2 × 500 000-command BM1688 dump give more LOCAL records
// than the page holds (LMEM_CMD_MAX in src/writers/html/html_data.c, 300 000), which a prefix
// cap used to cut short (core 1 lost the last third of its run). The writer samples one
// command in k over the whole run instead: the page says so; each core's sampled records reach
// the end of its run; both charts of both cores draw data.
test('memory charts of a 1 M-command dump: sampled over the whole run, said in the page', async (t) => {
  const gen = join(BIN, 'tpuprof-gendump');
  if (!CLI || !existsSync(CLI) || !existsSync(gen)) {
    console.log('SKIPPED: tpuprof CLI or tpuprof-gendump not built');
    t.skip('SKIPPED: tpuprof CLI or tpuprof-gendump not built');
    return;
  }
  const dump = join(OUT, 'mem1m-dump'), out = join(OUT, 'mem1m');
  rmSync(dump, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
  execFileSync(gen, ['--quiet', '--arch', 'BM1688', '--cores', '2', '--cmds', '500000', '--seed', '1', dump], { stdio: 'pipe' });
  try {
    execFileSync(CLI, [dump, out, '-q', '--disable_doc', '--disable_perfetto', '--disable_summary'], { stdio: 'pipe' });
  } finally {
    rmSync(dump, { recursive: true, force: true }); // ~400 MB
  }
  const file = join(out, 'result.html');
  // The page's data read here, not through the browser (a 77 MB object over the protocol).
  const D = JSON.parse(/<script type="application\/json" id="tp-data">([\s\S]*?)<\/script>/.exec(readFileSync(file, 'utf8'))[1]);
  const R = D.lmem.recs, n = R.n;
  const en = decodeColumn(R.en, n), co = decodeColumn(R.co, n), e = decodeColumn(R.e, n);
  let fromCmds = 0;
  const last = {}, lastCmd = {};
  for (let i = 0; i < n; i++) {
    last[co[i]] = Math.max(last[co[i]] || 0, e[i]);
    if (!en[i]) continue;
    fromCmds++;
    lastCmd[co[i]] = Math.max(lastCmd[co[i]] || 0, e[i]);
  }
  assert.ok(D.lmem.cmdEvery > 1 && D.lmem.cmdDropped > 0, 'sampled: ' + JSON.stringify([D.lmem.cmdEvery, D.lmem.cmdDropped]));
  assert.ok(fromCmds > 0 && fromCmds <= 300000, 'records from the commands: ' + fromCmds);
  assert.deepEqual(Object.keys(last).sort(), ['0', '1']);
  for (const c of Object.keys(last))
    assert.ok(lastCmd[c] >= 0.99 * last[c], 'core ' + c + ': records from the commands end at ' + lastCmd[c] + ' of ' + last[c]);
  const rec = await open(browser.context, file, { timeout: 180000 });
  const { page } = rec;
  const text = await page.locator('#memory').innerText();
  for (const c of [0, 1]) {
    assert.match(text, new RegExp('LOCAL MEM \\(one lane[^\\n]*Core ' + c));
    assert.match(text, new RegExp('GLOBAL MEM \\(used blocks only\\) · Core ' + c));
  }
  assert.match(text, new RegExp('one command in ' + D.lmem.cmdEvery + ', see below'));
  assert.match(text, new RegExp('downsampled[\\s\\S]*one command in ' + D.lmem.cmdEvery + '[\\s\\S]*' + D.lmem.cmdDropped + ' records are left out'));
  assert.equal(await page.evaluate(() => window.tpuprof.memCharts()), 4);
  await page.evaluate(() => window.tpuprof.reset());
  await page.locator('#memory').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => window.tpuprof.memPeaks().length === 4 && window.tpuprof.memPeaks().every((p) => p > 0), null, { timeout: 30000 });
  assertClean(rec);
  await page.close();
  rmSync(out, { recursive: true, force: true });
});

test('trace with device lanes: the accelerator section (and none without)', async (t) => {
  if (!CLI || !existsSync(CLI)) { console.log('SKIPPED: tpuprof CLI not built'); t.skip('SKIPPED: tpuprof CLI not built'); return; }
  // One host step launching two kernels on a GPU stream; a kernel name that tries to end
  // the script element must stay text.
  const evil = 'k</script><img src=x onerror=alert(1)>';
  const ev = [
    { ph: 'X', cat: 'user_annotation', name: 'ProfilerStep#1', pid: 1, tid: 1, ts: 0, dur: 1000 },
    { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: 10, dur: 10, args: { correlation: 1 } },
    { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: 30, dur: 10, args: { correlation: 2 } },
    { ph: 'X', cat: 'kernel', name: 'gemm', pid: 0, tid: 7, ts: 25, dur: 100, args: { correlation: 1 } },
    { ph: 'X', cat: 'kernel', name: evil, pid: 0, tid: 7, ts: 130, dur: 50, args: { correlation: 2 } },
  ];
  const src = join(OUT, 'accel_trace.json');
  writeFileSync(src, JSON.stringify({ traceEvents: ev }));
  const out = join(OUT, 'accel');
  rmSync(out, { recursive: true, force: true });
  execFileSync(CLI, [src, out, '-q'], { encoding: 'utf8', stdio: 'pipe' });
  const rec = await open(browser.context, join(out, 'result.html'));
  const { page } = rec;
  await page.waitForFunction(() => window.tpuprof && window.tpuprof.ready());
  const verdict = await page.evaluate(() => window.tpuprofAccel.verdict());
  assert.match(verdict, /^host-bound: the device is idle 85 % of each step/);
  assert.equal(await page.locator('#accelerator .accel-verdict').textContent(), verdict);
  assert.deepEqual(await page.evaluate(() => window.tpuprofAccel.steps()), [['ProfilerStep#1', 1000, 150]]);
  const text = await page.locator('#accelerator').textContent();
  assert.ok(text.includes(evil), 'the hostile kernel name is shown as text');
  assert.equal(await page.locator('#accelerator img').count(), 0, 'no element from a name');
  await page.screenshot({ path: join(OUT, 'accel.png'), fullPage: true });
  assertClean(rec);
  await page.close();
  // A page without device lanes has no such section.
  const { file } = fixture('small');
  const rec2 = await open(browser.context, file);
  await rec2.page.waitForFunction(() => window.tpuprof && window.tpuprof.ready());
  assert.equal(await rec2.page.locator('#accelerator').count(), 0);
  assert.equal(await rec2.page.evaluate(() => typeof window.tpuprofAccel), 'undefined');
  assertClean(rec2);
  await rec2.page.close();
});
