/**
 * `machine-api keys create|list|revoke`: the same key service the HTTP API uses, on the service's
 * database: PostgreSQL when `--database-url`, `MACHINE_API_DATABASE_URL` or the config's
 * `[server] database_url` names one, else the data dir's SQLite file (WAL lets this run next to a serving
 * process). The server checks keys against the database's state at every request, so what this does
 * counts from the next request on, on every instance.
 */

import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { KeyStore } from './access/key-store.js';
import { KeyService } from './access/keys.js';
import { openJobDatabase } from './jobs/database.js';

export interface KeysCommandOptions {
  dataDir: string;
  /** From `--database-url` or the environment; wins over the config file. */
  databaseUrl?: string;
  /** The service's configuration file, read for `[server] database_url` only (absent: ignored). */
  configPath?: string;
  name?: string;
  scope?: string;
  out(text: string): void;
}

/** Runs one `keys` subcommand; returns the exit code. Errors are thrown with a message for the user. */
export async function runKeysCommand(args: string[], options: KeysCommandOptions): Promise<number> {
  const [command, positional] = args;
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  const database = await openJobDatabase({
    dataDir,
    url: options.databaseUrl ?? configuredDatabaseUrl(options.configPath),
  });
  const { db } = database;
  try {
    const keys = new KeyService(new KeyStore(db));
    switch (command) {
      case 'create': {
        const name = options.name ?? positional;
        if (!name) throw new Error('keys create needs --name NAME');
        if (!options.scope) throw new Error('keys create needs --scope, e.g. --scope read,print');
        const created = await keys.create(name, options.scope.split(','));
        options.out(
          `${created.key}\n` +
            `(key "${created.name}" with scopes ${created.scopes.join(',')}; this is the only time it is shown)\n`,
        );
        return 0;
      }
      case 'list': {
        const list = await keys.list();
        if (list.length === 0) options.out('no keys\n');
        for (const key of list) options.out(`${key.name}\t${key.scopes.join(',')}\t${key.createdAt}\n`);
        return 0;
      }
      case 'revoke': {
        const name = positional ?? options.name;
        if (!name) throw new Error('keys revoke needs the NAME of the key');
        await keys.revoke(name);
        options.out(`revoked "${name}"\n`);
        return 0;
      }
      default:
        throw new Error(`unknown keys command "${command ?? ''}"; expected create, list or revoke`);
    }
  } finally {
    await database.close();
  }
}

/**
 * `[server] database_url` of the configuration file, when the file exists. Only this key is read: the
 * command must work on a host whose machines are not reachable, so the machines are not validated here.
 */
function configuredDatabaseUrl(path: string | undefined): string | undefined {
  if (!path || !existsSync(path)) return undefined;
  const document = parseToml(readFileSync(path, 'utf8')) as { server?: { database_url?: unknown } };
  const url = document.server?.database_url;
  if (url === undefined) return undefined;
  if (typeof url !== 'string')
    throw new Error(`${resolve(path)}: [server] key "database_url": expected a string`);
  return url;
}
