/**
 * Several instances, one farm: two machine-api instances on one PostgreSQL database (the
 * machine-api-postgres project only). Machine ids are unique across the farm, the same instance takes
 * its machines back when it restarts, and a key revoked through one instance is refused by the other
 * at its next request.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../../src/keys-command.js';
import { type MachineApiUnderTest, startMachineApi } from '../harness.js';
import { createPostgresDatabase } from '../test-database.js';

function config(instance: string, machines: string[]): string {
  return [
    '[server]',
    `instance = "${instance}"`,
    'auth = "keys"',
    ...machines.flatMap((id) => [`[machines.${id}]`, 'type = "Noop"']),
  ].join('\n');
}

let databaseUrl: string;
let a: MachineApiUnderTest;
let b: MachineApiUnderTest;
let admin: string;

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

beforeAll(async () => {
  databaseUrl = await createPostgresDatabase();
  a = await startMachineApi(config('a', ['a1']), { databaseUrl });
  b = await startMachineApi(config('b', ['b1', 'b2']), { databaseUrl });
  admin = await createKey('farm-admin', 'read,print,control,admin');
});

afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('several instances on one PostgreSQL database', () => {
  it('refuses to start an instance configured with a machine id a live instance drives, naming both', async () => {
    await expect(startMachineApi(config('c', ['c1', 'b2']), { databaseUrl })).rejects.toThrow(
      'machine "b2" is driven by instance "b", which is alive (last heartbeat',
    );
    // The refused start changed nothing: b still drives b2, and a fourth instance may take c1 alone.
    const c = await startMachineApi(config('c', ['c1']), { databaseUrl });
    await c.close();
  });

  it('a key created on one instance works on the other; revoked through one, refused by the other at once', async () => {
    const key = await createKey('slicer', 'read');
    expect((await fetch(`${b.baseUrl}/machines`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const revoked = await fetch(`${a.baseUrl}/keys/slicer`, {
      method: 'DELETE',
      headers: { 'x-api-key': admin },
    });
    expect(revoked.status).toBe(204);
    const refused = await fetch(`${b.baseUrl}/machines`, { headers: { 'x-api-key': key } });
    expect(refused.status).toBe(401);
  });

  it('an instance that restarts under its name takes its machines back at once', async () => {
    await b.close();
    b = await startMachineApi(config('b', ['b1', 'b2']), { databaseUrl });
    const machines = (await (
      await fetch(`${b.baseUrl}/machines`, { headers: { 'x-api-key': admin } })
    ).json()) as { id: string; instance: string }[];
    // Its own machines are its again at once (the farm's other machines are listed too, tagged).
    expect(machines.filter((machine) => machine.instance === 'b').map((machine) => machine.id)).toEqual([
      'b1',
      'b2',
    ]);
  });
});
