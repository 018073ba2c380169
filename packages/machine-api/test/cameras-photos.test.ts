/**
 * The photo of every finished print (`GET /jobs/{id}/photo`), and the cameras' routes behind API keys
 * (scope `read`), with the camera's credentials never in an answer or a log line.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../src/keys-command.js';
import { startService } from '../src/service.js';
import { readStreamFrames } from './camera-client.js';
import { decodeJpeg } from './camera-frames.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { HttpCamera } from './sim/http-camera.js';

const cleanup: (() => Promise<void>)[] = [];
let api: MachineApiUnderTest | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  for (const step of cleanup.splice(0).reverse()) await step();
});

const GCODE = 'G28\nG1 X10 Y10\n';

describe('job photos', () => {
  it('keeps a photo of a completed job and of a cancelled one; none without a camera', async () => {
    const camera = await HttpCamera.start();
    cleanup.push(() => camera.close());
    api = await startMachineApi(`
[machines.quick]
type = "Noop"
print_seconds = 0.3
camera = { snapshot_url = "${camera.url}/snapshot.jpg" }

[machines.slow]
type = "Noop"
print_seconds = 600
camera = { snapshot_url = "${camera.url}/snapshot.jpg" }

[machines.blind]
type = "Noop"
print_seconds = 0.3
`);
    const start = async (machineId: string) => {
      const response = await postPrint(api!.baseUrl, { machineId, jobName: machineId, file: GCODE });
      expect(response.status).toBe(200);
      return ((await response.json()) as { job_id: string }).job_id;
    };
    const finished = async (id: string, status: string) =>
      waitFor(
        async () => (await getJson<{ status: string }>(api!.baseUrl, `/jobs/${id}`)).status === status,
        {
          what: `job ${id} ${status}`,
        },
      );
    const photo = (id: string) =>
      waitFor(
        async () => {
          const response = await fetch(`${api!.baseUrl}/jobs/${id}/photo`);
          return response.status === 200 ? response : undefined;
        },
        { what: `the photo of job ${id}` },
      );

    const done = await start('quick');
    await finished(done, 'completed');
    const completedPhoto = await photo(done);
    expect(completedPhoto.headers.get('content-type')).toBe('image/jpeg');
    const jpeg = Buffer.from(await completedPhoto.arrayBuffer());
    expect(decodeJpeg(jpeg)).toEqual({ width: 64, height: 48 });
    expect([...Array(8).keys()].some((n) => camera.frame(n + 1).equals(jpeg))).toBe(true);

    const stopped = await start('slow');
    await finished(stopped, 'printing');
    expect((await fetch(`${api.baseUrl}/jobs/${stopped}/cancel`, { method: 'POST' })).status).toBe(200);
    await finished(stopped, 'cancelled');
    expect((await photo(stopped)).status).toBe(200);

    const unseen = await start('blind');
    await finished(unseen, 'completed');
    const none = await fetch(`${api.baseUrl}/jobs/${unseen}/photo`);
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({
      error_code: 'NoPhoto',
      message: `job "${unseen}" has no photo`,
    });
    const unknown = await fetch(`${api.baseUrl}/jobs/00000000-0000-4000-8000-000000000000/photo`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error_code: string }).error_code).toBe('NotFound');
    const hostile = await fetch(`${api.baseUrl}/jobs/..%2F..%2Fetc%2Fpasswd/photo`);
    expect(hostile.status).toBe(404);
  });
});

describe('camera routes behind API keys', () => {
  it('need a read key, and never show the camera’s credentials in answers or logs', async () => {
    const camera = await HttpCamera.start({ auth: { username: 'cam', password: 'pa55-in-url' } });
    cleanup.push(() => camera.close());
    const dir = await mkdtemp(join(tmpdir(), 'machine-api-camera-keys-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const lines: string[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk, _encoding, callback) {
          lines.push(String(chunk));
          callback();
        },
      }),
    );
    const host = camera.url.slice('http://'.length);
    await writeFile(
      join(dir, 'machine-api.toml'),
      `[server]
auth = "keys"
[cameras]
timeout_ms = 2000
[machines.cam]
type = "Noop"
camera = { snapshot_url = "http://cam:pa55-in-url@${host}/snapshot.jpg", stream_url = "http://cam:pa55-in-url@${host}/stream.mjpg" }
[machines.wrong]
type = "Noop"
camera = { snapshot_url = "http://${host}/snapshot.jpg", username = "cam", password = "not-the-pa55" }
`,
    );
    const dataDir = join(dir, 'data');
    const service = await startService({
      configPath: join(dir, 'machine-api.toml'),
      dataDir,
      host: '127.0.0.1',
      port: 0,
      logger,
      mdnsDefault: false,
    });
    cleanup.push(() => service.close());
    let key = '';
    await runKeysCommand(['create'], {
      dataDir,
      name: 'viewer',
      scope: 'read',
      out: (text) => {
        key += text;
      },
    });
    key = /mapi_[A-Za-z0-9_-]+/.exec(key)?.[0] ?? key.trim();
    for (const path of ['/machines/cam/snapshot', '/machines/cam/stream', '/jobs/x/photo']) {
      const anonymous = await fetch(`${service.url}${path}`);
      expect(anonymous.status, path).toBe(401);
      const wrongKey = await fetch(`${service.url}${path}`, { headers: { 'x-api-key': 'mapi_not-a-key' } });
      expect(wrongKey.status, path).toBe(401);
    }
    const headers = { 'x-api-key': key };
    const snapshot = await fetch(`${service.url}/machines/cam/snapshot`, { headers });
    expect(snapshot.status).toBe(200);
    const stream = await fetch(`${service.url}/machines/cam/stream`, { headers });
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
    const refused = await fetch(`${service.url}/machines/wrong/snapshot`, { headers });
    expect(refused.status).toBe(502);
    const texts = [
      await refused.text(),
      await (await fetch(`${service.url}/machines`, { headers })).text(),
      await (await fetch(`${service.url}/openapi.json`, { headers })).text(),
      lines.join(''),
    ];
    for (const text of texts) {
      expect(text).not.toContain('pa55-in-url');
      expect(text).not.toContain('not-the-pa55');
    }
    expect(lines.join('')).toContain('/machines/wrong/snapshot');
    expect((await readStreamFrames(`${service.url}/machines/cam/stream`, 1)).status).toBe(401);
  });
});
