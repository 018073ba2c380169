/**
 * `GET /machines` on a busy service: 100 Noop machines, two of which keep slicing a 20k-triangle STL with
 * PrusaSlicer and four of which keep receiving 10 MB G-code uploads (each client sends its next job as soon
 * as the last is answered; prints take 0 s and clear their own bed). Slicers run as child processes and
 * uploads stream to disk, so the list's latency should stay that of an idle service (issue 20: p99 < 15 ms).
 * The notes count the jobs sent and answered during the run.
 */

import type { Scenario } from '../../../bench/scenario.js';
import { binaryStl, sphere } from '../test/design-fixtures.js';

type Start = (configToml: string) => Promise<{ baseUrl: string; stop(): Promise<void> }>;

const profile = new URL('../profiles/generic-fdm-0.4.ini', import.meta.url).pathname;
const IDLE = 94;
const SLICERS = 2;
const UPLOADERS = 4;

/** About `bytes` of plausible G-code. */
function gcode(bytes: number): Buffer {
  const lines = ['; bench part', 'G28', 'G90', 'M82', 'G92 E0'];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `G1 X${(i % 200) + 10}.${i % 10} Y${(i * 7) % 200}.5 E${(i * 0.0123).toFixed(4)}`;
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

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
      const stl = binaryStl(sphere(20, 71, 140));
      const file = gcode(10 * 1024 * 1024);
      // Jobs sent and answers by status, per kind (a slice is answered only once the machine has the job).
      const started: Record<string, number> = {};
      const done: Record<string, number> = {};
      let running = true;
      // One client per machine, each sending its next job as soon as the last one is answered.
      const submit = async (machineId: string, design: Buffer, fileName: string, kind: string) => {
        while (running) {
          started[kind] = (started[kind] ?? 0) + 1;
          const form = new FormData();
          form.append('params', JSON.stringify({ machine_id: machineId, job_name: kind }));
          form.append('file', new Blob([design]), fileName);
          const res = await fetch(`${service.baseUrl}/print`, { method: 'POST', body: form }).catch(
            () => null,
          );
          const body = (await res?.json().catch(() => null)) as { job_id?: string } | null;
          const key = `${kind} ${res?.status ?? 'error'}`;
          done[key] = (done[key] ?? 0) + 1;
          // A sliced job is answered once the machine has it; wait for it to finish before the next.
          if (body?.job_id) await untilFinal(service.baseUrl, body.job_id, () => running);
          if (!res) await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      const clients = [
        ...Array.from({ length: SLICERS }, (_, i) => submit(`slicer-${i}`, stl, 'part.stl', 'slices')),
        ...Array.from({ length: UPLOADERS }, (_, i) => submit(`upload-${i}`, file, 'part.gcode', 'uploads')),
      ];
      const notes: Record<string, string | number> = { machines: IDLE + SLICERS + UPLOADERS };
      // Filled in as the run goes: the harness prints the notes after measuring.
      const report = setInterval(() => {
        for (const [kind, count] of Object.entries(started)) notes[`${kind} sent`] = count;
        Object.assign(notes, done);
      }, 100);
      return {
        baseUrl: service.baseUrl,
        request: { path: '/machines' },
        notes,
        async teardown() {
          running = false;
          clearInterval(report);
          await Promise.all(clients);
          await service.stop();
        },
      };
    },
  };
}

/** Polls the job until it is completed, failed or cancelled (or the run ends). */
async function untilFinal(baseUrl: string, jobId: string, running: () => boolean): Promise<void> {
  while (running()) {
    const job = (await (await fetch(`${baseUrl}/jobs/${jobId}`)).json().catch(() => null)) as {
      status?: string;
    } | null;
    if (!job?.status || ['completed', 'failed', 'cancelled'].includes(job.status)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
