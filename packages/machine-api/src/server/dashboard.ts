/**
 * The farm dashboard at `/ui/`: the static files `npm run build` writes to dist/ui (source in ui/), served
 * from this process with no CDN and nothing fetched at run time. Hashed assets are cached for good; any
 * other path under /ui/ answers the page itself, whose router shows the view for it.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { NotFound } from '../errors.js';

/** dist/ui of this package, whether this file runs from src/ (tests) or dist/ (the built service). */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../dist/ui/', import.meta.url));

/**
 * The page loads only its own scripts and styles and talks only to this origin. Styles may be set inline
 * (the chart positions its elements with style attributes); scripts may not. Images may be blob: URLs.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  // Camera pictures are fetched with the session's key and shown from object URLs (ui/src/components/camera.tsx).
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** A path under /ui/ that names a file (an asset), not a view of the page. */
const ASSET = /^\/ui\/(assets\/|[^/?]+\.[a-z0-9]+(\?|$))/i;

export async function registerDashboard(app: FastifyInstance, dir = DASHBOARD_DIR): Promise<void> {
  app.get('/ui', { schema: { hide: true } }, (_request, reply) => reply.redirect('/ui/'));
  if (!existsSync(join(dir, 'index.html'))) {
    app.get('/ui/*', { schema: { hide: true } }, async () => {
      throw new NotFound('the dashboard is not built: run `npm run build` in the repository');
    });
    return;
  }
  await app.register(fastifyStatic, {
    root: dir,
    prefix: '/ui/',
    // Routes for the files that exist (read once at start); everything else falls to the page below.
    wildcard: false,
    index: false,
    cacheControl: false,
    setHeaders(response, path) {
      response.setHeader('x-content-type-options', 'nosniff');
      if (path.endsWith('.html')) response.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
      response.setHeader(
        'cache-control',
        path.includes(`${join(dir, 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
  app.get('/ui/*', { schema: { hide: true } }, (request, reply) => {
    if (ASSET.test(request.url)) throw new NotFound(`no file ${request.url.split('?')[0]}`);
    return reply
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header('cache-control', 'no-cache')
      .sendFile('index.html');
  });
}
