/**
 * A snapshot of everything a request could change — every database row, the refs of every repository and
 * the files under the data dir — to prove that a refused request changed nothing.
 */
import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { listRefs } from '../src/git/repository.js';
import type { TestForge } from './harness.js';

// Bumped by reads that authenticate (token use, password sign-in): not a change a refusal could make.
const VOLATILE_COLUMNS = new Set(['updated_unix', 'last_login_unix']);

async function filesUnder(dir: string, root = dir): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path, root)));
    else out.push(`${relative(root, path)} ${(await stat(path)).size}`);
  }
  return out.sort();
}

/** Rows of every table (volatile columns dropped), refs of every bare repository, files of the data dir. */
export async function snapshotState(forge: TestForge): Promise<string> {
  const db = forge.ctx.db;
  const tables = (await db.introspection.getTables()).map((t) => t.name).sort();
  const rows: Record<string, unknown[]> = {};
  for (const table of tables) {
    // biome-ignore lint/suspicious/noExplicitAny: a generic dump over whatever tables exist.
    const all = await (db as any).selectFrom(table).selectAll().execute();
    rows[table] = all
      .map((row: Record<string, unknown>) =>
        JSON.stringify(Object.entries(row).filter(([key]) => !VOLATILE_COLUMNS.has(key))),
      )
      .sort();
  }
  const reposRoot = join(forge.ctx.config.dataDir, 'repositories');
  const refs: Record<string, string[]> = {};
  for (const owner of await readdir(reposRoot).catch(() => [])) {
    for (const repo of await readdir(join(reposRoot, owner)).catch(() => [])) {
      const map = await listRefs(join(reposRoot, owner, repo));
      refs[`${owner}/${repo}`] = [...map].map(([ref, sha]) => `${ref} ${sha}`).sort();
    }
  }
  const files = (await filesUnder(reposRoot)).filter(
    (line) => !/^[^/]+\/[^/]+\/(logs|FETCH_HEAD)/.test(line),
  );
  return JSON.stringify({ rows, refs, files });
}
