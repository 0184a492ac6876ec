/**
 * The Kubernetes provider: informers (list + watch) on every kind of kinds.ts stand in for the
 * file provider's folder scan, and statuses go back through the status subresource. It feeds
 * the same Reconciler (reconcile.ts) as standalone mode: scan() hands out the informers'
 * frozen documents, the same object while a resource is unchanged, so an event on one route
 * costs one route's parse.
 *
 * Every replica watches and reconciles (a new leader starts warm); only the leader writes
 * statuses (Leadership, leader.ts).
 */
import type { Logger } from '../../log';
import type { ManifestDoc } from '../../resources/types';
import type { StatusReport } from '../../graph/types';
import type { KubeClient } from './client';
import { Informer } from './informer';
import { watchedKinds, type WatchedKind } from './kinds';
import type { Leadership } from './leader';
import { StatusWriter } from './status-writer';

export { KubeClient, loadKubeConfig, ApiError, ConnectionError } from './client';
export { LeaderElector, AlwaysLeader, type Leadership } from './leader';
export { WATCHED_KINDS, watchedKinds, type WatchedKind } from './kinds';
export { StatusWriter } from './status-writer';
export { Informer } from './informer';

export interface KubernetesProviderOptions {
  client: KubeClient;
  log: Logger;
  controllerName: string;
  leadership: Leadership;
  /** Only this GatewayClass is read (the one the chart installs); all when undefined. */
  gatewayClassName?: string;
  kinds?: readonly WatchedKind[];
  /** InferencePool and Pod are watched only then (the chart grants their RBAC only then). */
  inferenceExtension?: boolean;
  /**
   * Wait after an event before the pipeline runs; default 0: it runs once the events already
   * read are handled (setImmediate). A burst that keeps coming while a reconcile runs makes one
   * more run (the Reconciler coalesces), so a wait here only delayed every single change.
   */
  debounceMs?: number;
  statusConcurrency?: number;
  onStatusWrite?: () => void;
}

export class KubernetesProvider {
  readonly informers = new Map<string, Informer>();
  readonly writer: StatusWriter;
  private readonly o: KubernetesProviderOptions;
  private onChange?: () => void;
  private timer?: NodeJS.Timeout;
  private immediate?: NodeJS.Immediate;
  private synced = false;

  constructor(options: KubernetesProviderOptions) {
    this.o = options;
    for (const kind of options.kinds ?? watchedKinds(options)) {
      this.informers.set(
        kind.kind,
        new Informer({
          client: options.client,
          kind,
          log: options.log,
          onChange: () => this.changed(),
          fieldSelector: kind.kind === 'GatewayClass' && options.gatewayClassName ? `metadata.name=${options.gatewayClassName}` : undefined,
        }),
      );
    }
    this.writer = new StatusWriter({
      client: options.client,
      informers: this.informers,
      controllerName: options.controllerName,
      log: options.log,
      concurrency: options.statusConcurrency,
      onWrite: options.onStatusWrite,
    });
    options.leadership.onChange((leader) => (leader ? this.writer.enable() : this.writer.disable()));
    if (options.leadership.isLeader()) this.writer.enable();
  }

  /** Starts every informer; resolves when each has listed once (the first reconcile waits). */
  async start(): Promise<void> {
    for (const i of this.informers.values()) i.start();
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
    this.synced = true;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Calls `onChange` after events (debounced); nothing before start() has synced. */
  watch(onChange: () => void): void {
    this.onChange = onChange;
  }

  private changed(): void {
    if (!this.synced || !this.onChange) return;
    if (this.timer || this.immediate) return;
    const fire = () => {
      this.timer = undefined;
      this.immediate = undefined;
      this.onChange?.();
    };
    const wait = this.o.debounceMs ?? 0;
    if (wait > 0) this.timer = setTimeout(fire, wait);
    else this.immediate = setImmediate(fire);
  }

  async scan(): Promise<ManifestDoc[]> {
    const out: ManifestDoc[] = [];
    for (const informer of this.informers.values()) {
      const kind = informer.kind.kind;
      for (const o of informer.objects()) out.push({ source: o.namespace ? `${kind} ${o.namespace}/${o.name}` : `${kind} ${o.name}`, doc: o.doc });
    }
    return out;
  }

  /** Hands the statuses to the writer, which writes the changed ones in the background. */
  async writeStatuses(statuses: StatusReport[]): Promise<void> {
    this.writer.setDesired(statuses);
  }

  /** Objects per kind in the informers (metrics). */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [kind, i] of this.informers) out[kind] = i.size;
    return out;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    this.onChange = undefined;
    for (const i of this.informers.values()) i.stop();
    this.writer.disable();
  }
}
