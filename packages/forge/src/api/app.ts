import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { GITEA_COMPAT_VERSION } from '../version.js';

export interface AppOptions {
  logger: FastifyBaseLogger;
}

/** Builds the HTTP application; the caller decides where it listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: options.logger });
  app.get('/api/v1/version', async () => ({ version: GITEA_COMPAT_VERSION }));
  return app;
}
