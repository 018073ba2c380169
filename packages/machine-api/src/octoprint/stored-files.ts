/**
 * Files a slicer uploaded without `print=true`, kept under `<dataDir>/files/` for a later
 * `POST /files/{name}/print`. A file remembers where it was sent (a machine, or the queue with its
 * constraints) and who sent it. Names are the slicer's (`path/name.gcode`), checked once here; on disk a
 * file has a random name, so no client text ever becomes a path. Uploading a name again replaces it, as
 * OctoPrint does.
 */

import { randomUUID } from 'node:crypto';
import { link, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MissingScope } from '../access/errors.js';
import { type Actor, mayManageJob } from '../access/scopes.js';
import { BadRequest, NotFound } from '../errors.js';
import type { Job } from '../jobs/job.js';
import type { Upload } from '../jobs/runner.js';
import { type OctoPrintTarget, targetFromKey, targetKey } from './base-url.js';
import type { FileStore } from './file-store.js';

export interface StoredFile {
  name: string;
  target: OctoPrintTarget;
  size: number;
  owner: string | null;
  createdAt: string;
}

/** Submits a design to a target (a machine's runner or the farm queue); see submit.ts. */
export type SubmitPrint = (
  upload: Upload,
  target: OctoPrintTarget,
  jobName: string,
  owner: string | null,
) => Promise<Job>;

const MAX_NAME = 1024;

/**
 * `path` + `name` as one stored name, `a/b/file.gcode`: no empty, `.` or `..` segments, no control
 * characters or backslashes, at most 1024 characters. Throws `BadRequest` saying what is wrong.
 */
export function storedName(path: string, name: string): string {
  const segments = [...path.split('/'), ...name.split('/')].filter((segment) => segment !== '');
  if (segments.length === 0) throw new BadRequest('the upload has no file name');
  for (const segment of segments) {
    if (segment === '.' || segment === '..')
      throw new BadRequest(`"${segment}" is not allowed in a file path`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (/[\u0000-\u001f\u007f\\]/.test(segment)) {
      throw new BadRequest('file names may not contain control characters or backslashes');
    }
  }
  const joined = segments.join('/');
  if (joined.length > MAX_NAME) throw new BadRequest(`the file path is longer than ${MAX_NAME} characters`);
  return joined;
}

export class StoredFiles {
  private readonly dir: string;

  constructor(
    private readonly store: FileStore,
    dataDir: string,
    /** Where uploads are handed to the job runner (the runner moves them into its work dir). */
    private readonly uploadDir: string,
  ) {
    this.dir = join(dataDir, 'files');
  }

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  /** Takes over the uploaded temp file as `name` (replacing an older file of that name). */
  async keep(
    upload: Upload,
    name: string,
    target: OctoPrintTarget,
    owner: string | null,
  ): Promise<StoredFile> {
    const diskName = randomUUID();
    await rename(upload.path, join(this.dir, diskName));
    const createdAt = new Date().toISOString();
    const replaced = await this.store.put({
      name,
      target: targetKey(target),
      disk_name: diskName,
      size: upload.size,
      owner,
      created_at: createdAt,
    });
    if (replaced) await rm(join(this.dir, replaced), { force: true });
    return { name, target, size: upload.size, owner, createdAt };
  }

  async list(): Promise<StoredFile[]> {
    const rows = await this.store.list();
    return rows.map((row) => this.toFile(row));
  }

  async get(name: string): Promise<StoredFile> {
    const row = await this.store.get(name);
    if (!row) throw new NotFound(`no stored file named "${name}"`);
    return this.toFile(row);
  }

  /** Prints a stored file on the target it was uploaded for; the file stays stored. */
  async print(name: string, actor: Actor, submit: SubmitPrint): Promise<Job> {
    const row = await this.store.get(name);
    if (!row) throw new NotFound(`no stored file named "${name}"`);
    // The runner takes its upload over (moves it), so it gets a hard link, not the stored file itself.
    const handOver = join(this.uploadDir, `${randomUUID()}.upload`);
    await link(join(this.dir, row.disk_name), handOver);
    const fileName = name.split('/').pop() ?? name;
    try {
      return await submit(
        { path: handOver, fileName, size: row.size },
        targetFromKey(row.target),
        jobNameOf(fileName),
        actor.name,
      );
    } finally {
      await rm(handOver, { force: true });
    }
  }

  /** Removes a stored file; a `print` key may remove only files it uploaded. */
  async remove(name: string, actor: Actor): Promise<void> {
    const row = await this.store.get(name);
    if (!row) throw new NotFound(`no stored file named "${name}"`);
    if (!mayManageJob(actor, row.owner)) {
      throw new MissingScope(
        `the file "${name}" was uploaded by another key; removing it needs the "control" scope`,
      );
    }
    await this.store.delete(name);
    await rm(join(this.dir, row.disk_name), { force: true });
  }

  private toFile(row: {
    name: string;
    target: string;
    size: number;
    owner: string | null;
    created_at: string;
  }): StoredFile {
    return {
      name: row.name,
      target: targetFromKey(row.target),
      size: row.size,
      owner: row.owner,
      createdAt: row.created_at,
    };
  }
}

/** The job name of an uploaded file: its name without the G-code / model extension. */
export function jobNameOf(fileName: string): string {
  return fileName.replace(/\.(gcode|gco|g|bgcode|gcode\.3mf|3mf|stl|obj|ufp)$/i, '') || fileName;
}
