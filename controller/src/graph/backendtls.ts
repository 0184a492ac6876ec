/**
 * BackendTLSPolicy: which Service ports the gateway speaks TLS to, with what trust and name.
 *
 * A policy targets Services of its namespace (sectionName: one port, by name). When several
 * target the same Service and sectionName, the oldest wins (then namespace/name order) and the
 * others are Accepted False / Conflicted; a policy naming the port is more specific than one
 * naming the whole Service, so both are accepted and the port's own applies to it.
 *
 * What nginx checks (proxy_ssl_verify / grpc_ssl_verify on): the chain against the CA bundle
 * (or the system's well-known CAs) and the certificate's DNS names against validation.hostname,
 * which is also the SNI. nginx verifies one name only, so subjectAltNames is honoured when it
 * lists validation.hostname as a Hostname entry (the certificate must then carry that name, a
 * stricter check than "any of the listed names"); any other subjectAltNames list, URI entries
 * included, and any options, cannot be enforced: the policy is not accepted (reason Invalid) and
 * requests to its backends fail (500) rather than go out with weaker verification than asked.
 * A policy whose every CA reference is unusable fails the same way (NoValidCACertificate).
 */
import type { BackendTLSPolicy, ResourceSet, Service, ServicePort } from '../resources/types';
import type { GraphCondition, ObjectRef } from './types';
import { cond } from '../conditions';
import { type CABundle, type CAIndex, joinBundles } from './ca-certificates';

/** What a backend's connections need (BackendRef.tls). */
export interface BackendTLS {
  /** "namespace/name" of the policy that applies. */
  policy: string;
  /** false: the policy cannot be enforced; requests to this backend are answered 500. */
  valid: boolean;
  /** SNI, and the name the backend's certificate must carry. */
  hostname: string;
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

  if (v.caCertificateRefs.length > 0 && bundles.length === 0) {
    return fail(cond('Accepted', 'False', 'NoValidCACertificate', 'None of spec.validation.caCertificateRefs is a usable CA certificate bundle'));
  }
  if (v.caCertificateRefs.length === 0 && v.wellKnownCACertificates !== WELL_KNOWN_SYSTEM) {
    return fail(cond('Accepted', 'False', 'Invalid', `spec.validation.wellKnownCACertificates: "${v.wellKnownCACertificates ?? ''}" is not supported; only ${WELL_KNOWN_SYSTEM} is`));
  }
  if (v.subjectAltNames.length > 0 && !v.subjectAltNames.some((s) => s.type === 'Hostname' && s.hostname?.toLowerCase() === v.hostname.toLowerCase())) {
    return fail(
      cond(
        'Accepted',
        'False',
        'Invalid',
        'spec.validation.subjectAltNames: nginx verifies the backend certificate against one DNS name, the hostname; list spec.validation.hostname as a Hostname entry (URI and other names cannot be verified)',
      ),
    );
  }
  const options = Object.keys(p.spec.options ?? {});
  if (options.length > 0) return fail(cond('Accepted', 'False', 'Invalid', `spec.options: ${options.join(', ')} not supported`));
  return {
    tls: { policy: key, valid: true, hostname: v.hostname, ...(bundles.length > 0 ? { ca: joinBundles(bundles) } : {}) },
    conditions: [cond('Accepted', 'True', 'Accepted', 'The BackendTLSPolicy is accepted'), resolved],
  };
}
