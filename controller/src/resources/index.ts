export type * from './types';
export { GATEWAY_API_GROUP, CORE_GROUP, SERVICE_NAME_LABEL } from './types';
