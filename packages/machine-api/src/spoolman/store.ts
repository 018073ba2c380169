/** The Spoolman rows of the jobs database (tables.ts): spool assignments and the outbox of use reports. */

import type { Kysely } from 'kysely';
import type { JobDatabase } from '../jobs/database.js';
import type { Spool } from './client.js';

export interface Assignment {
  machineId: string;
  /** `WHOLE_MACHINE` or an AMS slot. */
  slot: number;
  spoolId: number;
  assignedAt: string;
  /** What Spoolman said of the spool when last read. */
  spool: Spool;
}

export interface Report {
  seq: number;
  spoolId: number;
  machineId: string;
  jobId: string;
  useLength: number;
  state: 'pending' | 'sending' | 'sent' | 'dropped';
  beforeLength: number | null;
  attempts: number;
}

/** States of a report Spoolman has not (knowingly) applied yet. */
const UNSENT = ['pending', 'sending'];

export class SpoolStore {
  constructor(private readonly db: Kysely<JobDatabase>) {}

  async assignments(): Promise<Assignment[]> {
    const rows = await this.db
      .selectFrom('machine_spools')
      .selectAll()
      .orderBy('machine_id')
      .orderBy('slot')
      .execute();
    return rows.map((row) => ({
      machineId: row.machine_id,
      slot: row.slot,
      spoolId: row.spool_id,
      assignedAt: row.assigned_at,
      spool: JSON.parse(row.spool) as Spool,
    }));
  }

  async assign(assignment: Assignment): Promise<void> {
    const row = {
      machine_id: assignment.machineId,
      slot: assignment.slot,
      spool_id: assignment.spoolId,
      assigned_at: assignment.assignedAt,
      spool: JSON.stringify(assignment.spool),
    };
    await this.db
      .insertInto('machine_spools')
      .values(row)
      .onConflict((conflict) =>
        conflict.columns(['machine_id', 'slot']).doUpdateSet({
          spool_id: row.spool_id,
          assigned_at: row.assigned_at,
          spool: row.spool,
        }),
      )
      .execute();
  }

  async unassign(machineId: string, slot: number): Promise<void> {
    await this.db
      .deleteFrom('machine_spools')
      .where('machine_id', '=', machineId)
      .where('slot', '=', slot)
      .execute();
  }

  /** Forgets a spool wherever it is assigned (Spoolman no longer has it). */
  async unassignSpool(spoolId: number): Promise<void> {
    await this.db.deleteFrom('machine_spools').where('spool_id', '=', spoolId).execute();
  }

  /** Keeps what Spoolman said of a spool, for when it cannot be asked. */
  async rememberSpool(spool: Spool): Promise<void> {
    await this.db
      .updateTable('machine_spools')
      .set({ spool: JSON.stringify(spool) })
      .where('spool_id', '=', spool.id)
      .execute();
  }

  async addReport(report: {
    spoolId: number;
    machineId: string;
    jobId: string;
    useLength: number;
    gramsPerMetre: number;
  }): Promise<void> {
    await this.db
      .insertInto('spool_reports')
      .values({
        spool_id: report.spoolId,
        machine_id: report.machineId,
        job_id: report.jobId,
        use_length: report.useLength,
        grams_per_metre: report.gramsPerMetre,
        state: 'pending',
        before_length: null,
        attempts: 0,
        error: null,
        created_at: new Date().toISOString(),
        sent_at: null,
      })
      .execute();
  }

  /** Millimetres recorded for a job so far, sent or not (a dropped report counts: it was the job's use). */
  async reportedFor(jobId: string): Promise<number> {
    const row = await this.db
      .selectFrom('spool_reports')
      .select((eb) => eb.fn.sum<number | string | null>('use_length').as('total'))
      .where('job_id', '=', jobId)
      .executeTakeFirst();
    return Number(row?.total ?? 0);
  }

  /** The oldest report not applied yet of these machines (each instance sends its own machines' reports). */
  async nextUnsent(machineIds: readonly string[]): Promise<Report | undefined> {
    if (machineIds.length === 0) return undefined;
    const row = await this.db
      .selectFrom('spool_reports')
      .selectAll()
      .where('state', 'in', UNSENT)
      .where('machine_id', 'in', machineIds)
      .orderBy('seq')
      .limit(1)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      seq: row.seq,
      spoolId: row.spool_id,
      machineId: row.machine_id,
      jobId: row.job_id,
      useLength: row.use_length,
      state: row.state as Report['state'],
      beforeLength: row.before_length,
      attempts: row.attempts,
    };
  }

  /** Grams of each spool's reports not applied yet (the queue subtracts them from what Spoolman says). */
  async unsentGrams(): Promise<Map<number, number>> {
    const rows = await this.db
      .selectFrom('spool_reports')
      .select(['spool_id', 'use_length', 'grams_per_metre'])
      .where('state', 'in', UNSENT)
      .execute();
    const grams = new Map<number, number>();
    for (const row of rows)
      grams.set(row.spool_id, (grams.get(row.spool_id) ?? 0) + (row.use_length / 1000) * row.grams_per_metre);
    return grams;
  }

  /** Written before the request goes out: from here on the report may have been applied. */
  async markSending(seq: number, beforeLength: number): Promise<void> {
    await this.db
      .updateTable('spool_reports')
      .set((eb) => ({ state: 'sending', before_length: beforeLength, attempts: eb('attempts', '+', 1) }))
      .where('seq', '=', seq)
      .execute();
  }

  async markSent(seq: number): Promise<void> {
    await this.db
      .updateTable('spool_reports')
      .set({ state: 'sent', sent_at: new Date().toISOString(), error: null })
      .where('seq', '=', seq)
      .execute();
  }

  async markDropped(seq: number, error: string): Promise<void> {
    await this.db
      .updateTable('spool_reports')
      .set({ state: 'dropped', error })
      .where('seq', '=', seq)
      .execute();
  }

  async noteError(seq: number, error: string): Promise<void> {
    await this.db.updateTable('spool_reports').set({ error }).where('seq', '=', seq).execute();
  }
}
