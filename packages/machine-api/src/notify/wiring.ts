/**
 * Notifications plugged into the running service: the farm watch listens to the event bus, the service
 * records what targets want in the outbox, the outbox sends. `close()` stops listening first, then lets
 * attempts under way finish briefly.
 */

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ServerSettings } from '../config/server-keys.js';
import type { EventBus } from '../events/events.js';
import type { JobDatabase } from '../jobs/database.js';
import type { JobRunner } from '../jobs/runner.js';
import type { FarmQueue } from '../queue/queue.js';
import { jobResponse } from '../server/convert.js';
import type { PhotoSource } from './events.js';
import { NotificationService } from './service.js';
import { NotifyStore } from './store.js';
import type { TargetSettings } from './targets.js';
import { FarmWatch } from './watch.js';

export interface NotificationsOptions {
  db: Kysely<JobDatabase>;
  logger: Logger;
  server: ServerSettings;
  targets: readonly TargetSettings[];
  machineTags: ReadonlyMap<string, readonly string[]>;
  /** Per machine `clear_timeout_minutes` (clearing = "external"); others use `awaiting_clear_minutes`. */
  clearTimeoutMinutes?: ReadonlyMap<string, number>;
  bus: EventBus;
  queue: FarmQueue;
  runner: JobRunner;
  /** Job photos, once cameras provide them. */
  photoFor?: PhotoSource;
}

export interface Notifications {
  service: NotificationService;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createNotifications(options: NotificationsOptions): Notifications {
  const { logger, server, queue, runner } = options;
  const service = new NotificationService({
    store: new NotifyStore(options.db),
    logger,
    configured: options.targets,
    tagsOf: (machineId) => options.machineTags.get(machineId) ?? [],
    publicUrl: server.public_url ?? null,
    ...(options.photoFor ? { photoFor: options.photoFor } : {}),
  });
  const watch = new FarmWatch({
    bus: options.bus,
    awaitingClearMs: (machineId) =>
      (options.clearTimeoutMinutes?.get(machineId) ?? server.awaiting_clear_minutes) * 60_000,
    queueWaitMs: server.queue_wait_minutes * 60_000,
    waitingJobs: async () =>
      (await queue.list()).map((entry) => ({
        job: jobResponse(entry.job, { progress: null, position: entry.position }),
        machines: entry.machines,
      })),
    currentJob: async (machineId) => {
      const current = runner.currentJob(machineId);
      if (!current) return null;
      const job = await runner.get(current.id);
      return jobResponse(job, { progress: runner.progressOf(job), position: null });
    },
    notice: (noticed) => service.notice(noticed),
    onError: (error) => logger.error({ err: error }, 'notification watch failed'),
  });
  return {
    service,
    async start() {
      await service.start();
      await watch.start();
    },
    async close() {
      watch.close();
      await service.close();
    },
  };
}
