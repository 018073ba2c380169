/**
 * The Moonraker `Machine` against the simulator over real HTTP and websocket: identity, state and progress
 * through a print, controls, failures of Moonraker and of Klipper.
 */

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Machine, MachineError, type PrintOutcome } from '../src/machines/machine.js';
import { moonrakerBackend } from '../src/machines/moonraker/backend.js';
import type { MoonrakerConfig } from '../src/machines/moonraker/config.js';
import { waitFor } from './harness.js';
import { gcodeFixture } from './moonraker-fixtures.js';
import { MoonrakerSim, type MoonrakerSimOptions } from './sim/moonraker.js';

const logger = pino({ level: process.env['MR_DEBUG'] ? 'debug' : 'silent' });
// Short enough for the tests, generous enough for a busy 2-core machine.
const FAST = { timeout_seconds: 2, poll_interval_seconds: 0.2, lost_print_grace_seconds: 1.5 };

describe('Moonraker machine', () => {
  let sim: MoonrakerSim;
  let machine: Machine;
  let gcode: Awaited<ReturnType<typeof gcodeFixture>>;
  const opened: Machine[] = [];

  async function setUp(simOptions: MoonrakerSimOptions = {}, config: Partial<MoonrakerConfig> = {}) {
    sim = await MoonrakerSim.start(simOptions);
    machine = create({ endpoint: sim.endpoint, variant: 'Generic', ...FAST, ...config });
    await machine.start();
  }

  function create(config: MoonrakerConfig): Machine {
    const [created] = moonrakerBackend.create([{ id: 'klipper', config }], {
      logger,
      configDir: '/nonexistent',
      dataDir: '/nonexistent',
    });
    opened.push(created!);
    return created!;
  }

  function print(jobName = 'Benchy v2', jobId = '0f8e2c1a-1111-4222-8333-944445555666') {
    return machine.print({ jobId, jobName, filePath: gcode.path, signal: new AbortController().signal });
  }

  async function stateOf(target: Machine = machine) {
    return (await target.status()).state;
  }

  beforeEach(async () => {
    gcode = await gcodeFixture();
  });

  afterEach(async () => {
    for (const each of opened.splice(0)) await each.close();
    await sim?.close();
    await gcode.cleanup();
  });

  it('identifies a Generic printer by its variant and reports Moonraker facts under ExtraKindA', async () => {
    await setUp();
    expect(machine.identity()).toEqual({
      machineType: 'FusedDeposition',
      makeModel: { manufacturer: null, model: null, serial: null },
      maxPartVolume: null,
    });
    const status = await waitFor(
      async () => {
        const current = await machine.status();
        return (
          (current.extra as { ExtraKindA: { connection: string } }).ExtraKindA.connection === 'websocket' &&
          current
        );
      },
      { what: 'websocket subscription' },
    );
    expect(status.state).toEqual({ state: 'idle' });
    expect(status.progress).toBeNull();
    expect(status.temperatures).toEqual({
      extruder: { current: 22.5, target: 0 },
      bed: { current: 21.8, target: 0 },
    });
    expect(status.extra).toEqual({
      ExtraKindA: {
        endpoint: sim.endpoint,
        variant: 'Generic',
        reachable: true,
        connection: 'websocket',
        last_error: null,
        klippy_state: 'ready',
        klippy_state_message: 'Printer is ready',
        klipper_version: 'v0.12.0-sim',
        moonraker_version: 'v0.9.3-12-gsim',
        api_version: '1.5.0',
        hostname: 'moonraker-sim',
        print_state: 'standby',
        print_filename: null,
        print_message: null,
      },
    });
  });

  it('reports only the extruder temperature for a printer without a heated bed', async () => {
    await setUp({ heatedBed: false });
    expect((await machine.status()).temperatures).toEqual({ extruder: { current: 22.5, target: 0 } });
  });

  it('identifies an ElegooNeptune4 as Elegoo Neptune 4 with its build volume', async () => {
    await setUp({}, { variant: 'ElegooNeptune4' });
    expect(machine.identity()).toEqual({
      machineType: 'FusedDeposition',
      makeModel: { manufacturer: 'Elegoo', model: 'Neptune 4', serial: null },
      maxPartVolume: { width: 225, depth: 225, height: 265 },
    });
  });

  it('uploads to the gcodes root under the sanitised job name, starts it, and follows it to completed', async () => {
    await setUp();
    const active = await print('Benchy v2 / "final"');
    const upload = sim.requests.find((request) => request.path === '/server/files/upload')!;
    expect(upload.args).toMatchObject({
      root: 'gcodes',
      filename: 'Benchy_v2_final-0f8e2c1a.gcode',
      checksum: createHash('sha256')
        .update(await readFile(gcode.path))
        .digest('hex'),
    });
    expect(sim.files.has('Benchy_v2_final-0f8e2c1a.gcode')).toBe(true);
    expect(sim.requests.map((request) => request.path)).toContain('/printer/print/start');

    expect(await waitFor(async () => (await stateOf()).state === 'running', { what: 'running' })).toBe(true);
    sim.advance(0.5);
    const halfway = await waitFor(
      async () => {
        const status = await machine.status();
        return status.progress === 50 && status;
      },
      { what: 'progress 50' },
    );
    expect(halfway.temperatures['extruder']?.target).toBe(215);
    expect(halfway.temperatures['bed']?.target).toBe(60);
    expect((halfway.extra as { ExtraKindA: Record<string, unknown> }).ExtraKindA).toMatchObject({
      print_state: 'printing',
      print_filename: 'Benchy_v2_final-0f8e2c1a.gcode',
    });

    sim.advance(0.5);
    // Klipper's own count of the filament it pushed (print_stats.filament_used) comes with the outcome.
    expect(await active.finished).toEqual({ status: 'completed', filamentUsedMm: 1500 });
    // Klipper's `complete` stays `complete` until the bed is confirmed clear, and refuses a new print.
    const after = await machine.status();
    expect(after.state).toEqual({ state: 'complete' });
    expect(after.progress).toBeNull();
    expect((after.extra as { ExtraKindA: Record<string, unknown> }).ExtraKindA['print_state']).toBe(
      'complete',
    );
    await expect(print('too early', '1a2b3c4d-0000-4000-8000-000000000001')).rejects.toMatchObject({
      code: 'MachineBusy',
    });
    // `clear` sends SDCARD_RESET_FILE: Klipper forgets the file and reads standby.
    await machine.clear?.();
    expect(sim.printStats['state']).toBe('standby');
    expect(await stateOf()).toEqual({ state: 'idle' });

    const next = await print('second', '1a2b3c4d-0000-4000-8000-000000000000');
    sim.advance(1);
    expect(await next.finished).toMatchObject({ status: 'completed' });
  });

  it('pauses, resumes and cancels the print; the job ends cancelled', async () => {
    await setUp();
    const active = await print();
    await machine.pause();
    expect(await waitFor(async () => (await stateOf()).state === 'paused', { what: 'paused' })).toBe(true);
    await expect(machine.pause()).rejects.toThrow(
      /cannot pause machine klipper: Klipper ready, print paused/,
    );
    await machine.resume();
    expect(await waitFor(async () => (await stateOf()).state === 'running', { what: 'running' })).toBe(true);
    await machine.stop();
    expect(await active.finished).toMatchObject({ status: 'cancelled' });
    expect(await stateOf()).toEqual({ state: 'complete' });
    await expect(machine.resume()).rejects.toMatchObject({ code: 'MachineRejected' });
  });

  it('refuses a second print while one runs', async () => {
    await setUp();
    await print();
    await expect(print('other', '22222222-0000-4000-8000-000000000000')).rejects.toMatchObject({
      code: 'MachineBusy',
    });
  });

  it("surfaces Moonraker's message when the upload is refused, and starts nothing", async () => {
    await setUp();
    sim.failNext('/server/files/upload', 507, 'Insufficient disk space: 1024 bytes free');
    const error = await print().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MachineError);
    expect(error).toMatchObject({
      code: 'MachineRejected',
      message:
        'Moonraker refused the upload of Benchy_v2-0f8e2c1a.gcode: Insufficient disk space: 1024 bytes free (HTTP 507)',
    });
    expect(sim.requests.map((request) => request.path)).not.toContain('/printer/print/start');
    expect(await stateOf()).toEqual({ state: 'idle' });
  });

  it("surfaces Klipper's refusal to start and removes the uploaded file", async () => {
    await setUp();
    sim.failNext('/printer/print/start', 400, 'Unable to open file');
    await expect(print()).rejects.toMatchObject({
      code: 'MachineRejected',
      message: 'Moonraker refused to start Benchy_v2-0f8e2c1a.gcode: Unable to open file (HTTP 400)',
    });
    expect([...sim.files.keys()]).toEqual([]);
  });

  it('is offline while Moonraker refuses connections at start-up and comes back when it answers', async () => {
    sim = await MoonrakerSim.start();
    await sim.refuse();
    machine = create({ endpoint: sim.endpoint, variant: 'Generic', ...FAST });
    await machine.start();
    const status = await machine.status();
    expect(status.state).toEqual({ state: 'offline' });
    expect(status.progress).toBeNull();
    expect((status.extra as { ExtraKindA: Record<string, unknown> }).ExtraKindA).toMatchObject({
      reachable: false,
      last_error: expect.stringContaining('ECONNREFUSED'),
      klippy_state: null,
    });
    await expect(print()).rejects.toMatchObject({ code: 'MachineOffline' });

    await sim.acceptAgain();
    expect(await waitFor(async () => (await stateOf()).state === 'idle', { what: 'idle again' })).toBe(true);
  });

  it('fails the job with a clear message when Moonraker dies mid-print and stays gone', async () => {
    await setUp();
    const active = await print();
    sim.advance(0.3);
    await waitFor(async () => (await machine.status()).progress === 30, { what: 'progress 30' });
    await sim.die();
    expect(await waitFor(async () => (await stateOf()).state === 'offline', { what: 'offline' })).toBe(true);
    const outcome = (await active.finished) as Extract<PrintOutcome, { status: 'failed' }>;
    expect(outcome.status).toBe('failed');
    expect(outcome.message).toMatch(
      new RegExp(
        `^lost contact with Moonraker at ${sim.endpoint.replace(/\./g, '\\.')} for more than 1\\.5 s ` +
          `while printing Benchy_v2-0f8e2c1a\\.gcode \\(.+\\); the print's outcome is unknown$`,
      ),
    );
  });

  it('keeps the job when Moonraker comes back within the grace period, and sees it complete', async () => {
    await setUp({}, { lost_print_grace_seconds: 60 });
    const active = await print();
    await waitFor(async () => (await stateOf()).state === 'running', { what: 'running' });
    await sim.refuse();
    await waitFor(async () => (await stateOf()).state === 'offline', { what: 'offline' });
    // Klipper prints from its virtual SD card while Moonraker is away.
    sim.advance(1);
    await sim.acceptAgain();
    expect(await active.finished).toMatchObject({ status: 'completed' });
  });

  it("fails the job with Klipper's message when the print errors", async () => {
    await setUp();
    const active = await print();
    sim.failPrint('Move out of range: 250.000 0.000 0.200 [1.000]');
    expect(await active.finished).toMatchObject({
      status: 'failed',
      message: 'Move out of range: 250.000 0.000 0.200 [1.000]',
    });
    expect(await stateOf()).toEqual({
      state: 'failed',
      message: 'Move out of range: 250.000 0.000 0.200 [1.000]',
    });
    await expect(print('next', '33333333-0000-4000-8000-000000000000')).rejects.toMatchObject({
      code: 'MachineBusy',
    });
  });

  it('fails the job when Klipper shuts down mid-print', async () => {
    await setUp();
    const active = await print();
    sim.setKlippy('shutdown', 'MCU shutdown: Timer too close');
    expect(await active.finished).toMatchObject({
      status: 'failed',
      message: 'Klipper shutdown: MCU shutdown: Timer too close',
    });
    expect(await waitFor(async () => (await stateOf()).state === 'failed', { what: 'failed' })).toBe(true);
    expect(await stateOf()).toEqual({ state: 'failed', message: 'MCU shutdown: Timer too close' });
  });

  it('fails the job when Klipper restarts and forgets it', async () => {
    await setUp();
    const active = await print();
    await waitFor(async () => (await stateOf()).state === 'running', { what: 'running' });
    sim.restartKlipper();
    expect(await active.finished).toMatchObject({
      status: 'failed',
      message: 'Klipper restarted during the print; the job was lost',
    });
  });

  it('reports a complete left by a print it did not start until it is cleared at the printer', async () => {
    await setUp();
    sim.files.set('from-mainsail.gcode', Buffer.from('G28\n'));
    await fetch(`${sim.endpoint}/printer/print/start?filename=from-mainsail.gcode`, { method: 'POST' });
    sim.advance(1);
    expect(await waitFor(async () => (await stateOf()).state === 'complete', { what: 'complete' })).toBe(
      true,
    );
    await expect(print()).rejects.toMatchObject({
      code: 'MachineBusy',
      message: 'machine klipper is not ready for a new job (Klipper ready, print complete)',
    });
    await fetch(`${sim.endpoint}/printer/gcode/script`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ script: 'SDCARD_RESET_FILE' }),
    });
    expect(await waitFor(async () => (await stateOf()).state === 'idle', { what: 'idle' })).toBe(true);
  });

  it('follows Klippy from disconnected through startup to ready, then subscribes', async () => {
    sim = await MoonrakerSim.start();
    sim.setKlippy('disconnected', 'Klippy not running');
    machine = create({ endpoint: sim.endpoint, variant: 'Generic', ...FAST });
    await machine.start();
    expect(await stateOf()).toEqual({ state: 'offline' });
    await expect(print()).rejects.toMatchObject({ code: 'MachineOffline' });
    sim.setKlippy('startup', 'Klipper is starting');
    expect(await waitFor(async () => (await stateOf()).state === 'unknown', { what: 'unknown' })).toBe(true);
    sim.setKlippy('ready', 'Printer is ready');
    expect(await waitFor(async () => (await stateOf()).state === 'idle', { what: 'idle' })).toBe(true);
    const active = await print();
    sim.advance(1);
    expect(await active.finished).toMatchObject({ status: 'completed' });
  });

  it('polls over HTTP when the websocket is not available, through a whole print', async () => {
    await setUp({ websocket: false });
    const status = await machine.status();
    expect(status.state).toEqual({ state: 'idle' });
    expect((status.extra as { ExtraKindA: Record<string, unknown> }).ExtraKindA['connection']).toBe(
      'polling',
    );
    const active = await print();
    sim.advance(0.25);
    await waitFor(async () => (await machine.status()).progress === 25, { what: 'progress 25' });
    sim.advance(1);
    expect(await active.finished).toMatchObject({ status: 'completed' });
  });

  it('sends the API key as X-Api-Key on HTTP and websocket, and is offline with a wrong key', async () => {
    await setUp({ apiKey: 'k3y' }, { api_key: 'k3y' });
    await waitFor(
      async () => {
        const extra = (await machine.status()).extra as { ExtraKindA: Record<string, unknown> };
        return extra.ExtraKindA['connection'] === 'websocket';
      },
      { what: 'websocket' },
    );
    const active = await print();
    sim.advance(1);
    expect(await active.finished).toMatchObject({ status: 'completed' });
    expect(sim.requests.length).toBeGreaterThan(3);
    expect(sim.requests.every((request) => request.headers['x-api-key'] === 'k3y')).toBe(true);

    const wrong = create({ endpoint: sim.endpoint, variant: 'Generic', ...FAST, api_key: 'nope' });
    await wrong.start();
    const status = await wrong.status();
    expect(status.state).toEqual({ state: 'offline' });
    expect((status.extra as { ExtraKindA: Record<string, unknown> }).ExtraKindA['last_error']).toBe(
      'Unauthorized',
    );
    expect(JSON.stringify(status)).not.toContain('nope');
  });

  it('is offline while Moonraker answers 500 and back when it recovers', async () => {
    await setUp();
    await waitFor(async () => (await stateOf()).state === 'idle', { what: 'idle' });
    sim.breakDown(true);
    const status = await waitFor(
      async () => {
        const current = await machine.status();
        return current.state.state === 'offline' && current;
      },
      { what: 'offline' },
    );
    expect((status.extra as { ExtraKindA: Record<string, unknown> }).ExtraKindA['last_error']).toBe(
      'Internal Server Error',
    );
    sim.breakDown(false);
    expect(await waitFor(async () => (await stateOf()).state === 'idle', { what: 'idle' })).toBe(true);
  });

  it('is offline while Moonraker is too slow to answer within the timeout', async () => {
    await setUp({}, { timeout_seconds: 1 });
    await waitFor(async () => (await stateOf()).state === 'idle', { what: 'idle' });
    sim.faults.delayMs = 2_500;
    const status = await waitFor(
      async () => {
        const current = await machine.status();
        return current.state.state === 'offline' && current;
      },
      { what: 'offline' },
    );
    expect((status.extra as { ExtraKindA: Record<string, unknown> }).ExtraKindA['last_error']).toMatch(
      /within 1000 ms/,
    );
    sim.faults.delayMs = 0;
    expect(await waitFor(async () => (await stateOf()).state === 'idle', { what: 'idle' })).toBe(true);
  });
});
