/**
 * Graph -> one GatewaySource per Gateway of ours: on Kubernetes every Gateway has its own
 * nginx, so each gets a model built from a graph holding only that Gateway (its listeners,
 * their routes, the policies that reach them). The render is left to the config server, which
 * knows each agent's nginx layout.
 */
import type { Graph } from '../graph/types';
import { buildModel, ModelMemo, type NginxModel } from '../model';
import type { EffectivePolicies } from '../policies';
import { renderConfig } from '../render';
import { baseName } from '../provisioning/names';
import type { GatewaySource } from './server';

export class GatewaySources {
  /** One memo per Gateway: server keys (port|hostname) repeat across Gateways. */
  private readonly memos = new Map<string, ModelMemo>();

  constructor(private readonly options: { errorLogLevel?: string } = {}) {}

  build(graph: Graph, policies?: EffectivePolicies): Map<string, GatewaySource> {
    const out = new Map<string, GatewaySource>();
    const accepted = new Set(graph.gateways);
    // A Gateway that is not accepted still has its provisioned pods: they get a config that
    // serves nothing, so nginx runs and the pods turn Ready (a pod that never does holds up
    // rollouts and whatever waits for its namespace) while the Gateway reports Programmed False.
    for (const gw of [...graph.gateways, ...graph.rejectedGateways]) {
      const key = `${gw.namespace}/${gw.name}`;
      let memo = this.memos.get(key);
      if (!memo) this.memos.set(key, (memo = new ModelMemo()));
      const model: NginxModel = buildModel({ ...graph, gateways: accepted.has(gw) ? [gw] : [], rejectedGateways: [] }, policies, memo);
      out.set(key, {
        serviceAccount: baseName(gw.name, gw.className),
        render: (variant) => renderConfig(model, { prefix: variant.prefix, listenAddress: variant.listenAddress, errorLogLevel: this.options.errorLogLevel }).files,
      });
    }
    for (const key of this.memos.keys()) if (!out.has(key)) this.memos.delete(key);
    return out;
  }
}
