/**
 * This instance's machines as the rest of the farm sees them (farm/publisher.ts writes them): the same
 * wire shape `GET /machines/{id}` answers here, from the observer's snapshots, and the routing facts the
 * queue admits jobs by.
 */

import type { CameraService } from '../cameras/service.js';
import type { LocalMachineSnapshot } from '../farm/publisher.js';
import type { JobRunner } from '../jobs/runner.js';
import type { MachineObserver } from '../machines/observer.js';
import type { MachineRegistry } from '../machines/registry.js';
import { factsOf } from '../queue/routing.js';
import { machineInfo } from './convert.js';

export function localMachineSnapshots(
  machines: MachineRegistry,
  observer: MachineObserver,
  jobs: JobRunner,
  cameras: CameraService,
): () => LocalMachineSnapshot[] {
  return () =>
    machines.machines.flatMap((entry) => {
      const observed = observer.current(entry.id);
      if (!observed) return [];
      const { status } = observed;
      return [
        {
          id: entry.id,
          info: machineInfo(
            machines,
            entry,
            status,
            observed,
            jobs.currentJob(entry.id),
            cameras.status(entry.id),
          ),
          facts: factsOf(machines, entry, status.hardware),
        },
      ];
    });
}
