/** Wire shapes of print jobs (`/jobs`, and the jobs `GET /queue` lists). */

import { type Static, Type } from 'typebox';
import { JOB_STATUSES } from '../../jobs/job.js';
import { QueueConstraints } from './queue.js';
import { describedRef, nullableRef, ref } from './refs.js';

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

export const JobFilament = Type.Object(
  {
    estimated_g: nullableNumber(
      "Grams the slicer's output says the job needs (from a length with the filament's density when it gave only a length); null when unknown.",
    ),
    estimated_m: nullableNumber('Metres of filament the job needs, by the same estimate; null when unknown.'),
    used_g: nullableNumber(
      "Grams used, once the job ended: the printer's own count where it reports one, else the estimate scaled by the progress reached.",
    ),
    used_m: nullableNumber('Metres used, once the job ended.'),
    cost: nullableNumber(
      "Cost of what was used, in `[filament] currency` (`GET /stats` names it): the Spoolman spool's price, else the filament's `price_per_kg`, else the slicer's cost figure scaled; null when unknown.",
    ),
    spool_id: Type.Optional(Type.Integer({ description: 'The Spoolman spool the job printed from.' })),
  },
  { $id: 'JobFilament', description: 'Filament a job needs, used, and what it cost.' },
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
    filament: nullableRef(
      JobFilament,
      "Filament estimated at submission (from the slicer's output, an uploaded G-code's comments or a 3MF's slice info), used at the end, and its cost; null when nothing is known.",
    ),
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
    held: Type.Array(
      Type.Object({
        machine_id: Type.String(),
        reason: Type.String({
          description: 'e.g. `has spool 12 with 40 g left (5 g kept as margin), the job needs 120 g`.',
        }),
      }),
      {
        description:
          'Machines among `machines` the job is not sent to now because their Spoolman spool cannot finish it: it waits for a spool change there (`PUT /machines/{id}/spool`) or goes to another machine.',
      },
    ),
  },
  { $id: 'QueueEntry', description: 'A job waiting in the queue, and where it can go.' },
);
export type QueueEntry = Static<typeof QueueEntry>;

export const JobIdParams = Type.Object({ id: Type.String({ description: 'The job ID.' }) });
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
