import type { FastifyBaseLogger } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type Logger } from 'pino';

/** Where credentials can sit in a logged object: request headers under any of the names loggers use. */
const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'sudo', '"x-ssh-certificate"'];
const REDACT_PATHS = [
  ...SECRET_HEADERS.flatMap((name) => {
    const key = name.startsWith('"') ? `[${name}]` : `.${name}`;
    return [`req.headers${key}`, `headers${key}`, `request.headers${key}`];
  }),
  '*.password',
  'password',
];

/** Query parameters that carry credentials (`?token=`, `?access_token=`) or an identity switch (`?sudo=`). */
const SECRET_QUERY_PARAMS = /([?&](?:token|access_token|sudo)=)[^&#]*/gi;

/** The URL with the values of credential-carrying query parameters replaced: safe to log. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMS, '$1[REDACTED]');
}

const redactUrlField = (url: unknown) => (typeof url === 'string' ? redactUrl(url) : url);
const serializers = {
  url: redactUrlField,
  req: (req: unknown) =>
    req !== null && typeof req === 'object' && 'url' in req ? { ...req, url: redactUrlField(req.url) } : req,
};

/**
 * The logger the HTTP app writes through: whatever logger it was given, with credentials redacted at
 * every level (headers by path, query tokens in any `url` field), so no configuration can leak them.
 */
export function redactingLogger(logger: FastifyBaseLogger): FastifyBaseLogger {
  return logger.child({}, { redact: { paths: REDACT_PATHS, censor: '[REDACTED]' }, serializers });
}

/** JSON lines when not on a terminal, readable colour lines on a terminal; secrets never reach the log. */
export function createLogger(options: { level?: string } = {}): Logger {
  return pino({
    name: 'forge',
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    serializers,
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty' } } : {}),
  });
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * A request's logger, made on first use. Fastify gives every request a child logger bound to its id;
 * building one (bindings serialised and redacted) is a visible share of a small request's cost, and most
 * requests never log. The child is the same `parent.child(bindings, options)` Fastify would make.
 */
class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  private log(method: LogMethod, args: unknown[]): void {
    (this.logger[method] as (...args: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
  silent(...args: unknown[]): void {
    this.log('silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: request loggers that are only built when a request logs. */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new RequestLogger(parent, bindings, options);
}
