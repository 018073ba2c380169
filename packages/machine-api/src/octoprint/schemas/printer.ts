/**
 * OctoPrint wire shapes: the printer's state and temperatures, the current job, and the commands that change
 * them. Part of ./index.ts.
 */

import { type Static, Type } from 'typebox';
import { NullableInteger, NullableNumber, NullableString } from './nullable.js';

const Temperature = Type.Object({
  actual: Type.Unsafe<number | null>({ type: 'number', nullable: true, description: '°C.' }),
  target: Type.Unsafe<number | null>({
    type: 'number',
    nullable: true,
    description: '°C; null when the machine does not say.',
  }),
  offset: Type.Number({ description: 'Always 0: offsets are not applied.' }),
});

const PrinterState = Type.Object({
  text: Type.String({
    description: '`Operational`, `Printing`, `Paused`, `Offline`, `Connecting`, `Error`.',
  }),
  flags: Type.Object({
    operational: Type.Boolean(),
    printing: Type.Boolean(),
    paused: Type.Boolean(),
    pausing: Type.Boolean(),
    cancelling: Type.Boolean(),
    resuming: Type.Boolean(),
    finishing: Type.Boolean(),
    sdReady: Type.Boolean(),
    error: Type.Boolean(),
    ready: Type.Boolean({ description: 'Idle and cleared: a new job may start.' }),
    closedOrError: Type.Boolean(),
  }),
  error: Type.Optional(Type.String({ description: "The machine's error message, in state `Error`." })),
});

export const OctoPrintPrinter = Type.Object(
  {
    temperature: Type.Record(Type.String(), Temperature, { description: '`tool0`…, `bed`, `chamber`.' }),
    state: PrinterState,
    sd: Type.Object({ ready: Type.Boolean() }),
  },
  {
    $id: 'OctoPrintPrinter',
    description:
      '`GET api/printer`, polled by Cura and Home Assistant (409 `{"error"}` while the machine is offline).',
  },
);
export type OctoPrintPrinter = Static<typeof OctoPrintPrinter>;

export const OctoPrintJob = Type.Object(
  {
    job: Type.Object({
      file: Type.Object({
        name: NullableString,
        path: NullableString,
        display: NullableString,
        origin: Type.Unsafe<'local' | null>({ type: 'string', enum: ['local'], nullable: true }),
        size: Type.Unsafe<number | null>({ type: 'integer', nullable: true, description: 'Bytes.' }),
        date: Type.Unsafe<number | null>({ type: 'integer', nullable: true, description: 'Unix seconds.' }),
      }),
      estimatedPrintTime: Type.Unsafe<number | null>({
        type: 'number',
        nullable: true,
        description: "Seconds, the slicer's estimate; null for G-code not sliced here.",
      }),
      averagePrintTime: NullableNumber,
      lastPrintTime: NullableNumber,
      filament: Type.Unsafe<null>({ type: 'object', nullable: true }),
      user: Type.Unsafe<string | null>({
        type: 'string',
        nullable: true,
        description: 'The key that submitted the job.',
      }),
    }),
    progress: Type.Object({
      completion: Type.Unsafe<number | null>({ type: 'number', nullable: true, description: 'Percent.' }),
      filepos: NullableInteger,
      printTime: Type.Unsafe<number | null>({
        type: 'integer',
        nullable: true,
        description: 'Seconds so far.',
      }),
      printTimeLeft: Type.Unsafe<number | null>({ type: 'integer', nullable: true, description: 'Seconds.' }),
      printTimeLeftOrigin: Type.Unsafe<string | null>({
        type: 'string',
        nullable: true,
        description: '`estimate` (from the slicer) or `linear` (from the time so far).',
      }),
    }),
    state: Type.String({ description: 'As `api/printer` `state.text`; `Offline` while the machine is.' }),
    error: Type.Optional(Type.String({ description: "The machine's error message, in state `Error`." })),
  },
  {
    $id: 'OctoPrintJob',
    description: '`GET api/job`, polled by Cura, Home Assistant and the apps (200 even offline).',
  },
);
export type OctoPrintJob = Static<typeof OctoPrintJob>;

export const OctoPrintJobCommand = Type.Object(
  {
    command: Type.Union(
      [Type.Literal('pause'), Type.Literal('cancel'), Type.Literal('start'), Type.Literal('restart')],
      {
        description:
          '`pause` (with `action`) and `cancel` act on the machine; `start`/`restart` answer 409 (no file is selected here).',
      },
    ),
    action: Type.Optional(
      Type.Union([Type.Literal('pause'), Type.Literal('resume'), Type.Literal('toggle')], {
        description: 'For `pause`: `pause`, `resume` or `toggle` (the default).',
      }),
    ),
  },
  { $id: 'OctoPrintJobCommand', description: '`POST api/job`.' },
);

export const OctoPrintPrinterProfiles = Type.Object(
  { profiles: Type.Record(Type.String(), Type.Unknown()) },
  { $id: 'OctoPrintPrinterProfiles', description: '`GET api/printerprofiles`: one current profile.' },
);

const Celsius = Type.Number({ minimum: 0, description: '°C.' });

export const OctoPrintToolCommand = Type.Object(
  {
    command: Type.Union([Type.Literal('target'), Type.Literal('offset')]),
    targets: Type.Optional(
      Type.Record(Type.String(), Celsius, {
        description: '`{"tool0": 215}`; `tool0` is the one tool driven.',
      }),
    ),
    offsets: Type.Optional(Type.Record(Type.String(), Type.Number(), { description: 'Only 0 is accepted.' })),
  },
  { $id: 'OctoPrintToolCommand', description: '`POST api/printer/tool`.' },
);

export const OctoPrintBedCommand = Type.Object(
  {
    command: Type.Union([Type.Literal('target'), Type.Literal('offset')]),
    target: Type.Optional(Celsius),
    offset: Type.Optional(Type.Number({ description: 'Only 0 is accepted.' })),
  },
  { $id: 'OctoPrintBedCommand', description: '`POST api/printer/bed`.' },
);
