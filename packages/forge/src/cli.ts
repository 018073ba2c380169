#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { buildApp } from './api/app.js';
import { createLogger } from './log.js';

const USAGE = 'usage: forge serve [--bind HOST:PORT] [--data-dir DIR] [--app-url URL] [--config FILE]';

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
      bind: { type: 'string', default: '127.0.0.1:3000' },
      'data-dir': { type: 'string', default: './data' },
      'app-url': { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals[0] !== 'serve') {
    process.stdout.write(`${USAGE}\n`);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const logger = createLogger();
  const app = await buildApp({ logger });
  const { host, port } = parseBind(values.bind);
  await app.listen({ host, port });

  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`forge: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
