/**
 * `POST /print` of a 100 MB G-code file, one upload at a time, streamed from disk by the client as
 * `curl -F` would send it, against a bare node:http server streaming the same request to disk
 * (upload-baseline.ts), in the same run. Measures MB/s of request body (best of the runs, each side), and
 * the service's resident memory sampled every 20 ms during its uploads (its peak, and before the first).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { MeasuredScenario } from '../../../bench/scenario.js';
import { freePort } from '../../../bench/service-process.js';
import { residentMB } from './proc.js';

type Start = (
  configToml: string,
  options?: { server?: string },
) => Promise<{ baseUrl: string; pid?: number | undefined; stop(): Promise<void> }>;

const FILE_MB = 100;
const RUNS = 3;
const BOUNDARY = '----machine-api-bench-upload';

/** Writes about `bytes` of plausible G-code (a zig-zag of extrusion moves) to `path`. */
async function writeGcode(path: string, bytes: number): Promise<void> {
  const out = createWriteStream(path);
  out.write('; bench part\nG28\nG90\nM82\nG92 E0\n');
  let size = 0;
  for (let i = 0; size < bytes; ) {
    const lines: string[] = [];
    for (let k = 0; k < 10_000; k++, i++) {
      lines.push(`G1 X${(i % 200) + 10}.${i % 10} Y${(i * 7) % 200}.5 E${(i * 0.0123).toFixed(4)}\n`);
    }
    const chunk = lines.join('');
    size += chunk.length;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  out.end();
  await finished(out);
}

/** Sends the multipart body (params, then the file streamed from disk); resolves with the status. */
function upload(
  url: string,
  file: string,
): Promise<{ status: number; seconds: number; sentSeconds: number }> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="params"\r\n\r\n` +
      `${JSON.stringify({ machine_id: 'big', job_name: 'bench' })}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.gcode"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const length = head.length + statSync(file).size + tail.length;
  const began = performance.now();
  let sentSeconds = Number.NaN;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': length },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, seconds: (performance.now() - began) / 1000, sentSeconds }),
        );
      },
    );
    req.on('error', reject);
    req.on('finish', () => {
      sentSeconds = (performance.now() - began) / 1000;
    });
    req.write(head);
    const body = createReadStream(file);
    body.on('error', reject);
    body.on('end', () => req.end(tail));
    body.pipe(req, { end: false });
  });
}

async function startBaseline(dir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = fork(new URL('./upload-baseline.ts', import.meta.url).pathname, [
    String(port),
    dir,
  ]);
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`upload baseline exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/print`,
    stop: () => new Promise<void>((resolve) => child.once('exit', () => resolve()).kill()),
  };
}

export function uploadScenario(startMachineApi: Start): MeasuredScenario {
  return {
    name: `machine-api POST /print ${FILE_MB} MB G-code (one at a time, Noop)`,
    kind: 'measured',
    async run() {
      const dir = mkdtempSync(join(tmpdir(), 'machine-api-upload-'));
      const file = join(dir, 'big.gcode');
      await writeGcode(file, FILE_MB * 1e6);
      const bytes = statSync(file).size;
      try {
        const baseline = await startBaseline(dir);
        let baseBest = 0;
        try {
          for (let i = 0; i < RUNS; i++) {
            const { seconds } = await upload(baseline.url, file);
            baseBest = Math.max(baseBest, bytes / 1e6 / seconds);
          }
        } finally {
          await baseline.stop();
        }
        const service = await startMachineApi(
          '[machines.big]\ntype = "Noop"\nnozzle_diameter = 0.4\nprint_seconds = 0\nauto_clear = true\n',
        );
        try {
          const pid = service.pid;
          if (pid === undefined) throw new Error('the service process has no pid');
          const rssBefore = residentMB(pid).now;
          let rssPeak = rssBefore;
          const sampler = setInterval(() => {
            rssPeak = Math.max(rssPeak, residentMB(pid).now);
          }, 20);
          let best = 0;
          let sentBest = 0;
          const statuses = new Set<number>();
          try {
            for (let i = 0; i < RUNS; i++) {
              const { status, seconds, sentSeconds } = await upload(`${service.baseUrl}/print`, file);
              statuses.add(status);
              best = Math.max(best, bytes / 1e6 / seconds);
              sentBest = Math.max(sentBest, bytes / 1e6 / sentSeconds);
              // The Noop machine prints for 0 s and clears itself; let it before the next upload.
              await new Promise((resolve) => setTimeout(resolve, 500));
            }
          } finally {
            clearInterval(sampler);
          }
          return {
            'file MB': Math.round(bytes / 1e6),
            'upload MB/s': best,
            'base MB/s': baseBest,
            ratio: best / baseBest,
            // Until the last byte was handed to the socket: how fast the service reads, before the job
            // is checked and handed to the machine (which POST /print answers after).
            'body sent MB/s': sentBest,
            statuses: [...statuses].join(' '),
            'server RSS MB before': Math.round(rssBefore),
            'server RSS MB peak': Math.round(rssPeak),
          };
        } finally {
          await service.stop();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
