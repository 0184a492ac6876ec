/**
 * One reconcile: manifests in, nginx serving them and statuses written out.
 *
 *   provider.scan -> parseManifests (+ parsePolicyDocs) -> buildGraph -> computePolicies
 *     -> buildModel -> renderConfig -> nginx.apply -> computeStatuses (+ policy statuses,
 *     `<Kind>Affected` on targets) -> carryTransitionTimes -> provider.writeStatuses
 *
 * The stages are passed in (a Pipeline) so the loop can be exercised without nginx, and so the
 * Kubernetes provider can reuse it later. Reconciles run one at a time; events that arrive
 * during a reconcile are coalesced into one more run.
 */
import type { Logger } from './log';
import type { ManifestDoc, ParsedResources, ResourceSet } from './resources/types';
import type { BuildGraphOptions, DataplaneResult, GatewayNode, Graph, ParametersVerdict, StatusReport, UnavailablePort } from './graph/types';
import { parseManifests } from './resources';
import { buildGraph } from './graph';
import { computeStatuses, carryTransitionTimes, withAffected } from './status';
import { buildModel, ModelMemo, type NginxModel } from './model';
import { renderConfig, type RenderedConfig } from './render';
import type { TempPathModule } from './apply/nginx-binary';
import { parsePolicyDocs, type ParsedPolicies } from './resources/policies';
import { computePolicies, targetsFromGraph, type EffectivePolicies, type PolicyInput, type PolicyResult } from './policies';

import { LocalDataplane, type ApplyOutcome, type Dataplane, type NginxApplier, type PublishResult, type RenderedConfigLike } from './dataplane';
export type { ApplyOutcome, Dataplane, NginxApplier, PublishResult, RenderedConfigLike } from './dataplane';

export interface Pipeline<M = unknown, C extends RenderedConfigLike = RenderedConfigLike> {
  parseManifests(docs: ManifestDoc[]): ParsedResources;
  buildGraph(set: ResourceSet, options: BuildGraphOptions): Graph;
  /** `memo` (model/memo.ts) lets servers whose routes did not change reuse their locations. */
  buildModel(graph: Graph, policies?: EffectivePolicies, memo?: ModelMemo): M;
  /** Policy documents (gateway.portcullis.dev); optional so a pipeline without policies works. */
  parsePolicyDocs?(docs: ManifestDoc[]): ParsedPolicies;
  computePolicies?(input: PolicyInput): PolicyResult;
  renderConfig(model: M, options: { listenAddress: string; prefix: string; errorLogLevel?: string; inferenceHop?: string; tempPathModules?: readonly TempPathModule[] }): C;
  computeStatuses(
    graph: Graph,
    parsed: ParsedResources,
    dataplane: DataplaneResult | ((gateway: GatewayNode) => DataplaneResult),
    options?: { controllerName?: string; classParameters?: (className: string) => ParametersVerdict | undefined },
  ): StatusReport[];
  carryTransitionTimes(previous: StatusReport[], next: StatusReport[], now: string): StatusReport[];
}

/** The real stages, in pipeline order. */
export const standardPipeline: Pipeline<NginxModel, RenderedConfig> = {
  parseManifests,
  buildGraph,
  buildModel,
  parsePolicyDocs,
  computePolicies,
  renderConfig,
  computeStatuses,
  carryTransitionTimes,
};

/** Standalone's data plane (dataplane/local.ts) with this pipeline's model and render stages. */
export function localDataplane<M, C extends RenderedConfigLike>(
  pipeline: Pipeline<M, C>,
  nginx: NginxApplier<C>,
  o: {
    log: Logger;
    listenAddress: string;
    /** nginx -p prefix (paths inside the config). */
    prefix: string;
    errorLogLevel?: string;
    /** Where nginx reaches the inference hop (host:port or unix:/path). */
    inferenceHop?: string;
    tempPathModules?: readonly TempPathModule[];
    /** Whether a port is free now (default: a bind on listenAddress). */
    portFree?: (address: string, port: number, transport: 'TCP' | 'UDP') => Promise<boolean>;
  },
): LocalDataplane<M, C> {
  return new LocalDataplane<M, C>({
    nginx,
    log: o.log,
    listenAddress: o.listenAddress,
    ...(o.portFree ? { portFree: o.portFree } : {}),
    buildModel: (graph, policies, memo) => pipeline.buildModel(graph, policies, memo),
    render: (model) =>
      pipeline.renderConfig(model, {
        listenAddress: o.listenAddress,
        prefix: o.prefix,
        errorLogLevel: o.errorLogLevel,
        ...(o.inferenceHop ? { inferenceHop: o.inferenceHop } : {}),
        ...(o.tempPathModules?.length ? { tempPathModules: o.tempPathModules } : {}),
      }),
  });
}

/** The provider side (file provider today, Kubernetes later). */
export interface ResourceSource {
  scan(): Promise<ManifestDoc[]>;
  writeStatuses(statuses: StatusReport[]): Promise<void>;
}

export interface ReconcilerOptions<M, C extends RenderedConfigLike> {
  pipeline: Pipeline<M, C>;
  source: ResourceSource;
  /** One local nginx for every Gateway (dataplane/local.ts), or one per Gateway served to agents. */
  dataplane: Dataplane;
  log: Logger;
  controllerName: string;
  /**
   * What the serving nginx can do (apply/nginx-binary.ts); default: a modern nginx, built as
   * scripts/build-nginx.sh builds it (tempPathModules: none).
   */
  nginx?: { http2On: boolean; version?: string; tempPathModules?: readonly TempPathModule[] };
  /** --gateway-api-inference-extension: InferencePool backends are served. */
  inferenceExtension?: boolean;
  /** Statuses written by an earlier run (status.yaml), so transition times survive a restart. */
  previousStatuses?: StatusReport[];
  /** First retry delay after a failed apply; doubles up to 60 s. 0 disables retries. */
  retryMs?: number;
  /** How often ports held by another process are checked again while any are (default 2 s). */
  portRecheckMs?: number;
  now?: () => string;
}

export interface ReconcileSummary {
  resources: number;
  gateways: number;
  routes: number;
  programmed: boolean;
  applied: boolean; // false when the config was unchanged and nginx already served it
  message?: string;
  /** Characters of the rendered configuration (local data plane). */
  configBytes?: number;
  /** Ports held by another process whose listeners are left out ("port/transport"). */
  unavailablePorts?: string[];
  /** Wall time of the whole reconcile and of its phases, in milliseconds. */
  ms: number;
  /** How long the oldest change it reconciles waited for it (behind a running reconcile). */
  waitMs: number;
  phases: { scan: number; build: number; render: number; apply: number; status: number };
}

/** The same documents (the providers hand out one frozen object per unchanged resource). */
function sameDocs(a: ManifestDoc[] | undefined, b: ManifestDoc[]): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].doc !== b[i].doc || a[i].source !== b[i].source) return false;
  return true;
}

function samePorts(a: readonly UnavailablePort[] | undefined, b: readonly UnavailablePort[]): boolean {
  return a !== undefined && a.length === b.length && a.every((p, i) => p.port === b[i].port && p.transport === b[i].transport && p.reason === b[i].reason && p.gateway === b[i].gateway);
}

/**
 * How many times one reconcile builds and publishes again without newly held ports: each round
 * only adds ports, and nginx names every port it fails on at once, so one round is the rule.
 */
const PORT_ROUNDS = 3;

/** What a reconcile built from its documents, kept for the next one. */
interface Built {
  docs: ManifestDoc[];
  /** The data plane's unavailable ports the graph was built with. */
  ports: readonly UnavailablePort[];
  parsed: ParsedResources;
  graph: Graph;
  policies?: PolicyResult;
}

export class Reconciler<M = unknown, C extends RenderedConfigLike = RenderedConfigLike> {
  private readonly o: ReconcilerOptions<M, C>;
  private previous: StatusReport[];
  /**
   * The effective policies of the configuration nginx serves: computePolicies keeps a zone whose
   * key changed, or a location whose merged buffers nginx would refuse, on these settings.
   */
  private lastAppliedPolicies?: EffectivePolicies;
  private running?: Promise<void>;
  private built?: Built;
  private pending = false;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private portTimer?: NodeJS.Timeout;
  private retryDelay: number;
  /** When the oldest change not yet reconciled asked for a run (the wait is logged). */
  private requestedAt?: bigint;
  private readonly listeners: ((summary: ReconcileSummary) => void)[] = [];

  constructor(options: ReconcilerOptions<M, C>) {
    this.o = options;
    this.previous = options.previousStatuses ?? [];
    this.retryDelay = options.retryMs ?? 2000;
  }

  /** Called after every reconcile (tests and benchmarks wait on it). */
  onReconciled(listener: (summary: ReconcileSummary) => void): void {
    this.listeners.push(listener);
  }

  /** Asks for a reconcile; returns when the state at call time has been reconciled. */
  trigger(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.requestedAt ??= process.hrtime.bigint();
    if (this.running) {
      this.pending = true;
      return this.running;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.pending = false;
      try {
        await this.reconcileOnce();
      } catch (err) {
        // A bug in a stage must not kill the controller: report it and wait for the next change.
        this.o.log.error('reconcile failed', { error: (err as Error).message, stack: (err as Error).stack });
        this.scheduleRetry(false);
      }
    } while (this.pending && !this.stopped);
  }

  /** Waits for a running reconcile to end, then refuses new ones. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.portTimer) clearTimeout(this.portTimer);
    await this.running;
  }

  private async reconcileOnce(): Promise<void> {
    const t0 = process.hrtime.bigint();
    const waitMs = this.requestedAt === undefined ? 0 : Math.round(Number(t0 - this.requestedAt) / 1e5) / 10;
    this.requestedAt = undefined;
    let mark = t0;
    const lap = (): number => {
      const t = process.hrtime.bigint();
      const ms = Number(t - mark) / 1e6;
      mark = t;
      return Math.round(ms * 10) / 10;
    };
    const { pipeline, log } = this.o;
    const docs = await this.o.source.scan();
    const dp = this.o.dataplane;
    // A port held by another process may be free by now: its listeners are tried again.
    await dp.recheckPorts?.();
    let ports = dp.unavailablePorts?.() ?? [];
    const scanMs = lap();
    // Nothing changed since the last reconcile (an agent reported, a Service got an address, a
    // retry): the graph, policies and published configs are what they were, so only the
    // statuses are computed again. Not after a failed local apply: that one is retried.
    const unchanged = sameDocs(this.built?.docs, docs) && samePorts(this.built?.ports, ports) && dp.settled();
    // The last graph is let go before the next one is built: what a build reuses is remembered
    // by the parsed resources and rules it shares, not by the graph; held, it was a second graph
    // in the heap while the next one was built (5,000 routes: 4.7 MB that only it held).
    if (!unchanged) this.built = undefined;
    let { parsed, graph, policies } = unchanged ? this.built! : this.build(docs, ports);
    this.built = { docs, ports, parsed, graph, policies };
    let graphMs = lap();

    let published: PublishResult = { outcome: { ok: true }, applied: false, modelMs: 0, renderMs: 0 };
    if (!unchanged) {
      published = await dp.publish(graph, policies?.effective);
      // nginx refused the configuration only for ports another process holds: the listeners on
      // them are left out (PortUnavailable) and the rest is published at once.
      for (let round = 0; !published.outcome.ok && published.portsChanged && round < PORT_ROUNDS; round++) {
        const t = process.hrtime.bigint();
        ports = dp.unavailablePorts?.() ?? [];
        ({ parsed, graph, policies } = this.build(docs, ports));
        this.built = { docs, ports, parsed, graph, policies };
        graphMs += Math.round(Number(process.hrtime.bigint() - t) / 1e5) / 10;
        const again = await dp.publish(graph, policies?.effective);
        published = { ...again, modelMs: published.modelMs + again.modelMs, renderMs: published.renderMs + again.renderMs };
      }
      // Frames just written to agents leave on the next tick (node corks a chunked response
      // until then): let them go now, so the agents apply while the statuses are computed.
      if (dp.perGateway) await new Promise((resolve) => setImmediate(resolve));
      if (published.outcome.ok && policies) this.lastAppliedPolicies = policies.effective;
    }
    const publishMs = lap();
    const buildMs = Math.round((graphMs + published.modelMs) * 10) / 10;
    const renderMs = published.renderMs;
    const dataplane = (gw: GatewayNode): DataplaneResult => dp.resultFor(gw);
    const failed = published.outcome.ok ? graph.gateways.map((gw) => dp.resultFor(gw)).find((r) => !r.programmed) : undefined;
    const outcome: ApplyOutcome = !published.outcome.ok ? published.outcome : failed ? { ok: false, message: failed.message ?? 'not programmed' } : { ok: true };
    const applied = published.applied;
    const configBytes = published.configBytes;

    const applyMs = Math.max(0, Math.round((publishMs - published.modelMs - published.renderMs) * 10) / 10);
    const classParameters = dp.classParameters ? (name: string) => dp.classParameters!(name) : undefined;
    let statuses = pipeline.computeStatuses(graph, parsed, dataplane, { controllerName: this.o.controllerName, ...(classParameters ? { classParameters } : {}) });
    if (policies) statuses = [...withAffected(statuses, policies.affected), ...policies.statuses];
    const now = (this.o.now ?? (() => new Date().toISOString()))();
    this.previous = pipeline.carryTransitionTimes(this.previous, statuses, now);
    await this.o.source.writeStatuses(this.previous);

    const summary: ReconcileSummary = {
      resources: docs.length,
      gateways: graph.gateways.length,
      routes: graph.routes.length,
      programmed: outcome.ok,
      applied,
      message: outcome.ok ? undefined : outcome.message,
      ...(configBytes !== undefined ? { configBytes } : {}),
      ...(ports.length > 0 ? { unavailablePorts: ports.map((p) => `${p.port}/${p.transport}`) } : {}),
      ms: 0,
      waitMs,
      phases: { scan: scanMs, build: buildMs, render: renderMs, apply: applyMs, status: lap() },
    };
    summary.ms = Math.round((Number(process.hrtime.bigint() - t0) / 1e6) * 10) / 10;
    log.info('reconciled', { ...summary });
    // Per-Gateway data planes report later (a Pending Gateway is not a failed apply to retry).
    this.scheduleRetry(published.outcome.ok);
    this.schedulePortRecheck(ports.length > 0);
    for (const l of this.listeners) l(summary);
  }

  /** Documents -> resources, graph and effective policies (logging what is rejected). */
  private build(docs: ManifestDoc[], unavailablePorts: readonly UnavailablePort[]): Omit<Built, 'docs' | 'ports'> {
    const { pipeline, log } = this.o;
    const parsed = pipeline.parseManifests(docs);
    for (const e of parsed.errors) log.error('manifest document rejected', { source: e.source, error: e.message });
    for (const i of parsed.ignored) {
      log.debug('manifest kind not handled; ignored', { source: i.source, apiVersion: i.apiVersion, kind: i.kind, name: i.name });
    }
    for (const r of parsed.invalid) {
      log.warn('resource invalid', { kind: r.kind, namespace: r.namespace, name: r.name, source: r.source, error: r.message, ...(r.standIn ? { targets: 'fail closed until it is fixed' } : {}) });
    }
    const parsedPolicies = pipeline.parsePolicyDocs?.(docs);
    for (const e of parsedPolicies?.errors ?? []) log.error('policy document rejected', { source: e.source, error: e.message });
    for (const r of parsedPolicies?.invalid ?? []) {
      log.warn('policy invalid', { kind: r.kind, namespace: r.namespace, name: r.name, error: r.message, ...(r.standIn ? { targets: 'fail closed until it is fixed' } : {}) });
    }
    const graph = pipeline.buildGraph(parsed.set, {
      controllerName: this.o.controllerName,
      inferenceExtension: this.o.inferenceExtension,
      ...(this.o.nginx ? { nginx: this.o.nginx } : {}),
      // Each Gateway has its own nginx: listeners of different Gateways never share a port.
      ...(this.o.dataplane.perGateway ? { dataplanePerGateway: true } : {}),
      ...(unavailablePorts.length > 0 ? { unavailablePorts } : {}),
    });
    const policies =
      parsedPolicies && pipeline.computePolicies
        ? pipeline.computePolicies({
            policies: parsedPolicies.policies,
            invalid: parsedPolicies.invalid,
            targets: targetsFromGraph(graph),
            previous: this.lastAppliedPolicies,
            controllerName: this.o.controllerName,
          })
        : undefined;
    const schemaInvalid = new Set((parsedPolicies?.invalid ?? []).map((r) => `${r.kind}/${r.namespace}/${r.name}`));
    for (const st of policies?.statuses ?? []) {
      // Conflicted, TargetNotFound, settings nginx would refuse: say it where operators look
      // (documents that fail their schema were logged above).
      if (schemaInvalid.has(`${st.kind}/${st.namespace}/${st.name}`)) continue;
      for (const anc of (st.status as { ancestors?: { ancestorRef: { kind: string; name: string }; conditions: { status: string; reason: string; message: string }[] }[] }).ancestors ?? []) {
        const c = anc.conditions.find((x) => x.status === 'False');
        if (c) log.warn('policy not applied', { kind: st.kind, namespace: st.namespace, name: st.name, target: `${anc.ancestorRef.kind}/${anc.ancestorRef.name}`, reason: c.reason, message: c.message });
      }
    }
    return { parsed, graph, policies };
  }

  /**
   * A failed apply is retried with backoff even when nothing changes: the cause is often
   * outside the manifests (a port taken by another process that goes away).
   */
  private scheduleRetry(ok: boolean): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const base = this.o.retryMs ?? 2000;
    if (ok || base <= 0 || this.stopped) {
      this.retryDelay = base;
      return;
    }
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryDelay * 2, 60000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.o.log.info('retrying the failed nginx configuration', { afterMs: delay });
      void this.trigger();
    }, delay);
    this.retryTimer.unref();
  }

  /**
   * While ports are held by another process, they are checked again on a timer (a reconcile
   * checks them too): one found free starts a reconcile that serves its listeners. A check is a
   * bind per held port, so the timer does not back off.
   */
  private schedulePortRecheck(held: boolean): void {
    if (this.portTimer) clearTimeout(this.portTimer);
    this.portTimer = undefined;
    const dp = this.o.dataplane;
    if (!held || this.stopped || !dp.recheckPorts || !dp.unavailablePorts) return;
    const before = dp.unavailablePorts().length;
    this.portTimer = setTimeout(() => {
      this.portTimer = undefined;
      void dp.recheckPorts!().then(() => {
        if (this.stopped) return;
        if (dp.unavailablePorts!().length < before) void this.trigger();
        else this.schedulePortRecheck(true);
      });
    }, this.o.portRecheckMs ?? 2000);
    this.portTimer.unref();
  }
}
