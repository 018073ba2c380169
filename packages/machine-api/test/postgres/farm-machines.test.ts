/**
 * The farm's machine snapshots (machine-api-postgres project only): what one instance writes about its
 * machines, every other instance mirrors in memory, with their routing facts, their owner and whether the
 * owner is alive; a machine whose owner stops beating reads dead within the heartbeat timeout.
 */

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FarmMachineMirror } from '../../src/farm/farm-machines.js';
import { FarmMembership } from '../../src/farm/instances.js';
import { FarmMachinePublisher, type LocalMachineSnapshot } from '../../src/farm/publisher.js';
import { type JobDatabaseHandle, openJobDatabase } from '../../src/jobs/database.js';
import { createPostgresDatabase } from '../test-database.js';

const TIMEOUT_MS = 600;
const logger = pino({ level: 'silent' });
let database: JobDatabaseHandle;

function snapshot(id: string, state: string, material = 'PLA'): LocalMachineSnapshot {
  return {
    id,
    info: { id, state: { state } },
    facts: {
      id,
      machineType: 'FusedDeposition',
      nozzleDiameter: 0.4,
      materials: [material],
      prints: { designKinds: ['gcode'], maxPartVolume: null },
    },
  };
}

async function instance(name: string, machines: LocalMachineSnapshot[]) {
  const membership = await FarmMembership.join(database.db, {
    name,
    url: `http://${name}.test`,
    heartbeatTimeoutMs: TIMEOUT_MS,
    machineIds: machines.map((machine) => machine.id),
    dialect: database.dialect,
    logger,
  });
  const publisher = new FarmMachinePublisher(database.db, {
    dialect: database.dialect,
    instance: name,
    snapshots: () => machines,
    minIntervalMs: 50,
    sweepIntervalMs: 200,
    logger,
  });
  await publisher.start();
  const mirror = new FarmMachineMirror(database.db, {
    dialect: database.dialect,
    instance: name,
    heartbeatTimeoutMs: TIMEOUT_MS,
    refreshIntervalMs: 100,
    logger,
  });
  await mirror.start();
  return {
    membership,
    publisher,
    mirror,
    machines,
    async close() {
      await publisher.close();
      await mirror.close();
      await membership.leave();
    },
  };
}

/** Polls until `check` passes, failing after `limitMs` (a condition, never a fixed sleep). */
async function eventually(check: () => void, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      return check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

beforeAll(async () => {
  database = await openJobDatabase({ dataDir: '', url: await createPostgresDatabase() });
});

afterAll(async () => {
  await database?.close();
});

describe('farm machine snapshots', () => {
  it("mirrors the other instances' machines, their facts and owners, and follows their changes", async () => {
    const a = await instance('a', [snapshot('a1', 'idle')]);
    const b = await instance('b', [snapshot('b1', 'idle'), snapshot('b2', 'running', 'PETG')]);
    await a.mirror.refresh();
    expect(
      a.mirror.remote().map(({ id, instance, url, alive, info }) => ({ id, instance, url, alive, info })),
    ).toEqual([
      {
        id: 'b1',
        instance: 'b',
        url: 'http://b.test',
        alive: true,
        info: { id: 'b1', state: { state: 'idle' } },
      },
      {
        id: 'b2',
        instance: 'b',
        url: 'http://b.test',
        alive: true,
        info: { id: 'b2', state: { state: 'running' } },
      },
    ]);
    expect(a.mirror.get('b2')?.facts).toEqual(b.machines[1]?.facts);
    expect(b.mirror.remote().map((machine) => machine.id)).toEqual(['a1']);

    // A change is written (coalesced) and reaches the other instance's mirror.
    b.machines[0] = snapshot('b1', 'paused');
    b.publisher.changed();
    b.publisher.changed();
    await eventually(() =>
      expect(a.mirror.get('b1')?.info).toEqual({ id: 'b1', state: { state: 'paused' } }),
    );

    // b stops beating without leaving (as a killed process): its machines read dead, still named.
    b.membership.stopHeartbeatForTest();
    await b.publisher.close();
    await b.mirror.close();
    await eventually(() =>
      expect(a.mirror.remote().map(({ id, instance, alive }) => ({ id, instance, alive }))).toEqual([
        { id: 'b1', instance: 'b', alive: false },
        { id: 'b2', instance: 'b', alive: false },
      ]),
    );

    // Another instance takes b2: a lists it under its new owner, b's old row is gone.
    const c = await instance('c', [snapshot('b2', 'idle')]);
    await a.mirror.refresh();
    expect(a.mirror.remote().map(({ id, instance, alive }) => ({ id, instance, alive }))).toEqual([
      { id: 'b1', instance: 'b', alive: false },
      { id: 'b2', instance: 'c', alive: true },
    ]);
    await c.close();
    await a.close();
  });
});
