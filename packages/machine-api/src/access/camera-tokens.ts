/**
 * Camera tokens: Home Assistant (and other OctoPrint clients) fetch the webcam URLs from `api/settings`
 * without the API key, so those URLs carry a token of their own. A token is per machine, read-only (it
 * opens that machine's snapshot and stream, nothing else) and revocable: it is the HMAC of the machine id
 * and a generation number under the install secret, so nothing secret is stored per token, the URL stays
 * the same across restarts, and revoking moves the generation on, which ends every URL handed out before.
 * The generation is read from the database on every check, so a revocation counts on every process.
 */

import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { JobDatabase } from '../jobs/database.js';
import type { InstallSecret } from './install-secret.js';

/** The shape of a token (43 base64url characters, 256 bits), checked before anything is computed. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export class CameraTokens {
  constructor(
    private readonly db: Kysely<JobDatabase>,
    private readonly secret: InstallSecret,
  ) {}

  /** The current token of a machine's camera. */
  async tokenFor(machineId: string): Promise<string> {
    return this.compute(machineId, await this.generation(machineId));
  }

  /** Whether `token` is the current token of `machineId`'s camera (constant-time compare). */
  async verify(machineId: string, token: string): Promise<boolean> {
    if (!TOKEN.test(token)) return false;
    const expected = Buffer.from(await this.tokenFor(machineId), 'utf8');
    const presented = Buffer.from(token, 'utf8');
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }

  /** Ends every camera URL of the machine handed out so far; the next `api/settings` shows a new one. */
  async revoke(machineId: string): Promise<void> {
    await this.db
      .insertInto('camera_tokens')
      .values({ machine_id: machineId, generation: 1 })
      .onConflict((conflict) =>
        conflict
          .column('machine_id')
          .doUpdateSet((eb) => ({ generation: eb('camera_tokens.generation', '+', 1) })),
      )
      .execute();
  }

  private async generation(machineId: string): Promise<number> {
    const row = await this.db
      .selectFrom('camera_tokens')
      .select('generation')
      .where('machine_id', '=', machineId)
      .executeTakeFirst();
    return row?.generation ?? 0;
  }

  private compute(machineId: string, generation: number): string {
    return this.secret.derive(`camera:${generation}:${machineId}`).toString('base64url');
  }
}
