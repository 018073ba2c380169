/**
 * A dead instance (machine-api-postgres project only): an instance whose heartbeat stops without leaving,
 * as a killed process's does, is known dead by the others within the heartbeat timeout, with the machine
 * ids it drove and its name; one that leaves cleanly is dead at once.
 */

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FarmMembership } from '../../src/farm/instances.js';
import { type JobDatabaseHandle, openJobDatabase } from '../../src/jobs/database.js';
import { createPostgresDatabase } from '../test-database.js';

const TIMEOUT_MS = 600;
let database: JobDatabaseHandle;

function join(name: string, machineIds: string[]): Promise<FarmMembership> {
  return FarmMembership.join(database.db, {
    name,
    url: `http://${name}.test`,
    heartbeatTimeoutMs: TIMEOUT_MS,
    machineIds,
    dialect: database.dialect,
    logger: pino({ level: 'silent' }),
  });
}

/** Polls until `check` passes, failing after `limitMs` (a condition, never a fixed sleep). */
async function eventually(check: () => Promise<void>, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

beforeAll(async () => {
  database = await openJobDatabase({ dataDir: '', url: await createPostgresDatabase() });
});

afterAll(async () => {
  await database?.close();
});

describe('a dead instance', () => {
  it('is known dead by the others within the heartbeat timeout, with its machines and its name', async () => {
    const a = await join('a', ['a1']);
    const b = await join('b', ['b1', 'b2']);
    expect(await a.owners()).toEqual([
      { machineId: 'a1', instance: 'a', url: 'http://a.test', alive: true },
      { machineId: 'b1', instance: 'b', url: 'http://b.test', alive: true },
      { machineId: 'b2', instance: 'b', url: 'http://b.test', alive: true },
    ]);
    b.stopHeartbeatForTest();
    await eventually(async () => {
      const owners = await a.owners();
      expect(owners.filter((owner) => owner.instance === 'b').map((owner) => owner.alive)).toEqual([
        false,
        false,
      ]);
      // a keeps beating: it stays alive however long the wait.
      expect(owners.find((owner) => owner.machineId === 'a1')?.alive).toBe(true);
    });
    expect((await a.instances()).map(({ name, alive }) => ({ name, alive }))).toEqual([
      { name: 'a', alive: true },
      { name: 'b', alive: false },
    ]);
    // Its machine ids may now be taken by another instance.
    const c = await join('c', ['b2']);
    expect((await a.owners()).find((owner) => owner.machineId === 'b2')).toMatchObject({
      instance: 'c',
      alive: true,
    });
    await c.leave();
    await a.leave();
  });

  it('one that leaves cleanly is dead at once', async () => {
    const d = await join('d', ['d1']);
    const e = await join('e', ['e1']);
    await e.leave();
    expect((await d.owners()).find((owner) => owner.machineId === 'e1')).toMatchObject({
      instance: 'e',
      alive: false,
    });
    await d.leave();
  });
});
