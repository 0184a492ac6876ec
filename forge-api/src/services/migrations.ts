/**
 * Migrations and pull mirrors (POST /repos/migrate, POST /repos/{owner}/{repo}/mirror-sync):
 * a new repository made the usual way (RepoService.create), then the source's branches and
 * tags fetched into it over git (http, https or git URLs only). Where a migration may clone
 * from follows Gitea's [migrations] settings: ALLOWED_DOMAINS (default: any host whose
 * addresses are all external), BLOCKED_DOMAINS, and ALLOW_LOCALNETWORKS (default false: no
 * loopback or private addresses). The host's addresses are resolved and checked before git
 * runs. A mirror keeps the source (with its credentials) as the `origin` remote in its git
 * config, as Gitea does, and is read-only to pushes; mirror-sync fetches it again (pruning
 * when enable_prune). The update_mirrors task fetches the mirrors whose next update time has
 * come (Gitea's MirrorsIterate: next_update_unix reached and not 0, least recently updated
 * first, at most PULL_LIMIT a run); a sync schedules the next one an interval later, and a
 * failed one only touches the update time, so it is tried again at the next run. Syncs of one
 * mirror never overlap (Gitea's per-repository lock).
 */
import dns from 'node:dns/promises';
import net from 'node:net';
import type { ForgeConfig } from '../config';
import type { Prisma } from './database';
import { InvalidError, MalformedError, PermissionDeniedError } from './errors';
import { runGit, GitCommandError } from './git/run';
import { USER_TYPE_ORGANIZATION, type PermissionService } from './permissions';
import type { RepoService, RepoWithOwner } from './repos';
import type { User } from './records';
import { parseAllowedHostList } from './webhooks/allowed-hosts';
import { formatGoDuration } from './repo-settings';
import { parseGoDuration } from './go-duration';

export interface MigrateInput {
  clone_addr: string;
  repo_name: string;
  repo_owner?: string;
  uid?: number;
  auth_username?: string;
  auth_password?: string;
  auth_token?: string;
  mirror?: boolean;
  private?: boolean;
  description?: string;
  mirror_interval?: string;
  service?: string;
}

const MIRROR_REFSPECS = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'];
const DEFAULT_MIRROR_INTERVAL = '8h0m0s';
/** Pull mirrors the update_mirrors task fetches per run (Gitea's [cron.update_mirrors] PULL_LIMIT default). */
export const PULL_LIMIT = 50;

/** The next scheduled sync of a mirror with this interval, from `now` (null: interval 0, never; Gitea's ScheduleNextUpdate). */
export function nextMirrorUpdate(interval: string, now: Date): Date | null {
  const ms = parseGoDuration(interval) ?? 0;
  return ms > 0 ? new Date(now.getTime() + ms) : null;
}

/** A URL without its user information (Gitea's SanitizeURL for original_url). */
export function sanitizeUrl(u: string): string {
  try {
    const url = new URL(u);
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return u;
  }
}

export class MigrationService {
  /** The sync running per mirror (repository id): the next one waits for it. */
  private readonly syncing = new Map<number, Promise<unknown>>();

  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
    private readonly permissions: PermissionService,
    private readonly repos: RepoService,
  ) {}

  /** Gitea's owner checks for a migration. */
  async owner(doer: User, o: MigrateInput): Promise<User> {
    let owner: User | null = doer;
    if (o.repo_owner) {
      owner = await this.prisma.user.findFirst({ where: { lowerName: o.repo_owner.toLowerCase() } });
      if (!owner) throw new InvalidError(`user redirect does not exist [name: ${o.repo_owner}]`);
    } else if (o.uid) {
      owner = await this.prisma.user.findUnique({ where: { id: o.uid } });
      if (!owner) throw new InvalidError(`user does not exist [uid: ${o.uid}, name: ]`);
    }
    if (!doer.isAdmin) {
      if (owner.type !== USER_TYPE_ORGANIZATION && owner.id !== doer.id) throw new PermissionDeniedError('Given user is not an organization.');
      if (owner.type === USER_TYPE_ORGANIZATION && !(await this.permissions.isOrgOwner(doer.id, owner.id))) {
        throw new PermissionDeniedError('Given user is not owner of organization.');
      }
    }
    return owner;
  }

  /**
   * Gitea's allow/block lists of [migrations] for a remote host (migrations, pull and push
   * mirrors): every address the name resolves to must be allowed (by default: external
   * addresses only; loopback and private ones too with ALLOW_LOCALNETWORKS) and none blocked.
   * A name that does not resolve is refused.
   */
  async hostAllowed(hostname: string): Promise<boolean> {
    const host = hostname.replace(/^\[|\]$/g, '');
    const blocked = this.config.migrationsBlockedDomains ? parseAllowedHostList(this.config.migrationsBlockedDomains) : null;
    const allowed = parseAllowedHostList(
      this.config.migrationsAllowedDomains || (this.config.migrationsAllowLocalNetworks ? '*' : 'external'),
    );
    const local = this.config.migrationsAllowLocalNetworks ? parseAllowedHostList('loopback,private') : null;
    let addresses: string[];
    if (net.isIP(host)) addresses = [host];
    else {
      try {
        addresses = (await dns.lookup(host, { all: true })).map((a) => a.address);
      } catch {
        addresses = [];
      }
    }
    return (
      addresses.length > 0 &&
      addresses.every((a) => allowed.allowsHostName(host) || allowed.allowsAddress(a) || (local?.allowsAddress(a) ?? false)) &&
      !(blocked && (blocked.allowsHostName(host) || addresses.some((a) => blocked.allowsAddress(a))))
    );
  }

  /** Gitea's ParseRemoteAddr + IsMigrateURLAllowed: the URL to give git, with credentials. */
  async checkUrl(addr: string, username?: string, password?: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(addr);
    } catch {
      throw new InvalidError(addr.startsWith('/') || addr.startsWith('file:') ? 'You are not allowed to import local repositories.' : 'The provided URL is invalid.');
    }
    if (url.protocol === 'file:') throw new InvalidError('You are not allowed to import local repositories.');
    if (!['http:', 'https:', 'git:'].includes(url.protocol) || !url.hostname) throw new InvalidError('The provided URL is invalid.');
    if (/%0[ad]/i.test(addr)) throw new InvalidError('The provided URL is invalid.');
    if (!(await this.hostAllowed(url.hostname))) throw new InvalidError('You can not import from disallowed hosts.');
    if (username || password) {
      url.username = encodeURIComponent(username ?? '');
      url.password = encodeURIComponent(password ?? '');
    }
    return url.toString();
  }

  async migrate(doer: User, o: MigrateInput): Promise<RepoWithOwner> {
    const owner = await this.owner(doer, o);
    const remote = await this.checkUrl(o.clone_addr, o.auth_username, o.auth_token || o.auth_password);
    let interval = DEFAULT_MIRROR_INTERVAL;
    if (o.mirror && o.mirror_interval) {
      const ms = parseGoDuration(o.mirror_interval);
      if (ms === null) throw new InvalidError(`time: invalid duration "${o.mirror_interval}"`);
      interval = formatGoDuration(ms);
    }
    const repo = await this.repos.create(doer, owner, { name: o.repo_name, description: o.description ?? '', private: o.private ?? false });
    const disk = this.repos.diskPath(owner.name, repo.name);
    try {
      await runGit(['--git-dir', disk, 'remote', 'add', 'origin', remote]);
      await this.fetch(disk, true);
      const head = await this.remoteHead(disk);
      if (head) await runGit(['--git-dir', disk, 'symbolic-ref', 'HEAD', `refs/heads/${head}`]);
      if (!o.mirror) await runGit(['--git-dir', disk, 'remote', 'remove', 'origin']);
      const now = new Date();
      await this.prisma.repository.update({
        where: { id: repo.id },
        data: {
          originalUrl: sanitizeUrl(o.clone_addr),
          ...(head ? { defaultBranch: head } : {}),
          ...(o.mirror ? { isMirror: true, mirrorInterval: interval, mirrorUpdatedAt: now, mirrorLastSyncAt: now, mirrorNextUpdateAt: nextMirrorUpdate(interval, now) } : {}),
        },
      });
      await this.repos.refsChanged(doer, repo.id);
    } catch (err) {
      await this.repos.delete(doer, repo, 4).catch(() => undefined);
      if (err instanceof GitCommandError) throw new InvalidError(`Migration failed: ${redact(err.stderr.trim(), remote)}`);
      throw err;
    }
    return this.prisma.repository.findUniqueOrThrow({ where: { id: repo.id }, include: { owner: true } });
  }

  private async fetch(disk: string, prune: boolean): Promise<void> {
    await runGit(['--git-dir', disk, 'fetch', '--quiet', '--no-tags', ...(prune ? ['--prune'] : []), 'origin', ...MIRROR_REFSPECS]);
  }

  /** The remote's default branch (its HEAD), or null. */
  private async remoteHead(disk: string): Promise<string | null> {
    const out = await runGit(['--git-dir', disk, 'ls-remote', '--symref', 'origin', 'HEAD']).catch(() => '');
    const m = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out);
    return m ? m[1] : null;
  }

  /** POST /mirror-sync: fetches the mirror's source again. */
  async sync(doer: User, repo: RepoWithOwner): Promise<void> {
    if (!repo.isMirror) throw new MalformedError('Repository is not a mirror');
    await this.serialised(repo.id, async () => {
      try {
        await this.fetch(this.repos.diskPath(repo.owner.name, repo.name), repo.mirrorEnablePrune);
      } catch (err) {
        if (err instanceof GitCommandError) throw new InvalidError(`mirror sync failed: ${err.stderr.trim()}`);
        throw err;
      }
      await this.synced(doer, repo.id);
    });
  }

  /** After a successful fetch: the times, the next scheduled sync, and what the new refs change. */
  private async synced(doer: User, repoId: number): Promise<void> {
    const now = new Date();
    const { mirrorInterval } = await this.prisma.repository.findUniqueOrThrow({ where: { id: repoId }, select: { mirrorInterval: true } });
    await this.prisma.repository.update({ where: { id: repoId }, data: { mirrorUpdatedAt: now, mirrorLastSyncAt: now, mirrorNextUpdateAt: nextMirrorUpdate(mirrorInterval, now) } });
    await this.repos.refsChanged(doer, repoId);
  }

  private serialised<T>(repoId: number, run: () => Promise<T>): Promise<T> {
    const before = this.syncing.get(repoId) ?? Promise.resolve();
    const p = before.catch(() => undefined).then(run);
    const settled = p.catch(() => undefined);
    this.syncing.set(repoId, settled);
    void settled.then(() => {
      if (this.syncing.get(repoId) === settled) this.syncing.delete(repoId);
    });
    return p;
  }

  /**
   * The update_mirrors task's pull side: fetches every mirror whose next update time has come,
   * one at a time, in the name of the repository's owner (Gitea's scheduled syncs push as the
   * owner). Returns how many synced; a failure is logged and leaves the mirror due.
   */
  async syncDue(logError: (err: unknown, what: string) => void, limit = PULL_LIMIT): Promise<number> {
    const due = await this.prisma.repository.findMany({
      where: { isMirror: true, mirrorNextUpdateAt: { not: null, lte: new Date() } },
      orderBy: [{ mirrorUpdatedAt: 'asc' }, { id: 'asc' }],
      take: limit,
      include: { owner: true },
    });
    let synced = 0;
    for (const repo of due) {
      try {
        await this.serialised(repo.id, async () => {
          await this.fetch(this.repos.diskPath(repo.owner.name, repo.name), repo.mirrorEnablePrune);
          await this.synced(repo.owner, repo.id);
        });
        synced++;
      } catch (err) {
        await this.prisma.repository.updateMany({ where: { id: repo.id }, data: { mirrorUpdatedAt: new Date() } });
        logError(err instanceof GitCommandError ? new Error(`mirror ${repo.ownerName}/${repo.name}: ${err.stderr.trim()}`) : err, 'pull mirror sync');
      }
    }
    return synced;
  }
}

/** Never echo credentials back in an error. */
function redact(text: string, remote: string): string {
  try {
    const u = new URL(remote);
    let out = text;
    if (u.password) out = out.split(u.password).join('***');
    return out;
  } catch {
    return text;
  }
}
