/**
 * A Klipper printer's camera, as Moonraker's webcam registry describes it (`GET /server/webcams/list`:
 * name, service, snapshot and stream URLs, flip and rotation; Arksine/moonraker docs/external_api). The
 * registry is read at start, again when Moonraker announces `notify_webcams_changed`, and before an
 * upstream opens when the last read is over a minute old (a Moonraker reached only by polling sends no
 * notification). The first enabled webcam is used. Relative URLs resolve against the printer's web host
 * (`camera_base_url`, default the Moonraker host on port 80), as Mainsail and Fluidd resolve them.
 */

import type { Logger } from 'pino';
import type { MoonrakerCamera } from '../machines/machine.js';
import {
  type CameraOrientation,
  type CameraSource,
  cameraBadAnswer,
  type FrameSink,
  UPRIGHT,
} from './camera.js';
import { HttpCameraSource } from './http-source.js';

/** Services whose `stream_url` is MJPEG; for the others (WebRTC, HLS) the stream is made of snapshots. */
const MJPEG_SERVICES = new Set(['mjpegstreamer', 'mjpegstreamer-adaptive', 'uv4l-mjpeg', 'ipstream']);
const REGISTRY_MAX_AGE_MS = 60_000;

interface Webcam {
  name: string;
  service: string;
  enabled: boolean;
  snapshotUrl: string | null;
  streamUrl: string | null;
  orientation: CameraOrientation;
}

/** The webcams of a `/server/webcams/list` result, in order; entries that are not objects are skipped. */
export function parseWebcams(result: unknown): Webcam[] {
  const list = (result as { webcams?: unknown } | null)?.webcams;
  if (!Array.isArray(list)) return [];
  return list.flatMap((item): Webcam[] => {
    if (item === null || typeof item !== 'object') return [];
    const cam = item as Record<string, unknown>;
    const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);
    const rotation = Number(cam.rotation ?? 0);
    return [
      {
        name: text(cam.name) ?? 'webcam',
        service: text(cam.service) ?? 'mjpegstreamer',
        enabled: cam.enabled !== false,
        snapshotUrl: text(cam.snapshot_url),
        streamUrl: text(cam.stream_url),
        orientation: {
          flipHorizontal: cam.flip_horizontal === true,
          flipVertical: cam.flip_vertical === true,
          rotation: [0, 90, 180, 270].includes(rotation) ? rotation : 0,
        },
      },
    ];
  });
}

/** A registry URL made absolute against the printer's web host; null unless it is http(s). */
export function resolveWebcamUrl(url: string | null, baseUrl: string): string | null {
  if (url === null) return null;
  try {
    const resolved = new URL(url, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    return resolved.protocol === 'http:' || resolved.protocol === 'https:' ? resolved.toString() : null;
  } catch {
    return null;
  }
}

export class MoonrakerCameraSource implements CameraSource {
  readonly kind = 'moonraker' as const;
  private camera: HttpCameraSource | null = null;
  private turned: CameraOrientation = UPRIGHT;
  private reason: string | null = 'the webcam registry has not been read yet';
  private readAt = 0;
  /** The registry lists a webcam, but none this service can read pictures from. */
  private unusable = false;
  private reading: Promise<void> | null = null;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly device: MoonrakerCamera,
    private readonly settings: { timeoutMs: number; maxFrameBytes: number },
    private readonly logger: Logger,
  ) {
    this.unsubscribe = device.onWebcamsChanged(() => void this.refresh());
    void this.refresh();
  }

  unavailable(): string | null {
    return this.reason;
  }

  /** No webcam known: the registry lists none, or has not been read (yet); the machine shows no camera. */
  absent(): boolean {
    return this.camera === null && !this.unusable;
  }

  orientation(): CameraOrientation {
    return this.turned;
  }

  snapshot(signal: AbortSignal): Promise<Buffer> | null {
    if (!this.camera)
      return this.current().then(() => this.requireCamera().snapshot(signal) ?? this.noSnapshot());
    return this.camera.snapshot(signal);
  }

  async stream(sink: FrameSink, signal: AbortSignal): Promise<void> {
    await this.current();
    return this.requireCamera().stream(sink, signal);
  }

  close(): void {
    this.unsubscribe();
  }

  /** Reads the registry again (joining a read under way). Never throws: a failure becomes the reason. */
  refresh(): Promise<void> {
    this.reading ??= this.read().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async current(): Promise<void> {
    if (!this.camera || Date.now() - this.readAt > REGISTRY_MAX_AGE_MS) await this.refresh();
  }

  private requireCamera(): HttpCameraSource {
    if (!this.camera) throw cameraBadAnswer(`the printer's webcam cannot be used: ${this.reason}`);
    return this.camera;
  }

  private noSnapshot(): Promise<Buffer> {
    return Promise.reject(cameraBadAnswer('the webcam has no snapshot URL'));
  }

  private async read(): Promise<void> {
    let webcams: Webcam[];
    try {
      webcams = parseWebcams(await this.device.listWebcams(AbortSignal.timeout(this.settings.timeoutMs)));
    } catch (error) {
      // Keep a camera already known: Moonraker may be restarting while the webcam streamer still serves.
      if (!this.camera)
        this.reason = `Moonraker's webcam registry could not be read: ${(error as Error).message}`;
      return;
    }
    this.readAt = Date.now();
    const webcam = webcams.find((cam) => cam.enabled);
    const snapshotUrl = resolveWebcamUrl(webcam?.snapshotUrl ?? null, this.device.baseUrl);
    const streamUrl = MJPEG_SERVICES.has(webcam?.service ?? '')
      ? resolveWebcamUrl(webcam?.streamUrl ?? null, this.device.baseUrl)
      : null;
    if (!webcam || (!snapshotUrl && !streamUrl)) {
      this.camera = null;
      this.unusable = webcam !== undefined;
      this.reason = webcam
        ? `the webcam "${webcam.name}" (${webcam.service}) has no usable snapshot or MJPEG stream URL`
        : 'Moonraker lists no enabled webcam';
      return;
    }
    this.camera = new HttpCameraSource(
      { snapshotUrl, streamUrl, ...this.settings },
      'moonraker',
      webcam.orientation,
    );
    this.turned = webcam.orientation;
    this.reason = null;
    this.unusable = false;
    this.logger.debug({ webcam: webcam.name, service: webcam.service }, 'Moonraker webcam found');
  }
}
