export type * from './types';
export { DEFAULT_CONTROLLER_NAME } from './types';
export { buildGraph } from './build';
export { checkRegex, regexVerdict, type RegexCheck, type RegexVerdict } from './regex';
export { selectorMatches } from './selectors';
export { listenerTransport, SUPPORTED_PROTOCOLS } from './gateways';
export { acceptedHostnames, hostnamesIntersect, moreSpecific } from './hostnames';
export { routeOrder } from './isolation';
