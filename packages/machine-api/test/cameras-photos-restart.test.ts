/**
 * The photo of a print that was on its printer when machine-api stopped: a Klipper printer keeps printing
 * from its virtual SD card while the service is down. Stopped normally, the service fails the job and
 * photographs it as it stops; killed (`kill -9`), the next run follows the print again (the printer went
 * on with it) and photographs it when it ends.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeJpeg } from './camera-frames.js';
import { crash, serveDirInChild } from './child-service.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { HttpCamera } from './sim/http-camera.js';
import { MoonrakerSim } from './sim/moonraker.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

interface JobAnswer {
  status: string;
  message: string | null;
}

/** A Klipper printer with a webcam in Moonraker's registry, and the service's configuration for it. */
async function printerWithWebcam(): Promise<{ toml: string; camera: HttpCamera; printer: MoonrakerSim }> {
  const printer = await MoonrakerSim.start();
  cleanup.push(() => printer.close());
  const camera = await HttpCamera.start();
  cleanup.push(() => camera.close());
  printer.setWebcams([{ name: 'bed', service: 'mjpegstreamer', snapshot_url: '/snapshot.jpg' }]);
  const toml = `
[machines.voron]
type = "Moonraker"
endpoint = "${printer.endpoint}"
variant = "Generic"
poll_interval_seconds = 0.2
camera_base_url = "${camera.url}"
`;
  return { toml, camera, printer };
}

async function startPrint(baseUrl: string): Promise<string> {
  const response = await postPrint(baseUrl, { machineId: 'voron', jobName: 'benchy', file: 'G28\nG1 X10\n' });
  expect(response.status).toBe(200);
  const { job_id: id } = (await response.json()) as { job_id: string };
  await waitFor(async () => (await getJson<JobAnswer>(baseUrl, `/jobs/${id}`)).status === 'printing', {
    what: 'the job to be printing',
  });
  return id;
}

async function photoOf(api: MachineApiUnderTest, id: string): Promise<Buffer> {
  return waitFor(
    async () => {
      const response = await fetch(`${api.baseUrl}/jobs/${id}/photo`);
      return response.status === 200 ? Buffer.from(await response.arrayBuffer()) : undefined;
    },
    { what: `the photo of job ${id}` },
  );
}

describe('job photos across a restart', () => {
  it('photographs a print the service left on its printer when it was stopped', async () => {
    const { toml, camera } = await printerWithWebcam();
    const api = await startMachineApi(toml);
    cleanup.push(() => api.close());
    const id = await startPrint(api.baseUrl);
    await api.service.close();

    const again = await startMachineApi(toml, { dir: api.dir });
    cleanup.push(() => again.close());
    expect(await getJson<JobAnswer>(again.baseUrl, `/jobs/${id}`)).toMatchObject({
      status: 'failed',
      message: 'machine-api stopped while the print was running; its outcome was not observed',
    });
    const photo = await photoOf(again, id);
    expect(decodeJpeg(photo)).toEqual({ width: 64, height: 48 });
    expect(camera.snapshots).toBeGreaterThanOrEqual(1);
  });

  it('photographs a print a killed run left on its printer when it ends, followed by the next run', async () => {
    const { toml, camera, printer } = await printerWithWebcam();
    const dir = await mkdtemp(join(tmpdir(), 'machine-api-photo-crash-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'machine-api.toml'), toml);
    const first = await serveDirInChild(dir);
    cleanup.push(() => crash(first));
    const id = await startPrint(first.url);
    const snapshotsBefore = camera.snapshots;
    await crash(first);
    expect(camera.snapshots).toBe(snapshotsBefore); // the killed run took no photo

    const again = await startMachineApi(toml, { dir });
    cleanup.push(() => again.close());
    expect(await getJson<JobAnswer>(again.baseUrl, `/jobs/${id}`)).toMatchObject({ status: 'printing' });
    printer.advance(1);
    await waitFor(
      async () => (await getJson<JobAnswer>(again.baseUrl, `/jobs/${id}`)).status === 'completed',
      {
        what: 'the print to complete',
      },
    );
    const photo = await photoOf(again, id);
    expect(decodeJpeg(photo)).toEqual({ width: 64, height: 48 });
    expect(camera.snapshots).toBe(snapshotsBefore + 1);
  });
});
