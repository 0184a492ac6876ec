/** What Gitea's OAuth2 provider advertises: its paths and scope names, and its discovery document. */
import { SCOPE_CATEGORIES } from '../scopes';

export const OAUTH2_PATHS = {
  authorize: '/login/oauth/authorize',
  token: '/login/oauth/access_token',
  userinfo: '/login/oauth/userinfo',
  introspect: '/login/oauth/introspect',
  keys: '/login/oauth/keys',
  /** Where the provider sends the browser to sign in and consent (the forge's own page). */
  interaction: '/login/oauth/interaction',
  discovery: '/.well-known/openid-configuration',
} as const;

/** The OpenID scopes Gitea advertises; every other scope names API access (`read:repository`, ...). */
export const GENERAL_SCOPES = ['openid', 'profile', 'email', 'groups'] as const;

/** Every scope the provider accepts: the OpenID ones and the token scopes of the API. */
export const SCOPES_SUPPORTED = [
  ...GENERAL_SCOPES,
  'offline_access',
  'all',
  'public-only',
  ...SCOPE_CATEGORIES.flatMap((c) => [`read:${c}`, `write:${c}`]),
];

/** Gitea 1.27.3's /.well-known/openid-configuration, field for field. */
export function discoveryDocument(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}${OAUTH2_PATHS.authorize}`,
    token_endpoint: `${issuer}${OAUTH2_PATHS.token}`,
    jwks_uri: `${issuer}${OAUTH2_PATHS.keys}`,
    userinfo_endpoint: `${issuer}${OAUTH2_PATHS.userinfo}`,
    introspection_endpoint: `${issuer}${OAUTH2_PATHS.introspect}`,
    response_types_supported: ['code', 'id_token'],
    id_token_signing_alg_values_supported: ['RS256'],
    subject_types_supported: ['public'],
    scopes_supported: [...GENERAL_SCOPES],
    claims_supported: ['aud', 'exp', 'iat', 'iss', 'sub', 'name', 'preferred_username', 'profile', 'picture', 'website', 'locale', 'updated_at', 'email', 'email_verified', 'groups'],
    code_challenge_methods_supported: ['plain', 'S256'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
  };
}
