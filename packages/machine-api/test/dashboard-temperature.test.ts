/**
 * Temperature presets on the dashboard, in a real browser (Debian's chromium via playwright-core) against
 * the real service with simulated machines: a preset button on a card heats that machine, the card of a
 * printing machine has none, and "Pre-heat all PLA" heats every PLA machine and says which it skipped and why.
 * A Bambu printer that refuses commands (Authorization Control) says why on its card.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, outputFolder, screenshot } from './browser.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { BambuPrinterSim } from './sim/bambu.js';

const OUT = outputFolder(import.meta.url);

interface Info {
  temperatures: Record<string, { current: number; target: number | null }>;
}

describe('dashboard, temperature presets', () => {
  let api: MachineApiUnderTest;
  let browser: Browser;
  let page: Page;
  let bambu: BambuPrinterSim;

  beforeAll(async () => {
    browser = await launchChromium();
    bambu = await BambuPrinterSim.start();
    api = await startMachineApi(`
[presets.pla]
tool = 215
bed = 60

[presets.petg]
tool = 240
bed = 80

[machines.alpha]
type = "Noop"
filaments = [{ material = { type = "pla" } }]

[machines.beta]
type = "Noop"
filaments = [{ material = { type = "petg" } }]

[machines.busy]
type = "Noop"
state.state = "running"
filaments = [{ material = { type = "pla" } }]

${bambu.machineToml('x1c')}`);
    await waitFor(
      async () =>
        (await getJson<{ state: { state: string } }>(api.baseUrl, '/machines/x1c')).state.state === 'idle',
    );
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await bambu?.close();
  });

  const card = (id: string) => page.getByRole('article', { name: id, exact: true });
  const target = async (id: string) =>
    (await getJson<Info>(api.baseUrl, `/machines/${id}`)).temperatures.extruder?.target;

  it('heats one machine from its card and shows the new target', async () => {
    await page.goto(`${api.baseUrl}/ui/`);
    await expect.poll(() => page.locator('.connection').textContent()).toBe('Live');
    const presets = card('beta').getByRole('group', { name: 'Temperature presets of beta' });
    expect(await presets.getByRole('button').allTextContents()).toEqual(['PETG', 'PLA', 'Heaters off']);
    await presets.getByRole('button', { name: 'PETG' }).click();
    await expect
      .poll(() => card('beta').locator('[data-field=nozzle]').textContent())
      .toBe('240 °C → 240 °C');
    expect(await target('beta')).toBe(240);
    await presets.getByRole('button', { name: 'Heaters off' }).click();
    await expect.poll(() => target('beta')).toBe(0);
    // A printing machine's heaters belong to its print: no buttons.
    expect(await card('busy').getByRole('group').count()).toBe(0);
  });

  it('pre-heats every PLA machine and names the one it skipped', async () => {
    await page.getByRole('button', { name: 'Pre-heat all PLA' }).click();
    // The Bambu printer's AMS holds PLA too.
    await expect
      .poll(() => page.locator('[data-field=preheat-result]').textContent())
      .toBe(
        'PLA: Heating alpha, x1c. Skipped busy: machine "busy" is printing (running); temperatures are the print\'s until it ends.',
      );
    expect(await target('alpha')).toBe(215);
    expect(await page.getByRole('button', { name: 'Pre-heat all PETG' }).count()).toBe(1);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, OUT, 'preheat');
  });

  it('says on the card why a printer under Authorization Control cannot be controlled', async () => {
    bambu.faults.authorizationControl = true;
    await card('x1c').getByRole('button', { name: 'PETG' }).click();
    await expect
      .poll(() => card('x1c').locator('[data-field=control]').textContent())
      .toMatch(/^Cannot be controlled: the printer refuses control commands .*LAN-only Developer Mode/);
    // Its preset buttons are gone: they could only be refused.
    expect(await card('x1c').getByRole('group').count()).toBe(0);
    await screenshot(page, OUT, 'authorization-control');
  });
});
