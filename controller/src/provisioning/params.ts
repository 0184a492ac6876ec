/**
 * Parameters for a Gateway's data plane, CRD-free: a ConfigMap referenced by the GatewayClass
 * (`spec.parametersRef`, group "" kind ConfigMap, with its namespace) and/or by the Gateway
 * (`spec.infrastructure.parametersRef`, same namespace as the Gateway). The Gateway's keys win
 * over the class's, which win over the controller's flags. A ConfigMap needs no CRD and no
 * chart upgrade to add a key, and its RBAC is ordinary.
 *
 *   data:
 *     serviceType: LoadBalancer | ClusterIP | NodePort
 *     externalTrafficPolicy: Local | Cluster
 *     replicas: "2"
 *     logLevel: debug | info | warn | error
 */
import { SERVICE_TYPES, type ConfigMapObject, type GatewayClassObject, type GatewayObject, type ParametersProblem, type ParametersReference, type ProvisioningDefaults, type ProxyParameters, type ServiceType } from './types';

export const PARAMETER_KEYS = ['serviceType', 'externalTrafficPolicy', 'replicas', 'logLevel'] as const;
const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];

/** Looks a ConfigMap up by namespace and name (from an informer's store, or a test's list). */
export type ConfigMapLookup = (namespace: string, name: string) => ConfigMapObject | undefined;

/** Reads one parameters ConfigMap; every problem is named by key. */
export function parseParameters(cm: ConfigMapObject): { params: ProxyParameters; errors: string[] } {
  const data = cm.data ?? {};
  const params: ProxyParameters = {};
  const errors: string[] = [];
  for (const key of Object.keys(data)) {
    if (!(PARAMETER_KEYS as readonly string[]).includes(key)) errors.push(`unknown key "${key}" (known: ${PARAMETER_KEYS.join(', ')})`);
  }
  if (data.serviceType !== undefined) {
    if ((SERVICE_TYPES as readonly string[]).includes(data.serviceType)) params.serviceType = data.serviceType as ServiceType;
    else errors.push(`serviceType must be one of ${SERVICE_TYPES.join(', ')}, got "${data.serviceType}"`);
  }
  if (data.externalTrafficPolicy !== undefined) {
    if (data.externalTrafficPolicy === 'Local' || data.externalTrafficPolicy === 'Cluster') params.externalTrafficPolicy = data.externalTrafficPolicy;
    else errors.push(`externalTrafficPolicy must be Local or Cluster, got "${data.externalTrafficPolicy}"`);
  }
  if (data.replicas !== undefined) {
    const n = Number(data.replicas);
    if (/^\d+$/.test(data.replicas.trim()) && n >= 0 && n <= 1000) params.replicas = n;
    else errors.push(`replicas must be a whole number from 0 to 1000, got "${data.replicas}"`);
  }
  if (data.logLevel !== undefined) {
    if (LOG_LEVELS.includes(data.logLevel)) params.logLevel = data.logLevel;
    else errors.push(`logLevel must be one of ${LOG_LEVELS.join(', ')}, got "${data.logLevel}"`);
  }
  return { params, errors };
}

function resolveRef(
  ref: ParametersReference | undefined,
  namespace: string | undefined,
  what: string,
  lookup: ConfigMapLookup,
): { params: ProxyParameters; problem?: ParametersProblem } {
  if (!ref) return { params: {} };
  if ((ref.group ?? '') !== '' || ref.kind !== 'ConfigMap') {
    return { params: {}, problem: { reason: 'InvalidParameters', message: `${what} must refer to a core ConfigMap (group "", kind ConfigMap), got group "${ref.group}" kind "${ref.kind}"` } };
  }
  if (!namespace) {
    return { params: {}, problem: { reason: 'InvalidParameters', message: `${what} must name the ConfigMap's namespace` } };
  }
  const cm = lookup(namespace, ref.name);
  if (!cm) return { params: {}, problem: { reason: 'InvalidParameters', message: `${what}: ConfigMap ${namespace}/${ref.name} not found` } };
  const { params, errors } = parseParameters(cm);
  if (errors.length) {
    // A bad key is not applied; the good ones still are, so one typo does not undo the rest.
    return { params, problem: { reason: 'InvalidParameters', message: `${what}: ConfigMap ${namespace}/${ref.name}: ${errors.join('; ')}` } };
  }
  return { params };
}

/** Why a GatewayClass's parametersRef cannot be used (undefined: none, or it is fine). */
export function classParametersProblem(gatewayClass: GatewayClassObject, lookup: ConfigMapLookup): ParametersProblem | undefined {
  const ref = gatewayClass.spec.parametersRef;
  return resolveRef(ref, ref?.namespace, 'GatewayClass spec.parametersRef', lookup).problem;
}

export interface EffectiveParameters {
  serviceType: ServiceType;
  externalTrafficPolicy: 'Local' | 'Cluster';
  replicas: number;
  logLevel: string;
}

export interface ResolvedParameters {
  params: EffectiveParameters;
  /** For the GatewayClass's status (Accepted False, InvalidParameters). */
  classProblem?: ParametersProblem;
  /** For the Gateway's status. */
  gatewayProblem?: ParametersProblem;
}

export function resolveParameters(
  gateway: GatewayObject,
  gatewayClass: GatewayClassObject | undefined,
  defaults: ProvisioningDefaults,
  lookup: ConfigMapLookup,
): ResolvedParameters {
  const cls = resolveRef(gatewayClass?.spec.parametersRef, gatewayClass?.spec.parametersRef?.namespace, 'GatewayClass spec.parametersRef', lookup);
  const infraRef = gateway.spec.infrastructure?.parametersRef;
  const gw = resolveRef(infraRef && { ...infraRef, namespace: gateway.metadata.namespace }, gateway.metadata.namespace, 'Gateway spec.infrastructure.parametersRef', lookup);
  const merged = { ...cls.params, ...gw.params };
  return {
    params: {
      serviceType: merged.serviceType ?? defaults.serviceType,
      externalTrafficPolicy: merged.externalTrafficPolicy ?? defaults.externalTrafficPolicy,
      replicas: merged.replicas ?? defaults.replicas,
      logLevel: merged.logLevel ?? defaults.logLevel,
    },
    classProblem: cls.problem,
    gatewayProblem: gw.problem,
  };
}
