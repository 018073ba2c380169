/**
 * The machines of the farm's other instances as this instance lists them (`GET /machines`,
 * `GET /machines/{id}`): the wire shape their instance last wrote, tagged with that instance. A machine
 * whose instance is dead (its heartbeat older than the timeout) is `offline`, as a local machine that
 * does not answer is: no progress, no readings, not ready, its camera unavailable.
 */

import type { RemoteMachine } from '../farm/farm-machines.js';
import type { MachineInfoResponse } from './schemas/machines.js';

/** JSON of each remote machine's answer, by the mirror's object (replaced whenever the machine changed). */
const serialised = new WeakMap<RemoteMachine, string>();

/** A remote machine's `MachineInfoResponse`. */
export function remoteMachineInfo(machine: RemoteMachine): MachineInfoResponse {
  const info = { ...(machine.info as MachineInfoResponse), instance: machine.instance };
  if (machine.alive) return info;
  const camera = info.camera;
  return {
    ...info,
    state: { state: 'offline' },
    progress: null,
    ready: false,
    temperatures: {},
    current_job: info.current_job ? { ...info.current_job, progress: null } : null,
    camera: camera
      ? { ...camera, available: false, reason: `instance "${machine.instance}" is not answering` }
      : null,
  };
}

/** `remoteMachineInfo` as JSON, made once per state of the machine. */
export function remoteMachineJson(machine: RemoteMachine): string {
  let json = serialised.get(machine);
  if (json === undefined) {
    json = JSON.stringify(remoteMachineInfo(machine));
    serialised.set(machine, json);
  }
  return json;
}
