/**
 * One camera's upstream, shared: however many viewers and snapshot requests there are, the hub holds at
 * most one connection to the camera (most Bambu printers accept only one), opened on the first demand and
 * closed `idleCloseMs` after the last viewer left. Every frame goes to every viewer that can take it
 * (a viewer decides itself to skip a frame it cannot write yet: see stream-response.ts), and is kept as
 * the latest frame for snapshots. When the upstream fails, its error ends every viewer and every waiting
 * snapshot, and is reported as the camera's `reason` until a frame arrives again.
 */

import type { Logger } from 'pino';
import {
  asCameraError,
  type CameraError,
  type CameraSource,
  cameraBadAnswer,
  cameraTimeout,
  cameraUnavailable,
} from './camera.js';
import { jpegDimensions } from './jpeg.js';

export interface HubSettings {
  /** How long the upstream stays open after the last viewer left. */
  idleCloseMs: number;
  /** Oldest kept frame a snapshot may answer with. */
  freshMs: number;
  /** How long a snapshot waits for a frame. */
  timeoutMs: number;
}

/** A viewer of the live stream. */
export interface FrameViewer {
  frame(jpeg: Buffer): void;
  /** The upstream ended: `error` says why (null when the hub closed). */
  end(error: CameraError | null): void;
}

/** What is known about a camera's pictures (replaced, never mutated, when something changes). */
export interface CameraState {
  lastFrameAt: Date | null;
  width: number | null;
  height: number | null;
  /** The last upstream failure, until a frame arrives again. */
  error: string | null;
}

interface Upstream {
  controller: AbortController;
  /** Whether any frame has arrived on this connection. */
  framed: boolean;
}

interface Waiter {
  resolve(jpeg: Buffer): void;
  reject(error: CameraError): void;
}

export class CameraHub {
  private upstream: Upstream | null = null;
  private latest: { jpeg: Buffer; at: number } | null = null;
  private readonly viewers = new Set<FrameViewer>();
  private readonly waiters = new Set<Waiter>();
  private idleTimer: NodeJS.Timeout | undefined;
  private snapshotInFlight: Promise<Buffer> | null = null;
  private current: CameraState = { lastFrameAt: null, width: null, height: null, error: null };
  private closed = false;
  /** Upstream connections opened so far (for tests and metrics). */
  upstreamsOpened = 0;

  constructor(
    private readonly source: CameraSource,
    private readonly settings: HubSettings,
    private readonly logger: Logger,
  ) {}

  state(): CameraState {
    return this.current;
  }

  /** Whether an upstream connection is open now. */
  get streaming(): boolean {
    return this.upstream !== null;
  }

  /** A JPEG at most `freshMs` old: the kept frame, a snapshot, or the next frame of the (shared) stream. */
  async frame(): Promise<Buffer> {
    if (this.latest && Date.now() - this.latest.at <= this.settings.freshMs) return this.latest.jpeg;
    if (this.upstream) return this.nextFrame();
    return this.snapshotOnce() ?? this.nextFrame();
  }

  /** Adds a viewer of every frame from now on; returns its removal. */
  watch(viewer: FrameViewer): () => void {
    this.viewers.add(viewer);
    this.demand();
    return () => {
      if (this.viewers.delete(viewer)) this.maybeIdle();
    };
  }

  /** Ends every viewer and the upstream. */
  close(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.stop();
    for (const waiter of this.waiters) waiter.reject(cameraUnavailable('the service is shutting down'));
    for (const viewer of this.viewers) viewer.end(null);
    this.viewers.clear();
  }

  /** A snapshot by the source's own way, shared by concurrent callers; null when it has none. */
  private snapshotOnce(): Promise<Buffer> | null {
    if (this.snapshotInFlight) return this.snapshotInFlight;
    const signal = AbortSignal.timeout(this.settings.timeoutMs);
    const request = this.source.snapshot(signal);
    if (!request) return null;
    this.snapshotInFlight = request.then(
      (jpeg) => {
        this.snapshotInFlight = null;
        this.accept(jpeg);
        return jpeg;
      },
      (error: unknown) => {
        this.snapshotInFlight = null;
        const failure = signal.aborted
          ? cameraTimeout('the camera', this.settings.timeoutMs)
          : asCameraError(error, 'the camera');
        this.fail(failure);
        throw failure;
      },
    );
    return this.snapshotInFlight;
  }

  private nextFrame(): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        settle();
        reject(cameraTimeout('the camera', this.settings.timeoutMs));
      }, this.settings.timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        this.maybeIdle();
      };
      const waiter: Waiter = {
        resolve: (jpeg) => {
          settle();
          resolve(jpeg);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      this.waiters.add(waiter);
      this.demand();
    });
  }

  /** Someone wants frames: cancel a pending idle close, open the upstream if none is open. */
  private demand(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.upstream || this.closed) return;
    const upstream: Upstream = { controller: new AbortController(), framed: false };
    this.upstream = upstream;
    this.upstreamsOpened++;
    const { signal } = upstream.controller;
    this.source
      .stream((jpeg) => {
        if (signal.aborted) return;
        upstream.framed = true;
        this.accept(jpeg);
      }, signal)
      .then(() => {
        if (!signal.aborted) throw cameraBadAnswer('the camera closed its stream');
      })
      .catch((error: unknown) => {
        if (signal.aborted) return;
        const failure = asCameraError(error, 'the camera');
        this.logger.warn({ err: failure.message, code: failure.errorCode }, 'camera stream ended');
        if (this.upstream === upstream) this.upstream = null;
        this.fail(failure);
        for (const viewer of this.viewers) viewer.end(failure);
        this.viewers.clear();
      });
  }

  private maybeIdle(): void {
    if (this.viewers.size > 0 || this.waiters.size > 0 || !this.upstream || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.viewers.size === 0 && this.waiters.size === 0) this.stop();
    }, this.settings.idleCloseMs);
    this.idleTimer.unref();
  }

  private stop(): void {
    this.upstream?.controller.abort();
    this.upstream = null;
  }

  private accept(jpeg: Buffer): void {
    const at = Date.now();
    this.latest = { jpeg, at };
    const size =
      this.current.width !== null && this.current.error === null && this.latestSizeKnown(jpeg)
        ? { width: this.current.width, height: this.current.height }
        : jpegDimensions(jpeg);
    this.current = {
      lastFrameAt: new Date(at),
      width: size?.width ?? null,
      height: size?.height ?? null,
      error: null,
    };
    for (const waiter of this.waiters) waiter.resolve(jpeg);
    for (const viewer of this.viewers) viewer.frame(jpeg);
  }

  /** Reading a frame's size costs a header walk; every 30th frame re-reads it (a camera may change mode). */
  private sizeChecks = 0;
  private latestSizeKnown(_jpeg: Buffer): boolean {
    this.sizeChecks = (this.sizeChecks + 1) % 30;
    return this.sizeChecks !== 0;
  }

  private fail(error: CameraError): void {
    this.current = { ...this.current, error: error.message };
    for (const waiter of this.waiters) waiter.reject(error);
  }
}
