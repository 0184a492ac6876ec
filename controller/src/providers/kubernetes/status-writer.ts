/**
 * Writes the status stage's reports to the API server through the status subresource:
 *
 * - only when the status differs from what the server holds (compared as JSON with sorted
 *   keys, after taking over the server's lastTransitionTime for conditions whose status did not
 *   change), so a reconcile that changes one route writes one status;
 * - route parents and policy ancestors of other controllers are kept: we replace only the
 *   entries with our controllerName, and remove ours from objects we no longer report on;
 * - optimistic concurrency: the update carries the resourceVersion we last saw; on 409 Conflict
 *   the object is read again and the write recomputed (a few times);
 * - a lost connection leaves the write pending and retries with backoff; a status the server
 *   refuses (422) is logged and not retried until the report changes;
 * - only while enabled (the leader); a replica that becomes leader compares everything once.
 */
import type { Logger } from '../../log';
import type { StatusReport } from '../../graph/types';
import { adoptTransitionTimes } from '../../status';
import { ApiError, type KubeClient } from './client';
import type { Informer, StoredObject } from './informer';
import { apiVersionOf, objectPath } from './kinds';

type Json = Record<string, unknown>;

export interface StatusWriterOptions {
  client: KubeClient;
  informers: Map<string, Informer>;
  controllerName: string;
  log: Logger;
  /** Status updates in flight at once. */
  concurrency?: number;
  maxConflictRetries?: number;
  /** Called for every status update sent (metrics). */
  onWrite?: () => void;
}

const reportKey = (kind: string, namespace: string | undefined, name: string) => `${kind}|${namespace ?? ''}|${name}`;

/** JSON with sorted keys: the server may return keys in another order than we build them. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Json;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The lists where several controllers keep entries side by side, by controllerName. */
const SHARED_LISTS = ['parents', 'ancestors'] as const;

export class StatusWriter {
  private readonly o: StatusWriterOptions;
  private desired = new Map<string, StatusReport>();
  /** What the last write or comparison settled per object: skip while both are unchanged. */
  private readonly settled = new Map<string, { report: StatusReport | undefined; status: unknown }>();
  private enabled = false;
  /** No reports yet (no reconcile ran): nothing may be written, not even removals. */
  private haveDesired = false;
  private running?: Promise<void>;
  private again = false;
  private retryTimer?: NodeJS.Timeout;
  private backoffMs = 500;
  private readonly waiters: (() => void)[] = [];
  /** Status updates sent (successful or not) and 409 conflicts met. */
  writes = 0;
  conflicts = 0;

  constructor(options: StatusWriterOptions) {
    this.o = options;
  }

  /** The statuses we want; written now if enabled, else kept for when we lead. */
  setDesired(reports: StatusReport[]): void {
    const next = new Map<string, StatusReport>();
    for (const r of reports) next.set(reportKey(r.kind, r.namespace, r.name), r);
    this.desired = next;
    this.haveDesired = true;
    if (this.enabled) this.kick();
  }

  enable(): void {
    if (this.enabled) return;
    this.enabled = true;
    // Another replica may have written meanwhile: compare everything once.
    this.settled.clear();
    this.kick();
  }

  disable(): void {
    this.enabled = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  isEnabled(): boolean {
    return this.enabled;
  }

  /** Resolves when the statuses wanted so far are written (or found equal, or refused). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private kick(): void {
    if (!this.haveDesired) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.flush();
      } while (this.again && this.enabled);
    })().finally(() => {
      this.running = undefined;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  private scheduleRetry(): void {
    if (this.retryTimer || !this.enabled) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, delay);
    this.retryTimer.unref();
  }

  private async flush(): Promise<void> {
    const work: { key: string; kind: string; namespace?: string; name: string; report?: StatusReport }[] = [];
    for (const [key, r] of this.desired) {
      const informer = this.o.informers.get(r.kind);
      if (!informer?.kind.statusWritten) continue;
      const stored = informer.get(r.namespace, r.name);
      if (!stored) continue; // gone, or not seen yet: its watch event will bring a new reconcile
      const done = this.settled.get(key);
      if (done && done.report === r && done.status === stored.status) continue;
      work.push({ key, kind: r.kind, namespace: r.namespace, name: r.name, report: r });
    }
    // Objects that carry entries of ours but are no longer reported on: take ours out.
    for (const informer of this.o.informers.values()) {
      if (!informer.kind.statusWritten) continue;
      for (const stored of informer.objects()) {
        const key = reportKey(informer.kind.kind, stored.namespace, stored.name);
        if (this.desired.has(key)) continue;
        const done = this.settled.get(key);
        if (done && done.report === undefined && done.status === stored.status) continue;
        if (!this.hasOurEntries(stored.status)) {
          this.settled.set(key, { report: undefined, status: stored.status });
          continue;
        }
        work.push({ key, kind: informer.kind.kind, namespace: stored.namespace, name: stored.name });
      }
    }
    let failed = false;
    let next = 0;
    const worker = async () => {
      while (next < work.length && this.enabled) {
        const w = work[next++];
        try {
          await this.writeOne(w.key, w.kind, w.namespace, w.name, w.report);
        } catch (err) {
          failed = true;
          this.o.log.warn('status write failed; will retry', { kind: w.kind, namespace: w.namespace, name: w.name, error: (err as Error).message });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency ?? 8, work.length) }, worker));
    if (failed) this.scheduleRetry();
    else this.backoffMs = 500;
  }

  private hasOurEntries(status: unknown): boolean {
    const s = status as Json | undefined;
    for (const list of SHARED_LISTS) {
      const entries = s?.[list];
      if (Array.isArray(entries) && entries.some((e) => (e as Json)?.controllerName === this.o.controllerName)) return true;
    }
    return false;
  }

  /** Our report merged into what the server holds (other controllers' entries stay). */
  private desiredStatus(report: StatusReport | undefined, live: Json): Json {
    const ours = (report?.status ?? {}) as Json;
    const shared = SHARED_LISTS.filter((l) => Array.isArray(ours[l]) || Array.isArray(live[l]));
    if (shared.length === 0) return adoptTransitionTimes(live, ours);
    const out: Json = report ? { ...ours } : { ...live };
    for (const list of shared) {
      const theirs = (Array.isArray(live[list]) ? (live[list] as Json[]) : []).filter((e) => e?.controllerName !== this.o.controllerName);
      out[list] = [...theirs, ...(Array.isArray(ours[list]) ? (ours[list] as Json[]) : [])];
    }
    return adoptTransitionTimes(live, out);
  }

  private async writeOne(key: string, kind: string, namespace: string | undefined, name: string, report: StatusReport | undefined): Promise<void> {
    const informer = this.o.informers.get(kind)!;
    let stored: StoredObject | undefined = informer.get(namespace, name);
    for (let attempt = 0; stored; attempt++) {
      const live = (stored.status ?? {}) as Json;
      const status = this.desiredStatus(report, live);
      if (canonical(status) === canonical(live)) {
        this.settled.set(key, { report, status: stored.status });
        return;
      }
      const body = {
        apiVersion: apiVersionOf(informer.kind),
        kind,
        metadata: { name, ...(informer.kind.namespaced ? { namespace } : {}), resourceVersion: stored.resourceVersion },
        status,
      };
      this.writes++;
      this.o.onWrite?.();
      try {
        const updated = await this.o.client.request<Json>('update', 'PUT', objectPath(informer.kind, namespace, name, 'status'), body);
        informer.observe(updated);
        this.settled.set(key, { report, status: informer.get(namespace, name)?.status });
        this.o.log.debug('status written', { kind, namespace, name });
        return;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.status === 404) return; // deleted meanwhile
        if (err.status === 409 && attempt < (this.o.maxConflictRetries ?? 5)) {
          this.conflicts++;
          // Someone else wrote the object: read it again and recompute on top of theirs.
          try {
            const fresh = await this.o.client.request<Json>('get', 'GET', objectPath(informer.kind, namespace, name));
            informer.observe(fresh);
          } catch (e) {
            if (e instanceof ApiError && e.status === 404) return;
            throw e;
          }
          stored = informer.get(namespace, name);
          continue;
        }
        if (err.status >= 400 && err.status < 500 && err.status !== 409 && err.status !== 429) {
          // The server refuses this status (validation): retrying the same one cannot help.
          this.o.log.error('status refused by the API server', { kind, namespace, name, error: err.message });
          this.settled.set(key, { report, status: stored.status });
          return;
        }
        throw err;
      }
    }
  }
}
