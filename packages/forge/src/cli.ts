#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { type ConfigSources, loadConfig } from './config.js';
import { createLogger } from './log.js';
import { startForge } from './server.js';
import { syncAllReleases } from './services/release-sync.js';
import { changeUserPassword, createUser } from './services/users.js';
import { openDatabase } from './store/database.js';

const USAGE = `usage:
  forge serve [--bind HOST:PORT] [--data-dir DIR] [--app-url URL] [--config FILE] [--database-url URL]
  forge admin user create --username NAME --password PW --email EMAIL [--admin] [--must-change-password=false]
                          [--data-dir DIR] [--config FILE] [--database-url URL]
  forge admin user change-password --username NAME --password PW [--must-change-password=false]
                          [--data-dir DIR] [--config FILE] [--database-url URL]
  forge admin repo-sync-releases [--repo OWNER/REPO] [--data-dir DIR] [--config FILE] [--database-url URL]
The database defaults to <data-dir>/forge.db (SQLite); FORGE_DATABASE_URL or --database-url may name a
postgres:// database instead.`;

const COMMON_OPTIONS = {
  bind: { type: 'string' },
  'data-dir': { type: 'string' },
  'app-url': { type: 'string' },
  config: { type: 'string' },
  'database-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function configSources(values: {
  bind?: string;
  'data-dir'?: string;
  'app-url'?: string;
  config?: string;
  'database-url'?: string;
}): ConfigSources {
  return {
    bind: values.bind,
    dataDir: values['data-dir'],
    appUrl: values['app-url'],
    configFile: values.config,
    databaseUrl: values['database-url'],
    env: process.env,
  };
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: COMMON_OPTIONS, strict: true });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig(configSources(values));
  const logger = createLogger({ level: config.logLevel });
  const forge = await startForge(config, { logger, print: (line) => process.stdout.write(`${line}\n`) });
  logger.info({ url: forge.url, appUrl: config.appUrl }, 'forge listening');
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await forge.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

/** `--must-change-password` is a boolean that also accepts `=true` / `=false`, like Gitea's flag. */
function normaliseBooleanFlags(argv: string[]): string[] {
  return argv.map((arg) => (arg === '--must-change-password' ? '--must-change-password=true' : arg));
}

async function adminUserCreate(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: normaliseBooleanFlags(argv),
    strict: true,
    options: {
      ...COMMON_OPTIONS,
      username: { type: 'string' },
      password: { type: 'string' },
      email: { type: 'string' },
      admin: { type: 'boolean', default: false },
      'must-change-password': { type: 'string', default: 'true' },
    },
  });
  const mustChange = values['must-change-password'];
  if (!values.username || !values.password || !values.email || !['true', 'false'].includes(mustChange)) {
    throw new Error(`admin user create needs --username, --password and --email\n${USAGE}`);
  }
  const config = loadConfig(configSources(values));
  const database = await openDatabase({ url: config.databaseUrl });
  try {
    await createUser(
      { db: database.db, dialect: database.dialect, config },
      {
        username: values.username,
        password: values.password,
        email: values.email,
        isAdmin: values.admin,
        mustChangePassword: mustChange === 'true',
      },
    );
  } finally {
    await database.close();
  }
  process.stdout.write(`New user '${values.username}' has been successfully created!\n`);
}

/** Gitea's `admin user change-password`; `--must-change-password` defaults to true as there. */
async function adminUserChangePassword(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: normaliseBooleanFlags(argv),
    strict: true,
    options: {
      ...COMMON_OPTIONS,
      username: { type: 'string' },
      password: { type: 'string' },
      'must-change-password': { type: 'string', default: 'true' },
    },
  });
  const mustChange = values['must-change-password'];
  if (!values.username || !values.password || !['true', 'false'].includes(mustChange)) {
    throw new Error(`admin user change-password needs --username and --password\n${USAGE}`);
  }
  const config = loadConfig(configSources(values));
  const database = await openDatabase({ url: config.databaseUrl });
  try {
    await changeUserPassword(
      { db: database.db, dialect: database.dialect, config },
      { username: values.username, password: values.password, mustChangePassword: mustChange === 'true' },
    );
  } finally {
    await database.close();
  }
  process.stdout.write(`${values.username}'s password has been successfully updated!\n`);
}

/**
 * Gitea's `admin repo-sync-releases`: brings release records in line with the git tags of every
 * repository (or one), the same repair `forge serve` runs at start-up.
 */
async function adminRepoSyncReleases(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { ...COMMON_OPTIONS, repo: { type: 'string' } },
  });
  const config = loadConfig(configSources(values));
  const database = await openDatabase({ url: config.databaseUrl });
  try {
    const reports = await syncAllReleases(
      { db: database.db, dialect: database.dialect, config },
      values.repo,
    );
    for (const report of reports) {
      const line = report.skipped
        ? `${report.repository}: skipped (${report.skipped})`
        : `${report.repository}: ${report.added} tags added, ${report.removed} tags removed, ` +
          `${report.drafted} releases without tag made drafts, ${report.updated} updated`;
      process.stdout.write(`${line}\n`);
    }
    process.stdout.write(`Synchronized releases of ${reports.length} repositories.\n`);
  } finally {
    await database.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'serve') return serve(rest);
  if (command === 'admin' && rest[0] === 'user' && rest[1] === 'create')
    return adminUserCreate(rest.slice(2));
  if (command === 'admin' && rest[0] === 'user' && rest[1] === 'change-password')
    return adminUserChangePassword(rest.slice(2));
  if (command === 'admin' && rest[0] === 'repo-sync-releases') return adminRepoSyncReleases(rest.slice(1));
  const help = command === '--help' || command === '-h' || command === 'help';
  process.stdout.write(`${USAGE}\n`);
  process.exitCode = help ? 0 : 2;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`forge: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
