/**
 * Repository endpoints whose answer is fixed by the server's configuration, as Gitea's:
 * - signing keys (GET /signing-key.gpg, /signing-key.pub, also under a repository): the forge
 *   signs no commits ([repository.signing] SIGNING_KEY unset), so Gitea's 404 "no signing key";
 * - git hooks (GET /hooks/git, GET/PATCH/DELETE /hooks/git/{id}): server-side hooks edited
 *   through the API run arbitrary code on the server, which Gitea allows only with
 *   [security] DISABLE_GIT_HOOKS=false (default true); the forge never allows it, so a
 *   repository admin gets Gitea's 403 "must be allowed to edit Git hooks" (after reqToken and
 *   reqAdmin, in that order).
 */
import type { FastifyInstance } from 'fastify';
import { CODE_READ, REPO_ADMIN } from '../plugins/repo-assignment';
import { obj, ownerRepoParams, str } from '../schemas';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { errors } from './helpers';

const hookParams = obj({ owner: str, repo: str, id: str }, ['owner', 'repo', 'id']);

export default async function repoMiscRoutes(app: FastifyInstance) {
  const noSigningKey = async () => {
    throw new NotFoundError('no signing key');
  };
  const signing = (operationId: string, summary: string) => ({
    schema: { tags: ['miscellaneous'], operationId, summary, produces: ['text/plain'], response: { 200: str, ...errors(404) } },
  });
  app.get('/signing-key.gpg', signing('getSigningKey', 'Get default signing-key.gpg'), noSigningKey);
  app.get('/signing-key.pub', signing('getSigningKeySSH', 'Get default signing-key.pub'), noSigningKey);
  const repoSigning = (operationId: string, summary: string) => ({
    config: { scopes: ['repository' as const], repo: { access: 'read' as const } },
    schema: { tags: ['repository'], operationId, summary, params: ownerRepoParams, produces: ['text/plain'], response: { 200: str, ...errors(404) } },
  });
  app.get('/repos/:owner/:repo/signing-key.gpg', repoSigning('repoSigningKey', 'Get signing-key.gpg for given repository'), noSigningKey);
  app.get('/repos/:owner/:repo/signing-key.pub', repoSigning('repoSigningKeySSH', 'Get signing-key.pub for given repository'), noSigningKey);

  const hooksConfig = { auth: 'required' as const, scopes: ['repository' as const], repo: REPO_ADMIN };
  const denied = async () => {
    throw new PermissionDeniedError('must be allowed to edit Git hooks');
  };
  const tags = ['repository'];
  app.get('/repos/:owner/:repo/hooks/git', { config: hooksConfig, schema: { tags, operationId: 'repoListGitHooks', summary: 'List the Git hooks in a repository', params: ownerRepoParams, response: errors(401, 403, 404) } }, denied);
  app.get('/repos/:owner/:repo/hooks/git/:id', { config: hooksConfig, schema: { tags, operationId: 'repoGetGitHook', summary: 'Get a Git hook', params: hookParams, response: errors(401, 403, 404) } }, denied);
  app.patch('/repos/:owner/:repo/hooks/git/:id', {
    config: hooksConfig,
    schema: { tags, operationId: 'repoEditGitHook', summary: 'Edit a Git hook in a repository', params: hookParams, body: obj({ content: str }), response: errors(401, 403, 404) },
  }, denied);
  app.delete('/repos/:owner/:repo/hooks/git/:id', { config: hooksConfig, schema: { tags, operationId: 'repoDeleteGitHook', summary: 'Delete a Git hook in a repository', params: hookParams, response: errors(401, 403, 404) } }, denied);
}

/** Issue templates and config from the default branch (reqRepoReader(code)). */
export async function issueTemplateRoutes(app: FastifyInstance) {
  const { issueTemplates } = app.services;
  const config = { scopes: ['repository' as const], repo: CODE_READ };
  const tags = ['repository'];
  app.get('/repos/:owner/:repo/issue_templates', { config, schema: { tags, operationId: 'repoGetIssueTemplates', summary: 'Get available issue templates for a repository', params: ownerRepoParams } }, async (request, reply) => {
    const { templates, errors: count } = await issueTemplates.templates(request.repoCtx.repo);
    if (count) reply.header('X-Gitea-Warning', `error occurs when parsing issue template: count=${count}`);
    // Gitea encodes a nil list as null.
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(templates.length ? templates : null));
  });
  app.get('/repos/:owner/:repo/issue_config', { config, schema: { tags, operationId: 'repoGetIssueConfig', summary: 'Returns the issue config for a repo', params: ownerRepoParams } }, async (request) => {
    return (await issueTemplates.config(request.repoCtx.repo)).config;
  });
  app.get('/repos/:owner/:repo/issue_config/validate', { config, schema: { tags, operationId: 'repoValidateIssueConfig', summary: 'Returns the validation information for a issue config', params: ownerRepoParams } }, async (request) => {
    const { error } = await issueTemplates.config(request.repoCtx.repo);
    return { valid: error === null, message: error ?? '' };
  });
}
