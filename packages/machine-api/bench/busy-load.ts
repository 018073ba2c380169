/**
 * The load of the busy scenario (forked by busy.ts): one client per slicing machine and per uploading
 * machine, each sending its next job as soon as the last one is answered (and, for a slice, finished).
 * It runs in its own process so that building and sending 10 MB bodies does not share the event loop of
 * the client measuring `GET /machines`: that would add the load generator's own pauses to every latency,
 * the bare server's as much as the service's. argv: base URL, slicing machines, uploading machines.
 * Messages: {ready} once started; on {report} the jobs sent and answers by status; on {stop} it waits
 * for the jobs in flight and exits.
 */

import { binaryStl, sphere } from '../test/design-fixtures.js';

const [baseUrl, slicersArg, uploadersArg] = process.argv.slice(2) as [string, string, string];

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

const stl = binaryStl(sphere(20, 71, 140));
const file = gcode(10 * 1024 * 1024);
// Jobs sent and answers by status, per kind (a slice is answered only once the machine has the job).
const counts: Record<string, number> = {};
let running = true;

const submit = async (machineId: string, design: Buffer, fileName: string, kind: string) => {
  while (running) {
    counts[`${kind} sent`] = (counts[`${kind} sent`] ?? 0) + 1;
    const form = new FormData();
    form.append('params', JSON.stringify({ machine_id: machineId, job_name: kind }));
    form.append('file', new Blob([design]), fileName);
    const res = await fetch(`${baseUrl}/print`, { method: 'POST', body: form }).catch(() => null);
    const body = (await res?.json().catch(() => null)) as { job_id?: string } | null;
    const key = `${kind} ${res?.status ?? 'error'}`;
    counts[key] = (counts[key] ?? 0) + 1;
    // A sliced job is answered once the machine has it; wait for it to finish before the next.
    if (body?.job_id) await untilFinal(body.job_id);
    if (!res) await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** Polls the job until it is completed, failed or cancelled (or the run ends). */
async function untilFinal(jobId: string): Promise<void> {
  while (running) {
    const job = (await (await fetch(`${baseUrl}/jobs/${jobId}`)).json().catch(() => null)) as {
      status?: string;
    } | null;
    if (!job?.status || ['completed', 'failed', 'cancelled'].includes(job.status)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const clients = [
  ...Array.from({ length: Number(slicersArg) }, (_, i) => submit(`slicer-${i}`, stl, 'part.stl', 'slices')),
  ...Array.from({ length: Number(uploadersArg) }, (_, i) =>
    submit(`upload-${i}`, file, 'part.gcode', 'uploads'),
  ),
];

process.on('message', (message: { report?: boolean; stop?: boolean }) => {
  if (message.report) process.send?.({ ...counts });
  if (message.stop) {
    running = false;
    void Promise.all(clients).then(() => process.exit(0));
  }
});
process.send?.({ ready: true });
