/**
 * rules[].sessionPersistence (HTTPRoute and GRPCRoute) -> what the data plane acts on, and what
 * it cannot (named in the route's Accepted condition, the rest applies).
 *
 * Open-source nginx has no sticky sessions; the session token (a cookie or a header) is hashed
 * onto the rule's endpoints instead (model/session.ts), and a client without one is given one.
 * nginx reads a request header only by a name of letters, digits and hyphens (it drops others
 * by default); a cookie name must be an RFC 6265 token. A name it cannot use, a session
 * cookie's gateway-tracked absoluteTimeout and a header session's absoluteTimeout are reported.
 */
import type { SessionPersistence } from '../resources/types';
import { durationMs } from '../resources/validation';
import type { RuleSession } from './types';

const HEADER_NAME = /^[A-Za-z0-9-]+$/;
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function buildSession(sp: SessionPersistence): { session: RuleSession; unsupported: string[] } {
  const unsupported: string[] = [];
  const session: RuleSession = { type: sp.type };
  if (sp.sessionName !== undefined) {
    if ((sp.type === 'Header' ? HEADER_NAME : COOKIE_NAME).test(sp.sessionName)) session.name = sp.sessionName;
    else unsupported.push('sessionPersistence.sessionName');
  }
  if (sp.absoluteTimeout !== undefined) {
    if (sp.type === 'Cookie' && sp.cookieConfig?.lifetimeType === 'Permanent') session.maxAgeSeconds = Math.ceil(durationMs(sp.absoluteTimeout) / 1000);
    else unsupported.push('sessionPersistence.absoluteTimeout');
  }
  return { session, unsupported };
}
