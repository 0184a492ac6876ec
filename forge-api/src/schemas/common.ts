/** JSON schema building blocks shared by route schemas (request and response). */
export const str = { type: 'string' } as const;
export const bool = { type: 'boolean' } as const;
export const int = { type: 'integer' } as const;
export const dateTime = { type: 'string', format: 'date-time' } as const;
export const strList = { type: 'array', items: str } as const;

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
