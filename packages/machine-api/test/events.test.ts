/**
 * `GET /events` over HTTP: the Server-Sent Events framing, what is published (machine state and ready,
 * job lifecycle, queue changes), filters, resumption with `Last-Event-ID` after a dropped connection
 * without losing an event, `reset` for a cursor the history no longer holds, and 100 subscribers seeing
 * the same sequence.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventHistory } from '../src/events/history.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { MoonrakerSim } from './sim/moonraker.js';
import { type ReceivedEvent, SseClient } from './sse-client.js';

const GCODE = 'G28\nG1 X10 Y10 Z0.2 F3000\nG1 X20 E1\n';

const CONFIG = `
[machines.one]
type = "Noop"
print_seconds = 0.1

[machines.two]
type = "Noop"
print_seconds = 0.1
`;

function queueForm(params: Record<string, unknown>) {
  const body = new FormData();
  body.append('params', JSON.stringify(params));
  body.append('file', new Blob([GCODE]), 'part.gcode');
  return body;
}

describe('GET /events', () => {
  let api: MachineApiUnderTest;
  beforeAll(async () => {
    api = await startMachineApi(CONFIG);
  });
  afterAll(() => api.close());

  const url = (query = '') => `${api.baseUrl}/events${query}`;
  const post = (path: string, body?: FormData) => fetch(`${api.baseUrl}${path}`, { method: 'POST', body });

  /** Queues a job for `machine` and waits for it to complete; the machine's bed then awaits a clear. */
  async function printOn(machine: string, name: string): Promise<string> {
    const res = await post('/queue', queueForm({ job_name: name, machine_ids: [machine] }));
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await waitFor(async () => {
      const job = (await (await fetch(`${api.baseUrl}/jobs/${id}`)).json()) as { status: string };
      return job.status === 'completed';
    });
    return id;
  }

  it('streams text/event-stream with increasing ids: machine state and ready, job lifecycle, queue changes', async () => {
    const stream = await SseClient.open(url());
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers?.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers?.get('cache-control')).toBe('no-cache, no-transform');
      expect(stream.headers?.get('access-control-allow-origin')).toBe('*');
      expect(stream.headers?.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const jobId = await printOn('one', 'lifecycle');
      await stream.until(
        () =>
          stream.events.some((e) => e.event.type === 'machine.state' && e.event.data.awaiting_clear_since),
        'the bed to await a clear',
      );
      expect((await post('/machines/one/clear')).status).toBe(200);
      await stream.until(
        () => stream.events.some((e) => e.event.type === 'machine.state' && e.event.data.ready === true),
        'ready again',
      );

      const ids = stream.events.map((e) => e.event.id);
      for (const [index, id] of ids.entries()) {
        if (index > 0) expect(id).toBeGreaterThan(ids[index - 1]!);
        expect(stream.events[index]!.lastEventId).toBe(String(id));
      }
      const jobStatuses = stream.events
        .filter((e) => e.event.type === 'job.updated' && e.event.job_id === jobId)
        .map((e) => e.event.data.status);
      expect(jobStatuses).toEqual(['queued', 'slicing', 'uploading', 'printing', 'completed']);
      const queueReasons = stream.events
        .filter((e) => e.event.type === 'queue.changed' && e.event.job_id === jobId)
        .map((e) => e.event.data);
      expect(queueReasons).toEqual([
        { reason: 'queued', depth: 1 },
        { reason: 'dispatched', depth: 0 },
      ]);
      const states = stream.events
        .filter((e) => e.event.type === 'machine.state' && e.event.machine_id === 'one')
        .map((e) => [e.event.data.state, e.event.data.ready]);
      expect(states.at(0)).toEqual([{ state: 'idle' }, false]);
      expect(states).toContainEqual([{ state: 'running' }, false]);
      expect(states.at(-1)).toEqual([{ state: 'idle' }, true]);
      const completed = stream.events.find(
        (e) => e.event.type === 'job.updated' && e.event.data.status === 'completed',
      );
      expect(completed?.event).toMatchObject({ machine_id: 'one', job_id: jobId, data: { progress: 100 } });
    } finally {
      await stream.close();
    }
  });

  it('filters by machine and by type, and refuses unknown types with 400', async () => {
    const onlyTwo = await SseClient.open(url('?machine_id=two&types=machine.state,job.updated'));
    try {
      await printOn('one', 'elsewhere');
      await printOn('two', 'here');
      expect((await post('/machines/one/clear')).status).toBe(200);
      expect((await post('/machines/two/clear')).status).toBe(200);
      await onlyTwo.until(
        () => onlyTwo.events.some((e) => e.event.type === 'machine.state' && e.event.data.ready === true),
        'two ready again',
      );
      expect(onlyTwo.events.length).toBeGreaterThan(0);
      for (const { event } of onlyTwo.events) {
        expect(event.machine_id).toBe('two');
        expect(['machine.state', 'job.updated']).toContain(event.type);
      }
    } finally {
      await onlyTwo.close();
    }
    const bad = await fetch(url('?types=machine.state,gossip'));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error_code: 'BadRequest',
      message: expect.stringContaining('types: expected a comma-separated list of machine.state'),
    });
    const badId = await fetch(url(), { headers: { 'last-event-id': 'yesterday' } });
    expect(badId.status).toBe(400);
  });

  it('GET /events/history answers the newest retained events, filtered, oldest first', async () => {
    const history = async (query: string) => {
      const res = await fetch(`${api.baseUrl}/events/history${query}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      return (await res.json()) as { id: number; type: string; machine_id: string | null }[];
    };
    await printOn('one', 'for the record');
    expect((await post('/machines/one/clear')).status).toBe(200);
    const all = await history('?limit=10000');
    expect(all.length).toBeGreaterThan(5);
    const ids = all.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Everything the stream would have told a subscriber since the start is there, nothing else.
    expect(all.some((event) => event.type === 'job.updated')).toBe(true);
    expect(all.some((event) => event.type === 'reset')).toBe(false);

    const oneStates = await history('?machine_id=one&types=machine.state,job.updated');
    const expected = all.filter(
      (event) => event.machine_id === 'one' && ['machine.state', 'job.updated'].includes(event.type),
    );
    expect(oneStates.map((event) => event.id)).toEqual(expected.map((event) => event.id));

    // The newest three when asked: the machines' temperatures may have moved on since `all` was read.
    const newest = await history('?limit=3');
    const upToNewest = (await history('?limit=10000')).filter((event) => event.id <= newest.at(-1)!.id);
    expect(newest.map((event) => event.id)).toEqual(upToNewest.slice(-3).map((event) => event.id));
    expect(newest.at(-1)!.id).toBeGreaterThanOrEqual(ids.at(-1)!);

    for (const query of ['?types=gossip', '?limit=0', '?limit=10001', '?limit=two']) {
      const bad = await fetch(`${api.baseUrl}/events/history${query}`);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ error_code: 'BadRequest' });
    }
  });

  it('resumes after a dropped connection with Last-Event-ID and loses no event', async () => {
    const reference = await SseClient.open(url());
    const first = await SseClient.open(url());
    try {
      await printOn('one', 'before the drop');
      await first.until(() => first.events.length >= 3, 'a few events');
      await first.close();
      const resumeFrom = first.lastId!;
      // Events happen while the client is away.
      expect((await post('/machines/one/clear')).status).toBe(200);
      await printOn('one', 'while away');
      expect((await post('/machines/one/clear')).status).toBe(200);
      await reference.until(
        () =>
          reference.events.filter((e) => e.event.type === 'machine.state' && e.event.data.ready === true)
            .length >= 2,
        'the reference stream to see both clears',
      );
      const resumed = await SseClient.open(url(), { 'last-event-id': resumeFrom });
      try {
        const lastReference = reference.events.at(-1)!.event.id;
        await resumed.until(
          () => (resumed.events.at(-1)?.event.id ?? 0) >= lastReference,
          'the resumed stream to catch up',
        );
        const seen = [...first.events, ...resumed.events].map((e) => e.event.id);
        const expected = reference.events.map((e) => e.event.id).filter((id) => id <= lastReference);
        expect(seen.filter((id) => id <= lastReference)).toEqual(expected);
        expect(resumed.events[0]!.event.id).toBe(Number(resumeFrom) + 1);
      } finally {
        await resumed.close();
      }
    } finally {
      await reference.close();
    }
  });

  it('sends a reset event when Last-Event-ID is older than the history', async () => {
    const stream = await SseClient.open(url(), { 'last-event-id': '1' });
    try {
      await stream.until(() => stream.events.length > 0, 'the reset');
      expect(stream.events[0]!.event).toMatchObject({
        type: 'reset',
        machine_id: null,
        job_id: null,
        data: { message: expect.stringContaining('event 1 is no longer in the history') },
      });
    } finally {
      await stream.close();
    }
  });

  it('gives 100 subscribers the same sequence', async () => {
    // Cursor 0 predates the history, so each stream starts with a `reset` carrying the newest id at the
    // moment it connected; Noop temperatures may be published while the 100 connections open, so the
    // sequences are compared from the newest of those resets on, when every stream was live.
    const streams = await Promise.all(
      Array.from({ length: 100 }, () => SseClient.open(url(), { 'last-event-id': '0' })),
    );
    try {
      await printOn('two', 'for everyone');
      expect((await post('/machines/two/clear')).status).toBe(200);
      const done = (stream: SseClient) =>
        stream.events.some(
          (e) =>
            e.event.type === 'machine.state' && e.event.machine_id === 'two' && e.event.data.ready === true,
        );
      for (const stream of streams) await stream.until(() => done(stream), 'the clear');
      for (const stream of streams) expect(stream.events[0]?.event.type).toBe('reset');
      const allLive = Math.max(...streams.map((stream) => stream.events[0]!.event.id));
      const sequence = (stream: SseClient) => {
        const end = stream.events.findIndex(
          (e) =>
            e.event.type === 'machine.state' && e.event.machine_id === 'two' && e.event.data.ready === true,
        );
        return stream.events
          .slice(0, end + 1)
          .filter((e) => e.event.id > allLive)
          .map((e) => `${e.event.id} ${e.event.type}`);
      };
      const first = sequence(streams[0]!);
      expect(first.length).toBeGreaterThan(5);
      for (const stream of streams) expect(sequence(stream)).toEqual(first);
    } finally {
      await Promise.all(streams.map((stream) => stream.close()));
    }
  });
});

describe('GET /events with a printer that pushes its readings', () => {
  let api: MachineApiUnderTest;
  let klipper: MoonrakerSim;
  beforeAll(async () => {
    klipper = await MoonrakerSim.start();
    // A slow fallback poll: only what the printer pushes over its websocket reaches the stream.
    api = await startMachineApi(`
[server]
observe_interval_ms = 600000

[machines.klipper]
type = "Moonraker"
endpoint = "${klipper.endpoint}"
variant = "Generic"
nozzle_diameter = 0.4
filaments = []
`);
  });
  afterAll(async () => {
    await api.close();
    await klipper.close();
  });

  it('publishes a reading that comes a little under a second after the last one as it arrives, not when the second ends', async () => {
    const stream = await SseClient.open(
      `${api.baseUrl}/events?machine_id=klipper&types=machine.temperatures`,
    );
    const extruder = (e: ReceivedEvent) =>
      (e.event.data.temperatures as Record<string, { current: number }> | undefined)?.extruder?.current;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    try {
      klipper.setTemperature('extruder', 30.5);
      await stream.until(() => stream.events.some((e) => extruder(e) === 30.5), 'the first reading');
      // Long enough for any limit from earlier readings to have passed: this one goes out as it arrives.
      await sleep(1600);
      klipper.setTemperature('extruder', 31.5);
      await stream.until(() => stream.events.some((e) => extruder(e) === 31.5), 'the second reading');
      // 0.6 s later, within the second after that reading went out.
      await sleep(600);
      klipper.setTemperature('extruder', 32.5);
      // A request that asks the printer over the same websocket, so it is answered only after the service
      // has taken in the reading sent before (a pause without a print is refused).
      expect((await fetch(`${api.baseUrl}/machines/klipper/pause`, { method: 'POST' })).status).toBe(409);
      const newest = (await (
        await fetch(`${api.baseUrl}/events/history?machine_id=klipper&types=machine.temperatures&limit=1`)
      ).json()) as { data: { temperatures: Record<string, { current: number }> } }[];
      // Published already, not held back until a second after the last reading went out.
      expect(newest.map((event) => event.data.temperatures.extruder?.current)).toEqual([32.5]);
    } finally {
      await stream.close();
    }
  });
});

describe('the event history', () => {
  it('keeps at least the last minEvents events and resumes from any of them; older cursors get reset', () => {
    const history = new EventHistory('test', { minEvents: 5, minAgeMs: 0, maxEvents: 10, seed: 100 });
    for (let i = 0; i < 12; i++)
      history.publish({ type: 'queue.changed', machine_id: null, job_id: null, data: { i } });
    expect(history.lastId).toBe(112);
    expect(history.size).toBe(5);
    const resumed: number[] = [];
    history.subscribe({}, 107, (event) => resumed.push(event.id)).close();
    expect(resumed).toEqual([108, 109, 110, 111, 112]);
    const tooOld: string[] = [];
    history.subscribe({}, 106, (event) => tooOld.push(event.type)).close();
    expect(tooOld).toEqual(['reset']);
    const future: string[] = [];
    history.subscribe({}, 500, (event) => future.push(event.type)).close();
    expect(future).toEqual(['reset']);
  });

  it('as a copy of the shared stream: a gap (events pruned before they were read) resets every subscriber', () => {
    const copy = new EventHistory('a', { minEvents: 100, minAgeMs: 0, maxEvents: 100, seed: null });
    const event = (id: number) => ({
      id,
      type: 'queue.changed' as const,
      instance: 'b',
      time: new Date().toISOString(),
      machine_id: null,
      job_id: null,
      data: {},
    });
    const before: string[] = [];
    // Nothing read yet: no cursor is resumable, and the first event read sets the sequence.
    copy.subscribe({}, 5, (e) => before.push(`${e.id} ${e.type}`)).close();
    expect(before).toEqual(['0 reset']);
    const live: string[] = [];
    copy.subscribe({ types: ['job.updated'] }, null, (e) => live.push(`${e.id} ${e.type} ${e.instance}`));
    for (const id of [41, 42, 43]) copy.append(event(id));
    copy.append(event(43));
    copy.append(event(47));
    expect(live).toEqual(['46 reset a']);
    // A cursor from before the gap cannot be resumed; one at the gap can.
    const resumed: string[] = [];
    copy.subscribe({}, 42, (e) => resumed.push(`${e.id} ${e.type}`)).close();
    expect(resumed).toEqual(['47 reset']);
    const fromGap: number[] = [];
    copy.subscribe({}, 46, (e) => fromGap.push(e.id)).close();
    expect(fromGap).toEqual([47]);
  });

  it('keeps events younger than minAgeMs beyond minEvents, up to maxEvents', () => {
    const history = new EventHistory('test', { minEvents: 5, minAgeMs: 60_000, maxEvents: 8, seed: 0 });
    for (let i = 0; i < 12; i++)
      history.publish({ type: 'queue.changed', machine_id: null, job_id: null, data: {} });
    expect(history.size).toBe(8);
  });
});
