// pages.test.mjs — the cross-core and cross-device views in headless Chromium (Debian's
// chromium through playwright-core, as tests/browser/): the job page (index.html) of a small
// job and result.html of a generated 8-core BM1690 cdm dump, both opened from file:// with
// every network request, console error and page error recorded.
//
// Environment: TP_CLI (tpuprof), TP_GENDUMP (tpuprof-gendump), TP_SHARED_DIR, TP_WORK (a
// scratch folder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, open } from '../browser/lib.mjs';

const CLI = process.env.TP_CLI, GEN = process.env.TP_GENDUMP, SHARED = process.env.TP_SHARED_DIR;
const WORK = process.env.TP_WORK;

function gen(dir, seed, cmds = 1500) {
  execFileSync(GEN, ['--format', 'cdm', '--arch', 'BM1690', '--cores', '8', '--cmds', String(cmds),
    '--mode', '1', '--seed', String(seed), '--quiet', dir]);
}

// A job: two devices x two calls of generated 8-core dumps (dev1-1 longer: the slowest), the
// real BM1690 dump when ../shared has it, and a broken dump.
function makeJob() {
  rmSync(WORK, { recursive: true, force: true });
  const job = join(WORK, 'job');
  mkdirSync(job, { recursive: true });
  gen(join(job, 'cdm_profile_data_dev0-0'), 1);
  gen(join(job, 'cdm_profile_data_dev0-1'), 2);
  gen(join(job, 'cdm_profile_data_dev1-0'), 3);
  gen(join(job, 'cdm_profile_data_dev1-1'), 4, 3000);
  const real = join(SHARED, 'testdata', 'sophgo', 'bm1690_blazeface_cdm');
  if (existsSync(real)) cpSync(real, join(job, 'node1', 'cdm_profile_data_dev0-0'), { recursive: true });
  else console.log('SKIPPED: the real BM1690 dump (no ' + real + '): generated dumps only');
  mkdirSync(join(job, 'bad_dump'));
  writeFileSync(join(job, 'bad_dump', 'global.profile'), 'garbage\n');
  writeFileSync(join(job, 'bad_dump', 'cdmlib0_0.profile'), Buffer.alloc(16));
  const out = join(WORK, 'out');
  const r = spawnSync(CLI, ['job', job, out, '-q']);
  assert.equal(r.status, 5, String(r.stderr));
  return out;
}

function noNetwork(rec) {
  assert.deepEqual(rec.requests.filter((u) => !u.startsWith('file:')), []);
  assert.deepEqual(rec.errors, []);
  assert.deepEqual(rec.dialogs, []);
}

test('job page: sortable rows, highlights, links, strips, filter, collapse', async () => {
  const out = makeJob();
  const b = await launch();
  try {
    const page = await b.context.newPage();
    const rec = { errors: [], requests: [], dialogs: [] };
    page.on('pageerror', (e) => rec.errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') rec.errors.push(m.text()); });
    page.on('request', (r) => rec.requests.push(r.url()));
    await page.goto('file://' + join(out, 'index.html'));
    const rows = () => page.$$eval('#calls tr[data-index]', (trs) => trs.map((tr) => ({
      cls: tr.className, cells: [...tr.children].map((td) => td.textContent) })));
    let r = await rows();
    const n = r.length;
    assert.ok(n >= 5, 'rows: ' + n);
    // Slowest: dev1 call 1 (3000 commands per core); failed: the broken dump.
    const slow = r.find((x) => x.cls.includes('slowest'));
    assert.equal(slow.cells[0], 'dev1');
    assert.equal(slow.cells[1], '1');
    assert.ok(r.some((x) => x.cls.includes('imbalanced')));
    const bad = r.find((x) => x.cls.includes('failed'));
    assert.match(bad.cells[13], /exit 2/);
    // Sort by total time, descending on the second click: the slowest first.
    await page.click('#calls th[data-key="total_us"]');
    await page.click('#calls th[data-key="total_us"]');
    r = await rows();
    assert.ok(r[0].cls.includes('slowest'), JSON.stringify(r[0]));
    assert.equal(await page.getAttribute('#calls th[data-key="total_us"]', 'aria-sort'), 'descending');
    // Every dump link leads to a page that exists.
    const links = await page.$$eval('#calls a', (as) => as.map((a) => a.getAttribute('href')));
    assert.equal(links.length, n);
    for (const h of links) if (!h.startsWith('bad_dump')) assert.ok(existsSync(join(out, h)), h);
    // Devices side by side, and one strip per core and call (8 cores x 4 generated calls).
    assert.ok(await page.$$eval('#side .dev', (d) => d.length) >= 2);
    const strips = await page.$$eval('#strips canvas.strip', (c) => c.length);
    assert.ok(strips >= 32, 'strips ' + strips);
    await page.fill('#filter', 'dev0 core 3');
    await page.dispatchEvent('#filter', 'input');
    assert.equal(await page.$$eval('#strips canvas.strip', (c) => c.length), 2);
    await page.fill('#filter', '');
    await page.dispatchEvent('#filter', 'input');
    await page.click('#collapse');
    assert.equal(await page.$$eval('#strips details[open]', (d) => d.length), 0);
    noNetwork(rec);
  } finally {
    await b.close();
  }
});

test('8-core page: compact header, cores side by side, filter, collapse, range, tooltip', async () => {
  const out = join(WORK, 'one');
  const dump = join(WORK, 'job', 'cdm_profile_data_dev1-1');
  execFileSync(CLI, [dump, out, '-q']);
  const b = await launch();
  try {
    const rec = await open(b.context, join(out, 'result.html'));
    const page = rec.page;
    // One card (total time) and a table of 8 core rows instead of 3 cards per core.
    assert.equal(await page.$$eval('#cards .card', (c) => c.length), 1);
    assert.equal(await page.$$eval('#head-cores tr', (t) => t.length), 9);
    const T = (f, ...a) => page.evaluate(f, ...a);
    assert.equal(await T(() => tpuprof.stripCount()), 16); /* TIU and GDMA per core */
    assert.equal(await page.$$eval('#core-bars .ebar', (e) => e.length), 32);
    const all = await T(() => tpuprof.shownLanes());
    await T(() => tpuprof.setCoreFilter('0-3'));
    assert.equal(await T(() => tpuprof.shownLanes()), all / 2);
    assert.equal(await T(() => tpuprof.stripCount()), 8);
    assert.deepEqual(await T(() => tpuprof.coreHeaders()), ['\u25be Core 0', '\u25be Core 1', '\u25be Core 2', '\u25be Core 3']);
    await T(() => tpuprof.collapseCore(2, true));
    assert.equal(await T(() => tpuprof.shownLanes()), all / 2 - all / 8);
    assert.match((await T(() => tpuprof.coreHeaders()))[2], /Core 2 \(collapsed\)/);
    // Clicking the collapsed header in the timeline expands it again.
    const before = await T(() => tpuprof.shownLanes());
    await page.$eval('#timeline', (e) => e.scrollIntoView());
    const at = await T(() => {
      const r = document.getElementById('timeline').getBoundingClientRect();
      const i = tpuprof.coreHeaders().findIndex((h) => /collapsed/.test(h));
      return { x: r.left + 20, y: r.top + tpuprof.coreHeaderY(i) + 5 };
    });
    await page.mouse.click(at.x, at.y);
    assert.equal(await T(() => tpuprof.shownLanes()), before + all / 8);
    assert.doesNotMatch((await T(() => tpuprof.coreHeaders())).join(), /collapsed/);
    await T(() => tpuprof.setCoreFilter(''));
    await T(() => tpuprof.collapseCore(2, false));
    assert.equal(await T(() => tpuprof.shownLanes()), all);
    // The visible range table follows the view: a tenth of the span holds fewer commands.
    const full = await T(() => tpuprof.rangeRows().reduce((t, r) => t + r[2], 0));
    await T(() => tpuprof.setView(0, tpuprof.spanNs() / 10));
    await page.waitForTimeout(300);
    const part = await T(() => tpuprof.rangeRows().reduce((t, r) => t + r[2], 0));
    assert.ok(part > 0 && part < full, part + ' vs ' + full);
    assert.match(await page.textContent('#range-caption'), /^0 ns/);
    // Pies per core and engine; the message chart says the dump has none.
    assert.equal(await page.$$eval('#core-pies .pie', (p) => p.length), 16);
    assert.match(await page.textContent('#msg-chart'), /send_msg|send,/);
    // Hover: Global Idx in the tooltip.
    await T(() => tpuprof.reset());
    const pt = await T(() => tpuprof.cmdPoint(0, 10));
    await page.mouse.move(pt.x, pt.y);
    await page.waitForTimeout(150);
    assert.match(await T(() => tpuprof.tooltipText()), /Global Idx\d+/);
    noNetwork(rec);
  } finally {
    await b.close();
  }
});

test('register rows behind a toggle in the tooltip (real BM1690 dump)', async (t) => {
  const real = join(SHARED, 'testdata', 'sophgo', 'bm1690_blazeface_cdm');
  if (!existsSync(real)) { console.log('SKIPPED: no ' + real); t.skip('no real dump'); return; }
  const out = join(WORK, 'real');
  execFileSync(CLI, [real, out, '-q']);
  const b = await launch();
  try {
    const rec = await open(b.context, join(out, 'result.html'));
    const page = rec.page, T = (f, ...a) => page.evaluate(f, ...a);
    const li = await T(() => tpuprof.lanes().findIndex((l) => l.kind === 'TIU'));
    const pt = await T((i) => tpuprof.cmdPoint(i, 3), li);
    await page.mouse.move(pt.x, pt.y);
    await page.waitForTimeout(150);
    const short = await T(() => tpuprof.tooltipText());
    assert.match(short, /Registers\d+ fields/);
    await page.check('#tip-regs');
    await page.mouse.move(pt.x + 1, pt.y);
    await page.mouse.move(pt.x, pt.y);
    await page.waitForTimeout(150);
    const long = await T(() => tpuprof.tooltipText());
    assert.doesNotMatch(long, /Registers\d+ fields/);
    assert.ok(long.length > short.length + 100, short.length + ' -> ' + long.length);
    // uArch rate chart: the real dump has TIU descriptors.
    assert.ok(await page.$$eval('#uarch-chart .hbar', (h) => h.length) > 0);
    noNetwork(rec);
  } finally {
    await b.close();
  }
});
