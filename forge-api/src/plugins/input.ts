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
import type { MultipartFile } from '@fastify/multipart';
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

/**
 * Where a NUL is, as a field path (`title`, `labels.0`), or null. Walks with its own stack, not
 * by recursion: a body nested as deep as the JSON parser allows must not overflow the call
 * stack (a RangeError would be a 500).
 */
export function findNul(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (NUL.test(v)) return at || 'body';
      continue;
    }
    if (!v || typeof v !== 'object' || Buffer.isBuffer(v)) continue;
    // Pushed in reverse, so the first field with a NUL is the one named, as before.
    const entries = Array.isArray(v) ? v.map((item, i): [string, unknown] => [String(i), item]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, item] = entries[i];
      if (!Array.isArray(v) && NUL.test(k)) return at || k;
      stack.push([item, at ? `${at}.${k}` : k]);
    }
  }
  return null;
}

/** The value with each lone surrogate replaced by U+FFFD (objects are changed in place; no recursion, as findNul). */
export function repairSurrogates<T>(value: T): T {
  const fix = (text: string) => text.replace(LONE_SURROGATE, '\ufffd');
  if (typeof value === 'string') return fix(value) as T;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object' || Buffer.isBuffer(v)) continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (typeof v[i] === 'string') v[i] = fix(v[i]);
        else stack.push(v[i]);
      }
      continue;
    }
    const obj = v as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      const fixed = fix(k);
      let item = obj[k];
      if (typeof item === 'string') item = fix(item);
      else stack.push(item);
      if (fixed !== k) {
        delete obj[k];
        obj[fixed] = item;
      } else obj[k] = item;
    }
  }
  return value;
}

/** Go's encoding/json refuses JSON nested deeper than this (Gitea binds bodies with it). */
export const MAX_JSON_DEPTH = 10000;

/**
 * The first bracket that nests a JSON text deeper than MAX_JSON_DEPTH, or null. A linear scan
 * that skips strings; texts too short to nest that deep are not scanned at all.
 */
export function tooDeep(text: string): string | null {
  if (text.length <= MAX_JSON_DEPTH) return null;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return text[i];
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return null;
}

/**
 * A JSON request body, parsed as Gitea's decoder would accept it: nesting deeper than Go's
 * limit is refused as Gitea refuses it (422), before JSON.parse or any walk over the value.
 * Every JSON body parser of the API goes through here.
 */
export function parseJsonBody(text: string): unknown {
  const bracket = tooDeep(text);
  if (bracket) throw new ValidationError(`[]: invalid character '${bracket}' exceeded max depth`);
  return JSON.parse(text);
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
 * The text parts of a multipart upload (the file's name, the other fields), normalised as a
 * JSON body's strings are: a NUL refused (422 `[Field]: Text`; PostgreSQL cannot store it),
 * lone surrogates repaired. `fileField` names the file part in the answer (`Attachment`).
 */
export function normaliseMultipart(file: MultipartFile, fileField: string): void {
  const fields = file.fields as Record<string, unknown>;
  if (NUL.test(file.filename)) throw new ValidationError(`[${pascal(fileField)}]: Text`);
  file.filename = repairSurrogates(file.filename);
  for (const [name, part] of Object.entries(fields)) {
    for (const p of Array.isArray(part) ? part : [part]) {
      const field = p as { type?: string; value?: unknown };
      if (field.type !== 'field' || typeof field.value !== 'string') continue;
      if (NUL.test(name) || NUL.test(field.value)) throw new ValidationError(`[${pascal(name)}]: Text`);
      field.value = repairSurrogates(field.value);
    }
  }
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
    const text = body as string;
    if (text.trim() === '') return done(null, {});
    const bracket = tooDeep(text);
    if (bracket) return done(new ValidationError(`[]: invalid character '${bracket}' exceeded max depth`));
    return json(request, text, done);
  });
  app.addHook('preValidation', async (request) => {
    dropUnparsableQueryIntegers(request);
    normaliseBody(request);
  });
});
