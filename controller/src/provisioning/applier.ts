/**
 * Provisioner: applies a ProvisioningPlan to the API server (server-side apply, field manager
 * `portcullis`, forced: these objects are ours) and deletes what it provisioned earlier for
 * Gateways that are no longer ours. Run it on the leader only.
 *
 * An object is applied only when its desired form changed since this process last applied it
 * (a hash per object), so a route change costs no provisioning request. What the leader cannot
 * know from memory (objects left by an earlier leader, objects someone deleted) is covered by
 * a sweep when leadership starts (list by our managed-by label, delete the ones no Gateway
 * wants) and by forget(), which the caller invokes when it sees one of our objects deleted.
 * A failed request is retried with backoff (0.5 s doubling to 30 s).
 */
import { createHash } from 'crypto';
import type { Logger } from '../log';
import { MANAGED_BY } from './names';
import type { ProvisioningPlan } from './plan';
import type { KubeObject } from './types';

/** The part of @kubernetes/client-node's KubernetesObjectApi used here. */
export interface ObjectClient {
  patch<T extends KubeObject>(spec: T, pretty?: string, dryRun?: string, fieldManager?: string, force?: boolean, patchStrategy?: string): Promise<T>;
  delete(spec: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): Promise<unknown>;
  list(apiVersion: string, kind: string, namespace?: string, pretty?: string, exact?: boolean, exportt?: boolean, fieldSelector?: string, labelSelector?: string): Promise<{ items: KubeObject[] }>;
}

export const FIELD_MANAGER = 'portcullis';
const SERVER_SIDE_APPLY = 'application/apply-patch+yaml';
export const PROVISIONED_KINDS: [apiVersion: string, kind: string][] = [
  ['apps/v1', 'Deployment'],
  ['v1', 'Service'],
  ['v1', 'ServiceAccount'],
  ['v1', 'ConfigMap'],
];

export function objectKey(o: { kind: string; metadata: { namespace?: string; name: string } }): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function hash(o: unknown): string {
  return createHash('sha256').update(JSON.stringify(o)).digest('hex');
}

function statusCode(err: unknown): number | undefined {
  const e = err as { code?: number; statusCode?: number; response?: { statusCode?: number } };
  return e?.code ?? e?.statusCode ?? e?.response?.statusCode;
}

export interface ProvisionerOptions {
  client: ObjectClient;
  log: Logger;
  /** Called with each object as the API server returned it after an apply (e.g. the Service's clusterIP). */
  onApplied?: (o: KubeObject) => void;
}

export class Provisioner {
  private readonly applied = new Map<string, { hash: string; object: KubeObject }>();
  private swept = false;
  private latest?: ProvisioningPlan;
  private running?: Promise<void>;
  private again = false;
  private retryTimer?: NodeJS.Timeout;
  private retryMs = 500;
  private stopped = false;
  /** API requests sent (apply, delete, list): benchmarks count them per change. */
  requests = 0;

  constructor(private readonly o: ProvisionerOptions) {}

  /** Applies `plan` (the newest wins when calls overlap); resolves when it has been applied. */
  reconcile(plan: ProvisioningPlan): Promise<void> {
    this.latest = plan;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.once(this.latest!);
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** One of our objects was deleted (by someone, or the garbage collector): apply it again if wanted. */
  forget(kind: string, namespace: string, name: string): void {
    this.applied.delete(`${kind}/${namespace}/${name}`);
  }

  /** Leadership ended: the next leader owns the objects; forget what we applied. */
  reset(): void {
    this.applied.clear();
    this.swept = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  stop(): void {
    this.stopped = true;
    this.reset();
  }

  private async once(plan: ProvisioningPlan): Promise<void> {
    const desired = new Map<string, KubeObject>();
    for (const g of plan.gateways) for (const o of Object.values(g.objects)) desired.set(objectKey(o), o);
    let failed = false;
    for (const [key, object] of desired) {
      const h = hash(object);
      if (this.applied.get(key)?.hash === h) continue;
      try {
        const result = await this.apply(object);
        this.applied.set(key, { hash: h, object });
        this.o.log.info('provisioned', { component: 'provisioner', object: key });
        this.o.onApplied?.(result);
      } catch (err) {
        failed = true;
        this.o.log.error('provisioning an object failed', { component: 'provisioner', object: key, error: errorText(err) });
      }
    }
    for (const [key, { object }] of [...this.applied]) {
      if (desired.has(key)) continue;
      if (await this.remove(object)) this.applied.delete(key);
      else failed = true;
    }
    if (!this.swept && !failed) failed = !(await this.sweep(desired));
    this.scheduleRetry(failed);
  }

  /**
   * Server-side apply. A Service's cluster IPs cannot change in place (a Gateway's static
   * addresses changed): such a Service is deleted and made again with the new ones.
   */
  private async apply(object: KubeObject): Promise<KubeObject> {
    try {
      this.requests++;
      return await this.o.client.patch(object, undefined, undefined, FIELD_MANAGER, true, SERVER_SIDE_APPLY);
    } catch (err) {
      if (object.kind !== 'Service' || statusCode(err) !== 422 || !/clusterIPs?\b[^]*(immutable|may not change)/i.test(errorText(err))) throw err;
      if (!(await this.remove(object))) throw err;
      this.requests++;
      return await this.o.client.patch(object, undefined, undefined, FIELD_MANAGER, true, SERVER_SIDE_APPLY);
    }
  }

  /** Deletes our labelled objects that no Gateway wants (left by an earlier leader or run). */
  private async sweep(desired: Map<string, KubeObject>): Promise<boolean> {
    try {
      for (const [apiVersion, kind] of PROVISIONED_KINDS) {
        this.requests++;
        const list = await this.o.client.list(apiVersion, kind, undefined, undefined, undefined, undefined, undefined, `app.kubernetes.io/managed-by=${MANAGED_BY}`);
        for (const item of list.items) {
          const o = { ...item, apiVersion, kind };
          if (!desired.has(objectKey(o)) && !(await this.remove(o))) return false;
        }
      }
      this.swept = true;
      return true;
    } catch (err) {
      this.o.log.error('listing provisioned objects failed', { component: 'provisioner', error: errorText(err) });
      return false;
    }
  }

  private async remove(o: KubeObject): Promise<boolean> {
    try {
      this.requests++;
      await this.o.client.delete({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } });
      this.o.log.info('deprovisioned', { component: 'provisioner', object: objectKey(o) });
      return true;
    } catch (err) {
      if (statusCode(err) === 404) return true;
      this.o.log.error('deleting a provisioned object failed', { component: 'provisioner', object: objectKey(o), error: errorText(err) });
      return false;
    }
  }

  private scheduleRetry(failed: boolean): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (!failed || this.stopped) {
      this.retryMs = 500;
      return;
    }
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 30000);
    this.retryTimer = setTimeout(() => {
      if (this.latest) void this.reconcile(this.latest);
    }, delay);
    this.retryTimer.unref();
  }
}

function errorText(err: unknown): string {
  const e = err as { message?: string; body?: unknown };
  const body = typeof e?.body === 'string' ? e.body : e?.body ? JSON.stringify(e.body) : '';
  return `${e?.message ?? String(err)}${body && !(e?.message ?? '').includes(body) ? `: ${body}` : ''}`.slice(0, 2000);
}
