/**
 * Table shapes: the OAuth 2.0 provider: applications, grants, authorization codes and signing keys. Part of
 * ../schema.ts.
 */

import type { Generated } from 'kysely';
import type { Flag, Id } from './columns.js';

export interface OAuth2ApplicationTable {
  id: Id;
  uid: number;
  name: string;
  /** A UUID, public. */
  client_id: string;
  /** hex sha256(salt + secret); the secret is shown once and never stored. */
  client_secret_hash: string;
  client_secret_salt: string;
  /** JSON array of the registered redirect URIs. */
  redirect_uris: string;
  confidential_client: Flag;
  skip_secondary_authorization: Flag;
  created_unix: number;
  updated_unix: number;
}

export interface OAuth2GrantTable {
  id: Id;
  user_id: number;
  application_id: number;
  /** Bumped for every token pair issued; a refresh token carries the value it was issued with. */
  counter: Generated<number>;
  /** Space-separated scopes the user consented to. */
  scope: string;
  nonce: string;
  created_unix: number;
  updated_unix: number;
}

export interface OAuth2AuthorizationCodeTable {
  id: Id;
  grant_id: number;
  /** hex sha256 of the code; the code itself is never stored. */
  code_hash: string;
  code_challenge: string;
  code_challenge_method: string;
  redirect_uri: string;
  valid_until: number;
}

export interface OAuth2SigningKeyTable {
  /** Always 1: one key per installation. */
  id: number;
  alg: string;
  kid: string;
  /** The private key as a JWK (JSON). */
  private_jwk: string;
  created_unix: number;
}
