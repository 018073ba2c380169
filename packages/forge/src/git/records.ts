/**
 * Reading git's machine output of NUL-separated fields: one parser for every format the forge asks for
 * (`git log -z`, `git for-each-ref` with `%00`), so each reader names its fields instead of slicing and
 * casting. git messages and ref names never hold a NUL, so a fixed field count per record keeps empty
 * fields (a root commit's parents, an empty e-mail) and multi-line messages unambiguous.
 */
import { runGit } from './command.js';

/**
 * The records of `stdout`, whose fields each end in (or are separated by) a NUL, `names.length` fields a
 * record, each field under its name. The newline git may print between records is dropped from the
 * first field; an incomplete record at the end (git's last newline) is ignored.
 */
export function nulRecords<const K extends string>(
  stdout: string,
  names: readonly K[],
): Array<Record<K, string>> {
  const fields = stdout.split('\0');
  const records: Array<Record<K, string>> = [];
  for (let i = 0; i + names.length <= fields.length; i += names.length) {
    const record = {} as Record<K, string>;
    names.forEach((name, j) => {
      const field = fields[i + j] ?? '';
      record[name] = j === 0 ? field.replace(/^\n/, '') : field;
    });
    records.push(record);
  }
  return records;
}

/**
 * `git for-each-ref` over `patterns`, sorted by `sort` when given, as records of `fields` (format atoms,
 * by the name each is read under).
 */
export async function forEachRef<const K extends string>(
  gitDir: string,
  fields: Readonly<Record<K, string>>,
  patterns: readonly string[],
  sort?: string,
): Promise<Array<Record<K, string>>> {
  const names = Object.keys(fields) as K[];
  const format = names.map((name) => `${fields[name]}%00`).join('');
  const args = ['for-each-ref', ...(sort ? [`--sort=${sort}`] : []), `--format=${format}`, ...patterns];
  return nulRecords((await runGit(args, { gitDir })).stdout, names);
}
