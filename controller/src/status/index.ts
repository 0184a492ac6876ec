/**
 * The status stage, after apply: statuses as data from the graph, the policy outcome and the
 * dataplane result (conditions catalogue, transition times, policy ancestors, `<Kind>Affected`
 * on targets). Both providers write what this stage returns; none of it does I/O.
 */
export { computeStatuses, SUPPORTED_FEATURES, type StatusOptions } from './statuses';
export { adoptTransitionTimes, carryTransitionTimes } from './transitions';
export { acceptedCondition, affectedCondition, looseTargetRefs, policyStatus, withAffected, type AncestorOutcome } from './policies';
export { gatewayClassConditions, gatewayConditions, listenerConditions, mergeConditions, routeConditions } from '../conditions';
