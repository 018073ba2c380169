/**
 * The configuration file, parsed once at start-up: the anchor's TOML (`[machines.<id>]` tables tagged by
 * `type`) plus an optional `[server]` table. Everything is validated here; an error names the file, the
 * machine id, the key and what was expected, so nothing downstream ever sees an unchecked value.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { type Static, type TSchema, Type } from 'typebox';
import { Value } from 'typebox/value';
import { normaliseOrigin } from './access/origins.js';
import { DEFAULT_DESIGN_LIMITS, type DesignLimits } from './design/limits.js';
import type { MachineBackend } from './machines/backend.js';
import { FILAMENT_MATERIALS, type Volume } from './machines/machine.js';
import { NewNotificationTarget } from './notify/schemas.js';
import { type TargetSettings, targetProblem } from './notify/targets.js';
import type { SlicerConfig } from './slicer/slicer.js';

/** A configuration that cannot be used; the message says where and what was expected. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const PositiveMillimetres = Type.Number({ exclusiveMinimum: 0 });

/** Keys every machine may carry, whatever its type (the anchor's shared sub-types plus our volume override). */
const CommonKeys = Type.Object({
  type: Type.String(),
  slicer: Type.Optional(
    Type.Object({
      type: Type.Literal('Prusa'),
      config: Type.String({ minLength: 1 }),
      /** Seconds one slicing run may take before the slicer is killed (default 600). */
      timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    }),
  ),
  nozzle_diameter: Type.Optional(PositiveMillimetres),
  filaments: Type.Optional(
    Type.Array(
      Type.Object({
        material: Type.Object({ type: Type.Union(FILAMENT_MATERIALS.map((m) => Type.Literal(m))) }),
        name: Type.Optional(Type.String()),
        color: Type.Optional(Type.String({ pattern: '^[0-9A-Fa-f]{6}$' })),
      }),
    ),
  ),
  loaded_filament_idx: Type.Optional(Type.Integer({ minimum: 0 })),
  max_part_volume: Type.Optional(
    Type.Object({ width: PositiveMillimetres, depth: PositiveMillimetres, height: PositiveMillimetres }),
  ),
  /**
   * The printer clears its own bed (a belt printer, a part ejector): after a completed or cancelled print
   * it is ready again without `POST /machines/{id}/clear`.
   */
  auto_clear: Type.Optional(Type.Boolean()),
  /** A camera reached over HTTP (cameras/http-source.ts); takes precedence over the device's own camera. */
  camera: Type.Optional(
    Type.Object({
      snapshot_url: Type.Optional(Type.String({ pattern: '^https?://\\S+$' })),
      stream_url: Type.Optional(Type.String({ pattern: '^https?://\\S+$' })),
      username: Type.Optional(Type.String()),
      password: Type.Optional(Type.String()),
      timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ),
  /** Names for groups of machines, e.g. `["bambu", "basement"]`; notification filters may name them. */
  tags: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', maxLength: 64 }))),
});
const COMMON_KEY_NAMES = Object.keys(CommonKeys.properties);

const ServerKeys = Type.Object({
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
});
export type ServerSettings = Static<typeof ServerKeys>;

/** The `[cameras]` table: limits and job photos, for every camera. */
const CameraKeys = Type.Object({
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

export interface Filament {
  material: { type: string };
  name?: string;
  color?: string;
}

/** The keys shared by every machine type, checked and with paths made absolute. */
export interface CommonMachineConfig {
  slicer: SlicerConfig | null;
  nozzleDiameter: number | null;
  filaments: Filament[];
  loadedFilamentIdx: number | null;
  maxPartVolume: Volume | null;
  /** Ready again after a completed or cancelled print without a bed confirmation. */
  autoClear: boolean;
  /** The machine's HTTP camera (`camera = {…}`), or null for the device's own (if it has one). */
  camera: CameraConfig | null;
  /** Group names of the machine (notification filters). */
  tags: string[];
}

export interface CameraConfig {
  snapshotUrl: string | null;
  streamUrl: string | null;
  username?: string;
  password?: string;
  timeoutMs: number | null;
}

export interface MachineDefinition {
  id: string;
  /** The backend that drives it (the TOML `type`). */
  backend: MachineBackend;
  common: CommonMachineConfig;
  /** The backend's own keys, validated against its schema with defaults applied. */
  settings: unknown;
}

export interface ServiceConfig {
  /** Absolute path of the file, or null when the configuration came from elsewhere. */
  file: string | null;
  server: ServerSettings;
  cameras: CameraSettings;
  /** Sorted by id. */
  machines: MachineDefinition[];
  /** The `[[notify]]` targets, in file order. */
  notify: TargetSettings[];
}

const MACHINE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Reads and validates a configuration file. */
export function loadConfig(path: string, backends: readonly MachineBackend[]): ServiceConfig {
  const file = resolve(path);
  if (!existsSync(file)) throw new ConfigError(`config file not found at ${file}`);
  return parseConfig(readFileSync(file, 'utf8'), { file, backends });
}

/** Validates configuration text; `file` names the source in errors and anchors relative paths. */
export function parseConfig(
  text: string,
  options: { file: string; backends: readonly MachineBackend[] },
): ServiceConfig {
  const { file, backends } = options;
  let document: Record<string, unknown>;
  try {
    document = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(
      `${file}: not valid TOML: ${error instanceof Error ? error.message : String(error)}`,
    );
  }

  const server = checked(ServerKeys, document.server ?? {}, `${file}: [server]`) as ServerSettings;
  for (const key of ['allowed_origins', 'read_origins'] as const) {
    const list = server[key];
    if (!Array.isArray(list)) continue;
    for (const origin of list) {
      if (normaliseOrigin(origin) === null) {
        throw new ConfigError(
          `${file}: [server] key "${key}": expected web origins like "https://app.example.com" or "http://192.168.1.5:3000" (scheme, host, optional port; no path), got ${JSON.stringify(origin)}`,
        );
      }
    }
  }

  const cameras = checked(CameraKeys, document.cameras ?? {}, `${file}: [cameras]`) as CameraSettings;

  const machinesTable = document.machines ?? {};
  if (!isTable(machinesTable))
    throw new ConfigError(`${file}: "machines" must be a table of [machines.<id>]`);

  const byType = new Map(backends.map((backend) => [backend.type, backend]));
  const machines = Object.entries(machinesTable)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, entry]): MachineDefinition => {
      const where = `${file}: [machines.${id}]`;
      if (!MACHINE_ID.test(id)) {
        throw new ConfigError(`${where}: machine id must match ${MACHINE_ID} (it is used in URLs)`);
      }
      if (!isTable(entry)) throw new ConfigError(`${where}: expected a table`);
      const common = checked(CommonKeys, entry, where) as Static<typeof CommonKeys>;
      const backend = byType.get(common.type);
      if (!backend) {
        const known = [...byType.keys()].map((t) => `"${t}"`).join(', ');
        throw new ConfigError(`${where}: key "type": expected one of ${known}, got "${common.type}"`);
      }
      const own = Object.fromEntries(
        Object.entries(entry).filter(([key]) => !COMMON_KEY_NAMES.includes(key)),
      );
      const settings = checked(backend.schema, own, where);
      return { id, backend, common: commonConfig(common, where, dirname(file)), settings };
    });
  return { file, server, cameras, machines, notify: notifyTargets(document.notify, file) };
}

/** The `[[notify]]` tables: each checked against the API's target shape and the kind's rules. */
function notifyTargets(value: unknown, file: string): TargetSettings[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new ConfigError(`${file}: "notify" must be an array of tables, written [[notify]]`);
  const names = new Set<string>();
  return value.map((entry, index) => {
    const where = `${file}: [[notify]] #${index + 1}${isTable(entry) && typeof entry.name === 'string' ? ` (${entry.name})` : ''}`;
    if (!isTable(entry)) throw new ConfigError(`${where}: expected a table`);
    const settings = checked(NewNotificationTarget, entry, where) as TargetSettings;
    if (settings.ca_file !== undefined) settings.ca_file = resolve(dirname(file), settings.ca_file);
    const problem = targetProblem(settings);
    if (problem) throw new ConfigError(`${where}: ${problem}`);
    if (names.has(settings.name))
      throw new ConfigError(`${where}: key "name": "${settings.name}" is used by another [[notify]] table`);
    names.add(settings.name);
    return settings;
  });
}

function commonConfig(
  keys: Static<typeof CommonKeys>,
  where: string,
  configDir: string,
): CommonMachineConfig {
  const filaments = keys.filaments ?? [];
  const loaded = keys.loaded_filament_idx ?? null;
  if (loaded !== null && loaded >= filaments.length) {
    throw new ConfigError(
      `${where}: key "loaded_filament_idx": expected an index below the number of filaments (${filaments.length}), got ${loaded}`,
    );
  }
  let slicer: SlicerConfig | null = null;
  if (keys.slicer) {
    const ini = resolve(configDir, keys.slicer.config);
    if (!existsSync(ini)) {
      throw new ConfigError(
        `${where}: key "slicer.config": expected an existing PrusaSlicer .ini file, ${ini} does not exist`,
      );
    }
    slicer = { type: 'Prusa', config: ini };
    if (keys.slicer.timeout_seconds !== undefined) slicer.timeoutSeconds = keys.slicer.timeout_seconds;
  }
  return {
    slicer,
    nozzleDiameter: keys.nozzle_diameter ?? null,
    filaments,
    loadedFilamentIdx: loaded,
    maxPartVolume: keys.max_part_volume ?? null,
    autoClear: keys.auto_clear ?? false,
    camera: cameraConfig(keys.camera, where),
    tags: keys.tags ?? [],
  };
}

function cameraConfig(keys: Static<typeof CommonKeys>['camera'], where: string): CameraConfig | null {
  if (!keys) return null;
  if (!keys.snapshot_url && !keys.stream_url) {
    throw new ConfigError(`${where}: key "camera": expected "snapshot_url", "stream_url" or both`);
  }
  return {
    snapshotUrl: keys.snapshot_url ?? null,
    streamUrl: keys.stream_url ?? null,
    ...(keys.username !== undefined ? { username: keys.username } : {}),
    ...(keys.password !== undefined ? { password: keys.password } : {}),
    timeoutMs: keys.timeout_ms ?? null,
  };
}

/** Applies defaults and checks `value` against `schema`, throwing a `ConfigError` for the first problem. */
function checked(schema: TSchema, value: unknown, where: string): unknown {
  const withDefaults = Value.Default(schema, structuredClone(value));
  const errors = Value.Errors(schema, withDefaults);
  if (errors.length === 0) return withDefaults;
  // A failed union reports its alternatives' errors first (and TypeBox stops after a few): the
  // outermost union on the first error's path says what was expected there.
  const first = errors[0]!;
  let { pointer, schemaPath } = outermostUnion(first.schemaPath, first.instancePath);
  let expected = schemaAt(schema, schemaPath);
  if (first.keyword === 'required') {
    const name = (first.params as { requiredProperties: string[] }).requiredProperties[0] ?? '';
    pointer = `${pointer}/${name}`;
    expected = (expected?.properties as Record<string, Schema> | undefined)?.[name];
  }
  const key = pointer.replace(/^\//, '').replace(/\//g, '.');
  const got = valueAt(withDefaults, pointer);
  const found = got === undefined ? 'it is missing' : `got ${JSON.stringify(got)}`;
  throw new ConfigError(`${where}: key "${key}": expected ${describeExpected(expected ?? {})}, ${found}`);
}

/**
 * Walks an error's schema path (`#/properties/a/items/anyOf/1/…`) alongside its instance path and stops at
 * the first `anyOf`, returning the path of that union and of the value it checked.
 */
function outermostUnion(schemaPath: string, instancePath: string): { pointer: string; schemaPath: string[] } {
  const schemaParts = schemaPath.split('/').slice(1);
  const instanceParts = instancePath.split('/').slice(1);
  const unionAt = schemaParts.indexOf('anyOf');
  if (unionAt === -1) return { pointer: instancePath, schemaPath: schemaParts };
  let depth = 0;
  for (let i = 0; i < unionAt; i++) {
    if (schemaParts[i] === 'properties') i++;
    else if (schemaParts[i] !== 'items') continue;
    depth++;
  }
  const pointer = instanceParts
    .slice(0, depth)
    .map((part) => `/${part}`)
    .join('');
  return { pointer, schemaPath: schemaParts.slice(0, unionAt) };
}

/** A JSON schema as plain data, for describing it. */
type Schema = Record<string, unknown>;

/** The sub-schema a validation error's `schemaPath` (`#/properties/a/anyOf/0/…`) points into. */
function schemaAt(schema: TSchema, path: string[]): Schema | undefined {
  let current: unknown = schema;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[
      decodeURIComponent(part.replace(/~1/g, '/').replace(/~0/g, '~'))
    ];
  }
  return current as Schema | undefined;
}

function valueAt(value: unknown, pointer: string): unknown {
  let current = value;
  for (const part of pointer.split('/').slice(1)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** A person-readable description of what a schema accepts. */
export function describeExpected(schema: Schema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) {
    const options = (schema.anyOf as Schema[]).map(describeExpected);
    return options.every((o) => o.startsWith('"')) ? `one of ${options.join(', ')}` : options.join(' or ');
  }
  const bounds = [
    schema.minimum !== undefined ? `≥ ${schema.minimum}` : '',
    schema.exclusiveMinimum !== undefined ? `> ${schema.exclusiveMinimum}` : '',
    schema.maximum !== undefined ? `≤ ${schema.maximum}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  switch (schema.type) {
    case 'number':
      return bounds ? `a number ${bounds}` : 'a number';
    case 'integer':
      return bounds ? `an integer ${bounds}` : 'an integer';
    case 'string':
      return schema.pattern ? `a string matching ${schema.pattern}` : 'a string';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'an array';
    case 'object':
      return 'a table';
    default:
      return 'a valid value';
  }
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
