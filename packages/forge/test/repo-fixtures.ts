/** Repository fixtures built through the HTTP API, and a git client working against the forge. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGit } from '../src/git/command.js';
import { type TestForge, uniqueName } from './harness.js';

export interface TestRepo {
  owner: string;
  name: string;
  /** `/repos/<owner>/<name>` */
  path: string;
  default_branch: string;
}

/** Creates a repository through `POST /user/repos` (or `/orgs/{org}/repos`); auto_init by default. */
export async function createRepo(
  forge: TestForge,
  token: string,
  options: {
    name?: string;
    org?: string;
    private?: boolean;
    autoInit?: boolean;
    defaultBranch?: string;
  } = {},
): Promise<TestRepo> {
  const name = options.name ?? uniqueName('repo');
  const response = await forge.request('POST', options.org ? `/orgs/${options.org}/repos` : '/user/repos', {
    token,
    body: {
      name,
      private: options.private ?? false,
      auto_init: options.autoInit ?? true,
      default_branch: options.defaultBranch,
    },
  });
  if (response.status !== 201) throw new Error(`create repo: ${response.status} ${response.text}`);
  const owner = response.body.owner.login as string;
  return { owner, name, path: `/repos/${owner}/${name}`, default_branch: response.body.default_branch };
}

/** Git identity for commits made by tests (no global config is read). */
export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'author@example.com',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'author@example.com',
};

/** A scratch directory for working copies; `cleanup()` removes it. */
export async function scratchDir(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-clone-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** `http://<user>:<secret>@host/<owner>/<repo>.git` (no credentials when `auth` is omitted). */
export function cloneUrl(
  forge: TestForge,
  repo: Pick<TestRepo, 'owner' | 'name'>,
  auth?: { user: string; secret: string },
) {
  const url = new URL(`${forge.url}/${repo.owner}/${repo.name}.git`);
  if (auth) {
    url.username = encodeURIComponent(auth.user);
    url.password = encodeURIComponent(auth.secret);
  }
  return url.href;
}

/** Clones, adds one commit and returns the working copy path. */
export async function cloneAndCommit(url: string, workDir: string, file = 'change.txt'): Promise<string> {
  const copy = join(workDir, uniqueName('wc'));
  await runGit(['clone', '--quiet', url, copy]);
  await writeFile(join(copy, file), `${file} ${Date.now()}\n`);
  await runGit(['-C', copy, 'add', file]);
  await runGit(['-C', copy, 'commit', '--quiet', '-m', `add ${file}`], { env: GIT_IDENTITY });
  return copy;
}

/** The sha HEAD of a working copy points at. */
export async function headOf(copy: string): Promise<string> {
  return (await runGit(['-C', copy, 'rev-parse', 'HEAD'])).stdout.trim();
}
