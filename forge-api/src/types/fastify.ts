/** The forge's decorations on Fastify (what routes and plugins rely on). */
import type { ForgeConfig } from '../config';
import type { AuthResolver } from '../plugins/auth';
import type { Prisma } from '../services/database';
import type { Services } from '../services';

declare module 'fastify' {
  interface FastifyInstance {
    config: ForgeConfig;
    prisma: Prisma;
    /** `app.auth.resolveUser(request)`: credentials -> AuthResult (throws UnauthenticatedError). */
    auth: AuthResolver;
    services: Services;
    /** The built-in SSH server's port once listening (START_SSH_SERVER), else 0. */
    sshPort: number;
  }
}

export {};
