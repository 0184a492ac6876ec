/**
 * Gitea's error bodies: `{"message": "...", "url": "<ROOT_URL>api/swagger"}` for every error,
 * request validation failures as 422 `[Field]: Rule` (the first one only, as Gitea's binding
 * does), and never a 500 for bad input.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { shared } from './shared';
import { clientErrorOf } from '../services/db-errors';

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** Extra fields merged into the body (e.g. Gitea's `errors` list on 404). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const notFound = (what = 'not found') => new ApiError(404, what);
export const forbidden = (msg: string) => new ApiError(403, msg);
export const unauthorized = (msg = 'token is required') => new ApiError(401, msg);
export const unprocessable = (msg: string) => new ApiError(422, msg);
export const conflict = (msg: string) => new ApiError(409, msg);
export const badRequest = (msg: string) => new ApiError(400, msg);

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

  app.setErrorHandler((err: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ApiError) {
      return reply.code(err.statusCode).type('application/json').send(errorBody(rootUrl, err.message, err.extra));
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
    if (mapped) return reply.code(mapped.statusCode).type('application/json').send(errorBody(rootUrl, mapped.message, mapped.extra));
    // Gitea's generic 500: an empty message. The detail (a driver message can carry source
    // paths, SQL and row values) goes to the log only, under the request id.
    request.log.error({ err, reqId: request.id }, 'internal server error');
    return reply.code(500).type('application/json').send(errorBody(rootUrl, ''));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).type('application/json').send(errorBody(rootUrl, 'not found', { errors: [`${request.method} ${request.url.split('?')[0]} not found`] }));
  });
}

export default shared(errorsPlugin);
