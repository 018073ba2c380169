/**
 * The configuration file, parsed once at start-up: the anchor's TOML (`[machines.<id>]` tables tagged by
 * `type`) plus an optional `[server]` table. Everything is validated here; an error names the file, the
 * machine id, the key and what was expected, so nothing downstream ever sees an unchecked value.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseToml } from 'smol-toml';
import type { MachineBackend } from './machines/backend.js';
import { FILAMENT_MATERIALS, type Volume } from './machines/machine.js';
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
});
const COMMON_KEY_NAMES = Object.keys(CommonKeys.properties);

const ServerKeys = Type.Object({
  /** Largest accepted upload of `POST /print`, in MiB. */
  max_upload_mib: Type.Number({ exclusiveMinimum: 0, default: 512 }),
  /** How long a machine may take to report its status before it is listed as offline. */
  status_timeout_ms: Type.Integer({ minimum: 1, default: 3000 }),
  /** Slicer processes allowed at once across all machines (default: the number of CPU cores). */
  max_concurrent_slices: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type ServerSettings = Static<typeof ServerKeys>;

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
  /** Sorted by id. */
  machines: MachineDefinition[];
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
  return { file, server, machines };
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
  };
}

/** Applies defaults and checks `value` against `schema`, throwing a `ConfigError` for the first problem. */
function checked(schema: TSchema, value: unknown, where: string): unknown {
  const withDefaults = Value.Default(schema, structuredClone(value));
  const first = Value.Errors(schema, withDefaults).First();
  if (!first) return withDefaults;
  const key = first.path.replace(/^\//, '').replace(/\//g, '.');
  const got = valueAt(withDefaults, first.path);
  const found = got === undefined ? 'it is missing' : `got ${JSON.stringify(got)}`;
  throw new ConfigError(`${where}: key "${key}": expected ${describeExpected(first.schema)}, ${found}`);
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
export function describeExpected(schema: TSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) {
    const options = (schema.anyOf as TSchema[]).map(describeExpected);
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
