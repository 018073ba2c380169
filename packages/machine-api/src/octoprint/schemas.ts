/**
 * The OctoPrint wire shapes slicers read (the fields named in each description are the ones PrusaSlicer,
 * OrcaSlicer, SuperSlicer and Cura's OctoPrint plugin look at). Registered as shared schemas, so they are
 * validated, serialised and documented like the rest of the API.
 */

import { type Static, Type } from 'typebox';

const NullableString = Type.Unsafe<string | null>({ type: 'string', nullable: true });

export const OctoPrintError = Type.Object(
  { error: Type.String({ description: 'What went wrong, in words.' }) },
  {
    $id: 'OctoPrintError',
    description:
      "OctoPrint's error body, answered by every route under an OctoPrint base (a missing or unknown key is 403 there, as in OctoPrint).",
  },
);
export type OctoPrintErrorBody = Static<typeof OctoPrintError>;

export const OctoPrintVersion = Type.Object(
  {
    api: Type.String({ description: 'API version; PrusaSlicer and OrcaSlicer require the field.' }),
    server: Type.String({ description: 'Server version; Cura shows it.' }),
    text: Type.String({ description: 'Starts with "OctoPrint", which PrusaSlicer checks.' }),
  },
  { $id: 'OctoPrintVersion', description: '`GET api/version`.' },
);

export const OctoPrintServer = Type.Object(
  { server: Type.String(), safemode: Type.Unsafe<string | null>({ type: 'string', nullable: true }) },
  { $id: 'OctoPrintServer', description: '`GET api/server`.' },
);

export const OctoPrintSettings = Type.Object(
  {
    api: Type.Object({ allowCrossOrigin: Type.Boolean() }),
    feature: Type.Object({
      sdSupport: Type.Boolean({ description: 'Cura offers "store on SD" when true.' }),
    }),
    webcam: Type.Object({
      webcamEnabled: Type.Boolean({ description: 'True when the machine has a camera.' }),
      timelapseEnabled: Type.Boolean(),
      streamUrl: Type.String({
        description:
          'Absolute MJPEG URL carrying the camera token (opened without the API key); empty without a camera.',
      }),
      snapshotUrl: Type.String({ description: 'Absolute JPEG URL, with the same token.' }),
      streamRatio: Type.String(),
      streamTimeout: Type.Number(),
      snapshotTimeout: Type.Number(),
      snapshotSslValidation: Type.Boolean(),
      flipH: Type.Boolean(),
      flipV: Type.Boolean(),
      rotate90: Type.Boolean(),
      bitrate: Type.String(),
      cacheBuster: Type.Boolean(),
    }),
    plugins: Type.Object(
      {
        discovery: Type.Object({
          upnpUuid: Type.String({
            format: 'uuid',
            description:
              'Stable per machine and install (the same after restarts); Home Assistant makes it the device id.',
          }),
          publicHost: NullableString,
          publicPort: Type.Unsafe<number | null>({ type: 'integer', nullable: true }),
          httpUsername: NullableString,
          httpPassword: NullableString,
        }),
      },
      {
        description:
          'Only `discovery`: Cura then uploads plain G-code (not .ufp) and does not wait for an analysis.',
      },
    ),
  },
  {
    $id: 'OctoPrintSettings',
    description:
      '`GET api/settings`; Cura tests the key with it, Home Assistant reads the device id and camera.',
  },
);

export const OctoPrintUser = Type.Object(
  {
    name: Type.String({ description: 'The key name; Cura shows it.' }),
    active: Type.Boolean(),
    admin: Type.Boolean(),
    user: Type.Boolean(),
    groups: Type.Array(Type.String()),
    permissions: Type.Array(Type.String()),
    session: Type.Optional(
      Type.String({
        description: '`POST api/login`: the session for the push channel (`{"auth": "name:session"}`).',
      }),
    ),
  },
  { $id: 'OctoPrintUser', description: '`POST api/login` (passive) and `GET api/currentuser`.' },
);

const FileRefs = Type.Object({
  resource: Type.String({ description: 'URL of the file resource (also in `Location`).' }),
});

export const OctoPrintUploadResult = Type.Object(
  {
    done: Type.Boolean({ description: 'Always true: the file is stored when the answer comes.' }),
    effectiveSelect: Type.Boolean(),
    effectivePrint: Type.Boolean({ description: 'Whether a job was started (machine) or queued (queue).' }),
    files: Type.Object({
      local: Type.Object({
        name: Type.String({ description: 'File name.' }),
        path: Type.String({ description: 'Path and name, as stored.' }),
        origin: Type.Literal('local'),
        refs: FileRefs,
      }),
    }),
    job_id: Type.Optional(
      Type.String({ description: 'machine-api: the job started or queued, when `print=true`.' }),
    ),
  },
  {
    $id: 'OctoPrintUploadResult',
    description:
      '`POST api/files/local` (201 with `Location`; Cura reads `Location`, PrusaSlicer only the status).',
  },
);
export type OctoPrintUploadResult = Static<typeof OctoPrintUploadResult>;

export const OctoPrintFileCommand = Type.Object(
  {
    command: Type.String({ description: '`select` is supported; with `print: true` it prints.' }),
    print: Type.Optional(Type.Boolean()),
  },
  {
    $id: 'OctoPrintFileCommand',
    description: '`POST api/files/local/{path}`, as Cura sends it after an upload.',
  },
);

const NullableNumber = Type.Unsafe<number | null>({ type: 'number', nullable: true });
const NullableInteger = Type.Unsafe<number | null>({ type: 'integer', nullable: true });

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

export const StoredFileInfo = Type.Object(
  {
    name: Type.String({ description: 'Path and name as uploaded (`path` field + file name).' }),
    size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
    machine_id: Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      description: 'The machine it prints on; null for the queue.',
    }),
    queue_constraints: Type.Unsafe<Record<string, unknown> | null>({
      type: 'object',
      nullable: true,
      description: 'The queue constraints it prints with; null for a machine.',
    }),
    owner: Type.Optional(Type.String({ description: 'The key that uploaded it.' })),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'StoredFile', description: 'A file uploaded from a slicer without printing, kept for later.' },
);

export const AppKeyRequestBody = Type.Object(
  {
    app: Type.String({ maxLength: 100, description: 'The application asking; its key is named after it.' }),
    user: Type.Optional(
      Type.String({ maxLength: 100, description: 'The user the app asks for; shown to the administrator.' }),
    ),
  },
  { $id: 'AppKeyRequestBody', description: '`POST plugin/appkeys/request`, as OctoPrint apps send it.' },
);

export const AppKeyRequestCreated = Type.Object(
  { app_token: Type.String({ description: 'The polling token, also the last segment of `Location`.' }) },
  { $id: 'AppKeyRequestCreated', description: 'A key request recorded; poll `Location` for the decision.' },
);

export const AppKeyDecision = Type.Object(
  {
    api_key: Type.Optional(Type.String({ description: 'The key, once approved (200); handed out once.' })),
    message: Type.Optional(Type.String({ description: '"Awaiting decision" while pending (202).' })),
  },
  { $id: 'AppKeyDecision', description: '`GET plugin/appkeys/request/{token}`.' },
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

export const OctoPrintConnection = Type.Object(
  {
    current: Type.Object({
      state: Type.String({
        description: "As `api/printer`'s `state.text`; `Closed` while the machine is offline.",
      }),
      port: Type.Unsafe<string | null>({ type: 'string', nullable: true, description: 'The machine id.' }),
      baudrate: Type.Unsafe<number | null>({ type: 'integer', nullable: true }),
      printerProfile: Type.String(),
    }),
    options: Type.Object({
      ports: Type.Array(Type.String()),
      baudrates: Type.Array(Type.Integer()),
      printerProfiles: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
      portPreference: Type.Unsafe<string | null>({ type: 'string', nullable: true }),
      baudratePreference: Type.Unsafe<number | null>({ type: 'integer', nullable: true }),
      printerProfilePreference: Type.String(),
      autoconnect: Type.Boolean(),
    }),
  },
  { $id: 'OctoPrintConnection', description: '`GET api/connection`.' },
);

export const OctoPrintConnectionCommand = Type.Object(
  { command: Type.Union([Type.Literal('connect'), Type.Literal('disconnect'), Type.Literal('fake_ack')]) },
  { $id: 'OctoPrintConnectionCommand', description: '`POST api/connection` (other fields are ignored).' },
);

export const OctoPrintSystemCommands = Type.Object(
  { core: Type.Array(Type.Unknown()), custom: Type.Array(Type.Unknown()) },
  { $id: 'OctoPrintSystemCommands', description: '`GET api/system/commands`: none.' },
);

export const OctoPrintFiles = Type.Object(
  {
    files: Type.Array(
      Type.Object({
        name: Type.String(),
        path: Type.String(),
        display: Type.String(),
        origin: Type.Literal('local'),
        type: Type.String(),
        typePath: Type.Array(Type.String()),
        size: Type.Integer({ description: 'Bytes.' }),
        date: Type.Integer({ description: 'Unix seconds.' }),
        refs: FileRefs,
      }),
    ),
    free: Type.Unsafe<number | null>({ type: 'integer', nullable: true, description: 'Not reported.' }),
    total: Type.Unsafe<number | null>({ type: 'integer', nullable: true, description: 'Not reported.' }),
  },
  { $id: 'OctoPrintFiles', description: '`GET api/files`: the files stored for this base.' },
);

export const octoPrintSchemas = [
  OctoPrintConnection,
  OctoPrintConnectionCommand,
  OctoPrintSystemCommands,
  OctoPrintFiles,
  OctoPrintToolCommand,
  OctoPrintBedCommand,
  OctoPrintJobCommand,
  AppKeyRequestBody,
  AppKeyRequestCreated,
  AppKeyDecision,
  OctoPrintError,
  OctoPrintVersion,
  OctoPrintServer,
  OctoPrintSettings,
  OctoPrintUser,
  OctoPrintUploadResult,
  OctoPrintFileCommand,
  OctoPrintPrinter,
  OctoPrintJob,
  OctoPrintPrinterProfiles,
  StoredFileInfo,
];
