/** Domain objects → wire shapes of schemas.ts (field order as the anchor serialises it). */

import type { CameraStatus } from '../cameras/service.js';
import type { Filament } from '../config/machine-keys.js';
import type { Job } from '../jobs/job.js';
import type { CurrentJob } from '../jobs/runner.js';
import { FULL_CONTROL, type MachineIdentity, type MachineStatus } from '../machines/machine.js';
import type { ObservedMachine } from '../machines/observer.js';
import { designKindsOf } from '../machines/prints.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import type { MachineSpools } from '../spoolman/assignments.js';
import { type MachineFilaments, withSpools } from '../spoolman/filaments.js';
import { WHOLE_MACHINE } from '../spoolman/tables.js';
import type { CameraInfo } from './schemas/cameras.js';
import type { JobResponse } from './schemas/jobs.js';
import type { MachineInfoResponse } from './schemas/machines.js';
import type { MachineSpools as MachineSpoolsResponse } from './schemas/spools.js';

type HardwareConfiguration = NonNullable<MachineInfoResponse['hardware_configuration']>;
type WireFilament = Extract<HardwareConfiguration, { type: 'fdm' }>['config']['filaments'][number];

/** A machine, its current status and the service's view of it (`ready`) as `MachineInfoResponse`. */
export function machineInfo(
  registry: MachineRegistry,
  entry: RegisteredMachine,
  status: MachineStatus,
  observed: ObservedMachine | undefined,
  currentJob: CurrentJob | null,
  camera: CameraStatus | null,
  identity: MachineIdentity = entry.machine.identity(),
  /** The machine's Spoolman spools; null when Spoolman is not configured. */
  spools: MachineSpools | null = null,
): MachineInfoResponse {
  return {
    id: entry.id,
    make_model: {
      manufacturer: identity.makeModel.manufacturer,
      model: identity.makeModel.model,
      serial: identity.makeModel.serial,
    },
    machine_type: identity.machineType,
    max_part_volume: registry.maxPartVolume(entry, identity),
    extra: status.extra,
    state: status.state,
    progress: status.progress,
    hardware_configuration: hardwareConfiguration(
      identity.machineType,
      withSpools(status.hardware ?? entry.common, spools?.assignments ?? []),
    ),
    ready: observed?.ready ?? false,
    awaiting_clear_since: observed?.awaitingClearSince ?? null,
    design_types: [...designKindsOf(entry)],
    temperatures: status.temperatures,
    current_job: currentJob && {
      id: currentJob.id,
      status: currentJob.status,
      progress: currentJob.status === 'printing' ? status.progress : null,
    },
    camera: camera && cameraInfo(camera),
    capabilities: status.capabilities ?? FULL_CONTROL,
    ...(spools ? { spoolman: machineSpools(entry.id, spools) } : {}),
  };
}

/** A machine's spools as the `MachineSpools` wire shape. */
export function machineSpools(machineId: string, spools: MachineSpools): MachineSpoolsResponse {
  return {
    machine_id: machineId,
    spools: spools.assignments.map(({ slot, spoolId, spool, assignedAt }) => ({
      slot: slot === WHOLE_MACHINE ? null : slot,
      spool_id: spoolId,
      name: spool.name,
      material: spool.material,
      color_hex: spool.colorHex,
      remaining_weight: spool.remainingG,
      assigned_at: assignedAt,
    })),
    notice: spools.notice,
  };
}

/** A camera's status as the `CameraInfo` wire shape. */
export function cameraInfo(camera: CameraStatus): CameraInfo {
  return {
    available: camera.available,
    kind: camera.kind,
    width: camera.width,
    height: camera.height,
    last_frame_at: camera.lastFrameAt?.toISOString() ?? null,
    reason: camera.reason,
    flip_horizontal: camera.orientation.flipHorizontal,
    flip_vertical: camera.orientation.flipVertical,
    rotation: camera.orientation.rotation,
  };
}

/**
 * What the machine reports about itself is live (e.g. the spools in an AMS), the config the fallback, and
 * an assigned Spoolman spool wins over both for its slot (`filaments` is that combination).
 */
function hardwareConfiguration(
  machineType: string,
  filaments: MachineFilaments,
): HardwareConfiguration | null {
  if (machineType !== 'FusedDeposition') return { type: 'none' };
  const { nozzleDiameter, loadedFilamentIdx } = filaments;
  if (nozzleDiameter === null) return null;
  return {
    type: 'fdm',
    config: {
      nozzle_diameter: nozzleDiameter,
      filaments: filaments.filaments.map(wireFilament),
      loaded_filament_idx: loadedFilamentIdx,
    },
  };
}

/** `name` and `color` appear only when configured, as in the anchor. */
function wireFilament(filament: Filament): WireFilament {
  return {
    ...(filament.name !== undefined ? { name: filament.name } : {}),
    material: { type: filament.material.type as WireFilament['material']['type'] },
    ...(filament.color !== undefined ? { color: filament.color } : {}),
  };
}

/** What is known about a job only live: its machine's progress, its place in the queue. */
export interface JobLive {
  progress: number | null;
  position: number | null;
}

/** Whether a job's filament record says anything (a material alone is for totals, not worth a field). */
function knowsFilament(filament: Job['filament']): filament is NonNullable<Job['filament']> {
  if (!filament) return false;
  return [filament.estimatedG, filament.estimatedM, filament.usedG, filament.usedM, filament.spoolId].some(
    (value) => value !== null,
  );
}

/** A job record as the `Job` wire shape. */
export function jobResponse(job: Job, live: JobLive): JobResponse {
  return {
    id: job.id,
    machine_id: job.machineId,
    job_name: job.jobName,
    file_name: job.fileName,
    file_size: job.fileSize,
    status: job.status,
    message: job.message,
    estimate: job.estimate && {
      print_time_seconds: job.estimate.printTimeSeconds,
      filament_used_mm: job.estimate.filamentUsedMm,
      filament_used_cm3: job.estimate.filamentUsedCm3,
      filament_used_g: job.estimate.filamentUsedGrams,
    },
    filament: knowsFilament(job.filament)
      ? {
          estimated_g: job.filament.estimatedG,
          estimated_m: job.filament.estimatedM,
          used_g: job.filament.usedG,
          used_m: job.filament.usedM,
          cost: job.filament.cost,
          ...(job.filament.spoolId !== null ? { spool_id: job.filament.spoolId } : {}),
        }
      : null,
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    finished_at: job.finishedAt,
    ...(job.owner !== null ? { owner: job.owner } : {}),
    progress: live.progress,
    priority: job.priority,
    position: live.position,
    constraints: job.constraints as JobResponse['constraints'],
    queued_at: job.queuedAt,
    dispatched_at: job.dispatchedAt,
  };
}
