/**
 * API keys: create (the key text is returned once and never again), list, revoke, and authenticate a
 * presented key. The CLI and the HTTP API both go through here, on the same database. `authenticate`
 * answers from the key cache (key-cache.ts) only while the database's change stamp is the one the answer
 * was read under, so a key revoked by `machine-api keys revoke` while the server runs, or by
 * `DELETE /keys/{name}`, stops working with the next request.
 */

import { BadRequest, Conflict, NotFound } from '../errors.js';
import { KeyCache } from './key-cache.js';
import { generateKey, type NewKeySecret, parseKey, secretMatches } from './key-secret.js';
import type { KeyStore } from './key-store.js';
import { type Actor, parseScopes, type Scope } from './scopes.js';

/** Key names appear in URLs (`DELETE /keys/{name}`) and as job owners. */
export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface KeyInfo {
  name: string;
  scopes: Scope[];
  createdAt: string;
}

export interface CreatedKey extends KeyInfo {
  /** The key itself: shown to its creator once, stored only as a hash. */
  key: string;
}

export class KeyService {
  private readonly cache = new KeyCache();

  constructor(private readonly store: KeyStore) {}

  /** Creates a key. Throws `BadRequest` for a bad name or scope, `Conflict` when the name is taken. */
  async create(name: string, scopeNames: readonly string[]): Promise<CreatedKey> {
    if (!KEY_NAME.test(name)) {
      throw new BadRequest(`key name "${name}" must match ${KEY_NAME} (it is used in URLs and as job owner)`);
    }
    let scopes: Scope[];
    try {
      scopes = parseScopes(scopeNames);
    } catch (error) {
      throw new BadRequest((error as Error).message);
    }
    const secret = generateKey();
    const createdAt = new Date().toISOString();
    const inserted = await this.store.insert({
      name,
      keyId: secret.id,
      secretHash: secret.hash,
      scopes,
      createdAt,
    });
    if (!inserted) throw new Conflict(`a key named "${name}" already exists; revoke it first`);
    return { name, scopes, createdAt, key: secret.text };
  }

  /**
   * Stores a key whose secret was made earlier (the app-key flow hands the text to the app later), under
   * `baseName` or, when that is taken, `baseName-2`, `-3`…: an app asking twice gets two keys, each
   * revocable on its own.
   */
  async adopt(secret: NewKeySecret, baseName: string, scopes: readonly Scope[]): Promise<KeyInfo> {
    const createdAt = new Date().toISOString();
    for (let attempt = 1; attempt <= 100; attempt++) {
      const suffix = attempt === 1 ? '' : `-${attempt}`;
      const name = `${baseName.slice(0, 64 - suffix.length)}${suffix}`;
      const inserted = await this.store.insert({
        name,
        keyId: secret.id,
        secretHash: secret.hash,
        scopes: [...scopes],
        createdAt,
      });
      if (inserted) return { name, scopes: [...scopes], createdAt };
    }
    throw new Conflict(`too many keys are named after "${baseName}"; revoke some first`);
  }

  /** Removes the key with this id, if any (an approved app key that was never fetched). */
  async revokeKeyId(keyId: string): Promise<void> {
    await this.store.deleteByKeyId(keyId);
  }

  async list(): Promise<KeyInfo[]> {
    const rows = await this.store.list();
    return rows.map((row) => ({ name: row.name, scopes: parseScopes(row.scopes), createdAt: row.createdAt }));
  }

  /** Revokes a key by name; `NotFound` when there is none. Effective for the very next request. */
  async revoke(name: string): Promise<void> {
    if (!(await this.store.delete(name))) throw new NotFound(`no key named "${name}"`);
  }

  /** The actor of the key named `name` as it stands now (scopes included); null once it is revoked. */
  async actorNamed(name: string): Promise<Actor | null> {
    const row = await this.store.byName(name);
    return row ? { name: row.name, scopes: new Set(parseScopes(row.scopes)) } : null;
  }

  /** The actor a presented key stands for, or null when the key is malformed, unknown or revoked. */
  async authenticate(presented: string): Promise<Actor | null> {
    // The stamp first, before the row is read: see key-cache.ts.
    const stamp = this.store.changeStampNow() ?? (await this.store.readChangeStamp());
    if (stamp === undefined) return this.lookup(presented);
    const digest = KeyCache.digest(presented);
    const kept = this.cache.get(digest, stamp);
    if (kept) return kept.actor;
    const actor = await this.lookup(presented);
    this.cache.keep(digest, stamp, actor);
    return actor;
  }

  /** The key's row as committed now, its secret compared in constant time. */
  private async lookup(presented: string): Promise<Actor | null> {
    const parsed = parseKey(presented);
    if (!parsed) return null;
    const row = await this.store.byKeyId(parsed.id);
    if (!secretMatches(parsed.secret, row?.secretHash) || !row) return null;
    return { name: row.name, scopes: new Set(parseScopes(row.scopes)) };
  }
}
