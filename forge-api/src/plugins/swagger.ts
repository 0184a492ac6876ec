/**
 * The OpenAPI (Swagger 2.0, as Gitea publishes) document generated from the route schemas,
 * served at /swagger.v1.json, and the reference UI at /api/swagger, when ENABLE_SWAGGER.
 */
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { shared } from './shared';

async function swaggerPlugin(app: FastifyInstance) {
  const url = new URL(app.config.rootUrl);
  await app.register(swagger, {
    swagger: {
      info: { title: 'Portcullis Forge API (Gitea-compatible)', version: app.config.version, description: 'Gitea API v1 compatible.' },
      host: url.host,
      basePath: `${url.pathname.replace(/\/$/, '')}/api/v1`,
      schemes: [url.protocol.replace(':', '')],
      consumes: ['application/json', 'text/plain'],
      produces: ['application/json', 'text/html'],
      securityDefinitions: {
        BasicAuth: { type: 'basic' },
        AuthorizationHeaderToken: { type: 'apiKey', name: 'Authorization', in: 'header', description: 'API tokens must be prepended with "token" followed by a space.' },
        Token: { type: 'apiKey', name: 'token', in: 'query' },
        AccessToken: { type: 'apiKey', name: 'access_token', in: 'query' },
        SudoParam: { type: 'apiKey', name: 'sudo', in: 'query', description: 'Sudo API request as the user provided as the key. Admin privileges are required.' },
        SudoHeader: { type: 'apiKey', name: 'Sudo', in: 'header', description: 'Sudo API request as the user provided as the key. Admin privileges are required.' },
        TOTPHeader: { type: 'apiKey', name: 'X-Portcullis-OTP', in: 'header', description: 'Must be used in combination with BasicAuth if two-factor authentication is enabled (X-Gitea-OTP and X-Forgejo-OTP are accepted too).' },
      },
      security: [
        { BasicAuth: [] },
        { Token: [] },
        { AccessToken: [] },
        { AuthorizationHeaderToken: [] },
        { SudoParam: [] },
        { SudoHeader: [] },
        { TOTPHeader: [] },
      ],
    },
    stripBasePath: true,
    transformObject: (document) => draft4Bounds('swaggerObject' in document ? document.swaggerObject : document.openapiObject),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String((json as { $id?: string }).$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/api/swagger', uiConfig: { docExpansion: 'none', deepLinking: true } });
  app.get('/swagger.v1.json', { schema: { hide: true } }, async () => app.swagger());
}

/**
 * Route schemas are validated by Ajv (JSON Schema draft 7), where `exclusiveMaximum` is the
 * bound itself; Swagger 2.0 uses draft 4's form, a `maximum` with `exclusiveMaximum: true`.
 * Generators and fuzzers that read the document refuse the draft-7 form, so it is rewritten
 * here, in place (the document is built once and cached).
 */
function draft4Bounds<T>(node: T): T {
  if (Array.isArray(node)) {
    for (const item of node) draft4Bounds(item);
  } else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    for (const [bound, flag] of [['maximum', 'exclusiveMaximum'], ['minimum', 'exclusiveMinimum']] as const) {
      if (typeof o[flag] === 'number') {
        o[bound] = o[flag];
        o[flag] = true;
      }
    }
    for (const value of Object.values(o)) draft4Bounds(value);
  }
  return node;
}

export default shared(swaggerPlugin);
