/**
 * The install secret: 256 random bits made once per database (so every process of one farm shares it)
 * and kept in `service_secrets`. Values that must be stable across restarts but unguessable are derived
 * from it with HMAC-SHA256: each machine's OctoPrint `upnpUuid` (the device id Home Assistant keys on)
 * and its camera tokens (camera-tokens.ts).
 */

import { createHmac, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { JobDatabase } from '../jobs/database.js';

export class InstallSecret {
  private constructor(private readonly secret: Buffer) {}

  /** Reads the secret, creating it on first use; two processes starting at once agree on one. */
  static async open(db: Kysely<JobDatabase>): Promise<InstallSecret> {
    await db
      .insertInto('service_secrets')
      .values({ name: 'install', value: randomBytes(32).toString('base64url') })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    const row = await db
      .selectFrom('service_secrets')
      .select('value')
      .where('name', '=', 'install')
      .executeTakeFirstOrThrow();
    return new InstallSecret(Buffer.from(row.value, 'base64url'));
  }

  /** HMAC-SHA256 of `purpose` under the secret. */
  derive(purpose: string): Buffer {
    return createHmac('sha256', this.secret).update(purpose, 'utf8').digest();
  }

  /**
   * A UUID that stands for `name` on this install, the same on every start: RFC 9562 version 8 (the
   * "custom" version) over the first 128 bits of an HMAC, so it says nothing about the secret.
   */
  uuidFor(name: string): string {
    const bytes = this.derive(`uuid:${name}`).subarray(0, 16);
    bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
    bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
