/**
 * The CLI as an operator runs it: SIGTERM while a slicer runs and a keep-alive client is connected ends
 * the slicer and the process promptly; after a kill -9 the next start ends the slicer the dead run left.
 * Slicers are started by the slicer starter, a small process of the service's (never by forking the
 * service); if the starter dies, its slicer is ended and the job fails, and the next slice gets a new
 * starter. No prusa-slicer outlives these tests.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, serveInChild } from './child-service.js';
import { asciiStl, requirePrusaSlicer, sphere } from './design-fixtures.js';
import { waitFor } from './harness.js';

const generic = new URL('../profiles/generic-fdm-0.4.ini', import.meta.url).pathname;
const BIG_BALL = asciiStl(sphere(40, 400, 500));

let dir: string;
const slicers: number[] = [];

beforeAll(async () => {
  requirePrusaSlicer();
  dir = await mkdtemp(join(tmpdir(), 'machine-api-shutdown-'));
  await writeFile(join(dir, 'printer.ini'), await readFile(generic, 'utf8'));
  await writeFile(
    join(dir, 'machine-api.toml'),
    '[machines.slow]\ntype = "Noop"\nslicer = { type = "Prusa", config = "printer.ini", timeout_seconds = 300 }\n',
  );
});

afterAll(async () => {
  killChildren();
  for (const pid of slicers) if (isSlicer(pid)) process.kill(pid, 'SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** The nice value of each thread of `pid` (field 19 of /proc/<pid>/task/<tid>/stat). */
function nicenessOfThreads(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

/** The parent pid of `pid` (field 4 of /proc/<pid>/stat). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function isSlicer(pid: number): boolean {
  try {
    return existsSync(`/proc/${pid}`) && /prusa/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

/** `machine-api serve` on this suite's configuration and `dataDir`, in a child process (test/child-service.ts). */
function serve(dataDir: string) {
  return serveInChild({ config: join(dir, 'machine-api.toml'), dataDir });
}

/** Starts a print of a design that takes PrusaSlicer a while, and resolves the slicer's pid. */
async function startSlicing(
  url: string,
  dataDir: string,
): Promise<{ pid: number; response: Promise<Response> }> {
  const form = new FormData();
  form.append('params', JSON.stringify({ machine_id: 'slow', job_name: 'ball' }));
  form.append('file', new Blob([BIG_BALL]), 'ball.stl');
  const response = fetch(`${url}/print`, { method: 'POST', body: form });
  response.catch(() => undefined);
  const pid = await waitFor(
    async () => {
      const jobs = await readdir(join(dataDir, 'jobs')).catch(() => [] as string[]);
      for (const job of jobs) {
        const text = await readFile(join(dataDir, 'jobs', job, 'slicer.pid'), 'utf8').catch(() => '');
        if (text) return Number(text);
      }
      return undefined;
    },
    { timeoutMs: 60_000, what: 'the slicer to start' },
  );
  slicers.push(pid);
  return { pid, response };
}

describe('shutdown and restart', () => {
  it('SIGTERM while slicing, with a keep-alive client connected, stops the slicer and exits within 5 s', async () => {
    const dataDir = join(dir, 'data-term');
    const { child, url } = await serve(dataDir);
    const { pid, response } = await startSlicing(url, dataDir);
    expect(isSlicer(pid)).toBe(true);
    // Slicers run at nice 19 (every thread of theirs), so the API gets a core whenever it needs one.
    expect(new Set(nicenessOfThreads(pid))).toEqual(new Set([19]));
    // A client that keeps its connection open after a request.
    const agent = new Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => {
      request(`${url}/ping`, { agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running after 5 s'), 5000)),
    ]);
    expect(code).toBe(0);
    expect(isSlicer(pid)).toBe(false);
    const answer = await response;
    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({ error_code: 'ShuttingDown' });
    agent.destroy();
  }, 120_000);

  it('a start after kill -9 ends the slicer the dead run left, then cleans its work dirs', async () => {
    const dataDir = join(dir, 'data-kill');
    const first = await serve(dataDir);
    const { pid } = await startSlicing(first.url, dataDir);
    const died = new Promise((resolve) => first.child.on('exit', resolve));
    first.child.kill('SIGKILL');
    await died;
    // The slicer has its own process group: it survived its parent.
    expect(isSlicer(pid)).toBe(true);
    const second = await serve(dataDir);
    await waitFor(() => !isSlicer(pid), { what: 'the leftover slicer to be ended' });
    expect(await readdir(join(dataDir, 'jobs'))).toEqual([]);
    const jobs = (await (await fetch(`${second.url}/jobs`)).json()) as { status: string }[];
    expect(jobs.map((job) => job.status)).toEqual(['failed']);
    const exited = new Promise((resolve) => second.child.on('exit', resolve));
    second.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);

  it('a slicer starter that dies ends its slicer and fails the job; the next slice gets a new starter', async () => {
    const dataDir = join(dir, 'data-starter');
    const { child, url } = await serve(dataDir);
    const first = await startSlicing(url, dataDir);
    const starter = parentOf(first.pid);
    expect(starter).not.toBe(child.pid);
    expect(parentOf(starter)).toBe(child.pid);
    process.kill(starter, 'SIGKILL');
    const answer = await first.response;
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({
      error_code: 'SlicingFailed',
      message: 'PrusaSlicer was killed by SIGKILL',
    });
    await waitFor(() => !isSlicer(first.pid), { what: 'the slicer of the dead starter to be ended' });
    const second = await startSlicing(url, dataDir);
    expect(isSlicer(second.pid)).toBe(true);
    expect(parentOf(parentOf(second.pid))).toBe(child.pid);
    expect(parentOf(second.pid)).not.toBe(starter);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(isSlicer(second.pid)).toBe(false);
    expect((await second.response).status).toBe(503);
  }, 120_000);
});
