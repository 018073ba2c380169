/**
 * The outbox across `kill -9`: the service as an operator runs it, a burst of notifications to a webhook,
 * the process killed mid-burst, started again on the same data dir. Nothing is lost, and nothing the
 * target answered 2xx for (and the service recorded) is sent again: the only repeat possible is the one
 * attempt under way at the kill (one per target at a time), and it carries the same `webhook-id`.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crash, killChildren, serveDirInChild } from './child-service.js';
import { waitFor } from './harness.js';
import { HttpReceiver } from './notify-receivers.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const BURST = 40;

let dir: string;
let http: HttpReceiver;

beforeAll(async () => {
  http = await HttpReceiver.start();
  // Each answer takes a moment, so the kill lands in the middle of the burst.
  http.answer = () => ({ status: 200, body: '{"ok":true}', delayMs: 20 });
  dir = await mkdtemp(join(tmpdir(), 'machine-api-notify-crash-'));
  await writeFile(
    join(dir, 'machine-api.toml'),
    `[machines.sim]
type = "Noop"

[[notify]]
name = "hook"
kind = "webhook"
url = "${http.url}/hook"
secret = "${SECRET}"
timeout_seconds = 5
retry_seconds = 0.05
`,
  );
});

afterAll(async () => {
  killChildren();
  await http.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the notification outbox across kill -9', () => {
  it('a burst interrupted by kill -9 is delivered in full after the restart, a recorded 2xx never resent', async () => {
    const dataDir = join(dir, 'data');
    const first = await serveDirInChild(dir, dataDir);
    const targets = (await (await fetch(`${first.url}/notifications/targets`)).json()) as { id: string }[];
    const targetId = targets[0]?.id;
    const sent: string[] = [];
    for (let i = 0; i < BURST; i++) {
      const response = await fetch(`${first.url}/notifications/targets/${targetId}/test`, { method: 'POST' });
      expect(response.status).toBe(202);
      sent.push(((await response.json()) as { id: string }).id);
    }
    await waitFor(() => http.to('/hook').length >= 5, { what: 'the first deliveries' });
    await crash(first);
    const beforeRestart = http.to('/hook').length;
    expect(beforeRestart).toBeLessThan(BURST);

    const second = await serveDirInChild(dir, dataDir);
    const log = await waitFor(
      async () => {
        const rows = (await (await fetch(`${second.url}/notifications/deliveries?limit=1000`)).json()) as {
          id: string;
          status: string;
          attempts: number;
        }[];
        return rows.length === BURST && rows.every((row) => row.status === 'delivered') ? rows : undefined;
      },
      { timeoutMs: 60_000, what: 'every delivery to be recorded as delivered' },
    );
    const received = http.to('/hook').map((request) => {
      // Every request is a valid Standard Webhooks message.
      new Webhook(SECRET).verify(request.body.toString('utf8'), request.headers as Record<string, string>);
      return String(request.headers['webhook-id']);
    });
    expect(new Set(received)).toEqual(new Set(sent));
    const repeated = [...new Set(received)].filter((id) => received.indexOf(id) !== received.lastIndexOf(id));
    expect(repeated.length).toBeLessThanOrEqual(1);
    for (const id of repeated) expect(received.filter((r) => r === id)).toHaveLength(2);
    expect(log.filter((row) => row.attempts > 1).length).toBeLessThanOrEqual(1);
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
  });
});
