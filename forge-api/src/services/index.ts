import type { ForgeConfig } from '../config';
import { Converter } from './convert';
import type { Prisma } from './database';
import { OrgService } from './orgs';
import { PermissionService } from './permissions';
import { RepoService } from './repos';
import { TokenService } from './tokens';
import { UserService } from './users';
import { AdminService } from './admin';
import { ActivityService } from './activities';
import { createTrackerServices, type TrackerServices } from './issues';
import { IssueConverter } from './issues/convert';
import { createOrgsServices, type OrgsServices } from './orgs-services';

/** Every service of the forge, built once per app (app.services). */
export interface Services extends OrgsServices {
  convert: Converter;
  permissions: PermissionService;
  users: UserService;
  tokens: TokenService;
  orgs: OrgService;
  repos: RepoService;
  admin: AdminService;
  /** Activity feed rows (recordActivity): issue events now, team feeds and webhooks later. */
  activities: ActivityService;
  /** Issues, comments, attachments, reactions, dependencies, labels, milestones, notifications. */
  tracker: TrackerServices;
}

export function createServices(prisma: Prisma, config: ForgeConfig): Services {
  const permissions = new PermissionService(prisma);
  const users = new UserService(prisma);
  const repos = new RepoService(prisma, config, permissions);
  const convert = new Converter(config);
  const activities = new ActivityService(prisma, permissions, convert, new IssueConverter(config, convert));
  return {
    convert,
    permissions,
    users,
    tokens: new TokenService(prisma),
    orgs: new OrgService(prisma, users, permissions),
    repos,
    admin: new AdminService(prisma, config),
    activities,
    tracker: createTrackerServices(prisma, config, { convert, permissions, repos, activities }),
    ...createOrgsServices(prisma, config, convert, permissions),
  };
}
