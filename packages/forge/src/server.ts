import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './api/app.js';
import type { SignatureVerifier } from './auth/context.js';
import { generatePassword } from './auth/secrets.js';
import type { ForgeConfig } from './config.js';
import { Invalid } from './errors.js';
import { removeStaleUploads } from './services/attachment-files.js';
import { removeOrphanAttachmentFiles } from './services/attachment-removal.js';
import type { ServiceContext } from './services/context.js';
import { syncAllReleases } from './services/release-sync.js';
import { createUser, hasUsers } from './services/users.js';
import { openDatabase } from './store/database.js';
import { startDeliveryWorker } from './webhooks/worker.js';

/** How long requests in flight may finish when the server closes. */
const CLOSE_GRACE_MS = 2_500;
export const INITIAL_ADMIN_NAME = 'forge-admin';

export interface RunningForge {
  app: FastifyInstance;
  ctx: ServiceContext;
  /** Base URL the server listens on, e.g. `http://127.0.0.1:41234`. */
  url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  logger: FastifyBaseLogger;
  /** Where the one-time administrator credentials are printed (stdout for the CLI). */
  print: (line: string) => void;
  signatureVerifier?: SignatureVerifier;
}

/**
 * On an empty database, creates the site administrator and prints its name and generated password once.
 * Concurrent first starts (two processes on one database) settle on one administrator.
 */
export async function ensureInitialAdmin(ctx: ServiceContext, print: (line: string) => void): Promise<void> {
  if (await hasUsers(ctx)) return;
  const password = generatePassword();
  try {
    await createUser(ctx, {
      username: INITIAL_ADMIN_NAME,
      email: `${INITIAL_ADMIN_NAME}@${ctx.config.service.noReplyAddress}`,
      password,
      isAdmin: true,
      mustChangePassword: false,
    });
  } catch (error) {
    if (error instanceof Invalid) return;
    throw error;
  }
  print(`forge: created site administrator "${INITIAL_ADMIN_NAME}" with password: ${password}`);
  print(
    `forge: this password is shown only once; keep it or change it with ` +
      `\`forge admin user change-password --username ${INITIAL_ADMIN_NAME} --password <new password> --must-change-password=false\`.`,
  );
}

/** Opens the database (migrating it), creates the first administrator if needed, and starts listening. */
export async function startForge(config: ForgeConfig, options: StartOptions): Promise<RunningForge> {
  const database = await openDatabase({
    url: config.databaseUrl,
    onConnectionError: (error) => options.logger.warn({ err: error }, 'idle database connection failed'),
  });
  const ctx: ServiceContext = { db: database.db, dialect: database.dialect, config };
  try {
    await removeStaleUploads(ctx);
    await removeOrphanAttachmentFiles(ctx);
    await ensureInitialAdmin(ctx, options.print);
    // Repairs what a crash between a git write and its database write left behind (release-sync.ts).
    for (const report of await syncAllReleases(ctx)) {
      if (report.skipped) options.logger.warn(report, 'release sync skipped a repository');
      else if (report.added + report.removed + report.drafted + report.updated > 0) {
        options.logger.info(report, 'release records repaired at start-up');
      }
    }
    const app = await buildApp({ logger: options.logger, ctx, signatureVerifier: options.signatureVerifier });
    await app.listen({ host: config.bind.host, port: config.bind.port });
    // Deliveries left in the outbox by an earlier run (or raised by other processes) go out from now on.
    const deliveries = startDeliveryWorker(ctx, options.logger);
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.bind.port;
    const host = config.bind.host.includes(':') ? `[${config.bind.host}]` : config.bind.host;
    const url = `http://${host}:${port}`;
    // With port 0 the default app URL only becomes known once the socket is bound.
    if (config.appUrlFromBind) config.appUrl = `${url}/`;
    return {
      app,
      ctx,
      url,
      close: async () => {
        // Idle keep-alive connections close at once (Fastify's default); a request still in flight
        // gets a short grace, then its connection is cut, so a client that stalls mid-upload cannot
        // hold the shutdown (or the database) open.
        const cut = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        try {
          await app.close();
        } finally {
          clearTimeout(cut);
        }
        await deliveries.stop();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
