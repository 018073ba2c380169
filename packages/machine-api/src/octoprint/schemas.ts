/**
 * The OctoPrint wire shapes slicers read (the fields named in each description are the ones PrusaSlicer,
 * OrcaSlicer, SuperSlicer and Cura's OctoPrint plugin look at). Registered as shared schemas, so they are
 * validated, serialised and documented like the rest of the API.
 */

import { type Static, Type } from 'typebox';

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
      webcamEnabled: Type.Boolean(),
      streamUrl: Type.String({ description: 'Empty: Cura shows no camera.' }),
    }),
    plugins: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Empty: Cura uploads plain G-code (not .ufp) and does not wait for an analysis.',
    }),
  },
  { $id: 'OctoPrintSettings', description: '`GET api/settings`; Cura uses it to test the key (200 or 401).' },
);

export const OctoPrintUser = Type.Object(
  {
    name: Type.String({ description: 'The key name; Cura shows it.' }),
    active: Type.Boolean(),
    admin: Type.Boolean(),
    user: Type.Boolean(),
    groups: Type.Array(Type.String()),
    permissions: Type.Array(Type.String()),
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

const Temperature = Type.Object({
  actual: Type.Unsafe<number | null>({ type: 'number', nullable: true }),
  target: Type.Unsafe<number | null>({ type: 'number', nullable: true }),
  offset: Type.Number(),
});

export const OctoPrintPrinter = Type.Object(
  {
    temperature: Type.Record(Type.String(), Temperature, { description: '`tool0`…, `bed`.' }),
    state: Type.Object({
      text: Type.String(),
      flags: Type.Object({
        operational: Type.Boolean(),
        paused: Type.Boolean(),
        printing: Type.Boolean(),
        pausing: Type.Boolean(),
        cancelling: Type.Boolean(),
        sdReady: Type.Boolean(),
        error: Type.Boolean(),
        ready: Type.Boolean(),
        closedOrError: Type.Boolean(),
      }),
    }),
  },
  {
    $id: 'OctoPrintPrinter',
    description: '`GET api/printer`, polled by Cura (409 while the machine is offline).',
  },
);
export type OctoPrintPrinter = Static<typeof OctoPrintPrinter>;

export const OctoPrintJob = Type.Object(
  {
    job: Type.Object({
      file: Type.Object({ name: Type.Unsafe<string | null>({ type: 'string', nullable: true }) }),
    }),
    progress: Type.Object({
      completion: Type.Unsafe<number | null>({ type: 'number', nullable: true }),
      printTime: Type.Unsafe<number | null>({ type: 'number', nullable: true }),
      printTimeLeft: Type.Unsafe<number | null>({ type: 'number', nullable: true }),
    }),
    state: Type.String({ description: '`Operational`, `Printing`, `Paused`, `Offline`, `Error`.' }),
  },
  { $id: 'OctoPrintJob', description: '`GET api/job`, polled by Cura.' },
);
export type OctoPrintJob = Static<typeof OctoPrintJob>;

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

export const octoPrintSchemas = [
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
