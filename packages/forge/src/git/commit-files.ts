import { runGit } from './command.js';

/** Paths a commit added, removed and modified (against its first parent; all added for a root commit). */
export interface CommitFileChanges {
  added: string[];
  removed: string[];
  modified: string[];
}

/** `git diff-tree` of one commit, NUL-separated so any path name reads back intact. */
export async function commitFileChanges(gitDir: string, sha: string): Promise<CommitFileChanges> {
  const { stdout } = await runGit(
    ['diff-tree', '--no-commit-id', '--name-status', '-r', '--root', '--no-renames', '-z', sha, '--'],
    { gitDir },
  );
  const changes: CommitFileChanges = { added: [], removed: [], modified: [] };
  const fields = stdout.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i]!.trim();
    const path = fields[i + 1]!;
    if (status.startsWith('A')) changes.added.push(path);
    else if (status.startsWith('D')) changes.removed.push(path);
    else changes.modified.push(path);
  }
  return changes;
}
