/**
 * The `[presets.<name>]` tables: named temperature targets (`[presets.pla] tool = 215, bed = 60`) that
 * `POST /machines/{id}/temperature` and `POST /machines/preheat` apply by name.
 */

import { Type } from 'typebox';
import { ConfigError, checked, isTable } from './check.js';

/** Hotter than any FDM hot end or bed goes; a machine's own `max_tool_temp` / `max_bed_temp` is the real bound. */
const Celsius = Type.Number({ minimum: 0, maximum: 500 });

const PresetKeys = Type.Object(
  { tool: Type.Optional(Celsius), bed: Type.Optional(Celsius) },
  { additionalProperties: false },
);

/** A named pair of targets; a missing one leaves that heater as it is. */
export interface TemperaturePreset {
  name: string;
  tool: number | null;
  bed: number | null;
}

/** Preset names appear in URLs of the dashboard and in MQTT-less scripts: the machine-id alphabet, lower case. */
export const PRESET_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The `[presets.*]` tables, sorted by name. */
export function parsePresets(value: unknown, file: string): TemperaturePreset[] {
  if (value === undefined) return [];
  if (!isTable(value)) throw new ConfigError(`${file}: "presets" must be a table of [presets.<name>]`);
  return Object.entries(value)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, entry]) => {
      const where = `${file}: [presets.${name}]`;
      if (!PRESET_NAME.test(name)) throw new ConfigError(`${where}: preset name must match ${PRESET_NAME}`);
      if (!isTable(entry)) throw new ConfigError(`${where}: expected a table`);
      const keys = checked(PresetKeys, entry, where) as { tool?: number; bed?: number };
      if (keys.tool === undefined && keys.bed === undefined)
        throw new ConfigError(`${where}: expected "tool", "bed" or both (°C)`);
      return { name, tool: keys.tool ?? null, bed: keys.bed ?? null };
    });
}
