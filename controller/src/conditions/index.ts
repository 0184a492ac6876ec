/**
 * Conditions: their shapes and the catalogue of the ones this controller reports (types and
 * reasons as the Gateway API names them, with our messages). graph/ and policies/ decide which
 * apply; status/ adds observedGeneration and transition times. This folder imports no stage.
 */
export * from './types';
export { cond, gatewayClassConditions, gatewayConditions, listenerConditions, listenerSetConditions, mergeConditions, routeConditions } from './catalogue';
