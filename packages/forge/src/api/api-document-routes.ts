import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { buildApiDocument, type RouteRecord } from './api-document.js';

/** The swagger-ui files the page loads, served from the installed package (no CDN, no other file). */
const UI_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

/** Starts swagger-ui on the document; a file of its own so the page needs no inline script. */
const INITIALIZER = `window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({ url: root.dataset.url, dom_id: '#swagger-ui', deepLinking: true });
});
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * `GET /swagger.v1.json` (where Gitea serves its document) and `GET /api/swagger` (swagger-ui on it, the
 * page every error body's `url` points at), with swagger-ui's own files under `/api/swagger/assets/`.
 */
export const apiDocumentRoutes: FastifyPluginAsync<{ ctx: ServiceContext; routes: RouteRecord[] }> = async (
  app,
  { ctx, routes },
) => {
  let document: string | undefined;
  // Built on first use: by then every route has been registered.
  const documentText = () => {
    document ??= JSON.stringify(buildApiDocument(routes));
    return document;
  };
  const base = new URL(ctx.config.appUrl).pathname;

  app.get('/swagger.v1.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(documentText()),
  );

  app.get('/api/swagger', async (_request, reply) => {
    const assets = `${base}api/swagger/assets`;
    const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Forge API</title>
<link rel="stylesheet" href="${escapeHtml(assets)}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-url="${escapeHtml(`${base}swagger.v1.json`)}"></div>
<script src="${escapeHtml(assets)}/swagger-ui-bundle.js"></script>
<script src="${escapeHtml(assets)}/swagger-initializer.js"></script>
</body>
</html>
`;
    return reply.type('text/html; charset=utf-8').send(page);
  });

  app.get('/api/swagger/assets/swagger-initializer.js', async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('Cache-Control', 'public, max-age=3600')
      .send(INITIALIZER),
  );

  const root = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  for (const [file, type] of Object.entries(UI_FILES)) {
    app.get(`/api/swagger/assets/${file}`, async (_request, reply) =>
      reply
        .type(type)
        .header('Cache-Control', 'public, max-age=3600')
        .send(createReadStream(join(root, file))),
    );
  }
};
