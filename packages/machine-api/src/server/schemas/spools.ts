/** Wire shapes of Spoolman spool assignments: `PUT /machines/{id}/spool` and `spoolman` in `GET /machines`. */

import { type Static, Type } from 'typebox';
import { nullableString, ref } from './refs.js';

const nullable = <T>(type: 'number' | 'integer', description: string) =>
  Type.Unsafe<T | null>({ type, nullable: true, description });

export const SpoolRequest = Type.Object(
  {
    // Spoolman's ids are SQL integers; anything past 2^31 is not a spool.
    spool_id: Type.Unsafe<number | null>({
      type: 'integer',
      nullable: true,
      minimum: 1,
      maximum: 2_147_483_647,
      description: 'The Spoolman spool id; null unassigns.',
    }),
    slot: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 15,
        description:
          'The AMS slot of a Bambu printer (index into its `hardware_configuration` filaments); a machine without AMS slots refuses it with 400.',
      }),
    ),
  },
  {
    $id: 'SpoolRequest',
    additionalProperties: false,
    description:
      'Which Spoolman spool the machine (or one of its AMS slots) prints from. The spool must exist in Spoolman (400 `UnknownSpool` otherwise); 409 `SpoolmanNotConfigured` without `[spoolman]`, 503 `SpoolmanUnavailable` when Spoolman cannot be asked. Nothing is stored on an error.',
  },
);
export type SpoolRequest = Static<typeof SpoolRequest>;

export const SpoolAssignment = Type.Object(
  {
    slot: nullable<number>('integer', "The AMS slot, or null for the machine's one spool."),
    spool_id: Type.Integer(),
    name: nullableString("The filament's name in Spoolman."),
    material: nullableString('The material as Spoolman names it.'),
    color_hex: nullableString('`RRGGBB` or `RRGGBBAA`, as Spoolman stores it.'),
    remaining_weight: nullable<number>(
      'number',
      'Grams left, as Spoolman last said (use reports not sent yet are not subtracted).',
    ),
    assigned_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'SpoolAssignment', description: 'A Spoolman spool a machine prints from.' },
);

export const MachineSpools = Type.Object(
  {
    machine_id: Type.String(),
    spools: Type.Array(ref(SpoolAssignment)),
    notice: nullableString(
      'Why a spool was unassigned without a request (Spoolman answered 404 for it), until the next change.',
    ),
  },
  { $id: 'MachineSpools', description: 'The Spoolman spools a machine prints from.' },
);
export type MachineSpools = Static<typeof MachineSpools>;
