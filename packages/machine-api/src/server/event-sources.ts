/**
 * What goes into the event stream: the machine observer's changes, the runner's job changes and the
 * queue's changes, each published in its wire shape (the same shapes the REST endpoints answer with).
 */

import type { EventBus } from '../events/events.js';
import type { JobRunner } from '../jobs/runner.js';
import { FULL_CONTROL } from '../machines/machine.js';
import type { MachineObserver, ObservedMachine } from '../machines/observer.js';
import type { FarmQueue } from '../queue/queue.js';
import { jobResponse } from './convert.js';

/** Connects the producers to `bus`; returns the function that disconnects them. */
export function publishFarmEvents(
  bus: EventBus,
  sources: { observer: MachineObserver; runner: JobRunner; queue: FarmQueue },
): () => void {
  const { observer, runner, queue } = sources;
  const stops = [
    observer.onChange((change) => {
      const machine = change.machine;
      switch (change.kind) {
        case 'state':
          bus.publish({
            type: 'machine.state',
            machine_id: machine.id,
            job_id: null,
            data: stateData(machine),
          });
          break;
        case 'progress':
          bus.publish({
            type: 'machine.progress',
            machine_id: machine.id,
            job_id: null,
            data: { progress: machine.status.progress },
          });
          break;
        case 'temperatures':
          bus.publish({
            type: 'machine.temperatures',
            machine_id: machine.id,
            job_id: null,
            data: { temperatures: machine.status.temperatures },
          });
          break;
      }
    }),
    runner.onJobChange((job) => {
      bus.publish({
        type: 'job.updated',
        machine_id: job.machineId,
        job_id: job.id,
        data: jobResponse(job, { progress: runner.progressOf(job), position: queue.positionOf(job.id) }),
      });
    }),
    queue.onChange((change) => {
      bus.publish({
        type: 'queue.changed',
        machine_id: change.machineId,
        job_id: change.jobId,
        data: { reason: change.reason, depth: change.depth },
      });
    }),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

function stateData(machine: ObservedMachine): Record<string, unknown> {
  return {
    state: machine.status.state,
    ready: machine.ready,
    busy: machine.busy,
    progress: machine.status.progress,
    awaiting_clear_since: machine.awaitingClearSince,
    capabilities: machine.status.capabilities ?? FULL_CONTROL,
  };
}
