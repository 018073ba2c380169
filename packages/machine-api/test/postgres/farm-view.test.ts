/**
 * Any instance answers for the whole farm (machine-api-postgres project only): instance a lists instance
 * b's machines tagged with b, forwards actions on them to b (the same status and body as b answers, the
 * caller's key checked as b checks it, never a second hop), and lists them offline with b named once b
 * is killed (`kill -9`: no goodbye, the heartbeat just stops), until b is back.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FarmMembership } from '../../src/farm/instances.js';
import { FarmMachinePublisher } from '../../src/farm/publisher.js';
import { openJobDatabase } from '../../src/jobs/database.js';
import { runKeysCommand } from '../../src/keys-command.js';
import { type ChildService, crash, serveInChild } from '../child-service.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from '../harness.js';
import { createPostgresDatabase } from '../test-database.js';

function config(instance: string, machines: string[], server: string[] = []): string {
  return [
    '[server]',
    ...server,
    `instance = "${instance}"`,
    'auth = "keys"',
    'heartbeat_timeout_seconds = 1',
    '[presets.pla]',
    'tool = 215',
    'bed = 60',
    ...machines.flatMap((id) => [`[machines.${id}]`, 'type = "Noop"', 'print_seconds = 0.3']),
  ].join('\n');
}

let databaseUrl: string;
let dir: string;
let a: MachineApiUnderTest;
let b: ChildService | undefined;
let admin: string;
let reader: string;

/** Starts instance b as its own process (`machine-api serve`), so that it can be killed as a host dies. */
async function serveB(): Promise<ChildService> {
  return serveInChild({ config: join(dir, 'b.toml'), dataDir: join(dir, 'b-data'), databaseUrl });
}

async function createKey(name: string, scope: string): Promise<string> {
  let out = '';
  const code = await runKeysCommand(['create'], {
    dataDir: a.dataDir,
    databaseUrl,
    name,
    scope,
    out: (text) => (out += text),
  });
  expect(code).toBe(0);
  return out.split('\n')[0] ?? '';
}

async function call(base: string, path: string, key: string, init: RequestInit = {}) {
  const response = await fetch(`${base}${path}`, {
    ...init,
    headers: { 'x-api-key': key, ...(init.headers as Record<string, string>) },
  });
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    requestId: response.headers.get('x-request-id'),
    body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
  };
}

/** An answer without its request id (each instance numbers its own requests). */
function withoutRequestId(answer: Awaited<ReturnType<typeof call>>) {
  const { request_id: _id, ...body } = answer.body ?? {};
  return { status: answer.status, type: answer.type, body };
}

type Listed = { id: string; instance?: string; state: { state: string } };

beforeAll(async () => {
  databaseUrl = await createPostgresDatabase();
  dir = await mkdtemp(join(tmpdir(), 'machine-api-farm-view-'));
  await writeFile(join(dir, 'b.toml'), config('b', ['b1', 'b2']));
  // a's upload limit is small, to show that it bounds what a forwards.
  a = await startMachineApi(config('a', ['a1', 'c1'], ['max_upload_mib = 1']), { databaseUrl });
  b = await serveB();
  admin = await createKey('farm-admin', 'read,print,control,admin');
  reader = await createKey('reader', 'read');
});

afterAll(async () => {
  if (b) await crash(b);
  await a?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('any instance answers for the whole farm', () => {
  it("lists b's machines on a, tagged with b, as b answers them", async () => {
    const listed = await waitFor(
      async () => {
        const machines = (await call(a.baseUrl, '/machines', reader)).body as unknown as Listed[];
        return machines.length === 4 && machines.every((m) => m.state.state === 'idle') && machines;
      },
      { timeoutMs: 10_000, what: "a to list b's machines idle" },
    );
    expect(listed.map(({ id, instance }) => ({ id, instance }))).toEqual([
      { id: 'a1', instance: 'a' },
      { id: 'b1', instance: 'b' },
      { id: 'b2', instance: 'b' },
      { id: 'c1', instance: 'a' },
    ]);
    const onB = await call(b!.url, '/machines/b1', reader);
    expect(listed[1]).toEqual(onB.body);
    expect(await call(a.baseUrl, '/machines/b1', reader)).toMatchObject({ status: 200, body: onB.body });
  });

  it("forwards an action on b's machine to b: the same status and body, the caller's key checked as b checks it", async () => {
    // Nothing prints on b1: b refuses to pause it, and a answers exactly that.
    const viaA = await call(a.baseUrl, '/machines/b1/pause', admin, { method: 'POST' });
    const onB = await call(b!.url, '/machines/b1/pause', admin, { method: 'POST' });
    expect(viaA.status).toBe(409);
    expect(withoutRequestId(viaA)).toEqual(withoutRequestId(onB));
    // The answer is b's own: its request id in the header and the body agree.
    expect(viaA.body?.request_id).toBe(viaA.requestId);

    // A body goes along: a temperature change is carried out by b.
    const heat = {
      method: 'POST',
      body: JSON.stringify({ tool: 200, bed: 60 }),
      headers: { 'content-type': 'application/json' },
    };
    const heated = await call(a.baseUrl, '/machines/b2/temperature', admin, heat);
    expect(heated.status).toBe(200);
    expect(heated.body).toMatchObject({
      id: 'b2',
      instance: 'b',
      temperatures: { extruder: { target: 200 }, bed: { target: 60 } },
    });

    // A read-only key is refused as b refuses it; a wrong key too.
    const refusedViaA = await call(a.baseUrl, '/machines/b1/stop', reader, { method: 'POST' });
    const refusedOnB = await call(b!.url, '/machines/b1/stop', reader, { method: 'POST' });
    expect(refusedViaA.status).toBe(403);
    expect(withoutRequestId(refusedViaA)).toEqual(withoutRequestId(refusedOnB));
    expect((await call(a.baseUrl, '/machines/b1/stop', 'nope', { method: 'POST' })).status).toBe(401);

    // The OctoPrint base of b's machine answers through a as on b.
    const printerViaA = await call(a.baseUrl, '/octoprint/b1/api/printer', reader);
    const printerOnB = await call(b!.url, '/octoprint/b1/api/printer', reader);
    expect(printerViaA.status).toBe(200);
    expect(printerViaA.body).toEqual(printerOnB.body);
  });

  it("prints on b's machine through a, and confirms its bed clear through a", async () => {
    const form = new FormData();
    form.append('params', JSON.stringify({ machine_id: 'b2', job_name: 'via-a' }));
    form.append('file', new Blob(['G28\nG1 X10 Y10\n']), 'part.gcode');
    const printed = await call(a.baseUrl, '/print', admin, { method: 'POST', body: form });
    expect(printed.status).toBe(200);
    expect(printed.body).toEqual({
      job_id: expect.any(String),
      parameters: { machine_id: 'b2', job_name: 'via-a' },
    });
    // b ran it: the job is b's, and b2's bed then waits for a confirmation, which a passes on.
    const waiting = await waitFor(
      async () => {
        const machine = (await call(a.baseUrl, '/machines/b2', reader)).body;
        return machine?.awaiting_clear_since !== null && machine?.current_job === null && machine;
      },
      { timeoutMs: 10_000, what: "b2's print to finish, as a lists it" },
    );
    expect(waiting).toMatchObject({ instance: 'b', ready: false });
    const cleared = await call(a.baseUrl, '/machines/b2/clear', admin, { method: 'POST' });
    expect(cleared).toMatchObject({
      status: 200,
      body: { id: 'b2', instance: 'b', awaiting_clear_since: null, state: { state: 'idle' } },
    });
  });

  it('streams an upload under an OctoPrint base through a to b, within the upload limit', async () => {
    const form = new FormData();
    form.append('file', new Blob(['G28\nG1 X5 Y5\n']), 'octo.gcode');
    form.append('print', 'true');
    const uploaded = await call(a.baseUrl, '/octoprint/b2/api/files/local', admin, {
      method: 'POST',
      body: form,
    });
    expect(uploaded.status).toBe(201);
    await waitFor(
      async () => {
        // Asked of b itself: a's list lags b by up to a second and would still show the earlier print.
        const machine = (await call(b!.url, '/machines/b2', reader)).body;
        return machine?.awaiting_clear_since !== null && machine?.current_job === null;
      },
      { timeoutMs: 10_000, what: 'the uploaded print to finish on b2' },
    );
    expect((await call(a.baseUrl, '/machines/b2/clear', admin, { method: 'POST' })).status).toBe(200);

    // Over a's upload limit (1 MiB, and 1 MiB of room for the multipart framing): refused by a itself.
    const big = new FormData();
    big.append('file', new Blob([new Uint8Array(3 * 1024 * 1024)]), 'big.gcode');
    const refused = await call(a.baseUrl, '/octoprint/b2/api/files/local', admin, {
      method: 'POST',
      body: big,
    });
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({
      error: 'the request body is larger than the upload limit of 1048576 bytes',
    });
  });

  it('answers 503 naming the instance when the owner is alive but does not answer at its address', async () => {
    // An instance d whose heartbeat goes on but whose address answers nothing (a firewall, a wrong public_url).
    const database = await openJobDatabase({ dataDir: '', url: databaseUrl });
    const logger = pino({ level: 'silent' });
    const d = await FarmMembership.join(database.db, {
      name: 'd',
      url: 'http://127.0.0.1:9',
      heartbeatTimeoutMs: 1000,
      machineIds: ['d1'],
      dialect: database.dialect,
      logger,
    });
    const publisher = new FarmMachinePublisher(database.db, {
      dialect: database.dialect,
      instance: 'd',
      snapshots: () => [
        {
          id: 'd1',
          info: { id: 'd1', state: { state: 'idle' } },
          facts: {
            id: 'd1',
            machineType: 'FusedDeposition',
            nozzleDiameter: 0.4,
            materials: ['PLA'],
            prints: { designKinds: ['gcode'], maxPartVolume: null },
          },
        },
      ],
      minIntervalMs: 100,
      sweepIntervalMs: 300,
      logger,
    });
    try {
      await publisher.start();
      await waitFor(async () => (await call(a.baseUrl, '/machines/d1', reader)).status === 200, {
        timeoutMs: 10_000,
        what: 'a to list d1',
      });
      const answer = await call(a.baseUrl, '/machines/d1/pause', admin, { method: 'POST' });
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ error_code: 'InstanceUnavailable' });
      expect(answer.body?.message).toMatch(
        /^machine "d1" is driven by instance "d", which did not answer at http:\/\/127\.0\.0\.1:9: /,
      );
    } finally {
      await publisher.close();
      await d.leave();
      await database.close();
    }
  });

  it("pre-heats this instance's and b's machines in one request, b's through b", async () => {
    const preheat = {
      method: 'POST',
      body: JSON.stringify({ preset: 'pla', machines: ['b1', 'a1'] }),
      headers: { 'content-type': 'application/json' },
    };
    const answer = await call(a.baseUrl, '/machines/preheat', admin, preheat);
    expect(answer).toMatchObject({ status: 200, body: { preset: 'pla', heated: ['a1', 'b1'], skipped: [] } });
    const b1 = (await call(b!.url, '/machines/b1', reader)).body as { temperatures: Record<string, unknown> };
    expect(b1.temperatures).toMatchObject({ extruder: { target: 215 }, bed: { target: 60 } });
    expect((await call(a.baseUrl, '/machines/preheat', reader, preheat)).status).toBe(403);
  });

  it('never forwards a forwarded request again', async () => {
    const answer = await call(a.baseUrl, '/machines/b1/pause', admin, {
      method: 'POST',
      headers: { 'x-machine-api-forwarded-by': 'b' },
    });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({
      error_code: 'InstanceUnavailable',
      message:
        'machine "b1" is not driven by instance "a" (it moved to "b" while the request was forwarded); retry',
    });
  });

  it("lists b's machines offline, with b named, once b is killed, and back when b returns", async () => {
    b?.child.kill('SIGKILL');
    const offline = await waitFor(
      async () => {
        const machines = (await call(a.baseUrl, '/machines', reader)).body as unknown as Listed[];
        const ofB = machines.filter((m) => m.instance === 'b');
        return ofB.length === 2 && ofB.every((m) => m.state.state === 'offline') && machines;
      },
      { timeoutMs: 10_000, what: "a to list b's machines offline" },
    );
    expect(offline.map(({ id, instance, state }) => ({ id, instance, state }))).toEqual([
      { id: 'a1', instance: 'a', state: { state: 'idle' } },
      { id: 'b1', instance: 'b', state: { state: 'offline' } },
      { id: 'b2', instance: 'b', state: { state: 'offline' } },
      { id: 'c1', instance: 'a', state: { state: 'idle' } },
      // d (the test above) left cleanly: offline at once.
      { id: 'd1', instance: 'd', state: { state: 'offline' } },
    ]);
    expect((await call(a.baseUrl, '/machines/b1', reader)).body).toMatchObject({
      id: 'b1',
      instance: 'b',
      state: { state: 'offline' },
      ready: false,
    });
    const refused = await call(a.baseUrl, '/machines/b1/pause', admin, { method: 'POST' });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({
      error_code: 'InstanceUnavailable',
      message:
        'machine "b1" is driven by instance "b", which is not answering (no heartbeat within the timeout); retry when it is back',
    });

    const preheated = await call(a.baseUrl, '/machines/preheat', admin, {
      method: 'POST',
      body: JSON.stringify({ preset: 'pla', machines: ['b1'] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(preheated.body).toEqual({
      preset: 'pla',
      heated: [],
      skipped: [
        {
          id: 'b1',
          error_code: 'InstanceUnavailable',
          message:
            'machine "b1" is driven by instance "b", which is not answering (no heartbeat within the timeout); retry when it is back',
        },
      ],
    });

    b = await serveB();
    await waitFor(
      async () => {
        const machines = (await call(a.baseUrl, '/machines', reader)).body as unknown as Listed[];
        return machines.filter((m) => m.instance === 'b' && m.state.state === 'idle').length === 2;
      },
      { timeoutMs: 10_000, what: "a to list b's machines idle again" },
    );
    const paused = await call(a.baseUrl, '/machines/b1/pause', admin, { method: 'POST' });
    expect(paused.status).toBe(409);
  });
});
