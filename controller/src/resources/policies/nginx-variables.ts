/**
 * Variables a rate-limit key may use. nginx refuses to load a config naming an unknown
 * variable ("unknown ... variable"), so the schema checks keys against what the nginx we ship
 * (nginx-light 1.22) defines for a request, instead of letting a reload fail later.
 * controller/test/policies/nginx-variables.test.ts loads every name below in a real nginx.
 */

export const KEY_VARIABLES: readonly string[] = [
  'args',
  'binary_remote_addr',
  'connection',
  'connection_requests',
  'content_length',
  'content_type',
  'document_uri',
  'host',
  'hostname',
  'https',
  'is_args',
  'query_string',
  'remote_addr',
  'remote_port',
  'remote_user',
  'request',
  'request_id',
  'request_length',
  'request_method',
  'request_uri',
  'scheme',
  'server_addr',
  'server_name',
  'server_port',
  'server_protocol',
  'uri',
];

/** Families nginx resolves by prefix: any header, query argument or cookie. */
export const KEY_VARIABLE_PREFIXES: readonly string[] = ['http_', 'arg_', 'cookie_'];

const KNOWN = new Set(KEY_VARIABLES);

export function isKnownKeyVariable(name: string): boolean {
  if (KNOWN.has(name)) return true;
  return KEY_VARIABLE_PREFIXES.some((prefix) => name.startsWith(prefix) && name.length > prefix.length);
}

/**
 * A key is literal text and `$name` variables. Spaces, quotes, `;`, `{`, `}`, `#` and `\`
 * would end or escape the nginx directive, so they are refused.
 */
export const KEY_PATTERN = '^(?:[^ \\t\\r\\n;{}#$\'"\\\\]+|\\$[A-Za-z0-9_]+)+$';
export const KEY_RE = new RegExp(KEY_PATTERN);

/** Variable names used in a key that already matches KEY_RE. */
export function keyVariables(key: string): string[] {
  return [...key.matchAll(/\$([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}
