/**
 * The one interface every machine backend implements (Noop, Moonraker, Bambu, Usb).
 *
 * The HTTP layer and the job runner only ever talk to this interface; protocol details stay inside
 * each backend's folder. Wire names (`FusedDeposition`, `{"Usb":{}}`, `ExtraKindA`, …) are the seed's.
 */

import { ServiceError } from '../errors.js';

export type MachineType = 'Stereolithography' | 'FusedDeposition' | 'Cnc';

/** The anchor's filament materials (`material = { type = "pla" }` in the TOML, `FilamentMaterial` on the wire). */
export const FILAMENT_MATERIALS = [
  'pla',
  'pla_support',
  'abs',
  'petg',
  'nylon',
  'tpu',
  'pva',
  'hips',
  'composite',
  'unknown',
] as const;

export interface Volume {
  width: number;
  depth: number;
  height: number;
}

export interface MachineMakeModel {
  manufacturer: string | null;
  model: string | null;
  serial: string | null;
}

/** Externally tagged, exactly one key: `Usb` (serial G-code), `ExtraKindA` (Moonraker), `ExtraKindB` (Bambu). */
export type ExtraMachineInfo =
  | { Usb: Record<string, unknown> }
  | { ExtraKindA: Record<string, unknown> }
  | { ExtraKindB: Record<string, unknown> };

/** Same tags as the anchor's `MachineState` (serde `tag = "state"`, snake_case). */
export type MachineState =
  | { state: 'unknown' }
  | { state: 'idle' }
  | { state: 'running' }
  | { state: 'paused' }
  | { state: 'complete' }
  | { state: 'offline' }
  | { state: 'failed'; message: string | null };

export interface Temperature {
  current: number;
  target: number | null;
}

/** Heater set points to send, in °C (0 turns the heater off); a missing one is left as it is. */
export interface HeaterTargets {
  /** The hot end (tool 0). */
  tool?: number;
  bed?: number;
}

/** What a machine reports about its own nozzle and filaments (a Bambu printer: its nozzle and AMS trays). */
export interface ReportedHardware {
  nozzleDiameter: number;
  filaments: { material: { type: string }; name?: string; color?: string }[];
  loadedFilamentIdx: number | null;
}

/**
 * Whether the service can command the machine (pause, resume, stop, print, temperatures). A Bambu printer
 * under Authorization Control firmware outside LAN-only Developer Mode is watched but refuses commands.
 */
export interface MachineCapabilities {
  control: boolean;
  /** Why not, in words a person can act on; null while `control` is true. */
  reason: string | null;
}

/** What every machine can do unless its backend says otherwise. */
export const FULL_CONTROL: MachineCapabilities = { control: true, reason: null };

/** A snapshot of what the machine reports right now. */
export interface MachineStatus {
  state: MachineState;
  /** Percent 0–100 of the current job, null when nothing is printing or the machine cannot tell. */
  progress: number | null;
  /** Keyed by sensor: `extruder`, `bed`, `chamber`, … (exported as Prometheus gauges). */
  temperatures: Record<string, Temperature>;
  extra: ExtraMachineInfo | null;
  /** Present when the machine reports its hardware itself; `hardware_configuration` then prefers it to the config. */
  hardware?: ReportedHardware;
  /** Absent means `FULL_CONTROL`. */
  capabilities?: MachineCapabilities;
}

/** What the machine needs to be given: plain G-code, or Bambu's `.gcode.3mf` package. */
export type PrintFileFormat = 'gcode' | 'gcode.3mf';

export interface PrintRequest {
  jobId: string;
  /** Human name of the job; backends sanitise it before using it as a remote file name. */
  jobName: string;
  /** Local path of the file in `PrintFileFormat` of this machine. */
  filePath: string;
  /** Aborted when the job is cancelled before the machine has started it (e.g. during upload). */
  signal: AbortSignal;
}

export type PrintOutcome = (
  | { status: 'completed' }
  | { status: 'cancelled' }
  | { status: 'failed'; message: string }
) & {
  /** The printer's own count of the filament the print pushed, in mm, where it reports one. */
  filamentUsedMm?: number;
};

/** A print the machine has accepted and started. */
export interface ActivePrint {
  /** Settles when the machine has finished with the job, whatever the outcome. Never rejects. */
  finished: Promise<PrintOutcome>;
}

/** Static facts about the machine; may be refined once the backend has talked to the device. */
export interface MachineIdentity {
  machineType: MachineType;
  makeModel: MachineMakeModel;
  maxPartVolume: Volume | null;
}

/** A Klipper printer's webcams, as its Moonraker registry lists them (cameras/moonraker-source.ts reads it). */
export interface MoonrakerCamera {
  kind: 'moonraker';
  /** The printer's web host, which relative webcam URLs resolve against. */
  baseUrl: string;
  /** `GET /server/webcams/list`'s `result`. */
  listWebcams(signal: AbortSignal): Promise<unknown>;
  /** Calls `listener` when Moonraker announces `notify_webcams_changed`; returns the unsubscribe function. */
  onWebcamsChanged(listener: () => void): () => void;
}

/** A Bambu Lab printer's own camera: JPEG over TLS (P1, A1) or RTSPS (X1, H2, P2S). */
export interface BambuCamera {
  kind: 'bambu';
  protocol: 'jpeg' | 'rtsps';
  host: string;
  port: number;
  serial: string | null;
  accessCode: string;
}

/** Where a device's own camera is; the camera service turns it into a source. */
export type DeviceCamera = MoonrakerCamera | BambuCamera;

export interface Machine {
  readonly id: string;
  /** The file format `print` expects. */
  readonly printFormat: PrintFileFormat;
  /** A simulator that takes any design as it is, sliced or not (the anchor's Noop); absent means false. */
  readonly takesDesigns?: boolean;
  /**
   * How many filament slots a spool can be assigned to one by one (a Bambu AMS: up to 4 units of 4 trays);
   * absent: the machine prints from one spool (`PUT /machines/{id}/spool` without a slot).
   */
  readonly filamentSlots?: number;
  identity(): MachineIdentity;
  /** Never throws: a device that does not answer in time is reported as `offline`. */
  status(): Promise<MachineStatus>;
  /**
   * Hands a prepared file to the machine and starts it. Resolves once the machine has started the job;
   * rejects with a `MachineError` (e.g. busy, upload refused) when it cannot.
   */
  print(request: PrintRequest): Promise<ActivePrint>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Stops the current job (the anchor's `stop`); the active print's `finished` settles as `cancelled`. */
  stop(): Promise<void>;
  /**
   * Optional, for a printer that prints on by itself (Moonraker, Bambu): a job machine-api started there
   * before it was killed may still be printing, or have ended meanwhile. Follows that job again: an active print
   * whose `finished` settles with how the job ended; null when the printer is not printing this job and
   * does not report its end either (its outcome is unknown). Called once, after the machine started.
   */
  followAgain?(job: { jobId: string; jobName: string }): Promise<ActivePrint | null>;
  /**
   * Optional: tells a device that remembers a finished print (Klipper's `complete`/`cancelled`) that the
   * bed has been cleared, so it reads idle again. Only called when the machine is not printing.
   */
  clear?(): Promise<void>;
  /**
   * Optional: sets heater targets (G-code M104/M140 or the device's equivalent). Only called when the
   * machine is not printing, with targets already checked against the machine's limits; a machine without
   * it cannot be given temperatures.
   */
  setTemperatures?(targets: HeaterTargets): Promise<void>;
  /**
   * Optional: calls `listener` whenever the device has pushed something that may change `status()` (a
   * websocket notification, an MQTT report, a print starting or ending). The service then reads `status()`
   * at once instead of waiting for its next poll. Returns the unsubscribe function.
   */
  onStatusChange?(listener: () => void): () => void;
  /**
   * Optional: the device's own camera as far as it is known now (null: none, or not found yet). Returns
   * the same object while nothing about it changes. A `camera` table in the config takes precedence.
   */
  camera?(): DeviceCamera | null;
  /** Starts background work (connections, discovery, polling). */
  start(): Promise<void>;
  /** Releases every connection, timer and child process. */
  close(): Promise<void>;
}

/** HTTP status of each machine-state error: busy or refusing is a conflict, unreachable is unavailable. */
const MACHINE_ERROR_STATUS = {
  MachineBusy: 409,
  /** Idle, but the bed awaits a confirmation that it is clear (or the device still shows a finished print). */
  MachineNotReady: 409,
  MachineRejected: 409,
  MachineOffline: 503,
  NotSupported: 501,
} as const;

/**
 * Why a machine refused an operation: the one family of machine-state errors, thrown by backends and by
 * the job runner alike. A `ServiceError`, so the error mapper renders it like every other domain error.
 */
export class MachineError extends ServiceError {
  constructor(
    readonly code: keyof typeof MACHINE_ERROR_STATUS,
    message: string,
  ) {
    super(MACHINE_ERROR_STATUS[code], code, message);
    this.name = 'MachineError';
  }
}
