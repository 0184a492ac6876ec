import type { ForgeConfig } from '../config';
import { Converter } from './convert';
import type { Prisma } from './database';
import { OrgService } from './orgs';
import { PermissionService } from './permissions';
import { RepoService } from './repos';
import { TokenService } from './tokens';
import { UserService } from './users';
import { AdminService } from './admin';

/** Every service of the forge, built once per app (app.services). */
export interface Services {
  convert: Converter;
  permissions: PermissionService;
  users: UserService;
  tokens: TokenService;
  orgs: OrgService;
  repos: RepoService;
  admin: AdminService;
}

export function createServices(prisma: Prisma, config: ForgeConfig): Services {
  const permissions = new PermissionService(prisma);
  const users = new UserService(prisma);
  const repos = new RepoService(prisma, config, permissions);
  return {
    convert: new Converter(config),
    permissions,
    users,
    tokens: new TokenService(prisma),
    orgs: new OrgService(prisma, users, permissions),
    repos,
    admin: new AdminService(prisma, config),
  };
}
