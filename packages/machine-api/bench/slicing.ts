/**
 * Slicing overhead: `POST /print` of a 50k-triangle STL to a Noop machine that slices with PrusaSlicer
 * (upload, design checks, slicer run, job bookkeeping, until the job is `completed`) against running
 * `prusa-slicer` directly on the same file with the same profile. Slicing takes seconds, so this is timed
 * with its own loop (alternating runs, medians) rather than with autocannon; the numbers are printed and
 * attached to the harness's row as notes, and the harness then measures `GET /jobs/{id}` of the last job.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scenario } from '../../../bench/scenario.js';
import { binaryStl, sphere } from '../test/design-fixtures.js';

/** Starts the built service from a TOML config (the shared helper of scenarios.ts). */
type StartMachineApi = (configToml: string) => Promise<{ baseUrl: string; stop(): Promise<void> }>;
const profile = new URL('../profiles/generic-fdm-0.4.ini', import.meta.url).pathname;
const ROUNDS = Number(process.env.BENCH_SLICING_ROUNDS ?? 5);

/** Seconds for one direct run of the slicer, with the arguments the service uses. */
function sliceDirectly(stlPath: string, outputPath: string): Promise<number> {
  const started = process.hrtime.bigint();
  const args = ['--loglevel', '1', '--load', profile, '--center', '110,110', '--export-gcode', '--output'];
  return new Promise((resolve, reject) => {
    const child = spawn('prusa-slicer', [...args, outputPath, stlPath], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`prusa-slicer exited with ${code}`));
      resolve(Number(process.hrtime.bigint() - started) / 1e9);
    });
  });
}

/** Seconds from sending `POST /print` until the job is `completed`; returns the job id too. */
async function printThroughService(
  baseUrl: string,
  stl: Buffer,
): Promise<{ seconds: number; jobId: string }> {
  const started = process.hrtime.bigint();
  const form = new FormData();
  form.append('params', JSON.stringify({ machine_id: 'slicer', job_name: 'bench' }));
  form.append('file', new Blob([stl]), 'sphere.stl');
  const response = await fetch(`${baseUrl}/print`, { method: 'POST', body: form });
  const body = (await response.json()) as { job_id?: string };
  if (!response.ok || !body.job_id)
    throw new Error(`POST /print answered ${response.status}: ${JSON.stringify(body)}`);
  for (;;) {
    const job = (await (await fetch(`${baseUrl}/jobs/${body.job_id}`)).json()) as { status: string };
    if (job.status === 'completed') break;
    if (job.status === 'failed' || job.status === 'cancelled') throw new Error(`job ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, jobId: body.job_id };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The scenario, starting the service with `startMachineApi`. */
export const slicingScenario = (startMachineApi: StartMachineApi): Scenario => ({
  name: 'machine-api POST /print 50k-triangle STL, sliced (vs prusa-slicer direct)',
  connections: 4,
  async prepare() {
    const dir = mkdtempSync(join(tmpdir(), 'machine-api-bench-slicing-'));
    const triangles = sphere(20, 126, 200);
    const stl = binaryStl(triangles);
    const stlPath = join(dir, 'sphere.stl');
    writeFileSync(stlPath, stl);
    const service = await startMachineApi(
      `[machines.slicer]\ntype = "Noop"\nprint_seconds = 0\nauto_clear = true\nslicer = { type = "Prusa", config = "${profile}" }\n`,
    );
    try {
      // One warm-up of each (page cache, first spawn), then alternating rounds so drift hits both alike.
      await sliceDirectly(stlPath, join(dir, 'direct.gcode'));
      let { jobId } = await printThroughService(service.baseUrl, stl);
      const direct: number[] = [];
      const viaService: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        direct.push(await sliceDirectly(stlPath, join(dir, 'direct.gcode')));
        const run = await printThroughService(service.baseUrl, stl);
        viaService.push(run.seconds);
        jobId = run.jobId;
      }
      const ratio = median(viaService) / median(direct);
      process.stderr.write(
        `  prusa-slicer direct: median ${median(direct).toFixed(3)} s [${direct.map((s) => s.toFixed(3)).join(', ')}]\n` +
          `  POST /print → completed: median ${median(viaService).toFixed(3)} s [${viaService.map((s) => s.toFixed(3)).join(', ')}]\n` +
          `  overhead ratio ${ratio.toFixed(3)} (target ≤ 1.05)\n`,
      );
      return {
        baseUrl: service.baseUrl,
        request: { path: `/jobs/${jobId}` },
        notes: {
          triangles: triangles.length,
          stl_bytes: stl.length,
          direct_s: median(direct).toFixed(3),
          service_s: median(viaService).toFixed(3),
          slicing_overhead_ratio: ratio.toFixed(3),
        },
        teardown: async () => {
          await service.stop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  },
});
