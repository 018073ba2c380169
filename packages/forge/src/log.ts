import pino, { type Logger } from 'pino';

/** JSON lines when not on a terminal, readable colour lines on a terminal; secrets never reach the log. */
export function createLogger(options: { level?: string } = {}): Logger {
  return pino({
    name: 'forge',
    level: options.level ?? 'info',
    redact: [
      'req.headers.authorization',
      'req.headers.cookie',
      'req.headers["x-ssh-certificate"]',
      '*.password',
    ],
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty' } } : {}),
  });
}
