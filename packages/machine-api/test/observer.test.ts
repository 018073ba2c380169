/**
 * The pieces of the live state that HTTP cannot show without timing: the observer's change detection
 * (state/ready/progress changes once each, temperatures at most once per interval per machine), and the
 * SSE stream's heartbeat comment and its cut-off of a client that stops reading.
 */

import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventHistory } from '../src/events/history.js';
import { EventStream } from '../src/events/sse.js';
import type { MachineStatus } from '../src/machines/machine.js';
import { type MachineChange, MachineObserver } from '../src/machines/observer.js';
import type { MachineRegistry } from '../src/machines/registry.js';
import { waitFor } from './harness.js';

function status(state: 'idle' | 'running', progress: number | null, extruder: number): MachineStatus {
  return {
    state: { state },
    progress,
    temperatures: { extruder: { current: extruder, target: 210 } },
    extra: null,
  };
}

function observerOf(ids: string[], temperatureIntervalMs: number) {
  // Only what the observer reads of the registry: the machines and their status.
  const registry = {
    machines: ids.map((id) => ({ id, machine: { id } })),
    statuses: async () => ids.map(() => status('idle', null, 25)),
  } as unknown as MachineRegistry;
  const observer = new MachineObserver(registry, {
    statusTimeoutMs: 100,
    pollIntervalMs: 60_000,
    temperatureIntervalMs,
    logger: pino({ level: 'silent' }),
  });
  const changes: MachineChange[] = [];
  observer.onChange((change) => changes.push(change));
  return { observer, changes };
}

describe('the machine observer', () => {
  it('reports state, readiness and progress changes once each, and nothing for a repeated status', () => {
    const { observer, changes } = observerOf(['m'], 0);
    observer.record('m', status('idle', null, 25));
    observer.record('m', status('idle', null, 25));
    observer.setBusy('m', true);
    observer.record('m', status('running', 10, 25));
    observer.record('m', status('running', 20, 25));
    observer.record('m', status('running', 20, 25));
    observer.setBusy('m', false);
    observer.setAwaitingClear('m', '2026-01-01T00:00:00.000Z');
    observer.record('m', status('idle', null, 25));
    observer.setAwaitingClear('m', null);
    const kinds = changes.filter((c) => c.kind !== 'temperatures').map((c) => [c.kind, c.machine.ready]);
    expect(kinds).toEqual([
      ['state', true],
      ['state', false],
      ['state', false],
      ['progress', false],
      ['state', false],
      ['state', false],
      ['state', false],
      ['state', true],
    ]);
    expect(observer.current('m')).toMatchObject({ ready: true, busy: false, awaitingClearSince: null });
  });

  it('reports temperature changes at most once per interval per machine, keeping the latest in the snapshot', () => {
    const { observer, changes } = observerOf(['a', 'b'], 60_000);
    for (let t = 0; t < 50; t++) {
      observer.record('a', status('idle', null, 25 + t));
      observer.record('b', status('idle', null, 30 + t));
    }
    const temperatures = changes.filter((c) => c.kind === 'temperatures');
    expect(temperatures.map((c) => c.machine.id)).toEqual(['a', 'b']);
    expect(observer.current('a')?.status.temperatures.extruder?.current).toBe(74);
  });

  describe('with a clock of its own', () => {
    beforeEach(() => vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] }));
    afterEach(() => vi.useRealTimers());

    it('reports a change held back by the interval once the interval ends, with the latest readings', () => {
      const { observer, changes } = observerOf(['a'], 100);
      const reported = () =>
        changes
          .filter((c) => c.kind === 'temperatures')
          .map((c) => c.machine.status.temperatures.extruder?.current);
      observer.record('a', status('idle', null, 25));
      observer.record('a', status('idle', null, 26));
      observer.record('a', status('idle', null, 27));
      expect(reported()).toEqual([25]);
      vi.advanceTimersByTime(100);
      // One report at the end of the interval, carrying the newest readings; nothing more while unchanged.
      expect(reported()).toEqual([25, 27]);
      vi.advanceTimersByTime(1000);
      expect(reported()).toEqual([25, 27]);
      observer.close();
    });

    /** Records a new extruder reading for 'a' at each of `times` (ms from now); the report times. */
    function readAt(times: number[]): number[] {
      const { observer, changes } = observerOf(['a'], 1000);
      const last = 25 + times.length - 1;
      const start = Date.now();
      const reports: number[] = [];
      observer.onChange((change) => {
        if (change.kind === 'temperatures') reports.push(Date.now() - start);
      });
      for (const [i, t] of times.entries()) {
        vi.advanceTimersByTime(start + t - Date.now());
        observer.record('a', status('idle', null, 25 + i));
      }
      vi.advanceTimersByTime(5000);
      observer.close();
      const reported = changes.filter((c) => c.kind === 'temperatures');
      expect(reported).toHaveLength(reports.length);
      // The last reading is reported in the end, held back or not.
      expect(reported.at(-1)?.machine.status.temperatures.extruder?.current).toBe(last);
      return reports;
    }

    it('reports each reading of a device that reads once an interval when it arrives, also one that comes a little early', () => {
      const times = [0, 920, 2050, 2880, 4000, 4990, 6150, 6900, 8000];
      expect(readAt(times)).toEqual(times);
    });

    it('holds a device that reads faster to one report per interval on average, never two within half an interval', () => {
      const reports = readAt(Array.from({ length: 240 }, (_, i) => i * 250));
      // In the 60 s of readings: one report a second, plus the one the tolerance lets through early.
      const inMinute = reports.filter((t) => t < 60_000).length;
      expect(inMinute).toBeGreaterThanOrEqual(59);
      expect(inMinute).toBeLessThanOrEqual(61);
      for (let i = 1; i < reports.length; i++) {
        expect(reports[i]! - reports[i - 1]!).toBeGreaterThanOrEqual(500);
        if (i >= 2) expect(reports[i]! - reports[i - 2]!).toBeGreaterThan(1000);
      }
    });
  });

  it('remembers since when a machine is offline', () => {
    const { observer } = observerOf(['m'], 0);
    observer.record('m', { ...status('idle', null, 25), state: { state: 'offline' } });
    const since = observer.current('m')?.offlineSince;
    expect(since).toEqual(expect.any(Number));
    observer.record('m', { ...status('idle', null, 25), state: { state: 'offline' } });
    expect(observer.current('m')?.offlineSince).toBe(since);
    observer.record('m', status('idle', null, 25));
    expect(observer.current('m')?.offlineSince).toBeNull();
  });
});

/** Just enough of a `ServerResponse` for the stream: written text, a buffer size, close and end. */
class FakeResponse extends EventEmitter {
  text = '';
  writableLength = 0;
  writableEnded = false;
  destroyed = false;
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

describe('an SSE stream', () => {
  it('sends a heartbeat comment while nothing happens', async () => {
    const response = new FakeResponse();
    const stream = new EventStream(response as unknown as ServerResponse, new EventHistory('test'), {
      filter: {},
      after: null,
      heartbeatMs: 10,
      maxBufferedBytes: 1024,
      retryMs: 2000,
    });
    try {
      expect(response.text).toBe('retry: 2000\n\n');
      await waitFor(() => response.text.includes(': heartbeat\n\n'), { what: 'a heartbeat' });
    } finally {
      stream.close();
    }
    expect(response.writableEnded).toBe(true);
  });

  it('drops a client that stops reading instead of buffering without bound', async () => {
    const bus = new EventHistory('test');
    const response = new FakeResponse();
    const stream = new EventStream(response as unknown as ServerResponse, bus, {
      filter: {},
      after: null,
      heartbeatMs: 60_000,
      maxBufferedBytes: 100,
      retryMs: 2000,
    });
    // Streams write what was published at their next flush (every FLUSH_MS).
    bus.publish({ type: 'queue.changed', machine_id: null, job_id: null, data: { reason: 'queued' } });
    await waitFor(() => response.text.includes('data: {"id":'), { what: 'the first event' });
    expect(response.destroyed).toBe(false);
    response.writableLength = 101;
    bus.publish({ type: 'queue.changed', machine_id: null, job_id: null, data: { reason: 'queued' } });
    await waitFor(() => response.destroyed, { what: 'the stream to drop the client' });
    expect(stream.isClosed).toBe(true);
  });
});
