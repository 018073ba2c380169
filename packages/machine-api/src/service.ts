/**
 * The whole service wired together: configuration → machines → HTTP server, and the reverse on close.
 * The CLI and the test harness both start the service through here.
 */

import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AppKeyRequestStore } from './access/app-key-store.js';
import { AppKeyRequests } from './access/app-keys.js';
import { CameraTokens } from './access/camera-tokens.js';
import { InstallSecret } from './access/install-secret.js';
import { KeyStore } from './access/key-store.js';
import { KeyService } from './access/keys.js';
import { resolveAccess } from './access/settings.js';
import { JobPhotos } from './cameras/job-photos.js';
import { CameraService } from './cameras/service.js';
import { designLimits } from './config/server-keys.js';
import { loadConfig } from './config.js';
import { DesignWorkers } from './design/workers.js';
import { ServiceError } from './errors.js';
import type { EventBus } from './events/events.js';
import { EventHistory } from './events/history.js';
import { SharedEventBus } from './events/shared.js';
import { FarmMembership, heartbeatIntervalMs } from './farm/instances.js';
import { farmMachines } from './farm/wiring.js';
import { BedStore } from './jobs/bed-store.js';
import { openJobDatabase } from './jobs/database.js';
import { isFinal } from './jobs/job.js';
import { KeptDesigns } from './jobs/kept-designs.js';
import { JobRunner } from './jobs/runner.js';
import { JobStats } from './jobs/stats.js';
import { JobStore } from './jobs/store.js';
import { backends } from './machines/backends.js';
import { MachineObserver } from './machines/observer.js';
import { MachineRegistry } from './machines/registry.js';
import { ServiceMetrics } from './metrics.js';
import { jobPhotoSource } from './notify/photos.js';
import { createNotifications } from './notify/wiring.js';
import { upnpUuid } from './octoprint/base-url.js';
import { FileStore } from './octoprint/file-store.js';
import { StoredFiles } from './octoprint/stored-files.js';
import { printSubmitter } from './octoprint/submit.js';
import { QueueService } from './queue/service.js';
import { buildApp } from './server/app.js';
import { publishFarmEvents } from './server/event-sources.js';
import { localMachineSnapshots } from './server/farm-snapshots.js';
import { Forwarder } from './server/forward.js';
import type { Advertisement } from './server/mdns.js';
import { API_VERSION } from './server/openapi.js';
import { setMaxConcurrentSlices } from './slicer/prusa.js';
import { createSpoolman } from './spoolman/wiring.js';
import { TemperatureService } from './temperature/service.js';

/** How long requests in flight may take to finish once shutdown has begun. */
const SHUTDOWN_GRACE_MS = 2500;

export interface ServiceOptions {
  configPath: string;
  dataDir: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  logger: Logger;
  /** Whether to advertise over mDNS when the config does not say (`[server] mdns`); default true. */
  mdnsDefault?: boolean;
  /** `postgres://…` from `--database-url` or `MACHINE_API_DATABASE_URL`; wins over `[server] database_url`. */
  databaseUrl?: string;
}

export interface RunningService {
  /** e.g. `http://127.0.0.1:8080` */
  url: string;
  /** This instance's name in the farm (`[server] instance`, default `<host name>:<port>`). */
  instance: string;
  app: FastifyInstance;
  /** Settles once every machine's start has connected or given up (never rejects; failures are logged). */
  machinesStarted: Promise<void>;
  /** Stops accepting requests, closes the machines, records the outcome of jobs, closes the database. */
  close(): Promise<void>;
}

/**
 * Loads the configuration, listens, then starts the machines in the background (it resolves once
 * listening, not once every machine has connected). Throws `ConfigError` for a bad config.
 *
 * Long by design: the composition root — every part is built here, in the order its dependencies need,
 * and stopped in reverse by the returned `close`; each part's logic lives in its own module.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const began = performance.now();
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
  const access = resolveAccess(config.server, options.host);
  if (access.warning) logger.warn(access.warning);
  const databaseUrl = options.databaseUrl ?? config.server.database_url;
  const database = await openJobDatabase({ dataDir, url: databaseUrl });
  const { db } = database;
  const keys = new KeyService(new KeyStore(db));
  const appKeys = new AppKeyRequests(new AppKeyRequestStore(db), keys);
  const installSecret = await InstallSecret.open(db);
  const cameraTokens = new CameraTokens(db, installSecret);
  const files = new StoredFiles(new FileStore(db), dataDir, join(dataDir, 'uploads'));
  const designs = new DesignWorkers({ limits: designLimits(config.server) });
  const store = new JobStore(db, database.dialect);
  const beds = new BedStore(db);
  const keptDesigns = new KeptDesigns(db, database.dialect);
  const observer = new MachineObserver(machines, {
    statusTimeoutMs,
    pollIntervalMs: config.server.observe_interval_ms ?? 1000,
    temperatureIntervalMs: 1000,
    logger,
  });
  const spoolman = createSpoolman({
    db,
    settings: config.spoolman,
    machines,
    observer,
    jobs: store,
    printing: () =>
      machines.machines.flatMap((entry) => {
        const current = jobs.currentJob(entry.id);
        if (current?.status !== 'printing') return [];
        const progress = observer.current(entry.id)?.status.progress ?? null;
        return [{ jobId: current.id, machineId: entry.id, progress }];
      }),
    logger,
  });
  const jobs = new JobRunner({
    store,
    beds,
    keptDesigns,
    machines,
    observer,
    metrics,
    dataDir,
    statusTimeoutMs,
    designs,
    logger,
    spoolFor: spoolman.spoolFor,
    onUse: spoolman.onUse,
  });
  const cameras = new CameraService(machines, config.cameras, logger.child({ component: 'cameras' }));
  const instance = config.server.instance ?? defaultInstanceName(options.port);
  const heartbeatTimeoutMs = config.server.heartbeat_timeout_seconds * 1000;
  const farm = farmMachines({
    db,
    dialect: database.dialect,
    instance,
    heartbeatTimeoutMs,
    snapshots: localMachineSnapshots(machines, observer, jobs, cameras),
    logger,
  });
  const queue = new QueueService({
    store,
    keptDesigns,
    farm: farm.view,
    pollIntervalMs: heartbeatIntervalMs(heartbeatTimeoutMs),
    runner: jobs,
    designs,
    machines,
    observer,
    metrics,
    dataDir,
    logger,
    spoolOf: spoolman.spoolOf,
    spoolsOf: (machineId) => spoolman.assignments.of(machineId).assignments,
    onSpoolChange: (listener) => spoolman.assignments.onChange(listener),
  });
  const photos = new JobPhotos(cameras, join(dataDir, 'photos'), {
    enabled: config.cameras.job_photos,
    retentionDays: config.cameras.photo_retention_days,
    cameraTimeoutMs: config.cameras.timeout_ms,
    logger,
  });
  const stopPhotos = jobs.onJobChange(photos.onJobChange);
  const temperatures = new TemperatureService(machines, observer, config.presets);
  // A farm streams every instance's events from the database; one instance alone keeps them in memory.
  const events: EventBus =
    database.dialect === 'postgres' && databaseUrl
      ? await SharedEventBus.open({ db, url: databaseUrl, instance, logger })
      : new EventHistory(instance);
  const stopEvents = publishFarmEvents(events, { observer, runner: jobs, queue });
  // Another instance's change of the shared queue (a job queued, a claim returned) wakes this one's
  // dispatcher at once (the event stream's LISTEN/NOTIFY); the queue's own look at the farm is the fallback.
  const queueWake = events.subscribe({ types: ['queue.changed'] }, null, (event) => {
    if (event.instance !== events.instance) queue.wake();
  });
  const notifications = createNotifications({
    db,
    logger,
    server: config.server,
    targets: config.notify,
    machineTags: new Map(config.machines.map((machine) => [machine.id, machine.common.tags])),
    clearTimeoutMinutes: new Map(
      config.machines.flatMap((machine) => {
        const minutes = machine.common.clearing.clearTimeoutMinutes;
        return minutes === null ? [] : [[machine.id, minutes] as const];
      }),
    ),
    bus: events,
    queue,
    runner: jobs,
    photoFor: jobPhotoSource({
      photoFor: (jobId) => photos.photoFor(jobId),
      hasCamera: (machineId) => cameras.status(machineId) !== null,
      jobOf: async (jobId) => {
        const job = await jobs.get(jobId);
        return { machineId: job.machineId, finished: isFinal(job.status) };
      },
    }),
  });
  const maxUploadBytes = Math.floor(config.server.max_upload_mib * 1024 * 1024);
  // On a farm, actions on the other instances' machines are carried out by them (server/forward.ts).
  const forwarder =
    database.dialect === 'postgres'
      ? new Forwarder({ instance, machines, farm: farm.view, maxUploadBytes })
      : null;
  const stopFarmWrites = [
    observer.onChange(() => farm.publisher?.changed()),
    jobs.onJobChange(() => farm.publisher?.changed()),
  ];
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let advertisement: Advertisement | undefined;
  let mqttBridge: import('./mqtt/bridge.js').MqttBridge | undefined;
  // Machines connect in the background once the service listens (see below); shutdown waits for that.
  let machinesStarted: Promise<void> | undefined;
  let membership: FarmMembership | undefined;
  // Reverse order of start-up: no new requests, machines released (their prints settle), outcomes written.
  // Bounded so that a signal ends the process within seconds whatever the clients do.
  let closing: Promise<void> | undefined;
  const shutdown = () => {
    closing ??= (async () => {
      await advertisement?.close();
      await mqttBridge?.close();
      const server = app?.server;
      const appClosed = app?.close();
      // Jobs still being prepared are stopped now (slicers killed), so their requests answer at once.
      jobs.cancelPreparations(
        'the service is shutting down',
        new ServiceError(
          503,
          'ShuttingDown',
          'the service is shutting down; the job was cancelled before it started printing',
        ),
      );
      // Keep-alive connections are closed as soon as they are idle, every connection after a deadline.
      const idle = setInterval(() => server?.closeIdleConnections(), 50);
      const deadline = setTimeout(() => server?.closeAllConnections(), SHUTDOWN_GRACE_MS);
      try {
        await appClosed;
      } finally {
        clearInterval(idle);
        clearTimeout(deadline);
      }
      await designs.close();
      await queue.close();
      await machinesStarted;
      observer.close();
      await machines.close();
      await jobs.drain(1500);
      await spoolman.close();
      await notifications.close();
      stopPhotos();
      cameras.close();
      await photos.drain();
      stopEvents();
      queueWake.close();
      for (const stop of stopFarmWrites) stop();
      await forwarder?.close();
      await farm.publisher?.close();
      await farm.mirror?.close();
      await events.close();
      await membership?.leave();
      await database.close();
    })();
    return closing;
  };
  try {
    // Joining the farm claims the machine ids before anything touches their jobs or starts them: an id
    // another live instance drives refuses the start here, with both named. The URL is final once listening.
    membership = await FarmMembership.join(db, {
      name: instance,
      url: config.server.public_url ?? `http://${options.host}:${options.port}`,
      heartbeatTimeoutMs,
      machineIds: machines.machines.map((entry) => entry.id),
      dialect: database.dialect,
      logger,
    });
    const interruptedPrints = await jobs.start();
    await farm.mirror?.start();
    await spoolman.start();
    await files.start();
    await photos.start();
    await notifications.start();
    const submit = printSubmitter(jobs, queue);
    app = await buildApp({
      logger,
      machines,
      metrics,
      statusTimeoutMs,
      jobs,
      observer,
      queue,
      events,
      maxUploadBytes,
      keys,
      appKeys,
      cameraTokens,
      installSecret,
      access,
      files,
      submit,
      cameras,
      photos,
      temperatures,
      stats: new JobStats(store, config.filament.currency ?? null),
      notifications: notifications.service,
      instance: database.dialect === 'postgres' ? instance : null,
      farm: farm.view,
      spools: spoolman.assignments,
      forwarder,
    });
    await queue.start();
    if (config.mqtt) {
      // Loaded only when configured; connects in the background and never holds up start-up.
      const { MqttBridge } = await import('./mqtt/bridge.js');
      mqttBridge = new MqttBridge({
        settings: config.mqtt,
        machines,
        observer,
        onJobChange: (listener) => jobs.onJobChange(listener),
        // The same controls as POST /machines/{id}/pause|resume|stop|clear.
        control: async (machineId, action) => {
          if (action === 'clear') await jobs.clear(machineId);
          else await machines.require(machineId).machine[action]();
          await observer.refresh(machineId);
        },
        version: API_VERSION,
        logger: logger.child({ component: 'mqtt' }),
      });
    }
    const url = await app.listen({ host: options.host, port: options.port });
    await membership.announce(config.server.public_url ?? url);
    await farm.publisher?.start();
    // Listen first, then connect: a printer that hangs or is switched off must not keep the API (or the
    // other machines) from answering. A machine not read yet is listed as `unknown`, one that does not
    // answer becomes `offline` within its own timeout; a start failure is logged and leaves it listed.
    machinesStarted = machines.start();
    observer.start();
    await mqttBridge?.start();
    cameras.start();
    // Prints a killed run left on their machines get their photo once the machines are back.
    void machinesStarted.then(() => photos.photographInterrupted(interruptedPrints));
    // Prints a killed run left on printers that print on by themselves are followed again.
    void machinesStarted.then(() => jobs.followAgain());
    if (config.server.mdns ?? options.mdnsDefault ?? true) {
      // The mDNS responder's modules are loaded only when it is on.
      const { advertise } = await import('./server/mdns.js');
      advertisement = advertise({
        port: Number(new URL(url).port),
        machineIds: machines.machines.map((entry) => entry.id),
        queue: true,
        uuidOf: (id) => upnpUuid(installSecret, id),
        apiVersion: API_VERSION,
        logger,
      });
    }
    logger.info(
      { url, machines: machines.machines.length, startup_ms: Math.round(performance.now() - began) },
      'machine-api listening',
    );
    return {
      url,
      instance: membership.name,
      app,
      machinesStarted,
      close: shutdown,
    };
  } catch (error) {
    await shutdown();
    throw error;
  }
}

/**
 * `<host name>:<port>` as configured: stable across restarts (a crash included), so a restarted instance
 * takes its machines back at once. A port picked by the system (`:0`) keeps the name `<host name>:0`.
 */
function defaultInstanceName(port: number): string {
  return `${hostname()}:${port}`;
}
