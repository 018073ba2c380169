/**
 * The configuration file, parsed once at start-up: the anchor's TOML (`[machines.<id>]` tables tagged by
 * `type`) plus an optional `[server]` table. Everything is validated here; an error names the file, the
 * machine id, the key and what was expected, so nothing downstream ever sees an unchecked value.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { Static } from 'typebox';
import { normaliseOrigin } from './access/origins.js';
import { ConfigError, checked, isTable } from './config/check.js';
import {
  COMMON_KEY_NAMES,
  CommonKeys,
  type CommonMachineConfig,
  commonConfig,
} from './config/machine-keys.js';
import { type MqttSettings, parseMqtt } from './config/mqtt-keys.js';
import { parsePresets, type TemperaturePreset } from './config/presets.js';
import {
  CameraKeys,
  type CameraSettings,
  type FilamentKeySettings,
  FilamentKeys,
  ServerKeys,
  type ServerSettings,
} from './config/server-keys.js';
import { parseSpoolman, type SpoolmanSettings } from './config/spoolman-keys.js';
import type { MachineBackend } from './machines/backend.js';
import { NewNotificationTarget } from './notify/schemas.js';
import { type TargetSettings, targetProblem } from './notify/targets.js';

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
  /** `[filament]`: the currency of prices and costs. */
  filament: FilamentKeySettings;
  /** Sorted by id. */
  machines: MachineDefinition[];
  /** The `[[notify]]` targets, in file order. */
  notify: TargetSettings[];
  /** The `[presets.<name>]` temperature presets, sorted by name. */
  presets: TemperaturePreset[];
  /** The `[mqtt]` broker, or null for no MQTT. */
  mqtt: MqttSettings | null;
  /** The `[spoolman]` server, or null for none. */
  spoolman: SpoolmanSettings | null;
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
  const filament = checked(
    FilamentKeys,
    document.filament ?? {},
    `${file}: [filament]`,
  ) as FilamentKeySettings;

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
  return {
    file,
    server,
    cameras,
    filament,
    machines,
    notify: notifyTargets(document.notify, file),
    presets: parsePresets(document.presets, file),
    mqtt: parseMqtt(document.mqtt, file, dirname(file)),
    spoolman: parseSpoolman(document.spoolman, file),
  };
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
