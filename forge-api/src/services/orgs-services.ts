/** Issue 6's services (teams, webhooks + delivery worker, keys, packages, cron, HTTP signatures). */
import type { ForgeConfig } from '../config';
import type { Converter } from './convert';
import { CronService } from './cron';
import type { Prisma } from './database';
import { HttpSignatureService } from './httpsig';
import { KeyService } from './keys';
import { PackageService } from './packages';
import type { PermissionService } from './permissions';
import { TeamService } from './teams';
import { WebhookService } from './webhooks';
import { DeliveryWorker } from './webhooks/deliver';

export interface OrgsServices {
  teams: TeamService;
  /** Webhook CRUD and notify*(): queue deliveries for repository, issue, comment, push events. */
  webhooks: WebhookService;
  deliveries: DeliveryWorker;
  keys: KeyService;
  packages: PackageService;
  cron: CronService;
  httpsig: HttpSignatureService;
}

export function createOrgsServices(prisma: Prisma, config: ForgeConfig, convert: Converter, permissions: PermissionService): OrgsServices {
  return {
    teams: new TeamService(prisma),
    webhooks: new WebhookService(prisma, convert),
    deliveries: new DeliveryWorker(prisma, config),
    keys: new KeyService(prisma),
    packages: new PackageService(prisma, config, permissions, convert),
    cron: new CronService(prisma),
    httpsig: new HttpSignatureService(prisma, () => config.sshTrustedUserCaKeys),
  };
}
