/**
 * Input normalisation, once for every route: text the databases cannot hold is refused or
 * repaired here, so no route and no driver meets it.
 *
 *  - A NUL character (U+0000) cannot be stored in a PostgreSQL text column, and Gitea refuses
 *    it wherever its database would; the forge refuses it on both databases alike so the
 *    answer does not depend on the provider: in the path or the query (before
 *    authentication: the URL names nothing) and in any string of a request body (after
 *    authentication, with the body's other validation).
 *  - A lone UTF-16 surrogate (a `\ud800` escape in JSON) is not text: Go's JSON decoder, and
 *    so Gitea, turns it into U+FFFD; so does the forge, before validation, so a body with one
 *    is stored like Gitea stores it instead of failing in the driver.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MalformedError, ValidationError } from '../services/errors';
import { shared } from './shared';
import { INT64_LIMIT, INT64_MIN } from '../schemas/common';

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The path and query of a raw request URL, decoded as the router and query parser will. */
function decodedUrlHasNul(url: string): boolean {
  if (NUL.test(url) || /%00/.test(url)) return true;
  return false;
}

/** Where a NUL is, as a field path (`title`, `labels.0`), or null. */
export function findNul(value: unknown, at = ''): string | null {
  if (typeof value === 'string') return NUL.test(value) ? at || 'body' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], at ? `${at}.${i}` : String(i));
      if (hit) return hit;
    }
    return null;
  }
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (NUL.test(k)) return at || k;
      const hit = findNul(v, at ? `${at}.${k}` : k);
      if (hit) return hit;
    }
  }
  return null;
}

/** The value with each lone surrogate replaced by U+FFFD (objects are changed in place). */
export function repairSurrogates<T>(value: T): T {
  if (typeof value === 'string') return value.replace(LONE_SURROGATE, '\ufffd') as T;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = repairSurrogates(value[i]);
    return value;
  }
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    const obj = value as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      const fixed = repairSurrogates(k);
      const v = repairSurrogates(obj[k]);
      if (fixed !== k) {
        delete obj[k];
        obj[fixed] = v;
      } else obj[k] = v;
    }
  }
  return value;
}

function pascal(field: string): string {
  return field
    .split('.')
    .map((part) => part.split(/[_-]/).map((p) => (p ? p[0].toUpperCase() + p.slice(1) : p)).join(''))
    .join('.');
}

/** Path and query: a NUL names nothing a client may ask for (400, before authentication). */
export function checkUrl(request: FastifyRequest): void {
  if (decodedUrlHasNul(request.url)) throw new MalformedError('invalid character in the request URL');
}

/**
 * Body (and the already decoded path and query values): lone surrogates repaired, a NUL
 * refused as the invalid field it is (422 `[Field]: Text`, the way binding errors read).
 */
export function normaliseBody(request: FastifyRequest): void {
  const body = request.body;
  if (body === undefined || body === null || Buffer.isBuffer(body)) return;
  if (typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function') return;
  const field = findNul(body);
  if (field) throw new ValidationError(`[${pascal(field)}]: Text`);
  request.body = repairSurrogates(body);
}

/**
 * Query integers Gitea cannot parse (beyond int64) are absent for Gitea (ctx.FormInt64 gives 0),
 * not an error: such values are dropped before validation, so `?uid=99999999999999999999`
 * lists as if no uid were given instead of failing.
 */
export function dropUnparsableQueryIntegers(request: FastifyRequest): void {
  const schema = (request.routeOptions.schema as { querystring?: { properties?: Record<string, { type?: unknown }> } } | undefined)?.querystring;
  const query = request.query as Record<string, unknown> | undefined;
  if (!schema?.properties || !query) return;
  for (const [name, prop] of Object.entries(schema.properties)) {
    const types = Array.isArray(prop.type) ? prop.type : [prop.type];
    if (!types.includes('integer') || typeof query[name] !== 'string') continue;
    const text = (query[name] as string).trim();
    if (/^[-+]?\d+$/.test(text) && (Number(text) >= INT64_LIMIT || Number(text) < INT64_MIN)) delete query[name];
  }
}

/** The URL check, at the root: it covers the API, the git routes and the package registry. */
export const urlInput = shared(async function urlInput(app: FastifyInstance) {
  app.addHook('onRequest', async (request) => {
    checkUrl(request);
  });
});

/**
 * The body check, registered in the API scope after authentication (Gitea authenticates
 * before it binds a body: an anonymous request with a bad body is a 401, not a 422).
 */
export const bodyInput = shared(async function bodyInput(app: FastifyInstance) {
  // Gitea decodes an empty JSON body as an empty object: a PUT without a body but with a JSON
  // content type (PUT /user/starred/{o}/{r}) succeeds, and a route that needs fields names the
  // first one missing ("[Name]: Required"). Anything else goes to Fastify's own parser.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') return done(null, {});
    return json(request, body as string, done);
  });
  app.addHook('preValidation', async (request) => {
    dropUnparsableQueryIntegers(request);
    normaliseBody(request);
  });
});
