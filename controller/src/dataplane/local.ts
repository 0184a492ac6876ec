/**
 * Standalone's data plane: every Gateway served by one nginx this process runs. A publish
 * builds the model (kept servers through the model memo), renders it and hands it to nginx
 * (apply/nginx.ts NginxProcess), unless nginx already serves the very same files.
 *
 * A port another process holds makes nginx refuse the whole configuration. The ports it names
 * that belong to listeners are remembered as unavailable: the loop builds the graph again
 * without those listeners (PortUnavailable) and publishes that, so every other listener is
 * served. Each reconcile, and a timer of the loop's while any are held, checks them again; a
 * port found free is tried with its listeners in the next configuration.
 */
import type { DataplaneResult, Graph, UnavailablePort } from '../graph/types';
import { listenerTransport } from '../graph';
import type { Logger } from '../log';
import { ModelMemo } from '../model';
import type { EffectivePolicies } from '../policies';
import { HeldPorts, portFree, type PortFailure } from '../apply/ports';
import { unavailableListenerPorts } from './ports';
import type { ApplyOutcome, Dataplane, PublishResult } from './index';

/** render/ RenderedConfig: files relative to the nginx prefix. */
export interface RenderedConfigLike {
  files: Record<string, string>;
}

/** The part of apply/nginx.ts NginxProcess a local data plane uses. */
export interface NginxApplier<C extends RenderedConfigLike = RenderedConfigLike> {
  start(config: C): Promise<ApplyOutcome>;
  apply(config: C): Promise<ApplyOutcome>;
  stop(): Promise<void>;
}

export interface LocalDataplaneOptions<M, C extends RenderedConfigLike> {
  nginx: NginxApplier<C>;
  /** The model and render stages (reconcile.ts Pipeline's, so tests and benchmarks can time them). */
  buildModel(graph: Graph, policies: EffectivePolicies | undefined, memo: ModelMemo): M;
  render(model: M): C;
  /** The address nginx listens on: every Gateway's address. */
  listenAddress: string;
  log: Logger;
  /** Whether a port is free now; default apply/ports.ts portFree (a bind on listenAddress). */
  portFree?: (address: string, port: number, transport: 'TCP' | 'UDP') => Promise<boolean>;
}

function sameFiles(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  if (!a) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}

export class LocalDataplane<M = unknown, C extends RenderedConfigLike = RenderedConfigLike> implements Dataplane {
  readonly perGateway = false;
  private readonly memo = new ModelMemo();
  private started = false;
  private lastAttemptOk = false;
  private lastGoodFiles?: Record<string, string>;
  private result: DataplaneResult;
  private readonly held: HeldPorts;
  private unavailable: readonly UnavailablePort[] = [];

  constructor(private readonly o: LocalDataplaneOptions<M, C>) {
    this.result = { programmed: false, reason: 'Pending', message: 'nginx has not started yet', addresses: [o.listenAddress] };
    const isFree = o.portFree ?? portFree;
    // nginx listens on listenAddress, whatever address its message names.
    this.held = new HeldPorts((_address, port, transport) => isFree(o.listenAddress, port, transport));
  }

  unavailablePorts(): readonly UnavailablePort[] {
    return this.unavailable;
  }

  async recheckPorts(): Promise<void> {
    const before = this.unavailable;
    if (!(await this.held.recheck())) return;
    this.unavailable = unavailableListenerPorts(this.held.list());
    const freed = before.filter((p) => !this.unavailable.some((q) => q.port === p.port && q.transport === p.transport));
    this.o.log.info('ports free again; their listeners are tried again', { ports: freed.map((p) => `${p.port}/${p.transport}`) });
  }

  /**
   * The listener ports among nginx's bind failures, added to the held ones: per transport of the
   * graph's listeners on that port that a bind finds taken. True when any is new.
   */
  private async holdPorts(graph: Graph, failures: PortFailure[]): Promise<boolean> {
    const wanted = (port: number) => {
      const transports = new Set<'TCP' | 'UDP'>();
      for (const g of graph.gateways) for (const l of g.listeners) if (l.port === port) transports.add(listenerTransport(l.protocol));
      return [...transports];
    };
    const before = this.unavailable;
    if (!(await this.held.add(failures, wanted))) return false;
    this.unavailable = unavailableListenerPorts(this.held.list());
    const added = this.unavailable.filter((p) => !before.some((q) => q.port === p.port && q.transport === p.transport));
    this.o.log.warn('ports held by another process; their listeners are left out until the ports are free', { ports: added.map((p) => `${p.port}/${p.transport}`) });
    return true;
  }

  settled(): boolean {
    return this.started && this.lastAttemptOk;
  }

  async publish(graph: Graph, policies: EffectivePolicies | undefined): Promise<PublishResult> {
    let t = process.hrtime.bigint();
    const lap = (): number => {
      const now = process.hrtime.bigint();
      const ms = Number(now - t) / 1e6;
      t = now;
      return Math.round(ms * 10) / 10;
    };
    const model = this.o.buildModel(graph, policies, this.memo);
    const modelMs = lap();
    this.o.log.debug('model built', { modelMs, ...this.memo.stats });
    const config = this.o.render(model);
    const renderMs = lap();
    let configBytes = 0;
    for (const text of Object.values(config.files)) configBytes += text.length;
    let outcome: ApplyOutcome = { ok: true };
    let applied = false;
    if (!(this.settled() && sameFiles(this.lastGoodFiles, config.files))) {
      applied = true;
      outcome = this.started ? await this.o.nginx.apply(config) : await this.o.nginx.start(config);
      if (outcome.ok) {
        this.started = true;
        this.lastGoodFiles = config.files;
      }
      this.lastAttemptOk = outcome.ok;
    }
    if (!outcome.ok) {
      this.o.log.error(this.started ? 'nginx rejected the new configuration; the last good one keeps serving' : 'nginx did not start', { error: outcome.message });
    }
    const portsChanged = !outcome.ok && outcome.portFailures !== undefined && (await this.holdPorts(graph, outcome.portFailures));
    const addresses = [this.o.listenAddress];
    this.result = outcome.ok ? { programmed: true, addresses } : { programmed: false, message: outcome.message, addresses };
    return { outcome, applied, configBytes, modelMs, renderMs, ...(portsChanged ? { portsChanged } : {}) };
  }

  resultFor(): DataplaneResult {
    return this.result;
  }

  stop(): Promise<void> {
    return this.o.nginx.stop();
  }
}
