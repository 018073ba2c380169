import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ForgeConfig } from '../config.js';

export interface Page {
  /** 1-based page as requested (0 when absent or invalid, like Go's `FormInt`). */
  requested: number;
  limit: number;
  offset: number;
}

type Query = Record<string, string | string[] | undefined>;

/** Go's `strconv.Atoi` on the first value; anything else is 0. */
function formInt(value: string | string[] | undefined): number {
  const text = Array.isArray(value) ? value[0] : value;
  return text !== undefined && /^[+-]?\d{1,15}$/.test(text) ? Number(text) : 0;
}

/** Gitea's `GetListOptions`: `page` (1-based) and `limit` clamped to the configured default/maximum. */
export function pageOf(request: FastifyRequest, config: ForgeConfig): Page {
  const query = request.query as Query;
  const requested = formInt(query.page);
  let limit = formInt(query.limit);
  if (limit <= 0) limit = config.api.defaultPagingNum;
  if (limit > config.api.maxResponseItems) limit = config.api.maxResponseItems;
  return { requested, limit, offset: (Math.max(requested, 1) - 1) * limit };
}

/** Appends to `Access-Control-Expose-Headers` so browsers may read the list headers. */
function exposeHeader(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('Access-Control-Expose-Headers');
  reply.header('Access-Control-Expose-Headers', current ? `${current}, ${name}` : name);
}

/** `X-Total-Count`: the number of all matches, not of this page. */
export function setTotalCount(reply: FastifyReply, total: number): void {
  reply.header('X-Total-Count', String(total));
  exposeHeader(reply, 'X-Total-Count');
}

/** Go's `url.QueryEscape`. */
function queryEscape(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** The request URI with `page` replaced and the query re-encoded as Go's `url.Values.Encode` does. */
function uriWithPage(request: FastifyRequest, page: number): string {
  const [path = '/', rawQuery = ''] = request.url.split(/\?(.*)/s);
  const params = new URLSearchParams(rawQuery);
  params.set('page', String(page));
  const keys = [...new Set(params.keys())].sort();
  const query = keys.flatMap((key) =>
    params.getAll(key).map((value) => `${queryEscape(key)}=${queryEscape(value)}`),
  );
  return `${path.slice(1)}?${query.join('&')}`;
}

/**
 * Gitea's `SetLinkHeader`: next, last, first, prev (in that order, comma-joined, no spaces) with the
 * paginator's clamping; no header when everything fits on one page.
 */
export function setLinkHeader(
  reply: FastifyReply,
  request: FastifyRequest,
  config: ForgeConfig,
  total: number,
  page: Page,
): void {
  const pageSize = page.limit;
  const totalPages = total === 0 ? 1 : Math.ceil(total / pageSize);
  const current = Math.min(Math.max(page.requested, 1), totalPages);
  const hasNext = total > current * pageSize;
  const isLast = total === 0 || (total > (current - 1) * pageSize && !hasNext);
  const link = (target: number, rel: string) =>
    `<${config.appUrl}${uriWithPage(request, target)}>; rel="${rel}"`;
  const links: string[] = [];
  if (hasNext) links.push(link(current + 1, 'next'));
  if (!isLast) links.push(link(totalPages, 'last'));
  if (current !== 1) links.push(link(1, 'first'));
  if (current > 1) links.push(link(current - 1, 'prev'));
  if (links.length === 0) return;
  reply.header('Link', links.join(','));
  exposeHeader(reply, 'Link');
}

/** Both list headers, Link first (the order Gitea's handlers set them). */
export function setListHeaders(
  reply: FastifyReply,
  request: FastifyRequest,
  config: ForgeConfig,
  total: number,
  page: Page,
): void {
  setLinkHeader(reply, request, config, total, page);
  setTotalCount(reply, total);
}
