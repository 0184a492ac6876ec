/** POST /admin/cron/{task}: runs a scheduled task now (204; 404 for an unknown task). */
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../services/errors';
import { obj, str } from '../schemas';
import { errors } from './helpers';

export default async function cronRoutes(app: FastifyInstance) {
  const { cron } = app.services;
  app.post<{ Params: { task: string } }>(
    '/admin/cron/:task',
    {
      config: { auth: 'admin', scopes: ['admin'] },
      schema: { tags: ['admin'], operationId: 'adminCronRun', summary: 'Run cron task', params: obj({ task: str }, ['task']), response: { 204: { type: 'null' }, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      if (!cron.has(request.params.task)) throw new NotFoundError('not found', [`cron task does not exist [name: ${request.params.task}]`]);
      // Like Gitea, the task runs in the background; the answer does not wait for it.
      void cron.run(request.params.task).catch((err) => request.log.error({ err }, 'cron task failed'));
      return reply.code(204).send();
    },
  );
}
