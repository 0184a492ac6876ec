export type * from './types';
export { DEFAULT_CONTROLLER_NAME } from './types';
