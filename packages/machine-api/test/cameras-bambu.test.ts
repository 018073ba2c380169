/**
 * A Bambu Lab P1S's own camera: the TLS JPEG stream (port 6000 on the printer, a port of the test's
 * choosing here) authenticated with the LAN access code, through the real service. One connection to the
 * printer's camera serves every viewer; a wrong access code, a peer sending garbage (inside TLS or instead
 * of it) and an oversized frame each end that camera's upstream with a clear error, and nothing else.
 */

import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readStreamFrames } from './camera-client.js';
import { decodeJpeg } from './camera-frames.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { BambuPrinterSim } from './sim/bambu.js';
import { BambuCameraSim } from './sim/bambu-camera.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const SERIAL = '01P00A000000001';

async function startP1s(): Promise<{ api: MachineApiUnderTest; camera: BambuCameraSim }> {
  const printer = await BambuPrinterSim.start({ serial: SERIAL, modelCode: 'C12', reportMode: 'delta' });
  cleanup.push(() => printer.close());
  const camera = await BambuCameraSim.start({ accessCode: printer.accessCode });
  cleanup.push(() => camera.close());
  const api = await startMachineApi(`
[cameras]
timeout_ms = 3000
[machines.p1s]
type = "Bambu"
name = "P1S"
host = "127.0.0.1"
serial = "${SERIAL}"
access_code = "${printer.accessCode}"
mqtt_port = ${printer.mqttPort}
ftps_port = ${printer.ftpsPort}
camera_port = ${camera.port}
`);
  cleanup.push(() => api.close());
  await waitFor(async () => (await getJson<{ camera: unknown }>(api.baseUrl, '/machines/p1s')).camera, {
    what: 'the printer to be connected',
  });
  return { api, camera };
}

async function snapshotError(api: MachineApiUnderTest): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${api.baseUrl}/machines/p1s/snapshot`);
  return { status: response.status, body: await response.json() };
}

describe('a Bambu P1/A1 camera', () => {
  it('answers snapshots and streams with the printer’s JPEG frames over one TLS connection', async () => {
    const { api, camera } = await startP1s();
    const snapshot = await fetch(`${api.baseUrl}/machines/p1s/snapshot`);
    expect(snapshot.status).toBe(200);
    expect(snapshot.headers.get('content-type')).toBe('image/jpeg');
    const jpeg = Buffer.from(await snapshot.arrayBuffer());
    expect([1, 2, 3, 4].some((n) => camera.frame(n).equals(jpeg))).toBe(true);
    expect(decodeJpeg(jpeg)).toEqual({ width: 128, height: 72 });

    const viewers = await Promise.all(
      Array.from({ length: 10 }, () => readStreamFrames(`${api.baseUrl}/machines/p1s/stream`, 3)),
    );
    for (const viewer of viewers) {
      expect(viewer.frames).toHaveLength(3);
      for (const frame of viewer.frames) expect(decodeJpeg(frame)).toEqual({ width: 128, height: 72 });
    }
    expect(camera.connections).toBe(1);
    const info = (await getJson<{ camera: Record<string, unknown> }>(api.baseUrl, '/machines/p1s')).camera;
    expect(info).toMatchObject({ available: true, kind: 'bambu-jpeg', width: 128, height: 72, reason: null });
  });

  it('ends the upstream with a clear error for a wrong access code, garbage, an oversized frame or no TLS', async () => {
    const { api, camera } = await startP1s();
    camera.accessCode = 'reset-on-the-printer';
    const refused = await snapshotError(api);
    expect(refused).toEqual({
      status: 502,
      body: expect.objectContaining({
        error_code: 'CameraBadAnswer',
        message: `the printer's camera at 127.0.0.1:${camera.port} closed the connection without sending a frame: check the access code and that LAN-only liveview is on`,
      }),
    });
    expect(JSON.stringify(refused.body)).not.toContain('12345678');
    expect(camera.refused).toBe(1);
    camera.accessCode = '12345678';

    camera.mode = 'garbage';
    const garbage = await snapshotError(api);
    expect(garbage.status).toBe(502);
    expect((garbage.body as { message: string }).message).toMatch(
      /^the printer's camera at 127\.0\.0\.1:\d+ (announced a frame of \d+ bytes, over max_frame_mib \(16 MiB\)|sent a frame that is not a JPEG image)$/,
    );

    camera.mode = 'oversized';
    expect(await snapshotError(api)).toEqual({
      status: 502,
      body: expect.objectContaining({
        message: `the printer's camera at 127.0.0.1:${camera.port} announced a frame of 67108864 bytes, over max_frame_mib (16 MiB)`,
      }),
    });
    const info = (await getJson<{ camera: Record<string, unknown> }>(api.baseUrl, '/machines/p1s')).camera;
    expect(info).toMatchObject({ available: false, reason: expect.stringContaining('67108864 bytes') });
    // The rest of the service is untouched.
    expect((await fetch(`${api.baseUrl}/machines`)).status).toBe(200);

    // Something that does not speak TLS at all answers on the camera port.
    const port = camera.port;
    await camera.close();
    const plain = createServer((socket) => {
      socket.resume();
      socket.end('220 hello, this is not TLS\r\n'.repeat(20));
    });
    await new Promise<void>((resolve) => plain.listen(port, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => plain.close(() => resolve())));
    const noTls = await snapshotError(api);
    expect(noTls.status).toBe(502);
    expect((noTls.body as { message: string }).message).toBe(
      `the printer's camera at 127.0.0.1:${port} broke the TLS session (ERR_SSL_WRONG_VERSION_NUMBER)`,
    );
    // The service let go of the connection.
    const open = () => new Promise<number>((resolve) => plain.getConnections((_e, count) => resolve(count)));
    await waitFor(async () => (await open()) === 0, { what: 'the connection to be closed' });
  });
});
