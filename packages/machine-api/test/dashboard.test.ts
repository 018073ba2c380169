/**
 * The farm dashboard in a real browser (Debian's chromium via playwright-core) against the real service
 * with Noop machines: the page is served at /ui/, shows every machine (an offline one as offline, a failed
 * one with its failure), sends a print through its form, and shows the API's own message when the service
 * refuses. Each test saves a screenshot under test-results/dashboard/.
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIR } from '../src/server/dashboard.js';
import { accessibilityViolations, launchChromium, outputFolder, screenshot } from './browser.js';
import { asciiStl, cube, requirePrusaSlicer } from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';

const PROFILE = fileURLToPath(new URL('../profiles/generic-fdm-0.4.ini', import.meta.url));
const OUT = outputFolder(import.meta.url);

const CONFIG = `
[machines.alpha]
type = "Noop"
manufacturer = "Prusa Research"
model = "MK3S (simulated)"
print_seconds = 2
slicer = { type = "Prusa", config = "${PROFILE}" }
nozzle_diameter = 0.4
[[machines.alpha.filaments]]
material.type = "pla"
name = "Galaxy Black"
color = "222222"

[machines.bravo]
type = "Noop"
model = "Bravo Mk2"
state.state = "offline"

[machines.charlie]
type = "Noop"
state = { state = "failed", message = "thermal runaway on the nozzle" }
`;

interface JobBody {
  id: string;
  status: string;
  job_name: string;
  machine_id: string;
}

describe('dashboard', () => {
  let api: MachineApiUnderTest;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    requirePrusaSlicer();
    browser = await launchChromium();
    api = await startMachineApi(CONFIG);
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  const open = async (
    path: string,
    viewport = { width: 1200, height: 800 },
    colorScheme: 'light' | 'dark' = 'light',
  ) => {
    await page?.close();
    page = await browser.newPage({ viewport, colorScheme });
    await page.goto(`${api.baseUrl}${path}`);
    return page;
  };
  const card = (id: string) => page.getByRole('article', { name: id, exact: true });

  it('is served at /ui/ with a policy that allows only its own scripts', async () => {
    const redirect = await fetch(`${api.baseUrl}/ui`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/ui/');

    for (const path of ['/ui/', '/ui/history', '/ui/jobs/00000000-0000-0000-0000-000000000000']) {
      const res = await fetch(`${api.baseUrl}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const html = await res.text();
      expect(html).toMatch(
        /<script type="module" crossorigin src="\/ui\/assets\/index-[\w-]+\.js"><\/script>/,
      );
      // Nothing is loaded from elsewhere.
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    }

    const missing = await fetch(`${api.baseUrl}/ui/assets/missing.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      request_id: missing.headers.get('x-request-id'),
      error_code: 'NotFound',
      message: 'no file /ui/assets/missing.js',
    });

    // The page's routes are not API operations.
    const document = await getJson<{ paths: Record<string, unknown> }>(api.baseUrl, '/');
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/ui'))).toEqual([]);
  });

  it('loads less than 150 KB gzipped on first load (the page, its entry script and stylesheet)', async () => {
    const html = await readFile(join(DASHBOARD_DIR, 'index.html'));
    const assets = [...html.toString().matchAll(/(?:src|href)="\/ui\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    let total = gzipSync(html).length;
    for (const asset of assets) total += gzipSync(await readFile(join(DASHBOARD_DIR, asset))).length;
    expect(total).toBeLessThan(150 * 1024);
  });

  it('shows one card per machine: make and model, state, filament; offline and failed machines as such', async () => {
    await open('/ui/');
    await expect.poll(() => page.getByRole('article').count()).toBe(3);

    const alpha = card('alpha');
    await expect.poll(() => alpha.textContent()).toContain('Prusa Research MK3S (simulated)');
    expect(await alpha.textContent()).toContain('Idle');
    expect(await alpha.textContent()).toContain('Galaxy Black (PLA)');
    // Temperatures come with the machine list (no event needed for a machine whose readings never change).
    expect(await alpha.locator('[data-field="nozzle"]').textContent()).toBe('25 °C');
    expect(await alpha.locator('[data-field="bed"]').textContent()).toBe('25 °C');
    expect(await alpha.getByRole('button').count()).toBe(0);

    const bravo = card('bravo');
    expect(await bravo.getAttribute('class')).toContain('state-offline');
    expect(await bravo.textContent()).toContain('Offline');
    expect(await bravo.getByRole('status').textContent()).toBe(
      'Not answering. It shows again here as soon as it responds.',
    );

    const charlie = card('charlie');
    expect(await charlie.textContent()).toContain('Failed');
    expect(await charlie.textContent()).toContain('thermal runaway on the nozzle');
    await screenshot(page, OUT, 'overview');
  });

  it('fits a phone: no sideways scrolling, one card per row', async () => {
    await open('/ui/', { width: 390, height: 844 });
    await expect.poll(() => page.getByRole('article').count()).toBe(3);
    // Runs in the page (the test's own types have no DOM).
    const widths = (await page.evaluate(`({
      page: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
      cards: [...document.querySelectorAll('article')].map((card) => card.getBoundingClientRect().left),
    })`)) as { page: number; viewport: number; cards: number[] };
    expect(widths.page).toBeLessThanOrEqual(widths.viewport);
    expect(new Set(widths.cards).size).toBe(1);
    await screenshot(page, OUT, 'overview-phone');
  });

  it('sends an STL chosen in the form to a machine and links to the accepted job', async () => {
    await open('/ui/print');
    await page.getByLabel(/^Machine/).selectOption('alpha');
    await page.locator('input[type=file]').setInputFiles({
      name: 'calibration cube.stl',
      mimeType: 'model/stl',
      buffer: Buffer.from(asciiStl(cube(10))),
    });
    expect(await page.getByLabel('Job name').inputValue()).toBe('calibration cube');
    await page.getByRole('button', { name: 'Send to machine' }).click();

    const accepted = page.getByRole('status');
    await expect
      .poll(() => accepted.textContent(), { timeout: 20_000 })
      .toMatch(/^Accepted: calibration cube on alpha\.$/);
    expect(await page.getByRole('progressbar', { name: 'Upload' }).getAttribute('value')).toBe('1');
    const href = await accepted.getByRole('link').getAttribute('href');
    const id = href?.replace('/ui/jobs/', '') ?? '';
    const job = await waitFor(
      async () => {
        const body = await getJson<JobBody>(api.baseUrl, `/jobs/${id}`);
        return body.status === 'completed' && body;
      },
      { what: 'the job to complete' },
    );
    expect(job).toMatchObject({ job_name: 'calibration cube', machine_id: 'alpha' });
    await screenshot(page, OUT, 'print-accepted');

    await accepted.getByRole('link').click();
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent())
      .toBe('calibration cube Completed');
    expect(await page.locator('dl').textContent()).toContain('calibration cube.stl');
    await screenshot(page, OUT, 'job');
  });

  it("shows the API's own message when the service refuses a print", async () => {
    const form = new FormData();
    form.append('params', JSON.stringify({ machine_id: 'bravo', job_name: 'nope' }));
    form.append('file', new Blob(['G28\n']), 'nope.gcode');
    const refusal = await fetch(`${api.baseUrl}/print`, { method: 'POST', body: form });
    expect(refusal.status).toBe(503);
    const { message } = (await refusal.json()) as { message: string };

    await open('/ui/print');
    await page.getByLabel(/^Machine/).selectOption('bravo');
    await page.locator('input[type=file]').setInputFiles({
      name: 'nope.gcode',
      mimeType: 'text/x-gcode',
      buffer: Buffer.from('G28\n'),
    });
    await page.getByRole('button', { name: 'Send to machine' }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toBe(message);
    await screenshot(page, OUT, 'print-refused');
  });

  it('lists jobs in the history, filtered by status', async () => {
    await open('/ui/history');
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('calibration cube');
    expect(await rows.first().textContent()).toContain('Completed');
    // The totals of the window, from GET /stats: one print, completed.
    await expect.poll(() => page.locator('[data-usage]').textContent()).toContain('1 (100 % completed)');
    await page.getByLabel('Status').selectOption('failed');
    await expect.poll(() => page.getByText('No jobs match.').count()).toBe(1);
    await page.getByLabel('Status').selectOption('completed');
    await expect.poll(() => rows.count()).toBe(1);
    // The date range goes to the API as created_after / created_before (local midnights).
    const asked: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/jobs') asked.push(url.search);
    });
    await page.getByLabel('From', { exact: true }).fill('2001-01-01');
    await page.getByLabel('To', { exact: true }).fill('2001-01-02');
    await expect.poll(() => page.getByText('No jobs match.').count()).toBe(1);
    expect(asked.at(-1)).toMatch(/created_after=(2001-01-01|2000-12-31)T[^&]+&created_before=2001-01-0[23]T/);
    await page.getByLabel('To', { exact: true }).fill('');
    await page.getByLabel('From', { exact: true }).fill('');
    await expect.poll(() => rows.count()).toBe(1);
    await screenshot(page, OUT, 'history');
  });

  it("passes axe's WCAG 2.1 AA checks (names, labels, contrast) on every page, light and dark", async () => {
    const [job] = await getJson<JobBody[]>(api.baseUrl, '/jobs');
    const pages = [
      '/ui/',
      '/ui/print',
      '/ui/history',
      `/ui/jobs/${job!.id}`,
      '/ui/machines/alpha',
      '/ui/keys',
    ];
    for (const scheme of ['light', 'dark'] as const) {
      for (const path of pages) {
        await open(path, { width: 1200, height: 800 }, scheme);
        await expect.poll(() => page.getByRole('heading', { level: 1 }).count()).toBe(1);
        await expect.poll(() => page.locator('[aria-busy="true"]').count()).toBe(0);
        expect(await accessibilityViolations(page), `${path} (${scheme})`).toEqual([]);
      }
    }
    await screenshot(page, OUT, 'keys-dark');
    // Twelve page loads with a full axe run each: more than one test's default time on a busy machine.
  }, 120_000);
});
