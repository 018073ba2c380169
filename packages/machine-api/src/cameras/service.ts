/**
 * The cameras of the farm: which source each machine's camera is (a configured HTTP camera first, else the
 * device's own: Moonraker's webcam registry, a Bambu printer's stream), one hub per camera, and what the
 * API reports. Nothing here waits for a camera to answer a status question: `status()` reads what is known.
 */

import type { Logger } from 'pino';
import type { CameraSettings } from '../config/server-keys.js';
import type { DeviceCamera } from '../machines/machine.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import { BambuJpegSource } from './bambu-jpeg-source.js';
import { BambuRtspsSource } from './bambu-rtsps-source.js';
import {
  type CameraKind,
  type CameraOrientation,
  type CameraSource,
  cameraUnavailable,
  NoCamera,
} from './camera.js';
import { HttpCameraSource } from './http-source.js';
import { CameraHub, type CameraState, type FrameViewer } from './hub.js';
import { MoonrakerCameraSource } from './moonraker-source.js';

/** A snapshot answers with a kept frame at most this old. */
const FRESH_MS = 1000;

/** What the API reports about a machine's camera (`camera` on a machine). */
export interface CameraStatus {
  available: boolean;
  kind: CameraKind;
  width: number | null;
  height: number | null;
  lastFrameAt: Date | null;
  reason: string | null;
  orientation: CameraOrientation;
}

interface Camera {
  /** The device camera it was made from (null for a configured one): a new one replaces the camera. */
  device: DeviceCamera | null;
  source: CameraSource;
  hub: CameraHub;
  reported: {
    state: CameraState;
    reason: string | null;
    orientation: CameraOrientation;
    status: CameraStatus;
  } | null;
}

export class CameraService {
  private readonly cameras = new Map<string, Camera>();
  private closed = false;

  constructor(
    private readonly machines: MachineRegistry,
    private readonly settings: CameraSettings,
    private readonly logger: Logger,
  ) {}

  /** The camera of a machine as the API reports it, or null when it has none (known now). */
  status(machineId: string): CameraStatus | null {
    const camera = this.camera(machineId);
    if (!camera || camera.source.absent?.()) return null;
    const state = camera.hub.state();
    const reason = camera.source.unavailable();
    const orientation = camera.source.orientation();
    const kept = camera.reported;
    // The same object while nothing changed: the machine list keeps its serialised entries by identity.
    if (kept && kept.state === state && kept.reason === reason && kept.orientation === orientation) {
      return kept.status;
    }
    const status: CameraStatus = {
      available: reason === null && state.error === null,
      kind: camera.source.kind,
      width: state.width,
      height: state.height,
      lastFrameAt: state.lastFrameAt,
      reason: reason ?? state.error,
      orientation,
    };
    camera.reported = { state, reason, orientation, status };
    return status;
  }

  /** Finds the cameras known at start (a Moonraker's registry is read now, not on the first request). */
  start(): void {
    for (const entry of this.machines.machines) this.camera(entry.id);
  }

  /** A JPEG of the machine's camera at most about a second old. */
  async snapshot(machineId: string): Promise<Buffer> {
    return this.usable(machineId).hub.frame();
  }

  /** Adds a viewer of the machine's live stream; returns its removal. */
  watch(machineId: string, viewer: FrameViewer): () => void {
    return this.usable(machineId).hub.watch(viewer);
  }

  /** Upstream connections opened so far for a machine's camera (tests and metrics). */
  upstreamsOpened(machineId: string): number {
    return this.cameras.get(machineId)?.hub.upstreamsOpened ?? 0;
  }

  close(): void {
    this.closed = true;
    for (const camera of this.cameras.values()) {
      camera.hub.close();
      camera.source.close?.();
    }
    this.cameras.clear();
  }

  private usable(machineId: string): Camera {
    const entry = this.machines.require(machineId);
    const camera = this.camera(entry.id);
    if (!camera || camera.source.absent?.()) throw new NoCamera(entry.id);
    const reason = camera.source.unavailable();
    if (reason !== null && camera.source.kind !== 'moonraker') throw cameraUnavailable(reason);
    return camera;
  }

  /** The machine's camera now: made on first use, remade when the device's camera moved. */
  private camera(machineId: string): Camera | null {
    const entry = this.machines.get(machineId);
    if (!entry || this.closed) return null;
    const kept = this.cameras.get(machineId);
    if (kept && kept.device === null) return kept;
    const device = entry.common.camera ? null : (entry.machine.camera?.() ?? null);
    if (kept && kept.device === device) return kept;
    if (kept) {
      kept.hub.close();
      kept.source.close?.();
      this.cameras.delete(machineId);
    }
    const source = this.sourceFor(entry, device);
    if (!source) return null;
    const logger = this.logger.child({ machine: machineId, camera: source.kind });
    const timeoutMs = entry.common.camera?.timeoutMs ?? this.settings.timeout_ms;
    const hub = new CameraHub(
      source,
      { idleCloseMs: this.settings.idle_close_seconds * 1000, freshMs: FRESH_MS, timeoutMs },
      logger,
    );
    const camera: Camera = { device, source, hub, reported: null };
    this.cameras.set(machineId, camera);
    return camera;
  }

  private sourceFor(entry: RegisteredMachine, device: DeviceCamera | null): CameraSource | null {
    const maxFrameBytes = Math.floor(this.settings.max_frame_mib * 1024 * 1024);
    const configured = entry.common.camera;
    const timeoutMs = configured?.timeoutMs ?? this.settings.timeout_ms;
    if (configured) {
      return new HttpCameraSource({ ...configured, timeoutMs, maxFrameBytes });
    }
    if (!device) return null;
    const logger = this.logger.child({ machine: entry.id });
    switch (device.kind) {
      case 'moonraker':
        return new MoonrakerCameraSource(device, { timeoutMs, maxFrameBytes }, logger);
      case 'bambu':
        return device.protocol === 'jpeg'
          ? new BambuJpegSource({ ...device, timeoutMs, maxFrameBytes })
          : new BambuRtspsSource({ ...device, timeoutMs, maxFrameBytes });
    }
  }
}
