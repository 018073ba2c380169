/**
 * OctoPrint wire shapes: uploads and the files stored for a base: the upload answer, file commands, the file
 * list. Part of ./index.ts.
 */

import { type Static, Type } from 'typebox';

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
