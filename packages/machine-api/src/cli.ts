#!/usr/bin/env node
import { parseArgs } from 'node:util';

const USAGE = `usage: machine-api serve [--config FILE] [--bind HOST:PORT] [--data-dir DIR] [--database-url URL] [--json] [--debug]
       machine-api keys create --name NAME --scope read,print[,control,admin] [--data-dir DIR] [--database-url URL]
       machine-api keys list [--data-dir DIR] [--database-url URL]
       machine-api keys revoke NAME [--data-dir DIR] [--database-url URL]

  --config, -c FILE      TOML configuration (default machine-api.toml)
  --bind, -b HOST:PORT   listen address (default 127.0.0.1:8080)
  --data-dir DIR         job database and upload files (default ./data/machine-api)
  --database-url URL     postgres://… shared by the instances of a farm (also MACHINE_API_DATABASE_URL
                         or [server] database_url); default: SQLite in the data dir
  --json, -j             log JSON lines even on a terminal
  --debug, -d            log at debug level (every request); LOG_LEVEL=<level> sets any level

  keys …                 manage API keys in the service's database (the config's [server] database_url
                         counts too); works while the server runs, and a revoked key stops working with
                         its next request, on every instance. The key is printed once.`;

/** Splits `HOST:PORT` (IPv6 hosts in brackets). */
export function parseBind(bind: string): { host: string; port: number } {
  const match = /^(?:\[(?<v6>[^\]]+)\]|(?<host>[^:]+)):(?<port>\d{1,5})$/.exec(bind);
  const port = Number(match?.groups?.port);
  if (!match || port > 65535) throw new Error(`--bind: expected HOST:PORT, got "${bind}"`);
  return { host: match.groups?.v6 ?? match.groups?.host ?? '127.0.0.1', port };
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c', default: 'machine-api.toml' },
      bind: { type: 'string', short: 'b', default: '127.0.0.1:8080' },
      'data-dir': { type: 'string', default: './data/machine-api' },
      'database-url': { type: 'string' },
      json: { type: 'boolean', short: 'j', default: false },
      debug: { type: 'boolean', short: 'd', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      name: { type: 'string' },
      scope: { type: 'string' },
    },
  });
  // The flag wins over the environment, which wins over the config file's [server] database_url.
  const databaseUrl = values['database-url'] ?? (process.env.MACHINE_API_DATABASE_URL || undefined);
  if (!values.help && positionals[0] === 'keys') {
    // Each command loads only its own modules (the service's are most of the start-up time).
    const { runKeysCommand } = await import('./keys-command.js');
    process.exitCode = await runKeysCommand(positionals.slice(1), {
      dataDir: values['data-dir'],
      databaseUrl,
      configPath: values.config,
      name: values.name,
      scope: values.scope,
      out: (text) => process.stdout.write(text),
    });
    return;
  }
  if (values.help || positionals[0] !== 'serve') {
    process.stdout.write(`${USAGE}\n`);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const { host, port } = parseBind(values.bind);
  const [{ createLogger }, { startService }] = await Promise.all([
    import('./log.js'),
    import('./service.js'),
  ]);
  const level = values.debug ? 'debug' : (process.env.LOG_LEVEL ?? 'info');
  const logger = createLogger({ json: values.json, level });
  const service = await startService({
    configPath: values.config,
    dataDir: values['data-dir'],
    databaseUrl,
    host,
    port,
    logger,
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`machine-api: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
