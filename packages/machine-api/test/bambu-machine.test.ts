/**
 * The Bambu backend against the in-process printer simulator, over real sockets: UDP discovery, MQTT over
 * TLS, implicit FTPS.
 */

import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bambuBackend } from '../src/machines/bambu/backend.js';
import type { BambuConfig } from '../src/machines/bambu/config.js';
import { type Machine, MachineError, type MachineStatus } from '../src/machines/machine.js';
import { waitFor } from './harness.js';
import { BambuPrinterSim, type BambuSimOptions, freeUdpPort, writeProjectFile } from './sim/bambu.js';

/** Every log line the backend writes, at the most verbose level, to prove access codes never reach it. */
let logLines: string[] = [];
const logger = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });

let dir: string;
let project: string;
const open: { sims: BambuPrinterSim[]; machines: Machine[] } = { sims: [], machines: [] };

beforeEach(async () => {
  logLines = [];
  dir = await mkdtemp(join(tmpdir(), 'bambu-test-'));
  project = join(dir, 'upload.gcode.3mf');
  await writeProjectFile(project, 8);
});

afterEach(async () => {
  const codes = open.sims.map((sim) => sim.accessCode);
  await Promise.all(open.machines.splice(0).map((machine) => machine.close()));
  await Promise.all(open.sims.splice(0).map((sim) => sim.close()));
  expect(logLines.length).toBeGreaterThan(0);
  for (const code of codes) expect(logLines.join('')).not.toContain(code);
  await rm(dir, { recursive: true, force: true });
});

async function startSim(options: BambuSimOptions = {}): Promise<BambuPrinterSim> {
  const sim = await BambuPrinterSim.start({ accessCode: 'lan-AC-90210', ...options });
  open.sims.push(sim);
  return sim;
}

/** A machine connected straight to the simulator (host + serial given, so no discovery). */
async function startMachine(sim: BambuPrinterSim, overrides: Partial<BambuConfig> = {}): Promise<Machine> {
  const config: BambuConfig = {
    name: sim.name,
    access_code: sim.accessCode,
    host: '127.0.0.1',
    serial: sim.serial,
    mqtt_port: sim.mqttPort,
    ftps_port: sim.ftpsPort,
    ...overrides,
  };
  const [machine] = bambuBackend.create([{ id: 'x1c', config }], { logger, configDir: dir, dataDir: dir });
  if (!machine) throw new Error('backend created no machine');
  open.machines.push(machine);
  await machine.start();
  return machine;
}

function extraOf(status: MachineStatus): Record<string, unknown> {
  const extra = status.extra as { ExtraKindB?: Record<string, unknown> } | null;
  if (!extra?.ExtraKindB) throw new Error(`no ExtraKindB in ${JSON.stringify(status.extra)}`);
  return extra.ExtraKindB;
}

async function stateBecomes(machine: Machine, state: string): Promise<MachineStatus> {
  return waitFor(
    async () => {
      const status = await machine.status();
      return status.state.state === state ? status : undefined;
    },
    { what: `state ${state}` },
  );
}

function printRequest(jobName: string, signal = new AbortController().signal) {
  return { jobId: '6f1c2f0e-8d5a-4c1e-9a57-0e0d3f1c2b4a', jobName, filePath: project, signal };
}

describe('Bambu discovery', () => {
  it('finds the printer by its announced name, ignores malformed packets and reports identity and status', async () => {
    const sim = await startSim();
    const port = await freeUdpPort();
    const machine = await startMachine(sim, { host: undefined, serial: undefined, discovery_port: port });

    expect(machine.identity()).toEqual({
      machineType: 'FusedDeposition',
      makeModel: { manufacturer: 'Bambu Lab', model: null, serial: null },
      maxPartVolume: null,
    });
    expect(await machine.status()).toEqual({
      state: { state: 'offline' },
      progress: null,
      temperatures: {},
      extra: null,
    });

    // Garbage, a NOTIFY with a non-IP Location, and another vendor's NOTIFY: none may stop discovery.
    await sim.sendDatagram(port, Buffer.from([0xff, 0x00, 0x13, 0x37]));
    await sim.sendDatagram(port, sim.announcement('printer.local'));
    await sim.sendDatagram(
      port,
      'NOTIFY * HTTP/1.1\r\nNT: urn:schemas-upnp-org:device:MediaRenderer:1\r\n\r\n',
    );
    sim.announceTo(port);

    const status = await stateBecomes(machine, 'idle');
    expect(machine.identity()).toEqual({
      machineType: 'FusedDeposition',
      makeModel: { manufacturer: 'Bambu Lab', model: 'X1 Carbon', serial: sim.serial },
      maxPartVolume: { width: 256, depth: 256, height: 256 },
    });
    expect(status.progress).toBeNull();
    expect(status.temperatures).toEqual({
      extruder: { current: 25.1, target: 0 },
      bed: { current: 24.5, target: 0 },
      chamber: { current: 26, target: null },
    });
    expect(extraOf(status)).toMatchObject({
      current_stage: 'nothing',
      gcode_state: 'IDLE',
      nozzle_diameter: '0.4',
      nozzle_type: 'hardened_steel',
      print_error: null,
      loaded_filament_idx: 0,
      filaments: [
        { tray: 0, material: { type: 'pla' }, name: 'PLA Basic', color: 'FF6A13', remaining: 78 },
        { tray: 1, material: { type: 'petg' }, name: 'PETG HF', color: '000000', remaining: 40 },
        {
          tray: 3,
          material: { type: 'pla_support' },
          name: 'Support for PLA',
          color: 'FFFFFF',
          remaining: null,
        },
      ],
    });
    // The session asked for a full status instead of waiting for one.
    expect(
      sim.commands.some((command) => (command.pushing as { command?: string })?.command === 'pushall'),
    ).toBe(true);
  });
});

describe('Bambu printing', () => {
  it('uploads the project over FTPS under a sanitised name and follows the job to completed', async () => {
    const sim = await startSim();
    const machine = await startMachine(sim);
    await stateBecomes(machine, 'idle');

    const active = await machine.print(printRequest('Bracket v2 / final (PLA)'));
    expect(await readdir(sim.sdCard)).toEqual(['Bracket_v2_final_PLA.gcode.3mf']);
    const projectFile = sim.commands
      .map((command) => command.print as Record<string, unknown> | undefined)
      .find((print) => print?.command === 'project_file');
    expect(projectFile).toMatchObject({
      param: 'Metadata/plate_1.gcode',
      subtask_name: 'Bracket v2 / final (PLA)',
      url: 'ftp://Bracket_v2_final_PLA.gcode.3mf',
      use_ams: true,
    });
    expect(Number.isInteger(projectFile?.sequence_id)).toBe(true);

    const running = await waitFor(
      async () => {
        const status = await machine.status();
        return status.state.state === 'running' && (status.progress ?? 0) > 0 ? status : undefined;
      },
      { what: 'progress while running' },
    );
    expect(extraOf(running)).toMatchObject({ job_name: 'Bracket v2 / final (PLA)', total_layers: 8 });
    await expect(machine.print(printRequest('second'))).rejects.toMatchObject({ code: 'MachineBusy' });

    expect(await active.finished).toEqual({ status: 'completed' });
    expect((await machine.status()).state).toEqual({ state: 'idle' });
  });

  it('accepts an acknowledgement that echoes the sequence id as a string', async () => {
    const sim = await startSim();
    sim.faults.stringSequenceIds = true;
    const machine = await startMachine(sim);
    await stateBecomes(machine, 'idle');
    const active = await machine.print(printRequest('string-ack'));
    expect(await active.finished).toEqual({ status: 'completed' });
  });

  it('fails the job with the printer error code when the printer reports FAILED mid-print', async () => {
    const sim = await startSim();
    sim.faults.failAtPercent = 50;
    const machine = await startMachine(sim);
    await stateBecomes(machine, 'idle');
    const active = await machine.print(printRequest('will-fail'));
    expect(await active.finished).toEqual({
      status: 'failed',
      message: 'the printer reported the print FAILED (error 0700-8011)',
    });
    const status = await machine.status();
    expect(status.state).toEqual({ state: 'idle' });
    expect(extraOf(status).print_error).toBe('0700-8011');
  });

  it('pauses, resumes and stops a job; a stopped job ends cancelled', async () => {
    const sim = await startSim({ printTicks: 10_000 });
    const machine = await startMachine(sim);
    await stateBecomes(machine, 'idle');
    await expect(machine.pause()).rejects.toMatchObject({ code: 'MachineRejected' });

    const active = await machine.print(printRequest('long job'));
    await stateBecomes(machine, 'running');
    await machine.pause();
    const paused = await stateBecomes(machine, 'paused');
    expect(extraOf(paused).current_stage).toBe('printing_was_paused_by_the_user');
    await machine.resume();
    await stateBecomes(machine, 'running');
    await machine.stop();
    expect(await active.finished).toEqual({ status: 'cancelled' });
    expect(
      sim.commands.map((command) => (command.print as { command?: string } | undefined)?.command),
    ).toEqual(expect.arrayContaining(['project_file', 'pause', 'resume', 'stop']));
  });

  it('rejects the print with the FTP error when the upload fails, and stays usable', async () => {
    const sim = await startSim();
    sim.faults.rejectUploads = true;
    const machine = await startMachine(sim);
    await stateBecomes(machine, 'idle');
    const failure = await machine.print(printRequest('no space')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MachineError);
    expect(failure).toMatchObject({
      code: 'MachineRejected',
      message: expect.stringMatching(/^uploading the print file to the printer failed: .*SD card is full/),
    });
    expect(
      sim.commands.some((command) => (command.print as { command?: string })?.command === 'project_file'),
    ).toBe(false);

    sim.faults.rejectUploads = false;
    const active = await machine.print(printRequest('after space was freed'));
    expect(await active.finished).toEqual({ status: 'completed' });
  });

  it('gives up after the command timeout when the printer never acknowledges the project', async () => {
    const sim = await startSim();
    sim.faults.neverAcknowledge = true;
    const machine = await startMachine(sim, { command_timeout_secs: 0.5 });
    await stateBecomes(machine, 'idle');
    await expect(machine.print(printRequest('ignored'))).rejects.toMatchObject({
      code: 'MachineRejected',
      message: expect.stringMatching(
        /^the printer did not acknowledge print\.project_file \(sequence_id \d+\) within 0.5 s$/,
      ),
    });
    expect((await machine.status()).state).toEqual({ state: 'idle' });
    // Nothing is left half-started: the next print goes through once the printer answers again.
    sim.faults.neverAcknowledge = false;
    const active = await machine.print(printRequest('answered'));
    expect(await active.finished).toEqual({ status: 'completed' });
  });
});

describe('Bambu connection', () => {
  it('merges P1-style delta reports into the last full status', async () => {
    const sim = await startSim({ reportMode: 'delta', modelCode: 'C12', serial: '01P00A123456789' });
    const machine = await startMachine(sim);
    await stateBecomes(machine, 'idle');
    expect(machine.identity().makeModel.model).toBe('P1S');

    sim.update({ bed_temper: 41.5 });
    const warmed = await waitFor(
      async () => {
        const status = await machine.status();
        return status.temperatures.bed?.current === 41.5 ? status : undefined;
      },
      { what: 'bed temperature from a delta' },
    );
    // Fields the delta did not repeat are still known.
    expect(warmed.temperatures.extruder).toEqual({ current: 25.1, target: 0 });
    expect(extraOf(warmed).nozzle_diameter).toBe('0.4');

    const active = await machine.print(printRequest('delta job'));
    expect(await active.finished).toEqual({ status: 'completed' });
    const after = await machine.status();
    // The AMS deltas named only tray 0 of unit 0 with its new remaining length: the other trays survive.
    expect(extraOf(after).filaments).toEqual([
      { tray: 0, material: { type: 'pla' }, name: 'PLA Basic', color: 'FF6A13', remaining: 68 },
      { tray: 1, material: { type: 'petg' }, name: 'PETG HF', color: '000000', remaining: 40 },
      {
        tray: 3,
        material: { type: 'pla_support' },
        name: 'Support for PLA',
        color: 'FFFFFF',
        remaining: null,
      },
    ]);
  });

  it('reconnects, subscribes again and asks for a full status after the connection drops', async () => {
    const sim = await startSim();
    const machine = await startMachine(sim);
    await stateBecomes(machine, 'idle');
    expect(sim.subscriptions).toBe(1);

    sim.dropConnections();
    await waitFor(() => sim.subscriptions >= 2, { what: 'a second subscription' });
    sim.update({ chamber_temper: 31 });
    const status = await waitFor(
      async () => {
        const current = await machine.status();
        return current.temperatures.chamber?.current === 31 ? current : undefined;
      },
      { what: 'a report after reconnecting' },
    );
    expect(status.state).toEqual({ state: 'idle' });
    expect(sim.logins).toBe(2);
  });

  it('reports a wrong access code clearly, without revealing it', async () => {
    const sim = await startSim({ accessCode: '87654321' });
    const machine = await startMachine(sim, { access_code: 'wrong-code-1234' });
    const status = await waitFor(
      async () => {
        const current = await machine.status();
        return current.state.state === 'failed' ? current : undefined;
      },
      { what: 'the refused login' },
    );
    expect(status.state).toEqual({
      state: 'failed',
      message:
        'the printer refused the MQTT login: the access code is wrong (check access_code against the code shown on the printer)',
    });
    expect(JSON.stringify(status)).not.toContain('wrong-code-1234');
    await expect(machine.print(printRequest('never'))).rejects.toMatchObject({ code: 'MachineOffline' });

    // Once the printer's code matches again, the back-off retries get in.
    sim.accessCode = 'wrong-code-1234';
    await waitFor(async () => (await machine.status()).state.state === 'idle', {
      what: 'login with the right code',
      timeoutMs: 60_000,
    });
  }, 90_000);

  it('reports offline when the printer stops reporting for longer than the status timeout', async () => {
    const sim = await startSim();
    const machine = await startMachine(sim, { status_timeout_secs: 1 });
    await stateBecomes(machine, 'idle');
    sim.faults.silent = true;
    await stateBecomes(machine, 'offline');
    // The silence makes the session ask for a full status; the printer's answer brings it back.
    sim.faults.silent = false;
    await stateBecomes(machine, 'idle');
  });
});
