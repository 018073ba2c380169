/**
 * Klipper printers' cameras, found in Moonraker's webcam registry (`/server/webcams/list`) the way
 * Mainsail and Fluidd find them: relative URLs resolve against the printer's web host (`camera_base_url`),
 * flip and rotation are reported, and a change announced with `notify_webcams_changed` is followed.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { readStreamFrames } from './camera-client.js';
import { decodeJpeg } from './camera-frames.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { HttpCamera } from './sim/http-camera.js';
import { MoonrakerSim } from './sim/moonraker.js';

let api: MachineApiUnderTest | undefined;
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  await api?.close();
  api = undefined;
  for (const close of closers.splice(0)) await close();
});

async function parts(): Promise<{ sim: MoonrakerSim; cam: HttpCamera }> {
  const sim = await MoonrakerSim.start();
  const cam = await HttpCamera.start();
  closers.push(
    () => sim.close(),
    () => cam.close(),
  );
  return { sim, cam };
}

const printer = (sim: MoonrakerSim, baseUrl?: string) => `
[machines.voron]
type = "Moonraker"
endpoint = "${sim.endpoint}"
variant = "Generic"
poll_interval_seconds = 0.2
${baseUrl ? `camera_base_url = "${baseUrl}"` : ''}
`;

interface Machine {
  camera: Record<string, unknown> | null;
}

describe('Moonraker webcams', () => {
  it('uses the first enabled webcam, resolving relative URLs against camera_base_url', async () => {
    const { sim, cam } = await parts();
    sim.setWebcams([
      { name: 'off', enabled: false, stream_url: 'http://127.0.0.1:9/nothing' },
      {
        name: 'bed',
        service: 'mjpegstreamer',
        stream_url: '/stream.mjpg',
        snapshot_url: '/snapshot.jpg?user=secret-query',
        flip_horizontal: true,
        rotation: 90,
      },
    ]);
    api = await startMachineApi(printer(sim, cam.url));
    const camera = await waitFor(
      async () => (await getJson<Machine>(api!.baseUrl, '/machines/voron')).camera ?? undefined,
      { what: 'the webcam to be found' },
    );
    expect(camera).toEqual({
      available: true,
      kind: 'moonraker',
      width: null,
      height: null,
      last_frame_at: null,
      reason: null,
      flip_horizontal: true,
      flip_vertical: false,
      rotation: 90,
    });
    const snapshot = await fetch(`${api.baseUrl}/machines/voron/snapshot`);
    expect(snapshot.status).toBe(200);
    expect(Buffer.from(await snapshot.arrayBuffer()).equals(cam.frame(1))).toBe(true);
    expect(cam.snapshots).toBe(1);
    const { frames } = await readStreamFrames(`${api.baseUrl}/machines/voron/stream`, 2);
    expect(frames).toHaveLength(2);
    for (const frame of frames) expect(decodeJpeg(frame)).toEqual({ width: 64, height: 48 });
    expect(cam.streamsOpened).toBe(1);
    expect(await (await fetch(`${api.baseUrl}/machines`)).text()).not.toContain('secret-query');
  });

  it('follows notify_webcams_changed to a new webcam', async () => {
    const { sim, cam } = await parts();
    const other = await HttpCamera.start();
    closers.push(() => other.close());
    sim.setWebcams([{ service: 'mjpegstreamer', snapshot_url: `${cam.url}/snapshot.jpg` }]);
    api = await startMachineApi(printer(sim));
    await waitFor(async () => (await fetch(`${api!.baseUrl}/machines/voron/snapshot`)).status === 200, {
      what: 'the first webcam',
    });
    expect(cam.snapshots).toBe(1);
    // Absolute URLs are used as they are; the change arrives over the websocket.
    sim.setWebcams([{ service: 'mjpegstreamer', snapshot_url: `${other.url}/snapshot.jpg`, rotation: 180 }]);
    await waitFor(
      async () => (await getJson<Machine>(api!.baseUrl, '/machines/voron')).camera?.rotation === 180,
      { what: 'the changed registry' },
    );
    // The kept frame may answer for up to a second; then the new webcam does.
    await waitFor(
      async () =>
        (await fetch(`${api!.baseUrl}/machines/voron/snapshot`)).status === 200 && other.snapshots > 0,
      { what: 'a snapshot of the new webcam' },
    );
  });

  it('makes the stream of snapshots for a WebRTC webcam, whose stream URL is not MJPEG', async () => {
    const { sim, cam } = await parts();
    sim.setWebcams([
      { service: 'webrtc-camerastreamer', stream_url: '/webrtc', snapshot_url: '/snapshot.jpg' },
    ]);
    api = await startMachineApi(printer(sim, cam.url));
    await waitFor(async () => (await getJson<Machine>(api!.baseUrl, '/machines/voron')).camera, {
      what: 'the webcam',
    });
    const { frames } = await readStreamFrames(`${api.baseUrl}/machines/voron/stream`, 2);
    expect(frames).toHaveLength(2);
    expect(cam.streamsOpened).toBe(0);
    expect(cam.snapshots).toBeGreaterThanOrEqual(2);
  });

  it('reports no camera for a printer without webcams, and why for one it cannot use', async () => {
    const { sim } = await parts();
    api = await startMachineApi(printer(sim));
    await waitFor(() => sim.requests.some((request) => request.path === '/server/webcams/list'), {
      what: 'the registry to be read',
    });
    expect((await getJson<Machine>(api.baseUrl, '/machines/voron')).camera).toBeNull();
    const snapshot = await fetch(`${api.baseUrl}/machines/voron/snapshot`);
    expect(snapshot.status).toBe(404);
    expect(((await snapshot.json()) as { error_code: string }).error_code).toBe('NoCamera');
    sim.setWebcams([{ name: 'hls', service: 'hlsstream', stream_url: '/hls', snapshot_url: '' }]);
    const camera = await waitFor(
      async () => (await getJson<Machine>(api!.baseUrl, '/machines/voron')).camera ?? undefined,
      { what: 'the unusable webcam to be reported' },
    );
    expect(camera).toMatchObject({
      available: false,
      kind: 'moonraker',
      reason: 'the webcam "hls" (hlsstream) has no usable snapshot or MJPEG stream URL',
    });
  });
});
