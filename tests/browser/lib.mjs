// lib.mjs — shared helpers of the result.html browser tests and benchmark: launching Debian's
// headless chromium through playwright-core with a fresh profile, and opening a page from
// file:// while recording console errors, page errors, dialogs and every network request.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launch() {
  const dir = mkdtempSync(join(tmpdir(), 'tpuprof-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Opens `file` and returns { page, url, errors, requests, dialogs } once the page is ready
// (opts.noReady: once the first timeline is drawn).
export async function open(context, file, opts = {}) {
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  const rec = { page, url, errors: [], requests: [], dialogs: [] };
  page.on('console', (m) => { if (m.type() === 'error') rec.errors.push('console: ' + m.text()); });
  page.on('pageerror', (e) => rec.errors.push('pageerror: ' + e.message));
  page.on('request', (r) => rec.requests.push(r.url()));
  page.on('dialog', async (d) => { rec.dialogs.push(d.type() + ': ' + d.message()); await d.dismiss(); });
  await page.goto(url, { waitUntil: 'load', timeout: opts.timeout || 60000 });
  // First the timeline (drawn from the writer's level of detail), then every lane decoded.
  await page.waitForFunction(() => window.tpuprof && window.tpuprof.frames() > 0, null, { timeout: opts.timeout || 60000 });
  if (!opts.noReady) await page.waitForFunction(() => window.tpuprof.ready(), null, { timeout: opts.timeout || 60000 });
  return rec;
}

// An independent decoder of the page's binary integer columns (src/writers/html/html.c put_col):
// mode letter r/d/l/m (R/D/L/M: values beyond int32), then base64 of zigzag LEB128 varints;
// d = differences, l/m = (value, run length) pairs of values/differences. A number stands for
// the same value n times; undefined for 0. Returns a plain array of n numbers.
export function decodeColumn(v, n) {
  if (typeof v !== 'string') return new Array(n).fill(v || 0);
  const mode = v[0].toLowerCase();
  const bytes = Buffer.from(v.slice(1), 'base64');
  const vals = [];
  let acc = 0n, shift = 0n;
  for (const b of bytes) {
    acc |= BigInt(b & 127) << shift;
    shift += 7n;
    if (b & 128) continue;
    vals.push(Number((acc >> 1n) ^ -(acc & 1n)));
    acc = 0n; shift = 0n;
  }
  let seq = vals;
  if (mode === 'l' || mode === 'm') {
    seq = [];
    for (let i = 0; i + 1 < vals.length; i += 2) for (let k = 0; k < vals[i + 1]; k++) seq.push(vals[i]);
  }
  if (mode === 'd' || mode === 'm') { let p = 0; seq = seq.map((x) => (p += x)); }
  if (seq.length !== n) throw new Error('column has ' + seq.length + ' values, want ' + n);
  return seq;
}
