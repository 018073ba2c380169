import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Static } from 'typebox';
import { BadRequest, Conflict, Forbidden, Invalid, NotFound } from '../errors.js';
import {
  assertValidRefName,
  commitInitialReadme,
  type GitBranch,
  getBranch as getGitBranch,
  InvalidRefNameError,
  initBareRepository,
  listBranches as listGitBranches,
  removeRepository,
  repositoryPath,
  setHeadBranch,
} from '../git/repository.js';
import {
  deleteCollaboration,
  findCollaboration,
  listCollaborators as listCollaboratorRows,
  upsertCollaboration,
} from '../store/collaborations.js';
import { isUniqueViolation } from '../store/constraint-errors.js';
import { deleteWebhooksOf } from '../store/hooks.js';
import { countReleases } from '../store/releases.js';
import { canCreateOrgRepo } from '../store/repo-access.js';
import {
  addTeamRepos,
  deleteRepositoryRows,
  findRepositoryById,
  findRepositoryByName,
  insertRepository,
  type RepositoryPatch,
  teamsIncludingAllRepositories,
  updateRepository,
} from '../store/repositories.js';
import { AccessMode, type RepositoryRow, type UserRow, UserType } from '../store/schema.js';
import { findUserByLowerName } from '../store/users.js';
/** Repositories: create (user and organisation), read, edit, delete, branches and collaborators. */
import type { CreateRepoOptionSchema, EditRepoOptionSchema } from '../structs/repo.js';
import { raiseHookEvents, raiseHookEventsNow, wakeDeliveryWorkers } from '../webhooks/outbox.js';
import { repositoryEvent } from '../webhooks/payloads.js';
import { removeAttachmentFiles, repoAttachmentUuids } from './attachment-removal.js';
import { nowUnix, type ServiceContext } from './context.js';
import { getRepoPermission } from './permissions.js';
import { RepoActionType, recordRepoAction } from './repo-activity.js';
import { type RepoContext, requireDoer } from './repo-context.js';

/** Where bare repositories live: `<data-dir>/repositories`. */
export function repositoriesRoot(ctx: ServiceContext): string {
  return join(ctx.config.dataDir, 'repositories');
}

/** The git directory of a repository row. */
export function gitDirOf(ctx: ServiceContext, owner: UserRow, repo: RepositoryRow): string {
  return repositoryPath(repositoriesRoot(ctx), owner.name, repo.name);
}

/**
 * Resolves `{owner}/{repo}` for a caller (Gitea's repoAssignment): 404 when it does not exist or the
 * caller may not see any of it, so private repositories are not revealed.
 */
export async function loadRepoContext(
  ctx: ServiceContext,
  ownerName: string,
  repoName: string,
  doer: UserRow | null,
): Promise<RepoContext> {
  const found = await findRepositoryByName(ctx.db, ownerName, repoName);
  if (!found) throw new NotFound();
  const permission = await getRepoPermission(ctx.db, found.repo, found.owner, doer);
  if (!permission.hasAnyUnitAccess()) throw new NotFound();
  return { ...ctx, gitDir: gitDirOf(ctx, found.owner, found.repo), ...found, doer, permission };
}

// Gitea's reserved repository names and patterns (models/repo/repo.go).
const RESERVED_REPO_NAMES = new Set(['.', '..', '-']);
const RESERVED_REPO_SUFFIXES = ['.wiki', '.git', '.rss', '.atom'];
const REPO_NAME = /^[\w.-]+$/;

/** 422 for a name Gitea would refuse (binding AlphaDashDot, MaxSize(100), reserved names and patterns). */
export function assertValidRepoName(name: string): void {
  if (!name) throw new Invalid('[Name]: Required');
  if (!REPO_NAME.test(name)) throw new Invalid('[Name]: AlphaDashDot');
  if ([...name].length > 100) throw new Invalid('[Name]: MaxSize');
  const lower = name.toLowerCase();
  if (RESERVED_REPO_NAMES.has(lower)) throw new Invalid(`name is reserved [name: ${name}]`);
  const suffix = RESERVED_REPO_SUFFIXES.find((s) => lower.endsWith(s));
  if (suffix) throw new Invalid(`name pattern is not allowed [pattern: *${suffix}]`);
}

async function assertValidBranchName(branch: string): Promise<void> {
  try {
    await assertValidRefName(`refs/heads/${branch}`);
  } catch (error) {
    if (error instanceof InvalidRefNameError) throw new Invalid('[DefaultBranch]: GitRefName');
    throw error;
  }
}

/** CreateRepoOption (the fields the forge implements). */
export type CreateRepoInput = Static<typeof CreateRepoOptionSchema>;

/** The one README template Gitea ships ("Default"). */
function defaultReadme(name: string, description: string): string {
  return description ? `# ${name}\n\n${description}\n` : `# ${name}\n`;
}

const DEFAULT_BRANCH = 'main';

/**
 * Creates a repository for `owner` (the doer or an organisation): the row, the bare git repository, an
 * initial README commit when auto_init is set, team links for all-repository teams and create_repo activity.
 */
export async function createRepository(
  ctx: ServiceContext,
  doer: UserRow,
  owner: UserRow,
  input: CreateRepoInput,
): Promise<RepositoryRow> {
  assertValidRepoName(input.name);
  const defaultBranch = input.default_branch || DEFAULT_BRANCH;
  await assertValidBranchName(defaultBranch);
  const readmeTemplate = input.auto_init ? input.readme || 'Default' : '';
  if (readmeTemplate && readmeTemplate !== 'Default') {
    throw new BadRequest(`readme template not found: ${readmeTemplate}`);
  }
  const now = nowUnix();
  const description = input.description ?? '';
  let repo: RepositoryRow;
  try {
    repo = await insertRepository(ctx.db, {
      owner,
      name: input.name,
      description,
      website: '',
      isPrivate: input.private ?? false,
      defaultBranch,
      now,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict('The repository with the same name already exists.');
    throw error;
  }
  const gitDir = gitDirOf(ctx, owner, repo);
  try {
    if (existsSync(gitDir)) throw new Conflict('The repository files already exist.');
    await initBareRepository(gitDir, defaultBranch);
    if (input.auto_init) {
      await commitInitialReadme(gitDir, {
        branch: defaultBranch,
        readme: defaultReadme(input.name, description),
        author: { name: doer.name, email: doer.email },
      });
      await updateRepository(ctx.db, repo.id, { isEmpty: false }, now);
    }
    if (owner.type === UserType.Organization) {
      await addTeamRepos(ctx.db, owner.id, repo.id, await teamsIncludingAllRepositories(ctx.db, owner.id));
    }
  } catch (error) {
    await deleteRepositoryRows(ctx.db, repo.id);
    if (!(error instanceof Conflict)) await removeRepository(gitDir);
    throw error;
  }
  const created = (await findRepositoryById(ctx.db, repo.id))!;
  await recordRepoAction(ctx.db, {
    opType: RepoActionType.CreateRepo,
    actor: doer,
    repo: created,
    owner,
    refName: '',
    content: '',
    createdUnix: now,
  });
  await raiseHookEventsNow(ctx.db, [
    repositoryEvent(ctx.config, { repo: created, owner, releaseCount: 0 }, doer, 'created'),
  ]);
  return created;
}

/** POST /orgs/{org}/repos: the doer must be a site admin, an org owner or in a team that may create. */
export async function createOrgRepository(
  ctx: ServiceContext,
  doer: UserRow,
  org: UserRow,
  input: CreateRepoInput,
): Promise<RepositoryRow> {
  if (doer.is_admin !== 1 && !(await canCreateOrgRepo(ctx.db, org.id, doer.id))) {
    throw new Forbidden('Given user is not allowed to create repository in organization.');
  }
  return createRepository(ctx, doer, org, input);
}

/** EditRepoOption (the fields the forge implements). */
export type EditRepoInput = Static<typeof EditRepoOptionSchema>;

/** PATCH /repos/{o}/{r}: rename (moving the git directory), description, visibility, default branch. */
export async function editRepository(ctx: RepoContext, input: EditRepoInput): Promise<RepositoryRow> {
  const patch: RepositoryPatch = {};
  if (input.name !== undefined && input.name !== ctx.repo.name) {
    assertValidRepoName(input.name);
    if (
      input.name.toLowerCase() !== ctx.repo.lower_name &&
      (await findRepositoryByName(ctx.db, ctx.owner.name, input.name))
    ) {
      throw new Invalid(`repository already exists [uname: ${ctx.owner.name}, name: ${input.name}]`);
    }
    patch.name = input.name;
  }
  if (input.description !== undefined) patch.description = input.description;
  if (input.website !== undefined) patch.website = input.website;
  if (input.private !== undefined) patch.isPrivate = input.private;
  if (input.archived !== undefined) patch.isArchived = input.archived;
  // Gitea ignores a default branch that does not exist in a non-empty repository.
  if (input.default_branch && input.default_branch !== ctx.repo.default_branch) {
    await assertValidBranchName(input.default_branch);
    if (ctx.repo.is_empty === 1 || (await getGitBranch(ctx.gitDir, input.default_branch))) {
      await setHeadBranch(ctx.gitDir, input.default_branch);
      patch.defaultBranch = input.default_branch;
    }
  }
  if (patch.name !== undefined && patch.name.toLowerCase() !== ctx.repo.lower_name) {
    const target = repositoryPath(repositoriesRoot(ctx), ctx.owner.name, patch.name);
    await rename(ctx.gitDir, target);
    try {
      await updateRepository(ctx.db, ctx.repo.id, patch, nowUnix());
    } catch (error) {
      await rename(target, ctx.gitDir);
      if (isUniqueViolation(error)) {
        throw new Invalid(`repository already exists [uname: ${ctx.owner.name}, name: ${patch.name}]`);
      }
      throw error;
    }
  } else {
    await updateRepository(ctx.db, ctx.repo.id, patch, nowUnix());
  }
  return (await findRepositoryById(ctx.db, ctx.repo.id))!;
}

/** DELETE /repos/{o}/{r}: rows first (so nothing points at a half-deleted directory), then the files. */
export async function deleteRepository(ctx: RepoContext): Promise<void> {
  const attachmentUuids = await repoAttachmentUuids(ctx, ctx.repo.id);
  const releaseCount = await countReleases(ctx.db, { repoId: ctx.repo.id, includeDrafts: false });
  const deleted = repositoryEvent(
    ctx.config,
    { repo: ctx.repo, owner: ctx.owner, releaseCount },
    requireDoer(ctx),
    'deleted',
  );
  // The `deleted` event reaches the owner's and the site's hooks; the repository's own hooks go with it.
  await deleteRepositoryRows(ctx.db, ctx.repo.id, async (trx) => {
    await raiseHookEvents(trx, [deleted]);
    await deleteWebhooksOf(trx, { repoId: ctx.repo.id });
  });
  wakeDeliveryWorkers();
  await removeRepository(ctx.gitDir);
  await removeAttachmentFiles(ctx, attachmentUuids);
}

/** Branches of a repository, sorted by name, and the total. */
export async function listBranches(
  ctx: RepoContext,
  page: { limit: number; offset: number },
): Promise<{ branches: GitBranch[]; total: number }> {
  const branches = await listGitBranches(ctx.gitDir);
  return { branches: branches.slice(page.offset, page.offset + page.limit), total: branches.length };
}

/** One branch; 404 `branch does not exist`. */
export async function getBranch(ctx: RepoContext, name: string): Promise<GitBranch> {
  const branch = await getGitBranch(ctx.gitDir, name);
  if (!branch) throw new NotFound(`branch does not exist [name: ${name}]`);
  return branch;
}

const COLLABORATOR_MODES: Record<string, number> = {
  read: AccessMode.Read,
  write: AccessMode.Write,
  admin: AccessMode.Admin,
};

/** An individual user by name for collaborator routes; unknown → 422 as Gitea. */
async function collaboratorUser(ctx: RepoContext, name: string): Promise<UserRow> {
  const user = await findUserByLowerName(ctx.db, name.toLowerCase());
  if (!user || user.type !== UserType.Individual)
    throw new Invalid(`user does not exist [uid: 0, name: ${name}]`);
  return user;
}

/** PUT /collaborators/{user}: adds or changes a collaborator (permission absent → write). */
export async function putCollaborator(
  ctx: RepoContext,
  name: string,
  permission: string | undefined,
): Promise<void> {
  const user = await collaboratorUser(ctx, name);
  if (user.is_active !== 1) throw new Invalid(`user is not active [name: ${name}]`);
  if (user.id === ctx.repo.owner_id) throw new Invalid('the owner cannot be a collaborator');
  const mode = COLLABORATOR_MODES[permission ?? 'write'];
  if (mode === undefined)
    throw new Invalid(`invalid permission "${permission}": expected read, write or admin`);
  await upsertCollaboration(ctx.db, { repoId: ctx.repo.id, userId: user.id, mode, now: nowUnix() });
}

/** GET /collaborators/{user}: true when the user is a collaborator. */
export async function isCollaborator(ctx: RepoContext, name: string): Promise<boolean> {
  const user = await collaboratorUser(ctx, name);
  return (await findCollaboration(ctx.db, ctx.repo.id, user.id)) !== undefined;
}

/** DELETE /collaborators/{user}. */
export async function removeCollaborator(ctx: RepoContext, name: string): Promise<void> {
  const user = await collaboratorUser(ctx, name);
  await deleteCollaboration(ctx.db, ctx.repo.id, user.id);
}

/** GET /collaborators: one page of collaborator users and the total. */
export function listCollaborators(ctx: RepoContext, page: { limit: number; offset: number }) {
  return listCollaboratorRows(ctx.db, ctx.repo.id, page);
}
