/**
 * The objects provisioning reads, as the API server returns them (only the fields used here),
 * and what it produces. Kept apart from resources/ because provisioning needs fields the
 * routing pipeline ignores (uid, spec.infrastructure, parametersRef).
 */

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
}

export interface LocalParametersReference {
  group: string;
  kind: string;
  name: string;
}

export interface ParametersReference extends LocalParametersReference {
  namespace?: string;
}

export interface GatewayListener {
  name: string;
  port: number;
  protocol: string;
}

export interface GatewayObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    gatewayClassName: string;
    listeners: GatewayListener[];
    /** Static addresses the Gateway asks for (type defaults to IPAddress). */
    addresses?: { type?: string; value: string }[];
    infrastructure?: {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      parametersRef?: LocalParametersReference;
    };
  };
}

export interface GatewayClassObject {
  metadata: ObjectMeta;
  spec: { controllerName: string; parametersRef?: ParametersReference };
}

export interface ConfigMapObject {
  metadata: ObjectMeta;
  data?: Record<string, string>;
}

export const SERVICE_TYPES = ['LoadBalancer', 'ClusterIP', 'NodePort'] as const;
export type ServiceType = (typeof SERVICE_TYPES)[number];

/** What a parameters ConfigMap may set; unset fields fall back to the class's, then the flags'. */
export interface ProxyParameters {
  serviceType?: ServiceType;
  externalTrafficPolicy?: 'Local' | 'Cluster';
  replicas?: number;
  logLevel?: string;
}

/** The controller's flags (the chart's values): defaults for every Gateway. */
export interface ProvisioningDefaults {
  /** nginx + portcullis-agent image. */
  image: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  serviceType: ServiceType;
  externalTrafficPolicy: 'Local' | 'Cluster';
  replicas: number;
  logLevel: string;
  /** Where agents reach the controller's config server (https://...). */
  agentServerUrl: string;
  /** PEM the agents verify the config server with; empty: the system's roots. */
  agentCa?: string;
}

/** A Kubernetes object to apply (server-side apply needs apiVersion and kind). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { ownerReferences?: OwnerReference[] };
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** A reason the Gateway (or its class) cannot be provisioned as asked, for its status. */
export interface ParametersProblem {
  /** Gateway API reason: InvalidParameters. */
  reason: 'InvalidParameters';
  message: string;
}
