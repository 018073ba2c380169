/** What every route module is given, and the response helpers they share. */

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TSchema } from 'typebox';
import type { AppKeyRequests } from '../access/app-keys.js';
import type { CameraTokens } from '../access/camera-tokens.js';
import type { InstallSecret } from '../access/install-secret.js';
import type { KeyService } from '../access/keys.js';
import type { JobPhotos } from '../cameras/job-photos.js';
import type { CameraService } from '../cameras/service.js';
import type { EventBus } from '../events/events.js';
import type { FarmMachines } from '../farm/farm-machines.js';
import type { JobRunner } from '../jobs/runner.js';
import type { JobStats } from '../jobs/stats.js';
import type { MachineObserver } from '../machines/observer.js';
import type { MachineRegistry } from '../machines/registry.js';
import type { ServiceMetrics } from '../metrics.js';
import type { NotificationService } from '../notify/service.js';
import type { StoredFiles, SubmitPrint } from '../octoprint/stored-files.js';
import type { FarmQueue } from '../queue/queue.js';
import type { SpoolAssignments } from '../spoolman/assignments.js';
import type { TemperatureService } from '../temperature/service.js';
import type { Forwarder } from './forward.js';
import { ErrorSchema } from './schemas/errors.js';
import { ref } from './schemas/refs.js';

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface ServerContext {
  machines: MachineRegistry;
  metrics: ServiceMetrics;
  /** How long a machine may take to report its status before it is listed as offline. */
  statusTimeoutMs: number;
  jobs: JobRunner;
  /** The cached, pushed-and-polled state of every machine (`ready`, progress of jobs). */
  observer: MachineObserver;
  queue: FarmQueue;
  events: EventBus;
  /** Largest accepted `file` part of `POST /print`, in bytes. */
  maxUploadBytes: number;
  keys: KeyService;
  /** Keys apps ask for through OctoPrint's Application Keys flow. */
  appKeys: AppKeyRequests;
  /** The tokens in the camera URLs handed to OctoPrint clients. */
  cameraTokens: CameraTokens;
  /** Where per-install stable ids (OctoPrint `upnpUuid`) come from. */
  installSecret: InstallSecret;
  /** Notification targets, the test message and the delivery log. */
  notifications: NotificationService;
  /** Files uploaded from slicers for a later print. */
  files: StoredFiles;
  /** Sends a design to a machine or the farm queue (the OctoPrint bases and stored files use it). */
  submit: SubmitPrint;
  /** The machines' cameras: snapshots, live streams, status. */
  cameras: CameraService;
  /** The photos of finished jobs. */
  photos: JobPhotos;
  /** Heater targets and presets. */
  temperatures: TemperatureService;
  /** Totals over finished jobs (`GET /stats`). */
  stats: JobStats;
  /** This instance's name on a farm of several instances (the `instance` of its machines); null on SQLite. */
  instance: string | null;
  /** The machines of the farm's other instances (none on SQLite). */
  farm: FarmMachines;
  /** The Spoolman spools machines print from (`configured` is false without `[spoolman]`). */
  spools: SpoolAssignments;
  /** Carries actions on the other instances' machines to them; null on a single instance. */
  forwarder: Forwarder | null;
}

/** What every route plugin is registered with (`app.register(plugin, { context })`). */
export interface RouteOptions {
  context: ServerContext;
}

/** A 200 JSON response documented as the anchor documents it. */
export function ok<T extends TSchema>(schema: T) {
  return { description: 'successful operation', content: { 'application/json': { schema } } };
}

/** Every operation declares `Error` for all 4XX and 5XX statuses. */
export const errorResponses = {
  '4xx': { description: 'Error', content: { 'application/json': { schema: ref(ErrorSchema) } } },
  '5xx': { description: 'Error', content: { 'application/json': { schema: ref(ErrorSchema) } } },
};
