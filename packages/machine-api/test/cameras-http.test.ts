/**
 * Cameras over HTTP (`camera = { snapshot_url, stream_url }`), against a camera that speaks what
 * mjpg-streamer and IP cameras speak (test/sim/http-camera.ts): snapshots and streams are the camera's own
 * JPEG frames, one upstream serves every viewer, credentials never show, and a camera that hangs or
 * misbehaves fails only its own answers.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { readStreamFrames, readStreamToEnd } from './camera-client.js';
import { decodeJpeg } from './camera-frames.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { HttpCamera, type HttpCameraOptions } from './sim/http-camera.js';

let api: MachineApiUnderTest | undefined;
const cameras: HttpCamera[] = [];

afterEach(async () => {
  await api?.close();
  api = undefined;
  await Promise.all(cameras.splice(0).map((camera) => camera.close()));
});

async function camera(options: HttpCameraOptions = {}): Promise<HttpCamera> {
  const started = await HttpCamera.start(options);
  cameras.push(started);
  return started;
}

interface CameraInfo {
  available: boolean;
  kind: string;
  width: number | null;
  height: number | null;
  last_frame_at: string | null;
  reason: string | null;
}

const machine = (id: string, cameraToml: string) => `
[machines.${id}]
type = "Noop"
print_seconds = 0.3
camera = { ${cameraToml} }
`;

describe('an HTTP camera', () => {
  it('answers a snapshot with the JPEG the camera sent', async () => {
    const cam = await camera();
    api = await startMachineApi(machine('printer', `snapshot_url = "${cam.url}/snapshot.jpg"`));
    const response = await fetch(`${api.baseUrl}/machines/printer/snapshot`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.equals(cam.frame(1))).toBe(true);
    expect(decodeJpeg(body)).toEqual({ width: 64, height: 48 });
    const info = (await getJson<{ camera: CameraInfo }>(api.baseUrl, '/machines/printer')).camera;
    expect(info).toMatchObject({ available: true, kind: 'http', width: 64, height: 48, reason: null });
    expect(Date.parse(info.last_frame_at ?? '')).not.toBeNaN();
  });

  it('streams the camera’s frames as MJPEG', async () => {
    const cam = await camera();
    api = await startMachineApi(machine('printer', `stream_url = "${cam.url}/stream.mjpg"`));
    const { status, contentType, frames } = await readStreamFrames(
      `${api.baseUrl}/machines/printer/stream`,
      3,
    );
    expect(status).toBe(200);
    expect(contentType).toBe('multipart/x-mixed-replace; boundary=machine-api-frame');
    expect(frames).toHaveLength(3);
    for (const frame of frames) {
      const n = [...Array(cam.frameCount + 1).keys()].find((i) => i > 0 && cam.frame(i).equals(frame));
      expect(n).toBeGreaterThan(0);
      expect(decodeJpeg(frame)).toEqual({ width: 64, height: 48 });
    }
  });

  it('reads parts without Content-Length, splitting at the boundary', async () => {
    const cam = await camera({ contentLength: false });
    api = await startMachineApi(machine('printer', `stream_url = "${cam.url}/stream.mjpg"`));
    const { frames } = await readStreamFrames(`${api.baseUrl}/machines/printer/stream`, 2);
    expect(frames).toHaveLength(2);
    for (const frame of frames) expect(decodeJpeg(frame)).toEqual({ width: 64, height: 48 });
  });

  it('makes a snapshot from the stream when there is no snapshot URL', async () => {
    const cam = await camera();
    api = await startMachineApi(machine('printer', `stream_url = "${cam.url}/stream.mjpg"`));
    const response = await fetch(`${api.baseUrl}/machines/printer/snapshot`);
    expect(response.status).toBe(200);
    expect(decodeJpeg(Buffer.from(await response.arrayBuffer()))).toEqual({ width: 64, height: 48 });
    expect(cam.streamsOpened).toBe(1);
  });

  it('makes a stream of snapshots when there is no stream URL', async () => {
    const cam = await camera();
    api = await startMachineApi(machine('printer', `snapshot_url = "${cam.url}/snapshot.jpg"`));
    const { frames } = await readStreamFrames(`${api.baseUrl}/machines/printer/stream`, 2);
    expect(frames).toHaveLength(2);
    expect(frames[0]!.equals(frames[1]!)).toBe(false);
  });

  it('sends basic auth, and answers 502 without showing credentials when the camera refuses them', async () => {
    const cam = await camera({ auth: { username: 'viewer', password: 's3cret-pass' } });
    api = await startMachineApi(`
${machine('good', `snapshot_url = "${cam.url}/snapshot.jpg", username = "viewer", password = "s3cret-pass"`)}
${machine('inline', `snapshot_url = "http://viewer:s3cret-pass@${cam.url.slice(7)}/snapshot.jpg?token=t0ken-value"`)}
${machine('bad', `snapshot_url = "http://viewer:wrong-pass@${cam.url.slice(7)}/snapshot.jpg"`)}
`);
    expect((await fetch(`${api.baseUrl}/machines/good/snapshot`)).status).toBe(200);
    expect((await fetch(`${api.baseUrl}/machines/inline/snapshot`)).status).toBe(200);
    const refused = await fetch(`${api.baseUrl}/machines/bad/snapshot`);
    expect(refused.status).toBe(502);
    const body = (await refused.json()) as { error_code: string; message: string };
    expect(body.error_code).toBe('CameraBadAnswer');
    expect(body.message).toBe(
      `the camera at ${cam.url}/snapshot.jpg answered HTTP 401 (check username and password)`,
    );
    const listing = await (await fetch(`${api.baseUrl}/machines`)).text();
    expect(listing).toContain('answered HTTP 401');
    for (const secret of ['s3cret-pass', 'wrong-pass', 't0ken-value', 'viewer:']) {
      expect(listing).not.toContain(secret);
      expect(body.message).not.toContain(secret);
    }
    const openapi = await (await fetch(`${api.baseUrl}/openapi.json`)).text();
    expect(openapi).not.toContain('s3cret-pass');
  });

  it('answers 404 NoCamera for a machine without a camera, 404 NotFound for no machine', async () => {
    api = await startMachineApi('[machines.plain]\ntype = "Noop"\n');
    const snapshot = await fetch(`${api.baseUrl}/machines/plain/snapshot`);
    expect(snapshot.status).toBe(404);
    expect(await snapshot.json()).toMatchObject({
      error_code: 'NoCamera',
      message: 'machine "plain" has no camera',
    });
    const stream = await fetch(`${api.baseUrl}/machines/plain/stream`);
    expect(stream.status).toBe(404);
    expect(((await stream.json()) as { error_code: string }).error_code).toBe('NoCamera');
    expect((await fetch(`${api.baseUrl}/machines/nothing/snapshot`)).status).toBe(404);
    expect((await getJson<{ camera: unknown }>(api.baseUrl, '/machines/plain')).camera).toBeNull();
  });

  it('answers 503 for a camera that hangs, and the hang delays no other answer', async () => {
    const hanging = await camera();
    hanging.mode = 'hang';
    const working = await camera();
    api = await startMachineApi(`
${machine('hung', `snapshot_url = "${hanging.url}/snapshot.jpg", timeout_ms = 1500`)}
${machine('fine', `stream_url = "${working.url}/stream.mjpg"`)}
`);
    const hungSnapshot = fetch(`${api.baseUrl}/machines/hung/snapshot`);
    const hungStream = fetch(`${api.baseUrl}/machines/hung/stream`);
    // While both wait on the hung camera, everything else answers (each before the hung one does).
    let hungAnswered = false;
    void hungSnapshot.then(() => {
      hungAnswered = true;
    });
    expect((await fetch(`${api.baseUrl}/machines`)).status).toBe(200);
    expect((await fetch(`${api.baseUrl}/machines/hung`)).status).toBe(200);
    expect((await fetch(`${api.baseUrl}/machines/fine/snapshot`)).status).toBe(200);
    expect(hungAnswered).toBe(false);
    const answer = await hungSnapshot;
    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({
      error_code: 'CameraTimeout',
      message: 'the camera did not answer within 1500 ms',
    });
    const stream = await hungStream;
    expect(stream.status).toBe(200);
    await stream.arrayBuffer();
    const info = (await getJson<{ camera: CameraInfo }>(api.baseUrl, '/machines/hung')).camera;
    expect(info.available).toBe(false);
    expect(info.reason).toMatch(/did not answer within 1500 ms/);
  });
});

describe('one upstream per camera', () => {
  it('serves 50 concurrent viewers from one connection to the camera', async () => {
    const cam = await camera({ frameIntervalMs: 20 });
    api = await startMachineApi(machine('printer', `stream_url = "${cam.url}/stream.mjpg"`));
    const viewers = await Promise.all(
      Array.from({ length: 50 }, () => readStreamFrames(`${api!.baseUrl}/machines/printer/stream`, 3)),
    );
    for (const viewer of viewers) {
      expect(viewer.status).toBe(200);
      expect(viewer.frames).toHaveLength(3);
    }
    expect(cam.streamsOpened).toBe(1);
    // Snapshots meanwhile come from the same upstream, not a second connection.
    expect((await fetch(`${api.baseUrl}/machines/printer/snapshot`)).status).toBe(200);
    expect(cam.streamsOpened).toBe(1);
    expect(api.service.app.hasRoute({ method: 'GET', url: '/machines/:id/stream' })).toBe(true);
  });

  it('closes the upstream after the last viewer left (idle_close_seconds)', async () => {
    const cam = await camera();
    api = await startMachineApi(`
[cameras]
idle_close_seconds = 0.3
${machine('printer', `stream_url = "${cam.url}/stream.mjpg"`)}
`);
    await readStreamFrames(`${api.baseUrl}/machines/printer/stream`, 1);
    await waitFor(() => cam.openStreams === 0, { what: 'the upstream to close' });
    await readStreamFrames(`${api.baseUrl}/machines/printer/stream`, 1);
    expect(cam.streamsOpened).toBe(2);
  });
});

describe('hostile cameras end their own stream with a clear error', () => {
  const cases = [
    {
      mode: 'oversized' as const,
      reason: 'the camera sent a frame larger than max_frame_mib (1 MiB)',
    },
    {
      mode: 'no-boundary' as const,
      reason: "the camera's stream sent no multipart boundary within 1 MiB",
    },
    { mode: 'not-jpeg' as const, reason: "the camera's stream sent a part that is not a JPEG image" },
  ];
  for (const { mode, reason } of cases) {
    it(`${mode}: the stream ends, the snapshot answers 502, the camera reports why`, async () => {
      const hostile = await camera();
      hostile.mode = mode;
      const fine = await camera();
      api = await startMachineApi(`
[cameras]
max_frame_mib = 1
${machine('hostile', `stream_url = "${hostile.url}/stream.mjpg"`)}
${machine('fine', `stream_url = "${fine.url}/stream.mjpg"`)}
`);
      const ended = await readStreamToEnd(`${api.baseUrl}/machines/hostile/stream`);
      expect(ended).toEqual({ status: 200, frames: 0 });
      const info = (await getJson<{ camera: CameraInfo }>(api.baseUrl, '/machines/hostile')).camera;
      expect(info).toMatchObject({ available: false, reason });
      const snapshot = await fetch(`${api.baseUrl}/machines/hostile/snapshot`);
      expect(snapshot.status).toBe(502);
      expect(await snapshot.json()).toMatchObject({ error_code: 'CameraBadAnswer', message: reason });
      // The other camera is untouched.
      expect((await readStreamFrames(`${api.baseUrl}/machines/fine/stream`, 2)).frames).toHaveLength(2);
    });
  }
});
