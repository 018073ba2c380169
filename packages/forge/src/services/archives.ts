/**
 * Repository archives (Gitea's services/repository/archiver NewRequest + routers archiveDownload):
 * `<ref>.zip` or `<ref>.tar.gz` where the ref is a branch, tag or commit id, streamed from `git archive`
 * of the resolved commit with the repository's directory name as prefix.
 */
import type { Readable } from 'node:stream';
import { BadRequest, NotFound } from '../errors.js';
import { type ArchiveFormat, archiveStream } from '../git/archive.js';
import { resolveCommit } from '../git/repository.js';
import type { RepoContext } from './repo-context.js';

const FORMATS: readonly [string, ArchiveFormat][] = [
  ['.tar.gz', 'tar.gz'],
  ['.zip', 'zip'],
];

/** An archive ready to stream. */
export interface RepoArchive {
  /** `<repo>-<ref with / as ->.<ext>`, Gitea's download name. */
  fileName: string;
  commitSha: string;
  open: () => Readable;
}

/**
 * Resolves `<ref>.<ext>`: 400 `unknown format` for another extension, 404 `unrecognized repository
 * reference` when the ref names no commit (refs starting with `-` never reach git as options).
 */
export async function prepareArchive(ctx: RepoContext, archiveName: string): Promise<RepoArchive> {
  const match = FORMATS.find(([extension]) => archiveName.endsWith(extension));
  if (!match) throw new BadRequest(`unknown format: ${archiveName}`);
  const [extension, format] = match;
  const ref = archiveName.slice(0, -extension.length);
  const commitSha = ref && !ref.startsWith('-') ? await resolveCommit(ctx.gitDir, ref) : null;
  if (!commitSha) throw new NotFound(`unrecognized repository reference: ${ref}`);
  return {
    fileName: `${ctx.repo.name}-${ref.replaceAll('/', '-')}${extension}`,
    commitSha,
    open: () => archiveStream(ctx.gitDir, { commitSha, format, prefix: ctx.repo.lower_name }),
  };
}
