import {
  type ColumnDefinitionBuilder,
  type CreateTableBuilder,
  type Kysely,
  type Migration,
  sql,
} from 'kysely';
import type { DialectName } from '../dialect.js';

/** Adds the int64 auto-increment primary key `id` in each dialect's own spelling. */
function withId<T extends string>(table: CreateTableBuilder<T, never>, dialect: DialectName) {
  return dialect === 'postgres'
    ? table.addColumn('id', 'bigserial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** A 0/1 boolean column (portable: SQLite has no boolean type). */
const flag = (name: string, value: 0 | 1 = 0) =>
  [name, 'integer', (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(value)] as const;
const text = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo('');
const int = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(0);

/**
 * The whole schema the forge needs (users, orgs, teams, repositories, tokens, keys, activity, releases).
 *
 * Long by design: the whole schema as one declarative list of tables and indexes, in dependency order.
 */
export function initialMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      let user = withId(db.schema.createTable('user'), dialect)
        .addColumn('type', 'integer', int)
        .addColumn('lower_name', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('full_name', 'text', text)
        .addColumn('email', 'text', text)
        .addColumn(...flag('keep_email_private'))
        .addColumn('passwd', 'text', text)
        .addColumn('passwd_hash_algo', 'text', text)
        .addColumn('salt', 'text', text)
        .addColumn('login_source', 'bigint', int)
        .addColumn('login_name', 'text', text)
        .addColumn('location', 'text', text)
        .addColumn('website', 'text', text)
        .addColumn('description', 'text', text)
        .addColumn('language', 'text', text)
        .addColumn('avatar', 'text', text);
      for (const name of [
        'is_admin',
        'is_active',
        'prohibit_login',
        'must_change_password',
        'is_restricted',
      ]) {
        user = user.addColumn(...flag(name, name === 'is_active' ? 1 : 0));
      }
      await user
        .addColumn('visibility', 'integer', int)
        .addColumn(...flag('keep_activity_private'))
        .addColumn(...flag('repo_admin_change_team_access'))
        .addColumn('num_followers', 'integer', int)
        .addColumn('num_following', 'integer', int)
        .addColumn('num_stars', 'integer', int)
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .addColumn('last_login_unix', 'bigint', int)
        .execute();
      // Search orders by name within a type; e-mail uniqueness is case-insensitive.
      await db.schema.createIndex('idx_user_type_name').on('user').columns(['type', 'name']).execute();
      await sql`CREATE INDEX idx_user_lower_email ON ${sql.table('user')} (lower(email))`.execute(db);
      await createUserSearchIndex(db, dialect);

      await withId(db.schema.createTable('org_user'), dialect)
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('uid', 'bigint', (c) => c.notNull())
        .addColumn(...flag('is_public'))
        .addUniqueConstraint('uq_org_user', ['org_id', 'uid'])
        .execute();
      await db.schema.createIndex('idx_org_user_uid').on('org_user').column('uid').execute();

      await withId(db.schema.createTable('team'), dialect)
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('lower_name', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', text)
        .addColumn('authorize', 'integer', int)
        .addColumn(...flag('includes_all_repositories'))
        .addColumn(...flag('can_create_org_repo'))
        .addUniqueConstraint('uq_team_org_name', ['org_id', 'lower_name'])
        .execute();

      await withId(db.schema.createTable('team_unit'), dialect)
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('team_id', 'bigint', (c) => c.notNull())
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('access_mode', 'integer', int)
        .addUniqueConstraint('uq_team_unit', ['team_id', 'type'])
        .execute();

      await withId(db.schema.createTable('team_user'), dialect)
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('team_id', 'bigint', (c) => c.notNull())
        .addColumn('uid', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('uq_team_user', ['team_id', 'uid'])
        .execute();
      await db.schema.createIndex('idx_team_user_uid').on('team_user').columns(['uid', 'org_id']).execute();

      await withId(db.schema.createTable('team_repo'), dialect)
        .addColumn('org_id', 'bigint', (c) => c.notNull())
        .addColumn('team_id', 'bigint', (c) => c.notNull())
        .addColumn('repo_id', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('uq_team_repo', ['team_id', 'repo_id'])
        .execute();
      await db.schema.createIndex('idx_team_repo_repo').on('team_repo').column('repo_id').execute();

      await withId(db.schema.createTable('repository'), dialect)
        .addColumn('owner_id', 'bigint', (c) => c.notNull())
        .addColumn('owner_name', 'text', (c) => c.notNull())
        .addColumn('lower_name', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', text)
        .addColumn('website', 'text', text)
        .addColumn(...flag('is_private'))
        .addColumn(...flag('is_empty', 1))
        .addColumn(...flag('is_archived'))
        .addColumn('default_branch', 'text', text)
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('uq_repository_owner_name', ['owner_id', 'lower_name'])
        .execute();

      await withId(db.schema.createTable('collaboration'), dialect)
        .addColumn('repo_id', 'bigint', (c) => c.notNull())
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('mode', 'integer', (c) => c.notNull().defaultTo(2))
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('uq_collaboration', ['repo_id', 'user_id'])
        .execute();
      await db.schema.createIndex('idx_collaboration_user').on('collaboration').column('user_id').execute();

      await withId(db.schema.createTable('access_token'), dialect)
        .addColumn('uid', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull())
        .addColumn('token_salt', 'text', (c) => c.notNull())
        .addColumn('token_last_eight', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', text)
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('uq_access_token_uid_name', ['uid', 'name'])
        .execute();
      await db.schema
        .createIndex('idx_access_token_last_eight')
        .on('access_token')
        .column('token_last_eight')
        .execute();

      await withId(db.schema.createTable('public_key'), dialect)
        .addColumn('owner_id', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', text)
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('mode', 'integer', (c) => c.notNull().defaultTo(2))
        .addColumn('type', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('idx_public_key_fingerprint')
        .on('public_key')
        .column('fingerprint')
        .execute();
      await db.schema.createIndex('idx_public_key_owner').on('public_key').column('owner_id').execute();

      await withId(db.schema.createTable('action'), dialect)
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('op_type', 'integer', (c) => c.notNull())
        .addColumn('act_user_id', 'bigint', (c) => c.notNull())
        .addColumn('repo_id', 'bigint', int)
        .addColumn('comment_id', 'bigint', int)
        .addColumn('ref_name', 'text', text)
        .addColumn(...flag('is_private'))
        .addColumn(...flag('is_deleted'))
        .addColumn('content', 'text', text)
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .execute();
      // Feeds read a receiver's rows newest first; the heatmap reads an actor's own rows by time.
      await db.schema
        .createIndex('idx_action_user_created')
        .on('action')
        .columns(['user_id', 'created_unix'])
        .execute();
      await db.schema
        .createIndex('idx_action_act_user_created')
        .on('action')
        .columns(['act_user_id', 'created_unix'])
        .execute();
      await db.schema.createIndex('idx_action_repo').on('action').column('repo_id').execute();

      await withId(db.schema.createTable('release'), dialect)
        .addColumn('repo_id', 'bigint', (c) => c.notNull())
        .addColumn('publisher_id', 'bigint', (c) => c.notNull())
        .addColumn('tag_name', 'text', (c) => c.notNull())
        .addColumn('lower_tag_name', 'text', (c) => c.notNull())
        .addColumn('target', 'text', text)
        .addColumn('title', 'text', text)
        .addColumn('sha1', 'text', text)
        .addColumn('num_commits', 'bigint', int)
        .addColumn('note', 'text', text)
        .addColumn(...flag('is_draft'))
        .addColumn(...flag('is_prerelease'))
        .addColumn(...flag('is_tag'))
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('uq_release_repo_tag', ['repo_id', 'lower_tag_name'])
        .execute();
      await db.schema
        .createIndex('idx_release_repo_created')
        .on('release')
        .columns(['repo_id', 'created_unix'])
        .execute();

      await withId(db.schema.createTable('protected_tag'), dialect)
        .addColumn('repo_id', 'bigint', (c) => c.notNull())
        .addColumn('name_pattern', 'text', (c) => c.notNull())
        .addColumn('allowlist_user_ids', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('allowlist_team_ids', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('idx_protected_tag_repo').on('protected_tag').column('repo_id').execute();
    },
  };
}

/**
 * Substring search over login, full name and e-mail must not scan the user table. On SQLite an FTS5
 * trigram index (kept in step by triggers) finds candidate rows for keywords of three or more
 * characters; the exact, case-insensitive LIKE conditions then run on those candidates only.
 * PostgreSQL gets its trigram (pg_trgm) indexes in a migration of its own.
 */
async function createUserSearchIndex(db: Kysely<unknown>, dialect: DialectName) {
  if (dialect !== 'sqlite') return;
  await sql`CREATE VIRTUAL TABLE user_search USING fts5(lower_name, full_name, email, tokenize='trigram')`.execute(
    db,
  );
  await sql`CREATE TRIGGER user_search_insert AFTER INSERT ON "user" BEGIN
      INSERT INTO user_search(rowid, lower_name, full_name, email) VALUES (new.id, new.lower_name, new.full_name, new.email);
    END`.execute(db);
  await sql`CREATE TRIGGER user_search_update AFTER UPDATE OF lower_name, full_name, email ON "user" BEGIN
      UPDATE user_search SET lower_name = new.lower_name, full_name = new.full_name, email = new.email
        WHERE rowid = new.id;
    END`.execute(db);
  await sql`CREATE TRIGGER user_search_delete AFTER DELETE ON "user" BEGIN
      DELETE FROM user_search WHERE rowid = old.id;
    END`.execute(db);
}
