/**
 * The notification rules without a network: which farm changes become which notifications (the watch on
 * a real event bus), who wants what (events, machines and tags), quiet hours in a time zone, backoff and
 * `Retry-After`, what the API shows of a target, and that secrets are scrubbed from recorded errors.
 */

import { describe, expect, it } from 'vitest';
import { EventHistory } from '../src/events/history.js';
import type { NotifyEvent } from '../src/notify/events.js';
import type { WireJob } from '../src/notify/facts.js';
import { backoffMs, inQuietHours, parseRetryAfter, passesQuietHours, wants } from '../src/notify/rules.js';
import { publicView, scrubbed, type TargetSettings, targetProblem } from '../src/notify/targets.js';
import { FarmWatch, type Noticed } from '../src/notify/watch.js';
import { waitFor } from './harness.js';

function job(overrides: Partial<WireJob>): WireJob {
  return {
    id: 'j1',
    machine_id: 'm1',
    job_name: 'cube',
    file_name: 'cube.gcode',
    status: 'printing',
    message: null,
    progress: null,
    created_at: '2026-11-27T10:00:00.000Z',
    finished_at: null,
    dispatched_at: '2026-11-27T10:00:00.000Z',
    queued_at: null,
    estimate: null,
    ...overrides,
  };
}

function watched(
  options: {
    waiting?: { job: WireJob; machines: string[] }[];
    awaitingClearMs?: number;
    queueWaitMs?: number;
  } = {},
) {
  const bus = new EventHistory('test', { minEvents: 100, minAgeMs: 1000, maxEvents: 1000, seed: 0 });
  const noticed: Noticed[] = [];
  let waiting = options.waiting ?? [];
  const watch = new FarmWatch({
    bus,
    awaitingClearMs: () => options.awaitingClearMs ?? 60_000,
    queueWaitMs: options.queueWaitMs ?? 60_000,
    waitingJobs: async () => waiting,
    currentJob: async () => job({ status: 'printing', progress: 42 }),
    notice: (n) => noticed.push(n),
    onError: (error) => {
      throw error;
    },
  });
  const machine = (id: string, state: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    bus.publish({
      type: 'machine.state',
      machine_id: id,
      job_id: null,
      data: { state, busy: false, awaiting_clear_since: null, ...extra },
    });
  return {
    bus,
    watch,
    noticed,
    machine,
    types: () => noticed.map((n) => n.event),
    setWaiting: (next: typeof waiting) => {
      waiting = next;
    },
  };
}

describe('the watch turns farm events into notifications', () => {
  it("machine.offline, machine.online, machine.failed with the printer's message, once per transition", async () => {
    const w = watched();
    await w.watch.start();
    w.machine('m1', { state: 'idle' });
    w.machine('m1', { state: 'offline' });
    w.machine('m1', { state: 'offline' });
    w.machine('m1', { state: 'idle' });
    w.machine('m1', { state: 'failed', message: 'thermal runaway' });
    w.machine('m2', { state: 'offline' });
    expect(w.types()).toEqual(['machine.offline', 'machine.online', 'machine.failed', 'machine.offline']);
    expect(w.noticed[2]?.data).toMatchObject({
      title: 'm1 failed',
      message: 'm1 reports a failure: thermal runaway',
      machine: { id: 'm1' },
    });
    expect(w.noticed.map((n) => n.machineId)).toEqual(['m1', 'm1', 'm1', 'm2']);
    w.watch.close();
  });

  it('job transitions: started, completed, failed, cancelled, each once; paused when the busy machine pauses', async () => {
    const w = watched();
    await w.watch.start();
    const publish = (j: WireJob) =>
      w.bus.publish({ type: 'job.updated', machine_id: j.machine_id, job_id: j.id, data: j as never });
    publish(job({ id: 'a', status: 'uploading' }));
    publish(job({ id: 'a', status: 'printing' }));
    publish(job({ id: 'a', status: 'printing', progress: 50 }));
    publish(
      job({
        id: 'a',
        status: 'completed',
        progress: 100,
        finished_at: '2026-11-27T11:05:00.000Z',
        estimate: { filament_used_g: 12.34, filament_used_mm: 4100 },
      }),
    );
    publish(
      job({ id: 'b', status: 'failed', message: 'nozzle clogged', finished_at: '2026-11-27T10:00:30.000Z' }),
    );
    publish(job({ id: 'c', status: 'cancelled', message: 'cancelled by request' }));
    w.machine('m1', { state: 'paused' }, { busy: true });
    await waitFor(() => w.types().includes('job.paused'));
    expect(w.types()).toEqual(['job.started', 'job.completed', 'job.failed', 'job.cancelled', 'job.paused']);
    expect(w.noticed[1]?.data).toMatchObject({
      title: 'Completed: cube',
      message: 'cube (cube.gcode) completed on m1 after 1 h 05 min, 12.3 g of filament.',
      job: { id: 'a', duration_seconds: 3900, material: { filament_used_g: 12.34, filament_used_mm: 4100 } },
    });
    expect(w.noticed[2]?.data.message).toBe('cube (cube.gcode) failed on m1 after 30 s: nozzle clogged');
    expect(w.noticed[4]?.data.message).toBe('cube (cube.gcode) is paused on m1 at 42 %.');
    w.watch.close();
  });

  it('machine.awaiting_clear once the bed has waited awaiting_clear_minutes, not when cleared before', async () => {
    const w = watched({ awaitingClearMs: 50 });
    await w.watch.start();
    const since = new Date().toISOString();
    w.machine('m1', { state: 'idle' }, { awaiting_clear_since: since });
    w.machine('m2', { state: 'idle' }, { awaiting_clear_since: since });
    w.machine('m2', { state: 'idle' }, { awaiting_clear_since: null });
    await waitFor(() => w.types().includes('machine.awaiting_clear'));
    expect(w.noticed.map((n) => [n.event, n.machineId])).toEqual([['machine.awaiting_clear', 'm1']]);
    w.watch.close();
  });

  it('queue.waiting after queue_wait_minutes; queue.unroutable once when no machine can take a job any more', async () => {
    const waiting = job({ id: 'q', machine_id: null, status: 'queued', queued_at: new Date().toISOString() });
    const w = watched({ waiting: [{ job: waiting, machines: ['m1'] }], queueWaitMs: 50 });
    await w.watch.start();
    await waitFor(() => w.types().includes('queue.waiting'));
    w.setWaiting([{ job: waiting, machines: [] }]);
    w.machine('m1', { state: 'idle' });
    await waitFor(() => w.types().includes('queue.unroutable'));
    w.bus.publish({ type: 'queue.changed', machine_id: null, job_id: null, data: {} });
    w.machine('m1', { state: 'idle' }, { busy: true });
    await new Promise((resolve) => setImmediate(resolve));
    expect(w.types()).toEqual(['queue.waiting', 'queue.unroutable']);
    expect(w.noticed[1]?.data.title).toBe('No machine for: cube');
    w.watch.close();
  });

  it("on a farm, another instance's events notify nothing here, and a job it took stops waiting here", async () => {
    const queuedAt = new Date().toISOString();
    const taken = job({ id: 'q', machine_id: null, status: 'queued', queued_at: queuedAt });
    const left = job({ id: 'r', machine_id: null, status: 'queued', queued_at: queuedAt });
    const w = watched({
      waiting: [
        { job: taken, machines: ['b1'] },
        { job: left, machines: ['b1'] },
      ],
      queueWaitMs: 50,
    });
    await w.watch.start();
    // What the shared stream (events/shared.ts) hands this instance from instance "b".
    const fromB = (
      type: 'job.updated' | 'machine.state',
      data: Record<string, unknown>,
      jobId: string | null,
    ) =>
      w.bus.append({
        id: w.bus.lastId + 1,
        type,
        instance: 'b',
        time: new Date().toISOString(),
        machine_id: 'b1',
        job_id: jobId,
        data,
      });
    fromB('job.updated', { ...taken, machine_id: 'b1', status: 'slicing' }, 'q');
    fromB('job.updated', { ...taken, machine_id: 'b1', status: 'printing' }, 'q');
    fromB('job.updated', { ...taken, machine_id: 'b1', status: 'completed' }, 'q');
    fromB('machine.state', { state: { state: 'offline' }, busy: false, awaiting_clear_since: null }, null);
    // Both waits were armed together: the one for `q` would have fired first.
    await waitFor(() => w.types().includes('queue.waiting'));
    expect(w.noticed.map((n) => [n.event, n.data.job?.id ?? null])).toEqual([['queue.waiting', 'r']]);
    w.watch.close();
  });
});

const ntfy: TargetSettings = { name: 'n', kind: 'ntfy', url: 'https://ntfy.sh/t' };

describe('rules', () => {
  it('filters: events, machine ids and tags; events about no machine pass a machine filter; disabled gets nothing', () => {
    const tags = (id: string) => (id === 'x1' ? ['basement'] : []);
    const filtered: TargetSettings = { ...ntfy, events: ['job.failed'], machines: ['basement', 'y'] };
    const cases: [NotifyEvent, string | null, boolean][] = [
      ['job.failed', 'x1', true],
      ['job.failed', 'y', true],
      ['job.failed', 'z', false],
      ['job.completed', 'x1', false],
    ];
    for (const [event, machine, expected] of cases)
      expect(wants(filtered, event, machine, tags), `${event} ${machine}`).toBe(expected);
    expect(wants({ ...ntfy, machines: ['y'] }, 'queue.unroutable', null, tags)).toBe(true);
    expect(wants({ ...ntfy, enabled: false }, 'job.failed', 'x1', tags)).toBe(false);
  });

  it('quiet hours in a time zone, across midnight; only job.failed, machine.failed and machine.offline pass', () => {
    const quiet: TargetSettings = {
      ...ntfy,
      quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
    };
    // 21:30 UTC in November is 22:30 in Berlin (UTC+1): quiet. 06:30 UTC is 07:30: not.
    expect(inQuietHours(quiet, new Date('2026-11-27T21:30:00Z'))).toBe(true);
    expect(inQuietHours(quiet, new Date('2026-11-27T05:59:00Z'))).toBe(true);
    expect(inQuietHours(quiet, new Date('2026-11-27T06:00:00Z'))).toBe(false);
    expect(inQuietHours(quiet, new Date('2026-11-27T20:59:00Z'))).toBe(false);
    // In July Berlin is UTC+2: 20:30 UTC is 22:30.
    expect(inQuietHours(quiet, new Date('2026-07-01T20:30:00Z'))).toBe(true);
    const night = new Date('2026-11-27T23:00:00Z');
    const passing = (
      [
        'job.completed',
        'job.failed',
        'machine.failed',
        'machine.offline',
        'machine.online',
        'queue.waiting',
      ] as const
    ).filter((event) => passesQuietHours(quiet, event, night));
    expect(passing).toEqual(['job.failed', 'machine.failed', 'machine.offline']);
  });

  it('backoff doubles from retry_seconds with jitter, capped at an hour; Retry-After wins', () => {
    const settings: TargetSettings = { ...ntfy, retry_seconds: 10 };
    expect(backoffMs(settings, 1, undefined, 0.5)).toBe(10_000);
    expect(backoffMs(settings, 3, undefined, 0.5)).toBe(40_000);
    expect(backoffMs(settings, 3, undefined, 0)).toBe(32_000);
    expect(backoffMs(settings, 30, undefined, 1)).toBe(3_600_000);
    expect(backoffMs(settings, 3, 7)).toBe(7000);
    expect(backoffMs(settings, 3, 86_400)).toBe(3_600_000);
    expect(parseRetryAfter('120')).toBe(120);
    expect(parseRetryAfter('Fri, 27 Nov 2026 12:00:30 GMT', Date.parse('2026-11-27T12:00:00Z'))).toBe(30);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });

  it('what each kind needs, and messages that never echo a secret URL', () => {
    expect(
      targetProblem({ name: 'd', kind: 'discord', url: 'https://discord.com/api/webhooks/1/secret' }),
    ).toBeNull();
    const bad = targetProblem({ name: 'd', kind: 'discord', url: 'ftp://discord.com/api/webhooks/1/secret' });
    expect(bad).toBe('key "url": expected an http:// or https:// URL');
    expect(targetProblem({ name: 't', kind: 'telegram', chat_id: '1' })).toBe(
      'kind "telegram" needs key "bot_token"',
    );
    expect(targetProblem({ ...ntfy, url: 'https://user:pw@ntfy.sh/t' })).toMatch(/credentials in the URL/);
    expect(
      targetProblem({ name: 'e', kind: 'email', host: 'h', from: 'a@b', to: ['c@d'], username: 'u' }),
    ).toMatch(/both "username" and "password"/);
  });

  it('the API view hides the secret of every kind; recorded errors are scrubbed', () => {
    const discord = publicView({
      id: '1',
      source: 'api',
      settings: { name: 'd', kind: 'discord', url: 'https://discord.com/api/webhooks/1/tok' },
      createdAt: 'c',
      updatedAt: 'u',
    });
    expect(discord.url).toBeUndefined();
    expect(discord.secret_set).toBe(true);
    const mail = publicView({
      id: '2',
      source: 'api',
      settings: {
        name: 'e',
        kind: 'email',
        host: 'h',
        from: 'a@b',
        to: ['c@d'],
        username: 'u',
        password: 'pw-secret',
      },
      createdAt: 'c',
      updatedAt: 'u',
    });
    expect(JSON.stringify(mail)).not.toContain('pw-secret');
    expect(mail).toMatchObject({ username: 'u', secret_set: true });
    const telegram: TargetSettings = { name: 't', kind: 'telegram', bot_token: '123:abc', chat_id: '1' };
    expect(scrubbed('POST https://api.telegram.org/bot123:abc/sendMessage failed: 123:abc', telegram)).toBe(
      'POST https://api.telegram.org/bot***/sendMessage failed: ***',
    );
  });
});
