/** Forks: GET /repos/{owner}/{repo}/forks and generation from a template repository.
 * Forks: GET /repos/{owner}/{repo}/forks (anyone who can read), POST (reqRepoReader(code)). */
import type { FastifyInstance } from 'fastify';
import { CODE_READ } from '../plugins/repo-assignment';
import { listOf, ownerRepoParams, ref } from '../schemas';
import { AccessMode } from '../services/convert';
import { errors, paging, pagingQuery, sendPage } from './helpers';
import { GenerateOwnerMissingError, type GenerateInput } from '../services/template-generate';

type RepoParams = { owner: string; repo: string };

export default async function forkRoutes(app: FastifyInstance) {
  const { convert, forks } = app.services;
  const tags = ['repository'];

  app.get<{ Params: RepoParams }>(
    '/repos/:owner/:repo/forks',
    {
      config: { scopes: ['repository'], repo: { access: 'read' } },
      schema: {
        tags,
        operationId: 'listForks',
        summary: "List a repository's forks",
        params: ownerRepoParams,
        querystring: { type: 'object', properties: { ...pagingQuery } },
        response: { 200: listOf('Repository'), ...errors(404) },
      },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, modes, total } = await forks.list(request.repoCtx.repo, request.doer, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((r, i) => convert.repo(r, modes[i])), total, p);
    },
  );

  app.post<{ Params: RepoParams; Body: { organization?: string; name?: string } }>(
    '/repos/:owner/:repo/forks',
    {
      config: { auth: 'required', scopes: ['repository'], repo: CODE_READ },
      schema: {
        tags,
        operationId: 'createFork',
        summary: 'Fork a repository',
        params: ownerRepoParams,
        body: ref('CreateForkOption'),
        response: { 202: ref('Repository'), ...errors(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const doer = request.doer!;
      const base = request.repoCtx.repo;
      const owner = await forks.targetOwner(doer, request.body?.organization);
      const fork = await forks.fork(doer, owner, base, request.body?.name);
      return reply.code(202).send(convert.repo(fork, AccessMode.Owner));
    },
  );
}

/** POST /repos/{template_owner}/{template_repo}/generate (reqRepoReader(code)). */
export async function generateRoutes(app: FastifyInstance) {
  const { convert, templates } = app.services;
  app.post<{ Params: RepoParams; Body: GenerateInput }>(
    '/repos/:owner/:repo/generate',
    {
      config: { auth: 'required', scopes: ['repository'], repo: CODE_READ, errorStatus: { AlreadyExists: 409 } },
      schema: {
        tags: ['repository'],
        operationId: 'generateRepo',
        summary: 'Create a repository using a template',
        params: ownerRepoParams,
        body: ref('GenerateRepoOption'),
        response: { 201: ref('Repository'), ...errors(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      try {
        const repo = await templates.generate(request.doer!, request.repoCtx.repo, request.body);
        return reply.code(201).send(convert.repo(repo, AccessMode.Owner));
      } catch (err) {
        // Gitea's only error body of another shape.
        if (err instanceof GenerateOwnerMissingError) return reply.code(404).send({ error: err.message });
        throw err;
      }
    },
  );
}
