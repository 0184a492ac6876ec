/**
 * Push mirrors (Gitea's services/mirror push side): a repository keeps a list of remotes that
 * receive all its branches and tags (`git push --mirror`, deletions included, see
 * git/mirror-remote.ts). A mirror syncs
 * - by hand (POST /push_mirrors-sync, which waits for the pushes and reports the failed ones),
 * - on its interval, through the update_mirrors task (0 disables it),
 * - after each push when sync_on_commit is set: this service listens to the notifier's
 *   `pushed` event, as Gitea's mirror notifier listens to PushCommits (branch creations and
 *   updates, tag creations and deletions; a deleted branch waits for the next sync).
 * Syncs of one mirror never overlap: a request while it runs is queued once and runs after.
 *
 * The remote URL with its credentials lives in the repository's git config only; the table
 * keeps the address without them, the outcome (last_update, last_error with any URL's user
 * information masked) and the schedule.
 */
import crypto from 'node:crypto';
import type { ForgeConfig } from '../config';
import type { PushMirror } from '../../generated/prisma/client';
import { EPOCH, fmtTime } from './convert';
import type { Prisma } from './database';
import { MalformedError, NotFoundError, UnauthenticatedError } from './errors';
import fs from 'node:fs';
import { addMirrorRemote, hasRemote, maskCredentials, pushMirror, removeMirrorRemote, wikiRemoteUrl } from './git/mirror-remote';
import type { PushedRef } from './git/push';
import { parseGoDuration } from './go-duration';
import type { MigrationService } from './migrations';
import type { NotifyListener } from './notify';
import { parseRemoteAddress } from './push-mirror-address';
import { formatGoDuration } from './repo-settings';
import type { RepoService, RepoWithOwner } from './repos';
import type { User } from './records';

export interface CreatePushMirrorInput {
  remote_address?: string;
  remote_username?: string;
  remote_password?: string;
  interval?: string;
  sync_on_commit?: boolean;
}

/** structs.PushMirror */
export interface PushMirrorJson {
  repo_name: string;
  remote_name: string;
  remote_address: string;
  created: string;
  last_update: string;
  last_error: string;
  interval: string;
  sync_on_commit: boolean;
}

/** Mirrors the update_mirrors task queues per run (Gitea's PUSH_LIMIT default). */
export const PUSH_LIMIT = 50;
/** Pushes running at once, whatever the number of mirrors waiting. */
const CONCURRENT_PUSHES = 2;
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Gitea's CryptoRandomString(10) suffix of a remote name. */
function randomSuffix(n = 10): string {
  let out = '';
  for (const b of crypto.randomBytes(n * 2)) {
    if (b < 248) out += ALNUM[b % 62];
    if (out.length === n) break;
  }
  return out.length === n ? out : out + randomSuffix(n - out.length);
}

export class PushMirrorService implements NotifyListener {
  /** Mirrors waiting for a sync, in order; a mirror appears at most once. */
  private readonly waiting: number[] = [];
  private readonly running = new Map<number, Promise<boolean>>();

  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
    private readonly repos: RepoService,
    private readonly migrations: MigrationService,
    /** The wiki repository beside a repository's (which may not exist). */
    private readonly wikiPath: (repo: RepoWithOwner) => string,
    private readonly logError: (err: unknown, what: string) => void,
  ) {}

  json(m: PushMirror, repo: { name: string }): PushMirrorJson {
    return {
      repo_name: repo.name,
      remote_name: m.remoteName,
      remote_address: m.remoteAddress,
      created: fmtTime(m.createdAt),
      last_update: fmtTime(m.lastUpdate, EPOCH),
      last_error: m.lastError,
      interval: formatGoDuration(m.intervalSec * 1000),
      sync_on_commit: m.syncOnCommit,
    };
  }

  async list(repo: RepoWithOwner, skip: number, take: number): Promise<{ rows: PushMirror[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.prisma.pushMirror.findMany({ where: { repoId: repo.id }, orderBy: { id: 'asc' }, skip, take }),
      this.prisma.pushMirror.count({ where: { repoId: repo.id } }),
    ]);
    return { rows, total };
  }

  async get(repo: RepoWithOwner, remoteName: string): Promise<PushMirror> {
    const m = await this.prisma.pushMirror.findUnique({ where: { repoId_remoteName: { repoId: repo.id, remoteName } } });
    if (!m) throw new NotFoundError('not found', [`push mirror does not exist [repo_id: ${repo.id}, remote_name: ${remoteName}]`]);
    return m;
  }

  /** Gitea's CreatePushMirror: the interval first, then the address, then the remote. */
  async create(repo: RepoWithOwner, o: CreatePushMirrorInput): Promise<PushMirror> {
    const rawInterval = o.interval ?? '';
    const ms = parseGoDuration(rawInterval);
    if (ms === null) throw new MalformedError(`invalid interval: time: invalid duration ${JSON.stringify(rawInterval)}`);
    const min = this.config.mirrorMinIntervalMs;
    if (ms !== 0 && ms < min) throw new MalformedError(`interval is shorter than minimum ${formatGoDuration(min)}`);
    // The column holds whole seconds; a non-zero interval never rounds down to "disabled".
    const intervalSec = ms === 0 ? 0 : Math.max(1, Math.round(ms / 1000));

    const address = parseRemoteAddress(o.remote_address ?? '', o.remote_username ?? '', o.remote_password ?? '');
    if (!address.ok) {
      if (address.problem === 'protocol') throw new MalformedError('Invalid mirror protocol');
      if (address.problem === 'url') throw new MalformedError('Invalid Url ');
      throw new UnauthenticatedError('Permission denied');
    }
    if (!(await this.migrations.hostAllowed(address.host))) throw new UnauthenticatedError('Permission denied');

    const remoteName = `remote_mirror_${randomSuffix()}`;
    const row = await this.prisma.pushMirror.create({
      data: { repoId: repo.id, remoteName, remoteAddress: address.display, syncOnCommit: o.sync_on_commit ?? false, intervalSec },
    });
    try {
      await addMirrorRemote(this.diskPath(repo), remoteName, address.url);
      // A repository with a wiki mirrors it too, where the remote has a wiki to receive it.
      if (this.hasWiki(repo)) {
        const wikiUrl = await wikiRemoteUrl(address.url);
        if (wikiUrl) await addMirrorRemote(this.wikiPath(repo), remoteName, wikiUrl);
      }
    } catch (err) {
      await removeMirrorRemote(this.diskPath(repo), remoteName);
      if (this.hasWiki(repo)) await removeMirrorRemote(this.wikiPath(repo), remoteName);
      await this.prisma.pushMirror.delete({ where: { id: row.id } }).catch(() => undefined);
      throw err;
    }
    return row;
  }

  /**
   * Gitea deletes by name without checking that the mirror exists (204 either way). The remote
   * goes too, so its credentials do not stay behind in the git config.
   */
  async delete(repo: RepoWithOwner, remoteName: string): Promise<void> {
    await this.prisma.pushMirror.deleteMany({ where: { repoId: repo.id, remoteName } });
    if (!remoteName.startsWith('remote_mirror_')) return;
    await removeMirrorRemote(this.diskPath(repo), remoteName);
    if (this.hasWiki(repo)) await removeMirrorRemote(this.wikiPath(repo), remoteName);
  }

  /** POST /push_mirrors-sync: syncs every mirror now; the names of those that failed. */
  async syncAll(repo: RepoWithOwner): Promise<string[]> {
    const mirrors = await this.prisma.pushMirror.findMany({ where: { repoId: repo.id }, orderBy: { id: 'asc' } });
    const failed: string[] = [];
    for (const m of mirrors) if (!(await this.syncNow(m.id))) failed.push(m.remoteName);
    return failed;
  }

  /** Syncs one mirror now (after a sync of it that is running); true when the push worked. */
  syncNow(id: number): Promise<boolean> {
    return this.start(id);
  }

  /** Queues a sync in the background (once, however often it is asked for before it starts). */
  enqueue(id: number): void {
    if (!this.waiting.includes(id)) this.waiting.push(id);
    this.pump();
  }

  /** Resolves when nothing is waiting or running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size || this.waiting.length) {
      await Promise.all([...this.running.values()].map((p) => p.catch(() => false)));
      if (!this.running.size && this.waiting.length) this.pump();
    }
  }

  /** The update_mirrors task: queues the mirrors whose interval has passed since their last sync. */
  async queueDue(limit = PUSH_LIMIT): Promise<number> {
    const now = Date.now();
    const candidates = await this.prisma.pushMirror.findMany({
      where: { intervalSec: { gt: 0 }, repo: { isArchived: false } },
      orderBy: [{ lastUpdate: 'asc' }, { id: 'asc' }],
      select: { id: true, intervalSec: true, lastUpdate: true },
    });
    let queued = 0;
    for (const m of candidates) {
      if (queued >= limit) break;
      const last = m.lastUpdate ? m.lastUpdate.getTime() : 0;
      if (last + m.intervalSec * 1000 > now) continue;
      this.enqueue(m.id);
      queued++;
    }
    return queued;
  }

  /** Gitea's mirror notifier: a push of commits or tags syncs the mirrors that sync on commit. */
  async pushed(_pusher: User, repo: RepoWithOwner, ref: PushedRef): Promise<void> {
    if (ref.ref.startsWith('refs/heads/') && /^0+$/.test(ref.after)) return;
    const mirrors = await this.prisma.pushMirror.findMany({ where: { repoId: repo.id, syncOnCommit: true }, select: { id: true } });
    for (const m of mirrors) this.enqueue(m.id);
  }

  private hasWiki(repo: RepoWithOwner): boolean {
    return fs.existsSync(this.wikiPath(repo));
  }

  private diskPath(repo: RepoWithOwner): string {
    return this.repos.diskPath(repo.owner.name, repo.name);
  }

  private pump(): void {
    for (let i = 0; i < this.waiting.length && this.running.size < CONCURRENT_PUSHES; ) {
      const id = this.waiting[i];
      if (this.running.has(id)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      void this.start(id);
    }
  }

  /** Runs a sync of `id` after the one running, if any: syncs of one mirror never overlap. */
  private start(id: number): Promise<boolean> {
    const before = this.running.get(id);
    const p: Promise<boolean> = (before ? before.catch(() => false) : Promise.resolve(false))
      .then(() => this.sync(id))
      .catch((err) => {
        this.logError(err, 'push mirror sync');
        return false;
      })
      .finally(() => {
        if (this.running.get(id) === p) this.running.delete(id);
        this.pump();
      });
    this.running.set(id, p);
    return p;
  }

  /** One push of one mirror; records when it ran and what went wrong. */
  private async sync(id: number): Promise<boolean> {
    const m = await this.prisma.pushMirror.findUnique({ where: { id }, include: { repo: { include: { owner: true } } } });
    if (!m) return false;
    const push = (repoPath: string) => pushMirror(repoPath, m.remoteName).catch((err: Error) => maskCredentials(err.message));
    let error = await push(this.diskPath(m.repo));
    // The wiki follows when it has the remote (Gitea: only after the code pushed).
    const wiki = this.wikiPath(m.repo);
    if (error === null && fs.existsSync(wiki) && (await hasRemote(wiki, m.remoteName))) error = await push(wiki);
    if (error !== null) error = `push failed: ${error}`;
    await this.prisma.pushMirror.updateMany({ where: { id }, data: { lastUpdate: new Date(), lastError: error ?? '' } });
    return error === null;
  }
}
