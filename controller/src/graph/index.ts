export type * from './types';
export { DEFAULT_CONTROLLER_NAME } from './types';
export { buildGraph } from './build';
export { checkRegex, type RegexCheck } from './regex';
export { acceptedHostnames, hostnamesIntersect, moreSpecific } from './hostnames';
export { routeOrder } from './isolation';
export { computeStatuses, SUPPORTED_FEATURES, type StatusOptions } from './status';
export { carryTransitionTimes } from './transitions';
