/**
 * Farm queue dispatch latency: 100 Noop machines, 200 queued jobs, and the time from sending `POST
 * /machines/{id}/clear` until the `queue.changed` event saying the next job was dispatched to that machine
 * arrives on `GET /events` (so it includes the clear's HTTP round trip and the event stream). Timed with its
 * own loop (target p99 < 100 ms): one clear at a time over all 200 jobs, then all 100 machines cleared at
 * once. The numbers are printed and attached to the harness's row; the harness then measures `GET /queue`
 * with 50 jobs waiting over 100 machines.
 */

import type { Scenario } from '../../../bench/scenario.js';

type StartMachineApi = (configToml: string) => Promise<{ baseUrl: string; stop(): Promise<void> }>;

const MACHINES = 100;
const JOBS = 200;
const LISTED = 50;
const GCODE = 'G28\nG1 X10 Y10 Z0.2 F3000\nG1 X20 E1\n';

interface FarmEvent {
  type: string;
  machine_id: string | null;
  job_id: string | null;
  data: Record<string, unknown>;
}

/** Reads `GET /events` and resolves waiters on matching events. */
class EventWatcher {
  private waiters: { match: (event: FarmEvent) => boolean; resolve: (at: number) => void }[] = [];
  private readonly controller = new AbortController();
  readonly completed = new Set<string>();

  static async open(baseUrl: string): Promise<EventWatcher> {
    const watcher = new EventWatcher();
    const response = await fetch(`${baseUrl}/events?types=queue.changed,job.updated`, {
      signal: watcher.controller.signal,
    });
    if (!response.ok || !response.body) throw new Error(`GET /events answered ${response.status}`);
    void watcher.read(response.body);
    return watcher;
  }

  /** Resolves with `performance.now()` at the arrival of the first event matching `match`. */
  next(match: (event: FarmEvent) => boolean): Promise<number> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  close(): void {
    this.controller.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        const at = performance.now();
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (!data) continue;
          const event = JSON.parse(data.slice(6)) as FarmEvent;
          if (event.type === 'job.updated' && event.data.status === 'completed' && event.job_id) {
            this.completed.add(event.job_id);
          }
          this.waiters = this.waiters.filter((waiter) => {
            if (!waiter.match(event)) return true;
            waiter.resolve(at);
            return false;
          });
        }
      }
    } catch {
      // aborted
    }
  }
}

async function post(baseUrl: string, path: string, body?: FormData): Promise<unknown> {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', body });
  const json = (await response.json()) as unknown;
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

function queueForm(name: string): FormData {
  const form = new FormData();
  form.append('params', JSON.stringify({ job_name: name }));
  form.append('file', new Blob([GCODE]), 'part.gcode');
  return form;
}

const machineId = (i: number) => `farm-${String(i).padStart(3, '0')}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function summary(latencies: number[]): { p50: string; p99: string; max: string } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50).toFixed(1),
    p99: percentile(sorted, 99).toFixed(1),
    max: (sorted.at(-1) ?? Number.NaN).toFixed(1),
  };
}

/** Occupies every machine's bed (a direct print each) so the next jobs wait for a clear. */
async function occupyAll(baseUrl: string, watcher: EventWatcher): Promise<void> {
  const ids = await Promise.all(
    Array.from({ length: MACHINES }, async (_, i) => {
      const form = new FormData();
      form.append('params', JSON.stringify({ machine_id: machineId(i), job_name: 'occupant' }));
      form.append('file', new Blob([GCODE]), 'part.gcode');
      return ((await post(baseUrl, '/print', form)) as { job_id: string }).job_id;
    }),
  );
  await waitUntil(() => ids.every((id) => watcher.completed.has(id)));
}

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

async function queueJobs(baseUrl: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push(((await post(baseUrl, '/queue', queueForm(`job ${i}`))) as { id: string }).id);
  return ids;
}

/** Clears `machine` and returns ms until the dispatch of a job to it was announced; and that job. */
async function clearAndTime(baseUrl: string, watcher: EventWatcher, machine: string) {
  let jobId = '';
  const dispatched = watcher.next((event) => {
    const hit =
      event.type === 'queue.changed' && event.data.reason === 'dispatched' && event.machine_id === machine;
    if (hit) jobId = event.job_id ?? '';
    return hit;
  });
  const started = performance.now();
  await post(baseUrl, `/machines/${machine}/clear`);
  const at = await dispatched;
  return { ms: at - started, jobId };
}

export function queueScenario(startMachineApi: StartMachineApi): Scenario {
  return {
    name: `machine-api GET /queue (${LISTED} waiting, ${MACHINES} Noop) + dispatch latency after clear`,
    connections: 8,
    async prepare() {
      const config = Array.from(
        { length: MACHINES },
        (_, i) =>
          `[machines.${machineId(i)}]\ntype = "Noop"\nprint_seconds = 0\nnozzle_diameter = 0.4\nfilaments = [{ material = { type = "pla" } }]\n`,
      ).join('\n');
      const service = await startMachineApi(config);
      const watcher = await EventWatcher.open(service.baseUrl);
      try {
        await occupyAll(service.baseUrl, watcher);
        await queueJobs(service.baseUrl, JOBS);

        // One clear at a time, round-robin over the machines, until all 200 jobs were dispatched.
        const sequential: number[] = [];
        const lastJob = new Map<string, string>();
        for (let i = 0; i < JOBS; i++) {
          const machine = machineId(i % MACHINES);
          const previous = lastJob.get(machine);
          if (previous) await waitUntil(() => watcher.completed.has(previous));
          const { ms, jobId } = await clearAndTime(service.baseUrl, watcher, machine);
          sequential.push(ms);
          lastJob.set(machine, jobId);
        }
        await waitUntil(() => [...lastJob.values()].every((id) => watcher.completed.has(id)));

        // Every machine cleared at once, with 100 jobs waiting.
        await queueJobs(service.baseUrl, MACHINES);
        const burst = await Promise.all(
          Array.from({ length: MACHINES }, (_, i) => clearAndTime(service.baseUrl, watcher, machineId(i))),
        );
        const burstIds = burst.map((each) => each.jobId);
        await waitUntil(() => burstIds.every((id) => watcher.completed.has(id)));

        // For the harness: jobs waiting again (every bed awaits a clear); 50, as the baseline server is
        // handed the answer on its command line.
        await queueJobs(service.baseUrl, LISTED);
        const one = summary(sequential);
        const all = summary(burst.map((each) => each.ms));
        process.stderr.write(
          `  dispatch after clear, one at a time (${sequential.length}): p50 ${one.p50} ms, p99 ${one.p99} ms, max ${one.max} ms\n` +
            `  dispatch after clear, ${MACHINES} at once: p50 ${all.p50} ms, p99 ${all.p99} ms, max ${all.max} ms\n`,
        );
        return {
          baseUrl: service.baseUrl,
          request: { path: '/queue' },
          notes: {
            'dispatch p50 ms': one.p50,
            'dispatch p99 ms': one.p99,
            'burst p99 ms': all.p99,
            'burst max ms': all.max,
          },
          teardown: async () => {
            watcher.close();
            await service.stop();
          },
        };
      } catch (error) {
        watcher.close();
        await service.stop();
        throw error;
      }
    },
  };
}
