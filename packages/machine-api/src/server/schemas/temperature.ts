/** Wire shapes of heater targets: `POST /machines/{id}/temperature`, `POST /machines/preheat`, `GET /presets`. */

import { Type } from 'typebox';
import { FILAMENT_MATERIALS } from '../../machines/machine.js';

/** No printer heats past 500 °C; the machine's own limit (`max_tool_temp`, `max_bed_temp`) is checked after. */
const Celsius = (description: string) => Type.Number({ minimum: 0, maximum: 500, description });

const PresetName = Type.String({
  pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
  description: 'The name of a `[presets.<name>]` table of the configuration.',
});

export const TemperatureRequest = Type.Object(
  {
    preset: Type.Optional(PresetName),
    tool: Type.Optional(Celsius('Hot-end (tool 0) target in °C; 0 turns the heater off.')),
    bed: Type.Optional(Celsius('Bed target in °C; 0 turns the heater off.')),
  },
  {
    $id: 'TemperatureRequest',
    additionalProperties: false,
    minProperties: 1,
    description:
      "Either a `preset`, or `tool`, `bed` or both. A target above the machine's `max_tool_temp` / `max_bed_temp` (default 300 / 120 °C) is refused with 400.",
  },
);

export const PreheatRequest = Type.Object(
  {
    preset: PresetName,
    machines: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: 1000,
        uniqueItems: true,
        description: 'The machines to heat.',
      }),
    ),
    material: Type.Optional(
      Type.Unsafe<(typeof FILAMENT_MATERIALS)[number]>({
        type: 'string',
        enum: [...FILAMENT_MATERIALS],
        description: 'Heat every idle machine with this filament material loaded.',
      }),
    ),
  },
  {
    $id: 'PreheatRequest',
    additionalProperties: false,
    description:
      'A `preset` and which machines: `machines` (by id) or `material` (every machine with it loaded).',
  },
);

export const PreheatResult = Type.Object(
  {
    preset: Type.String({ description: 'The preset applied.' }),
    heated: Type.Array(Type.String(), { description: 'The machines that accepted the targets.' }),
    skipped: Type.Array(
      Type.Object({
        id: Type.String({ description: 'The machine.' }),
        error_code: Type.String({
          description:
            'Why, as the `error_code` of `POST /machines/{id}/temperature` (`MachineBusy` while printing).',
        }),
        message: Type.String({ description: 'Why, in words.' }),
      }),
      { description: 'The machines left as they were (printing, offline, refusing, over their limits).' },
    ),
  },
  { $id: 'PreheatResult', description: 'What a pre-heat did, machine by machine.' },
);

export const TemperaturePresetInfo = Type.Object(
  {
    name: Type.String(),
    tool: Type.Unsafe<number | null>({
      type: 'number',
      nullable: true,
      description: 'Hot-end target in °C; null leaves it.',
    }),
    bed: Type.Unsafe<number | null>({
      type: 'number',
      nullable: true,
      description: 'Bed target in °C; null leaves it.',
    }),
  },
  { $id: 'TemperaturePreset', description: 'A `[presets.<name>]` table of the configuration.' },
);
