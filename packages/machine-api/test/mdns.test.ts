/**
 * Discoverable on the network: a real mDNS query (multicast-dns on 224.0.0.251:5353) finds the service as
 * `_machine-api._tcp` with TXT `path=/`, and every OctoPrint base as `_octoprint._tcp` with its `path`;
 * closing the service sends goodbye records (TTL 0), so no responder is left behind.
 */

import { hostname } from 'node:os';
import makeMdns from 'multicast-dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';

interface Found {
  port?: number;
  txt?: Record<string, string>;
  /** TTL of the last PTR record seen for the instance (0 = goodbye). */
  ttl?: number;
}

describe('mDNS advertisement', () => {
  let api: MachineApiUnderTest;
  let port: number;
  let querier: ReturnType<typeof makeMdns>;
  const found = new Map<string, Found>();

  beforeAll(async () => {
    querier = makeMdns();
    querier.on('response', (packet) => {
      for (const record of [...packet.answers, ...(packet.additionals ?? [])]) {
        if (record.type === 'PTR' && /^_(machine-api|octoprint)\._tcp\.local$/.test(record.name)) {
          const entry = found.get(record.data as string) ?? {};
          entry.ttl = record.ttl;
          found.set(record.data as string, entry);
        } else if (record.type === 'SRV') {
          const entry = found.get(record.name) ?? {};
          entry.port = (record.data as { port: number }).port;
          found.set(record.name, entry);
        } else if (record.type === 'TXT') {
          const entry = found.get(record.name) ?? {};
          const strings = (record.data as Buffer[]).map((b) => b.toString('utf8'));
          entry.txt = Object.fromEntries(
            strings.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]),
          );
          found.set(record.name, entry);
        }
      }
    });
    api = await startMachineApi(`
[server]
mdns = true

[machines.sim]
type = "Noop"
`);
    port = Number(new URL(api.baseUrl).port);
  });
  afterAll(async () => {
    await api.close();
    await new Promise<void>((resolve) => querier.destroy(() => resolve()));
  });

  const instance = (label: string, type: string) => `${label}._${type}._tcp.local`;

  it('answers a PTR query for _machine-api._tcp with SRV port and TXT path=/, and one _octoprint._tcp base per machine with its uuid', async () => {
    const where = `${hostname()}:${port}`;
    const main = instance(`machine-api ${where}`, 'machine-api');
    const sim = instance(`sim (machine-api ${where})`, 'octoprint');
    await waitFor(
      () => {
        querier.query({
          questions: [
            { name: '_machine-api._tcp.local', type: 'PTR' },
            { name: '_octoprint._tcp.local', type: 'PTR' },
          ],
        });
        return found.get(main)?.txt !== undefined && found.get(sim)?.txt !== undefined;
      },
      {
        intervalMs: 300,
        timeoutMs: 15_000,
        what: 'mDNS answers (multicast to 224.0.0.251:5353 must work on this host)',
      },
    );
    expect(found.get(main)).toMatchObject({ port, txt: { path: '/' } });
    expect(found.get(sim)).toMatchObject({
      port,
      txt: { path: '/octoprint/sim/', api: '0.1', version: '1.10.0', vendor: 'machine-api' },
    });
    const queue = instance(`queue (machine-api ${where})`, 'octoprint');
    await waitFor(
      () => {
        querier.query({ questions: [{ name: '_octoprint._tcp.local', type: 'PTR' }] });
        return found.get(queue)?.txt !== undefined;
      },
      { intervalMs: 300, timeoutMs: 15_000, what: 'the queue base over mDNS' },
    );
    expect(found.get(queue)).toMatchObject({ port, txt: { path: '/octoprint/queue/' } });
    // The advertised base works as a slicer would use it: base + "api/version".
    const version = await fetch(`http://127.0.0.1:${port}${found.get(sim)?.txt?.path}api/version`);
    expect(version.status).toBe(200);
    // Home Assistant's zeroconf discovery takes TXT `uuid` as the device id: the settings' upnpUuid.
    const settings = (await (await fetch(`http://127.0.0.1:${port}/octoprint/sim/api/settings`)).json()) as {
      plugins: { discovery: { upnpUuid: string } };
    };
    expect(found.get(sim)?.txt?.uuid).toBe(settings.plugins.discovery.upnpUuid);
    expect(found.get(queue)?.txt?.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(found.get(queue)?.txt?.uuid).not.toBe(found.get(sim)?.txt?.uuid);
  });

  it('sends goodbye records when the service closes', async () => {
    const sim = instance(`sim (machine-api ${hostname()}:${port})`, 'octoprint');
    await api.close();
    await waitFor(() => found.get(sim)?.ttl === 0, { timeoutMs: 10_000, what: 'an mDNS goodbye (TTL 0)' });
  });
});
