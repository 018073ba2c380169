/**
 * A viewer that reads nothing must not make the service buffer: measured on the real service in its own
 * process (`machine-api serve`), by its resident memory while 100 MiB of frames pass through it.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { readStreamFrames } from './camera-client.js';
import { waitFor } from './harness.js';
import { HttpCamera } from './sim/http-camera.js';

const cli = new URL('../src/cli.ts', import.meta.url).pathname;
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function rssOf(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) * 1024;
}

it('keeps the service’s memory bounded while a viewer reads nothing', { timeout: 120_000 }, async () => {
  const frameBytes = 256 * 1024;
  const camera = await HttpCamera.start({ frameIntervalMs: 5, frameBytes });
  cleanup.push(() => camera.close());
  const dir = await mkdtemp(join(tmpdir(), 'machine-api-camera-memory-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'machine-api.toml'),
    `[machines.printer]\ntype = "Noop"\ncamera = { stream_url = "${camera.url}/stream.mjpg" }\n`,
  );
  const args = ['--import', 'tsx', cli, 'serve', '--json', '--config', join(dir, 'machine-api.toml')];
  const child: ChildProcess = spawn(
    process.execPath,
    [...args, '--bind', '127.0.0.1:0', '--data-dir', join(dir, 'data')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  cleanup.push(() => {
    child.kill('SIGKILL');
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = await waitFor(() => /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1], {
    timeoutMs: 60_000,
    what: 'the service to listen',
  });
  const stream = `${url}/machines/printer/stream`;
  // Warm up: the upstream open, buffers grown to their working size.
  expect((await readStreamFrames(stream, 40)).frames).toHaveLength(40);

  // A viewer that sends its request and never reads a byte, held open throughout.
  const { hostname, port, host } = new URL(url);
  const stalled: Socket = connect({ host: hostname, port: Number(port) });
  cleanup.push(() => {
    stalled.destroy();
  });
  stalled.pause();
  stalled.write(`GET /machines/printer/stream HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  expect((await readStreamFrames(stream, 20)).frames).toHaveLength(20);
  const before = rssOf(child.pid!);

  // 400 frames of 256 KiB (100 MiB) pass while the stalled viewer reads nothing.
  const { frames } = await readStreamFrames(stream, 400);
  expect(frames).toHaveLength(400);
  const grown = rssOf(child.pid!) - before;
  expect(grown).toBeLessThan(48 * 1024 * 1024);
  expect(stalled.destroyed).toBe(false);
  expect(camera.streamsOpened).toBe(1);
});
