/**
 * Clearing modes for unattended printing, over real HTTP: `gcode` (the eject snippet ends every job sent
 * to a Moonraker printer, a completed job leaves the bed clear, a cancelled or failed one waits for a
 * person), `external` (a key with only the `clear` scope confirms, `clear_timeout_minutes` raises
 * `machine.awaiting_clear`), `auto_clear` as the old spelling of `auto`, and the configuration errors.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/check.js';
import { parseConfig } from '../src/config.js';
import { runKeysCommand } from '../src/keys-command.js';
import { backends } from '../src/machines/backends.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { HttpReceiver } from './notify-receivers.js';
import { MoonrakerSim } from './sim/moonraker.js';

const FILE = '/etc/machine-api/machine-api.toml';
const GCODE = '; sliced elsewhere\nG28\nG1 X10 Y10 Z0.2 F3000\nG1 X60 E4\nM104 S0';
const EJECT = 'G91\nG1 Y300 F3000 ; push the part off the belt\nG90';

function configError(text: string): string {
  try {
    parseConfig(text, { file: FILE, backends });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('clearing configuration', () => {
  it('auto_clear = true means clearing = "auto"; no key means "manual"', () => {
    const config = parseConfig(
      '[machines.a]\ntype = "Noop"\nauto_clear = true\n[machines.b]\ntype = "Noop"\n[machines.c]\ntype = "Noop"\nclearing = "external"\nclear_timeout_minutes = 5\n',
      { file: FILE, backends },
    );
    expect(config.machines.map((m) => m.common.clearing)).toEqual([
      { mode: 'auto', ejectGcode: null, clearTimeoutMinutes: null },
      { mode: 'manual', ejectGcode: null, clearTimeoutMinutes: null },
      { mode: 'external', ejectGcode: null, clearTimeoutMinutes: 5 },
    ]);
  });

  it('refuses both auto_clear and clearing, naming both keys, and keys that do not fit the mode', () => {
    expect(configError('[machines.a]\ntype = "Noop"\nauto_clear = false\nclearing = "gcode"\n')).toBe(
      `${FILE}: [machines.a]: keys "auto_clear" and "clearing" are both set: keep only "clearing" ("auto_clear = true" is the old spelling of clearing = "auto")`,
    );
    expect(configError('[machines.a]\ntype = "Noop"\nclearing = "gcode"\n')).toBe(
      `${FILE}: [machines.a]: key "eject_gcode": expected the G-code that clears the bed, since clearing = "gcode"; it is missing`,
    );
    expect(configError('[machines.a]\ntype = "Noop"\neject_gcode = "G28"\n')).toBe(
      `${FILE}: [machines.a]: key "eject_gcode": only used with clearing = "gcode", but clearing is "manual"`,
    );
    expect(
      configError('[machines.a]\ntype = "Noop"\nclearing = "auto"\nclear_timeout_minutes = 3\n'),
    ).toMatch(/key "clear_timeout_minutes": only used with clearing = "external", but clearing is "auto"/);
    expect(configError('[machines.a]\ntype = "Noop"\nclearing = "sometimes"\n')).toBe(
      `${FILE}: [machines.a]: key "clearing": expected one of "manual", "gcode", "external", "auto", got "sometimes"`,
    );
    expect(
      configError('[machines.a]\ntype = "Noop"\nclearing = "external"\nclear_timeout_minutes = 0\n'),
    ).toBe(`${FILE}: [machines.a]: key "clear_timeout_minutes": expected a number > 0, got 0`);
  });
});

interface MachineBody {
  state: { state: string };
  ready: boolean;
  awaiting_clear_since: string | null;
}

describe('clearing modes at work', () => {
  let sim: MoonrakerSim;
  let hooks: HttpReceiver;
  let api: MachineApiUnderTest;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    sim = await MoonrakerSim.start();
    hooks = await HttpReceiver.start();
    api = await startMachineApi(`
[server]
auth = "keys"
awaiting_clear_minutes = 1000

[machines.belt]
type = "Moonraker"
endpoint = "${sim.endpoint}"
variant = "ElegooNeptune4"
timeout_seconds = 2
poll_interval_seconds = 0.2
clearing = "gcode"
eject_gcode = """
${EJECT}"""

[machines.sensor]
type = "Noop"
print_seconds = 0
clearing = "external"
clear_timeout_minutes = 0.002

[machines.person]
type = "Noop"
print_seconds = 0

[[notify]]
name = "hook"
kind = "webhook"
url = "${hooks.url}/hook"
secret = "whsec_YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE="
events = ["machine.awaiting_clear"]
`);
    for (const scope of ['admin', 'clear']) {
      let out = '';
      const code = await runKeysCommand(['create'], {
        dataDir: api.dataDir,
        name: `k-${scope}`,
        scope,
        out: (text) => (out += text),
      });
      expect(code).toBe(0);
      keys[scope] = out.split('\n')[0] ?? '';
    }
  });

  afterAll(async () => {
    await api?.close();
    await sim?.close();
    await hooks?.close();
  });

  const call = async (method: string, path: string, key = keys.admin, body?: FormData) => {
    const res = await fetch(`${api.baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': key ?? '' },
      ...(body ? { body } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const print = async (machineId: string, jobName: string) => {
    const form = new FormData();
    form.append('params', JSON.stringify({ machine_id: machineId, job_name: jobName }));
    form.append('file', new Blob([GCODE]), 'part.gcode');
    const res = await call('POST', '/print', keys.admin, form);
    expect(res.status).toBe(200);
    return res.body.job_id as string;
  };
  const jobReaches = (id: string, status: string) =>
    waitFor(async () => (await call('GET', `/jobs/${id}`)).body.status === status, {
      what: `job ${id} ${status}`,
    });
  const machine = async (id: string) => (await call('GET', `/machines/${id}`)).body as unknown as MachineBody;

  it('gcode: the eject snippet ends every job; a completed job leaves the bed clear, a cancelled one does not', async () => {
    const first = await print('belt', 'part one');
    const uploaded = sim.files.get(`part_one-${first.slice(0, 8)}.gcode`)?.toString();
    expect(uploaded).toBe(`${GCODE}\n; eject_gcode (clearing = "gcode")\n${EJECT}\n`);
    sim.advance(1);
    await jobReaches(first, 'completed');
    const done = await waitFor(async () => {
      const body = await machine('belt');
      return body.ready && body;
    });
    expect(done).toMatchObject({ state: { state: 'idle' }, awaiting_clear_since: null });

    // The next job goes straight on; stopped half way, its part stays on the bed for a person.
    const second = await print('belt', 'part two');
    expect(sim.files.get(`part_two-${second.slice(0, 8)}.gcode`)?.toString()).toMatch(/G1 Y300 F3000 ; push/);
    sim.advance(0.5);
    expect((await call('POST', `/jobs/${second}/cancel`)).status).toBe(200);
    await jobReaches(second, 'cancelled');
    expect(await machine('belt')).toMatchObject({ ready: false, awaiting_clear_since: expect.any(String) });
    const form = new FormData();
    form.append('params', JSON.stringify({ machine_id: 'belt', job_name: 'too soon' }));
    form.append('file', new Blob([GCODE]), 'part.gcode');
    expect(await call('POST', '/print', keys.admin, form)).toMatchObject({
      status: 409,
      body: { error_code: 'MachineNotReady' },
    });
    expect((await call('POST', '/machines/belt/clear')).status).toBe(200);

    // A failed print also waits for a person.
    const third = await print('belt', 'part three');
    sim.failPrint('Heater extruder not heating at expected rate');
    await jobReaches(third, 'failed');
    expect(await machine('belt')).toMatchObject({ ready: false, awaiting_clear_since: expect.any(String) });
  });

  it('external: machine.awaiting_clear after clear_timeout_minutes; a clear-scoped key confirms and can do nothing else', async () => {
    const job = await print('sensor', 'sensed');
    await jobReaches(job, 'completed');
    const since = (await machine('sensor')).awaiting_clear_since;
    expect(since).toEqual(expect.any(String));
    // 0.002 minutes for this machine; the server's 1000 minutes for the others.
    const hook = await waitFor(() => hooks.to('/hook')[0], { what: 'machine.awaiting_clear' });
    expect(JSON.parse(hook.body.toString())).toMatchObject({
      type: 'machine.awaiting_clear',
      data: { machine: { id: 'sensor' } },
    });

    const sensorKey = keys.clear;
    expect((await call('GET', '/machines/sensor', sensorKey)).status).toBe(403);
    expect((await call('POST', '/machines/sensor/stop', sensorKey)).status).toBe(403);
    expect((await call('GET', '/jobs', sensorKey)).status).toBe(403);
    const cleared = await call('POST', '/machines/sensor/clear', sensorKey);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ ready: true, awaiting_clear_since: null });
  });

  it('manual: the bed waits for a person, and the server-wide awaiting_clear_minutes applies', async () => {
    const job = await print('person', 'by hand');
    await jobReaches(job, 'completed');
    expect(await machine('person')).toMatchObject({ ready: false, awaiting_clear_since: expect.any(String) });
    expect(hooks.to('/hook').map((r) => JSON.parse(r.body.toString()).data.machine.id)).toEqual(['sensor']);
    expect((await call('POST', '/machines/person/clear', keys.clear)).status).toBe(200);
  });
});
