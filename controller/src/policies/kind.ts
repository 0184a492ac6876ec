/**
 * What every policy kind of gateway.portcullis.dev/v1alpha1 provides, so computePolicies
 * (index.ts) treats them alike and a new kind is one folder (policies/<kind>/) plus a line in
 * KINDS: which fields two policies on one target cannot both set (conflicts), what one target's
 * applied policies set (its level), how a location's settings come from its Gateway's and its
 * route's levels, checked as nginx will check them (merge), and the nginx directives of those
 * settings (generate). Schema validation is the kind's zod schema in resources/policies/.
 */
import type { Policy, PolicyKind } from '../resources/policies';
import type { PolicySettings } from './directives';
import type { Attachment } from './targets';
import type { LocationPolicies, PolicyTarget, RateLimitZone } from './types';

/** One place whose settings are merged: a Gateway's own, or a route's on one Gateway. */
export interface MergePlace<L> {
  /** The Gateway's level (for a Gateway's own place, the only one). */
  gateway?: L;
  /** The route's level; undefined for a Gateway's own place. */
  route?: L;
  /** "Gateway ns/name" or "route kind ns/name on Gateway ns/name": for messages. */
  where: { gatewayKey: string; route: boolean };
  /** For a route's place: the merged settings of its Gateway's own place (after their checks). */
  gatewaySettings?: LocationPolicies;
  /** The settings this place had in the configuration nginx runs now (undefined: none, or first run). */
  previous?: LocationPolicies;
}

export interface MergeContext {
  /** nginx's defaults for proxy buffers depend on the memory page size. */
  pageSize: number;
  /**
   * Marks an applied policy Invalid on one target with `message` (what nginx would refuse and
   * what is kept instead); `inForce`: its earlier settings still act on the target.
   */
  invalidate(attachment: Attachment, message: string, inForce: boolean): void;
}

export interface PolicyKindModule<L = unknown> {
  readonly kind: PolicyKind;
  /**
   * Why this kind cannot act on `target` (a route kind it has nothing to set on), for the
   * policy's condition there; undefined: it can.
   */
  unsupported(target: PolicyTarget): string | undefined;
  /**
   * Kinds with a stand-in for documents that fail their schema (POLICY_STAND_INS in
   * resources/policies): what the stand-in does to a target it names, for its status ("until it
   * is fixed, ..."). Its level and merge make it so: the stand-in is among `applied` with
   * `schemaProblem` set and no spec fields. Other kinds never see a stand-in.
   */
  readonly failsClosed?: string;
  /** spec fields only one policy of this kind per target may set (e.g. "body.maxSize"). */
  exclusiveFields(policy: Policy): string[];
  /** What one target's applied policies (highest priority first) set; undefined: nothing. */
  level(applied: Attachment[]): L | undefined;
  /** Sets this kind's part of `out` for one place. */
  merge(place: MergePlace<L>, out: LocationPolicies, ctx: MergeContext): void;
  /**
   * http-level definitions the kind's accepted attachments need (RateLimitPolicy: its
   * limit_req_zone lines), given those of the configuration nginx runs now.
   */
  zones?(accepted: Attachment[], previous: RateLimitZone[] | undefined, ctx: MergeContext): RateLimitZone[];
  /** This kind's nginx directives for a location with `settings`, into `out`. */
  generate(settings: LocationPolicies, out: PolicySettings): void;
}
