import pino, { type Logger } from 'pino';

/** JSON lines when not on a terminal (or with --json), readable colour lines on a terminal. */
export function createLogger(options: { json?: boolean; level?: string } = {}): Logger {
  const pretty = !options.json && process.stdout.isTTY;
  return pino({
    name: 'machine-api',
    level: options.level ?? 'info',
    // Access codes and API keys of printers never reach the log.
    redact: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.access_code', '*.api_key', '*.key'],
    ...(pretty ? { transport: { target: 'pino-pretty' } } : {}),
  });
}
