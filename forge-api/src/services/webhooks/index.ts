/**
 * Webhooks: system/default (admin), organization or user, and repository hooks; validation as
 * Gitea's API does it; the JSON record; and `notify*` which turn a forge event into one
 * persistent HookTask row per matching active hook. Nothing here talks to a receiver: the
 * DeliveryWorker (deliver.ts) drains the queue in the background, so an API request only pays
 * for an insert.
 */
import crypto from 'node:crypto';
import { InvalidError, NotFoundError, ValidationError } from '../errors';
import type { Converter } from '../convert';
import { AccessMode, fmtTime } from '../convert';
import type { HotReads } from '../fast-reads';
import type { Prisma } from '../database';
import type { Repository, User } from '../records';
import { globError } from '../glob';
import { CONVERTERS, receivesEvent } from './payloads';
import { branchMatches, CONTENT_TYPES, expandEvents, headerEvent, HOOK_TYPES, type HookEvent } from './events';

export type WebhookRow = NonNullable<Awaited<ReturnType<Prisma['webhook']['findUnique']>>>;
type RepoWithOwner = Repository & { owner: User };

export interface CreateHookInput {
  type: string;
  name?: string;
  config: Record<string, string>;
  events?: string[];
  branch_filter?: string;
  authorization_header?: string;
  active?: boolean;
}

export interface EditHookInput {
  name?: string;
  config?: Record<string, string>;
  events?: string[];
  branch_filter?: string;
  authorization_header?: string;
  active?: boolean;
}

/** Where a hook lives. */
export type HookScope = { kind: 'system' } | { kind: 'owner'; ownerId: number } | { kind: 'repo'; repoId: number };

/** Config keys kept per type beyond url/content_type (returned in `config`, as Gitea does for slack). */
const META_KEYS: Record<string, string[]> = {
  slack: ['channel', 'username', 'icon_url', 'color'],
  discord: ['username', 'icon_url'],
  telegram: ['bot_token', 'chat_id', 'thread_id'],
  matrix: ['homeserver_url', 'room_id', 'message_type'],
  packagist: ['username', 'api_token', 'package_url'],
};

/**
 * Types that are sent deliveries: gitea and gogs take the forge's JSON payload as it is, the
 * chat services in payloads/ their own message. Other types are stored and listed but never sent
 * a payload their receiver could not read.
 */
const DELIVERED_TYPES = new Set(['gitea', 'gogs', ...Object.keys(CONVERTERS)]);

function validUrl(u: string): boolean {
  try {
    const parsed = new URL(u);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

function checkHeader(value: string | undefined): void {
  if (value !== undefined && /[\r\n]/.test(value)) throw new InvalidError('Invalid authorization header');
}

/** Gitea binds branch_filter with its GlobPattern rule: a filter that does not compile is a 422 naming why. */
function checkBranchFilter(filter: string | undefined): void {
  const why = filter ? globError(filter) : null;
  if (why) throw new ValidationError(`[BranchFilter]: ${why}`);
}

export class WebhookService {
  /** Called after tasks were queued (the worker wakes up). */
  onQueued: () => void = () => undefined;

  constructor(
    private readonly prisma: Prisma,
    private readonly convert: Converter,
    private readonly hot: HotReads,
  ) {}

  /** Gitea's api.Hook. */
  toJson(h: WebhookRow) {
    const config: Record<string, string> = { url: h.url, content_type: h.contentType };
    // Like Gitea's ToHook, only slack's settings are echoed back (others may hold secrets).
    if (h.type === 'slack') {
      const meta = JSON.parse(h.meta || '{}') as Record<string, string>;
      for (const k of META_KEYS.slack) config[k] = meta[k] ?? '';
    }
    return {
      id: h.id,
      name: h.name,
      type: h.type,
      branch_filter: h.branchFilter,
      config,
      events: JSON.parse(h.events) as string[],
      authorization_header: h.authorizationHeader,
      active: h.active,
      updated_at: fmtTime(h.updatedAt),
      created_at: fmtTime(h.createdAt),
    };
  }

  private where(scope: HookScope) {
    if (scope.kind === 'repo') return { repoId: scope.repoId };
    if (scope.kind === 'owner') return { ownerId: scope.ownerId, repoId: null };
    return { ownerId: null, repoId: null };
  }

  /** Hooks of a scope; for system hooks `type` is system | default | all (Gitea 1.24+). */
  async list(scope: HookScope, o: { skip?: number; take?: number; adminType?: string } = {}) {
    const where: Record<string, unknown> = this.where(scope);
    if (scope.kind === 'system') {
      const t = o.adminType || 'system';
      if (t === 'system') where.isSystem = true;
      else if (t === 'default') where.isSystem = false;
    }
    const [rows, total] = await Promise.all([
      this.prisma.webhook.findMany({ where, orderBy: { id: 'asc' }, skip: o.skip, take: o.take }),
      this.prisma.webhook.count({ where }),
    ]);
    return { rows, total };
  }

  async get(scope: HookScope, id: number): Promise<WebhookRow> {
    const h = await this.prisma.webhook.findFirst({ where: { id, ...this.where(scope) } });
    if (!h) throw new NotFoundError('not found', [`webhook does not exist [id: ${id}]`]);
    return h;
  }

  /** Gitea's CheckCreateHookOption + addHook. */
  async create(scope: HookScope, input: CreateHookInput): Promise<WebhookRow> {
    const type = (input.type ?? '').toLowerCase();
    if (!HOOK_TYPES.includes(type)) throw new InvalidError('Invalid hook type');
    const config = input.config ?? {};
    for (const name of ['url', 'content_type']) {
      if (config[name] === undefined) throw new InvalidError(`Missing config option: ${name}`);
    }
    if (!CONTENT_TYPES.includes(config.content_type)) throw new InvalidError('Invalid content type');
    if (!validUrl(config.url)) throw new InvalidError('Invalid url');
    if (type === 'slack' && !config.channel) throw new InvalidError('Missing config option: channel');
    const method = (config.http_method ?? 'POST').toUpperCase();
    if (!['POST', 'GET', 'PUT'].includes(method)) throw new InvalidError('Invalid http method');
    checkHeader(input.authorization_header);
    checkBranchFilter(input.branch_filter);
    const meta = Object.fromEntries((META_KEYS[type] ?? []).filter((k) => config[k] !== undefined).map((k) => [k, config[k]]));
    return this.prisma.webhook.create({
      data: {
        repoId: scope.kind === 'repo' ? scope.repoId : null,
        ownerId: scope.kind === 'owner' ? scope.ownerId : null,
        isSystem: scope.kind === 'system' && config.is_system_webhook === 'true',
        // Gitea keeps the name without surrounding blanks.
        name: (input.name ?? '').trim(),
        type,
        url: config.url,
        contentType: config.content_type,
        httpMethod: method,
        secret: config.secret ?? '',
        events: JSON.stringify(expandEvents(input.events)),
        meta: JSON.stringify(meta),
        branchFilter: input.branch_filter ?? '',
        authorizationHeader: input.authorization_header ?? '',
        active: input.active ?? false,
      },
    });
  }

  /** Gitea's editHook: events default to push again when the edit gives none. */
  async edit(scope: HookScope, id: number, input: EditHookInput): Promise<WebhookRow> {
    const h = await this.get(scope, id);
    const data: Record<string, unknown> = { updatedAt: new Date() };
    if (input.name !== undefined) data.name = input.name.trim();
    const config = input.config;
    if (config) {
      if (config.url !== undefined) {
        if (!validUrl(config.url)) throw new InvalidError('Invalid url');
        data.url = config.url;
      }
      if (config.content_type !== undefined) {
        if (!CONTENT_TYPES.includes(config.content_type)) throw new InvalidError('Invalid content type');
        data.contentType = config.content_type;
      }
      if (config.secret !== undefined) data.secret = config.secret;
      if (config.http_method !== undefined) data.httpMethod = config.http_method.toUpperCase();
      const meta = JSON.parse(h.meta || '{}') as Record<string, string>;
      for (const k of META_KEYS[h.type] ?? []) if (config[k] !== undefined) meta[k] = config[k];
      data.meta = JSON.stringify(meta);
    }
    data.events = JSON.stringify(expandEvents(input.events));
    if (input.branch_filter !== undefined) {
      checkBranchFilter(input.branch_filter);
      data.branchFilter = input.branch_filter;
    }
    if (input.authorization_header !== undefined) {
      checkHeader(input.authorization_header);
      data.authorizationHeader = input.authorization_header;
    }
    if (input.active !== undefined) data.active = input.active;
    return this.prisma.webhook.update({ where: { id: h.id }, data });
  }

  async delete(scope: HookScope, id: number): Promise<void> {
    const h = await this.get(scope, id);
    await this.prisma.webhook.delete({ where: { id: h.id } });
  }

  /** Gitea's CopyDefaultWebhooksToRepo: default (non-system admin) hooks become repository hooks. */
  async copyDefaultHooks(repoId: number): Promise<number> {
    const defaults = await this.prisma.webhook.findMany({ where: { repoId: null, ownerId: null, isSystem: false } });
    for (const h of defaults) {
      const { id: _id, createdAt: _c, updatedAt: _u, lastStatus: _l, ...rest } = h;
      await this.prisma.webhook.create({ data: { ...rest, repoId, isSystem: false } });
    }
    return defaults.length;
  }

  /* ---------- events -> queued deliveries ---------- */

  /** Active hooks that fire for an event of `repo`: its own, its owner's and system hooks. */
  private async hooksFor(repo: Repository, eventType: HookEvent, branch?: string) {
    // Asked after every event of a repository (most have no hook): one prepared statement.
    const hooks = await this.hot.activeHooks(repo.id, repo.ownerId);
    return hooks.filter(
      (h) => DELIVERED_TYPES.has(h.type) && (JSON.parse(h.events) as string[]).includes(eventType) && (branch === undefined || branchMatches(h.branchFilter, branch)),
    );
  }

  /** Forgets delivered tasks older than `cutoff`. */
  async deleteDeliveredBefore(cutoff: Date): Promise<void> {
    await this.prisma.hookTask.deleteMany({ where: { isDelivered: true, createdAt: { lt: cutoff } } });
  }

  /** Does any active hook of `repo` take this event? (Lets callers skip building a payload.) */
  async wants(repo: Repository, eventType: HookEvent): Promise<boolean> {
    return (await this.hooksFor(repo, eventType)).length > 0;
  }

  /**
   * Queues `payload` (or what the function builds, called only when some hook matches) for
   * every matching hook of `repo`. `branch` applies branch filters
   * (push/create/delete of branches). Returns the number of deliveries queued.
   */
  async queue(repo: Repository, eventType: HookEvent, payload: unknown | (() => unknown), branch?: string): Promise<number> {
    const matching = await this.hooksFor(repo, eventType, branch);
    if (!matching.length) return 0;
    const value = typeof payload === 'function' ? (payload as () => unknown)() : payload;
    const hooks = matching.filter((h) => receivesEvent(h.type, eventType, value));
    if (!hooks.length) return 0;
    // Gitea's payloads are indented JSON; the signature is over these exact bytes.
    const text = JSON.stringify(value, null, 2);
    // One insert for all hooks: this is the only webhook cost a request pays.
    await this.prisma.hookTask.createMany({
      data: hooks.map((h) => ({ hookId: h.id, uuid: crypto.randomUUID(), event: headerEvent(eventType), eventType, payload: text })),
    });
    this.onQueued();
    return hooks.length;
  }

  /** A queued test delivery of the last push payload shape (POST .../hooks/{id}/tests). */
  async queueTest(h: WebhookRow, payload: unknown): Promise<void> {
    await this.prisma.hookTask.create({
      data: { hookId: h.id, uuid: crypto.randomUUID(), event: 'push', eventType: 'push', payload: JSON.stringify(payload, null, 2) },
    });
    this.onQueued();
  }

  repoJson(repo: RepoWithOwner) {
    return this.convert.repo(repo, AccessMode.Owner);
  }

  userJson(u: User) {
    return this.convert.user(u, false, false);
  }

  /** repository created / deleted (Gitea's RepositoryPayload; organization = the owner). */
  async notifyRepository(doer: User, repo: RepoWithOwner, action: 'created' | 'deleted'): Promise<number> {
    return this.queue(repo, 'repository', {
      action,
      repository: this.repoJson(repo),
      organization: this.userJson(repo.owner),
      sender: this.userJson(doer),
    });
  }

  /**
   * issues event (Gitea's IssuePayload). `issue` is the API Issue record; `eventType` may be
   * issue_assign / issue_label / issue_milestone for those actions.
   */
  async notifyIssue(
    doer: User,
    repo: RepoWithOwner,
    action: string,
    issue: { number: number } & Record<string, unknown>,
    o: { changes?: unknown; eventType?: HookEvent } = {},
  ): Promise<number> {
    return this.queue(repo, o.eventType ?? 'issues', {
      action,
      number: issue.number,
      ...(o.changes ? { changes: o.changes } : {}),
      issue,
      repository: this.repoJson(repo),
      sender: this.userJson(doer),
      commit_id: '',
    });
  }

  /** issue_comment event (Gitea's IssueCommentPayload). */
  async notifyIssueComment(
    doer: User,
    repo: RepoWithOwner,
    action: 'created' | 'edited' | 'deleted',
    issue: Record<string, unknown>,
    comment: Record<string, unknown>,
    o: { changes?: unknown; pull?: Record<string, unknown> | null; eventType?: 'issue_comment' | 'pull_request_comment' } = {},
  ): Promise<number> {
    return this.queue(repo, o.eventType ?? 'issue_comment', {
      action,
      issue,
      ...(o.pull ? { pull_request: o.pull } : {}),
      comment,
      ...(o.changes ? { changes: o.changes } : {}),
      repository: this.repoJson(repo),
      sender: this.userJson(doer),
      is_pull: o.eventType === 'pull_request_comment',
    });
  }
}
