/**
 * The pieces of the live state that HTTP cannot show without timing: the observer's change detection
 * (state/ready/progress changes once each, temperatures at most once per interval per machine), and the
 * SSE stream's heartbeat comment and its cut-off of a client that stops reading.
 */

import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
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

  it('reports a change held back by the interval once the interval ends, with the latest readings', async () => {
    const { observer, changes } = observerOf(['a'], 100);
    const reported = () =>
      changes
        .filter((c) => c.kind === 'temperatures')
        .map((c) => c.machine.status.temperatures.extruder?.current);
    observer.record('a', status('idle', null, 25));
    observer.record('a', status('idle', null, 26));
    observer.record('a', status('idle', null, 27));
    expect(reported()).toEqual([25]);
    await new Promise((resolve) => setTimeout(resolve, 250));
    // One report at the end of the interval, carrying the newest readings; nothing more while unchanged.
    expect(reported()).toEqual([25, 27]);
    observer.close();
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
    const stream = new EventStream(response as unknown as ServerResponse, new EventHistory(), {
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
    // Streams write what was published every FLUSH_MS (10 ms); this waits for the next flush.
    const turn = () => new Promise((resolve) => setTimeout(resolve, 50));
    const bus = new EventHistory();
    const response = new FakeResponse();
    const stream = new EventStream(response as unknown as ServerResponse, bus, {
      filter: {},
      after: null,
      heartbeatMs: 60_000,
      maxBufferedBytes: 100,
      retryMs: 2000,
    });
    bus.publish({ type: 'queue.changed', machine_id: null, job_id: null, data: { reason: 'queued' } });
    await turn();
    expect(response.text).toContain('data: {"id":');
    response.writableLength = 101;
    bus.publish({ type: 'queue.changed', machine_id: null, job_id: null, data: { reason: 'queued' } });
    await turn();
    expect(response.destroyed).toBe(true);
    expect(stream.isClosed).toBe(true);
  });
});
