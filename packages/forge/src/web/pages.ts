import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { requireScopes } from '../auth/guards.js';
import { toAttachment } from '../convert/attachment.js';
import { toRelease } from '../convert/release.js';
import { avatarUrl, toUser } from '../convert/user.js';
import { NotFound } from '../errors.js';
import { listReleaseAttachments } from '../services/attachments.js';
import type { ServiceContext } from '../services/context.js';
import { isOrgVisibleTo, orgNotFound } from '../services/orgs.js';
import { getReleaseByTag, listReleases } from '../services/releases.js';
import type { RepoContext } from '../services/repo-context.js';
import { listOwnerRepositories } from '../services/repo-listing.js';
import { loadRepoContext } from '../services/repos.js';
import { assertTokenReaches } from '../services/token-repositories.js';
import { assertUserVisible, getContextUser, usersForRows } from '../services/users.js';
import { type UserRow, UserType, Visibility } from '../store/schema.js';
import { UnitType } from '../store/units.js';
import { visibilityName } from '../store/visibility.js';
import { html, type Markup, page } from './html.js';

/** Every page: HTML that can load nothing from elsewhere and runs no script. */
function sendPage(reply: FastifyReply, title: string, body: Markup) {
  return reply
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'")
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cache-Control', 'private, no-cache')
    .send(page(title, body));
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

function day(unix: number): string {
  return new Date(unix * 1000).toISOString().slice(0, 10);
}

/** The repository named in the path, with the API's 404 for anything the caller may not see. */
async function visibleRepo(ctx: ServiceContext, request: FastifyRequest): Promise<RepoContext> {
  const { owner, repo } = request.params as Record<string, string>;
  if (!owner || !repo) throw new NotFound();
  const repoContext = await loadRepoContext(ctx, owner, repo, request.auth.user);
  assertTokenReaches(request.auth.repositories, repoContext.repo);
  if (request.auth.publicOnly && repoContext.repo.is_private === 1) throw new NotFound();
  return repoContext;
}

/**
 * The small read-only pages the API's `html_url` fields point at: `/{user or org}`, `/{owner}/{repo}` and
 * `/{owner}/{repo}/releases/tag/{tag}`. Each answers 404 exactly where the API does (absent or hidden
 * users and organizations, private repositories, hidden drafts).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
export const pageRoutes: FastifyPluginAsync<{ ctx: ServiceContext }> = async (app, { ctx }) => {
  const { config } = ctx;

  app.get('/:owner', { onRequest: requireScopes('user') }, async (request, reply) => {
    const { owner: name } = request.params as { owner: string };
    const viewer = request.auth.user;
    const target: UserRow = await getContextUser(ctx, name, viewer);
    if (target.type === UserType.Organization) {
      if (request.auth.publicOnly && target.visibility !== Visibility.Public) throw orgNotFound(name);
      if (!(await isOrgVisibleTo(ctx, target, viewer))) throw orgNotFound(name);
    } else {
      await assertUserVisible(ctx, target, viewer, name, request.auth.publicOnly);
    }
    const kind = target.type === UserType.Organization ? 'Organization' : 'User';
    // The same list (and visibility rule) as GET /users/{username}/repos, first page.
    const { views, total } = await listOwnerRepositories(ctx, request.auth, target, {
      offset: 0,
      limit: config.api.maxResponseItems,
    });
    const repoItems = views.map(
      ({ repo }) =>
        html`<li><a href="${config.appUrl}${encodeURIComponent(target.name)}/${encodeURIComponent(repo.name)}">${repo.name}</a>${repo.is_private === 1 ? html` <span class="muted">private</span>` : ''}${repo.description ? html` <span class="muted">— ${repo.description}</span>` : ''}</li>`,
    );
    const facts = [
      target.location && html`<li>Location: ${target.location}</li>`,
      target.website && html`<li>Website: ${target.website}</li>`,
      html`<li>Visibility: ${visibilityName(target.visibility)}</li>`,
      html`<li>Joined: ${day(target.created_unix)}</li>`,
    ];
    return sendPage(
      reply,
      target.full_name ? `${target.full_name} (${target.name})` : target.name,
      html`<header><img class="avatar" alt="" src="${avatarUrl(config, target)}?size=128">
<div><h1>${target.full_name || target.name}</h1><div class="muted">${kind} ${target.name}</div></div></header>
${target.description ? html`<p>${target.description}</p>` : ''}
<ul>${facts}</ul>
<h2>Repositories</h2>${repoItems.length ? html`<ul>${repoItems}</ul>` : html`<p class="muted">No repositories.</p>`}
${total > views.length ? html`<p class="muted">${total - views.length} more through the API.</p>` : ''}
<p class="muted">API: <a href="${config.appUrl}api/v1/users/${encodeURIComponent(target.name)}">${config.appUrl}api/v1/users/${target.name}</a></p>`,
    );
  });

  app.get('/:owner/:repo', { onRequest: requireScopes('repository') }, async (request, reply) => {
    const repo = await visibleRepo(ctx, request);
    const base = `${config.appUrl}${encodeURIComponent(repo.owner.name)}/${encodeURIComponent(repo.repo.name)}`;
    const canReadReleases = repo.permission.canRead(UnitType.Releases) || repo.doer?.is_admin === 1;
    const releases = canReadReleases ? (await listReleases(repo, { limit: 10, offset: 0 })).rows : [];
    const releaseItems = releases.map(
      (row) =>
        html`<li><a href="${base}/releases/tag/${row.tag_name.split('/').map(encodeURIComponent).join('/')}">${row.title || row.tag_name}</a>
<span class="muted">${row.tag_name}${row.is_draft === 1 ? ' · draft' : ''}${row.is_prerelease === 1 ? ' · pre-release' : ''} · ${day(row.created_unix)}</span></li>`,
    );
    const empty = repo.repo.is_empty === 1;
    return sendPage(
      reply,
      `${repo.owner.name}/${repo.repo.name}`,
      html`<header><img class="avatar" alt="" src="${avatarUrl(config, repo.owner)}?size=128">
<div><h1><a href="${config.appUrl}${encodeURIComponent(repo.owner.name)}">${repo.owner.name}</a> / ${repo.repo.name}</h1>
<div class="muted">${repo.repo.is_private === 1 ? 'Private' : 'Public'} repository${repo.repo.is_archived === 1 ? ' · archived' : ''}</div></div></header>
${repo.repo.description ? html`<p>${repo.repo.description}</p>` : ''}
<p>Clone: <code>${base}.git</code></p>
${
  empty
    ? html`<p class="muted">This repository is empty.</p>`
    : html`<p>Default branch <code>${repo.repo.default_branch}</code>: download
<a href="${base}/archive/${encodeURIComponent(repo.repo.default_branch)}.tar.gz">tar.gz</a> ·
<a href="${base}/archive/${encodeURIComponent(repo.repo.default_branch)}.zip">zip</a></p>`
}
<h2>Releases</h2>${releaseItems.length ? html`<ul>${releaseItems}</ul>` : html`<p class="muted">No releases.</p>`}`,
    );
  });

  app.get(
    '/:owner/:repo/releases/tag/*',
    { onRequest: requireScopes('repository') },
    async (request, reply) => {
      const repo = await visibleRepo(ctx, request);
      if (!repo.permission.canRead(UnitType.Releases) && repo.doer?.is_admin !== 1) throw new NotFound();
      const row = await getReleaseByTag(repo, (request.params as Record<string, string>)['*'] ?? '');
      const [assets, publisherOf] = await Promise.all([
        listReleaseAttachments(repo, row.id),
        usersForRows(repo, [row.publisher_id]),
      ]);
      const publisher = publisherOf(row.publisher_id);
      // The page shows what the API would answer for this release: one conversion, the same links.
      const release = toRelease(
        config,
        repo.owner,
        repo.repo,
        row,
        toUser(config, publisher, null),
        assets.map((attachment) => toAttachment(config, attachment)),
      );
      const repoUrl = `${config.appUrl}${encodeURIComponent(repo.owner.name)}/${encodeURIComponent(repo.repo.name)}`;
      const assetRows = release.assets.map(
        (asset) =>
          html`<tr><td><a href="${asset.browser_download_url}">${asset.name}</a></td><td>${formatSize(asset.size)}</td><td class="muted">${asset.download_count} downloads</td></tr>`,
      );
      const labels = [row.is_draft === 1 ? 'Draft' : '', row.is_prerelease === 1 ? 'Pre-release' : '']
        .filter(Boolean)
        .join(' · ');
      return sendPage(
        reply,
        `${row.title || row.tag_name} · ${repo.owner.name}/${repo.repo.name}`,
        html`<p><a href="${repoUrl}">${repo.owner.name}/${repo.repo.name}</a></p>
<h1>${row.title || row.tag_name}</h1>
<div class="muted">${labels ? html`${labels} · ` : ''}tag <code>${row.tag_name}</code> · by ${release.author.login} · ${day(row.created_unix)}</div>
${row.note ? html`<pre>${row.note}</pre>` : ''}
<h2>Assets</h2>
<table>${assetRows}
<tr><td><a href="${release.zipball_url}">Source code (zip)</a></td><td></td><td></td></tr>
<tr><td><a href="${release.tarball_url}">Source code (tar.gz)</a></td><td></td><td></td></tr></table>`,
      );
    },
  );
};
