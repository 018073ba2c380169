/**
 * Test harness shared by every machine-api test: starts the real service (configuration → machines →
 * HTTP server, the same wiring as `machine-api serve`) on 127.0.0.1, port 0, from a TOML string, in a fresh
 * temp directory that `close()` removes.
 *
 *   const api = await startMachineApi(`
 *     [machines.sim]
 *     type = "Noop"
 *   `);
 *   const res = await fetch(`${api.baseUrl}/machines/sim`);
 *   const print = await postPrint(api.baseUrl, { machineId: 'sim', jobName: 'cube', file: gcode });
 *   await waitFor(async () => (await getJson(api.baseUrl, `/jobs/${id}`)).status === 'completed');
 *   await api.close();
 *
 * Relative paths in the TOML (e.g. `slicer.config = "printer.ini"`) resolve against `api.dir`; put such
 * files there with the `files` option. Logs are silent unless MACHINE_API_TEST_LOG is set to a level.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { type RunningService, startService } from '../src/service.js';
import { testDatabaseUrl } from './test-database.js';

export interface StartOptions {
  /** Use this directory (config, data dir) instead of a fresh one, e.g. to restart on the same data; it is kept on close. */
  dir?: string;
  /** Files written into the directory before start, by relative name. */
  files?: Record<string, string | Uint8Array>;
  /**
   * Return as soon as the service listens, before its machines have connected (default: once every
   * machine's start settled, so a test's first request sees them connected, as a user would a moment later).
   */
  listenOnly?: boolean;
  /** Run on this database (several instances of one farm); default: the test project's own for `dir`. */
  databaseUrl?: string;
}

export interface MachineApiUnderTest {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** Holds `machine-api.toml`, the `files`, and the data dir `data/`. */
  dir: string;
  dataDir: string;
  /** The PostgreSQL database it runs on (test project `machine-api-postgres`); undefined on SQLite. */
  databaseUrl: string | undefined;
  service: RunningService;
  /** Closes the service (machines, database, server) and removes `dir` unless it was given. */
  close(): Promise<void>;
}

/** Starts the real service from `toml`; throws the service's own error for a bad configuration. */
export async function startMachineApi(
  toml: string,
  options: StartOptions = {},
): Promise<MachineApiUnderTest> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'machine-api-test-')));
  const ownsDir = options.dir === undefined;
  try {
    for (const [name, contents] of Object.entries(options.files ?? {}))
      await writeFile(join(dir, name), contents);
    const configPath = join(dir, 'machine-api.toml');
    await writeFile(configPath, toml);
    const dataDir = join(dir, 'data');
    const databaseUrl = options.databaseUrl ?? (await testDatabaseUrl(dir));
    const logger = pino({ level: process.env.MACHINE_API_TEST_LOG ?? 'silent' });
    // mDNS only where a test asks for it (`[server] mdns = true`): no multicast responders left behind.
    const service = await startService({
      configPath,
      dataDir,
      host: '127.0.0.1',
      port: 0,
      logger,
      mdnsDefault: false,
      databaseUrl,
    });
    if (!options.listenOnly) await service.machinesStarted;
    return {
      baseUrl: service.url,
      dir,
      dataDir,
      databaseUrl,
      service,
      close: async () => {
        await service.close();
        if (ownsDir) await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (ownsDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Polls `probe` until it returns something other than `undefined`/`false`, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 50, what = 'condition' } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${lastError}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** GET a JSON document; throws when the status is not 200. */
export async function getJson<T = unknown>(baseUrl: string, path: string): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`);
  if (response.status !== 200)
    throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

export interface PrintUpload {
  machineId: string;
  jobName: string;
  file: string | Uint8Array;
  /** Default `design.gcode`. */
  fileName?: string;
  slicerConfiguration?: { filament_idx?: number | null } | null;
}

/** `POST /print` as a browser or curl sends it: multipart with a `file` part and a `params` JSON part. */
export async function postPrint(baseUrl: string, upload: PrintUpload): Promise<Response> {
  const form = new FormData();
  const params: Record<string, unknown> = { machine_id: upload.machineId, job_name: upload.jobName };
  if (upload.slicerConfiguration !== undefined) params.slicer_configuration = upload.slicerConfiguration;
  form.append('params', JSON.stringify(params));
  form.append('file', new Blob([upload.file]), upload.fileName ?? 'design.gcode');
  return fetch(`${baseUrl}/print`, { method: 'POST', body: form });
}
