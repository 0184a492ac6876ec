/**
 * planProvisioning: every Gateway of ours -> the objects its data plane needs, with the
 * parameter problems its status must show (pure; applier.ts does the I/O).
 */
import { desiredObjects, type DesiredObjects } from './objects';
import { classParametersProblem, resolveParameters, type ConfigMapLookup, type EffectiveParameters } from './params';
import type { GatewayClassObject, GatewayObject, ParametersProblem, ProvisioningDefaults } from './types';

export interface GatewayPlan {
  /** "namespace/name" */
  key: string;
  gateway: GatewayObject;
  params: EffectiveParameters;
  objects: DesiredObjects;
  problem?: ParametersProblem;
}

export interface ProvisioningPlan {
  gateways: GatewayPlan[];
  /** By GatewayClass name: its parametersRef cannot be used. */
  classProblems: Map<string, ParametersProblem>;
}

export function gatewayKey(g: { metadata: { namespace?: string; name: string } }): string {
  return `${g.metadata.namespace ?? ''}/${g.metadata.name}`;
}

export function planProvisioning(input: {
  gateways: GatewayObject[];
  gatewayClasses: GatewayClassObject[];
  controllerName: string;
  defaults: ProvisioningDefaults;
  configMap: ConfigMapLookup;
}): ProvisioningPlan {
  const classes = new Map(input.gatewayClasses.filter((c) => c.spec.controllerName === input.controllerName).map((c) => [c.metadata.name, c]));
  const classProblems = new Map<string, ParametersProblem>();
  // A class's parameters are judged even while no Gateway uses it (its own status says so).
  for (const cls of classes.values()) {
    const problem = classParametersProblem(cls, input.configMap);
    if (problem) classProblems.set(cls.metadata.name, problem);
  }
  const gateways: GatewayPlan[] = [];
  for (const gateway of input.gateways) {
    const cls = classes.get(gateway.spec.gatewayClassName);
    if (!cls || !gateway.metadata.uid || !gateway.spec.listeners?.length) continue;
    const resolved = resolveParameters(gateway, cls, input.defaults, input.configMap);
    if (resolved.classProblem) classProblems.set(cls.metadata.name, resolved.classProblem);
    gateways.push({
      key: gatewayKey(gateway),
      gateway,
      params: resolved.params,
      objects: desiredObjects(gateway, resolved.params, input.defaults),
      problem: resolved.gatewayProblem,
    });
  }
  gateways.sort((a, b) => a.key.localeCompare(b.key));
  return { gateways, classProblems };
}
