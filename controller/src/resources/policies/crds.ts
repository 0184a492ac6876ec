/**
 * CustomResourceDefinitions of the policy kinds, built from the same patterns and
 * messages as the zod schemas. The YAML under charts/portcullis/crds/ is this module's output
 * (regenerate: `npx tsx controller/src/resources/policies/crds.ts`); a test keeps them equal and
 * checks that the CRDs accept and refuse the same documents as the zod schemas.
 *
 * CEL (x-kubernetes-validations) carries what OpenAPI cannot: the targetRefs mix rule, unique
 * targets, busyBuffersSize bounds within one policy, zoneSize bounds. Sizes are converted to
 * bytes in CEL with the Kubernetes strings library (substring, endsWith).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { GATEWAY_API_GROUP } from '../types';
import { MESSAGES, POLICY_GROUP, POLICY_VERSION, TARGET_KINDS } from './common';
import { KEY_PATTERN } from './nginx-variables';
import { LOG_LEVELS, RATE_PATTERN } from './ratelimitpolicy';
import { CIDR_MAX_LENGTH, CIDR_PATTERN } from './cidr';
import { CLIENT_ADDRESS_SOURCES, MAX_ACCESS_CIDRS, MAX_TRUSTED_CIDRS } from './ipaccesspolicy';
import { BODY_SIZE_PATTERN, BUFFER_SIZE_PATTERN, MAX_ZONE_BYTES, MIN_ZONE_BYTES } from './size';

type Schema = Record<string, unknown>;

/** CEL: bytes of a size string that already matches BUFFER_SIZE_PATTERN. */
export function celBytes(x: string): string {
  const number = `int(${x}.substring(0, ${x}.size() - 1))`;
  return (
    `((${x}.endsWith('k') || ${x}.endsWith('K')) ? ${number} * 1024 : ` +
    `((${x}.endsWith('m') || ${x}.endsWith('M')) ? ${number} * 1048576 : int(${x})))`
  );
}

const NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

const targetRef: Schema = {
  description: 'A Gateway or a route (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute) in the namespace of the policy. What a policy kind does not do on a route kind is reported on the policy.',
  type: 'object',
  required: ['group', 'kind', 'name'],
  properties: {
    group: { description: `Must be ${GATEWAY_API_GROUP}.`, type: 'string', enum: [GATEWAY_API_GROUP] },
    kind: { type: 'string', enum: [...TARGET_KINDS] },
    name: { type: 'string', minLength: 1, maxLength: 253, pattern: NAME_PATTERN },
  },
};

const targetRefs: Schema = {
  description: 'The Gateway, or the routes, this policy applies to (same namespace). A Gateway policy affects every route attached to the Gateway.',
  type: 'array',
  minItems: 1,
  maxItems: 16,
  items: targetRef,
  'x-kubernetes-validations': [
    { rule: "!(self.exists(t, t.kind == 'Gateway') && self.exists(t, t.kind != 'Gateway'))", message: MESSAGES.mixedTargets },
    { rule: 'self.all(t1, self.exists_one(t2, t1.kind == t2.kind && t1.name == t2.name))', message: MESSAGES.duplicateTarget },
  ],
};

const bufferSize = (description: string): Schema => ({
  description: `${description} Bytes, or a number with unit k or m (e.g. 4k, 16k).`,
  type: 'string',
  maxLength: 16,
  pattern: BUFFER_SIZE_PATTERN,
  'x-kubernetes-validations': [{ rule: `${celBytes('self')} > 0`, message: 'must be greater than 0' }],
});

/** Gateway API PolicyStatus: one ancestor per target. */
const policyStatus: Schema = {
  type: 'object',
  properties: {
    ancestors: {
      type: 'array',
      maxItems: 16,
      items: {
        type: 'object',
        required: ['ancestorRef', 'controllerName', 'conditions'],
        properties: {
          ancestorRef: {
            type: 'object',
            required: ['name'],
            properties: {
              group: { type: 'string' },
              kind: { type: 'string' },
              namespace: { type: 'string' },
              name: { type: 'string' },
              sectionName: { type: 'string' },
              port: { type: 'integer', format: 'int32' },
            },
          },
          controllerName: { type: 'string', maxLength: 253 },
          conditions: {
            type: 'array',
            maxItems: 8,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['type'],
            items: {
              type: 'object',
              required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
              properties: {
                type: { type: 'string', maxLength: 316 },
                status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
                reason: { type: 'string', maxLength: 1024 },
                message: { type: 'string', maxLength: 32768 },
                observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
                lastTransitionTime: { type: 'string', format: 'date-time' },
              },
            },
          },
        },
      },
    },
  },
};

function crd(kind: string, plural: string, shortName: string, description: string, spec: Schema): Schema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.${POLICY_GROUP}`,
      labels: { 'gateway.networking.k8s.io/policy': 'inherited' },
    },
    spec: {
      group: POLICY_GROUP,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames: [shortName], categories: ['portcullis'] },
      scope: 'Namespaced',
      versions: [
        {
          name: POLICY_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Accepted', type: 'string', jsonPath: '.status.ancestors[*].conditions[?(@.type=="Accepted")].status' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              description,
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status: policyStatus,
              },
            },
          },
        },
      ],
    },
  };
}

const rateLimitRule: Schema = {
  type: 'object',
  required: ['key', 'rate'],
  properties: {
    zoneSize: {
      description: 'Size of the shared memory zone keeping per-key state (limit_req_zone); 32k to 1024m; default 10m.',
      type: 'string',
      maxLength: 16,
      pattern: BUFFER_SIZE_PATTERN,
      'x-kubernetes-validations': [
        { rule: `${celBytes('self')} >= ${MIN_ZONE_BYTES}`, message: MESSAGES.zoneTooSmall },
        { rule: `${celBytes('self')} <= ${MAX_ZONE_BYTES}`, message: MESSAGES.zoneTooLarge },
      ],
    },
    key: {
      description: 'Limiting key: text and nginx variables, e.g. $binary_remote_addr (client address), $http_x_user, $arg_tenant.',
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: KEY_PATTERN,
    },
    rate: { description: 'Requests per second or minute per key: <n>r/s or <n>r/m.', type: 'string', maxLength: 16, pattern: RATE_PATTERN },
    burst: {
      description: 'Excess requests delayed (not rejected) to keep the rate; beyond it requests are rejected. Omitted: every excess request is rejected at once.',
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: 1000000,
    },
  },
};

export const rateLimitPolicyCrd = crd(
  'RateLimitPolicy',
  'ratelimitpolicies',
  'rlpolicy',
  'RateLimitPolicy limits the request rate per key (nginx limit_req) on a Gateway or on routes. Gateway and route limits apply together.',
  {
    type: 'object',
    required: ['targetRefs'],
    properties: {
      targetRefs,
      rateLimit: {
        type: 'object',
        properties: {
          local: { type: 'object', properties: { rules: { type: 'array', maxItems: 16, items: rateLimitRule } } },
          dryRun: { description: 'Count excess requests in the zones and log them, without delaying or rejecting.', type: 'boolean' },
          logLevel: { description: 'Level of the log line for a rejected request (delays log one level lower). Default error.', type: 'string', enum: [...LOG_LEVELS] },
          rejectCode: { description: 'Status for rejected requests. Default 503.', type: 'integer', format: 'int32', minimum: 400, maximum: 599 },
        },
      },
    },
  },
);

export const proxySettingsPolicyCrd = crd(
  'ProxySettingsPolicy',
  'proxysettingspolicies',
  'pspolicy',
  'ProxySettingsPolicy sets how responses from backends are buffered. Route fields override Gateway fields one by one.',
  {
    type: 'object',
    required: ['targetRefs'],
    properties: {
      targetRefs,
      buffering: {
        type: 'object',
        properties: {
          disable: { description: 'true: stream responses to the client without buffering the body.', type: 'boolean' },
          bufferSize: bufferSize('Buffer for the first part of the response (headers); used even when buffering is disabled.'),
          buffers: {
            type: 'object',
            required: ['number', 'size'],
            properties: {
              number: { type: 'integer', format: 'int32', minimum: 2, maximum: 256 },
              size: bufferSize('Size of each body buffer.'),
            },
          },
          busyBuffersSize: bufferSize('Buffers that may be busy sending to the client while the response is still read.'),
        },
        'x-kubernetes-validations': [
          {
            rule: `!has(self.busyBuffersSize) || !has(self.bufferSize) || ${celBytes('self.busyBuffersSize')} > ${celBytes('self.bufferSize')}`,
            message: MESSAGES.busyAboveBufferSize,
          },
          {
            rule: `!has(self.busyBuffersSize) || !has(self.buffers) || ${celBytes('self.busyBuffersSize')} < self.buffers.number * ${celBytes('self.buffers.size')} - ${celBytes('self.buffers.size')}`,
            message: MESSAGES.busyBelowBuffers,
          },
          {
            rule: `!has(self.busyBuffersSize) || !has(self.buffers) || ${celBytes('self.busyBuffersSize')} >= ${celBytes('self.buffers.size')}`,
            message: MESSAGES.busyAtLeastOneBuffer,
          },
        ],
      },
    },
  },
);

export const clientSettingsPolicyCrd = crd(
  'ClientSettingsPolicy',
  'clientsettingspolicies',
  'cspolicy',
  'ClientSettingsPolicy sets limits on client requests. A route policy takes precedence over the Gateway policy.',
  {
    type: 'object',
    required: ['targetRef'],
    properties: {
      targetRef,
      body: {
        type: 'object',
        properties: {
          maxSize: {
            description: 'Largest request body accepted (client_max_body_size); larger gets 413. Bytes without unit, or k, m, g; 0 disables the check.',
            type: 'string',
            maxLength: 16,
            pattern: BODY_SIZE_PATTERN,
          },
        },
      },
    },
  },
);

const cidrList = (description: string, max: number): Schema => ({
  description,
  type: 'array',
  minItems: 1,
  maxItems: max,
  items: { type: 'string', maxLength: CIDR_MAX_LENGTH, pattern: CIDR_PATTERN },
});

export const ipAccessPolicyCrd = crd(
  'IPAccessPolicy',
  'ipaccesspolicies',
  'ipapolicy',
  'IPAccessPolicy serves or refuses requests by client address (403 for HTTP). The most specific listed network holding the address decides; an address in none is refused when allow is set. Route lists override Gateway lists one by one.',
  {
    type: 'object',
    required: ['targetRefs'],
    properties: {
      targetRefs,
      allow: cidrList('Client networks served (IPv4 or IPv6 address, optionally with a prefix length). When set, addresses in no listed network are refused.', MAX_ACCESS_CIDRS),
      deny: cidrList('Client networks refused. A network listed in allow and deny is refused.', MAX_ACCESS_CIDRS),
      clientAddress: {
        description: 'Gateways only: where the client address comes from. Default: the connection.',
        type: 'object',
        required: ['source'],
        properties: {
          source: { description: 'Connection (the peer), XForwardedFor (the last address before the trusted proxies), ProxyProtocol (every connection starts with a PROXY protocol header).', type: 'string', enum: [...CLIENT_ADDRESS_SOURCES] },
          trustedCIDRs: cidrList('The proxies in front of the Gateway whose X-Forwarded-For or PROXY header is believed.', MAX_TRUSTED_CIDRS),
        },
        'x-kubernetes-validations': [
          { rule: "self.source == 'Connection' || has(self.trustedCIDRs)", message: MESSAGES.trustedCIDRsRequired },
          { rule: "self.source != 'Connection' || !has(self.trustedCIDRs)", message: MESSAGES.trustedCIDRsUnused },
        ],
      },
    },
    'x-kubernetes-validations': [{ rule: "!has(self.clientAddress) || self.targetRefs.all(t, t.kind == 'Gateway')", message: MESSAGES.clientAddressGatewayOnly }],
  },
);

export const POLICY_CRDS: Record<string, Schema> = {
  'ratelimitpolicies.yaml': rateLimitPolicyCrd,
  'proxysettingspolicies.yaml': proxySettingsPolicyCrd,
  'clientsettingspolicies.yaml': clientSettingsPolicyCrd,
  'ipaccesspolicies.yaml': ipAccessPolicyCrd,
};

export const CRD_HEADER = '# Generated by controller/src/resources/policies/crds.ts; do not edit by hand.\n';

export function renderCrd(doc: Schema): string {
  return CRD_HEADER + stringify(doc, { lineWidth: 0 });
}

if (require.main === module) {
  const dir = join(__dirname, '../../../../charts/portcullis/crds');
  for (const [file, doc] of Object.entries(POLICY_CRDS)) writeFileSync(join(dir, file), renderCrd(doc));
}
