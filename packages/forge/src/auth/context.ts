import type { FastifyRequest } from 'fastify';
import type { ReadView } from '../cache/read-view.js';
import type { UserRow } from '../store/schema.js';
import type { TokenScope } from './scopes.js';

export type AuthMethod = 'token' | 'basic-token' | 'oauth2' | 'password' | 'signature' | 'anonymous';

/** Who is calling, set on every request by the auth chain before any route runs. */
export interface AuthInfo {
  /** The acting user (after Sudo), or null for anonymous callers. */
  user: UserRow | null;
  method: AuthMethod;
  /** The token's scope; null means full access (password, signature, anonymous). */
  scope: TokenScope | null;
  /** The token's stored (normalised) scope string, quoted in scope errors. */
  scopeText: string;
  /** The token is limited to public users, organizations and repositories. */
  publicOnly: boolean;
  /** Credentials came in an HTTP Basic header (password or token), as Gitea's `IsBasicAuth`. */
  isBasic: boolean;
  /**
   * A repository-scoped token's repositories (services/token-repositories.ts); null when the credential
   * is not limited to repositories. Part of every cache key that depends on the caller.
   */
  repositories: ReadonlySet<number> | null;
}

/** Resolves the user of an HTTP-signature request (public key or SSH certificate), or null when it fails. */
export type SignatureVerifier = (request: FastifyRequest) => Promise<UserRow | null>;

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthInfo;
  }
  interface FastifyContextConfig {
    /** The route is not part of the API (OAuth2 provider pages and endpoints): no API auth chain. */
    skipApiAuth?: boolean;
    /**
     * The path parameter naming the user the route is about (`username`): a personal access token is
     * then looked up together with that user, in one statement (see PathUser).
     */
    pathUser?: string;
    /** The route keeps answers (set by cache/kept-answers.ts): its requests read the cache stamp. */
    keepsAnswers?: boolean;
  }
  interface FastifyRequest {
    /** The user named by the route's `pathUser` parameter, when the route declares one. */
    pathUser?: PathUser;
    /** This request's use of the read cache (cache/read-view.ts), opened before authentication. */
    readView?: ReadView;
  }
}

/**
 * The user a route names in its path, read along with the caller's token so the route need not read it
 * again. It belongs to one request: `row` is what the database held when the token was checked.
 */
export interface PathUser {
  lowerName: string;
  /** Not read yet (no token, or no token matched the key), null when no user has that name. */
  row?: UserRow | null;
}

export const ANONYMOUS: AuthInfo = {
  user: null,
  method: 'anonymous',
  scope: null,
  scopeText: '',
  publicOnly: false,
  isBasic: false,
  repositories: null,
};

/** A stable text of a credential's repository limit, for cache keys ('' when it has none). */
export function repositoriesKey(auth: Pick<AuthInfo, 'repositories'>): string {
  const { repositories } = auth;
  return repositories === null ? '' : `repos:${[...repositories].sort((a, b) => a - b).join(',')}`;
}
