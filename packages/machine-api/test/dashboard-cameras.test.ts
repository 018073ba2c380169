/**
 * The dashboard's cameras in a real browser (Debian's chromium): a snapshot tile on each machine card,
 * the live stream on the machine page, the camera wall, and a finished job's photo, all fetched with the
 * session's API key (`auth = "keys"`). Screenshots go to test-results/dashboard-cameras/.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../src/keys-command.js';
import { accessibilityViolations, launchChromium, outputFolder, screenshot } from './browser.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { HttpCamera } from './sim/http-camera.js';

const OUT = outputFolder(import.meta.url);

describe('dashboard cameras', () => {
  let camera: HttpCamera;
  let api: MachineApiUnderTest;
  let browser: Browser;
  let page: Page;
  let key = '';

  beforeAll(async () => {
    browser = await launchChromium();
    camera = await HttpCamera.start({ frameIntervalMs: 100 });
    api = await startMachineApi(`
[server]
auth = "keys"

[machines.prusa]
type = "Noop"
model = "MK4 (simulated)"
print_seconds = 0.3
camera = { snapshot_url = "${camera.url}/snapshot.jpg", stream_url = "${camera.url}/stream.mjpg" }

[machines.voron]
type = "Noop"
model = "Voron 2.4 (simulated)"
camera = { snapshot_url = "${camera.url}/snapshot.jpg" }

[machines.blind]
type = "Noop"
model = "No camera"
`);
    await runKeysCommand(['create'], {
      dataDir: api.dataDir,
      name: 'wall',
      scope: 'admin',
      out: (text) => {
        key += text;
      },
    });
    key = key.split('\n')[0] ?? '';
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await camera?.close();
  });

  const open = async (path: string) => {
    await page?.close();
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    // The key form stores the key for the tab; set it the same way before the page's script runs.
    await page.addInitScript(`sessionStorage.setItem('machine-api.api-key', ${JSON.stringify(key)})`);
    await page.goto(`${api.baseUrl}${path}`);
    return page;
  };
  /**
   * Waits until every image matching `selector` shows a decoded camera frame (64 px wide). Polled with
   * `evaluate` (run through the DevTools protocol): `waitForFunction` would need the page to allow eval.
   */
  const decoded = (selector: string) =>
    waitFor(
      () =>
        page.evaluate(`(() => {
          const images = [...document.querySelectorAll(${JSON.stringify(selector)})];
          return images.length > 0 && images.every((img) => img.complete && img.naturalWidth === 64);
        })()`) as Promise<boolean>,
      { timeoutMs: 15_000, what: `${selector} to show a camera frame` },
    );

  it('shows a snapshot tile on each card with a camera, and none on the others', async () => {
    await open('/ui/');
    await decoded('article img.camera.tile');
    expect(await page.locator('article[data-machine="prusa"] img.camera').getAttribute('alt')).toBe(
      'Camera of prusa',
    );
    expect(await page.locator('article[data-machine="voron"] img.camera').count()).toBe(1);
    expect(await page.locator('article[data-machine="blind"] img.camera').count()).toBe(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, OUT, 'farm-with-camera-tiles');
  });

  it('shows the live stream on the machine page, frame after frame', async () => {
    await open('/ui/machines/prusa');
    await decoded('figure.live img.camera');
    const first = await page.locator('figure.live img.camera').getAttribute('src');
    await waitFor(async () => (await page.locator('figure.live img.camera').getAttribute('src')) !== first, {
      timeoutMs: 15_000,
      what: 'the next frame of the live stream',
    });
    expect(camera.streamsOpened).toBeGreaterThanOrEqual(1);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, OUT, 'machine-page-live-stream');
  });

  it('shows every camera on the camera wall', async () => {
    await open('/ui/cameras');
    await decoded('.wall img.camera');
    expect(
      await page
        .locator('.wall figure')
        .evaluateAll((cells) => cells.map((c) => c.getAttribute('data-machine'))),
    ).toEqual(['prusa', 'voron']);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, OUT, 'camera-wall');
  });

  it('shows the photo of a finished job on its page', async () => {
    const response = await fetch(`${api.baseUrl}/print`, {
      method: 'POST',
      headers: { 'x-api-key': key },
      body: (() => {
        const form = new FormData();
        form.append('params', JSON.stringify({ machine_id: 'prusa', job_name: 'benchy' }));
        form.append('file', new Blob(['G28\n']), 'benchy.gcode');
        return form;
      })(),
    });
    expect(response.status).toBe(200);
    const { job_id: id } = (await response.json()) as { job_id: string };
    await waitFor(
      async () =>
        (await fetch(`${api.baseUrl}/jobs/${id}/photo`, { headers: { 'x-api-key': key } })).status === 200,
      { what: 'the job photo' },
    );
    await open(`/ui/jobs/${id}`);
    await decoded('img.camera.photo');
    expect(await page.locator('img.camera.photo').getAttribute('alt')).toBe(
      'The bed of prusa when “benchy” ended',
    );
    await screenshot(page, OUT, 'job-photo');
  });
});
