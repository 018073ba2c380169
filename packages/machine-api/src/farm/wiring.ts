/** The farm's machine snapshots wired for one instance: its writer and its mirror of the others. */

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DialectName, JobDatabase } from '../jobs/database.js';
import { FarmMachineMirror, type FarmMachines, NO_REMOTE_MACHINES } from './farm-machines.js';
import { heartbeatIntervalMs } from './instances.js';
import { FarmMachinePublisher, type LocalMachineSnapshot } from './publisher.js';

/** Least time between two writes of this instance's machine snapshots (farm/publisher.ts). */
const FARM_WRITE_INTERVAL_MS = 500;

/**
 * On PostgreSQL, the writer of this instance's machine snapshots and the mirror of the other instances'
 * ones, both at the heartbeat's pace (the mirror at least once a second); on SQLite an instance is the
 * whole farm and neither exists.
 */
export function farmMachines(options: {
  db: Kysely<JobDatabase>;
  dialect: DialectName;
  instance: string;
  heartbeatTimeoutMs: number;
  snapshots: () => LocalMachineSnapshot[];
  logger: Logger;
}): { view: FarmMachines; mirror?: FarmMachineMirror; publisher?: FarmMachinePublisher } {
  const { db, dialect, instance, heartbeatTimeoutMs, snapshots, logger } = options;
  if (dialect !== 'postgres') return { view: NO_REMOTE_MACHINES };
  const heartbeatMs = heartbeatIntervalMs(heartbeatTimeoutMs);
  const mirror = new FarmMachineMirror(db, {
    dialect,
    instance,
    heartbeatTimeoutMs,
    refreshIntervalMs: Math.min(1000, heartbeatMs),
    logger,
  });
  const publisher = new FarmMachinePublisher(db, {
    dialect,
    instance,
    snapshots,
    minIntervalMs: FARM_WRITE_INTERVAL_MS,
    sweepIntervalMs: heartbeatMs,
    logger,
  });
  return { view: mirror, mirror, publisher };
}
