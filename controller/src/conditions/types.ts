/**
 * The shapes of conditions and statuses, shared by the stages that decide conditions (graph/,
 * policies/) and the stage that turns them into statuses (status/). Types only, importing no
 * stage, so every stage can depend on this folder and none on another both ways.
 */
import type { TargetKind } from '../resources/policies';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A condition as the graph decides it; status/statuses.ts adds observedGeneration and lastTransitionTime. */
export interface GraphCondition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

export interface StatusCondition extends GraphCondition {
  observedGeneration: number;
  /** Filled by carryTransitionTimes. */
  lastTransitionTime?: string;
}

export interface StatusReport {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  generation: number;
  status: Record<string, unknown>;
}

/** The reasons of a policy's Accepted condition (Gateway API policy attachment, GEP-713). */
export type PolicyReason = 'Accepted' | 'Conflicted' | 'Invalid' | 'TargetNotFound';

export interface PolicyAncestorStatus {
  ancestorRef: { group: string; kind: TargetKind; namespace: string; name: string };
  controllerName: string;
  conditions: StatusCondition[];
}

/** `<Kind>Affected` conditions for one target (Gateway: status.conditions; route: every status.parents[].conditions). */
export interface TargetAffected {
  kind: TargetKind;
  namespace: string;
  name: string;
  conditions: StatusCondition[];
}
