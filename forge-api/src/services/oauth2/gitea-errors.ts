/**
 * Gitea's answers to a failed OAuth2 request, which clients written against Gitea read (some
 * show error_description to their user, Woodpecker and Drone log it): the token endpoint answers
 * every failure 400 with Gitea's error code and text, checking in Gitea's order (Authorization
 * header, grant type, client, secret, redirect URI, then the code or refresh token); userinfo and
 * introspection answer 401 in plain text; a bad authorization request goes back to the client's
 * redirect URI in the query with Gitea's texts. oidc-provider does the checks themselves; this
 * file only translates what it reports.
 */
import crypto from 'node:crypto';
import { hashClientSecret, redirectUriAllowed, type OAuth2Client } from './applications';

export interface OAuth2Error {
  error: string;
  error_description: string;
}

const err = (error: string, error_description: string): OAuth2Error => ({ error, error_description });

export const UNSUPPORTED_GRANT = err('unsupported_grant_type', 'Only refresh_token or authorization_code grant type is supported');

function secretMatches(client: OAuth2Client, secret: string): boolean {
  if (!client.secretHash || !secret) return false;
  const a = Buffer.from(hashClientSecret(secret));
  const b = Buffer.from(client.secretHash);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** The client credentials of a basic Authorization header (RFC 6749 2.3.1 form-encoding), or null if it is not one. */
export function basicCredentials(header: string): { id: string; secret: string } | null {
  const m = /^basic\s+(\S+)$/i.exec(header.trim());
  if (!m) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return null;
  try {
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: dec(decoded.slice(0, i)), secret: dec(decoded.slice(i + 1)) };
  } catch {
    return null;
  }
}

/**
 * The checks Gitea makes on a token request before it looks at the code or refresh token, with
 * its error for the first that fails; null when the request may go on to the provider.
 */
export async function tokenRequestError(form: URLSearchParams, authorization: string | undefined, findClient: (id: string) => Promise<OAuth2Client | null>): Promise<OAuth2Error | null> {
  let clientId = form.get('client_id') ?? '';
  let secret = form.get('client_secret') ?? '';
  if ((!clientId || !secret) && authorization) {
    const basic = basicCredentials(authorization);
    if (!basic) return err('invalid_request', 'cannot parse basic auth header');
    if (clientId && clientId !== basic.id) return err('invalid_request', 'client_id in request body inconsistent with Authorization header');
    if (secret && secret !== basic.secret) return err('invalid_request', 'client_secret in request body inconsistent with Authorization header');
    clientId = basic.id;
    secret = basic.secret;
  }
  const grantType = form.get('grant_type');
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') return UNSUPPORTED_GRANT;
  const refresh = grantType === 'refresh_token';
  const client = clientId ? await findClient(clientId) : null;
  if (!client) return err('invalid_client', `cannot load client with client id: ${refresh ? JSON.stringify(clientId) : `'${clientId}'`}`);
  if (client.confidential && !secretMatches(client, secret)) {
    return err(refresh ? 'invalid_client' : 'unauthorized_client', secret ? 'invalid client secret' : 'invalid empty client secret');
  }
  const redirectUri = form.get('redirect_uri');
  if (!refresh && redirectUri && !client.redirectUris.includes(redirectUri) && !redirectUriAllowed(client, redirectUri)) {
    return err('unauthorized_client', 'unexpected redirect URI');
  }
  return null;
}

/** What oidc-provider reported about a failed grant: its error code, detail and cause. */
export interface ProviderError {
  error?: string;
  error_detail?: string;
  cause?: unknown;
}

/**
 * Gitea's error for a code or refresh token the provider refused. Gitea deletes a code once used,
 * so an unknown and a spent code get the same answer; an unreadable and an unknown refresh token
 * too (its refresh tokens are signed JWTs it parses first).
 */
export function grantError(grantType: string, e: ProviderError): OAuth2Error {
  const detail = e.error_detail ?? '';
  if (grantType === 'refresh_token') {
    if (detail === 'refresh token already used') return err('unauthorized_client', 'token was already used');
    if (detail === 'client mismatch') return err('invalid_grant', 'refresh token belongs to a different client');
    if (detail === 'grant not found' || detail === 'grant is expired') return err('invalid_grant', 'grant does not exist');
    return err('unauthorized_client', 'unable to parse refresh token');
  }
  if (e.cause instanceof Error && /code_verifier|code_challenge/.test(e.cause.message)) return err('unauthorized_client', 'failed PKCE code challenge');
  if (detail === 'authorization code is expired') return err('invalid_grant', 'authorization code expired');
  if (detail === 'authorization code redirect_uri mismatch') return err('invalid_grant', 'redirect_uri differs from the original authorization request');
  if (detail === 'client mismatch') return err('invalid_grant', 'invalid grant');
  return err('unauthorized_client', 'client is not authorized');
}

/**
 * Gitea's text for an authorization request sent back to the client with an error; the
 * provider's own wording for the rest. Gitea sends these back in the query, never a fragment.
 */
export function authorizeRedirectError(error: string, description: string): OAuth2Error {
  // Gitea reads a missing response_type as an unsupported one.
  if (error === 'unsupported_response_type' || (error === 'invalid_request' && /'response_type'/.test(description))) return err('unsupported_response_type', 'Only code response type is supported.');
  if (error === 'invalid_request' && /code_challenge_method/.test(description)) return err(error, 'unsupported code challenge method');
  // Gitea has no such check (it takes any challenge); the forge's reason, in Gitea's style.
  if (error === 'invalid_request' && /^code_challenge (must be a string|contains invalid)/.test(description)) return err(error, 'code challenge must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~" (RFC 7636)');
  if (error === 'invalid_request' && /PKCE|code_challenge/.test(description)) return err(error, 'PKCE is required for public clients');
  return err(error, description);
}

/** Gitea's text for an authorization request it cannot send back (no known client or redirect URI). */
export function authorizeFailure(error: string, description: string): OAuth2Error {
  if (error === 'invalid_client') return err('unauthorized_client', 'Client ID not registered');
  if (error === 'invalid_redirect_uri') return err('invalid_request', 'Unregistered Redirect URI');
  return err(error, description);
}

/**
 * The client's redirect URI with Gitea's error parameters (error, error_description, state, in
 * the query, keys sorted as Go encodes them), from the provider's error redirect.
 */
export function giteaErrorRedirect(location: string): string | null {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return null;
  }
  const params = new URLSearchParams(url.hash ? url.hash.slice(1) : '');
  for (const [k, v] of url.searchParams) if (!params.has(k)) params.set(k, v);
  const error = params.get('error');
  if (!error) return null;
  const mapped = authorizeRedirectError(error, params.get('error_description') ?? '');
  const state = params.get('state') ?? '';
  url.hash = '';
  for (const k of ['error', 'error_description', 'state', 'iss']) url.searchParams.delete(k);
  url.searchParams.set('error', mapped.error);
  url.searchParams.set('error_description', mapped.error_description);
  url.searchParams.set('state', state);
  url.searchParams.sort();
  return url.toString();
}
