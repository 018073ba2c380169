/** Wire shapes of `POST /print`. */

import { type Static, Type } from 'typebox';
import { describedRef, nullableRef } from './refs.js';

export const SlicerConfiguration = Type.Object(
  {
    filament_idx: Type.Optional(
      Type.Unsafe<number | null>({
        type: 'integer',
        format: 'uint',
        minimum: 0,
        nullable: true,
        description: 'The filament to use for the print.',
      }),
    ),
  },
  {
    $id: 'SlicerConfiguration',
    description:
      'The slicer configuration is a set of parameters that are passed to the slicer to control how the gcode is generated.',
  },
);

export const PrintParameters = Type.Object(
  {
    machine_id: Type.String({ description: 'The machine id to print to.' }),
    job_name: Type.String({ description: 'The name for the job.' }),
    slicer_configuration: Type.Optional(
      nullableRef(SlicerConfiguration, 'Requested design-specific slicer configurations.'),
    ),
  },
  { $id: 'PrintParameters', description: 'Parameters for printing.' },
);
export type PrintParameters = Static<typeof PrintParameters>;

export const PrintJobResponse = Type.Object(
  {
    job_id: Type.String({ description: 'The job id used for this print.' }),
    parameters: describedRef(PrintParameters, 'The parameters used for this print.'),
  },
  { $id: 'PrintJobResponse', description: 'The response from the `/print` endpoint.' },
);
export type PrintJobResponse = Static<typeof PrintJobResponse>;
