/**
 * The background delivery worker: drains HookTask rows (the persistent queue) outside any API
 * request. A task is claimed with a conditional update (so two workers or a restarted server
 * never send it twice at once; a crashed worker's claim expires), sent with Gitea's headers
 * and signature, and on failure retried with exponential backoff until the attempts run out.
 * Pending tasks survive a restart: the worker picks them up when the server starts again.
 */
import crypto from 'node:crypto';
import type { ForgeConfig } from '../../config';
import type { Prisma } from '../database';
import { HostNotAllowedError, parseAllowedHostList, type HostAllowList } from './allowed-hosts';
import { guardedRequest } from './guarded-request';
import { CONVERTERS, serviceRequest, type Converter, type HookMeta } from './payloads';
import type { ServiceRequest } from './payloads/request';

const CLAIM_MS = 60_000;
const BATCH = 20;
/** Deliveries in flight at once (a slow receiver holds one lane per delivery). */
const CONCURRENCY = 8;
const MAX_BACKOFF_MS = 60 * 60_000;
/** Longest sleep between scans, so a due retry is never missed for long. */
const MAX_IDLE_MS = 30_000;

export interface DeliveryResult {
  ok: boolean;
  status: number;
  error: string;
}

type Task = NonNullable<Awaited<ReturnType<Prisma['hookTask']['findFirst']>>>;
type Hook = NonNullable<Awaited<ReturnType<Prisma['webhook']['findFirst']>>>;

/**
 * Gitea's delivery headers (X-Gitea-*, X-Gogs-*, X-GitHub-*, X-Hub-Signature*) and body. A chat
 * service's hook (payloads/) gets that service's message, always as JSON, converted here at
 * delivery as Gitea does, so the stored task keeps the forge's own payload; the signature is over
 * the bytes sent. Undefined when the service is not sent this event.
 */
export function buildRequest(hook: Hook, task: Pick<Task, 'uuid' | 'event' | 'eventType' | 'payload'>, targetType: string, appUrl: string) {
  const converter: Converter | undefined = CONVERTERS[hook.type];
  let service: ServiceRequest | undefined;
  if (converter) {
    const message = converter(task.eventType, JSON.parse(task.payload), parseMeta(hook.meta), appUrl);
    if (message === undefined) return undefined;
    service = serviceRequest(hook.type, hook, message);
  }
  const payload = service?.body ?? task.payload;
  const sha256 = hook.secret ? crypto.createHmac('sha256', hook.secret).update(payload).digest('hex') : '';
  const sha1 = hook.secret ? crypto.createHmac('sha1', hook.secret).update(payload).digest('hex') : '';
  const headers: Record<string, string> = { 'User-Agent': 'GiteaServer' };
  if (service?.giteaHeaders !== false) {
    Object.assign(headers, {
      'X-Gitea-Delivery': task.uuid,
      'X-Gitea-Event': task.event,
      'X-Gitea-Event-Type': task.eventType,
      'X-Gitea-Signature': sha256,
      'X-Gitea-Hook-Installation-Target-Type': targetType,
      'X-Gogs-Delivery': task.uuid,
      'X-Gogs-Event': task.event,
      'X-Gogs-Event-Type': task.eventType,
      'X-Gogs-Signature': sha256,
      'X-GitHub-Delivery': task.uuid,
      'X-GitHub-Event': task.event,
      'X-GitHub-Event-Type': task.eventType,
      'X-GitHub-Hook-Installation-Target-Type': targetType,
      'X-Hub-Signature': `sha1=${sha1}`,
      'X-Hub-Signature-256': `sha256=${sha256}`,
    });
  }
  if (hook.authorizationHeader) headers.Authorization = hook.authorizationHeader;
  if (service) {
    headers['Content-Type'] = 'application/json';
    return { url: service.url, method: service.method, headers, body: service.body };
  }
  let url = hook.url;
  let body: string | undefined = payload;
  if (hook.httpMethod === 'GET') {
    const u = new URL(url);
    u.searchParams.set('payload', payload);
    url = u.toString();
    body = undefined;
  } else if (hook.contentType === 'form') {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams({ payload }).toString();
  } else {
    headers['Content-Type'] = 'application/json';
  }
  return { url, method: hook.httpMethod, headers, body };
}

function parseMeta(meta: string): HookMeta {
  try {
    const v = JSON.parse(meta || '{}');
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

export function targetTypeOf(hook: Pick<Hook, 'repoId' | 'ownerId' | 'isSystem'>, ownerIsOrg: boolean): string {
  if (hook.repoId !== null) return 'repository';
  if (hook.ownerId !== null) return ownerIsOrg ? 'organization' : 'user';
  return hook.isSystem ? 'system' : 'default';
}

export class DeliveryWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private readonly allow: HostAllowList;

  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
  ) {
    this.allow = parseAllowedHostList(config.webhookAllowedHostList);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Wakes the worker now (after tasks were queued). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = this.loop().finally(() => {
      this.running = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Delivers everything due now; returns how many tasks were attempted. */
  async runOnce(): Promise<number> {
    let attempted = 0;
    for (;;) {
      const now = new Date();
      const due = await this.prisma.hookTask.findMany({
        where: { isDelivered: false, nextAttemptAt: { lte: now }, OR: [{ claimedUntil: null }, { claimedUntil: { lt: now } }] },
        orderBy: { id: 'asc' },
        take: BATCH,
      });
      if (!due.length) return attempted;
      const queue = [...due];
      const lanes = Array.from({ length: CONCURRENCY }, async () => {
        for (let t = queue.shift(); t; t = queue.shift()) {
          if (await this.claim(t.id)) {
            attempted++;
            await this.deliver(t);
          }
        }
      });
      await Promise.all(lanes);
      if (this.stopped) return attempted;
    }
  }

  private async loop(): Promise<void> {
    try {
      await this.runOnce();
    } catch {
      // A database hiccup must not kill the worker; the next scan retries.
    }
    if (this.stopped) return;
    const next = await this.prisma.hookTask
      .findFirst({ where: { isDelivered: false }, orderBy: { nextAttemptAt: 'asc' }, select: { nextAttemptAt: true } })
      .catch(() => null);
    const wait = next ? Math.max(10, Math.min(MAX_IDLE_MS, next.nextAttemptAt.getTime() - Date.now())) : MAX_IDLE_MS;
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick();
    }, wait);
    this.timer.unref();
  }

  private async claim(id: number): Promise<boolean> {
    const now = new Date();
    const res = await this.prisma.hookTask.updateMany({
      where: { id, isDelivered: false, OR: [{ claimedUntil: null }, { claimedUntil: { lt: now } }] },
      data: { claimedUntil: new Date(now.getTime() + CLAIM_MS) },
    });
    return res.count === 1;
  }

  /** Sends one task and records the outcome (success, a retry later, or final failure). */
  async deliver(task: Task): Promise<DeliveryResult> {
    const hook = await this.prisma.webhook.findUnique({ where: { id: task.hookId }, include: { owner: { select: { type: true } } } });
    if (!hook) return { ok: false, status: 0, error: 'hook deleted' };
    const req = buildRequest(hook, task, targetTypeOf(hook, hook.owner?.type === 1), this.config.appUrl);
    let result: DeliveryResult;
    let refused = false;
    try {
      // An event the hook's service has no message for: failed once, never retried.
      refused = !req;
      if (!req) throw new Error(`a ${hook.type} hook is not sent ${task.eventType} events`);
      const res = await guardedRequest({ url: req.url, method: req.method, headers: req.headers, body: req.body, timeoutMs: this.config.webhookDeliverTimeoutMs, allow: this.allow });
      result = { ok: res.status >= 200 && res.status < 300, status: res.status, error: res.status >= 300 ? `HTTP ${res.status}` : '' };
    } catch (err) {
      // A target the allowed-host list refuses stays refused: failed at once, no retries.
      refused ||= err instanceof HostNotAllowedError;
      result = { ok: false, status: 0, error: (err as Error).message || String(err) };
    }
    const attempts = task.attempts + 1;
    const final = result.ok || refused || attempts >= this.config.webhookMaxAttempts;
    const backoff = Math.min(MAX_BACKOFF_MS, this.config.webhookRetryBaseMs * 2 ** (attempts - 1));
    await this.prisma.hookTask.update({
      where: { id: task.id },
      data: {
        attempts,
        isDelivered: final,
        isSucceed: result.ok,
        deliveredAt: final ? new Date() : null,
        nextAttemptAt: final ? task.nextAttemptAt : new Date(Date.now() + backoff),
        claimedUntil: null,
        lastError: result.error.slice(0, 1000),
        responseStatus: result.status,
      },
    });
    await this.prisma.webhook.update({ where: { id: hook.id }, data: { lastStatus: result.ok ? 1 : 2 } }).catch(() => undefined);
    return result;
  }

  /** Pending (not finally delivered) tasks, for the admin cron listing and tests. */
  async pending(): Promise<number> {
    return this.prisma.hookTask.count({ where: { isDelivered: false } });
  }
}
