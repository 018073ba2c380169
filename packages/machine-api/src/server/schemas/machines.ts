/**
 * Wire shapes of the machines (`/machines`): names, fields, required lists, nullability and enum values of
 * the seed's schemas are the seed's; the shapes the seed leaves open follow the anchor's 0.1.1 document.
 */

import { type Static, Type } from 'typebox';
import type { DesignKind } from '../../design/inspect.js';
import type { JOB_STATUSES } from '../../jobs/job.js';
import { FILAMENT_MATERIALS } from '../../machines/machine.js';
import { DESIGN_KINDS } from '../../machines/prints.js';
import { CameraInfo } from './cameras.js';
import { describedRef, documentedEnum, nullableRef, nullableString, ref, taggedVariant } from './refs.js';
import { MachineSpools } from './spools.js';

export const MachineType = documentedEnum(
  {
    Stereolithography: 'Use light to cure a resin to build up layers.',
    FusedDeposition: 'Fused Deposition Modeling, layers of melted plastic.',
    Cnc: '"Computer numerical control" - machine that grinds away material from a hunk of material to construct a part.',
  },
  {
    $id: 'MachineType',
    description:
      'Specific technique by which this Machine takes a design, and produces a real-world 3D object.',
  },
);

export const MachineMakeModel = Type.Object(
  {
    manufacturer: Type.Optional(nullableString('The manufacturer that built the connected Machine.')),
    model: Type.Optional(nullableString('The model of the connected Machine.')),
    serial: Type.Optional(nullableString('The unique serial number of the connected Machine.')),
  },
  { $id: 'MachineMakeModel', description: 'Information regarding the make/model of a discovered endpoint.' },
);

export const Volume = Type.Object(
  {
    width: Type.Number({
      format: 'double',
      description: 'Width of the volume ("left and right"), in millimeters.',
    }),
    depth: Type.Number({
      format: 'double',
      description: 'Depth of the volume ("front to back"), in millimeters.',
    }),
    height: Type.Number({
      format: 'double',
      description: 'Height of the volume ("up and down"), in millimeters.',
    }),
  },
  {
    $id: 'Volume',
    description:
      'Set of three values to represent the extent of a 3-D Volume. This contains the width, depth, and height values, generally used to represent some maximum or minimum.\n\nAll measurements are in millimeters.',
  },
);

/** Exactly one key per variant; `ExtraKindA` is the Moonraker backend, `ExtraKindB` the Bambu backend. */
export const ExtraMachineInfoResponse = Type.Unsafe<
  | { Usb: Record<string, unknown> }
  | { ExtraKindA: Record<string, unknown> }
  | { ExtraKindB: Record<string, unknown> }
>({
  $id: 'ExtraMachineInfoResponse',
  description: 'Extra machine-specific information regarding a connected machine.',
  oneOf: ['ExtraKindA', 'Usb', 'ExtraKindB'].map((key) => ({
    additionalProperties: false,
    properties: { [key]: { type: 'object' } },
    required: [key],
    type: 'object',
  })),
});

export const MachineState = Type.Unsafe<
  | { state: 'unknown' | 'idle' | 'running' | 'offline' | 'paused' | 'complete' }
  | { state: 'failed'; message: string | null }
>({
  $id: 'MachineState',
  description:
    'Current state of the machine -- be it printing, idle or offline. This can be used to determine if a printer is in the correct state to take a new job.',
  oneOf: [
    taggedVariant(
      'state',
      'unknown',
      'If a print state can not be resolved at this time, an Unknown may be returned.',
    ),
    taggedVariant('state', 'idle', 'Idle, and ready for another job.'),
    taggedVariant('state', 'running', 'Running a job -- 3D printing or CNC-ing a part.'),
    taggedVariant('state', 'offline', 'Machine is currently offline or unreachable.'),
    taggedVariant('state', 'paused', 'Job is underway but halted, waiting for some action to take place.'),
    taggedVariant('state', 'complete', 'Job is finished, but waiting manual action to move back to Idle.'),
    taggedVariant(
      'state',
      'failed',
      'The printer has failed and is in an unknown state that may require manual attention to resolve. The inner value is a human readable description of what specifically has failed.',
      {
        message: {
          description: 'A human-readable message describing the failure.',
          nullable: true,
          type: 'string',
        },
      },
    ),
  ],
});

export const FilamentMaterial = Type.Unsafe<{ type: (typeof FILAMENT_MATERIALS)[number] }>({
  $id: 'FilamentMaterial',
  description: 'The material that the filament is made of.',
  oneOf: FILAMENT_MATERIALS.map((type) => taggedVariant('type', type, `Filament material \`${type}\`.`)),
});

export const Filament = Type.Object(
  {
    name: Type.Optional(
      nullableString('The name of the filament, this is likely specific to the manufacturer.'),
    ),
    material: describedRef(FilamentMaterial, 'The material that the filament is made of.'),
    color: Type.Optional(
      Type.Unsafe<string | null>({
        type: 'string',
        nullable: true,
        minLength: 6,
        maxLength: 6,
        description:
          'The color (as hex without the `#`) of the filament, this is likely specific to the manufacturer.',
      }),
    ),
  },
  { $id: 'Filament', description: 'Information about the filament being used in a FDM printer.' },
);

export const FdmHardwareConfiguration = Type.Object(
  {
    nozzle_diameter: Type.Number({
      format: 'double',
      description: 'Diameter of the extrusion nozzle, in mm.',
    }),
    filaments: Type.Array(ref(Filament), { description: 'The filaments the printer has access to.' }),
    loaded_filament_idx: Type.Optional(
      Type.Unsafe<number | null>({
        type: 'integer',
        format: 'uint',
        minimum: 0,
        nullable: true,
        description: 'The currently loaded filament index.',
      }),
    ),
  },
  { $id: 'FdmHardwareConfiguration', description: 'Configuration for a FDM-based printer.' },
);

export const HardwareConfiguration = Type.Unsafe<
  { type: 'none' } | { type: 'fdm'; config: Static<typeof FdmHardwareConfiguration> }
>({
  $id: 'HardwareConfiguration',
  description: 'The hardware configuration of a machine.',
  oneOf: [
    taggedVariant(
      'type',
      'none',
      'No configuration is possible: the method of manufacture has nothing to configure.',
    ),
    {
      ...taggedVariant('type', 'fdm', 'Hardware configuration specific to FDM based printers', {
        config: {
          allOf: [{ $ref: 'FdmHardwareConfiguration' }],
          description: 'The configuration for the FDM printer.',
        },
      }),
      required: ['config', 'type'],
    },
  ],
});

export const TemperatureReading = Type.Object(
  {
    current: Type.Number({ format: 'double', description: 'Measured temperature, in °C.' }),
    target: Type.Unsafe<number | null>({
      type: 'number',
      format: 'double',
      nullable: true,
      description: 'The set point, in °C (0 when the heater is off); null when the device does not say.',
    }),
  },
  { $id: 'TemperatureReading', description: 'One temperature sensor of a machine.' },
);

export const MachineCapabilities = Type.Object(
  {
    control: Type.Boolean({
      description:
        'Whether the service can command the machine: pause, resume, stop, print, temperatures. While false those answer 409 with `reason`, and the queue sends it no job; monitoring goes on.',
    }),
    reason: Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      description:
        'Why the machine cannot be commanded, and what to do (e.g. enable LAN-only Developer Mode on a Bambu printer); null while `control` is true.',
    }),
  },
  { $id: 'MachineCapabilities', description: 'What the service can do with a machine.' },
);

export const MachineInfoResponse = Type.Object(
  {
    id: Type.String({ description: 'Machine Identifier (ID) for the specific Machine.' }),
    make_model: describedRef(
      MachineMakeModel,
      'Information regarding the make and model of the attached Machine.',
    ),
    machine_type: describedRef(MachineType, 'Information regarding the method of manufacture.'),
    max_part_volume: Type.Optional(
      nullableRef(
        Volume,
        'Maximum part size that can be manufactured by this device. This may be some sort of theoretical upper bound, getting close to this limit seems like maybe a bad idea.\n\nThis may be `None` if the maximum size is not knowable by the Machine API.\n\nWhat "close" means is up to you!',
      ),
    ),
    extra: Type.Optional(
      nullableRef(
        ExtraMachineInfoResponse,
        'Additional, per-machine information which is specific to the underlying machine type.',
      ),
    ),
    // Additions of 0.1.1, optional here so that the seed's required list stays the seed's.
    state: Type.Optional(
      describedRef(
        MachineState,
        'Status of the printer -- be it printing, idle, or unreachable. This may dictate if a machine is capable of taking a new job.',
      ),
    ),
    progress: Type.Optional(
      Type.Unsafe<number | null>({
        type: 'number',
        format: 'double',
        nullable: true,
        description: 'Progress of the current print, if printing.',
      }),
    ),
    hardware_configuration: Type.Optional(
      nullableRef(HardwareConfiguration, 'Information about how the Machine is currently configured.'),
    ),
    // Print-farm additions, optional for the same reason.
    ready: Type.Optional(
      Type.Boolean({
        description:
          'Whether the machine takes a new job now: idle, no job on its way to it, and the bed confirmed clear after its last print (`POST /machines/{id}/clear`).',
      }),
    ),
    awaiting_clear_since: Type.Optional(
      Type.Unsafe<string | null>({
        type: 'string',
        format: 'date-time',
        nullable: true,
        description:
          'Since when the bed waits for a confirmation that it is clear (`POST /machines/{id}/clear`); null when confirmed.',
      }),
    ),
    design_types: Type.Optional(
      Type.Unsafe<DesignKind[]>({
        type: 'array',
        items: { type: 'string', enum: [...DESIGN_KINDS] },
        description:
          'The design types the machine prints, directly (`POST /print`) or from the queue: `gcode` always; `stl`, `3mf` and `obj` when it has a slicer, and on a simulated machine (which takes every design as it is).',
      }),
    ),
    temperatures: Type.Optional(
      Type.Unsafe<Record<string, Static<typeof TemperatureReading>>>({
        type: 'object',
        additionalProperties: { $ref: 'TemperatureReading' },
        description:
          'The latest readings by sensor (`extruder`, `bed`, `chamber`, …); empty when the machine does not answer. Changes arrive as `machine.temperatures` events.',
      }),
    ),
    current_job: Type.Optional(
      Type.Unsafe<{ id: string; status: (typeof JOB_STATUSES)[number]; progress: number | null } | null>({
        type: 'object',
        nullable: true,
        description:
          'The job holding the machine (being sliced, uploaded or printed), null when it is free. A machine that reads `idle` with a current job is busy with that job.',
        properties: {
          id: { type: 'string', format: 'uuid', description: 'The job id.' },
          status: { allOf: [{ $ref: 'JobStatus' }], description: 'Where the job is.' },
          progress: {
            type: 'number',
            format: 'double',
            nullable: true,
            description: 'Percent done while printing, if the machine reports it; null before.',
          },
        },
        required: ['id', 'status', 'progress'],
      }),
    ),
    camera: Type.Optional(
      nullableRef(
        CameraInfo,
        "The machine's camera (see docs/machine-api/cameras.md); null when it has none.",
      ),
    ),
    capabilities: Type.Optional(
      describedRef(MachineCapabilities, 'What the service can do with the machine now.'),
    ),
    instance: Type.Optional(
      Type.String({
        description:
          'On a farm of several instances (PostgreSQL): the instance that drives the machine (its `[server] instance`). Every instance lists every machine of the farm; actions on a machine of another instance are forwarded to it. Absent on a single instance (SQLite).',
      }),
    ),
    spoolman: Type.Optional(
      describedRef(
        MachineSpools,
        'The Spoolman spools the machine prints from (present when `[spoolman]` is configured); their filaments are the ones `hardware_configuration` reports.',
      ),
    ),
  },
  { $id: 'MachineInfoResponse', description: 'Information regarding a connected machine.' },
);
export type MachineInfoResponse = Static<typeof MachineInfoResponse>;

export const MachineIdParams = Type.Object({ id: Type.String({ description: 'The machine ID.' }) });
