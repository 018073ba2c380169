/**
 * `GET /machines` on a busy service: 100 Noop machines, two of which keep slicing a 20k-triangle STL with
 * PrusaSlicer and four of which keep receiving 10 MB G-code uploads (each client sends its next job as soon
 * as the last is answered; prints take 0 s and clear their own bed). Slicers run as child processes and
 * uploads stream to disk, so the list's latency should stay that of an idle service (issue 20: p99 < 15 ms).
 * The slicing and uploading clients run in a process of their own (busy-load.ts), not beside the client
 * that measures, and at the lowest priority (see below). The notes count the jobs sent and answered
 * during the run.
 */

import { fork } from 'node:child_process';
import type { Scenario } from '../../../bench/scenario.js';

type Start = (configToml: string) => Promise<{ baseUrl: string; stop(): Promise<void> }>;

const profile = new URL('../profiles/generic-fdm-0.4.ini', import.meta.url).pathname;
const IDLE = 94;
const SLICERS = 2;
const UPLOADERS = 4;
const LOAD_NICENESS = 19;

export function busyScenario(startMachineApi: Start): Scenario {
  return {
    name: `machine-api GET /machines (100 Noop) while ${SLICERS} slices and ${UPLOADERS} uploads run`,
    async prepare() {
      const tables: string[] = [];
      for (let i = 0; i < IDLE; i++) {
        tables.push(`[machines.idle-${String(i).padStart(2, '0')}]\ntype = "Noop"\nnozzle_diameter = 0.4\n`);
      }
      for (let i = 0; i < SLICERS; i++) {
        tables.push(
          `[machines.slicer-${i}]\ntype = "Noop"\nprint_seconds = 0\nauto_clear = true\n` +
            `slicer = { type = "Prusa", config = "${profile}" }\n`,
        );
      }
      for (let i = 0; i < UPLOADERS; i++) {
        tables.push(
          `[machines.upload-${i}]\ntype = "Noop"\nprint_seconds = 0\nauto_clear = true\nnozzle_diameter = 0.4\n`,
        );
      }
      const service = await startMachineApi(tables.join('\n'));
      // The upload clients stand for people on other computers: their CPU (building and sending 10 MB
      // bodies over and over) is not the farm server's, yet on this 2-core host it took the cores from the
      // service and from autocannon alike (the bare server's p99 rose with the service's). They run at
      // nice 19, as the slicers do, from the start so that all their threads inherit it: they still get
      // every idle cycle, and the load on the service (2 slices, 4 uploads) is the same.
      const load = fork(
        new URL('./busy-load.ts', import.meta.url).pathname,
        [service.baseUrl, String(SLICERS), String(UPLOADERS)],
        { execPath: 'nice', execArgv: ['-n', String(LOAD_NICENESS), process.execPath, ...process.execArgv] },
      );
      await new Promise((resolve, reject) => {
        load.once('message', resolve);
        load.once('exit', (code) => reject(new Error(`load process exited with ${code}`)));
      });
      const notes: Record<string, string | number> = { machines: IDLE + SLICERS + UPLOADERS };
      // Filled in as the run goes: the harness prints the notes after measuring.
      const onCounts = (counts: Record<string, number>) => Object.assign(notes, counts);
      load.on('message', onCounts);
      const report = setInterval(() => load.send({ report: true }), 100);
      return {
        baseUrl: service.baseUrl,
        request: { path: '/machines' },
        notes,
        async teardown() {
          clearInterval(report);
          await new Promise<void>((resolve) => {
            load.once('exit', () => resolve());
            load.send({ stop: true });
          });
          await service.stop();
        },
      };
    },
  };
}
