/**
 * The body of `GET /machines` as bytes, kept between requests. Each machine's entry is serialised once and
 * re-serialised only when something it is made of changed: its observed snapshot (the observer replaces
 * the snapshot object on every recorded status and every change of `busy`/`ready`/bed, and backends hand
 * out a fresh status object per read), the job holding it (the runner's slicing → uploading → printing does
 * not pass through the observer), or its identity (a Bambu printer learns its model from discovery, a USB
 * printer from its firmware), or its camera's status (the camera service hands out the same object until
 * something about the camera changed), or its Spoolman spools (a frozen object replaced on every change). Those inputs are compared on every request, so a change shows in the very
 * next answer; the list's bytes are re-joined only when an entry changed.
 *
 * On a farm, the machines of the other instances are merged in by id from the farm mirror (remote-machines.ts),
 * whose entries are replaced whenever they change: the list's bytes are re-joined when the mirror's list did.
 *
 * The answer is the same for every caller: access checks run in the `onRequest` hook before the handler,
 * and nothing here depends on who asks.
 */

import type { CameraService, CameraStatus } from '../cameras/service.js';
import type { FarmMachines, RemoteMachine } from '../farm/farm-machines.js';
import type { CurrentJob, JobRunner } from '../jobs/runner.js';
import type { MachineIdentity } from '../machines/machine.js';
import type { MachineObserver, ObservedMachine } from '../machines/observer.js';
import type { MachineRegistry } from '../machines/registry.js';
import type { MachineSpools, SpoolAssignments } from '../spoolman/assignments.js';
import { machineInfo } from './convert.js';
import { remoteMachineJson } from './remote-machines.js';

interface CachedEntry {
  observed: ObservedMachine;
  camera: CameraStatus | null;
  job: CurrentJob | null;
  identity: MachineIdentity;
  spools: MachineSpools | null;
  json: string;
}

export class MachineListBody {
  private readonly entries: (CachedEntry | undefined)[] = [];
  private bytes: Buffer | null = null;
  private remote: readonly RemoteMachine[] = [];

  constructor(
    private readonly machines: MachineRegistry,
    private readonly observer: MachineObserver,
    private readonly jobs: JobRunner,
    private readonly cameras: CameraService,
    /** This instance's name on a farm, null alone (see `ServerContext.instance`). */
    private readonly instance: string | null,
    private readonly farm: FarmMachines,
    private readonly spools: SpoolAssignments,
  ) {}

  /**
   * `MachineInfoResponse[]` as JSON, from the observer's snapshots; only a machine without a fresh
   * snapshot is read now, bounded by its own status timeout (see `MachineObserver.fresh`).
   */
  async body(): Promise<Buffer> {
    const registered = this.machines.machines;
    const now = Date.now();
    let pending = false;
    const snapshots = registered.map((entry) => {
      const snapshot = this.observer.fresh(entry.id, now);
      if (snapshot instanceof Promise) pending = true;
      return snapshot;
    });
    const observed = pending ? await Promise.all(snapshots) : (snapshots as ObservedMachine[]);
    const remote = this.farm.remote();
    let changed = this.bytes === null || remote !== this.remote;
    this.remote = remote;
    for (const [index, entry] of registered.entries()) {
      const snapshot = observed[index] as ObservedMachine;
      const job = this.jobs.currentJob(entry.id);
      const identity = entry.machine.identity();
      const camera = this.cameras.status(entry.id);
      const spools = this.spools.configured ? this.spools.of(entry.id) : null;
      const cached = this.entries[index];
      if (
        cached &&
        cached.observed === snapshot &&
        cached.camera === camera &&
        cached.spools === spools &&
        sameJob(cached.job, job) &&
        sameIdentity(cached.identity, identity)
      ) {
        continue;
      }
      const info = machineInfo(
        this.machines,
        entry,
        snapshot.status,
        snapshot,
        job,
        camera,
        identity,
        spools,
      );
      if (this.instance !== null) info.instance = this.instance;
      this.entries[index] = { observed: snapshot, camera, job, identity, spools, json: JSON.stringify(info) };
      changed = true;
    }
    if (changed || !this.bytes) this.bytes = Buffer.from(`[${this.joined(registered, remote)}]`);
    return this.bytes;
  }

  /** Local and remote entries merged in id order (both lists are sorted by id). */
  private joined(registered: MachineRegistry['machines'], remote: readonly RemoteMachine[]): string {
    if (remote.length === 0) return this.entries.map((entry) => entry?.json).join(',');
    const parts: string[] = [];
    let r = 0;
    for (const [index, entry] of registered.entries()) {
      for (; r < remote.length && (remote[r] as RemoteMachine).id < entry.id; r++) {
        parts.push(remoteMachineJson(remote[r] as RemoteMachine));
      }
      parts.push(this.entries[index]?.json ?? '');
    }
    for (; r < remote.length; r++) parts.push(remoteMachineJson(remote[r] as RemoteMachine));
    return parts.join(',');
  }
}

function sameJob(a: CurrentJob | null, b: CurrentJob | null): boolean {
  return a === b || (a !== null && b !== null && a.id === b.id && a.status === b.status);
}

function sameIdentity(a: MachineIdentity, b: MachineIdentity): boolean {
  if (a === b) return true;
  const volumeA = a.maxPartVolume;
  const volumeB = b.maxPartVolume;
  return (
    a.machineType === b.machineType &&
    a.makeModel.manufacturer === b.makeModel.manufacturer &&
    a.makeModel.model === b.makeModel.model &&
    a.makeModel.serial === b.makeModel.serial &&
    (volumeA === volumeB ||
      (volumeA !== null &&
        volumeB !== null &&
        volumeA.width === volumeB.width &&
        volumeA.depth === volumeB.depth &&
        volumeA.height === volumeB.height))
  );
}
