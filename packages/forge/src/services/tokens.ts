import type { PathUser } from '../auth/context.js';
import { TokenScope } from '../auth/scopes.js';
import { generateToken, tokenMatches } from '../auth/secrets.js';
import { NO_READ_CACHE, type ReadView } from '../cache/read-view.js';
import { BadRequest, Invalid, NotFound } from '../errors.js';
import { findRepositoryByName } from '../store/repositories.js';
import type { AccessTokenRow, UserRow } from '../store/schema.js';
import {
  deleteToken,
  findTokenCredentialsAndUser,
  findTokenCredentialsByLastEight,
  findUserTokens,
  insertTokenWithRepositories,
  listTokens,
  type TokenCandidate,
  tokenRepositoryIds,
  tokensRepositories,
} from '../store/tokens.js';
import { findUserByLowerName } from '../store/users.js';
import { nowUnix, type ServiceContext } from './context.js';
import { getRepoPermission } from './permissions.js';
import { flushTokenUses, noteTokenUse } from './token-use.js';

/** Creates a personal access token; the plain token is returned once and never stored. */
export async function createAccessToken(
  ctx: ServiceContext,
  owner: UserRow,
  input: { name: string; scopes?: string[]; repositories?: Array<{ owner: string; name: string }> },
): Promise<{ row: AccessTokenRow; token: string }> {
  if ((await findUserTokens(ctx.db, owner.id, { name: input.name })).length > 0) {
    throw new BadRequest('access token name has been used already');
  }
  let scope: string;
  try {
    scope = TokenScope.parse((input.scopes ?? []).join(',')).normalize();
  } catch (error) {
    throw new BadRequest(`invalid access token scope provided: ${(error as Error).message}`);
  }
  if (scope === '') throw new BadRequest('access token must have a scope');
  const repoIds = input.repositories ? await tokenRepositoryIdsFor(ctx, owner, input.repositories) : null;
  const secret = generateToken();
  const now = nowUnix();
  const row = await insertTokenWithRepositories(ctx.db, repoIds, {
    uid: owner.id,
    name: input.name,
    token_hash: secret.hash,
    token_salt: secret.salt,
    token_last_eight: secret.lastEight,
    scope,
    repo_scoped: repoIds ? 1 : 0,
    created_unix: now,
    updated_unix: now,
  });
  if (!row) throw new BadRequest('access token name has been used already');
  return { row, token: secret.token };
}

/**
 * The ids of the repositories a new repository-scoped token lists; each must be one its owner can see
 * (400 otherwise, the same answer for a hidden one as for a missing one), and the list not empty.
 */
async function tokenRepositoryIdsFor(
  ctx: ServiceContext,
  owner: UserRow,
  repositories: ReadonlyArray<{ owner: string; name: string }>,
): Promise<number[]> {
  if (repositories.length === 0)
    throw new BadRequest('a repository-scoped token needs at least one repository');
  const ids = new Set<number>();
  for (const wanted of repositories) {
    const found = await findRepositoryByName(ctx.db, wanted.owner, wanted.name);
    const visible =
      found && (await getRepoPermission(ctx.db, found.repo, found.owner, owner)).hasAnyUnitAccess();
    if (!found || !visible) {
      throw new BadRequest(`repository does not exist [owner: ${wanted.owner}, name: ${wanted.name}]`);
    }
    ids.add(found.repo.id);
  }
  return [...ids];
}

/** The repositories of the repository-scoped tokens among `rows`, by token id. */
export async function repositoriesOfTokens(
  ctx: ServiceContext,
  rows: readonly AccessTokenRow[],
): Promise<Map<number, Array<{ id: number; name: string; owner: string }>>> {
  const scoped = rows.filter((row) => row.repo_scoped === 1).map((row) => row.id);
  const byToken = new Map<number, Array<{ id: number; name: string; owner: string }>>();
  for (const id of scoped) byToken.set(id, []);
  for (const repo of await tokensRepositories(ctx.db, scoped)) {
    byToken.get(repo.token_id)?.push({ id: repo.id, name: repo.name, owner: repo.owner_name });
  }
  return byToken;
}

/** One page of a user's tokens. */
export async function listAccessTokens(
  ctx: ServiceContext,
  owner: UserRow,
  page: { offset: number; limit: number },
) {
  // The list shows each token's last use: this process's pending ones are written first.
  await flushTokenUses(ctx);
  return listTokens(ctx.db, owner.id, page);
}

/** Deletes a token given its id or, when the path is not a number, its name (Gitea's rules). */
export async function deleteAccessToken(
  ctx: ServiceContext,
  owner: UserRow,
  idOrName: string,
): Promise<void> {
  const asNumber = /^-?\d+$/.test(idOrName) ? Number(idOrName) : 0;
  const matches =
    asNumber !== 0
      ? await findUserTokens(ctx.db, owner.id, { id: asNumber })
      : await findUserTokens(ctx.db, owner.id, { name: idOrName });
  if (matches.length === 0) throw new NotFound();
  if (matches.length > 1) throw new Invalid(`multiple matches for token name '${idOrName}'`);
  await deleteToken(ctx.db, owner.id, matches[0]!.id);
}

const TOKEN_SHAPE = /^[0-9a-f]{40}$/;

/** A presented token that matched: its credential, owner and, when repository-scoped, its repositories. */
export interface ResolvedToken extends TokenCandidate {
  repositories?: ReadonlySet<number>;
}

/**
 * The token and its owner for a presented token, or null when it is unknown or malformed. With
 * `pathUser`, that user is read too and stored in it: in the same statement as the token, or, when the
 * token's hit was kept, from the kept user rows (a statement of its own on a miss).
 * Hits are kept under the request's account stamp (cache/read-view.ts): a revoked token, a deleted or
 * changed user or a changed scope moves it, so the next use reads them again.
 */
export async function resolveAccessToken(
  ctx: ServiceContext,
  token: string,
  pathUser?: PathUser,
  view: ReadView = NO_READ_CACHE,
): Promise<ResolvedToken | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const kept = view.token<ResolvedToken>(token);
  let hit = kept.hit;
  if (!hit) {
    let candidates: TokenCandidate[];
    if (pathUser) {
      const found = await findTokenCredentialsAndUser(ctx.db, token.slice(-8), pathUser.lowerName);
      candidates = found.candidates;
      if (found.named !== undefined) pathUser.row = found.named;
      if (found.named) view.user<UserRow>(pathUser.lowerName).keep(found.named);
    } else {
      candidates = await findTokenCredentialsByLastEight(ctx.db, token.slice(-8));
    }
    const match = candidates.find((candidate) => tokenMatches(token, candidate.token));
    if (!match) return null;
    // A repository-scoped token's list is read with it and kept with it (the same freshness).
    hit =
      match.token.repo_scoped === 1
        ? { ...match, repositories: new Set(await tokenRepositoryIds(ctx.db, match.token.id)) }
        : match;
    kept.keep(hit);
  } else if (pathUser) {
    pathUser.row = await keptUserNamed(ctx, view, pathUser.lowerName);
  }
  // Gitea bumps updated_unix on use; noted here and written within a minute (services/token-use.ts).
  noteTokenUse(ctx, hit.token.id, hit.token.updated_unix, nowUnix());
  return hit;
}

/** The user named `lowerName` (null when there is none), from the view's kept rows when it can be. */
async function keptUserNamed(
  ctx: ServiceContext,
  view: ReadView,
  lowerName: string,
): Promise<UserRow | null> {
  const kept = view.user<UserRow>(lowerName);
  if (kept.hit) return kept.hit;
  const row = await findUserByLowerName(ctx.db, lowerName);
  if (row) kept.keep(row);
  return row ?? null;
}
