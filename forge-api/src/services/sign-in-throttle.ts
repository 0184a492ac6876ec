/**
 * Throttling of password guessing: every failed sign-in (a wrong password in HTTP basic, on the
 * API, on git HTTP or on the sign-in pages, and a wrong second factor) counts against the pair
 * (client address, account); once a pair has `maxFailures` failures within `windowMs`, every
 * further password attempt of that pair is refused, right or wrong, until the oldest failure
 * of the window has aged out. Successful sign-ins do not count and clear the pair.
 *
 * Gitea itself has no such limit (it logs failures for fail2ban). The pair is the key rather than
 * the account alone so that a stranger cannot lock an account's owner out by failing on purpose,
 * and rather than the address alone so that users behind one proxy or NAT do not throttle each
 * other. Counting failures only (not requests) is why a request-rate limiter such as
 * @fastify/rate-limit does not fit: it would also throttle clients that sign in correctly on
 * every request (git and API clients using basic authentication do).
 *
 * State is kept in memory: a restart forgets it, and each forge process counts on its own.
 */
import { TooManyRequestsError } from './errors';

export interface SignInThrottleOptions {
  /** Failures allowed within the window; 0 switches throttling off. */
  maxFailures: number;
  windowMs: number;
}

/** Above this many tracked pairs, stale ones are dropped on the next failure. */
const PRUNE_ABOVE = 10_000;

export class SignInThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly opts: SignInThrottleOptions,
    private readonly now: () => number = Date.now,
  ) {}

  private key(address: string, account: string): string {
    return `${address}\n${account.toLowerCase()}`;
  }

  /** The failures of the pair still within the window (oldest first). */
  private recent(key: string): number[] {
    const since = this.now() - this.opts.windowMs;
    const list = (this.failures.get(key) ?? []).filter((t) => t > since);
    if (list.length) this.failures.set(key, list);
    else this.failures.delete(key);
    return list;
  }

  /** Throws TooManyRequestsError when the pair may not try now. */
  check(address: string, account: string): void {
    if (this.opts.maxFailures <= 0) return;
    const list = this.recent(this.key(address, account));
    if (list.length < this.opts.maxFailures) return;
    const waitMs = list[list.length - this.opts.maxFailures] + this.opts.windowMs - this.now();
    throw new TooManyRequestsError('too many failed sign-in attempts, try again later', Math.max(1, Math.ceil(waitMs / 1000)));
  }

  failed(address: string, account: string): void {
    if (this.opts.maxFailures <= 0) return;
    if (this.failures.size > PRUNE_ABOVE) for (const key of [...this.failures.keys()]) this.recent(key);
    const key = this.key(address, account);
    this.failures.set(key, [...this.recent(key), this.now()].slice(-this.opts.maxFailures));
  }

  succeeded(address: string, account: string): void {
    this.failures.delete(this.key(address, account));
  }
}
