/**
 * Wire shapes of the queue: where a queued job may go (`QueueConstraints`), what `POST /queue` takes, and
 * what `PATCH /jobs/{id}` may change on a waiting job. `QueueEntry` (a job and its machines) is in jobs.ts,
 * next to the `Job` it references.
 */

import { type Static, Type } from 'typebox';
import { FILAMENT_MATERIALS } from '../../machines/machine.js';
import { MachineType } from './machines.js';
import { SlicerConfiguration } from './print.js';
import { nullableRef, ref } from './refs.js';

export const QueueConstraints = Type.Object(
  {
    machine_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: 1000,
        description: 'Any of these machines.',
      }),
    ),
    material: Type.Optional(
      Type.Unsafe<(typeof FILAMENT_MATERIALS)[number]>({
        type: 'string',
        enum: [...FILAMENT_MATERIALS],
        description: 'A filament material type the machine must have loaded.',
      }),
    ),
    nozzle_diameter: Type.Optional(
      Type.Number({ minimum: 0.01, maximum: 10, description: "The machine's nozzle diameter, in mm." }),
    ),
    machine_type: Type.Optional(ref(MachineType)),
  },
  {
    $id: 'QueueConstraints',
    additionalProperties: false,
    description: 'Which machines a queued job may go to; every given constraint must hold.',
  },
);
export type QueueConstraints = Static<typeof QueueConstraints>;

const Priority = Type.Integer({
  minimum: -1000000,
  maximum: 1000000,
  description: 'Queue order: higher first; first in, first out within a priority. Default 0.',
});

export const QueueParameters = Type.Object(
  {
    job_name: Type.String({ maxLength: 1000, description: 'The name for the job.' }),
    machine_ids: Type.Optional(QueueConstraints.properties.machine_ids),
    material: Type.Optional(QueueConstraints.properties.material),
    nozzle_diameter: Type.Optional(QueueConstraints.properties.nozzle_diameter),
    machine_type: Type.Optional(ref(MachineType)),
    priority: Type.Optional(Priority),
    slicer_configuration: Type.Optional(
      nullableRef(SlicerConfiguration, 'Requested design-specific slicer configurations.'),
    ),
  },
  {
    $id: 'QueueParameters',
    description:
      'The `params` part of `POST /queue`: like `PrintParameters`, but instead of one `machine_id` optional constraints on the machine, and a priority.',
  },
);
export type QueueParameters = Static<typeof QueueParameters>;

export const JobChange = Type.Object(
  {
    priority: Type.Optional(Priority),
    constraints: Type.Optional(ref(QueueConstraints)),
  },
  {
    $id: 'JobChange',
    additionalProperties: false,
    description:
      'What `PATCH /jobs/{id}` may change on a job still waiting in the queue; `constraints` replaces them whole.',
  },
);
