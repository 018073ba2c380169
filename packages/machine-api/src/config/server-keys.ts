/**
 * The service-wide tables of the configuration file: `[server]` (limits, access, notifications' waiting
 * times) and `[cameras]`.
 */

import { type Static, Type } from 'typebox';
import { DEFAULT_DESIGN_LIMITS, type DesignLimits } from '../design/limits.js';

export const ServerKeys = Type.Object({
  /** Largest accepted upload of `POST /print`, in MiB. */
  max_upload_mib: Type.Number({ exclusiveMinimum: 0, default: 512 }),
  /** How long a machine may take to report its status before it is listed as offline. */
  status_timeout_ms: Type.Integer({ minimum: 1, default: 3000 }),
  /** Slicer processes allowed at once across all machines (default: the number of CPU cores). */
  max_concurrent_slices: Type.Optional(Type.Integer({ minimum: 1 })),
  /** `keys`: every request but the open probes needs an API key; `off`: none does. Default by bind address. */
  auth: Type.Optional(Type.Union([Type.Literal('keys'), Type.Literal('off')])),
  /** Web origins (`scheme://host[:port]`) allowed to change state from a browser, e.g. a web front end. */
  allowed_origins: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  /** Web origins allowed to read cross-origin: `"*"` (any, the default) or a list. */
  read_origins: Type.Union([Type.Literal('*'), Type.Array(Type.String({ minLength: 1 }))], { default: '*' }),
  /** `keys`: `/metrics` needs a `read` key when auth is on; `open`: scrapers need none. */
  metrics_auth: Type.Union([Type.Literal('keys'), Type.Literal('open')], { default: 'keys' }),
  /** Advertise the service (`_machine-api._tcp`) and its OctoPrint bases (`_octoprint._tcp`) over mDNS. */
  mdns: Type.Optional(Type.Boolean()),
  /** Interval of the fallback status poll of machines whose backend pushes nothing (milliseconds). */
  observe_interval_ms: Type.Optional(Type.Integer({ minimum: 50, default: 1000 })),
  // Limits on what measuring one design may cost (design/limits.ts); a design beyond one is refused.
  /** Longest line of a text design (ASCII STL, OBJ, G-code) and longest XML run of a 3MF, in bytes. */
  max_line_bytes: Type.Integer({ minimum: 256, default: DEFAULT_DESIGN_LIMITS.maxLineBytes }),
  /** Total uncompressed size of a 3MF archive, in MiB. */
  max_3mf_uncompressed_mib: Type.Number({
    exclusiveMinimum: 0,
    default: DEFAULT_DESIGN_LIMITS.max3mfUncompressedBytes / (1024 * 1024),
  }),
  /** Uncompressed ÷ compressed size of a 3MF archive and of each of its entries over 1 MiB. */
  max_3mf_compression_ratio: Type.Number({
    minimum: 1,
    default: DEFAULT_DESIGN_LIMITS.max3mfCompressionRatio,
  }),
  /** Triangles of one design (STL, 3MF; OBJ faces counted as triangles). */
  max_triangles: Type.Integer({ minimum: 1, default: DEFAULT_DESIGN_LIMITS.maxTriangles }),
  /** Vertices of one indexed-mesh design (3MF, OBJ). */
  max_vertices: Type.Integer({ minimum: 1, default: DEFAULT_DESIGN_LIMITS.maxVertices }),
  // Notifications (notify/): when the two waiting conditions become events.
  /** A bed awaiting `POST /machines/{id}/clear` this long sends `machine.awaiting_clear`. */
  awaiting_clear_minutes: Type.Number({ exclusiveMinimum: 0, default: 30 }),
  /** A job waiting in the queue this long sends `queue.waiting`. */
  queue_wait_minutes: Type.Number({ exclusiveMinimum: 0, default: 60 }),
  /** The address people reach the service at (`https://printers.example.com`); messages link into its dashboard. */
  public_url: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  // A farm on several hosts (docs/machine-api/farm.md).
  /** `postgres://user:password@host/db`: the database every instance of the farm shares; absent: SQLite in the data dir. */
  database_url: Type.Optional(Type.String({ pattern: '^postgres(ql)?://[^\\s]+$' })),
  /** This instance's name in the farm (default: the host name and the listening port, `host:port`). */
  instance: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$' })),
  /** An instance whose heartbeat is older than this is dead: its machines are listed offline, its claims released. */
  heartbeat_timeout_seconds: Type.Number({ minimum: 1, maximum: 3600, default: 15 }),
});
export type ServerSettings = Static<typeof ServerKeys>;

/** The `[cameras]` table: limits and job photos, for every camera. */
export const CameraKeys = Type.Object({
  /** Largest accepted camera frame; a larger one ends that camera's upstream with an error. */
  max_frame_mib: Type.Number({ exclusiveMinimum: 0, default: 16 }),
  /** How long a camera may take to send a frame (unless its own `camera.timeout_ms` says otherwise). */
  timeout_ms: Type.Integer({ minimum: 1, default: 10_000 }),
  /** How long an upstream stays open after its last viewer left. */
  idle_close_seconds: Type.Number({ minimum: 0, default: 10 }),
  /** Take a photo of every finished job (completed, failed, cancelled). */
  job_photos: Type.Boolean({ default: true }),
  /** Days a job's photo is kept; 0 keeps them forever. */
  photo_retention_days: Type.Number({ minimum: 0, default: 30 }),
});
export type CameraSettings = Static<typeof CameraKeys>;

/** The design limits of the `[server]` table. */
export function designLimits(server: ServerSettings): DesignLimits {
  return {
    maxLineBytes: server.max_line_bytes,
    max3mfUncompressedBytes: Math.floor(server.max_3mf_uncompressed_mib * 1024 * 1024),
    max3mfCompressionRatio: server.max_3mf_compression_ratio,
    maxTriangles: server.max_triangles,
    maxVertices: server.max_vertices,
  };
}

/** `[filament]`: how the cost of filament is shown. */
export const FilamentKeys = Type.Object({
  /** The one currency of every price and cost (`price_per_kg`, Spoolman's prices, `GET /stats`), e.g. "EUR". */
  currency: Type.Optional(Type.String({ minLength: 1, maxLength: 16, pattern: '^\\S+$' })),
});
export type FilamentKeySettings = Static<typeof FilamentKeys>;
