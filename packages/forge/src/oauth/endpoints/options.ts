/** What every endpoint module of the provider is registered with. */

import type { OAuthTokenVerifier } from '../../auth/oauth2.js';
import type { ServiceContext } from '../../services/context.js';
import type { SigningKey } from '../signing-key.js';

export interface OAuthEndpointOptions {
  ctx: ServiceContext;
  key: SigningKey;
  verifyAccessToken: OAuthTokenVerifier;
  /** The path of the app URL (`/`, or `/forge/` behind a prefix): the pages link below it. */
  appPath: string;
}

/** Route options of every provider endpoint: the API's auth chain (tokens, Basic as a user) must not run
 * here, since Basic carries client credentials. */
export const web = { config: { skipApiAuth: true } };
