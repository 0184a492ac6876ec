/** JSON schema building blocks shared by route schemas (request and response). */
export const str = { type: 'string' } as const;
export const bool = { type: 'boolean' } as const;
/**
 * Integers are int64, as Gitea's: ids, indexes and counters alike (the PostgreSQL columns are
 * BIGINT; SQLite's INTEGER is 64-bit). A value outside int64 fails validation: 422 in a body
 * or query, 404 in a path (plugins/errors.ts), never a driver error. 2^63 itself is the bound:
 * a JSON number of 2^63-1 reads as the double 2^63, so it is refused with everything above.
 * At the other end the same rounding makes every integer within 1,024 of -2^63 read as -2^63,
 * which Prisma refuses to bind ("Unable to fit value"): the lowest accepted value is the
 * first double above it, -2^63 + 1024.
 */
export const INT64_MIN = -9223372036854774784;
export const INT64_LIMIT = 9223372036854775808;
export const int = { type: 'integer', minimum: INT64_MIN, exclusiveMaximum: INT64_LIMIT } as const;
export const dateTime = { type: 'string', format: 'date-time' } as const;
export const strList = { type: 'array', items: str } as const;
/** `s` or null. */
export const nullable = (s: Record<string, unknown>) => ({ anyOf: [s, { type: 'null' }] });
export const nullTime = { type: ['string', 'null'], format: 'date-time' };

export function obj(properties: Record<string, unknown>, required: string[] = [], extra: Record<string, unknown> = {}) {
  return { type: 'object', properties, ...(required.length ? { required } : {}), ...extra } as const;
}

export function list(items: unknown) {
  return { type: 'array', items } as const;
}

/** Gitea's APIError body. */
export const ApiErrorSchema = obj({ message: str, url: str }, [], { $id: 'APIError', additionalProperties: true });

/** Path parameter blocks. */
export const ownerRepoParams = obj({ owner: str, repo: str }, ['owner', 'repo']);
export const usernameParams = obj({ username: str }, ['username']);
export const orgParams = obj({ org: str }, ['org']);

/** Gitea name rules: AlphaDashDot for repositories; users/orgs are stricter (checked in services). */
export const ALPHA_DASH_DOT = '^[-\\w.]+$';
