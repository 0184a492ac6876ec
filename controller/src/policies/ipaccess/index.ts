/**
 * IPAccessPolicy: which client networks a Gateway's or a route's requests are served to.
 * `allow` and `deny` merge field by field (the route's list over its Gateway's, each list whole);
 * `clientAddress` (where the address comes from) is the Gateway's alone, since it changes how
 * the Gateway's ports read connections (PROXY protocol) and what every route sees as the client.
 *
 * The decision is one lookup: the most specific network among both lists that holds the client
 * address decides (an equal network in both: refused); an address in none is refused when
 * `allow` is set, else served. That is a longest-prefix match, which nginx's geo module answers
 * with a radix tree per request whatever the number of networks (access.ts).
 *
 * A document that fails its schema fails closed: its stand-in (resources/standin.ts) refuses
 * every client of its targets, and one on a Gateway every client of the Gateway's routes too,
 * whatever their own lists (which fields the broken document meant to set is unknown, so no
 * per-field merge can say what the route would inherit).
 */
import type { ClientAddress, IPAccessPolicy } from '../../resources/policies';
import { canonicalNetwork } from '../../resources/policies';
import type { PolicyKindModule } from '../kind';
import type { Attachment } from '../targets';
import type { LocationIpAccess } from '../types';
import { accessGeo } from './access';

export { accessGeo, accessDecision } from './access';

export interface IpAccessLevel {
  allow?: string[];
  deny?: string[];
  clientAddress?: ClientAddress;
  /** A stand-in for a document that failed its schema names this target. */
  refuseAll?: true;
  sources: Attachment[];
}

/** Refused unless listed, nothing listed (shared: read-only downstream). */
const REFUSE_ALL: LocationIpAccess = { allow: [] };

const canonical = (list: string[]) => [...new Set(list.map(canonicalNetwork))].sort();

export const ipAccessPolicies: PolicyKindModule<IpAccessLevel> = {
  kind: 'IPAccessPolicy',

  unsupported(target) {
    if (target.kind !== 'TLSRoute') return undefined;
    return (
      `nginx checks the client address of a TLS connection before the TLS server name (read with ssl_preread, or in the handshake of a ` +
      `terminating port) picks the route, so the address lists of one TLSRoute cannot be applied: the policy is not applied to TLSRoute ` +
      `${target.namespace}/${target.name}. Attach it to the Gateway: it then covers every connection to the Gateway's TLS ports.`
    );
  },

  failsClosed: 'until it is fixed, this target refuses every client (requests get 403, connections are closed, datagrams dropped)',

  exclusiveFields(policy) {
    const s = (policy as IPAccessPolicy).spec;
    return (['allow', 'deny', 'clientAddress'] as const).filter((f) => s[f] !== undefined);
  },

  level(applied) {
    const level: IpAccessLevel = { sources: [] };
    for (const a of applied) {
      if (a.policy.schemaProblem !== undefined) {
        level.refuseAll = true;
        level.sources.push(a);
        continue;
      }
      const s = (a.policy as IPAccessPolicy).spec;
      let used = false;
      if (s.allow && !level.allow) (level.allow = canonical(s.allow)), (used = true);
      if (s.deny && !level.deny) (level.deny = canonical(s.deny)), (used = true);
      if (s.clientAddress && !level.clientAddress) {
        level.clientAddress = s.clientAddress.trustedCIDRs ? { source: s.clientAddress.source, trustedCIDRs: canonical(s.clientAddress.trustedCIDRs) } : { source: s.clientAddress.source };
        used = true;
      }
      if (used) level.sources.push(a);
    }
    return level.sources.length > 0 ? level : undefined;
  },

  merge(place, out) {
    const allow = place.route?.allow ?? place.gateway?.allow;
    const deny = place.route?.deny ?? place.gateway?.deny;
    if (place.route?.refuseAll || place.gateway?.refuseAll) out.ipAccess = REFUSE_ALL;
    else if (allow !== undefined || deny !== undefined) {
      const access: LocationIpAccess = {};
      if (allow !== undefined) access.allow = allow;
      if (deny !== undefined) access.deny = deny;
      out.ipAccess = access;
    }
    if (!place.where.route && place.gateway?.clientAddress) out.clientAddress = place.gateway.clientAddress;
  },

  generate(settings, out) {
    if (settings.ipAccess) out.ipAccess = accessGeo(settings.ipAccess);
  },
};
