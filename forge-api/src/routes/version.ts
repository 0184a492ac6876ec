import type { FastifyInstance } from 'fastify';
import { obj, str } from '../schemas';

export default async function versionRoutes(app: FastifyInstance) {
  app.get(
    '/version',
    {
      schema: {
        tags: ['miscellaneous'],
        operationId: 'getVersion',
        summary: "Returns the version of the server (plain semver: Gitea's clients gate features on it)",
        response: { 200: obj({ version: str }, [], { $id: 'ServerVersion' }) },
      },
    },
    async () => ({ version: app.config.version }),
  );
}
