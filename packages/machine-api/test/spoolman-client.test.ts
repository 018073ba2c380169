import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SpoolmanClient,
  SpoolmanRefused,
  SpoolmanUnavailable,
  SpoolNotFound,
} from '../src/spoolman/client.js';
import { SpoolmanSim } from './sim/spoolman.js';

describe('Spoolman client against the Spoolman simulator', () => {
  let sim: SpoolmanSim;
  let client: SpoolmanClient;
  beforeAll(async () => {
    sim = await new SpoolmanSim().start();
    sim.addSpool({ id: 12, remaining: 800, price: 25, filament: { material: 'PETG', color_hex: 'FF0000' } });
    client = new SpoolmanClient({ url: sim.url, marginG: 5, timeoutMs: 5000, reportIntervalMs: 120_000 });
  });
  afterAll(() => sim.close());

  it('reads a spool: remaining grams, price, material, colour, name', async () => {
    expect(await client.spool(12)).toEqual({
      id: 12,
      remainingG: 800,
      usedLengthMm: 0,
      price: 25,
      weightG: 1000,
      name: 'Galaxy Black',
      material: 'PETG',
      colorHex: 'FF0000',
      density: 1.24,
      diameter: 1.75,
    });
    await expect(client.spool(99)).rejects.toBeInstanceOf(SpoolNotFound);
  });

  it('reports use as a length; the simulator takes exactly one of use_length / use_weight', async () => {
    await client.use(12, 1000);
    expect(sim.uses).toEqual([{ spool: 12, use_length: 1000 }]);
    expect((await client.spool(12)).remainingG).toBeCloseTo(800 - 2.982, 2);
    await expect(client.use(99, 10)).rejects.toBeInstanceOf(SpoolNotFound);
    for (const body of [{}, { use_length: 1, use_weight: 1 }]) {
      const res = await fetch(`${sim.url}/api/v1/spool/12/use`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ message: 'Only specify either use_weight or use_length.' });
    }
    expect(sim.uses).toHaveLength(1);
  });

  it('tells "try later" (down, 5xx) from "refused"', async () => {
    sim.faults.serverError = true;
    await expect(client.use(12, 1)).rejects.toBeInstanceOf(SpoolmanUnavailable);
    sim.faults.serverError = false;
    await sim.down();
    await expect(client.spool(12)).rejects.toBeInstanceOf(SpoolmanUnavailable);
    await sim.up();
    expect((await client.spool(12)).id).toBe(12);
  });

  it('bounds the answer and the time it takes', async () => {
    let hang: (() => void) | null = null;
    const server: Server = createServer((req, res) => {
      if (req.url?.endsWith('/1')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"id":1,"filament":{},"x":"${'a'.repeat(100_000)}"}`);
      } else hang = () => res.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const big = new SpoolmanClient({ url, marginG: 5, timeoutMs: 5000, reportIntervalMs: 120_000 });
      await expect(big.spool(1)).rejects.toBeInstanceOf(SpoolmanRefused);
      const slow = new SpoolmanClient({ url, marginG: 5, timeoutMs: 50, reportIntervalMs: 120_000 });
      await expect(slow.spool(2)).rejects.toThrow('Spoolman did not answer in time');
    } finally {
      (hang as (() => void) | null)?.();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
