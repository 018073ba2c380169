import type { FastifyRequest } from 'fastify';
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
  }
}

export const ANONYMOUS: AuthInfo = {
  user: null,
  method: 'anonymous',
  scope: null,
  scopeText: '',
  publicOnly: false,
  isBasic: false,
};
