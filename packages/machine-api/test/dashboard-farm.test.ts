/**
 * The dashboard live, in a real browser (Debian's chromium via playwright-core), against the real service
 * with Noop machines and simulated Moonraker printers: an STL uploaded through the page shows on its card as
 * printing, then complete, from the event stream alone; "Bed cleared" lets the next queued job start; a
 * print is stopped after a confirmation; an unreachable printer is shown offline; the queue page changes a
 * priority and cancels; the machine page charts temperatures; a dropped stream resumes with Last-Event-ID.
 * Each test saves a screenshot under test-results/dashboard-farm/.
 */

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { Agent, FormData as UndiciFormData, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, outputFolder, screenshot } from './browser.js';
import { asciiStl, cube, requirePrusaSlicer } from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { MoonrakerSim } from './sim/moonraker.js';

const NOOP_PROFILE = fileURLToPath(new URL('../profiles/generic-fdm-0.4.ini', import.meta.url));
const MOON_PROFILE = fileURLToPath(new URL('../profiles/elegoo-neptune4.ini', import.meta.url));
const OUT = outputFolder(import.meta.url);
const GCODE = 'G28 ; home\nG1 X10 Y10 Z0.2 F3000\nG1 X20 E1\n';

interface JobBody {
  id: string;
  status: string;
  job_name: string;
  machine_id: string | null;
  position: number | null;
  priority: number;
}

describe('dashboard, live farm', () => {
  let api: MachineApiUnderTest;
  let moon: MoonrakerSim;
  let ghost: MoonrakerSim;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    requirePrusaSlicer();
    browser = await launchChromium();
    // moon prints by itself: a twentieth of the file every 250 ms (5 s a print).
    moon = await MoonrakerSim.start({ autoProgress: { tickMs: 250, step: 0.05 } });
    ghost = await MoonrakerSim.start();
    await ghost.refuse();
    const moonraker = (id: string, sim: MoonrakerSim, material: string) => `
[machines.${id}]
type = "Moonraker"
endpoint = "${sim.endpoint}"
variant = "ElegooNeptune4"
slicer = { type = "Prusa", config = "${MOON_PROFILE}" }
nozzle_diameter = 0.4
timeout_seconds = 1
poll_interval_seconds = 0.2
filaments = [{ material = { type = "${material}" }, name = "Sunlu ${material.toUpperCase()}" }]
loaded_filament_idx = 0
`;
    api = await startMachineApi(`
[server]
status_timeout_ms = 1000
observe_interval_ms = 200

[machines.alpha]
type = "Noop"
manufacturer = "Prusa Research"
model = "MK3S (simulated)"
print_seconds = 600
slicer = { type = "Prusa", config = "${NOOP_PROFILE}" }
nozzle_diameter = 0.4
filaments = [{ material = { type = "pla" }, name = "Galaxy Black", color = "222222" }]
loaded_filament_idx = 0
${moonraker('moon', moon, 'petg')}
${moonraker('ghost', ghost, 'abs')}
`);
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await moon?.close();
    await ghost?.close();
  });

  const open = async (path: string) => {
    if (!page) page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(`${api.baseUrl}${path}`);
    await expect.poll(() => page.locator('.connection').textContent()).toBe('Live');
  };
  /** Follows a link of the page's navigation (the page stays loaded; its event stream stays open). */
  const navigate = (name: string) =>
    page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
  const card = (id: string) => page.getByRole('article', { name: id, exact: true });
  const badge = (id: string) => card(id).locator('.badge').first().textContent();
  /** Polls often enough to see a state that lasts a few seconds. */
  const POLL = { timeout: 20_000, intervals: [100] };
  const job = (id: string) => getJson<JobBody>(api.baseUrl, `/jobs/${id}`);
  const jobReaches = (id: string, status: string) =>
    waitFor(async () => (await job(id)).status === status, { what: `job ${id} ${status}` });

  it('shows an unreachable printer as offline', async () => {
    await open('/ui/');
    await expect.poll(() => badge('ghost')).toBe('Offline');
    expect(await card('ghost').getByRole('status').textContent()).toContain('Not answering');
    expect(await card('ghost').getByRole('button').count()).toBe(0);
  });

  it('follows an STL uploaded through the page: printing, then complete, live from the events', async () => {
    await navigate('Send a print');
    await page.getByLabel(/^Machine/).selectOption('moon');
    await page.locator('input[type=file]').setInputFiles({
      name: 'cube.stl',
      mimeType: 'model/stl',
      buffer: Buffer.from(asciiStl(cube(10))),
    });
    await page.getByRole('button', { name: 'Send to machine' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent(), { timeout: 20_000 })
      .toMatch(/^Accepted: cube on moon\.$/);

    await navigate('Farm');
    await expect.poll(() => badge('moon'), POLL).toBe('Printing');
    await screenshot(page, OUT, 'printing');
    // The README's picture of the overview (packages/machine-api/ui/overview.png is a copy of it).
    await page.locator('main').screenshot({ path: join(OUT, 'readme-overview.png') });
    await expect.poll(() => card('moon').getByRole('link', { name: 'cube' }).count(), POLL).toBe(1);
    await expect.poll(() => badge('moon'), POLL).toBe('Print finished');
    expect(await card('moon').textContent()).toContain('Waiting for the bed to be cleared');
    expect(await card('moon').getByRole('button', { name: 'Bed cleared' }).count()).toBe(1);
    await screenshot(page, OUT, 'complete');
  });

  it('starts the next queued job once "Bed cleared" is pressed', async () => {
    // Queued through the page for any machine with PETG loaded: only moon has it, and its bed is not clear.
    await navigate('Send a print');
    await page.getByLabel('Any machine with…').check();
    await page.getByLabel('Material').selectOption('petg');
    await page
      .locator('input[type=file]')
      .setInputFiles({ name: 'bracket.gcode', mimeType: 'text/x-gcode', buffer: Buffer.from(GCODE) });
    await page.getByRole('button', { name: 'Add to queue' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toMatch(/^Queued: bracket, position 1\.$/);

    await navigate('Farm');
    expect(await badge('moon')).toBe('Print finished');
    await card('moon').getByRole('button', { name: 'Bed cleared' }).click();
    await expect.poll(() => badge('moon'), POLL).toBe('Printing');
    await expect.poll(() => card('moon').getByRole('link', { name: 'bracket' }).count(), POLL).toBe(1);
    await screenshot(page, OUT, 'next-job-started');
    await expect.poll(() => badge('moon'), POLL).toBe('Print finished');
  });

  it('stops a print after asking, and the job ends cancelled', async () => {
    const res = await postPrint(api.baseUrl, { machineId: 'alpha', jobName: 'long print', file: GCODE });
    expect(res.status).toBe(200);
    const { job_id } = (await res.json()) as { job_id: string };
    await expect.poll(() => badge('alpha'), POLL).toBe('Printing');
    await card('alpha').getByRole('button', { name: 'Stop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop the print on alpha?' });
    expect(await dialog.textContent()).toContain('“long print” ends as cancelled and cannot be resumed');
    await screenshot(page, OUT, 'stop-confirmation');
    await dialog.getByRole('button', { name: 'Stop print' }).click();
    await jobReaches(job_id, 'cancelled');
    await expect.poll(() => badge('alpha')).not.toBe('Printing');
    await expect.poll(() => card('alpha').locator('[data-field="awaiting-clear"]').count(), POLL).toBe(1);
    expect(await card('alpha').locator('[data-field="ready"]').textContent()).toBe('No');
    await screenshot(page, OUT, 'stopped');
    // The stopped part is still on the bed until someone says otherwise.
    await card('alpha').getByRole('button', { name: 'Bed cleared' }).click();
    await expect
      .poll(() => card('alpha').locator('[data-field="ready"]').textContent())
      .toBe('Yes, takes the next job');
  });

  it('orders, re-prioritises and cancels waiting jobs on the queue page', async () => {
    const queue = async (name: string, priority: number) => {
      const form = new FormData();
      form.append('params', JSON.stringify({ job_name: name, material: 'petg', priority }));
      form.append('file', new Blob([GCODE]), `${name}.gcode`);
      const res = await fetch(`${api.baseUrl}/queue`, { method: 'POST', body: form });
      expect(res.status).toBe(201);
      return ((await res.json()) as JobBody).id;
    };
    const first = await queue('first', 0);
    const second = await queue('second', 0);
    await navigate('Queue');
    const rows = page.locator('tbody tr');
    await expect
      .poll(() => rows.allTextContents())
      .toEqual([expect.stringMatching(/^1first.*PETG.*moon/), expect.stringMatching(/^2second.*PETG.*moon/)]);
    await page.getByLabel('Priority of second').fill('5');
    await page.locator(`tr[data-job="${second}"]`).getByRole('button', { name: 'Set' }).click();
    await expect
      .poll(() => rows.allTextContents())
      .toEqual([expect.stringMatching(/^1second/), expect.stringMatching(/^2first/)]);
    expect((await job(second)).priority).toBe(5);
    await screenshot(page, OUT, 'queue');

    await page.locator(`tr[data-job="${first}"]`).getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel job' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect((await job(first)).status).toBe('cancelled');

    await page.locator(`li[data-job="${first}"]`).getByRole('button', { name: 'Requeue' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    expect((await job(first)).status).toBe('queued');
    for (const id of [first, second]) {
      expect((await fetch(`${api.baseUrl}/jobs/${id}/cancel`, { method: 'POST' })).status).toBe(200);
    }
  });

  it("charts the machine's temperatures and lists its state changes", async () => {
    await navigate('Farm');
    await card('alpha').getByRole('link', { name: 'alpha' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Machine alpha');
    const chart = page.getByRole('img', { name: 'Nozzle and bed temperatures of alpha over the last hour' });
    await expect.poll(() => chart.locator('canvas').count()).toBe(1);
    await expect
      .poll(() => page.locator('.timeline li').allTextContents())
      .toEqual(
        expect.arrayContaining([expect.stringContaining('Printing'), expect.stringContaining('Idle')]),
      );
    await screenshot(page, OUT, 'machine');
  });

  it('replays on a machine page opened later what the service kept: earlier states and readings', async () => {
    const later = await browser.newPage();
    try {
      await later.goto(`${api.baseUrl}/ui/machines/alpha`);
      // Printing ended before this page existed: only the service's history can tell it.
      await expect
        .poll(() => later.locator('.timeline li').allTextContents())
        .toEqual(expect.arrayContaining([expect.stringContaining('Printing')]));
      const kept = await getJson<{ type: string }[]>(
        api.baseUrl,
        '/events/history?machine_id=alpha&types=machine.temperatures',
      );
      expect(kept.length).toBeGreaterThan(1);
      const chart = later.getByRole('img', {
        name: 'Nozzle and bed temperatures of alpha over the last hour',
      });
      await expect
        .poll(async () => Number(await chart.getAttribute('data-samples')))
        .toBeGreaterThanOrEqual(kept.length);
      await screenshot(later, OUT, 'machine-replayed');
    } finally {
      await later.close();
    }
  });

  it('resumes the event stream with Last-Event-ID after the connection drops', async () => {
    await navigate('Farm');
    const resumed = new Promise<string | undefined>((resolve) => {
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/events') resolve(request.headers()['last-event-id']);
      });
    });
    // Every open connection of the service is cut, the page's event stream with it.
    api.service.app.server.closeAllConnections();
    // This process's pooled connections were cut too: its next requests go over connections of their own.
    const fresh = new Agent();
    try {
      const form = new UndiciFormData();
      form.append('params', JSON.stringify({ machine_id: 'alpha', job_name: 'while away' }));
      form.append('file', new Blob([GCODE]), 'design.gcode');
      const res = await undiciFetch(`${api.baseUrl}/print`, {
        method: 'POST',
        body: form,
        dispatcher: fresh,
      });
      expect(res.status).toBe(200);
      expect(await resumed).toMatch(/^\d+$/);
      await expect.poll(() => badge('alpha'), POLL).toBe('Printing');
      await expect.poll(() => card('alpha').getByRole('link', { name: 'while away' }).count(), POLL).toBe(1);
      const { job_id } = (await res.json()) as { job_id: string };
      const cancel = await undiciFetch(`${api.baseUrl}/jobs/${job_id}/cancel`, {
        method: 'POST',
        dispatcher: fresh,
      });
      expect(cancel.status).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
