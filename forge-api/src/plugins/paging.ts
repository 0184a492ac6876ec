/**
 * Gitea's list conventions: `page` is 1-based, `limit` defaults to DEFAULT_PAGING_NUM (30) and
 * is capped by MAX_RESPONSE_ITEMS (50); X-Total-Count and a Link header (next, last, first,
 * prev, comma-joined, absolute URLs on ROOT_URL with sorted, re-encoded query) are exposed to
 * browsers through Access-Control-Expose-Headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ForgeConfig } from '../config';

import { INT64_LIMIT, INT64_MIN } from '../schemas/common';

export { dbId, idFromText, MAX_DB_INT } from '../services/ids';
import { MAX_DB_INT } from '../services/ids';

export interface Paging {
  page: number;
  limit: number;
  skip: number;
  take: number;
}

/** JSON schema for the query parameters every list takes (used in route schemas). */
export const pagingQuery = {
  page: { type: 'integer', minimum: INT64_MIN, exclusiveMaximum: INT64_LIMIT, description: 'page number of results to return (1-based)' },
  limit: { type: 'integer', minimum: INT64_MIN, exclusiveMaximum: INT64_LIMIT, description: 'page size of results' },
} as const;

export function parsePaging(query: unknown, config: Pick<ForgeConfig, 'defaultPagingNum' | 'maxResponseItems'>): Paging {
  const q = (query ?? {}) as Record<string, unknown>;
  let page = Number.parseInt(String(q.page ?? ''), 10);
  let limit = Number.parseInt(String(q.limit ?? ''), 10);
  if (!Number.isFinite(page) || page < 1) page = 1;
  if (!Number.isFinite(limit) || limit <= 0) limit = config.defaultPagingNum;
  if (limit > config.maxResponseItems) limit = config.maxResponseItems;
  // Far-away pages are simply empty; keep the offset a 32-bit integer for the database.
  page = Math.min(page, Math.floor(MAX_DB_INT / limit));
  return { page, limit, skip: (page - 1) * limit, take: limit };
}

export function exposeHeader(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('Access-Control-Expose-Headers');
  const list = current ? String(current).split(',').map((s) => s.trim()).filter(Boolean) : [];
  if (!list.some((h) => h.toLowerCase() === name.toLowerCase())) list.push(name);
  reply.header('Access-Control-Expose-Headers', list.join(', '));
}

export function setTotalCount(reply: FastifyReply, total: number): void {
  reply.header('X-Total-Count', String(total));
  exposeHeader(reply, 'X-Total-Count');
}

/** Go's url.Values.Encode: keys sorted, values in order, form encoding. */
function encodeQuery(params: URLSearchParams): string {
  const keys = [...new Set([...params.keys()])].sort();
  const parts: string[] = [];
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+').replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  for (const k of keys) for (const v of params.getAll(k)) parts.push(`${enc(k)}=${enc(v)}`);
  return parts.join('&');
}

export function linkHeader(rootUrl: string, requestUrl: string, total: number, limit: number, page: number): string | null {
  const totalPages = Math.max(1, Math.ceil(total / limit));
  const current = Math.min(Math.max(page, 1), totalPages);
  const [pathname, search = ''] = requestUrl.split('?', 2);
  const link = (p: number, rel: string) => {
    const params = new URLSearchParams(search);
    params.set('page', String(p));
    return `<${rootUrl}${pathname.replace(/^\//, '')}?${encodeQuery(params)}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (current < totalPages) links.push(link(current + 1, 'next'));
  if (current !== totalPages) links.push(link(totalPages, 'last'));
  if (current !== 1) links.push(link(1, 'first'));
  if (current > 1) links.push(link(current - 1, 'prev'));
  return links.length ? links.join(',') : null;
}

/** X-Total-Count plus Link, as Gitea's paged lists send them. */
export function setPagingHeaders(request: FastifyRequest, reply: FastifyReply, total: number, paging: Paging, rootUrl: string): void {
  setTotalCount(reply, total);
  const link = linkHeader(rootUrl, request.url, total, paging.limit, paging.page);
  if (link) {
    reply.header('Link', link);
    exposeHeader(reply, 'Link');
  }
}
