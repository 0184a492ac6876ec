/**
 * Who an agent is: its ServiceAccount token, checked by the API server (TokenReview) with the
 * config server's audience, so a token minted for anything else (the default API audience
 * included) is refused. Answers are cached for a minute per token (a token is valid for an
 * hour at least), so a report or a reconnect costs no API request.
 */
import { createHash } from 'crypto';

export interface AgentIdentity {
  /** system:serviceaccount:<namespace>:<name> */
  username: string;
  /** From a pod-bound token (authentication.kubernetes.io/pod-name), when there is one. */
  podName?: string;
}

export class AuthError extends Error {
  constructor(
    message: string,
    readonly status: 401 | 403,
  ) {
    super(message);
  }
}

/** One TokenReview; returns undefined when the API server says the token is not valid. */
export type TokenReviewer = (token: string, audiences: string[]) => Promise<AgentIdentity | undefined>;

export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

const CACHE_MS = 60000;

export class TokenAuthenticator {
  private readonly cache = new Map<string, { identity: AgentIdentity; until: number }>();

  constructor(
    private readonly review: TokenReviewer,
    private readonly audiences: string[],
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(authorization: string | undefined): Promise<AgentIdentity> {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!m) throw new AuthError('a ServiceAccount token is required (Authorization: Bearer)', 401);
    const key = createHash('sha256').update(m[1]).digest('hex');
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) return hit.identity;
    const identity = await this.review(m[1], this.audiences);
    if (!identity) throw new AuthError(`the token is not valid for audience ${this.audiences.join(',')}`, 401);
    if (this.cache.size > 10000) this.cache.clear();
    this.cache.set(key, { identity, until: this.now() + CACHE_MS });
    return identity;
  }
}
