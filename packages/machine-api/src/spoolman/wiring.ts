/**
 * The Spoolman parts wired together for the composition root: the assignments (always, so routes can say
 * "not configured"), and with `[spoolman]` the use-report outbox, the per-print usage and a periodic
 * re-read of the assigned spools (a spool edited in Spoolman's own UI shows within the interval).
 */

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { SpoolmanSettings } from '../config/spoolman-keys.js';
import type { JobDatabase } from '../jobs/database.js';
import type { JobFilament } from '../jobs/filament.js';
import type { JobSpool } from '../jobs/runner.js';
import type { JobStore } from '../jobs/store.js';
import type { MachineObserver } from '../machines/observer.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import type { SpoolFacts } from '../queue/routing.js';
import { SpoolAssignments } from './assignments.js';
import { SpoolmanClient } from './client.js';
import { SpoolReports } from './reports.js';
import { SpoolStore } from './store.js';
import { type PrintingJob, SpoolUsage } from './usage.js';

export interface SpoolmanOptions {
  db: Kysely<JobDatabase>;
  settings: SpoolmanSettings | null;
  machines: MachineRegistry;
  observer: MachineObserver;
  jobs: JobStore;
  /** The jobs printing now (the runner knows; it is built after this). */
  printing: () => PrintingJob[];
  logger: Logger;
}

export interface Spoolman {
  assignments: SpoolAssignments;
  /** The spool a job on the machine prints from (for the runner). */
  spoolFor(entry: RegisteredMachine, slot: number | null): JobSpool | undefined;
  /** The machine's spool now, for the queue's spool rule. */
  spoolOf(entry: RegisteredMachine): SpoolFacts | undefined;
  /** A print ended with this use (for the runner). */
  onUse(jobId: string, machineId: string, used: JobFilament): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createSpoolman(options: SpoolmanOptions): Spoolman {
  const { settings, machines, observer, logger } = options;
  const store = new SpoolStore(options.db);
  const client = settings ? new SpoolmanClient(settings) : null;
  const log = logger.child({ component: 'spoolman' });
  const assignments = new SpoolAssignments(store, client, machines, log);
  const reports =
    client &&
    new SpoolReports({
      store,
      client,
      assignments,
      machineIds: machines.machines.map((entry) => entry.id),
      logger: log,
    });
  const usage =
    reports &&
    settings &&
    new SpoolUsage({
      jobs: options.jobs,
      spools: store,
      reports,
      printing: options.printing,
      intervalMs: settings.reportIntervalMs,
      logger: log,
    });
  let refresher: NodeJS.Timeout | undefined;

  /** The slot a machine with AMS slots prints from now: the tray it reports loaded, else the configured one. */
  const loadedSlot = (entry: RegisteredMachine): number | null =>
    observer.current(entry.id)?.status.hardware?.loadedFilamentIdx ?? entry.common.loadedFilamentIdx;

  return {
    assignments,
    spoolFor(entry, slot) {
      const assignment = assignments.spoolFor(entry, slot);
      if (!assignment) return undefined;
      const { spool } = assignment;
      return {
        id: spool.id,
        material: spool.material?.trim().toLowerCase() || null,
        density: spool.density,
        diameter: spool.diameter,
        pricePerKg: spool.price !== null && spool.weightG ? (spool.price / spool.weightG) * 1000 : null,
      };
    },
    spoolOf(entry) {
      if (!settings || !reports) return undefined;
      const assignment = assignments.spoolFor(entry, loadedSlot(entry));
      if (!assignment) return undefined;
      const remaining = assignment.spool.remainingG;
      return {
        id: assignment.spoolId,
        remainingG: remaining === null ? null : remaining - reports.unsentGrams(assignment.spoolId),
        marginG: settings.marginG,
      };
    },
    async onUse(jobId, machineId, used) {
      await usage?.finished(jobId, machineId, used);
    },
    async start() {
      await assignments.start();
      if (!reports || !usage || !settings) return;
      await reports.start();
      usage.start();
      void assignments.refreshAll();
      refresher = setInterval(() => void assignments.refreshAll(), settings.reportIntervalMs);
      refresher.unref();
    },
    async close() {
      clearInterval(refresher);
      await usage?.close();
      await reports?.close();
    },
  };
}
