/**
 * Repository-scoped tokens (Forgejo's shape, asked of Gitea in go-gitea/gitea#28649):
 *  - a token created with a list of repositories reaches only those; any other repository answers as if
 *    the token had no access to it: 404 when it is private (its existence stays hidden), 403 otherwise;
 *  - such a token carries no site-administrator powers (so no Sudo either) and still obeys its scopes
 *    and `public-only`;
 *  - the list is read with the token, from the database, on every request whose answer is not kept; a
 *    kept token (cache/read-view.ts) lives only while the database is unchanged, and kept answers are
 *    keyed by the list (cache/kept-answers.ts), so revoking the token or deleting a listed repository
 *    takes effect at the next request.
 */
import { Forbidden, NotFound } from '../errors.js';
import type { RepositoryRow } from '../store/schema.js';

/** The repositories a token is limited to (null: not limited). */
export type TokenRepositories = ReadonlySet<number> | null;

/** Throws unless a token limited to `repositories` may reach `repo`. */
export function assertTokenReaches(
  repositories: TokenRepositories,
  repo: Pick<RepositoryRow, 'id' | 'is_private'>,
): void {
  if (repositories === null || repositories.has(repo.id)) return;
  if (repo.is_private === 1) throw new NotFound();
  throw new Forbidden('token is not allowed to access this repository');
}
