/**
 * Request helpers shared by the forge suites: act as a user of the harness (basic auth with the
 * harness password) and make a request that must succeed, so a failed setup step names itself
 * instead of surfacing as an unrelated assertion further down.
 */
import { PASSWORD, type Forge, type Res } from './forge';

/** Basic auth for a user the harness created. */
export function as(name: string): { basic: [string, string] } {
  return { basic: [name, PASSWORD] };
}

/** `ok(method, path, user, body)`: the request as `user`; throws with the answer unless 2xx. */
export function okRequester(f: () => Forge) {
  return async (method: string, p: string, user: string, body?: unknown): Promise<Res> => {
    const res = await f().request(method, p, { ...as(user), body });
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${res.text}`);
    return res;
  };
}

/**
 * Expects `res` to answer `status`; otherwise fails naming the request's answer: its body and,
 * for a 500, the error the server logged (Res.serverErrors), so a failure explains itself.
 */
export function expectStatus(res: Res, status: number, what = 'the request'): void {
  if (res.status === status) return;
  const cause = res.serverErrors?.length ? `\nserver log:\n${res.serverErrors.join('\n')}` : '';
  throw new Error(`${what}: expected status ${status}, got ${res.status} ${res.text}${cause}`);
}
