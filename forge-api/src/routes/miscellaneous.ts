/**
 * Gitea's "miscellaneous" API group (mounted under /api/v1): markdown/markup rendering,
 * .gitignore, license and label templates, nodeinfo. No token scope applies here (Gitea 1.21+);
 * rendering needs a signed-in caller (401 otherwise), the rest is public.
 */
import { GITEA_API_VERSION } from '../config';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { renderMarkup, markdownMode, markupMode, MarkupError } from '../services/markup';
import {
  gitignoreNames,
  gitignoreText,
  labelTemplate,
  labelTemplateNames,
  licenseNames,
  licenseTemplate,
} from '../services/templates';

export interface NodeInfoUsage {
  users: { total: number; activeHalfyear: number; activeMonth: number };
  localPosts: number;
  localComments: number;
}

export interface MiscDeps {
  rootUrl: string;
  version: string;
  openRegistrations: boolean;
  /** Whether the caller is signed in (POST /markdown, /markdown/raw, /markup require it). */
  isSignedIn(request: FastifyRequest): boolean;
  /** Of these @names, the ones that exist (linked as mentions). */
  mentionable(names: string[]): Promise<string[]>;
  usage(): Promise<NodeInfoUsage>;
}

export interface MiscOptions {
  deps?: Partial<MiscDeps>;
}

type AnyRecord = Record<string, any>;

const DAY = 24 * 3600 * 1000;

async function safeCount(fn: () => Promise<number> | undefined): Promise<number> {
  try {
    return (await fn()) ?? 0;
  } catch {
    return 0;
  }
}

function defaultDeps(app: FastifyInstance): MiscDeps {
  const a = app as unknown as AnyRecord;
  const prisma = a.prisma as AnyRecord | undefined;
  return {
    rootUrl: a.config?.rootUrl ?? 'http://localhost:3000/',
    version: a.config?.version ?? GITEA_API_VERSION,
    openRegistrations: false,
    isSignedIn(request) {
      // The auth plugin resolves the caller into request.auth before handlers run.
      if (!app.hasRequestDecorator('auth')) return true;
      const r = request as unknown as AnyRecord;
      return Boolean(r.doer ?? r.auth?.user);
    },
    async mentionable(names) {
      if (!prisma?.user) return [];
      const rows: Array<{ name: string }> = await prisma.user.findMany({
        where: { lowerName: { in: names.map((n) => n.toLowerCase()) } },
        select: { name: true },
      });
      return rows.map((r) => r.name);
    },
    async usage() {
      const now = Date.now();
      const users = (where: AnyRecord) => safeCount(() => prisma?.user?.count({ where: { type: 0, ...where } }));
      return {
        users: {
          total: await users({}),
          activeMonth: await users({ lastLoginAt: { gte: new Date(now - 30 * DAY) } }),
          activeHalfyear: await users({ lastLoginAt: { gte: new Date(now - 182 * DAY) } }),
        },
        localPosts: await safeCount(() => prisma?.issue?.count()),
        localComments: await safeCount(() => prisma?.comment?.count()),
      };
    },
  };
}

/* ---------- schemas ---------- */

const str = { type: 'string' } as const;
const errorSchema = {
  type: 'object',
  properties: { message: str, url: str, errors: { type: ['array', 'null'], items: str } },
} as const;
const html = { description: 'rendered HTML', type: 'string' } as const;
const renderResponses = { 200: html, 401: errorSchema, 422: { description: 'unknown mode or unsupported file (text/plain)', type: 'string' } };
const nameParam = { type: 'object', properties: { name: str }, required: ['name'] } as const;

const markdownOption = {
  type: 'object',
  properties: {
    Context: { ...str, description: 'URL path of the page the text belongs to, e.g. /{owner}/{repo}/src/branch/{branch}' },
    Mode: { ...str, description: 'markdown (default), gfm or comment' },
    Text: str,
    Wiki: { type: 'boolean', description: 'deprecated: render as wiki (same as Mode "wiki")' },
  },
} as const;

const markupOption = {
  type: 'object',
  properties: {
    ...markdownOption.properties,
    Mode: { ...str, description: 'markdown (default), gfm, comment, wiki or file' },
    FilePath: { ...str, description: 'path of the file in mode "file"; its extension picks the renderer' },
    BranchPath: { ...str, description: 'accepted for compatibility; the branch comes from Context' },
  },
} as const;

const licenseEntry = { type: 'object', properties: { key: str, name: str, url: str }, required: ['key', 'name', 'url'] } as const;
const licenseInfo = {
  type: 'object',
  properties: { key: str, name: str, url: str, body: str, implementation: str },
  required: ['key', 'name', 'url', 'body', 'implementation'],
} as const;
const labelTemplateSchema = {
  type: 'object',
  properties: { name: str, exclusive: { type: 'boolean' }, color: str, description: str },
  required: ['name', 'exclusive', 'color', 'description'],
} as const;
const nodeInfoSchema = {
  type: 'object',
  properties: {
    version: str,
    software: { type: 'object', properties: { name: str, version: str, repository: str, homepage: str } },
    protocols: { type: 'array', items: str },
    services: {
      type: 'object',
      properties: { inbound: { type: 'array', items: str }, outbound: { type: 'array', items: str } },
    },
    openRegistrations: { type: 'boolean' },
    usage: {
      type: 'object',
      properties: {
        users: { type: 'object', properties: { total: { type: 'integer' }, activeHalfyear: { type: 'integer' }, activeMonth: { type: 'integer' } } },
        localPosts: { type: 'integer' },
        localComments: { type: 'integer' },
      },
    },
    metadata: { type: 'object', additionalProperties: true },
  },
} as const;

function schema(s: Record<string, unknown>): FastifySchema {
  return { tags: ['miscellaneous'], ...s } as FastifySchema;
}

/* ---------- routes ---------- */

export default async function miscRoutes(app: FastifyInstance, opts: MiscOptions = {}) {
  const deps: MiscDeps = { ...defaultDeps(app), ...(opts.deps ?? {}) } as MiscDeps;
  const swaggerUrl = () => `${deps.rootUrl}api/swagger`;

  const notFound = (reply: FastifyReply) => reply.code(404).send({ message: 'not found', url: swaggerUrl(), errors: null });
  const requireSignIn = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (deps.isSignedIn(request)) return true;
    reply.code(401).send({ message: 'token is required', url: swaggerUrl() });
    return false;
  };

  async function render(reply: FastifyReply, mode: string, text: string, context?: string, filePath?: string) {
    try {
      const out = await renderMarkup({ mode, text, context, filePath, appUrl: deps.rootUrl, mentionable: (n) => deps.mentionable(n) });
      return reply.code(200).type('text/html; charset=utf-8').send(out);
    } catch (err) {
      if (err instanceof MarkupError) return reply.code(422).type('text/plain; charset=utf-8').send(`${err.message}\n`);
      throw err;
    }
  }

  interface MarkdownBody {
    Context?: string;
    Mode?: string;
    Text?: string;
    Wiki?: boolean;
    FilePath?: string;
  }

  app.post<{ Body: MarkdownBody | undefined }>(
    '/markdown',
    { config: { auth: 'required' }, schema: schema({ operationId: 'renderMarkdown', summary: 'Render a markdown document as HTML', body: markdownOption, response: renderResponses, produces: ['text/html'] }) },
    async (request, reply) => {
      if (!requireSignIn(request, reply)) return reply;
      const b = request.body ?? {};
      return render(reply, markdownMode(b.Mode, b.Wiki), b.Text ?? '', b.Context);
    },
  );

  // /markdown/raw takes the body as text whatever its Content-Type (Gitea reads it unparsed),
  // so it lives in a child scope whose only parser keeps the body as a string.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    raw.post<{ Body: string | undefined }>(
      '/markdown/raw',
      {
        config: { auth: 'required' },
        schema: schema({
          operationId: 'renderMarkdownRaw',
          summary: 'Render raw markdown as HTML',
          body: { type: 'string', description: 'Request body to render' },
          consumes: ['text/plain'],
          produces: ['text/html'],
          response: { 200: html, 401: errorSchema },
        }),
      },
      async (request, reply) => {
        if (!requireSignIn(request, reply)) return reply;
        return render(reply, 'markdown', typeof request.body === 'string' ? request.body : '');
      },
    );
  });

  app.post<{ Body: MarkdownBody | undefined }>(
    '/markup',
    { config: { auth: 'required' }, schema: schema({ operationId: 'renderMarkup', summary: 'Render a markup document as HTML', body: markupOption, response: renderResponses, produces: ['text/html'] }) },
    async (request, reply) => {
      if (!requireSignIn(request, reply)) return reply;
      const b = request.body ?? {};
      return render(reply, markupMode(b.Mode, b.Wiki), b.Text ?? '', b.Context, b.FilePath);
    },
  );

  app.get(
    '/gitignore/templates',
    { schema: schema({ operationId: 'listGitignoresTemplates', summary: 'Returns a list of all gitignore templates', response: { 200: { type: 'array', items: str } } }) },
    async () => gitignoreNames(),
  );

  app.get<{ Params: { name: string } }>(
    '/gitignore/templates/:name',
    {
      schema: schema({
        operationId: 'getGitignoreTemplateInfo',
        summary: 'Returns information about a gitignore template',
        params: nameParam,
        response: { 200: { type: 'object', properties: { name: str, source: str }, required: ['name', 'source'] }, 404: errorSchema },
      }),
    },
    async (request, reply) => {
      const source = gitignoreText(request.params.name);
      if (source === null) return notFound(reply);
      return { name: request.params.name, source };
    },
  );

  const licenseUrl = (name: string) => `${deps.rootUrl}api/v1/licenses/${encodeURIComponent(name)}`;

  app.get(
    '/licenses',
    { schema: schema({ operationId: 'listLicenseTemplates', summary: 'Returns a list of all license templates', response: { 200: { type: 'array', items: licenseEntry } } }) },
    async () => licenseNames().map((name) => ({ key: name, name, url: licenseUrl(name) })),
  );

  app.get<{ Params: { name: string } }>(
    '/licenses/:name',
    {
      schema: schema({
        operationId: 'getLicenseTemplateInfo',
        summary: 'Returns information about a license template',
        params: nameParam,
        response: { 200: licenseInfo, 404: errorSchema },
      }),
    },
    async (request, reply) => {
      const name = request.params.name;
      const body = licenseTemplate(name);
      if (body === null) return notFound(reply);
      return {
        key: name,
        name,
        url: licenseUrl(name),
        body,
        // GitHub's API carries this sentence on every license; Gitea copies it for compatibility.
        implementation:
          'Create a text file (typically named LICENSE or LICENSE.txt) in the root of your source code and copy the text of the license into the file',
      };
    },
  );

  app.get(
    '/label/templates',
    { schema: schema({ operationId: 'listLabelTemplates', summary: 'Returns a list of all label templates', response: { 200: { type: 'array', items: str } } }) },
    async () => labelTemplateNames(),
  );

  app.get<{ Params: { name: string } }>(
    '/label/templates/:name',
    {
      schema: schema({
        operationId: 'getLabelTemplateInfo',
        summary: 'Returns all labels in a template',
        params: nameParam,
        response: { 200: { type: 'array', items: labelTemplateSchema }, 404: errorSchema },
      }),
    },
    async (request, reply) => {
      const labels = labelTemplate(request.params.name);
      if (labels === null) return notFound(reply);
      return labels;
    },
  );

  app.get(
    '/nodeinfo',
    { schema: schema({ operationId: 'getNodeInfo', summary: 'Returns the nodeinfo of the application', response: { 200: nodeInfoSchema } }) },
    async () => ({
      version: '2.1',
      software: {
        name: 'portcullis-forge',
        version: deps.version,
        repository: '',
        homepage: deps.rootUrl,
      },
      // Gitea's fixed values, kept so clients reading the document see the same shape.
      protocols: ['activitypub'],
      services: { inbound: [], outbound: ['rss2.0'] },
      openRegistrations: deps.openRegistrations,
      usage: await deps.usage(),
      metadata: {},
    }),
  );
}
