/**
 * `GET /events` with 1 000 subscribers while 100 printers change every second: 100 simulated Moonraker
 * printers (the test simulator, in this process) each set a new extruder temperature once a second, spread
 * evenly over the second; machine-api follows them over their websockets and publishes
 * `machine.temperatures` events. Two forked processes hold the subscribers (half take every event, a
 * quarter filter by type, a quarter by machine). Measured over the window:
 * - delivery delay from the printer's change to each subscriber's receipt (`change→receipt`), and from
 *   the event's publication to receipt (`publish→receipt`): p50, p99, max; and, once per event, from the
 *   change to the publication (`change→publish`: the simulator, the backend and the observer);
 * - the service process's CPU (user + system, from /proc) as % of one core, and its resident memory.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { MeasuredScenario } from '../../../bench/scenario.js';
import { MoonrakerSim } from '../test/sim/moonraker.js';
import { cpuWindow, percentile, residentMB } from './proc.js';

type Start = (
  configToml: string,
) => Promise<{ baseUrl: string; pid?: number | undefined; stop(): Promise<void> }>;

const PRINTERS = 100;
const SUBSCRIBERS = 1000;
const WORKERS = 2;
const CHANGE_EVERY_MS = 1000;

interface Report {
  change: number[];
  publish: number[];
  /** Per event, once: from the change to the publication (the first worker only). */
  changeToPublish: number[];
  events: number;
}

function startWorker(baseUrl: string, first: number, count: number): Promise<ChildProcess> {
  const worker = fork(new URL('./events-subscribers.ts', import.meta.url).pathname, [
    baseUrl,
    String(first),
    String(count),
  ]);
  return new Promise((resolve, reject) => {
    worker.once('message', () => resolve(worker));
    worker.once('exit', (code) => reject(new Error(`subscriber process exited with ${code}`)));
  });
}

function report(worker: ChildProcess): Promise<Report> {
  return new Promise((resolve) => {
    worker.once('message', (message) => resolve(message as Report));
    worker.send({ report: true });
  });
}

async function waitUntil(probe: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export function eventsScenario(startMachineApi: Start): MeasuredScenario {
  return {
    name: `machine-api GET /events (${SUBSCRIBERS} subscribers, ${PRINTERS} printers changing every second)`,
    kind: 'measured',
    async run({ seconds }) {
      const window = Math.max(seconds, 10) * 1000;
      const sims = await Promise.all(Array.from({ length: PRINTERS }, () => MoonrakerSim.start()));
      const tables = sims.map(
        (sim, i) =>
          `[machines.klipper-${String(i).padStart(2, '0')}]\ntype = "Moonraker"\nendpoint = "${sim.endpoint}"\n` +
          'variant = "Generic"\nnozzle_diameter = 0.4\nfilaments = []\n',
      );
      const service = await startMachineApi(tables.join('\n'));
      const workers: ChildProcess[] = [];
      const timers: NodeJS.Timeout[] = [];
      try {
        const pid = service.pid;
        if (pid === undefined) throw new Error('the service process has no pid');
        await waitUntil(async () => {
          const listed = (await (await fetch(`${service.baseUrl}/machines`)).json()) as {
            state: { state: string };
          }[];
          return listed.every((machine) => machine.state.state === 'idle');
        }, 'every printer to be followed');
        const perWorker = SUBSCRIBERS / WORKERS;
        for (let w = 0; w < WORKERS; w++) {
          workers.push(await startWorker(service.baseUrl, w * perWorker, perWorker));
        }
        // The change's wall-clock millisecond, encoded in the temperature (see events-subscribers.ts).
        const change = (sim: MoonrakerSim) => sim.setTemperature('extruder', (Date.now() % 1e6) / 1000);
        for (const [i, sim] of sims.entries()) {
          timers.push(
            setTimeout(
              () => {
                change(sim);
                timers.push(setInterval(() => change(sim), CHANGE_EVERY_MS));
              },
              (i * CHANGE_EVERY_MS) / PRINTERS,
            ),
          );
        }
        // Warm-up, then the measured window.
        await new Promise((resolve) => setTimeout(resolve, 2000));
        await Promise.all(workers.map(report));
        const cpu = cpuWindow(pid);
        const began = performance.now();
        await new Promise((resolve) => setTimeout(resolve, window));
        const cpuPercent = cpu();
        const elapsedSeconds = (performance.now() - began) / 1000;
        const memory = residentMB(pid);
        const reports = await Promise.all(workers.map(report));
        const changeDelays = reports.flatMap((r) => r.change).sort((a, b) => a - b);
        const publishDelays = reports.flatMap((r) => r.publish).sort((a, b) => a - b);
        const changeToPublish = reports.flatMap((r) => r.changeToPublish).sort((a, b) => a - b);
        const events = reports.reduce((sum, r) => sum + r.events, 0);
        return {
          subscribers: SUBSCRIBERS,
          printers: PRINTERS,
          'window s': Math.round(elapsedSeconds),
          'events received/s (all subscribers)': Math.round(events / elapsedSeconds),
          'temperature events measured': changeDelays.length,
          'change→receipt p50 ms': percentile(changeDelays, 0.5),
          'change→receipt p99 ms': percentile(changeDelays, 0.99),
          'change→receipt max ms': changeDelays.at(-1) ?? Number.NaN,
          'change→publish p50 ms': percentile(changeToPublish, 0.5),
          'change→publish p99 ms': percentile(changeToPublish, 0.99),
          'change→publish max ms': changeToPublish.at(-1) ?? Number.NaN,
          'publish→receipt p50 ms': percentile(publishDelays, 0.5),
          'publish→receipt p99 ms': percentile(publishDelays, 0.99),
          'server CPU % of one core': Math.round(cpuPercent),
          'server RSS MB': Math.round(memory.now),
        };
      } finally {
        for (const timer of timers) clearTimeout(timer);
        for (const worker of workers) {
          worker.send({ stop: true });
        }
        await service.stop();
        await Promise.all(sims.map((sim) => sim.close()));
      }
    },
  };
}
