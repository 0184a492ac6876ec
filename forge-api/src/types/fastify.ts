/** The forge's decorations on Fastify (the contract GIT's routes rely on). */
import type { ForgeConfig } from '../config';
import type { AuthResolver } from '../plugins/auth';
import type { Prisma } from '../services/database';
import type { Services } from '../services';

declare module 'fastify' {
  interface FastifyInstance {
    config: ForgeConfig;
    prisma: Prisma;
    /** `app.auth.resolveUser(request)`: credentials -> AuthResult (throws ApiError 401). */
    auth: AuthResolver;
    services: Services;
  }
}

export {};
