import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely, Migration } from 'kysely';
import type { DialectName } from '../database.js';

function withId<T extends string>(table: CreateTableBuilder<T, never>, dialect: DialectName) {
  return dialect === 'postgres'
    ? table.addColumn('id', 'bigserial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
const text = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo('');
const int = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(0);

/**
 * The OAuth2 provider's state, as Gitea's models/auth/oauth2.go: applications (client secret kept only as
 * a hash), grants (one per user and application, the scope consented to and the refresh-token counter),
 * authorization codes (hashed, single use), the JWT signing key (one row, so every process on one
 * database signs and verifies with the same key) and the sign-in sessions of the consent pages.
 */
export function oauth2Migration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await withId(db.schema.createTable('oauth2_application'), dialect)
        .addColumn('uid', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull().unique())
        .addColumn('client_secret_hash', 'text', text)
        .addColumn('client_secret_salt', 'text', text)
        .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('confidential_client', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('skip_secondary_authorization', 'integer', int)
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('idx_oauth2_application_uid')
        .on('oauth2_application')
        .column('uid')
        .execute();

      await withId(db.schema.createTable('oauth2_grant'), dialect)
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('application_id', 'bigint', (c) => c.notNull())
        .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(1))
        .addColumn('scope', 'text', text)
        .addColumn('nonce', 'text', text)
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('uq_oauth2_grant_user_app', ['user_id', 'application_id'])
        .execute();
      await db.schema
        .createIndex('idx_oauth2_grant_application')
        .on('oauth2_grant')
        .column('application_id')
        .execute();

      await withId(db.schema.createTable('oauth2_authorization_code'), dialect)
        .addColumn('grant_id', 'bigint', (c) => c.notNull())
        .addColumn('code_hash', 'text', (c) => c.notNull().unique())
        .addColumn('code_challenge', 'text', text)
        .addColumn('code_challenge_method', 'text', text)
        .addColumn('redirect_uri', 'text', text)
        .addColumn('valid_until', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('idx_oauth2_authorization_code_grant')
        .on('oauth2_authorization_code')
        .column('grant_id')
        .execute();

      await db.schema
        .createTable('oauth2_signing_key')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('alg', 'text', (c) => c.notNull())
        .addColumn('kid', 'text', (c) => c.notNull())
        .addColumn('private_jwk', 'text', (c) => c.notNull())
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('web_session')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('uid', 'bigint', (c) => c.notNull())
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('expires_unix', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
