/**
 * The dashboard with `auth = "keys"`, in a real browser (Debian's chromium via playwright-core): the page
 * asks for a key, refuses a wrong one, keeps the right one in sessionStorage only, sends prints with it
 * (same-origin writes pass the Origin check), and manages keys on its Keys page (created key shown once,
 * listed, revoked) and notification targets on its Notifications page (added, tested, switched off, removed).
 * Screenshots go to test-results/dashboard-keys/.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../src/keys-command.js';
import { launchChromium, outputFolder, screenshot } from './browser.js';
import { type MachineApiUnderTest, startMachineApi } from './harness.js';

const OUT = outputFolder(import.meta.url);
const KEY = /^mapi_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/;

async function createKey(dataDir: string, name: string, scope: string): Promise<string> {
  let out = '';
  const code = await runKeysCommand(['create'], { dataDir, name, scope, out: (text) => (out += text) });
  expect(code).toBe(0);
  return out.split('\n')[0] ?? '';
}

describe('dashboard with API keys', () => {
  let api: MachineApiUnderTest;
  let browser: Browser;
  let page: Page;
  let adminKey: string;

  beforeAll(async () => {
    browser = await launchChromium();
    api = await startMachineApi(`
[server]
auth = "keys"

[machines.alpha]
type = "Noop"
print_seconds = 0.5
`);
    adminKey = await createKey(api.dataDir, 'workshop-admin', 'read,print,control,admin');
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  const heading = () => page.getByRole('heading', { level: 1 }).textContent();

  it('asks for a key, refuses a wrong one, and keeps the right one for this tab only', async () => {
    await page.goto(`${api.baseUrl}/ui/`);
    await expect.poll(heading).toBe('API key needed');
    await screenshot(page, OUT, 'key-needed');

    await page.getByLabel('API key', { exact: true }).fill(`mapi_${'0'.repeat(16)}_${'A'.repeat(43)}`);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('The service did not accept the key given. Check it, or ask an administrator for a new one.');

    await page.getByLabel('API key', { exact: true }).fill(adminKey);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await expect.poll(heading).toBe('Farm');
    await expect.poll(() => page.getByRole('article', { name: 'alpha' }).count()).toBe(1);
    // The event stream carries the key too.
    await expect.poll(() => page.locator('.connection').textContent()).toBe('Live');
    const storage = (await page.evaluate(
      '({ session: sessionStorage.getItem("machine-api.api-key"), local: localStorage.length, cookies: document.cookie })',
    )) as { session: string | null; local: number; cookies: string };
    expect(storage).toEqual({ session: adminKey, local: 0, cookies: '' });

    // A reload in the same tab keeps it; a new tab (another session) asks again.
    await page.reload();
    await expect.poll(heading).toBe('Farm');
    const other = await browser.newPage();
    await other.goto(`${api.baseUrl}/ui/`);
    await expect.poll(() => other.getByRole('heading', { level: 1 }).textContent()).toBe('API key needed');
    await other.close();
  });

  it('sends a print with the key (a same-origin write)', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Send a print' }).click();
    await page.getByLabel(/^Machine/).selectOption('alpha');
    await page.locator('input[type=file]').setInputFiles({
      name: 'part.gcode',
      mimeType: 'text/x-gcode',
      buffer: Buffer.from('G28\nG1 X10 Y10\n'),
    });
    await page.getByRole('button', { name: 'Send to machine' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Accepted: part on alpha.');
  });

  it('creates a key (shown once), lists it, and revokes it after asking', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Keys' }).click();
    await expect.poll(heading).toBe('API keys');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);

    await page.getByLabel('Name').fill('slicer');
    await page.getByRole('checkbox', { name: /^print/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('[data-field="new-key"]');
    await expect.poll(() => shown.textContent()).toMatch(KEY);
    const slicerKey = (await shown.textContent()) ?? '';
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    expect(await page.locator('tr[data-key="slicer"]').textContent()).toContain('read, print');
    await screenshot(page, OUT, 'keys');

    const machines = () => fetch(`${api.baseUrl}/machines`, { headers: { 'x-api-key': slicerKey } });
    expect((await machines()).status).toBe(200);
    // Listed again (another visit), the key is never shown.
    await page.reload();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    expect(await page.content()).not.toContain(slicerKey);

    await page.locator('tr[data-key="slicer"]').getByRole('button', { name: 'Revoke' }).click();
    await page
      .getByRole('dialog', { name: 'Revoke the key slicer?' })
      .getByRole('button', { name: 'Revoke key' })
      .click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect((await machines()).status).toBe(401);
  });

  it('shows apps asking for a key (OctoPrint app-key flow); Approve gives the app a read + control key', async () => {
    const base = `${api.baseUrl}/octoprint/alpha/`;
    const asked = await fetch(`${base}plugin/appkeys/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ app: 'OctoApp', user: 'phone' }),
    });
    expect(asked.status).toBe(201);
    const location = asked.headers.get('location') as string;
    // The page looks for requests while it is open.
    const request = page.locator('li[data-request]');
    await expect.poll(() => request.count(), { timeout: 10_000 }).toBe(1);
    expect(await request.textContent()).toContain('OctoApp for phone on alpha');
    await screenshot(page, OUT, 'key-request');
    await request.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.locator('tr[data-key="OctoApp"]').count()).toBe(1);
    expect(await page.locator('tr[data-key="OctoApp"]').textContent()).toContain('read, control');
    expect(await request.count()).toBe(0);
    const poll = await fetch(location);
    expect(poll.status).toBe(200);
    const { api_key } = (await poll.json()) as { api_key: string };
    expect((await fetch(`${base}api/job`, { headers: { 'x-api-key': api_key } })).status).toBe(200);
  });

  it('adds a notification target, sends it the test message, switches it off and removes it', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Notifications' }).click();
    await expect.poll(heading).toBe('Notifications');
    await expect.poll(() => page.getByText('No targets yet.').count()).toBe(1);

    await page.getByLabel('Name').fill('phone');
    await page.getByLabel('Kind').selectOption('ntfy');
    await page.getByLabel('Topic URL (https://ntfy.sh/…)').fill('https://ntfy.invalid/farm');
    await page.getByRole('checkbox', { name: 'job.started' }).uncheck();
    await page.getByRole('button', { name: 'Add target' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Target phone added.');
    const row = page.locator('tr[data-target="phone"]');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('td').nth(1).textContent()).toBe('ntfy');
    expect(await row.locator('td').nth(2).textContent()).not.toContain('job.started');
    expect(await page.getByLabel('Name').inputValue()).toBe('');

    await row.getByRole('button', { name: 'Send test' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('Test message for phone recorded; see the log below.');
    const logged = page.locator('tr[data-delivery]');
    await expect.poll(() => logged.count()).toBe(1);
    expect(await logged.locator('td').nth(1).textContent()).toBe('phone');
    expect(await logged.locator('td').nth(2).textContent()).toBe('test');
    await screenshot(page, OUT, 'notifications');

    await row.getByRole('button', { name: 'Turn off' }).click();
    await expect.poll(() => row.getByRole('button', { name: 'Turn on' }).count()).toBe(1);
    const [target] = (await (
      await fetch(`${api.baseUrl}/notifications/targets`, { headers: { 'x-api-key': adminKey } })
    ).json()) as { name: string; enabled: boolean }[];
    expect(target).toMatchObject({ name: 'phone', enabled: false });

    await row.getByRole('button', { name: 'Remove' }).click();
    await page
      .getByRole('dialog', { name: 'Remove the target phone?' })
      .getByRole('button', { name: 'Remove target' })
      .click();
    await expect.poll(() => page.getByText('No targets yet.').count()).toBe(1);
    expect(await logged.count()).toBe(1);
  });
});
