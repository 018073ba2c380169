import type { OAuth2ApplicationRow } from '../store/schema.js';
import type { OAuth2Application } from '../structs/oauth2.js';
import { rfc3339 } from './time.js';

/** Gitea's `convert.ToOAuth2Application`; the plain secret only right after it was generated. */
export function toOAuth2Application(row: OAuth2ApplicationRow, plainSecret = ''): OAuth2Application {
  return {
    id: row.id,
    name: row.name,
    client_id: row.client_id,
    client_secret: plainSecret,
    confidential_client: row.confidential_client === 1,
    skip_secondary_authorization: row.skip_secondary_authorization === 1,
    redirect_uris: redirectUrisOf(row),
    created: rfc3339(row.created_unix),
  };
}

/** The registered redirect URIs of an application row. */
export function redirectUrisOf(row: Pick<OAuth2ApplicationRow, 'redirect_uris'>): string[] {
  return JSON.parse(row.redirect_uris) as string[];
}
