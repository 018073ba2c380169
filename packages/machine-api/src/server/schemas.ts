/**
 * Every wire shape of the HTTP API, once. These TypeBox schemas are registered as shared schemas (their
 * `$id` becomes the OpenAPI component name), referenced by the routes, and give the handlers their types.
 * Names, fields, required lists, nullability and enum values of the seed's schemas are the seed's; the
 * shapes the seed leaves open follow the anchor's 0.1.1 document.
 */

import { type Static, type TSchema, Type } from 'typebox';
import { EVENT_TYPES } from '../events/events.js';
import { JOB_STATUSES } from '../jobs/job.js';
import { FILAMENT_MATERIALS } from '../machines/machine.js';

/** The `$id` of a shared schema (every schema of `sharedSchemas` has one). */
function idOf(schema: TSchema): string {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new Error('a referenced schema needs an $id');
  return id;
}

/** `{"$ref": "<id>"}` typed as the referenced schema. */
export function ref<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T>>({ $ref: idOf(schema) });
}

/**
 * A reference that may be null, written the OpenAPI 3.0 way the anchor writes it:
 * `{"allOf": [{"$ref": …}], "nullable": true, "description": …}`.
 */
export function nullableRef<T extends TSchema>(schema: T, description: string) {
  return Type.Unsafe<Static<T> | null>({ allOf: [{ $ref: idOf(schema) }], nullable: true, description });
}

/** A reference carrying its own description (`allOf` keeps the description next to a `$ref`). */
function describedRef<T extends TSchema>(schema: T, description: string) {
  return Type.Unsafe<Static<T>>({ allOf: [{ $ref: idOf(schema) }], description });
}

/**
 * The same schema in plain JSON Schema for request validation: OpenAPI 3.0's `nullable` next to an
 * `allOf` reference (no `type`) becomes `anyOf: [<schema>, {type: 'null'}]`, which ajv understands.
 */
export function validationSchema<T extends TSchema>(schema: T): T {
  const convert = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(convert);
    if (typeof value !== 'object' || value === null) return value;
    const { nullable, description, $id, ...rest } = value as Record<string, unknown>;
    const converted = Object.fromEntries(Object.entries(rest).map(([key, child]) => [key, convert(child)]));
    if (nullable === true && converted.type === undefined) return { anyOf: [converted, { type: 'null' }] };
    return nullable === true ? { ...converted, nullable } : converted;
  };
  return convert(schema) as T;
}

function nullableString(description: string) {
  return Type.Unsafe<string | null>({ type: 'string', nullable: true, description });
}

/** A string enumeration written as the anchor writes it: `oneOf` single-value enums, each documented. */
function documentedEnum<const V extends string>(
  values: Record<V, string>,
  options: { $id: string; description: string },
) {
  return Type.Unsafe<V>({
    ...options,
    oneOf: Object.entries(values).map(([value, description]) => ({
      description,
      enum: [value],
      type: 'string',
    })),
  });
}

/** An internally tagged variant `{"<tag>": "<value>", …fields}`. */
function taggedVariant(
  tag: string,
  value: string,
  description: string,
  fields: Record<string, unknown> = {},
) {
  return {
    description,
    properties: { ...fields, [tag]: { enum: [value], type: 'string' } },
    required: [tag],
    type: 'object',
  };
}

export const ErrorSchema = Type.Object(
  {
    request_id: Type.String(),
    error_code: Type.Optional(Type.String()),
    message: Type.String(),
  },
  { $id: 'Error', description: 'Error information from a response.' },
);
export type ErrorBody = Static<typeof ErrorSchema>;

export const Pong = Type.Object(
  { message: Type.String({ description: 'The pong response.' }) },
  { $id: 'Pong', description: 'The response from the `/ping` endpoint.' },
);

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
  },
  { $id: 'MachineInfoResponse', description: 'Information regarding a connected machine.' },
);
export type MachineInfoResponse = Static<typeof MachineInfoResponse>;

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

export const JobStatus = Type.Unsafe<(typeof JOB_STATUSES)[number]>({
  $id: 'JobStatus',
  description:
    'Where a print job is: `queued` → `slicing` → `uploading` → `printing` → `completed`, or `failed` / `cancelled`.',
  type: 'string',
  enum: [...JOB_STATUSES],
});

const nullableNumber = (description: string) =>
  Type.Unsafe<number | null>({ type: 'number', nullable: true, description });

export const SliceEstimate = Type.Object(
  {
    print_time_seconds: nullableNumber('Estimated printing time in seconds (normal mode).'),
    filament_used_mm: nullableNumber('Filament length used, in millimetres (all extruders).'),
    filament_used_cm3: nullableNumber('Filament volume used, in cubic centimetres.'),
    filament_used_g: nullableNumber('Filament weight used, in grams; null when the profile has no density.'),
  },
  { $id: 'SliceEstimate', description: "The slicer's estimates, read from the G-code it wrote." },
);

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

export const Job = Type.Object(
  {
    id: Type.String({
      format: 'uuid',
      description: 'The job id returned by `POST /print` or `POST /queue`.',
    }),
    machine_id: Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      description: 'The machine the job was sent to; null while a queued job waits for one.',
    }),
    job_name: Type.String({ description: 'The name given to the job.' }),
    file_name: Type.String({ description: 'Name of the uploaded design file.' }),
    file_size: Type.Integer({ minimum: 0, description: 'Size of the uploaded design file, in bytes.' }),
    status: describedRef(JobStatus, 'Where the job is in its lifecycle.'),
    message: Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      description: 'Why the job failed or was cancelled; null otherwise.',
    }),
    estimate: nullableRef(SliceEstimate, 'What the slicer estimated; null until sliced and for G-code.'),
    created_at: Type.String({ format: 'date-time', description: 'When the job was accepted.' }),
    updated_at: Type.String({ format: 'date-time', description: 'When the job last changed status.' }),
    finished_at: Type.Unsafe<string | null>({
      type: 'string',
      format: 'date-time',
      nullable: true,
      description: 'When the job reached `completed`, `failed` or `cancelled`.',
    }),
    owner: Type.Optional(
      Type.String({
        description: 'Name of the API key that submitted the job; absent when access control was off.',
      }),
    ),
    progress: Type.Unsafe<number | null>({
      type: 'number',
      format: 'double',
      nullable: true,
      description: "Percent printed: the machine's progress while printing, 100 once completed, else null.",
    }),
    priority: Type.Integer({ description: 'Queue order, higher first (0 for `POST /print` jobs).' }),
    position: Type.Unsafe<number | null>({
      type: 'integer',
      minimum: 1,
      nullable: true,
      description: 'Place in the queue (1 = next) while the job waits for a machine; null otherwise.',
    }),
    constraints: nullableRef(QueueConstraints, 'The queue constraints; null for `POST /print` jobs.'),
    queued_at: Type.Unsafe<string | null>({
      type: 'string',
      format: 'date-time',
      nullable: true,
      description: 'When the job (last) entered the queue; null for `POST /print` jobs.',
    }),
    dispatched_at: Type.Unsafe<string | null>({
      type: 'string',
      format: 'date-time',
      nullable: true,
      description: 'When the queue handed the job to its machine.',
    }),
  },
  { $id: 'Job', description: 'A print job and what happened to it.' },
);
export type JobResponse = Static<typeof Job>;

export const QueueEntry = Type.Object(
  {
    job: ref(Job),
    machines: Type.Array(Type.String(), {
      description: 'The configured machines the job can go to (whether or not they are ready now).',
    }),
  },
  { $id: 'QueueEntry', description: 'A job waiting in the queue, and where it can go.' },
);
export type QueueEntry = Static<typeof QueueEntry>;

export const EventType = Type.Unsafe<(typeof EVENT_TYPES)[number]>({
  $id: 'EventType',
  type: 'string',
  enum: [...EVENT_TYPES],
  description:
    '`machine.state` (data: `state`, `ready`, `busy`, `progress`, `awaiting_clear_since`), `machine.progress` (data: `progress`), `machine.temperatures` (data: `temperatures`, sensor → `{current, target}`), `job.updated` (data: the `Job`), `queue.changed` (data: `reason`, `depth`), `reset` (data: `message`: reload the state, the history no longer reaches back to `Last-Event-ID`).',
});

export const Event = Type.Object(
  {
    id: Type.Integer({
      description: 'Increases by one per event; send the last one seen as `Last-Event-ID` to resume.',
    }),
    type: ref(EventType),
    time: Type.String({ format: 'date-time' }),
    machine_id: Type.Unsafe<string | null>({ type: 'string', nullable: true }),
    job_id: Type.Unsafe<string | null>({ type: 'string', nullable: true }),
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'Depends on `type` (see `EventType`).' },
    ),
  },
  {
    $id: 'Event',
    description:
      'One Server-Sent Event of `GET /events`: the `data:` line is this object as JSON, the `id:` line its `id`.',
  },
);

/** Every shared schema, in the order they are registered (references point backwards only). */
export const sharedSchemas = [
  ErrorSchema,
  Pong,
  MachineType,
  MachineMakeModel,
  Volume,
  ExtraMachineInfoResponse,
  MachineState,
  FilamentMaterial,
  Filament,
  FdmHardwareConfiguration,
  HardwareConfiguration,
  TemperatureReading,
  JobStatus,
  MachineInfoResponse,
  SlicerConfiguration,
  PrintParameters,
  PrintJobResponse,
  SliceEstimate,
  QueueConstraints,
  QueueParameters,
  JobChange,
  Job,
  QueueEntry,
  EventType,
  Event,
];

export const MachineIdParams = Type.Object({ id: Type.String({ description: 'The machine ID.' }) });
export const JobIdParams = Type.Object({ id: Type.String({ description: 'The job ID.' }) });
export const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      maxLength: 20,
      description: 'The `id` of the last event received: the stream resumes after it.',
    }),
  ),
});
export const EventsQuery = Type.Object({
  machine_id: Type.Optional(Type.String({ maxLength: 200, description: 'Only events about this machine.' })),
  types: Type.Optional(
    Type.String({
      maxLength: 500,
      description: 'Comma-separated event types (see `EventType`); `reset` is always sent.',
    }),
  ),
});
export const EventHistoryQuery = Type.Object({
  ...EventsQuery.properties,
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 1000,
      description: 'The newest events, at most this many (returned oldest first).',
    }),
  ),
});
export const JobListQuery = Type.Object({
  machine_id: Type.Optional(Type.String({ description: 'Only jobs sent to this machine.' })),
  status: Type.Optional(ref(JobStatus)),
  created_after: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 40,
      description: 'Only jobs accepted at or after this time (RFC 3339, e.g. `2026-11-24T00:00:00+01:00`).',
    }),
  ),
  created_before: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 40,
      description: 'Only jobs accepted before this time (RFC 3339).',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 100,
      description: 'Most recent jobs first, at most this many.',
    }),
  ),
});
