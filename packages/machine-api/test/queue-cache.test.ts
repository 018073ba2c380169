/**
 * `GET /queue` is answered from what it was built from while the database's change stamp and the
 * machines' routing facts are unchanged (QueueService.list). A change committed by another connection
 * (another process, another instance) must show in the very next answer; a cache that ignored the stamp
 * would answer the old order.
 */

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MachineFacts, sameFacts } from '../src/queue/routing.js';
import { getJson, type MachineApiUnderTest, startMachineApi } from './harness.js';

interface Entry {
  job: { id: string; job_name: string; priority: number; position: number };
  machines: string[];
}

describe('the kept GET /queue answer', () => {
  let api: MachineApiUnderTest;

  beforeAll(async () => {
    // A machine that never becomes ready, so queued jobs wait.
    api = await startMachineApi(
      '[machines.held]\ntype = "Noop"\nstate = { state = "failed", message = "held for the test" }\n',
    );
  });

  afterAll(async () => {
    await api?.close();
  });

  async function queue(name: string): Promise<string> {
    const body = new FormData();
    body.append('params', JSON.stringify({ job_name: name }));
    body.append('file', new Blob(['G28\nG1 X10 Y10 Z0.2 F3000\n']), 'part.gcode');
    const res = await fetch(`${api.baseUrl}/queue`, { method: 'POST', body });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  const order = async () =>
    (await getJson<Entry[]>(api.baseUrl, '/queue')).map((entry) => [entry.job.job_name, entry.job.position]);

  it('shows a change committed by another connection in the very next answer', async () => {
    await queue('first');
    const second = await queue('second');
    for (let i = 0; i < 5; i++)
      expect(await order()).toEqual([
        ['first', 1],
        ['second', 2],
      ]);
    const other = new Database(join(api.dataDir, 'machine-api.sqlite'));
    try {
      other.prepare('UPDATE jobs SET priority = 5 WHERE id = ?').run(second);
    } finally {
      other.close();
    }
    expect(await order()).toEqual([
      ['second', 1],
      ['first', 2],
    ]);
    const entries = await getJson<Entry[]>(api.baseUrl, '/queue');
    expect(entries[0]).toMatchObject({ job: { id: second, priority: 5 }, machines: ['held'] });
  });

  it('shows a job queued through the API in the very next answer', async () => {
    await order();
    await queue('third');
    expect((await order()).map(([name]) => name)).toEqual(['second', 'first', 'third']);
  });
});

describe('the routing facts the kept answer is compared with', () => {
  const facts: MachineFacts = {
    id: 'm1',
    machineType: 'FusedDeposition',
    nozzleDiameter: 0.4,
    materials: ['pla'],
    prints: { designKinds: ['gcode'], maxPartVolume: { width: 200, depth: 200, height: 180 } },
    spool: { id: 7, remainingG: 500, marginG: 10 },
  };

  it('differ when any one fact differs, and only then', () => {
    expect(sameFacts([facts], [structuredClone(facts)])).toBe(true);
    const changes: Partial<MachineFacts>[] = [
      { id: 'm2' },
      { machineType: 'Cnc' },
      { nozzleDiameter: 0.6 },
      { nozzleDiameter: null },
      { materials: ['petg'] },
      { materials: ['pla', 'petg'] },
      { prints: { designKinds: ['gcode', 'stl'], maxPartVolume: facts.prints.maxPartVolume } },
      { prints: { designKinds: ['gcode'], maxPartVolume: { width: 200, depth: 200, height: 181 } } },
      { prints: { designKinds: ['gcode'], maxPartVolume: null } },
      { spool: { id: 8, remainingG: 500, marginG: 10 } },
      { spool: { id: 7, remainingG: 499, marginG: 10 } },
      { spool: { id: 7, remainingG: null, marginG: 10 } },
      { spool: { id: 7, remainingG: 500, marginG: 20 } },
    ];
    for (const change of changes) {
      expect(sameFacts([facts], [{ ...facts, ...change }]), JSON.stringify(change)).toBe(false);
    }
    const { spool: _, ...withoutSpool } = facts;
    expect(sameFacts([facts], [withoutSpool])).toBe(false);
    expect(sameFacts([facts], [facts, facts])).toBe(false);
  });
});
