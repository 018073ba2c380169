/**
 * `npx tsx packages/machine-api/bench/dashboard-load.ts [--machines N] [--runs N]`: how fast the dashboard
 * becomes usable on localhost. Starts the built service with N Noop machines, opens /ui/ in Debian's
 * chromium (a fresh browser context each run, so nothing is cached) and reports, as medians: the page's
 * DOMContentLoaded, and the time until every machine's card is on screen (the page is interactive then:
 * its script ran and its controls are wired). Also prints the first-load bytes, gzipped. Not a test: timing
 * never goes into a test.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { startService } from '../../../bench/service-process.js';
import { DASHBOARD_DIR } from '../src/server/dashboard.js';
import { launchChromium } from '../test/browser.js';

const { values } = parseArgs({
  options: { machines: { type: 'string', default: '20' }, runs: { type: 'string', default: '7' } },
});
const machineCount = Number(values.machines);
const runs = Number(values.runs);

function firstLoadGzipBytes(): number {
  const html = readFileSync(join(DASHBOARD_DIR, 'index.html'));
  const assets = [...html.toString().matchAll(/(?:src|href)="\/ui\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  return assets.reduce(
    (total, asset) => total + gzipSync(readFileSync(join(DASHBOARD_DIR, asset))).length,
    gzipSync(html).length,
  );
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'machine-api-dashboard-bench-'));
const config = Array.from(
  { length: machineCount },
  (_, i) => `[machines.m${String(i).padStart(3, '0')}]\ntype = "Noop"\nnozzle_diameter = 0.4\n`,
).join('\n');
writeFileSync(join(dir, 'machine-api.toml'), config);
// The installed command: its #! line carries the service's node flags.
const cli = new URL('../bin/machine-api.js', import.meta.url).pathname;
const service = await startService(
  cli,
  ['--config', join(dir, 'machine-api.toml'), '--data-dir', dir],
  '/ping',
);
const browser = await launchChromium();
try {
  const loaded: number[] = [];
  const cards: number[] = [];
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service.baseUrl}/ui/`);
    await page
      .locator('article')
      .nth(machineCount - 1)
      .waitFor();
    const timing = (await page.evaluate(`(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      return { domContentLoaded: nav.domContentLoadedEventEnd, now: performance.now() };
    })()`)) as { domContentLoaded: number; now: number };
    loaded.push(timing.domContentLoaded);
    cards.push(timing.now);
    await context.close();
  }
  const kb = (firstLoadGzipBytes() / 1024).toFixed(1);
  process.stdout.write(
    `dashboard, ${machineCount} Noop machines, ${runs} cold loads on localhost:\n` +
      `  first load ${kb} KB gzipped\n` +
      `  DOMContentLoaded median ${median(loaded).toFixed(0)} ms\n` +
      `  all cards shown (interactive) median ${median(cards).toFixed(0)} ms (at most ${Math.max(...cards).toFixed(0)} ms)\n`,
  );
} finally {
  await browser.close();
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
