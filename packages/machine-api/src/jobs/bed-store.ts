/**
 * Bed clearance records: the only module that reads or writes the machine_beds table. A machine is listed
 * while something a print left on its bed waits for a confirmation that it is clear (POST
 * /machines/{id}/clear, or the machine's clearing mode); it survives restarts, so a restarted service
 * still refuses to print onto a full bed.
 */

import type { Kysely } from 'kysely';
import type { JobDatabase } from './database.js';

/** A machine whose bed waits for a confirmation that it is clear. */
export interface AwaitingBed {
  machineId: string;
  since: string;
  jobId: string | null;
}

export class BedStore {
  constructor(private readonly db: Kysely<JobDatabase>) {}

  /** Machines whose bed waits for a confirmation that it is clear. */
  async awaitingBeds(): Promise<AwaitingBed[]> {
    const rows = await this.db.selectFrom('machine_beds').selectAll().execute();
    return rows.map((row) => ({
      machineId: row.machine_id,
      since: row.awaiting_clear_since,
      jobId: row.job_id,
    }));
  }

  /** Records that a print left something on the machine's bed (keeps the earliest such time). */
  async markBedAwaiting(machineId: string, since: string, jobId: string | null): Promise<void> {
    await this.db
      .insertInto('machine_beds')
      .values({ machine_id: machineId, awaiting_clear_since: since, job_id: jobId })
      .onConflict((conflict) => conflict.column('machine_id').doNothing())
      .execute();
  }

  /** Records that the machine's bed was confirmed clear. */
  async markBedClear(machineId: string): Promise<void> {
    await this.db.deleteFrom('machine_beds').where('machine_id', '=', machineId).execute();
  }
}
