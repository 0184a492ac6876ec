/**
 * The data plane, one interface for both modes: the reconcile loop hands it each new graph and
 * the effective policies, and asks it per Gateway whether that Gateway is programmed and on
 * which addresses. Standalone (local.ts): this process builds the model, renders it and applies
 * it to its own nginx with apply/, and knows the outcome at once. Kubernetes (configserver/
 * kubernetes.ts): each Gateway's model is built and served to that Gateway's agents over the
 * agent protocol (protocol/), which apply it with the same apply/ code and report later (the
 * loop reconciles again when a report changes an outcome).
 */
import type { DataplaneResult, GatewayNode, Graph, ParametersVerdict, UnavailablePort } from '../graph/types';
import type { EffectivePolicies } from '../policies';
import type { PortFailure } from '../apply/ports';

/** apply/nginx.ts ApplyResult: nginx's message, and the ports it could not listen on. */
export type ApplyOutcome = { ok: true } | { ok: false; message: string; portFailures?: PortFailure[] };

/** What one publish did, for the loop's summary and its retry. */
export interface PublishResult {
  /** False: the config was refused here and now (a local nginx); retried with backoff. */
  outcome: ApplyOutcome;
  /** A config was handed to nginx (false when the one it serves was the same). */
  applied: boolean;
  /** Characters of the rendered configuration, when rendered here. */
  configBytes?: number;
  /**
   * The configuration was refused for ports another process holds, now added to
   * `unavailablePorts()`: a graph built without their listeners can be published at once.
   */
  portsChanged?: boolean;
  /** Time spent building the model(s) and rendering, in ms (the rest of the call is apply). */
  modelMs: number;
  renderMs: number;
}

export interface Dataplane {
  /**
   * Every Gateway has an nginx of its own (Kubernetes): listeners of different Gateways never
   * share a port, which the graph then need not check.
   */
  readonly perGateway: boolean;
  /** Serves this graph with these policies. */
  publish(graph: Graph, policies: EffectivePolicies | undefined): Promise<PublishResult>;
  /**
   * Whether publishing the same graph again would change nothing: false after a local apply
   * failed (or before the first), so an unchanged reconcile still retries it.
   */
  settled(): boolean;
  /**
   * Ports found held by another process, whose listeners the graph leaves out (standalone: one
   * address for every Gateway, so they concern every Gateway); absent: none are tracked.
   */
  unavailablePorts?(): readonly UnavailablePort[];
  /** Checks the unavailable ports again and forgets those that are free now. */
  recheckPorts?(): Promise<void>;
  /** Programmed and addresses of one Gateway, as the data plane knows them now. */
  resultFor(gateway: Pick<GatewayNode, 'namespace' | 'name'>): DataplaneResult;
  /** Whether a GatewayClass's parametersRef could be used (undefined: no verdict). */
  classParameters?(className: string): ParametersVerdict | undefined;
}

export { LocalDataplane, type NginxApplier, type LocalDataplaneOptions, type RenderedConfigLike } from './local';
