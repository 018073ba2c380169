import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/check.js';
import { parseConfig } from '../src/config.js';
import { backends } from '../src/machines/backends.js';
import { startMachineApi, waitFor } from './harness.js';

const FILE = '/etc/machine-api/machine-api.toml';
const parse = (text: string) => parseConfig(text, { file: FILE, backends });

function errorOf(text: string): string {
  try {
    parse(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration file', () => {
  it('reads the anchor format: machines by id, sorted, with the common keys and backend defaults', () => {
    const config = parse(`
[machines.nada]
type = "Noop"
nozzle_diameter = 0.6
state.state = "idle"
progress = 10.0
[[machines.nada.filaments]]
material.type = "pla"

[machines.bench]
type = "Noop"
`);
    expect(config.machines.map((m) => m.id)).toEqual(['bench', 'nada']);
    const nada = config.machines[1]!;
    expect(nada.backend.type).toBe('Noop');
    expect(nada.common).toEqual({
      slicer: null,
      nozzleDiameter: 0.6,
      filaments: [{ material: { type: 'pla' } }],
      loadedFilamentIdx: null,
      maxPartVolume: null,
      clearing: { mode: 'manual', ejectGcode: null, clearTimeoutMinutes: null },
      camera: null,
      tags: [],
      maxToolTemp: 300,
      maxBedTemp: 120,
    });
    expect(nada.settings).toMatchObject({ state: { state: 'idle' }, progress: 10, print_seconds: 10 });
    expect(config.server).toEqual({
      max_upload_mib: 512,
      status_timeout_ms: 3000,
      allowed_origins: [],
      read_origins: '*',
      metrics_auth: 'keys',
      observe_interval_ms: 1000,
      max_line_bytes: 1048576,
      max_3mf_uncompressed_mib: 1024,
      max_3mf_compression_ratio: 100,
      max_triangles: 5000000,
      max_vertices: 5000000,
      awaiting_clear_minutes: 30,
      queue_wait_minutes: 60,
      heartbeat_timeout_seconds: 15,
    });
  });

  it('an empty file is a service with no machines', () => {
    expect(parse('').machines).toEqual([]);
    expect(parse('').presets).toEqual([]);
  });

  it('reads the [mqtt] table with its defaults and names a bad key', () => {
    expect(parse('').mqtt).toBeNull();
    expect(parse('[mqtt]\nurl = "mqtt://broker:1883"\nusername = "u"\npassword = "p"\n').mqtt).toEqual({
      url: 'mqtt://broker:1883',
      username: 'u',
      password: 'p',
      caFile: null,
      topicPrefix: 'machine-api',
      discoveryPrefix: 'homeassistant',
      discovery: true,
      commands: false,
    });
    expect(errorOf('[mqtt]\nurl = "http://broker"\n')).toBe(
      `${FILE}: [mqtt]: key "url": expected a string matching ^mqtts?://[^\\s/]+(:\\d+)?/?$, got "http://broker"`,
    );
    expect(errorOf('[mqtt]\nurl = "mqtt://b"\ntopic_prefix = "a/#"\n')).toMatch(/key "topic_prefix"/);
    expect(errorOf('[mqtt]\nurl = "mqtt://b"\ncommands = "yes"\n')).toBe(
      `${FILE}: [mqtt]: key "commands": expected true or false, got "yes"`,
    );
    expect(errorOf('[mqtt]\nurl = "mqtt://b"\npassword = "p"\n')).toBe(
      `${FILE}: [mqtt]: key "password": needs a "username"`,
    );
  });

  it('reads the [spoolman] table with its defaults and names a bad key', () => {
    expect(parse('').spoolman).toBeNull();
    expect(parse('[spoolman]\nurl = "http://spoolman.local:7912/"\n').spoolman).toEqual({
      url: 'http://spoolman.local:7912',
      marginG: 5,
      timeoutMs: 10_000,
      reportIntervalMs: 120_000,
    });
    expect(
      parse(
        '[spoolman]\nurl = "https://s.example/base"\nmargin_g = 0\ntimeout_ms = 500\nreport_interval_s = 30\n',
      ).spoolman,
    ).toEqual({ url: 'https://s.example/base', marginG: 0, timeoutMs: 500, reportIntervalMs: 30_000 });
    expect(errorOf('[spoolman]\nurl = "http://s"\nreport_interval_s = 0\n')).toMatch(
      /key "report_interval_s"/,
    );
    expect(errorOf('[spoolman]\nurl = "ftp://s"\n')).toMatch(/\[spoolman\]: key "url"/);
    expect(errorOf('[spoolman]\nurl = "http://s"\nmargin_g = -1\n')).toMatch(/key "margin_g"/);
    expect(errorOf('[spoolman]\nurl = "http://s"\nurls = "x"\n')).toMatch(/urls/);
  });

  it('reads temperature presets and per-machine limits, naming the table and key of a bad one', () => {
    const config = parse(
      '[presets.pla]\ntool = 215\nbed = 60\n[presets.abs]\nbed = 100\n[machines.x]\ntype = "Noop"\nmax_tool_temp = 260\nmax_bed_temp = 90\n',
    );
    expect(config.presets).toEqual([
      { name: 'abs', tool: null, bed: 100 },
      { name: 'pla', tool: 215, bed: 60 },
    ]);
    expect(config.machines[0]!.common).toMatchObject({ maxToolTemp: 260, maxBedTemp: 90 });
    expect(errorOf('[presets.pla]\ntool = "hot"\n')).toBe(
      `${FILE}: [presets.pla]: key "tool": expected a number ≥ 0 and ≤ 500, got "hot"`,
    );
    expect(errorOf('[presets.pla]\n')).toBe(`${FILE}: [presets.pla]: expected "tool", "bed" or both (°C)`);
    expect(errorOf('[presets.PLA]\ntool = 200\n')).toBe(
      `${FILE}: [presets.PLA]: preset name must match /^[a-z0-9][a-z0-9._-]{0,63}$/`,
    );
    expect(errorOf('presets = 3\n')).toBe(`${FILE}: "presets" must be a table of [presets.<name>]`);
    expect(errorOf('[machines.x]\ntype = "Noop"\nmax_bed_temp = 0\n')).toBe(
      `${FILE}: [machines.x]: key "max_bed_temp": expected a number > 0 and ≤ 500, got 0`,
    );
  });

  it('names the file, the machine id, the key and the expected value', () => {
    expect(errorOf('[machines.x]\ntype = "Noop"\nnozzle_diameter = "big"\n')).toBe(
      `${FILE}: [machines.x]: key "nozzle_diameter": expected a number > 0, got "big"`,
    );
    expect(errorOf('[machines.x]\ntype = "Noop"\n[[machines.x.filaments]]\nmaterial.type = "wood"\n')).toBe(
      `${FILE}: [machines.x]: key "filaments.0.material.type": expected one of "pla", "pla_support", "abs", "petg", "nylon", "tpu", "pva", "hips", "composite", "unknown", got "wood"`,
    );
    expect(errorOf('[machines.x]\ntype = "Noop"\nprint_seconds = -1\n')).toBe(
      `${FILE}: [machines.x]: key "print_seconds": expected a number ≥ 0, got -1`,
    );
    expect(errorOf('[machines.x]\ntype = "Noop"\nstate.state = "dancing"\n')).toMatch(
      /^\/etc\/machine-api\/machine-api.toml: \[machines.x\]: key "state/,
    );
  });

  it('rejects an unknown machine type, listing the known ones', () => {
    expect(errorOf('[machines.x]\ntype = "Prusa"\n')).toBe(
      `${FILE}: [machines.x]: key "type": expected one of ${backends.map((b) => `"${b.type}"`).join(', ')}, got "Prusa"`,
    );
    expect(errorOf('[machines.x]\nnozzle_diameter = 0.4\n')).toBe(
      `${FILE}: [machines.x]: key "type": expected a string, it is missing`,
    );
  });

  it('rejects a loaded filament index beyond the filament list and a missing slicer profile', () => {
    expect(errorOf('[machines.x]\ntype = "Noop"\nloaded_filament_idx = 0\n')).toBe(
      `${FILE}: [machines.x]: key "loaded_filament_idx": expected an index below the number of filaments (0), got 0`,
    );
    expect(
      errorOf('[machines.x]\ntype = "Noop"\nslicer = { type = "Prusa", config = "missing.ini" }\n'),
    ).toBe(
      `${FILE}: [machines.x]: key "slicer.config": expected an existing PrusaSlicer .ini file, /etc/machine-api/missing.ini does not exist`,
    );
  });

  it('rejects invalid TOML, machine ids unusable in URLs and bad [server] keys', () => {
    expect(errorOf('[machines.x\n')).toMatch(/^\/etc\/machine-api\/machine-api.toml: not valid TOML: /);
    expect(errorOf('[machines."a b"]\ntype = "Noop"\n')).toMatch(/\[machines.a b\]: machine id must match/);
    expect(errorOf('[server]\nmax_upload_mib = 0\n')).toBe(
      `${FILE}: [server]: key "max_upload_mib": expected a number > 0, got 0`,
    );
  });

  it('the service refuses to start on a bad configuration', async () => {
    await expect(startMachineApi('[machines.x]\ntype = "Nope"\n')).rejects.toThrow(
      /key "type": expected one of/,
    );
  });
});

describe('machine-api serve (the CLI)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'machine-api-cli-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const cli = new URL('../src/cli.ts', import.meta.url).pathname;
  const run = (args: string[]) =>
    spawn(process.execPath, ['--import', 'tsx', cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (stream: NodeJS.ReadableStream) => {
    let text = '';
    stream.on('data', (chunk) => {
      text += chunk;
    });
    return () => text;
  };

  it('exits 1 naming the problem when the configuration is bad', async () => {
    const config = join(dir, 'bad.toml');
    await writeFile(config, '[machines.x]\ntype = "Noop"\nnozzle_diameter = -1\n');
    const child = run([
      'serve',
      '--config',
      config,
      '--bind',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data'),
    ]);
    const stderr = collect(child.stderr!);
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr()).toBe(
      `machine-api: ${config}: [machines.x]: key "nozzle_diameter": expected a number > 0, got -1\n`,
    );
  });

  it('serves the configured machines and shuts down cleanly on SIGTERM', async () => {
    const config = join(dir, 'good.toml');
    await writeFile(config, '[machines.sim]\ntype = "Noop"\n');
    const child = run([
      'serve',
      '--config',
      config,
      '--bind',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data'),
      '--json',
    ]);
    const stdout = collect(child.stdout!);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      const url = await waitFor(() => /"url":"(http:[^"]+)"/.exec(stdout())?.[1], {
        what: 'the listening log line',
      });
      const res = await fetch(`${url}/machines`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }[]).map((m) => m.id)).toEqual(['sim']);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout()).toContain('"msg":"shutting down"');
  });
});
