/**
 * BackendTLSPolicy: which Service ports the gateway speaks TLS to, with what trust and name.
 *
 * A policy targets Services of its namespace (sectionName: one port, by name). When several
 * target the same Service and sectionName, the oldest wins (then namespace/name order) and the
 * others are Accepted False / Conflicted; a policy naming the port is more specific than one
 * naming the whole Service, so both are accepted and the port's own applies to it.
 *
 * What nginx checks (proxy_ssl_verify / grpc_ssl_verify on): the chain against the CA bundle
 * (or the system's well-known CAs) and the certificate's names against validation.hostname,
 * which is also the SNI. With subjectAltNames the hostname stays the SNI but is no longer the
 * name checked: the certificate must carry one of the listed names among its subjectAltNames
 * (proxy_ssl_verify_san, from our nginx patch scripts/nginx-patches/upstream-ssl-verify-san.patch;
 * a Hostname by the usual wildcard rules, a URI exactly). What cannot be enforced (a
 * subjectAltName value that is no hostname or absolute URI, any options) makes the policy not
 * accepted (reason Invalid) and requests to its backends fail (500) rather than go out with
 * weaker verification than asked. A policy whose every CA reference is unusable fails the same
 * way (NoValidCACertificate), and so does one whose document fails its schema but names its
 * targets (a stand-in from resources/backendtlspolicy.ts).
 */
import type { BackendTLSPolicy, ResourceSet, Service, ServicePort } from '../resources/types';
import type { GraphCondition, ObjectRef } from './types';
import { cond } from '../conditions';
import { HOSTNAME_RE } from '../resources/validation';
import { type CABundle, type CAIndex, joinBundles } from './ca-certificates';

/** What a backend's connections need (BackendRef.tls). */
export interface BackendTLS {
  /** "namespace/name" of the policy that applies. */
  policy: string;
  /** false: the policy cannot be enforced; requests to this backend are answered 500. */
  valid: boolean;
  /** SNI, and the name the backend's certificate must carry unless `subjectAltNames` is set. */
  hostname: string;
  /**
   * validation.subjectAltNames as proxy_ssl_verify_san arguments ("dns:NAME", "uri:URI"): the
   * certificate must carry one of them, and the hostname is not checked.
   */
  subjectAltNames?: string[];
  /** Trusted CAs; absent: the system's well-known CAs. */
  ca?: CABundle;
}

export interface BackendTLSPolicyNode {
  namespace: string;
  name: string;
  generation: number;
  /** Accepted and ResolvedRefs, the same for every ancestor. */
  conditions: GraphCondition[];
  /** Gateways with an accepted route that sends requests to a Service port this policy targets. */
  ancestors: ObjectRef[];
}

/** The well-known CA set this implementation knows (Gateway API: "System"). */
export const WELL_KNOWN_SYSTEM = 'System';

interface Verdict {
  tls: BackendTLS;
  conditions: GraphCondition[];
}

const byAge = (a: BackendTLSPolicy, b: BackendTLSPolicy) =>
  a.metadata.creationTimestamp !== b.metadata.creationTimestamp
    ? a.metadata.creationTimestamp < b.metadata.creationTimestamp
      ? -1
      : 1
    : `${a.metadata.namespace}/${a.metadata.name}` < `${b.metadata.namespace}/${b.metadata.name}`
      ? -1
      : 1;

export class BackendTLSIndex {
  /** "namespace/service#sectionName" ("#" alone: the whole Service) -> the winning policy. */
  private readonly winners = new Map<string, BackendTLSPolicy>();
  /** The same keys -> every policy targeting them, the winner first. */
  private readonly targeting = new Map<string, string[]>();
  /** Per Service port: the policies that target it ("namespace/name"), computed once. */
  private readonly byPort = new Map<string, string[]>();
  private readonly verdicts = new Map<BackendTLSPolicy, Verdict>();
  private readonly conflicted = new Set<BackendTLSPolicy>();
  private readonly policies: BackendTLSPolicy[];

  constructor(set: Pick<ResourceSet, 'backendTLSPolicies'>, private readonly ca: CAIndex) {
    this.policies = [...(set.backendTLSPolicies ?? [])].sort(byAge);
    for (const p of this.policies) {
      for (const t of p.spec.targetRefs) {
        if (t.group !== '' || t.kind !== 'Service') continue;
        const key = `${p.metadata.namespace}/${t.name}#${t.sectionName ?? ''}`;
        const first = this.winners.get(key);
        if (!first) this.winners.set(key, p);
        else if (first !== p) this.conflicted.add(p);
        const all = this.targeting.get(key) ?? [];
        const name = `${p.metadata.namespace}/${p.metadata.name}`;
        if (!all.includes(name)) all.push(name);
        this.targeting.set(key, all);
      }
    }
  }

  get size(): number {
    return this.policies.length;
  }

  /** The TLS a Service port is spoken to with, undefined: plain text. */
  forPort(service: Service, port: ServicePort): BackendTLS | undefined {
    const ns = service.metadata.namespace;
    const policy = (port.name ? this.winners.get(`${ns}/${service.metadata.name}#${port.name}`) : undefined) ?? this.winners.get(`${ns}/${service.metadata.name}#`);
    return policy ? this.verdict(policy).tls : undefined;
  }

  /**
   * Every policy that targets a Service port, applied or not (a Conflicted one too): its
   * status names the Gateways that route there, as the winner's does.
   */
  policiesOf(service: Service, port: ServicePort): string[] {
    const ns = service.metadata.namespace;
    const key = `${ns}/${service.metadata.name}:${port.port}`;
    let out = this.byPort.get(key);
    if (!out) {
      out = [...(port.name ? (this.targeting.get(`${ns}/${service.metadata.name}#${port.name}`) ?? []) : []), ...(this.targeting.get(`${ns}/${service.metadata.name}#`) ?? [])];
      this.byPort.set(key, out);
    }
    return out;
  }

  private verdict(p: BackendTLSPolicy): Verdict {
    let v = this.verdicts.get(p);
    if (!v) this.verdicts.set(p, (v = judge(p, this.ca)));
    return v;
  }

  /** Every policy with its conditions; ancestors from the routes (graph/build.ts). */
  nodes(ancestors: Map<string, ObjectRef[]>): BackendTLSPolicyNode[] {
    return this.policies.map((p) => {
      const key = `${p.metadata.namespace}/${p.metadata.name}`;
      const v = this.verdict(p);
      let conditions = v.conditions;
      if (this.conflicted.has(p)) {
        const msg = 'Another BackendTLSPolicy, older (or first by namespace/name), targets the same Service and sectionName';
        conditions = [cond('Accepted', 'False', 'Conflicted', msg), ...conditions.filter((c) => c.type !== 'Accepted')];
      }
      return { namespace: p.metadata.namespace, name: p.metadata.name, generation: p.metadata.generation, conditions, ancestors: ancestors.get(key) ?? [] };
    });
  }
}

function judge(p: BackendTLSPolicy, ca: CAIndex): Verdict {
  const key = `${p.metadata.namespace}/${p.metadata.name}`;
  const v = p.spec.validation;
  const bundles: CABundle[] = [];
  const problems: { reason: string; message: string }[] = [];
  v.caCertificateRefs.forEach((ref, i) => {
    const r = ca.resolve(ref, { kind: 'BackendTLSPolicy', namespace: p.metadata.namespace }, `spec.validation.caCertificateRefs[${i}]`);
    if (r.ok) bundles.push(r.bundle);
    else problems.push({ reason: r.reason === 'InvalidKind' ? 'InvalidKind' : 'InvalidCACertificateRef', message: r.message });
  });
  const resolved =
    problems.length > 0 ? cond('ResolvedRefs', 'False', problems[0].reason, problems.map((x) => x.message).join('; ')) : cond('ResolvedRefs', 'True', 'ResolvedRefs', 'All references are resolved');
  const fail = (accepted: GraphCondition): Verdict => ({ tls: { policy: key, valid: false, hostname: v.hostname }, conditions: [accepted, resolved] });

  if (p.schemaProblem !== undefined) {
    return fail(cond('Accepted', 'False', 'Invalid', `The BackendTLSPolicy is invalid (${p.schemaProblem}); requests to its targets fail rather than go out without TLS`));
  }
  if (v.caCertificateRefs.length > 0 && bundles.length === 0) {
    return fail(cond('Accepted', 'False', 'NoValidCACertificate', 'None of spec.validation.caCertificateRefs is a usable CA certificate bundle'));
  }
  if (v.caCertificateRefs.length === 0 && v.wellKnownCACertificates !== WELL_KNOWN_SYSTEM) {
    return fail(cond('Accepted', 'False', 'Invalid', `spec.validation.wellKnownCACertificates: "${v.wellKnownCACertificates ?? ''}" is not supported; only ${WELL_KNOWN_SYSTEM} is`));
  }
  const sans: string[] = [];
  for (const [i, s] of v.subjectAltNames.entries()) {
    const problem = s.type === 'Hostname' ? hostnameProblem(s.hostname ?? '') : uriProblem(s.uri ?? '');
    if (problem) return fail(cond('Accepted', 'False', 'Invalid', `spec.validation.subjectAltNames[${i}]: ${problem}`));
    sans.push(s.type === 'Hostname' ? `dns:${s.hostname}` : `uri:${s.uri}`);
  }
  const options = Object.keys(p.spec.options ?? {});
  if (options.length > 0) return fail(cond('Accepted', 'False', 'Invalid', `spec.options: ${options.join(', ')} not supported`));
  return {
    tls: { policy: key, valid: true, hostname: v.hostname, ...(sans.length > 0 ? { subjectAltNames: sans } : {}), ...(bundles.length > 0 ? { ca: joinBundles(bundles) } : {}) },
    conditions: [cond('Accepted', 'True', 'Accepted', 'The BackendTLSPolicy is accepted'), resolved],
  };
}

/**
 * What is wrong with a subjectAltName's value, checked here rather than by the schema: a policy
 * whose names cannot be verified must fail closed (its backends answer 500), not be dropped
 * (which would leave its Service spoken to in plain text). The checks are the API's formats
 * (the CRD enforces them on Kubernetes; files are read without it), which also keep every value
 * one printable nginx argument.
 */
const MAX_SAN = 253;
// RFC 3986: the characters a URI may hold; the API's AbsoluteURI needs a scheme and "//".
const URI_CHARS_RE = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;
const ABSOLUTE_URI_RE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*[^?#]*(\?[^#]*)?(#.*)?$/;

function hostnameProblem(h: string): string | undefined {
  if (h.length > MAX_SAN) return `the hostname is longer than ${MAX_SAN} characters`;
  if (!HOSTNAME_RE.test(h) || /^\d{1,3}(\.\d{1,3}){3}$/.test(h)) return `${JSON.stringify(h)} is not a lowercase RFC 1123 hostname (optionally with a "*." wildcard label)`;
  return undefined;
}

function uriProblem(u: string): string | undefined {
  if (u.length > MAX_SAN) return `the URI is longer than ${MAX_SAN} characters`;
  if (!URI_CHARS_RE.test(u)) return `${JSON.stringify(u)} holds characters a URI cannot (RFC 3986: no spaces, quotes, backslashes or control characters)`;
  if (!ABSOLUTE_URI_RE.test(u)) return `${JSON.stringify(u)} is not an absolute URI with a scheme and an authority (scheme://...)`;
  return undefined;
}
