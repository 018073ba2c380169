/**
 * A Bambu Lab X1 Carbon's own camera, the RTSPS stream, through the real service and a real ffmpeg: the
 * printer's camera is the RTSP-over-TLS fixture of test/sim/bambu-rtsps-camera.ts, serving H.264 that
 * ffmpeg made from its test pattern. Snapshots and streams carry ffmpeg's JPEG frames of that video, one
 * RTSP session serves every viewer, a wrong access code is refused with the documented error, and a printer
 * that goes away ends the stream cleanly without leaving an ffmpeg process behind.
 */

import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imageSize } from 'image-size';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStreamFrames } from './camera-client.js';
import { decodeJpeg, mjpegPartsWithEnd } from './camera-frames.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { BambuPrinterSim } from './sim/bambu.js';
import { BambuRtspsCameraSim, makeTestH264, STREAM_PATH } from './sim/bambu-rtsps-camera.js';

const SERIAL = '00M09A350100001';

function requireFfmpeg(): void {
  try {
    execFileSync('ffmpeg', ['-hide_banner', '-version'], { stdio: 'ignore' });
  } catch {
    throw new Error('ffmpeg is not installed; the RTSPS camera tests need it: apt-get install ffmpeg');
  }
}

let workDir: string;
let printer: BambuPrinterSim;
let camera: BambuRtspsCameraSim;
let api: MachineApiUnderTest;
/** The camera's port, kept: a closed server has no address. */
let cameraPort: number;

beforeAll(async () => {
  requireFfmpeg();
  workDir = await mkdtemp(join(tmpdir(), 'machine-api-rtsps-'));
  const video = await makeTestH264(workDir);
  printer = await BambuPrinterSim.start({ serial: SERIAL, modelCode: 'BL-P001' });
  camera = await BambuRtspsCameraSim.start({ video, accessCode: printer.accessCode });
  cameraPort = camera.port;
  api = await startMachineApi(`
[cameras]
timeout_ms = 8000
idle_close_seconds = 0.2
[machines.x1c]
type = "Bambu"
name = "X1C"
host = "127.0.0.1"
serial = "${SERIAL}"
access_code = "${printer.accessCode}"
mqtt_port = ${printer.mqttPort}
ftps_port = ${printer.ftpsPort}
rtsp_port = ${cameraPort}
`);
  await waitFor(async () => (await getJson<{ camera: unknown }>(api.baseUrl, '/machines/x1c')).camera, {
    what: 'the printer to be connected',
  });
});

afterAll(async () => {
  await api?.close();
  await camera?.close();
  await printer?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** The ffmpeg processes reading this test's camera (found by the camera's URL on their command line). */
async function ffmpegProcesses(): Promise<number[]> {
  const needle = `@127.0.0.1:${cameraPort}${STREAM_PATH}`;
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.startsWith('ffmpeg') || cmdline.includes('/ffmpeg\0')) {
      if (cmdline.includes(needle)) found.push(Number(name));
    }
  }
  return found;
}

async function noFfmpegLeft(): Promise<void> {
  await waitFor(async () => (await ffmpegProcesses()).length === 0, { what: 'no ffmpeg process left' });
}

function expectJpeg320x240(jpeg: Buffer): void {
  expect(jpeg.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  expect(jpeg.subarray(-2)).toEqual(Buffer.from([0xff, 0xd9]));
  expect(imageSize(jpeg)).toMatchObject({ type: 'jpg', width: 320, height: 240 });
  expect(decodeJpeg(jpeg)).toEqual({ width: 320, height: 240 });
}

describe('a Bambu X1 camera (RTSPS through ffmpeg)', () => {
  it('answers 502 CameraBadAnswer when the printer refuses the access code, and never shows it', async () => {
    camera.accessCode = '87654321'; // the access code was changed on the printer's screen
    const refusedBefore = camera.refused;
    const response = await fetch(`${api.baseUrl}/machines/x1c/snapshot`);
    const body = (await response.json()) as { message: string };
    expect(response.status).toBe(502);
    expect(body).toEqual({
      request_id: response.headers.get('x-request-id'),
      error_code: 'CameraBadAnswer',
      message: `the printer's camera at rtsps://127.0.0.1:${cameraPort} refused the access code (Server returned 401 Unauthorized (authorization failed)): check the access code and that LAN-only liveview is on`,
    });
    expect(camera.refused - refusedBefore).toBe(2); // the challenge, then the wrong credentials
    const info = (await getJson<{ camera: Record<string, unknown> }>(api.baseUrl, '/machines/x1c')).camera;
    expect(info).toMatchObject({ available: false, reason: body.message });
    expect(JSON.stringify(info)).not.toContain(printer.accessCode);
    await noFfmpegLeft();
  });

  it('answers a snapshot with a JPEG of the printer’s H.264 video once the access code is right', async () => {
    camera.accessCode = printer.accessCode; // set right again on the printer
    const [refusedBefore, methodsBefore] = [camera.refused, camera.methods.length];
    const snapshot = await fetch(`${api.baseUrl}/machines/x1c/snapshot`);
    expect(snapshot.status).toBe(200);
    expect(snapshot.headers.get('content-type')).toBe('image/jpeg');
    expectJpeg320x240(Buffer.from(await snapshot.arrayBuffer()));
    // ffmpeg was challenged (401) and then answered with `bblp` and the access code.
    expect(camera.refused - refusedBefore).toBe(1);
    expect(camera.methods.slice(methodsBefore, methodsBefore + 5)).toEqual([
      'OPTIONS',
      'DESCRIBE',
      'DESCRIBE',
      'SETUP',
      'PLAY',
    ]);
    const info = (await getJson<{ camera: Record<string, unknown> }>(api.baseUrl, '/machines/x1c')).camera;
    expect(info).toMatchObject({
      available: true,
      kind: 'bambu-rtsps',
      width: 320,
      height: 240,
      reason: null,
    });
    // Nobody watches: the upstream (ffmpeg and its RTSP session) closes after idle_close_seconds.
    await noFfmpegLeft();
    await waitFor(async () => camera.openConnections === 0, { what: 'the RTSP session to be closed' });
  });

  it('streams multipart JPEG frames to several viewers over one RTSP session', async () => {
    const playsBefore = camera.plays;
    const viewers = await Promise.all(
      Array.from({ length: 3 }, () => readStreamFrames(`${api.baseUrl}/machines/x1c/stream`, 3)),
    );
    for (const viewer of viewers) {
      expect(viewer.status).toBe(200);
      expect(viewer.contentType).toBe('multipart/x-mixed-replace; boundary=machine-api-frame');
      expect(viewer.frames).toHaveLength(3);
      for (const frame of viewer.frames) expectJpeg320x240(frame);
    }
    expect(camera.plays - playsBefore).toBe(1);
    await noFfmpegLeft();
  });

  it('ends the stream cleanly when the printer goes away mid-stream, leaving no ffmpeg behind', async () => {
    const response = await fetch(`${api.baseUrl}/machines/x1c/stream`);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let received = Buffer.alloc(0);
    const frames = () => [...mjpegPartsWithEnd(received, 'machine-api-frame')].length;
    while (frames() === 0) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended before its first frame');
      received = Buffer.concat([received, value]);
    }
    expect(await ffmpegProcesses()).toHaveLength(1);
    await camera.close(); // the printer is switched off

    // The body ends (no network error), every part in it whole.
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      received = Buffer.concat([received, value]);
    }
    for (const [frame] of mjpegPartsWithEnd(received, 'machine-api-frame')) expectJpeg320x240(frame);
    await noFfmpegLeft();
    const info = (await getJson<{ camera: Record<string, unknown> }>(api.baseUrl, '/machines/x1c')).camera;
    expect(info).toMatchObject({ available: false });
    expect(info.reason).toMatch(
      new RegExp(`^the printer's camera at rtsps://127\\.0\\.0\\.1:${cameraPort} ended the stream`),
    );
    expect(info.reason).not.toContain(printer.accessCode);
  });
});
