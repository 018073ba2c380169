/** Stored-file rows: the only module that reads or writes the stored_files table. */

import type { Kysely, Selectable } from 'kysely';
import type { JobDatabase, StoredFilesTable } from '../jobs/database.js';

export type StoredFileRow = Selectable<StoredFilesTable>;

export class FileStore {
  constructor(private readonly db: Kysely<JobDatabase>) {}

  /** Inserts or replaces the row of `name`; returns the disk name it replaced, if any. */
  async put(row: StoredFileRow): Promise<string | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const old = await trx
        .selectFrom('stored_files')
        .select('disk_name')
        .where('name', '=', row.name)
        .executeTakeFirst();
      if (old) await trx.deleteFrom('stored_files').where('name', '=', row.name).execute();
      await trx.insertInto('stored_files').values(row).execute();
      return old?.disk_name;
    });
  }

  async get(name: string): Promise<StoredFileRow | undefined> {
    return this.db.selectFrom('stored_files').selectAll().where('name', '=', name).executeTakeFirst();
  }

  async list(): Promise<StoredFileRow[]> {
    return this.db
      .selectFrom('stored_files')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('name')
      .execute();
  }

  /** Deletes the row; returns its disk name, or undefined when there was none. */
  async delete(name: string): Promise<string | undefined> {
    const row = await this.get(name);
    if (!row) return undefined;
    await this.db.deleteFrom('stored_files').where('name', '=', name).execute();
    return row.disk_name;
  }
}
