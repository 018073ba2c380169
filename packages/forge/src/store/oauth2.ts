import type { Insertable, Kysely, Updateable } from 'kysely';
import type {
  Database,
  OAuth2ApplicationRow,
  OAuth2ApplicationTable,
  OAuth2AuthorizationCodeTable,
  OAuth2GrantRow,
} from './schema.js';

type Db = Kysely<Database>;

// --- applications ---

/** Inserts an application and returns its row. */
export function insertApplication(
  db: Db,
  values: Insertable<OAuth2ApplicationTable>,
): Promise<OAuth2ApplicationRow> {
  return db.insertInto('oauth2_application').values(values).returningAll().executeTakeFirstOrThrow();
}

/** One page of a user's applications, oldest first (Gitea's order), and their total. */
export async function listApplications(
  db: Db,
  uid: number,
  page: { offset: number; limit: number },
): Promise<{ rows: OAuth2ApplicationRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('oauth2_application')
      .selectAll()
      .where('uid', '=', uid)
      .orderBy('id', 'asc')
      .offset(page.offset)
      .limit(page.limit)
      .execute(),
    db
      .selectFrom('oauth2_application')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('uid', '=', uid)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** The application with this id, or undefined. */
export function findApplicationById(db: Db, id: number): Promise<OAuth2ApplicationRow | undefined> {
  return db.selectFrom('oauth2_application').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The application with this client id, or undefined. */
export function findApplicationByClientId(
  db: Db,
  clientId: string,
): Promise<OAuth2ApplicationRow | undefined> {
  return db.selectFrom('oauth2_application').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

/** Updates an application of this owner; undefined when it is not theirs or does not exist. */
export function updateApplication(
  db: Db,
  id: number,
  uid: number,
  values: Updateable<OAuth2ApplicationTable>,
): Promise<OAuth2ApplicationRow | undefined> {
  return db
    .updateTable('oauth2_application')
    .set(values)
    .where('id', '=', id)
    .where('uid', '=', uid)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Deletes an application of this owner with its grants and their codes, in one transaction: every token
 * issued to it names a grant that no longer exists, so it stops working at once.
 */
export function deleteApplication(db: Db, id: number, uid: number): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const deleted = await tx
      .deleteFrom('oauth2_application')
      .where('id', '=', id)
      .where('uid', '=', uid)
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) return false;
    const grants = tx.selectFrom('oauth2_grant').select('id').where('application_id', '=', id);
    await tx.deleteFrom('oauth2_authorization_code').where('grant_id', 'in', grants).execute();
    await tx.deleteFrom('oauth2_grant').where('application_id', '=', id).execute();
    return true;
  });
}

// --- grants ---

/** The grant of a user for an application, or undefined. */
export function findGrant(
  db: Db,
  userId: number,
  applicationId: number,
): Promise<OAuth2GrantRow | undefined> {
  return db
    .selectFrom('oauth2_grant')
    .selectAll()
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .executeTakeFirst();
}

/**
 * Creates or updates the grant of a user for an application with the scope and nonce just consented to.
 * Two concurrent consents settle on one row (the unique pair).
 */
export async function upsertGrant(
  db: Db,
  values: { user_id: number; application_id: number; scope: string; nonce: string; now: number },
): Promise<OAuth2GrantRow> {
  const { now, ...rest } = values;
  return db
    .insertInto('oauth2_grant')
    .values({ ...rest, created_unix: now, updated_unix: now })
    .onConflict((oc) =>
      oc.columns(['user_id', 'application_id']).doUpdateSet({
        scope: rest.scope,
        nonce: rest.nonce,
        updated_unix: now,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A grant with the client id of its application: what a token names. Undefined once either is gone. */
export function findGrantWithClient(
  db: Db,
  grantId: number,
): Promise<(OAuth2GrantRow & { client_id: string }) | undefined> {
  return db
    .selectFrom('oauth2_grant')
    .innerJoin('oauth2_application', 'oauth2_application.id', 'oauth2_grant.application_id')
    .selectAll('oauth2_grant')
    .select('oauth2_application.client_id')
    .where('oauth2_grant.id', '=', grantId)
    .executeTakeFirst();
}

/**
 * Bumps a grant's counter and returns the new value. With `expected`, only when the counter still has
 * that value (the refresh token being redeemed is the latest one): a concurrent or replayed redemption
 * gets undefined.
 */
export async function bumpGrantCounter(
  db: Db,
  grantId: number,
  now: number,
  expected?: number,
): Promise<number | undefined> {
  let query = db
    .updateTable('oauth2_grant')
    .set((eb) => ({ counter: eb('counter', '+', 1), updated_unix: now }))
    .where('id', '=', grantId);
  if (expected !== undefined) query = query.where('counter', '=', expected);
  const row = await query.returning('counter').executeTakeFirst();
  return row ? Number(row.counter) : undefined;
}

/** Deletes a grant and its codes (revocation). */
export async function deleteGrant(db: Db, grantId: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('oauth2_authorization_code').where('grant_id', '=', grantId).execute();
    await tx.deleteFrom('oauth2_grant').where('id', '=', grantId).execute();
  });
}

// --- authorization codes ---

/** Stores an authorization code (its hash). */
export async function insertAuthorizationCode(
  db: Db,
  values: Insertable<OAuth2AuthorizationCodeTable>,
): Promise<void> {
  await db.insertInto('oauth2_authorization_code').values(values).execute();
}

/** An authorization code with its grant and the grant's client id, or undefined. */
export function findAuthorizationCode(db: Db, codeHash: string) {
  return db
    .selectFrom('oauth2_authorization_code')
    .innerJoin('oauth2_grant', 'oauth2_grant.id', 'oauth2_authorization_code.grant_id')
    .innerJoin('oauth2_application', 'oauth2_application.id', 'oauth2_grant.application_id')
    .select([
      'oauth2_authorization_code.grant_id',
      'oauth2_authorization_code.code_challenge',
      'oauth2_authorization_code.code_challenge_method',
      'oauth2_authorization_code.redirect_uri',
      'oauth2_authorization_code.valid_until',
      'oauth2_grant.user_id',
      'oauth2_grant.scope',
      'oauth2_application.client_id',
    ])
    .where('oauth2_authorization_code.code_hash', '=', codeHash)
    .executeTakeFirst();
}

/** Deletes a code; true only for the one caller that deleted it (codes are single use across processes). */
export async function consumeAuthorizationCode(db: Db, codeHash: string): Promise<boolean> {
  const result = await db
    .deleteFrom('oauth2_authorization_code')
    .where('code_hash', '=', codeHash)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

// --- signing key ---

/** The installation's signing key row, or undefined before the first start. */
export function findSigningKey(db: Db) {
  return db.selectFrom('oauth2_signing_key').selectAll().where('id', '=', 1).executeTakeFirst();
}

/** Stores the signing key unless another process stored one first. */
export async function insertSigningKeyIfAbsent(
  db: Db,
  values: { alg: string; kid: string; private_jwk: string; created_unix: number },
): Promise<void> {
  await db
    .insertInto('oauth2_signing_key')
    .values({ id: 1, ...values })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

// --- sign-in sessions of the provider's pages ---

/** Stores a session (its hash). */
export async function insertSession(
  db: Db,
  values: { id_hash: string; uid: number; created_unix: number; expires_unix: number },
): Promise<void> {
  await db.insertInto('web_session').values(values).execute();
}

/** The user id of a live session, or undefined. */
export async function findSessionUser(db: Db, idHash: string, now: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('web_session')
    .select('uid')
    .where('id_hash', '=', idHash)
    .where('expires_unix', '>', now)
    .executeTakeFirst();
  return row ? Number(row.uid) : undefined;
}

/** Removes expired sessions (called on sign-in, so the table stays small without a timer). */
export async function deleteExpiredSessions(db: Db, now: number): Promise<void> {
  await db.deleteFrom('web_session').where('expires_unix', '<=', now).execute();
}

/**
 * The user a grant belongs to and the grant's scope, in one query, provided its application still exists:
 * the per-request lookup of an OAuth2 access token, so a deleted grant or application is noticed at once.
 */
export function findGrantUser(db: Db, grantId: number) {
  return db
    .selectFrom('oauth2_grant')
    .innerJoin('oauth2_application', 'oauth2_application.id', 'oauth2_grant.application_id')
    .innerJoin('user', 'user.id', 'oauth2_grant.user_id')
    .selectAll('user')
    .select(['oauth2_grant.scope as grant_scope', 'oauth2_application.client_id as grant_client_id'])
    .where('oauth2_grant.id', '=', grantId)
    .executeTakeFirst();
}

/** Gitea's OIDC `groups`: the user's organizations and `org:team` for each team they are in. */
export async function listUserGroups(db: Db, uid: number, publicOnly: boolean): Promise<string[]> {
  let orgs = db
    .selectFrom('org_user')
    .innerJoin('user', 'user.id', 'org_user.org_id')
    .select(['user.id', 'user.name'])
    .where('org_user.uid', '=', uid);
  if (publicOnly) orgs = orgs.where('user.visibility', '=', 0);
  const [orgRows, teamRows] = await Promise.all([
    orgs.orderBy('user.lower_name').execute(),
    db
      .selectFrom('team_user')
      .innerJoin('team', 'team.id', 'team_user.team_id')
      .select(['team_user.org_id', 'team.lower_name'])
      .where('team_user.uid', '=', uid)
      .orderBy('team.lower_name')
      .execute(),
  ]);
  return orgRows.flatMap((org) => [
    org.name,
    ...teamRows.filter((team) => team.org_id === org.id).map((team) => `${org.name}:${team.lower_name}`),
  ]);
}
