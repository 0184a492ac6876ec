/**
 * Leader election with a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
 *
 * - every retry period each replica reads the Lease; the holder renews it (update with the
 *   resourceVersion it read, so two replicas cannot both win a race);
 * - another replica takes it over only when the holder has not renewed for the lease duration,
 *   measured on its own clock from when it last saw the record change (no clock skew between
 *   machines matters);
 * - a leader that cannot renew within the renew deadline steps down before its lease could
 *   have expired for the others;
 * - stop() releases the Lease (empty holder), so a replica that shuts down cleanly hands over
 *   at once instead of after the lease duration.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../log';
import { ApiError, type KubeClient } from './client';

export interface LeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity?: string;
  log: Logger;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** What a replica that never leads sees: for a controller run without leader election. */
export interface Leadership {
  isLeader(): boolean;
  onChange(listener: (leader: boolean) => void): void;
}

export class AlwaysLeader implements Leadership {
  isLeader(): boolean {
    return true;
  }
  onChange(listener: (leader: boolean) => void): void {
    queueMicrotask(() => listener(true));
  }
}

export class LeaderElector implements Leadership {
  readonly identity: string;
  private readonly o: Required<Omit<LeaderElectorOptions, 'identity'>>;
  private leader = false;
  private readonly listeners: ((leader: boolean) => void)[] = [];
  private timer?: NodeJS.Timeout;
  private stopped = true;
  private observed?: string;
  private observedAt = 0;
  private lastRenew = 0;
  private tick?: Promise<void>;

  constructor(options: LeaderElectorOptions) {
    this.identity = options.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.o = {
      client: options.client,
      namespace: options.namespace,
      name: options.name,
      log: options.log,
      leaseDurationMs: options.leaseDurationMs ?? 15_000,
      renewDeadlineMs: options.renewDeadlineMs ?? 10_000,
      retryPeriodMs: options.retryPeriodMs ?? 2_000,
    };
  }

  isLeader(): boolean {
    return this.leader;
  }

  onChange(listener: (leader: boolean) => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop();
  }

  private loop(): void {
    if (this.stopped) return;
    this.tick = this.attempt().finally(() => {
      this.tick = undefined;
      if (this.stopped) return;
      this.timer = setTimeout(() => this.loop(), this.o.retryPeriodMs);
      this.timer.unref();
    });
  }

  private setLeader(leader: boolean): void {
    if (this.leader === leader) return;
    this.leader = leader;
    this.o.log.info(leader ? 'became the leader' : 'no longer the leader', { lease: `${this.o.namespace}/${this.o.name}`, identity: this.identity });
    for (const l of this.listeners) l(leader);
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases`;
  }

  private async attempt(): Promise<void> {
    try {
      const ok = await this.tryAcquireOrRenew();
      if (ok) this.lastRenew = Date.now();
      if (ok) this.setLeader(true);
      else if (this.leader) this.setLeader(false);
    } catch (err) {
      this.o.log.warn('leader election: lease request failed', { error: (err as Error).message });
      // Step down before the others may take over (renew deadline < lease duration).
      if (this.leader && Date.now() - this.lastRenew > this.o.renewDeadlineMs) this.setLeader(false);
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const { client } = this.o;
    let lease: Lease;
    try {
      lease = await client.request<Lease>('get', 'GET', `${this.path}/${encodeURIComponent(this.o.name)}`);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
      const fresh: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.o.name, namespace: this.o.namespace },
        spec: {
          holderIdentity: this.identity,
          leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: 0,
        },
      };
      try {
        await client.request('create', 'POST', this.path, fresh);
        return true;
      } catch (e) {
        if (e instanceof ApiError && e.status === 409) return false; // another replica created it
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}|${spec.renewTime ?? ''}|${spec.leaseTransitions ?? 0}`;
    if (record !== this.observed) {
      this.observed = record;
      this.observedAt = Date.now();
    }
    const holder = spec.holderIdentity ?? '';
    const duration = (spec.leaseDurationSeconds ?? Math.ceil(this.o.leaseDurationMs / 1000)) * 1000;
    if (holder && holder !== this.identity && this.observedAt + duration > Date.now()) return false;
    const next: Lease = {
      ...lease,
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
        acquireTime: holder === this.identity ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: holder === this.identity ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      const updated = await client.request<Lease>('update', 'PUT', `${this.path}/${encodeURIComponent(this.o.name)}`, next);
      this.observed = `${updated.spec.holderIdentity ?? ''}|${updated.spec.renewTime ?? ''}|${updated.spec.leaseTransitions ?? 0}`;
      this.observedAt = Date.now();
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return false; // someone else renewed or took it first
      throw err;
    }
  }

  /** Stops competing; a leader releases the Lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.tick;
    if (!this.leader) return;
    this.setLeader(false);
    try {
      const lease = await this.o.client.request<Lease>('get', 'GET', `${this.path}/${encodeURIComponent(this.o.name)}`);
      if (lease.spec?.holderIdentity !== this.identity) return;
      await this.o.client.request('update', 'PUT', `${this.path}/${encodeURIComponent(this.o.name)}`, {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime() },
      });
    } catch (err) {
      this.o.log.warn('leader election: releasing the lease failed (another replica takes over when it expires)', { error: (err as Error).message });
    }
  }
}
