/**
 * KubernetesDataplane: the data-plane side of the controller in Kubernetes mode. Each Gateway
 * of ours gets its own nginx pods (provisioning/), which run portcullis-agent and fetch their
 * Gateway's config from this process (ConfigServer). For the Reconciler it is the per-Gateway
 * dataplane: publish() after every build, resultFor() for each Gateway's Programmed and
 * addresses, onOutcome() when either changed (an agent reported, a Service got its address).
 *
 * The leader (setLeader) provisions and serves the agents; followers keep their sources up to
 * date so that taking over is immediate.
 */
import * as fs from 'fs';
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../log';
import type { DataplaneResult, Graph, ObjectRef, ParametersVerdict, UnavailablePort } from '../graph/types';
import type { EffectivePolicies } from '../policies';
import type { Dataplane, PublishResult } from '../dataplane';
import { unavailableListenerPorts } from '../dataplane/ports';
import type { ManifestDoc } from '../resources/types';
import { gatewayAddresses, type ServiceForAddresses } from '../provisioning/addresses';
import { Provisioner, type ObjectClient } from '../provisioning/applier';
import { baseName, MANAGED_BY } from '../provisioning/names';
import { AGENT_TOKEN_AUDIENCE } from '../provisioning/objects';
import { planProvisioning } from '../provisioning/plan';
import type { ConfigMapObject, GatewayClassObject, GatewayListener, GatewayObject, KubeObject, ParametersProblem, ProvisioningDefaults } from '../provisioning/types';
import { TokenAuthenticator } from './auth';
import { ConfigServer } from './server';
import { GatewaySources } from './sources';
import { apiTokenReviewer } from './tokenreview';

export interface KubernetesDataplaneOptions {
  kubeConfig: k8s.KubeConfig;
  log: Logger;
  controllerName: string;
  defaults: ProvisioningDefaults;
  /** Where the config server listens, e.g. { host: '0.0.0.0', port: 8443 }. */
  listen: { host?: string; port: number };
  /** PEM files of the config server's certificate; without them it speaks plain HTTP. */
  tls?: { certFile: string; keyFile: string };
  /** Serve without TLS (tests, or a mesh that encrypts): rendered configs carry private keys. */
  allowPlaintext?: boolean;
  errorLogLevel?: string;
}

const SELECTOR = `app.kubernetes.io/managed-by=${MANAGED_BY}`;

export type GatewayDataplaneResult = DataplaneResult;

export class KubernetesDataplane implements Dataplane {
  readonly perGateway = true as const;
  readonly server: ConfigServer;
  readonly provisioner: Provisioner;
  private readonly sources: GatewaySources;
  private readonly core: k8s.CoreV1Api;
  private readonly informers: k8s.Informer<k8s.KubernetesObject>[] = [];
  private services?: k8s.ObjectCache<k8s.V1Service>;
  /** "ns/name" -> the Service name provisioned for it. */
  private serviceNames = new Map<string, string>();
  /** Per Gateway ("ns/name"): the valid listeners accepted ListenerSets add (from the last graph). */
  private listenerSetListeners = new Map<string, GatewayListener[]>();
  private gatewayProblems = new Map<string, ParametersProblem>();
  private classProblems = new Map<string, ParametersProblem>();
  /** Classes of ours whose parametersRef the last provisioning read (for their Accepted condition). */
  private classesWithParameters = new Set<string>();
  /** "ns/name" of a referenced parameters ConfigMap -> a watch on that one ConfigMap. */
  private readonly parameterWatches = new Map<string, k8s.ListWatch<k8s.V1ConfigMap>>();
  private readonly syncedWatches = new WeakSet<k8s.ListWatch<k8s.V1ConfigMap>>();
  private leader = false;
  private lastDocs?: ManifestDoc[];
  private readonly listeners: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly o: KubernetesDataplaneOptions) {
    const kc = o.kubeConfig;
    const tls = o.tls ? { cert: fs.readFileSync(o.tls.certFile, 'utf8'), key: fs.readFileSync(o.tls.keyFile, 'utf8') } : undefined;
    if (!tls && !o.allowPlaintext) {
      throw new Error('the agent config server needs --agent-tls-cert and --agent-tls-key: configs carry TLS private keys and tokens (--agent-allow-plaintext only for tests or a mesh that encrypts)');
    }
    if (!tls) o.log.warn('the agent config server speaks plain HTTP (--agent-allow-plaintext): tokens and private keys cross the network unencrypted', { component: 'configserver' });
    this.server = new ConfigServer({
      log: o.log,
      auth: new TokenAuthenticator(apiTokenReviewer(kc.makeApiClient(k8s.AuthenticationV1Api)), [AGENT_TOKEN_AUDIENCE]),
      tls,
    });
    this.server.onOutcome(() => this.changed());
    this.sources = new GatewaySources({ errorLogLevel: o.errorLogLevel });
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.provisioner = new Provisioner({ client: k8s.KubernetesObjectApi.makeApiClient(kc) as unknown as ObjectClient, log: o.log });
  }

  /** Called when a Gateway's outcome or addresses changed: statuses should be computed again. */
  onOutcome(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  async start(): Promise<void> {
    const addr = await this.server.listen(this.o.listen.port, this.o.listen.host);
    this.o.log.info('agent config server listening', { component: 'configserver', address: `${addr.address}:${addr.port}`, tls: !!this.o.tls });
    const kc = this.o.kubeConfig;
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const services = this.watch<k8s.V1Service>('/api/v1/services', () => this.core.listServiceForAllNamespaces({ labelSelector: SELECTOR }), 'Service');
    this.services = services;
    this.watch<k8s.V1Deployment>('/apis/apps/v1/deployments', () => apps.listDeploymentForAllNamespaces({ labelSelector: SELECTOR }), 'Deployment');
    this.watch<k8s.V1ServiceAccount>('/api/v1/serviceaccounts', () => this.core.listServiceAccountForAllNamespaces({ labelSelector: SELECTOR }), 'ServiceAccount');
    this.watch<k8s.V1ConfigMap>('/api/v1/configmaps', () => this.core.listConfigMapForAllNamespaces({ labelSelector: SELECTOR }), 'ConfigMap');
  }

  /**
   * An informer on our own (labelled) objects: a Service's address feeds the Gateway status; a
   * deletion of anything we provisioned (by a person, or GC racing a re-created Gateway) makes
   * the leader apply it again.
   */
  private watch<T extends k8s.KubernetesObject>(path: string, list: () => Promise<k8s.KubernetesListObject<T>>, kind: string): k8s.Informer<T> & k8s.ObjectCache<T> {
    const informer = k8s.makeInformer<T>(this.o.kubeConfig, path, list, SELECTOR);
    const onDelete = (obj: T) => {
      this.provisioner.forget(kind, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
      if (kind === 'Service') this.changed();
      if (this.leader && this.lastDocs) void this.provision(this.lastDocs);
    };
    informer.on('delete', onDelete);
    if (kind === 'Service') {
      informer.on('add', () => this.changed());
      informer.on('update', () => this.changed());
    }
    let delay = 500;
    informer.on('connect', () => (delay = 500));
    informer.on('error', (err) => {
      if (this.stopped) return;
      this.o.log.warn('watch of provisioned objects failed; restarting', { component: 'provisioner', kind, error: (err as Error)?.message, retryMs: delay });
      setTimeout(() => void informer.start().catch(() => undefined), delay).unref();
      delay = Math.min(delay * 2, 30000);
    });
    void informer.start().catch((err: Error) => this.o.log.warn('watch of provisioned objects failed', { component: 'provisioner', kind, error: err.message }));
    this.informers.push(informer as unknown as k8s.Informer<k8s.KubernetesObject>);
    return informer;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.provisioner.stop();
    await Promise.all([...this.informers, ...this.parameterWatches.values()].map((i) => i.stop().catch(() => undefined)));
    await this.server.close();
  }

  setLeader(leader: boolean): void {
    this.leader = leader;
    this.server.setServing(leader);
    if (!leader) this.provisioner.reset();
    else if (this.lastDocs) void this.provision(this.lastDocs);
    this.changed();
  }

  /**
   * After every build: each Gateway's model becomes what its agents are served (rendered per
   * agent layout when one asks). The outcome comes later, in the agents' reports.
   */
  async publish(graph: Graph, policies?: EffectivePolicies): Promise<PublishResult> {
    const t0 = process.hrtime.bigint();
    const names = new Map<string, string>();
    for (const gw of [...graph.gateways, ...graph.rejectedGateways]) names.set(`${gw.namespace}/${gw.name}`, baseName(gw.name, gw.className));
    this.serviceNames = names;
    // Listeners that accepted ListenerSets add: their ports must be on the Gateway's Service too.
    const added = new Map<string, GatewayListener[]>();
    for (const gw of graph.gateways) {
      const extra = gw.listeners.filter((l) => l.listenerSet && l.valid).map((l) => ({ name: l.name, port: l.port, protocol: l.protocol }));
      if (extra.length > 0) added.set(`${gw.namespace}/${gw.name}`, extra);
    }
    const addedText = JSON.stringify([...added]);
    if (addedText !== JSON.stringify([...this.listenerSetListeners])) {
      this.listenerSetListeners = added;
      if (this.leader && this.lastDocs) void this.provision(this.lastDocs);
    }
    this.server.setSources(this.sources.build(graph, policies));
    const ms = Math.round(Number(process.hrtime.bigint() - t0) / 1e5) / 10;
    return { outcome: { ok: true }, applied: true, modelMs: 0, renderMs: ms };
  }

  /**
   * The ports the Gateways' agents report held by another process beside their nginx: the loop
   * builds each Gateway without the listeners on them (PortUnavailable), for all its replicas
   * alike (a listener only some replicas serve would fail a share of its clients at random). An
   * agent rechecks them and reports when they are free; one that disconnects no longer holds any.
   */
  unavailablePorts(): readonly UnavailablePort[] {
    const out: UnavailablePort[] = [];
    for (const gateway of [...this.serviceNames.keys()].sort()) {
      for (const { pod, ports } of this.server.heldPorts(gateway)) out.push(...unavailableListenerPorts(ports, { gateway, pod }));
    }
    return out;
  }

  /** Agents are sent every new config as it is published; there is nothing to retry here. */
  settled(): boolean {
    return true;
  }

  /** Programmed and addresses of one Gateway. */
  resultFor(gw: ObjectRef): GatewayDataplaneResult {
    const key = `${gw.namespace}/${gw.name}`;
    const name = this.serviceNames.get(key);
    const service = name ? (this.services?.get(name, gw.namespace) as ServiceForAddresses | undefined) : undefined;
    const addresses = gatewayAddresses(service).map((a) => a.value);
    const outcome = this.server.outcome(key);
    const problem = this.gatewayProblems.get(key);
    const parameters = problem ? { invalidParameters: `${problem.message}; the data plane runs with the remaining parameters and the defaults` } : {};
    if (outcome?.programmed) return { programmed: true, addresses, ...parameters };
    if (outcome) return { programmed: false, reason: outcome.reason, message: outcome.message, addresses, ...parameters };
    // Not the leader, or agents still reconnecting to a new leader.
    return { programmed: false, reason: 'Pending', message: 'Waiting for the data plane to report (agents are connecting to the controller)', addresses, ...parameters };
  }

  /** The GatewayClass's parametersRef verdict, once provisioning has read it (leader only). */
  classParameters(className: string): ParametersVerdict | undefined {
    const problem = this.classProblems.get(className);
    if (problem) return { valid: false, message: `${problem.message}; its Gateways run with the controller's defaults` };
    return this.classesWithParameters.has(className) ? { valid: true } : undefined;
  }

  /** Why a Gateway's (or GatewayClass's) parametersRef could not be used, for its status. */
  parametersProblem(gateway: ObjectRef): ParametersProblem | undefined {
    return this.gatewayProblems.get(`${gateway.namespace}/${gateway.name}`);
  }

  classParametersProblem(className: string): ParametersProblem | undefined {
    return this.classProblems.get(className);
  }

  /**
   * Provisions every Gateway of ours from the raw API objects (uid, spec.infrastructure and the
   * parametersRef are not in the graph). Leader only; call after each reconcile.
   */
  async provision(docs: ManifestDoc[]): Promise<void> {
    this.lastDocs = docs;
    if (!this.leader || this.stopped) return;
    const gateways: GatewayObject[] = [];
    const classes: GatewayClassObject[] = [];
    for (const d of docs) {
      const o = d.doc as { kind?: string; apiVersion?: string };
      if (o?.kind === 'Gateway' && o.apiVersion?.startsWith('gateway.networking.k8s.io/')) gateways.push(this.withListenerSetListeners(o as unknown as GatewayObject));
      else if (o?.kind === 'GatewayClass' && o.apiVersion?.startsWith('gateway.networking.k8s.io/')) classes.push(o as unknown as GatewayClassObject);
    }
    const configMaps = await this.parameterConfigMaps(gateways, classes);
    if (this.stopped) return;
    const plan = planProvisioning({
      gateways,
      gatewayClasses: classes,
      controllerName: this.o.controllerName,
      defaults: this.o.defaults,
      configMap: (ns, name) => configMaps.get(`${ns}/${name}`),
    });
    const before = this.problemsText();
    this.gatewayProblems = new Map(plan.gateways.filter((g) => g.problem).map((g) => [g.key, g.problem!]));
    this.classProblems = plan.classProblems;
    this.classesWithParameters = new Set(classes.filter((c) => c.spec.controllerName === this.o.controllerName && c.spec.parametersRef).map((c) => c.metadata.name));
    // Statuses show the problems: compute them again when they changed.
    if (this.problemsText() !== before) this.changed();
    await this.provisioner.reconcile(plan);
  }

  /** The Gateway as provisioning sees it: its own listeners and those its ListenerSets add. */
  private withListenerSetListeners(gateway: GatewayObject): GatewayObject {
    const extra = this.listenerSetListeners.get(`${gateway.metadata.namespace}/${gateway.metadata.name}`);
    if (!extra || !Array.isArray(gateway.spec?.listeners)) return gateway;
    return { ...gateway, spec: { ...gateway.spec, listeners: [...gateway.spec.listeners, ...extra] } };
  }

  private problemsText(): string {
    return JSON.stringify([[...this.gatewayProblems], [...this.classProblems], [...this.classesWithParameters]]);
  }

  /**
   * The parameters ConfigMaps referenced by our Gateways and classes. Each is watched on its own
   * (a list+watch with a field selector on its name): an edit re-provisions at once, and a
   * cluster-wide ConfigMap watch would hold every ConfigMap of the cluster in memory for a few
   * of them. Watches of ConfigMaps no longer referenced are stopped.
   */
  private async parameterConfigMaps(gateways: GatewayObject[], classes: GatewayClassObject[]): Promise<Map<string, ConfigMapObject>> {
    const refs = new Set<string>();
    for (const c of classes) {
      const r = c.spec.parametersRef;
      if (c.spec.controllerName === this.o.controllerName && r && (r.group ?? '') === '' && r.kind === 'ConfigMap' && r.namespace) refs.add(`${r.namespace}/${r.name}`);
    }
    for (const g of gateways) {
      const r = g.spec.infrastructure?.parametersRef;
      if (r && (r.group ?? '') === '' && r.kind === 'ConfigMap') refs.add(`${g.metadata.namespace}/${r.name}`);
    }
    for (const [ref, watch] of this.parameterWatches) {
      if (refs.has(ref)) continue;
      this.parameterWatches.delete(ref);
      void watch.stop().catch(() => undefined);
    }
    const out = new Map<string, ConfigMapObject>();
    for (const ref of refs) {
      const [namespace, name] = ref.split('/');
      let watch = this.parameterWatches.get(ref);
      if (!watch) {
        watch = this.watchParameters(namespace, name);
        this.parameterWatches.set(ref, watch);
        try {
          await watch.start();
          this.syncedWatches.add(watch);
        } catch (err) {
          this.o.log.warn('reading a parameters ConfigMap failed', { component: 'provisioner', configMap: ref, error: (err as Error).message });
        }
      }
      const cm = watch.get(name, namespace);
      if (cm) out.set(ref, cm as ConfigMapObject);
    }
    return out;
  }

  private watchParameters(namespace: string, name: string): k8s.ListWatch<k8s.V1ConfigMap> {
    const fieldSelector = `metadata.name=${name}`;
    const watch = new k8s.ListWatch<k8s.V1ConfigMap>(
      `/api/v1/namespaces/${namespace}/configmaps`,
      new k8s.Watch(this.o.kubeConfig),
      () => this.core.listNamespacedConfigMap({ namespace, fieldSelector }),
      false,
      undefined,
      fieldSelector,
    );
    // Events of the first list are what this provisioning reads; later ones are edits.
    const reprovision = () => {
      if (this.syncedWatches.has(watch) && this.leader && this.lastDocs && !this.stopped) void this.provision(this.lastDocs);
    };
    watch.on('add', reprovision);
    watch.on('update', reprovision);
    watch.on('delete', reprovision);
    watch.on('error', (err) => {
      if (!this.stopped) this.o.log.warn('watch of a parameters ConfigMap failed; it reconnects', { component: 'provisioner', configMap: `${namespace}/${name}`, error: (err as Error)?.message });
    });
    return watch;
  }
}

export type { KubeObject };
