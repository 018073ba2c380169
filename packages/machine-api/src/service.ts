/**
 * The whole service wired together: configuration → machines → HTTP server, and the reverse on close.
 * The CLI and the test harness both start the service through here.
 */

import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { loadConfig } from './config.js';
import { openJobDatabase } from './jobs/database.js';
import { JobRunner } from './jobs/runner.js';
import { JobStore } from './jobs/store.js';
import { backends } from './machines/backends.js';
import { MachineRegistry } from './machines/registry.js';
import { ServiceMetrics } from './metrics.js';
import { buildApp } from './server/app.js';
import { setMaxConcurrentSlices } from './slicer/prusa.js';

export interface ServiceOptions {
  configPath: string;
  dataDir: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  logger: Logger;
}

export interface RunningService {
  /** e.g. `http://127.0.0.1:8080` */
  url: string;
  app: FastifyInstance;
  /** Stops accepting requests, closes the machines, records the outcome of jobs, closes the database. */
  close(): Promise<void>;
}

/** Loads the configuration, starts the machines and listens. Throws `ConfigError` for a bad config. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { logger } = options;
  const config = loadConfig(options.configPath, backends);
  if (config.server.max_concurrent_slices) setMaxConcurrentSlices(config.server.max_concurrent_slices);
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });

  const machines = await MachineRegistry.create(config.machines, {
    logger,
    configDir: dirname(resolve(options.configPath)),
    dataDir,
  });
  const statusTimeoutMs = config.server.status_timeout_ms;
  const metrics = new ServiceMetrics(machines, statusTimeoutMs);
  const db = await openJobDatabase(dataDir);
  const jobs = new JobRunner({
    store: new JobStore(db),
    machines,
    metrics,
    dataDir,
    statusTimeoutMs,
    logger,
  });
  const maxUploadBytes = Math.floor(config.server.max_upload_mib * 1024 * 1024);
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  // Reverse order of start-up: no new requests, machines released (their prints settle), outcomes written.
  let closing: Promise<void> | undefined;
  const shutdown = () => {
    closing ??= (async () => {
      await app?.close();
      await machines.close();
      await jobs.drain(2000);
      await db.destroy();
    })();
    return closing;
  };
  try {
    await jobs.start();
    app = await buildApp({ logger, machines, metrics, statusTimeoutMs, jobs, maxUploadBytes });
    await machines.start();
    const url = await app.listen({ host: options.host, port: options.port });
    logger.info({ url, machines: machines.machines.length }, 'machine-api listening');
    return {
      url,
      app,
      close: shutdown,
    };
  } catch (error) {
    await shutdown();
    throw error;
  }
}
