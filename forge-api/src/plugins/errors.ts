/**
 * Gitea's error bodies: `{"message": "...", "url": "<ROOT_URL>api/swagger"}` for every error,
 * request validation failures as 422 `[Field]: Rule` (the first one only, as Gitea's binding
 * does), and never a 500 for bad input. Domain errors (services/errors.ts) get the status of
 * their kind, or the route's `errorStatus` override where Gitea answers differently.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, TooManyRequestsError, type ErrorKind } from '../services/errors';
import { shared } from './shared';
import { clientErrorOf } from '../services/db-errors';

/** The status each domain error kind answers with, unless the route overrides it. */
export const STATUS_OF_KIND: Record<ErrorKind, number> = {
  NotFound: 404,
  Unauthenticated: 401,
  PermissionDenied: 403,
  AlreadyExists: 422,
  Invalid: 422,
  Validation: 422,
  Malformed: 400,
  InvalidPassword: 400,
  PreconditionFailed: 412,
  TooLarge: 413,
  Archived: 423,
  Conflict: 409,
  NotAllowed: 405,
  TooManyRequests: 429,
};

/** Per-route statuses where Gitea answers a kind differently (route config `errorStatus`). */
export type ErrorStatusOverrides = Partial<Record<ErrorKind, number>>;

/**
 * Per-route bodies where Gitea's handler writes a kind without its error body (route config
 * `errorBody`): 'empty' for a bare status (ctx.Status), 'Message' for `{"Message": "..."}`
 * (a handler that encodes an anonymous struct).
 */
export type ErrorBodyOverrides = Partial<Record<ErrorKind, 'empty' | 'Message'>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    errorStatus?: ErrorStatusOverrides;
    errorBody?: ErrorBodyOverrides;
  }
}

export function statusOf(err: DomainError, overrides?: ErrorStatusOverrides): number {
  return overrides?.[err.kind] ?? STATUS_OF_KIND[err.kind];
}

/** Gitea's binding rule names for the ajv keywords we use. */
const RULES: Record<string, string> = {
  required: 'Required',
  maxLength: 'MaxSize',
  minLength: 'MinSize',
  pattern: 'AlphaDashDot',
  format: 'Email',
  enum: 'In',
  type: 'Type',
  minimum: 'Min',
  maximum: 'Max',
};

interface AjvIssue {
  keyword: string;
  instancePath?: string;
  params?: Record<string, unknown>;
  message?: string;
}

function pascal(s: string): string {
  return s
    .split(/[_-]/)
    .map((p) => (p ? p[0].toUpperCase() + p.slice(1) : p))
    .join('');
}

/** "[Name]: AlphaDashDot" from the first ajv error. */
export function validationMessage(issues: AjvIssue[], context?: string): string {
  const e = issues[0];
  if (!e) return 'validation failed';
  let field = (e.instancePath ?? '').split('/').filter(Boolean).join('.');
  if (e.keyword === 'required' && typeof e.params?.missingProperty === 'string') {
    field = field ? `${field}.${e.params.missingProperty}` : e.params.missingProperty;
  }
  let rule = RULES[e.keyword] ?? pascal(e.keyword);
  if (e.keyword === 'format' && e.params?.format && e.params.format !== 'email') rule = pascal(String(e.params.format));
  if (e.keyword === 'maxLength' || e.keyword === 'minLength') rule += `(${String(e.params?.limit ?? '')})`;
  const name = field ? field.split('.').map(pascal).join('.') : pascal(context ?? 'body');
  return `[${name}]: ${rule}`;
}

export function errorBody(rootUrl: string, message: string, extra: Record<string, unknown> = {}) {
  return { message, url: `${rootUrl}api/swagger`, ...extra };
}

async function errorsPlugin(app: FastifyInstance) {
  const rootUrl = app.config.rootUrl;

  app.setErrorHandler((err: FastifyError | DomainError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof DomainError) {
      const status = statusOf(err, request.routeOptions.config?.errorStatus);
      if (err instanceof TooManyRequestsError) reply.header('retry-after', String(err.retryAfterSeconds));
      const shape = request.routeOptions.config?.errorBody?.[err.kind];
      if (shape === 'empty' || err.bare) return reply.code(status).send();
      if (err.body) return reply.code(status).type('application/json').send(err.body);
      if (shape === 'Message') return reply.code(status).type('application/json').send({ Message: err.message });
      return reply.code(status).type('application/json').send(errorBody(rootUrl, err.message));
    }
    const fe = err as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
    if (fe.validation) {
      // A path segment that is not a valid value (an id that is not an int64) names nothing:
      // Gitea's path parsing gives 0 there, and the look-up a 404.
      if (fe.validationContext === 'params') return reply.code(404).type('application/json').send(errorBody(rootUrl, 'not found'));
      return reply.code(422).type('application/json').send(errorBody(rootUrl, validationMessage(fe.validation, fe.validationContext)));
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send(errorBody(rootUrl, fe.message));
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      // Body parse errors (malformed JSON, too large, empty JSON body...) are the client's.
      const code = fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 422 : fe.statusCode;
      return reply.code(code).type('application/json').send(errorBody(rootUrl, fe.message));
    }
    const mapped = clientErrorOf(err);
    if (mapped) return reply.code(statusOf(mapped, request.routeOptions.config?.errorStatus)).type('application/json').send(errorBody(rootUrl, mapped.message));
    // Gitea's generic 500: an empty message. The detail (a driver message can carry source
    // paths, SQL and row values) goes to the log only, under the request id.
    request.log.error({ err, reqId: request.id }, 'internal server error');
    return reply.code(500).type('application/json').send(errorBody(rootUrl, ''));
  });

  // A known path asked with a method it does not serve is 405 with an empty body, as Gitea's
  // router answers; anything else is Gitea's 404 body.
  const paths: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    const source = `^${route.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_][\w-]*/g, '[^/]+').replace(/\*/g, '.*')}/?$`;
    let entry = paths.find((p) => p.pattern.source === source);
    if (!entry) paths.push((entry = { pattern: new RegExp(source), methods: new Set() }));
    for (const m of [route.method].flat()) entry.methods.add(m);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const known = paths.find((p) => p.pattern.test(path) && !p.methods.has(request.method));
    if (known) return reply.code(405).header('Allow', [...known.methods].filter((m) => m !== 'HEAD').join(', ')).send();
    // A path no route knows is answered by Gitea's router itself, in plain text.
    return reply.code(404).type('text/plain; charset=utf-8').send('404 page not found\n');
  });
}

export default shared(errorsPlugin);
