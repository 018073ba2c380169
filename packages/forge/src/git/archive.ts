import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { gitBaseEnv } from './command.js';

/** Archive formats `git archive` writes for the forge's download links. */
export type ArchiveFormat = 'zip' | 'tar.gz';

/**
 * Streams `git archive` of one commit. `commitSha` must be a resolved object id (never user text) and
 * `prefix` the repository's directory name: nothing from a request reaches git's argv unchecked. The
 * stream errors when git fails; destroying it (a client that went away) kills git.
 */
export function archiveStream(
  gitDir: string,
  options: { commitSha: string; format: ArchiveFormat; prefix: string },
): Readable {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(options.commitSha)) {
    throw new Error(`archiveStream needs a resolved object id, got "${options.commitSha}"`);
  }
  const child = spawn(
    'git',
    [
      '--git-dir',
      gitDir,
      'archive',
      `--format=${options.format}`,
      `--prefix=${options.prefix}/`,
      // The tree-ish is a checked object id; `--` ends it (git archive reads `--end-of-options --` as a path).
      options.commitSha,
      '--',
    ],
    { env: gitBaseEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString('utf8');
  });
  const output = child.stdout;
  child.on('error', (error) => output.destroy(error));
  child.on('close', (code, signal) => {
    if (code !== 0 && !output.destroyed) {
      output.destroy(new Error(`git archive failed (${signal ?? code}): ${stderr.trim()}`));
    }
  });
  output.on('close', () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return output;
}
