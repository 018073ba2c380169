import type { Static } from 'typebox';
import { BadRequest, Forbidden, Invalid, NotFound } from '../errors.js';
import { findTeamByName } from '../store/orgs.js';
import {
  deleteProtectedTag,
  findProtectedTag,
  insertProtectedTag,
  listProtectedTags,
  type ProtectedTag,
  updateProtectedTag,
} from '../store/protected-tags.js';
import { findTeamsByIds } from '../store/repo-access.js';
import { UserType } from '../store/schema.js';
import { findUserByLowerName, findUsersByIds } from '../store/users.js';
import type { CreateTagProtectionOptionSchema } from '../structs/release.js';
import { nowUnix } from './context.js';
import { teamIdsInOwner } from './permissions.js';
import {
  compileTagPattern,
  InvalidTagPatternError,
  isUserAllowedToControlTag,
} from './protected-tag-rules.js';
import type { RepoContext } from './repo-context.js';

/** Whether `userId` may create or delete `tagName` in the repository (no protection, or allowlisted). */
export async function canControlTag(ctx: RepoContext, tagName: string, userId: number): Promise<boolean> {
  const rules = await listProtectedTags(ctx.db, ctx.repo.id);
  if (rules.length === 0) return true;
  const teamIds = await teamIdsInOwner(ctx.db, ctx.owner, userId);
  return isUserAllowedToControlTag(rules, tagName, { id: userId, teamIds });
}

/** A protection with its allowlists as names (TagProtection JSON). */
export interface NamedTagProtection extends ProtectedTag {
  userNames: string[];
  teamNames: string[];
}

async function withNames(ctx: RepoContext, protections: ProtectedTag[]): Promise<NamedTagProtection[]> {
  const userIds = [...new Set(protections.flatMap((p) => p.allowlistUserIds))];
  const teamIds = [...new Set(protections.flatMap((p) => p.allowlistTeamIds))];
  const users = await findUsersByIds(ctx.db, userIds);
  const teams = await findTeamsByIds(ctx.db, teamIds);
  const userName = new Map(users.map((u) => [u.id, u.name]));
  const teamName = new Map(teams.map((t) => [t.id, t.name]));
  return protections.map((p) => ({
    ...p,
    userNames: p.allowlistUserIds.flatMap((id) => userName.get(id) ?? []),
    teamNames: p.allowlistTeamIds.flatMap((id) => teamName.get(id) ?? []),
  }));
}

/** Input of create and edit (CreateTagProtectionOption / EditTagProtectionOption). */
export type TagProtectionInput = Static<typeof CreateTagProtectionOptionSchema>;

async function resolveUserIds(ctx: RepoContext, names: readonly string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const name of names) {
    const user = await findUserByLowerName(ctx.db, name.toLowerCase());
    if (!user || user.type !== UserType.Individual)
      throw new Invalid(`user does not exist [uid: 0, name: ${name}]`);
    ids.push(user.id);
  }
  return ids;
}

/** Teams are only resolved for organisation repositories, as Gitea does. */
async function resolveTeamIds(ctx: RepoContext, names: readonly string[]): Promise<number[]> {
  if (ctx.owner.type !== UserType.Organization) return [];
  const ids: number[] = [];
  for (const name of names) {
    const team = await findTeamByName(ctx.db, ctx.owner.id, name);
    if (!team) throw new Invalid(`team does not exist [org_id: ${ctx.owner.id}, team_id: 0, name: ${name}]`);
    ids.push(team.id);
  }
  return ids;
}

function assertPatternCompiles(pattern: string): void {
  try {
    compileTagPattern(pattern);
  } catch (error) {
    if (error instanceof InvalidTagPatternError) throw new Invalid(error.message);
    throw error;
  }
}

/** Lists a repository's tag protections. */
export async function listTagProtections(ctx: RepoContext): Promise<NamedTagProtection[]> {
  return withNames(ctx, await listProtectedTags(ctx.db, ctx.repo.id));
}

/** One protection; 404 when it belongs to another repository. */
export async function getTagProtection(ctx: RepoContext, id: number): Promise<NamedTagProtection> {
  const protection = await findProtectedTag(ctx.db, ctx.repo.id, id);
  if (!protection) throw new NotFound();
  const [named] = await withNames(ctx, [protection]);
  return named!;
}

/** Creates a protection (400 empty pattern or allowlists, 403 duplicate pattern, 422 unknown names). */
export async function createTagProtection(
  ctx: RepoContext,
  input: TagProtectionInput,
): Promise<NamedTagProtection> {
  const pattern = (input.name_pattern ?? '').trim();
  if (pattern === '') throw new BadRequest('name_pattern are empty');
  const userNames = input.whitelist_usernames ?? [];
  const teamNames = input.whitelist_teams ?? [];
  if (userNames.length === 0 && teamNames.length === 0) {
    throw new BadRequest('both whitelist_usernames and whitelist_teams are empty');
  }
  const existing = await listProtectedTags(ctx.db, ctx.repo.id);
  if (existing.some((p) => p.namePattern === pattern)) throw new Forbidden('Tag protection already exist');
  assertPatternCompiles(pattern);
  const userIds = await resolveUserIds(ctx, userNames);
  const teamIds = await resolveTeamIds(ctx, teamNames);
  const created = await insertProtectedTag(ctx.db, {
    repoId: ctx.repo.id,
    namePattern: pattern,
    userIds,
    teamIds,
    now: nowUnix(),
  });
  return getTagProtection(ctx, created.id);
}

/** Edits a protection: a present pattern replaces it, non-null lists replace the allowlists. */
export async function editTagProtection(
  ctx: RepoContext,
  id: number,
  input: TagProtectionInput,
): Promise<NamedTagProtection> {
  const current = await findProtectedTag(ctx.db, ctx.repo.id, id);
  if (!current) throw new NotFound();
  let pattern = current.namePattern;
  if (input.name_pattern !== undefined) {
    pattern = input.name_pattern.trim();
    if (pattern === '') throw new BadRequest('name_pattern are empty');
    assertPatternCompiles(pattern);
  }
  const userIds =
    input.whitelist_usernames != null
      ? await resolveUserIds(ctx, input.whitelist_usernames)
      : current.allowlistUserIds;
  const teamIds =
    input.whitelist_teams != null
      ? await resolveTeamIds(ctx, input.whitelist_teams)
      : current.allowlistTeamIds;
  await updateProtectedTag(ctx.db, id, { namePattern: pattern, userIds, teamIds, now: nowUnix() });
  return getTagProtection(ctx, id);
}

/** Deletes a protection; 404 when it belongs to another repository. */
export async function removeTagProtection(ctx: RepoContext, id: number): Promise<void> {
  const current = await findProtectedTag(ctx.db, ctx.repo.id, id);
  if (!current) throw new NotFound();
  await deleteProtectedTag(ctx.db, id);
}
