/**
 * The tables of the OctoPrint app-key flow and of camera tokens, with their migration (portable SQL).
 * Nothing here is a secret a reader could use: requests keep hashes only, and camera tokens are derived
 * from the install secret (install-secret.ts), which is the one value to protect like the database itself.
 */

import type { Kysely, Migration } from 'kysely';

/** A key an app asked for through `plugin/appkeys/request`, until it is fetched, denied or expires. */
export interface AppKeyRequestsTable {
  /** Public id, shown to administrators and used in `/keys/requests/{id}/approve`. */
  id: string;
  /** SHA-256 of the polling token in the app's `Location`; the token itself is never stored. */
  poll_hash: string;
  app: string;
  user_label: string | null;
  machine_id: string;
  /** `pending`, `approved` or `denied`. */
  status: string;
  /** The key the app will get: its id, and the SHA-256 of its secret (the plaintext stays in memory). */
  key_id: string;
  key_hash: string;
  /** Set on approval: the name and scopes of the key created. */
  key_name: string | null;
  created_at: string;
  expires_at: string;
}

/** Per-machine generation of the camera token: revoking moves it on, so every old URL stops working. */
export interface CameraTokensTable {
  machine_id: string;
  generation: number;
}

/** Values the service generates once per install (the HMAC secret camera tokens and upnpUuids come from). */
export interface ServiceSecretsTable {
  name: string;
  value: string;
}

export interface AccessTables {
  app_key_requests: AppKeyRequestsTable;
  camera_tokens: CameraTokensTable;
  service_secrets: ServiceSecretsTable;
}

export const accessMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('app_key_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('poll_hash', 'text', (c) => c.notNull().unique())
      .addColumn('app', 'text', (c) => c.notNull())
      .addColumn('user_label', 'text')
      .addColumn('machine_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull())
      .addColumn('key_name', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('camera_tokens')
      .addColumn('machine_id', 'text', (c) => c.primaryKey())
      .addColumn('generation', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('service_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
};
